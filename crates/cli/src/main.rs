//! The `wavesh` binary: `wavesh run` runs one command exactly as the Bash tool would and
//! prints what the model would read; `wavesh mcp` serves the tools over MCP on stdio.

mod args;
mod check;
mod net_report;
mod printer;
mod progress;

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::Parser;
use tokio_util::sync::CancellationToken;
use wavesh_tool::{
    BashInput, BashResult, CallContext, InputError, Session, ToolError, parse_bash_input,
};

use crate::args::{
    ApproverArg, Cli, Command, DoctorArgs, EnvArgs, McpArgs, RunArgs, WorkspaceArgs,
};

fn main() -> ExitCode {
    // `wavesh grep|rg|find ARGS` (and links named so): the tool's own arguments, passed
    // untouched, not parsed by clap.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // The session supervisor (Linux): single-threaded, so it must start before anything
    // else does.
    #[cfg(target_os = "linux")]
    if args.len() == 2 && args[1] == wavesh_exec::supervisor::HELPER_ARG {
        return ExitCode::from(u8::try_from(wavesh_exec::supervisor::run_helper()).unwrap_or(1));
    }
    // The login probe's reaper (PROC-3): `wavesh __reap -- PROGRAM ARGS...`.
    #[cfg(target_os = "linux")]
    if args.len() >= 4 && args[1] == wavesh_exec::supervisor::REAPER_ARG && args[2] == "--" {
        let code = wavesh_exec::supervisor::run_reaper(&args[3], &args[4..]);
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    // Every login probe of this process runs under that reaper.
    #[cfg(target_os = "linux")]
    if let Ok(me) = std::env::current_exe() {
        wavesh_env::set_reaper(vec![
            me.into_os_string(),
            wavesh_exec::supervisor::REAPER_ARG.into(),
            "--".into(),
        ]);
    }
    let invoked_as = args.first().and_then(|a| {
        std::path::Path::new(a)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
    });
    let search = match (invoked_as.as_deref(), args.get(1).and_then(|a| a.to_str())) {
        (Some(tool @ ("grep" | "rg" | "find")), _) => Some((tool.to_owned(), &args[1..])),
        (_, Some(tool @ ("grep" | "rg" | "find"))) => Some((tool.to_owned(), &args[2..])),
        _ => None,
    };
    if let Some((tool, rest)) = search {
        return exit_code_of(wavesh_search::search_main(&tool, rest));
    }
    // Still one thread: the token leaves the environment before anything else can read
    // it, or any child inherit it.
    take_http_token();
    let cli = Cli::parse();
    init_logging();
    match run(cli) {
        Ok(code) => code,
        Err(error) => {
            printer::error(&format!("{error:#}"));
            ExitCode::from(2)
        }
    }
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("WAVESH_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .init();
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    match cli.command {
        Command::Check(args) => check::run(&args),
        Command::Doctor(args) => Ok(doctor(&args)),
        Command::Env(args) => runtime.block_on(env_command(&args)),
        Command::Run(args) => runtime.block_on(run_command(args)),
        Command::Mcp(args) => {
            runtime.block_on(serve_mcp(args))?;
            // A blocking stdin read may still be pending in the runtime; everything of
            // ours is done, so leave without waiting for it.
            std::process::exit(0);
        }
    }
}

fn session_builder(
    workspace: &WorkspaceArgs,
    adjust: impl FnOnce(&mut wavesh_tool::ToolConfig),
) -> anyhow::Result<wavesh_tool::SessionBuilder> {
    let root = match &workspace.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let mut builder = Session::builder(root);
    // Without bash or zsh every call still gets an answer naming why (a server that
    // exits at its start tells the model nothing; `run --json` prints its JSON).
    builder.answer_without_shell();
    for dir in &workspace.add_dir {
        builder.additional_dir(dir);
    }
    // grep inside commands is this binary's (SEARCH-1); the session checks it answers.
    let mut config = wavesh_tool::ToolConfig::from_env();
    config.search_shadowing = !workspace.no_search_shadowing;
    config.search_binary = std::env::current_exe().ok();
    // This process is that binary and answers; a check would cost a process per run.
    config.search_binary_trusted = true;
    adjust(&mut config);
    builder.config(config);
    // Commands start through the supervisor, which is this binary too.
    if let Ok(exe) = std::env::current_exe() {
        builder.supervisor(exe);
    }
    Ok(builder)
}

/// Cancels `token` on SIGINT or SIGTERM (and on Ctrl+C elsewhere).
fn cancel_on_signals(token: CancellationToken) {
    tokio::spawn(async move {
        wait_for_signal().await;
        token.cancel();
    });
}

#[cfg(unix)]
async fn wait_for_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        tracing::warn!("cannot install signal handlers");
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
}

#[cfg(not(unix))]
async fn wait_for_signal() {
    if tokio::signal::ctrl_c().await.is_err() {
        std::future::pending::<()>().await;
    }
}

async fn run_command(args: RunArgs) -> anyhow::Result<ExitCode> {
    let input = match read_input(&args) {
        Ok(input) => input,
        Err(error) => return Ok(report_error(&args, &error)),
    };
    let mut builder = session_builder(&args.workspace, |config| {
        config.sandbox.read_only_level = false;
        config.sandbox.strict = args.sandbox_strict;
    })?;
    // The user typed the command: it runs at exactly the level asked for, whatever
    // Claude Code's settings say.
    builder.sandbox_level(args.sandbox).no_claude_settings();
    // One command: no next one to start ahead.
    builder.start_ahead(false);
    if !args.login_env {
        builder.no_login_env();
    }
    let session = builder.build()?;
    let abort = CancellationToken::new();
    cancel_on_signals(abort.clone());
    let spinner = progress::Spinner::start_if_terminal();
    let ctx = CallContext {
        abort,
        progress: spinner.as_ref().map(progress::Spinner::sink),
        move_to_background: CancellationToken::new(),
        // The user typed the command: it is approved.
        approved: true,
    };
    let outcome = session.bash(input, &ctx).await;
    drop(spinner);
    let result = match outcome {
        Ok(result) => result,
        Err(error) => {
            session.shutdown().await;
            return Ok(report_error(&args, &error));
        }
    };
    if let Some(task) = result
        .task
        .as_ref()
        .filter(|_| result.waiting_for_input.is_some())
    {
        // PTY-1: a tty task's terminal is this process's; nothing could type into it or
        // read it once wavesh exits, so it ends here rather than hang up later.
        session.shutdown().await;
        printer::note(&format!(
            "wavesh: task {} was stopped: `wavesh run` keeps no terminal once it exits (use the MCP server or the library for TaskInput)",
            task.task_id
        ));
    } else if let Some(task) = &result.task {
        // Deliberately detached: the command goes on after wavesh exits.
        session.detach_tasks();
        printer::note(&format!(
            "wavesh: task {} keeps running in process group {}; stop it with: kill -- -{}",
            task.task_id, task.pgid, task.pgid
        ));
    } else {
        // Children a foreground command left running end with wavesh (KILL-7).
        session.shutdown().await;
    }
    print_result(&args, &result)?;
    Ok(exit_code(&result))
}

/// The tool input, from `--input` or from the arguments. Both go through the tool's own
/// validation, so `--timeout -1` gets exactly the error the model would.
fn read_input(args: &RunArgs) -> Result<BashInput, ToolError> {
    let value = match &args.input {
        Some(source) => {
            let text = read_source(source).map_err(|error| InputError::WrongType {
                field: "--input",
                expected: "a readable file, or - for standard input",
                got: format!("{} ({error})", source.display()),
            })?;
            serde_json::from_str(&text).map_err(|error| InputError::WrongType {
                field: "--input",
                expected: "a JSON object",
                got: format!("invalid JSON ({error})"),
            })?
        }
        None => {
            let mut object = serde_json::Map::new();
            object.insert("command".into(), args.command.join(" ").into());
            if let Some(timeout) = &args.timeout {
                // A number stays a number; anything else is passed as a string so the
                // tool rejects it with its own message.
                let value = serde_json::from_str::<serde_json::Number>(timeout.trim()).map_or_else(
                    |_| serde_json::Value::from(timeout.clone()),
                    serde_json::Value::Number,
                );
                object.insert("timeout".into(), value);
            }
            if args.background {
                object.insert("run_in_background".into(), true.into());
            }
            if let Some(description) = &args.description {
                object.insert("description".into(), description.clone().into());
            }
            serde_json::Value::Object(object)
        }
    };
    Ok(parse_bash_input(&value)?)
}

fn read_source(source: &std::path::Path) -> std::io::Result<String> {
    if source == std::path::Path::new("-") {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text)?;
        Ok(text)
    } else {
        std::fs::read_to_string(source)
    }
}

fn report_error(args: &RunArgs, error: &ToolError) -> ExitCode {
    if args.json {
        let value = serde_json::json!({
            "text": error.to_string(),
            "is_error": true,
            "error": error.to_string(),
        });
        printer::stdout_line(&value.to_string());
    }
    printer::error(&error.to_string());
    ExitCode::from(2)
}

fn print_result(args: &RunArgs, result: &BashResult) -> anyhow::Result<()> {
    if args.json {
        let json = serde_json::to_string(result).context("cannot serialise the result")?;
        printer::stdout_line(&json);
    } else {
        printer::stdout_line(&result.text);
    }
    Ok(())
}

/// The command's exit code; 0 when it went to the background.
fn exit_code(result: &BashResult) -> ExitCode {
    match result.exit_code {
        Some(code) => ExitCode::from(u8::try_from(code & 0xff).unwrap_or(1)),
        None => ExitCode::SUCCESS,
    }
}

async fn serve_mcp(args: McpArgs) -> anyhow::Result<()> {
    let stop = CancellationToken::new();
    cancel_on_signals(stop.clone());
    if args.http.addr.is_some() {
        return serve_mcp_http(Arc::new(args), stop).await;
    }
    let session_id = args.session_id.clone().unwrap_or_else(new_session_id);
    let (session, permissions) = mcp_session(&args, &session_id)?;
    let shell = match session.shell_selection() {
        wavesh_tool::shell_state::ShellSelection::Missing { why } => {
            format!("no shell: {why}; every command will say so")
        }
        selection => format!(
            "shell {}, {}",
            session.shell().path().display(),
            selection.word()
        ),
    };
    printer::note(&format!(
        "wavesh mcp: session {session_id} ({shell}); resume with --session-id {session_id}"
    ));
    wavesh_mcp::serve_stdio(session, permissions, args.max_message_bytes, stop).await?;
    Ok(())
}

/// The session of one MCP connection (stdio) or one MCP session (HTTP).
fn mcp_session(
    args: &McpArgs,
    session_id: &str,
) -> anyhow::Result<(Arc<Session>, wavesh_mcp::Permissions)> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let root = match &args.workspace.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let writable: Vec<PathBuf> = std::iter::once(root.clone())
        .chain(args.workspace.add_dir.iter().cloned())
        .collect();
    // The sandbox: workspace-write unless --sandbox or Claude Code's settings say
    // otherwise, assembled by the library (SBX-3).
    let mut builder = session_builder(&args.workspace, |config| {
        config.read_tool.clone_from(&args.host_read_tool);
        // MCP-5: 0 turns the budget off.
        config.client_budget_ms =
            (args.client_timeout > 0).then(|| args.client_timeout.saturating_mul(1000));
    })?;
    // The command line's flags win over the settings files.
    let (seal, auto_allow, strict) = (
        !args.no_seal,
        args.auto_allow_sandboxed,
        args.sandbox_strict,
    );
    builder.sandbox_override(move |sandbox| {
        sandbox.read_only_level = seal;
        sandbox.auto_allow |= auto_allow;
        sandbox.strict |= strict;
    });
    if let Some(level) = args.sandbox {
        builder.sandbox_level(level);
    }
    for path in &args.settings {
        builder.settings_file(path);
    }
    if args.no_login_env {
        builder.no_login_env();
    }
    // The connection's read-file state: Bash reads count, formatter runs are checked.
    builder.read_state(Arc::new(wavesh_tool::read_state::MemoryReadState::default()));
    let state_dir = args
        .state_dir
        .clone()
        .or_else(wavesh_tool::shell_state::default_state_dir);
    if let Some(state_dir) = state_dir {
        builder.session(session_id, state_dir);
    }
    let session = Arc::new(builder.build()?);
    for note in session.settings_notes() {
        printer::note(&format!("wavesh: {note}"));
    }
    let settings =
        wavesh_policy::settings::Settings::load(session.root(), home.as_deref(), &args.settings)?;
    for (dir, source) in &settings.additional_directories {
        // A directory named by a file sandboxed commands may write would widen what they
        // may write (SBX-6).
        if wavesh_tool::sandbox::inside_any(source, &writable) {
            printer::note(&format!(
                "wavesh: {}: permissions.additionalDirectories {} ignored: sandboxed commands may write that file",
                source.display(),
                dir.display()
            ));
            continue;
        }
        session.add_directory(session.root().join(dir));
    }
    let permissions = wavesh_mcp::Permissions {
        settings: std::sync::RwLock::new(settings),
        approver: match args.permission_mode {
            ApproverArg::Host => wavesh_mcp::Approver::Host,
            ApproverArg::Wavesh => wavesh_mcp::Approver::Wavesh,
        },
        mode: args.mode,
    };
    Ok((session, permissions))
}

/// `wavesh mcp --http ADDR:PORT` (MCP-1).
async fn serve_mcp_http(args: Arc<McpArgs>, stop: CancellationToken) -> anyhow::Result<()> {
    let addr = args.http.addr.clone().unwrap_or_default();
    let listener = tokio::net::TcpListener::bind(&addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    let local = listener
        .local_addr()
        .with_context(|| format!("cannot read the address of {addr}"))?;
    let token = http_token(&args, local)?;
    let mut allowed_hosts = args.http.allowed_hosts.clone();
    if !local.ip().is_unspecified() && !local.ip().is_loopback() {
        // Clients reach a specific address by that address.
        allowed_hosts.push(local.ip().to_string());
    }
    let config = wavesh_mcp::http::HttpConfig {
        token,
        allowed_hosts,
        allowed_origins: args.http.allowed_origins.clone(),
        max_sessions: args.http.max_sessions,
        max_message_bytes: args.max_message_bytes,
        idle_timeout: std::time::Duration::from_secs(args.http.idle_timeout_secs),
    };
    let factory: wavesh_mcp::http::SessionFactory = {
        let args = Arc::clone(&args);
        Arc::new(move || {
            mcp_session(&args, &new_session_id()).map_err(|error| format!("{error:#}"))
        })
    };
    printer::note(&format!(
        "wavesh mcp: serving Streamable HTTP at http://{local}{}",
        wavesh_mcp::http::MCP_PATH
    ));
    wavesh_mcp::http::serve_http(listener, factory, config, stop).await?;
    Ok(())
}

/// `WAVESH_MCP_TOKEN` as the process started with it, taken by [`take_http_token`].
static TAKEN_TOKEN: std::sync::OnceLock<Option<std::ffi::OsString>> = std::sync::OnceLock::new();

/// Takes `WAVESH_MCP_TOKEN` out of the environment for good (SBX-7): its bytes in the
/// process's original environment block, which `/proc/PID/environ` shows to any process
/// of the same user, are overwritten, and the variable is removed, so neither that file
/// nor a child (the supervisor, the login probe, a command at `off`) has it.
#[expect(
    unsafe_code,
    reason = "getenv(3), then the environment block's bytes overwritten before any thread starts"
)]
fn take_http_token() {
    let name = wavesh_mcp::http::TOKEN_ENV;
    let value = std::env::var_os(name);
    if value.is_some() {
        #[cfg(unix)]
        {
            let c_name = std::ffi::CString::new(name).unwrap_or_default();
            // SAFETY: still single-threaded (called first in main); getenv returns the
            // value's bytes in place, NUL-terminated, in writable memory (the initial
            // environment block or a string setenv made), which is overwritten within
            // its own length.
            unsafe {
                let value = libc::getenv(c_name.as_ptr());
                if !value.is_null() {
                    let len = libc::strlen(value);
                    std::ptr::write_bytes(value, b'x', len);
                }
            }
        }
        // SAFETY: no other thread exists yet to read the environment concurrently.
        unsafe { std::env::remove_var(name) };
    }
    let _ = TAKEN_TOKEN.set(value);
}

/// The bearer token: `WAVESH_MCP_TOKEN`, else a fresh one printed once on stderr (and
/// written to `--http-token-file`); none with `--http-no-auth`, which needs loopback.
fn http_token(args: &McpArgs, local: std::net::SocketAddr) -> anyhow::Result<Option<String>> {
    if args.http.no_auth {
        anyhow::ensure!(
            local.ip().is_loopback(),
            "--http-no-auth is only allowed on a loopback address (127.0.0.1, ::1); {local} is not one"
        );
        return Ok(None);
    }
    if let Some(token) = TAKEN_TOKEN.get().cloned().flatten() {
        let token = token
            .into_string()
            .ok()
            .filter(|token| !token.trim().is_empty())
            .with_context(|| {
                format!(
                    "{} is set but empty or not UTF-8",
                    wavesh_mcp::http::TOKEN_ENV
                )
            })?;
        return Ok(Some(token.trim().to_owned()));
    }
    let token = wavesh_mcp::http::generate_token().context("cannot generate a bearer token")?;
    if let Some(path) = &args.http.token_file {
        write_private(path, &token)
            .with_context(|| format!("cannot write the token to {}", path.display()))?;
    }
    printer::note(&format!(
        "wavesh mcp: bearer token (generated; set {} to choose one): {token}",
        wavesh_mcp::http::TOKEN_ENV
    ));
    Ok(Some(token))
}

/// Writes `text` to a file only its owner can read.
fn write_private(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        options.mode(0o600);
        // An existing file keeps its mode on open: tighten it before writing.
        if path.exists() {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
        }
    }
    let mut file = options.open(path)?;
    writeln!(file, "{text}")
}

/// `wavesh doctor`: what this machine offers the sandbox and which guarantees hold
/// (SBX-5).
fn doctor(args: &DoctorArgs) -> ExitCode {
    use wavesh_exec::sandbox::{Level, describe_all, probe_namespaces};
    let support = &probe_namespaces();
    let levels = [Level::ReadOnly, Level::WorkspaceWrite];
    let processes = process_trees();
    let (network_text, network_json) = net_report::session_network();
    // SBX-8: where ordinary work writes outside the workspace.
    let overlay = support.mount_namespace && wavesh_exec::sandbox::overlay_available();
    if args.json {
        let missing: serde_json::Map<String, serde_json::Value> = levels
            .iter()
            .map(|level| {
                (
                    level.name().to_owned(),
                    support
                        .missing(*level)
                        .iter()
                        .map(|g| serde_json::Value::from(g.describe()))
                        .collect(),
                )
            })
            .collect();
        let value = serde_json::json!({
            "platform": support.platform,
            "landlock_abi": support.landlock_abi,
            "seccomp": support.seccomp,
            "mount_namespace": support.mount_namespace,
            "user_namespace": support.user_namespace,
            "network_namespace": support.network_namespace,
            "cgroup_delegation": support.cgroup_delegation,
            "seatbelt": support.seatbelt,
            "overlayfs": overlay,
            "missing": missing,
            "process_trees": processes,
            "off_pid_namespace": match wavesh_exec::sandbox::off_pid_namespace() {
                Ok(()) => serde_json::Value::Bool(true),
                Err(why) => serde_json::Value::from(why),
            },
            "session_network": network_json,
            "other_sessions_hidden_by": other_sessions_hidden_by(support).0,
        });
        printer::stdout_line(&value.to_string());
        return ExitCode::SUCCESS;
    }
    let yes = |b: bool| if b { "yes" } else { "no" };
    let landlock = match support.landlock_abi {
        0 => "no".to_owned(),
        abi => format!(
            "ABI {abi} (files{}{}{})",
            if abi >= 2 { ", links and renames" } else { "" },
            if abi >= 4 { ", TCP" } else { "" },
            if abi >= 6 {
                ", signal and abstract-socket scoping"
            } else {
                ""
            }
        ),
    };
    printer::stdout_line(&format!(
        "platform: {}\nLandlock: {landlock}\nseccomp: {}\nmount namespace: {}\nuser namespaces: {}\nnetwork namespaces: {}\ncgroup v2 delegation: {}",
        support.platform,
        yes(support.seccomp),
        yes(support.mount_namespace),
        yes(support.user_namespace == Some(true)),
        yes(support.network_namespace == Some(true)),
        yes(support.cgroup_delegation),
    ));
    if support.platform == "macos" {
        printer::stdout_line(&format!(
            "Seatbelt (sandbox-exec): {}",
            yes(support.seatbelt)
        ));
    }
    printer::stdout_line(&format!("process trees: {processes}"));
    // SBX-7: whether a tree let run without the sandbox still ends with its session.
    printer::stdout_line(&match wavesh_exec::sandbox::off_pid_namespace() {
        Ok(()) => "off: a PID namespace per command (no tree outlives its session; ps there \
                   sees the command's own tree)"
            .to_owned(),
        Err(why) => format!(
            "off: no PID namespace ({why}); a tree that leaves its cgroup and ends its \
             subreaper and the supervisor can outlive the session"
        ),
    });
    printer::stdout_line(&network_text);
    printer::stdout_line(&format!(
        "other sessions' files: {}",
        other_sessions_hidden_by(support).1
    ));
    printer::stdout_line(&format!(
        "workspace-write /tmp: {}\nworkspace-write toolchain caches: {}",
        if support.mount_namespace {
            "the session's own, kept on the host in its private directory's tmp-view/ (ends with the session)"
        } else {
            "not writable (no mount namespace)"
        },
        if overlay {
            "copy-on-write overlays, changes in $XDG_STATE_HOME/wavesh/caches/ (default ~/.local/state/wavesh/caches/)"
        } else {
            "read-only (overlayfs cannot be mounted here, or cannot remove a cached file in a user namespace)"
        }
    ));
    for level in levels {
        let missing = support.missing(level);
        if missing.is_empty() {
            printer::stdout_line(&format!("{level}: every guarantee holds"));
        } else {
            printer::stdout_line(&format!("{level}: missing {}", describe_all(&missing)));
        }
    }
    ExitCode::SUCCESS
}

/// How a sandboxed command is kept from other sessions' private directories here
/// (SBX-7): its name for `--json`, and the sentence.
fn other_sessions_hidden_by(
    support: &wavesh_exec::sandbox::Support,
) -> (&'static str, &'static str) {
    if support.platform != "linux" {
        (
            "nothing",
            "visible to sandboxed commands (hidden on Linux only)",
        )
    } else if support.process_isolation {
        (
            "mount",
            "hidden by a mount in each sandboxed command's own mount namespace (an empty \
             file system over the directory of every session's, the session's own mounted \
             back)",
        )
    } else if support.landlock_abi >= 1 {
        (
            "landlock",
            "hidden by Landlock (read rules around the directory of every session's, made \
             again whenever an entry beside it comes or goes: no process isolation here)",
        )
    } else {
        ("nothing", "visible to sandboxed commands (no Landlock)")
    }
}

/// How a session's process trees are held and ended here, and why (PROC-1, PROC-2).
fn process_trees() -> String {
    #[cfg(target_os = "linux")]
    {
        let pidfds = wavesh_exec::supervisor::pidfds_supported();
        let path = match wavesh_exec::cgroup::support() {
            _ if std::env::var(wavesh_exec::env_vars::WAVESH_CGROUPS)
                .is_ok_and(|v| matches!(v.as_str(), "0" | "off" | "false" | "no")) =>
            {
                "a subreaper per command (per-command cgroups turned off by WAVESH_CGROUPS)"
                    .to_owned()
            }
            wavesh_exec::cgroup::Support::Available {
                parent,
                controllers,
            } => format!(
                "a cgroup per command under {} (cgroup.kill ends exactly the tree; \
                 controllers for limits: {}), and a subreaper per command",
                parent.display(),
                if controllers.is_empty() {
                    "none".to_owned()
                } else {
                    controllers.join(" ")
                }
            ),
            wavesh_exec::cgroup::Support::Unavailable(why) => {
                format!("a subreaper per command (no per-command cgroups: {why})")
            }
        };
        // Started for real, as a session would: a supervisor that cannot start makes the
        // session run direct children, and that is said here, not only in a log.
        let supervisor = match std::env::current_exe().and_then(|exe| {
            wavesh_exec::supervisor::Supervisor::start_with(
                exe,
                &wavesh_exec::supervisor::Options::default(),
            )
        }) {
            Ok(supervisor) => {
                drop(supervisor);
                "the session supervisor starts".to_owned()
            }
            Err(why) => format!(
                "the session supervisor cannot start ({why}): commands would run as direct \
                 children, tracked by process group only"
            ),
        };
        format!(
            "{supervisor}; {path}; pidfds: {}",
            if pidfds {
                "yes (the supervisor is resumed if a command stops it)"
            } else {
                "no (a command that stops its supervisor holds it)"
            }
        )
    }
    #[cfg(not(target_os = "linux"))]
    {
        "process groups (no subreaper or cgroups on this platform)".to_owned()
    }
}

/// A fresh session id: time and pid, enough to be unique on one machine.
fn new_session_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("s{nanos:x}{:x}", std::process::id())
}

async fn env_command(args: &EnvArgs) -> anyhow::Result<ExitCode> {
    let config = wavesh_env::ProbeConfig::from_process();
    let report = wavesh_env::probe(&config).await;
    let host: std::collections::HashMap<String, String> = std::env::vars().collect();
    let adoption = wavesh_env::adopt(&report.vars, &host);
    if args.json {
        let value = serde_json::json!({
            "shell": report.shell,
            "attempts": report.attempts,
            "duration_ms": report.duration_ms,
            "line_fallback": report.line_fallback,
            "dropped_multiline": report.dropped_multiline,
            "error": report.error,
            "adopted": adoption.adopted.iter().map(|(k, v)| (k.clone(), serde_json::Value::from(v.clone()))).collect::<serde_json::Map<_, _>>(),
            "skipped_host_set": adoption.skipped_host_set,
            "path": adoption.path,
        });
        printer::stdout_line(&value.to_string());
    } else {
        let shell = report
            .shell
            .as_ref()
            .map_or("none".into(), |s| s.display().to_string());
        printer::stdout_line(&format!(
            "shell: {shell}\nattempts: {}\nduration: {} ms\nline fallback: {}",
            report.attempts,
            report.duration_ms,
            if report.line_fallback { "yes" } else { "no" }
        ));
        if let Some(error) = &report.error {
            printer::stdout_line(&format!("problem: {error}"));
        }
        printer::stdout_line("adopted:");
        for (key, value) in &adoption.adopted {
            printer::stdout_line(&format!("  {key}={value}"));
        }
        if !adoption.skipped_host_set.is_empty() {
            printer::stdout_line(&format!(
                "kept the host's: {}",
                adoption.skipped_host_set.join(", ")
            ));
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn exit_code_of(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(2))
}
