//! Flag tables (RO-3): each safe option of a command with the kind of value it takes,
//! written in a compact spec and checked against an argv.
//!
//! Spec tokens, separated by whitespace:
//! - `-x` a short flag without value; `-x#` with a number; `-x$` with a string;
//!   `-x?` with an optional string (only attached: `-xVALUE`); `-x^` with one character;
//!   `-x{}` with the literal `{}`.
//! - `--name` a long flag without value; `--name=#`, `--name=$`, `--name=?` likewise.
//!   A long option must be written exactly: GNU getopt would accept `--outp` for
//!   `--output`, so an abbreviation is an unknown option here (RO-11).
//! - `@files` unlimited positionals; `@num` `-20` style counts (`head -20`);
//!   `@writes` the command has options that write or run programs, so a glob operand that
//!   might expand to such an option (`*` matching a file named `--pre=sh`) is refused
//!   unless it follows `--` or starts with a literal other than `-` (PARSE-4).

use std::collections::HashMap;

use wavesh_parse::Word;

/// The value a flag takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// No value.
    None,
    /// A number (digits, optionally signed or with a unit suffix like `10K`).
    Number,
    /// Any string.
    String,
    /// An optional string, only when attached.
    OptionalString,
    /// One character.
    Char,
    /// The literal `{}`.
    Braces,
}

/// A parsed flag table.
#[derive(Debug, Clone, Default)]
pub struct FlagTable {
    short: HashMap<char, ValueKind>,
    long: HashMap<String, ValueKind>,
    /// Positionals are allowed.
    pub files: bool,
    /// `-20` counts are allowed.
    pub numeric_count: bool,
    /// The command has options that write or execute.
    pub writes: bool,
}

fn kind_of(suffix: &str) -> ValueKind {
    match suffix {
        "#" => ValueKind::Number,
        "$" => ValueKind::String,
        "?" => ValueKind::OptionalString,
        "^" => ValueKind::Char,
        "{}" => ValueKind::Braces,
        _ => ValueKind::None,
    }
}

impl FlagTable {
    /// Parses a spec (see the module documentation). Specs are program constants; a
    /// malformed token is ignored, which can only make the table stricter.
    pub fn parse(spec: &str) -> FlagTable {
        let mut table = FlagTable::default();
        for token in spec.split_whitespace() {
            match token {
                "@files" => table.files = true,
                "@num" => table.numeric_count = true,
                "@writes" => table.writes = true,
                _ if token.starts_with("--") => {
                    let (name, kind) = match token.split_once('=') {
                        Some((name, suffix)) => (name, kind_of(suffix)),
                        None => (token, ValueKind::None),
                    };
                    table.long.insert(name.to_owned(), kind);
                }
                _ if token.starts_with('-') && token.len() >= 2 => {
                    let mut chars = token[1..].chars();
                    if let Some(flag) = chars.next() {
                        table.short.insert(flag, kind_of(chars.as_str()));
                    }
                }
                _ => {}
            }
        }
        table
    }

    /// Checks `args` (the words after the command and its subcommand). `Err` names the
    /// word that decided.
    pub fn check(&self, args: &[Word]) -> Result<(), String> {
        let mut i = 0;
        let mut options_done = false;
        while i < args.len() {
            let word = &args[i];
            let arg = word.value.as_str();
            i += 1;
            // Quoting does not matter: `'-rf'` is still an option to the program.
            if options_done || arg == "-" || !arg.starts_with('-') {
                self.positional(word, options_done)?;
                continue;
            }
            if arg == "--" {
                options_done = true;
                continue;
            }
            if let Some(long) = arg.strip_prefix("--") {
                i += self.long(long, args.get(i))?;
                continue;
            }
            if self.numeric_count && arg[1..].chars().all(|c| c.is_ascii_digit()) {
                continue;
            }
            i += self.short_cluster(&arg[1..], arg, args.get(i))?;
        }
        Ok(())
    }

    fn positional(&self, word: &Word, after_double_dash: bool) -> Result<(), String> {
        if !self.files {
            return Err(format!(
                "`{}` is an operand it does not take here",
                word.raw
            ));
        }
        if word.glob && self.writes && !after_double_dash {
            let first = word.value.chars().next().unwrap_or('*');
            if matches!(first, '*' | '?' | '[' | '-') {
                return Err(format!(
                    "the glob `{}` could expand to a file named like an option",
                    word.raw
                ));
            }
        }
        Ok(())
    }

    /// A long option; returns how many following words it consumed.
    fn long(&self, long: &str, next: Option<&Word>) -> Result<usize, String> {
        let (name, attached) = match long.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (long, None),
        };
        let Some(kind) = self.long.get(&format!("--{name}")) else {
            return Err(format!("`--{name}` is not a known safe option"));
        };
        match (kind, attached) {
            (ValueKind::None, None) | (ValueKind::OptionalString, _) => Ok(0),
            (ValueKind::None, Some(_)) => Err(format!("`--{name}` takes no value")),
            (kind, Some(value)) => check_value(*kind, value, name).map(|()| 0),
            (kind, None) => match next {
                Some(value) => check_value(*kind, &value.value, name).map(|()| 1),
                None => Err(format!("`--{name}` needs a value")),
            },
        }
    }

    /// A cluster such as `-la` or `-n5`; returns how many following words it consumed.
    fn short_cluster(
        &self,
        cluster: &str,
        arg: &str,
        next: Option<&Word>,
    ) -> Result<usize, String> {
        for (offset, flag) in cluster.char_indices() {
            let Some(kind) = self.short.get(&flag) else {
                return Err(format!("`-{flag}` (in `{arg}`) is not a known safe option"));
            };
            let rest = &cluster[offset + flag.len_utf8()..];
            match kind {
                ValueKind::None => continue,
                ValueKind::OptionalString => return Ok(0),
                _ if !rest.is_empty() => {
                    check_value(*kind, rest, &flag.to_string())?;
                    return Ok(0);
                }
                kind => {
                    return match next {
                        Some(value) => {
                            check_value(*kind, &value.value, &flag.to_string()).map(|()| 1)
                        }
                        None => Err(format!("`-{flag}` needs a value")),
                    };
                }
            }
        }
        Ok(0)
    }
}

fn check_value(kind: ValueKind, value: &str, name: &str) -> Result<(), String> {
    let ok = match kind {
        ValueKind::None | ValueKind::String | ValueKind::OptionalString => true,
        ValueKind::Number => {
            let digits = value.trim_start_matches(['+', '-']);
            let digits = digits.trim_end_matches(|c: char| c.is_ascii_alphabetic());
            !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit() || c == '.')
        }
        ValueKind::Char => value.chars().count() == 1,
        ValueKind::Braces => value == "{}",
    };
    if ok {
        Ok(())
    } else {
        Err(format!("`{value}` is not a valid value for `{name}`"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wavesh_parse::{Dialect, evaluate};

    fn words(args: &[&str]) -> Vec<Word> {
        args.iter().map(|a| evaluate(a, Dialect::Bash)).collect()
    }

    fn check(spec: &str, args: &[&str]) -> Result<(), String> {
        FlagTable::parse(spec).check(&words(args))
    }

    #[test]
    fn ro_3_value_kinds_and_forms() {
        let spec = "-n# -l -a -c$ -x? --lines=# --color=? --format=$ --quiet @files @num";
        assert!(check(spec, &["-n", "5", "file"]).is_ok());
        assert!(check(spec, &["-n5"]).is_ok());
        assert!(check(spec, &["-la", "-n", "3"]).is_ok());
        assert!(check(spec, &["-lan5"]).is_ok());
        assert!(check(spec, &["-20"]).is_ok());
        assert!(
            check(
                spec,
                &["--lines=7", "--lines", "8", "--color", "--color=never"]
            )
            .is_ok()
        );
        assert!(check(spec, &["--format", "%H"]).is_ok());
        assert!(check(spec, &["-xanything", "-c", "val"]).is_ok());
        assert!(check(spec, &["--", "-rf", "--output=x"]).is_ok());
        assert!(
            check(spec, &["-n", "many"])
                .unwrap_err()
                .contains("not a valid value")
        );
        assert!(check(spec, &["-z"]).unwrap_err().contains("`-z`"));
        assert!(
            check(spec, &["--quiet=1"])
                .unwrap_err()
                .contains("takes no value")
        );
        assert!(
            check(spec, &["--lines"])
                .unwrap_err()
                .contains("needs a value")
        );
    }

    #[test]
    fn ro_11_abbreviated_long_options_are_unknown() {
        let spec = "--output=$ @files";
        assert!(check(spec, &["--outp=x"]).unwrap_err().contains("`--outp`"));
        assert!(check(spec, &["--output=x"]).is_ok());
    }

    #[test]
    fn parse_4_globs_that_could_become_options() {
        let writes = "-n @files @writes";
        assert!(check(writes, &["src/*.rs"]).is_ok());
        assert!(check(writes, &["./*"]).is_ok());
        assert!(check(writes, &["*"]).unwrap_err().contains("could expand"));
        assert!(check(writes, &["--", "*"]).is_ok());
        assert!(
            check("-l @files", &["*"]).is_ok(),
            "no writing option: ls *, wc -l *"
        );
    }

    #[test]
    fn ro_3_no_positionals_unless_declared() {
        assert!(check("-a", &["file"]).unwrap_err().contains("operand"));
    }
}
