//! `TaskOutput`, `TaskStop` and `TaskList`: inputs, descriptions and the texts the model
//! reads, and the `<task-notification>` of a task that ended (TASK, BG-7, MCP-4).

use std::io::{Read, Seek, SeekFrom};
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
/// TaskList's name: the model's own tasks, for a client that cannot look at files
/// (MCP-4).
pub const TASK_LIST_TOOL_NAME: &str = "TaskList";
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

/// Whether `name` is TaskList.
pub fn is_task_list(name: &str) -> bool {
    name == TASK_LIST_TOOL_NAME
}

/// Bytes of a page of output when `limit` is not given.
pub const PAGE_DEFAULT_BYTES: u64 = 30_000;

/// A part of a task's output file: `offset` bytes in, at most `limit` bytes (MCP-4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputPage {
    /// Where the page starts, in bytes from the start of the file.
    pub offset: u64,
    /// Its largest size in bytes (the text limit caps it further).
    pub limit: u64,
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
    /// Read exactly this part of the output file instead of its start (running) or end
    /// (ended).
    pub page: Option<OutputPage>,
}

impl TaskOutputInput {
    /// A blocking read of `task_id` with the default wait.
    pub fn new(task_id: impl Into<String>) -> TaskOutputInput {
        TaskOutputInput {
            task_id: task_id.into(),
            block: true,
            timeout_ms: TASK_OUTPUT_DEFAULT_TIMEOUT_MS,
            page: None,
        }
    }
}

/// Validates a raw TaskOutput input.
pub fn parse_task_output_input(value: &Value) -> Result<TaskOutputInput, InputError> {
    let object = as_object(value)?;
    reject_unknown(object, &["task_id", "block", "timeout", "offset", "limit"])?;
    let task_id = required_id(object, "task_id")?;
    let offset = byte_count(object, "offset")?;
    let limit = byte_count(object, "limit")?;
    if limit == Some(0) {
        return Err(InputError::WrongType {
            field: "limit",
            expected: "a positive number of bytes",
            got: "0".into(),
        });
    }
    let page = (offset.is_some() || limit.is_some()).then(|| OutputPage {
        offset: offset.unwrap_or(0),
        limit: limit.unwrap_or(PAGE_DEFAULT_BYTES),
    });
    Ok(TaskOutputInput {
        task_id,
        block: flag(object, "block")?.unwrap_or(true),
        timeout_ms: milliseconds(object, "timeout")?
            .unwrap_or(TASK_OUTPUT_DEFAULT_TIMEOUT_MS)
            .min(TASK_OUTPUT_MAX_TIMEOUT_MS),
        page,
    })
}

/// A non-negative whole number of bytes (`5` and `5.0`, not `5.5` or `-1`).
fn byte_count(
    object: &serde_json::Map<String, Value>,
    field: &'static str,
) -> Result<Option<u64>, InputError> {
    match object.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(number)) => number
            .as_u64()
            .or_else(|| {
                number
                    .as_f64()
                    .filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f < u64::MAX as f64)
                    .map(|f| f as u64)
            })
            .map(Some)
            .ok_or_else(|| InputError::WrongType {
                field,
                expected: "a non-negative whole number of bytes",
                got: number.to_string(),
            }),
        Some(other) => Err(InputError::WrongType {
            field,
            expected: "a non-negative whole number of bytes",
            got: other.to_string(),
        }),
    }
}

/// Validates a raw TaskList input: an empty object.
pub fn parse_task_list_input(value: &Value) -> Result<(), InputError> {
    let object = as_object(value)?;
    reject_unknown(object, &[])
}

/// The part of an output file a page read, with where it lies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageRead {
    /// The text (lossy where the bytes are not UTF-8: OUT-6).
    pub text: String,
    /// The first byte read.
    pub start: u64,
    /// One past the last byte read: the next page's offset.
    pub end: u64,
    /// The file's size when it was read.
    pub total: u64,
}

/// Reads `page` of the file at `path`, at most `max_bytes`, never cutting a UTF-8
/// character: a start inside one moves past it, an end inside one moves before it; a
/// page that stops before the end of the file stops after its last whole line.
pub fn read_page(path: &Path, page: OutputPage, max_bytes: u64) -> std::io::Result<PageRead> {
    let mut file = std::fs::File::open(path)?;
    let total = file.metadata()?.len();
    let start = page.offset.min(total);
    let want = page.limit.min(max_bytes).min(total - start);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::with_capacity(usize::try_from(want).unwrap_or(0));
    file.take(want).read_to_end(&mut bytes)?;
    let skip = if start > 0 {
        bytes
            .iter()
            .take(3)
            .take_while(|b| is_continuation(**b))
            .count()
    } else {
        0
    };
    let mut keep = bytes.len();
    if start + (bytes.len() as u64) < total {
        keep -= incomplete_tail(&bytes[skip..]);
        // OUT: a page that stops before the end stops after its last whole line, so
        // no line reaches the model in two halves; the next page starts there. A line
        // longer than the page is cut, at a character.
        if let Some(newline) = bytes[skip..keep].iter().rposition(|b| *b == b'\n') {
            keep = skip + newline + 1;
        }
    }
    let text = String::from_utf8_lossy(&bytes[skip..keep]).into_owned();
    Ok(PageRead {
        text,
        start: start + skip as u64,
        end: start + keep as u64,
        total,
    })
}

fn is_continuation(byte: u8) -> bool {
    byte & 0b1100_0000 == 0b1000_0000
}

/// How many bytes at the end of `bytes` start a character that does not end there.
fn incomplete_tail(bytes: &[u8]) -> usize {
    for back in 1..=bytes.len().min(4) {
        let byte = bytes[bytes.len() - back];
        if is_continuation(byte) {
            continue;
        }
        let width = match byte {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => 1,
        };
        return if width > back { back } else { 0 };
    }
    0
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

/// TaskOutput's description. Where the host has a file-reading tool (`read_tool`) it is
/// deprecated in favour of reading the output file with it (TASK-1); without one — an
/// MCP client, maybe on another machine than the file — it is the way to read output,
/// page by page (MCP-4, SCHEMA-7: no tool is named that the host does not have).
pub fn task_output_description(read_tool: Option<&str>) -> String {
    let mut text = match read_tool {
        Some(read) => format!(
            "DEPRECATED: prefer reading the task's output file (its path is in the result that started the task) with {read}. "
        ),
        None => String::new(),
    };
    text.push_str(
        "Gets the status and output of a background task by its ID. With block=true (default) waits until the task ends or `timeout` ms pass (default 30000, at most 600000); with block=false returns at once. \
         While the task runs you get the start of its output; after it ended, the end. \
         To read any part of the whole output, pass `offset` (bytes from its start: 0 is the first byte) and `limit` (bytes, default 30000): the result says which bytes you got and the offset of the next page. \
         TaskList lists your tasks and their IDs.",
    );
    text
}

/// TaskList's description.
pub fn task_list_description() -> String {
    "Lists your background tasks, running and ended: ID, status, exit code, start time, output size and command. \
     Read one with TaskOutput, stop one with TaskStop."
        .to_owned()
}

/// TaskList's input schema: no parameters.
pub fn task_list_schema() -> Value {
    serde_json::json!({"type": "object", "properties": {}, "additionalProperties": false})
}

/// The TaskList text: one line per task, oldest first.
pub fn task_list_text(tasks: &[crate::TaskInfo]) -> String {
    if tasks.is_empty() {
        return "No background tasks.".to_owned();
    }
    let lines: Vec<String> = tasks
        .iter()
        .map(|task| {
            let exit = task
                .exit_code
                .map_or_else(String::new, |code| format!(", exit code {code}"));
            let size = std::fs::metadata(&task.output_path).map_or(0, |m| m.len());
            let what = task.description.as_deref().unwrap_or(&task.command);
            format!(
                "{} {}{exit}, started {}, {size} bytes of output: {}",
                task.task_id,
                task.status_detail,
                task.started_at,
                one_line(what)
            )
        })
        .collect();
    lines.join("\n")
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
    /// Read the output from this byte on (0 is the first byte); with limit, pages through the whole output
    #[serde(default)]
    offset: u64,
    /// Bytes to read from offset (default 30000)
    #[serde(default)]
    #[schemars(range(min = 1))]
    limit: u64,
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
        "[Showing the last {max_chars} characters of {total_bytes} bytes; the full output is in {} (pass offset and limit to read any part)]\n{}",
        path.display(),
        &text[start..]
    )
}

/// The TaskOutput text; `page` says which bytes `output` is when a page was asked for.
pub fn task_output_text(
    job: &Job,
    retrieval: Retrieval,
    output: &str,
    page: Option<&PageRead>,
) -> String {
    let status = job.status();
    // OUT: only what tells the model something. The retrieval is said when it is not a
    // plain success (`not_ready`, `timeout`); every task is a shell's, so no type. The
    // structured result keeps both fields for hosts.
    let mut text = String::new();
    if !matches!(retrieval, Retrieval::Success) {
        text.push_str(&format!(
            "<retrieval_status>{}</retrieval_status>\n",
            retrieval.word()
        ));
    }
    text.push_str(&format!(
        "<task_id>{}</task_id>\n<status>{}</status>\n",
        job.id(),
        status.word()
    ));
    if let TaskStatus::Stopped(_) = status {
        text.push_str(&format!("<stopped>{}</stopped>\n", status_phrase(status)));
    }
    if let Some(exit) = job.exit() {
        text.push_str(&format!("<exit_code>{}</exit_code>\n", exit.status.code()));
    }
    // A page is shown exactly, so that pages put together are the file.
    let output = if page.is_some() {
        output
    } else {
        output.trim_end_matches('\n')
    };
    text.push_str(&format!(
        "<output_file>{}</output_file>\n",
        job.output_path().display()
    ));
    if let Some(page) = page {
        text.push_str(&format!(
            "<output_bytes>{}-{} of {}</output_bytes>\n",
            page.start, page.end, page.total
        ));
        if page.end < page.total {
            text.push_str(&format!("<next_offset>{}</next_offset>\n", page.end));
        }
    }
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
        assert!(task_output_description(Some("Read")).starts_with("DEPRECATED"));
        assert!(is_task_list("TaskList"));
    }

    #[test]
    fn mcp_4_task_output_is_first_class_without_a_read_tool() {
        let text = task_output_description(None);
        assert!(!text.contains("DEPRECATED"), "{text}");
        assert!(!text.contains("Read"), "SCHEMA-7: {text}");
        assert!(
            text.contains("`offset`") && text.contains("`limit`"),
            "{text}"
        );
        let with = task_output_description(Some("read_file"));
        assert!(with.contains("with read_file."), "{with}");
    }

    #[test]
    fn mcp_4_offset_and_limit() {
        let input =
            parse_task_output_input(&json!({"task_id": "b1", "offset": 10, "limit": 5.0})).unwrap();
        assert_eq!(
            input.page,
            Some(OutputPage {
                offset: 10,
                limit: 5
            })
        );
        let input = parse_task_output_input(&json!({"task_id": "b1", "offset": 7})).unwrap();
        assert_eq!(
            input.page,
            Some(OutputPage {
                offset: 7,
                limit: PAGE_DEFAULT_BYTES
            })
        );
        assert_eq!(
            parse_task_output_input(&json!({"task_id": "b1"}))
                .unwrap()
                .page,
            None
        );
        for bad in [json!(-1), json!(1.5), json!("3"), json!(true)] {
            let err = parse_task_output_input(&json!({"task_id": "b1", "offset": bad}))
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("offset") && err.contains("whole number of bytes"),
                "{err}"
            );
        }
        let err = parse_task_output_input(&json!({"task_id": "b1", "limit": 0})).unwrap_err();
        assert!(err.to_string().contains("positive"), "{err}");
        assert!(parse_task_list_input(&json!({})).is_ok());
        assert!(
            parse_task_list_input(&json!({"x": 1}))
                .unwrap_err()
                .to_string()
                .contains("`x`")
        );
    }

    #[test]
    fn mcp_4_pages_cover_the_file_and_never_cut_a_character() {
        let dir = std::env::temp_dir().join(format!("wavesh-page-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out");
        let content = "aé€😀z\n".repeat(50);
        std::fs::write(&path, &content).unwrap();
        for limit in 1..=9 {
            let mut offset = 0;
            let mut joined = String::new();
            while offset < content.len() as u64 {
                let page = read_page(
                    &path,
                    OutputPage {
                        offset,
                        limit: limit.max(4),
                    },
                    u64::MAX,
                )
                .unwrap();
                assert_eq!(page.start, offset, "limit {limit}");
                assert!(page.end > page.start, "progress at {offset}, limit {limit}");
                assert!(
                    !page.text.contains('\u{FFFD}'),
                    "cut a character: {:?}",
                    page.text
                );
                joined.push_str(&page.text);
                offset = page.end;
            }
            assert_eq!(joined, content, "limit {limit}");
        }
        // An offset inside a character moves past it; past the end reads nothing.
        let inside = read_page(
            &path,
            OutputPage {
                offset: 2,
                limit: 10,
            },
            u64::MAX,
        )
        .unwrap();
        assert_eq!(inside.start, 3);
        assert!(inside.text.starts_with('€'));
        let past = read_page(
            &path,
            OutputPage {
                offset: 1 << 40,
                limit: 10,
            },
            u64::MAX,
        )
        .unwrap();
        assert_eq!(
            (past.text.as_str(), past.end, past.total),
            ("", past.total, content.len() as u64)
        );
        let capped = read_page(
            &path,
            OutputPage {
                offset: 0,
                limit: 1000,
            },
            8,
        )
        .unwrap();
        assert!(capped.end <= 8);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// OUT: a page that stops before the end stops after a whole line; pages still put
    /// together are the file; a line longer than a page is cut at a character.
    #[test]
    fn mcp_4_pages_end_at_whole_lines() {
        let dir = std::env::temp_dir().join(format!("wavesh-lines-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out");
        let content =
            "first line\nsecond, a longer line\nthird\n".repeat(20) + &"x".repeat(300) + "\nlast";
        std::fs::write(&path, &content).unwrap();
        let (mut offset, mut joined, mut pages) = (0, String::new(), Vec::new());
        while offset < content.len() as u64 {
            let page = read_page(&path, OutputPage { offset, limit: 64 }, u64::MAX).unwrap();
            assert!(page.end > page.start, "progress at {offset}");
            joined.push_str(&page.text);
            offset = page.end;
            pages.push(page);
        }
        assert_eq!(joined, content);
        for page in &pages[..pages.len() - 1] {
            let cut_long_line = !page.text.contains('\n');
            assert!(
                page.text.ends_with('\n') || cut_long_line,
                "a page ends mid-line: {:?}",
                page.text
            );
        }
        assert!(
            pages.iter().any(|p| !p.text.contains('\n')),
            "the long line was not cut"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn task_2_keep_tail() {
        let path = Path::new("/tmp/out.log");
        assert_eq!(keep_tail("abc", 5, 3, path), "abc");
        assert_eq!(
            keep_tail("abcdef", 2, 6, path),
            "[Showing the last 2 characters of 6 bytes; the full output is in /tmp/out.log (pass offset and limit to read any part)]\nef"
        );
    }
}
