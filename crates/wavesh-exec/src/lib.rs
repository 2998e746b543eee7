//! Runs shell commands for wavesh.
//!
//! A command runs in a fresh bash or zsh ([`shell`]), started in its own process group by a
//! [`Spawner`] with the command text on a private unlinked file (never in argv), stdin at
//! /dev/null, and stdout and stderr into one private output file. The [`Executor`] waits
//! for it up to a foreground deadline; past the deadline the command moves to the
//! background at a single commit point (BG-3) or, for `sleep …`, is killed with its whole
//! tree ([`kill`]). A [`TaskManager`] holds the background tasks and leftover trees of one
//! owner and ends them with it. A command can run in a [`sandbox`] (SBX): Landlock,
//! seccomp and a private mount namespace on Linux, a Seatbelt profile on macOS.
//!
//! This crate knows nothing of the model: texts, truncation and the tool schema are in
//! `wavesh-tool`.

#[cfg(target_os = "linux")]
mod ahead;
#[cfg(target_os = "linux")]
pub mod cgroup;
#[cfg(target_os = "linux")]
mod clone3;
pub mod env_vars;
mod executor;
mod job;
pub mod kill;
pub mod net;
mod output;
mod private_dir;
#[cfg(any(target_os = "linux", test))]
mod proc_stat;
pub mod pty;
pub mod sandbox;
pub mod shell;
pub mod spawn;
#[cfg(target_os = "linux")]
pub mod supervisor;
pub mod taskkill;
mod tasks;
pub mod winpath;

/// `path` against `cwd` (an absolute `path` stands as it is), with `.` and `..` removed
/// lexically, without asking the file system.
pub fn lexical_join(cwd: &std::path::Path, path: &std::path::Path) -> std::path::PathBuf {
    let mut out = std::path::PathBuf::new();
    for component in cwd.join(path).components() {
        match component {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

pub use executor::{
    Backgrounded, Controls, DEFAULT_OUTPUT_CAP, Ending, ExecError, Executor, Finished, Mode,
    OnTimeout, Outcome, PROGRESS_EVERY, PROGRESS_START, Progress, ProgressSink, Request,
    SandboxOutcome, StartAheadCounts,
};
pub use job::{BackgroundReason, ExitHook, ExitRecord, Job, Phase, StopCause, TaskStatus};
#[cfg(unix)]
pub use kill::PosixSignaller;
pub use kill::{KILL_GRACE, KillReport, KillTarget, Signaller};
pub use output::OutputFile;
pub use private_dir::{PrivateDir, PrivateDirError};
pub use pty::{Terminal, TtySize, TtyStop, Waiting};
pub use shell::{
    Shell, ShellError, ShellKind, WindowsShellEnv, resolve_default_shell, resolve_git_bash,
    resolve_shell,
};
pub use spawn::{DirectSpawner, ExitStatus, Spawner};
#[cfg(windows)]
pub use taskkill::TaskkillSignaller;
pub use tasks::{StopError, StopOutcome, TaskManager};
