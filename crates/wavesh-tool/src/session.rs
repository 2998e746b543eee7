//! The `Session` hosts embed — the workspace, the current directory across calls, the
//! tools on top of the executor — and the subagents made from it, each with its own
//! background tasks (KILL-6).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use tokio::sync::watch;
use wavesh_exec::shell::{FileProbe, RealFiles};
use wavesh_exec::{
    DirectSpawner, Executor, PrivateDir, Shell, ShellError, Signaller, Spawner, TaskManager,
};

use crate::agent::Agent;
use crate::config::ToolConfig;
use crate::input::{BashInput, parse_bash_input};
use crate::permissions::{Permissions, Prepared, Verdict};
use crate::read_state::ReadFileState;
use crate::shell_state::{self, ShellSelection};
use crate::task_tools::{
    TaskOutputInput, TaskStopInput, parse_task_output_input, parse_task_stop_input,
};

mod builder;
mod calls;
mod facts;
#[cfg(target_os = "linux")]
mod network;

pub use crate::results::{
    BashResult, CallContext, SessionError, TaskInfo, TaskNotification, TaskOutputResult,
    TaskSnapshot, TaskStopResult, ToolError, ToolOutput, approval_refusal, on_timeout,
};
pub(crate) use crate::state::*;
pub use crate::state::{ProcessPath, normalize_private};
use builder::LoginEnvChoice;
pub use builder::SessionBuilder;
pub use calls::AgentHandle;

/// One agent session: a workspace, its current directory and its background tasks.
pub struct Session {
    handle: AgentHandle,
}

impl std::ops::Deref for Session {
    type Target = AgentHandle;

    fn deref(&self) -> &AgentHandle {
        &self.handle
    }
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("root", &self.shared.root.literal)
            .field("cwd", &self.cwd())
            .finish_non_exhaustive()
    }
}

impl Session {
    /// Starts building a session for the workspace at `root`.
    pub fn builder(root: impl Into<PathBuf>) -> SessionBuilder {
        SessionBuilder {
            root: root.into(),
            additional_dirs: Vec::new(),
            config: None,
            shell: None,
            private_base: None,
            spawner: None,
            supervisor: None,
            #[cfg(target_os = "linux")]
            supervisor_options: wavesh_exec::supervisor::Options::default(),
            login_env: LoginEnvChoice::Process,
            session_id: None,
            state_dir: None,
            read_state: None,
            permissions: Arc::new(Permissions::default()),
            home: None,
            env: Vec::new(),
            level: None,
            claude_settings: true,
            start_ahead: true,
            answer_without_shell: false,
            settings_files: Vec::new(),
            sandbox_overrides: Vec::new(),
        }
    }

    /// The settings keys this session ignored because they would loosen the sandbox from
    /// a file sandboxed commands may write (SBX-6), one line per file, for the host to
    /// show its user.
    pub fn settings_notes(&self) -> &[String] {
        &self.shared.settings_notes
    }

    /// How this session's commands are started and their trees held (PROC-1). A
    /// supervisor that could not start is said here and in the first result, never
    /// only in a log.
    pub fn process_path(&self) -> &ProcessPath {
        &self.shared.process_path
    }

    /// What would happen to `input` if called now: run at a level, ask, or refuse
    /// (SBX-3). A host that asks its user calls this first, then calls [`Session::bash`](AgentHandle::bash)
    /// with `CallContext::approved` once the user said yes.
    pub fn verdict(&self, input: &BashInput) -> Verdict {
        self.prepare(input).verdict().clone()
    }

    /// The call's analysis and decision, made once: [`Prepared::verdict`] says what
    /// would happen, and [`Session::bash_prepared`](AgentHandle::bash_prepared) runs the call without analysing it
    /// again (an MCP gate that asks first, then runs).
    pub fn prepare(&self, input: &BashInput) -> Prepared {
        self.shared.prepare(
            &input.command,
            input.dangerously_disable_sandbox,
            &self.cwd(),
        )
    }

    /// The rules and the approver in force.
    pub fn permissions(&self) -> Arc<Permissions> {
        Arc::clone(
            &self
                .shared
                .permissions
                .read()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }

    /// Replaces the rules and the approver (a host that loads settings after the
    /// session started).
    pub fn set_permissions(&self, permissions: Permissions) {
        *self
            .shared
            .permissions
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Arc::new(permissions);
    }

    /// The workspace root.
    pub fn root(&self) -> &Path {
        &self.shared.root.literal
    }

    /// The directory the next command starts in.
    pub fn cwd(&self) -> PathBuf {
        self.shared.cwd()
    }

    /// The tool configuration.
    pub fn config(&self) -> &ToolConfig {
        &self.shared.config
    }

    /// The shell commands run under.
    pub fn shell(&self) -> &Shell {
        self.shared.executor.shell()
    }

    /// How the shell was chosen (SHELL-3), for the host to show.
    pub fn shell_selection(&self) -> &ShellSelection {
        &self.shared.selection
    }

    /// The login-shell probe's result, if it has finished (for `wavesh env`-like UIs).
    pub fn login_env_now(&self) -> Option<Arc<wavesh_env::LoginEnv>> {
        self.shared
            .login_env
            .as_ref()
            .and_then(|(handle, _)| handle.now())
    }

    /// How many read-only commands ran in a shell started ahead of them, and how many
    /// such shells ended unused ([`SessionBuilder::start_ahead`]).
    pub fn start_ahead_counts(&self) -> wavesh_exec::StartAheadCounts {
        self.shared.executor.start_ahead_counts()
    }

    /// Waits until the start ahead the last call scheduled, if any, is done
    /// ([`wavesh_exec::Executor::start_ahead_settled`]).
    pub async fn start_ahead_settled(&self) {
        self.shared.executor.start_ahead_settled().await;
    }

    /// The private directory of output files.
    pub fn private_dir(&self) -> &Path {
        self.shared.executor.private_dir().path()
    }

    /// Lets the shell stay in `dir` too (an `/add-dir`-style call, an approval, CWD-2).
    pub fn add_directory(&self, dir: impl Into<PathBuf>) {
        let dir = Dir::new(absolute(&dir.into()));
        self.shared
            .additional
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .push(dir);
    }

    /// A subagent: its commands start in the session's directory and never move it
    /// (CWD-5), and its background tasks are its own, stopped when it is released or
    /// dropped (KILL-6).
    pub fn subagent(&self) -> Subagent {
        Subagent {
            handle: AgentHandle {
                owner: Owner::new(&self.shared, true),
                shared: Arc::clone(&self.shared),
            },
        }
    }

    /// Ends every command, background task and tree left running by a foreground
    /// command, and waits until they are gone.
    pub async fn shutdown(&self) {
        self.owner.tasks.shutdown().await;
        // After the commands: one ending now starts the next shell ahead.
        self.shared.executor.end_started_ahead().await;
    }

    /// Ends the session for good: [`Session::shutdown`], then removes its private
    /// directory with every file in it (command outputs, persisted outputs, task output
    /// files), whose paths no caller can use once the session is gone. A command run
    /// after this fails to make its files.
    pub async fn end(&self) {
        self.shared.executor.close_start_ahead().await;
        self.shutdown().await;
        self.shared.executor.private_dir().remove();
    }

    /// Leaves background tasks running when the session is dropped (`wavesh run`).
    pub fn detach_tasks(&self) {
        self.owner.tasks.detach();
    }
}

/// A subagent of a [`Session`], with its own background tasks.
pub struct Subagent {
    handle: AgentHandle,
}

impl std::ops::Deref for Subagent {
    type Target = AgentHandle;

    fn deref(&self) -> &AgentHandle {
        &self.handle
    }
}

impl std::fmt::Debug for Subagent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subagent").finish_non_exhaustive()
    }
}

impl Subagent {
    /// Releases the subagent (it completed, failed or was aborted): every background
    /// task it started is stopped at once and waited for (KILL-6). Dropping it does the
    /// same without waiting.
    pub async fn release(self) {
        self.owner.tasks.shutdown().await;
    }
}

impl Drop for Subagent {
    fn drop(&mut self) {
        let ids = self
            .owner
            .tasks
            .list()
            .into_iter()
            .map(|job| job.id().to_owned());
        lock(&self.shared.expired).extend(ids);
        // The task manager's own drop ends whatever still runs.
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::rfc3339;
    use std::time::{Duration, UNIX_EPOCH};
    use wavesh_exec::OnTimeout;

    #[test]
    fn cwd_4_private_prefix_is_normalised() {
        assert_eq!(
            normalize_private(Path::new("/private/tmp/x")),
            PathBuf::from("/tmp/x")
        );
        assert_eq!(
            normalize_private(Path::new("/private/var/folders")),
            PathBuf::from("/var/folders")
        );
        assert_eq!(
            normalize_private(Path::new("/private/etc")),
            PathBuf::from("/private/etc")
        );
        assert_eq!(
            normalize_private(Path::new("/tmp/privatex")),
            PathBuf::from("/tmp/privatex")
        );
    }

    fn parsed(command: &str) -> wavesh_parse::Analysis {
        wavesh_parse::analyze(command, wavesh_parse::Dialect::Bash)
    }

    #[test]
    fn exec_4_sleep_first_is_killed() {
        use wavesh_exec::BackgroundReason::Timeout;
        let moved = OnTimeout::MoveToBackground(Timeout);
        assert_eq!(
            on_timeout(&parsed("sleep 60"), "sleep 60", Timeout),
            OnTimeout::Kill
        );
        assert_eq!(
            on_timeout(
                &parsed("sleep 5 && npm test"),
                "sleep 5 && npm test",
                Timeout
            ),
            OnTimeout::Kill
        );
        assert_eq!(
            on_timeout(&parsed("A=1 sleep 5"), "A=1 sleep 5", Timeout),
            OnTimeout::Kill
        );
        assert_eq!(
            on_timeout(&parsed("npm test; sleep 5"), "npm test; sleep 5", Timeout),
            moved
        );
        assert_eq!(
            on_timeout(
                &parsed("echo a; sleep 3; echo b"),
                "echo a; sleep 3; echo b",
                Timeout
            ),
            moved
        );
        assert_eq!(on_timeout(&parsed("sleepy"), "sleepy", Timeout), moved);
        let kill = |c: &str| on_timeout(&parsed(c), c, Timeout) == OnTimeout::Kill;
        assert!(kill("FOO=1 BAR='x y' sleep 5"));
        assert!(kill("  'sleep' 1"));
        assert!(kill("sleep 1 | cat"));
        assert!(!kill("echo a; sleep 3"));
        assert!(!kill("$(echo sleep) 5"));
        assert!(!kill("npm test"));
        // Constructs the analysis does not descend into: the first word as written.
        assert!(!kill("setsid sleep 900 & sleep 902; wait"));
        assert!(kill("sleep 5 & echo hi"));
        assert!(kill("{ sleep 1; }"));
        assert!(kill("(sleep 1)"));
        assert!(!kill("if true; then sleep 3; fi"));
    }

    #[test]
    fn rfc3339_dates() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_796_002_200_123);
        assert_eq!(rfc3339(t), "2026-11-30T01:30:00.123Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(rfc3339(leap), "2000-02-29T00:00:00.000Z");
    }
}
