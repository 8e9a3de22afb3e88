#!/usr/bin/env bash
# Prometheus metrics (issue 25 item 1, doc/metrics.md): mortard with
# --metrics-port, a 2-brick volume with diagnostics.brick-metrics on
# (each brick on a port of the kernel's choice, in its port file and in
# volume status detail) and a mount with -o metrics-port. Every process
# is scraped with curl; each text must parse as Prometheus exposition
# (tests/lib/prom_check.py: HELP/TYPE, labels, families together,
# histograms cumulative ending at +Inf = _count). Writing and reading a
# file moves the write/read counts and bytes on the client and on the
# bricks; mortard counts the volume and its bricks online. 404 and 405
# answers; a port in use is one line and nothing starts (mortard, a brick,
# a mount); the listeners are on 127.0.0.1 only unless an address is
# given; every metric the Grafana dashboard uses exists in the scrapes.
# The heal backlog (mortard and the self-heal daemon); a rebalance after
# add-brick: mortard's mortar_rebalance_running is 1 while it runs, the
# rebalance process serves its own metrics (role rebalance), and once it
# completed the files and bytes moved match its status.
# TIMEOUT: 300
# REQUIRES: root fuse python3
. "$(dirname "$0")/../lib/include.rc"

if [ ! -x "$MORTARD" ] || [ ! -x "$MORTAR" ]; then
    echo "1..0 # SKIP mortard or mortar not built"
    exit 0
fi
if ! command -v curl > /dev/null; then
    echo "1..0 # SKIP curl missing (extras/debian-packages)"
    exit 0
fi
CHECK="$(dirname "$0")/../lib/prom_check.py"
DASHBOARD="$(dirname "$0")/../../extras/grafana/mortar-dashboard.json"

scrape() { curl -sS --max-time 10 "http://$1/metrics"; }
# prom_ok HOST:PORT: the text parses ("ok N").
prom_ok() { scrape "$1" | python3 "$CHECK" | sed 's/ [0-9]*$//'; }
# sum_of HOST:PORT NAME [REGEX]: the sum of NAME's samples whose labels
# match REGEX.
sum_of() {
    scrape "$1" | awk -v n="$2" -v re="${3:-}" '
        { split($0, a, "{"); name = (index($0, "{") ? a[1] : $1) }
        name == n && $0 ~ re { s += $NF }
        END { printf "%d\n", s }'
}
# grows A B: B > A.
grows() { [ "$2" -gt "$1" ]; }

alloc_port MP
# The rebalance at the end must run long enough to be scraped: its
# processes inherit a delay of 100 ms a name from mortard.
export MORTAR_REBAL_DELAY_MS=100
TEST start_mortard --metrics-port "$MP"
unset MORTAR_REBAL_DELAY_MS
export MORTAR_SOCKET="$T/run/mortard.sock"
EXPECT "ok" prom_ok "127.0.0.1:$MP"
EXPECT "0" sum_of "127.0.0.1:$MP" mortar_volumes 'state="started"'
EXPECT_MATCH 'mortar_peers\{state="connected"\} 0' scrape "127.0.0.1:$MP"
EXPECT_MATCH 'mortar_process_info\{role="mortard",version="[^"]+"\} 1' scrape "127.0.0.1:$MP"

# HTTP: another path 404, another method 405; loopback only.
EXPECT "404" curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$MP/"
EXPECT "405" curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$MP/metrics"
EXPECT "text/plain; version=0.0.4" curl -s -o /dev/null -w '%{content_type}' "http://127.0.0.1:$MP/metrics"
TEST ! curl -s --max-time 3 -o /dev/null "http://127.0.0.2:$MP/metrics"

# mortard: its port in use is one line, and the second mortard does not
# run (no pid file in its run dir).
mkdir -p "$T/m2"
out="$("$MORTARD" --state-dir "$T/m2/state" --run-dir "$T/m2/run" \
    --log-dir "$T/m2/log" --mgmt-port "$(free_port)" --bind-address 127.0.0.1 \
    --metrics-port "$MP" 2>&1)"
EXPECT "1" echo "$?"
EXPECT "mortard: metrics: cannot listen on 127.0.0.1:$MP: Address already in use" echo "$out"
TEST [ ! -e "$T/m2/run/mortard.pid" ]
# A bad address is refused on the command line.
EXPECT "2" sh -c "'$MORTARD' --metrics-port 1 --metrics-address nowhere > /dev/null 2>&1; echo \$?"

# The volume: two bricks, each serving its metrics.
mkdir -p "$T/bricks"
TEST "$MORTAR" volume create v0 "127.0.0.1:$T/bricks/a" "127.0.0.1:$T/bricks/b" force
track_brick v0 brick0
track_brick v0 brick1
TEST "$MORTAR" volume set v0 diagnostics.brick-metrics on
TEST "$MORTAR" volume start v0
EXPECT_WITHIN 20 "Y" sh -c "[ -s '$T/run/v0-brick0.metrics-port' ] && [ -s '$T/run/v0-brick1.metrics-port' ] && echo Y"
BP0="$(cat "$T/run/v0-brick0.metrics-port")"
BP1="$(cat "$T/run/v0-brick1.metrics-port")"
EXPECT_MATCH "Metrics Port +: $BP0" "$MORTAR" volume status v0 detail
EXPECT_MATCH "Metrics Port +: $BP1" "$MORTAR" volume status v0 detail
EXPECT "ok" prom_ok "127.0.0.1:$BP0"
EXPECT "ok" prom_ok "127.0.0.1:$BP1"
EXPECT_MATCH "mortar_process_info\\{volume=\"v0\",brick=\"127.0.0.1:$T/bricks/a\",role=\"brick\"" scrape "127.0.0.1:$BP0"
EXPECT "1" sum_of "127.0.0.1:$MP" mortar_volumes 'state="started"'
EXPECT "2" sum_of "127.0.0.1:$MP" mortar_volume_bricks_online 'volume="v0"'

# The mount, with its own port; a second mount asking for the same port
# fails with the one line and mounts nothing.
alloc_port CP
TEST mount_mortar 127.0.0.1:/v0 "$M0" "volfile-server-port=$MGMT_PORT,metrics-port=$CP"
TEST wait_for_mount "$M0"
EXPECT "ok" prom_ok "127.0.0.1:$CP"
EXPECT_MATCH 'role="client"' scrape "127.0.0.1:$CP"
mkdir -p "$T/m1"
out="$(mount_mortar 127.0.0.1:/v0 "$T/m1" "volfile-server-port=$MGMT_PORT,metrics-port=$CP" 2>&1)"
EXPECT_MATCH "metrics: cannot listen on 127.0.0.1:$CP: Address already in use" echo "$out"
EXPECT "N" is_mounted "$T/m1"

# I/O moves the counters on the client and on the bricks.
cw0="$(sum_of "127.0.0.1:$CP" mortar_fop_bytes_total 'fop="write"')"
cr0="$(sum_of "127.0.0.1:$CP" mortar_fop_total 'fop="read"')"
bw0=$(( $(sum_of "127.0.0.1:$BP0" mortar_fop_bytes_total 'fop="write"') + $(sum_of "127.0.0.1:$BP1" mortar_fop_bytes_total 'fop="write"') ))
for i in 1 2 3 4; do
    TEST dd if=/dev/urandom of="$M0/f$i" bs=64k count=16 conv=fsync status=none
done
TEST drop_caches
for i in 1 2 3 4; do
    TEST dd if="$M0/f$i" of=/dev/null bs=64k status=none
done
cw1="$(sum_of "127.0.0.1:$CP" mortar_fop_bytes_total 'fop="write"')"
cr1="$(sum_of "127.0.0.1:$CP" mortar_fop_total 'fop="read"')"
bw1=$(( $(sum_of "127.0.0.1:$BP0" mortar_fop_bytes_total 'fop="write"') + $(sum_of "127.0.0.1:$BP1" mortar_fop_bytes_total 'fop="write"') ))
TEST grows "$cw0" "$cw1"
TEST grows "$cr0" "$cr1"
TEST grows "$bw0" "$bw1"
# 4 MiB written: every translator the writes passed counted them, so the
# client's sum is at least that.
TEST [ "$((cw1 - cw0))" -ge $((4 * 1024 * 1024)) ]
TEST [ "$((bw1 - bw0))" -ge $((4 * 1024 * 1024)) ]
EXPECT "ok" prom_ok "127.0.0.1:$CP"
EXPECT "ok" prom_ok "127.0.0.1:$BP0"
# The translators' own counters: the FUSE queue, the connections to both
# bricks, the caches (md-cache counts what it could not answer).
TEST grows 0 "$(sum_of "127.0.0.1:$CP" mortar_fuse_requests_total)"
EXPECT "2" sum_of "127.0.0.1:$CP" mortar_client_connected
EXPECT "2" sum_of "127.0.0.1:$CP" mortar_client_connections_total
# Each brick counts the mount's connection (and mortard's, if any).
TEST [ "$(sum_of "127.0.0.1:$BP0" mortar_server_clients)" -ge 1 ]
TEST [ "$(sum_of "127.0.0.1:$BP1" mortar_server_connections_total)" -ge 1 ]
ch0="$(sum_of "127.0.0.1:$CP" mortar_cache_misses_total 'md-cache')"
# Stats after the kernel dropped its dentries and inodes reach md-cache.
for i in 1 2 3; do
    drop_caches
    stat "$M0/f1" "$M0/f2" > /dev/null
done
TEST grows "$ch0" "$(sum_of "127.0.0.1:$CP" mortar_cache_misses_total 'md-cache')"
# A forced stat (statx AT_STATX_FORCE_SYNC) passes the kernel's cache and
# md-cache answers it from what it holds: its hits rise.
hh0="$(sum_of "127.0.0.1:$CP" mortar_cache_hits_total 'md-cache')"
for i in 1 2 3; do
    stat --cached=never "$M0/f1" > /dev/null
done
TEST grows "$hh0" "$(sum_of "127.0.0.1:$CP" mortar_cache_hits_total 'md-cache')"
TEST grows 0 "$(sum_of "127.0.0.1:$CP" mortar_write_behind_writes_total)"

# A brick with an address given explicitly listens there, not on
# 127.0.0.1.
alloc_port XP
alloc_port XB
mkdir -p "$T/bricks/x"
TEST start_brick bx "$T/bricks/x" "$XB" --metrics-port "$XP" --metrics-address 127.0.0.2
EXPECT "ok" prom_ok "127.0.0.2:$XP"
TEST ! curl -s --max-time 3 -o /dev/null "http://127.0.0.1:$XP/metrics"
# A brick whose port is in use does not start: one line, no pid file.
out="$("$MORTARFSD" --volfile "$T/vol/bx.vol" --pid-file "$T/run/by.pid" --log-file "$T/log/by.log" --metrics-port "$CP" 2>&1)"
EXPECT "mortarfsd: metrics: cannot listen on 127.0.0.1:$CP: Address already in use" echo "$out"
TEST [ ! -e "$T/run/by.pid" ]

# Every metric the dashboard uses exists in one of the scrapes.
for p in "$MP" "$BP0" "$CP"; do
    scrape "127.0.0.1:$p" | python3 "$CHECK" --names
done | sed -E 's/_(bucket|sum|count)$//' | sort -u > "$T/names"
python3 -c '
import json, re, sys
d = json.load(open(sys.argv[1]))
exprs = []
def walk(o):
    if isinstance(o, dict):
        for k, v in o.items():
            if k == "expr":
                exprs.append(v)
            else:
                walk(v)
    elif isinstance(o, list):
        for v in o:
            walk(v)
walk(d)
for e in exprs:
    for n in re.findall(r"\bmortar_[a-z_]+", e):
        print(re.sub(r"_(bucket|sum|count)$", "", n))
' "$DASHBOARD" | sort -u > "$T/used"
TEST [ -s "$T/used" ]
EXPECT "" comm -23 "$T/used" "$T/names"

TEST umount "$M0"

# The heal backlog in mortard's scrape: a replica 2 volume loses a brick,
# five files are written; the daemon's index count shows up in
# mortar_heal_pending_entries, and once the brick is back and healed it
# is 0 and mortar_heal_healed_total counted them.
TEST "$MORTAR" volume create v1 replica 2 "127.0.0.1:$T/bricks/r0" \
    "127.0.0.1:$T/bricks/r1" force
track_brick v1 brick0
track_brick v1 brick1
TEST "$MORTAR" volume set v1 cluster.heal-timeout 1
TEST "$MORTAR" volume set v1 diagnostics.brick-metrics on
TEST "$MORTAR" volume start v1
# The volume's self-heal daemon serves its own metrics too.
EXPECT_WITHIN 20 "Y" sh -c "[ -s '$T/run/heal/v1.metrics-port' ] && echo Y"
HP="$(cat "$T/run/heal/v1.metrics-port")"
EXPECT "ok" prom_ok "127.0.0.1:$HP"
EXPECT_MATCH 'mortar_process_info\{volume="v1",role="heal"' scrape "127.0.0.1:$HP"
TEST mount_mortar 127.0.0.1:/v1 "$M0" "volfile-server-port=$MGMT_PORT"
TEST wait_for_mount "$M0"
# heal_pending: v1's sample ("" while the daemon wrote no state yet).
heal_pending() {
    scrape "127.0.0.1:$MP" \
        | awk '/^mortar_heal_pending_entries\{volume="v1"\}/ { print $2 }'
}
at_least() { [ "${1:-0}" -ge "$2" ] && echo Y; }
EXPECT_WITHIN 30 "0" heal_pending
# The brick's directory goes away first, as an unmounted disk: mortard's
# supervisor restarts a dead brick at once, and a brick back within the
# second would heal the files before a scrape saw them pending.
TEST mv "$T/bricks/r1" "$T/bricks/r1.away"
TEST kill -KILL "$(cat "$T/run/v1-brick1.pid")"
for i in 1 2 3 4 5; do
    echo "h$i" > "$M0/h$i"
done
EXPECT_WITHIN 30 "Y" eval 'at_least "$(heal_pending)" 5'
TEST mv "$T/bricks/r1.away" "$T/bricks/r1"
TEST "$MORTAR" volume start v1 force
EXPECT_WITHIN 60 "0" heal_pending
TEST [ "$(sum_of "127.0.0.1:$MP" mortar_heal_healed_total 'volume="v1"')" -ge 5 ]
EXPECT "ok" prom_ok "127.0.0.1:$MP"
TEST umount "$M0"

# Rebalance: a distribute volume of one brick gets 40 files, a second
# brick and a rebalance (100 ms a name: several seconds of running).
TEST "$MORTAR" volume create v2 "127.0.0.1:$T/bricks/d0" force
track_brick v2 brick0
track_brick v2 brick1
_T_PIDFILES+=("$T/run/rebalance/v2.pid")
TEST "$MORTAR" volume set v2 diagnostics.brick-metrics on
TEST "$MORTAR" volume start v2
TEST mount_mortar 127.0.0.1:/v2 "$M0" "volfile-server-port=$MGMT_PORT"
TEST wait_for_mount "$M0"
for i in $(seq 1 40); do
    echo "rebalanced file $i" > "$M0/r$i"
done
TEST umount "$M0"
TEST "$MORTAR" volume add-brick v2 "127.0.0.1:$T/bricks/d1" force
EXPECT_WITHIN 20 "2" sum_of "127.0.0.1:$MP" mortar_volume_bricks_online 'volume="v2"'
TEST "$MORTAR" volume rebalance v2 start
rebal_running() {
    scrape "127.0.0.1:$MP" \
        | awk '/^mortar_rebalance_running\{volume="v2"\}/ { print $2 }'
}
EXPECT_WITHIN 20 "1" rebal_running
EXPECT_WITHIN 20 "Y" sh -c "[ -s '$T/run/rebalance/v2.metrics-port' ] && echo Y"
RP="$(cat "$T/run/rebalance/v2.metrics-port")"
EXPECT "ok" prom_ok "127.0.0.1:$RP"
EXPECT_MATCH 'mortar_process_info\{volume="v2",role="rebalance"' scrape "127.0.0.1:$RP"
EXPECT_WITHIN 120 "0" rebal_running
moved="$(sed -n 's/^moved_files=//p' "$T/run/rebalance/v2.state")"
TEST [ "${moved:-0}" -ge 1 ]
EXPECT "$moved" sum_of "127.0.0.1:$MP" mortar_rebalance_files_moved 'volume="v2"'
EXPECT "$(sed -n 's/^moved_bytes=//p' "$T/run/rebalance/v2.state")" \
    sum_of "127.0.0.1:$MP" mortar_rebalance_bytes_moved 'volume="v2"'
EXPECT "ok" prom_ok "127.0.0.1:$MP"
