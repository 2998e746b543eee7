//! grep's command line as GNU reads it, and the locale it matches in.

use super::*;

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
pub(super) fn directories(o: &mut Options, action: &str) -> Result<(), Unsupported> {
    match action {
        "read" => o.directories = Some(Directories::Read),
        "skip" => o.directories = Some(Directories::Skip),
        "recurse" => o.recursive = true,
        other => return Err(Unsupported(format!("-d {other}"))),
    }
    Ok(())
}

/// Applies `-D ACTION`.
pub(super) fn devices(o: &mut Options, action: &str) -> Result<(), Unsupported> {
    match action {
        "read" => o.skip_devices = false,
        "skip" => o.skip_devices = true,
        other => return Err(Unsupported(format!("-D {other}"))),
    }
    Ok(())
}

/// GNU grep 3.8's long options, for resolving abbreviations.
pub(super) const LONG_OPTIONS: &[&str] = &[
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
pub(super) fn long_option(given: &str) -> Option<&'static str> {
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

pub(super) fn number(value: &str, flag: &str) -> Result<u64, Unsupported> {
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
pub(super) fn push_patterns(text: &str, file: Option<&str>, o: &mut Options) {
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
pub(super) fn read_pattern_file(path: &str, o: &mut Options) -> Result<(), Unsupported> {
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
pub(super) fn classify_locale(value: &str, locale_dir: &Path) -> Locale {
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
pub(super) fn locale_installed(name: &str, locale_dir: &Path) -> Option<bool> {
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
pub(super) fn archive_names(archive: &Path) -> Option<Vec<u8>> {
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
