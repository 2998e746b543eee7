//! GNU find's command line: leading options, starting points and the expression, with
//! GNU's operator precedence (`!` over `-a` over `-o` over `,`), its implicit `-print`
//! and its error messages. Arguments are bytes: a pattern or a starting point that is not
//! UTF-8 matches and prints as it is.

use std::ffi::CString;

use super::printf::{self, Segment};
use super::{Bytes, Meta, quote};
use crate::pattern::{self, Flavor, PatternError, Syntax, translate};

/// Which symbolic links are followed: `-P` (none, the default), `-H` (starting points),
/// `-L` (all).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Follow {
    Never,
    Roots,
    Always,
}

/// A numeric comparison: `+N` (greater), `-N` (less) or `N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Cmp {
    Less,
    Equal,
    Greater,
}

impl Cmp {
    pub(super) fn test<T: PartialOrd>(self, value: T, n: T) -> bool {
        match self {
            Self::Less => value < n,
            Self::Equal => value == n,
            Self::Greater => value > n,
        }
    }
}

/// Which timestamp of a file a test reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TimeField {
    Access,
    Birth,
    Change,
    Modify,
}

/// How `-perm` compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PermKind {
    Exact,
    All,
    Any,
}

/// A regular expression that must match the whole path (`-regex`), in the locale's
/// characters (bytes in the C locale).
pub(super) struct Regex {
    pub(super) engine: RegexEngine,
    pub(super) utf8_locale: bool,
}

/// The engine a pattern runs on: a finite automaton, or backtracking where the pattern
/// has back-references.
pub(super) enum RegexEngine {
    Fast(regex::bytes::Regex),
    /// In the C locale the path's bytes are the characters U+0000–U+00FF here.
    Backtracking(fancy_regex::Regex),
}

/// One node of the expression.
pub(super) enum Node {
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    Comma(Box<Node>, Box<Node>),
    Not(Box<Node>),
    True,
    False,
    Name {
        pattern: CString,
        casefold: bool,
    },
    Path {
        pattern: CString,
        casefold: bool,
    },
    Lname {
        pattern: CString,
        casefold: bool,
    },
    Regex(Box<Regex>),
    /// `-type` (or `-xtype` with `x`): a set of type letters.
    Type {
        types: Vec<u8>,
        x: bool,
    },
    Size {
        cmp: Cmp,
        n: u64,
        unit: u64,
    },
    Empty,
    /// The file's `field` is newer than `reference` (seconds, nanoseconds).
    Newer {
        field: TimeField,
        reference: (i64, i64),
    },
    /// `-used N`: the file was last read `N` days (rounded up; nanoseconds here) after its
    /// status last changed (never when it was read before the change).
    Used {
        cmp: Cmp,
        days: i128,
    },
    /// `-fstype TYPE`: the mount table's name of the file's file system.
    FsType(Bytes),
    /// `-mtime` and friends: `+N` is older than `reference` (nanoseconds), `-N` newer,
    /// `N` newer but within `window` of it.
    Age {
        field: TimeField,
        cmp: Cmp,
        reference: i128,
        window: i128,
    },
    Perm {
        kind: PermKind,
        file: u32,
        dir: u32,
    },
    Uid(Cmp, u64),
    Gid(Cmp, u64),
    NoUser,
    NoGroup,
    Links(Cmp, u64),
    Inum(Cmp, u64),
    SameFile {
        dev: u64,
        ino: u64,
    },
    Access(rustix::fs::Access),
    Print {
        out: usize,
        nul: bool,
    },
    Printf {
        out: usize,
        format: Vec<Segment>,
    },
    Ls {
        out: usize,
    },
    Prune,
    Quit,
    Delete,
    Exec(usize),
}

/// Where an action writes: standard output, or a file named by `-fprint` and friends.
pub(super) enum Target {
    Stdout,
    Stderr,
    File { name: Bytes, file: std::fs::File },
}

/// `-exec`, `-execdir`, `-ok`, `-okdir`.
pub(super) struct Exec {
    pub(super) argv: Vec<Bytes>,
    /// `{} +`: paths are gathered and the command runs with as many as fit.
    pub(super) batch: bool,
    pub(super) in_dir: bool,
    pub(super) ask: bool,
}

/// A parsed command line.
pub(super) struct Program {
    pub(super) roots: Vec<Bytes>,
    pub(super) expr: Node,
    pub(super) follow: Follow,
    pub(super) min_depth: usize,
    pub(super) max_depth: Option<usize>,
    pub(super) depth_first: bool,
    pub(super) xdev: bool,
    pub(super) ignore_race: bool,
    pub(super) targets: Vec<Target>,
    pub(super) execs: Vec<Exec>,
    /// When find started (seconds, nanoseconds): `-ls` and the age tests measure from it.
    pub(super) now: (i64, i64),
    /// `-files0-from`: the list's name for messages (`roots` are its entries then; an
    /// empty one is reported where the walk reaches it).
    pub(super) files0: Option<Bytes>,
}

/// Why the command line cannot run: GNU's message (printed after `find: `).
#[derive(Debug)]
pub(super) struct ParseError(pub(super) Vec<String>);

fn error<T>(message: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError(vec![message.into()]))
}

fn lossy(arg: &[u8]) -> String {
    String::from_utf8_lossy(arg).into_owned()
}

/// Whether `arg` ends the starting points (GNU: a `-x` word, `(` or `!`).
fn starts_expression(arg: &[u8]) -> bool {
    (arg.len() > 1 && arg[0] == b'-') || arg == b"(" || arg == b"!"
}

/// Primaries and options that take one argument.
const ONE_ARGUMENT: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-lname",
    "-ilname",
    "-regex",
    "-iregex",
    "-regextype",
    "-used",
    "-fstype",
    "-type",
    "-xtype",
    "-size",
    "-newer",
    "-anewer",
    "-cnewer",
    "-mtime",
    "-atime",
    "-ctime",
    "-mmin",
    "-amin",
    "-cmin",
    "-perm",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-links",
    "-inum",
    "-samefile",
    "-maxdepth",
    "-mindepth",
    "-printf",
    "-fprint",
    "-fprint0",
    "-fls",
    "-files0-from",
];

/// Whether this implementation runs `args` itself (GNU's other primaries, `-D`, `-O`,
/// `--help` and the like go to the system find).
pub(super) fn supported(args: &[Bytes]) -> bool {
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_slice();
        i += 1;
        let Ok(word) = std::str::from_utf8(arg) else {
            continue;
        };
        match word {
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                while i < args.len() {
                    let a = args[i].as_slice();
                    i += 1;
                    if a == b";" || (a == b"+" && args[i - 2] == b"{}") {
                        break;
                    }
                }
            }
            "-fprintf" => i += 2,
            "-printf" => {
                if let Some(format) = args.get(i)
                    && !printf::supported(format)
                {
                    return false;
                }
                i += 1;
            }
            "-D" | "-O" | "-help" | "--help" | "-version" | "--version" | "-context" => {
                return false;
            }
            // The mount table is read where the system has one.
            "-fstype" if !cfg!(any(target_os = "linux", target_os = "android")) => return false,
            _ if word.starts_with("-O") && i == 1 => return false,
            _ if ONE_ARGUMENT.contains(&word) || newer_xy(word).is_some() => i += 1,
            _ => {}
        }
    }
    true
}

/// The two time fields of `-newerXY` (`t` for `Y`: a date string), or `None` when
/// `name` is not such a test.
fn newer_xy(name: &str) -> Option<(TimeField, Option<TimeField>)> {
    let field = |c: u8| match c {
        b'a' => Some(TimeField::Access),
        b'B' => Some(TimeField::Birth),
        b'c' => Some(TimeField::Change),
        b'm' => Some(TimeField::Modify),
        _ => None,
    };
    let rest = name.strip_prefix("-newer")?.as_bytes();
    let [x, y] = rest else { return None };
    let x = field(*x)?;
    if *y == b't' {
        return Some((x, None));
    }
    Some((x, Some(field(*y)?)))
}

struct Parser<'a> {
    args: &'a [Bytes],
    pos: usize,
    /// The last predicate or operator read, for GNU's "possible unquoted pattern" hint.
    last: Option<String>,
    regex_syntax: Syntax,
    daystart: bool,
    program: Program,
    has_action: bool,
    /// GNU warns (about a global option after a test, a `-name` with a slash) when its
    /// standard input is a terminal, or after `-warn`.
    warn: bool,
    /// The first argument of the expression that is not an option.
    first_test: Option<String>,
    /// The last primary read is an action (`-print`, `-exec`, ...).
    last_action: bool,
    /// `-files0-from FILE` (the last one counts).
    files0_from: Option<Bytes>,
    /// `-ok` or `-okdir` is in the expression.
    asks: bool,
}

/// Parses `args` (without the program name).
pub(super) fn parse(args: &[Bytes]) -> Result<Program, ParseError> {
    let mut follow = Follow::Never;
    let mut pos = 0;
    while pos < args.len() {
        match args[pos].as_slice() {
            b"-H" => follow = Follow::Roots,
            b"-L" => follow = Follow::Always,
            b"-P" => follow = Follow::Never,
            b"--" => {
                pos += 1;
                break;
            }
            _ => break,
        }
        pos += 1;
    }
    let mut roots = Vec::new();
    while pos < args.len() && !starts_expression(&args[pos]) {
        roots.push(args[pos].clone());
        pos += 1;
    }
    let explicit_roots = !roots.is_empty();
    if roots.is_empty() {
        roots.push(b".".to_vec());
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| {
            (
                i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
                i64::from(d.subsec_nanos()),
            )
        })
        .unwrap_or((0, 0));
    let mut parser = Parser {
        args,
        pos,
        last: None,
        // Without `-regextype` GNU reads Emacs's syntax, where `.` does not match a newline
        // (unlike `-regextype findutils-default`).
        regex_syntax: Syntax::EMACS,
        daystart: false,
        program: Program {
            roots,
            expr: Node::True,
            follow,
            min_depth: 0,
            max_depth: None,
            depth_first: false,
            xdev: false,
            ignore_race: false,
            targets: vec![Target::Stdout],
            execs: Vec::new(),
            now,
            files0: None,
        },
        has_action: false,
        warn: std::io::IsTerminal::is_terminal(&std::io::stdin()),
        first_test: None,
        last_action: false,
        files0_from: None,
        asks: false,
    };
    let expr = if parser.pos < args.len() {
        let expr = parser.comma()?;
        if parser.pos < args.len() {
            // Only a `)` can stop the top level early.
            return error("you have too many ')'");
        }
        expr
    } else {
        Node::True
    };
    if let Some(list) = parser.files0_from.take() {
        files0_roots(&mut parser, &list, explicit_roots)?;
    }
    let mut program = parser.program;
    program.expr = if parser.has_action {
        expr
    } else {
        Node::And(Box::new(expr), Box::new(Node::Print { out: 0, nul: false }))
    };
    Ok(program)
}

impl Parser<'_> {
    fn peek(&self) -> Option<&[u8]> {
        self.args.get(self.pos).map(Vec::as_slice)
    }

    fn comma(&mut self) -> Result<Node, ParseError> {
        let mut left = self.or()?;
        while self.peek() == Some(b",") {
            self.pos += 1;
            self.last = Some(",".to_owned());
            if self.at_end_of_group() {
                return Err(self.nothing_after(","));
            }
            let right = self.or()?;
            left = Node::Comma(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn or(&mut self) -> Result<Node, ParseError> {
        let mut left = self.and()?;
        while let Some(op @ (b"-o" | b"-or")) = self.peek() {
            let op = lossy(op);
            self.pos += 1;
            if self.at_end_of_group() {
                return Err(self.nothing_after(&op));
            }
            self.last = Some(op);
            let right = self.and()?;
            left = Node::Or(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    /// GNU's error for an operator with nothing after it: before a `)`, or at the end
    /// (where an action before it makes the whole expression invalid).
    fn nothing_after(&self, op: &str) -> ParseError {
        let message = if self.peek() == Some(b")") {
            format!("expected an expression between '{op}' and ')'")
        } else if self.last_action {
            "invalid expression".to_owned()
        } else {
            format!("expected an expression after '{op}'")
        };
        ParseError(vec![message])
    }

    fn at_end_of_group(&self) -> bool {
        matches!(self.peek(), None | Some(b")"))
    }

    fn and(&mut self) -> Result<Node, ParseError> {
        let mut left = self.not()?;
        loop {
            match self.peek() {
                None | Some(b")" | b"," | b"-o" | b"-or") => return Ok(left),
                Some(op @ (b"-a" | b"-and")) => {
                    let op = lossy(op);
                    self.pos += 1;
                    if self.at_end_of_group() {
                        return Err(self.nothing_after(&op));
                    }
                    if matches!(self.peek(), Some(b"," | b"-o" | b"-or" | b"-a" | b"-and")) {
                        let next = lossy(self.peek().unwrap_or_default());
                        return error(format!(
                            "invalid expression; you have used a binary operator '{next}' with nothing before it."
                        ));
                    }
                    self.last = Some(op);
                }
                Some(_) => {}
            }
            let right = self.not()?;
            left = Node::And(Box::new(left), Box::new(right));
        }
    }

    fn not(&mut self) -> Result<Node, ParseError> {
        if let Some(op @ (b"!" | b"-not")) = self.peek() {
            let op = lossy(op);
            self.note_argument(&op);
            self.pos += 1;
            self.last = Some(op.clone());
            if self.at_end_of_group() {
                return Err(self.nothing_after(&op));
            }
            return Ok(Node::Not(Box::new(self.not()?)));
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Node, ParseError> {
        let Some(arg) = self.peek() else {
            return error("invalid expression");
        };
        match arg {
            b"(" => {
                self.pos += 1;
                self.note_argument("(");
                self.last = Some("(".to_owned());
                if self.peek() == Some(b")") {
                    return error("invalid expression; empty parentheses are not allowed.");
                }
                if self.peek().is_none() {
                    return error(
                        "invalid expression; expected to find a ')' but didn't see one. Perhaps you need an extra predicate after '('",
                    );
                }
                let inner = self.comma()?;
                if self.peek() != Some(b")") {
                    return error(
                        "invalid expression; I was expecting to find a ')' somewhere but did not see one.",
                    );
                }
                self.pos += 1;
                Ok(inner)
            }
            b")" => error("you have too many ')'"),
            b"-a" | b"-and" | b"-o" | b"-or" | b"," => error(format!(
                "invalid expression; you have used a binary operator '{}' with nothing before it.",
                lossy(arg)
            )),
            _ if arg.len() > 1 && arg[0] == b'-' => {
                let name = lossy(arg);
                self.pos += 1;
                self.note_argument(&name);
                let node = self.predicate(&name)?;
                self.last_action = matches!(
                    node,
                    Node::Print { .. }
                        | Node::Printf { .. }
                        | Node::Ls { .. }
                        | Node::Exec(_)
                        | Node::Delete
                );
                self.last = Some(name);
                Ok(node)
            }
            _ => {
                let mut lines = vec![format!("paths must precede expression: `{}'", lossy(arg))];
                if let Some(last) = &self.last
                    && std::fs::symlink_metadata(super::os(arg)).is_ok()
                {
                    lines.push(format!(
                        "possible unquoted pattern after predicate `{last}'?"
                    ));
                }
                Err(ParseError(lines))
            }
        }
    }

    /// GNU's warning about a global option placed after a test.
    fn note_argument(&mut self, name: &str) {
        const GLOBAL: &[&str] = &[
            "-maxdepth",
            "-mindepth",
            "-depth",
            "-d",
            "-xdev",
            "-mount",
            "-noleaf",
            "-ignore_readdir_race",
            "-noignore_readdir_race",
            "-files0-from",
        ];
        const POSITIONAL: &[&str] = &["-daystart", "-follow", "-regextype", "-warn", "-nowarn"];
        if GLOBAL.contains(&name) {
            if self.warn
                && let Some(first) = &self.first_test
            {
                warning(&format!(
                    "you have specified the global option {name} after the argument {first}, but global options are not positional, i.e., {name} affects tests specified before it as well as those specified after it.  Please specify global options before other arguments."
                ));
            }
        } else if !POSITIONAL.contains(&name) && self.first_test.is_none() {
            self.first_test = Some(name.to_owned());
        }
    }

    /// The argument of `name`.
    fn value(&mut self, name: &str) -> Result<Bytes, ParseError> {
        let Some(value) = self.args.get(self.pos) else {
            return error(format!("missing argument to `{name}'"));
        };
        self.pos += 1;
        Ok(value.clone())
    }

    fn pattern(&mut self, name: &str) -> Result<CString, ParseError> {
        let value = self.value(name)?;
        // An argument cannot hold a NUL byte.
        Ok(CString::new(value).unwrap_or_default())
    }

    fn target(&mut self, name: &str) -> Result<usize, ParseError> {
        let file = self.value(name)?;
        self.open_target(file)
    }

    fn open_target(&mut self, name: Bytes) -> Result<usize, ParseError> {
        match name.as_slice() {
            b"/dev/stdout" => return Ok(0),
            b"/dev/stderr" => {
                if let Some(i) = self
                    .program
                    .targets
                    .iter()
                    .position(|t| matches!(t, Target::Stderr))
                {
                    return Ok(i);
                }
                self.program.targets.push(Target::Stderr);
                return Ok(self.program.targets.len() - 1);
            }
            _ => {}
        }
        if let Some(i) = self
            .program
            .targets
            .iter()
            .position(|t| matches!(t, Target::File { name: n, .. } if *n == name))
        {
            return Ok(i);
        }
        let path = super::os(&name);
        match std::fs::File::create(path) {
            Ok(file) => {
                // Another name of a file already open (a hard or symbolic link) shares
                // its stream, as in GNU.
                use std::os::unix::fs::MetadataExt;
                if let Ok(meta) = file.metadata() {
                    let same = self.program.targets.iter().position(|t| match t {
                        Target::File { file: other, .. } => other
                            .metadata()
                            .is_ok_and(|m| m.dev() == meta.dev() && m.ino() == meta.ino()),
                        _ => false,
                    });
                    if let Some(i) = same {
                        return Ok(i);
                    }
                }
                self.program.targets.push(Target::File { name, file });
                Ok(self.program.targets.len() - 1)
            }
            Err(e) => error(format!("{}: {}", quote(&name), crate::grep::os_message(&e))),
        }
    }

    fn number<T: std::str::FromStr>(&mut self, name: &str) -> Result<(Cmp, T), ParseError> {
        let value = self.value(name)?;
        let invalid = || error(format!("invalid argument `{}' to `{name}'", lossy(&value)));
        let (cmp, digits) = match value.first() {
            Some(b'+') => (Cmp::Greater, &value[1..]),
            Some(b'-') => (Cmp::Less, &value[1..]),
            _ => (Cmp::Equal, &value[..]),
        };
        // GNU's number reader takes a sign of its own: `-uid -+1` is `-uid -1`.
        let digits = digits.strip_prefix(b"+").unwrap_or(digits);
        if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
            return invalid();
        }
        match std::str::from_utf8(digits)
            .ok()
            .and_then(|d| d.parse().ok())
        {
            Some(n) => Ok((cmp, n)),
            None => invalid(),
        }
    }

    fn depth(&mut self, name: &str) -> Result<usize, ParseError> {
        let value = self.value(name)?;
        let parsed = std::str::from_utf8(&value)
            .ok()
            .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|v| v.parse().ok());
        match parsed {
            Some(n) => Ok(n),
            None => error(format!(
                "Expected a positive decimal integer argument to {name}, but got {}",
                quote(&value)
            )),
        }
    }

    /// Stats a reference file (`-newer`, `-samefile`) as the starting points are: following
    /// links under `-H` and `-L`.
    fn reference(&mut self, name: &str) -> Result<Meta, ParseError> {
        let file = self.value(name)?;
        let follow = self.program.follow != Follow::Never;
        super::walk::stat_path(&file, follow).map_err(|e| {
            ParseError(vec![format!(
                "{}: {}",
                quote(&file),
                crate::grep::os_message(&e)
            )])
        })
    }

    /// `-mtime N` and friends, as GNU 4.9 computes them: a reference time `origin - N
    /// units`, where `origin` is a day before find started (midnight today with
    /// `-daystart`), a day later for minutes, and the end of that day for `-N` days.
    fn age(&mut self, name: &str, field: TimeField, unit: i64) -> Result<Node, ParseError> {
        let value = self.value(name)?;
        let invalid = || error(format!("invalid argument `{}' to `{name}'", lossy(&value)));
        let (cmp, digits) = match value.first() {
            Some(b'+') => (Cmp::Greater, &value[1..]),
            Some(b'-') => (Cmp::Less, &value[1..]),
            _ => (Cmp::Equal, &value[..]),
        };
        let Some(n) = std::str::from_utf8(digits)
            .ok()
            .filter(|d| {
                d.bytes()
                    .next()
                    .is_some_and(|b| b.is_ascii_digit() || b == b'.')
                    && d.bytes()
                        .all(|b| b.is_ascii_digit() || b".eE+-".contains(&b))
            })
            .and_then(|d| d.parse::<f64>().ok())
            .filter(|n| n.is_finite())
        else {
            return invalid();
        };
        const DAY: i128 = 86_400 * 1_000_000_000;
        let now = i128::from(self.program.now.0) * 1_000_000_000 + i128::from(self.program.now.1);
        let day_start = if self.daystart {
            let midnight =
                super::sys::local_midnight(self.program.now.0).unwrap_or(self.program.now.0);
            i128::from(midnight) * 1_000_000_000
        } else {
            now - DAY
        };
        let origin = match (unit, cmp) {
            (60, _) => day_start + DAY,
            (_, Cmp::Less) => day_start + DAY - 1_000_000_000,
            _ => day_start,
        };
        #[allow(clippy::cast_possible_truncation, reason = "as GNU's modf and casts")]
        let offset = {
            let total = n * unit as f64;
            let seconds = total.trunc();
            let nanos = ((total - seconds) * 1e9) as i128;
            seconds as i128 * 1_000_000_000 + nanos
        };
        Ok(Node::Age {
            field,
            cmp,
            reference: origin - offset,
            window: i128::from(unit) * 1_000_000_000,
        })
    }

    fn predicate(&mut self, name: &str) -> Result<Node, ParseError> {
        let node = match name {
            "-name" | "-iname" => {
                let pattern = self.pattern(name)?;
                let bytes = pattern.as_bytes();
                if self.warn && bytes.contains(&b'/') && bytes != b"/" {
                    let (open, close) = super::quotes();
                    warning(&format!(
                        "{open}{name}{close} matches against basenames only, but the given pattern contains a directory separator ({open}/{close}), thus the expression will evaluate to false all the time.  Did you mean {open}-wholename{close}?"
                    ));
                }
                Node::Name {
                    pattern,
                    casefold: name == "-iname",
                }
            }
            "-path" | "-ipath" | "-wholename" | "-iwholename" => Node::Path {
                pattern: self.pattern(name)?,
                casefold: name.starts_with("-i"),
            },
            "-lname" | "-ilname" => Node::Lname {
                pattern: self.pattern(name)?,
                casefold: name == "-ilname",
            },
            "-regex" | "-iregex" => {
                let pattern = self.value(name)?;
                self.regex(&pattern, name == "-iregex")?
            }
            "-regextype" => {
                let kind = self.value(name)?;
                match Syntax::find_dialect(&kind) {
                    Some(syntax) => self.regex_syntax = syntax,
                    None => {
                        let valid: Vec<String> = [
                            "findutils-default",
                            "ed",
                            "emacs",
                            "gnu-awk",
                            "grep",
                            "posix-awk",
                            "awk",
                            "posix-basic",
                            "posix-egrep",
                            "egrep",
                            "posix-extended",
                            "posix-minimal-basic",
                            "sed",
                        ]
                        .iter()
                        .map(|t| quote(t.as_bytes()))
                        .collect();
                        return error(format!(
                            "Unknown regular expression type {}; valid types are {}.",
                            quote(&kind),
                            valid.join(", ")
                        ));
                    }
                }
                Node::True
            }
            "-type" | "-xtype" => {
                let value = self.value(name)?;
                Node::Type {
                    types: types(name, &value)?,
                    x: name == "-xtype",
                }
            }
            "-size" => {
                let value = self.value(name)?;
                self.size(&value)?
            }
            "-empty" => Node::Empty,
            "-newer" | "-anewer" | "-cnewer" => {
                let meta = self.reference(name)?;
                let field = match name {
                    "-anewer" => TimeField::Access,
                    "-cnewer" => TimeField::Change,
                    _ => TimeField::Modify,
                };
                Node::Newer {
                    field,
                    reference: meta.mtime,
                }
            }
            _ if name.len() == 8 && name.starts_with("-newer") => {
                let Some((field, reference_field)) = newer_xy(name) else {
                    return error(format!("invalid predicate `{name}'"));
                };
                if self.peek().is_none() {
                    let (open, close) = super::quotes();
                    return error(format!("The {open}{name}{close} test needs an argument"));
                }
                let reference = match reference_field {
                    None => {
                        let value = self.value(name)?;
                        super::date::parse(&value, self.program.now).map_or_else(
                            || {
                                error(format!(
                                    "I cannot figure out how to interpret {} as a date or time",
                                    quote(&value)
                                ))
                            },
                            Ok,
                        )?
                    }
                    Some(TimeField::Birth) => {
                        let file = self.value(name)?;
                        let follow = self.program.follow != Follow::Never;
                        match super::walk::birth_time_path(&file, follow) {
                            Ok(Some(time)) => time,
                            Ok(None) => {
                                return error(format!(
                                    "Cannot obtain birth time of file {}",
                                    quote(&file)
                                ));
                            }
                            Err(e) => {
                                return error(format!(
                                    "{}: {}",
                                    quote(&file),
                                    crate::grep::os_message(&e)
                                ));
                            }
                        }
                    }
                    Some(other) => {
                        let meta = self.reference(name)?;
                        super::walk::time_of(&meta, other)
                    }
                };
                Node::Newer { field, reference }
            }
            "-fstype" => Node::FsType(self.value(name)?),
            "-used" => {
                let value = self.value(name)?;
                self.used(&value)?
            }
            "-mtime" => self.age(name, TimeField::Modify, 86400)?,
            "-atime" => self.age(name, TimeField::Access, 86400)?,
            "-ctime" => self.age(name, TimeField::Change, 86400)?,
            "-mmin" => self.age(name, TimeField::Modify, 60)?,
            "-amin" => self.age(name, TimeField::Access, 60)?,
            "-cmin" => self.age(name, TimeField::Change, 60)?,
            "-perm" => {
                let value = self.value(name)?;
                perm(&value)?
            }
            "-user" => {
                let value = self.value(name)?;
                match super::sys::user_id(&value) {
                    Some(uid) => Node::Uid(Cmp::Equal, u64::from(uid)),
                    None => match numeric(&value) {
                        Some(uid) => Node::Uid(Cmp::Equal, uid),
                        None if value.is_empty() => {
                            return error("The argument to -user should not be empty");
                        }
                        None => {
                            return error(format!(
                                "{} is not the name of a known user",
                                quote(&value)
                            ));
                        }
                    },
                }
            }
            "-group" => {
                let value = self.value(name)?;
                match super::sys::group_id(&value) {
                    Some(gid) => Node::Gid(Cmp::Equal, u64::from(gid)),
                    None => match numeric(&value) {
                        Some(gid) => Node::Gid(Cmp::Equal, gid),
                        None if value.is_empty() => {
                            return error(
                                "argument to -group is empty, but should be a group name",
                            );
                        }
                        None => {
                            let digits = value.iter().take_while(|b| b.is_ascii_digit()).count();
                            if digits > 0 {
                                return error(format!(
                                    "{} is not the name of an existing group and it does not look like a numeric group ID because it has the unexpected suffix {}",
                                    quote(&value),
                                    quote(&value[digits..])
                                ));
                            }
                            return error(format!(
                                "{} is not the name of an existing group",
                                quote(&value)
                            ));
                        }
                    },
                }
            }
            "-uid" => {
                let (cmp, n) = self.number(name)?;
                Node::Uid(cmp, n)
            }
            "-gid" => {
                let (cmp, n) = self.number(name)?;
                Node::Gid(cmp, n)
            }
            "-nouser" => Node::NoUser,
            "-nogroup" => Node::NoGroup,
            "-links" => {
                let (cmp, n) = self.number(name)?;
                Node::Links(cmp, n)
            }
            "-inum" => {
                let (cmp, n) = self.number(name)?;
                Node::Inum(cmp, n)
            }
            "-samefile" => {
                let meta = self.reference(name)?;
                Node::SameFile {
                    dev: meta.dev,
                    ino: meta.ino,
                }
            }
            "-readable" => Node::Access(rustix::fs::Access::READ_OK),
            "-writable" => Node::Access(rustix::fs::Access::WRITE_OK),
            "-executable" => Node::Access(rustix::fs::Access::EXEC_OK),
            "-true" => Node::True,
            "-false" => Node::False,
            "-print" | "-print0" => {
                self.has_action = true;
                Node::Print {
                    out: 0,
                    nul: name == "-print0",
                }
            }
            "-fprint" | "-fprint0" => {
                self.has_action = true;
                Node::Print {
                    out: self.target(name)?,
                    nul: name == "-fprint0",
                }
            }
            "-printf" => {
                self.has_action = true;
                let format = self.value(name)?;
                Node::Printf {
                    out: 0,
                    format: printf::parse(&format)?,
                }
            }
            "-fprintf" => {
                self.has_action = true;
                // GNU names the file when the format is missing.
                if self.args.len() == self.pos + 1 {
                    return error(format!(
                        "invalid argument `{}' to `{name}'",
                        lossy(&self.args[self.pos])
                    ));
                }
                let out = self.target(name)?;
                let format = self.value(name)?;
                Node::Printf {
                    out,
                    format: printf::parse(&format)?,
                }
            }
            "-ls" => {
                self.has_action = true;
                Node::Ls { out: 0 }
            }
            "-fls" => {
                self.has_action = true;
                Node::Ls {
                    out: self.target(name)?,
                }
            }
            "-prune" => Node::Prune,
            "-quit" => Node::Quit,
            "-delete" => {
                self.has_action = true;
                self.program.depth_first = true;
                Node::Delete
            }
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                self.has_action = true;
                self.exec(name)?
            }
            "-maxdepth" => {
                self.program.max_depth = Some(self.depth(name)?);
                Node::True
            }
            "-mindepth" => {
                self.program.min_depth = self.depth(name)?;
                Node::True
            }
            "-depth" | "-d" => {
                self.program.depth_first = true;
                Node::True
            }
            "-follow" => {
                self.program.follow = Follow::Always;
                Node::True
            }
            "-mount" | "-xdev" => {
                self.program.xdev = true;
                Node::True
            }
            "-daystart" => {
                self.daystart = true;
                Node::True
            }
            "-files0-from" => {
                self.files0_from = Some(self.value(name)?);
                Node::True
            }
            "-ignore_readdir_race" => {
                self.program.ignore_race = true;
                Node::True
            }
            "-noignore_readdir_race" => {
                self.program.ignore_race = false;
                Node::True
            }
            "-warn" => {
                self.warn = true;
                Node::True
            }
            "-nowarn" => {
                self.warn = false;
                Node::True
            }
            "-noleaf" => Node::True,
            _ => return error(format!("unknown predicate `{name}'")),
        };
        Ok(node)
    }

    /// `-regex`: the pattern read as the current `-regextype` reads it, anchored at
    /// both ends of the path. As in GNU, `^` and `$` also match beside a newline in it.
    fn regex(&mut self, pattern: &[u8], casefold: bool) -> Result<Node, ParseError> {
        let utf8_locale = crate::grep::utf8_locale();
        let text = String::from_utf8_lossy(pattern);
        let syntax = if casefold {
            self.regex_syntax.with(Syntax::ICASE)
        } else {
            self.regex_syntax
        };
        let flavor = |target| Flavor {
            extended: false,
            utf8: utf8_locale,
            target,
            group_offset: 0,
            loose: false,
            null_data: false,
            syntax: Some(syntax),
            turkish_case: false,
        };
        let compile_error = |e: PatternError| {
            ParseError(vec![format!(
                "failed to compile regular expression '{text}': {}",
                e.0
            )])
        };
        let mut translated =
            translate(&text, flavor(pattern::Target::Fast)).map_err(compile_error)?;
        if translated.backreferences {
            translated =
                translate(&text, flavor(pattern::Target::Backtracking)).map_err(compile_error)?;
        }
        let mut flags = String::from("(?m)");
        if casefold {
            flags.push_str("(?i)");
        }
        let engine_error = |e: String| {
            ParseError(vec![format!(
                "failed to compile regular expression '{text}': {e}"
            )])
        };
        let engine = if translated.backreferences {
            RegexEngine::Backtracking(
                fancy_regex::Regex::new(&format!(r"{flags}\A(?:{})\z", translated.regex))
                    .map_err(|e| engine_error(e.to_string()))?,
            )
        } else {
            if !utf8_locale {
                flags.push_str("(?-u)");
            }
            RegexEngine::Fast(
                regex::bytes::RegexBuilder::new(&format!(r"{flags}\A(?:{})\z", translated.regex))
                    .size_limit(64 << 20)
                    .dfa_size_limit(64 << 20)
                    .build()
                    .map_err(|e| engine_error(e.to_string()))?,
            )
        };
        Ok(Node::Regex(Box::new(Regex {
            engine,
            utf8_locale,
        })))
    }

    /// `-used N`: days as a C `strtod` reads them (`1.5`, `+-1`), compared with the time
    /// from the last status change to the last access.
    fn used(&mut self, value: &[u8]) -> Result<Node, ParseError> {
        let invalid = || error(format!("Invalid argument {} to -used", lossy(value)));
        let (cmp, digits) = match value.first() {
            Some(b'+') => (Cmp::Greater, &value[1..]),
            Some(b'-') => (Cmp::Less, &value[1..]),
            _ => (Cmp::Equal, value),
        };
        let Some(n) = std::str::from_utf8(digits)
            .ok()
            .map(str::trim_start)
            .filter(|d| {
                let d = d.strip_prefix(['+', '-']).unwrap_or(d);
                d.bytes()
                    .next()
                    .is_some_and(|b| b.is_ascii_digit() || b == b'.')
                    && d.bytes()
                        .all(|b| b.is_ascii_digit() || b".eE+-".contains(&b))
            })
            .and_then(|d| d.parse::<f64>().ok())
            .filter(|n| n.is_finite())
        else {
            return invalid();
        };
        #[allow(clippy::cast_possible_truncation, reason = "as GNU's modf and casts")]
        let days = {
            let total = n * 86_400.0;
            let seconds = total.trunc();
            seconds as i128 * 1_000_000_000 + ((total - seconds) * 1e9) as i128
        };
        Ok(Node::Used { cmp, days })
    }

    fn size(&mut self, value: &[u8]) -> Result<Node, ParseError> {
        if value.is_empty() {
            return error("invalid null argument to -size");
        }
        let (cmp, rest) = match value.first() {
            Some(b'+') => (Cmp::Greater, &value[1..]),
            Some(b'-') => (Cmp::Less, &value[1..]),
            _ => (Cmp::Equal, value),
        };
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        let suffix = &rest[digits..];
        let unit = match suffix {
            b"" | b"b" => 512,
            b"c" => 1,
            b"w" => 2,
            b"k" => 1024,
            b"M" => 1024 * 1024,
            b"G" => 1024 * 1024 * 1024,
            _ if digits == 0 => return error(format!("invalid -size type `{}'", lossy(value))),
            _ => return error(format!("invalid -size type `{}'", lossy(&suffix[..1]))),
        };
        if digits == 0 {
            return error(format!("invalid -size type `{}'", lossy(value)));
        }
        let n = std::str::from_utf8(&rest[..digits])
            .ok()
            .and_then(|d| d.parse().ok())
            .map_or_else(
                || error(format!("invalid argument `{}' to `-size'", lossy(value))),
                Ok,
            )?;
        Ok(Node::Size { cmp, n, unit })
    }

    fn exec(&mut self, name: &str) -> Result<Node, ParseError> {
        let mut argv = Vec::new();
        let mut batch = false;
        loop {
            let Some(arg) = self.args.get(self.pos) else {
                return error(format!("missing argument to `{name}'"));
            };
            self.pos += 1;
            if arg == b";" {
                break;
            }
            if arg == b"+" && argv.last().is_some_and(|a: &Bytes| a == b"{}") {
                batch = true;
                break;
            }
            if arg == b"+"
                && let Some(last) = argv.last()
                && memchr::memmem::find(last, b"{}").is_some()
            {
                let (open, close) = super::quotes();
                return error(format!(
                    "In {open}{name} ... {{}} +{close} the {open}{{}}{close} must appear by itself, but you specified {}",
                    quote(last)
                ));
            }
            argv.push(arg.clone());
        }
        if argv.is_empty() {
            return error(format!("invalid argument `;' to `{name}'"));
        }
        let ask = name.starts_with("-ok");
        self.asks |= ask;
        if batch && ask {
            // GNU: `-ok ... {} +` is not allowed.
            return error(format!("missing argument to `{name}'"));
        }
        if batch
            && argv[..argv.len() - 1]
                .iter()
                .any(|a| memchr::memmem::find(a, b"{}").is_some())
        {
            return error(format!(
                "Only one instance of {{}} is supported with {name} ... +"
            ));
        }
        if batch {
            argv.pop();
        }
        self.program.execs.push(Exec {
            argv,
            batch,
            in_dir: name.ends_with("dir"),
            ask,
        });
        Ok(Node::Exec(self.program.execs.len() - 1))
    }
}

/// The starting points of `-files0-from LIST`: its NUL-separated names, read whole.
fn files0_roots(
    parser: &mut Parser<'_>,
    list: &[u8],
    explicit_roots: bool,
) -> Result<(), ParseError> {
    if explicit_roots {
        return Err(ParseError(vec![
            format!("extra operand {}", quote(&parser.program.roots[0])),
            "file operands cannot be combined with -files0-from".to_owned(),
        ]));
    }
    let stdin = list == b"-";
    if stdin && parser.asks {
        // GNU's message ends in a newline of its own.
        return error(
            "option -files0-from reading from standard input cannot be combined with -ok, -okdir\n",
        );
    }
    let (name, data) = if stdin {
        let mut data = Vec::new();
        let result = std::io::Read::read_to_end(&mut std::io::stdin(), &mut data);
        (b"(standard input)".to_vec(), result.map(|_| data))
    } else {
        match std::fs::File::open(super::os(list)) {
            Ok(mut file) => {
                let mut data = Vec::new();
                let result = std::io::Read::read_to_end(&mut file, &mut data);
                (list.to_vec(), result.map(|_| data))
            }
            Err(e) => {
                return error(format!(
                    "cannot open {} for reading: {}",
                    quote(list),
                    crate::grep::os_message(&e)
                ));
            }
        }
    };
    let data = data.map_err(|e| {
        ParseError(vec![format!(
            "{}: read error: {}",
            quote(&name),
            crate::grep::os_message(&e)
        )])
    })?;
    let mut roots: Vec<Bytes> = data.split(|&b| b == 0).map(<[u8]>::to_vec).collect();
    // The last name needs no terminator; a final NUL ends the list.
    if data.is_empty() || data.last() == Some(&0) {
        roots.pop();
    }
    parser.program.roots = roots;
    parser.program.files0 = Some(name);
    Ok(())
}

#[expect(clippy::print_stderr, reason = "GNU's warnings about the command line")]
fn warning(message: &str) {
    eprintln!("find: warning: {message}");
}

fn numeric(value: &[u8]) -> Option<u64> {
    if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(value).ok()?.parse().ok()
}

/// `-type b,c,d`: GNU's letters, separated by commas, each once.
fn types(name: &str, value: &[u8]) -> Result<Vec<u8>, ParseError> {
    if value.is_empty() {
        return error(format!(
            "Arguments to {name} should contain at least one letter"
        ));
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < value.len() {
        let c = value[i];
        if c == b'D' {
            return error(format!(
                "{name} D is not supported because Solaris doors are not supported on the platform find was compiled on."
            ));
        }
        if !b"bcdpfls".contains(&c) {
            return error(format!("Unknown argument to {name}: {}", lossy(&[c])));
        }
        if out.contains(&c) {
            return error(format!(
                "Duplicate file type '{}' in the argument list to {name}.",
                char::from(c)
            ));
        }
        out.push(c);
        i += 1;
        if i < value.len() {
            if value[i] != b',' {
                return error(format!(
                    "Must separate multiple arguments to {name} using: ','"
                ));
            }
            i += 1;
            if i == value.len() {
                return error(format!(
                    "Last file type in list argument to {name} is missing, i.e., list is ending on: ','"
                ));
            }
        }
    }
    Ok(out)
}

/// `-perm MODE`, `-perm -MODE`, `-perm /MODE`: an octal or a symbolic mode, read as GNU
/// reads it (applied to 0, with no umask; `X` applies to directories only).
fn perm(value: &[u8]) -> Result<Node, ParseError> {
    let (kind, mode) = match value.first() {
        Some(b'-') => (PermKind::All, &value[1..]),
        Some(b'/') => (PermKind::Any, &value[1..]),
        _ => (PermKind::Exact, value),
    };
    let invalid = || error(format!("invalid mode {}", quote(value)));
    if !mode.is_empty() && mode.iter().all(|b| (b'0'..=b'7').contains(b)) {
        let Ok(n) = u32::from_str_radix(std::str::from_utf8(mode).unwrap_or("0"), 8) else {
            return invalid();
        };
        if n > 0o7777 {
            return invalid();
        }
        if kind == PermKind::Any && n == 0 {
            warning(&format!(
                "you have specified a mode pattern {} (which is equivalent to /000). The meaning of -perm /000 has now been changed to be consistent with -perm -000; that is, while it used to match no files, it now matches all files.",
                lossy(value)
            ));
        }
        return Ok(Node::Perm {
            kind,
            file: n,
            dir: n,
        });
    }
    match (symbolic_mode(mode, false), symbolic_mode(mode, true)) {
        (Some(file), Some(dir)) => Ok(Node::Perm { kind, file, dir }),
        _ => invalid(),
    }
}

/// A symbolic mode (`u+rw,g=u,o-x`) applied to mode 0 (gnulib's `mode_adjust`).
fn symbolic_mode(mode: &[u8], is_dir: bool) -> Option<u32> {
    if mode.is_empty() {
        return None;
    }
    let mut value = 0u32;
    for clause in mode.split(|&b| b == b',') {
        let mut i = 0;
        let mut who = 0u32;
        while i < clause.len() && b"ugoa".contains(&clause[i]) {
            who |= match clause[i] {
                b'u' => 0o4700,
                b'g' => 0o2070,
                b'o' => 0o1007,
                _ => 0o7777,
            };
            i += 1;
        }
        if i == clause.len() {
            return None;
        }
        let all = who == 0;
        let affected = if all { 0o7777 } else { who };
        while i < clause.len() {
            let op = clause[i];
            if !b"+-=".contains(&op) {
                return None;
            }
            i += 1;
            let mut bits = 0u32;
            if i < clause.len() && b"ugo".contains(&clause[i]) {
                // Copy another class's bits (`g=u`) to every class.
                let perms = match clause[i] {
                    b'u' => (value >> 6) & 7,
                    b'g' => (value >> 3) & 7,
                    _ => value & 7,
                };
                bits = perms * 0o111;
                i += 1;
            } else {
                while i < clause.len() && b"rwxXst".contains(&clause[i]) {
                    bits |= match clause[i] {
                        b'r' => 0o444,
                        b'w' => 0o222,
                        b'x' => 0o111,
                        b'X' if is_dir || value & 0o111 != 0 => 0o111,
                        b'X' => 0,
                        b's' => 0o6000,
                        _ => 0o1000,
                    };
                    i += 1;
                }
            }
            let bits = bits & affected;
            match op {
                b'+' => value |= bits,
                b'-' => value &= !bits,
                _ => value = (value & !affected) | bits,
            }
            if i < clause.len() && !b"+-=".contains(&clause[i]) {
                return None;
            }
        }
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbolic_modes_are_applied_to_zero() {
        assert_eq!(symbolic_mode(b"u+rw", false), Some(0o600));
        assert_eq!(symbolic_mode(b"u=rwx,g=rx,o=rx", false), Some(0o755));
        assert_eq!(symbolic_mode(b"a+r", false), Some(0o444));
        assert_eq!(symbolic_mode(b"+w", false), Some(0o222));
        assert_eq!(symbolic_mode(b"u=rw,g=u", false), Some(0o660));
        assert_eq!(symbolic_mode(b"u+wX", false), Some(0o200));
        assert_eq!(symbolic_mode(b"u+wX", true), Some(0o300));
        assert_eq!(symbolic_mode(b"u+s", false), Some(0o4000));
        assert_eq!(symbolic_mode(b"q", false), None);
        assert_eq!(symbolic_mode(b"u", false), None);
    }

    #[test]
    fn type_lists_are_gnus() {
        assert_eq!(types("-type", b"f,d").ok(), Some(b"fd".to_vec()));
        assert!(types("-type", b"ff").is_err());
        assert!(types("-type", b"f,f").is_err());
        assert!(types("-type", b"x").is_err());
    }
}
