//! The model is told the rules before it fails by them (SBX-4, NET-2): the Bash
//! description of a real session states its level, its writable roots and the hosts its
//! network actually reaches, and changes when the policy does. Each paragraph is pinned
//! as a snapshot (the fixture's paths masked), and checked against what the session does.

use wavesh_exec::sandbox::Level;
use wavesh_tool::{BASH_TOOL_NAME, Session};

use crate::Fixture;
use crate::network::{network_or_skip, session};

/// The sandbox paragraph of `session`'s Bash description (its last one).
fn paragraph(f: &Fixture, session: &Session) -> String {
    let tools = session.tool_definitions();
    let bash = tools.iter().find(|t| t.name == BASH_TOOL_NAME).unwrap();
    let text = bash.description.rsplit("\n\n").next().unwrap().to_owned();
    text.replace(&f.ws.display().to_string(), "[WORKSPACE]")
}

/// SBX-4: the paragraph follows the level: off says so and nothing else; read-only says
/// nothing may be written and there is no network; workspace-write names the workspace.
#[tokio::test]
async fn sbx_4_description_follows_the_session_level() {
    if !network_or_skip() {
        return;
    }
    let f = Fixture::new();
    let mut seen = Vec::new();
    for level in [Level::Off, Level::ReadOnly, Level::WorkspaceWrite] {
        let s = session(&f, level, |_| {});
        let text = paragraph(&f, &s);
        match level {
            Level::Off => assert!(text.starts_with("Sandbox: off."), "{text}"),
            Level::ReadOnly => {
                assert!(
                    text.contains("write nothing") && text.contains("no network"),
                    "{text}"
                )
            }
            Level::WorkspaceWrite => {
                assert!(text.contains("write only to [WORKSPACE], /tmp"), "{text}");
                // The session really got its network: the registries are named.
                assert!(text.contains("crates.io"), "{text}");
            }
        }
        seen.push(format!("{}: {text}", level.name()));
    }
    insta::assert_snapshot!("description-levels", seen.join("\n\n"));
}

/// NET-2: the hosts named are the session proxy's policy: the allowed entries, the
/// denied ones, the registries preset only when on; none without the session network;
/// and the flag is not advised where it is ignored.
#[tokio::test]
async fn net_2_description_names_the_hosts_the_proxy_allows() {
    if !network_or_skip() {
        return;
    }
    let f = Fixture::new();
    let s = session(&f, Level::WorkspaceWrite, |c| {
        c.sandbox.network.registries = false;
        c.sandbox.network.allowed_domains = vec!["github.com".into(), "*.example.org".into()];
        c.sandbox.network.denied_domains = vec!["gist.example.org".into()];
    });
    let text = paragraph(&f, &s);
    assert!(
        text.contains("Network: github.com, *.example.org via the proxy (never gist.example.org)"),
        "{text}"
    );
    assert!(!text.contains("crates.io"), "{text}");
    let none = session(&f, Level::WorkspaceWrite, |c| {
        c.sandbox.network.registries = false;
    });
    assert!(paragraph(&f, &none).contains("Network: no host outside the session"));
    let off = session(&f, Level::WorkspaceWrite, |c| {
        c.sandbox.network.enabled = false
    });
    let off_text = paragraph(&f, &off);
    assert!(off_text.contains("Network: none."), "{off_text}");
    let ignored = session(&f, Level::WorkspaceWrite, |c| {
        c.sandbox.allow_unsandboxed = false
    });
    let ignored_text = paragraph(&f, &ignored);
    assert!(
        ignored_text.contains("dangerouslyDisableSandbox is ignored"),
        "{ignored_text}"
    );
    insta::assert_snapshot!(
        "description-network",
        [text, off_text, ignored_text].join("\n\n")
    );
}

/// SBX-4: a directory added to the session is named among the writable roots.
#[tokio::test]
async fn sbx_4_description_names_added_directories() {
    if !network_or_skip() {
        return;
    }
    let f = Fixture::new();
    let s = session(&f, Level::WorkspaceWrite, |_| {});
    s.add_directory(&f.outside);
    let text = paragraph(&f, &s);
    let outside = f.outside.display().to_string();
    assert!(
        text.contains(&format!("write only to [WORKSPACE], {outside}, /tmp")),
        "{text}"
    );
}
