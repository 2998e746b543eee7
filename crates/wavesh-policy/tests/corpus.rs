//! The corpus: commands that must never be auto-approved, each with its source, and
//! commands coding agents really run that should be (RO, PARSE, GIT).

use std::path::PathBuf;

use wavesh_policy::git_guard::MemoryFs;
use wavesh_policy::{ClassifyContext, Dialect, SharedFs, check};

/// A project as agents meet it: sources and docs, and a home with credentials and rustup
/// set up. (With a `.env` in the project, recursive reads ask: see docs/readonly.md.)
const PROJECT: &[&str] = &[
    "/home/dev/.rustup/settings.toml",
    "/work/app/Cargo.toml",
    "/work/app/README.md",
    "/work/app/src/main.rs",
    "/work/app/src/lib.rs",
    "/work/app/docs/guide.md",
    "/work/app/a.txt",
    "/work/app/.gitignore",
    "/home/dev/.ssh/id_rsa",
    "/home/dev/.aws/credentials",
    "/home/dev/.netrc",
    "/home/dev/.bash_history",
    "/proc/1/environ",
    "/proc/self/environ",
];

/// The same project after an attacker committed files named like options.
const HOSTILE: &[&str] = &[
    "/work/app/.env",
    "/work/app/-fprint",
    "/work/app/--output=x",
    "/work/app/-Osh",
    "/work/app/-opwned",
    "/work/app/b.txt",
    "/work/app/config/prod.pem",
    "/work/app/x.d/",
    "/work/app/-.d/",
];

fn context_with(paths: &[&str]) -> ClassifyContext {
    ClassifyContext {
        home: PathBuf::from("/home/dev"),
        cwd: PathBuf::from("/work/app"),
        fs: SharedFs::new(MemoryFs::with(paths)),
        ..ClassifyContext::default()
    }
}

/// The read-only set runs in the plain project.
fn context() -> ClassifyContext {
    context_with(PROJECT)
}

/// The must-not set runs in the hostile one.
fn hostile_context() -> ClassifyContext {
    let paths: Vec<&str> = PROJECT.iter().chain(HOSTILE).copied().collect();
    context_with(&paths)
}

fn entries(file: &str) -> Vec<serde_json::Value> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(file);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}")))
        .collect()
}

/// Read-only commands that are deliberately not approved, with the reason.
const NOT_APPROVED: &[(&str, &str)] = &[
    (
        "env | head",
        "env prints every variable, tokens included: it is not on the read-only list",
    ),
    (
        "npm --version",
        "npm writes its log and may check for updates over the network (RO-13)",
    ),
    (
        "npm -v",
        "npm writes its log and may check for updates over the network (RO-13)",
    ),
    (
        "npm ls",
        "npm writes its log and may check for updates over the network (RO-13)",
    ),
    (
        "npm ls --depth=0",
        "npm writes its log and may check for updates over the network (RO-13)",
    ),
    (
        "npm list --all",
        "npm writes its log and may check for updates over the network (RO-13)",
    ),
    (
        "pnpm --version",
        "pnpm reads project config and checks for updates (RO-13)",
    ),
    (
        "yarn --version",
        "yarn 2+ runs the project's yarnPath and plugins (RO-13)",
    ),
    (
        "pip --version",
        "pip is python code that loads site packages and config (RO-13)",
    ),
    (
        "docker --version",
        "the docker CLI loads ~/.docker/config.json, on the secret list (RO-13)",
    ),
    (
        "kubectl version",
        "kubectl version contacts the server and may run kubeconfig exec plugins (RO-13)",
    ),
    (
        "hostname -f",
        "hostname -f resolves the name over the network (RO-14: the behaviour check saw it connect)",
    ),
    (
        "java -version",
        "the JVM writes its performance data (/tmp/hsperfdata_*) even for a version query (RO-13, seen by the behaviour check)",
    ),
    (
        "cat list | xargs head -1",
        "the names come from a file's contents, which could name any path (RO-9)",
    ),
];

#[test]
fn corpus_every_must_not_case_is_rejected() {
    let cases = entries("must_not.jsonl");
    assert!(cases.len() >= 300, "{} cases", cases.len());
    let classed = cases
        .iter()
        .filter(|c| c["class"].as_u64().is_some_and(|n| (1..=10).contains(&n)))
        .count();
    assert!(classed >= 200, "{classed} cases carry an attack class");
    let mut approved = Vec::new();
    for case in &cases {
        let command = case["command"].as_str().unwrap();
        assert!(
            case["source"].as_str().is_some_and(|s| !s.is_empty()),
            "{command}: no source"
        );
        let verdict = check(command, Dialect::Bash, &hostile_context());
        if verdict.read_only {
            approved.push(command.to_owned());
        } else {
            assert!(
                !verdict.reasons.is_empty() && verdict.reasons.iter().all(|r| !r.text.is_empty()),
                "{command}: no reason (RO-7)"
            );
        }
    }
    assert!(
        approved.is_empty(),
        "approved but must not be: {approved:#?}"
    );
}

#[test]
fn corpus_read_only_commands_are_approved() {
    let cases = entries("read_only.jsonl");
    assert!(cases.len() >= 300, "{} cases", cases.len());
    let mut refused = Vec::new();
    for case in &cases {
        let command = case["command"].as_str().unwrap();
        let verdict = check(command, Dialect::Bash, &context());
        let listed = NOT_APPROVED.iter().any(|(c, _)| *c == command);
        if !verdict.read_only && !listed {
            refused.push(format!(
                "{command}  =>  {}",
                wavesh_policy::join_reasons(&verdict.reasons, "; ")
            ));
        }
        if verdict.read_only && listed {
            panic!("{command} is listed as not approved but is approved");
        }
    }
    let approved = cases.len() - refused.len() - NOT_APPROVED.len();
    let rate = approved as f64 / cases.len() as f64;
    assert!(
        refused.is_empty(),
        "refused ({} of {}, {:.1}% approved):\n{}",
        refused.len(),
        cases.len(),
        rate * 100.0,
        refused.join("\n")
    );
    assert!(rate >= 0.9, "approval rate {rate:.3}");
}
