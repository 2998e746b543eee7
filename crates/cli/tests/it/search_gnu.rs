//! Regression tests for the shadows' GNU behaviour (SEARCH-1, SEARCH-2, SEARCH-3,
//! SEARCH-6): pipes and write errors, streaming, the regex dialect, the locale, output,
//! patterns, file selection, find and rg. Each case names the output GNU grep 3.8 or GNU
//! find 4.9 gives; where the system tool is GNU, the same script also runs against it and
//! must agree.

use std::path::Path;
use std::process::Command;

use crate::util::{WAVESH, Workspace};

/// What a shell script printed and how it ended.
struct Out {
    stdout: Vec<u8>,
    stderr: String,
    code: Option<i32>,
}

impl Out {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
}

/// Runs `script` with bash in `dir`: `$G` is wavesh's grep (strict: a hand-over to the
/// system grep is an error, so the output is wavesh's own), `$F` its find, `$R` its rg.
fn sh(dir: &Path, locale: &str, script: &str) -> Out {
    let output = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "G() {{ \"$W\" grep \"$@\"; }}; F() {{ \"$W\" find \"$@\"; }}; R() {{ \"$W\" rg \"$@\"; }}\n{script}"
        ))
        .env("W", WAVESH)
        .env("WAVESH_GREP_STRICT", "1")
        .env("LC_ALL", locale)
        .env_remove("RUST_BACKTRACE")
        .current_dir(dir)
        .output()
        .unwrap();
    let out = Out {
        stdout: output.stdout,
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        code: output.status.code(),
    };
    assert!(
        !out.stderr.contains("panicked at"),
        "a panic in `{script}`: {}",
        out.stderr
    );
    out
}

/// Whether the system grep is GNU grep (then scripts are also checked against it).
/// Whether the system `tool` is GNU's, to compare with; a missing prerequisite (SKIPPED,
/// or a failure in CI) where it is not.
fn system_is_gnu(tool: &str) -> bool {
    let gnu = Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("GNU"));
    if !gnu {
        crate::util::missing_prerequisite(
            &format!("GNU {tool} as the system {tool}, to compare with"),
            "apt-get install findutils grep",
        );
    }
    gnu
}

/// `script` (using `G`) run by wavesh gives `expected` and `code`; with the system GNU grep
/// in place of `G`, the same.
fn grep_case(dir: &Path, locale: &str, script: &str, expected: &str, code: i32) {
    let ours = sh(dir, locale, script);
    assert_eq!(
        (ours.text().as_str(), ours.code),
        (expected, Some(code)),
        "wavesh: {script}\nstderr: {}",
        ours.stderr
    );
    if system_is_gnu("grep") {
        let gnu = sh(
            dir,
            locale,
            &format!("G() {{ command grep \"$@\"; }}\n{script}"),
        );
        assert_eq!(
            (gnu.text().as_str(), gnu.code),
            (expected, Some(code)),
            "GNU grep disagrees with the expectation: {script}"
        );
    }
}

#[test]
fn search_6_closed_pipes_end_every_subcommand_by_sigpipe() {
    let ws = Workspace::new();
    // More output than a pipe holds, so the writer meets the closed pipe.
    let long = "n".repeat(200);
    for i in 0..400 {
        std::fs::write(ws.root.join(format!("{long}{i:03}")), "x\n".repeat(200)).unwrap();
    }
    for script in [
        "F . | head -1 >/dev/null; echo \"${PIPESTATUS[0]}\"",
        "G -r x . | head -1 >/dev/null; echo \"${PIPESTATUS[0]}\"",
        "cat n* | G x | head -1 >/dev/null; echo \"${PIPESTATUS[1]}\"",
        "R x | head -1 >/dev/null; echo \"${PIPESTATUS[0]}\"",
    ] {
        let out = sh(&ws.root, "C.UTF-8", script);
        assert_eq!(out.text(), "141\n", "{script}: {}", out.stderr);
        assert_eq!(out.stderr, "", "{script}");
    }
}

#[test]
fn search_6_write_errors_are_gnus() {
    let ws = Workspace::new();
    std::fs::write(ws.root.join("a"), "x\n").unwrap();
    let out = sh(&ws.root, "C.UTF-8", "G x a >/dev/full");
    assert_eq!(out.code, Some(2));
    assert_eq!(out.stderr, "grep: write error: No space left on device\n");
    let out = sh(&ws.root, "C.UTF-8", "G -r x . >/dev/full");
    assert_eq!(out.code, Some(2));
    assert_eq!(out.stderr, "grep: write error: No space left on device\n");
    let out = sh(&ws.root, "C.UTF-8", "F . >/dev/full");
    assert_eq!(out.code, Some(1));
    assert_eq!(
        out.stderr,
        "find: \u{2018}standard output\u{2019}: No space left on device\nfind: write error\n"
    );
    let out = sh(&ws.root, "C", "F . -printf '%p\\n' >/dev/full");
    assert_eq!(out.code, Some(1));
    assert_eq!(
        out.stderr,
        "find: 'standard output': No space left on device\nfind: write error\n"
    );
}

#[test]
fn search_6_invalid_bytes_never_panic() {
    let ws = Workspace::new();
    for (script, expected) in [
        (r"printf '\201_\n' | G -ow _", "_\n"),
        (r"printf '\201_\n' | G -o _", "_\n"),
        (r"printf '\201_\n' | G -oP _", "_\n"),
        (r"printf '\201aa\n' | G -o '\(a\)\1'", "aa\n"),
        (r"printf 'x\377y\377aa\n' | G -oE '(a)\1'", "aa\n"),
    ] {
        grep_case(&ws.root, "C.UTF-8", script, expected, 0);
    }
}

#[test]
fn search_6_grep_streams_and_stops_at_max_count() {
    let ws = Workspace::new();
    // An endless input: -m1 ends at the first match instead of reading on.
    let out = sh(&ws.root, "C.UTF-8", "yes x | timeout 20 \"$W\" grep -m1 x");
    assert_eq!((out.text().as_str(), out.code), ("x\n", Some(0)));
    // What -m left unread stays for the next reader of a seekable stdin.
    std::fs::write(ws.root.join("f"), "1\n2\n3\n1\n5\n").unwrap();
    for (script, expected) in [
        ("{ G -m1 1; cat; } < f", "1\n2\n3\n1\n5\n"),
        ("{ G -m2 1; cat; } < f", "1\n1\n5\n"),
        (
            "{ G -m1 -A1 1; echo ==; cat; } < f",
            "1\n2\n==\n2\n3\n1\n5\n",
        ),
    ] {
        grep_case(&ws.root, "C.UTF-8", script, expected, 0);
    }
    // -q stops at the first match but leaves the offset where reading stopped.
    grep_case(&ws.root, "C.UTF-8", "{ G -q 3; G -c 1; } < f", "0\n", 1);
    // Matches are printed as they arrive: the writer waits until the reader has seen
    // the first line before it writes the second (a grep that read to the end first
    // would never print, and `timeout` would end the test).
    let out = sh(
        &ws.root,
        "C.UTF-8",
        "mkfifo p; ( echo first; while [ ! -e seen ]; do sleep 0.05; done; echo second ) > p &
         timeout 20 \"$W\" grep . < p | while read -r l; do echo \"$l\"; touch seen; done",
    );
    assert_eq!(out.text(), "first\nsecond\n", "{}", out.stderr);
}

/// Memory stays flat on a long stream: 1 GiB through grep under a 700 MB address-space
/// limit (the whole input held in memory would not fit).
#[test]
fn search_6_grep_memory_is_flat_on_a_long_stream() {
    let ws = Workspace::new();
    let out = sh(
        &ws.root,
        "C.UTF-8",
        "line=$(printf 'y%.0s' $(seq 1000)); ulimit -v 700000;
         yes \"$line\" | head -c 1073741824 | \"$W\" grep -c zzz; echo \"grep=${PIPESTATUS[2]}\"",
    );
    assert_eq!(out.text(), "0\ngrep=1\n", "{}", out.stderr);
}

#[test]
fn search_1_gnu_regex_dialect() {
    let ws = Workspace::new();
    std::fs::write(
        ws.root.join("t"),
        "*a\na{1\n)\n+a\naaa\nb\n{1}a\nfoo bar\nfoobar\nx<y\n",
    )
    .unwrap();
    for (script, expected) in [
        (r"G '\<bar' t", "foo bar\n"),
        (r"G 'foo\>' t", "foo bar\n"),
        (r"G -o '\<b[a-z]*' t", "b\nbar\n"),
        ("G -E 'a{1' t", "a{1\n"),
        ("G -E ')' t", ")\n"),
        ("G -c -E '*a' t", "7\n"),
        ("G -c -E 'a|*b' t", "8\n"),
        ("G '*a' t", "*a\n"),
        (r"G -c 'a\{,2\}' t", "10\n"),
        (r"G '\{1\}a' t", "{1}a\n"),
        ("G -x -E 'a{1,2}{3}' t", "aaa\n"),
        (r"G -x 'a**' t", "aaa\n"),
        ("G -E '^(a|b)$' t", "b\n"),
        (r"G 'x\<y' t", ""),
    ] {
        grep_case(
            &ws.root,
            "C.UTF-8",
            script,
            expected,
            i32::from(expected.is_empty()),
        );
    }
    for (script, message) in [
        (
            "G '[:space:]' t",
            "character class syntax is [[:space:]], not [:space:]",
        ),
        ("G -E '[[:notdef:]]' t", "Invalid character class name"),
        (r"G 'a\{1' t", r"Unmatched \{"),
        (r"G 'a\{2,1\}' t", r"Invalid content of \{\}"),
        ("G '[z-a]' t", "Invalid range end"),
        (r"G '\(a\)\2' t", "Invalid back reference"),
        (r"G -e 'a\(.\)' -e 'b\1' t", "Invalid back reference"),
        ("G -E '(a' t", r"Unmatched ( or \("),
        ("G '[a' t", "Unmatched [, [^, [:, [., or [="),
    ] {
        let out = sh(&ws.root, "C.UTF-8", script);
        assert_eq!(out.code, Some(2), "{script}");
        assert_eq!(out.stderr, format!("grep: {message}\n"), "{script}");
    }
}

#[test]
fn search_1_locale_classes_and_bytes() {
    let ws = Workspace::new();
    for (locale, script, expected) in [
        ("C.UTF-8", r"printf '\303\251\n' | G '[[:lower:]]'", "é\n"),
        (
            "C.UTF-8",
            r"printf '\303\211\n' | G -c '[[:upper:]]'",
            "1\n",
        ),
        ("C.UTF-8", r"printf '\303\251\n' | G -ci 'É'", "1\n"),
        ("C.UTF-8", r"printf '\303\251\n' | G -c '^.$'", "1\n"),
        ("C", r"printf '\303\251\n' | G -c '^..$'", "1\n"),
        ("C", r"printf '\200\n' | G -c .", "1\n"),
        ("C", r"printf 'a\200b\n' | G -c 'a[^x]b'", "1\n"),
        (
            "C.UTF-8",
            r"printf 'fOo foo\n' | G -Ei '(foo) \1'",
            "fOo foo\n",
        ),
        (
            "C.UTF-8",
            r"printf 'FOO foo\n' | G -i '\(foo\) \1'",
            "FOO foo\n",
        ),
    ] {
        grep_case(&ws.root, locale, script, expected, 0);
    }
}

#[test]
fn search_6_output_is_gnus() {
    let ws = Workspace::new();
    std::fs::write(ws.root.join("bin"), b"a\0b\nxa\n").unwrap();
    std::fs::write(ws.root.join("t"), "a\na\nb\nc\nx\nx\na\n").unwrap();
    // The binary-file note goes to stderr.
    let out = sh(&ws.root, "C.UTF-8", "G a bin");
    assert_eq!((out.text().as_str(), out.code), ("", Some(0)));
    assert_eq!(out.stderr, "grep: bin: binary file matches\n");
    for (script, expected) in [
        ("G -c a bin", "2\n"),
        ("G -n -m1 -A5 a t", "1:a\n2-a\n3-b\n4-c\n5-x\n6-x\n"),
        ("G -o -C1 a t", "a\na\n--\na\n"),
        ("G -o -v -C1 b t", "b\n"),
        ("G -o -v -n -C1 b t", "3-b\n"),
        ("G -C 0 a t", "a\na\n--\na\n"),
        ("G -n -C1 c t", "3-b\n4:c\n5-x\n"),
        ("G -A1 -B0 b t", "b\nc\n"),
    ] {
        grep_case(&ws.root, "C.UTF-8", script, expected, 0);
    }
}

#[test]
fn search_1_pattern_sources_are_gnus() {
    let ws = Workspace::new();
    std::fs::write(ws.root.join("t"), "ab\nxy\n").unwrap();
    std::fs::write(ws.root.join("empty"), "").unwrap();
    std::fs::write(ws.root.join("blank"), "\n").unwrap();
    grep_case(&ws.root, "C.UTF-8", "G -f empty t", "", 1);
    grep_case(&ws.root, "C.UTF-8", "G -v -f empty t", "ab\nxy\n", 0);
    grep_case(&ws.root, "C.UTF-8", "G -c -f blank t", "2\n", 0);
    grep_case(&ws.root, "C.UTF-8", "G -c -e $'zz\\n' t", "2\n", 0);
    grep_case(&ws.root, "C.UTF-8", "G -e $'zz\\nxy' t", "xy\n", 0);
    let out = sh(&ws.root, "C.UTF-8", "G -f missing t");
    assert_eq!(out.code, Some(2));
    assert_eq!(out.stderr, "grep: missing: No such file or directory\n");
}

#[test]
fn search_1_file_selection_is_gnus() {
    let ws = Workspace::new();
    for (path, text) in [
        ("a", "hit\n"),
        ("b", "hit\n"),
        ("c.txt", "hit\n"),
        ("dir/g", "hit\n"),
        ("x/f", "hit\n"),
    ] {
        let path = ws.root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    std::fs::create_dir(ws.root.join("elsewhere")).unwrap();
    std::fs::write(ws.root.join("elsewhere/e"), "hit\n").unwrap();
    std::os::unix::fs::symlink("elsewhere", ws.root.join("link")).unwrap();
    // Compared sorted and without "./": wavesh prints paths without it (SEARCH-1).
    let sorted = |s: &str| format!("{s} | sed 's|^\\./||' | sort");
    for (script, expected) in [
        (
            "G -rl --exclude='[ab]' hit .",
            "c.txt\ndir/g\nelsewhere/e\nx/f\n",
        ),
        (
            "G -rl --exclude-dir=dir/ hit .",
            "a\nb\nc.txt\nelsewhere/e\nx/f\n",
        ),
        (
            "G -rl --exclude-dir=x hit . x",
            "a\nb\nc.txt\ndir/g\nelsewhere/e\n",
        ),
        ("G -rl --exclude='*' --include=a hit .", "a\n"),
        ("G -rl --include=a --exclude='*' hit .", ""),
        ("G -rl --include='*.txt' hit .", "c.txt\n"),
        ("G -l --exclude=a hit a b", "b\n"),
        ("G -rl hit link", "link/e\n"),
        ("G -Rl hit . | grep link", "link/e\n"),
    ] {
        let ours = sh(&ws.root, "C.UTF-8", &sorted(script));
        assert_eq!(ours.text(), expected, "{script}: {}", ours.stderr);
        if system_is_gnu("grep") {
            let gnu = sh(
                &ws.root,
                "C.UTF-8",
                &format!("G() {{ command grep \"$@\"; }}\n{}", sorted(script)),
            );
            assert_eq!(gnu.text(), expected, "GNU grep: {script}");
        }
    }
    // -r does not follow a symbolic link met in the walk; -R does.
    let out = sh(&ws.root, "C.UTF-8", "G -rl hit . | grep -c link");
    assert_eq!(out.text(), "0\n");
}

#[test]
fn search_2_find_refuses_execdir_with_a_relative_path_entry() {
    let ws = Workspace::new();
    for path in [".:/usr/bin:/bin", "/usr/bin:/bin:", "rel:/usr/bin:/bin"] {
        let out = sh(
            &ws.root,
            "C",
            &format!("PATH='{path}' \"$W\" find . -maxdepth 0 -execdir true ';'"),
        );
        assert_eq!(out.code, Some(1), "{path}");
        assert!(
            out.stderr.starts_with("find: The ")
                && out
                    .stderr
                    .contains("insecure in combination with the -execdir action of find"),
            "{path}: {}",
            out.stderr
        );
    }
    let out = sh(
        &ws.root,
        "C",
        "\"$W\" find . -maxdepth 0 -execdir echo '{}' ';'",
    );
    assert_eq!((out.text().as_str(), out.code), ("./.\n", Some(0)));
}

#[test]
fn search_3_rg_counts_matches_and_names_like_ripgrep() {
    let ws = Workspace::new();
    std::fs::write(ws.root.join("f"), "aa a\nb\na\n").unwrap();
    std::fs::write(ws.root.join("g"), "a\n").unwrap();
    for (script, expected) in [
        ("R -o -c a f", "4\n"),
        ("R -c a f", "2\n"),
        ("R -n b f", "2:b\n"),
        ("R b f g", "f:b\n"),
        ("R -c a | sort", "f:2\ng:1\n"),
    ] {
        let out = sh(&ws.root, "C.UTF-8", script);
        assert_eq!(out.text(), expected, "{script}: {}", out.stderr);
    }
}

/// A link to wavesh named `grep` first on PATH hands unsupported flags to the real
/// system grep, never to itself.
#[test]
fn search_5_a_link_named_grep_hands_over_to_the_system_grep() {
    let ws = Workspace::new();
    std::fs::create_dir(ws.root.join("bin")).unwrap();
    std::os::unix::fs::symlink(WAVESH, ws.root.join("bin/grep")).unwrap();
    std::fs::write(ws.root.join("t"), "hit\n").unwrap();
    let output = Command::new("bash")
        .arg("-c")
        .arg("PATH=\"$PWD/bin:$PATH\" timeout 20 grep -z hit t | od -An -c")
        .current_dir(&ws.root)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        text.split_whitespace().collect::<Vec<_>>(),
        ["h", "i", "t", "\\n", "\\0"],
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// wavesh's rg against ripgrep on 50 invocations over a real tree (this crate's sources,
/// with ignored, hidden and binary files beside them): the same exit code and the same
/// lines, compared sorted (SEARCH-3). Without `rg` installed there is nothing to compare.
#[test]
fn search_3_rg_matches_ripgrep() {
    if Command::new("rg").arg("--version").output().is_err() {
        crate::util::missing_prerequisite(
            "ripgrep (rg on PATH), to compare wavesh's rg with",
            "apt-get install ripgrep; scripts/test does it as root",
        );
        return;
    }
    let ws = Workspace::new();
    let tree = ws.root.join("tree");
    let sources = Path::new(env!("CARGO_MANIFEST_DIR")).join("../wavesh-search/src");
    std::fs::create_dir_all(tree.join("src")).unwrap();
    for entry in std::fs::read_dir(&sources).unwrap() {
        let path = entry.unwrap().path();
        // The sources' own files (find's module directory is left out).
        if path.is_file() {
            std::fs::copy(&path, tree.join("src").join(path.file_name().unwrap())).unwrap();
        }
    }
    for (path, text) in [
        (".gitignore", "target/\n*.log\n"),
        ("target/debug/out.rs", "fn ignored_match() {}\n"),
        ("build.log", "error: fn in a log\n"),
        (".hidden/secret.rs", "fn hidden_fn() {}\n"),
        (".env", "KEY=fn\n"),
        (
            "docs/notes.md",
            "# Notes\nfn is a keyword.\nFN upper\nsome fn_call here\n",
        ),
        ("docs/data.txt", "alpha\nbeta\ngamma\nalpha beta\n"),
        ("script.py", "def parse(x):\n    return x  # fn\n"),
    ] {
        let path = tree.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    std::fs::write(tree.join("blob.bin"), b"fn\0\x01\x02binary\n").unwrap();
    // A git repository, as real trees are: ripgrep reads .gitignore only inside one.
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&tree)
        .status();
    if !git.is_ok_and(|s| s.success()) {
        crate::util::missing_prerequisite(
            "git (git init failed), for ripgrep's gitignore rules",
            "apt-get install git; scripts/test does it as root",
        );
        return;
    }
    let invocations: &[&[&str]] = &[
        &["fn parse"],
        &["-n", "fn parse"],
        &["-i", "FN PARSE"],
        &["-w", "fn"],
        &["-x", "alpha"],
        &["-c", "fn"],
        &["-l", "fn"],
        &["--files-without-match", "fn"],
        &["-o", "fn [a-z_]+"],
        &["-o", "-c", "fn"],
        &["-F", "a.b"],
        &["-F", "-e", "alpha", "-e", "gamma"],
        &["-e", "alpha", "-e", "beta"],
        &["-g", "*.md", "fn"],
        &["-g", "!*.rs", "fn"],
        &["-t", "rust", "-c", "pub fn"],
        &["-T", "rust", "fn"],
        &["-t", "py", "parse"],
        &["-m", "1", "fn"],
        &["-m", "2", "-n", "pub"],
        &["-A", "1", "alpha"],
        &["-B", "1", "gamma"],
        &["-C", "1", "-n", "beta"],
        &["--hidden", "fn"],
        &["--no-ignore", "fn"],
        &["-u", "-l", "fn"],
        &["-uu", "-l", "fn"],
        &["--files"],
        &["--files", "-g", "*.rs"],
        &["--hidden", "--files"],
        &["-S", "fn"],
        &["-S", "FN"],
        &["-s", "FN"],
        &["-n", "alpha", "docs/data.txt"],
        &["alpha", "docs/data.txt"],
        &["-H", "alpha", "docs/data.txt"],
        &["-I", "fn", "docs"],
        &["alpha", "docs/data.txt", "docs/notes.md"],
        &["-N", "fn", "docs"],
        &["-v", "-c", "fn", "docs"],
        &["-q", "alpha"],
        &["-q", "no_such_text_anywhere"],
        &["no_such_text_anywhere"],
        &["-n", "^use ", "src"],
        &["-c", r"\bSome\(", "src"],
        &["-w", "-o", "[a-z]+_[a-z]+", "docs"],
        &["-x", "-c", "", "docs"],
        &["-b", "-o", "beta", "docs/data.txt"],
        &["-l", "-i", "unsupported"],
        &["-c", "-F", "(", "src"],
    ];
    assert_eq!(invocations.len(), 50);
    let run = |program: &str, prefix: &[&str], args: &[&str]| {
        let output = Command::new(program)
            .args(prefix)
            .args(args)
            .current_dir(&tree)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        lines.sort();
        (lines, output.status.code())
    };
    let mut differ = Vec::new();
    for args in invocations {
        let ours = run(WAVESH, &["rg"], args);
        let theirs = run("rg", &[], args);
        if ours != theirs {
            // Only the lines that differ, each side's own.
            let only = |a: &[String], b: &[String]| {
                a.iter()
                    .filter(|l| !b.contains(l))
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            differ.push(format!(
                "rg {}\n--- only wavesh (exit {:?})\n{}\n--- only ripgrep (exit {:?})\n{}",
                args.join(" "),
                ours.1,
                only(&ours.0, &theirs.0),
                theirs.1,
                only(&theirs.0, &ours.0)
            ));
        }
    }
    assert!(
        differ.is_empty(),
        "{} of 50 differ:\n{}",
        differ.len(),
        differ.join("\n\n")
    );
}

/// -P is PCRE2 with GNU's options and messages (SEARCH-1).
#[test]
fn search_1_perl_patterns_are_gnus() {
    let ws = Workspace::new();
    std::fs::write(ws.root.join("in"), format!("{}b\n", "a".repeat(32))).unwrap();
    std::fs::write(ws.root.join("bad"), b"j\x82j\nj\nk\x82\n").unwrap();
    for (locale, script, expected, code) in [
        (
            "C.UTF-8",
            r"printf '\342\202\254 euro\n' | G -P '^\p{S}'",
            "€ euro\n",
            0,
        ),
        (
            "C",
            r"printf '\342\202\254 euro\n' | G -cP '^\p{S}'",
            "0\n",
            1,
        ),
        (
            "C.UTF-8",
            r"printf '\342\202\254 euro\n' | G -oP '. euro'",
            "€ euro\n",
            0,
        ),
        ("C.UTF-8", "G -cP j bad", "2\n", 0),
        ("C.UTF-8", "G -P 'k$' bad", "", 1),
        ("C.UTF-8", "G -aoP 'k*' bad", "k\n", 0),
        (
            "C.UTF-8",
            r"printf 'FOO foo\n' | G -Pi '(foo) \1'",
            "FOO foo\n",
            0,
        ),
        ("C.UTF-8", r"printf 'a1 b\n' | G -oP '\w\d'", "a1\n", 0),
        ("C.UTF-8", r"printf 'x ab\n' | G -wP 'ab'", "x ab\n", 0),
    ] {
        grep_case(&ws.root, locale, script, expected, code);
    }
    for (script, message) in [
        ("G -P ')' in", "grep: unmatched closing parenthesis\n"),
        (
            "G -P -e a -e b in",
            "grep: the -P option only supports a single pattern\n",
        ),
        (
            "G -P '((a+)*)+$' in",
            "grep: in: exceeded PCRE's backtracking limit\n",
        ),
    ] {
        let out = sh(&ws.root, "C.UTF-8", script);
        assert_eq!(
            (out.stderr.as_str(), out.code, out.text().as_str()),
            (message, Some(2), ""),
            "{script}"
        );
    }
}

/// What GNU grep does with binary input, encoding errors, -T, its own output file and
/// inputs it need not read (SEARCH-6).
#[test]
fn search_6_binary_input_and_special_files_are_gnus() {
    let ws = Workspace::new();
    std::fs::write(ws.root.join("nul"), b"a\0a\nb\n").unwrap();
    std::fs::write(
        ws.root.join("enc"),
        b"Alfred Jones\nPedro P\xe9rez\nJohn Smith\n",
    )
    .unwrap();
    std::fs::write(ws.root.join("tab"), "x\n\n").unwrap();
    std::fs::write(ws.root.join("ten"), "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n").unwrap();
    for (script, expected, code) in [
        // NUL bytes end lines in a binary input.
        ("G -c a nul", "2\n", 0),
        ("G -c '^a$' nul", "2\n", 0),
        ("G -I -c a nul", "0\n", 1),
        // A line not valid in UTF-8 is left out; the search goes on.
        ("G . enc 2>/dev/null", "Alfred Jones\nJohn Smith\n", 0),
        ("G -I . enc", "Alfred Jones\nJohn Smith\n", 0),
        ("G -a -c . enc", "3\n", 0),
        // -T: no tab before an empty line; numbers padded to the size's digits.
        ("G -T '^' tab /dev/null", "tab:\tx\ntab:\n", 0),
        ("G -Tn a ten /dev/null", "ten: 1:\ta\n", 0),
        // No line can be selected: nothing is read, a missing file is no error.
        ("G -m0 y missing", "", 1),
        ("G -f /dev/null missing", "", 1),
        ("G -v '' missing", "", 1),
        ("G -L -m0 y /dev/null", "/dev/null\n", 1),
    ] {
        grep_case(&ws.root, "C.UTF-8", script, expected, code);
    }
    let out = sh(&ws.root, "C.UTF-8", "G P enc 2>&1 >o");
    assert_eq!(out.text(), "grep: enc: binary file matches\n");
    // An input that is the output file is refused instead of read while it grows.
    let out = sh(
        &ws.root,
        "C.UTF-8",
        "cp ten out; timeout 20 \"$W\" grep a out >> out",
    );
    assert_eq!(out.code, Some(2));
    assert_eq!(out.stderr, "grep: out: input file is also the output\n");
    let out = sh(
        &ws.root,
        "C.UTF-8",
        "cp ten out; timeout 20 \"$W\" grep -r a . >> out",
    );
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains("out: input file is also the output"),
        "{}",
        out.stderr
    );
    let out = sh(
        &ws.root,
        "C.UTF-8",
        "cp ten out; timeout 20 \"$W\" grep -c a out >> out",
    );
    assert_eq!(out.code, Some(0), "-c cannot feed itself: {}", out.stderr);
}

/// Pattern errors name every bad pattern, with FILE:LINE for -f ones (SEARCH-6).
#[test]
fn search_6_every_pattern_error_is_reported() {
    let ws = Workspace::new();
    std::fs::write(ws.root.join("g"), "1[[\n\n3[[\n\n5[[\n").unwrap();
    std::fs::write(ws.root.join("h"), "1[[\n\n\n4[[\n").unwrap();
    let out = sh(&ws.root, "C.UTF-8", "G -f g -f h /dev/null");
    assert_eq!(out.code, Some(2));
    let bracket = "Unmatched [, [^, [:, [., or [=";
    assert_eq!(
        out.stderr,
        format!(
            "grep: g:1: {bracket}\ngrep: g:3: {bracket}\ngrep: g:5: {bracket}\ngrep: h:4: {bracket}\n"
        )
    );
    let out = sh(&ws.root, "C.UTF-8", "G -e '1[[' -e '2[[' /dev/null");
    assert_eq!(out.stderr, format!("grep: {bracket}\ngrep: {bracket}\n"));
    let out = sh(
        &ws.root,
        "C.UTF-8",
        "G -E -f <(printf '%01000d' 0 | tr 0 '(') /dev/null",
    );
    assert_eq!(
        (out.stderr.as_str(), out.code),
        ("grep: stack overflow\n", Some(2))
    );
}

/// Walk errors in GNU's words; -R reports a loop and a dangling link (SEARCH-6).
#[test]
fn search_6_walk_errors_are_gnus() {
    let ws = Workspace::new();
    std::fs::create_dir(ws.root.join("dir")).unwrap();
    std::fs::write(ws.root.join("dir/a"), "a\n").unwrap();
    std::os::unix::fs::symlink(".", ws.root.join("dir/d")).unwrap();
    std::os::unix::fs::symlink("dangling", ws.root.join("dir/e")).unwrap();
    let out = sh(&ws.root.join("dir"), "C.UTF-8", "G -R '^' | sort");
    assert_eq!(out.text(), "a:a\n");
    let mut errors: Vec<&str> = out.stderr.lines().collect();
    errors.sort_unstable();
    assert_eq!(
        errors,
        [
            "grep: d: warning: recursive directory loop",
            "grep: e: No such file or directory"
        ]
    );
}

/// -printf escapes and flags, symbolic -perm with X and -L loops are GNU's, and a -regex
/// runs the system find where it is GNU's (SEARCH-2, SEARCH-5).
#[test]
fn search_2_find_printf_perm_regex_and_loops_are_gnus() {
    if !system_is_gnu("find") {
        return;
    }
    let ws = Workspace::new();
    std::fs::create_dir_all(ws.root.join("t/d")).unwrap();
    std::fs::write(ws.root.join("t/d/f"), "x").unwrap();
    std::fs::write(ws.root.join("t/a\nb"), "x").unwrap();
    std::os::unix::fs::symlink("..", ws.root.join("t/d/up")).unwrap();
    for args in [
        &["t", "-maxdepth", "0", "-printf", r"\18\118\1118\n\cfoo"][..],
        &["t", "-printf", "|%-6.6p| %+03d\n"],
        &["t/", "-printf", "(%h)/(%f)\n"],
        &["t", "-perm", "/u=wX", "-type", "d"],
        &["t", "-regextype", "findutils-default", "-regex", ".*/a.b"],
        &["-L", "t", "-name", "f"],
    ] {
        let run = |program: &str, prefix: &[&str]| {
            let output = Command::new(program)
                .args(prefix)
                .args(args)
                .current_dir(&ws.root)
                .env("LC_ALL", "C")
                .output()
                .unwrap();
            let mut lines: Vec<Vec<u8>> = output
                .stdout
                .split(|&b| b == b'\n')
                .map(<[u8]>::to_vec)
                .collect();
            lines.sort();
            (lines, output.status.code(), output.stderr)
        };
        let ours = run(WAVESH, &["find"]);
        let gnu = run("find", &[]);
        assert_eq!(ours, gnu, "find {args:?}");
    }
}

/// -z, -Z, --line-buffered, -d, -D, group separators and abbreviated long options are
/// wavesh's own, with GNU's output (SEARCH-1, SEARCH-5).
#[test]
fn search_1_null_data_separators_and_long_option_prefixes() {
    let ws = Workspace::new();
    std::fs::write(ws.root.join("z"), b"a\nb\0c\0a1\n2\0").unwrap();
    std::fs::write(ws.root.join("t"), "x\ny\nz\nw\nx\n").unwrap();
    std::fs::create_dir(ws.root.join("dir")).unwrap();
    std::fs::write(ws.root.join("dir/f"), "x\n").unwrap();
    for (script, expected, code) in [
        ("G -z 'a.b' z | tr '\\0' @", "a\nb@", 0),
        ("G -z '^b' z; echo $?", "1\n", 0),
        ("G -zc '^c$' z", "1\n", 0),
        (r"G -z '1.2\(\)\1' z | tr '\0' @", "a1\n2@", 0),
        ("G -z 'a[^x]b' z | tr '\\0' @", "a\nb@", 0),
        ("G -lZ x t dir/f | tr '\\0' @", "t@dir/f@", 0),
        ("G -cZ x t | tr '\\0' @", "2\n", 0),
        ("G -HZ y t | tr '\\0' @", "t@y\n", 0),
        ("G --line-buffered y t", "y\n", 0),
        ("G -d skip x dir t", "t:x\nt:x\n", 0),
        ("G -D skip x /dev/null t", "t:x\nt:x\n", 0),
        ("G --group-separator=XYZ -A0 x t", "x\nXYZ\nx\n", 0),
        ("G --no-group-separator -A0 x t", "x\nx\n", 0),
        ("G --no-gr -A0 x t", "x\nx\n", 0),
        ("G --count --inv x t", "3\n", 0),
        ("G --line-n y t", "2:y\n", 0),
    ] {
        grep_case(&ws.root, "C.UTF-8", script, expected, code);
    }
    let out = sh(&ws.root, "C.UTF-8", "G -d read x dir");
    assert_eq!(
        (out.stderr.as_str(), out.code),
        ("grep: dir: Is a directory\n", Some(2))
    );
}

/// Through the tool, a grep's output is GNU's alone: the meaning of its exit code 1
/// ("No matches found", OUT-3) goes to `returnCodeInterpretation` and stands in the text
/// only where the command printed nothing, never after the command's own last line.
#[test]
fn search_6_the_tool_adds_nothing_to_a_greps_output() {
    let ws = Workspace::new();
    std::fs::write(ws.root.join("f"), "a\nb\n").unwrap();
    for (command, text) in [
        ("env | grep -c WAVESH_NO_SUCH_TOKEN_ZZ", "0"),
        ("grep -c zz f", "0"),
        ("grep -H -c zz f", "f:0"),
        ("grep zz f", "No matches found"),
    ] {
        let (run, json) = ws.run_json(&[], command);
        assert_eq!(json["text"], text, "{command}\n{run}");
        assert_eq!(json["is_error"], false, "{command}");
        assert_eq!(
            json["returnCodeInterpretation"], "No matches found",
            "{command}"
        );
    }
}

/// Whether the C library has `locale` (as `locale -a` names it: `en_US.utf8`); a missing
/// prerequisite (SKIPPED, or a failure in CI) where it does not.
fn has_locale(locale: &str) -> bool {
    let listed = Command::new("locale").arg("-a").output().is_ok_and(|o| {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .any(|l| l == locale)
    });
    if !listed {
        crate::util::missing_prerequisite(
            &format!("the {locale} locale"),
            "scripts/test generates it (Debian's locales package, locale-gen)",
        );
    }
    listed
}

/// `--color=always` is GNU's: the SGR sequences of each part (names, numbers,
/// separators, matches, selected and context lines), `GREP_COLORS` with its booleans
/// `rv` and `ne`, and the deprecated `GREP_COLOR` with its warning (SEARCH-1).
#[test]
fn search_1_colors_are_gnus() {
    let ws = Workspace::new();
    std::fs::write(ws.root.join("t"), "ab\nxabcx\nzz\n").unwrap();
    let m = |s: &str| format!("\x1b[01;31m\x1b[K{s}\x1b[m\x1b[K");
    let c = |sgr: &str, s: &str| format!("\x1b[{sgr}m\x1b[K{s}\x1b[m\x1b[K");
    let name = c("35", "t");
    let colon = c("36", ":");
    let dash = c("36", "-");
    for (script, expected) in [
        (
            "G --color=always b t".to_owned(),
            format!("a{}\nxa{}cx\n", m("b"), m("b")),
        ),
        (
            "G --color=always -Hn -A1 -e b t".to_owned(),
            format!(
                "{name}{colon}{}{colon}a{}\n{name}{colon}{}{colon}xa{}cx\n{name}{dash}{}{dash}zz\n",
                c("32", "1"),
                m("b"),
                c("32", "2"),
                m("b"),
                c("32", "3"),
            ),
        ),
        (
            "G --color=always -c b t t".to_owned(),
            format!("{name}{colon}2\n{name}{colon}2\n"),
        ),
        (
            "G --color=always -l b t t".to_owned(),
            format!("{name}\n{name}\n"),
        ),
        (
            "G --color=always -ob b t".to_owned(),
            format!(
                "{}{colon}{}\n{}{colon}{}\n",
                c("32", "1"),
                m("b"),
                c("32", "5"),
                m("b")
            ),
        ),
        (
            "G --color=always -A0 zz t t".to_owned(),
            format!(
                "{name}{colon}{}\n{}\n{name}{colon}{}\n",
                m("zz"),
                c("36", "--"),
                m("zz")
            ),
        ),
        (
            "GREP_COLORS='sl=1:cx=2' G --color=always -A1 b t".to_owned(),
            format!(
                "\x1b[1m\x1b[Ka{}\n\x1b[1m\x1b[Kxa{}{}\n{}\n",
                m("b"),
                m("b"),
                c("1", "cx"),
                c("2", "zz")
            ),
        ),
        (
            "GREP_COLORS='mt=7:ne:rv:sl=1:cx=2' G --color=always -v -C1 z t".to_owned(),
            "\x1b[2mab\x1b[m\n\x1b[2mxabcx\x1b[m\n\x1b[1m\x1b[7mz\x1b[m\x1b[1m\x1b[7mz\x1b[m\n"
                .to_owned(),
        ),
        ("G --color=auto b t".to_owned(), "ab\nxabcx\n".to_owned()),
        ("G --color=never b t".to_owned(), "ab\nxabcx\n".to_owned()),
        (
            "GREP_COLOR=4 GREP_COLORS=mt=5 G --color=always b t 2>&1".to_owned(),
            format!("a{}\nxa{}cx\n", c("5", "b"), c("5", "b")),
        ),
        (
            "GREP_COLOR=4 G --color=always zz t 2>&1".to_owned(),
            format!(
                "grep: warning: GREP_COLOR='4' is deprecated; use GREP_COLORS='mt=4'\n{}\n",
                c("4", "zz")
            ),
        ),
        ("GREP_COLOR=4 G zz t 2>&1".to_owned(), "zz\n".to_owned()),
    ] {
        grep_case(&ws.root, "C.UTF-8", &script, &expected, 0);
    }
}

/// Where matches start together, -o and --color take the longest, across patterns and
/// alternatives, as GNU's POSIX matcher does (SEARCH-1).
#[test]
fn search_1_matches_are_leftmost_longest() {
    let ws = Workspace::new();
    std::fs::write(ws.root.join("u"), "a bb ccc dddd\nabcd\n").unwrap();
    for (script, expected) in [
        ("G -o -e cc -e ccc u", "ccc\n"),
        ("G -oE 'ab|abcd' u", "abcd\n"),
        ("G -oF -e b -e bb -e abc u", "bb\nabc\n"),
        ("G -ow -e b -e bb u", "bb\n"),
        ("G -oi -e D -e dd -e DDD u", "ddd\nd\nd\n"),
        (
            "G --color=always -E 'c|cc+' u",
            "a bb \x1b[01;31m\x1b[Kccc\x1b[m\x1b[K dddd\nab\x1b[01;31m\x1b[Kc\x1b[m\x1b[Kd\n",
        ),
    ] {
        grep_case(&ws.root, "C.UTF-8", script, expected, 0);
    }
}

/// `--help` and `--version` are wavesh's own texts (the version names the GNU grep
/// release followed, as its last word); both exit 0, and 2 with GNU's message when
/// standard output cannot be written.
#[test]
fn search_1_help_and_version() {
    let ws = Workspace::new();
    let out = sh(&ws.root, "C", "G --version | head -1; G -V x y | wc -l");
    assert_eq!(out.code, Some(0));
    let first = out.text();
    assert!(first.starts_with("grep (wavesh "), "{first}");
    assert!(first.lines().next().unwrap().ends_with(" 3.8"), "{first}");
    let out = sh(
        &ws.root,
        "C",
        "G --help | grep -c -e '^Usage: grep' -e '--color'",
    );
    assert_eq!((out.text().as_str(), out.code), ("2\n", Some(0)));
    for option in ["--help", "--version"] {
        let out = sh(&ws.root, "C", &format!("G {option} >/dev/full"));
        assert_eq!(out.code, Some(2), "{option}");
        assert_eq!(out.stderr, "grep: write error: No space left on device\n");
    }
}

/// In a Turkish locale, -i pairs `i` with `İ` and `ı` with `I` (not `i` with `I`), in
/// every dialect and with -o (SEARCH-1).
#[test]
fn search_1_turkish_case_folding() {
    if !has_locale("tr_TR.utf8") {
        return;
    }
    let ws = Workspace::new();
    std::fs::write(ws.root.join("t"), "I\nİ\nı\ni\nxIy\n").unwrap();
    for (script, expected) in [
        ("G -i i t", "İ\ni\n"),
        ("G -i I t", "I\nı\nxIy\n"),
        ("G -iF 'İ' t", "İ\ni\n"),
        ("G -ioE 'x(ı|q)y' t", "xIy\n"),
        ("G -io 'ı' t", "I\nı\nI\n"),
        ("G i t", "i\n"),
        ("G -ic '^.$' t", "4\n"),
    ] {
        grep_case(&ws.root, "tr_TR.UTF-8", script, expected, 0);
    }
    // What is not computed here is handed over: an error in strict mode.
    for script in ["G -i '[a-z]' t", "G -iP i t", "G -i '\\(i\\)\\1' t"] {
        let out = sh(&ws.root, "tr_TR.UTF-8", script);
        assert_eq!(out.code, Some(2), "{script}");
        assert!(
            out.stderr.contains("not supported by wavesh's grep"),
            "{script}"
        );
    }
}

/// `[[=a=]]` matches what the locale's collation makes an `a` (à, Å, A in en_US.UTF-8),
/// and only `a` in C (SEARCH-1).
#[test]
fn search_1_equivalence_classes_follow_the_collation() {
    if !has_locale("en_US.utf8") {
        return;
    }
    let ws = Workspace::new();
    std::fs::write(ws.root.join("t"), "a\nà\nA\nb\nÅ\ne\næ\n").unwrap();
    for (locale, script, expected) in [
        ("en_US.UTF-8", "G '[[=a=]]' t", "a\nà\nA\nÅ\n"),
        ("en_US.UTF-8", "G -c '[[=e=]x]' t", "1\n"),
        ("en_US.UTF-8", "G -x '[[=æ=]]' t", "æ\n"),
        ("en_US.UTF-8", "G -vc '[^[=a=]]' t", "4\n"),
        ("C", "G '[[=a=]]' t", "a\n"),
    ] {
        grep_case(&ws.root, locale, script, expected, 0);
    }
}

/// In a locale whose character set is not UTF-8, lines are read in that set: KOI8-R's
/// Cyrillic letters are letters (classes, -w, -i), EUC-JP's two-byte characters are one
/// character each and never match from their middle, and a byte that is no character
/// makes the input binary (SEARCH-1).
#[test]
fn search_1_other_character_sets() {
    if !has_locale("ru_RU.koi8r") || !has_locale("ja_JP.eucjp") {
        return;
    }
    let ws = Workspace::new();
    // KOI8-R: "Привет" (capital П is 0xF0), "abc", "П".
    std::fs::write(
        ws.root.join("koi"),
        b"\xf0\xd2\xc9\xd7\xc5\xd4\nabc\n\xf0\n",
    )
    .unwrap();
    std::fs::write(ws.root.join("koi-p"), b"\xd0\n").unwrap();
    // EUC-JP: "あb", "ab", two characters B0B1 A2A3, an invalid byte.
    std::fs::write(
        ws.root.join("euc"),
        b"\xa4\xa2b\nab\n\xb0\xb1\xa2\xa3\na\xff\n",
    )
    .unwrap();
    std::fs::write(ws.root.join("euc-p"), b"\xb1\xa2\n").unwrap();
    for (locale, script, expected, code) in [
        ("ru_RU.KOI8-R", r"G -c '^[[:alpha:]]*$' koi", "3\n", 0),
        (
            "ru_RU.KOI8-R",
            r"G -o '[[:upper:]]' koi | od -An -tx1",
            " f0 0a f0 0a\n",
            0,
        ),
        ("ru_RU.KOI8-R", r"G -ic -f koi-p koi", "2\n", 0),
        ("ru_RU.KOI8-R", r"G -c '^\w\+$' koi", "3\n", 0),
        ("ja_JP.EUC-JP", r"G -w b euc", "", 1),
        ("ja_JP.EUC-JP", r"G -c '^..$' euc", "3\n", 0),
        ("ja_JP.EUC-JP", r"G -c -f euc-p euc", "0\n", 1),
        ("ja_JP.EUC-JP", r"G -ob b euc", "2:b\n5:b\n", 0),
        (
            "ja_JP.EUC-JP",
            r"G a euc 2>&1",
            "ab\ngrep: euc: binary file matches\n",
            0,
        ),
        ("ja_JP.EUC-JP", r"G -z . </dev/null", "", 1),
        ("ja_JP.EUC-JP", r"G -P x /dev/null 2>/dev/null", "", 2),
    ] {
        grep_case(&ws.root, locale, script, expected, code);
    }
}
