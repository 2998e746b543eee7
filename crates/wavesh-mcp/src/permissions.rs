//! Asking the user in `wavesh mcp` (RULE-5 for MCP).
//!
//! The decision itself is the session's (`Session::verdict`, SBX-3): with the `host`
//! approver (default) the MCP client approves tool calls as it does for any server and
//! wavesh still refuses what deny rules forbid; with `wavesh`, allowed and read-only
//! commands run, denied ones are refused with the reason, and the rest are put to the
//! user through MCP elicitation when the client supports it, or refused with the rule
//! that would allow them when it does not.

use rmcp::RoleServer;
use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema};
use rmcp::service::Peer;
use wavesh_policy::Decision;
use wavesh_tool::Session;

/// What to do with a Bash call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    /// Run it.
    Run,
    /// Refuse it with this message for the model.
    Refuse(String),
}

/// The user's answers, for the session's rules.
pub struct Permissions<'a> {
    /// The session whose rules "always allow" extends.
    pub session: &'a Session,
}

impl Permissions<'_> {
    /// Acts on the user's answer (from either protocol path).
    pub fn answer(&self, result: &ElicitResult, decision: &Decision) -> Gate {
        match interpret(result, offers_always(decision)) {
            Answer::Once => Gate::Run,
            Answer::Always => {
                self.always_allow(&decision.suggestions);
                Gate::Run
            }
            Answer::No => Gate::Refuse("The user declined to run this command.".into()),
            Answer::Dismissed => Gate::Refuse(
                "The user dismissed the approval prompt without answering, so the command \
                 did not run. Ask the user before trying it again."
                    .into(),
            ),
        }
    }

    /// Asks through a server-to-client request (protocol 2025-11-25 and earlier).
    pub async fn ask_by_request(
        &self,
        peer: &Peer<RoleServer>,
        command: &str,
        decision: &Decision,
    ) -> Gate {
        let params = match elicitation(command, decision) {
            Ok(params) => params,
            Err(error) => return Gate::Refuse(error),
        };
        match peer.create_elicitation(params).await {
            Ok(result) => self.answer(&result, decision),
            Err(error) => {
                tracing::warn!(%error, "elicitation failed");
                Gate::Refuse(how_to_allow(decision))
            }
        }
    }
}

impl Permissions<'_> {
    /// Writes the rules to `.claude/settings.local.json` and applies them at once.
    fn always_allow(&self, rules: &[String]) {
        match wavesh_policy::settings::write_always_allow(self.session.root(), rules) {
            Ok(path) => {
                let permissions = self.session.permissions();
                let mut settings = permissions
                    .settings
                    .write()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                let json = serde_json::json!({"permissions": {"allow": rules}}).to_string();
                if let Err(error) =
                    settings.add_json(&json, wavesh_policy::settings::Level::Local, &path)
                {
                    tracing::warn!(%error, "always-allow rules not applied");
                }
            }
            Err(error) => tracing::warn!(%error, "always-allow rules not written"),
        }
    }
}

/// The user's answer.
enum Answer {
    Once,
    Always,
    No,
    /// Cancelled: closed without a choice, which is not a "no".
    Dismissed,
}

/// The refusal when the client cannot ask: the reasons and the rule to add.
pub fn how_to_allow(decision: &Decision) -> String {
    wavesh_tool::approval_refusal(
        "This command needs approval and this MCP client cannot ask the user",
        decision,
    )
}

/// The key of the approval in an "input required" round trip (protocol 2026-07-28).
pub const APPROVAL_KEY: &str = "wavesh-approval";

/// "Always" is offered only for prefix rules: an exact rule would allow just this text.
fn offers_always(decision: &Decision) -> bool {
    !decision.suggestions.is_empty() && decision.suggestions.iter().all(|s| s.ends_with(":*)"))
}

/// The elicitation shown to the user: the command, why it asks, the suggested rule.
pub fn elicitation(command: &str, decision: &Decision) -> Result<ElicitRequestParams, String> {
    let always = offers_always(decision);
    let mut builder = ElicitationSchema::builder().required_bool("allow");
    if always {
        builder = builder.optional_bool("always", false);
    }
    let schema: ElicitationSchema = builder.build().map_err(str::to_owned)?;
    let unsandboxed = decision
        .reasons
        .iter()
        .any(|r| r.kind == wavesh_policy::ReasonKind::Unsandboxed);
    let mut message = if unsandboxed {
        format!(
            "Allow wavesh to run this command WITHOUT the sandbox?\n\n{command}\n\nIt would \
             run with your full access: it can change any file you can, read your \
             credentials and use the network."
        )
    } else {
        format!("Allow wavesh to run this command?\n\n{command}")
    };
    if !decision.reasons.is_empty() && !unsandboxed {
        message.push_str(&format!(
            "\n\nWhy it asks: {}",
            wavesh_policy::join_reasons(&decision.reasons, "; ")
        ));
    }
    if always {
        message.push_str(&format!(
            "\n\nSet \"always\" to allow from now on: {} (written to .claude/settings.local.json)",
            decision.suggestions.join(", ")
        ));
    }
    Ok(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema: schema,
    })
}

/// A boolean field of an elicitation's answer, when the user gave one.
pub(crate) fn bool_field(result: &ElicitResult, name: &str) -> Option<bool> {
    result
        .content
        .as_ref()
        .and_then(|c| c.get(name))
        .and_then(serde_json::Value::as_bool)
}

fn interpret(result: &ElicitResult, offer_always: bool) -> Answer {
    let field = |name: &str| bool_field(result, name);
    match (&result.action, field("allow"), field("always")) {
        (ElicitationAction::Accept, Some(true), Some(true)) if offer_always => Answer::Always,
        (ElicitationAction::Accept, Some(true), _) => Answer::Once,
        (ElicitationAction::Cancel, _, _) => Answer::Dismissed,
        _ => Answer::No,
    }
}

#[cfg(test)]
mod tests {
    //! The approval texts, as the user and the model read them (OUT, RULE-5, PTY-4):
    //! each prompt, and each answer's text for the model. Pinned as one snapshot.

    use super::*;
    use rmcp::model::ElicitResult;
    use wavesh_tool::{Approver, BashInput, Permissions as Rules, Verdict};

    struct Workspace(std::path::PathBuf);

    impl Drop for Workspace {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn asking_session(ws: &Workspace) -> Session {
        let root = ws.0.join("root");
        std::fs::create_dir_all(&root).expect("a workspace");
        std::fs::create_dir_all(ws.0.join("private")).expect("a private base");
        let mut builder = Session::builder(&root);
        builder
            .private_base(ws.0.join("private"))
            .no_claude_settings()
            .no_login_env()
            .permissions(Rules {
                settings: std::sync::RwLock::default(),
                approver: Approver::Wavesh,
                mode: wavesh_policy::PermissionMode::Default,
            });
        builder.build().expect("a session")
    }

    fn asked(session: &Session, input: &BashInput) -> Decision {
        match session.prepare(input).verdict() {
            Verdict::Ask(decision) => decision.clone(),
            other => panic!("{} is not asked: {other:?}", input.command),
        }
    }

    fn prompt(command: &str, decision: &Decision) -> String {
        match elicitation(command, decision).expect("an elicitation") {
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } => {
                let fields =
                    serde_json::to_value(&requested_schema).expect("a schema")["properties"]
                        .as_object()
                        .map(|p| p.keys().cloned().collect::<Vec<_>>().join(", "))
                        .unwrap_or_default();
                format!("{message}\n[fields: {fields}]")
            }
            other => panic!("not a form: {other:?}"),
        }
    }

    fn answer(action: ElicitationAction, content: Option<serde_json::Value>) -> ElicitResult {
        serde_json::from_value(serde_json::json!({
            "action": action,
            "content": content,
        }))
        .expect("an elicitation result")
    }

    fn refusal(gate: Gate) -> String {
        match gate {
            Gate::Refuse(text) => text,
            Gate::Run => "<runs>".to_owned(),
        }
    }

    #[tokio::test]
    async fn out_approval_texts_are_pinned() {
        let ws = Workspace(
            std::env::temp_dir().join(format!("wavesh-approval-texts-{}", std::process::id())),
        );
        let session = asking_session(&ws);
        let asker = Permissions { session: &session };
        let mut texts = Vec::new();

        let write = BashInput::new("touch new.txt");
        let write_decision = asked(&session, &write);
        texts.push(("asked: a write", prompt(&write.command, &write_decision)));
        let install = BashInput::new("npm install left-pad");
        let install_decision = asked(&session, &install);
        texts.push((
            "asked: a prefix rule offered",
            prompt(&install.command, &install_decision),
        ));
        let mut unsandboxed = BashInput::new("ls");
        unsandboxed.dangerously_disable_sandbox = true;
        let unsandboxed_decision = asked(&session, &unsandboxed);
        texts.push((
            "asked: without the sandbox",
            prompt(&unsandboxed.command, &unsandboxed_decision),
        ));
        texts.push((
            "declined",
            refusal(asker.answer(
                &answer(
                    ElicitationAction::Accept,
                    Some(serde_json::json!({"allow": false})),
                ),
                &write_decision,
            )),
        ));
        texts.push((
            "declined by the decline button",
            refusal(asker.answer(&answer(ElicitationAction::Decline, None), &write_decision)),
        ));
        texts.push((
            "cancelled",
            refusal(asker.answer(&answer(ElicitationAction::Cancel, None), &write_decision)),
        ));
        texts.push((
            "approved once",
            refusal(asker.answer(
                &answer(
                    ElicitationAction::Accept,
                    Some(serde_json::json!({"allow": true})),
                ),
                &write_decision,
            )),
        ));
        texts.push(("the client cannot ask", how_to_allow(&write_decision)));
        texts.push((
            "the client cannot ask: without the sandbox",
            how_to_allow(&unsandboxed_decision),
        ));
        let approval = wavesh_tool::tty::InputApproval {
            command: "python3".to_owned(),
            level: "workspace-write".to_owned(),
        };
        let typed = match crate::input_gate::elicitation("b1234abcd", "import os\n", &approval)
            .expect("an elicitation")
        {
            ElicitRequestParams::FormElicitationParams { message, .. } => message,
            other => panic!("not a form: {other:?}"),
        };
        texts.push(("input asked", typed));
        session.shutdown().await;

        let all: String = texts
            .iter()
            .map(|(name, text)| format!("=== {name}\n{text}\n"))
            .collect();
        insta::assert_snapshot!("approval_texts", all);
    }
}
