//! Per-command overhead of wavesh against spawning `bash -c true` directly, interleaved.
//!
//! `cargo run --release -p wavesh-tool --example exec_overhead -- [RUNS] [WAVESH]`
//! (default 200 runs). Both sides start the same bash; wavesh adds the prelude, the
//! private output and cwd files, the process group, the cwd read-back and the model-text
//! rendering. Given the `wavesh` binary, a third column runs the same through the
//! per-session supervisor (Linux), as `wavesh mcp` and `wavesh run` do, and one column
//! per sandbox level through it (SBX): `read-only` and `workspace-write` (a TMPDIR,
//! the Landlock ruleset built around the secrets, the seccomp filter and, at
//! workspace-write, the mount namespace, per command). `read-only` starts the next
//! command's shell ahead of it, as sessions do; `read-only cold` does not, so every
//! call pays the whole start. Calls are 20 ms apart (`EXEC_OVERHEAD_PAUSE_MS`), as an
//! agent's are at least.
#![expect(
    clippy::print_stdout,
    clippy::unwrap_used,
    reason = "a benchmark program"
)]

use std::process::Stdio;
use std::time::{Duration, Instant};

use wavesh_exec::sandbox::Level;
use wavesh_tool::{BashInput, CallContext, SandboxSettings, Session, ToolConfig};

/// A session whose every command runs at `level`.
fn at_level(workspace: &std::path::Path, binary: &str, level: Level) -> Session {
    at_level_with(workspace, binary, level, true, true)
}

/// As [`at_level`]; `off_pid_namespace`: whether commands at `off` get a PID namespace
/// (SBX-7; where the supervisor runs as root); `start_ahead`: whether the next
/// read-only command's shell is started ahead of it.
fn at_level_with(
    workspace: &std::path::Path,
    binary: &str,
    level: Level,
    off_pid_namespace: bool,
    start_ahead: bool,
) -> Session {
    let config = ToolConfig {
        sandbox: SandboxSettings {
            level,
            read_only_level: false,
            ..SandboxSettings::default()
        },
        ..ToolConfig::default()
    };
    let mut builder = Session::builder(workspace);
    builder.supervisor(binary);
    #[cfg(target_os = "linux")]
    builder.supervisor_options(wavesh_exec::supervisor::Options {
        off_pid_namespace,
        ..wavesh_exec::supervisor::Options::default()
    });
    #[cfg(not(target_os = "linux"))]
    let _ = off_pid_namespace;
    builder
        .sandbox_level(config.sandbox.level)
        .no_claude_settings()
        .start_ahead(start_ahead)
        .config(config)
        .build()
        .unwrap()
}

fn median(samples: &mut [Duration]) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    samples[((samples.len() - 1) as f64 * p).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let runs: usize = std::env::args().nth(1).map_or(200, |n| n.parse().unwrap());
    // A fresh workspace of its own, as a project directory is: the system temporary
    // directory itself changes all the time on a shared machine, and the sandbox lists
    // the workspace again whenever it changed.
    // A git repository with a commit, as an agent's workspace is: the sandbox protects
    // `.git` and the tool reads git's state, which an empty directory would leave out.
    let workspace = std::env::temp_dir().join(format!("wavesh-bench-{}", std::process::id()));
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(workspace.join("README.md"), "bench\n").unwrap();
    for args in [
        &["init", "-q"][..],
        &["add", "README.md"],
        &[
            "-c",
            "user.name=b",
            "-c",
            "user.email=b@b",
            "commit",
            "-qm",
            "init",
        ],
    ] {
        let status = std::process::Command::new("git")
            .args(args)
            .current_dir(&workspace)
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    }
    // Unsandboxed: `true` is read-only and would otherwise run at `read-only`.
    let unsandboxed = ToolConfig {
        sandbox: SandboxSettings {
            read_only_level: false,
            ..SandboxSettings::default()
        },
        ..ToolConfig::default()
    };
    let session = Session::builder(&workspace)
        .sandbox_level(Level::Off)
        .no_claude_settings()
        .config(unsandboxed)
        .build()
        .unwrap();
    let binary = std::env::args().nth(2);
    let supervised = binary
        .as_deref()
        .map(|binary| at_level(&workspace, binary, Level::Off));
    // The first column: `off` in the host's PID namespace (what a user other than root
    // gets), beside the default `off` above (a PID namespace per command, as root).
    let levels: Vec<(&str, Session)> = binary
        .as_deref()
        .map(|binary| {
            vec![
                (
                    "off, host PID ns",
                    at_level_with(&workspace, binary, Level::Off, false, true),
                ),
                ("read-only", at_level(&workspace, binary, Level::ReadOnly)),
                (
                    "read-only cold",
                    at_level_with(&workspace, binary, Level::ReadOnly, true, false),
                ),
                (
                    "workspace-write",
                    at_level(&workspace, binary, Level::WorkspaceWrite),
                ),
            ]
        })
        // EXEC_OVERHEAD_LEVELS=read-only (a comma-separated list): only those columns, to
        // profile one level under strace or perf.
        .map(|levels| match std::env::var("EXEC_OVERHEAD_LEVELS") {
            Ok(only) => levels
                .into_iter()
                .filter(|(name, _)| only.split(',').any(|o| o == *name))
                .collect(),
            Err(_) => levels,
        })
        .unwrap_or_default();
    // An agent's calls are separated by the model's turn: this pause after every
    // measured call lets the work a call leaves behind (the next read-only shell
    // started ahead) finish, as it would, instead of landing in the next column's
    // time. EXEC_OVERHEAD_PAUSE_MS=0: back to back.
    let pause = Duration::from_millis(
        std::env::var("EXEC_OVERHEAD_PAUSE_MS").map_or(20, |ms| ms.parse().unwrap()),
    );
    let bash = session.shell().path().to_path_buf();
    let ctx = CallContext::default();
    // Warm-up: page cache, first-spawn costs.
    for _ in 0..10 {
        session.bash(BashInput::new("true"), &ctx).await.unwrap();
        if let Some(supervised) = &supervised {
            supervised.bash(BashInput::new("true"), &ctx).await.unwrap();
        }
        tokio::process::Command::new(&bash)
            .args(["-c", "true"])
            .status()
            .await
            .unwrap();
    }
    let (mut direct, mut wavesh) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    let mut through_supervisor = Vec::with_capacity(runs);
    let mut level_runs: Vec<Vec<Duration>> = levels.iter().map(|_| Vec::new()).collect();
    for _ in 0..runs {
        let start = Instant::now();
        let status = tokio::process::Command::new(&bash)
            .args(["-c", "true"])
            .current_dir(&workspace)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .await
            .unwrap();
        direct.push(start.elapsed());
        assert!(status.success());
        tokio::time::sleep(pause).await;

        let start = Instant::now();
        let result = session.bash(BashInput::new("true"), &ctx).await.unwrap();
        wavesh.push(start.elapsed());
        assert_eq!(result.exit_code, Some(0));
        tokio::time::sleep(pause).await;

        if let Some(supervised) = &supervised {
            let start = Instant::now();
            let result = supervised.bash(BashInput::new("true"), &ctx).await.unwrap();
            through_supervisor.push(start.elapsed());
            assert_eq!(result.exit_code, Some(0));
            tokio::time::sleep(pause).await;

            for ((_, session), samples) in levels.iter().zip(&mut level_runs) {
                let start = Instant::now();
                let result = session.bash(BashInput::new("true"), &ctx).await.unwrap();
                samples.push(start.elapsed());
                assert_eq!(result.exit_code, Some(0), "{}", result.text);
                tokio::time::sleep(pause).await;
            }
        }
    }
    let (d, w) = (median(&mut direct), median(&mut wavesh));
    println!(
        "runs: {runs} each, interleaved, {} ms apart; shell: {}",
        pause.as_millis(),
        bash.display()
    );
    println!(
        "bash -c true, spawned directly: median {:.3} ms, p90 {:.3} ms",
        ms(d),
        ms(percentile(&mut direct, 0.9))
    );
    println!(
        "wavesh Session::bash(\"true\"):   median {:.3} ms, p90 {:.3} ms",
        ms(w),
        ms(percentile(&mut wavesh, 0.9))
    );
    println!(
        "added per command: {:.3} ms (ratio {:.2})",
        ms(w) - ms(d),
        w.as_secs_f64() / d.as_secs_f64()
    );
    if !through_supervisor.is_empty() {
        let s = median(&mut through_supervisor);
        println!(
            "wavesh through the supervisor:   median {:.3} ms, p90 {:.3} ms",
            ms(s),
            ms(percentile(&mut through_supervisor, 0.9))
        );
        println!(
            "added per command with the supervisor: {:.3} ms (ratio {:.2}); the supervisor itself: {:.3} ms",
            ms(s) - ms(d),
            s.as_secs_f64() / d.as_secs_f64(),
            ms(s) - ms(w)
        );
        let host_ns = level_runs.first_mut().map(|samples| median(samples));
        for ((level, _), samples) in levels.iter().zip(&mut level_runs) {
            let m = median(samples);
            println!(
                "{:24} (supervisor): median {:.3} ms, p90 {:.3} ms; over off: {:.3} ms; over off in the host's PID namespace: {:.3} ms",
                level,
                ms(m),
                ms(percentile(samples, 0.9)),
                ms(m) - ms(s),
                host_ns.map_or(0.0, |h| ms(m) - ms(h))
            );
        }
        println!(
            "off's PID namespace (SBX-7; {:?}): {:.3} ms",
            wavesh_exec::sandbox::off_pid_namespace(),
            host_ns.map_or(0.0, |h| ms(s) - ms(h))
        );
        println!("machine: {:?}", wavesh_exec::sandbox::support());
        // Back to back: each column's calls one after the other with nothing between,
        // so a call to `read-only` meets the start ahead of the one before still in
        // progress and waits for it: the worst case of starting ahead.
        let mut columns: Vec<(&str, &Session)> = vec![("off", supervised.as_ref().unwrap())];
        columns.extend(
            levels
                .iter()
                .filter(|(name, _)| name.starts_with("read-only"))
                .map(|(name, session)| (*name, session)),
        );
        let mut back_to_back = Vec::new();
        for (name, session) in columns {
            let mut samples = Vec::with_capacity(runs);
            for _ in 0..runs {
                let start = Instant::now();
                let result = session.bash(BashInput::new("true"), &ctx).await.unwrap();
                samples.push(start.elapsed());
                assert_eq!(result.exit_code, Some(0));
            }
            back_to_back.push((name, median(&mut samples), session));
        }
        let off = back_to_back[0].1;
        for (name, m, session) in &back_to_back {
            println!(
                "back to back, {:16} median {:.3} ms; over off: {:.3} ms; started ahead: {:?}",
                name,
                ms(*m),
                ms(*m) - ms(off),
                session.start_ahead_counts()
            );
        }
    }
    let _ = std::fs::remove_dir_all(&workspace);
}
