#!/usr/bin/env bash
# mkdir, rmdir, unlink and their errors; rename of files and directories,
# also over existing targets; readdir and ls -l of a large directory.
# TIMEOUT: 240
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

TEST start_volume

TEST mkdir "$M0/d"
EXPECT "directory" stat -c %F "$M0/d"
EXPECT "directory" stat -c %F "$B0/d"
EXPECT "File exists" errno_of mkdir "$M0/d"
TEST mkdir -p "$M0/d/a/b/c"
TEST touch "$M0/d/a/b/c/file"
EXPECT "Directory not empty" errno_of rmdir "$M0/d/a/b/c"
EXPECT "Not a directory" errno_of rmdir "$M0/d/a/b/c/file"
EXPECT "Is a directory" errno_of unlink "$M0/d/a/b"
TEST unlink "$M0/d/a/b/c/file"
EXPECT "No such file or directory" errno_of stat "$M0/d/a/b/c/file"
TEST rmdir "$M0/d/a/b/c"
TEST test ! -e "$B0/d/a/b/c"
EXPECT "3" stat -c %h "$M0/d/a"
EXPECT "No such file or directory" errno_of unlink "$M0/d/nothing"

# rename of a file: to a new name, then over an existing file.
TEST sh -c "echo one > '$M0/r1'"
TEST sh -c "echo two > '$M0/r2'"
TEST mv "$M0/r1" "$M0/r3"
EXPECT "one" cat "$M0/r3"
TEST test ! -e "$M0/r1"
TEST mv -f "$M0/r3" "$M0/r2"
EXPECT "one" cat "$M0/r2"
EXPECT "one" cat "$B0/r2"
TEST test ! -e "$M0/r3"
# Across directories.
TEST mv "$M0/r2" "$M0/d/a/r2"
EXPECT "one" cat "$M0/d/a/r2"

# rename of a directory with contents, then over an empty directory; a
# non-empty target is refused; a file cannot replace a directory.
TEST mkdir -p "$M0/src/sub"
TEST sh -c "echo deep > '$M0/src/sub/f'"
TEST mv "$M0/src" "$M0/dst"
EXPECT "deep" cat "$M0/dst/sub/f"
EXPECT "deep" cat "$B0/dst/sub/f"
TEST test ! -e "$M0/src"
TEST mkdir "$M0/empty"
EXPECT "ok" pyop rename "$M0/dst" "$M0/empty"
EXPECT "deep" cat "$M0/empty/sub/f"
TEST mkdir -p "$M0/full/x"
TEST mkdir "$M0/mover"
EXPECT "Directory not empty" pyop rename "$M0/mover" "$M0/full"
EXPECT "Is a directory" pyop rename "$M0/d/a/r2" "$M0/full"
# A directory moved below itself is refused.
EXPECT "Invalid argument" pyop rename "$M0/full" "$M0/full/x/y"
# The renamed directory's ".." points at its new parent.
TEST mkdir -p "$M0/p1/child" "$M0/p2"
TEST mv "$M0/p1/child" "$M0/p2/"
EXPECT "$(stat -c %i "$M0/p2")" stat -c %i "$M0/p2/child/.."

# A large directory: readdir in several batches, ls -l of every entry.
N=3000
make_many() {
    mkdir "$M0/big" || return 1
    (cd "$M0/big" && seq -f "entry-with-a-longish-name-%05g" 1 $N | xargs touch)
}
TEST make_many
EXPECT "$N" sh -c "ls '$M0/big' | wc -l"
EXPECT "$N" sh -c "ls -l '$M0/big' | grep -c '^-rw'"
EXPECT "$N" sh -c "find '$M0/big' -type f | wc -l"
TEST cmp <(ls "$M0/big" | sort) <(seq -f "entry-with-a-longish-name-%05g" 1 $N)
EXPECT "$N" sh -c "ls '$B0/big' | wc -l"
# Removing half while listing again still gives a consistent listing.
TEST sh -c "cd '$M0/big' && seq -f 'entry-with-a-longish-name-%05g' 1 2 $N | xargs rm"
EXPECT "$((N / 2))" sh -c "ls '$M0/big' | wc -l"
TEST rm -rf "$M0/big"
TEST test ! -e "$B0/big"
# The brick's hidden directory never shows through the mount.
EXPECT "0" sh -c "ls -a '$M0' | grep -c '^\.mortar$'"
