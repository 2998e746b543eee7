//! `wavesh doctor`'s account of the session's network (NET-1, NET-2, SBX-5): whether a
//! session here gets a network namespace of its own, tried for real with a supervisor,
//! and what its proxy lets through by default.

/// The network mode a sandboxed session gets here, in words, and as JSON.
pub fn session_network() -> (String, serde_json::Value) {
    let presets = wavesh_exec::net::policy::REGISTRIES.join(", ");
    #[cfg(target_os = "linux")]
    {
        use wavesh_exec::supervisor::{Options, Supervisor};
        let tried = std::env::current_exe().and_then(|exe| {
            Supervisor::start_with(
                exe,
                &Options {
                    network: true,
                    ..Options::default()
                },
            )
        });
        let (mode, why) = match tried.map(|s| s.network_ready()) {
            Ok(Ok(true)) => ("own namespace", None),
            Ok(Ok(false)) => ("none", Some("the supervisor made no namespace".to_owned())),
            Ok(Err(why)) => ("none", Some(why)),
            Err(error) => ("none", Some(format!("no supervisor: {error}"))),
        };
        let text = match &why {
            None => format!(
                "session network: a namespace of its own per session (loopback shared by its \
                 commands); egress only through wavesh's proxy on 127.0.0.1:{} (HTTP and \
                 HTTPS by CONNECT; read-only reads on :{}, api.github.com only); allowed by \
                 default (the registries preset): {presets}",
                wavesh_exec::net::PROXY_PORT,
                wavesh_exec::net::READ_PORT,
            ),
            Some(why) => format!(
                "session network: none ({why}): sandboxed commands have no network at all \
                 (no loopback, no proxy); --sandbox-strict refuses such a session"
            ),
        };
        let json = serde_json::json!({
            "mode": mode,
            "unavailable": why,
            "proxy": format!("127.0.0.1:{}", wavesh_exec::net::PROXY_PORT),
            "read_proxy": format!("127.0.0.1:{}", wavesh_exec::net::READ_PORT),
            "registries": wavesh_exec::net::policy::REGISTRIES,
        });
        (text, json)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = presets;
        (
            "session network: none (Linux only): sandboxed commands have no network".to_owned(),
            serde_json::json!({ "mode": "none", "unavailable": "Linux only" }),
        )
    }
}
