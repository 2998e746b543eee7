//! Variants drawn from the programs' own option lists (RO-14), not from the classifier's
//! tables: each table-backed program's `--help` and each read-only git subcommand's
//! `-h`, as the programs installed here print them. A flag the tables lack, an
//! abbreviation the program accepts, or a value form the tables do not model is tried
//! the way the program documents it, so the check does not share the tables' blind
//! spots.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};

use wavesh_policy::commands::{self, dev};

/// Values tried for an option that takes one.
const VALUES: &[&str] = &["3", "a.txt", "x", ".env", "~/.ssh/id_rsa", "%s", "out.txt"];

/// Operands tried after the option.
const OPERANDS: &[&str] = &["a.txt", "src", "*", ".env", ""];

/// One option as a help text shows it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct HelpOption {
    name: String,
    /// Shown with a value (`--width=N`, `--color[=WHEN]`, `-t SEP`).
    value: bool,
}

/// What was drawn, for the figures.
pub struct Drawn {
    /// Programs whose help listed at least one option.
    pub programs: usize,
    /// Options found over all of them.
    pub options: usize,
    pub variants: Vec<String>,
}

/// The options a help text lists: every word shaped as one (`-x`, `--name`, with
/// `=VALUE`, `[=VALUE]` or a following upper-case word for a value). Words in the
/// descriptions count too: more variants, never fewer.
fn options(help: &str) -> BTreeSet<HelpOption> {
    let mut found = BTreeSet::new();
    for line in help.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        for (i, raw) in words.iter().enumerate() {
            let word = raw.trim_end_matches([',', ';', ')', '.', ':', '|', ']']);
            let word = word.trim_start_matches(['(', '[', '|']);
            // `-t SEP`, `-n <n>`, `--max-count [N]`: a value word follows.
            let next_is_value = words.get(i + 1).is_some_and(|next| {
                let bare = next.trim_start_matches(['<', '[']);
                next.starts_with('<')
                    || bare.chars().next().is_some_and(|c| c.is_ascii_uppercase())
                        && bare
                            .chars()
                            .all(|c| c.is_ascii_uppercase() || "_-<>]=.,".contains(c))
            });
            if let Some(long) = word.strip_prefix("--") {
                // `--[no-]name` as git prints it: the name; its `--no-` form is drawn
                // for every long option anyway.
                let long = long.strip_prefix("[no-]").unwrap_or(long);
                let name: String = long
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                    .collect();
                if name.len() < 2 || !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
                    continue;
                }
                let rest = &long[name.len()..];
                let value = rest.starts_with('=') || rest.starts_with("[=") || next_is_value;
                found.insert(HelpOption {
                    name: format!("--{name}"),
                    value,
                });
            } else if let Some(short) = word.strip_prefix('-') {
                let mut chars = short.chars();
                let (Some(c), rest) = (chars.next(), chars.as_str()) else {
                    continue;
                };
                if !c.is_ascii_alphanumeric() {
                    continue;
                }
                let value = next_is_value || rest.starts_with('[') || rest.starts_with('<');
                if rest.is_empty() || value {
                    found.insert(HelpOption {
                        name: format!("-{c}"),
                        value,
                    });
                }
            }
        }
    }
    found
}

/// The program's help, as it prints it here (stdout and stderr: git prints `-h` on
/// stdout with status 129, others on stderr), within five seconds.
fn help(program: &[&str], flag: &str, work: &Path, home: &Path) -> String {
    let output = Command::new("timeout")
        .arg("5")
        .args(program)
        .arg(flag)
        .current_dir(work)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("LC_ALL", "C")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(Stdio::null())
        .output();
    match output {
        Ok(output) => {
            let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
            text.push_str(&String::from_utf8_lossy(&output.stderr));
            text
        }
        Err(_) => String::new(),
    }
}

/// The variants of one option of `prefix` (the program, or `git SUB`).
fn option_variants(prefix: &str, option: &HelpOption, n: &mut usize, out: &mut Vec<String>) {
    let mut next = || {
        *n += 1;
        (VALUES[*n % VALUES.len()], OPERANDS[*n % OPERANDS.len()])
    };
    let name = &option.name;
    if let Some(long) = name.strip_prefix("--") {
        let (value, operand) = next();
        out.push(format!("{prefix} {name} {operand}"));
        if option.value {
            out.push(format!("{prefix} {name}={value} {operand}"));
            out.push(format!("{prefix} {name} {value} {operand}"));
        }
        // Every abbreviation getopt_long and git's parser may accept.
        for len in 2..long.len() {
            let (value, operand) = next();
            let abbreviation = &name[..len + 2];
            out.push(format!("{prefix} {abbreviation} {operand}"));
            if option.value {
                out.push(format!("{prefix} {abbreviation}={value} {operand}"));
            }
        }
        if !long.starts_with("no-") {
            let (_, operand) = next();
            out.push(format!("{prefix} --no-{long} {operand}"));
        }
    } else {
        let (value, operand) = next();
        out.push(format!("{prefix} {name} {operand}"));
        out.push(format!("{prefix} {name}{value} {operand}"));
        out.push(format!("{prefix} {name} {value} {operand}"));
    }
}

/// Every variant drawn from the programs' own option lists, in a stable order.
pub fn variants(work: &Path, home: &Path) -> Drawn {
    let mut out = Vec::new();
    let mut programs = 0;
    let mut total = 0;
    let mut n = 0usize;
    let mut draw = |prefix: &str, help_text: &str, out: &mut Vec<String>| {
        let found = options(help_text);
        if found.is_empty() {
            return;
        }
        programs += 1;
        total += found.len();
        for option in &found {
            option_variants(prefix, option, &mut n, out);
        }
    };
    for name in commands::names() {
        let Some(policy) = commands::lookup(name) else {
            continue;
        };
        if policy.table.is_none() || dev::version_tool(name).is_some() {
            continue;
        }
        let text = help(&[name], "--help", work, home);
        draw(name, &text, &mut out);
    }
    for sub in wavesh_policy::git::READ_ONLY {
        let text = help(&["git", sub], "-h", work, home);
        draw(&format!("git {sub}"), &text, &mut out);
    }
    Drawn {
        programs,
        options: total,
        variants: out,
    }
}

#[test]
fn help_texts_are_read_as_option_lists() {
    let found = options(
        "  -a, --all                  do not ignore entries\n  -w, --width=COLS  set width\n      --color[=WHEN]  colorize\n  -t SEP   separator\n    --[no-]renames   detect\n  -n <n>, --max-count <n>\n",
    );
    let names: Vec<(&str, bool)> = found.iter().map(|o| (o.name.as_str(), o.value)).collect();
    for expected in [
        ("-a", false),
        ("--all", false),
        ("-w", false),
        ("--width", true),
        ("--color", true),
        ("-t", true),
        ("-n", true),
        ("--renames", false),
        ("--max-count", true),
    ] {
        assert!(names.contains(&expected), "{expected:?} not in {names:?}");
    }
}
