//! One call, one analysis (PARSE): a Bash call parses its command once (and has it
//! parsed a second time by tree-sitter at most once), and in an unchanged git repository
//! it runs no `git config` process. The counters are this process's, so this file holds
//! one test: a test binary of its own runs alone under any runner.

use std::path::Path;

use wavesh_exec::sandbox::Level;
use wavesh_policy::GitContext;
use wavesh_policy::git_guard::{cached_git_context, git_config_runs};
use wavesh_tool::{BashInput, CallContext, Session};

fn git(dir: &Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?}");
}

fn counts() -> (u64, u64, u64) {
    let (analyses, second) = wavesh_parse::parse_counts();
    (analyses, second, git_config_runs())
}

#[tokio::test]
async fn parse_one_analysis_per_call_and_no_git_process_for_an_unchanged_repository() {
    if std::process::Command::new("git")
        .arg("--version")
        .output()
        .is_err()
    {
        wavesh_testkit::missing_prerequisite("git", "the git repository the calls run in");
        return;
    }
    let base = std::env::temp_dir().join(format!("wavesh-counts-{}", std::process::id()));
    let ws = base.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let ws = std::fs::canonicalize(&ws).unwrap();
    git(&ws, &["init", "-q"]);
    std::fs::write(ws.join("a.txt"), "x\n").unwrap();
    // A repository made a moment ago is cached at once: its files are fingerprinted.
    let session = Session::builder(&ws)
        .no_login_env()
        .no_claude_settings()
        .sandbox_level(Level::Off)
        .build()
        .unwrap();
    let ctx = CallContext::default();
    session.bash(BashInput::new("true"), &ctx).await.unwrap();
    let before = counts();
    let commands = [
        "true",
        "ls -la",
        "git status --short",
        "echo x | grep -c x",
        "cat a.txt",
    ];
    for command in commands {
        let result = session.bash(BashInput::new(command), &ctx).await.unwrap();
        assert!(!result.is_error, "{command}: {}", result.text);
    }
    let after = counts();
    let calls = commands.len() as u64;
    assert_eq!(after.0 - before.0, calls, "analyses for {calls} calls");
    assert!(
        after.1 - before.1 <= calls,
        "{} second parses for {calls} calls",
        after.1 - before.1
    );
    assert_eq!(
        after.2, before.2,
        "git config runs in an unchanged repository (git status included)"
    );

    // The gate's path: prepared once, run without a second analysis.
    let input = BashInput::new("ls");
    let before = counts();
    let prepared = session.prepare(&input);
    session.bash_prepared(input, prepared, &ctx).await.unwrap();
    let after = counts();
    assert_eq!(after.0 - before.0, 1, "analyses for a prepared call");
    assert_eq!(after.2, before.2);

    // A change to the config is seen: git runs again, once.
    git(&ws, &["config", "user.name", "someone"]);
    let before = counts();
    session.bash(BashInput::new("true"), &ctx).await.unwrap();
    assert_eq!(counts().2 - before.2, 1, "a changed config is read again");
    session.shutdown().await;

    // What makes git unsafe is never hidden by the cache: a program in the config, or
    // one in an include file that did not exist when the answer was kept.
    let env: Vec<(String, String)> = Vec::new();
    assert_eq!(cached_git_context(&ws, &env), GitContext::Safe);
    git(&ws, &["config", "include.path", "../extra.cfg"]);
    assert_eq!(cached_git_context(&ws, &env), GitContext::Safe);
    assert_eq!(cached_git_context(&ws, &env), GitContext::Safe);
    std::fs::write(ws.join("extra.cfg"), "[core]\n\tfsmonitor = ./evil\n").unwrap();
    assert!(
        matches!(cached_git_context(&ws, &env), GitContext::Unsafe(_)),
        "an include made after the answer was kept"
    );

    // A change the stamp cannot show (same size, same modification time, as two writes
    // within one tick of a coarse clock) is seen by the fingerprint.
    std::fs::remove_file(ws.join("extra.cfg")).unwrap();
    git(&ws, &["config", "--unset", "include.path"]);
    git(&ws, &["config", "core.quotepath", "false"]);
    assert_eq!(cached_git_context(&ws, &env), GitContext::Safe);
    let config = ws.join(".git/config");
    let mtime = std::fs::metadata(&config).unwrap().modified().unwrap();
    let text = std::fs::read_to_string(&config).unwrap();
    let planted = text.replace("\tquotepath = false\n", "\tpager = !xxxxxxxx\n");
    assert_eq!(planted.len(), text.len(), "{planted}");
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&config)
        .unwrap();
    std::io::Write::write_all(&mut &file, planted.as_bytes()).unwrap();
    file.set_modified(mtime).unwrap();
    drop(file);
    assert!(
        matches!(cached_git_context(&ws, &env), GitContext::Unsafe(_)),
        "a same-size change within one tick"
    );
    std::fs::remove_dir_all(&base).unwrap();
}
