#!/usr/bin/env bash
# The budget per stage of one Bash call over stdio (bench/call-stages.py), for `true`
# (read-only: runs at read-only), for a write (runs at workspace-write), and for `true`
# at --sandbox off, one after the other in one run.
# Usage: bench/call-stages.sh [RUNS]   (needs the .venv that scripts/test creates)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p wavesh
runs="${1:-200}"
.venv/bin/python bench/call-stages.py target/release/wavesh "$runs" true
echo
.venv/bin/python bench/call-stages.py target/release/wavesh "$runs" 'echo x > out.txt'
echo
.venv/bin/python bench/call-stages.py target/release/wavesh "$runs" true -- --sandbox off
