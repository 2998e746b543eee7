//! Host-configurable defaults of the Bash tool (SCHEMA-3, SCHEMA-6, OUT-1).

use crate::env_vars;

/// The default foreground timeout: 2 minutes.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// The advertised maximum timeout: 10 minutes. The description and the `timeout`
/// parameter both take it from here (SCHEMA-3).
pub const MAX_TIMEOUT_MS: u64 = 600_000;
/// Default inline output limit, in characters.
pub const DEFAULT_MAX_OUTPUT_CHARS: usize = 30_000;
/// The highest inline output limit `BASH_MAX_OUTPUT_LENGTH` may set.
pub const MAX_OUTPUT_CHARS_CAP: usize = 150_000;
/// Characters of the start and of the end of a persisted output shown inline (OUT-1).
pub const PREVIEW_CHARS: usize = 2_000;
/// Default TaskOutput text limit, in characters (TASK-2).
pub const DEFAULT_TASK_OUTPUT_CHARS: usize = 32_000;
/// The highest TaskOutput text limit `TASK_MAX_OUTPUT_LENGTH` may set.
pub const TASK_OUTPUT_CHARS_CAP: usize = 160_000;
/// The blocking budget of assistant mode (BG-6).
pub const ASSISTANT_BUDGET_MS: u64 = 15_000;
/// The default wait budget of an MCP client (MCP-5): below the 60 s request timeout of
/// the TypeScript SDK that most clients use.
pub const DEFAULT_CLIENT_BUDGET_MS: u64 = 50_000;

/// How the host runs its agent loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HostMode {
    /// Commands wait up to their timeout, then move to the background.
    #[default]
    Normal,
    /// A foreground command blocks at most 15 s, then moves to the background (BG-6).
    Assistant,
    /// Everything runs in the foreground: the timeout kills, and `run_in_background` is
    /// refused (EXEC-7).
    IdleTurn,
}

/// Settings of the Bash tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolConfig {
    /// Timeout used when the call gives none.
    pub default_timeout_ms: u64,
    /// The maximum shown to the model (not enforced: SCHEMA-4).
    pub max_timeout_ms: u64,
    /// Inline output limit, in characters.
    pub max_output_chars: usize,
    /// The host's own tools that the description may recommend over shell commands
    /// (`Read`, `Edit`, `Write`, `Glob`, `Grep`). Only tools listed here are ever named
    /// (SCHEMA-7).
    pub host_tools: Vec<String>,
    /// The host's file-reading tool by name, when it has one (`--host-read-tool`):
    /// texts point to it for output files, and TaskOutput is deprecated in its favour
    /// (TASK-1). Without one — an MCP client, perhaps on another machine than the files
    /// — TaskOutput is the way to read output (MCP-4). `Read` in `host_tools` counts as
    /// a read tool named `Read`.
    pub read_tool: Option<String>,
    /// Whether `grep` inside commands is wavesh's gitignore-aware built-in (SEARCH-1).
    /// Takes effect only with a working `search_binary`; the session turns it off (and
    /// the description says nothing of it) when the binary does not answer.
    pub search_shadowing: bool,
    /// The program that provides the built-in search as `PROGRAM grep ARGS` (the
    /// `wavesh` binary).
    pub search_binary: Option<std::path::PathBuf>,
    /// The host vouches that `search_binary` answers (it is the running `wavesh`), so the
    /// session skips its one-process check.
    pub search_binary_trusted: bool,
    /// TaskOutput's text limit, in characters.
    pub task_max_output_chars: usize,
    /// The agent-loop mode.
    pub mode: HostMode,
    /// Output cap per command in bytes (BG-8); `None` for none.
    pub output_cap_bytes: Option<u64>,
    /// How long the host's client waits for a call's answer (MCP-5): past it a
    /// foreground command moves to the background whatever its first word, so the
    /// answer, with its task id, arrives before the client gives up. `None`: the client
    /// waits as long as the command's timeout.
    pub client_budget_ms: Option<u64>,
    /// The sandbox: the level of commands not approved as read-only, auto-allow, the
    /// secret list and the environment filter (SBX).
    pub sandbox: crate::sandbox::SandboxSettings,
}

impl Default for ToolConfig {
    fn default() -> Self {
        ToolConfig {
            default_timeout_ms: DEFAULT_TIMEOUT_MS,
            max_timeout_ms: MAX_TIMEOUT_MS,
            max_output_chars: DEFAULT_MAX_OUTPUT_CHARS,
            host_tools: Vec::new(),
            read_tool: None,
            search_shadowing: false,
            search_binary: None,
            search_binary_trusted: false,
            task_max_output_chars: DEFAULT_TASK_OUTPUT_CHARS,
            mode: HostMode::Normal,
            output_cap_bytes: Some(wavesh_exec::DEFAULT_OUTPUT_CAP),
            client_budget_ms: None,
            sandbox: crate::sandbox::SandboxSettings::default(),
        }
    }
}

impl ToolConfig {
    /// The host's file-reading tool, if it has one (the field of this name, else `Read`
    /// when `host_tools` lists it).
    pub fn read_tool(&self) -> Option<&str> {
        self.read_tool.as_deref().or_else(|| {
            self.host_tools
                .iter()
                .any(|tool| tool == "Read")
                .then_some("Read")
        })
    }

    /// Defaults adjusted by `BASH_DEFAULT_TIMEOUT_MS`, `BASH_MAX_TIMEOUT_MS` and
    /// `BASH_MAX_OUTPUT_LENGTH` from this process's environment.
    pub fn from_env() -> ToolConfig {
        Self::default().with_env(|key| std::env::var(key).ok())
    }

    /// Applies the variables returned by `lookup`. An invalid value is ignored with a
    /// warning; a default above the maximum is lowered to the maximum (SCHEMA-6); an
    /// output limit above 150000 is capped (OUT-1).
    pub fn with_env(mut self, lookup: impl Fn(&str) -> Option<String>) -> ToolConfig {
        if let Some(max) = positive(&lookup, env_vars::BASH_MAX_TIMEOUT_MS) {
            self.max_timeout_ms = max;
        }
        if let Some(default) = positive(&lookup, env_vars::BASH_DEFAULT_TIMEOUT_MS) {
            self.default_timeout_ms = default;
        }
        if self.default_timeout_ms > self.max_timeout_ms {
            tracing::warn!(
                default = self.default_timeout_ms,
                max = self.max_timeout_ms,
                "the default timeout is above the maximum; using the maximum"
            );
            self.default_timeout_ms = self.max_timeout_ms;
        }
        if let Some(chars) = positive(&lookup, env_vars::BASH_MAX_OUTPUT_LENGTH) {
            self.max_output_chars = usize::try_from(chars)
                .map_or(MAX_OUTPUT_CHARS_CAP, |c| c.min(MAX_OUTPUT_CHARS_CAP));
        }
        if let Some(chars) = positive(&lookup, env_vars::TASK_MAX_OUTPUT_LENGTH) {
            self.task_max_output_chars = usize::try_from(chars)
                .map_or(TASK_OUTPUT_CHARS_CAP, |c| c.min(TASK_OUTPUT_CHARS_CAP));
        }
        self
    }
}

fn positive(lookup: &impl Fn(&str) -> Option<String>, key: &str) -> Option<u64> {
    let raw = lookup(key)?;
    match raw.trim().parse::<u64>() {
        Ok(value) if value > 0 => Some(value),
        _ => {
            tracing::warn!(variable = key, value = %raw, "ignoring invalid value: expected a positive whole number");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(vars: &[(&str, &str)]) -> ToolConfig {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ToolConfig::default()
            .with_env(|key| vars.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone()))
    }

    #[test]
    fn schema_6_env_overrides() {
        let c = config(&[
            ("BASH_DEFAULT_TIMEOUT_MS", "5000"),
            ("BASH_MAX_TIMEOUT_MS", "900000"),
        ]);
        assert_eq!((c.default_timeout_ms, c.max_timeout_ms), (5000, 900_000));
    }

    #[test]
    fn schema_6_invalid_values_are_ignored() {
        let c = config(&[
            ("BASH_DEFAULT_TIMEOUT_MS", "soon"),
            ("BASH_MAX_TIMEOUT_MS", "-3"),
        ]);
        assert_eq!(c, ToolConfig::default());
    }

    #[test]
    fn schema_6_default_above_max_is_lowered() {
        let c = config(&[("BASH_DEFAULT_TIMEOUT_MS", "700000")]);
        assert_eq!(c.default_timeout_ms, MAX_TIMEOUT_MS);
        let c = config(&[("BASH_MAX_TIMEOUT_MS", "60000")]);
        assert_eq!(c.default_timeout_ms, 60_000);
    }

    #[test]
    fn task_2_task_output_length_is_capped_at_160000() {
        assert_eq!(config(&[]).task_max_output_chars, 32_000);
        assert_eq!(
            config(&[("TASK_MAX_OUTPUT_LENGTH", "50000")]).task_max_output_chars,
            50_000
        );
        assert_eq!(
            config(&[("TASK_MAX_OUTPUT_LENGTH", "999999")]).task_max_output_chars,
            160_000
        );
    }

    #[test]
    fn out_1_output_length_is_capped_at_150000() {
        assert_eq!(
            config(&[("BASH_MAX_OUTPUT_LENGTH", "100000")]).max_output_chars,
            100_000
        );
        assert_eq!(
            config(&[("BASH_MAX_OUTPUT_LENGTH", "999999")]).max_output_chars,
            150_000
        );
    }
}
