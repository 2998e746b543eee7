//! `TaskOutput` and `TaskStop`: inputs, descriptions and the texts the model reads, and
//! the `<task-notification>` of a task that ended (TASK, BG-7).

use std::path::Path;

use serde_json::Value;
use wavesh_exec::{Job, StopCause, TaskStatus};

use crate::input::{InputError, as_object, flag, milliseconds, reject_unknown};

/// TaskOutput's name.
pub const TASK_OUTPUT_TOOL_NAME: &str = "TaskOutput";
/// Older names of TaskOutput that are still accepted (TASK-1).
pub const TASK_OUTPUT_ALIASES: &[&str] = &[
    "AgentOutputTool",
    "BashOutputTool",
    "AgentOutput",
    "BashOutput",
];
/// TaskStop's name.
pub const TASK_STOP_TOOL_NAME: &str = "TaskStop";
/// Older names of TaskStop that are still accepted (TASK-4).
pub const TASK_STOP_ALIASES: &[&str] = &["KillShell", "KillBash"];

/// TaskOutput's default wait.
pub const TASK_OUTPUT_DEFAULT_TIMEOUT_MS: u64 = 30_000;
/// TaskOutput's longest wait; larger values are clamped (TASK-4).
pub const TASK_OUTPUT_MAX_TIMEOUT_MS: u64 = 600_000;
/// How often a blocking TaskOutput looks at the task (TASK-1).
pub const TASK_OUTPUT_POLL_MS: u64 = 100;
/// While a task runs, TaskOutput reads this much from the start of its output (TASK-2).
pub const RUNNING_HEAD_BYTES: u64 = 30_000;
/// After it ended, this much from the end (TASK-2).
pub const FINISHED_TAIL_BYTES: u64 = 8 * 1024 * 1024;
/// TaskStop's own timeout, not overridable (TASK-4).
pub const TASK_STOP_TIMEOUT_MS: u64 = 10_000;
/// The host-side tail of a task's output (TASK-5).
pub const HOST_TAIL_BYTES: u64 = 8_192;
/// Characters of output in a `<task-notification>`.
pub const NOTIFICATION_TAIL_CHARS: usize = 1_000;

/// Whether `name` is TaskOutput or one of its aliases.
pub fn is_task_output(name: &str) -> bool {
    name == TASK_OUTPUT_TOOL_NAME || TASK_OUTPUT_ALIASES.contains(&name)
}

/// Whether `name` is TaskStop or one of its aliases.
pub fn is_task_stop(name: &str) -> bool {
    name == TASK_STOP_TOOL_NAME || TASK_STOP_ALIASES.contains(&name)
}

/// A validated TaskOutput call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskOutputInput {
    /// The task.
    pub task_id: String,
    /// Wait for the task to end (default true).
    pub block: bool,
    /// How long to wait, clamped to 600000 ms.
    pub timeout_ms: u64,
}

impl TaskOutputInput {
    /// A blocking read of `task_id` with the default wait.
    pub fn new(task_id: impl Into<String>) -> TaskOutputInput {
        TaskOutputInput {
            task_id: task_id.into(),
            block: true,
            timeout_ms: TASK_OUTPUT_DEFAULT_TIMEOUT_MS,
        }
    }
}

/// Validates a raw TaskOutput input.
pub fn parse_task_output_input(value: &Value) -> Result<TaskOutputInput, InputError> {
    let object = as_object(value)?;
    reject_unknown(object, &["task_id", "block", "timeout"])?;
    let task_id = required_id(object, "task_id")?;
    Ok(TaskOutputInput {
        task_id,
        block: flag(object, "block")?.unwrap_or(true),
        timeout_ms: milliseconds(object, "timeout")?
            .unwrap_or(TASK_OUTPUT_DEFAULT_TIMEOUT_MS)
            .min(TASK_OUTPUT_MAX_TIMEOUT_MS),
    })
}

/// A validated TaskStop call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskStopInput {
    /// The task.
    pub task_id: String,
}

/// Validates a raw TaskStop input; the legacy `shell_id` is accepted for `task_id`.
pub fn parse_task_stop_input(value: &Value) -> Result<TaskStopInput, InputError> {
    let object = as_object(value)?;
    reject_unknown(object, &["task_id", "shell_id"])?;
    let task_id = if object.get("task_id").is_some_and(|v| !v.is_null()) {
        required_id(object, "task_id")?
    } else if object.get("shell_id").is_some_and(|v| !v.is_null()) {
        required_id(object, "shell_id")?
    } else {
        return Err(InputError::Missing("task_id"));
    };
    Ok(TaskStopInput { task_id })
}

fn required_id(
    object: &serde_json::Map<String, Value>,
    field: &'static str,
) -> Result<String, InputError> {
    match object.get(field) {
        None | Some(Value::Null) => Err(InputError::Missing(field)),
        Some(Value::String(id)) if !id.trim().is_empty() => Ok(id.trim().to_owned()),
        Some(Value::String(_)) => Err(InputError::WrongType {
            field,
            expected: "a task ID",
            got: "an empty string".into(),
        }),
        Some(other) => Err(InputError::WrongType {
            field,
            expected: "a string",
            got: other.to_string(),
        }),
    }
}

/// TaskOutput's description (TASK-1: deprecated, points to reading the output file).
pub fn task_output_description() -> String {
    "DEPRECATED: prefer reading the task's output file (its path is in the result that started the task) with your file-reading tool or `tail` in Bash. \
     Gets the status and output of a background task by its ID. With block=true (default) waits until the task ends or `timeout` ms pass (default 30000, at most 600000); with block=false returns at once. \
     While the task runs you get the start of its output; after it ended, the end."
        .to_owned()
}

// TaskOutput's input, as a Rust type for its schema.
#[derive(schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
#[expect(dead_code, reason = "a schema source, never constructed")]
struct TaskOutputParams {
    /// The ID of the background task
    task_id: String,
    /// Wait for the task to end (default true)
    #[serde(default)]
    block: bool,
    /// How long to wait in milliseconds (default 30000, at most 600000)
    #[serde(default)]
    timeout: f64,
}

/// TaskOutput's input schema.
pub fn task_output_schema() -> Value {
    crate::description::schema_of::<TaskOutputParams>()
}

/// TaskStop's description.
pub fn task_stop_description() -> String {
    "Stops a running background task by its ID: the command and every process it started are ended. \
     A task that already finished is reported as such."
        .to_owned()
}

// TaskStop's input, as a Rust type for its schema (`task_id` or the legacy `shell_id`).
#[derive(schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
#[expect(dead_code, reason = "a schema source, never constructed")]
struct TaskStopParams {
    /// The ID of the background task to stop
    #[serde(default)]
    task_id: String,
    /// Deprecated: use task_id
    #[serde(default)]
    shell_id: String,
}

/// TaskStop's input schema.
pub fn task_stop_schema() -> Value {
    crate::description::schema_of::<TaskStopParams>()
}

/// How a TaskOutput call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retrieval {
    /// The task ended; its final output is here.
    Success,
    /// The task still runs (block=true waited until the timeout).
    Timeout,
    /// The task still runs (block=false).
    NotReady,
}

impl Retrieval {
    /// The word shown to the model.
    pub fn word(self) -> &'static str {
        match self {
            Retrieval::Success => "success",
            Retrieval::Timeout => "timeout",
            Retrieval::NotReady => "not_ready",
        }
    }
}

/// The status line of a task, with its cause when it was stopped.
pub fn status_phrase(status: TaskStatus) -> &'static str {
    match status {
        TaskStatus::Running => "running",
        TaskStatus::Completed => "completed",
        TaskStatus::Failed => "failed",
        TaskStatus::Stopped(StopCause::Model) => "stopped by you",
        TaskStatus::Stopped(StopCause::User) => "stopped by the user",
        TaskStatus::Stopped(StopCause::OutputCap) => "stopped: its output reached the output cap",
        TaskStatus::Stopped(StopCause::OwnerReleased) => "stopped: the agent that started it ended",
        TaskStatus::Stopped(StopCause::Aborted | StopCause::Timeout) => "stopped",
    }
}

/// Keeps the last `max_chars` characters of `text`, saying what was cut and where the
/// whole is (TASK-2).
pub fn keep_tail(text: &str, max_chars: usize, total_bytes: u64, path: &Path) -> String {
    let count = text.chars().count();
    if count <= max_chars {
        return text.to_owned();
    }
    let start = text
        .char_indices()
        .nth(count - max_chars)
        .map_or(0, |(i, _)| i);
    format!(
        "[Showing the last {max_chars} characters of {total_bytes} bytes; the full output is in {}]\n{}",
        path.display(),
        &text[start..]
    )
}

/// The TaskOutput text.
pub fn task_output_text(job: &Job, retrieval: Retrieval, output: &str) -> String {
    let status = job.status();
    let mut text = format!(
        "<retrieval_status>{}</retrieval_status>\n<task_id>{}</task_id>\n<task_type>local_bash</task_type>\n<status>{}</status>\n",
        retrieval.word(),
        job.id(),
        status.word()
    );
    if let TaskStatus::Stopped(_) = status {
        text.push_str(&format!("<stopped>{}</stopped>\n", status_phrase(status)));
    }
    if let Some(exit) = job.exit() {
        text.push_str(&format!("<exit_code>{}</exit_code>\n", exit.status.code()));
    }
    let output = output.trim_end_matches('\n');
    text.push_str(&format!(
        "<output_file>{}</output_file>\n",
        job.output_path().display()
    ));
    if output.is_empty() {
        text.push_str("<output></output>");
    } else {
        text.push_str(&format!("<output>\n{output}\n</output>"));
    }
    text
}

/// The `<task-notification>` of a task that ended (BG-7).
pub fn notification_text(job: &Job, description: Option<&str>, tail: &str) -> String {
    let status = job.status();
    let what = description.unwrap_or_else(|| job.command());
    let exit_code = job.exit().map(|exit| exit.status.code());
    let summary = match (status, exit_code) {
        (TaskStatus::Completed, _) => format!(
            "Background command \"{}\" completed (exit code 0).",
            one_line(what)
        ),
        (TaskStatus::Failed, Some(code)) => format!(
            "Background command \"{}\" failed with exit code {code}.",
            one_line(what)
        ),
        _ => format!(
            "Background command \"{}\" was {}.",
            one_line(what),
            status_phrase(status)
        ),
    };
    let mut text = format!(
        "<task-notification>\n<task-id>{}</task-id>\n<status>{}</status>\n",
        job.id(),
        status.word()
    );
    if let Some(code) = exit_code {
        text.push_str(&format!("<exit-code>{code}</exit-code>\n"));
    }
    text.push_str(&format!(
        "<output-file>{}</output-file>\n<summary>{summary}</summary>\n",
        job.output_path().display()
    ));
    let tail = tail.trim_end_matches('\n');
    if !tail.is_empty() {
        text.push_str(&format!("<output-tail>\n{tail}\n</output-tail>\n"));
    }
    text.push_str("</task-notification>");
    text
}

fn one_line(text: &str) -> String {
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(120) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn task_1_output_input_defaults_and_strings() {
        let input = parse_task_output_input(&json!({"task_id": "b1"})).unwrap();
        assert_eq!(input, TaskOutputInput::new("b1"));
        let input =
            parse_task_output_input(&json!({"task_id": "b1", "block": "false", "timeout": 500}))
                .unwrap();
        assert!(!input.block);
        assert_eq!(input.timeout_ms, 500);
        let err = parse_task_output_input(&json!({"task_id": "b1", "wait": true})).unwrap_err();
        assert!(err.to_string().contains("unknown parameter `wait`"));
        assert!(
            parse_task_output_input(&json!({}))
                .unwrap_err()
                .to_string()
                .contains("task_id")
        );
    }

    #[test]
    fn task_4_task_output_timeout_is_clamped() {
        let input = parse_task_output_input(&json!({"task_id": "b1", "timeout": 900000})).unwrap();
        assert_eq!(input.timeout_ms, 600_000);
    }

    #[test]
    fn task_4_stop_accepts_legacy_shell_id() {
        assert_eq!(
            parse_task_stop_input(&json!({"shell_id": "b2"}))
                .unwrap()
                .task_id,
            "b2"
        );
        assert_eq!(
            parse_task_stop_input(&json!({"task_id": "b3"}))
                .unwrap()
                .task_id,
            "b3"
        );
        assert!(
            parse_task_stop_input(&json!({}))
                .unwrap_err()
                .to_string()
                .contains("task_id")
        );
        assert!(parse_task_stop_input(&json!({"task_id": ""})).is_err());
    }

    #[test]
    fn task_1_aliases() {
        for name in [
            "TaskOutput",
            "AgentOutputTool",
            "BashOutputTool",
            "AgentOutput",
            "BashOutput",
        ] {
            assert!(is_task_output(name));
        }
        for name in ["TaskStop", "KillShell", "KillBash"] {
            assert!(is_task_stop(name));
        }
        assert!(task_output_description().starts_with("DEPRECATED"));
    }

    #[test]
    fn task_2_keep_tail() {
        let path = Path::new("/tmp/out.log");
        assert_eq!(keep_tail("abc", 5, 3, path), "abc");
        assert_eq!(
            keep_tail("abcdef", 2, 6, path),
            "[Showing the last 2 characters of 6 bytes; the full output is in /tmp/out.log]\nef"
        );
    }
}
