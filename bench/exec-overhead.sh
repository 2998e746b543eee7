#!/usr/bin/env bash
# Foreground overhead of wavesh, measured side by side in one run (see bench/README.md).
#   1. Library: Session::bash("true"), direct and through the per-session supervisor,
#      against spawning `bash -c true` from Rust; then one column per sandbox level
#      (read-only, workspace-write) through the supervisor, each beside the unsandboxed
#      run (target: at most 0.5 ms for the sandbox itself).
#   2. Whole process: `wavesh run -- true` against `bash -c true`.
# Usage: bench/exec-overhead.sh [RUNS]   (default 200, interleaved)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-200}"
cargo build --release -q -p wavesh
cargo build --release -q -p wavesh-tool --example exec_overhead
echo "== library =="
./target/release/examples/exec_overhead "$runs" ./target/release/wavesh
echo "== whole process =="
python3 - "$runs" ./target/release/wavesh <<'PY'
import statistics, subprocess, sys, time
runs, wavesh = int(sys.argv[1]), sys.argv[2]
cases = {"bash -c true": ["bash", "-c", "true"], "wavesh run -- true": [wavesh, "run", "--", "true"]}
samples = {name: [] for name in cases}
for _ in range(10):
    for argv in cases.values():
        subprocess.run(argv, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL, check=True)
for _ in range(runs):
    for name, argv in cases.items():
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL, check=True)
        samples[name].append((time.perf_counter() - start) * 1000)
for name, values in samples.items():
    values.sort()
    print(f"{name:20} median {statistics.median(values):.3f} ms, p90 {values[int(len(values) * 0.9)]:.3f} ms")
a, b = (statistics.median(samples[n]) for n in cases)
print(f"added per process: {b - a:.3f} ms (ratio {b / a:.2f})")
PY
