#!/usr/bin/env bash
# performance/write-behind's setattr-behind (wb-setattr.c; on by
# default, and in this test's volfile), two bricks under distribute, two
# mounts:
#  - tar -xp as root: every file's owner, mode and mtime (and content)
#    are right through the other mount once the first mount has nothing
#    pending, and right after dropping the caches; the statedump counts
#    the SETATTRs answered early, those merged into the one before, and
#    none failed;
#  - the writer sees its own chmod/chown/utime at once (fstat);
#  - a user (not root) who owns the file: chmod and utime are answered
#    early; a chown to another user is refused at once (EPERM);
#  - a chmod that the brick refuses (the brick's file made immutable):
#    answered early, the error comes back by fsync, once; setattr_failed
#    counts it; the mode on the other mount is unchanged;
#  - at its default (no option line) a fchmod is answered early; with
#    the option off nothing is.
# TIMEOUT: 240
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

B1="$T/bricks/b1"
M2="$T/mnt/m2"
mkdir -p "$B1" "$M2"

TEST alloc_port P0
TEST alloc_port P1
TEST start_brick b0 "$B0" "$P0"
TEST start_brick b1 "$B1" "$P1"
wb_volfile() {
    dist_volfile "b0:$P0" "b1:$P1"
    cat <<VOL

volume wb
    type performance/write-behind
$1
    subvolumes dist
end-volume
VOL
}
wb_volfile "    option setattr-behind on" > "$T/vol/wb.vol"
wb_volfile "" > "$T/vol/wb-default.vol"
wb_volfile "    option setattr-behind off" > "$T/vol/wb-off.vol"
TEST mount_volfile "$T/vol/wb.vol" "$M0"
TEST mount_volfile "$T/vol/wb.vol" "$M1"

# dump_num MNT KEY: KEY in the write-behind section of MNT's statedump.
dump_num() {
    statedump_of "$(client_pid "$1")" | awk -v k="$2" '
        $0 == "[dump wb]" { in_s = 1; next }
        /^\[/ { in_s = 0 }
        in_s && index($0, k "=") == 1 { print substr($0, length(k) + 2) }'
}

# --- 1. tar -xp as root ---
TEST python3 - "$T/src.tar" <<'PY'
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w") as tar:
    for d in range(4):
        info = tarfile.TarInfo("t/d%d" % d)
        info.type = tarfile.DIRTYPE
        info.mode = 0o755
        tar.addfile(info)
        for f in range(50):
            data = (b"%d/%d " % (d, f)) * (f * 7 + 1)
            info = tarfile.TarInfo("t/d%d/f%02d" % (d, f))
            info.size = len(data)
            info.mode = (0o600, 0o640, 0o644, 0o755, 0o700)[f % 5]
            info.uid = info.gid = 1000 + f % 3
            info.uname = info.gname = ""
            info.mtime = 1600000000 + d * 1000 + f
            tar.addfile(info, io.BytesIO(data))
PY
N0=$(dump_num "$M0" setattr_behind)
G0=$(dump_num "$M0" setattr_merged)
TEST tar --same-owner --numeric-owner -xpf "$T/src.tar" -C "$M0"
# tar sets times and owner of every file, the mode where it differs; the
# ones that came while the one before still waited went down with it. How
# many came in time depends on the machine's load (a parallel run saw
# fewer than 100 of 400): some did; test_setattr_behind checks the merge.
TEST [ "$(( $(dump_num "$M0" setattr_behind) - N0 ))" -ge 400 ]
TEST [ "$(( $(dump_num "$M0" setattr_merged) - G0 ))" -ge 1 ]
EXPECT_WITHIN 20 "0" dump_num "$M0" pending
EXPECT "0" dump_num "$M0" setattr_failed
TEST tar --numeric-owner -df "$T/src.tar" -C "$M1"
TEST tar --numeric-owner -df "$T/src.tar" -C "$M0"
drop_caches
TEST tar --numeric-owner -df "$T/src.tar" -C "$M1"
# and on the bricks themselves (each file on one of them)
EXPECT "640 1001:1001 1600001001" sh -c \
    "stat -c '%a %u:%g %Y' $B0/t/d1/f01 $B1/t/d1/f01 2>/dev/null"

# --- 2. the writer sees its own changes at once ---
EXPECT "ok" python3 - "$M0/own" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
os.write(fd, b"x" * 5000)
os.fchown(fd, 1234, 4321)
os.fchmod(fd, 0o751)
os.utime(fd, (1500000000, 1500000001))
st = os.fstat(fd)
ok = (st.st_uid, st.st_gid, st.st_mode & 0o7777, st.st_mtime, st.st_size) \
    == (1234, 4321, 0o751, 1500000001, 5000)
os.close(fd)
st = os.stat(sys.argv[1])
ok = ok and (st.st_uid, st.st_mode & 0o7777, st.st_size) == (1234, 0o751, 5000)
print("ok" if ok else "bad %r" % (st,))
PY
EXPECT_WITHIN 20 "0" dump_num "$M0" pending
EXPECT "1234 751 1500000001 5000" stat -c '%u %a %Y %s' "$M1/own"

# --- 3. a user who owns the file ---
TEST mkdir "$M0/u"
TEST chown 65534:65534 "$M0/u"
N0=$(dump_num "$M0" setattr_behind)
EXPECT "ok EPERM" setpriv --reuid=65534 --regid=65534 --clear-groups \
    python3 - "$M0/u/f" <<'PY'
import errno, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)
os.write(fd, b"y" * 100)
os.fchmod(fd, 0o600)
os.utime(fd, (1400000000, 1400000000))
try:
    os.fchown(fd, 0, 0)
    chown = "allowed"
except OSError as e:
    chown = errno.errorcode[e.errno]
os.fsync(fd)
os.close(fd)
print("ok", chown)
PY
TEST [ "$(( $(dump_num "$M0" setattr_behind) - N0 ))" -ge 2 ]
EXPECT "65534 600 1400000000" stat -c '%u %a %Y' "$M1/u/f"

# --- 4. a chmod the brick refuses ---
TEST python3 -c 'open("'"$M0"'/imm", "w").write("z")'
EXPECT_WITHIN 20 "0" dump_num "$M0" pending
BIMM=$(ls "$B0/imm" "$B1/imm" 2>/dev/null | head -n 1)
TEST [ -n "$BIMM" ]
unfreeze_brick_file() { chattr -i "$BIMM" 2> /dev/null; }
add_cleanup_hook unfreeze_brick_file
F0=$(dump_num "$M0" setattr_failed)
# Frozen once the file is open (the brick would refuse the open itself).
EXPECT "chmod ok, fsync EPERM, fsync again ok" \
    python3 - "$M0/imm" "$BIMM" <<'PY'
import errno, os, subprocess, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
subprocess.run(["chattr", "+i", sys.argv[2]], check=True)
os.fchmod(fd, 0o600)
out = "chmod ok"
for i in range(2):
    try:
        os.fsync(fd)
        out += ", fsync%s ok" % (" again" if i else "")
    except OSError as e:
        out += ", fsync %s" % errno.errorcode[e.errno]
os.close(fd)
print(out)
PY
EXPECT "$((F0 + 1))" dump_num "$M0" setattr_failed
EXPECT "644" stat -c '%a' "$M1/imm"
TEST chattr -i "$BIMM"

# --- 5. the default (on), then off: nothing answered early ---
M3="$T/mnt/m3"
mkdir -p "$M3"
TEST mount_volfile "$T/vol/wb-default.vol" "$M3"
TEST python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)
os.fchmod(fd, 0o600)
os.close(fd)' "$M3/dflt"
EXPECT "1" dump_num "$M3" setattr_behind
EXPECT_WITHIN 20 "600" stat -c '%a' "$M1/dflt"
TEST mount_volfile "$T/vol/wb-off.vol" "$M2"
TEST python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)
os.fchmod(fd, 0o600)
os.close(fd)' "$M2/off"
EXPECT "0" dump_num "$M2" setattr_behind
EXPECT "600" stat -c '%a' "$M1/off"

