//! The session's egress proxy (NET-2): HTTP with absolute URIs and HTTPS by CONNECT,
//! in the host, accepting on the listeners the helper's zygote made inside the session's
//! network namespace. Which listener a connection came in on says which policy applies
//! (NET-3): the kernel decides who can reach which one, never the client.

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::policy::{NetPolicy, Refused, Scope};

/// The most a request head may take.
const MAX_HEAD: usize = 64 * 1024;
/// How long a client gets to send its request head.
const HEAD_WAIT: Duration = Duration::from_secs(30);
/// How long a name may take to resolve, and an upstream to accept.
const UPSTREAM_WAIT: Duration = Duration::from_secs(15);
/// Refusals kept for the results' notes.
const MAX_REFUSALS: usize = 256;

/// One refused request, for the note of the command that made it (SBX-4).
#[derive(Debug, Clone)]
pub struct Refusal {
    /// When.
    pub at: Instant,
    /// Through which listener.
    pub scope: Scope,
    /// The host asked for.
    pub host: String,
    /// The refusal in words.
    pub reason: String,
}

/// The proxy: its policy and what it refused.
pub struct Proxy {
    policy: NetPolicy,
    refusals: Mutex<Vec<Refusal>>,
    /// Who to ask about a host no rule allows (`net::ask`), if anyone.
    pub(super) asker: Mutex<Option<super::ask::HostAsker>>,
    /// Hosts the user granted for the session (true) or declined (false).
    pub(super) answered: Mutex<Vec<((String, u16), bool)>>,
    /// One question at a time.
    pub(super) asking: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxy")
            .field("policy", &self.policy)
            .field("asks", &self.has_asker())
            .finish_non_exhaustive()
    }
}

impl Proxy {
    /// A proxy applying `policy`.
    pub fn new(policy: NetPolicy) -> Arc<Proxy> {
        Arc::new(Proxy {
            policy,
            refusals: Mutex::new(Vec::new()),
            asker: Mutex::new(None),
            answered: Mutex::new(Vec::new()),
            asking: tokio::sync::Mutex::new(()),
        })
    }

    /// Its policy.
    pub fn policy(&self) -> &NetPolicy {
        &self.policy
    }

    /// The refusals through `scope`'s listener since `since`.
    pub fn refusals_since(&self, scope: Scope, since: Instant) -> Vec<Refusal> {
        self.refusals
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|r| r.scope == scope && r.at >= since)
            .cloned()
            .collect()
    }

    fn refused(&self, scope: Scope, host: &str, reason: String) {
        tracing::info!(host, %reason, "the session's proxy refused a request");
        let mut refusals = self.refusals.lock().unwrap_or_else(PoisonError::into_inner);
        if refusals.len() >= MAX_REFUSALS {
            refusals.remove(0);
        }
        refusals.push(Refusal {
            at: Instant::now(),
            scope,
            host: host.to_owned(),
            reason,
        });
    }

    /// Accepts on `listener` (made inside the namespace) with `scope`'s policy, on
    /// `runtime`, until the listener fails.
    pub fn serve(
        self: &Arc<Self>,
        listener: std::net::TcpListener,
        scope: Scope,
        runtime: &tokio::runtime::Handle,
    ) -> std::io::Result<()> {
        listener.set_nonblocking(true)?;
        let proxy = Arc::clone(self);
        let _guard = runtime.enter();
        let listener = TcpListener::from_std(listener)?;
        runtime.spawn(async move {
            loop {
                match listener.accept().await {
                    Ok((client, _)) => {
                        let proxy = Arc::clone(&proxy);
                        tokio::spawn(async move { proxy.handle(client, scope).await });
                    }
                    Err(error) => {
                        tracing::warn!(%error, "the session's proxy stopped accepting");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                }
            }
        });
        Ok(())
    }

    async fn handle(&self, mut client: TcpStream, scope: Scope) {
        let head = match tokio::time::timeout(HEAD_WAIT, read_head(&mut client)).await {
            Ok(Ok(head)) => head,
            Ok(Err(message)) => {
                let _ = respond(&mut client, 400, "Bad Request", &message).await;
                return;
            }
            Err(_) => {
                let _ = respond(
                    &mut client,
                    408,
                    "Request Timeout",
                    "no complete request head within 30 s",
                )
                .await;
                return;
            }
        };
        let (request, rest) = match parse(&head) {
            Ok(parsed) => parsed,
            Err(message) => {
                let _ = respond(&mut client, 400, "Bad Request", &message).await;
                return;
            }
        };
        if let Err(refused) = self.policy.check(scope, &request.host, request.port) {
            use super::ask::Outcome;
            let asked = match refused {
                Refused::NotAllowed => self.ask_about(scope, &request.host, request.port).await,
                _ => Outcome::NobodyToAsk,
            };
            match asked {
                Outcome::Granted => {}
                Outcome::Declined => {
                    self.refuse(&mut client, scope, &request, &Refused::Declined)
                        .await;
                    return;
                }
                Outcome::NobodyToAsk => {
                    self.refuse(&mut client, scope, &request, &refused).await;
                    return;
                }
            }
        }
        let upstream = match self.connect(&request).await {
            Ok(upstream) => upstream,
            Err(Failure::Refused(refused)) => {
                self.refuse(&mut client, scope, &request, &refused).await;
                return;
            }
            Err(Failure::Unreachable(message)) => {
                let _ = respond(&mut client, 502, "Bad Gateway", &message).await;
                return;
            }
        };
        let mut upstream = upstream;
        let sent = if request.connect {
            client
                .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                .await
        } else {
            upstream.write_all(&request.forward).await
        };
        if sent.is_err() || upstream.write_all(&head[rest..]).await.is_err() {
            return;
        }
        let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
    }

    async fn refuse(
        &self,
        client: &mut TcpStream,
        scope: Scope,
        request: &Request,
        refused: &Refused,
    ) {
        let reason = refused.explain(&request.host, request.port);
        self.refused(scope, &request.host, reason.clone());
        let _ = respond(client, 403, "Forbidden", &format!("wavesh proxy: {reason}")).await;
    }

    /// Resolves the name once, refuses the forbidden addresses, connects to an address
    /// resolved (never to the name again).
    async fn connect(&self, request: &Request) -> Result<TcpStream, Failure> {
        let addresses: Vec<SocketAddr> = match request.host.parse::<IpAddr>() {
            Ok(ip) => vec![SocketAddr::new(ip, request.port)],
            Err(_) => {
                let lookup = tokio::net::lookup_host((request.host.as_str(), request.port));
                match tokio::time::timeout(UPSTREAM_WAIT, lookup).await {
                    Ok(Ok(found)) => found.collect(),
                    Ok(Err(error)) => {
                        return Err(Failure::Unreachable(format!(
                            "wavesh proxy: cannot resolve {}: {error}",
                            request.host
                        )));
                    }
                    Err(_) => {
                        return Err(Failure::Unreachable(format!(
                            "wavesh proxy: resolving {} took over {} s",
                            request.host,
                            UPSTREAM_WAIT.as_secs()
                        )));
                    }
                }
            }
        };
        // A name with any forbidden address is refused as a whole: a resolver that mixes
        // them in is no better than one that gives only them.
        if let Some(bad) = addresses
            .iter()
            .find(|a| self.policy.refuses_address(a.ip()))
        {
            return Err(Failure::Refused(Refused::Address(bad.ip())));
        }
        let mut last = format!("wavesh proxy: {} has no address", request.host);
        for address in addresses {
            match tokio::time::timeout(UPSTREAM_WAIT, TcpStream::connect(address)).await {
                Ok(Ok(stream)) => return Ok(stream),
                Ok(Err(error)) => {
                    last = format!(
                        "wavesh proxy: cannot connect to {} ({address}): {error}",
                        request.host
                    );
                }
                Err(_) => {
                    last = format!(
                        "wavesh proxy: {} ({address}) did not accept within {} s",
                        request.host,
                        UPSTREAM_WAIT.as_secs()
                    );
                }
            }
        }
        Err(Failure::Unreachable(last))
    }
}

enum Failure {
    Refused(Refused),
    Unreachable(String),
}

/// A parsed proxy request.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Request {
    pub(crate) connect: bool,
    pub(crate) host: String,
    pub(crate) port: u16,
    /// For plain HTTP: the head to send upstream (origin-form, one request, closed after).
    pub(crate) forward: Vec<u8>,
}

/// Reads up to the end of the request head (`\r\n\r\n`); what follows stays in the
/// buffer.
async fn read_head(client: &mut TcpStream) -> Result<Vec<u8>, String> {
    let mut head = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        let n = client
            .read(&mut chunk)
            .await
            .map_err(|e| format!("reading the request: {e}"))?;
        if n == 0 {
            return Err("the connection closed before the request head ended".to_owned());
        }
        head.extend_from_slice(&chunk[..n]);
        if head.windows(4).any(|w| w == b"\r\n\r\n") {
            return Ok(head);
        }
        if head.len() > MAX_HEAD {
            return Err(format!("the request head is over {} KiB", MAX_HEAD / 1024));
        }
    }
}

/// Parses a proxy request head: `CONNECT host:port` or an absolute `http://` URI.
/// Returns it and where the bytes after the head start.
pub(crate) fn parse(head: &[u8]) -> Result<(Request, usize), String> {
    let mut headers = [httparse::EMPTY_HEADER; 128];
    let mut parsed = httparse::Request::new(&mut headers);
    let end = match parsed.parse(head) {
        Ok(httparse::Status::Complete(end)) => end,
        Ok(httparse::Status::Partial) => return Err("an incomplete request head".to_owned()),
        Err(error) => return Err(format!("a malformed request: {error}")),
    };
    let method = parsed.method.unwrap_or_default();
    let target = parsed.path.unwrap_or_default();
    if method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) = split_authority(target, None)
            .ok_or_else(|| format!("CONNECT needs host:port, not {target:?}"))?;
        return Ok((
            Request {
                connect: true,
                host,
                port,
                forward: Vec::new(),
            },
            end,
        ));
    }
    let Some(rest) = target
        .strip_prefix("http://")
        .or_else(|| target.strip_prefix("HTTP://"))
    else {
        return Err(if target.starts_with("https://") {
            format!("{target:?}: HTTPS goes through CONNECT (set HTTPS_PROXY)")
        } else {
            format!(
                "{target:?} is not an absolute http:// URI: this is a proxy (HTTP_PROXY), \
                 not a server"
            )
        });
    };
    let (authority, path) = match rest.find(['/', '?']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let (host, port) =
        split_authority(authority, Some(80)).ok_or_else(|| format!("{target:?} names no host"))?;
    let path = if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_owned()
    };
    let mut forward = format!("{method} {path} HTTP/1.1\r\n").into_bytes();
    let mut has_host = false;
    for header in parsed.headers.iter() {
        let name = header.name.to_ascii_lowercase();
        if matches!(
            name.as_str(),
            "proxy-connection" | "proxy-authorization" | "connection" | "keep-alive"
        ) {
            continue;
        }
        has_host |= name == "host";
        forward.extend_from_slice(header.name.as_bytes());
        forward.extend_from_slice(b": ");
        forward.extend_from_slice(header.value);
        forward.extend_from_slice(b"\r\n");
    }
    if !has_host {
        forward.extend_from_slice(format!("Host: {authority}\r\n").as_bytes());
    }
    forward.extend_from_slice(b"Connection: close\r\n\r\n");
    Ok((
        Request {
            connect: false,
            host,
            port,
            forward,
        },
        end,
    ))
}

/// `host:port`, `[v6]:port`, or a bare host with `default` port.
fn split_authority(authority: &str, default: Option<u16>) -> Option<(String, u16)> {
    if authority.contains('@') {
        return None;
    }
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        match after.strip_prefix(':') {
            Some(port) => (host, Some(port)),
            None if after.is_empty() => (host, None),
            None => return None,
        }
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    let port = match port {
        Some(port) => port.parse::<u16>().ok().filter(|p| *p != 0)?,
        None => default?,
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let valid = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | ':'));
    valid.then_some((host, port))
}

async fn respond(
    client: &mut TcpStream,
    code: u16,
    reason: &str,
    body: &str,
) -> std::io::Result<()> {
    let body = format!("{body}\n");
    let response = format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    client.write_all(response.as_bytes()).await?;
    client.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NET-2: what the proxy accepts, and a clear error for the rest.
    #[test]
    fn net2_requests_are_parsed_or_named() {
        let (r, end) =
            parse(b"CONNECT static.crates.io:443 HTTP/1.1\r\nHost: x\r\n\r\nabc").unwrap();
        assert!(r.connect);
        assert_eq!(
            (r.host.as_str(), r.port, end),
            ("static.crates.io", 443, 50)
        );
        let (r, _) = parse(b"GET http://Example.com:8080/a?b HTTP/1.1\r\nHost: example.com:8080\r\nProxy-Connection: keep-alive\r\n\r\n").unwrap();
        assert_eq!((r.host.as_str(), r.port), ("example.com", 8080));
        let text = String::from_utf8(r.forward).unwrap();
        assert!(text.starts_with("GET /a?b HTTP/1.1\r\n"), "{text}");
        assert!(
            !text.to_ascii_lowercase().contains("proxy-connection"),
            "{text}"
        );
        assert!(text.ends_with("Connection: close\r\n\r\n"), "{text}");
        let (r, _) = parse(b"GET http://[::1]/ HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!((r.host.as_str(), r.port), ("::1", 80));
        let (r, _) = parse(b"HEAD http://h.test?q HTTP/1.1\r\n\r\n").unwrap();
        assert!(
            String::from_utf8(r.forward)
                .unwrap()
                .starts_with("HEAD /?q HTTP/1.1\r\nHost: h.test\r\n")
        );
        for (bad, says) in [
            (&b"CONNECT example.com HTTP/1.1\r\n\r\n"[..], "host:port"),
            (b"CONNECT :443 HTTP/1.1\r\n\r\n", "host:port"),
            (b"CONNECT a.com:99999 HTTP/1.1\r\n\r\n", "host:port"),
            (b"CONNECT user@a.com:443 HTTP/1.1\r\n\r\n", "host:port"),
            (b"GET / HTTP/1.1\r\n\r\n", "not an absolute"),
            (b"GET https://a.com/ HTTP/1.1\r\n\r\n", "CONNECT"),
            (b"\x16\x03\x01\x02\x00\r\n\r\n", "malformed"),
            (b"GET http:/// HTTP/1.1\r\n\r\n", "names no host"),
        ] {
            let error = parse(bad).unwrap_err();
            assert!(error.contains(says), "{error}");
        }
    }
}
