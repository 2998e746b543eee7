//! The git guard against git itself (GIT-5): on generated config files with the forms
//! git accepts and a home-made parser gets wrong (keys on the section line, a BOM,
//! continuations, quoting, comments, case, `[section.sub]`, include and includeIf,
//! files over 1 MiB, config.worktree, broken files), the guard's verdict must equal
//! what git's own key lookup (`git config --get-regexp`) finds. Plus real linked
//! worktrees, submodules and hooks.
#![cfg(unix)]

mod support;

use std::path::Path;
use std::process::Command;

use support::Scratch;
use wavesh_policy::GitContext;
use wavesh_policy::git_guard::{RealFs, dangerous_key, git_context};

fn git_available() -> bool {
    Command::new("git")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn git(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new("git")
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .args(args)
        .output()
        .expect("git runs")
}

/// A small deterministic generator (xorshift), so a failure names a reproducible case.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// (section, subsection, key, value) the generator may set; dangerous ones and benign.
const DANGEROUS: &[(&str, Option<&str>, &str, &str)] = &[
    ("core", None, "pager", "less -R"),
    ("core", None, "fsmonitor", "./watch.sh"),
    ("core", None, "hooksPath", ".githooks"),
    ("core", None, "sshCommand", "ssh -i k"),
    ("core", None, "askPass", "./ask"),
    ("core", None, "gitProxy", "./proxy"),
    ("diff", None, "external", "./difftool"),
    ("diff", Some("bin"), "textconv", "./conv"),
    ("diff", Some("a.b"), "command", "./cmd"),
    ("filter", Some("lfs"), "smudge", "./smudge"),
    ("filter", Some("x"), "process", "./proc"),
    ("gpg", None, "program", "./gpg"),
    ("gpg", Some("ssh"), "program", "./ssh-keygen"),
    ("pager", None, "log", "./pager"),
    ("alias", None, "st", "!sh -c id"),
    ("credential", None, "helper", "store"),
    ("remote", Some("origin"), "uploadpack", "./up"),
    ("remote", Some("origin"), "receivepack", "./rp"),
    ("protocol", Some("ext"), "allow", "always"),
    ("uploadpack", None, "packObjectsHook", "./hook"),
    ("log", None, "showSignature", "true"),
];

const BENIGN: &[(&str, Option<&str>, &str, &str)] = &[
    ("user", None, "name", "A B"),
    ("core", None, "autocrlf", "false"),
    ("core", None, "fsmonitor", "false"),
    ("alias", None, "co", "checkout"),
    ("color", None, "ui", "auto"),
    (
        "remote",
        Some("origin"),
        "url",
        "https://example.invalid/x.git",
    ),
    ("branch", Some("main"), "remote", "origin"),
    ("log", None, "showSignature", "false"),
    ("diff", None, "renames", "true"),
    ("status", None, "short", "true"),
];

/// The regex of every key the generator may set that can be dangerous, for git's own
/// lookup (matched by git against its canonical key names).
const ORACLE_REGEX: &str = r"^(core\.(pager|fsmonitor|hookspath|sshcommand|askpass|gitproxy)|diff\.external|diff\..+\.(textconv|command)|filter\..+\.(smudge|process)|gpg\.(.+\.)?program|pager\..+|alias\..+|credential\.helper|remote\..+\.(uploadpack|receivepack)|protocol\..+\.allow|uploadpack\.packobjectshook|log\.showsignature)$";

fn case_mix(rng: &mut Rng, text: &str) -> String {
    if !rng.chance(30) {
        return text.to_owned();
    }
    text.chars()
        .map(|c| {
            if rng.chance(50) {
                c.to_ascii_uppercase()
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect()
}

/// Renders one entry in one of git's spellings, some of which set nothing (commented
/// out): which is which is git's to say, in [`oracle`].
fn render(rng: &mut Rng, entry: (&str, Option<&str>, &str, &str)) -> String {
    let (section, sub, key, value) = entry;
    let section_text = case_mix(rng, section);
    let key_text = case_mix(rng, key);
    let header = match sub {
        Some(sub) if rng.chance(20) && sub.chars().all(|c| c.is_ascii_lowercase()) => {
            format!("[{section_text}.{sub}]")
        }
        Some(sub) => format!("[{section_text} \"{sub}\"]"),
        None => format!("[{section_text}]"),
    };
    let value_text = match rng.below(6) {
        0 => format!("\"{value}\""),
        1 if value.len() > 2 => {
            let (a, b) = value.split_at(2);
            format!("{a}\\\n{b}")
        }
        2 => format!("{value} ; a comment"),
        3 => format!("{value}   # another"),
        _ => value.to_owned(),
    };
    let line = format!("{key_text} = {value_text}");
    match rng.below(8) {
        0 => format!("{header} {line}\n"),
        1 => format!("{header}\n\t# {line}\n"),
        2 => format!("{header}\n; {line}\n"),
        3 => format!("{header}\n  {line}\n\n"),
        _ => format!("{header}\n\t{line}\n"),
    }
}

/// What git's own lookup says: unsafe if any dangerous key has a dangerous value, or if
/// git cannot read the config.
fn oracle(repo: &Path) -> bool {
    let output = git(
        repo,
        &["config", "--includes", "--get-regexp", "-z", ORACLE_REGEX],
    );
    if !output.status.success() {
        // 1 means no key matched; anything else is git refusing the file.
        return output.status.code() != Some(1);
    }
    output
        .stdout
        .split(|b| *b == 0)
        .filter(|e| !e.is_empty())
        .any(|entry| {
            let entry = String::from_utf8_lossy(entry);
            let (key, value) = entry.split_once('\n').unwrap_or((&entry, "true"));
            let (section, rest) = key.split_once('.').unwrap_or((key, ""));
            let (sub, name) = match rest.rsplit_once('.') {
                Some((s, n)) => (Some(s), n),
                None => (None, rest),
            };
            dangerous_key(section, sub, name, value)
        })
}

#[test]
fn git_5_the_guard_agrees_with_git_on_generated_configs() {
    if !git_available() {
        wavesh_testkit::missing_prerequisite(
            "git, for the guard to agree with",
            "apt-get install git; scripts/test does it as root",
        );
        return;
    }
    let s = Scratch::new("gitcfg");
    let repo = s.work.clone();
    assert!(git(&repo, &["init", "-q", "-b", "main"]).status.success());
    let base = std::fs::read_to_string(repo.join(".git/config")).unwrap();
    let cases = std::env::var("WAVESH_GIT_CONFIG_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1200usize);
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let (mut unsafe_count, mut safe_count, mut broken) = (0, 0, 0);
    let mut disagreements = Vec::new();
    for case in 0..cases {
        let _ = std::fs::remove_file(repo.join(".git/inc.cfg"));
        let _ = std::fs::remove_file(repo.join(".git/config.worktree"));
        let mut main = String::new();
        let mut include = String::new();
        let mut worktree = String::new();
        if rng.chance(10) {
            main.push('\u{feff}');
        }
        main.push_str(&base);
        for _ in 0..rng.below(4) {
            let entry = BENIGN[rng.below(BENIGN.len())];
            let text = render(&mut rng, entry);
            main.push_str(&text);
        }
        for _ in 0..rng.below(3) {
            let entry = DANGEROUS[rng.below(DANGEROUS.len())];
            let text = render(&mut rng, entry);
            match rng.below(5) {
                0 => include.push_str(&text),
                1 => worktree.push_str(&text),
                _ => main.push_str(&text),
            }
        }
        if !include.is_empty() {
            std::fs::write(repo.join(".git/inc.cfg"), &include).unwrap();
            let gitdir = repo.join(".git").display().to_string();
            main.push_str(
                match rng.below(4) {
                    0 => "[include]\n\tpath = inc.cfg\n".to_owned(),
                    1 => format!("[includeIf \"gitdir:{gitdir}\"]\n\tpath = inc.cfg\n"),
                    2 => "[includeIf \"gitdir:/nowhere/\"]\n\tpath = inc.cfg\n".to_owned(),
                    _ => "[includeIf \"onbranch:main\"]\n\tpath = inc.cfg\n".to_owned(),
                }
                .as_str(),
            );
        }
        if !worktree.is_empty() {
            std::fs::write(repo.join(".git/config.worktree"), &worktree).unwrap();
            if rng.chance(70) {
                main.push_str("[extensions]\n\tworktreeConfig = true\n");
                main = main.replace("repositoryformatversion = 0", "repositoryformatversion = 1");
            }
        }
        if rng.chance(2) {
            // Over 1 MiB of harmless config before the rest.
            let padding =
                "[user]\n\tname = padding padding padding padding padding\n".repeat(20_000);
            main = format!("{padding}{main}");
        }
        if rng.chance(4) {
            main.push_str("[core\n\tbroken = yes\n");
        }
        if rng.chance(10) {
            main = main.replace('\n', "\r\n");
        }
        std::fs::write(repo.join(".git/config"), &main).unwrap();
        let expected_unsafe = oracle(&repo);
        let verdict = git_context(&repo, &[], &RealFs);
        let guard_unsafe = matches!(verdict, GitContext::Unsafe(_));
        if let GitContext::Unsafe(why) = &verdict
            && why.contains("could not read")
        {
            broken += 1;
        }
        if expected_unsafe {
            unsafe_count += 1;
        } else {
            safe_count += 1;
        }
        if expected_unsafe != guard_unsafe {
            disagreements.push(format!(
                "case {case}: git says unsafe={expected_unsafe}, guard {verdict:?}\n{main:.2000}"
            ));
        }
    }
    eprintln!(
        "{cases} generated configs: {unsafe_count} unsafe, {safe_count} safe, {broken} that git refuses to read"
    );
    assert!(
        disagreements.is_empty(),
        "{} disagreements:\n{}",
        disagreements.len(),
        disagreements[..disagreements.len().min(3)].join("\n---\n")
    );
    assert!(
        unsafe_count > cases / 5 && safe_count > cases / 10,
        "the generator covers both verdicts"
    );
}

#[test]
fn git_5_linked_worktrees_submodules_and_hooks() {
    if !git_available() {
        wavesh_testkit::missing_prerequisite(
            "git, for the guard to agree with",
            "apt-get install git; scripts/test does it as root",
        );
        return;
    }
    let s = Scratch::new("gitwt");
    let repo = s.work.join("main");
    std::fs::create_dir_all(&repo).unwrap();
    assert!(git(&repo, &["init", "-q", "-b", "main"]).status.success());
    std::fs::write(repo.join("f"), "x").unwrap();
    assert!(git(&repo, &["add", "f"]).status.success());
    assert!(git(&repo, &["commit", "-qm", "x"]).status.success());
    assert_eq!(git_context(&repo, &[], &RealFs), GitContext::Safe);
    // A linked worktree reads the common config and its own config.worktree.
    let linked = s.work.join("linked");
    assert!(
        git(&repo, &["worktree", "add", "-q", linked.to_str().unwrap()])
            .status
            .success()
    );
    assert_eq!(git_context(&linked, &[], &RealFs), GitContext::Safe);
    assert!(
        git(&repo, &["config", "extensions.worktreeConfig", "true"])
            .status
            .success()
    );
    assert!(
        git(&linked, &["config", "--worktree", "core.fsmonitor", "./x"])
            .status
            .success()
    );
    assert!(
        matches!(git_context(&linked, &[], &RealFs), GitContext::Unsafe(why) if why.contains("fsmonitor"))
    );
    assert_eq!(git_context(&repo, &[], &RealFs), GitContext::Safe);
    // Config in the common directory reaches the linked worktree.
    assert!(
        git(
            &linked,
            &["config", "--worktree", "--unset", "core.fsmonitor"]
        )
        .status
        .success()
    );
    assert!(
        git(&repo, &["config", "core.pager", "./p"])
            .status
            .success()
    );
    assert!(
        matches!(git_context(&linked, &[], &RealFs), GitContext::Unsafe(why) if why.contains("pager"))
    );
    assert!(
        git(&repo, &["config", "--unset", "core.pager"])
            .status
            .success()
    );
    // A submodule's own config.
    let module = repo.join(".git/modules/sub");
    std::fs::create_dir_all(&module).unwrap();
    assert!(git(&module, &["init", "-q", "--bare"]).status.success());
    assert_eq!(git_context(&repo, &[], &RealFs), GitContext::Safe);
    assert!(
        git(&module, &["config", "diff.x.textconv", "./conv"])
            .status
            .success()
    );
    assert!(
        matches!(git_context(&repo, &[], &RealFs), GitContext::Unsafe(why) if why.contains("submodule"))
    );
    std::fs::remove_dir_all(&module).unwrap();
    // A hook that `git status` fires.
    std::fs::write(repo.join(".git/hooks/post-index-change"), "#!/bin/sh\n").unwrap();
    assert!(
        matches!(git_context(&repo, &[], &RealFs), GitContext::Unsafe(why) if why.contains("post-index-change"))
    );
}
