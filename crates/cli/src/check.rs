//! `wavesh check`: the read-only verdict and the permission decision of a command, for
//! people and scripts.

use std::io::BufRead;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use wavesh_policy::git_guard::{RealFs, git_context};
use wavesh_policy::paths::PathPolicy;
use wavesh_policy::settings::Settings;
use wavesh_policy::{ClassifyContext, Dialect, PermissionMode};

use crate::args::{CheckArgs, ShellArg};
use crate::printer;

/// Everything a verdict needs.
struct Judge {
    ctx: ClassifyContext,
    dialect: Dialect,
    settings: Settings,
    mode: PermissionMode,
}

pub fn run(args: &CheckArgs) -> anyhow::Result<ExitCode> {
    let cwd = match &args.cwd {
        Some(dir) => std::path::absolute(dir).context("cannot resolve --cwd")?,
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let env: Vec<(String, String)> = std::env::vars().collect();
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let settings = Settings::load(&cwd, home.as_deref(), &args.settings)?;
    let git = git_context(&cwd, &env, &RealFs);
    let ctx = ClassifyContext {
        home: home.clone().unwrap_or_default(),
        git_secrets: wavesh_policy::git_history::secret_files(&cwd, &git),
        git,
        paths: PathPolicy {
            confine_to_roots: args.confine,
            roots: vec![cwd.clone()],
        },
        cwd,
        ..ClassifyContext::default()
    };
    let judge = Judge {
        ctx,
        dialect: match args.shell {
            ShellArg::Bash => Dialect::Bash,
            ShellArg::Zsh => Dialect::Zsh,
        },
        settings,
        mode: args.mode,
    };
    if args.jsonl {
        return jsonl(&judge);
    }
    let value = judge.verdict_json(&args.command.join(" "));
    if args.json {
        printer::stdout_line(&value.to_string());
    } else {
        print_text(&value);
    }
    Ok(if value["decision"] == "allow" {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn jsonl(judge: &Judge) -> anyhow::Result<ExitCode> {
    let stdin = std::io::stdin();
    for (number, line) in stdin.lock().lines().enumerate() {
        let line = line.context("cannot read stdin")?;
        if line.trim().is_empty() {
            continue;
        }
        let value = match serde_json::from_str::<String>(&line) {
            Ok(command) => judge.verdict_json(&command),
            Err(error) => serde_json::json!({
                "line": number + 1,
                "error": format!("expected a JSON string (the command): {error}"),
                "read_only": false,
                "decision": "ask",
                "reasons": [format!("line {} is not a JSON string", number + 1)],
            }),
        };
        printer::stdout_line(&value.to_string());
    }
    Ok(ExitCode::SUCCESS)
}

impl Judge {
    fn verdict_json(&self, command: &str) -> serde_json::Value {
        let analysis = wavesh_parse::analyze(command, self.dialect);
        let verdict = wavesh_policy::classify(command, &analysis, &self.ctx);
        let decision =
            wavesh_policy::decide(command, &analysis, &self.settings, self.mode, &self.ctx);
        let capability = verdict.capability();
        let commands: Vec<Vec<&str>> = analysis.commands.iter().map(|c| c.args()).collect();
        // The read-only refusals explain an ask; a rule's reasons explain an allow or deny.
        let reasons: Vec<String> = if decision.matched_rules.is_empty() && !verdict.read_only {
            &verdict.reasons
        } else {
            &decision.reasons
        }
        .iter()
        .map(|r| r.text.clone())
        .collect();
        serde_json::json!({
            "command": command,
            "read_only": verdict.read_only,
            "decision": decision.outcome.word(),
            "reasons": reasons,
            "matched_rules": decision.matched_rules,
            "suggestions": decision.suggestions,
            "permission_safe": analysis.is_permission_safe(),
            "commands": commands,
            "capability": {
                "readOnly": capability.read_only,
                "needsApproval": capability.needs_approval,
                "riskLevel": capability.risk_level,
                "sideEffectScope": capability.side_effect_scope,
            },
        })
    }
}

fn print_text(value: &serde_json::Value) {
    let strings = |key: &str| -> Vec<String> {
        value[key]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect()
    };
    let headline = match (value["decision"].as_str(), value["read_only"] == true) {
        (Some("allow"), true) => "allow: read-only, runs without approval",
        (Some("allow"), false) => "allow",
        (Some("deny"), _) => "deny",
        _ => "ask: needs approval",
    };
    printer::stdout_line(headline);
    for reason in strings("reasons") {
        printer::stdout_line(&format!("  - {reason}"));
    }
    for rule in strings("matched_rules") {
        printer::stdout_line(&format!("  rule: {rule}"));
    }
    let suggestions = strings("suggestions");
    if !suggestions.is_empty() {
        printer::stdout_line(&format!("  always allow with: {}", suggestions.join("  ")));
    }
}
