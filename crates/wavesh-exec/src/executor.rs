//! Running one command: the foreground deadline, the move to the background, abort and
//! timeout kill (EXEC, BG-1..3).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use crate::job::{BackgroundReason, ExitRecord, Job, JobSpec, Phase, StopCause};
use crate::kill::Signaller;
use crate::output::OutputFile;
use crate::private_dir::{PrivateDir, PrivateDirError, random_name};
use crate::sandbox::{CommandFiles, Level, Plan, SandboxConfig, SandboxError};
use crate::shell::Shell;
use crate::spawn::{ExitStatus, SpawnSpec, Spawner, prelude};
use crate::tasks::TaskManager;

/// Progress events start this long after the command (EXEC-5)...
pub const PROGRESS_START: Duration = Duration::from_secs(2);
/// ...and then come this often.
pub const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// What to do when a foreground command reaches its deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnTimeout {
    /// Move it to the background (BG-3), recording why.
    MoveToBackground(BackgroundReason),
    /// End the whole tree (EXEC-4 for `sleep …`, and idle-turn mode, EXEC-7).
    Kill,
}

/// How to run a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Wait for it, up to `timeout`.
    Foreground {
        /// The foreground deadline; zero means immediately.
        timeout: Duration,
        /// What happens at the deadline.
        on_timeout: OnTimeout,
    },
    /// Start it as a background task and return at once, with no timeout at all (BG-1).
    Background,
}

/// One command to run.
#[derive(Debug, Clone)]
pub struct Request {
    /// The command text, run by the shell as written.
    pub command: String,
    /// The directory it starts in.
    pub cwd: PathBuf,
    /// Foreground or background.
    pub mode: Mode,
    /// Variables set for this command on top of the executor's (the adopted login-shell
    /// environment, ENV-7).
    pub env: Vec<(OsString, OsString)>,
    /// The sandbox level it runs at (SBX-1); chosen by the caller's permission decision.
    pub sandbox: Level,
    /// A sandboxed command keeps TCP/UDP: it reads over the network, as `gh pr view`
    /// does (`wavesh_policy::reads_over_network`). Files stay sandboxed.
    pub network: bool,
    /// The writable roots at `workspace-write` (the workspace and the additional
    /// directories as they are now); empty: the executor's configured roots.
    pub roots: Vec<PathBuf>,
    /// Run in a pseudo-terminal of this size (PTY-1): stdin, stdout and stderr are the
    /// terminal, and the job carries it ([`crate::Job::terminal`]). Such a command is a
    /// task from the start, so it runs with [`Mode::Background`].
    pub tty: Option<crate::pty::TtySize>,
}

/// A progress event for the host (never for the model, EXEC-5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Time since the command started.
    pub elapsed: Duration,
    /// Bytes written to the output so far.
    pub output_bytes: u64,
}

/// Receives progress events.
pub type ProgressSink = Arc<dyn Fn(Progress) + Send + Sync>;

/// What the caller can do to a running call.
#[derive(Clone, Default)]
pub struct Controls {
    /// Cancelling it aborts the command: the whole tree is ended (EXEC-6). Once a command
    /// has moved to the background it no longer listens to this (BG-3).
    pub abort: CancellationToken,
    /// Where progress events go, if anywhere.
    pub progress: Option<ProgressSink>,
    /// Cancelling it moves a running foreground command to the background at once: the
    /// user's Ctrl+B (BG-6).
    pub move_to_background: CancellationToken,
}

impl std::fmt::Debug for Controls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Controls")
            .field("abort", &self.abort.is_cancelled())
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

/// How a foreground command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// It exited by itself.
    Exited,
    /// It reached its deadline and was killed (whole tree).
    KilledAtTimeout,
    /// The host aborted it (whole tree).
    Aborted,
    /// Its output reached the cap and it was stopped (BG-8).
    OutputCap,
}

/// A command that finished in the foreground.
#[derive(Debug)]
pub struct Finished {
    /// The shell's exit status.
    pub status: ExitStatus,
    /// Why it ended.
    pub ending: Ending,
    /// Its output; removed when dropped unless kept.
    pub output: OutputFile,
    /// The directory the shell ended in, when it exited 0 and could be read (CWD-1).
    pub cwd_after: Option<PathBuf>,
    /// How long it ran.
    pub duration: Duration,
    /// The per-command limit that ended it, in words for the model (PROC-1), if one did.
    pub limit: Option<String>,
    /// The sandbox it ran in, if any.
    pub sandbox: Option<Arc<SandboxOutcome>>,
}

pub use crate::sandbox::SandboxOutcome;

/// A command now running as a background task.
#[derive(Debug, Clone)]
pub struct Backgrounded {
    /// The task.
    pub job: Arc<Job>,
    /// Why it is in the background.
    pub reason: BackgroundReason,
}

/// The result of [`Executor::run`].
#[derive(Debug)]
pub enum Outcome {
    /// It finished in the foreground.
    Finished(Finished),
    /// It runs in the background.
    Backgrounded(Backgrounded),
}

/// Why a command could not be started.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// A private file could not be made.
    #[error(transparent)]
    PrivateDir(#[from] PrivateDirError),
    /// Writing the command to its private file failed.
    #[error("cannot write the command to {path}: {source}")]
    CommandFile {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The working directory does not exist.
    #[error("working directory {0} does not exist")]
    NoWorkingDirectory(PathBuf),
    /// The sandbox could not be set up, so the command was not run.
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    /// The sandbox's TMPDIR could not be made.
    #[error("cannot create the sandbox TMPDIR {path}: {source}")]
    SandboxTmp {
        /// The directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The shell could not be started.
    #[error("cannot start {shell}: {source}")]
    Spawn {
        /// The shell's path.
        shell: String,
        /// The cause.
        source: std::io::Error,
    },
}

/// Runs commands in fresh shells.
pub struct Executor {
    /// The next read-only command's shell, started ahead of it. Before `inner`: its
    /// files go before the private directory they are in.
    #[cfg(target_os = "linux")]
    ahead: Arc<crate::ahead::Ahead>,
    inner: Arc<Inner>,
}

impl Drop for Executor {
    fn drop(&mut self) {
        // A start in progress keeps the settings alive and ends its shell when done.
        #[cfg(target_os = "linux")]
        self.ahead.close_now();
    }
}

/// What starting a command needs; shared with the start of the next command's shell
/// ahead of it ([`crate::ahead`]), which runs after the call that scheduled it returned.
#[derive(Clone)]
pub(crate) struct Inner {
    pub(crate) shell: Shell,
    pub(crate) dir: Arc<PrivateDir>,
    pub(crate) spawner: Arc<dyn Spawner>,
    pub(crate) signaller: Arc<dyn Signaller>,
    env: Vec<(OsString, Option<OsString>)>,
    pub(crate) output_cap: Option<u64>,
    pub(crate) search: Option<PathBuf>,
    sandbox: SandboxConfig,
    /// The session's network namespace and proxy (NET-1, NET-2), when it has them.
    pub(crate) network: Option<crate::net::SessionNetwork>,
}

/// The default output cap: 5 GiB (BG-8).
pub const DEFAULT_OUTPUT_CAP: u64 = 5 * 1024 * 1024 * 1024;

impl std::fmt::Debug for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executor")
            .field("shell", &self.inner.shell)
            .field("dir", &self.inner.dir.path())
            .finish_non_exhaustive()
    }
}

impl Executor {
    /// An executor running `shell`, with private files in `dir`.
    pub fn new(
        shell: Shell,
        dir: Arc<PrivateDir>,
        spawner: Arc<dyn Spawner>,
        signaller: Arc<dyn Signaller>,
    ) -> Executor {
        let env = crate::env_vars::STRIPPED_FROM_COMMANDS
            .iter()
            .map(|key| (OsString::from(key), None))
            .collect();
        Executor {
            inner: Arc::new(Inner {
                shell,
                dir,
                spawner,
                signaller,
                env,
                output_cap: Some(DEFAULT_OUTPUT_CAP),
                search: None,
                sandbox: SandboxConfig::default(),
                network: None,
            }),
            #[cfg(target_os = "linux")]
            ahead: Arc::default(),
        }
    }

    /// The settings, to change: a shell started ahead under the old ones is discarded.
    fn inner_mut(&mut self) -> &mut Inner {
        #[cfg(target_os = "linux")]
        self.ahead.discard_now();
        Arc::make_mut(&mut self.inner)
    }

    /// Sets the output cap in bytes (BG-8); `None` lifts it.
    pub fn set_output_cap(&mut self, cap: Option<u64>) {
        self.inner_mut().output_cap = cap;
    }

    /// Makes `grep` inside commands the search of `binary` (`binary grep ARGS`), or the
    /// system's again with `None` (SEARCH-4).
    pub fn set_search_binary(&mut self, binary: Option<PathBuf>) {
        self.inner_mut().search = binary;
    }

    /// Sets the session's network namespace and proxy (NET-1, NET-2), or none.
    pub fn set_network(&mut self, network: Option<crate::net::SessionNetwork>) {
        self.inner_mut().network = network;
    }

    /// The session's network, if it has one.
    pub fn network(&self) -> Option<&crate::net::SessionNetwork> {
        self.inner.network.as_ref()
    }

    /// Sets what every sandboxed command of this executor is confined by: the writable
    /// roots, the secrets, the environment filter, strictness.
    pub fn set_sandbox(&mut self, config: SandboxConfig) {
        self.inner_mut().sandbox = config;
    }

    /// The sandbox configuration.
    pub fn sandbox_config(&self) -> &SandboxConfig {
        &self.inner.sandbox
    }

    /// The binary shadowing `grep` inside commands, if any.
    pub fn search_binary(&self) -> Option<&Path> {
        self.inner.search.as_deref()
    }

    /// Sets (`Some`) or removes (`None`) a variable in every command's environment.
    pub fn set_env(&mut self, key: impl Into<OsString>, value: Option<OsString>) {
        let key = key.into();
        let inner = self.inner_mut();
        inner.env.retain(|(existing, _)| *existing != key);
        inner.env.push((key, value));
    }

    /// Whether the next read-only command's shell is started ahead of it, after each
    /// command (on by default; it needs a spawner that can, the supervisor): the
    /// sandbox's start then leaves the call's path. Off for a single command
    /// (`wavesh run`), where nothing would use it.
    pub fn set_start_ahead(&mut self, on: bool) {
        #[cfg(target_os = "linux")]
        {
            self.ahead.discard_now();
            self.ahead.set_enabled(on);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = on;
    }

    /// Ends the shell started ahead, if one waits, and waits for a start in progress:
    /// after this, until the next command, no process or file of this executor is left
    /// but those of commands and tasks.
    pub async fn end_started_ahead(&self) {
        #[cfg(target_os = "linux")]
        self.ahead.discard().await;
    }

    /// Ends the shell started ahead, waits for a start in progress, and starts none
    /// again: the end of a session, whose private files are removed next, while a call
    /// still finishing would otherwise start one more.
    pub async fn close_start_ahead(&self) {
        #[cfg(target_os = "linux")]
        {
            self.ahead.set_enabled(false);
            self.ahead.discard().await;
        }
    }

    /// Waits until the start ahead scheduled by the last call, if any, is done: a host
    /// that changes the file system on purpose right after a call (a test) then knows
    /// the next call judges the change against a finished start.
    pub async fn start_ahead_settled(&self) {
        #[cfg(target_os = "linux")]
        self.ahead.settled().await;
    }

    /// How many shells started ahead ran a command, and how many ended without one (a
    /// call that did not match it, a change that made its plan stale, the session's
    /// end).
    pub fn start_ahead_counts(&self) -> StartAheadCounts {
        #[cfg(target_os = "linux")]
        return self.ahead.counts();
        #[cfg(not(target_os = "linux"))]
        StartAheadCounts::default()
    }

    /// The shell commands run under.
    pub fn shell(&self) -> &Shell {
        &self.inner.shell
    }

    /// The private directory of this executor's files.
    pub fn private_dir(&self) -> &PrivateDir {
        &self.inner.dir
    }

    /// The signaller used for kills, shared with task managers.
    pub fn signaller(&self) -> Arc<dyn Signaller> {
        Arc::clone(&self.inner.signaller)
    }

    /// Runs `request`. Background tasks (requested or moved at the deadline) are
    /// registered with `tasks`, and so are trees a foreground command left running.
    pub async fn run(
        &self,
        request: Request,
        controls: &Controls,
        tasks: &TaskManager,
    ) -> Result<Outcome, ExecError> {
        let started = Instant::now();
        #[cfg(target_os = "linux")]
        let ahead = self.ahead.take(&self.inner, &request, tasks).await;
        #[cfg(not(target_os = "linux"))]
        let ahead = None;
        let job = match ahead {
            Some(job) => job,
            None => self.inner.start(&request, controls, tasks).await?,
        };
        // The next read-only command's shell starts while this one runs.
        #[cfg(target_os = "linux")]
        self.ahead.schedule(&self.inner, &request, None);
        let (timeout, on_timeout) = match request.mode {
            Mode::Background => {
                // Never in the foreground: there is nothing to commit.
                tasks.register(Arc::clone(&job));
                return Ok(Outcome::Backgrounded(Backgrounded {
                    job,
                    reason: BackgroundReason::Requested,
                }));
            }
            Mode::Foreground {
                timeout,
                on_timeout,
            } => (timeout, on_timeout),
        };
        tasks.track_foreground(&job);
        let guard = ForegroundGuard { job: &job, tasks };
        let outcome = self
            .wait_foreground(&job, started, timeout, on_timeout, controls, tasks)
            .await;
        drop(guard);
        #[cfg(target_os = "linux")]
        {
            let next_cwd = match &outcome {
                Ok(Outcome::Finished(finished)) => finished.cwd_after.as_deref(),
                _ => None,
            };
            self.ahead.schedule(&self.inner, &request, next_cwd);
        }
        outcome
    }

    async fn wait_foreground(
        &self,
        job: &Arc<Job>,
        started: Instant,
        timeout: Duration,
        on_timeout: OnTimeout,
        controls: &Controls,
        tasks: &TaskManager,
    ) -> Result<Outcome, ExecError> {
        let start = tokio::time::Instant::from_std(started);
        // `timeout` is taken as given (SCHEMA-4), even when absurdly large.
        let deadline = start
            .checked_add(timeout)
            .unwrap_or_else(|| start + Duration::from_secs(100 * 365 * 24 * 3600));
        let mut progress = tokio::time::interval_at(start + PROGRESS_START, PROGRESS_EVERY);
        let ending = loop {
            tokio::select! {
                biased;
                _ = job.wait() => break Ending::Exited,
                () = controls.abort.cancelled() => {
                    job.stop(StopCause::Aborted).await;
                    break Ending::Aborted;
                }
                () = controls.move_to_background.cancelled() => {
                    if let Some(outcome) = commit_background(job, tasks, BackgroundReason::User) {
                        return Ok(outcome);
                    }
                    break Ending::Exited;
                }
                () = tokio::time::sleep_until(deadline) => match on_timeout {
                    OnTimeout::Kill => {
                        job.stop(StopCause::Timeout).await;
                        break Ending::KilledAtTimeout;
                    }
                    OnTimeout::MoveToBackground(reason) => {
                        if let Some(outcome) = commit_background(job, tasks, reason) {
                            return Ok(outcome);
                        }
                        // It exited (or is being stopped) at the very moment of the
                        // deadline: it is reported in the foreground.
                        break Ending::Exited;
                    }
                },
                _ = progress.tick(), if controls.progress.is_some() => {
                    if let Some(sink) = &controls.progress {
                        let output_bytes = std::fs::metadata(job.output_path()).map_or(0, |m| m.len());
                        sink(Progress { elapsed: started.elapsed(), output_bytes });
                    }
                }
            }
        };
        let ExitRecord {
            status, cwd_after, ..
        } = job.wait().await;
        tracing::debug!(target: "wavesh_stage", stage = "exited");
        let sandbox = job.sandbox().cloned();
        if sandbox
            .as_ref()
            .is_some_and(|s| s.plan.level == Level::WorkspaceWrite)
        {
            // What the command planted where no mount could cover (SBX-6).
            for root in &self.sandbox_config().roots {
                crate::sandbox::quarantine_planted(root);
            }
        }
        let ending = match (ending, job.stopped()) {
            (Ending::Exited, Some(StopCause::OutputCap)) => Ending::OutputCap,
            (ending, _) => ending,
        };
        if job.tree_alive() {
            // `server &`: the shell is gone but its children run on; they end with the
            // owner (KILL-7).
            tasks.adopt_leftover(job.kill_target());
        }
        tracing::debug!(target: "wavesh_stage", stage = "collected");
        Ok(Outcome::Finished(Finished {
            status,
            ending,
            output: OutputFile::new(job.output_path().to_path_buf()),
            cwd_after,
            duration: started.elapsed(),
            limit: self.inner.signaller.limit_fired(job.pgid()),
            sandbox,
        }))
    }
}

impl Inner {
    /// Creates the private files and starts the shell.
    pub(crate) async fn start(
        &self,
        request: &Request,
        _controls: &Controls,
        tasks: &TaskManager,
    ) -> Result<Arc<Job>, ExecError> {
        if !request.cwd.is_dir() {
            return Err(ExecError::NoWorkingDirectory(request.cwd.clone()));
        }
        let (files, output) = self.files(request)?;
        let command = self.command_file(&request.command)?;
        let mut env = self.env_changes(request);
        let (sandbox, outcome) = if request.sandbox.is_sandboxed() {
            let full = full_env(&env);
            let mut sandboxed = self.sandbox(request, &files, &full, &mut env)?;
            let child = sandboxed.prepared.child.take();
            let outcome = sandboxed.outcome(
                sandboxed.prepared.plan.clone(),
                request.cwd.clone(),
                self.network.as_ref(),
            );
            (child, Some(Arc::new(outcome)))
        } else {
            (None, None)
        };
        // PTY-1: the shell's stdin, stdout and stderr are the terminal; the output file
        // gets what the reader copies from the master.
        let (terminal, output, output_file) = match request.tty {
            Some(size) => {
                let (terminal, slave) =
                    crate::pty::Terminal::open(size).map_err(|source| ExecError::Spawn {
                        shell: self.shell.path().display().to_string(),
                        source,
                    })?;
                env.push((OsString::from("TERM"), Some(crate::pty::TERM.into())));
                env.push((
                    OsString::from("COLUMNS"),
                    Some(size.columns.to_string().into()),
                ));
                env.push((OsString::from("LINES"), Some(size.rows.to_string().into())));
                (Some(terminal), slave, Some(output))
            }
            None => (None, output, None),
        };
        let mut script = prelude(
            self.shell.kind(),
            files.cwd_file.as_deref(),
            self.search.as_deref(),
        );
        if terminal.is_some() {
            script = crate::spawn::on_terminal(script);
        }
        let spec = SpawnSpec {
            shell: self.shell.clone(),
            script,
            command,
            output,
            cwd: request.cwd.clone(),
            env,
            seatbelt: outcome
                .as_ref()
                .filter(|_| cfg!(target_os = "macos"))
                .map(|outcome| crate::sandbox::seatbelt::profile(&outcome.plan)),
            sandbox,
            go: None,
        };
        tracing::debug!(target: "wavesh_stage", stage = "planned");
        let child = self
            .spawner
            .spawn_async(spec)
            .await
            .map_err(|source| ExecError::Spawn {
                shell: self.shell.path().display().to_string(),
                source,
            })?;
        tracing::debug!(target: "wavesh_stage", stage = "spawned");
        if let (Some(terminal), Some(file)) = (&terminal, output_file) {
            terminal.start_reader(file, self.output_cap);
        }
        Ok(self.job(request, files, child, outcome, terminal, tasks))
    }

    /// The job of a started shell, which takes over its private files.
    pub(crate) fn job(
        &self,
        request: &Request,
        files: Files,
        child: Box<dyn crate::spawn::SpawnedChild>,
        sandbox: Option<Arc<SandboxOutcome>>,
        terminal: Option<Arc<crate::pty::Terminal>>,
        tasks: &TaskManager,
    ) -> Arc<Job> {
        let files = files.hand_over();
        Job::start(
            JobSpec {
                id: files.id,
                command: request.command.clone(),
                output_path: files.output_path,
                cwd_file: files.cwd_file,
                tmp_dir: files.own_tmp,
                background: (request.mode == Mode::Background)
                    .then_some(BackgroundReason::Requested),
                on_exit: Some(tasks.exit_hook()),
                output_cap: self.output_cap,
                sandbox,
                terminal,
            },
            child,
            Arc::clone(&self.signaller),
        )
    }

    /// Makes a command's private files: its output, its cwd file (in the foreground),
    /// and its own TMPDIR at `read-only` (the session's is kept between commands at
    /// `workspace-write`). Removed again unless handed to a job.
    pub(crate) fn files(&self, request: &Request) -> Result<(Files, std::fs::File), ExecError> {
        let id = format!("b{}", random_name(8));
        self.dir.ensure_room()?;
        let (output, output_path) = self.dir.create_file(&format!("{id}-output"), ".log")?;
        let mut files = Files {
            output_path,
            cwd_file: None,
            own_tmp: None,
            id,
            handed_over: false,
        };
        if request.mode != Mode::Background {
            let (_, path) = self.dir.create_file(&format!("{}-cwd", files.id), "")?;
            files.cwd_file = Some(path);
        }
        if request.sandbox == Level::ReadOnly {
            let dir = self.dir.path().join(format!("{}-tmp", files.id));
            crate::private_dir::create_dir_0700(&dir).map_err(|source| ExecError::SandboxTmp {
                path: dir.clone(),
                source,
            })?;
            files.own_tmp = Some(dir);
        }
        Ok((files, output))
    }

    /// The environment changes of `request` on top of the host's: its variables, then
    /// the executor's.
    pub(crate) fn env_changes(&self, request: &Request) -> Vec<(OsString, Option<OsString>)> {
        request
            .env
            .iter()
            .map(|(key, value)| (key.clone(), Some(value.clone())))
            .chain(self.env.iter().cloned())
            .collect()
    }

    /// Scrubs `env` of credentials (SBX-2), plans the sandbox of `request.sandbox` and
    /// builds it. `full`: the environment the shell would get ([`full_env`]).
    pub(crate) fn sandbox(
        &self,
        request: &Request,
        files: &Files,
        full: &BTreeMap<OsString, OsString>,
        env: &mut Vec<(OsString, Option<OsString>)>,
    ) -> Result<Sandboxed, ExecError> {
        if files.own_tmp.is_none() {
            let tmp = self.session_tmp();
            match crate::private_dir::create_dir_0700(&tmp) {
                Ok(()) => {}
                Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists && tmp.is_dir() => {
                }
                Err(source) => return Err(ExecError::SandboxTmp { path: tmp, source }),
            }
        }
        let scrubbed = self
            .sandbox
            .env
            .scrub(full.iter().map(|(k, v)| (k.as_os_str(), v.as_os_str())));
        env.extend(scrubbed.names.iter().map(|name| (name.clone(), None)));
        let (plan, scope) = self.plan(request, files, full, env);
        let prepared = crate::sandbox::prepare(
            plan.clone(),
            self.sandbox.strict,
            self.spawner.isolates_processes(),
        )?;
        Ok(Sandboxed {
            made: plan,
            prepared,
            scrubbed,
            scope,
        })
    }

    /// The session's TMPDIR, kept between its commands at `workspace-write`.
    fn session_tmp(&self) -> PathBuf {
        self.dir.path().join("tmp")
    }

    /// The plan of `request` with `files`, and the proxy's scope when the command uses the
    /// session's network; the variables it sets go to `env` (TMPDIR, the proxy, the
    /// views). The same inputs make the same plan, until the file system changes.
    pub(crate) fn plan(
        &self,
        request: &Request,
        files: &Files,
        full: &BTreeMap<OsString, OsString>,
        env: &mut Vec<(OsString, Option<OsString>)>,
    ) -> (Plan, Option<crate::net::Scope>) {
        let tmp = files.own_tmp.clone().unwrap_or_else(|| self.session_tmp());
        // zsh writes here-documents and `=(...)` under TMPPREFIX, not TMPDIR.
        env.push((OsString::from("TMPDIR"), Some(tmp.as_os_str().to_owned())));
        env.push((
            OsString::from("TMPPREFIX"),
            Some(tmp.join("zsh").into_os_string()),
        ));
        let command_files = CommandFiles {
            output: files.output_path.clone(),
            cwd_file: files.cwd_file.clone(),
            tmp_dir: tmp,
            cwd: request.cwd.clone(),
        };
        let mut plan = if request.roots.is_empty() {
            Plan::new(
                request.sandbox,
                &self.sandbox,
                &command_files,
                request.network,
            )
        } else {
            let config = SandboxConfig {
                roots: request.roots.clone(),
                ..self.sandbox.clone()
            };
            Plan::new(request.sandbox, &config, &command_files, request.network)
        };
        let scope = self.network.as_ref().and_then(|_| {
            let scope = crate::net::scope_for(&mut plan)?;
            env.extend(
                crate::net::proxy_env(scope)
                    .into_iter()
                    .map(|(k, v)| (k, Some(v))),
            );
            Some(scope)
        });
        // SBX-8: /tmp, the toolchain caches and configured output directories.
        plan.add_views(&crate::sandbox::views_inputs(
            &self.sandbox,
            full,
            request.roots.first().or(self.sandbox.roots.first()),
        ));
        env.extend(
            plan.views
                .env
                .iter()
                .map(|(name, dir)| (name.clone(), Some(dir.clone().into_os_string()))),
        );
        // SBX-7: where the command gets a mount namespace of its own, other sessions'
        // directories are hidden there, not by Landlock rules around them.
        if request.sandbox != Level::Off
            && self.spawner.isolates_processes()
            && crate::sandbox::support().process_isolation
        {
            plan.hide_sessions_by_mount();
        }
        (plan, scope)
    }

    /// Writes the command to a private file and unlinks it at once: the open descriptor
    /// is all the shell needs, and nothing is left behind whatever happens next. On Linux
    /// it is a memfd, in no file system at all: it takes no room in the private
    /// directory (a full disk cannot lose a command's output byte to it) and has no name.
    pub(crate) fn command_file(&self, command: &str) -> Result<std::fs::File, ExecError> {
        #[cfg(target_os = "linux")]
        {
            let path = PathBuf::from("memfd:wavesh-command");
            let made = rustix::fs::memfd_create("wavesh-command", rustix::fs::MemfdFlags::CLOEXEC)
                .map_err(std::io::Error::from)
                .and_then(|fd| {
                    let mut file = std::fs::File::from(fd);
                    file.write_all(command.as_bytes())?;
                    file.seek(SeekFrom::Start(0))?;
                    Ok(file)
                });
            match made {
                Ok(file) => return Ok(file),
                // Kernels without memfd (before 3.17): the private file below.
                Err(error) if error.raw_os_error() == Some(libc::ENOSYS) => {}
                Err(source) => return Err(ExecError::CommandFile { path, source }),
            }
        }
        let (mut file, path) = self.dir.create_file("command", "")?;
        crate::output::remove_quietly(&path);
        let write = (|| {
            file.write_all(command.as_bytes())?;
            file.seek(SeekFrom::Start(0))?;
            Ok(file)
        })();
        write.map_err(|source| ExecError::CommandFile { path, source })
    }
}

/// Shells started ahead of their command ([`Executor::set_start_ahead`]), counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StartAheadCounts {
    /// Those that ran a command.
    pub used: u64,
    /// Those ended without one.
    pub unused: u64,
}

/// The environment a shell gets from `changes` on top of the host's.
pub(crate) fn full_env(changes: &[(OsString, Option<OsString>)]) -> BTreeMap<OsString, OsString> {
    let mut full: BTreeMap<OsString, OsString> = std::env::vars_os().collect();
    for (key, value) in changes {
        match value {
            Some(value) => full.insert(key.clone(), value.clone()),
            None => full.remove(key),
        };
    }
    full
}

/// One command's private files, removed when dropped unless handed to its job.
pub(crate) struct Files {
    pub(crate) id: String,
    pub(crate) output_path: PathBuf,
    pub(crate) cwd_file: Option<PathBuf>,
    /// Its own TMPDIR (at `read-only`).
    pub(crate) own_tmp: Option<PathBuf>,
    handed_over: bool,
}

/// The paths of [`Files`], no longer removed by it.
pub(crate) struct HandedOver {
    pub(crate) id: String,
    pub(crate) output_path: PathBuf,
    pub(crate) cwd_file: Option<PathBuf>,
    pub(crate) own_tmp: Option<PathBuf>,
}

impl Files {
    /// The paths, for a job that removes them when it is done with them.
    pub(crate) fn hand_over(mut self) -> HandedOver {
        self.handed_over = true;
        HandedOver {
            id: std::mem::take(&mut self.id),
            output_path: std::mem::take(&mut self.output_path),
            cwd_file: self.cwd_file.take(),
            own_tmp: self.own_tmp.take(),
        }
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        if self.handed_over {
            return;
        }
        crate::output::remove_quietly(&self.output_path);
        if let Some(path) = &self.cwd_file {
            crate::output::remove_quietly(path);
        }
        if let Some(dir) = &self.own_tmp {
            crate::output::remove_dir_quietly(dir);
        }
    }
}

/// A command's sandbox, built.
pub(crate) struct Sandboxed {
    /// The plan as made, before the sandbox was built from it.
    #[cfg_attr(
        not(target_os = "linux"),
        expect(dead_code, reason = "read by the start ahead, on Linux only")
    )]
    pub(crate) made: Plan,
    /// The sandbox (its child part taken for the spawn).
    pub(crate) prepared: crate::sandbox::Prepared,
    /// The variables removed from the environment, and their values.
    pub(crate) scrubbed: crate::sandbox::Scrubbed,
    /// The proxy's scope, when the command uses the session's network.
    pub(crate) scope: Option<crate::net::Scope>,
}

impl Sandboxed {
    /// What the command runs under, from now on: `plan` is the prepared plan; the
    /// workspace's own secret files' values are read now and masked too (RO-17, SBX-2).
    pub(crate) fn outcome(
        &self,
        plan: Plan,
        cwd: PathBuf,
        network: Option<&crate::net::SessionNetwork>,
    ) -> SandboxOutcome {
        let mut scrubbed = self.scrubbed.clone();
        scrubbed
            .values
            .extend(crate::sandbox::secret_file_values(&plan));
        SandboxOutcome {
            after_exit: std::sync::Mutex::default(),
            final_cwd: std::sync::Mutex::default(),
            plan,
            missing: self.prepared.missing.clone(),
            scrubbed,
            cwd,
            network: self
                .scope
                .zip(network)
                .map(|(scope, network)| crate::net::NetworkUse {
                    proxy: Arc::clone(&network.proxy),
                    scope,
                    since: Instant::now(),
                }),
        }
    }
}

/// The commit point: moves the job to the background and registers it, unless it has
/// already exited or is being stopped.
fn commit_background(
    job: &Arc<Job>,
    tasks: &TaskManager,
    reason: BackgroundReason,
) -> Option<Outcome> {
    if !job.move_to_background(reason) {
        return None;
    }
    tasks.register(Arc::clone(job));
    Some(Outcome::Backgrounded(Backgrounded {
        job: Arc::clone(job),
        reason,
    }))
}

/// Ends tracking of a foreground job. If the caller's future is dropped while the job
/// still runs in the foreground (an MCP client cancelled the request, the host dropped the
/// call), nobody would ever collect it: the tree is ended as for an abort (EXEC-6).
struct ForegroundGuard<'a> {
    job: &'a Arc<Job>,
    tasks: &'a TaskManager,
}

impl Drop for ForegroundGuard<'_> {
    fn drop(&mut self) {
        self.tasks.untrack_foreground(self.job);
        let dropped_early = self.job.phase() == Phase::Foreground
            && (self.job.exit().is_none()
                || (self.job.stopped().is_some() && self.job.tree_alive()));
        tracing::debug!(
            pid = self.job.pid(),
            dropped_early,
            exited = self.job.exit().is_some(),
            "foreground call finished or dropped"
        );
        if dropped_early {
            // Whatever happens to the kill below, the tree ends with the owner.
            self.tasks.adopt_leftover(self.job.kill_target());
            let job = Arc::clone(self.job);
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => {
                    runtime.spawn(async move {
                        job.stop(StopCause::Aborted).await;
                    });
                }
                Err(_) => tracing::error!(
                    pid = job.pid(),
                    "a dropped foreground command could not be stopped: no runtime"
                ),
            }
        }
    }
}
