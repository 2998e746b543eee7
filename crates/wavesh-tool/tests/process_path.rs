//! Visible paths (PROC-1): a session says how its commands start. A supervisor that
//! cannot start leaves the session on direct children, and the host and the model are
//! told, in the session's `process_path` and in the first result, not only in a log.

use wavesh_exec::sandbox::Level;
use wavesh_tool::{BashInput, CallContext, ProcessPath, Session};

fn workspace(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("wavesh-path-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a throwaway workspace");
    std::fs::canonicalize(&dir).expect("its real path")
}

#[tokio::test]
async fn proc_1_a_supervisor_that_cannot_start_is_said_in_the_result() {
    let ws = workspace("broken");
    for program in ["/nonexistent/wavesh", "/bin/false", "/dev/null"] {
        let session = Session::builder(&ws)
            .no_login_env()
            .no_claude_settings()
            .sandbox_level(Level::Off)
            .supervisor(program)
            .build()
            .unwrap();
        match session.process_path() {
            ProcessPath::Direct { why: Some(why) } => assert!(!why.is_empty(), "{program}"),
            other => panic!("{program}: {other:?}"),
        }
        let ctx = CallContext::default();
        let first = session
            .bash(BashInput::new("echo one"), &ctx)
            .await
            .unwrap();
        assert!(
            first.text.contains("supervisor could not start") && first.text.contains("one"),
            "{program}: {}",
            first.text
        );
        // Said once, not on every result.
        let second = session
            .bash(BashInput::new("echo two"), &ctx)
            .await
            .unwrap();
        assert!(!second.text.contains("supervisor"), "{}", second.text);
    }
    let _ = std::fs::remove_dir_all(&ws);
}

#[tokio::test]
async fn proc_1_no_supervisor_asked_is_direct_without_a_note() {
    let ws = workspace("none");
    let session = Session::builder(&ws)
        .no_login_env()
        .no_claude_settings()
        .sandbox_level(Level::Off)
        .build()
        .unwrap();
    assert_eq!(session.process_path(), &ProcessPath::Direct { why: None });
    let first = session
        .bash(BashInput::new("echo one"), &CallContext::default())
        .await
        .unwrap();
    assert!(!first.text.contains("supervisor"), "{}", first.text);
    let _ = std::fs::remove_dir_all(&ws);
}
