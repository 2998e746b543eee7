//! `wavesh-test-as`: runs a program as another user, or with new user namespaces
//! refused, or both; `scripts/test` names it as the test runner of the suites it runs
//! again in those modes (`CARGO_TARGET_<triple>_RUNNER`, which nextest honours).
//!
//! ```text
//! wavesh-test-as [--user NAME] [--deny-userns] [--] PROGRAM [ARGS...]
//! ```
//!
//! - `--user NAME`: the supplementary groups, gid and uid become NAME's (from the user
//!   database), HOME, USER and LOGNAME follow, and every capability goes with the uid.
//!   Needs root.
//! - `--deny-userns`: a seccomp filter makes `unshare` and `clone` with
//!   `CLONE_NEWUSER` fail with EPERM, and `clone3` (whose flags seccomp cannot read) fail
//!   with ENOSYS, so that the C library falls back to `clone`. That is what Ubuntu 24.04's
//!   AppArmor policy leaves an unprivileged program: no user namespace of its own.
//!
//! Any mistake (an unknown option, a user that does not exist, a filter that cannot be
//! installed) is an error naming it, exit 125, and the program is not run.
#![cfg_attr(not(target_os = "linux"), allow(unused))]

use std::ffi::OsString;
use std::process::ExitCode;

#[allow(clippy::print_stderr, reason = "the runner's own errors")]
fn main() -> ExitCode {
    match run(std::env::args_os().skip(1).collect()) {
        Ok(never) => match never {},
        Err(message) => {
            eprintln!("wavesh-test-as: {message}");
            ExitCode::from(125)
        }
    }
}

enum Never {}

struct Options {
    user: Option<String>,
    deny_userns: bool,
    program: Vec<OsString>,
}

fn parse(args: Vec<OsString>) -> Result<Options, String> {
    let mut options = Options {
        user: None,
        deny_userns: false,
        program: Vec::new(),
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--user") => {
                let name = args.next().ok_or("--user needs a user name")?;
                options.user = Some(
                    name.into_string()
                        .map_err(|n| format!("--user {n:?}: not UTF-8"))?,
                );
            }
            Some("--deny-userns") => options.deny_userns = true,
            Some("--") => {
                options.program.extend(args.by_ref());
            }
            Some(other) if other.starts_with("--") => {
                return Err(format!(
                    "unknown option {other:?} (expected --user NAME, --deny-userns, --)"
                ));
            }
            _ => {
                options.program.push(arg);
                options.program.extend(args.by_ref());
            }
        }
    }
    if options.program.is_empty() {
        return Err("no program to run (wavesh-test-as [--user NAME] [--deny-userns] [--] PROGRAM [ARGS...])".into());
    }
    Ok(options)
}

#[cfg(not(target_os = "linux"))]
fn run(_args: Vec<OsString>) -> Result<Never, String> {
    Err("runs on Linux only".into())
}

#[cfg(target_os = "linux")]
fn run(args: Vec<OsString>) -> Result<Never, String> {
    use std::os::unix::process::CommandExt as _;
    let options = parse(args)?;
    let mut command = std::process::Command::new(&options.program[0]);
    command.args(&options.program[1..]);
    // The runner is named by CARGO_TARGET_<triple>_RUNNER: a `cargo run` inside a test
    // must not go through it again.
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if name.starts_with("CARGO_TARGET_") && name.ends_with("_RUNNER") {
            command.env_remove(&*name);
        }
    }
    if let Some(name) = &options.user {
        let user = linux::lookup(name)?;
        linux::become_user(&user)?;
        command
            .env("HOME", &user.home)
            .env("USER", name)
            .env("LOGNAME", name);
    }
    if options.deny_userns {
        linux::deny_user_namespaces()?;
    }
    let error = command.exec();
    Err(format!("cannot run {:?}: {error}", options.program[0]))
}

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::BTreeMap;
    use std::ffi::{CStr, CString, OsString};
    use std::os::unix::ffi::OsStringExt as _;

    use seccompiler::{
        SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
        SeccompRule, TargetArch,
    };

    pub struct User {
        uid: libc::uid_t,
        gid: libc::gid_t,
        pub home: OsString,
        name: CString,
    }

    /// NAME's entry in the user database.
    #[expect(unsafe_code, reason = "getpwnam_r has no safe wrapper in libc")]
    pub fn lookup(name: &str) -> Result<User, String> {
        let c_name = CString::new(name).map_err(|_| format!("--user {name:?}: holds a NUL"))?;
        let mut buffer = vec![0 as libc::c_char; 16 * 1024];
        // SAFETY: an all-zero passwd is a valid value of a plain C struct.
        let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: every pointer is valid for the call, the buffer's length is its own.
        let code = unsafe {
            libc::getpwnam_r(
                c_name.as_ptr(),
                &mut entry,
                buffer.as_mut_ptr(),
                buffer.len(),
                &mut found,
            )
        };
        if code != 0 {
            return Err(format!(
                "--user {name}: cannot read the user database: {}",
                std::io::Error::from_raw_os_error(code)
            ));
        }
        if found.is_null() {
            return Err(format!("--user {name}: no such user"));
        }
        // SAFETY: on success pw_dir points into `buffer`, a NUL-terminated string.
        let home = unsafe { CStr::from_ptr(entry.pw_dir) }.to_bytes().to_vec();
        Ok(User {
            uid: entry.pw_uid,
            gid: entry.pw_gid,
            home: OsString::from_vec(home),
            name: c_name,
        })
    }

    /// Takes on `user`'s groups, gid and uid, for good (the saved ids too), which drops
    /// every capability.
    #[expect(
        unsafe_code,
        reason = "initgroups, setresgid, setresuid: no safe wrappers"
    )]
    pub fn become_user(user: &User) -> Result<(), String> {
        let os = |what: &str| format!("{what}: {}", std::io::Error::last_os_error());
        // SAFETY: plain system calls with valid arguments; the name is NUL-terminated.
        unsafe {
            if libc::initgroups(user.name.as_ptr(), user.gid) != 0 {
                return Err(os("initgroups (is this root?)"));
            }
            if libc::setresgid(user.gid, user.gid, user.gid) != 0 {
                return Err(os("setresgid"));
            }
            if libc::setresuid(user.uid, user.uid, user.uid) != 0 {
                return Err(os("setresuid"));
            }
        }
        Ok(())
    }

    /// Installs the filter that refuses new user namespaces (see the binary's doc).
    pub fn deny_user_namespaces() -> Result<(), String> {
        let arch = match std::env::consts::ARCH {
            "x86_64" => TargetArch::x86_64,
            "aarch64" => TargetArch::aarch64,
            "riscv64" => TargetArch::riscv64,
            other => return Err(format!("--deny-userns: no seccomp filter for {other}")),
        };
        let seccomp = |e: seccompiler::BackendError| format!("--deny-userns: {e}");
        let new_user = |arg: u8| -> Result<SeccompRule, String> {
            SeccompRule::new(vec![
                SeccompCondition::new(
                    arg,
                    SeccompCmpArgLen::Qword,
                    SeccompCmpOp::MaskedEq(libc::CLONE_NEWUSER as u64),
                    libc::CLONE_NEWUSER as u64,
                )
                .map_err(seccomp)?,
            ])
            .map_err(seccomp)
        };
        // clone's flags are its first argument on every architecture listed above.
        let refused: BTreeMap<i64, Vec<SeccompRule>> = [
            (libc::SYS_unshare, vec![new_user(0)?]),
            (libc::SYS_clone, vec![new_user(0)?]),
        ]
        .into_iter()
        .collect();
        let no_clone3: BTreeMap<i64, Vec<SeccompRule>> =
            [(libc::SYS_clone3, Vec::new())].into_iter().collect();
        for (rules, errno) in [(refused, libc::EPERM), (no_clone3, libc::ENOSYS)] {
            let filter = SeccompFilter::new(
                rules,
                SeccompAction::Allow,
                SeccompAction::Errno(errno as u32),
                arch,
            )
            .map_err(seccomp)?;
            let program: seccompiler::BpfProgram = filter.try_into().map_err(seccomp)?;
            seccompiler::apply_filter(&program)
                .map_err(|e| format!("--deny-userns: cannot install the filter: {e}"))?;
        }
        Ok(())
    }
}
