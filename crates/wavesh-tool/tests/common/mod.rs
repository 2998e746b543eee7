//! Shared by the library's integration tests: a session in a temporary workspace, and
//! process look-ups by command-line marker.
#![allow(dead_code, reason = "each test binary uses a different part")]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use wavesh_tool::{BashInput, BashResult, CallContext, Session, ToolConfig};

/// A session whose workspace (with a `sub` directory) and private files live in a
/// temporary directory, removed on drop.
pub struct Fixture {
    pub base: PathBuf,
    pub root: PathBuf,
    pub session: Session,
}

impl Fixture {
    pub fn new() -> Fixture {
        Fixture::with(ToolConfig::default())
    }

    pub fn with(config: ToolConfig) -> Fixture {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let base = std::env::temp_dir().join(format!("wavesh-lib-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(base.join("ws/sub")).unwrap();
        std::fs::create_dir_all(base.join("private")).unwrap();
        let root = std::fs::canonicalize(base.join("ws")).unwrap();
        let mut builder = Session::builder(&root);
        builder
            .private_base(base.join("private"))
            .config(config)
            .sandbox_level(wavesh_exec::sandbox::Level::Off)
            .no_claude_settings()
            .no_login_env();
        Fixture {
            session: builder.build().unwrap(),
            base,
            root,
        }
    }

    /// Runs a foreground command with the default context.
    pub async fn bash(&self, command: &str) -> BashResult {
        without_sandbox_note(
            self.session
                .bash(BashInput::new(command), &CallContext::default())
                .await
                .unwrap(),
        )
    }

    /// Files in the session's private directory.
    pub fn files(&self) -> Vec<PathBuf> {
        std::fs::read_dir(self.session.private_dir())
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .collect()
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

/// Digits only, to tag processes: `sleep 300.<marker>`.
/// `result` without the note of the sandbox guarantees this session lacks (SBX-5): these
/// sessions spawn shells directly, without the supervisor, so read-only commands say
/// that their sandbox is incomplete. The sandbox suite checks that note; here it would
/// only make the texts depend on the machine.
pub fn without_sandbox_note(mut result: BashResult) -> BashResult {
    let lines: Vec<&str> = result
        .text
        .lines()
        .filter(|line| {
            !(line.starts_with("Sandbox (")
                && line.contains(" is incomplete on this machine; missing: "))
        })
        .collect();
    let text = if lines.is_empty() && !result.text.is_empty() {
        "(no output)".to_owned()
    } else {
        lines.join("\n")
    };
    result.text = text;
    result
}

pub fn marker() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{}{:09}", std::process::id() % 1000, nanos % 1_000_000_000)
}

/// The number of live (non-zombie) processes whose command line holds `marker`.
pub fn live(marker: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|entry| {
            entry
                .file_name()
                .to_str()
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter(|entry| {
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            let state = stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .chars()
                .next();
            let cmdline: String = cmdline
                .iter()
                .map(|b| if *b == 0 { ' ' } else { *b as char })
                .collect();
            cmdline.contains(marker) && !matches!(state, Some('Z' | 'X'))
        })
        .count()
}

/// Polls `check` every 20 ms until it holds or `timeout` passes.
pub async fn eventually(timeout: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    check()
}
