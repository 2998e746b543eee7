//! The observer: runs one command under `strace -f` in the throwaway workspace and
//! lists what it did that a read-only command must not do (RO-14).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use wavesh_policy::secrets::secret_match;

/// System calls watched. Clock, host-name and mount changes are also refused by
/// injection, so that a wrong approval run as root cannot change the machine.
const TRACE: &str = "trace=execve,execveat,open,openat,openat2,creat,rename,renameat,renameat2,unlink,unlinkat,mkdir,mkdirat,rmdir,link,linkat,symlink,symlinkat,truncate,connect,sendto,sendmsg,sendmmsg,bind,clock_settime,settimeofday,adjtimex,clock_adjtime,sethostname,setdomainname,mount,umount2";
const INJECT: &str = "inject=clock_settime,settimeofday,adjtimex,clock_adjtime,sethostname,setdomainname,mount,umount2:error=EPERM";

/// Local name-service sockets glibc tries for user and host names (`ls -l`, `id`):
/// not network. Anything else on a socket is an effect.
const NAME_SERVICE_SOCKETS: &[&str] = &[
    "/var/run/nscd/socket",
    "/run/nscd/socket",
    "/run/systemd/userdb/",
];

/// What one run did.
#[derive(Debug, Default)]
pub struct Observed {
    /// Effects a read-only command must not have.
    pub effects: Vec<String>,
    /// It was still running at the timeout (killed; not an effect by itself).
    pub timed_out: bool,
}

/// Whether strace can trace here; `Err` says why not.
pub fn strace_works() -> Result<(), String> {
    let output = Command::new("strace")
        .args(["-f", "-qq", "-o", "/dev/null", "true"])
        .output()
        .map_err(|e| format!("strace cannot be run: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "strace cannot trace here: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

/// Runs `command` with bash in `work`, HOME at `home`, and reports its effects.
/// `allowed` are the program names it may execute.
pub fn run(command: &str, work: &Path, home: &Path, log: &Path, allowed: &[String]) -> Observed {
    let _ = std::fs::remove_file(log);
    let mut child = match Command::new("strace")
        .args([
            "-f", "-qq", "-y", "-s", "512", "-e", TRACE, "-e", INJECT, "-o",
        ])
        .arg(log)
        .args(["bash", "--noprofile", "--norc", "-c", command])
        .current_dir(work)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("LANG", "C")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            return Observed {
                effects: vec![format!("strace did not start: {e}")],
                timed_out: false,
            };
        }
    };
    let start = Instant::now();
    let mut timed_out = false;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() > Duration::from_secs(5) => {
                // The whole group: strace and everything it traces (started here).
                let pid = i32::try_from(child.id()).unwrap_or(0);
                if pid > 0 {
                    let _ = Command::new("kill")
                        .args(["-KILL", "--", &format!("-{pid}")])
                        .status();
                }
                let _ = child.wait();
                timed_out = true;
                break;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(_) => break,
        }
    }
    let text = std::fs::read_to_string(log).unwrap_or_default();
    Observed {
        effects: effects(&text, home, allowed),
        timed_out,
    }
}

use std::os::unix::process::CommandExt as _;

/// The one write allowed, and only to git: `git status` and `git diff` refresh the
/// index, git's stat cache, through `.git/index.lock` renamed over `.git/index`. In a
/// sealed run that write fails and git carries on; a hook it could fire
/// (`post-index-change`) makes the git guard refuse the repository. Nothing else of git
/// may write.
fn git_index_refresh(program: Option<&String>, text: &str) -> bool {
    if program.is_none_or(|p| p != "git") {
        return false;
    }
    if text.ends_with("/.git/index.lock") {
        return true;
    }
    // Every quoted path of the call (create, rename over, or roll back the lock).
    let paths: Vec<&str> = text.split('"').skip(1).step_by(2).collect();
    !paths.is_empty()
        && paths
            .iter()
            .all(|p| p.ends_with("/.git/index.lock") || p.ends_with("/.git/index"))
}

/// GNU sort spills to a private scratch file in the temporary directory (`/tmp/sortXXXXXX`,
/// created exclusively and unlinked) when merging standard input or sorting more than
/// its buffer holds; nothing of it remains. Allowed to `sort` only, for that name.
fn sort_scratch(program: Option<&String>, path: &str) -> bool {
    program.is_some_and(|p| p == "sort")
        && path
            .strip_prefix("/tmp/sort")
            .is_some_and(|rest| rest.len() == 6 && rest.chars().all(|c| c.is_ascii_alphanumeric()))
}

/// procps-ng 4 opens every process's `/proc/PID/environ` for any listing, and prints
/// it only for the spellings the classifier refuses (`e`, `-E`, environment formats).
/// This read alone is allowed, to `ps` only; a sealed run denies it and ps carries on.
fn ps_environ(program: Option<&String>, path: &str, writes: bool) -> bool {
    !writes
        && program.is_some_and(|p| p == "ps")
        && path
            .strip_prefix("/proc/")
            .and_then(|rest| rest.strip_suffix("/environ"))
            .is_some_and(|pid| pid.chars().all(|c| c.is_ascii_digit()))
}

/// The effects in a strace log.
pub fn effects(log: &str, home: &Path, allowed: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut pending: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    // The program each process runs (after its last successful execve).
    let mut programs: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    for raw in log.lines() {
        // "PID syscall(args) = result"; with -f a call may be split into
        // "PID call(args <unfinished ...>" and "PID <... call resumed>rest) = result".
        let (pid, body) = raw.split_once(' ').unwrap_or(("", raw));
        let body = body.trim_start();
        if let Some(head) = body.strip_suffix("<unfinished ...>") {
            pending.insert(pid.to_owned(), head.to_owned());
            continue;
        }
        let joined;
        let rest = if body.starts_with("<...") {
            let Some((_, tail)) = body.split_once("resumed>") else {
                continue;
            };
            let Some(head) = pending.remove(pid) else {
                continue;
            };
            joined = format!("{head}{tail}");
            joined.as_str()
        } else {
            body
        };
        let Some((call, _)) = rest.split_once('(') else {
            continue;
        };
        let result = rest.rsplit_once(" = ").map_or("", |(_, r)| r);
        let ok = !result.starts_with('-') && !result.is_empty() && !result.starts_with('?');
        let first_string = rest.split('"').nth(1).unwrap_or("");
        match call {
            "execve" | "execveat" if ok => {
                let program = Path::new(first_string)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                programs.insert(pid.to_owned(), program.clone());
                if !allowed.contains(&program) {
                    out.push(format!("executes {first_string}"));
                }
            }
            "open" | "openat" | "openat2" | "creat" if ok => {
                let writes = call == "creat"
                    || ["O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND"]
                        .iter()
                        .any(|f| rest.contains(f));
                // -y decodes the returned descriptor with its resolved path: `= 3</abs/path>`.
                let resolved = result
                    .split_once('<')
                    .and_then(|(_, p)| p.strip_suffix('>'))
                    .unwrap_or(first_string);
                if writes
                    && !git_index_refresh(programs.get(pid), resolved)
                    && !sort_scratch(programs.get(pid), resolved)
                    && resolved != "/dev/null"
                    && !resolved.starts_with("/dev/pts")
                    && resolved != "/dev/tty"
                {
                    out.push(format!("opens {resolved} for writing"));
                }
                if secret_match(Path::new(resolved), home).is_some()
                    && !ps_environ(programs.get(pid), resolved, writes)
                {
                    out.push(format!("opens the secret {resolved}"));
                }
            }
            "rename" | "renameat" | "renameat2" | "unlink" | "unlinkat" | "mkdir" | "mkdirat"
            | "rmdir" | "link" | "linkat" | "symlink" | "symlinkat" | "truncate"
                if ok
                    && !git_index_refresh(programs.get(pid), rest)
                    && !(call.starts_with("unlink")
                        && sort_scratch(programs.get(pid), first_string)) =>
            {
                out.push(format!("{call} {first_string}"));
            }
            "connect" | "sendto" | "sendmsg" | "sendmmsg" | "bind"
                if !NAME_SERVICE_SOCKETS.iter().any(|s| rest.contains(s)) =>
            {
                out.push(format!("uses a socket: {}", wavesh_parse::shorten(rest)));
            }
            "clock_settime" | "settimeofday" | "adjtimex" | "clock_adjtime" | "sethostname"
            | "setdomainname" | "mount" | "umount2"
                // adjtimex with modes 0 only reads the clock state.
                if !(call == "adjtimex" && rest.contains("modes=0")) =>
            {
                out.push(format!("calls {call}"));
            }
            _ => {}
        }
    }
    out.sort();
    out.dedup();
    out
}
