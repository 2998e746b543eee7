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
//! - `@stop` options end at the first operand (`xargs`: the rest is its command).

use crate::Reason;
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
    /// The command has options that write, execute or redirect what it reads.
    pub writes: bool,
    /// Options end at the first operand.
    pub stop_at_operand: bool,
}

/// One option found by [`FlagTable::parse_args`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedOption {
    /// As declared: `-e` or `--regexp`.
    pub name: String,
    /// Its value, attached or separate.
    pub value: Option<String>,
    /// The index of the word holding the option.
    pub index: usize,
    /// The index of a separate value word.
    pub value_index: Option<usize>,
}

/// What a flag table made of an argv: its options and operands, by word index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    /// Options in order.
    pub options: Vec<ParsedOption>,
    /// Indices of operand words.
    pub operands: Vec<usize>,
    /// Index of the `--` that ended the options, if any.
    pub double_dash: Option<usize>,
    /// Index of the operand that ended the options (`@stop`), if any.
    pub stopped_at: Option<usize>,
}

impl Parsed {
    /// Whether an option of one of these declared names was given.
    pub fn has(&self, names: &[&str]) -> bool {
        self.options
            .iter()
            .any(|o| names.contains(&o.name.as_str()))
    }

    /// Whether the word at `index` comes after `--` or the end of options.
    pub fn after_options(&self, index: usize) -> bool {
        self.double_dash.is_some_and(|d| index > d) || self.stopped_at.is_some_and(|o| index >= o)
    }
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
                "@stop" => table.stop_at_operand = true,
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

    /// The short flags and long options declared, with their value kinds (for the
    /// behaviour generator and documentation).
    pub fn declared(&self) -> Vec<(String, ValueKind)> {
        let mut out: Vec<(String, ValueKind)> = self
            .short
            .iter()
            .map(|(c, k)| (format!("-{c}"), *k))
            .chain(self.long.iter().map(|(n, k)| (n.clone(), *k)))
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// Checks `args` (the words after the command and its subcommand). `Err` names the
    /// word that decided.
    pub fn check(&self, args: &[Word]) -> Result<(), Reason> {
        let parsed = self.parse_args(args)?;
        for &index in &parsed.operands {
            self.glob_operand(&args[index], parsed.after_options(index))?;
        }
        Ok(())
    }

    /// PARSE-4 without a file system to look at: a glob operand of a command with an
    /// option that writes, runs or redirects reads must not be able to expand to an
    /// option.
    pub fn glob_operand(&self, word: &Word, after_double_dash: bool) -> Result<(), Reason> {
        if word.glob && self.writes && !after_double_dash {
            let first = word.value.chars().next().unwrap_or('*');
            if matches!(first, '*' | '?' | '[' | '-') {
                return Err(crate::refuse!(
                    "the glob `{}` could expand to a file named like an option",
                    word.raw
                ));
            }
        }
        Ok(())
    }

    /// Parses `args` as the program would, refusing any option not in the table.
    pub fn parse_args(&self, args: &[Word]) -> Result<Parsed, Reason> {
        let mut parsed = Parsed::default();
        let mut i = 0;
        let mut options_done = false;
        while i < args.len() {
            let word = &args[i];
            let arg = word.value.as_str();
            let index = i;
            i += 1;
            // Quoting does not matter: `'-rf'` is still an option to the program.
            if options_done || arg == "-" || !arg.starts_with('-') {
                self.positional(word)?;
                parsed.operands.push(index);
                if self.stop_at_operand && !options_done {
                    options_done = true;
                    parsed.stopped_at = Some(index);
                }
                continue;
            }
            if arg == "--" {
                options_done = true;
                parsed.double_dash = Some(index);
                continue;
            }
            if let Some(long) = arg.strip_prefix("--") {
                i += self.long(long, index, args, &mut parsed)?;
                continue;
            }
            if self.numeric_count && arg[1..].chars().all(|c| c.is_ascii_digit()) {
                continue;
            }
            i += self.short_cluster(&arg[1..], arg, index, args, &mut parsed)?;
        }
        Ok(parsed)
    }

    fn positional(&self, word: &Word) -> Result<(), Reason> {
        if !self.files {
            return Err(crate::refuse!(
                "`{}` is an operand it does not take here",
                word.raw
            ));
        }
        Ok(())
    }

    /// A long option; returns how many following words it consumed.
    fn long(
        &self,
        long: &str,
        index: usize,
        args: &[Word],
        parsed: &mut Parsed,
    ) -> Result<usize, Reason> {
        let (name, attached) = match long.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (long, None),
        };
        let full = format!("--{name}");
        let Some(kind) = self.long.get(&full) else {
            return Err(crate::refuse!("`--{name}` is not a known safe option"));
        };
        let next = args.get(index + 1);
        let mut option = ParsedOption {
            name: full,
            value: attached.map(str::to_owned),
            index,
            value_index: None,
        };
        let consumed = match (kind, attached) {
            (ValueKind::None, None) | (ValueKind::OptionalString, _) => 0,
            (ValueKind::None, Some(_)) => return Err(crate::refuse!("`--{name}` takes no value")),
            (kind, Some(value)) => {
                check_value(*kind, value, name)?;
                0
            }
            (kind, None) => match next {
                Some(value) => {
                    check_value(*kind, &value.value, name)?;
                    option.value = Some(value.value.clone());
                    option.value_index = Some(index + 1);
                    1
                }
                None => return Err(crate::refuse!("`--{name}` needs a value")),
            },
        };
        parsed.options.push(option);
        Ok(consumed)
    }

    /// A cluster such as `-la` or `-n5`; returns how many following words it consumed.
    fn short_cluster(
        &self,
        cluster: &str,
        arg: &str,
        index: usize,
        args: &[Word],
        parsed: &mut Parsed,
    ) -> Result<usize, Reason> {
        for (offset, flag) in cluster.char_indices() {
            let Some(kind) = self.short.get(&flag) else {
                return Err(crate::refuse!(
                    "`-{flag}` (in `{arg}`) is not a known safe option"
                ));
            };
            let rest = &cluster[offset + flag.len_utf8()..];
            let mut option = ParsedOption {
                name: format!("-{flag}"),
                value: None,
                index,
                value_index: None,
            };
            match kind {
                ValueKind::None => {
                    parsed.options.push(option);
                    continue;
                }
                ValueKind::OptionalString => {
                    option.value = (!rest.is_empty()).then(|| rest.to_owned());
                    parsed.options.push(option);
                    return Ok(0);
                }
                _ if !rest.is_empty() => {
                    check_value(*kind, rest, &flag.to_string())?;
                    option.value = Some(rest.to_owned());
                    parsed.options.push(option);
                    return Ok(0);
                }
                kind => {
                    return match args.get(index + 1) {
                        Some(value) => {
                            check_value(*kind, &value.value, &flag.to_string())?;
                            option.value = Some(value.value.clone());
                            option.value_index = Some(index + 1);
                            parsed.options.push(option);
                            Ok(1)
                        }
                        None => Err(crate::refuse!("`-{flag}` needs a value")),
                    };
                }
            }
        }
        Ok(0)
    }
}

fn check_value(kind: ValueKind, value: &str, name: &str) -> Result<(), Reason> {
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
        Err(crate::refuse!(
            "`{value}` is not a valid value for `{name}`"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wavesh_parse::{Dialect, evaluate};

    fn words(args: &[&str]) -> Vec<Word> {
        args.iter().map(|a| evaluate(a, Dialect::Bash)).collect()
    }

    fn check(spec: &str, args: &[&str]) -> Result<(), Reason> {
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
                .text
                .contains("not a valid value")
        );
        assert!(check(spec, &["-z"]).unwrap_err().text.contains("`-z`"));
        assert!(
            check(spec, &["--quiet=1"])
                .unwrap_err()
                .text
                .contains("takes no value")
        );
        assert!(
            check(spec, &["--lines"])
                .unwrap_err()
                .text
                .contains("needs a value")
        );
    }

    #[test]
    fn ro_11_abbreviated_long_options_are_unknown() {
        let spec = "--output=$ @files";
        assert!(
            check(spec, &["--outp=x"])
                .unwrap_err()
                .text
                .contains("`--outp`")
        );
        assert!(check(spec, &["--output=x"]).is_ok());
    }

    #[test]
    fn parse_4_globs_that_could_become_options() {
        let writes = "-n @files @writes";
        assert!(check(writes, &["src/*.rs"]).is_ok());
        assert!(check(writes, &["./*"]).is_ok());
        assert!(
            check(writes, &["*"])
                .unwrap_err()
                .text
                .contains("could expand")
        );
        assert!(check(writes, &["--", "*"]).is_ok());
        assert!(
            check("-l @files", &["*"]).is_ok(),
            "no writing option: ls *, wc -l *"
        );
    }

    #[test]
    fn ro_3_attached_values_inside_clusters_are_found() {
        let table = FlagTable::parse("-n -e$ -f$ -i -r @files");
        let parsed = table
            .parse_args(&words(&["-ne.", "-f/dev/null", "x"]))
            .unwrap();
        let values: Vec<_> = parsed
            .options
            .iter()
            .map(|o| (o.name.as_str(), o.value.as_deref()))
            .collect();
        assert_eq!(
            values,
            vec![("-n", None), ("-e", Some(".")), ("-f", Some("/dev/null"))]
        );
        assert_eq!(parsed.operands, vec![2]);
        let parsed = table
            .parse_args(&words(&["-ri", "-e", "p", "--", "-x"]))
            .unwrap();
        assert_eq!(parsed.options[2].value_index, Some(2));
        assert_eq!(parsed.operands, vec![4]);
        assert!(parsed.after_options(4));
    }

    #[test]
    fn ro_3_options_stop_at_the_first_operand_when_declared() {
        let table = FlagTable::parse("-0 -n# -l? --max-lines=? @files @stop");
        // `--max-lines` takes only an attached value: `rm` is the command, not its value.
        let parsed = table
            .parse_args(&words(&["--max-lines", "rm", "-rf", "x"]))
            .unwrap();
        assert_eq!(parsed.operands, vec![1, 2, 3]);
        let parsed = table.parse_args(&words(&["-l", "rm"])).unwrap();
        assert_eq!(parsed.operands, vec![1]);
        let parsed = table.parse_args(&words(&["-n", "1", "cat", "-n"])).unwrap();
        assert_eq!(parsed.operands, vec![2, 3]);
    }

    #[test]
    fn ro_3_no_positionals_unless_declared() {
        assert!(check("-a", &["file"]).unwrap_err().text.contains("operand"));
    }
}
