//! Every text the model reads, pinned as snapshots (paths, task ids and times masked),
//! and checked against the SPEC's exact wording: none says "timed out", and the texts
//! quoted in BG-5, CWD-2/3 and OUT-1 appear exactly as written there.
#![cfg(unix)]
#![expect(clippy::unwrap_used, reason = "tests unwrap freely (STYLE)")]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;
use std::time::Duration;

use common::Fixture;
use serde_json::json;
use wavesh_tool::read_state::MemoryReadState;
use wavesh_tool::{BashInput, CallContext, Session, TaskOutputInput, ToolConfig, tool_definitions};

/// Collects (name, text) pairs, then snapshots them all and runs the wording checks.
struct Texts {
    all: Vec<(String, String)>,
}

impl Texts {
    fn add(&mut self, name: &str, text: impl Into<String>) {
        self.all.push((name.to_owned(), text.into()));
    }
}

fn masked(fx: &Fixture, session: &Session, text: &str) -> String {
    let mut text = text.replace(&session.private_dir().display().to_string(), "[PRIVATE]");
    text = text.replace(&fx.root.display().to_string(), "[WORKSPACE]");
    text
}

fn settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(r"\bb[a-z0-9]{8}\b", "[TASK]");
    settings.add_filter(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z", "[TIME]");
    settings.add_filter(r"output-[a-z0-9]{10}\.log", "output-[RANDOM].log");
    settings.add_filter(r"\(\d+ bytes\)", "([N] bytes)");
    settings
}

async fn bash(session: &Session, input: BashInput) -> String {
    match session.bash(input, &CallContext::default()).await {
        Ok(result) => common::without_sandbox_note(result).text,
        Err(error) => format!("<tool_use_error>{error}</tool_use_error>"),
    }
}

fn input(command: &str, timeout_ms: Option<u64>) -> BashInput {
    let mut input = BashInput::new(command);
    input.timeout_ms = timeout_ms;
    input
}

#[tokio::test]
async fn model_texts_are_pinned_and_worded_as_the_spec_says() {
    let fx = Fixture::new();
    let state = Arc::new(MemoryReadState::default());
    let config = ToolConfig {
        output_cap_bytes: Some(64 * 1024),
        ..ToolConfig::default()
    };
    let mut builder = Session::builder(&fx.root);
    builder
        .private_base(fx.base.join("private"))
        .config(config.clone())
        .sandbox_level(wavesh_exec::sandbox::Level::Off)
        .no_claude_settings()
        .no_login_env()
        .read_state(state);
    let session = builder.build().unwrap();
    let mut texts = Texts { all: Vec::new() };

    for tool in tool_definitions(&config) {
        texts.add(
            &format!("description {}", tool.name),
            tool.description.clone(),
        );
        texts.add(
            &format!("schema {}", tool.name),
            serde_json::to_string_pretty(&tool.input_schema).unwrap(),
        );
    }

    std::fs::write(fx.root.join("a.txt"), "one\n").unwrap();
    std::fs::write(fx.root.join("b.txt"), "two\n").unwrap();
    texts.add("success", bash(&session, input("echo hello", None)).await);
    texts.add("no output", bash(&session, input("true", None)).await);
    texts.add(
        "exit code",
        bash(&session, input("echo out; echo err >&2; exit 3", None)).await,
    );
    texts.add(
        "grep no match",
        bash(&session, input("grep zzz a.txt", None)).await,
    );
    texts.add(
        "grep stdin hint",
        bash(&session, input("grep zzz", None)).await,
    );
    texts.add(
        "diff differs",
        bash(&session, input("diff a.txt b.txt", None)).await,
    );
    texts.add(
        "find inaccessible",
        // find quotes names by the locale (‘…’ in UTF-8, '…' in C): pinned, so the text
        // is the same on a machine whose environment names no locale.
        bash(
            &session,
            input("LC_ALL=C.UTF-8 find ./missing-dir-zz", None),
        )
        .await,
    );
    texts.add(
        "test false",
        bash(&session, input("test -f missing", None)).await,
    );
    texts.add(
        "persisted output",
        bash(
            &session,
            input(
                "head -c 40000 /dev/zero | tr '\\0' x; echo; echo the-end",
                None,
            ),
        )
        .await,
    );
    texts.add(
        "killed at timeout",
        bash(&session, input("sleep 5", Some(300))).await,
    );
    texts.add(
        "output cap",
        bash(&session, input("tr '\\0' y < /dev/zero", None)).await,
    );

    let ctx = CallContext::default();
    let abort = ctx.abort.clone();
    let private = session.private_dir().to_path_buf();
    tokio::spawn(async move {
        // Abort once the command has printed, so the text does not depend on timing.
        for _ in 0..500 {
            let printed = std::fs::read_dir(&private)
                .into_iter()
                .flatten()
                .flatten()
                .any(|entry| {
                    std::fs::read_to_string(entry.path()).is_ok_and(|text| text.contains("begun"))
                });
            if printed {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        abort.cancel();
    });
    texts.add(
        "aborted",
        session
            .bash(input("echo begun; sleep 10", None), &ctx)
            .await
            .unwrap()
            .text,
    );

    let mut explicit = input("sleep 0.2; echo bg", None);
    explicit.run_in_background = true;
    explicit.description = Some("Prints bg".into());
    let explicit = session
        .bash(explicit, &CallContext::default())
        .await
        .unwrap();
    texts.add("background explicit", explicit.text.clone());
    let timeout = session
        .bash(
            input("true; sleep 0.5; exit 4", Some(100)),
            &CallContext::default(),
        )
        .await
        .unwrap();
    texts.add("background timeout", timeout.text.clone());
    let ctx = CallContext::default();
    let mover = ctx.move_to_background.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(150)).await;
        mover.cancel();
    });
    let user = session.bash(input("sleep 30", None), &ctx).await.unwrap();
    texts.add("background user", user.text.clone());
    let explicit_id = explicit.background_task_id.clone().unwrap();
    let timeout_id = timeout.background_task_id.clone().unwrap();
    let user_id = user.background_task_id.clone().unwrap();

    let mut not_ready = TaskOutputInput::new(&user_id);
    not_ready.block = false;
    texts.add(
        "TaskOutput not_ready",
        session
            .task_output(not_ready, &CallContext::default())
            .await
            .unwrap()
            .text,
    );
    let mut waiting = TaskOutputInput::new(&user_id);
    waiting.timeout_ms = 100;
    texts.add(
        "TaskOutput timeout",
        session
            .task_output(waiting, &CallContext::default())
            .await
            .unwrap()
            .text,
    );
    texts.add(
        "TaskOutput success",
        session
            .task_output(TaskOutputInput::new(&explicit_id), &CallContext::default())
            .await
            .unwrap()
            .text,
    );
    let stop = session
        .call_tool(
            "TaskStop",
            &json!({"task_id": user_id}),
            &CallContext::default(),
        )
        .await
        .unwrap();
    texts.add("TaskStop stopped", stop.text);
    let again = session
        .call_tool(
            "TaskStop",
            &json!({"task_id": user_id}),
            &CallContext::default(),
        )
        .await
        .unwrap();
    texts.add("TaskStop already finished", again.text);
    session.tasks().get(&timeout_id).unwrap().wait().await;
    let mut notes: Vec<_> = session.take_notifications();
    notes.sort_by_key(|n| n.status);
    for note in &notes {
        texts.add(&format!("notification {}", note.status), note.text.clone());
    }
    texts.add(
        "TaskOutput failed",
        session
            .task_output(TaskOutputInput::new(&timeout_id), &CallContext::default())
            .await
            .unwrap()
            .text,
    );
    texts.add(
        "TaskOutput stopped",
        session
            .task_output(TaskOutputInput::new(&user_id), &CallContext::default())
            .await
            .unwrap()
            .text,
    );
    let mut stopped_by_user = input("sleep 30", None);
    stopped_by_user.run_in_background = true;
    let id = session
        .bash(stopped_by_user, &CallContext::default())
        .await
        .unwrap()
        .background_task_id
        .unwrap();
    session.stop_task_by_user(&id).await.unwrap();
    texts.add(
        "notification stopped by the user",
        session.take_notifications()[0].text.clone(),
    );
    let mut capped = input("tr '\\0' z < /dev/zero", None);
    capped.run_in_background = true;
    let id = session
        .bash(capped, &CallContext::default())
        .await
        .unwrap()
        .background_task_id
        .unwrap();
    session.tasks().get(&id).unwrap().wait().await;
    texts.add(
        "notification output cap",
        session.take_notifications()[0].text.clone(),
    );

    std::fs::create_dir_all(fx.root.join("sub")).unwrap();
    texts.add("cwd changed", bash(&session, input("cd sub", None)).await);
    texts.add("cwd reset", bash(&session, input("cd /", None)).await);

    for (name, raw) in [
        ("input not an object", json!("ls")),
        ("input unknown key", json!({"command": "ls", "cwd": "/"})),
        ("input missing command", json!({})),
        ("input command type", json!({"command": 5})),
        ("input empty command", json!({"command": " "})),
        ("input NUL", json!({"command": "a\u{0}b"})),
        (
            "input timeout negative",
            json!({"command": "ls", "timeout": -1}),
        ),
        (
            "input timeout string",
            json!({"command": "ls", "timeout": "abc"}),
        ),
        (
            "input boolean",
            json!({"command": "ls", "run_in_background": "maybe"}),
        ),
    ] {
        let error = session
            .bash_json(&raw, &CallContext::default())
            .await
            .unwrap_err();
        texts.add(name, error.to_string());
    }
    let unknown = session
        .call_tool(
            "TaskStop",
            &json!({"task_id": "bzzzzzzzz"}),
            &CallContext::default(),
        )
        .await
        .unwrap_err();
    texts.add("TaskStop unknown", unknown.to_string());
    let unknown = session
        .call_tool(
            "TaskOutput",
            &json!({"task_id": "bzzzzzzzz", "block": false}),
            &CallContext::default(),
        )
        .await
        .unwrap_err();
    texts.add("TaskOutput unknown", unknown.to_string());

    // PTY-1..3: a prompt, the answer, TaskInput's errors.
    let mut prompt = input("read -p 'name? ' name; echo \"hello $name\"", Some(20_000));
    prompt.tty = true;
    let waiting = session.bash(prompt, &CallContext::default()).await.unwrap();
    texts.add("tty waiting", masked(&fx, &session, &waiting.text));
    let tty_id = waiting.background_task_id.clone().unwrap();
    let answered = session
        .call_tool(
            "TaskInput",
            &json!({"task_id": tty_id, "input": "wave\n"}),
            &CallContext::default(),
        )
        .await
        .unwrap();
    texts.add("TaskInput ended", masked(&fx, &session, &answered.text));
    let mut running = input("echo working; sleep 30", Some(2000));
    running.tty = true;
    let running = session
        .bash(running, &CallContext::default())
        .await
        .unwrap();
    texts.add("tty running", masked(&fx, &session, &running.text));
    for (name, raw) in [
        (
            "TaskInput ended task",
            json!({"task_id": tty_id, "input": "x"}),
        ),
        (
            "TaskInput no terminal",
            json!({"task_id": explicit_id, "input": "x"}),
        ),
        (
            "TaskInput input type",
            json!({"task_id": tty_id, "input": ["x"]}),
        ),
    ] {
        let error = session
            .call_tool("TaskInput", &raw, &CallContext::default())
            .await
            .unwrap_err();
        texts.add(name, error.to_string());
    }

    let bin = fx.root.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(
        bin.join("gh"),
        "#!/bin/sh\necho 'API rate limit exceeded' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(bin.join("gh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    texts.add(
        "gh reminder",
        bash(&session, input("PATH=\"$PWD/bin:$PATH\" gh pr list", None)).await,
    );
    std::fs::write(bin.join("fmt"), "#!/bin/sh\nprintf 'x\\n' > a.txt\n").unwrap();
    std::fs::set_permissions(bin.join("fmt"), std::fs::Permissions::from_mode(0o755)).unwrap();
    bash(&session, input("cat a.txt", None)).await;
    texts.add(
        "stale files",
        bash(&session, input("./bin/fmt --write .", None)).await,
    );
    texts.add(
        "killed by a signal",
        bash(&session, input("echo before; kill -KILL $$", None)).await,
    );
    texts.add(
        "TaskList",
        session
            .call_tool("TaskList", &json!({}), &CallContext::default())
            .await
            .unwrap()
            .text,
    );
    session.shutdown().await;

    // Approvals, as wavesh decides them: a deny rule, a command that needs the user, and
    // a call that asks to run without the sandbox.
    let mut rules = wavesh_policy::settings::Settings::default();
    rules
        .add_json(
            r#"{"permissions": {"deny": ["Bash(rm:*)"]}}"#,
            wavesh_policy::settings::Level::Project,
            std::path::Path::new(".claude/settings.json"),
        )
        .unwrap();
    let mut builder = Session::builder(&fx.root);
    builder
        .private_base(fx.base.join("private"))
        .config(config.clone())
        .no_claude_settings()
        .no_login_env()
        .permissions(wavesh_tool::Permissions {
            settings: std::sync::RwLock::new(rules),
            approver: wavesh_tool::Approver::Wavesh,
            mode: wavesh_policy::PermissionMode::Default,
        });
    let asking = builder.build().unwrap();
    texts.add(
        "approval denied by a rule",
        bash(&asking, input("rm -rf build", None)).await,
    );
    texts.add(
        "approval needed",
        bash(&asking, input("touch new.txt", None)).await,
    );
    let mut unsandboxed = input("ls", None);
    unsandboxed.dangerously_disable_sandbox = true;
    texts.add(
        "approval needed without the sandbox",
        bash(&asking, unsandboxed).await,
    );
    asking.shutdown().await;

    // Wording checks over everything the model read.
    for (name, text) in &texts.all {
        assert!(
            !text.to_lowercase().contains("timed out"),
            "{name} says timed out: {text}"
        );
    }
    let get = |name: &str| {
        texts
            .all
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t.clone())
            .unwrap()
    };
    let path_of = |result: &wavesh_tool::BashResult| {
        result.output_path.clone().unwrap().display().to_string()
    };
    assert_eq!(
        get("background explicit"),
        format!(
            "Command running in background with ID: {explicit_id}. Output is being written to: {}",
            path_of(&explicit)
        )
    );
    assert_eq!(
        get("background timeout"),
        format!(
            "Command exceeded the timeout (0.1s) and was moved to the background with ID: {timeout_id}. It is still running — you will be notified when it completes. Output is being written to: {}",
            path_of(&timeout)
        )
    );
    assert_eq!(
        get("background user"),
        format!(
            "Command was manually backgrounded by user with ID: {user_id}. Output is being written to: {}",
            path_of(&user)
        )
    );
    assert_eq!(
        get("cwd changed"),
        format!(
            "Shell working directory changed to {}",
            fx.root.join("sub").display()
        )
    );
    assert!(
        get("cwd reset").ends_with(&format!("\nShell cwd was reset to {}", fx.root.display()))
            || get("cwd reset") == format!("Shell cwd was reset to {}", fx.root.display())
    );
    let persisted = get("persisted output");
    assert!(persisted.starts_with("<persisted-output>\nOutput too large ("));
    assert!(
        persisted.contains("Preview (first 2000 characters):")
            && persisted.contains("Preview (last 2000 characters):")
    );
    assert!(
        get("killed at timeout")
            .contains("Command exceeded the timeout (0.3s) and was stopped. A command that starts")
    );
    assert!(get("aborted").ends_with("<error>Command was aborted before completion</error>"));

    let snapshot: String = texts
        .all
        .iter()
        .map(|(name, text)| format!("=== {name}\n{}\n", masked(&fx, &session, text)))
        .collect();
    settings().bind(|| insta::assert_snapshot!("model_texts", snapshot));
}
