#!/usr/bin/env bash
# The negative-entry cache end to end: performance/nl-cache on two mounts
# of a four-brick distribute volume, features/upcall in every brick.
# Mount A has debug/trace between distribute and each protocol/client,
# so its log counts the LOOKUPs that reach the bricks.
#  - in a directory A made, 20 creates and 20 lookups of absent names
#    send no LOOKUP to any brick;
#  - a file B creates there is seen by A at once (the brick broke A's
#    lease), and A's lookups there go to the bricks again;
#  - a rename by B into a directory A made, and a mkdir by B in one, are
#    seen by A;
#  - A's own unlink, rename and rmdir keep what A knows true;
#  - a brick going down drops every lease of A: lookups go to the bricks;
#  - with nl-cache off (no translator), the same creates look up.
# TIMEOUT: 240
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

VOL="$T/vol/nlc-traced.vol"
PLAIN="$T/vol/nlc-plain.vol"
TEST dist4_traced_vols "$VOL" "$PLAIN"
for v in "$VOL" "$PLAIN"; do
    printf 'volume nlc\n type performance/nl-cache\n subvolumes dist\nend-volume\n' \
        >> "$v"
done
_T_MOUNTS+=("$M0" "$M1")
TEST start_fsd client-traced --volfile "$VOL" "$M0"
TEST wait_for_mount "$M0"
TEST start_fsd client-plain --volfile "$PLAIN" "$M1"
TEST wait_for_mount "$M1"
CLOG="$T/log/client-traced.log"

LOG_AT=0
mark_log() { LOG_AT=$(wc -l < "$CLOG"); }
# Lookups of names inside the test's directories. Not of the directories
# themselves (by name in the root, or by GFID): the kernel revalidates
# those once their entry is a second old, which a loaded machine reaches
# within a loop.
ROOT_GFID=00000000-0000-0000-0000-000000000001
lookups() {
    tail -n +"$((LOG_AT + 1))" "$CLOG" |
        grep " tr[0-3]: lookup wind .*pargfid=" |
        grep -vc "pargfid=$ROOT_GFID "
}

# ---- A's own directory: creates and misses answered in the client ----
TEST mkdir "$M0/d"
mark_log
for i in $(seq 1 20); do echo "$i" > "$M0/d/f$i"; done
for i in $(seq 1 20); do stat "$M0/d/absent$i" > /dev/null 2>&1; done
EXPECT 0 lookups
EXPECT 20 eval 'ls "$M0/d" | wc -l'
TEST cat "$M0/d/f7"
EXPECT 7 cat "$M0/d/f7"

# ---- B's create breaks A's lease ----
TEST touch "$M1/d/fromB"
TEST stat "$M0/d/fromB"
mark_log
stat "$M0/d/absent-again" > /dev/null 2>&1
TEST test "$(lookups)" -gt 0
EXPECT 21 eval 'ls "$M0/d" | wc -l'

# ---- a break reaches A before B's create returns ----
# 100 times: A makes a directory (leased) and looks for a name there
# (answered by A), B creates it, and A's lookup right after must find it:
# the brick sends the break before it answers B.
TEST mkdir "$M0/race"
misses=0
for i in $(seq 1 100); do
    mkdir "$M0/race/d$i"
    stat "$M0/race/d$i/n" > /dev/null 2>&1
    touch "$M1/race/d$i/n"
    stat "$M0/race/d$i/n" > /dev/null 2>&1 || misses=$((misses + 1))
done
EXPECT 0 echo "$misses"

# ---- B's rename into, and mkdir in, directories A made ----
TEST mkdir "$M0/g" "$M0/h"
stat "$M0/g/moved" > /dev/null 2>&1   # a miss A answers itself
TEST mv "$M1/d/f1" "$M1/g/moved"
TEST stat "$M0/g/moved"
EXPECT 1 cat "$M0/g/moved"
TEST mkdir "$M1/h/sub"
TEST test -d "$M0/h/sub"

# ---- A's own changes keep the cache true ----
TEST mkdir "$M0/own"
TEST touch "$M0/own/a" "$M0/own/b"
TEST rm "$M0/own/a"
TEST mv "$M0/own/b" "$M0/own/c"
TEST mkdir "$M0/own/sub"
TEST rmdir "$M0/own/sub"
mark_log
TEST ! stat "$M0/own/a"
TEST ! stat "$M0/own/b"
TEST ! stat "$M0/own/sub"
EXPECT 0 lookups
# A name made again after its removal is found.
TEST touch "$M0/own/a"
TEST stat "$M0/own/a"
EXPECT "c" eval 'ls "$M0/own" | grep -x c'

# ---- a brick going down drops every lease ----
TEST mkdir "$M0/e"
mark_log
for i in $(seq 1 10); do stat "$M0/e/x$i" > /dev/null 2>&1; done
EXPECT 0 lookups
TEST kill_brick b1
sleep 1
mark_log
for i in $(seq 1 10); do stat "$M0/e/x$i" > /dev/null 2>&1; done
TEST test "$(lookups)" -gt 0
TEST start_fsd brick-b1 --volfile "$T/vol/b1.vol"
EXPECT_WITHIN 20 "ok" sh -c "touch '$M0/e/back' && echo ok"

# ---- without nl-cache the same creates look up ----
TEST umount "$M0"
sed '/^volume nlc$/,$d' "$VOL" > "$VOL.off"
TEST start_fsd client-traced-off --volfile "$VOL.off" "$M0"
TEST wait_for_mount "$M0"
CLOG="$T/log/client-traced-off.log"
TEST mkdir "$M0/y"
mark_log
for i in $(seq 1 20); do echo "$i" > "$M0/y/f$i"; done
EXPECT 20 lookups
EXPECT_WITHIN 20 20 eval 'ls "$M1/y" | wc -l'
