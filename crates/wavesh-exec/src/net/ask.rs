//! Asking the user about a host the policy does not allow (NET-2): a host (wavesh mcp
//! with an elicitation-capable client) installs an asker, and a request of a sandboxed
//! command for a host nothing allows waits for the user's answer instead of being
//! refused at once. A host is asked about once per session: "once" lets that one
//! connection through (the next asks again), "this session" and "always" every later
//! one too (the asker writes "always" where the user's settings keep it), and a "no"
//! refuses every later one without asking again. Deny rules, the read-only scope
//! and the address rules are never asked about: they refuse as before, and the address
//! of a granted name is still checked when it is resolved.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use super::policy::Scope;
use super::proxy::Proxy;

/// The user's answer about one host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostAnswer {
    /// This connection only.
    Once,
    /// Every connection of this session.
    Session,
    /// Every connection from now on (the asker has written the rule).
    Always,
    /// Refused (declined, dismissed, or no answer).
    No,
}

/// Asks the user whether commands may reach `host:port`.
pub type HostAsker =
    Arc<dyn Fn(String, u16) -> Pin<Box<dyn Future<Output = HostAnswer> + Send>> + Send + Sync>;

/// How long a question may stay unanswered before the request is refused.
const ANSWER_WAIT: Duration = Duration::from_secs(120);

/// What asking decided for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Let it through.
    Granted,
    /// The user said no (or did not answer).
    Declined,
    /// Nobody to ask: refuse as the policy says.
    NobodyToAsk,
}

fn key(host: &str, port: u16) -> (String, u16) {
    (host.to_ascii_lowercase(), port)
}

impl Proxy {
    /// Installs (or replaces) the asker; `None` removes it.
    pub fn set_asker(&self, asker: Option<HostAsker>) {
        *self.asker.lock().unwrap_or_else(PoisonError::into_inner) = asker;
    }

    /// Whether an asker is installed.
    pub fn has_asker(&self) -> bool {
        self.asker
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    /// The hosts granted for the rest of the session, as `host:port`.
    pub fn granted_hosts(&self) -> Vec<String> {
        self.answered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|(_, granted)| *granted)
            .map(|((host, port), _)| format!("{host}:{port}"))
            .collect()
    }

    /// The user's standing answer about `host:port`, if any.
    fn answered(&self, host: &str, port: u16) -> Option<Outcome> {
        let wanted = key(host, port);
        self.answered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .find(|(k, _)| *k == wanted)
            .map(|(_, granted)| {
                if *granted {
                    Outcome::Granted
                } else {
                    Outcome::Declined
                }
            })
    }

    fn remember(&self, host: &str, port: u16, granted: bool) {
        self.answered
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((key(host, port), granted));
    }

    /// A request for `host:port` that no rule allows: granted for the session already,
    /// or put to the user (one question at a time, so concurrent connections to a new
    /// host ask once), or refused when there is nobody to ask.
    pub(crate) async fn ask_about(&self, scope: Scope, host: &str, port: u16) -> Outcome {
        if scope != Scope::Session {
            return Outcome::NobodyToAsk;
        }
        if let Some(outcome) = self.answered(host, port) {
            return outcome;
        }
        let Some(asker) = self
            .asker
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
        else {
            return Outcome::NobodyToAsk;
        };
        let _one_at_a_time = self.asking.lock().await;
        // Another connection may have had its answer while this one waited.
        if let Some(outcome) = self.answered(host, port) {
            return outcome;
        }
        let answer = tokio::time::timeout(ANSWER_WAIT, asker(host.to_owned(), port))
            .await
            .unwrap_or(HostAnswer::No);
        tracing::info!(host, port, ?answer, "the user answered about a host");
        match answer {
            HostAnswer::Once => Outcome::Granted,
            HostAnswer::Session | HostAnswer::Always => {
                self.remember(host, port, true);
                Outcome::Granted
            }
            HostAnswer::No => {
                self.remember(host, port, false);
                Outcome::Declined
            }
        }
    }
}
