//! Patterns in GNU grep's dialects: basic (`-G`, the default), extended (`-E`), fixed
//! strings (`-F`) and Perl (`-P`).
//!
//! Basic and extended expressions are parsed here with GNU's readings and written out
//! in the syntax of the `regex` crate (or of fancy-regex, for back-references):
//! - GNU's literal readings: a `*` (BRE) that starts an expression, an ERE `{` that does
//!   not start a valid interval (`a{1`), an ERE `)` with no open group, a BRE `\{` at the
//!   start; an ERE `*`, `+`, `?` or interval with nothing before it applies to nothing.
//! - GNU's errors, with GNU's messages: `[:space:]`, unknown class names, unmatched
//!   brackets and groups, bad intervals and ranges, back-references to no group.
//! - `\<`, `\>`, `\b`, `\B`, `\w`, `\W`, `\s`, `\S`, `` \` ``, `\'`.
//! - Locale: in a UTF-8 locale the classes (`[[:lower:]]`) are Unicode's; in the C locale
//!   every byte is a character, so `.` matches byte 0x80 (the regex runs with Unicode off).
//! - Back-references are renumbered so that several `-e` patterns keep their own groups.
//!
//! With a [`Syntax`] the pattern is read as gnulib's regex compiler reads it under those
//! syntax bits (find's `-regextype` dialects) rather than as GNU grep reads `-G`/`-E`:
//! which operators need a backslash, whether there are intervals, `\|`, back-references
//! and GNU's `\w`/`\<` operators, where `^`/`$` anchor, what an operator with nothing
//! before it means (a literal, nothing, or an error), how brackets read a backslash, and
//! gnulib's error messages.

/// Which dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dialect {
    /// `-G`: POSIX basic regular expressions.
    #[default]
    Basic,
    /// `-E`: extended regular expressions.
    Extended,
    /// `-F`: fixed strings.
    Fixed,
    /// `-P`: Perl-compatible.
    Perl,
}

/// The engine a translation is written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The `regex` crate (a finite automaton, no back-references).
    Fast,
    /// fancy-regex (backtracking: back-references).
    Backtracking,
}

/// A pattern GNU grep refuses, with GNU's message (`grep: MESSAGE`, exit 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternError(pub String);

/// A translated pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Translated {
    /// The expression in the target's syntax.
    pub regex: String,
    /// Capturing groups it opens.
    pub groups: usize,
    /// Whether it uses back-references (needs [`Target::Backtracking`]).
    pub backreferences: bool,
    /// An equivalence class of a letter in a UTF-8 locale (`[[=a=]]`) whose members
    /// (à, á, ... in the locale's collation) cannot be computed here.
    pub collation: bool,
    /// A bracket expression whose Turkish case counterparts are not written out (a
    /// range, a class, or a dotted or dotless i), under [`Flavor::turkish_case`].
    pub turkish_bracket: bool,
}

/// How a translation reads and writes.
#[derive(Debug, Clone, Copy)]
pub struct Flavor {
    /// `-E` (true) or `-G` (false).
    pub extended: bool,
    /// A UTF-8 locale (Unicode classes) or the C locale (bytes).
    pub utf8: bool,
    /// The engine written for.
    pub target: Target,
    /// Groups of the patterns before this one (back-references are shifted by it).
    pub group_offset: usize,
    /// Leave out word assertions (`\<`, `\>`, `\b`, `\B`): a looser expression that
    /// matches wherever the pattern does, for screening many lines at once.
    pub loose: bool,
    /// `-z`: lines end with NUL, so a negated class matches a newline and not NUL.
    pub null_data: bool,
    /// gnulib's syntax bits to read the pattern with (find), instead of GNU grep's
    /// reading of `extended` (`None`).
    pub syntax: Option<Syntax>,
    /// `-i` in a Turkish locale: `i` and `İ` are one letter's cases, `I` and `ı`
    /// another's (the expression runs with `(?i)`, which pairs `i` with `I`).
    pub turkish_case: bool,
}

/// A set of gnulib's regex syntax bits (`RE_*` in `regex.h`; the values are this
/// module's own).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Syntax(u32);

impl Syntax {
    /// `\` quotes the next character inside a bracket expression.
    pub const BACKSLASH_ESCAPE_IN_LISTS: u32 = 1;
    /// `\+` and `\?` are the operators, `+` and `?` literals.
    pub const BK_PLUS_QM: u32 = 1 << 1;
    /// `[:alpha:]` and the other classes inside brackets.
    pub const CHAR_CLASSES: u32 = 1 << 2;
    /// `^` and `$` anchor everywhere outside brackets.
    pub const CONTEXT_INDEP_ANCHORS: u32 = 1 << 3;
    /// A repetition operator with nothing before it is dropped (not a literal).
    pub const CONTEXT_INDEP_OPS: u32 = 1 << 4;
    /// A repetition operator with nothing before it is an error.
    pub const CONTEXT_INVALID_OPS: u32 = 1 << 5;
    /// `.` matches a newline.
    pub const DOT_NEWLINE: u32 = 1 << 6;
    /// `.` does not match NUL.
    pub const DOT_NOT_NULL: u32 = 1 << 7;
    /// A negated bracket expression does not match a newline.
    pub const HAT_LISTS_NOT_NEWLINE: u32 = 1 << 8;
    /// Intervals (`{n,m}` or `\{n,m\}`).
    pub const INTERVALS: u32 = 1 << 9;
    /// No `+`, `?` or `|` operators at all.
    pub const LIMITED_OPS: u32 = 1 << 10;
    /// A newline alternates.
    pub const NEWLINE_ALT: u32 = 1 << 11;
    /// `{` and `}` are the interval's braces, `\{` literal.
    pub const NO_BK_BRACES: u32 = 1 << 12;
    /// `(` and `)` group, `\(` is literal.
    pub const NO_BK_PARENS: u32 = 1 << 13;
    /// `\1` is a literal `1`, not a back-reference.
    pub const NO_BK_REFS: u32 = 1 << 14;
    /// `|` alternates, `\|` is literal.
    pub const NO_BK_VBAR: u32 = 1 << 15;
    /// A range whose end is before its start is an error (otherwise it is empty).
    pub const NO_EMPTY_RANGES: u32 = 1 << 16;
    /// A `)` with no open group is literal.
    pub const UNMATCHED_RIGHT_PAREN_ORD: u32 = 1 << 17;
    /// No GNU operators (`\w`, `\<`, `\b`, `` \` ``...): a backslash quotes them.
    pub const NO_GNU_OPS: u32 = 1 << 18;
    /// An interval with nothing before it, or a second `*` or interval after one, is an
    /// error.
    pub const CONTEXT_INVALID_DUP: u32 = 1 << 19;
    /// A `{` that does not start a valid interval is literal.
    pub const INVALID_INTERVAL_ORD: u32 = 1 << 20;
    /// Case is ignored (the engine is told so). gnulib folds the text to upper case but
    /// not a letter quoted by a backslash: `\o` then matches nothing, `\O` both cases.
    pub const ICASE: u32 = 1 << 21;

    const POSIX_COMMON: u32 = Self::CHAR_CLASSES
        | Self::DOT_NEWLINE
        | Self::DOT_NOT_NULL
        | Self::INTERVALS
        | Self::NO_EMPTY_RANGES;
    const POSIX_BASIC: u32 = Self::POSIX_COMMON | Self::BK_PLUS_QM | Self::CONTEXT_INVALID_DUP;
    const POSIX_EXTENDED: u32 = Self::POSIX_COMMON
        | Self::CONTEXT_INDEP_ANCHORS
        | Self::CONTEXT_INDEP_OPS
        | Self::NO_BK_BRACES
        | Self::NO_BK_PARENS
        | Self::NO_BK_VBAR
        | Self::CONTEXT_INVALID_OPS
        | Self::UNMATCHED_RIGHT_PAREN_ORD;

    /// The syntax of one of GNU find's `-regextype` names (findutils' table of gnulib's
    /// `RE_SYNTAX_*`).
    pub fn find_dialect(name: &[u8]) -> Option<Self> {
        Some(Self(match name {
            // Emacs's syntax (no bits), where `.` also matches a newline.
            b"findutils-default" => Self::DOT_NEWLINE,
            b"emacs" => 0,
            b"ed" | b"sed" | b"posix-basic" => Self::POSIX_BASIC,
            b"posix-minimal-basic" => Self::POSIX_COMMON | Self::LIMITED_OPS,
            b"posix-extended" => Self::POSIX_EXTENDED,
            b"awk" => {
                Self::BACKSLASH_ESCAPE_IN_LISTS
                    | Self::DOT_NOT_NULL
                    | Self::NO_BK_PARENS
                    | Self::NO_BK_REFS
                    | Self::NO_BK_VBAR
                    | Self::NO_EMPTY_RANGES
                    | Self::DOT_NEWLINE
                    | Self::CONTEXT_INDEP_ANCHORS
                    | Self::CHAR_CLASSES
                    | Self::UNMATCHED_RIGHT_PAREN_ORD
                    | Self::NO_GNU_OPS
            }
            b"gnu-awk" => {
                (Self::POSIX_EXTENDED
                    | Self::BACKSLASH_ESCAPE_IN_LISTS
                    | Self::INVALID_INTERVAL_ORD)
                    & !(Self::DOT_NOT_NULL | Self::CONTEXT_INDEP_OPS | Self::CONTEXT_INVALID_OPS)
            }
            b"posix-awk" => {
                Self::POSIX_EXTENDED
                    | Self::BACKSLASH_ESCAPE_IN_LISTS
                    | Self::INTERVALS
                    | Self::NO_GNU_OPS
                    | Self::INVALID_INTERVAL_ORD
            }
            b"grep" => {
                (Self::POSIX_BASIC | Self::NEWLINE_ALT)
                    & !(Self::CONTEXT_INVALID_DUP | Self::DOT_NOT_NULL)
            }
            b"egrep" | b"posix-egrep" => {
                (Self::POSIX_EXTENDED | Self::INVALID_INTERVAL_ORD | Self::NEWLINE_ALT)
                    & !(Self::CONTEXT_INVALID_OPS | Self::DOT_NOT_NULL)
            }
            _ => return None,
        }))
    }

    /// Emacs's syntax: no bits.
    pub const EMACS: Self = Self(0);

    /// The same syntax with `bits` set too.
    #[must_use]
    pub fn with(self, bits: u32) -> Self {
        Self(self.0 | bits)
    }

    /// Whether every bit of `bits` is set.
    pub fn has(self, bits: u32) -> bool {
        self.0 & bits == bits
    }
}

/// Whether `pattern` (GNU BRE or ERE) uses back-references: decides the engine.
pub fn has_backreference(pattern: &str, extended: bool) -> bool {
    let probe = Flavor {
        extended,
        utf8: true,
        target: Target::Backtracking,
        group_offset: 0,
        loose: false,
        null_data: false,
        syntax: None,
        turkish_case: false,
    };
    translate(pattern, probe).is_ok_and(|t| t.backreferences)
}

/// Translates a GNU basic or extended expression (see the module's documentation).
pub fn translate(pattern: &str, flavor: Flavor) -> Result<Translated, PatternError> {
    Translator {
        chars: pattern.chars().collect(),
        i: 0,
        out: String::with_capacity(pattern.len() + 8),
        flavor,
        atom: None,
        quantified: false,
        open: Vec::new(),
        groups: 0,
        backreferences: false,
        too_deep: false,
        collation: false,
        turkish_bracket: false,
        completed: Vec::new(),
        open_numbers: Vec::new(),
        caret_here: true,
    }
    .run()
}

struct Translator {
    chars: Vec<char>,
    i: usize,
    out: String,
    flavor: Flavor,
    /// Where the last atom starts in `out`, or `None` at the start of an expression
    /// (nothing a quantifier could apply to).
    atom: Option<usize>,
    /// The last atom already carries a quantifier.
    quantified: bool,
    /// Open groups: (their `atom` on entry, their start in `out`).
    open: Vec<usize>,
    groups: usize,
    backreferences: bool,
    too_deep: bool,
    collation: bool,
    turkish_bracket: bool,
    /// The numbers of the open groups, innermost last.
    open_numbers: Vec<usize>,
    /// Groups closed so far (a back-reference may name only those), by number.
    completed: Vec<usize>,
    /// gnulib: a `^` here is an anchor (at the start, after a group opens or an
    /// alternative starts).
    caret_here: bool,
}

/// Groups nested deeper than this are refused (the engines' own limits are near).
const MAX_NESTING: usize = 500;

fn err<T>(message: &str) -> Result<T, PatternError> {
    Err(PatternError(message.to_owned()))
}

impl Translator {
    /// The translation once the whole pattern was read: GNU's errors for what is
    /// still open or nested too deep.
    fn finish(self) -> Result<Translated, PatternError> {
        if self.too_deep {
            return err("stack overflow");
        }
        if !self.open.is_empty() {
            return err("Unmatched ( or \\(");
        }
        Ok(Translated {
            regex: self.out,
            groups: self.groups,
            backreferences: self.backreferences,
            collation: self.collation,
            turkish_bracket: self.turkish_bracket,
        })
    }

    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.i + ahead).copied()
    }

    fn run(mut self) -> Result<Translated, PatternError> {
        if let Some(syntax) = self.flavor.syntax {
            return self.run_syntax(syntax);
        }
        let extended = self.flavor.extended;
        while let Some(c) = self.peek(0) {
            self.i += 1;
            match c {
                '\\' => self.escape()?,
                '[' => {
                    let start = self.out.len();
                    let class = self.bracket()?;
                    self.out.push_str(&class);
                    self.set_atom(start);
                }
                '.' => self.literal_atom("."),
                '*' if self.atom.is_none() => {
                    if extended {
                        // GNU: a `*` with nothing before it applies to nothing.
                    } else {
                        self.literal_atom(r"\*");
                    }
                }
                '*' => self.quantifier("*"),
                '+' | '?' if extended => {
                    if self.atom.is_some() {
                        self.quantifier(&c.to_string());
                    }
                }
                '{' if extended => {
                    if let Some(interval) = self.interval(false)? {
                        if self.atom.is_some() {
                            self.quantifier(&interval);
                        }
                    } else {
                        self.literal_atom(r"\{");
                    }
                }
                '(' if extended => self.open_group(),
                ')' if extended && !self.open.is_empty() => self.close_group(),
                '|' if extended => self.alternation(),
                '^' if extended || self.at_expression_start() => {
                    self.out.push('^');
                    // After an anchor a `*` is still literal (BRE) or void (ERE).
                    self.atom = None;
                }
                '$' if extended || self.at_expression_end() => {
                    let start = self.out.len();
                    self.out.push('$');
                    self.set_atom(start);
                }
                other => self.literal_char(other),
            }
        }
        self.finish()
    }

    /// A BRE `^` is an anchor at the start of the pattern, a group or an alternative.
    fn at_expression_start(&self) -> bool {
        let before = &self.chars[..self.i - 1];
        before.is_empty()
            || (before.len() >= 2
                && before[before.len() - 2] == '\\'
                && matches!(before[before.len() - 1], '(' | '|')
                && !escaped_backslash(before, before.len() - 2))
    }

    /// A BRE `$` is an anchor at the end of the pattern, a group or an alternative.
    fn at_expression_end(&self) -> bool {
        let rest = &self.chars[self.i..];
        rest.is_empty() || (rest.len() >= 2 && rest[0] == '\\' && matches!(rest[1], ')' | '|'))
    }

    fn set_atom(&mut self, start: usize) {
        self.atom = Some(start);
        self.quantified = false;
    }

    fn literal_atom(&mut self, text: &str) {
        let start = self.out.len();
        self.out.push_str(text);
        self.set_atom(start);
    }

    fn literal_char(&mut self, c: char) {
        let start = self.out.len();
        if self.flavor.turkish_case
            && let Some(class) = turkish_case_class(c)
        {
            self.out.push_str(class);
            self.set_atom(start);
            return;
        }
        push_literal(&mut self.out, c, self.flavor.utf8);
        self.set_atom(start);
    }

    /// Applies a quantifier to the last atom; a second one wraps the first (`a**`).
    fn quantifier(&mut self, quantifier: &str) {
        let Some(start) = self.atom else { return };
        if self.quantified {
            self.out.insert_str(start, "(?:");
            self.out.push(')');
        }
        self.out.push_str(quantifier);
        self.quantified = true;
    }

    fn open_group(&mut self) {
        self.open_numbers.push(self.groups + 1);
        if self.open.len() >= MAX_NESTING {
            // GNU's matcher runs out of stack on such nesting; its message.
            self.too_deep = true;
        }
        self.open.push(self.out.len());
        self.groups += 1;
        self.out.push('(');
        self.atom = None;
    }

    fn close_group(&mut self) {
        let start = self.open.pop().unwrap_or(0);
        if let Some(n) = self.open_numbers.pop() {
            self.completed.push(n);
        }
        self.out.push(')');
        self.set_atom(start);
    }

    fn alternation(&mut self) {
        self.out.push('|');
        self.atom = None;
    }

    /// After `\`.
    fn escape(&mut self) -> Result<(), PatternError> {
        let Some(c) = self.peek(0) else {
            return err("Trailing backslash");
        };
        self.i += 1;
        let extended = self.flavor.extended;
        let fancy = self.flavor.target == Target::Backtracking;
        match c {
            '(' if !extended => self.open_group(),
            ')' if !extended => {
                if self.open.is_empty() {
                    return err("Unmatched ) or \\)");
                }
                self.close_group();
            }
            '|' if !extended => self.alternation(),
            '{' if !extended => {
                if self.atom.is_none() {
                    // GNU: `\{` with nothing before it is a literal `{`.
                    self.literal_atom(r"\{");
                } else {
                    let interval = self.interval(true)?.ok_or_else(|| {
                        PatternError(
                            if self.chars[self.i..].contains(&'}') {
                                "Invalid content of \\{\\}"
                            } else {
                                "Unmatched \\{"
                            }
                            .to_owned(),
                        )
                    })?;
                    self.quantifier(&interval);
                }
            }
            '+' | '?' if !extended => {
                if self.atom.is_some() {
                    self.quantifier(&c.to_string());
                } else {
                    self.literal_char(c);
                }
            }
            '1'..='9' => {
                let n = c as usize - '0' as usize;
                if n > self.groups {
                    return err("Invalid back reference");
                }
                self.backreferences = true;
                let start = self.out.len();
                self.out
                    .push_str(&format!("\\{}", n + self.flavor.group_offset));
                self.set_atom(start);
            }
            '<' => self.assertion(if fancy {
                r"(?<!\w)(?=\w)"
            } else {
                r"\b{start}"
            }),
            '>' => self.assertion(if fancy { r"(?<=\w)(?!\w)" } else { r"\b{end}" }),
            'b' => self.assertion(r"\b"),
            'B' => self.assertion(r"\B"),
            '`' => self.assertion(r"\A"),
            '\'' => self.assertion(r"\z"),
            'w' => self.literal_atom(r"\w"),
            'W' => self.literal_atom(r"\W"),
            's' => self.literal_atom(r"\s"),
            'S' => self.literal_atom(r"\S"),
            other => self.literal_char(other),
        }
        Ok(())
    }

    fn assertion(&mut self, text: &str) {
        if !self.flavor.loose || text.starts_with(r"\A") || text.starts_with(r"\z") {
            self.out.push_str(text);
        }
        // A quantifier after an assertion has nothing to repeat.
        self.atom = None;
    }

    /// An interval after `{` (or `\{`): `{n}`, `{n,}`, `{,m}`, `{n,m}`. `None` when the
    /// text does not form one (then nothing was consumed).
    fn interval(&mut self, basic: bool) -> Result<Option<String>, PatternError> {
        let save = self.i;
        let digits = |t: &mut Translator| {
            let start = t.i;
            while t.peek(0).is_some_and(|c| c.is_ascii_digit()) {
                t.i += 1;
            }
            let text: String = t.chars[start..t.i].iter().collect();
            (!text.is_empty()).then_some(text)
        };
        let min = digits(self);
        let mut max = min.clone();
        if self.peek(0) == Some(',') {
            self.i += 1;
            max = digits(self);
        }
        let closed = if basic {
            self.peek(0) == Some('\\') && self.peek(1) == Some('}')
        } else {
            self.peek(0) == Some('}')
        };
        let had_comma = self.chars[save..self.i].contains(&',');
        if closed && min.is_none() && !had_comma {
            // `{}`: GNU's error, not a literal.
            return err("Invalid content of \\{\\}");
        }
        if !closed {
            self.i = save;
            return Ok(None);
        }
        self.i += if basic { 2 } else { 1 };
        let parse = |s: &Option<String>| -> Result<Option<u32>, PatternError> {
            match s {
                None => Ok(None),
                Some(s) => match s.parse::<u32>() {
                    Ok(n) if n <= 32767 => Ok(Some(n)),
                    _ => err("Regular expression too big"),
                },
            }
        };
        let lo = parse(&min)?.unwrap_or(0);
        let hi = parse(&max)?;
        if hi.is_some_and(|hi| hi < lo) {
            return err("Invalid content of \\{\\}");
        }
        Ok(Some(match (had_comma, hi) {
            (false, _) => format!("{{{lo}}}"),
            (true, None) => format!("{{{lo},}}"),
            (true, Some(hi)) => format!("{{{lo},{hi}}}"),
        }))
    }

    /// A bracket expression after `[`, written as a class of the target's syntax.
    fn bracket(&mut self) -> Result<String, PatternError> {
        const UNMATCHED: &str = "Unmatched [, [^, [:, [., or [=";
        let open_at = self.i;
        let mut negated = false;
        if self.peek(0) == Some('^') {
            negated = true;
            self.i += 1;
        }
        // `[:alpha:]` as a whole pattern: GNU refuses it.
        let utf8 = self.flavor.utf8;
        let mut items = String::new();
        let mut first = true;
        // The previous single character, for a range.
        let mut previous: Option<char> = None;
        loop {
            let Some(c) = self.peek(0) else {
                return err(UNMATCHED);
            };
            if c == ']' && !first {
                self.i += 1;
                break;
            }
            first = false;
            if c == '[' && matches!(self.peek(1), Some(':' | '.' | '=')) {
                let kind = self.peek(1).unwrap_or(':');
                let start = self.i + 2;
                let mut j = start;
                while j + 1 < self.chars.len()
                    && !(self.chars[j] == kind && self.chars[j + 1] == ']')
                {
                    j += 1;
                }
                if j + 1 >= self.chars.len() {
                    return err(UNMATCHED);
                }
                let name: String = self.chars[start..j].iter().collect();
                self.i = j + 2;
                match kind {
                    ':' => {
                        self.turkish_bracket |= self.flavor.turkish_case;
                        items.push_str(&posix_class(&name, utf8).ok_or_else(|| {
                            PatternError("Invalid character class name".to_owned())
                        })?);
                        previous = None;
                    }
                    _ => {
                        let mut chars = name.chars();
                        let (Some(single), None) = (chars.next(), chars.next()) else {
                            return err("Invalid collation character");
                        };
                        self.turkish_bracket |=
                            self.flavor.turkish_case && turkish_case_class(single).is_some();
                        if kind == '=' && utf8 && single.is_alphabetic() {
                            // Its members follow the locale's collation (à is an a).
                            match crate::collate::equivalents(single) {
                                Some(members) => {
                                    for member in members {
                                        push_class_char(&mut items, member, utf8);
                                    }
                                    previous = None;
                                    continue;
                                }
                                None => self.collation = true,
                            }
                        }
                        push_class_char(&mut items, single, utf8);
                        previous = Some(single);
                    }
                }
                continue;
            }
            self.i += 1;
            if c == '-'
                && let Some(low) = previous
                && self.peek(0).is_some_and(|c| c != ']')
            {
                // A range `low-high`.
                let mut high = self.peek(0).unwrap_or(low);
                self.i += 1;
                if high == '[' && matches!(self.peek(0), Some('.' | '=')) {
                    let kind = self.peek(0).unwrap_or('.');
                    let start = self.i + 1;
                    let mut j = start;
                    while j + 1 < self.chars.len()
                        && !(self.chars[j] == kind && self.chars[j + 1] == ']')
                    {
                        j += 1;
                    }
                    let name: Vec<char> = self.chars[start..j.min(self.chars.len())].to_vec();
                    if name.len() != 1 {
                        return err("Invalid range end");
                    }
                    high = name[0];
                    self.i = j + 2;
                }
                if high < low {
                    return err("Invalid range end");
                }
                // `low` was pushed as a single character: extend it to a range.
                if !utf8 && (!low.is_ascii() || !high.is_ascii()) {
                    // Byte locale: a range of multi-byte characters has no meaning there.
                    return err("Invalid range end");
                }
                self.turkish_bracket |= self.flavor.turkish_case;
                items.push('-');
                push_class_char(&mut items, high, utf8);
                previous = None;
                continue;
            }
            self.turkish_bracket |= self.flavor.turkish_case && turkish_case_class(c).is_some();
            push_class_char(&mut items, c, utf8);
            previous = Some(c);
        }
        let body: String = self.chars[open_at..self.i - 1].iter().collect();
        let letters = body.len() > 2
            && body[1..body.len() - 1]
                .chars()
                .all(|c| c.is_ascii_alphabetic());
        if letters && body.starts_with(':') && body.ends_with(':') && !negated {
            return Err(PatternError(format!(
                "character class syntax is [[{body}]], not [{body}]"
            )));
        }
        let mut class = String::from("[");
        if negated {
            class.push('^');
            // A negated class never matches the line terminator (GNU).
            class.push_str(if self.flavor.null_data {
                r"\x00"
            } else {
                r"\n"
            });
        }
        class.push_str(&items);
        class.push(']');
        Ok(class)
    }
}

/// gnulib's messages.
const BAD_REPEAT: &str = "Invalid preceding regular expression";
const BAD_INTERVAL: &str = "Invalid content of \\{\\}";

/// gnulib's reading under a [`Syntax`] (find's dialects).
impl Translator {
    fn run_syntax(mut self, syntax: Syntax) -> Result<Translated, PatternError> {
        while let Some(c) = self.peek(0) {
            self.i += 1;
            let caret_here = std::mem::replace(&mut self.caret_here, false);
            match c {
                '\\' => self.escape_syntax(syntax)?,
                '\n' if syntax.has(Syntax::NEWLINE_ALT) => self.alternative(),
                '|' if syntax.has(Syntax::NO_BK_VBAR) && !syntax.has(Syntax::LIMITED_OPS) => {
                    self.alternative();
                }
                '*' => self.repeat(syntax, "*")?,
                '+' | '?'
                    if !syntax.has(Syntax::LIMITED_OPS) && !syntax.has(Syntax::BK_PLUS_QM) =>
                {
                    self.repeat(syntax, &c.to_string())?;
                }
                '{' if syntax.has(Syntax::INTERVALS | Syntax::NO_BK_BRACES) => {
                    self.interval_syntax(syntax)?;
                }
                '(' if syntax.has(Syntax::NO_BK_PARENS) => self.open_alternatives(),
                ')' if syntax.has(Syntax::NO_BK_PARENS) => self.close_syntax(syntax, ')')?,
                '[' => {
                    let start = self.out.len();
                    let class = self.bracket_syntax(syntax)?;
                    self.out.push_str(&class);
                    self.set_atom(start);
                }
                '.' => self.literal_atom(if syntax.has(Syntax::DOT_NEWLINE) {
                    "(?s:.)"
                } else {
                    r"[^\n]"
                }),
                '^' if syntax.has(Syntax::CONTEXT_INDEP_ANCHORS)
                    || caret_here
                    || (syntax.has(Syntax::NEWLINE_ALT)
                        && self.i >= 2
                        && self.chars[self.i - 2] == '\n') =>
                {
                    self.assertion("^");
                }
                '$' if syntax.has(Syntax::CONTEXT_INDEP_ANCHORS) || self.ends_here(syntax) => {
                    self.assertion("$");
                }
                other => self.literal_char(other),
            }
        }
        self.finish()
    }

    /// An alternative starts: `^` anchors right after it.
    fn alternative(&mut self) {
        self.alternation();
        self.caret_here = true;
    }

    fn open_alternatives(&mut self) {
        self.open_group();
        self.caret_here = true;
    }

    /// Whether a `$` here anchors: at the end, or before the end of a group or an
    /// alternative.
    fn ends_here(&self, syntax: Syntax) -> bool {
        let rest = &self.chars[self.i..];
        match rest {
            [] => true,
            ['\n', ..] => syntax.has(Syntax::NEWLINE_ALT),
            ['|', ..] => syntax.has(Syntax::NO_BK_VBAR) && !syntax.has(Syntax::LIMITED_OPS),
            [')', ..] => syntax.has(Syntax::NO_BK_PARENS),
            ['\\', '|', ..] => !syntax.has(Syntax::NO_BK_VBAR) && !syntax.has(Syntax::LIMITED_OPS),
            ['\\', ')', ..] => !syntax.has(Syntax::NO_BK_PARENS),
            _ => false,
        }
    }

    /// A `)` (or `\)`): closes a group, or is literal where the syntax says so.
    fn close_syntax(&mut self, syntax: Syntax, c: char) -> Result<(), PatternError> {
        if !self.open.is_empty() {
            self.close_group();
        } else if syntax.has(Syntax::UNMATCHED_RIGHT_PAREN_ORD) {
            self.literal_char(c);
        } else {
            return err("Unmatched ) or \\)");
        }
        Ok(())
    }

    /// A repetition operator `op` (already read).
    fn repeat(&mut self, syntax: Syntax, op: &str) -> Result<(), PatternError> {
        if self.atom.is_none() {
            return self.repeat_of_nothing(syntax);
        }
        if self.quantified && syntax.has(Syntax::CONTEXT_INVALID_DUP) && op == "*" {
            return err(BAD_REPEAT);
        }
        self.quantifier(op);
        Ok(())
    }

    /// An operator with nothing before it: an error, nothing, or a literal.
    fn repeat_of_nothing(&mut self, syntax: Syntax) -> Result<(), PatternError> {
        if syntax.has(Syntax::CONTEXT_INVALID_OPS) && !syntax.has(Syntax::CONTEXT_INVALID_DUP) {
            return err(BAD_REPEAT);
        }
        if syntax.has(Syntax::CONTEXT_INDEP_OPS) {
            return Ok(());
        }
        // The operator's own character (without its backslash) is literal.
        let c = self.chars[self.i - 1];
        self.literal_char(c);
        Ok(())
    }

    /// After `{` or `\{`: gnulib's interval, or a literal `{` where the syntax allows an
    /// invalid one.
    fn interval_syntax(&mut self, syntax: Syntax) -> Result<(), PatternError> {
        if self.atom.is_none() {
            if syntax.has(Syntax::CONTEXT_INVALID_DUP) {
                return err(BAD_REPEAT);
            }
            return self.repeat_of_nothing(syntax);
        }
        let braces = syntax.has(Syntax::NO_BK_BRACES);
        let start = self.i;
        // gnulib's fetch_number: up to a `,` or the closing brace; -1 for nothing,
        // -2 for anything but digits (or the end of the pattern).
        let fetch = |t: &mut Translator| -> (i64, Option<char>) {
            let mut n: i64 = -1;
            loop {
                let Some(c) = t.peek(0) else {
                    return (-2, None);
                };
                if braces && c == '}' {
                    t.i += 1;
                    return (n, Some('}'));
                }
                if !braces && c == '\\' && t.peek(1) == Some('}') {
                    t.i += 2;
                    return (n, Some('}'));
                }
                if c == ',' {
                    t.i += 1;
                    return (n, Some(','));
                }
                t.i += if c == '\\' && t.peek(1).is_some() {
                    2
                } else {
                    1
                };
                n = match c.to_digit(10) {
                    Some(d) if n != -2 && c != '\\' => {
                        (if n == -1 { 0 } else { n } * 10 + i64::from(d)).min(0x8000)
                    }
                    _ => -2,
                };
            }
        };
        let (mut low, stop) = fetch(self);
        let mut high = low;
        let mut last = stop;
        if low == -1 {
            if stop == Some(',') {
                low = 0;
            } else {
                return err(BAD_INTERVAL);
            }
        }
        if low != -2 {
            high = match stop {
                Some('}') => low,
                Some(',') => {
                    let (n, s) = fetch(self);
                    last = s;
                    n
                }
                _ => -2,
            };
        }
        if low == -2 || high == -2 {
            if !syntax.has(Syntax::INVALID_INTERVAL_ORD) {
                return err(if last.is_none() {
                    "Unmatched \\{"
                } else {
                    BAD_INTERVAL
                });
            }
            // The brace is a literal; what follows it is read again.
            self.i = start;
            self.literal_char('{');
            return Ok(());
        }
        if (high != -1 && low > high) || last != Some('}') {
            return err(BAD_INTERVAL);
        }
        if low > 0x7fff || high > 0x7fff {
            return err("Regular expression too big");
        }
        if self.quantified && syntax.has(Syntax::CONTEXT_INVALID_DUP) {
            return err(BAD_REPEAT);
        }
        let text = if high == -1 {
            format!("{{{low},}}")
        } else {
            format!("{{{low},{high}}}")
        };
        self.quantifier(&text);
        Ok(())
    }

    /// After `\`, under `syntax`.
    fn escape_syntax(&mut self, syntax: Syntax) -> Result<(), PatternError> {
        let Some(c) = self.peek(0) else {
            return err("Trailing backslash");
        };
        self.i += 1;
        let fancy = self.flavor.target == Target::Backtracking;
        let gnu = !syntax.has(Syntax::NO_GNU_OPS);
        match c {
            '(' if !syntax.has(Syntax::NO_BK_PARENS) => self.open_alternatives(),
            ')' if !syntax.has(Syntax::NO_BK_PARENS) => self.close_syntax(syntax, ')')?,
            '|' if !syntax.has(Syntax::NO_BK_VBAR) && !syntax.has(Syntax::LIMITED_OPS) => {
                self.alternative();
            }
            '{' if syntax.has(Syntax::INTERVALS) && !syntax.has(Syntax::NO_BK_BRACES) => {
                self.interval_syntax(syntax)?;
            }
            '+' | '?' if syntax.has(Syntax::BK_PLUS_QM) && !syntax.has(Syntax::LIMITED_OPS) => {
                self.repeat(syntax, &c.to_string())?;
            }
            '1'..='9' if !syntax.has(Syntax::NO_BK_REFS) => {
                let n = c as usize - '0' as usize;
                if !self.completed.contains(&n) {
                    return err("Invalid back reference");
                }
                self.backreferences = true;
                let start = self.out.len();
                self.out
                    .push_str(&format!("\\{}", n + self.flavor.group_offset));
                self.set_atom(start);
            }
            '<' if gnu => self.assertion(if fancy {
                r"(?<!\w)(?=\w)"
            } else {
                r"\b{start}"
            }),
            '>' if gnu => self.assertion(if fancy { r"(?<=\w)(?!\w)" } else { r"\b{end}" }),
            'b' if gnu => self.assertion(r"\b"),
            'B' if gnu => self.assertion(r"\B"),
            '`' if gnu => self.assertion(r"\A"),
            '\'' if gnu => self.assertion(r"\z"),
            'w' if gnu => self.literal_atom(r"\w"),
            'W' if gnu => self.literal_atom(r"\W"),
            's' if gnu => self.literal_atom(r"\s"),
            'S' if gnu => self.literal_atom(r"\S"),
            other if syntax.has(Syntax::ICASE) && other.is_ascii_lowercase() => {
                self.literal_atom("[a&&b]");
            }
            other => self.literal_char(other),
        }
        Ok(())
    }

    /// A bracket expression after `[`, as gnulib reads it under `syntax`.
    fn bracket_syntax(&mut self, syntax: Syntax) -> Result<String, PatternError> {
        const UNMATCHED: &str = "Unmatched [, [^, [:, [., or [=";
        let utf8 = self.flavor.utf8;
        let mut negated = false;
        if self.peek(0) == Some('^') {
            negated = true;
            self.i += 1;
        }
        // gnulib: a list that ends before its first element is a bad pattern.
        if self.peek(0).is_none() {
            return err("Invalid regular expression");
        }
        let mut items = String::new();
        let mut first = true;
        loop {
            // One element: a character (maybe the start of a range) or a class.
            let Some(c) = self.peek(0) else {
                return err(UNMATCHED);
            };
            if c == ']' && !first {
                self.i += 1;
                break;
            }
            first = false;
            let low = match self.bracket_element(syntax)? {
                BracketItem::Class(class) => {
                    items.push_str(&class);
                    continue;
                }
                BracketItem::Char(low) => low,
            };
            // A range `low-high`, unless the `-` ends the list.
            if self.peek(0) == Some('-') && self.peek(1).is_some_and(|c| c != ']') {
                self.i += 1;
                let BracketItem::Char(high) = self.bracket_element(syntax)? else {
                    return err("Invalid range end");
                };
                if high < low {
                    if syntax.has(Syntax::NO_EMPTY_RANGES) {
                        return err("Invalid range end");
                    }
                    continue;
                }
                if !utf8 && (!low.is_ascii() || !high.is_ascii()) {
                    return err("Invalid range end");
                }
                push_class_char(&mut items, low, utf8);
                items.push('-');
                push_class_char(&mut items, high, utf8);
                continue;
            }
            push_class_char(&mut items, low, utf8);
        }
        let newline = if negated && syntax.has(Syntax::HAT_LISTS_NOT_NEWLINE) {
            r"\n"
        } else {
            ""
        };
        Ok(match (negated, items.is_empty() && newline.is_empty()) {
            (false, true) => "[a&&b]".to_owned(),
            (true, true) => "(?s:.)".to_owned(),
            (false, false) => format!("[{items}]"),
            (true, false) => format!("[^{newline}{items}]"),
        })
    }

    /// One element of a bracket expression.
    fn bracket_element(&mut self, syntax: Syntax) -> Result<BracketItem, PatternError> {
        const UNMATCHED: &str = "Unmatched [, [^, [:, [., or [=";
        let Some(c) = self.peek(0) else {
            return err(UNMATCHED);
        };
        if c == '\\'
            && syntax.has(Syntax::BACKSLASH_ESCAPE_IN_LISTS)
            && let Some(quoted) = self.peek(1)
        {
            self.i += 2;
            return Ok(BracketItem::Char(quoted));
        }
        let kind = self.peek(1);
        let special = c == '['
            && match kind {
                Some('.' | '=') => true,
                Some(':') => syntax.has(Syntax::CHAR_CLASSES),
                _ => false,
            };
        if !special {
            self.i += 1;
            return Ok(BracketItem::Char(c));
        }
        let kind = kind.unwrap_or(':');
        let start = self.i + 2;
        let mut j = start;
        while j + 1 < self.chars.len() && !(self.chars[j] == kind && self.chars[j + 1] == ']') {
            j += 1;
        }
        if j + 1 >= self.chars.len() {
            return err(UNMATCHED);
        }
        let name: String = self.chars[start..j].iter().collect();
        self.i = j + 2;
        if kind == ':' {
            return posix_class(&name, self.flavor.utf8)
                .map(BracketItem::Class)
                .ok_or_else(|| PatternError("Invalid character class name".to_owned()));
        }
        let mut chars = name.chars();
        let (Some(single), None) = (chars.next(), chars.next()) else {
            return err("Invalid collation character");
        };
        if kind == '=' && self.flavor.utf8 && single.is_alphabetic() {
            self.collation = true;
        }
        Ok(BracketItem::Char(single))
    }
}

enum BracketItem {
    Char(char),
    Class(String),
}

/// The class of `c`'s cases in a Turkish locale, for the four letters whose cases
/// differ there from Unicode's defaults, written to match without `(?i)`.
pub fn turkish_case_class(c: char) -> Option<&'static str> {
    match c {
        'i' | '\u{130}' => Some("(?-i:[i\u{130}])"),
        'I' | '\u{131}' => Some("(?-i:[I\u{131}])"),
        _ => None,
    }
}

fn escaped_backslash(chars: &[char], at: usize) -> bool {
    let mut n = 0;
    let mut j = at;
    while j > 0 && chars[j - 1] == '\\' {
        n += 1;
        j -= 1;
    }
    n % 2 == 1
}

/// A literal character outside a class. In a byte locale a non-ASCII character is its
/// UTF-8 bytes (each its own character there).
fn push_literal(out: &mut String, c: char, utf8: bool) {
    if !utf8 && !c.is_ascii() {
        let mut buffer = [0u8; 4];
        for b in c.encode_utf8(&mut buffer).bytes() {
            out.push_str(&format!(r"\x{b:02X}"));
        }
        return;
    }
    if c.is_ascii_punctuation() || c == ' ' {
        out.push_str(&regex_syntax_escape(c));
    } else {
        out.push(c);
    }
}

fn regex_syntax_escape(c: char) -> String {
    if regex::escape(&c.to_string()).len() > 1 {
        format!("\\{c}")
    } else {
        c.to_string()
    }
}

/// A character inside a class, escaped so that the regex crate's class syntax (`&&`,
/// `--`, `~~`, nested `[`) reads it as itself.
fn push_class_char(out: &mut String, c: char, utf8: bool) {
    if !utf8 && !c.is_ascii() {
        let mut buffer = [0u8; 4];
        for b in c.encode_utf8(&mut buffer).bytes() {
            out.push_str(&format!(r"\x{b:02X}"));
        }
        return;
    }
    if c.is_ascii_punctuation() {
        out.push('\\');
    }
    out.push(c);
}

/// A POSIX class's members as class items: Unicode's in a UTF-8 locale, ASCII in C.
fn posix_class(name: &str, utf8: bool) -> Option<String> {
    const NAMES: &[&str] = &[
        "alpha", "upper", "lower", "digit", "xdigit", "space", "print", "punct", "graph", "cntrl",
        "blank", "alnum",
    ];
    if !NAMES.contains(&name) {
        return None;
    }
    if !utf8 {
        return Some(format!("[:{name}:]"));
    }
    Some(
        match name {
            "alpha" => r"\p{Alphabetic}",
            "upper" => r"\p{Uppercase}",
            "lower" => r"\p{Lowercase}",
            "digit" => "0-9",
            "xdigit" => "0-9A-Fa-f",
            "space" => r"\s",
            "blank" => r"\t\p{Zs}",
            "alnum" => r"\p{Alphabetic}0-9",
            "punct" => r"\p{P}\p{S}",
            "cntrl" => r"\p{Cc}",
            "graph" => r"\p{L}\p{M}\p{N}\p{P}\p{S}",
            _ => r"\p{L}\p{M}\p{N}\p{P}\p{S}\p{Zs}",
        }
        .to_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ere(p: &str) -> Result<String, PatternError> {
        translate(
            p,
            Flavor {
                extended: true,
                utf8: true,
                target: Target::Fast,
                group_offset: 0,
                loose: false,
                null_data: false,
                syntax: None,
                turkish_case: false,
            },
        )
        .map(|t| t.regex)
    }

    fn bre(p: &str) -> Result<String, PatternError> {
        translate(
            p,
            Flavor {
                extended: false,
                utf8: true,
                target: Target::Fast,
                group_offset: 0,
                loose: false,
                null_data: false,
                syntax: None,
                turkish_case: false,
            },
        )
        .map(|t| t.regex)
    }

    #[test]
    fn search_1_bre_translation() {
        for (bre_text, ere_text) in [
            ("a\\|b", "a|b"),
            ("a\\{2,3\\}", "a{2,3}"),
            ("a+b?", "a\\+b\\?"),
            ("a|b", "a\\|b"),
            ("(x)", "\\(x\\)"),
            ("*star", "\\*star"),
            ("^a*", "^a*"),
            ("^*a", "^\\*a"),
            ("a^b", "a\\^b"),
            ("a$b", "a\\$b"),
            ("end$", "end$"),
            ("x\\{2\\}", "x{2}"),
            ("a\\{,2\\}", "a{0,2}"),
            ("\\{1\\}a", "\\{1\\}a"),
            ("\\.", "\\."),
            ("\\<a\\>", "\\b{start}a\\b{end}"),
            ("a**", "(?:a*)*"),
        ] {
            assert_eq!(bre(bre_text).unwrap(), ere_text, "{bre_text}");
        }
    }

    #[test]
    fn search_1_ere_literal_readings_are_gnus() {
        assert_eq!(ere("a{1").unwrap(), "a\\{1");
        assert_eq!(ere(")").unwrap(), "\\)");
        assert_eq!(ere("*a").unwrap(), "a");
        assert_eq!(ere("a|*b").unwrap(), "a|b");
        assert_eq!(ere("a{,2}").unwrap(), "a{0,2}");
        assert_eq!(ere("a{1,2}{3}").unwrap(), "(?:a{1,2}){3}");
        assert_eq!(ere("a{,}").unwrap(), "a{0,}");
        assert_eq!(ere("[::]").unwrap(), "[\\:\\:]");
        assert_eq!(ere("[:spac-e:]").unwrap(), "[\\:spac-e\\:]");
        assert_eq!(
            ere("a{}"),
            Err(PatternError("Invalid content of \\{\\}".to_owned()))
        );
    }

    #[test]
    fn search_1_gnus_errors_are_errors() {
        for (pattern, extended, message) in [
            (
                "[:space:]",
                false,
                "character class syntax is [[:space:]], not [:space:]",
            ),
            ("[[:notdef:]]", true, "Invalid character class name"),
            ("a\\{1", false, "Unmatched \\{"),
            ("a\\{2,1\\}", false, "Invalid content of \\{\\}"),
            ("[z-a]", false, "Invalid range end"),
            ("\\(a\\)\\2", false, "Invalid back reference"),
            ("\\)", false, "Unmatched ) or \\)"),
            ("\\(", false, "Unmatched ( or \\("),
            ("[a", false, "Unmatched [, [^, [:, [., or [="),
            ("a\\", false, "Trailing backslash"),
        ] {
            let flavor = Flavor {
                extended,
                utf8: true,
                target: Target::Fast,
                group_offset: 0,
                loose: false,
                null_data: false,
                syntax: None,
                turkish_case: false,
            };
            assert_eq!(
                translate(pattern, flavor),
                Err(PatternError(message.to_owned())),
                "{pattern}"
            );
        }
    }

    #[test]
    fn search_1_back_references_are_renumbered() {
        let t = translate(
            "\\(a\\)\\1",
            Flavor {
                extended: false,
                utf8: true,
                target: Target::Backtracking,
                group_offset: 2,
                loose: false,
                null_data: false,
                syntax: None,
                turkish_case: false,
            },
        )
        .unwrap();
        assert_eq!(t.regex, "(a)\\3");
        assert!(t.backreferences && t.groups == 1);
        assert!(has_backreference("\\(a\\)\\1", false));
        assert!(!has_backreference("a\\\\1", false));
    }

    fn dialect(name: &str, pattern: &str) -> Result<String, PatternError> {
        translate(
            pattern,
            Flavor {
                extended: false,
                utf8: true,
                target: Target::Fast,
                group_offset: 0,
                loose: false,
                null_data: false,
                syntax: Syntax::find_dialect(name.as_bytes()),
                turkish_case: false,
            },
        )
        .map(|t| t.regex)
    }

    #[test]
    fn search_2_find_dialects_read_as_gnulibs_syntaxes() {
        let bad_repeat = Err(PatternError(BAD_REPEAT.to_owned()));
        // Operators with nothing before them: literal, dropped, or an error.
        assert_eq!(dialect("emacs", "*a").unwrap(), r"\*a");
        assert_eq!(dialect("egrep", "*a").unwrap(), "a");
        assert_eq!(dialect("posix-extended", "*a"), bad_repeat);
        // A second repetition: an error in posix-basic only.
        assert_eq!(dialect("posix-basic", "a**"), bad_repeat);
        assert_eq!(dialect("grep", "a**").unwrap(), "(?:a*)*");
        // Which operators take a backslash.
        assert_eq!(
            dialect("posix-minimal-basic", r"a+\+\|").unwrap(),
            r"a\+\+\|"
        );
        assert_eq!(dialect("posix-basic", r"a\+\|b").unwrap(), "a+|b");
        assert_eq!(dialect("emacs", r"a+\{2\}").unwrap(), r"a+\{2\}");
        assert_eq!(dialect("posix-extended", "a{2}").unwrap(), "a{2,2}");
        // An invalid interval is literal where the syntax says so, else an error.
        assert_eq!(dialect("egrep", "a{x").unwrap(), r"a\{x");
        assert_eq!(
            dialect("posix-extended", "a{x"),
            Err(PatternError("Unmatched \\{".to_owned()))
        );
        // `.` and newlines; backslashes in brackets; GNU operators.
        assert_eq!(dialect("emacs", ".").unwrap(), r"[^\n]");
        assert_eq!(dialect("findutils-default", ".").unwrap(), "(?s:.)");
        assert_eq!(dialect("awk", r"[\]]").unwrap(), r"[\]]");
        assert_eq!(dialect("posix-extended", r"[\]]").unwrap(), r"[\\]\]");
        assert_eq!(dialect("awk", r"\<").unwrap(), "<");
        assert_eq!(dialect("gnu-awk", r"\<").unwrap(), r"\b{start}");
        // Anchors by context.
        assert_eq!(dialect("posix-basic", "a^b$").unwrap(), r"a\^b$");
        assert_eq!(dialect("posix-extended", "a^b").unwrap(), "a^b");
        assert_eq!(dialect("posix-basic", r"\(^a\)").unwrap(), "(^a)");
        // Back-references only to closed groups; none in awk.
        assert_eq!(
            dialect("posix-extended", r"(a\1)"),
            Err(PatternError("Invalid back reference".to_owned()))
        );
        assert_eq!(dialect("awk", r"(a)\1").unwrap(), "(a)1");
    }
}
