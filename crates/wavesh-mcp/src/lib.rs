//! wavesh's MCP server: `Bash`, `TaskOutput`, `TaskStop` and `TaskList` over stdio (one
//! connection = one [`Session`]) or Streamable HTTP (one `Mcp-Session-Id` = one
//! [`Session`]; see [`http`]).
//!
//! Background tasks are also resources (`wavesh://tasks/<id>`), listed while they run.
//! When one ends the server sends `notifications/resources/updated` for it to clients
//! that subscribed to it (MCP-3) and a logging message, and the model gets its
//! `<task-notification>` at the start of the next tool result of the connection.
//!
//! Every message is checked before rmcp sees it ([`message`]): whatever carries an `id`
//! gets a reply, an error when it cannot be served (MCP-2).
//!
//! The server watches its own stdin: when the client closes it (or the process gets
//! SIGTERM or SIGINT), every process the session started — foreground commands,
//! background tasks, leftovers — is ended at once, instead of after rmcp's own grace
//! period of several seconds.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

mod hosts;
pub mod http;
mod input_gate;
mod lines;
pub mod message;
mod permissions;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ResourceUpdatedNotificationParam, ServerCapabilities, ServerConfig,
    SubscribeRequestParams, Tool, ToolAnnotations, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, Peer, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use tokio::io::AsyncRead;
use tokio_util::sync::CancellationToken;
use wavesh_tool::{CallContext, Session, TaskInfo, ToolError, ToolOutput};

/// The URI of a task's resource.
pub fn task_uri(task_id: &str) -> String {
    format!("wavesh://tasks/{task_id}")
}

/// The default limit of one incoming message (a stdio line, an HTTP body): a `Bash` call
/// may carry a command of many megabytes (20 MB works), and memory stays bounded past
/// it (MCP-2). `--max-message-bytes` changes it.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 32 * 1024 * 1024;

/// Errors of the server itself (not of tool calls, which are results).
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The MCP handshake failed.
    #[error("MCP initialization failed: {0}")]
    Initialize(String),
    /// The HTTP listener could not be set up or failed.
    #[error("cannot serve HTTP on {addr}: {source}")]
    Listen {
        /// The address asked for.
        addr: String,
        /// Why.
        source: std::io::Error,
    },
}

pub use permissions::Gate;
pub use wavesh_tool::{Approver, Permissions};

/// The MCP handler: the tools of one session.
#[derive(Clone)]
pub struct WaveshServer {
    session: Arc<Session>,
    /// Cancelled when the connection ends; every call's abort token is its child.
    closing: CancellationToken,
    /// The resource URIs the client subscribed to (MCP-3).
    subscriptions: Arc<Mutex<HashSet<String>>>,
    /// The task announcer runs (it starts when the client says it is initialized).
    announcing: Arc<AtomicBool>,
    /// An HTTP session's hold on its registry entry: the session ends when the last
    /// clone of this handler goes.
    lease: Option<Arc<http::Lease>>,
}

impl WaveshServer {
    /// A handler serving `session` under `permissions`.
    pub fn new(session: Arc<Session>, permissions: Permissions) -> WaveshServer {
        // The decision and the sandbox level are the session's (SBX-3).
        session.set_permissions(permissions);
        WaveshServer {
            session,
            closing: CancellationToken::new(),
            subscriptions: Arc::default(),
            announcing: Arc::default(),
            lease: None,
        }
    }

    /// The permission gate for a Bash call: `Ok((approved, prepared))` runs it
    /// (`approved` when the user said yes here), with the call's analysis and decision
    /// handed on to the run, which neither parses the command nor asks git again; `Err`
    /// answers instead. The session picks the sandbox level itself. Invalid input
    /// passes: the tool reports it itself.
    async fn gate(
        &self,
        name: &str,
        input: &serde_json::Value,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<(bool, Option<wavesh_tool::Prepared>), Box<CallToolResponse>> {
        if wavesh_tool::tty::is_task_input(name) {
            // PTY-4: typed text is shown to the user where wavesh approves.
            return input_gate::gate(&self.session, input, request, context)
                .await
                .map(|approved| (approved, None));
        }
        if name != wavesh_tool::BASH_TOOL_NAME {
            return Ok((false, None));
        }
        let Ok(parsed) = wavesh_tool::parse_bash_input(input) else {
            return Ok((false, None));
        };
        let refuse = |message: String| -> Result<(bool, Option<wavesh_tool::Prepared>), Box<CallToolResponse>> {
            Err(Box::new(
                CallToolResult::error(vec![ContentBlock::text(format!(
                    "<tool_use_error>{message}</tool_use_error>"
                ))])
                .into(),
            ))
        };
        let asker = permissions::Permissions {
            session: &self.session,
        };
        let prepared = self.session.prepare(&parsed);
        let decision = match prepared.verdict() {
            wavesh_tool::Verdict::Run { .. } => return Ok((false, Some(prepared))),
            wavesh_tool::Verdict::Ask(decision) => decision.clone(),
            wavesh_tool::Verdict::Deny(message) => return refuse(message.clone()),
        };
        // The answer of an "input required" round trip (protocol 2026-07-28).
        if let Some(answer) = request
            .input_responses
            .as_ref()
            .and_then(|r| r.get(permissions::APPROVAL_KEY))
        {
            return match serde_json::from_value::<rmcp::model::ElicitResult>(answer.clone()) {
                Ok(result) => match asker.answer(&result, &decision) {
                    Gate::Run => Ok((true, Some(prepared))),
                    Gate::Refuse(message) => refuse(message),
                },
                Err(error) => refuse(format!(
                    "the approval answer is not an elicitation result: {error}"
                )),
            };
        }
        let can_ask = context
            .client_capabilities()
            .is_some_and(|caps| caps.elicitation.is_some());
        if !can_ask {
            return refuse(permissions::how_to_allow(&decision));
        }
        let modern = context
            .protocol_version()
            .is_some_and(|version| version.as_str() >= "2026-07-28");
        if modern {
            // Servers may not send requests: the result asks, the client calls again.
            let params = match permissions::elicitation(&parsed.command, &decision) {
                Ok(params) => params,
                Err(error) => return refuse(error),
            };
            let mut requests = rmcp::model::InputRequests::new();
            requests.insert(
                permissions::APPROVAL_KEY.to_owned(),
                rmcp::model::InputRequest::Elicitation(rmcp::model::ElicitRequest::new(params)),
            );
            return Err(Box::new(
                rmcp::model::InputRequiredResult::from_input_requests(requests).into(),
            ));
        }
        match asker
            .ask_by_request(&context.peer, &parsed.command, &decision)
            .await
        {
            Gate::Run => Ok((true, Some(prepared))),
            Gate::Refuse(message) => refuse(message),
        }
    }

    fn tools(&self) -> Vec<Tool> {
        self.session
            .tool_definitions()
            .into_iter()
            .map(|tool| {
                let schema = match tool.input_schema {
                    serde_json::Value::Object(map) => map,
                    // Every schema is built as a JSON object literal.
                    _ => JsonObject::new(),
                };
                Tool::new(tool.name, tool.description, Arc::new(schema))
                    .with_title(tool.title)
                    .with_annotations(annotations(tool.name))
            })
            .collect()
    }

    /// Runs a tool call. Task notifications pending when it starts come first, one
    /// content block each, then the tool's own result.
    async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> CallToolResponse {
        tracing::debug!(target: "wavesh_stage", stage = "dispatched");
        let name = request.name.to_string();
        let input = serde_json::Value::Object(request.arguments.clone().unwrap_or_default());
        let (approved, prepared) = match self.gate(&name, &input, &request, &context).await {
            Ok(gated) => gated,
            Err(response) => return *response,
        };
        tracing::debug!(target: "wavesh_stage", stage = "decided");
        // NET-2: a host no rule allows is put to the user, when the client can answer.
        hosts::install(&self.session, &context);
        // EXEC-6: `notifications/cancelled` for this request aborts it, tree and all.
        let abort = self.closing.child_token();
        let cancelled = context.ct.clone();
        let aborter = abort.clone();
        let watcher = tokio::spawn(async move {
            cancelled.cancelled().await;
            aborter.cancel();
        });
        let ctx = CallContext {
            abort,
            progress: progress_sink(&context),
            approved,
            ..CallContext::default()
        };
        let outcome = self
            .session
            .call_tool_prepared(&name, &input, &ctx, prepared)
            .await;
        watcher.abort();
        match outcome {
            Ok(output) => {
                // The ends of tasks the model has not heard of, in front of the answer;
                // never on an error (they wait for the next result), never the task this
                // very TaskOutput or TaskStop answers about, and never one the model
                // stopped itself (TaskStop's answer said so).
                let own = ["task_id", "shell_id", "bash_id"]
                    .iter()
                    .find_map(|key| input.get(*key).and_then(serde_json::Value::as_str));
                let mut content: Vec<ContentBlock> = self
                    .session
                    .take_notifications()
                    .into_iter()
                    .filter(|note| {
                        !note.stopped_by_model
                            && (name == "Bash" || Some(note.task_id.as_str()) != own)
                    })
                    .map(|note| ContentBlock::text(note.text))
                    .collect();
                if let Some(image) = &output.image {
                    // OUT-4: the model sees the image itself.
                    content.push(ContentBlock::image(
                        image.data.clone(),
                        image.media_type.clone(),
                    ));
                    if !output.text.is_empty() {
                        content.push(ContentBlock::text(output.text.clone()));
                    }
                } else {
                    content.push(ContentBlock::text(output.text.clone()));
                }
                tool_result(content, &output)
            }
            Err(error) => CallToolResult::error(vec![ContentBlock::text(error_text(&error))]),
        }
        .into()
    }

    fn resource(task: &TaskInfo) -> Resource {
        let mut resource = Resource::new(task_uri(&task.task_id), task.task_id.clone())
            .with_description(format!(
                "Background task ({}): {}",
                task.status, task.command
            ));
        resource.mime_type = Some("application/json".into());
        resource
    }
}

/// EXEC-5: when the client sent a progress token, progress events become
/// `notifications/progress` (elapsed seconds, bytes written in the message).
fn progress_sink(context: &RequestContext<RoleServer>) -> Option<wavesh_exec::ProgressSink> {
    let token = context.meta.get_progress_token()?;
    let peer = context.peer.clone();
    Some(Arc::new(move |progress: wavesh_exec::Progress| {
        let mut param = rmcp::model::ProgressNotificationParam::new(
            token.clone(),
            progress.elapsed.as_secs_f64(),
        );
        param.message = Some(format!("{} bytes written", progress.output_bytes));
        let peer = peer.clone();
        tokio::spawn(async move {
            if let Err(error) = peer.notify_progress(param).await {
                tracing::debug!(%error, "progress notification not sent");
            }
        });
    }))
}

/// Hints for clients: Bash can do anything, anywhere; TaskOutput and TaskList only read; TaskStop
/// ends processes but touches nothing outside them. Aliases (`KillShell`, `BashOutput`,
/// ...) are accepted by name but not listed: every client here calls tools by the names
/// it lists, so extra entries would only crowd the model's tool list.
fn annotations(name: &str) -> ToolAnnotations {
    let (title, read_only, destructive, open_world) = match name {
        wavesh_tool::BASH_TOOL_NAME => ("Run a shell command", false, true, true),
        wavesh_tool::task_tools::TASK_OUTPUT_TOOL_NAME => {
            ("Read a background task", true, false, false)
        }
        wavesh_tool::task_tools::TASK_LIST_TOOL_NAME => {
            ("List background tasks", true, false, false)
        }
        wavesh_tool::tty::TASK_INPUT_TOOL_NAME => {
            ("Type into a task's terminal", false, true, true)
        }
        _ => ("Stop a background task", false, true, false),
    };
    ToolAnnotations::with_title(title)
        .read_only(read_only)
        .destructive(destructive)
        .open_world(open_world)
}

/// A tool wavesh has, by its name or an alias.
fn known_tool(name: &str) -> bool {
    name == wavesh_tool::BASH_TOOL_NAME
        || wavesh_tool::task_tools::is_task_output(name)
        || wavesh_tool::task_tools::is_task_stop(name)
        || wavesh_tool::tty::is_task_input(name)
        || wavesh_tool::task_tools::is_task_list(name)
}

fn tool_result(content: Vec<ContentBlock>, output: &ToolOutput) -> CallToolResult {
    let mut result = if output.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    result.structured_content = Some(output.structured.clone());
    result
}

fn error_text(error: &ToolError) -> String {
    format!("<tool_use_error>{error}</tool_use_error>")
}

impl ServerHandler for WaveshServer {
    #[expect(deprecated, reason = "logging: see log_task_end")]
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_resources_list_changed()
            .enable_logging()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("wavesh", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "wavesh runs shell commands in the workspace with the Bash tool; the working directory persists between calls. \
                 Background tasks report their end at the start of the next tool result.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    /// An unknown tool is a protocol error (-32602, protocol 2025-11-25), not a result.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if !known_tool(&request.name) {
            return Err(McpError::invalid_params(
                format!("{}", ToolError::UnknownTool(request.name.to_string())),
                None,
            ));
        }
        Ok(self.call(request, context).await)
    }

    /// MCP-3: updates go only to subscribers of the task's URI.
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.subscriptions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(request.uri);
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.subscriptions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&request.uri);
        Ok(())
    }

    /// A method wavesh does not have: -32601 naming it (rmcp's message is the bare name).
    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CustomResult, McpError> {
        Err(McpError::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            format!("Method not found: `{}`", request.method),
            None,
        ))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if !self.announcing.swap(true, Ordering::SeqCst) {
            tokio::spawn(announce_tasks(
                Arc::clone(&self.session),
                context.peer,
                Arc::clone(&self.subscriptions),
                self.closing.clone(),
            ));
        }
    }

    /// `logging/setLevel`: accepted. wavesh sends one kind of log message (a task ended,
    /// at info level), so there is nothing to filter; refusing would break clients that
    /// set a level because logging is advertised (the MCP Inspector does).
    #[expect(deprecated, reason = "logging: see log_task_end")]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        tracing::debug!(level = ?request.level, "client set the log level");
        Ok(())
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools().into_iter().find(|tool| tool.name == name)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let running = self
            .session
            .list_tasks()
            .iter()
            .filter(|task| task.status == "running")
            .map(Self::resource)
            .collect();
        Ok(ListResourcesResult::with_all_items(running))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let id = request
            .uri
            .strip_prefix("wavesh://tasks/")
            .unwrap_or_default();
        let Some(task) = self
            .session
            .list_tasks()
            .into_iter()
            .find(|task| task.task_id == id)
        else {
            return Err(McpError::resource_not_found(
                format!("no task resource {}", request.uri),
                None,
            ));
        };
        let tail = self.session.task_tail(id).unwrap_or_default();
        let mut value = serde_json::to_value(&task).unwrap_or_default();
        value["outputTail"] = serde_json::Value::String(tail);
        let text = serde_json::to_string_pretty(&value).unwrap_or_default();
        Ok(ReadResourceResult::new(vec![ResourceContents::text(text, request.uri)]).into())
    }
}

/// Tells the client about tasks that start and end: `notifications/resources/list_changed`
/// when the list of running tasks changes, and for each task that ended
/// `notifications/resources/updated` plus a logging message.
async fn announce_tasks(
    session: Arc<Session>,
    peer: Peer<RoleServer>,
    subscriptions: Arc<Mutex<HashSet<String>>>,
    closing: CancellationToken,
) {
    let mut changes = session.subscribe_tasks();
    let mut running: HashSet<String> = HashSet::new();
    let mut announced: HashSet<String> = HashSet::new();
    loop {
        let tasks = session.list_tasks();
        let now_running: HashSet<String> = tasks
            .iter()
            .filter(|task| task.status == "running")
            .map(|task| task.task_id.clone())
            .collect();
        if now_running != running {
            running = now_running;
            if let Err(error) = peer.notify_resource_list_changed().await {
                tracing::debug!(%error, "resources/list_changed not sent");
            }
        }
        for task in tasks.iter().filter(|t| t.status != "running") {
            if !announced.insert(task.task_id.clone()) {
                continue;
            }
            let uri = task_uri(&task.task_id);
            let subscribed = subscriptions
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .contains(&uri);
            if subscribed
                && let Err(error) = peer
                    .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri.clone()))
                    .await
            {
                tracing::debug!(%error, "resources/updated not sent");
            }
            log_task_end(&peer, task, &uri).await;
        }
        tokio::select! {
            changed = changes.changed() => if changed.is_err() { return },
            () = closing.cancelled() => return,
        }
    }
}

/// The logging message for a task that ended. MCP logging is deprecated in the newest
/// protocol revision, but it is the one standard notification every current client shows.
#[expect(deprecated, reason = "see the doc comment")]
async fn log_task_end(peer: &Peer<RoleServer>, task: &TaskInfo, uri: &str) {
    use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
    let data = serde_json::json!({
        "message": format!("background task {} {}", task.task_id, task.status_detail),
        "taskId": task.task_id,
        "status": task.status,
        "exitCode": task.exit_code,
        "outputPath": task.output_path,
        "uri": uri,
    });
    let message =
        LoggingMessageNotificationParam::new(LoggingLevel::Info, data).with_logger("wavesh");
    if let Err(error) = peer.notify_logging_message(message).await {
        tracing::debug!(%error, "logging message not sent");
    }
}

/// Serves `session` on `reader`/`writer` (newline-delimited JSON-RPC, lines of at most
/// `max_message_bytes`) until the input ends, the client goes away or `stop` is
/// cancelled; then ends every process of the session and returns.
pub async fn serve<R, W>(
    session: Arc<Session>,
    permissions: Permissions,
    reader: R,
    writer: W,
    max_message_bytes: usize,
    stop: CancellationToken,
) -> Result<(), ServeError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let handler = WaveshServer::new(Arc::clone(&session), permissions);
    let closing = handler.closing.clone();
    let eof = CancellationToken::new();
    let transport = lines::LineTransport::new(reader, writer, max_message_bytes, eof.clone());
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
    session.end().await;
    cancel_service.cancel();
    Ok(())
}

/// Serves `session` on this process's stdin and stdout.
pub async fn serve_stdio(
    session: Arc<Session>,
    permissions: Permissions,
    max_message_bytes: usize,
    stop: CancellationToken,
) -> Result<(), ServeError> {
    let (reader, writer) = rmcp::transport::stdio_pipes();
    serve(
        session,
        permissions,
        reader,
        writer,
        max_message_bytes,
        stop,
    )
    .await
}
