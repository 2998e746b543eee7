//! The one place that prints: stdout carries the result, stderr notes and errors.
#![expect(clippy::print_stderr, reason = "the binary's output module")]

use std::io::Write;

/// Prints `text` and a newline on stdout. A closed stdout (`| head`) is not an error.
pub fn stdout_line(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}").and_then(|()| out.flush());
}

/// A note for the user on stderr.
pub fn note(text: &str) {
    eprintln!("{text}");
}

/// An error on stderr.
pub fn error(text: &str) {
    eprintln!("wavesh: {text}");
}
