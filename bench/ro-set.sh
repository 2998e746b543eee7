#!/usr/bin/env bash
# How many of a set of ordinary read-only commands an agent runs (bench/ro-set.txt, one
# command per line, written for this and not taken from the classifier's corpus) the
# classifier approves, in a small git workspace made for the run. Prints each refused
# command with its reason, then the figure.
# Usage: bench/ro-set.sh [WAVESH]   (default: a release build)
set -euo pipefail
cd "$(dirname "$0")/.."
wavesh="${1:-}"
if [ -z "$wavesh" ]; then
  cargo build --release -q -p wavesh
  wavesh=target/release/wavesh
fi
ws=$(mktemp -d "${TMPDIR:-/tmp}/wavesh-ro-set.XXXXXX")
trap 'rm -rf "$ws"' EXIT
(
  cd "$ws"
  git init -q
  mkdir -p src tests docs
  echo 'fn main() {}' >src/main.rs
  echo '# Doc' >README.md
  printf '[package]\nname="x"\nversion="0.1.0"\n' >Cargo.toml
  echo '{"name":"x","version":"1.0.0"}' >package.json
  echo 'print(1)' >tests/test_a.py
  printf 'a\nb\na\n' >data.txt
  git add -A
  git -c user.name=b -c user.email=b@b commit -qm init
)
python3 - "$wavesh" "$ws" bench/ro-set.txt <<'PY'
import json, subprocess, sys
wavesh, ws, path = sys.argv[1:]
commands = [line.rstrip("\n") for line in open(path) if line.strip()]
lines = "".join(json.dumps(c) + "\n" for c in commands)
out = subprocess.run([wavesh, "check", "--jsonl", "--cwd", ws], input=lines,
                     capture_output=True, text=True, check=False).stdout.splitlines()
assert len(out) == len(commands), (len(out), len(commands))
approved = 0
for command, verdict in zip(commands, map(json.loads, out)):
    if verdict.get("read_only"):
        approved += 1
    else:
        print(f"asks: {command}  ({'; '.join(verdict.get('reasons', []))[:120]})")
print(f"approved {approved} of {len(commands)} ({100 * approved / len(commands):.1f} %)")
PY
