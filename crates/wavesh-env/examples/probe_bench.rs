//! Login-shell probe time with an empty rc file and with a 200-line one, for bash and zsh
//! (fake HOME each), median of N runs. Run by `bench/env-probe.sh`.
#![expect(
    clippy::print_stdout,
    clippy::unwrap_used,
    reason = "a benchmark program"
)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use wavesh_env::{ProbeConfig, probe};

fn rc_200_lines() -> String {
    let mut rc = String::new();
    for i in 0..200 {
        rc.push_str(&match i % 4 {
            0 => format!("export WAVESH_BENCH_{i}=value{i}\n"),
            1 => format!("alias a{i}='ls -la'\n"),
            2 => format!("f{i}() {{ echo {i}; }}\n"),
            _ => format!("[ -d /nonexistent{i} ] && export PATH=/nonexistent{i}:$PATH\n"),
        });
    }
    rc
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let runs: usize = std::env::args().nth(1).map_or(20, |n| n.parse().unwrap());
    for (shell, rc) in [("/bin/bash", ".bashrc"), ("/usr/bin/zsh", ".zshrc")] {
        if !std::path::Path::new(shell).exists() {
            println!("{shell}: not installed, skipped");
            continue;
        }
        for (label, text) in [("empty rc", String::new()), ("200-line rc", rc_200_lines())] {
            let home =
                std::env::temp_dir().join(format!("wavesh-probe-bench-{}", std::process::id()));
            std::fs::create_dir_all(&home).unwrap();
            std::fs::write(home.join(rc), &text).unwrap();
            let config = ProbeConfig {
                shell: Some(PathBuf::from(shell)),
                env: vec![
                    ("HOME".into(), home.display().to_string()),
                    ("PATH".into(), "/usr/bin:/bin".into()),
                ],
                ..ProbeConfig::from_process()
            };
            let mut samples: Vec<Duration> = Vec::with_capacity(runs);
            for _ in 0..runs {
                let start = Instant::now();
                let report = probe(&config).await;
                samples.push(start.elapsed());
                assert!(report.error.is_none(), "{report:?}");
            }
            samples.sort();
            println!(
                "{shell:14} {label:12} median {:>7.1} ms  (min {:.1}, max {:.1}, {runs} runs)",
                samples[runs / 2].as_secs_f64() * 1e3,
                samples[0].as_secs_f64() * 1e3,
                samples[runs - 1].as_secs_f64() * 1e3
            );
            std::fs::remove_dir_all(&home).unwrap();
        }
    }
}
