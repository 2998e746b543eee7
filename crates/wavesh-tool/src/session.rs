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
use crate::command_words::first_command_name;
use crate::config::ToolConfig;
use crate::input::{BashInput, InputError, parse_bash_input};
use crate::permissions::{Call, Permissions, Prepared, Verdict};
use crate::read_state::ReadFileState;
use crate::render;
use crate::shell_state::{self, ShellSelection};
use crate::task_tools::{
    TaskOutputInput, TaskStopInput, parse_task_output_input, parse_task_stop_input,
};

/// What the host passes with each call: the abort token (EXEC-6), the progress sink
/// (EXEC-5), the user's move to the background (BG-6), and whether the host asked its
/// user and got a yes (SBX-3).
#[derive(Clone, Default)]
pub struct CallContext {
    /// Cancelling it aborts the command: the whole tree is ended (EXEC-6). Once a command
    /// has moved to the background it no longer listens to this (BG-3).
    pub abort: tokio_util::sync::CancellationToken,
    /// Where progress events go, if anywhere.
    pub progress: Option<wavesh_exec::ProgressSink>,
    /// Cancelling it moves a running foreground command to the background at once: the
    /// user's Ctrl+B (BG-6).
    pub move_to_background: tokio_util::sync::CancellationToken,
    /// The host (or its user) approved this call after asking: the permission decision
    /// then lets it run even when it would ask, `dangerouslyDisableSandbox` included
    /// (SBX-3). The sandbox level is still chosen by the library. A decision, so it is
    /// the library's, not the executor's.
    pub approved: bool,
}

impl CallContext {
    /// The executor's part: what controls a running command.
    pub(crate) fn controls(&self) -> wavesh_exec::Controls {
        wavesh_exec::Controls {
            abort: self.abort.clone(),
            progress: self.progress.clone(),
            move_to_background: self.move_to_background.clone(),
        }
    }
}

impl std::fmt::Debug for CallContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallContext")
            .field("abort", &self.abort.is_cancelled())
            .field("progress", &self.progress.is_some())
            .field("approved", &self.approved)
            .finish()
    }
}

/// A running background task, as reported in a result (BG-1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskSnapshot {
    /// The task id.
    pub task_id: String,
    /// Always `running` when reported at start.
    pub status: &'static str,
    /// Start time, RFC 3339 in UTC.
    pub started_at: String,
    /// The shell's pid.
    pub pid: i32,
    /// The process group of the whole tree (`kill -- -PGID` stops it).
    pub pgid: i32,
    /// The live output file.
    pub output_path: PathBuf,
}

/// The result of a `Bash` call: the model text plus structured fields named as in Claude
/// Code's output schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BashResult {
    /// What the model reads.
    pub text: String,
    /// Whether the tool result is marked as an error (OUT-3).
    pub is_error: bool,
    /// `!is_error`: a timeout, kill at the deadline or move to the background is a
    /// success (EXEC-4, BG-4).
    pub success: bool,
    /// The shell's exit code, when it finished in the foreground.
    pub exit_code: Option<i32>,
    /// The command was ended by an abort, at its deadline or at the output cap.
    pub interrupted: bool,
    /// `backgrounded` when it runs as a background task, else `completed`.
    pub status: &'static str,
    /// The task id when it runs in the background (the wave spec's `bash_id`).
    #[serde(rename = "backgroundTaskId")]
    pub background_task_id: Option<String>,
    /// Moved to the background at its deadline or the assistant-mode budget.
    #[serde(rename = "assistantAutoBackgrounded")]
    pub assistant_auto_backgrounded: bool,
    /// Moved to the background by the user.
    #[serde(rename = "backgroundedByUser")]
    pub backgrounded_by_user: bool,
    /// The host should end the agent's turn: only a move by the user does (BG-6).
    #[serde(rename = "stopsAgentLoop")]
    pub stops_agent_loop: bool,
    /// The output file: live for a background task, kept for a persisted output.
    #[serde(rename = "outputPath")]
    pub output_path: Option<PathBuf>,
    /// The background task, when there is one.
    pub task: Option<TaskSnapshot>,
    /// The meaning of an expected non-zero exit code (OUT-3).
    #[serde(rename = "returnCodeInterpretation")]
    pub return_code_interpretation: Option<String>,
    /// The session's working directory after the call.
    pub cwd: PathBuf,
    /// The output as an image, when stdout was exactly one image data URL (OUT-4).
    #[serde(skip)]
    pub image: Option<crate::image_output::ImageBlock>,
}

/// The result of a TaskOutput call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskOutputResult {
    /// What the model reads.
    pub text: String,
    /// `success`, `timeout` or `not_ready`.
    pub retrieval_status: &'static str,
    /// The task.
    pub task_id: String,
    /// `running`, `completed`, `failed` or `stopped`.
    pub status: &'static str,
    /// The exit code once it ended.
    pub exit_code: Option<i32>,
    /// The full output.
    pub output_path: PathBuf,
}

/// The result of a TaskStop call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskStopResult {
    /// What the model reads.
    pub text: String,
    /// The task.
    pub task_id: String,
    /// The command it ran.
    pub command: String,
    /// The task had ended before the call: nothing was stopped.
    pub already_finished: bool,
    /// Its status after the call.
    pub status: &'static str,
    /// Its exit code.
    pub exit_code: Option<i32>,
}

/// The result of any tool call through [`Session::call_tool`].
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// What the model reads.
    pub text: String,
    /// Whether the result is marked as an error.
    pub is_error: bool,
    /// The structured result ([`BashResult`], [`TaskOutputResult`] or [`TaskStopResult`]).
    pub structured: serde_json::Value,
    /// An image the model should see (OUT-4).
    pub image: Option<crate::image_output::ImageBlock>,
}

impl ToolOutput {
    fn of(result: &impl Serialize, is_error: bool, text: &str) -> ToolOutput {
        ToolOutput {
            text: text.to_owned(),
            is_error,
            structured: serde_json::to_value(result).unwrap_or(serde_json::Value::Null),
            image: None,
        }
    }
}

/// A background task that ended, to be told to the model (BG-7).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskNotification {
    /// The task.
    pub task_id: String,
    /// `completed`, `failed` or `stopped`.
    pub status: &'static str,
    /// Its exit code.
    pub exit_code: Option<i32>,
    /// The full output.
    pub output_path: PathBuf,
    /// The `<task-notification>` text the host injects.
    pub text: String,
}

/// A task as the host's UI lists it (TASK-5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskInfo {
    /// The task id.
    pub task_id: String,
    /// The command.
    pub command: String,
    /// The call's description, if it had one.
    pub description: Option<String>,
    /// `running`, `completed`, `failed` or `stopped`.
    pub status: &'static str,
    /// The status with its cause (`stopped by you`, ...).
    pub status_detail: &'static str,
    /// The exit code once it ended.
    pub exit_code: Option<i32>,
    /// Start time, RFC 3339.
    pub started_at: String,
    /// End time, RFC 3339.
    pub ended_at: Option<String>,
    /// The shell's pid.
    pub pid: i32,
    /// The tree's process group.
    pub pgid: i32,
    /// The live output file.
    pub output_path: PathBuf,
}

/// Why a call could not run. A command that ran and failed is not an error: it is a
/// result with `is_error` set.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The input was invalid.
    #[error("invalid input: {0}")]
    Input(#[from] InputError),
    /// The command could not be started.
    #[error(transparent)]
    Exec(#[from] ExecError),
    /// The command ran but its output file could not be read.
    #[error("cannot read the output file {path}: {source}")]
    Output {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// `run_in_background` in idle-turn mode (EXEC-7).
    #[error(
        "run_in_background is not available here: this host runs every command in the foreground. Run the command without it, with a timeout that fits"
    )]
    BackgroundRefused,
    /// No task of this agent has the id.
    #[error("no background task with ID {0}")]
    UnknownTask(String),
    /// The task belonged to a subagent that has ended (TASK-4).
    #[error(
        "task {0} has expired: the subagent that started it has ended, and its processes were stopped with it"
    )]
    ExpiredTask(String),
    /// The host aborted the call.
    #[error("the call was aborted")]
    Aborted,
    /// A deny rule refuses the command (RULE-2).
    #[error("{0}")]
    Denied(String),
    /// The command needs the user's approval and the call was not approved (SBX-3).
    #[error("{}", needs_approval_text(.0))]
    NeedsApproval(wavesh_policy::Decision),
    /// No tool has this name.
    #[error("unknown tool `{0}`; the tools are Bash, TaskOutput, TaskStop and TaskList")]
    UnknownTool(String),
    /// The session's recorded shell no longer exists and there is no other (SHELL-3).
    #[error(
        "this session's shell {0} no longer exists or is not executable, and no other bash or zsh was found; install it again or start a new session"
    )]
    StaleShell(PathBuf),
    /// TaskStop's own timeout passed before the task ended.
    #[error("task {0} did not end within TaskStop's 10 s limit")]
    StopTimedOut(String),
}

/// Why a session could not be created.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The workspace root is not a directory.
    #[error("workspace {path} is not a directory: {why}")]
    Workspace {
        /// The path given.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// No usable shell.
    #[error(transparent)]
    Shell(#[from] ShellError),
    /// The private directory could not be made.
    #[error(transparent)]
    PrivateDir(#[from] PrivateDirError),
    /// Per-command limits were asked for and cannot be enforced here (PROC-1): the
    /// session refuses to start rather than run commands without them.
    #[error("cannot enforce the per-command limits: {0}")]
    Limits(String),
    /// The configuration asks for the sandbox level `off` without the builder call that
    /// chooses it (SBX-3).
    #[error(
        "the sandbox level `off` was set in the configuration only: a session runs unsandboxed only when the host says so with SessionBuilder::sandbox_level(Level::Off)"
    )]
    UnsandboxedByDefault,
    /// A Claude Code settings file could not be applied.
    #[error(transparent)]
    Settings(#[from] crate::sandbox::SandboxSettingsError),
}

/// How a session starts and ends its commands' processes.
type Processes = (Arc<dyn Spawner>, Arc<dyn Signaller>);

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

/// Builds a [`Session`].
pub struct SessionBuilder {
    root: PathBuf,
    additional_dirs: Vec<PathBuf>,
    config: Option<ToolConfig>,
    shell: Option<Result<Shell, ShellError>>,
    private_base: Option<PathBuf>,
    spawner: Option<Arc<dyn Spawner>>,
    supervisor: Option<PathBuf>,
    #[cfg(target_os = "linux")]
    supervisor_options: wavesh_exec::supervisor::Options,
    login_env: LoginEnvChoice,
    session_id: Option<String>,
    state_dir: Option<PathBuf>,
    read_state: Option<Arc<dyn ReadFileState>>,
    permissions: Arc<Permissions>,
    home: Option<PathBuf>,
    /// The level the host chose ([`SessionBuilder::sandbox_level`]).
    level: Option<wavesh_exec::sandbox::Level>,
    /// Claude Code's settings files are read (on by default).
    claude_settings: bool,
    /// Settings files named by the host, read after the usual ones.
    settings_files: Vec<PathBuf>,
    /// The host's last word on the sandbox settings, after the files.
    sandbox_overrides: Vec<SandboxOverride>,
}

/// A change the host makes to the sandbox settings after Claude Code's files.
type SandboxOverride = Box<dyn Fn(&mut crate::sandbox::SandboxSettings) + Send + Sync>;

/// Where a session's login-shell environment comes from (ENV).
#[derive(Debug, Clone)]
enum LoginEnvChoice {
    /// The process-wide probe, started on first use.
    Process,
    /// A probe the host started itself.
    Handle(wavesh_env::ProbeHandle, std::time::Duration),
    /// None: commands inherit the host's environment as it is.
    Off,
}

impl SessionBuilder {
    /// Adds a directory the shell may stay in besides the workspace (CWD-2).
    pub fn additional_dir(&mut self, dir: impl Into<PathBuf>) -> &mut Self {
        self.additional_dirs.push(dir.into());
        self
    }

    /// Uses this configuration instead of [`ToolConfig::from_env`].
    pub fn config(&mut self, config: ToolConfig) -> &mut Self {
        self.config = Some(config);
        self
    }

    /// Uses this shell instead of resolving one (SHELL-2).
    pub fn shell(&mut self, shell: Shell) -> &mut Self {
        self.shell = Some(Ok(shell));
        self
    }

    /// Uses this resolution result instead of resolving from the environment: for hosts
    /// with their own shell discovery (and a resumed session whose host has none).
    pub fn shell_resolution(&mut self, resolution: Result<Shell, ShellError>) -> &mut Self {
        self.shell = Some(resolution);
        self
    }

    /// Puts the private directory under `base` instead of the system temporary directory.
    pub fn private_base(&mut self, base: impl Into<PathBuf>) -> &mut Self {
        self.private_base = Some(base.into());
        self
    }

    /// Commands inherit the host's environment only: no login-shell probe.
    pub fn no_login_env(&mut self) -> &mut Self {
        self.login_env = LoginEnvChoice::Off;
        self
    }

    /// Uses a probe the host started (`budget` bounds the first command's wait).
    pub fn login_env(
        &mut self,
        handle: wavesh_env::ProbeHandle,
        budget: std::time::Duration,
    ) -> &mut Self {
        self.login_env = LoginEnvChoice::Handle(handle, budget);
        self
    }

    /// Names the session so its shell choice is recorded and restored on resume
    /// (SHELL-3); `state_dir` holds the records.
    pub fn session(
        &mut self,
        session_id: impl Into<String>,
        state_dir: impl Into<PathBuf>,
    ) -> &mut Self {
        self.session_id = Some(session_id.into());
        self.state_dir = Some(state_dir.into());
        self
    }

    /// The host's read-file state: Bash reads are recorded there and formatter runs are
    /// checked against it (READ).
    pub fn read_state(&mut self, state: Arc<dyn ReadFileState>) -> &mut Self {
        self.read_state = Some(state);
        self
    }

    /// Starts every command through a per-session supervisor (Linux): `program
    /// __supervise` must run `wavesh_exec::supervisor::run_helper` (the `wavesh` binary
    /// does). Descendants that leave the process group are then ended with the rest, and
    /// nothing survives the host. Ignored elsewhere and when a spawner is set.
    pub fn supervisor(&mut self, program: impl Into<PathBuf>) -> &mut Self {
        self.supervisor = Some(program.into());
        self
    }

    /// How the supervisor holds trees (Linux): per-command cgroups where the machine
    /// allows them (on by default) and per-command memory and pids limits (off).
    #[cfg(target_os = "linux")]
    pub fn supervisor_options(&mut self, options: wavesh_exec::supervisor::Options) -> &mut Self {
        self.supervisor_options = options;
        self
    }

    /// Decides commands under these rules and this approver (SBX-3). By default the host
    /// approves every call and no rule applies; deny rules and the sandbox level are
    /// always the library's.
    pub fn permissions(&mut self, permissions: Permissions) -> &mut Self {
        self.permissions = Arc::new(permissions);
        self
    }

    /// The sandbox level of commands that are not approved as read-only, chosen by the
    /// host (SBX-3): Claude Code's `sandbox.enabled` then does not change it. Without
    /// this call a session runs them at `workspace-write`, or at what the settings say;
    /// `off` comes from this call, or from a settings file the user wrote, never from a
    /// default.
    pub fn sandbox_level(&mut self, level: wavesh_exec::sandbox::Level) -> &mut Self {
        self.level = Some(level);
        self
    }

    /// Reads no Claude Code settings file: the sandbox is the configuration's alone.
    pub fn no_claude_settings(&mut self) -> &mut Self {
        self.claude_settings = false;
        self
    }

    /// Also applies the `sandbox` object of this settings file, after the user's
    /// (`~/.claude/settings.json`), the project's (`.claude/settings.json`) and the
    /// local one (`.claude/settings.local.json`).
    pub fn settings_file(&mut self, path: impl Into<PathBuf>) -> &mut Self {
        self.settings_files.push(path.into());
        self
    }

    /// Changes the sandbox settings after Claude Code's files were applied: the host's
    /// own flags (a command-line `--auto-allow-sandboxed`) win over the files.
    pub fn sandbox_override(
        &mut self,
        change: impl Fn(&mut crate::sandbox::SandboxSettings) + Send + Sync + 'static,
    ) -> &mut Self {
        self.sandbox_overrides.push(Box::new(change));
        self
    }

    /// The sandbox settings after the host's level and Claude Code's settings files, and
    /// a note for each file whose loosening keys were ignored (SBX-3, SBX-6).
    fn sandbox_settings(
        &self,
        config: &mut ToolConfig,
        root: &Path,
    ) -> Result<Vec<String>, SessionError> {
        use wavesh_exec::sandbox::Level;
        match self.level {
            Some(level) => config.sandbox.level = level,
            None if config.sandbox.level == Level::Off => {
                return Err(SessionError::UnsandboxedByDefault);
            }
            None => {}
        }
        let mut notes = Vec::new();
        if self.claude_settings {
            notes = self.apply_settings_files(config, root)?;
        }
        for change in &self.sandbox_overrides {
            change(&mut config.sandbox);
        }
        Ok(notes)
    }

    /// Applies Claude Code's settings files to `config`; a note for each file whose
    /// loosening keys were ignored.
    fn apply_settings_files(
        &self,
        config: &mut ToolConfig,
        root: &Path,
    ) -> Result<Vec<String>, SessionError> {
        let mut notes = Vec::new();
        let home = self.home.clone().or_else(home_dir);
        // A file inside a directory sandboxed commands may write can only tighten: a
        // command could have written it (SBX-6).
        let writable: Vec<PathBuf> = std::iter::once(root.to_path_buf())
            .chain(self.additional_dirs.iter().map(|d| absolute(d)))
            .chain(config.sandbox.allow_write.iter().cloned())
            .collect();
        for path in
            crate::sandbox::claude_settings_files(root, home.as_deref(), &self.settings_files)
        {
            let text = match std::fs::read_to_string(&path) {
                Ok(text) => text,
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
                Err(error) => {
                    return Err(SessionError::Settings(
                        crate::sandbox::SandboxSettingsError {
                            path,
                            why: format!("cannot read it: {error}"),
                        },
                    ));
                }
            };
            let ignored = config.sandbox.apply_claude_settings(
                &text,
                &path,
                root,
                home.as_deref(),
                self.level.is_some(),
                crate::sandbox::inside_any(&path, &writable),
            )?;
            if !ignored.is_empty() {
                notes.push(format!(
                    "{} ignored: {} would loosen the sandbox, and sandboxed commands may write that file",
                    path.display(),
                    ignored.join(", ")
                ));
            }
        }
        Ok(notes)
    }

    /// The home directory: commands get it as `HOME`, and the sandbox hides its secrets
    /// (default: `$HOME`, as it is).
    pub fn home(&mut self, home: impl Into<PathBuf>) -> &mut Self {
        self.home = Some(home.into());
        self
    }

    /// The executor's sandbox configuration from the tool configuration.
    fn sandbox_config(
        &self,
        config: &ToolConfig,
        root: &Path,
        private: &Path,
    ) -> wavesh_exec::sandbox::SandboxConfig {
        let home = self.home.clone().or_else(home_dir);
        let sandbox = &config.sandbox;
        wavesh_exec::sandbox::SandboxConfig {
            roots: std::iter::once(root.to_path_buf())
                .chain(self.additional_dirs.iter().map(|d| absolute(d)))
                .collect(),
            extra_writable: sandbox.allow_write.clone(),
            extra_read_only: sandbox.deny_write.clone(),
            state_dirs: self
                .state_dir
                .iter()
                .cloned()
                .chain(std::iter::once(private.to_path_buf()))
                .collect(),
            secrets: sandbox.secrets(home.as_deref()),
            env: sandbox.env_filter(),
            strict: sandbox.strict,
            home,
            private_dir: Some(private.to_path_buf()),
        }
    }

    /// Starts shells through `spawner` (a test double, a host's own).
    pub fn spawner(&mut self, spawner: Arc<dyn Spawner>) -> &mut Self {
        self.spawner = Some(spawner);
        self
    }

    /// The spawner and signaller: a host's own spawner, else the supervisor where there is
    /// one and it starts, else direct children.
    fn processes(&self) -> Result<Processes, SessionError> {
        let direct = default_signaller();
        if let Some(spawner) = &self.spawner {
            return Ok((Arc::clone(spawner), direct));
        }
        #[cfg(target_os = "linux")]
        if let Some(program) = &self.supervisor {
            use wavesh_exec::supervisor::{SupervisedSignaller, SupervisedSpawner, Supervisor};
            match Supervisor::start_with(program, &self.supervisor_options) {
                Ok(supervisor) => {
                    return Ok((
                        Arc::new(SupervisedSpawner::new(supervisor.clone())),
                        Arc::new(SupervisedSignaller::new(supervisor, direct)),
                    ));
                }
                Err(error)
                    if self.supervisor_options.limits != wavesh_exec::cgroup::Limits::default() =>
                {
                    return Err(SessionError::Limits(error.to_string()));
                }
                Err(error) => tracing::warn!(
                    %error,
                    "no supervisor: process trees are tracked by process group only"
                ),
            }
        }
        Ok((Arc::new(DirectSpawner), direct))
    }

    /// Checks the workspace, chooses the shell and creates the private directory.
    pub fn build(&self) -> Result<Session, SessionError> {
        let root = absolute(&self.root);
        if !root.is_dir() {
            return Err(SessionError::Workspace {
                path: root,
                why: "it does not exist or is not a directory".into(),
            });
        }
        let candidate = match &self.shell {
            Some(resolution) => resolution.clone(),
            None => wavesh_exec::resolve_default_shell(),
        };
        let (selection, shell) = self.select_shell(candidate)?;
        let mut config = self.config.clone().unwrap_or_else(ToolConfig::from_env);
        let settings_notes = self.sandbox_settings(&mut config, &root)?;
        let dir = Arc::new(PrivateDir::create(self.private_base.as_deref())?);
        let dir_path = dir.path().to_path_buf();
        let (spawner, signaller) = self.processes()?;
        let shell_path = shell.path().to_path_buf();
        let mut executor = Executor::new(shell, dir, spawner, Arc::clone(&signaller));
        executor.set_output_cap(config.output_cap_bytes);
        let sandbox_config = self.sandbox_config(&config, &root, dir_path.as_path());
        // The login probe runs the home's start-up files outside any sandbox: never where
        // a sandboxed command of this session could write them (SBX-6).
        let writable_home = config.sandbox.level.is_sandboxed()
            && sandbox_config.home.as_deref().is_some_and(|home| {
                let writable: Vec<PathBuf> = sandbox_config
                    .roots
                    .iter()
                    .chain(&sandbox_config.extra_writable)
                    .cloned()
                    .collect();
                wavesh_exec::sandbox::home_is_writable(home, &writable)
            });
        executor.set_sandbox(sandbox_config);
        if let Some(home) = &self.home {
            executor.set_env("HOME", Some(home.clone().into_os_string()));
        }
        if config.search_shadowing {
            let trusted = config.search_binary_trusted;
            match config.search_binary.as_deref().map(|binary| {
                if trusted {
                    Ok(())
                } else {
                    search_binary_works(binary)
                }
            }) {
                Some(Ok(())) => executor.set_search_binary(config.search_binary.clone()),
                Some(Err(why)) => {
                    tracing::warn!(%why, "the built-in grep does not answer; commands use the system grep");
                    config.search_shadowing = false;
                }
                None => config.search_shadowing = false,
            }
        }
        let shared = Arc::new(Shared {
            cwd: Mutex::new(root.clone()),
            root: Dir::new(root),
            additional: RwLock::new(
                self.additional_dirs
                    .iter()
                    .map(|d| Dir::new(absolute(d)))
                    .collect(),
            ),
            executor,
            config,
            expired: Mutex::default(),
            descriptions: Mutex::default(),
            settings_notes,
            pending_note: Mutex::new(
                match &selection {
                    ShellSelection::Fallback { was } => {
                        Some(shell_state::fallback_note(was, shell_path.as_path()))
                    }
                    _ => None,
                }
                .or_else(|| {
                    (writable_home && !matches!(self.login_env, LoginEnvChoice::Off)).then(|| {
                        "The login shell's environment was not read: the home directory is \
                         writable by sandboxed commands, so its start-up files could have been \
                         written by one. Commands get wavesh's own environment."
                            .to_owned()
                    })
                }),
            ),
            selection,
            read_state: self.read_state.clone(),
            permissions: RwLock::new(Arc::clone(&self.permissions)),
            home: self.home.clone().or_else(home_dir).unwrap_or_default(),
            login_env: match &self.login_env {
                LoginEnvChoice::Off => None,
                _ if writable_home => None,
                LoginEnvChoice::Handle(handle, budget) => Some((handle.clone(), *budget)),
                LoginEnvChoice::Process => Some((
                    wavesh_env::start(),
                    wavesh_env::probe_budget(&wavesh_env::ProbeConfig::from_process()),
                )),
            },
        });
        Ok(Session {
            owner: Owner::new(&shared, false),
            shared,
        })
    }
}

impl SessionBuilder {
    /// SHELL-3: a named session with a record resumes it (restored, fallback, stale);
    /// otherwise the candidate is used and, for a named session, recorded.
    fn select_shell(
        &self,
        candidate: Result<Shell, ShellError>,
    ) -> Result<(ShellSelection, Shell), SessionError> {
        let (Some(id), Some(state)) = (&self.session_id, &self.state_dir) else {
            return Ok((ShellSelection::New, candidate?));
        };
        if let Some(recorded) = shell_state::recorded(state, id) {
            let executable = |path: &Path| RealFiles.is_executable(path);
            let (selection, shell) =
                shell_state::resume(&recorded, candidate.as_ref().ok(), executable);
            if let ShellSelection::Fallback { .. } = selection
                && let Some(shell) = &shell
                && let Err(error) = shell_state::record(state, id, shell)
            {
                tracing::warn!(%error, "cannot record the session's shell");
            }
            // A stale session keeps the missing shell's path, so every command names it.
            let shell =
                shell.unwrap_or_else(|| Shell::new(&recorded, wavesh_exec::ShellKind::Bash));
            return Ok((selection, shell));
        }
        let shell = candidate?;
        if let Err(error) = shell_state::record(state, id, &shell) {
            tracing::warn!(%error, "cannot record the session's shell");
        }
        Ok((ShellSelection::New, shell))
    }
}

#[cfg(unix)]
fn default_signaller() -> Arc<dyn Signaller> {
    Arc::new(wavesh_exec::PosixSignaller)
}

#[cfg(windows)]
fn default_signaller() -> Arc<dyn Signaller> {
    Arc::new(wavesh_exec::TaskkillSignaller)
}

/// `file` relative to `cwd`, lexically normalised.
pub(crate) fn resolve(cwd: &Path, file: &str) -> PathBuf {
    wavesh_exec::lexical_join(cwd, Path::new(file))
}

/// Checks once per session that `binary grep` runs and searches, so a missing or broken
/// binary leaves commands on the system grep without a word to the model (SEARCH-7).
fn search_binary_works(binary: &Path) -> Result<(), String> {
    use std::io::{Read, Write};
    use std::process::{Command, Stdio};
    let mut child = Command::new(binary)
        .args(["grep", "-o", "b"])
        .env("WAVESH_GREP_STRICT", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|error| format!("cannot run {}: {error}", binary.display()))?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(b"ab\n");
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{} grep did not finish in 5 s", binary.display()));
            }
        }
    }
    let mut out = String::new();
    if let Some(mut stdout) = child.stdout.take() {
        let _ = stdout.read_to_string(&mut out);
    }
    if out == "b\n" {
        Ok(())
    } else {
        Err(format!(
            "{} grep printed {out:?} for a known search",
            binary.display()
        ))
    }
}

/// The refusal of a command that needs approval: why, and the rule that would allow it.
fn needs_approval_text(decision: &wavesh_policy::Decision) -> String {
    let mut text = String::from("This command needs the user's approval");
    if !decision.reasons.is_empty() {
        text.push_str(&format!(" ({})", decision.reasons.join("; ")));
    }
    text.push('.');
    if !decision.suggestions.is_empty() {
        text.push_str(&format!(
            " To allow it, add to permissions.allow in .claude/settings.local.json: {}",
            decision.suggestions.join(", ")
        ));
    }
    text
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
    /// A note for the next result (the shell fallback of SHELL-3), given once.
    pending_note: Mutex<Option<String>>,
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
    shared: Arc<Shared>,
    owner: Owner,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("root", &self.shared.root.literal)
            .field("cwd", &self.cwd())
            .finish_non_exhaustive()
    }
}

/// The tool calls shared by [`Session`] and [`Subagent`], written once.
macro_rules! agent_calls {
    () => {
        fn agent(&self) -> Agent<'_> {
            Agent::new(&self.shared, &self.owner)
        }

        /// Validates a raw JSON input and runs it.
        pub async fn bash_json(
            &self,
            input: &serde_json::Value,
            ctx: &CallContext,
        ) -> Result<BashResult, ToolError> {
            let input = parse_bash_input(input)?;
            self.bash(input, ctx).await
        }

        /// Runs a `Bash` call.
        pub async fn bash(
            &self,
            input: BashInput,
            ctx: &CallContext,
        ) -> Result<BashResult, ToolError> {
            self.agent().bash(input, ctx, None).await
        }

        /// Runs a `Bash` call with the analysis and decision made for it beforehand
        /// ([`Session::prepare`]); they are made again only if the command, the sandbox
        /// flag or the working directory changed since.
        pub async fn bash_prepared(
            &self,
            input: BashInput,
            prepared: Prepared,
            ctx: &CallContext,
        ) -> Result<BashResult, ToolError> {
            self.agent().bash(input, ctx, Some(prepared)).await
        }

        /// Validates a raw TaskOutput input and runs it.
        pub async fn task_output_json(
            &self,
            input: &serde_json::Value,
            ctx: &CallContext,
        ) -> Result<TaskOutputResult, ToolError> {
            let input = parse_task_output_input(input)?;
            self.task_output(input, ctx).await
        }

        /// TaskOutput (TASK-1..3).
        pub async fn task_output(
            &self,
            input: TaskOutputInput,
            ctx: &CallContext,
        ) -> Result<TaskOutputResult, ToolError> {
            self.agent().task_output(input, ctx).await
        }

        /// Validates a raw TaskStop input and runs it.
        pub async fn task_stop_json(
            &self,
            input: &serde_json::Value,
        ) -> Result<TaskStopResult, ToolError> {
            let input = parse_task_stop_input(input)?;
            self.task_stop(input).await
        }

        /// TaskStop (TASK-4): the model stops a task.
        pub async fn task_stop(&self, input: TaskStopInput) -> Result<TaskStopResult, ToolError> {
            self.agent()
                .stop(&input.task_id, wavesh_exec::StopCause::Model)
                .await
        }

        /// The user stops a task from the host's UI; its notification says so (BG-7).
        pub async fn stop_task_by_user(&self, task_id: &str) -> Result<TaskStopResult, ToolError> {
            self.agent()
                .stop(task_id, wavesh_exec::StopCause::User)
                .await
        }

        /// Tasks that ended since the last call, each returned once (BG-7, TASK-3).
        pub fn take_notifications(&self) -> Vec<TaskNotification> {
            self.agent().take_notifications()
        }

        /// This agent's tasks, oldest first (TASK-5).
        pub fn list_tasks(&self) -> Vec<TaskInfo> {
            self.agent().list_tasks()
        }

        /// The last 8192 bytes of a task's output, for the host's UI (TASK-5).
        pub fn task_tail(&self, task_id: &str) -> Result<String, ToolError> {
            self.agent().task_tail(task_id)
        }

        /// Changes whenever a task of this agent is registered or ends: look at
        /// [`Self::take_notifications`] then.
        pub fn subscribe_tasks(&self) -> watch::Receiver<u64> {
            self.owner.tasks.subscribe()
        }

        /// Runs any of the tools by name (aliases included) on a raw JSON input: the one
        /// entry point for hosts and the MCP server.
        pub async fn call_tool(
            &self,
            name: &str,
            input: &serde_json::Value,
            ctx: &CallContext,
        ) -> Result<ToolOutput, ToolError> {
            self.call_tool_prepared(name, input, ctx, None).await
        }

        /// [`Self::call_tool`], with the Bash call's analysis and decision made
        /// beforehand (an MCP gate's): not made again unless the call changed.
        pub async fn call_tool_prepared(
            &self,
            name: &str,
            input: &serde_json::Value,
            ctx: &CallContext,
            prepared: Option<Prepared>,
        ) -> Result<ToolOutput, ToolError> {
            if name == crate::BASH_TOOL_NAME {
                let input = parse_bash_input(input)?;
                let result = self.agent().bash(input, ctx, prepared).await?;
                let mut output = ToolOutput::of(&result, result.is_error, &result.text);
                output.image = result.image;
                return Ok(output);
            }
            if crate::task_tools::is_task_output(name) {
                let result = self.task_output_json(input, ctx).await?;
                return Ok(ToolOutput::of(&result, false, &result.text));
            }
            if crate::task_tools::is_task_stop(name) {
                let result = self.task_stop_json(input).await?;
                return Ok(ToolOutput::of(&result, false, &result.text));
            }
            if crate::task_tools::is_task_list(name) {
                crate::task_tools::parse_task_list_input(input)?;
                let tasks = self.list_tasks();
                let text = crate::task_tools::task_list_text(&tasks);
                let result = serde_json::json!({"text": text, "tasks": tasks});
                return Ok(ToolOutput::of(&result, false, &text));
            }
            Err(ToolError::UnknownTool(name.to_owned()))
        }

        /// The raw task manager of this agent.
        pub fn tasks(&self) -> &TaskManager {
            &self.owner.tasks
        }
    };
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
            level: None,
            claude_settings: true,
            settings_files: Vec::new(),
            sandbox_overrides: Vec::new(),
        }
    }

    agent_calls!();

    /// The settings keys this session ignored because they would loosen the sandbox from
    /// a file sandboxed commands may write (SBX-6), one line per file, for the host to
    /// show its user.
    pub fn settings_notes(&self) -> &[String] {
        &self.shared.settings_notes
    }

    /// What would happen to `input` if called now: run at a level, ask, or refuse
    /// (SBX-3). A host that asks its user calls this first, then calls [`Session::bash`]
    /// with `CallContext::approved` once the user said yes.
    pub fn verdict(&self, input: &BashInput) -> Verdict {
        self.prepare(input).verdict().clone()
    }

    /// The call's analysis and decision, made once: [`Prepared::verdict`] says what
    /// would happen, and [`Session::bash_prepared`] runs the call without analysing it
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
            owner: Owner::new(&self.shared, true),
            shared: Arc::clone(&self.shared),
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
    shared: Arc<Shared>,
    owner: Owner,
}

impl std::fmt::Debug for Subagent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subagent").finish_non_exhaustive()
    }
}

impl Subagent {
    agent_calls!();

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
/// any other moves to the background for `reason`.
pub fn on_timeout(command: &str, reason: wavesh_exec::BackgroundReason) -> OnTimeout {
    match first_command_name(command) {
        Some(name) if name == "sleep" => OnTimeout::Kill,
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
    /// A missing or non-searching binary turns shadowing off (SEARCH-7).
    #[cfg(unix)]
    #[test]
    fn search_7_search_binary_must_answer() {
        assert!(search_binary_works(Path::new("/nonexistent/wavesh")).is_err());
        assert!(search_binary_works(Path::new("/bin/true")).is_err());
    }

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

    #[test]
    fn exec_4_sleep_first_is_killed() {
        use wavesh_exec::BackgroundReason::Timeout;
        let moved = OnTimeout::MoveToBackground(Timeout);
        assert_eq!(on_timeout("sleep 60", Timeout), OnTimeout::Kill);
        assert_eq!(on_timeout("sleep 5 && npm test", Timeout), OnTimeout::Kill);
        assert_eq!(on_timeout("A=1 sleep 5", Timeout), OnTimeout::Kill);
        assert_eq!(on_timeout("npm test; sleep 5", Timeout), moved);
        assert_eq!(on_timeout("echo a; sleep 3; echo b", Timeout), moved);
        assert_eq!(on_timeout("sleepy", Timeout), moved);
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
