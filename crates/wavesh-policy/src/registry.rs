//! The command registry (PREFIX-5): options and subcommands of about 700 commands, built
//! from the Fig autocomplete specs by `tools/gen-registry` and embedded here. It tells
//! the prefix walk which words are options to skip (and whether they take a value) and
//! which are subcommands to descend into.

use std::collections::{BTreeMap, HashMap};
use std::sync::LazyLock;

use serde::Deserialize;

/// The generated registry (JSON lines after a `#` header).
pub const REGISTRY_SOURCE: &str = include_str!("../data/registry.jsonl");

/// Argument flag bits, as the generator writes them.
pub mod bits {
    /// The argument is a command (`sudo CMD`).
    pub const COMMAND: u32 = 1;
    /// The argument is a module (`python -m MODULE`).
    pub const MODULE: u32 = 2;
    /// Variadic.
    pub const VARIADIC: u32 = 4;
    /// Optional.
    pub const OPTIONAL: u32 = 8;
    /// Marked dangerous.
    pub const DANGEROUS: u32 = 16;
    /// A file path.
    pub const FILE: u32 = 32;
    /// A folder path.
    pub const FOLDER: u32 = 64;
}

/// One command or subcommand.
#[derive(Debug, Default, Deserialize)]
pub struct Node {
    /// Options; a trailing `=` means it takes a value.
    #[serde(default, rename = "o")]
    pub options: Vec<String>,
    /// Argument flag bits.
    #[serde(default, rename = "a")]
    pub args: u32,
    /// Subcommands by name.
    #[serde(default, rename = "s")]
    pub subcommands: BTreeMap<String, Node>,
    /// A link to another root spec (a `loadSpec` that was not expanded).
    #[serde(default, rename = "l")]
    pub link: Option<String>,
}

impl Node {
    /// Whether `word` is an option of this node, and whether it takes a value.
    pub fn option(&self, word: &str) -> Option<bool> {
        let name = word.split_once('=').map_or(word, |(name, _)| name);
        if self.options.iter().any(|o| o == name) {
            return Some(false);
        }
        if self
            .options
            .iter()
            .any(|o| o.strip_suffix('=') == Some(name))
        {
            // `--opt=value` carries its value; `--opt value` takes the next word.
            return Some(!word.contains('='));
        }
        None
    }
}

/// The registry: an index of root names over the embedded lines; a command's tree is
/// parsed on its first lookup and kept for the life of the process, so loading costs only
/// the index (PREFIX-5: the embedded registry loads in under 20 ms).
pub struct Registry {
    lines: HashMap<String, &'static str>,
    parsed: std::sync::Mutex<HashMap<String, &'static Node>>,
    /// The `#` header lines (source version, sha256, counts).
    pub header: Vec<String>,
}

impl Registry {
    /// Indexes the registry text (the names of each line; trees are parsed lazily).
    pub fn parse(text: &'static str) -> Registry {
        let mut lines = HashMap::new();
        let mut header = Vec::new();
        for line in text.lines() {
            if let Some(comment) = line.strip_prefix("# ") {
                header.push(comment.to_owned());
                continue;
            }
            // `[["name", "alias"], {...}]`: names hold no `]`.
            let Some(end) = line.find(']') else { continue };
            let Ok(names) = serde_json::from_str::<Vec<String>>(&line[1..=end]) else {
                continue;
            };
            for name in names {
                lines.insert(name, line);
            }
        }
        Registry {
            lines,
            parsed: std::sync::Mutex::new(HashMap::new()),
            header,
        }
    }

    /// The root command `name`.
    pub fn get(&self, name: &str) -> Option<&'static Node> {
        let mut parsed = self
            .parsed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(node) = parsed.get(name) {
            return Some(node);
        }
        let line = self.lines.get(name)?;
        // A malformed line (only possible after a hand edit; CI checks the file) is a
        // command the registry does not know.
        let (_, node) = serde_json::from_str::<(Vec<String>, Node)>(line).ok()?;
        // Leaked on purpose: the registry lives as long as the process, like a static.
        let node: &'static Node = Box::leak(Box::new(node));
        parsed.insert(name.to_owned(), node);
        Some(node)
    }

    /// The number of root names.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }
}

/// The embedded registry, indexed on first use.
pub fn registry() -> &'static Registry {
    static REGISTRY: LazyLock<Registry> = LazyLock::new(|| Registry::parse(REGISTRY_SOURCE));
    &REGISTRY
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_5_registry_loads_with_its_header() {
        let registry = registry();
        assert!(registry.len() > 600, "{}", registry.len());
        assert!(registry.header[0].contains("@withfig/autocomplete 2.692.3"));
        assert!(registry.header[1].starts_with("sources sha256 "));
        assert!(REGISTRY_SOURCE.len() <= 3 * 1024 * 1024);
        let git = registry.get("git").unwrap();
        assert!(git.subcommands.contains_key("commit"));
        assert_eq!(git.subcommands["commit"].option("-m"), Some(true));
        assert_eq!(git.subcommands["commit"].option("--message=x"), Some(false));
        assert_eq!(git.subcommands["commit"].option("--all"), Some(false));
        assert_eq!(
            registry.get("docker").unwrap().subcommands["compose"]
                .link
                .as_deref(),
            Some("docker-compose")
        );
    }
}
