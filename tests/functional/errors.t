#!/usr/bin/env bash
# Startup errors: a bad volfile (syntax error with its line number,
# unknown option, out-of-range value), a missing brick directory, a port in
# use, an unreachable brick, a wrong subvolume name, a bad command line.
# Each gives a clear one-line message and a non-zero exit, and leaves the
# brick directory untouched.
# TIMEOUT: 180
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

# A healthy brick whose directory is watched for changes.
TEST start_volume
TEST sh -c "echo data > '$M0/f'"
snapshot() {
    (cd "$B0" && find . -printf '%p %m %s %T@ %n %u %g\n' | sort &&
        getfattr -R -d -m - -e hex --absolute-names . 2> /dev/null)
}
TEST drop_caches
snapshot > "$T/snap.before"

# fsd_fails ID VOLFILE [args]: runs a daemonized mortarfsd expected to
# fail; its stderr goes to $T/ID.err; prints its exit status.
fsd_fails() {
    local id="$1" vol="$2"
    shift 2
    "$MORTARFSD" --volfile "$vol" --log-file "$T/log/$id.log" \
        --pid-file "$T/run/$id.pid" "$@" 2> "$T/$id.err"
    echo $?
}
# err_lines ID: lines of the message (one is expected).
err_lines() { wc -l < "$T/$1.err"; }

# 1. Syntax error: exit 1, message with file name and line number.
cat > "$T/vol/syntax.vol" <<VOL
volume p
    type storage/posix
    option directory $B0
    optoin foo bar
end-volume
VOL
EXPECT "1" fsd_fails syntax "$T/vol/syntax.vol"
EXPECT_MATCH "syntax\.vol:4" cat "$T/syntax.err"
EXPECT "1" err_lines syntax
EXPECT_MATCH "^mortarfsd: " cat "$T/syntax.err"

# A volume without end-volume, and an unknown subvolume.
printf 'volume p\n    type storage/posix\n' > "$T/vol/noend.vol"
EXPECT "1" fsd_fails noend "$T/vol/noend.vol"
EXPECT "1" err_lines noend
EXPECT_MATCH "noend\.vol" cat "$T/noend.err"
cat > "$T/vol/nosub.vol" <<VOL
volume l
    type features/locks
    subvolumes ghost
end-volume
VOL
EXPECT "1" fsd_fails nosub "$T/vol/nosub.vol"
EXPECT_MATCH "nosub\.vol:3.*ghost" cat "$T/nosub.err"

# 2. Unknown option and unknown translator type.
brick_volfile b0 "$B0" "$P0" | sed 's/type storage\/posix/&\n    option no-such-option 1/' \
    > "$T/vol/unknown.vol"
EXPECT "1" fsd_fails unknown "$T/vol/unknown.vol"
EXPECT_MATCH "no-such-option" cat "$T/unknown.err"
EXPECT "1" err_lines unknown
brick_volfile b0 "$B0" "$P0" | sed 's/features\/locks/features\/no-such-xlator/' \
    > "$T/vol/type.vol"
EXPECT "1" fsd_fails type "$T/vol/type.vol"
EXPECT_MATCH "features/no-such-xlator" cat "$T/type.err"

# 3. Out-of-range value.
brick_volfile b0 "$B0" "$P0" | sed 's/type performance\/io-threads/&\n    option thread-count 100000/' \
    > "$T/vol/range.vol"
EXPECT "1" fsd_fails range "$T/vol/range.vol"
EXPECT_MATCH "thread-count" cat "$T/range.err"
EXPECT "1" err_lines range
# Also through --xlator-option, and a bad --xlator-option target.
EXPECT "1" fsd_fails xopt "$T/vol/b0.vol" --xlator-option b0.thread-count=0
EXPECT_MATCH "thread-count" cat "$T/xopt.err"
EXPECT "1" fsd_fails xname "$T/vol/b0.vol" --xlator-option nobody.thread-count=2
EXPECT_MATCH "nobody" cat "$T/xname.err"

# 4. Missing brick directory.
alloc_port PX
brick_volfile bx "$T/bricks/missing" "$PX" > "$T/vol/missing.vol"
EXPECT "1" fsd_fails missing "$T/vol/missing.vol"
EXPECT_MATCH "bricks/missing" cat "$T/missing.err"
EXPECT "1" err_lines missing
TEST test ! -e "$T/bricks/missing"

# 5. Port in use (by the running brick itself).
alloc_port PY
mkdir -p "$T/bricks/b1"
brick_volfile b1 "$T/bricks/b1" "$P0" > "$T/vol/inuse.vol"
EXPECT "1" fsd_fails inuse "$T/vol/inuse.vol"
EXPECT_MATCH "in use" cat "$T/inuse.err"
EXPECT_MATCH "$P0" cat "$T/inuse.err"
EXPECT "1" err_lines inuse
# The running brick still serves.
EXPECT "data" cat "$M0/f"

# 6. Unreachable brick: nothing listens on PY.
client_volfile "$PY" b0 > "$T/vol/unreach.vol"
EXPECT "1" fsd_fails unreach "$T/vol/unreach.vol" "$M1"
EXPECT_MATCH "127\.0\.0\.1:$PY.*Connection refused" cat "$T/unreach.err"
EXPECT "1" err_lines unreach
EXPECT "N" is_mounted "$M1"

# 7. Wrong subvolume name.
client_volfile "$P0" nosuchsub > "$T/vol/wrongsub.vol"
EXPECT "1" fsd_fails wrongsub "$T/vol/wrongsub.vol" "$M1"
EXPECT_MATCH "nosuchsub" cat "$T/wrongsub.err"
EXPECT "1" err_lines wrongsub
EXPECT "N" is_mounted "$M1"

# A client killed while it waits for its brick: the command reports how it
# died and leaves no dead mount behind.
( "$MORTARFSD" --volfile "$T/vol/unreach.vol" --log-file "$T/log/killed.log" \
    --pid-file "$T/run/killed.pid" "$M1" 2> "$T/killed.err"
  echo $? > "$T/killed.rc" ) < /dev/null > /dev/null 2>&1 &
EXPECT_WITHIN 10 "Y" is_mounted "$M1"
EXPECT_WITHIN 10 "Y" sh -c "[ -s '$T/run/killed.pid' ] && echo Y || echo N"
TEST kill -KILL "$(cat "$T/run/killed.pid")"
EXPECT_WITHIN 10 "1" cat "$T/killed.rc"
EXPECT_MATCH "killed by signal 9" cat "$T/killed.err"
EXPECT "N" is_mounted "$M1"
rm -f "$T/run/killed.pid"

# 8. Mount point missing, volfile missing, bad command lines (exit 2).
EXPECT "1" fsd_fails nomnt "$T/vol/wrongsub.vol" "$T/mnt/none"
EXPECT_MATCH "mnt/none" cat "$T/nomnt.err"
EXPECT "1" fsd_fails novol "$T/vol/none.vol"
EXPECT_MATCH "none\.vol" cat "$T/novol.err"
EXPECT "2" fsd_fails badflag "$T/vol/b0.vol" --no-such-flag
EXPECT "1" err_lines badflag
EXPECT "2" fsd_fails badthreads "$T/vol/b0.vol" --event-threads 0
EXPECT_MATCH "event-threads" cat "$T/badthreads.err"
# Foreground mode reports the same errors.
EXPECT "1" fsd_fails fg "$T/vol/syntax.vol" -N
EXPECT_MATCH "syntax\.vol:4" cat "$T/fg.err"

# Nothing failed left a process or a pid file behind.
for id in syntax noend nosub unknown type range xopt xname missing inuse \
          unreach wrongsub nomnt novol fg; do
    TEST test ! -e "$T/run/$id.pid"
done
# None of this touched the brick.
TEST drop_caches
snapshot > "$T/snap.after"
TEST diff "$T/snap.before" "$T/snap.after"
EXPECT "data" cat "$M0/f"
