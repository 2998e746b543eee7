//! The reliability suite: nothing wavesh starts survives a stop, a session end or the
//! host's own death; bad input and hostile output get
//! clear answers while the host stays up.
//!
//! `cargo nextest run -p wavesh --test reliability` runs it at CI size. The long soak
//! (500 mixed runs instead of 40) runs with `WAVESH_SOAK=1`.
#![cfg(target_os = "linux")]
#![expect(clippy::unwrap_used, reason = "tests unwrap freely (STYLE)")]
#![allow(
    clippy::print_stdout,
    reason = "tests say SKIPPED and print the figures they measure"
)]

#[path = "../../crates/cli/tests/it/util.rs"]
#[allow(dead_code)]
mod util;

mod at_off;
mod attacks;
mod bad_input;
mod output;
mod processes;
mod server;
mod tty;
mod tty_waiting;

use std::path::Path;
use std::time::{Duration, Instant};

use wavesh_tool::Session;

/// Asserts that within `within` no live process has `.MARKER` in its command line;
/// `when` says what should have ended them.
pub fn expect_gone(marker: &str, within: Duration, when: &str) {
    let needle = format!(".{marker}");
    let started = Instant::now();
    let gone = util::wait_until(within, || util::live_pids_with(&needle).is_empty());
    assert!(
        gone,
        "{when}: left after {:?}: {:?}",
        started.elapsed(),
        util::live_pids_with(&needle)
    );
}

/// A session in `root` whose commands start through the supervisor, as `wavesh mcp` runs
/// them.
pub fn supervised_session(root: &Path, private: &Path) -> Session {
    supervised(root, private, true)
}

/// A session as [`supervised_session`], whose commands keep the host's PID namespace:
/// the trees a user other than root gets at `off`, held by cgroups and subreapers alone.
pub fn without_pid_namespace(root: &Path, private: &Path) -> Session {
    supervised(root, private, false)
}

fn supervised(root: &Path, private: &Path, off_pid_namespace: bool) -> Session {
    // Every command unsandboxed, as a host that approves them all runs them: this suite
    // is about processes and output; tests/sandbox covers the sandbox through the
    // supervisor.
    let mut config = wavesh_tool::ToolConfig::default();
    config.sandbox.read_only_level = false;
    Session::builder(root)
        .private_base(private)
        .no_login_env()
        .supervisor(util::WAVESH)
        .supervisor_options(wavesh_exec::supervisor::Options {
            off_pid_namespace,
            ..wavesh_exec::supervisor::Options::default()
        })
        .sandbox_level(wavesh_exec::sandbox::Level::Off)
        .no_claude_settings()
        .config(config)
        .build()
        .expect("a session")
}

/// Supervised sessions on both of the supervisor's paths for a tree in the host's PID
/// namespace (what a user other than root gets at `off`; as root a PID namespace holds
/// it, see `sbx_7_at_off_no_tree_outlives_its_session`): per-command cgroups (where this
/// machine allows them; SKIPPED otherwise) and subreapers alone (PROC-1).
pub fn both_paths(root: &Path, private: &Path) -> Vec<(&'static str, Session)> {
    let mut sessions = Vec::new();
    for (name, cgroups) in [("cgroups", true), ("subreapers", false)] {
        let session = Session::builder(root)
            .private_base(private)
            .no_login_env()
            .supervisor(util::WAVESH)
            .supervisor_options(wavesh_exec::supervisor::Options {
                cgroups,
                off_pid_namespace: false,
                ..wavesh_exec::supervisor::Options::default()
            })
            .sandbox_level(wavesh_exec::sandbox::Level::Off)
            .no_claude_settings()
            .build()
            .expect("a session");
        if cgroups
            && matches!(
                wavesh_exec::cgroup::support(),
                wavesh_exec::cgroup::Support::Unavailable(_)
            )
        {
            wavesh_testkit::lacking_in_this_mode(
                &format!(
                    "the cgroup path: cgroup v2 delegation ({:?})",
                    wavesh_exec::cgroup::support()
                ),
                "root, or a cgroup v2 subtree delegated to this user",
            );
            continue;
        }
        sessions.push((name, session));
    }
    sessions
}

/// Runs `command`, which kills its own subreaper: the call must come back (bounded), and
/// report the command as killed.
pub async fn run_killing_its_subreaper(session: &Session, command: String) {
    let mut input = wavesh_tool::BashInput::new(command);
    input.timeout_ms = Some(20_000);
    let result = tokio::time::timeout(
        Duration::from_secs(15),
        session.bash(input, &wavesh_tool::CallContext::default()),
    )
    .await
    .expect("the call hung after its subreaper was killed")
    .unwrap();
    assert_ne!(result.exit_code, Some(0), "{}", result.text);
}

pub use processes::parent_of as processes_parent_of;
pub use util::Mcp;
