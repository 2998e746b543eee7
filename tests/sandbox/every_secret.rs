//! Every entry of the shared secret list (`wavesh-policy`'s `data/secrets.txt`, RO-9,
//! SBX-2), read from the list itself: a location added to the file is tested here
//! without a change to this file.
//!
//! - `home` entries: a marker is planted at the location in the fake HOME, once as a
//!   file and once as a directory holding a file.
//! - `abs` entries: a marker is planted at the same path under a fake root inside the
//!   test's base directory, and that copy is added to the session's secret list, so the
//!   sandbox's handling of the entry (its globs included) is tested without writing to
//!   the real `/etc` or `/run/secrets`. Where the real path exists it is also read inside
//!   the sandbox, to `/dev/null` (nothing of it is ever printed). Entries under `/proc`
//!   are not planted: the sandbox leaves `/proc` to other mechanisms (docs/sandbox.md)
//!   and the test says "not checked" with the reason.
//! - Each marker is read directly, through a glob, through a `cd`-relative path, through
//!   a symlink planted in the workspace and through a hardlink planted deep in the
//!   workspace, at both levels, direct and through the supervisor: no marker may be
//!   printed.
//! - `name` entries: an example name of each pattern is planted in the workspace (at the
//!   top and deep in the tree), in the fake HOME (at the top, in `.config`, in a project
//!   of its own) and in a gitignored build directory; what the sandbox hides is
//!   snapshotted per level. `not-name` exceptions stay readable.

use std::path::PathBuf;

use wavesh_exec::sandbox::Level;
use wavesh_policy::secrets::{SecretKind, secret_patterns};

use crate::{Fixture, configurations, enforced_or_skip, write};

/// How a location is planted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// The location is a file.
    File,
    /// The location is a directory; the marker is a file inside it.
    Dir,
}

/// One planted marker: the entry of the list it stands for and the file holding it.
struct Planted {
    entry: String,
    file: PathBuf,
}

/// The fake root the `abs` entries are planted under.
fn fake_root(f: &Fixture) -> PathBuf {
    f.base.join("root")
}

/// Quotes `text` for the shell.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// An existing name matching one glob component: `*` and `?` become `x`, a class its
/// first character.
fn example(pattern: &str) -> String {
    let mut out = String::new();
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' | '?' => out.push('x'),
            '[' => {
                let mut class: Vec<char> = Vec::new();
                for c in chars.by_ref() {
                    if c == ']' && !class.is_empty() {
                        break;
                    }
                    class.push(c);
                }
                let first = class.into_iter().find(|c| *c != '!' && *c != '^');
                out.push(first.unwrap_or('x'));
            }
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    out
}

/// Plants every `home` and `abs` entry of the list in `shape`; returns the markers and
/// the fake-root copies of the `abs` entries to add to the session's secret list.
fn plant_locations(f: &Fixture, shape: Shape) -> (Vec<Planted>, Vec<String>) {
    let mut planted = Vec::new();
    let mut extra_secrets = Vec::new();
    for pattern in secret_patterns() {
        let (location, entry) = match pattern.kind {
            SecretKind::Home => (
                f.home.join(example_path(pattern.pattern)),
                format!("home {}", pattern.pattern),
            ),
            SecretKind::Absolute if pattern.pattern.starts_with("/proc/") => {
                println!(
                    "not checked: abs {}: the sandbox leaves /proc out of its read rules (a \
                     process started later would get none); the command's own environ is \
                     scrubbed, another process's mem needs ptrace access Landlock refuses, \
                     and the command's own PID namespace shows no other process \
                     (docs/sandbox.md)",
                    pattern.pattern
                );
                continue;
            }
            SecretKind::Absolute => {
                let root = fake_root(f);
                extra_secrets.push(format!("{}{}", root.display(), pattern.pattern));
                (
                    root.join(example_path(pattern.pattern.trim_start_matches('/'))),
                    format!("abs {}", pattern.pattern),
                )
            }
            SecretKind::Name | SecretKind::NotName => continue,
        };
        let file = match shape {
            Shape::File => location,
            Shape::Dir => location.join("secret.txt"),
        };
        write(&file, &format!("{}-{entry}\n", f.marker));
        planted.push(Planted { entry, file });
    }
    (planted, extra_secrets)
}

/// A path pattern with each glob component replaced by an example name.
fn example_path(pattern: &str) -> PathBuf {
    pattern.split('/').map(example).collect()
}

/// The attacks on every planted marker, one command per way of reaching them.
fn attacks(f: &Fixture, planted: &[Planted]) -> Vec<(&'static str, String)> {
    std::fs::create_dir_all(f.ws.join("links")).unwrap();
    std::fs::create_dir_all(f.ws.join("deep/er/hardlinks")).unwrap();
    let (mut direct, mut globbed, mut cd, mut links, mut hard) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (i, p) in planted.iter().enumerate() {
        let file = p.file.display().to_string();
        direct.push(format!("cat {}", quote(&file)));
        // The last character of the file's name becomes `?`.
        let mut stem = file.clone();
        stem.pop();
        globbed.push(format!("cat {}?", quote(&stem)));
        let dir = p.file.parent().unwrap().display().to_string();
        let name = p.file.file_name().unwrap().to_string_lossy().into_owned();
        cd.push(format!("(cd {} && cat ./{})", quote(&dir), quote(&name)));
        std::os::unix::fs::symlink(&p.file, f.ws.join(format!("links/{i}"))).unwrap();
        links.push(format!("cat links/{i}"));
        let hardlink = f.ws.join(format!("deep/er/hardlinks/{i}"));
        if std::fs::hard_link(&p.file, &hardlink).is_ok() {
            hard.push(format!("cat deep/er/hardlinks/{i}"));
        } else {
            crate::util::missing_prerequisite(
                &format!("a hardlink to {} (the file system refused it)", p.entry),
                "a temporary directory on a file system with hardlinks",
            );
        }
    }
    let join = |v: Vec<String>| format!("{{ {}; }} 2>&1", v.join("; "));
    vec![
        ("direct", join(direct)),
        ("glob", join(globbed)),
        ("cd-relative", join(cd)),
        ("planted symlink", join(links)),
        ("planted hardlink", join(hard)),
    ]
}

/// The entries whose marker `text` shows.
fn leaked<'a>(f: &Fixture, planted: &'a [Planted], text: &str) -> Vec<&'a str> {
    planted
        .iter()
        .filter(|p| text.contains(&format!("{}-{}\n", f.marker, p.entry)))
        .map(|p| p.entry.as_str())
        .collect()
}

async fn every_location_is_unreadable(shape: Shape) {
    let f = Fixture::empty();
    let (planted, extra) = plant_locations(&f, shape);
    let attacks = attacks(&f, &planted);
    // The control: without the sandbox every attack reads every marker.
    let off = f.session(Level::Off, false);
    for (name, command) in &attacks {
        let result = f.run(&off, command).await;
        let shown = leaked(&f, &planted, &format!("{}\n", result.text));
        assert_eq!(
            shown.len(),
            planted.len(),
            "control {name}: the attack reads only {shown:?}"
        );
    }
    off.shutdown().await;
    for (level, supervised) in configurations() {
        if !enforced_or_skip(level) {
            continue;
        }
        let session = f.session_with(level, supervised, |config| {
            config.sandbox.secret_paths.extend(extra.iter().cloned());
        });
        for (name, command) in &attacks {
            let result = f.run(&session, command).await;
            let shown = leaked(&f, &planted, &format!("{}\n", result.text));
            assert!(
                shown.is_empty() && !result.text.contains(&f.marker),
                "{level} supervised={supervised} {shape:?} {name}: readable: {shown:?}\n{}",
                result.text
            );
        }
        session.shutdown().await;
    }
}

#[tokio::test]
async fn sbx_2_every_listed_location_is_unreadable_as_a_file() {
    every_location_is_unreadable(Shape::File).await;
}

#[tokio::test]
async fn sbx_2_every_listed_location_is_unreadable_as_a_directory() {
    every_location_is_unreadable(Shape::Dir).await;
}

/// The real `abs` locations that exist on this machine are unreadable too: each file of
/// them is read inside the sandbox into `/dev/null`, so nothing of it can be shown.
#[tokio::test]
async fn sbx_2_real_system_secrets_are_unreadable() {
    let f = Fixture::empty();
    let mut files = Vec::new();
    for pattern in secret_patterns() {
        if pattern.kind != SecretKind::Absolute || pattern.pattern.starts_with("/proc/") {
            continue;
        }
        if ["/dev/mem", "/dev/kmem"].contains(&pattern.pattern) {
            // Physical memory is not read, sandboxed or not: the fake-root tests cover
            // the entries.
            println!(
                "not checked: real {}: never read by a test",
                pattern.pattern
            );
            continue;
        }
        let found = glob_real(pattern.pattern);
        if found.is_empty() {
            println!("not checked: real {}: not on this machine", pattern.pattern);
        }
        files.extend(found);
    }
    if files.is_empty() {
        crate::util::missing_prerequisite(
            "any of the listed machine-wide secret files (/etc/shadow, ...)",
            "a Debian machine has /etc/shadow",
        );
        return;
    }
    let command = files
        .iter()
        .map(|file| {
            let file = quote(&file.display().to_string());
            format!("head -c1 {file} >/dev/null 2>&1 && echo READABLE {file}")
        })
        .collect::<Vec<_>>()
        .join("; ");
    for (level, supervised) in configurations() {
        if !enforced_or_skip(level) {
            continue;
        }
        let session = f.session(level, supervised);
        let result = f.run(&session, &format!("{command}; true")).await;
        assert!(
            !result.text.contains("READABLE"),
            "{level} supervised={supervised}: {}",
            result.text
        );
        session.shutdown().await;
    }
}

/// The regular files a real absolute pattern names (listing only, no file is opened).
fn glob_real(pattern: &str) -> Vec<PathBuf> {
    let mut found = vec![PathBuf::from("/")];
    for part in pattern.split('/').filter(|p| !p.is_empty()) {
        let mut next = Vec::new();
        for dir in &found {
            if part.contains(['*', '?', '[']) {
                for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    if wavesh_policy::secrets::glob_match(part, &name) {
                        next.push(dir.join(name));
                    }
                }
            } else if dir.join(part).exists() {
                next.push(dir.join(part));
            }
        }
        found = next;
    }
    let mut files = Vec::new();
    let mut stack = found;
    while let Some(path) = stack.pop() {
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_dir() => {
                stack.extend(
                    std::fs::read_dir(&path)
                        .into_iter()
                        .flatten()
                        .flatten()
                        .map(|e| e.path()),
                );
            }
            Ok(meta) if meta.is_file() => files.push(path),
            _ => {}
        }
    }
    files.sort();
    files
}

/// Where the name test plants each example, and whether the sandbox hides it there.
fn name_places(f: &Fixture) -> Vec<(&'static str, PathBuf)> {
    vec![
        ("workspace top", f.ws.clone()),
        ("workspace deep", f.ws.join("a/b/c")),
        ("workspace hidden dir", f.ws.join("config/.private")),
        ("workspace gitignored dir", f.ws.join("build/out")),
        ("home top", f.home.clone()),
        ("home .config", f.home.join(".config")),
        ("home other project", f.home.join("projects/app/src")),
    ]
}

/// `name` patterns (SBX-2): what the sandbox hides where, per level; `not-name`
/// exceptions stay readable everywhere.
#[tokio::test]
async fn sbx_2_secret_names_are_hidden_throughout_the_workspace() {
    let f = Fixture::empty();
    crate::git(&f.ws, &["init", "-q"]);
    write(&f.ws.join(".gitignore"), "/build/\n");
    // `.config/gh` is a secret location, so `.config` is a directory on the way to one.
    write(
        &f.home.join(".config/gh/hosts.yml"),
        &format!("{}-gh\n", f.marker),
    );
    let names: Vec<String> = secret_patterns()
        .iter()
        .filter(|p| p.kind == SecretKind::Name)
        .map(|p| example(p.pattern))
        .collect();
    let exceptions: Vec<String> = secret_patterns()
        .iter()
        .filter(|p| p.kind == SecretKind::NotName)
        .map(|p| example(p.pattern))
        .collect();
    for name in &names {
        assert!(
            wavesh_policy::secrets::is_secret_name(name),
            "{name} is an example of a name pattern"
        );
    }
    let places = name_places(&f);
    let mut files: Vec<(usize, String, PathBuf)> = Vec::new();
    for (i, (_, dir)) in places.iter().enumerate() {
        for name in &names {
            let file = dir.join(name);
            write(&file, &format!("{}-{name}-{i}\n", f.marker));
            files.push((i, name.clone(), file));
        }
        for name in &exceptions {
            write(&dir.join(name), &format!("TEMPLATE-{name}-{i}\n"));
        }
    }
    let read_all = files
        .iter()
        .map(|(_, _, file)| format!("cat {}", quote(&file.display().to_string())))
        .chain(
            // Relative to a `cd` and through a glob, deep in the workspace.
            ["(cd a/b/c && cat ./.env ./*.pem)", "cat a/*/c/.env*"].map(str::to_owned),
        )
        .collect::<Vec<_>>()
        .join("; ");
    let read_templates = places
        .iter()
        .flat_map(|(_, dir)| {
            exceptions
                .iter()
                .map(move |name| format!("cat {}", quote(&dir.join(name).display().to_string())))
        })
        .collect::<Vec<_>>()
        .join("; ");
    let expected_templates = places.len() * exceptions.len();
    for (level, supervised) in configurations() {
        if !enforced_or_skip(level) {
            continue;
        }
        let session = f.session(level, supervised);
        let result = f.run(&session, &format!("{{ {read_all}; }} 2>&1")).await;
        let text = format!("{}\n", result.text);
        let mut table = String::new();
        for (i, (place, _)) in places.iter().enumerate() {
            let readable: Vec<&str> = files
                .iter()
                .filter(|(at, name, _)| {
                    *at == i && text.contains(&format!("{}-{name}-{i}\n", f.marker))
                })
                .map(|(_, name, _)| name.as_str())
                .collect();
            let verdict = if readable.is_empty() {
                "all hidden".to_owned()
            } else if readable.len() == names.len() {
                "all readable".to_owned()
            } else {
                format!("readable: {}", readable.join(" "))
            };
            table.push_str(&format!("{place}: {verdict}\n"));
        }
        // The workspace is covered whole, but for what its .gitignore ignores.
        for (i, (place, _)) in places.iter().enumerate().take(3) {
            assert!(
                !files.iter().any(|(at, name, _)| *at == i
                    && text.contains(&format!("{}-{name}-{i}\n", f.marker))),
                "{level} supervised={supervised} {place}:\n{table}"
            );
        }
        assert!(
            !text.contains(&format!("{}-.env-1\n", f.marker))
                && !text.contains(&format!("{}-x.pem-1\n", f.marker)),
            "cd-relative or glob: {text}"
        );
        let templates = f.run(&session, &read_templates).await;
        assert_eq!(
            templates.text.matches("TEMPLATE-").count(),
            expected_templates,
            "{level} supervised={supervised}: the exceptions are readable: {}",
            templates.text
        );
        session.shutdown().await;
        if !supervised {
            insta::assert_snapshot!(format!("secret-names-{}", level.name()), table);
        }
    }
}

/// A secret created under a name inside a deep directory of the workspace between two
/// commands is hidden from the second (the scan is built again when a directory of the
/// tree changes).
#[tokio::test]
async fn sbx_2_a_deep_secret_planted_between_commands_is_hidden() {
    if !enforced_or_skip(Level::ReadOnly) {
        return;
    }
    let f = Fixture::empty();
    write(&f.ws.join("a/b/readme.txt"), "hello\n");
    for level in [Level::ReadOnly, Level::WorkspaceWrite] {
        if !enforced_or_skip(level) {
            continue;
        }
        let session = f.session(level, false);
        let first = f.run(&session, "cat a/b/readme.txt").await;
        assert_eq!(first.text, "hello");
        let planted = f.ws.join(format!("a/b/{}.pem", level.name()));
        write(&planted, &format!("{}-later\n", f.marker));
        let second = f
            .run(
                &session,
                &format!("cat {}; cat a/b/readme.txt", planted.display()),
            )
            .await;
        assert!(!second.text.contains(&f.marker), "{level}: {}", second.text);
        assert!(second.text.contains("hello"), "{level}: {}", second.text);
        session.shutdown().await;
    }
}
