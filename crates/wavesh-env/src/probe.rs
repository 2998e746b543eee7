//! Running the login shell (ENV-2..4, ENV-6).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::io::AsyncReadExt;

use crate::parse::parse;

/// Variables passed to the probe besides the anti-noise ones (ENV-4).
const PASSED: &[&str] = &[
    "HOME",
    "PATH",
    "SHELL",
    "USER",
    "LOGNAME",
    "SSH_AUTH_SOCK",
    "LANG",
    "LANGUAGE",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XDG_RUNTIME_DIR",
    "TMPDIR",
];

/// Set for the probe so rc files stay quiet and never prompt (ENV-4).
const ANTI_NOISE: &[(&str, &str)] = &[
    ("DISABLE_AUTO_UPDATE", "true"),
    ("ZSH_DISABLE_COMPFIX", "true"),
    ("SSH_ASKPASS_REQUIRE", "never"),
    ("DBUS_SESSION_BUS_ADDRESS", "disabled:"),
];

/// How to probe.
#[derive(Debug, Clone)]
pub struct ProbeConfig {
    /// The shell to run; `None` chooses by ENV-3.
    pub shell: Option<PathBuf>,
    /// The environment the choice and the minimal environment come from.
    pub env: Vec<(String, String)>,
    /// Per attempt (ENV-6: 4 s).
    pub attempt_timeout: Duration,
    /// Attempts (ENV-6: 2).
    pub attempts: u32,
    /// Pause between attempts (ENV-6: 200 ms).
    pub backoff: Duration,
    /// A command prefix that runs the probe shell as its child and ends everything the
    /// shell left behind once it exits (`wavesh __reap --`, PROC-3); `None`: the probe's
    /// process group is ended, which misses what left it.
    pub reaper: Option<Vec<std::ffi::OsString>>,
}

static REAPER: std::sync::OnceLock<Vec<std::ffi::OsString>> = std::sync::OnceLock::new();

/// Sets the reaper of every probe configured from the process ([`ProbeConfig::from_process`]):
/// a command prefix, such as `[wavesh, "__reap", "--"]`, that runs the rest of its
/// arguments and ends their whole tree when that program exits. The first call wins.
pub fn set_reaper(prefix: Vec<std::ffi::OsString>) {
    let _ = REAPER.set(prefix);
}

impl ProbeConfig {
    /// The defaults of ENV-6 with this process's environment.
    pub fn from_process() -> ProbeConfig {
        ProbeConfig {
            shell: None,
            env: std::env::vars().collect(),
            attempt_timeout: Duration::from_secs(4),
            attempts: 2,
            backoff: Duration::from_millis(200),
            reaper: REAPER.get().cloned(),
        }
    }

    fn var(&self, key: &str) -> Option<&str> {
        self.env
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// How the probe went.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct ProbeReport {
    /// The shell that ran.
    pub shell: Option<PathBuf>,
    /// Attempts made.
    pub attempts: u32,
    /// Total time, in milliseconds.
    pub duration_ms: u64,
    /// `env -0` failed and lines were parsed.
    pub line_fallback: bool,
    /// Keys dropped because their values may span lines.
    pub dropped_multiline: Vec<String>,
    /// Every variable the shell reported (before adoption).
    pub vars: Vec<(String, String)>,
    /// Why the probe failed, if it did; `vars` may still hold a PATH (ENV-6).
    pub error: Option<String>,
}

fn executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        path.is_file() && rustix::fs::access(path, rustix::fs::Access::EXEC_OK).is_ok()
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

/// ENV-3: `$SHELL` (absolute, executable) → `/bin/zsh` if `~/.zshrc` exists →
/// `/bin/bash` if `~/.bashrc` exists → the first of `/bin/zsh`, `/bin/bash`, `/bin/sh`.
pub fn probe_shell(config: &ProbeConfig) -> Option<PathBuf> {
    if let Some(shell) = &config.shell {
        return Some(shell.clone());
    }
    if let Some(shell) = config.var("SHELL").map(PathBuf::from)
        && shell.is_absolute()
        && executable(&shell)
    {
        return Some(shell);
    }
    let home = config.var("HOME").map(PathBuf::from);
    for (rc, shell) in [(".zshrc", "/bin/zsh"), (".bashrc", "/bin/bash")] {
        if home.as_ref().is_some_and(|h| h.join(rc).exists()) && executable(Path::new(shell)) {
            return Some(PathBuf::from(shell));
        }
    }
    ["/bin/zsh", "/bin/bash", "/bin/sh"]
        .iter()
        .map(PathBuf::from)
        .find(|p| executable(p))
}

fn marker(tag: &str) -> String {
    let mut bytes = [0u8; 8];
    let _ = getrandom::fill(&mut bytes);
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("__WAVESH_ENV_{tag}_{hex}__")
}

/// Runs the probe with its budget and retries. Never fails: problems are in the report.
pub async fn probe(config: &ProbeConfig) -> ProbeReport {
    let started = Instant::now();
    let mut report = ProbeReport {
        shell: probe_shell(config),
        ..ProbeReport::default()
    };
    let Some(shell) = report.shell.clone() else {
        report.error = Some("no shell to probe".into());
        return report;
    };
    for attempt in 1..=config.attempts {
        report.attempts = attempt;
        match attempt_once(&shell, config).await {
            Ok(parsed) => {
                report.line_fallback = parsed.line_fallback;
                report.dropped_multiline = parsed.dropped_multiline;
                report.vars = parsed.vars;
                report.error = None;
                break;
            }
            Err((why, partial)) => {
                report.error = Some(why);
                // ENV-6: a PATH that could still be read is kept.
                if let Some(path) = partial.into_iter().find(|(k, _)| k == "PATH") {
                    report.vars = vec![path];
                }
                if attempt < config.attempts {
                    tokio::time::sleep(config.backoff).await;
                }
            }
        }
    }
    report.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    report
}

type AttemptError = (String, Vec<(String, String)>);

async fn attempt_once(shell: &Path, config: &ProbeConfig) -> Result<crate::Parsed, AttemptError> {
    let start = marker("START");
    let end = marker("END");
    // A login bash reads only the profile files. Terminals start non-login shells that
    // read ~/.bashrc, where installers (nvm, pyenv, ...) write; a user with a .bashrc but
    // no profile file would lose it, so it is read explicitly in that one case.
    let bashrc = if shell
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("bash"))
    {
        "if [ -f ~/.bashrc ] && [ ! -f ~/.bash_profile ] && [ ! -f ~/.bash_login ] && [ ! -f ~/.profile ]; then . ~/.bashrc; fi; "
    } else {
        ""
    };
    // ENV-8: Git Bash on Windows reports PATH alone, converted to native form.
    let script = if cfg!(windows) {
        format!("echo \"{start}\"; cygpath -pw \"$PATH\"; echo \"{end}\"")
    } else {
        format!("{bashrc}echo \"{start}\"; env -0 && echo \"{end}\" || env")
    };
    let mut command = match config.reaper.as_deref() {
        Some([reaper, prefix @ ..]) => {
            let mut command = tokio::process::Command::new(reaper);
            command.args(prefix).arg(shell);
            command
        }
        _ => tokio::process::Command::new(shell),
    };
    command
        .args(["-l", "-i", "-c", &script])
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    for key in PASSED {
        if let Some(value) = config.var(key) {
            command.env(key, value);
        }
    }
    for (key, value) in config.env.iter().filter(|(k, _)| k.starts_with("LC_")) {
        command.env(key, value);
    }
    command.env("SHELL", shell.as_os_str());
    for (key, value) in ANTI_NOISE {
        command.env(key, value);
    }
    detach_from_terminal(&mut command);
    let mut child = command.spawn().map_err(|error| {
        (
            format!("cannot start {}: {error}", shell.display()),
            Vec::new(),
        )
    })?;
    let pid = child.id();
    let mut stdout = child
        .stdout
        .take()
        .ok_or_else(|| ("no stdout".to_owned(), Vec::new()))?;
    let mut output = Vec::new();
    let read = tokio::time::timeout(config.attempt_timeout, stdout.read_to_end(&mut output)).await;
    let outcome = match read {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(error)) => Err(format!("reading the probe's output failed: {error}")),
        Err(_) => Err(format!(
            "the login shell did not finish within {:?}",
            config.attempt_timeout
        )),
    };
    // The shell and anything its rc files started run in their own session: end them all.
    kill_group(pid);
    let _ = child.wait().await;
    if cfg!(windows) {
        return match (
            outcome,
            crate::parse::parse_cygpath_path(&output, &start, &end),
        ) {
            (Ok(()), Some(path)) => Ok(crate::Parsed {
                vars: vec![("PATH".to_owned(), path)],
                complete: true,
                ..crate::Parsed::default()
            }),
            (Ok(()), None) => Err(("Git Bash printed no PATH".into(), Vec::new())),
            (Err(why), _) => Err((why, Vec::new())),
        };
    }
    let parsed = parse(&output, &start, &end);
    match (outcome, parsed) {
        (Ok(()), Some(parsed)) if parsed.complete || parsed.line_fallback => Ok(parsed),
        (Ok(()), _) => Err(("the probe printed no environment".into(), Vec::new())),
        (Err(why), parsed) => Err((why, parsed.map(|p| p.vars).unwrap_or_default())),
    }
}

/// Starts the probe in a new session: no controlling terminal, so an interactive rc file
/// cannot grab or wait on the user's terminal.
#[cfg(unix)]
fn detach_from_terminal(command: &mut tokio::process::Command) {
    #[expect(
        unsafe_code,
        reason = "pre_exec is the only way to call setsid in the child"
    )]
    // SAFETY: the closure runs in the forked child before exec and only calls setsid(2),
    // which is async-signal-safe and touches no memory of the parent.
    unsafe {
        command.pre_exec(|| {
            rustix::process::setsid()
                .map(|_| ())
                .map_err(std::io::Error::from)
        });
    }
}

#[cfg(not(unix))]
fn detach_from_terminal(_command: &mut tokio::process::Command) {}

#[cfg(unix)]
fn kill_group(pid: Option<u32>) {
    let Some(pid) = pid
        .and_then(|p| i32::try_from(p).ok())
        .and_then(rustix::process::Pid::from_raw)
    else {
        return;
    };
    let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
}

#[cfg(not(unix))]
fn kill_group(_pid: Option<u32>) {}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(env: &[(&str, &str)]) -> ProbeConfig {
        ProbeConfig {
            env: env
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            ..ProbeConfig::from_process()
        }
    }

    #[test]
    fn env_3_shell_choice() {
        assert_eq!(
            probe_shell(&config(&[("SHELL", "/bin/bash")])),
            Some(PathBuf::from("/bin/bash"))
        );
        // Relative or missing $SHELL is not used.
        let fallback = probe_shell(&config(&[("SHELL", "bash"), ("HOME", "/nonexistent")]));
        assert!(fallback.is_some_and(|p| p.is_absolute()));
        let home = std::env::temp_dir().join(format!("wavesh-env3-{}", std::process::id()));
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(home.join(".bashrc"), "").unwrap();
        let home_str = home.display().to_string();
        let chosen = probe_shell(&config(&[
            ("SHELL", "/nonexistent/zsh"),
            ("HOME", &home_str),
        ]));
        assert_eq!(
            chosen,
            Some(PathBuf::from("/bin/bash")),
            "~/.bashrc exists and no ~/.zshrc"
        );
        std::fs::remove_dir_all(&home).unwrap();
    }
}
