//! Fuzzes the tool input checks (`Bash`, `TaskOutput`, `TaskStop`): any JSON the model
//! sends gets a typed input or an error that names what was wrong, never a panic
//! (SCHEMA-1).
#![no_main]

use libfuzzer_sys::fuzz_target;
use wavesh_tool::task_tools::{parse_task_output_input, parse_task_stop_input};

fn named<T>(result: Result<T, wavesh_tool::InputError>, value: &serde_json::Value) -> Option<T> {
    match result {
        Ok(input) => Some(input),
        Err(error) => {
            assert!(
                !error.to_string().trim().is_empty(),
                "an error without words: {value}"
            );
            None
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    if let Some(input) = named(wavesh_tool::parse_bash_input(&value), &value) {
        assert!(
            !input.command.trim().is_empty() && !input.command.contains('\0'),
            "accepted an empty command or a NUL byte: {value}"
        );
    }
    if let Some(input) = named(parse_task_output_input(&value), &value) {
        assert!(!input.task_id.is_empty(), "accepted an empty task id: {value}");
    }
    if let Some(input) = named(parse_task_stop_input(&value), &value) {
        assert!(!input.task_id.is_empty(), "accepted an empty task id: {value}");
    }
});
