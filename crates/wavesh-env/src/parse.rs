//! Reading the probe's output (ENV-2): NUL-separated `env -0` between two markers, or,
//! when `env -0` is unavailable, `env`'s lines — where a value with a newline cannot be
//! told from the next entry, so such keys are dropped.

/// Variables the probe itself sets or that describe the probe's own shell (ENV-4).
pub const DROPPED: &[&str] = &[
    "PWD",
    "OLDPWD",
    "SHLVL",
    "_",
    "DISABLE_AUTO_UPDATE",
    "ZSH_DISABLE_COMPFIX",
    "SSH_ASKPASS_REQUIRE",
    "DBUS_SESSION_BUS_ADDRESS",
];

/// What the probe printed, parsed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Parsed {
    /// The variables, in the order printed, without [`DROPPED`].
    pub vars: Vec<(String, String)>,
    /// `env -0` failed and the line fallback was used.
    pub line_fallback: bool,
    /// Keys dropped because their value may span lines (line fallback only).
    pub dropped_multiline: Vec<String>,
    /// The end marker was seen: the output is complete.
    pub complete: bool,
}

/// Parses the bytes the probe wrote to stdout.
pub fn parse(output: &[u8], start: &str, end: &str) -> Option<Parsed> {
    let start_at = find(output, start.as_bytes())? + start.len();
    let body = output.get(start_at..)?;
    let body = body.strip_prefix(b"\n").unwrap_or(body);
    match find(body, end.as_bytes()) {
        // `env -0 && echo end`: the NUL-separated block comes right before the end marker.
        Some(end_at) if body[..end_at].contains(&0) || end_at == 0 => Some(Parsed {
            vars: nul_separated(&body[..end_at]),
            complete: true,
            ..Parsed::default()
        }),
        Some(end_at) => Some(lines(&body[..end_at], true)),
        // No end marker: `env -0` failed and `env` ran instead (or the output was cut).
        None => Some(lines(body, false)),
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

fn keep(key: &str) -> bool {
    !key.is_empty()
        && !DROPPED.contains(&key)
        && !key.starts_with(|c: char| c.is_ascii_digit())
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn nul_separated(block: &[u8]) -> Vec<(String, String)> {
    block
        .split(|b| *b == 0)
        .filter_map(|entry| {
            let entry = String::from_utf8_lossy(entry);
            let entry = entry.trim_start_matches('\n');
            let (key, value) = entry.split_once('=')?;
            keep(key).then(|| (key.to_owned(), value.to_owned()))
        })
        .collect()
}

fn lines(block: &[u8], complete: bool) -> Parsed {
    let text = String::from_utf8_lossy(block);
    let mut vars: Vec<(String, String)> = Vec::new();
    let mut dropped = Vec::new();
    for line in text.lines() {
        match line.split_once('=') {
            Some((key, value)) if keep(key) || DROPPED.contains(&key) => {
                if keep(key) {
                    vars.push((key.to_owned(), value.to_owned()));
                }
            }
            _ => {
                // A continuation of the previous value: that value is not known whole.
                if let Some((key, _)) = vars.pop() {
                    dropped.push(key);
                }
            }
        }
    }
    dropped.dedup();
    Parsed {
        vars,
        line_fallback: true,
        dropped_multiline: dropped,
        complete,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_2_nul_separated() {
        let output =
            b"motd noise\nSTART\nA=1\0PATH=/x:/y\0MULTI=a\nb\0PWD=/tmp\0_=/usr/bin/env\0END\n";
        let parsed = parse(output, "START", "END").unwrap();
        assert_eq!(
            parsed.vars,
            vec![
                ("A".into(), "1".into()),
                ("PATH".into(), "/x:/y".into()),
                ("MULTI".into(), "a\nb".into())
            ]
        );
        assert!(!parsed.line_fallback && parsed.complete);
    }

    #[test]
    fn env_2_line_fallback_drops_multiline_values() {
        let output = b"START\nA=1\nMULTI=first\nsecond line\nPATH=/x\nSHLVL=2\n";
        let parsed = parse(output, "START", "END").unwrap();
        assert_eq!(
            parsed.vars,
            vec![("A".into(), "1".into()), ("PATH".into(), "/x".into())]
        );
        assert!(parsed.line_fallback);
        assert_eq!(parsed.dropped_multiline, vec!["MULTI".to_owned()]);
    }

    #[test]
    fn env_2_no_start_marker_is_nothing() {
        assert_eq!(parse(b"garbage", "START", "END"), None);
    }
}

/// ENV-8 (Windows): the PATH printed by Git Bash's `cygpath -pw "$PATH"` between the
/// markers, already in native form (`C:\...;D:\...`). Only PATH is adopted there.
pub fn parse_cygpath_path(output: &[u8], start: &str, end: &str) -> Option<String> {
    let text = String::from_utf8_lossy(output);
    let after = &text[text.find(start)? + start.len()..];
    let body = &after[..after.find(end)?];
    let path = body.trim_matches(['\r', '\n']).trim();
    (!path.is_empty()).then(|| path.to_owned())
}

#[cfg(test)]
mod cygpath_tests {
    use super::*;

    #[test]
    fn env_8_cygpath_output() {
        let output = b"motd\r\nSTART\r\nC:\\Program Files\\Git\\mingw64\\bin;C:\\Users\\Jos\xc3\xa9\\bin;C:\\Windows\r\nEND\r\n";
        assert_eq!(
            parse_cygpath_path(output, "START", "END").as_deref(),
            Some("C:\\Program Files\\Git\\mingw64\\bin;C:\\Users\\José\\bin;C:\\Windows")
        );
        assert_eq!(parse_cygpath_path(b"START\nEND\n", "START", "END"), None);
        assert_eq!(parse_cygpath_path(b"no markers", "START", "END"), None);
    }
}
