//! The secret list (RO-9): files no auto-approved command may open. The list is data,
//! `data/secrets.txt`, shared with the sandbox, which keeps the same paths unreadable
//! (SBX-2). See `docs/readonly.md` for its format.

use std::path::{Component, Path, PathBuf};
use std::sync::LazyLock;

/// The text of the list, as shipped.
pub const SECRETS_SOURCE: &str = include_str!("../data/secrets.txt");

/// Where a pattern applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecretKind {
    /// A path under the home directory (a directory covers everything in it).
    Home,
    /// An absolute path (a directory covers everything in it).
    Absolute,
    /// A file name, in any directory.
    Name,
    /// A file name that is not a secret although a [`SecretKind::Name`] pattern matches.
    NotName,
}

/// One line of the list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SecretPattern {
    /// Where it applies.
    pub kind: SecretKind,
    /// The glob: `*`, `?` and `[...]` within one component, `/` between components.
    pub pattern: &'static str,
}

/// A line of the list that is not `KIND PATTERN`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("secret list line {line}: {why}: `{text}`")]
pub struct ListError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub why: &'static str,
    /// The line.
    pub text: String,
}

/// Parses a list in the format of `data/secrets.txt`.
pub fn parse_list(source: &'static str) -> Result<Vec<SecretPattern>, ListError> {
    let mut out = Vec::new();
    for (index, line) in source.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let error = |why| ListError {
            line: index + 1,
            why,
            text: line.to_owned(),
        };
        let (kind, pattern) = trimmed
            .split_once(' ')
            .ok_or_else(|| error("no pattern after the kind"))?;
        let kind = match kind {
            "home" => SecretKind::Home,
            "abs" => SecretKind::Absolute,
            "name" => SecretKind::Name,
            "not-name" => SecretKind::NotName,
            _ => return Err(error("the kind is not home, abs, name or not-name")),
        };
        let pattern = pattern.trim();
        match kind {
            SecretKind::Absolute if !pattern.starts_with('/') => {
                return Err(error("an abs pattern must start with /"));
            }
            SecretKind::Home if pattern.starts_with('/') || pattern.starts_with('~') => {
                return Err(error("a home pattern is relative to the home directory"));
            }
            SecretKind::Name | SecretKind::NotName if pattern.contains('/') => {
                return Err(error("a name pattern cannot hold a /"));
            }
            _ => {}
        }
        out.push(SecretPattern { kind, pattern });
    }
    Ok(out)
}

static LIST: LazyLock<Vec<SecretPattern>> = LazyLock::new(|| {
    parse_list(SECRETS_SOURCE).expect("data/secrets.txt parses (a unit test pins it)")
});

/// Every pattern of the shipped list.
pub fn secret_patterns() -> &'static [SecretPattern] {
    &LIST
}

/// The home and absolute patterns as paths for `home` (globs kept as written), for a
/// sandbox that denies them.
pub fn secret_paths(home: &Path) -> Vec<PathBuf> {
    secret_patterns()
        .iter()
        .filter_map(|p| match p.kind {
            SecretKind::Home => Some(home.join(p.pattern)),
            SecretKind::Absolute => Some(PathBuf::from(p.pattern)),
            _ => None,
        })
        .collect()
}

/// Whether `name` matches the glob `pattern` (one component), as `fnmatch(3)` reads it.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    wavesh_glob::fnmatch(pattern, name)
}

/// Whether a path pattern (components of globs) covers `path` (`path` equal to it or
/// inside it).
fn covers(pattern: &str, path: &[&str]) -> bool {
    let parts: Vec<&str> = pattern.split('/').filter(|p| !p.is_empty()).collect();
    parts.len() <= path.len() && parts.iter().zip(path).all(|(p, n)| glob_match(p, n))
}

fn normal_components(path: &Path) -> Vec<&str> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(n) => n.to_str(),
            _ => None,
        })
        .collect()
}

/// Whether the file name `name` is a secret wherever it is.
pub fn is_secret_name(name: &str) -> bool {
    let list = secret_patterns();
    // Names match whatever their case: `SERVER.KEY` is a `*.key`, `.ENV` a `.env`.
    let fold = wavesh_glob::fnmatch_fold;
    list.iter()
        .any(|p| p.kind == SecretKind::Name && fold(p.pattern, name))
        && !list
            .iter()
            .any(|p| p.kind == SecretKind::NotName && fold(p.pattern, name))
}

/// The pattern that makes the absolute, normalised `path` a secret, if one does.
pub fn secret_match(path: &Path, home: &Path) -> Option<&'static SecretPattern> {
    let components = normal_components(path);
    let list = secret_patterns();
    if let Some(name) = components.last()
        && is_secret_name(name)
    {
        return list
            .iter()
            .find(|p| p.kind == SecretKind::Name && wavesh_glob::fnmatch_fold(p.pattern, name));
    }
    let inside_home = (!home.as_os_str().is_empty())
        .then(|| path.strip_prefix(home).ok())
        .flatten()
        .map(normal_components);
    list.iter().find(|p| match p.kind {
        SecretKind::Absolute => covers(p.pattern, &components),
        SecretKind::Home => inside_home
            .as_ref()
            .is_some_and(|rest| !rest.is_empty() && covers(p.pattern, rest)),
        _ => false,
    })
}

/// Whether a glob path (absolute, normalised; its components may hold `*`, `?`, `[...]`)
/// could match a secret: its last component against every secret name, and the whole
/// against the home and absolute patterns. Used when the file system cannot be listed.
pub fn glob_may_match_secret(glob: &Path, home: &Path) -> bool {
    let components = normal_components(glob);
    let examples = |pattern: &str| -> String {
        pattern
            .replace(['*', '?'], "x")
            .replace("[!", "[")
            .chars()
            .collect::<String>()
    };
    let list = secret_patterns();
    if let Some(last) = components.last() {
        for p in list.iter().filter(|p| p.kind == SecretKind::Name) {
            if glob_match(last, &examples(p.pattern)) || glob_match(last, p.pattern) {
                return true;
            }
        }
    }
    for p in list {
        let full: Vec<String> = match p.kind {
            SecretKind::Absolute => normal_components(Path::new(p.pattern))
                .iter()
                .map(|c| examples(c))
                .collect(),
            SecretKind::Home => normal_components(home)
                .iter()
                .map(|c| (*c).to_owned())
                .chain(p.pattern.split('/').map(examples))
                .collect(),
            _ => continue,
        };
        // The glob reaches the secret or a file inside it.
        let reaches = components
            .iter()
            .zip(full.iter())
            .all(|(g, s)| glob_match(g, s) || glob_match(g, "x"));
        if reaches && components.len() >= full.len() {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ro_9_the_shipped_list_parses_and_is_long() {
        let list = parse_list(SECRETS_SOURCE).expect("parses");
        assert!(list.len() >= 100, "{} patterns", list.len());
        assert!(secret_paths(Path::new("/h")).contains(&PathBuf::from("/h/.ssh")));
    }

    #[test]
    fn ro_9_bad_lines_are_named() {
        let error = parse_list("home .ssh\nfile x\n").unwrap_err();
        assert_eq!(error.line, 2);
        assert!(error.to_string().contains("file x"));
        assert!(parse_list("abs etc/shadow").is_err());
        assert!(parse_list("name a/b").is_err());
        assert!(parse_list("home").is_err());
    }

    #[test]
    fn ro_9_globs() {
        assert!(glob_match("*.pem", "a.pem"));
        assert!(glob_match(".env*", ".env"));
        assert!(glob_match(".ss?", ".ssh"));
        assert!(glob_match(".[s]sh", ".ssh"));
        assert!(glob_match("[!a]b", "cb"));
        assert!(!glob_match("[!a]b", "ab"));
        assert!(glob_match("a[0-9]", "a5"));
        assert!(!glob_match("*.pem", "a.pem.txt"));
        assert!(glob_match("*", ""));
        assert!(glob_match("a*b*c", "aXXbYYc"));
        assert!(!glob_match("a*b*c", "aXXbYY"));
    }

    #[test]
    fn ro_9_matches() {
        let home = Path::new("/home/u");
        let secret = |p: &str| secret_match(Path::new(p), home).is_some();
        for p in [
            "/home/u/.ssh",
            "/home/u/.ssh/id_rsa",
            "/home/u/.aws/credentials",
            "/home/u/.config/gcloud/x/y",
            "/proc/1/environ",
            "/proc/self/environ",
            "/proc/12/task/13/environ",
            "/home/u/.bash_history",
            "/w/app/.env",
            "/w/app/prod.env",
            "/w/app/.env-staging",
            "/w/app/.envrc",
            "/w/app/.dev.vars",
            "/w/app/k.ppk",
            "/w/app/terraform.tfstate",
            "/home/u/.codex/auth.json",
            "/home/u/.claude/.credentials.json",
            "/etc/ssh/ssh_host_ed25519_key",
            "/home/u/Library/Application Support/Google/Chrome/Default/Cookies",
        ] {
            assert!(secret(p), "{p}");
        }
        for p in [
            "/w/app/.env.example",
            "/w/app/src/main.rs",
            "/proc/1/status",
            "/home/u/.sshx",
            "/home/u/project/.ssh.md",
            "/etc/passwd",
        ] {
            assert!(!secret(p), "{p}");
        }
    }

    #[test]
    fn ro_9_globs_that_may_reach_a_secret() {
        let home = Path::new("/home/u");
        let may = |p: &str| glob_may_match_secret(Path::new(p), home);
        for p in [
            "/w/app/.env*",
            "/w/app/*.pem",
            "/home/u/.ss?/*",
            "/home/u/.[s]sh/*",
            "/home/u/.a*/credentials",
            "/proc/*/environ",
            "/w/app/*",
        ] {
            assert!(may(p), "{p}");
        }
        for p in ["/w/app/src/*.rs", "/w/app/*.md", "/home/u/project/*.txt"] {
            assert!(!may(p), "{p}");
        }
    }
}
