//! Approvals checked by behaviour (RO-14): command variants generated from the flag
//! tables are classified, and every approved one runs under `strace -f` in a throwaway
//! workspace with hostile file names and a fake home of marker secrets. An approved
//! variant fails the test, by name, when it executes a program its entry does not
//! list, opens a file for writing, creates, renames or unlinks one, uses a socket or
//! opens a path on the secret list.
//!
//! A second draw takes its variants from the programs' own option lists (`--help`, and
//! `git SUB -h`), not from the tables ([`help`]).
//!
//! CI runs a bounded sample (`WAVESH_BEHAVIOUR_SAMPLE`, default 2000 approved
//! variants of the tables', 1500 of the option lists'); `WAVESH_BEHAVIOUR_FULL=1` runs
//! every approved variant.
#![cfg(target_os = "linux")]
#![allow(
    clippy::unwrap_used,
    reason = "a test harness: a failed setup fails the test"
)]

#[path = "../support/mod.rs"]
mod support;

mod generate;
mod help;
mod observe;

use std::path::Path;
use std::process::Command;
use std::sync::Mutex;

use support::Scratch;
use wavesh_policy::commands;
use wavesh_policy::git_guard::{RealFs, git_context};
use wavesh_policy::{ClassifyContext, Dialect};

/// Programs any variant may execute besides the commands it names.
const ALWAYS: &[&str] = &["bash"];

/// Wrappers the classifier looks through.
const WRAPPERS: &[&str] = &["timeout", "nice", "stdbuf"];

fn workspace(s: &Scratch) {
    for (name, text) in [
        ("a.txt", "alpha\nbeta\n"),
        ("b.txt", "gamma\n"),
        ("j.json", "{\"key\": 1, \"env\": 2}\n"),
        ("src/main.rs", "fn main() {}\n"),
        ("docs/guide.md", "# guide\n"),
        ("-fprint", "x"),
        ("--output=x", "x"),
        ("-Osh", "x"),
        ("-opwned", "x"),
        (".env", "MARKER-ENV"),
        ("config/prod.pem", "MARKER-PEM"),
    ] {
        s.file(name, text);
    }
    std::os::unix::fs::symlink(s.home.join(".ssh/id_rsa"), s.work.join("link.txt")).unwrap();
    let git = |args: &[&str]| {
        Command::new("git")
            .current_dir(&s.work)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", &s.home)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .args(args)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let _ = git(&["init", "-q", "-b", "main"])
        && git(&["add", "a.txt", "b.txt", "src"])
        && git(&["commit", "-qm", "init"]);
}

/// The programs a variant may execute: the commands it names (wrappers, xargs and
/// find -exec commands included) and what their entries list.
fn allowed_programs(command: &str) -> Vec<String> {
    let analysis = wavesh_parse::analyze(command, Dialect::Bash);
    let mut allowed: Vec<String> = ALWAYS.iter().map(|s| (*s).to_owned()).collect();
    for simple in &analysis.commands {
        for word in &simple.argv {
            let value = word.value.as_str();
            allowed.extend(commands::runs(value).iter().map(|s| (*s).to_owned()));
            if commands::lookup(value).is_some()
                || WRAPPERS.contains(&value)
                || value == "git"
                || value == "gh"
            {
                allowed.push(value.to_owned());
            }
        }
    }
    allowed
}

/// Whether strace can trace here; if not, says so (a failure under
/// `WAVESH_TEST_REQUIRE_ALL`).
fn strace_or_skip() -> bool {
    match observe::strace_works() {
        Ok(()) => true,
        Err(why) => {
            wavesh_testkit::missing_prerequisite(
                &format!("strace, for the behaviour check ({why})"),
                "apt-get install strace; scripts/test does it as root",
            );
            false
        }
    }
}

/// The classifier's view of a prepared scratch workspace.
fn context(s: &Scratch) -> ClassifyContext {
    ClassifyContext {
        home: s.home.clone(),
        cwd: s.work.clone(),
        git: git_context(&s.work, &[], &RealFs),
        ..ClassifyContext::default()
    }
}

#[test]
fn ro_14_approved_variants_have_no_effect() {
    if !strace_or_skip() {
        return;
    }
    let probe = Scratch::new("behaviour-probe");
    workspace(&probe);
    let ctx = context(&probe);
    let all = generate::variants();
    let mut approved: Vec<String> = all
        .iter()
        .filter(|v| wavesh_policy::check(v, Dialect::Bash, &ctx).read_only)
        .cloned()
        .collect();
    approved.sort();
    approved.dedup();
    let (sample, full) = sample_of(&approved, 2000);
    drop(probe);
    observe_and_report(
        &format!(
            "behaviour: {} variants generated, {} approved",
            all.len(),
            approved.len()
        ),
        &sample,
        full,
    );
    assert!(
        sample.len() >= 500.min(approved.len()),
        "the sample is too small to mean anything"
    );
}

/// Runs each variant of `sample` under the observer, on a few threads, each in a
/// throwaway workspace made again after an effect. Returns the variants with an
/// effect (with what was seen) and the ones that timed out.
fn observe_all(sample: &[String]) -> (Vec<String>, Vec<String>) {
    let failures = Mutex::new(Vec::new());
    let timeouts = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().min(4));
    let chunks: Vec<&[String]> = sample
        .chunks(sample.len().div_ceil(threads).max(1))
        .collect();
    std::thread::scope(|scope| {
        for (t, chunk) in chunks.iter().enumerate() {
            let failures = &failures;
            let timeouts = &timeouts;
            scope.spawn(move || {
                let mut s = Scratch::new(&format!("behaviour-{t}"));
                workspace(&s);
                let log = s.root.join("strace.log");
                for variant in chunk.iter() {
                    let observed =
                        observe::run(variant, &s.work, &s.home, &log, &allowed_programs(variant));
                    if observed.timed_out {
                        timeouts.lock().unwrap().push(variant.clone());
                    }
                    if !observed.effects.is_empty() {
                        failures.lock().unwrap().push(format!(
                            "{variant}\n    {}",
                            observed.effects.join("\n    ")
                        ));
                        // Start the next variant from a clean workspace.
                        s = Scratch::new(&format!("behaviour-{t}"));
                        workspace(&s);
                    }
                }
            });
        }
    });
    (
        failures.into_inner().unwrap(),
        timeouts.into_inner().unwrap(),
    )
}

/// A deterministic spread of at most `limit` over `all` (every one with
/// `WAVESH_BEHAVIOUR_FULL=1`), and whether it is the full set.
fn sample_of(all: &[String], default_limit: usize) -> (Vec<String>, bool) {
    let full = std::env::var_os("WAVESH_BEHAVIOUR_FULL").is_some_and(|v| v == "1");
    let limit = std::env::var("WAVESH_BEHAVIOUR_SAMPLE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default_limit);
    if full || all.len() <= limit {
        (all.to_vec(), full)
    } else {
        (
            (0..limit)
                .map(|i| all[i * all.len() / limit].clone())
                .collect(),
            false,
        )
    }
}

#[test]
fn ro_14_variants_from_the_programs_own_option_lists_have_no_effect() {
    if !strace_or_skip() {
        return;
    }
    let probe = Scratch::new("behaviour-help");
    workspace(&probe);
    let ctx = context(&probe);
    let drawn = help::variants(&probe.work, &probe.home);
    // What the tables' own variants try is the other test's.
    let tried: std::collections::HashSet<String> = generate::variants().into_iter().collect();
    let mut approved: Vec<String> = drawn
        .variants
        .iter()
        .filter(|v| !tried.contains(*v))
        .filter(|v| wavesh_policy::check(v, Dialect::Bash, &ctx).read_only)
        .cloned()
        .collect();
    approved.sort();
    approved.dedup();
    drop(probe);
    let (sample, full) = sample_of(&approved, 1500);
    assert!(
        drawn.programs >= 40,
        "only {} programs' help listed options: the draw means little",
        drawn.programs
    );
    observe_and_report(
        &format!(
            "behaviour from the programs' option lists: {} programs' help read, {} options, {} variants drawn, {} approved (beyond the tables' own variants)",
            drawn.programs,
            drawn.options,
            drawn.variants.len(),
            approved.len()
        ),
        &sample,
        full,
    );
}

/// Runs `sample` under the observer, prints the figures after `drawn` (what was drawn
/// and approved), and fails on any effect.
#[expect(
    clippy::print_stderr,
    reason = "the run's figures, for CI's log and the closing note"
)]
fn observe_and_report(drawn: &str, sample: &[String], full: bool) {
    let (failures, timeouts) = observe_all(sample);
    eprintln!(
        "{drawn}, {} run ({}), {} timed out (killed), {} with an effect",
        sample.len(),
        if full { "full run" } else { "bounded sample" },
        timeouts.len(),
        failures.len()
    );
    for variant in &timeouts {
        eprintln!("  timed out (still running after 5 s, killed): {variant}");
    }
    assert!(
        failures.is_empty(),
        "approved variants with an observed effect:\n{}",
        failures.join("\n")
    );
}

#[test]
fn ro_14_the_observer_sees_effects() {
    if !strace_or_skip() {
        return;
    }
    let s = Scratch::new("behaviour-self");
    workspace(&s);
    let log = s.root.join("strace.log");
    let run = |command: &str| {
        observe::run(command, &s.work, &s.home, &log, &allowed_programs(command)).effects
    };
    let has = |effects: &[String], what: &str| effects.iter().any(|e| e.contains(what));
    assert!(run("cat a.txt").is_empty(), "{:?}", run("cat a.txt"));
    assert!(has(&run("cat a.txt > out.txt"), "for writing"));
    assert!(has(&run("touch new.txt"), "executes"));
    assert!(has(&run("cat link.txt"), "secret"));
    assert!(has(&run("cat ~/.netrc"), "secret"));
    assert!(has(&run("mv b.txt c.txt"), "rename"));
    assert!(has(&run("echo x | cat > /dev/null; rm -f a.txt"), "unlink"));
    assert!(has(&run("cat < /dev/tcp/127.0.0.1/9"), "socket"));
    let found = run("find src -name main.rs -exec sh -c : \\;");
    assert!(has(&found, "executes"), "{found:?}");
    assert!(
        has(&run("date -s 2000-01-01"), "clock_settime")
            || has(&run("date -s 2000-01-01"), "settimeofday")
    );
    let _ = Path::new("/");
}
