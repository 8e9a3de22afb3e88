#!/usr/bin/env bash
# Peers prove the pool secret (doc/security.md, "Management"; issue 23),
# three mortards in network namespaces (10.213.77.1-3): nodes 1 and 2
# share the secret and probe as before; node 3 holds another one, so it
# can neither be probed in by node 1 nor probe itself into node 2, and
# nothing changes in their stores; from node 3's address every CLI
# command over TCP is refused ("not authenticated") and a peer procedure
# sent by hand is denied, proving node 3's secret fails and proving the
# pool's is served. Once node 3 holds a copy of the pool's secret
# (without a restart) the probe succeeds and all three see each other.
# TIMEOUT: 240
# REQUIRES: root python3
. "$(dirname "$0")/../lib/include.rc"

netns_cluster_or_skip 3
H1=10.213.77.1
H2=10.213.77.2
H3=10.213.77.3
RPC="$(cd "$(dirname "$0")/../lib" && pwd)/mgmt_rpc.py"

# in_ns I CMD...: CMD from node I's network namespace (its address).
in_ns() {
    local i="$1"
    shift
    nsenter --net=/run/netns/"${NS[$i]}" "$@"
}

# Node 3's own secret, made before its first start.
mkdir -p "$T/n3/state"
(umask 077 && od -An -tx1 -N32 /dev/urandom | tr -d ' \n' \
    > "$T/n3/state/secret")
TEST node_mortard 1
TEST node_mortard 2
TEST node_mortard 3
TEST ! cmp -s "$T/n1/state/secret" "$T/n3/state/secret"
TEST cmp "$T/n1/state/secret" "$T/n2/state/secret"

EXPECT "peer probe: success" ncli 1 peer probe "$H2"
EXPECT_WITHIN 15 "1" connected_peers 1
EXPECT_WITHIN 15 "1" connected_peers 2
SUM1=$(node_store_sum 1)
SUM2=$(node_store_sum 2)
SUM3=$(node_store_sum 3)

# Node 1 cannot probe node 3 in; node 3 cannot probe itself in.
EXPECT "peer probe: failed: $H3 does not share this pool's secret: copy $T/n1/state/secret from a pool member to $H3 (its state dir, mode 0600) and probe again" \
    sh -c "'$MDCTL' -s '$T/n1/run/mortard.sock' peer probe $H3 2>&1"
TEST ! ncli 1 peer probe "$H3"
EXPECT_MATCH "^peer probe: failed: $H2 does not share this pool's secret" \
    sh -c "'$MDCTL' -s '$T/n3/run/mortard.sock' peer probe $H2 2>&1"
EXPECT "Number of Peers: 1" sh -c "'$MDCTL' -s '$T/n1/run/mortard.sock' peer status | head -n 1"
EXPECT "Number of Peers: 1" sh -c "'$MDCTL' -s '$T/n2/run/mortard.sock' peer status | head -n 1"
EXPECT "Number of Peers: 0" ncli 3 peer status

# A client from a disallowed address (node 3's): every command refused.
mkdir -p "$T/steal"
CMDS=(
    "volume create steal $H1:$T/steal force"
    "volume start steal"
    "volume stop steal"
    "volume delete steal"
    "volume set steal client.ping-timeout 17"
    "peer probe $H3"
    "peer detach $H2"
    "volume info"
)
for c in "${CMDS[@]}"; do
    # shellcheck disable=SC2086
    EXPECT_MATCH "not authenticated" in_ns 3 sh -c \
        "'$MORTAR' --mode=script --remote-host=$H1:24100 $c 2>&1; echo rc=\$?"
    # shellcheck disable=SC2086
    EXPECT_MATCH "rc=1$" in_ns 3 sh -c \
        "'$MORTAR' --mode=script --remote-host=$H2:24100 $c > /dev/null 2>&1; echo rc=\$?"
done

# Peer procedures by hand from node 3: denied without a proof, node 3's
# secret does not prove, the pool's does (REBAL_TASK QUERY of no task).
EXPECT "denied" in_ns 3 python3 "$RPC" "$H1" 24100 17 0 nosuchvol 0
EXPECT_MATCH "does not share this secret" in_ns 3 sh -c \
    "MGMT_SECRET='$T/n3/state/secret' python3 '$RPC' $H1 24100 17 0 nosuchvol 0 2>&1"
EXPECT "ret=0 errno=0 status=- moved=0 bytes=0 skipped=0" \
    in_ns 3 env MGMT_SECRET="$T/n1/state/secret" \
    python3 "$RPC" "$H1" 24100 17 0 nosuchvol 0

EXPECT "$SUM1" node_store_sum 1
EXPECT "$SUM2" node_store_sum 2
EXPECT "$SUM3" node_store_sum 3
EXPECT_MATCH "refused procedure 1 from $H3" cat "$T/n1/log/mortard.log"

# Node 3 gets the pool's secret (a copy, no restart): it can be probed.
TEST install -m 0600 "$T/n1/state/secret" "$T/n3/state/secret.new"
TEST mv "$T/n3/state/secret.new" "$T/n3/state/secret"
EXPECT "peer probe: success" ncli 1 peer probe "$H3"
for i in 1 2 3; do
    EXPECT_WITHIN 15 "2" connected_peers "$i"
done
