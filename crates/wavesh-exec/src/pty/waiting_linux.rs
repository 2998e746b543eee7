//! "Waiting for input" from the kernel (PTY-2), on Linux.
//!
//! The terminal's foreground process group (`tcgetpgrp` on the master, in the host's
//! PID namespace) waits for input when none of its members runs and at least one sleeps
//! in a system call that reads this terminal:
//! - `read`, `readv`, `pread64` on a descriptor that is the slave (or `/dev/tty`, which
//!   for a foreground member is its controlling terminal, the slave);
//! - `select`, `pselect6`, `poll`, `ppoll` with the slave among the descriptors it waits
//!   to read (the sets are read from the process's memory);
//! - `epoll_wait`, `epoll_pwait`, `epoll_pwait2` on an epoll whose interest list holds
//!   the slave for reading (`/proc/PID/fdinfo`).
//!
//! The system call and its arguments come from `/proc/PID/syscall`. Nothing is read from
//! the text the program printed: a program that prints and sleeps sleeps in
//! `clock_nanosleep`, one that computes is running, and neither is waiting.

use std::os::fd::{AsRawFd, BorrowedFd};

use super::Waiting;

/// The system calls that read or wait on descriptors, by this architecture's numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Call {
    /// `read(fd, …)` and its kin: the descriptor is the first argument.
    Read,
    /// `select`/`pselect6(nfds, readfds, …)`.
    Select,
    /// `poll`/`ppoll(fds, nfds, …)`.
    Poll,
    /// `epoll_wait`/`epoll_pwait`/`epoll_pwait2(epfd, …)`.
    Epoll,
}

fn call_of(number: i64) -> Option<Call> {
    #[cfg(target_arch = "x86_64")]
    let extra = match number {
        libc::SYS_select => Some(Call::Select),
        libc::SYS_poll => Some(Call::Poll),
        libc::SYS_epoll_wait => Some(Call::Epoll),
        _ => None,
    };
    #[cfg(not(target_arch = "x86_64"))]
    let extra = None;
    extra.or(match number {
        libc::SYS_read | libc::SYS_readv | libc::SYS_pread64 => Some(Call::Read),
        libc::SYS_pselect6 => Some(Call::Select),
        libc::SYS_ppoll => Some(Call::Poll),
        // epoll_pwait2 has the same number on every architecture.
        libc::SYS_epoll_pwait | 441 => Some(Call::Epoll),
        _ => None,
    })
}

/// What one process of the foreground group is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Member {
    /// Running, or in uninterruptible sleep (disk I/O): busy.
    Busy,
    /// Blocked reading the terminal.
    ReadsTerminal,
    /// Asleep in something else.
    Elsewhere,
    /// Its system call could not be read.
    Unreadable,
}

/// Whether the foreground group of the terminal `master`, whose slave is `slave`
/// (`(st_dev, st_rdev)`), waits for input now.
pub(super) fn waiting(master: BorrowedFd<'_>, slave: (u64, u64)) -> Waiting {
    #[expect(unsafe_code, reason = "tcgetpgrp on a descriptor we hold")]
    // SAFETY: tcgetpgrp on a live descriptor.
    let group = unsafe { libc::tcgetpgrp(master.as_raw_fd()) };
    if group <= 0 {
        // No foreground group: nothing on the terminal can read it.
        return Waiting::No;
    }
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Waiting::Unknown("/proc cannot be read here");
    };
    let members = entries.flatten().filter_map(|entry| {
        let pid = entry.file_name().to_str()?.parse::<i32>().ok()?;
        let (state, pgrp) = stat(pid)?;
        (pgrp == group).then(|| member(pid, state, slave))
    });
    verdict(members)
}

/// The group's answer from its members': any member busy, no; one reading the
/// terminal (and none busy), yes; none reading and one unreadable, unknown.
fn verdict(members: impl Iterator<Item = Member>) -> Waiting {
    let mut reads = false;
    let mut unreadable = false;
    let mut count = 0;
    for member in members {
        count += 1;
        match member {
            Member::Busy => return Waiting::No,
            Member::ReadsTerminal => reads = true,
            Member::Elsewhere => {}
            Member::Unreadable => unreadable = true,
        }
    }
    match (reads, unreadable, count) {
        (_, _, 0) => Waiting::No,
        (true, _, _) => Waiting::Yes,
        (false, true, _) => Waiting::Unknown(
            "the kernel did not let wavesh read which system call the program sleeps in",
        ),
        (false, false, _) => Waiting::No,
    }
}

/// The state letter and the process group of `pid`, from `/proc/PID/stat`.
fn stat(pid: i32) -> Option<(u8, i32)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_ascii_whitespace();
    let state = *fields.next()?.as_bytes().first()?;
    let _ppid = fields.next()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some((state, pgrp))
}

fn member(pid: i32, state: u8, slave: (u64, u64)) -> Member {
    match state {
        b'R' | b'D' => return Member::Busy,
        // A zombie reads nothing; a stopped process is not waiting for the terminal.
        b'Z' | b'X' | b'x' | b'T' | b't' => return Member::Elsewhere,
        _ => {}
    }
    let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/syscall")) else {
        return Member::Unreadable;
    };
    let mut fields = text.split_ascii_whitespace();
    let Some(first) = fields.next() else {
        return Member::Unreadable;
    };
    if first == "running" {
        return Member::Busy;
    }
    let Ok(number) = first.parse::<i64>() else {
        // "-1 …": blocked, but not in a system call (a page fault).
        return Member::Elsewhere;
    };
    let args: Vec<u64> = fields
        .take(6)
        .filter_map(|field| u64::from_str_radix(field.trim_start_matches("0x"), 16).ok())
        .collect();
    if args.len() < 2 {
        return Member::Unreadable;
    }
    let Some(call) = call_of(number) else {
        return Member::Elsewhere;
    };
    let is_terminal = |fd: u64| is_terminal(pid, fd, slave);
    let verdict = match call {
        Call::Read => Some(is_terminal(args[0])),
        Call::Select => {
            select_reads(pid, args[0], args[1]).map(|fds| fds.into_iter().any(is_terminal))
        }
        Call::Poll => poll_reads(pid, args[0], args[1]).map(|fds| fds.into_iter().any(is_terminal)),
        Call::Epoll => epoll_reads(pid, args[0]).map(|fds| fds.into_iter().any(is_terminal)),
    };
    match verdict {
        Some(true) => Member::ReadsTerminal,
        Some(false) => Member::Elsewhere,
        None => Member::Unreadable,
    }
}

/// Whether descriptor `fd` of `pid` is the slave, or `/dev/tty` (5, 0).
fn is_terminal(pid: i32, fd: u64, slave: (u64, u64)) -> bool {
    let Ok(stat) = rustix::fs::stat(format!("/proc/{pid}/fd/{fd}")) else {
        return false;
    };
    let id = (stat.st_dev, stat.st_rdev);
    id == slave || stat.st_rdev == rustix::fs::makedev(5, 0)
}

/// Reads `len` bytes of `pid`'s memory at `address`.
fn memory(pid: i32, address: u64, len: usize) -> Option<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    let file = std::fs::File::open(format!("/proc/{pid}/mem")).ok()?;
    let mut buf = vec![0u8; len];
    file.read_exact_at(&mut buf, address).ok()?;
    Some(buf)
}

/// The descriptors a `select(nfds, readfds, …)` waits to read.
fn select_reads(pid: i32, nfds: u64, readfds: u64) -> Option<Vec<u64>> {
    if readfds == 0 {
        return Some(Vec::new());
    }
    let nfds = nfds.min(1024);
    let bytes = usize::try_from(nfds.div_ceil(64) * 8).ok()?;
    let set = memory(pid, readfds, bytes)?;
    Some(
        (0..nfds)
            .filter(|fd| set[(fd / 8) as usize] & (1 << (fd % 8)) != 0)
            .collect(),
    )
}

/// The descriptors a `poll(fds, nfds, …)` waits to read.
fn poll_reads(pid: i32, fds: u64, nfds: u64) -> Option<Vec<u64>> {
    let nfds = usize::try_from(nfds.min(4096)).ok()?;
    let raw = memory(pid, fds, nfds * 8)?;
    Some(
        raw.chunks_exact(8)
            .filter_map(|entry| {
                let fd = i32::from_ne_bytes([entry[0], entry[1], entry[2], entry[3]]);
                let events = i16::from_ne_bytes([entry[4], entry[5]]);
                (fd >= 0 && events & (libc::POLLIN | libc::POLLPRI) != 0).then_some(fd as u64)
            })
            .collect(),
    )
}

/// The descriptors an epoll instance `epfd` of `pid` watches for reading.
fn epoll_reads(pid: i32, epfd: u64) -> Option<Vec<u64>> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{epfd}")).ok()?;
    Some(
        text.lines()
            .filter_map(|line| {
                // "tfd:        0 events:       19 data: … pos:0 ino:… sdev:…"
                let rest = line.strip_prefix("tfd:")?;
                let mut words = rest.split_ascii_whitespace();
                let fd = words.next()?.parse::<u64>().ok()?;
                let _label = words.next()?;
                let events = u32::from_str_radix(words.next()?, 16).ok()?;
                (events & (libc::EPOLLIN as u32 | libc::EPOLLPRI as u32) != 0).then_some(fd)
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pty_2_stat_fields_after_the_last_parenthesis() {
        let own = std::process::id() as i32;
        let (state, pgrp) = stat(own).unwrap();
        // The main thread: running or waiting for this test's thread.
        assert!(b"RS".contains(&state), "{}", state as char);
        assert_eq!(pgrp, rustix::process::getpgrp().as_raw_nonzero().get());
    }

    #[test]
    fn pty_2_the_group_waits_only_if_one_reads_and_none_runs() {
        use Member::*;
        let of = |members: &[Member]| verdict(members.iter().copied());
        assert_eq!(of(&[]), Waiting::No);
        assert_eq!(of(&[ReadsTerminal]), Waiting::Yes);
        assert_eq!(of(&[Elsewhere, ReadsTerminal, Elsewhere]), Waiting::Yes);
        // A pipeline stage still computing: not waiting, whatever the others do.
        assert_eq!(of(&[ReadsTerminal, Busy]), Waiting::No);
        assert_eq!(of(&[Busy, Unreadable]), Waiting::No);
        assert_eq!(of(&[Elsewhere, Elsewhere]), Waiting::No);
        assert!(matches!(of(&[Elsewhere, Unreadable]), Waiting::Unknown(_)));
        assert_eq!(of(&[Unreadable, ReadsTerminal]), Waiting::Yes);
    }

    #[test]
    fn pty_2_call_numbers_map_to_kinds() {
        assert_eq!(call_of(libc::SYS_read), Some(Call::Read));
        assert_eq!(call_of(libc::SYS_pselect6), Some(Call::Select));
        assert_eq!(call_of(libc::SYS_ppoll), Some(Call::Poll));
        assert_eq!(call_of(libc::SYS_epoll_pwait), Some(Call::Epoll));
        assert_eq!(call_of(libc::SYS_clock_nanosleep), None);
        assert_eq!(call_of(libc::SYS_wait4), None);
    }
}
