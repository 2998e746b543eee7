//! Process trees: 500 (soak) or 40 mixed runs leave no process, no descriptor and no file;
//! a SIGKILLed `wavesh mcp` leaves nothing running.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use wavesh_tool::{BashInput, CallContext, TaskStopInput};

use crate::Mcp;
use crate::util::{Workspace, digit_marker, live_pids_with, wait_until};

/// How many mixed runs: 500 with `WAVESH_SOAK=1`, else 40.
fn runs() -> usize {
    if std::env::var("WAVESH_SOAK").is_ok_and(|v| v == "1") {
        500
    } else {
        40
    }
}

/// How a run is ended.
#[derive(Debug, Clone, Copy)]
enum Ending {
    Abort,
    TimeoutKill,
    TimeoutMoveThenStop,
    OwnerRelease,
    /// The command stops its own subreaper, then is stopped with TaskStop (PROC-2).
    SubreaperStopped,
    /// The command kills its own subreaper with its tree still running (PROC-2).
    SubreaperKilled,
}

/// A tree with a `setsid` escapee (its own session and group) and a grandchild that
/// ignores SIGTERM; `first_sleep` starts it with `sleep` so the timeout kills it (EXEC-4).
fn tree(marker: &str, first_sleep: bool) -> String {
    let body = format!(
        "setsid sleep 900.{marker} & (trap '' TERM; sleep 901.{marker}; true) & sleep 902.{marker}; wait"
    );
    if first_sleep {
        format!("sleep 903.{marker} & {body}")
    } else {
        body
    }
}

fn fd_count() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// What the host's descriptors point at, for a leak's message.
fn fd_targets() -> Vec<String> {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .flatten()
        .map(|entry| {
            std::fs::read_link(entry.path())
                .map_or_else(|_| "?".to_owned(), |target| target.display().to_string())
        })
        .collect()
}

fn files_in(dir: &std::path::Path) -> Vec<String> {
    let mut names = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return names;
    };
    for entry in entries.flatten() {
        if entry.path().is_dir() {
            names.extend(files_in(&entry.path()));
        } else {
            names.push(entry.path().display().to_string());
        }
    }
    names
}

/// Waits until at least `n` processes of the run are up.
async fn started(marker: &str, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while live_pids_with(marker).len() < n {
        assert!(Instant::now() < deadline, "run {marker} never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn one_run(session: Arc<wavesh_tool::Session>, ending: Ending, marker: String) {
    let needle = format!(".{marker}");
    match ending {
        Ending::Abort => {
            let abort = CancellationToken::new();
            let ctx = CallContext {
                abort: abort.clone(),
                ..CallContext::default()
            };
            let waiter = {
                let needle = needle.clone();
                tokio::spawn(async move {
                    started(&needle, 3).await;
                    abort.cancel();
                })
            };
            let result = session
                .bash(BashInput::new(tree(&marker, false)), &ctx)
                .await
                .unwrap();
            waiter.await.unwrap();
            assert!(result.interrupted, "{}", result.text);
        }
        Ending::TimeoutKill => {
            let mut input = BashInput::new(tree(&marker, true));
            input.timeout_ms = Some(400);
            let result = session.bash(input, &CallContext::default()).await.unwrap();
            assert!(result.background_task_id.is_none(), "{}", result.text);
        }
        Ending::TimeoutMoveThenStop => {
            let mut input = BashInput::new(tree(&marker, false));
            input.timeout_ms = Some(400);
            let result = session.bash(input, &CallContext::default()).await.unwrap();
            let id = result.background_task_id.expect("moved to the background");
            started(&needle, 3).await;
            session
                .task_stop(TaskStopInput { task_id: id })
                .await
                .unwrap();
        }
        Ending::SubreaperStopped => {
            let mut input = BashInput::new(format!("kill -STOP $PPID; {}", tree(&marker, false)));
            input.run_in_background = true;
            let result = session.bash(input, &CallContext::default()).await.unwrap();
            let id = result.background_task_id.expect("a background task");
            started(&needle, 3).await;
            tokio::time::timeout(
                Duration::from_secs(10),
                session.task_stop(TaskStopInput { task_id: id }),
            )
            .await
            .expect("TaskStop hung on a stopped subreaper")
            .unwrap();
        }
        Ending::SubreaperKilled => {
            crate::run_killing_its_subreaper(
                &session,
                format!(
                    "{{ {}; }} & sleep 0.2; kill -9 $PPID; wait",
                    tree(&marker, false)
                ),
            )
            .await;
        }
        Ending::OwnerRelease => {
            let agent = session.subagent();
            let mut input = BashInput::new(tree(&marker, false));
            input.run_in_background = true;
            agent.bash(input, &CallContext::default()).await.unwrap();
            started(&needle, 3).await;
            agent.release().await;
        }
    }
}

/// 40 (or 500) runs, ended four ways, each tree with an escapee and a SIGTERM-ignoring
/// grandchild → no process left, no descriptor leaked, no file left once the session
/// ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_mixed_runs_leave_nothing() {
    let ws = Workspace::new();
    // Two of the endings are the command stopping or killing its own subreaper, which a
    // PID namespace makes impossible (its init takes no such signal from inside): the
    // runs go through the path that must survive them.
    let session = Arc::new(crate::without_pid_namespace(&ws.root, &ws.private));
    // Warm up (first spawn, runtime threads) before counting descriptors.
    session
        .bash(BashInput::new("true"), &CallContext::default())
        .await
        .unwrap();
    let fds_before = fd_count();
    let base = digit_marker();
    let endings = [
        Ending::Abort,
        Ending::TimeoutKill,
        Ending::TimeoutMoveThenStop,
        Ending::OwnerRelease,
        Ending::SubreaperStopped,
        Ending::SubreaperKilled,
    ];
    let total = runs();
    let mut next = 0;
    while next < total {
        let mut batch = tokio::task::JoinSet::new();
        for i in next..(next + 20).min(total) {
            let marker = format!("{base}{i:04}");
            batch.spawn(one_run(
                Arc::clone(&session),
                endings[i % endings.len()],
                marker,
            ));
        }
        while let Some(joined) = batch.join_next().await {
            joined.unwrap();
        }
        next += 20;
        crate::expect_gone(&base, Duration::from_secs(3), &format!("after {next} runs"));
    }
    // Every run's result was taken; the ended tasks' notifications go out with this.
    session.take_notifications();
    // A tree's end-of-tree notice, which closes its subreaper's pidfd, may come a moment
    // after its last process is gone.
    wait_until(Duration::from_secs(3), || fd_count() == fds_before);
    assert_eq!(
        fd_count(),
        fds_before,
        "descriptors leaked in the host: {:?}",
        fd_targets()
    );
    let private = session.private_dir().to_path_buf();
    let live: Vec<String> = session
        .list_tasks()
        .into_iter()
        .filter(|task| task.status == "running")
        .map(|task| task.task_id)
        .collect();
    assert!(live.is_empty(), "tasks still running: {live:?}");
    // Before the session ends, only the session's own tasks have files (released
    // subagents' are gone, foreground outputs were read and removed).
    let task_files = session.list_tasks().len();
    let files = files_in(&private);
    assert!(
        files.len() <= task_files && files.iter().all(|f| f.contains("-output-")),
        "{} files for {task_files} session tasks: {files:?}",
        files.len()
    );
    session.shutdown().await;
    drop(session);
    let left = files_in(&private);
    assert!(
        left.is_empty(),
        "files left in the output directory: {left:?}"
    );
}

/// SIGKILL to `wavesh mcp` while it runs a foreground command and two background tasks:
/// the helper sees its socket close and every process is gone within 2 s.
#[test]
fn kill_sigkill_of_the_server_leaves_nothing() {
    let ws = Workspace::new();
    let marker = digit_marker();
    let mut mcp = Mcp::start(&ws, &[]);
    let tree = |n: u32| {
        format!(
            "setsid sleep 910.{marker}{n} & (trap '' TERM; sleep 911.{marker}{n}; true) & sleep 912.{marker}{n}; wait"
        )
    };
    for (id, n) in [(2, 1), (3, 2)] {
        let answer = mcp.tool(
            id,
            "Bash",
            serde_json::json!({"command": tree(n), "run_in_background": true}),
        );
        assert!(answer.contains("background"), "{answer}");
    }
    mcp.send(
        4,
        "tools/call",
        serde_json::json!({"name": "Bash", "arguments": {"command": tree(3)}}),
    );
    assert!(
        wait_until(Duration::from_secs(10), || live_pids_with(&format!(
            ".{marker}"
        ))
        .len()
            >= 9),
        "the three trees never started: {:?}",
        live_pids_with(&format!(".{marker}"))
    );
    mcp.child.kill().unwrap();
    mcp.child.wait().unwrap();
    crate::expect_gone(&marker, Duration::from_secs(2), "the server was SIGKILLed");
}

/// KILL-7 with escapees: a foreground command that leaves a `setsid` process, a plain
/// `&` child, an orphan and a daemonized orphan (new session, parent gone) returns at
/// once; all stay attached to the session and end with it.
#[tokio::test]
async fn kill_7_foreground_leftovers_end_with_the_session() {
    let ws = Workspace::new();
    let session = crate::supervised_session(&ws.root, &ws.private);
    let marker = digit_marker();
    let result = session
        .bash(
            BashInput::new(format!(
                "setsid sleep 940.{marker} & sleep 941.{marker} & \
                 bash -c 'sleep 942.{marker} & disown' ; \
                 setsid bash -c 'sleep 943.{marker} & exit'; echo left"
            )),
            &CallContext::default(),
        )
        .await
        .unwrap();
    assert_eq!(result.text, "left");
    assert!(
        wait_until(Duration::from_secs(5), || live_pids_with(&format!(
            ".{marker}"
        ))
        .len()
            == 4),
        "{:?}",
        live_pids_with(&format!(".{marker}"))
    );
    session.shutdown().await;
    crate::expect_gone(&marker, Duration::from_secs(2), "the session ended");
}

/// The supervisor itself is SIGKILLed: its subreapers end their trees, the running
/// command reports being killed instead of hanging, and the next command starts a new
/// supervisor.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_a_dead_supervisor_ends_its_trees_and_is_replaced() {
    let ws = Workspace::new();
    let session = Arc::new(crate::supervised_session(&ws.root, &ws.private));
    let marker = digit_marker();
    let running = {
        let session = Arc::clone(&session);
        let command = format!("setsid sleep 950.{marker} & sleep 951.{marker}; wait");
        tokio::spawn(async move {
            session
                .bash(BashInput::new(command), &CallContext::default())
                .await
        })
    };
    started(&format!(".{marker}"), 2).await;
    let helpers = helpers_of(std::process::id() as i32);
    assert_eq!(helpers.len(), 1, "one supervisor per session: {helpers:?}");
    std::process::Command::new("kill")
        .args(["-KILL", &helpers[0].to_string()])
        .status()
        .unwrap();
    let result = tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("the command hung after its supervisor died")
        .unwrap()
        .unwrap();
    assert_ne!(result.exit_code, Some(0), "{}", result.text);
    crate::expect_gone(&marker, Duration::from_secs(3), "the supervisor was killed");
    let again = session
        .bash(BashInput::new("echo again"), &CallContext::default())
        .await
        .unwrap();
    assert_eq!(again.text, "again");
}

/// The supervisors started by process `host`: its children running `__supervise`.
pub fn helpers_of(host: i32) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
                cmdline
                    .split(|b| *b == 0)
                    .any(|arg| arg == wavesh_exec::supervisor::HELPER_ARG.as_bytes())
            }) && parent_of(*pid) == Some(host)
        })
        .collect()
}

pub fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    let close = stat.iter().rposition(|&b| b == b')')?;
    let rest = String::from_utf8_lossy(&stat[close + 1..]).into_owned();
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// 200 commands at once through one supervisor: each gets its own exit code and output.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_concurrent_commands_through_one_supervisor() {
    let ws = Workspace::new();
    let session = Arc::new(crate::supervised_session(&ws.root, &ws.private));
    let mut runs = tokio::task::JoinSet::new();
    for i in 0..200 {
        let session = Arc::clone(&session);
        runs.spawn(async move {
            let result = session
                .bash(
                    BashInput::new(format!(
                        "sleep 0.$((RANDOM % 5)); echo run-{i}; exit $(({i} % 7))"
                    )),
                    &CallContext::default(),
                )
                .await
                .unwrap();
            (i, result)
        });
    }
    while let Some(joined) = runs.join_next().await {
        let (i, result) = joined.unwrap();
        assert_eq!(result.exit_code, Some(i % 7), "run {i}: {}", result.text);
        assert!(
            result.text.ends_with(&format!("run-{i}")),
            "run {i}: {}",
            result.text
        );
    }
}

/// A subreaper killed from outside: its command does not hang — its group is ended and
/// the task reports being killed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_a_lost_subreaper_does_not_hang_its_command() {
    let ws = Workspace::new();
    let session = crate::supervised_session(&ws.root, &ws.private);
    let marker = digit_marker();
    let mut input = BashInput::new(format!("sleep 970.{marker}; echo never"));
    input.run_in_background = true;
    let started_task = session.bash(input, &CallContext::default()).await.unwrap();
    let id = started_task.background_task_id.unwrap();
    started(&format!(".{marker}"), 1).await;
    let shell = session
        .list_tasks()
        .into_iter()
        .find(|task| task.task_id == id)
        .unwrap()
        .pid;
    let subreaper = parent_of(shell).unwrap();
    assert_ne!(
        subreaper,
        std::process::id() as i32,
        "the host is never the parent"
    );
    std::process::Command::new("kill")
        .args(["-KILL", &subreaper.to_string()])
        .status()
        .unwrap();
    let output = tokio::time::timeout(
        Duration::from_secs(10),
        session.task_output(
            wavesh_tool::TaskOutputInput {
                block: true,
                timeout_ms: 10_000,
                ..wavesh_tool::TaskOutputInput::new(id)
            },
            &CallContext::default(),
        ),
    )
    .await
    .expect("the task hung after losing its subreaper")
    .unwrap();
    assert_ne!(output.status, "running", "{}", output.text);
    crate::expect_gone(&marker, Duration::from_secs(2), "the subreaper was killed");
}

/// A supervisor program that is not one (another program, another wavesh version): the
/// session says so in its log and runs commands as direct children.
#[tokio::test]
async fn kill_a_wrong_supervisor_falls_back_to_process_groups() {
    let ws = Workspace::new();
    let session = wavesh_tool::Session::builder(&ws.root)
        .private_base(&ws.private)
        .no_login_env()
        .supervisor("/bin/true")
        .sandbox_level(wavesh_exec::sandbox::Level::Off)
        .no_claude_settings()
        .build()
        .unwrap();
    let result = session
        .bash(BashInput::new("echo direct"), &CallContext::default())
        .await
        .unwrap();
    // The fallback spawns directly and says so first (PROC-1), then which sandbox
    // guarantees that costs (SBX-5).
    let (said, rest) = result.text.split_once('\n').unwrap_or((&result.text, ""));
    assert!(
        said.contains("supervisor could not start"),
        "{}",
        result.text
    );
    let (output, note) = rest.split_once('\n').unwrap_or((rest, ""));
    assert_eq!(output, "direct");
    if wavesh_exec::sandbox::support().process_isolation {
        assert!(
            note.contains("missing: other processes' environments and memory unreadable"),
            "{note}"
        );
    }
    assert!(helpers_of(std::process::id() as i32).is_empty());
}

/// `wavesh run` leaves its background tasks running on purpose: 100 in a row all survive
/// its exit (the supervisor lets go of them), and each can be stopped by its group.
#[test]
fn kill_wavesh_run_leaves_its_background_tasks_running() {
    let ws = Workspace::new();
    let marker = digit_marker();
    let mut groups = Vec::new();
    for i in 0..100 {
        let (run, json) = ws.run_json(&["--background"], &format!("sleep 980.{marker}{i:03}"));
        assert_eq!(run.code(), Some(0), "{run}");
        groups.push(json["task"]["pgid"].as_i64().unwrap());
    }
    let alive = wait_until(Duration::from_secs(10), || {
        live_pids_with(&format!(".{marker}")).len() == 100
    });
    let count = live_pids_with(&format!(".{marker}")).len();
    for pgid in groups {
        crate::util::kill_group(pgid);
    }
    assert!(alive, "{count} of 100 detached tasks survived wavesh run");
    crate::expect_gone(&marker, Duration::from_secs(3), "their groups were killed");
}
