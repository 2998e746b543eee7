//! The sandbox suite (SBX): attacks a wrong approval could let through must fail at both
//! sandboxed levels, everyday work must still work at `workspace-write`, and the
//! project's own must-not corpus, run as if approved, must leave everything unchanged.
//!
//! Every attack runs in a throwaway base directory: a workspace, a fake HOME holding
//! marker secrets, a directory "outside" and the private files. Network attacks aim at
//! listeners on loopback only; processes the tests start are ended by the tests.
//!
//! `cargo nextest run -p wavesh --test sandbox` runs it.
#![cfg(target_os = "linux")]
#![expect(clippy::unwrap_used, reason = "tests unwrap freely (STYLE)")]
#![allow(clippy::print_stdout, reason = "tests say SKIPPED with their reason")]

#[path = "../../crates/cli/tests/it/util.rs"]
#[allow(dead_code)]
mod util;

mod ahead;
mod background;
mod boundary;
mod defaults;
mod description;
mod escapes;
mod every_secret;
mod everyday;
mod git_config;
mod harm;
mod hidden;
mod modes;
mod network;
mod network_ask;
mod tty;
pub mod workday;

use std::path::{Path, PathBuf};

use wavesh_exec::sandbox::{Guarantee, Level, describe_all, support};
use wavesh_tool::{BashInput, BashResult, CallContext, SandboxSettings, Session, ToolConfig};

/// The secret files of the fake HOME (relative to it) and of the workspace, each holding
/// its own marker.
pub const HOME_SECRETS: &[&str] = &[
    ".ssh/id_rsa",
    ".ssh/config",
    ".aws/credentials",
    ".gnupg/private-keys-v1.d/key",
    ".netrc",
    ".git-credentials",
    ".config/gh/hosts.yml",
    ".docker/config.json",
    ".kube/config",
    ".azure/accessTokens.json",
    ".config/gcloud/credentials.db",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials.toml",
    ".vault-token",
    ".bash_history",
    ".claude/.credentials.json",
    ".codex/auth.json",
];

/// Secrets by name in the workspace root.
pub const WORKSPACE_SECRETS: &[&str] = &[".env", ".env.production", "server.pem", "tls.key"];

/// One throwaway world.
pub struct Fixture {
    pub base: PathBuf,
    pub ws: PathBuf,
    pub home: PathBuf,
    pub outside: PathBuf,
    pub private: PathBuf,
    /// The marker every secret file holds, followed by its own name.
    pub marker: String,
}

impl Fixture {
    #[expect(
        clippy::new_without_default,
        reason = "a fixture makes files: not a default"
    )]
    pub fn new() -> Fixture {
        Fixture::planted(Fixture::empty())
    }

    /// Plants the secrets, files and repositories of [`Fixture::new`] in `fixture`.
    fn planted(fixture: Fixture) -> Fixture {
        let (ws, home, outside, marker) = (
            &fixture.ws,
            &fixture.home,
            &fixture.outside,
            &fixture.marker,
        );
        for secret in HOME_SECRETS {
            write(&home.join(secret), &format!("{marker}-{secret}\n"));
        }
        for secret in WORKSPACE_SECRETS {
            write(&ws.join(secret), &format!("{marker}-{secret}\n"));
        }
        write(&ws.join(".env.example"), "EXAMPLE=1\n");
        write(&ws.join("README.md"), "hello\n");
        write(&ws.join("src/main.txt"), "code\n");
        write(&outside.join("victim.txt"), "original\n");
        git(ws, &["init", "-q"]);
        write(&ws.join(".claude/settings.local.json"), "{}\n");
        // A secret kept in git: the password store.
        let store = home.join(".password-store");
        std::fs::create_dir_all(&store).unwrap();
        write(&store.join("token"), &format!("{marker}-password-store\n"));
        git(&store, &["init", "-q"]);
        git(&store, &["add", "token"]);
        git(
            &store,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-qm",
                "t",
            ],
        );
        fixture
    }

    /// The same world with nothing planted: empty workspace, fake HOME and outside, in
    /// [`outside_tmp`]: as on a user's machine, the workspace, the home and the rest lie
    /// outside `/tmp`, which a command sees as its session's own (SBX-8; `workday.rs`
    /// puts a world under `/tmp` too).
    pub fn empty() -> Fixture {
        Fixture::empty_in(&outside_tmp())
    }

    /// [`Fixture::new`] in `parent`.
    pub fn new_in(parent: &Path) -> Fixture {
        Fixture::planted(Fixture::empty_in(parent))
    }

    /// [`Fixture::empty`] in `parent`.
    pub fn empty_in(parent: &Path) -> Fixture {
        std::fs::create_dir_all(parent).unwrap();
        let base = std::fs::canonicalize(parent)
            .unwrap()
            .join(format!("wavesh-sbx-{}", util::unique()));
        let (ws, home, outside, private) = (
            base.join("ws"),
            base.join("home"),
            base.join("outside"),
            base.join("private"),
        );
        for dir in [&ws, &home, &outside, &private] {
            std::fs::create_dir_all(dir).unwrap();
        }
        let marker = format!("MARKER{}", util::digit_marker());
        Fixture {
            base,
            ws,
            home,
            outside,
            private,
            marker,
        }
    }

    /// A session whose every command runs at `level` (as if approved), direct or through
    /// the supervisor.
    pub fn session(&self, level: Level, supervised: bool) -> Session {
        self.session_with(level, supervised, |_| {})
    }

    /// [`Fixture::session`] with the configuration adjusted.
    pub fn session_with(
        &self,
        level: Level,
        supervised: bool,
        adjust: impl FnOnce(&mut ToolConfig),
    ) -> Session {
        self.session_built(level, supervised, adjust, |_| {})
    }

    /// [`Fixture::session_with`], and the builder adjusted last.
    pub fn session_built(
        &self,
        level: Level,
        supervised: bool,
        adjust: impl FnOnce(&mut ToolConfig),
        build: impl FnOnce(&mut wavesh_tool::SessionBuilder),
    ) -> Session {
        let mut config = ToolConfig {
            sandbox: SandboxSettings {
                level,
                read_only_level: false,
                ..SandboxSettings::default()
            },
            ..ToolConfig::default()
        };
        adjust(&mut config);
        let mut builder = Session::builder(&self.ws);
        builder
            .private_base(&self.private)
            .no_login_env()
            .home(&self.home)
            // wavesh's state (the cache layers of SBX-8) beside the world, not in HOME.
            .env("XDG_STATE_HOME", self.base.join("state"))
            .sandbox_level(config.sandbox.level)
            .no_claude_settings()
            .config(config);
        if supervised {
            builder.supervisor(util::WAVESH);
        }
        build(&mut builder);
        builder.build().unwrap()
    }

    /// Runs `command` and returns the result, failing on a tool error.
    pub async fn run(&self, session: &Session, command: &str) -> BashResult {
        let mut result = self.run_raw(session, command).await;
        result.text =
            wavesh_testkit::without_documented_note(&without_direct_spawn_note(&result.text));
        result
    }

    /// [`Fixture::run`] keeping the note of the guarantees a direct spawn lacks.
    pub async fn run_raw(&self, session: &Session, command: &str) -> BashResult {
        session
            .bash(BashInput::new(command), &CallContext::default())
            .await
            .unwrap_or_else(|e| panic!("{command}: {e}"))
    }

    /// The model text with this fixture's paths and marker replaced, for snapshots.
    pub fn redact(&self, text: &str) -> String {
        text.replace(&self.ws.display().to_string(), "[WS]")
            .replace(&self.home.display().to_string(), "[HOME]")
            .replace(&self.outside.display().to_string(), "[OUT]")
            .replace(&self.private.display().to_string(), "[PRIVATE]")
            .replace(&self.base.display().to_string(), "[BASE]")
            .replace(&self.marker, "[MARKER]")
            // The shell's path is the machine's (`/bin/bash`, or `/usr/bin/bash` first on
            // PATH): its messages read `bash:` in snapshots.
            .replace("/usr/bin/bash: ", "bash: ")
            .replace("/bin/bash: ", "bash: ")
    }

    /// Every file under the workspace, HOME and outside, with its bytes: the state a
    /// harmless command leaves unchanged.
    pub fn snapshot(&self) -> Vec<(PathBuf, Vec<u8>)> {
        let mut out = Vec::new();
        for root in [&self.ws, &self.home, &self.outside] {
            walk(root, &mut out);
        }
        out.sort();
        out
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

fn walk(dir: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            out.push((path.clone(), b"<dir>".to_vec()));
            walk(&path, out);
        } else if kind.is_symlink() {
            let target = std::fs::read_link(&path).unwrap_or_default();
            out.push((path, format!("-> {}", target.display()).into_bytes()));
        } else {
            out.push((path.clone(), std::fs::read(&path).unwrap_or_default()));
        }
    }
}

/// A directory for throwaway worlds outside `/tmp` and outside any git repository (a
/// command that runs git in a hidden repository would find the enclosing one):
/// `/var/tmp` where it is writable, else the build's temporary directory.
pub fn outside_tmp() -> PathBuf {
    let var_tmp = Path::new("/var/tmp");
    if rustix::fs::access(var_tmp, rustix::fs::Access::WRITE_OK).is_ok() {
        var_tmp.to_path_buf()
    } else {
        PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
    }
}

pub fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

pub fn git(dir: &Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?} in {}", dir.display());
}

/// Whether this machine can enforce every guarantee of `level` (process isolation has
/// its own check, [`isolation_or_skip`]). Where it cannot: in a degraded mode whose
/// missing guarantees `docs/sandbox.md` lists (and `modes.rs` checks are reported), it
/// says SKIPPED naming the mode; otherwise a missing prerequisite (a failure in CI).
pub fn enforced_or_skip(level: Level) -> bool {
    let missing: Vec<_> = support()
        .missing(level)
        .into_iter()
        .filter(|g| !matches!(g, Guarantee::OtherProcesses | Guarantee::FileMetadata))
        .collect();
    guarantees_or_skip(
        level,
        &missing,
        "Linux 6.12+ with Landlock, seccomp and mount namespaces",
    )
}

/// Whether the supervisor isolates sandboxed commands here (a PID namespace with its own
/// `/proc`, read-only mounts); as [`enforced_or_skip`] otherwise.
pub fn isolation_or_skip() -> bool {
    let missing: Vec<_> = support()
        .missing(Level::ReadOnly)
        .into_iter()
        .filter(|g| matches!(g, Guarantee::OtherProcesses | Guarantee::FileMetadata))
        .collect();
    guarantees_or_skip(
        Level::ReadOnly,
        &missing,
        "root or user namespaces, PID and mount namespaces, and mount_setattr (Linux 5.12)",
    )
}

fn guarantees_or_skip(level: Level, missing: &[Guarantee], how: &str) -> bool {
    if missing.is_empty() {
        return true;
    }
    let what = format!("the {level} sandbox's {}", describe_all(missing));
    let mode = wavesh_testkit::mode();
    let documented = modes::documented_missing(mode, level);
    if mode.is_degraded() && missing.iter().all(|g| documented.contains(g.describe())) {
        wavesh_testkit::lacking_in_this_mode(&what, how);
    } else {
        util::missing_prerequisite(&what, how);
    }
    false
}

/// What a shell spawned directly by the host, not through the supervisor, lacks (SBX-5):
/// only the supervisor's subreaper can be the init of the command's PID namespace.
pub const DIRECT_SPAWN_MISSING: &str = "missing: other processes' environments and memory \
     unreadable; no change of modes, owners, times or extended attributes outside the \
     writable paths.";

/// `text` without the note of [`DIRECT_SPAWN_MISSING`], so direct and supervised runs
/// compare alike; `sbx_2_host_environ_cannot_be_read` and `sbx_2_no_metadata_change_outside`
/// check the note itself.
pub fn without_direct_spawn_note(text: &str) -> String {
    let kept = text
        .lines()
        .filter(|line| {
            !(line.starts_with("Sandbox (")
                && line.ends_with(&format!(
                    "is incomplete on this machine; {DIRECT_SPAWN_MISSING}"
                )))
        })
        .collect::<Vec<_>>()
        .join("\n");
    // What the tool says of a command that printed nothing, had the note not been there.
    if kept.is_empty() && !text.is_empty() {
        "(no output)".to_owned()
    } else {
        kept
    }
}

/// The sandboxed levels with the two ways of starting a shell.
pub fn configurations() -> Vec<(Level, bool)> {
    let mut out = Vec::new();
    for level in [Level::ReadOnly, Level::WorkspaceWrite] {
        for supervised in [false, true] {
            out.push((level, supervised));
        }
    }
    out
}
