//! The read-only classifier (RO-1, RO-2): a whole command is read-only only if it is
//! permission safe and every simple command in it is explicitly read-only. Every "no"
//! names the command and the word that decided (RO-7).

use crate::Reason;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use wavesh_parse::{Analysis, Connector, SimpleCommand, Word, second_opinion, shorten};

use crate::commands::{self, Judgement, NO_OPEN, dev};
use crate::env::check_assignment;
use crate::flags::Parsed;
use crate::git::{check_gh, check_git};
use crate::git_guard::{FileKind, Fs, RealFs};
use crate::paths::{PathPolicy, Walk, absolute, check_open, expand_glob, walk_for_secrets};
use crate::secrets::glob_may_match_secret;

/// The file system the classifier asks about what a command will really open:
/// symlinks, hard links, glob expansions, project config (RO-9, RO-13). The default is
/// the real one; [`crate::git_guard::EmptyFs`] classifies the text alone.
#[derive(Clone)]
pub struct SharedFs(pub Arc<dyn Fs>);

impl SharedFs {
    /// Wraps a file system view.
    pub fn new(fs: impl Fs + 'static) -> SharedFs {
        SharedFs(Arc::new(fs))
    }
}

impl Default for SharedFs {
    fn default() -> SharedFs {
        SharedFs::new(RealFs)
    }
}

impl std::fmt::Debug for SharedFs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedFs")
    }
}

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
    /// Files named like a secret in the repository's index or history (RO-17,
    /// [`crate::git_history::secret_files`]): git commands that print contents from its
    /// objects are not approved while there is one.
    pub git_secrets: Vec<String>,
    /// Where auto-approved commands may read.
    pub paths: PathPolicy,
    /// Windows rules (UNC paths, no `xargs`).
    pub windows: bool,
    /// Skip the tree-sitter second opinion (tests of the first stage only).
    pub skip_second_opinion: bool,
    /// The file system (the real one unless a host or test passes another).
    pub fs: SharedFs,
    /// The directories of `PATH`, to find which program a version query runs; `None`
    /// reads this process's `PATH`.
    pub path: Option<Vec<PathBuf>>,
}

/// The classifier's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// Provably read-only: may run without asking.
    pub read_only: bool,
    /// Why not, one reason per offending command (empty when read-only).
    pub reasons: Vec<Reason>,
}

impl Verdict {
    fn no(reason: impl Into<Reason>) -> Verdict {
        Verdict {
            read_only: false,
            reasons: vec![reason.into()],
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
                "-delete" | "-ok" | "-okdir" | "-fprint" | "-fprint0" | "-fprintf" | "-fls"
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
fn strip_wrappers(argv: &[Word]) -> Result<&[Word], Reason> {
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
            return Err(crate::refuse!("`{name}` has no command to run"));
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
        return Verdict::no("there is no command");
    }
    let names: Vec<&str> = command_names(analysis).into_iter().flatten().collect();
    let has_git = names.contains(&"git");
    if has_git && names.iter().any(|n| matches!(*n, "cd" | "pushd" | "popd")) {
        return Verdict::no(
            "git together with cd could run git in another repository, whose config may run programs",
        );
    }
    if has_git && let GitContext::Unsafe(why) = &ctx.git {
        return Verdict::no(format!("git is not safe here: {why}"));
    }
    // Relative paths resolve against every directory an earlier `cd`/`pushd` of the
    // same command may have moved to (RO-9).
    let mut cwds = vec![ctx.cwd.clone()];
    let mut reasons = Vec::new();
    let mut previous: Option<&SimpleCommand> = None;
    for (command, name) in analysis.commands.iter().zip(command_names(analysis)) {
        let producer = matches!(command.connector, Connector::Pipe | Connector::PipeBoth)
            .then_some(previous)
            .flatten();
        if let Err(why) = check_command_in(command, ctx, &cwds, producer, 0) {
            reasons.push(why);
        }
        if matches!(name, Some("cd" | "pushd")) {
            moved_to(command, ctx, &mut cwds);
        }
        previous = Some(command);
    }
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
pub fn command_is_read_only(command: &SimpleCommand, ctx: &ClassifyContext) -> Result<(), Reason> {
    let name = strip_wrappers(&command.argv)
        .ok()
        .and_then(|argv| argv.first())
        .map(|w| w.value.as_str());
    if name == Some("git")
        && let GitContext::Unsafe(why) = &ctx.git
    {
        return Err(crate::refuse!("git is not safe here: {why}"));
    }
    check_command_in(command, ctx, std::slice::from_ref(&ctx.cwd), None, 0)
}

/// The command name of each simple command, wrappers looked through.
fn command_names(analysis: &Analysis) -> Vec<Option<&str>> {
    analysis
        .commands
        .iter()
        .map(|c| {
            strip_wrappers(&c.argv)
                .ok()
                .and_then(|a| a.first())
                .map(|w| w.value.as_str())
        })
        .collect()
}

/// Adds the directories `cd`/`pushd` may move to.
fn moved_to(command: &SimpleCommand, ctx: &ClassifyContext, cwds: &mut Vec<PathBuf>) {
    let Ok(argv) = strip_wrappers(&command.argv) else {
        return;
    };
    let home = ctx.home.to_string_lossy();
    let target = argv
        .get(1)
        .map_or_else(|| home.to_string(), |w| w.expanded(&home));
    let new: Vec<PathBuf> = cwds
        .iter()
        .flat_map(|cwd| {
            let lexical = absolute(&target, cwd);
            let real = ctx.fs.0.canonical(&lexical);
            std::iter::once(lexical).chain(real)
        })
        .collect();
    for dir in new {
        if !cwds.contains(&dir) {
            cwds.push(dir);
        }
    }
}

/// How deep `xargs` and `find -exec` may nest commands before the classifier gives up.
const MAX_DEPTH: usize = 3;

/// RO-2 for one simple command, with the directories it may run in and the command
/// whose output it reads through a pipe. `Err` names the command and the deciding word.
fn check_command_in(
    command: &SimpleCommand,
    ctx: &ClassifyContext,
    cwds: &[PathBuf],
    producer: Option<&SimpleCommand>,
    depth: usize,
) -> Result<(), Reason> {
    let shown = shorten(&command.text);
    let fail = |why: Reason| Err(why.prefixed(&format!("`{shown}`: ")));
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
            return fail(crate::refuse!(
                "the redirect `{}{}` writes a file",
                redirect.op,
                redirect.target.raw
            ));
        }
        if redirect.op == "<" {
            let target = redirect.target.expanded(&ctx.home.to_string_lossy());
            // bash itself connects `< /dev/tcp/HOST/PORT` (RO-13).
            if target.starts_with("/dev/tcp/") || target.starts_with("/dev/udp/") {
                return fail(crate::refuse!(
                    "the redirect `<{}` opens a network connection",
                    redirect.target.raw
                ));
            }
            check_candidate(
                &target,
                &redirect.target.raw,
                redirect.target.glob,
                ctx,
                cwds,
            )
            .or_else(fail)?;
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
        return fail(why.into());
    }
    if argv
        .iter()
        .any(|w| w.value.starts_with("\\\\") || w.value.starts_with("//"))
    {
        return fail("a UNC path (\\\\host\\share) can reach the network".into());
    }
    judge(name, args, ctx, cwds, producer, depth).or_else(fail)
}

/// The per-command part of RO-2: git, gh, cd, version queries, then the command's
/// table and callback, its globs, the paths it opens and the commands it runs.
fn judge(
    name: &str,
    args: &[Word],
    ctx: &ClassifyContext,
    cwds: &[PathBuf],
    producer: Option<&SimpleCommand>,
    depth: usize,
) -> Result<(), Reason> {
    let home = ctx.home.to_string_lossy();
    match name {
        "git" => {
            let paths = check_git(args, &|dir| git_dir_ok(dir, ctx, cwds))?;
            // git reads every word before `--` that starts with `-` as an option, a
            // glob's expansion included (`git log *` beside a file `--output=x` writes
            // x), and a glob operand names the files it expands to.
            check_globs(name, args, &Parsed::default(), None, ctx, cwds)?;
            for word in args.iter().filter(|w| w.glob) {
                check_candidate(&word.expanded(&home), &word.raw, true, ctx, cwds)?;
            }
            if let Some(secret) = ctx.git_secrets.first()
                && let Some((subcommand, rest)) = crate::git_history::subcommand(args)
                && crate::git_history::prints_contents(&subcommand, &rest)
            {
                return Err(Reason::secret(format!(
                    "this repository's git objects hold {secret}, named like a secret, and \
                     `git {subcommand}` can print it from them"
                )));
            }
            for path in paths {
                check_candidate(&path, &path, false, ctx, cwds)?;
            }
            for root in git_worktree_reads(args, &home) {
                for cwd in cwds {
                    walk_for_secrets(&root, cwd, &ctx.home, ctx.fs.0.as_ref(), &Walk::default())?;
                }
            }
            return Ok(());
        }
        "gh" => {
            check_gh(args)?;
            // A glob's expansion is read as options too (`gh pr view *`).
            return check_globs(name, args, &Parsed::default(), None, ctx, cwds);
        }
        "cd" | "pushd" => {
            if args.len() > 1 {
                return Err(crate::refuse!("`{name}` with more than one argument"));
            }
            if let Some(target) = args.first() {
                if target.value == "-" || target.value.starts_with('-') {
                    return Err(crate::refuse!(
                        "`{name} {}` goes to a directory this check cannot see",
                        target.raw
                    ));
                }
                check_candidate(&target.expanded(&home), &target.raw, target.glob, ctx, cwds)?;
            }
            return Ok(());
        }
        "popd" => return Ok(()),
        "xargs" if ctx.windows => {
            return Err("xargs is not known to be read-only on Windows".into());
        }
        _ => {}
    }
    if let Some(tool) = dev::version_tool(name) {
        dev::spelling(tool, args)?;
        return version_config(tool, ctx, cwds);
    }
    let Some(policy) = commands::lookup(name) else {
        return Err(crate::refuse!("`{name}` is not a known read-only command"));
    };
    let parsed = match &policy.table {
        Some(table) => table.parse_args(args)?,
        None => Parsed::default(),
    };
    let judgement = match policy.callback {
        Some(callback) => callback(args, &parsed)?,
        None => Judgement::default(),
    };
    check_globs(name, args, &parsed, policy.table.as_ref(), ctx, cwds)?;
    if !NO_OPEN.contains(&name) {
        for (value, raw, glob) in path_candidates(name, args, &parsed, &judgement, &home) {
            check_candidate(&value, &raw, glob, ctx, cwds)?;
        }
    }
    for file in &judgement.script_files {
        check_candidate(file, file, false, ctx, cwds)?;
        let path = absolute(file, &cwds[0]);
        let Some(bytes) = ctx.fs.0.read(&path, 64 * 1024 + 1) else {
            return Err(crate::refuse!(
                "`sed -f {file}`: the script cannot be read to check it"
            ));
        };
        if bytes.len() > 64 * 1024 {
            return Err(crate::refuse!("`sed -f {file}`: the script is over 64 KiB"));
        }
        let script = String::from_utf8_lossy(&bytes);
        for read in commands::text_sed_script(&script)? {
            check_candidate(&read, &read, false, ctx, cwds)?;
        }
    }
    for range in &judgement.runs {
        if depth >= MAX_DEPTH {
            return Err(crate::refuse!(
                "`{name}` nests commands too deeply to check"
            ));
        }
        let sub = &args[range.clone()];
        let text = sub
            .iter()
            .map(|w| w.raw.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        let inner = SimpleCommand {
            argv: sub.to_vec(),
            assignments: Vec::new(),
            redirects: Vec::new(),
            connector: Connector::Sequence,
            text,
        };
        check_command_in(&inner, ctx, cwds, None, depth + 1)
            .map_err(|why| format!("`{name}` runs {why}"))?;
        // `xargs CMD` and `find -exec CMD {} +` give CMD any number of names: with two
        // more operands than written, CMD must still be read-only (`uniq` writes its
        // second operand).
        let appends = judgement.runs_get_input_names
            || (sub.last().is_some_and(|w| w.value == "{}")
                && args.get(range.end).is_some_and(|w| w.value == "+"));
        if appends {
            let mut more = inner.clone();
            more.argv.extend(
                ["./wavesh-name-1", "./wavesh-name-2"]
                    .map(|n| wavesh_parse::evaluate(n, wavesh_parse::Dialect::Bash)),
            );
            check_command_in(&more, ctx, cwds, None, depth + 1).map_err(|why| {
                crate::refuse!(
                    "`{name}` gives `{}` any number of names, and with more than one {why}",
                    inner.argv.first().map_or("", |w| w.raw.as_str())
                )
            })?;
        }
        if judgement.runs_get_input_names {
            input_names_are_safe(name, sub, producer)?;
        }
    }
    let home = ctx.home.to_string_lossy();
    for (root, walk) in recursive_reads(name, args, &parsed, &judgement, producer, &home) {
        if root.is_empty() {
            return Err(crate::refuse!(
                "`{name}` gives the files to open from {}, which could name any path",
                producer.map_or_else(
                    || "its input".to_owned(),
                    |p| format!("the output of `{}`", shorten(&p.text))
                )
            ));
        }
        for cwd in cwds {
            walk_for_secrets(&root, cwd, &ctx.home, ctx.fs.0.as_ref(), &walk)?;
        }
    }
    Ok(())
}

/// The trees a git subcommand reads from the file system rather than from git's
/// objects, walked like `grep -r`'s (RO-9): `git grep` with `--untracked`, `--no-index`
/// or `--no-exclude-standard` reads the files of its directory, untracked and (with the
/// last two) ignored ones too; `git diff --no-index` reads its two operands, whole
/// directories included. git takes any unique abbreviation of a long option, so a
/// prefix counts as the option.
fn git_worktree_reads(args: &[Word], home: &str) -> Vec<String> {
    let Some((subcommand, rest)) = crate::git_history::subcommand(args) else {
        return Vec::new();
    };
    let options: Vec<&str> = rest
        .iter()
        .take_while(|w| **w != "--")
        .filter_map(|w| w.strip_prefix("--"))
        .map(|w| w.split('=').next().unwrap_or(w))
        .collect();
    let given = |targets: &[&str]| {
        options
            .iter()
            .any(|o| o.len() >= 2 && targets.iter().any(|t| t.starts_with(o)))
    };
    // The words of `rest` as parsed (`~` is expanded where bash expands it).
    let words = &args[args.len() - rest.len()..];
    let operands = || -> Vec<String> {
        words
            .iter()
            .filter(|w| w.value != "--" && !w.value.starts_with('-'))
            .map(|w| w.expanded(home))
            .collect()
    };
    match subcommand.as_str() {
        "grep" if given(&["untracked", "no-index", "no-exclude-standard"]) => {
            // The pattern and pathspecs among the operands narrow the walk; the whole
            // directory is walked, which never misses one.
            vec![".".to_owned()]
        }
        "diff" if given(&["no-index"]) => operands(),
        _ => Vec::new(),
    }
}

/// `xargs CMD` appends names read from its input: a name like `-f.env` becomes an option
/// of CMD. That is harmless only when CMD has no option that writes, runs a program or
/// redirects what it reads, when CMD's options end with `--`, or when the names come
/// from `find` (which prefixes every name with its starting point) (RO-4, PARSE-4).
fn input_names_are_safe(
    name: &str,
    sub: &[Word],
    producer: Option<&SimpleCommand>,
) -> Result<(), Reason> {
    let producer = producer
        .and_then(|p| strip_wrappers(&p.argv).ok())
        .and_then(|argv| argv.first())
        .map(|w| w.value.as_str());
    let inner = strip_wrappers(sub)?;
    let Some(program) = inner.first() else {
        return Ok(());
    };
    // Commands taken with any argument have no option that writes or runs (RO-11).
    let harmless_options = commands::lookup(&program.value).is_some_and(|p| match &p.table {
        Some(table) => !table.writes,
        None => p.callback.is_none(),
    });
    if harmless_options || inner.iter().any(|w| w.value == "--") || producer == Some("find") {
        Ok(())
    } else {
        Err(crate::refuse!(
            "`{name}` appends names from its input to `{}`, and a name such as `-f.env` would be one of its options (add `--`)",
            program.value
        ))
    }
}

/// PARSE-4 and class "globs that become options": a glob operand before `--` must not
/// expand to a name starting with `-` (or, for find, an expression word); globs are
/// expanded on the file system when it can be listed, else judged by their pattern.
/// `uniq` writes its second operand, so its operands are counted after expansion.
fn check_globs(
    name: &str,
    args: &[Word],
    parsed: &Parsed,
    table: Option<&crate::flags::FlagTable>,
    ctx: &ClassifyContext,
    cwds: &[PathBuf],
) -> Result<(), Reason> {
    let home = ctx.home.to_string_lossy();
    let mut operand_count = 0usize;
    let mut after_dashes = false;
    for (index, word) in args.iter().enumerate() {
        if table.is_none() && word.value == "--" {
            after_dashes = true;
        }
        let is_operand = match table {
            Some(_) => parsed.operands.contains(&index),
            None => true,
        };
        if !is_operand {
            continue;
        }
        let after = match table {
            Some(_) => parsed.after_options(index),
            None => after_dashes,
        };
        if !word.glob {
            operand_count += 1;
            continue;
        }
        let value = word.expanded(&home);
        for cwd in cwds {
            match expand_glob(&value, cwd, ctx.fs.0.as_ref()) {
                Some(names) => {
                    operand_count += names.len();
                    if !after
                        && let Some(bad) = names.iter().find(|n| {
                            n.starts_with('-')
                                || name == "find" && matches!(n.as_str(), "!" | "(" | ")" | ",")
                                || name == "strings" && n.starts_with('@')
                        })
                    {
                        return Err(crate::refuse!(
                            "the glob `{}` expands to `{bad}`, which `{name}` would take as an option",
                            word.raw
                        ));
                    }
                }
                None => {
                    operand_count += 2;
                    match table {
                        Some(table) => table.glob_operand(word, after)?,
                        None if !after => {
                            let first = word.value.chars().next().unwrap_or('*');
                            if matches!(first, '*' | '?' | '[' | '-') {
                                return Err(crate::refuse!(
                                    "the glob `{}` could expand to a file named like an option",
                                    word.raw
                                ));
                            }
                        }
                        None => {}
                    }
                }
            }
        }
    }
    if name == "uniq" && operand_count > 1 {
        return Err("`uniq` writes its second operand, and its operands may be two files".into());
    }
    Ok(())
}

/// ripgrep's `-t TYPE` for common types, as file-name globs; an unknown type filters
/// nothing here (all files count as read).
fn rg_type(name: &str) -> Option<&'static [&'static str]> {
    Some(match name {
        "rust" => &["*.rs"],
        "py" | "python" => &["*.py", "*.pyi"],
        "js" => &["*.js", "*.mjs", "*.cjs", "*.jsx"],
        "ts" | "typescript" => &["*.ts", "*.tsx", "*.mts", "*.cts"],
        "go" => &["*.go"],
        "md" | "markdown" => &["*.md", "*.markdown"],
        "c" => &["*.c", "*.h"],
        "cpp" => &["*.cpp", "*.cc", "*.cxx", "*.hpp", "*.hh", "*.h"],
        "java" => &["*.java"],
        "toml" => &["*.toml"],
        "json" => &["*.json"],
        "yaml" => &["*.yaml", "*.yml"],
        "sh" => &["*.sh", "*.bash"],
        "html" => &["*.html", "*.htm"],
        "css" => &["*.css"],
        _ => return None,
    })
}

/// find's name filter when its expression is a plain conjunction: `-name`/`-iname`
/// patterns every opened file matches, and `-type d` (no file opened). Any `-o`, `!`
/// or parenthesis gives no filter.
fn find_filter(args: &[Word]) -> Walk {
    // The command find runs, or xargs gives the names to, opens each path.
    let mut walk = Walk {
        opens_links: true,
        ..Walk::default()
    };
    let values: Vec<&str> = args.iter().map(|w| w.value.as_str()).collect();
    if values
        .iter()
        .any(|v| matches!(*v, "-o" | "-or" | "!" | "-not" | "(" | ")" | ","))
    {
        return walk;
    }
    walk.follow = values.iter().any(|v| matches!(*v, "-L" | "-follow"));
    for pair in values.windows(2) {
        match pair[0] {
            "-name" => walk.all_of.push(pair[1].to_owned()),
            // Case-insensitive: a secret name in any case could match; no filter.
            "-type" if pair[1] == "d" => walk.no_files = true,
            _ => {}
        }
    }
    walk
}

/// The trees a command reads every file of: `grep -r`, `rg` (not `--files`), `diff -r`,
/// find's starting points when it runs a command on what it finds, and the working
/// directory when `xargs` gives a file-opening command the names another command
/// printed; each with the filters that limit which files it opens (RO-9).
fn recursive_reads(
    name: &str,
    args: &[Word],
    parsed: &Parsed,
    judgement: &Judgement,
    producer: Option<&SimpleCommand>,
    home: &str,
) -> Vec<(String, Walk)> {
    // A root is walked where bash puts it: `~` is the home (RO-9).
    let operands = |skip_first: bool| -> Vec<String> {
        let mut roots: Vec<String> = parsed
            .operands
            .iter()
            .skip(usize::from(skip_first))
            .map(|&i| args[i].expanded(home))
            .collect();
        if roots.is_empty() {
            roots.push(".".into());
        }
        roots
    };
    let values = |names: &[&str]| -> Vec<String> {
        parsed
            .options
            .iter()
            .filter(|o| names.contains(&o.name.as_str()))
            .filter_map(|o| o.value.clone())
            .collect()
    };
    let count = |flag: &str| parsed.options.iter().filter(|o| o.name == flag).count();
    let each =
        |roots: Vec<String>, walk: Walk| roots.into_iter().map(|r| (r, walk.clone())).collect();
    match name {
        "grep" | "egrep" | "fgrep" => {
            let recurse = parsed.has(&["-r", "-R", "--recursive", "--dereference-recursive"])
                || parsed.options.iter().any(|o| {
                    matches!(o.name.as_str(), "-d" | "--directories")
                        && o.value.as_deref() == Some("recurse")
                });
            if !recurse {
                return Vec::new();
            }
            let pattern_given = parsed.has(&["-e", "-f", "--regexp", "--file"]);
            let walk = Walk {
                follow: parsed.has(&["-R", "--dereference-recursive"]),
                any_of: values(&["--include"]),
                none_of: values(&["--exclude"]),
                skip_dirs: values(&["--exclude-dir"]),
                ..Walk::default()
            };
            each(operands(!pattern_given), walk)
        }
        "rg" => {
            if parsed.has(&["--files", "--type-list", "--help", "--version"]) {
                return Vec::new();
            }
            let pattern_given = parsed.has(&["-e", "-f", "--regexp", "--file"]);
            let mut walk = Walk {
                follow: parsed.has(&["-L", "--follow"]),
                skip_hidden: !(parsed.has(&["--hidden", "--unrestricted"]) || count("-u") >= 2),
                ..Walk::default()
            };
            let mut filtered = true;
            for glob in values(&["-g", "--glob", "--iglob"]) {
                match glob.strip_prefix('!') {
                    Some(negated) if !negated.contains('/') => {
                        walk.none_of.push(negated.to_owned())
                    }
                    None if !glob.contains('/') => walk.any_of.push(glob),
                    _ => filtered = false,
                }
            }
            for kind in values(&["-t", "--type"]) {
                match rg_type(&kind) {
                    Some(globs) => walk.any_of.extend(globs.iter().map(|g| (*g).to_owned())),
                    None => filtered = false,
                }
            }
            if !filtered {
                walk.any_of.clear();
            }
            each(operands(!pattern_given), walk)
        }
        // Listers of a tree open every directory in it: none may be a secret one
        // (`cd ~ && du` would list ~/.ssh, as `ls ~/.ssh` would). Files are not opened.
        "du" => each(
            operands(false),
            Walk {
                follow: parsed.has(&["-L", "--dereference"]),
                no_files: true,
                ..Walk::default()
            },
        ),
        "tree" => each(
            operands(false),
            Walk {
                follow: parsed.has(&["-l"]),
                no_files: true,
                max_depth: parsed
                    .options
                    .iter()
                    .filter(|o| o.name == "-L")
                    .filter_map(|o| o.value.as_deref()?.parse().ok())
                    .min(),
                ..Walk::default()
            },
        ),
        "ls" | "dir" | "vdir" if parsed.has(&["-R", "--recursive"]) => each(
            operands(false),
            Walk {
                follow: parsed.has(&["-L", "--dereference"]),
                no_files: true,
                ..Walk::default()
            },
        ),
        "diff" if parsed.has(&["-r", "--recursive"]) => each(
            operands(false),
            Walk {
                follow: true,
                ..Walk::default()
            },
        ),
        // With an action, every file it finds is opened (filtered by its name tests);
        // without one, it lists the names in every directory it enters.
        "find" => {
            let mut roots: Vec<String> = judgement
                .path_words
                .iter()
                .map(|&i| args[i].expanded(home))
                .collect();
            if roots.is_empty() {
                roots.push(".".into());
            }
            let walk = if judgement.runs.is_empty() {
                Walk {
                    follow: args
                        .iter()
                        .any(|w| matches!(w.value.as_str(), "-L" | "-follow")),
                    no_files: true,
                    max_depth: args
                        .windows(2)
                        .filter(|pair| pair[0].value == "-maxdepth")
                        .filter_map(|pair| pair[1].value.parse().ok())
                        .min(),
                    ..Walk::default()
                }
            } else {
                find_filter(args)
            };
            each(roots, walk)
        }
        "xargs" => {
            let opens = judgement.runs.iter().any(|range| {
                strip_wrappers(&args[range.clone()])
                    .ok()
                    .and_then(|argv| argv.first())
                    .is_some_and(|w| !NO_OPEN.contains(&w.value.as_str()))
            });
            if !opens {
                return Vec::new();
            }
            // The names come from the command before the pipe; only listers of the
            // tree below the working directory are known to print nothing else.
            let Some(producer) = producer.and_then(|p| strip_wrappers(&p.argv).ok()) else {
                return vec![(String::new(), Walk::default())];
            };
            let program = producer.first().map_or("", |w| w.value.as_str());
            let rest = &producer[1..];
            match program {
                "find" => {
                    let starts: Vec<String> = rest
                        .iter()
                        .take_while(|w| {
                            !w.value.starts_with('-') && !matches!(w.value.as_str(), "(" | "!")
                        })
                        .map(|w| w.expanded(home))
                        .collect();
                    let roots = if starts.is_empty() {
                        vec![".".to_owned()]
                    } else {
                        starts
                    };
                    each(roots, find_filter(rest))
                }
                "git" => {
                    // `git ls-files PATHSPEC`: tracked files, a subset of the tree.
                    let mut walk = Walk {
                        opens_links: true,
                        ..Walk::default()
                    };
                    let spec: Vec<&Word> = rest
                        .iter()
                        .skip(1)
                        .filter(|w| !w.value.starts_with('-'))
                        .collect();
                    if rest.first().is_some_and(|w| w.value == "ls-files")
                        && !spec.is_empty()
                        && spec.iter().all(|w| !w.value.contains('/'))
                    {
                        walk.any_of = spec.iter().map(|w| w.value.clone()).collect();
                    }
                    vec![(".".into(), walk)]
                }
                "rg" | "ls" | "fd" | "grep" | "egrep" | "fgrep" => vec![(
                    ".".into(),
                    Walk {
                        follow: true,
                        opens_links: true,
                        ..Walk::default()
                    },
                )],
                _ => vec![(String::new(), Walk::default())],
            }
        }
        _ => Vec::new(),
    }
}

/// The words (value, as written, glob) whose paths the command opens.
fn path_candidates(
    name: &str,
    args: &[Word],
    parsed: &Parsed,
    judgement: &Judgement,
    home: &str,
) -> Vec<(String, String, bool)> {
    let mut out: Vec<(String, String, bool)> = Vec::new();
    let word = |i: usize| (args[i].expanded(home), args[i].raw.clone(), args[i].glob);
    if judgement.only_listed_paths {
        out.extend(judgement.path_words.iter().map(|&i| word(i)));
    } else {
        let mut skip: Vec<usize> = judgement.not_paths.clone();
        // The first operand of grep and rg is the pattern unless given by option.
        let pattern_options: &[&str] = match name {
            "grep" | "egrep" | "fgrep" => &["-e", "-f", "--regexp", "--file"],
            "rg" => &["-e", "-f", "--regexp", "--file", "--files", "--type-list"],
            _ => &[],
        };
        // A glob there is not skipped: only its first expansion is the pattern, the
        // rest are files.
        if !pattern_options.is_empty()
            && !parsed.has(pattern_options)
            && let Some(&first) = parsed.operands.first()
            && !args[first].glob
        {
            skip.push(first);
        }
        if parsed.operands.is_empty() && parsed.options.is_empty() {
            // A command without a table: every word.
            for (i, w) in args.iter().enumerate() {
                if !skip.contains(&i) {
                    out.push((w.expanded(home), w.raw.clone(), w.glob));
                }
            }
        }
        for &i in &parsed.operands {
            if !skip.contains(&i) {
                out.push(word(i));
            }
        }
        for option in &parsed.options {
            // Pattern values are not paths; every other value may be one (`-f FILE`,
            // `-m.env`, `--reference=FILE`).
            if matches!(option.name.as_str(), "-e" | "--regexp") && !pattern_options.is_empty() {
                continue;
            }
            match (option.value_index, &option.value) {
                (Some(i), _) if !skip.contains(&i) => out.push(word(i)),
                (None, Some(value)) if !skip.contains(&option.index) => {
                    let raw = args[option.index].raw.clone();
                    let expanded = value
                        .strip_prefix("~/")
                        .map_or_else(|| value.clone(), |rest| format!("{home}/{rest}"));
                    out.push((expanded, raw, false));
                }
                _ => {}
            }
        }
    }
    out.extend(judgement.paths.iter().map(|p| {
        let expanded = p
            .strip_prefix("~/")
            .map_or_else(|| p.clone(), |rest| format!("{home}/{rest}"));
        (expanded, p.clone(), false)
    }));
    out
}

/// RO-9 on one path the command opens, from every directory it may run in: globs
/// expanded (or judged by pattern when the directory cannot be listed), symlinks and
/// hard links resolved.
fn check_candidate(
    value: &str,
    raw: &str,
    glob: bool,
    ctx: &ClassifyContext,
    cwds: &[PathBuf],
) -> Result<(), Reason> {
    if value.is_empty() {
        return Ok(());
    }
    let fs = ctx.fs.0.as_ref();
    let shown = |why: Reason| Reason {
        text: why
            .text
            .replacen(&format!("`{value}`"), &format!("`{raw}`"), 1),
        ..why
    };
    for cwd in cwds {
        if glob {
            match expand_glob(value, cwd, fs) {
                Some(paths) => {
                    for path in paths {
                        check_open(&path, cwd, &ctx.home, &ctx.paths, fs)
                            .map_err(|why| why.prefixed(&format!("the glob `{raw}`: ")))?;
                    }
                }
                None => {
                    if glob_may_match_secret(&absolute(value, cwd), &ctx.home) {
                        return Err(Reason::secret(format!(
                            "the glob `{raw}` may match a secret"
                        )));
                    }
                }
            }
        }
        check_open(value, cwd, &ctx.home, &ctx.paths, fs).map_err(shown)?;
    }
    Ok(())
}

/// `git -C DIR`: DIR must lie in the repository already judged safe, so that git reads
/// the same config: relative, no `..`, no symlink, and no level holding a `.git` or
/// looking like a bare repository.
fn git_dir_ok(dir: &str, ctx: &ClassifyContext, cwds: &[PathBuf]) -> Result<(), Reason> {
    let path = Path::new(dir);
    if path.is_absolute()
        || dir.starts_with('~')
        || path.components().any(|c| {
            !matches!(
                c,
                std::path::Component::Normal(_) | std::path::Component::CurDir
            )
        })
    {
        return Err(crate::refuse!(
            "`git -C {dir}` could run git in another repository, whose config may run programs"
        ));
    }
    let fs = ctx.fs.0.as_ref();
    for cwd in cwds {
        let mut level = cwd.clone();
        for component in path.components() {
            level.push(component);
            match fs.kind(&level) {
                Some(FileKind::Dir) | None => {}
                Some(_) => {
                    return Err(crate::refuse!(
                        "`git -C {dir}`: {} is not a plain directory",
                        level.display()
                    ));
                }
            }
            let nested = fs.kind(&level.join(".git")).is_some()
                || matches!(fs.kind(&level.join("HEAD")), Some(FileKind::File(_)))
                || matches!(fs.kind(&level.join("objects")), Some(FileKind::Dir));
            if nested {
                return Err(crate::refuse!(
                    "`git -C {dir}`: {} holds another repository, whose config may run programs",
                    level.display()
                ));
            }
        }
    }
    check_candidate(dir, dir, false, ctx, cwds)
}

/// RO-13: no file in the directory (or a parent) that makes the version query run
/// other code.
fn version_config(
    tool: &dev::VersionTool,
    ctx: &ClassifyContext,
    cwds: &[PathBuf],
) -> Result<(), Reason> {
    let fs = ctx.fs.0.as_ref();
    for cwd in cwds {
        for level in cwd.ancestors() {
            for file in dev::risky_config(tool) {
                if fs.kind(&level.join(file)).is_some() {
                    return Err(crate::refuse!(
                        "{} can make `{}` run other code than its version query",
                        level.join(file).display(),
                        tool.name
                    ));
                }
            }
        }
    }
    // The program itself: a version manager's shim or a script runs other programs.
    let dirs = ctx.path.clone().unwrap_or_else(|| {
        std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect())
            .unwrap_or_default()
    });
    for dir in dirs {
        let candidate = dir.join(tool.name);
        if fs.kind(&candidate).is_none() {
            continue;
        }
        let real = fs.canonical(&candidate).unwrap_or(candidate);
        let shown = real.to_string_lossy();
        if ["/shims/", "/.volta/", "/mise/", "/.asdf/"]
            .iter()
            .any(|s| shown.contains(s))
        {
            return Err(crate::refuse!(
                "`{}` is a version manager's shim ({shown}), which runs other programs first",
                tool.name
            ));
        }
        if fs.read(&real, 2).is_some_and(|head| head == b"#!") {
            return Err(crate::refuse!(
                "`{}` is a script ({shown}), which can run other programs",
                tool.name
            ));
        }
        break;
    }
    for file in tool.requires {
        if fs.kind(&ctx.home.join(file)).is_none() {
            return Err(crate::refuse!(
                "~/{file} is missing, so `{}` may write it (or install a toolchain) first",
                tool.name
            ));
        }
    }
    // The user's own shim config, in the home directory.
    for file in dev::risky_config(tool) {
        if !ctx.home.as_os_str().is_empty() && fs.kind(&ctx.home.join(file)).is_some() {
            return Err(crate::refuse!(
                "{} can make `{}` run other code than its version query",
                ctx.home.join(file).display(),
                tool.name
            ));
        }
    }
    Ok(())
}

/// Whether any word or input redirect of `command` names a secret path (as written,
/// `~` expanded, option values included), for suggestions that must not widen a secret
/// read into a prefix rule (PREFIX-2).
pub(crate) fn touches_secret(command: &SimpleCommand, ctx: &ClassifyContext) -> bool {
    let home = ctx.home.to_string_lossy();
    let words = command
        .argv
        .iter()
        .chain(command.redirects.iter().map(|r| &r.target));
    words.into_iter().any(|word| {
        let value = word.expanded(&home);
        let mut candidates = vec![value.clone()];
        if let Some((_, v)) = value.split_once('=') {
            candidates.push(v.to_owned());
        }
        if value.starts_with('-') && !value.starts_with("--") {
            candidates.extend(
                (2..value.len())
                    .filter_map(|i| value.get(i..))
                    .map(str::to_owned),
            );
        }
        candidates.iter().any(|c| {
            let path = absolute(c, &ctx.cwd);
            crate::secrets::secret_match(&path, &ctx.home).is_some()
                || word.glob && glob_may_match_secret(&path, &ctx.home)
        })
    })
}
