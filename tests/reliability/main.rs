//! The reliability suite: nothing wavesh starts survives a stop, a session end or the
//! host's own death; read-only commands are sealed; bad input and hostile output get
//! clear answers while the host stays up.
//!
//! `cargo nextest run -p wavesh --test reliability` runs it at CI size. The long soak
//! (500 mixed runs instead of 40) runs with `WAVESH_SOAK=1`.
#![cfg(target_os = "linux")]
#![expect(clippy::unwrap_used, reason = "tests unwrap freely (STYLE)")]
#![allow(
    clippy::print_stdout,
    reason = "tests say SKIPPED and print the figures they measure"
)]

#[path = "../../crates/cli/tests/it/util.rs"]
#[allow(dead_code)]
mod util;

mod bad_input;
mod output;
mod processes;
mod sealed;

use std::path::Path;

use wavesh_tool::Session;

/// A session in `root` whose commands start through the supervisor, as `wavesh mcp` runs
/// them.
pub fn supervised_session(root: &Path, private: &Path) -> Session {
    Session::builder(root)
        .private_base(private)
        .no_login_env()
        .supervisor(util::WAVESH)
        .build()
        .expect("a session")
}

/// A raw JSON-RPC connection to `wavesh mcp` (no client library: the tests send exactly
/// the bytes they mean).
pub struct Mcp {
    pub child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: std::io::BufReader<std::process::ChildStdout>,
}

impl Mcp {
    /// Starts `wavesh mcp --no-login-env --cwd ROOT ARGS` and initializes it.
    pub fn start(ws: &util::Workspace, args: &[&str]) -> Mcp {
        let mut server = ws.wavesh();
        server
            .args(["mcp", "--no-login-env", "--cwd"])
            .arg(&ws.root)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null());
        let mut child = server.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut mcp = Mcp {
            child,
            stdin,
            stdout,
        };
        mcp.request(
            1,
            "initialize",
            serde_json::json!({"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "wavesh-test", "version": "0"}}),
        );
        mcp.notify("notifications/initialized");
        mcp
    }

    fn write(&mut self, message: &serde_json::Value) {
        use std::io::Write;
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Sends a notification.
    pub fn notify(&mut self, method: &str) {
        self.write(&serde_json::json!({"jsonrpc": "2.0", "method": method}));
    }

    /// Sends a request without waiting for its answer.
    pub fn send(&mut self, id: i64, method: &str, params: serde_json::Value) {
        self.write(
            &serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        );
    }

    /// The answer to request `id`; notifications before it are skipped.
    pub fn answer(&mut self, id: i64) -> serde_json::Value {
        use std::io::BufRead;
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "the server closed"
            );
            let value: serde_json::Value = serde_json::from_str(&line).unwrap();
            if value["id"] == id {
                return value;
            }
        }
    }

    /// Sends a request and waits for its answer.
    pub fn request(
        &mut self,
        id: i64,
        method: &str,
        params: serde_json::Value,
    ) -> serde_json::Value {
        self.send(id, method, params);
        self.answer(id)
    }

    /// Calls a tool; the text of its content blocks, or the whole answer for an error.
    pub fn tool(&mut self, id: i64, name: &str, arguments: serde_json::Value) -> String {
        let answer = self.request(
            id,
            "tools/call",
            serde_json::json!({"name": name, "arguments": arguments}),
        );
        answer["result"]["content"]
            .as_array()
            .map(|blocks| {
                blocks
                    .iter()
                    .filter_map(|b| b["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_else(|| answer.to_string())
    }

    /// Closes the connection and waits for the server to exit by itself.
    pub fn close(mut self) {
        // Replacing stdin with a closed pipe end drops the real one.
        let (_, closed) = std::io::pipe().unwrap();
        drop(std::mem::replace(
            &mut self.stdin,
            std::process::ChildStdin::from(std::os::fd::OwnedFd::from(closed)),
        ));
        assert!(
            util::wait_until(std::time::Duration::from_secs(5), || self
                .child
                .try_wait()
                .unwrap()
                .is_some()),
            "the server did not exit when its input closed"
        );
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
