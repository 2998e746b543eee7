//! Reading Linux's `/proc/<pid>/stat`, for group liveness and the subreaper's tree walk.

/// The fields of one process's `stat` that wavesh uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stat {
    /// The state letter: `R`, `S`, `Z` (zombie), ...
    pub state: u8,
    /// The parent's pid.
    pub ppid: i32,
    /// The process group.
    pub pgrp: i32,
}

impl Stat {
    /// Exited but not reaped, or dead.
    pub fn is_zombie(self) -> bool {
        matches!(self.state, b'Z' | b'X' | b'x')
    }
}

/// Parses `pid (comm) state ppid pgrp ...`. The command name may hold spaces and
/// parentheses, so fields are counted from the last `)`.
pub(crate) fn parse(stat: &[u8]) -> Option<Stat> {
    let close = stat.iter().rposition(|b| *b == b')')?;
    let rest = std::str::from_utf8(stat.get(close + 1..)?).ok()?;
    let mut fields = rest.split_ascii_whitespace();
    let state = *fields.next()?.as_bytes().first()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some(Stat { state, ppid, pgrp })
}

/// Every process listed in `/proc` with its stat, or `None` when `/proc` cannot be read.
#[cfg(target_os = "linux")]
pub(crate) fn all() -> Option<impl Iterator<Item = (i32, Stat)>> {
    let entries = std::fs::read_dir("/proc").ok()?;
    Some(entries.filter_map(Result::ok).filter_map(|entry| {
        let pid = entry.file_name().to_str()?.parse::<i32>().ok()?;
        let stat = std::fs::read(entry.path().join("stat")).ok()?;
        Some((pid, parse(&stat)?))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_past_odd_names() {
        let stat = parse(b"77 (a) b) (c) R 1 42 42 0").unwrap();
        assert_eq!((stat.state, stat.ppid, stat.pgrp), (b'R', 1, 42));
        assert!(parse(b"77 (sleep) Z 1 42 42 0 -1").unwrap().is_zombie());
        assert_eq!(parse(b"garbage"), None);
        assert_eq!(parse(b"12 (x"), None);
    }
}
