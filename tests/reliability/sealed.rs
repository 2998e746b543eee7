//! Sealed runs: a command run because it was classified read-only cannot write files or
//! open TCP connections (Landlock), while read-only work goes on as before.

use std::net::TcpListener;

use wavesh_exec::seal::{SealSupport, support};
use wavesh_tool::{BashInput, CallContext, Session};

use crate::util::Workspace;

fn sealed() -> CallContext {
    // The test hook: the host says "approved as read-only" for whatever command it runs,
    // as a classifier mistake would.
    CallContext {
        sealed: true,
        ..CallContext::default()
    }
}

fn sessions(ws: &Workspace) -> Vec<(&'static str, Session)> {
    vec![
        (
            "supervised",
            crate::supervised_session(&ws.root, &ws.private),
        ),
        (
            "direct",
            Session::builder(&ws.root)
                .private_base(&ws.private)
                .no_login_env()
                .build()
                .unwrap(),
        ),
    ]
}

fn landlock_or_skip() -> bool {
    if support() == SealSupport::Unavailable {
        // Reported, not hidden: the kernel has no Landlock, so nothing can be sealed.
        println!("SKIPPED: this kernel has no Landlock; sealed runs cannot be tested here");
        return false;
    }
    true
}

/// A listener on 127.0.0.1 and its port, or `None` (SKIPPED, said) where Landlock cannot
/// restrict TCP (before ABI 4).
fn tcp_seal_or_skip() -> Option<(TcpListener, u16)> {
    if !landlock_or_skip() {
        return None;
    }
    if support() != SealSupport::Full {
        println!("SKIPPED: this kernel's Landlock predates TCP rules (ABI 4)");
        return None;
    }
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    Some((listener, port))
}

/// An approved `find . -name x` works sealed; mis-approved writes fail with a permission
/// error and leave nothing; here-documents and $TMPDIR still work.
#[tokio::test]
async fn seal_read_only_commands_cannot_write() {
    if !landlock_or_skip() {
        return;
    }
    let ws = Workspace::new();
    std::fs::create_dir_all(ws.root.join("sub")).unwrap();
    std::fs::write(ws.root.join("sub/x"), "").unwrap();
    for (name, session) in sessions(&ws) {
        let found = session
            .bash(BashInput::new("find . -name x"), &sealed())
            .await
            .unwrap();
        assert_eq!(found.text.trim(), "./sub/x", "{name}: {}", found.text);
        assert_eq!(found.exit_code, Some(0), "{name}");

        let touch = session
            .bash(BashInput::new("touch x"), &sealed())
            .await
            .unwrap();
        assert_ne!(touch.exit_code, Some(0), "{name}: {}", touch.text);
        assert!(
            touch.text.contains("Permission denied"),
            "{name}: {}",
            touch.text
        );
        assert!(!ws.root.join("x").exists(), "{name}: the file was made");

        let redirect = session
            .bash(
                BashInput::new("echo hi > y; rm -f sub/x; ls sub"),
                &sealed(),
            )
            .await
            .unwrap();
        assert!(
            redirect.text.contains("Permission denied"),
            "{name}: {}",
            redirect.text
        );
        assert!(!ws.root.join("y").exists(), "{name}");
        assert!(
            ws.root.join("sub/x").exists(),
            "{name}: the file was removed"
        );

        // What read-only work needs: /dev/null, stderr, a here-document larger than a
        // pipe, and the private TMPDIR (sort's spill files).
        let needs = format!(
            "echo quiet > /dev/null; echo err >&2; cat <<'EOF' | wc -c\n{}\nEOF\n\
             t=$(mktemp) && echo tmp > \"$t\" && cat \"$t\"",
            "a".repeat(200_000)
        );
        let ok = session
            .bash(BashInput::new(needs), &sealed())
            .await
            .unwrap();
        assert_eq!(ok.exit_code, Some(0), "{name}: {}", ok.text);
        assert!(ok.text.contains("err\n200001\ntmp"), "{name}: {}", ok.text);

        // The same write unsealed: sealing is per call.
        let plain = session
            .bash(
                BashInput::new("touch z && echo made"),
                &CallContext::default(),
            )
            .await
            .unwrap();
        assert_eq!(plain.text.trim(), "made", "{name}");
        std::fs::remove_file(ws.root.join("z")).unwrap();
    }
}

/// A mis-approved command cannot open a TCP connection or listen (Landlock ABI 4 and
/// later).
#[tokio::test]
async fn seal_read_only_commands_cannot_connect() {
    let Some((_listener, port)) = tcp_seal_or_skip() else {
        return;
    };
    let ws = Workspace::new();
    let command = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    for (name, session) in sessions(&ws) {
        let sealed_run = session
            .bash(BashInput::new(command.clone()), &sealed())
            .await
            .unwrap();
        assert!(
            sealed_run.text.contains("Permission denied") && !sealed_run.text.contains("connected"),
            "{name}: {}",
            sealed_run.text
        );
        let open = session
            .bash(BashInput::new(command.clone()), &CallContext::default())
            .await
            .unwrap();
        assert_eq!(open.text.trim(), "connected", "{name}");

        // Listening is refused too.
        let bind = "python3 -c 'import socket; socket.socket().bind((\"127.0.0.1\", 0)); print(\"bound\")'";
        let sealed_bind = session.bash(BashInput::new(bind), &sealed()).await.unwrap();
        assert!(
            sealed_bind.text.contains("PermissionError") && !sealed_bind.text.contains("bound"),
            "{name}: {}",
            sealed_bind.text
        );
        let open_bind = session
            .bash(BashInput::new(bind), &CallContext::default())
            .await
            .unwrap();
        assert_eq!(open_bind.text.trim(), "bound", "{name}");
    }
}

/// The setting turns sealing off.
#[tokio::test]
async fn seal_setting_turns_it_off() {
    if !landlock_or_skip() {
        return;
    }
    let ws = Workspace::new();
    let config = wavesh_tool::ToolConfig {
        seal_read_only: false,
        ..wavesh_tool::ToolConfig::default()
    };
    let session = Session::builder(&ws.root)
        .private_base(&ws.private)
        .no_login_env()
        .config(config)
        .build()
        .unwrap();
    let result = session
        .bash(BashInput::new("touch x && echo made"), &sealed())
        .await
        .unwrap();
    assert_eq!(result.text.trim(), "made");
}

/// Through `wavesh mcp --permission-mode wavesh`: a read-only command runs sealed (its
/// processes have no-new-privileges, the first step of a Landlock seal) and works;
/// `--no-seal` runs it as before.
#[test]
fn seal_mcp_read_only_commands_run_sealed() {
    if !landlock_or_skip() {
        return;
    }
    let ws = Workspace::new();
    std::fs::create_dir_all(ws.root.join("sub")).unwrap();
    std::fs::write(ws.root.join("sub/x"), "").unwrap();
    for (args, flag) in [
        (&["--permission-mode", "wavesh"][..], "1"),
        (&["--permission-mode", "wavesh", "--no-seal"][..], "0"),
    ] {
        let mut mcp = crate::Mcp::start(&ws, args);
        let found = mcp.tool(2, "Bash", serde_json::json!({"command": "find . -name x"}));
        assert_eq!(found.trim(), "./sub/x", "{args:?}");
        let status = mcp.tool(
            3,
            "Bash",
            serde_json::json!({"command": "grep NoNewPrivs /proc/self/status"}),
        );
        assert_eq!(
            status.split_whitespace().last(),
            Some(flag),
            "{args:?}: {status}"
        );
        mcp.close();
    }
}

/// zsh writes here-documents under `$TMPPREFIX` (default `/tmp/zsh`), not `$TMPDIR`: a
/// sealed zsh command gets both pointed at its private directory.
#[tokio::test]
async fn seal_zsh_here_documents_work() {
    if !landlock_or_skip() {
        return;
    }
    let Some(zsh) = ["/usr/bin/zsh", "/bin/zsh"]
        .into_iter()
        .find(|path| std::path::Path::new(path).exists())
    else {
        // scripts/test installs zsh where it may; CI (WAVESH_TEST_REQUIRE_ALL) must have it.
        assert!(
            std::env::var_os("WAVESH_TEST_REQUIRE_ALL").is_none(),
            "zsh is required (WAVESH_TEST_REQUIRE_ALL is set): apt-get install zsh"
        );
        println!("SKIPPED: no zsh on this machine (apt-get install zsh)");
        return;
    };
    let ws = Workspace::new();
    let session = Session::builder(&ws.root)
        .private_base(&ws.private)
        .no_login_env()
        .shell(wavesh_exec::Shell::new(zsh, wavesh_exec::ShellKind::Zsh))
        .supervisor(crate::util::WAVESH)
        .build()
        .unwrap();
    let result = session
        .bash(
            BashInput::new("cat <<'EOF'\nfrom a here-doc\nEOF\nsort =(print b; print a)"),
            &sealed(),
        )
        .await
        .unwrap();
    assert_eq!(result.text, "from a here-doc\na\nb", "{}", result.text);
}

/// Everyday read-only work runs sealed as before: git status and log in a repository
/// (git's optional index refresh fails quietly), ls, cat, wc, sort, and the built-in grep.
#[tokio::test]
async fn seal_everyday_read_only_commands_work() {
    if !landlock_or_skip() {
        return;
    }
    let ws = Workspace::new();
    let setup = std::process::Command::new("bash")
        .arg("-c")
        .arg(
            "git init -q && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m first \
             && printf 'b\\na\\n' > f && touch -d '2000-01-01' f",
        )
        .current_dir(&ws.root)
        .status()
        .unwrap();
    assert!(setup.success());
    let session = crate::supervised_session(&ws.root, &ws.private);
    let command =
        "git status --short; git log --format=%s; ls; sort f | head -1; wc -l < f; grep -c a f";
    let result = session
        .bash(BashInput::new(command), &sealed())
        .await
        .unwrap();
    assert_eq!(result.text, "?? f\nfirst\nf\na\n2\n1", "{}", result.text);
    assert_eq!(result.exit_code, Some(0));
}

/// A read-only command that reads over the network (`gh pr view`) keeps TCP connect when
/// sealed, while its files stay sealed and listening stays refused. Through `wavesh mcp`,
/// with a stand-in `gh` on PATH that connects and then tries to write.
#[test]
fn seal_network_readers_keep_tcp_connect_only() {
    let Some((_listener, port)) = tcp_seal_or_skip() else {
        return;
    };
    let ws = Workspace::new();
    let bin = ws.root.parent().unwrap().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let gh = bin.join("gh");
    std::fs::write(
        &gh,
        format!(
            "#!/bin/bash\nexec 3<>/dev/tcp/127.0.0.1/{port} && echo connected\n\
             touch written 2>/dev/null && echo wrote || echo no-write\n\
             python3 -c 'import socket; socket.socket().bind((\"127.0.0.1\", 0))' 2>/dev/null && echo bound || echo no-bind\n"
        ),
    )
    .unwrap();
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&gh)
        .status()
        .unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut mcp = crate::Mcp::start_with(&ws, &["--permission-mode", "wavesh"], |server| {
        server.env("PATH", &path);
    });
    let answer = mcp.tool(2, "Bash", serde_json::json!({"command": "gh pr view 1"}));
    assert_eq!(answer, "connected\nno-write\nno-bind", "{answer}");
    assert!(!ws.root.join("written").exists());
    mcp.close();
}
