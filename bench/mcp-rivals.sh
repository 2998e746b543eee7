#!/usr/bin/env bash
# The MCP round trip of `true` beside mcp-server-commands (npm) and mcp-shell-server
# (PyPI), interleaved (bench/mcp-rivals.py). Installs the rivals under bench/out/rivals.
# Usage: bench/mcp-rivals.sh [RUNS]   (needs the .venv that scripts/test creates)
set -euo pipefail
cd "$(dirname "$0")/.."
rivals=bench/out/rivals
mkdir -p "$rivals"
[ -d "$rivals/node_modules/mcp-server-commands" ] ||
  (cd "$rivals" && npm install --silent --no-audit --no-fund mcp-server-commands@0.5.0 >/dev/null)
# Its own virtualenv: it pins an older mcp than the test client's.
[ -x "$rivals/venv/bin/mcp-shell-server" ] ||
  { python3 -m venv "$rivals/venv" && "$rivals/venv/bin/pip" install -q mcp-shell-server; }
cargo build --release -q -p wavesh
.venv/bin/python bench/mcp-rivals.py target/release/wavesh "$rivals" "${1:-300}"
