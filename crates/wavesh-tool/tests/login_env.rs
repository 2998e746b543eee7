//! The login-shell environment reaches commands (ENV-1, ENV-5, ENV-7) without `-l` and
//! without sourcing any profile per command.
#![cfg(unix)]
#![expect(clippy::unwrap_used, reason = "tests unwrap freely (STYLE)")]

mod common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::Fixture;
use wavesh_env::{ProbeConfig, ProbeHandle, probe_budget};
use wavesh_tool::{BashInput, CallContext, Session};

fn probe_config(home: &std::path::Path) -> ProbeConfig {
    ProbeConfig {
        shell: Some(PathBuf::from("/bin/bash")),
        env: vec![
            ("HOME".into(), home.display().to_string()),
            ("PATH".into(), "/usr/bin:/bin".into()),
            ("SHELL".into(), "/bin/bash".into()),
        ],
        ..ProbeConfig::from_process()
    }
}

fn session(fx: &Fixture, config: ProbeConfig) -> Session {
    let budget = probe_budget(&config);
    let mut builder = Session::builder(&fx.root);
    builder
        .private_base(fx.base.join("private"))
        .sandbox_level(wavesh_exec::sandbox::Level::Off)
        .no_claude_settings()
        .login_env(ProbeHandle::spawn(config), budget);
    builder.build().unwrap()
}

#[tokio::test]
async fn env_7_commands_inherit_the_adopted_environment() {
    let fx = Fixture::new();
    let home = fx.base.join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join(".bashrc"),
        "export HTTPS_PROXY=http://proxy.test:3128\nexport NODE_OPTIONS=--inspect\nexport PATH=\"$HOME/tools/bin:$PATH\"\nexport WAVESH_RC_RAN=1\n",
    )
    .unwrap();
    let session = session(&fx, probe_config(&home));
    let result = session
        .bash(
            BashInput::new(
                "echo \"[$HTTPS_PROXY][$NODE_OPTIONS][$WAVESH_RC_RAN]\"; echo \"$PATH\"",
            ),
            &CallContext::default(),
        )
        .await
        .unwrap();
    let lines: Vec<&str> = result.text.lines().collect();
    assert_eq!(
        lines[0], "[http://proxy.test:3128][][]",
        "allowlisted only; the rc file is not sourced per command"
    );
    assert!(
        lines[1].starts_with(&format!("{}/tools/bin:", home.display())),
        "{}",
        lines[1]
    );
}

#[tokio::test]
async fn env_1_a_slow_probe_never_delays_startup() {
    let fx = Fixture::new();
    let home = fx.base.join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join(".bashrc"),
        "sleep 10\nexport HTTPS_PROXY=http://never:1\n",
    )
    .unwrap();
    let started = Instant::now();
    let session = session(&fx, probe_config(&home));
    assert!(
        started.elapsed() < Duration::from_millis(500),
        "building the session waits for nothing"
    );
    let result = session
        .bash(
            BashInput::new("echo \"[$HTTPS_PROXY]\""),
            &CallContext::default(),
        )
        .await
        .unwrap();
    let elapsed = started.elapsed();
    // The first command waits at most for the probe's bound (about 8.4 s), then runs
    // with the inherited environment.
    assert!(elapsed < Duration::from_millis(9_500), "{elapsed:?}");
    assert_eq!(result.text, "[]");
}
