#!/usr/bin/env bash
# fsx (tests/tools/fsx.py: random writes, reads, truncates, fallocate
# extend/keep-size/punch hole/zero range, fsyncs and reopens of one file,
# every read checked against an in-memory model) through mortard's
# volumes:
#  - the tool itself is proven on a plain distribute volume: 10,000 ops
#    pass, and a byte changed behind its back (on the brick) is caught;
#  - 10,000 ops on a replica 3 volume, every brick up;
#  - 10,000 ops on it again with brick 1 killed (-9) at op 3,000 and
#    started again (volume start force) at op 6,000: fsx never sees an
#    error or a wrong byte, heal info drains to 0 and the three bricks
#    hold identical files (bytes, size, mode, owner, GFID) with no
#    trusted.mortar.rep.* record left.
# The seeds are fixed and printed.
# TIMEOUT: 420
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

B="$T/bricks"
FSX="$MORTAR_TOOLS/fsx.py"
SEED=${FSX_SEED:-4242}
echo "# fsx seed $SEED"
for i in 0 1 2; do track_brick fx brick$i; done
for i in 0 1; do track_brick dx brick$i; done
_T_PIDFILES+=("$T/run/heal/fx.pid")

# fsx_run FILE ARGS...: fsx on FILE, its output in $T/log/fsx.log (a
# copy kept per run); prints the last line ("fsx: N ops ok (...)" when
# it passed) and puts the output in the TAP stream as comments.
FSX_RUNS=0
fsx_run() {
    local f="$1"
    shift
    FSX_RUNS=$((FSX_RUNS + 1))
    python3 "$FSX" "$@" "$f" > "$T/log/fsx.log" 2>&1
    cp "$T/log/fsx.log" "$T/log/fsx.$FSX_RUNS.log"
    tail -n 1 "$T/log/fsx.log"
}
# fsx_said: the output of the last fsx run, as TAP comments.
fsx_said() {
    sed 's/^/# /' "$T/log/fsx.log" | head -n 24
}

TEST start_mortard
TEST mcli volume create dx 127.0.0.1:$B/d0 127.0.0.1:$B/d1 force
TEST mcli volume start dx
TEST mount_volume dx "$M1"
EXPECT_MATCH "^fsx: 10000 ops ok" fsx_run "$M1/plain" -S "$SEED" -N 10000
fsx_said
# Every kind of op ran (punch hole and zero range too).
EXPECT_MATCH "fallocate-punch [0-9]+, fallocate-zero [0-9]+" \
    tail -n 1 "$T/log/fsx.log"
# Proof that it can fail: a hook writes 4 bytes into the file through
# the mount, behind the model's back.
EXPECT_MATCH "^fsx: op [0-9]+ failed: .*first difference at offset 100 " \
    sh -c "python3 '$FSX' -S 1 -N 400 -l 65536 --at '200=printf zzzz | \
dd of=$M1/plain0 bs=1 seek=100 conv=notrunc status=none' '$M1/plain0' |
    sed -n 2p"
TEST umount_client "$M1"

TEST mcli volume create fx replica 3 127.0.0.1:$B/r0 127.0.0.1:$B/r1 \
    127.0.0.1:$B/r2 force
TEST mcli volume start fx
TEST mount_volume fx "$M0"
EXPECT_MATCH "^fsx: 10000 ops ok" fsx_run "$M0/a" -S "$SEED" -N 10000
fsx_said
EXPECT_MATCH "fallocate-punch [0-9]+, fallocate-zero [0-9]+" \
    tail -n 1 "$T/log/fsx.log"
EXPECT_WITHIN 60 "0" heal_entries fx
EXPECT "ok" same_bricks "$B/r0" "$B/r1" "$B/r2"

# Brick 1 killed at op 3,000, started again at op 6,000; the hook then
# waits for the client to see it up, so the last 4,000 ops (and their
# reopens) reach it while heal catches it up.
CPID=$(client_pid "$M0")
cat > "$T/restart-r1.sh" <<EOF
"$MDCTL" -s "$T/run/mortard.sock" volume start fx force > /dev/null || exit 1
for i in \$(seq 1 150); do
    rm -f "$T/dump"/mortarfsd.$CPID.*
    kill -USR1 $CPID
    sleep 0.2
    cat "$T/dump"/mortarfsd.$CPID.* 2> /dev/null |
        grep -q '^child\.1\.up=1' && exit 0
done
exit 1
EOF
OLD1=$(cat "$T/run/fx-brick1.pid")
KILL1="kill -9 \$(cat $T/run/fx-brick1.pid)"
EXPECT_MATCH "^fsx: 10000 ops ok" fsx_run "$M0/b" -S "$((SEED + 1))" \
    -N 10000 --at "3000=$KILL1" --at "6000=sh $T/restart-r1.sh"
fsx_said
# The brick did go: another process serves it now.
TEST test "$(cat "$T/run/fx-brick1.pid")" != "$OLD1"
EXPECT_WITHIN 120 "0" heal_entries fx
EXPECT "ok" same_bricks "$B/r0" "$B/r1" "$B/r2"
EXPECT "0 0 0" rep_records_each "$B/r0" "$B/r1" "$B/r2"
TEST cmp "$M0/b" "$B/r1/b"
