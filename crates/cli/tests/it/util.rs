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

    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
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

/// The Python interpreter with the `mcp` client: `WAVESH_TEST_PYTHON`, else the
/// workspace's `.venv` (made by `.ci/run`), else `python3`.
pub fn python() -> OsString {
    if let Some(python) = std::env::var_os("WAVESH_TEST_PYTHON") {
        return python;
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/python");
    if venv.exists() {
        return venv.into_os_string();
    }
    "python3".into()
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
