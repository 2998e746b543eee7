//! Search inside wavesh commands (SEARCH): a gitignore-aware grep with GNU's flags and
//! output. Arguments it does not support run the system grep with the same argv
//! (SEARCH-5), so shadowing never fails a command that worked before.

mod charset;
mod collate;
mod color;
mod find;
pub(crate) mod grep;
pub mod pattern;
mod rg;

pub use find::find_main;
pub use grep::{Options, Unsupported, parse, run};

/// Set to any value, unsupported arguments (grep, find) are an error instead of a fallback: how the
/// compatibility tests prove that wavesh's own search produced the output.
pub const STRICT_ENV: &str = "WAVESH_GREP_STRICT";

/// `grep`, `rg` or `find` as a program, from raw arguments. An argument that is not UTF-8
/// goes to the system command untouched (SEARCH-5). Returns the exit code.
///
/// Like the GNU tools, a write to a closed pipe ends the process by SIGPIPE, and a panic
/// (a bug) prints one line naming the tool, never a Rust backtrace, and exits 2.
pub fn search_main(tool: &str, args: &[std::ffi::OsString]) -> i32 {
    default_sigpipe();
    let name = match tool {
        "rg" => "rg",
        "find" => "find",
        _ => "grep",
    };
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        report_internal_error(name, &message);
    }));
    std::panic::catch_unwind(|| dispatch(tool, args)).unwrap_or(2)
}

/// Restores the default action of SIGPIPE, which the Rust runtime ignores: `grep x | head`
/// then ends grep at its next write, as it ends GNU grep.
fn default_sigpipe() {
    #[cfg(unix)]
    #[expect(unsafe_code, reason = "signal(2) has no safe wrapper in libc")]
    // SAFETY: setting a signal's disposition to SIG_DFL installs no handler; this runs
    // before the search starts any thread.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[expect(clippy::print_stderr, reason = "the one line a bug prints")]
fn report_internal_error(tool: &str, message: &str) {
    eprintln!("{tool}: internal error: {message}");
}

fn dispatch(tool: &str, args: &[std::ffi::OsString]) -> i32 {
    let utf8: Option<Vec<String>> = args.iter().map(|a| a.to_str().map(str::to_owned)).collect();
    match (tool, utf8) {
        ("rg", Some(args)) => rg::rg_main(&args),
        ("find", _) => find_main(args),
        ("rg", None) => {
            rg::rg_error("arguments that are not UTF-8 are not supported");
            2
        }
        (_, Some(args)) => grep_main(&args),
        (_, None) => system_grep(args),
    }
}

/// `grep` as a program: our search, or the system grep for what we do not support.
/// Returns the exit code.
pub fn grep_main(args: &[String]) -> i32 {
    // A locale the C library cannot decode here (a character set other than UTF-8 and
    // C's bytes, on a system without it): the system grep knows it, wavesh does not.
    // In another character set, an argument that is not ASCII is in that set, and is
    // not read as such here.
    let foreign = match grep::locale() {
        grep::Locale::Other(name) if grep::charset().is_some() => args
            .iter()
            .any(|a| !a.is_ascii())
            .then(|| format!("arguments that are not ASCII in the locale {name}")),
        grep::Locale::Other(name) if !grep::utf8_locale() => Some(format!("the locale {name}")),
        grep::Locale::Other(_) | grep::Locale::Utf8 | grep::Locale::C => None,
    };
    match (parse(args), foreign) {
        (Ok(_), Some(what)) if std::env::var_os(STRICT_ENV).is_some() => {
            grep_error(&format!("not supported by wavesh's grep: {what}"));
            2
        }
        (Ok(_), Some(_)) => system_grep(args),
        (Ok(options), None) => run(&options),
        (Err(Unsupported(what)), _) if std::env::var_os(STRICT_ENV).is_some() => {
            grep_error(&format!("not supported by wavesh's grep: {what}"));
            2
        }
        (Err(Unsupported(_)), _) => system_grep(args),
    }
}

/// Runs the system grep with `args` (SEARCH-5).
pub fn system_grep<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> i32 {
    system_command("grep", args)
}

/// The system `program`: the first on PATH that is not this executable (a link to
/// wavesh named `grep` may come first on PATH, and must not hand over to itself).
pub(crate) fn system_program(program: &str) -> Option<std::path::PathBuf> {
    let this = std::env::current_exe().and_then(std::fs::canonicalize).ok();
    let path = std::env::var_os("PATH")?;
    let names: Vec<String> = if cfg!(windows) {
        vec![format!("{program}.exe"), program.to_owned()]
    } else {
        vec![program.to_owned()]
    };
    std::env::split_paths(&path)
        .flat_map(|dir| names.iter().map(move |n| dir.join(n)))
        .find(|candidate| {
            candidate.is_file()
                && std::fs::canonicalize(candidate).ok().as_ref() != this.as_ref()
                && is_executable(candidate)
        })
}

#[cfg(unix)]
fn is_executable(path: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(_: &std::path::Path) -> bool {
    true
}

/// Runs the system `program` with `args`, in place of this process where it can.
pub(crate) fn system_command<S: AsRef<std::ffi::OsStr>>(program: &str, args: &[S]) -> i32 {
    let Some(path) = system_program(program) else {
        grep_error(&format!(
            "cannot run the system {program}: not found on PATH"
        ));
        return 2;
    };
    let mut command = std::process::Command::new(path);
    command.args(args);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        command.arg0(program);
        // Replaces this process: same stdin, stdout, stderr and exit code.
        let error = command.exec();
        grep_error(&format!("cannot run the system {program}: {error}"));
        2
    }
    #[cfg(not(unix))]
    {
        match command.status() {
            Ok(status) => status.code().unwrap_or(2),
            Err(error) => {
                grep_error(&format!("cannot run the system {program}: {error}"));
                2
            }
        }
    }
}

#[expect(clippy::print_stderr, reason = "grep's own error output")]
fn grep_error(message: &str) {
    eprintln!("grep: {message}");
}
