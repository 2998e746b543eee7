//! The `Bash` tool's input: a strict object, checked by hand so that every mistake gets
//! an error naming the field (SCHEMA-1, SCHEMA-2, SCHEMA-4).

use serde_json::{Map, Value};

/// A validated `Bash` call.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BashInput {
    /// The command text.
    pub command: String,
    /// Foreground timeout in whole milliseconds, as given (fractions truncated).
    pub timeout_ms: Option<u64>,
    /// What the command does, in a few words, for the user.
    pub description: Option<String>,
    /// Start as a background task.
    pub run_in_background: bool,
    /// Run outside the sandbox (SBX); such a call is never auto-approved (SCHEMA-1).
    pub dangerously_disable_sandbox: bool,
    /// Run in a pseudo-terminal as a task from the start (PTY-1).
    pub tty: bool,
}

impl BashInput {
    /// A call with just a command.
    pub fn new(command: impl Into<String>) -> BashInput {
        BashInput {
            command: command.into(),
            ..BashInput::default()
        }
    }
}

/// The fields `Bash` accepts.
pub const BASH_FIELDS: &[&str] = &[
    "command",
    "timeout",
    "description",
    "run_in_background",
    "dangerouslyDisableSandbox",
    "tty",
];

/// What is wrong with a tool input. Messages name the field and what was given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    /// The input is not a JSON object.
    #[error("input must be a JSON object, got {got}")]
    NotAnObject {
        /// The JSON type that was given.
        got: &'static str,
    },
    /// A key the tool does not know.
    #[error("unknown parameter `{key}` (accepted: {accepted})")]
    UnknownKey {
        /// The key.
        key: String,
        /// The accepted keys, for the message.
        accepted: String,
    },
    /// A required field is absent.
    #[error("missing required parameter `{0}`")]
    Missing(&'static str),
    /// A field has the wrong JSON type.
    #[error("parameter `{field}` must be {expected}, got {got}")]
    WrongType {
        /// The field.
        field: &'static str,
        /// What it must be.
        expected: &'static str,
        /// What was given.
        got: String,
    },
    /// `command` is empty or only whitespace.
    #[error("parameter `command` is empty: give the shell command to run")]
    EmptyCommand,
    /// `command` holds a NUL byte, which no shell can run.
    #[error(
        "parameter `command` contains a NUL byte at offset {0}; a shell command cannot contain NUL"
    )]
    NulInCommand(usize),
}

/// Validates a raw `Bash` input.
pub fn parse_bash_input(value: &Value) -> Result<BashInput, InputError> {
    let object = as_object(value)?;
    reject_unknown(object, BASH_FIELDS)?;
    let command = match object.get("command") {
        None | Some(Value::Null) => return Err(InputError::Missing("command")),
        Some(Value::String(command)) => command.clone(),
        Some(other) => return Err(wrong_type("command", "a string", other)),
    };
    if command.trim().is_empty() {
        return Err(InputError::EmptyCommand);
    }
    if let Some(offset) = command.find('\0') {
        return Err(InputError::NulInCommand(offset));
    }
    Ok(BashInput {
        command,
        timeout_ms: milliseconds(object, "timeout")?,
        description: optional_string(object, "description")?,
        run_in_background: flag(object, "run_in_background")?.unwrap_or(false),
        dangerously_disable_sandbox: flag(object, "dangerouslyDisableSandbox")?.unwrap_or(false),
        tty: flag(object, "tty")?.unwrap_or(false),
    })
}

pub(crate) fn as_object(value: &Value) -> Result<&Map<String, Value>, InputError> {
    value.as_object().ok_or(InputError::NotAnObject {
        got: type_name(value),
    })
}

pub(crate) fn reject_unknown(
    object: &Map<String, Value>,
    accepted: &[&str],
) -> Result<(), InputError> {
    match object.keys().find(|key| !accepted.contains(&key.as_str())) {
        Some(key) => Err(InputError::UnknownKey {
            key: key.clone(),
            accepted: accepted.join(", "),
        }),
        None => Ok(()),
    }
}

/// A boolean field that also accepts "true"/"yes"/"1"/"on" and "false"/"no"/"0"/"off" in
/// any case (SCHEMA-2). `null` counts as absent.
pub(crate) fn flag(
    object: &Map<String, Value>,
    field: &'static str,
) -> Result<Option<bool>, InputError> {
    match object.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(value)) => Ok(Some(*value)),
        Some(Value::String(text)) => match text.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "1" | "on" => Ok(Some(true)),
            "false" | "no" | "0" | "off" => Ok(Some(false)),
            _ => Err(wrong_type(
                field,
                "a boolean (or \"true\"/\"false\")",
                &Value::String(text.clone()),
            )),
        },
        Some(other) => Err(wrong_type(field, "a boolean", other)),
    }
}

/// A millisecond count: a non-negative number, fractions truncated, with no upper bound
/// (SCHEMA-4). The error never claims a maximum.
pub(crate) fn milliseconds(
    object: &Map<String, Value>,
    field: &'static str,
) -> Result<Option<u64>, InputError> {
    const EXPECTED: &str = "a non-negative number of milliseconds";
    match object.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(number)) => {
            if let Some(whole) = number.as_u64() {
                Ok(Some(whole))
            } else if let Some(float) = number.as_f64()
                && float >= 0.0
                && float.is_finite()
            {
                // `as` saturates: 1e300 becomes u64::MAX, i.e. "effectively never".
                Ok(Some(float.trunc() as u64))
            } else {
                Err(wrong_type(field, EXPECTED, &Value::Number(number.clone())))
            }
        }
        Some(other) => Err(wrong_type(field, EXPECTED, other)),
    }
}

pub(crate) fn optional_string(
    object: &Map<String, Value>,
    field: &'static str,
) -> Result<Option<String>, InputError> {
    match object.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(other) => Err(wrong_type(field, "a string", other)),
    }
}

fn wrong_type(field: &'static str, expected: &'static str, got: &Value) -> InputError {
    let shown = match got {
        Value::String(text) => format!("the string {}", Value::String(truncate(text, 40))),
        Value::Number(number) => format!("the number {number}"),
        other => type_name(other).to_owned(),
    };
    InputError::WrongType {
        field,
        expected,
        got: shown,
    }
}

fn truncate(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(value: Value) -> Result<BashInput, String> {
        parse_bash_input(&value).map_err(|e| e.to_string())
    }

    #[test]
    fn schema_1_full_input() {
        let input = parse(json!({
            "command": "ls", "timeout": 5000, "description": "list",
            "run_in_background": true, "dangerouslyDisableSandbox": false
        }))
        .unwrap();
        assert_eq!(input.command, "ls");
        assert_eq!(input.timeout_ms, Some(5000));
        assert_eq!(input.description.as_deref(), Some("list"));
        assert!(input.run_in_background);
    }

    #[test]
    fn schema_1_unknown_key_is_named() {
        let err = parse(json!({"command": "ls", "cwd": "/tmp"})).unwrap_err();
        assert!(err.contains("unknown parameter `cwd`"), "{err}");
    }

    #[test]
    fn schema_1_missing_or_mistyped_command() {
        assert_eq!(
            parse(json!({})).unwrap_err(),
            "missing required parameter `command`"
        );
        let err = parse(json!({"command": 5})).unwrap_err();
        assert_eq!(
            err,
            "parameter `command` must be a string, got the number 5"
        );
        assert!(
            parse(json!("ls"))
                .unwrap_err()
                .contains("must be a JSON object")
        );
        assert!(
            parse(json!({"command": "  \n"}))
                .unwrap_err()
                .contains("empty")
        );
        assert!(
            parse(json!({"command": "echo a\u{0}b"}))
                .unwrap_err()
                .contains("NUL byte at offset 6")
        );
    }

    #[test]
    fn schema_1_fractional_timeout_is_truncated() {
        assert_eq!(
            parse(json!({"command": "x", "timeout": 1500.9}))
                .unwrap()
                .timeout_ms,
            Some(1500)
        );
    }

    #[test]
    fn schema_2_string_booleans() {
        for (text, expected) in [
            ("true", true),
            ("YES", true),
            ("1", true),
            ("On", true),
            ("false", false),
            ("no", false),
            ("0", false),
            ("OFF", false),
        ] {
            let input = parse(json!({"command": "x", "run_in_background": text})).unwrap();
            assert_eq!(input.run_in_background, expected, "{text}");
            let input = parse(json!({"command": "x", "dangerouslyDisableSandbox": text})).unwrap();
            assert_eq!(input.dangerously_disable_sandbox, expected, "{text}");
        }
        let err = parse(json!({"command": "x", "run_in_background": "maybe"})).unwrap_err();
        assert!(
            err.contains("`run_in_background` must be a boolean"),
            "{err}"
        );
    }

    #[test]
    fn schema_4_timeout_range() {
        assert_eq!(
            parse(json!({"command": "x", "timeout": 0}))
                .unwrap()
                .timeout_ms,
            Some(0)
        );
        assert_eq!(
            parse(json!({"command": "x", "timeout": 900000}))
                .unwrap()
                .timeout_ms,
            Some(900_000)
        );
        for bad in [
            json!(-1),
            json!("abc"),
            json!(-0.5),
            json!(true),
            json!([1]),
        ] {
            let err = parse(json!({"command": "x", "timeout": bad})).unwrap_err();
            assert!(
                err.starts_with("parameter `timeout` must be a non-negative number"),
                "{err}"
            );
            assert!(!err.contains("600000") && !err.contains("600,000"), "{err}");
        }
    }
}
