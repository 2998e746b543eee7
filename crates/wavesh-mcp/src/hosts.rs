//! Asking the user about a new host (NET-2 over MCP): when a sandboxed command's request
//! reaches the session's proxy for a host no rule allows, and the client can answer an
//! elicitation, the user is asked once per host: allow it once, for this session, or
//! always. "Always" writes the host to `sandbox.network.allowedDomains` of the user's
//! `~/.claude/settings.json`, as "always allow" writes a command's rule: the user's own
//! file, since a settings file inside the workspace may only tighten the network (SBX-6).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema};
use rmcp::service::{Peer, RequestContext};
use wavesh_exec::net::{HostAnswer, HostAsker};
use wavesh_tool::Session;

/// Installs the asker on the session's proxy, once, when the client can answer an
/// elicitation request (protocol versions that let the server send requests).
pub fn install(session: &Session, context: &RequestContext<RoleServer>) {
    let Some(proxy) = session.network_proxy() else {
        return;
    };
    if proxy.has_asker() {
        return;
    }
    let can_ask = context
        .client_capabilities()
        .is_some_and(|caps| caps.elicitation.is_some());
    let modern = context
        .protocol_version()
        .is_some_and(|version| version.as_str() >= "2026-07-28");
    if !can_ask || modern {
        return;
    }
    let peer = context.peer.clone();
    let settings = session.home().join(".claude/settings.json");
    let asker: HostAsker = Arc::new(move |host, port| {
        let (peer, settings) = (peer.clone(), settings.clone());
        Box::pin(async move { ask(&peer, &settings, &host, port).await })
    });
    proxy.set_asker(Some(asker));
}

/// The settings entry for `host:port`: the name alone for the web's ports (an entry
/// without a port stands for 80 and 443).
fn entry(host: &str, port: u16) -> String {
    if port == 443 || port == 80 {
        host.to_owned()
    } else {
        format!("{host}:{port}")
    }
}

/// The question.
fn elicitation(host: &str, port: u16, settings: &Path) -> Result<ElicitRequestParams, String> {
    let schema = ElicitationSchema::builder()
        .required_bool("allow")
        .optional_bool_with("session", |b| {
            b.description("Allow it for the rest of this session")
                .with_default(false)
        })
        .optional_bool_with("always", |b| {
            b.description(format!(
                "Allow it from now on (written to {})",
                settings.display()
            ))
            .with_default(false)
        })
        .build()
        .map_err(str::to_owned)?;
    Ok(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: format!(
            "A sandboxed command wants to reach {host}:{port}, which the network settings do \
             not allow. Allow it?\n\nSet \"session\" to allow it for the rest of this \
             session, or \"always\" to add \"{}\" to sandbox.network.allowedDomains in {}.",
            entry(host, port),
            settings.display()
        ),
        requested_schema: schema,
    })
}

/// The user's answer.
fn interpret(result: &ElicitResult) -> HostAnswer {
    let field = |name: &str| crate::permissions::bool_field(result, name).unwrap_or(false);
    if result.action != ElicitationAction::Accept || !field("allow") {
        return HostAnswer::No;
    }
    if field("always") {
        HostAnswer::Always
    } else if field("session") {
        HostAnswer::Session
    } else {
        HostAnswer::Once
    }
}

async fn ask(peer: &Peer<RoleServer>, settings: &Path, host: &str, port: u16) -> HostAnswer {
    let params = match elicitation(host, port, settings) {
        Ok(params) => params,
        Err(error) => {
            tracing::warn!(%error, "the host question cannot be built");
            return HostAnswer::No;
        }
    };
    let answer = match peer.create_elicitation(params).await {
        Ok(result) => interpret(&result),
        Err(error) => {
            tracing::warn!(%error, "the host question failed");
            HostAnswer::No
        }
    };
    if answer == HostAnswer::Always
        && let Err(error) = write_allowed_domain(settings, &entry(host, port))
    {
        // Allowed for the session all the same; the user is told in the log.
        tracing::warn!(%error, file = %settings.display(), "the always-allowed host was not written");
        return HostAnswer::Session;
    }
    answer
}

/// Adds `entry` to `sandbox.network.allowedDomains` of the settings file at `path`,
/// keeping everything else in it; a file that is not a JSON object is left alone.
pub fn write_allowed_domain(path: &Path, entry: &str) -> Result<PathBuf, String> {
    let mut root = match std::fs::read_to_string(path) {
        Ok(text) if !text.trim().is_empty() => serde_json::from_str::<serde_json::Value>(&text)
            .map_err(|e| format!("{} is not valid JSON: {e}", path.display()))?,
        Ok(_) => serde_json::json!({}),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => serde_json::json!({}),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let not_object = || format!("{}: a settings key is not a JSON object", path.display());
    let network = root
        .as_object_mut()
        .ok_or_else(not_object)?
        .entry("sandbox")
        .or_insert_with(|| serde_json::json!({}))
        .as_object_mut()
        .ok_or_else(not_object)?
        .entry("network")
        .or_insert_with(|| serde_json::json!({}))
        .as_object_mut()
        .ok_or_else(not_object)?;
    let list = network
        .entry("allowedDomains")
        .or_insert_with(|| serde_json::json!([]))
        .as_array_mut()
        .ok_or_else(|| {
            format!(
                "{}: sandbox.network.allowedDomains is not a list",
                path.display()
            )
        })?;
    if !list.iter().any(|v| v.as_str() == Some(entry)) {
        list.push(serde_json::Value::String(entry.to_owned()));
    }
    let text = serde_json::to_string_pretty(&root).map_err(|e| e.to_string())?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let temp = path.with_extension("json.wavesh-tmp");
    std::fs::write(&temp, text + "\n")
        .and_then(|()| std::fs::rename(&temp, path))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(action: ElicitationAction, content: serde_json::Value) -> HostAnswer {
        let mut result = ElicitResult::new(action);
        result.content = Some(content);
        interpret(&result)
    }

    /// NET-2: the three grants, and everything else is a no.
    #[test]
    fn net_2_host_answers_are_read() {
        use serde_json::json;
        let accept = ElicitationAction::Accept;
        assert_eq!(
            answer(accept.clone(), json!({"allow": true})),
            HostAnswer::Once
        );
        assert_eq!(
            answer(accept.clone(), json!({"allow": true, "session": true})),
            HostAnswer::Session
        );
        assert_eq!(
            answer(
                accept.clone(),
                json!({"allow": true, "session": true, "always": true})
            ),
            HostAnswer::Always
        );
        assert_eq!(
            answer(accept, json!({"allow": false, "always": true})),
            HostAnswer::No
        );
        assert_eq!(
            answer(ElicitationAction::Decline, json!({"allow": true})),
            HostAnswer::No
        );
        assert_eq!(
            answer(ElicitationAction::Cancel, json!({"allow": true})),
            HostAnswer::No
        );
    }

    /// NET-2: "always" adds the entry once, keeping the file's other settings; a file
    /// that is not JSON, or whose list is not a list, is left alone with a clear error.
    #[test]
    fn net_2_always_writes_the_user_settings() {
        let dir = std::env::temp_dir().join(format!("wavesh-hosts-{}", std::process::id()));
        let path = dir.join(".claude/settings.json");
        write_allowed_domain(&path, "example.com").unwrap();
        write_allowed_domain(&path, "example.com").unwrap();
        write_allowed_domain(&path, "git.example.org:8443").unwrap();
        let value: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(
            value["sandbox"]["network"]["allowedDomains"],
            serde_json::json!(["example.com", "git.example.org:8443"])
        );
        std::fs::write(&path, r#"{"permissions": {"allow": ["Bash(ls:*)"]}}"#).unwrap();
        write_allowed_domain(&path, "example.com").unwrap();
        let value: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(value["permissions"]["allow"][0], "Bash(ls:*)");
        assert_eq!(
            value["sandbox"]["network"]["allowedDomains"][0],
            "example.com"
        );
        std::fs::write(&path, "{not json").unwrap();
        let error = write_allowed_domain(&path, "example.com").unwrap_err();
        assert!(error.contains("is not valid JSON"), "{error}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{not json");
        std::fs::write(
            &path,
            r#"{"sandbox": {"network": {"allowedDomains": "x"}}}"#,
        )
        .unwrap();
        let error = write_allowed_domain(&path, "example.com").unwrap_err();
        assert!(error.contains("is not a list"), "{error}");
        assert_eq!(entry("example.com", 443), "example.com");
        assert_eq!(entry("example.com", 8080), "example.com:8080");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
