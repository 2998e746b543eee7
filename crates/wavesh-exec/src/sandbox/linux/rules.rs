//! The Landlock ruleset of a command: a base of read rules made ahead, then the
//! command's own write, scope and network rules.

use super::*;
use landlock::{
    ABI, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, NetPort, PathBeneath, Ruleset,
    RulesetAttr, RulesetCreatedAttr, Scope,
};

pub(super) fn landlock_error(
    what: &str,
) -> impl FnOnce(landlock::RulesetError) -> (String, io::Error) {
    let what = what.to_owned();
    move |e: landlock::RulesetError| (what, io::Error::other(e.to_string()))
}

/// A command's ruleset before its own rules: the rights it handles and the read rules
/// around the secrets.
/// `slot`: 0 no TCP at all, 1 connect only (the host's network, for reads), 2 bind and
/// connect (the session's own network namespace, where only loopback exists: NET-1).
#[expect(unsafe_code, reason = "landlock_add_rule(2) on descriptors owned here")]
pub(super) fn base_ruleset(
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
pub(super) fn landlock_ruleset(
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
pub(super) fn open_path(path: &Path) -> Option<(OwnedFd, bool)> {
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
