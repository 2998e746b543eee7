//! Asking the user about a new host (NET-2): a request for a host no rule allows waits
//! for the host's asker (wavesh mcp asks through elicitation); "once" lets that request
//! through, "this session" every later one without asking again, "no" refuses it and
//! every later one, with a note that says the user declined. Deny rules and the
//! read-only scope are never asked about. Loopback only: the upstream is the test's own
//! server on the host's 127.0.0.1, which the proxy may reach by the test-only allowance.

use std::sync::{Arc, Mutex};

use wavesh_exec::net::{HostAnswer, HostAsker};
use wavesh_exec::sandbox::Level;

use crate::Fixture;
use crate::network::{Upstream, allow_loopback, network_or_skip, session};

/// An asker that gives `answer` and records every question.
fn asker(answer: HostAnswer, asked: Arc<Mutex<Vec<String>>>) -> HostAsker {
    Arc::new(move |host, port| {
        asked.lock().unwrap().push(format!("{host}:{port}"));
        Box::pin(async move { answer })
    })
}

/// curl through the proxy (NO_PROXY names 127.0.0.1 for the session's own servers).
fn fetch(port: u16, path: &str) -> String {
    format!(
        "env -u NO_PROXY -u no_proxy curl -sS -m 20 http://127.0.0.1:{port}{path}; echo \" rc=$?\""
    )
}

/// NET-2: each answer, two requests each, counted at the upstream and at the asker.
#[tokio::test]
async fn net_2_a_new_host_is_asked_about_once_per_answer() {
    if !network_or_skip() {
        return;
    }
    let up = Upstream::start();
    let port = up.port;
    for (answer, questions, reached) in [
        (HostAnswer::Once, 2, 2),
        (HostAnswer::Session, 1, 2),
        (HostAnswer::Always, 1, 2),
        (HostAnswer::No, 1, 0),
    ] {
        let f = Fixture::new();
        let s = session(&f, Level::WorkspaceWrite, |config| {
            allow_loopback(config);
            config.sandbox.network.registries = false;
        });
        let asked = Arc::new(Mutex::new(Vec::new()));
        let proxy = s.network_proxy().expect("the session has its network");
        proxy.set_asker(Some(asker(answer, asked.clone())));
        let before = up.hits();
        let mut texts = Vec::new();
        for path in ["/first", "/second"] {
            texts.push(f.run(&s, &fetch(port, path)).await.text);
        }
        let got = up.hits() - before;
        assert_eq!(got, reached, "{answer:?}: {texts:?}");
        assert_eq!(
            asked.lock().unwrap().clone(),
            vec![format!("127.0.0.1:{port}"); questions],
            "{answer:?}"
        );
        if answer == HostAnswer::No {
            for text in &texts {
                assert!(
                    text.contains("the user declined to allow it when asked"),
                    "{text}"
                );
            }
        } else {
            assert!(texts[1].contains("upstream says /second"), "{texts:?}");
        }
        let granted = proxy.granted_hosts();
        assert_eq!(
            granted.contains(&format!("127.0.0.1:{port}")),
            matches!(answer, HostAnswer::Session | HostAnswer::Always),
            "{answer:?}: {granted:?}"
        );
    }
}

/// NET-2: a denied host is refused without a question (deny wins), as is one the
/// policy allows reached by an address the proxy never connects to; without an asker a
/// new host is refused with the setting that would allow it.
#[tokio::test]
async fn net_2_denied_hosts_are_never_asked_about() {
    if !network_or_skip() {
        return;
    }
    let up = Upstream::start();
    let port = up.port;
    let f = Fixture::new();
    let s = session(&f, Level::WorkspaceWrite, |config| {
        allow_loopback(config);
        config.sandbox.network.denied_domains = vec![format!("127.0.0.1:{port}")];
    });
    let asked = Arc::new(Mutex::new(Vec::new()));
    s.network_proxy()
        .unwrap()
        .set_asker(Some(asker(HostAnswer::Session, asked.clone())));
    let text = f.run(&s, &fetch(port, "/denied")).await.text;
    assert!(text.contains("deniedDomains"), "{text}");
    // Not loopback-allowed: granted by name, refused by its address.
    let g = Fixture::new();
    let t = session(&g, Level::WorkspaceWrite, |_| {});
    t.network_proxy()
        .unwrap()
        .set_asker(Some(asker(HostAnswer::Session, asked.clone())));
    let text = g.run(&t, &fetch(port, "/address")).await.text;
    assert!(text.contains("never connects to"), "{text}");
    assert_eq!(asked.lock().unwrap().len(), 1, "only the address case asks");
    assert_eq!(up.hits(), 0);
    // No asker: refused at once, naming the setting.
    let h = Fixture::new();
    let u = session(&h, Level::WorkspaceWrite, allow_loopback);
    let text = h.run(&u, &fetch(port, "/plain")).await.text;
    assert!(text.contains("sandbox.network.allowedDomains"), "{text}");
    assert_eq!(up.hits(), 0);
}
