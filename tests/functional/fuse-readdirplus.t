#!/usr/bin/env bash
# Listings are READDIRPLUS from the first batch to the last (the bridge
# does not ask for FUSE_READDIRPLUS_AUTO unless readdirplus-auto is on):
# a process that lists a directory bigger than one kernel batch and then
# stats every name sends no LOOKUP, since every name came with its
# attributes. With readdirplus-auto=on the later batches are plain
# READDIR and each of their names costs a LOOKUP (the count below shows
# the option still restores that). debug/trace between mount/fuse and
# protocol/client logs the fops to each client's log.
# TIMEOUT: 150
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

TEST alloc_port P0
TEST start_brick b0 "$B0" "$P0"
traced_client_volfile "$P0" b0 > "$T/vol/traced.vol"
M2="$T/mnt/m2"
mkdir -p "$M2"
# Long entry timeouts: a name listed once stays known for the whole test.
TEST mount_volfile "$T/vol/traced.vol" "$M0" -o entry-timeout=600
TEST mount_volfile "$T/vol/traced.vol" "$M2" \
    -o entry-timeout=600,readdirplus-auto=on
TEST mount_client "$P0" b0 "$M1"
TEST wait_for_mount "$M1"
log_of() {
    echo "$T/log/client-$(echo "$1" | tr '/' '_').log"
}

# 1,500 names: several kernel batches (one holds ~180 entries with
# attributes in a 32 KiB getdents buffer).
TEST python3 -c '
import os, sys
os.mkdir(sys.argv[1])
for i in range(1500):
    open("%s/name-with-some-length-%05d" % (sys.argv[1], i), "w").close()
' "$M1/big"

# list_stat MNT: lists big and stats every name; prints the count.
list_stat() {
    python3 -c '
import os, sys
d = sys.argv[1]
names = os.listdir(d)
for n in names:
    os.stat(os.path.join(d, n))
print(len(names))' "$1/big"
}
# count MNT FOP [PATTERN]: wind lines of FOP (and PATTERN) in MNT's log
# since its mark.
declare -A AT
mark_log() {
    AT[$1]=$(wc -l < "$(log_of "$1")")
}
count() {
    tail -n +"$((AT[$1] + 1))" "$(log_of "$1")" | grep " $2 wind " \
        | grep -c -e "${3:-.}"
}

# --- 1. default: every batch is READDIRPLUS, no LOOKUP per name ---
# Held: a drop_caches of a test beside this one would make the kernel
# forget listed names and look them up.
cache_hold
TEST stat "$M0/big"
mark_log "$M0"
EXPECT "1500" list_stat "$M0"
cache_release
EXPECT "0" count "$M0" lookup
EXPECT "0" count "$M0" readdir "plus=0"
TEST [ "$(count "$M0" readdir "plus=1")" -ge 2 ]

# --- 2. readdirplus-auto=on: later batches are READDIR, names LOOKUPs ---
TEST stat "$M2/big"
mark_log "$M2"
EXPECT "1500" list_stat "$M2"
TEST [ "$(count "$M2" readdir "plus=0")" -ge 1 ]
TEST [ "$(count "$M2" lookup)" -ge 100 ]

# --- 3. the listings are right: names and sizes as the writer made them ---
TEST sh -c "echo hello > '$M1/big/name-with-some-length-01499'"
EXPECT "6" stat -c %s "$M1/big/name-with-some-length-01499"
EXPECT "1500" sh -c "ls '$M0/big' | wc -l"
EXPECT "1500" sh -c "ls '$M2/big' | wc -l"
