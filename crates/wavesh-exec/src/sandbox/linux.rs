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

use std::collections::{BTreeMap, HashSet};
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, NetPort, PathBeneath, Ruleset,
    RulesetAttr, RulesetCreatedAttr, Scope,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};

use super::scan::{Stamp, stamp};
use super::{Level, Plan, SandboxError, Support};

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
        path: CString::new(path.as_os_str().as_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a path holds a NUL byte"))?,
        keep,
    })
}

/// The secrets of a plan as the sandbox found them: the ones Landlock hides, the ones
/// mounts hide, and the directories the search read (stamped before they
/// were read, so that the reads are built again when one of them changes).
struct Found {
    landlock: Vec<PathBuf>,
    hidden: Vec<(PathBuf, bool)>,
    stamps: Vec<(PathBuf, Stamp)>,
    /// The watch generation the search started from (see [`super::scan::generation`]).
    generation: u64,
}

/// Secrets Landlock hides (everything, unless it lies inside a writable directory and
/// a mount can hide it instead), and the existing ones to hide with mounts (with
/// whether each is a directory): the secret paths, and what [`super::scan::find`] finds
/// by name and by inode beside them.
/// `watched`: directories whose changes must invalidate the result, watched by the
/// search (or stamped where they cannot be watched).
fn split_secrets(plan: &Plan, mounts: bool, watched: &[PathBuf]) -> Found {
    let mut all: Vec<PathBuf> = Vec::new();
    for path in &plan.secret_paths {
        all.push(path.clone());
        if let Ok(real) = std::fs::canonicalize(path)
            && real != *path
        {
            all.push(real);
        }
    }
    // The directory of every session's files is hidden, but holds no credential to link
    // to, and changes with every command: its files are not taken for hardlink checks.
    let private_bases: Vec<PathBuf> = plan
        .readable_dirs
        .iter()
        .filter_map(|own| own.parent().map(Path::to_path_buf))
        .collect();
    let scanned = super::scan::find(
        &all,
        &private_bases,
        &plan.secret_names,
        &plan.scan_dirs,
        &plan.scan_trees,
        watched,
    );
    all.extend(scanned.secrets);
    // What the search did not reach is hidden as a secret is: it fails closed.
    all.extend(scanned.unsearched);
    all.sort();
    all.dedup();
    let mut landlock = Vec::new();
    let mut hidden = Vec::new();
    for path in all {
        // Under a path mounted back through the `/tmp` view, the view's write rule
        // reaches too (SBX-8): only a mount hides there.
        let writable = plan.writable_dirs.iter().any(|d| path.starts_with(d))
            || plan.views.tmp.as_ref().is_some_and(|tmp| tmp.keeps(&path));
        if plan.level == Level::WorkspaceWrite && writable {
            // Landlock would make every new file beside it unreadable, so a mount hides
            // it, or nothing can (reported as a missing guarantee).
            if mounts
                && let Ok(meta) = std::fs::symlink_metadata(&path)
                && !meta.file_type().is_symlink()
            {
                hidden.push((path, meta.is_dir()));
            }
        } else {
            landlock.push(path);
        }
    }
    Found {
        landlock,
        hidden,
        stamps: scanned.stamps,
        generation: scanned.generation,
    }
}

type BuildError = (String, io::Error);

/// The read side of a plan: the secrets Landlock hides, the ones mounts hide, and the
/// read-allowed entries around them, opened.
struct Reads {
    /// The secrets Landlock hides.
    landlock: Vec<PathBuf>,
    hidden: Vec<(PathBuf, bool)>,
    allowed: Vec<(OwnedFd, bool)>,
    /// A Landlock ruleset with the read rules of `allowed` already added, one without and
    /// one with network, made ahead for the next command ([`landlock_ruleset`]): adding a
    /// few hundred rules is most of a sandboxed command's cost, and a ruleset can be
    /// entered by one command only once its own rules are in.
    spares: std::sync::Mutex<[Option<landlock::RulesetCreated>; 3]>,
}

/// What the reads of a plan depend on.
type ReadsKey = (
    Vec<PathBuf>,
    Vec<String>,
    Vec<PathBuf>,
    Vec<PathBuf>,
    Vec<PathBuf>,
    Level,
    bool,
);

/// The last reads built, with what they depend on: the stamps of the directories they
/// were listed from, and the watch generation of the tree directories.
type CachedReads = (
    ReadsKey,
    (Vec<(PathBuf, Stamp)>, u64),
    std::sync::Arc<Reads>,
);

/// The reads of `plan`, built again only when a directory they were listed from
/// changed: building them lists `/`, the directories on the way to each secret and the
/// scanned directories, and opens a few hundred paths, which would cost more than a
/// command's whole budget if done every time. A directory's mtime changes with every
/// entry added, removed or renamed in it, so a new secret or a planted hardlink is
/// seen by the next command.
fn cached_reads(plan: &Plan, mounts: bool) -> std::sync::Arc<Reads> {
    use std::sync::{Arc, Mutex, PoisonError};
    // One entry per kind of plan a session uses: a session mixes read-only commands with
    // commands at its own level, and a single entry would be rebuilt at every switch.
    const ENTRIES: usize = 4;
    static CACHE: Mutex<Vec<CachedReads>> = Mutex::new(Vec::new());
    // Only the writable directories that can hold something `split_secrets` looks at:
    // a command's own fresh TMPDIR holds none, and keying on it would miss every time.
    let relevant_writable: Vec<PathBuf> = plan
        .writable_dirs
        .iter()
        .filter(|dir| {
            plan.secret_paths.iter().any(|p| p.starts_with(dir))
                || plan
                    .scan_dirs
                    .iter()
                    .any(|s| s.starts_with(dir) || dir.parent() == Some(s.as_path()))
                || plan
                    .scan_trees
                    .iter()
                    .any(|t| t.starts_with(dir) || dir.starts_with(t))
        })
        .cloned()
        // Under the paths the `/tmp` view mounts back, secrets are hidden by mounts.
        .chain(
            plan.views
                .tmp
                .iter()
                .flat_map(|tmp| tmp.keep.iter().cloned()),
        )
        .collect();
    let key: ReadsKey = (
        plan.secret_paths.clone(),
        plan.secret_names.clone(),
        plan.scan_dirs.clone(),
        plan.scan_trees.clone(),
        relevant_writable,
        plan.level,
        mounts,
    );
    let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(at) = cache
        .iter()
        .position(|(cached_key, _, _)| *cached_key == key)
    {
        let (_, (stamps, generation), reads) = &cache[at];
        if *generation == super::scan::generation()
            && stamps.iter().all(|(dir, old)| stamp(dir) == *old)
        {
            return Arc::clone(reads);
        }
        cache.remove(at);
    }
    // Every directory listed below, and every one on the way to them (a secret that is
    // a symlink may be pointed elsewhere), watched (or, where it cannot be, stamped)
    // before listing: a change during the listing is seen next time.
    let mut dirs: Vec<PathBuf> = plan
        .secret_paths
        .iter()
        .cloned()
        .chain(
            plan.secret_paths
                .iter()
                .filter_map(|p| std::fs::canonicalize(p).ok()),
        )
        .chain(plan.scan_dirs.iter().cloned())
        .flat_map(|p| p.ancestors().map(Path::to_path_buf).collect::<Vec<_>>())
        .collect();
    dirs.sort();
    dirs.dedup();
    let Found {
        landlock,
        hidden,
        stamps,
        generation,
    } = split_secrets(plan, mounts, &dirs);
    let allowed: Vec<(OwnedFd, bool)> = read_allowed(&landlock)
        .iter()
        .filter_map(|path| open_path(path))
        .collect();
    let reads = Arc::new(Reads {
        landlock,
        hidden,
        allowed,
        spares: Mutex::new([None, None, None]),
    });
    if cache.len() == ENTRIES {
        cache.remove(0);
    }
    cache.push((key, (stamps, generation), Arc::clone(&reads)));
    reads
}

fn landlock_error(what: &str) -> impl FnOnce(landlock::RulesetError) -> (String, io::Error) {
    let what = what.to_owned();
    move |e: landlock::RulesetError| (what, io::Error::other(e.to_string()))
}

/// A command's ruleset before its own rules: the rights it handles and the read rules
/// around the secrets.
/// `slot`: 0 no TCP at all, 1 connect only (the host's network, for reads), 2 bind and
/// connect (the session's own network namespace, where only loopback exists: NET-1).
#[expect(unsafe_code, reason = "landlock_add_rule(2) on descriptors owned here")]
fn base_ruleset(
    allowed: &[(OwnedFd, bool)],
    slot: usize,
) -> Result<landlock::RulesetCreated, BuildError> {
    let abi = ABI::V5;
    let net: BitFlags<AccessNet> = match slot {
        0 => AccessNet::BindTcp | AccessNet::ConnectTcp,
        1 => AccessNet::BindTcp.into(),
        _ => BitFlags::empty(),
    };
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_write(abi) | AccessFs::ReadFile)
        .map_err(landlock_error("file rights"))?;
    if !net.is_empty() {
        ruleset = ruleset
            .handle_access(net)
            .map_err(landlock_error("network rights"))?;
    }
    let ruleset = ruleset
        .scope(Scope::Signal | Scope::AbstractUnixSocket)
        .map_err(landlock_error("scopes"))?
        .create()
        .map_err(landlock_error("create"))?;
    // The read rules by system call: the crate checks each descriptor's type with an
    // fstat first, which doubles the system calls of a few hundred rules, and reading
    // is a right of files and directories alike. Through a duplicate of the ruleset's
    // descriptor (the same ruleset); without one Landlock is not there to take them.
    let raw: Option<OwnedFd> = ruleset
        .try_clone()
        .map_err(|error| ("a read rule".to_owned(), error))?
        .into();
    if let Some(raw) = raw {
        for (fd, _) in allowed {
            // SAFETY: two open descriptors owned here.
            if unsafe {
                add_path_rule(
                    raw.as_raw_fd(),
                    fd.as_raw_fd(),
                    LANDLOCK_ACCESS_FS_READ_FILE,
                )
            } != 0
            {
                return Err(("a read rule".to_owned(), io::Error::last_os_error()));
            }
        }
    }
    Ok(ruleset)
}

/// The ruleset of `plan`: a base made ahead when there is one (and the next one made
/// now, on a thread of its own, off the command's path), then the command's own rules.
fn landlock_ruleset(
    plan: &Plan,
    reads: &std::sync::Arc<Reads>,
) -> Result<Option<OwnedFd>, BuildError> {
    use std::sync::PoisonError;
    let abi = ABI::V5;
    let lib = landlock_error;
    // NET-3: a read in the session's namespace connects to the proxy's read port and
    // nowhere else, not even the session's own servers.
    let slot = match plan.session_net {
        Some(crate::net::Scope::Session) => 2,
        Some(crate::net::Scope::Read) => 0,
        None => usize::from(plan.network),
    };
    let spare = reads.spares.lock().unwrap_or_else(PoisonError::into_inner)[slot].take();
    let mut ruleset = match spare {
        Some(ruleset) => ruleset,
        None => base_ruleset(&reads.allowed, slot)?,
    };
    if plan.session_net == Some(crate::net::Scope::Read) {
        (&mut ruleset)
            .add_rule(NetPort::new(crate::net::READ_PORT, AccessNet::ConnectTcp))
            .map_err(lib("the read port"))?;
    }
    let next = std::sync::Arc::clone(reads);
    // Without the thread the next command builds its base itself.
    let _ = std::thread::Builder::new()
        .name("wavesh-sandbox-rules".into())
        .spawn(move || {
            if let Ok(ruleset) = base_ruleset(&next.allowed, slot) {
                let mut spares = next.spares.lock().unwrap_or_else(PoisonError::into_inner);
                spares[slot].get_or_insert(ruleset);
            }
        });
    let writes = AccessFs::from_write(abi) & !AccessFs::IoctlDev;
    let file_writes: BitFlags<AccessFs> = AccessFs::WriteFile | AccessFs::Truncate;
    let mut add = |path: &Path,
                   access: BitFlags<AccessFs>,
                   dir_only: BitFlags<AccessFs>|
     -> Result<(), BuildError> {
        let Some((fd, is_dir)) = open_path(path) else {
            return Ok(());
        };
        let access = if is_dir {
            access | dir_only
        } else {
            access & AccessFs::from_file(abi)
        };
        (&mut ruleset)
            .add_rule(PathBeneath::new(fd, access))
            .map_err(lib(&path.display().to_string()))?;
        Ok(())
    };
    for dir in &plan.writable_dirs {
        add(dir, AccessFs::ReadFile.into(), writes)?;
    }
    for dir in &plan.readable_dirs {
        add(dir, AccessFs::ReadFile.into(), BitFlags::empty())?;
    }
    for file in &plan.writable_files {
        add(file, file_writes | AccessFs::IoctlDev, BitFlags::empty())?;
    }
    // Devices a command opens itself and uses ioctls on: terminals of its own (`script`,
    // pty tests) and the usual character devices. TIOCSTI stays refused by seccomp.
    for device in [
        "/dev/zero",
        "/dev/full",
        "/dev/random",
        "/dev/urandom",
        "/dev/ptmx",
        "/dev/pts",
    ] {
        add(
            Path::new(device),
            AccessFs::IoctlDev.into(),
            BitFlags::empty(),
        )?;
    }
    Ok(ruleset.into())
}

/// Opens `path` without following a final symlink; `None` for a missing path or a
/// symlink (a rule on a symlink would cover its target, which may be a secret).
fn open_path(path: &Path) -> Option<(OwnedFd, bool)> {
    use rustix::fs::{FileType, Mode, OFlags};
    let fd = rustix::fs::open(
        path,
        OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let stat = rustix::fs::fstat(&fd).ok()?;
    match FileType::from_raw_mode(stat.st_mode) {
        FileType::Symlink => None,
        FileType::Directory => Some((fd, true)),
        _ => Some((fd, false)),
    }
}

/// The paths that get a read rule: every entry of `/`, descending into the directories
/// on the way to a secret and leaving the secrets out.
pub(crate) fn read_allowed(secrets: &[PathBuf]) -> Vec<PathBuf> {
    let secrets: HashSet<&Path> = secrets.iter().map(PathBuf::as_path).collect();
    let ancestors: HashSet<&Path> = secrets.iter().flat_map(|s| s.ancestors().skip(1)).collect();
    let mut allowed = Vec::new();
    if !ancestors.contains(Path::new("/")) {
        allowed.push(PathBuf::from("/"));
        return allowed;
    }
    let mut stack = vec![PathBuf::from("/")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = dir.join(entry.file_name());
            if secrets.contains(path.as_path()) {
                continue;
            }
            let is_real_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            if ancestors.contains(path.as_path()) && is_real_dir {
                stack.push(path);
            } else {
                allowed.push(path);
            }
        }
    }
    allowed
}

/// The compiled filter of `which`, built once per process.
fn program(which: Filter) -> io::Result<&'static BpfProgram> {
    static OFF: std::sync::OnceLock<Result<BpfProgram, String>> = std::sync::OnceLock::new();
    static ON: std::sync::OnceLock<Result<BpfProgram, String>> = std::sync::OnceLock::new();
    let cell = match which {
        Filter::NetworkOff => &OFF,
        Filter::NetworkOn => &ON,
    };
    cell.get_or_init(|| compile(which).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| io::Error::other(e.clone()))
}

#[cfg(target_arch = "x86_64")]
const ARCH: Option<seccompiler::TargetArch> = Some(seccompiler::TargetArch::x86_64);
#[cfg(target_arch = "aarch64")]
const ARCH: Option<seccompiler::TargetArch> = Some(seccompiler::TargetArch::aarch64);
#[cfg(target_arch = "riscv64")]
const ARCH: Option<seccompiler::TargetArch> = Some(seccompiler::TargetArch::riscv64);
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
)))]
const ARCH: Option<seccompiler::TargetArch> = None;

/// The obsolete packet socket type (`SOCK_PACKET`, deprecated in libc in favour of
/// `AF_PACKET`, which the domain rule refuses anyway).
const SOCK_PACKET: u64 = 10;

/// The seccomp filter (SBX-2). Network off: no socket at all but `socketpair` of unix
/// sockets (pipes between a command's own processes), which covers TCP, UDP, DNS, raw and
/// packet sockets, netlink and unix sockets outside (`docker.sock`, the ssh agent). With
/// the network exception only IPv4/IPv6 non-raw sockets are added back. Always: no
/// io_uring (its operations pass by seccomp), no typing into a terminal (TIOCSTI,
/// TIOCLINUX), no kernel keyrings, no module loading, kexec, reboot or swap, no bpf, and
/// no change to the machine's clock, host name, mounts, accounting or kernel log.
/// A 32-bit system call from the 64-bit shell kills the process (the architecture
/// check of the filter); on x86-64 the x32 numbers of the refused calls are refused too.
#[allow(
    clippy::unnecessary_cast,
    reason = "ioctl numbers are c_ulong, which is not u64 on every target"
)]
fn compile(which: Filter) -> Result<BpfProgram, seccompiler::BackendError> {
    let Some(arch) = ARCH else {
        return Err(seccompiler::BackendError::InvalidTargetArch(
            std::env::consts::ARCH.to_owned(),
        ));
    };
    let cond = |arg: u8, len: SeccompCmpArgLen, op: SeccompCmpOp, value: u64| {
        SeccompCondition::new(arg, len, op, value)
    };
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    let socket_rules = match which {
        Filter::NetworkOff => Vec::new(),
        Filter::NetworkOn => vec![
            SeccompRule::new(vec![
                cond(
                    0,
                    SeccompCmpArgLen::Dword,
                    SeccompCmpOp::Ne,
                    libc::AF_INET as u64,
                )?,
                cond(
                    0,
                    SeccompCmpArgLen::Dword,
                    SeccompCmpOp::Ne,
                    libc::AF_INET6 as u64,
                )?,
            ])?,
            SeccompRule::new(vec![cond(
                1,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::MaskedEq(0xf),
                libc::SOCK_RAW as u64,
            )?])?,
            SeccompRule::new(vec![cond(
                1,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::MaskedEq(0xf),
                SOCK_PACKET,
            )?])?,
        ],
    };
    rules.insert(libc::SYS_socket, socket_rules);
    // A socketpair is a pipe between the command's own processes: unix, and connected
    // for good. A datagram pair can `connect` or `sendto` a named unix socket outside
    // (SBX-7); a stream or seqpacket pair is connected to its peer, where the kernel
    // refuses another `connect` (EISCONN) and ignores a `sendto` address. Rust's
    // `Command` passes a pidfd over a seqpacket pair, so cargo needs that kind.
    rules.insert(
        libc::SYS_socketpair,
        vec![
            SeccompRule::new(vec![cond(
                0,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::Ne,
                libc::AF_UNIX as u64,
            )?])?,
            SeccompRule::new(vec![cond(
                1,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::MaskedEq(0xf),
                libc::SOCK_DGRAM as u64,
            )?])?,
            SeccompRule::new(vec![cond(
                1,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::MaskedEq(0xf),
                libc::SOCK_RAW as u64,
            )?])?,
        ],
    );
    let ioctl_rules = vec![
        SeccompRule::new(vec![cond(
            1,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Eq,
            libc::TIOCSTI as u64,
        )?])?,
        SeccompRule::new(vec![cond(
            1,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Eq,
            libc::TIOCLINUX as u64,
        )?])?,
    ];
    rules.insert(libc::SYS_ioctl, ioctl_rules);
    for call in [
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_reboot,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_bpf,
        // The machine's own state, which a command run as root could otherwise change
        // whatever Landlock allows: the clock, the host name, mounts (including the
        // read-only binds that protect `.git/hooks` and `.claude/`), file handles that
        // reach files by inode rather than by path, accounting and the kernel log.
        libc::SYS_clock_settime,
        libc::SYS_clock_adjtime,
        libc::SYS_settimeofday,
        libc::SYS_adjtimex,
        libc::SYS_sethostname,
        libc::SYS_setdomainname,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_move_mount,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_open_tree,
        libc::SYS_mount_setattr,
        libc::SYS_open_by_handle_at,
        libc::SYS_acct,
        libc::SYS_quotactl,
        libc::SYS_syslog,
    ] {
        rules.insert(call, Vec::new());
    }
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )?;
    #[allow(unused_mut)]
    let mut program: BpfProgram = filter.try_into()?;
    #[cfg(target_arch = "x86_64")]
    {
        // x32 system calls are the x86-64 architecture's with bit 30 set in the number,
        // so the rules above, on exact numbers, would not see them. All of them are
        // refused with one test ahead of the rules: nothing a command runs uses x32, and
        // a copy of every rule for it doubled the filter, which the kernel compiles
        // again for every command (about 0.3 ms for 400 instructions).
        const LOAD_NR: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS, seccomp_data.nr at 0
        const JSET: u16 = 0x45; // BPF_JMP | BPF_JSET | BPF_K
        const RET: u16 = 0x06; // BPF_RET | BPF_K
        const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
        let x32 = [
            seccompiler::sock_filter {
                code: LOAD_NR,
                jt: 0,
                jf: 0,
                k: 0,
            },
            seccompiler::sock_filter {
                code: JSET,
                jt: 0,
                jf: 1,
                k: 0x4000_0000,
            },
            seccompiler::sock_filter {
                code: RET,
                jt: 0,
                jf: 0,
                k: SECCOMP_RET_ERRNO | libc::EPERM as u32,
            },
        ];
        program.splice(0..0, x32);
    }
    Ok(program)
}

impl ChildSandbox {
    /// Enforces the sandbox on the calling process and its future children: mounts in a
    /// new mount namespace, no-new-privileges, Landlock, seccomp. System calls only, no
    /// allocation: it runs between `fork` and `exec`. Returns the errno on failure.
    #[allow(unsafe_code)]
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
    #[allow(unsafe_code)]
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
            if libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_SLAVE,
                std::ptr::null(),
            ) != 0
            {
                return Err(fail("making / a slave mount"));
            }
            if libc::mount(
                c"proc".as_ptr(),
                c"/proc".as_ptr(),
                c"proc".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                std::ptr::null(),
            ) != 0
            {
                return Err(fail("mounting /proc"));
            }
            // Terminals of the command's own: a new devpts instance, so no other
            // terminal's `/dev/pts/N` can be opened to read what is typed there or to
            // turn its echo off (SBX-7).
            if libc::mount(
                c"devpts".as_ptr(),
                c"/dev/pts".as_ptr(),
                c"devpts".as_ptr(),
                libc::MS_NOSUID | libc::MS_NOEXEC,
                c"newinstance,ptmxmode=0666,mode=0620".as_ptr().cast(),
            ) != 0
            {
                return Err(fail("mounting a devpts of its own"));
            }
            if libc::mount(
                c"/dev/pts/ptmx".as_ptr(),
                c"/dev/ptmx".as_ptr(),
                std::ptr::null(),
                libc::MS_BIND,
                std::ptr::null(),
            ) != 0
                && errno() != libc::ENOENT
            {
                return Err(fail("binding its /dev/pts/ptmx"));
            }
            // A `/dev/shm` of the command's own (POSIX semaphores and shared memory:
            // Python's multiprocessing, browsers): writable, and gone with the command.
            // The host's stays out of reach.
            shm = libc::mount(
                c"tmpfs".as_ptr(),
                c"/dev/shm".as_ptr(),
                c"tmpfs".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV,
                c"size=256m,mode=1777".as_ptr().cast(),
            ) == 0;
            if !shm && errno() != libc::ENOENT {
                return Err(fail("mounting /dev/shm"));
            }
            let mut bound = Vec::new();
            if shm {
                bound.push(c"/dev/shm");
            }
            for path in &writable {
                if libc::mount(
                    path.as_ptr(),
                    path.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND | libc::MS_REC,
                    std::ptr::null(),
                ) == 0
                {
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
            super::own_terminals::allow(ruleset.as_raw_fd(), landlock_abi())?;
            // SAFETY: system calls on the ruleset and the views' paths.
            unsafe { self.views.allow_writes(ruleset.as_raw_fd()) }
                .map_err(|_| fail("the write rules of the cache overlays"))?;
        }
        self.views = super::view_mounts::ViewMounts::default();
        Ok(host_proc)
    }

    #[allow(unsafe_code)]
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

const MOUNT_ATTR_RDONLY: u64 = 0x1;
const AT_RECURSIVE: u32 = 0x8000;
const LANDLOCK_ACCESS_FS_READ_FILE: u64 = 1 << 2;

/// The Landlock rights a writable directory gets in [`landlock_ruleset`] (reading, and
/// every write right but device ioctls), as the kernel's bits, limited to what this
/// kernel's ABI has (the ruleset handles no more than that).
fn writable_dir_access() -> u64 {
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
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// mount_setattr(2) on the mount at `path` and every mount below it.
#[allow(unsafe_code)]
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

#[allow(unsafe_code)]
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
fn hide_file(op: &MountOp) -> Result<(), i32> {
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

/// Leaves the calling process no capability, for good (SBX-7): root's too, so that a
/// command run as root cannot `mknod`, `perf_event_open` a stranger, watch other
/// processes' opens with fanotify, or read past file modes. The securebits are locked
/// first (root gains nothing back on `exec` or `setuid`), then the bounding set is
/// emptied, the ambient set cleared and the effective, permitted and inheritable sets
/// zeroed. A process without CAP_SETPCAP (not root) cannot change its securebits or
/// bounding set, and has no capability to lose there; the final `capset` to nothing is
/// always allowed, and its failure is the error. System calls only: it runs between
/// `fork` and `exec`.
#[allow(unsafe_code)]
fn drop_capabilities() -> Result<(), i32> {
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

#[allow(unsafe_code)]
unsafe fn write_file(path: &std::ffi::CStr, text: &std::ffi::CStr) -> Result<(), i32> {
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
#[allow(unsafe_code)]
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

fn errno() -> i32 {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// The child sandbox as bytes for the supervisor, and the ruleset descriptor to pass
/// beside them.
pub(crate) fn encode_child(child: Option<&ChildSandbox>) -> (Vec<u8>, Option<RawFd>) {
    let Some(child) = child else {
        return (vec![0], None);
    };
    let mut out = vec![1u8];
    out.push(u8::from(child.ruleset.is_some()));
    out.push(match child.seccomp {
        None => 0,
        Some(Filter::NetworkOff) => 1,
        Some(Filter::NetworkOn) => 2,
    });
    match child.userns {
        Some((uid, gid)) => {
            out.push(1);
            out.extend_from_slice(&uid.to_le_bytes());
            out.extend_from_slice(&gid.to_le_bytes());
        }
        None => out.push(0),
    }
    out.extend_from_slice(&(child.mounts.len() as u32).to_le_bytes());
    for op in &child.mounts {
        out.push(op.kind as u8);
        out.extend_from_slice(&op.keep.to_le_bytes());
        let path = op.path.as_bytes();
        out.extend_from_slice(&(path.len() as u32).to_le_bytes());
        out.extend_from_slice(path);
    }
    match &child.isolation {
        Some(writable) => {
            out.push(1);
            out.extend_from_slice(&(writable.len() as u32).to_le_bytes());
            for path in writable {
                let path = path.as_bytes();
                out.extend_from_slice(&(path.len() as u32).to_le_bytes());
                out.extend_from_slice(path);
            }
        }
        None => out.push(0),
    }
    child.views.encode(&mut out);
    (out, child.ruleset.as_ref().map(AsRawFd::as_raw_fd))
}

/// Decodes what [`encode_child`] made; `ruleset` yields the passed descriptor when the
/// bytes say there is one. The seccomp filter is compiled here (in the helper, before
/// it forks).
pub(crate) fn decode_child(
    bytes: &[u8],
    ruleset: impl FnOnce() -> io::Result<OwnedFd>,
) -> io::Result<Option<ChildSandbox>> {
    let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, format!("sandbox: {what}"));
    let mut at = 0usize;
    let mut take = |n: usize, what: &str| -> io::Result<&[u8]> {
        let slice = bytes.get(at..at + n).ok_or_else(|| bad(what))?;
        at += n;
        Ok(slice)
    };
    let u32_of = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    if take(1, "presence")?[0] == 0 {
        return Ok(None);
    }
    let has_ruleset = take(1, "ruleset flag")?[0] == 1;
    let seccomp = match take(1, "seccomp flag")?[0] {
        0 => None,
        1 => Some(Filter::NetworkOff),
        2 => Some(Filter::NetworkOn),
        _ => return Err(bad("unknown seccomp filter")),
    };
    let userns = if take(1, "userns flag")?[0] == 1 {
        let uid = u32_of(take(4, "uid")?);
        let gid = u32_of(take(4, "gid")?);
        Some((uid, gid))
    } else {
        None
    };
    let count = u32_of(take(4, "mount count")?);
    let mut mounts = Vec::new();
    for _ in 0..count {
        let kind = match take(1, "mount kind")?[0] {
            1 => MountKind::ReadOnly,
            2 => MountKind::HideFile,
            3 => MountKind::HideDir,
            4 => MountKind::Pin,
            _ => return Err(bad("unknown mount kind")),
        };
        let keep_bytes = take(8, "mount flags")?;
        let mut keep = [0u8; 8];
        keep.copy_from_slice(keep_bytes);
        let len = u32_of(take(4, "path length")?) as usize;
        let path = CString::new(take(len, "path")?).map_err(|_| bad("a path holds a NUL byte"))?;
        mounts.push(MountOp {
            kind,
            path,
            keep: u64::from_le_bytes(keep),
        });
    }
    let isolation = if take(1, "isolation flag")?[0] == 1 {
        let count = u32_of(take(4, "writable count")?);
        let mut writable = Vec::new();
        for _ in 0..count {
            let len = u32_of(take(4, "path length")?) as usize;
            writable.push(
                CString::new(take(len, "path")?).map_err(|_| bad("a path holds a NUL byte"))?,
            );
        }
        Some(writable)
    } else {
        None
    };
    let views =
        super::view_mounts::ViewMounts::decode(&mut |n, what| take(n, what).map(<[u8]>::to_vec))?;
    if let Some(filter) = seccomp {
        program(filter)?;
    }
    Ok(Some(ChildSandbox {
        ruleset: if has_ruleset { Some(ruleset()?) } else { None },
        seccomp,
        mounts,
        views,
        maps: userns.map(maps_for),
        userns,
        isolation,
    }))
}

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
#[allow(unsafe_code)]
fn landlock_abi() -> i32 {
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

#[allow(unsafe_code)]
fn seccomp_available() -> bool {
    // SAFETY: PR_GET_SECCOMP reads the calling thread's mode and touches no memory.
    let mode = unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) };
    mode >= 0 && ARCH.is_some()
}

/// Whether a child may `unshare(flags)`: tried in a short-lived `true`.
fn probe_unshare(flags: libc::c_int) -> bool {
    use std::os::unix::process::CommandExt;
    let Some(program) = ["/bin/true", "/usr/bin/true"]
        .into_iter()
        .find(|p| Path::new(p).exists())
    else {
        return false;
    };
    let mut command = std::process::Command::new(program);
    command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    #[allow(unsafe_code)]
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
#[allow(unsafe_code)]
pub(crate) unsafe fn fork_isolated(userns: bool) -> libc::pid_t {
    #[repr(C)]
    struct CloneArgs {
        flags: u64,
        pidfd: u64,
        child_tid: u64,
        parent_tid: u64,
        exit_signal: u64,
        stack: u64,
        stack_size: u64,
        tls: u64,
    }
    let mut flags = libc::CLONE_NEWPID as u64;
    if userns {
        flags |= libc::CLONE_NEWUSER as u64;
    }
    let args = CloneArgs {
        flags,
        pidfd: 0,
        child_tid: 0,
        parent_tid: 0,
        exit_signal: libc::SIGCHLD as u64,
        stack: 0,
        stack_size: 0,
        tls: 0,
    };
    // SAFETY: clone3 without CLONE_VM or a stack behaves as fork.
    unsafe {
        libc::syscall(
            libc::SYS_clone3,
            &args as *const CloneArgs,
            size_of::<CloneArgs>(),
        ) as libc::pid_t
    }
}

/// Whether the supervisor can isolate a command ([`ChildSandbox::isolate`]): PID and
/// mount namespaces (for a user other than root, inside a user namespace), a `/proc` of
/// its own (refused in some containers, whose `/proc` is partly covered), and
/// `mount_setattr` (Linux 5.12). Tried in a short-lived child.
#[allow(unsafe_code)]
fn process_isolation() -> bool {
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
#[allow(unsafe_code)]
pub(crate) fn probe_in_new_pid_namespace(
    userns: bool,
    in_child: impl Fn() -> bool + Send + Sync + 'static,
) -> bool {
    use std::os::unix::process::CommandExt;
    let Some(program) = ["/bin/true", "/usr/bin/true"]
        .into_iter()
        .find(|p| Path::new(p).exists())
    else {
        return false;
    };
    let mut command = std::process::Command::new(program);
    command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
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
fn cgroup_delegation() -> bool {
    matches!(
        crate::cgroup::support(),
        crate::cgroup::Support::Available { .. }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sbx_2_reads_are_allowed_around_the_secrets() {
        let base = std::env::temp_dir().join(format!("wavesh-around-{}", std::process::id()));
        let home = base.join("home");
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::create_dir_all(home.join("proj")).unwrap();
        std::fs::write(home.join(".netrc"), "x").unwrap();
        std::fs::write(home.join("notes"), "x").unwrap();
        let allowed = read_allowed(&[home.join(".ssh"), home.join(".netrc")]);
        assert!(allowed.contains(&home.join("proj")));
        assert!(allowed.contains(&home.join("notes")));
        assert!(!allowed.iter().any(|p| p.starts_with(home.join(".ssh"))));
        assert!(!allowed.contains(&home.join(".netrc")));
        // Directories on the way are descended into, never allowed whole.
        for ancestor in home.ancestors() {
            assert!(
                !allowed.contains(&ancestor.to_path_buf()),
                "{}",
                ancestor.display()
            );
        }
        assert!(allowed.contains(&PathBuf::from("/proc")) || !Path::new("/proc").exists());
        std::fs::remove_dir_all(&base).unwrap();
    }

    /// The reads are built once per kind of plan: a command's own TMPDIR and output files
    /// are not part of what they depend on, and a session's two levels do not evict each
    /// other. A change in a listed directory rebuilds them.
    #[test]
    fn sbx_2_reads_are_reused_across_commands_and_levels() {
        use crate::sandbox::{CommandFiles, SandboxConfig, SecretList};
        let base = std::env::temp_dir().join(format!("wavesh-reuse-{}", std::process::id()));
        let (ws, home) = (base.join("ws"), base.join("home"));
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        let config = SandboxConfig {
            roots: vec![ws.clone()],
            secrets: SecretList {
                paths: vec![home.join(".ssh")],
                names: vec![".env".into()],
            },
            ..SandboxConfig::default()
        };
        let files = |n: u32| CommandFiles {
            output: base.join(format!("p/{n}-out")),
            cwd_file: Some(base.join(format!("p/{n}-cwd"))),
            tmp_dir: base.join(format!("p/{n}-tmp")),
            cwd: ws.clone(),
        };
        let plan = |level, n| Plan::new(level, &config, &files(n), false);
        // A workspace directory changed in the last 10 ms is listed again every time (its
        // mtime may not show a further change, see scan.rs): the one just made is waited
        // out.
        std::thread::sleep(std::time::Duration::from_millis(20));
        // The system temporary directory is on the way to this test's secret, and other
        // tests change it at any time: a rebuild it caused is tried again, a few times.
        let first = (0..5)
            .find_map(|_| {
                let first = cached_reads(&plan(Level::ReadOnly, 1), true);
                let other_level = cached_reads(&plan(Level::WorkspaceWrite, 2), true);
                let reused =
                    std::sync::Arc::ptr_eq(&first, &cached_reads(&plan(Level::ReadOnly, 3), true))
                        && std::sync::Arc::ptr_eq(
                            &other_level,
                            &cached_reads(&plan(Level::WorkspaceWrite, 4), true),
                        );
                reused.then_some(first)
            })
            .expect("the reads are reused across commands and levels");
        // A new entry in the workspace (a `.env` could be among them) rebuilds.
        std::fs::write(ws.join(".env"), "x").unwrap();
        assert!(!std::sync::Arc::ptr_eq(
            &first,
            &cached_reads(&plan(Level::ReadOnly, 5), true)
        ));
        std::fs::remove_dir_all(&base).unwrap();
    }

    /// A command's ruleset starts from a base made ahead for it, and taking it makes the
    /// next one, per network setting.
    #[test]
    fn sbx_2_a_ruleset_base_is_made_ahead_for_the_next_command() {
        use crate::sandbox::{CommandFiles, SandboxConfig};
        if landlock_abi() < 1 {
            return;
        }
        let base = std::env::temp_dir().join(format!("wavesh-spare-{}", std::process::id()));
        std::fs::create_dir_all(base.join("ws")).unwrap();
        let files = CommandFiles {
            output: base.join("out"),
            cwd_file: None,
            tmp_dir: base.join("tmp"),
            cwd: base.join("ws"),
        };
        let config = SandboxConfig {
            roots: vec![base.join("ws")],
            ..SandboxConfig::default()
        };
        let plan = Plan::new(Level::ReadOnly, &config, &files, false);
        let reads = cached_reads(&plan, false);
        let spare_ready = || {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            while std::time::Instant::now() < deadline {
                if reads.spares.lock().unwrap()[0].is_some() {
                    return true;
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            false
        };
        assert!(landlock_ruleset(&plan, &reads).unwrap().is_some());
        assert!(spare_ready(), "no base was made ahead");
        assert!(
            reads.spares.lock().unwrap()[1].is_none(),
            "only for the setting used"
        );
        assert!(landlock_ruleset(&plan, &reads).unwrap().is_some());
        assert!(spare_ready(), "taking the base makes the next one");
        std::fs::remove_dir_all(&base).unwrap();
    }

    /// Filters are built for x86-64, aarch64 and riscv64 only; elsewhere the sandbox
    /// reports the network guarantee missing.
    #[test]
    #[cfg(any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        target_arch = "riscv64"
    ))]
    fn sbx_2_the_seccomp_filters_compile() {
        assert!(program(Filter::NetworkOff).unwrap().len() > 10);
        eprintln!(
            "seccomp filters: {} and {} instructions",
            program(Filter::NetworkOff).unwrap().len(),
            program(Filter::NetworkOn).unwrap().len()
        );
        assert!(
            program(Filter::NetworkOn).unwrap().len() > program(Filter::NetworkOff).unwrap().len()
        );
    }

    #[test]
    fn child_sandbox_round_trips_through_bytes() {
        let child = ChildSandbox {
            ruleset: None,
            seccomp: Some(Filter::NetworkOff),
            mounts: vec![MountOp {
                kind: MountKind::HideDir,
                path: CString::new("/ws/.ssh").unwrap(),
                keep: 6,
            }],
            views: super::super::view_mounts::ViewMounts::default(),
            userns: Some((1000, 1001)),
            maps: None,
            isolation: Some(vec![
                CString::new("/ws").unwrap(),
                CString::new("/p/out").unwrap(),
            ]),
        };
        let (bytes, fd) = encode_child(Some(&child));
        assert!(fd.is_none());
        let back = decode_child(&bytes, || unreachable!("no ruleset"))
            .unwrap()
            .unwrap();
        assert_eq!(back.mounts, child.mounts);
        assert_eq!(back.userns, child.userns);
        assert_eq!(back.seccomp, child.seccomp);
        assert_eq!(back.isolation, child.isolation);
        assert_eq!(back.maps.unwrap().uid_map.as_bytes(), b"1000 1000 1\n");
        assert!(decode_child(&[0], || unreachable!()).unwrap().is_none());
        assert!(decode_child(&[1, 0, 9, 0, 0, 0, 0, 0], || unreachable!()).is_err());
    }
}
