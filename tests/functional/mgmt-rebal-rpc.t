#!/usr/bin/env bash
# MGMT_REBAL_TASK on the wire (mortard/rebal-peer.c), from a client that
# speaks ONC-RPC by hand on mortard's loopback mgmt port: a QUERY of a
# volume whose state file says completed answers its counters; a QUERY of
# a volume with no task answers an empty status; a volume name that is
# not one ("../secret", empty, 200 bytes) is refused with EINVAL and no
# file outside the run dir is read (one beyond the wire's 256 bytes is
# GARBAGE_ARGS); an unknown op is EINVAL; a STOP with no
# process is ESRCH; a truncated body is GARBAGE_ARGS; after all that the
# CLI still answers.
# TIMEOUT: 60
# REQUIRES: python3
. "$(dirname "$0")/../lib/include.rc"

TEST start_mortard
mkdir -p "$T/run/rebalance"
printf 'status=completed\npid=4242\nstarted=100\nupdated=160\nscanned_files=9\nscanned_dirs=2\nmoved_files=7\nmoved_bytes=7168\nfailed_files=0\nskipped_files=1\n' \
    > "$T/run/rebalance/v0.state"
# A file the name "../secret" would reach if the name were used as is.
printf 'status=completed\nmoved_files=99\n' > "$T/run/secret.state"

# rpc OP VOLUME [IS_REMOVE] [TRUNCATE]: one REBAL_TASK call
# (tests/lib/mgmt_rpc.py); prints "accept=N" or
# "ret=R errno=E status=S moved=M bytes=B skipped=K".
# The connection proves the pool secret first, as a peer's would.
rpc() {
    MGMT_SECRET="$T/state/secret" python3 \
        "$(dirname "$0")/../lib/mgmt_rpc.py" 127.0.0.1 "$MGMT_PORT" 17 \
        "$1" "$2" "${3:-0}" ${4:+truncate}
}

# Without the proof, REBAL_TASK is refused (doc/security.md).
EXPECT "denied" python3 "$(dirname "$0")/../lib/mgmt_rpc.py" 127.0.0.1 \
    "$MGMT_PORT" 17 0 v0 0

EXPECT "ret=0 errno=0 status=completed moved=7 bytes=7168 skipped=1" rpc 0 v0
EXPECT "ret=0 errno=0 status=- moved=0 bytes=0 skipped=0" rpc 0 v0 1
EXPECT "ret=0 errno=0 status=- moved=0 bytes=0 skipped=0" rpc 0 nosuchvol
EXPECT "ret=-1 errno=22 status=- moved=0 bytes=0 skipped=0" rpc 0 "../secret"
EXPECT "ret=-1 errno=22 status=- moved=0 bytes=0 skipped=0" rpc 0 ""
EXPECT "ret=-1 errno=22 status=- moved=0 bytes=0 skipped=0" rpc 0 "$(printf 'v%.0s' {1..200})"
EXPECT "accept=4" rpc 0 "$(printf 'v%.0s' {1..300})"
EXPECT "ret=-1 errno=22 status=- moved=0 bytes=0 skipped=0" rpc 7 v0
EXPECT "ret=-1 errno=3 status=completed moved=7 bytes=7168 skipped=1" rpc 1 v0
EXPECT "accept=4" rpc 0 v0 0 truncate
EXPECT_MATCH "Number of Peers: 0" mcli peer status
