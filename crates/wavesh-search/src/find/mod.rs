//! `find`: GNU find's expressions, walk and output (SEARCH-2), without `.gitignore`
//! (GNU semantics). Names are bytes from the directory to the output: a file name that is
//! not UTF-8 is matched and printed as it is. The walk is relative to open directories
//! (`openat`, `fstatat`), so a tree deeper than PATH_MAX is walked as GNU walks it.
//! Regular expressions are read in each of GNU's `-regextype` dialects as gnulib reads
//! them. What this implementation lacks (`-context`, `%Z`, `-D`, `-O`, `--help`,
//! `--version`) goes to the system `find` with the same arguments (SEARCH-5).

#[cfg(unix)]
mod date;
#[cfg(unix)]
mod parse;
#[cfg(unix)]
mod printf;
#[cfg(unix)]
mod sys;
#[cfg(unix)]
mod walk;

use std::ffi::OsString;

pub(crate) type Bytes = Vec<u8>;

/// What a `stat` says of a file.
#[cfg(unix)]
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Meta {
    pub(crate) dev: u64,
    pub(crate) ino: u64,
    pub(crate) mode: u32,
    pub(crate) nlink: u64,
    pub(crate) uid: u32,
    pub(crate) gid: u32,
    pub(crate) rdev: u64,
    pub(crate) size: i64,
    pub(crate) blocks: i64,
    pub(crate) atime: (i64, i64),
    pub(crate) mtime: (i64, i64),
    pub(crate) ctime: (i64, i64),
}

#[cfg(unix)]
pub(crate) const S_IFMT: u32 = 0o170_000;
#[cfg(unix)]
pub(crate) const S_IFDIR: u32 = 0o040_000;
#[cfg(unix)]
pub(crate) const S_IFLNK: u32 = 0o120_000;
#[cfg(unix)]
pub(crate) const S_IFREG: u32 = 0o100_000;

#[cfg(unix)]
impl Meta {
    pub(crate) fn is_dir(&self) -> bool {
        self.mode & S_IFMT == S_IFDIR
    }

    pub(crate) fn is_link(&self) -> bool {
        self.mode & S_IFMT == S_IFLNK
    }

    /// GNU's letter for the file's type (`-type`, `%y`).
    pub(crate) fn type_letter(&self) -> u8 {
        match self.mode & S_IFMT {
            S_IFDIR => b'd',
            S_IFREG => b'f',
            S_IFLNK => b'l',
            0o020_000 => b'c',
            0o060_000 => b'b',
            0o010_000 => b'p',
            0o140_000 => b's',
            _ => b'U',
        }
    }
}

/// GNU's quoting of a file name in a message (gnulib's `locale_quoting_style`):
/// typographic quotes in a UTF-8 locale, ASCII ones otherwise; control characters and
/// bytes that are not characters in the locale as C escapes, the closing quote escaped.
#[cfg(unix)]
pub(crate) fn quote(name: &[u8]) -> String {
    let utf8 = crate::grep::utf8_locale();
    let (open, close) = if utf8 {
        ("\u{2018}", "\u{2019}")
    } else {
        ("'", "'")
    };
    let mut out = String::from(open);
    let mut rest = name;
    while let Some(&b) = rest.first() {
        if rest.starts_with(close.as_bytes()) {
            out.push('\\');
            out.push_str(close);
            rest = &rest[close.len()..];
            continue;
        }
        let escape = match b {
            0x07 => Some("\\a"),
            0x08 => Some("\\b"),
            0x0c => Some("\\f"),
            b'\n' => Some("\\n"),
            b'\r' => Some("\\r"),
            b'\t' => Some("\\t"),
            0x0b => Some("\\v"),
            b'\\' => Some("\\\\"),
            _ => None,
        };
        if let Some(escape) = escape {
            out.push_str(escape);
            rest = &rest[1..];
            continue;
        }
        if b < 0x80 {
            if b.is_ascii_graphic() || b == b' ' {
                out.push(char::from(b));
            } else {
                out.push_str(&format!("\\{b:03o}"));
            }
            rest = &rest[1..];
            continue;
        }
        // A multibyte character in a UTF-8 locale, if it is one and printable.
        let len = match b {
            0xc2..=0xdf => 2,
            0xe0..=0xef => 3,
            0xf0..=0xf4 => 4,
            _ => 0,
        };
        let printable = utf8
            && len > 0
            && rest.len() >= len
            && std::str::from_utf8(&rest[..len])
                .ok()
                .and_then(|s| s.chars().next())
                .is_some_and(|c| !c.is_control());
        if printable {
            out.push_str(std::str::from_utf8(&rest[..len]).unwrap_or_default());
            rest = &rest[len..];
        } else {
            out.push_str(&format!("\\{b:03o}"));
            rest = &rest[1..];
        }
    }
    out.push_str(close);
    out
}

/// An argument or a name as an `OsStr`.
#[cfg(unix)]
pub(crate) fn os(bytes: &[u8]) -> &std::ffi::OsStr {
    std::os::unix::ffi::OsStrExt::from_bytes(bytes)
}

/// GNU find refuses `-execdir` and `-okdir` while PATH holds the current directory (an
/// empty entry or `.`) or a relative one: a command there could be run from any
/// directory the search visits. The message, or `None` when PATH is safe.
fn unsafe_path_for_execdir(args: &[Bytes]) -> Option<String> {
    if !args.iter().any(|a| a == b"-execdir" || a == b"-okdir") {
        return None;
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let path = path.as_encoded_bytes();
    let (open, close) = quotes();
    for entry in path.split(|&b| b == b':') {
        if entry.is_empty() || entry == b"." {
            return Some(
                "The current directory is included in the PATH environment variable, which \
                 is insecure in combination with the -execdir action of find.  Please remove \
                 the current directory from your $PATH (that is, remove \".\", doubled \
                 colons, or leading or trailing colons)"
                    .to_owned(),
            );
        }
        if entry[0] != b'/' {
            return Some(format!(
                "The relative path {open}{}{close} is included in the PATH environment \
                 variable, which is insecure in combination with the -execdir action of find.  \
                 Please remove that entry from $PATH",
                String::from_utf8_lossy(entry)
            ));
        }
    }
    None
}

/// GNU's quotes around a name: typographic in a UTF-8 locale, ASCII otherwise.
pub(crate) fn quotes() -> (&'static str, &'static str) {
    if crate::grep::utf8_locale() {
        ("\u{2018}", "\u{2019}")
    } else {
        ("'", "'")
    }
}

/// `find ARGS`; returns the exit code.
pub fn find_main(args: &[OsString]) -> i32 {
    let bytes: Vec<Bytes> = args.iter().map(|a| a.as_encoded_bytes().to_vec()).collect();
    if let Some(message) = unsafe_path_for_execdir(&bytes) {
        find_error(&message);
        return 1;
    }
    let strict = std::env::var_os(crate::STRICT_ENV).is_some();
    #[cfg(unix)]
    {
        if parse::supported(&bytes) {
            return walk::run(&bytes);
        }
    }
    if strict {
        find_error("not supported by wavesh's find; the system find would run");
        return 1;
    }
    crate::system_command("find", args)
}

#[expect(clippy::print_stderr, reason = "find's own error output")]
pub(crate) fn find_error(message: &str) {
    eprintln!("find: {message}");
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<Bytes> {
        list.iter().map(|s| s.as_bytes().to_vec()).collect()
    }

    #[cfg(unix)]
    #[test]
    fn search_5_what_is_not_implemented_goes_to_the_system_find() {
        assert!(parse::supported(&args(&[
            ".",
            "-regextype",
            "egrep",
            "-regex",
            "x"
        ])));
        assert!(!parse::supported(&args(&[".", "-context", "x"])));
        assert!(!parse::supported(&args(&[".", "-printf", "%Z\\n"])));
        assert!(parse::supported(&args(&[".", "-newermt", "2020-01-01"])));
        assert!(parse::supported(&args(&[".", "-used", "-fstype"])));
        assert!(!parse::supported(&args(&["--version"])));
        assert!(parse::supported(&args(&["-files0-from", "list"])));
        assert!(parse::supported(&args(&[".", "-name", "-context"])));
        assert!(parse::supported(&args(&[
            ".", "-exec", "echo", "-context", "{}", ";", "-print"
        ])));
        assert!(parse::supported(&args(&[
            ".",
            "-printf",
            "%-10p %+03d \\18\\c"
        ])));
    }

    #[cfg(unix)]
    #[test]
    fn messages_quote_names_as_gnu() {
        // The C locale in tests unless LC_ALL says otherwise: check both shapes.
        let q = quote(b"a\nb\\c\xff'd");
        assert!(
            q == "'a\\nb\\\\c\\377\\'d'" || q == "\u{2018}a\\nb\\\\c\\377'd\u{2019}",
            "{q}"
        );
    }
}
