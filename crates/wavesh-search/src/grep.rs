//! `grep` with GNU's flags and output, gitignore-aware when it walks directories
//! (SEARCH-1, SEARCH-5, SEARCH-6, SEARCH-8, SEARCH-9).

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use crate::pattern::{Dialect, Flavor, PatternError, Target, has_backreference, translate};

/// Why the arguments are not handled here: the system grep runs instead (SEARCH-5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported(pub String);

/// Parsed options.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub(crate) patterns: Vec<String>,
    pub(crate) dialect: Dialect,
    pub(crate) ignore_case: bool,
    pub(crate) invert: bool,
    pub(crate) word: bool,
    pub(crate) line: bool,
    pub(crate) count: bool,
    pub(crate) files_with_matches: bool,
    pub(crate) files_without_match: bool,
    pub(crate) only_matching: bool,
    pub(crate) quiet: bool,
    pub(crate) no_messages: bool,
    pub(crate) byte_offset: bool,
    pub(crate) with_filename: Option<bool>,
    pub(crate) line_number: bool,
    pub(crate) max_count: Option<u64>,
    pub(crate) after: usize,
    pub(crate) before: usize,
    /// `-A`, `-B`, `-C` or `-NUM` was given (even 0): groups are separated by `--`.
    pub(crate) context_given: bool,
    /// A pattern file could not be read: GNU's message, reported with exit 2.
    pub(crate) fatal: Option<String>,
    /// Where each pattern came from: `-f FILE` and its line, or `None` (`-e`, operand).
    pub(crate) pattern_origins: Vec<Option<(String, usize)>>,
    pub(crate) recursive: bool,
    pub(crate) text: bool,
    pub(crate) skip_binary: bool,
    pub(crate) label: Option<String>,
    /// `--include` (true) and `--exclude` (false) globs, in order.
    pub(crate) file_globs: Vec<(bool, String)>,
    pub(crate) exclude_dir: Vec<String>,
    /// `-R`: symbolic links met in the walk are followed.
    pub(crate) dereference: bool,
    pub(crate) initial_tab: bool,
    pub(crate) files: Vec<String>,
    /// rg: skip hidden files and directories.
    pub(crate) skip_hidden: bool,
    /// rg: read no ignore file.
    pub(crate) no_ignore: bool,
    /// rg: `-g` globs.
    pub(crate) overrides: Option<ignore::overrides::Override>,
    /// rg: `-t`/`-T` file types.
    pub(crate) types: Option<ignore::types::Types>,
    /// rg `--files`: list the files a search would read.
    pub(crate) list_files: bool,
    /// rg `-c`: files with no match are not listed.
    pub(crate) count_nonzero_only: bool,
    /// rg: VCS directories are not skipped by name (hidden ones are, unless --hidden).
    pub(crate) keep_vcs_dirs: bool,
    /// The line between context groups: `--` (`None`), another (`--group-separator`),
    /// or none at all (`Some(None)`, `--no-group-separator`).
    pub(crate) group_separator: Option<Option<String>>,
    /// `-z`: lines end with a NUL byte instead of a newline.
    pub(crate) null_data: bool,
    /// `-Z`: a NUL byte follows each file name in the output.
    pub(crate) null_names: bool,
    /// `--line-buffered`: output is flushed after each line.
    pub(crate) line_buffered: bool,
    /// `-d skip`: directory operands are skipped; `-d read`: GNU's "Is a directory".
    pub(crate) directories: Option<Directories>,
    /// `-D skip`: devices, FIFOs and sockets are skipped.
    pub(crate) skip_devices: bool,
    /// rg `-c -o`: count matches, not lines.
    pub(crate) count_matches: bool,
    /// rg: a single file operand is printed without its path.
    pub(crate) rg_names: bool,
    /// `--color` in effect: the colors of each part of the output.
    pub(crate) colors: Option<crate::color::Colors>,
    /// `--help` or `--version`: that text is printed, and nothing is searched.
    pub(crate) info: Option<Info>,
}

/// `--help` or `--version`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Info {
    Help,
    Version,
}

/// `-d ACTION`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Directories {
    Read,
    Skip,
}

/// Applies `-d ACTION` (`recurse` is `-r`).
fn directories(o: &mut Options, action: &str) -> Result<(), Unsupported> {
    match action {
        "read" => o.directories = Some(Directories::Read),
        "skip" => o.directories = Some(Directories::Skip),
        "recurse" => o.recursive = true,
        other => return Err(Unsupported(format!("-d {other}"))),
    }
    Ok(())
}

/// Applies `-D ACTION`.
fn devices(o: &mut Options, action: &str) -> Result<(), Unsupported> {
    match action {
        "read" => o.skip_devices = false,
        "skip" => o.skip_devices = true,
        other => return Err(Unsupported(format!("-D {other}"))),
    }
    Ok(())
}

/// GNU grep 3.8's long options, for resolving abbreviations.
const LONG_OPTIONS: &[&str] = &[
    "after-context",
    "basic-regexp",
    "before-context",
    "binary",
    "binary-files",
    "byte-offset",
    "color",
    "colour",
    "context",
    "count",
    "dereference-recursive",
    "devices",
    "directories",
    "exclude",
    "exclude-dir",
    "exclude-from",
    "extended-regexp",
    "file",
    "files-with-matches",
    "files-without-match",
    "fixed-strings",
    "group-separator",
    "help",
    "ignore-case",
    "include",
    "initial-tab",
    "invert-match",
    "label",
    "line-buffered",
    "line-number",
    "line-regexp",
    "max-count",
    "no-filename",
    "no-group-separator",
    "no-ignore-case",
    "no-messages",
    "null",
    "null-data",
    "only-matching",
    "perl-regexp",
    "quiet",
    "recursive",
    "regexp",
    "silent",
    "text",
    "version",
    "with-filename",
    "word-regexp",
];

/// The long option `given` names: itself, or the one option it is a prefix of. `None`
/// when unknown or ambiguous (the system grep then says which).
fn long_option(given: &str) -> Option<&'static str> {
    if let Some(exact) = LONG_OPTIONS.iter().find(|n| **n == given) {
        return Some(exact);
    }
    let mut candidates = LONG_OPTIONS.iter().filter(|n| n.starts_with(given));
    match (candidates.next(), candidates.next()) {
        (Some(only), None) if !given.is_empty() => Some(only),
        // `--col` names both spellings of one option.
        (Some(&"color"), Some(&"colour")) => Some("color"),
        _ => None,
    }
}

fn number(value: &str, flag: &str) -> Result<u64, Unsupported> {
    value
        .parse()
        .map_err(|_| Unsupported(format!("{flag} {value}")))
}

/// Parses GNU grep's arguments. Anything not handled here is `Unsupported`.
pub fn parse(args: &[String]) -> Result<Options, Unsupported> {
    let mut o = Options::default();
    let mut positional = Vec::new();
    let mut pattern_given = false;
    let mut i = 0;
    let mut context: Option<usize> = None;
    let (mut after_given, mut before_given) = (false, false);
    let mut color = crate::color::When::Never;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if arg == "--" {
            positional.extend(args[i..].iter().cloned());
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (given, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_owned())),
                None => (long, None),
            };
            // GNU's getopt takes any unambiguous prefix of a long option (`--no-gr`).
            let name = long_option(given).ok_or_else(|| Unsupported(format!("--{given}")))?;
            let mut value = || -> Result<String, Unsupported> {
                if let Some(v) = inline.clone() {
                    return Ok(v);
                }
                let v = args
                    .get(i)
                    .cloned()
                    .ok_or_else(|| Unsupported(format!("--{name} without a value")))?;
                i += 1;
                Ok(v)
            };
            match name {
                "regexp" => {
                    push_patterns(&value()?, None, &mut o);
                    pattern_given = true;
                }
                "file" => {
                    read_pattern_file(&value()?, &mut o)?;
                    pattern_given = true;
                }
                "extended-regexp" => o.dialect = Dialect::Extended,
                "fixed-strings" => o.dialect = Dialect::Fixed,
                "basic-regexp" => o.dialect = Dialect::Basic,
                "perl-regexp" => o.dialect = Dialect::Perl,
                "ignore-case" => o.ignore_case = true,
                "no-ignore-case" => o.ignore_case = false,
                "invert-match" => o.invert = true,
                "word-regexp" => o.word = true,
                "line-regexp" => o.line = true,
                "count" => o.count = true,
                "files-with-matches" => o.files_with_matches = true,
                "files-without-match" => o.files_without_match = true,
                "only-matching" => o.only_matching = true,
                "quiet" | "silent" => o.quiet = true,
                "no-messages" => o.no_messages = true,
                "byte-offset" => o.byte_offset = true,
                "with-filename" => o.with_filename = Some(true),
                "no-filename" => o.with_filename = Some(false),
                "line-number" => o.line_number = true,
                "max-count" => o.max_count = Some(number(&value()?, "--max-count")?),
                "after-context" => {
                    o.after = number(&value()?, "--after-context")? as usize;
                    o.context_given = true;
                    after_given = true;
                }
                "before-context" => {
                    o.before = number(&value()?, "--before-context")? as usize;
                    o.context_given = true;
                    before_given = true;
                }
                "context" => context = Some(number(&value()?, "--context")? as usize),
                "recursive" => o.recursive = true,
                "dereference-recursive" => {
                    o.recursive = true;
                    o.dereference = true;
                }
                "text" => o.text = true,
                "binary-files" => match value()?.as_str() {
                    "text" => o.text = true,
                    "without-match" => o.skip_binary = true,
                    "binary" => {}
                    other => return Err(Unsupported(format!("--binary-files={other}"))),
                },
                "label" => o.label = Some(value()?),
                "include" => o.file_globs.push((true, value()?)),
                "exclude" => o.file_globs.push((false, value()?)),
                "exclude-dir" => {
                    // GNU matches names without their trailing slashes.
                    let glob = value()?;
                    let trimmed = glob.trim_end_matches('/');
                    o.exclude_dir.push(if trimmed.is_empty() {
                        glob.clone()
                    } else {
                        trimmed.to_owned()
                    });
                }
                "initial-tab" => o.initial_tab = true,
                "group-separator" => o.group_separator = Some(Some(value()?)),
                "no-group-separator" => o.group_separator = Some(None),
                "null-data" => o.null_data = true,
                "null" => o.null_names = true,
                "line-buffered" => o.line_buffered = true,
                "directories" => directories(&mut o, &value()?)?,
                "devices" => devices(&mut o, &value()?)?,
                "color" | "colour" => {
                    // The value is optional, so it is only ever given after `=`.
                    let when = match inline.as_deref() {
                        None => crate::color::When::Auto,
                        Some(v) => crate::color::when(v)
                            .ok_or_else(|| Unsupported(format!("--color={v}")))?,
                    };
                    color = when;
                }
                "help" => o.info = Some(Info::Help),
                "version" => o.info = o.info.or(Some(Info::Version)),
                _ => return Err(Unsupported(format!("--{name}"))),
            }
            continue;
        }
        if arg.len() > 1 && arg.starts_with('-') {
            let cluster: Vec<char> = arg[1..].chars().collect();
            if cluster.iter().all(char::is_ascii_digit) {
                context = Some(number(&arg[1..], "-NUM")? as usize);
                continue;
            }
            let mut j = 0;
            while j < cluster.len() {
                let flag = cluster[j];
                j += 1;
                let mut value = |j: &mut usize| -> Result<String, Unsupported> {
                    if *j < cluster.len() {
                        let v: String = cluster[*j..].iter().collect();
                        *j = cluster.len();
                        return Ok(v);
                    }
                    let v = args
                        .get(i)
                        .cloned()
                        .ok_or_else(|| Unsupported(format!("-{flag} without a value")))?;
                    i += 1;
                    Ok(v)
                };
                match flag {
                    'e' => {
                        push_patterns(&value(&mut j)?, None, &mut o);
                        pattern_given = true;
                    }
                    'f' => {
                        read_pattern_file(&value(&mut j)?, &mut o)?;
                        pattern_given = true;
                    }
                    'E' => o.dialect = Dialect::Extended,
                    'F' => o.dialect = Dialect::Fixed,
                    'G' => o.dialect = Dialect::Basic,
                    'P' => o.dialect = Dialect::Perl,
                    'i' | 'y' => o.ignore_case = true,
                    'v' => o.invert = true,
                    'w' => o.word = true,
                    'x' => o.line = true,
                    'c' => o.count = true,
                    'l' => o.files_with_matches = true,
                    'L' => o.files_without_match = true,
                    'o' => o.only_matching = true,
                    'q' => o.quiet = true,
                    's' => o.no_messages = true,
                    'b' => o.byte_offset = true,
                    'H' => o.with_filename = Some(true),
                    'h' => o.with_filename = Some(false),
                    'n' => o.line_number = true,
                    'm' => o.max_count = Some(number(&value(&mut j)?, "-m")?),
                    'A' => {
                        o.after = number(&value(&mut j)?, "-A")? as usize;
                        o.context_given = true;
                        after_given = true;
                    }
                    'B' => {
                        o.before = number(&value(&mut j)?, "-B")? as usize;
                        o.context_given = true;
                        before_given = true;
                    }
                    'C' => context = Some(number(&value(&mut j)?, "-C")? as usize),
                    'r' => o.recursive = true,
                    'R' => {
                        o.recursive = true;
                        o.dereference = true;
                    }
                    'a' => o.text = true,
                    'I' => o.skip_binary = true,
                    'T' => o.initial_tab = true,
                    'z' => o.null_data = true,
                    'Z' => o.null_names = true,
                    'd' => directories(&mut o, &value(&mut j)?)?,
                    'D' => devices(&mut o, &value(&mut j)?)?,
                    'U' => {}
                    'V' => o.info = o.info.or(Some(Info::Version)),
                    other => return Err(Unsupported(format!("-{other}"))),
                }
            }
            continue;
        }
        positional.push(arg.clone());
    }
    if let Some(n) = context {
        o.context_given = true;
        if !after_given {
            o.after = n;
        }
        if !before_given {
            o.before = n;
        }
    }
    if crate::color::enabled(color) {
        o.colors = Some(crate::color::Colors::from_env());
    }
    if o.info.is_some() {
        return Ok(o);
    }
    if !pattern_given {
        if positional.is_empty() {
            return Err(Unsupported("no pattern".into()));
        }
        push_patterns(&positional.remove(0), None, &mut o);
    }
    // Equivalence classes of letters and multi-character collating symbols follow the
    // locale's collation, which the system grep knows ([[=a=]] matches à in a UTF-8
    // locale).
    if o.dialect == Dialect::Perl && charset().is_some_and(|c| !c.multibyte()) {
        // GNU's PCRE2 reads a single-byte set's bytes with that locale's character
        // tables, which are not built here.
        return Err(Unsupported(
            "-P in a single-byte locale other than C".into(),
        ));
    }
    let turkish_case = o.ignore_case && turkish_locale();
    if turkish_case && o.dialect == Dialect::Perl {
        // GNU's PCRE2 folds ASCII letters with the locale's single-byte tables, where
        // `i` and `I` are not each other's case in Turkish; those are not built here.
        return Err(Unsupported("-P -i in a Turkish locale".into()));
    }
    if matches!(o.dialect, Dialect::Basic | Dialect::Extended) {
        let utf8 = text_locale();
        for p in &o.patterns {
            let flavor = Flavor {
                extended: o.dialect == Dialect::Extended,
                utf8,
                target: Target::Fast,
                group_offset: 0,
                syntax: None,
                loose: false,
                null_data: o.null_data,
                turkish_case,
            };
            if translate(p, flavor).is_ok_and(|t| t.collation) {
                return Err(Unsupported(format!("the collation class in {p}")));
            }
            if translate(p, flavor).is_ok_and(|t| t.turkish_bracket) {
                return Err(Unsupported(format!(
                    "-i with the bracket expression in {p} in a Turkish locale"
                )));
            }
            if turkish_case && has_backreference(p, flavor.extended) {
                return Err(Unsupported(
                    "-i with back-references in a Turkish locale".into(),
                ));
            }
        }
    }
    o.files = positional;
    Ok(o)
}

/// A pattern with newlines is several patterns (`-e $'a\nb'`, and `-e $'x\n'` adds the
/// empty pattern, which matches every line).
fn push_patterns(text: &str, file: Option<&str>, o: &mut Options) {
    // Origins line up with patterns (rg pushes patterns of its own without them).
    o.pattern_origins.resize(o.patterns.len(), None);
    for (line, pattern) in text.split('\n').enumerate() {
        o.patterns.push(pattern.to_owned());
        o.pattern_origins
            .push(file.map(|f| (f.to_owned(), line + 1)));
    }
}
/// `-f FILE`: one pattern a line; an empty file adds none (then nothing matches). `-f -`
/// reads stdin. An unreadable file is GNU's error, exit 2.
fn read_pattern_file(path: &str, o: &mut Options) -> Result<(), Unsupported> {
    let read = if path == "-" {
        let mut bytes = Vec::new();
        io::stdin().read_to_end(&mut bytes).map(|_| bytes)
    } else {
        std::fs::read(path)
    };
    let bytes = match read {
        Ok(bytes) => bytes,
        Err(error) => {
            o.fatal.get_or_insert(error_message(path, &error));
            return Ok(());
        }
    };
    if bytes.is_empty() {
        return Ok(());
    }
    // In another character set than UTF-8, the patterns are in that set.
    let text = match charset() {
        Some(charset) => charset.to_text(&bytes).ok_or(()),
        None => String::from_utf8(bytes).map_err(|_| ()),
    };
    let Ok(text) = text else {
        return Err(Unsupported(format!(
            "-f {path}: patterns that are not UTF-8"
        )));
    };
    push_patterns(text.strip_suffix('\n').unwrap_or(&text), Some(path), o);
    Ok(())
}
/// The locale's character type as the C library reads it (`LC_ALL`, then `LC_CTYPE`,
/// then `LANG`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Locale {
    /// A UTF-8 locale.
    Utf8,
    /// C or POSIX (or none set): every byte is one character.
    C,
    /// Any other character set (EUC-JP, KOI8-R, ISO-8859-*, ...), or a UTF-8 locale whose
    /// case rules are not Unicode's defaults (Turkish and Azeri dotted I).
    Other(String),
}

pub(crate) fn locale() -> Locale {
    static LOCALE: std::sync::OnceLock<Locale> = std::sync::OnceLock::new();
    LOCALE
        .get_or_init(|| {
            let names = ["LC_ALL", "LC_CTYPE", "LANG"];
            let value = names
                .iter()
                .filter_map(std::env::var_os)
                .find(|value| !value.is_empty());
            value.map_or(Locale::C, |value| {
                classify_locale(&value.to_string_lossy(), Path::new("/usr/lib/locale"))
            })
        })
        .clone()
}

/// A locale name's character type. A locale the C library does not have is the C locale
/// there (glibc falls back to it), so where glibc's locale directory can be read, a
/// name it does not hold is C.
fn classify_locale(value: &str, locale_dir: &Path) -> Locale {
    let lower = value.to_ascii_lowercase();
    if lower == "c" || lower == "posix" || (lower.starts_with("c.") && !lower.contains("utf")) {
        return Locale::C;
    }
    let builtin = lower == "c.utf-8" || lower == "c.utf8";
    if !builtin && locale_installed(value, locale_dir) == Some(false) {
        return Locale::C;
    }
    let utf8 = lower.contains(".utf-8") || lower.contains(".utf8");
    let special_case = lower.starts_with("tr_") || lower.starts_with("az_");
    if utf8 && !special_case {
        Locale::Utf8
    } else {
        Locale::Other(value.to_owned())
    }
}

/// Whether glibc has the locale `name`: its directory under `locale_dir`, or its
/// normalized name (`en_US.utf8`) in `locale-archive`. `None` where that cannot be told
/// (no such directory: not glibc, or an archive too large to scan for every call).
fn locale_installed(name: &str, locale_dir: &Path) -> Option<bool> {
    if !locale_dir.is_dir() {
        return None;
    }
    // glibc's normalization: the codeset lower-cased, without punctuation ("UTF-8" ->
    // "utf8"), "iso" before one made only of digits.
    let (base, modifier) = match name.split_once('@') {
        Some((base, modifier)) => (base, Some(modifier)),
        None => (name, None),
    };
    let normalized = match base.split_once('.') {
        Some((language, codeset)) => {
            let mut set: String = codeset
                .chars()
                .filter(char::is_ascii_alphanumeric)
                .map(|c| c.to_ascii_lowercase())
                .collect();
            if set.chars().all(|c| c.is_ascii_digit()) {
                set.insert_str(0, "iso");
            }
            format!("{language}.{set}")
        }
        None => base.to_owned(),
    };
    let normalized = match modifier {
        Some(modifier) => format!("{normalized}@{modifier}"),
        None => normalized,
    };
    for candidate in [name, normalized.as_str()] {
        if locale_dir.join(candidate).join("LC_CTYPE").is_file() {
            return Some(true);
        }
    }
    let archive = locale_dir.join("locale-archive");
    if !archive.exists() {
        return Some(false);
    }
    let names = archive_names(&archive)?;
    let found = [name, normalized.as_str()].iter().any(|candidate| {
        let needle = format!("\0{candidate}\0");
        memchr::memmem::find(&names, needle.as_bytes()).is_some()
    });
    Some(found)
}

/// The string table of glibc's `locale-archive` (its locale names, NUL-separated, with a
/// NUL first): the header says where it is, so a few KiB are read, not the archive.
fn archive_names(archive: &Path) -> Option<Vec<u8>> {
    use std::io::Seek;
    const MAGIC: u32 = 0xde02_0109;
    let mut file = std::fs::File::open(archive).ok()?;
    let mut header = [0u8; 32];
    file.read_exact(&mut header).ok()?;
    let word =
        |i: usize| u32::from_ne_bytes([header[i], header[i + 1], header[i + 2], header[i + 3]]);
    if word(0) != MAGIC {
        return None;
    }
    let (offset, used) = (u64::from(word(20)), usize::try_from(word(24)).ok()?);
    if used > 16 << 20 {
        return None;
    }
    file.seek(io::SeekFrom::Start(offset)).ok()?;
    let mut names = vec![0u8; used + 1];
    file.read_exact(&mut names[1..]).ok()?;
    Some(names)
}

/// Whether the locale's character type is UTF-8; otherwise every byte is one
/// character, as in the C locale.
pub(crate) fn utf8_locale() -> bool {
    match locale() {
        Locale::Utf8 => true,
        Locale::C => false,
        Locale::Other(name) => {
            let lower = name.to_ascii_lowercase();
            lower.contains(".utf-8") || lower.contains(".utf8")
        }
    }
}

/// The locale's character set when it is neither UTF-8 nor C's bytes and the C library
/// has the locale: lines are decoded with it and matched as UTF-8 text.
pub(crate) fn charset() -> Option<&'static crate::charset::Charset> {
    static CHARSET: std::sync::OnceLock<Option<crate::charset::Charset>> =
        std::sync::OnceLock::new();
    CHARSET
        .get_or_init(|| match locale() {
            Locale::Other(name) if !utf8_locale() => crate::charset::Charset::new(&name),
            _ => None,
        })
        .as_ref()
}

/// Whether lines are matched as text (UTF-8, or decoded from the locale's character
/// set), not as bytes (C).
pub(crate) fn text_locale() -> bool {
    utf8_locale() || charset().is_some()
}

/// Whether the locale's case rules are Turkish (and Azeri): `i` and `İ` are one letter's
/// two cases, `ı` and `I` another's.
pub(crate) fn turkish_locale() -> bool {
    match locale() {
        Locale::Other(name) => {
            let lower = name.to_ascii_lowercase();
            lower.starts_with("tr_") || lower.starts_with("az_")
        }
        _ => false,
    }
}

/// The engine that decides whether a line matches.
enum Engine {
    Fast(regex::bytes::Regex),
    /// `-P`: PCRE2, as GNU grep's.
    Pcre(pcre2::bytes::Regex),
    Backtracking(fancy_regex::Regex),
    /// No pattern at all (`-f /dev/null`): no line matches.
    Nothing,
}

/// A compiled matcher for all patterns.
struct Matcher {
    engine: Engine,
    /// The expression run over many lines at once to find the lines that can match (a
    /// line's match is a match in the chunk too, so it never misses one).
    screen: Option<regex::bytes::Regex>,
    /// The screen is the line expression itself: a screen match inside one line is that
    /// line's match, with no second look.
    screen_exact: bool,
    /// A UTF-8 locale: a line to print that is not valid UTF-8 makes the input binary.
    utf8: bool,
    /// Unicode word assertions, which the regex crate does not evaluate beside invalid
    /// UTF-8: such a line is matched again with its invalid bytes read as U+FFFD.
    word_assertions: bool,
    /// `-i` on the backtracking engine, whose back-references compare exactly: lines
    /// are matched lower-cased, so `\1` compares without case as GNU's does.
    fold_case: bool,
    /// A PCRE2 matching error (its backtracking limit...): GNU's message; the run ends.
    failure: std::sync::OnceLock<String>,
    /// The same expression reporting every match end: where a match found at a start
    /// ends when it is the longest there, as POSIX (and GNU, for -o and --color) reads
    /// `ab|abc` and several patterns (`-e bb -e bbb`).
    longest: Option<regex_automata::hybrid::dfa::DFA>,
    /// The locale's character set, when lines are decoded before they are matched.
    charset: Option<&'static crate::charset::Charset>,
}

impl Matcher {
    fn new(o: &Options) -> Result<Matcher, String> {
        let mut matcher = Matcher::compile(o)?;
        if let Some(charset) = charset() {
            // Lines are decoded one by one: a screen over raw chunks would read their
            // bytes as UTF-8.
            matcher.charset = Some(charset);
            matcher.screen = None;
            matcher.screen_exact = false;
        }
        Ok(matcher)
    }

    fn compile(o: &Options) -> Result<Matcher, String> {
        let utf8 = text_locale();
        if o.patterns.is_empty() {
            return Ok(Matcher {
                engine: Engine::Nothing,
                screen: None,
                screen_exact: false,
                utf8,
                word_assertions: false,
                fold_case: false,
                failure: std::sync::OnceLock::new(),
                longest: None,
                charset: None,
            });
        }
        if o.dialect == Dialect::Perl {
            if charset().is_some_and(crate::charset::Charset::multibyte) {
                // GNU's PCRE2 reads UTF-8 or single bytes only.
                return Err("-P supports only unibyte and UTF-8 locales".to_owned());
            }
            return Matcher::perl(o, utf8);
        }
        let extended = o.dialect == Dialect::Extended;
        let regex_dialect = matches!(o.dialect, Dialect::Basic | Dialect::Extended);
        let backtracking =
            regex_dialect && o.patterns.iter().any(|p| has_backreference(p, extended));
        let target = if backtracking {
            Target::Backtracking
        } else {
            Target::Fast
        };
        // fancy-regex matches text, so the byte reading of the C locale is not available
        // there: it reads UTF-8 (what a C-locale pattern with a back-reference rarely
        // notices).
        let byte_mode = !utf8 && !backtracking;
        let turkish_case = o.ignore_case && turkish_locale();
        let alternation_of = |loose: bool| -> Result<String, String> {
            let mut translated = Vec::with_capacity(o.patterns.len());
            let mut groups = 0;
            // GNU reports every pattern in error (once per distinct pattern), with the
            // file and line of a -f pattern.
            let mut errors = Vec::new();
            let mut seen = std::collections::HashSet::new();
            for (index, p) in o.patterns.iter().enumerate() {
                translated.push(match o.dialect {
                    Dialect::Fixed if byte_mode => p
                        .chars()
                        .map(|c| {
                            if c.is_ascii() {
                                regex::escape(&c.to_string())
                            } else {
                                let mut b = [0u8; 4];
                                c.encode_utf8(&mut b)
                                    .bytes()
                                    .map(|b| format!(r"\x{b:02X}"))
                                    .collect()
                            }
                        })
                        .collect(),
                    Dialect::Fixed if turkish_case => p
                        .chars()
                        .map(|c| match crate::pattern::turkish_case_class(c) {
                            Some(class) => class.to_owned(),
                            None => regex::escape(&c.to_string()),
                        })
                        .collect(),
                    Dialect::Fixed => regex::escape(p),
                    Dialect::Perl => p.clone(),
                    Dialect::Basic | Dialect::Extended => {
                        let t = translate(
                            p,
                            Flavor {
                                extended,
                                utf8: !byte_mode,
                                target,
                                group_offset: groups,
                                syntax: None,
                                loose,
                                null_data: o.null_data,
                                turkish_case,
                            },
                        );
                        match t {
                            Ok(t) => {
                                groups += t.groups;
                                t.regex
                            }
                            Err(PatternError(message)) if message == "stack overflow" => {
                                // GNU dies of it at once, naming no pattern.
                                return Err(message);
                            }
                            Err(PatternError(message)) => {
                                if seen.insert(p.as_str()) {
                                    errors.push(match o.pattern_origins.get(index) {
                                        Some(Some((file, line))) => {
                                            format!("{file}:{line}: {message}")
                                        }
                                        _ => message,
                                    });
                                }
                                String::new()
                            }
                        }
                    }
                });
            }
            if !errors.is_empty() {
                return Err(errors.join("\n"));
            }
            Ok(translated
                .iter()
                .map(|p| format!("(?:{p})"))
                .collect::<Vec<_>>()
                .join("|"))
        };
        let alternation = alternation_of(false)?;
        // Unicode word assertions never match beside invalid UTF-8 in the regex crate:
        // such lines are matched again as text, and the screen leaves the assertions out.
        let loose_alternation = alternation_of(true)?;
        let word_assertions = utf8 && (o.word || loose_alternation != alternation);
        let mut flags = String::new();
        if o.ignore_case {
            flags.push_str("(?i)");
        }
        if byte_mode {
            flags.push_str("(?-u)");
        }
        let body = if o.line {
            format!("^(?:{alternation})$")
        } else if o.word && backtracking {
            format!(r"(?<!\w)(?:{alternation})(?!\w)")
        } else if o.word {
            format!(r"\b{{start-half}}(?:{alternation})\b{{end-half}}")
        } else {
            alternation.clone()
        };
        // `\A`/`\z` (GNU's \` and \') mean the line's ends, not a chunk's.
        let absolute = body.contains(r"\A") || body.contains(r"\z");
        let eol = if o.null_data { 0 } else { b'\n' };
        let large = |text: &str| {
            regex::bytes::RegexBuilder::new(text)
                .line_terminator(eol)
                .nest_limit(1000)
                .size_limit(64 << 20)
                .dfa_size_limit(64 << 20)
                .build()
        };
        if backtracking {
            // With -z a line may hold newlines, which `.` matches there (GNU).
            let dot_all = if o.null_data { "(?s)" } else { "" };
            let engine = fancy_regex::Regex::new(&format!("{flags}{dot_all}{body}"))
                .map_err(|e| e.to_string())?;
            return Ok(Matcher {
                engine: Engine::Backtracking(engine),
                screen: None,
                screen_exact: false,
                utf8,
                word_assertions: false,
                fold_case: o.ignore_case,
                failure: std::sync::OnceLock::new(),
                longest: None,
                charset: None,
            });
        }
        let engine = large(&format!("{flags}{body}")).map_err(|e| regex_error(&e))?;
        let screen = if absolute {
            None
        } else if word_assertions {
            let loose = if o.line {
                format!("^(?:{loose_alternation})$")
            } else {
                loose_alternation
            };
            large(&format!("(?m){flags}{loose}")).ok()
        } else {
            large(&format!("(?m){flags}{body}")).ok()
        };
        Ok(Matcher {
            engine: Engine::Fast(engine),
            // With -z, lines hold newlines where the screen's anchors may match: every
            // candidate is checked on its own.
            screen_exact: screen.is_some() && !word_assertions && !o.null_data,
            screen,
            utf8,
            word_assertions,
            fold_case: false,
            failure: std::sync::OnceLock::new(),
            // Only output that shows matches needs their ends; rg's matches are
            // leftmost-first, as ripgrep's are.
            longest: ((o.only_matching || o.colors.is_some()) && !o.rg_names)
                .then(|| longest_dfa(&format!("{flags}{body}"), eol))
                .flatten(),
            charset: None,
        })
    }

    /// `-P` as GNU grep 3.8 builds it: one pattern, UTF-8 (invalid bytes never match)
    /// in a UTF-8 locale, bytes in C; `-x` and `-w` wrap it as GNU does.
    fn perl(o: &Options, utf8: bool) -> Result<Matcher, String> {
        if o.patterns.len() > 1 {
            return Err("the -P option only supports a single pattern".to_owned());
        }
        let pattern = &o.patterns[0];
        let body = if o.line {
            format!("^(?:{pattern})$")
        } else if o.word {
            format!(r"(?<!\w)(?:{pattern})(?!\w)")
        } else {
            pattern.clone()
        };
        // In UTF-8, invalid bytes must be barriers, not errors (GNU's
        // PCRE2_MATCH_INVALID_UTF): the crate sets that with UCP, and `(?a)` keeps
        // `\d`, `\s`, `\w` and the POSIX classes ASCII, as GNU 3.8's PCRE2 has them.
        let compiled = if utf8 {
            format!("(?a){body}")
        } else {
            body.clone()
        };
        let engine = pcre2::bytes::RegexBuilder::new()
            .caseless(o.ignore_case)
            .utf(utf8)
            .ucp(utf8)
            .jit_if_available(true)
            .max_jit_stack_size(Some(64 << 20))
            .build(&compiled)
            .map_err(|e| {
                // "PCRE2: error compiling pattern at offset N: MESSAGE" -> MESSAGE.
                let text = e.to_string();
                text.splitn(3, ": ").nth(2).unwrap_or(&text).to_owned()
            })?;
        // In the C locale, an ASCII pattern the regex crate reads, byte for byte as
        // PCRE2 reads it there, screens many lines at once.
        let screen = if !utf8 && body.is_ascii() && !o.ignore_case {
            regex::bytes::RegexBuilder::new(&format!("(?m)(?-u){body}"))
                .line_terminator(if o.null_data { 0 } else { b'\n' })
                .build()
                .ok()
        } else {
            None
        };
        Ok(Matcher {
            engine: Engine::Pcre(engine),
            screen,
            screen_exact: false,
            utf8,
            word_assertions: false,
            fold_case: false,
            failure: std::sync::OnceLock::new(),
            longest: None,
            charset: None,
        })
    }

    /// GNU's message for a PCRE2 matching error.
    fn pcre_failed(&self, error: &pcre2::Error) {
        // PCRE2's error codes (pcre2.h), stable across its releases.
        const PCRE2_ERROR_JIT_STACKLIMIT: i32 = -46;
        const PCRE2_ERROR_MATCHLIMIT: i32 = -47;
        const PCRE2_ERROR_NOMEMORY: i32 = -48;
        const PCRE2_ERROR_RECURSELOOP: i32 = -52;
        const PCRE2_ERROR_DEPTHLIMIT: i32 = -53;
        const PCRE2_ERROR_HEAPLIMIT: i32 = -63;
        let message = match error.code() {
            PCRE2_ERROR_MATCHLIMIT => "exceeded PCRE's backtracking limit".to_owned(),
            PCRE2_ERROR_JIT_STACKLIMIT => "exhausted PCRE JIT stack".to_owned(),
            PCRE2_ERROR_DEPTHLIMIT => "exhausted PCRE's depth limit".to_owned(),
            PCRE2_ERROR_HEAPLIMIT => "exceeded PCRE's heap limit".to_owned(),
            PCRE2_ERROR_RECURSELOOP => "PCRE detected recurse loop".to_owned(),
            PCRE2_ERROR_NOMEMORY => "memory exhausted".to_owned(),
            code => format!("internal PCRE error: {code}"),
        };
        let _ = self.failure.set(message);
    }

    /// Match ranges in a line (without its newline), in bytes of the line.
    fn find_all(&self, line: &[u8]) -> Vec<(usize, usize)> {
        match self.charset {
            Some(charset) if !line.is_ascii() => {
                let decoded = charset.decode(line);
                self.find_all_text(&decoded.text)
                    .into_iter()
                    .map(|(start, end)| (decoded.origin(start), decoded.origin(end)))
                    .collect()
            }
            _ => self.find_all_text(line),
        }
    }

    fn find_all_text(&self, line: &[u8]) -> Vec<(usize, usize)> {
        match &self.engine {
            Engine::Fast(re) => {
                let found = self.longest_matches(re, line);
                if !found.is_empty() || !self.word_assertions || std::str::from_utf8(line).is_ok() {
                    return found;
                }
                let (text, origin) = lossy_with_origins(line);
                let back = |i: usize| origin.get(i).copied().unwrap_or(line.len());
                re.find_iter(text.as_bytes())
                    .map(|m| (back(m.start()), back(m.end())))
                    .collect()
            }
            Engine::Backtracking(re) => {
                let (text, origin) = match std::str::from_utf8(line) {
                    Ok(text) => (std::borrow::Cow::Borrowed(text), None),
                    Err(_) => {
                        let (text, origin) = lossy_with_origins(line);
                        (std::borrow::Cow::Owned(text), Some(origin))
                    }
                };
                let text = self.fold(text);
                let back = |i: usize| match &origin {
                    Some(origin) => origin.get(i).copied().unwrap_or(line.len()),
                    None => i,
                };
                re.find_iter(&text)
                    .filter_map(Result::ok)
                    .map(|m| (back(m.start()), back(m.end())))
                    .collect()
            }
            Engine::Pcre(re) => {
                let mut found = Vec::new();
                for m in re.find_iter(line) {
                    match m {
                        Ok(m) => found.push((m.start(), m.end())),
                        Err(error) => {
                            self.pcre_failed(&error);
                            break;
                        }
                    }
                }
                found
            }
            Engine::Nothing => Vec::new(),
        }
    }

    /// The matches of `re` in `line`, left to right, each as long as it can be at its
    /// start; an empty match moves the search on by one byte.
    fn longest_matches(&self, re: &regex::bytes::Regex, line: &[u8]) -> Vec<(usize, usize)> {
        let Some(dfa) = &self.longest else {
            return re.find_iter(line).map(|m| (m.start(), m.end())).collect();
        };
        let mut cache = dfa.create_cache();
        let mut found = Vec::new();
        let mut at = 0;
        while at <= line.len() {
            let Some(m) = re.find_at(line, at) else { break };
            let input = regex_automata::Input::new(line)
                .range(m.start()..)
                .anchored(regex_automata::Anchored::Yes);
            let end = match dfa.try_search_fwd(&mut cache, &input) {
                Ok(Some(half)) => half.offset().max(m.end()),
                // The lazy DFA gives up (a Unicode word boundary beside non-ASCII text,
                // a full cache): the end found first stands.
                _ => m.end(),
            };
            found.push((m.start(), end));
            at = if end > m.start() { end } else { end + 1 };
        }
        found
    }

    /// The text lower-cased for `-i` on the backtracking engine, where that keeps every
    /// offset (else as it is, matched with `(?i)` alone).
    fn fold<'t>(&self, text: std::borrow::Cow<'t, str>) -> std::borrow::Cow<'t, str> {
        if !self.fold_case || !text.chars().any(char::is_uppercase) {
            return text;
        }
        let lower: String = text
            .chars()
            .map(|c| {
                let mut l = c.to_lowercase();
                match (l.next(), l.next()) {
                    (Some(one), None) if one.len_utf8() == c.len_utf8() => one,
                    _ => c,
                }
            })
            .collect();
        std::borrow::Cow::Owned(lower)
    }

    /// Whether `text` is valid in the locale's character set (always, in C).
    fn valid(&self, text: &[u8]) -> bool {
        match self.charset {
            Some(charset) => charset.valid(text),
            None => !self.utf8 || std::str::from_utf8(text).is_ok(),
        }
    }

    fn is_match(&self, line: &[u8]) -> bool {
        match self.charset {
            Some(charset) if !line.is_ascii() => self.is_match_text(&charset.decode(line).text),
            _ => self.is_match_text(line),
        }
    }

    fn is_match_text(&self, line: &[u8]) -> bool {
        match &self.engine {
            Engine::Fast(re) => {
                re.is_match(line)
                    || (self.word_assertions
                        && std::str::from_utf8(line).is_err()
                        && re.is_match(String::from_utf8_lossy(line).as_bytes()))
            }
            Engine::Backtracking(re) => {
                let text = String::from_utf8_lossy(line);
                re.is_match(&self.fold(text)).unwrap_or(false)
            }
            Engine::Pcre(re) => re.is_match(line).unwrap_or_else(|error| {
                self.pcre_failed(&error);
                false
            }),
            Engine::Nothing => false,
        }
    }
}

/// A lazy DFA of `pattern` (as the regex crate reads it) that reports the longest
/// match; `None` where it cannot be built (the leftmost-first ends are used then).
fn longest_dfa(pattern: &str, eol: u8) -> Option<regex_automata::hybrid::dfa::DFA> {
    use regex_automata::{MatchKind, hybrid::dfa::DFA, nfa::thompson, util::syntax};
    DFA::builder()
        .configure(
            DFA::config()
                .match_kind(MatchKind::All)
                .unicode_word_boundary(true)
                .cache_capacity(8 << 20),
        )
        .syntax(
            syntax::Config::new()
                .utf8(false)
                .line_terminator(eol)
                .nest_limit(1000),
        )
        .thompson(thompson::Config::new().utf8(false))
        .build(pattern)
        .ok()
}

/// The regex crate's error, shortened to its last line (its own pointer art is noise).
fn regex_error(error: &regex::Error) -> String {
    match error {
        regex::Error::CompiledTooBig(_) => "Regular expression too big".to_owned(),
        other => {
            let text = other.to_string();
            text.lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("invalid regular expression")
                .trim_start_matches("error: ")
                .to_owned()
        }
    }
}

/// `line` as text (invalid bytes as U+FFFD), with each text byte's offset in `line`.
fn lossy_with_origins(line: &[u8]) -> (String, Vec<usize>) {
    let mut text = String::with_capacity(line.len() + 8);
    let mut origin = Vec::with_capacity(line.len() + 8);
    let mut at = 0;
    for chunk in line.utf8_chunks() {
        let valid = chunk.valid();
        text.push_str(valid);
        origin.extend(at..at + valid.len());
        at += valid.len();
        for _ in chunk.invalid() {
            text.push('\u{FFFD}');
            origin.extend([at; 3]);
            at += 1;
        }
    }
    (text, origin)
}

/// Output that remembers its first write error instead of failing each write: the
/// search stops, and the run ends with GNU's `write error` (exit 2).
struct Sink<W: Write> {
    inner: W,
    error: Option<io::Error>,
}

impl<W: Write> Sink<W> {
    fn new(inner: W) -> Sink<W> {
        Sink { inner, error: None }
    }

    fn put(&mut self, bytes: &[u8]) {
        if self.error.is_none()
            && let Err(error) = self.inner.write_all(bytes)
        {
            self.error = Some(error);
        }
    }

    fn number(&mut self, n: u64) {
        self.put(n.to_string().as_bytes());
    }

    fn flush(&mut self) {
        if self.error.is_none()
            && let Err(error) = self.inner.flush()
        {
            self.error = Some(error);
        }
    }

    fn failed(&self) -> bool {
        self.error.is_some()
    }
}

/// An OS error in the C library's words, without Rust's `(os error N)`.
pub(crate) fn os_message(error: &io::Error) -> String {
    let text = error.to_string();
    match text.rfind(" (os error ") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}

/// The state of one run, writing to `W` (stdout, or one file's buffer in a worker).
struct Run<'a, W: Write> {
    o: &'a Options,
    matcher: &'a Matcher,
    out: Sink<W>,
    matched_any: bool,
    error: bool,
    show_names: bool,
    /// A context group was printed (for the `--` between groups, across files too).
    printed_group: bool,
    /// Binary-file notes of walked files, printed in walk order by the main thread.
    notes: Vec<String>,
    /// Standard output's file when it is a regular file (device, inode): an input that
    /// is the same file is refused, as GNU refuses it, instead of reading its own output.
    output_file: Option<(u64, u64)>,
}

/// One input's search state while it streams through.
#[derive(Default)]
struct Scan {
    /// Lines and bytes before the data not yet scanned.
    line_no: u64,
    offset: u64,
    count: u64,
    after_left: usize,
    /// The last lines not printed, for `-B`: (line number, offset, text).
    before: std::collections::VecDeque<(u64, u64, Vec<u8>)>,
    last_printed: Option<u64>,
    /// `-m` was reached: only trailing context is left to print.
    stopped: bool,
    done: bool,
    /// The selected-line count when a NUL byte made the input binary: from there on NUL
    /// bytes end lines, and the next match ends the input with a note (GNU).
    binary_from: Option<u64>,
    /// A line (or match) to print was not valid in the locale and was left out.
    encoding_error: bool,
    /// `-I` found a NUL byte: the input counts as having no match, and no note is due.
    binary_skipped: bool,
    /// `-T`: numbers are padded to this width (GNU: the digits of the input's size).
    width: usize,
    /// Where the input should be left once `-m` stops it: after the last selected line.
    resume_at: Option<u64>,
}

/// Input is read and searched this many bytes at a time.
const CHUNK: usize = 128 * 1024;

/// A file walked by a recursive search is skipped as binary for a NUL byte this early.
const BINARY_PROBE: usize = 32 * 1024;

fn line_end(chunk: &[u8], from: usize, eol: u8) -> usize {
    memchr::memchr(eol, &chunk[from..]).map_or(chunk.len(), |i| from + i)
}

fn count_lines(bytes: &[u8], eol: u8) -> u64 {
    let ends = memchr::memchr_iter(eol, bytes).count() as u64;
    ends + u64::from(bytes.last().is_some_and(|&b| b != eol))
}

fn digits(mut n: u64) -> usize {
    let mut width = 1;
    while n >= 10 {
        n /= 10;
        width += 1;
    }
    width
}

impl<W: Write> Run<'_, W> {
    /// The line terminator: a newline, or NUL with `-z`.
    fn eol(&self) -> u8 {
        if self.o.null_data { 0 } else { b'\n' }
    }

    fn printing(&self) -> bool {
        let o = self.o;
        !(o.count || o.files_with_matches || o.files_without_match || o.quiet)
    }

    /// Streams `reader` through the search: lines are matched as they arrive, reading
    /// stops at `-m`, and memory holds one chunk (plus the longest line). `pipe`: flush
    /// what was found before each read that may wait. `size`: a regular file's size.
    /// Returns where `-m` stopped.
    fn search_reader<R: Read>(
        &mut self,
        name: &str,
        mut reader: R,
        walked: bool,
        pipe: bool,
        size: Option<u64>,
    ) -> Option<u64> {
        let o = self.o;
        let mut st = Scan::default();
        if o.initial_tab {
            let largest = size.map_or(i64::MAX as u64, |s| s + u64::from(o.line_number));
            st.width = digits(largest);
        }
        if o.max_count == Some(0) {
            st.done = true;
        }
        let mut buf: Vec<u8> = Vec::with_capacity(CHUNK + 4096);
        let mut first = true;
        while !st.done {
            if pipe {
                self.out.flush();
            }
            let len = buf.len();
            buf.resize(len + CHUNK, 0);
            let n = match reader.read(&mut buf[len..]) {
                Ok(n) => n,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {
                    buf.truncate(len);
                    continue;
                }
                Err(error) => {
                    buf.truncate(len);
                    if error.kind() == io::ErrorKind::IsADirectory {
                        break;
                    }
                    self.report(name, &error);
                    break;
                }
            };
            buf.truncate(len + n);
            if n == 0 {
                if !buf.is_empty() {
                    self.scan_chunk(&mut st, name, &buf);
                }
                break;
            }
            if !o.text
                && !o.null_data
                && st.binary_from.is_none()
                && memchr::memchr(0, &buf[len..]).is_some()
            {
                if walked
                    && first
                    && memchr::memchr(0, &buf[..buf.len().min(BINARY_PROBE)]).is_some()
                {
                    // A recursive search skips binary files (SEARCH-1).
                    return None;
                }
                if o.skip_binary {
                    // -I: a binary file has no matching data.
                    st.count = 0;
                    st.binary_skipped = true;
                    break;
                }
                st.binary_from = Some(st.count);
            }
            if st.binary_from.is_some() {
                // GNU reads NUL bytes in a binary input as line ends.
                for b in &mut buf[len..] {
                    if *b == 0 {
                        *b = b'\n';
                    }
                }
            }
            first = false;
            if let Some(last) = memchr::memrchr(self.eol(), &buf) {
                self.scan_chunk(&mut st, name, &buf[..=last]);
                buf.drain(..=last);
            }
            if self.out.failed() {
                break;
            }
        }
        self.finish(&mut st, name);
        st.resume_at
    }

    /// Scans complete lines (the last one may lack its newline only at the end of input).
    fn scan_chunk(&mut self, st: &mut Scan, name: &str, chunk: &[u8]) {
        let o = self.o;
        let mut pos = 0;
        while pos < chunk.len() && !st.done && !self.out.failed() {
            if !o.invert
                && !st.stopped
                && let Some(screen) = &self.matcher.screen
            {
                // An empty match after the last newline is no line's match.
                let found = screen
                    .find_at(chunk, pos)
                    .filter(|m| !(m.start() == chunk.len() && chunk.last() == Some(&self.eol())));
                let Some(m) = found else {
                    self.skip(st, name, &chunk[pos..]);
                    return;
                };
                let start = memchr::memrchr(self.eol(), &chunk[pos..m.start()])
                    .map_or(pos, |i| pos + i + 1);
                self.skip(st, name, &chunk[pos..start]);
                if st.done {
                    return;
                }
                let end = line_end(chunk, start, self.eol());
                let selected = (self.matcher.screen_exact && m.end() <= end)
                    || self.matcher.is_match(&chunk[start..end]);
                self.die_on_failure(name);
                pos = self.line(st, name, chunk, start, end, selected);
                continue;
            }
            let end = line_end(chunk, pos, self.eol());
            let selected = !st.stopped && self.matcher.is_match(&chunk[pos..end]) != o.invert;
            self.die_on_failure(name);
            pos = self.line(st, name, chunk, pos, end, selected);
        }
    }

    /// A matching error of PCRE2 ends grep at once, as it ends GNU grep (exit 2).
    fn die_on_failure(&mut self, name: &str) {
        if let Some(message) = self.matcher.failure.get() {
            self.out.flush();
            eprintln_grep(&format!("{name}: {message}"));
            std::process::exit(2);
        }
    }

    /// Lines that are not selected, in one piece.
    fn skip(&mut self, st: &mut Scan, name: &str, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        if (st.after_left > 0 || self.o.before > 0) && self.printing() {
            // Context to print or keep: line by line.
            let mut pos = 0;
            while pos < bytes.len() && !st.done {
                let end = line_end(bytes, pos, self.eol());
                pos = self.line(st, name, bytes, pos, end, false);
            }
            return;
        }
        st.offset += bytes.len() as u64;
        st.line_no += count_lines(bytes, self.eol());
    }

    /// One line, `chunk[start..end]`; returns where the next one starts.
    fn line(
        &mut self,
        st: &mut Scan,
        name: &str,
        chunk: &[u8],
        start: usize,
        end: usize,
        selected: bool,
    ) -> usize {
        let o = self.o;
        let next = if end < chunk.len() { end + 1 } else { end };
        let text = &chunk[start..end];
        let (number, offset) = (st.line_no, st.offset);
        st.line_no += 1;
        st.offset += (next - start) as u64;
        let printing = self.printing();
        if st.stopped {
            // After -m, the trailing context is every following line, matching or not.
            if st.after_left > 0 {
                self.print_line(st, name, number, offset, text, b'-');
                st.last_printed = Some(number);
                st.after_left -= 1;
            }
            if st.after_left == 0 {
                st.done = true;
            }
            return next;
        }
        if selected {
            if o.count_matches && !o.invert {
                st.count += self
                    .matcher
                    .find_all(text)
                    .iter()
                    .filter(|(s, e)| s < e)
                    .count() as u64;
            } else {
                st.count += 1;
            }
            if o.quiet || o.files_with_matches || o.files_without_match {
                st.done = true;
                return next;
            }
            if printing {
                if st.binary_from.is_some() {
                    // GNU: a binary input's first match ends it; a note says it matched.
                    st.done = true;
                    return next;
                }
                self.print_before(st, name, number);
                self.print_line(st, name, number, offset, text, b':');
                st.last_printed = Some(number);
                self.printed_group = true;
                st.after_left = o.after;
            }
            if o.max_count.is_some_and(|m| st.count >= m) {
                st.stopped = true;
                st.resume_at = Some(st.offset);
                if st.after_left == 0 || !printing {
                    st.done = true;
                }
            }
        } else if printing && st.binary_from.is_none() && st.after_left > 0 {
            self.print_line(st, name, number, offset, text, b'-');
            st.last_printed = Some(number);
            st.after_left -= 1;
        } else if printing && o.before > 0 {
            st.before.push_back((number, offset, text.to_vec()));
            if st.before.len() > o.before {
                st.before.pop_front();
            }
        }
        next
    }

    /// The kept lines before a selected one, after a `--` where a group starts.
    fn print_before(&mut self, st: &mut Scan, name: &str, number: u64) {
        let kept: Vec<(u64, u64, Vec<u8>)> = st
            .before
            .drain(..)
            .filter(|(n, _, _)| st.last_printed.is_none_or(|p| *n > p) && *n < number)
            .collect();
        let first = kept.first().map_or(number, |(n, _, _)| *n);
        if self.o.context_given {
            let gap = match st.last_printed {
                Some(p) => first > p + 1,
                None => self.printed_group,
            };
            if gap {
                self.group_separator();
            }
        }
        for (n, offset, text) in kept {
            self.print_line(st, name, n, offset, &text, b'-');
        }
    }

    fn prefix(
        &mut self,
        st: &Scan,
        name: &str,
        number: u64,
        offset: u64,
        separator: u8,
        empty: bool,
    ) {
        let o = self.o;
        if self.show_names {
            self.colored_name(name);
            if o.null_names {
                self.out.put(&[0]);
            } else {
                self.separator(separator);
            }
        }
        if o.line_number {
            self.colored_number(st.width, number + 1, |c| &c.line_number);
            self.separator(separator);
        }
        if o.byte_offset {
            self.colored_number(st.width, offset, |c| &c.byte_offset);
            self.separator(separator);
        }
        if o.initial_tab && !empty && (self.show_names || o.line_number || o.byte_offset) {
            self.out.put(b"\t");
        }
    }

    /// `bytes` in the color `which` picks (as they are without `--color`).
    fn colored(&mut self, bytes: &[u8], which: impl Fn(&crate::color::Colors) -> &str) {
        let o = self.o;
        match &o.colors {
            Some(colors) => self.paint(colors, bytes, which(colors)),
            None => self.out.put(bytes),
        }
    }

    /// `bytes` between the sequences that start and end `sgr` (none for an empty one).
    fn paint(&mut self, colors: &crate::color::Colors, bytes: &[u8], sgr: &str) {
        if sgr.is_empty() || bytes.is_empty() {
            self.out.put(bytes);
            return;
        }
        self.out.put(&colors.start(sgr));
        self.out.put(bytes);
        self.out.put(colors.end(sgr));
    }

    fn colored_name(&mut self, name: &str) {
        self.colored(name.as_bytes(), |c| &c.file_name);
    }

    fn separator(&mut self, separator: u8) {
        self.colored(&[separator], |c| &c.separator);
    }

    fn colored_number(
        &mut self,
        width: usize,
        n: u64,
        which: impl Fn(&crate::color::Colors) -> &str,
    ) {
        let text = if width > 0 {
            format!("{n:>width$}")
        } else {
            n.to_string()
        };
        self.colored(text.as_bytes(), which);
    }

    /// Prints a selected (`:`) or context (`-`) line as GNU does: with -o only the
    /// matches of the lines that are "matching" (selected ones, or context ones under
    /// -v). Text that is not valid in the locale is left out (GNU), noted for the end.
    fn print_line(
        &mut self,
        st: &mut Scan,
        name: &str,
        number: u64,
        offset: u64,
        text: &[u8],
        separator: u8,
    ) {
        let o = self.o;
        let check = self.matcher.utf8 && !o.text;
        // A "matching" line: a selected one, or a context one under -v.
        let matching = (separator == b':') != o.invert;
        if !o.only_matching {
            if check && !self.matcher.valid(text) {
                st.encoding_error = true;
                return;
            }
            self.prefix(st, name, number, offset, separator, text.is_empty());
            match &o.colors {
                Some(colors) => self.colored_line(colors, text, separator == b':', matching),
                None => self.out.put(text),
            }
            self.end_line();
            return;
        }
        if !matching {
            return;
        }
        let separator = if o.invert { b'-' } else { b':' };
        for (start, end) in self.matcher.find_all(text) {
            if start == end {
                continue;
            }
            if check && !self.matcher.valid(&text[start..end]) {
                st.encoding_error = true;
                return;
            }
            self.prefix(st, name, number, offset + start as u64, separator, false);
            self.colored(&text[start..end], |c| c.matched(separator == b':'));
            self.end_line();
        }
    }

    /// A line's text with `--color`: its matches in the match color (when it is a
    /// matching line), the rest in the line color.
    fn colored_line(
        &mut self,
        colors: &crate::color::Colors,
        text: &[u8],
        selected: bool,
        matching: bool,
    ) {
        let line = colors.line(selected, self.o.invert);
        let matched = colors.matched(selected);
        let mut at = 0;
        if matching && !matched.is_empty() {
            for (start, end) in self.matcher.find_all(text) {
                if start == end || start < at {
                    continue;
                }
                // GNU opens the line color before each match's lead, and the match
                // color's end closes both.
                if !line.is_empty() {
                    self.out.put(&colors.start(line));
                }
                self.out.put(&text[at..start]);
                self.paint(colors, &text[start..end], matched);
                at = end;
            }
        }
        self.paint(colors, &text[at..], line);
    }

    /// The line between context groups.
    fn group_separator(&mut self) {
        let text = match &self.o.group_separator {
            None => "--".to_owned(),
            Some(Some(text)) => text.clone(),
            Some(None) => return,
        };
        self.colored(text.as_bytes(), |c| &c.separator);
        self.out.put(b"\n");
    }

    /// Ends a printed line with the line terminator (`--line-buffered`: and flushes).
    fn end_line(&mut self) {
        self.out.put(&[self.eol()]);
        if self.o.line_buffered {
            self.out.flush();
        }
    }

    /// Ends a file name in -l, -L and -c output: a newline, or NUL with `-Z`.
    fn name_end(&mut self, otherwise: u8) {
        self.out
            .put(&[if self.o.null_names { 0 } else { otherwise }]);
    }

    /// What is printed once an input is done: counts, names, the binary note.
    fn finish(&mut self, st: &mut Scan, name: &str) {
        let o = self.o;
        self.matched_any |= st.count > 0;
        if o.quiet {
            return;
        }
        if o.count && !(o.count_nonzero_only && st.count == 0) {
            if self.show_names {
                self.colored_name(name);
                if o.null_names {
                    self.out.put(&[0]);
                } else {
                    self.separator(b':');
                }
            }
            self.out.number(st.count);
            self.out.put(b"\n");
        }
        if o.files_with_matches && st.count > 0 {
            self.colored_name(name);
            self.name_end(b'\n');
        }
        if o.files_without_match && st.count == 0 {
            self.colored_name(name);
            self.name_end(b'\n');
        }
        let binary_match = st.binary_from.is_some_and(|from| from < st.count);
        if self.printing() && !o.skip_binary && (st.encoding_error || binary_match) {
            self.notes.push(format!("{name}: binary file matches"));
        }
    }

    fn report(&mut self, file: &str, error: &io::Error) {
        self.error = true;
        if !self.o.no_messages {
            eprintln_grep(&error_message(file, error));
        }
    }

    /// Prints binary-file notes on stderr after the output before them.
    fn print_notes(&mut self) {
        if self.notes.is_empty() {
            return;
        }
        self.out.flush();
        for note in std::mem::take(&mut self.notes) {
            eprintln_grep(&note);
        }
    }
}

/// `--include`, `--exclude` and `--exclude-dir` as GNU reads them: the last matching
/// glob decides; with none matching a file is searched unless the first is `--include`.
fn file_selected(globs: &[(bool, String)], names: &[&str]) -> bool {
    for (include, glob) in globs.iter().rev() {
        if names.iter().any(|n| wavesh_glob::fnmatch(glob, n)) {
            return *include;
        }
    }
    !globs.first().is_some_and(|(include, _)| *include)
}

/// A command-line name's suffixes that GNU matches `--exclude` against: the whole name
/// and each part after a `/`.
fn name_suffixes(name: &str) -> Vec<&str> {
    let mut out = vec![name];
    for (i, c) in name.char_indices() {
        if c == '/' && i + 1 < name.len() && !name[i + 1..].starts_with('/') {
            out.push(&name[i + 1..]);
        }
    }
    out
}

/// Runs grep with parsed options; returns the exit code (0 match, 1 none, 2 error).
pub fn run(o: &Options) -> i32 {
    if let Some(info) = o.info {
        return print_info(info);
    }
    if let Some(message) = &o.fatal {
        eprintln_grep(message);
        return 2;
    }
    if let Some(value) = o.colors.as_ref().and_then(|c| c.legacy.as_ref()) {
        eprintln_grep(&format!(
            "warning: GREP_COLOR='{value}' is deprecated; use GREP_COLORS='mt={value}'"
        ));
    }
    let matcher = match Matcher::new(o) {
        Ok(m) => m,
        Err(errors) => {
            for error in errors.lines() {
                eprintln_grep(error);
            }
            return 2;
        }
    };
    // GNU reads no input when no line can be selected (and -L is not listing files).
    let all_empty = !o.patterns.is_empty() && o.patterns.iter().all(String::is_empty);
    let nothing = o.max_count == Some(0)
        || (o.patterns.is_empty() && !o.invert)
        || (all_empty && o.invert && !o.line && !o.word);
    if nothing && !o.files_without_match && !o.list_files {
        return 1;
    }
    let stdout = io::stdout();
    let mut files = o.files.clone();
    // A directory is searched recursively even without -r (SEARCH-8, a documented
    // difference from GNU grep); `grep -r PATTERN` searches ".".
    let any_dir = files.iter().any(|f| Path::new(f).is_dir());
    let walk = o.recursive || any_dir;
    let walks_cwd = files.is_empty() && o.recursive;
    if walks_cwd {
        files.push(".".into());
    }
    let show_names = o.with_filename.unwrap_or(if o.rg_names {
        walks_cwd || files.len() > 1 || any_dir
    } else {
        files.len() > 1 || walk
    });
    let mut run = Run {
        o,
        matcher: &matcher,
        out: Sink::new(io::BufWriter::with_capacity(64 * 1024, stdout.lock())),
        matched_any: false,
        error: false,
        show_names,
        printed_group: false,
        notes: Vec::new(),
        output_file: output_file(),
    };
    let label = o.label.clone().unwrap_or_else(|| "(standard input)".into());
    if files.is_empty() {
        run.search_stdin(&label);
    }
    for file in &files {
        if (run.o.quiet && run.matched_any) || run.out.failed() {
            break;
        }
        if file == "-" {
            run.search_stdin(&label);
        } else if Path::new(file).is_dir() && !o.recursive && o.directories.is_some() {
            // -d skip: nothing; -d read: GNU's error for reading a directory.
            if o.directories == Some(Directories::Read) {
                run.error = true;
                if !o.no_messages {
                    eprintln_grep(&format!("{file}: Is a directory"));
                }
            }
        } else if o.skip_devices && is_device(file) {
            // -D skip: devices, FIFOs and sockets are not read.
        } else if Path::new(file).is_dir() {
            let base = file.trim_end_matches('/');
            let excluded = !matches!(base, "." | ".." | "")
                && o.exclude_dir.iter().any(|g| {
                    name_suffixes(base)
                        .iter()
                        .any(|n| wavesh_glob::fnmatch(g, n))
                });
            if !excluded {
                run.walk(file);
            }
        } else {
            if !file_selected(&o.file_globs, &name_suffixes(file)) {
                continue;
            }
            match std::fs::File::open(file) {
                Ok(f) => {
                    let metadata = f.metadata().ok();
                    if run.is_output(metadata.as_ref()) {
                        run.input_is_output(file);
                        continue;
                    }
                    let size = metadata.as_ref().filter(|m| m.is_file()).map(|m| m.len());
                    run.search_reader(file, f, false, size.is_none(), size);
                }
                Err(error) => run.report(file, &error),
            }
            run.print_notes();
        }
    }
    run.out.flush();
    if let Some(error) = &run.out.error {
        let message = format!("write error: {}", os_message(error));
        eprintln_grep(&message);
        return 2;
    }
    if run.error && !(o.quiet && run.matched_any) {
        2
    } else if run.matched_any {
        0
    } else {
        1
    }
}

/// What `--version` prints: wavesh's grep, and the GNU grep release it follows (the
/// last word, as scripts that check a grep's version read it).
const VERSION_TEXT: &str = concat!(
    "grep (wavesh ",
    env!("CARGO_PKG_VERSION"),
    "), compatible with GNU grep 3.8\n",
    "This grep is wavesh's own implementation, not GNU grep: it follows GNU grep 3.8's\n",
    "options, output and exit status, and reads .gitignore files when it walks\n",
    "directories. Arguments it does not support run the system grep.\n",
);

/// What `--help` prints.
const HELP_TEXT: &str = "\
Usage: grep [OPTION]... PATTERNS [FILE]...
Search each FILE (standard input for none or -, the working directory with -r and
no FILE) for lines matching PATTERNS, one pattern a line.

Patterns:
  -E, --extended-regexp     PATTERNS are extended regular expressions
  -F, --fixed-strings       PATTERNS are strings
  -G, --basic-regexp        PATTERNS are basic regular expressions (the default)
  -P, --perl-regexp         PATTERNS are Perl-compatible (PCRE2) expressions
  -e, --regexp=PATTERNS     use PATTERNS (may be given more than once)
  -f, --file=FILE           take patterns from FILE, one a line
  -i, --ignore-case         ignore case; --no-ignore-case does not (the default)
  -w, --word-regexp         match whole words only
  -x, --line-regexp         match whole lines only
  -z, --null-data           lines end with a NUL byte, not a newline

Output:
  -s, --no-messages         leave out messages about unreadable files
  -v, --invert-match        select the lines that do not match
  -V, --version             print the version and exit
      --help                print this help and exit
  -m, --max-count=NUM       stop after NUM selected lines
  -b, --byte-offset         print each line's byte offset
  -n, --line-number         print each line's number
      --line-buffered       flush the output after each line
  -H, --with-filename       print the file name of each match
  -h, --no-filename         print no file names
      --label=LABEL         the name shown for standard input
  -o, --only-matching       print only the matched parts of lines
  -q, --quiet, --silent     print nothing; the exit status tells
      --binary-files=TYPE   binary, text or without-match
  -a, --text                read binary files as text (--binary-files=text)
  -I                        skip binary files (--binary-files=without-match)
  -d, --directories=ACTION  read, skip or recurse
  -D, --devices=ACTION      read or skip devices, FIFOs and sockets
  -r, --recursive           search directories, not following symbolic links in them
  -R, --dereference-recursive  search directories, following symbolic links
      --include=GLOB        search only files whose name matches GLOB
      --exclude=GLOB        skip files whose name matches GLOB
      --exclude-from=FILE   skip files matching a glob in FILE
      --exclude-dir=GLOB    skip directories whose name matches GLOB
  -L, --files-without-match print only the names of files with no match
  -l, --files-with-matches  print only the names of files with a match
  -c, --count               print only each file's count of selected lines
  -T, --initial-tab         align the text after the prefixes with a tab
  -Z, --null                print a NUL byte after each file name

Context:
  -B, --before-context=NUM  print NUM lines before each match
  -A, --after-context=NUM   print NUM lines after each match
  -C, --context=NUM, -NUM   print NUM lines around each match
      --group-separator=SEP print SEP between context groups (-- by default)
      --no-group-separator  print nothing between context groups
      --color[=WHEN], --colour[=WHEN]
                            color matches and prefixes: never, always or auto;
                            GREP_COLORS says which colors (GNU grep's format)
  -U, --binary              accepted and ignored

The exit status is 0 when a line is selected, 1 when none is, 2 on an error (unless
-q selected a line).

This is wavesh's grep, not GNU grep: report its bugs to wavesh's maintainers, not to
GNU grep's address (bug-grep@gnu.org), since a difference from GNU grep 3.8 is a bug
in wavesh.
";

/// Prints `--help` or `--version` on standard output: exit 0, or GNU's write error
/// and 2 when it cannot be written.
fn print_info(info: Info) -> i32 {
    let text = match info {
        Info::Help => HELP_TEXT,
        Info::Version => VERSION_TEXT,
    };
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => 0,
        Err(error) => {
            eprintln_grep(&format!("write error: {}", os_message(&error)));
            2
        }
    }
}

/// A walk error in GNU grep's words: `PATH: No such file or directory`, `PATH: warning:
/// recursive directory loop`.
fn walk_error(error: &ignore::Error) -> String {
    let shown = |path: &Path| {
        let text = path.to_string_lossy();
        text.strip_prefix("./").unwrap_or(&text).to_owned()
    };
    match error {
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            walk_error(err)
        }
        ignore::Error::WithPath { path, err } => format!("{}: {}", shown(path), walk_error(err)),
        ignore::Error::Loop { child, .. } => {
            format!("{}: warning: recursive directory loop", shown(child))
        }
        ignore::Error::Io(io) => {
            // The walk's own wording ("IO error for operation on P: ...") trimmed to the
            // system's message.
            let message = os_message(io);
            message.rsplit(": ").next().unwrap_or(&message).to_owned()
        }
        other => other.to_string(),
    }
}

/// Whether a walked entry is the file standard output writes to.
fn is_same_file(entry: &ignore::DirEntry, output: Option<(u64, u64)>) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        output.is_some_and(|(dev, ino)| {
            entry.ino() == Some(ino) && entry.metadata().is_ok_and(|m| m.dev() == dev)
        })
    }
    #[cfg(not(unix))]
    {
        let _ = (entry, output);
        false
    }
}

/// The metadata of an open descriptor (through a duplicate of it).
#[cfg(unix)]
fn fd_metadata(fd: std::os::fd::BorrowedFd<'_>) -> Option<std::fs::Metadata> {
    let file = std::fs::File::from(fd.try_clone_to_owned().ok()?);
    file.metadata().ok()
}

/// Standard output's (device, inode) when it is a regular file.
fn output_file() -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        use std::os::unix::fs::MetadataExt;
        let metadata = fd_metadata(io::stdout().as_fd())?;
        metadata.is_file().then(|| (metadata.dev(), metadata.ino()))
    }
    #[cfg(not(unix))]
    None
}

impl<W: Write> Run<'_, W> {
    /// GNU checks for input that is the output only when lines are printed and more
    /// than one may be (with -q, -l, -L, -c or -m1 the loop cannot feed itself).
    fn checks_output(&self) -> bool {
        self.output_file.is_some() && self.printing() && self.o.max_count.is_none_or(|m| m > 1)
    }

    fn is_output(&self, metadata: Option<&std::fs::Metadata>) -> bool {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            self.checks_output()
                && metadata
                    .is_some_and(|m| m.is_file() && self.output_file == Some((m.dev(), m.ino())))
        }
        #[cfg(not(unix))]
        {
            let _ = metadata;
            false
        }
    }

    fn input_is_output(&mut self, name: &str) {
        self.error = true;
        if !self.o.no_messages {
            eprintln_grep(&format!("{name}: input file is also the output"));
        }
    }

    /// Standard input, streamed. A regular file left by `-m` is positioned just after the
    /// last selected line, as GNU leaves it for the next reader (`{ grep -m1 x; cat; } <f`).
    fn search_stdin(&mut self, label: &str) {
        let stdin = io::stdin();
        #[cfg(unix)]
        let (metadata, start) = {
            use std::os::fd::AsFd;
            let metadata = fd_metadata(stdin.as_fd()).filter(std::fs::Metadata::is_file);
            let start = metadata.as_ref().and_then(|_| {
                rustix::fs::seek(stdin.as_fd(), rustix::fs::SeekFrom::Current(0)).ok()
            });
            (metadata, start)
        };
        #[cfg(not(unix))]
        let metadata: Option<std::fs::Metadata> = None;
        if self.is_output(metadata.as_ref()) {
            self.input_is_output(label);
            return;
        }
        let size = metadata.as_ref().map(std::fs::Metadata::len);
        let regular = metadata.is_some();
        let resume = self.search_reader(label, stdin.lock(), false, !regular, size);
        #[cfg(unix)]
        if let (Some(start), Some(resume)) = (start, resume) {
            use std::os::fd::AsFd;
            let _ = rustix::fs::seek(stdin.as_fd(), rustix::fs::SeekFrom::Start(start + resume));
        }
        #[cfg(not(unix))]
        let _ = resume;
        self.print_notes();
    }
}

/// Whether `path` is a device, a FIFO or a socket.
fn is_device(path: &str) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        std::fs::metadata(path).is_ok_and(|m| {
            let t = m.file_type();
            t.is_block_device() || t.is_char_device() || t.is_fifo() || t.is_socket()
        })
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// Reads and searches one walked file into a buffer (in a worker thread).
fn search_file(
    o: &Options,
    matcher: &Matcher,
    show_names: bool,
    path: &Path,
    shown: &str,
) -> FileResult {
    if o.list_files {
        return FileResult {
            out: format!("{shown}\n").into_bytes(),
            matched: true,
            grouped: false,
            error: None,
            notes: Vec::new(),
        };
    }
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(error) => return FileResult::error(error_message(shown, &error)),
    };
    let mut run = Run {
        o,
        matcher,
        out: Sink::new(Vec::new()),
        matched_any: false,
        error: false,
        show_names,
        printed_group: false,
        notes: Vec::new(),
        output_file: None,
    };
    let size = file.metadata().ok().map(|m| m.len());
    run.search_reader(shown, file, true, false, size);
    let context = o.context_given;
    FileResult {
        grouped: context && run.printed_group,
        matched: run.matched_any,
        out: run.out.inner,
        error: None,
        notes: run.notes,
    }
}

/// The name error messages start with: `grep` unless rg mode set it.
pub(crate) static PROGRAM: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();

/// Directory names never descended into (SEARCH-9).
const VCS_DIRS: &[&str] = &[".git", ".hg", ".svn", ".bzr", "CVS", "_darcs", ".jj", ".sl"];

/// A walked file to search (path, name shown), or a walk error's message.
type Work = Result<(PathBuf, String), String>;

/// One walked file's results, made by a worker and printed in walk order.
struct FileResult {
    out: Vec<u8>,
    matched: bool,
    /// The output starts a context group (needs a `--` after an earlier one).
    grouped: bool,
    /// An error message for stderr, after `grep: `.
    error: Option<String>,
    /// Notes for stderr (binary file matches), after the output.
    notes: Vec<String>,
}

impl FileResult {
    fn error(message: String) -> FileResult {
        FileResult {
            out: Vec::new(),
            matched: false,
            grouped: false,
            error: Some(message),
            notes: Vec::new(),
        }
    }
}

/// GNU grep's wording of a file error.
fn error_message(file: &str, error: &io::Error) -> String {
    let message = match error.kind() {
        io::ErrorKind::NotFound => "No such file or directory".to_owned(),
        io::ErrorKind::PermissionDenied => "Permission denied".to_owned(),
        _ => error.to_string(),
    };
    format!("{file}: {message}")
}

impl<W: Write> Run<'_, W> {
    fn walk(&mut self, root: &str) {
        let mut builder = ignore::WalkBuilder::new(root);
        builder
            .hidden(self.o.skip_hidden)
            .git_ignore(!self.o.no_ignore)
            .git_global(false)
            .git_exclude(false)
            // rg also reads .ignore and .rgignore; grep only .gitignore.
            .ignore(self.o.skip_hidden && !self.o.no_ignore)
            .parents(!self.o.no_ignore)
            .require_git(false)
            .follow_links(self.o.dereference)
            .sort_by_file_name(Ord::cmp);
        if let Some(overrides) = &self.o.overrides {
            builder.overrides(overrides.clone());
        }
        if let Some(types) = &self.o.types {
            builder.types(types.clone());
        }
        let exclude_dir = self.o.exclude_dir.clone();
        let skip_vcs = !self.o.keep_vcs_dirs;
        builder.filter_entry(move |entry| {
            let name = entry.file_name().to_string_lossy();
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            !(is_dir
                && entry.depth() > 0
                && ((skip_vcs && VCS_DIRS.contains(&name.as_ref()))
                    || exclude_dir.iter().any(|g| wavesh_glob::fnmatch(g, &name))))
        });
        let o = self.o;
        let matcher = self.matcher;
        let show_names = self.show_names;
        let stop = std::sync::atomic::AtomicBool::new(false);
        // Files travel in batches: one hand-over per file costs more than a small search.
        const BATCH: usize = 32;
        let (work_tx, work_rx) = std::sync::mpsc::sync_channel::<Vec<(usize, Work)>>(16);
        let work_rx = std::sync::Mutex::new(work_rx);
        let (done_tx, done_rx) = std::sync::mpsc::channel::<Vec<(usize, FileResult)>>();
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
        std::thread::scope(|scope| {
            // Workers read and search; the walk stays in order on this thread's helper
            // and results are printed in walk order, so output is deterministic.
            for _ in 0..workers {
                let done_tx = done_tx.clone();
                let (work_rx, stop) = (&work_rx, &stop);
                scope.spawn(move || {
                    loop {
                        let next = work_rx.lock().map(|rx| rx.recv());
                        let Ok(Ok(batch)) = next else { return };
                        if stop.load(std::sync::atomic::Ordering::Relaxed) {
                            continue;
                        }
                        let results = batch
                            .into_iter()
                            .map(|(index, work)| {
                                let result = match work {
                                    Ok((path, shown)) => {
                                        search_file(o, matcher, show_names, &path, &shown)
                                    }
                                    Err(message) => FileResult::error(message),
                                };
                                (index, result)
                            })
                            .collect();
                        if done_tx.send(results).is_err() {
                            return;
                        }
                    }
                });
            }
            drop(done_tx);
            let globs = &o.file_globs;
            let output = if self.checks_output() {
                self.output_file
            } else {
                None
            };
            let stop = &stop;
            scope.spawn(move || {
                let mut index = 0;
                let mut batch = Vec::with_capacity(BATCH);
                let mut push = |item: (usize, Work)| {
                    batch.push(item);
                    batch.len() < BATCH
                        || work_tx
                            .send(std::mem::replace(&mut batch, Vec::with_capacity(BATCH)))
                            .is_ok()
                };
                for entry in builder.build() {
                    if stop.load(std::sync::atomic::Ordering::Relaxed) {
                        break;
                    }
                    let entry = match entry {
                        Ok(entry) => entry,
                        Err(error) => {
                            // Reported in walk order, like a file's output.
                            if !push((index, Err(walk_error(&error)))) {
                                break;
                            }
                            index += 1;
                            continue;
                        }
                    };
                    if !entry.file_type().is_some_and(|t| t.is_file()) {
                        continue;
                    }
                    let name = entry.file_name().to_string_lossy();
                    if !file_selected(globs, &[&name]) {
                        continue;
                    }
                    let path = entry.path().to_string_lossy();
                    // Paths without "./" (SEARCH-1): shorter for the model, the same as
                    // `grep -r x`.
                    let shown = path.strip_prefix("./").unwrap_or(&path).to_owned();
                    if is_same_file(&entry, output) {
                        let message = format!("{shown}: input file is also the output");
                        if !push((index, Err(message))) {
                            break;
                        }
                        index += 1;
                        continue;
                    }
                    if !push((index, Ok((entry.into_path(), shown)))) {
                        break;
                    }
                    index += 1;
                }
                if !batch.is_empty() {
                    let _ = work_tx.send(batch);
                }
            });
            let mut pending = std::collections::BTreeMap::new();
            let mut next = 0;
            for (index, result) in done_rx.into_iter().flatten() {
                pending.insert(index, result);
                while let Some(result) = pending.remove(&next) {
                    next += 1;
                    if (self.o.quiet && self.matched_any) || self.out.failed() {
                        continue;
                    }
                    self.take(result);
                    if (self.o.quiet && self.matched_any) || self.out.failed() {
                        stop.store(true, std::sync::atomic::Ordering::Relaxed);
                    }
                }
            }
        });
    }

    /// Prints a worker's result for one file.
    fn take(&mut self, result: FileResult) {
        if let Some(message) = result.error {
            self.error = true;
            if !self.o.no_messages {
                eprintln_grep(&message);
            }
            return;
        }
        if result.grouped && self.printed_group {
            self.group_separator();
        }
        self.out.put(&result.out);
        self.matched_any |= result.matched;
        self.printed_group |= result.grouped;
        self.notes.extend(result.notes);
        self.print_notes();
    }
}

/// GNU's error prefix on every platform (SEARCH-9).
#[expect(clippy::print_stderr, reason = "grep's own error output")]
fn eprintln_grep(message: &str) {
    let program = PROGRAM.get().copied().unwrap_or("grep");
    eprintln!("{program}: {message}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_1_an_absent_locale_is_the_c_locale_as_in_glibc() {
        let dir = std::env::temp_dir().join(format!("wavesh-locales-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("de_DE.utf8")).unwrap();
        std::fs::write(dir.join("de_DE.utf8/LC_CTYPE"), "").unwrap();
        // A locale-archive as glibc lays it out: magic, serial, name hash, then the string
        // table's offset and length.
        let strings = b"en_US.utf8\0ja_JP.eucjp\0";
        let mut archive = Vec::new();
        for word in [
            0xde02_0109u32,
            1,
            0,
            0,
            0,
            64,
            strings.len() as u32,
            64,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
        ] {
            archive.extend_from_slice(&word.to_ne_bytes());
        }
        archive.extend_from_slice(strings);
        std::fs::write(dir.join("locale-archive"), archive).unwrap();
        for (name, expected) in [
            ("en_US.UTF-8", Locale::Utf8),
            ("de_DE.UTF-8", Locale::Utf8),
            ("C.UTF-8", Locale::Utf8),
            ("ja_JP.eucJP", Locale::Other("ja_JP.eucJP".to_owned())),
            ("fr_FR.UTF-8", Locale::C),
            ("zh_CN", Locale::C),
            ("POSIX", Locale::C),
        ] {
            assert_eq!(classify_locale(name, &dir), expected, "{name}");
        }
        // Where glibc's directory is not there, the name alone decides.
        let nowhere = dir.join("absent");
        assert_eq!(classify_locale("fr_FR.UTF-8", &nowhere), Locale::Utf8);
        assert_eq!(
            classify_locale("zh_CN", &nowhere),
            Locale::Other("zh_CN".to_owned())
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
