//! The jobs an owner (a session) is responsible for: background tasks and the trees that
//! foreground commands left running (KILL-7). Ending the owner ends them all.

use std::sync::{Arc, Mutex, MutexGuard};

use crate::job::{Job, Phase, StopCause};
use crate::kill::{KillSignal, KillTarget, Signaller, kill_tree};

#[derive(Default)]
struct Inner {
    /// Jobs running in the foreground right now, so ending the owner ends them too.
    foreground: Vec<Arc<Job>>,
    tasks: Vec<Arc<Job>>,
    leftovers: Vec<KillTarget>,
    detached: bool,
}

/// Background tasks and leftover process trees of one owner.
pub struct TaskManager {
    inner: Mutex<Inner>,
    signaller: Arc<dyn Signaller>,
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
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Every update is a single push or flag write, so a poisoned lock still holds
        // consistent data.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Registers a job that has just moved to the background.
    pub fn register(&self, job: Arc<Job>) {
        debug_assert_eq!(job.phase(), Phase::Background);
        let mut inner = self.lock();
        inner.foreground.retain(|other| !Arc::ptr_eq(other, &job));
        inner.tasks.push(job);
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

    /// Leaves every task running when the manager is dropped: `wavesh run` exits while
    /// the commands it moved to the background go on, by design.
    pub fn detach(&self) {
        self.lock().detached = true;
    }

    /// Ends every running command (foreground and background) and every leftover tree,
    /// all at once, and waits until they are gone (at most about [`crate::KILL_GRACE`]).
    pub async fn shutdown(&self) {
        let (tasks, leftovers) = {
            let mut inner = self.lock();
            inner.detached = true;
            let mut jobs = std::mem::take(&mut inner.foreground);
            jobs.extend(inner.tasks.iter().cloned());
            (jobs, std::mem::take(&mut inner.leftovers))
        };
        // Each tree gets its own tokio task so the grace periods run concurrently.
        let mut set = tokio::task::JoinSet::new();
        for job in tasks.into_iter().filter(|job| job.exit().is_none()) {
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
    }
}

impl Drop for TaskManager {
    /// A manager dropped without [`TaskManager::shutdown`] still ends its trees:
    /// SIGTERM now, and SIGKILL one second later from a helper thread (KILL-2).
    fn drop(&mut self) {
        let inner = self.lock();
        if inner.detached {
            return;
        }
        let targets: Vec<KillTarget> = inner
            .tasks
            .iter()
            .chain(&inner.foreground)
            .filter(|job| job.exit().is_none())
            .map(|job| job.kill_target())
            .chain(inner.leftovers.iter().copied())
            .collect();
        drop(inner);
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
