"""MCP round trip: tools/call Bash `true` through the official Python client against
spawning `bash -c true` from Python, interleaved, median of N (default 200).

    .venv/bin/python bench/mcp-roundtrip.py target/release/wavesh [N]
"""

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


async def main(binary, runs):
    workspace = tempfile.mkdtemp(prefix="wavesh-bench-")
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    params = StdioServerParameters(command=binary, args=["mcp", "--no-login-env", "--cwd", workspace], env=env)
    mcp_times, bash_times = [], []
    async with stdio_client(params, errlog=open(os.devnull, "w")) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for _ in range(10):
                await session.call_tool("Bash", {"command": "true"})
            for _ in range(runs):
                start = time.perf_counter()
                await session.call_tool("Bash", {"command": "true"})
                mcp_times.append((time.perf_counter() - start) * 1000)
                start = time.perf_counter()
                subprocess.run(["bash", "-c", "true"], stdin=subprocess.DEVNULL, check=True)
                bash_times.append((time.perf_counter() - start) * 1000)
    m, b = statistics.median(mcp_times), statistics.median(bash_times)
    print(f"runs: {runs} each, interleaved")
    print(f"bash -c true from Python      median {b:.3f} ms")
    print(f"MCP tools/call Bash 'true'    median {m:.3f} ms")
    print(f"added by the MCP round trip: {m - b:.3f} ms (ratio {m / b:.2f})")


asyncio.run(main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 200))
