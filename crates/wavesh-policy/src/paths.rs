//! The path policy (RO-9): a read-only command that opens a secret is not auto-approved,
//! and a stricter setting confines auto-approval to the workspace. The secret list is
//! data ([`crate::secrets`]).

use crate::Reason;
use std::path::{Component, Path, PathBuf};

use crate::git_guard::Fs;
use crate::secrets::{SecretKind, SecretPattern, is_secret_name, secret_match};

/// Where auto-approved commands may read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathPolicy {
    /// Refuse paths outside `roots` too (the stricter host setting).
    pub confine_to_roots: bool,
    /// The workspace and the additional directories.
    pub roots: Vec<PathBuf>,
}

/// Resolves `path` lexically against `cwd` (no file system access).
pub fn absolute(path: &str, cwd: &Path) -> PathBuf {
    let joined = if Path::new(path).is_absolute() {
        PathBuf::from(path)
    } else {
        cwd.join(path)
    };
    let mut out = PathBuf::new();
    for component in joined.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Why reading `path` (already `~`-expanded) is not auto-approved, if it is not: the
/// path as written is judged against the secret list (lexically, no file system).
pub fn check_read(path: &str, cwd: &Path, home: &Path, policy: &PathPolicy) -> Result<(), Reason> {
    if let Some(link) = magic_link(path, cwd) {
        return Err(Reason::secret(format!(
            "`{path}` goes through {link}, a link the kernel follows before `..`, so the \
             file it opens cannot be told from its name (it could be a secret)"
        )));
    }
    let resolved = absolute(path, cwd);
    if let Some(pattern) = secret_match(&resolved, home) {
        return Err(secret_reason(path, pattern));
    }
    if policy.confine_to_roots && !policy.roots.iter().any(|root| resolved.starts_with(root)) {
        return Err(crate::refuse!(
            "`{path}` is outside the workspace and the added directories"
        ));
    }
    Ok(())
}

/// The first magic link on the way to `path`, if any: `/proc/PID/cwd`, `root`, `fd/N`,
/// `map_files/...` (also under `task/TID/`), and `/dev/fd/N`, `/dev/stdin` and the like,
/// which point elsewhere whatever the text after them says (RO-9).
fn magic_link(path: &str, cwd: &Path) -> Option<String> {
    let joined;
    let path = if path.starts_with('/') {
        path
    } else {
        joined = format!("{}/{path}", cwd.display());
        &joined
    };
    let parts: Vec<&str> = path
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    match parts.as_slice() {
        ["dev", "fd" | "stdin" | "stdout" | "stderr", ..] => Some(format!("/dev/{}", parts[1])),
        ["proc", _, rest @ ..] => {
            let rest = match rest {
                ["task", _, inner @ ..] => inner,
                other => other,
            };
            match rest.first().copied() {
                Some(link @ ("cwd" | "root" | "fd" | "map_files" | "exe")) => {
                    Some(format!("/proc/{}/{link}", parts[1]))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

fn secret_reason(path: &str, pattern: &SecretPattern) -> Reason {
    Reason::secret(match pattern.kind {
        SecretKind::Home => format!("`{path}` is ~/{}, on the secret list", pattern.pattern),
        _ => format!("`{path}` looks like a secret ({})", pattern.pattern),
    })
}

/// [`check_read`] on the path the command will really open: symlinks resolved (the
/// link and every directory on the way), and a file with other hard links refused
/// (one of them could be a secret) (RO-9).
pub fn check_open(
    path: &str,
    cwd: &Path,
    home: &Path,
    policy: &PathPolicy,
    fs: &dyn Fs,
) -> Result<(), Reason> {
    check_read(path, cwd, home, policy)?;
    let resolved = absolute(path, cwd);
    if let Some(real) = fs.canonical(&resolved)
        && real != resolved
    {
        if let Some(pattern) = secret_match(&real, home) {
            return Err(secret_reason(&real.to_string_lossy(), pattern)
                .prefixed(&format!("`{path}` leads to {}: ", real.display())));
        }
        if policy.confine_to_roots && !policy.roots.iter().any(|root| real.starts_with(root)) {
            return Err(crate::refuse!(
                "`{path}` leads to {}, outside the workspace",
                real.display()
            ));
        }
    }
    if fs.hard_links(&resolved) > 1 {
        return Err(Reason::secret(format!(
            "`{path}` has other hard links, and one of them could be a secret"
        )));
    }
    Ok(())
}

/// Expands a glob word (already `~`-expanded) as bash would, against `cwd`: the words
/// it becomes, in the form bash passes them (relative when written relative). `None`
/// when a directory cannot be listed. A leading dot is matched only by a pattern
/// starting with `.` (or `[`), as bash does without `dotglob`. A glob with no match is
/// the word itself, as bash leaves it.
pub fn expand_glob(word: &str, cwd: &Path, fs: &dyn Fs) -> Option<Vec<String>> {
    let absolute_word = word.starts_with('/');
    let mut current: Vec<(String, PathBuf)> = vec![(
        String::new(),
        if absolute_word {
            PathBuf::from("/")
        } else {
            cwd.to_path_buf()
        },
    )];
    let mut first = true;
    for part in word.split('/') {
        if first && absolute_word {
            first = false;
            continue;
        }
        let join = |text: &str, part: &str| {
            if first && !absolute_word {
                part.to_owned()
            } else {
                format!("{text}/{part}")
            }
        };
        let mut next = Vec::new();
        for (text, dir) in &current {
            if !part.contains(['*', '?', '[']) {
                next.push((join(text, part), dir.join(part)));
                continue;
            }
            // As bash without `dotglob`: a leading dot must be matched by the pattern
            // (a bracket is taken as maybe matching it, a superset).
            let dots = part.starts_with(['.', '[', '\\']);
            // A directory that does not exist matches nothing; one that exists but
            // cannot be listed leaves the glob unknown.
            let names = match fs.list(dir) {
                Some(names) => names,
                None if fs.kind(dir).is_none() => continue,
                None => return None,
            };
            for name in names {
                if (dots || !name.starts_with('.')) && crate::secrets::glob_match(part, &name) {
                    next.push((join(text, &name), dir.join(&name)));
                }
            }
        }
        first = false;
        current = next;
        if current.len() > 10_000 {
            return None;
        }
    }
    if current.is_empty() {
        return Some(vec![word.to_owned()]);
    }
    Some(current.into_iter().map(|(text, _)| text).collect())
}

/// How a recursive reader walks a tree, and which files in it it opens.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Walk {
    /// It follows symlinks inside the tree (`grep -R`, `rg -L`, `find -L`).
    pub follow: bool,
    /// It skips hidden entries (ripgrep's default).
    pub skip_hidden: bool,
    /// The files it finds are opened by path, so a symlink to a file is opened
    /// through (`find -exec cat {}`, names given to `xargs`).
    pub opens_links: bool,
    /// A file is opened only if its name matches one of these globs (empty: any name):
    /// `grep --include`, `rg -g`, `rg -t`.
    pub any_of: Vec<String>,
    /// ... and all of these (find's `-name` tests joined by `-a`).
    pub all_of: Vec<String>,
    /// Names never opened (`--exclude`, `rg -g '!x'`).
    pub none_of: Vec<String>,
    /// Directories not entered (`--exclude-dir`).
    pub skip_dirs: Vec<String>,
    /// Only directories are visited: it opens no file (`find -type d`, `du`, `tree`).
    pub no_files: bool,
    /// It lists the directories at most this deep (the root's entries are at depth 1)
    /// and enters none deeper: `find -maxdepth N`, `tree -L N`. A directory it only
    /// names is not opened.
    pub max_depth: Option<usize>,
}

impl Walk {
    /// Whether a file of this name is opened.
    pub fn opens(&self, name: &str) -> bool {
        let m = |pattern: &String| crate::secrets::glob_match(pattern, name);
        !self.no_files
            && (self.any_of.is_empty() || self.any_of.iter().any(m))
            && self.all_of.iter().all(m)
            && !self.none_of.iter().any(m)
    }
}

/// Entries a recursive read may visit before the check gives up (and refuses).
pub const MAX_WALK: usize = 20_000;

/// RO-9 for a command that reads every file under `root` (`grep -r`, `rg`, `find
/// -exec`, names piped to `xargs`): no file it would open is a secret, through
/// symlinks too. A tree larger than [`MAX_WALK`] entries, or one that cannot be listed,
/// is refused.
pub fn walk_for_secrets(
    root: &str,
    cwd: &Path,
    home: &Path,
    fs: &dyn Fs,
    walk: &Walk,
) -> Result<(), Reason> {
    use crate::git_guard::FileKind;
    let start = absolute(root, cwd);
    // A file operand is judged by the path policy like any other.
    if !matches!(fs.kind(&start), Some(FileKind::Dir))
        && !fs
            .canonical(&start)
            .is_some_and(|real| matches!(fs.kind(&real), Some(FileKind::Dir)))
    {
        return Ok(());
    }
    let mut queue = vec![(
        fs.canonical(&start).unwrap_or_else(|| start.clone()),
        0usize,
    )];
    let mut seen = 0usize;
    let mut visited_real: Vec<PathBuf> = Vec::new();
    while let Some((dir, depth)) = queue.pop() {
        let Some(names) = fs.list(&dir) else {
            if fs.kind(&dir).is_none() {
                continue;
            }
            return Err(Reason::secret(format!(
                "`{root}` is read recursively and {} cannot be listed to check it for secrets",
                dir.display()
            )));
        };
        for name in names {
            seen += 1;
            if seen > MAX_WALK {
                return Err(Reason::secret(format!(
                    "`{root}` is read recursively and holds over {MAX_WALK} entries, too many to check for secrets"
                )));
            }
            if walk.skip_hidden && name.starts_with('.') {
                continue;
            }
            let path = dir.join(&name);
            let kind = fs.kind(&path);
            // Named at the deepest level, never opened.
            if kind == Some(FileKind::Dir) && walk.max_depth.is_some_and(|max| depth + 1 >= max) {
                continue;
            }
            if kind == Some(FileKind::Dir) {
                if walk
                    .skip_dirs
                    .iter()
                    .any(|p| crate::secrets::glob_match(p, &name))
                {
                    continue;
                }
            } else if !walk.opens(&name) {
                continue;
            }
            if let Some(pattern) = secret_match(&path, home) {
                return Err(Reason::secret(format!(
                    "`{root}` is read recursively and holds {}: {}",
                    path.display(),
                    secret_reason(&path.to_string_lossy(), pattern)
                )));
            }
            match kind {
                Some(FileKind::Dir) => queue.push((path, depth + 1)),
                Some(FileKind::Symlink) if walk.follow || walk.opens_links => {
                    let Some(real) = fs.canonical(&path) else {
                        continue;
                    };
                    if let Some(pattern) = secret_match(&real, home) {
                        return Err(Reason::secret(format!(
                            "`{root}` is read recursively and {} leads to {}: {}",
                            path.display(),
                            real.display(),
                            secret_reason(&real.to_string_lossy(), pattern)
                        )));
                    }
                    if walk.follow
                        && matches!(fs.kind(&real), Some(FileKind::Dir))
                        && !real.starts_with(&start)
                        && !visited_real.contains(&real)
                    {
                        visited_real.push(real.clone());
                        queue.push((real, depth + 1));
                    }
                }
                Some(FileKind::File(_)) if fs.hard_links(&path) > 1 => {
                    return Err(Reason::secret(format!(
                        "`{root}` is read recursively and {} has other hard links, one of which could be a secret",
                        path.display()
                    )));
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// Whether a word is plausibly a path operand: it has a slash, starts with `.` or `~`,
/// or is itself a secret file name.
pub fn looks_like_path(value: &str) -> bool {
    value.contains('/') || value.starts_with('.') || value.starts_with('~') || is_secret_name(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(path: &str) -> Result<(), Reason> {
        check_read(
            path,
            Path::new("/work/app"),
            Path::new("/home/u"),
            &PathPolicy::default(),
        )
    }

    #[test]
    fn ro_9_secrets_are_not_auto_approved() {
        for secret in [
            "/home/u/.ssh/id_rsa",
            "/home/u/.aws/credentials",
            "/home/u/.gnupg/x",
            "/home/u/.netrc",
            "/home/u/.docker/config.json",
            "/home/u/.kube/config",
            "/home/u/.config/gh/hosts.yml",
            "/home/u/.git-credentials",
            ".env",
            ".env.local",
            "config/.env.production",
            "server.pem",
            "tls.key",
            "/etc/shadow",
            "../../home/u/.ssh/config",
            "keys/id_ed25519.pub",
        ] {
            assert!(check(secret).is_err(), "{secret}");
        }
        for fine in [
            "src/main.rs",
            ".env.example",
            "/etc/hosts",
            "README.md",
            "/home/u/project/x",
            ".gitignore",
        ] {
            assert!(check(fine).is_ok(), "{fine}");
        }
    }

    #[test]
    fn ro_9_confinement() {
        let policy = PathPolicy {
            confine_to_roots: true,
            roots: vec![PathBuf::from("/work/app"), PathBuf::from("/opt/extra")],
        };
        let check =
            |p: &str| check_read(p, Path::new("/work/app/src"), Path::new("/home/u"), &policy);
        assert!(check("main.rs").is_ok());
        assert!(check("/opt/extra/a").is_ok());
        assert!(check("../../other").is_err());
        assert!(check("/etc/hosts").is_err());
    }

    struct Tree(Vec<(&'static str, &'static [&'static str])>);

    impl Fs for Tree {
        fn kind(&self, _: &Path) -> Option<crate::git_guard::FileKind> {
            None
        }
        fn read_link(&self, _: &Path) -> Option<PathBuf> {
            None
        }
        fn read(&self, _: &Path, _: u64) -> Option<Vec<u8>> {
            None
        }
        fn list(&self, dir: &Path) -> Option<Vec<String>> {
            self.0
                .iter()
                .find(|(d, _)| Path::new(d) == dir)
                .map(|(_, names)| names.iter().map(|n| (*n).to_owned()).collect())
        }
    }

    #[test]
    fn ro_9_globs_expand_as_bash_writes_them() {
        let tree = Tree(vec![
            ("/w", &["a.txt", "b.txt", "-fprint", ".env", "src"]),
            ("/w/src", &["m.rs"]),
            ("/h", &[".ssh"]),
            ("/h/.ssh", &["id_rsa"]),
        ]);
        let expand = |w: &str| expand_glob(w, Path::new("/w"), &tree);
        let mut all = expand("*").unwrap();
        all.sort();
        assert_eq!(all, vec!["-fprint", "a.txt", "b.txt", "src"]);
        assert_eq!(expand(".e*").unwrap(), vec![".env"]);
        assert_eq!(expand("./*.txt").unwrap(), vec!["./a.txt", "./b.txt"]);
        assert_eq!(expand("src/*.rs").unwrap(), vec!["src/m.rs"]);
        assert_eq!(expand("/h/.ss?/*").unwrap(), vec!["/h/.ssh/id_rsa"]);
        assert_eq!(expand("*.md").unwrap(), vec!["*.md"]);
        assert_eq!(expand("/nowhere/*").unwrap(), vec!["/nowhere/*"]);
    }
}
