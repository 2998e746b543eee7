//! `wavesh check`: the read-only verdict of a command, for people and scripts.

use std::io::BufRead;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use wavesh_policy::git_guard::{RealFs, git_context};
use wavesh_policy::paths::PathPolicy;
use wavesh_policy::{ClassifyContext, Dialect};

use crate::args::{CheckArgs, ShellArg};
use crate::printer;

pub fn run(args: &CheckArgs) -> anyhow::Result<ExitCode> {
    let cwd = match &args.cwd {
        Some(dir) => std::path::absolute(dir).context("cannot resolve --cwd")?,
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let env: Vec<(String, String)> = std::env::vars().collect();
    let ctx = ClassifyContext {
        home: std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_default(),
        git: git_context(&cwd, &env, &RealFs),
        paths: PathPolicy {
            confine_to_roots: args.confine,
            roots: vec![cwd.clone()],
        },
        cwd,
        ..ClassifyContext::default()
    };
    let dialect = match args.shell {
        ShellArg::Bash => Dialect::Bash,
        ShellArg::Zsh => Dialect::Zsh,
    };
    if args.jsonl {
        return jsonl(&ctx, dialect);
    }
    let command = args.command.join(" ");
    let value = verdict_json(&command, dialect, &ctx);
    let read_only = value["read_only"] == true;
    if args.json {
        printer::stdout_line(&value.to_string());
    } else if read_only {
        printer::stdout_line("read-only: runs without approval");
    } else {
        printer::stdout_line("needs approval:");
        for reason in value["reasons"].as_array().into_iter().flatten() {
            printer::stdout_line(&format!("  - {}", reason.as_str().unwrap_or_default()));
        }
    }
    Ok(if read_only {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn jsonl(ctx: &ClassifyContext, dialect: Dialect) -> anyhow::Result<ExitCode> {
    let stdin = std::io::stdin();
    for (number, line) in stdin.lock().lines().enumerate() {
        let line = line.context("cannot read stdin")?;
        if line.trim().is_empty() {
            continue;
        }
        let value = match serde_json::from_str::<String>(&line) {
            Ok(command) => verdict_json(&command, dialect, ctx),
            Err(error) => serde_json::json!({
                "line": number + 1,
                "error": format!("expected a JSON string (the command): {error}"),
                "read_only": false,
                "reasons": [format!("line {} is not a JSON string", number + 1)],
            }),
        };
        printer::stdout_line(&value.to_string());
    }
    Ok(ExitCode::SUCCESS)
}

fn verdict_json(command: &str, dialect: Dialect, ctx: &ClassifyContext) -> serde_json::Value {
    let analysis = wavesh_parse::analyze(command, dialect);
    let verdict = wavesh_policy::classify(command, &analysis, ctx);
    let capability = verdict.capability();
    let commands: Vec<Vec<&str>> = analysis.commands.iter().map(|c| c.args()).collect();
    serde_json::json!({
        "command": command,
        "read_only": verdict.read_only,
        "reasons": verdict.reasons,
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
