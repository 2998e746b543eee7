//! `clone3(2)` as a fork: the one definition of the kernel's `struct clone_args` for the
//! supervisor (a child born in its cgroup, a subreaper that is the helper's child in new
//! namespaces) and the sandbox's probes (a child in new namespaces).

/// The kernel's `struct clone_args`, up to `cgroup` (Linux 5.7).
#[repr(C)]
#[derive(Default)]
struct CloneArgs {
    flags: u64,
    pidfd: u64,
    child_tid: u64,
    parent_tid: u64,
    exit_signal: u64,
    stack: u64,
    stack_size: u64,
    tls: u64,
    set_tid: u64,
    set_tid_size: u64,
    cgroup: u64,
}

/// `CLONE_INTO_CGROUP`: the child is born in the cgroup whose directory is `cgroup`.
pub(crate) const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;

/// Forks with `flags` (no `CLONE_VM`, no stack: a fork), the child's end reported to the
/// parent by `exit_signal` (0 with `CLONE_PARENT`, whose exit signal is the caller's
/// parent's), into `cgroup` when `flags` has [`CLONE_INTO_CGROUP`]. Returns the pid, 0 in
/// the child, -1 with errno set on failure.
///
/// # Safety
/// As for `fork`: in a multi-threaded process the child may only make system calls.
#[expect(unsafe_code, reason = "clone3(2) without CLONE_VM or a stack: a fork")]
pub(crate) unsafe fn fork(flags: u64, exit_signal: u64, cgroup: Option<i32>) -> libc::pid_t {
    let args = CloneArgs {
        flags,
        exit_signal,
        cgroup: cgroup.map_or(0, |fd| fd as u64),
        ..CloneArgs::default()
    };
    // SAFETY: the struct is the kernel's layout and lives across the call; without
    // CLONE_VM or a stack the call behaves as fork (the caller's contract).
    unsafe {
        libc::syscall(libc::SYS_clone3, &raw const args, size_of::<CloneArgs>()) as libc::pid_t
    }
}
