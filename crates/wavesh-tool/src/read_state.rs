//! Bash reads count as reads (READ-1), and formatters that rewrite files the model read
//! make it read them again (READ-2). The host owns the read-file state; wavesh sees it
//! through [`ReadFileState`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use wavesh_parse::{Analysis, Connector, SimpleCommand};

/// Files larger than this are not recorded (READ-1).
pub const MAX_RECORDED_FILE: u64 = 10 * 1024 * 1024;

/// What the host knows about one file the model read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadRecord {
    /// The file's modification time when it was read.
    pub modified: SystemTime,
    /// The lines read, 1-based and inclusive, or `None` for the whole file.
    pub lines: Option<(u64, u64)>,
    /// Only part of the file was seen (never set for Bash reads, READ-1).
    pub partial: bool,
}

/// The host's read-file state.
pub trait ReadFileState: Send + Sync {
    /// The record of `path`, if it was read.
    fn lookup(&self, path: &Path) -> Option<ReadRecord>;
    /// Records a read of `path`.
    fn record(&self, path: &Path, record: ReadRecord);
    /// Every recorded file.
    fn list(&self) -> Vec<(PathBuf, ReadRecord)>;
}

/// An in-memory read-file state (for `wavesh mcp`).
#[derive(Debug, Default)]
pub struct MemoryReadState {
    files: Mutex<HashMap<PathBuf, ReadRecord>>,
}

impl ReadFileState for MemoryReadState {
    fn lookup(&self, path: &Path) -> Option<ReadRecord> {
        self.files
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(path)
            .copied()
    }

    fn record(&self, path: &Path, record: ReadRecord) {
        self.files
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(path.to_path_buf(), record);
    }

    fn list(&self) -> Vec<(PathBuf, ReadRecord)> {
        self.files
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .map(|(path, record)| (path.clone(), *record))
            .collect()
    }
}

/// What a recognised read covers.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Range {
    Whole,
    First(u64),
    Last(u64),
    Lines(u64, u64),
}

/// A read the command did, by file operand.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Read {
    file: String,
    range: Range,
}

fn ignorable(command: &SimpleCommand) -> bool {
    matches!(
        command.args().first().copied(),
        Some("echo" | "printf" | "true" | ":")
    )
}

/// The count of `-n N`, `-nN`, `-N` or `--lines=N`; 10 when absent.
fn count_and_file(args: &[&str]) -> Option<(u64, String)> {
    let (count, rest): (u64, &[&str]) = match args {
        ["-n", n, rest @ ..] => (n.parse().ok()?, rest),
        [flag, rest @ ..] if flag.starts_with("--lines=") => {
            (flag["--lines=".len()..].parse().ok()?, rest)
        }
        [flag, rest @ ..] if flag.starts_with("-n") => (flag[2..].parse().ok()?, rest),
        [flag, rest @ ..]
            if flag.starts_with('-')
                && flag.len() > 1
                && flag[1..].chars().all(|c| c.is_ascii_digit()) =>
        {
            (flag[1..].parse().ok()?, rest)
        }
        rest => (10, rest),
    };
    match rest {
        [file] if !file.starts_with('-') => Some((count, (*file).to_owned())),
        _ => None,
    }
}

/// `N,Mp` or `Np`.
fn sed_lines(script: &str) -> Option<(u64, u64)> {
    let body = script.strip_suffix('p')?;
    match body.split_once(',') {
        Some((start, end)) => Some((start.parse().ok()?, end.parse().ok()?)),
        None => {
            let line = body.parse().ok()?;
            Some((line, line))
        }
    }
}

fn recognise(command: &SimpleCommand, lone: bool) -> Option<Read> {
    let args = command.args();
    let (name, rest) = args.split_first()?;
    match (*name, rest) {
        ("cat", [file]) | ("cat", ["-n", file]) if !file.starts_with('-') => Some(Read {
            file: (*file).to_owned(),
            range: Range::Whole,
        }),
        ("head", rest) => count_and_file(rest).map(|(n, file)| Read {
            file,
            range: Range::First(n),
        }),
        ("tail", rest) => count_and_file(rest).map(|(n, file)| Read {
            file,
            range: Range::Last(n),
        }),
        ("sed", ["-n", script, file]) if !file.starts_with('-') => {
            sed_lines(script).map(|(a, b)| Read {
                file: (*file).to_owned(),
                range: Range::Lines(a, b),
            })
        }
        ("grep", [pattern, file])
            if lone && !pattern.starts_with('-') && !file.starts_with('-') =>
        {
            Some(Read {
                file: (*file).to_owned(),
                range: Range::Whole,
            })
        }
        _ => None,
    }
}

/// READ-1: the reads of a command that ran in the foreground, exited 0 and was not
/// truncated. Empty when anything in it is not a recognised read.
fn reads(analysis: &Analysis) -> Vec<Read> {
    if !analysis.is_permission_safe() {
        return Vec::new();
    }
    let has_pipe_or_redirect = analysis.commands.iter().any(|c| {
        matches!(c.connector, Connector::Pipe | Connector::PipeBoth) || !c.redirects.is_empty()
    });
    if has_pipe_or_redirect {
        return Vec::new();
    }
    let readers: Vec<&SimpleCommand> = analysis.commands.iter().filter(|c| !ignorable(c)).collect();
    let lone = readers.len() == 1;
    let mut found = Vec::new();
    for command in readers {
        match recognise(command, lone) {
            Some(read) => found.push(read),
            None => return Vec::new(),
        }
    }
    found
}

fn line_count(path: &Path) -> Option<u64> {
    let bytes = std::fs::read(path).ok()?;
    let newlines = bytes.iter().filter(|b| **b == b'\n').count() as u64;
    Some(if bytes.last().is_some_and(|b| *b != b'\n') {
        newlines + 1
    } else {
        newlines
    })
}

/// Records the reads of a successful foreground command (READ-1).
pub fn record_reads(analysis: &Analysis, cwd: &Path, state: &dyn ReadFileState) {
    for read in reads(analysis) {
        // Relative to the command's directory, lexically normalised.
        let path = wavesh_exec::lexical_join(cwd, Path::new(&read.file));
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if !meta.is_file() || meta.len() > MAX_RECORDED_FILE || state.lookup(&path).is_some() {
            continue;
        }
        let lines = match read.range {
            Range::Whole => None,
            Range::First(n) => Some((1, n.max(1))),
            Range::Lines(a, b) => Some((a, b.max(a))),
            Range::Last(n) => {
                let total = line_count(&path).unwrap_or(0);
                Some((total.saturating_sub(n) + 1, total.max(1)))
            }
        };
        let Ok(modified) = meta.modified() else {
            continue;
        };
        state.record(
            &path,
            ReadRecord {
                modified,
                lines,
                partial: false,
            },
        );
    }
}

/// The 19 markers of a command that may rewrite files in place (READ-2).
pub const FORMATTER_MARKERS: &[&str] = &[
    "--write",
    "--fix",
    "--in-place",
    "sed -i",
    "black",
    "isort",
    "autopep8",
    "yapf",
    "ruff format",
    "rustfmt",
    "cargo fmt",
    "go fmt",
    "gofmt -w",
    "goimports -w",
    "terraform fmt",
    "clang-format -i",
    "shfmt -w",
    "swiftformat",
    "rubocop -a",
];

/// Whether a command holds one of the formatter markers (READ-2).
pub fn may_rewrite(command: &str) -> bool {
    FORMATTER_MARKERS
        .iter()
        .any(|marker| command.contains(marker))
}

/// The modification times of every read file, taken before a command that
/// [`may_rewrite`] runs. Comparing before and after does not depend on the file system's
/// timestamp granularity (Linux stamps files with a coarse clock that can lag the
/// time the command started).
pub fn snapshot(state: &dyn ReadFileState) -> Vec<(PathBuf, Option<SystemTime>, ReadRecord)> {
    state
        .list()
        .into_iter()
        .map(|(path, record)| {
            let modified = std::fs::metadata(&path).and_then(|m| m.modified()).ok();
            (path, modified, record)
        })
        .collect()
}

/// READ-2: the files of `before` that the command changed (modified during it and after
/// they were read), as the message for the model; at most 5 are named, all counted. The
/// host's read tool is named only when it has one (SCHEMA-7, MCP-4).
pub fn stale_message(
    before: &[(PathBuf, Option<SystemTime>, ReadRecord)],
    read_tool: Option<&str>,
) -> Option<String> {
    let mut changed: Vec<&PathBuf> = before
        .iter()
        .filter(|(path, was, record)| {
            std::fs::metadata(path)
                .and_then(|m| m.modified())
                .is_ok_and(|now| Some(now) != *was && now > record.modified)
        })
        .map(|(path, _, _)| path)
        .collect();
    if changed.is_empty() {
        return None;
    }
    changed.sort();
    let shown: Vec<String> = changed
        .iter()
        .take(5)
        .map(|p| p.display().to_string())
        .collect();
    let advice = read_tool.map_or_else(
        || "Read them again before editing.".to_owned(),
        |read| format!("Call {read} before editing."),
    );
    Some(format!(
        "[This command modified {} files you've previously read: {}. {advice}]",
        changed.len(),
        shown.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use wavesh_parse::{Dialect, analyze};

    fn reads_of(command: &str) -> Vec<Read> {
        reads(&analyze(command, Dialect::Bash))
    }

    #[test]
    fn read_1_recognised_commands() {
        assert_eq!(
            reads_of("cat a.txt"),
            vec![Read {
                file: "a.txt".into(),
                range: Range::Whole
            }]
        );
        assert_eq!(
            reads_of("cat -n a.txt"),
            vec![Read {
                file: "a.txt".into(),
                range: Range::Whole
            }]
        );
        assert_eq!(
            reads_of("head -n 5 b.txt"),
            vec![Read {
                file: "b.txt".into(),
                range: Range::First(5)
            }]
        );
        assert_eq!(
            reads_of("head b.txt"),
            vec![Read {
                file: "b.txt".into(),
                range: Range::First(10)
            }]
        );
        assert_eq!(
            reads_of("tail -20 b.txt"),
            vec![Read {
                file: "b.txt".into(),
                range: Range::Last(20)
            }]
        );
        assert_eq!(
            reads_of("sed -n '3,9p' c.txt"),
            vec![Read {
                file: "c.txt".into(),
                range: Range::Lines(3, 9)
            }]
        );
        assert_eq!(
            reads_of("sed -n '7p' c.txt"),
            vec![Read {
                file: "c.txt".into(),
                range: Range::Lines(7, 7)
            }]
        );
        assert_eq!(
            reads_of("grep foo d.txt"),
            vec![Read {
                file: "d.txt".into(),
                range: Range::Whole
            }]
        );
        assert_eq!(
            reads_of("echo ---; cat a.txt; echo ---; head -n 2 b.txt").len(),
            2
        );
    }

    #[test]
    fn read_1_anything_else_records_nothing() {
        for command in [
            "cat a.txt | head",
            "cat < a.txt",
            "cat a.txt > b",
            "ls; cat a.txt",
            "cat a.txt b.txt",
            "grep -n foo d.txt",
            "cat a.txt; grep x d.txt",
            "cat $F",
        ] {
            assert!(reads_of(command).is_empty(), "{command}");
        }
    }
}
