//! A one-shot subreaper for programs whose whole tree must end with them: the login
//! probe (PROC-3). `wavesh __reap -- PROGRAM ARGS...` runs PROGRAM as its child with the
//! same standard streams, waits for it, then ends everything PROGRAM left behind — daemons
//! started by an rc file (`eval $(ssh-agent)`, `setsid -f ...`) included, since orphans of
//! the tree are reparented to this process — and exits with PROGRAM's status.
//!
//! Every signal goes to this process's own unreaped children (PROC-1): nothing else can
//! hold their pids. Their children are adopted in turn as they die.

use std::ffi::OsString;
use std::time::Duration;

/// The hidden subcommand.
pub const REAPER_ARG: &str = "__reap";

/// Runs `program` with `args` under a subreaper; returns the exit code to exit with.
#[expect(unsafe_code, reason = "prctl(2) to become the tree's subreaper")]
pub fn run_reaper(program: &OsString, args: &[OsString]) -> i32 {
    // SAFETY: a process attribute of this process.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    let status = std::process::Command::new(program).args(args).status();
    let code = match status {
        Ok(status) => {
            use std::os::unix::process::ExitStatusExt;
            status
                .code()
                .or_else(|| status.signal().map(|signal| 128 + signal))
                .unwrap_or(1)
        }
        Err(error) => {
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "wavesh {REAPER_ARG}: cannot run {}: {error}",
                program.to_string_lossy()
            );
            127
        }
    };
    end_children();
    code
}

/// SIGKILLs and reaps this process's children until it has none (a fork bomb's new
/// children are caught by the next round).
#[expect(
    unsafe_code,
    reason = "kill(2) and waitpid(2) of this process's own adopted children"
)]
fn end_children() {
    let me = std::process::id() as i32;
    loop {
        let children: Vec<i32> = crate::proc_stat::all()
            .map(|all| {
                all.filter(|(_, stat)| stat.ppid == me)
                    .map(|(pid, _)| pid)
                    .collect()
            })
            .unwrap_or_default();
        for pid in &children {
            // SAFETY: our own unreaped child.
            unsafe { libc::kill(*pid, libc::SIGKILL) };
        }
        loop {
            let mut status = 0;
            // SAFETY: reaping any exited child of ours, without blocking.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            if pid < 0 {
                // No child left at all.
                return;
            }
            if pid == 0 {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}
