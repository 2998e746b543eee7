//! Environment variables wavesh reads, in one place, each with what it does.

/// Path of the shell to run commands under: must be an executable bash or zsh
/// (SHELL-2). An unusable value is an error, never skipped.
pub const WAVE_SHELL: &str = "WAVE_SHELL";

/// `0` or `off`: the supervisor holds trees with its subreapers alone, without a cgroup
/// per command, even where the machine allows cgroups (PROC-1).
pub const WAVESH_CGROUPS: &str = "WAVESH_CGROUPS";

/// Windows: the Git Bash to run commands under (SHELL-4).
pub const WAVE_GIT_BASH_PATH: &str = "WAVE_GIT_BASH_PATH";

/// Variables removed from every command's environment, because the shell acts on them
/// before or around the command (EXEC-2, PROC-3): a non-interactive bash sources the file
/// named by `BASH_ENV` (a POSIX-mode one `ENV`), which would bring rc files back in;
/// `SHELLOPTS` and `BASHOPTS` switch options on (`xtrace`, `extglob`, ...); `PS4` is
/// expanded, with command substitution, on every traced line; `PROMPT_COMMAND` runs;
/// `CDPATH` changes where `cd` goes and makes it print; `GLOBIGNORE` changes what globs
/// match. Exported functions (`BASH_FUNC_name%%`) are [`STRIPPED_PREFIX`].
/// `WAVESH_MCP_TOKEN` is the bearer token of `wavesh mcp --http`: no command, nor the
/// model reading its output, sees it.
pub const STRIPPED_FROM_COMMANDS: &[&str] = &[
    "WAVESH_MCP_TOKEN",
    "BASH_ENV",
    "ENV",
    "SHELLOPTS",
    "BASHOPTS",
    "PS4",
    "PROMPT_COMMAND",
    "CDPATH",
    "GLOBIGNORE",
];

/// Exported bash functions travel as `BASH_FUNC_<name>%%=() { ...; }`: one in the host's
/// environment would replace `ls` or `cd` in every command (PROC-3).
pub const STRIPPED_PREFIX: &str = "BASH_FUNC_";

/// Whether `key` is removed from every command's environment.
pub fn stripped_from_commands(key: &[u8]) -> bool {
    key.starts_with(STRIPPED_PREFIX.as_bytes())
        || STRIPPED_FROM_COMMANDS
            .iter()
            .any(|stripped| stripped.as_bytes() == key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_3_shell_behaviour_variables_are_stripped() {
        for key in [
            "BASH_FUNC_ls%%",
            "BASH_FUNC_cd()",
            "BASH_FUNC_",
            "SHELLOPTS",
            "BASHOPTS",
            "BASH_ENV",
            "ENV",
            "PS4",
            "PROMPT_COMMAND",
            "CDPATH",
            "GLOBIGNORE",
            "WAVESH_MCP_TOKEN",
        ] {
            assert!(stripped_from_commands(key.as_bytes()), "{key}");
        }
        for key in [
            "PATH",
            "HOME",
            "ENVIRONMENT",
            "BASH",
            "MY_BASH_FUNC_X",
            "PS1",
            "LANG",
        ] {
            assert!(!stripped_from_commands(key.as_bytes()), "{key}");
        }
    }
}
