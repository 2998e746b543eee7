"""NET-2 over MCP: a host no rule allows is put to the user through elicitation, once per
host; "always" writes it to the user's settings. Run through mcp_client.py's `hosts`
scenario. The hosts are names under .invalid, which never resolve: nothing outside the
machine is reached, a granted name fails at its lookup (a 502), a refused one at the
proxy (a 403 with the note)."""

import json
import os
import shutil
import tempfile

from mcp import ClientSession, types
from mcp.client.stdio import StdioServerParameters, stdio_client


def _check(condition, message):
    if not condition:
        print(f"FAIL: {message}", flush=True)
        raise SystemExit(1)


def _text(result):
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def hosts_scenario(binary):
    base = os.path.realpath(tempfile.mkdtemp(prefix="wavesh-mcp-hosts-"))
    workspace, home = os.path.join(base, "ws"), os.path.join(base, "home")
    os.makedirs(workspace)
    os.makedirs(home)
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "TMPDIR", "WAVESH_LOG")}
    env.update(HOME=home, XDG_STATE_HOME=os.path.join(base, "state"))
    params = StdioServerParameters(command=binary, args=["mcp", "--cwd", workspace], env=env)
    questions = []
    answers = {}

    async def on_elicit(context, request):
        questions.append(request.message)
        for host, answer in answers.items():
            if host in request.message:
                return types.ElicitResult(action=answer[0], content=answer[1])
        return types.ElicitResult(action="decline")

    def curl(host):
        return f"curl -sS -m 20 -o /dev/null -w '%{{http_code}}' https://{host}/x; echo \" rc=$?\""

    try:
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, elicitation_callback=on_elicit) as session:
                await session.initialize()
                proxy = _text(await session.call_tool("Bash", {"command": "echo proxy=$HTTPS_PROXY"}))
                if proxy.strip() == "proxy=" and os.environ.get("WAVESH_TEST_MODE", "default") not in ("", "default"):
                    # Without user namespaces the session has no network at all (SBX-5,
                    # checked by net_1_without_a_namespace_the_network_is_off_and_said).
                    print("hosts scenario: no session network in this mode; nothing to ask about")
                    return
                _check("proxy=http://127.0.0.1:" in proxy, f"no proxy at the defaults: {proxy!r}")
                declined, always, once = "no.wavesh-test.invalid", "yes.wavesh-test.invalid", "once.wavesh-test.invalid"
                answers[declined] = ("decline", None)
                answers[always] = ("accept", {"allow": True, "always": True})
                answers[once] = ("accept", {"allow": True})

                # Declined: refused with a note saying so, and not asked again.
                for _ in range(2):
                    text = _text(await session.call_tool("Bash", {"command": curl(declined)}))
                    _check("the user declined to allow it when asked" in text, f"declined: {text!r}")
                _check(len(questions) == 1, f"asked about the declined host: {questions}")
                _check(f"{declined}:443" in questions[0] and "Allow it?" in questions[0], questions[0])

                # Always: let through (the name then fails to resolve: a 502, no refusal),
                # written to the user's settings, and not asked again.
                for _ in range(2):
                    text = _text(await session.call_tool("Bash", {"command": curl(always)}))
                    _check("refused" not in text and "502" in text, f"always: {text!r}")
                _check(len(questions) == 2, f"asked about the always host: {questions}")
                with open(os.path.join(home, ".claude", "settings.json")) as f:
                    written = json.load(f)
                _check(written["sandbox"]["network"]["allowedDomains"] == [always], f"settings: {written}")

                # Once: let through each time it is asked, asked each time.
                for _ in range(2):
                    text = _text(await session.call_tool("Bash", {"command": curl(once)}))
                    _check("refused" not in text and "502" in text, f"once: {text!r}")
                _check(len(questions) == 4, f"asked about the once host: {questions}")
        print("hosts scenario: ok")
    finally:
        shutil.rmtree(base, ignore_errors=True)
