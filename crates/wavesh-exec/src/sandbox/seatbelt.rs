//! macOS: the Seatbelt profile of a [`Plan`], for `sandbox-exec -p` (SBX-5).
//!
//! Made from the same plan as the Linux rules: reads everywhere but the secrets (paths
//! and file-name patterns, which Seatbelt matches by regex anywhere), writes only to the
//! plan's files and directories minus its read-only paths, no network, signals only to
//! the command's own processes. Seatbelt can deny inside an allowed tree, so nothing is
//! built "around" here. The direct spawner starts the shell as `sandbox-exec -p PROFILE
//! SHELL ...` on macOS.

use std::fmt::Write as _;
use std::path::Path;

use super::Plan;

/// Where macOS keeps `sandbox-exec`.
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// The profile text of `plan`.
pub fn profile(plan: &Plan) -> String {
    let mut out = String::from("(version 1)\n(deny default)\n");
    out.push_str(
        "(allow process-exec)\n(allow process-fork)\n(allow signal (target same-sandbox))\n\
         (allow sysctl-read)\n(allow mach-lookup)\n(allow ipc-posix-shm)\n(allow ipc-posix-sem)\n\
         (allow iokit-open)\n(allow file-ioctl (literal \"/dev/null\"))\n",
    );
    out.push_str("(allow file-read*)\n");
    let mut secrets: Vec<String> = plan
        .secret_paths
        .iter()
        .map(|path| format!("(subpath {})", quote_path(path)))
        .collect();
    secrets.extend(
        plan.secret_names
            .iter()
            .filter(|name| !name.starts_with('!'))
            .map(|name| format!("(regex #\"/{}$\")", name_regex(name))),
    );
    if !secrets.is_empty() {
        let _ = writeln!(out, "(deny file-read*\n  {})", secrets.join("\n  "));
        // Exceptions of the name patterns (`!.env.example`) are readable again.
        let exceptions: Vec<String> = plan
            .secret_names
            .iter()
            .filter_map(|name| name.strip_prefix('!'))
            .map(|name| format!("(regex #\"/{}$\")", name_regex(name)))
            .collect();
        if !exceptions.is_empty() {
            let _ = writeln!(out, "(allow file-read*\n  {})", exceptions.join("\n  "));
        }
    }
    let mut writable: Vec<String> = plan
        .writable_files
        .iter()
        .map(|path| format!("(literal {})", quote_path(path)))
        .collect();
    writable.extend(
        plan.writable_dirs
            .iter()
            .map(|path| format!("(subpath {})", quote_path(path))),
    );
    let _ = writeln!(out, "(allow file-write*\n  {})", writable.join("\n  "));
    if !plan.read_only.is_empty() {
        let read_only: Vec<String> = plan
            .read_only
            .iter()
            .map(|path| format!("(subpath {})", quote_path(path)))
            .collect();
        let _ = writeln!(out, "(deny file-write*\n  {})", read_only.join("\n  "));
    }
    if plan.network {
        out.push_str("(allow network-outbound (remote tcp))\n(allow system-socket)\n");
    }
    out
}

/// A path as a Seatbelt string literal.
fn quote_path(path: &Path) -> String {
    let text = path.to_string_lossy();
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// A file-name glob as a regex matching one path component.
fn name_regex(glob: &str) -> String {
    let mut out = String::new();
    for c in glob.chars() {
        match c {
            '*' => out.push_str("[^/]*"),
            // A bracket holds any metacharacter literally, in every regex flavour, with no
            // backslash for the profile's string syntax to reinterpret.
            '.' | '+' | '(' | ')' | '{' | '}' | '$' | '|' | '?' | '[' => {
                out.push('[');
                out.push(c);
                out.push(']');
            }
            ']' => out.push_str("[]]"),
            '^' | '\\' | '"' => out.push_str("[^/]"),
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::Level;

    #[test]
    fn sbx_5_seatbelt_profile_from_the_plan() {
        let plan = Plan {
            level: Level::WorkspaceWrite,
            writable_dirs: vec!["/private/tmp/w".into(), "/Users/u/proj".into()],
            readable_dirs: Vec::new(),
            sessions_by_mount: None,
            writable_files: vec!["/dev/null".into()],
            read_only: vec!["/Users/u/proj/.git/hooks".into()],
            secret_paths: vec!["/Users/u/.ssh".into()],
            secret_names: vec![".env".into(), "*.pem".into(), "!.env.example".into()],
            scan_dirs: Vec::new(),
            scan_trees: Vec::new(),
            network: false,
            found_secrets: Vec::new(),
            session_net: None,
            views: Default::default(),
        };
        insta::assert_snapshot!(profile(&plan), @r#"
        (version 1)
        (deny default)
        (allow process-exec)
        (allow process-fork)
        (allow signal (target same-sandbox))
        (allow sysctl-read)
        (allow mach-lookup)
        (allow ipc-posix-shm)
        (allow ipc-posix-sem)
        (allow iokit-open)
        (allow file-ioctl (literal "/dev/null"))
        (allow file-read*)
        (deny file-read*
          (subpath "/Users/u/.ssh")
          (regex #"/[.]env$")
          (regex #"/[^/]*[.]pem$"))
        (allow file-read*
          (regex #"/[.]env[.]example$"))
        (allow file-write*
          (literal "/dev/null")
          (subpath "/private/tmp/w")
          (subpath "/Users/u/proj"))
        (deny file-write*
          (subpath "/Users/u/proj/.git/hooks"))
        "#);
    }

    #[test]
    fn seatbelt_quotes_odd_paths() {
        assert_eq!(quote_path(Path::new("/a \"b\"\\c")), r#""/a \"b\"\\c""#);
        assert_eq!(name_regex("id_rsa*"), "id_rsa[^/]*");
    }
}
