#!/usr/bin/env bash
# Store crash safety: mortard is killed -9 at random moments while
# `volume set` runs in a loop; every restart loads the store, and the
# volume's options are always a complete old or new state.
# TIMEOUT: 240
# REQUIRES: root
. "$(dirname "$0")/../lib/include.rc"

TEST start_mortard
TEST mcli volume create v1 127.0.0.1:$B0 force
TEST mcli volume set v1 io-threads.thread-count 5
ok=1
for i in $(seq 1 15); do
    # Keep setting options in the background, kill mortard mid-stream.
    ( for j in $(seq 1 20); do
          "$MDCTL" -s "$T/run/mortard.sock" volume set v1 \
              io-threads.thread-count $(( (i + j) % 60 + 1 )) > /dev/null 2>&1
      done ) &
    setter=$!
    sleep "0.$((RANDOM % 3))$((RANDOM % 10))"
    kill -9 "$(mortard_pid)" 2> /dev/null
    wait "$setter"
    if ! start_mortard 2> "$T/start.err"; then
        ok=0
        cat "$T/start.err" >&2
        break
    fi
    if ! mcli volume info v1 > "$T/info.out" ||
       ! grep -q "^Volume Name: v1" "$T/info.out"; then
        ok=0
        break
    fi
done
EXPECT "1" echo "$ok"
EXPECT "" sh -c "ls -a '$T/state/vols' | grep '^\\.v1' "
EXPECT_MATCH "^io-threads.thread-count=[0-9]+$" grep thread-count "$T/state/vols/v1/options"
TEST mcli volume delete v1
