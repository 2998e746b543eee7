//! Quote removal checked against bash itself: for each word list, bash runs
//! `printf '%s\0' WORDS` in an empty directory (so globs stay literal) and its argv must
//! equal ours.
#![cfg(unix)]

use std::process::Command;

use wavesh_parse::{Dialect, analyze};

const WORDS: &[&str] = &[
    "plain",
    "'single quoted $HOME'",
    "\"double \\\"quoted\\\" \\$x \\\\ \\z\"",
    "back\\ slash\\ space",
    "$'ansi\\tc\\n\\x41\\101\\u00e9\\'q'",
    "mixed'single'\"double\"plain",
    "'it'\\''s'",
    "\"$\"",
    "cost$",
    "{}",
    "{x}",
    "'{a,b}'",
    "*.nomatch-zz",
    "src/?nomatch",
    "[nomatch]zz",
    "\"a\nb\"",
    "'--pre=sh'",
    "--output=x",
    "-n5",
    "\"\"",
    "''",
    "x\"\"y",
    "$'\\e[31m'",
    "\"tab\there\"",
    "'trailing\\'",
    "a=b",
    "=ls",
    "\\$HOME",
    "\\`date\\`",
    "\"\\`x\\`\"",
    "caf\u{e9}",
    "'\u{4e2d}\u{6587}'",
];

#[test]
fn parse_4_quote_removal_matches_bash() {
    let dir = std::env::temp_dir().join(format!("wavesh-bash-agree-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for word in WORDS {
        let source = format!("printf '%s\\0' {word}");
        let analysis = analyze(&source, Dialect::Bash);
        assert!(analysis.failure.is_none(), "{word}: {:?}", analysis.failure);
        let ours: Vec<String> = analysis.commands[0].argv[2..]
            .iter()
            .map(|w| w.value.clone())
            .collect();
        assert!(
            analysis.commands[0].argv[2..].iter().all(|w| w.is_static()),
            "{word} should be static"
        );
        // `$'\u…'` decodes by the locale; the parser reads words as bash does in UTF-8, so
        // bash is asked in UTF-8 whatever the test's own environment names.
        let output = Command::new("bash")
            .env("LC_ALL", "C.UTF-8")
            .arg("-c")
            .arg(&source)
            .current_dir(&dir)
            .output()
            .unwrap();
        let theirs: Vec<String> = output
            .stdout
            .split(|b| *b == 0)
            .filter(|part| !part.is_empty() || output.stdout.is_empty())
            .map(|part| String::from_utf8_lossy(part).into_owned())
            .collect();
        let theirs = if ours == vec![String::new()] && output.stdout == b"\0" {
            vec![String::new()]
        } else {
            theirs
        };
        assert_eq!(ours, theirs, "word {word:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
