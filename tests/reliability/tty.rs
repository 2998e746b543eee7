//! Interactive commands through the library and the supervisor (PTY-1..4): prompts,
//! REPLs, Ctrl-C, the kernel's "waiting for input", a curses screen, and tty trees that
//! end with a stop, the session or the host.

use std::sync::Arc;
use std::time::{Duration, Instant};

use wavesh_tool::{
    BashInput, BashResult, CallContext, Session, TaskInputInput, TaskInputResult, TaskOutputInput,
    ToolError,
};

use crate::util::{Mcp, Workspace, digit_marker, live_pids_with, result_text, wait_until};

async fn tty(session: &Session, command: &str, timeout_ms: u64) -> BashResult {
    let mut input = BashInput::new(command);
    input.tty = true;
    input.timeout_ms = Some(timeout_ms);
    session.bash(input, &CallContext::default()).await.unwrap()
}

async fn type_in(session: &Session, id: &str, text: &str) -> TaskInputResult {
    session
        .task_input(TaskInputInput::new(id, text), &CallContext::default())
        .await
        .unwrap()
}

fn task_id(result: &BashResult) -> String {
    result
        .background_task_id
        .clone()
        .expect("a tty call is a task")
}

fn session_in(ws: &Workspace) -> Session {
    crate::supervised_session(&ws.root, &ws.private)
}

/// PTY-1, PTY-3: a `read -p` prompt is reported waiting, and TaskInput answers it.
#[tokio::test]
async fn pty_3_read_prompt_answered_with_task_input() {
    let ws = Workspace::new();
    let session = session_in(&ws);
    let first = tty(
        &session,
        "read -p 'name? ' name; echo \"hello $name\"",
        20_000,
    )
    .await;
    assert_eq!(first.waiting_for_input, Some(Some(true)), "{}", first.text);
    assert!(first.text.contains("name?"), "{}", first.text);
    assert!(first.text.contains("waiting for input"), "{}", first.text);
    assert_eq!(first.status, "backgrounded");
    let answer = type_in(&session, &task_id(&first), "wave\n").await;
    assert_eq!(answer.exit_code, Some(0), "{}", answer.text);
    assert_eq!(answer.waiting_for_input, Some(false));
    assert!(answer.text.contains("hello wave"), "{}", answer.text);
    session.shutdown().await;
}

/// PTY-3: a Python REPL evaluates what is typed and ends on Ctrl-D.
#[tokio::test]
async fn pty_3_python_repl_evaluates_and_ends_on_ctrl_d() {
    let ws = Workspace::new();
    let session = session_in(&ws);
    let first = tty(&session, "python3 -q", 20_000).await;
    assert_eq!(first.waiting_for_input, Some(Some(true)), "{}", first.text);
    let id = task_id(&first);
    let evaluated = type_in(&session, &id, "6 * 7\n").await;
    assert_eq!(
        evaluated.waiting_for_input,
        Some(true),
        "{}",
        evaluated.text
    );
    assert!(evaluated.text.contains("42"), "{}", evaluated.text);
    let ended = type_in(&session, &id, "\u{4}").await;
    assert_eq!(ended.exit_code, Some(0), "{}", ended.text);
    session.shutdown().await;
}

/// PTY-3: Ctrl-C reaches the foreground group through the line discipline and ends a
/// loop of `sleep`s; the loop itself was never waiting for input.
#[tokio::test]
async fn pty_3_ctrl_c_interrupts_a_sleep_loop() {
    let ws = Workspace::new();
    let session = session_in(&ws);
    let marker = digit_marker();
    let first = tty(
        &session,
        &format!("while true; do sleep 1.{marker}; done"),
        1500,
    )
    .await;
    assert_eq!(first.waiting_for_input, Some(Some(false)), "{}", first.text);
    assert!(
        first.text.contains("not waiting for input"),
        "{}",
        first.text
    );
    let ended = type_in(&session, &task_id(&first), "\u{3}").await;
    assert_eq!(ended.exit_code, Some(130), "{}", ended.text);
    crate::expect_gone(&marker, Duration::from_secs(2), "Ctrl-C");
    session.shutdown().await;
}

/// PTY-1: with `tty` stdin and stdout are a terminal of the fixed size with TERM set;
/// without it they still are not (EXEC-3).
#[tokio::test]
async fn pty_1_isatty_with_tty_and_not_without() {
    let ws = Workspace::new();
    let session = session_in(&ws);
    let probe = "python3 -c 'import os, sys; print(\"tty:\", sys.stdin.isatty(), sys.stdout.isatty(), os.get_terminal_size(), os.environ.get(\"TERM\"))'";
    let with = tty(&session, probe, 20_000).await;
    assert!(
        with.text
            .contains("tty: True True os.terminal_size(columns=120, lines=40) xterm-256color"),
        "{}",
        with.text
    );
    assert_eq!(with.exit_code, Some(0));
    let plain = "python3 -c 'import sys; print(\"tty:\", sys.stdin.isatty(), sys.stdout.isatty())'";
    let without = session
        .bash(BashInput::new(plain), &CallContext::default())
        .await
        .unwrap();
    assert!(
        without.text.starts_with("tty: False False"),
        "{}",
        without.text
    );
    assert_eq!(without.waiting_for_input, None, "no field without tty");
    session.shutdown().await;
}

/// PTY-2: a program that prints and sleeps for 8 s is never reported waiting, sampled
/// all along with the settle time; once it reads, it is.
#[tokio::test]
async fn pty_2_print_and_sleep_is_never_waiting_until_it_reads() {
    let ws = Workspace::new();
    let session = session_in(&ws);
    let started = Instant::now();
    let first = tty(
        &session,
        "for i in 1 2 3 4 5 6 7 8; do echo \"tick $i\"; sleep 1; done; read -p 'now? ' x; echo \"got $x\"",
        1000,
    )
    .await;
    assert_eq!(first.waiting_for_input, Some(Some(false)), "{}", first.text);
    let job = session.tasks().get(&task_id(&first)).unwrap();
    let terminal = Arc::clone(job.terminal().unwrap());
    let mut samples = 0;
    while started.elapsed() < Duration::from_millis(7500) {
        assert_eq!(
            terminal.waiting_settled().await,
            wavesh_exec::Waiting::No,
            "reported waiting while it printed and slept, after {:?}",
            started.elapsed()
        );
        samples += 1;
    }
    assert!(samples >= 10, "only {samples} samples");
    let output = session
        .task_output(
            TaskOutputInput {
                timeout_ms: 15_000,
                ..TaskOutputInput::new(task_id(&first))
            },
            &CallContext::default(),
        )
        .await
        .unwrap();
    assert!(
        started.elapsed() >= Duration::from_secs(8),
        "returned early"
    );
    assert!(output.text.contains("tick 8"), "{}", output.text);
    assert!(output.text.contains("now?"), "{}", output.text);
    assert_eq!(terminal.waiting_settled().await, wavesh_exec::Waiting::Yes);
    let answer = type_in(&session, &task_id(&first), "yes\n").await;
    assert!(answer.text.contains("got yes"), "{}", answer.text);
    session.shutdown().await;
}

/// PTY-3: TaskOutput of a curses program shows the rendered screen, no escape
/// sequences; the raw bytes, escapes included, stay in the output file.
#[tokio::test]
async fn pty_3_curses_screen_is_rendered() {
    let ws = Workspace::new();
    let session = session_in(&ws);
    let program = "import curses\n\
def main(s):\n    s.clear()\n    s.addstr(2, 4, 'WAVESH CURSES')\n    s.addstr(5, 10, 'press q to quit')\n    s.refresh()\n    while s.getch() != ord('q'):\n        pass\n\
curses.wrapper(main)\n";
    std::fs::write(ws.root.join("tui.py"), program).unwrap();
    let first = tty(&session, "python3 tui.py", 20_000).await;
    assert_eq!(first.waiting_for_input, Some(Some(true)), "{}", first.text);
    let output = session
        .task_output(
            TaskOutputInput {
                block: false,
                ..TaskOutputInput::new(task_id(&first))
            },
            &CallContext::default(),
        )
        .await
        .unwrap();
    assert!(!output.text.contains('\u{1b}'), "{:?}", output.text);
    // The screen's rows, from the first one on.
    let lines: Vec<&str> = output
        .text
        .lines()
        .skip_while(|line| *line != "<output>")
        .skip(1)
        .collect();
    assert_eq!(
        lines.get(2).copied(),
        Some("    WAVESH CURSES"),
        "{:?}",
        lines
    );
    assert_eq!(
        lines.get(5).copied(),
        Some("          press q to quit"),
        "{:?}",
        lines
    );
    assert!(output.text.contains("waiting for input"), "{}", output.text);
    let raw = std::fs::read(&output.output_path).unwrap();
    assert!(raw.contains(&0x1b), "the raw bytes keep their escapes");
    let quit = type_in(&session, &task_id(&first), "q").await;
    assert_eq!(quit.exit_code, Some(0), "{}", quit.text);
    session.shutdown().await;
}

/// PTY-3: TaskInput fails clearly for a task without a terminal, one that ended, an
/// unknown one, another owner's, and bad input.
#[tokio::test]
async fn pty_3_task_input_errors_are_clear() {
    let ws = Workspace::new();
    let session = session_in(&ws);
    let marker = digit_marker();
    let mut background = BashInput::new(format!("sleep 30.{marker}"));
    background.run_in_background = true;
    let plain = session
        .bash(background, &CallContext::default())
        .await
        .unwrap();
    let plain_id = plain.background_task_id.unwrap();
    let error = session
        .task_input(
            TaskInputInput::new(&plain_id, "x\n"),
            &CallContext::default(),
        )
        .await
        .unwrap_err();
    assert!(matches!(error, ToolError::NoTerminal(_)), "{error}");
    assert!(error.to_string().contains("tty: true"), "{error}");

    let ended = tty(&session, "echo done", 20_000).await;
    assert_eq!(ended.exit_code, Some(0));
    let error = session
        .task_input(
            TaskInputInput::new(task_id(&ended), "x\n"),
            &CallContext::default(),
        )
        .await
        .unwrap_err();
    assert!(error.to_string().contains("has ended"), "{error}");

    let error = session
        .task_input(
            TaskInputInput::new("bnosuchtask", "x"),
            &CallContext::default(),
        )
        .await
        .unwrap_err();
    assert!(matches!(error, ToolError::UnknownTask(_)), "{error}");

    let waiting = tty(&session, "read -p 'go? ' x", 20_000).await;
    let id = task_id(&waiting);
    let subagent = session.subagent();
    let error = subagent
        .task_input(TaskInputInput::new(&id, "x\n"), &CallContext::default())
        .await
        .unwrap_err();
    assert!(
        matches!(error, ToolError::UnknownTask(_)),
        "another owner's task: {error}"
    );

    for (input, field) in [
        (serde_json::json!({"task_id": id, "input": 7}), "`input`"),
        (serde_json::json!({"task_id": id}), "`input`"),
        (serde_json::json!({"input": "x"}), "`task_id`"),
        (
            serde_json::json!({"task_id": id, "input": "y".repeat(70_000)}),
            "`input`",
        ),
    ] {
        let error = session
            .task_input_json(&input, &CallContext::default())
            .await
            .unwrap_err();
        assert!(error.to_string().contains(field), "{error}");
    }
    session.shutdown().await;
    crate::expect_gone(&marker, Duration::from_secs(2), "the session ended");
}

/// PTY-4: a tty task's tree, escapees included, ends with TaskStop and with the session.
#[tokio::test]
async fn pty_4_tty_trees_end_with_stop_and_session() {
    let ws = Workspace::new();
    let session = session_in(&ws);
    let stopped = digit_marker();
    let first = tty(
        &session,
        &format!("setsid sleep 960.{stopped} & sleep 961.{stopped} & read -p 'x? ' x"),
        20_000,
    )
    .await;
    assert_eq!(first.waiting_for_input, Some(Some(true)), "{}", first.text);
    session
        .task_stop(wavesh_tool::TaskStopInput {
            task_id: task_id(&first),
        })
        .await
        .unwrap();
    crate::expect_gone(&stopped, Duration::from_secs(3), "TaskStop of a tty task");

    let ended = digit_marker();
    let _ = tty(
        &session,
        &format!("setsid sleep 962.{ended} & python3 -c 'import time; time.sleep(963)' .{ended}"),
        500,
    )
    .await;
    let _ = tty(&session, &format!("sleep 964.{ended} & read x"), 20_000).await;
    assert!(
        wait_until(Duration::from_secs(5), || live_pids_with(&format!(
            ".{ended}"
        ))
        .len()
            >= 3),
        "{:?}",
        live_pids_with(&format!(".{ended}"))
    );
    session.shutdown().await;
    crate::expect_gone(&ended, Duration::from_secs(3), "the session ended");
}

/// PTY-4 through MCP: SIGKILL to `wavesh mcp` while tty tasks wait and run leaves
/// nothing behind.
#[test]
fn pty_4_sigkill_of_the_server_ends_tty_tasks() {
    let ws = Workspace::new();
    let marker = digit_marker();
    let mut mcp = Mcp::start(&ws, &[]);
    let answer = mcp.tool(
        2,
        "Bash",
        serde_json::json!({"command": format!("setsid sleep 970.{marker} & read -p 'go? ' x"), "tty": true}),
    );
    assert!(answer.contains("waiting for input"), "{answer}");
    let answer = mcp.tool(
        3,
        "Bash",
        serde_json::json!({"command": format!("(trap '' HUP TERM; sleep 971.{marker}) & sleep 972.{marker}"), "tty": true, "timeout": 1000}),
    );
    assert!(answer.contains("not waiting for input"), "{answer}");
    assert!(
        wait_until(Duration::from_secs(5), || live_pids_with(&format!(
            ".{marker}"
        ))
        .len()
            >= 3),
        "{:?}",
        live_pids_with(&format!(".{marker}"))
    );
    mcp.child.kill().unwrap();
    mcp.child.wait().unwrap();
    crate::expect_gone(&marker, Duration::from_secs(3), "the server was SIGKILLed");
}

/// PTY-1..3 through MCP at the server's default sandbox level: the prompt, the answer,
/// the structured field, and TaskInput listed with its schema.
#[test]
fn pty_3_mcp_prompt_answered_with_task_input() {
    let ws = Workspace::new();
    let mut mcp = Mcp::start(&ws, &[]);
    let tools = mcp.request(2, "tools/list", serde_json::json!({}));
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    assert!(names.contains(&"TaskInput"), "{names:?}");
    let first = mcp.call(
        3,
        "Bash",
        serde_json::json!({"command": "test -t 0 && echo on-a-terminal; read -p 'name? ' n; echo \"hi $n\"", "tty": true}),
    );
    let text = result_text(&first);
    assert!(text.contains("on-a-terminal"), "{text}");
    assert!(text.contains("waiting for input"), "{text}");
    let structured = &first["result"]["structuredContent"];
    assert_eq!(structured["waitingForInput"], true, "{structured}");
    let id = structured["backgroundTaskId"].as_str().unwrap().to_owned();
    let answer = mcp.call(
        4,
        "TaskInput",
        serde_json::json!({"task_id": id, "input": "mcp\n"}),
    );
    let text = result_text(&answer);
    assert!(text.contains("hi mcp"), "{text}");
    assert_eq!(
        answer["result"]["structuredContent"]["exit_code"], 0,
        "{answer}"
    );
    let bad = mcp.tool(
        5,
        "TaskInput",
        serde_json::json!({"task_id": id, "input": 1}),
    );
    assert!(bad.contains("`input`"), "{bad}");
    let python = mcp.call(
        6,
        "Bash",
        serde_json::json!({"command": "python3 -q", "tty": true}),
    );
    let id = python["result"]["structuredContent"]["backgroundTaskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let sum = mcp.tool(
        7,
        "TaskInput",
        serde_json::json!({"task_id": id, "input": "sum(range(10))\n"}),
    );
    assert!(sum.contains("45"), "{sum}");
    let end = mcp.call(
        8,
        "TaskInput",
        serde_json::json!({"task_id": id, "input": "\u{4}"}),
    );
    assert_eq!(end["result"]["structuredContent"]["exit_code"], 0, "{end}");
    mcp.close();
}

/// PTY-1 through `wavesh run --input`: the JSON input takes `tty`; a task left waiting
/// on its terminal ends with wavesh (nothing could type into it afterwards), tree and
/// all, instead of being detached.
#[test]
fn pty_1_wavesh_run_takes_tty_and_leaves_no_terminal_task() {
    let ws = Workspace::new();
    let marker = digit_marker();
    let input = ws.root.join("input.json");
    std::fs::write(
        &input,
        serde_json::json!({
            "command": format!("sleep 980.{marker} & test -t 0 && echo on-a-terminal; read -p 'name? ' n"),
            "tty": true,
        })
        .to_string(),
    )
    .unwrap();
    let mut command = ws.wavesh();
    command.args(["run", "--json", "--input"]).arg(&input);
    let run = crate::util::Run::of(command);
    let value: serde_json::Value = serde_json::from_slice(&run.output.stdout).unwrap();
    assert_eq!(value["waitingForInput"], true, "{run}");
    assert!(
        value["text"].as_str().unwrap().contains("on-a-terminal"),
        "{run}"
    );
    assert!(run.stderr().contains("was stopped"), "{run}");
    crate::expect_gone(&marker, Duration::from_secs(2), "wavesh run exited");
}

/// PTY-4, BG-8: a program that floods its terminal is stopped at the output cap like
/// any command; the raw output file holds exactly the cap.
#[tokio::test]
async fn pty_4_a_flood_is_bounded_by_the_output_cap() {
    let ws = Workspace::new();
    let mut config = wavesh_tool::ToolConfig::default();
    config.sandbox.read_only_level = false;
    config.output_cap_bytes = Some(64 * 1024);
    let session = Session::builder(&ws.root)
        .private_base(&ws.private)
        .no_login_env()
        .supervisor(crate::util::WAVESH)
        .sandbox_level(wavesh_exec::sandbox::Level::Off)
        .no_claude_settings()
        .config(config)
        .build()
        .unwrap();
    let flood = tty(&session, "yes flood", 20_000).await;
    assert!(flood.exit_code.is_some(), "still running: {}", flood.text);
    assert!(flood.text.contains("was stopped"), "{}", flood.text);
    let path = flood.output_path.clone().unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 64 * 1024);
    session.shutdown().await;
}

/// PTY-4 through MCP with `--permission-mode wavesh`: text for a task at
/// workspace-write is put to the user by elicitation, showing the text, the task and its
/// command; "for the session" lets the next input through without asking. A client
/// that cannot ask gets a refusal saying so, and nothing is typed.
#[test]
fn pty_4_mcp_asks_before_typing_where_wavesh_approves() {
    let ws = Workspace::new();
    let args = ["--permission-mode", "wavesh", "--auto-allow-sandboxed"];
    let shell = serde_json::json!({"command": "PS1='$ ' bash --norc --noprofile -i", "tty": true});

    let mut mute = Mcp::start(&ws, &args);
    let first = mute.call(2, "Bash", shell.clone());
    let id = first["result"]["structuredContent"]["backgroundTaskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{first}"))
        .to_owned();
    let refused = mute.tool(
        3,
        "TaskInput",
        serde_json::json!({"task_id": id, "input": "touch typed-mute\n"}),
    );
    assert!(
        refused.contains("needs the user's approval") && refused.contains("cannot ask"),
        "{refused}"
    );
    assert!(!ws.root.join("typed-mute").exists());
    mute.close();

    let mut mcp = Mcp::start_declaring(&ws, &args, |_| {}, serde_json::json!({"elicitation": {}}));
    let first = mcp.call(2, "Bash", shell);
    let id = first["result"]["structuredContent"]["backgroundTaskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{first}"))
        .to_owned();
    mcp.send(
        3,
        "tools/call",
        serde_json::json!({"name": "TaskInput", "arguments": {"task_id": id, "input": "touch typed\n"}}),
    );
    let ask = loop {
        let message = mcp.next_message();
        if message["method"] == "elicitation/create" {
            break message;
        }
        assert_ne!(message["id"], 3, "answered without asking: {message}");
    };
    let shown = ask["params"]["message"].as_str().unwrap();
    assert!(
        shown.contains("touch typed")
            && shown.contains(&id)
            && shown.contains("bash --norc")
            && shown.contains("workspace-write"),
        "{shown}"
    );
    assert!(!ws.root.join("typed").exists(), "typed before the answer");
    mcp.send_bytes(
        serde_json::json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"allow": true, "session": true}}})
            .to_string()
            .as_bytes(),
    );
    let typed = mcp.answer(3);
    assert!(ws.root.join("typed").exists(), "{typed}");
    let again = mcp.tool(
        4,
        "TaskInput",
        serde_json::json!({"task_id": id, "input": "echo again-$((2+2))\n"}),
    );
    assert!(
        again.contains("again-4"),
        "allowed for the session: {again}"
    );
    mcp.close();
}
