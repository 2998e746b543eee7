//! Every tree ends with its session at `off` too (SBX-7).
//!
//! A command the user let run without the sandbox (`dangerouslyDisableSandbox`, a
//! session at `off`) still gets one structure: its subreaper is the init of a PID
//! namespace of its own, with a `/proc` of that namespace. Nothing in the tree can then
//! leave it: not by `setsid` or a double fork (the orphan comes back to the subreaper),
//! not by moving itself out of its cgroup, not by killing the subreaper (the init of a
//! PID namespace takes no signal from inside it that it has no handler for) or the
//! supervisor (which is not in the namespace). When the subreaper ends, the kernel ends
//! every process of the namespace.
//!
//! Nothing else of the sandbox applies: the command keeps the host's users (`sudo`
//! works), network, files and mounts. Its mount namespace differs from the host's in
//! `/proc` alone; the rest stays shared both ways, so what the command mounts the host
//! sees, as without wavesh.
//!
//! The price is the view of processes: `ps`, `kill PID`, `lsof` and `fuser` see the
//! command's own tree only, and a pid the model read in another command is not there
//! (TaskStop ends a task; a process outside the session is the user's to end).
//!
//! Only where the supervisor runs as root. For any other user a PID namespace must be
//! owned by a new user namespace, where setuid programs (`sudo`, `ping` on older
//! systems) stop working: the very things a user turns the sandbox off for. There a
//! tree at `off` is held by its cgroup and subreaper, and one that kills both, or
//! leaves its cgroup, can outlive the session (`wavesh doctor` says so).

use std::io;
use std::os::fd::OwnedFd;
use std::sync::OnceLock;

/// Whether commands outside the sandbox get a PID namespace here, or why not. Probed
/// once per process, in a short-lived child that does all of it.
pub fn off_pid_namespace() -> Result<(), String> {
    static PROBED: OnceLock<Result<(), String>> = OnceLock::new();
    PROBED.get_or_init(probe).clone()
}

#[expect(
    unsafe_code,
    reason = "unshare(2) and mount(2) in the probe's forked child"
)]
fn probe() -> Result<(), String> {
    if rustix::process::geteuid().as_raw() != 0 {
        return Err(
            "not root: a PID namespace would need a user namespace, in which setuid \
                    programs such as sudo stop working"
                .to_owned(),
        );
    }
    // SAFETY: system calls only.
    let made = super::imp::probe_in_new_pid_namespace(false, || unsafe {
        libc::unshare(libc::CLONE_NEWNS) == 0 && own_proc() == 0
    });
    if made {
        Ok(())
    } else {
        Err(
            "a PID namespace with a /proc of its own cannot be made here (a container \
             that refuses a new /proc?)"
                .to_owned(),
        )
    }
}

/// Mounts a `/proc` of the caller's PID namespace over `/proc`, after making the mount
/// there private: the new one never propagates to the host's `/proc`. Returns 0, or -1
/// with errno set. System calls only (callable after a fork).
#[expect(unsafe_code, reason = "mount(2) on constant C strings")]
unsafe fn own_proc() -> libc::c_int {
    // SAFETY: mount(2) on constant C strings.
    unsafe {
        if libc::mount(
            std::ptr::null(),
            c"/proc".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ) != 0
        {
            return -1;
        }
        libc::mount(
            c"proc".as_ptr(),
            c"/proc".as_ptr(),
            c"proc".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            std::ptr::null(),
        )
    }
}

/// Called by a command's subreaper at `off`, the init of a new PID namespace: a mount
/// namespace whose `/proc` is of that namespace. Returns the host's `/proc`, opened
/// before the new one covered it, to tell the host the shell's pid as the host sees it.
#[expect(
    unsafe_code,
    reason = "unshare(2) and mount(2) in the single-threaded subreaper"
)]
pub(crate) fn isolate_at_off() -> io::Result<OwnedFd> {
    use rustix::fs::{Mode, OFlags};
    let fail = |what: &str| {
        let error = io::Error::last_os_error();
        io::Error::new(
            error.kind(),
            format!("a PID namespace for the command at off: {what}: {error}"),
        )
    };
    // SAFETY: unshare(2) on the calling single-threaded process.
    if unsafe { libc::unshare(libc::CLONE_NEWNS) } != 0 {
        return Err(fail("a mount namespace"));
    }
    let host_proc = rustix::fs::open(
        "/proc",
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    // SAFETY: mounts on constant C strings.
    if unsafe { own_proc() } != 0 {
        return Err(fail("mounting /proc"));
    }
    Ok(host_proc)
}
