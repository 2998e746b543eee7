//! Test harness: runs the real `wavesh` binary in a temporary workspace with a scrubbed
//! environment, and on failure shows the command, directory, status and both streams.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

pub const WAVESH: &str = env!("CARGO_BIN_EXE_wavesh");

/// A temporary workspace, removed on drop.
pub struct Workspace {
    pub root: PathBuf,
    pub private: PathBuf,
}

impl Workspace {
    pub fn new() -> Workspace {
        let base = std::env::temp_dir().join(format!("wavesh-it-{}", unique()));
        let root = base.join("ws");
        let private = base.join("private");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&private).unwrap();
        Workspace {
            root: std::fs::canonicalize(root).unwrap(),
            private,
        }
    }

    /// `wavesh` with a scrubbed environment, private files under this workspace.
    pub fn wavesh(&self) -> Command {
        let mut command = Command::new(WAVESH);
        command.env_clear();
        for key in ["PATH", "HOME", "LANG", "USER"] {
            if let Some(value) = std::env::var_os(key) {
                command.env(key, value);
            }
        }
        command.env("TMPDIR", &self.private);
        command.env("XDG_STATE_HOME", &self.private);
        command.env("SHELL", "/bin/bash");
        command.current_dir(&self.root);
        command.stdin(Stdio::null());
        command
    }

    /// `wavesh run [args] -- command`, waited for.
    pub fn run(&self, args: &[&str], command: &str) -> Run {
        let mut cmd = self.wavesh();
        cmd.arg("run").args(args).arg("--").arg(command);
        Run::of(cmd)
    }

    /// `wavesh run --json [args] -- command`, parsed.
    pub fn run_json(&self, args: &[&str], command: &str) -> (Run, serde_json::Value) {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let run = self.run(&all, command);
        let value = serde_json::from_slice(&run.output.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e})\n{run}"));
        (run, value)
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        if let Some(base) = self.root.parent() {
            let _ = std::fs::remove_dir_all(base);
        }
    }
}

/// A finished run with everything needed to explain a failure.
pub struct Run {
    pub command: String,
    pub output: Output,
    pub elapsed: Duration,
}

impl Run {
    pub fn of(mut command: Command) -> Run {
        let shown = format!("{command:?}");
        let start = Instant::now();
        let output = command
            .output()
            .unwrap_or_else(|e| panic!("cannot run {shown}: {e}"));
        Run {
            command: shown,
            output,
            elapsed: start.elapsed(),
        }
    }

    /// stdout, without the sandbox's note of what a degraded test mode lacks
    /// ([`wavesh_testkit::without_documented_note`]).
    pub fn stdout(&self) -> String {
        wavesh_testkit::without_documented_note(&String::from_utf8_lossy(&self.output.stdout))
    }

    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    pub fn code(&self) -> Option<i32> {
        self.output.status.code()
    }
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "command: {}\nstatus: {}\nelapsed: {:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.command,
            self.output.status,
            self.elapsed,
            self.stdout(),
            self.stderr()
        )
    }
}

pub fn unique() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!(
        "{}-{nanos:x}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// A marker made of digits only, usable as a `sleep` fraction: `sleep 300.<marker>`.
pub fn digit_marker() -> String {
    let n = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{}{:09}", std::process::id() % 1000, n % 1_000_000_000)
}

/// Pids of live (non-zombie) processes whose command line contains `marker`.
pub fn live_pids_with(marker: &str) -> Vec<i32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let (Ok(cmdline), Ok(stat)) = (
            std::fs::read(entry.path().join("cmdline")),
            std::fs::read(entry.path().join("stat")),
        ) else {
            continue;
        };
        let state = stat
            .iter()
            .rposition(|b| *b == b')')
            .and_then(|i| stat.get(i + 2))
            .copied();
        // `wavesh run -- CMD` has CMD in its own argv: only the command's processes count.
        if cmdline.starts_with(WAVESH.as_bytes()) {
            continue;
        }
        let cmdline: Vec<u8> = cmdline
            .iter()
            .map(|b| if *b == 0 { b' ' } else { *b })
            .collect();
        let found = cmdline
            .windows(marker.len())
            .any(|w| w == marker.as_bytes());
        if found && !matches!(state, Some(b'Z' | b'X')) && pid != std::process::id() as i32 {
            pids.push(pid);
        }
    }
    pids
}

/// Polls `predicate` every 20 ms until it holds or `timeout` passes.
pub fn wait_until(timeout: Duration, mut predicate: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if predicate() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    predicate()
}

/// Ends a process group a test left running on purpose.
pub fn kill_group(pgid: i64) {
    let _ = Command::new("kill")
        .arg("-KILL")
        .arg("--")
        .arg(format!("-{pgid}"))
        .status();
}

/// A test prerequisite this machine lacks: SKIPPED, or a failure in CI
/// ([`wavesh_testkit::missing_prerequisite`]).
#[track_caller]
pub fn missing_prerequisite(what: &str, how: &str) {
    wavesh_testkit::missing_prerequisite(what, how);
}

/// The Python interpreter with the `mcp` client: `WAVESH_TEST_PYTHON`, else the
/// workspace's `.venv` (made by `scripts/test`), else `python3`; `None` (SKIPPED, said)
/// when none of them can import `mcp`.
pub fn python_with_mcp() -> Option<OsString> {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/python");
    let python = std::env::var_os("WAVESH_TEST_PYTHON")
        .or_else(|| venv.exists().then(|| venv.into_os_string()))
        .unwrap_or_else(|| "python3".into());
    let imports = Command::new(&python)
        .args(["-c", "import mcp"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if imports {
        return Some(python);
    }
    missing_prerequisite(
        &format!("the Python MCP client (`import mcp` fails under {python:?})"),
        "scripts/test makes .venv with it",
    );
    None
}

/// zsh's path, or `None` (SKIPPED, said) where this machine has none.
pub fn zsh() -> Option<&'static str> {
    let found = ["/usr/bin/zsh", "/bin/zsh"]
        .into_iter()
        .find(|p| Path::new(p).exists());
    if found.is_none() {
        missing_prerequisite("zsh", "apt-get install zsh; scripts/test does it as root");
    }
    found
}

/// Sends `signal` to `pid` and asserts that no live process with `marker` in its command
/// line is left 1.5 s later (KILL-2).
pub fn signal_and_expect_tree_gone(pid: u32, signal: &str, marker: &str) {
    let sent = Instant::now();
    Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .status()
        .unwrap();
    let gone = wait_until(Duration::from_millis(1500), || {
        live_pids_with(marker).is_empty()
    });
    assert!(
        gone,
        "left {:?} after SIG{signal}: {:?}",
        sent.elapsed(),
        live_pids_with(marker)
    );
}

/// A raw JSON-RPC connection to `wavesh mcp` (no client library: the tests send exactly
/// the bytes they mean).
pub struct Mcp {
    pub child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: std::io::BufReader<std::process::ChildStdout>,
}

impl Mcp {
    /// Starts `wavesh mcp --no-login-env --cwd ROOT ARGS` and initializes it.
    pub fn start(ws: &Workspace, args: &[&str]) -> Mcp {
        Mcp::start_with(ws, args, |_| {})
    }

    /// As [`Mcp::start`], with `adjust` changing the server's command first (its
    /// environment, say).
    pub fn start_with(ws: &Workspace, args: &[&str], adjust: impl FnOnce(&mut Command)) -> Mcp {
        Mcp::start_declaring(ws, args, adjust, serde_json::json!({}))
    }

    /// As [`Mcp::start_with`], the client declaring `capabilities` (elicitation, say).
    pub fn start_declaring(
        ws: &Workspace,
        args: &[&str],
        adjust: impl FnOnce(&mut Command),
        capabilities: serde_json::Value,
    ) -> Mcp {
        let mut server = ws.wavesh();
        adjust(&mut server);
        server
            .args(["mcp", "--no-login-env", "--cwd"])
            .arg(&ws.root)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = server.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut mcp = Mcp {
            child,
            stdin,
            stdout,
        };
        mcp.request(
            1,
            "initialize",
            serde_json::json!({"protocolVersion": "2025-06-18", "capabilities": capabilities,
                "clientInfo": {"name": "wavesh-test", "version": "0"}}),
        );
        mcp.notify("notifications/initialized");
        mcp
    }

    fn write(&mut self, message: &serde_json::Value) {
        use std::io::Write;
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Sends a notification.
    pub fn notify(&mut self, method: &str) {
        self.write(&serde_json::json!({"jsonrpc": "2.0", "method": method}));
    }

    /// Sends a request without waiting for its answer.
    pub fn send(&mut self, id: i64, method: &str, params: serde_json::Value) {
        self.write(
            &serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        );
    }

    /// The next message from the server, whatever it is.
    #[allow(dead_code, reason = "the reliability suite's elicitation tests use it")]
    pub fn next_message(&mut self) -> serde_json::Value {
        use std::io::BufRead;
        let mut line = String::new();
        assert!(
            self.stdout.read_line(&mut line).unwrap() > 0,
            "the server closed"
        );
        serde_json::from_str(&line).unwrap()
    }

    /// Sends one line as is (it may be anything but JSON-RPC).
    pub fn send_bytes(&mut self, line: &[u8]) {
        use std::io::Write;
        self.stdin.write_all(line).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The answer to request `id`; notifications before it are skipped.
    pub fn answer(&mut self, id: i64) -> serde_json::Value {
        self.answer_with_others(id).0
    }

    /// The answer to request `id`, and every other line that came before it.
    pub fn answer_with_others(&mut self, id: i64) -> (serde_json::Value, Vec<serde_json::Value>) {
        use std::io::BufRead;
        let mut others = Vec::new();
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "the server closed; before it: {others:?}"
            );
            let value: serde_json::Value = serde_json::from_str(&line).unwrap();
            if value["id"] == id {
                return (value, others);
            }
            others.push(value);
        }
    }

    /// Calls a tool and returns the whole answer.
    pub fn call(&mut self, id: i64, name: &str, arguments: serde_json::Value) -> serde_json::Value {
        self.request(
            id,
            "tools/call",
            serde_json::json!({"name": name, "arguments": arguments}),
        )
    }

    /// Sends a request and waits for its answer.
    pub fn request(
        &mut self,
        id: i64,
        method: &str,
        params: serde_json::Value,
    ) -> serde_json::Value {
        self.send(id, method, params);
        self.answer(id)
    }

    /// Calls a tool; the text of its content blocks, or the whole answer for an error.
    pub fn tool(&mut self, id: i64, name: &str, arguments: serde_json::Value) -> String {
        let answer = self.call(id, name, arguments);
        if answer["result"]["content"].is_array() {
            result_text(&answer)
        } else {
            answer.to_string()
        }
    }

    /// Closes the server's input without waiting for anything.
    pub fn close_input(&mut self) {
        // Replacing stdin with a closed pipe end drops the real one.
        let (_, closed) = std::io::pipe().unwrap();
        drop(std::mem::replace(
            &mut self.stdin,
            std::process::ChildStdin::from(std::os::fd::OwnedFd::from(closed)),
        ));
    }

    /// Closes the connection and waits for the server to exit by itself.
    pub fn close(mut self) {
        self.close_input();
        assert!(
            wait_until(Duration::from_secs(5), || self
                .child
                .try_wait()
                .unwrap()
                .is_some()),
            "the server did not exit when its input closed"
        );
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The text of a `tools/call` answer's content blocks, joined by newlines, without the
/// sandbox's note of what a degraded test mode lacks
/// ([`wavesh_testkit::without_documented_note`]).
pub fn result_text(answer: &serde_json::Value) -> String {
    let text = answer["result"]["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    wavesh_testkit::without_documented_note(&text)
}
