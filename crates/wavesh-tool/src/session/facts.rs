//! The session's sandbox as the Bash description states it: its level, its writable
//! roots and the network it really got (a namespace that could not be made means none).

use super::Session;
use crate::description::{ToolDefinition, tool_definitions_with};
use crate::sandbox_text::{NetworkFacts, SandboxFacts};

impl Session {
    /// The facts of this session's sandbox.
    pub fn sandbox_facts(&self) -> SandboxFacts {
        let settings = &self.shared.config.sandbox;
        let mut facts = SandboxFacts::from_settings(settings);
        facts.roots = self.shared.roots();
        facts.roots.extend(settings.allow_write.iter().cloned());
        facts.network = match self.shared.executor.network() {
            Some(network) => {
                let policy = network.proxy.policy();
                NetworkFacts::Proxy {
                    registries: policy.registries,
                    allowed: policy.allowed.iter().map(|p| p.text.clone()).collect(),
                    denied: policy.denied.iter().map(|p| p.text.clone()).collect(),
                }
            }
            None => NetworkFacts::None,
        };
        facts
    }

    /// The session's egress proxy, if it has a network of its own (NET-2): a host
    /// installs its asker there ([`wavesh_exec::net::Proxy::set_asker`]).
    pub fn network_proxy(&self) -> Option<std::sync::Arc<wavesh_exec::net::Proxy>> {
        self.shared
            .executor
            .network()
            .map(|network| std::sync::Arc::clone(&network.proxy))
    }

    /// The user's home, where user-level settings live.
    pub fn home(&self) -> &std::path::Path {
        &self.shared.home
    }

    /// The tools, the Bash description stating this session's sandbox.
    pub fn tool_definitions(&self) -> Vec<ToolDefinition> {
        tool_definitions_with(&self.shared.config, &self.sandbox_facts())
    }
}
