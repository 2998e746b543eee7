//! What this machine offers: Landlock's ABI, seccomp, the namespaces, process
//! isolation and cgroup delegation.

use super::*;

/// What this machine offers.
pub(crate) fn probe() -> Support {
    Support {
        landlock_abi: landlock_abi(),
        seccomp: seccomp_available(),
        mount_namespace: probe_unshare(if rustix::process::geteuid().as_raw() == 0 {
            libc::CLONE_NEWNS
        } else {
            libc::CLONE_NEWUSER | libc::CLONE_NEWNS
        }),
        user_namespace: None,
        network_namespace: None,
        cgroup_delegation: cgroup_delegation(),
        process_isolation: process_isolation(),
        platform: "linux",
        seatbelt: false,
    }
}

/// The Landlock ABI of the running kernel, or 0 without Landlock.
#[expect(
    unsafe_code,
    reason = "landlock_create_ruleset(2) with the version flag, no pointer"
)]
pub(super) fn landlock_abi() -> i32 {
    // SAFETY: landlock_create_ruleset with a null attribute, size 0 and the VERSION flag
    // only returns the ABI number (or an error); it touches no memory.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32, // LANDLOCK_CREATE_RULESET_VERSION
        )
    };
    i32::try_from(abi).unwrap_or(0).max(0)
}

/// `support` with the user and network namespaces probed.
pub(crate) fn probe_namespaces(mut support: Support) -> Support {
    support.user_namespace = Some(probe_unshare(libc::CLONE_NEWUSER));
    support.network_namespace = Some(probe_unshare(if rustix::process::geteuid().as_raw() == 0 {
        libc::CLONE_NEWNET
    } else {
        libc::CLONE_NEWUSER | libc::CLONE_NEWNET
    }));
    support
}

#[expect(unsafe_code, reason = "prctl(2) PR_GET_SECCOMP, no pointer")]
pub(super) fn seccomp_available() -> bool {
    // SAFETY: PR_GET_SECCOMP reads the calling thread's mode and touches no memory.
    let mode = unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) };
    mode >= 0 && ARCH.is_some()
}

/// `true` with its standard streams on `/dev/null`: the short-lived child a probe tries
/// its system calls in (in `pre_exec`). `None` where no `true` is installed.
pub(crate) fn quiet_true() -> Option<std::process::Command> {
    let program = ["/bin/true", "/usr/bin/true"]
        .into_iter()
        .find(|p| Path::new(p).exists())?;
    let mut command = std::process::Command::new(program);
    command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    Some(command)
}

/// Whether a child may `unshare(flags)`: tried in a short-lived `true`.
pub(super) fn probe_unshare(flags: libc::c_int) -> bool {
    use std::os::unix::process::CommandExt;
    let Some(mut command) = quiet_true() else {
        return false;
    };
    #[expect(unsafe_code, reason = "pre_exec runs unshare(2) in the forked child")]
    // SAFETY: unshare(2) is a single system call, async-signal-safe.
    unsafe {
        command.pre_exec(move || {
            if libc::unshare(flags) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    command.status().is_ok_and(|status| status.success())
}

/// The ids to map in the user namespace that owns an isolated command's PID namespace,
/// for a user other than root; `None` as root, whose helper makes the PID namespace
/// itself.
pub(crate) fn isolation_user_namespace() -> Option<(u32, u32)> {
    (rustix::process::geteuid().as_raw() != 0).then(|| {
        (
            rustix::process::getuid().as_raw(),
            rustix::process::getgid().as_raw(),
        )
    })
}

/// Forks the calling process into a new PID namespace, as its init (and into a new user
/// namespace owning it when `userns`, where it has the capabilities its mounts need):
/// clone3 without CLONE_VM, so a fork. Returns the pid, 0 in the child, -1 on failure.
///
/// # Safety
/// As for `fork`: the child may only make system calls unless the caller is
/// single-threaded.
#[expect(
    unsafe_code,
    reason = "a raw clone(2) into new namespaces for the probe"
)]
pub(crate) unsafe fn fork_isolated(userns: bool) -> libc::pid_t {
    let mut flags = libc::CLONE_NEWPID as u64;
    if userns {
        flags |= libc::CLONE_NEWUSER as u64;
    }
    // SAFETY: the caller's contract is fork's.
    unsafe { crate::clone3::fork(flags, libc::SIGCHLD as u64, None) }
}

/// Whether the supervisor can isolate a command ([`ChildSandbox::isolate`]): PID and
/// mount namespaces (for a user other than root, inside a user namespace), a `/proc` of
/// its own (refused in some containers, whose `/proc` is partly covered), and
/// `mount_setattr` (Linux 5.12). Tried in a short-lived child.
#[expect(
    unsafe_code,
    reason = "a short-lived child that tries the isolation's system calls"
)]
pub(super) fn process_isolation() -> bool {
    // SAFETY: mount_setattr on an invalid descriptor only returns an error; ENOSYS says
    // the kernel lacks the call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            -1,
            c"".as_ptr(),
            0u32,
            std::ptr::null::<u8>(),
            0usize,
        )
    };
    if rc != 0 && errno() == libc::ENOSYS {
        return false;
    }
    let maps = isolation_user_namespace().map(maps_for);
    let userns = maps.is_some();
    // SAFETY: system calls only, on C strings made before the spawn.
    probe_in_new_pid_namespace(userns, move || unsafe {
        let mapped = maps.as_ref().is_none_or(|maps| {
            write_file(c"/proc/self/setgroups", c"deny").is_ok()
                && write_file(c"/proc/self/uid_map", &maps.uid_map).is_ok()
                && write_file(c"/proc/self/gid_map", &maps.gid_map).is_ok()
        });
        mapped
            && libc::unshare(libc::CLONE_NEWNS) == 0
            && libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_SLAVE,
                std::ptr::null(),
            ) == 0
            && libc::mount(
                c"proc".as_ptr(),
                c"/proc".as_ptr(),
                c"proc".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                std::ptr::null(),
            ) == 0
    })
}

/// Runs `in_child` in a short-lived process born in a new PID namespace (and a new user
/// namespace owning it when `userns`), forked from the child of a spawned `true`:
/// whether it returned true. `in_child` runs after a fork of a process that may have
/// had threads, so it may make system calls only.
#[expect(
    unsafe_code,
    reason = "pre_exec in a child made in a new PID namespace, then waitpid(2)"
)]
pub(crate) fn probe_in_new_pid_namespace(
    userns: bool,
    in_child: impl Fn() -> bool + Send + Sync + 'static,
) -> bool {
    use std::os::unix::process::CommandExt;
    let Some(mut command) = quiet_true() else {
        return false;
    };
    // SAFETY: system calls only; `in_child` promises the same.
    unsafe {
        command.pre_exec(move || {
            let child = fork_isolated(userns);
            if child < 0 {
                return Err(io::Error::last_os_error());
            }
            if child == 0 {
                libc::_exit(if in_child() { 0 } else { 1 });
            }
            let mut status = 0;
            if libc::waitpid(child, &mut status, 0) != child
                || !libc::WIFEXITED(status)
                || libc::WEXITSTATUS(status) != 0
            {
                return Err(io::Error::from_raw_os_error(libc::EPERM));
            }
            Ok(())
        });
    }
    command.status().is_ok_and(|status| status.success())
}

/// Whether per-command cgroups can be made here: [`crate::cgroup::support`], the check
/// the supervisor itself uses.
pub(super) fn cgroup_delegation() -> bool {
    matches!(
        crate::cgroup::support(),
        crate::cgroup::Support::Available { .. }
    )
}
