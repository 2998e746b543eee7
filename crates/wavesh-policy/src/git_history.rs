//! RO-17: git's second copy of secrets. A file named like a secret that was ever
//! committed (or is in the index) stays in git's objects after it is deleted, ignored or
//! hidden by the sandbox, and `git show`, `git log -p`, `git diff`, `git grep REV` and
//! `git cat-file` print it from there. The repository's own index and history say which
//! such files it holds: read once per repository, with git, and kept while its refs and
//! index are unchanged.

use std::path::{Path, PathBuf};

use crate::GitContext;
use crate::git_guard::{RealFs, common_dir, find_repository};

/// At most this many names are kept: one is enough to ask.
const MAX_NAMES: usize = 16;

/// The paths, repository-relative, of files named like a secret in the index or in any
/// commit reachable from any ref of the repository holding `cwd` (empty outside one).
/// Only for a repository the guard judged safe: git reads its config to answer. Cached
/// against the stamps of `HEAD`, the index, `packed-refs`, the reflogs and every
/// directory under `refs/`, so an unchanged repository costs no process.
pub fn secret_files(cwd: &Path, context: &GitContext) -> Vec<String> {
    if *context != GitContext::Safe {
        return Vec::new();
    }
    let Ok(Some(git_dir)) = find_repository(cwd, &RealFs) else {
        return Vec::new();
    };
    let common = common_dir(&git_dir, &RealFs);
    let stamps = ref_stamps(&git_dir, &common);
    type Entry = (PathBuf, Vec<(PathBuf, Option<(u64, i128)>)>, Vec<String>);
    static CACHE: std::sync::Mutex<Vec<Entry>> = std::sync::Mutex::new(Vec::new());
    let mut cache = CACHE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, old, names)) = cache.iter().find(|(dir, _, _)| *dir == git_dir)
        && *old == stamps
    {
        return names.clone();
    }
    let names = scan(cwd);
    cache.retain(|(dir, _, _)| *dir != git_dir);
    if cache.len() >= 8 {
        cache.remove(0);
    }
    cache.push((git_dir, stamps, names.clone()));
    names
}

/// What changes when a commit, fetch, checkout, stash or `git add` happens.
fn ref_stamps(git_dir: &Path, common: &Path) -> Vec<(PathBuf, Option<(u64, i128)>)> {
    let mut paths = vec![
        git_dir.join("HEAD"),
        git_dir.join("index"),
        git_dir.join("logs/HEAD"),
        common.join("packed-refs"),
        common.join("FETCH_HEAD"),
    ];
    // Every directory under refs/ and logs/refs (a new ref is a new entry in one).
    for root in [common.join("refs"), common.join("logs/refs")] {
        let mut stack = vec![root];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            paths.push(dir);
            for entry in entries.flatten() {
                let path = entry.path();
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    stack.push(path);
                } else {
                    paths.push(path);
                }
            }
        }
    }
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let stamp = std::fs::metadata(&path).ok().map(|meta| {
                let mtime = meta
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos() as i128);
                (meta.len(), mtime)
            });
            (path, stamp)
        })
        .collect()
}

/// Lists the index and every path of every commit reachable from any ref, and keeps the
/// ones named like a secret. A git that cannot answer counts as holding one: the
/// commands that print contents then ask (fail closed).
fn scan(cwd: &Path) -> Vec<String> {
    let mut names = Vec::new();
    for args in [
        &["ls-files", "-z", "--cached"][..],
        &[
            "log",
            "--all",
            "--format=",
            "--name-only",
            "--no-renames",
            "-z",
            "--no-textconv",
            "--no-ext-diff",
        ][..],
    ] {
        let Some(out) = run_git(cwd, args) else {
            return vec!["(git could not list the repository's files)".to_owned()];
        };
        for path in out.split(|b| *b == 0 || *b == b'\n') {
            let path = String::from_utf8_lossy(path);
            let name = path.rsplit('/').next().unwrap_or(&path);
            if !name.is_empty()
                && crate::secrets::is_secret_name(name)
                && !names.iter().any(|n| *n == path)
            {
                names.push(path.into_owned());
                if names.len() >= MAX_NAMES {
                    return names;
                }
            }
        }
    }
    names
}

fn run_git(cwd: &Path, args: &[&str]) -> Option<Vec<u8>> {
    let null = if cfg!(windows) { "NUL" } else { "/dev/null" };
    let output = std::process::Command::new("git")
        .current_dir(cwd)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", null)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(std::process::Stdio::null())
        .arg("--no-pager")
        .args(args)
        .output()
        .ok()?;
    // An empty repository has no commits: `git log --all` then says so and fails.
    if output.status.success() || args[0] == "log" {
        Some(output.stdout)
    } else {
        None
    }
}

/// The subcommand of a `git ...` argv (without `git`), global options skipped, with the
/// words after it: `stash show` and the other two-word forms as one.
pub fn subcommand(args: &[wavesh_parse::Word]) -> Option<(String, Vec<&str>)> {
    let mut i = 0;
    while i < args.len() && args[i].value.starts_with('-') {
        i += if args[i].value == "-C" { 2 } else { 1 };
    }
    let first = args.get(i)?.value.as_str();
    let second = args.get(i + 1).map(|w| w.value.as_str());
    let (name, skip) = match (first, second) {
        ("stash", Some(two)) => (format!("stash {two}"), 2),
        _ => (first.to_owned(), 1),
    };
    Some((
        name,
        args[i + skip..].iter().map(|w| w.value.as_str()).collect(),
    ))
}

/// Whether `git SUBCOMMAND ARGS` prints file contents from git's objects (a patch, a
/// blob, matching lines of a tree), as opposed to names, stats or commit metadata.
/// `blame` and `annotate` print the file their operand names, which the path policy
/// judges by name.
pub fn prints_contents(subcommand: &str, args: &[&str]) -> bool {
    const PATCH: &[&str] = &[
        "-p",
        "-u",
        "--patch",
        "--unified",
        "--patch-with-stat",
        "--patch-with-raw",
        "--word-diff",
        "--color-words",
        "--cc",
        "-c",
        "--full-diff",
    ];
    const NO_PATCH: &[&str] = &[
        "-s",
        "--no-patch",
        "--stat",
        "--numstat",
        "--shortstat",
        "--name-only",
        "--name-status",
        "--raw",
        "--summary",
        "--dirstat",
        "--compact-summary",
        "--quiet",
    ];
    let has = |flag: &str| {
        args.iter().any(|a| {
            *a == flag
                || (flag.starts_with("--")
                    && a.strip_prefix(flag).is_some_and(|r| r.starts_with('=')))
        })
    };
    let patch = PATCH.iter().any(|f| has(f))
        || args.iter().any(|a| {
            a.starts_with("-U")
                || a.starts_with("-L")
                // A cluster of short options with a patch letter in it.
                || (a.len() > 2 && !a.starts_with("--") && a.starts_with('-')
                    && a[1..].chars().all(|c| c.is_ascii_alphanumeric())
                    && a[1..].contains(['p', 'u']))
        });
    let no_patch = NO_PATCH.iter().any(|f| has(f));
    match subcommand {
        "log" | "whatchanged" | "reflog" | "diff-tree" | "diff-files" | "diff-index" => patch,
        "show" | "diff" | "stash show" | "range-diff" => patch || !no_patch,
        "grep" => true,
        "cat-file" => {
            !(has("-t")
                || has("-s")
                || has("-e")
                || args.iter().any(|a| a.starts_with("--batch-check")))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::prints_contents;

    #[test]
    fn ro_17_which_git_commands_print_contents() {
        for (sub, args) in [
            ("log", &["-p"][..]),
            ("log", &["--patch", "-3"]),
            ("log", &["-U5"]),
            ("log", &["-L1,5:src/a.rs"]),
            ("log", &["--word-diff=color"]),
            ("show", &[]),
            ("show", &["HEAD~2"]),
            ("show", &["--stat", "-p"]),
            ("diff", &["HEAD~1", "HEAD"]),
            (
                "diff",
                &["4b825dc642cb6eb9a060e54bf8d69288fbee4904", "HEAD"],
            ),
            ("diff-tree", &["-p", "HEAD"]),
            ("stash show", &[]),
            ("grep", &["-e", ".", "HEAD"]),
            ("cat-file", &["-p", "HEAD:.env"]),
            ("cat-file", &["blob", "abc123"]),
            ("cat-file", &["--batch"]),
            ("reflog", &["-p"]),
        ] {
            assert!(prints_contents(sub, args), "git {sub} {args:?}");
        }
        for (sub, args) in [
            ("log", &["--oneline"][..]),
            ("log", &["--stat"]),
            ("log", &["--name-only", "-5"]),
            ("show", &["--stat"]),
            ("show", &["-s", "--format=%H"]),
            ("show", &["--name-only", "HEAD"]),
            ("diff", &["--stat"]),
            ("diff", &["--name-status", "main"]),
            ("diff-tree", &["-r", "HEAD"]),
            ("cat-file", &["-t", "HEAD"]),
            ("cat-file", &["--batch-check"]),
            ("status", &[]),
            ("blame", &["src/a.rs"]),
        ] {
            assert!(!prints_contents(sub, args), "git {sub} {args:?}");
        }
    }
}
