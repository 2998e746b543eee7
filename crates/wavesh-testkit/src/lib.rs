//! What wavesh's tests share.
//!
//! - [`missing_prerequisite`]: the one way a test says that this machine lacks what it
//!   needs. It prints `SKIPPED: …` and records the line for `scripts/test`'s summary; with
//!   `WAVESH_TEST_REQUIRE_ALL` set (as `.ci/run` sets it) it fails the test instead, so
//!   that no test passes in CI without checking what it names.
//! - [`mode`]: how `scripts/test` runs a suite: as the invoking user, as a throwaway
//!   unprivileged user, or as that user with new user namespaces refused. A test whose
//!   guarantee the machine cannot give in a degraded mode checks that wavesh *reports*
//!   it missing (SBX-5) rather than skipping.
//! - The `wavesh-test-as` binary: the test runner that gives those modes (see there).
#![cfg_attr(
    not(unix),
    allow(dead_code, reason = "the runner's modes are Unix-only")
)]

use std::io::Write as _;

/// Set to any value, a missing prerequisite fails the test instead of skipping it.
pub const REQUIRE_ALL_ENV: &str = "WAVESH_TEST_REQUIRE_ALL";

/// The file (appended to) where every `SKIPPED` line is also written, for the summary
/// `scripts/test` prints at its end.
pub const SKIP_LOG_ENV: &str = "WAVESH_TEST_SKIP_LOG";

/// The mode `scripts/test` runs a suite in: `default`, `unprivileged` or `no-userns`.
pub const MODE_ENV: &str = "WAVESH_TEST_MODE";

/// Whether missing prerequisites fail (`WAVESH_TEST_REQUIRE_ALL` is set).
pub fn require_all() -> bool {
    std::env::var_os(REQUIRE_ALL_ENV).is_some()
}

/// A test prerequisite this machine lacks: `what` it is and `how` to get it.
///
/// Prints `SKIPPED: {what} is missing on this machine ({how})` (and appends it to the
/// file named by `WAVESH_TEST_SKIP_LOG`). With `WAVESH_TEST_REQUIRE_ALL` set it panics
/// instead: a test that cannot check what it names fails in CI.
#[track_caller]
#[allow(
    clippy::print_stdout,
    reason = "a skipped test says SKIPPED where its output is shown"
)]
pub fn missing_prerequisite(what: &str, how: &str) {
    assert!(
        !require_all(),
        "{what} is required ({REQUIRE_ALL_ENV} is set): {how}"
    );
    let line = format!("SKIPPED: {what} is missing on this machine ({how})");
    println!("{line}");
    record_skip(&line);
}

/// Appends `line` and the test's name (its thread's) to `WAVESH_TEST_SKIP_LOG`, if set.
fn record_skip(line: &str) {
    let Some(path) = std::env::var_os(SKIP_LOG_ENV) else {
        return;
    };
    let test = std::thread::current()
        .name()
        .unwrap_or("(unnamed test)")
        .to_owned();
    let binary = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let binary = binary
        .rsplit_once('-')
        .map_or(binary.as_str(), |(name, _)| name);
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = writeln!(file, "[{}] {binary} {test}: {line}", mode().name());
    }
}

/// How `scripts/test` runs the current suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// As whoever ran the tests (root in CI).
    Default,
    /// As a throwaway user with no privilege (`scripts/test` makes and removes it).
    Unprivileged,
    /// As that user, with new user namespaces refused (`clone`/`unshare` with
    /// `CLONE_NEWUSER` fail with EPERM), as on Ubuntu 24.04 and later.
    NoUserNamespaces,
}

impl Mode {
    /// The mode's name in `WAVESH_TEST_MODE`.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Default => "default",
            Mode::Unprivileged => "unprivileged",
            Mode::NoUserNamespaces => "no-userns",
        }
    }

    /// Whether this mode takes away something the machine itself has.
    pub fn is_degraded(self) -> bool {
        self != Mode::Default
    }
}

/// The mode of this run, from `WAVESH_TEST_MODE` (unset: [`Mode::Default`]). An unknown
/// value is a mistake in the script and fails loudly. A degraded mode is also checked
/// against the process itself: `unprivileged` must not be root, and `no-userns` must
/// really be refused a user namespace, so a mode cannot be claimed without being given.
pub fn mode() -> Mode {
    let mode = match std::env::var(MODE_ENV).as_deref() {
        Err(_) | Ok("" | "default") => Mode::Default,
        Ok("unprivileged") => Mode::Unprivileged,
        Ok("no-userns") => Mode::NoUserNamespaces,
        Ok(other) => {
            panic!("{MODE_ENV}={other:?}: expected default, unprivileged or no-userns")
        }
    };
    #[cfg(unix)]
    if mode.is_degraded() {
        assert!(
            !is_root(),
            "{MODE_ENV}={} but the tests run as root",
            mode.name()
        );
    }
    #[cfg(target_os = "linux")]
    if mode == Mode::NoUserNamespaces {
        assert!(
            !user_namespaces_allowed(),
            "{MODE_ENV}=no-userns but this process may create a user namespace"
        );
    }
    mode
}

/// Whether the tests run as root.
#[cfg(unix)]
pub fn is_root() -> bool {
    #[expect(unsafe_code, reason = "geteuid(2) has no safe wrapper in libc")]
    // SAFETY: geteuid takes no argument and cannot fail.
    let euid = unsafe { libc::geteuid() };
    euid == 0
}

/// Whether a child of this process may create a user namespace: a child calls
/// `unshare(CLONE_NEWUSER)` before it execs `true`, so this process's namespaces stay as
/// they are. Anything but success or EPERM/ENOSPC/EINVAL (the kernel's and the policies'
/// refusals) is a broken check, and panics.
#[cfg(target_os = "linux")]
pub fn user_namespaces_allowed() -> bool {
    use std::os::unix::process::CommandExt as _;
    let mut command = std::process::Command::new("true");
    command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    #[expect(unsafe_code, reason = "pre_exec runs in the forked child")]
    // SAFETY: the closure calls only unshare(2), which is async-signal-safe, and
    // reads errno; it allocates nothing.
    unsafe {
        command.pre_exec(|| {
            if libc::unshare(libc::CLONE_NEWUSER) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    match command.status() {
        Ok(status) => status.success(),
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::EPERM | libc::ENOSPC | libc::EINVAL)
            ) =>
        {
            false
        }
        Err(e) => panic!("could not check whether user namespaces are allowed: {e}"),
    }
}

/// Whether the test may do `what`, which needs root. As root: yes. Otherwise see
/// [`lacking_in_this_mode`].
#[cfg(unix)]
#[track_caller]
pub fn root_or_skip(what: &str) -> bool {
    if is_root() {
        return true;
    }
    lacking_in_this_mode(&format!("root, to check {what}"), "run the tests as root");
    false
}

/// Something the test needs is not here: `what`, and `how` to get it. In a degraded mode,
/// which takes root (and with it cgroups, `ns_last_pid`, mounts) away on purpose, it says
/// `SKIPPED` naming the mode, and passes: the same test runs in the default mode, where it
/// is required. Otherwise it is a missing prerequisite ([`missing_prerequisite`]: a
/// failure in CI).
#[track_caller]
#[allow(
    clippy::print_stdout,
    reason = "a skipped test says SKIPPED where its output is shown"
)]
pub fn lacking_in_this_mode(what: &str, how: &str) {
    let mode = mode();
    if mode.is_degraded() {
        let line = format!(
            "SKIPPED: {what}: not available in the {} run (an ordinary user's); the default run checks it",
            mode.name()
        );
        println!("{line}");
        record_skip(&line);
        return;
    }
    missing_prerequisite(what, how);
}

/// The missing guarantees `docs/sandbox.md` lists for `mode` at `level` (`read-only`
/// or `workspace-write`), as their descriptions, from its table "What each kind of user
/// gets". Panics unless the table has exactly one row for them.
pub fn documented_missing(mode: Mode, level: &str) -> std::collections::BTreeSet<String> {
    let doc = include_str!("../../../docs/sandbox.md");
    let rows: Vec<Vec<&str>> = doc
        .lines()
        .filter(|line| line.starts_with(&format!("| `{}`", mode.name())))
        .map(|line| line.trim_matches('|').split(" | ").map(str::trim).collect())
        .filter(|cells: &Vec<&str>| cells.len() == 3 && cells[1] == level)
        .collect();
    assert_eq!(
        rows.len(),
        1,
        "docs/sandbox.md must have one row for mode {} at {level}",
        mode.name()
    );
    guarantee_set(rows[0][2])
}

/// A "; "-joined list of guarantee descriptions, or "none", as a set.
pub fn guarantee_set(list: &str) -> std::collections::BTreeSet<String> {
    if list == "none" {
        return std::collections::BTreeSet::new();
    }
    list.split("; ").map(str::to_owned).collect()
}

/// `text` without the lines "Sandbox (LEVEL) is incomplete on this machine; missing:
/// …." whose list is exactly what `docs/sandbox.md` documents for this mode at LEVEL, so
/// that tests comparing a result's text read the same in every mode. In the default mode
/// (and for any other list) the text is returned unchanged: a note there is a finding.
/// `sbx_5_degraded_modes_are_reported_as_documented` checks the note itself.
pub fn without_documented_note(text: &str) -> String {
    let mode = mode();
    if !mode.is_degraded() {
        return text.to_owned();
    }
    let documented = |line: &str| {
        // Where user namespaces are refused the session has no network of its own
        // (NET-1, SBX-5), said once in the first result.
        (line.starts_with("The session has no network of its own (")
            && line.ends_with("no proxy to the registries."))
            // Where overlayfs cannot be used (SBX-8, SBX-5) every result names the caches
            // left read-only.
            || (line.starts_with("Toolchain caches are read-only in this sandbox: ")
                && !line.contains("holds a"))
            || ["read-only", "workspace-write"].into_iter().any(|level| {
                let prefix = format!("Sandbox ({level}) is incomplete on this machine; missing: ");
                line.strip_prefix(&prefix)
                    .and_then(|rest| rest.strip_suffix('.'))
                    .is_some_and(|list| guarantee_set(list) == documented_missing(mode, level))
            })
    };
    let mut kept: String = text
        .split_inclusive('\n')
        .filter(|line| !documented(line.trim_end_matches('\n')))
        .collect();
    if !text.ends_with('\n') && kept.ends_with('\n') {
        // The note was the last line: the newline before it goes too.
        kept.pop();
    }
    if kept.is_empty() && !text.is_empty() {
        // What the tool says of a command that printed nothing, had the note not been there.
        return "(no output)".to_owned();
    }
    kept
}
