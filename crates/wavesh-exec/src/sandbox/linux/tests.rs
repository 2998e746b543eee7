use super::*;

#[test]
fn sbx_2_reads_are_allowed_around_the_secrets() {
    let base = std::env::temp_dir().join(format!("wavesh-around-{}", std::process::id()));
    let home = base.join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::create_dir_all(home.join("proj")).unwrap();
    std::fs::write(home.join(".netrc"), "x").unwrap();
    std::fs::write(home.join("notes"), "x").unwrap();
    let allowed = read_allowed(&[home.join(".ssh"), home.join(".netrc")]);
    assert!(allowed.contains(&home.join("proj")));
    assert!(allowed.contains(&home.join("notes")));
    assert!(!allowed.iter().any(|p| p.starts_with(home.join(".ssh"))));
    assert!(!allowed.contains(&home.join(".netrc")));
    // Directories on the way are descended into, never allowed whole.
    for ancestor in home.ancestors() {
        assert!(
            !allowed.contains(&ancestor.to_path_buf()),
            "{}",
            ancestor.display()
        );
    }
    assert!(allowed.contains(&PathBuf::from("/proc")) || !Path::new("/proc").exists());
    std::fs::remove_dir_all(&base).unwrap();
}

/// The reads are built once per kind of plan: a command's own TMPDIR and output files
/// are not part of what they depend on, and a session's two levels do not evict each
/// other. A change in a listed directory rebuilds them.
#[test]
fn sbx_2_reads_are_reused_across_commands_and_levels() {
    use crate::sandbox::{CommandFiles, SandboxConfig, SecretList};
    let base = std::env::temp_dir().join(format!("wavesh-reuse-{}", std::process::id()));
    let (ws, home) = (base.join("ws"), base.join("home"));
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    let config = SandboxConfig {
        roots: vec![ws.clone()],
        secrets: SecretList {
            paths: vec![home.join(".ssh")],
            names: vec![".env".into()],
        },
        ..SandboxConfig::default()
    };
    let files = |n: u32| CommandFiles {
        output: base.join(format!("p/{n}-out")),
        cwd_file: Some(base.join(format!("p/{n}-cwd"))),
        tmp_dir: base.join(format!("p/{n}-tmp")),
        cwd: ws.clone(),
    };
    let plan = |level, n| Plan::new(level, &config, &files(n), false);
    // A workspace directory changed in the last 10 ms is listed again every time (its
    // mtime may not show a further change, see scan.rs): the one just made is waited
    // out.
    std::thread::sleep(std::time::Duration::from_millis(20));
    // The system temporary directory is on the way to this test's secret, and other
    // tests change it at any time: a rebuild it caused is tried again, a few times.
    let first = (0..5)
        .find_map(|_| {
            let first = cached_reads(&plan(Level::ReadOnly, 1), true);
            let other_level = cached_reads(&plan(Level::WorkspaceWrite, 2), true);
            let reused =
                std::sync::Arc::ptr_eq(&first, &cached_reads(&plan(Level::ReadOnly, 3), true))
                    && std::sync::Arc::ptr_eq(
                        &other_level,
                        &cached_reads(&plan(Level::WorkspaceWrite, 4), true),
                    );
            reused.then_some(first)
        })
        .expect("the reads are reused across commands and levels");
    // A new entry in the workspace (a `.env` could be among them) rebuilds.
    std::fs::write(ws.join(".env"), "x").unwrap();
    assert!(!std::sync::Arc::ptr_eq(
        &first,
        &cached_reads(&plan(Level::ReadOnly, 5), true)
    ));
    std::fs::remove_dir_all(&base).unwrap();
}

/// A command's ruleset starts from a base made ahead for it, and taking it makes the
/// next one, per network setting.
#[test]
fn sbx_2_a_ruleset_base_is_made_ahead_for_the_next_command() {
    use crate::sandbox::{CommandFiles, SandboxConfig};
    if landlock_abi() < 1 {
        return;
    }
    let base = std::env::temp_dir().join(format!("wavesh-spare-{}", std::process::id()));
    std::fs::create_dir_all(base.join("ws")).unwrap();
    let files = CommandFiles {
        output: base.join("out"),
        cwd_file: None,
        tmp_dir: base.join("tmp"),
        cwd: base.join("ws"),
    };
    let config = SandboxConfig {
        roots: vec![base.join("ws")],
        ..SandboxConfig::default()
    };
    let plan = Plan::new(Level::ReadOnly, &config, &files, false);
    let reads = cached_reads(&plan, false);
    let spare_ready = || {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::time::Instant::now() < deadline {
            if reads.spares.lock().unwrap()[0].is_some() {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        false
    };
    assert!(landlock_ruleset(&plan, &reads).unwrap().is_some());
    assert!(spare_ready(), "no base was made ahead");
    assert!(
        reads.spares.lock().unwrap()[1].is_none(),
        "only for the setting used"
    );
    assert!(landlock_ruleset(&plan, &reads).unwrap().is_some());
    assert!(spare_ready(), "taking the base makes the next one");
    std::fs::remove_dir_all(&base).unwrap();
}

/// Filters are built for x86-64, aarch64 and riscv64 only; elsewhere the sandbox
/// reports the network guarantee missing.
#[test]
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
))]
fn sbx_2_the_seccomp_filters_compile() {
    assert!(program(Filter::NetworkOff).unwrap().len() > 10);
    eprintln!(
        "seccomp filters: {} and {} instructions",
        program(Filter::NetworkOff).unwrap().len(),
        program(Filter::NetworkOn).unwrap().len()
    );
    assert!(program(Filter::NetworkOn).unwrap().len() > program(Filter::NetworkOff).unwrap().len());
}

#[test]
fn child_sandbox_round_trips_through_bytes() {
    let child = ChildSandbox {
        ruleset: None,
        seccomp: Some(Filter::NetworkOff),
        mounts: vec![MountOp {
            kind: MountKind::HideDir,
            path: CString::new("/ws/.ssh").unwrap(),
            keep: 6,
        }],
        views: crate::sandbox::view_mounts::ViewMounts::default(),
        userns: Some((1000, 1001)),
        maps: None,
        isolation: Some(vec![
            CString::new("/ws").unwrap(),
            CString::new("/p/out").unwrap(),
        ]),
        sessions: Some(SessionsMount {
            base: CString::new("/tmp/wavesh-0").unwrap(),
            own: CString::new("/tmp/wavesh-0/abc").unwrap(),
        }),
    };
    let (bytes, fd) = encode_child(Some(&child));
    assert!(fd.is_none());
    let back = decode_child(&bytes, || unreachable!("no ruleset"))
        .unwrap()
        .unwrap();
    assert_eq!(back.mounts, child.mounts);
    assert_eq!(back.userns, child.userns);
    assert_eq!(back.seccomp, child.seccomp);
    assert_eq!(back.isolation, child.isolation);
    assert_eq!(
        back.sessions.as_ref().map(|s| (&s.base, &s.own)),
        child.sessions.as_ref().map(|s| (&s.base, &s.own))
    );
    assert_eq!(back.maps.unwrap().uid_map.as_bytes(), b"1000 1000 1\n");
    assert!(decode_child(&[0], || unreachable!()).unwrap().is_none());
    assert!(decode_child(&[1, 0, 9, 0, 0, 0, 0, 0], || unreachable!()).is_err());
}
