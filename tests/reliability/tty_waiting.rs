//! PTY-2 measured: whether "waiting for input" is told right on programs that prompt
//! and on programs that do not (servers, sleeps, loops that print, computations, reads
//! of a pipe). The target is no false "waiting" at all; every prompt is found.
//!
//! `bench/pty-waiting.sh` runs this with its table printed.

use std::sync::Arc;
use std::time::{Duration, Instant};

use wavesh_tool::{BashInput, CallContext, Session};

use crate::util::Workspace;

/// Programs that end up waiting for terminal input, by what they read with.
const PROMPTS: &[(&str, &str)] = &[
    ("bash read -p", "read -p 'name? ' name"),
    ("dash read", "dash -c 'printf \"dash? \"; read x'"),
    ("zsh read", "zsh -fc 'read \"x?zsh? \"'"),
    ("cat (plain read)", "cat"),
    ("python3 REPL (readline select)", "python3 -q"),
    ("python3 input()", "python3 -c \"input('name? ')\""),
    (
        "python3 getpass (/dev/tty)",
        "python3 -c 'import getpass; getpass.getpass()'",
    ),
    (
        "perl <STDIN>",
        "perl -e 'print \"perl? \"; my $x = <STDIN>;'",
    ),
    ("node REPL (epoll)", "node"),
    (
        "node readline question",
        "node -e \"require('readline').createInterface({input: process.stdin, output: process.stdout}).question('node? ', () => process.exit(0))\"",
    ),
    ("bc -q", "bc -q"),
    ("sqlite3 shell", "sqlite3"),
    ("ed", "ed -p '*'"),
    ("gdb -q", "gdb -q -nx"),
    ("tclsh", "tclsh"),
    ("less (keys from /dev/tty)", "less /etc/passwd"),
    ("vim (TUI)", "vim -u NONE -N"),
    ("awk reading stdin", "awk '{ print; exit }'"),
];

/// Programs that run, sleep or wait on something else than the terminal.
const OTHERS: &[(&str, &str)] = &[
    ("sleep 30", "sleep 30"),
    (
        "prints and sleeps",
        "while :; do echo tick; sleep 0.2; done",
    ),
    (
        "prints slowly",
        "for i in $(seq 100); do echo line $i; sleep 1; done",
    ),
    ("busy python loop", "python3 -c 'while True: pass'"),
    ("yes > /dev/null", "yes > /dev/null"),
    (
        "python http.server (poll on a socket)",
        "python3 -m http.server 0 --bind 127.0.0.1",
    ),
    (
        "node http server (epoll on a socket)",
        "node -e \"require('http').createServer(() => {}).listen(0, '127.0.0.1'); console.log('listening')\"",
    ),
    ("watch (TUI refresh)", "watch -n 0.5 date"),
    ("tail -f", "tail -f /etc/passwd"),
    ("shell waiting on a child", "sleep 30 & wait"),
    ("cat reading a pipe", "sleep 30 | cat"),
    (
        "select on a pipe",
        "python3 -c 'import os, select; r, w = os.pipe(); select.select([r], [], [])'",
    ),
    ("du over /usr", "du -s /usr /usr /usr /usr > /dev/null"),
    ("ends at once", "echo done"),
];

/// How long a call may wait for a program to settle.
const WAIT: Duration = Duration::from_secs(8);

/// One row: what the call said, how long it took.
struct Row {
    name: &'static str,
    prompts: bool,
    waiting: Option<Option<bool>>,
    ended: bool,
    took: Duration,
}

async fn measure(
    session: Arc<Session>,
    name: &'static str,
    command: &'static str,
    prompts: bool,
) -> Row {
    let mut input = BashInput::new(command);
    input.tty = true;
    input.timeout_ms = Some(WAIT.as_millis() as u64);
    let started = Instant::now();
    let result = session
        .bash(input, &CallContext::default())
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let took = started.elapsed();
    if let Some(id) = &result.background_task_id {
        let _ = session
            .task_stop(wavesh_tool::TaskStopInput {
                task_id: id.clone(),
            })
            .await;
    }
    Row {
        name,
        prompts,
        waiting: result.waiting_for_input,
        ended: result.exit_code.is_some(),
        took,
    }
}

fn available(command: &str) -> bool {
    let program = command.split_whitespace().next().unwrap_or_default();
    std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {program}"))
        .stdout(std::process::Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// PTY-2: no false "waiting" on 14 programs that do not prompt; every one of 18
/// prompting programs found, each within the call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pty_2_waiting_is_told_right_on_prompting_and_other_programs() {
    let ws = Workspace::new();
    let session = Arc::new(crate::supervised_session(&ws.root, &ws.private));
    table(session, "off").await;
}

/// The same programs inside the sandbox at `workspace-write`: the host reads the
/// kernel's state of processes in the command's own PID and user namespaces.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pty_2_waiting_is_told_right_inside_the_sandbox() {
    let ws = Workspace::new();
    let mut config = wavesh_tool::ToolConfig::default();
    config.sandbox.read_only_level = false;
    config.sandbox.level = wavesh_exec::sandbox::Level::WorkspaceWrite;
    let session = Session::builder(&ws.root)
        .private_base(&ws.private)
        .no_login_env()
        .supervisor(crate::util::WAVESH)
        .sandbox_level(wavesh_exec::sandbox::Level::WorkspaceWrite)
        .no_claude_settings()
        .config(config)
        .build()
        .unwrap();
    table(Arc::new(session), "workspace-write").await;
}

/// Runs every available program of both lists at once in `session`, prints the
/// table and fails on a false "waiting" or a missed prompt.
async fn table(session: Arc<Session>, level: &str) {
    let mut set = tokio::task::JoinSet::new();
    let mut skipped = Vec::new();
    for (list, prompts) in [(PROMPTS, true), (OTHERS, false)] {
        for &(name, command) in list {
            if !available(command) {
                skipped.push(name);
                continue;
            }
            set.spawn(measure(Arc::clone(&session), name, command, prompts));
        }
    }
    let mut rows = Vec::new();
    while let Some(row) = set.join_next().await {
        rows.push(row.unwrap());
    }
    rows.sort_by_key(|row| (!row.prompts, row.name));
    println!("at {level}:");
    println!("| program | prompts | reported | time to answer |");
    println!("|---|---|---|---|");
    let mut false_waiting = Vec::new();
    let mut missed = Vec::new();
    for row in &rows {
        let reported = match (row.ended, row.waiting) {
            (true, _) => "ended",
            (false, Some(Some(true))) => "waiting",
            (false, Some(Some(false))) => "not waiting",
            (false, Some(None)) => "unknown",
            (false, None) => "no field",
        };
        println!(
            "| {} | {} | {reported} | {:.2} s |",
            row.name,
            if row.prompts { "yes" } else { "no" },
            row.took.as_secs_f64()
        );
        let waiting = row.waiting == Some(Some(true));
        if !row.prompts && waiting {
            false_waiting.push(row.name);
        }
        if row.prompts && row.ended && wavesh_testkit::mode().is_degraded() {
            // `ed` keeps its buffer in a scratch file under /tmp, which the sandbox of a
            // mode without mount namespaces does not let it write: it ends at once.
            wavesh_testkit::lacking_in_this_mode(
                &format!(
                    "the \"{}\" case (it ended at once: a writable /tmp, which this mode's workspace-write sandbox lacks)",
                    row.name
                ),
                "run as root, or with user namespaces",
            );
        } else if row.prompts && !waiting {
            missed.push(row.name);
        }
    }
    let prompting = rows.iter().filter(|row| row.prompts).count();
    let others = rows.len() - prompting;
    println!(
        "{prompting} prompting: {} found; {others} others: {} false \"waiting\"",
        prompting - missed.len(),
        false_waiting.len()
    );
    for name in &skipped {
        crate::util::missing_prerequisite(
            &format!("the program of the \"{name}\" case"),
            "install it (bench/pty-waiting.sh measures every case)",
        );
    }
    session.shutdown().await;
    assert!(
        false_waiting.is_empty(),
        "false \"waiting\": {false_waiting:?}"
    );
    assert!(missed.is_empty(), "prompts not found: {missed:?}");
    assert!(
        prompting >= 10 && others >= 10,
        "{prompting} prompting, {others} others"
    );
}
