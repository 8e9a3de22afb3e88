#!/usr/bin/env bash
# What a brick believes and checks (issue 23 item 3; doc/security.md,
# "Brick access"; xlators/features/access):
#  1. a client from an unprivileged source port is refused at SETVOLUME
#     with a message naming the reason, and the brick logs it; with
#     server.allow-insecure on it is accepted; mortarfsd run as a user
#     logs that it has no privileged port and the brick's refusal;
#  2. from a privileged port, a raw CREATE claiming uid 1234 in a
#     root-owned 0755 directory gets EACCES (nothing made on the brick),
#     and an OPEN of a root-only 0600 file as uid 1234 gets EACCES; the
#     same calls as uid 0 succeed;
#  3. through a mount, as uid 1234 (setpriv): refused in the root-owned
#     directory, allowed in a 0777 one (the file is 1234's on the brick);
#  4. server.root-squash on: root's create in the root-owned 0755
#     directory gets EACCES through the mount, and a file root makes in
#     the 0777 one is owned by 65534 on the brick; off again, root is root;
#  5. under root-squash the self-heal daemon still heals a replica 3
#     volume: names made by root in a root-owned 0700 directory while a
#     brick was down reach it when it returns.
# The mount's FUSE always asks the kernel for default_permissions (there
# is no option to drop it), so 2 and 4 are where the brick alone decides.
# TIMEOUT: 400
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

PROTO=$(awk '/^const MRT_PROTO_VERSION/ { sub(";", "", $4); print $4 }' \
    "$(dirname "$0")/../../rpc/xdr/mortar.x")
RAW="$(dirname "$0")/../tools/brick_raw.py"
B="$T/bricks"

TEST start_mortard
track_brick va brick0
TEST mkdir -p "$B"
TEST mcli volume create va 127.0.0.1:$B/a0 force
TEST mcli volume start va
mcli --getspec va | tail -n +2 > "$T/va.vol"
PORT=$(awk '$2 == "remote-port" { print $3; exit }' "$T/va.vol")
SUB=$(awk '$2 == "remote-subvolume" { print $3; exit }' "$T/va.vol")
TEST test -n "$PORT" -a -n "$SUB"

raw() {
    python3 "$RAW" "$1" "$PORT" "$SUB" "$PROTO" "${@:2}"
}
# gfid_of BRICK-PATH: the object's GFID, hex.
gfid_of() {
    python3 -c 'import os, sys
print(os.getxattr(sys.argv[1], "trusted.mortar.gfid").hex())' "$1"
}
owner_of() {
    stat -c %u "$1"
}
as_user() {
    setpriv --reuid=1234 --regid=1234 --clear-groups "$@"
}
brick_log_has() {
    grep -rqs -- "$1" "$T/log" && echo Y || echo N
}

# 1. Unprivileged ports.
EXPECT_MATCH "status -13 error 'connection from unprivileged port [0-9]+ \
refused \(server.allow-insecure is off" raw setvolume unpriv
EXPECT "Y" brick_log_has "connection from unprivileged port"
EXPECT "status 0 error ''" raw setvolume
TEST mcli volume set va server.allow-insecure on
EXPECT_WITHIN 20 "status 0 error ''" raw setvolume unpriv
TEST mcli volume set va server.allow-insecure off
EXPECT_WITHIN 20 "status -13" sh -c "python3 '$RAW' setvolume $PORT $SUB \
$PROTO unpriv | cut -d' ' -f1-2"

# A Mortar client that cannot bind a privileged port (not root) says why
# in its log, and gives up when its graph is not ready.
TEST chmod 0644 "$T/va.vol"
TEST chmod 0777 "$T/log"
TEST as_user test -x "$MORTARFSD" # else the exec fails, not the connect
TEST ! as_user "$MORTARFSD" -N --volfile "$T/va.vol" --ready-timeout 3 \
    --log-file "$T/log/nonroot.log"
TEST grep -q "no privileged source port for 127.0.0.1:$PORT (not root)" \
    "$T/log/nonroot.log"
TEST grep -q "refused: connection from unprivileged port" \
    "$T/log/nonroot.log"

# 2. Identity claims on a privileged connection.
TEST mount_volume va "$M0"
TEST mkdir "$M0/root755" "$M0/open"
TEST chmod 0755 "$M0/root755"
TEST chmod 0777 "$M0/open"
TEST sh -c "echo secret > '$M0/secret'"
TEST chmod 0600 "$M0/secret"
ROOTDIR=$(gfid_of "$B/a0/root755")
SECRET=$(gfid_of "$B/a0/secret")
EXPECT "status -13" raw create 1234 "$ROOTDIR" by1234
TEST test ! -e "$B/a0/root755/by1234"
EXPECT "status -13" raw open 1234 "$SECRET"
EXPECT "status 0" raw create 0 "$ROOTDIR" by0
EXPECT "0" owner_of "$B/a0/root755/by0"
EXPECT "status 0" raw open 0 "$SECRET"

# 3. Through the mount as a user.
TEST ! as_user touch "$M0/root755/u"
TEST ! as_user cat "$M0/secret"
TEST as_user touch "$M0/open/u"
EXPECT "1234" owner_of "$B/a0/open/u"

# 4. Root squashed.
TEST mcli volume set va server.root-squash on
EXPECT_WITHIN 20 "N" sh -c "touch '$M0/root755/sq' 2> /dev/null && \
echo Y || echo N"
TEST test ! -e "$B/a0/root755/sq"
TEST touch "$M0/open/byroot"
EXPECT "65534" owner_of "$B/a0/open/byroot"
TEST mcli volume set va server.anonuid 4321
EXPECT_WITHIN 20 "4321" sh -c "touch '$M0/open/r\$\$' && stat -c %u \
'$B/a0/open/r\$\$'"
TEST mcli volume set va server.root-squash off
EXPECT_WITHIN 20 "Y" sh -c "touch '$M0/root755/sq' 2> /dev/null && \
echo Y || echo N"
EXPECT "0" owner_of "$B/a0/root755/sq"
TEST umount_client "$M0"

# 5. The self-heal daemon under root-squash.
for i in 0 1 2; do track_brick vr brick$i; done
_T_PIDFILES+=("$T/run/heal/vr.pid")
TEST mcli volume create vr replica 3 127.0.0.1:$B/r0 127.0.0.1:$B/r1 \
    127.0.0.1:$B/r2 force
TEST mcli volume start vr
TEST mount_volume vr "$M1"
TEST mkdir -m 0700 "$M1/priv"
R2=$(cat "$T/run/vr-brick2.pid")
TEST kill -9 "$R2"
TEST sh -c "for i in 1 2 3; do echo v\$i > '$M1/priv/f'\$i; done"
TEST mkdir "$M1/priv/sub"
TEST sh -c "echo deep > '$M1/priv/sub/x'"
TEST umount_client "$M1"
TEST mcli volume set vr server.root-squash on
TEST mcli volume start vr force
all_counts() {
    local i
    for i in 0 1 2; do
        find "$B/r$i/.mortar/index/xattrop" -mindepth 1 2> /dev/null \
            | wc -l
    done | tr '\n' ' '
}
EXPECT_WITHIN 120 "0 0 0 " all_counts
EXPECT "v3" cat "$B/r2/priv/f3"
EXPECT "deep" cat "$B/r2/priv/sub/x"
EXPECT "0" owner_of "$B/r2/priv/f1"
TEST diff -r --exclude=.mortar "$B/r0" "$B/r2"
