//! wavesh's MCP server: the `Bash` tool over stdio, one connection = one [`Session`].
//!
//! The server watches its own stdin: when the client closes it (or the process gets
//! SIGTERM or SIGINT), every process the session started — foreground commands,
//! background tasks, leftovers — is ended at once, instead of after rmcp's own grace
//! period of several seconds.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use tokio::io::{AsyncRead, ReadBuf};
use tokio_util::sync::CancellationToken;
use wavesh_tool::{
    BASH_TOOL_NAME, BashResult, CallContext, Session, ToolError, bash_description,
    bash_input_schema,
};

/// Incoming lines up to this size are accepted: a `Bash` call may carry a command of
/// many megabytes (rmcp's default of 16 MiB would drop it without a reply).
pub const MAX_MESSAGE_BYTES: usize = 256 * 1024 * 1024;

/// Errors of the server itself (not of tool calls, which are results).
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The MCP handshake failed.
    #[error("MCP initialization failed: {0}")]
    Initialize(String),
}

/// The MCP handler: the tools of one session.
#[derive(Clone)]
pub struct WaveshServer {
    session: Arc<Session>,
    /// Cancelled when the connection ends; every call's abort token is its child.
    closing: CancellationToken,
}

impl WaveshServer {
    /// A handler serving `session`.
    pub fn new(session: Arc<Session>) -> WaveshServer {
        WaveshServer {
            session,
            closing: CancellationToken::new(),
        }
    }

    fn tools(&self) -> Vec<Tool> {
        let config = self.session.config();
        let schema = match bash_input_schema(config) {
            serde_json::Value::Object(map) => map,
            // The schema is built as a JSON object literal.
            _ => JsonObject::new(),
        };
        vec![Tool::new(
            BASH_TOOL_NAME,
            bash_description(config),
            Arc::new(schema),
        )]
    }

    async fn call_bash(&self, arguments: Option<JsonObject>) -> CallToolResult {
        let input = serde_json::Value::Object(arguments.unwrap_or_default());
        let ctx = CallContext {
            abort: self.closing.child_token(),
            ..CallContext::default()
        };
        match self.session.bash_json(&input, &ctx).await {
            Ok(result) => bash_result(&result),
            Err(error) => tool_error(&error),
        }
    }
}

fn bash_result(result: &BashResult) -> CallToolResult {
    let content = vec![ContentBlock::text(result.text.clone())];
    let mut out = if result.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    out.structured_content = serde_json::to_value(result).ok();
    out
}

fn tool_error(error: &ToolError) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!(
        "<tool_use_error>{error}</tool_use_error>"
    ))])
}

impl ServerHandler for WaveshServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("wavesh", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "wavesh runs shell commands in the workspace with the Bash tool. The working directory persists between calls.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        match request.name.as_ref() {
            BASH_TOOL_NAME => Ok(self.call_bash(request.arguments).await.into()),
            other => Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                "<tool_use_error>unknown tool `{other}`; this server has: {BASH_TOOL_NAME}</tool_use_error>"
            ))])
            .into()),
        }
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools().into_iter().find(|tool| tool.name == name)
    }
}

/// Wraps the input stream and cancels a token when it reaches end of file.
struct EofWatch<R> {
    inner: R,
    eof: CancellationToken,
}

impl<R: AsyncRead + Unpin> AsyncRead for EofWatch<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let poll = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(result) = &poll
            && (result.is_err() || buf.filled().len() == before)
        {
            self.eof.cancel();
        }
        poll
    }
}

/// Serves `session` on `reader`/`writer` until the input ends, the client goes away or
/// `stop` is cancelled; then ends every process of the session and returns.
pub async fn serve<R, W>(
    session: Arc<Session>,
    reader: R,
    writer: W,
    stop: CancellationToken,
) -> Result<(), ServeError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let handler = WaveshServer::new(Arc::clone(&session));
    let closing = handler.closing.clone();
    let eof = CancellationToken::new();
    let reader = EofWatch {
        inner: reader,
        eof: eof.clone(),
    };
    let transport = AsyncRwTransport::<RoleServer, _, _>::new(reader, writer)
        .with_max_line_length(MAX_MESSAGE_BYTES);
    let service = handler
        .serve(transport)
        .await
        .map_err(|error| ServeError::Initialize(error.to_string()))?;
    let cancel_service = service.cancellation_token();
    tokio::select! {
        quit = service.waiting() => {
            tracing::debug!(?quit, "MCP service ended");
        }
        () = eof.cancelled() => tracing::debug!("MCP input closed"),
        () = stop.cancelled() => tracing::debug!("MCP server asked to stop"),
    }
    closing.cancel();
    session.shutdown().await;
    cancel_service.cancel();
    Ok(())
}

/// Serves `session` on this process's stdin and stdout.
pub async fn serve_stdio(session: Arc<Session>, stop: CancellationToken) -> Result<(), ServeError> {
    let (reader, writer) = rmcp::transport::stdio_pipes();
    serve(session, reader, writer, stop).await
}
