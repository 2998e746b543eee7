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
#[derive(Debug, Default)]
pub struct Permissions {
    /// Rules of every level; "always allow" answers add to it.
    pub settings: std::sync::RwLock<Settings>,
    /// The workspace, whose `.claude/settings.local.json` receives "always allow" rules.
    pub workspace: PathBuf,
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
        let settings = self
            .settings
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        decide(command, &analysis, &settings, self.mode, &ctx)
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
            Ok(Answer::Once) => Gate::Run,
            Ok(Answer::Always) => {
                self.always_allow(&decision.suggestions);
                Gate::Run
            }
            Ok(Answer::No) => Gate::Refuse("The user declined to run this command.".into()),
            Err(error) => {
                tracing::warn!(%error, "elicitation failed");
                Gate::Refuse(how_to_allow(&decision))
            }
        }
    }
}

impl Permissions {
    /// Writes the rules to `.claude/settings.local.json` and applies them at once.
    fn always_allow(&self, rules: &[String]) {
        match wavesh_policy::settings::write_always_allow(&self.workspace, rules) {
            Ok(path) => {
                let mut settings = self
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
) -> Result<Answer, String> {
    // "Always" is offered only for prefix rules: an exact rule would allow just this text.
    let offer_always =
        !decision.suggestions.is_empty() && decision.suggestions.iter().all(|s| s.ends_with(":*)"));
    let mut builder = ElicitationSchema::builder().required_bool("allow");
    if offer_always {
        builder = builder.optional_bool("always", false);
    }
    let schema: ElicitationSchema = builder.build().map_err(str::to_owned)?;
    let mut message = format!("Allow wavesh to run this command?\n\n{command}");
    if !decision.reasons.is_empty() {
        message.push_str(&format!("\n\nWhy it asks: {}", decision.reasons.join("; ")));
    }
    if offer_always {
        message.push_str(&format!(
            "\n\nSet \"always\" to allow from now on: {} (written to .claude/settings.local.json)",
            decision.suggestions.join(", ")
        ));
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
    let field = |name: &str| {
        result
            .content
            .as_ref()
            .and_then(|c| c.get(name))
            .and_then(serde_json::Value::as_bool)
    };
    Ok(match (result.action, field("allow"), field("always")) {
        (ElicitationAction::Accept, Some(true), Some(true)) if offer_always => Answer::Always,
        (ElicitationAction::Accept, Some(true), _) => Answer::Once,
        _ => Answer::No,
    })
}
