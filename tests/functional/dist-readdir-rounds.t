#!/usr/bin/env bash
# cluster/distribute readdir over four bricks reads the bricks in
# parallel from a per-fd cache: listing a 200-name directory costs no
# read at all, each brick's batch coming with its opendir (statedump
# counters readdir_seeded / readdir_reads / readdir_waits of the client),
# the readdir after the end none; through the kernel, telldir/
# seekdir resume at any position given, rewinddir sees a new name, every
# name is listed once, link files never.
# TIMEOUT: 300
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

dump_num() {
    statedump_of "$(fsd_pid client-dist)" | sed -n "s/^$1=//p" | head -n 1
}

# seek_check DIR: lists DIR with telldir before each entry, then seekdir
# to every 7th position forwards and every 13th backwards: prints the
# number of entries read and the number of mismatches.
seek_check() {
    perl -e '
        opendir(my $d, $ARGV[0]) or die "opendir: $!";
        my (@pos, @names);
        while (1) {
            my $p = telldir($d);
            my $n = readdir($d);
            last unless defined $n;
            push @pos, $p;
            push @names, $n;
        }
        my $bad = 0;
        for (my $k = 0; $k < @names; $k += 7) {
            seekdir($d, $pos[$k]);
            my $n = readdir($d);
            $bad++ unless defined $n && $n eq $names[$k];
        }
        for (my $k = $#names; $k >= 0; $k -= 13) {
            seekdir($d, $pos[$k]);
            my $n = readdir($d);
            $bad++ unless defined $n && $n eq $names[$k];
        }
        print scalar(@names), " $bad\n";
    ' "$1"
}

# rewind_check DIR NEW: reads DIR, creates DIR/NEW, rewinddir, reads
# again: prints the counts before and after.
rewind_check() {
    perl -e '
        opendir(my $d, $ARGV[0]) or die "opendir: $!";
        my @a = readdir($d);
        open(my $f, ">", "$ARGV[0]/$ARGV[1]") or die "create: $!";
        close($f);
        rewinddir($d);
        my @b = readdir($d);
        my $seen = grep { $_ eq $ARGV[1] } @b;
        print scalar(@a), " ", scalar(@b), " $seen\n";
    ' "$1" "$2"
}

TEST dist4_start
TEST mkdir "$M0/d"
TEST python3 -c "
import os
for i in range(200):
    open('$M0/d/f%03d' % i, 'w').close()
for i in range(5):
    os.mkdir('$M0/d/sub%d' % i)
for i in range(30):
    os.rename('$M0/d/f%03d' % i, '$M0/d/moved-%03d' % i)
"
# Some renames left link files on the bricks; they must not show.
TEST test "$(find "$T"/bricks/b*/d -maxdepth 1 -type f -perm 1000 \
    | wc -l)" -gt 0

r0="$(dump_num readdir_reads)"
w0="$(dump_num readdir_waits)"
s0="$(dump_num readdir_seeded)"
TEST test -n "$r0"
TEST test -n "$s0"
EXPECT "207" sh -c "ls -f '$M0/d' | wc -l"
r1="$(dump_num readdir_reads)"
w1="$(dump_num readdir_waits)"
s1="$(dump_num readdir_seeded)"
# Each brick's 50 names came with its opendir (protocol/server read them
# with the open): no read, at most one wait (for an opendir's answer).
EXPECT "4" echo "$((s1 - s0))"
EXPECT "0" echo "$((r1 - r0))"
TEST test "$((w1 - w0))" -le 1

EXPECT "" sh -c "ls -f '$M0/d' | sort | uniq -d"
EXPECT "205" sh -c "ls '$M0/d' | wc -l"
EXPECT "30" sh -c "ls '$M0/d' | grep -c '^moved-'"
EXPECT "5" sh -c "ls -l '$M0/d' | grep -c '^d'"
EXPECT "207 0" seek_check "$M0/d"
EXPECT "207 208 1" rewind_check "$M0/d" new-name

# A directory of 3,000 names: several batches per brick, read ahead.
TEST mkdir "$M0/big"
TEST python3 -c "
for i in range(3000):
    open('$M0/big/e%05d' % i, 'w').close()
"
EXPECT "3000" sh -c "ls '$M0/big' | wc -l"
EXPECT "" sh -c "ls '$M0/big' | sort | uniq -d"
EXPECT "3000" sh -c "ls -l '$M0/big' | grep -c '^-'"
EXPECT "3002 0" seek_check "$M0/big"
