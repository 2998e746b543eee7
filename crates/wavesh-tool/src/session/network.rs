//! Starts the session's network (NET-1, NET-2): the proxy on its own runtime, accepting
//! on the listeners the supervisor made inside the session's network namespace.

use std::sync::Arc;

use wavesh_exec::net::{Proxy, ProxyRuntime, Scope, SessionNetwork};
use wavesh_exec::supervisor::Supervisor;

use super::SessionError;
use crate::sandbox::NetworkSettings;

/// The session's network, when the supervisor made its namespace. A namespace that
/// could not be made leaves the sandboxed commands without network, said loudly
/// (SBX-5), or refuses the session when `strict`; a proxy that cannot start refuses it
/// always: the namespace alone would be a network with no way out but silence.
pub(super) fn start(
    supervisor: &Supervisor,
    settings: &NetworkSettings,
    strict: bool,
) -> Result<(Option<SessionNetwork>, Option<String>), SessionError> {
    let policy = settings.policy().map_err(SessionError::Network)?;
    if !settings.allowed_addresses.is_empty() {
        tracing::warn!(addresses = ?settings.allowed_addresses, "the proxy may connect to these loopback or private addresses (a test's allowance)");
    }
    match supervisor.network_ready() {
        Ok(true) => {}
        Ok(false) => return Ok((None, None)),
        Err(why) if strict => {
            return Err(SessionError::Network(format!(
                "its network namespace cannot be made ({why}), and the sandbox is strict"
            )));
        }
        Err(why) => {
            return Ok((
                None,
                Some(format!(
                    "The session has no network of its own ({why}): sandboxed commands \
                     have no network at all, no loopback and no proxy to the registries."
                )),
            ));
        }
    }
    let runtime = Arc::new(
        ProxyRuntime::start()
            .map_err(|e| SessionError::Network(format!("the proxy cannot start: {e}")))?,
    );
    let proxy = Proxy::new(policy);
    let handle = runtime.handle();
    let serving = Arc::clone(&proxy);
    supervisor.on_network(move |[session, read]| {
        for (listener, scope) in [(session, Scope::Session), (read, Scope::Read)] {
            if let Err(error) = serving.serve(listener.into(), scope, &handle) {
                tracing::error!(%error, ?scope, "the proxy cannot accept on the session's namespace");
            }
        }
    });
    Ok((Some(SessionNetwork { proxy, runtime }), None))
}
