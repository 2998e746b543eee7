"""Peak memory of `wavesh mcp` and its supervisor while a command writes 2 GiB.

Usage: python3 bench/memory.py target/release/wavesh [BYTES]
Speaks JSON-RPC over stdio directly (no client library), then reads VmHWM (peak resident
set) of the server and of its `__supervise` helper from /proc.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

wavesh = sys.argv[1]
size = int(sys.argv[2]) if len(sys.argv) > 2 else 2 * 1024 * 1024 * 1024


def peak_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def helper_of(pid):
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                argv = cmdline.read().split(b"\0")
        except OSError:
            continue
        if int(fields[1]) == pid and b"__supervise" in argv:
            return int(entry)
    return None


with tempfile.TemporaryDirectory() as work:
    server = subprocess.Popen(
        [wavesh, "mcp", "--no-login-env", "--cwd", work],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "TMPDIR": work},
    )

    def call(request_id, method, params):
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        server.stdin.write((json.dumps(message) + "\n").encode())
        server.stdin.flush()
        while True:
            reply = json.loads(server.stdout.readline())
            if reply.get("id") == request_id:
                return reply

    call(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "bench", "version": "0"}})
    call(2, "tools/call", {"name": "Bash", "arguments": {"command": "true"}})
    idle = peak_kib(server.pid)
    helper = helper_of(server.pid)
    started = time.perf_counter()
    reply = call(3, "tools/call", {"name": "Bash", "arguments": {
        "command": f"yes | head -c {size}", "timeout": 600000}})
    seconds = time.perf_counter() - started
    text = reply["result"]["content"][-1]["text"]
    assert text.startswith("<persisted-output>"), text[:200]
    print(f"output: {size} bytes in {seconds:.1f} s")
    print(f"wavesh mcp peak RSS: {peak_kib(server.pid) / 1024:.1f} MiB (after one `true`: {idle / 1024:.1f} MiB)")
    if helper:
        print(f"supervisor peak RSS: {peak_kib(helper) / 1024:.1f} MiB")
    path = text.split("Full output saved to: ", 1)[1].split("\n", 1)[0]
    os.remove(path)
    server.stdin.close()
    server.wait(timeout=10)
