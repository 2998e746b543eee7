//! Regression tests for wavesh's find, class by class (SEARCH-2): file names that are not
//! UTF-8 in every action that matches or prints a name, trees deeper than PATH_MAX,
//! GNU's error messages and exit codes, unreadable and unsearchable directories, and
//! the age tests. Every case states what GNU find 4.9 prints; where the system find is
//! GNU's, the same call runs there too and must print the same bytes in the same order.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::Command;

use crate::util::{WAVESH, Workspace};

/// What one find printed and how it ended.
#[derive(Debug, PartialEq, Eq)]
struct Out {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    code: Option<i32>,
}

/// Runs `find ARGS` in `dir`: wavesh's own (strict: no hand-over to the system find) or,
/// with `gnu`, the system's.
fn find(gnu: bool, dir: &Path, locale: &str, args: &[&[u8]]) -> Out {
    let mut command = if gnu {
        Command::new("find")
    } else {
        let mut c = Command::new(WAVESH);
        c.arg("find").env("WAVESH_GREP_STRICT", "1");
        c
    };
    let output = command
        .args(args.iter().map(|a| OsStr::from_bytes(a)))
        .current_dir(dir)
        .env("LC_ALL", locale)
        .env("TZ", "UTC")
        .env_remove("RUST_BACKTRACE")
        .output()
        .unwrap();
    let out = Out {
        stdout: output.stdout,
        stderr: output.stderr,
        code: output.status.code(),
    };
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("panicked at"),
        "a panic: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Whether the system find is GNU's, to compare with; a missing prerequisite (SKIPPED, or
/// a failure in CI) where it is not.
fn system_find_is_gnu() -> bool {
    let gnu = Command::new("find")
        .arg("--version")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("GNU findutils"));
    if !gnu {
        crate::util::missing_prerequisite(
            "GNU find as the system find, to compare with",
            "apt-get install findutils",
        );
    }
    gnu
}

/// wavesh's output for `args`, which must be GNU's byte for byte where GNU find is here.
fn same_as_gnu(dir: &Path, locale: &str, args: &[&[u8]]) -> Out {
    let ours = find(false, dir, locale, args);
    if system_find_is_gnu() {
        let gnu = find(true, dir, locale, args);
        assert_eq!(
            ours,
            gnu,
            "find {:?}\nwavesh: {}{}\nGNU: {}{}",
            args.iter()
                .map(|a| String::from_utf8_lossy(a))
                .collect::<Vec<_>>(),
            String::from_utf8_lossy(&ours.stdout),
            String::from_utf8_lossy(&ours.stderr),
            String::from_utf8_lossy(&gnu.stdout),
            String::from_utf8_lossy(&gnu.stderr)
        );
    }
    ours
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::write(path, bytes).unwrap();
}

fn os(bytes: &[u8]) -> &OsStr {
    OsStr::from_bytes(bytes)
}

/// A tree whose names hold every byte from 0x80 to 0xff, a directory and a link with
/// such names, and a link whose target is not UTF-8.
fn raw_tree(root: &Path) -> Vec<Vec<u8>> {
    let t = root.join("t");
    std::fs::create_dir(&t).unwrap();
    let mut names = Vec::new();
    for start in (0x80u8..=0xf0).step_by(16) {
        let mut name = b"n".to_vec();
        name.extend(start..=start + 15);
        write(&t.join(os(&name)), b"x");
        names.push(name);
    }
    let dir = t.join(os(b"d\xff\xfe"));
    std::fs::create_dir(&dir).unwrap();
    write(&dir.join(os(b"\xc3(")), b"");
    std::os::unix::fs::symlink(os(b"t\x81\xff"), t.join(os(b"l\x80"))).unwrap();
    names
}

#[test]
fn search_2_find_prints_non_utf8_names_in_every_action_as_bytes() {
    let ws = Workspace::new();
    let names = raw_tree(&ws.root);
    for locale in ["C", "C.UTF-8"] {
        let out = same_as_gnu(&ws.root, locale, &[b"t"]);
        for name in &names {
            let mut line = b"t/".to_vec();
            line.extend_from_slice(name);
            line.push(b'\n');
            assert!(
                memmem(&out.stdout, &line),
                "{locale}: -print lost the bytes of {name:?}"
            );
        }
        assert!(!memmem(&out.stdout, "\u{fffd}".as_bytes()), "{locale}");
        assert!(memmem(&out.stdout, b"t/d\xff\xfe/\xc3(\n"));
        for args in [
            &[&b"t"[..], b"-print0"][..],
            &[b"t", b"-printf", b"%p|%f|%h|%P|%H|%l|%y\\n"],
            &[b"t", b"-printf", b"%-12f|%.3f|%20p\\n"],
            &[b"t", b"-ls"],
            &[b"t", b"-name", b"n\x80*"],
            &[b"t", b"-name", b"*\xff"],
            &[b"t", b"-iname", b"N\x90*"],
            &[b"t", b"-path", b"t/d\xff\xfe/*"],
            &[b"t", b"-lname", b"t\x81*"],
            &[b"t", b"-exec", b"printf", b"[%s]\\n", b"{}", b";"],
            &[b"t", b"-exec", b"printf", b"[%s]\\n", b"{}", b"+"],
            &[b"t", b"-execdir", b"printf", b"[%s]\\n", b"{}", b";"],
            &[
                b"t",
                b"-type",
                b"f",
                b"-execdir",
                b"printf",
                b"[%s]\\n",
                b"{}",
                b"+",
            ],
        ] {
            let out = same_as_gnu(&ws.root, locale, args);
            assert_eq!(out.code, Some(0), "{args:?}");
            assert!(!out.stdout.is_empty(), "{args:?}");
        }
        // -ls escapes a name the same way in every locale: octal for bytes past `~`.
        let out = same_as_gnu(&ws.root, locale, &[b"t/l\x80", b"-ls"]);
        assert!(memmem(&out.stdout, b"t/l\\200 -> t\\201\\377\n"));
        // -printf escapes the format, never the name.
        let out = same_as_gnu(&ws.root, locale, &[b"t/d\xff\xfe", b"-printf", b"%f\\0"]);
        assert_eq!(out.stdout, b"d\xff\xfe\0\xc3(\0");
    }
    // The -f* actions write the same bytes to their files.
    let out = ws.root.join("out");
    let file_args = |name: &[u8]| -> Vec<Vec<u8>> {
        let mut path = out.as_os_str().as_bytes().to_vec();
        path.extend_from_slice(name);
        vec![
            b"t".to_vec(),
            b"-fprint".to_vec(),
            [path.as_slice(), b".1"].concat(),
            b"-fprint0".to_vec(),
            [path.as_slice(), b".2"].concat(),
            b"-fprintf".to_vec(),
            [path.as_slice(), b".3"].concat(),
            b"%f\\n".to_vec(),
            b"-fls".to_vec(),
            [path.as_slice(), b".4"].concat(),
        ]
    };
    let ours_args = file_args(b"-wavesh");
    let ours_refs: Vec<&[u8]> = ours_args.iter().map(Vec::as_slice).collect();
    let ours = find(false, &ws.root, "C.UTF-8", &ours_refs);
    assert_eq!((ours.code, ours.stdout.as_slice()), (Some(0), &b""[..]));
    let printed = std::fs::read(ws.root.join("out-wavesh.1")).unwrap();
    assert!(memmem(&printed, b"t/d\xff\xfe/\xc3(\n"));
    if system_find_is_gnu() {
        let gnu_args = file_args(b"-gnu");
        let gnu_refs: Vec<&[u8]> = gnu_args.iter().map(Vec::as_slice).collect();
        find(true, &ws.root, "C.UTF-8", &gnu_refs);
        for n in 1..=4 {
            assert_eq!(
                std::fs::read(ws.root.join(format!("out-wavesh.{n}"))).unwrap(),
                std::fs::read(ws.root.join(format!("out-gnu.{n}"))).unwrap(),
                "file action {n}"
            );
        }
    }
    // -delete removes such names (relative to their directory).
    let out = find(
        false,
        &ws.root,
        "C",
        &[b"t", b"-name", b"\xc3(", b"-delete"],
    );
    assert_eq!(out.code, Some(0));
    assert!(!ws.root.join(os(b"t/d\xff\xfe/\xc3(")).exists());
}

fn memmem(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// 20 directories of 255-byte names below `root/deep` (over 5,000 bytes of path), made
/// with `mkdirat` relative to the last one, and a file at the bottom.
fn deep_tree(root: &Path) -> usize {
    use rustix::fs::{Mode, OFlags};
    let name: String = "0123456789ABCDEF".repeat(16)[..255].to_owned();
    std::fs::create_dir(root.join("deep")).unwrap();
    let mut fd = rustix::fs::open(root.join("deep"), OFlags::DIRECTORY, Mode::empty()).unwrap();
    for _ in 0..20 {
        rustix::fs::mkdirat(&fd, name.as_str(), Mode::from_raw_mode(0o755)).unwrap();
        fd = rustix::fs::openat(&fd, name.as_str(), OFlags::DIRECTORY, Mode::empty()).unwrap();
    }
    rustix::fs::openat(
        &fd,
        "file",
        OFlags::CREATE | OFlags::WRONLY,
        Mode::from_raw_mode(0o644),
    )
    .unwrap();
    "deep".len() + 20 * 256 + "/file".len()
}

#[test]
fn search_2_find_walks_trees_deeper_than_path_max() {
    let ws = Workspace::new();
    let length = deep_tree(&ws.root);
    assert!(length > 4096);
    let out = same_as_gnu(&ws.root, "C", &[b"deep", b"-type", b"f"]);
    assert_eq!(
        out.stdout.len(),
        length + 1,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.code, Some(0));
    for args in [
        &[&b"deep"[..], b"-printf", b"%d %y %s\\n"][..],
        &[b"deep", b"-depth", b"-printf", b"%d\\n"],
        &[b"deep", b"-empty", b"-printf", b"%d %f\\n"],
        &[b"deep", b"-name", b"file", b"-ls"],
        &[
            b"deep",
            b"-mindepth",
            b"21",
            b"-readable",
            b"-printf",
            b"%P\\n",
        ],
        &[
            b"deep",
            b"-type",
            b"f",
            b"-exec",
            b"bash",
            b"-c",
            b"echo ${#1} ${1##*/}",
            b"bash",
            b"{}",
            b";",
        ],
        &[
            b"deep",
            b"-type",
            b"f",
            b"-execdir",
            b"bash",
            b"-c",
            b"echo $1 $(pwd -P | wc -c)",
            b"bash",
            b"{}",
            b"+",
        ],
    ] {
        let out = same_as_gnu(&ws.root, "C", args);
        assert_eq!(
            out.code,
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stderr.is_empty());
    }
    // With few descriptors to spare, directories are closed and opened again.
    let script = format!(
        "ulimit -n 14; \"{WAVESH}\" find deep -type f -exec bash -c 'echo ${{#1}}' bash {{}} \\;"
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(&ws.root)
        .env("WAVESH_GREP_STRICT", "1")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{length}\n"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = find(false, &ws.root, "C", &[b"deep", b"-delete"]);
    assert_eq!(
        out.code,
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!ws.root.join("deep").exists());
}

#[test]
fn search_2_find_error_messages_and_exit_codes_are_gnus() {
    let ws = Workspace::new();
    std::fs::create_dir_all(ws.root.join("t/d")).unwrap();
    write(&ws.root.join("t/f"), b"x");
    std::os::unix::fs::symlink("f/x", ws.root.join("t/notdir")).unwrap();
    std::os::unix::fs::symlink("self", ws.root.join("t/self")).unwrap();
    std::os::unix::fs::symlink("..", ws.root.join("t/d/up")).unwrap();
    let cases: &[(&[&[u8]], &str, i32)] = &[
        (
            &[b"/nonexistent"],
            "find: '/nonexistent': No such file or directory\n",
            1,
        ),
        (&[b"t/f/x"], "find: 't/f/x': Not a directory\n", 1),
        (&[b""], "find: '': No such file or directory\n", 1),
        (
            &[b"a\nb\\c\xff'd"],
            "find: 'a\\nb\\\\c\\377\\'d': No such file or directory\n",
            1,
        ),
        (&[b"t", b"-foo"], "find: unknown predicate `-foo'\n", 1),
        (&[b"t", b"-name"], "find: missing argument to `-name'\n", 1),
        (
            &[b"t", b"-type", b"x"],
            "find: Unknown argument to -type: x\n",
            1,
        ),
        (
            &[b"t", b"-type", b"ff"],
            "find: Must separate multiple arguments to -type using: ','\n",
            1,
        ),
        (
            &[b"t", b"-type", b"f,f"],
            "find: Duplicate file type 'f' in the argument list to -type.\n",
            1,
        ),
        (
            &[b"t", b"-newer", b"nope"],
            "find: 'nope': No such file or directory\n",
            1,
        ),
        (
            &[b"t", b"-maxdepth", b"-1"],
            "find: Expected a positive decimal integer argument to -maxdepth, but got '-1'\n",
            1,
        ),
        (
            &[b"t", b"-size", b"3q"],
            "find: invalid -size type `q'\n",
            1,
        ),
        (
            &[b"t", b"-mtime", b"x"],
            "find: invalid argument `x' to `-mtime'\n",
            1,
        ),
        (&[b"t", b"-perm", b"u=q"], "find: invalid mode 'u=q'\n", 1),
        (
            &[b"t", b"-user", b"no-such-user-here"],
            "find: 'no-such-user-here' is not the name of a known user\n",
            1,
        ),
        (
            &[b"t", b"-name", b"a", b")"],
            "find: you have too many ')'\n",
            1,
        ),
        (
            &[b"t", b"("],
            "find: invalid expression; expected to find a ')' but didn't see one. Perhaps you need an extra predicate after '('\n",
            1,
        ),
        (
            &[b"t", b"-o"],
            "find: invalid expression; you have used a binary operator '-o' with nothing before it.\n",
            1,
        ),
        (&[b"t", b"!"], "find: expected an expression after '!'\n", 1),
        (
            &[b"t", b"-exec", b"echo"],
            "find: missing argument to `-exec'\n",
            1,
        ),
        (
            &[b"t", b"-empty", b"x"],
            "find: paths must precede expression: `x'\n",
            1,
        ),
        (
            &[b"-maxdepth", b"0", b"t"],
            "find: paths must precede expression: `t'\nfind: possible unquoted pattern after predicate `-maxdepth'?\n",
            1,
        ),
        (
            &[b"t", b"-printf", b"%"],
            "find: error: % at end of format string\n",
            1,
        ),
        (
            &[b"t", b"-maxdepth", b"0", b"-printf", b"%z\\q\\n"],
            "find: warning: unrecognized format directive `%z'\nfind: warning: unrecognized escape `\\q'\n",
            0,
        ),
        (
            &[b"-L", b"t", b"-name", b"nothing"],
            "find: 't/notdir': Not a directory\nfind: 't/self': Too many levels of symbolic links\nfind: File system loop detected; 't/d/up' is part of the same file system loop as 't'.\n",
            1,
        ),
        (
            &[
                b"t",
                b"-maxdepth",
                b"0",
                b"-exec",
                b"no-such-command-here",
                b"{}",
                b";",
            ],
            "find: 'no-such-command-here': No such file or directory\n",
            0,
        ),
        (
            &[
                b"t",
                b"-maxdepth",
                b"0",
                b"-exec",
                b"no-such-command-here",
                b"{}",
                b"+",
            ],
            "find: 'no-such-command-here': No such file or directory\n",
            1,
        ),
        (
            &[b"t", b"-maxdepth", b"0", b"-exec", b"false", b"{}", b"+"],
            "",
            1,
        ),
        (
            &[b"t", b"-name", b"a", b"-a"],
            "find: expected an expression after '-a'\n",
            1,
        ),
        (&[b"t", b"-print", b"-a"], "find: invalid expression\n", 1),
        (&[b"t", b"-print", b","], "find: invalid expression\n", 1),
        (
            &[b"t", b"(", b"!", b")"],
            "find: expected an expression between '!' and ')'\n",
            1,
        ),
        (
            &[b"t", b"-exec", b";"],
            "find: invalid argument `;' to `-exec'\n",
            1,
        ),
        (
            &[b"t", b"-exec", b"echo", b"a{}b", b"+"],
            "find: In '-exec ... {} +' the '{}' must appear by itself, but you specified 'a{}b'\n",
            1,
        ),
        (
            &[b"t", b"-fprintf", b"/dev/stdout"],
            "find: invalid argument `/dev/stdout' to `-fprintf'\n",
            1,
        ),
        (
            &[b"t", b"-size", b""],
            "find: invalid null argument to -size\n",
            1,
        ),
        (
            &[b"t", b"-type", b"D"],
            "find: -type D is not supported because Solaris doors are not supported on the platform find was compiled on.\n",
            1,
        ),
        (
            &[b"t", b"-group", b"0x"],
            "find: '0x' is not the name of an existing group and it does not look like a numeric group ID because it has the unexpected suffix 'x'\n",
            1,
        ),
        (
            &[b"t", b"-maxdepth", b"0", b"-perm", b"/0"],
            "find: warning: you have specified a mode pattern /0 (which is equivalent to /000). The meaning of -perm /000 has now been changed to be consistent with -perm -000; that is, while it used to match no files, it now matches all files.\n",
            0,
        ),
        (
            &[b"t", b"-printf", b"%{"],
            "find: error: the format directive `%{' is reserved for future use\n",
            1,
        ),
        (
            &[b"t", b"-maxdepth", b"0", b"-printf", b"%0-5d%T"],
            "find: warning: unrecognized format directive `%-'\nfind: warning: format directive `%T' should be followed by another character\n",
            0,
        ),
        (&[b"t", b"-maxdepth", b"0", b"-mtime", b"1e1"], "", 0),
    ];
    for (args, stderr, code) in cases {
        let out = same_as_gnu(&ws.root, "C", args);
        let mut errors: Vec<&str> = std::str::from_utf8(&out.stderr)
            .unwrap_or("")
            .lines()
            .collect();
        let mut wanted: Vec<&str> = stderr.lines().collect();
        // The walk order of readdir decides the order of the -L errors.
        errors.sort_unstable();
        wanted.sort_unstable();
        assert_eq!((errors, out.code), (wanted, Some(*code)), "find {args:?}");
    }
    // A UTF-8 locale quotes with typographic quotes and keeps printable characters.
    let out = same_as_gnu(&ws.root, "C.UTF-8", &[b"caf\xc3\xa9\xff\n"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "find: \u{2018}caf\u{e9}\\377\\n\u{2019}: No such file or directory\n"
    );
}

/// Runs `script` as the unprivileged user `nobody` where this test runs as root
/// (permissions do not stop root), or as the user itself.
fn unprivileged(dir: &Path, script: &str) -> Option<Out> {
    let root = rustix::process::geteuid().is_root();
    let mut command = if root {
        if Command::new("setpriv").arg("--version").output().is_err() {
            return None;
        }
        let mut c = Command::new("setpriv");
        c.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "bash",
            "-c",
        ]);
        c
    } else {
        let mut c = Command::new("bash");
        c.arg("-c");
        c
    };
    let output = command
        .arg(script)
        .current_dir(dir)
        .env("W", WAVESH)
        .env("WAVESH_GREP_STRICT", "1")
        .env("LC_ALL", "C")
        .output()
        .unwrap();
    Some(Out {
        stdout: output.stdout,
        stderr: output.stderr,
        code: output.status.code(),
    })
}

#[test]
fn search_2_find_unreadable_and_unsearchable_directories_are_gnus() {
    use std::os::unix::fs::PermissionsExt;
    let ws = Workspace::new();
    let base = ws.root.join("p");
    std::fs::create_dir_all(base.join("noread/sub")).unwrap();
    std::fs::create_dir_all(base.join("nox")).unwrap();
    write(&base.join("nox/f"), b"");
    std::os::unix::fs::symlink("nox/f", base.join("link")).unwrap();
    let mode = |path: &Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    // Everyone may reach the tree; `noread` may not be read, `nox` may not be searched.
    let mut up = ws.root.clone();
    while up.parent().is_some() {
        let m = std::fs::metadata(&up).unwrap().permissions().mode();
        if m & 0o001 == 0 {
            mode(&up, m | 0o001);
        }
        up = up.parent().unwrap().to_path_buf();
    }
    mode(&ws.root, 0o755);
    mode(&base, 0o755);
    mode(&base.join("noread"), 0o000);
    mode(&base.join("nox"), 0o644);
    let expressions = [
        "p",
        "p -depth",
        "p -name f",
        "p -type f",
        "p -printf '%p %y\\n'",
        "p -printf '%p %Y %s\\n'",
        "p -ls",
        "p -empty",
        "p -xtype l",
        "-L p",
        "-L p -type l -o -type f",
        "-L p -path '*/*' -prune -o -print",
        "p/nox -size -1 -o -ls -o -empty",
        "p/noread/sub",
    ];
    let mut ours_all = Vec::new();
    for expression in expressions {
        let Some(ours) = unprivileged(&ws.root, &format!("\"$W\" find {expression}")) else {
            crate::util::missing_prerequisite(
                "setpriv, to drop root's privileges for the unreadable directories",
                "apt-get install util-linux",
            );
            break;
        };
        if system_find_is_gnu() {
            let gnu = unprivileged(&ws.root, &format!("find {expression}")).unwrap();
            assert_eq!(
                ours,
                gnu,
                "find {expression}\nwavesh: {}{}\nGNU: {}{}",
                String::from_utf8_lossy(&ours.stdout),
                String::from_utf8_lossy(&ours.stderr),
                String::from_utf8_lossy(&gnu.stdout),
                String::from_utf8_lossy(&gnu.stderr)
            );
        }
        ours_all.push(ours);
    }
    if let Some(first) = ours_all.first() {
        // GNU's: the directory is listed, then it cannot be read.
        assert_eq!(
            String::from_utf8_lossy(&first.stdout),
            "p\np/nox\np/nox/f\np/link\np/noread\n"
        );
        assert_eq!(
            String::from_utf8_lossy(&first.stderr),
            "find: 'p/noread': Permission denied\n"
        );
        assert_eq!(first.code, Some(1));
    }
    mode(&base.join("noread"), 0o755);
    mode(&base.join("nox"), 0o755);
}

#[test]
fn search_2_find_age_tests_measure_as_gnu() {
    let ws = Workspace::new();
    let dir = ws.root.join("a");
    std::fs::create_dir(&dir).unwrap();
    let now = std::time::SystemTime::now();
    for seconds in [
        30u64, 3599, 3601, 43_200, 86_399, 86_401, 129_600, 172_799, 172_801,
    ] {
        let file = std::fs::File::create(dir.join(format!("f{seconds}"))).unwrap();
        file.set_modified(now - std::time::Duration::from_secs(seconds))
            .unwrap();
    }
    let future = std::fs::File::create(dir.join("future")).unwrap();
    future
        .set_modified(now + std::time::Duration::from_secs(100))
        .unwrap();
    // GNU's windows: -mtime 0 is the last 24 hours, -mmin 1 the last minute. Checked
    // first, while `f86399` is still a second inside the 24 hours.
    let out = find(
        false,
        &ws.root,
        "C",
        &[b"a", b"-mtime", b"0", b"-name", b"f*", b"-printf", b"%f\\n"],
    );
    let mut names: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
    names.sort_unstable();
    assert_eq!(names, ["f30", "f3599", "f3601", "f43200", "f86399"]);
    let out = find(
        false,
        &ws.root,
        "C",
        &[b"a", b"-mmin", b"1", b"-name", b"f*", b"-printf", b"%f\\n"],
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "f30\n");
    let mut all = Vec::new();
    for n in ["0", "1", "2", "+0", "+1", "-1", "-2", "1.5", "-0.5"] {
        for test in ["-mtime", "-mmin"] {
            for daystart in [false, true] {
                let mut args: Vec<&[u8]> = vec![b"a"];
                if daystart {
                    args.push(b"-daystart");
                }
                args.extend([test.as_bytes(), n.as_bytes(), b"-printf", b"%f\\n"]);
                let out = same_as_gnu(&ws.root, "C", &args);
                all.push(out.stdout);
            }
        }
    }
}

/// On a terminal GNU find prints `?` for what is not a printable character of the
/// locale (in -print and the name directives of -printf) and warns about a global
/// option after a test: the same through a pseudo-terminal (`script`).
#[test]
fn search_2_find_on_a_terminal_shows_names_and_warns_as_gnu() {
    if !system_find_is_gnu() || Command::new("script").arg("--version").output().is_err() {
        crate::util::missing_prerequisite(
            "GNU find and script(1), to compare find on a terminal",
            "apt-get install findutils bsdutils",
        );
        return;
    }
    let ws = Workspace::new();
    raw_tree(&ws.root);
    write(&ws.root.join("t/new\nline"), b"");
    write(&ws.root.join("t/caf\u{e9}"), b"");
    let on_tty = |find: &str| {
        let script = format!(
            "{find} t -maxdepth 1 -name 'n*' -o -maxdepth 1 -name 'caf*'; {find} t -printf '%p|%f|%h|%l\\n'; {find} t -name '*/x' -print0"
        );
        let output = Command::new("script")
            .args(["-qec", &script, "/dev/null"])
            .current_dir(&ws.root)
            .env("LC_ALL", "C.UTF-8")
            .env("WAVESH_GREP_STRICT", "1")
            .output()
            .unwrap();
        output.stdout
    };
    let ours = on_tty(&format!("'{WAVESH}' find"));
    let gnu = on_tty("find");
    assert_eq!(
        String::from_utf8_lossy(&ours),
        String::from_utf8_lossy(&gnu)
    );
    assert!(memmem(&ours, b"t/new?line"));
}

/// A directory of more than 10,000 entries is walked in GNU's order: fts sorts such a
/// batch by inode number (except on NFS, CIFS and tmpfs), not in `readdir` order.
#[test]
fn search_2_find_walks_a_large_directory_in_gnus_order() {
    let ws = Workspace::new();
    let dir = ws.root.join("big");
    std::fs::create_dir(&dir).unwrap();
    for i in (0..10_050).rev() {
        write(&dir.join(format!("f{i:05}")), b"");
    }
    let out = same_as_gnu(&ws.root, "C", &[b"big", b"-printf", b"%f\\n"]);
    assert_eq!(out.stdout.iter().filter(|&&b| b == b'\n').count(), 10_051);
}

/// `-exec ... {} +` and `-execdir ... {} +` run as many commands as GNU's buildcmd does
/// (128 KiB of arguments each; a starting point apart from the files below it), and a
/// command ended by a signal is reported as GNU reports it.
#[test]
fn search_2_find_exec_batches_and_signals_are_gnus() {
    let ws = Workspace::new();
    let dir = ws.root.join("many");
    std::fs::create_dir(&dir).unwrap();
    for i in 0..12_000 {
        write(&dir.join(format!("file_with_a_long_name_{i:05}")), b"");
    }
    for args in [
        &[
            &b"many"[..],
            b"-exec",
            b"printf",
            b"%s\\n",
            b"BATCH",
            b"{}",
            b"+",
        ][..],
        &[
            b"many",
            b"-execdir",
            b"printf",
            b"%s\\n",
            b"BATCH",
            b"{}",
            b"+",
        ],
    ] {
        let out = same_as_gnu(&ws.root, "C", args);
        let batches = out
            .stdout
            .split(|&b| b == b'\n')
            .filter(|l| *l == b"BATCH")
            .count();
        assert!(batches >= 3, "{batches} batches for {args:?}");
    }
    let out = same_as_gnu(
        &ws.root,
        "C",
        &[
            b"many",
            b"-maxdepth",
            b"0",
            b"-exec",
            b"sh",
            b"-c",
            b"kill -9 $$",
            b";",
            b"-print",
        ],
    );
    assert_eq!(
        (
            String::from_utf8_lossy(&out.stderr).as_ref(),
            out.stdout.as_slice(),
            out.code
        ),
        ("find: 'sh' terminated by signal 9\n", &b""[..], Some(0))
    );
}

/// `-files0-from` reads the starting points as NUL-separated names, from a file or
/// standard input, with GNU's messages for an empty name, a list that cannot be read,
/// operands beside it and `-ok` reading the same standard input.
#[test]
fn search_2_find_files0_from_is_gnus() {
    let ws = Workspace::new();
    std::fs::create_dir_all(ws.root.join(os(b"t/d\xff"))).unwrap();
    write(&ws.root.join("t/f"), b"");
    write(&ws.root.join("list"), b"t/d\xff\0\0t/f");
    write(&ws.root.join("empty"), b"");
    for (args, stderr, code) in [
        (
            &[&b"-files0-from"[..], b"list"][..],
            "find: 'list':2: invalid zero-length file name\n",
            1,
        ),
        (&[b"-files0-from", b"empty"], "", 0),
        (
            &[b"-files0-from", b"nope"],
            "find: cannot open 'nope' for reading: No such file or directory\n",
            1,
        ),
        (
            &[b"-files0-from", b"t"],
            "find: 't': read error: Is a directory\n",
            1,
        ),
        (
            &[b"t", b"-files0-from", b"list"],
            "find: extra operand 't'\nfind: file operands cannot be combined with -files0-from\n",
            1,
        ),
        (
            &[b"-files0-from", b"-", b"-ok", b"true", b";"],
            "find: option -files0-from reading from standard input cannot be combined with -ok, -okdir\n\n",
            1,
        ),
    ] {
        let out = same_as_gnu(&ws.root, "C", args);
        assert_eq!(
            (String::from_utf8_lossy(&out.stderr).as_ref(), out.code),
            (stderr, Some(code)),
            "{args:?}"
        );
    }
    let out = find(false, &ws.root, "C", &[b"-files0-from", b"list"]);
    assert_eq!(out.stdout, b"t/d\xff\nt/f\n");
}

/// A tree of names that tell the regular expression dialects apart: brackets, braces,
/// parentheses, operators and a newline.
fn regex_tree(root: &Path) {
    let t = root.join("w");
    for dir in [
        "(", "[", "*", "{", "\n", "foo", "bar", "a+b", "a?b", "x{2}", "a|b", "^x", "x$", "\\",
    ] {
        std::fs::create_dir_all(t.join(dir)).unwrap();
    }
    for file in [
        "[/k",
        "*/m",
        "{/l",
        "\n/n",
        "foo/aa",
        "foo/aaa",
        "bar/abab",
        "(/)",
        "^x/y",
        "\\/w",
        "foo/A1",
        "foo/\u{e9}",
    ] {
        write(&t.join(file), b"");
    }
}

/// Every `-regextype` dialect reads a pattern as gnulib does under its syntax bits:
/// the cases below tell the dialects apart (escaped or plain operators, intervals,
/// alternation, back-references, GNU operators, anchors in context, operators with
/// nothing before them, backslashes in brackets, empty ranges, errors), with and
/// without case folding, in a UTF-8 locale and in C.
#[test]
fn search_2_find_regex_dialects_are_gnus() {
    let ws = Workspace::new();
    regex_tree(&ws.root);
    // GNU's own readings, whatever the system find is.
    for (dialect, pattern, expected) in [
        ("posix-minimal-basic", r"w/\((\)", "w/(\n"),
        ("posix-minimal-basic", r"w/a+b", "w/a+b\n"),
        ("posix-basic", r"w/a\+b", ""),
        ("egrep", "*.*/{l", ""),
        ("awk", r".*/[\[\*]/.", "w/*/m\nw/[/k\n"),
        ("gnu-awk", r".*/[\[\*]/(\<.\>)", "w/*/m\nw/[/k\n"),
        ("emacs", r"w/./n", ""),
        ("findutils-default", r"w/./n", "w/\n/n\n"),
        (
            "posix-extended",
            r"w/(b|f)[a-z]+/(a)\2+",
            "w/foo/aa\nw/foo/aaa\n",
        ),
        ("posix-extended", r"w/(f|b)oo/(a)\1", ""),
    ] {
        let out = find(
            false,
            &ws.root,
            "C",
            &[
                b"w",
                b"-regextype",
                dialect.as_bytes(),
                b"-regex",
                pattern.as_bytes(),
            ],
        );
        let mut lines: Vec<&str> = std::str::from_utf8(&out.stdout)
            .unwrap()
            .split_inclusive("\n")
            .collect();
        // The name with a newline prints on two lines: sort whole paths instead.
        if lines.len() > 1 && lines[0] == "w/\n" {
            let first = lines.remove(0).to_owned() + lines.remove(0);
            lines.push(Box::leak(first.into_boxed_str()));
        }
        lines.sort_unstable();
        assert_eq!(lines.concat(), expected, "{dialect} {pattern}");
    }
    let out = find(
        false,
        &ws.root,
        "C",
        &[b"w", b"-regextype", b"posix-basic", b"-regex", b"a**"],
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "find: failed to compile regular expression 'a**': Invalid preceding regular expression\n"
    );
    assert_eq!(out.code, Some(1));
    let patterns: &[&str] = &[
        r".*/./\(m\|n\)",
        ".*/.",
        r".*/[\[\*]/.*",
        r".*/[\[\*]/(\<.\>)",
        "*.*/{l",
        r"w/\((\)",
        ".*/a{2}",
        r".*/a\{2,3\}",
        ".*/(aa|aaa)",
        r".*/a\+b",
        ".*/a?b",
        r".*/x\{2\}",
        ".*/a|b",
        r".*/a\|b",
        ".*/^x/y",
        ".*/x$",
        "^w/foo.*",
        r".*/\(a\)\1",
        r".*/(ab)\1",
        ".*/[[:upper:]][[:digit:]]",
        "[^a]*",
        r".*/\w\w",
        r".*/\W",
        r".*/[\]",
        r".*/\\",
        ".*/[z-a]",
        ".*/a**",
        r".*/a*\{2\}",
        "*a",
        "+a",
        r".*/\{",
        ".*/a{,2}",
        ".*/a{1,2,3}",
        r".*/a\{1",
        ".*/a{x}",
        ".*/a{}",
        ".*/(",
        r".*/\)",
        "[",
        r"\`w.*",
        r".*\o.*",
        r".*\O.*",
        ".*/\u{e9}",
        ".*/..",
        ".*/^",
    ];
    for dialect in [
        "findutils-default",
        "emacs",
        "posix-basic",
        "posix-minimal-basic",
        "posix-extended",
        "grep",
        "egrep",
        "posix-egrep",
        "awk",
        "gnu-awk",
        "posix-awk",
        "sed",
        "ed",
    ] {
        for pattern in patterns {
            for test in ["-regex", "-iregex"] {
                for locale in ["C", "C.UTF-8"] {
                    same_as_gnu(
                        &ws.root,
                        locale,
                        &[
                            b"w",
                            b"-regextype",
                            dialect.as_bytes(),
                            test.as_bytes(),
                            pattern.as_bytes(),
                        ],
                    );
                }
            }
        }
    }
    // Without -regextype: Emacs's syntax, where `.` does not match a newline.
    for pattern in patterns {
        same_as_gnu(&ws.root, "C", &[b"w", b"-regex", pattern.as_bytes()]);
    }
}

/// `-newerXY` in its forms (a reference file's time, or a date string in GNU's formats),
/// `-used`, `-fstype` and `%F`.
#[test]
fn search_2_find_newer_used_and_fstype_are_gnus() {
    let ws = Workspace::new();
    let dir = ws.root.join("t");
    std::fs::create_dir(&dir).unwrap();
    let epoch = std::time::UNIX_EPOCH;
    let secs = std::time::Duration::from_secs;
    for (name, modified) in [
        ("old", epoch + secs(692_668_830)),
        ("new", epoch + secs(692_668_920)),
        ("before", epoch - secs(5)),
        ("later", epoch + secs(1_577_836_800)),
    ] {
        let file = std::fs::File::create(dir.join(name)).unwrap();
        file.set_modified(modified).unwrap();
    }
    let now = std::time::SystemTime::now();
    for hours in [1u64, 25, 169, 24 * 365] {
        let file = std::fs::File::create(dir.join(format!("used{hours}"))).unwrap();
        file.set_times(std::fs::FileTimes::new().set_accessed(now + secs(hours * 3600)))
            .unwrap();
    }
    let dates = [
        "1991-12-14T00:01",
        "1991-12-14 01:01+01:00",
        "19911213 20:31:00-0330",
        "1969-12-31T23:59:59Z",
        "@-10",
        "@-5.5",
        "@692668860.5",
        "14 Dec 1991",
        "Dec 14, 1991 00:01",
        "12/14/1991 12:01am",
        "1991-12-14 0001",
        "1991-12-13 +1 day",
        "2 years ago",
        "yesterday",
        "",
        "foo",
        "1991-13-01",
        "Sat Dec 14 1991 00:01 UTC",
        "friday",
    ];
    for date in dates {
        for test in ["-newermt", "-newerat", "-newerct"] {
            same_as_gnu(
                &ws.root,
                "C",
                &[b"t", test.as_bytes(), date.as_bytes(), b"-printf", b"%f\\n"],
            );
        }
    }
    for args in [
        &["-newer", "t/old"][..],
        &["-anewer", "t/new"],
        &["-cnewer", "t/new"],
        &["-newerma", "t/old"],
        &["-newermc", "t/old"],
        &["-newercm", "t/later"],
        &["-newermm", "t/nothing"],
        &["-newermt"],
        &["-newerXt", "1"],
        &["-newertm", "t/old"],
        &["-used", "1"],
        &["-used", "2"],
        &["-used", "7"],
        &["-used", "+7"],
        &["-used", "-2"],
        &["-used", "+0"],
        &["-used", "1.5"],
        &["-used", "x"],
        &["-used"],
        &["-fstype", "nosuchfs"],
        &["-fstype"],
    ] {
        let mut full: Vec<&[u8]> = vec![b"t"];
        full.extend(args.iter().map(|a| a.as_bytes()));
        full.extend([b"-printf".as_slice(), b"%f\\n"]);
        same_as_gnu(&ws.root, "C", &full);
    }
    // The file system's type as the mount table names it, and -fstype of that name.
    let out = same_as_gnu(
        &ws.root,
        "C",
        &[b"t", b"-maxdepth", b"0", b"-printf", b"%F\\n"],
    );
    let fstype = String::from_utf8(out.stdout).unwrap();
    let fstype = fstype.trim_end();
    assert!(!fstype.is_empty() && fstype != "unknown", "{fstype}");
    let out = same_as_gnu(&ws.root, "C", &[b"t", b"-fstype", fstype.as_bytes()]);
    assert_eq!(out.stdout.iter().filter(|&&b| b == b'\n').count(), 9);
    // GNU's readings, whatever the system find is.
    let out = find(
        false,
        &ws.root,
        "C",
        &[
            b"t",
            b"-newermt",
            b"19911213 20:31:00-0330",
            b"-printf",
            b"%f\\n",
        ],
    );
    let mut names: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
    names.sort_unstable();
    assert!(!names.contains(&"old") && names.contains(&"new") && names.contains(&"later"));
    let out = find(
        false,
        &ws.root,
        "C",
        &[b"t", b"-used", b"2", b"-printf", b"%f\\n"],
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "used25\n");
}
