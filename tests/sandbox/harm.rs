//! The harm property (SBX): every command of the must-not corpus of
//! `crates/wavesh-policy/tests/corpus/`, run at `read-only` as if it had been approved,
//! leaves the workspace and the fake HOME byte for byte unchanged, prints no marker
//! secret, and reaches no loopback listener.

use std::net::{TcpListener, UdpSocket};
use std::path::PathBuf;

use wavesh_exec::sandbox::Level;
use wavesh_tool::{BashInput, CallContext, HostMode};

use crate::{Fixture, enforced_or_skip};

fn corpus() -> Vec<String> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../wavesh-policy/tests/corpus/must_not.jsonl");
    std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let value: serde_json::Value = serde_json::from_str(line).unwrap();
            value["command"].as_str().unwrap().to_owned()
        })
        .collect()
}

/// The share of the corpus that must really run (its program found and started).
const MIN_RAN_PERCENT: usize = 90;

#[tokio::test]
async fn sbx_harm_property_over_the_must_not_corpus() {
    if !enforced_or_skip(Level::ReadOnly) {
        return;
    }
    let f = Fixture::new();
    let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let port = tcp.local_addr().unwrap().port();
    let commands = corpus();
    assert!(
        commands.len() > 100,
        "the corpus is {} commands",
        commands.len()
    );
    let session = f.session_with(Level::ReadOnly, false, |config| {
        // A deadline kills instead of moving to the background: nothing outlives a run.
        config.mode = HostMode::IdleTurn;
        config.default_timeout_ms = 1_500;
    });
    let before = f.snapshot();
    // The commands whose program the shell found and ran: a corpus of commands that
    // fail before they start (not installed, not executable, a tool error) proves
    // nothing about the sandbox.
    let mut ran = 0usize;
    let mut not_run = Vec::new();
    for command in &commands {
        // Aim the corpus's network commands at the loopback listener.
        let command = command
            .replace("example.com", &format!("127.0.0.1:{port}"))
            .replace("evil.com", &format!("127.0.0.1:{port}"));
        let text = match session
            .bash(BashInput::new(&command), &CallContext::default())
            .await
        {
            Ok(result) => {
                if matches!(result.exit_code, Some(126 | 127)) {
                    not_run.push(format!("{command}: {}", result.text));
                } else {
                    ran += 1;
                }
                result.text
            }
            Err(error) => {
                not_run.push(format!("{command}: {error}"));
                error.to_string()
            }
        };
        assert!(
            !text.contains(&f.marker),
            "{command}: printed a secret: {text}"
        );
        assert_eq!(f.snapshot(), before, "{command}: changed files: {text}");
    }
    session.shutdown().await;
    println!(
        "harm property: {ran} of {} commands ran at read-only; not run:\n{}",
        commands.len(),
        not_run.join("\n")
    );
    assert!(
        ran * 100 >= commands.len() * MIN_RAN_PERCENT,
        "only {ran} of {} corpus commands ran (at least {MIN_RAN_PERCENT} % must); not run:\n{}",
        commands.len(),
        not_run.join("\n")
    );
    assert!(
        tcp.accept().is_err(),
        "a corpus command reached the TCP listener"
    );
    let mut buf = [0u8; 16];
    assert!(
        udp.recv_from(&mut buf).is_err(),
        "a corpus command reached the UDP listener"
    );
}
