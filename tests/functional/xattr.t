#!/usr/bin/env bash
# user.* extended attributes: set, get, list, remove, create/replace
# flags, large values; the brick's own trusted.mortar.* never shows.
# TIMEOUT: 120
# REQUIRES: root fuse setfattr getfattr
. "$(dirname "$0")/../lib/include.rc"

TEST start_volume

TEST touch "$M0/f"
TEST setfattr -n user.colour -v blue "$M0/f"
TEST setfattr -n user.size -v 42 "$M0/f"
EXPECT "blue" getfattr --only-values -n user.colour "$M0/f"
EXPECT "42" getfattr --only-values -n user.size "$M0/f"
# Stored on the brick as the same user.* xattr.
EXPECT "blue" getfattr --only-values -n user.colour "$B0/f"
EXPECT "user.colour user.size" sh -c \
    "getfattr --absolute-names -d -m 'user\.' '$M0/f' | sed -n 's/=.*//p' | sort | tr '\n' ' ' | sed 's/ \$//'"
# Replace the value.
TEST setfattr -n user.colour -v green "$M0/f"
EXPECT "green" getfattr --only-values -n user.colour "$M0/f"
# Remove one; getting it then fails with ENODATA.
TEST setfattr -x user.size "$M0/f"
EXPECT "No such attribute" errno_of getfattr -n user.size "$M0/f"
EXPECT "user.colour" sh -c \
    "getfattr --absolute-names -d -m 'user\.' '$M0/f' | sed -n 's/=.*//p'"
EXPECT "No such attribute" errno_of setfattr -x user.size "$M0/f"

# XATTR_CREATE on an existing name, XATTR_REPLACE on a missing one.
EXPECT "File exists" python3 -c '
import os, sys
try:
    os.setxattr(sys.argv[1], "user.colour", b"red", os.XATTR_CREATE)
    print("ok")
except OSError as e:
    print(os.strerror(e.errno))' "$M0/f"
EXPECT "No data available" python3 -c '
import os, sys
try:
    os.setxattr(sys.argv[1], "user.none", b"x", os.XATTR_REPLACE)
    print("ok")
except OSError as e:
    print(os.strerror(e.errno))' "$M0/f"

# A large binary value and an empty one round-trip exactly.
EXPECT "ok" python3 -c '
import os, sys
p = sys.argv[1]
v = bytes(range(256)) * 8  # ext4 bricks hold ~4 KiB of xattrs per inode
os.setxattr(p, "user.big", v)
os.setxattr(p, "user.empty", b"")
ok = os.getxattr(p, "user.big") == v and os.getxattr(p, "user.empty") == b""
names = set(os.listxattr(p))
ok = ok and {"user.big", "user.empty", "user.colour"} <= names
print("ok" if ok else "bad %r" % names)' "$M0/f"
# listxattr/getxattr with a too small buffer: ERANGE (size 0 gives size).
EXPECT "ok" python3 -c '
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
p = sys.argv[1].encode()
n = libc.getxattr(p, b"user.big", None, 0)
buf = ctypes.create_string_buffer(16)
r = libc.getxattr(p, b"user.big", buf, 16)
e = ctypes.get_errno()
m = libc.listxattr(p, None, 0)
r2 = libc.listxattr(p, buf, 2)
e2 = ctypes.get_errno()
import errno
print("ok" if (n, r, e, r2, e2) == (2048, -1, errno.ERANGE, -1, errno.ERANGE)
      and m > 0 else (n, r, e, m, r2, e2))' "$M0/f"

# Directories carry xattrs too.
TEST mkdir "$M0/d"
TEST setfattr -n user.dirattr -v yes "$M0/d"
EXPECT "yes" getfattr --only-values -n user.dirattr "$M0/d"

# The brick's internal attributes never reach the client.
EXPECT "0" sh -c "getfattr --absolute-names -d -m - '$M0/f' 2>/dev/null | grep -c '^trusted\.mortar'"
EXPECT "0" sh -c "getfattr --absolute-names -d -m - '$M0/d' 2>/dev/null | grep -c '^trusted\.mortar'"
EXPECT_MATCH "^(Operation not permitted|Permission denied|Operation not supported|No data available)$" \
    python3 -c '
import os, sys
try:
    os.setxattr(sys.argv[1], "trusted.mortar.gfid", b"0" * 16)
    print("ok")
except OSError as e:
    print(os.strerror(e.errno))' "$M0/f"
# And the file kept its identity.
INO_F=$(stat -c %i "$M0/f")
TEST drop_caches
EXPECT "$INO_F" stat -c %i "$M0/f"

# POSIX ACLs and SELinux labels are not supported unless the mount asks
# (mount/fuse options acl, selinux): refused at once, like a file system
# without them, and `ls -l` still works.
XATTR_ERR='
import os, sys
try:
    if sys.argv[2] == "get":
        os.getxattr(sys.argv[1], sys.argv[3])
    else:
        os.setxattr(sys.argv[1], sys.argv[3], b"x")
    print("ok")
except OSError as e:
    print(os.strerror(e.errno))'
EXPECT "Operation not supported" python3 -c "$XATTR_ERR" "$M0/f" get security.selinux
EXPECT "Operation not supported" python3 -c "$XATTR_ERR" "$M0/f" get system.posix_acl_access
EXPECT "Operation not supported" python3 -c "$XATTR_ERR" "$M0/f" set security.selinux
EXPECT "Operation not supported" python3 -c "$XATTR_ERR" "$M0/f" get system.posix_acl_default
TEST ls -l "$M0/f"
