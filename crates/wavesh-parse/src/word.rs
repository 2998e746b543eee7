//! Quote removal and staticness of one word, from its source text (PARSE-4).
//!
//! rable keeps a word's raw text and its expansion parts but leaves quote removal to the
//! caller. This module does it, and fails closed: anything whose value could depend on
//! the environment, the file system or another command is dynamic, with the reason.

use std::fmt;

/// Why a word's value is not known before it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dynamic {
    /// `$(...)` or a backquote.
    CommandSubstitution,
    /// `<(...)` or `>(...)`.
    ProcessSubstitution,
    /// `$name`, `${...}`, `$1`, `$@`, ...
    Parameter,
    /// `$((...))` or `$[...]`.
    Arithmetic,
    /// `{a,b}` or `{1..3}`.
    BraceExpansion,
    /// `@(...)`, `!(...)`, `?(...)`, `*(...)`, `+(...)`.
    ExtendedGlob,
    /// `~user`, `~+`, `~-`: another user's home or the directory stack.
    TildeUser,
    /// `$"..."`: translated at run time.
    LocaleString,
    /// zsh-only syntax that bash reads differently (PARSE-6).
    ZshSyntax(&'static str),
    /// A quote that is never closed.
    Unterminated,
    /// A NUL byte (`$'\\0'`, `$'\\x00'`): bash cuts the word there, and other tokenizers
    /// do not (RO-9, RO-11).
    NulByte,
    /// An argument of a builtin that bash evaluates as a subscript or arithmetic
    /// (`printf -v 'a[$(id)]'`, `test -v`, `read`, `declare`, `let`, ...), even when
    /// single-quoted (RO-13).
    Evaluated(&'static str),
}

impl fmt::Display for Dynamic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dynamic::CommandSubstitution => f.write_str("command substitution"),
            Dynamic::ProcessSubstitution => f.write_str("process substitution"),
            Dynamic::Parameter => f.write_str("parameter expansion"),
            Dynamic::Arithmetic => f.write_str("arithmetic expansion"),
            Dynamic::BraceExpansion => f.write_str("brace expansion"),
            Dynamic::ExtendedGlob => f.write_str("extended glob"),
            Dynamic::TildeUser => f.write_str("~user expansion"),
            Dynamic::LocaleString => f.write_str("$\"...\" locale string"),
            Dynamic::ZshSyntax(what) => write!(f, "zsh-only syntax ({what})"),
            Dynamic::Unterminated => f.write_str("unterminated quote"),
            Dynamic::NulByte => f.write_str("NUL byte, where bash cuts the word"),
            Dynamic::Evaluated(builtin) => {
                write!(f, "name or subscript that `{builtin}` evaluates as code")
            }
        }
    }
}

/// The shell whose rules apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dialect {
    /// bash.
    #[default]
    Bash,
    /// zsh: its extra expansions are never permission safe (PARSE-6).
    Zsh,
}

/// One word, evaluated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The source text.
    pub raw: String,
    /// The value after quote removal; meaningful when `dynamic` is `None`. A leading `~`
    /// or `~/` is kept as written (see [`Word::home_relative`]).
    pub value: String,
    /// Why the value is not static, if it is not.
    pub dynamic: Option<Dynamic>,
    /// It holds an unquoted `*`, `?` or `[`: the shell may expand it to file names.
    pub glob: bool,
    /// It starts with an unquoted `~` or `~/`: the home directory.
    pub home_relative: bool,
    /// Some part of it was quoted or escaped (so `value` may differ from `raw`).
    pub quoted: bool,
}

impl Word {
    /// Whether the value is known before the command runs.
    pub fn is_static(&self) -> bool {
        self.dynamic.is_none()
    }

    /// The value with a leading `~` replaced by `home`.
    pub fn expanded(&self, home: &str) -> String {
        if self.home_relative {
            format!("{home}{}", &self.value[1..])
        } else {
            self.value.clone()
        }
    }
}

/// Evaluates a word from its source text.
pub fn evaluate(raw: &str, dialect: Dialect) -> Word {
    let mut scanner = Scanner {
        chars: raw.chars().collect(),
        pos: 0,
        value: String::with_capacity(raw.len()),
        dynamic: None,
        glob: false,
        quoted: false,
    };
    scanner.run(dialect);
    let home_relative = raw == "~" || raw.starts_with("~/");
    if raw.starts_with('~') && !home_relative && scanner.dynamic.is_none() {
        scanner.dynamic = Some(Dynamic::TildeUser);
    }
    if dialect == Dialect::Zsh && scanner.dynamic.is_none() {
        scanner.dynamic = zsh_only(raw);
    }
    Word {
        raw: raw.to_owned(),
        value: scanner.value,
        dynamic: scanner.dynamic,
        glob: scanner.glob,
        home_relative,
        quoted: scanner.quoted,
    }
}

/// zsh expansions that bash does not have: `=cmd` (path of cmd), glob qualifiers and
/// flags, `^`/`#` patterns under EXTENDED_GLOB.
fn zsh_only(raw: &str) -> Option<Dynamic> {
    if raw.starts_with('=') && raw.len() > 1 {
        return Some(Dynamic::ZshSyntax("=command expansion"));
    }
    if raw.contains('(') || raw.contains(')') {
        return Some(Dynamic::ZshSyntax("glob qualifier"));
    }
    if raw.starts_with('^') || raw.contains("**") {
        return Some(Dynamic::ZshSyntax("extended glob"));
    }
    None
}

struct Scanner {
    chars: Vec<char>,
    pos: usize,
    value: String,
    dynamic: Option<Dynamic>,
    glob: bool,
    quoted: bool,
}

/// Characters that start a parameter after `$`.
fn starts_parameter(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '{' | '@' | '*' | '#' | '?' | '$' | '!' | '-')
}

impl Scanner {
    fn peek(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    fn mark(&mut self, why: Dynamic) {
        if self.dynamic.is_none() {
            self.dynamic = Some(why);
        }
    }

    fn run(&mut self, dialect: Dialect) {
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            match c {
                '\\' => {
                    self.quoted = true;
                    match self.peek(0) {
                        Some('\n') => self.pos += 1,
                        Some(next) => {
                            self.value.push(next);
                            self.pos += 1;
                        }
                        None => self.value.push('\\'),
                    }
                }
                '\'' => self.single_quoted(),
                '"' => self.double_quoted(),
                '$' => self.dollar(),
                '`' => self.mark(Dynamic::CommandSubstitution),
                '*' | '?' | '+' | '@' | '!' if self.peek(0) == Some('(') => {
                    self.mark(Dynamic::ExtendedGlob);
                    self.value.push(c);
                }
                '<' | '>' if self.peek(0) == Some('(') => {
                    self.mark(Dynamic::ProcessSubstitution);
                    self.value.push(c);
                }
                '*' | '?' => {
                    self.glob = true;
                    self.value.push(c);
                }
                '[' => {
                    if self.chars[self.pos..].contains(&']') {
                        self.glob = true;
                    }
                    self.value.push(c);
                }
                '{' => {
                    if self.brace_expands() {
                        self.mark(Dynamic::BraceExpansion);
                    }
                    self.value.push(c);
                }
                '^' | '#' | '~' if dialect == Dialect::Zsh && self.pos > 1 => {
                    self.mark(Dynamic::ZshSyntax("extended glob"));
                    self.value.push(c);
                }
                '\0' => self.mark(Dynamic::NulByte),
                other => self.value.push(other),
            }
        }
        if self.value.contains('\0') {
            self.mark(Dynamic::NulByte);
        }
    }

    fn single_quoted(&mut self) {
        self.quoted = true;
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            if c == '\'' {
                return;
            }
            self.value.push(c);
        }
        self.mark(Dynamic::Unterminated);
    }

    fn double_quoted(&mut self) {
        self.quoted = true;
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            match c {
                '"' => return,
                '\\' => match self.peek(0) {
                    Some('\n') => self.pos += 1,
                    Some(next @ ('$' | '`' | '"' | '\\')) => {
                        self.value.push(next);
                        self.pos += 1;
                    }
                    _ => self.value.push('\\'),
                },
                '$' => match self.peek(0) {
                    Some(next) if starts_parameter(next) => self.mark(Dynamic::Parameter),
                    Some('(') => self.mark(Dynamic::CommandSubstitution),
                    Some('[') => self.mark(Dynamic::Arithmetic),
                    _ => self.value.push('$'),
                },
                '`' => self.mark(Dynamic::CommandSubstitution),
                other => self.value.push(other),
            }
        }
        self.mark(Dynamic::Unterminated);
    }

    fn dollar(&mut self) {
        match self.peek(0) {
            Some('\'') => {
                self.pos += 1;
                self.ansi_c();
            }
            Some('"') => self.mark(Dynamic::LocaleString),
            Some('(') if self.peek(1) == Some('(') => self.mark(Dynamic::Arithmetic),
            Some('(') => self.mark(Dynamic::CommandSubstitution),
            Some('[') => self.mark(Dynamic::Arithmetic),
            Some(next) if starts_parameter(next) => self.mark(Dynamic::Parameter),
            // A `$` that starts nothing is literal (`$`, `a$`, `$/`).
            _ => self.value.push('$'),
        }
    }

    /// `$'...'` with its escapes decoded.
    fn ansi_c(&mut self) {
        self.quoted = true;
        while let Some(c) = self.peek(0) {
            self.pos += 1;
            match c {
                '\'' => return,
                '\\' => self.ansi_escape(),
                other => self.value.push(other),
            }
        }
        self.mark(Dynamic::Unterminated);
    }

    fn ansi_escape(&mut self) {
        let Some(c) = self.peek(0) else {
            self.value.push('\\');
            return;
        };
        self.pos += 1;
        let simple = match c {
            'a' => Some('\x07'),
            'b' => Some('\x08'),
            'e' | 'E' => Some('\x1b'),
            'f' => Some('\x0c'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\x0b'),
            '\\' | '\'' | '"' | '?' => Some(c),
            _ => None,
        };
        if let Some(decoded) = simple {
            self.value.push(decoded);
            return;
        }
        let (radix, max) = match c {
            '0'..='7' => {
                self.pos -= 1;
                (8, 3)
            }
            'x' => (16, 2),
            'u' => (16, 4),
            'U' => (16, 8),
            'c' => {
                // Control character: \cX.
                if let Some(x) = self.peek(0) {
                    self.pos += 1;
                    self.value.push(char::from((x as u8) & 0x1f));
                }
                return;
            }
            other => {
                self.value.push('\\');
                self.value.push(other);
                return;
            }
        };
        let mut digits = String::new();
        while digits.len() < max
            && let Some(d) = self.peek(0)
            && d.is_digit(radix)
        {
            digits.push(d);
            self.pos += 1;
        }
        match u32::from_str_radix(&digits, radix)
            .ok()
            .and_then(char::from_u32)
        {
            Some(decoded) if !digits.is_empty() => self.value.push(decoded),
            _ => {
                self.value.push('\\');
                self.value.push(c);
                self.value.push_str(&digits);
            }
        }
    }

    /// An unquoted `{` expands when a matching unquoted `}` follows with a `,` or `..`
    /// between them (bash's brace expansion); `{}` and `{x}` stay literal.
    fn brace_expands(&self) -> bool {
        let mut depth = 1usize;
        let mut saw_separator = false;
        let mut i = self.pos;
        while let Some(&c) = self.chars.get(i) {
            match c {
                '\\' => i += 1,
                '\'' | '"' => return saw_separator,
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        return saw_separator;
                    }
                }
                ',' if depth == 1 => saw_separator = true,
                '.' if depth == 1 && self.chars.get(i + 1) == Some(&'.') => saw_separator = true,
                _ => {}
            }
            i += 1;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(raw: &str) -> String {
        let word = evaluate(raw, Dialect::Bash);
        assert!(word.is_static(), "{raw}: {:?}", word.dynamic);
        word.value
    }

    fn why(raw: &str) -> Dynamic {
        evaluate(raw, Dialect::Bash)
            .dynamic
            .unwrap_or_else(|| panic!("{raw} is static"))
    }

    #[test]
    fn parse_4_quote_removal() {
        assert_eq!(value("plain"), "plain");
        assert_eq!(value("'single $x'"), "single $x");
        assert_eq!(
            value("\"double \\\"q\\\" \\$x \\z\""),
            "double \"q\" $x \\z"
        );
        assert_eq!(value("a\\ b"), "a b");
        assert_eq!(value("$'a\\tb\\x41\\101\\u00e9\\''"), "a\tbAA\u{e9}'");
        assert_eq!(value("pre'mid'\"post\""), "premidpost");
        assert_eq!(value("cost$"), "cost$");
        assert_eq!(value("\"$\""), "$");
        assert_eq!(value("{}"), "{}");
        assert_eq!(value("{x}"), "{x}");
        assert_eq!(value("'{a,b}'"), "{a,b}");
    }

    #[test]
    fn parse_4_dynamic_parts() {
        assert_eq!(why("$(date)"), Dynamic::CommandSubstitution);
        assert_eq!(why("\"x$(date)\""), Dynamic::CommandSubstitution);
        assert_eq!(why("`date`"), Dynamic::CommandSubstitution);
        assert_eq!(why("\"`date`\""), Dynamic::CommandSubstitution);
        assert_eq!(why("$HOME"), Dynamic::Parameter);
        assert_eq!(why("\"${x:-y}\""), Dynamic::Parameter);
        assert_eq!(why("$1"), Dynamic::Parameter);
        assert_eq!(why("$@"), Dynamic::Parameter);
        assert_eq!(why("$((1+2))"), Dynamic::Arithmetic);
        assert_eq!(why("$[1+2]"), Dynamic::Arithmetic);
        assert_eq!(why("{a,b}"), Dynamic::BraceExpansion);
        assert_eq!(why("x{1..3}"), Dynamic::BraceExpansion);
        assert_eq!(why("@(a|b)"), Dynamic::ExtendedGlob);
        assert_eq!(why("!(x)"), Dynamic::ExtendedGlob);
        assert_eq!(why("<(ls)"), Dynamic::ProcessSubstitution);
        assert_eq!(why("~root/x"), Dynamic::TildeUser);
        assert_eq!(why("~+"), Dynamic::TildeUser);
        assert_eq!(why("$\"hello\""), Dynamic::LocaleString);
        assert_eq!(why("'open"), Dynamic::Unterminated);
    }

    #[test]
    fn parse_4_globs_and_home() {
        let word = evaluate("src/*.rs", Dialect::Bash);
        assert!(word.is_static() && word.glob);
        assert!(!evaluate("'*.rs'", Dialect::Bash).glob);
        assert!(evaluate("[ab]x", Dialect::Bash).glob);
        let home = evaluate("~/.ssh/id_rsa", Dialect::Bash);
        assert!(home.is_static() && home.home_relative);
        assert_eq!(home.expanded("/home/u"), "/home/u/.ssh/id_rsa");
        assert!(!evaluate("'~/x'", Dialect::Bash).home_relative);
    }

    #[test]
    fn parse_6_zsh_only_syntax() {
        assert!(evaluate("=ls", Dialect::Zsh).dynamic.is_some());
        assert!(evaluate("*(e:rm:)", Dialect::Zsh).dynamic.is_some());
        assert!(evaluate("**/x", Dialect::Zsh).dynamic.is_some());
        assert!(evaluate("=ls", Dialect::Bash).is_static());
        assert!(evaluate("plain", Dialect::Zsh).is_static());
    }
}
