//! What a call gives back and how it fails: the call context, the results of each
//! tool, and the tool's and the session's errors.

use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;
use wavesh_exec::{ExecError, OnTimeout, PrivateDirError, ShellError};

use crate::input::InputError;

/// What the host passes with each call: the abort token (EXEC-6), the progress sink
/// (EXEC-5), the user's move to the background (BG-6), and whether the host asked its
/// user and got a yes (SBX-3).
#[derive(Clone, Default)]
pub struct CallContext {
    /// Cancelling it aborts the command: the whole tree is ended (EXEC-6). Once a command
    /// has moved to the background it no longer listens to this (BG-3).
    pub abort: tokio_util::sync::CancellationToken,
    /// Where progress events go, if anywhere.
    pub progress: Option<wavesh_exec::ProgressSink>,
    /// Cancelling it moves a running foreground command to the background at once: the
    /// user's Ctrl+B (BG-6).
    pub move_to_background: tokio_util::sync::CancellationToken,
    /// The host (or its user) approved this call after asking: the permission decision
    /// then lets it run even when it would ask, `dangerouslyDisableSandbox` included
    /// (SBX-3). The sandbox level is still chosen by the library. A decision, so it is
    /// the library's, not the executor's.
    pub approved: bool,
}

impl CallContext {
    /// The executor's part: what controls a running command.
    pub(crate) fn controls(&self) -> wavesh_exec::Controls {
        wavesh_exec::Controls {
            abort: self.abort.clone(),
            progress: self.progress.clone(),
            move_to_background: self.move_to_background.clone(),
        }
    }
}

impl std::fmt::Debug for CallContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallContext")
            .field("abort", &self.abort.is_cancelled())
            .field("progress", &self.progress.is_some())
            .field("approved", &self.approved)
            .finish()
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
    /// The command was ended by an abort, at its deadline or at the output cap.
    pub interrupted: bool,
    /// `backgrounded` when it runs as a background task, else `completed`.
    pub status: &'static str,
    /// The task id when it runs in the background (the wave spec's `bash_id`).
    #[serde(rename = "backgroundTaskId")]
    pub background_task_id: Option<String>,
    /// Moved to the background at its deadline or the assistant-mode budget.
    #[serde(rename = "assistantAutoBackgrounded")]
    pub assistant_auto_backgrounded: bool,
    /// Moved to the background by the user.
    #[serde(rename = "backgroundedByUser")]
    pub backgrounded_by_user: bool,
    /// The host should end the agent's turn: only a move by the user does (BG-6).
    #[serde(rename = "stopsAgentLoop")]
    pub stops_agent_loop: bool,
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
    /// The output as an image, when stdout was exactly one image data URL (OUT-4).
    #[serde(skip)]
    pub image: Option<crate::image_output::ImageBlock>,
    /// A `tty` call only (PTY-2): whether the program waits for terminal input, `null`
    /// when this system cannot tell.
    #[serde(rename = "waitingForInput", skip_serializing_if = "Option::is_none")]
    pub waiting_for_input: Option<Option<bool>>,
}

/// The result of a TaskOutput call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskOutputResult {
    /// What the model reads.
    pub text: String,
    /// `success`, `timeout` or `not_ready`.
    pub retrieval_status: &'static str,
    /// The task.
    pub task_id: String,
    /// `running`, `completed`, `failed` or `stopped`.
    pub status: &'static str,
    /// The exit code once it ended.
    pub exit_code: Option<i32>,
    /// The full output.
    pub output_path: PathBuf,
}

/// The result of a TaskStop call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskStopResult {
    /// What the model reads.
    pub text: String,
    /// The task.
    pub task_id: String,
    /// The command it ran.
    pub command: String,
    /// The task had ended before the call: nothing was stopped.
    pub already_finished: bool,
    /// Its status after the call.
    pub status: &'static str,
    /// Its exit code.
    pub exit_code: Option<i32>,
}

/// The result of any tool call through [`Session::call_tool`](crate::AgentHandle::call_tool).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// What the model reads.
    pub text: String,
    /// Whether the result is marked as an error.
    pub is_error: bool,
    /// The structured result ([`BashResult`], [`TaskOutputResult`] or [`TaskStopResult`]).
    pub structured: serde_json::Value,
    /// An image the model should see (OUT-4).
    pub image: Option<crate::image_output::ImageBlock>,
}

impl ToolOutput {
    pub(crate) fn of(result: &impl Serialize, is_error: bool, text: &str) -> ToolOutput {
        ToolOutput {
            text: text.to_owned(),
            is_error,
            structured: serde_json::to_value(result).unwrap_or(serde_json::Value::Null),
            image: None,
        }
    }
}

/// A background task that ended, to be told to the model (BG-7).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskNotification {
    /// The task.
    pub task_id: String,
    /// `completed`, `failed` or `stopped`.
    pub status: &'static str,
    /// Its exit code.
    pub exit_code: Option<i32>,
    /// The full output.
    pub output_path: PathBuf,
    /// The `<task-notification>` text the host injects.
    pub text: String,
    /// The model itself stopped it with TaskStop, whose answer already said so: a host
    /// that shows the model every result (as `wavesh mcp` does) need not say it again.
    pub stopped_by_model: bool,
}

/// A task as the host's UI lists it (TASK-5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskInfo {
    /// The task id.
    pub task_id: String,
    /// The command.
    pub command: String,
    /// The call's description, if it had one.
    pub description: Option<String>,
    /// `running`, `completed`, `failed` or `stopped`.
    pub status: &'static str,
    /// The status with its cause (`stopped by you`, ...).
    pub status_detail: &'static str,
    /// The exit code once it ended.
    pub exit_code: Option<i32>,
    /// Start time, RFC 3339.
    pub started_at: String,
    /// End time, RFC 3339.
    pub ended_at: Option<String>,
    /// The shell's pid.
    pub pid: i32,
    /// The tree's process group.
    pub pgid: i32,
    /// The live output file.
    pub output_path: PathBuf,
}

/// Why a call could not run. A command that ran and failed is not an error: it is a
/// result with `is_error` set.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The input was invalid.
    #[error("invalid input: {0}")]
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
    /// `run_in_background` in idle-turn mode (EXEC-7).
    #[error(
        "run_in_background is not available here: this host runs every command in the foreground. Run the command without it, with a timeout that fits"
    )]
    BackgroundRefused,
    /// No task of this agent has the id.
    #[error("no background task with ID {0}; TaskList lists the tasks this agent can reach")]
    UnknownTask(String),
    /// The task belonged to a subagent that has ended (TASK-4).
    #[error(
        "task {0} has expired: the subagent that started it has ended, and its processes were stopped with it"
    )]
    ExpiredTask(String),
    /// The host aborted the call.
    #[error("the call was aborted")]
    Aborted,
    /// A deny rule refuses the command (RULE-2).
    #[error("{0}")]
    Denied(String),
    /// The command needs the user's approval and the call was not approved (SBX-3).
    #[error("{}", needs_approval_text(.0))]
    NeedsApproval(wavesh_policy::Decision),
    /// No tool has this name.
    #[error("unknown tool `{0}`; the tools are Bash, TaskOutput, TaskInput, TaskStop and TaskList")]
    UnknownTool(String),
    /// The session's recorded shell no longer exists and there is no other (SHELL-3).
    #[error(
        "this session's shell {0} no longer exists or is not executable, and no other bash or zsh was found; install it again or start a new session"
    )]
    StaleShell(PathBuf),
    /// No bash or zsh was found when the session started (SHELL-2).
    #[error(
        "no shell can run this command: {0}. wavesh runs commands with bash or zsh; the user must install one or point WAVE_SHELL at one, then start a new session"
    )]
    NoShell(String),
    /// TaskInput to a task that was not started with `tty: true` (PTY-3).
    #[error("task {0} has no terminal to type into: only a Bash call with `tty: true` starts one")]
    NoTerminal(String),
    /// TaskInput to a task that has ended (PTY-3).
    #[error("task {0} has ended ({1}); nothing reads its terminal any more")]
    TaskEnded(String, String),
    /// Writing to the task's terminal failed (PTY-3).
    #[error("task {0}: {1}")]
    TerminalInput(String, wavesh_exec::pty::InputError),
    /// TaskInput to a task above `read-only` where wavesh approves: the user must see
    /// the text first (PTY-4).
    #[error(
        "typing into task {task_id} needs the user's approval: it runs at {level} ({command}); the text was: {input:?}"
    )]
    InputNeedsApproval {
        /// The task.
        task_id: String,
        /// Its command.
        command: String,
        /// Its sandbox level.
        level: String,
        /// The text to type.
        input: String,
    },
    /// `tty` in idle-turn mode: a tty command is a task, and this host keeps none.
    #[error(
        "tty is not available here: this host runs every command in the foreground and keeps no tasks. Run the command non-interactively"
    )]
    TtyRefused,
    /// TaskStop's own timeout passed before the task ended.
    #[error("task {0} did not end within TaskStop's 10 s limit")]
    StopTimedOut(String),
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
    /// Per-command limits were asked for and cannot be enforced here (PROC-1): the
    /// session refuses to start rather than run commands without them.
    #[error("cannot enforce the per-command limits: {0}")]
    Limits(String),
    /// The configuration asks for the sandbox level `off` without the builder call that
    /// chooses it (SBX-3).
    #[error(
        "the sandbox level `off` was set in the configuration only: a session runs unsandboxed only when the host says so with SessionBuilder::sandbox_level(Level::Off)"
    )]
    UnsandboxedByDefault,
    /// The session's network (NET-1, NET-2) could not be had and the sandbox is strict,
    /// or its policy is malformed.
    #[error("the session's network: {0}")]
    Network(String),
    /// A Claude Code settings file could not be applied.
    #[error(transparent)]
    Settings(#[from] crate::sandbox::SandboxSettingsError),
}

/// The refusal of a command that needs approval: why, and the rule that would allow it.
fn needs_approval_text(decision: &wavesh_policy::Decision) -> String {
    approval_refusal("This command needs the user's approval", decision)
}

/// `opening`, then the decision's reasons and the rules that would allow the command:
/// the text of every refusal for want of approval.
pub fn approval_refusal(opening: &str, decision: &wavesh_policy::Decision) -> String {
    let mut text = String::from(opening);
    if !decision.reasons.is_empty() {
        text.push_str(&format!(
            " ({})",
            wavesh_policy::join_reasons(&decision.reasons, "; ")
        ));
    }
    text.push('.');
    if !decision.suggestions.is_empty() {
        // The settings are the user's: the model asks, it does not write them (and
        // `.claude/` is read-only in the sandbox).
        text.push_str(&format!(
            " Ask the user if it should run; they can allow it from now on with {} in \
             permissions.allow of .claude/settings.local.json.",
            decision.suggestions.join(", ")
        ));
    } else if decision
        .reasons
        .iter()
        .any(|r| r.kind == wavesh_policy::ReasonKind::Unsandboxed)
    {
        // No rule allows a call out of the sandbox: the way forward is the sandbox, or
        // the user.
        text.push_str(
            " Run it without dangerouslyDisableSandbox if the sandbox allows what it needs; \
             otherwise ask the user to run it.",
        );
    } else {
        text.push_str(" Ask the user to run it.");
    }
    text
}

/// EXEC-4: a command whose first simple command is `sleep` is killed at its deadline;
/// any other moves to the background for `reason`. The first command is read from the
/// call's analysis; only a command that did not parse is read by its first raw word.
pub fn on_timeout(
    analysis: &wavesh_parse::Analysis,
    command: &str,
    reason: wavesh_exec::BackgroundReason,
) -> OnTimeout {
    // The analysis lists the simple commands it descends into; inside a construct it
    // does not (`a &`, a subshell, a loop) the first word as written decides.
    let first = if analysis.failure.is_none() && analysis.unsupported.is_empty() {
        analysis
            .commands
            .iter()
            .find_map(|c| c.argv.first())
            .filter(|w| w.is_static())
            .map(|w| w.value.as_str())
    } else {
        command
            .trim_start_matches(|c: char| c == '(' || c == '{' || c.is_whitespace())
            .split_whitespace()
            .next()
    };
    match first {
        Some("sleep") => OnTimeout::Kill,
        _ => OnTimeout::MoveToBackground(reason),
    }
}

/// RFC 3339 in UTC with milliseconds, without a date crate.
pub(crate) fn rfc3339(time: SystemTime) -> String {
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
