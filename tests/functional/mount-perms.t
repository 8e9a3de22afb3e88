#!/usr/bin/env bash
# Permissions through a mount agree with what the kernel would decide on
# a local file system, now that the bricks check too (issue 23 item 3;
# doc/security.md, "Brick access"):
#  1. a user reaches a file through a supplementary group (the FUSE
#     request carries only the primary gid: the client reads the
#     others from /proc/PID/status and sends them), and is refused when
#     not in the group;
#  2. with the mount option acl, an ACL entry that grants more than the
#     mode bits works (the kernel evaluates ACLs, FUSE_POSIX_ACL), one
#     that takes away is enforced, and an ACL of 200 entries (over the
#     16 the bricks once kept) decides by its last entry;
#  3. without acl the same named user is refused: only the mode counts;
#  4. Mortar's own xattrs (trusted.mortar.*) cannot be set or removed
#     through a mount, by root either; other trusted.* keys can.
# TIMEOUT: 240
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

B="$T/bricks"
TEST start_mortard
track_brick pv brick0
TEST mkdir -p "$B"
TEST mcli volume create pv 127.0.0.1:$B/p0 force
TEST mcli volume start pv
TEST mount_mortar 127.0.0.1:/pv "$M0" "volfile-server-port=$MGMT_PORT,acl"
TEST mount_mortar 127.0.0.1:/pv "$M1" "volfile-server-port=$MGMT_PORT"

# as UID GROUPS CMD...: CMD as UID (primary gid UID) with the
# supplementary GROUPS (comma list, or "-" for none).
as() {
    local uid="$1" groups="$2"
    shift 2
    if [ "$groups" = - ]; then
        setpriv --reuid="$uid" --regid="$uid" --clear-groups "$@"
    else
        setpriv --reuid="$uid" --regid="$uid" --groups="$groups" "$@"
    fi
}
# put_acl FILE SPEC...: sets system.posix_acl_access from entries
# TAG:ID:PERM (TAG u U g G m o for user_obj user group_obj group mask
# other), written as the kernel's xattr bytes.
put_acl() {
    python3 - "$@" << 'EOF'
import os, struct, sys
tags = {"u": 1, "U": 2, "g": 4, "G": 8, "m": 16, "o": 32}
b = struct.pack("<I", 2)
for e in sys.argv[2:]:
    t, i, p = e.split(":")
    b += struct.pack("<HHI", tags[t], int(p), int(i) if i else 0xffffffff)
os.setxattr(sys.argv[1], "system.posix_acl_access", b)
EOF
}

# 1. Supplementary groups: a 0640 file of group 5000, and a 0770
# directory of that group.
TEST mkdir "$M0/grp"
TEST chown 0:5000 "$M0/grp"
TEST chmod 0770 "$M0/grp"
TEST sh -c "echo secret > '$M0/grp/f'"
TEST chown 0:5000 "$M0/grp/f"
TEST chmod 0640 "$M0/grp/f"
EXPECT secret as 1234 5000 cat "$M1/grp/f"
TEST as 1234 7,5000 touch "$M1/grp/made"
EXPECT 1234 stat -c %g "$B/p0/grp/made" # its creator's gid (no setgid)
TEST ! as 1234 - cat "$M1/grp/f"
TEST ! as 1235 7 touch "$M1/grp/other"
TEST test ! -e "$B/p0/grp/other"

# 2. ACLs with the acl mount: user 1234 named with r-- on a root 0640
# file (group class = mask r--), user 1236 named with --- on a 0644 one.
TEST sh -c "echo acl > '$M0/a'"
TEST chmod 0640 "$M0/a"
TEST put_acl "$M0/a" u::6 U:1234:4 g::4 m::4 o::0
EXPECT acl as 1234 - cat "$M0/a"
TEST ! as 1235 - cat "$M0/a"
TEST ! as 1234 - sh -c "echo x >> '$M0/a'"
TEST sh -c "echo open > '$M0/b'"
TEST chmod 0644 "$M0/b"
TEST put_acl "$M0/b" u::6 U:1236:0 g::4 m::4 o::4
EXPECT open as 1235 - cat "$M0/b"
TEST ! as 1236 - cat "$M0/b"
# 200 named users, only the last may read.
SPEC=(u::6)
for i in $(seq 0 199); do
    if [ "$i" = 199 ]; then SPEC+=("U:$((3000 + i)):4"); else SPEC+=("U:$((3000 + i)):0"); fi
done
SPEC+=(g::0 m::4 o::0)
TEST sh -c "echo big > '$M0/c'"
TEST chmod 0600 "$M0/c"
TEST put_acl "$M0/c" "${SPEC[@]}"
EXPECT big as 3199 - cat "$M0/c"
TEST ! as 3198 - cat "$M0/c"
TEST ! as 3000 - cat "$M0/c"

# 3. Without acl, the mode bits alone: the named user is "other".
TEST ! as 1234 - cat "$M1/a"

# 4. Mortar's own keys cannot be set or removed through a mount, by
# root either (a single-brick volume has no distribute to refuse them).
TEST ! setfattr -n trusted.mortar.dht.linkto -v x "$M1/b"
TEST ! setfattr -x trusted.mortar.gfid "$M1/b"
TEST ! setfattr -n trusted.mortar.dht -v 0x00 "$M1/grp"
TEST test -z "$(getfattr --absolute-names -n trusted.mortar.dht.linkto "$B/p0/b" 2> /dev/null)"
TEST setfattr -n trusted.other -v y "$M1/b"
EXPECT y getfattr --only-values -n trusted.other "$M1/b"
