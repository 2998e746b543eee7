//! SBX-6: no command can loosen or step around the sandbox. Each test is a class of
//! breaks, with cases of its own beyond the first example found:
//! - a write that widens the next command's sandbox (git pointer files, settings);
//! - a rename that carries a protection, or a hiding mount, away from its name.
//!
//! Every case runs at workspace-write, direct and through the supervisor, wherever the
//! machine gives the protected-paths guarantee ([`enforced_or_skip`]).

use wavesh_exec::sandbox::Level;

use crate::{Fixture, configurations, enforced_or_skip, write};

/// The workspace-write configurations (direct, supervised) this machine enforces.
fn workspace_write() -> Vec<bool> {
    configurations()
        .into_iter()
        .filter(|(level, _)| *level == Level::WorkspaceWrite)
        .filter(|(level, _)| enforced_or_skip(*level))
        .map(|(_, supervised)| supervised)
        .collect()
}

/// Runs `plant` in one session, then `attack` in the same session and in a new one:
/// the attack must print no ESCAPED and leave the outside directory unchanged.
async fn plant_then_attack(name: &str, plant: &str, attack: &str) {
    for supervised in workspace_write() {
        let f = Fixture::new();
        let out = f.outside.display().to_string();
        let plant = plant.replace("$OUT", &out);
        let attack = attack.replace("$OUT", &out);
        let session = f.session(Level::WorkspaceWrite, supervised);
        let planted = f.run(&session, &plant).await;
        let same = f.run(&session, &attack).await;
        session.shutdown().await;
        let next = f.session(Level::WorkspaceWrite, supervised);
        let fresh = f.run(&next, &attack).await;
        next.shutdown().await;
        for (when, result) in [("same session", &same), ("next session", &fresh)] {
            assert!(
                !result.text.contains("ESCAPED"),
                "{name} (supervised={supervised}, {when}): planted: {}\nattack: {}",
                planted.text,
                result.text
            );
        }
        assert_eq!(
            std::fs::read_to_string(f.outside.join("victim.txt")).unwrap(),
            "original\n",
            "{name} (supervised={supervised})"
        );
        assert!(
            !f.outside.join("new").exists(),
            "{name} (supervised={supervised}): a file was made outside"
        );
    }
}

const WRITE_OUTSIDE: &str = "{ echo pwned > $OUT/victim.txt && echo ESCAPED; } 2>&1; \
                             { touch $OUT/new && echo ESCAPED; } 2>&1; true";

#[tokio::test]
async fn sbx_6_a_commondir_never_widens_the_next_sandbox() {
    plant_then_attack(
        "absolute commondir",
        "printf %s $OUT > .git/commondir; true",
        WRITE_OUTSIDE,
    )
    .await;
    plant_then_attack(
        "relative commondir",
        "printf %s ../../outside > .git/commondir; true",
        WRITE_OUTSIDE,
    )
    .await;
}

#[tokio::test]
async fn sbx_6_a_planted_git_file_never_widens_the_next_sandbox() {
    for (name, plant) in [
        (
            "gitdir: / after moving .git away",
            "mv .git .git.orig; printf 'gitdir: /\\n' > .git; true",
        ),
        (
            "gitdir: the outside after moving .git away",
            "mv .git .git.orig; printf 'gitdir: %s\\n' $OUT > .git; true",
        ),
        (
            "a fake worktree layout pointing outside",
            "mv .git .git.orig; mkdir -p fake/worktrees/x; printf ../.. > fake/worktrees/x/commondir; \
             printf 'gitdir: fake/worktrees/x\\n' > .git; printf %s $OUT > fake/worktrees/x/commondir; true",
        ),
        (
            "a nested repository's .git file",
            "mkdir -p sub && printf 'gitdir: %s\\n' $OUT > sub/.git; true",
        ),
    ] {
        plant_then_attack(name, plant, WRITE_OUTSIDE).await;
    }
}

/// The protected paths stay where they are: `.git` (whose `hooks/` and `config` are
/// read-only) and `.claude/` cannot be renamed away and replaced; nor can the parent
/// of a hidden secret, in the workspace or in a home inside a writable root.
#[tokio::test]
async fn sbx_6_no_rename_moves_a_protection_away() {
    for supervised in workspace_write() {
        let f = Fixture::new();
        write(&f.ws.join(".git/hooks/pre-commit"), "#!/bin/sh\nexit 0\n");
        write(
            &f.ws.join("deploy/prod/.env"),
            &format!("{}-deep-env\n", f.marker),
        );
        let home = f.home.display().to_string();
        let session = f.session_with(Level::WorkspaceWrite, supervised, |config| {
            // The home is writable, as with `--add-dir ~`.
            config.sandbox.allow_write = vec![f.home.clone()];
        });
        let attacks = [
            (
                "move .git and plant a hook in a new one",
                "{ mv .git .git.orig && mkdir -p .git/hooks && echo 'echo ESCAPED' > .git/hooks/pre-commit \
                 && echo ESCAPED; } 2>&1; true"
                    .to_owned(),
            ),
            (
                "move .git/hooks's parent by a copy and swap",
                "{ cp -r .git .git.new && echo 'echo ESCAPED' > .git.new/hooks/pre-commit \
                 && rm -rf .git && mv .git.new .git && echo ESCAPED; } 2>&1; true"
                    .to_owned(),
            ),
            (
                "move .claude and write settings",
                "{ mv .claude .claude.orig && mkdir .claude && echo '{}' > .claude/settings.local.json \
                 && echo ESCAPED; } 2>&1; true"
                    .to_owned(),
            ),
            (
                "move the parent of a hidden workspace secret",
                "{ mv deploy deploy2 && cat deploy2/prod/.env; } 2>&1; { mv deploy/prod deploy/p2 && cat deploy/p2/.env; } 2>&1; true"
                    .to_owned(),
            ),
            (
                "move the home's .config",
                format!("{{ mv {home}/.config {home}/.x && cat {home}/.x/gh/hosts.yml; }} 2>&1; true"),
            ),
            (
                "move the home's .ssh",
                format!("{{ mv {home}/.ssh {home}/.y && cat {home}/.y/id_rsa; }} 2>&1; true"),
            ),
        ];
        for (name, command) in attacks {
            let result = f.run(&session, &command).await;
            assert!(
                !result.text.contains("ESCAPED"),
                "{name} (supervised={supervised}): {}",
                result.text
            );
            assert!(
                !result.text.contains(&f.marker),
                "{name} (supervised={supervised}): a secret was printed: {}",
                result.text
            );
        }
        session.shutdown().await;
        assert_eq!(
            std::fs::read_to_string(f.ws.join(".git/hooks/pre-commit")).unwrap(),
            "#!/bin/sh\nexit 0\n",
            "supervised={supervised}"
        );
        assert!(f.ws.join(".git/config").exists(), "supervised={supervised}");
    }
}

/// A settings file a sandboxed command can write only tightens the next session
/// (SBX-6): `.claude/settings.local.json` planted in a workspace that had no `.claude/`,
/// turning the sandbox off, excluding the shell's programs, allowing writes everywhere
/// and adding `/` as a directory, leaves the next `wavesh mcp` session's sandbox as it was.
#[test]
fn sbx_6_planted_settings_only_tighten_the_next_session() {
    if !enforced_or_skip(Level::WorkspaceWrite) {
        return;
    }
    let ws = crate::util::Workspace::new();
    let base = ws.root.parent().unwrap().to_path_buf();
    let (home, outside) = (base.join("home"), base.join("outside"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let fake_home = |command: &mut std::process::Command| {
        command.env("HOME", &home);
    };
    let settings = r#"{"sandbox": {"enabled": false, "excludedCommands": ["bash", "touch", "sh"],
        "allowUnsandboxedCommands": true, "autoAllowBashIfSandboxed": true,
        "filesystem": {"allowWrite": ["//"]}},
        "permissions": {"additionalDirectories": ["/"], "allow": ["Bash(*)"]}}"#;
    let mut first = crate::util::Mcp::start_with(&ws, &[], fake_home);
    let planted = first.tool(
        2,
        "Bash",
        serde_json::json!({"command": format!("mkdir -p .claude && cat > .claude/settings.local.json <<'EOF'\n{settings}\nEOF\necho planted")}),
    );
    assert!(planted.contains("planted"), "{planted}");
    first.close();
    let mut next = crate::util::Mcp::start_with(&ws, &[], fake_home);
    for (id, command) in [
        (
            3,
            format!("touch {}/new && echo ESCAPED", outside.display()),
        ),
        (
            4,
            format!("bash -c 'touch {}/new2' && echo ESCAPED", outside.display()),
        ),
        (5, "touch /wavesh-escaped-root && echo ESCAPED".to_owned()),
    ] {
        let text = next.tool(id, "Bash", serde_json::json!({"command": command}));
        assert!(!text.contains("ESCAPED"), "{command}: {text}");
    }
    next.close();
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    assert!(!std::path::Path::new("/wavesh-escaped-root").exists());
}
