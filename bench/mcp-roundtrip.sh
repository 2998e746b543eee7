#!/usr/bin/env bash
# MCP round trip of tools/call Bash `true`, over stdio and over Streamable HTTP, against
# bash -c true (see bench/mcp-roundtrip.py).
# Usage: bench/mcp-roundtrip.sh [RUNS]   (needs the .venv that .ci/run creates)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p wavesh
.venv/bin/python bench/mcp-roundtrip.py target/release/wavesh "${1:-200}"
