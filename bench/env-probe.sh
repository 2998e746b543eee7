#!/usr/bin/env bash
# Login-shell probe time: empty rc and a 200-line rc, bash and zsh, median of N runs.
# Usage: bench/env-probe.sh [RUNS]   (default 20)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --release -q -p wavesh-env --example probe_bench -- "${1:-20}"
