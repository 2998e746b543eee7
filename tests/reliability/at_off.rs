//! SBX-7 at `off`: every tree ends with its session, when the command was let run
//! without the sandbox too. The attack the supervisor's subreapers and cgroups alone do
//! not survive: the command moves a child out of its cgroup, then kills its subreaper
//! and the supervisor. As root a PID namespace per command holds the tree by
//! structure; the control runs the same attack on the path without one and sees the
//! child outlive the session.

use std::path::{Path, PathBuf};
use std::time::Duration;

use wavesh_tool::{BashInput, CallContext};

use crate::util::{Workspace, digit_marker, live_pids_with, wait_until};

/// A cgroup of this test's own, next to the session's (under the cgroup this test
/// process lives in): where the escapee moves itself. Removed on drop.
struct EscapeCgroup(PathBuf);

impl EscapeCgroup {
    fn make() -> Option<EscapeCgroup> {
        let wavesh_exec::cgroup::Support::Available { parent, .. } = wavesh_exec::cgroup::support()
        else {
            return None;
        };
        let dir = parent.join(format!("wavesh-escape-{}", std::process::id()));
        std::fs::create_dir(&dir).ok()?;
        Some(EscapeCgroup(dir))
    }

    fn procs(&self) -> String {
        std::fs::read_to_string(self.0.join("cgroup.procs")).unwrap_or_default()
    }
}

impl Drop for EscapeCgroup {
    fn drop(&mut self) {
        let _ = wait_until(Duration::from_secs(3), || self.procs().trim().is_empty());
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// The attack: two escapees (a `setsid -f` daemon and one moved into another cgroup),
/// then SIGKILL and SIGSTOP to the subreaper (the shell's parent) and to its parent, the
/// supervisor, as far as the command can see them. Prints what it saw.
///
/// The order is the attacker's best, and still a race: the supervisor dies first (one
/// `kill`, two system calls), so it never adopts (and ends) the orphans, and the
/// subreaper, stopped, cannot end its tree when the supervisor's socket closes. The host
/// answers the supervisor's death by killing the command's cgroup and resuming the
/// subreaper, which then ends its tree; the attack wins when the second signal lands
/// first. The control therefore tries a few times.
fn attack(marker: &str, escape: &Path) -> String {
    format!(
        "setsid -f sleep 981.{marker} </dev/null >/dev/null 2>&1
         sleep 982.{marker} </dev/null >/dev/null 2>&1 &
         moved=$!
         echo $moved > {cg}/cgroup.procs && echo moved
         reaper=$PPID
         helper=$(ps -o ppid= -p $reaper | tr -d ' ')
         kill -STOP $reaper
         if [ -n \"$helper\" ] && [ \"$helper\" != 0 ]; then kill -9 $helper $reaper
         else kill -9 $reaper; fi
         sleep 0.3
         kill -0 $reaper 2>/dev/null && echo reaper-alive
         echo helper=$helper
         echo; ps -e -o comm= | sort | tr '\\n' ' '",
        cg = escape.display()
    )
}

/// Runs [`attack`] in `session`: the call must come back.
async fn run_attack(
    session: &wavesh_tool::Session,
    marker: &str,
    escape: &EscapeCgroup,
) -> wavesh_tool::BashResult {
    let mut input = BashInput::new(attack(marker, &escape.0));
    input.timeout_ms = Some(20_000);
    tokio::time::timeout(
        Duration::from_secs(15),
        session.bash(input, &CallContext::default()),
    )
    .await
    .expect("the call hung")
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sbx_7_at_off_no_tree_outlives_its_session() {
    if let Err(why) = wavesh_exec::sandbox::off_pid_namespace() {
        wavesh_testkit::lacking_in_this_mode(
            &format!("a PID namespace for commands at off ({why})"),
            "run the tests as root",
        );
        return;
    }
    let Some(escape) = EscapeCgroup::make() else {
        wavesh_testkit::lacking_in_this_mode(
            "a cgroup of the test's own to escape into (cgroup v2 delegation)",
            "run the tests as root",
        );
        return;
    };
    let ws = Workspace::new();

    // The PID namespace: the subreaper is the namespace's init, which takes neither
    // signal from inside; the supervisor is not in the namespace; the command sees its
    // own tree only. The escapees outlive the command (a session's leftovers do) but
    // not the session.
    let session = crate::supervised_session(&ws.root, &ws.private);
    let marker = digit_marker();
    let result = run_attack(&session, &marker, &escape).await;
    let text = wavesh_testkit::without_documented_note(&result.text);
    assert_eq!(result.exit_code, Some(0), "{text}");
    assert!(
        text.contains("moved"),
        "the escapee never left its cgroup: {text}"
    );
    assert!(
        text.contains("reaper-alive"),
        "the subreaper took a signal from inside: {text}"
    );
    assert!(
        text.contains("helper=0"),
        "the supervisor is visible: {text}"
    );
    let seen: Vec<&str> = text
        .lines()
        .last()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert!(
        ["wavesh", "bash", "sleep", "ps"]
            .iter()
            .all(|name| seen.contains(name)),
        "ps saw less than the tree: {text}"
    );
    assert!(
        text.lines()
            .last()
            .unwrap_or_default()
            .split_whitespace()
            .all(|name| { ["wavesh", "bash", "sh", "sleep", "ps", "sort", "tr"].contains(&name) }),
        "a process outside the tree is visible: {text}"
    );
    assert!(
        escape.procs().split_whitespace().count() == 1,
        "the moved escapee is not in the test's cgroup: {:?}",
        escape.procs()
    );
    assert_eq!(live_pids_with(&format!(".{marker}")).len(), 2, "{text}");
    session.shutdown().await;
    crate::expect_gone(&marker, Duration::from_secs(3), "the session ended");

    // The control: the same attack on the path without a PID namespace. The moved
    // escapee outlives the session; the test ends it.
    let mut texts = Vec::new();
    for _ in 0..CONTROL_TRIES {
        let control = crate::without_pid_namespace(&ws.root, &ws.private);
        let marker = digit_marker();
        let result = run_attack(&control, &marker, &escape).await;
        control.shutdown().await;
        drop(control);
        std::thread::sleep(Duration::from_secs(1));
        let left = live_pids_with(&format!(".{marker}"));
        for pid in &left {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
        if !left.is_empty() {
            return;
        }
        texts.push(result.text);
    }
    panic!(
        "without a PID namespace the attack left nothing in {CONTROL_TRIES} tries: the \
         control cannot tell the namespace's work ({texts:?})"
    );
}

/// How often the control runs its racing attack before it concludes the attack fails.
const CONTROL_TRIES: usize = 5;
