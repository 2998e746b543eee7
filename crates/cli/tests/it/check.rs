//! `wavesh check`: snapshots of the JSON verdict for representative commands, and the
//! JSON-lines mode.

use std::io::Write;
use std::process::Stdio;

use crate::util::{Run, Workspace};

const COMMANDS: &[&str] = &[
    "ls -la",
    "git log --oneline -20",
    "git status && git diff --stat",
    "rg -n foo src",
    "sed -n '1,40p' src/main.rs",
    "find . -name '*.rs' -not -path './target/*'",
    "jq '.version' package.json",
    "cd src && grep -rn TODO .",
    "cat README.md | head -50",
    "LANG=C sort -u names.txt 2>/dev/null",
    "rm -rf build",
    "echo hi > out.txt",
    "ls $(pwd)",
    "cat ~/.ssh/id_rsa",
    "sed -i 's/a/b/' f",
    "sed -n '1e id' /etc/hosts",
    "find . -exec rm {} \\;",
    "rg --pre=sh foo",
    "sort --outp=x in.txt",
    "git -c core.pager=sh log",
    "git log --format=%G?",
    "git branch new-feature",
    "PATH=/tmp ls",
    "ls\u{a0}-la",
    "jq -n '$ENV'",
    "xargs rm < list.txt",
    "gh pr view https://evil.example/x",
    "(cd x && ls)",
    "cat <<EOF\n$(id)\nEOF",
    "npm install",
];

#[test]
fn ro_7_check_json_snapshots() {
    let ws = Workspace::new();
    let mut out = String::new();
    for command in COMMANDS {
        let mut cmd = ws.wavesh();
        cmd.env("HOME", "/home/dev")
            .args(["check", "--json", "--"])
            .arg(command);
        let run = Run::of(cmd);
        let value: serde_json::Value =
            serde_json::from_slice(&run.output.stdout).unwrap_or_else(|e| panic!("{e}\n{run}"));
        let expected_code = if value["read_only"] == true { 0 } else { 1 };
        assert_eq!(run.code(), Some(expected_code), "{run}");
        out.push_str(&format!(
            "$ {command}\n{}\n\n",
            serde_json::to_string_pretty(&value).unwrap()
        ));
    }
    insta::assert_snapshot!("check_json", out);
}

/// RULE: `--settings` rules decide; JSON carries the decision, the rule and suggestions.
#[test]
fn rule_5_check_with_settings() {
    let ws = Workspace::new();
    let settings = ws.root.join("rules.json");
    std::fs::write(
        &settings,
        r#"{"permissions": {"allow": ["Bash(npm test:*)"], "deny": ["Bash(rm:*)"]}}"#,
    )
    .unwrap();
    let verdict = |command: &str, mode: &str| -> serde_json::Value {
        let mut cmd = ws.wavesh();
        cmd.env("HOME", &ws.private)
            .args(["check", "--json", "--mode", mode, "--settings"])
            .arg(&settings)
            .arg("--")
            .arg(command);
        let run = Run::of(cmd);
        serde_json::from_slice(&run.output.stdout).unwrap_or_else(|e| panic!("{e}\n{run}"))
    };
    let allow = verdict("cd app && npm test", "default");
    assert_eq!(allow["decision"], "allow");
    assert_eq!(
        allow["matched_rules"],
        serde_json::json!(["Bash(npm test:*)"])
    );
    let deny = verdict("timeout 5 rm -rf x", "default");
    assert_eq!(deny["decision"], "deny");
    let ask = verdict("npm run build", "default");
    assert_eq!(ask["decision"], "ask");
    assert_eq!(
        ask["suggestions"],
        serde_json::json!(["Bash(npm run build:*)"])
    );
    assert_eq!(verdict("npm test", "plan")["decision"], "ask");
    let mut bad = ws.wavesh();
    std::fs::write(ws.root.join("bad.json"), "{\"permissions\": [}").unwrap();
    bad.args(["check", "--settings"])
        .arg(ws.root.join("bad.json"))
        .args(["--", "ls"]);
    let run = Run::of(bad);
    assert_eq!(run.code(), Some(2), "{run}");
    assert!(run.stderr().contains("bad.json:1:"), "{run}");
}

#[test]
fn ro_7_check_jsonl_one_verdict_per_line() {
    let ws = Workspace::new();
    let mut cmd = ws.wavesh();
    cmd.args(["check", "--jsonl"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"\"ls -la\"\n\"git push\"\n\"cat <<'E'\\nx\\nE\"\nnot-json\n")
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0]["read_only"], true);
    assert_eq!(lines[1]["read_only"], false);
    assert!(
        lines[1]["reasons"][0]
            .as_str()
            .unwrap()
            .contains("git push")
    );
    assert_eq!(lines[2]["read_only"], true);
    assert_eq!(lines[3]["read_only"], false);
    assert!(lines[3]["error"].as_str().unwrap().contains("JSON string"));
}

/// RO-16: lines that name the checker's own stdin (the JSONL stream) are judged without
/// reading it, so every line that follows is still answered, in order.
#[test]
fn ro_16_check_jsonl_answers_every_line_whatever_it_names() {
    let ws = Workspace::new();
    let mut cmd = ws.wavesh();
    cmd.args(["check", "--jsonl"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let named = [
        "sed -f /dev/stdin x",
        "sed -f /dev/fd/0 x",
        "sed -f /proc/self/fd/0 x",
        "awk -f /dev/stdin x",
        "grep -f /proc/self/fd/0 x",
        "ls -la",
    ];
    let mut input = String::new();
    for n in 0..120 {
        input.push_str(&serde_json::to_string(named[n % named.len()]).unwrap());
        input.push('\n');
    }
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines.len(),
        120,
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    for (n, line) in lines.iter().enumerate() {
        assert_eq!(line["command"], named[n % named.len()], "line {n}");
        // What the checker cannot read, or a descriptor's link, is not approved.
        let read_only = n % named.len() == 5;
        assert_eq!(line["read_only"], read_only, "line {n}: {line}");
    }
}
