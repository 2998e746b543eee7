//! `wavesh run`: foreground execution end to end through the real binary.

use std::io::Write;
use std::process::Stdio;
use std::time::Duration;

use crate::util::{
    Workspace, digit_marker, kill_group, live_pids_with, signal_and_expect_tree_gone, wait_until,
};

#[test]
fn exec_1_exit_code_and_interleaved_output() {
    let ws = Workspace::new();
    let (run, json) = ws.run_json(&[], "echo out; echo err >&2; exit 3");
    let text = json["text"].as_str().unwrap();
    assert!(text.starts_with("Exit code 3\n"), "{run}");
    let (out, err) = (text.find("out").unwrap(), text.find("err").unwrap());
    assert!(out < err, "{run}");
    assert_eq!(json["is_error"], true);
    assert_eq!(json["exit_code"], 3);
    assert_eq!(run.code(), Some(3), "{run}");
}

#[test]
fn out_3_grep_without_match_is_not_an_error() {
    let ws = Workspace::new();
    let (run, json) = ws.run_json(&[], "grep nomatch-zzz /etc/hostname");
    assert_eq!(json["is_error"], false, "{run}");
    assert!(
        json["text"].as_str().unwrap().contains("No matches found"),
        "{run}"
    );
    assert_eq!(json["returnCodeInterpretation"], "No matches found");
}

#[test]
fn out_3_grep_on_empty_stdin_says_so() {
    let ws = Workspace::new();
    let (run, json) = ws.run_json(&[], "grep needle");
    let text = json["text"].as_str().unwrap();
    assert!(text.starts_with("Exit code 1"), "{run}");
    assert!(text.contains("standard input, which is empty"), "{run}");
}

#[test]
fn shell_1_bash_syntax_works_where_sh_is_dash() {
    let ws = Workspace::new();
    let run = ws.run(&[], "comm -23 <(echo a) <(echo b)");
    assert_eq!(run.stdout(), "a\n", "{run}");
    let run = ws.run(&[], "[[ -n x ]] && arr=(1 2 3) && echo ${#arr[@]}");
    assert_eq!(run.stdout(), "3\n", "{run}");
}

#[test]
fn shell_2_wave_shell_zsh() {
    let Some(zsh) = crate::util::zsh() else {
        return;
    };
    let ws = Workspace::new();
    let mut cmd = ws.wavesh();
    cmd.env("WAVE_SHELL", zsh)
        .args(["run", "--", "echo $ZSH_VERSION; cd /tmp && pwd"]);
    let run = crate::util::Run::of(cmd);
    let lines: Vec<&str> = run
        .output
        .stdout
        .split(|b| *b == b'\n')
        .map(|l| std::str::from_utf8(l).unwrap())
        .collect();
    assert!(
        !lines[0].is_empty() && lines[0].chars().next().unwrap().is_ascii_digit(),
        "{run}"
    );
    // The directory read-back works under zsh too.
    assert!(run.stdout().contains("Shell cwd was reset to"), "{run}");
}

#[test]
fn shell_2_unusable_wave_shell_is_a_clear_error() {
    let ws = Workspace::new();
    for (value, expected) in [
        ("/bin/sh", "neither bash nor zsh"),
        ("/usr/bin/python3", "neither bash nor zsh"),
        ("/nonexistent/zsh", "not an executable file"),
    ] {
        let mut cmd = ws.wavesh();
        cmd.env("WAVE_SHELL", value).args(["run", "--", "echo ran"]);
        let run = crate::util::Run::of(cmd);
        assert_eq!(run.code(), Some(2), "{run}");
        assert!(
            run.stderr().contains(expected) && run.stderr().contains(value),
            "{run}"
        );
        assert!(!run.stdout().contains("ran"), "{run}");
        // --json answers in JSON, naming the reason.
        let mut cmd = ws.wavesh();
        cmd.env("WAVE_SHELL", value)
            .args(["run", "--json", "--", "echo ran"]);
        let run = crate::util::Run::of(cmd);
        let json: serde_json::Value = serde_json::from_str(run.stdout().trim())
            .unwrap_or_else(|e| panic!("no JSON ({e}): {run}"));
        assert_eq!(json["is_error"], true, "{run}");
        assert!(
            json["error"].as_str().is_some_and(|e| e.contains(expected)),
            "{run}"
        );
    }
}

#[test]
fn exec_3_stdin_is_dev_null() {
    let ws = Workspace::new();
    let (run, json) = ws.run_json(&["--timeout", "20000"], "cat; read x; echo \"[$x]\"");
    assert_eq!(json["text"], "[]", "{run}");
    assert_eq!(json["status"], "completed", "{run}");
    assert!(run.elapsed < Duration::from_secs(10), "{run}");
    // Here-docs still work.
    let run = ws.run(&[], "cat <<'EOF'\nline one\nEOF");
    assert_eq!(run.stdout(), "line one\n", "{run}");
}

fn expected_big_output() -> Vec<u8> {
    let mut bytes = b"\x1b[31mred\x1b[0m\n\xff\xfe".to_vec();
    let body: Vec<u8> = b"0123456789abcdef\n"
        .iter()
        .copied()
        .cycle()
        .take(199_000)
        .collect();
    bytes.extend(body);
    bytes.extend(b"TAIL-END");
    bytes
}

const BIG_COMMAND: &str = "printf '\\033[31mred\\033[0m\\n\\377\\376'; yes 0123456789abcdef | head -c 199000; printf TAIL-END";

#[test]
fn out_1_large_output_is_persisted_with_head_and_tail() {
    let ws = Workspace::new();
    let (run, json) = ws.run_json(&[], BIG_COMMAND);
    let expected = expected_big_output();
    let text = json["text"].as_str().unwrap();
    assert!(text.starts_with("<persisted-output>\n"), "{run}");
    assert!(text.ends_with("</persisted-output>"), "{run}");
    assert!(
        text.contains(&format!("Output too large ({} bytes)", expected.len())),
        "{run}"
    );
    let path = json["outputPath"].as_str().unwrap();
    assert!(
        text.contains(&format!("Full output saved to: {path}")),
        "{run}"
    );
    // OUT-6: every byte, invalid UTF-8 and ANSI escapes included.
    assert_eq!(std::fs::read(path).unwrap(), expected);
    let decoded = String::from_utf8_lossy(&expected);
    let head: String = decoded.chars().take(2000).collect();
    let tail: String = decoded
        .chars()
        .rev()
        .take(2000)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    assert!(
        text.contains(&format!("Preview (first 2000 characters):\n{head}\n")),
        "head preview"
    );
    assert!(
        text.contains(&format!(
            "Preview (last 2000 characters):\n{tail}\n</persisted-output>"
        )),
        "tail preview"
    );
    assert!(
        head.starts_with("\x1b[31mred\x1b[0m\n\u{fffd}\u{fffd}"),
        "ANSI kept, invalid bytes replaced"
    );
}

#[test]
fn out_1_output_length_env_raises_and_caps_the_limit() {
    let ws = Workspace::new();
    let inline = |limit: &str, chars: usize| {
        let mut cmd = ws.wavesh();
        cmd.env("BASH_MAX_OUTPUT_LENGTH", limit)
            .args(["run", "--json", "--"])
            .arg(format!("head -c {chars} /dev/zero | tr '\\0' x"));
        let run = crate::util::Run::of(cmd);
        let json: serde_json::Value = serde_json::from_slice(&run.output.stdout).unwrap();
        !json["text"]
            .as_str()
            .unwrap()
            .starts_with("<persisted-output>")
    };
    assert!(inline("100000", 90_000));
    assert!(!inline("100000", 110_000));
    assert!(!inline("30000", 30_001));
    assert!(inline("999999", 149_000));
    assert!(!inline("999999", 151_000));
}

#[test]
fn exec_4_sleep_is_killed_at_the_timeout() {
    let ws = Workspace::new();
    let marker = digit_marker();
    let (run, json) = ws.run_json(&["--timeout", "1000"], &format!("sleep 5.{marker}"));
    assert!(
        run.elapsed >= Duration::from_millis(950) && run.elapsed < Duration::from_millis(3000),
        "{run}"
    );
    let text = json["text"].as_str().unwrap();
    assert!(
        text.contains(
            "Command exceeded the timeout (1s) and was stopped. A command that starts with `sleep`"
        ) && text.ends_with("read it later with TaskOutput."),
        "{run}"
    );
    assert!(
        !text.contains("Exit code") && !text.contains("timed out"),
        "{run}"
    );
    assert_eq!(json["is_error"], false);
    assert_eq!(json["success"], true);
    assert_eq!(json["interrupted"], true);
    assert!(
        live_pids_with(&marker).is_empty(),
        "process left: {:?}",
        live_pids_with(&marker)
    );
}

#[test]
fn bg_3_timeout_moves_the_command_to_the_background() {
    let ws = Workspace::new();
    let (run, json) = ws.run_json(&["--timeout", "1000"], "echo a; sleep 3; echo b");
    assert!(run.elapsed < Duration::from_millis(2500), "{run}");
    let id = json["backgroundTaskId"].as_str().unwrap();
    let path = json["outputPath"].as_str().unwrap();
    assert_eq!(
        json["text"].as_str().unwrap(),
        format!(
            "Command exceeded the timeout (1s) and was moved to the background with ID: {id}. It is still running — you will be notified when it completes. Output is being written to: {path}"
        )
    );
    assert_eq!(json["assistantAutoBackgrounded"], true);
    assert_eq!(json["backgroundedByUser"], false);
    assert_eq!(json["is_error"], false);
    assert_eq!(json["status"], "backgrounded");
    assert_eq!(json["task"]["status"], "running");
    assert_eq!(run.code(), Some(0), "{run}");
    let pgid = json["task"]["pgid"].as_i64().unwrap();
    assert!(run.stderr().contains(&format!("kill -- -{pgid}")), "{run}");
    let done = wait_until(Duration::from_secs(6), || {
        std::fs::read_to_string(path).is_ok_and(|t| t == "a\nb\n")
    });
    assert!(done, "output file: {:?}", std::fs::read_to_string(path));
    kill_group(pgid);
}

#[test]
fn bg_1_explicit_background_returns_at_once() {
    let ws = Workspace::new();
    let marker = digit_marker();
    let (run, json) = ws.run_json(&["--background"], &format!("sleep 30.{marker}; echo never"));
    assert!(run.elapsed < Duration::from_secs(2), "{run}");
    let id = json["backgroundTaskId"].as_str().unwrap();
    let path = json["outputPath"].as_str().unwrap();
    assert_eq!(
        json["text"].as_str().unwrap(),
        format!("Command running in background with ID: {id}. Output is being written to: {path}")
    );
    assert_eq!(json["assistantAutoBackgrounded"], false);
    assert_eq!(json["task"]["taskId"], id);
    assert!(json["task"]["pid"].as_i64().unwrap() > 0);
    assert!(
        wait_until(Duration::from_secs(5), || !live_pids_with(&marker)
            .is_empty()),
        "the task should be running"
    );
    kill_group(json["task"]["pgid"].as_i64().unwrap());
    assert!(wait_until(Duration::from_secs(2), || live_pids_with(
        &marker
    )
    .is_empty()));
}

#[test]
fn schema_4_bad_timeouts_are_errors_without_a_maximum() {
    let ws = Workspace::new();
    for bad in ["-1", "abc"] {
        let run = ws.run(&["--timeout", bad], "echo ran");
        assert_eq!(run.code(), Some(2), "{run}");
        assert!(run.stderr().contains("`timeout`"), "{run}");
        assert!(
            !run.stderr().contains("600000") && !run.stdout().contains("ran"),
            "{run}"
        );
    }
    let (run, json) = ws.run_json(&["--timeout", "900000"], "echo ran");
    assert_eq!(json["text"], "ran", "{run}");
}

#[test]
fn schema_1_raw_input_errors_name_the_field() {
    let ws = Workspace::new();
    let input = ws.root.join("input.json");
    std::fs::write(&input, r#"{"command": "echo hi", "colour": "blue"}"#).unwrap();
    let mut cmd = ws.wavesh();
    cmd.args(["run", "--json", "--input"]).arg(&input);
    let run = crate::util::Run::of(cmd);
    assert_eq!(run.code(), Some(2), "{run}");
    assert!(run.stdout().contains("unknown parameter `colour`"), "{run}");
}

/// EXEC-2: the command is not in any argv. `wavesh run -- CMD` necessarily has CMD in its
/// own argv, so this goes through `--input -`, as a host would.
#[test]
fn exec_2_pgrep_does_not_see_the_command() {
    let ws = Workspace::new();
    let marker = format!("zq{}", digit_marker());
    let mut cmd = ws.wavesh();
    cmd.args(["run", "--input", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let input = serde_json::json!({ "command": format!("pgrep -f {marker} || echo none") });
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(String::from_utf8_lossy(&output.stdout), "none\n");
}

fn abort_kills_the_whole_tree(signal: &str) {
    let ws = Workspace::new();
    let marker = digit_marker();
    // Children and grandchildren; one grandchild ignores SIGTERM.
    let tree = format!(
        "sleep 301.{marker} & bash -c 'sleep 302.{marker} & trap \"\" TERM; sleep 303.{marker}; echo x' & sleep 304.{marker}"
    );
    let mut cmd = ws.wavesh();
    cmd.args(["run", "--json", "--"])
        .arg(&tree)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().unwrap();
    let started = wait_until(Duration::from_secs(10), || {
        live_pids_with(&format!(".{marker}")).len() >= 5
    });
    assert!(started, "tree did not start: {:?}", live_pids_with(&marker));
    signal_and_expect_tree_gone(child.id(), signal, &format!(".{marker}"));
    let output = child.wait_with_output().unwrap();
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(
        json["text"]
            .as_str()
            .unwrap()
            .ends_with("<error>Command was aborted before completion</error>")
    );
    assert_eq!(json["interrupted"], true);
}

#[test]
fn kill_2_sigint_ends_every_process_of_the_tree() {
    abort_kills_the_whole_tree("INT");
}

#[test]
fn kill_2_sigterm_ends_every_process_of_the_tree() {
    abort_kills_the_whole_tree("TERM");
}

#[test]
fn kill_7_leftover_children_end_with_wavesh_run() {
    let ws = Workspace::new();
    let marker = digit_marker();
    let run = ws.run(&[], &format!("sleep 305.{marker} & echo started"));
    assert_eq!(run.stdout(), "started\n", "{run}");
    assert!(wait_until(Duration::from_millis(1500), || live_pids_with(
        &marker
    )
    .is_empty()));
}

#[test]
fn bg_2_wavesh_run_leaves_no_private_file_or_directory() {
    let ws = Workspace::new();
    for command in ["true", "exit 4", "cd /; echo x", "echo err >&2"] {
        ws.run(&[], command);
    }
    let user_dirs: Vec<_> = std::fs::read_dir(&ws.private).unwrap().flatten().collect();
    assert_eq!(user_dirs.len(), 1, "one per-user directory");
    let sessions: Vec<_> = std::fs::read_dir(user_dirs[0].path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(sessions.is_empty(), "left behind: {sessions:?}");
}

/// Nothing is left behind: `wavesh run` at each level, with files written to its TMPDIR
/// (and at workspace-write to `/tmp`), leaves no private directory when no task outlives
/// it; a task that does keeps its output file where it was said to be.
#[test]
fn exec_wavesh_run_leaves_no_private_directory_behind() {
    let ws = Workspace::new();
    let sessions = |ws: &Workspace| -> Vec<std::path::PathBuf> {
        std::fs::read_dir(&ws.private)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("wavesh-"))
            .flat_map(|user| std::fs::read_dir(user.path()).unwrap().flatten())
            .map(|e| e.path())
            .collect()
    };
    for level in ["off", "read-only", "workspace-write"] {
        let run = ws.run(
            &["--sandbox", level],
            "echo x > \"$TMPDIR\"/scratch; mkdir -p \"$TMPDIR\"/d/e; echo y > /tmp/f 2>/dev/null; echo done",
        );
        assert_eq!(run.code(), Some(0), "{level}: {run}");
        assert!(run.stdout().contains("done"), "{level}: {run}");
        assert!(
            sessions(&ws).is_empty(),
            "{level}: left {:?}",
            sessions(&ws)
        );
    }
    let (run, json) = ws.run_json(&["--background"], "sleep 0.5; echo later");
    assert_eq!(run.code(), Some(0), "{run}");
    let path = std::path::PathBuf::from(json["outputPath"].as_str().unwrap());
    assert!(
        !sessions(&ws).is_empty(),
        "a running task's directory was removed"
    );
    assert!(
        wait_until(Duration::from_secs(5), || std::fs::read_to_string(&path)
            .is_ok_and(|t| t == "later\n")),
        "{}",
        path.display()
    );
}
