//! The probe against real bash and zsh with a fake HOME per test (ENV-2..6).
#![cfg(unix)]
#![expect(clippy::unwrap_used, reason = "tests unwrap freely (STYLE)")]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use wavesh_env::{ProbeConfig, adopt, probe};

struct Home(PathBuf);

impl Home {
    fn new(tag: &str) -> Home {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let dir =
            std::env::temp_dir().join(format!("wavesh-env-{tag}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Home(dir)
    }

    fn write(&self, name: &str, text: &str) {
        std::fs::write(self.0.join(name), text).unwrap();
    }

    fn config(&self, shell: &str) -> ProbeConfig {
        ProbeConfig {
            shell: Some(PathBuf::from(shell)),
            env: vec![
                ("HOME".into(), self.0.display().to_string()),
                ("PATH".into(), "/usr/bin:/bin".into()),
                ("SHELL".into(), shell.into()),
                ("USER".into(), "tester".into()),
            ],
            ..ProbeConfig::from_process()
        }
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// zsh, or `None` with a SKIPPED line where this machine has none (`scripts/test`
/// installs it where it may); a failure in CI ([`wavesh_testkit::missing_prerequisite`]).
fn zsh() -> Option<&'static str> {
    let found = ["/usr/bin/zsh", "/bin/zsh"]
        .into_iter()
        .find(|p| Path::new(p).exists());
    if found.is_none() {
        wavesh_testkit::missing_prerequisite(
            "zsh, for the zsh half of this test",
            "apt-get install zsh; scripts/test does it as root",
        );
    }
    found
}

/// bash with its rc file, and zsh with its own where the machine has zsh.
fn shells() -> Vec<(&'static str, &'static str)> {
    let mut shells = vec![("/bin/bash", ".bashrc")];
    shells.extend(zsh().map(|zsh| (zsh, ".zshrc")));
    shells
}

const RC: &str = "export HTTPS_PROXY=http://proxy.test:3128\nexport NODE_OPTIONS='--require /tmp/evil.js'\nexport SSL_CERT_FILE=/rc/ca.pem\nexport PATH=\"$HOME/tools/bin:$PATH\"\n";

fn check_rc_adoption(shell: &str, rc: &str) {
    let home = Home::new("rc");
    home.write(rc, RC);
    let report = tokio_run(probe(&home.config(shell)));
    assert_eq!(report.error, None, "{report:?}");
    assert!(!report.line_fallback);
    let host: HashMap<String, String> = [
        ("PATH", "/usr/bin:/usr/local/bin"),
        ("SSL_CERT_FILE", "/host/ca.pem"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    let adoption = adopt(&report.vars, &host);
    let adopted: HashMap<&str, &str> = adoption
        .adopted
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(adopted.get("HTTPS_PROXY"), Some(&"http://proxy.test:3128"));
    assert!(
        !adopted.contains_key("NODE_OPTIONS"),
        "NODE_OPTIONS is never adopted"
    );
    assert!(
        !adopted.contains_key("SSL_CERT_FILE"),
        "the host's value stays"
    );
    assert_eq!(adoption.skipped_host_set, vec!["SSL_CERT_FILE".to_owned()]);
    let path = adopted["PATH"];
    let first = format!("{}/tools/bin", home.0.display());
    assert!(path.starts_with(&first), "{path}");
    let dirs: Vec<&str> = path.split(':').collect();
    let mut unique = dirs.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(dirs.len(), unique.len(), "no duplicates: {path}");
    assert!(
        dirs.contains(&"/usr/local/bin"),
        "inherited entries follow: {path}"
    );
}

fn tokio_run<F: Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

#[test]
fn env_5_bashrc_markers_adopted_by_allowlist() {
    check_rc_adoption("/bin/bash", ".bashrc");
}

#[test]
fn env_5_zshrc_markers_adopted_by_allowlist() {
    if let Some(zsh) = zsh() {
        check_rc_adoption(zsh, ".zshrc");
    }
}

#[test]
fn env_2_noisy_rc_that_reads_stdin_and_calls_stty() {
    for (shell, rc) in shells() {
        let home = Home::new("noisy");
        home.write(rc, "echo 'Welcome!'\nfortune 2>/dev/null\nread answer\nstty -echo 2>&1\nprintf 'prompt> '\nexport HTTP_PROXY=http://p:1\n");
        let report = tokio_run(probe(&home.config(shell)));
        assert_eq!(report.error, None, "{shell}: {report:?}");
        assert!(
            report
                .vars
                .iter()
                .any(|(k, v)| k == "HTTP_PROXY" && v == "http://p:1"),
            "{shell}"
        );
    }
}

#[test]
fn env_2_line_fallback_when_env_0_fails() {
    for (shell, rc) in shells() {
        let home = Home::new("fallback");
        home.write(
            rc,
            "env() { if [ \"$1\" = -0 ]; then return 1; fi; command env \"$@\"; }\nexport MULTI=$'one\\ntwo'\nexport HTTPS_PROXY=http://q:2\n",
        );
        let report = tokio_run(probe(&home.config(shell)));
        assert_eq!(report.error, None, "{shell}: {report:?}");
        assert!(report.line_fallback, "{shell}");
        assert!(
            report.dropped_multiline.contains(&"MULTI".to_owned()),
            "{shell}: {report:?}"
        );
        assert!(!report.vars.iter().any(|(k, _)| k == "MULTI"));
        assert!(
            report
                .vars
                .iter()
                .any(|(k, v)| k == "HTTPS_PROXY" && v == "http://q:2")
        );
    }
}

#[test]
fn env_6_slow_rc_gives_up_after_two_attempts() {
    let home = Home::new("slow");
    home.write(".bashrc", "sleep 10\nexport HTTPS_PROXY=http://never:1\n");
    let started = Instant::now();
    let report = tokio_run(probe(&home.config("/bin/bash")));
    let elapsed = started.elapsed();
    assert_eq!(report.attempts, 2);
    assert!(
        report
            .error
            .as_deref()
            .is_some_and(|e| e.contains("did not finish")),
        "{report:?}"
    );
    assert!(
        elapsed >= Duration::from_millis(8_100) && elapsed < Duration::from_millis(10_000),
        "{elapsed:?}"
    );
    assert!(report.vars.is_empty());
}
