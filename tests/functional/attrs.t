#!/usr/bin/env bash
# chmod, chown, utimens, truncate through setattr; access checks for an
# unprivileged user; statfs (df).
# TIMEOUT: 120
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

export TZ=UTC
TEST start_volume -o attribute-timeout=0,entry-timeout=0

TEST touch "$M0/f"
TEST chmod 0640 "$M0/f"
EXPECT "640" stat -c %a "$M0/f"
EXPECT "640" stat -c %a "$B0/f"
TEST chmod 4755 "$M0/f"
EXPECT "4755" stat -c %a "$M0/f"
TEST chmod 0600 "$M0/f"

TEST chown 1234:5678 "$M0/f"
EXPECT "1234:5678" stat -c %u:%g "$M0/f"
EXPECT "1234:5678" stat -c %u:%g "$B0/f"
TEST chown :4321 "$M0/f"
EXPECT "1234:4321" stat -c %u:%g "$M0/f"

# utimens: mtime and atime separately, with nanoseconds.
TEST touch -m -d "@1000000000.123456789" "$M0/f"
EXPECT "1000000000" stat -c %Y "$M0/f"
EXPECT "2001-09-09 01:46:40.123456789 +0000" stat -c %y "$M0/f"
EXPECT "2001-09-09 01:46:40.123456789 +0000" stat -c %y "$B0/f"
TEST touch -a -d "@999999" "$M0/f"
EXPECT "999999" stat -c %X "$M0/f"
EXPECT "1000000000" stat -c %Y "$M0/f"
# utimens(UTIME_NOW) moves mtime to now.
before=$(date +%s)
TEST touch "$M0/f"
EXPECT "Y" sh -c "[ \$(stat -c %Y '$M0/f') -ge $before ] && echo Y || echo N"

# A write by an unprivileged user clears set-uid (kill-priv).
TEST chown 65534:65534 "$M0/f"
TEST chmod 4766 "$M0/f"
TEST setpriv --reuid=65534 --regid=65534 --clear-groups \
    sh -c "echo data >> '$M0/f'"
EXPECT "766" stat -c %a "$M0/f"
EXPECT "766" stat -c %a "$B0/f"
TEST chown 1234:5678 "$M0/f"

# truncate through setattr, with and without an open fd.
TEST truncate -s 12345 "$M0/f"
EXPECT "12345" stat -c %s "$M0/f"
EXPECT "ok" python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
os.ftruncate(fd, 77)
st = os.fstat(fd)
os.close(fd)
print("ok" if st.st_size == 77 else st.st_size)' "$M0/f"
EXPECT "77" stat -c %s "$B0/f"

# access(2) and permission checks for an unprivileged user.
TEST chmod 0600 "$M0/f"
EXPECT "denied" python3 -c '
import os, sys
os.setgroups([]); os.setgid(65534); os.setuid(65534)
print("allowed" if os.access(sys.argv[1], os.R_OK) else "denied")' "$M0/f"
TEST ! setpriv --reuid=65534 --regid=65534 --clear-groups cat "$M0/f"
TEST chmod 0644 "$M0/f"
EXPECT "allowed" python3 -c '
import os, sys
os.setgroups([]); os.setgid(65534); os.setuid(65534)
print("allowed" if os.access(sys.argv[1], os.R_OK) else "denied")' "$M0/f"
EXPECT "no-write" python3 -c '
import os, sys
os.setgroups([]); os.setgid(65534); os.setuid(65534)
print("write" if os.access(sys.argv[1], os.W_OK) else "no-write")' "$M0/f"
TEST setpriv --reuid=65534 --regid=65534 --clear-groups cat "$M0/f"
# A new file made by an unprivileged user is owned by that user.
TEST chmod 1777 "$M0"
TEST setpriv --reuid=65534 --regid=65534 --clear-groups touch "$M0/nobody-file"
EXPECT "65534:65534" stat -c %u:%g "$M0/nobody-file"
EXPECT "65534:65534" stat -c %u:%g "$B0/nobody-file"

# statfs: df works and reports the brick file system's size.
TEST df "$M0"
EXPECT "$(stat -f -c '%S %b' "$B0" | awk '{ print $1 * $2 }')" \
    sh -c "stat -f -c '%S %b' '$M0' | awk '{ print \$1 * \$2 }'"
EXPECT "Y" sh -c "[ \$(stat -f -c %a '$M0') -gt 0 ] && echo Y || echo N"
