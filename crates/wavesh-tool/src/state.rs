//! A session's shared state: the workspace and its directory, the executor, the rules,
//! the tasks of each agent (`Owner`) and how commands are started. What the tool calls
//! ([`crate::agent`]) and the session's API ([`crate::session`]) both stand on.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};

use wavesh_exec::{Executor, Signaller, Spawner, TaskManager};

use crate::config::ToolConfig;
use crate::permissions::{Call, Permissions, Prepared};
use crate::read_state::ReadFileState;
use crate::render;
use crate::shell_state::ShellSelection;

/// How a session starts and ends its commands' processes.
pub(crate) type Processes = (Arc<dyn Spawner>, Arc<dyn Signaller>, ProcessPath);

/// How this session's commands are started and their trees held (PROC-1), so a host
/// and `wavesh doctor` can say which path runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProcessPath {
    /// The host's own spawner.
    Host,
    /// The per-session supervisor: a subreaper per command, cgroups where delegated.
    Supervisor,
    /// Direct children, tracked by process group only: a process that leaves its group
    /// (`setsid`, a daemon) can outlive the session. `why` says why the supervisor does
    /// not run, when one was asked for and could not start.
    Direct {
        /// Why the supervisor could not start, if one was asked for.
        why: Option<String>,
    },
}

impl std::fmt::Display for ProcessPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProcessPath::Host => f.write_str("the host's spawner"),
            ProcessPath::Supervisor => f.write_str("the session supervisor"),
            ProcessPath::Direct { why: None } => {
                f.write_str("direct children, tracked by process group only")
            }
            ProcessPath::Direct { why: Some(why) } => write!(
                f,
                "direct children, tracked by process group only (the supervisor could not start: {why})"
            ),
        }
    }
}
/// The session's network and, when it could not be had, the note saying so.
pub(crate) type NetworkStart = (Option<wavesh_exec::net::SessionNetwork>, Option<String>);

/// A directory as given and as resolved, for comparisons (CWD-4).
#[derive(Debug, Clone)]
pub(crate) struct Dir {
    pub(crate) literal: PathBuf,
    pub(crate) real: Option<PathBuf>,
}

impl Dir {
    pub(crate) fn new(path: PathBuf) -> Dir {
        let real = std::fs::canonicalize(&path).ok();
        Dir {
            literal: path,
            real,
        }
    }

    pub(crate) fn contains(&self, candidates: &[PathBuf]) -> bool {
        let bases = std::iter::once(&self.literal).chain(self.real.as_ref());
        bases
            .map(|base| normalize(base))
            .any(|base| candidates.iter().any(|c| c.starts_with(&base)))
    }
}

/// macOS reaches `/tmp` and `/var` through `/private`: compare without it (CWD-4).
pub fn normalize_private(path: &Path) -> PathBuf {
    for top in ["tmp", "var"] {
        if let Ok(rest) = path.strip_prefix(Path::new("/private").join(top)) {
            return Path::new("/").join(top).join(rest);
        }
    }
    path.to_path_buf()
}

pub(crate) fn normalize(path: &Path) -> PathBuf {
    if cfg!(target_os = "macos") {
        normalize_private(path)
    } else {
        path.to_path_buf()
    }
}

pub(crate) fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .map(PathBuf::from)
}

pub(crate) fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// What a session and its subagents share.
pub(crate) struct Shared {
    pub(crate) root: Dir,
    pub(crate) additional: RwLock<Vec<Dir>>,
    pub(crate) cwd: Mutex<PathBuf>,
    pub(crate) executor: Executor,
    pub(crate) config: ToolConfig,
    /// Task ids of released subagents, so a late TaskStop says "expired" (TASK-4).
    pub(crate) expired: Mutex<HashSet<String>>,
    /// The `description` of each background call, for its notification.
    pub(crate) descriptions: Mutex<HashMap<String, String>>,
    /// How the shell was chosen (SHELL-3).
    pub(crate) selection: ShellSelection,
    /// Claude Code settings keys ignored because they would loosen the sandbox from a
    /// file sandboxed commands may write (SBX-6), for the host to show.
    pub(crate) settings_notes: Vec<String>,
    /// A note for the next result (the shell fallback of SHELL-3, a supervisor that
    /// could not start), given once.
    pub(crate) pending_note: Mutex<Option<String>>,
    /// How commands are started (PROC-1).
    pub(crate) process_path: ProcessPath,
    /// The login-shell environment and how long the first command may wait for it.
    pub(crate) login_env: Option<(wavesh_env::ProbeHandle, std::time::Duration)>,
    /// The host's read-file state, if it has one (READ).
    pub(crate) read_state: Option<Arc<dyn ReadFileState>>,
    /// The rules and the approver (SBX-3); replaceable while the session runs.
    pub(crate) permissions: RwLock<Arc<Permissions>>,
    /// The home directory, for `~` in the policy.
    pub(crate) home: PathBuf,
}

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every guarded value here is replaced or extended in single steps; a panic elsewhere
    // cannot leave it half-written.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    /// Who approves calls in this session now (SBX-3).
    pub(crate) fn approver(&self) -> crate::permissions::Approver {
        self.permissions
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .approver
    }

    /// The analysis and permission decision of `command` run from `cwd`, made once
    /// for the call (SBX-3, PARSE).
    pub(crate) fn prepare(&self, command: &str, unsandboxed: bool, cwd: &Path) -> Prepared {
        let dialect = match self.executor.shell().kind() {
            wavesh_exec::ShellKind::Zsh => wavesh_parse::Dialect::Zsh,
            wavesh_exec::ShellKind::Bash => wavesh_parse::Dialect::Bash,
        };
        let permissions = Arc::clone(
            &self
                .permissions
                .read()
                .unwrap_or_else(PoisonError::into_inner),
        );
        permissions.prepare(
            &Call {
                command,
                unsandboxed,
                approved: false,
                cwd: cwd.to_path_buf(),
                dialect,
                home: self.home.clone(),
            },
            &self.config.sandbox,
        )
    }

    /// The workspace root and the additional directories: the writable roots at
    /// `workspace-write`.
    pub(crate) fn roots(&self) -> Vec<PathBuf> {
        std::iter::once(self.root.literal.clone())
            .chain(
                self.additional
                    .read()
                    .unwrap_or_else(PoisonError::into_inner)
                    .iter()
                    .map(|d| d.literal.clone()),
            )
            .collect()
    }

    /// The note pending for the next result, taken once.
    pub(crate) fn take_note(&self) -> Option<String> {
        lock(&self.pending_note).take()
    }

    /// The adopted login-shell environment (ENV-1: waits at most for the probe's
    /// bound, once; later calls find it done).
    pub(crate) async fn login_env(&self) -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
        let Some((handle, budget)) = &self.login_env else {
            return Vec::new();
        };
        match handle.wait(*budget).await {
            Some(env) => env
                .adoption
                .adopted
                .iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
            None => Vec::new(),
        }
    }

    pub(crate) fn cwd(&self) -> PathBuf {
        lock(&self.cwd).clone()
    }

    pub(crate) fn is_expired(&self, id: &str) -> bool {
        lock(&self.expired).contains(id)
    }

    pub(crate) fn remember_description(&self, id: &str, description: Option<&str>) {
        if let Some(description) = description.filter(|d| !d.trim().is_empty()) {
            lock(&self.descriptions).insert(id.to_owned(), description.to_owned());
        }
    }

    pub(crate) fn description(&self, id: &str) -> Option<String> {
        lock(&self.descriptions).get(id).cloned()
    }

    /// The directory a call starts in. A current directory that no longer exists falls
    /// back to the workspace root, with the reset note (CWD-6 never fails a call).
    pub(crate) fn start_dir(&self, subagent: bool, notes: &mut Vec<String>) -> PathBuf {
        let mut cwd = lock(&self.cwd);
        if cwd.is_dir() {
            return cwd.clone();
        }
        tracing::debug!(cwd = %cwd.display(), "the current directory is gone; using the workspace root");
        if !subagent {
            *cwd = self.root.literal.clone();
            notes.push(render::cwd_reset(&self.root.literal));
        }
        self.root.literal.clone()
    }

    /// CWD-2/3: keep a directory inside the workspace or an added directory; anything
    /// else sends the next command back to the workspace root.
    pub(crate) fn adopt_cwd(&self, dir: &Path) -> Option<String> {
        let mut candidates = vec![normalize(dir)];
        if let Ok(real) = std::fs::canonicalize(dir) {
            candidates.push(normalize(&real));
        }
        let allowed = self.root.contains(&candidates)
            || self
                .additional
                .read()
                .unwrap_or_else(PoisonError::into_inner)
                .iter()
                .any(|extra| extra.contains(&candidates));
        let mut cwd = lock(&self.cwd);
        if allowed {
            if *cwd == dir {
                return None;
            }
            *cwd = dir.to_path_buf();
            Some(render::cwd_changed(dir))
        } else {
            *cwd = self.root.literal.clone();
            Some(render::cwd_reset(&self.root.literal))
        }
    }
}

/// One owner of background tasks: the session itself or a subagent.
pub(crate) struct Owner {
    pub(crate) tasks: TaskManager,
    pub(crate) subagent: bool,
}

impl Owner {
    pub(crate) fn new(shared: &Shared, subagent: bool) -> Owner {
        Owner {
            tasks: TaskManager::new(shared.executor.signaller()),
            subagent,
        }
    }
}
