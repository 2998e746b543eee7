//! Who approves commands in `wavesh mcp` (RULE-5 for MCP).
//!
//! `host` (default): the MCP client approves tool calls as it does for any server;
//! wavesh still refuses what deny rules forbid. `wavesh`: wavesh decides — allowed and
//! read-only commands run, denied ones are refused with the reason, and the rest are put
//! to the user through MCP elicitation when the client supports it, or refused with the
//! rule that would allow them when it does not.

use std::path::PathBuf;

use rmcp::RoleServer;
use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::Peer;
use wavesh_policy::git_guard::{RealFs, git_context};
use wavesh_policy::settings::Settings;
use wavesh_policy::{ClassifyContext, Decision, Dialect, Outcome, PermissionMode, decide};

/// Who approves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Approver {
    /// The MCP client.
    #[default]
    Host,
    /// wavesh itself.
    Wavesh,
}

/// The permission setup of a server.
#[derive(Debug, Clone, Default)]
pub struct Permissions {
    /// Rules of every level.
    pub settings: Settings,
    /// Who approves.
    pub approver: Approver,
    /// The policy mode (default, plan, ...).
    pub mode: PermissionMode,
}

/// What to do with a Bash call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    /// Run it.
    Run,
    /// Refuse it with this message for the model.
    Refuse(String),
}

impl Permissions {
    /// Decides for `command` run in `cwd`.
    pub fn decision(&self, command: &str, cwd: PathBuf, dialect: Dialect) -> Decision {
        let env: Vec<(String, String)> = std::env::vars().collect();
        let ctx = ClassifyContext {
            home: std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_default(),
            git: git_context(&cwd, &env, &RealFs),
            cwd,
            ..ClassifyContext::default()
        };
        let analysis = wavesh_parse::analyze(command, dialect);
        decide(command, &analysis, &self.settings, self.mode, &ctx)
    }

    /// The gate for a Bash call. `unsandboxed` calls (`dangerouslyDisableSandbox`) are
    /// never approved for being read-only.
    pub async fn gate(
        &self,
        command: &str,
        unsandboxed: bool,
        cwd: PathBuf,
        dialect: Dialect,
        peer: &Peer<RoleServer>,
    ) -> Gate {
        let mut decision = self.decision(command, cwd, dialect);
        if decision.outcome == Outcome::Deny {
            return Gate::Refuse(format!(
                "Permission denied: {}",
                decision.reasons.join("; ")
            ));
        }
        if self.approver == Approver::Host {
            return Gate::Run;
        }
        if unsandboxed && decision.outcome == Outcome::Allow && decision.matched_rules.is_empty() {
            decision.outcome = Outcome::Ask;
        }
        if decision.outcome == Outcome::Allow {
            return Gate::Run;
        }
        let supports = peer
            .peer_info()
            .is_some_and(|info| info.capabilities.elicitation.is_some());
        if !supports {
            return Gate::Refuse(how_to_allow(&decision));
        }
        match ask_user(peer, command, &decision).await {
            Ok(true) => Gate::Run,
            Ok(false) => Gate::Refuse("The user declined to run this command.".into()),
            Err(error) => {
                tracing::warn!(%error, "elicitation failed");
                Gate::Refuse(how_to_allow(&decision))
            }
        }
    }
}

fn how_to_allow(decision: &Decision) -> String {
    let mut text =
        String::from("This command needs approval and this MCP client cannot ask the user");
    if !decision.reasons.is_empty() {
        text.push_str(&format!(" ({})", decision.reasons.join("; ")));
    }
    text.push('.');
    if !decision.suggestions.is_empty() {
        text.push_str(&format!(
            " To allow it, add to permissions.allow in .claude/settings.local.json: {}",
            decision.suggestions.join(", ")
        ));
    }
    text
}

async fn ask_user(
    peer: &Peer<RoleServer>,
    command: &str,
    decision: &Decision,
) -> Result<bool, String> {
    let schema: ElicitationSchema = ElicitationSchema::builder()
        .required_bool("allow")
        .build()
        .map_err(str::to_owned)?;
    let mut message = format!("Allow wavesh to run this command?\n\n{command}");
    if !decision.reasons.is_empty() {
        message.push_str(&format!("\n\nWhy it asks: {}", decision.reasons.join("; ")));
    }
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema: schema,
    };
    let result = peer
        .create_elicitation(params)
        .await
        .map_err(|e| e.to_string())?;
    Ok(result.action == ElicitationAction::Accept
        && result
            .content
            .as_ref()
            .and_then(|c| c.get("allow"))
            .and_then(serde_json::Value::as_bool)
            == Some(true))
}
