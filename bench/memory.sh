#!/usr/bin/env bash
# Peak memory of `wavesh mcp` and its supervisor while a command writes 2 GiB (see
# bench/memory.py). Usage: bench/memory.sh [BYTES]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p wavesh
python3 bench/memory.py target/release/wavesh "${1:-2147483648}"
