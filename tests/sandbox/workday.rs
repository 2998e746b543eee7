//! Ordinary work at the defaults needs no prompt (SBX-8): at `workspace-write` a command
//! writes `/tmp` (the session's own), a toolchain output directory the user configured
//! (`CARGO_TARGET_DIR`) and the toolchain caches (copy-on-write over the real ones),
//! direct and through the supervisor; none of it reaches a file of the host, and the
//! secret list still holds inside. Every case runs in a throwaway world with a fake HOME
//! and fake caches.

use std::path::{Path, PathBuf};

use wavesh_exec::sandbox::Level;
use wavesh_tool::{BashInput, CallContext, SandboxSettings, Session, ToolConfig};

use crate::{Fixture, enforced_or_skip, util, write};

/// A session of `f` at `level` whose commands also get `env`, with wavesh's state in the
/// fixture's base (never the real one).
pub fn session_with_env(
    f: &Fixture,
    level: Level,
    supervised: bool,
    env: &[(&str, &Path)],
) -> Session {
    let config = ToolConfig {
        sandbox: SandboxSettings {
            level,
            read_only_level: false,
            ..SandboxSettings::default()
        },
        ..ToolConfig::default()
    };
    let mut builder = Session::builder(&f.ws);
    builder
        .private_base(&f.private)
        .no_login_env()
        .home(&f.home)
        .env("XDG_STATE_HOME", f.base.join("state"))
        .sandbox_level(level)
        .no_claude_settings()
        .config(config);
    for (key, value) in cache_env(f) {
        builder.env(key, value);
    }
    for (key, value) in env {
        builder.env(*key, value.as_os_str());
    }
    if supervised {
        builder.supervisor(util::WAVESH);
    }
    builder.build().unwrap()
}

/// The variables that place the toolchain caches, aimed at `f`'s fake HOME (the test
/// process may have them set to the real ones: cargo sets `CARGO_HOME`).
pub fn cache_env(f: &Fixture) -> Vec<(&'static str, PathBuf)> {
    vec![
        ("CARGO_HOME", f.home.join(".cargo")),
        ("GOPATH", f.home.join("go")),
        ("XDG_CACHE_HOME", f.home.join(".cache")),
    ]
}

/// The fake caches of the fake HOME: (path relative to HOME, contents).
pub const FAKE_CACHES: &[(&str, &str)] = &[
    (".cargo/registry/index/crate.json", "{\"vers\":\"1.0.0\"}\n"),
    (".cargo/registry/src/dep-1.0.0/lib.rs", "pub fn real() {}\n"),
    (".cargo/git/db/repo/HEAD", "ref: main\n"),
    (".npm/_cacache/index-v5/pkg", "npm index\n"),
    (".cache/pip/http/wheel", "wheel bytes\n"),
    (".cache/go-build/00/obj", "go object\n"),
    (
        "go/pkg/mod/example.com/m@v1/go.mod",
        "module example.com/m\n",
    ),
    (".m2/repository/org/x/x.pom", "<project/>\n"),
];

/// Writes the fake caches into `f`'s HOME.
pub fn plant_caches(f: &Fixture) {
    for (path, text) in FAKE_CACHES {
        write(&f.home.join(path), text);
    }
}

fn unique() -> String {
    format!("wavesh-workday-{}", util::unique())
}

/// SBX-8 `/tmp`: a file written by one call is read by the next, and by a background
/// task's; directories, links and removals work; the host's `/tmp` never sees them, and
/// the files are in the session's directory (`tmp-view`).
#[tokio::test]
async fn sbx_8_tmp_is_the_sessions_own() {
    if !enforced_or_skip(Level::WorkspaceWrite) {
        return;
    }
    for supervised in [false, true] {
        let f = Fixture::new();
        let session = f.session(Level::WorkspaceWrite, supervised);
        let name = unique();
        let cases = [
            (format!("echo one > /tmp/{name} && cat /tmp/{name}"), "one"),
            (format!("cat /tmp/{name}"), "one"),
            (
                format!(
                    "mkdir -p /tmp/{name}.d/sub && echo two > /tmp/{name}.d/sub/f && cat /tmp/{name}.d/sub/f"
                ),
                "two",
            ),
            (
                format!(
                    "ln -s /tmp/{name} /tmp/{name}.l && cat /tmp/{name}.l && rm /tmp/{name}.l && echo removed"
                ),
                "one\nremoved",
            ),
            (
                "python3 -c 'import tempfile; f = tempfile.NamedTemporaryFile(dir=\"/tmp\", delete=False); f.write(b\"py\"); print(\"made\")'".to_owned(),
                "made",
            ),
            (
                format!("mv /tmp/{name}.d /tmp/{name}.e && ls /tmp/{name}.e"),
                "sub",
            ),
        ];
        for (command, expect) in &cases {
            let result = f.run(&session, command).await;
            assert_eq!(
                result.exit_code,
                Some(0),
                "supervised={supervised} {command}: {}",
                result.text
            );
            assert!(
                result.text.contains(expect),
                "supervised={supervised} {command}: {}",
                result.text
            );
            assert!(
                !result.text.contains("sandbox refused"),
                "{command}: {}",
                result.text
            );
        }
        // A background task's file is read by the next call.
        let mut input = BashInput::new(format!("echo background > /tmp/{name}.bg"));
        input.run_in_background = true;
        session.bash(input, &CallContext::default()).await.unwrap();
        let view = session.private_dir().join("tmp-view");
        for _ in 0..200 {
            if view.join(format!("{name}.bg")).exists() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        }
        let result = f.run(&session, &format!("cat /tmp/{name}.bg")).await;
        assert_eq!(result.text.trim(), "background", "supervised={supervised}");
        // Nothing reached the host's /tmp; the user finds the files in the view.
        for path in [name.clone(), format!("{name}.e"), format!("{name}.bg")] {
            assert!(
                !Path::new("/tmp").join(&path).exists(),
                "/tmp/{path} reached the host"
            );
            assert!(
                view.join(&path).exists(),
                "{path} is not in {}",
                view.display()
            );
        }
        assert_eq!(std::fs::read_to_string(view.join(&name)).unwrap(), "one\n");
        session.shutdown().await;
    }
}

/// SBX-8, SBX-7: what a command writes in `/tmp` reaches no file of the host: not a
/// file another user made there, not one of this user, not wavesh's own (another
/// session's files, this session's private files), not a file outside the workspace
/// that happens to lie under `/tmp`.
#[tokio::test]
async fn sbx_8_tmp_writes_reach_no_host_file() {
    if !enforced_or_skip(Level::WorkspaceWrite) {
        return;
    }
    for supervised in [false, true] {
        let f = Fixture::new();
        let other = f.session(Level::WorkspaceWrite, supervised);
        let session = f.session(Level::WorkspaceWrite, supervised);
        // The other session has run a command: its TMPDIR and output exist.
        f.run(&other, "echo other-output").await;
        let name = unique();
        let mine = PathBuf::from(format!("/tmp/{name}.mine"));
        std::fs::write(&mine, "mine\n").unwrap();
        std::fs::set_permissions(&mine, std::os::unix::fs::PermissionsExt::from_mode(0o666))
            .unwrap();
        let stranger = PathBuf::from(format!("/tmp/{name}.stranger"));
        std::fs::write(&stranger, "stranger\n").unwrap();
        std::fs::set_permissions(
            &stranger,
            std::os::unix::fs::PermissionsExt::from_mode(0o666),
        )
        .unwrap();
        // Another user's file, where this process may give one away (root).
        let given = std::os::unix::fs::chown(&stranger, Some(65534), Some(65534)).is_ok();
        let other_private = other.private_dir().to_path_buf();
        let own_private = session.private_dir().to_path_buf();
        let targets: Vec<PathBuf> = vec![
            mine.clone(),
            stranger.clone(),
            other_private.join("tmp/planted"),
            other_private.join("planted"),
            own_private.join("planted"),
            f.outside.join("victim.txt"),
            f.outside.join("new.txt"),
        ];
        let before: Vec<Option<Vec<u8>>> = targets.iter().map(|p| std::fs::read(p).ok()).collect();
        let before_outside = f.snapshot();
        for target in &targets {
            let t = target.display();
            let command = format!(
                "echo evil > {t}; echo evil >> {t}; chmod 777 {t}; rm -f {t}; mkdir -p $(dirname {t}) && echo evil > {t}; true"
            );
            f.run(&session, &command).await;
        }
        let after: Vec<Option<Vec<u8>>> = targets.iter().map(|p| std::fs::read(p).ok()).collect();
        let harmful: Vec<&PathBuf> = targets
            .iter()
            .zip(before.iter().zip(&after))
            .filter(|(_, (b, a))| b != a)
            .map(|(p, _)| p)
            .collect();
        assert!(
            harmful.is_empty(),
            "supervised={supervised} given={given}: changed on the host: {harmful:?}"
        );
        assert_eq!(f.snapshot(), before_outside, "supervised={supervised}");
        for path in [&mine, &stranger] {
            let mode = std::os::unix::fs::PermissionsExt::mode(
                &std::fs::metadata(path).unwrap().permissions(),
            );
            assert_eq!(mode & 0o777, 0o666, "{}: mode changed", path.display());
            std::fs::remove_file(path).unwrap();
        }
        session.shutdown().await;
        other.shutdown().await;
    }
}

/// SBX-1: `read-only` keeps its private TMPDIR only: `/tmp` stays unwritable there.
#[tokio::test]
async fn sbx_8_read_only_keeps_its_private_tmpdir_only() {
    if !enforced_or_skip(Level::ReadOnly) {
        return;
    }
    for supervised in [false, true] {
        let f = Fixture::new();
        let session = f.session(Level::ReadOnly, supervised);
        let name = unique();
        let result = f
            .run(
                &session,
                &format!("echo x > /tmp/{name}; echo y > $TMPDIR/f && cat $TMPDIR/f"),
            )
            .await;
        assert!(result.text.contains('y'), "{}", result.text);
        assert!(result.text.contains("sandbox refused"), "{}", result.text);
        assert!(!Path::new("/tmp").join(&name).exists());
        assert!(!session.private_dir().join("tmp-view").join(&name).exists());
        session.shutdown().await;
    }
}

/// SBX-8: a `CARGO_TARGET_DIR` outside the workspace is writable (a real cargo build
/// where cargo is installed); one that is `/`, the home, an ancestor of it or holds a
/// secret is not made writable.
#[tokio::test]
async fn sbx_8_configured_target_dir_is_writable() {
    if !enforced_or_skip(Level::WorkspaceWrite) {
        return;
    }
    for supervised in [false, true] {
        let f = Fixture::new();
        let target = f.base.join("cargo-target");
        let session = session_with_env(
            &f,
            Level::WorkspaceWrite,
            supervised,
            &[("CARGO_TARGET_DIR", &target)],
        );
        let result = f
            .run(&session, "mkdir -p \"$CARGO_TARGET_DIR/debug\" && echo out > \"$CARGO_TARGET_DIR/debug/app\" && cat \"$CARGO_TARGET_DIR/debug/app\"")
            .await;
        assert_eq!(result.exit_code, Some(0), "{}", result.text);
        assert_eq!(
            std::fs::read_to_string(target.join("debug/app")).unwrap(),
            "out\n"
        );
        if std::process::Command::new("cargo")
            .arg("--version")
            .output()
            .is_ok()
        {
            write(
                &f.ws.join("Cargo.toml"),
                "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
            );
            write(
                &f.ws.join("src/main.rs"),
                "fn main() { println!(\"built\"); }\n",
            );
            let result = f.run(&session, "cargo run -q --offline").await;
            assert!(
                result.text.contains("built"),
                "supervised={supervised}: {}",
                result.text
            );
            assert!(
                target.join("debug/.fingerprint").is_dir(),
                "cargo did not build in the target dir"
            );
            assert!(
                !f.ws.join("target").exists(),
                "cargo wrote the workspace's target/"
            );
        } else {
            util::missing_prerequisite("cargo", "the Rust toolchain on PATH");
        }
        session.shutdown().await;
        // Directories that are never made writable this way.
        let refused: [(&str, PathBuf); 4] = [
            ("the root", PathBuf::from("/")),
            ("the home", f.home.clone()),
            ("an ancestor of the home", f.base.clone()),
            ("a secret directory", f.home.join(".ssh")),
        ];
        for (what, dir) in refused {
            let session = session_with_env(
                &f,
                Level::WorkspaceWrite,
                supervised,
                &[("CARGO_TARGET_DIR", &dir)],
            );
            let probe = dir.join(format!("{}.probe", unique()));
            let result = f
                .run(&session, &format!("echo x > {}", probe.display()))
                .await;
            assert!(
                !probe.exists(),
                "{what}: {} was written: {}",
                probe.display(),
                result.text
            );
            let leaked = f.run(&session, "cat ~/.ssh/id_rsa").await;
            assert!(!leaked.text.contains(&f.marker), "{what}: {}", leaked.text);
            session.shutdown().await;
        }
    }
}

/// Every file under `dir` with its bytes (directories are left out: an empty cache
/// directory may be made as a mount point, docs/sandbox.md).
pub fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                stack.push(path);
            } else {
                out.push((path.clone(), std::fs::read(&path).unwrap_or_default()));
            }
        }
    }
    out.sort();
    out
}

/// SBX-8: the toolchain caches are writable, through a copy-on-write view shared by the
/// calls of the workspace; the real caches never change; a cache named by a variable
/// (`GOMODCACHE`) is one too; `~/.cargo/credentials.toml` beside the cargo caches stays
/// hidden.
#[tokio::test]
async fn sbx_8_caches_are_copy_on_write() {
    if !enforced_or_skip(Level::WorkspaceWrite) {
        return;
    }
    if !wavesh_exec::sandbox::overlay_available() {
        util::missing_prerequisite("overlayfs", "overlay mounts in a user or mount namespace");
        return;
    }
    if !wavesh_exec::sandbox::overlay_removes() {
        // SBX-5: where an overlay cannot remove what its lower layer holds (an ordinary
        // user's namespace on this kernel), the caches stay read-only and are named.
        let f = Fixture::new();
        plant_caches(&f);
        let real = tree(&f.home);
        for supervised in [false, true] {
            let session = f.session(Level::WorkspaceWrite, supervised);
            let result = f
                .run_raw(
                    &session,
                    "echo evil > ~/.cargo/registry/src/dep-1.0.0/lib.rs",
                )
                .await;
            session.shutdown().await;
            assert!(
                result
                    .text
                    .contains("Toolchain caches are read-only in this sandbox: ")
                    && result.text.contains("overlayfs cannot be used here"),
                "supervised={supervised}: {}",
                result.text
            );
        }
        assert_eq!(tree(&f.home), real, "the real cache changed");
        return;
    }
    for supervised in [false, true] {
        let f = Fixture::new();
        plant_caches(&f);
        let gomod = f.base.join("gomodcache");
        write(&gomod.join("golang.org/x/y@v1/go.mod"), "module y\n");
        let real: Vec<(PathBuf, Vec<u8>)> = [&f.home, &gomod]
            .into_iter()
            .flat_map(|d| tree(d))
            .collect();
        let session = session_with_env(
            &f,
            Level::WorkspaceWrite,
            supervised,
            &[("GOMODCACHE", &gomod)],
        );
        let cases = [
            // A new crate is fetched, an index entry updated, a source file patched.
            (
                "mkdir -p ~/.cargo/registry/src/new-2.0.0 && echo 'pub fn new() {}' > ~/.cargo/registry/src/new-2.0.0/lib.rs && echo '{\"vers\":\"2.0.0\"}' >> ~/.cargo/registry/index/crate.json && echo 'pub fn poisoned() {}' > ~/.cargo/registry/src/dep-1.0.0/lib.rs && cat ~/.cargo/registry/src/dep-1.0.0/lib.rs",
                "poisoned",
            ),
            (
                "cat ~/.cargo/registry/src/new-2.0.0/lib.rs ~/.cargo/registry/index/crate.json",
                "2.0.0",
            ),
            ("rm -rf ~/.cargo/git/db && ls ~/.cargo/git | wc -l", "0"),
            (
                "echo cached > ~/.npm/_cacache/index-v5/pkg2 && rm ~/.npm/_cacache/index-v5/pkg && ls ~/.npm/_cacache/index-v5",
                "pkg2",
            ),
            (
                "echo w >> ~/.cache/pip/http/wheel && mkdir -p ~/.cache/pip/new && cat ~/.cache/pip/http/wheel",
                "wheel bytes\nw",
            ),
            (
                "echo o > ~/.cache/go-build/00/obj2 && ls ~/.cache/go-build/00",
                "obj2",
            ),
            (
                "chmod 600 ~/go/pkg/mod/example.com/m@v1/go.mod && echo m >> ~/go/pkg/mod/example.com/m@v1/go.mod && tail -1 ~/go/pkg/mod/example.com/m@v1/go.mod",
                "m",
            ),
            (
                &*format!(
                    "echo z >> {0}/golang.org/x/y@v1/go.mod && cat {0}/golang.org/x/y@v1/go.mod",
                    gomod.display()
                ),
                "module y\nz",
            ),
            (
                "touch ~/.m2/repository/org/x/new.jar && ls ~/.m2/repository/org/x",
                "new.jar",
            ),
        ];
        for (command, expect) in cases {
            let result = f.run(&session, command).await;
            assert_eq!(
                result.exit_code,
                Some(0),
                "supervised={supervised} {command}: {}",
                result.text
            );
            assert!(
                result.text.contains(expect),
                "supervised={supervised} {command}: {}",
                result.text
            );
            assert!(
                !result.text.contains("read-only"),
                "{command}: {}",
                result.text
            );
        }
        // The view lasts across calls: the removal and the new crate are still there.
        let result = f
            .run(
                &session,
                "ls ~/.cargo/git | wc -l; cat ~/.cargo/registry/src/new-2.0.0/lib.rs",
            )
            .await;
        assert!(result.text.contains("0\npub fn new()"), "{}", result.text);
        // The secret beside the caches.
        let result = f
            .run(&session, "cat ~/.cargo/credentials.toml; ls ~/.cargo")
            .await;
        assert!(!result.text.contains(&f.marker), "{}", result.text);
        session.shutdown().await;
        // The real caches: byte for byte as they were.
        let now: Vec<(PathBuf, Vec<u8>)> = [&f.home, &gomod]
            .into_iter()
            .flat_map(|d| tree(d))
            .filter(|(p, _)| !p.starts_with(f.home.join(".local/state")))
            .collect();
        assert_eq!(now, real, "supervised={supervised}: a real cache changed");
        // The changes are in the workspace's layers in wavesh's state.
        let layers = tree(&f.base.join("state/wavesh/caches"));
        assert!(
            layers
                .iter()
                .any(|(p, b)| p.ends_with("new-2.0.0/lib.rs") && b == b"pub fn new() {}\n"),
            "{layers:?}"
        );
        // A new session of the workspace sees the same view.
        let again = session_with_env(
            &f,
            Level::WorkspaceWrite,
            supervised,
            &[("GOMODCACHE", &gomod)],
        );
        let result = f
            .run(&again, "cat ~/.cargo/registry/src/new-2.0.0/lib.rs")
            .await;
        assert!(result.text.contains("pub fn new()"), "{}", result.text);
        again.shutdown().await;
    }
}

/// SBX-8 with the workspace, the home and the session's files under `/tmp` themselves:
/// they are mounted back through the view, as they were: the workspace writable, the
/// home read-only with its secrets hidden, the session's private files read-only but its
/// TMPDIR; what else lies in the real `/tmp` is out of reach and unchanged.
#[tokio::test]
async fn sbx_8_a_world_under_tmp_is_kept_through_the_view() {
    if !enforced_or_skip(Level::WorkspaceWrite) {
        return;
    }
    for supervised in [false, true] {
        let f = Fixture::new_in(Path::new("/tmp"));
        let session = f.session(Level::WorkspaceWrite, supervised);
        let before = f.snapshot();
        let private = session.private_dir().to_path_buf();
        let works = [
            (
                "echo made > made.txt && cat made.txt README.md",
                "made\nhello",
            ),
            ("echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\"", "t"),
            ("git status --short | head -3; echo git-ok", "git-ok"),
            (
                "cat ~/.ssh/id_rsa ~/.aws/credentials ~/.netrc 2>&1; echo read-done",
                "read-done",
            ),
        ];
        for (command, expect) in works {
            let result = f.run(&session, command).await;
            assert!(
                result.text.contains(expect),
                "supervised={supervised} {command}: {}",
                result.text
            );
            assert!(
                !result.text.contains(&f.marker),
                "supervised={supervised} {command}: {}",
                result.text
            );
        }
        let refused = [
            format!("echo evil > {}/.bashrc", f.home.display()),
            format!("echo evil > {}/new-in-home", f.home.display()),
            format!("echo evil > {}/victim.txt", f.outside.display()),
            format!("echo evil > {}/planted", private.display()),
            format!("chmod 777 {}", f.home.display()),
        ];
        for command in &refused {
            f.run(&session, command).await;
        }
        assert!(!private.join("planted").exists(), "supervised={supervised}");
        let mut after = f.snapshot();
        after.retain(|(path, _)| !path.ends_with("made.txt"));
        assert_eq!(after, before, "supervised={supervised}: the host changed");
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&f.home).unwrap().permissions(),
        );
        assert_ne!(
            mode & 0o777,
            0o777,
            "supervised={supervised}: the home's mode changed"
        );
        session.shutdown().await;
    }
}
