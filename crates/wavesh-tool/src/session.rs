//! The `Session` hosts embed: the workspace, the current directory across calls, and the
//! `Bash` tool on top of the executor.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use tokio_util::sync::CancellationToken;
use wavesh_exec::shell::{RealFiles, ShellEnv};
use wavesh_exec::{
    BackgroundReason, Backgrounded, Controls, DirectSpawner, Ending, ExecError, Executor, Finished,
    Mode, OnTimeout, Outcome, PrivateDir, PrivateDirError, ProgressSink, Request, Shell,
    ShellError, Signaller, Spawner, TaskManager, resolve_shell,
};

use crate::command_words::first_command_name;
use crate::config::ToolConfig;
use crate::input::{BashInput, InputError, parse_bash_input};
use crate::render::{self, ExitMeaning, ModelOutput};

/// What the host passes with each call.
#[derive(Clone, Default)]
pub struct CallContext {
    /// Cancelling aborts the command and ends its whole tree (EXEC-6).
    pub abort: CancellationToken,
    /// Progress events for the host's UI (EXEC-5); the model sees none of them.
    pub progress: Option<ProgressSink>,
    /// The call comes from a subagent: it starts in the session's directory, and its `cd`
    /// never persists (CWD-5).
    pub subagent: bool,
}

impl std::fmt::Debug for CallContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallContext")
            .field("aborted", &self.abort.is_cancelled())
            .field("subagent", &self.subagent)
            .finish_non_exhaustive()
    }
}

/// A running background task, as reported in a result (BG-1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskSnapshot {
    /// The task id.
    pub task_id: String,
    /// Always `running` when reported at start.
    pub status: &'static str,
    /// Start time, RFC 3339 in UTC.
    pub started_at: String,
    /// The shell's pid.
    pub pid: i32,
    /// The process group of the whole tree (`kill -- -PGID` stops it).
    pub pgid: i32,
    /// The live output file.
    pub output_path: PathBuf,
}

/// The result of a `Bash` call: the model text plus structured fields named as in Claude
/// Code's output schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BashResult {
    /// What the model reads.
    pub text: String,
    /// Whether the tool result is marked as an error (OUT-3).
    pub is_error: bool,
    /// `!is_error`: a timeout, kill at the deadline or move to the background is a
    /// success (EXEC-4, BG-4).
    pub success: bool,
    /// The shell's exit code, when it finished in the foreground.
    pub exit_code: Option<i32>,
    /// The command was ended by an abort or at its deadline.
    pub interrupted: bool,
    /// `backgrounded` when it runs as a background task, else `completed`.
    pub status: &'static str,
    /// The task id when it runs in the background (the wave spec's `bash_id`).
    #[serde(rename = "backgroundTaskId")]
    pub background_task_id: Option<String>,
    /// Moved to the background at its deadline.
    #[serde(rename = "assistantAutoBackgrounded")]
    pub assistant_auto_backgrounded: bool,
    /// Moved to the background by the user.
    #[serde(rename = "backgroundedByUser")]
    pub backgrounded_by_user: bool,
    /// The output file: live for a background task, kept for a persisted output.
    #[serde(rename = "outputPath")]
    pub output_path: Option<PathBuf>,
    /// The background task, when there is one.
    pub task: Option<TaskSnapshot>,
    /// The meaning of an expected non-zero exit code (OUT-3).
    #[serde(rename = "returnCodeInterpretation")]
    pub return_code_interpretation: Option<String>,
    /// The session's working directory after the call.
    pub cwd: PathBuf,
}

/// Why a call could not run. A command that ran and failed is not an error: it is a
/// result with `is_error` set.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The input was invalid.
    #[error("invalid Bash input: {0}")]
    Input(#[from] InputError),
    /// The command could not be started.
    #[error(transparent)]
    Exec(#[from] ExecError),
    /// The command ran but its output file could not be read.
    #[error("cannot read the output file {path}: {source}")]
    Output {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// Why a session could not be created.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The workspace root is not a directory.
    #[error("workspace {path} is not a directory: {why}")]
    Workspace {
        /// The path given.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// No usable shell.
    #[error(transparent)]
    Shell(#[from] ShellError),
    /// The private directory could not be made.
    #[error(transparent)]
    PrivateDir(#[from] PrivateDirError),
}

/// A directory as given and as resolved, for comparisons (CWD-4).
#[derive(Debug, Clone)]
struct Dir {
    literal: PathBuf,
    real: Option<PathBuf>,
}

impl Dir {
    fn new(path: PathBuf) -> Dir {
        let real = std::fs::canonicalize(&path).ok();
        Dir {
            literal: path,
            real,
        }
    }

    fn contains(&self, candidates: &[PathBuf]) -> bool {
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

fn normalize(path: &Path) -> PathBuf {
    if cfg!(target_os = "macos") {
        normalize_private(path)
    } else {
        path.to_path_buf()
    }
}

/// Builds a [`Session`].
pub struct SessionBuilder {
    root: PathBuf,
    additional_dirs: Vec<PathBuf>,
    config: Option<ToolConfig>,
    shell: Option<Shell>,
    private_base: Option<PathBuf>,
    spawner: Option<Arc<dyn Spawner>>,
}

impl SessionBuilder {
    /// Adds a directory the shell may stay in besides the workspace (CWD-2).
    pub fn additional_dir(&mut self, dir: impl Into<PathBuf>) -> &mut Self {
        self.additional_dirs.push(dir.into());
        self
    }

    /// Uses this configuration instead of [`ToolConfig::from_env`].
    pub fn config(&mut self, config: ToolConfig) -> &mut Self {
        self.config = Some(config);
        self
    }

    /// Uses this shell instead of resolving one (SHELL-2).
    pub fn shell(&mut self, shell: Shell) -> &mut Self {
        self.shell = Some(shell);
        self
    }

    /// Puts the private directory under `base` instead of the system temporary directory.
    pub fn private_base(&mut self, base: impl Into<PathBuf>) -> &mut Self {
        self.private_base = Some(base.into());
        self
    }

    /// Starts shells through `spawner` (a supervisor, a test double).
    pub fn spawner(&mut self, spawner: Arc<dyn Spawner>) -> &mut Self {
        self.spawner = Some(spawner);
        self
    }

    /// Checks the workspace, chooses the shell and creates the private directory.
    pub fn build(&self) -> Result<Session, SessionError> {
        let root = absolute(&self.root);
        if !root.is_dir() {
            return Err(SessionError::Workspace {
                path: root,
                why: "it does not exist or is not a directory".into(),
            });
        }
        let shell = match &self.shell {
            Some(shell) => shell.clone(),
            None => resolve_shell(&ShellEnv::from_process(), &RealFiles)?,
        };
        let dir = Arc::new(PrivateDir::create(self.private_base.as_deref())?);
        let signaller = default_signaller();
        let spawner = self
            .spawner
            .clone()
            .unwrap_or_else(|| Arc::new(DirectSpawner));
        let executor = Executor::new(shell, dir, spawner, Arc::clone(&signaller));
        Ok(Session {
            cwd: Mutex::new(root.clone()),
            root: Dir::new(root),
            additional: RwLock::new(
                self.additional_dirs
                    .iter()
                    .map(|d| Dir::new(absolute(d)))
                    .collect(),
            ),
            executor,
            tasks: TaskManager::new(signaller),
            config: self.config.clone().unwrap_or_else(ToolConfig::from_env),
        })
    }
}

#[cfg(unix)]
fn default_signaller() -> Arc<dyn Signaller> {
    Arc::new(wavesh_exec::PosixSignaller)
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// One agent session: a workspace, its current directory and its background tasks.
pub struct Session {
    root: Dir,
    additional: RwLock<Vec<Dir>>,
    cwd: Mutex<PathBuf>,
    executor: Executor,
    tasks: TaskManager,
    config: ToolConfig,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("root", &self.root.literal)
            .field("cwd", &self.cwd())
            .finish_non_exhaustive()
    }
}

impl Session {
    /// Starts building a session for the workspace at `root`.
    pub fn builder(root: impl Into<PathBuf>) -> SessionBuilder {
        SessionBuilder {
            root: root.into(),
            additional_dirs: Vec::new(),
            config: None,
            shell: None,
            private_base: None,
            spawner: None,
        }
    }

    /// The workspace root.
    pub fn root(&self) -> &Path {
        &self.root.literal
    }

    /// The directory the next command starts in.
    pub fn cwd(&self) -> PathBuf {
        self.lock_cwd().clone()
    }

    /// The tool configuration.
    pub fn config(&self) -> &ToolConfig {
        &self.config
    }

    /// The shell commands run under.
    pub fn shell(&self) -> &Shell {
        self.executor.shell()
    }

    /// The private directory of output files.
    pub fn private_dir(&self) -> &Path {
        self.executor.private_dir().path()
    }

    /// The session's background tasks.
    pub fn tasks(&self) -> &TaskManager {
        &self.tasks
    }

    /// Lets the shell stay in `dir` too (an `/add-dir`-style call, an approval, CWD-2).
    pub fn add_directory(&self, dir: impl Into<PathBuf>) {
        let dir = Dir::new(absolute(&dir.into()));
        self.additional
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(dir);
    }

    fn lock_cwd(&self) -> MutexGuard<'_, PathBuf> {
        // The guarded value is a plain path, always valid.
        self.cwd
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Validates a raw JSON input and runs it.
    pub async fn bash_json(
        &self,
        input: &serde_json::Value,
        ctx: &CallContext,
    ) -> Result<BashResult, ToolError> {
        let input = parse_bash_input(input)?;
        self.bash(input, ctx).await
    }

    /// Runs a `Bash` call.
    pub async fn bash(&self, input: BashInput, ctx: &CallContext) -> Result<BashResult, ToolError> {
        let mut notes = Vec::new();
        let cwd = self.start_dir(ctx, &mut notes);
        let timeout_ms = input.timeout_ms.unwrap_or(self.config.default_timeout_ms);
        let mode = if input.run_in_background {
            Mode::Background
        } else {
            Mode::Foreground {
                timeout: Duration::from_millis(timeout_ms),
                on_timeout: on_timeout(&input.command),
            }
        };
        let request = Request {
            command: input.command.clone(),
            cwd,
            mode,
        };
        let controls = Controls {
            abort: ctx.abort.clone(),
            progress: ctx.progress.clone(),
        };
        match self.executor.run(request, &controls, &self.tasks).await? {
            Outcome::Backgrounded(backgrounded) => {
                Ok(self.backgrounded(&backgrounded, timeout_ms, notes))
            }
            Outcome::Finished(finished) => self.finished(&input, finished, timeout_ms, ctx, notes),
        }
    }

    /// The directory this call starts in. A current directory that no longer exists
    /// falls back to the workspace root, with the reset note (CWD-6 never fails a call).
    fn start_dir(&self, ctx: &CallContext, notes: &mut Vec<String>) -> PathBuf {
        let mut cwd = self.lock_cwd();
        if cwd.is_dir() {
            return cwd.clone();
        }
        tracing::debug!(cwd = %cwd.display(), "the current directory is gone; using the workspace root");
        if !ctx.subagent {
            *cwd = self.root.literal.clone();
            notes.push(render::cwd_reset(&self.root.literal));
        }
        self.root.literal.clone()
    }

    fn backgrounded(
        &self,
        backgrounded: &Backgrounded,
        timeout_ms: u64,
        notes: Vec<String>,
    ) -> BashResult {
        let job = &backgrounded.job;
        let path = job.output_path().to_path_buf();
        let mut text = match backgrounded.reason {
            BackgroundReason::Requested => render::background_explicit(job.id(), &path),
            BackgroundReason::Timeout => render::background_timeout(timeout_ms, job.id(), &path),
        };
        for note in notes {
            text.push('\n');
            text.push_str(&note);
        }
        BashResult {
            text,
            is_error: false,
            success: true,
            exit_code: None,
            interrupted: false,
            status: "backgrounded",
            background_task_id: Some(job.id().to_owned()),
            assistant_auto_backgrounded: backgrounded.reason == BackgroundReason::Timeout,
            backgrounded_by_user: false,
            output_path: Some(path.clone()),
            task: Some(TaskSnapshot {
                task_id: job.id().to_owned(),
                status: "running",
                started_at: rfc3339(job.started_at()),
                pid: job.pid(),
                pgid: job.pgid(),
                output_path: path,
            }),
            return_code_interpretation: None,
            cwd: self.cwd(),
        }
    }

    fn finished(
        &self,
        input: &BashInput,
        finished: Finished,
        timeout_ms: u64,
        ctx: &CallContext,
        mut notes: Vec<String>,
    ) -> Result<BashResult, ToolError> {
        let code = finished.status.code();
        let meaning = match finished.ending {
            Ending::Exited => render::exit_meaning(&input.command, code),
            // A command ended by us has no exit-code meaning of its own.
            Ending::KilledAtTimeout | Ending::Aborted => ExitMeaning::Expected(""),
        };
        let output = render::read_output(&finished.output, self.config.max_output_chars).map_err(
            |source| ToolError::Output {
                path: finished.output.path().to_path_buf(),
                source,
            },
        )?;
        let mut lines: Vec<String> = Vec::new();
        let is_error = match (&meaning, finished.ending) {
            (ExitMeaning::Error { .. }, Ending::Exited) => {
                lines.push(format!("Exit code {code}"));
                true
            }
            (_, Ending::Aborted) => true,
            _ => false,
        };
        let output_path = match output {
            ModelOutput::Inline(text) => {
                let text = text.trim_end_matches(['\n', '\r']);
                if !text.is_empty() {
                    lines.push(text.to_owned());
                }
                None
            }
            ModelOutput::Persisted { envelope, .. } => {
                lines.push(envelope);
                Some(finished.output.keep())
            }
        };
        let mut interpretation = None;
        match meaning {
            ExitMeaning::Expected(message) if code != 0 && !message.is_empty() => {
                lines.push(message.to_owned());
                interpretation = Some(message.to_owned());
            }
            ExitMeaning::Error { hint: Some(hint) } => lines.push(hint.to_owned()),
            _ => {}
        }
        match finished.ending {
            Ending::Exited => {}
            Ending::KilledAtTimeout => lines.push(render::timeout_killed(timeout_ms)),
            Ending::Aborted => lines.push(render::ABORTED.to_owned()),
        }
        if !ctx.subagent
            && let Some(dir) = &finished.cwd_after
        {
            notes.extend(self.adopt_cwd(dir));
        }
        lines.extend(notes);
        let text = if lines.is_empty() {
            "(no output)".to_owned()
        } else {
            lines.join("\n")
        };
        Ok(BashResult {
            text,
            is_error,
            success: !is_error,
            exit_code: Some(code),
            interrupted: finished.ending != Ending::Exited,
            status: "completed",
            background_task_id: None,
            assistant_auto_backgrounded: false,
            backgrounded_by_user: false,
            output_path,
            task: None,
            return_code_interpretation: interpretation,
            cwd: self.cwd(),
        })
    }

    /// CWD-2/3: keep a directory inside the workspace or an added directory; anything
    /// else sends the next command back to the workspace root.
    fn adopt_cwd(&self, dir: &Path) -> Option<String> {
        let mut candidates = vec![normalize(dir)];
        if let Ok(real) = std::fs::canonicalize(dir) {
            candidates.push(normalize(&real));
        }
        let allowed = self.root.contains(&candidates)
            || self
                .additional
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .iter()
                .any(|extra| extra.contains(&candidates));
        let mut cwd = self.lock_cwd();
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

    /// Ends every background task and every tree left running by a foreground command,
    /// and waits until they are gone.
    pub async fn shutdown(&self) {
        self.tasks.shutdown().await;
    }

    /// Leaves background tasks running when the session is dropped (`wavesh run`).
    pub fn detach_tasks(&self) {
        self.tasks.detach();
    }
}

/// EXEC-4: a command whose first simple command is `sleep` is killed at its deadline;
/// any other moves to the background.
pub fn on_timeout(command: &str) -> OnTimeout {
    match first_command_name(command) {
        Some(name) if name == "sleep" => OnTimeout::Kill,
        _ => OnTimeout::MoveToBackground,
    }
}

/// RFC 3339 in UTC with milliseconds, without a date crate.
fn rfc3339(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (hour, minute, second) = (rem / 3600, (rem % 3600) / 60, rem % 60);
    // Civil-from-days (Howard Hinnant's algorithm), valid for every date after 1970.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{:03}Z",
        since.subsec_millis()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cwd_4_private_prefix_is_normalised() {
        assert_eq!(
            normalize_private(Path::new("/private/tmp/x")),
            PathBuf::from("/tmp/x")
        );
        assert_eq!(
            normalize_private(Path::new("/private/var/folders")),
            PathBuf::from("/var/folders")
        );
        assert_eq!(
            normalize_private(Path::new("/private/etc")),
            PathBuf::from("/private/etc")
        );
        assert_eq!(
            normalize_private(Path::new("/tmp/privatex")),
            PathBuf::from("/tmp/privatex")
        );
    }

    #[test]
    fn exec_4_sleep_first_is_killed() {
        assert_eq!(on_timeout("sleep 60"), OnTimeout::Kill);
        assert_eq!(on_timeout("sleep 5 && npm test"), OnTimeout::Kill);
        assert_eq!(on_timeout("A=1 sleep 5"), OnTimeout::Kill);
        assert_eq!(on_timeout("npm test; sleep 5"), OnTimeout::MoveToBackground);
        assert_eq!(
            on_timeout("echo a; sleep 3; echo b"),
            OnTimeout::MoveToBackground
        );
        assert_eq!(on_timeout("sleepy"), OnTimeout::MoveToBackground);
    }

    #[test]
    fn rfc3339_dates() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_796_002_200_123);
        assert_eq!(rfc3339(t), "2026-11-30T01:30:00.123Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(rfc3339(leap), "2000-02-29T00:00:00.000Z");
    }
}
