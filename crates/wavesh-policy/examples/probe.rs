//! Prints the verdict for each argument (a quick way to see why a command is refused).
//! `--jsonl FILE` reads `{"command": ...}` lines instead; `--text` judges the text alone
//! (an empty file system, as the corpus tests do) instead of the real file system.
#![expect(clippy::print_stdout, reason = "a probe program")]

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let text_only = args.first().is_some_and(|a| a == "--text");
    if text_only {
        args.remove(0);
    }
    let mut ctx = wavesh_policy::ClassifyContext {
        home: "/home/dev".into(),
        cwd: "/work/app".into(),
        ..Default::default()
    };
    if text_only {
        // The corpus test's hostile project.
        ctx.fs = wavesh_policy::SharedFs::new(wavesh_policy::git_guard::MemoryFs::with(&[
            "/work/app/Cargo.toml",
            "/work/app/README.md",
            "/work/app/src/main.rs",
            "/work/app/src/lib.rs",
            "/work/app/docs/guide.md",
            "/work/app/a.txt",
            "/work/app/.env",
            "/work/app/.gitignore",
            "/home/dev/.ssh/id_rsa",
            "/home/dev/.aws/credentials",
            "/home/dev/.netrc",
            "/home/dev/.bash_history",
            "/proc/1/environ",
            "/proc/self/environ",
            "/work/app/-fprint",
            "/work/app/--output=x",
            "/work/app/-Osh",
            "/work/app/-opwned",
            "/work/app/b.txt",
            "/work/app/config/prod.pem",
            "/work/app/x.d/",
            "/work/app/-.d/",
        ]));
    }
    let commands: Vec<String> = if args.first().is_some_and(|a| a == "--jsonl") {
        let text = std::fs::read_to_string(&args[1]).expect("the file reads");
        text.lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter_map(|v| v["command"].as_str().map(str::to_owned))
            .collect()
    } else {
        args
    };
    for command in commands {
        let verdict = wavesh_policy::check(&command, wavesh_policy::Dialect::Bash, &ctx);
        println!("{command:?} => {} {:?}", verdict.read_only, verdict.reasons);
    }
}
