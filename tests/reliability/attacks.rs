//! Commands that attack what supervises them (PROC-1..4): each test runs the attack and
//! checks the promise it aimed at. Every process a test starts carries a marker and is
//! ended by the test; strangers are the test's own processes.

use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use wavesh_tool::{BashInput, CallContext, TaskStopInput};

use crate::util::{Workspace, digit_marker, live_pids_with, wait_until};

/// Whether process `pid` exists and is not a zombie.
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let close = stat.rfind(')')?;
            stat[close + 1..]
                .split_whitespace()
                .next()
                .map(str::to_owned)
        })
        .is_some_and(|state| state != "Z" && state != "X")
}

/// Starts a stranger — a process group leader unrelated to wavesh — at pid `pid`, by
/// setting the kernel's last pid just below it (root only). `None` when it could not be
/// placed there (not root, or another process took the pid first).
fn stranger_at(pid: i32) -> Option<std::process::Child> {
    for _ in 0..20 {
        if std::fs::write("/proc/sys/kernel/ns_last_pid", (pid - 1).to_string()).is_err() {
            return None;
        }
        let mut command = Command::new("sleep");
        command.arg("600").stdin(Stdio::null());
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command.spawn().ok()?;
        if child.id() as i32 == pid {
            return Some(child);
        }
        let _ = child.kill();
        let _ = child.wait();
    }
    None
}

/// F1 (PROC-1): the command's shell exits and frees its pid; an unrelated process group
/// then gets that pid as its leader. Ending the session ends the command's leftover and
/// nothing of the stranger.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proc_1_a_reused_shell_pid_never_hits_a_stranger() {
    let ws = Workspace::new();
    for (path, session) in crate::both_paths(&ws.root, &ws.private) {
        println!("path: {path}");
        reuse_the_shell_pid(session).await;
    }
}

async fn reuse_the_shell_pid(session: wavesh_tool::Session) {
    let marker = digit_marker();
    let result = session
        .bash(
            BashInput::new(format!("setsid -f sleep 960.{marker}; echo $$")),
            &CallContext::default(),
        )
        .await
        .unwrap();
    let shell: i32 = result.text.trim().parse().expect("the shell's pid");
    assert!(
        wait_until(Duration::from_secs(5), || !alive(shell)),
        "the shell {shell} never exited"
    );
    let Some(mut stranger) = stranger_at(shell) else {
        session.shutdown().await;
        if wavesh_testkit::is_root() {
            // Root, and still another process took the pid each of 20 times.
            panic!("could not place an unrelated group at the freed pid {shell} in 20 tries");
        }
        wavesh_testkit::lacking_in_this_mode(
            "root, to place a stranger at a freed pid (/proc/sys/kernel/ns_last_pid)",
            "run the tests as root",
        );
        return;
    };
    // `setsid -f` returns before its child has exec'd sleep.
    assert!(
        wait_until(Duration::from_secs(5), || live_pids_with(&format!(
            ".{marker}"
        ))
        .len()
            == 1),
        "the leftover never ran"
    );
    session.shutdown().await;
    crate::expect_gone(&marker, Duration::from_secs(3), "the session ended");
    let hit = stranger.try_wait().unwrap();
    let _ = stranger.kill();
    let _ = stranger.wait();
    assert_eq!(
        hit, None,
        "the stranger at the reused pid {shell} was signalled"
    );
}

/// F3 (PROC-2): the command stops its own subreaper. The call still returns with the
/// command's own result, and the next call works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proc_2_stopping_the_subreaper_hangs_nothing() {
    let ws = Workspace::new();
    for (path, session) in crate::both_paths(&ws.root, &ws.private) {
        println!("path: {path}");
        stop_the_supervisor(session).await;
    }
}

async fn stop_the_supervisor(session: wavesh_tool::Session) {
    let mut input = BashInput::new("sleep 0.01; kill -STOP $PPID; sleep 1; echo survived");
    input.timeout_ms = Some(2000);
    let result = tokio::time::timeout(
        Duration::from_secs(15),
        session.bash(input, &CallContext::default()),
    )
    .await
    .expect("the call hung after its subreaper was stopped")
    .unwrap();
    assert_eq!(result.text, "survived");
    assert_eq!(result.exit_code, Some(0));
    // The helper itself: the subreaper's parent.
    let stopped = tokio::time::timeout(
        Duration::from_secs(15),
        session.bash(
            BashInput::new("kill -STOP $(ps -o ppid= -p $PPID); sleep 0.5; echo helper"),
            &CallContext::default(),
        ),
    )
    .await
    .expect("the call hung after the helper was stopped")
    .unwrap();
    assert_eq!(
        wavesh_testkit::without_documented_note(&stopped.text),
        "helper"
    );
    let started = Instant::now();
    let next = session
        .bash(BashInput::new("echo next"), &CallContext::default())
        .await
        .unwrap();
    assert_eq!(wavesh_testkit::without_documented_note(&next.text), "next");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the next call took {:?}",
        started.elapsed()
    );
    let shutdown = Instant::now();
    session.shutdown().await;
    assert!(
        shutdown.elapsed() < Duration::from_secs(3),
        "the session end took {:?}",
        shutdown.elapsed()
    );
}

/// F4 (PROC-2): the command kills its own subreaper after starting an escapee. The
/// escapee is ended at once (the helper adopts and ends what a dead subreaper left),
/// without waiting for TaskStop or the session's end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proc_2_killing_the_subreaper_frees_no_escapee() {
    let ws = Workspace::new();
    for (path, session) in crate::both_paths(&ws.root, &ws.private) {
        println!("path: {path}");
        kill_the_subreaper(session).await;
    }
}

async fn kill_the_subreaper(session: wavesh_tool::Session) {
    let marker = digit_marker();
    crate::run_killing_its_subreaper(
        &session,
        format!(
            "setsid -f sleep 961.{marker}; (setsid sleep 962.{marker} &); sleep 0.3; kill -9 $PPID; sleep 5"
        ),
    )
    .await;
    crate::expect_gone(&marker, Duration::from_secs(2), "the subreaper was killed");
    session.shutdown().await;
}

/// Duplicates `file`'s descriptor without close-on-exec, as a careless host might hold
/// one: a number >= 3 every child would inherit.
fn inheritable(file: &std::fs::File) -> OwnedFd {
    #[expect(unsafe_code, reason = "dup(2) into a descriptor owned here")]
    // SAFETY: dup returns a new descriptor we own, or -1.
    let fd = unsafe { libc::dup(file.as_raw_fd()) };
    assert!(fd >= 3, "dup failed");
    #[expect(
        unsafe_code,
        reason = "taking ownership of the descriptor dup(2) returned"
    )]
    // SAFETY: a descriptor just returned to us.
    unsafe {
        OwnedFd::from_raw_fd(fd)
    }
}

/// F7 (PROC-3): a descriptor the host holds open without close-on-exec reaches no
/// command, supervised or not: writing to it fails and the file stays as it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proc_3_no_descriptor_of_the_host_reaches_a_command() {
    let ws = Workspace::new();
    let target = ws.root.join("host-file");
    let file = std::fs::File::create(&target).unwrap();
    let fd = inheritable(&file);
    let n = fd.as_raw_fd();
    let supervised = crate::supervised_session(&ws.root, &ws.private);
    let direct = wavesh_tool::Session::builder(&ws.root)
        .private_base(&ws.private)
        .no_login_env()
        .sandbox_level(wavesh_exec::sandbox::Level::Off)
        .no_claude_settings()
        .build()
        .unwrap();
    for (name, session) in [("supervised", &supervised), ("direct", &direct)] {
        let result = session
            .bash(
                BashInput::new(format!(
                    "echo leaked >&{n}; ls /proc/self/fd | sort -n | tr '\\n' ' '"
                )),
                &CallContext::default(),
            )
            .await
            .unwrap();
        assert!(
            result.text.contains("Bad file descriptor"),
            "{name}: {}",
            result.text
        );
        let listed = result.text.lines().last().unwrap_or_default().to_owned();
        let numbers: Vec<i32> = listed
            .split_whitespace()
            .filter_map(|n| n.parse().ok())
            .collect();
        // ls itself has one descriptor open: the directory it lists.
        assert!(
            numbers.iter().filter(|n| **n >= 3).count() <= 1,
            "{name}: open descriptors {listed}"
        );
    }
    assert_eq!(
        std::fs::read(&target).unwrap(),
        b"",
        "the host's file was written"
    );
    drop(fd);
    supervised.shutdown().await;
    direct.shutdown().await;
}

/// F8 (PROC-3): the host's environment cannot change how the command's shell behaves:
/// exported functions, shell options, `BASH_ENV`/`ENV` files, `PS4`, `PROMPT_COMMAND`,
/// `CDPATH` and `GLOBIGNORE` are all removed.
#[test]
fn proc_3_the_host_environment_cannot_change_the_shell() {
    let ws = Workspace::new();
    let pwned = ws.root.join("pwned");
    let rc = ws.root.join("rc.sh");
    std::fs::write(&rc, format!("touch {}\n", pwned.display())).unwrap();
    std::fs::create_dir(ws.root.join("sub")).unwrap();
    std::fs::create_dir_all(ws.root.join("elsewhere/sub")).unwrap();
    std::fs::write(ws.root.join("a.txt"), "").unwrap();
    let mut cmd = ws.wavesh();
    cmd.env("BASH_FUNC_ls%%", "() { echo hijacked-ls; }")
        .env("BASH_FUNC_cd%%", "() { echo hijacked-cd; }")
        .env("SHELLOPTS", "xtrace:noglob")
        .env("BASHOPTS", "nullglob:failglob")
        .env("BASH_ENV", &rc)
        .env("ENV", &rc)
        .env("PS4", format!("$(touch {})+ ", pwned.display()))
        .env("PROMPT_COMMAND", format!("touch {}", pwned.display()))
        .env("CDPATH", ws.root.join("elsewhere"))
        .env("GLOBIGNORE", "*.txt")
        .args([
            "run",
            "--",
            "ls -d /; cd sub && pwd -P; cd ..; echo *.txt; echo \"[$SHELLOPTS]\"",
        ]);
    let run = crate::util::Run::of(cmd);
    let text = run.stdout();
    assert!(!text.contains("hijacked"), "{run}");
    assert!(text.contains("\n/\n") || text.starts_with("/\n"), "{run}");
    let sub = std::fs::canonicalize(ws.root.join("sub")).unwrap();
    assert!(
        text.contains(&format!("{}\n", sub.display())),
        "CDPATH applied: {run}"
    );
    assert!(
        text.contains("a.txt"),
        "GLOBIGNORE or noglob applied: {run}"
    );
    assert!(!text.contains("xtrace"), "SHELLOPTS applied: {run}");
    assert!(!text.contains("+ ls"), "xtrace on: {run}");
    assert!(
        !pwned.exists(),
        "a file of the host's environment ran: {run}"
    );
}

/// Opens a pty pair: (master, slave).
fn openpty() -> (OwnedFd, OwnedFd) {
    let (mut master, mut slave) = (0, 0);
    #[expect(
        unsafe_code,
        reason = "openpty(3) writes two descriptors into places on the stack"
    )]
    // SAFETY: openpty writes two descriptors into the given places.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty failed");
    #[expect(
        unsafe_code,
        reason = "taking ownership of the descriptors openpty(3) just returned"
    )]
    // SAFETY: both descriptors were just returned to us.
    unsafe {
        (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave))
    }
}

/// Runs `command` with a pty of its own as controlling terminal and standard streams,
/// and returns everything written to the terminal.
fn under_pty(mut command: Command) -> String {
    let (master, slave) = openpty();
    let slave_fd = slave.as_raw_fd();
    command
        .stdin(Stdio::from(slave.try_clone().unwrap()))
        .stdout(Stdio::from(slave.try_clone().unwrap()))
        .stderr(Stdio::from(slave));
    #[expect(
        unsafe_code,
        reason = "pre_exec runs setsid(2) and ioctl(2) in the forked child"
    )]
    // SAFETY: setsid and ioctl between fork and exec: async-signal-safe system calls.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut command, move || {
            libc::setsid();
            if libc::ioctl(slave_fd, libc::TIOCSCTTY, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = command.spawn().unwrap();
    drop(command);
    let status = child.wait().unwrap();
    let mut out = Vec::new();
    let mut master = std::fs::File::from(master);
    // The slave side is closed: reading drains what is buffered, then fails with EIO.
    let mut buf = [0u8; 4096];
    while let Ok(n) = master.read(&mut buf) {
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
    }
    assert!(status.code().is_some(), "{status:?}");
    String::from_utf8_lossy(&out).into_owned()
}

/// F2 (PROC-3): under a terminal, a command has no controlling terminal of its own, so it
/// cannot open `/dev/tty` to push keystrokes into the user's shell with TIOCSTI. The same
/// probe run directly under the pty does reach the terminal, so the test can fail.
#[test]
fn proc_3_a_command_cannot_reach_the_users_terminal() {
    let ws = Workspace::new();
    let probe = "if exec 3<>/dev/tty; then echo HAS-TTY; else echo NO-TTY; fi";
    let mut control = Command::new("bash");
    control.args(["-c", probe]);
    assert!(
        under_pty(control).contains("HAS-TTY"),
        "the control has a terminal"
    );
    let mut cmd = ws.wavesh();
    cmd.args(["run", "--", probe]);
    let text = under_pty(cmd);
    assert!(text.contains("NO-TTY"), "{text}");
    assert!(!text.contains("HAS-TTY"), "{text}");
    if Command::new("python3").arg("-V").output().is_ok() {
        let mut cmd = ws.wavesh();
        cmd.args([
            "run",
            "--",
            "python3 -c 'import fcntl, termios, os; fd = os.open(\"/dev/tty\", os.O_RDWR); \
             fcntl.ioctl(fd, termios.TIOCSTI, b\"x\"); print(\"INJECTED\")'",
        ]);
        let text = under_pty(cmd);
        assert!(!text.contains("INJECTED"), "{text}");
    }
}

/// F11 (PROC-3): TaskStop on a task whose shell has already exited still ends what it
/// left running, and says how many processes were left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proc_3_taskstop_on_an_ended_task_ends_its_leftovers() {
    let ws = Workspace::new();
    for (path, session) in crate::both_paths(&ws.root, &ws.private) {
        println!("path: {path}");
        stop_an_ended_task(Arc::new(session)).await;
    }
}

async fn stop_an_ended_task(session: Arc<wavesh_tool::Session>) {
    let marker = digit_marker();
    let mut input = BashInput::new(format!(
        "sleep 963.{marker} & setsid -f sleep 964.{marker}; exit 0"
    ));
    input.run_in_background = true;
    let started = session.bash(input, &CallContext::default()).await.unwrap();
    let id = started.background_task_id.unwrap();
    assert!(
        wait_until(Duration::from_secs(5), || {
            session
                .list_tasks()
                .iter()
                .any(|task| task.task_id == id && task.status != "running")
        }),
        "the task's shell never ended"
    );
    assert!(
        wait_until(Duration::from_secs(5), || live_pids_with(&format!(
            ".{marker}"
        ))
        .len()
            == 2),
        "the leftovers never ran"
    );
    let stop = session
        .task_stop(TaskStopInput { task_id: id })
        .await
        .unwrap();
    assert!(
        stop.text
            .contains("2 processes it started were still running and were ended"),
        "{}",
        stop.text
    );
    crate::expect_gone(&marker, Duration::from_secs(2), "TaskStop");
    session.shutdown().await;
}

/// PROC-4: errors name the command's own line numbers, not the prelude's.
#[test]
fn proc_4_error_line_numbers_are_the_users() {
    let ws = Workspace::new();
    let run = ws.run(&[], "nosuchcmd-a\necho \"$LINENO\"\nnosuchcmd-b");
    let text = run.stdout();
    assert!(text.contains("line 1: nosuchcmd-a"), "{run}");
    assert!(text.contains("\n2\n"), "{run}");
    assert!(text.contains("line 3: nosuchcmd-b"), "{run}");
    if let Some(zsh) = crate::util::zsh() {
        let mut cmd = ws.wavesh();
        cmd.env("WAVE_SHELL", zsh)
            .args(["run", "--", "nosuchcmd-c\necho \"$LINENO\""]);
        let run = crate::util::Run::of(cmd);
        assert!(
            run.stdout().contains(":1: command not found: nosuchcmd-c"),
            "{run}"
        );
    }
}

/// F12 (PROC-4): whatever another user planted where the private directory goes,
/// `wavesh run` starts, and its files go to a fresh private directory.
#[test]
fn proc_4_a_planted_private_directory_does_not_stop_wavesh() {
    let ws = Workspace::new();
    let tmp = ws.root.join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let uid = std::fs::metadata("/proc/self").map_or(0, |m| {
        use std::os::unix::fs::MetadataExt;
        m.uid()
    });
    std::os::unix::fs::symlink(ws.root.join("nowhere"), tmp.join(format!("wavesh-{uid}"))).unwrap();
    let mut cmd = ws.wavesh();
    cmd.env("TMPDIR", &tmp)
        .env_remove("XDG_RUNTIME_DIR")
        .args(["run", "--", "echo started"]);
    let run = crate::util::Run::of(cmd);
    assert_eq!(run.code(), Some(0), "{run}");
    assert!(run.stdout().contains("started"), "{run}");
    assert!(
        !ws.root.join("nowhere").exists(),
        "the planted link was followed"
    );
}

/// F5 (PROC-3): what the user's login files start while the environment is probed — a
/// daemon in its own session, a background child, an ssh agent — is ended once the
/// probe's output is read, and none of it outlives `wavesh run`.
#[test]
fn proc_3_the_login_probe_leaves_nothing_running() {
    let ws = Workspace::new();
    let home = ws.root.join("home");
    std::fs::create_dir(&home).unwrap();
    let marker = digit_marker();
    let agent = if Command::new("ssh-agent").arg("-h").output().is_ok() {
        "eval \"$(ssh-agent -s)\" >/dev/null\n"
    } else {
        ""
    };
    std::fs::write(
        home.join(".bashrc"),
        format!(
            "setsid -f sleep 965.{marker}\nsleep 966.{marker} &\n{agent}export PATH=\"/probed-{marker}:$PATH\"\n"
        ),
    )
    .unwrap();
    let agents_before = live_pids_with("ssh-agent").len();
    let mut cmd = ws.wavesh();
    cmd.env("HOME", &home)
        .args(["run", "--login-env", "--", "echo \"path=$PATH\""]);
    let run = crate::util::Run::of(cmd);
    assert!(
        run.stdout().contains(&format!("/probed-{marker}")),
        "the probe's environment was adopted: {run}"
    );
    crate::expect_gone(
        &marker,
        Duration::from_secs(2),
        "the probe's output was read",
    );
    if !agent.is_empty() {
        assert!(
            wait_until(Duration::from_secs(2), || live_pids_with("ssh-agent").len()
                <= agents_before),
            "the probe's ssh-agent is still running"
        );
    }
}

/// PROC-1/PROC-2 on the cgroup path: each command's tree is in a cgroup of its own, which
/// ends it even when the command has stopped its subreaper and the helper is killed
/// meanwhile; every cgroup made is gone with the session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proc_1_a_cgroup_per_command_ends_the_tree_whatever_the_supervisors_state() {
    let wavesh_exec::cgroup::Support::Available { .. } = wavesh_exec::cgroup::support() else {
        wavesh_testkit::lacking_in_this_mode(
            &format!(
                "cgroup v2 delegation ({:?})",
                wavesh_exec::cgroup::support()
            ),
            "root, or a cgroup v2 subtree delegated to this user",
        );
        return;
    };
    let ws = Workspace::new();
    let session = crate::supervised_session(&ws.root, &ws.private);
    let marker = digit_marker();
    let mut input = BashInput::new(format!(
        "setsid -f sleep 967.{marker}; cat /proc/self/cgroup; kill -STOP $PPID; sleep 968.{marker}"
    ));
    input.run_in_background = true;
    let started = session.bash(input, &CallContext::default()).await.unwrap();
    let id = started.background_task_id.unwrap();
    assert!(
        wait_until(Duration::from_secs(5), || live_pids_with(&format!(
            ".{marker}"
        ))
        .len()
            == 2),
        "the tree never started"
    );
    let task = session
        .list_tasks()
        .into_iter()
        .find(|task| task.task_id == id)
        .unwrap();
    let cgroup_line = std::fs::read_to_string(&task.output_path).unwrap();
    assert!(
        cgroup_line.contains(&format!("/wavesh-{}-", std::process::id()))
            && cgroup_line.contains("/cmd-"),
        "the command is not in a cgroup of its own: {cgroup_line}"
    );
    let dir = cgroup_line
        .lines()
        .find_map(|line| line.strip_prefix("0::"))
        .unwrap()
        .to_owned();
    let mount = std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .find_map(|line| {
            let (before, after) = line.split_once(" - ")?;
            after.starts_with("cgroup2 ").then(|| {
                before
                    .split_whitespace()
                    .nth(4)
                    .map(std::path::PathBuf::from)
            })?
        })
        .expect("a cgroup2 mount");
    let session_dir = mount
        .join(dir.trim_start_matches('/'))
        .parent()
        .unwrap()
        .to_path_buf();
    assert!(session_dir.exists(), "{}", session_dir.display());
    // The subreaper is stopped by the command (the watchdog resumes it): stop it again
    // from here and kill the helper while it is.
    let shell = task.pid;
    let subreaper = crate::processes_parent_of(shell).unwrap();
    let helper = crate::processes_parent_of(subreaper).unwrap();
    Command::new("kill")
        .args(["-STOP", &subreaper.to_string()])
        .status()
        .unwrap();
    Command::new("kill")
        .args(["-KILL", &helper.to_string()])
        .status()
        .unwrap();
    crate::expect_gone(&marker, Duration::from_secs(2), "the helper was killed");
    session.shutdown().await;
    drop(session);
    assert!(
        wait_until(Duration::from_secs(3), || !session_dir.exists()),
        "the session's cgroups are left: {}",
        session_dir.display()
    );
}

/// PROC-2: `wavesh mcp` exits within 1.5 s of stdin EOF or SIGTERM, and ends its trees,
/// whatever state its helper and subreapers are in: here both are stopped by the test
/// just before the end (the command could do the same).
#[test]
fn proc_2_the_server_exits_promptly_with_its_supervisor_stopped() {
    for ending in ["eof", "sigterm"] {
        let ws = Workspace::new();
        let marker = digit_marker();
        let mut mcp = crate::Mcp::start(&ws, &[]);
        let answer = mcp.tool(
            2,
            "Bash",
            serde_json::json!({
                "command": format!("setsid -f sleep 971.{marker}; sleep 972.{marker}"),
                "run_in_background": true
            }),
        );
        assert!(answer.contains("background"), "{answer}");
        assert!(
            wait_until(Duration::from_secs(10), || live_pids_with(&format!(
                ".{marker}"
            ))
            .len()
                == 2),
            "the task never started"
        );
        let server = mcp.child.id() as i32;
        let helpers = crate::processes::helpers_of(server);
        assert_eq!(helpers.len(), 1, "{helpers:?}");
        let subreapers: Vec<i32> = live_pids_with(&format!("972.{marker}"))
            .into_iter()
            .filter_map(crate::processes_parent_of)
            .collect();
        for pid in helpers.iter().chain(&subreapers) {
            Command::new("kill")
                .args(["-STOP", &pid.to_string()])
                .status()
                .unwrap();
        }
        let asked = Instant::now();
        match ending {
            "eof" => mcp.close_input(),
            _ => {
                Command::new("kill")
                    .args(["-TERM", &server.to_string()])
                    .status()
                    .unwrap();
            }
        }
        let exited = wait_until(Duration::from_secs(5), || {
            mcp.child.try_wait().unwrap().is_some()
        });
        let took = asked.elapsed();
        println!("{ending}: the server exited after {took:?}");
        assert!(exited, "{ending}: the server did not exit");
        assert!(
            took < Duration::from_millis(1500),
            "{ending}: the server took {took:?}"
        );
        crate::expect_gone(
            &marker,
            Duration::from_secs(3),
            &format!("{ending}: the server ended"),
        );
    }
}
