//! Background tasks through the library: TaskOutput, TaskStop, notifications, owners,
//! the output cap and the commit-point race (BG, TASK, KILL-6).
#![cfg(unix)]
#![expect(clippy::unwrap_used, reason = "tests unwrap freely (STYLE)")]

use std::time::{Duration, Instant};

use serde_json::json;
use wavesh_tool::{BashInput, CallContext, TaskOutputInput, ToolConfig, ToolError};

mod common;

use common::{Fixture, eventually, live, marker};

fn fixture() -> Fixture {
    Fixture::new()
}

fn fixture_with(config: ToolConfig) -> Fixture {
    Fixture::with(config)
}

fn background(command: &str) -> BashInput {
    let mut input = BashInput::new(command);
    input.run_in_background = true;
    input
}

fn ctx() -> CallContext {
    CallContext::default()
}

#[tokio::test]
async fn task_1_not_ready_then_completed_then_no_second_notification() {
    let fx = fixture();
    let started = Instant::now();
    let result = fx
        .session
        .bash(background("sleep 1; echo done"), &ctx())
        .await
        .unwrap();
    assert!(started.elapsed() < Duration::from_millis(500));
    let id = result.background_task_id.unwrap();
    assert!(result.output_path.unwrap().exists());

    let mut input = TaskOutputInput::new(&id);
    input.block = false;
    let output = fx.session.task_output(input, &ctx()).await.unwrap();
    assert_eq!(output.retrieval_status, "not_ready");
    assert_eq!(output.status, "running");

    let output = fx
        .session
        .task_output(TaskOutputInput::new(&id), &ctx())
        .await
        .unwrap();
    assert_eq!(output.retrieval_status, "success");
    assert_eq!(output.status, "completed");
    assert_eq!(output.exit_code, Some(0));
    assert!(
        output.text.contains("<output>\ndone\n</output>"),
        "{}",
        output.text
    );
    assert!(output.text.contains(&format!("<task_id>{id}</task_id>")));

    // Read through TaskOutput: never notified again (TASK-3).
    assert!(fx.session.take_notifications().is_empty());
    let again = fx
        .session
        .task_output(TaskOutputInput::new(&id), &ctx())
        .await
        .unwrap();
    assert!(again.text.contains("done"));
    assert!(fx.session.take_notifications().is_empty());
}

#[tokio::test]
async fn bg_7_a_completion_is_notified_exactly_once() {
    let fx = fixture();
    let mut input = background("echo hello; exit 3");
    input.description = Some("Says hello and fails".into());
    let id = fx
        .session
        .bash(input, &ctx())
        .await
        .unwrap()
        .background_task_id
        .unwrap();
    let mut changes = fx.session.subscribe_tasks();
    let notes = loop {
        let notes = fx.session.take_notifications();
        if !notes.is_empty() {
            break notes;
        }
        tokio::time::timeout(Duration::from_secs(5), changes.changed())
            .await
            .unwrap()
            .unwrap();
    };
    assert_eq!(notes.len(), 1);
    let note = &notes[0];
    assert_eq!(
        (note.task_id.as_str(), note.status, note.exit_code),
        (id.as_str(), "failed", Some(3))
    );
    assert!(note.text.starts_with("<task-notification>\n"));
    assert!(note.text.contains(&format!("<task-id>{id}</task-id>")));
    assert!(note.text.contains("<exit-code>3</exit-code>"));
    assert!(
        note.text
            .contains("Background command \"Says hello and fails\" failed with exit code 3.")
    );
    assert!(note.text.contains("<output-tail>\nhello\n</output-tail>"));
    assert!(note.text.contains(&format!(
        "<output-file>{}</output-file>",
        note.output_path.display()
    )));
    assert!(fx.session.take_notifications().is_empty());
    // TaskOutput after the notification still reads the output.
    let output = fx
        .session
        .task_output(TaskOutputInput::new(&id), &ctx())
        .await
        .unwrap();
    assert!(output.text.contains("hello"));
}

#[tokio::test]
async fn task_1_blocking_read_times_out() {
    let fx = fixture();
    let id = fx
        .session
        .bash(background("sleep 5"), &ctx())
        .await
        .unwrap()
        .background_task_id
        .unwrap();
    let mut input = TaskOutputInput::new(&id);
    input.timeout_ms = 500;
    let started = Instant::now();
    let output = fx.session.task_output(input, &ctx()).await.unwrap();
    let elapsed = started.elapsed();
    assert_eq!(output.retrieval_status, "timeout");
    assert!(
        elapsed >= Duration::from_millis(480) && elapsed < Duration::from_millis(2000),
        "{elapsed:?}"
    );
    fx.session.shutdown().await;
}

#[tokio::test]
async fn task_4_stop_ends_the_tree_and_is_notified_as_stopped_by_you() {
    let fx = fixture();
    let m = marker();
    let command =
        format!("sleep 321.{m} & bash -c 'trap \"\" TERM; sleep 322.{m}; echo x' & sleep 323.{m}");
    let id = fx
        .session
        .bash(background(&command), &ctx())
        .await
        .unwrap()
        .background_task_id
        .unwrap();
    assert!(eventually(Duration::from_secs(5), || live(&format!(".{m}")) >= 4).await);
    let started = Instant::now();
    let stopped = fx
        .session
        .call_tool("KillShell", &json!({"shell_id": id}), &ctx())
        .await
        .unwrap();
    assert!(
        stopped.text.starts_with(&format!("Stopped task {id}")),
        "{}",
        stopped.text
    );
    assert!(eventually(Duration::from_millis(1500), || live(&format!(".{m}")) == 0).await);
    assert!(started.elapsed() < Duration::from_millis(1500));
    let notes = fx.session.take_notifications();
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0].status, "stopped");
    assert!(
        notes[0].text.contains("was stopped by you."),
        "{}",
        notes[0].text
    );
    // BG-7 for the host; a host that showed the model TaskStop's answer can skip it.
    assert!(notes[0].stopped_by_model);

    // Stopping it again is not an error: it had already finished.
    let again = fx
        .session
        .call_tool("TaskStop", &json!({"task_id": id}), &ctx())
        .await
        .unwrap();
    assert!(
        again.text.contains("had already finished (stopped by you"),
        "{}",
        again.text
    );
    assert!(!again.is_error);
}

#[tokio::test]
async fn bg_7_a_task_the_user_stopped_says_so() {
    let fx = fixture();
    let id = fx
        .session
        .bash(background("sleep 30"), &ctx())
        .await
        .unwrap()
        .background_task_id
        .unwrap();
    fx.session.stop_task_by_user(&id).await.unwrap();
    let notes = fx.session.take_notifications();
    assert!(!notes[0].stopped_by_model);
    assert!(
        notes[0].text.contains("was stopped by the user."),
        "{}",
        notes[0].text
    );
    let listed = fx.session.list_tasks();
    assert_eq!(listed[0].status_detail, "stopped by the user");
}

#[tokio::test]
async fn task_4_unknown_ids_are_clear_errors() {
    let fx = fixture();
    let error = fx
        .session
        .call_tool("TaskStop", &json!({"task_id": "bnope123"}), &ctx())
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "no background task with ID bnope123; TaskList lists the tasks this agent can reach"
    );
    let error = fx
        .session
        .call_tool("TaskOutput", &json!({"task_id": "bnope123"}), &ctx())
        .await
        .unwrap_err();
    assert!(error.to_string().contains("bnope123"));
    let error = fx
        .session
        .call_tool("Nope", &json!({}), &ctx())
        .await
        .unwrap_err();
    assert!(error.to_string().contains("unknown tool `Nope`"));
}

async fn two_subagent_tasks(fx: &Fixture, sub: &wavesh_tool::Subagent, m: &str) -> Vec<String> {
    let mut ids = Vec::new();
    for n in 1..=2 {
        let result = sub
            .bash(background(&format!("sleep 33{n}.{m}")), &ctx())
            .await
            .unwrap();
        ids.push(result.background_task_id.unwrap());
    }
    assert!(eventually(Duration::from_secs(5), || live(&format!(".{m}")) == 2).await);
    let session_ids: Vec<String> = fx
        .session
        .list_tasks()
        .into_iter()
        .map(|t| t.task_id)
        .collect();
    assert!(
        ids.iter().all(|id| !session_ids.contains(id)),
        "subagent tasks are its own"
    );
    assert_eq!(sub.list_tasks().len(), 2);
    ids
}

#[tokio::test]
async fn kill_6_released_subagents_stop_their_tasks_and_only_theirs() {
    let fx = fixture();
    let own = marker();
    fx.session
        .bash(background(&format!("sleep 340.{own}")), &ctx())
        .await
        .unwrap();
    for how in ["release", "release after a failure", "drop"] {
        let m = marker();
        let sub = fx.session.subagent();
        let ids = two_subagent_tasks(&fx, &sub, &m).await;
        if how == "release after a failure" {
            let failed = sub.bash(BashInput::new("exit 9"), &ctx()).await.unwrap();
            assert!(failed.is_error);
        }
        let started = Instant::now();
        if how == "drop" {
            drop(sub);
        } else {
            sub.release().await;
        }
        assert!(
            eventually(Duration::from_millis(1500), || live(&format!(".{m}")) == 0).await,
            "{how}: tasks still running after {:?}",
            started.elapsed()
        );
        // Its ids are now expired for the session.
        let error = fx
            .session
            .call_tool("TaskStop", &json!({"task_id": ids[0]}), &ctx())
            .await
            .unwrap_err();
        assert!(matches!(error, ToolError::ExpiredTask(_)), "{how}: {error}");
        assert!(error.to_string().contains("expired"));
    }
    assert_eq!(
        live(&format!(".{own}")),
        1,
        "the session's own task keeps running"
    );
    fx.session.shutdown().await;
    assert_eq!(live(&format!(".{own}")), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bg_1_fifty_tasks_of_one_megabyte_each() {
    let fx = fixture();
    let mut ids = Vec::new();
    for n in 0..50 {
        let command = format!("yes line-{n:02}-0123456789abcdef | head -c 1048576");
        ids.push(
            fx.session
                .bash(background(&command), &ctx())
                .await
                .unwrap()
                .background_task_id
                .unwrap(),
        );
    }
    for (n, id) in ids.iter().enumerate() {
        let output = fx
            .session
            .task_output(TaskOutputInput::new(id), &ctx())
            .await
            .unwrap();
        assert_eq!(output.status, "completed", "{id}");
        let bytes = std::fs::read(&output.output_path).unwrap();
        let expected: Vec<u8> = format!("line-{n:02}-0123456789abcdef\n")
            .bytes()
            .cycle()
            .take(1_048_576)
            .collect();
        assert!(
            bytes == expected,
            "task {n}: {} bytes, content differs",
            bytes.len()
        );
    }
}

#[tokio::test]
async fn bg_8_output_cap_stops_the_task_near_the_cap() {
    let config = ToolConfig {
        output_cap_bytes: Some(1024 * 1024),
        ..ToolConfig::default()
    };
    let fx = fixture_with(config);
    let m = marker();
    let id = fx
        .session
        .bash(background(&format!("yes {m}")), &ctx())
        .await
        .unwrap()
        .background_task_id
        .unwrap();
    // The notification says why.
    let job = fx.session.tasks().get(&id).unwrap();
    tokio::time::timeout(Duration::from_secs(10), job.wait())
        .await
        .unwrap();
    let notes = fx.session.take_notifications();
    assert_eq!(notes.len(), 1);
    assert!(
        notes[0]
            .text
            .contains("was stopped: its output reached the output cap."),
        "{}",
        notes[0].text
    );
    let output = fx
        .session
        .task_output(TaskOutputInput::new(&id), &ctx())
        .await
        .unwrap();
    assert_eq!(output.status, "stopped");
    assert!(
        output.text.contains("its output reached the output cap"),
        "{}",
        output.text
    );
    assert_eq!(
        std::fs::metadata(&output.output_path).unwrap().len(),
        1024 * 1024
    );
    assert!(
        eventually(Duration::from_secs(2), || live(&m) == 0).await,
        "no process left"
    );
    let listed = fx.session.list_tasks();
    assert_eq!(
        listed[0].status_detail,
        "stopped: its output reached the output cap"
    );
}

#[tokio::test]
async fn bg_8_output_cap_in_the_foreground_stops_at_once() {
    let config = ToolConfig {
        output_cap_bytes: Some(1024 * 1024),
        ..ToolConfig::default()
    };
    let fx = fixture_with(config);
    let mut input = BashInput::new("yes");
    input.timeout_ms = Some(60_000);
    let started = Instant::now();
    let result = fx.session.bash(input, &ctx()).await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        result
            .text
            .ends_with("Command was stopped: its output reached the output cap of 1048576 bytes.")
    );
    assert!(result.is_error && result.interrupted);
    assert!(result.text.contains("<persisted-output>"));
}

/// BG-6: the user's move returns at once with its own text and stops the agent loop;
/// a timeout move does not.
#[tokio::test]
async fn bg_6_user_move_to_the_background() {
    let fx = fixture();
    let ctx = CallContext::default();
    let mover = ctx.move_to_background.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        mover.cancel();
    });
    let result = fx
        .session
        .bash(BashInput::new("echo started; sleep 2; echo finished"), &ctx)
        .await
        .unwrap();
    let id = result.background_task_id.clone().unwrap();
    let path = result.output_path.clone().unwrap();
    assert_eq!(
        result.text,
        format!(
            "Command was manually backgrounded by user with ID: {id}. Output is being written to: {}",
            path.display()
        )
    );
    assert!(
        result.backgrounded_by_user
            && result.stops_agent_loop
            && !result.assistant_auto_backgrounded
    );
    let output = fx
        .session
        .task_output(TaskOutputInput::new(&id), &CallContext::default())
        .await
        .unwrap();
    assert!(output.text.contains("started\nfinished"));

    let mut input = BashInput::new("true; sleep 1");
    input.timeout_ms = Some(100);
    let result = fx
        .session
        .bash(input, &CallContext::default())
        .await
        .unwrap();
    assert!(result.assistant_auto_backgrounded && !result.stops_agent_loop);
}

#[tokio::test]
async fn bg_6_assistant_mode_budget() {
    let config = ToolConfig {
        mode: wavesh_tool::HostMode::Assistant,
        ..ToolConfig::default()
    };
    let fx = fixture_with(config);
    let started = Instant::now();
    let result = fx
        .session
        .bash(BashInput::new("echo a; sleep 16.5; echo b"), &ctx())
        .await
        .unwrap();
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_secs(15) && elapsed < Duration::from_secs(17),
        "{elapsed:?}"
    );
    let id = result.background_task_id.unwrap();
    assert!(result.text.starts_with(&format!(
        "Command exceeded the assistant-mode blocking budget (15s) and was moved to the background with ID: {id}. It is still running"
    )));
    assert!(result.assistant_auto_backgrounded);
    fx.session.shutdown().await;
}

#[tokio::test]
async fn exec_7_idle_turn_mode_kills_at_the_timeout_and_refuses_background() {
    let config = ToolConfig {
        mode: wavesh_tool::HostMode::IdleTurn,
        ..ToolConfig::default()
    };
    let fx = fixture_with(config);
    let error = fx
        .session
        .bash(background("echo hi"), &ctx())
        .await
        .unwrap_err();
    assert!(matches!(error, ToolError::BackgroundRefused), "{error}");
    assert!(
        error
            .to_string()
            .contains("run_in_background is not available")
    );
    let mut input = BashInput::new("echo a; sleep 5");
    input.timeout_ms = Some(300);
    let result = fx.session.bash(input, &ctx()).await.unwrap();
    assert!(result.background_task_id.is_none());
    assert!(
        result
            .text
            .starts_with("a\nCommand exceeded the timeout (0.3s) and was stopped. A command")
            && result.text.contains("run_in_background"),
        "{}",
        result.text
    );
}

/// BG-3 race: commands whose duration equals their timeout end either in the foreground
/// or as a task whose completion is notified later: none lost, none twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bg_3_race_300_runs_none_lost_none_twice() {
    let fx = fixture();
    let m = marker();
    let (mut foreground, mut moved) = (0usize, Vec::new());
    for i in 0..300u64 {
        // Durations straddle the timeout: starting a shell takes a few ms, so some runs
        // end just before the deadline and some just after.
        let timeout = 20 + i % 4 * 5;
        let sleep_ms = timeout - 6 + i % 9;
        // `true;` first, so the sleep rule does not apply: it must move, not die.
        let mut input = BashInput::new(format!("true; sleep 0.{sleep_ms:03}{m}"));
        input.timeout_ms = Some(timeout);
        let result = fx.session.bash(input, &ctx()).await.unwrap();
        match result.background_task_id {
            Some(id) => moved.push(id),
            None => {
                assert_eq!(result.exit_code, Some(0), "{}", result.text);
                foreground += 1;
            }
        }
    }
    let mut notified = std::collections::HashSet::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while notified.len() < moved.len() && Instant::now() < deadline {
        for note in fx.session.take_notifications() {
            assert!(
                notified.insert(note.task_id.clone()),
                "notified twice: {}",
                note.task_id
            );
            assert_eq!(note.status, "completed");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let expected: std::collections::HashSet<_> = moved.iter().cloned().collect();
    assert_eq!(
        notified, expected,
        "every moved run is notified exactly once"
    );
    assert_eq!(foreground + moved.len(), 300);
    assert_eq!(live(&m), 0, "no process left");
    eprintln!(
        "race: {foreground} finished in the foreground, {} moved",
        moved.len()
    );
}

/// TASK-2: while running, the start of the output; after, the end, at most
/// `task_max_output_chars` characters of it, with the path when cut. TASK-5: the host's
/// 8192-byte tail.
#[tokio::test]
async fn task_2_projection_and_task_5_host_tail() {
    let config = ToolConfig {
        task_max_output_chars: 5_000,
        ..ToolConfig::default()
    };
    let fx = fixture_with(config);
    let command = "seq 1 20000; sleep 0.6; echo END";
    let id = fx
        .session
        .bash(background(command), &ctx())
        .await
        .unwrap()
        .background_task_id
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut input = TaskOutputInput::new(&id);
    input.block = false;
    let running = fx.session.task_output(input, &ctx()).await.unwrap();
    assert_eq!(running.retrieval_status, "not_ready");
    // The first 30000 bytes, of which the last 5000 characters are shown.
    assert!(
        running
            .text
            .contains("[Showing the last 5000 characters of"),
        "{}",
        running.text
    );
    assert!(
        !running.text.contains("\n20000\n") && running.text.contains("\n6000\n"),
        "head of the output"
    );

    let done = fx
        .session
        .task_output(TaskOutputInput::new(&id), &ctx())
        .await
        .unwrap();
    assert!(done.text.contains(&format!(
        "the full output is in {} (pass offset and limit to read any part)]",
        done.output_path.display()
    )));
    // MCP-4: offset and limit page through the whole file, each page naming the next.
    let whole = std::fs::read_to_string(&done.output_path).unwrap();
    let mut offset = 0u64;
    let mut pages = String::new();
    loop {
        let result = fx
            .session
            .call_tool(
                "TaskOutput",
                &serde_json::json!({"task_id": id, "offset": offset, "limit": 7000}),
                &ctx(),
            )
            .await
            .unwrap();
        let text = &result.text;
        let body = text
            .split_once("<output>\n")
            .and_then(|(_, rest)| rest.strip_suffix("\n</output>"))
            .unwrap_or_else(|| panic!("no page in {text}"));
        pages.push_str(body);
        assert!(text.contains(&format!("<output_bytes>{offset}-")), "{text}");
        match text.split_once("<next_offset>") {
            Some((_, rest)) => offset = rest.split('<').next().unwrap().parse().unwrap(),
            None => break,
        }
    }
    assert!(
        pages == whole,
        "the pages make the file: {} of {} bytes",
        pages.len(),
        whole.len()
    );
    let list = fx
        .session
        .call_tool("TaskList", &serde_json::json!({}), &ctx())
        .await
        .unwrap();
    assert!(
        list.text
            .starts_with(&format!("{id} completed, exit code 0, started ")),
        "{}",
        list.text
    );
    assert_eq!(list.structured["tasks"][0]["taskId"], id.as_str());
    assert!(
        done.text.contains("\n20000\nEND\n</output>"),
        "tail of the output"
    );

    let tail = fx.session.task_tail(&id).unwrap();
    assert_eq!(tail.len(), 8192);
    assert!(tail.ends_with("19999\n20000\nEND\n"));
    let listed = fx.session.list_tasks();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (listed[0].status, listed[0].exit_code),
        ("completed", Some(0))
    );
    assert!(listed[0].ended_at.is_some());
}
