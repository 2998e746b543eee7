//! Local git configuration at the defaults (SBX-9): a command at `workspace-write`
//! writes `.git/config` through a layer of its own; when it ends, git's own reader
//! judges the copy and only keys that run no program reach the real file, key by key;
//! the rest are dropped and named. Direct and through the supervisor.

use std::path::Path;

use wavesh_exec::sandbox::Level;
use wavesh_tool::{BashInput, CallContext};

use crate::{Fixture, enforced_or_skip};

/// `git config --file` on the real config of `ws`: the values of `key`.
fn real(ws: &Path, key: &str) -> Vec<String> {
    let output = std::process::Command::new("git")
        .args(["config", "--file"])
        .arg(ws.join(".git/config"))
        .args(["--get-all", key])
        .output()
        .unwrap();
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

fn set(ws: &Path, key: &str, value: &str) {
    let status = std::process::Command::new("git")
        .args(["config", "--file"])
        .arg(ws.join(".git/config"))
        .args([key, value])
        .status()
        .unwrap();
    assert!(status.success());
}

fn ready() -> bool {
    enforced_or_skip(Level::WorkspaceWrite)
        && if wavesh_exec::sandbox::overlay_available() {
            true
        } else {
            crate::util::missing_prerequisite(
                "overlayfs",
                "overlay mounts in a user or mount namespace",
            );
            false
        }
}

/// Keys that run no program land in the real file, and the result says which.
#[tokio::test]
async fn sbx_9_allowed_keys_land() {
    if !ready() {
        return;
    }
    for supervised in [false, true] {
        let f = Fixture::new();
        let session = f.session(Level::WorkspaceWrite, supervised);
        let result = f
            .run(
                &session,
                "git config user.email a@b.c && git config user.name 'A B' \
                 && git remote add origin https://example.invalid/r.git \
                 && git config branch.main.remote origin && git config init.defaultBranch main \
                 && git config core.autocrlf input && git config --add remote.origin.fetch '+refs/tags/*:refs/tags/*' \
                 && git config --get user.email",
            )
            .await;
        assert_eq!(
            result.exit_code,
            Some(0),
            "supervised={supervised}: {}",
            result.text
        );
        assert!(
            result.text.contains("Applied to .git/config: "),
            "{}",
            result.text
        );
        assert!(!result.text.contains("refused"), "{}", result.text);
        assert_eq!(real(&f.ws, "user.email"), ["a@b.c"]);
        assert_eq!(real(&f.ws, "user.name"), ["A B"]);
        assert_eq!(
            real(&f.ws, "remote.origin.url"),
            ["https://example.invalid/r.git"]
        );
        assert_eq!(
            real(&f.ws, "remote.origin.fetch"),
            [
                "+refs/heads/*:refs/remotes/origin/*",
                "+refs/tags/*:refs/tags/*"
            ]
        );
        assert_eq!(real(&f.ws, "branch.main.remote"), ["origin"]);
        assert_eq!(real(&f.ws, "init.defaultbranch"), ["main"]);
        assert_eq!(real(&f.ws, "core.autocrlf"), ["input"]);
        // A commit of the same command reaches the real repository: HEAD and the index
        // come back with the config.
        let result = f
            .run(
                &session,
                "git add README.md && git commit -qm first && git log --oneline | wc -l",
            )
            .await;
        assert_eq!(result.exit_code, Some(0), "{}", result.text);
        let log = std::process::Command::new("git")
            .args(["-C"])
            .arg(&f.ws)
            .args(["log", "--format=%an <%ae> %s"])
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&log.stdout).trim(),
            "A B <a@b.c> first"
        );
        session.shutdown().await;
    }
}

/// Keys that can run a program never reach the real file, set by `git config` or by
/// editing the file, and each is named.
#[tokio::test]
async fn sbx_9_program_keys_are_dropped_and_named() {
    if !ready() {
        return;
    }
    let cases: &[(&str, &[&str])] = &[
        (
            "git config core.fsmonitor 'touch pwned'; git config core.pager 'sh -c x'; git config core.editor vim; git config core.sshCommand 'ssh -oProxyCommand=x'",
            &[
                "core.fsmonitor",
                "core.pager",
                "core.editor",
                "core.sshcommand",
            ],
        ),
        (
            "git config core.hooksPath .evil; git config alias.st '!touch pwned'; git config sequence.editor x; git config gpg.program x",
            &[
                "core.hookspath",
                "alias.st",
                "sequence.editor",
                "gpg.program",
            ],
        ),
        (
            "git config filter.x.clean 'touch pwned'; git config diff.x.textconv cat; git config merge.x.driver x; git config credential.helper '!x'",
            &[
                "filter.x.clean",
                "diff.x.textconv",
                "merge.x.driver",
                "credential.helper",
            ],
        ),
        // The include trick: the included file would bring the rest.
        (
            "printf '[core]\\n\\tfsmonitor = x\\n' > evil.cfg; git config include.path \"$PWD/evil.cfg\"; printf '[includeIf \"gitdir:/\"]\\n\\tpath = evil.cfg\\n' >> .git/config",
            &["include.path", "includeif.gitdir:/.path"],
        ),
        // A remote whose transport runs a program, beside a url that is fine.
        (
            "printf '[remote \"x\"]\\n\\turl = https://example.invalid/x.git\\n\\tuploadpack = touch pwned\\n\\treceivepack = touch pwned\\n' >> .git/config; git config http.proxy http://127.0.0.1:1; git config core.gitProxy x",
            &[
                "remote.x.uploadpack",
                "remote.x.receivepack",
                "http.proxy",
                "core.gitproxy",
            ],
        ),
    ];
    for supervised in [false, true] {
        for (command, keys) in cases {
            let f = Fixture::new();
            let session = f.session(Level::WorkspaceWrite, supervised);
            let before = std::fs::read(f.ws.join(".git/config")).unwrap();
            let result = f.run(&session, command).await;
            for key in *keys {
                assert!(real(&f.ws, key).is_empty(), "{key} reached the real config");
                assert!(
                    result.text.contains(key),
                    "{key} not named: {}",
                    result.text
                );
            }
            assert!(
                result.text.contains("The sandbox refused: setting"),
                "{}",
                result.text
            );
            if command.contains("remote \"x\"") {
                assert_eq!(
                    real(&f.ws, "remote.x.url"),
                    ["https://example.invalid/x.git"]
                );
            } else {
                assert_eq!(std::fs::read(f.ws.join(".git/config")).unwrap(), before);
            }
            assert!(!f.ws.join("pwned").exists());
            session.shutdown().await;
        }
    }
}

/// A rename and an unset apply; a malformed file applies nothing and says so; removing
/// the file applies nothing; planted `commondir` and `config.worktree` never come back.
#[tokio::test]
async fn sbx_9_rename_unset_malformed_and_planted() {
    if !ready() {
        return;
    }
    for supervised in [false, true] {
        let f = Fixture::new();
        set(&f.ws, "remote.old.url", "https://example.invalid/old.git");
        set(&f.ws, "user.name", "Old Name");
        let session = f.session(Level::WorkspaceWrite, supervised);
        let result = f
            .run(&session, "git remote rename old new && git config --unset user.name && git remote -v | head -1")
            .await;
        assert_eq!(result.exit_code, Some(0), "{}", result.text);
        assert_eq!(
            real(&f.ws, "remote.new.url"),
            ["https://example.invalid/old.git"]
        );
        assert!(real(&f.ws, "remote.old.url").is_empty());
        assert!(real(&f.ws, "user.name").is_empty());

        let before = std::fs::read(f.ws.join(".git/config")).unwrap();
        let result = f
            .run(
                &session,
                "git config user.email m@x.y; printf '[broken\\n' >> .git/config; true",
            )
            .await;
        assert!(result.text.contains("malformed"), "{}", result.text);
        assert_eq!(std::fs::read(f.ws.join(".git/config")).unwrap(), before);

        let result = f.run(&session, "rm .git/config; echo /elsewhere > .git/commondir; printf '[core]\\n\\tfsmonitor = x\\n' > .git/config.worktree; true").await;
        assert!(
            result.text.contains("did not apply removing"),
            "{}",
            result.text
        );
        assert_eq!(std::fs::read(f.ws.join(".git/config")).unwrap(), before);
        assert!(!f.ws.join(".git/commondir").exists());
        assert!(!f.ws.join(".git/config.worktree").exists());
        session.shutdown().await;
    }
}

/// A background task's change applies when it ends, key by key: a change made to the
/// real file meanwhile (another key) stays.
#[tokio::test]
async fn sbx_9_background_tasks_apply_key_by_key_at_their_end() {
    if !ready() {
        return;
    }
    for supervised in [false, true] {
        let f = Fixture::new();
        let session = f.session(Level::WorkspaceWrite, supervised);
        let mut input = BashInput::new("git config user.email bg@x.y && sleep 1.5");
        input.run_in_background = true;
        session.bash(input, &CallContext::default()).await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        // Meanwhile, the user changes another key of the real file.
        set(&f.ws, "user.name", "Meanwhile");
        for _ in 0..200 {
            if !real(&f.ws, "user.email").is_empty() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        }
        assert_eq!(
            real(&f.ws, "user.email"),
            ["bg@x.y"],
            "supervised={supervised}"
        );
        assert_eq!(
            real(&f.ws, "user.name"),
            ["Meanwhile"],
            "supervised={supervised}"
        );
        session.shutdown().await;
    }
}
