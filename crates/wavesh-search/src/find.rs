//! `find`: GNU find's expressions on the `findutils` crate (SEARCH-2), without
//! `.gitignore` (GNU semantics). What the crate lacks, or reads differently from GNU,
//! goes to the system `find` with the same arguments (SEARCH-5).

/// Primaries and options this build hands to `findutils`, with whether they take a value.
const SUPPORTED: &[(&str, bool)] = &[
    ("-name", true),
    ("-iname", true),
    ("-path", true),
    ("-ipath", true),
    ("-wholename", true),
    ("-iwholename", true),
    ("-type", true),
    ("-xtype", true),
    ("-maxdepth", true),
    ("-mindepth", true),
    ("-size", true),
    ("-empty", false),
    ("-newer", true),
    ("-anewer", true),
    ("-cnewer", true),
    ("-mtime", true),
    ("-mmin", true),
    ("-atime", true),
    ("-amin", true),
    ("-ctime", true),
    ("-cmin", true),
    ("-perm", true),
    ("-user", true),
    ("-group", true),
    ("-uid", true),
    ("-gid", true),
    ("-nouser", false),
    ("-nogroup", false),
    ("-links", true),
    ("-inum", true),
    ("-lname", true),
    ("-samefile", true),
    ("-readable", false),
    ("-writable", false),
    ("-executable", false),
    ("-regex", true),
    ("-iregex", true),
    ("-regextype", true),
    ("-print", false),
    ("-print0", false),
    ("-printf", true),
    ("-ls", false),
    ("-prune", false),
    ("-quit", false),
    ("-delete", false),
    ("-not", false),
    ("-and", false),
    ("-or", false),
    ("-a", false),
    ("-o", false),
    ("-true", false),
    ("-false", false),
    ("-depth", false),
    ("-follow", false),
    ("-mount", false),
    ("-xdev", false),
    ("-daystart", false),
    ("-noleaf", false),
];

/// Regex dialects `findutils` implements as GNU does.
const REGEX_TYPES: &[&str] = &["emacs", "posix-basic", "posix-extended", "grep"];

/// What `findutils` reads differently from GNU find, by argument (the system find runs
/// instead where it is GNU's): a `-printf` format beyond plain `%X` directives and the
/// `\n`, `\t`, `\\` escapes (GNU's octal escapes, `\c`, flags, widths and `%h` of a
/// trailing slash differ); a symbolic `-perm` with `X`; a `-regex` in GNU's default
/// dialect, where `.` also matches a newline; `-ok` and `-okdir`, whose prompt GNU
/// flushes before reading the answer; `-execdir` on a starting point of slashes (`///`),
/// which GNU names `/`; `-L` and `-follow`, where findutils notices a symlink loop one
/// level late (it lists what is inside the loop once).
fn differs_from_gnu(args: &[String]) -> bool {
    if args.iter().any(|a| a == "-L" || a == "-follow") {
        return true;
    }
    let starts = args
        .iter()
        .take_while(|a| !a.starts_with('-') && !matches!(a.as_str(), "(" | "!"));
    let slashes = |a: &String| a.len() > 1 && a.bytes().all(|b| b == b'/');
    if args.iter().any(|a| a == "-execdir" || a == "-okdir")
        && starts.filter(|a| slashes(a)).count() > 0
    {
        return true;
    }
    let printf_differs = |format: &str| {
        let mut chars = format.chars();
        while let Some(c) = chars.next() {
            match c {
                '%' => match chars.next() {
                    Some(d) if "pfPsdmugyYlnikbMUG%".contains(d) => {}
                    _ => return true,
                },
                '\\' => match chars.next() {
                    Some('n' | 't' | '\\') => {}
                    _ => return true,
                },
                _ => {}
            }
        }
        false
    };
    let mut default_regex = true;
    let mut i = 0;
    while i < args.len() {
        let value = args.get(i + 1).map(String::as_str);
        match (args[i].as_str(), value) {
            ("-printf" | "-fprintf", Some(format)) if printf_differs(format) => return true,
            ("-perm", Some(mode)) if mode.contains('X') => return true,
            ("-regextype", Some(kind)) => default_regex = kind == "findutils-default",
            ("-regex" | "-iregex", Some(_)) if default_regex => return true,
            ("-ok" | "-okdir", _) => return true,
            _ => {}
        }
        i += 1;
    }
    false
}

/// Whether the system `find` is GNU find (`find --version` says so).
fn system_find_is_gnu() -> bool {
    let Some(path) = crate::system_program("find") else {
        return false;
    };
    std::process::Command::new(path)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("GNU findutils"))
}

/// The arguments for `findutils`, or `None` when the system find must run.
fn plan(args: &[String]) -> Option<Vec<String>> {
    let mut out = Vec::with_capacity(args.len());
    let mut default_regex = true;
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        i += 1;
        match arg {
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                out.push(arg.to_owned());
                // The command up to `;` or `+`, untouched.
                while i < args.len() {
                    out.push(args[i].clone());
                    i += 1;
                    if matches!(out.last().map(String::as_str), Some(";" | "+")) {
                        break;
                    }
                }
            }
            "-regextype" => {
                let value = args.get(i)?;
                i += 1;
                // The default dialect: findutils refuses the name but is that dialect.
                if value == "findutils-default" {
                    default_regex = true;
                    continue;
                }
                if !REGEX_TYPES.contains(&value.as_str()) {
                    return None;
                }
                default_regex = false;
                out.extend([arg.to_owned(), value.clone()]);
            }
            "-regex" | "-iregex" => {
                let value = args.get(i)?;
                i += 1;
                // GNU's default dialect takes `\{` literally; findutils makes it an
                // interval. The system find keeps the caller's meaning.
                if default_regex && value.contains("\\{") {
                    return None;
                }
                out.extend([arg.to_owned(), value.clone()]);
            }
            "(" | ")" | "!" | "," | "-H" | "-L" | "-P" => out.push(arg.to_owned()),
            _ if arg.starts_with('-') && arg.len() > 1 => {
                let (_, takes_value) = SUPPORTED.iter().find(|(name, _)| *name == arg)?;
                out.push(arg.to_owned());
                if *takes_value {
                    out.push(args.get(i)?.clone());
                    i += 1;
                }
            }
            _ => out.push(arg.to_owned()),
        }
    }
    Some(out)
}

/// Standard output that keeps its first error instead of returning it: `findutils`
/// unwraps its writes, which would panic on a full disk. The error is reported once the
/// search ends, in GNU's words. (A closed pipe ends the process by SIGPIPE first.)
struct Output {
    inner: std::io::Stdout,
    error: Option<std::io::Error>,
}

impl std::io::Write for Output {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.error.is_none()
            && let Err(error) = self.inner.write_all(buf)
        {
            self.error = Some(error);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.error.is_none()
            && let Err(error) = self.inner.flush()
        {
            self.error = Some(error);
        }
        Ok(())
    }
}

/// `findutils`' standard dependencies, with [`Output`] as standard output.
struct Dependencies {
    output: std::cell::RefCell<Output>,
    standard: findutils::find::StandardDependencies,
}

impl findutils::find::Dependencies for Dependencies {
    fn get_output(&self) -> &std::cell::RefCell<dyn std::io::Write> {
        &self.output
    }

    fn now(&self) -> std::time::SystemTime {
        self.standard.now()
    }

    fn confirm(&self, prompt: &str) -> bool {
        self.standard.confirm(prompt)
    }
}

/// GNU find refuses `-execdir` and `-okdir` while PATH holds the current directory (an
/// empty entry or `.`) or a relative one: a command there could be run from any
/// directory the search visits. The message, or `None` when PATH is safe.
fn unsafe_path_for_execdir(args: &[String]) -> Option<String> {
    if !args.iter().any(|a| a == "-execdir" || a == "-okdir") {
        return None;
    }
    let path = std::env::var("PATH").unwrap_or_default();
    let (open, close) = quotes();
    for entry in path.split(':') {
        if entry.is_empty() || entry == "." {
            return Some(
                "The current directory is included in the PATH environment variable, which \
                 is insecure in combination with the -execdir action of find.  Please remove \
                 the current directory from your $PATH (that is, remove \".\", doubled \
                 colons, or leading or trailing colons)"
                    .to_owned(),
            );
        }
        if !entry.starts_with('/') {
            return Some(format!(
                "The relative path {open}{entry}{close} is included in the PATH environment \
                 variable, which is insecure in combination with the -execdir action of find.  \
                 Please remove that entry from $PATH"
            ));
        }
    }
    None
}

/// GNU's quotes around a name: typographic in a UTF-8 locale, ASCII otherwise.
fn quotes() -> (&'static str, &'static str) {
    if crate::grep::utf8_locale() {
        ("\u{2018}", "\u{2019}")
    } else {
        ("'", "'")
    }
}

/// `find ARGS`; returns the exit code.
pub fn find_main(args: &[String]) -> i32 {
    if let Some(message) = unsafe_path_for_execdir(args) {
        find_error(&message);
        return 1;
    }
    // Where findutils would answer differently from GNU find and the system find is
    // GNU's, it answers (strict runs keep wavesh's own).
    let strict = std::env::var_os(crate::STRICT_ENV).is_some();
    if !strict && differs_from_gnu(args) && system_find_is_gnu() {
        return crate::system_command("find", args);
    }
    match plan(args) {
        Some(ours) => {
            let mut argv = vec!["find"];
            argv.extend(ours.iter().map(String::as_str));
            let deps = Dependencies {
                output: std::cell::RefCell::new(Output {
                    inner: std::io::stdout(),
                    error: None,
                }),
                standard: findutils::find::StandardDependencies::new(),
            };
            let code = findutils::find::find_main(&argv, &deps);
            let mut output = deps.output.borrow_mut();
            let _ = std::io::Write::flush(&mut *output);
            if let Some(error) = &output.error {
                let (open, close) = quotes();
                find_error(&format!(
                    "{open}standard output{close}: {}",
                    crate::grep::os_message(error)
                ));
                find_error("write error");
                return 1;
            }
            code
        }
        None if std::env::var_os(crate::STRICT_ENV).is_some() => {
            find_error("not supported by wavesh's find; the system find would run");
            1
        }
        None => crate::system_command("find", args),
    }
}

#[expect(clippy::print_stderr, reason = "find's own error output")]
fn find_error(message: &str) {
    eprintln!("find: {message}");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn search_2_plan_keeps_supported_expressions() {
        let a = args(&[".", "-name", "*.rs", "-o", "(", "-type", "d", "-prune", ")"]);
        assert_eq!(plan(&a), Some(a.clone()));
        let a = args(&[
            ".",
            "-exec",
            "grep",
            "-l",
            "-regextype",
            "{}",
            ";",
            "-print",
        ]);
        assert_eq!(plan(&a), Some(a.clone()), "-exec's words are not primaries");
    }

    #[test]
    fn search_2_regextype_findutils_default_is_accepted() {
        let a = args(&[".", "-regextype", "findutils-default", "-regex", ".*\\.rs"]);
        assert_eq!(plan(&a), Some(args(&[".", "-regex", ".*\\.rs"])));
    }

    #[test]
    fn search_2_what_findutils_reads_differently_is_named() {
        for differs in [
            &[".", "-printf", "\\18\\n"][..],
            &[".", "-printf", "%-10p\\n"],
            &[".", "-printf", "%h\\n"],
            &[".", "-perm", "/u=wX"],
            &[".", "-regex", ".*/a"],
            &[".", "-regextype", "findutils-default", "-iregex", "x"],
            &[".", "-ok", "echo", "{}", ";"],
            &["///", "-maxdepth", "0", "-execdir", "echo", "{}", ";"],
            &["-L", ".", "-type", "d"],
        ] {
            assert!(differs_from_gnu(&args(differs)), "{differs:?}");
        }
        for same in [
            &[".", "-printf", "%p %s\\n"][..],
            &[".", "-perm", "-644"],
            &[".", "-regextype", "posix-extended", "-regex", ".*/a"],
            &[".", "-name", "-regex"],
            &["/", "-maxdepth", "0", "-execdir", "echo", "{}", ";"],
        ] {
            assert!(!differs_from_gnu(&args(same)), "{same:?}");
        }
    }

    #[test]
    fn search_5_unknown_and_different_go_to_the_system_find() {
        assert_eq!(
            plan(&args(&[".", "-regextype", "sed", "-regex", "x"])),
            None
        );
        assert_eq!(plan(&args(&[".", "-regex", "a\\{2\\}"])), None);
        assert_eq!(plan(&args(&[".", "-newerXY", "f"])), None);
        assert_eq!(plan(&args(&[".", "-name"])), None);
        assert!(
            plan(&args(&[
                ".",
                "-regextype",
                "posix-extended",
                "-regex",
                "a{2}"
            ]))
            .is_some()
        );
    }
}
