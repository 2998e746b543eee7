//! wavesh's grep against GNU grep: the same output and exit code (SEARCH-1, SEARCH-6), and
//! gitignore-aware recursion.

use std::path::Path;
use std::process::Command;

use crate::util::{WAVESH, Workspace};

const FILES: &[(&str, &str)] = &[
    (
        "a.txt",
        "abc\nABC\nabab\nfoo bar\nfoobar\n\nxx\nxxx\na.c\n123 apples\nend$\nends with a\n\nb and ab\n",
    ),
    (
        "b.txt",
        "foo\nbar baz\nthe foo fighters\nfo\nf\n[x] marks\nabcabc\n",
    ),
    ("sub/c.txt", "deep foo\nnothing here\nfoo\tbar\n"),
];

fn run(dir: &Path, program: &str, prefix: &[&str], args: &[&str]) -> (String, Option<i32>) {
    // Strict: an argument wavesh would hand to the system grep fails instead, so a match
    // below is wavesh's own output.
    let output = Command::new(program)
        .args(prefix)
        .args(args)
        .env("WAVESH_GREP_STRICT", "1")
        .current_dir(dir)
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        output.status.code(),
    )
}

/// At least 200 invocations: flag combinations × basic, extended and fixed patterns.
#[test]
fn search_6_grep_matches_gnu_grep() {
    let ws = Workspace::new();
    for (name, text) in FILES {
        let path = ws.root.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let patterns: &[&[&str]] = &[
        &["foo"],
        &["fo*"],
        &["^abc"],
        &["bar$"],
        &["foo\\|bar"],
        &["\\(ab\\)\\1"],
        &["x\\{2,3\\}"],
        &["x\\{3\\}"],
        &["[[:alpha:]]\\+"],
        &["[0-9]"],
        &["a.c"],
        &["a\\.c"],
        &["end\\$"],
        &["^$"],
        &["-E", "foo|baz"],
        &["-E", "(ab)+"],
        &["-E", "x{2}"],
        &["-E", "[[:digit:]]+"],
        &["-E", "^f(o|oo)$"],
        // A screening match spans lines ([^z] takes newlines): every line it covers
        // must still be checked.
        &["-E", "a\\s*b"],
        &["-E", "a[^z]*b"],
        &["-P", "\\d+"],
        &["-P", "foo(?= bar)"],
        &["-P", "(ab)\\1"],
        &["-F", "a.c"],
        &["-F", "[x]"],
        &["-e", "abc", "-e", "baz"],
        &["-i", "ABC"],
        &["x*"],
    ];
    let flags: &[&[&str]] = &[
        &[],
        &["-n"],
        &["-c"],
        &["-v"],
        &["-w"],
        &["-x"],
        &["-o"],
        &["-l"],
        &["-L"],
        &["-h"],
        &["-b"],
        &["-m1"],
        &["-A1"],
        &["-B1"],
        &["-C1", "-n"],
        &["-vc"],
        &["-on"],
        &["-in"],
    ];
    let file_sets: &[&[&str]] = &[&["a.txt"], &["a.txt", "b.txt"]];
    let mut compared = 0;
    let mut differences = Vec::new();
    for pattern in patterns {
        for flag in flags {
            let files = file_sets[compared % file_sets.len()];
            let mut args: Vec<&str> = flag.to_vec();
            args.extend_from_slice(pattern);
            args.extend_from_slice(files);
            let ours = run(&ws.root, WAVESH, &["grep"], &args);
            let gnu = run(&ws.root, "grep", &[], &args);
            compared += 1;
            if ours != gnu {
                differences.push(format!(
                    "grep {}\n--- wavesh ({:?})\n{}--- GNU ({:?})\n{}",
                    args.join(" "),
                    ours.1,
                    ours.0,
                    gnu.1,
                    gnu.0
                ));
            }
        }
    }
    // Recursive: the walk order differs, so lines are compared sorted.
    for args in [
        &["-rn", "foo", "."][..],
        &["-r", "-l", "foo"],
        &["-rc", "bar", "sub"],
        &["-r", "-w", "foo", "."],
        &["-rh", "foo", "sub", "a.txt"],
        &["-rs", "foo", "sub", "missing"],
        &["-r", "-C1", "foo", "."],
        &["-rn", "-B1", "bar"],
        &["-rq", "foo", "."],
        &["-rL", "foo", "."],
        &["-rc", "foo", "."],
        &["-rv", "o", "."],
    ] {
        // wavesh prints paths without "./" (SEARCH-1): compared after removing it.
        let sorted = |(text, code): (String, Option<i32>)| {
            let mut lines: Vec<String> = text
                .lines()
                .map(|l| l.trim_start_matches("./").to_owned())
                .collect();
            lines.sort();
            (lines, code)
        };
        let ours = sorted(run(&ws.root, WAVESH, &["grep"], args));
        let gnu = sorted(run(&ws.root, "grep", &[], args));
        compared += 1;
        if ours != gnu {
            differences.push(format!(
                "grep {}\n--- wavesh {ours:?}\n--- GNU {gnu:?}",
                args.join(" ")
            ));
        }
    }
    assert!(compared >= 200, "{compared} invocations");
    assert!(
        differences.is_empty(),
        "{} of {compared} differ:\n{}",
        differences.len(),
        differences.join("\n")
    );
}

/// Recursive search skips what .gitignore ignores and VCS directories, and still reads
/// hidden files, and prints paths without "./" (SEARCH-1, SEARCH-9).
#[test]
fn search_1_recursive_grep_respects_gitignore() {
    let ws = Workspace::new();
    for (name, text) in [
        (".gitignore", "target/\n*.log\n"),
        ("src/lib.rs", "needle in source\n"),
        ("target/debug/out.rs", "needle in build output\n"),
        ("run.log", "needle in a log\n"),
        (".hidden/conf", "needle hidden\n"),
        (".git/HEAD", "needle in git\n"),
    ] {
        let path = ws.root.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let (out, code) = run(&ws.root, WAVESH, &["grep"], &["-rl", "needle", "."]);
    assert_eq!(code, Some(0));
    let mut files: Vec<&str> = out.lines().collect();
    files.sort_unstable();
    assert_eq!(files, [".hidden/conf", "src/lib.rs"]);
    // A directory without -r is searched too (SEARCH-8).
    let (out, code) = run(&ws.root, WAVESH, &["grep"], &["-l", "needle", "src"]);
    assert_eq!((out.as_str(), code), ("src/lib.rs\n", Some(0)));
    // An ignored file named explicitly is still searched, like grep.
    let (out, code) = run(&ws.root, WAVESH, &["grep"], &["needle", "run.log"]);
    assert_eq!((out.as_str(), code), ("needle in a log\n", Some(0)));
}

/// What wavesh does not implement runs the system grep with the same argv (SEARCH-5);
/// strict mode names the argument instead.
#[test]
fn search_5_unsupported_arguments_fall_back_to_system_grep() {
    let ws = Workspace::new();
    std::fs::write(ws.root.join("f"), "a1\nb22\n").unwrap();
    std::fs::write(ws.root.join(".gitignore"), "f\n").unwrap();
    std::fs::write(ws.root.join("ex"), "nothing\n").unwrap();
    let args = ["-r", "--exclude-from=ex", "b2", "."];
    let fallback = Command::new(WAVESH)
        .arg("grep")
        .args(args)
        .current_dir(&ws.root)
        .output()
        .unwrap();
    // The ignored file, with `./`: only the system grep prints it so.
    assert_eq!(String::from_utf8_lossy(&fallback.stdout), "./f:b22\n");
    assert_eq!(fallback.status.code(), Some(0));
    let (out, code) = run(&ws.root, WAVESH, &["grep"], &args);
    assert_eq!((out.as_str(), code), ("", Some(2)));
}

/// A tree with ignored directories, a nested .gitignore, a .git directory and a binary.
fn ignored_tree(ws: &Workspace) {
    for (name, text) in [
        (".gitignore", "dist/\nnode_modules/\n"),
        ("src/.gitignore", "generated.rs\n"),
        ("dist/bundle.js", "needle\n"),
        ("node_modules/pkg/index.js", "needle\n"),
        ("src/generated.rs", "needle\n"),
        (".git/config", "needle\n"),
        ("src/main.rs", "needle\n"),
        ("README", "needle\n"),
    ] {
        let path = ws.root.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    std::fs::write(ws.root.join("src/blob.bin"), b"needle\0\x01\x02").unwrap();
}

fn sorted_lines(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_unstable();
    lines
}

/// Through the Bash tool, `grep -rl` skips ignored files, VCS directories and binaries
/// and prints paths without "./"; a new `bash -c` runs the system grep and finds them
/// all (SEARCH-1, SEARCH-4).
#[test]
fn search_1_grep_inside_commands_is_gitignore_aware() {
    let ws = Workspace::new();
    ignored_tree(&ws);
    let run = ws.run(&[], "grep -rl needle .");
    assert_eq!(
        sorted_lines(&run.stdout()),
        ["README", "src/main.rs"],
        "{run}"
    );
    let run = ws.run(&[], "bash -c 'grep -rl needle .'");
    assert_eq!(
        sorted_lines(&run.stdout()),
        [
            "./.git/config",
            "./README",
            "./dist/bundle.js",
            "./node_modules/pkg/index.js",
            "./src/blob.bin",
            "./src/generated.rs",
            "./src/main.rs"
        ],
        "{run}"
    );
    // With shadowing off, the system grep runs.
    let run = ws.run(&["--no-search-shadowing"], "grep -rl needle . | wc -l");
    assert_eq!(run.stdout().trim(), "7", "{run}");
}

/// Where no shell function is visible the system grep runs (SEARCH-4).
#[test]
fn search_4_xargs_env_find_exec_and_timeout_use_the_system_grep() {
    let ws = Workspace::new();
    ignored_tree(&ws);
    for command in [
        "echo . | xargs grep -rl needle",
        "env grep -rl needle .",
        "find . -maxdepth 0 -exec grep -rl needle {} +",
        "timeout 10 grep -rl needle .",
        "command grep -rl needle .",
    ] {
        let run = ws.run(&[], command);
        assert!(
            run.stdout().contains("./dist/bundle.js"),
            "{command}: {run}"
        );
    }
}

/// Shadowing changes neither `$?` nor here-docs, pipes, redirects or `set -e`, and a
/// match only in ignored files exits 1 (SEARCH-6).
#[test]
fn search_6_shell_behaviour_is_unchanged() {
    let ws = Workspace::new();
    ignored_tree(&ws);
    let cases: &[(&str, &str)] = &[
        ("grep -q nope README; echo $?", "1"),
        ("grep -q needle README; echo $?", "0"),
        ("grep -q needle missing-file 2>/dev/null; echo $?", "2"),
        ("grep -c x <<'EOF'\nx\ny\nx\nEOF", "2"),
        ("printf 'a\\nb\\n' | grep b | tr b B", "B"),
        ("grep needle README > out.txt && cat out.txt", "needle"),
        ("set -e; grep -q needle README; echo after", "after"),
        ("set -e; grep -q nope README; echo never", "Exit code 1"),
        (
            "if grep -q nope README; then echo yes; else echo no; fi",
            "no",
        ),
        ("grep -rq needle dist/.. ; echo $?", "0"),
        (
            "mkdir -p only && (cd only && printf 'dist/\\n' > .gitignore && mkdir dist && echo needle > dist/x && grep -r needle .; echo $?)",
            "1",
        ),
    ];
    for (command, expected) in cases {
        let run = ws.run(&[], command);
        assert_eq!(run.stdout().trim_end(), *expected, "{command}: {run}");
    }
}

/// `-z` and `--null` go to the system grep and give its output (SEARCH-5).
#[test]
fn search_5_null_flags_reach_the_system_grep() {
    let ws = Workspace::new();
    ignored_tree(&ws);
    let run = ws.run(
        &[],
        "grep --null -l needle README src/main.rs | od -c | head -1",
    );
    assert!(
        run.stdout().contains(r"R   E   A   D   M   E  \0   s"),
        "{run}"
    );
    let run = ws.run(
        &[],
        "printf 'a\\0needle\\0' | grep -z needle | od -c | head -1",
    );
    assert!(run.stdout().contains(r"n   e   e   d   l   e  \0"), "{run}");
}

/// `rg` is the built-in search only where the system has none; a user's own `rg` is
/// never shadowed (SEARCH-3).
#[test]
fn search_3_rg_only_where_the_system_has_none() {
    let ws = Workspace::new();
    ignored_tree(&ws);
    let bin = ws.private.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let run_with_path = |path: &std::ffi::OsStr, command: &str| {
        let mut cmd = ws.wavesh();
        cmd.env("PATH", path).arg("run").arg("--").arg(command);
        crate::util::Run::of(cmd)
    };
    // No rg on PATH (only an empty directory): the built-in answers, ripgrep's way:
    // hidden files and ignored directories skipped, counts only for matching files.
    let run = run_with_path(
        bin.as_os_str(),
        "rg -l needle | { while read -r f; do echo \"$f\"; done; }",
    );
    let mut lines: Vec<String> = run.stdout().lines().map(str::to_owned).collect();
    lines.sort();
    assert_eq!(lines, ["README", "src/main.rs"], "{run}");
    let run = run_with_path(bin.as_os_str(), "rg -c --hidden needle .git README");
    assert_eq!(run.stdout(), ".git/config:1\nREADME:1\n", "{run}");
    // A user's rg on PATH runs as is.
    let fake = bin.join("rg");
    std::fs::write(&fake, "#!/bin/bash\necho \"the user's rg $*\"\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let run = run_with_path(bin.as_os_str(), "rg needle");
    assert_eq!(run.stdout(), "the user's rg needle\n", "{run}");
}

/// A pattern that is not UTF-8 goes to the system grep, byte for byte (SEARCH-5).
#[cfg(unix)]
#[test]
fn search_5_non_utf8_arguments_reach_the_system_grep() {
    use std::os::unix::ffi::OsStrExt;
    let ws = Workspace::new();
    std::fs::write(ws.root.join("latin1"), b"caf\xe9\nplain\n").unwrap();
    let output = Command::new(WAVESH)
        .arg("grep")
        .arg(std::ffi::OsStr::from_bytes(b"caf\xe9"))
        .arg("latin1")
        .env("LC_ALL", "C")
        .current_dir(&ws.root)
        .output()
        .unwrap();
    assert_eq!(output.stdout, b"caf\xe9\n");
    assert_eq!(output.status.code(), Some(0));
}

/// At least 60 find expressions: wavesh's find prints what GNU find prints (sorted: the
/// walk order differs) with the same exit code (SEARCH-2).
#[test]
fn search_2_find_matches_gnu_find() {
    let ws = Workspace::new();
    for (name, text) in [
        ("a.rs", "fn main() {}\n"),
        ("b.txt", "text\n"),
        ("B.TXT", "upper\n"),
        ("src/lib.rs", "pub fn f() {}\n"),
        ("src/deep/mod.rs", "\n"),
        ("src/deep/data.json", "{}\n"),
        ("docs/guide.md", "# guide\n"),
        (".hidden/x.rs", "\n"),
        ("empty.txt", ""),
        ("big.bin", &"x".repeat(5000)),
        ("aa{2}", "braces\n"),
    ] {
        let path = ws.root.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    std::fs::create_dir_all(ws.root.join("emptydir")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink("a.rs", ws.root.join("link.rs")).unwrap();
    let expressions: &[&[&str]] = &[
        &["."],
        &[".", "-name", "*.rs"],
        &[".", "-iname", "b.txt"],
        &[".", "-type", "f"],
        &[".", "-type", "d"],
        &[".", "-type", "l"],
        &[".", "-type", "f", "-name", "*.txt"],
        &[".", "-name", "*.rs", "-o", "-name", "*.md"],
        &[".", "-not", "-name", "*.rs"],
        &[".", "!", "-type", "d"],
        &[
            ".", "(", "-name", "*.rs", "-o", "-name", "*.json", ")", "-print",
        ],
        &[".", "-maxdepth", "1"],
        &[".", "-maxdepth", "1", "-type", "f"],
        &[".", "-mindepth", "2"],
        &[".", "-mindepth", "1", "-maxdepth", "2", "-type", "d"],
        &["src"],
        &["src", "docs"],
        &["src", "-name", "*.rs"],
        &[".", "-path", "./src/*"],
        &[".", "-path", "*deep*", "-type", "f"],
        &[".", "-ipath", "*DEEP*"],
        &[".", "-wholename", "./docs/guide.md"],
        &[".", "-empty"],
        &[".", "-empty", "-type", "d"],
        &[".", "-empty", "-type", "f"],
        &[".", "-size", "+1k"],
        &[".", "-size", "-1k", "-type", "f"],
        &[".", "-size", "5k"],
        &[".", "-size", "0"],
        &[".", "-size", "+10c", "-type", "f"],
        &[
            ".", "-name", ".hidden", "-prune", "-o", "-type", "f", "-print",
        ],
        &[
            ".", "-path", "./src", "-prune", "-o", "-name", "*.rs", "-print",
        ],
        &[".", "-name", "*.rs", "-a", "-type", "f"],
        &[".", "-name", "*.rs", "-and", "-path", "*src*"],
        &[".", "-name", "nothing-matches"],
        &[".", "-true"],
        &[".", "-false"],
        &[".", "-regex", ".*\\.rs"],
        &[".", "-regex", ".*/\\(lib\\|mod\\)\\.rs"],
        &[".", "-iregex", ".*B\\.TXT"],
        &[
            ".",
            "-regextype",
            "posix-extended",
            "-regex",
            ".*/(lib|mod)\\.rs",
        ],
        &[
            ".",
            "-regextype",
            "findutils-default",
            "-regex",
            ".*\\.json",
        ],
        &[".", "-regextype", "posix-basic", "-regex", ".*/a\\.rs"],
        &[".", "-newer", "a.rs", "-name", "zzz"],
        &[".", "-mtime", "-1", "-type", "f", "-name", "*.md"],
        &[".", "-mmin", "-60", "-name", "*.json"],
        &[".", "-perm", "-u+r", "-name", "*.md"],
        &[".", "-readable", "-name", "*.json"],
        &[".", "-executable", "-type", "d", "-name", "src"],
        &[".", "-name", "*.rs", "-printf", "%f\\n"],
        &[".", "-type", "f", "-printf", "%p %s\\n"],
        &[".", "-name", "*.md", "-exec", "cat", "{}", ";"],
        &[".", "-name", "*.json", "-exec", "echo", "found", "{}", "+"],
        &[".", "-name", "*.rs", "-quit"],
        &[".", "-depth", "-name", "deep"],
        &[".", "-links", "1", "-type", "f", "-name", "a.rs"],
        &[".", "-samefile", "a.rs"],
        &[".", "-L", "-name", "link.rs", "-type", "f"],
        &["-L", ".", "-name", "link.rs", "-type", "f"],
        &[".", "-xtype", "f", "-name", "link.rs"],
        &["missing-dir"],
        &[".", "-name", "*.rs", "-print0"],
        &[".", "-lname", "a.*"],
    ];
    let mut differences = Vec::new();
    for args in expressions {
        let sorted = |(text, code): (String, Option<i32>)| {
            let mut parts: Vec<String> = text.split(['\n', '\0']).map(str::to_owned).collect();
            parts.sort();
            (parts, code)
        };
        let ours = sorted(run(&ws.root, WAVESH, &["find"], args));
        let gnu = sorted(run(&ws.root, "find", &[], args));
        if ours != gnu {
            differences.push(format!(
                "find {}\n--- wavesh {ours:?}\n--- GNU {gnu:?}",
                args.join(" ")
            ));
        }
    }
    // GNU's default dialect takes `\{2\}` literally: that call goes to the system find.
    let literal = Command::new(WAVESH)
        .args(["find", ".", "-regex", ".*a\\{2\\}"])
        .current_dir(&ws.root)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&literal.stdout), "./aa{2}\n");
    assert!(expressions.len() >= 60, "{} expressions", expressions.len());
    assert!(
        differences.is_empty(),
        "{} of {} differ:\n{}",
        differences.len(),
        expressions.len(),
        differences.join("\n")
    );
}

/// A reader that goes away ends the search by SIGPIPE, as it ends GNU grep: `grep -r x |
/// head` does not read the rest of the tree (SEARCH-6: behaviour in pipes).
#[test]
fn search_6_closed_output_ends_the_walk() {
    let ws = Workspace::new();
    let line = "x marks the spot\n".repeat(1000);
    for i in 0..200 {
        std::fs::write(ws.root.join(format!("f{i:03}.txt")), &line).unwrap();
    }
    let run = ws.run(&[], "grep -r x . | head -1; echo \"grep=${PIPESTATUS[0]}\"");
    let out = run.stdout();
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some("f000.txt:x marks the spot"), "{run}");
    // 3.4 MB of matches do not fit a pipe: grep's next write after `head` left ended it
    // by SIGPIPE (128 + 13), as GNU grep ends.
    assert_eq!(lines.next(), Some("grep=141"), "{run}");
}
