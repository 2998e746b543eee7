//! Which hosts the session's proxy connects to (NET-2): allowed and denied domains
//! (Claude Code's `sandbox.network` settings and wavesh's presets), deny winning, and
//! the addresses it never connects to whatever the name.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The `registries` preset, on by default: the package registries builds and installs
/// fetch from (cargo, npm, pip, go, gem, maven, apt).
pub const REGISTRIES: &[&str] = &[
    "crates.io",
    "static.crates.io",
    "index.crates.io",
    "registry.npmjs.org",
    "registry.yarnpkg.com",
    "pypi.org",
    "files.pythonhosted.org",
    "proxy.golang.org",
    "sum.golang.org",
    "rubygems.org",
    "index.rubygems.org",
    "repo.maven.apache.org",
    "repo1.maven.org",
    "deb.debian.org",
    "security.debian.org",
];

/// The one host a command approved as read-only may reach: `gh`'s API (NET-3).
pub const READ_HOSTS: &[&str] = &["api.github.com"];

/// One `allowedDomains`/`deniedDomains` entry: `example.com`, `*.example.com` (any name
/// below it, not itself), optionally with `:PORT` or `:*`. Without a port it stands for
/// 80 and 443.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainPattern {
    /// The entry as written, for refusals.
    pub text: String,
    name: String,
    wildcard: bool,
    /// `None`: any port.
    ports: Option<Vec<u16>>,
}

impl DomainPattern {
    /// Parses an entry; an error names what is wrong with it.
    pub fn parse(text: &str) -> Result<DomainPattern, String> {
        let trimmed = text.trim().trim_end_matches('.');
        let (host, ports) = match trimmed.rsplit_once(':') {
            Some((host, "*")) => (host, None),
            Some((host, port)) => (
                host,
                Some(vec![port.parse::<u16>().map_err(|_| {
                    format!("{text:?}: the port after ':' is not a number from 1 to 65535")
                })?]),
            ),
            None => (trimmed, Some(vec![80, 443])),
        };
        let (wildcard, name) = match host.strip_prefix("*.") {
            Some(rest) => (true, rest),
            None => (false, host),
        };
        let name = name.to_ascii_lowercase();
        if name.is_empty()
            || name.contains('*')
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'))
        {
            return Err(format!(
                "{text:?} is not a domain (a name such as example.com or *.example.com, \
                 optionally with :PORT)"
            ));
        }
        Ok(DomainPattern {
            text: text.to_owned(),
            name,
            wildcard,
            ports,
        })
    }

    /// Whether `host` (lower case, no trailing dot) on `port` matches.
    pub fn matches(&self, host: &str, port: u16) -> bool {
        let name_ok = if self.wildcard {
            host.strip_suffix(self.name.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.'))
        } else {
            host == self.name
        };
        name_ok
            && self
                .ports
                .as_ref()
                .is_none_or(|ports| ports.contains(&port))
    }
}

/// Where an allowance came from, for the refusal's hint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The session's policy: commands approved to run.
    Session,
    /// Reads: a command approved as read-only (`gh`), NET-3.
    Read,
}

/// The session's network policy.
#[derive(Debug, Clone, Default)]
pub struct NetPolicy {
    /// Allowed on top of the presets (`sandbox.network.allowedDomains`).
    pub allowed: Vec<DomainPattern>,
    /// Refused whatever allows them (`sandbox.network.deniedDomains`).
    pub denied: Vec<DomainPattern>,
    /// The `registries` preset (on by default; `sandbox.network.registries: false` or
    /// `wavesh mcp --no-registries` turns it off).
    pub registries: bool,
    /// Addresses connected to although they are loopback or private: for a test's own
    /// upstream only (`WAVESH_TEST_NET_ALLOW_ADDRESS`); empty everywhere else.
    pub allowed_addresses: Vec<IpAddr>,
}

/// Why the proxy refused a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// A `deniedDomains` entry matched (deny wins).
    Denied(String),
    /// Nothing allows it.
    NotAllowed,
    /// Reads may reach only the API `gh` reads from.
    ReadOnly,
    /// The name resolved to an address the proxy never connects to.
    Address(IpAddr),
    /// The user was asked and said no (or did not answer).
    Declined,
}

impl Refused {
    /// The refusal in words, naming the host and the setting that would allow it.
    pub fn explain(&self, host: &str, port: u16) -> String {
        match self {
            // The settings are the user's: the text says who may change them (OUT).
            Refused::Denied(entry) => format!(
                "{host}:{port} is denied by the sandbox.network.deniedDomains entry {entry:?} \
                 (deny wins over every allowance); only the user can allow it, by removing \
                 that entry"
            ),
            Refused::NotAllowed => format!(
                "{host}:{port} is not allowed; the user can allow it with \"{host}\" (or \
                 \"{host}:{port}\") in sandbox.network.allowedDomains of \
                 ~/.claude/settings.json: ask them"
            ),
            Refused::ReadOnly => format!(
                "{host}:{port} is refused: a command approved as read-only reaches only {} \
                 (a command approved to run gets the session's sandbox.network policy)",
                READ_HOSTS.join(", ")
            ),
            Refused::Declined => format!(
                "{host}:{port} is not allowed, and the user declined to allow it when asked; \
                 do not try to reach it another way"
            ),
            Refused::Address(ip) if ip.is_loopback() => format!(
                "{host}:{port} resolves to {ip}, a loopback, private, link-local, CGNAT or \
                 metadata address, which the proxy never connects to; a server this \
                 session's commands start on 127.0.0.1 is reached directly, without the \
                 proxy (NO_PROXY names localhost and 127.0.0.1)"
            ),
            Refused::Address(ip) => format!(
                "{host}:{port} resolves to {ip}, a loopback, private, link-local, CGNAT or \
                 metadata address, which the proxy never connects to"
            ),
        }
    }
}

impl NetPolicy {
    /// Whether `host:port` may be reached from `scope`, by name (the address is checked
    /// once resolved, [`forbidden_address`]).
    pub fn check(&self, scope: Scope, host: &str, port: u16) -> Result<(), Refused> {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        if let Some(entry) = self.denied.iter().find(|d| d.matches(&host, port)) {
            return Err(Refused::Denied(entry.text.clone()));
        }
        let default_port = matches!(port, 80 | 443);
        match scope {
            Scope::Read => {
                if READ_HOSTS.contains(&host.as_str()) && port == 443 {
                    Ok(())
                } else {
                    Err(Refused::ReadOnly)
                }
            }
            Scope::Session => {
                if (self.registries && default_port && REGISTRIES.contains(&host.as_str()))
                    || self.allowed.iter().any(|a| a.matches(&host, port))
                {
                    Ok(())
                } else {
                    Err(Refused::NotAllowed)
                }
            }
        }
    }

    /// Whether the proxy refuses to connect to `ip` (unless a test allowed it).
    pub fn refuses_address(&self, ip: IpAddr) -> bool {
        forbidden_address(ip) && !self.allowed_addresses.contains(&ip)
    }
}

/// Loopback, private, link-local (cloud metadata at 169.254.169.254), CGNAT, unspecified,
/// multicast, broadcast and reserved ranges, IPv6 unique-local (metadata at
/// fd00:ec2::254) and link-local, and v4 addresses inside v6 ones. Documentation and
/// benchmarking ranges are not refused: egress gateways and fake-IP resolvers hand them
/// out for public names.
pub fn forbidden_address(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => forbidden_v4(v4),
        IpAddr::V6(v6) => forbidden_v6(v6),
    }
}

fn forbidden_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // CGNAT 100.64/10
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || a >= 240 // reserved
}

fn forbidden_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return forbidden_v4(v4);
    }
    let segments = ip.segments();
    // NAT64 (64:ff9b::/96) and the deprecated v4-compatible form carry a v4 address.
    if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] || segments[..6] == [0; 6] {
        let [.., hi, lo] = segments;
        let v4 = Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
        return ip.is_unspecified() || ip.is_loopback() || forbidden_v4(v4);
    }
    ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || (segments[0] & 0xfe00) == 0xfc00 // unique local fc00::/7
        || (segments[0] & 0xffc0) == 0xfe80 // link-local fe80::/10
        || (segments[0] & 0xffc0) == 0xfec0 // site-local fec0::/10
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(allowed: &[&str], denied: &[&str]) -> NetPolicy {
        NetPolicy {
            allowed: allowed
                .iter()
                .map(|a| DomainPattern::parse(a).unwrap())
                .collect(),
            denied: denied
                .iter()
                .map(|d| DomainPattern::parse(d).unwrap())
                .collect(),
            registries: true,
            allowed_addresses: Vec::new(),
        }
    }

    /// NET-2: presets, wildcards, ports, deny winning.
    #[test]
    fn net2_allow_deny_wildcards_and_ports() {
        let p = policy(
            &["*.example.com", "api.test:8443", "any.test:*"],
            &["bad.example.com", "crates.io"],
        );
        assert_eq!(p.check(Scope::Session, "static.crates.io", 443), Ok(()));
        assert_eq!(p.check(Scope::Session, "PyPI.org.", 443), Ok(()));
        assert_eq!(
            p.check(Scope::Session, "static.crates.io", 22),
            Err(Refused::NotAllowed)
        );
        assert_eq!(p.check(Scope::Session, "a.example.com", 443), Ok(()));
        assert_eq!(p.check(Scope::Session, "a.b.example.com", 80), Ok(()));
        assert_eq!(
            p.check(Scope::Session, "example.com", 443),
            Err(Refused::NotAllowed)
        );
        assert_eq!(
            p.check(Scope::Session, "evilexample.com", 443),
            Err(Refused::NotAllowed)
        );
        assert_eq!(
            p.check(Scope::Session, "bad.example.com", 443),
            Err(Refused::Denied("bad.example.com".into()))
        );
        assert_eq!(
            p.check(Scope::Session, "crates.io", 443),
            Err(Refused::Denied("crates.io".into()))
        );
        assert_eq!(p.check(Scope::Session, "api.test", 8443), Ok(()));
        assert_eq!(
            p.check(Scope::Session, "api.test", 443),
            Err(Refused::NotAllowed)
        );
        assert_eq!(p.check(Scope::Session, "any.test", 5), Ok(()));
        let off = NetPolicy {
            registries: false,
            ..p.clone()
        };
        assert_eq!(
            off.check(Scope::Session, "pypi.org", 443),
            Err(Refused::NotAllowed)
        );
    }

    /// NET-3: reads reach api.github.com:443 only, and a deny still wins.
    #[test]
    fn net3_reads_reach_the_github_api_only() {
        let p = policy(&["*.example.com"], &[]);
        assert_eq!(p.check(Scope::Read, "api.github.com", 443), Ok(()));
        assert_eq!(
            p.check(Scope::Read, "api.github.com", 80),
            Err(Refused::ReadOnly)
        );
        assert_eq!(
            p.check(Scope::Read, "crates.io", 443),
            Err(Refused::ReadOnly)
        );
        assert_eq!(
            p.check(Scope::Read, "a.example.com", 443),
            Err(Refused::ReadOnly)
        );
        let denied = policy(&[], &["api.github.com"]);
        assert!(matches!(
            denied.check(Scope::Read, "api.github.com", 443),
            Err(Refused::Denied(_))
        ));
    }

    #[test]
    fn net2_bad_entries_are_named() {
        for bad in ["", "*", "a b.com", "x.com:http", "x.com:70000", "*.*.com"] {
            let error = DomainPattern::parse(bad).unwrap_err();
            assert!(error.contains(&format!("{bad:?}")), "{error}");
        }
    }

    /// NET-2: addresses the proxy never connects to.
    #[test]
    fn net2_private_and_metadata_addresses_are_forbidden() {
        for bad in [
            "127.0.0.1",
            "127.1.2.3",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.255",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "::1",
            "::",
            "fd00:ec2::254",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "::127.0.0.1",
        ] {
            assert!(forbidden_address(bad.parse().unwrap()), "{bad}");
        }
        for good in [
            "151.101.1.1",
            "8.8.8.8",
            "100.128.0.1",
            "172.32.0.1",
            "2a04:4e42::347",
            "::ffff:151.101.1.1",
        ] {
            assert!(!forbidden_address(good.parse().unwrap()), "{good}");
        }
        let p = NetPolicy {
            allowed_addresses: vec!["127.0.0.1".parse().unwrap()],
            ..NetPolicy::default()
        };
        assert!(!p.refuses_address("127.0.0.1".parse().unwrap()));
        assert!(p.refuses_address("127.0.0.2".parse().unwrap()));
    }
}
