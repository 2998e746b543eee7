//! The user's login-shell environment, probed once per process (ENV).
//!
//! Agents started from a GUI, an IDE or a service inherit a thin environment: no nvm or
//! Homebrew on PATH, no SSH agent, no proxy or CA bundle. Sourcing the profile for every
//! command would be slow and noisy. Instead the login shell runs once, in the background
//! ([`start`]), with a minimal environment, its own session and no terminal; its
//! `env -0` output is parsed ([`parse`]) and an allowlist adopted without overriding what
//! the host set ([`adopt`]). Every command spawned afterwards inherits the result.

mod adopt;
mod parse;
mod probe;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::sync::watch;

pub use adopt::{ALLOWLIST, Adoption, adopt, merge_path};
pub use parse::{DROPPED, Parsed, parse, parse_cygpath_path};
pub use probe::{ProbeConfig, ProbeReport, probe, probe_shell, set_reaper};

/// The probe's result and what was adopted from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginEnv {
    /// How the probe went.
    pub report: ProbeReport,
    /// What commands inherit.
    pub adoption: Adoption,
}

/// A probe running or done.
#[derive(Debug, Clone)]
pub struct ProbeHandle {
    result: watch::Receiver<Option<Arc<LoginEnv>>>,
}

impl ProbeHandle {
    /// Starts the probe on the current tokio runtime and returns at once (ENV-1).
    pub fn spawn(config: ProbeConfig) -> ProbeHandle {
        let (sender, result) = watch::channel(None);
        tokio::spawn(async move {
            let report = probe(&config).await;
            let host: std::collections::HashMap<String, String> = std::env::vars().collect();
            let adoption = adopt(&report.vars, &host);
            if let Some(error) = &report.error {
                // ENV-6: one diagnostic, never an error for the user.
                tracing::warn!(shell = ?report.shell, attempts = report.attempts, %error, "login shell environment not adopted in full");
            }
            sender.send_replace(Some(Arc::new(LoginEnv { report, adoption })));
        });
        ProbeHandle { result }
    }

    /// The result, waiting at most `limit` for it; `None` if it is not there by then.
    pub async fn wait(&self, limit: Duration) -> Option<Arc<LoginEnv>> {
        let mut result = self.result.clone();
        let waited = tokio::time::timeout(limit, result.wait_for(Option::is_some)).await;
        match waited {
            Ok(Ok(value)) => value.clone(),
            _ => self.result.borrow().clone(),
        }
    }

    /// The result if the probe has finished.
    pub fn now(&self) -> Option<Arc<LoginEnv>> {
        self.result.borrow().clone()
    }
}

static GLOBAL: OnceLock<ProbeHandle> = OnceLock::new();

/// The process-wide probe, started on first use with the default configuration (ENV-1:
/// once per host process). Must be called inside a tokio runtime.
pub fn start() -> ProbeHandle {
    GLOBAL
        .get_or_init(|| ProbeHandle::spawn(ProbeConfig::from_process()))
        .clone()
}

/// The longest a probe can take: attempts × (timeout + backoff), plus a margin for
/// process start and kill.
pub fn probe_budget(config: &ProbeConfig) -> Duration {
    (config.attempt_timeout + config.backoff) * config.attempts + Duration::from_millis(300)
}

/// The home directory used by the probe (`HOME`).
pub fn home() -> Option<PathBuf> {
    std::env::var_os("HOME").map(PathBuf::from)
}
