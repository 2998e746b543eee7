//! The session's sandbox settings (SBX): the level for commands that are not approved as
//! read-only, sandboxed auto-allow, the secret list and the environment filter, and
//! Claude Code's `sandbox` settings read into them.

use std::path::{Path, PathBuf};

use wavesh_exec::sandbox::{EnvFilter, Level, SecretList};

/// The secret locations of the shared secret list (`wavesh-policy`'s `data/secrets.txt`,
/// the list the classifier checks path operands against: RO-9): its `home` entries as
/// `~/PATTERN`, its `abs` entries as they are. Nothing that runs in the sandbox reads
/// them (SBX-2). One list, so a location added to the file is hidden by the sandbox too.
pub fn default_secret_paths() -> Vec<String> {
    use wavesh_policy::secrets::SecretKind;
    wavesh_policy::secrets::secret_patterns()
        .iter()
        .filter_map(|p| match p.kind {
            SecretKind::Home => Some(format!("~/{}", p.pattern)),
            SecretKind::Absolute => Some(p.pattern.to_owned()),
            SecretKind::Name | SecretKind::NotName => None,
        })
        .collect()
}

/// The file names of the shared secret list that are secrets wherever they are found:
/// its `name` entries, and its `not-name` exceptions with a leading `!`.
pub fn default_secret_names() -> Vec<String> {
    use wavesh_policy::secrets::SecretKind;
    wavesh_policy::secrets::secret_patterns()
        .iter()
        .filter_map(|p| match p.kind {
            SecretKind::Name => Some(p.pattern.to_owned()),
            SecretKind::NotName => Some(format!("!{}", p.pattern)),
            SecretKind::Home | SecretKind::Absolute => None,
        })
        .collect()
}

/// The Claude Code settings files whose `sandbox` object applies, in order of increasing
/// precedence: the user's, the project's, the local one, then `extra`.
pub fn claude_settings_files(root: &Path, home: Option<&Path>, extra: &[PathBuf]) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = home
        .map(|home| home.join(".claude/settings.json"))
        .into_iter()
        .collect();
    files.push(root.join(".claude/settings.json"));
    files.push(root.join(".claude/settings.local.json"));
    files.extend(extra.iter().cloned());
    files
}

/// The sandbox part of a session's configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSettings {
    /// The level of commands that are not approved as read-only (SBX-3).
    pub level: Level,
    /// Commands approved as read-only run at `read-only` (on by default; off runs them at
    /// `level`).
    pub read_only_level: bool,
    /// Sandboxed auto-allow: commands that would ask run without asking at
    /// `workspace-write` (deny and ask rules still apply).
    pub auto_allow: bool,
    /// Commands (first words) that run outside the sandbox and so always need approval.
    pub excluded_commands: Vec<String>,
    /// `dangerouslyDisableSandbox` is honoured (Claude Code's `allowUnsandboxedCommands`).
    pub allow_unsandboxed: bool,
    /// Refuse instead of degrading when a guarantee is missing (`failIfUnavailable`).
    pub strict: bool,
    /// The secret locations (`~/` for the home directory) and names.
    pub secret_paths: Vec<String>,
    /// File-name patterns of secrets.
    pub secret_names: Vec<String>,
    /// More writable paths at `workspace-write` (`filesystem.allowWrite`).
    pub allow_write: Vec<PathBuf>,
    /// More read-only paths inside writable ones (`filesystem.denyWrite`).
    pub deny_write: Vec<PathBuf>,
    /// The environment filter.
    pub env_deny: Vec<String>,
    /// Variables kept although a deny pattern matches.
    pub env_allow: Vec<String>,
    /// The session's network: its own namespace and the proxy's policy (NET).
    pub network: NetworkSettings,
}

/// The session's network (NET-1..3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetworkSettings {
    /// A network namespace of the session's own with a proxy as its only way out (on by
    /// default for a supervised, sandboxed session); off, sandboxed commands have no
    /// network at all.
    pub enabled: bool,
    /// `sandbox.network.allowedDomains`: reachable through the proxy.
    pub allowed_domains: Vec<String>,
    /// `sandbox.network.deniedDomains`: refused whatever allows them.
    pub denied_domains: Vec<String>,
    /// The `registries` preset (package registries; on by default).
    pub registries: bool,
    /// Loopback or private addresses the proxy may connect to all the same: for a test's
    /// own upstream server, never set from a settings file.
    pub allowed_addresses: Vec<std::net::IpAddr>,
}

impl Default for NetworkSettings {
    fn default() -> Self {
        NetworkSettings {
            enabled: true,
            allowed_domains: Vec::new(),
            denied_domains: Vec::new(),
            registries: true,
            allowed_addresses: Vec::new(),
        }
    }
}

impl NetworkSettings {
    /// The proxy's policy; an error names the entry that is not a domain.
    pub fn policy(&self) -> Result<wavesh_exec::net::NetPolicy, String> {
        let parse = |list: &[String]| {
            list.iter()
                .map(|d| wavesh_exec::net::DomainPattern::parse(d))
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(wavesh_exec::net::NetPolicy {
            allowed: parse(&self.allowed_domains)?,
            denied: parse(&self.denied_domains)?,
            registries: self.registries,
            allowed_addresses: self.allowed_addresses.clone(),
        })
    }
}

impl Default for SandboxSettings {
    fn default() -> Self {
        SandboxSettings {
            // The library seals by default (SBX-3): `off` is the host's explicit choice.
            level: Level::WorkspaceWrite,
            read_only_level: true,
            auto_allow: false,
            excluded_commands: Vec::new(),
            allow_unsandboxed: true,
            strict: false,
            secret_paths: default_secret_paths(),
            secret_names: default_secret_names(),
            allow_write: Vec::new(),
            deny_write: Vec::new(),
            env_deny: EnvFilter::default().deny,
            env_allow: Vec::new(),
            network: NetworkSettings::default(),
        }
    }
}

impl SandboxSettings {
    /// The secret list with `~` expanded to `home`, and every home entry also where this
    /// process's environment relocates it ([`RELOCATIONS`]) and under the user's home
    /// from the user database when that differs from `home` (SBX-2).
    pub fn secrets(&self, home: Option<&Path>) -> SecretList {
        let passwd_home = wavesh_exec::sandbox::passwd_home();
        self.secrets_with(home, passwd_home.as_deref(), &|name| std::env::var_os(name))
    }

    /// [`SandboxSettings::secrets`] with the user database's home and the environment
    /// given.
    pub fn secrets_with(
        &self,
        home: Option<&Path>,
        passwd_home: Option<&Path>,
        env: &dyn Fn(&str) -> Option<std::ffi::OsString>,
    ) -> SecretList {
        let mut paths = Vec::new();
        for path in &self.secret_paths {
            let Some(rest) = path.strip_prefix("~/") else {
                paths.push(PathBuf::from(path));
                continue;
            };
            for base in home
                .into_iter()
                .chain(passwd_home.filter(|p| Some(*p) != home))
            {
                paths.push(base.join(rest));
            }
            paths.extend(relocated(rest, env));
        }
        let mut seen = std::collections::HashSet::new();
        paths.retain(|p| seen.insert(p.clone()));
        SecretList {
            paths,
            names: self.secret_names.clone(),
        }
    }

    /// The environment filter.
    pub fn env_filter(&self) -> EnvFilter {
        EnvFilter {
            deny: self.env_deny.clone(),
            allow: self.env_allow.clone(),
        }
    }

    /// Whether `argv0` (a command's first word) is excluded from the sandbox.
    pub fn is_excluded(&self, argv0: &str) -> bool {
        let name = argv0.rsplit('/').next().unwrap_or(argv0);
        self.excluded_commands
            .iter()
            .any(|excluded| excluded.split_whitespace().next() == Some(name))
    }

    /// Applies the `sandbox` object of a Claude Code settings file (`text`, from `path`).
    /// Scalars of later files win; lists add up. Keys wavesh cannot honour are named in a
    /// warning, never silently dropped. `level_given`: the command line chose the level,
    /// so `enabled` does not change it.
    ///
    /// `tighten_only`: the file lies inside a directory sandboxed commands may write (the
    /// workspace's `.claude/`, a home inside a writable root), so a command could have
    /// written it (SBX-6). Then only what tightens applies (`enabled: true` without its
    /// auto-allow, `failIfUnavailable: true`, `allowUnsandboxedCommands: false`,
    /// `autoAllowBashIfSandboxed: false`, `denyWrite`, `denyRead`); what would loosen
    /// (`enabled: false`, `excludedCommands`, `allowWrite`, and the opposite flags) is
    /// left out and returned, each as `sandbox.KEY`, for the host to name.
    pub fn apply_claude_settings(
        &mut self,
        text: &str,
        path: &Path,
        root: &Path,
        home: Option<&Path>,
        level_given: bool,
        tighten_only: bool,
    ) -> Result<Vec<String>, SandboxSettingsError> {
        let bad = |why: String| SandboxSettingsError {
            path: path.to_path_buf(),
            why,
        };
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| bad(format!("invalid JSON: {e}")))?;
        let Some(sandbox) = value.get("sandbox") else {
            return Ok(Vec::new());
        };
        let mut ignored = Vec::new();
        // Whether a key's value may apply: always from a trusted file; from a writable
        // one only when it tightens.
        let mut allowed = |key: &str, tightens: bool| {
            if tightens || !tighten_only {
                true
            } else {
                ignored.push(format!("sandbox.{key}"));
                false
            }
        };
        let Some(sandbox) = sandbox.as_object() else {
            return Err(bad("`sandbox` must be an object".into()));
        };
        let flag = |key: &str| -> Result<Option<bool>, SandboxSettingsError> {
            match sandbox.get(key) {
                None => Ok(None),
                Some(serde_json::Value::Bool(b)) => Ok(Some(*b)),
                Some(other) => Err(bad(format!(
                    "`sandbox.{key}` must be true or false, not {other}"
                ))),
            }
        };
        if let Some(enabled) = flag("enabled")?
            && allowed("enabled", enabled || self.level == Level::Off)
        {
            if !level_given {
                self.level = if enabled {
                    Level::WorkspaceWrite
                } else {
                    Level::Off
                };
            }
            // Claude Code's default for autoAllowBashIfSandboxed is true.
            if enabled && sandbox.get("autoAllowBashIfSandboxed").is_none() && !tighten_only {
                self.auto_allow = true;
            }
        }
        if let Some(auto) = flag("autoAllowBashIfSandboxed")?
            && allowed("autoAllowBashIfSandboxed", !auto)
        {
            self.auto_allow = auto;
        }
        if let Some(allow) = flag("allowUnsandboxedCommands")?
            && allowed("allowUnsandboxedCommands", !allow)
        {
            self.allow_unsandboxed = allow;
        }
        if let Some(strict) = flag("failIfUnavailable")?
            && allowed("failIfUnavailable", strict)
        {
            self.strict = strict;
        }
        let excluded = strings(sandbox.get("excludedCommands"), "excludedCommands", &bad)?;
        if !excluded.is_empty() && allowed("excludedCommands", false) {
            self.excluded_commands.extend(excluded);
        }
        let resolve = |text: String| resolve_path(&text, root, home);
        if let Some(fs) = sandbox.get("filesystem") {
            let fs = fs
                .as_object()
                .ok_or_else(|| bad("`sandbox.filesystem` must be an object".into()))?;
            let allow_write = strings(fs.get("allowWrite"), "filesystem.allowWrite", &bad)?;
            if !allow_write.is_empty() && allowed("filesystem.allowWrite", false) {
                self.allow_write
                    .extend(allow_write.into_iter().map(resolve));
            }
            self.deny_write.extend(
                strings(fs.get("denyWrite"), "filesystem.denyWrite", &bad)?
                    .into_iter()
                    .map(resolve),
            );
            self.secret_paths.extend(
                strings(fs.get("denyRead"), "filesystem.denyRead", &bad)?
                    .into_iter()
                    .map(|p| resolve(p).display().to_string()),
            );
            for key in fs.keys() {
                if !["allowWrite", "denyWrite", "denyRead"].contains(&key.as_str()) {
                    tracing::warn!(file = %path.display(), "sandbox.filesystem.{key} is not supported by wavesh; ignored");
                }
            }
        }
        if let Some(network) = sandbox.get("network") {
            // NET-2: the proxy's policy. From a file a command could have written only
            // what tightens applies: denied domains, and the registries preset off.
            let network = network
                .as_object()
                .ok_or_else(|| bad("`sandbox.network` must be an object".into()))?;
            let allowed_domains = strings(
                network.get("allowedDomains"),
                "network.allowedDomains",
                &bad,
            )?;
            let denied_domains =
                strings(network.get("deniedDomains"), "network.deniedDomains", &bad)?;
            for domain in allowed_domains.iter().chain(&denied_domains) {
                wavesh_exec::net::DomainPattern::parse(domain)
                    .map_err(|why| bad(format!("`sandbox.network`: {why}")))?;
            }
            if !allowed_domains.is_empty() && allowed("network.allowedDomains", false) {
                self.network.allowed_domains.extend(allowed_domains);
            }
            self.network.denied_domains.extend(denied_domains);
            match network.get("registries") {
                Some(serde_json::Value::Bool(on)) if allowed("network.registries", !on) => {
                    self.network.registries = *on;
                }
                None | Some(serde_json::Value::Bool(_)) => {}
                Some(other) => {
                    return Err(bad(format!(
                        "`sandbox.network.registries` must be true or false, not {other}"
                    )));
                }
            }
            for key in network.keys() {
                if !["allowedDomains", "deniedDomains", "registries"].contains(&key.as_str()) {
                    tracing::warn!(file = %path.display(), "sandbox.network.{key} is not supported by wavesh; ignored");
                }
            }
        }
        for key in &ignored {
            tracing::warn!(
                file = %path.display(),
                "{key} would loosen the sandbox, and this file lies where sandboxed commands may write: ignored (SBX-6)"
            );
        }
        Ok(ignored)
    }
}

/// How a variable relocates a home entry: it names the directory that stands for the
/// prefix, or the file (files, `:`-separated) that stand for the whole entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relocation {
    /// The variable names a directory in place of the prefix.
    Dir,
    /// The variable names files in place of the entry.
    Files,
}

/// The variables that move a home entry elsewhere: (prefix of the entry under the home,
/// variable, how). A secret the sandbox hides under `~/.config` is hidden under
/// `$XDG_CONFIG_HOME` too, `~/.cargo/credentials.toml` under `$CARGO_HOME`, and so on.
pub const RELOCATIONS: &[(&str, &str, Relocation)] = &[
    (".config", "XDG_CONFIG_HOME", Relocation::Dir),
    (".local/share", "XDG_DATA_HOME", Relocation::Dir),
    (".local/state", "XDG_STATE_HOME", Relocation::Dir),
    (".cache", "XDG_CACHE_HOME", Relocation::Dir),
    (".cargo", "CARGO_HOME", Relocation::Dir),
    (".docker", "DOCKER_CONFIG", Relocation::Dir),
    (".gnupg", "GNUPGHOME", Relocation::Dir),
    (".password-store", "PASSWORD_STORE_DIR", Relocation::Dir),
    (".azure", "AZURE_CONFIG_DIR", Relocation::Dir),
    (".config/gcloud", "CLOUDSDK_CONFIG", Relocation::Dir),
    (".config/gh", "GH_CONFIG_DIR", Relocation::Dir),
    (".kube", "KUBECONFIG", Relocation::Files),
    (".aws", "AWS_SHARED_CREDENTIALS_FILE", Relocation::Files),
    (".aws", "AWS_CONFIG_FILE", Relocation::Files),
    (".npmrc", "NPM_CONFIG_USERCONFIG", Relocation::Files),
    (".npmrc", "npm_config_userconfig", Relocation::Files),
    (".netrc", "NETRC", Relocation::Files),
    (".terraformrc", "TF_CLI_CONFIG_FILE", Relocation::Files),
    (
        ".config/rclone/rclone.conf",
        "RCLONE_CONFIG",
        Relocation::Files,
    ),
    (".vault-token", "VAULT_TOKEN_FILE", Relocation::Files),
];

/// Where the variables of [`RELOCATIONS`] put the home entry `rest` (relative to the
/// home). Only absolute values count: a relative one names nothing fixed.
fn relocated(rest: &str, env: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for (prefix, var, how) in RELOCATIONS {
        let tail = if rest == *prefix {
            Some("")
        } else {
            rest.strip_prefix(prefix).and_then(|t| t.strip_prefix('/'))
        };
        let (Some(tail), Some(value)) = (tail, env(var)) else {
            continue;
        };
        match how {
            Relocation::Dir => {
                let dir = PathBuf::from(&value);
                if dir.is_absolute() {
                    out.push(if tail.is_empty() { dir } else { dir.join(tail) });
                }
            }
            Relocation::Files => {
                out.extend(std::env::split_paths(&value).filter(|file| file.is_absolute()))
            }
        }
    }
    out
}

fn strings(
    value: Option<&serde_json::Value>,
    key: &str,
    bad: &dyn Fn(String) -> SandboxSettingsError,
) -> Result<Vec<String>, SandboxSettingsError> {
    match value {
        None => Ok(Vec::new()),
        Some(serde_json::Value::Array(items)) => items
            .iter()
            .map(|item| {
                item.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| bad(format!("`sandbox.{key}` must hold strings, not {item}")))
            })
            .collect(),
        Some(other) => Err(bad(format!(
            "`sandbox.{key}` must be a list of strings, not {other}"
        ))),
    }
}

/// Whether `path` lies inside one of `dirs` (compared as written, and with symbolic
/// links resolved where both exist): a settings file there could have been written by a
/// sandboxed command (SBX-6).
pub fn inside_any(path: &Path, dirs: &[PathBuf]) -> bool {
    let real = |p: &Path| {
        // The file may not exist yet: resolve its directory.
        match (p.parent(), p.file_name()) {
            (Some(parent), Some(name)) => std::fs::canonicalize(parent)
                .map(|dir| dir.join(name))
                .unwrap_or_else(|_| p.to_path_buf()),
            _ => p.to_path_buf(),
        }
    };
    let path_real = real(path);
    dirs.iter().any(|dir| {
        let dir_real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone());
        path.starts_with(dir) || path_real.starts_with(&dir_real)
    })
}

/// A settings path: `~/` is the home, `//` the root, an absolute path is itself, any
/// other is relative to the workspace.
fn resolve_path(text: &str, root: &Path, home: Option<&Path>) -> PathBuf {
    if let (Some(rest), Some(home)) = (text.strip_prefix("~/"), home) {
        return home.join(rest);
    }
    if let Some(rest) = text.strip_prefix("//") {
        return PathBuf::from("/").join(rest);
    }
    let path = Path::new(text);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        root.join(path)
    }
}

/// A `sandbox` settings object that cannot be used; names the file and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {why}")]
pub struct SandboxSettingsError {
    /// The settings file.
    pub path: PathBuf,
    /// What is wrong.
    pub why: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sbx_3_claude_sandbox_settings_are_read() {
        // From `off`, so that `enabled: true` is seen to choose the level.
        let mut settings = SandboxSettings {
            level: Level::Off,
            ..SandboxSettings::default()
        };
        let text = r#"{"sandbox": {"enabled": true, "excludedCommands": ["docker"],
            "failIfUnavailable": true,
            "filesystem": {"allowWrite": ["~/.cache/x", "build"], "denyWrite": ["//etc/y"], "denyRead": ["~/secret"]}}}"#;
        settings
            .apply_claude_settings(
                text,
                Path::new("/s.json"),
                Path::new("/ws"),
                Some(Path::new("/h")),
                false,
                false,
            )
            .unwrap();
        assert_eq!(settings.level, Level::WorkspaceWrite);
        assert!(
            settings.auto_allow,
            "Claude Code's default with enabled: true"
        );
        assert!(settings.strict);
        assert!(settings.is_excluded("/usr/bin/docker"));
        assert!(!settings.is_excluded("dockerd"));
        assert_eq!(
            settings.allow_write,
            [PathBuf::from("/h/.cache/x"), "/ws/build".into()]
        );
        assert_eq!(settings.deny_write, [PathBuf::from("/etc/y")]);
        assert!(
            settings
                .secrets(Some(Path::new("/h")))
                .paths
                .contains(&PathBuf::from("/h/secret"))
        );

        let mut given = SandboxSettings {
            level: Level::Off,
            ..SandboxSettings::default()
        };
        given
            .apply_claude_settings(
                r#"{"sandbox": {"enabled": true, "autoAllowBashIfSandboxed": false}}"#,
                Path::new("/s.json"),
                Path::new("/ws"),
                None,
                true,
                false,
            )
            .unwrap();
        assert_eq!(given.level, Level::Off, "the command line's level stands");
        assert!(!given.auto_allow);
    }

    /// SBX-6: a settings file a sandboxed command could have written only tightens.
    #[test]
    fn sbx_6_writable_settings_only_tighten() {
        let loosening = [
            (r#"{"sandbox": {"enabled": false}}"#, "sandbox.enabled"),
            (
                r#"{"sandbox": {"excludedCommands": ["python3"]}}"#,
                "sandbox.excludedCommands",
            ),
            (
                r#"{"sandbox": {"filesystem": {"allowWrite": ["//"]}}}"#,
                "sandbox.filesystem.allowWrite",
            ),
            (
                r#"{"sandbox": {"allowUnsandboxedCommands": true}}"#,
                "sandbox.allowUnsandboxedCommands",
            ),
            (
                r#"{"sandbox": {"autoAllowBashIfSandboxed": true}}"#,
                "sandbox.autoAllowBashIfSandboxed",
            ),
            (
                r#"{"sandbox": {"failIfUnavailable": false}}"#,
                "sandbox.failIfUnavailable",
            ),
        ];
        for (text, key) in loosening {
            let mut settings = SandboxSettings {
                level: Level::WorkspaceWrite,
                allow_unsandboxed: false,
                strict: true,
                ..SandboxSettings::default()
            };
            let before = settings.clone();
            let ignored = settings
                .apply_claude_settings(
                    text,
                    Path::new("/ws/.claude/settings.local.json"),
                    Path::new("/ws"),
                    None,
                    false,
                    true,
                )
                .unwrap();
            assert_eq!(ignored, [key], "{text}");
            assert_eq!(settings, before, "{text}: nothing loosened");
            // The same file from a place no command writes applies.
            let mut trusted = before.clone();
            let ignored = trusted
                .apply_claude_settings(
                    text,
                    Path::new("/h/.claude/settings.json"),
                    Path::new("/ws"),
                    None,
                    false,
                    false,
                )
                .unwrap();
            assert!(ignored.is_empty());
            assert_ne!(trusted, before, "{text}: a trusted file loosens");
        }
        // What tightens applies from a writable file.
        let mut settings = SandboxSettings::default();
        let ignored = settings
            .apply_claude_settings(
                r#"{"sandbox": {"enabled": true, "failIfUnavailable": true, "allowUnsandboxedCommands": false,
                    "filesystem": {"denyWrite": ["build"], "denyRead": ["~/x"]}}}"#,
                Path::new("/ws/.claude/settings.json"),
                Path::new("/ws"),
                Some(Path::new("/h")),
                false,
                true,
            )
            .unwrap();
        assert!(ignored.is_empty(), "{ignored:?}");
        assert_eq!(settings.level, Level::WorkspaceWrite);
        assert!(
            !settings.auto_allow,
            "enabled: true brings no auto-allow from a writable file"
        );
        assert!(settings.strict && !settings.allow_unsandboxed);
        assert_eq!(settings.deny_write, [PathBuf::from("/ws/build")]);
        assert!(settings.secret_paths.contains(&"/h/x".to_owned()));
    }

    #[test]
    fn sbx_6_inside_any_sees_through_links() {
        let base = std::env::temp_dir().join(format!("wavesh-inside-{}", std::process::id()));
        let ws = base.join("ws");
        std::fs::create_dir_all(ws.join(".claude")).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(&ws, base.join("link")).unwrap();
        assert!(inside_any(
            &ws.join(".claude/settings.json"),
            std::slice::from_ref(&ws)
        ));
        #[cfg(unix)]
        assert!(inside_any(
            &base.join("link/.claude/settings.json"),
            std::slice::from_ref(&ws)
        ));
        assert!(!inside_any(&base.join("other.json"), &[ws]));
        std::fs::remove_dir_all(&base).unwrap();
    }

    /// SBX-2: a secret moved by its tool's variable, or under the home the user database
    /// names, is as secret as at its default place.
    #[test]
    fn sbx_2_relocated_secrets_are_secrets() {
        let settings = SandboxSettings::default();
        let env = |name: &str| -> Option<std::ffi::OsString> {
            match name {
                "XDG_CONFIG_HOME" => Some("/x/conf".into()),
                "CARGO_HOME" => Some("/x/cargo".into()),
                "DOCKER_CONFIG" => Some("/x/docker".into()),
                "KUBECONFIG" => Some("/x/k1:/x/k2:relative".into()),
                "GNUPGHOME" => Some("/x/gpg".into()),
                "AWS_SHARED_CREDENTIALS_FILE" => Some("/x/aws-creds".into()),
                _ => None,
            }
        };
        let list = settings.secrets_with(Some(Path::new("/h")), Some(Path::new("/pw")), &env);
        for path in [
            "/h/.config/gh",
            "/x/conf/gh",
            "/x/conf/containers/auth.json",
            "/x/cargo/credentials.toml",
            "/x/docker/config.json",
            "/x/k1",
            "/x/k2",
            "/x/gpg",
            "/x/aws-creds",
            "/pw/.ssh",
            "/pw/.config/gh",
        ] {
            assert!(list.paths.contains(&PathBuf::from(path)), "{path}");
        }
        assert!(!list.paths.contains(&PathBuf::from("relative")));
    }

    #[test]
    fn sbx_3_bad_sandbox_settings_name_the_key() {
        let mut settings = SandboxSettings::default();
        let error = settings
            .apply_claude_settings(
                r#"{"sandbox": {"enabled": "yes"}}"#,
                Path::new("/s.json"),
                Path::new("/ws"),
                None,
                false,
                false,
            )
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "/s.json: `sandbox.enabled` must be true or false, not \"yes\""
        );
        let error = settings
            .apply_claude_settings(
                r#"{"sandbox": {"excludedCommands": "docker"}}"#,
                Path::new("/s.json"),
                Path::new("/ws"),
                None,
                false,
                false,
            )
            .unwrap_err();
        assert!(
            error
                .to_string()
                .contains("`sandbox.excludedCommands` must be a list of strings")
        );
    }
}
