//! The Bash description's paragraph on the sandbox (SBX-4, NET-2): what a command may
//! write, which hosts the network reaches, that secrets are hidden, what a refusal looks
//! like and when `dangerouslyDisableSandbox` is right. Written from the session's actual
//! policy (its level, writable roots, the network it really got), not a fixed text, so
//! the model learns the rules before it fails by them. Kept lean: every word is read on
//! every turn.

use std::path::PathBuf;

use wavesh_exec::sandbox::Level;

/// The facts of a session's sandbox that the description states.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxFacts {
    /// The level of commands not approved as read-only.
    pub level: Level,
    /// Commands approved as read-only run at `read-only` (writing nothing, no network).
    pub read_only_level: bool,
    /// The writable roots at `workspace-write` (the workspace, the additional directories,
    /// `filesystem.allowWrite`); empty: named as "the workspace".
    pub roots: Vec<PathBuf>,
    /// What the network of a sandboxed command reaches.
    pub network: NetworkFacts,
    /// `dangerouslyDisableSandbox` is honoured (else ignored).
    pub allow_unsandboxed: bool,
}

/// The network of a sandboxed command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NetworkFacts {
    /// None at all (the session has no network namespace, or its network is off).
    None,
    /// Through the session's proxy: the `registries` preset when on, the allowed entries,
    /// and the denied ones that win over both.
    Proxy {
        registries: bool,
        allowed: Vec<String>,
        denied: Vec<String>,
    },
}

impl SandboxFacts {
    /// The facts a configuration alone gives (no session yet): the roots are "the
    /// workspace", the network is the configured one.
    pub fn from_settings(settings: &crate::sandbox::SandboxSettings) -> SandboxFacts {
        let network = &settings.network;
        SandboxFacts {
            level: settings.level,
            read_only_level: settings.read_only_level,
            roots: Vec::new(),
            network: if network.enabled {
                NetworkFacts::Proxy {
                    registries: network.registries,
                    allowed: network.allowed_domains.clone(),
                    denied: network.denied_domains.clone(),
                }
            } else {
                NetworkFacts::None
            },
            allow_unsandboxed: settings.allow_unsandboxed,
        }
    }
}

/// The registries preset, by the names a model knows them by.
const REGISTRIES: &str =
    "package registries only (crates.io, npm, PyPI, Go, RubyGems, Maven, Debian)";

/// What the network reaches, as a sentence.
fn network_sentence(network: &NetworkFacts, read_only_level: bool) -> String {
    let NetworkFacts::Proxy {
        registries,
        allowed,
        denied,
    } = network
    else {
        return " Network: none.".to_owned();
    };
    let mut reach: Vec<String> = Vec::new();
    if *registries {
        reach.push(REGISTRIES.to_owned());
    }
    reach.extend(allowed.iter().cloned());
    let mut text = if reach.is_empty() {
        " Network: no host outside the session".to_owned()
    } else {
        format!(" Network: {} via the proxy", reach.join(", "))
    };
    if !denied.is_empty() {
        text.push_str(&format!(" (never {})", denied.join(", ")));
    }
    if read_only_level {
        text.push_str(", none for commands approved as read-only");
    }
    text.push_str("; 127.0.0.1 is shared by the session's commands.");
    text
}

/// The paragraph on the sandbox.
pub fn sandbox_paragraph(facts: &SandboxFacts) -> String {
    let mut text = match facts.level {
        Level::Off => {
            return "Sandbox: off. Commands run with the user's own access to files and network."
                .to_owned();
        }
        Level::ReadOnly => String::from(
            "Sandbox (read-only): commands write nothing (but $TMPDIR, removed after each) and have no network.",
        ),
        Level::WorkspaceWrite => {
            let roots = if facts.roots.is_empty() {
                "the workspace".to_owned()
            } else {
                facts
                    .roots
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let mut text = format!(
                "Sandbox (workspace-write): commands write only to {roots}, /tmp and toolchain caches (copy-on-write)."
            );
            text.push_str(&network_sentence(&facts.network, facts.read_only_level));
            text
        }
    };
    text.push_str(
        " Secrets (SSH/cloud keys, .env, credentials) are hidden: reading one gives \"Permission denied\". A refusal adds a note saying what the sandbox refused (path or host).",
    );
    if facts.allow_unsandboxed {
        text.push_str(
            " Only then, if the task truly needs it, retry with dangerouslyDisableSandbox: true (the user approves); never for other failures, secrets or denied hosts.",
        );
    } else {
        text.push_str(" dangerouslyDisableSandbox is ignored in this session.");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(level: Level) -> SandboxFacts {
        SandboxFacts {
            level,
            read_only_level: true,
            roots: vec![PathBuf::from("/w/app"), PathBuf::from("/w/lib")],
            network: NetworkFacts::Proxy {
                registries: true,
                allowed: Vec::new(),
                denied: Vec::new(),
            },
            allow_unsandboxed: true,
        }
    }

    /// SBX-4: the paragraph follows the level: what may be written, and the network.
    #[test]
    fn sbx_4_description_follows_the_level() {
        let write = sandbox_paragraph(&facts(Level::WorkspaceWrite));
        for part in [
            "Sandbox (workspace-write)",
            "write only to /w/app, /w/lib, /tmp",
            "copy-on-write",
            "crates.io, npm, PyPI",
            "none for commands approved as read-only",
            "\"Permission denied\"",
            "what the sandbox refused (path or host)",
            "dangerouslyDisableSandbox: true",
        ] {
            assert!(write.contains(part), "{part:?} in {write}");
        }
        let read = sandbox_paragraph(&facts(Level::ReadOnly));
        assert!(
            read.starts_with("Sandbox (read-only): commands write nothing"),
            "{read}"
        );
        assert!(read.contains("no network"), "{read}");
        assert!(
            !read.contains("crates.io") && !read.contains("/w/app"),
            "{read}"
        );
        let off = sandbox_paragraph(&facts(Level::Off));
        assert!(off.starts_with("Sandbox: off."), "{off}");
        assert!(
            !off.contains("dangerouslyDisableSandbox") && !off.contains("Secrets"),
            "{off}"
        );
    }

    /// NET-2: the hosts named are the policy's: the preset, the allowed entries, the
    /// denied ones; none when the session has no network.
    #[test]
    fn net_2_description_names_the_reachable_hosts() {
        let mut f = facts(Level::WorkspaceWrite);
        f.network = NetworkFacts::Proxy {
            registries: false,
            allowed: vec!["github.com".into(), "*.example.org".into()],
            denied: vec!["gist.github.com".into()],
        };
        let text = sandbox_paragraph(&f);
        assert!(
            text.contains(
                "Network: github.com, *.example.org via the proxy (never gist.github.com)"
            ),
            "{text}"
        );
        assert!(!text.contains("crates.io"), "{text}");
        f.network = NetworkFacts::Proxy {
            registries: false,
            allowed: Vec::new(),
            denied: Vec::new(),
        };
        assert!(sandbox_paragraph(&f).contains("Network: no host outside the session"));
        f.network = NetworkFacts::None;
        let text = sandbox_paragraph(&f);
        assert!(text.contains("Network: none."), "{text}");
        assert!(!text.contains("127.0.0.1"), "{text}");
    }

    /// SBX-4: where the flag is not honoured, the text says so instead of advising it;
    /// read-only commands are mentioned only where they run at read-only.
    #[test]
    fn sbx_4_description_follows_the_settings() {
        let mut f = facts(Level::WorkspaceWrite);
        f.allow_unsandboxed = false;
        f.read_only_level = false;
        let text = sandbox_paragraph(&f);
        assert!(
            text.contains("dangerouslyDisableSandbox is ignored"),
            "{text}"
        );
        assert!(!text.contains("dangerouslyDisableSandbox: true"), "{text}");
        assert!(!text.contains("approved as read-only"), "{text}");
        f.roots.clear();
        assert!(sandbox_paragraph(&f).contains("only to the workspace, /tmp"));
    }
}
