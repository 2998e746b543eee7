//! Classification speed over the corpus (criterion), beside tree-sitter-bash alone.
//! Per-command median and p99 come from `bench/classify.sh` (the `classify_stats`
//! example); criterion here gives stable totals for regressions.

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use wavesh_policy::{ClassifyContext, Dialect, check};

fn corpus() -> Vec<String> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    ["read_only.jsonl", "must_not.jsonl"]
        .iter()
        .flat_map(|file| {
            std::fs::read_to_string(dir.join(file))
                .unwrap_or_default()
                .lines()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(&line).ok())
        .filter_map(|value| value["command"].as_str().map(str::to_owned))
        .collect()
}

fn benches(c: &mut Criterion) {
    let commands = corpus();
    let ctx = ClassifyContext {
        home: "/home/dev".into(),
        cwd: "/work/app".into(),
        fs: wavesh_policy::SharedFs::new(wavesh_policy::git_guard::EmptyFs),
        ..ClassifyContext::default()
    };
    c.bench_function("classify the whole corpus", |b| {
        b.iter(|| {
            for command in &commands {
                black_box(check(black_box(command), Dialect::Bash, &ctx));
            }
        });
    });
    c.bench_function("tree-sitter-bash parse of the whole corpus", |b| {
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&tree_sitter_bash::LANGUAGE.into())
            .expect("the grammar loads");
        b.iter(|| {
            for command in &commands {
                black_box(parser.parse(black_box(command), None));
            }
        });
    });
    c.bench_function("load the embedded command registry", |b| {
        b.iter(|| {
            black_box(wavesh_policy::registry::Registry::parse(black_box(
                wavesh_policy::registry::REGISTRY_SOURCE,
            )))
        });
    });
    c.bench_function("load the registry and look up git (first use)", |b| {
        b.iter(|| {
            let registry =
                wavesh_policy::registry::Registry::parse(wavesh_policy::registry::REGISTRY_SOURCE);
            black_box(registry.get(black_box("git")).is_some())
        });
    });
    let long = format!("grep -n {} src", "x".repeat(9_980));
    c.bench_function("classify a 10000-character command", |b| {
        b.iter(|| black_box(check(black_box(&long), Dialect::Bash, &ctx)));
    });
}

criterion_group!(classify, benches);
criterion_main!(classify);
