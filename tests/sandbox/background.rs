//! A sandboxed command read back as a task gets what a foreground result gets (SBX-2,
//! SBX-4): scrubbed values masked and denials explained, in TaskOutput, in its
//! notification and in the output file the answer names; so does the file a persisted
//! foreground result names. Through `wavesh mcp`, whose
//! environment the test sets, so the MCP TaskOutput tool is the one tested.

use std::path::Path;

use serde_json::json;
use wavesh_exec::sandbox::Level;

use crate::util::{Mcp, Workspace, digit_marker};
use crate::{enforced_or_skip, write};

/// A fresh directory outside `/tmp` ([`crate::outside_tmp`]).
fn tempfile_outside_tmp() -> std::path::PathBuf {
    let dir = crate::outside_tmp().join(format!("wavesh-bg-{}", crate::util::unique()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The task id of a "moved to the background" answer.
fn task_id(answer: &str) -> String {
    let (_, rest) = answer
        .split_once("with ID: ")
        .unwrap_or_else(|| panic!("no task id: {answer}"));
    rest.split(|c: char| c.is_whitespace() || c == '.')
        .next()
        .unwrap()
        .to_owned()
}

/// The text between `<tag>` and `</tag>`.
fn between<'a>(text: &'a str, tag: &str) -> &'a str {
    let (_, rest) = text
        .split_once(&format!("<{tag}>"))
        .unwrap_or_else(|| panic!("no <{tag}>: {text}"));
    rest.split_once(&format!("</{tag}>")).unwrap().0
}

#[test]
fn sbx_2_sbx_4_background_results_are_masked_and_explain_denials() {
    if !enforced_or_skip(Level::WorkspaceWrite) {
        return;
    }
    let ws = Workspace::new();
    // The home outside `/tmp`, as on a user's machine: under `/tmp` it is mounted back
    // through the session's `/tmp` and its secrets are hidden by mounts, which read as
    // empty files rather than refusals (SBX-8, docs/sandbox.md).
    let home_base = tempfile_outside_tmp();
    let home = home_base.join("home");
    let marker = format!("MARKER{}", digit_marker());
    write(&home.join(".ssh/id_rsa"), &format!("{marker}-id_rsa\n"));
    let token = format!("ghp_{}", digit_marker());
    write(&ws.root.join("found.txt"), &format!("token={token}\n"));
    let mut mcp = Mcp::start_with(&ws, &["--sandbox", "workspace-write"], |server| {
        server.env("GITHUB_TOKEN", &token).env("HOME", &home);
    });
    let secret = home.join(".ssh/id_rsa");
    let command = format!(
        "echo started; sleep 1; cat found.txt; cat {}; echo done",
        secret.display()
    );
    let redact = |text: &str| {
        text.replace(&ws.private.display().to_string(), "[PRIVATE]")
            .replace(&home.display().to_string(), "[HOME]")
    };
    let mut id = 2;
    for (how, arguments) in [
        (
            "run_in_background",
            json!({"command": command, "run_in_background": true}),
        ),
        ("timeout", json!({"command": command, "timeout": 300})),
    ] {
        let started = mcp.tool(id, "Bash", arguments);
        let task = task_id(&started);
        let answer = mcp.tool(
            id + 1,
            "TaskOutput",
            json!({"task_id": task, "block": true, "timeout": 20000}),
        );
        id += 2;
        assert!(
            answer.contains("<status>completed</status>"),
            "{how}: {answer}"
        );
        assert!(
            !answer.contains(&token),
            "{how}: the token was shown: {answer}"
        );
        assert!(
            !answer.contains(&marker),
            "{how}: the secret was shown: {answer}"
        );
        assert!(
            answer.contains("token=[scrubbed $GITHUB_TOKEN]"),
            "{how}: {answer}"
        );
        assert!(
            answer.contains(&format!(
                "sandbox refused: reading {} (a secret",
                secret.display()
            )),
            "{how}: no denial note: {answer}"
        );
        // The output file the answer names says no more than the answer.
        let file = between(&answer, "output_file");
        let on_disk = std::fs::read_to_string(Path::new(file)).unwrap();
        assert!(!on_disk.contains(&token), "{how}: {file} holds the token");
        assert!(
            on_disk.contains("token=[scrubbed $GITHUB_TOKEN]"),
            "{how}: {on_disk}"
        );
        // A page of it too.
        let page = mcp.tool(
            id,
            "TaskOutput",
            json!({"task_id": task, "offset": 0, "limit": 100000}),
        );
        id += 1;
        assert!(
            !page.contains(&token) && page.contains("[scrubbed $GITHUB_TOKEN]"),
            "{how}: {page}"
        );
        let output = between(&answer, "output");
        let notes = answer.rsplit_once("</output>").unwrap().1;
        insta::assert_snapshot!(
            format!("background-{how}"),
            redact(&format!("<output>{output}</output>{notes}"))
        );
    }
    // A foreground result too large to show: the file it names is masked too.
    let large = mcp.tool(
        id,
        "Bash",
        json!({"command": "cat found.txt; head -c 200000 /dev/zero | tr '\\0' x; echo; cat found.txt"}),
    );
    id += 1;
    assert!(!large.contains(&token), "{large}");
    let (_, rest) = large
        .split_once("Full output saved to: ")
        .unwrap_or_else(|| panic!("not persisted: {large}"));
    let file = rest.lines().next().unwrap().trim();
    let on_disk = std::fs::read_to_string(file).unwrap();
    assert!(!on_disk.contains(&token), "{file} holds the token");
    assert_eq!(on_disk.matches("token=[scrubbed $GITHUB_TOKEN]").count(), 2);
    // A task nobody reads back: its notification comes with the next result.
    let started = mcp.tool(
        id,
        "Bash",
        json!({"command": format!("cat found.txt; cat {}", secret.display()), "run_in_background": true}),
    );
    let task = task_id(&started);
    std::thread::sleep(std::time::Duration::from_secs(2));
    let next = mcp.call(id + 1, "Bash", json!({"command": "echo next"}));
    let text = crate::util::result_text(&next);
    assert!(text.contains(&task), "no notification: {text}");
    assert!(
        !text.contains(&token),
        "the notification shows the token: {text}"
    );
    assert!(!text.contains(&marker), "{text}");
    assert!(text.contains("[scrubbed $GITHUB_TOKEN]"), "{text}");
    assert!(text.contains("sandbox refused: reading"), "{text}");
    mcp.close();
    let _ = std::fs::remove_dir_all(&home_base);
}
