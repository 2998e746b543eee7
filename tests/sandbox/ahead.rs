//! The next read-only command's shell, started ahead of it (SBX-3's cost): a call runs
//! in it only when it would have made the very same start itself, and a shell started
//! ahead leaves nothing behind.

use std::path::Path;
use std::time::Duration;

use wavesh_exec::sandbox::Level;

use crate::{Fixture, enforced_or_skip};

/// The pids of this fixture's shells waiting for their command (no command runs when
/// this is asked: every live process naming the private directory is one).
fn waiting_shells(private: &Path) -> Vec<i32> {
    crate::util::live_pids_with(&private.display().to_string())
}

/// The files the sessions under `private` keep for commands: `b…-output.log`,
/// `b…-cwd`, `b…-tmp`.
fn command_files(private: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![private.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('b')
                && (name.ends_with("-output.log")
                    || name.contains("-cwd")
                    || name.ends_with("-tmp"))
            {
                out.push(name);
            } else if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(entry.path());
            }
        }
    }
    out.sort();
    out
}

/// Runs `command`, and says whether it ran in a shell started ahead.
async fn run_counted(
    f: &Fixture,
    session: &wavesh_tool::Session,
    command: &str,
) -> (wavesh_tool::BashResult, bool) {
    let before = session.start_ahead_counts().used;
    let result = f.run(session, command).await;
    (result, session.start_ahead_counts().used > before)
}

/// SBX-3: read-only commands after the first run in shells started ahead, and each gets
/// what a cold start gives it: its own TMPDIR (gone when it ends), stdin at
/// `/dev/null`, the session's directory, `SECONDS` from its own start, its own output
/// and exit status.
///
/// A start ahead is also unused, rightly, when a directory the secret search watches
/// changes in between (the fixture's lie under `/var/tmp`, where other tests make
/// theirs): so the commands go on until enough of them ran in one, the first few after
/// a pause longer than a second, for `SECONDS`.
#[tokio::test]
async fn sbx_3_read_only_commands_run_in_shells_started_ahead() {
    let f = Fixture::new();
    let session = f.session(Level::ReadOnly, true);
    let first = f.run(&session, "echo first").await;
    assert_eq!(first.text, "first");
    let mut tmps = Vec::new();
    let (mut used_after_pause, mut used) = (0, 0);
    for i in 0..24 {
        if used_after_pause == 0 && i < 8 {
            tokio::time::sleep(Duration::from_millis(1100)).await;
        }
        let (result, ahead) = run_counted(
            &f,
            &session,
            &format!(
                "echo run-{i} $SECONDS; echo \"tmp=$TMPDIR\"; cat; pwd; test -d \"$TMPDIR\" && echo tmp-ok; exit {}",
                i % 3
            ),
        )
        .await;
        let lines: Vec<&str> = result
            .text
            .lines()
            .filter(|line| !line.starts_with("Exit code"))
            .collect();
        assert_eq!(
            lines.first(),
            Some(&format!("run-{i} 0").as_str()),
            "{}",
            result.text
        );
        assert_eq!(
            lines.get(2),
            Some(&f.ws.display().to_string().as_str()),
            "{}",
            result.text
        );
        assert!(result.text.contains("tmp-ok"), "{}", result.text);
        assert_eq!(result.exit_code, Some(i % 3), "{}", result.text);
        let tmp = lines[1].strip_prefix("tmp=").unwrap().to_owned();
        assert!(!Path::new(&tmp).exists(), "{tmp} outlived its command");
        tmps.push(tmp);
        if ahead {
            used += 1;
            if i < 8 && used_after_pause == 0 {
                used_after_pause = 1;
            }
        }
        if used >= 3 && (used_after_pause == 1 || i >= 8) {
            break;
        }
    }
    let count = tmps.len();
    tmps.sort();
    tmps.dedup();
    assert_eq!(tmps.len(), count, "each command has a TMPDIR of its own");
    // A start used after a pause checks `SECONDS`; under other tests' churn of
    // `/var/tmp` every paused start may go stale, and then only the quick ones are used.
    assert!(
        used >= 3,
        "shells started ahead ran {used} of {count} commands ({} after a pause): {:?}",
        used_after_pause,
        session.start_ahead_counts()
    );
    session.shutdown().await;
}

/// SBX-3, SHELL-2: zsh waits on the same descriptor and reads its command the same way:
/// several lines, a here-document, quotes, `SECONDS` from the command's start.
#[tokio::test]
async fn sbx_3_zsh_runs_in_shells_started_ahead() {
    let Some(zsh) = ["/usr/bin/zsh", "/bin/zsh"]
        .into_iter()
        .find(|path| Path::new(path).exists())
    else {
        crate::util::missing_prerequisite("zsh", "apt-get install zsh");
        return;
    };
    let f = Fixture::new();
    let session = f.session_built(
        Level::ReadOnly,
        true,
        |_| {},
        |builder| {
            builder.shell(wavesh_exec::Shell::new(zsh, wavesh_exec::ShellKind::Zsh));
        },
    );
    assert_eq!(f.run(&session, "echo first").await.text, "first");
    // As for bash: a start goes stale, rightly, when other tests change `/var/tmp`; the
    // first calls come after a pause (for `SECONDS`), the rest at once.
    let mut used = 0;
    for i in 0..24 {
        if used == 0 && i < 4 {
            tokio::time::sleep(Duration::from_millis(1100)).await;
        }
        let (result, ahead) = run_counted(
            &f,
            &session,
            &format!(
                "echo \"zsh-{i} $SECONDS $ZSH_VERSION[1]\"\ncat <<'EOF'\nit's $HOME\nEOF\nprint -r -- 'a \"b\" c'"
            ),
        )
        .await;
        assert_eq!(
            result.text,
            format!("zsh-{i} 0 5\nit's $HOME\na \"b\" c"),
            "{}",
            result.text
        );
        if ahead {
            used += 1;
            if used == 2 {
                break;
            }
        }
    }
    assert!(used >= 2, "{:?}", session.start_ahead_counts());
    session.shutdown().await;
}

/// SBX-3: a command that arrives while the next shell is still being started ahead waits
/// for it (used, or found stale and ended); commands at once each run once, with their
/// own output.
#[tokio::test]
async fn sbx_3_calls_back_to_back_and_at_once_each_run_once() {
    let f = Fixture::new();
    let session = f.session(Level::ReadOnly, true);
    for i in 0..5 {
        let result = f.run(&session, &format!("echo back-{i}")).await;
        assert_eq!(result.text, format!("back-{i}"));
    }
    let counts = session.start_ahead_counts();
    assert_eq!(
        counts.used + counts.unused,
        4,
        "each call after the first met one: {counts:?}"
    );
    let (a, b, c) = tokio::join!(
        f.run(&session, "echo a"),
        f.run(&session, "echo b"),
        f.run(&session, "echo c")
    );
    assert_eq!(
        (a.text.as_str(), b.text.as_str(), c.text.as_str()),
        ("a", "b", "c")
    );
    // No descriptor is left behind by a start, used or not: the host holds as many
    // after forty more commands as before them.
    let open = || std::fs::read_dir("/proc/self/fd").unwrap().count();
    session.start_ahead_settled().await;
    let before = open();
    for i in 0..40 {
        let result = f.run(&session, &format!("echo {i}")).await;
        assert_eq!(result.text, i.to_string());
    }
    session.start_ahead_settled().await;
    let after = open();
    assert!(
        after <= before + 2,
        "descriptors: {before} before, {after} after"
    );
    session.shutdown().await;
}

/// A change to the file system a test makes between two commands.
type Plant = Box<dyn Fn(&Fixture)>;

/// SBX-2, SBX-6: a shell started ahead is never used once its plan is stale. Each change
/// below comes after the start ahead is done, and the next command must not see what it
/// planted: a secret-named file and a hardlink to a secret in the workspace, a secret
/// path of the home that did not exist (its directory with it). A move of the session's
/// directory (`cd`) is no change: the next shell is started where the session is.
#[tokio::test]
async fn sbx_2_a_stale_start_ahead_is_never_used() {
    if !enforced_or_skip(Level::ReadOnly) {
        return;
    }
    let f = Fixture::new();
    let session = f.session(Level::ReadOnly, true);
    assert_eq!(f.run(&session, "cat README.md").await.text, "hello");
    let plants: Vec<(&str, Plant, String)> = vec![
        (
            "a secret-named file in the workspace",
            Box::new(|f: &Fixture| {
                crate::write(
                    &f.ws.join(".env.staging"),
                    &format!("{}-staging\n", f.marker),
                );
            }),
            "cat .env.staging".to_owned(),
        ),
        (
            "a hardlink to a secret in the workspace",
            Box::new(|f: &Fixture| {
                std::fs::hard_link(f.home.join(".netrc"), f.ws.join("notes.txt")).unwrap();
            }),
            "cat notes.txt".to_owned(),
        ),
        (
            "a secret path of the home, made with its directory",
            Box::new(|f: &Fixture| {
                crate::write(&f.home.join(".config/hub"), &format!("{}-hub\n", f.marker));
                crate::write(
                    &f.home.join(".terraform.d/credentials.tfrc.json"),
                    &format!("{}-terraform\n", f.marker),
                );
            }),
            format!(
                "cat '{0}/.config/hub' '{0}/.terraform.d/credentials.tfrc.json'",
                f.home.display()
            ),
        ),
    ];
    for (what, plant, read) in &plants {
        // After a stale start the session lets a few chances to start ahead pass: until
        // one is used again, so that a start waits when the change comes.
        let used = session.start_ahead_counts().used;
        for _ in 0..20 {
            assert_eq!(f.run(&session, "echo fresh").await.text, "fresh");
            if session.start_ahead_counts().used > used {
                break;
            }
        }
        assert!(
            session.start_ahead_counts().used > used,
            "{what}: no start was used again"
        );
        session.start_ahead_settled().await;
        let before = session.start_ahead_counts();
        plant(&f);
        let result = f.run(&session, &format!("{read}; echo done")).await;
        assert!(!result.text.contains(&f.marker), "{what}: {}", result.text);
        assert!(result.text.contains("done"), "{what}: {}", result.text);
        let after = session.start_ahead_counts();
        assert_eq!(
            after.unused,
            before.unused + 1,
            "{what}: the stale start was used"
        );
        assert_eq!(after.used, before.used, "{what}");
    }
    // A `cd`: the next shell starts in the new directory and is used there (unless
    // another test changed `/var/tmp` meanwhile: then the next one).
    assert!(
        f.run(&session, "cd src && pwd")
            .await
            .text
            .ends_with("/src")
    );
    let before = session.start_ahead_counts();
    for _ in 0..10 {
        let result = f.run(&session, "pwd; cat main.txt").await;
        assert_eq!(result.text, format!("{}/src\ncode", f.ws.display()));
        if session.start_ahead_counts().used > before.used {
            break;
        }
    }
    assert!(
        session.start_ahead_counts().used > before.used,
        "{:?}",
        session.start_ahead_counts()
    );
    session.shutdown().await;
}

/// SBX-3: where a watched directory changes between every two calls, every start would be
/// stale: after one is, the session lets chances to start ahead pass (1, 2, 4, up to 16),
/// so most calls start cold without a start thrown away beside them, and each still sees
/// what changed.
#[tokio::test]
async fn sbx_3_starts_ahead_back_off_where_every_start_goes_stale() {
    let f = Fixture::new();
    let session = f.session(Level::ReadOnly, true);
    let calls = 16;
    for i in 0..calls {
        session.start_ahead_settled().await;
        crate::write(&f.ws.join(format!("new-{i}.txt")), &format!("made-{i}\n"));
        let result = f.run(&session, &format!("cat new-{i}.txt")).await;
        assert_eq!(result.text, format!("made-{i}"));
    }
    let counts = session.start_ahead_counts();
    assert_eq!(counts.used, 0, "{counts:?}");
    assert!(
        counts.unused <= calls / 2,
        "{} of {calls} calls threw a start away",
        counts.unused
    );
    session.shutdown().await;
}

/// SBX-7: a shell started ahead leaves nothing behind: the session's shutdown ends it and
/// removes its private files, and a session of one command (`start_ahead(false)`) starts
/// none.
#[tokio::test]
async fn sbx_7_a_shell_started_ahead_leaves_nothing_behind() {
    let f = Fixture::new();
    let session = f.session(Level::ReadOnly, true);
    assert_eq!(f.run(&session, "echo one").await.text, "one");
    session.start_ahead_settled().await;
    assert_eq!(waiting_shells(&f.private).len(), 1, "one shell waits");
    assert!(!command_files(&f.private).is_empty(), "its files are made");
    session.shutdown().await;
    assert!(
        command_files(&f.private).is_empty(),
        "{:?}",
        command_files(&f.private)
    );
    crate::util::wait_until(Duration::from_secs(10), || {
        waiting_shells(&f.private).is_empty()
    });
    assert_eq!(
        waiting_shells(&f.private),
        Vec::<i32>::new(),
        "the waiting shell ended"
    );
    assert_eq!(session.start_ahead_counts().unused, 1);

    let g = Fixture::new();
    let single = g.session_built(
        Level::ReadOnly,
        true,
        |_| {},
        |builder| {
            builder.start_ahead(false);
        },
    );
    assert_eq!(g.run(&single, "echo only").await.text, "only");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(waiting_shells(&g.private), Vec::<i32>::new());
    assert_eq!(
        command_files(&g.private),
        Vec::<String>::new(),
        "nothing is made for a next command"
    );
    single.shutdown().await;
}

/// SBX-7 without the cost of SBX-3: where the command is isolated, other sessions'
/// directories are hidden by a mount in its own mount namespace, so the directory that
/// holds the sessions' base (`/tmp` on a machine without `XDG_RUNTIME_DIR`) is not one
/// the secret search watches: entries made and removed there between calls leave the
/// shells started ahead usable. Before, every such change made the read rules again and
/// threw the waiting shell away. A command sees its own session's directory and nothing
/// else beside it, another session's neither by name nor by content.
#[tokio::test]
async fn sbx_7_a_busy_directory_beside_the_sessions_keeps_starts_ahead() {
    if !crate::isolation_or_skip() {
        return;
    }
    let f = Fixture::new();
    // The sessions' base (`wavesh-UID` in it) in a directory of its own that nothing
    // else changes, as `/tmp` holds `/tmp/wavesh-UID`.
    let sessions = f.base.join("runtime");
    std::fs::create_dir_all(&sessions).unwrap();
    let session = f.session_built(
        Level::ReadOnly,
        true,
        |_| {},
        |builder| {
            builder.private_base(&sessions);
        },
    );
    let other = f.session_built(
        Level::WorkspaceWrite,
        true,
        |_| {},
        |builder| {
            builder.private_base(&sessions);
        },
    );
    let planted = f
        .run(
            &other,
            &format!(
                "echo {}-other > \"$TMPDIR\"/other.txt && echo planted",
                f.marker
            ),
        )
        .await;
    assert_eq!(planted.text, "planted");
    let own = session.private_dir().to_path_buf();
    let others = other.private_dir().display().to_string();
    let listed = f
        .run(
            &session,
            &format!(
                "ls -a {}; echo ---; cat {others}/tmp/other.txt 2>&1; ls {others} 2>&1; true",
                own.parent().unwrap().display()
            ),
        )
        .await;
    let own_name = own.file_name().unwrap().to_string_lossy().into_owned();
    let other_name = other
        .private_dir()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let (names, rest) = listed.text.split_once("---").unwrap();
    let names: Vec<&str> = names.split_whitespace().collect();
    assert_eq!(names, [".", "..", own_name.as_str()], "{}", listed.text);
    assert!(
        !rest.contains(&f.marker) && !names.contains(&other_name.as_str()),
        "another session's file was read: {}",
        listed.text
    );
    // Not there at all, rather than refused.
    assert_eq!(
        rest.matches("No such file or directory").count(),
        2,
        "{}",
        listed.text
    );
    // Files come and go beside the sessions' base between calls. Other tests' changes
    // to the directories on the way to the fixture's home (under `/var/tmp`) still make
    // a start stale now and then, rightly: so the calls go on until three were used.
    let mut used = 0;
    for i in 0..24 {
        session.start_ahead_settled().await;
        let churn = sessions.join(format!("churn-{i}"));
        std::fs::write(&churn, "x").unwrap();
        if i > 0 {
            let _ = std::fs::remove_file(sessions.join(format!("churn-{}", i - 1)));
        }
        let (result, ahead) = run_counted(&f, &session, &format!("echo run-{i}")).await;
        assert_eq!(result.text, format!("run-{i}"));
        used += usize::from(ahead);
        if used == 3 {
            break;
        }
    }
    assert_eq!(
        used,
        3,
        "starts ahead used while {} changed: {:?}",
        sessions.display(),
        session.start_ahead_counts()
    );
    session.shutdown().await;
    other.shutdown().await;
}
