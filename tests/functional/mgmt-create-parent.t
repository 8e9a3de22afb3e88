#!/usr/bin/env bash
# A brick whose parent directory does not exist is refused, as GlusterFS
# does ("Failed to create brick directory ... Reason : No such file or
# directory"), with and without force, by volume create and add-brick:
# exit 1, one line, no directory made, store, `volume list` and `volume
# info` unchanged. A missing brick directory under an existing parent is
# still created. The nested-brick messages read "is inside brick" and
# "contains brick" (not "is contains").
# TIMEOUT: 120
# REQUIRES: root
. "$(dirname "$0")/../lib/include.rc"

B="$T/bricks"
TEST start_mortard
track_brick v1
# The leaf is created when its parent exists.
TEST [ ! -e "$B/v1" ]
TEST mcli volume create v1 127.0.0.1:$B/v1 force
TEST [ -d "$B/v1" ]

check_fail() {
    local want="$1"
    shift
    mcli "$@" > "$T/f.out" 2> "$T/f.err"
    local rc=$?
    [ "$rc" = "$want" ] && [ "$(wc -l < "$T/f.err")" = 1 ] &&
        [ "$(store_sum)" = "$SUM" ]
}
SUM=$(store_sum)
mcli volume list > "$T/list.before"
mcli volume info v1 > "$T/info.before"

NOPE="$B/no/such/parent/brick"
for f in force ""; do
    # shellcheck disable=SC2086 # $f is one word or none
    TEST check_fail 1 volume create x 127.0.0.1:$NOPE $f
    EXPECT_MATCH "Failed to create brick directory for brick 127.0.0.1:$NOPE\. Reason : No such file or directory" cat "$T/f.err"
    TEST [ ! -e "$B/no" ]
done
# Several bricks: the good one's directory is not made either.
TEST check_fail 1 volume create x 127.0.0.1:$B/ok0 127.0.0.1:$NOPE force
TEST [ ! -e "$B/ok0" ]
TEST [ ! -e "$B/no" ]
# A parent that is a file.
TEST touch "$B/afile"
TEST check_fail 1 volume create x 127.0.0.1:$B/afile/brick force
EXPECT_MATCH "Failed to create brick directory .*Not a directory" cat "$T/f.err"
# add-brick: the same check, the same nothing-changed.
for f in force ""; do
    # shellcheck disable=SC2086
    TEST check_fail 1 volume add-brick v1 127.0.0.1:$NOPE $f
    EXPECT_MATCH "Failed to create brick directory for brick 127.0.0.1:$NOPE\. Reason : No such file or directory" cat "$T/f.err"
    TEST [ ! -e "$B/no" ]
done
TEST check_fail 1 volume add-brick v1 127.0.0.1:$B/ok1 127.0.0.1:$NOPE force
TEST [ ! -e "$B/ok1" ]
EXPECT "" sh -c "'$MDCTL' -s '$T/run/mortard.sock' volume list | diff - '$T/list.before'"
EXPECT "" sh -c "'$MDCTL' -s '$T/run/mortard.sock' volume info v1 | diff - '$T/info.before'"
TEST ! mcli volume info x

# The nested-brick messages.
TEST check_fail 1 volume create x 127.0.0.1:$B force
EXPECT_MATCH "brick 127.0.0.1:$B contains brick $B/v1 of volume v1" cat "$T/f.err"
TEST check_fail 1 volume create x 127.0.0.1:$B/v1/sub force
EXPECT_MATCH "brick 127.0.0.1:$B/v1/sub is inside brick $B/v1 of volume v1" cat "$T/f.err"
EXPECT "N" sh -c "grep -q 'is contains' '$T/f.err' '$T/log/mortard.log' && echo Y || echo N"

# add-brick under an existing parent still works and makes the leaf.
TEST mcli volume add-brick v1 127.0.0.1:$B/v1b force
TEST [ -d "$B/v1b" ]
TEST mcli volume delete v1
