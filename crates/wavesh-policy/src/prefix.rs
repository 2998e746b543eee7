//! "Always allow" suggestions (PREFIX-1..4): a stable prefix rule per command that needs
//! approval, as narrow as safe and as broad as useful.

use wavesh_parse::SimpleCommand;

use crate::env::is_inert;
use crate::registry::{Node, registry};

/// Commands that never get a prefix rule: the rule would allow anything (PREFIX-2).
pub const HIGH_RISK_ROOTS: &[&str] = &[
    "rm",
    "rmdir",
    "shred",
    "dd",
    "mkfs",
    "chmod",
    "chown",
    "chgrp",
    "sh",
    "bash",
    "zsh",
    "fish",
    "dash",
    "powershell",
    "pwsh",
    "cmd",
    "eval",
    "exec",
    "source",
    ".",
    "xargs",
    "su",
    "doas",
];

/// Wrappers looked through (at most two layers) to find the command's own words; they
/// stay in the rule so that it matches the command it was made for (PREFIX-2).
const WRAPPERS: &[&str] = &["env", "sudo", "nohup", "time", "command"];

/// The stable prefix of one command, or `None` when it cannot be computed (the caller
/// then suggests the exact command).
pub fn stable_prefix(command: &SimpleCommand) -> Option<Vec<String>> {
    if command.argv.iter().any(|w| !w.is_static()) {
        return None;
    }
    // Inert assignments are left out of the rule; any other assignment makes the exact
    // command the only safe suggestion.
    if command
        .assignments
        .iter()
        .any(|(name, value)| !is_inert(name, value))
    {
        return None;
    }
    let words: Vec<&str> = command.argv.iter().map(|w| w.value.as_str()).collect();
    let mut prefix: Vec<String> = Vec::new();
    let mut i = 0;
    for _ in 0..2 {
        let Some(word) = words.get(i) else { break };
        if !WRAPPERS.contains(word) {
            break;
        }
        prefix.push((*word).to_owned());
        i += 1;
        // The wrapper's own options and env's assignments belong to it.
        while let Some(next) = words.get(i) {
            if next.starts_with('-')
                || (prefix.last().is_some_and(|w| w == "env") && next.contains('='))
            {
                prefix.push((*next).to_owned());
                i += 1;
            } else {
                break;
            }
        }
    }
    let root = *words.get(i)?;
    let base = root.rsplit('/').next().unwrap_or(root);
    if HIGH_RISK_ROOTS.contains(&base) {
        return None;
    }
    let rest = &words[i + 1..];
    if risky_option(base, rest) {
        return None;
    }
    prefix.push(root.to_owned());
    if let Some(narrow) = interpreter(base, rest) {
        prefix.extend(narrow?);
        return Some(prefix);
    }
    let depth = fixed_depth(base, rest)
        .or_else(|| registry_walk(base, rest))
        .or_else(|| unknown_command(root, rest))?;
    prefix.extend(depth);
    Some(prefix)
}

/// Interpreters: a prefix of the interpreter alone would allow any code. Inline code
/// (`-c`, `-e`, `--eval`, `eval`) or a REPL gets the exact command (`None` inside);
/// a script gets `interpreter script` (PREFIX-2). `None` outside: not an interpreter.
#[expect(
    clippy::option_option,
    reason = "not an interpreter / no prefix / a prefix"
)]
fn interpreter(root: &str, rest: &[&str]) -> Option<Option<Vec<String>>> {
    const INTERPRETERS: &[&str] = &[
        "python",
        "python2",
        "python3",
        "node",
        "nodejs",
        "ruby",
        "perl",
        "php",
        "lua",
        "deno",
        "bun",
        "Rscript",
        "julia",
        "tclsh",
        "awk",
        "gawk",
        "osascript",
        "java",
        "groovy",
    ];
    const INLINE: &[&str] = &[
        "-c",
        "-e",
        "-E",
        "--eval",
        "-p",
        "--print",
        "eval",
        "-r",
        "--require",
        "--import",
        "--loader",
        "-i",
        "-jar",
    ];
    let base = root.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    if !INTERPRETERS.contains(&root) && !INTERPRETERS.contains(&base) {
        return None;
    }
    // `python -m module` and `npm`-like fixed depths are handled by PREFIX-3.
    if matches!(root, "python" | "python3") && rest.first() == Some(&"-m") {
        return None;
    }
    if matches!(root, "deno" | "bun")
        && rest
            .first()
            .is_some_and(|w| matches!(*w, "task" | "run" | "test"))
    {
        if rest.first() == Some(&"run") && rest.len() < 2 {
            return Some(None);
        }
        if rest.first() != Some(&"run") {
            return None;
        }
    }
    if rest
        .iter()
        .any(|w| INLINE.contains(w) || w.starts_with("--eval=") || w.starts_with("-c"))
    {
        return Some(None);
    }
    let script = rest.iter().find(|w| !w.starts_with('-') && **w != "run");
    Some(script.map(|script| {
        let mut words = Vec::new();
        if rest.first() == Some(&"run") {
            words.push("run".to_owned());
        }
        words.push((*script).to_owned());
        words
    }))
}

/// Commands whose risky part is an option: a prefix rule would allow the option with
/// anything (`find . -exec rm {} \;` must not become `find:*`) (PREFIX-2).
fn risky_option(root: &str, rest: &[&str]) -> bool {
    let any = |names: &[&str]| rest.iter().any(|w| names.contains(w));
    match root {
        "find" => any(&[
            "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf",
            "-fls",
        ]),
        "sed" => rest.iter().any(|w| {
            w.starts_with("-i")
                || w.starts_with("--in-place")
                || (w.starts_with('-') && !w.starts_with("--") && w.contains('i'))
        }),
        _ => rest.iter().any(|w| {
            w.starts_with("--output")
                || w.starts_with("--pre")
                || w.starts_with("--exec")
                || *w == "-exec"
                || *w == "-o" && matches!(root, "sort" | "tree")
        }),
    }
}

fn is_plain_word(word: &str) -> bool {
    word.starts_with(|c: char| c.is_ascii_lowercase())
        && word
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

/// A command the registry does not know: its first operand when it reads like a
/// subcommand (`apt-get install`), else the command alone. A path (`./deploy.sh`) gets
/// no prefix: the exact command is suggested instead.
fn unknown_command(root: &str, rest: &[&str]) -> Option<Vec<String>> {
    if root.contains('/') {
        return None;
    }
    let first = rest.iter().find(|w| !w.starts_with('-'));
    let subcommand = first.filter(|w| is_plain_word(w));
    Some(
        subcommand
            .map(|w| vec![(*w).to_owned()])
            .unwrap_or_default(),
    )
}

/// PREFIX-3: commands whose useful depth is fixed.
fn fixed_depth(root: &str, rest: &[&str]) -> Option<Vec<String>> {
    let take = |n: usize| -> Option<Vec<String>> {
        let words: Vec<String> = rest
            .iter()
            .filter(|w| !w.starts_with('-'))
            .take(n)
            .map(|w| (*w).to_owned())
            .collect();
        (words.len() == n).then_some(words)
    };
    match root {
        "python" | "python3" => match rest {
            ["-m", module, ..] => Some(vec!["-m".into(), (*module).to_owned()]),
            _ => None,
        },
        "npm" | "pnpm" | "yarn" | "bun" if rest.first() == Some(&"run") => rest
            .get(1)
            .filter(|s| !s.starts_with('-'))
            .map(|script| vec!["run".into(), (*script).to_owned()]),
        "deno" if rest.first() == Some(&"task") => rest
            .get(1)
            .map(|name| vec!["task".into(), (*name).to_owned()]),
        "make" | "just" => take(1),
        "aws" | "az" => take(1),
        "gcloud" => take(2),
        _ => None,
    }
}

/// PREFIX-4: skip known options (with their value) and descend the subcommand tree.
fn registry_walk(root: &str, rest: &[&str]) -> Option<Vec<String>> {
    let registry = registry();
    let mut node: &Node = registry.get(root)?;
    let mut chain = Vec::new();
    let mut i = 0;
    while let Some(word) = rest.get(i) {
        if word.starts_with('-') {
            i += 1 + usize::from(node.option(word) == Some(true));
            continue;
        }
        let Some(child) = node.subcommands.get(*word) else {
            // At the root of a command that takes a subcommand (or runs a command, like
            // npx), an unknown word is a plugin or a tool: `cargo clippy`, `npx prettier`.
            // Without it the rule would allow every subcommand.
            let expects_one =
                !node.subcommands.is_empty() || node.args & crate::registry::bits::COMMAND != 0;
            if chain.is_empty() && expects_one && is_plain_word(word) {
                chain.push((*word).to_owned());
            }
            break;
        };
        chain.push((*word).to_owned());
        node = match &child.link {
            Some(link) => registry.get(link).unwrap_or(child),
            None => child,
        };
        i += 1;
    }
    Some(chain)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wavesh_parse::{Dialect, analyze};

    fn prefix(command: &str) -> Option<String> {
        let analysis = analyze(command, Dialect::Bash);
        stable_prefix(&analysis.commands[0]).map(|words| words.join(" "))
    }

    #[test]
    fn prefix_3_and_4() {
        assert_eq!(prefix("npm run build").as_deref(), Some("npm run build"));
        assert_eq!(prefix("git commit -m \"x\"").as_deref(), Some("git commit"));
        assert_eq!(
            prefix("docker compose up -d").as_deref(),
            Some("docker compose up")
        );
        assert_eq!(prefix("cargo test -p foo").as_deref(), Some("cargo test"));
        assert_eq!(
            prefix("python -m pytest tests").as_deref(),
            Some("python -m pytest")
        );
        assert_eq!(prefix("aws s3 ls s3://b").as_deref(), Some("aws s3"));
        assert_eq!(
            prefix("gcloud compute instances list").as_deref(),
            Some("gcloud compute instances")
        );
        assert_eq!(
            prefix("kubectl get pods -n x").as_deref(),
            Some("kubectl get")
        );
        assert_eq!(prefix("make test").as_deref(), Some("make test"));
        assert_eq!(prefix("rm -rf build"), None);
        assert_eq!(
            prefix("sudo apt-get install -y jq").as_deref(),
            Some("sudo apt-get install")
        );
        assert_eq!(prefix("LANG=C npm test").as_deref(), Some("npm test"));
        assert_eq!(prefix("FOO=1 npm test"), None);
    }

    #[test]
    fn prefix_2_interpreters_never_widen_to_any_code() {
        for inline in [
            "python3 -c \"import os\"",
            "python -c 1",
            "node -e 'require(1)'",
            "node --eval x",
            "ruby -e 1",
            "perl -e 1",
            "php -r 1",
            "deno eval 1",
            "bun -e 1",
            "python3",
            "node -p 1",
            "python3 -i x.py",
            "java -jar x.jar",
        ] {
            assert_eq!(prefix(inline), None, "{inline}");
        }
        assert_eq!(
            prefix("python3 manage.py migrate").as_deref(),
            Some("python3 manage.py")
        );
        assert_eq!(
            prefix("node scripts/build.js --prod").as_deref(),
            Some("node scripts/build.js")
        );
        assert_eq!(
            prefix("python -m pytest tests").as_deref(),
            Some("python -m pytest")
        );
        assert_eq!(prefix("deno task dev").as_deref(), Some("deno task dev"));
    }

    #[test]
    fn prefix_2_a_risky_option_gets_the_exact_command() {
        for risky in [
            "find . -exec rm {} \\;",
            "find . -name x -delete",
            "find . -execdir sh -c x \\;",
            "find . -fprint out",
            "sed -i s/a/b/ f",
            "sed -ni p f",
            "rg --pre sh x",
            "sort -o out in",
            "tree -o out",
            "curl --output x https://example.invalid",
        ] {
            assert_eq!(prefix(risky), None, "{risky}");
        }
    }
}
