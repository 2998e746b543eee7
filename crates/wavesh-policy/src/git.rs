//! git and gh: read-only subcommands and the options that would make them write or run
//! programs (RO-4, RO-5).

use crate::Reason;
use wavesh_parse::Word;

/// Global options that change nothing (no pager runs: stdout is a file).
const SAFE_GLOBALS: &[&str] = &["--no-pager", "-P", "--paginate", "-p"];

/// Read-only subcommands; the longest match decides.
pub const READ_ONLY: &[&str] = &[
    "status",
    "log",
    "show",
    "diff",
    "branch",
    "tag",
    "rev-parse",
    "rev-list",
    "ls-files",
    "ls-tree",
    "cat-file",
    "blame",
    "annotate",
    "shortlog",
    "describe",
    "reflog",
    "remote",
    "grep",
    "merge-base",
    "name-rev",
    "for-each-ref",
    "show-ref",
    "count-objects",
    "whatchanged",
    "cherry",
    "range-diff",
    "version",
    "stash list",
    "stash show",
    "worktree list",
    "config --get",
    "config --get-all",
    "config --list",
    "config -l",
    "config --get-regexp",
    // `git config KEY` reads one key; any other form is judged by `is_write_form`.
    "config",
    "config get",
    "config list",
    "var",
    "check-ignore",
    "check-attr",
    "diff-tree",
    "diff-files",
    "diff-index",
    "help",
];

/// Options that write a file, run a program or open a pager on a file. Any long option
/// that is a prefix of one of these is refused too: git accepts unique abbreviations.
const DANGEROUS: &[&str] = &[
    "--output",
    "--output-directory",
    "--ext-diff",
    "--textconv",
    "--open-files-in-pager",
    "--exec",
    "--upload-pack",
    "--receive-pack",
    "--config",
    "--show-signature",
    "--gpg-sign",
    "--edit",
    "--run",
    "--tool",
    "--extcmd",
    "--contents",
    "--filters",
];

/// Short options that write or run something, per subcommand.
fn dangerous_short(subcommand: &str, flag: char) -> bool {
    match subcommand {
        "diff" | "log" | "show" | "format-patch" | "whatchanged" => flag == 'o',
        "grep" => flag == 'O',
        _ => false,
    }
}

/// Checks a `git ...` argv (without `git`). `dir_ok` judges the directory of `-C DIR`
/// (it must be in the repository already judged safe). `Ok` holds the paths git will
/// open for the path policy: `REV:path` blobs, operands, option values. `Err` names the
/// word.
pub fn check_git(
    args: &[Word],
    dir_ok: &dyn Fn(&str) -> Result<(), Reason>,
) -> Result<Vec<String>, Reason> {
    let mut i = 0;
    while i < args.len() && args[i].value.starts_with('-') {
        let global = args[i].value.as_str();
        if global == "-C" {
            let Some(dir) = args.get(i + 1) else {
                return Err("`git -C` needs a directory".into());
            };
            dir_ok(&dir.value)?;
            i += 2;
            continue;
        }
        if !SAFE_GLOBALS.contains(&global) {
            return Err(crate::refuse!(
                "the git global option `{global}` can change what git runs or where it writes"
            ));
        }
        i += 1;
    }
    let rest = &args[i..];
    let Some(first) = rest.first() else {
        return Err("git without a subcommand".into());
    };
    let two = rest.get(1).map(|w| format!("{} {}", first.value, w.value));
    let subcommand = match two.as_deref().filter(|two| READ_ONLY.contains(two)) {
        Some(two) => two.to_owned(),
        None if READ_ONLY.contains(&first.value.as_str())
            && !is_write_form(&first.value, &rest[1..]) =>
        {
            first.value.clone()
        }
        None => {
            return Err(crate::refuse!(
                "`git {}` is not a read-only git subcommand",
                first.value
            ));
        }
    };
    let words = subcommand.split(' ').count();
    let sub_args = &rest[words..];
    for word in sub_args {
        option_check(&subcommand, word)?;
    }
    callbacks(&subcommand, sub_args)?;
    Ok(git_paths(sub_args))
}

/// The paths a read-only git subcommand may open: `REV:path` (the blob's path),
/// everything after `--`, option values and operands.
fn git_paths(args: &[Word]) -> Vec<String> {
    let mut out = Vec::new();
    let mut after_dashes = false;
    for word in args {
        let value = word.value.as_str();
        if value == "--" {
            after_dashes = true;
            continue;
        }
        if after_dashes {
            out.push(value.to_owned());
            continue;
        }
        if let Some((_, v)) = value.split_once('=').filter(|_| value.starts_with("--")) {
            out.push(v.to_owned());
            continue;
        }
        if value.starts_with('-') {
            // A value attached to a short option (`-S../x`, `-O/path`) may name a file
            // git opens: judged as a path too.
            if !value.starts_with("--") && value.len() > 2 {
                out.push(value[2..].to_owned());
            }
            continue;
        }
        if let Some((_, path)) = value.split_once(':') {
            // `REV:path`, `:path`, `:0:path`: git reads that blob.
            let path = path.trim_start_matches(|c: char| c.is_ascii_digit() || c == ':');
            out.push(path.to_owned());
        }
        out.push(value.to_owned());
    }
    out
}

/// `git branch` and `git tag` only as listings. Options are checked exactly: git takes
/// any unique prefix of a long option (`--del` for `--delete`, `--set-upstream-t`),
/// so a long option not written in full is refused, and so is every short letter not
/// known to list (`-rd`) (RO-5).
fn list_refs(subcommand: &str, args: &[Word]) -> Result<(), Reason> {
    const BRANCH_SHORT: &str = "arlvqi";
    const TAG_SHORT: &str = "li";
    const LONG: &[&str] = &[
        "--list",
        "--all",
        "--remotes",
        "--verbose",
        "--quiet",
        "--show-current",
        "--contains",
        "--no-contains",
        "--merged",
        "--no-merged",
        "--points-at",
        "--sort",
        "--format",
        "--color",
        "--no-color",
        "--column",
        "--no-column",
        "--abbrev",
        "--no-abbrev",
        "--ignore-case",
        "--omit-empty",
    ];
    // Options whose value is the next word when not attached.
    const WITH_VALUE: &[&str] = &["--points-at", "--sort", "--format"];
    let short = if subcommand == "branch" {
        BRANCH_SHORT
    } else {
        TAG_SHORT
    };
    let mut listing = false;
    let mut operands = 0;
    let mut i = 0;
    while i < args.len() {
        let value = args[i].value.as_str();
        i += 1;
        if value == "--" {
            operands += args.len() - i;
            break;
        }
        if let Some(long) = value.strip_prefix("--") {
            let name = format!("--{}", long.split('=').next().unwrap_or(long));
            if !LONG.contains(&name.as_str()) {
                return Err(crate::refuse!(
                    "`git {subcommand} {value}` is not a listing option (git takes abbreviations, so only exact names pass)"
                ));
            }
            if subcommand == "tag"
                && matches!(
                    name.as_str(),
                    "--all" | "--remotes" | "--verbose" | "--show-current"
                )
            {
                return Err(crate::refuse!("`git tag {value}` is not a listing option"));
            }
            // Only these put git in list mode with operands (git's own rule: `--sort`,
            // `--format`, `-i` and the like leave `NAME` a ref to create).
            listing |= matches!(
                name.as_str(),
                "--list"
                    | "--contains"
                    | "--no-contains"
                    | "--merged"
                    | "--no-merged"
                    | "--points-at"
            );
            if WITH_VALUE.contains(&name.as_str()) && !long.contains('=') {
                i += 1;
            }
            continue;
        }
        if let Some(cluster) = value.strip_prefix('-') {
            if subcommand == "tag"
                && let Some(count) = cluster.strip_prefix('n')
                && count.chars().all(|c| c.is_ascii_digit())
            {
                listing = true;
                continue;
            }
            if cluster.is_empty() {
                return Err(crate::refuse!(
                    "`git {subcommand} -` is not a listing option"
                ));
            }
            if let Some(c) = cluster.chars().find(|c| !short.contains(*c)) {
                return Err(crate::refuse!(
                    "`git {subcommand} -{c}` (in `{value}`) changes refs or is not a listing option"
                ));
            }
            listing |= cluster.contains('l');
            continue;
        }
        operands += 1;
    }
    if operands > 0 && !listing {
        return Err(crate::refuse!(
            "`git {subcommand} NAME` without --list creates a {subcommand}"
        ));
    }
    Ok(())
}

/// Options of `git config KEY` that only choose where and how the key is read.
const CONFIG_READ_OPTIONS: &[&str] = &[
    "--global",
    "--system",
    "--local",
    "--worktree",
    "--show-origin",
    "--show-scope",
    "--includes",
    "--no-includes",
    "--null",
    "-z",
    "--bool",
    "--int",
    "--bool-or-int",
    "--path",
    "--expiry-date",
];

/// `git stash` alone stashes; `git config x y` sets; `git remote add` adds.
fn is_write_form(subcommand: &str, args: &[Word]) -> bool {
    match subcommand {
        // Read: exactly one key, and only options that choose the scope or the format
        // (`--type=…` too). Two operands set it; `--unset`, `--add`, `--edit` (an
        // editor), `--file`, `--blob` and the `set`/`unset`/`edit`/... forms are refused.
        "config" => {
            let (options, operands): (Vec<&Word>, Vec<&Word>) =
                args.iter().partition(|w| w.value.starts_with('-'));
            let options_read = options.iter().all(|w| {
                CONFIG_READ_OPTIONS.contains(&w.value.as_str()) || w.value.starts_with("--type=")
            });
            let verbs = [
                "set",
                "unset",
                "edit",
                "rename-section",
                "remove-section",
                "get",
                "list",
            ];
            !(options_read && operands.len() == 1 && !verbs.contains(&operands[0].value.as_str()))
        }
        "remote" => args
            .iter()
            .find(|w| !w.value.starts_with('-'))
            .is_some_and(|w| w.value != "show" && w.value != "get-url"),
        _ => false,
    }
}

/// Options that are exact names of their own in these subcommands, though a prefix of
/// a dangerous one: git takes an exact match before an abbreviation. Elsewhere the same
/// word abbreviates the dangerous option (`git cat-file --text` is `--textconv`).
const EXACT: &[(&str, &[&str])] = &[(
    "text",
    &[
        "diff",
        "log",
        "show",
        "whatchanged",
        "diff-tree",
        "diff-files",
        "diff-index",
        "range-diff",
    ],
)];

fn option_check(subcommand: &str, word: &Word) -> Result<(), Reason> {
    let value = word.value.as_str();
    if let Some(long) = value.strip_prefix("--") {
        let name = long.split('=').next().unwrap_or(long);
        let exact = EXACT
            .iter()
            .any(|(option, subcommands)| *option == name && subcommands.contains(&subcommand));
        if name.len() >= 2
            && !exact
            && let Some(danger) = DANGEROUS.iter().find(|d| d[2..].starts_with(name))
        {
            return Err(crate::refuse!(
                "`{value}` (as {danger}) writes a file or runs a program"
            ));
        }
        return Ok(());
    }
    if let Some(cluster) = value.strip_prefix('-')
        && let Some(flag) = cluster.chars().find(|c| dangerous_short(subcommand, *c))
        && !cluster.starts_with(|c: char| c.is_ascii_digit())
    {
        return Err(crate::refuse!(
            "`git {subcommand} -{flag}` writes a file or runs a program"
        ));
    }
    Ok(())
}

fn callbacks(subcommand: &str, args: &[Word]) -> Result<(), Reason> {
    match subcommand {
        "log" | "show" | "rev-list" | "shortlog" | "for-each-ref" | "whatchanged" => {
            for word in args {
                if word.value.contains("%G") || word.value.contains("%(signature") {
                    return Err(crate::refuse!(
                        "the format `{}` runs gpg to verify signatures",
                        word.raw
                    ));
                }
            }
            Ok(())
        }
        "branch" | "tag" => list_refs(subcommand, args),
        "reflog" => match args.first().map(|w| w.value.as_str()) {
            None | Some("show" | "list") => Ok(()),
            Some(other) if other.starts_with('-') => Ok(()),
            Some(other) => Err(crate::refuse!("`git reflog {other}` changes the reflog")),
        },
        "remote" => {
            let show = args.iter().any(|w| w.value == "show");
            if show && !args.iter().any(|w| w.value == "-n") {
                return Err("`git remote show` without -n contacts the remote".into());
            }
            Ok(())
        }
        "help" => Err("`git help` opens a pager or browser".into()),
        _ => Ok(()),
    }
}

/// gh: read-only subcommands, and no value that points somewhere else (RO-4).
pub fn check_gh(args: &[Word]) -> Result<(), Reason> {
    const READ_ONLY: &[&str] = &[
        "pr view",
        "pr list",
        "pr diff",
        "pr checks",
        "pr status",
        "issue view",
        "issue list",
        "issue status",
        "repo view",
        "repo list",
        "run list",
        "run view",
        "workflow list",
        "workflow view",
        "release list",
        "release view",
        "search issues",
        "search prs",
        "search repos",
        "search code",
        "label list",
        "auth status",
        "api",
        "status",
        "gist list",
        "gist view",
        "cache list",
        "ruleset list",
        "ruleset view",
        "variable list",
        "secret list",
        "browse --no-browser",
        "--version",
        "version",
    ];
    let first = args.first().map(|w| w.value.as_str()).unwrap_or("");
    let two = args
        .get(1)
        .map(|w| format!("{first} {}", w.value))
        .unwrap_or_default();
    let words = if READ_ONLY.contains(&two.as_str()) {
        2
    } else if READ_ONLY.contains(&first) {
        1
    } else {
        return Err(crate::refuse!(
            "`gh {first}` is not a read-only gh subcommand"
        ));
    };
    let rest = &args[words..];
    // `gh auth status -t` prints the token it found: a secret (RO-9).
    if two == "auth status"
        && rest.iter().any(|w| {
            let v = w.value.as_str();
            v == "--show-token"
                || (v.starts_with('-')
                    && !v.starts_with("--")
                    && v[1..].chars().take_while(|c| *c != '=').any(|c| c == 't'))
        })
    {
        return Err("`gh auth status --show-token` prints the user's token".into());
    }
    for word in rest {
        let value = word.value.as_str();
        if value.contains("://")
            || value.contains('@')
            || value.matches('/').count() >= 2 && !first.eq("api")
        {
            return Err(crate::refuse!(
                "`{}` points gh at another host or repository",
                word.raw
            ));
        }
        if matches!(value, "--web" | "-w") {
            return Err("`--web` opens a browser".into());
        }
    }
    if first == "api" {
        check_gh_api(rest)?;
    }
    Ok(())
}

/// `gh api`'s options that leave it a GET of `api.github.com`, by allow-list (RO-4): the
/// output and paging options, `--cache`, and headers that only choose a media type. What
/// else gh accepts changes the method (`-X`, `-f`, `-F`, `--input`), the host
/// (`--hostname`) or is new, and asks. The endpoint: one, relative to the API, with no
/// `..` segment, `//`, scheme or `@`.
fn check_gh_api(rest: &[Word]) -> Result<(), Reason> {
    const FLAGS: &[&str] = &[
        "--paginate",
        "--slurp",
        "-i",
        "--include",
        "--silent",
        "--verbose",
    ];
    const WITH_VALUE: &[&str] = &[
        "-q",
        "--jq",
        "-t",
        "--template",
        "--cache",
        "-p",
        "--preview",
    ];
    let mut endpoints = 0;
    let mut i = 0;
    while i < rest.len() {
        let (raw, value) = (&rest[i].raw, rest[i].value.as_str());
        i += 1;
        if FLAGS.contains(&value) {
            continue;
        }
        if WITH_VALUE.contains(&value) {
            i += 1;
            continue;
        }
        if WITH_VALUE
            .iter()
            .any(|o| o.starts_with("--") && value.starts_with(&format!("{o}=")))
        {
            continue;
        }
        let header = if matches!(value, "-H" | "--header") {
            i += 1;
            rest.get(i - 1).map(|w| w.value.as_str())
        } else {
            value.strip_prefix("--header=")
        };
        if let Some(header) = header {
            let (name, _) = header.split_once(':').unwrap_or((header, ""));
            if !name.trim().eq_ignore_ascii_case("accept") {
                return Err(crate::refuse!(
                    "`gh api` with the header `{header}`: only `Accept` is read-only for sure"
                ));
            }
            continue;
        }
        if matches!(value, "-X" | "--method")
            || value.starts_with("--method=")
            || value.starts_with("-X")
        {
            let method = if matches!(value, "-X" | "--method") {
                i += 1;
                rest.get(i - 1).map(|w| w.value.to_ascii_uppercase())
            } else {
                value
                    .strip_prefix("--method=")
                    .or_else(|| value.strip_prefix("-X"))
                    .map(str::to_ascii_uppercase)
            };
            if method.as_deref() == Some("GET") {
                continue;
            }
            return Err("`gh api` with a method other than GET changes something".into());
        }
        if matches!(value, "-f" | "-F" | "--field" | "--raw-field" | "--input")
            || value.starts_with("--field=")
            || value.starts_with("--raw-field=")
            || value.starts_with("--input=")
        {
            return Err("`gh api` with fields sends a POST".into());
        }
        if value.starts_with('-') {
            return Err(crate::refuse!(
                "`gh api {raw}` is not an option known to leave it a GET of GitHub's API"
            ));
        }
        endpoints += 1;
        let path = value.split('?').next().unwrap_or(value);
        if value.contains("://")
            || value.contains('@')
            || path.contains("//")
            || path
                .split('/')
                .any(|segment| segment == ".." || segment == ".")
        {
            return Err(crate::refuse!(
                "`{raw}` points gh at another host or endpoint"
            ));
        }
    }
    if endpoints > 1 {
        return Err("`gh api` takes one endpoint".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use wavesh_parse::{Dialect, evaluate};

    fn git(args: &str) -> Result<(), Reason> {
        let words: Vec<Word> = args
            .split_whitespace()
            .map(|a| evaluate(a, Dialect::Bash))
            .collect();
        check_git(&words, &|dir| {
            if dir.starts_with('/') {
                Err("outside".into())
            } else {
                Ok(())
            }
        })
        .map(|_| ())
    }

    #[test]
    fn ro_5_git() {
        for ok in [
            "status",
            "log --oneline -20",
            "diff HEAD~1",
            "show HEAD:src/main.rs",
            "branch",
            "branch -a",
            "branch --list feat*",
            "tag -l",
            "reflog",
            "reflog show",
            "remote -v",
            "remote show -n origin",
            "--no-pager log",
            "-P diff",
            "stash list",
            "config --get user.name",
            "ls-files",
            "rev-parse HEAD",
            "blame -L 1,10 f",
            "grep -n foo",
            "log --format=%H%n%s",
            "diff --stat",
            "worktree list",
            "diff -U5",
        ] {
            assert!(git(ok).is_ok(), "{ok}: {:?}", git(ok));
        }
        for bad in [
            "-c core.pager=sh log",
            "-C /tmp status",
            "--git-dir=/x status",
            "--work-tree=/ status",
            "--exec-path=/x log",
            "log --format=%G?",
            "for-each-ref --format=%(signature)",
            "branch newname",
            "tag v1",
            "branch -d x",
            "reflog expire",
            "reflog delete x",
            "ls-remote origin",
            "remote show origin",
            "diff --output=x",
            "diff --out=x",
            "log --outp=x",
            "diff -o x",
            "diff --ext-diff",
            "log --textconv",
            "grep -O less x",
            "grep --open-files-in-pager=x y",
            "commit -m x",
            "push",
            "stash",
            "config user.name x",
            "checkout x",
            "remote add x y",
            "help log",
            "fetch",
            "--bare log",
            "--namespace=x log",
            "--super-prefix=x log",
            "--config-env=a=b log",
            "--shallow-file=x log",
            "--attr-source=x log",
        ] {
            assert!(git(bad).is_err(), "{bad}");
        }
    }

    fn gh(args: &str) -> Result<(), Reason> {
        let words: Vec<Word> = args
            .split_whitespace()
            .map(|a| evaluate(a, Dialect::Bash))
            .collect();
        check_gh(&words)
    }

    #[test]
    fn ro_4_gh() {
        for ok in [
            "pr view 12",
            "pr list --state open",
            "issue view 3 --comments",
            "run list",
            "api repos/o/r/pulls",
            "auth status",
        ] {
            assert!(gh(ok).is_ok(), "{ok}: {:?}", gh(ok));
        }
        for bad in [
            "pr create",
            "pr merge 1",
            "issue close 2",
            "pr view https://evil.example/x",
            "pr view 1 --repo a/b/c",
            "pr view 1 -R git@host:x",
            "api -X POST repos/x",
            "api repos/x -f a=b",
            "api --method=DELETE x",
            "pr view 1 --web",
            "repo clone x",
            "api https://evil.example/x",
        ] {
            assert!(gh(bad).is_err(), "{bad}");
        }
    }
}
