"""MCP round trip of `true` through wavesh mcp and the two fastest standalone MCP shell
servers, measured side by side, interleaved call by call, with the official Python
client (median and p90 of N calls each, default 300).

    .venv/bin/python bench/mcp-rivals.py target/release/wavesh RIVALS_DIR [N]

RIVALS_DIR holds node_modules/mcp-server-commands (npm, 0.5.0: Node's
child_process.exec) and venv/bin/mcp-shell-server (PyPI); bench/mcp-rivals.sh installs
both there. Each server runs `true` in a fresh shell per call, as wavesh does.
"""

import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


def servers(wavesh, rivals, workspace):
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    return [
        (
            "wavesh mcp",
            StdioServerParameters(
                command=wavesh, args=["mcp", "--no-login-env", "--cwd", workspace], env=env
            ),
            "Bash",
            {"command": "true"},
        ),
        (
            "mcp-server-commands 0.5.0",
            StdioServerParameters(
                command="node",
                args=[os.path.join(rivals, "node_modules/mcp-server-commands/build/index.js")],
                env=env,
                cwd=workspace,
            ),
            "run_command",
            {"command": "true", "workdir": workspace},
        ),
        (
            "mcp-shell-server",
            StdioServerParameters(
                command=os.path.join(rivals, "venv/bin/mcp-shell-server"),
                env={**env, "ALLOW_COMMANDS": "true"},
                cwd=workspace,
            ),
            "shell_execute",
            {"command": ["true"], "directory": workspace},
        ),
    ]


async def main(wavesh, rivals, runs):
    # A workspace as an agent's is: a git repository with a commit.
    workspace = tempfile.mkdtemp(prefix="wavesh-rivals-")
    with open(os.path.join(workspace, "README.md"), "w") as f:
        f.write("bench\n")
    for args in (["init", "-q"], ["add", "README.md"],
                 ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=workspace, check=True)
    async with contextlib.AsyncExitStack() as stack:
        sessions = []
        for name, params, tool, arguments in servers(wavesh, rivals, workspace):
            read, write = await stack.enter_async_context(
                stdio_client(params, errlog=open(os.devnull, "w"))
            )
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            for _ in range(10):
                result = await session.call_tool(tool, arguments)
                if result.is_error:
                    raise SystemExit(f"{name}: {tool} failed: {result}")
            sessions.append((name, session, tool, arguments, []))
        for _ in range(runs):
            for name, session, tool, arguments, times in sessions:
                start = time.perf_counter()
                result = await session.call_tool(tool, arguments)
                times.append((time.perf_counter() - start) * 1000)
                if result.is_error:
                    raise SystemExit(f"{name}: {tool} failed: {result}")
    base = statistics.median(sessions[0][4])
    print(f"runs: {runs} calls each, interleaved")
    for name, _, _, _, times in sessions:
        times.sort()
        median = statistics.median(times)
        p90 = times[int(len(times) * 0.9)]
        print(
            f"{name:28} median {median:7.3f} ms   p90 {p90:7.3f} ms   "
            f"{median / base:5.2f}x wavesh"
        )


asyncio.run(main(os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 300))
