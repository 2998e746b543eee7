#!/usr/bin/env bash
# wavesh grep against GNU grep, ripgrep and ugrep on a real source tree with ignored
# build directories, in one hyperfine run.
#
#   bench/grep-tree.sh [PATTERN]
#
# The tree: the crate sources under the cargo registry as `src/`, and two ignored copies
# of them as `node_modules/` and `target/` (listed in .gitignore), so a search that honours
# .gitignore reads a third of the bytes. The tree is a git repository, as an agent's
# workspace is; ugrep gets --ignore-files, so all three gitignore-aware tools skip the
# same directories. Each tool's run is checked before it is timed (exit 0, and the
# gitignore-aware ones find the same lines): a failing tool is an error, never a fast
# time. Needs: hyperfine, ripgrep, ugrep (Debian packages) and a release build.
set -euo pipefail
cd "$(dirname "$0")/.."
pattern=${1:-'fn [a-z_]+_parse\('}
cargo build --release -q -p wavesh
wavesh=$PWD/target/release/wavesh
registry=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/ | head -1)
tree=${BENCH_TREE:-${TMPDIR:-/tmp}/wavesh-grep-bench}
if [ ! -f "$tree/.ready" ]; then
    rm -rf "$tree"
    mkdir -p "$tree"
    cp -r "$registry" "$tree/src"
    cp -r "$registry" "$tree/node_modules"
    cp -r "$registry" "$tree/target"
    printf 'node_modules/\ntarget/\n' > "$tree/.gitignore"
    git -C "$tree" init -q
    touch "$tree/.ready"
fi
echo "tree: $tree ($(du -sh "$tree" | cut -f1), $(find "$tree" -type f | wc -l) files); pattern: $pattern"
cd "$tree"
# Every tool must succeed (exit 0: it found matches) before it is timed, and the
# gitignore-aware tools must agree on the matching lines.
out=${TMPDIR:-/tmp}/wavesh-grep-bench.out
check() {
    local name=$1; shift
    if ! "$@" >"$out"; then
        echo "$name failed (exit $?): $*" >&2
        exit 1
    fi
    [ -s "$out" ] || { echo "$name printed nothing: $*" >&2; exit 1; }
}
check "wavesh grep" "$wavesh" grep -rnE "$pattern" .
ours=$(sort "$out" | md5sum)
check ripgrep rg -n "$pattern" .
rg=$(sed 's|^\./||' "$out" | sort | md5sum)
check ugrep ugrep --ignore-files -rnE "$pattern" .
ug=$(sed 's|^\./||' "$out" | sort | md5sum)
check "GNU grep" grep -rnE "$pattern" .
if [ "$ours" != "$rg" ] || [ "$ours" != "$ug" ]; then
    echo "wavesh, ripgrep and ugrep disagree on the matching lines" >&2
    exit 1
fi
echo "wavesh, ripgrep and ugrep agree on the matching lines"
# Output goes to a file: GNU grep and ugrep stop at the first match when stdout is
# /dev/null, which would flatter them. Without --ignore-failure, a run that fails stops
# hyperfine.
hyperfine --warmup 2 --runs "${RUNS:-10}" \
    -n "wavesh grep" "$wavesh grep -rnE '$pattern' . >$out" \
    -n "GNU grep" "grep -rnE '$pattern' . >$out" \
    -n "ripgrep" "rg -n '$pattern' . >$out" \
    -n "ugrep" "ugrep --ignore-files -rnE '$pattern' . >$out" \
    ${BENCH_EXPORT:+--export-markdown "$BENCH_EXPORT"}
