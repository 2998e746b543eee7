//! `wavesh mcp` driven by the official Python MCP client (a real third-party client) and
//! by raw JSON-RPC where a signal must reach the server itself.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::util::{
    Mcp, Run, WAVESH, Workspace, digit_marker, live_pids_with, python_with_mcp, result_text,
    signal_and_expect_tree_gone, wait_until,
};

const CLIENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/mcp_client.py");
const RAW: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/mcp_raw.py");

/// A scenario of `mcp_raw.py`: the protocol byte by byte (standard library only).
fn raw_scenario(name: &str) {
    // The standard library is all it needs: any python3.
    let python = "python3";
    let mut cmd = Command::new(python);
    cmd.arg(RAW).arg(WAVESH).arg(name);
    let run = Run::of(cmd);
    assert!(
        run.output.status.success(),
        "MCP raw scenario {name} failed (python: {python:?})\n{run}"
    );
}

/// MCP-2 on stdio: a lone surrogate, invalid UTF-8, NaN, truncated JSON, float, huge
/// and object ids, a batch, an unknown tool, non-object arguments, a 300 MiB line: each
/// answered within 1 s with its id when readable; serving goes on; peak memory under
/// 100 MiB.
/// RO-16: a command that names the server's own stdin (`/dev/stdin`, `/dev/fd/0`,
/// `/proc/self/fd/0`) or a FIFO is judged without opening it: the JSON-RPC message that
/// follows it on stdin stays intact and is answered.
#[test]
fn ro_16_judging_a_command_never_reads_the_servers_stdin() {
    raw_scenario("own-stdin");
}

/// SHELL-2: with no bash or zsh, `wavesh mcp` starts and answers each Bash call with
/// the reason; the other tools work.
#[test]
fn shell_2_without_a_shell_the_server_answers_each_call() {
    raw_scenario("no-shell");
}

#[test]
fn mcp_2_bad_input_matrix_stdio() {
    raw_scenario("bad-input-stdio");
}

/// MCP-2 over HTTP: the same matrix as JSON-RPC errors in 4xx answers (413 for the
/// 300 MiB body, answered before it is sent); a 20 MB command still works.
#[test]
fn mcp_2_bad_input_matrix_http() {
    raw_scenario("bad-input-http");
}

/// MCP-1: no or a wrong token → 401 (logged without the token); a foreign Origin or Host
/// → 403; the generated token is printed once and written 0600; `--http-no-auth` is
/// refused off loopback.
#[test]
fn mcp_1_http_token_origin_and_host() {
    raw_scenario("http-security");
}

/// MCP-1, SBX-7: a session idle past `--http-idle-timeout` ends with everything it
/// started, its directory included.
#[test]
fn mcp_1_http_idle_session_ends_with_everything() {
    raw_scenario("http-idle");
}

/// MCP-1, SBX-7: 50 concurrent sessions with a background task each are isolated;
/// DELETE ends one session's processes within 2 s and removes its directory, SIGTERM
/// ends all of them within 2 s and the server leaves no session directory; past
/// `--http-max-sessions` a new session is refused.
#[test]
fn mcp_1_http_sessions_are_isolated_and_end_with_everything() {
    raw_scenario("http-sessions");
}

fn scenario(name: &str) {
    let Some(python) = python_with_mcp() else {
        return;
    };
    let mut cmd = Command::new(&python);
    cmd.arg(CLIENT).arg(WAVESH).arg(name);
    let run = Run::of(cmd);
    assert!(
        run.output.status.success(),
        "MCP scenario {name} failed (python: {python:?}; the pinned `mcp` client of tests/python-requirements.txt, as scripts/test installs it)\n{run}"
    );
}

/// CWD-2/3/6, EXEC-1, SCHEMA-1/4 and EXEC-2 through a real MCP client.
#[test]
fn cwd_2_cwd_3_mcp_directory_persistence() {
    scenario("cwd");
}

/// BG-7, TASK-1/4: a background task's notification arrives in the next result; TaskOutput
/// reads it, TaskStop (as KillShell with shell_id) stops another; task resources and their
/// end notifications; closing the client leaves no process.
#[test]
fn bg_7_mcp_background_tasks() {
    scenario("tasks");
}

/// RULE-5 in `wavesh mcp`: `--permission-mode wavesh` runs rules and read-only commands,
/// refuses deny, asks through elicitation (or says how to allow); host mode still denies.
#[test]
fn rule_5_mcp_permission_modes() {
    scenario("permissions");
}

/// The high-level Python client under both protocol versions: tools, schemas,
/// annotations, background moves, 20 concurrent calls, elicitation accepted, declined
/// and unavailable.
#[test]
fn schema_1_mcp_client_suite_both_protocols() {
    scenario("client-suite");
}

/// MCP-1 through the Python client over Streamable HTTP: progress, logging,
/// resources/updated and elicitation through SSE; DELETE ends the session's processes.
#[test]
fn mcp_1_python_client_over_http() {
    scenario("http");
}

/// EXEC-5/6 through MCP: progress notifications; a cancelled call ends its whole tree.
#[test]
fn exec_6_mcp_cancellation_and_progress() {
    scenario("cancel-progress");
}

/// MCP-5: past `--client-timeout` a call answers with its task id whatever its first
/// word, progress flows meanwhile, and TaskOutput gives the end.
#[test]
fn mcp_5_client_budget_moves_calls_to_the_background() {
    scenario("client-budget");
}

/// NET-2: a host no rule allows is asked about through elicitation, once per host:
/// declined, once, always (written to the user's settings); registries are not asked.
#[test]
fn net_2_mcp_asks_about_new_hosts() {
    if wavesh_exec::sandbox::probe_namespaces().network_namespace != Some(true) {
        wavesh_testkit::lacking_in_this_mode(
            "a network namespace of the session's own (NET-1), where hosts are asked about",
            "root, or user namespaces for a user other than root",
        );
        return;
    }
    scenario("hosts");
}

/// KILL-1/2: closing the client ends every process of the session within 1.5 s.
#[test]
fn kill_2_mcp_session_end_ends_the_tree() {
    scenario("session-end");
}

/// KILL-2: SIGTERM to the server ends every process it started within 1.5 s.
#[test]
fn kill_2_mcp_sigterm_ends_the_tree() {
    let ws = Workspace::new();
    let marker = digit_marker();
    let mut server = ws.wavesh();
    server.args(["mcp", "--cwd"]).arg(&ws.root);
    server
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut server = server.spawn().unwrap();
    let mut stdin = server.stdin.take().unwrap();
    let mut stdout = BufReader::new(server.stdout.take().unwrap());
    let mut send = |value: serde_json::Value| {
        writeln!(stdin, "{value}").unwrap();
        stdin.flush().unwrap();
    };
    send(
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "wavesh-test", "version": "0"}}}),
    );
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains("\"serverInfo\""), "initialize: {line}");
    send(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let tree = format!(
        "sleep 311.{marker} & bash -c 'trap \"\" TERM; sleep 312.{marker}; echo x' & sleep 313.{marker}"
    );
    send(
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "Bash", "arguments": {"command": tree}}}),
    );
    assert!(wait_until(Duration::from_secs(10), || live_pids_with(
        &format!(".{marker}")
    )
    .len()
        >= 4));
    signal_and_expect_tree_gone(server.id(), "TERM", &format!(".{marker}"));
    assert!(
        wait_until(Duration::from_secs(5), || server
            .try_wait()
            .unwrap()
            .is_some()),
        "server did not exit"
    );
}

/// Malformed requests get errors that name the problem and the server keeps serving;
/// an unknown tool is a protocol error (MCP-2: -32602, protocol 2025-11-25).
#[test]
fn schema_1_mcp_2_mcp_malformed_requests() {
    let ws = Workspace::new();
    let mut raw = Mcp::start(&ws, &[]);
    let unknown = raw.call(2, "Nope", serde_json::json!({}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    assert!(
        unknown["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("unknown tool `Nope`")),
        "{unknown}"
    );
    let wrong = raw.call(3, "Bash", serde_json::json!({"command": 5}));
    assert!(
        result_text(&wrong).contains("parameter `command` must be a string"),
        "{wrong}"
    );
    let missing = raw.call(4, "Bash", serde_json::json!({"timeout": 5}));
    assert!(
        result_text(&missing).contains("missing required parameter `command`"),
        "{missing}"
    );

    // Not JSON: a parse error with id null. Not UTF-8, with a readable id: a parse
    // error with that id. Serving goes on.
    raw.send_bytes(b"this is not json");
    raw.send_bytes(b"{\"jsonrpc\": \"2.0\", \"id\": 9, \"method\": \"ping\xff\xfe\"}");
    let (pong, others) = {
        raw.send_bytes(br#"{"jsonrpc": "2.0", "id": 5, "method": "ping"}"#);
        raw.answer_with_others(5)
    };
    assert!(pong.get("result").is_some(), "{pong}");
    let codes: Vec<(serde_json::Value, serde_json::Value)> = others
        .iter()
        .map(|other| (other["id"].clone(), other["error"]["code"].clone()))
        .collect();
    assert_eq!(
        codes,
        vec![
            (serde_json::Value::Null, (-32700).into()),
            (9.into(), (-32700).into())
        ],
        "{others:?}"
    );
    // `arguments` that are not an object: -32602 naming the problem.
    raw.send(
        10,
        "tools/call",
        serde_json::json!({"name": "Bash", "arguments": "ls"}),
    );
    let odd = raw.answer(10);
    assert_eq!(odd["error"]["code"], -32602, "{odd}");
    assert!(
        odd["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("`arguments` must be a JSON object")),
        "{odd}"
    );

    // A 20 MB command arrives whole (rmcp's default line limit is 16 MiB).
    let big = format!("printf %s {} | wc -c", "x".repeat(20_000_000));
    let response = raw.call(6, "Bash", serde_json::json!({"command": big}));
    assert_eq!(
        result_text(&response).trim(),
        "20000000",
        "{}",
        &result_text(&response)[..200.min(result_text(&response).len())]
    );
    let after = raw.tool(
        7,
        "Bash",
        serde_json::json!({"command": "echo still-serving"}),
    );
    assert_eq!(after, "still-serving");
    raw.close();
}
