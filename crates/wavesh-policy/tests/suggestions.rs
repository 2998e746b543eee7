//! "Always allow" suggestions for common commands, pinned (PREFIX-1..4).

use std::path::PathBuf;

use wavesh_policy::settings::Settings;
use wavesh_policy::{ClassifyContext, Dialect, Outcome, PermissionMode, decide};

const COMMANDS: &[&str] = &[
    "npm run build",
    "npm run test -- --watch=false",
    "npm install lodash",
    "npm test",
    "pnpm run lint",
    "yarn run dev",
    "bun run start",
    "npx prettier --write .",
    "git commit -m \"x\"",
    "git push origin main",
    "git checkout -b feature",
    "git add -A",
    "git rebase main",
    "docker compose up -d",
    "docker build -t app .",
    "docker run --rm -it ubuntu bash",
    "kubectl get pods -n x",
    "kubectl apply -f deploy.yaml",
    "cargo test -p foo",
    "cargo build --release",
    "cargo clippy --all-targets",
    "go test ./...",
    "go build ./cmd/app",
    "python -m pytest tests",
    "python3 -m pip install requests",
    "pytest -x tests/unit",
    "pip install -r requirements.txt",
    "aws s3 ls s3://b",
    "az group list",
    "gcloud compute instances list",
    "make test",
    "just deploy",
    "deno task dev",
    "terraform plan",
    "helm install app ./chart",
    "brew install jq",
    "sudo apt-get install -y jq",
    "curl -sSL https://example.com/install.sh",
    "mkdir -p build/out",
    "touch notes.md",
    "rm -rf build",
    "chmod +x script.sh",
    "bash -c 'echo hi'",
    "./scripts/deploy.sh prod",
    "LANG=C npm test",
    "cd app && npm run build && npm test",
    "npm a; yarn b; cargo c; make d; pip e; go f",
];

#[test]
fn prefix_suggestions_for_common_commands() {
    let ctx = ClassifyContext {
        home: PathBuf::from("/home/dev"),
        cwd: PathBuf::from("/work/app"),
        fs: wavesh_policy::SharedFs::new(wavesh_policy::git_guard::EmptyFs),
        ..ClassifyContext::default()
    };
    let settings = Settings::default();
    let mut out = String::new();
    for command in COMMANDS {
        let analysis = wavesh_parse::analyze(command, Dialect::Bash);
        let decision = decide(command, &analysis, &settings, PermissionMode::Default, &ctx);
        assert_eq!(decision.outcome, Outcome::Ask, "{command}");
        out.push_str(&format!(
            "{command}\n  -> {}\n",
            decision.suggestions.join("  ")
        ));
    }
    insta::assert_snapshot!("suggestions", out);
}

/// PREFIX-2: inline code, a risky option and a secret read get the exact command (or a
/// narrower prefix that still matches it), never a rule for the whole program.
#[test]
fn prefix_2_suggestions_never_widen_to_arbitrary_code_or_secrets() {
    let ctx = ClassifyContext {
        home: PathBuf::from("/home/dev"),
        cwd: PathBuf::from("/work/app"),
        fs: wavesh_policy::SharedFs::new(wavesh_policy::git_guard::EmptyFs),
        ..ClassifyContext::default()
    };
    let settings = Settings::default();
    let suggest = |command: &str| {
        let analysis = wavesh_parse::analyze(command, Dialect::Bash);
        decide(command, &analysis, &settings, PermissionMode::Default, &ctx).suggestions
    };
    for (command, expected) in [
        ("python3 -c \"print(1)\"", "Bash(python3 -c \"print(1)\")"),
        (
            "node -e 'process.exit(0)'",
            "Bash(node -e 'process.exit(0)')",
        ),
        ("find . -exec rm {} \\;", "Bash(find . -exec rm {} \\;)"),
        (
            "find . -name '*.tmp' -delete",
            "Bash(find . -name '*.tmp' -delete)",
        ),
        ("cat ~/.ssh/id_rsa", "Bash(cat ~/.ssh/id_rsa)"),
        ("cat .env", "Bash(cat .env)"),
        ("grep -r token ~/.aws", "Bash(grep -r token ~/.aws)"),
        ("python3 manage.py migrate", "Bash(python3 manage.py:*)"),
    ] {
        assert_eq!(suggest(command), vec![expected.to_owned()], "{command}");
    }
}
