//! Streamable HTTP (MCP-1): `wavesh mcp --http ADDR:PORT` at `/mcp`.
//!
//! rmcp's `StreamableHttpService` speaks the protocol: sessions by `Mcp-Session-Id`,
//! SSE for server-to-client traffic (progress, logging, `resources/updated`,
//! elicitation), `DELETE` to end a session, `Host` and `Origin` validation against DNS
//! rebinding. In front of it this module adds what it lacks:
//!
//! - a bearer token on every request (401 without it, logged without the token);
//! - one wavesh [`Session`] per MCP session, ended with everything it started when the
//!   MCP session ends (DELETE, idle timeout, server shutdown);
//! - a limit on concurrent sessions, and a body limit that stops reading past it;
//! - every body checked by [`crate::message::check`], so a malformed request gets a
//!   JSON-RPC error with its `id` instead of rmcp's bare 415 (MCP-2);
//! - no stray `_meta.progressToken` on the requests the server sends (elicitation).

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{
    ServerSseMessage, SessionId, SessionManager,
};
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;
use wavesh_tool::Session;

use crate::message::{INVALID_REQUEST, Verdict, check, error_reply, scan_id};
use crate::{Permissions, ServeError, WaveshServer};

/// The path of the MCP endpoint.
pub const MCP_PATH: &str = "/mcp";
/// The environment variable holding the bearer token.
pub const TOKEN_ENV: &str = "WAVESH_MCP_TOKEN";
/// The header with the session id.
const SESSION_HEADER: &str = "mcp-session-id";

/// How the HTTP server is set up.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// The bearer token every request must carry; `None` serves without one (only
    /// allowed on loopback, which the caller checks).
    pub token: Option<String>,
    /// `Host` values accepted besides the loopback names (`name` or `name:port`).
    pub allowed_hosts: Vec<String>,
    /// `Origin` values accepted besides loopback origins (`scheme://host[:port|:*]`).
    pub allowed_origins: Vec<String>,
    /// At most this many sessions at once.
    pub max_sessions: usize,
    /// The largest request body, in bytes.
    pub max_message_bytes: usize,
    /// A session with no traffic for this long is ended.
    pub idle_timeout: Duration,
}

/// Makes the wavesh session (and its permissions) of a new MCP session.
pub type SessionFactory =
    Arc<dyn Fn() -> Result<(Arc<Session>, Permissions), String> + Send + Sync>;

/// The live sessions, so shutdown can end them all and the limit can count them.
#[derive(Default)]
struct Registry {
    sessions: Mutex<HashMap<u64, Arc<Session>>>,
    next: AtomicU64,
    /// The ends of sessions that left the table (DELETE, idle timeout) still in
    /// progress: the server waits for them before it exits, so a session deleted just
    /// before a SIGTERM still removes its directory.
    ending: Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

impl Registry {
    fn len(&self) -> usize {
        self.sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    fn all(&self) -> Vec<Arc<Session>> {
        self.sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .cloned()
            .collect()
    }
}

/// An MCP session's hold on its wavesh session: when the handler (and so this) is
/// dropped — the MCP session ended — every process of the wavesh session is ended.
pub struct Lease {
    id: u64,
    session: Arc<Session>,
    closing: CancellationToken,
    registry: Weak<Registry>,
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.closing.cancel();
        let registry = self.registry.upgrade();
        if let Some(registry) = &registry {
            registry
                .sessions
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&self.id);
        }
        let session = Arc::clone(&self.session);
        tracing::debug!(id = self.id, "MCP HTTP session ended");
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let end = runtime.spawn(async move { session.end().await });
            if let Some(registry) = registry {
                let mut ending = registry
                    .ending
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                ending.retain(|end| !end.is_finished());
                ending.push(end);
            }
        }
    }
}

/// rmcp's in-memory session manager, with outgoing requests cleaned of the
/// `_meta.progressToken` rmcp adds to each.
struct Sessions {
    inner: LocalSessionManager,
}

/// A session's transport, cleaning what the server sends.
struct Cleaned<T>(T);

impl<T: Transport<RoleServer>> Transport<RoleServer> for Cleaned<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.0.send(without_stray_meta(item))
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleServer>>> + Send {
        self.0.receive()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.0.close()
    }
}

/// A request the server sends, without `_meta.progressToken` (see [`crate::lines`]).
fn without_stray_meta(item: ServerJsonRpcMessage) -> ServerJsonRpcMessage {
    if !matches!(item, JsonRpcMessage::Request(_)) {
        return item;
    }
    let Ok(mut value) = serde_json::to_value(&item) else {
        return item;
    };
    crate::lines::strip_request_meta(&mut value);
    serde_json::from_value(value).unwrap_or(item)
}

impl SessionManager for Sessions {
    type Error = <LocalSessionManager as SessionManager>::Error;
    type Transport = Cleaned<<LocalSessionManager as SessionManager>::Transport>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let (id, transport) = self.inner.create_session().await?;
        Ok((id, Cleaned(transport)))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<
        impl futures_core::Stream<Item = ServerSseMessage> + Send + Sync + 'static,
        Self::Error,
    > {
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<
        impl futures_core::Stream<Item = ServerSseMessage> + Send + Sync + 'static,
        Self::Error,
    > {
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<
        impl futures_core::Stream<Item = ServerSseMessage> + Send + Sync + 'static,
        Self::Error,
    > {
        self.inner.resume(id, last_event_id).await
    }
}

type Body = BoxBody<Bytes, Infallible>;
type Mcp = StreamableHttpService<WaveshServer, Sessions>;

struct State {
    mcp: Mcp,
    config: HttpConfig,
    registry: Arc<Registry>,
}

/// The `Host` names always accepted: the loopback ones.
const LOOPBACK_HOSTS: &[&str] = &["localhost", "127.0.0.1", "::1", "[::1]"];
/// The `Origin`s always accepted: pages on this machine.
const LOOPBACK_ORIGINS: &[&str] = &["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];

/// Connections served at once; a connection over it is closed at once.
pub const MAX_CONNECTIONS: usize = 256;

/// How long a connection may take to send a request's headers, the first included.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves MCP over Streamable HTTP on `listener` until `stop` is cancelled; then ends
/// every session and every process they started, and returns.
pub async fn serve_http(
    listener: tokio::net::TcpListener,
    factory: SessionFactory,
    config: HttpConfig,
    stop: CancellationToken,
) -> Result<(), ServeError> {
    let registry = Arc::new(Registry::default());
    let sessions_ended = CancellationToken::new();
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = Some(config.idle_timeout);
    let mut rmcp_config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(
            LOOPBACK_HOSTS
                .iter()
                .map(|host| (*host).to_owned())
                .chain(config.allowed_hosts.iter().cloned()),
        )
        .with_allowed_origins(
            LOOPBACK_ORIGINS
                .iter()
                .map(|origin| (*origin).to_owned())
                .chain(config.allowed_origins.iter().cloned()),
        )
        .enforce_origin_validation()
        .with_max_request_body_bytes(config.max_message_bytes);
    rmcp_config.cancellation_token = sessions_ended.clone();
    let max_sessions = config.max_sessions;
    let make = {
        let registry = Arc::downgrade(&registry);
        move || -> Result<WaveshServer, std::io::Error> {
            let Some(live) = registry.upgrade() else {
                return Err(std::io::Error::other("the server is shutting down"));
            };
            // The limit holds for every request that makes a session (an initialize, a
            // stateless request), counted and taken under one lock: concurrent requests
            // cannot all pass one check (SBX-7).
            let mut sessions = live.sessions.lock().unwrap_or_else(PoisonError::into_inner);
            if sessions.len() >= max_sessions {
                return Err(std::io::Error::other(format!(
                    "too many sessions: at most {max_sessions} at once (wavesh mcp --http-max-sessions)"
                )));
            }
            let (session, permissions) = factory().map_err(std::io::Error::other)?;
            let mut server = WaveshServer::new(Arc::clone(&session), permissions);
            let id = live.next.fetch_add(1, Ordering::Relaxed);
            sessions.insert(id, Arc::clone(&session));
            drop(sessions);
            server.lease = Some(Arc::new(Lease {
                id,
                session,
                closing: server.closing.clone(),
                registry: registry.clone(),
            }));
            Ok(server)
        }
    };
    let mcp = StreamableHttpService::new(make, Arc::new(Sessions { inner: manager }), rmcp_config);
    let state = Arc::new(State {
        mcp,
        config,
        registry: Arc::clone(&registry),
    });
    // At most this many connections at once, and each must send a request's headers
    // within HEADER_TIMEOUT: idle or slow connections, authenticated or not, cannot use
    // up the server's descriptors and starve the clients (SBX-7).
    let connections = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    tracing::warn!(%error, "accepting an HTTP connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = stop.cancelled() => break,
        };
        let Ok(permit) = Arc::clone(&connections).try_acquire_owned() else {
            tracing::warn!(%peer, max = MAX_CONNECTIONS, "refused an HTTP connection: too many at once");
            drop(stream);
            continue;
        };
        let state = Arc::clone(&state);
        let stop = stop.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let service = hyper::service::service_fn(move |request| {
                let state = Arc::clone(&state);
                async move { Ok::<_, Infallible>(handle(&state, request, peer).await) }
            });
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            tokio::select! {
                result = connection => if let Err(error) = result {
                    tracing::debug!(%error, %peer, "HTTP connection ended with an error");
                },
                () = stop.cancelled() => {}
            }
        });
    }
    sessions_ended.cancel();
    let mut ending = tokio::task::JoinSet::new();
    for session in registry.all() {
        ending.spawn(async move { session.end().await });
    }
    while ending.join_next().await.is_some() {}
    let ended: Vec<_> = std::mem::take(
        &mut *registry
            .ending
            .lock()
            .unwrap_or_else(PoisonError::into_inner),
    );
    for end in ended {
        let _ = end.await;
    }
    Ok(())
}

async fn handle(state: &State, request: Request<Incoming>, peer: SocketAddr) -> Response<Body> {
    if request.uri().path() != MCP_PATH {
        return plain(StatusCode::NOT_FOUND, "Not Found: the MCP endpoint is /mcp");
    }
    if let Some(token) = &state.config.token
        && !authorized(&request, token)
    {
        tracing::warn!(
            %peer,
            method = %request.method(),
            "refused an MCP request without a valid bearer token"
        );
        let mut response = json(
            StatusCode::UNAUTHORIZED,
            error_reply(
                "null",
                INVALID_REQUEST,
                "Unauthorized: send Authorization: Bearer <token> (WAVESH_MCP_TOKEN)",
            ),
        );
        response.headers_mut().insert(
            http::header::WWW_AUTHENTICATE,
            http::HeaderValue::from_static("Bearer realm=\"wavesh\""),
        );
        return response;
    }
    let (parts, body) = request.into_parts();
    if parts.method != http::Method::POST {
        let delete = parts.method == http::Method::DELETE;
        let request = Request::from_parts(parts, Full::new(Bytes::new()));
        let mut response = state.mcp.handle(request).await;
        // rmcp says 202 to a DELETE; clients (the Python SDK) take only 200 or 204 as
        // "the session ended".
        if delete && response.status() == StatusCode::ACCEPTED {
            *response.status_mut() = StatusCode::OK;
        }
        return response;
    }
    let limit = state.config.max_message_bytes;
    let bytes = match read_body(body, limit).await {
        Ok(bytes) => bytes,
        Err(BodyError::TooLarge { head, rest }) => {
            tracing::warn!(%peer, limit, "refused an MCP request body over the size limit");
            // The answer goes now; the rest of the body is read and thrown away as it
            // arrives (a client blocked on sending it would never read the answer).
            tokio::spawn(drain(rest));
            return json(
                StatusCode::PAYLOAD_TOO_LARGE,
                crate::lines::too_long_reply(&head, limit),
            );
        }
        Err(BodyError::Read(error)) => {
            return plain(
                StatusCode::BAD_REQUEST,
                &format!("Bad Request: the body could not be read: {error}"),
            );
        }
    };
    match check(&bytes) {
        Verdict::Reply(reply) => return json(StatusCode::BAD_REQUEST, reply),
        Verdict::Ignore => return plain(StatusCode::ACCEPTED, ""),
        Verdict::Serve(message) => {
            if starts_session(&message, &parts) && state.registry.len() >= state.config.max_sessions
            {
                tracing::warn!(%peer, max = state.config.max_sessions, "refused a new MCP session: too many sessions");
                return json(
                    StatusCode::SERVICE_UNAVAILABLE,
                    error_reply(
                        scan_id(&bytes).or_null(),
                        -32000,
                        &format!(
                            "Too many sessions: at most {} at once (wavesh mcp --http-max-sessions); end one with DELETE",
                            state.config.max_sessions
                        ),
                    ),
                );
            }
        }
    }
    let request = Request::from_parts(parts, Full::new(bytes));
    state.mcp.handle(request).await
}

/// An `initialize` without a session id: it would make a new session.
fn starts_session(message: &ClientJsonRpcMessage, parts: &http::request::Parts) -> bool {
    matches!(message, JsonRpcMessage::Request(request) if matches!(request.request, ClientRequest::InitializeRequest(_)))
        && !parts.headers.contains_key(SESSION_HEADER)
}

fn authorized<B>(request: &Request<B>, token: &str) -> bool {
    request
        .headers()
        .get_all(http::header::AUTHORIZATION)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .filter_map(|value| {
            let (scheme, credential) = value.trim().split_once(' ')?;
            scheme
                .eq_ignore_ascii_case("bearer")
                .then_some(credential.trim())
        })
        .any(|credential| same_secret(credential.as_bytes(), token.as_bytes()))
}

/// Compares in time that depends only on the length, not on where they differ.
fn same_secret(given: &[u8], expected: &[u8]) -> bool {
    given.len() == expected.len()
        && given
            .iter()
            .zip(expected)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

enum BodyError {
    /// Over the limit: the bytes read up to it, and the body still unread.
    TooLarge {
        head: Vec<u8>,
        rest: Incoming,
    },
    Read(hyper::Error),
}

/// The most of an over-limit body that is read and dropped before the connection is
/// closed instead.
const DRAIN_MAX_BYTES: u64 = 4 << 30;

/// Reads the rest of an over-limit body without keeping it.
async fn drain(mut rest: Incoming) {
    let mut seen = 0u64;
    while let Some(Ok(frame)) = rest.frame().await {
        if let Ok(data) = frame.into_data() {
            seen += data.len() as u64;
            if seen > DRAIN_MAX_BYTES {
                return;
            }
        }
    }
}

async fn read_body(mut body: Incoming, limit: usize) -> Result<Bytes, BodyError> {
    let mut collected = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(BodyError::Read)?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        if collected.len() + data.len() > limit {
            let room = limit - collected.len();
            collected.extend_from_slice(&data[..room]);
            return Err(BodyError::TooLarge {
                head: collected,
                rest: body,
            });
        }
        collected.extend_from_slice(&data);
    }
    Ok(Bytes::from(collected))
}

fn plain(status: StatusCode, text: &str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(text.to_owned())).boxed());
    *response.status_mut() = status;
    response
}

fn json(status: StatusCode, text: String) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(text)).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

/// A fresh bearer token: 32 random bytes, hex.
pub fn generate_token() -> std::io::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|error| std::io::Error::other(error.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcp_1_bearer_tokens_compare_exactly() {
        let request = |value: &str| {
            Request::builder()
                .header("authorization", value)
                .body(())
                .unwrap()
        };
        assert!(authorized(&request("Bearer abc"), "abc"));
        assert!(authorized(&request("bearer  abc "), "abc"));
        assert!(!authorized(&request("Bearer abd"), "abc"));
        assert!(!authorized(&request("Bearer ab"), "abc"));
        assert!(!authorized(&request("Basic abc"), "abc"));
        assert!(!authorized(&Request::new(()), "abc"));
    }

    #[test]
    fn mcp_1_generated_tokens_are_long_and_differ() {
        let (a, b) = (generate_token().unwrap(), generate_token().unwrap());
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
    }
}
