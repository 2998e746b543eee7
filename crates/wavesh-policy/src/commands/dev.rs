//! Developer tools, only in forms that print and change nothing: version queries and a
//! few listings.

use wavesh_parse::Word;

use super::Entry;

/// Only `--version`, `-V`, `-v` or `version` alone.
fn version_only(args: &[Word]) -> Result<(), String> {
    match args {
        [only]
            if matches!(
                only.value.as_str(),
                "--version" | "-V" | "-v" | "version" | "-version"
            ) =>
        {
            Ok(())
        }
        _ => Err("only a version query is read-only for this tool".into()),
    }
}

/// `go version`, `go env` (without -w/-u), `go list`.
fn go(args: &[Word]) -> Result<(), String> {
    match args.first().map(|w| w.value.as_str()) {
        Some("version") => Ok(()),
        Some("env")
            if args[1..]
                .iter()
                .all(|w| !w.value.starts_with("-w") && !w.value.starts_with("-u")) =>
        {
            Ok(())
        }
        _ => Err("only `go version` and `go env` are read-only".into()),
    }
}

/// `npm ls`/`npm list` and version queries: they read `node_modules` only.
fn npm(args: &[Word]) -> Result<(), String> {
    match args.first().map(|w| w.value.as_str()) {
        Some("ls" | "list") => {
            for word in &args[1..] {
                let ok = matches!(
                    word.value.as_str(),
                    "--all"
                        | "-a"
                        | "--json"
                        | "--long"
                        | "-l"
                        | "--parseable"
                        | "-p"
                        | "--prod"
                        | "--dev"
                        | "--omit=dev"
                        | "--global"
                        | "-g"
                ) || word.value.starts_with("--depth")
                    || !word.value.starts_with('-');
                if !ok {
                    return Err(format!("`npm ls {}` is not a known safe option", word.raw));
                }
            }
            Ok(())
        }
        _ => version_only(args),
    }
}

pub(super) const COMMANDS: &[Entry] = &[
    ("cargo", None, Some(version_only)),
    ("rustc", None, Some(version_only)),
    ("rustup", None, Some(version_only)),
    ("node", None, Some(version_only)),
    ("npm", None, Some(npm)),
    ("pnpm", None, Some(version_only)),
    ("yarn", None, Some(version_only)),
    ("python", None, Some(version_only)),
    ("python3", None, Some(version_only)),
    ("pip", None, Some(version_only)),
    ("pip3", None, Some(version_only)),
    ("java", None, Some(version_only)),
    ("go", None, Some(go)),
    ("ruby", None, Some(version_only)),
    ("deno", None, Some(version_only)),
    ("bun", None, Some(version_only)),
    ("make", None, Some(version_only)),
    ("gcc", None, Some(version_only)),
    ("cc", None, Some(version_only)),
    ("clang", None, Some(version_only)),
    ("docker", None, Some(version_only)),
    ("kubectl", None, Some(version_only)),
];
