//! The jobs one owner (a session or a subagent) is responsible for: background tasks,
//! foreground commands while they run, and the trees that foreground commands left
//! running (KILL-7). Releasing or dropping the owner ends them all (KILL-6).
//!
//! Completion notifications are state, not messages: a task that ended and whose end was
//! not yet told is "pending" until [`TaskManager::take_finished`] or TaskOutput marks it
//! notified. Nothing can be lost between an event and its delivery, and nothing is told
//! twice (TASK-3). [`TaskManager::subscribe`] only wakes the host up to look.

use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::watch;

use crate::job::{ExitHook, Job, Phase, StopCause, TaskStatus};
use crate::kill::{KillSignal, KillTarget, Signaller, kill_tree};

#[derive(Default)]
struct Inner {
    /// Jobs running in the foreground right now, so ending the owner ends them too.
    foreground: Vec<Arc<Job>>,
    tasks: Vec<Arc<Job>>,
    leftovers: Vec<KillTarget>,
    detached: bool,
    released: bool,
}

/// Why [`TaskManager::stop`] did not stop anything.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StopError {
    /// No task of this owner has the id.
    #[error("no task with ID {0}")]
    Unknown(String),
}

/// What [`TaskManager::stop`] did.
#[derive(Debug, Clone)]
pub enum StopOutcome {
    /// The task was running and its tree has been ended.
    Stopped(Arc<Job>),
    /// The task had already ended; nothing was done.
    AlreadyEnded(Arc<Job>),
    /// The task's shell had already ended, but processes it started were still running:
    /// they were ended (PROC-3). How many, where that could be told.
    LeftoversEnded(Arc<Job>, Option<usize>),
}

/// Background tasks and leftover process trees of one owner.
pub struct TaskManager {
    inner: Mutex<Inner>,
    signaller: Arc<dyn Signaller>,
    changed: Arc<watch::Sender<u64>>,
}

impl std::fmt::Debug for TaskManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskManager").finish_non_exhaustive()
    }
}

impl TaskManager {
    /// An empty manager that kills through `signaller`.
    pub fn new(signaller: Arc<dyn Signaller>) -> TaskManager {
        TaskManager {
            inner: Mutex::new(Inner::default()),
            signaller,
            changed: Arc::new(watch::channel(0).0),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Every update is a single push, retain or flag write, so a poisoned lock still
        // holds consistent data.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn bump(&self) {
        self.changed.send_modify(|generation| *generation += 1);
    }

    /// The hook jobs call when their shell exits: it wakes up subscribers.
    pub(crate) fn exit_hook(&self) -> ExitHook {
        let changed = Arc::clone(&self.changed);
        Arc::new(move || changed.send_modify(|generation| *generation += 1))
    }

    /// A receiver that changes whenever a task is registered or a job exits. Look at
    /// [`TaskManager::pending`] or [`TaskManager::take_finished`] after each change.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// Registers a job that has just moved to the background.
    pub fn register(&self, job: Arc<Job>) {
        debug_assert_eq!(job.phase(), Phase::Background);
        let released = {
            let mut inner = self.lock();
            inner.foreground.retain(|other| !Arc::ptr_eq(other, &job));
            inner.tasks.push(Arc::clone(&job));
            inner.released
        };
        if released {
            // Registered after the owner was released: it must not outlive it.
            tokio::spawn(async move {
                job.stop(StopCause::OwnerReleased).await;
            });
        }
        // The job may have exited before it was registered; subscribers look again.
        self.bump();
    }

    /// Tracks a job while a caller waits for it in the foreground.
    pub(crate) fn track_foreground(&self, job: &Arc<Job>) {
        self.lock().foreground.push(Arc::clone(job));
    }

    /// Stops tracking a foreground job that finished.
    pub(crate) fn untrack_foreground(&self, job: &Arc<Job>) {
        self.lock()
            .foreground
            .retain(|other| !Arc::ptr_eq(other, job));
    }

    /// Remembers a process group that a finished foreground command left running, so it
    /// ends with the owner (KILL-7).
    pub fn adopt_leftover(&self, target: KillTarget) {
        self.lock().leftovers.push(target);
    }

    /// The task with this id.
    pub fn get(&self, id: &str) -> Option<Arc<Job>> {
        self.lock().tasks.iter().find(|job| job.id() == id).cloned()
    }

    /// All tasks, oldest first.
    pub fn list(&self) -> Vec<Arc<Job>> {
        self.lock().tasks.clone()
    }

    /// Tasks that ended and whose end has not been told yet.
    pub fn pending(&self) -> Vec<Arc<Job>> {
        self.lock()
            .tasks
            .iter()
            .filter(|job| job.status().is_terminal() && !job.notified())
            .cloned()
            .collect()
    }

    /// Takes the ended tasks whose end was not told yet, marking them told: each end is
    /// returned exactly once, here or through TaskOutput (TASK-3).
    pub fn take_finished(&self) -> Vec<Arc<Job>> {
        self.pending()
            .into_iter()
            .filter(|job| job.mark_notified())
            .collect()
    }

    /// Stops a task (whole tree) on behalf of `cause` and waits until its shell exited.
    /// A task that already ended is not an error (TASK-4).
    pub async fn stop(&self, id: &str, cause: StopCause) -> Result<StopOutcome, StopError> {
        let job = self
            .get(id)
            .ok_or_else(|| StopError::Unknown(id.to_owned()))?;
        if job.status() != TaskStatus::Running {
            if job.tree_alive() {
                let left = self.signaller.tree_size(job.pgid());
                job.kill().await;
                return Ok(StopOutcome::LeftoversEnded(job, left));
            }
            return Ok(StopOutcome::AlreadyEnded(job));
        }
        job.stop(cause).await;
        Ok(StopOutcome::Stopped(job))
    }

    /// Leaves every task running when the manager is dropped: `wavesh run` exits while
    /// the commands it moved to the background go on, by design.
    pub fn detach(&self) {
        let mut inner = self.lock();
        inner.detached = true;
        let groups: Vec<i32> = inner
            .tasks
            .iter()
            .chain(&inner.foreground)
            .map(|job| job.pgid())
            .chain(inner.leftovers.iter().map(|target| target.pgid))
            .collect();
        drop(inner);
        for pgid in groups {
            self.signaller.detach_group(pgid);
        }
    }

    /// Whether [`TaskManager::shutdown`] ran.
    pub fn is_released(&self) -> bool {
        self.lock().released
    }

    /// Ends every running command (foreground and background) and every leftover tree,
    /// all at once, and waits until they are gone (at most about [`crate::KILL_GRACE`]).
    /// Tasks started later are stopped as soon as they are registered.
    pub async fn shutdown(&self) {
        let (jobs, leftovers) = {
            let mut inner = self.lock();
            inner.detached = true;
            inner.released = true;
            let mut jobs = std::mem::take(&mut inner.foreground);
            jobs.extend(inner.tasks.iter().cloned());
            (jobs, std::mem::take(&mut inner.leftovers))
        };
        tracing::debug!(
            jobs = jobs.len(),
            leftovers = leftovers.len(),
            "ending every command of the owner"
        );
        // Each tree gets its own tokio task so the grace periods run concurrently.
        let mut set = tokio::task::JoinSet::new();
        // A job whose shell exited may still have members (a grandchild that ignored the
        // SIGTERM of an abort): the group is what must end.
        for job in jobs
            .into_iter()
            .filter(|job| job.exit().is_none() || job.tree_alive())
        {
            set.spawn(async move {
                job.stop(StopCause::OwnerReleased).await;
            });
        }
        for target in leftovers {
            let signaller = Arc::clone(&self.signaller);
            set.spawn(async move {
                if signaller.group_exists(target.pgid) {
                    kill_tree(signaller.as_ref(), target).await;
                }
            });
        }
        while set.join_next().await.is_some() {}
        self.remove_task_outputs();
    }

    /// Removes the output files of this owner's tasks: with the owner gone nobody can ask
    /// for them any more. Persisted foreground outputs are not tasks and stay.
    fn remove_task_outputs(&self) {
        for job in &self.lock().tasks {
            crate::output::remove_quietly(job.output_path());
        }
    }
}

impl Drop for TaskManager {
    /// A manager dropped without [`TaskManager::shutdown`] still ends its trees:
    /// SIGTERM now, and SIGKILL one second later from a helper thread (KILL-2, KILL-6).
    fn drop(&mut self) {
        let inner = self.lock();
        if inner.detached {
            return;
        }
        let targets: Vec<KillTarget> = inner
            .tasks
            .iter()
            .chain(&inner.foreground)
            .filter(|job| job.exit().is_none() || job.tree_alive())
            .map(|job| {
                job.record_stop(StopCause::OwnerReleased);
                job.kill_target()
            })
            .chain(inner.leftovers.iter().copied())
            .collect();
        drop(inner);
        // Still-running tasks write on into their unlinked files until they end.
        self.remove_task_outputs();
        if targets.is_empty() {
            return;
        }
        for target in &targets {
            let _ = self
                .signaller
                .signal_group(target.pgid, KillSignal::Terminate);
        }
        let signaller = Arc::clone(&self.signaller);
        let _ = std::thread::Builder::new()
            .name("wavesh-kill".into())
            .spawn(move || {
                std::thread::sleep(crate::KILL_GRACE);
                for target in targets {
                    if signaller.group_exists(target.pgid) {
                        let _ = signaller.signal_group(target.pgid, KillSignal::Kill);
                    }
                }
            });
    }
}
