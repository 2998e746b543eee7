//! Linux: the views of SBX-8 ([`super::views`]) as mounts in the command's own mount
//! namespace, made before the protections of the plan (which then apply inside them).
//!
//! `/tmp`: each kept path (the workspace, the home, the session's files, when they lie
//! under `/tmp`) is cloned with `open_tree`, the session's directory is bound over
//! `/tmp`, and the clones are moved back to their paths with `move_mount`. The clones
//! carry their mounts and dentries, so Landlock's rules on them still hold.
//!
//! Caches: an overlay over each cache, lower = the real cache, upper and work = the
//! workspace's layer in wavesh's state. Landlock's rules name dentries, and the overlay's
//! root is a new one: the write rule of each overlay is added to the ruleset after the
//! mount, only where the mount point really is an overlay (a failed mount leaves the
//! real cache read-only, never writable).
//!
//! Applying the ops makes system calls only and allocates nothing: it runs between
//! `fork` and `exec`.

use std::ffi::{CStr, CString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::views::Views;

/// At most this many paths are kept through the `/tmp` view (each holds a descriptor
/// in a fixed array while the view is mounted).
const MAX_KEPT: usize = 64;
const OVERLAYFS_SUPER_MAGIC: i64 = 0x794c_7630;
const OPEN_TREE_CLONE: libc::c_uint = 1;
const AT_RECURSIVE: libc::c_uint = 0x8000;
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;
const MOUNT_ATTR_RDONLY: u64 = 0x1;

/// The kernel's `struct mount_attr`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum ViewOp {
    /// Clone the mount tree at the path (kept for a later `Replant`).
    Keep(CString),
    /// Bind `source` (recursively) over `target`.
    Cover { source: CString, target: CString },
    /// Move the next kept clone back to the path.
    Replant(CString),
    /// An overlay over `target`, with these mount options; when `required`, a failure
    /// fails the command (the git directory's protections depend on it).
    Overlay {
        target: CString,
        options: CString,
        required: bool,
    },
    /// Bind the path onto itself (recursively): it keeps its writability under a
    /// guarded path.
    Pin(CString),
    /// Bind the path onto itself and make that mount (not the ones below) read-only.
    Guard(CString),
}

/// The mounts of the views, and the Landlock rights an overlay gets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ViewMounts {
    ops: Vec<ViewOp>,
    access: u64,
}

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a path holds a NUL byte"))
}

/// overlayfs's options for one layer over `lower`.
fn overlay_options(lower: &Path, upper: &Path, work: &Path) -> io::Result<CString> {
    let options = format!(
        "lowerdir={},upperdir={},workdir={}",
        lower.display(),
        upper.display(),
        work.display()
    );
    if [lower, upper, work]
        .iter()
        .any(|p| p.to_string_lossy().contains([',', ':', '\\']))
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{options}: a path holds a comma, colon or backslash"),
        ));
    }
    CString::new(options)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a path holds a NUL byte"))
}

impl ViewMounts {
    /// The mounts of `views`; `access`: the Landlock rights of a writable directory.
    pub(crate) fn new(views: &Views, access: u64) -> io::Result<ViewMounts> {
        let mut ops = Vec::new();
        if let Some(tmp) = &views.tmp {
            if tmp.keep.len() > MAX_KEPT {
                return Err(io::Error::other(format!(
                    "more than {MAX_KEPT} paths to keep under /tmp"
                )));
            }
            for path in &tmp.keep {
                ops.push(ViewOp::Keep(c_path(path)?));
            }
            ops.push(ViewOp::Cover {
                source: c_path(&tmp.source)?,
                target: c"/tmp".to_owned(),
            });
            for path in &tmp.keep {
                ops.push(ViewOp::Replant(c_path(path)?));
            }
            for path in &tmp.pins {
                ops.push(ViewOp::Pin(c_path(path)?));
            }
            for path in &tmp.guard {
                ops.push(ViewOp::Guard(c_path(path)?));
            }
        }
        for git in &views.git {
            for path in &git.keep {
                ops.push(ViewOp::Keep(c_path(path)?));
            }
            ops.push(ViewOp::Overlay {
                target: c_path(&git.git_dir)?,
                options: overlay_options(&git.git_dir, &git.upper, &git.work)?,
                required: true,
            });
            for path in &git.keep {
                ops.push(ViewOp::Replant(c_path(path)?));
            }
        }
        let kept = ops
            .iter()
            .filter(|op| matches!(op, ViewOp::Keep(_)))
            .count();
        if kept > MAX_KEPT {
            return Err(io::Error::other(format!(
                "more than {MAX_KEPT} paths to mount back through the views"
            )));
        }
        for cache in &views.caches {
            ops.push(ViewOp::Overlay {
                target: c_path(&cache.target)?,
                options: overlay_options(&cache.target, &cache.upper, &cache.work)?,
                required: false,
            });
        }
        Ok(ViewMounts { ops, access })
    }

    /// No view to mount.
    pub(crate) fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Mounts the views in the calling process's mount namespace (already its own).
    /// Returns the errno of the first mount that failed; an overlay that fails leaves
    /// the cache as it is (read-only: it gets no write rule).
    ///
    /// # Safety
    /// System calls only; the caller is between `fork` and `exec` or single-threaded.
    #[expect(
        unsafe_code,
        reason = "mount(2) and open_tree(2) between fork and exec, on data built before"
    )]
    pub(crate) unsafe fn apply(&self) -> Result<(), i32> {
        let mut kept = [-1 as libc::c_int; MAX_KEPT];
        let (mut taken, mut given) = (0usize, 0usize);
        let result = (|| {
            for op in &self.ops {
                // SAFETY: system calls on C strings owned by `self` and descriptors
                // this function opened.
                unsafe {
                    match op {
                        ViewOp::Keep(path) => {
                            let fd = libc::syscall(
                                libc::SYS_open_tree,
                                libc::AT_FDCWD,
                                path.as_ptr(),
                                OPEN_TREE_CLONE | AT_RECURSIVE | libc::O_CLOEXEC as libc::c_uint,
                            );
                            if fd < 0 && errno() != libc::ENOENT {
                                return Err(errno());
                            }
                            if taken < MAX_KEPT {
                                kept[taken] = fd as libc::c_int;
                                taken += 1;
                            }
                        }
                        ViewOp::Cover { source, target } => {
                            if libc::mount(
                                source.as_ptr(),
                                target.as_ptr(),
                                std::ptr::null(),
                                libc::MS_BIND | libc::MS_REC,
                                std::ptr::null(),
                            ) != 0
                            {
                                return Err(errno());
                            }
                        }
                        ViewOp::Replant(path) => {
                            let fd = if given < taken { kept[given] } else { -1 };
                            given += 1;
                            if fd >= 0
                                && libc::syscall(
                                    libc::SYS_move_mount,
                                    fd,
                                    c"".as_ptr(),
                                    libc::AT_FDCWD,
                                    path.as_ptr(),
                                    MOVE_MOUNT_F_EMPTY_PATH,
                                ) != 0
                            {
                                return Err(errno());
                            }
                        }
                        ViewOp::Pin(path) | ViewOp::Guard(path) => {
                            if libc::mount(
                                path.as_ptr(),
                                path.as_ptr(),
                                std::ptr::null(),
                                libc::MS_BIND | libc::MS_REC,
                                std::ptr::null(),
                            ) != 0
                            {
                                if errno() == libc::ENOENT {
                                    continue;
                                }
                                return Err(errno());
                            }
                            if matches!(op, ViewOp::Guard(_)) {
                                let attr = MountAttr {
                                    attr_set: MOUNT_ATTR_RDONLY,
                                    attr_clr: 0,
                                    propagation: 0,
                                    userns_fd: 0,
                                };
                                // Not AT_RECURSIVE: the pins below stay writable.
                                if libc::syscall(
                                    libc::SYS_mount_setattr,
                                    libc::AT_FDCWD,
                                    path.as_ptr(),
                                    0u32,
                                    &attr as *const MountAttr,
                                    size_of::<MountAttr>(),
                                ) != 0
                                {
                                    return Err(errno());
                                }
                            }
                        }
                        ViewOp::Overlay {
                            target,
                            options,
                            required,
                        } => {
                            // A cache overlay that cannot be mounted leaves the real
                            // cache read-only; the host probed overlayfs and said so
                            // when it is missing (SBX-5).
                            if libc::mount(
                                c"overlay".as_ptr(),
                                target.as_ptr(),
                                c"overlay".as_ptr(),
                                libc::MS_NOSUID | libc::MS_NODEV,
                                options.as_ptr().cast(),
                            ) != 0
                                && *required
                            {
                                return Err(errno());
                            }
                        }
                    }
                }
            }
            Ok(())
        })();
        for fd in kept.iter().take(taken).filter(|fd| **fd >= 0) {
            // SAFETY: descriptors this function opened, closed once.
            unsafe { libc::close(*fd) };
        }
        result
    }

    /// Adds to `ruleset` the write rule of every overlay that is mounted (SBX-8): a
    /// mount point that is not an overlay gets none.
    ///
    /// # Safety
    /// System calls only, as for [`ViewMounts::apply`].
    #[expect(
        unsafe_code,
        reason = "open(2), fstatfs(2) and landlock_add_rule(2) on descriptors owned here"
    )]
    pub(crate) unsafe fn allow_writes(&self, ruleset: libc::c_int) -> Result<(), i32> {
        for op in &self.ops {
            let ViewOp::Overlay { target, .. } = op else {
                continue;
            };
            // SAFETY: open/fstatfs/landlock_add_rule/close on a C string owned by
            // `self`, a descriptor opened here and a live attribute of the kernel's
            // layout.
            unsafe {
                let fd = libc::open(
                    target.as_ptr(),
                    libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
                );
                if fd < 0 {
                    continue;
                }
                let mut stat: libc::statfs = std::mem::zeroed();
                let overlay = libc::fstatfs(fd, &mut stat) == 0
                    && stat.f_type as i64 == OVERLAYFS_SUPER_MAGIC;
                let rc = if overlay {
                    super::imp::add_path_rule(ruleset, fd, self.access)
                } else {
                    0
                };
                libc::close(fd);
                if rc != 0 {
                    return Err(errno());
                }
            }
        }
        Ok(())
    }

    /// The views as bytes, for the supervisor.
    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.access.to_le_bytes());
        out.extend_from_slice(&(self.ops.len() as u32).to_le_bytes());
        let put = |out: &mut Vec<u8>, text: &CStr| {
            out.extend_from_slice(&(text.to_bytes().len() as u32).to_le_bytes());
            out.extend_from_slice(text.to_bytes());
        };
        for op in &self.ops {
            match op {
                ViewOp::Keep(path) => {
                    out.push(1);
                    put(out, path);
                }
                ViewOp::Cover { source, target } => {
                    out.push(2);
                    put(out, source);
                    put(out, target);
                }
                ViewOp::Replant(path) => {
                    out.push(3);
                    put(out, path);
                }
                ViewOp::Overlay {
                    target,
                    options,
                    required,
                } => {
                    out.push(4);
                    put(out, target);
                    put(out, options);
                    out.push(u8::from(*required));
                }
                ViewOp::Pin(path) => {
                    out.push(5);
                    put(out, path);
                }
                ViewOp::Guard(path) => {
                    out.push(6);
                    put(out, path);
                }
            }
        }
    }

    /// What [`ViewMounts::encode`] made, read through `take(len, what)`.
    pub(crate) fn decode(
        take: &mut dyn FnMut(usize, &str) -> io::Result<Vec<u8>>,
    ) -> io::Result<ViewMounts> {
        let bad =
            |what: &str| io::Error::new(io::ErrorKind::InvalidData, format!("sandbox: {what}"));
        let access_bytes: [u8; 8] = take(8, "view access")?
            .try_into()
            .map_err(|_| bad("view access"))?;
        let access = u64::from_le_bytes(access_bytes);
        let u32_of = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize;
        let text = |take: &mut dyn FnMut(usize, &str) -> io::Result<Vec<u8>>| {
            let len = u32_of(&take(4, "view path length")?);
            CString::new(take(len, "view path")?).map_err(|_| bad("a path holds a NUL byte"))
        };
        let count = u32_of(&take(4, "view count")?);
        let mut ops = Vec::new();
        for _ in 0..count {
            let op = match take(1, "view kind")?[0] {
                1 => ViewOp::Keep(text(take)?),
                2 => ViewOp::Cover {
                    source: text(take)?,
                    target: text(take)?,
                },
                3 => ViewOp::Replant(text(take)?),
                4 => ViewOp::Overlay {
                    target: text(take)?,
                    options: text(take)?,
                    required: take(1, "overlay flag")?[0] == 1,
                },
                5 => ViewOp::Pin(text(take)?),
                6 => ViewOp::Guard(text(take)?),
                _ => return Err(bad("unknown view kind")),
            };
            ops.push(op);
        }
        Ok(ViewMounts { ops, access })
    }
}

fn errno() -> i32 {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// Whether an overlay can be mounted here (root, or in a user namespace), probed once in
/// a short-lived child. [`overlay_removes`] also removes a directory of the lower layer
/// (a whiteout: `rm -rf` in a cache), which this kernel refuses to a user namespace of
/// an ordinary user (EIO): the caches then stay read-only and are named.
pub(crate) fn overlay_available() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVAILABLE.get_or_init(|| probe_overlay(false))
}

/// [`overlay_available`], and a directory of the lower layer can be removed.
pub(crate) fn overlay_removes() -> bool {
    static REMOVES: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *REMOVES.get_or_init(|| overlay_available() && probe_overlay(true))
}

fn probe_overlay(remove: bool) -> bool {
    use std::os::unix::process::CommandExt;
    let Some(mut command) = super::imp::quiet_true() else {
        return false;
    };
    let base = std::env::temp_dir().join(format!(
        "wavesh-overlay-probe-{}-{}",
        std::process::id(),
        crate::private_dir::random_name(8)
    ));
    let dirs = ["lower", "upper", "work", "merged"].map(|d| base.join(d));
    if dirs.iter().any(|d| std::fs::create_dir_all(d).is_err())
        || std::fs::create_dir_all(dirs[0].join("d/e")).is_err()
    {
        let _ = std::fs::remove_dir_all(&base);
        return false;
    }
    let (Ok(doomed_dir), Ok(doomed_inner)) =
        (c_path(&dirs[3].join("d")), c_path(&dirs[3].join("d/e")))
    else {
        let _ = std::fs::remove_dir_all(&base);
        return false;
    };
    let options = format!(
        "lowerdir={},upperdir={},workdir={}",
        dirs[0].display(),
        dirs[1].display(),
        dirs[2].display()
    );
    let (Ok(options), Ok(merged)) = (CString::new(options), c_path(&dirs[3])) else {
        let _ = std::fs::remove_dir_all(&base);
        return false;
    };
    let root = rustix::process::geteuid().as_raw() == 0;
    let (uid, gid) = (
        rustix::process::getuid().as_raw(),
        rustix::process::getgid().as_raw(),
    );
    let uid_map = CString::new(format!("{uid} {uid} 1\n")).unwrap_or_default();
    let gid_map = CString::new(format!("{gid} {gid} 1\n")).unwrap_or_default();
    #[expect(
        unsafe_code,
        reason = "pre_exec runs unshare(2), mount(2) and file writes in the forked child"
    )]
    // SAFETY: system calls only, on C strings made before the fork.
    unsafe {
        command.pre_exec(move || {
            let write = |path: &CStr, text: &CStr| -> io::Result<()> {
                let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                if fd < 0 {
                    return Err(io::Error::last_os_error());
                }
                let n = libc::write(fd, text.as_ptr().cast(), text.to_bytes().len());
                libc::close(fd);
                if n < 0 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            };
            let flags = if root {
                libc::CLONE_NEWNS
            } else {
                libc::CLONE_NEWUSER | libc::CLONE_NEWNS
            };
            if libc::unshare(flags) != 0 {
                return Err(io::Error::last_os_error());
            }
            if !root {
                write(c"/proc/self/setgroups", c"deny")?;
                write(c"/proc/self/uid_map", &uid_map)?;
                write(c"/proc/self/gid_map", &gid_map)?;
            }
            let mount = super::imp::mount;
            if !mount(None, c"/", None, libc::MS_REC | libc::MS_PRIVATE, None)
                || !mount(
                    Some(c"overlay"),
                    &merged,
                    Some(c"overlay"),
                    0,
                    Some(&options),
                )
            {
                return Err(io::Error::last_os_error());
            }
            // Removing what the lower layer holds needs a whiteout in the upper one.
            if remove
                && (libc::rmdir(doomed_inner.as_ptr()) != 0
                    || libc::rmdir(doomed_dir.as_ptr()) != 0)
            {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let ok = command.status().is_ok_and(|status| status.success());
    remove_layers(&base);
    ok
}

/// Removes a directory that held overlay layers: overlayfs leaves `work/work` with mode
/// 000, which a user other than root cannot list to empty it.
pub(crate) fn remove_layers(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    for work in [dir.join("work/work"), dir.join("work/index")] {
        let _ = std::fs::set_permissions(&work, std::fs::Permissions::from_mode(0o700));
    }
    if let Err(error) = std::fs::remove_dir_all(dir)
        && error.kind() != io::ErrorKind::NotFound
    {
        tracing::warn!(%error, path = %dir.display(), "overlay layers could not be removed");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::views::{CacheView, TmpView};
    use std::path::PathBuf;

    #[test]
    fn sbx_8_view_mounts_round_trip_through_bytes() {
        let views = Views {
            tmp: Some(TmpView {
                source: "/p/s/tmp-view".into(),
                keep: vec!["/tmp/ws".into(), "/tmp/home".into()],
                guard: vec!["/tmp/home".into()],
                pins: vec!["/tmp/home/.local/state/x".into()],
            }),
            caches: vec![CacheView {
                target: "/h/.cargo/registry".into(),
                upper: "/st/u".into(),
                work: "/st/w".into(),
            }],
            read_only_caches: Vec::new(),
            outputs: vec![PathBuf::from("/out")],
            git: vec![crate::sandbox::git_config::GitView {
                git_dir: "/ws/.git".into(),
                upper: "/p/g/upper".into(),
                work: "/p/g/work".into(),
                original: "/p/g/original".into(),
                keep: vec!["/ws/.git/objects".into(), "/ws/.git/refs".into()],
            }],
            env: Vec::new(),
        };
        let mounts = ViewMounts::new(&views, 0x1234).unwrap();
        assert_eq!(mounts.ops.len(), 13);
        let mut bytes = Vec::new();
        mounts.encode(&mut bytes);
        let mut at = 0;
        let back = ViewMounts::decode(&mut |n, _| {
            let slice = bytes[at..at + n].to_vec();
            at += n;
            Ok(slice)
        })
        .unwrap();
        assert_eq!(back, mounts);
        assert_eq!(at, bytes.len());
    }
}
