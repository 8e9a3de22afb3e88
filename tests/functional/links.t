#!/usr/bin/env bash
# link, symlink, readlink, mkfifo; rename over one name of a hard-linked
# file updates the other name's link count and ctime; an unlinked open
# file stays readable.
# TIMEOUT: 120
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

TEST start_volume

TEST sh -c "echo linked > '$M0/a'"
TEST ln "$M0/a" "$M0/b"
EXPECT "2" stat -c %h "$M0/a"
EXPECT "2" stat -c %h "$M0/b"
EXPECT "$(stat -c %i "$M0/a")" stat -c %i "$M0/b"
EXPECT "linked" cat "$M0/b"
TEST sh -c "echo more >> '$M0/b'"
EXPECT "linked more" sh -c "cat '$M0/a' | tr '\n' ' ' | sed 's/ \$//'"
EXPECT "File exists" pyop link "$M0/a" "$M0/b"
TEST mkdir "$M0/dir"
EXPECT "Operation not permitted" pyop link "$M0/dir" "$M0/dirlink"

TEST ln -s a "$M0/sym"
EXPECT "a" readlink "$M0/sym"
EXPECT "symbolic link" stat -c %F "$M0/sym"
EXPECT "linked" head -n 1 "$M0/sym"
EXPECT "a" readlink "$B0/sym"
TEST ln -s /no/such/target "$M0/dangling"
EXPECT "/no/such/target" readlink "$M0/dangling"
EXPECT "No such file or directory" errno_of cat "$M0/dangling"
EXPECT_MATCH "sym -> a" ls -l "$M0/sym"
LONG=$(printf 'x%.0s' $(seq 1 1000))
TEST ln -s "$LONG" "$M0/longsym"
EXPECT "$LONG" readlink "$M0/longsym"

TEST mkfifo "$M0/fifo"
EXPECT "fifo" stat -c %F "$M0/fifo"
EXPECT "fifo" stat -c %F "$B0/fifo"
# A fifo on the mount is a local pipe between local processes.
EXPECT "through" sh -c "(echo through > '$M0/fifo' &) ; cat '$M0/fifo'"

# rename over one name of a hard-linked pair: the other name's link count
# drops to 1 and its ctime moves.
TEST sh -c "echo x > '$M0/h1'"
TEST ln "$M0/h1" "$M0/h2"
TEST sh -c "echo other > '$M0/h3'"
ctime1=$(python3 -c 'import os,sys; print(os.stat(sys.argv[1]).st_ctime_ns)' "$M0/h1")
sleep 0.05
TEST mv -f "$M0/h3" "$M0/h2"
EXPECT "1" stat -c %h "$M0/h1"
EXPECT "other" cat "$M0/h2"
EXPECT "x" cat "$M0/h1"
EXPECT "newer" python3 -c '
import os, sys
c = os.stat(sys.argv[1]).st_ctime_ns
print("newer" if c > int(sys.argv[2]) else "same %d" % c)' "$M0/h1" "$ctime1"
# unlink of one of two names.
TEST ln "$M0/h1" "$M0/h4"
TEST rm "$M0/h1"
EXPECT "1" stat -c %h "$M0/h4"
EXPECT "x" cat "$M0/h4"

# An unlinked file stays readable and writable through an open fd.
EXPECT "ok" python3 -c '
import os, sys
p = sys.argv[1]
with open(p, "wb") as f:
    f.write(b"still here" * 1000)
fd = os.open(p, os.O_RDWR)
os.unlink(p)
assert not os.path.exists(p)
d = os.pread(fd, 10, 0)
os.pwrite(fd, b"HELLO", 0)
e = os.pread(fd, 10, 0)
n = os.fstat(fd).st_nlink
os.close(fd)
print("ok" if (d, e, n) == (b"still here", b"HELLO here", 0) else (d, e, n))' \
    "$M0/open-unlinked"
TEST test ! -e "$B0/open-unlinked"
