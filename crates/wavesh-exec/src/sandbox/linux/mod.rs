//! Linux: Landlock for files, signals and abstract sockets; seccomp for the network; a
//! private mount namespace for what Landlock cannot say (a read-only path inside a
//! writable tree, a secret inside a writable tree).
//!
//! Everything is built in the host ([`build`]); the shell's child enforces it between
//! `fork` and `exec` with plain system calls and no allocation ([`ChildSandbox::enforce`]),
//! which is safe in a multi-threaded host.
//!
//! Reads: Landlock can only allow, and a rule on a directory covers its whole tree. So
//! the allowed set is built around the secrets: every entry of `/` gets a read rule
//! except the ones on the way to a secret, whose directories are descended into the same
//! way, down to the secrets, which get nothing. Directory listings stay allowed (names of
//! secret files are visible, their contents are not).
//!
//! The parts, in the order a command meets them: [`reads`] (the secrets and the read
//! rules around them), [`rules`] (the Landlock ruleset), [`seccomp`] (the filters),
//! [`wire`] (the sandbox as bytes for the supervisor), [`enforce`] (in the child) and
//! [`probe`] (what this machine offers).

use std::collections::{BTreeMap, HashSet};
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::scan::{Stamp, stamp};
use super::{Level, Plan, SandboxError, Support};

mod enforce;
mod probe;
mod reads;
mod rules;
mod seccomp;
#[cfg(test)]
mod tests;
mod wire;

// One namespace for the parts: each part reads the others' items through `super::*`.
pub(crate) use enforce::*;
pub(crate) use probe::*;
pub(crate) use reads::*;
use rules::*;
use seccomp::*;
pub(crate) use wire::*;

/// A mount made in the command's private mount namespace, before Landlock.
#[derive(Debug, Clone, PartialEq, Eq)]
struct MountOp {
    kind: MountKind,
    path: CString,
    /// Flags of the mount the path lives on that a remount must keep (`nosuid`, ...):
    /// inside a user namespace they are locked.
    keep: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MountKind {
    /// Bind the path onto itself, read-only.
    ReadOnly = 1,
    /// Bind a file nobody may open over a secret file, read-only: reading it fails
    /// with "Permission denied", never reads as an empty file (SBX-4).
    HideFile = 2,
    /// An empty read-only tmpfs nobody may list or enter over a secret directory.
    HideDir = 3,
    /// Bind a directory onto itself, writable as it was: a mount point cannot be
    /// renamed or removed, so the protected or hidden path below it stays where the
    /// plan named it (SBX-6).
    Pin = 4,
}

/// What one command's shell enforces on itself before `exec`.
#[derive(Debug)]
pub struct ChildSandbox {
    ruleset: Option<OwnedFd>,
    /// The seccomp filter: the network-off one, or the one that keeps TCP/UDP.
    seccomp: Option<Filter>,
    mounts: Vec<MountOp>,
    /// The views of SBX-8 (`/tmp`, the caches), mounted before `mounts`.
    views: super::view_mounts::ViewMounts,
    /// Enter a user namespace first, mapping this uid and gid (non-root mounts).
    userns: Option<(u32, u32)>,
    /// Precomputed texts for the user namespace maps.
    maps: Option<Maps>,
    /// The paths that stay writable when the supervisor isolates the command
    /// ([`ChildSandbox::isolate`]); `None`: no isolation on this machine.
    isolation: Option<Vec<CString>>,
    /// The directory of every session's private directory, to hide by a mount when the
    /// command is isolated (SBX-7, [`Plan::sessions_by_mount`]).
    sessions: Option<SessionsMount>,
}

/// Other sessions' private directories hidden by a mount: an empty tmpfs over `base`,
/// with this session's own directory `own`, which lies in it, mounted back.
#[derive(Debug)]
struct SessionsMount {
    base: CString,
    own: CString,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Filter {
    NetworkOff,
    NetworkOn,
}

#[derive(Debug)]
struct Maps {
    uid_map: CString,
    gid_map: CString,
}

/// Every secret the sandbox of `plan` hides, by Landlock or by a mount, as the search
/// found them (names, hard links, what it could not reach): the denial note names a
/// refused read of any of them as a hidden secret (SBX-4). From the cache the command's
/// own sandbox was built from: no second search.
pub(crate) fn hidden_secrets(plan: &Plan, support: &Support) -> Vec<PathBuf> {
    if plan.level == Level::Off {
        return Vec::new();
    }
    let reads = cached_reads(plan, support.mount_namespace);
    reads
        .landlock
        .iter()
        .cloned()
        .chain(reads.hidden.iter().map(|(path, _)| path.clone()))
        .collect()
}

/// The read rules `plan` would be built from now: the cached ones while no directory
/// they were listed from changed (see [`cached_reads`]), new ones otherwise. `None` at
/// `off`.
pub(crate) fn current_reads(plan: &Plan, support: &Support) -> Option<std::sync::Arc<Reads>> {
    (plan.level != Level::Off).then(|| cached_reads(plan, support.mount_namespace))
}

/// Builds the child's part of `plan`. `Ok(None)` when this machine has none of the
/// mechanisms (the caller has logged what is missing).
pub(crate) fn build(plan: &Plan, support: &Support) -> Result<Option<ChildSandbox>, SandboxError> {
    let failed = |what: &str, source: io::Error| SandboxError::Build {
        level: plan.level,
        what: what.to_owned(),
        source,
    };
    let mounts_possible = support.mount_namespace;
    let reads = cached_reads(plan, mounts_possible);
    let hidden = &reads.hidden;
    let mut mounts = Vec::new();
    if plan.level == Level::WorkspaceWrite && mounts_possible {
        // Every directory between a writable root and a path the mounts below protect
        // or hide is pinned first (parents before children), so no rename of an
        // ancestor carries the protection away from its name (SBX-6).
        let protected = plan
            .read_only
            .iter()
            .chain(hidden.iter().map(|(path, _)| path));
        for dir in super::plan::pinned_ancestors(protected, &plan.writable_dirs) {
            mounts.push(
                mount_op(MountKind::Pin, &dir)
                    .map_err(|e| failed(&dir.display().to_string(), e))?,
            );
        }
        for path in &plan.read_only {
            mounts.push(
                mount_op(MountKind::ReadOnly, path)
                    .map_err(|e| failed(&path.display().to_string(), e))?,
            );
        }
        for (path, is_dir) in hidden {
            let kind = if *is_dir {
                MountKind::HideDir
            } else {
                MountKind::HideFile
            };
            mounts.push(mount_op(kind, path).map_err(|e| failed(&path.display().to_string(), e))?);
        }
    }
    let ruleset = if support.landlock_abi >= 1 {
        landlock_ruleset(plan, &reads).map_err(|(what, e)| failed(&what, e))?
    } else {
        None
    };
    let seccomp = support.seccomp.then_some(if plan.network {
        Filter::NetworkOn
    } else {
        Filter::NetworkOff
    });
    if let Some(filter) = seccomp {
        // Compile now, in the host: the child may not allocate.
        program(filter).map_err(|e| failed("seccomp filter", e))?;
    }
    let views = if mounts_possible {
        super::view_mounts::ViewMounts::new(&plan.views, writable_dir_access())
            .map_err(|e| failed("the views of /tmp and the caches", e))?
    } else {
        super::view_mounts::ViewMounts::default()
    };
    if ruleset.is_none() && seccomp.is_none() && mounts.is_empty() && views.is_empty() {
        return Ok(None);
    }
    let userns = ((!mounts.is_empty() || !views.is_empty())
        && rustix::process::geteuid().as_raw() != 0)
        .then(|| {
            (
                rustix::process::getuid().as_raw(),
                rustix::process::getgid().as_raw(),
            )
        });
    let maps = userns.map(maps_for);
    let sessions = match &plan.sessions_by_mount {
        None => None,
        // Hidden by nothing would be worse than an error: `prepare` leaves this to
        // Landlock where the command is not isolated, so this is a caller's mistake.
        Some(_) if !support.process_isolation => {
            return Err(failed(
                "other sessions' directories",
                io::Error::other("no process isolation to hide them by a mount"),
            ));
        }
        Some(base) => {
            let own = plan
                .readable_dirs
                .iter()
                .find(|own| own.parent() == Some(base.as_path()))
                .ok_or_else(|| {
                    failed(
                        "other sessions' directories",
                        io::Error::other("no directory of this session's in them"),
                    )
                })?;
            let c =
                |path: &Path| c_path(path).map_err(|e| failed("other sessions' directories", e));
            Some(SessionsMount {
                base: c(base)?,
                own: c(own)?,
            })
        }
    };
    let isolation = support.process_isolation.then(|| {
        plan.writable_dirs
            .iter()
            .chain(
                plan.writable_files
                    .iter()
                    .filter(|f| !f.starts_with("/dev")),
            )
            .filter_map(|path| CString::new(path.as_os_str().as_bytes()).ok())
            .collect()
    });
    Ok(Some(ChildSandbox {
        ruleset,
        seccomp,
        mounts,
        views,
        userns,
        maps,
        isolation,
        sessions,
    }))
}

fn maps_for((uid, gid): (u32, u32)) -> Maps {
    // Neither text holds a NUL: they are made of digits and spaces.
    Maps {
        uid_map: CString::new(format!("{uid} {uid} 1\n")).unwrap_or_default(),
        gid_map: CString::new(format!("{gid} {gid} 1\n")).unwrap_or_default(),
    }
}

fn mount_op(kind: MountKind, path: &Path) -> io::Result<MountOp> {
    let keep = rustix::fs::statvfs(path)
        .map(|vfs| {
            vfs.f_flag.bits()
                & (libc::ST_NOSUID
                    | libc::ST_NODEV
                    | libc::ST_NOEXEC
                    | libc::ST_NOATIME
                    | libc::ST_NODIRATIME
                    | libc::ST_RELATIME)
        })
        .unwrap_or(0);
    // statvfs's ST_* bits equal the MS_* bits of mount(2) for these flags.
    Ok(MountOp {
        kind,
        path: c_path(path)?,
        keep,
    })
}

/// `path` as a C string for the child's system calls.
fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a path holds a NUL byte"))
}
