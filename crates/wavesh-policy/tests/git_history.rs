//! RO-17: git's second copy of secrets. In a repository whose index or history holds a
//! file named like a secret, the git commands that print contents from its objects are
//! not approved (a Secret reason); names, stats and metadata still are. The answer
//! follows the repository as commits land.
#![cfg(unix)]

mod support;

use std::path::Path;

use support::Scratch;
use wavesh_policy::git_guard::{RealFs, git_context};
use wavesh_policy::{ClassifyContext, Dialect, GitContext, ReasonKind, check};

fn git(dir: &Path, args: &[&str]) -> bool {
    std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn context(s: &Scratch) -> ClassifyContext {
    let git = git_context(&s.work, &[], &RealFs);
    assert_eq!(git, GitContext::Safe);
    ClassifyContext {
        home: s.home.clone(),
        cwd: s.work.clone(),
        git_secrets: wavesh_policy::git_history::secret_files(&s.work, &git),
        git,
        ..ClassifyContext::default()
    }
}

const PRINTS: &[&str] = &[
    "git log -p",
    "git log --all --patch -- .",
    "git show HEAD~1",
    "git show",
    "git diff HEAD~1 HEAD",
    "git diff 4b825dc642cb6eb9a060e54bf8d69288fbee4904 HEAD",
    "git grep -e . HEAD~1",
    "git cat-file -p HEAD~1:config/settings.json",
    "git cat-file --batch",
    "git log -U3 --follow -- config",
    "git stash show",
    "git whatchanged -p",
];

const NAMES: &[&str] = &[
    "git log --oneline",
    "git log --stat",
    "git show --stat HEAD~1",
    "git diff --name-only HEAD~1",
    "git status",
    "git cat-file -t HEAD",
];

#[test]
fn ro_17_content_printing_git_asks_where_history_holds_a_secret() {
    if !git(Path::new("."), &["--version"]) {
        wavesh_testkit::missing_prerequisite("git", "the repositories these cases run in");
        return;
    }
    let s = Scratch::new("history");
    assert!(git(&s.work, &["init", "-q"]));
    s.file("README.md", "hello\n");
    s.file("config/settings.json", "{}\n");
    assert!(git(&s.work, &["add", "."]));
    assert!(git(&s.work, &["commit", "-qm", "one"]));
    s.file("README.md", "hello again\n");
    assert!(git(&s.work, &["commit", "-qam", "two"]));
    // No secret anywhere in the repository: everything read-only is approved.
    let clean = context(&s);
    assert!(clean.git_secrets.is_empty(), "{:?}", clean.git_secrets);
    for command in PRINTS.iter().chain(NAMES).filter(|c| !c.contains("stash")) {
        assert!(
            check(command, Dialect::Bash, &clean).read_only,
            "{command}: {:?}",
            check(command, Dialect::Bash, &clean).reasons
        );
    }
    // A secret committed, then deleted: it is in the objects, not in the tree.
    s.file("deploy/.ENV", "TOKEN=marker\n");
    assert!(git(&s.work, &["add", "."]));
    assert!(git(&s.work, &["commit", "-qm", "three"]));
    assert!(git(&s.work, &["rm", "-q", "deploy/.ENV"]));
    assert!(git(&s.work, &["commit", "-qm", "four"]));
    let held = context(&s);
    assert_eq!(held.git_secrets, ["deploy/.ENV"]);
    for command in PRINTS {
        let verdict = check(command, Dialect::Bash, &held);
        assert!(!verdict.read_only, "{command} was approved");
        assert!(
            verdict
                .reasons
                .iter()
                .any(|r| r.kind == ReasonKind::Secret && r.text.contains("deploy/.ENV")),
            "{command}: {:?}",
            verdict.reasons
        );
    }
    for command in NAMES {
        assert!(
            check(command, Dialect::Bash, &held).read_only,
            "{command}: {:?}",
            check(command, Dialect::Bash, &held).reasons
        );
    }
    // Only staged, never committed: the index holds it too.
    let s2 = Scratch::new("index");
    assert!(git(&s2.work, &["init", "-q"]));
    s2.file("server.pem", "KEY\n");
    assert!(git(&s2.work, &["add", "server.pem"]));
    assert_eq!(context(&s2).git_secrets, ["server.pem"]);
}
