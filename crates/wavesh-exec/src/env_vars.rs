//! Environment variables wavesh reads, in one place, each with what it does.

/// Path of the shell to run commands under: must be an executable bash or zsh
/// (SHELL-2). An unusable value is an error, never skipped.
pub const WAVE_SHELL: &str = "WAVE_SHELL";

/// Windows: the Git Bash to run commands under (SHELL-4).
pub const WAVE_GIT_BASH_PATH: &str = "WAVE_GIT_BASH_PATH";

/// Variables removed from every command's environment. A non-interactive bash sources
/// the file named by `BASH_ENV` (and a POSIX-mode one `ENV`) before the command, which
/// would bring the user's rc files back in (EXEC-2). `WAVESH_MCP_TOKEN` is the bearer
/// token of `wavesh mcp --http`: no command, nor the model reading its output, sees it.
pub const STRIPPED_FROM_COMMANDS: &[&str] = &["BASH_ENV", "ENV", "WAVESH_MCP_TOKEN"];
