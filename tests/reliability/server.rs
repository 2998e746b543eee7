//! Server hygiene (SBX-7, MCP-1): what a long-lived `wavesh mcp` keeps of its secrets
//! and of its sessions.

use std::io::BufRead as _;
use std::process::Stdio;

use crate::util::Workspace;

/// The bearer token is gone from the server's environment once read: neither
/// `/proc/PID/environ` nor, since the variable is removed before anything starts, a
/// process it starts (its supervisor, the login probe). `mcp_raw.py http-security` checks
/// that the token still admits the client and that commands do not see it.
#[test]
fn sbx_7_the_token_leaves_the_servers_environment() {
    let ws = Workspace::new();
    let token = format!("tok-{}", crate::util::digit_marker());
    let (mut server, _) = http_server(&ws, &[], Some(&token));
    let pid = server.id();
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    let found = environ.windows(token.len()).any(|w| w == token.as_bytes());
    let _ = server.kill();
    let _ = server.wait();
    assert!(!found, "the token is in /proc/{pid}/environ");
}

/// Starts `wavesh mcp --http 127.0.0.1:0 ARGS`, with `token` as WAVESH_MCP_TOKEN or
/// without auth; returns it and its port once it serves.
fn http_server(ws: &Workspace, args: &[&str], token: Option<&str>) -> (std::process::Child, u16) {
    let mut command = ws.wavesh();
    command.args(["mcp", "--no-login-env", "--http", "127.0.0.1:0"]);
    match token {
        Some(token) => command.env("WAVESH_MCP_TOKEN", token),
        None => command.arg("--http-no-auth"),
    };
    let mut server = command
        .args(args)
        .arg("--cwd")
        .arg(&ws.root)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(server.stderr.take().unwrap());
    let mut line = String::new();
    while stderr.read_line(&mut line).unwrap() > 0 && !line.contains("serving") {
        line.clear();
    }
    let port = line
        .split("127.0.0.1:")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .and_then(|port| port.parse().ok())
        .unwrap_or_else(|| panic!("no port in {line:?}"));
    // Keep draining stderr so the server never blocks on it.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    (server, port)
}

/// One HTTP request on a new connection; the status line, or the error.
fn request(port: u16, text: &str) -> Result<String, std::io::Error> {
    use std::io::{Read as _, Write as _};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(std::time::Duration::from_secs(10)))?;
    stream.write_all(text.as_bytes())?;
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = stream.read(&mut buf)?;
        answer.extend_from_slice(&buf[..n]);
        if n == 0 || answer.windows(4).any(|w| w == b"\r\n\r\n") {
            break;
        }
    }
    Ok(String::from_utf8_lossy(&answer)
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned())
}

/// Idle connections that never send a request cannot starve the server (SBX-7): past
/// its connection cap new ones are closed at once, and every connection that sends no
/// headers within the header timeout is closed, after which clients are served again.
#[test]
fn sbx_7_idle_connections_do_not_starve_the_server() {
    let ws = Workspace::new();
    let (mut server, port) = http_server(&ws, &[], None);
    let idle: Vec<std::net::TcpStream> = (0..wavesh_mcp::http::MAX_CONNECTIONS + 44)
        .filter_map(|_| std::net::TcpStream::connect(("127.0.0.1", port)).ok())
        .collect();
    std::thread::sleep(wavesh_mcp::http::HEADER_TIMEOUT + std::time::Duration::from_secs(2));
    let closed = idle
        .iter()
        .filter(|stream| {
            use std::io::Read as _;
            let mut stream = *stream;
            stream
                .set_read_timeout(Some(std::time::Duration::from_millis(200)))
                .unwrap();
            match stream.read(&mut [0u8; 1]) {
                Ok(n) => n == 0,
                // Still open: nothing came within the read timeout.
                Err(e) => !matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ),
            }
        })
        .count();
    let served = request(port, "GET /other HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(closed, idle.len(), "idle connections left open");
    assert!(
        served.as_deref().is_ok_and(|line| line.contains("404")),
        "a client after the flood: {served:?}"
    );
}

/// The session limit holds for requests that arrive together (SBX-7): of 12 concurrent
/// initializes with `--http-max-sessions 2`, at most 2 get a session.
#[test]
fn sbx_7_the_session_limit_holds_under_concurrent_requests() {
    let ws = Workspace::new();
    let (mut server, port) = http_server(&ws, &["--http-max-sessions", "2"], None);
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    let text = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let answers: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..12)
            .map(|_| scope.spawn(|| request(port, &text).unwrap_or_else(|e| e.to_string())))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let _ = server.kill();
    let _ = server.wait();
    let ok = answers.iter().filter(|line| line.contains(" 200")).count();
    assert!(ok <= 2, "{ok} sessions made with a limit of 2: {answers:?}");
    assert!(ok >= 1, "no session at all: {answers:?}");
}

/// Everything under `dir`, directories included, as paths.
fn entries_under(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        out.push(entry.path().display().to_string());
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            out.extend(entries_under(&entry.path()));
        }
    }
    out
}

/// MCP-1, SBX-7: a `wavesh mcp` over stdio leaves no session directory behind when it
/// exits, whether its input closes or it gets SIGTERM: not a file, not the empty
/// directory, after read-only commands (a shell started ahead waits then), a write, a
/// persisted large output and a background task. (HTTP's sessions: `mcp_raw.py
/// http-sessions` and `http-idle`.)
#[test]
fn mcp_1_a_stdio_server_leaves_no_session_directory() {
    let one: &[&str] = &["echo hi"];
    let several: &[&str] = &[
        "echo hi",
        "echo written > made.txt && cat made.txt",
        "seq 1 200000",
        "ls",
    ];
    for (ending, commands, task) in [
        ("input closed", one, false),
        ("SIGTERM", one, false),
        ("input closed", several, true),
        ("SIGTERM", several, true),
    ] {
        let ws = Workspace::new();
        let mut mcp = crate::Mcp::start(&ws, &[]);
        for (id, command) in (2..).zip(commands) {
            let answer = mcp.tool(id, "Bash", serde_json::json!({ "command": command }));
            assert!(!answer.contains("\"isError\":true"), "{command}: {answer}");
        }
        if task {
            let task = mcp.tool(
                100,
                "Bash",
                serde_json::json!({"command": "sleep 30", "run_in_background": true}),
            );
            assert!(task.contains("background"), "{task}");
        }
        // The shell started ahead for the next read-only command is waiting by now.
        std::thread::sleep(std::time::Duration::from_millis(500));
        let during = entries_under(&ws.private);
        assert!(
            during.iter().any(|p| p.contains("-output")),
            "no output file of the session's under TMPDIR: {during:?}"
        );
        if ending == "SIGTERM" {
            rustix::process::kill_process(
                rustix::process::Pid::from_child(&mcp.child),
                rustix::process::Signal::TERM,
            )
            .unwrap();
            assert!(
                crate::util::wait_until(std::time::Duration::from_secs(10), || mcp
                    .child
                    .try_wait()
                    .unwrap()
                    .is_some()),
                "the server did not exit on SIGTERM"
            );
        } else {
            mcp.close();
        }
        // The per-user directory of every session's (`wavesh-<uid>` under TMPDIR) may
        // stay, empty; wavesh's state (`XDG_STATE_HOME/wavesh`) is not a session's.
        let bases: Vec<std::path::PathBuf> = std::fs::read_dir(&ws.private)
            .unwrap()
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| {
                path.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("wavesh-")
            })
            .collect();
        assert_eq!(bases.len(), 1, "{ending}: {bases:?}");
        let left = entries_under(&bases[0]);
        assert!(
            left.is_empty(),
            "{ending} after {commands:?}: left behind: {left:?}"
        );
    }
}
