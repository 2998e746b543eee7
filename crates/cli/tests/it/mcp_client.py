"""End-to-end checks of `wavesh mcp` through the official Python MCP client.

Run by crates/cli/tests/it/mcp.rs as: python mcp_client.py WAVESH_BINARY SCENARIO
Each scenario prints what it saw and exits non-zero with a message on the first failure.
"""

import asyncio
import glob
import os
import shutil
import sys
import tempfile
import time
import uuid

from mcp_hosts import hosts_scenario
from mcp_raw import without_mode_note  # the same note, stripped the same way
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


def fail(message):
    print(f"FAIL: {message}", flush=True)
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


def text_of(result):
    return without_mode_note("\n".join(block.text for block in result.content if getattr(block, "type", "") == "text"))


def live_pids_with(marker):
    """Pids of non-zombie processes whose command line holds `marker`."""
    pids = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmdline = f.read()
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        state = stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3]
        if marker.encode() in cmdline and state not in (b"Z", b"X"):
            pids.append(int(name))
    return pids


async def wait_for(predicate, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        await asyncio.sleep(0.02)
    return predicate()


def server(binary, workspace, *extra):
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR", "WAVESH_LOG")}
    # Session records go with the test workspace, not into the real home.
    env["XDG_STATE_HOME"] = os.path.join(workspace, ".state")
    return StdioServerParameters(command=binary, args=["mcp", "--cwd", workspace, *extra], env=env)


async def cwd_scenario(binary):
    workspace = os.path.realpath(tempfile.mkdtemp(prefix="wavesh-mcp-ws-"))
    extra = os.path.realpath(tempfile.mkdtemp(prefix="wavesh-mcp-extra-"))
    os.mkdir(os.path.join(workspace, "sub"))
    os.mkdir(os.path.join(workspace, "doomed"))
    try:
        async with stdio_client(server(binary, workspace, "--add-dir", extra)) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = await session.list_tools()
                names = [tool.name for tool in tools.tools]
                check(names == ["Bash", "TaskOutput", "TaskInput", "TaskStop", "TaskList"], f"tools: {names}")
                description = tools.tools[0].description
                check("600000" in description, "description names the maximum timeout")

                async def bash(command, **kwargs):
                    result = await session.call_tool("Bash", {"command": command, **kwargs})
                    return result, text_of(result)

                # CWD-2: cd inside the workspace persists, with the message.
                result, text = await bash("cd sub")
                sub = os.path.join(workspace, "sub")
                check(f"Shell working directory changed to {sub}" in text, f"cd sub: {text!r}")
                result, text = await bash("pwd")
                check(text.strip() == sub, f"pwd after cd sub: {text!r}")

                # CWD-3: cd outside resets to the workspace with the message at the end.
                result, text = await bash("cd /")
                check(text.endswith(f"Shell cwd was reset to {workspace}"), f"cd /: {text!r}")
                result, text = await bash("pwd")
                check(text.strip() == workspace, f"pwd after cd /: {text!r}")

                # CWD-2: an --add-dir directory persists.
                result, text = await bash(f"cd {extra}")
                check(f"Shell working directory changed to {extra}" in text, f"cd extra: {text!r}")
                result, text = await bash("pwd")
                check(text.strip() == extra, f"pwd in extra: {text!r}")

                # CWD-6: a deleted current directory does not fail the next call.
                doomed = os.path.join(workspace, "doomed")
                await bash(f"cd {doomed}")
                result, text = await bash(f"rmdir {doomed}")
                result, text = await bash("echo still-here")
                check(not result.is_error, f"call after deleting cwd failed: {text!r}")
                check("still-here" in text, f"echo after deleting cwd: {text!r}")
                result, text = await bash("pwd")
                check(text.strip() == workspace, f"pwd after deleting cwd: {text!r}")

                # EXEC-1 / OUT-3 through MCP.
                result, text = await bash("echo out; echo err >&2; exit 3")
                check(result.is_error and text.startswith("Exit code 3"), f"exit 3: {text!r}")
                structured = result.structured_content or {}
                check(structured.get("exit_code") == 3, f"structured: {structured}")

                # SCHEMA-1 / SCHEMA-4 errors are tool errors naming the field.
                result = await session.call_tool("Bash", {"command": "true", "bogus": 1})
                check(result.is_error and "bogus" in text_of(result), f"unknown key: {text_of(result)!r}")
                result = await session.call_tool("Bash", {"command": "true", "timeout": -1})
                check(result.is_error and "600000" not in text_of(result), f"timeout -1: {text_of(result)!r}")

                # OUT-4: a data URL on stdout arrives as image content.
                pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
                result = await session.call_tool("Bash", {"command": f"printf 'data:image/png;base64,%s' {pixel}"})
                kinds = [getattr(block, "type", "") for block in result.content]
                check(kinds == ["image"], f"image content: {kinds}")
                check(result.content[0].mime_type == "image/png", result.content[0].mime_type)

                # EXEC-2: the command text is not in any process's argv.
                marker = "zq" + uuid.uuid4().hex
                result, text = await bash(f"pgrep -f {marker} || echo none")
                check(text.strip() == "none", f"pgrep saw the command: {text!r}")
        print("cwd scenario: ok")
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
        shutil.rmtree(extra, ignore_errors=True)


async def session_end_scenario(binary):
    """KILL-1/2: closing the client ends the whole tree of a running command in 1.5 s."""
    workspace = os.path.realpath(tempfile.mkdtemp(prefix="wavesh-mcp-ws-"))
    # Digits only: the marker is the fraction of each sleep's duration.
    marker = str(uuid.uuid4().int % 10**12).zfill(12)
    # A child, a grandchild that ignores SIGTERM, and a leftover of an earlier call.
    tree = (
        f"sleep 301.{marker} & "
        f"bash -c 'trap \"\" TERM; sleep 302.{marker}; echo done' & "
        f"sleep 303.{marker}"
    )
    pattern = f".{marker}"
    try:
        async with stdio_client(server(binary, workspace)) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool("Bash", {"command": f"sleep 304.{marker} & echo started"})
                check("started" in text_of(result), f"leftover start: {text_of(result)!r}")
                call = asyncio.create_task(session.call_tool("Bash", {"command": tree}))
                appeared = await wait_for(lambda: len(live_pids_with(pattern)) >= 4, 10)
                check(appeared, f"tree did not start: {live_pids_with(pattern)}")
                closed_at = time.monotonic()
                call.cancel()
        gone = await wait_for(lambda: not live_pids_with(pattern), 1.5)
        elapsed = time.monotonic() - closed_at
        check(gone, f"processes left {elapsed:.2f}s after close: {live_pids_with(pattern)}")
        print(f"session end scenario: ok ({elapsed:.2f}s)")
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


async def tasks_scenario(binary):
    """BG-7, TASK-1/4 through MCP: notifications in the next result, TaskOutput, TaskStop,
    task resources and their end announced, no process left after close."""
    workspace = os.path.realpath(tempfile.mkdtemp(prefix="wavesh-mcp-ws-"))
    marker = str(uuid.uuid4().int % 10**12).zfill(12)
    logs, updates = [], []

    async def on_log(params):
        logs.append(params)

    async def on_message(message):
        root = getattr(message, "root", message)
        method = getattr(root, "method", "")
        if method == "notifications/resources/updated":
            updates.append(root.params.uri)

    try:
        async with stdio_client(server(binary, workspace)) as (read, write):
            async with ClientSession(read, write, logging_callback=on_log, message_handler=on_message) as session:
                await session.initialize()
                listed = {tool.name: tool for tool in (await session.list_tools()).tools}
                names = sorted(listed)
                check(names == ["Bash", "TaskInput", "TaskList", "TaskOutput", "TaskStop"], f"tools: {names}")
                # MCP-4: no Read tool here, so TaskOutput is first-class and names none.
                check("DEPRECATED" not in listed["TaskOutput"].description, listed["TaskOutput"].description)
                check("Read" not in listed["TaskOutput"].description, listed["TaskOutput"].description)

                started = await session.call_tool(
                    "Bash", {"command": "sleep 0.3; echo bgdone", "run_in_background": True, "description": "Short job"}
                )
                task = (started.structured_content or {}).get("backgroundTaskId")
                check(task, f"no task id: {text_of(started)!r}")
                check(f"Command running in background with ID: {task}" in text_of(started), text_of(started))
                # MCP-3: only this task's end is subscribed to.
                await session.subscribe_resource(f"wavesh://tasks/{task}")

                # A task that keeps running is a resource while it lives.
                long_started = await session.call_tool(
                    "Bash", {"command": f"sleep 300.{marker}", "run_in_background": "true"}
                )
                long_task = long_started.structured_content["backgroundTaskId"]
                uris = [str(r.uri) for r in (await session.list_resources()).resources]
                check(f"wavesh://tasks/{long_task}" in uris, f"resources: {uris}")
                contents = await session.read_resource(f"wavesh://tasks/{long_task}")
                check('"status": "running"' in contents.contents[0].text, contents.contents[0].text)

                await asyncio.sleep(1.0)
                result = await session.call_tool("Bash", {"command": "echo next"})
                blocks = [without_mode_note(block.text) for block in result.content]
                check(len(blocks) == 2, f"blocks: {blocks}")
                check(blocks[0].startswith("<task-notification>") and f"<task-id>{task}</task-id>" in blocks[0], blocks[0])
                check("Background command \"Short job\" completed (exit code 0)." in blocks[0], blocks[0])
                check(blocks[1] == "next", blocks[1])

                output = await session.call_tool("TaskOutput", {"task_id": task})
                check("<status>completed</status>" in text_of(output) and "bgdone" in text_of(output), text_of(output))
                check(not output.is_error, text_of(output))
                # MCP-4: paging through the output, and the task list.
                page = await session.call_tool("TaskOutput", {"task_id": task, "offset": 0, "limit": 2})
                check("<output_bytes>0-2 of 7</output_bytes>" in text_of(page) and "<next_offset>2</next_offset>" in text_of(page), text_of(page))
                listing = await session.call_tool("TaskList", {})
                check(f"{task} completed, exit code 0" in text_of(listing) and f"{long_task} running" in text_of(listing), text_of(listing))

                stopped = await session.call_tool("KillShell", {"shell_id": long_task})
                check(text_of(stopped).startswith(f"Stopped task {long_task}"), text_of(stopped))
                gone = await wait_for(lambda: not live_pids_with(f"300.{marker}"), 1.5)
                check(gone, "stopped task left processes")
                # The model stopped it and was told so: no notification of it follows.
                result = await session.call_tool("Bash", {"command": "true"})
                check(all(long_task not in block.text for block in result.content), [b.text for b in result.content])

                # A task that ends is told once: not in front of its own TaskOutput, and not
                # on an error result (it waits for the next good one).
                quick = (await session.call_tool("Bash", {"command": "echo quick", "run_in_background": True})).structured_content["backgroundTaskId"]
                await asyncio.sleep(0.5)
                own = await session.call_tool("TaskOutput", {"task_id": quick})
                check(len(own.content) == 1 and "<task-notification>" not in text_of(own) and "quick" in text_of(own), [b.text for b in own.content])
                later = (await session.call_tool("Bash", {"command": "echo later", "run_in_background": True})).structured_content["backgroundTaskId"]
                await asyncio.sleep(0.5)
                bad = await session.call_tool("TaskOutput", {"task_id": "bnope"})
                check(bad.is_error and len(bad.content) == 1 and "<task-notification>" not in text_of(bad), [b.text for b in bad.content])
                result = await session.call_tool("Bash", {"command": "true"})
                check(f"<task-id>{later}</task-id>" in result.content[0].text, [b.text for b in result.content])

                unknown = await session.call_tool("TaskStop", {"task_id": "bnope"})
                check(unknown.is_error and "bnope" in text_of(unknown), text_of(unknown))

                # The ends were announced: a logging message for each, resources/updated
                # only for the one subscribed to (MCP-3).
                announced = await wait_for(lambda: len(updates) >= 1 and len(logs) >= 2, 3)
                check(announced, f"updates: {updates}, logs: {logs}")
                check(updates == [f"wavesh://tasks/{task}"], f"updates: {updates}")

                # Closing the client ends a task that still runs.
                await session.call_tool("Bash", {"command": f"sleep 301.{marker}", "run_in_background": True})
                check(await wait_for(lambda: live_pids_with(f"301.{marker}"), 5), "last task did not start")
        gone = await wait_for(lambda: not live_pids_with(f".{marker}"), 1.5)
        check(gone, f"processes left after close: {live_pids_with(marker)}")
        print("tasks scenario: ok")
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


async def permissions_scenario(binary):
    """RULE-5 through MCP: wavesh approves (rules, read-only, deny, elicitation), and the
    host mode still refuses what deny rules forbid."""
    import json
    import mcp.types as types

    workspace = os.path.realpath(tempfile.mkdtemp(prefix="wavesh-mcp-ws-"))
    os.mkdir(os.path.join(workspace, ".claude"))
    with open(os.path.join(workspace, ".claude", "settings.json"), "w") as f:
        json.dump({"permissions": {"allow": ["Bash(echo allowed:*)"], "deny": ["Bash(rm:*)"]}}, f)
    asked = []

    schemas = []

    async def elicit(context, params):
        asked.append(params.message)
        schemas.append(params.requested_schema)
        first_line = params.message.split("\n\n")[1]
        if "dismissed" in first_line:
            return types.ElicitResult(action="cancel")
        always = "always" in first_line
        return types.ElicitResult(action="accept", content={"allow": "accepted" in first_line or always, "always": always})

    async def bash(session, command):
        result = await session.call_tool("Bash", {"command": command})
        return result, text_of(result)

    try:
        async with stdio_client(server(binary, workspace, "--permission-mode", "wavesh")) as (read, write):
            async with ClientSession(read, write, elicitation_callback=elicit) as session:
                await session.initialize()
                result, text = await bash(session, "ls -la")
                check(not result.is_error, f"read-only refused: {text!r}")
                result, text = await bash(session, "echo allowed here")
                check(text == "allowed here", f"rule-allowed: {text!r}")
                result, text = await bash(session, "timeout 5 rm -rf x")
                check(result.is_error and "Permission denied" in text and "Bash(rm:*)" in text, f"deny: {text!r}")
                result, text = await bash(session, "touch accepted.txt")
                check(not result.is_error and os.path.exists(os.path.join(workspace, "accepted.txt")), f"accepted: {text!r}")
                check(any("touch accepted.txt" in m for m in asked), f"asked: {asked}")
                result, text = await bash(session, "touch declined.txt")
                check(result.is_error and "declined" in text, f"declined: {text!r}")
                check(not os.path.exists(os.path.join(workspace, "declined.txt")), "declined command ran")
                # A prompt closed without an answer is not a "no", and reads differently.
                result, text = await bash(session, "touch dismissed.txt")
                check(result.is_error and "dismissed" in text and "declined" not in text, f"dismissed: {text!r}")
                check(not os.path.exists(os.path.join(workspace, "dismissed.txt")), "dismissed command ran")
                # dangerouslyDisableSandbox: the prompt says the sandbox is off, offers no
                # "always", and a read-only command is not asked about as "read-only".
                result = await session.call_tool("Bash", {"command": "ls always-unsandboxed", "dangerouslyDisableSandbox": True})
                text = text_of(result)
                check("WITHOUT the sandbox" in asked[-1] and "read-only" not in asked[-1], f"unsandboxed prompt: {asked[-1]!r}")
                check("always" not in json.dumps(schemas[-1]), f"unsandboxed prompt offers always: {schemas[-1]}")
                # "Always allow": the rule is written to the local settings and applies at once.
                result, text = await bash(session, "touch always1.txt")
                check(not result.is_error, f"always: {text!r}")
                local = os.path.join(workspace, ".claude", "settings.local.json")
                with open(local) as f:
                    check("Bash(touch:*)" in json.load(f)["permissions"]["allow"], "rule written")
                count = len(asked)
                result, text = await bash(session, "touch again.txt")
                check(not result.is_error and len(asked) == count, f"not asked again: {text!r}")
                os.remove(local)

        async with stdio_client(server(binary, workspace, "--permission-mode", "wavesh")) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                result, text = await bash(session, "touch other.txt")
                check(result.is_error and "Bash(touch:*)" in text and "settings.local.json" in text, f"no elicitation: {text!r}")
                check("Ask the user" in text, f"the refusal tells the model to ask, not to edit settings: {text!r}")
                result = await session.call_tool("Bash", {"command": "ls", "dangerouslyDisableSandbox": True})
                text = text_of(result)
                check(result.is_error and "without the sandbox" in text and "(read-only)" not in text, f"unsandboxed refusal: {text!r}")

        async with stdio_client(server(binary, workspace)) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                result, text = await bash(session, "rm -rf nothing")
                check(result.is_error and "Permission denied" in text, f"host mode deny: {text!r}")
                result, text = await bash(session, "touch host.txt")
                check(not result.is_error, f"host mode runs what the client approved: {text!r}")
        print("permissions scenario: ok")
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


async def cancel_progress_scenario(binary):
    """EXEC-5 and EXEC-6 through MCP: progress notifications for a 4 s command, and a
    cancelled call ends its tree (a grandchild ignoring SIGTERM included) within 1.5 s
    while the connection stays usable."""
    workspace = os.path.realpath(tempfile.mkdtemp(prefix="wavesh-mcp-ws-"))
    marker = str(uuid.uuid4().int % 10**12).zfill(12)
    progress = []

    async def on_progress(value, total, message):
        progress.append((value, message))

    try:
        async with stdio_client(server(binary, workspace)) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool(
                    "Bash", {"command": "for i in 1 2 3 4; do echo tick; sleep 1; done"}, progress_callback=on_progress
                )
                check(text_of(result) == "tick\ntick\ntick\ntick", text_of(result))
                check(len(progress) >= 1, f"progress: {progress}")
                check(all("bytes written" in (m or "") for _, m in progress), f"progress: {progress}")
                check(progress[0][0] >= 2, f"first progress after 2 s: {progress}")

                tree = f"bash -c 'trap \"\" TERM; sleep 100.{marker}; echo x' & sleep 100.{marker}"
                call = asyncio.create_task(session.call_tool("Bash", {"command": tree}))
                check(await wait_for(lambda: len(live_pids_with(f".{marker}")) >= 3, 10), "tree did not start")
                cancelled_at = time.monotonic()
                call.cancel()
                gone = await wait_for(lambda: not live_pids_with(f".{marker}"), 1.5)
                check(gone, f"left {time.monotonic() - cancelled_at:.2f}s after cancel: {live_pids_with(marker)}")
                result = await session.call_tool("Bash", {"command": "echo still-serving"})
                check(text_of(result) == "still-serving", text_of(result))
        print("cancel and progress scenario: ok")
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


async def client_suite_scenario(binary):
    """The high-level client under both protocol paths (`legacy`: the initialize handshake,
    2025-11-25; `auto`: the client's default, 2026-07-28): tools, schemas and annotations,
    timeout to background, 20 concurrent calls, and permission mode `wavesh` with a client
    that accepts, one that declines and one that cannot ask."""
    import json
    import mcp.types as types
    from mcp.client.client import Client

    workspace = os.path.realpath(tempfile.mkdtemp(prefix="wavesh-mcp-ws-"))

    def params(*extra):
        return server(binary, workspace, *extra)

    async def accept(context, request):
        return types.ElicitResult(action="accept", content={"allow": True})

    async def decline(context, request):
        return types.ElicitResult(action="decline")

    try:
        for mode in ("legacy", "auto"):
            async with Client(params(), mode=mode) as client:
                tools = {tool.name: tool for tool in (await client.list_tools()).tools}
                check(sorted(tools) == ["Bash", "TaskInput", "TaskList", "TaskOutput", "TaskStop"], f"{mode}: {sorted(tools)}")
                schema = tools["Bash"].input_schema
                check(schema.get("required") == ["command"] and schema.get("additionalProperties") is False, f"{mode}: {schema}")
                check(tools["Bash"].annotations.destructive_hint is True, f"{mode}: {tools['Bash'].annotations}")
                check(tools["TaskOutput"].annotations.read_only_hint is True, f"{mode}: {tools['TaskOutput'].annotations}")

                result = await client.call_tool("Bash", {"command": "echo a; sleep 2; echo b", "timeout": 500})
                structured = result.structured_content or {}
                check(structured.get("assistantAutoBackgrounded") is True, f"{mode}: {structured}")
                output = await client.call_tool("TaskOutput", {"task_id": structured["backgroundTaskId"]})
                check("a\nb" in text_of(output), f"{mode}: {text_of(output)!r}")

                results = await asyncio.gather(*(client.call_tool("Bash", {"command": f"echo {n}"}) for n in range(20)))
                texts = [text_of(r).strip().splitlines()[-1] for r in results]
                check(texts == [str(n) for n in range(20)], f"{mode}: concurrent results {texts}")

            for callback, expected in ((accept, "ran"), (decline, "declined"), (None, "cannot ask")):
                marker = f"{mode}-{expected.replace(' ', '-')}.txt"
                async with Client(params("--permission-mode", "wavesh"), mode=mode, elicitation_callback=callback) as client:
                    result = await client.call_tool("Bash", {"command": f"touch {marker} && echo ran"})
                    text = text_of(result)
                    check(expected in text, f"{mode} / {expected}: {text!r}")
                    exists = os.path.exists(os.path.join(workspace, marker))
                    check(exists == (expected == "ran"), f"{mode} / {expected}: file exists {exists}")
        print("client suite scenario: ok")
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


async def http_scenario(binary):
    """MCP-1 through the Python client's Streamable HTTP transport: with the bearer token,
    server-to-client traffic comes through SSE — progress, logging, resources/updated to
    a subscriber, an elicitation without stray _meta — and ending the session (DELETE)
    ends its processes."""
    import re
    import subprocess

    import mcp.types as types
    from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

    workspace = os.path.realpath(tempfile.mkdtemp(prefix="wavesh-mcp-ws-"))
    marker = str(uuid.uuid4().int % 10**12).zfill(12)
    env = server(binary, workspace).env
    env["WAVESH_MCP_TOKEN"] = "py-token"
    # The sessions' private directories in a directory of this test's own, to see that
    # none is left once the server exits.
    private = os.path.realpath(tempfile.mkdtemp(prefix="wavesh-mcp-private-"))
    env["TMPDIR"] = private
    proc = subprocess.Popen(
        [binary, "mcp", "--cwd", workspace, "--http", "127.0.0.1:0", "--permission-mode", "wavesh"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
    )
    url = None
    while url is None:
        line = proc.stderr.readline().decode()
        check(line, "the server did not start")
        found = re.search(r"(http://127\.0\.0\.1:\d+/mcp)", line)
        url = found and found.group(1)
    logs, updates, asked, progress = [], [], [], []

    async def on_log(params):
        logs.append(params)

    async def on_message(message):
        root = getattr(message, "root", message)
        if getattr(root, "method", "") == "notifications/resources/updated":
            updates.append(str(root.params.uri))

    async def elicit(context, params):
        asked.append(params)
        return types.ElicitResult(action="accept", content={"allow": True})

    async def on_progress(value, total, message):
        progress.append(value)

    try:
        async with create_mcp_http_client(headers={"Authorization": "Bearer py-token"}) as http:
            async with streamable_http_client(url, http_client=http) as streams:
                read, write = streams[0], streams[1]
                async with ClientSession(read, write, logging_callback=on_log, message_handler=on_message, elicitation_callback=elicit) as session:
                    init = await session.initialize()
                    check(init.capabilities.resources.subscribe is True, f"capabilities: {init.capabilities}")
                    started = await session.call_tool("Bash", {"command": "sleep 0.3; echo done", "run_in_background": True})
                    task = started.structured_content["backgroundTaskId"]
                    await session.subscribe_resource(f"wavesh://tasks/{task}")
                    check(await wait_for(lambda: updates and logs, 5), f"updates {updates}, logs {logs}")
                    check(updates == [f"wavesh://tasks/{task}"], f"updates: {updates}")
                    result = await session.call_tool("Bash", {"command": "sleep 2.5; echo slow"}, progress_callback=on_progress)
                    check(text_of(result).endswith("slow") and progress and progress[0] >= 2, f"progress {progress}: {text_of(result)!r}")
                    result = await session.call_tool("Bash", {"command": "touch over-http.txt"})
                    check(any("touch over-http.txt" in params.message for params in asked), f"asked: {asked}")
                    check(all(params.meta is None for params in asked), f"stray _meta: {asked}")
                    check(os.path.exists(os.path.join(workspace, "over-http.txt")), f"approved: {text_of(result)!r}")
                    await session.call_tool("Bash", {"command": f"sleep 300.{marker}", "run_in_background": True})
                    check(await wait_for(lambda: live_pids_with(f"300.{marker}"), 5), "task did not start")
        # Leaving the client sends DELETE: the session's processes end, the server stays.
        gone = await wait_for(lambda: not live_pids_with(f".{marker}"), 2.0)
        check(gone, f"processes left after DELETE: {live_pids_with(marker)}")
        check(proc.poll() is None, "the server stopped with the session")
        # SIGTERM right after the DELETE: the deleted session's end is waited for, and
        # its directory goes with its files (MCP-1, SBX-7).
        proc.terminate()
        proc.wait(10)
        left = [
            os.path.join(base, name)
            for base in glob.glob(os.path.join(private, "wavesh-*"))
            for name in os.listdir(base)
        ]
        check(not left, f"session files left after the server exited: {left}")
        print("http scenario: ok")
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(10)
        shutil.rmtree(workspace, ignore_errors=True)
        shutil.rmtree(private, ignore_errors=True)


async def client_budget_scenario(binary):
    """MCP-5: with `--client-timeout 3` the answer of a longer call comes within the budget
    with its task id, whatever the first word (sleep, a loop, `sleep` after a prefix
    assignment); progress notifications flow meanwhile; TaskOutput later gives the end.
    A command that ends within the budget answers as usual, and an explicit timeout below
    the budget still rules (a sleep is then stopped, EXEC-4)."""
    workspace = os.path.realpath(tempfile.mkdtemp(prefix="wavesh-mcp-ws-"))
    progress = []

    async def on_progress(value, total, message):
        progress.append((value, message))

    try:
        async with stdio_client(server(binary, workspace, "--client-timeout", "3")) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                bash = next(t for t in (await session.list_tools()).tools if t.name == "Bash")
                check("The answer comes within 3s" in bash.description, bash.description)
                cases = [
                    ("echo started; sleep 5; echo done", "started\ndone"),
                    ("sleep 5 && echo slept", "slept"),
                    ("X=1 sleep 5; echo prefixed", "prefixed"),
                    ("for i in 1 2 3 4 5 6 7 8; do sleep 0.7; done; echo looped", "looped"),
                ]
                tasks = []
                for command, end in cases:
                    progress.clear()
                    began = time.monotonic()
                    result = await session.call_tool("Bash", {"command": command}, progress_callback=on_progress)
                    took = time.monotonic() - began
                    fields = result.structured_content or {}
                    task = fields.get("backgroundTaskId")
                    check(task, f"{command}: no task id: {text_of(result)!r}")
                    check(took < 4.5, f"{command}: answered after {took:.2f}s")
                    check(fields.get("assistantAutoBackgrounded") is True, f"{command}: {fields}")
                    check(f"client's wait limit (3s) came and was moved to the background with ID: {task}" in text_of(result), text_of(result))
                    tasks.append((command, task, end))
                # Progress flowed while the last one ran in the foreground.
                check(len(progress) >= 1 and all("bytes written" in (m or "") for _, m in progress), f"progress: {progress}")
                for command, task, end in tasks:
                    output = await session.call_tool("TaskOutput", {"task_id": task, "block": True, "timeout": 20000})
                    text = text_of(output)
                    check("<status>completed</status>" in text and end in text, f"{command}: {text}")
                quick = await session.call_tool("Bash", {"command": "sleep 0.5; echo quick"})
                check(text_of(quick) == "quick", text_of(quick))
                stopped = await session.call_tool("Bash", {"command": "sleep 5", "timeout": 1000})
                check("Command exceeded the timeout (1s) and was stopped." in text_of(stopped), text_of(stopped))
                check(not (stopped.structured_content or {}).get("backgroundTaskId"), text_of(stopped))
        print("client budget scenario: ok")
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


SCENARIOS = {"http": http_scenario, "client-suite": client_suite_scenario, "cancel-progress": cancel_progress_scenario, "permissions": permissions_scenario, "cwd": cwd_scenario, "session-end": session_end_scenario, "tasks": tasks_scenario, "client-budget": client_budget_scenario, "hosts": hosts_scenario}

if __name__ == "__main__":
    binary, scenario = sys.argv[1], sys.argv[2]
    asyncio.run(SCENARIOS[scenario](binary))
