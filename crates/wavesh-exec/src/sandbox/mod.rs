//! The sandbox every command can run in (SBX): a wrong approval must be harmless.
//!
//! Three levels ([`Level`]): `read-only` (writes only to `/dev/null`, the command's own
//! output and a private TMPDIR), `workspace-write` (also the workspace, the additional
//! directories and the session's TMPDIR, except the paths a command could use to grant
//! itself more: `.git/hooks`, `.git/config`, `.claude/`, wavesh's state) and `off`.
//! Both sandboxed levels read everything but the host's secret list, have no network,
//! cannot signal or trace a process outside their own tree, and get an environment
//! scrubbed of credentials (SBX-1, SBX-2).
//!
//! The policy is data ([`Plan`]): computed once per command from the level, the host's
//! [`SandboxConfig`] and the command's private files. The Linux `imp` turns it into a
//! Landlock ruleset, a seccomp filter and a few mounts in a private mount namespace; the
//! macOS Seatbelt profile ([`seatbelt`]) is generated from the same plan. Whatever a
//! machine lacks is named in [`Prepared::missing`], logged once, and told to the model;
//! a strict configuration refuses to run instead (SBX-5).

mod denial;
mod env;
mod file_values;
mod git_config;
#[cfg(target_os = "linux")]
mod off_isolation;
#[cfg(target_os = "linux")]
mod own_terminals;
mod plan;
#[cfg(target_os = "linux")]
mod scan;
pub mod seatbelt;
#[cfg(target_os = "linux")]
mod view_mounts;
mod views;

#[cfg(target_os = "linux")]
#[path = "linux/mod.rs"]
mod imp;
#[cfg(not(target_os = "linux"))]
#[path = "other.rs"]
mod imp;

use std::path::PathBuf;

pub use denial::explain_denials;
pub use env::{EnvFilter, Scrubbed, mask_file, mask_scrubbed};
pub use file_values::secret_file_values;
pub use git_config::{GitView, runs_no_program};
pub use imp::ChildSandbox;
#[cfg(target_os = "linux")]
pub(crate) use imp::{decode_child, encode_child, fork_isolated, isolation_user_namespace};
#[cfg(target_os = "linux")]
pub(crate) use off_isolation::isolate_at_off;
#[cfg(target_os = "linux")]
pub use off_isolation::off_pid_namespace;

/// Whether commands outside the sandbox get a PID namespace here (SBX-7), or why not.
#[cfg(not(target_os = "linux"))]
pub fn off_pid_namespace() -> Result<(), String> {
    Err("PID namespaces are Linux's".to_owned())
}
pub use plan::{
    CommandFiles, HOME_START_UP, Plan, home_is_writable, home_start_up_files, protected_paths,
    quarantine_planted,
};
pub use views::{
    CACHE_VARIABLES, CacheView, OUTPUT_VARIABLES, TmpView, ViewInputs, Views, cache_state_dir,
    read_only_caches_note, views_inputs,
};

/// What a command's git layers leave when it ends (SBX-9): its top-level git files
/// brought back, its config changes judged and applied; the notes for the model.
pub fn git_after_exit(views: &Views) -> Vec<String> {
    views.git.iter().flat_map(git_config::after_exit).collect()
}

/// Whether an overlay can also remove what its lower layer holds (the caches' need,
/// SBX-8), probed once.
pub fn overlay_removes() -> bool {
    #[cfg(target_os = "linux")]
    {
        view_mounts::overlay_removes()
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// Whether overlayfs can be mounted for the cache views (SBX-8), probed once.
pub fn overlay_available() -> bool {
    #[cfg(target_os = "linux")]
    {
        view_mounts::overlay_available()
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// How much a command may do (SBX-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Level {
    /// Writes only to `/dev/null`, its own output and a private TMPDIR.
    ReadOnly,
    /// Also the workspace, the additional directories and the session's TMPDIR.
    WorkspaceWrite,
    /// No sandbox.
    #[default]
    Off,
}

impl Level {
    /// The name used on the command line and in texts.
    pub fn name(self) -> &'static str {
        match self {
            Level::ReadOnly => "read-only",
            Level::WorkspaceWrite => "workspace-write",
            Level::Off => "off",
        }
    }

    /// Whether anything is enforced.
    pub fn is_sandboxed(self) -> bool {
        self != Level::Off
    }
}

impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A sandbox level name that is none of the three.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown sandbox level `{0}`: expected read-only, workspace-write or off")]
pub struct UnknownLevel(pub String);

impl std::str::FromStr for Level {
    type Err = UnknownLevel;

    fn from_str(text: &str) -> Result<Level, UnknownLevel> {
        match text {
            "read-only" => Ok(Level::ReadOnly),
            "workspace-write" => Ok(Level::WorkspaceWrite),
            "off" => Ok(Level::Off),
            other => Err(UnknownLevel(other.to_owned())),
        }
    }
}

/// The user's secrets: never readable inside the sandbox (SBX-2, RO-9).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SecretList {
    /// Absolute paths (files or directories; `~` already expanded by the host). They need
    /// not exist: one created later is covered too where its parent is listed.
    pub paths: Vec<PathBuf>,
    /// File-name patterns (the secret list's globs: `*`, `?`, `[...]`): `.env`, `*.pem`.
    /// A pattern starting with `!` is an exception (`!.env.example`). They are matched in
    /// every directory of the workspace roots but `.git` and the dependency and build
    /// directories the search never enters (`node_modules`, `target`, ...), in the
    /// working directory and in every directory on the way to a
    /// secret path, not in every directory of the disk (see docs/sandbox.md).
    pub names: Vec<String>,
}

/// What the host configures for every sandboxed command of a session.
#[derive(Debug, Clone, Default)]
pub struct SandboxConfig {
    /// The workspace root and the additional directories: writable at `workspace-write`.
    pub roots: Vec<PathBuf>,
    /// More writable directories at `workspace-write` (Claude Code's
    /// `sandbox.filesystem.allowWrite`).
    pub extra_writable: Vec<PathBuf>,
    /// More paths kept read-only inside writable directories (`filesystem.denyWrite`).
    pub extra_read_only: Vec<PathBuf>,
    /// wavesh's own state: kept read-only when it lies inside a writable directory.
    pub state_dirs: Vec<PathBuf>,
    /// The secrets.
    pub secrets: SecretList,
    /// Which variables are removed from the command's environment.
    pub env: EnvFilter,
    /// Refuse to run a sandboxed command when a guarantee is missing on this machine,
    /// instead of running it with the rest (Claude Code's `failIfUnavailable`).
    pub strict: bool,
    /// The user's home: where it lies inside a writable directory, its start-up files
    /// stay read-only (SBX-6).
    pub home: Option<PathBuf>,
    /// The session's private directory: readable by its commands (their output files,
    /// the session's task outputs), while the directory holding every session's is
    /// hidden (SBX-7).
    pub private_dir: Option<PathBuf>,
}

/// One promise of the sandbox, named so a missing one can be reported (SBX-5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Guarantee {
    /// Writes are confined (Landlock).
    FileWrites,
    /// Secret files cannot be read (Landlock).
    SecretReads,
    /// No network at all (seccomp).
    Network,
    /// No signal or ptrace reaches a process outside the command's tree (Landlock ABI 6).
    Signals,
    /// Abstract unix sockets outside the sandbox are unreachable (Landlock ABI 6).
    AbstractSockets,
    /// `.git/hooks`, `.git/config`, `.claude/` stay read-only inside writable directories,
    /// and secrets inside them stay hidden (a private mount namespace).
    ProtectedPaths,
    /// No other process's environment, memory map or command line can be read: the
    /// command sees only its own tree (a PID namespace with its own `/proc`).
    OtherProcesses,
    /// No file outside the writable paths changes its mode, owner, times or extended
    /// attributes (read-only mounts: Landlock does not govern these calls).
    FileMetadata,
}

impl Guarantee {
    /// What the guarantee promises, for the log and the model.
    pub fn describe(self) -> &'static str {
        match self {
            Guarantee::FileWrites => "writes confined to the allowed directories",
            Guarantee::SecretReads => "secret files unreadable",
            Guarantee::Network => "no network",
            Guarantee::Signals => "no signal to processes outside the command",
            Guarantee::AbstractSockets => "no abstract unix socket outside the command",
            Guarantee::ProtectedPaths => {
                ".git/hooks, .git/config and .claude/ read-only, and secrets hidden, inside the writable directories"
            }
            Guarantee::OtherProcesses => "other processes' environments and memory unreadable",
            Guarantee::FileMetadata => {
                "no change of modes, owners, times or extended attributes outside the writable paths"
            }
        }
    }

    /// The mechanism it needs, for the log and `wavesh doctor`.
    pub fn mechanism(self) -> &'static str {
        match self {
            Guarantee::FileWrites | Guarantee::SecretReads => "Landlock",
            Guarantee::Network => "seccomp",
            Guarantee::Signals | Guarantee::AbstractSockets => "Landlock ABI 6 (Linux 6.12)",
            Guarantee::ProtectedPaths => "a mount namespace (root or user namespaces)",
            Guarantee::OtherProcesses => {
                "a PID namespace with its own /proc, an IPC namespace and a devpts of its own, made by the supervisor (root or user namespaces)"
            }
            Guarantee::FileMetadata => {
                "read-only mounts in the command's own mount namespace, made by the supervisor (root, Linux 5.12)"
            }
        }
    }
}

/// What this machine offers the sandbox, probed once per process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Support {
    /// The Landlock ABI, 0 without Landlock.
    pub landlock_abi: i32,
    /// seccomp filters can be installed.
    pub seccomp: bool,
    /// A process of this user can make a private mount namespace (root, or user
    /// namespaces allowed).
    pub mount_namespace: bool,
    /// Unprivileged user namespaces can be created; `None`: not probed (only
    /// [`probe_namespaces`] does, for `wavesh doctor`).
    pub user_namespace: Option<bool>,
    /// A new network namespace can be made (not used: seccomp is cheaper); `None`: not
    /// probed.
    pub network_namespace: Option<bool>,
    /// cgroup v2 is mounted and this process may create child groups in its own.
    pub cgroup_delegation: bool,
    /// The supervisor can put each command in a PID namespace of its own, with its own
    /// `/proc`, and mount everything outside the writable paths read-only (root, PID
    /// namespaces, `mount_setattr`).
    pub process_isolation: bool,
    /// The platform: `linux`, `macos`, ...
    pub platform: &'static str,
    /// macOS: `sandbox-exec` exists.
    pub seatbelt: bool,
}

impl Support {
    /// The guarantees of `level` this machine cannot give.
    pub fn missing(&self, level: Level) -> Vec<Guarantee> {
        if level == Level::Off {
            return Vec::new();
        }
        if self.platform == "macos" {
            return if self.seatbelt {
                Vec::new()
            } else {
                all_guarantees().to_vec()
            };
        }
        let mut missing = Vec::new();
        if self.landlock_abi < 1 {
            missing.extend([Guarantee::FileWrites, Guarantee::SecretReads]);
        }
        if !self.seccomp {
            missing.push(Guarantee::Network);
        }
        if self.landlock_abi < 6 {
            missing.extend([Guarantee::Signals, Guarantee::AbstractSockets]);
        }
        if level == Level::WorkspaceWrite && !self.mount_namespace {
            missing.push(Guarantee::ProtectedPaths);
        }
        if !self.process_isolation {
            missing.extend([Guarantee::OtherProcesses, Guarantee::FileMetadata]);
        }
        missing
    }
}

fn all_guarantees() -> &'static [Guarantee] {
    &[
        Guarantee::FileWrites,
        Guarantee::SecretReads,
        Guarantee::Network,
        Guarantee::Signals,
        Guarantee::AbstractSockets,
        Guarantee::ProtectedPaths,
        Guarantee::OtherProcesses,
        Guarantee::FileMetadata,
    ]
}

/// [`support`] with the user and network namespace probes too (each starts a process).
pub fn probe_namespaces() -> Support {
    imp::probe_namespaces(support().clone())
}

/// What this machine offers (probed on first use).
pub fn support() -> &'static Support {
    static SUPPORT: std::sync::OnceLock<Support> = std::sync::OnceLock::new();
    SUPPORT.get_or_init(imp::probe)
}

/// Why a sandbox could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// A strict configuration and a machine without some guarantee.
    #[error(
        "the {level} sandbox cannot be enforced on this machine (missing: {}), and the sandbox is strict",
        describe_all(missing)
    )]
    Unavailable {
        /// The level asked for.
        level: Level,
        /// What is missing.
        missing: Vec<Guarantee>,
    },
    /// The mechanism exists but building the rules failed.
    #[error("cannot build the {level} sandbox ({what}): {source}")]
    Build {
        /// The level.
        level: Level,
        /// What was being built (a path, "seccomp filter").
        what: String,
        /// The cause.
        source: std::io::Error,
    },
}

/// The guarantees, joined for a text.
pub fn describe_all(missing: &[Guarantee]) -> String {
    missing
        .iter()
        .map(|g| g.describe())
        .collect::<Vec<_>>()
        .join("; ")
}

/// A sandbox ready to be entered by one command's shell.
#[derive(Debug)]
pub struct Prepared {
    /// What the child enforces between `fork` and `exec`.
    pub child: Option<ChildSandbox>,
    /// The plan it enforces.
    pub plan: Plan,
    /// Guarantees this machine could not give (told to the model, SBX-5).
    pub missing: Vec<Guarantee>,
    /// The read rules it was built from.
    #[cfg_attr(
        not(target_os = "linux"),
        expect(dead_code, reason = "read by the start ahead, on Linux only")
    )]
    pub(crate) reads: ReadsId,
}

/// Which read rules a prepared sandbox was built from (on Linux; none elsewhere). They
/// stay the current ones while no directory the secret search listed or watches has
/// changed: a shell started ahead of its command is used only then. Held weakly: the
/// reads hold a descriptor per allowed path, which only their cache keeps open.
#[derive(Clone)]
pub(crate) struct ReadsId(Option<std::sync::Weak<imp::Reads>>);

impl std::fmt::Debug for ReadsId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ReadsId")
            .field(&self.0.as_ref().map(std::sync::Weak::as_ptr))
            .finish()
    }
}

impl ReadsId {
    /// Whether `plan` would be built from these same reads now.
    #[cfg_attr(
        not(target_os = "linux"),
        expect(dead_code, reason = "called by the start ahead, on Linux only")
    )]
    pub(crate) fn still_current(&self, plan: &Plan) -> bool {
        let then = self.0.as_ref().and_then(std::sync::Weak::upgrade);
        match (then, imp::current_reads(plan, support())) {
            (Some(then), Some(now)) => std::sync::Arc::ptr_eq(&then, &now),
            _ => false,
        }
    }
}

/// Builds the sandbox of `plan`. With guarantees missing it logs them once per process
/// and runs with the rest, or refuses when `strict`. `isolating`: the spawner enters the
/// process isolation of [`Support::process_isolation`] (the supervisor does; a shell
/// spawned directly by the host cannot, since it needs a process of its own as the PID
/// namespace's init).
pub fn prepare(plan: Plan, strict: bool, isolating: bool) -> Result<Prepared, SandboxError> {
    let mut missing = support().missing(plan.level);
    if !isolating && plan.level != Level::Off && support().platform == "linux" {
        for guarantee in [Guarantee::OtherProcesses, Guarantee::FileMetadata] {
            if !missing.contains(&guarantee) {
                missing.push(guarantee);
            }
        }
    }
    if !missing.is_empty() {
        if strict {
            return Err(SandboxError::Unavailable {
                level: plan.level,
                missing,
            });
        }
        log_missing_once(plan.level, &missing);
    }
    // Only the isolation mounts over the sessions' directory (SBX-7): a spawner that
    // does not isolate leaves it to Landlock.
    let mut plan = plan;
    if !(isolating && support().process_isolation) {
        plan.hide_sessions_by_landlock();
    }
    // Taken first: should a directory change while the sandbox is built, the reads it
    // is built from are newer than these, and a start ahead is never used.
    let reads = ReadsId(
        imp::current_reads(&plan, support()).map(|reads| std::sync::Arc::downgrade(&reads)),
    );
    let child = imp::build(&plan, support())?;
    plan.found_secrets = imp::hidden_secrets(&plan, support());
    Ok(Prepared {
        child,
        plan,
        missing,
        reads,
    })
}

fn log_missing_once(level: Level, missing: &[Guarantee]) {
    static LOGGED: std::sync::Mutex<Vec<(Level, Vec<Guarantee>)>> =
        std::sync::Mutex::new(Vec::new());
    let mut logged = LOGGED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let key = (level, missing.to_vec());
    if logged.contains(&key) {
        return;
    }
    logged.push(key);
    for guarantee in missing {
        tracing::warn!(
            level = level.name(),
            mechanism = guarantee.mechanism(),
            "sandbox guarantee missing on this machine: {}",
            guarantee.describe()
        );
    }
}

/// The line told to the model when guarantees are missing (SBX-5).
pub fn missing_note(level: Level, missing: &[Guarantee]) -> Option<String> {
    if missing.is_empty() {
        return None;
    }
    Some(format!(
        "Sandbox ({level}) is incomplete on this machine; missing: {}.",
        describe_all(missing)
    ))
}

/// `*` glob on a whole string, ASCII case-insensitive when `fold` is set.
pub(crate) fn glob_match(pattern: &str, text: &str, fold: bool) -> bool {
    // On bytes: `*` and every other pattern byte stand for themselves in UTF-8, and the
    // folding is ASCII's, so this equals a match on characters, without allocating (it
    // runs for every variable against every pattern, and for every name scanned).
    let (p, t) = (pattern.as_bytes(), text.as_bytes());
    let same = |a: u8, b: u8| {
        if fold {
            a.eq_ignore_ascii_case(&b)
        } else {
            a == b
        }
    };
    // Classic two-pointer wildcard match with backtracking to the last `*`.
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] != b'*' && same(p[pi], t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == b'*')
}

/// Whether a file name is a secret by the patterns of `names` (exceptions win).
pub(crate) fn secret_name(names: &[String], name: &str) -> bool {
    let mut hit = false;
    for pattern in names {
        // Names match whatever their case (SBX-2): `SERVER.KEY` is a `*.key`.
        if let Some(exception) = pattern.strip_prefix('!') {
            if wavesh_glob::fnmatch_fold(exception, name) {
                return false;
            }
        } else if wavesh_glob::fnmatch_fold(pattern, name) {
            hit = true;
        }
    }
    hit
}

/// The home directory the user database gives this process's user, which a command
/// reaches whatever `HOME` says (`~user`, `getent passwd`). `None` where there is none.
#[cfg(unix)]
#[expect(unsafe_code, reason = "getpwuid_r(3) into a buffer owned here")]
pub fn passwd_home() -> Option<PathBuf> {
    use std::os::unix::ffi::OsStringExt as _;
    let mut buffer = vec![0 as libc::c_char; 16 * 1024];
    // SAFETY: an all-zero passwd is a valid value of a plain C struct.
    let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call; the buffer's length is its own.
    let code = unsafe {
        libc::getpwuid_r(
            libc::getuid(),
            &mut entry,
            buffer.as_mut_ptr(),
            buffer.len(),
            &mut found,
        )
    };
    if code != 0 || found.is_null() || entry.pw_dir.is_null() {
        return None;
    }
    // SAFETY: on success pw_dir points into `buffer`, a NUL-terminated string.
    let dir = unsafe { std::ffi::CStr::from_ptr(entry.pw_dir) }
        .to_bytes()
        .to_vec();
    (!dir.is_empty()).then(|| PathBuf::from(std::ffi::OsString::from_vec(dir)))
}

/// The home directory the user database gives (not on this platform).
#[cfg(not(unix))]
pub fn passwd_home() -> Option<PathBuf> {
    None
}

/// Whether a pattern component holds a glob character.
pub(crate) fn is_glob(pattern: &str) -> bool {
    pattern.contains(['*', '?', '['])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sbx_1_level_names_round_trip_and_bad_names_are_named() {
        for level in [Level::ReadOnly, Level::WorkspaceWrite, Level::Off] {
            assert_eq!(level.name().parse::<Level>(), Ok(level));
        }
        let error = "readonly".parse::<Level>().unwrap_err();
        assert_eq!(
            error.to_string(),
            "unknown sandbox level `readonly`: expected read-only, workspace-write or off"
        );
    }

    #[test]
    fn glob_matches_like_a_shell_star() {
        assert!(glob_match("*_TOKEN", "GITHUB_TOKEN", false));
        assert!(!glob_match("*_TOKEN", "TOKENS", false));
        assert!(glob_match("*PASSWORD*", "my_password_file", true));
        assert!(glob_match("id_rsa*", "id_rsa", false));
        assert!(glob_match("a*b*c", "axxbyyc", false));
        assert!(!glob_match("a*b*c", "axxbyy", false));
        assert!(glob_match("*", "", false));
        // Bytes of a multibyte character never meet a lone pattern byte half way.
        assert!(glob_match("*é*", "café au lait", false));
        assert!(!glob_match("caf?", "café", false));
        assert!(glob_match("*_token", "GITHUB_TOKEN", true));
        assert!(!glob_match("*_token", "GITHUB_TOKEN", false));
    }

    #[test]
    fn secret_names_honour_exceptions() {
        let names: Vec<String> = [".env", ".env.*", "!.env.example", "*.pem"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert!(secret_name(&names, ".env"));
        assert!(secret_name(&names, ".env.production"));
        assert!(!secret_name(&names, ".env.example"));
        assert!(secret_name(&names, "server.pem"));
        assert!(!secret_name(&names, "README.md"));
    }

    #[test]
    fn sbx_2_name_globs_are_the_secret_lists_globs() {
        assert!(wavesh_glob::fnmatch(
            "ssh_host_*_key",
            "ssh_host_ed25519_key"
        ));
        assert!(!wavesh_glob::fnmatch(
            "ssh_host_*_key",
            "ssh_host_ed25519_key.pub"
        ));
        assert!(wavesh_glob::fnmatch(".ss?", ".ssh"));
        assert!(wavesh_glob::fnmatch("id_[rd]sa*", "id_dsa.old"));
        assert!(!wavesh_glob::fnmatch("id_[!r]sa", "id_rsa"));
        assert!(wavesh_glob::fnmatch("a[0-9]", "a5"));
        assert!(wavesh_glob::fnmatch("[x", "[x"));
        assert!(wavesh_glob::fnmatch("\\*", "*"));
        assert!(!wavesh_glob::fnmatch("\\*", "x"));
        assert!(wavesh_glob::fnmatch("*.env.example", "prod.env.example"));
        assert!(!wavesh_glob::fnmatch("*.pem", "a.pem.txt"));
        assert!(is_glob("/proc/*/environ") && !is_glob("/etc/shadow"));
    }

    #[test]
    fn sbx_5_missing_guarantees_follow_the_machine() {
        let full = Support {
            landlock_abi: 7,
            seccomp: true,
            mount_namespace: true,
            user_namespace: None,
            network_namespace: None,
            cgroup_delegation: false,
            process_isolation: true,
            platform: "linux",
            seatbelt: false,
        };
        assert!(full.missing(Level::ReadOnly).is_empty());
        assert!(full.missing(Level::WorkspaceWrite).is_empty());
        let old = Support {
            landlock_abi: 3,
            mount_namespace: false,
            process_isolation: false,
            ..full.clone()
        };
        assert_eq!(
            old.missing(Level::ReadOnly),
            [
                Guarantee::Signals,
                Guarantee::AbstractSockets,
                Guarantee::OtherProcesses,
                Guarantee::FileMetadata
            ]
        );
        assert_eq!(
            old.missing(Level::WorkspaceWrite),
            [
                Guarantee::Signals,
                Guarantee::AbstractSockets,
                Guarantee::ProtectedPaths,
                Guarantee::OtherProcesses,
                Guarantee::FileMetadata
            ]
        );
        let none = Support {
            landlock_abi: 0,
            seccomp: false,
            ..old
        };
        assert_eq!(none.missing(Level::ReadOnly).len(), 7);
        assert!(none.missing(Level::Off).is_empty());
        assert_eq!(
            missing_note(Level::ReadOnly, &[Guarantee::Network]).unwrap(),
            "Sandbox (read-only) is incomplete on this machine; missing: no network."
        );
    }
}

/// What a sandboxed command ran under: for the denial and degradation notes and for
/// masking scrubbed values (SBX-2, SBX-4, SBX-5).
#[derive(Debug)]
pub struct SandboxOutcome {
    /// The plan it enforced.
    pub plan: Plan,
    /// Guarantees this machine could not give.
    pub missing: Vec<Guarantee>,
    /// The variables removed from its environment.
    pub scrubbed: Scrubbed,
    /// The directory it started in: relative paths of its error lines are judged from
    /// it.
    pub cwd: PathBuf,
    /// The session's proxy, when the command could use it: its refusals are noted.
    pub network: Option<crate::net::NetworkUse>,
    /// Notes from when it ended: its git config changes applied or refused (SBX-9).
    pub after_exit: std::sync::Mutex<Vec<String>>,
    /// The directory its shell ended in, whatever its status, when it could be read:
    /// relative paths of error lines printed after a `cd` are judged from it too.
    pub final_cwd: std::sync::Mutex<Option<PathBuf>>,
}
