#!/usr/bin/env bash
# Drives `wavesh mcp` with the MCP Inspector in CLI mode (npm @modelcontextprotocol/inspector,
# pinned): lists the tools and calls Bash, and checks both answers.
# Usage: scripts/mcp-inspector.sh [path/to/wavesh]   (default: builds target/release/wavesh)
set -euo pipefail
cd "$(dirname "$0")/.."
wavesh="${1:+$(realpath "$1")}"
if [ -z "$wavesh" ]; then
  cargo build --release -q -p wavesh
  wavesh="$PWD/target/release/wavesh"
fi
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
(cd "$dir" && echo '{"private": true}' > package.json \
  && npm install --no-audit --no-fund --silent @modelcontextprotocol/inspector@2.12.0)
inspector="$dir/node_modules/.bin/mcp-inspector"
export XDG_STATE_HOME="$dir/state"

tools="$("$inspector" --cli "$wavesh" mcp --no-login-env --cwd "$dir" --method tools/list)"
for name in Bash TaskOutput TaskStop TaskList; do
  grep -q "\"name\": \"$name\"" <<<"$tools" || { echo "inspector: tool $name not listed" >&2; exit 1; }
done
call="$("$inspector" --cli "$wavesh" mcp --no-login-env --cwd "$dir" \
  --method tools/call --tool-name Bash --tool-arg 'command=echo hello from the inspector')"
grep -q '"text": "hello from the inspector"' <<<"$call" || { echo "inspector: unexpected Bash result: $call" >&2; exit 1; }
echo "mcp inspector: tools listed and Bash called"
