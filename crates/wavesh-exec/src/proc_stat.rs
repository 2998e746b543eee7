//! Reading Linux's `/proc/<pid>/stat`, for group liveness and the subreaper's tree walk.

/// The fields of one process's `stat` that wavesh uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stat {
    /// The state letter: `R`, `S`, `Z` (zombie), ...
    pub state: u8,
    /// The parent's pid.
    pub ppid: i32,
    /// The process group.
    pub pgrp: i32,
}

impl Stat {
    /// Exited but not reaped, or dead.
    pub fn is_zombie(self) -> bool {
        matches!(self.state, b'Z' | b'X' | b'x')
    }
}

/// Parses `pid (comm) state ppid pgrp ...`. The command name may hold spaces and
/// parentheses, so fields are counted from the last `)`.
pub(crate) fn parse(stat: &[u8]) -> Option<Stat> {
    let close = stat.iter().rposition(|b| *b == b')')?;
    let rest = std::str::from_utf8(stat.get(close + 1..)?).ok()?;
    let mut fields = rest.split_ascii_whitespace();
    let state = *fields.next()?.as_bytes().first()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some(Stat { state, ppid, pgrp })
}

/// Every process listed in `/proc` with its stat, or `None` when `/proc` cannot be read.
#[cfg(target_os = "linux")]
pub(crate) fn all() -> Option<impl Iterator<Item = (i32, Stat)>> {
    let entries = std::fs::read_dir("/proc").ok()?;
    Some(entries.filter_map(Result::ok).filter_map(|entry| {
        let pid = entry.file_name().to_str()?.parse::<i32>().ok()?;
        let stat = std::fs::read(entry.path().join("stat")).ok()?;
        Some((pid, parse(&stat)?))
    }))
}

/// The children of the calling process, which must be single-threaded (its only thread's
/// `/proc/PID/task/PID/children`), each with its stat; `None` where the kernel has no such
/// file (built without `CONFIG_PROC_CHILDREN`) or `/proc` cannot be read. A child that
/// exits meanwhile is left out. Reads a line and a stat per child, where [`all`] reads a
/// stat per process of the machine.
#[cfg(target_os = "linux")]
pub(crate) fn own_children() -> Option<Vec<(i32, Stat)>> {
    let me = std::process::id();
    let list = std::fs::read(format!("/proc/{me}/task/{me}/children")).ok()?;
    let list = std::str::from_utf8(&list).ok()?;
    Some(
        list.split_ascii_whitespace()
            .filter_map(|pid| pid.parse::<i32>().ok())
            .filter_map(|pid| {
                let stat = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
                Some((pid, parse(&stat)?))
            })
            // A pid reused since the list was read is someone else's.
            .filter(|(_, stat)| stat.ppid == me as i32)
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn proc_1_own_children_are_listed_with_their_state() {
        // The test harness runs tests on threads: list from a forked, single-threaded
        // child of its own, which reports through its exit code.
        // SAFETY: the child only forks, waits and calls `own_children`, then `_exit`s.
        #[expect(
            unsafe_code,
            reason = "a forked single-threaded child that reports through its exit code"
        )]
        unsafe {
            let pid = libc::fork();
            assert!(pid >= 0);
            if pid == 0 {
                let sleeper = libc::fork();
                if sleeper == 0 {
                    libc::pause();
                    libc::_exit(0);
                }
                let exited = libc::fork();
                if exited == 0 {
                    libc::_exit(0);
                }
                // Let the second child become a zombie.
                std::thread::sleep(std::time::Duration::from_millis(100));
                let code = match own_children() {
                    None => 10,
                    Some(children) => {
                        let live = children
                            .iter()
                            .any(|(p, s)| *p == sleeper && !s.is_zombie());
                        let zombie = children.iter().any(|(p, s)| *p == exited && s.is_zombie());
                        if live && zombie && children.len() == 2 {
                            0
                        } else {
                            11
                        }
                    }
                };
                libc::kill(sleeper, libc::SIGKILL);
                libc::_exit(code);
            }
            let mut status = 0;
            libc::waitpid(pid, &mut status, 0);
            assert!(libc::WIFEXITED(status));
            match libc::WEXITSTATUS(status) {
                0 => {}
                // Reported, never faked: this kernel lists no children (the helper then
                // reads every process's stat).
                10 => wavesh_testkit::missing_prerequisite(
                    "/proc/PID/task/PID/children (CONFIG_PROC_CHILDREN)",
                    "a kernel built with it, as Debian's and Ubuntu's are",
                ),
                code => panic!("own_children listed the wrong children ({code})"),
            }
        }
    }

    #[test]
    fn parses_past_odd_names() {
        let stat = parse(b"77 (a) b) (c) R 1 42 42 0").unwrap();
        assert_eq!((stat.state, stat.ppid, stat.pgrp), (b'R', 1, 42));
        assert!(parse(b"77 (sleep) Z 1 42 42 0 -1").unwrap().is_zombie());
        assert_eq!(parse(b"garbage"), None);
        assert_eq!(parse(b"12 (x"), None);
    }
}
