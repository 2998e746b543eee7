//! The `Session` API with real shells: private files, progress, abort, subagents, the
//! background commit point.
#![cfg(unix)]
#![expect(clippy::unwrap_used, reason = "tests unwrap freely (STYLE)")]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use wavesh_exec::Progress;
use wavesh_tool::{BashInput, CallContext};

mod common;

use common::Fixture;

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[tokio::test]
async fn bg_2_private_directory_is_0700_and_files_0600() {
    let fx = Fixture::new();
    let dir = fx.session.private_dir().to_path_buf();
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(dir.parent().unwrap()), 0o700);
    let result = fx.bash("head -c 100000 /dev/zero | tr '\\0' y").await;
    let kept = result.output_path.expect("a persisted output");
    assert_eq!(mode(&kept), 0o600);
    assert_eq!(std::fs::metadata(&kept).unwrap().len(), 100_000);
}

#[tokio::test]
async fn bg_2_no_output_or_cwd_file_is_left_after_100_commands() {
    let fx = Fixture::new();
    for i in 0..100 {
        let command = match i % 5 {
            0 => "echo ok".to_owned(),
            1 => "exit 7".to_owned(),
            2 => "cd sub && pwd".to_owned(),
            3 => "cd / ; echo out".to_owned(),
            _ => format!("echo {i} >&2; false"),
        };
        fx.bash(&command).await;
    }
    assert_eq!(fx.files(), Vec::<PathBuf>::new());
}

#[tokio::test]
async fn cwd_1_moved_command_leaves_only_its_output_file() {
    let fx = Fixture::new();
    let mut input = BashInput::new("cd sub; echo a; sleep 0.5; echo b");
    input.timeout_ms = Some(100);
    let result = fx
        .session
        .bash(input, &CallContext::default())
        .await
        .unwrap();
    assert!(result.assistant_auto_backgrounded);
    let job = fx
        .session
        .tasks()
        .get(result.background_task_id.as_deref().unwrap())
        .unwrap();
    let exit = tokio::time::timeout(Duration::from_secs(5), job.wait())
        .await
        .unwrap();
    assert!(exit.status.success());
    assert_eq!(
        exit.cwd_after, None,
        "a background command's directory is never adopted"
    );
    assert_eq!(fx.files(), vec![result.output_path.unwrap()]);
    assert_eq!(fx.session.cwd(), fx.root);
}

#[tokio::test]
async fn exec_5_progress_events_after_two_seconds_then_every_second() {
    let fx = Fixture::new();
    let events: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let sink = Arc::clone(&events);
    let ctx = CallContext {
        progress: Some(Arc::new(move |p| sink.lock().unwrap().push(p))),
        ..CallContext::default()
    };
    let result = fx
        .session
        .bash(
            BashInput::new("for i in 1 2 3 4; do echo tick; sleep 1; done"),
            &ctx,
        )
        .await
        .unwrap();
    assert_eq!(result.text, "tick\ntick\ntick\ntick");
    let events = events.lock().unwrap();
    assert!(events.len() >= 2, "{events:?}");
    assert!(events[0].elapsed >= Duration::from_secs(2), "{events:?}");
    assert!(
        events
            .windows(2)
            .all(|w| w[1].elapsed > w[0].elapsed && w[1].output_bytes >= w[0].output_bytes)
    );
    assert!(events.last().unwrap().output_bytes >= 15);
}

#[tokio::test]
async fn exec_6_abort_ends_the_tree_and_says_so() {
    let fx = Fixture::new();
    let ctx = CallContext::default();
    let abort = ctx.abort.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        abort.cancel();
    });
    let started = std::time::Instant::now();
    let result = fx
        .session
        .bash(BashInput::new("echo begun; sleep 30 & wait"), &ctx)
        .await
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(
        result.text,
        "begun\n<error>Command was aborted before completion</error>"
    );
    assert!(result.interrupted);
    assert!(result.is_error);
}

#[tokio::test]
async fn cwd_5_subagent_cd_never_persists() {
    let fx = Fixture::new();
    let ctx = CallContext::default();
    let sub = fx.session.subagent();
    let result = common::without_sandbox_note(
        sub.bash(BashInput::new("cd sub && pwd"), &ctx)
            .await
            .unwrap(),
    );
    assert_eq!(result.text, fx.root.join("sub").display().to_string());
    assert_eq!(fx.session.cwd(), fx.root);
    let result =
        common::without_sandbox_note(sub.bash(BashInput::new("cd / && pwd"), &ctx).await.unwrap());
    assert_eq!(result.text, "/", "no reset message for a subagent");
    // It starts where the session is.
    fx.bash("cd sub").await;
    let result = common::without_sandbox_note(sub.bash(BashInput::new("pwd"), &ctx).await.unwrap());
    assert_eq!(result.text, fx.root.join("sub").display().to_string());
}

#[tokio::test]
async fn cwd_2_added_directory_at_runtime() {
    let fx = Fixture::new();
    let extra = fx.base.join("extra");
    std::fs::create_dir_all(&extra).unwrap();
    let extra = std::fs::canonicalize(extra).unwrap();
    let result = fx.bash(&format!("cd {}", extra.display())).await;
    assert!(
        result
            .text
            .ends_with(&format!("Shell cwd was reset to {}", fx.root.display()))
    );
    fx.session.add_directory(&extra);
    let result = fx.bash(&format!("cd {}", extra.display())).await;
    assert_eq!(
        result.text,
        format!("Shell working directory changed to {}", extra.display())
    );
    assert_eq!(fx.session.cwd(), extra);
}

#[tokio::test]
async fn cwd_4_symlinked_workspace_paths_compare_by_real_path() {
    let fx = Fixture::new();
    let link = fx.base.join("link-to-ws");
    std::os::unix::fs::symlink(&fx.root, &link).unwrap();
    let result = fx.bash(&format!("cd {}/sub", link.display())).await;
    assert_eq!(
        result.text,
        format!(
            "Shell working directory changed to {}",
            fx.root.join("sub").display()
        )
    );
}

/// BG-3: a command whose duration equals its timeout is reported exactly once, either
/// finished in the foreground or as a task whose exit is recorded later.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bg_3_commit_point_never_loses_or_doubles_a_completion() {
    let fx = Fixture::new();
    let (mut finished, mut moved) = (0, 0);
    for i in 0..40u64 {
        let mut input = BashInput::new(format!("true; sleep 0.0{}", 3 + i % 5));
        input.timeout_ms = Some(30 + i % 5 * 10);
        let result = fx
            .session
            .bash(input, &CallContext::default())
            .await
            .unwrap();
        match result.background_task_id {
            Some(id) => {
                moved += 1;
                assert!(result.assistant_auto_backgrounded);
                let job = fx.session.tasks().get(&id).unwrap();
                let exit = tokio::time::timeout(Duration::from_secs(5), job.wait())
                    .await
                    .unwrap();
                assert!(exit.status.success());
            }
            None => {
                finished += 1;
                assert_eq!(result.exit_code, Some(0));
            }
        }
    }
    assert_eq!(finished + moved, 40);
    let running: Vec<_> = fx
        .session
        .tasks()
        .list()
        .into_iter()
        .filter(|job| job.exit().is_none())
        .collect();
    assert!(running.is_empty());
}

/// SHELL-3 through sessions: a named session records its shell; resuming restores it;
/// a recorded shell that is gone falls back (the model is told once) or, with no other
/// shell, every command fails naming it.
#[tokio::test]
async fn shell_3_resume_restored_fallback_stale() {
    use wavesh_exec::{Shell, ShellError, ShellKind};
    use wavesh_tool::shell_state::ShellSelection;
    let fx = Fixture::new();
    let state = fx.base.join("state");
    let build = |resolution: Result<Shell, ShellError>| {
        let mut builder = wavesh_tool::Session::builder(&fx.root);
        builder
            .private_base(fx.base.join("private"))
            .no_login_env()
            .sandbox_level(wavesh_exec::sandbox::Level::Off)
            .no_claude_settings()
            .session("s-1", &state)
            .shell_resolution(resolution);
        builder.build().unwrap()
    };
    // A copy of bash that can be made non-executable.
    let copy = fx.base.join("bin/bash");
    std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
    std::fs::copy("/bin/bash", &copy).unwrap();
    let system = Shell::new("/bin/bash", ShellKind::Bash);

    let first = build(Ok(Shell::new(&copy, ShellKind::Bash)));
    assert_eq!(first.shell_selection(), &ShellSelection::New);
    drop(first);
    let resumed = build(Ok(system.clone()));
    assert_eq!(resumed.shell_selection(), &ShellSelection::Restored);
    assert_eq!(resumed.shell().path(), copy.as_path());
    drop(resumed);

    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o644)).unwrap();
    let fallback = build(Ok(system.clone()));
    assert_eq!(
        fallback.shell_selection(),
        &ShellSelection::Fallback { was: copy.clone() }
    );
    let ctx = CallContext::default();
    let result = common::without_sandbox_note(
        fallback
            .bash(BashInput::new("echo hi"), &ctx)
            .await
            .unwrap(),
    );
    assert_eq!(
        result.text,
        format!(
            "Note: the shell changed since this session started (was {}, now /bin/bash).\nhi",
            copy.display()
        )
    );
    let again = common::without_sandbox_note(
        fallback
            .bash(BashInput::new("echo hi"), &ctx)
            .await
            .unwrap(),
    );
    assert_eq!(again.text, "hi", "the note is given once");
    drop(fallback);

    // The fallback was recorded; now make the record point at the missing copy again.
    wavesh_tool::shell_state::record(&state, "s-1", &Shell::new(&copy, ShellKind::Bash)).unwrap();
    let stale = build(Err(ShellError::NotFound {
        searched: "nowhere".into(),
    }));
    assert_eq!(
        stale.shell_selection(),
        &ShellSelection::Stale { was: copy.clone() }
    );
    let error = stale
        .bash(BashInput::new("echo hi"), &ctx)
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains(&copy.display().to_string()),
        "{error}"
    );
}
