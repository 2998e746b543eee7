//! Ending a whole process tree (KILL-1, KILL-2, KILL-4, KILL-5).
//!
//! Every command's shell leads its own process group, so the tree is the group: killing
//! only the shell would leave `npm → node → worker` grandchildren running. Abort, timeout
//! kill, TaskStop and session end all come through [`kill_tree`], the one implementation.
//!
//! The sequence is SIGTERM to the group, so programs can flush and clean up, then SIGKILL
//! to the group one second later if any member remains — not only when the leader does,
//! since a grandchild that ignores SIGTERM outlives its parent shell.

use std::time::Duration;

/// How long members get to exit after SIGTERM before SIGKILL (KILL-2).
pub const KILL_GRACE: Duration = Duration::from_secs(1);

/// How often the group is checked during the grace period, so a tree that exits at once
/// is not waited on for a full second.
const POLL: Duration = Duration::from_millis(20);

/// The two signals of the sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KillSignal {
    /// Polite: SIGTERM.
    Terminate,
    /// Final: SIGKILL.
    Kill,
}

/// The tree to end: its process group and its leader (the shell).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KillTarget {
    /// Process group id (the shell's pid: it was started as a group leader).
    pub pgid: i32,
    /// The shell's pid, used for the fallback of KILL-5.
    pub pid: i32,
}

/// Why a signal could not be delivered.
#[derive(Debug, thiserror::Error)]
pub enum SignalError {
    /// Nothing with that id exists any more: not an error for a kill (KILL-4).
    #[error("no such process")]
    Gone,
    /// Anything else (permission, ...).
    #[error("{0}")]
    Failed(#[from] std::io::Error),
}

/// The operating-system calls of a kill, behind a trait so the sequence is tested with a
/// fake.
pub trait Signaller: Send + Sync {
    /// Sends `signal` to every member of process group `pgid`.
    fn signal_group(&self, pgid: i32, signal: KillSignal) -> Result<(), SignalError>;
    /// Sends `signal` to the single process `pid`.
    fn signal_process(&self, pid: i32, signal: KillSignal) -> Result<(), SignalError>;
    /// Whether any process is still a member of group `pgid`.
    fn group_exists(&self, pgid: i32) -> bool;
    /// Lets the tree of group `pgid` run on unsupervised (the tasks `wavesh run` leaves
    /// running when it exits). Nothing to do for plain process groups.
    fn detach_group(&self, _pgid: i32) {}
    /// How many live processes the tree of group `pgid` has, where that can be told (a
    /// count for the model, never a target: nothing is signalled by it).
    fn tree_size(&self, _pgid: i32) -> Option<usize> {
        None
    }
    /// The per-command limit that ended the tree of group `pgid`, in words for the model
    /// ("the command was killed: it exceeded the 4 GiB memory limit"), if one did.
    fn limit_fired(&self, _pgid: i32) -> Option<String> {
        None
    }
}

/// What [`kill_tree`] ended up doing, for logs and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KillReport {
    /// The group was already gone before the first signal.
    AlreadyGone,
    /// Every member exited within the grace period after SIGTERM.
    Terminated,
    /// Members remained after the grace period and were sent SIGKILL.
    Killed,
    /// Signalling the group failed; only the direct child was killed (KILL-5).
    FellBackToChild,
}

/// Ends the tree: SIGTERM to the group, SIGKILL to the group after [`KILL_GRACE`] if any
/// member remains. Never fails: a missing target is logged at debug level, a failure at
/// error level with the fallback of killing the shell alone.
pub async fn kill_tree(signaller: &dyn Signaller, target: KillTarget) -> KillReport {
    match signaller.signal_group(target.pgid, KillSignal::Terminate) {
        Ok(()) => {}
        Err(SignalError::Gone) => {
            tracing::debug!(pgid = target.pgid, "kill: process group already gone");
            return KillReport::AlreadyGone;
        }
        Err(SignalError::Failed(error)) => return fall_back(signaller, target, &error),
    }
    let deadline = tokio::time::Instant::now() + KILL_GRACE;
    while tokio::time::Instant::now() < deadline {
        if !signaller.group_exists(target.pgid) {
            return KillReport::Terminated;
        }
        tokio::time::sleep(POLL).await;
    }
    if !signaller.group_exists(target.pgid) {
        return KillReport::Terminated;
    }
    match signaller.signal_group(target.pgid, KillSignal::Kill) {
        Ok(()) => KillReport::Killed,
        Err(SignalError::Gone) => KillReport::Terminated,
        Err(SignalError::Failed(error)) => fall_back(signaller, target, &error),
    }
}

/// KILL-5: log with the pid, then kill the direct child only. Never raises.
fn fall_back(signaller: &dyn Signaller, target: KillTarget, error: &std::io::Error) -> KillReport {
    tracing::error!(
        pid = target.pid,
        pgid = target.pgid,
        %error,
        "kill: signalling the process group failed; killing the shell only"
    );
    if let Err(SignalError::Failed(error)) = signaller.signal_process(target.pid, KillSignal::Kill)
    {
        tracing::error!(pid = target.pid, %error, "kill: killing the shell failed too");
    }
    KillReport::FellBackToChild
}

/// The real signaller for POSIX systems.
#[cfg(unix)]
#[derive(Debug, Default, Clone, Copy)]
pub struct PosixSignaller;

#[cfg(unix)]
impl PosixSignaller {
    fn to_rustix(signal: KillSignal) -> rustix::process::Signal {
        match signal {
            KillSignal::Terminate => rustix::process::Signal::TERM,
            KillSignal::Kill => rustix::process::Signal::KILL,
        }
    }

    fn map(result: rustix::io::Result<()>) -> Result<(), SignalError> {
        match result {
            Ok(()) => Ok(()),
            Err(rustix::io::Errno::SRCH) => Err(SignalError::Gone),
            Err(errno) => Err(SignalError::Failed(errno.into())),
        }
    }
}

#[cfg(unix)]
impl Signaller for PosixSignaller {
    fn signal_group(&self, pgid: i32, signal: KillSignal) -> Result<(), SignalError> {
        let Some(pgid) = rustix::process::Pid::from_raw(pgid) else {
            return Err(SignalError::Gone);
        };
        Self::map(rustix::process::kill_process_group(
            pgid,
            Self::to_rustix(signal),
        ))
    }

    fn signal_process(&self, pid: i32, signal: KillSignal) -> Result<(), SignalError> {
        let Some(pid) = rustix::process::Pid::from_raw(pid) else {
            return Err(SignalError::Gone);
        };
        Self::map(rustix::process::kill_process(pid, Self::to_rustix(signal)))
    }

    fn group_exists(&self, pgid: i32) -> bool {
        let Some(pgid) = rustix::process::Pid::from_raw(pgid) else {
            return false;
        };
        // Signal 0 checks existence and permission without delivering anything. EPERM
        // still means a member exists.
        if matches!(
            rustix::process::test_kill_process_group(pgid),
            Err(rustix::io::Errno::SRCH)
        ) {
            return false;
        }
        live_member_exists(pgid.as_raw_nonzero().get())
    }
}

/// Signal 0 also succeeds for zombies, and where PID 1 does not reap orphans (some
/// container and micro-VM inits) an ended tree would look alive forever. On Linux, a
/// group is alive only if a member that is not a zombie is listed in /proc.
#[cfg(target_os = "linux")]
fn live_member_exists(pgid: i32) -> bool {
    let Some(mut processes) = crate::proc_stat::all() else {
        return true;
    };
    processes.any(|(_, stat)| is_live_member(stat, pgid))
}

#[cfg(all(unix, not(target_os = "linux")))]
fn live_member_exists(_pgid: i32) -> bool {
    true
}

/// A member of group `pgid` that is not a zombie.
#[cfg(any(target_os = "linux", test))]
fn is_live_member(stat: crate::proc_stat::Stat, pgid: i32) -> bool {
    stat.pgrp == pgid && !stat.is_zombie()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A group whose members exit after receiving the given signal.
    struct FakeGroup {
        dies_on: Option<KillSignal>,
        alive: Mutex<bool>,
        fail_group: bool,
        log: Mutex<Vec<String>>,
    }

    impl FakeGroup {
        fn new(dies_on: Option<KillSignal>) -> Self {
            FakeGroup {
                dies_on,
                alive: Mutex::new(true),
                fail_group: false,
                log: Mutex::new(Vec::new()),
            }
        }
        fn log(&self) -> Vec<String> {
            self.log.lock().unwrap().clone()
        }
    }

    impl Signaller for FakeGroup {
        fn signal_group(&self, pgid: i32, signal: KillSignal) -> Result<(), SignalError> {
            self.log
                .lock()
                .unwrap()
                .push(format!("group {pgid} {signal:?}"));
            if self.fail_group {
                return Err(SignalError::Failed(std::io::Error::from(
                    std::io::ErrorKind::PermissionDenied,
                )));
            }
            let mut alive = self.alive.lock().unwrap();
            if !*alive {
                return Err(SignalError::Gone);
            }
            if self.dies_on == Some(signal) || signal == KillSignal::Kill {
                *alive = false;
            }
            Ok(())
        }
        fn signal_process(&self, pid: i32, signal: KillSignal) -> Result<(), SignalError> {
            self.log
                .lock()
                .unwrap()
                .push(format!("process {pid} {signal:?}"));
            Ok(())
        }
        fn group_exists(&self, _pgid: i32) -> bool {
            *self.alive.lock().unwrap()
        }
    }

    const TARGET: KillTarget = KillTarget { pgid: 42, pid: 42 };

    #[test]
    fn proc_stat_parsing_skips_zombies() {
        let member = |stat: &[u8]| {
            crate::proc_stat::parse(stat).is_some_and(|stat| is_live_member(stat, 42))
        };
        assert!(member(b"77 (sleep) S 1 42 42 0 -1"));
        assert!(member(b"77 (a) b) (c) R 1 42 42 0"));
        assert!(!member(b"77 (sleep) Z 1 42 42 0 -1"));
        assert!(!member(b"77 (sleep) S 1 43 43 0 -1"));
        assert!(!member(b"garbage"));
    }

    #[tokio::test(start_paused = true)]
    async fn kill_2_term_is_enough_for_a_polite_tree() {
        let group = FakeGroup::new(Some(KillSignal::Terminate));
        let start = tokio::time::Instant::now();
        assert_eq!(kill_tree(&group, TARGET).await, KillReport::Terminated);
        assert!(start.elapsed() < KILL_GRACE);
        assert_eq!(group.log(), vec!["group 42 Terminate"]);
    }

    #[tokio::test(start_paused = true)]
    async fn kill_2_kill_follows_one_second_later_when_a_member_remains() {
        let group = FakeGroup::new(None);
        let start = tokio::time::Instant::now();
        assert_eq!(kill_tree(&group, TARGET).await, KillReport::Killed);
        assert!(start.elapsed() >= KILL_GRACE);
        assert_eq!(group.log(), vec!["group 42 Terminate", "group 42 Kill"]);
    }

    #[tokio::test(start_paused = true)]
    async fn kill_4_a_gone_target_is_not_an_error() {
        let group = FakeGroup::new(None);
        *group.alive.lock().unwrap() = false;
        assert_eq!(kill_tree(&group, TARGET).await, KillReport::AlreadyGone);
    }

    #[tokio::test(start_paused = true)]
    async fn kill_5_failure_falls_back_to_the_direct_child() {
        let mut group = FakeGroup::new(None);
        group.fail_group = true;
        assert_eq!(kill_tree(&group, TARGET).await, KillReport::FellBackToChild);
        assert_eq!(group.log(), vec!["group 42 Terminate", "process 42 Kill"]);
    }
}
