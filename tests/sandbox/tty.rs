//! Interactive commands inside the sandbox (PTY-4, SBX-7): a tty command runs at its
//! level, what is typed into it too, and the command's own terminals work.

use std::time::Duration;

use wavesh_exec::sandbox::Level;
use wavesh_tool::{BashInput, BashResult, CallContext, Session, TaskInputInput};

use crate::{Fixture, enforced_or_skip, isolation_or_skip};

async fn tty(session: &Session, command: &str) -> BashResult {
    let mut input = BashInput::new(command);
    input.tty = true;
    input.timeout_ms = Some(20_000);
    session
        .bash(input, &CallContext::default())
        .await
        .unwrap_or_else(|e| panic!("{command}: {e}"))
}

async fn type_in(session: &Session, id: &str, text: &str) -> String {
    let mut input = TaskInputInput::new(id, text);
    input.timeout_ms = 10_000;
    session
        .task_input(input, &CallContext::default())
        .await
        .unwrap()
        .text
}

/// PTY-4: an interactive shell in a tty task at each level; the commands typed into it
/// are confined like the task's own command: nothing outside the writable roots, nothing
/// at all at read-only, however it is typed.
#[tokio::test]
async fn pty_4_typed_commands_run_at_the_task_level() {
    for level in [Level::ReadOnly, Level::WorkspaceWrite] {
        if !enforced_or_skip(level) {
            continue;
        }
        let f = Fixture::empty();
        let session = f.session(level, true);
        let first = tty(&session, "PS1='$ ' bash --norc --noprofile -i").await;
        assert_eq!(
            first.waiting_for_input,
            Some(Some(true)),
            "{level}: {}",
            first.text
        );
        let id = first.background_task_id.clone().unwrap();
        let outside = f.outside.join("typed");
        let inside = f.ws.join("typed");
        let text = type_in(
            &session,
            &id,
            &format!(
                "echo x > {}; echo outside=$?; echo y > {}; echo inside=$?\n",
                outside.display(),
                inside.display()
            ),
        )
        .await;
        assert!(text.contains("outside=1"), "{level}: {text}");
        assert!(
            !outside.exists(),
            "{level}: typed text wrote outside the roots"
        );
        let wrote_inside = inside.exists();
        assert_eq!(
            wrote_inside,
            level == Level::WorkspaceWrite,
            "{level}: {text}"
        );
        let text = type_in(&session, &id, "exit 3\n").await;
        assert!(text.contains("exit code 3"), "{level}: {text}");
        session.shutdown().await;
    }
}

/// SBX-7: a command opens terminals of its own (`openpty`, as `script`, `expect` and
/// pty test suites do) in its private devpts, at each level, with and without `tty`;
/// no other terminal of the machine is listed there.
#[tokio::test]
async fn sbx_7_own_terminals_open_inside_the_sandbox() {
    if !isolation_or_skip() {
        return;
    }
    let probe = "python3 -c 'import os; m, s = os.openpty(); os.write(s, b\"ping\"); print(\"own pty\", os.ttyname(s), os.read(m, 4))'; ls /dev/pts";
    for level in [Level::ReadOnly, Level::WorkspaceWrite] {
        let f = Fixture::empty();
        let session = f.session(level, true);
        let plain = f.run(&session, probe).await;
        assert!(
            plain.text.contains("own pty /dev/pts/0 b'ping'"),
            "{level}: {}",
            plain.text
        );
        assert_eq!(
            plain.text.lines().last(),
            Some("ptmx"),
            "{level}: {}",
            plain.text
        );
        let with_tty = tty(&session, probe).await;
        assert!(
            with_tty.text.contains("own pty /dev/pts/0 b'ping'"),
            "{level}: {}",
            with_tty.text
        );
        assert_eq!(with_tty.exit_code, Some(0), "{level}: {}", with_tty.text);
        session.shutdown().await;
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// PTY-4: where wavesh approves, text for a task above read-only is put to the user
/// with the task and its command first; approved, or allowed for the session, it is
/// typed. A read-only task, and a host that approves its calls itself, type at once.
#[tokio::test]
async fn pty_4_input_to_a_writable_task_asks_where_wavesh_approves() {
    if !enforced_or_skip(Level::WorkspaceWrite) {
        return;
    }
    let f = Fixture::empty();
    let session = f.session(Level::WorkspaceWrite, true);
    session.set_permissions(wavesh_tool::Permissions {
        approver: wavesh_tool::Approver::Wavesh,
        ..wavesh_tool::Permissions::default()
    });
    // Approved as the host would after asking: the command itself runs.
    let mut shell = BashInput::new("PS1='$ ' bash --norc --noprofile -i");
    shell.tty = true;
    shell.timeout_ms = Some(20_000);
    let approved = CallContext {
        approved: true,
        ..CallContext::default()
    };
    let first = session.bash(shell, &approved).await.unwrap();
    let id = first.background_task_id.clone().unwrap();
    let error = session
        .task_input(
            TaskInputInput::new(&id, "touch typed\n"),
            &CallContext::default(),
        )
        .await
        .unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("needs the user's approval")
            && message.contains("workspace-write")
            && message.contains("bash --norc")
            && message.contains("touch typed"),
        "{message}"
    );
    assert!(
        !f.ws.join("typed").exists(),
        "nothing typed before the answer"
    );
    assert!(session.task_input_approval(&id).is_some());
    let typed = session
        .task_input(TaskInputInput::new(&id, "touch typed\n"), &approved)
        .await
        .unwrap();
    assert!(f.ws.join("typed").exists(), "{}", typed.text);
    session.allow_task_input(&id);
    assert!(session.task_input_approval(&id).is_none());
    let again = type_in(&session, &id, "echo again-$((1+1))\n").await;
    assert!(again.contains("again-2"), "{again}");
    session.shutdown().await;

    // The host approves: no question from wavesh (its client sees the text).
    let host = f.session(Level::WorkspaceWrite, true);
    let first = tty(&host, "read -p 'x? ' x").await;
    let id = first.background_task_id.clone().unwrap();
    assert!(host.task_input_approval(&id).is_none());
    host.shutdown().await;
}
