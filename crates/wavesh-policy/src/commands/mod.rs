//! The read-only command lists: which commands, with which options, are provably free of
//! side effects. Data, one module per family; see `docs/readonly.md`.

mod dev;
mod readers;
mod search;
mod sysinfo;
mod text;

use std::collections::HashMap;
use std::sync::LazyLock;

use wavesh_parse::Word;

use crate::flags::FlagTable;

/// A command-specific check run before the flag table (RO-4's danger callbacks).
pub type Callback = fn(&[Word]) -> Result<(), String>;

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

/// The positional arguments of `args` under `table`-less scanning: words not starting
/// with `-`, and everything after `--`.
pub(crate) fn positionals(args: &[Word]) -> Vec<&Word> {
    let mut out = Vec::new();
    let mut done = false;
    for word in args {
        if done || !word.value.starts_with('-') || word.value == "-" {
            out.push(word);
        } else if word.value == "--" {
            done = true;
        }
    }
    out
}
