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
        assert_eq!(first.waiting_for_input, Some(Some(true)), "{level}: {}", first.text);
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
        assert!(!outside.exists(), "{level}: typed text wrote outside the roots");
        let wrote_inside = inside.exists();
        assert_eq!(wrote_inside, level == Level::WorkspaceWrite, "{level}: {text}");
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
        assert!(plain.text.contains("own pty /dev/pts/0 b'ping'"), "{level}: {}", plain.text);
        assert_eq!(plain.text.lines().last(), Some("ptmx"), "{level}: {}", plain.text);
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
