//! The `Session` hosts embed — the workspace, the current directory across calls, the
//! tools on top of the executor — and the subagents made from it, each with its own
//! background tasks (KILL-6).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;
use tokio::sync::watch;
use wavesh_exec::shell::{FileProbe, RealFiles};
use wavesh_exec::{
    DirectSpawner, ExecError, Executor, OnTimeout, PrivateDir, PrivateDirError, Shell, ShellError,
    Signaller, Spawner, TaskManager,
};

use crate::agent::Agent;
use crate::config::ToolConfig;
use crate::input::{BashInput, InputError, parse_bash_input};
use crate::permissions::{Call, Permissions, Prepared, Verdict};
use crate::read_state::ReadFileState;
use crate::render;
use crate::shell_state::{self, ShellSelection};
use crate::task_tools::{
    TaskOutputInput, TaskStopInput, parse_task_output_input, parse_task_stop_input,
};

mod builder;
mod calls;
mod facts;
#[cfg(target_os = "linux")]
mod network;
mod results;

use builder::LoginEnvChoice;
pub use builder::SessionBuilder;
pub use calls::AgentHandle;
pub use results::{
    BashResult, CallContext, SessionError, TaskInfo, TaskNotification, TaskOutputResult,
    TaskSnapshot, TaskStopResult, ToolError, ToolOutput, approval_refusal,
};

/// How a session starts and ends its commands' processes.
type Processes = (Arc<dyn Spawner>, Arc<dyn Signaller>, ProcessPath);

/// How this session's commands are started and their trees held (PROC-1), so a host
/// and `wavesh doctor` can say which path runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProcessPath {
    /// The host's own spawner.
    Host,
    /// The per-session supervisor: a subreaper per command, cgroups where delegated.
    Supervisor,
    /// Direct children, tracked by process group only: a process that leaves its group
    /// (`setsid`, a daemon) can outlive the session. `why` says why the supervisor does
    /// not run, when one was asked for and could not start.
    Direct {
        /// Why the supervisor could not start, if one was asked for.
        why: Option<String>,
    },
}

impl std::fmt::Display for ProcessPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProcessPath::Host => f.write_str("the host's spawner"),
            ProcessPath::Supervisor => f.write_str("the session supervisor"),
            ProcessPath::Direct { why: None } => {
                f.write_str("direct children, tracked by process group only")
            }
            ProcessPath::Direct { why: Some(why) } => write!(
                f,
                "direct children, tracked by process group only (the supervisor could not start: {why})"
            ),
        }
    }
}
/// The session's network and, when it could not be had, the note saying so.
type NetworkStart = (Option<wavesh_exec::net::SessionNetwork>, Option<String>);

/// A directory as given and as resolved, for comparisons (CWD-4).
#[derive(Debug, Clone)]
pub(crate) struct Dir {
    pub(crate) literal: PathBuf,
    real: Option<PathBuf>,
}

impl Dir {
    fn new(path: PathBuf) -> Dir {
        let real = std::fs::canonicalize(&path).ok();
        Dir {
            literal: path,
            real,
        }
    }

    fn contains(&self, candidates: &[PathBuf]) -> bool {
        let bases = std::iter::once(&self.literal).chain(self.real.as_ref());
        bases
            .map(|base| normalize(base))
            .any(|base| candidates.iter().any(|c| c.starts_with(&base)))
    }
}

/// macOS reaches `/tmp` and `/var` through `/private`: compare without it (CWD-4).
pub fn normalize_private(path: &Path) -> PathBuf {
    for top in ["tmp", "var"] {
        if let Ok(rest) = path.strip_prefix(Path::new("/private").join(top)) {
            return Path::new("/").join(top).join(rest);
        }
    }
    path.to_path_buf()
}

fn normalize(path: &Path) -> PathBuf {
    if cfg!(target_os = "macos") {
        normalize_private(path)
    } else {
        path.to_path_buf()
    }
}

/// `file` relative to `cwd`, lexically normalised.
pub(crate) fn resolve(cwd: &Path, file: &str) -> PathBuf {
    wavesh_exec::lexical_join(cwd, Path::new(file))
}

fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .map(PathBuf::from)
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// What a session and its subagents share.
pub(crate) struct Shared {
    pub(crate) root: Dir,
    additional: RwLock<Vec<Dir>>,
    cwd: Mutex<PathBuf>,
    pub(crate) executor: Executor,
    pub(crate) config: ToolConfig,
    /// Task ids of released subagents, so a late TaskStop says "expired" (TASK-4).
    expired: Mutex<HashSet<String>>,
    /// The `description` of each background call, for its notification.
    descriptions: Mutex<HashMap<String, String>>,
    /// How the shell was chosen (SHELL-3).
    pub(crate) selection: ShellSelection,
    /// Claude Code settings keys ignored because they would loosen the sandbox from a
    /// file sandboxed commands may write (SBX-6), for the host to show.
    settings_notes: Vec<String>,
    /// A note for the next result (the shell fallback of SHELL-3, a supervisor that
    /// could not start), given once.
    pending_note: Mutex<Option<String>>,
    /// How commands are started (PROC-1).
    process_path: ProcessPath,
    /// The login-shell environment and how long the first command may wait for it.
    login_env: Option<(wavesh_env::ProbeHandle, std::time::Duration)>,
    /// The host's read-file state, if it has one (READ).
    pub(crate) read_state: Option<Arc<dyn ReadFileState>>,
    /// The rules and the approver (SBX-3); replaceable while the session runs.
    permissions: RwLock<Arc<Permissions>>,
    /// The home directory, for `~` in the policy.
    home: PathBuf,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every guarded value here is replaced or extended in single steps; a panic elsewhere
    // cannot leave it half-written.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    /// Who approves calls in this session now (SBX-3).
    pub(crate) fn approver(&self) -> crate::permissions::Approver {
        self.permissions
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .approver
    }

    /// The analysis and permission decision of `command` run from `cwd`, made once
    /// for the call (SBX-3, PARSE).
    pub(crate) fn prepare(&self, command: &str, unsandboxed: bool, cwd: &Path) -> Prepared {
        let dialect = match self.executor.shell().kind() {
            wavesh_exec::ShellKind::Zsh => wavesh_parse::Dialect::Zsh,
            wavesh_exec::ShellKind::Bash => wavesh_parse::Dialect::Bash,
        };
        let permissions = Arc::clone(
            &self
                .permissions
                .read()
                .unwrap_or_else(PoisonError::into_inner),
        );
        permissions.prepare(
            &Call {
                command,
                unsandboxed,
                approved: false,
                cwd: cwd.to_path_buf(),
                dialect,
                home: self.home.clone(),
            },
            &self.config.sandbox,
        )
    }

    /// The workspace root and the additional directories: the writable roots at
    /// `workspace-write`.
    pub(crate) fn roots(&self) -> Vec<PathBuf> {
        std::iter::once(self.root.literal.clone())
            .chain(
                self.additional
                    .read()
                    .unwrap_or_else(PoisonError::into_inner)
                    .iter()
                    .map(|d| d.literal.clone()),
            )
            .collect()
    }

    /// The note pending for the next result, taken once.
    pub(crate) fn take_note(&self) -> Option<String> {
        lock(&self.pending_note).take()
    }

    /// The adopted login-shell environment (ENV-1: waits at most for the probe's
    /// bound, once; later calls find it done).
    pub(crate) async fn login_env(&self) -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
        let Some((handle, budget)) = &self.login_env else {
            return Vec::new();
        };
        match handle.wait(*budget).await {
            Some(env) => env
                .adoption
                .adopted
                .iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
            None => Vec::new(),
        }
    }

    pub(crate) fn cwd(&self) -> PathBuf {
        lock(&self.cwd).clone()
    }

    pub(crate) fn is_expired(&self, id: &str) -> bool {
        lock(&self.expired).contains(id)
    }

    pub(crate) fn remember_description(&self, id: &str, description: Option<&str>) {
        if let Some(description) = description.filter(|d| !d.trim().is_empty()) {
            lock(&self.descriptions).insert(id.to_owned(), description.to_owned());
        }
    }

    pub(crate) fn description(&self, id: &str) -> Option<String> {
        lock(&self.descriptions).get(id).cloned()
    }

    /// The directory a call starts in. A current directory that no longer exists falls
    /// back to the workspace root, with the reset note (CWD-6 never fails a call).
    pub(crate) fn start_dir(&self, subagent: bool, notes: &mut Vec<String>) -> PathBuf {
        let mut cwd = lock(&self.cwd);
        if cwd.is_dir() {
            return cwd.clone();
        }
        tracing::debug!(cwd = %cwd.display(), "the current directory is gone; using the workspace root");
        if !subagent {
            *cwd = self.root.literal.clone();
            notes.push(render::cwd_reset(&self.root.literal));
        }
        self.root.literal.clone()
    }

    /// CWD-2/3: keep a directory inside the workspace or an added directory; anything
    /// else sends the next command back to the workspace root.
    pub(crate) fn adopt_cwd(&self, dir: &Path) -> Option<String> {
        let mut candidates = vec![normalize(dir)];
        if let Ok(real) = std::fs::canonicalize(dir) {
            candidates.push(normalize(&real));
        }
        let allowed = self.root.contains(&candidates)
            || self
                .additional
                .read()
                .unwrap_or_else(PoisonError::into_inner)
                .iter()
                .any(|extra| extra.contains(&candidates));
        let mut cwd = lock(&self.cwd);
        if allowed {
            if *cwd == dir {
                return None;
            }
            *cwd = dir.to_path_buf();
            Some(render::cwd_changed(dir))
        } else {
            *cwd = self.root.literal.clone();
            Some(render::cwd_reset(&self.root.literal))
        }
    }
}

/// One owner of background tasks: the session itself or a subagent.
pub(crate) struct Owner {
    pub(crate) tasks: TaskManager,
    pub(crate) subagent: bool,
}

impl Owner {
    fn new(shared: &Shared, subagent: bool) -> Owner {
        Owner {
            tasks: TaskManager::new(shared.executor.signaller()),
            subagent,
        }
    }
}

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
    }

    /// Ends the session for good: [`Session::shutdown`], then removes every file of its
    /// private directory (command outputs, persisted outputs, task output files), whose
    /// paths no caller can use once the session is gone. The directory itself goes when
    /// the session is dropped.
    pub async fn end(&self) {
        self.shutdown().await;
        self.shared.executor.private_dir().remove_files();
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

/// EXEC-4: a command whose first simple command is `sleep` is killed at its deadline;
/// any other moves to the background for `reason`. The first command is read from the
/// call's analysis; only a command that did not parse is read by its first raw word.
pub fn on_timeout(
    analysis: &wavesh_parse::Analysis,
    command: &str,
    reason: wavesh_exec::BackgroundReason,
) -> OnTimeout {
    // The analysis lists the simple commands it descends into; inside a construct it
    // does not (`a &`, a subshell, a loop) the first word as written decides.
    let first = if analysis.failure.is_none() && analysis.unsupported.is_empty() {
        analysis
            .commands
            .iter()
            .find_map(|c| c.argv.first())
            .filter(|w| w.is_static())
            .map(|w| w.value.as_str())
    } else {
        command
            .trim_start_matches(|c: char| c == '(' || c == '{' || c.is_whitespace())
            .split_whitespace()
            .next()
    };
    match first {
        Some("sleep") => OnTimeout::Kill,
        _ => OnTimeout::MoveToBackground(reason),
    }
}

/// RFC 3339 in UTC with milliseconds, without a date crate.
pub(crate) fn rfc3339(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (hour, minute, second) = (rem / 3600, (rem % 3600) / 60, rem % 60);
    // Civil-from-days (Howard Hinnant's algorithm), valid for every date after 1970.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{:03}Z",
        since.subsec_millis()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

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
