//! Interactive commands (PTY-1..4): `tty: true` on a `Bash` call and `TaskInput`.
//!
//! A tty call starts its command as a task at once, in a pseudo-terminal
//! (`wavesh_exec::pty`), and waits until the command ends, waits for terminal input (read
//! from the kernel, PTY-2) or reaches the call's timeout. `TaskInput` types into the
//! task's terminal and returns the same way. Both answer with the screen so far, the task
//! id and whether the command waits for input.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use wavesh_exec::{Job, Terminal, TtyStop, Waiting};

use wavesh_exec::StopCause;
use wavesh_exec::sandbox::Level;

use crate::agent::ModelView;
use crate::input::{InputError, as_object, milliseconds, reject_unknown};
use crate::permissions::Approver;
use crate::results::{BashResult, CallContext, ToolError};

/// TaskInput's name.
pub const TASK_INPUT_TOOL_NAME: &str = "TaskInput";
/// How long TaskInput waits for the program to end or to wait again, by default.
pub const TASK_INPUT_DEFAULT_TIMEOUT_MS: u64 = 30_000;
/// TaskInput's longest wait; larger values are clamped.
pub const TASK_INPUT_MAX_TIMEOUT_MS: u64 = 600_000;

/// Whether `name` is TaskInput.
pub fn is_task_input(name: &str) -> bool {
    name == TASK_INPUT_TOOL_NAME
}

/// A validated TaskInput call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskInputInput {
    /// The task.
    pub task_id: String,
    /// The text to type, control characters included.
    pub input: String,
    /// How long to wait for the program to end or to wait for input again.
    pub timeout_ms: u64,
}

impl TaskInputInput {
    /// Types `input` into `task_id` with the default wait.
    pub fn new(task_id: impl Into<String>, input: impl Into<String>) -> TaskInputInput {
        TaskInputInput {
            task_id: task_id.into(),
            input: input.into(),
            timeout_ms: TASK_INPUT_DEFAULT_TIMEOUT_MS,
        }
    }
}

/// Validates a raw TaskInput input: every error names the field.
pub fn parse_task_input_input(value: &Value) -> Result<TaskInputInput, InputError> {
    let object = as_object(value)?;
    reject_unknown(object, &["task_id", "input", "timeout"])?;
    let task_id = match object.get("task_id") {
        None | Some(Value::Null) => return Err(InputError::Missing("task_id")),
        Some(Value::String(id)) if !id.trim().is_empty() => id.clone(),
        Some(other) => {
            return Err(InputError::WrongType {
                field: "task_id",
                expected: "a non-empty task id string",
                got: other.to_string(),
            });
        }
    };
    let input = match object.get("input") {
        None | Some(Value::Null) => return Err(InputError::Missing("input")),
        Some(Value::String(text)) => text.clone(),
        Some(other) => {
            return Err(InputError::WrongType {
                field: "input",
                expected: "a string (the text to type; \\n is Enter, \\u0003 is Ctrl-C)",
                got: other.to_string(),
            });
        }
    };
    if input.is_empty() {
        return Err(InputError::WrongType {
            field: "input",
            expected: "a non-empty string",
            got: "\"\"".into(),
        });
    }
    if input.len() > wavesh_exec::pty::MAX_INPUT_BYTES {
        return Err(InputError::WrongType {
            field: "input",
            expected: "at most 65536 bytes (write longer text to a file instead)",
            got: format!("{} bytes", input.len()),
        });
    }
    Ok(TaskInputInput {
        task_id,
        input,
        timeout_ms: milliseconds(object, "timeout")?
            .unwrap_or(TASK_INPUT_DEFAULT_TIMEOUT_MS)
            .min(TASK_INPUT_MAX_TIMEOUT_MS),
    })
}

/// TaskInput's description.
pub fn task_input_description() -> String {
    "Types text into the terminal of a task started with Bash `tty: true` (a prompt, a REPL, a debugger, a TUI). \
     The text reaches the program as if typed: end a line with \\n (Enter); control characters pass through \
     (\\u0003 is Ctrl-C, \\u0004 is Ctrl-D / end of input, \\u001b[A is the up arrow). \
     Returns like the Bash call did: when the program ends, when it waits for input again, or at the timeout, \
     with the screen and whether it waits for input. Typed text runs with the task's sandbox level, like its command."
        .to_owned()
}

// TaskInput's input, as a Rust type for its schema.
#[derive(schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
#[expect(dead_code, reason = "a schema source, never constructed")]
struct TaskInputParams {
    /// The ID of the task started with `tty: true`
    task_id: String,
    /// The text to type; \n is Enter, \u0003 Ctrl-C, \u0004 Ctrl-D, \u001b[A the up arrow (at most 65536 bytes)
    input: String,
    /// How long to wait in milliseconds for the program to end or to wait for input again (default 30000, at most 600000)
    #[serde(default)]
    timeout: f64,
}

/// TaskInput's input schema.
pub fn task_input_schema() -> Value {
    crate::description::schema_of::<TaskInputParams>()
}

/// The result of a TaskInput call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskInputResult {
    /// What the model reads.
    pub text: String,
    /// The task.
    pub task_id: String,
    /// `running`, `completed`, `failed` or `stopped`.
    pub status: &'static str,
    /// Whether the program waits for terminal input (PTY-2); `null` when this system
    /// cannot tell.
    #[serde(rename = "waitingForInput")]
    pub waiting_for_input: Option<bool>,
    /// The exit code once it ended.
    pub exit_code: Option<i32>,
    /// The raw output, escape sequences included.
    pub output_path: std::path::PathBuf,
}

/// What the user is shown before text is typed into a task (PTY-4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputApproval {
    /// The task's command.
    pub command: String,
    /// The task's sandbox level.
    pub level: String,
}

/// What a tty call or a TaskInput saw when it returned.
pub(crate) struct TtyView {
    /// The model's text: the screen, then one line on the task's state.
    pub text: String,
    /// `Some(true/false)`, `None` when unknown.
    pub waiting: Option<bool>,
    /// The exit code once it ended.
    pub exit_code: Option<i32>,
    /// The command ended by itself with a non-zero code, or was stopped.
    pub is_error: bool,
}

/// Waits on `job`'s terminal up to `timeout` and renders what it shows. `Err(())` when
/// `abort` fired first.
pub(crate) async fn wait_and_render(
    job: &Arc<Job>,
    terminal: &Arc<Terminal>,
    timeout: Duration,
    abort: &tokio_util::sync::CancellationToken,
    max_chars: usize,
    mask: impl Fn(&str) -> String,
) -> Result<TtyView, ()> {
    let (stop, waiting) = terminal.wait(job, timeout, abort).await;
    if stop == TtyStop::Aborted {
        return Err(());
    }
    Ok(render(job, terminal, stop, waiting, max_chars, mask))
}

/// TaskOutput's text of a tty task (PTY-3): the scrollback and the screen, masked, at
/// most `task_max_output_chars` (the end), then whether it waits for input.
pub(crate) fn screen_text(
    job: &Job,
    terminal: &Terminal,
    view: ModelView<'_>,
    config: &crate::ToolConfig,
    waiting: Waiting,
) -> String {
    let screen = view.mask(&terminal.render());
    let total = std::fs::metadata(job.output_path()).map_or(0, |m| m.len());
    let mut text = crate::task_tools::keep_tail(
        &screen,
        config.task_max_output_chars,
        total,
        job.output_path(),
    );
    if job.exit().is_none() {
        let line = match waiting {
            Waiting::Yes => {
                "[the program is waiting for input on its terminal: answer with TaskInput]"
            }
            Waiting::No => "[the program is not waiting for input]",
            Waiting::Unknown(_) => "[whether the program is waiting for input is unknown here]",
        };
        text.push_str(line);
        text.push('\n');
    }
    text
}

/// The screen of a tty task and the line on its state.
pub(crate) fn render(
    job: &Job,
    terminal: &Terminal,
    stop: TtyStop,
    waiting: Waiting,
    max_chars: usize,
    mask: impl Fn(&str) -> String,
) -> TtyView {
    let screen = mask(&terminal.render());
    let total = std::fs::metadata(job.output_path()).map_or(0, |m| m.len());
    let screen = if screen.trim().is_empty() {
        "(nothing on the screen yet)\n".to_owned()
    } else {
        crate::task_tools::keep_tail(&screen, max_chars, total, job.output_path())
    };
    let id = job.id();
    let exit = job.exit().map(|exit| exit.status.code());
    let (state, is_error) = match (exit, stop, waiting) {
        (Some(code), _, _) => {
            // Told here: the end is not notified again (TASK-3).
            job.mark_notified();
            let stopped = job.stopped().is_some();
            (
                if stopped {
                    format!("Task {id} was stopped (exit code {code}); its terminal is closed.")
                } else {
                    format!("Task {id} ended with exit code {code}; its terminal is closed.")
                },
                code != 0,
            )
        }
        (None, _, Waiting::Yes) => (
            format!(
                "Task {id} is waiting for input on its terminal. Type with TaskInput (task_id \"{id}\"; \\n is Enter, \\u0003 Ctrl-C, \\u0004 Ctrl-D)."
            ),
            false,
        ),
        (None, _, Waiting::No) => (
            format!(
                "Task {id} is still running on its terminal and is not waiting for input. \
                 Read its screen later with TaskOutput, type with TaskInput, stop it with TaskStop."
            ),
            false,
        ),
        (None, _, Waiting::Unknown(why)) => (
            format!(
                "Task {id} is still running on its terminal; whether it is waiting for input is unknown: {why}. \
                 Read its screen with TaskOutput, type with TaskInput, stop it with TaskStop."
            ),
            false,
        ),
    };
    let waiting = if exit.is_some() {
        Some(false)
    } else {
        waiting.known()
    };
    TtyView {
        text: format!("{screen}\n{state}"),
        waiting,
        exit_code: exit,
        is_error,
    }
}

impl crate::agent::Agent<'_> {
    /// PTY-1: the Bash call of a tty command, started as a task: waits on its terminal
    /// for `wait_ms` (0: returns at once) and turns `base`, the task's start result,
    /// into the screen and the task's state.
    pub(crate) async fn tty_started(
        &self,
        job: &Arc<Job>,
        wait_ms: u64,
        ctx: &CallContext,
        mut base: BashResult,
    ) -> Result<BashResult, ToolError> {
        let Some(terminal) = job.terminal().cloned() else {
            return Ok(base);
        };
        let view = ModelView::of_job(job);
        let rendered = wait_and_render(
            job,
            &terminal,
            Duration::from_millis(wait_ms),
            &ctx.abort,
            self.shared.config.max_output_chars,
            |text| view.mask(text),
        )
        .await;
        let Ok(rendered) = rendered else {
            // EXEC-6: an aborted call ends its command, as in the foreground.
            let _ = self.owner.tasks.stop(job.id(), StopCause::Aborted).await;
            return Err(ToolError::Aborted);
        };
        let mut text = rendered.text;
        if let Some(note) = view.missing_note() {
            text.push('\n');
            text.push_str(&note);
        }
        base.text = text;
        base.is_error = rendered.is_error;
        base.success = !rendered.is_error;
        base.waiting_for_input = Some(rendered.waiting);
        base.assistant_auto_backgrounded = false;
        if let Some(code) = rendered.exit_code {
            base.status = "completed";
            base.exit_code = Some(code);
            // It is not running: no task to keep or stop.
            base.task = None;
        }
        Ok(base)
    }

    /// PTY-4: what the user must see before text is typed into `task_id`, or `None`
    /// when it may be typed without asking: the host approves (its client sees the text
    /// in the call), the task runs at `read-only`, or the user allowed input to it for
    /// the session.
    pub(crate) fn input_approval(&self, task_id: &str) -> Option<InputApproval> {
        let job = self.owner.tasks.get(task_id)?;
        let terminal = job.terminal()?;
        let level = job
            .sandbox()
            .map_or(Level::Off, |sandbox| sandbox.plan.level);
        let asks = self.shared.approver() == Approver::Wavesh
            && level != Level::ReadOnly
            && !terminal.input_allowed();
        asks.then(|| InputApproval {
            command: job.command().to_owned(),
            level: level.to_string(),
        })
    }

    /// PTY-4: the user allowed any input to `task_id` for the rest of the session.
    pub(crate) fn allow_input(&self, task_id: &str) {
        if let Some(job) = self.owner.tasks.get(task_id)
            && let Some(terminal) = job.terminal()
        {
            terminal.allow_input();
        }
    }

    /// PTY-3: types into a tty task's terminal and waits as the Bash call did.
    pub(crate) async fn task_input(
        &self,
        input: TaskInputInput,
        ctx: &CallContext,
    ) -> Result<TaskInputResult, ToolError> {
        let job = self.find(&input.task_id)?;
        let id = job.id().to_owned();
        let Some(terminal) = job.terminal().cloned() else {
            return Err(ToolError::NoTerminal(id));
        };
        if let Some(exit) = job.exit() {
            let how = format!(
                "{}, exit code {}",
                crate::task_tools::status_phrase(job.status()),
                exit.status.code()
            );
            return Err(ToolError::TaskEnded(id, how));
        }
        // PTY-4: what is typed into a shell or a REPL is a command too. It runs at the
        // task's level, which nothing typed can raise; where wavesh approves, text
        // for a task above read-only is shown to the user first.
        if !ctx.approved
            && let Some(approval) = self.input_approval(&id)
        {
            return Err(ToolError::InputNeedsApproval {
                task_id: id,
                command: approval.command,
                level: approval.level,
                input: input.input,
            });
        }
        terminal
            .write_input(input.input.as_bytes())
            .await
            .map_err(|error| match error {
                wavesh_exec::pty::InputError::Closed if job.exit().is_some() => {
                    ToolError::TaskEnded(id.clone(), "its terminal closed".into())
                }
                error => ToolError::TerminalInput(id.clone(), error),
            })?;
        let view = ModelView::of_job(&job);
        let rendered = wait_and_render(
            &job,
            &terminal,
            Duration::from_millis(input.timeout_ms),
            &ctx.abort,
            self.shared.config.task_max_output_chars,
            |text| view.mask(text),
        )
        .await
        .map_err(|()| ToolError::Aborted)?;
        Ok(TaskInputResult {
            text: rendered.text,
            task_id: id,
            status: job.status().word(),
            waiting_for_input: rendered.waiting,
            exit_code: rendered.exit_code,
            output_path: job.output_path().to_path_buf(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pty_3_input_errors_name_the_field() {
        let error = |value: Value| parse_task_input_input(&value).unwrap_err().to_string();
        assert!(error(json!({"input": "x"})).contains("`task_id`"));
        assert!(error(json!({"task_id": "b1"})).contains("`input`"));
        assert!(error(json!({"task_id": "b1", "input": 5})).contains("`input` must be a string"));
        assert!(error(json!({"task_id": "b1", "input": ""})).contains("`input`"));
        let big = "x".repeat(wavesh_exec::pty::MAX_INPUT_BYTES + 1);
        let message = error(json!({"task_id": "b1", "input": big}));
        assert!(
            message.contains("`input`") && message.contains("65537 bytes"),
            "{message}"
        );
        assert!(error(json!({"task_id": "b1", "input": "x", "keys": 1})).contains("`keys`"));
    }

    #[test]
    fn pty_3_control_characters_pass_through_parsing() {
        let parsed =
            parse_task_input_input(&json!({"task_id": "b1", "input": "\u{3}\u{4}\u{1b}[A"}))
                .unwrap();
        assert_eq!(parsed.input.as_bytes(), b"\x03\x04\x1b[A");
        assert_eq!(parsed.timeout_ms, TASK_INPUT_DEFAULT_TIMEOUT_MS);
    }
}
