"""MCP round trip: tools/call Bash `true` through the official Python client, over stdio
and over Streamable HTTP on loopback (`wavesh mcp --http`, with a bearer token), against
spawning `bash -c true` from Python; interleaved, median of N (default 200).

    .venv/bin/python bench/mcp-roundtrip.py target/release/wavesh [N]
"""

import asyncio
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import asynccontextmanager

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

TOKEN = "bench-token"


def environment():
    return {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}


@asynccontextmanager
async def over_stdio(binary, workspace):
    params = StdioServerParameters(command=binary, args=["mcp", "--no-login-env", "--cwd", workspace], env=environment())
    async with stdio_client(params, errlog=open(os.devnull, "w")) as (read, write):
        async with ClientSession(read, write) as session:
            yield session


@asynccontextmanager
async def over_http(binary, workspace):
    server = subprocess.Popen(
        [binary, "mcp", "--no-login-env", "--cwd", workspace, "--http", "127.0.0.1:0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**environment(), "WAVESH_MCP_TOKEN": TOKEN},
    )
    url = None
    while url is None:
        line = server.stderr.readline().decode()
        if not line:
            raise SystemExit("wavesh mcp --http did not start")
        found = re.search(r"(http://127\.0\.0\.1:\d+/mcp)", line)
        url = found and found.group(1)
    try:
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
            async with streamable_http_client(url, http_client=http) as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    yield session
    finally:
        server.terminate()
        server.wait()


def git_workspace(prefix):
    """A workspace as an agent's is: a git repository with a commit."""
    workspace = tempfile.mkdtemp(prefix=prefix)
    with open(os.path.join(workspace, "README.md"), "w") as f:
        f.write("bench\n")
    for args in (["init", "-q"], ["add", "README.md"],
                 ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=workspace, check=True)
    return workspace


def succeeded(result):
    """A call that failed would be timed as a fast one: stop instead."""
    if result.is_error:
        raise SystemExit(f"the Bash call failed: {result}")


async def measure(connect, binary, runs):
    workspace = git_workspace("wavesh-bench-")
    mcp_times, bash_times = [], []
    async with connect(binary, workspace) as session:
        await session.initialize()
        for _ in range(10):
            succeeded(await session.call_tool("Bash", {"command": "true"}))
        for _ in range(runs):
            start = time.perf_counter()
            result = await session.call_tool("Bash", {"command": "true"})
            mcp_times.append((time.perf_counter() - start) * 1000)
            succeeded(result)
            start = time.perf_counter()
            subprocess.run(["bash", "-c", "true"], stdin=subprocess.DEVNULL, check=True)
            bash_times.append((time.perf_counter() - start) * 1000)
    return statistics.median(mcp_times), statistics.median(bash_times)


async def main(binary, runs):
    print(f"runs: {runs} each, interleaved")
    for name, connect in (("stdio", over_stdio), ("Streamable HTTP", over_http)):
        m, b = await measure(connect, binary, runs)
        print(f"{name}: bash -c true from Python median {b:.3f} ms; MCP tools/call Bash 'true' median {m:.3f} ms")
        print(f"{name}: added by the MCP round trip: {m - b:.3f} ms (ratio {m / b:.2f})")


asyncio.run(main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 200))
