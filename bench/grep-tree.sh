#!/usr/bin/env bash
# wavesh grep against GNU grep, ripgrep and ugrep on a real source tree with ignored
# build directories, in one hyperfine run.
#
#   bench/grep-tree.sh [PATTERN]
#
# The tree: the crate sources under the cargo registry as `src/`, and two ignored copies
# of them as `node_modules/` and `target/` (listed in .gitignore), so a search that honours
# .gitignore reads a third of the bytes. ripgrep gets --no-require-git (the tree is not a
# git repository) and ugrep --ignore-files, so all three gitignore-aware tools skip the same
# directories. Needs: hyperfine, ripgrep, ugrep (Debian packages) and a release build.
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
    touch "$tree/.ready"
fi
echo "tree: $tree ($(du -sh "$tree" | cut -f1), $(find "$tree" -type f | wc -l) files); pattern: $pattern"
cd "$tree"
# Same result check: the gitignore-aware tools agree on the matching lines.
ours=$("$wavesh" grep -rnE "$pattern" . | sort | md5sum)
rg=$(rg --no-require-git -n "$pattern" . | sed 's|^\./||' | sort | md5sum)
echo "wavesh and ripgrep agree: $([ "$ours" = "$rg" ] && echo yes || echo NO)"
# Output goes to a file: GNU grep and ugrep stop at the first match when stdout is
# /dev/null, which would flatter them.
out=${TMPDIR:-/tmp}/wavesh-grep-bench.out
hyperfine --warmup 2 --runs "${RUNS:-10}" --ignore-failure \
    -n "wavesh grep" "$wavesh grep -rnE '$pattern' . >$out" \
    -n "GNU grep" "grep -rnE '$pattern' . >$out" \
    -n "ripgrep" "rg --no-require-git -n '$pattern' . >$out" \
    -n "ugrep" "ugrep --ignore-files -rnE '$pattern' . >$out" \
    ${BENCH_EXPORT:+--export-markdown "$BENCH_EXPORT"}
