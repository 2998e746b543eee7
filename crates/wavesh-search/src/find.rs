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

/// `find ARGS`; returns the exit code.
pub fn find_main(args: &[String]) -> i32 {
    match plan(args) {
        Some(ours) => {
            let mut argv = vec!["find"];
            argv.extend(ours.iter().map(String::as_str));
            let deps = findutils::find::StandardDependencies::new();
            findutils::find::find_main(&argv, &deps)
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
