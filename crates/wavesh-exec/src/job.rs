//! One running command and its lifecycle state (BG-3).
//!
//! A job starts in the foreground. It either finishes there, or is moved to the
//! background exactly once, at a single commit point guarded by one lock: the exit
//! watcher and the mover both take that lock, so a command that exits at the very moment
//! its deadline fires is reported exactly once — as finished in the foreground, or as a
//! task whose completion is recorded later — never both and never neither.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::SystemTime;

use tokio::sync::watch;

use crate::kill::{KillReport, KillTarget, Signaller, kill_tree};
use crate::spawn::{ExitStatus, SpawnedChild};

/// How a job's shell ended, with the directory it ended in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExitRecord {
    /// The shell's exit status.
    pub status: ExitStatus,
    /// The directory read back after a successful foreground command (CWD-1).
    pub cwd_after: Option<PathBuf>,
    /// When the shell exited.
    pub ended_at: SystemTime,
}

/// Who stopped a job, when someone did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopCause {
    /// The host aborted the foreground call (EXEC-6).
    Aborted,
    /// The foreground deadline passed and the command may not move to the background.
    Timeout,
    /// The owner (session or subagent) was released (KILL-6).
    OwnerReleased,
    /// The model called TaskStop (TASK-4).
    Model,
    /// The user stopped it from the host's UI.
    User,
    /// Its output reached the output cap (BG-8).
    OutputCap,
}

/// Why a job runs in the background.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackgroundReason {
    /// `run_in_background` was set.
    Requested,
    /// Its foreground deadline passed (BG-3).
    Timeout,
    /// The host's blocking budget in assistant mode passed (BG-6).
    AssistantBudget,
    /// The MCP client's wait budget passed (MCP-5): moved whatever its first word.
    ClientBudget,
    /// The user moved it (the host's Ctrl+B, BG-6).
    User,
}

/// Where a task stands, for TaskOutput, listings and notifications.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskStatus {
    /// Still running.
    Running,
    /// Exited with code 0.
    Completed,
    /// Exited with another code, or was ended by a signal nobody of ours sent.
    Failed,
    /// Ended by us, for this reason.
    Stopped(StopCause),
}

impl TaskStatus {
    /// The status word shown to the model: `running`, `completed`, `failed`, `stopped`.
    pub fn word(self) -> &'static str {
        match self {
            TaskStatus::Running => "running",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Stopped(_) => "stopped",
        }
    }

    /// Whether the task has ended.
    pub fn is_terminal(self) -> bool {
        self != TaskStatus::Running
    }
}

/// A job's phase in the lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// A caller is waiting for it.
    Foreground,
    /// It runs as a background task.
    Background,
}

#[derive(Debug)]
struct State {
    phase: Phase,
    exit: Option<ExitRecord>,
    stopped: Option<StopCause>,
    background_reason: Option<BackgroundReason>,
    /// The owner was told of the end (by a notification or by TaskOutput, TASK-3).
    notified: bool,
}

/// Called when a job's shell exits (the owner's wake-up for notifications).
pub type ExitHook = Arc<dyn Fn() + Send + Sync>;

/// A started command.
pub struct Job {
    id: String,
    command: String,
    target: KillTarget,
    output_path: PathBuf,
    cwd_file: Option<PathBuf>,
    tmp_dir: Option<PathBuf>,
    started_at: SystemTime,
    state: Mutex<State>,
    exited: watch::Sender<bool>,
    signaller: Arc<dyn Signaller>,
    on_exit: Option<ExitHook>,
    output_cap: Option<u64>,
    sandbox: Option<Arc<crate::sandbox::SandboxOutcome>>,
    /// The terminal of a tty task (PTY-1).
    terminal: Option<Arc<crate::pty::Terminal>>,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job")
            .field("id", &self.id)
            .field("target", &self.target)
            .field("output_path", &self.output_path)
            .finish_non_exhaustive()
    }
}

/// The values a job is created from.
pub(crate) struct JobSpec {
    pub id: String,
    pub command: String,
    pub output_path: PathBuf,
    pub cwd_file: Option<PathBuf>,
    /// A read-only sandboxed command's private TMPDIR, removed when the shell exits.
    pub tmp_dir: Option<PathBuf>,
    pub background: Option<BackgroundReason>,
    pub on_exit: Option<ExitHook>,
    pub output_cap: Option<u64>,
    pub sandbox: Option<Arc<crate::sandbox::SandboxOutcome>>,
    pub terminal: Option<Arc<crate::pty::Terminal>>,
}

impl Job {
    /// Wraps a started shell and starts watching for its exit.
    pub(crate) fn start(
        spec: JobSpec,
        child: Box<dyn SpawnedChild>,
        signaller: Arc<dyn Signaller>,
    ) -> Arc<Job> {
        let (exited, _) = watch::channel(false);
        let job = Arc::new(Job {
            id: spec.id,
            command: spec.command,
            target: KillTarget {
                pgid: child.pgid(),
                pid: child.pid(),
            },
            output_path: spec.output_path,
            cwd_file: spec.cwd_file,
            tmp_dir: spec.tmp_dir,
            sandbox: spec.sandbox,
            terminal: spec.terminal,
            started_at: SystemTime::now(),
            state: Mutex::new(State {
                phase: if spec.background.is_some() {
                    Phase::Background
                } else {
                    Phase::Foreground
                },
                exit: None,
                stopped: None,
                background_reason: spec.background,
                notified: false,
            }),
            exited,
            signaller,
            on_exit: spec.on_exit,
            output_cap: spec.output_cap,
        });
        if let Some(cap) = job.output_cap {
            tokio::spawn(watch_output_cap(Arc::clone(&job), cap));
        }
        let watcher = Arc::clone(&job);
        tokio::spawn(async move {
            let status = match child.wait().await {
                Ok(status) => status,
                Err(error) => {
                    tracing::error!(pid = watcher.target.pid, %error, "waiting for the shell failed");
                    ExitStatus::Code(-1)
                }
            };
            watcher.record_exit(status);
        });
        job
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock only means a panic elsewhere while holding it; the state itself
        // is always consistent (every write is a single assignment).
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn record_exit(&self, status: ExitStatus) {
        let (cwd_after, final_cwd) = self.take_cwd(status);
        if let Some(dir) = &self.tmp_dir {
            crate::output::remove_dir_quietly(dir);
        }
        if let Some(sandbox) = &self.sandbox {
            *sandbox
                .final_cwd
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = final_cwd;
            // SBX-9: its git layer comes back before anyone sees the end.
            let notes = crate::sandbox::git_after_exit(&sandbox.plan.views);
            sandbox
                .after_exit
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .extend(notes);
        }
        if let (Some(cap), Some(StopCause::OutputCap)) = (self.output_cap, self.stopped()) {
            // Trimmed before the exit is published, so whoever sees the end sees the
            // file at the cap (BG-8).
            if let Err(error) = std::fs::OpenOptions::new()
                .write(true)
                .open(&self.output_path)
                .and_then(|file| file.set_len(cap))
            {
                tracing::warn!(path = %self.output_path.display(), %error, "cannot trim the output to the cap");
            }
        }
        let mut state = self.lock();
        state.exit = Some(ExitRecord {
            status,
            cwd_after,
            ended_at: SystemTime::now(),
        });
        drop(state);
        self.exited.send_replace(true);
        if let Some(hook) = &self.on_exit {
            hook();
        }
    }

    /// Reads back the final directory and removes the cwd file whatever happened
    /// (CWD-1). Returns it as the session's next directory (only after success, only in
    /// the foreground), and as the directory the shell ended in (whatever the status:
    /// for judging the paths of its error lines). A failure to read is logged at debug
    /// level and changes nothing else (CWD-6).
    fn take_cwd(&self, status: ExitStatus) -> (Option<PathBuf>, Option<PathBuf>) {
        let Some(path) = self.cwd_file.as_deref() else {
            return (None, None);
        };
        let wanted = status.success() && self.lock().phase == Phase::Foreground;
        let read = read_cwd_file(path);
        crate::output::remove_quietly(path);
        (read.clone().filter(|_| wanted), read)
    }

    /// The terminal of a tty task (PTY-1), `None` for any other command.
    pub fn terminal(&self) -> Option<&Arc<crate::pty::Terminal>> {
        self.terminal.as_ref()
    }

    /// The task id this job has (or will have, once backgrounded).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The command text.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// The shell's pid.
    pub fn pid(&self) -> i32 {
        self.target.pid
    }

    /// The process group of the whole tree.
    pub fn pgid(&self) -> i32 {
        self.target.pgid
    }

    /// The sandbox the command runs in, if any.
    pub fn sandbox(&self) -> Option<&Arc<crate::sandbox::SandboxOutcome>> {
        self.sandbox.as_ref()
    }

    /// The live output file.
    pub fn output_path(&self) -> &Path {
        &self.output_path
    }

    /// When the shell was started.
    pub fn started_at(&self) -> SystemTime {
        self.started_at
    }

    /// The exit, once the shell has exited.
    pub fn exit(&self) -> Option<ExitRecord> {
        self.lock().exit.clone()
    }

    /// Who stopped it, if anyone did.
    pub fn stopped(&self) -> Option<StopCause> {
        self.lock().stopped
    }

    /// The current phase.
    pub fn phase(&self) -> Phase {
        self.lock().phase
    }

    /// Why it runs in the background, once it does.
    pub fn background_reason(&self) -> Option<BackgroundReason> {
        self.lock().background_reason
    }

    /// Where it stands.
    pub fn status(&self) -> TaskStatus {
        let state = self.lock();
        match (&state.exit, state.stopped) {
            (None, _) => TaskStatus::Running,
            (Some(_), Some(cause)) => TaskStatus::Stopped(cause),
            (Some(exit), None) if exit.status.success() => TaskStatus::Completed,
            (Some(_), None) => TaskStatus::Failed,
        }
    }

    /// Marks the end as told to the owner. Returns `true` only for the first caller
    /// after the job ended, so a completion is reported exactly once (TASK-3).
    pub fn mark_notified(&self) -> bool {
        let mut state = self.lock();
        if state.exit.is_none() || state.notified {
            return false;
        }
        state.notified = true;
        true
    }

    /// Whether the end was told already.
    pub fn notified(&self) -> bool {
        self.lock().notified
    }

    /// The commit point of BG-3: moves a foreground job to the background unless it has
    /// already exited. Returns whether it moved. Once moved, the cwd file is removed (a
    /// background command's directory is never adopted).
    pub fn move_to_background(&self, reason: BackgroundReason) -> bool {
        let mut state = self.lock();
        // A command being stopped (at the output cap, say) stays where it is: it ends at
        // once even if its deadline fires meanwhile (BG-8).
        if state.exit.is_some() || state.stopped.is_some() || state.phase == Phase::Background {
            return false;
        }
        state.phase = Phase::Background;
        state.background_reason = Some(reason);
        drop(state);
        if let Some(path) = &self.cwd_file {
            crate::output::remove_quietly(path);
        }
        true
    }

    /// Waits until the shell has exited.
    pub async fn wait(&self) -> ExitRecord {
        let mut exited = self.exited.subscribe();
        loop {
            if let Some(exit) = self.exit() {
                return exit;
            }
            if exited.changed().await.is_err() {
                // The sender lives in `self`, so it cannot be dropped while we borrow
                // `self`; this branch only guards against a future refactor.
                if let Some(exit) = self.exit() {
                    return exit;
                }
                std::future::pending::<()>().await;
            }
        }
    }

    /// Ends the whole tree (KILL), recording who asked, and waits for the shell's exit.
    pub async fn stop(&self, cause: StopCause) -> ExitRecord {
        self.record_stop(cause);
        self.kill().await;
        self.wait().await
    }

    /// Records who is stopping a still-running job (the first cause wins).
    pub(crate) fn record_stop(&self, cause: StopCause) {
        let mut state = self.lock();
        if state.exit.is_none() && state.stopped.is_none() {
            state.stopped = Some(cause);
        }
    }

    /// Ends the whole tree without recording a cause.
    ///
    /// The sequence runs in its own tokio task: if the caller's future is dropped half
    /// way (a cancelled MCP request), the SIGKILL a second later still comes.
    pub async fn kill(&self) -> KillReport {
        let signaller = Arc::clone(&self.signaller);
        let target = self.target;
        match tokio::spawn(async move { kill_tree(signaller.as_ref(), target).await }).await {
            Ok(report) => report,
            Err(error) => {
                tracing::error!(pid = target.pid, %error, "the kill task failed; killing inline");
                kill_tree(self.signaller.as_ref(), target).await
            }
        }
    }

    /// Whether any process of the tree is still alive (for leftover tracking, KILL-7).
    pub fn tree_alive(&self) -> bool {
        self.signaller.group_exists(self.target.pgid)
    }

    pub(crate) fn kill_target(&self) -> KillTarget {
        self.target
    }
}

/// BG-8: stops the job once its output passes `cap` bytes, in either phase; the exit
/// watcher then trims the file to the cap. The check interval shrinks as the output nears the cap (assuming
/// at most 4 GB/s of output), so a small cap is hit closely and a large one costs a stat
/// every half second.
async fn watch_output_cap(job: Arc<Job>, cap: u64) {
    const RATE_BYTES_PER_MS: u64 = 4 * 1024 * 1024;
    let mut exited = job.exited.subscribe();
    loop {
        let size = std::fs::metadata(&job.output_path).map_or(0, |m| m.len());
        if size > cap {
            {
                let mut state = job.lock();
                if state.exit.is_some() {
                    return;
                }
                state.stopped.get_or_insert(StopCause::OutputCap);
            }
            tracing::info!(
                pid = job.pid(),
                cap,
                size,
                "output cap reached; stopping the command"
            );
            job.kill().await;
            job.wait().await;
            if let Err(error) = std::fs::OpenOptions::new()
                .write(true)
                .open(&job.output_path)
                .and_then(|file| file.set_len(cap))
            {
                tracing::warn!(path = %job.output_path.display(), %error, "cannot trim the output to the cap");
            }
            return;
        }
        let wait_ms = ((cap - size) / RATE_BYTES_PER_MS).clamp(2, 500);
        tokio::select! {
            () = tokio::time::sleep(std::time::Duration::from_millis(wait_ms)) => {}
            _ = exited.wait_for(|done| *done) => return,
        }
    }
}

fn read_cwd_file(path: &Path) -> Option<PathBuf> {
    match std::fs::read(path) {
        Ok(bytes) => {
            let text = String::from_utf8_lossy(&bytes);
            let line = text.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                tracing::debug!(path = %path.display(), "cwd read-back: the shell wrote no directory");
                None
            } else if cfg!(windows) {
                // `pwd -W` prints `C:/Users/...`; checked and reported natively (SHELL-5).
                Some(PathBuf::from(crate::winpath::to_native(line)))
            } else {
                Some(PathBuf::from(line))
            }
        }
        Err(error) => {
            tracing::debug!(path = %path.display(), %error, "cwd read-back failed");
            None
        }
    }
}
