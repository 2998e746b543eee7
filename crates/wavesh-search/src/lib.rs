//! Search inside wavesh commands (SEARCH): a gitignore-aware grep with GNU's flags and
//! output. Arguments it does not support run the system grep with the same argv
//! (SEARCH-5), so shadowing never fails a command that worked before.

mod grep;
pub mod pattern;
mod rg;

pub use grep::{Options, Unsupported, parse, run};

/// Set to any value, unsupported arguments are an error instead of a fallback: how the
/// compatibility tests prove that wavesh's own search produced the output.
pub const STRICT_ENV: &str = "WAVESH_GREP_STRICT";

/// `grep` or `rg` as a program, from raw arguments. An argument that is not UTF-8
/// goes to the system command untouched (SEARCH-5). Returns the exit code.
pub fn search_main(tool: &str, args: &[std::ffi::OsString]) -> i32 {
    let utf8: Option<Vec<String>> = args.iter().map(|a| a.to_str().map(str::to_owned)).collect();
    match (tool, utf8) {
        ("rg", Some(args)) => rg::rg_main(&args),
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
    let mut command = std::process::Command::new("grep");
    command.args(args);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // Replaces this process: same stdin, stdout, stderr and exit code.
        let error = command.exec();
        grep_error(&format!("cannot run the system grep: {error}"));
        2
    }
    #[cfg(not(unix))]
    {
        match command.status() {
            Ok(status) => status.code().unwrap_or(2),
            Err(error) => {
                grep_error(&format!("cannot run the system grep: {error}"));
                2
            }
        }
    }
}

#[expect(clippy::print_stderr, reason = "grep's own error output")]
fn grep_error(message: &str) {
    eprintln!("grep: {message}");
}
