//! The session's network (NET-1..3): a network namespace of the session's own, held by
//! the supervisor's zygote (`supervisor::helper::zygote`), whose only way out is the
//! host's proxy.

pub mod ask;
pub mod policy;
pub mod proxy;

use std::ffi::OsString;
use std::sync::Arc;

pub use ask::{HostAnswer, HostAsker};
pub use policy::{DomainPattern, NetPolicy, Refused, Scope};
pub use proxy::{Proxy, Refusal};

/// The session's network as commands see it: the proxy and its two ports inside the
/// namespace.
#[derive(Debug, Clone)]
pub struct SessionNetwork {
    /// The proxy in the host.
    pub proxy: Arc<Proxy>,
    /// The runtime it runs on, ended with the session.
    pub runtime: Arc<ProxyRuntime>,
}

/// The proxy's own runtime (one worker thread), so it serves whatever the host's
/// runtime does; shut down when the session's last reference goes.
#[derive(Debug)]
pub struct ProxyRuntime(Option<tokio::runtime::Runtime>);

impl ProxyRuntime {
    /// Starts it.
    pub fn start() -> std::io::Result<ProxyRuntime> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("wavesh-proxy")
            .enable_io()
            .enable_time()
            .build()?;
        Ok(ProxyRuntime(Some(runtime)))
    }

    /// Its handle.
    pub fn handle(&self) -> tokio::runtime::Handle {
        self.0
            .as_ref()
            .map(|r| r.handle().clone())
            .expect("the runtime lives until dropped")
    }
}

impl Drop for ProxyRuntime {
    fn drop(&mut self) {
        // Never blocks, so a session may end inside the host's own runtime.
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

/// The session proxy's port inside the namespace: every sandboxed command with network.
pub const PROXY_PORT: u16 = 39_080;
/// The read-only port: a command approved as read-only that reads over the network
/// (`gh pr view`) may connect here and nowhere else (Landlock, NET-3).
pub const READ_PORT: u16 = 39_081;

/// The port each scope's listener has inside the namespace.
pub fn port(scope: Scope) -> u16 {
    match scope {
        Scope::Session => PROXY_PORT,
        Scope::Read => READ_PORT,
    }
}

/// A command's use of the session's proxy, for its refusal note.
#[derive(Debug, Clone)]
pub struct NetworkUse {
    /// The proxy.
    pub proxy: Arc<Proxy>,
    /// Which of its listeners the command can reach.
    pub scope: Scope,
    /// When the command started.
    pub since: std::time::Instant,
}

impl NetworkUse {
    /// What the proxy refused through this command's listener since it started;
    /// `output` is what the model reads beside it (a refusal it already shows in full is
    /// named by its host only).
    pub fn note(&self, output: &str) -> Option<String> {
        refusal_note(&self.proxy.refusals_since(self.scope, self.since), output)
    }
}

/// In a session with its own network namespace, every sandboxed command runs in it
/// (the supervisor's zygote forks it there). Settles `plan`'s network for it: a command
/// at `workspace-write` gets the namespace's loopback and the session's proxy; a command
/// approved as read-only that reads over the network gets the read port only (NET-3),
/// which needs Landlock's TCP rules (ABI 4), and no network without them; any other
/// read-only command no socket at all. Returns the proxy scope it may use.
pub fn scope_for(plan: &mut crate::sandbox::Plan) -> Option<Scope> {
    use crate::sandbox::Level;
    let scope = match plan.level {
        Level::WorkspaceWrite => Some(Scope::Session),
        Level::ReadOnly if plan.network => {
            let abi = crate::sandbox::support().landlock_abi;
            if abi >= 4 {
                Some(Scope::Read)
            } else {
                tracing::warn!(
                    abi,
                    "Landlock before ABI 4 cannot keep a read-only command to the read port; it gets no network"
                );
                None
            }
        }
        _ => None,
    };
    plan.network = scope.is_some();
    plan.session_net = scope;
    scope
}

/// The variables that point a command's clients at the proxy for `scope` (NET-2), upper
/// and lower case, and `NO_PROXY` for the session's own loopback.
pub fn proxy_env(scope: Scope) -> Vec<(OsString, OsString)> {
    let url = format!("http://127.0.0.1:{}", port(scope));
    let mut env = Vec::new();
    for name in ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"] {
        env.push((OsString::from(name), OsString::from(&url)));
        env.push((
            OsString::from(name.to_ascii_lowercase()),
            OsString::from(&url),
        ));
    }
    for name in ["NO_PROXY", "no_proxy"] {
        env.push((
            OsString::from(name),
            OsString::from("localhost,127.0.0.1,::1"),
        ));
    }
    env
}

/// The note for a command's result naming the hosts the proxy refused while it ran
/// (SBX-4). A refusal whose words `output` already holds (a client that printed the
/// proxy's answer, as `curl` does for plain HTTP) is named by its host, not said twice.
pub fn refusal_note(refusals: &[Refusal], output: &str) -> Option<String> {
    let mut lines: Vec<String> = Vec::new();
    for refusal in refusals {
        let line = if output.contains(&refusal.reason) {
            format!("{} (the output above says why)", refusal.host)
        } else {
            refusal.reason.clone()
        };
        if !lines.contains(&line) {
            lines.push(line);
        }
    }
    if lines.is_empty() {
        return None;
    }
    let shown = lines.len().min(5);
    let mut note = String::from("The sandbox's network proxy refused: ");
    note.push_str(&lines[..shown].join("; "));
    if lines.len() > shown {
        note.push_str(&format!("; and {} more", lines.len() - shown));
    }
    note.push('.');
    Some(note)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(host: &str, reason: &str) -> Refusal {
        Refusal {
            at: std::time::Instant::now(),
            scope: Scope::Session,
            host: host.to_owned(),
            reason: reason.to_owned(),
        }
    }

    /// SBX-4, NET-2: a refusal the output already shows (curl prints the proxy's answer
    /// for plain HTTP) is named by its host only; one it does not is said in full.
    #[test]
    fn net_2_a_refusal_is_said_once() {
        let shown = "example.com:80 is not allowed; add \"example.com\" to allowedDomains";
        let hidden = "evil.example:443 is not allowed; add \"evil.example\" to allowedDomains";
        let refusals = [
            refusal("example.com:80", shown),
            refusal("evil.example:443", hidden),
            refusal("example.com:80", shown),
        ];
        let output =
            format!("wavesh proxy: {shown}\ncurl: (56) CONNECT tunnel failed, response 403\n");
        let note = refusal_note(&refusals, &output).unwrap();
        assert_eq!(
            note,
            format!(
                "The sandbox's network proxy refused: example.com:80 (the output above says why); {hidden}."
            )
        );
        assert_eq!(
            refusal_note(&refusals, "").unwrap(),
            format!("The sandbox's network proxy refused: {shown}; {hidden}.")
        );
        assert_eq!(refusal_note(&[], &output), None);
    }
}
