#!/usr/bin/env bash
# Read-only classification speed over the corpus (see bench/README.md): per-command
# median and p99, beside tree-sitter-bash parsing alone, and a 10000-character command.
# Usage: bench/classify.sh [RUNS]   (default 31 runs per command)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --release -q -p wavesh-policy --example classify_stats -- "${1:-31}"
