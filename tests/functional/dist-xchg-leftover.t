#!/usr/bin/env bash
# What a crash in the middle of a RENAME_EXCHANGE can leave: the
# temporary link file .mortar-xchg-<uuid> made on a name's hashed brick
# (a hard link of the name's link file there) before it was renamed over
# the name. Made here by hand on a brick, as the crash would leave it:
# it is never listed (readdir hides link files) nor found by name (also
# when the name hashes to its brick: its link file leads to the data's
# brick, which has no such name), the name it shares an
# inode with reads right, a rebalance leaves it while it is young (an
# exchange may be in flight) and removes it once older than 5 s, before
# it moves the file (doc/distribute.md). Then a dangling link file, the
# same kind of leftover under an ordinary name (a client that died
# between a link file and its data, a rename racing a run): kept while
# younger than 10 minutes, removed once older (MORTAR_REBAL_LINK_AGE_S
# stands in for the wait), the file it shares an inode with untouched.
# TIMEOUT: 240
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

pick() {
    python3 "$(dirname "$0")/../lib/dist_hash.py" pick 4 "$1" "$2"
}

# mode_of BRICK NAME: octal mode of d/NAME on that brick, or "-".
mode_of() {
    stat -c %a "$T/bricks/b$1/d/$2" 2> /dev/null || echo -
}

# listed NAME: how many times NAME shows in ls -a of the mount's d.
listed() {
    ls -a "$M0/d" | grep -c -F -x -- "$1"
}

TEST dist4_start
TEST mkdir "$M0/d"

# A file with data on b1 whose name hashes to b2: a link file on b2.
P1=$(pick 1 p)
X2=$(pick 2 x)
TEST sh -c "echo payload > '$M0/d/$P1'"
TEST mv "$M0/d/$P1" "$M0/d/$X2"
EXPECT "1000" mode_of 2 "$X2"
EXPECT "payload" cat "$M0/d/$X2"

# The crash leftover: a second name of that link file on b2.
# (Its name hashes to b0; the second one's to b2, where it is.)
TMP=$(pick 0 .mortar-xchg-)
TMPH=$(pick 2 .mortar-xchg-)
TEST ln "$T/bricks/b2/d/$X2" "$T/bricks/b2/d/$TMP"
TEST ln "$T/bricks/b2/d/$X2" "$T/bricks/b2/d/$TMPH"
EXPECT "1000" mode_of 2 "$TMP"
EXPECT "1000" mode_of 2 "$TMPH"

# Invisible in listings; the real name reads right.
EXPECT "0" listed "$TMP"
EXPECT "1" listed "$X2"
EXPECT "1" sh -c "ls '$M0/d' | wc -l | tr -d ' '"
EXPECT "payload" cat "$M0/d/$X2"
EXPECT "No such file or directory" errno_of stat "$M0/d/$TMP"
EXPECT "No such file or directory" errno_of stat "$M0/d/$TMPH"

# Young (an exchange may be in flight): a rebalance leaves it alone.
TEST "$MORTARFSD" --rebalance --fix-layout --volfile "$T/vol/dist4.vol" \
    --rebalance-state "$T/r1.state" -N --log-file "$T/log/r1.log"
EXPECT "1000" mode_of 2 "$TMP"

# Older than 5 s: the next rebalance removes it before it moves the file
# (which turns b2's link file into the data: the leftover would have
# become a visible second name of it).
sleep 6
TEST "$MORTARFSD" --rebalance --volfile "$T/vol/dist4.vol" \
    --rebalance-state "$T/r2.state" -N --log-file "$T/log/r2.log"
EXPECT "-" mode_of 2 "$TMP"
EXPECT "-" mode_of 2 "$TMPH"
EXPECT "644" mode_of 2 "$X2"
EXPECT "2" stat -c %h "$T/bricks/b2/d/$X2"
EXPECT "0" sh -c "find '$T'/bricks/b*/d -name '.mortar-xchg-*' | wc -l | tr -d ' '"
EXPECT "0" listed "$TMP"
EXPECT "1" sh -c "ls -A '$M0/d' | wc -l | tr -d ' '"
EXPECT "payload" cat "$M0/d/$X2"

# A dangling link file: a second name of a link file on b2, hashing to
# b2, that nothing else holds anywhere.
Q1=$(pick 1 q)
Y2=$(pick 2 y)
DG=$(pick 2 dangling)
TEST sh -c "echo second > '$M0/d/$Q1'"
TEST mv "$M0/d/$Q1" "$M0/d/$Y2"
EXPECT "1000" mode_of 2 "$Y2"
TEST ln "$T/bricks/b2/d/$Y2" "$T/bricks/b2/d/$DG"
EXPECT "No such file or directory" errno_of stat "$M0/d/$DG"
# Young: kept, by rebalance and fix-layout alike.
TEST "$MORTARFSD" --rebalance --fix-layout --volfile "$T/vol/dist4.vol" \
    --rebalance-state "$T/r3.state" -N --log-file "$T/log/r3.log"
EXPECT "1000" mode_of 2 "$DG"
# Old enough: removed, and only it.
sleep 1.2 # ctimes are in whole seconds
TEST env MORTAR_REBAL_LINK_AGE_S=0 "$MORTARFSD" --rebalance --fix-layout \
    --volfile "$T/vol/dist4.vol" --rebalance-state "$T/r4.state" -N \
    --log-file "$T/log/r4.log"
EXPECT "-" mode_of 2 "$DG"
EXPECT "1" grep -c "removing '$DG' (dangling link file): done" "$T/log/r4.log"
EXPECT "1000" mode_of 2 "$Y2"
EXPECT "second" cat "$M0/d/$Y2"
EXPECT "2" sh -c "ls -A '$M0/d' | wc -l | tr -d ' '"
