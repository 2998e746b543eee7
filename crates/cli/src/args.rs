//! Command-line arguments, in one place; doc comments are the help text.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// wavesh: the Bash tool of an AI coding agent, as a command and an MCP server.
#[derive(Debug, Parser)]
#[command(name = "wavesh", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one command exactly as the Bash tool would and print what the model reads.
    ///
    /// Exits with the command's exit code (0 when it moved to the background; 2 when the
    /// input is invalid). A command moved to the background keeps running after wavesh
    /// exits; its process group is printed on stderr.
    Run(RunArgs),
    /// Serve the Bash tool over MCP: on stdin/stdout (one connection is one session), or
    /// over Streamable HTTP with `--http` (one `Mcp-Session-Id` is one session).
    Mcp(McpArgs),
    /// Probe the login shell's environment as a session would, and show what is adopted.
    Env(EnvArgs),
    /// Say whether a command is provably read-only (auto-approved) and, if not, why.
    ///
    /// Exits 0 when read-only, 1 when it needs approval, 2 on bad input.
    Check(CheckArgs),
    /// Show what this machine offers the sandbox (Landlock ABI, seccomp, user and network
    /// namespaces, cgroup v2 delegation) and which guarantees hold at each level.
    Doctor(DoctorArgs),
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct EnvArgs {
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Print one JSON object with `read_only`, `reasons`, the capability and the argv.
    #[arg(long)]
    pub json: bool,
    /// Read one JSON string (a command) per line on stdin; write one JSON verdict per line.
    #[arg(long, conflicts_with = "command")]
    pub jsonl: bool,
    /// The directory the command would run in (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// The shell whose syntax applies.
    #[arg(long, value_enum, default_value = "bash")]
    pub shell: ShellArg,
    /// Only approve reads inside the working directory (the stricter path policy).
    #[arg(long)]
    pub confine: bool,
    /// A settings file with `permissions.allow/ask/deny` (repeatable); the user's and the
    /// workspace's `.claude/settings*.json` are read too.
    #[arg(long, value_name = "FILE")]
    pub settings: Vec<PathBuf>,
    /// The permission mode: default, plan, acceptEdits or bypassPermissions.
    #[arg(long, default_value = "default", value_parser = parse_mode)]
    pub mode: wavesh_policy::PermissionMode,
    /// The command; several words are joined with spaces.
    #[arg(last = true, value_name = "COMMAND", required_unless_present = "jsonl")]
    pub command: Vec<String>,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ShellArg {
    Bash,
    Zsh,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub workspace: WorkspaceArgs,
    /// Foreground timeout in milliseconds (default 120000); past it the command moves
    /// to the background, or is stopped if it starts with sleep.
    #[arg(long, value_name = "MS", allow_hyphen_values = true)]
    pub timeout: Option<String>,
    /// Start the command as a background task and return at once.
    #[arg(long)]
    pub background: bool,
    /// What the command does, in a few words.
    #[arg(long, value_name = "TEXT")]
    pub description: Option<String>,
    /// Print one JSON object with the text and the structured fields.
    #[arg(long)]
    pub json: bool,
    /// Probe the login shell first and give the command its PATH, proxies and CA
    /// bundles, as `wavesh mcp` does (off by default: a terminal already has them).
    #[arg(long)]
    pub login_env: bool,
    /// The sandbox the command runs in: read-only, workspace-write or off. Off by
    /// default: the user typed the command.
    #[arg(long, value_name = "LEVEL", default_value = "off", value_parser = parse_level)]
    pub sandbox: wavesh_exec::sandbox::Level,
    /// Refuse to run when the sandbox cannot give all its guarantees on this machine,
    /// instead of running with the rest.
    #[arg(long)]
    pub sandbox_strict: bool,
    /// Read the raw Bash tool input as JSON from FILE, or from stdin with -.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["command", "timeout", "background", "description"])]
    pub input: Option<PathBuf>,
    /// The command; several words are joined with spaces.
    #[arg(last = true, value_name = "COMMAND", required_unless_present = "input")]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct McpArgs {
    #[command(flatten)]
    pub workspace: WorkspaceArgs,
    /// Do not probe the login shell: commands inherit this process's environment only.
    #[arg(long)]
    pub no_login_env: bool,
    /// Resume (or name) a session: its shell is recorded and reused.
    #[arg(long, value_name = "ID", conflicts_with = "addr")]
    pub session_id: Option<String>,
    /// Where session records are kept (default: $XDG_STATE_HOME/wavesh or
    /// ~/.local/state/wavesh).
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// A settings file with `permissions.allow/ask/deny` (repeatable); the user's and the
    /// workspace's `.claude/settings*.json` are read too.
    #[arg(long, value_name = "FILE")]
    pub settings: Vec<PathBuf>,
    /// Who approves commands: `host` (the MCP client; deny rules still refuse) or
    /// `wavesh` (rules and read-only run, deny refuses, the rest asks the user through
    /// MCP elicitation or is refused with the rule that would allow it).
    #[arg(long, value_enum, default_value = "host")]
    pub permission_mode: ApproverArg,
    /// The sandbox of commands not approved as read-only: read-only, workspace-write or
    /// off (default: workspace-write, or what `sandbox.enabled` of the settings says).
    /// Commands approved as read-only run at read-only.
    #[arg(long, value_name = "LEVEL", value_parser = parse_level)]
    pub sandbox: Option<wavesh_exec::sandbox::Level>,
    /// Run commands approved as read-only at the session's level instead of read-only.
    #[arg(long)]
    pub no_seal: bool,
    /// Sandboxed auto-allow: with `--permission-mode wavesh`, commands that would ask run
    /// without asking at workspace-write; deny and ask rules still apply (Claude Code's
    /// `sandbox.autoAllowBashIfSandboxed`).
    #[arg(long)]
    pub auto_allow_sandboxed: bool,
    /// Refuse to run when the sandbox cannot give all its guarantees on this machine
    /// (Claude Code's `sandbox.failIfUnavailable`).
    #[arg(long)]
    pub sandbox_strict: bool,
    /// The policy mode: default, plan, acceptEdits or bypassPermissions.
    #[arg(long, default_value = "default", value_parser = parse_mode)]
    pub mode: wavesh_policy::PermissionMode,
    /// The client's file-reading tool, if it has one that reads this machine's files:
    /// texts then point to it for output files. Without it, TaskOutput pages through
    /// output itself (the client may be on another machine).
    #[arg(long, value_name = "NAME")]
    pub host_read_tool: Option<String>,
    /// The largest incoming message (a stdio line, an HTTP body) in bytes; past it the
    /// message gets an error reply and is skipped without being held.
    #[arg(long, value_name = "BYTES", default_value_t = wavesh_mcp::DEFAULT_MAX_MESSAGE_BYTES)]
    pub max_message_bytes: usize,
    /// How long the client waits for a call's answer, in seconds (MCP-5): a foreground
    /// command still running then moves to the background, with its task id in the
    /// answer, whatever its first word. The default stays below the 60 s request
    /// timeout of the TypeScript SDK; 0 turns it off.
    #[arg(long, value_name = "SECS", default_value_t = wavesh_tool::DEFAULT_CLIENT_BUDGET_MS / 1000)]
    pub client_timeout: u64,
    #[command(flatten)]
    pub http: HttpArgs,
}

/// Streamable HTTP.
#[derive(Debug, Args)]
pub struct HttpArgs {
    /// Serve Streamable HTTP at http://ADDR:PORT/mcp instead of stdio (port 0 picks a
    /// free one; the address served is printed on stderr). Requests need
    /// `Authorization: Bearer TOKEN`: the token is WAVESH_MCP_TOKEN, or one generated
    /// and printed once on stderr.
    #[arg(long = "http", value_name = "ADDR:PORT")]
    pub addr: Option<String>,
    /// Serve without a bearer token: only on a loopback address.
    #[arg(long = "http-no-auth", requires = "addr")]
    pub no_auth: bool,
    /// Also write the generated token to FILE (mode 0600).
    #[arg(long = "http-token-file", value_name = "FILE", requires = "addr")]
    pub token_file: Option<PathBuf>,
    /// A `Host` header value to accept besides localhost, 127.0.0.1 and ::1 (name or
    /// name:port; repeatable): the name clients use to reach a container or a remote
    /// machine.
    #[arg(long = "http-allowed-host", value_name = "HOST", requires = "addr")]
    pub allowed_hosts: Vec<String>,
    /// An `Origin` to accept besides loopback pages (scheme://host[:port or :*];
    /// repeatable). Requests without Origin (non-browser clients) always pass.
    #[arg(long = "http-allowed-origin", value_name = "ORIGIN", requires = "addr")]
    pub allowed_origins: Vec<String>,
    /// At most this many sessions at once.
    #[arg(
        long = "http-max-sessions",
        value_name = "N",
        default_value_t = 64,
        requires = "addr"
    )]
    pub max_sessions: usize,
    /// End a session after this many seconds without a request.
    #[arg(
        long = "http-idle-timeout",
        value_name = "SECONDS",
        default_value_t = 1800,
        requires = "addr"
    )]
    pub idle_timeout_secs: u64,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ApproverArg {
    Host,
    Wavesh,
}

/// Where the session works.
#[derive(Debug, Args)]
pub struct WorkspaceArgs {
    /// The workspace root and starting directory (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// A further directory the shell may stay in (repeatable).
    #[arg(long, value_name = "DIR")]
    pub add_dir: Vec<PathBuf>,
    /// Leave grep inside commands to the system instead of wavesh's gitignore-aware one.
    #[arg(long)]
    pub no_search_shadowing: bool,
}

fn parse_level(text: &str) -> Result<wavesh_exec::sandbox::Level, String> {
    text.parse()
        .map_err(|error: wavesh_exec::sandbox::UnknownLevel| error.to_string())
}

fn parse_mode(text: &str) -> Result<wavesh_policy::PermissionMode, String> {
    wavesh_policy::PermissionMode::parse(text).ok_or_else(|| {
        format!("unknown mode `{text}` (default, plan, acceptEdits, bypassPermissions)")
    })
}
