#!/usr/bin/env bash
# run-tests.sh: everything CI does, on a fresh Debian 12 machine as root:
#   1. installs the packages in extras/debian-packages (apt-get; skipped
#      with MORTAR_SKIP_APT=1 or when not root),
#   2. generates the build system if this checkout has none (autogen.sh);
#      when the checkout is configured in-tree (README's first command),
#      builds from a clean copy of its sources instead, since configure
#      refuses a build directory beside an in-tree build (the user's
#      build is left as it is),
#   3. builds with --enable-werror and runs the unit tests (make check),
#   4. builds again with --enable-sanitizers and runs the unit tests,
#   4b. builds the libFuzzer targets (--enable-fuzzing, clang) and runs
#      each for FUZZ_SHORT_SECONDS (default 20) over the committed corpus
#      (tests/fuzz/README.md; skipped with MORTAR_SKIP_FUZZ=1),
#   5. runs the functional tests through real mounts (make
#      check-functional: prove over tests/functional).
# With MORTAR_FUNCTIONAL_SANITIZERS=1 the functional tests also run on the
# sanitizer build (daemons' ASan/UBSan reports fail the test file).
# Build directories go under $MORTAR_BUILD_ROOT (default a new /tmp dir).
# Exits non-zero if any step failed; prove's summary is printed last.
set -euo pipefail

SRC="$(cd "$(dirname "$0")" && pwd)"
# What the builds configure from: SRC, or a clean copy of it (clean_src).
BSRC="$SRC"
JOBS="${JOBS:-2}"
BUILD_ROOT="${MORTAR_BUILD_ROOT:-$(mktemp -d /tmp/mortar-build.XXXXXX)}"
# mktemp makes it 0700; the access tests run the built CLI and mortarfsd
# as unprivileged users (mgmt-auth.t, brick-access.t).
chmod 0755 "$BUILD_ROOT"
FUNCTIONAL_TIMEOUT="${FUNCTIONAL_TIMEOUT:-2400}"
FAILED=()
PASSED=()

step() {
    local name="$1"
    shift
    echo "=== $name"
    if "$@"; then
        PASSED+=("$name")
        return 0
    fi
    echo "=== $name: FAILED"
    FAILED+=("$name")
    return 1
}

install_packages() {
    if [ "${MORTAR_SKIP_APT:-0}" = 1 ] || [ "$(id -u)" != 0 ] ||
       ! command -v apt-get > /dev/null; then
        echo "skipping package installation"
        return 0
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q --no-install-recommends \
        $(grep -v '^#' "$SRC/extras/debian-packages")
}

# clean_src: when SRC holds an in-tree configured build (config.status),
# BSRC becomes a copy of SRC's sources under BUILD_ROOT: with git, the
# tracked files and the untracked ones not ignored (a new file not yet
# added is part of the sources; build output is ignored), generated
# again by autogen.sh; from an export without git, the whole tree, then
# `make distclean` in the copy. SRC itself is only read.
clean_src() {
    local dst="$BUILD_ROOT/src"
    if [ ! -f "$SRC/config.status" ]; then
        echo "source tree not configured in-tree; building from it"
        return 0
    fi
    echo "source tree configured in-tree; building from a copy in $dst"
    rm -rf "$dst"
    mkdir -p "$dst"
    if command -v git > /dev/null &&
       [ "$(git -C "$SRC" rev-parse --show-toplevel 2> /dev/null)" = \
         "$(cd "$SRC" && pwd -P)" ]; then
        # Not copied: a tracked file deleted in the work tree, and a
        # program (or libtool's wrapper of one) the in-tree build made
        # that .gitignore misses: the build would take it for its target
        # (found through VPATH) and not build it.
        (cd "$SRC" && git ls-files -z --cached --others --exclude-standard |
            xargs -0 -r sh -c 'elf="$(printf "\177ELF")"; for f; do
                if [ -f "$f" ] && { [ "$(head -c 4 "$f")" = "$elf" ] ||
                    head -n 3 "$f" | grep -q "temporary wrapper script"; }
                then echo "not copying program $f" >&2
                elif [ -e "$f" ] || [ -L "$f" ]; then printf "%s\0" "$f"; fi
            done' _ | tar --null -T - -cf -) | tar -C "$dst" -xf - ||
            return 1
    else
        cp -a "$SRC/." "$dst" || return 1
        make -C "$dst" distclean > "$BUILD_ROOT/distclean.log" 2>&1 ||
            { tail -n 20 "$BUILD_ROOT/distclean.log"; return 1; }
    fi
    BSRC="$dst"
}

generate() {
    if [ -x "$BSRC/configure" ] && [ "${MORTAR_AUTOGEN:-0}" != 1 ]; then
        echo "configure exists; not regenerating (MORTAR_AUTOGEN=1 forces it)"
        return 0
    fi
    "$BSRC/autogen.sh"
}

# build DIR CONFIGURE-ARGS...: configure + make in BUILD_ROOT/DIR.
build() {
    local dir="$BUILD_ROOT/$1"
    shift
    mkdir -p "$dir"
    (cd "$dir" && "$BSRC/configure" -q "$@" &&
        make -j"$JOBS" > make.log 2>&1) ||
        { tail -n 60 "$dir/make.log" 2> /dev/null; return 1; }
}

unit_tests() {
    local dir="$BUILD_ROOT/$1"
    if ! make -C "$dir" -j"$JOBS" check > "$dir/check.log" 2>&1; then
        grep -E '^(FAIL|ERROR|XPASS|not ok)|\*\*\*' "$dir/check.log" || true
        find "$dir" -name test-suite.log -exec sh -c \
            'grep -q "^# FAIL: *0$" "$1" && grep -q "^# ERROR: *0$" "$1" ||
             tail -n 80 "$1"' _ {} \;
        grep -E '^# (TOTAL|PASS|FAIL|ERROR)' "$dir/check.log" | tail -n 20
        return 1
    fi
    grep -E '^# (TOTAL|PASS|SKIP|FAIL|ERROR)' "$dir/check.log" | tail -n 40
}

# Each target briefly over tests/fuzz/corpus; a crash or leak fails.
fuzz_short() {
    make -C "$BUILD_ROOT/$1/tests/fuzz" check-fuzz \
        FUZZ_SHORT_SECONDS="${FUZZ_SHORT_SECONDS:-20}"
}

functional_tests() {
    local dir="$BUILD_ROOT/$1"
    # Only the tests/ directory: the tree is already built.
    timeout --kill-after=60 "$FUNCTIONAL_TIMEOUT" \
        make -C "$dir/tests" check-functional 2>&1 |
        tee "$BUILD_ROOT/prove-$1.log"
    return "${PIPESTATUS[0]}"
}

step "install packages" install_packages || true
mkdir -p "$BUILD_ROOT"
step "source tree" clean_src || true
step "autogen" generate || true
if step "build (werror)" build werror --enable-werror; then
    step "unit tests (werror)" unit_tests werror || true
fi
if step "build (sanitizers)" build asan --enable-werror --enable-sanitizers; then
    step "unit tests (sanitizers)" unit_tests asan || true
fi
if [ "${MORTAR_SKIP_FUZZ:-0}" != 1 ] &&
   step "build (fuzzing)" build fuzz --enable-fuzzing; then
    step "fuzz targets (short)" fuzz_short fuzz || true
fi
if [ "${MORTAR_FUNCTIONAL_SANITIZERS:-0}" = 1 ] &&
   [ -x "$BUILD_ROOT/asan/mortarfsd/mortarfsd" ]; then
    step "functional tests (sanitizers)" functional_tests asan || true
fi
if [ -x "$BUILD_ROOT/werror/mortarfsd/mortarfsd" ]; then
    step "functional tests" functional_tests werror || true
else
    echo "=== functional tests: not run (no mortarfsd built)"
    FAILED+=("functional tests")
fi

echo
echo "=== build dirs in $BUILD_ROOT"
for s in "${PASSED[@]}"; do echo "passed: $s"; done
for s in "${FAILED[@]+"${FAILED[@]}"}"; do echo "FAILED: $s"; done
# prove's summary last, so it closes the output.
if [ -f "$BUILD_ROOT/prove-werror.log" ]; then
    echo
    sed -n '/^Test Summary Report/,$p;/^All tests successful/,$p' \
        "$BUILD_ROOT/prove-werror.log"
fi
[ "${#FAILED[@]}" -eq 0 ]
