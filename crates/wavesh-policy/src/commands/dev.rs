//! Developer tools, only as version queries that provably run nothing else (RO-13).
//!
//! A version query is read-only only for a tool and a spelling that prints the version
//! and exits: `-v` is verbose mode for python (it then runs standard input), and a
//! `version` operand is a file (`python3 version`) or a make target. Where project or
//! user config makes the tool run other code first — a rustup toolchain file with a
//! `path`, a go toolchain directive, a version manager's shim config — the query asks.
//! npm, pnpm, yarn, pip, docker, kubectl and java are not here at all: they write logs
//! or JVM performance data (`/tmp/hsperfdata_*`), check for updates, load project
//! plugins or exec credential plugins even for `--version`.

use crate::Reason;
use wavesh_parse::Word;

use super::{Entry, Judgement};
use crate::flags::Parsed;

/// Version-manager config that makes a shim pick a program by project config.
const SHIM_CONFIG: &[&str] = &[
    ".tool-versions",
    ".mise.toml",
    "mise.toml",
    ".mise.local.toml",
    "mise.local.toml",
    ".config/mise.toml",
    ".mise",
    ".rtx.toml",
];

/// One tool's version spellings, the config files (in the directory or any parent)
/// that make them run project-chosen code, and the programs the query may execute.
pub struct VersionTool {
    /// The command name.
    pub name: &'static str,
    /// The exact argument lists that only print the version.
    pub spellings: &'static [&'static [&'static str]],
    /// Config files that redirect the tool to other code.
    pub config: &'static [&'static str],
    /// Programs the query itself may execute (a rustup proxy runs the toolchain's).
    pub runs: &'static [&'static str],
    /// Files under the home directory that must exist: a rustup proxy without its
    /// settings writes them (and may install a toolchain).
    pub requires: &'static [&'static str],
}

const RUST_CONFIG: &[&str] = &["rust-toolchain", "rust-toolchain.toml"];
const RUSTUP_SETTINGS: &[&str] = &[".rustup/settings.toml"];

/// The version queries wavesh approves.
pub const VERSION_TOOLS: &[VersionTool] = &[
    VersionTool {
        name: "cargo",
        spellings: &[&["--version"], &["-V"]],
        config: RUST_CONFIG,
        runs: &["cargo", "rustup"],
        requires: RUSTUP_SETTINGS,
    },
    VersionTool {
        name: "rustc",
        spellings: &[
            &["--version"],
            &["-V"],
            &["-vV"],
            &["--version", "--verbose"],
        ],
        config: RUST_CONFIG,
        runs: &["rustc", "rustup"],
        requires: RUSTUP_SETTINGS,
    },
    VersionTool {
        name: "rustup",
        spellings: &[&["--version"], &["-V"]],
        config: RUST_CONFIG,
        runs: &["rustup", "rustc"],
        requires: RUSTUP_SETTINGS,
    },
    VersionTool {
        name: "node",
        spellings: &[&["--version"], &["-v"]],
        config: &[".nvmrc", ".node-version"],
        runs: &["node"],
        requires: &[],
    },
    VersionTool {
        name: "python",
        spellings: &[&["--version"], &["-V"], &["-VV"]],
        config: &[".python-version"],
        runs: &["python"],
        requires: &[],
    },
    VersionTool {
        name: "python3",
        spellings: &[&["--version"], &["-V"], &["-VV"]],
        config: &[".python-version"],
        runs: &["python3"],
        requires: &[],
    },
    VersionTool {
        name: "go",
        spellings: &[&["version"]],
        // The go or toolchain line of go.mod / go.work downloads and runs another
        // toolchain (GOTOOLCHAIN=auto).
        config: &["go.mod", "go.work"],
        runs: &["go"],
        requires: &[],
    },
    VersionTool {
        name: "ruby",
        spellings: &[&["--version"]],
        config: &[".ruby-version"],
        runs: &["ruby"],
        requires: &[],
    },
    VersionTool {
        name: "deno",
        spellings: &[&["--version"], &["-V"]],
        config: &[],
        runs: &["deno"],
        requires: &[],
    },
    VersionTool {
        name: "bun",
        spellings: &[&["--version"]],
        config: &[],
        runs: &["bun"],
        requires: &[],
    },
    VersionTool {
        name: "make",
        spellings: &[&["--version"], &["-v"]],
        config: &[],
        runs: &["make"],
        requires: &[],
    },
    VersionTool {
        name: "cmake",
        spellings: &[&["--version"]],
        config: &[],
        runs: &["cmake"],
        requires: &[],
    },
    VersionTool {
        name: "gcc",
        spellings: &[&["--version"]],
        config: &[],
        runs: &["gcc"],
        requires: &[],
    },
    VersionTool {
        name: "cc",
        spellings: &[&["--version"]],
        config: &[],
        runs: &["cc"],
        requires: &[],
    },
    VersionTool {
        name: "clang",
        spellings: &[&["--version"]],
        config: &[],
        runs: &["clang"],
        requires: &[],
    },
];

/// The version tool of a command name.
pub fn version_tool(name: &str) -> Option<&'static VersionTool> {
    VERSION_TOOLS.iter().find(|t| t.name == name)
}

/// The config files that make `tool`'s query run other code, shims' included.
pub fn risky_config(tool: &VersionTool) -> impl Iterator<Item = &'static str> {
    tool.config.iter().chain(SHIM_CONFIG).copied()
}

/// The shape of a version query of any tool (classify checks the tool's own spellings
/// and its config with [`spelling`] and [`risky_config`]).
fn spelling_of_any(args: &[Word], _: &Parsed) -> Result<Judgement, Reason> {
    let values: Vec<&str> = args.iter().map(|w| w.value.as_str()).collect();
    if VERSION_TOOLS
        .iter()
        .any(|t| t.spellings.contains(&values.as_slice()))
    {
        Ok(Judgement::default())
    } else {
        Err("only a version query is read-only for this tool".into())
    }
}

/// Whether `args` is one of `tool`'s spellings.
pub fn spelling(tool: &VersionTool, args: &[Word]) -> Result<Judgement, Reason> {
    let values: Vec<&str> = args.iter().map(|w| w.value.as_str()).collect();
    // `go env [-json] [NAME...]` prints settings (without -w or -u, which write).
    let go_env = tool.name == "go"
        && values.first() == Some(&"env")
        && values[1..].iter().all(|v| {
            *v == "-json"
                || v.chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        });
    if go_env || tool.spellings.contains(&values.as_slice()) {
        Ok(Judgement::default())
    } else {
        let known: Vec<String> = tool.spellings.iter().map(|s| s.join(" ")).collect();
        Err(crate::refuse!(
            "only a version query ({}) is read-only for `{}`",
            known.join(", "),
            tool.name
        ))
    }
}

pub(super) const COMMANDS: &[Entry] = &[
    ("cargo", None, Some(spelling_of_any)),
    ("rustc", None, Some(spelling_of_any)),
    ("rustup", None, Some(spelling_of_any)),
    ("node", None, Some(spelling_of_any)),
    ("python", None, Some(spelling_of_any)),
    ("python3", None, Some(spelling_of_any)),
    ("go", None, Some(spelling_of_any)),
    ("ruby", None, Some(spelling_of_any)),
    ("deno", None, Some(spelling_of_any)),
    ("bun", None, Some(spelling_of_any)),
    ("make", None, Some(spelling_of_any)),
    ("cmake", None, Some(spelling_of_any)),
    ("gcc", None, Some(spelling_of_any)),
    ("cc", None, Some(spelling_of_any)),
    ("clang", None, Some(spelling_of_any)),
];
