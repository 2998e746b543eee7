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
    /// The host aborted the call (EXEC-6).
    Aborted,
    /// The foreground deadline passed and the command may not move to the background.
    Timeout,
    /// The owner (session) ended.
    OwnerReleased,
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
}

/// A started command.
pub struct Job {
    id: String,
    command: String,
    target: KillTarget,
    output_path: PathBuf,
    cwd_file: Option<PathBuf>,
    started_at: SystemTime,
    state: Mutex<State>,
    exited: watch::Sender<bool>,
    signaller: Arc<dyn Signaller>,
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
    pub phase: Phase,
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
            started_at: SystemTime::now(),
            state: Mutex::new(State {
                phase: spec.phase,
                exit: None,
                stopped: None,
            }),
            exited,
            signaller,
        });
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
        let cwd_after = self.take_cwd(status);
        let mut state = self.lock();
        state.exit = Some(ExitRecord {
            status,
            cwd_after,
            ended_at: SystemTime::now(),
        });
        drop(state);
        self.exited.send_replace(true);
    }

    /// Reads back the final directory (only after success, only in the foreground) and
    /// removes the cwd file whatever happened (CWD-1). A failure to read is logged at
    /// debug level and changes nothing else (CWD-6).
    fn take_cwd(&self, status: ExitStatus) -> Option<PathBuf> {
        let path = self.cwd_file.as_deref()?;
        let wanted = status.success() && self.lock().phase == Phase::Foreground;
        let read = if wanted { read_cwd_file(path) } else { None };
        remove_quietly(path);
        read
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

    /// The commit point of BG-3: moves a foreground job to the background unless it has
    /// already exited. Returns whether it moved. Once moved, the cwd file is removed (a
    /// background command's directory is never adopted).
    pub fn move_to_background(&self) -> bool {
        let mut state = self.lock();
        if state.exit.is_some() || state.phase == Phase::Background {
            return false;
        }
        state.phase = Phase::Background;
        drop(state);
        if let Some(path) = &self.cwd_file {
            remove_quietly(path);
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
        {
            let mut state = self.lock();
            if state.exit.is_none() && state.stopped.is_none() {
                state.stopped = Some(cause);
            }
        }
        self.kill().await;
        self.wait().await
    }

    /// Ends the whole tree without recording a cause.
    pub async fn kill(&self) -> KillReport {
        kill_tree(self.signaller.as_ref(), self.target).await
    }

    /// Whether any process of the tree is still alive (for leftover tracking, KILL-7).
    pub fn tree_alive(&self) -> bool {
        self.signaller.group_exists(self.target.pgid)
    }

    pub(crate) fn kill_target(&self) -> KillTarget {
        self.target
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

pub(crate) fn remove_quietly(path: &Path) {
    if let Err(error) = std::fs::remove_file(path)
        && error.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!(path = %path.display(), %error, "could not remove a private file");
    }
}
