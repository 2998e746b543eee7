//! Permission rules in Claude Code's format (RULE-1..4): `Bash(npm test:*)` (a prefix on
//! word boundaries), `Bash(git status)` (exact), `Bash(rm *)` (a wildcard), `Bash` (every
//! command).

use std::fmt;

/// One `Bash(...)` rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rule {
    /// `Bash` or `Bash(*)`: every command.
    Any,
    /// `Bash(npm test:*)`: these words, then anything.
    Prefix(Vec<String>),
    /// `Bash(rm *)`: `*` matches any text.
    Wildcard(String),
    /// `Bash(git status)`: exactly this.
    Exact(String),
}

impl Rule {
    /// Parses a rule string; `None` for rules of other tools (`Read(...)`), kept and
    /// ignored by the caller.
    pub fn parse(text: &str) -> Option<Rule> {
        let text = text.trim();
        if text == "Bash" {
            return Some(Rule::Any);
        }
        let inner = text.strip_prefix("Bash(")?.strip_suffix(')')?.trim();
        if inner.is_empty() || inner == "*" {
            return Some(Rule::Any);
        }
        if let Some(prefix) = inner.strip_suffix(":*") {
            return Some(Rule::Prefix(
                prefix.split_whitespace().map(str::to_owned).collect(),
            ));
        }
        if inner.contains('*') {
            return Some(Rule::Wildcard(inner.to_owned()));
        }
        Some(Rule::Exact(inner.to_owned()))
    }

    /// Whether the rule matches a command given as its words (after quote removal).
    pub fn matches_words(&self, words: &[&str]) -> bool {
        match self {
            Rule::Any => true,
            Rule::Prefix(prefix) => {
                words.len() >= prefix.len() && prefix.iter().zip(words).all(|(p, w)| p == w)
            }
            Rule::Wildcard(pattern) => wildcard(pattern, &words.join(" ")),
            Rule::Exact(exact) => words.join(" ") == normalise(exact),
        }
    }

    /// Whether the rule equals the whole command text (RULE-2: always a match).
    pub fn matches_text(&self, text: &str) -> bool {
        match self {
            Rule::Any => true,
            Rule::Exact(exact) => normalise(exact) == normalise(text),
            Rule::Wildcard(pattern) => wildcard(pattern, text.trim()),
            Rule::Prefix(_) => false,
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rule::Any => f.write_str("Bash"),
            Rule::Prefix(words) => write!(f, "Bash({}:*)", words.join(" ")),
            Rule::Wildcard(pattern) => write!(f, "Bash({pattern})"),
            Rule::Exact(exact) => write!(f, "Bash({exact})"),
        }
    }
}

fn normalise(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `*` matches any run of characters; everything else literally.
fn wildcard(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let mut rest = text;
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            let Some(after) = rest.strip_prefix(part) else {
                return false;
            };
            rest = after;
        } else if i == parts.len() - 1 {
            return rest.ends_with(part);
        } else {
            match rest.find(part) {
                Some(at) => rest = &rest[at + part.len()..],
                None => return false,
            }
        }
    }
    rest.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<&str> {
        text.split_whitespace().collect()
    }

    #[test]
    fn rule_1_parse() {
        assert_eq!(
            Rule::parse("Bash(npm test:*)"),
            Some(Rule::Prefix(vec!["npm".into(), "test".into()]))
        );
        assert_eq!(
            Rule::parse("Bash(git status)"),
            Some(Rule::Exact("git status".into()))
        );
        assert_eq!(
            Rule::parse("Bash(rm *)"),
            Some(Rule::Wildcard("rm *".into()))
        );
        assert_eq!(Rule::parse("Bash"), Some(Rule::Any));
        assert_eq!(Rule::parse("Read(./src/**)"), None);
        assert_eq!(
            Rule::parse("Bash(npm test:*)").unwrap().to_string(),
            "Bash(npm test:*)"
        );
    }

    #[test]
    fn rule_4_prefix_on_word_boundaries() {
        let rule = Rule::parse("Bash(npm test:*)").unwrap();
        assert!(rule.matches_words(&words("npm test")));
        assert!(rule.matches_words(&words("npm test -- -u")));
        assert!(!rule.matches_words(&words("npm testing")));
        assert!(!rule.matches_words(&words("npm")));
        let wild = Rule::parse("Bash(rm *)").unwrap();
        assert!(wild.matches_words(&words("rm -rf build")));
        assert!(!wild.matches_words(&words("rmdir x")));
        assert!(Rule::parse("Bash(git *:*)").is_some());
    }
}
