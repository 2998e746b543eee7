//! Bash text → [`Analysis`]: the simple commands a command line runs, with their argv
//! after quote removal, prefix assignments, redirects (targets and here-doc bodies), the
//! connector before each, and every construct this crate does not descend into (PARSE).
//!
//! The parser is `rable`, a port of the Parable bash parser validated against bash.
//! Quote removal and staticness are ours ([`word`]), and fail closed: a word whose value
//! could differ at run time is dynamic, with the reason. [`second_opinion`] parses the
//! same text with tree-sitter-bash, so a caller can require that two independent parsers
//! see the same commands before trusting either (RO-10).
//!
//! Pure: no file system, processes, environment or clock.

mod builtins;
mod second;
mod walk;
pub mod word;

pub use second::second_opinion;
pub use word::{Dialect, Dynamic, Word, evaluate};

/// Commands longer than this are not analysed (PARSE-3).
pub const MAX_COMMAND_CHARS: usize = 10_000;

/// The operator before a simple command (PARSE-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connector {
    /// The first command, or after `;` or a newline.
    Sequence,
    /// `&&`.
    And,
    /// `||`.
    Or,
    /// `|`.
    Pipe,
    /// `|&`.
    PipeBoth,
}

/// A here-document attached to a redirect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HereDoc {
    /// Its body as written.
    pub body: String,
    /// The delimiter was quoted, so the body is taken literally.
    pub quoted: bool,
    /// The body expands something at run time (an unquoted body with `$` or a backquote).
    pub dynamic: bool,
}

/// One redirect of a simple command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// The file descriptor it applies to, when written (`2>`); `None` for the default.
    pub fd: Option<i32>,
    /// The operator: `>`, `>>`, `<`, `>&`, `<&`, `&>`, `&>>`, `<>`, `>|`, `<<`, `<<-`, `<<<`.
    pub op: String,
    /// The target word (for a here-doc, the delimiter).
    pub target: Word,
    /// The here-doc, for `<<` and `<<-`.
    pub heredoc: Option<HereDoc>,
}

impl Redirect {
    /// A duplication or close of a descriptor (`2>&1`, `>&-`), which touches no file.
    pub fn is_fd_duplication(&self) -> bool {
        matches!(self.op.as_str(), ">&" | "<&")
            && self.target.is_static()
            && (self.target.value == "-" || self.target.value.chars().all(|c| c.is_ascii_digit()))
    }

    /// Output to `/dev/null` only.
    pub fn is_dev_null_output(&self) -> bool {
        matches!(self.op.as_str(), ">" | ">>" | "&>" | "&>>" | ">|")
            && self.target.is_static()
            && self.target.value == "/dev/null"
    }

    /// Reads input (`<`, here-doc, here-string).
    pub fn is_input(&self) -> bool {
        matches!(self.op.as_str(), "<" | "<<" | "<<-" | "<<<")
    }
}

/// One simple command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    /// Its words, command name first.
    pub argv: Vec<Word>,
    /// `NAME=value` assignments before the name, as (name, value word).
    pub assignments: Vec<(String, Word)>,
    /// Its redirects.
    pub redirects: Vec<Redirect>,
    /// The operator before it.
    pub connector: Connector,
    /// Its source text.
    pub text: String,
}

impl SimpleCommand {
    /// The argv values (meaningful when every word is static).
    pub fn args(&self) -> Vec<&str> {
        self.argv.iter().map(|w| w.value.as_str()).collect()
    }

    /// The first dynamic word anywhere in it, with where it is.
    pub fn first_dynamic(&self) -> Option<(&Word, &Dynamic)> {
        let assignment_values = self.assignments.iter().map(|(_, w)| w);
        let targets = self.redirects.iter().map(|r| &r.target);
        self.argv
            .iter()
            .chain(assignment_values)
            .chain(targets)
            .find_map(|w| w.dynamic.as_ref().map(|d| (w, d)))
    }
}

/// Syntax this crate does not descend into for permission purposes (PARSE-2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported {
    /// What it is: `subshell`, `if`, `for`, `function definition`, `background &`, ...
    pub construct: &'static str,
    /// Its source text.
    pub text: String,
}

/// Why a command could not be analysed (PARSE-3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseFailure {
    /// More than [`MAX_COMMAND_CHARS`] characters.
    TooLong(usize),
    /// The parser reported an error.
    Syntax(String),
}

impl std::fmt::Display for ParseFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParseFailure::TooLong(chars) => {
                write!(
                    f,
                    "the command is {chars} characters long (over {MAX_COMMAND_CHARS})"
                )
            }
            ParseFailure::Syntax(message) => write!(f, "it does not parse: {message}"),
        }
    }
}

/// A character outside quotes that tokenizers disagree on (RO-11).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OddCharacter {
    /// The character.
    pub ch: char,
    /// Its character offset in the source.
    pub offset: usize,
}

/// What a command line does, as far as static analysis can tell.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Analysis {
    /// The simple commands in the supported structure (lists, pipelines), in order.
    pub commands: Vec<SimpleCommand>,
    /// Every other simple command found anywhere: inside substitutions, subshells,
    /// compound commands, function bodies. For deny rules, never for approval.
    pub nested: Vec<SimpleCommand>,
    /// Constructs not descended into.
    pub unsupported: Vec<Unsupported>,
    /// Why it could not be analysed, if so.
    pub failure: Option<ParseFailure>,
    /// Unusual whitespace or control characters outside quotes.
    pub odd_characters: Vec<OddCharacter>,
    /// The dialect it was analysed for.
    pub dialect: Dialect,
}

impl Analysis {
    /// PARSE-5: it parsed, uses no unsupported syntax, has no dynamic word, no dynamic
    /// here-doc and no odd character outside quotes.
    pub fn is_permission_safe(&self) -> bool {
        self.unsafe_reason().is_none()
    }

    /// Why it is not permission safe, in words, if it is not.
    pub fn unsafe_reason(&self) -> Option<String> {
        if let Some(failure) = &self.failure {
            return Some(failure.to_string());
        }
        if let Some(odd) = self.odd_characters.first() {
            return Some(format!(
                "it contains the character U+{:04X} outside quotes, which tokenizers read differently",
                u32::from(odd.ch)
            ));
        }
        if let Some(unsupported) = self.unsupported.first() {
            return Some(format!(
                "it uses a {} (`{}`)",
                unsupported.construct,
                shorten(&unsupported.text)
            ));
        }
        for command in &self.commands {
            if let Some((word, why)) = command.first_dynamic() {
                return Some(format!("`{}` has a {why}", shorten(&word.raw)));
            }
            for redirect in &command.redirects {
                if redirect.heredoc.as_ref().is_some_and(|h| h.dynamic) {
                    return Some(format!(
                        "`{}` has a here-document that expands at run time",
                        shorten(&command.text)
                    ));
                }
            }
        }
        None
    }
}

/// At most 60 characters of `text`, for messages.
pub fn shorten(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// How many commands this process analysed ([`analyze`]) and parsed a second time
/// ([`second_opinion`]): for tests and benchmarks that check a call analyses its command
/// once.
pub fn parse_counts() -> (u64, u64) {
    use std::sync::atomic::Ordering;
    (
        ANALYSES.load(Ordering::Relaxed),
        second::SECOND_OPINIONS.load(Ordering::Relaxed),
    )
}

static ANALYSES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Analyses `source` for `dialect`.
pub fn analyze(source: &str, dialect: Dialect) -> Analysis {
    ANALYSES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut analysis = Analysis {
        dialect,
        ..Analysis::default()
    };
    let chars = source.chars().count();
    if chars > MAX_COMMAND_CHARS {
        analysis.failure = Some(ParseFailure::TooLong(chars));
        return analysis;
    }
    analysis.odd_characters = odd_characters(source);
    match rable::parse(source, false) {
        Ok(nodes) => walk::walk_program(source, &nodes, dialect, &mut analysis),
        Err(error) => analysis.failure = Some(ParseFailure::Syntax(error.to_string())),
    }
    analysis
}

/// Characters outside single and double quotes that some tokenizer treats as a word
/// separator and bash does not, or the reverse: non-ASCII spaces, CR, VT, FF and other
/// controls except tab and newline (RO-11).
fn odd_characters(source: &str) -> Vec<OddCharacter> {
    let mut found = Vec::new();
    let (mut single, mut double, mut escaped) = (false, false, false);
    for (offset, ch) in source.chars().enumerate() {
        if escaped {
            escaped = false;
            continue;
        }
        match ch {
            '\\' if !single => escaped = true,
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            _ if single || double => {}
            '\t' | '\n' => {}
            c if c.is_control() || (c.is_whitespace() && c != ' ') || is_invisible(c) => {
                found.push(OddCharacter { ch, offset });
            }
            _ => {}
        }
    }
    found
}

/// Zero-width and other invisible format characters.
fn is_invisible(c: char) -> bool {
    matches!(c, '\u{200B}'..='\u{200F}' | '\u{2060}'..='\u{2064}' | '\u{FEFF}' | '\u{00AD}')
}

#[cfg(test)]
mod tests;
