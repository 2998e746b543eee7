//! The session's network namespace (NET-1), held by the helper's zygote.
//!
//! The helper stays in the host's namespaces: a command at `off` gets the host's network
//! and its user namespace (`sudo` works there). At its start it forks one more process,
//! the zygote, which makes the session's network namespace and lives in it:
//!
//! - not root: a user namespace of its own first (the same uid and gid inside, so files
//!   keep their owners), which owns the network namespace and every namespace of the
//!   sandboxed commands below it;
//! - loopback up; two TCP listeners on `127.0.0.1`, [`PROXY_PORT`] (the session's policy)
//!   and [`READ_PORT`] (reads: `gh` to api.github.com), handed to the host, whose proxy
//!   accepts on them. The listeners pin the namespace, and so do the zygote's children.
//!
//! Each sandboxed command's subreaper is then forked by the zygote, with `CLONE_PARENT`:
//! it is born in the session's network namespace yet is the helper's child, so the
//! helper waits for it, signals it and hands its pidfd to the host as for any other. A
//! process cannot join a network namespace owned by a sibling user namespace, so the
//! namespaces must be made in this order; the zygote has every capability in its user
//! namespace, which makes the command's PID, mount and IPC namespaces the way root does.
//! Nothing outside the namespace is reachable but through the host's proxy: it has no
//! interface but `lo`.

use std::io::{self, Write};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use std::collections::HashMap;

use super::super::tag;
use super::super::wire::{Reader, Writer, recv_frame, send_frame};
use super::Tree;

use crate::net::{PROXY_PORT, READ_PORT};

/// The helper's end of the zygote.
pub(crate) struct Zygote {
    pub(crate) pid: libc::pid_t,
    channel: OwnedFd,
}

fn last_error(what: &str) -> String {
    format!("{what}: {}", io::Error::last_os_error())
}

/// The helper's start, when the host asked for the session's network: makes the
/// zygote and tells the host its listeners or why there is none. `Err`: the host is
/// gone.
pub(super) fn start_for_host(host: RawFd, children: RawFd) -> Result<Option<Zygote>, ()> {
    let mut out = Writer::default();
    out.u8(tag::NETWORK).u64(0);
    match start(&[host, children]) {
        Ok((zygote, listeners)) => {
            out.i32(0).i32(0);
            let raw: Vec<RawFd> = listeners.iter().map(AsRawFd::as_raw_fd).collect();
            send_frame(host, &out.0, &raw).map(|()| Some(zygote))
        }
        Err(why) => {
            out.i32(-1).i32(0).bytes(why.as_bytes());
            send_frame(host, &out.0, &[]).map(|()| None)
        }
    }
    .map_err(drop)
}

/// Forks the zygote. Returns it and the two listeners (session port, read port), or why
/// the session can have no network namespace.
#[expect(
    unsafe_code,
    reason = "fork(2) in the single-threaded helper; the child closes the helper's raw descriptors"
)]
pub(crate) fn start(close_in_child: &[RawFd]) -> Result<(Zygote, Vec<OwnedFd>), String> {
    let (ours, theirs) = std::os::unix::net::UnixStream::pair()
        .map(|(ours, theirs)| (OwnedFd::from(ours), OwnedFd::from(theirs)))
        .map_err(|e| format!("a socket pair: {e}"))?;
    // SAFETY: the helper is single-threaded: the child may run any code.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(last_error("fork"));
    }
    if pid == 0 {
        // SAFETY: closing descriptors of the helper this process does not need. Standard
        // descriptors are reopened on /dev/null: a descriptor received later must never
        // land on 0..2, where the shell's `dup2` onto itself would keep it close-on-exec.
        unsafe {
            for fd in close_in_child {
                libc::close(*fd);
                if (0..3).contains(fd) {
                    libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
                }
            }
        }
        drop(ours);
        let code = zygote(theirs);
        // SAFETY: leaving the forked child without the helper's destructors.
        unsafe { libc::_exit(code) };
    }
    drop(theirs);
    let zygote = Zygote { pid, channel: ours };
    let answer = recv_frame(zygote.channel.as_raw_fd());
    match answer {
        Ok(Some((payload, fds))) if payload.first() == Some(&1) && fds.len() == 2 => {
            Ok((zygote, fds))
        }
        other => {
            let why = match other {
                Ok(Some((payload, _))) => {
                    String::from_utf8_lossy(payload.get(1..).unwrap_or(&[])).into_owned()
                }
                Ok(None) => "the network namespace's process exited".to_owned(),
                Err(error) => error.to_string(),
            };
            // Ending and reaping our own child.
            if let Some(pid) = rustix::process::Pid::from_raw(pid) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
                let _ = rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::empty());
            }
            Err(why)
        }
    }
}

impl Zygote {
    /// Has the zygote fork a command's subreaper: `payload` and `fds` are the host's
    /// spawn request as received, `socket` the subreaper's end of its channel. Returns
    /// the subreaper's pid (the helper's child).
    pub(crate) fn spawn(
        &self,
        payload: &[u8],
        fds: Vec<OwnedFd>,
        socket: OwnedFd,
    ) -> io::Result<libc::pid_t> {
        let mut raw: Vec<RawFd> = fds.iter().map(AsRawFd::as_raw_fd).collect();
        raw.push(socket.as_raw_fd());
        send_frame(self.channel.as_raw_fd(), payload, &raw)?;
        drop(fds);
        drop(socket);
        let Some((answer, _)) = recv_frame(self.channel.as_raw_fd())? else {
            return Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the session's network namespace is gone",
            ));
        };
        let value = Reader::new(&answer).i32("pid")?;
        if value < 0 {
            return Err(io::Error::from_raw_os_error(-value));
        }
        Ok(value)
    }
}

/// Whether a spawn request is sandboxed: read from copies of its descriptors, which the
/// parse consumes.
pub(super) fn is_sandboxed(payload: &[u8], fds: &[OwnedFd]) -> bool {
    let copies: Vec<OwnedFd> = fds.iter().filter_map(|fd| fd.try_clone().ok()).collect();
    super::parse_spawn(&mut Reader::new(&payload[1..]), copies).is_ok_and(|r| r.sandbox.is_some())
}

impl Zygote {
    /// Starts a sandboxed command's subreaper through the zygote, in the session's
    /// network namespace (NET-1); it is the helper's child all the same, and the host
    /// hears of it as of any other.
    pub(super) fn start_subreaper(
        &self,
        host: RawFd,
        payload: &[u8],
        fds: Vec<OwnedFd>,
        trees: &mut HashMap<u64, Tree>,
    ) -> io::Result<()> {
        let id = Reader::new(&payload[1..]).u64("id")?;
        let forked = std::os::unix::net::UnixStream::pair().and_then(|(ours, theirs)| {
            let pid = self.spawn(payload, fds, OwnedFd::from(theirs))?;
            Ok((pid, ours))
        });
        let (pid, ours) = match forked {
            Ok(forked) => forked,
            Err(error) => {
                let mut out = Writer::default();
                out.u8(tag::FAILED)
                    .u64(id)
                    .i32(error.raw_os_error().unwrap_or(libc::EIO))
                    .i32(0);
                let _ = send_frame(host, &out.0, &[]);
                return Err(error);
            }
        };
        // Our own unreaped child: the pid cannot name another process.
        let pidfd = rustix::process::Pid::from_raw(pid).and_then(|pid| {
            rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
        });
        // The pidfd goes to the host at once, so a command that stops its subreaper is
        // resumed (PROC-2).
        if let Some(pidfd) = &pidfd {
            let mut out = Writer::default();
            out.u8(tag::SUBREAPER).u64(id).i32(0).i32(0);
            let _ = send_frame(host, &out.0, &[pidfd.as_raw_fd()]);
        }
        trees.insert(
            id,
            Tree {
                subreaper: pid,
                pidfd,
                socket: OwnedFd::from(ours),
            },
        );
        Ok(())
    }
}

/// The zygote's body. Returns its exit code.
fn zygote(channel: OwnedFd) -> i32 {
    let channel = channel.as_raw_fd();
    let listeners = match enter_namespace() {
        Ok(listeners) => listeners,
        Err(why) => {
            let mut out = vec![0u8];
            out.extend_from_slice(why.as_bytes());
            let _ = send_frame(channel, &out, &[]);
            return 1;
        }
    };
    let raw: Vec<RawFd> = listeners.iter().map(AsRawFd::as_raw_fd).collect();
    if send_frame(channel, &[1], &raw).is_err() {
        return 1;
    }
    drop(listeners);
    loop {
        let (payload, mut fds) = match recv_frame(channel) {
            Ok(Some(frame)) => frame,
            // The helper is gone: so is the session.
            _ => return 0,
        };
        let answer = match fds.pop() {
            Some(socket) => fork_subreaper(channel, &payload, fds, socket),
            None => -libc::EINVAL,
        };
        let mut out = Writer::default();
        out.i32(answer);
        if send_frame(channel, &out.0, &[]).is_err() {
            return 0;
        }
    }
}

/// Makes the network namespace (and, not root, the user namespace owning it), brings
/// loopback up and opens the two listeners.
#[expect(unsafe_code, reason = "unshare(2) of the single-threaded zygote")]
fn enter_namespace() -> Result<Vec<OwnedFd>, String> {
    let root = rustix::process::geteuid().is_root();
    // Read before the new user namespace, where they are unmapped until written.
    let uid = rustix::process::getuid().as_raw();
    let gid = rustix::process::getgid().as_raw();
    let flags = if root {
        libc::CLONE_NEWNET
    } else {
        libc::CLONE_NEWUSER | libc::CLONE_NEWNET
    };
    // SAFETY: unshare(2) on this single-threaded process.
    if unsafe { libc::unshare(flags) } != 0 {
        return Err(last_error(if root {
            "a network namespace"
        } else {
            "a user and network namespace"
        }));
    }
    if !root {
        for (file, text) in [
            ("/proc/self/setgroups", "deny".to_owned()),
            ("/proc/self/uid_map", format!("{uid} {uid} 1")),
            ("/proc/self/gid_map", format!("{gid} {gid} 1")),
        ] {
            // Opened for writing only: no O_CREAT or O_TRUNC, which procfs refuses here.
            std::fs::OpenOptions::new()
                .write(true)
                .open(file)
                .and_then(|mut f| f.write_all(text.as_bytes()))
                .map_err(|e| format!("writing {file}: {e}"))?;
        }
    }
    loopback_up()?;
    [PROXY_PORT, READ_PORT]
        .into_iter()
        .map(listen)
        .collect::<Result<Vec<_>, _>>()
}

#[expect(
    unsafe_code,
    reason = "the interface ioctls read and write a struct ifreq in place"
)]
fn loopback_up() -> Result<(), String> {
    let fd = rustix::net::socket_with(
        rustix::net::AddressFamily::INET,
        rustix::net::SocketType::DGRAM,
        rustix::net::SocketFlags::CLOEXEC,
        None,
    )
    .map_err(|e| format!("a socket for loopback: {e}"))?;
    // SAFETY: ifreq is plain data; the ioctls read and write it in place.
    unsafe {
        let mut ifr: libc::ifreq = std::mem::zeroed();
        for (i, b) in b"lo".iter().enumerate() {
            ifr.ifr_name[i] = *b as libc::c_char;
        }
        if libc::ioctl(fd.as_raw_fd(), libc::SIOCGIFFLAGS, &mut ifr) != 0 {
            return Err(last_error("reading loopback's flags"));
        }
        ifr.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
        if libc::ioctl(fd.as_raw_fd(), libc::SIOCSIFFLAGS, &ifr) != 0 {
            return Err(last_error("bringing loopback up"));
        }
    }
    Ok(())
}

fn listen(port: u16) -> Result<OwnedFd, String> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", port))
        .map_err(|e| format!("listening on 127.0.0.1:{port}: {e}"))?;
    Ok(OwnedFd::from(listener))
}

/// Forks a command's subreaper as the helper's child. Returns its pid or `-errno`.
#[expect(
    unsafe_code,
    reason = "clone3(2) in the single-threaded zygote; the child closes the zygote's channel"
)]
fn fork_subreaper(channel: RawFd, payload: &[u8], fds: Vec<OwnedFd>, socket: OwnedFd) -> i32 {
    let mut reader = Reader::new(payload);
    if reader.u8("tag").ok() != Some(tag::SPAWN) {
        return -libc::EINVAL;
    }
    let request = match super::parse_spawn(&mut reader, fds) {
        Ok(request) => request,
        Err(error) => return -error.raw_os_error().unwrap_or(libc::EINVAL),
    };
    let isolate = request
        .sandbox
        .as_ref()
        .is_some_and(crate::sandbox::ChildSandbox::isolates);
    // The helper, our parent; a pidfd is close-on-exec.
    let helper_pidfd = rustix::process::getppid().and_then(|helper| {
        rustix::process::pidfd_open(helper, rustix::process::PidfdFlags::empty()).ok()
    });
    // SAFETY: this process is single-threaded, so the child may run any code.
    let pid = unsafe { clone_parent(isolate) };
    if pid < 0 {
        let errno = io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO);
        return -errno;
    }
    if pid == 0 {
        // SAFETY: the subreaper needs nothing of the zygote's but its own channel.
        unsafe { libc::close(channel) };
        let cgroup = request
            .cgroup_dir
            .as_deref()
            .and_then(super::CgroupParents::open);
        // Born with every capability of the session's user namespace: its namespaces
        // are made as root makes them, with no mapping of its own.
        let code = super::subreaper(socket, request, None, false);
        if let Some(cgroup) = cgroup {
            cgroup.remove(super::helper_gone(
                helper_pidfd.as_ref().map_or(-1, AsRawFd::as_raw_fd),
            ));
        }
        // SAFETY: leaving the forked child without the zygote's destructors.
        unsafe { libc::_exit(code) };
    }
    // The subreaper has its copy of the helper's pidfd; ours closes here.
    drop(helper_pidfd);
    pid
}

/// clone3 with `CLONE_PARENT` (the child is the helper's) and, when `isolate`, a new PID
/// namespace whose init it is.
///
/// # Safety
/// As for `fork`.
#[expect(unsafe_code, reason = "clone3(2) without CLONE_VM or a stack: a fork")]
unsafe fn clone_parent(isolate: bool) -> libc::pid_t {
    let mut flags = libc::CLONE_PARENT as u64;
    if isolate {
        flags |= libc::CLONE_NEWPID as u64;
    }
    // With CLONE_PARENT the kernel takes the zygote's own exit signal (SIGCHLD).
    // SAFETY: the caller's contract is fork's.
    unsafe { crate::clone3::fork(flags, 0, None) }
}
