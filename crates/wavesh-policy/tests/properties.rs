//! Property tests over the classifier (PARSE-4, RO-1): constructs that run or write
//! something are never read-only wherever they appear, and appending a command that
//! writes always makes the whole not read-only.

use std::path::PathBuf;

use proptest::prelude::*;
use wavesh_policy::{ClassifyContext, Dialect, check};

fn context() -> ClassifyContext {
    ClassifyContext {
        home: PathBuf::from("/home/dev"),
        cwd: PathBuf::from("/work/app"),
        fs: wavesh_policy::SharedFs::new(wavesh_policy::git_guard::EmptyFs),
        ..ClassifyContext::default()
    }
}

/// Read-only commands from the corpus, as a strategy.
fn read_only_command() -> impl Strategy<Value = String> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/read_only.jsonl");
    let commands: Vec<String> = std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter_map(|value| value["command"].as_str().map(str::to_owned))
        .filter(|command| check(command, Dialect::Bash, &context()).read_only)
        .collect();
    proptest::sample::select(commands)
}

/// Something that runs or writes: it must never be read-only.
fn dangerous_fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("$(touch x)".to_owned()),
        Just("\"$(touch x)\"".to_owned()),
        Just("a$(id)b".to_owned()),
        Just("`touch x`".to_owned()),
        Just("\"`id`\"".to_owned()),
        Just("<(touch x)".to_owned()),
        Just(">(sh)".to_owned()),
        Just("> out.txt".to_owned()),
        Just(">> out.txt".to_owned()),
        Just("2> err.log".to_owned()),
        Just("&> all.log".to_owned()),
        Just(">out".to_owned()),
        Just("<<EOF\n$(id)\nEOF\n".to_owned()),
        Just("<<EOF\n`id`\nEOF\n".to_owned()),
        Just("<<EOF\n$HOME\nEOF\n".to_owned()),
    ]
}

/// Inserts `fragment` as a new word at one of the word boundaries (spaces outside
/// quotes) of `command`'s first line, or at its end.
fn insert_word(command: &str, fragment: &str, at: usize) -> String {
    let (first, rest) = command
        .split_once('\n')
        .map_or((command, None), |(a, b)| (a, Some(b)));
    let mut boundaries = Vec::new();
    let (mut single, mut double, mut escaped) = (false, false, false);
    for (i, c) in first.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if !single => escaped = true,
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            ' ' if !single && !double => boundaries.push(i),
            _ => {}
        }
    }
    boundaries.push(first.len());
    let cut = boundaries[at % boundaries.len()];
    let mut text = format!("{} {fragment}{}", &first[..cut], &first[cut..]);
    if let Some(rest) = rest {
        text.push('\n');
        text.push_str(rest);
    }
    text
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn dangerous_constructs_are_never_read_only(
        command in read_only_command(),
        fragment in dangerous_fragment(),
        at in 0usize..8,
    ) {
        let mutated = insert_word(&command, &fragment, at);
        let verdict = check(&mutated, Dialect::Bash, &context());
        prop_assert!(!verdict.read_only, "approved: {mutated:?}");
    }

    #[test]
    fn appending_a_write_makes_it_not_read_only(command in read_only_command()) {
        let mutated = format!("{command}; touch x");
        prop_assert!(!check(&mutated, Dialect::Bash, &context()).read_only, "approved: {mutated:?}");
    }

    #[test]
    fn appending_a_write_to_any_text_is_never_read_only(text in "[ -~]{0,40}") {
        // Text that hides what follows (a trailing backslash escapes the `;`, a `#`
        // comments it out) turns `touch` into words or a comment: that is bash, not a
        // classifier bug, so those inputs get a newline before the command instead.
        let mutated = if text.ends_with('\\') || text.contains('#') {
            format!("{text}\ntouch x")
        } else {
            format!("{text}; touch x")
        };
        prop_assert!(!check(&mutated, Dialect::Bash, &context()).read_only, "approved: {mutated:?}");
    }
}
