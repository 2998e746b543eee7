#!/usr/bin/env bash
# Third-party test suites for wavesh's search shadows (SEARCH), fetched at run time:
#
#   - GNU grep's own tests/, from Debian's source package (`apt-get source grep`, after
#     adding a deb-src line);
#   - bfs's GNU-find compatibility tests (`tests/tests.sh --gnu`, bfs 3 or later), from
#     a bfs source tree named by BFS_SRC, else the bfs 4.0 tarball in
#     ../shared/thirdparty (BFS_TARBALL), unpacked at run time, else Debian's source
#     package (Debian 12's is bfs 2.6, so trixie's or sid's lists are read for a newer
#     one).
#
# Each suite runs against the system tool, against wavesh (a link named grep or find to
# the wavesh binary, first on PATH), and against wavesh with WAVESH_GREP_STRICT=1, where
# every hand-over to the system tool is an error: that count is wavesh's own, and it is
# the one the targets gate. It prints the pass counts of each, and fails when wavesh
# misses a target, when a suite cannot be had, built or run, or when any captured output
# holds "panicked at".
#
#   scripts/compat-suites.sh [WAVESH_BINARY]
#
# Environment: WAVESH_SUITES (which suites: "grep find", the default, or either alone),
# WAVESH_SUITES_DIR (work directory, default $TMPDIR/wavesh-suites),
# BFS_SRC (a bfs source tree), BFS_TARBALL (a bfs source tarball), GREP_TARGET (strict
# passes wanted of GNU grep's 121, default 111), FIND_TARGET (strict passes wanted of
# bfs's --gnu tests, default 269, GNU find's own count). The defaults are the strict
# counts wavesh has reached, so that no change can lower them; docs/search.md says what
# is still handed over.
#
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
wavesh=${1:-$repo/target/release/wavesh}
work=${WAVESH_SUITES_DIR:-${TMPDIR:-/tmp}/wavesh-suites}
grep_target=${GREP_TARGET:-111}
find_target=${FIND_TARGET:-269}
bfs_tarball=${BFS_TARBALL:-$repo/../shared/thirdparty/bfs-4.0.tar.gz}
status=0

log() { printf '%s\n' "$*"; }
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
    fail "GNU grep's suite cannot be had: 'apt-get source grep' failed (no deb-src access, or not root on Debian; see $work/grep-src.download.log)"
    return
  fi
  if [ ! -x "$src/src/grep.gnu" ]; then
    (cd "$src" && ./configure -q >"$work/grep-configure.log" 2>&1 &&
      make -s -j"$(nproc)" MAKEINFO=true >"$work/grep-make.log" 2>&1 &&
      make -s -C tests -j"$(nproc)" MAKEINFO=true check TESTS= >>"$work/grep-make.log" 2>&1 &&
      cp src/grep src/grep.gnu) || {
      fail "GNU grep's suite: the build failed (see $work/grep-make.log)"
      return
    }
  fi
  local system_grep
  system_grep=$(command -v grep)
  if ! "$system_grep" --version 2>/dev/null | head -1 | grep -q "GNU grep"; then
    system_grep="$src/src/grep.gnu"
  fi
  local runs=("system:$system_grep" "wavesh:$wavesh" "wavesh-strict:$wavesh")
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
    if [ -z "$total" ]; then
      fail "GNU grep suite ($label): no test-suite.log totals (see $work/grep-$label.out)"
      continue
    fi
    log "GNU grep suite, $label: $pass passed, $failed failed, $skip skipped (of $total)"
    grep -l '^:test-result: FAIL' "$src"/tests/*.trs 2>/dev/null | xargs -r -n1 basename |
      sed 's/\.trs$//' | sort >"$work/grep-$label.failed"
    grep -l '^:test-result: PASS' "$src"/tests/*.trs 2>/dev/null | xargs -r -n1 basename |
      sed 's/\.trs$//' | sort >"$work/grep-$label.passed"
    mkdir -p "$work/grep-$label-logs"
    cp "$src"/tests/*.log "$work/grep-$label-logs/" 2>/dev/null
    check_panics "$work/grep-$label-logs" "GNU grep suite ($label)"
    if [ "$label" != system ] && [ -s "$work/grep-$label.failed" ]; then
      log "  failing under $label: $(tr '\n' ' ' <"$work/grep-$label.failed")"
    fi
    if [ "$label" = wavesh-strict ] && [ "${pass:-0}" -lt "$grep_target" ]; then
      fail "GNU grep suite: wavesh passes ${pass:-0} on its own (strict), the target is $grep_target"
    fi
  done
  ln -sf "$src/src/grep.gnu" "$src/src/grep"
}

# ---------------------------------------------------------------------------------------
# bfs --gnu
run_bfs_suite() {
  local src=${BFS_SRC:-}
  if [ -z "$src" ] && [ -f "$bfs_tarball" ]; then
    src="$work/bfs-tarball-src"
    if [ ! -f "$src/tests/tests.sh" ]; then
      rm -rf "$src" && mkdir -p "$src"
      tar -xzf "$bfs_tarball" -C "$src" --strip-components=1 || {
        fail "bfs's suite: cannot unpack $bfs_tarball"
        return
      }
    fi
  fi
  if [ -z "$src" ]; then
    # bfs 3 moved its suite to tests/tests.sh; Debian 12 has bfs 2.6.
    if ! src=$(debian_source bfs 3); then
      fail "bfs's suite cannot be had: no $bfs_tarball, no BFS_SRC, and no bfs 3 or later from 'apt-get source bfs' (see $work/bfs-src.download.log)"
      return
    fi
  fi
  if [ ! -f "$src/tests/tests.sh" ]; then
    fail "bfs's suite: $src has no tests/tests.sh (bfs 3 or later is needed)"
    return
  fi
  local build="$work/bfs-build"
  if [ ! -x "$build/bin/tests/xtouch" ]; then
    rm -rf "$build" && cp -a "$src" "$build"
    (cd "$build" && ./configure NOLIBS=y >"$work/bfs-configure.log" 2>&1 &&
      make -s bin/tests/mksock bin/tests/xtouch >"$work/bfs-make.log" 2>&1) || {
      fail "bfs's suite: the test helpers did not build (see $work/bfs-make.log)"
      return
    }
  fi
  local system_find
  system_find=$(command -v find)
  local bin="$work/bin"
  mkdir -p "$bin"
  ln -sf "$wavesh" "$bin/find"
  for run in "system:$system_find" "wavesh:$bin/find" "wavesh-strict:$bin/find"; do
    local label=${run%%:*} binary=${run#*:} strict=()
    [ "$label" = wavesh-strict ] && strict=(WAVESH_GREP_STRICT=1)
    (cd "$build" && env "${strict[@]}" ./tests/tests.sh --bfs="$binary" --gnu --verbose=tests --sudo= \
      >"$work/bfs-$label.out" 2>&1)
    local pass skip failed
    pass=$(sed -En 's|^\[PASS\] *([0-9]+) / .*|\1|p' "$work/bfs-$label.out" | tail -1)
    skip=$(sed -En 's|^\[SKIP\] *([0-9]+) / .*|\1|p' "$work/bfs-$label.out" | tail -1)
    failed=$(sed -En 's|^\[FAIL\] *([0-9]+) / .*|\1|p' "$work/bfs-$label.out" | tail -1)
    if [ -z "$pass" ]; then
      fail "bfs suite ($label): no pass count in its output (see $work/bfs-$label.out)"
      pass=0
    fi
    log "bfs --gnu suite, $label: ${pass:-0} passed, ${failed:-0} failed, ${skip:-0} skipped"
    sed -n 's/^\[FAIL\] *\([^ ]*\)$/\1/p; s/^\[ *FAIL *\] *\(.*\)$/\1/p' "$work/bfs-$label.out" |
      grep -v ' / ' | sort -u >"$work/bfs-$label.failed"
    check_panics "$work/bfs-$label.out" "bfs suite ($label)"
    eval "bfs_pass_${label//-/_}=\${pass:-0}"
  done
  local regressions
  regressions=$(comm -13 "$work/bfs-system.failed" "$work/bfs-wavesh-strict.failed" | tr '\n' ' ')
  [ -n "${regressions// /}" ] &&
    log "  failing under wavesh (strict), passing under GNU find: $regressions"
  # shellcheck disable=SC2154 # set by the eval above
  log "bfs --gnu suite: GNU find passes $bfs_pass_system, wavesh $bfs_pass_wavesh with hand-over, $bfs_pass_wavesh_strict on its own"
  if [ "$bfs_pass_wavesh_strict" -lt "$find_target" ]; then
    fail "bfs suite: wavesh passes $bfs_pass_wavesh_strict on its own (strict), the target is $find_target"
  fi
}

suites=${WAVESH_SUITES:-grep find}
for suite in $suites; do
  case $suite in
  grep) run_grep_suite ;;
  find) run_bfs_suite ;;
  *) fail "WAVESH_SUITES: unknown suite '$suite' (known: grep find)" ;;
  esac
done
exit "$status"
