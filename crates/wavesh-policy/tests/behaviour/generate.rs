//! The generator: command variants derived from the flag tables and the command lists
//! (RO-14). Every flag; attached, separated and `=` values; clusters; long-option
//! abbreviations; globs over hostile names; `--`; odd quoting; NUL; `cd` prefixes;
//! pipes into read-only commands.

use wavesh_policy::commands::{self, dev, search};
use wavesh_policy::flags::ValueKind;

/// Values tried for an option that takes one: plain, numeric, format-like and hostile.
const VALUES: &[&str] = &[
    "3",
    "a.txt",
    "x",
    "%s",
    ".env",
    "-fprint",
    "~/.ssh/id_rsa",
    "/proc/self/environ",
    "src",
    "link.txt",
    "docs/guide.md",
    "'a b'",
    "10K",
    ":",
];

/// Operands tried after the options.
const OPERANDS: &[&str] = &[
    "a.txt",
    "src/main.rs",
    "docs",
    "*",
    "*.txt",
    "./*",
    "-- *",
    ".env",
    "link.txt",
    "~/.netrc",
    "$'a.txt\\0x'",
    "'a.txt'",
    "\"b.txt\"",
    "a.txt b.txt",
    "",
];

/// Prefixes and suffixes that move or pipe the command.
const WRAPS: &[(&str, &str)] = &[
    ("", ""),
    ("cd src && ", ""),
    ("cd ~ && ", ""),
    ("cat a.txt | ", ""),
    ("", " | head -5"),
    ("timeout 5 ", ""),
    ("LANG=C ", ""),
];

fn value_for(kind: ValueKind, i: usize) -> &'static str {
    match kind {
        ValueKind::Number => ["3", "10", "+2", "-1", "5K"][i % 5],
        ValueKind::Char => ["x", ":", ","][i % 3],
        ValueKind::Braces => "{}",
        _ => VALUES[i % VALUES.len()],
    }
}

/// Every variant, in a stable order.
pub fn variants() -> Vec<String> {
    let mut out = Vec::new();
    let mut n = 0usize;
    for name in commands::names() {
        let Some(policy) = commands::lookup(name) else {
            continue;
        };
        if dev::version_tool(name).is_some() {
            continue;
        }
        let Some(table) = &policy.table else { continue };
        let declared = table.declared();
        let operand = |n: usize| OPERANDS[n % OPERANDS.len()];
        out.push(format!("{name} {}", operand(n)));
        for (flag, kind) in &declared {
            n += 1;
            let long = flag.starts_with("--");
            match kind {
                ValueKind::None => {
                    out.push(format!("{name} {flag} {}", operand(n)));
                    out.push(format!("{name} '{flag}' {}", operand(n + 3)));
                    if long && flag.len() > 4 {
                        // An abbreviation git and getopt accept.
                        out.push(format!(
                            "{name} {} {}",
                            &flag[..flag.len() - 1],
                            operand(n + 1)
                        ));
                    }
                }
                ValueKind::OptionalString => {
                    let value = value_for(*kind, n);
                    if long {
                        out.push(format!("{name} {flag}={value} {}", operand(n)));
                        // Only attached: the next word is an operand.
                        out.push(format!("{name} {flag} {value} {}", operand(n + 1)));
                    } else {
                        out.push(format!("{name} {flag}{value} {}", operand(n)));
                        out.push(format!("{name} {flag} {value}"));
                    }
                }
                kind => {
                    for i in 0..3 {
                        let value = value_for(*kind, n + i);
                        if long {
                            out.push(format!("{name} {flag}={value} {}", operand(n + i)));
                            out.push(format!("{name} {flag} {value} {}", operand(n + i + 1)));
                        } else {
                            out.push(format!("{name} {flag} {value} {}", operand(n + i)));
                            out.push(format!("{name} {flag}{value} {}", operand(n + i + 2)));
                        }
                    }
                }
            }
        }
        // Clusters: two flags without value, and one with an attached value.
        let shorts: Vec<&(String, ValueKind)> = declared
            .iter()
            .filter(|(f, _)| !f.starts_with("--"))
            .collect();
        for pair in shorts.windows(2) {
            n += 1;
            let (a, ka) = pair[0];
            let (b, kb) = pair[1];
            if *ka == ValueKind::None {
                let value = if *kb == ValueKind::None {
                    ""
                } else {
                    value_for(*kb, n)
                };
                out.push(format!(
                    "{name} -{}{}{value} {}",
                    &a[1..],
                    &b[1..],
                    operand(n)
                ));
            }
        }
        for (prefix, suffix) in WRAPS {
            n += 1;
            out.push(format!("{prefix}{name} {}{suffix}", operand(n)));
        }
    }
    out.extend(special());
    out
}

/// Commands whose arguments a callback judges: sed scripts, jq filters, find
/// expressions, xargs, ps, date, printenv, git, version queries.
fn special() -> Vec<String> {
    let mut out = Vec::new();
    for script in [
        "p",
        "1,3p",
        "s/a/b/",
        "s/a/b/w out",
        "s/a/b/e",
        ":a;w out",
        "1e id",
        "r ~/.ssh/id_rsa",
        "r a.txt",
        "/x/{p;w out\n}",
        "y/ab/ba/",
        "$!N",
        "b end;e id",
        "=",
        "l",
        "F",
        "1R .env",
    ] {
        out.push(format!("sed -n '{script}' a.txt"));
        out.push(format!("sed -ne '{script}' a.txt"));
        out.push(format!("sed --expression='{script}' a.txt"));
    }
    for filter in [
        ".",
        ".key",
        ".a.env",
        "env",
        "$ENV",
        "$ ENV",
        "input_filename",
        "$__loc__",
        "keys",
        "\"\\(env.HOME)\"",
        "map(.)",
        "include \"x\"; .",
    ] {
        out.push(format!("jq '{filter}' j.json"));
        out.push(format!("jq -n '{filter}'"));
        out.push(format!("jq --args '{filter}' a b"));
    }
    for test in search::NO_VALUE {
        out.push(format!("find . -maxdepth 1 {test}"));
    }
    for test in search::ONE_VALUE {
        for value in ["a.txt", "1", "f", "*.txt"] {
            out.push(format!("find . -maxdepth 1 {test} '{value}'"));
        }
    }
    for exec in [
        "grep -l a {} +",
        "wc -l {} +",
        "cat {} \\;",
        "sh -c id \\;",
        "rm {} \\;",
        "head -1 {} +",
    ] {
        out.push(format!("find . -maxdepth 1 -name '*.txt' -exec {exec}"));
        out.push(format!("find . -maxdepth 1 -name '*.txt' -execdir {exec}"));
    }
    for find in [
        "find * -name x",
        "find ./* -name x",
        "find src",
        "find -L . -name a.txt",
    ] {
        out.push(find.to_owned());
    }
    for xargs in [
        "xargs cat",
        "xargs ls -la",
        "xargs wc -l",
        "xargs grep -l a",
        "xargs grep -l a --",
        "xargs --max-lines rm",
        "xargs -l rm",
        "xargs -i rm {}",
        "xargs -0 cat",
        "xargs -n1 echo",
        "xargs -a a.txt echo",
        "xargs sh -c id",
        "xargs -I{} cat {}",
    ] {
        out.push(format!("printf 'a.txt\\nb.txt\\n' | {xargs}"));
        out.push(format!("ls | {xargs}"));
        out.push(format!("find . -name '*.txt' | {xargs}"));
    }
    for ps in [
        "ps",
        "ps aux",
        "ps -ef",
        "ps e",
        "ps axe",
        "ps eww",
        "ps aux1e",
        "ps -E",
        "ps -o pid,comm",
        "ps --sort=pid",
        "ps -p 1",
    ] {
        out.push(ps.to_owned());
    }
    for date in [
        "date",
        "date +%F",
        "date -d yesterday +%F",
        "date -r a.txt",
        "date -f .env",
        "date 0101",
        "date -s now",
        "date -u",
        "date --date=@1",
    ] {
        out.push(date.to_owned());
    }
    for name in ["PATH", "HOME", "SECRET_TOKEN", "AWS_SECRET_ACCESS_KEY", ""] {
        out.push(format!("printenv {name}"));
    }
    for sub in wavesh_policy::git::READ_ONLY {
        out.push(format!("git {sub}"));
        out.push(format!("git --no-pager {sub} -- a.txt"));
    }
    for git in [
        "git log --oneline -3",
        "git show HEAD:a.txt",
        "git show HEAD:.env",
        "git diff --no-index a.txt b.txt",
        "git diff --no-index .env a.txt",
        "git branch --del x",
        "git branch -r --del x",
        "git tag -l",
        "git -C src log -1",
        "git -C .. log",
        "git ls-remote",
        "git status --short",
        "git blame a.txt",
    ] {
        out.push(git.to_owned());
    }
    for tool in dev::VERSION_TOOLS {
        for spelling in tool.spellings {
            out.push(format!("{} {}", tool.name, spelling.join(" ")));
        }
        out.push(format!("{} version", tool.name));
        out.push(format!("{} -v", tool.name));
    }
    for redirect in [
        "wc -l 0< a.txt",
        "cat < /dev/tcp/127.0.0.1/9",
        "cat < .env",
        "cat < link.txt",
        "wc -l < a.txt",
    ] {
        out.push(redirect.to_owned());
    }
    out
}
