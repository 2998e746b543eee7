//! The read-only classifier (RO-1, RO-2): a whole command is read-only only if it is
//! permission safe and every simple command in it is explicitly read-only. Every "no"
//! names the command and the word that decided (RO-7).

use std::path::{Path, PathBuf};

use wavesh_parse::{Analysis, SimpleCommand, Word, second_opinion, shorten};

use crate::commands;
use crate::env::check_assignment;
use crate::git::{check_gh, check_git};
use crate::paths::{PathPolicy, check_read, looks_like_path};

/// Whether git in the working directory may run programs from repository config (GIT).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum GitContext {
    /// No repository, or a trusted one.
    #[default]
    Safe,
    /// Why git is unsafe here.
    Unsafe(String),
}

/// What the classifier needs to know besides the command.
#[derive(Debug, Clone, Default)]
pub struct ClassifyContext {
    /// The home directory, for `~` and the secret locations.
    pub home: PathBuf,
    /// The directory the command runs in.
    pub cwd: PathBuf,
    /// The git guard's verdict for `cwd`.
    pub git: GitContext,
    /// Where auto-approved commands may read.
    pub paths: PathPolicy,
    /// Windows rules (UNC paths, no `xargs`).
    pub windows: bool,
    /// Skip the tree-sitter second opinion (tests of the first stage only).
    pub skip_second_opinion: bool,
}

/// The classifier's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// Provably read-only: may run without asking.
    pub read_only: bool,
    /// Why not, one reason per offending command (empty when read-only).
    pub reasons: Vec<String>,
}

impl Verdict {
    fn no(reason: String) -> Verdict {
        Verdict {
            read_only: false,
            reasons: vec![reason],
        }
    }
}

/// Known write options, refused wherever they appear (RO-2, first step).
fn known_write_option(name: &str, args: &[Word]) -> Option<String> {
    for word in args {
        let value = word.value.as_str();
        let hit = match name {
            "sed" => {
                value == "--in-place"
                    || value.starts_with("--in-place=")
                    || (value.starts_with('-')
                        && !value.starts_with("--")
                        && value[1..].contains('i')
                        && value != "-")
            }
            "find" => matches!(
                value,
                "-delete"
                    | "-exec"
                    | "-execdir"
                    | "-ok"
                    | "-okdir"
                    | "-fprint"
                    | "-fprint0"
                    | "-fprintf"
                    | "-fls"
            ),
            "tree" => value == "-o" || value.starts_with("-o"),
            "sort" => {
                value == "-o"
                    || value.starts_with("--output")
                    || (value.starts_with("-o") && !value.starts_with("--"))
            }
            _ => false,
        };
        if hit {
            return Some(format!("`{name} {value}` writes or runs something"));
        }
    }
    None
}

/// Wrappers that only change how a command runs, stripped before judging it.
fn strip_wrappers(argv: &[Word]) -> Result<&[Word], String> {
    let mut rest = argv;
    loop {
        let Some(name) = rest.first().map(|w| w.value.as_str()) else {
            return Ok(rest);
        };
        let skip = match name {
            "nice" => {
                if rest.get(1).is_some_and(|w| w.value == "-n") {
                    3
                } else if rest.get(1).is_some_and(|w| {
                    w.value.starts_with("-n")
                        || w.value.starts_with('-')
                            && w.value[1..].chars().all(|c| c.is_ascii_digit())
                }) {
                    2
                } else {
                    1
                }
            }
            "timeout" => {
                let mut i = 1;
                while let Some(word) = rest.get(i) {
                    match word.value.as_str() {
                        "--preserve-status" | "--foreground" | "-v" | "--verbose" => i += 1,
                        "-s" | "-k" | "--signal" | "--kill-after" => i += 2,
                        v if v.starts_with("--signal=")
                            || v.starts_with("--kill-after=")
                            || v.starts_with("-s")
                            || v.starts_with("-k") =>
                        {
                            i += 1
                        }
                        _ => break,
                    }
                }
                i + 1
            }
            "stdbuf" => {
                let mut i = 1;
                while rest.get(i).is_some_and(|w| w.value.starts_with('-')) {
                    let value = rest[i].value.as_str();
                    i += if matches!(value, "-i" | "-o" | "-e") {
                        2
                    } else {
                        1
                    };
                }
                i
            }
            _ => return Ok(rest),
        };
        if skip >= rest.len() {
            return Err(format!("`{name}` has no command to run"));
        }
        rest = &rest[skip..];
    }
}

/// Classifies a command line: `source` is the text, `analysis` its analysis.
pub fn classify(source: &str, analysis: &Analysis, ctx: &ClassifyContext) -> Verdict {
    if let Some(reason) = analysis.unsafe_reason() {
        return Verdict::no(format!("not provably safe to analyse: {reason}"));
    }
    if analysis.commands.is_empty() {
        return Verdict::no("there is no command".into());
    }
    let names: Vec<&str> = analysis
        .commands
        .iter()
        .filter_map(|c| {
            strip_wrappers(&c.argv)
                .ok()
                .and_then(|a| a.first())
                .map(|w| w.value.as_str())
        })
        .collect();
    let has_git = names.contains(&"git");
    if has_git && names.iter().any(|n| matches!(*n, "cd" | "pushd" | "popd")) {
        return Verdict::no("git together with cd could run git in another repository, whose config may run programs".into());
    }
    if has_git && let GitContext::Unsafe(why) = &ctx.git {
        return Verdict::no(format!("git is not safe here: {why}"));
    }
    let reasons: Vec<String> = analysis
        .commands
        .iter()
        .filter_map(|command| check_command(command, ctx).err())
        .collect();
    if !reasons.is_empty() {
        return Verdict {
            read_only: false,
            reasons,
        };
    }
    if !ctx.skip_second_opinion
        && let Err(disagreement) = second_opinion(source, analysis)
    {
        return Verdict::no(format!("parsers disagree: {disagreement}"));
    }
    Verdict {
        read_only: true,
        reasons: Vec::new(),
    }
}

/// Whether one simple command is read-only on its own (for RULE-3's exemption of
/// read-only parts). `Err` names the command and the deciding word.
pub fn command_is_read_only(command: &SimpleCommand, ctx: &ClassifyContext) -> Result<(), String> {
    let name = strip_wrappers(&command.argv)
        .ok()
        .and_then(|argv| argv.first())
        .map(|w| w.value.as_str());
    if name == Some("git")
        && let GitContext::Unsafe(why) = &ctx.git
    {
        return Err(format!("git is not safe here: {why}"));
    }
    check_command(command, ctx)
}

/// RO-2 for one simple command. `Err` names the command and the deciding word.
fn check_command(command: &SimpleCommand, ctx: &ClassifyContext) -> Result<(), String> {
    let shown = shorten(&command.text);
    let fail = |why: String| Err(format!("`{shown}`: {why}"));
    for (name, value) in &command.assignments {
        if let Err(why) = check_assignment(name, value) {
            return fail(why);
        }
    }
    for redirect in &command.redirects {
        let allowed = redirect.is_fd_duplication()
            || redirect.is_dev_null_output()
            || (redirect.is_input() && redirect.heredoc.as_ref().is_none_or(|h| !h.dynamic));
        if !allowed {
            return fail(format!(
                "the redirect `{}{}` writes a file",
                redirect.op, redirect.target.raw
            ));
        }
        if redirect.op == "<"
            && let Err(why) = check_read(
                &redirect.target.expanded(&ctx.home.to_string_lossy()),
                &ctx.cwd,
                &ctx.home,
                &ctx.paths,
            )
        {
            return fail(why);
        }
    }
    let argv = match strip_wrappers(&command.argv) {
        Ok(argv) => argv,
        Err(why) => return fail(why),
    };
    let Some(name_word) = argv.first() else {
        return fail("it only assigns variables".into());
    };
    let name = name_word.value.as_str();
    let args = &argv[1..];
    if let Some(why) = known_write_option(name, args) {
        return fail(why);
    }
    if argv
        .iter()
        .any(|w| w.value.starts_with("\\\\") || w.value.starts_with("//"))
    {
        return fail("a UNC path (\\\\host\\share) can reach the network".into());
    }
    check_paths(name, args, ctx).or_else(fail)?;
    match name {
        "git" => check_git(args).or_else(fail),
        "gh" => check_gh(args).or_else(fail),
        "cd" | "pushd" => {
            if args.len() > 1 {
                fail(format!("`{name}` with more than one argument"))
            } else {
                Ok(())
            }
        }
        "popd" => Ok(()),
        "xargs" if ctx.windows => fail("xargs is not known to be read-only on Windows".into()),
        _ => {
            let Some(policy) = commands::lookup(name) else {
                return fail(format!("`{name}` is not a known read-only command"));
            };
            if let Some(callback) = policy.callback {
                callback(args).or_else(fail)?;
            }
            match &policy.table {
                Some(table) => table.check(args).or_else(fail),
                None => Ok(()),
            }
        }
    }
}

/// RO-9 on every operand that looks like a path, `cd` targets included.
fn check_paths(name: &str, args: &[Word], ctx: &ClassifyContext) -> Result<(), String> {
    let home = ctx.home.to_string_lossy();
    // The first operand of a search tool is its pattern, not a path.
    let skip_pattern = matches!(name, "grep" | "egrep" | "fgrep" | "rg")
        && !args
            .iter()
            .any(|w| w.value == "-e" || w.value.starts_with("--regexp") || w.value == "-f");
    let mut pattern_skipped = !skip_pattern;
    for word in args {
        let value = word.expanded(&home);
        let operand = value.split_once('=').map_or(value.as_str(), |(flag, v)| {
            if flag.starts_with("--") {
                v
            } else {
                value.as_str()
            }
        });
        if !word.value.starts_with('-') && !pattern_skipped {
            pattern_skipped = true;
            continue;
        }
        if (looks_like_path(operand) || name == "cd") && !operand.is_empty() {
            // The message shows the word as the model wrote it.
            check_read(operand, &ctx.cwd, Path::new(home.as_ref()), &ctx.paths).map_err(|why| {
                why.replacen(&format!("`{operand}`"), &format!("`{}`", word.raw), 1)
            })?;
        }
    }
    Ok(())
}
