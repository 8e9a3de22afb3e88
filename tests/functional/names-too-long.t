#!/usr/bin/env bash
# Names over NAME_MAX (255 bytes) on cluster/distribute over two bricks,
# through the mount with python3's os.*: every syscall answers
# ENAMETOOLONG as ext4 does (it used to be EINVAL, or ENOENT for a
# lookup, from the wire protocol's name bound on the client):
#  1. open(O_CREAT), open of an existing-looking name, stat, lstat,
#     mkdir, mknod (fifo), symlink's link name, link's new name, rename
#     (either name), unlink, rmdir, for 256 and 1000 bytes (the kernel
#     hands names up to 1024 to FUSE), and for 86 three-byte UTF-8
#     characters (258 bytes: the bound counts bytes, not characters);
#  2. a symlink target of 4095 bytes (PATH_MAX - 1) works and reads back
#     whole; setxattr with a 256-byte key answers ERANGE, as Linux does;
#  3. names of exactly 255 bytes (ASCII, and 85 three-byte characters)
#     work: create with data, stat, mkdir, symlink, link, rename to
#     another 255-byte name, readdir shows them, unlink, rmdir; they land
#     on both bricks, and a fresh mount reads them back;
#  4. nothing over 255 bytes was made on either brick.
# TIMEOUT: 180
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

# err FUNC ARGS...: os.FUNC(*ARGS), printing "ok" or the errno's symbol
# (ENAMETOOLONG...). Arguments are literal strings, except: creat PATH
# (os.open O_CREAT|O_WRONLY), openr PATH (os.open O_RDONLY), fifo PATH
# (os.mknod S_IFIFO), setxattr PATH KEY (value b"v").
err() {
    python3 - "$@" <<'PY'
import errno, os, stat, sys
op, args = sys.argv[1], sys.argv[2:]
try:
    if op == "creat":
        os.close(os.open(args[0], os.O_CREAT | os.O_WRONLY, 0o644))
    elif op == "openr":
        os.close(os.open(args[0], os.O_RDONLY))
    elif op == "fifo":
        os.mknod(args[0], 0o644 | stat.S_IFIFO)
    elif op == "setxattr":
        os.setxattr(args[0], args[1], b"v")
    else:
        getattr(os, op)(*args)
    print("ok")
except OSError as e:
    print(errno.errorcode.get(e.errno, str(e.errno)))
PY
}

# name N [CHAR]: N repetitions of CHAR (default "a").
name() {
    python3 -c 'import sys; print(sys.argv[2] * int(sys.argv[1]))' \
        "$1" "${2:-a}"
}

# names_fit DIR: every name on a brick is at most 255 bytes (its
# .mortar metadata aside); says which one is not.
names_fit() {
    (cd "$1" && find . -path ./.mortar -prune -o -print) | python3 -c '
import os, sys
bad = [l for l in sys.stdin
       if len(os.path.basename(l.rstrip("\n")).encode()) > 255]
sys.exit("too long: %s" % bad[0] if bad else 0)'
}

dist2_start() {
    local i port vol="$T/vol/dist2.vol"
    : > "$vol"
    for i in 0 1; do
        alloc_port port || return 1
        mkdir -p "$T/bricks/b$i"
        start_brick "b$i" "$T/bricks/b$i" "$port" || return 1
        printf 'volume b%d\n type protocol/client\n option remote-host %s\n option remote-port %s\n option remote-subvolume b%d\nend-volume\n' \
            "$i" "$H0" "$port" "$i" >> "$vol"
    done
    printf 'volume dist\n type cluster/distribute\n subvolumes b0 b1\nend-volume\n' >> "$vol"
    mount_volfile "$vol" "$M0"
}

TEST dist2_start
TEST mkdir "$M0/d"
TEST touch "$M0/d/f" "$M0/d/g"
TEST mkdir "$M0/d/sub"

L255="$(name 255)"
U255="$(name 85 €)"
EXPECT 255 sh -c "printf %s '$U255' | wc -c"

# 1. Every syscall refuses an over-long name with ENAMETOOLONG.
for n in 256 1000 u258; do
    case $n in
    u258) L="$(name 86 €)" ;;
    *) L="$(name $n b)" ;;
    esac
    P="$M0/d/$L"
    EXPECT ENAMETOOLONG err creat "$P"
    EXPECT ENAMETOOLONG err openr "$P"
    EXPECT ENAMETOOLONG err stat "$P"
    EXPECT ENAMETOOLONG err lstat "$P"
    EXPECT ENAMETOOLONG err mkdir "$P"
    EXPECT ENAMETOOLONG err fifo "$P"
    EXPECT ENAMETOOLONG err symlink f "$P"
    EXPECT ENAMETOOLONG err link "$M0/d/f" "$P"
    EXPECT ENAMETOOLONG err rename "$M0/d/f" "$P"
    EXPECT ENAMETOOLONG err rename "$P" "$M0/d/h"
    EXPECT ENAMETOOLONG err rename "$M0/d/sub" "$P"
    EXPECT ENAMETOOLONG err unlink "$P"
    EXPECT ENAMETOOLONG err rmdir "$P"
    # A longer name below a directory: the lookup of the component.
    EXPECT ENAMETOOLONG err stat "$P/x"
done
# The objects the refused calls named are untouched.
EXPECT "f g sub" sh -c "ls '$M0/d' | tr '\n' ' ' | sed 's/ \$//'"

# 2. A symlink target up to PATH_MAX - 1 bytes; an xattr key over 255.
TARGET="$(name 4095 t)"
EXPECT ok err symlink "$TARGET" "$M0/d/longtarget"
EXPECT 4095 python3 -c 'import os, sys; print(len(os.readlink(sys.argv[1])))' \
    "$M0/d/longtarget"
EXPECT ENAMETOOLONG err symlink "$(name 4096 t)" "$M0/d/toolong"
EXPECT ERANGE err setxattr "$M0/d/f" "user.$(name 251 k)"
EXPECT ok err setxattr "$M0/d/f" "user.$(name 250 k)"

# 3. Exactly 255 bytes works everywhere.
for base in "$L255" "$U255"; do
    TEST sh -c "echo data > '$M0/d/$base'"
    EXPECT data cat "$M0/d/$base"
    EXPECT "regular file" stat -c %F "$M0/d/$base"
    EXPECT ok err mkdir "$M0/d/sub/$base"
    EXPECT ok err symlink "../../$base" "$M0/d/sub/$base/$base"
    EXPECT data cat "$M0/d/sub/$base/$base"
done
# Two hundred 255-byte names: some land on each brick.
TEST python3 -c '
import os, sys
for i in range(200):
    n = "%03d" % i + "n" * 252
    with open(os.path.join(sys.argv[1], n), "w") as f:
        f.write(str(i))' "$M0/d/sub"
EXPECT 200 sh -c "ls '$M0/d/sub' | grep -c '^[0-9][0-9][0-9]n*\$'"
for i in 0 1; do
    TEST test "$(ls "$T/bricks/b$i/d/sub" | grep -c '^[0-9]')" -gt 20
done
# link and rename onto other 255-byte names (across bricks for some).
LX="$(name 255 x)"
LY="$(name 255 y)"
EXPECT ok err link "$M0/d/$L255" "$M0/d/$LX"
EXPECT 2 stat -c %h "$M0/d/$L255"
EXPECT ok err rename "$M0/d/$LX" "$M0/d/$LY"
EXPECT data cat "$M0/d/$LY"
TEST python3 -c '
import os, sys
d = sys.argv[1]
for i in range(200):
    os.rename(os.path.join(d, "%03d" % i + "n" * 252),
              os.path.join(d, "%03d" % i + "m" * 252))' "$M0/d/sub"
EXPECT 200 sh -c "ls '$M0/d/sub' | grep -c '^[0-9][0-9][0-9]m*\$'"
EXPECT 0 sh -c "ls '$M0/d/sub' | grep -c '^[0-9][0-9][0-9]n*\$'"
EXPECT 117 cat "$M0/d/sub/117$(name 252 m)"

# A fresh mount finds them all by name and by listing.
TEST umount_client "$M0"
TEST mount_volfile "$T/vol/dist2.vol" "$M0"
EXPECT data cat "$M0/d/$LY"
EXPECT data cat "$M0/d/$U255"
EXPECT "directory" stat -c %F "$M0/d/sub/$L255"
EXPECT 200 sh -c "ls '$M0/d/sub' | grep -c '^[0-9][0-9][0-9]m*\$'"
EXPECT 42 cat "$M0/d/sub/042$(name 252 m)"

# Removing them.
TEST python3 -c '
import os, sys
d = sys.argv[1]
for i in range(200):
    os.unlink(os.path.join(d, "%03d" % i + "m" * 252))' "$M0/d/sub"
for base in "$L255" "$U255"; do
    EXPECT ok err unlink "$M0/d/sub/$base/$base"
    EXPECT ok err rmdir "$M0/d/sub/$base"
    EXPECT ok err unlink "$M0/d/$base"
done
EXPECT ok err unlink "$M0/d/$LY"
EXPECT "" ls "$M0/d/sub"

# 4. Nothing over 255 bytes reached a brick.
for i in 0 1; do
    TEST names_fit "$T/bricks/b$i"
done
