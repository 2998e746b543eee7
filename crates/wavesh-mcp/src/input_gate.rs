//! Asking the user before text is typed into a task (PTY-4).
//!
//! What is typed into a shell or a REPL is a command too. It runs at the task's level
//! (nothing typed can raise it); where wavesh approves (`--permission-mode wavesh`), text
//! for a task above `read-only` is shown to the user first, with the task and its
//! command, through elicitation, with "allow input to this task for the session" as a
//! choice. Where the client approves tool calls, it sees the text in the call.

use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ElicitRequestParams,
    ElicitResult, ElicitationAction, ElicitationSchema,
};
use rmcp::service::RequestContext;
use wavesh_tool::Session;
use wavesh_tool::tty::InputApproval;

/// The key of the answer in an "input required" round trip (protocol 2026-07-28).
pub const INPUT_APPROVAL_KEY: &str = "wavesh-input-approval";

/// `Ok(approved)` lets the TaskInput call run; `Err` answers instead. Invalid input and
/// tasks that need no approval pass (the tool reports its own errors).
pub async fn gate(
    session: &Session,
    input: &serde_json::Value,
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> Result<bool, Box<CallToolResponse>> {
    let Ok(parsed) = wavesh_tool::tty::parse_task_input_input(input) else {
        return Ok(false);
    };
    let Some(approval) = session.task_input_approval(&parsed.task_id) else {
        return Ok(false);
    };
    let refuse = |message: &str| -> Result<bool, Box<CallToolResponse>> {
        Err(Box::new(
            CallToolResult::error(vec![ContentBlock::text(format!(
                "<tool_use_error>{message}</tool_use_error>"
            ))])
            .into(),
        ))
    };
    if let Some(answer) = request
        .input_responses
        .as_ref()
        .and_then(|r| r.get(INPUT_APPROVAL_KEY))
    {
        return match serde_json::from_value::<ElicitResult>(answer.clone()) {
            Ok(result) => decide(session, &parsed.task_id, &result).or_else(|m| refuse(&m)),
            Err(error) => refuse(&format!(
                "the approval answer is not an elicitation result: {error}"
            )),
        };
    }
    let can_ask = context
        .client_capabilities()
        .is_some_and(|caps| caps.elicitation.is_some());
    if !can_ask {
        return refuse(&format!(
            "Typing into task {} needs the user's approval (it runs at {}: {}), and this MCP client cannot ask the user. Ask the user to type it, or to run wavesh with --permission-mode host.",
            parsed.task_id, approval.level, approval.command
        ));
    }
    let params = match elicitation(&parsed.task_id, &parsed.input, &approval) {
        Ok(params) => params,
        Err(error) => return refuse(&error),
    };
    let modern = context
        .protocol_version()
        .is_some_and(|version| version.as_str() >= "2026-07-28");
    if modern {
        let mut requests = rmcp::model::InputRequests::new();
        requests.insert(
            INPUT_APPROVAL_KEY.to_owned(),
            rmcp::model::InputRequest::Elicitation(rmcp::model::ElicitRequest::new(params)),
        );
        return Err(Box::new(
            rmcp::model::InputRequiredResult::from_input_requests(requests).into(),
        ));
    }
    match context.peer.create_elicitation(params).await {
        Ok(result) => decide(session, &parsed.task_id, &result).or_else(|m| refuse(&m)),
        Err(error) => {
            tracing::warn!(%error, "elicitation failed");
            refuse("The user could not be asked to approve this input, so it was not typed.")
        }
    }
}

/// The user's answer: typed (once, or for the session), or refused with why.
fn decide(session: &Session, task_id: &str, result: &ElicitResult) -> Result<bool, String> {
    let field = |name: &str| crate::permissions::bool_field(result, name);
    match (&result.action, field("allow"), field("session")) {
        (ElicitationAction::Accept, Some(true), session_wide) => {
            if session_wide == Some(true) {
                session.allow_task_input(task_id);
            }
            Ok(true)
        }
        (ElicitationAction::Cancel, _, _) => Err(
            "The user dismissed the approval prompt without answering, so nothing was typed. \
             Ask the user before trying again."
                .into(),
        ),
        _ => Err("The user declined this input; nothing was typed.".into()),
    }
}

/// The prompt: the text exactly, the task and its command.
pub fn elicitation(
    task_id: &str,
    input: &str,
    approval: &InputApproval,
) -> Result<ElicitRequestParams, String> {
    let schema = ElicitationSchema::builder()
        .required_bool("allow")
        .optional_bool("session", false)
        .build()
        .map_err(str::to_owned)?;
    let message = format!(
        "Allow wavesh to type this into task {task_id}?\n\n{}\n\nThe task runs at {}: {}\n\nSet \"session\" to allow any input to this task from now on.",
        input.escape_debug(),
        approval.level,
        approval.command
    );
    Ok(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema: schema,
    })
}
