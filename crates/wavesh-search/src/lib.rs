//! Search inside wavesh commands (SEARCH): a gitignore-aware grep with GNU's flags and
//! output. Arguments it does not support run the system grep with the same argv
//! (SEARCH-5), so shadowing never fails a command that worked before.

mod find;
mod grep;
pub mod pattern;
mod rg;

pub use find::find_main;
pub use grep::{Options, Unsupported, parse, run};

/// Set to any value, unsupported arguments (grep, find) are an error instead of a fallback: how the
/// compatibility tests prove that wavesh's own search produced the output.
pub const STRICT_ENV: &str = "WAVESH_GREP_STRICT";

/// `grep`, `rg` or `find` as a program, from raw arguments. An argument that is not UTF-8
/// goes to the system command untouched (SEARCH-5). Returns the exit code.
pub fn search_main(tool: &str, args: &[std::ffi::OsString]) -> i32 {
    let utf8: Option<Vec<String>> = args.iter().map(|a| a.to_str().map(str::to_owned)).collect();
    match (tool, utf8) {
        ("rg", Some(args)) => rg::rg_main(&args),
        ("find", Some(args)) => find_main(&args),
        ("find", None) => system_command("find", args),
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
    match parse(args) {
        Ok(options) => run(&options),
        Err(Unsupported(what)) if std::env::var_os(STRICT_ENV).is_some() => {
            grep_error(&format!("not supported by wavesh's grep: {what}"));
            2
        }
        Err(Unsupported(_)) => system_grep(args),
    }
}

/// Runs the system grep with `args` (SEARCH-5).
pub fn system_grep<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> i32 {
    system_command("grep", args)
}

/// Runs the system `program` with `args`, in place of this process where it can.
pub(crate) fn system_command<S: AsRef<std::ffi::OsStr>>(program: &str, args: &[S]) -> i32 {
    let mut command = std::process::Command::new(program);
    command.args(args);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
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
