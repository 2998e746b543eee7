//! The text the model reads: inline output or the `<persisted-output>` envelope (OUT-1),
//! exit-code meanings (OUT-3), and the fixed messages of EXEC, BG and CWD.
//!
//! Output is decoded lossily for the model (OUT-6: the file keeps every byte) and ANSI
//! escapes are kept as written (OUT-2).

use std::io;
use std::path::Path;

use wavesh_exec::OutputFile;

use crate::config::PREVIEW_CHARS;
use wavesh_parse::{Analysis, Connector};

/// The output as the model will see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelOutput {
    /// The whole output fits: here it is.
    Inline(String),
    /// Too large: the file is kept and this envelope stands in.
    Persisted {
        /// The `<persisted-output>` text.
        envelope: String,
        /// Total size in bytes.
        total_bytes: u64,
    },
}

/// Reads `output` for the model: inline up to `max_chars` characters, else the envelope
/// with the first and last [`PREVIEW_CHARS`] characters. Reads at most a bounded amount,
/// whatever the file's size.
pub fn read_output(output: &OutputFile, max_chars: usize) -> io::Result<ModelOutput> {
    let total_bytes = output.len()?;
    // A character is at most 4 bytes in UTF-8 (and every invalid byte becomes one
    // replacement character), so a file within 4 × the limit may still fit.
    let fits_bound = (max_chars as u64).saturating_mul(4);
    if total_bytes <= fits_bound {
        let bytes = output.read_head(total_bytes)?;
        let text = String::from_utf8_lossy(&bytes);
        if text.chars().count() <= max_chars {
            return Ok(ModelOutput::Inline(text.into_owned()));
        }
    }
    let preview_bytes = (PREVIEW_CHARS as u64) * 4 + 4;
    let head = String::from_utf8_lossy(&output.read_head(preview_bytes)?).into_owned();
    let tail_bytes = output.read_tail(preview_bytes)?;
    let tail = String::from_utf8_lossy(skip_partial_char(&tail_bytes)).into_owned();
    Ok(ModelOutput::Persisted {
        envelope: persisted_envelope(
            total_bytes,
            output.path(),
            first_chars(&head, PREVIEW_CHARS),
            last_chars(&tail, PREVIEW_CHARS),
        ),
        total_bytes,
    })
}

/// The envelope of OUT-1.
pub fn persisted_envelope(total_bytes: u64, path: &Path, head: &str, tail: &str) -> String {
    let tail = tail.strip_suffix('\n').unwrap_or(tail);
    format!(
        "<persisted-output>\nOutput too large ({total_bytes} bytes). Full output saved to: {}\n\n\
         Preview (first {PREVIEW_CHARS} characters):\n{head}\n…\n\n\
         Preview (last {PREVIEW_CHARS} characters):\n{tail}\n</persisted-output>",
        path.display()
    )
}

/// A tail read from the middle of a file may start inside a UTF-8 sequence: skip its
/// continuation bytes (at most 3) so no half character is shown.
fn skip_partial_char(bytes: &[u8]) -> &[u8] {
    let skip = bytes
        .iter()
        .take(3)
        .take_while(|b| (**b & 0b1100_0000) == 0b1000_0000)
        .count();
    &bytes[skip..]
}

fn first_chars(text: &str, n: usize) -> &str {
    match text.char_indices().nth(n) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}

fn last_chars(text: &str, n: usize) -> &str {
    let count = text.chars().count();
    if count <= n {
        return text;
    }
    match text.char_indices().nth(count - n) {
        Some((start, _)) => &text[start..],
        None => text,
    }
}

/// What a non-zero exit code means (OUT-3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExitMeaning {
    /// Not an error: the message says what it means.
    Expected(&'static str),
    /// An error, shown as `Exit code N`, with an optional hint after it.
    Error {
        /// Extra explanation for the model.
        hint: Option<&'static str>,
    },
}

/// The hint for a grep that read the empty stdin (EXEC-3, OUT-3).
pub const GREP_STDIN_HINT: &str = "grep read its standard input, which is empty (/dev/null) for every command: give it a file or directory to search (add -r for directories).";

/// Interprets `code` by the last command of the chain, read from the call's analysis
/// (the one the decision used). A command that did not parse gets no meaning of its own.
pub fn exit_meaning(analysis: &Analysis, code: i32) -> ExitMeaning {
    if code == 0 {
        return ExitMeaning::Expected("");
    }
    // Inside a construct the analysis does not descend into (`a &`, a subshell, a loop)
    // the last command is not known.
    if code != 1 || analysis.failure.is_some() || !analysis.unsupported.is_empty() {
        return ExitMeaning::Error { hint: None };
    }
    let Some(last) = analysis.commands.iter().rev().find(|c| !c.argv.is_empty()) else {
        return ExitMeaning::Error { hint: None };
    };
    let argv: Vec<String> = last.argv.iter().map(|w| w.value.clone()).collect();
    let name = base_name(&argv[0]);
    let sub = argv.get(1).map(String::as_str);
    match (name, sub) {
        ("grep" | "egrep" | "fgrep", _) => {
            let piped = matches!(last.connector, Connector::Pipe | Connector::PipeBoth);
            if !piped
                && !last.redirects.iter().any(|r| r.is_input())
                && grep_reads_stdin(&argv[1..])
            {
                ExitMeaning::Error {
                    hint: Some(GREP_STDIN_HINT),
                }
            } else {
                ExitMeaning::Expected("No matches found")
            }
        }
        // rg with no path and a non-readable stdin (/dev/null is a character device)
        // searches the working directory, so exit 1 always means "no matches".
        ("rg", _) | ("git", Some("grep")) => ExitMeaning::Expected("No matches found"),
        ("diff", _) | ("git", Some("diff")) => ExitMeaning::Expected("Files differ"),
        ("find", _) => ExitMeaning::Expected("Some directories were inaccessible"),
        ("test" | "[", _) => ExitMeaning::Expected("Condition is false"),
        _ => ExitMeaning::Error { hint: None },
    }
}

fn base_name(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// Whether a grep argv (without the name) has no file operand and no recursion, so it
/// read stdin. Options that take a value are skipped with their value.
fn grep_reads_stdin(args: &[String]) -> bool {
    const WITH_VALUE: &[&str] = &[
        "-e",
        "-f",
        "-m",
        "-A",
        "-B",
        "-C",
        "-d",
        "-D",
        "--regexp",
        "--file",
        "--max-count",
        "--after-context",
        "--before-context",
        "--context",
        "--directories",
        "--devices",
        "--include",
        "--exclude",
        "--exclude-dir",
        "--exclude-from",
        "--label",
        "--color",
        "--colour",
        "--binary-files",
    ];
    let mut positionals = 0usize;
    let mut pattern_given = false;
    let mut iter = args.iter();
    let mut options_done = false;
    while let Some(arg) = iter.next() {
        if options_done || arg == "-" || !arg.starts_with('-') {
            positionals += 1;
            continue;
        }
        if arg == "--" {
            options_done = true;
            continue;
        }
        if arg.starts_with("--") {
            let name = arg.split('=').next().unwrap_or(arg);
            if matches!(name, "--recursive" | "--dereference-recursive") {
                return false;
            }
            if matches!(name, "--regexp" | "--file") {
                pattern_given = true;
            }
            if WITH_VALUE.contains(&name) && !arg.contains('=') {
                iter.next();
            }
            continue;
        }
        // A short cluster such as `-rn` or `-e PATTERN` / `-ePATTERN`.
        let letters: Vec<char> = arg[1..].chars().collect();
        for (i, letter) in letters.iter().enumerate() {
            match letter {
                'r' | 'R' => return false,
                'e' | 'f' | 'm' | 'A' | 'B' | 'C' | 'd' | 'D' => {
                    if matches!(letter, 'e' | 'f') {
                        pattern_given = true;
                    }
                    if i + 1 == letters.len() {
                        iter.next();
                    }
                    break;
                }
                _ => {}
            }
        }
    }
    let files = if pattern_given {
        positionals
    } else {
        positionals.saturating_sub(1)
    };
    files == 0
}

/// `N` of `(Ns)`: the timeout in seconds without trailing zeros (EXEC-4).
pub fn seconds(timeout_ms: u64) -> String {
    let whole = timeout_ms / 1000;
    let fraction = timeout_ms % 1000;
    if fraction == 0 {
        return whole.to_string();
    }
    let digits = format!("{fraction:03}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

/// EXEC-4: the line after the output of a command killed at its deadline.
/// The exact sentence of EXEC-4 comes first; the second says why it was stopped rather
/// than moved, and what to do instead.
pub fn timeout_killed(timeout_ms: u64) -> String {
    format!(
        "Command exceeded the timeout ({}s) and was stopped. A command that starts with \
         `sleep` is stopped at its timeout instead of moving to the background: to wait \
         longer, give a larger timeout, or start the work with run_in_background and read \
         it later with TaskOutput.",
        seconds(timeout_ms)
    )
}

/// EXEC-6: the line after the output of an aborted command.
pub const ABORTED: &str = "<error>Command was aborted before completion</error>";

/// BG-5, explicit start.
pub fn background_explicit(task_id: &str, output_path: &Path) -> String {
    format!(
        "Command running in background with ID: {task_id}. Output is being written to: {}",
        output_path.display()
    )
}

/// BG-5, moved at the deadline.
pub fn background_timeout(timeout_ms: u64, task_id: &str, output_path: &Path) -> String {
    format!(
        "Command exceeded the timeout ({}s) and was moved to the background with ID: {task_id}. \
         It is still running — you will be notified when it completes. Output is being written to: {}",
        seconds(timeout_ms),
        output_path.display()
    )
}

/// BG-5, moved by the user.
pub fn background_user(task_id: &str, output_path: &Path) -> String {
    format!(
        "Command was manually backgrounded by user with ID: {task_id}. Output is being written to: {}",
        output_path.display()
    )
}

/// BG-6, moved at the assistant-mode blocking budget.
pub fn background_assistant(budget_ms: u64, task_id: &str, output_path: &Path) -> String {
    format!(
        "Command exceeded the assistant-mode blocking budget ({}s) and was moved to the background with ID: {task_id}. \
         It is still running — you will be notified when it completes. Output is being written to: {}",
        seconds(budget_ms),
        output_path.display()
    )
}

/// MCP-5, moved at the client's wait budget: the client would have given up on the
/// call, so its answer comes now, with the task id.
pub fn background_client_budget(budget_ms: u64, task_id: &str, output_path: &Path) -> String {
    format!(
        "Command was still running when the client's wait limit ({}s) came and was moved to the background with ID: {task_id}. \
         It is still running — you will be notified when it completes. Output is being written to: {}",
        seconds(budget_ms),
        output_path.display()
    )
}

/// BG-8: the line after the output of a foreground command stopped at the output cap.
pub fn output_cap_stopped(cap_bytes: u64) -> String {
    format!("Command was stopped: its output reached the output cap of {cap_bytes} bytes.")
}

/// CWD-2.
pub fn cwd_changed(dir: &Path) -> String {
    format!("Shell working directory changed to {}", dir.display())
}

/// CWD-3.
pub fn cwd_reset(dir: &Path) -> String {
    format!("Shell cwd was reset to {}", dir.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(command: &str) -> Analysis {
        wavesh_parse::analyze(command, wavesh_parse::Dialect::Bash)
    }

    #[test]
    fn exec_4_seconds_without_trailing_zeros() {
        assert_eq!(seconds(1000), "1");
        assert_eq!(seconds(2500), "2.5");
        assert_eq!(seconds(1234), "1.234");
        assert_eq!(seconds(120_000), "120");
        assert_eq!(seconds(0), "0");
        assert_eq!(seconds(50), "0.05");
    }

    #[test]
    fn out_3_meanings_read_from_the_analysis() {
        let no_match = ExitMeaning::Expected("No matches found");
        let hint = ExitMeaning::Error {
            hint: Some(GREP_STDIN_HINT),
        };
        assert_eq!(exit_meaning(&parsed("grep foo < file"), 1), no_match);
        assert_eq!(exit_meaning(&parsed("grep foo <<< 'a b'"), 1), no_match);
        assert_eq!(exit_meaning(&parsed("cat x |& grep foo"), 1), no_match);
        assert_eq!(exit_meaning(&parsed("grep foo # a comment"), 1), hint);
        assert_eq!(
            exit_meaning(&parsed("cat <<EOF\nx\nEOF\ngrep y f"), 1),
            no_match
        );
        assert_eq!(
            exit_meaning(&parsed("X=1 /usr/bin/diff a b"), 1),
            ExitMeaning::Expected("Files differ")
        );
        // A command that does not parse has no meaning of its own.
        assert_eq!(
            exit_meaning(&parsed("grep 'foo"), 1),
            ExitMeaning::Error { hint: None }
        );
    }

    #[test]
    fn out_3_meanings() {
        assert_eq!(
            exit_meaning(&parsed("grep foo file.txt"), 1),
            ExitMeaning::Expected("No matches found")
        );
        assert_eq!(
            exit_meaning(&parsed("ls | grep foo"), 1),
            ExitMeaning::Expected("No matches found")
        );
        assert_eq!(
            exit_meaning(&parsed("rg foo"), 1),
            ExitMeaning::Expected("No matches found")
        );
        assert_eq!(
            exit_meaning(&parsed("diff a b"), 1),
            ExitMeaning::Expected("Files differ")
        );
        assert_eq!(
            exit_meaning(&parsed("git diff --exit-code"), 1),
            ExitMeaning::Expected("Files differ")
        );
        assert_eq!(
            exit_meaning(&parsed("git grep x"), 1),
            ExitMeaning::Expected("No matches found")
        );
        assert_eq!(
            exit_meaning(&parsed("find / -name x"), 1),
            ExitMeaning::Expected("Some directories were inaccessible")
        );
        assert_eq!(
            exit_meaning(&parsed("test -f x"), 1),
            ExitMeaning::Expected("Condition is false")
        );
        assert_eq!(
            exit_meaning(&parsed("[ -f x ]"), 1),
            ExitMeaning::Expected("Condition is false")
        );
        assert_eq!(
            exit_meaning(&parsed("grep foo file.txt"), 2),
            ExitMeaning::Error { hint: None }
        );
        assert_eq!(
            exit_meaning(&parsed("grep foo file.txt; false"), 1),
            ExitMeaning::Error { hint: None }
        );
        assert_eq!(
            exit_meaning(&parsed("false && grep foo x"), 1),
            ExitMeaning::Expected("No matches found")
        );
    }

    #[test]
    fn out_3_grep_on_empty_stdin_is_an_error_with_a_hint() {
        let hint = ExitMeaning::Error {
            hint: Some(GREP_STDIN_HINT),
        };
        assert_eq!(exit_meaning(&parsed("grep foo"), 1), hint);
        assert_eq!(exit_meaning(&parsed("grep -n -e foo"), 1), hint);
        assert_eq!(exit_meaning(&parsed("grep -i foo"), 1), hint);
        assert_eq!(
            exit_meaning(&parsed("grep -r foo"), 1),
            ExitMeaning::Expected("No matches found")
        );
        assert_eq!(
            exit_meaning(&parsed("grep -rn foo"), 1),
            ExitMeaning::Expected("No matches found")
        );
        assert_eq!(
            exit_meaning(&parsed("grep -e foo src"), 1),
            ExitMeaning::Expected("No matches found")
        );
        assert_eq!(
            exit_meaning(&parsed("grep foo < f"), 1),
            ExitMeaning::Expected("No matches found")
        );
        assert_eq!(
            exit_meaning(&parsed("grep -A 3 foo file"), 1),
            ExitMeaning::Expected("No matches found")
        );
    }

    #[test]
    fn out_1_tail_never_starts_inside_a_character() {
        let bytes = "é€x".as_bytes();
        assert_eq!(
            String::from_utf8_lossy(skip_partial_char(&bytes[1..])),
            "€x"
        );
        assert_eq!(last_chars("abcdef", 2), "ef");
        assert_eq!(first_chars("abcdef", 2), "ab");
        assert_eq!(first_chars("ab", 5), "ab");
    }
}
