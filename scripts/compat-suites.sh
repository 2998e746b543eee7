#!/usr/bin/env bash
# Third-party test suites for wavesh's search shadows (SEARCH), fetched at run time:
#
#   - GNU grep's own tests/, from Debian's source package (`apt-get source grep`, after
#     adding a deb-src line);
#   - bfs's GNU-find compatibility tests (`tests/tests.sh --gnu`, bfs 3 or later), from
#     Debian's source package (Debian 12's is bfs 2.6, so trixie's or sid's lists are
#     read for a newer one), or from a bfs source tree named by BFS_SRC.
#
# Each suite runs twice: against the system tool and against wavesh (a link named grep
# or find to the wavesh binary, first on PATH). It prints the pass counts of both, and
# fails when wavesh misses a target or any captured output holds "panicked at".
#
#   scripts/compat-suites.sh [WAVESH_BINARY]
#
# Environment: WAVESH_SUITES_DIR (work directory, default $TMPDIR/wavesh-suites),
# BFS_SRC (a bfs source tree), BFS_KNOWN (bfs tests allowed to fail under wavesh while
# GNU find passes them; none by default), GREP_TARGET (passes wanted of GNU grep's 121, default
# 110), COMPAT_SUITES_STRICT=1 (also run grep's suite with WAVESH_GREP_STRICT=1: every
# hand-over to the system grep becomes an error, so the count is wavesh's own).
#
# A suite that cannot be fetched or built prints SKIPPED with the reason and does not
# fail the run; a missed target does.
#
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
wavesh=${1:-$repo/target/release/wavesh}
work=${WAVESH_SUITES_DIR:-${TMPDIR:-/tmp}/wavesh-suites}
grep_target=${GREP_TARGET:-110}
bfs_known=${BFS_KNOWN:-}
status=0

log() { printf '%s\n' "$*"; }
skip() { log "SKIPPED: $*"; }
fail() { log "FAILED: $*"; status=1; }

if [ ! -x "$wavesh" ]; then
  (cd "$repo" && cargo build --release --locked -q -p wavesh) || {
    fail "cannot build the wavesh binary"
    exit 1
  }
fi
wavesh=$(readlink -f "$wavesh")
mkdir -p "$work"
work=$(readlink -f "$work")

# Debian's source packages need a deb-src line; the suites need a compiler and make.
prepare_apt() {
  command -v apt-get >/dev/null 2>&1 || return 1
  [ "$(id -u)" = 0 ] || return 1
  local codename
  codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
  [ -n "$codename" ] || return 1
  local list=/etc/apt/sources.list.d/wavesh-deb-src.sources
  if ! grep -rqs "deb-src" /etc/apt/sources.list /etc/apt/sources.list.d/; then
    printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      "$codename" >"$list"
  fi
  # The lists first: without them `apt-get source` asks the mirror for files it may no
  # longer have (404).
  apt-get update -qq >/dev/null 2>&1 || return 1
  # gcc, make, dpkg-source; PCRE2 for grep -P; locales for the UTF-8 tests.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc make dpkg-dev perl \
    libpcre2-dev locales >/dev/null 2>&1 || return 1
  # The locales GNU grep's tests use (without them those tests skip).
  local wanted=("en_US.UTF-8 UTF-8" "tr_TR.UTF-8 UTF-8" "cs_CZ.UTF-8 UTF-8"
    "ru_RU.KOI8-R KOI8-R" "ja_JP.EUC-JP EUC-JP" "zh_CN.GB18030 GB18030")
  local added=0 entry
  for entry in "${wanted[@]}"; do
    if ! grep -qxF "$entry" /etc/locale.gen 2>/dev/null; then
      echo "$entry" >>/etc/locale.gen
      added=1
    fi
  done
  if [ "$added" = 1 ] || ! locale -a 2>/dev/null | grep -qi '^en_US\.utf-\?8$'; then
    locale-gen >/dev/null 2>&1 || true
  fi
  return 0
}

apt_ready=0
if prepare_apt; then apt_ready=1; fi

# Fetches a Debian source package into $work/NAME-src, unpacked without Debian's
# patches (they would need automake to rebuild the makefiles). Prints the directory.
# With MIN_MAJOR, a version below it is not taken from the release's own lists: the
# newer releases' (Debian 13 "trixie", then "sid") are tried, each with lists of its own
# in $work/apt-SUITE, which leave the system's apt configuration as it was.
debian_source() {
  local name=$1 min_major=${2:-0} dir="$work/$1-src"
  if [ -d "$dir" ]; then
    echo "$dir"
    return 0
  fi
  [ "$apt_ready" = 1 ] || return 1
  local version
  version=$(apt-cache showsrc "$name" 2>/dev/null | sed -n 's/^Version: //p' | sort -V | tail -1)
  if [ -n "$version" ] && [ "${version%%.*}" -ge "$min_major" ] 2>/dev/null &&
    fetch_source "$dir" "$name"; then
    echo "$dir"
    return 0
  fi
  local suite
  for suite in trixie sid; do
    local state="$work/apt-$suite"
    mkdir -p "$state/lists/partial"
    printf 'deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian %s main\n' \
      "$suite" >"$state/sources.list"
    local opts=(-o "Dir::Etc::SourceList=$state/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
      -o "Dir::State::Lists=$state/lists")
    apt-get "${opts[@]}" update -qq >"$state/update.log" 2>&1 || continue
    version=$(apt-cache "${opts[@]}" showsrc "$name" 2>/dev/null | sed -n 's/^Version: //p' | sort -V | tail -1)
    [ -n "$version" ] && [ "${version%%.*}" -ge "$min_major" ] 2>/dev/null || continue
    if fetch_source "$dir" "$name" "${opts[@]}"; then
      echo "$dir"
      return 0
    fi
  done
  return 1
}

# `apt-get source` NAME into DIR with apt OPTIONS; every attempt's messages are added to
# DIR.download.log (a 404 from the mirror shows there).
fetch_source() {
  local dir=$1 name=$2
  shift 2
  rm -rf "$dir.download" && mkdir -p "$dir.download"
  echo "== apt-get $* source $name" >>"$dir.download.log"
  (cd "$dir.download" && apt-get "$@" source --download-only -qq "$name" >>"$dir.download.log" 2>&1) || {
    rm -rf "$dir.download"
    return 1
  }
  local dsc
  dsc=$(ls "$dir.download"/*.dsc | head -1)
  (cd "$dir.download" && dpkg-source -x --skip-patches "$dsc" "$dir" >>"$dir.download.log" 2>&1) || {
    rm -rf "$dir.download" "$dir"
    return 1
  }
  # dpkg-source leaves a copy of the upstream tarball beside the tree.
  rm -rf "$dir.download" "$(dirname "$dir")/${name}"_*.orig.tar.*
}

# Prints every "panicked at" in the files under $1 (none is the only good answer).
check_panics() {
  local where=$1 label=$2
  if grep -rl "panicked at" "$where" 2>/dev/null | head -5 | grep -q .; then
    fail "$label: a run printed 'panicked at':"
    grep -rl "panicked at" "$where" | head -5
  fi
}

# ---------------------------------------------------------------------------------------
# GNU grep
run_grep_suite() {
  local src
  if ! src=$(debian_source grep); then
    skip "GNU grep's suite: 'apt-get source grep' failed (no deb-src access, or not root on Debian)"
    return
  fi
  if [ ! -x "$src/src/grep.gnu" ]; then
    (cd "$src" && ./configure -q >"$work/grep-configure.log" 2>&1 &&
      make -s -j"$(nproc)" MAKEINFO=true >"$work/grep-make.log" 2>&1 &&
      make -s -C tests -j"$(nproc)" MAKEINFO=true check TESTS= >>"$work/grep-make.log" 2>&1 &&
      cp src/grep src/grep.gnu) || {
      skip "GNU grep's suite: the build failed (see $work/grep-make.log)"
      return
    }
  fi
  local system_grep
  system_grep=$(command -v grep)
  if ! "$system_grep" --version 2>/dev/null | head -1 | grep -q "GNU grep"; then
    system_grep="$src/src/grep.gnu"
  fi
  local runs=("system:$system_grep" "wavesh:$wavesh")
  [ "${COMPAT_SUITES_STRICT:-0}" = 1 ] && runs+=("wavesh-strict:$wavesh")
  for run in "${runs[@]}"; do
    local label=${run%%:*} binary=${run#*:} strict=()
    [ "$label" = wavesh-strict ] && strict=(WAVESH_GREP_STRICT=1)
    ln -sf "$binary" "$src/src/grep"
    rm -f "$src"/tests/*.log "$src"/tests/*.trs
    (cd "$src/tests" && env "${strict[@]}" make -k -s check MAKEINFO=true \
      >"$work/grep-$label.out" 2>&1)
    local log_file="$src/tests/test-suite.log"
    local pass skip failed total
    pass=$(sed -n 's/^# PASS: *//p' "$log_file" | head -1)
    skip=$(sed -n 's/^# SKIP: *//p' "$log_file" | head -1)
    failed=$(sed -n 's/^# FAIL: *//p' "$log_file" | head -1)
    total=$(sed -n 's/^# TOTAL: *//p' "$log_file" | head -1)
    log "GNU grep suite, $label: $pass passed, $failed failed, $skip skipped (of $total)"
    grep -l '^:test-result: FAIL' "$src"/tests/*.trs 2>/dev/null | xargs -r -n1 basename |
      sed 's/\.trs$//' | sort >"$work/grep-$label.failed"
    grep -l '^:test-result: PASS' "$src"/tests/*.trs 2>/dev/null | xargs -r -n1 basename |
      sed 's/\.trs$//' | sort >"$work/grep-$label.passed"
    mkdir -p "$work/grep-$label-logs"
    cp "$src"/tests/*.log "$work/grep-$label-logs/" 2>/dev/null
    check_panics "$work/grep-$label-logs" "GNU grep suite ($label)"
    if [ "$label" = wavesh ]; then
      [ -n "$failed" ] && [ -s "$work/grep-wavesh.failed" ] &&
        log "  failing under wavesh: $(tr '\n' ' ' <"$work/grep-wavesh.failed")"
      if [ "${pass:-0}" -lt "$grep_target" ]; then
        fail "GNU grep suite: wavesh passes ${pass:-0}, the target is $grep_target"
      fi
    fi
  done
  ln -sf "$src/src/grep.gnu" "$src/src/grep"
}

# ---------------------------------------------------------------------------------------
# bfs --gnu
run_bfs_suite() {
  local src=${BFS_SRC:-}
  if [ -z "$src" ]; then
    # bfs 3 moved its suite to tests/tests.sh; Debian 12 has bfs 2.6.
    if ! src=$(debian_source bfs 3); then
      skip "bfs's suite: no bfs 3 or later from 'apt-get source bfs' (Debian 12's lists, then trixie's and sid's; see $work/bfs-src.download.log) and BFS_SRC names no bfs source tree"
      return
    fi
  fi
  if [ ! -f "$src/tests/tests.sh" ]; then
    skip "bfs's suite: $src has no tests/tests.sh (bfs 3 or later is needed)"
    return
  fi
  local build="$work/bfs-build"
  if [ ! -x "$build/bin/tests/xtouch" ]; then
    rm -rf "$build" && cp -a "$src" "$build"
    (cd "$build" && ./configure NOLIBS=y >"$work/bfs-configure.log" 2>&1 &&
      make -s bin/tests/mksock bin/tests/xtouch >"$work/bfs-make.log" 2>&1) || {
      skip "bfs's suite: the test helpers did not build (see $work/bfs-make.log)"
      return
    }
  fi
  local system_find
  system_find=$(command -v find)
  local bin="$work/bin"
  mkdir -p "$bin"
  ln -sf "$wavesh" "$bin/find"
  for run in "system:$system_find" "wavesh:$bin/find"; do
    local label=${run%%:*} binary=${run#*:}
    (cd "$build" && ./tests/tests.sh --bfs="$binary" --gnu --verbose=tests --sudo= \
      >"$work/bfs-$label.out" 2>&1)
    local pass skip failed
    pass=$(sed -En 's|^\[PASS\] *([0-9]+) / .*|\1|p' "$work/bfs-$label.out" | tail -1)
    skip=$(sed -En 's|^\[SKIP\] *([0-9]+) / .*|\1|p' "$work/bfs-$label.out" | tail -1)
    failed=$(sed -En 's|^\[FAIL\] *([0-9]+) / .*|\1|p' "$work/bfs-$label.out" | tail -1)
    log "bfs --gnu suite, $label: ${pass:-0} passed, ${failed:-0} failed, ${skip:-0} skipped"
    sed -n 's/^\[FAIL\] *\([^ ]*\)$/\1/p; s/^\[ *FAIL *\] *\(.*\)$/\1/p' "$work/bfs-$label.out" |
      grep -v ' / ' | sort -u >"$work/bfs-$label.failed"
    check_panics "$work/bfs-$label.out" "bfs suite ($label)"
    eval "bfs_pass_$label=\${pass:-0}"
  done
  # No test that GNU find passes may fail under wavesh.
  local regressions known=() unknown=() test
  regressions=$(comm -13 "$work/bfs-system.failed" "$work/bfs-wavesh.failed")
  for test in $regressions; do
    if [[ " $bfs_known " == *" $test "* ]]; then known+=("$test"); else unknown+=("$test"); fi
  done
  [ "${#known[@]}" -gt 0 ] &&
    log "  KNOWN (BFS_KNOWN): ${known[*]}"
  if [ "${#unknown[@]}" -gt 0 ]; then
    log "  failing under wavesh, passing under GNU find: ${unknown[*]}"
    fail "bfs suite: ${#unknown[@]} tests that GNU find passes fail under wavesh"
  fi
  # shellcheck disable=SC2154 # set by the eval above
  if [ "$bfs_pass_wavesh" -lt "$bfs_pass_system" ]; then
    fail "bfs suite: wavesh passes $bfs_pass_wavesh, GNU find $bfs_pass_system"
  fi
}

run_grep_suite
run_bfs_suite
exit "$status"
