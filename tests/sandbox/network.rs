//! The session's network (NET-1, NET-2, NET-3): a loopback of the session's own shared by
//! its commands, nothing outside reachable but through the proxy, the proxy's policy,
//! and no network at all for a command approved as read-only.
//!
//! Loopback only: the "outside" is an upstream HTTP server the test runs on the host's
//! 127.0.0.1, which the sandbox's own 127.0.0.1 is not. The proxy refuses loopback
//! addresses by default; the sessions that must reach the upstream through it allow
//! 127.0.0.1 with `NetworkSettings::allowed_addresses`, a test-only allowance, and the
//! default refusal is tested too.

use std::io::{Read, Write};
use std::net::{IpAddr, TcpListener};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use wavesh_exec::sandbox::Level;
use wavesh_tool::{BashInput, CallContext, Session, ToolConfig};

use crate::{Fixture, enforced_or_skip, isolation_or_skip};

/// An HTTP server on the host's loopback: answers `upstream says PATH`, counts the
/// connections and keeps what it received.
pub struct Upstream {
    pub port: u16,
    pub hits: Arc<AtomicUsize>,
    pub received: Arc<Mutex<Vec<u8>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Upstream {
    pub fn start() -> Upstream {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let hits = Arc::new(AtomicUsize::new(0));
        let received = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (hits, received, stop) = (hits.clone(), received.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    let Ok((mut stream, _)) = listener.accept() else {
                        std::thread::sleep(Duration::from_millis(5));
                        continue;
                    };
                    hits.fetch_add(1, Ordering::SeqCst);
                    stream.set_nonblocking(false).unwrap();
                    stream
                        .set_read_timeout(Some(Duration::from_secs(5)))
                        .unwrap();
                    let mut head = Vec::new();
                    let mut buf = [0u8; 4096];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match stream.read(&mut buf) {
                            Ok(0) | Err(_) => break,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    received.lock().unwrap().extend_from_slice(&head);
                    let text = String::from_utf8_lossy(&head).into_owned();
                    let path = text.split_whitespace().nth(1).unwrap_or("?").to_owned();
                    let body = format!("upstream says {path}\n");
                    let _ = write!(
                        stream,
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                }
            })
        };
        Upstream {
            port,
            hits,
            received,
            stop,
            thread: Some(thread),
        }
    }

    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

impl Drop for Upstream {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Whether the session's network can be had here: enforced sandbox, the supervisor's
/// isolation (its user namespaces) and Landlock's TCP rules.
pub fn network_or_skip() -> bool {
    enforced_or_skip(Level::WorkspaceWrite) && isolation_or_skip()
}

/// A supervised session at `level` with the proxy's policy set by `adjust`.
pub fn session(f: &Fixture, level: Level, adjust: impl FnOnce(&mut ToolConfig)) -> Session {
    f.session_with(level, true, adjust)
}

/// The test-only allowance: the proxy may connect to the host's 127.0.0.1.
pub fn allow_loopback(config: &mut ToolConfig) {
    config.sandbox.network.allowed_addresses = vec![IpAddr::from([127, 0, 0, 1])];
}

/// curl through the proxy to the host's 127.0.0.1 (NO_PROXY names it, for the session's
/// own servers, so it is dropped here).
fn via_proxy(flags: &str, url: &str) -> String {
    format!("env -u NO_PROXY -u no_proxy curl -sS -m 20 {flags} {url}; echo \"rc=$?\"")
}

/// NET-1: a server and its client in one command talk over the session's loopback.
#[tokio::test]
async fn net_1_loopback_bind_and_connect_in_one_command() {
    if !network_or_skip() {
        return;
    }
    let f = Fixture::new();
    let s = session(&f, Level::WorkspaceWrite, |_| {});
    let cases = [
        (
            "tcp v4",
            "python3 -c 'import socket\ns=socket.socket();s.bind((\"127.0.0.1\",0));s.listen()\n\
             c=socket.create_connection(s.getsockname());a,_=s.accept();c.send(b\"ping-v4\");print(a.recv(7).decode())'",
            "ping-v4",
        ),
        (
            "udp v4",
            "python3 -c 'import socket\ns=socket.socket(type=socket.SOCK_DGRAM);s.bind((\"127.0.0.1\",0))\n\
             c=socket.socket(type=socket.SOCK_DGRAM);c.sendto(b\"ping-udp\",s.getsockname());print(s.recv(8).decode())'",
            "ping-udp",
        ),
        (
            "http server and curl",
            "cd \"$TMPDIR\" && echo served-file > f.txt && (python3 -m http.server 18080 --bind 127.0.0.1 >/dev/null 2>&1 & echo $! > pid) \
             && for i in $(seq 50); do curl -s --noproxy '*' http://127.0.0.1:18080/f.txt && break; sleep 0.1; done; kill $(cat pid)",
            "served-file",
        ),
    ];
    for (name, command, expect) in cases {
        let result = f.run(&s, command).await;
        assert!(result.text.contains(expect), "{name}: {}", result.text);
    }
    s.shutdown().await;
}

/// NET-1: a server started by one call, as a background task, answers the next call.
#[tokio::test]
async fn net_1_a_background_server_answers_the_next_call() {
    if !network_or_skip() {
        return;
    }
    let f = Fixture::new();
    std::fs::write(f.ws.join("page.txt"), "from-the-dev-server\n").unwrap();
    let s = session(&f, Level::WorkspaceWrite, |_| {});
    for (port, server) in [
        (18081, "python3 -m http.server 18081 --bind 127.0.0.1"),
        (
            18082,
            "python3 -c 'import socket\ns=socket.socket();s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n\
             s.bind((\"127.0.0.1\",18082));s.listen()\nwhile True:\n a,_=s.accept();a.recv(999);a.send(b\"HTTP/1.0 200 OK\\r\\n\\r\\nfrom-the-dev-server\\n\");a.close()'",
        ),
    ] {
        let input = BashInput {
            run_in_background: true,
            ..BashInput::new(server)
        };
        let started = s.bash(input, &CallContext::default()).await.unwrap();
        assert!(started.text.contains("ID"), "{}", started.text);
        let client = format!(
            "for i in $(seq 100); do curl -s --noproxy '*' http://127.0.0.1:{port}/page.txt && break; sleep 0.1; done"
        );
        let result = f.run(&s, &client).await;
        assert!(
            result.text.contains("from-the-dev-server"),
            "port {port}: {}",
            result.text
        );
        // The server's namespace is the session's, not the host's.
        assert!(
            std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
            "the session's server is reachable from the host on port {port}"
        );
    }
    s.shutdown().await;
}

/// NET-1: nothing outside the session's namespace is reachable directly, and a client
/// that tries fails at once, whatever it uses.
#[tokio::test]
async fn net_1_nothing_outside_is_reachable_directly() {
    if !network_or_skip() {
        return;
    }
    let up = Upstream::start();
    let f = Fixture::new();
    let s = session(&f, Level::WorkspaceWrite, allow_loopback);
    let port = up.port;
    let cases = [
        format!("curl -sS -m 5 --noproxy '*' http://127.0.0.1:{port}/direct"),
        format!(
            "python3 -c 'import socket;socket.create_connection((\"127.0.0.1\",{port}),timeout=5)'"
        ),
        format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"),
        // A client that ignores the proxy variables has no route and no resolver.
        "curl -sS -m 20 --noproxy '*' https://static.crates.io/".to_owned(),
        "python3 -c 'import socket;socket.create_connection((\"1.1.1.1\",443),timeout=20)'"
            .to_owned(),
        "python3 -c 'import socket;socket.getaddrinfo(\"crates.io\",443)'".to_owned(),
    ];
    for command in &cases {
        let started = Instant::now();
        let result = f.run(&s, &format!("{command}; echo rc=$?")).await;
        assert!(
            !result.text.contains("rc=0") && !result.text.contains("connected"),
            "{command}: {}",
            result.text
        );
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{command} took {:?}: {}",
            started.elapsed(),
            result.text
        );
    }
    assert_eq!(up.hits(), 0, "the host's listener was reached directly");
    s.shutdown().await;
}

/// NET-2: an allowed host through the proxy, by plain HTTP and by CONNECT; the
/// variables that point clients at it.
#[tokio::test]
async fn net_2_an_allowed_host_is_reached_through_the_proxy() {
    if !network_or_skip() {
        return;
    }
    let up = Upstream::start();
    let f = Fixture::new();
    let port = up.port;
    let s = session(&f, Level::WorkspaceWrite, |config| {
        allow_loopback(config);
        config.sandbox.network.allowed_domains = vec![format!("127.0.0.1:{port}")];
    });
    let env = f
        .run(&s, "echo $HTTP_PROXY $https_proxy $ALL_PROXY $NO_PROXY")
        .await;
    assert!(
        env.text.contains("http://127.0.0.1:39080 http://127.0.0.1:39080 http://127.0.0.1:39080 localhost,127.0.0.1,::1"),
        "{}",
        env.text
    );
    for (how, command, path) in [
        (
            "http",
            via_proxy("", &format!("http://127.0.0.1:{port}/plain")),
            "/plain",
        ),
        (
            "connect",
            via_proxy("-p", &format!("http://127.0.0.1:{port}/tunnel")),
            "/tunnel",
        ),
        (
            "python urllib",
            format!(
                "env -u NO_PROXY -u no_proxy python3 -c 'import urllib.request;print(urllib.request.urlopen(\"http://127.0.0.1:{port}/urllib\").read().decode())'"
            ),
            "/urllib",
        ),
    ] {
        let result = f.run(&s, &command).await;
        assert!(
            result.text.contains(&format!("upstream says {path}")),
            "{how}: {}",
            result.text
        );
        assert!(!result.text.contains("refused"), "{how}: {}", result.text);
    }
    assert_eq!(up.hits(), 3);
    // Plain HTTP reaches the upstream in origin form, one request per connection.
    let received = String::from_utf8_lossy(&up.received.lock().unwrap()).into_owned();
    assert!(received.contains("GET /plain HTTP/1.1\r\n"), "{received}");
    assert!(
        !received.to_ascii_lowercase().contains("proxy-connection"),
        "{received}"
    );
    s.shutdown().await;
}

/// A change to a session's configuration.
type Adjust = Box<dyn FnOnce(&mut ToolConfig)>;

/// NET-2: refusals: a host nobody allowed, a denied one (deny wins over allow), a name
/// allowed that resolves to loopback (the default refusal, no test allowance), each a
/// 403 naming the host and the setting, and a note in the result naming it (SBX-4).
#[tokio::test]
async fn net_2_refusals_name_the_host_and_the_setting() {
    if !network_or_skip() {
        return;
    }
    let up = Upstream::start();
    let f = Fixture::new();
    let port = up.port;
    let other = port.wrapping_add(1).max(1024);
    let cases: Vec<(&str, Adjust, String, Vec<String>)> = vec![
        (
            "not allowed",
            Box::new(allow_loopback),
            via_proxy("", &format!("http://127.0.0.1:{port}/x")),
            vec![
                format!("127.0.0.1:{port} is not allowed"),
                "sandbox.network.allowedDomains".to_owned(),
            ],
        ),
        (
            "not allowed by CONNECT, other port allowed",
            Box::new(move |c: &mut ToolConfig| {
                allow_loopback(c);
                c.sandbox.network.allowed_domains = vec![format!("127.0.0.1:{other}")];
            }),
            via_proxy("-p", &format!("http://127.0.0.1:{port}/x")),
            vec![format!("127.0.0.1:{port} is not allowed")],
        ),
        (
            "deny wins",
            Box::new(move |c: &mut ToolConfig| {
                allow_loopback(c);
                c.sandbox.network.allowed_domains = vec![format!("127.0.0.1:{port}")];
                c.sandbox.network.denied_domains = vec!["127.0.0.1:*".to_owned()];
            }),
            via_proxy("", &format!("http://127.0.0.1:{port}/x")),
            vec![
                format!("127.0.0.1:{port} is denied"),
                "deniedDomains entry \"127.0.0.1:*\"".to_owned(),
            ],
        ),
        (
            "a wildcard deny wins over a wildcard allow",
            Box::new(|c: &mut ToolConfig| {
                c.sandbox.network.allowed_domains = vec!["*.crates.io".to_owned()];
                c.sandbox.network.denied_domains = vec!["*.crates.io".to_owned()];
            }),
            "curl -sS -m 20 -o /dev/null https://static.crates.io/x; echo rc=$?".to_owned(),
            vec!["static.crates.io:443 is denied".to_owned()],
        ),
        (
            "a name resolving to loopback",
            Box::new(move |c: &mut ToolConfig| {
                c.sandbox.network.allowed_domains = vec![format!("localhost:{port}")];
            }),
            via_proxy("", &format!("http://localhost:{port}/x")),
            vec![
                format!("localhost:{port} resolves to"),
                "never connects to".to_owned(),
            ],
        ),
        (
            "a loopback address allowed by name only",
            Box::new(move |c: &mut ToolConfig| {
                c.sandbox.network.allowed_domains = vec![format!("127.0.0.1:{port}")];
            }),
            via_proxy("-p", &format!("http://127.0.0.1:{port}/x")),
            vec![format!("127.0.0.1:{port} resolves to 127.0.0.1")],
        ),
        (
            "metadata",
            Box::new(|c: &mut ToolConfig| {
                c.sandbox.network.allowed_domains = vec!["169.254.169.254".to_owned()];
            }),
            via_proxy("", "http://169.254.169.254/latest/meta-data/"),
            vec!["169.254.169.254:80 resolves to 169.254.169.254".to_owned()],
        ),
    ];
    // What the model reads for each refusal, pinned (OUT, SBX-4): the ports masked.
    let mut transcript = String::new();
    for (name, adjust, command, says) in cases {
        let s = session(&f, Level::WorkspaceWrite, adjust);
        let started = Instant::now();
        let result = f.run(&s, &command).await;
        let mask = |text: &str| {
            text.replace(&other.to_string(), "[OTHER-PORT]")
                .replace(&port.to_string(), "[PORT]")
        };
        transcript.push_str(&format!(
            "### {name}\n$ {}\n{}\n\n",
            mask(&command),
            mask(&result.text)
        ));
        assert!(started.elapsed() < Duration::from_secs(10), "{name}: slow");
        let note = result
            .text
            .lines()
            .find(|l| l.starts_with("The sandbox's network proxy refused:"))
            .unwrap_or_else(|| panic!("{name}: no refusal note: {}", result.text));
        // The refusal's words are in the result: in the note, or in the output where the
        // client printed the proxy's answer (the note then names the host only, and the
        // words are not said twice).
        for said in &says {
            assert!(
                result.text.contains(said.as_str()),
                "{name}: {said:?} not in {}",
                result.text
            );
            if !note.contains(said.as_str()) {
                assert!(
                    note.contains("the output above says why")
                        && result.text.matches(said.as_str()).count() == 1,
                    "{name}: {note}"
                );
            }
        }
        s.shutdown().await;
    }
    assert_eq!(up.hits(), 0, "a refused request reached the upstream");
    // A program that ignores the proxy: no route out of the session's namespace, and a
    // note that says what does reach the network (NET-1).
    let s = session(&f, Level::WorkspaceWrite, |_| {});
    let direct = "curl -sS -m 5 --noproxy '*' http://192.0.2.1/; echo \"rc=$?\"";
    let result = f.run(&s, direct).await;
    assert!(
        result.text.contains("a direct network connection"),
        "a direct connection got no note: {}",
        result.text
    );
    transcript.push_str(&format!(
        "### a direct connection\n$ {direct}\n{}\n",
        result.text
    ));
    s.shutdown().await;
    insta::assert_snapshot!("network-refusals", transcript);
}

/// NET-2: a malformed request gets a clear error at once, never a hang.
#[tokio::test]
async fn net_2_malformed_requests_get_an_error() {
    if !network_or_skip() {
        return;
    }
    let f = Fixture::new();
    let s = session(&f, Level::WorkspaceWrite, |_| {});
    let raw = |bytes: &str| {
        format!(
            "python3 -c 'import socket\nc=socket.create_connection((\"127.0.0.1\",39080),timeout=10)\n\
             c.sendall({bytes});c.shutdown(socket.SHUT_WR)\nprint(c.recv(4096).decode(errors=\"replace\"))'"
        )
    };
    for (name, bytes, says) in [
        (
            "connect without a port",
            r#"b"CONNECT example.com HTTP/1.1\r\n\r\n""#,
            "400 Bad Request",
        ),
        (
            "connect with a bad port",
            r#"b"CONNECT example.com:99999 HTTP/1.1\r\n\r\n""#,
            "CONNECT needs host:port",
        ),
        (
            "origin form",
            r#"b"GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n""#,
            "not an absolute http:// URI",
        ),
        (
            "tls to the proxy",
            r#"b"\x16\x03\x01\x00\x05hello\r\n\r\n""#,
            "malformed request",
        ),
        (
            "cut short",
            r#"b"CONNECT example.com:443 HTTP/1.1\r\n""#,
            "closed before the request head ended",
        ),
    ] {
        let started = Instant::now();
        let result = f.run(&s, &raw(bytes)).await;
        assert!(result.text.contains(says), "{name}: {}", result.text);
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{name}: took {:?}",
            started.elapsed()
        );
    }
    s.shutdown().await;
}

/// NET-3: a command approved as read-only has no network: no socket, so neither the
/// proxy's ports nor the session's own servers.
#[tokio::test]
async fn net_3_a_read_only_command_cannot_use_the_proxy() {
    if !network_or_skip() {
        return;
    }
    let up = Upstream::start();
    let f = Fixture::new();
    let port = up.port;
    let s = session(&f, Level::ReadOnly, |config| {
        allow_loopback(config);
        config.sandbox.network.allowed_domains = vec![format!("127.0.0.1:{port}")];
    });
    for command in [
        via_proxy("", &format!("http://127.0.0.1:{port}/ro")),
        via_proxy("-p", &format!("http://127.0.0.1:{port}/ro")),
        "curl -sS -m 5 -x http://127.0.0.1:39081 https://api.github.com/; echo rc=$?".to_owned(),
        "python3 -c 'import socket;socket.create_connection((\"127.0.0.1\",39080),timeout=5)'; echo rc=$?"
            .to_owned(),
        "python3 -c 'import socket;socket.create_connection((\"127.0.0.1\",39081),timeout=5)'; echo rc=$?"
            .to_owned(),
    ] {
        let result = f.run(&s, &command).await;
        assert!(!result.text.contains("rc=0"), "{command}: {}", result.text);
        assert!(!result.text.contains("upstream says"), "{command}: {}", result.text);
    }
    assert_eq!(up.hits(), 0);
    s.shutdown().await;
}

/// NET-1: the escape suite's network attacks in a session with its own network: what
/// its loopback lets through stays there (the host's listeners on 127.0.0.1 and ::1, a
/// UDP one and a unix socket outside receive nothing), and raw, netlink and unix sockets
/// stay refused.
#[tokio::test]
async fn net_1_escape_attacks_reach_nothing_outside() {
    if !network_or_skip() {
        return;
    }
    let f = Fixture::new();
    let tcp4 = TcpListener::bind("127.0.0.1:0").unwrap();
    tcp4.set_nonblocking(true).unwrap();
    let tcp6 = TcpListener::bind("[::1]:0").ok();
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let agent_path = f.outside.join("agent.sock");
    let agent = std::os::unix::net::UnixListener::bind(&agent_path).unwrap();
    agent.set_nonblocking(true).unwrap();
    let (p4, pu) = (
        tcp4.local_addr().unwrap().port(),
        udp.local_addr().unwrap().port(),
    );
    let py = |body: String| {
        format!(
            "python3 -c \"import socket\ntry:\n{body}\n print('SENT')\nexcept OSError as e: print('refused:', e.strerror)\""
        )
    };
    let mut attacks = vec![
        (
            format!("exec 3<>/dev/tcp/127.0.0.1/{p4} && echo SENT"),
            None,
        ),
        (
            py(format!(" socket.create_connection(('127.0.0.1', {p4}), 2)")),
            None,
        ),
        (format!("echo leak > /dev/udp/127.0.0.1/{pu}"), None),
        (
            py(format!(
                " socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'leak', ('127.0.0.1', {pu}))"
            )),
            None,
        ),
        (
            "getent hosts example.com && echo RESOLVED".to_owned(),
            Some("RESOLVED"),
        ),
        (
            py(" socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)".into()),
            Some("SENT"),
        ),
        (
            py(" socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)".into()),
            Some("SENT"),
        ),
        (
            py(format!(
                " socket.socket(socket.AF_UNIX).connect('{}')",
                agent_path.display()
            )),
            Some("SENT"),
        ),
    ];
    if let Some(tcp6) = &tcp6 {
        tcp6.set_nonblocking(true).unwrap();
        let p6 = tcp6.local_addr().unwrap().port();
        attacks.push((
            py(format!(" socket.create_connection(('::1', {p6}), 2)")),
            None,
        ));
    }
    let s = session(&f, Level::WorkspaceWrite, |_| {});
    for (command, never) in &attacks {
        let result = f.run(&s, command).await;
        if let Some(never) = never {
            assert!(!result.text.contains(never), "{command}: {}", result.text);
        }
    }
    s.shutdown().await;
    assert!(tcp4.accept().is_err(), "a TCP v4 connection came through");
    if let Some(tcp6) = &tcp6 {
        assert!(tcp6.accept().is_err(), "a TCP v6 connection came through");
    }
    assert!(
        udp.recv_from(&mut [0u8; 64]).is_err(),
        "a datagram came through"
    );
    assert!(
        agent.accept().is_err(),
        "the unix socket outside was reached"
    );
}

/// NET-1, SBX-5: where the session's namespace cannot be made (an ordinary user without
/// user namespaces, the `no-userns` mode), sandboxed commands keep no network at all,
/// the first result says why, and a strict session refuses to start. Where it can be
/// made, the session must have it: a namespace silently missing is a failure.
#[tokio::test]
async fn net_1_without_a_namespace_the_network_is_off_and_said() {
    // Seccomp and Landlock are what keep the network off without the namespace; the
    // mount guarantees a mode without user namespaces lacks at `workspace-write` are
    // not in question here.
    if !enforced_or_skip(Level::ReadOnly) {
        return;
    }
    let namespaces = wavesh_exec::sandbox::probe_namespaces().network_namespace == Some(true);
    let f = Fixture::new();
    let s = session(&f, Level::WorkspaceWrite, |_| {});
    let probe = "python3 -c 'import socket;socket.socket()' && echo SOCKET-OK";
    // The raw text: the note under test is one the other tests strip in this mode.
    let result = f.run_raw(&s, probe).await;
    let second = f.run_raw(&s, "echo again").await;
    s.shutdown().await;
    if namespaces {
        assert!(result.text.contains("SOCKET-OK"), "{}", result.text);
        assert!(
            !result.text.contains("no network of its own"),
            "{}",
            result.text
        );
        return;
    }
    assert!(!result.text.contains("SOCKET-OK"), "{}", result.text);
    assert!(
        result
            .text
            .contains("The session has no network of its own ("),
        "{}",
        result.text
    );
    assert!(
        !second.text.contains("no network of its own"),
        "{}",
        second.text
    );
    let mut config = ToolConfig::default();
    config.sandbox.level = Level::WorkspaceWrite;
    config.sandbox.strict = true;
    let mut builder = Session::builder(&f.ws);
    builder
        .private_base(&f.private)
        .no_login_env()
        .home(&f.home)
        .sandbox_level(Level::WorkspaceWrite)
        .no_claude_settings()
        .config(config)
        .supervisor(crate::util::WAVESH);
    let error = builder.build().map(drop).unwrap_err().to_string();
    assert!(
        error.contains("network namespace cannot be made") && error.contains("strict"),
        "{error}"
    );
}

/// NET-3: a command approved as read-only that reads over the network (`gh pr view`; the
/// executor's `Request::network`) reaches the proxy's read port and nothing else: the
/// read port refuses every host but api.github.com, and Landlock refuses a connection to
/// the session's port and to the session's own servers. The same request at
/// `workspace-write` reaches the upstream, so the refusals are the scope's.
#[tokio::test]
async fn net_3_a_read_only_read_reaches_the_read_port_only() {
    use wavesh_exec::net::{NetPolicy, Proxy, ProxyRuntime, Scope, SessionNetwork};
    use wavesh_exec::supervisor::{Options, SupervisedSignaller, SupervisedSpawner, Supervisor};
    use wavesh_exec::{
        Controls, Executor, Mode, OnTimeout, Outcome, PrivateDir, Request, TaskManager,
    };
    if !network_or_skip() {
        return;
    }
    let up = Upstream::start();
    let f = Fixture::new();
    let supervisor = Supervisor::start_with(
        crate::util::WAVESH,
        &Options {
            network: true,
            ..Options::default()
        },
    )
    .unwrap();
    assert_eq!(supervisor.network_ready(), Ok(true));
    let runtime = Arc::new(ProxyRuntime::start().unwrap());
    let proxy = Proxy::new(NetPolicy {
        allowed: vec![
            wavesh_exec::net::DomainPattern::parse(&format!("127.0.0.1:{}", up.port)).unwrap(),
        ],
        allowed_addresses: vec![IpAddr::from([127, 0, 0, 1])],
        ..NetPolicy::default()
    });
    let (serving, handle) = (proxy.clone(), runtime.handle());
    supervisor.on_network(move |[session, read]| {
        serving
            .serve(session.into(), Scope::Session, &handle)
            .unwrap();
        serving.serve(read.into(), Scope::Read, &handle).unwrap();
    });
    let signaller: Arc<dyn wavesh_exec::Signaller> = Arc::new(SupervisedSignaller::new(
        supervisor.clone(),
        Arc::new(wavesh_exec::PosixSignaller),
    ));
    let dir = Arc::new(PrivateDir::create(Some(&f.private)).unwrap());
    let own = dir.path().to_path_buf();
    let mut executor = Executor::new(
        wavesh_exec::resolve_default_shell().unwrap(),
        dir,
        Arc::new(SupervisedSpawner::new(supervisor)),
        signaller.clone(),
    );
    executor.set_sandbox(wavesh_exec::sandbox::SandboxConfig {
        roots: vec![f.ws.clone()],
        private_dir: Some(own),
        ..wavesh_exec::sandbox::SandboxConfig::default()
    });
    executor.set_network(Some(SessionNetwork {
        proxy: proxy.clone(),
        runtime,
    }));
    let tasks = TaskManager::new(signaller);
    let run = |level: Level, command: String| {
        let request = Request {
            command,
            cwd: f.ws.clone(),
            mode: Mode::Foreground {
                timeout: Duration::from_secs(60),
                on_timeout: OnTimeout::Kill,
            },
            env: Vec::new(),
            sandbox: level,
            network: true,
            roots: Vec::new(),
            tty: None,
        };
        let (executor, tasks) = (&executor, &tasks);
        async move {
            match executor
                .run(request, &Controls::default(), tasks)
                .await
                .unwrap()
            {
                Outcome::Finished(done) => {
                    String::from_utf8_lossy(&done.output.read_head(1 << 16).unwrap()).into_owned()
                }
                Outcome::Backgrounded(_) => panic!("moved to the background"),
            }
        }
    };
    let port = up.port;
    let through = format!(
        "env -u NO_PROXY -u no_proxy curl -sS -m 10 http://127.0.0.1:{port}/read; echo rc=$?"
    );
    let read_only = run(Level::ReadOnly, format!("echo $HTTPS_PROXY; {through}")).await;
    assert!(read_only.contains("http://127.0.0.1:39081"), "{read_only}");
    assert!(
        read_only.contains("reaches only api.github.com"),
        "{read_only}"
    );
    for other in [39080, 18090] {
        let direct = run(
            Level::ReadOnly,
            format!("python3 -c 'import socket;socket.create_connection((\"127.0.0.1\",{other}),timeout=5)'; echo rc=$?"),
        )
        .await;
        assert!(
            direct.contains("Permission denied") && !direct.contains("rc=0"),
            "port {other}: {direct}"
        );
    }
    let refusals = proxy.refusals_since(Scope::Read, Instant::now() - Duration::from_secs(600));
    assert_eq!(refusals.len(), 1, "{refusals:?}");
    assert_eq!(up.hits(), 0);
    let approved = run(Level::WorkspaceWrite, through.clone()).await;
    assert!(approved.contains("upstream says /read"), "{approved}");
    assert_eq!(up.hits(), 1);
}
