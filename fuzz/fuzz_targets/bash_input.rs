//! Fuzzes the `Bash` tool input check: any JSON the model sends gets a typed input or an
//! error that names what was wrong, never a panic (SCHEMA-1).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    match wavesh_tool::parse_bash_input(&value) {
        Ok(input) => assert!(
            !input.command.trim().is_empty(),
            "accepted an empty command: {value}"
        ),
        Err(error) => assert!(
            !error.to_string().trim().is_empty(),
            "an error without words: {value}"
        ),
    }
});
