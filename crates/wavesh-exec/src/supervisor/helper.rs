//! The helper process and its per-command subreapers.
//!
//! The helper is single-threaded: it may `fork` and then run ordinary Rust in the child.
//! For each command it forks a subreaper (`PR_SET_CHILD_SUBREAPER`), which forks the
//! shell as the leader of a new process group. Every descendant of the shell stays a
//! descendant of the subreaper even when it leaves the group (`setsid`) or its parent
//! dies (double fork): orphans are reparented to the subreaper, not to init. So the
//! subreaper can always find the whole tree (its descendants in `/proc`) and end it.
//!
//! Channels: the host talks to the helper on fd 0 (frames, see `wire`); the helper talks
//! to each subreaper on a socket pair with fixed 9-byte records. A closed socket is a
//! death notice: the helper that loses the host ends every tree, a subreaper that loses
//! the helper ends its own.

use std::collections::HashMap;
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use super::wire::{Reader, Writer, read_exact, recv_frame, send_frame, write_all};
use super::{KIND_CODE, KIND_SIGNAL, PROTOCOL, tag};

pub(crate) mod zygote;

/// One record between helper and subreaper: a tag and two integers.
const RECORD: usize = 9;

fn record(tag: u8, a: i32, b: i32) -> [u8; RECORD] {
    let mut out = [0u8; RECORD];
    out[0] = tag;
    out[1..5].copy_from_slice(&a.to_le_bytes());
    out[5..9].copy_from_slice(&b.to_le_bytes());
    out
}

fn parse_record(bytes: &[u8; RECORD]) -> (u8, i32, i32) {
    let a = i32::from_le_bytes([bytes[1], bytes[2], bytes[3], bytes[4]]);
    let b = i32::from_le_bytes([bytes[5], bytes[6], bytes[7], bytes[8]]);
    (bytes[0], a, b)
}

/// How long a tree gets after SIGTERM before SIGKILL when the helper or host is gone.
const GRACE: Duration = Duration::from_secs(1);

struct Tree {
    subreaper: libc::pid_t,
    /// A pidfd of the subreaper, given to the host as soon as it is forked so the host can
    /// resume it if the command stops it (PROC-2) without signalling a bare pid.
    pidfd: Option<OwnedFd>,
    socket: OwnedFd,
}

/// A command to start, as received from the host.
struct SpawnRequest {
    id: u64,
    shell: CString,
    args: Vec<CString>,
    env: Vec<CString>,
    cwd: CString,
    stdin: OwnedFd,
    output: OwnedFd,
    sandbox: Option<crate::sandbox::ChildSandbox>,
    /// The command cgroup's directory, opened: the shell is born in it.
    cgroup: Option<OwnedFd>,
    /// The command cgroup's directory, removed by the subreaper once its tree is empty.
    cgroup_dir: Option<std::path::PathBuf>,
    /// A shell started ahead of its command: the socket its prelude waits on, descriptor 3.
    go: Option<OwnedFd>,
}

fn cstring(bytes: &[u8], what: &str) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{what} holds a NUL byte"),
        )
    })
}

fn parse_spawn(payload: &mut Reader<'_>, fds: Vec<OwnedFd>) -> io::Result<SpawnRequest> {
    let id = payload.u64("id")?;
    let shell = cstring(payload.bytes("shell")?, "the shell path")?;
    let argc = payload.u32("argument count")?;
    let mut args = Vec::new();
    for _ in 0..argc {
        args.push(cstring(payload.bytes("argument")?, "an argument")?);
    }
    let envc = payload.u32("environment size")?;
    let mut env = Vec::new();
    for _ in 0..envc {
        env.push(cstring(payload.bytes("variable")?, "a variable")?);
    }
    let cwd = cstring(payload.bytes("cwd")?, "the working directory")?;
    let sandbox = payload.bytes("sandbox")?;
    let in_cgroup = payload.u8("cgroup flag")? == 1;
    let cgroup_dir = if in_cgroup {
        use std::os::unix::ffi::OsStrExt;
        Some(std::path::PathBuf::from(std::ffi::OsStr::from_bytes(
            payload.bytes("cgroup directory")?,
        )))
    } else {
        None
    };
    let ahead = payload.u8("start-ahead flag")? == 1;
    let mut fds = fds.into_iter();
    let missing = || io::Error::new(io::ErrorKind::InvalidData, "spawn without its descriptors");
    let stdin = fds.next().ok_or_else(missing)?;
    let output = fds.next().ok_or_else(missing)?;
    let sandbox = crate::sandbox::decode_child(sandbox, || fds.next().ok_or_else(missing))?;
    let cgroup = if in_cgroup {
        Some(fds.next().ok_or_else(missing)?)
    } else {
        None
    };
    let go = if ahead {
        Some(fds.next().ok_or_else(missing)?)
    } else {
        None
    };
    Ok(SpawnRequest {
        id,
        shell,
        args,
        env,
        cwd,
        stdin,
        output,
        sandbox,
        cgroup,
        cgroup_dir,
        go,
    })
}

/// Tells the host's stderr (the helper has no logger of its own).
fn report(message: &str) {
    use std::io::Write;
    let _ = writeln!(io::stderr(), "wavesh supervisor: {message}");
}

/// The helper's main loop; returns when the host is gone and every tree has ended.
#[expect(
    unsafe_code,
    reason = "the helper's start: signal masks, a signalfd, prctl(2), poll(2) and the descriptors the host gave"
)]
pub(crate) fn run() -> i32 {
    let host: RawFd = 0;
    // SAFETY: setting dispositions of signals (no handlers run Rust code), then process
    // attributes of this single-threaded process.
    let children = unsafe {
        for signal in [libc::SIGINT, libc::SIGQUIT, libc::SIGHUP, libc::SIGTSTP] {
            libc::signal(signal, libc::SIG_IGN);
        }
        // PROC-3: a session of its own (no controlling terminal) and nothing of the
        // host's descriptors but the channel.
        libc::setsid();
        crate::spawn::mark_inherited_descriptors_cloexec();
        // PROC-2: the helper is a subreaper too. A subreaper that is killed (by its own
        // command: `kill -9 $PPID`) leaves its tree to the helper, which ends it.
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        let mut mask: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut mask);
        libc::sigaddset(&mut mask, libc::SIGCHLD);
        libc::sigprocmask(libc::SIG_BLOCK, &mask, std::ptr::null_mut());
        libc::signalfd(-1, &mask, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK)
    };
    if children < 0 {
        report("cannot watch for child exits (signalfd failed)");
        return 1;
    }
    // SAFETY: the descriptor was just created and is owned here.
    let children = unsafe { OwnedFd::from_raw_fd(children) };
    // First words: which protocol this helper speaks.
    let mut hello = Writer::default();
    hello.u8(tag::HELLO).u64(0).i32(PROTOCOL).i32(0);
    if send_frame(host, &hello.0, &[]).is_err() {
        return 1;
    }
    // NET-1: the session's network namespace, when the host asked for one; the host is
    // told its listeners or why there is none.
    let zygote = if std::env::var_os(super::NETWORK_ENV).is_some() {
        match zygote::start_for_host(host, children.as_raw_fd()) {
            Ok(zygote) => zygote,
            Err(()) => return 1,
        }
    } else {
        None
    };
    let mut trees: HashMap<u64, Tree> = HashMap::new();
    // Subreapers of detached trees: they outlive the helper on purpose and are never
    // ended by it.
    let mut detached: Vec<libc::pid_t> = Vec::new();
    // The session's cgroup directory, removed (as far as it is empty) when the helper
    // ends.
    let mut cgroups: Option<std::path::PathBuf> = None;
    loop {
        let ids: Vec<u64> = trees.keys().copied().collect();
        let mut polls: Vec<libc::pollfd> = [host, children.as_raw_fd()]
            .into_iter()
            .chain(ids.iter().map(|id| trees[id].socket.as_raw_fd()))
            .map(|fd| libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        // SAFETY: `polls` is a live array of the length given.
        let n = unsafe { libc::poll(polls.as_mut_ptr(), polls.len() as libc::nfds_t, -1) };
        if n < 0 {
            if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            break;
        }
        for (i, id) in ids.iter().enumerate() {
            if polls[i + 2].revents != 0 {
                from_subreaper(host, *id, &mut trees);
            }
        }
        if polls[1].revents != 0 {
            drain_signals(children.as_raw_fd());
            let keep: Vec<libc::pid_t> = trees
                .values()
                .map(|tree| tree.subreaper)
                .chain(zygote.as_ref().map(|z| z.pid))
                .collect();
            end_adopted(&keep, &mut detached);
        }
        if polls[0].revents != 0 {
            match recv_frame(host) {
                // NET-1: a sandboxed command of a session with a network namespace is
                // forked by the zygote, in that namespace; never here, in the host's.
                Ok(Some((payload, fds)))
                    if payload.first() == Some(&tag::SPAWN)
                        && let Some(zygote) = &zygote
                        && zygote::is_sandboxed(&payload, &fds) =>
                {
                    if let Err(error) = zygote.start_subreaper(host, &payload, fds, &mut trees) {
                        report(&error.to_string());
                    }
                }
                Ok(Some((payload, fds))) => {
                    if let Err(error) = from_host(
                        host,
                        children.as_raw_fd(),
                        &payload,
                        fds,
                        &mut trees,
                        &mut detached,
                        &mut cgroups,
                    ) {
                        report(&error.to_string());
                    }
                }
                Ok(None) => break,
                // A host that exits with messages unread resets the connection: an end
                // like any other.
                Err(error) if error.kind() == io::ErrorKind::ConnectionReset => break,
                Err(error) => {
                    report(&format!("the host channel failed: {error}"));
                    break;
                }
            }
        }
    }
    // The host is gone: every subreaper sees its socket close and ends its tree. Wait for
    // them so none is left a zombie under an init that does not reap, ending whatever a
    // dying subreaper leaves to this process on the way. Detached trees are left alone.
    let mut subreapers: Vec<libc::pid_t> = trees.values().map(|tree| tree.subreaper).collect();
    drop(trees);
    loop {
        subreapers.retain(|pid| {
            let mut status = 0;
            // SAFETY: reaping our own child if it exited.
            unsafe { libc::waitpid(*pid, &mut status, libc::WNOHANG) == 0 }
        });
        if end_adopted(&subreapers, &mut detached) == 0 {
            break;
        }
        let mut poll = libc::pollfd {
            fd: children.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one live pollfd.
        unsafe { libc::poll(&mut poll, 1, 20) };
        drain_signals(children.as_raw_fd());
    }
    if let Some(dir) = cgroups {
        remove_empty_cgroups(&dir);
    }
    0
}

/// Removes the empty command cgroups under a session's directory, then the directory if
/// it is empty: `rmdir` of a populated cgroup fails, so a detached tree keeps its own.
fn remove_empty_cgroups(dir: &std::path::Path) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.file_name().to_string_lossy().starts_with("cmd-") {
                let _ = std::fs::remove_dir(entry.path());
            }
        }
    }
    let _ = std::fs::remove_dir(dir);
}

/// Ends what this process adopted: every child that is neither one of its subreapers
/// (`keep`) nor a detached tree's was left to it by a subreaper that died before its tree
/// (PROC-2). They are its own unreaped children, so their pids are still theirs (PROC-1).
/// Their own children are adopted in turn when they die, and ended by the next call (each
/// death is a SIGCHLD). Reaps every exited child but the subreapers, which are reaped
/// where their socket closes, so their end is told to the host. Returns how many children
/// other than detached ones are left.
#[expect(
    unsafe_code,
    reason = "kill(2) and waitpid(2) of the helper's own adopted children"
)]
fn end_adopted(keep: &[libc::pid_t], detached: &mut Vec<libc::pid_t>) -> usize {
    let me = std::process::id() as libc::pid_t;
    // Its own children, listed by the kernel; where it cannot list them, every process's
    // parent is read (a few hundred reads on a busy machine, after every command).
    let children: Vec<(libc::pid_t, bool)> = crate::proc_stat::own_children()
        .map(|children| {
            children
                .into_iter()
                .map(|(pid, stat)| (pid, stat.is_zombie()))
                .collect()
        })
        .or_else(|| {
            crate::proc_stat::all().map(|processes| {
                processes
                    .filter(|(_, stat)| stat.ppid == me)
                    .map(|(pid, stat)| (pid, stat.is_zombie()))
                    .collect()
            })
        })
        .unwrap_or_default();
    let mut left = 0;
    for (pid, zombie) in children {
        if zombie && !keep.contains(&pid) {
            let mut status = 0;
            // SAFETY: reaping our own exited child.
            unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
            detached.retain(|d| *d != pid);
            continue;
        }
        if detached.contains(&pid) {
            continue;
        }
        left += 1;
        if !keep.contains(&pid) {
            // SAFETY: signalling our own unreaped child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
    left
}

fn from_subreaper(host: RawFd, id: u64, trees: &mut HashMap<u64, Tree>) {
    let Some(tree) = trees.get(&id) else { return };
    let mut buf = [0u8; RECORD];
    match read_exact(tree.socket.as_raw_fd(), &mut buf) {
        Ok(()) => {
            let (kind, a, b) = parse_record(&buf);
            let mut out = Writer::default();
            out.u8(kind).u64(id).i32(a).i32(b);
            let _ = send_frame(host, &out.0, &[]);
        }
        Err(_) => {
            // The subreaper exited: its tree is gone.
            let tree = trees.remove(&id).map(|tree| tree.subreaper);
            if let Some(pid) = tree {
                let mut status = 0;
                #[expect(unsafe_code, reason = "waitpid(2) of the helper's own child")]
                // SAFETY: waiting for our own child, which has closed its socket by exiting.
                unsafe {
                    libc::waitpid(pid, &mut status, 0)
                };
            }
            let mut out = Writer::default();
            out.u8(tag::GONE).u64(id).i32(0).i32(0);
            let _ = send_frame(host, &out.0, &[]);
        }
    }
}

fn from_host(
    host: RawFd,
    children: RawFd,
    payload: &[u8],
    fds: Vec<OwnedFd>,
    trees: &mut HashMap<u64, Tree>,
    detached: &mut Vec<libc::pid_t>,
    cgroups: &mut Option<std::path::PathBuf>,
) -> io::Result<()> {
    let mut reader = Reader::new(payload);
    match reader.u8("tag")? {
        tag::SPAWN => {
            let request = match parse_spawn(&mut reader, fds) {
                Ok(request) => request,
                Err(error) => {
                    // The id comes first; answer it if it could be read.
                    if let Ok(id) = Reader::new(&payload[1..]).u64("id") {
                        let mut out = Writer::default();
                        out.u8(tag::FAILED).u64(id).i32(libc::EINVAL).i32(0);
                        let _ = send_frame(host, &out.0, &[]);
                    }
                    return Err(error);
                }
            };
            let id = request.id;
            if let Some(parent) = request.cgroup_dir.as_deref().and_then(|dir| dir.parent()) {
                *cgroups = Some(parent.to_path_buf());
            }
            match fork_subreaper(host, children, request, trees) {
                Ok(tree) => {
                    // The subreaper's pidfd goes to the host before the subreaper can do
                    // anything, so a command that stops it at once is still resumed.
                    if let Some(pidfd) = &tree.pidfd {
                        let mut out = Writer::default();
                        out.u8(tag::SUBREAPER).u64(id).i32(0).i32(0);
                        let _ = send_frame(host, &out.0, &[pidfd.as_raw_fd()]);
                    }
                    trees.insert(id, tree);
                }
                Err(error) => {
                    let mut out = Writer::default();
                    out.u8(tag::FAILED)
                        .u64(id)
                        .i32(error.raw_os_error().unwrap_or(libc::EIO))
                        .i32(0);
                    let _ = send_frame(host, &out.0, &[]);
                }
            }
        }
        tag::SIGNAL => {
            let id = reader.u64("id")?;
            let signal = reader.i32("signal")?;
            if let Some(tree) = trees.get(&id) {
                let _ = write_all(tree.socket.as_raw_fd(), &record(tag::SIGNAL, signal, 0));
            }
        }
        tag::DETACH => {
            let id = reader.u64("id")?;
            if let Some(tree) = trees.remove(&id) {
                // The subreaper stays the tree's reaper but no longer answers to this
                // helper; the host has forgotten the tree already.
                let _ = write_all(tree.socket.as_raw_fd(), &record(tag::DETACH, 0, 0));
                detached.push(tree.subreaper);
            }
        }
        other => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("unknown supervisor message {other}"),
            ));
        }
    }
    Ok(())
}

#[expect(
    unsafe_code,
    reason = "fork(2) in the single-threaded helper; the child joins namespaces with system calls only"
)]
fn fork_subreaper(
    host: RawFd,
    children: RawFd,
    request: SpawnRequest,
    trees: &HashMap<u64, Tree>,
) -> io::Result<Tree> {
    let mut pair = [0 as RawFd; 2];
    // SAFETY: `pair` has room for the two descriptors.
    if unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0,
            pair.as_mut_ptr(),
        )
    } != 0
    {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned here.
    let (ours, theirs) = unsafe { (OwnedFd::from_raw_fd(pair[0]), OwnedFd::from_raw_fd(pair[1])) };
    // SBX-2: a sandboxed command's subreaper is the init of a PID namespace of its own
    // (it then isolates itself, see `ChildSandbox::isolate`). unshare(CLONE_NEWPID) only
    // sets where this process's next child is born; the helper goes back to its own
    // namespace for the children after it.
    let isolate = request
        .sandbox
        .as_ref()
        .is_some_and(crate::sandbox::ChildSandbox::isolates);
    // Not root: the PID namespace must be owned by a new user namespace, which only a
    // clone can make for the child without moving the helper into it.
    let userns = isolate
        .then(crate::sandbox::isolation_user_namespace)
        .flatten();
    // SBX-7: a command outside the sandbox still gets a PID namespace of its own where
    // the helper runs as root, so its tree cannot outlive the session.
    let off_ns = !isolate
        && std::env::var_os(super::NO_OFF_PID_NS_ENV).is_none()
        && crate::sandbox::off_pid_namespace().is_ok();
    let own_pid_ns = if (isolate && userns.is_none()) || off_ns {
        let own = std::fs::File::open("/proc/self/ns/pid")?;
        // SAFETY: unshare(2) on this single-threaded process.
        if unsafe { libc::unshare(libc::CLONE_NEWPID) } != 0 {
            let error = io::Error::last_os_error();
            return Err(io::Error::new(
                error.kind(),
                format!("cannot make a PID namespace for the command: {error}"),
            ));
        }
        Some(own)
    } else {
        None
    };
    // The helper, to the subreaper: a PID namespace's init has no parent pid to watch.
    // SAFETY: pidfd_open of this process; a new close-on-exec descriptor or -1.
    let helper_pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, libc::getpid(), 0) } as RawFd;
    // SAFETY: this process is single-threaded, so the child may run any code.
    let pid = unsafe {
        if userns.is_some() {
            crate::sandbox::fork_isolated(true)
        } else {
            libc::fork()
        }
    };
    if pid != 0
        && let Some(own) = &own_pid_ns
        // SAFETY: setns(2) back into the namespace this process lives in.
        && unsafe { libc::setns(own.as_raw_fd(), libc::CLONE_NEWPID) } != 0
    {
        report("cannot return to the helper's own PID namespace");
    }
    if pid < 0 {
        if helper_pidfd >= 0 {
            // SAFETY: closing our own descriptor.
            unsafe { libc::close(helper_pidfd) };
        }
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        // The subreaper: it needs nothing of the helper's but its own channel.
        // SAFETY: closing descriptors this process owns.
        unsafe {
            libc::close(host);
            libc::close(children);
            for tree in trees.values() {
                libc::close(tree.socket.as_raw_fd());
                if let Some(pidfd) = &tree.pidfd {
                    libc::close(pidfd.as_raw_fd());
                }
            }
            libc::close(ours.as_raw_fd());
        }
        std::mem::forget(ours);
        // Opened before the subreaper may isolate itself, when the cgroup file system
        // becomes read-only in its namespace: these descriptors still reach the host's.
        let cgroup = request.cgroup_dir.as_deref().and_then(CgroupParents::open);
        let code = subreaper(theirs, request, userns, off_ns);
        // The tree is gone (or detached and now gone): its cgroup goes too, and, when the
        // helper has ended meanwhile, the session's directory if it is empty. Never
        // another command's cgroup: the host may have just made one for a new command.
        if let Some(cgroup) = cgroup {
            cgroup.remove(helper_gone(helper_pidfd));
        }
        // SAFETY: leaving the forked child without running the helper's destructors.
        unsafe { libc::_exit(code) };
    }
    drop(theirs);
    if helper_pidfd >= 0 {
        // SAFETY: closing our own descriptor; the subreaper has its copy.
        unsafe { libc::close(helper_pidfd) };
    }
    // `request`'s descriptors close here: the subreaper has its own copies.
    drop(request);
    // SAFETY: pidfd_open of our own unreaped child (pidfds are close-on-exec); a new
    // descriptor or -1.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as RawFd;
    Ok(Tree {
        subreaper: pid,
        // SAFETY: a descriptor just returned to us, when there is one (kernels before 5.3
        // have no pidfds; the host then has no way to resume a stopped subreaper).
        pidfd: (pidfd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(pidfd) }),
        socket: ours,
    })
}

/// The session's and the command's cgroup directories, opened so the command's can be
/// removed by descriptor.
struct CgroupParents {
    /// The session's directory, and its own parent with the session directory's name.
    session: OwnedFd,
    above: Option<(OwnedFd, CString)>,
    name: CString,
}

impl CgroupParents {
    fn open(dir: &std::path::Path) -> Option<CgroupParents> {
        use std::os::unix::ffi::OsStrExt;
        let open = |path: &std::path::Path| std::fs::File::open(path).ok().map(OwnedFd::from);
        let parent = dir.parent()?;
        let name = CString::new(dir.file_name()?.as_bytes()).ok()?;
        let above = parent.parent().and_then(|above| {
            Some((
                open(above)?,
                CString::new(parent.file_name()?.as_bytes()).ok()?,
            ))
        });
        Some(CgroupParents {
            session: open(parent)?,
            above,
            name,
        })
    }

    /// Removes the command's directory, and the session's too when `helper_gone` and it
    /// is empty.
    #[expect(
        unsafe_code,
        reason = "unlinkat(2) of the command's own cgroup through a descriptor owned here"
    )]
    fn remove(&self, helper_gone: bool) {
        // SAFETY: unlinkat on descriptors and C strings owned by `self`.
        unsafe {
            libc::unlinkat(
                self.session.as_raw_fd(),
                self.name.as_ptr(),
                libc::AT_REMOVEDIR,
            );
            if helper_gone && let Some((above, session)) = &self.above {
                libc::unlinkat(above.as_raw_fd(), session.as_ptr(), libc::AT_REMOVEDIR);
            }
        }
    }
}

/// Whether the helper, held by `pidfd`, has exited (a pidfd polls readable then).
#[expect(unsafe_code, reason = "poll(2) on a pidfd owned by the caller")]
fn helper_gone(pidfd: RawFd) -> bool {
    if pidfd < 0 {
        return false;
    }
    let mut poll = libc::pollfd {
        fd: pidfd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one live pollfd, no wait.
    unsafe { libc::poll(&mut poll, 1, 0) == 1 }
}

/// The pid the host's `/proc` (`host_proc`) gives our child `pid`: a PID namespace's
/// init knows its children by their numbers inside it, and the host knows trees by
/// theirs. Read from the fdinfo of a pidfd, which each `/proc` numbers in its own
/// namespace.
fn host_pid(host_proc: &OwnedFd, pid: libc::pid_t) -> Option<libc::pid_t> {
    // Our own unreaped child: the pid cannot name another process.
    let fd = rustix::process::pidfd_open(
        rustix::process::Pid::from_raw(pid)?,
        rustix::process::PidfdFlags::empty(),
    )
    .ok()?;
    let info = rustix::fs::openat(
        host_proc,
        format!("thread-self/fdinfo/{}", fd.as_raw_fd()),
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .ok()?;
    let text = io::read_to_string(std::fs::File::from(info)).ok()?;
    text.lines()
        .find_map(|line| line.strip_prefix("Pid:"))
        .and_then(|pid| pid.trim().parse().ok())
        .filter(|pid: &libc::pid_t| *pid > 0)
}

/// The subreaper of one command. Returns its exit code.
#[expect(
    unsafe_code,
    reason = "the subreaper's start: prctl(2), signal masks, a signalfd and poll(2)"
)]
fn subreaper(
    socket: OwnedFd,
    mut request: SpawnRequest,
    userns: Option<(u32, u32)>,
    off_ns: bool,
) -> i32 {
    let socket = socket.as_raw_fd();
    // SAFETY: process attribute and signal mask changes on this single-threaded process.
    let signals = unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        let mut mask: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut mask);
        libc::sigaddset(&mut mask, libc::SIGCHLD);
        libc::sigaddset(&mut mask, libc::SIGTERM);
        libc::sigprocmask(libc::SIG_BLOCK, &mask, std::ptr::null_mut());
        libc::signalfd(-1, &mask, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK)
    };
    if signals < 0 {
        // Without it no exit would ever be seen: refuse rather than hang.
        let errno = io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO);
        let _ = write_all(socket, &record(tag::FAILED, errno, 0));
        return 1;
    }
    let isolated = match request.sandbox.as_mut() {
        Some(sandbox) if sandbox.isolates() => Some(sandbox.isolate(userns)),
        _ if off_ns => Some(crate::sandbox::isolate_at_off()),
        _ => None,
    };
    let host_proc = match isolated.transpose() {
        Ok(host_proc) => host_proc,
        Err(error) => {
            report(&error.to_string());
            let errno = error.raw_os_error().unwrap_or(libc::EPERM);
            let _ = write_all(socket, &record(tag::FAILED, errno, 0));
            return 1;
        }
    };
    let shell = match spawn_shell(&request) {
        Ok(pid) => pid,
        Err(errno) => {
            let _ = write_all(socket, &record(tag::FAILED, errno, 0));
            return 1;
        }
    };
    drop(request);
    // The host knows the tree by the shell's pid in the host's namespace.
    let known_as = match &host_proc {
        Some(host_proc) => match host_pid(host_proc, shell) {
            Some(pid) => pid,
            None => {
                end_tree(shell, true, signals);
                let _ = write_all(socket, &record(tag::FAILED, libc::ESRCH, 0));
                return 1;
            }
        },
        None => shell,
    };
    drop(host_proc);
    if write_all(socket, &record(tag::STARTED, known_as, 0)).is_err() {
        end_tree(shell, true, signals);
        return 1;
    }
    let mut shell_alive = true;
    loop {
        let mut polls = [
            libc::pollfd {
                fd: socket,
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: signals,
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: `polls` is a live array of two entries.
        let n = unsafe { libc::poll(polls.as_mut_ptr(), 2, -1) };
        if n < 0 {
            continue;
        }
        let mut terminate = false;
        if polls[1].revents != 0 {
            terminate = drain_signals(signals);
            let (reaped_shell, empty) = reap(shell);
            if let Some(status) = reaped_shell {
                shell_alive = false;
                let (kind, value) = status;
                // The exit carries whether anything is left, so the host need not wait
                // for the separate end-of-tree notice to know there are no leftovers.
                let _ = write_all(socket, &record(kind, value, i32::from(empty)));
            }
            if empty && !shell_alive {
                return 0;
            }
        }
        if terminate {
            end_tree(shell, shell_alive, signals);
            return 0;
        }
        if polls[0].revents != 0 {
            let mut buf = [0u8; RECORD];
            match read_exact(socket, &mut buf) {
                Ok(()) => match parse_record(&buf) {
                    (tag::SIGNAL, signal, _) => signal_tree(shell, shell_alive, signal),
                    // `wavesh run` leaves this tree running on purpose: go on reaping
                    // it, answering to nobody, until it is empty.
                    (tag::DETACH, _, _) => return reap_detached(shell, shell_alive, signals),
                    _ => {}
                },
                Err(_) => {
                    // The helper died, and with it the host's hold on this tree.
                    end_tree(shell, shell_alive, signals);
                    return 0;
                }
            }
        }
    }
}

/// A detached tree's subreaper: it stays, so the tree's orphans keep a reaper (and are
/// not left to the helper, which would end them), lets go of the host's terminal and
/// pipes, and exits when nothing of the tree is left.
#[expect(
    unsafe_code,
    reason = "poll(2), dup2(2) and fcntl(2) on descriptors the subreaper owns"
)]
fn reap_detached(shell: libc::pid_t, mut shell_alive: bool, mut signals: RawFd) -> i32 {
    // SAFETY: fcntl and dup2 on this process's own descriptors. The signalfd may itself
    // be one of 0..2 (a subreaper cloned without the helper's standard descriptors gets
    // the lowest free one): it moves above them first, or /dev/null would replace it and
    // the loop below would spin on a descriptor that is always readable.
    unsafe {
        if signals < 3 {
            let moved = libc::fcntl(signals, libc::F_DUPFD_CLOEXEC, 3);
            if moved >= 0 {
                libc::close(signals);
                signals = moved;
            }
        }
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC);
        if null >= 0 {
            for fd in 0..3 {
                libc::dup2(null, fd);
            }
            libc::close(null);
        }
    }
    loop {
        let (reaped, empty) = reap(shell);
        shell_alive &= reaped.is_none();
        if empty && !shell_alive {
            return 0;
        }
        let mut poll = libc::pollfd {
            fd: signals,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one live pollfd; SIGTERM is ignored from here on: the tree is not ours.
        unsafe { libc::poll(&mut poll, 1, -1) };
        drain_signals(signals);
    }
}

/// Reads every pending signal; returns whether SIGTERM was among them.
#[expect(
    unsafe_code,
    reason = "read(2) of signalfd records into a buffer of their size"
)]
fn drain_signals(signals: RawFd) -> bool {
    let mut terminate = false;
    loop {
        // SAFETY: signalfd_siginfo is plain data, read into from the signalfd.
        let mut info: libc::signalfd_siginfo = unsafe { std::mem::zeroed() };
        let size = size_of::<libc::signalfd_siginfo>();
        // SAFETY: reading one record into `info`.
        let n = unsafe {
            libc::read(
                signals,
                (&mut info as *mut libc::signalfd_siginfo).cast(),
                size,
            )
        };
        if n != size as isize {
            return terminate;
        }
        if info.ssi_signo == libc::SIGTERM as u32 {
            terminate = true;
        }
    }
}

/// Reaps every exited child. Returns the shell's status if it was among them, and
/// whether no child at all is left.
#[expect(unsafe_code, reason = "waitpid(2) of the subreaper's own children")]
fn reap(shell: libc::pid_t) -> (Option<(u8, i32)>, bool) {
    let mut shell_status = None;
    loop {
        let mut status = 0;
        // SAFETY: waiting for any child, without blocking.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid == 0 {
            return (shell_status, false);
        }
        if pid < 0 {
            return (shell_status, true);
        }
        if pid == shell {
            shell_status = Some(if libc::WIFSIGNALED(status) {
                (KIND_SIGNAL, libc::WTERMSIG(status))
            } else {
                (KIND_CODE, libc::WEXITSTATUS(status))
            });
        }
    }
}

/// Sends `signal` to the shell's group and to every descendant of this process, and only
/// to them (PROC-1): the group only while the shell is not reaped (its pid, and so the
/// group's id, cannot be reused before), each descendant either as this process's own
/// unreaped child or through a pidfd that is checked to still be a descendant.
fn signal_tree(shell: libc::pid_t, shell_unreaped: bool, signal: i32) {
    use rustix::process::{Pid, Signal, kill_process, kill_process_group};
    let Some(signal) = Signal::from_named_raw(signal) else {
        return;
    };
    if shell_unreaped && let Some(group) = Pid::from_raw(shell) {
        // The group our unreaped child leads.
        let _ = kill_process_group(group, signal);
    }
    let me = std::process::id() as libc::pid_t;
    for (pid, ppid) in descendants() {
        if ppid == me {
            // Our own child: nothing reaps it but this thread, so the pid is still it.
            if let Some(pid) = Pid::from_raw(pid) {
                let _ = kill_process(pid, signal);
            }
        } else {
            signal_descendant(pid, signal);
        }
    }
}

/// Signals `pid`, a descendant found in `/proc` whose parent is not this process, through
/// a pidfd: the pidfd holds one process, and it is signalled only if that process still
/// descends from this one (a pid reused meanwhile fails the check or the send).
fn signal_descendant(pid: libc::pid_t, signal: rustix::process::Signal) {
    let Some(fd) = rustix::process::Pid::from_raw(pid).and_then(|pid| {
        rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
    }) else {
        return;
    };
    if !descends_from_me(pid) {
        return;
    }
    let _ = rustix::process::pidfd_send_signal(&fd, signal);
}

/// Whether `pid`'s chain of parents reaches this process.
fn descends_from_me(mut pid: libc::pid_t) -> bool {
    let me = std::process::id() as libc::pid_t;
    for _ in 0..4096 {
        let Some(stat) = std::fs::read(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| crate::proc_stat::parse(&stat))
        else {
            return false;
        };
        if stat.ppid == me {
            return true;
        }
        if stat.ppid <= 1 {
            return false;
        }
        pid = stat.ppid;
    }
    false
}

/// Ends the whole tree: SIGTERM, up to [`GRACE`] for it to go, then SIGKILL until no
/// descendant is left (a fork bomb's new children are caught by the next round).
#[expect(
    unsafe_code,
    reason = "poll(2) on the subreaper's signalfd while it ends its tree"
)]
fn end_tree(shell: libc::pid_t, mut shell_unreaped: bool, signals: RawFd) {
    signal_tree(shell, shell_unreaped, libc::SIGTERM);
    let deadline = Instant::now() + GRACE;
    while Instant::now() < deadline {
        let (reaped, empty) = reap(shell);
        shell_unreaped &= reaped.is_none();
        if empty {
            return;
        }
        let mut poll = libc::pollfd {
            fd: signals,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one live pollfd.
        unsafe { libc::poll(&mut poll, 1, 20) };
        drain_signals(signals);
    }
    loop {
        signal_tree(shell, shell_unreaped, libc::SIGKILL);
        std::thread::sleep(Duration::from_millis(5));
        let (reaped, empty) = reap(shell);
        shell_unreaped &= reaped.is_none();
        if empty {
            return;
        }
    }
}

/// Every process whose chain of parents leads to this one, from `/proc`, with its parent.
fn descendants() -> Vec<(libc::pid_t, libc::pid_t)> {
    let parents: Vec<(libc::pid_t, libc::pid_t)> = crate::proc_stat::all()
        .map(|processes| processes.map(|(pid, stat)| (pid, stat.ppid)).collect())
        .unwrap_or_default();
    let mut found = vec![(std::process::id() as libc::pid_t, 0)];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i].0;
        found.extend(parents.iter().filter(|(_, ppid)| *ppid == parent).copied());
        i += 1;
    }
    found.remove(0);
    found
}

/// Forks a child born in the cgroup whose directory is `cgroup` (clone3 with
/// CLONE_INTO_CGROUP): no migration afterwards, which would take the cgroup
/// threadgroup lock for writing and can stall a spawn for an RCU grace period (tens of
/// milliseconds on a busy machine). Returns the pid (0 in the child, -1 on failure) and
/// whether the child was born there; kernels without it get a plain fork.
#[expect(
    unsafe_code,
    reason = "clone3(2) into a cgroup, or fork(2), in a single-threaded process"
)]
fn fork_into_cgroup(cgroup: RawFd) -> (libc::pid_t, bool) {
    // SAFETY: a fork in this single-threaded process; the child only makes system
    // calls before exec.
    let pid = unsafe {
        crate::clone3::fork(
            crate::clone3::CLONE_INTO_CGROUP,
            libc::SIGCHLD as u64,
            Some(cgroup),
        )
    };
    if pid >= 0 {
        return (pid, true);
    }
    // SAFETY: as above, a plain fork.
    (unsafe { libc::fork() }, false)
}

/// Forks and execs the shell as a new session and group leader with the command's descriptors.
/// Returns its pid, or the errno of what failed before `exec`.
#[expect(
    unsafe_code,
    reason = "fork(2) and execve(2) of the shell, with argv, envp and descriptors prepared before the fork"
)]
fn spawn_shell(request: &SpawnRequest) -> Result<libc::pid_t, i32> {
    let mut argv: Vec<*const libc::c_char> = std::iter::once(request.shell.as_ptr())
        .chain(request.args.iter().map(|arg| arg.as_ptr()))
        .collect();
    argv.push(std::ptr::null());
    let mut envp: Vec<*const libc::c_char> = request.env.iter().map(|v| v.as_ptr()).collect();
    envp.push(std::ptr::null());
    let mut report = [0 as RawFd; 2];
    // SAFETY: `report` has room for two descriptors.
    if unsafe { libc::pipe2(report.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO));
    }
    let (pid, born_in_cgroup) = match &request.cgroup {
        Some(cgroup) => fork_into_cgroup(cgroup.as_raw_fd()),
        // SAFETY: single-threaded process; the child below only makes system calls.
        None => (unsafe { libc::fork() }, false),
    };
    if pid < 0 {
        return Err(io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO));
    }
    if pid == 0 {
        // SAFETY: the shell child: system calls only, then exec or _exit.
        unsafe {
            let fail = |report: RawFd| -> ! {
                let errno = *libc::__errno_location();
                libc::write(report, (&errno as *const i32).cast(), 4);
                libc::_exit(127);
            };
            let mut empty: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut empty);
            libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
            for signal in 1..32 {
                if signal != libc::SIGKILL && signal != libc::SIGSTOP {
                    libc::signal(signal, libc::SIG_DFL);
                }
            }
            // PROC-3: a new session, so the command has no controlling terminal (no
            // TIOCSTI into the user's shell, no /dev/tty) and leads its own group.
            if libc::setsid() < 0 {
                fail(report[1]);
            }
            if libc::dup2(request.stdin.as_raw_fd(), 0) < 0
                || libc::dup2(request.output.as_raw_fd(), 1) < 0
                || libc::dup2(request.output.as_raw_fd(), 2) < 0
            {
                fail(report[1]);
            }
            // PTY-1: the output of a tty command is its own terminal (the host holds the
            // master): it becomes the new session's controlling terminal.
            if libc::isatty(1) == 1 && libc::ioctl(1, libc::TIOCSCTTY as _, 0) != 0 {
                fail(report[1]);
            }
            if libc::chdir(request.cwd.as_ptr()) != 0 {
                fail(report[1]);
            }
            // PROC-1: the shell, and so its whole tree, lives in the command's cgroup;
            // where it could not be born there, it moves in now. A command that cannot
            // be placed there does not start.
            if let Some(cgroup) = &request.cgroup
                && !born_in_cgroup
            {
                let procs = libc::openat(
                    cgroup.as_raw_fd(),
                    c"cgroup.procs".as_ptr(),
                    libc::O_WRONLY | libc::O_CLOEXEC,
                );
                if procs < 0 || libc::write(procs, b"0".as_ptr().cast(), 1) != 1 {
                    fail(report[1]);
                }
                libc::close(procs);
            }
            if let Some(sandbox) = &request.sandbox
                && let Err(errno) = sandbox.enforce()
            {
                *libc::__errno_location() = errno;
                fail(report[1]);
            }
            // PROC-3: no descriptor but 0-2 reaches the command, whatever the host had
            // open without close-on-exec. Marked rather than closed, so the report pipe
            // and the seal's descriptors still work until exec.
            crate::spawn::mark_inherited_descriptors_cloexec();
            // A shell started ahead waits on descriptor 3 (`dup2` leaves it open across
            // `exec`; where it is 3 already, its flag is cleared instead).
            if let Some(go) = &request.go {
                let fd = go.as_raw_fd();
                let kept = if fd == 3 {
                    libc::fcntl(3, libc::F_SETFD, 0)
                } else {
                    libc::dup2(fd, 3)
                };
                if kept < 0 {
                    fail(report[1]);
                }
            }
            libc::execve(request.shell.as_ptr(), argv.as_ptr(), envp.as_ptr());
            fail(report[1]);
        }
    }
    // SAFETY: closing our copy of the write end, then reading the child's report.
    unsafe {
        libc::close(report[1]);
    }
    let mut errno = [0u8; 4];
    // SAFETY: reading at most four bytes into `errno`.
    let n = unsafe { libc::read(report[0], errno.as_mut_ptr().cast(), 4) };
    // SAFETY: closing the read end.
    unsafe { libc::close(report[0]) };
    if n == 4 {
        let mut status = 0;
        // SAFETY: reaping the failed child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        return Err(i32::from_ne_bytes(errno));
    }
    Ok(pid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        assert_eq!(parse_record(&record(b'X', -3, 9)), (b'X', -3, 9));
    }
}
