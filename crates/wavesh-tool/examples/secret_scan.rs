//! What the sandbox's search for secrets costs on a real tree (SBX-2): the read rules of
//! a command whose workspace is `TREE`, built with the default secret list, with and
//! without the workspace scan for secret names.
//!
//! `cargo run --release -p wavesh-tool --example secret_scan -- TREE [RUNS]`
//!
//! Three figures per case: the first build (every directory listed), a build again after
//! a change in the tree's root (the cache is invalidated, as after a command that added a
//! file), and a reused build (the cache checked: one stat per scanned directory).
#![expect(
    clippy::print_stdout,
    clippy::unwrap_used,
    reason = "a benchmark program"
)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use wavesh_exec::sandbox::{CommandFiles, Level, Plan, SandboxConfig, prepare};
use wavesh_tool::SandboxSettings;

fn median(mut samples: Vec<Duration>) -> f64 {
    samples.sort();
    samples[samples.len() / 2].as_secs_f64() * 1000.0
}

fn main() {
    let tree = PathBuf::from(std::env::args().nth(1).expect("a tree to scan"));
    let runs: usize = std::env::args().nth(2).map_or(200, |n| n.parse().unwrap());
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let secrets = SandboxSettings::default().secrets(home.as_deref());
    let private = std::env::temp_dir().join(format!("wavesh-scan-{}", std::process::id()));
    std::fs::create_dir_all(&private).unwrap();
    let files = CommandFiles {
        output: private.join("out"),
        cwd_file: None,
        tmp_dir: private.join("tmp"),
        cwd: tree.clone(),
    };
    // The tree itself is left alone: a second, empty scanned tree of the benchmark's
    // own gets a file added and removed, which invalidates the cache as a change in the
    // workspace would.
    let touch = private.join("touched");
    std::fs::create_dir_all(&touch).unwrap();
    for (name, roots) in [
        ("no workspace scan", vec![]),
        ("workspace scanned", vec![tree.clone()]),
    ] {
        for level in [Level::ReadOnly, Level::WorkspaceWrite] {
            let mut roots: Vec<PathBuf> = roots.clone();
            roots.push(touch.clone());
            let config = SandboxConfig {
                roots,
                secrets: secrets.clone(),
                ..SandboxConfig::default()
            };
            let build = |config: &SandboxConfig| {
                let plan = Plan::new(level, config, &files, false);
                let start = Instant::now();
                let prepared = prepare(plan, false, true).unwrap();
                (start.elapsed(), prepared)
            };
            let (first, _) = build(&config);
            let mut rebuilt = Vec::new();
            let mut reused = Vec::new();
            for i in 0..runs {
                let marker = touch.join(format!("f{i}"));
                std::fs::write(&marker, "").unwrap();
                rebuilt.push(build(&config).0);
                std::fs::remove_file(&marker).unwrap();
                // A directory changed within the last 10 ms is listed again every time
                // (its mtime may not show a further change): wait that out, then
                // settle the cache on the tree as it is now.
                std::thread::sleep(Duration::from_millis(60));
                build(&config);
                reused.push(build(&config).0);
            }
            println!(
                "{name:18} {:16} first {:7.3} ms, rebuilt {:7.3} ms, reused {:6.3} ms (median of {runs})",
                level.name(),
                first.as_secs_f64() * 1000.0,
                median(rebuilt),
                median(reused)
            );
        }
    }
    println!("directories in the scanned tree: {}", count_dirs(&tree));
    std::fs::remove_dir_all(&private).unwrap();
}

/// Every directory of the tree, ignored ones included, for scale.
fn count_dirs(root: &Path) -> usize {
    let mut count = 0;
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        count += 1;
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(entry.path());
            }
        }
    }
    count
}
