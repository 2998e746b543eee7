//! The escape suite (SBX-2): for each sandboxed level, direct and through the supervisor,
//! every attack is refused, prints no marker secret, changes no file, reaches no
//! listener; the model text of each run is snapshotted per level.
//!
//! Each attack prints ESCAPED only if it succeeded.

use std::io::{BufRead, BufReader, Read};
use std::net::{TcpListener, UdpSocket};
use std::os::unix::net::UnixListener;
use std::process::{Child, Command, Stdio};

use wavesh_exec::sandbox::Level;

use crate::{Fixture, HOME_SECRETS, WORKSPACE_SECRETS, configurations, enforced_or_skip};

/// Runs `attacks` in every configuration; returns the transcript of the direct run of
/// `level`, after checking that nothing escaped.
async fn run_attacks(
    fixture: &Fixture,
    level: Level,
    supervised: bool,
    attacks: &[(&str, String)],
    redact: &dyn Fn(&str) -> String,
    own_network: bool,
) -> String {
    let session = fixture.session_with(level, supervised, |config| {
        config.sandbox.network.enabled = own_network;
    });
    let before = fixture.snapshot();
    let mut transcript = String::new();
    for (name, command) in attacks {
        let result = fixture.run(&session, command).await;
        let what = format!("{level} supervised={supervised} {name}: {}", result.text);
        assert!(!result.text.contains("ESCAPED"), "escaped: {what}");
        assert!(
            !result.text.contains(&fixture.marker),
            "a secret was printed: {what}"
        );
        assert_eq!(fixture.snapshot(), before, "files changed: {what}");
        transcript.push_str(&format!(
            "### {name}\n$ {}\n{}\n\n",
            redact(command),
            redact(&result.text)
        ));
    }
    session.shutdown().await;
    transcript
}

/// Snapshots the direct transcript of each level and the supervised one. Where the
/// supervisor cannot isolate (a mode without user namespaces, reported as
/// `modes.rs` checks), a supervised command is sandboxed as a direct one is, and must read
/// as the direct snapshot.
async fn each_configuration(
    fixture: &Fixture,
    snapshot: &str,
    attacks: &[(&str, String)],
    redact: &dyn Fn(&str) -> String,
) {
    each_configuration_with(fixture, snapshot, attacks, redact, true).await;
}

/// [`each_configuration`]; `own_network` false: the sessions have no network of their
/// own (NET-1 off), so a sandboxed command has no socket at all.
async fn each_configuration_with(
    fixture: &Fixture,
    snapshot: &str,
    attacks: &[(&str, String)],
    redact: &dyn Fn(&str) -> String,
    own_network: bool,
) {
    for (level, supervised) in configurations() {
        if !enforced_or_skip(level) {
            continue;
        }
        let transcript =
            run_attacks(fixture, level, supervised, attacks, redact, own_network).await;
        if supervised && wavesh_exec::sandbox::support().process_isolation {
            insta::assert_snapshot!(
                format!("{snapshot}-{}-supervised", level.name()),
                transcript
            );
        } else {
            insta::assert_snapshot!(format!("{snapshot}-{}", level.name()), transcript);
        }
    }
}

#[tokio::test]
async fn sbx_2_writes_outside_are_refused() {
    let f = Fixture::new();
    let (ws, out, home) = (f.ws.display(), f.outside.display(), f.home.display());
    std::os::unix::fs::symlink(f.outside.join("victim.txt"), f.ws.join("planted-link")).unwrap();
    let shm = format!("/dev/shm/wavesh-sbx-{}", crate::util::unique());
    let attacks: Vec<(&str, String)> = vec![
        ("plain", format!("echo pwned > {out}/plain && echo ESCAPED")),
        ("overwrite", format!("echo pwned > {out}/victim.txt && echo ESCAPED")),
        ("home", format!("echo evil >> {home}/.bashrc && echo ESCAPED")),
        ("planted symlink", "echo pwned > planted-link && echo ESCAPED".into()),
        (
            "hardlink",
            format!("ln {out}/victim.txt hl && echo pwned >> hl && echo ESCAPED"),
        ),
        // Across the supervisor's mounts `mv` falls back to copy and unlink: the copy (a
        // read, allowed) is removed again, the unlink is what must fail.
        (
            "rename in",
            format!("mv {out}/victim.txt ./stolen && echo ESCAPED; rm -f ./stolen"),
        ),
        ("rename out", format!("mv README.md {out}/ && echo ESCAPED")),
        ("mkfifo", format!("mkfifo {out}/fifo && echo ESCAPED")),
        (
            "socket file",
            format!(
                "python3 -c \"import socket\ntry:\n s = socket.socket(socket.AF_UNIX); s.bind('{out}/sock'); print('ESCAPED')\nexcept OSError as e: print('refused:', e.strerror)\""
            ),
        ),
        // Through the supervisor the command has a /dev/shm of its own, where this
        // write succeeds; the host's is checked at the end.
        ("dev shm", format!("echo pwned > {shm}")),
        (
            "proc self fd",
            format!("exec 3< {out}/victim.txt; echo pwned > /proc/self/fd/3 && echo ESCAPED"),
        ),
        (
            "git hook",
            "echo 'echo evil' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit && echo ESCAPED".into(),
        ),
        (
            "git config",
            // At workspace-write the writes land in the command's own layer (SBX-9):
            // the escape would be the real file changing, which the snapshot checks.
            "git config core.hooksPath /tmp/evil; echo '[core]' >> .git/config; true".into(),
        ),
        (
            "claude settings",
            "echo '{\"permissions\":{\"allow\":[\"Bash(*)\"]}}' > .claude/settings.local.json && echo ESCAPED; rm -rf .claude && echo ESCAPED".into(),
        ),
    ];
    let redact = |text: &str| f.redact(text).replace(&shm, "/dev/shm/[SHM]");
    each_configuration(&f, "writes-outside", &attacks, &redact).await;
    assert!(!std::path::Path::new(&shm).exists(), "{shm} was made");
    let _ = ws;
}

#[tokio::test]
async fn sbx_2_secrets_cannot_be_read() {
    let f = Fixture::new();
    let home = f.home.display();
    let absolute: Vec<String> = HOME_SECRETS
        .iter()
        .map(|s| format!("{home}/{s}"))
        .chain(WORKSPACE_SECRETS.iter().map(|s| s.to_string()))
        .collect();
    std::fs::create_dir_all(f.ws.join("links")).unwrap();
    for (i, secret) in HOME_SECRETS.iter().enumerate() {
        std::os::unix::fs::symlink(f.home.join(secret), f.ws.join(format!("links/{i}"))).unwrap();
    }
    std::fs::hard_link(f.home.join(".aws/credentials"), f.ws.join("notes.txt")).unwrap();
    std::fs::hard_link(f.home.join(".ssh/id_rsa"), f.ws.join("key-backup")).unwrap();
    let attacks: Vec<(&str, String)> = vec![
        (
            "absolute paths",
            format!("cat {} 2>&1 | sort", absolute.join(" ")),
        ),
        (
            "globs",
            format!(
                "cat {home}/.ss?/* {home}/.aws/cred* {home}/.config/*/hosts.yml .env* *.pem *.key 2>&1 | sort"
            ),
        ),
        (
            "cd-relative",
            format!(
                "(cd {home}/.ssh && cat id_rsa); (cd {home}/.aws && cat ./credentials); (cd {}/src && cat ../.env)",
                f.ws.display()
            ),
        ),
        ("planted symlinks", "cat links/* 2>&1 | sort".into()),
        ("planted hardlinks", "cat notes.txt key-backup".into()),
        (
            "git show",
            format!(
                "git -C {home}/.password-store show HEAD:token; git -C {home}/.password-store log -p | grep -c MARKER"
            ),
        ),
    ];
    let redact = |text: &str| f.redact(text);
    each_configuration(&f, "secret-reads", &attacks, &redact).await;
}

/// Another process's environment (the host's, an agent's) cannot be read through
/// `/proc/<pid>/environ` (SBX-2): the supervisor makes the command's subreaper the init
/// of a PID namespace with its own `/proc`, where no other process exists. The kernel's
/// ptrace check alone does not stop it: under Landlock, `environ` and `maps` of an
/// unsandboxed process stay readable on Linux 6.18. A shell spawned directly cannot have
/// the namespace, and says so.
#[tokio::test]
async fn sbx_2_host_environ_cannot_be_read() {
    if !crate::isolation_or_skip()
        || !configurations()
            .into_iter()
            .all(|(level, _)| enforced_or_skip(level))
    {
        return;
    }
    let f = Fixture::new();
    let mut host = Command::new("sleep")
        .arg("60")
        .env("HOST_SECRET", format!("{}-host-environ", f.marker))
        .spawn()
        .unwrap();
    let pid = host.id();
    let attacks = [
        format!("cat /proc/{pid}/environ | tr '\\0' '\\n' | grep HOST_SECRET"),
        format!("grep -a HOST_SECRET /proc/{pid}/environ"),
        format!("tr '\\0' '\\n' < /proc/{pid}/task/{pid}/environ | grep HOST_SECRET"),
        // The init of the command's namespace is a fork of the helper: nothing there.
        "tr '\\0' '\\n' < /proc/1/environ | grep -c . ; cat /proc/1/cmdline | tr '\\0' ' '"
            .to_owned(),
        "for e in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $e; done | grep HOST_SECRET".to_owned(),
        format!(
            "ls /proc | grep -x {pid} && echo VISIBLE; ps -e -o pid= | grep -qw {pid} && echo VISIBLE"
        ),
    ];
    let mut leaked = Vec::new();
    for (level, supervised) in configurations() {
        let session = f.session(level, supervised);
        for attack in &attacks {
            let result = f.run_raw(&session, attack).await;
            if supervised {
                if result.text.contains(&f.marker) || result.text.contains("VISIBLE") {
                    leaked.push(format!("{level} supervised: {attack}: {}", result.text));
                }
            } else {
                assert!(
                    result.text.contains(crate::DIRECT_SPAWN_MISSING),
                    "a direct spawn must say what it lacks: {}",
                    result.text
                );
            }
        }
        session.shutdown().await;
    }
    host.kill().unwrap();
    host.wait().unwrap();
    assert!(
        leaked.is_empty(),
        "read another process's environment: {leaked:#?}"
    );
}

/// Credentials in the environment (`/proc/self/environ` included) are removed, and a
/// value found elsewhere is masked in the model text (SBX-2). Through the binary, whose
/// environment the test sets.
#[test]
fn sbx_2_environment_is_scrubbed_and_values_masked() {
    if !enforced_or_skip(Level::ReadOnly) {
        return;
    }
    let ws = crate::util::Workspace::new();
    let token = format!("ghp_{}", crate::util::digit_marker());
    std::fs::write(ws.root.join("found.txt"), format!("token={token}\n")).unwrap();
    for level in ["read-only", "workspace-write"] {
        let mut command = ws.wavesh();
        command
            .env("GITHUB_TOKEN", &token)
            .env("MY_API_KEY", "key-value-long-enough")
            .env("SSH_AUTH_SOCK", "/tmp/agent.sock")
            .env("KEEP_ME", "visible")
            .args(["run", "--sandbox", level, "--"])
            .arg("cat /proc/self/environ | tr '\\0' '\\n' | grep -E 'TOKEN|API_KEY|SSH_AUTH|KEEP'; cat found.txt");
        let run = crate::util::Run::of(command);
        let stdout = run.stdout();
        assert!(!stdout.contains(&token), "{run}");
        assert!(!stdout.contains("key-value-long-enough"), "{run}");
        assert!(!stdout.contains("SSH_AUTH_SOCK"), "{run}");
        assert_eq!(
            stdout, "KEEP_ME=visible\ntoken=[scrubbed $GITHUB_TOKEN]\n",
            "{level}: {run}"
        );
    }
}

#[tokio::test]
async fn sbx_2_no_network() {
    let f = Fixture::new();
    let tcp4 = TcpListener::bind("127.0.0.1:0").unwrap();
    tcp4.set_nonblocking(true).unwrap();
    let tcp6 = TcpListener::bind("[::1]:0").ok();
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let agent_path = f.outside.join("agent.sock");
    let agent = UnixListener::bind(&agent_path).unwrap();
    agent.set_nonblocking(true).unwrap();
    let p4 = tcp4.local_addr().unwrap().port();
    let pu = udp.local_addr().unwrap().port();
    let py = |body: String| {
        format!(
            "python3 -c \"import socket\ntry:\n{body}\n print('ESCAPED')\nexcept OSError as e: print('refused:', e.strerror)\""
        )
    };
    let mut attacks: Vec<(&str, String)> = vec![
        (
            "dev tcp",
            format!("exec 3<>/dev/tcp/127.0.0.1/{p4} && echo ESCAPED"),
        ),
        (
            "tcp v4",
            py(format!(" socket.create_connection(('127.0.0.1', {p4}), 2)")),
        ),
        (
            "dev udp",
            format!("echo leak > /dev/udp/127.0.0.1/{pu} && echo ESCAPED"),
        ),
        (
            "udp",
            py(format!(
                " socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'leak', ('127.0.0.1', {pu}))"
            )),
        ),
        (
            "dns query",
            py(format!(
                " q = bytes.fromhex('abcd01000001000000000000076578616d706c6503636f6d0000010001')\n socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(q, ('127.0.0.1', {pu}))"
            )),
        ),
        (
            "resolver",
            "getent hosts example.com && echo ESCAPED".into(),
        ),
        (
            "raw socket",
            py(" socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)".into()),
        ),
        (
            "unix socket outside",
            py(format!(
                " socket.socket(socket.AF_UNIX).connect('{}')",
                agent_path.display()
            )),
        ),
        (
            "netlink",
            py(" socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)".into()),
        ),
    ];
    let p6 = tcp6.as_ref().map(|l| l.local_addr().unwrap().port());
    if let Some(p6) = p6 {
        attacks.push((
            "tcp v6",
            py(format!(" socket.create_connection(('::1', {p6}), 2)")),
        ));
    } else {
        crate::util::missing_prerequisite(
            "::1 on loopback, for the tcp v6 attack",
            "IPv6 enabled on lo",
        );
    }
    let redact = |text: &str| {
        let mut text = f
            .redact(text)
            .replace(&format!("/{p4}"), "/[PORT]")
            .replace(&format!(", {p4})"), ", [PORT])");
        text = text
            .replace(&format!("/{pu}"), "/[PORT]")
            .replace(&format!(", {pu})"), ", [PORT])");
        if let Some(p6) = p6 {
            text = text.replace(&format!(", {p6})"), ", [PORT])");
        }
        text
    };
    // Without a network of the session's own: no socket at all. With one, the same
    // attacks are `network::net_1_escape_attacks_reach_nothing_outside`.
    each_configuration_with(&f, "network", &attacks, &redact, false).await;
    assert!(tcp4.accept().is_err(), "a TCP v4 connection came through");
    if let Some(tcp6) = &tcp6 {
        tcp6.set_nonblocking(true).unwrap();
        assert!(tcp6.accept().is_err(), "a TCP v6 connection came through");
    }
    let mut buf = [0u8; 64];
    assert!(
        udp.recv_from(&mut buf).is_err(),
        "a UDP datagram came through"
    );
    assert!(
        agent.accept().is_err(),
        "the unix socket outside was reached"
    );
}

/// A pty held by the test: its slave's name, and what reached it.
struct Terminal {
    child: Child,
    name: String,
}

impl Terminal {
    fn open() -> Terminal {
        let script = r#"import os, pty, select, sys, time
m, s = pty.openpty()
print(os.ttyname(s), flush=True)
got = b''
end = time.time() + float(sys.argv[1])
try:
    while time.time() < end:
        r, _, _ = select.select([m, s], [], [], 0.1)
        for fd in r:
            got += os.read(fd, 100)
except KeyboardInterrupt:
    pass
print('GOT', got, flush=True)
"#;
        let mut child = Command::new("python3")
            .args(["-c", script, "20"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        let name = line.trim().to_owned();
        assert!(
            name.starts_with("/dev/"),
            "the pty holder did not start: {name:?}"
        );
        Terminal { child, name }
    }

    /// Ends the holder and returns what reached the terminal.
    fn received(mut self) -> String {
        let _ = Command::new("kill")
            .arg("-INT")
            .arg(self.child.id().to_string())
            .status();
        let mut rest = String::new();
        self.child
            .stdout
            .as_mut()
            .unwrap()
            .read_to_string(&mut rest)
            .unwrap();
        let _ = self.child.wait();
        rest
    }
}

#[tokio::test]
async fn sbx_2_no_signal_ptrace_or_typing_outside() {
    let f = Fixture::new();
    let mut unrelated = Command::new("sleep").arg("60").spawn().unwrap();
    let pid = unrelated.id();
    let host = std::process::id();
    let terminal = Terminal::open();
    let tty = terminal.name.clone();
    let attacks: Vec<(&str, String)> = vec![
        ("signal the host", format!("kill -0 {host} && echo ESCAPED")),
        (
            "signal an unrelated process",
            format!("kill -TERM {pid} && echo ESCAPED"),
        ),
        (
            "ptrace",
            format!(
                "python3 -c \"import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nr = libc.ptrace(16, {pid}, 0, 0)\nprint('ESCAPED' if r == 0 else 'refused: errno %d' % ctypes.get_errno())\""
            ),
        ),
        (
            "typing into the host's terminal",
            format!(
                "python3 -c \"import fcntl, termios\ntry:\n fd = open('{tty}', 'rb')\n for c in b'ESCAPED': fcntl.ioctl(fd, termios.TIOCSTI, bytes([c]))\n print('typed')\nexcept OSError as e: print('refused')\""
            ),
        ),
    ];
    let redact = |text: &str| {
        f.redact(text)
            .replace(&tty, "[TTY]")
            .replace(&pid.to_string(), "[PID]")
            .replace(&host.to_string(), "[HOST]")
    };
    each_configuration(&f, "processes", &attacks, &redact).await;
    let received = terminal.received();
    assert!(
        !received.contains("ESCAPED"),
        "typed into the terminal: {received}"
    );
    assert!(
        unrelated.try_wait().unwrap().is_none(),
        "the unrelated process was signalled"
    );
    unrelated.kill().unwrap();
    unrelated.wait().unwrap();
}

/// No controlling terminal and no descriptor beyond 0-2 (SBX-2, PROC-3). These hold
/// once every spawn starts a new session and closes inherited descriptors.
#[tokio::test]
async fn sbx_2_no_terminal_and_no_inherited_descriptor() {
    let f = Fixture::new();
    for (level, supervised) in configurations() {
        if !enforced_or_skip(level) {
            continue;
        }
        let session = f.session(level, supervised);
        let tty = f
            .run(
                &session,
                "( : </dev/tty ) 2>/dev/null && echo has-terminal || echo no-terminal",
            )
            .await;
        assert_eq!(tty.text, "no-terminal", "{level} supervised={supervised}");
        // `ls` opens the directory as descriptor 3 itself.
        let fds = f.run(&session, "ls /proc/self/fd | tr '\\n' ' '").await;
        assert_eq!(
            fds.text.trim(),
            "0 1 2 3",
            "{level} supervised={supervised}"
        );
        session.shutdown().await;
    }
}

/// Mode, owner, times and extended attributes of every file under a directory, and of
/// the directory itself.
fn metadata_of(root: &std::path::Path) -> Vec<String> {
    use std::os::unix::fs::MetadataExt;
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(path) = stack.pop() {
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let xattrs = Command::new("getfattr")
            .args(["-d", "-m", "-", "--absolute-names"])
            .arg(&path)
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        // Reading (this walk, too) moves access times forward; an attack sets one back.
        out.push(format!(
            "{} mode={:o} uid={} gid={} mtime={}.{} atime_set_back={} xattr={xattrs:?}",
            path.display(),
            meta.mode(),
            meta.uid(),
            meta.gid(),
            meta.mtime(),
            meta.mtime_nsec(),
            meta.atime() < 1_600_000_000
        ));
        if meta.is_dir() {
            for entry in std::fs::read_dir(&path).unwrap().flatten() {
                stack.push(entry.path());
            }
        }
    }
    out.sort();
    out
}

/// Outside the writable paths no file changes its mode, owner, times or extended
/// attributes (SBX-1, SBX-2). Landlock governs none of these calls; the supervisor's
/// read-only mounts do. The workspace's protected paths are covered at
/// `workspace-write` too. A direct spawn says it lacks this.
#[tokio::test]
async fn sbx_2_no_metadata_change_outside() {
    if !crate::isolation_or_skip() {
        return;
    }
    let f = Fixture::new();
    if Command::new("setfattr").arg("--version").output().is_err() {
        crate::util::missing_prerequisite("setfattr", "apt-get install attr");
        return;
    }
    let (out, home) = (f.outside.display(), f.home.display());
    let attacks = [
        format!("chmod 0777 {out}/victim.txt"),
        format!("chmod 0 {home}"),
        format!("chown 65534:65534 {out}/victim.txt"),
        format!("chgrp 65534 {out}"),
        format!("touch -d 2001-01-01 {out}/victim.txt"),
        format!("touch -a -d 2001-01-01 {home}/.bashrc"),
        format!("setfattr -n user.wavesh -v evil {out}/victim.txt"),
        format!("python3 -c \"import os; os.utime('{out}/victim.txt', (1, 1)); print('ESCAPED')\""),
        "chmod 0777 .git/hooks .git/config".to_owned(),
        "touch -d 2001-01-01 .git/config".to_owned(),
        "setfattr -n user.wavesh -v evil .git/config".to_owned(),
    ];
    // Every path the attacks aim at: the tree outside, the fake HOME, the workspace's
    // protected paths.
    let watched = || {
        let mut all = metadata_of(&f.outside);
        all.extend(metadata_of(&f.home));
        all.extend(metadata_of(&f.ws.join(".git/hooks")));
        all.extend(metadata_of(&f.ws.join(".git/config")));
        all
    };
    for (level, supervised) in configurations() {
        if !enforced_or_skip(level) {
            continue;
        }
        let session = f.session(level, supervised);
        if !supervised {
            // A direct spawn cannot stop these: it says so instead.
            let result = f.run_raw(&session, "true").await;
            assert!(
                result.text.contains(crate::DIRECT_SPAWN_MISSING),
                "a direct spawn must say what it lacks: {}",
                result.text
            );
            session.shutdown().await;
            continue;
        }
        let before = watched();
        for attack in &attacks {
            let result = f.run(&session, attack).await;
            assert!(
                !result.text.contains("ESCAPED"),
                "{level}: {attack}: {}",
                result.text
            );
            assert_eq!(
                watched(),
                before,
                "{level}: {attack} changed metadata: {}",
                result.text
            );
        }
        session.shutdown().await;
    }
}

/// The control: the same attacks work without the sandbox, so the suite tests the
/// sandbox and not a broken attack.
#[tokio::test]
async fn sbx_2_attacks_work_without_the_sandbox() {
    let f = Fixture::new();
    let session = f.session(Level::Off, false);
    let home = f.home.display();
    let cat = f.run(&session, &format!("cat {home}/.ssh/id_rsa")).await;
    assert!(cat.text.contains(&f.marker), "{}", cat.text);
    let mut other = Command::new("sleep")
        .arg("60")
        .env("HOST_SECRET", format!("{}-host-environ", f.marker))
        .spawn()
        .unwrap();
    let environ = f
        .run(
            &session,
            &format!("grep -a HOST_SECRET /proc/{}/environ", other.id()),
        )
        .await;
    other.kill().unwrap();
    other.wait().unwrap();
    assert!(environ.text.contains(&f.marker), "{}", environ.text);
    let chmod = f
        .run(
            &session,
            &format!(
                "chmod 0600 {}/victim.txt && stat -c %a {0}/victim.txt",
                f.outside.display()
            ),
        )
        .await;
    assert_eq!(chmod.text, "600");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let tcp = f
        .run(
            &session,
            &format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"),
        )
        .await;
    assert_eq!(tcp.text, "connected");
    let write = f
        .run(
            &session,
            &format!("echo x > {}/made && echo made", f.outside.display()),
        )
        .await;
    assert_eq!(write.text, "made");
    let terminal = Terminal::open();
    let typed = f
        .run(
            &session,
            &format!("python3 -c \"import fcntl, termios\nfd = open('{}', 'rb')\nfor c in b'TYPED': fcntl.ioctl(fd, termios.TIOCSTI, bytes([c]))\"", terminal.name),
        )
        .await;
    let received = terminal.received();
    if typed.exit_code == Some(0) {
        assert!(received.contains("TYPED"), "{received}");
    } else {
        // Linux 6.2+ with dev.tty.legacy_tiocsti=0 refuses TIOCSTI to everyone but
        // CAP_SYS_ADMIN: the sandbox's refusal is then not the only one.
        let what = format!(
            "TIOCSTI without the sandbox, for the control (refused: {})",
            typed.text
        );
        if wavesh_testkit::is_root() {
            crate::util::missing_prerequisite(&what, "dev.tty.legacy_tiocsti=1, or root");
        } else {
            wavesh_testkit::lacking_in_this_mode(&what, "dev.tty.legacy_tiocsti=1, or root");
        }
    }
    session.shutdown().await;
}

/// The read rules are reused between commands only while nothing they were made from
/// changed: a hardlink to a secret or a `.env` planted between two commands is hidden
/// from the second.
#[tokio::test]
async fn sbx_2_a_secret_planted_between_commands_is_hidden() {
    if !enforced_or_skip(Level::ReadOnly) {
        return;
    }
    let f = Fixture::new();
    let session = f.session(Level::ReadOnly, false);
    let first = f.run(&session, "cat README.md").await;
    assert_eq!(first.text, "hello");
    std::fs::hard_link(f.home.join(".netrc"), f.ws.join("later.txt")).unwrap();
    crate::write(
        &f.ws.join(".env.local"),
        &format!("{}-later-env\n", f.marker),
    );
    let second = f
        .run(&session, "cat later.txt .env.local; cat README.md")
        .await;
    assert!(!second.text.contains(&f.marker), "{}", second.text);
    assert!(second.text.contains("hello"), "{}", second.text);
    // The same outside the workspace, in the directories on the way to the secret paths
    // (the home): a hardlink there, a secret-named file, a secret path that did not exist
    // (its file, and a whole directory on its way), each made between two commands.
    std::fs::hard_link(f.home.join(".ssh/id_rsa"), f.home.join("key-copy")).unwrap();
    crate::write(&f.home.join(".env"), &format!("{}-home-env\n", f.marker));
    crate::write(
        &f.home.join(".databrickscfg"),
        &format!("{}-databricks\n", f.marker),
    );
    crate::write(
        &f.home.join(".pulumi/credentials.json"),
        &format!("{}-pulumi\n", f.marker),
    );
    // Two directories on its way made at once: neither was there to watch.
    assert!(!f.home.join(".cache").exists());
    crate::write(
        &f.home.join(".cache/huggingface/token"),
        &format!("{}-huggingface\n", f.marker),
    );
    let third = f
        .run(
            &session,
            &format!(
                "cd '{}' && cat key-copy .env .databrickscfg .pulumi/credentials.json \
                 .cache/huggingface/token; echo done",
                f.home.display()
            ),
        )
        .await;
    assert!(!third.text.contains(&f.marker), "{}", third.text);
    assert!(third.text.contains("done"), "{}", third.text);
    session.shutdown().await;
}

/// SBX-2: a listed secret this user could not read when a command was planned, and which
/// a later command makes readable (a `chmod` where it may write), is hidden from the
/// command after: the paths left out as unreadable are checked again before each
/// command, while the ones kept stay kept. As root every path is readable and kept from
/// the start; the unprivileged run of `scripts/test` is the one that leaves it out first.
#[tokio::test]
async fn sbx_2_a_secret_made_readable_between_commands_is_hidden() {
    use std::os::unix::fs::PermissionsExt;
    if !enforced_or_skip(Level::WorkspaceWrite) {
        return;
    }
    if wavesh_exec::sandbox::support()
        .missing(Level::WorkspaceWrite)
        .contains(&wavesh_exec::sandbox::Guarantee::ProtectedPaths)
    {
        wavesh_testkit::lacking_in_this_mode(
            "secrets inside the workspace at workspace-write (mounts)",
            "root or user namespaces",
        );
        return;
    }
    let f = Fixture::new();
    let secret = f.ws.join("deploy/credentials.toml");
    crate::write(&secret, &format!("{}-credentials\n", f.marker));
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o000)).unwrap();
    let session = f.session_with(Level::WorkspaceWrite, false, |config| {
        config
            .sandbox
            .secret_paths
            .push(secret.display().to_string());
    });
    let first = f.run(&session, "cat README.md").await;
    assert_eq!(first.text, "hello", "{}", first.text);
    // Kept (as root), the secret is hidden and its mode cannot change; left out, it can.
    let second = f
        .run(&session, "chmod 600 deploy/credentials.toml; echo tried")
        .await;
    assert!(second.text.contains("tried"), "{}", second.text);
    let third = f
        .run(&session, "cat deploy/credentials.toml; echo done")
        .await;
    assert!(!third.text.contains(&f.marker), "{}", third.text);
    assert!(third.text.contains("done"), "{}", third.text);
    session.shutdown().await;
}

/// SBX-2: a command run as root cannot change the machine's own state, which Landlock does
/// not cover: the clock, the host name, mounts (the read-only binds of workspace-write
/// included). Each probe asks the kernel for a change that would be harmless if it went
/// through (the clock set to now, the host name to itself, a mount on a path that does
/// not exist) and prints the error: EPERM is the sandbox's refusal.
#[tokio::test]
async fn sbx_2_no_change_to_the_machine() {
    let f = Fixture::new();
    let probe = |call: &str| {
        format!(
            "python3 -c \"import ctypes, os, errno\nlibc = ctypes.CDLL(None, use_errno=True)\n{call}\ne = ctypes.get_errno()\nprint('refused' if r != 0 and e == errno.EPERM else 'ESCAPED: %d %s' % (r, errno.errorcode.get(e, e)))\""
        )
    };
    let attacks: Vec<(&str, String)> = vec![
        (
            "set the clock",
            probe(
                "import time\nclass T(ctypes.Structure): _fields_ = [('s', ctypes.c_long), ('ns', ctypes.c_long)]\nnow = time.time()\nr = libc.clock_settime(0, ctypes.byref(T(int(now), 0)))",
            ),
        ),
        (
            "set the host name",
            probe("name = os.uname().nodename.encode()\nr = libc.sethostname(name, len(name))"),
        ),
        (
            "mount",
            probe("r = libc.mount(b'none', b'/nonexistent-wavesh-mnt', b'tmpfs', 0, None)"),
        ),
        (
            "unmount",
            probe("r = libc.umount2(b'/nonexistent-wavesh-mnt', 0)"),
        ),
    ];
    for (level, supervised) in configurations() {
        if !enforced_or_skip(level) {
            continue;
        }
        let session = f.session(level, supervised);
        for (name, command) in &attacks {
            let result = f.run(&session, command).await;
            assert!(
                result.text.contains("refused") && !result.text.contains("ESCAPED"),
                "{} (supervised: {supervised}) {name}: {}",
                level.name(),
                result.text
            );
        }
        session.shutdown().await;
    }
}

/// A user other than root gets the same process isolation (SBX-2): the supervisor makes
/// the PID namespace inside a user namespace of its own. Run as root, this test drops to
/// `nobody` for `wavesh run` and for the processes it attacks (a root-owned process's
/// environment is unreadable to `nobody` anyway).
#[test]
fn sbx_2_isolation_holds_without_root() {
    use std::os::unix::fs::PermissionsExt;
    if !wavesh_testkit::root_or_skip("isolation for a user other than root (as nobody)") {
        return;
    }
    if Command::new("setpriv").arg("--help").output().is_err() {
        crate::util::missing_prerequisite(
            "setpriv (to run the check as another user)",
            "apt-get install util-linux",
        );
        return;
    }
    const NOBODY: &str = "65534";
    let base = std::env::temp_dir().join(format!("wavesh-nonroot-{}", crate::util::unique()));
    let ws = base.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    // A copy any user may run, wherever the checkout lives.
    let binary = base.join("wavesh");
    std::fs::copy(crate::util::WAVESH, &binary).unwrap();
    std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).unwrap();
    let victim = base.join("victim.txt");
    std::fs::write(&victim, "original\n").unwrap();
    let marker = format!("MARKER{}", crate::util::unique());
    for path in [&ws, &victim] {
        std::os::unix::fs::chown(path, Some(65534), Some(65534)).unwrap();
    }
    let as_nobody = |program: &std::path::Path| {
        let mut command = Command::new("setpriv");
        command
            .args(["--reuid", NOBODY, "--regid", NOBODY, "--clear-groups"])
            .arg(program);
        command
    };
    let mut other = as_nobody(std::path::Path::new("/bin/sleep"));
    let mut other = other.arg("60").env("HOST_SECRET", &marker).spawn().unwrap();
    let script = format!(
        "grep -a HOST_SECRET /proc/{pid}/environ; ls /proc | grep -x {pid} && echo VISIBLE; \
         chmod 0777 {victim}; touch -d 2001-01-01 {victim}; stat -c '%a %Y' {victim}; \
         echo ok > inside.txt && cat inside.txt",
        pid = other.id(),
        victim = victim.display()
    );
    let before = std::fs::metadata(&victim).unwrap();
    for level in ["read-only", "workspace-write"] {
        let output = as_nobody(&binary)
            .args(["run", "--sandbox", level, "--cwd"])
            .arg(&ws)
            .arg("--")
            .arg(&script)
            .env("HOME", &ws)
            .env_remove("XDG_RUNTIME_DIR")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(
            !text.contains(&marker),
            "{level}: read another process's environment: {text}"
        );
        assert!(
            !text.contains("VISIBLE"),
            "{level}: saw another process: {text}"
        );
        assert!(
            !text.contains("is incomplete on this machine"),
            "{level}: isolation is missing: {text}"
        );
        let after = std::fs::metadata(&victim).unwrap();
        use std::os::unix::fs::MetadataExt;
        assert_eq!(
            (after.mode(), after.mtime()),
            (before.mode(), before.mtime()),
            "{level}: changed {}: {text}",
            victim.display()
        );
        if level == "workspace-write" {
            assert!(
                text.contains("ok"),
                "{level}: could not write the workspace: {text}"
            );
        }
    }
    other.kill().unwrap();
    other.wait().unwrap();
    std::fs::remove_dir_all(&base).unwrap();
}

/// x32 system calls (x86-64 numbers with bit 30 set) are refused, every one of them: the
/// filter's rules match exact numbers, and the x32 entries of the refused calls would
/// otherwise pass (SBX-2). The kernel's own answer without the filter is ENOSYS where x32
/// is off and the call itself where it is on; the filter answers EPERM first.
#[tokio::test]
#[cfg(target_arch = "x86_64")]
async fn sbx_2_x32_system_calls_are_refused() {
    let f = Fixture::new();
    let probe = "python3 -c \"import ctypes\nl = ctypes.CDLL(None, use_errno=True)\nfor nr in (39, 165, 41):\n    r = l.syscall(0x40000000 | nr, 0, 0, 0, 0, 0)\n    print(nr, r, ctypes.get_errno())\"";
    for (level, supervised) in configurations() {
        if !enforced_or_skip(level) {
            continue;
        }
        let session = f.session(level, supervised);
        let result = f.run(&session, probe).await;
        assert_eq!(
            result.text, "39 -1 1\n165 -1 1\n41 -1 1",
            "{level} supervised={supervised}: getpid, mount and socket through x32"
        );
        session.shutdown().await;
    }
}
