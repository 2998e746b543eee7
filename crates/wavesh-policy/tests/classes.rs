//! The attack classes that depend on the file system, on a real throwaway workspace and
//! fake home: symlinks and hard links to secrets, globs over hostile names, `cd`, project
//! config that redirects version queries, `git -C` into another repository, sed script
//! files (RO-9, RO-13, PARSE-4, RO-5).
#![cfg(unix)]

mod support;

use std::os::unix::fs::symlink;

use support::Scratch;
use wavesh_policy::{ClassifyContext, Dialect, ReasonKind, check};

fn context(s: &Scratch) -> ClassifyContext {
    ClassifyContext {
        home: s.home.clone(),
        cwd: s.work.clone(),
        // Programs are looked up in the scratch directory's bin/ only.
        path: Some(vec![s.root.join("bin")]),
        ..ClassifyContext::default()
    }
}

fn approved(s: &Scratch, command: &str) -> bool {
    check(command, Dialect::Bash, &context(s)).read_only
}

fn refused_because(s: &Scratch, command: &str, why: &str) {
    let verdict = check(command, Dialect::Bash, &context(s));
    assert!(!verdict.read_only, "{command} was approved");
    assert!(
        verdict.reasons.iter().any(|r| r.text.contains(why)),
        "{command}: {:?} does not say {why:?}",
        verdict.reasons
    );
}

#[test]
fn ro_9_symlinks_and_hard_links_to_secrets_are_resolved() {
    let s = Scratch::new("links");
    s.file("notes.txt", "plain");
    symlink(s.home.join(".ssh/id_rsa"), s.work.join("readme.txt")).unwrap();
    symlink(s.home.join(".aws"), s.work.join("cfg")).unwrap();
    std::fs::hard_link(s.home.join(".netrc"), s.work.join("copy.txt")).unwrap();
    assert!(approved(&s, "cat notes.txt"));
    refused_because(&s, "cat readme.txt", "leads to");
    refused_because(&s, "head -5 ./readme.txt", "leads to");
    refused_because(&s, "cat cfg/credentials", "leads to");
    refused_because(&s, "grep -r x cfg", "leads to");
    refused_because(&s, "cat copy.txt", "hard links");
    refused_because(&s, "cat *.txt", "hard links");
    refused_because(&s, "wc -l < readme.txt", "leads to");
    // A link inside the workspace to another workspace file is fine.
    symlink(s.work.join("notes.txt"), s.work.join("alias.md")).unwrap();
    assert!(approved(&s, "cat alias.md"));
}

#[test]
fn parse_4_globs_over_hostile_names_are_expanded() {
    let s = Scratch::new("globs");
    for name in ["a.txt", "-fprint", "--output=x", "-Osh", "-opwned"] {
        s.file(name, "x");
    }
    refused_because(&s, "find * -name x", "expands to");
    refused_because(&s, "grep x *", "expands to");
    refused_because(&s, "sort *", "expands to");
    refused_because(&s, "ls *", "expands to");
    // git and gh read an expanded `--output=x` as an option as any program does: found
    // by the behaviour check's draw from git's own option lists.
    refused_because(&s, "git log *", "expands to");
    refused_because(&s, "git annotate --color-by-age *", "expands to");
    refused_because(&s, "git -C . diff --stat *", "expands to");
    refused_because(&s, "gh pr view *", "expands to");
    assert!(approved(&s, "git log --oneline -- *"));
    assert!(approved(&s, "git diff --stat *.txt"));
    assert!(approved(&s, "cat *.txt"));
    assert!(approved(&s, "ls ./*"));
    assert!(approved(&s, "grep x -- *"));
    // uniq writes its second operand: two files from one glob.
    assert!(approved(&s, "uniq *.txt"));
    s.file("b.txt", "y");
    refused_because(&s, "uniq *.txt", "second operand");
    // Globs that reach secrets.
    s.file(".env", "MARKER-ENV");
    refused_because(&s, "cat .env*", "secret");
    refused_because(&s, "git diff --no-index .e?v a.txt", "secret");
    let home = s.home.display();
    refused_because(&s, &format!("cat {home}/.ss?/*"), "secret");
    refused_because(&s, &format!("cat {home}/.[s]sh/*"), "secret");
    refused_because(&s, "cat ~/.a?s/credentials", "secret");
}

#[test]
fn ro_9_paths_relative_to_an_earlier_cd() {
    let s = Scratch::new("cd");
    s.file("src/main.rs", "fn main() {}");
    assert!(approved(&s, "cd src && cat main.rs"));
    refused_because(&s, "cd ~ && cat .aws/credentials", "secret list");
    refused_because(&s, "cd ~/.config && cat gh/hosts.yml", "secret list");
    refused_because(&s, "pushd ~ >/dev/null && cat .netrc", "secret");
    refused_because(&s, "cd .. && cd home && cat .netrc", "secret");
    refused_because(&s, "cd - && cat x", "cannot see");
    // A symlinked directory that leads home.
    symlink(&s.home, s.work.join("h")).unwrap();
    refused_because(&s, "cd h && cat .bash_history", "secret");
}

#[test]
fn ro_13_version_queries_ask_where_config_redirects_them() {
    let s = Scratch::new("version");
    refused_because(&s, "cargo --version", "settings.toml is missing");
    s.write(&s.home.join(".rustup/settings.toml"), "version = \"12\"\n");
    assert!(approved(&s, "cargo --version"));
    assert!(approved(&s, "python3 --version"));
    assert!(approved(&s, "go version"));
    s.file("rust-toolchain.toml", "[toolchain]\npath = \"./evil\"\n");
    refused_because(&s, "cargo --version", "rust-toolchain.toml");
    refused_because(&s, "rustc -V", "rust-toolchain.toml");
    refused_because(&s, "rustup --version", "rust-toolchain.toml");
    s.file("sub/go.mod", "module x\n\ngo 1.99\ntoolchain go1.99.0\n");
    std::fs::create_dir_all(s.work.join("sub/deep")).unwrap();
    let deep = ClassifyContext {
        cwd: s.work.join("sub/deep"),
        ..context(&s)
    };
    assert!(!check("go version", Dialect::Bash, &deep).read_only);
    s.file(".tool-versions", "nodejs 20\n");
    refused_because(&s, "node --version", ".tool-versions");
    refused_because(&s, "python3 --version", ".tool-versions");
    // A version query moved by cd into a directory with config.
    let t = Scratch::new("version-cd");
    t.file("p/.python-version", "3.12\n");
    assert!(approved(&t, "python3 --version"));
    refused_because(&t, "cd p && python3 --version", ".python-version");
}

#[test]
fn ro_5_git_dash_c_only_inside_the_same_repository() {
    let s = Scratch::new("git-c");
    std::fs::create_dir_all(s.work.join("docs")).unwrap();
    assert!(approved(&s, "git -C docs log --oneline -1"));
    std::fs::create_dir_all(s.work.join("vendor/evil/.git")).unwrap();
    refused_because(&s, "git -C vendor/evil log", "another repository");
    refused_because(&s, "git -C vendor/evil/sub status", "another repository");
    s.file("bare/HEAD", "ref: refs/heads/main\n");
    std::fs::create_dir_all(s.work.join("bare/objects")).unwrap();
    refused_because(&s, "git -C bare log", "another repository");
    symlink(&s.home, s.work.join("link")).unwrap();
    refused_because(&s, "git -C link log", "not a plain directory");
    refused_because(&s, "git -C .. log", "another repository");
}

#[test]
fn ro_4_sed_script_files_are_read_and_scanned() {
    let s = Scratch::new("sed-f");
    s.file("ok.sed", "s/a/b/\n1,5p\n");
    s.file("bad.sed", "1,2p\nN\nw /tmp/out\n");
    s.file("label.sed", ":a\nN\nw /tmp/out\n");
    let home = s.home.display();
    s.file("read.sed", &format!("1r {home}/.ssh/id_rsa\n"));
    s.file("in.txt", "a\n");
    assert!(approved(&s, "sed -f ok.sed in.txt"));
    assert!(approved(&s, "sed -nf ok.sed in.txt"));
    refused_because(&s, "sed -f bad.sed in.txt", "writes a file");
    refused_because(&s, "sed --file=bad.sed in.txt", "writes a file");
    refused_because(&s, "sed -f read.sed in.txt", "file command");
    refused_because(&s, "sed -f label.sed in.txt", "label or branch");
    refused_because(&s, "sed -f missing.sed in.txt", "cannot be read");
}

#[test]
fn ro_13_version_queries_ask_for_shims_and_scripts() {
    use std::os::unix::fs::PermissionsExt;
    let s = Scratch::new("shims");
    let bin = s.root.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let install = |path: &std::path::Path, text: &[u8]| {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    install(&bin.join("python3"), b"\x7fELF binary");
    assert!(approved(&s, "python3 --version"));
    install(
        &bin.join("python3"),
        b"#!/bin/sh\nexec pyenv exec python3 \"$@\"\n",
    );
    refused_because(&s, "python3 --version", "is a script");
    let shim = s.root.join("home/.pyenv/shims/node");
    install(&shim, b"\x7fELF");
    symlink(&shim, bin.join("node")).unwrap();
    refused_because(&s, "node --version", "shim");
}

/// The kind of a reason is typed where it is found: every way of reaching a secret gives
/// a `Secret` reason (what sandboxed auto-allow matches), and a refusal that only says
/// the word does not.
#[test]
fn ro_9_secret_reasons_are_typed_where_they_are_found() {
    let s = Scratch::new("kinds");
    s.file("notes.txt", "plain");
    s.file(".env", "TOKEN=x");
    symlink(s.home.join(".ssh/id_rsa"), s.work.join("readme.txt")).unwrap();
    std::fs::hard_link(s.home.join(".netrc"), s.work.join("copy.txt")).unwrap();
    let kinds = |command: &str| {
        let verdict = check(command, Dialect::Bash, &context(&s));
        assert!(!verdict.read_only, "{command} was approved");
        verdict.reasons.iter().map(|r| r.kind).collect::<Vec<_>>()
    };
    for command in [
        "cat .env",
        "cat readme.txt",
        "cat copy.txt",
        "head -n1 ~/.aws/credentials",
        "grep -r token ~/.ssh",
        "cat ./.e*",
        "cat notes.txt; cat ../work/.env",
    ] {
        assert!(
            kinds(command).contains(&ReasonKind::Secret),
            "{command}: {:?}",
            check(command, Dialect::Bash, &context(&s)).reasons
        );
    }
    for command in ["gh secret set X", "rm notes.txt", "echo secret > notes.txt"] {
        assert!(
            !kinds(command).contains(&ReasonKind::Secret),
            "{command}: {:?}",
            check(command, Dialect::Bash, &context(&s)).reasons
        );
    }
}

/// RO-16: the classifier opens regular files only. A sed script that is a FIFO, this
/// process's stdin or a device is not read (the open of a FIFO would block, and stdin is
/// the host's own input), and a script it cannot read is not approved.
#[test]
fn ro_16_scripts_that_are_not_regular_files_are_never_opened() {
    let s = Scratch::new("fifo");
    s.file("notes.txt", "plain");
    let fifo = s.work.join("script.sed");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(status.success());
    let (done, finished) = std::sync::mpsc::channel();
    let ctx = context(&s);
    std::thread::spawn(move || {
        let verdicts: Vec<bool> = [
            "sed -f script.sed notes.txt",
            "sed -f /dev/stdin notes.txt",
            "sed -f /dev/fd/0 notes.txt",
            "sed -f /proc/self/fd/0 notes.txt",
            "sed -f /dev/tty notes.txt",
            "sed -f /dev/zero notes.txt",
        ]
        .iter()
        .map(|command| check(command, Dialect::Bash, &ctx).read_only)
        .collect();
        let _ = done.send(verdicts);
    });
    let verdicts = finished
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("judging the commands blocked on a file that is not regular");
    assert_eq!(verdicts, [false; 6]);
}

/// git subcommands that read the file system instead of git's objects are walked like
/// `grep -r` (RO-9): `git grep --untracked`/`--no-index`/`--no-exclude-standard` and
/// `git diff --no-index DIR`, abbreviations included. Found by the behaviour check's draw
/// from git's own option lists (`git grep --untra` opened `.env`).
#[test]
fn ro_9_git_reads_of_the_file_system_are_walked_for_secrets() {
    let s = Scratch::new("git-worktree");
    s.file("src/lib.rs", "x");
    s.file("docs/a.md", "x");
    assert!(approved(&s, "git grep --untracked x"));
    assert!(approved(&s, "git diff --no-index src docs"));
    s.file("config/.env", "MARKER-ENV");
    for command in [
        "git grep --untracked x",
        "git grep --untr x",
        "git grep --no-index -e x",
        "git grep --no-ind x",
        "git grep --no-exclude-standard --untracked x",
        "git diff --no-index config docs",
        "git diff --no-in . docs",
        "git --no-pager diff --no-index -- config docs",
    ] {
        refused_because(&s, command, "read recursively");
    }
    // Tracked files only, or two named files: nothing is walked.
    assert!(approved(&s, "git grep -e x"));
    assert!(approved(&s, "git grep x -- src"));
    assert!(approved(&s, "git diff --no-index src/lib.rs docs/a.md"));
}

/// An exact option name wins over an abbreviation in git: `--text` is the diff option
/// where the subcommand has one, and `--textconv` where it does not (RO-5).
#[test]
fn ro_5_git_exact_options_before_abbreviations() {
    let s = Scratch::new("git-exact");
    for command in [
        "git log -p --text",
        "git diff --text",
        "git show --text HEAD",
    ] {
        assert!(approved(&s, command), "{command}");
    }
    for command in ["git cat-file --text HEAD:a.txt", "git blame --text a.txt"] {
        refused_because(&s, command, "--textconv");
    }
}
