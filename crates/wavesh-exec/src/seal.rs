//! Sealed runs (Linux): a command approved only because it was classified read-only runs
//! under a Landlock ruleset, so that even if the classifier were wrong it cannot write a
//! file or open a TCP connection.
//!
//! The ruleset handles every file-system write right (write, truncate, create, remove,
//! rename, link) and, where the kernel ABI has them (Linux 6.7+, ABI 4), TCP bind and
//! connect. Writes stay allowed only to `/dev/null`, the command's own output file (so
//! `>/dev/stderr`, which Linux opens through `/proc/self/fd`, works), its cwd read-back
//! file and a private per-command `TMPDIR` (here-documents and large `sort`s need
//! temporary files; zsh's `TMPPREFIX` is pointed there too). Reads and execution are not
//! restricted. UDP and unix sockets are not covered by Landlock on current kernels.
//!
//! The ruleset is built in the host ([`prepare`]) and enforced in the child just before
//! `exec` with two plain system calls ([`enforce`]), which are safe after `fork` in a
//! multi-threaded host. Where Landlock is missing the command runs unsealed and this is
//! logged once per process.

use std::path::PathBuf;

/// What a sealed command may still write to.
#[derive(Debug, Clone)]
pub struct SealSpec {
    /// Single files the command may write (and truncate): `/dev/null` is always added.
    pub writable_files: Vec<PathBuf>,
    /// A directory the command may do anything in: its private `TMPDIR`.
    pub writable_dir: PathBuf,
    /// Keep TCP connect (a read-only command that reads over the network, such as
    /// `gh pr view`); binding stays denied.
    pub allow_connect: bool,
}

/// A prepared ruleset: a Landlock ruleset descriptor, passed to the child.
#[cfg(target_os = "linux")]
pub type Ruleset = std::os::fd::OwnedFd;

/// A prepared ruleset (never made where Landlock does not exist).
#[cfg(not(target_os = "linux"))]
#[derive(Debug)]
pub enum Ruleset {}

/// Whether this kernel can seal, and how far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SealSupport {
    /// Writes and TCP are both denied.
    Full,
    /// Writes are denied; this kernel's Landlock cannot restrict TCP (before ABI 4).
    FilesOnly,
    /// No Landlock: commands run unsealed.
    Unavailable,
}

/// The Landlock ABI of the running kernel, or 0 without Landlock.
#[cfg(target_os = "linux")]
pub fn landlock_abi() -> i32 {
    #[allow(unsafe_code)]
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

/// The Landlock ABI of the running kernel, or 0 without Landlock.
#[cfg(not(target_os = "linux"))]
pub fn landlock_abi() -> i32 {
    0
}

/// What sealing does on this machine.
pub fn support() -> SealSupport {
    match landlock_abi() {
        0 => SealSupport::Unavailable,
        1..=3 => SealSupport::FilesOnly,
        _ => SealSupport::Full,
    }
}

/// Builds the ruleset for `spec`. `Ok(None)`: Landlock is unavailable here (logged once),
/// and the command runs unsealed. An error means the ruleset could not be built although
/// Landlock exists (a writable path is missing, say): the command must not run.
#[cfg(target_os = "linux")]
pub fn prepare(spec: &SealSpec) -> Result<Option<Ruleset>, std::io::Error> {
    use landlock::{
        ABI, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd,
        Ruleset as LandlockRuleset, RulesetAttr, RulesetCreatedAttr,
    };

    if support() == SealSupport::Unavailable {
        log_unavailable_once();
        return Ok(None);
    }
    // ABI 4 handles TCP; the device-ioctl right of ABI 5 is left alone (it restricts
    // reading a terminal's settings, not writing).
    let abi = ABI::V4;
    let writes = AccessFs::from_write(abi);
    let file_writes: BitFlags<AccessFs> = AccessFs::WriteFile | AccessFs::Truncate;
    let failed = |what: &str, error: &dyn std::fmt::Display| {
        std::io::Error::other(format!("cannot build the read-only seal ({what}): {error}"))
    };
    let open = |path: &std::path::Path| {
        PathFd::new(path).map_err(|error| failed(&path.display().to_string(), &error))
    };
    let mut ruleset = LandlockRuleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(writes)
        .map_err(|e| failed("file rights", &e))?
        .handle_access(if spec.allow_connect {
            BitFlags::from(AccessNet::BindTcp)
        } else {
            AccessNet::BindTcp | AccessNet::ConnectTcp
        })
        .map_err(|e| failed("network rights", &e))?
        .create()
        .map_err(|e| failed("create", &e))?;
    let mut files = vec![PathBuf::from("/dev/null")];
    files.extend(spec.writable_files.iter().cloned());
    for file in &files {
        ruleset = ruleset
            .add_rule(PathBeneath::new(open(file)?, file_writes))
            .map_err(|e| failed(&file.display().to_string(), &e))?;
    }
    ruleset = ruleset
        .add_rule(PathBeneath::new(open(&spec.writable_dir)?, writes))
        .map_err(|e| failed(&spec.writable_dir.display().to_string(), &e))?;
    let fd: Option<Ruleset> = ruleset.into();
    if fd.is_none() {
        log_unavailable_once();
    }
    Ok(fd)
}

/// Builds the ruleset for `spec`: never anything off Linux.
#[cfg(not(target_os = "linux"))]
pub fn prepare(_spec: &SealSpec) -> Result<Option<Ruleset>, std::io::Error> {
    log_unavailable_once();
    Ok(None)
}

fn log_unavailable_once() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        tracing::warn!(
            "Landlock is not available on this system: commands approved as read-only run unsealed"
        );
    });
}

/// Enforces the ruleset `fd` on the calling thread and its future children: sets
/// no-new-privileges, then restricts itself. Only two system calls and no allocation, so
/// it may run between `fork` and `exec`. Returns the errno on failure.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub fn enforce(fd: std::os::fd::RawFd) -> Result<(), i32> {
    // SAFETY: plain system calls on integers; no memory is passed.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(*libc::__errno_location());
        }
        if libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) != 0 {
            return Err(*libc::__errno_location());
        }
    }
    Ok(())
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// A sealed child cannot create a file but can write to its TMPDIR and /dev/null.
    #[test]
    fn sealed_child_writes_only_where_allowed() {
        if support() == SealSupport::Unavailable {
            eprintln!("SKIPPED: this kernel has no Landlock");
            return;
        }
        let base = std::env::temp_dir().join(format!("wavesh-seal-{}", std::process::id()));
        let tmp = base.join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        let ruleset = prepare(&SealSpec {
            writable_files: Vec::new(),
            writable_dir: tmp.clone(),
            allow_connect: false,
        })
        .unwrap()
        .expect("Landlock is available");
        let raw = std::os::fd::AsRawFd::as_raw_fd(&ruleset);
        let script = format!(
            "echo ok > /dev/null && echo t > {tmp}/t && cat {tmp}/t; touch {base}/x; echo rc=$?",
            tmp = tmp.display(),
            base = base.display()
        );
        let mut command = std::process::Command::new("bash");
        command.arg("-c").arg(script);
        #[allow(unsafe_code)]
        // SAFETY: `enforce` makes only async-signal-safe system calls.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut command, move || {
                enforce(raw).map_err(std::io::Error::from_raw_os_error)
            });
        }
        let output = command.output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert_eq!(
            stdout,
            "t\nrc=1\n",
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(String::from_utf8_lossy(&output.stderr).contains("Permission denied"));
        assert!(!base.join("x").exists());
        std::fs::remove_dir_all(&base).unwrap();
    }
}
