//! Per-command classification time over the corpus: median and p99 of each command's
//! median over repeated runs, beside tree-sitter-bash parsing alone, and the time for a
//! 10000-character command. Run by `bench/classify.sh`.
#![expect(
    clippy::print_stdout,
    clippy::unwrap_used,
    reason = "a benchmark program"
)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use wavesh_policy::{ClassifyContext, Dialect, check};

fn corpus() -> Vec<String> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    ["read_only.jsonl", "must_not.jsonl"]
        .iter()
        .flat_map(|file| {
            std::fs::read_to_string(dir.join(file))
                .unwrap()
                .lines()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .map(|line| {
            serde_json::from_str::<serde_json::Value>(&line).unwrap()["command"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

fn per_command(commands: &[String], runs: usize, mut f: impl FnMut(&str)) -> Vec<Duration> {
    commands
        .iter()
        .map(|command| {
            let mut samples: Vec<Duration> = (0..runs)
                .map(|_| {
                    let start = Instant::now();
                    f(command);
                    start.elapsed()
                })
                .collect();
            samples.sort();
            samples[runs / 2]
        })
        .collect()
}

fn report(name: &str, mut times: Vec<Duration>) {
    times.sort();
    let pick = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    println!(
        "{name:42} median {:>8.2} µs   p99 {:>8.2} µs   max {:>8.2} µs",
        pick(0.5).as_secs_f64() * 1e6,
        pick(0.99).as_secs_f64() * 1e6,
        pick(1.0).as_secs_f64() * 1e6
    );
}

fn main() {
    let runs: usize = std::env::args().nth(1).map_or(31, |n| n.parse().unwrap());
    let commands = corpus();
    let ctx = ClassifyContext {
        home: "/home/dev".into(),
        cwd: "/work/app".into(),
        // The text alone: an empty file system (the figure comparable across machines).
        fs: wavesh_policy::SharedFs::new(wavesh_policy::git_guard::EmptyFs),
        ..ClassifyContext::default()
    };
    println!(
        "{} commands, {runs} runs each (per-command median)",
        commands.len()
    );
    report(
        "classify (analyze + rules + second parser)",
        per_command(&commands, runs, |c| {
            std::hint::black_box(check(c, Dialect::Bash, &ctx));
        }),
    );
    let first_stage = ClassifyContext {
        skip_second_opinion: true,
        ..ctx.clone()
    };
    report(
        "classify without the second parser",
        per_command(&commands, runs, |c| {
            std::hint::black_box(check(c, Dialect::Bash, &first_stage));
        }),
    );
    // The real file system, with this crate's directory as the workspace: globs expand,
    // symlinks resolve, recursive reads walk the tree, version queries look at PATH.
    let real = ClassifyContext {
        home: std::env::var_os("HOME").map(Into::into).unwrap_or_default(),
        cwd: PathBuf::from(env!("CARGO_MANIFEST_DIR")),
        ..ClassifyContext::default()
    };
    report(
        "classify on the real file system",
        per_command(&commands, runs, |c| {
            std::hint::black_box(check(c, Dialect::Bash, &real));
        }),
    );
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .unwrap();
    report(
        "tree-sitter-bash parse alone",
        per_command(&commands, runs, |c| {
            std::hint::black_box(parser.parse(c, None));
        }),
    );
    let long = format!("grep -n {} src", "x".repeat(9_980));
    let start = Instant::now();
    let verdict = check(&long, Dialect::Bash, &ctx);
    println!(
        "10000-character command: {:.2} ms (read_only: {})",
        start.elapsed().as_secs_f64() * 1e3,
        verdict.read_only
    );
}
