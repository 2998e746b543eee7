//! Starting a shell, behind one small interface.
//!
//! The lifecycle ([`crate::Executor`]) only needs "start this shell with these files and
//! tell me its pid, its group and its exit". Keeping that behind [`Spawner`] lets a
//! per-session supervisor sit between the host and the shell later without touching the
//! lifecycle.
//!
//! The command text never appears in argv or the environment: the shell is started as
//! `<shell> -c <fixed prelude>` with the command in a private, already unlinked file on
//! stdin. The prelude reads it, points stdin at /dev/null (EXEC-3) and `eval`s it. So
//! `pkill -f <part of the command>` inside a command cannot match the tool itself, and
//! commands of any size work (argv and environment strings are capped at 128 KiB each on
//! Linux). Passing the file as stdin rather than as a higher descriptor keeps spawning on
//! the `posix_spawn` fast path (no `pre_exec` hook, so no `fork` of a large host).

use std::ffi::OsString;
use std::fs::File;
use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::Stdio;

use crate::shell::{Shell, ShellKind};

/// How a process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// It exited with this code.
    Code(i32),
    /// It was ended by this signal.
    Signal(i32),
}

impl ExitStatus {
    /// The exit code as a shell reports it in `$?`: the code, or 128 + the signal.
    pub fn code(self) -> i32 {
        match self {
            ExitStatus::Code(code) => code,
            ExitStatus::Signal(signal) => 128 + signal,
        }
    }

    /// Whether it exited with 0.
    pub fn success(self) -> bool {
        self == ExitStatus::Code(0)
    }
}

impl From<std::process::ExitStatus> for ExitStatus {
    fn from(status: std::process::ExitStatus) -> Self {
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            if let Some(signal) = status.signal() {
                return ExitStatus::Signal(signal);
            }
        }
        ExitStatus::Code(status.code().unwrap_or(-1))
    }
}

/// Everything needed to start one shell.
#[derive(Debug)]
pub struct SpawnSpec {
    /// The shell to run.
    pub shell: Shell,
    /// The fixed prelude, passed as the `-c` script.
    pub script: String,
    /// The command text, opened for reading at offset 0; becomes the shell's stdin.
    pub command: File,
    /// The output file; becomes both stdout and stderr.
    pub output: File,
    /// The working directory.
    pub cwd: PathBuf,
    /// Environment changes on top of the host's: `Some` sets, `None` removes.
    pub env: Vec<(OsString, Option<OsString>)>,
    /// The sandbox the shell enters before it starts (SBX).
    pub sandbox: Option<crate::sandbox::ChildSandbox>,
    /// macOS: the Seatbelt profile the shell is started under (`sandbox-exec -p`).
    pub seatbelt: Option<String>,
    /// A shell started ahead of its command ([`Spawner::starts_ahead`]): the read end of
    /// the socket it waits on (one end of a Unix stream pair), descriptor 3 in the shell; its prelude reads one line there
    /// before it reads the command from stdin.
    pub go: Option<GoPipe>,
}

/// The read end of a started-ahead shell's socket ([`SpawnSpec::go`]); none on Windows.
#[cfg(unix)]
pub type GoPipe = std::os::fd::OwnedFd;
/// The read end of a started-ahead shell's socket ([`SpawnSpec::go`]); none on Windows.
#[cfg(not(unix))]
pub type GoPipe = std::convert::Infallible;

/// A started shell.
pub trait SpawnedChild: Send {
    /// The shell's process id.
    fn pid(&self) -> i32;
    /// Its process group id (equal to its pid: it leads its own group).
    fn pgid(&self) -> i32;
    /// Resolves when the shell itself exits; its leftover children may still run.
    fn wait(self: Box<Self>) -> Pin<Box<dyn Future<Output = io::Result<ExitStatus>> + Send>>;
}

/// A spawn in progress.
pub type SpawnFuture<'a> =
    Pin<Box<dyn Future<Output = io::Result<Box<dyn SpawnedChild>>> + Send + 'a>>;

/// Starts shells.
pub trait Spawner: Send + Sync {
    /// Starts the shell of `spec` in a new process group.
    fn spawn(&self, spec: SpawnSpec) -> io::Result<Box<dyn SpawnedChild>>;

    /// Starts the shell of `spec`, awaiting rather than blocking on anything beyond the
    /// spawn itself (a supervisor's answer). By default, [`Spawner::spawn`].
    fn spawn_async(&self, spec: SpawnSpec) -> SpawnFuture<'_> {
        Box::pin(std::future::ready(self.spawn(spec)))
    }

    /// Whether a sandboxed shell is started inside the process isolation the sandbox
    /// asks for ([`crate::sandbox::Support::process_isolation`]): a PID namespace with
    /// its own `/proc` and read-only mounts, set up by a process of its own (the
    /// supervisor's subreaper). A shell spawned directly cannot have it.
    fn isolates_processes(&self) -> bool {
        false
    }

    /// Whether a shell can be started ahead of its command, waiting on a socket given as
    /// [`SpawnSpec::go`] (the supervisor hands it over as descriptor 3).
    fn starts_ahead(&self) -> bool {
        false
    }
}

/// Spawns the shell directly as a child of this process, leading a new process group.
#[derive(Debug, Default, Clone, Copy)]
pub struct DirectSpawner;

struct DirectChild {
    child: tokio::process::Child,
    pid: i32,
}

impl SpawnedChild for DirectChild {
    fn pid(&self) -> i32 {
        self.pid
    }

    fn pgid(&self) -> i32 {
        self.pid
    }

    fn wait(mut self: Box<Self>) -> Pin<Box<dyn Future<Output = io::Result<ExitStatus>> + Send>> {
        Box::pin(async move { self.child.wait().await.map(ExitStatus::from) })
    }
}

/// Marks every descriptor from 3 up close-on-exec, so that nothing the host had open
/// reaches the command (PROC-3). Async-signal-safe: for use between fork and exec.
/// Marked rather than closed, so descriptors still needed before exec keep working.
#[cfg(unix)]
#[expect(
    unsafe_code,
    reason = "close_range(2) or fcntl(2) on the process's inherited descriptors"
)]
pub(crate) fn mark_inherited_descriptors_cloexec() {
    #[cfg(target_os = "linux")]
    // SAFETY: close_range with CLOSE_RANGE_CLOEXEC changes descriptor flags only.
    unsafe {
        if libc::syscall(
            libc::SYS_close_range,
            3 as libc::c_uint,
            libc::c_uint::MAX,
            libc::CLOSE_RANGE_CLOEXEC as libc::c_uint,
        ) == 0
        {
            return;
        }
    }
    // Before Linux 5.11, and elsewhere: one by one.
    // SAFETY: descriptor flag changes only; invalid descriptors fail harmlessly.
    unsafe {
        let max = libc::sysconf(libc::_SC_OPEN_MAX).clamp(256, 65536) as i32;
        for fd in 3..max {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 {
                libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
        }
    }
}

impl Spawner for DirectSpawner {
    fn spawn(&self, spec: SpawnSpec) -> io::Result<Box<dyn SpawnedChild>> {
        if spec.go.is_some() {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "a shell spawned directly cannot be started ahead of its command",
            ));
        }
        let stderr = spec.output.try_clone()?;
        let mut command = match &spec.seatbelt {
            // macOS: the shell runs under the profile (SBX-5).
            Some(profile) => {
                let mut command =
                    tokio::process::Command::new(crate::sandbox::seatbelt::SANDBOX_EXEC);
                command.arg("-p").arg(profile).arg(spec.shell.path());
                command
            }
            None => tokio::process::Command::new(spec.shell.path()),
        };
        command
            .args(shell_args(spec.shell.kind()))
            .arg(&spec.script)
            .current_dir(&spec.cwd)
            .stdin(Stdio::from(spec.command))
            .stdout(Stdio::from(spec.output))
            .stderr(Stdio::from(stderr))
            // Dropping the handle must not kill the command: a backgrounded task outlives
            // the call that started it.
            .kill_on_drop(false);
        for (key, value) in &spec.env {
            match value {
                Some(value) => command.env(key, value),
                None => command.env_remove(key),
            };
        }
        // PROC-3: whatever the host's or the overrides' environment holds.
        for (key, _) in std::env::vars_os().chain(
            spec.env
                .iter()
                .filter_map(|(key, value)| Some((key.clone(), value.clone()?))),
        ) {
            if crate::env_vars::stripped_from_commands(key.as_encoded_bytes()) {
                command.env_remove(key);
            }
        }
        // PROC-3: a new session (no controlling terminal, its own process group) and no
        // descriptor but 0-2. This leaves posix_spawn for fork; the supervised spawner,
        // the default on Linux, forks anyway.
        #[cfg(unix)]
        {
            #[expect(
                unsafe_code,
                reason = "pre_exec runs setsid(2) and terminal ioctls in the forked child"
            )]
            // SAFETY: setsid and descriptor flag changes: async-signal-safe system calls.
            unsafe {
                command.pre_exec(|| {
                    if libc::setsid() < 0 {
                        return Err(io::Error::last_os_error());
                    }
                    // PTY-1: a tty command's terminal becomes its controlling terminal.
                    if libc::isatty(1) == 1 && libc::ioctl(1, libc::TIOCSCTTY as _, 0) != 0 {
                        return Err(io::Error::last_os_error());
                    }
                    mark_inherited_descriptors_cloexec();
                    Ok(())
                });
            }
        }
        #[cfg(target_os = "linux")]
        if let Some(sandbox) = spec.sandbox {
            // Sandboxed runs leave the posix_spawn fast path: the sandbox is entered between
            // fork and exec.
            #[expect(
                unsafe_code,
                reason = "pre_exec enters the sandbox with system calls only"
            )]
            // SAFETY: `enforce` makes system calls only, no allocation: async-signal-safe.
            unsafe {
                command.pre_exec(move || sandbox.enforce().map_err(io::Error::from_raw_os_error));
            }
        }
        let child = command.spawn()?;
        let pid = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .ok_or_else(|| io::Error::other("the spawned shell has no process id"))?;
        Ok(Box::new(DirectChild { child, pid }))
    }
}

/// The prelude of a tty command (PTY-1): stdin becomes the terminal (the shell's stdout,
/// opened for reading and writing) instead of /dev/null.
pub fn on_terminal(prelude: String) -> String {
    prelude.replacen("exec 0</dev/null; ", "exec 0<&1; ", 1)
}

/// The prelude of a shell started ahead of its command ([`SpawnSpec::go`]): it first
/// waits for one line on descriptor 3, and exits without running anything when the socket
/// closes instead (the start ahead was discarded, or the host is gone). Then it closes
/// the socket, reads the command from stdin as every prelude does, and counts `SECONDS`
/// from there, not from the shell's start.
pub fn started_ahead(prelude: String) -> String {
    let prelude = prelude.replacen("exec 0</dev/null; ", "exec 0</dev/null; SECONDS=0; ", 1);
    format!("IFS= read -r -u 3 __wavesh_go || exit 0; exec 3<&-; unset __wavesh_go; {prelude}")
}

/// Arguments before the script. zsh gets `-f` (NO_RCS) so the user's `~/.zshenv` does
/// not run: rc files must not change a command's behaviour (EXEC-2). bash `-c` reads no
/// rc file (and `BASH_ENV` is removed from the environment).
pub fn shell_args(kind: ShellKind) -> &'static [&'static str] {
    match kind {
        ShellKind::Bash => &["-c"],
        ShellKind::Zsh => &["-f", "-c"],
    }
}

/// The fixed `-c` script: read the command from stdin, point stdin at /dev/null, run it,
/// and, when `cwd_file` is given, write the final directory there, whatever the status:
/// the host takes it as the next directory only after success (CWD-1), and judges the
/// paths of error lines from it either way.
///
/// The cwd file is written only if it still exists: when a command moves to the
/// background its cwd file is removed, and the shell must not create it again later.
pub fn prelude(kind: ShellKind, cwd_file: Option<&Path>, search: Option<&Path>) -> String {
    let read = match kind {
        // bash reads a regular file in blocks here, so even a 20 MB command is quick.
        ShellKind::Bash => "IFS= read -r -d '' __wavesh_command",
        // zsh's `read` takes one byte per system call; `$(<&0)` reads in blocks.
        ShellKind::Zsh => "__wavesh_command=$(<&0)",
    };
    // PROC-4: everything up to the `eval` stands on line 1, so bash numbers the
    // command's own lines from 1 in its errors (`bash: line 1: nosuchcmd: ...`), not from
    // the prelude's length. zsh already numbers eval'd lines on their own.
    let mut script = format!("{read}; exec 0</dev/null; ");
    if let Some(binary) = search {
        script.push_str(&search_functions(binary));
    }
    script.push_str("eval \"$__wavesh_command\"\n");
    if let Some(cwd_file) = cwd_file {
        // Git Bash takes forward slashes and reports the directory natively with -W
        // (SHELL-5); elsewhere the physical path (-P).
        let (path, pwd) = if cfg!(windows) {
            (
                crate::winpath::to_git_bash(&cwd_file.to_string_lossy()),
                "-W",
            )
        } else {
            (cwd_file.to_string_lossy().into_owned(), "-P")
        };
        let quoted = single_quote(&path);
        script.push_str(&format!(
            "__wavesh_status=$?\n\
             if builtin test -f {quoted}; then builtin pwd {pwd} >| {quoted} 2>/dev/null; fi\n\
             exit \"$__wavesh_status\"\n"
        ));
    }
    script
}

/// The shell functions that make `grep` and `find` wavesh's built-ins (SEARCH-4), and `rg`
/// too where the system has no ripgrep (SEARCH-3: a user's own `rg` is never shadowed).
///
/// A function, not a PATH entry: `xargs grep`, `env grep`, `find -exec grep` and a new
/// `bash -c` still run the system grep. If the binary is gone the system grep runs
/// (SEARCH-7); a binary the kernel cannot execute (126, 127) hands over too, before it
/// could read any input. The call sits on the left of `||` so `set -e` treats it as the
/// plain command it replaces, and the function returns grep's own status (SEARCH-6).
fn search_functions(binary: &Path) -> String {
    let binary = if cfg!(windows) {
        crate::winpath::to_git_bash(&binary.to_string_lossy())
    } else {
        binary.to_string_lossy().into_owned()
    };
    let quoted = single_quote(&binary);
    let mut script = shadow("grep", &quoted);
    // Git Bash's own GNU find is used as is on Windows (SEARCH-2).
    if !cfg!(windows) {
        script.push_str(&shadow("find", &quoted));
    }
    script.push_str(&format!(
        "if ! builtin command -v rg >/dev/null 2>&1; then \
         rg() {{ if builtin test -x {quoted}; then {quoted} rg \"$@\"; else command rg \"$@\"; fi; }}; \
         fi; "
    ));
    script
}

/// A function `name` running `binary name ARGS`, or the system `name` when the binary is
/// gone or cannot be executed (126, 127: before it could read any input).
fn shadow(name: &str, binary: &str) -> String {
    // One line (see `prelude`).
    format!(
        "{name}() {{ \
         if builtin test -x {binary}; then \
         {binary} {name} \"$@\" || {{ \
         builtin local __wavesh_status=$?; \
         if builtin test \"$__wavesh_status\" -eq 126 || builtin test \"$__wavesh_status\" -eq 127; then command {name} \"$@\"; else return \"$__wavesh_status\"; fi; \
         }}; \
         else command {name} \"$@\"; \
         fi; \
         }}; "
    )
}

/// Quotes `text` for bash and zsh: one single-quoted word.
pub fn single_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_quote_escapes_quotes() {
        assert_eq!(single_quote("a'b"), r"'a'\''b'");
    }

    #[test]
    fn exec_2_prelude_never_holds_the_command() {
        let script = prelude(ShellKind::Bash, Some(Path::new("/tmp/x/cwd-1")), None);
        assert!(!script.contains("grep()"));
        assert!(script.contains("eval \"$__wavesh_command\""));
        assert!(script.contains("'/tmp/x/cwd-1'"));
        assert_eq!(shell_args(ShellKind::Bash), ["-c"]);
        assert!(!shell_args(ShellKind::Zsh).contains(&"-l"));
    }

    /// A search binary that disappeared leaves grep to the system, silently (SEARCH-7).
    #[cfg(unix)]
    #[test]
    fn search_7_missing_search_binary_runs_the_system_grep() {
        for kind in [ShellKind::Bash, ShellKind::Zsh] {
            let shell = match kind {
                ShellKind::Bash => "bash",
                ShellKind::Zsh => "zsh",
            };
            let script = format!(
                "{}printf 'a\\nb\\n' | grep b; echo \"rc=$?\"; grep -q zzz /dev/null; echo \"rc=$?\"",
                search_functions(Path::new("/nonexistent/wavesh"))
            );
            let Ok(output) = std::process::Command::new(shell)
                .args(shell_args(kind))
                .arg(&script)
                .output()
            else {
                // zsh is optional on a developer machine; CI installs it.
                continue;
            };
            assert_eq!(
                String::from_utf8_lossy(&output.stdout),
                "b\nrc=0\nrc=1\n",
                "{shell}"
            );
            assert!(
                output.stderr.is_empty(),
                "{shell}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
    }

    #[test]
    fn exit_status_codes() {
        assert_eq!(ExitStatus::Code(3).code(), 3);
        assert_eq!(ExitStatus::Signal(9).code(), 137);
        assert!(ExitStatus::Code(0).success());
        assert!(!ExitStatus::Signal(15).success());
    }
}
