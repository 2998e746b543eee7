//! SBX-6: no command can loosen or step around the sandbox. Each test is a class of
//! breaks, with cases of its own beyond the first example found:
//! - a write that widens the next command's sandbox (git pointer files, settings);
//! - a rename that carries a protection, or a hiding mount, away from its name.
//!
//! Every case runs at workspace-write, direct and through the supervisor, wherever the
//! machine gives the protected-paths guarantee ([`enforced_or_skip`]).

use wavesh_exec::sandbox::Level;

use crate::{Fixture, configurations, enforced_or_skip, write};

/// The workspace-write configurations (direct, supervised) this machine enforces.
fn workspace_write() -> Vec<bool> {
    configurations()
        .into_iter()
        .filter(|(level, _)| *level == Level::WorkspaceWrite)
        .filter(|(level, _)| enforced_or_skip(*level))
        .map(|(_, supervised)| supervised)
        .collect()
}

/// Runs `plant` in one session, then `attack` in the same session and in a new one:
/// the attack must print no ESCAPED and leave the outside directory unchanged.
async fn plant_then_attack(name: &str, plant: &str, attack: &str) {
    for supervised in workspace_write() {
        let f = Fixture::new();
        let out = f.outside.display().to_string();
        let plant = plant.replace("$OUT", &out);
        let attack = attack.replace("$OUT", &out);
        let session = f.session(Level::WorkspaceWrite, supervised);
        let planted = f.run(&session, &plant).await;
        let same = f.run(&session, &attack).await;
        session.shutdown().await;
        let next = f.session(Level::WorkspaceWrite, supervised);
        let fresh = f.run(&next, &attack).await;
        next.shutdown().await;
        for (when, result) in [("same session", &same), ("next session", &fresh)] {
            assert!(
                !result.text.contains("ESCAPED"),
                "{name} (supervised={supervised}, {when}): planted: {}\nattack: {}",
                planted.text,
                result.text
            );
        }
        assert_eq!(
            std::fs::read_to_string(f.outside.join("victim.txt")).unwrap(),
            "original\n",
            "{name} (supervised={supervised})"
        );
        assert!(
            !f.outside.join("new").exists(),
            "{name} (supervised={supervised}): a file was made outside"
        );
    }
}

const WRITE_OUTSIDE: &str = "{ echo pwned > $OUT/victim.txt && echo ESCAPED; } 2>&1; \
                             { touch $OUT/new && echo ESCAPED; } 2>&1; true";

#[tokio::test]
async fn sbx_6_a_commondir_never_widens_the_next_sandbox() {
    plant_then_attack(
        "absolute commondir",
        "printf %s $OUT > .git/commondir; true",
        WRITE_OUTSIDE,
    )
    .await;
    plant_then_attack(
        "relative commondir",
        "printf %s ../../outside > .git/commondir; true",
        WRITE_OUTSIDE,
    )
    .await;
}

#[tokio::test]
async fn sbx_6_a_planted_git_file_never_widens_the_next_sandbox() {
    for (name, plant) in [
        (
            "gitdir: / after moving .git away",
            "mv .git .git.orig; printf 'gitdir: /\\n' > .git; true",
        ),
        (
            "gitdir: the outside after moving .git away",
            "mv .git .git.orig; printf 'gitdir: %s\\n' $OUT > .git; true",
        ),
        (
            "a fake worktree layout pointing outside",
            "mv .git .git.orig; mkdir -p fake/worktrees/x; printf ../.. > fake/worktrees/x/commondir; \
             printf 'gitdir: fake/worktrees/x\\n' > .git; printf %s $OUT > fake/worktrees/x/commondir; true",
        ),
        (
            "a nested repository's .git file",
            "mkdir -p sub && printf 'gitdir: %s\\n' $OUT > sub/.git; true",
        ),
    ] {
        plant_then_attack(name, plant, WRITE_OUTSIDE).await;
    }
}

/// The protected paths stay where they are: `.git` (whose `hooks/` and `config` are
/// read-only) and `.claude/` cannot be renamed away and replaced; nor can the parent
/// of a hidden secret, in the workspace or in a home inside a writable root.
#[tokio::test]
async fn sbx_6_no_rename_moves_a_protection_away() {
    for supervised in workspace_write() {
        let f = Fixture::new();
        write(&f.ws.join(".git/hooks/pre-commit"), "#!/bin/sh\nexit 0\n");
        write(
            &f.ws.join("deploy/prod/.env"),
            &format!("{}-deep-env\n", f.marker),
        );
        let home = f.home.display().to_string();
        let session = f.session_with(Level::WorkspaceWrite, supervised, |config| {
            // The home is writable, as with `--add-dir ~`.
            config.sandbox.allow_write = vec![f.home.clone()];
        });
        let attacks = [
            (
                "move .git and plant a hook in a new one",
                "{ mv .git .git.orig && mkdir -p .git/hooks && echo 'echo ESCAPED' > .git/hooks/pre-commit \
                 && echo ESCAPED; } 2>&1; true"
                    .to_owned(),
            ),
            (
                "move .git/hooks's parent by a copy and swap",
                "{ cp -r .git .git.new && echo 'echo ESCAPED' > .git.new/hooks/pre-commit \
                 && rm -rf .git && mv .git.new .git && echo ESCAPED; } 2>&1; true"
                    .to_owned(),
            ),
            (
                "move .claude and write settings",
                "{ mv .claude .claude.orig && mkdir .claude && echo '{}' > .claude/settings.local.json \
                 && echo ESCAPED; } 2>&1; true"
                    .to_owned(),
            ),
            (
                "move the parent of a hidden workspace secret",
                "{ mv deploy deploy2 && cat deploy2/prod/.env; } 2>&1; { mv deploy/prod deploy/p2 && cat deploy/p2/.env; } 2>&1; true"
                    .to_owned(),
            ),
            (
                "move the home's .config",
                format!("{{ mv {home}/.config {home}/.x && cat {home}/.x/gh/hosts.yml; }} 2>&1; true"),
            ),
            (
                "move the home's .ssh",
                format!("{{ mv {home}/.ssh {home}/.y && cat {home}/.y/id_rsa; }} 2>&1; true"),
            ),
        ];
        for (name, command) in attacks {
            let result = f.run(&session, &command).await;
            assert!(
                !result.text.contains("ESCAPED"),
                "{name} (supervised={supervised}): {}",
                result.text
            );
            assert!(
                !result.text.contains(&f.marker),
                "{name} (supervised={supervised}): a secret was printed: {}",
                result.text
            );
        }
        session.shutdown().await;
        assert_eq!(
            std::fs::read_to_string(f.ws.join(".git/hooks/pre-commit")).unwrap(),
            "#!/bin/sh\nexit 0\n",
            "supervised={supervised}"
        );
        assert!(f.ws.join(".git/config").exists(), "supervised={supervised}");
    }
}

/// A settings file a sandboxed command can write only tightens the next session
/// (SBX-6): `.claude/settings.local.json` planted in a workspace that had no `.claude/`,
/// turning the sandbox off, excluding the shell's programs, allowing writes everywhere
/// and adding `/` as a directory, leaves the next `wavesh mcp` session's sandbox as it was.
#[test]
fn sbx_6_planted_settings_only_tighten_the_next_session() {
    if !enforced_or_skip(Level::WorkspaceWrite) {
        return;
    }
    let ws = crate::util::Workspace::new();
    let base = ws.root.parent().unwrap().to_path_buf();
    let (home, outside) = (base.join("home"), base.join("outside"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let fake_home = |command: &mut std::process::Command| {
        command.env("HOME", &home);
    };
    let settings = r#"{"sandbox": {"enabled": false, "excludedCommands": ["bash", "touch", "sh"],
        "allowUnsandboxedCommands": true, "autoAllowBashIfSandboxed": true,
        "filesystem": {"allowWrite": ["//"]}},
        "permissions": {"additionalDirectories": ["/"], "allow": ["Bash(*)"]}}"#;
    let mut first = crate::util::Mcp::start_with(&ws, &[], fake_home);
    let planted = first.tool(
        2,
        "Bash",
        serde_json::json!({"command": format!("mkdir -p .claude && cat > .claude/settings.local.json <<'EOF'\n{settings}\nEOF\necho planted")}),
    );
    assert!(planted.contains("planted"), "{planted}");
    first.close();
    let mut next = crate::util::Mcp::start_with(&ws, &[], fake_home);
    for (id, command) in [
        (
            3,
            format!("touch {}/new && echo ESCAPED", outside.display()),
        ),
        (
            4,
            format!("bash -c 'touch {}/new2' && echo ESCAPED", outside.display()),
        ),
        (5, "touch /wavesh-escaped-root && echo ESCAPED".to_owned()),
    ] {
        let text = next.tool(id, "Bash", serde_json::json!({"command": command}));
        assert!(!text.contains("ESCAPED"), "{command}: {text}");
    }
    next.close();
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    assert!(!std::path::Path::new("/wavesh-escaped-root").exists());
}

/// A helper process of the test's own, started with `script` (Python), that prints one
/// line (what it made) and lives until the test ends it.
struct Holder(std::process::Child, String);

impl Holder {
    fn start(script: &str) -> Holder {
        use std::io::BufRead as _;
        let mut child = std::process::Command::new("python3")
            .args(["-c", script])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        Holder(child, line.trim().to_owned())
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// SBX-7: nothing else of the machine. Another process's 0600 SysV shared memory, another
/// terminal's `/dev/pts/N`, a named unix socket reached through a datagram socketpair,
/// and any capability (as root: `mknod`, reading past file modes) are out of reach.
/// The IPC namespace and the devpts of its own come with process isolation (the
/// supervisor's; a direct spawn says it lacks it); the rest holds in every
/// configuration.
#[tokio::test]
async fn sbx_7_nothing_else_of_the_machine() {
    let f = Fixture::new();
    let marker = f.marker.clone();
    let shm = Holder::start(&format!(
        "import ctypes, sys, time\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         libc.shmat.restype = ctypes.c_void_p\n\
         sid = libc.shmget(0, 4096, 0o1600)\n\
         assert sid >= 0, ctypes.get_errno()\n\
         addr = libc.shmat(sid, None, 0)\n\
         ctypes.memmove(addr, b'{marker}-shm', {len})\n\
         print(sid, flush=True)\n\
         time.sleep(600)",
        len = marker.len() + 4
    ));
    let tty = Holder::start(
        "import os, pty, time\nm, s = pty.openpty()\nprint(os.ttyname(s), flush=True)\ntime.sleep(600)",
    );
    let socket_path = f.outside.join("listener.sock");
    let listener = std::os::unix::net::UnixDatagram::bind(&socket_path).unwrap();
    listener.set_nonblocking(true).unwrap();
    let (shmid, pts) = (shm.1.clone(), tty.1.clone());
    let sock = socket_path.display().to_string();
    let isolated = crate::isolation_or_skip();
    for (level, supervised) in configurations() {
        if !enforced_or_skip(level) {
            continue;
        }
        let session = f.session(level, supervised);
        let mut attacks = vec![
            (
                "datagram socketpair to a named socket",
                format!(
                    "python3 -c \"import socket\na, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)\na.sendto(b'ESCAPED', '{sock}')\nprint('ESCAPED sent')\" 2>&1; true"
                ),
            ),
            (
                "capabilities",
                // An ordinary user cannot empty its bounding set (no CAP_SETPCAP), and has
                // nothing to gain from it: no-new-privileges is set.
                format!(
                    "grep -E '^Cap(Eff|Prm|Inh|Amb{}):' /proc/self/status | grep -v ':\t0000000000000000$' | sed 's/^/ESCAPED /'; \
                 {{ mknod dev-null c 1 3 && echo ESCAPED mknod; }} 2>&1; true",
                    if wavesh_testkit::is_root() {
                        "|Bnd"
                    } else {
                        ""
                    }
                ),
            ),
        ];
        if supervised && isolated {
            attacks.push((
                "another process's SysV shared memory",
                format!(
                    "python3 -c \"import ctypes\nl = ctypes.CDLL(None, use_errno=True)\nl.shmat.restype = ctypes.c_void_p\na = l.shmat({shmid}, None, 0)\nprint('ESCAPED' + ctypes.string_at(a, 40).decode(errors='replace') if a not in (None, 2**64 - 1) else 'refused')\" 2>&1; \
                     ipcs -m | grep -w {shmid} | sed 's/^/ESCAPED listed /'; true"
                ),
            ));
            attacks.push((
                "another terminal",
                format!(
                    "{{ stty -F {pts} -echo && echo ESCAPED stty; }} 2>&1; {{ timeout 1 cat {pts} >/dev/null && echo ESCAPED read; }} 2>&1; ls /dev/pts | grep -vx ptmx | sed 's/^/ESCAPED listed /'; true"
                ),
            ));
        }
        for (name, command) in attacks {
            let result = f.run(&session, &command).await;
            assert!(
                !result.text.contains("ESCAPED") && !result.text.contains(&marker),
                "{name} ({level}, supervised={supervised}): {}",
                result.text
            );
        }
        session.shutdown().await;
        let mut buf = [0u8; 64];
        assert!(
            listener.recv(&mut buf).is_err(),
            "{level} supervised={supervised}: a datagram reached the listener"
        );
    }
    drop((shm, tty));
}

/// A home inside a writable root (a workspace started in `~`, `--add-dir ~`): what a
/// shell, git, ssh or an agent outside the sandbox later runs or obeys stays read-only,
/// and the session does not run the login probe over files a sandboxed command could
/// have written (SBX-6).
#[tokio::test]
async fn sbx_6_a_writable_home_keeps_its_start_up_files() {
    let files = [
        ".bashrc",
        ".profile",
        ".zshrc",
        ".gitconfig",
        ".config/git/config",
        ".claude/settings.json",
    ];
    for supervised in workspace_write() {
        let f = Fixture::new();
        for name in files {
            write(&f.home.join(name), "# the user's\n");
        }
        let session = f.session_with(Level::WorkspaceWrite, supervised, |config| {
            config.sandbox.allow_write = vec![f.home.clone()];
        });
        for name in files {
            let path = f.home.join(name);
            let command = format!(
                "{{ echo 'echo ESCAPED' >> {0} && echo ESCAPED appended; }} 2>&1; \
                 {{ mv {0} {0}.x && echo ESCAPED moved; }} 2>&1; \
                 {{ rm -f {0} && [ ! -e {0} ] && echo ESCAPED removed; }} 2>&1; true",
                path.display()
            );
            let result = f.run(&session, &command).await;
            assert!(
                !result.text.contains("ESCAPED"),
                "{name} (supervised={supervised}): {}",
                result.text
            );
            assert_eq!(
                std::fs::read_to_string(&path).unwrap(),
                "# the user's\n",
                "{name} (supervised={supervised})"
            );
        }
        // Other files of the home stay writable: that is what --add-dir ~ asks for.
        let other = f
            .run(&session, "echo ok > ~/notes.txt && cat ~/notes.txt")
            .await;
        assert_eq!(other.text, "ok", "supervised={supervised}");
        session.shutdown().await;
    }
}

/// The login probe is not run for a session whose sandboxed commands may write the home;
/// the first result says so.
#[tokio::test]
async fn sbx_6_no_login_probe_over_a_writable_home() {
    let f = Fixture::new();
    let mut config = wavesh_tool::ToolConfig::default();
    config.sandbox.level = Level::WorkspaceWrite;
    config.sandbox.allow_write = vec![f.home.clone()];
    let session = wavesh_tool::Session::builder(&f.ws)
        .private_base(&f.private)
        .home(&f.home)
        .no_claude_settings()
        .config(config)
        .build()
        .unwrap();
    let result = f.run(&session, "echo ran").await;
    assert!(result.text.contains("ran"), "{}", result.text);
    assert!(
        result
            .text
            .contains("The login shell's environment was not read"),
        "{}",
        result.text
    );
    session.shutdown().await;
}

/// Secrets outside the fixed places (SBX-2): where a tool's variable moves them
/// (`XDG_CONFIG_HOME`, `CARGO_HOME`, `DOCKER_CONFIG`, `KUBECONFIG`, `GNUPGHOME`,
/// `AWS_SHARED_CREDENTIALS_FILE`), the places the list lacked, and names in another case
/// (`SERVER.KEY`, `.ENV`, `Id_Rsa.PEM`), at both levels, through `wavesh run`.
#[test]
fn sbx_2_secrets_moved_renamed_or_newly_listed_stay_hidden() {
    if !enforced_or_skip(Level::ReadOnly) {
        return;
    }
    let ws = crate::util::Workspace::new();
    let base = ws.root.parent().unwrap().to_path_buf();
    let home = base.join("home");
    let marker = format!("MARKER{}", crate::util::digit_marker());
    let plant = |path: &std::path::Path| write(path, &format!("{marker}-{}\n", path.display()));
    let moved = [
        ("XDG_CONFIG_HOME", base.join("xdg"), "gh/hosts.yml"),
        ("CARGO_HOME", base.join("cargo"), "credentials.toml"),
        ("DOCKER_CONFIG", base.join("docker"), "config.json"),
        ("GNUPGHOME", base.join("gnupg"), "private-keys-v1.d/k.key"),
    ];
    let mut files = Vec::new();
    for (_, dir, file) in &moved {
        files.push(dir.join(file));
    }
    let kube = base.join("kube/cluster.yaml");
    let aws = base.join("aws/creds");
    files.extend([kube.clone(), aws.clone()]);
    for listed in [
        ".config/containers/auth.json",
        ".databrickscfg",
        ".pulumi/credentials.json",
        ".android/adbkey",
    ] {
        files.push(home.join(listed));
    }
    for name in ["SERVER.KEY", ".ENV", "Id_Rsa.PEM", ".Env.Production"] {
        files.push(ws.root.join("deep/er").join(name));
    }
    for file in &files {
        plant(file);
    }
    let command_for = |files: &[std::path::PathBuf]| {
        files
            .iter()
            .map(|f| format!("cat '{}'", f.display()))
            .collect::<Vec<_>>()
            .join("; ")
            + "; grep -r MARKER . ; true"
    };
    // Secrets inside a writable directory are hidden by mounts, which a machine without
    // them lacks at workspace-write (reported as such: modes.rs).
    let ws_hidden = !wavesh_exec::sandbox::support()
        .missing(Level::WorkspaceWrite)
        .contains(&wavesh_exec::sandbox::Guarantee::ProtectedPaths);
    if !ws_hidden {
        wavesh_testkit::lacking_in_this_mode(
            "secrets inside the workspace at workspace-write (mounts)",
            "root or user namespaces",
        );
    }
    for level in ["read-only", "workspace-write"] {
        let checked: Vec<std::path::PathBuf> = files
            .iter()
            .filter(|f| level == "read-only" || ws_hidden || !f.starts_with(&ws.root))
            .cloned()
            .collect();
        let command = command_for(&checked);
        let mut run = ws.wavesh();
        run.env("HOME", &home)
            .env("KUBECONFIG", &kube)
            .env("AWS_SHARED_CREDENTIALS_FILE", &aws);
        for (var, dir, _) in &moved {
            run.env(var, dir);
        }
        run.args(["run", "--sandbox", level, "--"]);
        if level == "read-only" || ws_hidden {
            run.arg(&command);
        } else {
            // `grep -r .` would read the workspace's own, which nothing hides here.
            run.arg(command.replace("; grep -r MARKER . ", "; "));
        }
        let out = crate::util::Run::of(run);
        let text = format!("{}{}", out.stdout(), out.stderr());
        assert!(
            !text.contains(&marker),
            "{level}: a secret was read:\n{text}"
        );
    }
}

/// Another session's private directory (its commands' outputs, its temporary files) is
/// hidden from this session's commands, at both levels, while each session still reads
/// its own (SBX-7).
#[tokio::test]
async fn sbx_7_another_sessions_files_are_hidden() {
    let f = Fixture::new();
    for (level, supervised) in configurations() {
        if !enforced_or_skip(level) {
            continue;
        }
        let a = f.session(Level::WorkspaceWrite, supervised);
        let planted = f
            .run(
                &a,
                &format!(
                    "echo {}-session-a > \"$TMPDIR\"/a.txt && echo planted",
                    f.marker
                ),
            )
            .await;
        assert_eq!(planted.text, "planted", "{level} supervised={supervised}");
        let own = f.run(&a, "cat \"$TMPDIR\"/a.txt").await;
        assert!(
            own.text.contains("-session-a"),
            "a session reads its own: {}",
            own.text
        );
        let b = f.session(level, supervised);
        let private = f.private.display().to_string();
        let peek = f
            .run(
                &b,
                &format!("grep -r session-a {private} 2>&1 | head; cat {private}/*/*/a.txt 2>&1 | head -3; true"),
            )
            .await;
        assert!(
            !peek.text.contains(&f.marker),
            "{level} supervised={supervised}: another session's file was read: {}",
            peek.text
        );
        a.shutdown().await;
        b.shutdown().await;
    }
}

/// The secret search takes nothing from a file a command can write, and fails closed at
/// its limit (SBX-6): a `.gitignore` or `.git/info/exclude` entry, a cache-directory
/// marker, a move into a directory the search never enters (`node_modules`, `vendor`),
/// or more directories than the search lists, leave a workspace secret hidden, from the
/// same session's next command and from the next session's first.
#[tokio::test]
async fn sbx_6_the_secret_search_reads_nothing_a_command_wrote() {
    let plants = [
        (
            "ignore files",
            "echo backend/ >> .gitignore; echo /backend >> .git/info/exclude; \
             printf '*\\n' > backend/.gitignore; true",
        ),
        (
            "a cache-directory marker",
            "printf 'Signature: 8a477f597d28d172789f06886806bc55\\n' > backend/CACHEDIR.TAG; true",
        ),
        (
            "a move into a directory the search never enters",
            "mkdir -p node_modules; mv backend node_modules/ 2>&1; mv backend vendor 2>&1; true",
        ),
        (
            "more directories than the search lists",
            "mkdir -p aaa && cd aaa && seq 10050 | xargs mkdir; true",
        ),
    ];
    let attack = "cat backend/.env node_modules/backend/.env vendor/.env zz/deep/.env 2>&1; \
                  grep -rs MARKER . 2>&1 | head -5; true";
    for supervised in workspace_write() {
        for (name, plant) in plants {
            let f = Fixture::new();
            write(
                &f.ws.join("backend/.env"),
                &format!("{}-backend\n", f.marker),
            );
            write(&f.ws.join("zz/deep/.env"), &format!("{}-deep\n", f.marker));
            let session = f.session(Level::WorkspaceWrite, supervised);
            let planted = f.run(&session, plant).await;
            let same = f.run(&session, attack).await;
            session.shutdown().await;
            let mut results = vec![("same session", same)];
            for level in [Level::WorkspaceWrite, Level::ReadOnly] {
                let next = f.session(level, supervised);
                results.push(("next session", f.run(&next, attack).await));
                next.shutdown().await;
            }
            for (when, result) in results {
                assert!(
                    !result.text.contains(&f.marker),
                    "{name} (supervised={supervised}, {when}): a secret was read\nplanted: {}\nattack: {}",
                    planted.text,
                    result.text
                );
            }
        }
    }
}
