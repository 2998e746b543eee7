//! The read-only command lists: which commands, with which options, are provably free of
//! side effects. Data, one module per family; see `docs/readonly.md`.

mod awk;
pub mod dev;
mod readers;
pub mod search;
mod sysinfo;
mod text;

use crate::Reason;
use std::collections::HashMap;
use std::sync::LazyLock;

use std::ops::Range;

use wavesh_parse::Word;

use crate::flags::{FlagTable, Parsed};

/// What a command's callback found beyond its flag table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Judgement {
    /// Indices of words that are not paths the command opens (a grep pattern, a jq
    /// filter, a sed script): the path policy skips them.
    pub not_paths: Vec<usize>,
    /// Every word is judged here: the generic path scan is skipped, and only `paths`
    /// and the words at `path_words` are paths.
    pub only_listed_paths: bool,
    /// Indices of words that are paths (when `only_listed_paths`).
    pub path_words: Vec<usize>,
    /// Further paths it opens, found inside words (`sed 'r FILE'`).
    pub paths: Vec<String>,
    /// Commands it runs, as ranges of the argument words (`xargs CMD`, `find -exec`).
    pub runs: Vec<Range<usize>>,
    /// The commands it runs get more operands from standard input (`xargs`).
    pub runs_get_input_names: bool,
    /// A script file whose text the caller must read and check (`sed -f FILE`).
    pub script_files: Vec<String>,
}

/// A command-specific check run after the flag table (RO-4's danger callbacks), with
/// what the table parsed (empty for commands without a table).
pub type Callback = fn(&[Word], &Parsed) -> Result<Judgement, Reason>;

/// How a command's arguments are judged.
pub struct CommandPolicy {
    /// Options and positionals it may take; `None` means any argument (only for
    /// commands with no option that writes or runs a program, RO-11).
    pub table: Option<FlagTable>,
    /// A check of the whole argv (without the name), if the command needs one.
    pub callback: Option<Callback>,
}

/// One entry of a family's list: name, flag spec (`None` for any argument), callback.
pub(crate) type Entry = (&'static str, Option<&'static str>, Option<Callback>);

/// Programs a listed command itself executes (egrep and fgrep are scripts that run
/// grep); the behaviour check allows exactly these besides the command (RO-14).
pub fn runs(name: &str) -> &'static [&'static str] {
    match name {
        "egrep" | "fgrep" => &["grep"],
        // Without a command, xargs runs echo.
        "xargs" => &["echo"],
        // A shell script on Debian.
        "lsb_release" => &["cut", "getopt", "tr"],
        _ => dev::version_tool(name).map_or(&[], |tool| tool.runs),
    }
}

/// Commands that never open their operands (they print or compare the words): the
/// path policy does not judge their words.
pub const NO_OPEN: &[&str] = &[
    "echo",
    "printf",
    "basename",
    "dirname",
    "expr",
    "true",
    "false",
    "seq",
    "which",
    "type",
    "command",
    "pwd",
    "hostname",
    "uname",
    "id",
    "whoami",
    "groups",
    "nproc",
    "arch",
    "tty",
    "locale",
    "getconf",
    "printenv",
    "uptime",
    "free",
    "lsb_release",
    "sw_vers",
    "test",
    "[",
];

static REGISTRY: LazyLock<HashMap<&'static str, CommandPolicy>> = LazyLock::new(|| {
    let families: [&[Entry]; 5] = [
        readers::COMMANDS,
        text::COMMANDS,
        search::COMMANDS,
        sysinfo::COMMANDS,
        dev::COMMANDS,
    ];
    families
        .iter()
        .flat_map(|family| family.iter())
        .map(|(name, spec, callback)| {
            (
                *name,
                CommandPolicy {
                    table: spec.map(FlagTable::parse),
                    callback: *callback,
                },
            )
        })
        .collect()
});

/// The policy of a command by name.
pub fn lookup(name: &str) -> Option<&'static CommandPolicy> {
    REGISTRY.get(name)
}

/// Every command name with a read-only policy, sorted (for documentation and tests).
pub fn names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = REGISTRY.keys().copied().collect();
    names.sort_unstable();
    names
}

/// The sed script scanner, for scripts the classifier reads from `sed -f FILE`.
pub(crate) fn text_sed_script(script: &str) -> Result<Vec<String>, Reason> {
    text::sed_script(script)
}
