//! Enforcement in the child, between `fork` and `exec`: namespaces, mounts, Landlock and
//! seccomp in the order the kernel requires, with system calls only.

use super::*;
use landlock::{ABI, AccessFs};

impl ChildSandbox {
    /// Enforces the sandbox on the calling process and its future children: mounts in a
    /// new mount namespace, no-new-privileges, Landlock, seccomp. System calls only, no
    /// allocation: it runs between `fork` and `exec`. Returns the errno on failure.
    #[expect(
        unsafe_code,
        reason = "between fork and exec: system calls only, on data built before the fork"
    )]
    pub fn enforce(&self) -> Result<(), i32> {
        // SAFETY: plain system calls on integers and on C strings owned by `self`.
        unsafe {
            if !self.mounts.is_empty() || !self.views.is_empty() {
                self.enter_mount_namespace()?;
                self.views.apply()?;
                for op in &self.mounts {
                    apply_mount(op)?;
                }
                if let Some(fd) = &self.ruleset {
                    self.views.allow_writes(fd.as_raw_fd())?;
                }
            }
            drop_capabilities()?;
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(errno());
            }
            if let Some(fd) = &self.ruleset
                && libc::syscall(libc::SYS_landlock_restrict_self, fd.as_raw_fd(), 0u32) != 0
            {
                return Err(errno());
            }
            if let Some(filter) = self.seccomp {
                // Compiled in the host by `build`, so this only reads the cell.
                let Ok(program) = program(filter) else {
                    return Err(libc::EINVAL);
                };
                let prog = libc::sock_fprog {
                    len: program.len() as u16,
                    filter: program.as_ptr() as *mut libc::sock_filter,
                };
                if libc::syscall(
                    libc::SYS_seccomp,
                    libc::SECCOMP_SET_MODE_FILTER,
                    0u32,
                    &prog as *const libc::sock_fprog,
                ) != 0
                {
                    return Err(errno());
                }
            }
        }
        Ok(())
    }

    /// Whether the supervisor should make this command's subreaper the init of a new PID
    /// namespace and call [`ChildSandbox::isolate`] in it.
    pub(crate) fn isolates(&self) -> bool {
        self.isolation.is_some()
    }

    /// Isolates the calling process, the init of a new PID namespace (the command's
    /// subreaper, forked by the supervisor), and so the shell it forks next (SBX-2):
    /// - a mount namespace of its own with a `/proc` of the new PID namespace: no other
    ///   process's `environ`, `maps`, `cmdline` or `fd` can be opened, whatever the
    ///   kernel's ptrace checks let through, because no other process is there;
    /// - every mount read-only but the writable paths, bound onto themselves: a file
    ///   outside them cannot change its mode, owner, times or extended attributes,
    ///   which Landlock does not govern;
    /// - the read-only paths and hidden secrets of the plan.
    ///
    /// The Landlock ruleset gets a read rule for the new `/proc` (the host's rules hold
    /// the host's `/proc`, another file system). The mounts are done here, so the shell
    /// does not make them again. Returns the host's `/proc`, opened before the new one
    /// covered it, to tell the host the shell's pid as the host sees it.
    ///
    /// Ordinary Rust: the caller is a single-threaded process forked for this. `userns`:
    /// the caller was born in a new user namespace (not root), to be mapped to these ids.
    #[expect(
        unsafe_code,
        reason = "unshare(2) and mount(2) for the isolation's namespaces"
    )]
    pub(crate) fn isolate(&mut self, userns: Option<(u32, u32)>) -> io::Result<OwnedFd> {
        use rustix::fs::{Mode, OFlags};
        let writable = self.isolation.take().unwrap_or_default();
        let fail = |what: &str| {
            let error = io::Error::last_os_error();
            io::Error::new(
                error.kind(),
                format!("isolating the command: {what}: {error}"),
            )
        };
        if let Some(ids) = userns {
            // The user namespace the helper made this process in: the same ids inside.
            let maps = maps_for(ids);
            // SAFETY: open/write/close on C strings.
            unsafe {
                write_file(c"/proc/self/setgroups", c"deny")
                    .and_then(|()| write_file(c"/proc/self/uid_map", &maps.uid_map))
                    .and_then(|()| write_file(c"/proc/self/gid_map", &maps.gid_map))
                    .map_err(|errno| {
                        let error = io::Error::from_raw_os_error(errno);
                        io::Error::new(
                            error.kind(),
                            format!("isolating the command: mapping the user namespace: {error}"),
                        )
                    })?;
            }
        }
        // SAFETY: unshare(2) on this single-threaded process. An IPC namespace of its
        // own: no other process's SysV shared memory, semaphores or message queues, nor
        // POSIX message queues (SBX-7).
        if unsafe { libc::unshare(libc::CLONE_NEWNS | libc::CLONE_NEWIPC) } != 0 {
            return Err(fail("a mount and IPC namespace"));
        }
        let host_proc = rustix::fs::open(
            "/proc",
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let shm;
        // SAFETY: mount(2) and mount_setattr(2) on C strings that outlive the calls and
        // a `mount_attr` on the stack.
        unsafe {
            // Nothing mounted here may reach the host's namespace.
            if !mount(None, c"/", None, libc::MS_REC | libc::MS_SLAVE, None) {
                return Err(fail("making / a slave mount"));
            }
            let proc_flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
            if !mount(Some(c"proc"), c"/proc", Some(c"proc"), proc_flags, None) {
                return Err(fail("mounting /proc"));
            }
            // Terminals of the command's own: a new devpts instance, so no other
            // terminal's `/dev/pts/N` can be opened to read what is typed there or to
            // turn its echo off (SBX-7).
            if !mount(
                Some(c"devpts"),
                c"/dev/pts",
                Some(c"devpts"),
                libc::MS_NOSUID | libc::MS_NOEXEC,
                Some(c"newinstance,ptmxmode=0666,mode=0620"),
            ) {
                return Err(fail("mounting a devpts of its own"));
            }
            if !mount(
                Some(c"/dev/pts/ptmx"),
                c"/dev/ptmx",
                None,
                libc::MS_BIND,
                None,
            ) && errno() != libc::ENOENT
            {
                return Err(fail("binding its /dev/pts/ptmx"));
            }
            // A `/dev/shm` of the command's own (POSIX semaphores and shared memory:
            // Python's multiprocessing, browsers): writable, and gone with the command.
            // The host's stays out of reach.
            shm = mount(
                Some(c"tmpfs"),
                c"/dev/shm",
                Some(c"tmpfs"),
                libc::MS_NOSUID | libc::MS_NODEV,
                Some(c"size=256m,mode=1777"),
            );
            if !shm && errno() != libc::ENOENT {
                return Err(fail("mounting /dev/shm"));
            }
            let mut bound = Vec::new();
            if shm {
                bound.push(c"/dev/shm");
            }
            for path in &writable {
                if mount(Some(path), path, None, libc::MS_BIND | libc::MS_REC, None) {
                    bound.push(path.as_c_str());
                } else if errno() != libc::ENOENT {
                    return Err(fail(&format!("binding {}", path.to_string_lossy())));
                }
            }
            if mount_setattr(c"/", MOUNT_ATTR_RDONLY, 0) != 0 {
                return Err(fail("making the mounts read-only"));
            }
            for path in bound {
                if mount_setattr(path, 0, MOUNT_ATTR_RDONLY) != 0 {
                    return Err(fail(&format!(
                        "keeping {} writable",
                        path.to_string_lossy()
                    )));
                }
            }
            if let Some(sessions) = self.sessions.take() {
                hide_other_sessions(&sessions).map_err(|error| {
                    io::Error::new(
                        error.kind(),
                        format!(
                            "isolating the command: hiding other sessions' directories: {error}"
                        ),
                    )
                })?;
            }
            self.views.apply().map_err(|errno| {
                let error = io::Error::from_raw_os_error(errno);
                io::Error::new(
                    error.kind(),
                    format!(
                        "isolating the command: mounting the views of /tmp and the caches: {error}"
                    ),
                )
            })?;
            for op in &self.mounts {
                apply_mount(op).map_err(|errno| {
                    let error = io::Error::from_raw_os_error(errno);
                    io::Error::new(
                        error.kind(),
                        format!(
                            "isolating the command: mounting over {}: {error}",
                            op.path.to_string_lossy()
                        ),
                    )
                })?;
            }
        }
        self.mounts.clear();
        self.userns = None;
        self.maps = None;
        if let Some(ruleset) = &self.ruleset {
            // The host's rules name the host's `/proc` and `/dev/shm`, other file
            // systems: the command's own get rules of their own.
            let add_rule = |path: &str, access: u64, what: &str| -> io::Result<()> {
                let dir = rustix::fs::open(
                    path,
                    OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
                    Mode::empty(),
                )?;
                // SAFETY: two descriptors this process owns.
                let rc = unsafe { add_path_rule(ruleset.as_raw_fd(), dir.as_raw_fd(), access) };
                if rc != 0 {
                    return Err(fail(what));
                }
                Ok(())
            };
            add_rule(
                "/proc",
                LANDLOCK_ACCESS_FS_READ_FILE,
                "a read rule for /proc",
            )?;
            if shm {
                add_rule(
                    "/dev/shm",
                    writable_dir_access(),
                    "a write rule for /dev/shm",
                )?;
            }
            // Its own devpts, mounted above: terminals it opens itself.
            crate::sandbox::own_terminals::allow(ruleset.as_raw_fd(), landlock_abi())?;
            // SAFETY: system calls on the ruleset and the views' paths.
            unsafe { self.views.allow_writes(ruleset.as_raw_fd()) }
                .map_err(|_| fail("the write rules of the cache overlays"))?;
        }
        self.views = crate::sandbox::view_mounts::ViewMounts::default();
        Ok(host_proc)
    }

    #[expect(
        unsafe_code,
        reason = "mount(2) and unshare(2) in the child's own mount namespace"
    )]
    unsafe fn enter_mount_namespace(&self) -> Result<(), i32> {
        // SAFETY: system calls on C strings owned by `self`.
        unsafe {
            let flags = if self.userns.is_some() {
                libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWIPC
            } else {
                libc::CLONE_NEWNS | libc::CLONE_NEWIPC
            };
            if libc::unshare(flags) != 0 {
                return Err(errno());
            }
            if let Some(maps) = &self.maps {
                write_file(c"/proc/self/setgroups", c"deny")?;
                write_file(c"/proc/self/uid_map", &maps.uid_map)?;
                write_file(c"/proc/self/gid_map", &maps.gid_map)?;
            }
            // Nothing mounted here may reach the host's namespace.
            if libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_SLAVE,
                std::ptr::null(),
            ) != 0
            {
                return Err(errno());
            }
        }
        Ok(())
    }
}

pub(super) const MOUNT_ATTR_RDONLY: u64 = 0x1;
pub(super) const AT_RECURSIVE: u32 = 0x8000;
pub(super) const LANDLOCK_ACCESS_FS_READ_FILE: u64 = 1 << 2;

/// The Landlock rights a writable directory gets in [`landlock_ruleset`] (reading, and
/// every write right but device ioctls), as the kernel's bits, limited to what this
/// kernel's ABI has (the ruleset handles no more than that).
pub(super) fn writable_dir_access() -> u64 {
    let abi = ABI::V5;
    let bits = ((AccessFs::from_write(abi) & !AccessFs::IoctlDev) | AccessFs::ReadFile).bits();
    // Rights are numbered in the order ABIs added them: 13 in ABI 1, then Refer (2),
    // Truncate (3), IoctlDev (5).
    let known: u32 = match landlock_abi() {
        i32::MIN..=0 => 0,
        1 => 13,
        2 => 14,
        3 | 4 => 15,
        _ => 16,
    };
    bits & ((1u64 << known) - 1)
}

/// The kernel's `struct mount_attr`.
#[repr(C)]
pub(super) struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// mount_setattr(2) on the mount at `path` and every mount below it.
#[expect(
    unsafe_code,
    reason = "mount_setattr(2) with a struct mount_attr on the stack"
)]
unsafe fn mount_setattr(path: &std::ffi::CStr, set: u64, clear: u64) -> libc::c_long {
    let attr = MountAttr {
        attr_set: set,
        attr_clr: clear,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: a C string and a live `mount_attr` of the size given.
    unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path.as_ptr(),
            AT_RECURSIVE,
            &attr as *const MountAttr,
            size_of::<MountAttr>(),
        )
    }
}

#[expect(unsafe_code, reason = "mount(2) on C strings made before the fork")]
unsafe fn apply_mount(op: &MountOp) -> Result<(), i32> {
    let path = op.path.as_ptr();
    let keep = op.keep as libc::c_ulong;
    // SAFETY: mount(2) on C strings that live as long as `op`.
    let rc = unsafe {
        match op.kind {
            MountKind::HideFile => return hide_file(op),
            MountKind::ReadOnly => {
                if libc::mount(
                    path,
                    path,
                    std::ptr::null(),
                    libc::MS_BIND | libc::MS_REC,
                    std::ptr::null(),
                ) != 0
                {
                    -1
                } else {
                    libc::mount(
                        std::ptr::null(),
                        path,
                        std::ptr::null(),
                        libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | keep,
                        std::ptr::null(),
                    )
                }
            }
            MountKind::Pin => libc::mount(
                path,
                path,
                std::ptr::null(),
                libc::MS_BIND | libc::MS_REC,
                std::ptr::null(),
            ),
            MountKind::HideDir => libc::mount(
                c"tmpfs".as_ptr(),
                path,
                c"tmpfs".as_ptr(),
                libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                c"size=4k,mode=0000".as_ptr().cast(),
            ),
        }
    };
    // A path gone since the plan was made has nothing left to protect.
    if rc != 0 && errno() != libc::ENOENT {
        return Err(errno());
    }
    Ok(())
}

/// Mounts over the secret file `op.path` a file of mode 0000 from a tmpfs of this
/// process's own, read-only: with no capability left, nobody in the sandbox may open it,
/// so the command gets "Permission denied" (which the denial note names as a hidden
/// secret) rather than an empty file that reads as if the secret were empty. The tmpfs
/// is made once per command, detached (it is in no directory), with the new mount API;
/// each secret gets a clone of its one file. System calls only.
#[expect(
    unsafe_code,
    reason = "a descriptor kept across calls in one process, and mount(2) on a C string"
)]
pub(super) fn hide_file(op: &MountOp) -> Result<(), i32> {
    use rustix::mount::{FsMountFlags, FsOpenFlags, MountAttrFlags, MoveMountFlags, OpenTreeFlags};
    use std::os::fd::AsRawFd;
    use std::sync::atomic::{AtomicI32, Ordering};
    // The detached tmpfs, made by the first secret of this command (after `fork`, one
    // thread: nothing else reads it). Its descriptor is close-on-exec.
    static SOURCE: AtomicI32 = AtomicI32::new(-1);
    let raw = |e: rustix::io::Errno| e.raw_os_error();
    if SOURCE.load(Ordering::Relaxed) < 0 {
        let fs = rustix::mount::fsopen(c"tmpfs", FsOpenFlags::FSOPEN_CLOEXEC).map_err(raw)?;
        rustix::mount::fsconfig_set_string(&fs, c"size", c"4k").map_err(raw)?;
        rustix::mount::fsconfig_set_string(&fs, c"mode", c"0700").map_err(raw)?;
        rustix::mount::fsconfig_create(&fs).map_err(raw)?;
        let mnt = rustix::mount::fsmount(
            &fs,
            FsMountFlags::FSMOUNT_CLOEXEC,
            MountAttrFlags::MOUNT_ATTR_NOSUID
                | MountAttrFlags::MOUNT_ATTR_NODEV
                | MountAttrFlags::MOUNT_ATTR_NOEXEC,
        )
        .map_err(raw)?;
        drop(
            rustix::fs::openat(
                &mnt,
                c"hidden",
                rustix::fs::OFlags::CREATE
                    | rustix::fs::OFlags::EXCL
                    | rustix::fs::OFlags::WRONLY
                    | rustix::fs::OFlags::CLOEXEC,
                rustix::fs::Mode::empty(),
            )
            .map_err(raw)?,
        );
        SOURCE.store(
            std::mem::ManuallyDrop::new(mnt).as_raw_fd(),
            Ordering::Relaxed,
        );
    }
    // SAFETY: the descriptor stored above stays open until `exec` closes it; it is
    // borrowed here, never closed.
    let source = unsafe { std::os::fd::BorrowedFd::borrow_raw(SOURCE.load(Ordering::Relaxed)) };
    let tree = rustix::mount::open_tree(
        source,
        c"hidden",
        OpenTreeFlags::OPEN_TREE_CLONE | OpenTreeFlags::OPEN_TREE_CLOEXEC,
    )
    .map_err(raw)?;
    match rustix::mount::move_mount(
        &tree,
        c"",
        rustix::fs::CWD,
        op.path.as_c_str(),
        MoveMountFlags::MOVE_MOUNT_F_EMPTY_PATH,
    ) {
        Ok(()) => {}
        // A path gone since the plan was made has nothing left to protect.
        Err(rustix::io::Errno::NOENT) => return Ok(()),
        Err(e) => return Err(e.raw_os_error()),
    }
    // SAFETY: mount(2) on a C string that lives as long as `op`.
    let rc = unsafe {
        libc::mount(
            std::ptr::null(),
            op.path.as_ptr(),
            std::ptr::null(),
            libc::MS_REMOUNT
                | libc::MS_BIND
                | libc::MS_RDONLY
                | libc::MS_NOSUID
                | libc::MS_NODEV
                | libc::MS_NOEXEC,
            std::ptr::null(),
        )
    };
    if rc != 0 {
        return Err(errno());
    }
    Ok(())
}

/// Hides every other session's private directory (SBX-7): an empty tmpfs of mode 0700
/// over the directory that holds them all, read-only, with this session's own directory,
/// cloned with the mounts below it (its writable files) before it was covered, mounted
/// back at its name. Nothing else is there to list, open or follow `..` into, whatever
/// is made or removed beside it. Ordinary Rust: it runs in [`ChildSandbox::isolate`].
#[expect(unsafe_code, reason = "mount_setattr(2) on a C string")]
fn hide_other_sessions(sessions: &SessionsMount) -> io::Result<()> {
    use rustix::mount::{FsMountFlags, FsOpenFlags, MountAttrFlags, MoveMountFlags, OpenTreeFlags};
    let own = rustix::mount::open_tree(
        rustix::fs::CWD,
        sessions.own.as_c_str(),
        OpenTreeFlags::OPEN_TREE_CLONE
            | OpenTreeFlags::OPEN_TREE_CLOEXEC
            | OpenTreeFlags::AT_RECURSIVE,
    )?;
    let fs = rustix::mount::fsopen(c"tmpfs", FsOpenFlags::FSOPEN_CLOEXEC)?;
    rustix::mount::fsconfig_set_string(&fs, c"size", c"4k")?;
    rustix::mount::fsconfig_set_string(&fs, c"nr_inodes", c"4")?;
    rustix::mount::fsconfig_set_string(&fs, c"mode", c"0700")?;
    rustix::mount::fsconfig_create(&fs)?;
    let empty = rustix::mount::fsmount(
        &fs,
        FsMountFlags::FSMOUNT_CLOEXEC,
        MountAttrFlags::MOUNT_ATTR_NOSUID
            | MountAttrFlags::MOUNT_ATTR_NODEV
            | MountAttrFlags::MOUNT_ATTR_NOEXEC,
    )?;
    let own_path = Path::new(std::ffi::OsStr::from_bytes(sessions.own.as_bytes()));
    let name = own_path.file_name().unwrap_or_default();
    rustix::fs::mkdirat(&empty, name, rustix::fs::Mode::RWXU)?;
    rustix::mount::move_mount(
        &empty,
        c"",
        rustix::fs::CWD,
        sessions.base.as_c_str(),
        MoveMountFlags::MOVE_MOUNT_F_EMPTY_PATH,
    )?;
    // Read-only before the own directory comes back: nothing below it is touched.
    // SAFETY: a C string that outlives the call.
    if unsafe { mount_setattr(sessions.base.as_c_str(), MOUNT_ATTR_RDONLY, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    rustix::mount::move_mount(
        &own,
        c"",
        rustix::fs::CWD,
        sessions.own.as_c_str(),
        MoveMountFlags::MOVE_MOUNT_F_EMPTY_PATH,
    )?;
    Ok(())
}

/// Leaves the calling process no capability, for good (SBX-7): root's too, so that a
/// command run as root cannot `mknod`, `perf_event_open` a stranger, watch other
/// processes' opens with fanotify, or read past file modes. The securebits are locked
/// first (root gains nothing back on `exec` or `setuid`), then the bounding set is
/// emptied, the ambient set cleared and the effective, permitted and inheritable sets
/// zeroed. A process without CAP_SETPCAP (not root) cannot change its securebits or
/// bounding set, and has no capability to lose there; the final `capset` to nothing is
/// always allowed, and its failure is the error. System calls only: it runs between
/// `fork` and `exec`.
#[expect(
    unsafe_code,
    reason = "capget(2)/capset(2) and prctl(2) on structs on the stack"
)]
pub(super) fn drop_capabilities() -> Result<(), i32> {
    const SECBIT_NOROOT: libc::c_ulong = 1 << 0;
    const SECBIT_NOROOT_LOCKED: libc::c_ulong = 1 << 1;
    const SECBIT_NO_SETUID_FIXUP: libc::c_ulong = 1 << 2;
    const SECBIT_NO_SETUID_FIXUP_LOCKED: libc::c_ulong = 1 << 3;
    const SECBIT_KEEP_CAPS_LOCKED: libc::c_ulong = 1 << 5;
    const SECBIT_NO_CAP_AMBIENT_RAISE: libc::c_ulong = 1 << 6;
    const SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED: libc::c_ulong = 1 << 7;
    const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    // SAFETY: prctl and capset with integer arguments and structs of the kernel's layout
    // on the stack.
    unsafe {
        libc::prctl(
            libc::PR_SET_SECUREBITS,
            SECBIT_NOROOT
                | SECBIT_NOROOT_LOCKED
                | SECBIT_NO_SETUID_FIXUP
                | SECBIT_NO_SETUID_FIXUP_LOCKED
                | SECBIT_KEEP_CAPS_LOCKED
                | SECBIT_NO_CAP_AMBIENT_RAISE
                | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
            0,
            0,
            0,
        );
        for cap in 0..64 {
            if libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno() == libc::EINVAL {
                // Past the last capability this kernel knows.
                break;
            }
        }
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
        let header = Header {
            version: LINUX_CAPABILITY_VERSION_3,
            pid: 0,
        };
        let data = [Data {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        if libc::syscall(libc::SYS_capset, &header as *const Header, data.as_ptr()) != 0 {
            return Err(errno());
        }
    }
    Ok(())
}

#[expect(
    unsafe_code,
    reason = "open(2) and write(2) of a C string, between fork and exec"
)]
pub(super) unsafe fn write_file(path: &std::ffi::CStr, text: &std::ffi::CStr) -> Result<(), i32> {
    // SAFETY: open/write/close on a C string path and a buffer of the length given.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(errno());
        }
        let bytes = text.to_bytes();
        let written = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        libc::close(fd);
        if written != bytes.len() as isize {
            return Err(errno());
        }
    }
    Ok(())
}

/// `landlock_add_rule` of a path-beneath rule: `access` below the file or directory
/// open at `fd`, in `ruleset`. Returns 0, or -1 with errno set. A system call only
/// (callable between `fork` and `exec`).
///
/// # Safety
/// `ruleset` and `fd` are open descriptors.
#[expect(
    unsafe_code,
    reason = "landlock_add_rule(2): no safe wrapper takes a raw ruleset descriptor"
)]
pub(crate) unsafe fn add_path_rule(ruleset: RawFd, fd: RawFd, access: u64) -> libc::c_long {
    #[repr(C, packed)]
    struct PathBeneathAttr {
        allowed_access: u64,
        parent_fd: i32,
    }
    let attr = PathBeneathAttr {
        allowed_access: access,
        parent_fd: fd,
    };
    // SAFETY: a live attribute of the kernel's layout; the caller's descriptors.
    unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset,
            1u32, // LANDLOCK_RULE_PATH_BENEATH
            &attr as *const PathBeneathAttr,
            0u32,
        )
    }
}

pub(super) fn errno() -> i32 {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// mount(2); a source, type or data of `None` is passed as NULL. Whether it succeeded
/// (errno says why not). A system call only: callable between `fork` and `exec`.
#[expect(
    unsafe_code,
    reason = "mount(2) on C strings borrowed for the call, or NULL"
)]
pub(crate) fn mount(
    source: Option<&std::ffi::CStr>,
    target: &std::ffi::CStr,
    fstype: Option<&std::ffi::CStr>,
    flags: libc::c_ulong,
    data: Option<&std::ffi::CStr>,
) -> bool {
    let ptr = |s: Option<&std::ffi::CStr>| s.map_or(std::ptr::null(), std::ffi::CStr::as_ptr);
    // SAFETY: each pointer is NULL or a NUL-terminated string that outlives the call.
    unsafe {
        libc::mount(
            ptr(source),
            target.as_ptr(),
            ptr(fstype),
            flags,
            ptr(data).cast(),
        ) == 0
    }
}
