//! Fuzzes permission rules (RULE-1..4): a rule line and a command, split at the first
//! newline. Parsing and matching never panic; `Bash(*)` matches everything; a prefix rule
//! made of a command's own first words matches that command.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wavesh_policy::rules::Rule;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (rule_text, command) = text.split_once('\n').unwrap_or((text, ""));
    let words: Vec<&str> = command.split_whitespace().collect();
    if let Some(rule) = Rule::parse(rule_text) {
        let _ = rule.matches_text(command);
        let _ = rule.matches_words(&words);
    }
    let any = Rule::parse("Bash(*)").expect("Bash(*) is a rule");
    assert!(any.matches_text(command) && any.matches_words(&words));
    if !words.is_empty() && !command.contains(['*', ':', '(', ')']) {
        let take = (rule_text.len() % words.len()) + 1;
        let prefix = Rule::parse(&format!("Bash({}:*)", words[..take].join(" ")))
            .expect("a prefix rule parses");
        assert!(
            prefix.matches_words(&words),
            "{prefix:?} does not match {words:?}"
        );
    }
});
