//! Prefix environment assignments (RO-12): only inert names with static values.

use crate::Reason;
use wavesh_parse::Word;

/// Names whose value cannot make a read-only command write or run anything.
const INERT: &[&str] = &[
    "LANG",
    "LANGUAGE",
    "TZ",
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "TERM",
    "COLUMNS",
    "LINES",
    "COLORTERM",
    "GREP_COLOR",
    "GREP_COLORS",
    "LS_COLORS",
    "TIME_STYLE",
    "QUOTING_STYLE",
    "BLOCK_SIZE",
    "POSIXLY_CORRECT",
    "RUST_BACKTRACE",
    "RUST_LOG",
    "CI",
    "DEBUG",
    "VERBOSE",
];

/// Whether `NAME=value` may precede a read-only command.
pub fn check_assignment(name: &str, value: &Word) -> Result<(), Reason> {
    if !value.is_static() {
        return Err(crate::refuse!(
            "the assignment `{name}=` has a dynamic value"
        ));
    }
    if is_inert_name(name) {
        Ok(())
    } else {
        Err(crate::refuse!(
            "the assignment `{name}=…` may change what the command runs or writes"
        ))
    }
}

/// Whether a variable of this name cannot make a read-only command write or run anything.
pub fn is_inert_name(name: &str) -> bool {
    INERT.contains(&name) || name.starts_with("LC_")
}

/// Whether an assignment is inert (for rules and prefixes, RULE-2b, PREFIX-1).
pub fn is_inert(name: &str, value: &Word) -> bool {
    check_assignment(name, value).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use wavesh_parse::{Dialect, evaluate};

    #[test]
    fn ro_12_inert_names_only() {
        let value = evaluate("C", Dialect::Bash);
        for ok in [
            "LANG", "LC_ALL", "LC_CTYPE", "TZ", "NO_COLOR", "TERM", "COLUMNS",
        ] {
            assert!(check_assignment(ok, &value).is_ok(), "{ok}");
        }
        for bad in [
            "PATH",
            "HOME",
            "IFS",
            "LD_PRELOAD",
            "LD_LIBRARY_PATH",
            "DYLD_INSERT_LIBRARIES",
            "GIT_DIR",
            "GIT_PAGER",
            "PAGER",
            "EDITOR",
            "VISUAL",
            "LESSOPEN",
            "BASH_ENV",
            "ENV",
            "PS4",
            "PROMPT_COMMAND",
            "FOO",
        ] {
            assert!(check_assignment(bad, &value).is_err(), "{bad}");
        }
        assert!(check_assignment("LANG", &evaluate("$X", Dialect::Bash)).is_err());
    }
}
