//! Which probed variables a command inherits (ENV-5): an allowlist, never overriding what
//! the host set, with PATH merged.

use std::collections::HashMap;

use serde::Serialize;

/// Variables adopted from the login shell. Tool locations and network settings only:
/// nothing that makes a program load code (`NODE_OPTIONS`, `LD_PRELOAD`, `DYLD_*`) and no
/// `GIT_*` beyond the CA bundle.
pub const ALLOWLIST: &[&str] = &[
    "PATH",
    "SSH_AUTH_SOCK",
    "WAVE_SHELL",
    "WAVE_GIT_BASH_PATH",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
    "NODE_EXTRA_CA_CERTS",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "GIT_SSL_CAINFO",
    "JAVA_HOME",
    "GOPATH",
    "GOROOT",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "NVM_DIR",
    "PNPM_HOME",
    "BUN_INSTALL",
    "VOLTA_HOME",
    "PYENV_ROOT",
    "ANDROID_HOME",
    "HOMEBREW_PREFIX",
];

/// The result of adoption, for the commands and for `wavesh env`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Adoption {
    /// Variables every command gets, PATH (merged) included.
    pub adopted: Vec<(String, String)>,
    /// Allowlisted keys the probe found but the host had already set.
    pub skipped_host_set: Vec<String>,
    /// The merged PATH, when the probe found one.
    pub path: Option<String>,
}

/// Adopts from `probed` what the allowlist permits and the host has not set (`host`).
/// PATH is merged: probed entries first, then inherited ones, without duplicates.
pub fn adopt(probed: &[(String, String)], host: &HashMap<String, String>) -> Adoption {
    let mut adoption = Adoption::default();
    for (key, value) in probed {
        if !ALLOWLIST.contains(&key.as_str()) {
            continue;
        }
        // Windows keys are case-insensitive: `Path` is the same variable as `PATH`.
        let host_value = |name: &str| {
            host.get(name).or_else(|| {
                cfg!(windows)
                    .then(|| {
                        host.iter()
                            .find(|(k, _)| k.eq_ignore_ascii_case(name))
                            .map(|(_, v)| v)
                    })
                    .flatten()
            })
        };
        if key == "PATH" {
            let merged = merge_path(value, host_value("PATH").map(String::as_str));
            adoption.adopted.push((key.clone(), merged.clone()));
            adoption.path = Some(merged);
        } else if host_value(key).is_some() {
            adoption.skipped_host_set.push(key.clone());
        } else {
            adoption.adopted.push((key.clone(), value.clone()));
        }
    }
    adoption
}

/// Probed entries first, inherited after, each directory once (`:`-separated; `;` on
/// Windows, where directories compare case-insensitively).
pub fn merge_path(probed: &str, inherited: Option<&str>) -> String {
    merge_path_with(probed, inherited, cfg!(windows))
}

fn merge_path_with(probed: &str, inherited: Option<&str>, windows: bool) -> String {
    let separator = if windows { ';' } else { ':' };
    let mut seen = std::collections::HashSet::new();
    probed
        .split(separator)
        .chain(inherited.unwrap_or("").split(separator))
        .filter(|dir| {
            let key = if windows {
                dir.to_lowercase()
            } else {
                (*dir).to_owned()
            };
            !dir.is_empty() && seen.insert(key)
        })
        .collect::<Vec<_>>()
        .join(&separator.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_8_windows_path_merge_is_case_insensitive() {
        assert_eq!(
            merge_path_with(r"C:\Git\bin;C:\Windows", Some(r"c:\windows;D:\Tools"), true),
            r"C:\Git\bin;C:\Windows;D:\Tools"
        );
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn env_5_allowlist_no_override_and_path_merge() {
        let probed = pairs(&[
            ("PATH", "/home/u/.nvm/bin:/usr/bin:/bin"),
            ("HTTPS_PROXY", "http://proxy:3128"),
            ("SSH_AUTH_SOCK", "/tmp/agent"),
            ("NODE_OPTIONS", "--require /tmp/evil.js"),
            ("LD_PRELOAD", "/tmp/x.so"),
            ("GIT_DIR", "/tmp"),
        ]);
        let host: HashMap<String, String> = pairs(&[
            ("PATH", "/usr/bin:/usr/local/bin"),
            ("SSH_AUTH_SOCK", "/host/agent"),
        ])
        .into_iter()
        .collect();
        let adoption = adopt(&probed, &host);
        assert_eq!(
            adoption.adopted,
            pairs(&[
                ("PATH", "/home/u/.nvm/bin:/usr/bin:/bin:/usr/local/bin"),
                ("HTTPS_PROXY", "http://proxy:3128"),
            ])
        );
        assert_eq!(adoption.skipped_host_set, vec!["SSH_AUTH_SOCK".to_owned()]);
    }
}
