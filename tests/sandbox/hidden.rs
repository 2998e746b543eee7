//! SBX-4: a secret hidden by the sandbox is never shown as an empty file, at either
//! level. Every way of reading one (a program's open, a redirect, a copy, a listing of a
//! hidden directory) fails with "Permission denied", the command fails, and the result
//! names the secret in its denial note. Before, a mount of `/dev/null` made `cat .env`
//! print nothing and exit 0, and the model concluded the file was empty.

use wavesh_exec::sandbox::Level;

use crate::{Fixture, WORKSPACE_SECRETS, configurations, enforced_or_skip, write};

#[tokio::test]
async fn sbx_4_a_hidden_secret_never_reads_as_an_empty_file() {
    if !enforced_or_skip(Level::ReadOnly) || !enforced_or_skip(Level::WorkspaceWrite) {
        return;
    }
    let f = Fixture::new();
    for (level, supervised) in configurations() {
        let session = f.session(level, supervised);
        let mut commands = Vec::new();
        for secret in WORKSPACE_SECRETS {
            commands.push(format!("cat {secret}"));
            commands.push(format!("head -c 4 < {secret}"));
            commands.push(format!("wc -c {secret}"));
            commands.push(format!("cp {secret} $TMPDIR/copy && cat $TMPDIR/copy"));
        }
        commands.extend(
            [
                "cat ~/.ssh/id_rsa",
                "cat ~/.aws/credentials",
                "grep -c . ~/.netrc",
                "python3 -c 'print(len(open(\".env\").read()))'",
                "cat ./.env.production | wc -c",
            ]
            .map(str::to_owned),
        );
        for command in commands {
            let result = f.run(&session, &command).await;
            let what = format!("{level:?} (supervised: {supervised}): {command}");
            assert!(
                !result.text.contains(&f.marker),
                "{what}: printed a secret: {}",
                result.text
            );
            assert!(
                result.text.contains("Permission denied") || result.text.contains("denied"),
                "{what}: the read did not fail: {}",
                result.text
            );
            assert!(
                result.text.contains("a secret"),
                "{what}: no note names the hidden secret: {}",
                result.text
            );
            // A pipeline's status is its last command's: `… | wc -c` succeeds, and the
            // note is what tells.
            if !command.contains('|') {
                assert!(!result.success, "{what}: succeeded: {}", result.text);
            }
        }
        // After a `cd`, the note names the secret as the path led to it from there.
        write(&f.ws.join("src/lib.txt"), "x\n");
        let result = f.run(&session, "cd src && cat ../.env").await;
        let named = format!("reading {}", f.ws.join(".env").display());
        assert!(
            result.text.contains(&named) && !result.text.contains(&f.marker),
            "{level:?} (supervised: {supervised}): cd src && cat ../.env: {}",
            result.text
        );
        session.shutdown().await;
    }
    // The real files are untouched.
    for secret in WORKSPACE_SECRETS {
        let text = std::fs::read_to_string(f.ws.join(secret)).unwrap();
        assert!(text.contains(&f.marker), "{secret} changed: {text}");
    }
    write(&f.ws.join("README.md"), "hello\n");
}

/// RO-17, defence in depth: a run the user approved can print a secret file's contents
/// from git's objects, where no mount hides it. The values of the workspace's secret
/// files are masked in what the model reads, as scrubbed variables are.
#[tokio::test]
async fn ro_17_secret_values_printed_from_git_objects_are_masked() {
    if !enforced_or_skip(Level::WorkspaceWrite) {
        return;
    }
    let f = Fixture::new();
    let token = format!("tok-{}", f.marker);
    write(
        &f.ws.join(".env"),
        &format!(
            "API_TOKEN={token}\nexport DB_PASSWORD=\"pw-{}\"\n",
            f.marker
        ),
    );
    crate::git(&f.ws, &["add", "-f", ".env"]);
    crate::git(
        &f.ws,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "oops",
        ],
    );
    for (level, supervised) in configurations() {
        let session = f.session(level, supervised);
        for command in [
            "git show HEAD:.env",
            "git log -p -1",
            "git cat-file -p HEAD:.env | cat",
        ] {
            let result = f.run(&session, command).await;
            let what = format!("{level:?} (supervised: {supervised}): {command}");
            assert!(!result.text.contains(&f.marker), "{what}: {}", result.text);
            assert!(
                result.text.contains("[scrubbed $API_TOKEN from .env]"),
                "{what}: {}",
                result.text
            );
        }
        session.shutdown().await;
    }
}
