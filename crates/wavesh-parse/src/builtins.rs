//! Builtins that evaluate some of their arguments as code: bash runs the subscript of a
//! name like `a[$(id)]` (and every argument of `let`) through arithmetic evaluation,
//! which expands command substitutions, even when the word was single-quoted. Such
//! arguments are marked dynamic, so the command is never permission safe (RO-13).

use crate::word::{Dynamic, Word};

/// Builtins whose name arguments may carry an evaluated subscript.
const NAME_TAKERS: &[&str] = &[
    "read",
    "declare",
    "typeset",
    "local",
    "export",
    "readonly",
    "unset",
    "mapfile",
    "readarray",
    "wait",
    "getopts",
];

fn mark(word: &mut Word, builtin: &'static str) {
    if word.dynamic.is_none() {
        word.dynamic = Some(Dynamic::Evaluated(builtin));
    }
}

/// Marks the arguments of `argv` that its builtin evaluates.
pub(crate) fn mark_evaluated(argv: &mut [Word]) {
    let Some((name, args)) = argv.split_first_mut() else {
        return;
    };
    if !name.is_static() {
        return;
    }
    let subscript = |w: &Word| w.value.contains('[');
    match name.value.as_str() {
        "let" => args.iter_mut().for_each(|w| mark(w, "let")),
        "printf" => {
            // Only the leading options: `-v NAME` or `-vNAME`; the format is literal.
            let mut i = 0;
            while i < args.len() {
                let value = args[i].value.clone();
                if value == "--" || !value.starts_with('-') {
                    break;
                }
                if value == "-v" {
                    if let Some(next) = args.get_mut(i + 1)
                        && subscript(next)
                    {
                        mark(next, "printf -v");
                    }
                    i += 2;
                    continue;
                }
                if value.starts_with("-v") && subscript(&args[i]) {
                    mark(&mut args[i], "printf -v");
                }
                i += 1;
            }
        }
        builtin @ ("test" | "[") => {
            let builtin = if builtin == "test" { "test -v" } else { "[ -v" };
            for i in 1..args.len() {
                if matches!(args[i - 1].value.as_str(), "-v" | "-R") && subscript(&args[i]) {
                    mark(&mut args[i], builtin);
                }
            }
        }
        other => {
            if let Some(builtin) = NAME_TAKERS.iter().find(|b| **b == other) {
                for word in args.iter_mut().filter(|w| subscript(w)) {
                    mark(word, builtin);
                }
            }
        }
    }
}
