//! The shell of a session, fixed at creation and persisted so a resumed session uses the
//! same one (SHELL-3).
//!
//! Records are JSON lines in `<state dir>/runtime.jsonl`, keyed
//! `<session-id>:runtime:bash_shell_selection`; the latest record of a key wins.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use wavesh_exec::{Shell, ShellKind};

/// How a session got its shell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShellSelection {
    /// A new session: the shell was chosen now.
    New,
    /// A resumed session whose recorded shell is still executable.
    Restored,
    /// The recorded shell is gone; the current candidate is used instead.
    Fallback {
        /// The recorded shell.
        was: PathBuf,
    },
    /// The recorded shell is gone and there is no candidate: every command fails.
    Stale {
        /// The recorded shell.
        was: PathBuf,
    },
    /// No bash or zsh could be found, and the host asked for a session anyway
    /// (`SessionBuilder::answer_without_shell`): every command fails, saying why.
    Missing {
        /// Why none was found.
        why: String,
    },
}

impl ShellSelection {
    /// The word for hosts: `new`, `restored`, `fallback`, `stale`, `missing`.
    pub fn word(&self) -> &'static str {
        match self {
            ShellSelection::New => "new",
            ShellSelection::Restored => "restored",
            ShellSelection::Fallback { .. } => "fallback",
            ShellSelection::Stale { .. } => "stale",
            ShellSelection::Missing { .. } => "missing",
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct Record {
    key: String,
    shell: PathBuf,
    kind: String,
}

/// The record key of a session (SHELL-3).
pub fn record_key(session_id: &str) -> String {
    format!("{session_id}:runtime:bash_shell_selection")
}

fn file(state_dir: &Path) -> PathBuf {
    state_dir.join("runtime.jsonl")
}

/// The latest recorded shell of a session, if any.
pub fn recorded(state_dir: &Path, session_id: &str) -> Option<PathBuf> {
    let key = record_key(session_id);
    let text = std::fs::read_to_string(file(state_dir)).ok()?;
    text.lines()
        .rev()
        .filter_map(|line| serde_json::from_str::<Record>(line).ok())
        .find(|record| record.key == key)
        .map(|record| record.shell)
}

/// Appends the session's shell choice.
pub fn record(state_dir: &Path, session_id: &str, shell: &Shell) -> std::io::Result<()> {
    std::fs::create_dir_all(state_dir)?;
    let record = Record {
        key: record_key(session_id),
        shell: shell.path().to_path_buf(),
        kind: shell.kind().name().to_owned(),
    };
    let line = serde_json::to_string(&record).map_err(std::io::Error::other)?;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file(state_dir))?;
    writeln!(file, "{line}")
}

/// SHELL-3 on resume: `restored` if the recorded path is still executable, else
/// `fallback` to `candidate` when there is one, else `stale`. A recorded `cmd.exe` is
/// never restored.
pub fn resume(
    recorded: &Path,
    candidate: Option<&Shell>,
    executable: impl Fn(&Path) -> bool,
) -> (ShellSelection, Option<Shell>) {
    let name = recorded.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let kind = ShellKind::from_file_name(name);
    if let Some(kind) = kind
        && executable(recorded)
    {
        return (ShellSelection::Restored, Some(Shell::new(recorded, kind)));
    }
    match candidate {
        Some(shell) => (
            ShellSelection::Fallback {
                was: recorded.to_path_buf(),
            },
            Some(shell.clone()),
        ),
        None => (
            ShellSelection::Stale {
                was: recorded.to_path_buf(),
            },
            None,
        ),
    }
}

/// The note the model gets in the first result after a fallback (SHELL-3).
pub fn fallback_note(was: &Path, now: &Path) -> String {
    format!(
        "Note: the shell changed since this session started (was {}, now {}).",
        was.display(),
        now.display()
    )
}

/// The default state directory: `$XDG_STATE_HOME/wavesh`, else `~/.local/state/wavesh`.
pub fn default_state_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(|dir| PathBuf::from(dir).join("wavesh"))
        .or_else(|| {
            std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".local/state/wavesh"))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_3_resume_states() {
        let bash = Shell::new("/usr/bin/bash", ShellKind::Bash);
        let (state, shell) = resume(Path::new("/bin/zsh"), Some(&bash), |_| true);
        assert_eq!(state, ShellSelection::Restored);
        assert_eq!(shell.unwrap().kind(), ShellKind::Zsh);
        let (state, shell) = resume(Path::new("/bin/zsh"), Some(&bash), |_| false);
        assert_eq!(
            state,
            ShellSelection::Fallback {
                was: "/bin/zsh".into()
            }
        );
        assert_eq!(shell, Some(bash.clone()));
        let (state, shell) = resume(Path::new("/bin/zsh"), None, |_| false);
        assert_eq!(
            state,
            ShellSelection::Stale {
                was: "/bin/zsh".into()
            }
        );
        assert!(shell.is_none());
        let (state, _) = resume(
            Path::new("C:\\Windows\\System32\\cmd.exe"),
            Some(&bash),
            |_| true,
        );
        assert_eq!(state.word(), "fallback", "cmd.exe is never restored");
    }

    #[test]
    fn shell_3_records_latest_wins() {
        let dir = std::env::temp_dir().join(format!("wavesh-shell-state-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(recorded(&dir, "s1"), None);
        record(&dir, "s1", &Shell::new("/bin/bash", ShellKind::Bash)).unwrap();
        record(&dir, "s2", &Shell::new("/bin/zsh", ShellKind::Zsh)).unwrap();
        record(&dir, "s1", &Shell::new("/usr/bin/zsh", ShellKind::Zsh)).unwrap();
        assert_eq!(recorded(&dir, "s1"), Some(PathBuf::from("/usr/bin/zsh")));
        assert_eq!(recorded(&dir, "s2"), Some(PathBuf::from("/bin/zsh")));
        let text = std::fs::read_to_string(dir.join("runtime.jsonl")).unwrap();
        assert!(text.contains("\"s1:runtime:bash_shell_selection\""));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
