//! The bad-input matrix, through the Bash tool (library) and `wavesh mcp`: clear errors or
//! correct results, the host stays up, nothing is left behind.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wavesh_tool::{BashResult, CallContext, ToolError};

use crate::Mcp;
use crate::util::{Workspace, digit_marker, live_pids_with, wait_until};

/// Inputs the tool must refuse, with the words the refusal must contain.
fn refused() -> Vec<(Value, &'static str)> {
    vec![
        (
            json!({"command": 5}),
            "parameter `command` must be a string",
        ),
        (
            json!({"command": ["ls"]}),
            "parameter `command` must be a string",
        ),
        (json!({"command": "ls", "timeout": "soon"}), "timeout"),
        (
            json!({"command": "ls", "run_in_background": 3}),
            "run_in_background",
        ),
        (json!({"command": "ls", "colour": "red"}), "colour"),
        (json!({}), "missing required parameter `command`"),
        (json!("ls"), "must be a JSON object"),
        (json!({"command": ""}), "parameter `command` is empty"),
        (json!({"command": " \t\n "}), "parameter `command` is empty"),
        (json!({"command": "echo a\u{0}b"}), "NUL byte at offset 6"),
    ]
}

async fn library_run(
    session: &wavesh_tool::Session,
    input: Value,
) -> Result<BashResult, ToolError> {
    session.bash_json(&input, &CallContext::default()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schema_bad_input_matrix_through_the_library() {
    let ws = Workspace::new();
    let session = crate::supervised_session(&ws.root, &ws.private);
    for (input, words) in refused() {
        let error = library_run(&session, input.clone())
            .await
            .expect_err(&input.to_string())
            .to_string();
        assert!(error.contains(words), "{input}: {error}");
    }

    // 1 MB and 20 MB commands arrive whole.
    for size in [1_000_000usize, 20_000_000] {
        let command = format!("printf %s {} | wc -c", "x".repeat(size));
        let result = library_run(&session, json!({"command": command}))
            .await
            .unwrap();
        assert_eq!(result.text.trim(), size.to_string());
    }

    // Invalid UTF-8 is shown lossily; the file keeps every byte (OUT-6).
    let result = library_run(&session, json!({"command": r"printf 'a\377\376b\n'"}))
        .await
        .unwrap();
    assert_eq!(result.text, "a\u{FFFD}\u{FFFD}b");

    // A binary flood: persisted, previewed as text.
    let result = library_run(&session, json!({"command": "head -c 3000000 /dev/urandom"}))
        .await
        .unwrap();
    let path = result.output_path.clone().expect("persisted");
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 3_000_000);
    assert!(result.text.starts_with("<persisted-output>"));
    std::fs::remove_file(path).unwrap();

    // A command that closes its stdout and stderr and keeps running: the call returns
    // when the shell does, and the leftover ends with the session (KILL-7).
    let marker = digit_marker();
    let started = Instant::now();
    let result = library_run(
        &session,
        json!({"command": format!("(exec >&- 2>&-; sleep 920.{marker}) & echo started")}),
    )
    .await
    .unwrap();
    assert_eq!(result.text.trim(), "started");
    assert!(started.elapsed() < Duration::from_secs(30));
    // The subshell may not have started its sleep yet when the shell returns.
    assert!(
        wait_until(Duration::from_secs(5), || live_pids_with(&format!(
            "920.{marker}"
        ))
        .len()
            == 1),
        "the leftover is not running: {:?}",
        live_pids_with(&format!("920.{marker}"))
    );

    // 2000 processes: started, and all ended with the session.
    let result = library_run(
        &session,
        json!({"command": format!("for i in $(seq 2000); do sleep 921.{marker} & done; echo forked")}),
    )
    .await
    .unwrap();
    assert_eq!(result.text.trim(), "forked");
    // Children still between fork and exec do not show the marker yet.
    assert!(
        wait_until(Duration::from_secs(10), || live_pids_with(&format!(
            "921.{marker}"
        ))
        .len()
            == 2000),
        "{} of 2000 running",
        live_pids_with(&format!("921.{marker}")).len()
    );
    let still = library_run(&session, json!({"command": "echo still-up"}))
        .await
        .unwrap();
    assert_eq!(still.text, "still-up");
    session.shutdown().await;
    crate::expect_gone(&marker, Duration::from_secs(10), "the session ended");
}

/// A full disk for the output directory (a 2 MiB tmpfs): the command's own write fails
/// and is reported with what was written; the next command gets a clear error; nothing of
/// the failed start is left.
#[tokio::test]
async fn out_full_disk_for_the_output_directory() {
    let mount = std::env::temp_dir().join(format!("wavesh-full-{}", digit_marker()));
    std::fs::create_dir_all(&mount).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=2m", "tmpfs"])
        .arg(&mount)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        std::fs::remove_dir(&mount).unwrap();
        wavesh_testkit::lacking_in_this_mode(
            "a small tmpfs mount (CAP_SYS_ADMIN)",
            "run the tests as root",
        );
        return;
    }
    let ws = Workspace::new();
    let session = crate::supervised_session(&ws.root, &mount);
    let result = session
        .bash_json(
            &json!({"command": "head -c 10000000 /dev/zero | tr '\\0' a; echo after"}),
            &CallContext::default(),
        )
        .await
        .unwrap();
    assert_eq!(result.exit_code, Some(1), "{}", &result.text[..100]);
    let path = result.output_path.clone().expect("persisted");
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 2 * 1024 * 1024);
    let error = session
        .bash_json(&json!({"command": "echo next"}), &CallContext::default())
        .await
        .expect_err("the disk is full")
        .to_string();
    assert!(error.contains("No space left on device"), "{error}");
    std::fs::remove_file(&path).unwrap();
    let after = session
        .bash_json(
            &json!({"command": "echo room-again"}),
            &CallContext::default(),
        )
        .await
        .unwrap();
    assert_eq!(after.text, "room-again");
    let private = session.private_dir().to_path_buf();
    drop(session);
    let left: Vec<_> = std::fs::read_dir(private.parent().unwrap())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "left on the full disk: {left:?}");
    // The helper's subreapers let go of their copies of the output descriptors as they
    // exit, just after the session is dropped: until then the mount is busy.
    let deadline = Instant::now() + Duration::from_secs(5);
    while !std::process::Command::new("umount")
        .arg(&mount)
        .status()
        .unwrap()
        .success()
    {
        assert!(Instant::now() < deadline, "{} stays busy", mount.display());
        std::thread::sleep(Duration::from_millis(50));
    }
    std::fs::remove_dir(&mount).unwrap();
}

/// The same matrix through `wavesh mcp`: every bad call is answered with the error, and
/// the server keeps serving.
#[test]
fn schema_bad_input_matrix_through_mcp() {
    let ws = Workspace::new();
    let mut mcp = Mcp::start(&ws, &[]);
    let mut id = 10;
    for (input, words) in refused() {
        id += 1;
        let answer = mcp.tool(id, "Bash", input.clone());
        assert!(answer.contains(words), "{input}: {answer}");
    }
    let big = format!("printf %s {} | wc -c", "x".repeat(1_000_000));
    assert_eq!(
        mcp.tool(40, "Bash", json!({"command": big})).trim(),
        "1000000"
    );
    assert_eq!(
        mcp.tool(41, "Bash", json!({"command": r"printf 'a\377b'"})),
        "a\u{FFFD}b"
    );
    let flood = mcp.tool(
        42,
        "Bash",
        json!({"command": "head -c 2000000 /dev/urandom"}),
    );
    assert!(flood.starts_with("<persisted-output>"), "{flood}");
    let marker = digit_marker();
    let closed = mcp.tool(
        43,
        "Bash",
        json!({"command": format!("(exec >&- 2>&-; sleep 930.{marker}) & echo started")}),
    );
    assert_eq!(closed.trim(), "started");
    assert_eq!(
        mcp.tool(44, "Bash", json!({"command": "echo still-serving"})),
        "still-serving"
    );
    mcp.close();
    crate::expect_gone(
        &marker,
        Duration::from_secs(3),
        "the leftover outlived the connection",
    );
}
