"""Where a Bash call's time goes: the budget per stage of tools/call `COMMAND` over
stdio, from wavesh's own stage events (`WAVESH_LOG=wavesh_stage=debug`, microsecond
timestamps on stderr) and the client's clock, median of N calls in a git workspace.

    .venv/bin/python bench/call-stages.py target/release/wavesh [N] [COMMAND] [-- MCP ARGS]

Stages (each from the previous event to its own):
  client → server     the client writes the request, wavesh reads the line
  JSON-RPC in         the line parsed and checked, the call dispatched to the tool
  decision            parse, classify, rules, git context: the call's one Prepared
  plan                cwd, output file, sandbox plan and its preparation, spawn request
  spawn + sandbox     the supervisor forks, enters the sandbox and execs the shell
  shell + command     the shell starts, runs the command, exits, and wavesh sees it
  collect             planted-file quarantine, leftover check, the outcome
  render              output read, masked and rendered for the model
  JSON-RPC out        the result serialized and written
  server → client     the client reads and parses the answer
A floor is measured beside it: `bash -c true` spawned from Python. Calls are 20 ms apart
(CALL_STAGES_PAUSE_MS), as an agent's are at least.
"""

import asyncio
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

PAUSE = int(os.environ.get("CALL_STAGES_PAUSE_MS", "20")) / 1000
ANSI = re.compile(r"\x1b\[[0-9;]*m")
EVENTS = ["received", "dispatched", "decided", "planned", "spawned", "exited", "collected",
          "rendered", "sent"]
NAMES = ["JSON-RPC in", "decision", "plan", "spawn + sandbox", "shell + command", "collect",
         "render", "JSON-RPC out"]


def git_workspace():
    workspace = tempfile.mkdtemp(prefix="wavesh-stages-")
    with open(os.path.join(workspace, "README.md"), "w") as f:
        f.write("bench\n")
    for args in (["init", "-q"], ["add", "README.md"],
                 ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=workspace, check=True)
    return workspace


def stamps(log_path):
    """(time, stage) for every stage event in the log, in order."""
    out = []
    with open(log_path) as f:
        for line in f:
            line = ANSI.sub("", line)
            if 'stage="' not in line:
                continue
            when = datetime.fromisoformat(line.split()[0].replace("Z", "+00:00")).timestamp()
            out.append((when, line.split('stage="', 1)[1].split('"', 1)[0]))
    return out


async def main(binary, runs, command, extra):
    workspace = git_workspace()
    log_path = os.path.join(workspace, "..", os.path.basename(workspace) + ".log")
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    env["WAVESH_LOG"] = "warn,wavesh_stage=debug"
    params = StdioServerParameters(
        command=binary, args=["mcp", "--no-login-env", "--cwd", workspace, *extra], env=env
    )
    sent_at, got_at = [], []
    with open(log_path, "w") as log:
        async with stdio_client(params, errlog=log) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                for _ in range(10):
                    await session.call_tool("Bash", {"command": command})
                await asyncio.sleep(0.2)
                skip = len(stamps(log_path))
                for _ in range(runs):
                    t0 = time.time()
                    result = await session.call_tool("Bash", {"command": command})
                    t1 = time.time()
                    if result.is_error:
                        raise SystemExit(f"the call failed: {result}")
                    sent_at.append(t0)
                    got_at.append(t1)
                    # An agent's calls are separated by the model's turn: the work a call
                    # leaves behind (the next read-only shell started ahead) finishes
                    # before the next, as it would. CALL_STAGES_PAUSE_MS=0: back to back.
                    await asyncio.sleep(PAUSE)
                await asyncio.sleep(0.2)
    events = stamps(log_path)[skip:]
    # One call: `received` then `dispatched` ... `rendered`, then the `sent` that follows.
    calls, i = [], 0
    while i < len(events):
        if events[i][1] == "received" and i + 1 < len(events) and events[i + 1][1] == "dispatched":
            call, j = {}, i
            while j < len(events) and not ("rendered" in call and events[j][1] == "sent"):
                call.setdefault(events[j][1], events[j][0])
                j += 1
            if j < len(events):
                call["sent"] = events[j][0]
                calls.append(call)
            i = j + 1
        else:
            i += 1
    if len(calls) != runs:
        raise SystemExit(f"matched {len(calls)} calls in the stage log, expected {runs}: {log_path}")
    rows = [("client → server", [c["received"] - s for c, s in zip(calls, sent_at)])]
    for name, a, b in zip(NAMES, EVENTS, EVENTS[1:]):
        rows.append((name, [c[b] - c[a] for c in calls]))
    rows.append(("server → client", [g - c["sent"] for c, g in zip(calls, got_at)]))
    total = [g - s for s, g in zip(sent_at, got_at)]
    floor = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(["bash", "-c", "true"], check=True)
        floor.append(time.perf_counter() - t0)
    ms = lambda xs: statistics.median(xs) * 1000
    print(f"{runs} calls of Bash {command!r} over stdio, git workspace, "
          f"args {' '.join(extra) or '(defaults)'}; medians in ms")
    print(f"| stage | median | p90 |\n|---|---|---|")
    for name, xs in rows:
        print(f"| {name} | {ms(xs):.3f} | {sorted(xs)[int(len(xs) * 0.9)] * 1000:.3f} |")
    print(f"| **round trip** | **{ms(total):.3f}** | {sorted(total)[int(len(total) * 0.9)] * 1000:.3f} |")
    print(f"| `bash -c true` from Python (floor) | {ms(floor):.3f} | |")
    os.unlink(log_path)
    subprocess.run(["rm", "-rf", workspace], check=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    extra = []
    if "--" in args:
        extra = args[args.index("--") + 1:]
        args = args[: args.index("--")]
    asyncio.run(main(args[0], int(args[1]) if len(args) > 1 else 200,
                     args[2] if len(args) > 2 else "true", extra))
