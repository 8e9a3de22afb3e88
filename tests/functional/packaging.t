#!/usr/bin/env bash
# What `make install` puts beside the programs (extras/Makefile.am), from
# the build in $MORTAR_BUILD_DIR into a temporary root (DESTDIR): the
# systemd unit (ExecStart the installed mortard, forking, KillMode=process,
# `systemd-analyze verify` when it exists, nothing enabled), the man pages
# of mortar, mortard, mortarfsd and mount.mortar (groff renders them
# without a warning when it exists, else their sections are checked), the
# bash completion of mortar (sourced in bash: commands, subcommands, keys
# of volume set from mortard's tables, flags, system::, volume names from
# a running mortard when root, nothing and no noise when mortard is not
# there), and `make uninstall` removing all of it.
# TIMEOUT: 300
. "$(dirname "$0")/../lib/include.rc"

ROOT="$T/root"
TEST make -s -C "$MORTAR_BUILD_DIR" install DESTDIR="$ROOT"

# find_one NAME: the one file whose path ends in /NAME under the root.
find_one() {
    local found
    found="$(find "$ROOT" -path "*/$1" -type f)"
    [ -n "$found" ] && [ "$(printf '%s\n' "$found" | wc -l)" = 1 ] &&
        echo "$found"
}

# ---- systemd unit ------------------------------------------------------
UNIT="$(find_one mortard.service)"
TEST [ -n "$UNIT" ]
EXPECT_MATCH "/lib/systemd/system/mortard.service$" echo "$UNIT"
unit_key() {
    sed -n "s/^$1=//p" "$UNIT"
}
EXEC="$(unit_key ExecStart | awk '{ print $1 }')"
EXPECT_MATCH "^/.*/mortard$" echo "$EXEC"
TEST [ -x "$ROOT$EXEC" ]
# mortard forks and returns once it listens; its pid file is the default
# --run-dir's.
EXPECT "forking" unit_key Type
EXPECT "/run/mortar/mortard.pid" unit_key PIDFile
EXPECT_MATCH "run-dir DIR.*/run/mortar" sh -c "'$MORTARD' --help | tr '\n' ' '"
EXPECT "process" unit_key KillMode
EXPECT "on-failure" unit_key Restart
EXPECT "network-online.target" unit_key After
# Installed, not enabled: no *.wants link anywhere.
EXPECT "" find "$ROOT" -type l -path '*.wants/*'
if command -v systemd-analyze > /dev/null; then
    # The unit as installed, with ExecStart inside the temporary root
    # (verify checks that the command exists).
    mkdir -p "$T/units"
    sed "s|^ExecStart=|ExecStart=$ROOT|" "$UNIT" > "$T/units/mortard.service"
    TEST systemd-analyze verify --man=no "$T/units/mortard.service"
    EXPECT "" sh -c "systemd-analyze verify --man=no '$T/units/mortard.service' 2>&1"
else
    echo "# systemd-analyze not found: unit not verified by systemd" >&2
fi

# ---- man pages ---------------------------------------------------------
for page in mortar.8 mortard.8 mortarfsd.8 mount.mortar.8; do
    P="$(find_one "$page")"
    TEST [ -n "$P" ]
    EXPECT_MATCH "/man8/$page$" echo "$P"
    EXPECT_MATCH "^\.TH $(echo "${page%.8}" | tr a-z A-Z) 8 " grep '^\.TH' "$P"
    for s in NAME SYNOPSIS DESCRIPTION OPTIONS FILES "SEE ALSO"; do
        TEST grep -qx "\.SH $s" "$P"
    done
    if command -v groff > /dev/null; then
        EXPECT "" sh -c "groff -man -Tutf8 -ww -z '$P' 2>&1"
    fi
done
if ! command -v groff > /dev/null; then
    echo "# groff not found: pages not rendered, sections checked" >&2
fi
# The options come from each program's --help.
man_text() {
    sed 's/\\-/-/g' "$(find_one "$1")"
}
EXPECT_MATCH "--bind-address" man_text mortard.8
EXPECT_MATCH "--backup-volfile-servers" man_text mortarfsd.8
EXPECT_MATCH "backup-volfile-servers=H2:H3" man_text mount.mortar.8
EXPECT_MATCH "volume create VOL" man_text mortar.8
EXPECT "0" sh -c "sed 's/\\\\-/-/g' '$(find_one mortar.8)' | grep -c 'not reachable'"

# ---- bash completion ---------------------------------------------------
COMP="$(find_one completions/mortar)"
TEST [ -n "$COMP" ]
EXPECT_MATCH "/bash-completion/completions/mortar$" echo "$COMP"
TEST bash -n "$COMP"
# A `mortar` in PATH for the completion's `mortar volume list`.
mkdir -p "$T/bin"
printf '#!/bin/sh\nexec "%s" "$@"\n' "$MORTAR" > "$T/bin/mortar"
chmod +x "$T/bin/mortar"

# complete LINE: the completion's answers for LINE (cursor at the end),
# sorted, on one line; what it wrote to stderr fails the check.
complete_line() {
    PATH="$T/bin:$PATH" bash -c '
        . "$1"
        COMP_LINE="$2"
        COMP_POINT=${#2}
        read -r -a COMP_WORDS <<< "$2"
        COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
        _mortar
        printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " " | sed "s/ $//"
    ' complete "$COMP" "$1" 2> "$T/comp.err"
    [ ! -s "$T/comp.err" ]
}
# complete_nosock LINE: the same with MORTAR_SOCKET where nothing answers.
complete_nosock() {
    MORTAR_SOCKET="$T/run/none.sock" complete_line "$1"
}
# Nothing answers on this socket.
export MORTAR_SOCKET="$T/run/none.sock"
EXPECT "volume" complete_line "mortar vol"
EXPECT "set start statedump status stop" complete_line "mortar volume s"
EXPECT "add-brick" complete_line "mortar volume a"
EXPECT "peer pool" complete_line "mortar p"
EXPECT "detach probe status" complete_line "mortar peer "
EXPECT "list" complete_line "mortar pool "
EXPECT "system::" complete_line "mortar sys"
EXPECT "getspec" complete_line "mortar system:: "
EXPECT_MATCH "(^| )performance\.write-behind( |$)" complete_line "mortar volume set v0 performance."
EXPECT_MATCH "(^| )performance\.io-thread-count( |$)" complete_line "mortar volume set v0 performance.io"
# Mortar's own names too, for get and reset (with all).
EXPECT_MATCH "(^| )io-threads\.thread-count( |$)" complete_line "mortar volume get v0 io-threads."
EXPECT "all" complete_line "mortar volume reset v0 al"
EXPECT "force" complete_line "mortar volume start v0 "
EXPECT "fix-layout start status stop" complete_line "mortar volume rebalance v0 "
EXPECT "split-brain summary" complete_line "mortar volume heal v0 info "
EXPECT "bigger-file latest-mtime source-brick" complete_line "mortar volume heal v0 split-brain "
EXPECT "commit" complete_line "mortar volume replace-brick v0 h:/a h:/b "
# Flags anywhere, and they do not count as command words.
EXPECT "--xml" complete_line "mortar volume info --x"
EXPECT "volume" complete_line "mortar --mode=script vol"
EXPECT "--socket=" complete_line "mortar --so"
# No mortard: no volume names, and nothing on stderr (complete_line).
EXPECT "" complete_line "mortar volume start "
EXPECT "all" complete_line "mortar volume status "

if [ "$(id -u)" = 0 ] && [ -x "$MORTARD" ]; then
    TEST start_mortard
    export MORTAR_SOCKET="$T/run/mortard.sock"
    mkdir -p "$T/bricks/pv1" "$T/bricks/pv2"
    TEST "$MORTAR" volume create pv1 "127.0.0.1:$T/bricks/pv1" force
    TEST "$MORTAR" volume create pv2 "127.0.0.1:$T/bricks/pv2" force
    EXPECT "pv1 pv2" complete_line "mortar volume start "
    EXPECT "pv2" complete_line "mortar volume delete pv2"
    EXPECT "all pv1 pv2" complete_line "mortar volume status "
    EXPECT "pv1" complete_line "mortar system:: getspec pv1"
    # The socket named on the line is the one asked.
    EXPECT "pv1 pv2" complete_nosock "mortar --socket=$T/run/mortard.sock volume stop "
else
    echo "# not root: volume names from a running mortard not checked" >&2
fi

# ---- uninstall ---------------------------------------------------------
TEST make -s -C "$MORTAR_BUILD_DIR" uninstall DESTDIR="$ROOT"
EXPECT "" find "$ROOT" -type f
