"""A developer's ordinary day through `wavesh mcp`, driven by the official Python MCP client.

Run by tests/workday/run as:  python workday.py WAVESH_BINARY [wavesh mcp options...]

Every step is one Bash call (or a few) that a coding agent makes on a normal day: git,
cargo with a crate from crates.io, npm, pip in a venv, loopback tests, a dev server as a
background task reached by the next call, make, /tmp, formatting and lints. Each must end
with success, with no refusal in its text and no prompt (elicitation) on the way (SBX-8,
SBX-9, NET-1, NET-2, MCP-5). The server runs in a throwaway git workspace with a fake
HOME (and so fresh toolchain caches: the registries are really reached).

Prints one table row per step and exits non-zero when any step failed.
"""

import asyncio
import os
import re
import shutil
import socket
import sys
import tempfile
import time

from mcp import ClientSession
from mcp import types
from mcp.client.stdio import StdioServerParameters, stdio_client

# What a refusal looks like in a result: the sandbox's notes (SBX-4, SBX-9, NET-2) and the
# raw errors a denied operation gives.
REFUSAL_MARKERS = (
    "sandbox refused",
    "proxy refused",
    "dangerouslyDisableSandbox",
    "Permission denied",
    "Operation not permitted",
    "Read-only file system",
    "not allowed",
)

# A crate, an npm package and a PyPI package: small, without dependencies, long stable.
CRATE = "itoa@1.0.11"
NPM_PACKAGE = "is-number@7.0.0"
PYPI_PACKAGE = "six==1.16.0"

CARGO_LIB = """\
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};

/// Formats a number with itoa.
pub fn format(n: u64) -> String {
    itoa::Buffer::new().format(n).to_owned()
}

/// Sends `text` to a loopback listener of our own and reads it back.
pub fn echo(text: &str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let server = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut buffer = [0u8; 64];
        let n = stream.read(&mut buffer).unwrap();
        stream.write_all(&buffer[..n]).unwrap();
    });
    let mut client = TcpStream::connect(address).unwrap();
    client.write_all(text.as_bytes()).unwrap();
    let mut back = String::new();
    client.read_to_string(&mut back).unwrap();
    server.join().unwrap();
    back
}

#[cfg(test)]
mod tests {
    #[test]
    fn formats() {
        assert_eq!(super::format(1234), "1234");
    }

    #[test]
    fn loopback_echo() {
        assert_eq!(super::echo("ping"), "ping");
    }
}
"""

PY_LOOPBACK_TEST = """\
import socket
import threading
import unittest


class Loopback(unittest.TestCase):
    def test_bind_and_connect(self):
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]

        def answer():
            conn, _ = server.accept()
            conn.sendall(conn.recv(64).upper())
            conn.close()

        thread = threading.Thread(target=answer)
        thread.start()
        with socket.create_connection(("127.0.0.1", port)) as client:
            client.sendall(b"ping")
            self.assertEqual(client.recv(64), b"PING")
        thread.join()
        server.close()

    def test_udp(self):
        a = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        a.bind(("127.0.0.1", 0))
        b = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        b.sendto(b"datagram", a.getsockname())
        self.assertEqual(a.recv(64), b"datagram")
        a.close()
        b.close()


if __name__ == "__main__":
    unittest.main()
"""

NODE_SCRIPT = """\
const http = require('http');
const isNumber = require('is-number');
const server = http.createServer((req, res) => res.end(String(isNumber(req.url.slice(1)))));
server.listen(0, '127.0.0.1', () => {
  const port = server.address().port;
  http.get({host: '127.0.0.1', port, path: '/42'}, (res) => {
    let body = '';
    res.on('data', (chunk) => body += chunk);
    res.on('end', () => { console.log('node says ' + body); server.close(); });
  });
});
"""

MAKEFILE = """\
CFLAGS ?= -O2 -Wall
hello: hello.c
\t$(CC) $(CFLAGS) -o $@ $<
check: hello
\t./hello | grep -q 'hello, make'
\t@echo make check passed
clean:
\trm -f hello
.PHONY: check clean
"""

HELLO_C = '#include <stdio.h>\nint main(void) { puts("hello, make"); return 0; }\n'


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def text_of(result):
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


class Failure(Exception):
    pass


class Day:
    """One MCP session of the day, and the rows of its table."""

    def __init__(self, session, workspace, elicitations):
        self.session = session
        self.workspace = workspace
        self.elicitations = elicitations
        self.rows = []

    async def bash(self, command, expect=None, **kwargs):
        """Runs `command`; fails on an error result, a refusal or a prompt. A call moved to
        the background by the client budget (MCP-5) is waited for through TaskOutput."""
        asked = len(self.elicitations)
        result = await self.session.call_tool("Bash", {"command": command, "timeout": 600000, **kwargs})
        text = text_of(result)
        structured = result.structured_content or {}
        if not kwargs.get("run_in_background") and structured.get("status") == "backgrounded":
            text = await self.wait(structured["backgroundTaskId"])
        elif result.is_error:
            raise Failure(f"`{command}` failed: {text[-1500:]}")
        if len(self.elicitations) != asked:
            raise Failure(f"`{command}` asked the user: {self.elicitations[asked:]}")
        for marker in REFUSAL_MARKERS:
            if marker in text:
                raise Failure(f"`{command}` was refused ({marker!r}): {text[-1500:]}")
        if expect is not None and expect not in text:
            raise Failure(f"`{command}`: expected {expect!r} in {text[-1500:]!r}")
        return text, structured

    async def wait(self, task_id):
        """The output of a background task once it ends; a failure unless it exited 0."""
        while True:
            result = await self.session.call_tool("TaskOutput", {"task_id": task_id, "block": True, "timeout": 40000})
            text = text_of(result)
            if result.is_error:
                raise Failure(f"task {task_id}: {text[-1500:]}")
            status = re.search(r"<status>(\w+)</status>", text)
            if status is None:
                raise Failure(f"task {task_id}: no status in {text[-1500:]!r}")
            if status.group(1) == "running":
                continue
            exit_code = re.search(r"<exit_code>(-?\d+)</exit_code>", text)
            if status.group(1) != "completed" or exit_code is None or exit_code.group(1) != "0":
                raise Failure(f"task {task_id} {status.group(1)}: {text[-1500:]}")
            return text

    async def step(self, name, body):
        started = time.monotonic()
        try:
            note = await body()
            self.rows.append((name, "pass", time.monotonic() - started, note or ""))
        except Failure as failure:
            self.rows.append((name, "FAIL", time.monotonic() - started, str(failure)))
        except Exception as error:  # a broken connection or a client error is a failure too
            self.rows.append((name, "FAIL", time.monotonic() - started, f"{type(error).__name__}: {error}"))


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


async def the_day(day, port, measure, sandboxed, home):
    ws = day.workspace
    # Names in /tmp of this run alone: at `off` they are the host's /tmp.
    scratch, archive_file = f"/tmp/workday-{port}-scratch", f"/tmp/workday-{port}-site.tgz"

    async def git_setup():
        await day.bash("git init -q -b main && git config user.email dev@example.com && git config user.name 'A Developer'")
        text, _ = await day.bash("git config user.email", expect="dev@example.com")
        return text.strip()

    async def git_remote():
        await day.bash("git remote add origin https://github.com/example/workday.git")
        await day.bash("git remote set-url --push origin git@github.com:example/workday.git && git config branch.main.remote origin")
        text, _ = await day.bash("git remote -v", expect="git@github.com:example/workday.git (push)")
        return "remote added, push URL set"

    async def git_commit():
        await day.bash("printf 'target/\\nnode_modules/\\n.venv/\\n*.o\\nhello\\n' > .gitignore && echo '# workday' > README.md")
        await day.bash("git add -A && git commit -qm 'Start the day'")
        text, _ = await day.bash("git log --oneline", expect="Start the day")
        return text.strip()

    async def git_branches():
        await day.bash("git switch -q -c feature && echo 'more' >> README.md && git stash -q && git stash pop -q")
        await day.bash("git commit -qam 'More readme' && git switch -q main && git merge -q --ff-only feature")
        await day.bash("git branch -d feature && git tag v0.1 && git log --oneline --decorate -n 2", expect="v0.1")
        await day.bash("git status --short --branch", expect="## main")
        return "switch, stash, merge, tag"

    async def tmp_files():
        await day.bash(f"echo scratch > {scratch} && cat {scratch} && rm {scratch}", expect="scratch")
        await day.bash("d=$(mktemp -d) && echo in-mktemp > \"$d/f\" && cat \"$d/f\" && rm -r \"$d\"", expect="in-mktemp")
        return "/tmp and mktemp -d"

    async def cargo_new():
        await day.bash("cargo new -q --lib --vcs none dayrs && cargo --version", expect="cargo ")
        write(os.path.join(ws, "dayrs/src/lib.rs"), CARGO_LIB)
        return "crate made"

    async def cargo_add():
        await day.bash(f"(cd dayrs && cargo add -q {CRATE})")
        await day.bash("grep -n itoa dayrs/Cargo.toml", expect="itoa")
        return f"cargo add {CRATE}"

    async def cargo_build():
        text, _ = await day.bash("(cd dayrs && cargo build 2>&1)", expect="Finished")
        return "built with the crate (CARGO_TARGET_DIR outside the workspace)"

    async def cargo_test():
        text, _ = await day.bash("(cd dayrs && cargo test 2>&1)", expect="test result: ok. 2 passed")
        return "2 passed (one binds 127.0.0.1)"

    async def cargo_fmt_clippy():
        await day.bash("(cd dayrs && cargo fmt && cargo fmt --check)")
        await day.bash("(cd dayrs && cargo clippy -q -- -D warnings 2>&1)")
        return "fmt, clippy"

    async def npm_install():
        await day.bash("mkdir -p dayjs && (cd dayjs && npm init -y >/dev/null && npm install --no-audit --no-fund " + NPM_PACKAGE + " 2>&1)", expect="added 1 package")
        return f"npm install {NPM_PACKAGE}"

    async def node_script():
        write(os.path.join(ws, "dayjs/serve.js"), NODE_SCRIPT)
        await day.bash("(cd dayjs && node serve.js)", expect="node says true")
        return "node http on 127.0.0.1"

    async def pip_venv():
        await day.bash("python3 -m venv .venv && .venv/bin/python -m pip install -q --disable-pip-version-check " + PYPI_PACKAGE + " 2>&1")
        await day.bash(".venv/bin/python -c 'import six; print(six.__version__)'", expect="1.16.0")
        return f"pip install {PYPI_PACKAGE}"

    async def py_loopback():
        write(os.path.join(ws, "test_loopback.py"), PY_LOOPBACK_TEST)
        await day.bash(".venv/bin/python -m unittest -v test_loopback 2>&1", expect="OK")
        return "TCP and UDP on 127.0.0.1"

    async def dev_server():
        write(os.path.join(ws, "site/index.html"), "<h1>workday</h1>\n")
        _, started = await day.bash(f"python3 -m http.server {port} --bind 127.0.0.1 --directory site", run_in_background=True)
        task = started.get("backgroundTaskId")
        if not task:
            raise Failure(f"no task id for the dev server: {started}")
        try:
            await day.bash(
                f"for i in $(seq 100); do curl -sf http://127.0.0.1:{port}/ && exit 0; sleep 0.1; done; exit 1",
                expect="<h1>workday</h1>",
            )
        finally:
            stopped = await day.session.call_tool("TaskStop", {"task_id": task})
            if stopped.is_error:
                raise Failure(f"TaskStop {task}: {text_of(stopped)}")
        return f"task {task} answered curl on :{port}"

    async def make():
        write(os.path.join(ws, "cdir/Makefile"), MAKEFILE)
        write(os.path.join(ws, "cdir/hello.c"), HELLO_C)
        await day.bash("make -C cdir check 2>&1", expect="make check passed")
        await day.bash("make -C cdir clean >/dev/null && test ! -e cdir/hello")
        return "cc, make check, make clean"

    async def search_and_edit():
        await day.bash("rg -n 'fn format' dayrs/src", expect="pub fn format")
        await day.bash("grep -rn 'is-number' dayjs/package.json", expect="is-number")
        await day.bash("sed -i 's/# workday/# Workday/' README.md && grep -c Workday README.md", expect="1")
        await day.bash("find . -name '*.py' -not -path './.venv/*' | sort", expect="test_loopback.py")
        return "rg, grep, sed -i, find"

    async def archive():
        await day.bash(
            f"tar czf {archive_file} site && mkdir -p restored && tar xzf {archive_file} -C restored"
            f" && cmp site/index.html restored/site/index.html && rm {archive_file}"
        )
        return "tar to /tmp and back"

    async def git_end():
        await day.bash("git add -A && git commit -qm 'The day in code' && git log --oneline | wc -l", expect="3")
        await day.bash("git diff HEAD~1 --stat | tail -1", expect="changed")
        return "committed the day"

    steps = [
        ("git init + config user.email", git_setup),
        ("git remote add", git_remote),
        ("git commit", git_commit),
        ("git switch/stash/merge/tag", git_branches),
        ("/tmp write and read", tmp_files),
        ("cargo new", cargo_new),
        ("cargo add (crates.io)", cargo_add),
        ("cargo build", cargo_build),
        ("cargo test (loopback)", cargo_test),
        ("cargo fmt + clippy", cargo_fmt_clippy),
        ("npm install", npm_install),
        ("node script (loopback)", node_script),
        ("pip install in a venv", pip_venv),
        ("python unittest (loopback)", py_loopback),
        ("dev server + curl", dev_server),
        ("make", make),
        ("rg/grep/sed -i/find", search_and_edit),
        ("tar via /tmp", archive),
        ("git commit the day", git_end),
    ]
    if sandboxed:

        async def sandbox_held():
            # The day ran in the sandbox, not around it: the proxy carried the downloads,
            # and the real caches of the (fake) home are as they were: empty (SBX-8).
            await day.bash("echo $HTTPS_PROXY", expect="http://127.0.0.1:")
            touched = [
                os.path.join(root, name)
                for cache in (".cargo/registry", ".npm", ".cache/pip")
                for root, _, names in os.walk(os.path.join(home, cache))
                for name in names
            ]
            if touched:
                raise Failure(f"the real caches changed: {touched[:5]}")
            made = [name for name in (".npm", ".cache") if os.path.exists(os.path.join(home, name))]
            if made:
                raise Failure(f"the home gained {made}")
            return "proxy announced; real caches untouched"

        steps.append(("sandbox held (proxy, caches)", sandbox_held))
    for name, body in steps:
        await day.step(name, body)
    if measure:
        await measure(day)


def descendants(pid):
    """`pid` and every process below it."""
    children = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        parent = int(stat[stat.rfind(")") + 2 :].split()[1])
        children.setdefault(parent, []).append(int(name))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, []))
    return found


def memory_kib(pid):
    """(RSS, private) memory of `pid` in KiB: private is what it alone holds (its own
    pages, clean or dirty), the figure that adds up across processes."""
    rss = private = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                name, _, rest = line.partition(":")
                if name == "Rss":
                    rss = int(rest.split()[0])
                elif name in ("Private_Clean", "Private_Dirty"):
                    private += int(rest.split()[0])
    except OSError:
        pass
    return rss, private


def comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return "?"


def server_pid(binary):
    """The wavesh server this client started (a child of this process)."""
    me = os.getpid()
    for pid in descendants(me):
        if pid == me:
            continue
        try:
            if os.path.realpath(f"/proc/{pid}/exe") == os.path.realpath(binary):
                return pid
        except OSError:
            continue
    return None


def make_measure(binary):
    """Measures a session with its network: the RSS of wavesh's processes while idle, and
    the proxy's throughput against a direct download of the same crate file."""

    async def measure(day):
        pid = server_pid(binary)
        if pid:
            procs = [(comm(p), *memory_kib(p)) for p in descendants(pid)]
            rss = sum(r for _, r, _ in procs)
            private = sum(p for _, _, p in procs)
            detail = ", ".join(f"{c} {p / 1024:.1f}" for c, _, p in procs)
            day.rows.append((
                "measure: session memory (idle)",
                "info",
                0.0,
                f"{len(procs)} processes, private {private / 1024:.1f} MiB ({detail}), RSS {rss / 1024:.1f} MiB",
            ))
        # A large crate file, fetched alternately through the proxy (a sandboxed command)
        # and directly from the host, so both see the same link at the same times.
        url = "https://static.crates.io/crates/windows/windows-0.58.0.crate"
        curl = f"curl -sSf -o /dev/null -w '%{{size_download}} %{{speed_download}}\\n' {url}"
        through, direct = [], []
        for _ in range(5):
            text, _ = await day.bash(curl)
            through.append(text.split()[-2:])
            proc = await asyncio.create_subprocess_shell(curl, stdout=asyncio.subprocess.PIPE, env={"PATH": os.environ["PATH"]})
            out, _ = await proc.communicate()
            direct.append(out.decode().split()[-2:])

        def median(samples):
            speeds = sorted(float(s[1]) / 1e6 for s in samples)
            return speeds[len(speeds) // 2]

        size = int(through[0][0])
        day.rows.append((
            "measure: proxy vs direct",
            "info",
            0.0,
            f"{size} B crate, 5 interleaved each, median: proxy {median(through):.1f} MB/s, direct {median(direct):.1f} MB/s",
        ))

    return measure


async def main():
    if len(sys.argv) < 2:
        sys.exit("usage: workday.py WAVESH_BINARY [wavesh mcp options...]")
    binary, options = os.path.realpath(sys.argv[1]), sys.argv[2:]
    measure = os.environ.get("WAVESH_WORKDAY_MEASURE") == "1"
    base = os.path.realpath(tempfile.mkdtemp(prefix="wavesh-workday-"))
    home, workspace = os.path.join(base, "home"), os.path.join(base, "ws")
    os.makedirs(home)
    os.makedirs(workspace)
    # A developer's home where cargo has run before (its home exists, its caches are
    # empty: the registries are reached) and npm and pip never have: their first run
    # gets a fresh cache in wavesh's state through npm_config_cache and PIP_CACHE_DIR,
    # and the home is not changed (SBX-8).
    os.makedirs(os.path.join(home, ".cargo"))
    # The fake HOME's login profile keeps the toolchains on PATH, as a developer's does.
    write(os.path.join(home, ".profile"), f"export PATH='{os.environ['PATH']}'\n")
    env = {
        "PATH": os.environ["PATH"],
        "HOME": home,
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "XDG_STATE_HOME": os.path.join(base, "state"),
        # A toolchain output directory the user configured, outside the workspace (SBX-8).
        "CARGO_TARGET_DIR": os.path.join(base, "cargo-target"),
    }
    # The toolchain managers' own homes stay the real ones (read, never written): the fake
    # HOME has fresh caches, so cargo, npm and pip really reach their registries.
    for key in ("RUSTUP_HOME", "PYENV_ROOT", "RUSTUP_TOOLCHAIN"):
        if key in os.environ:
            env[key] = os.environ[key]
    if "RUSTUP_HOME" not in env and os.path.isdir(os.path.expanduser("~/.rustup")):
        env["RUSTUP_HOME"] = os.path.expanduser("~/.rustup")
    if "PYENV_ROOT" not in env and os.path.isdir(os.path.expanduser("~/.pyenv")):
        env["PYENV_ROOT"] = os.path.expanduser("~/.pyenv")
    for key in ("RUSTUP_HOME", "PYENV_ROOT"):
        if key in env:
            with open(os.path.join(home, ".profile"), "a") as f:
                f.write(f"export {key}='{env[key]}'\n")

    elicitations = []

    async def on_elicit(context, params):
        elicitations.append(getattr(params, "message", str(params)))
        return types.ElicitResult(action="decline")

    label = " ".join(options) or "(defaults)"
    started = time.monotonic()
    rows = []
    try:
        server = StdioServerParameters(command=binary, args=["mcp", "--cwd", workspace, *options], env=env)
        async with stdio_client(server) as (read, write_stream):
            async with ClientSession(read, write_stream, elicitation_callback=on_elicit) as session:
                await session.initialize()
                day = Day(session, workspace, elicitations)
                sandboxed = not ("off" in options or "--sandbox=off" in options)

                async def told():
                    # The model is told the session's rules up front (SBX-4, NET-2).
                    tools = (await session.list_tools()).tools
                    text = next(t for t in tools if t.name == "Bash").description
                    rules = text.rsplit("\n\n", 1)[-1]
                    wanted = (
                        [f"write only to {workspace}, /tmp", "crates.io", "dangerouslyDisableSandbox"]
                        if sandboxed
                        else ["Sandbox: off."]
                    )
                    missing = [w for w in wanted if w not in rules]
                    if missing:
                        raise Failure(f"the description lacks {missing}: {rules!r}")
                    return rules[:60] + "…"

                await day.step("description states the sandbox", told)
                await the_day(day, free_port(), make_measure(binary) if measure else None, sandboxed, home)
                rows = day.rows
    finally:
        shutil.rmtree(base, ignore_errors=True)

    width = max(len(name) for name, *_ in rows)
    print(f"\nworkday: wavesh mcp {label}")
    print(f"| {'step'.ljust(width)} | result | seconds | note")
    print(f"|{'-' * (width + 2)}|--------|---------|-----")
    for name, verdict, seconds, note in rows:
        note = note.replace("\n", " ")
        print(f"| {name.ljust(width)} | {verdict.ljust(6)} | {seconds:7.1f} | {note[:400]}")
    failed = [row for row in rows if row[1] == "FAIL"]
    passed = [row for row in rows if row[1] == "pass"]
    print(f"workday {label}: {len(passed)} passed, {len(failed)} failed, {len(elicitations)} prompts, "
          f"{time.monotonic() - started:.0f} s", flush=True)
    sys.exit(1 if failed or elicitations else 0)


if __name__ == "__main__":
    asyncio.run(main())
