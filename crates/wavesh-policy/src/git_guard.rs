//! The git runtime guard (GIT-1..5): whether running git in a directory could make it
//! run programs named by a repository an attacker controls. Reads through [`Fs`] only.

use std::path::{Component, Path, PathBuf};

use crate::classify::GitContext;

/// The file-system questions the guard asks.
pub trait Fs {
    /// `Some(kind)` if something exists at `path` (without following a final symlink).
    fn kind(&self, path: &Path) -> Option<FileKind>;
    /// The target of a symlink.
    fn read_link(&self, path: &Path) -> Option<PathBuf>;
    /// Up to `max` bytes of a file; `None` if it cannot be read.
    fn read(&self, path: &Path, max: u64) -> Option<Vec<u8>>;
}

/// What is at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A directory.
    Dir,
    /// A regular file of this size.
    File(u64),
    /// A symbolic link.
    Symlink,
}

/// The real file system.
#[derive(Debug, Default, Clone, Copy)]
pub struct RealFs;

impl Fs for RealFs {
    fn kind(&self, path: &Path) -> Option<FileKind> {
        let meta = std::fs::symlink_metadata(path).ok()?;
        Some(if meta.file_type().is_symlink() {
            FileKind::Symlink
        } else if meta.is_dir() {
            FileKind::Dir
        } else {
            FileKind::File(meta.len())
        })
    }

    fn read_link(&self, path: &Path) -> Option<PathBuf> {
        std::fs::read_link(path).ok()
    }

    fn read(&self, path: &Path, max: u64) -> Option<Vec<u8>> {
        use std::io::Read;
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .ok()?
            .take(max)
            .read_to_end(&mut bytes)
            .ok()?;
        Some(bytes)
    }
}

/// A gitdir file larger than this is unsafe (GIT-1).
const MAX_GITDIR_FILE: u64 = 32 * 1024;

/// Environment variables that make read-only git run programs or use another repository
/// (GIT-5).
pub const UNSAFE_GIT_ENV: &[&str] = &[
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG_PARAMETERS",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_EXEC_PATH",
    "GIT_EXTERNAL_DIFF",
    "GIT_SSH_COMMAND",
    "GIT_PAGER",
    "GIT_ASKPASS",
];

/// The guard's verdict for running git in `cwd`, given the process environment.
pub fn git_context(cwd: &Path, env: &[(String, String)], fs: &dyn Fs) -> GitContext {
    if let Some((name, _)) = env
        .iter()
        .find(|(name, _)| UNSAFE_GIT_ENV.contains(&name.as_str()))
    {
        return GitContext::Unsafe(format!("the environment sets {name}"));
    }
    match find_repository(cwd, fs) {
        Ok(Some(git_dir)) => check_config(&git_dir, fs),
        Ok(None) => GitContext::Safe,
        Err(why) => GitContext::Unsafe(why),
    }
}

fn has_git_component(path: &Path) -> bool {
    path.components()
        .any(|c| matches!(c, Component::Normal(n) if n == ".git"))
}

/// Walks up from `cwd`; `Ok(Some(dir))` is the trusted git directory.
fn find_repository(cwd: &Path, fs: &dyn Fs) -> Result<Option<PathBuf>, String> {
    for level in cwd.ancestors() {
        let dot_git = level.join(".git");
        match fs.kind(&dot_git) {
            Some(FileKind::Dir) => return trusted_dir(&dot_git, fs).map(Some),
            Some(FileKind::Symlink) => {
                let target = fs.read_link(&dot_git).unwrap_or_default();
                let target = if target.is_absolute() {
                    target
                } else {
                    level.join(target)
                };
                return pointer_target(level, &target, fs).map(Some);
            }
            Some(FileKind::File(size)) => {
                if size > MAX_GITDIR_FILE {
                    return Err(format!("{} is larger than 32 KiB", dot_git.display()));
                }
                let bytes = fs.read(&dot_git, MAX_GITDIR_FILE + 1).unwrap_or_default();
                if bytes.contains(&0) {
                    return Err(format!("{} contains a NUL byte", dot_git.display()));
                }
                let text = String::from_utf8_lossy(&bytes);
                let Some(target) = text.trim().strip_prefix("gitdir:").map(str::trim) else {
                    return Err(format!("{} is not a gitdir file", dot_git.display()));
                };
                let target = PathBuf::from(target);
                let target = if target.is_absolute() {
                    target
                } else {
                    level.join(target)
                };
                return pointer_target(level, &target, fs).map(Some);
            }
            None => {}
        }
        // GIT-3: a bare repository before any .git: unsafe.
        let looks_bare = matches!(fs.kind(&level.join("HEAD")), Some(FileKind::File(_)))
            || matches!(fs.kind(&level.join("objects")), Some(FileKind::Dir))
            || matches!(fs.kind(&level.join("refs")), Some(FileKind::Dir));
        if looks_bare {
            return Err(format!("{} looks like a bare repository", level.display()));
        }
    }
    Ok(None)
}

/// GIT-1: a `.git` symlink or gitdir file must point outside the directory holding it,
/// at a path with a `.git` component.
fn pointer_target(level: &Path, target: &Path, fs: &dyn Fs) -> Result<PathBuf, String> {
    let target = crate::paths::absolute(&target.to_string_lossy(), level);
    if target.starts_with(level) && !target.starts_with(level.join(".git")) || target == level {
        return Err(format!(
            "the .git pointer in {} leads inside that directory",
            level.display()
        ));
    }
    if target.starts_with(level) || !has_git_component(&target) {
        return Err(format!(
            "the .git pointer in {} leads to {}, which is not a .git directory",
            level.display(),
            target.display()
        ));
    }
    if !matches!(fs.kind(&target.join("HEAD")), Some(FileKind::File(_))) {
        return Err(format!("{} has no HEAD", target.display()));
    }
    Ok(target)
}

/// GIT-2: a `.git` directory is trusted only with a valid HEAD, `objects` and `refs`, and
/// no `commondir`.
fn trusted_dir(git_dir: &Path, fs: &dyn Fs) -> Result<PathBuf, String> {
    let head = fs.read(&git_dir.join("HEAD"), 4096).unwrap_or_default();
    let head = String::from_utf8_lossy(&head);
    let head = head.trim();
    let valid_head = head.starts_with("ref: refs/")
        || (head.len() >= 40 && head.chars().all(|c| c.is_ascii_hexdigit()));
    if !valid_head {
        return Err(format!("{} has no valid HEAD", git_dir.display()));
    }
    for dir in ["objects", "refs"] {
        if !matches!(fs.kind(&git_dir.join(dir)), Some(FileKind::Dir)) {
            return Err(format!("{} has no {dir} directory", git_dir.display()));
        }
    }
    if fs.kind(&git_dir.join("commondir")).is_some() {
        return Err(format!("{} has a commondir", git_dir.display()));
    }
    Ok(git_dir.to_path_buf())
}

/// GIT-5: config keys that make read-only git run a program.
fn dangerous_key(section: &str, subsection: Option<&str>, key: &str, value: &str) -> bool {
    match (section, subsection.is_some(), key) {
        (
            "core",
            false,
            "fsmonitor" | "hookspath" | "sshcommand" | "askpass" | "pager" | "editor",
        ) => true,
        ("diff", false, "external") => true,
        ("diff", true, "textconv" | "command") => true,
        ("filter", true, "clean" | "smudge" | "process") => true,
        ("gpg", _, "program") => true,
        ("pager", _, _) => true,
        ("alias", _, _) => value.trim_start().starts_with('!'),
        ("credential", _, "helper") => true,
        ("core", false, "gitproxy") => true,
        _ => false,
    }
}

fn check_config(git_dir: &Path, fs: &dyn Fs) -> GitContext {
    let mut files = vec![git_dir.join("config"), git_dir.join("config.worktree")];
    let mut seen = 0;
    while let Some(file) = files.pop() {
        seen += 1;
        if seen > 16 {
            return GitContext::Unsafe("the repository config includes too many files".into());
        }
        let Some(bytes) = fs.read(&file, 1024 * 1024) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        let mut section = String::new();
        let mut subsection: Option<String> = None;
        for line in text.lines() {
            let line = line.trim();
            if line.starts_with('#') || line.starts_with(';') || line.is_empty() {
                continue;
            }
            if let Some(header) = line.strip_prefix('[').and_then(|l| l.split(']').next()) {
                let (name, sub) = match header.split_once(char::is_whitespace) {
                    Some((name, sub)) => (name, Some(sub.trim().trim_matches('"').to_owned())),
                    None => match header.split_once('.') {
                        Some((name, sub)) => (name, Some(sub.to_owned())),
                        None => (header, None),
                    },
                };
                section = name.to_ascii_lowercase();
                subsection = sub;
                continue;
            }
            let (key, value) = line
                .split_once('=')
                .map_or((line, "true"), |(k, v)| (k.trim(), v.trim()));
            let key = key.to_ascii_lowercase();
            if dangerous_key(&section, subsection.as_deref(), &key, value) {
                return GitContext::Unsafe(format!(
                    "{} sets {section}.{}{key}",
                    file.display(),
                    subsection
                        .as_deref()
                        .map(|s| format!("{s}."))
                        .unwrap_or_default()
                ));
            }
            if (section == "include" || section == "includeif") && key == "path" {
                let path = PathBuf::from(value.trim_matches('"'));
                files.push(if path.is_absolute() {
                    path
                } else {
                    file.parent().unwrap_or(git_dir).join(path)
                });
            }
        }
    }
    GitContext::Safe
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[derive(Default)]
    struct FakeFs {
        entries: HashMap<PathBuf, (FileKind, Vec<u8>)>,
        links: HashMap<PathBuf, PathBuf>,
    }

    impl FakeFs {
        fn dir(mut self, path: &str) -> Self {
            self.entries
                .insert(path.into(), (FileKind::Dir, Vec::new()));
            self
        }
        fn file(mut self, path: &str, text: &str) -> Self {
            self.entries.insert(
                path.into(),
                (FileKind::File(text.len() as u64), text.as_bytes().to_vec()),
            );
            self
        }
        fn link(mut self, path: &str, target: &str) -> Self {
            self.entries
                .insert(path.into(), (FileKind::Symlink, Vec::new()));
            self.links.insert(path.into(), target.into());
            self
        }
        fn repo(self, git: &str) -> Self {
            self.dir(git)
                .file(&format!("{git}/HEAD"), "ref: refs/heads/main\n")
                .dir(&format!("{git}/objects"))
                .dir(&format!("{git}/refs"))
        }
    }

    impl Fs for FakeFs {
        fn kind(&self, path: &Path) -> Option<FileKind> {
            self.entries.get(path).map(|(kind, _)| *kind)
        }
        fn read_link(&self, path: &Path) -> Option<PathBuf> {
            self.links.get(path).cloned()
        }
        fn read(&self, path: &Path, max: u64) -> Option<Vec<u8>> {
            self.entries
                .get(path)
                .map(|(_, bytes)| bytes.iter().take(max as usize).copied().collect())
        }
    }

    fn context(fs: &FakeFs) -> GitContext {
        git_context(Path::new("/w/app/src"), &[], fs)
    }

    #[test]
    fn git_2_a_normal_repository_is_safe() {
        let fs = FakeFs::default().repo("/w/app/.git").file(
            "/w/app/.git/config",
            "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = x\n",
        );
        assert_eq!(context(&fs), GitContext::Safe);
        assert_eq!(
            git_context(Path::new("/elsewhere"), &[], &fs),
            GitContext::Safe
        );
    }

    #[test]
    fn git_2_incomplete_or_linked_git_dirs_are_unsafe() {
        let no_objects = FakeFs::default()
            .dir("/w/app/.git")
            .file("/w/app/.git/HEAD", "ref: refs/heads/main")
            .dir("/w/app/.git/refs");
        assert!(matches!(context(&no_objects), GitContext::Unsafe(_)));
        let bad_head = FakeFs::default()
            .repo("/w/app/.git")
            .file("/w/app/.git/HEAD", "junk");
        assert!(matches!(context(&bad_head), GitContext::Unsafe(_)));
        let commondir = FakeFs::default()
            .repo("/w/app/.git")
            .file("/w/app/.git/commondir", "../x");
        assert!(matches!(context(&commondir), GitContext::Unsafe(_)));
    }

    #[test]
    fn git_1_pointers() {
        let inside = FakeFs::default()
            .file("/w/app/.git", "gitdir: ./evil")
            .repo("/w/app/evil");
        assert!(matches!(context(&inside), GitContext::Unsafe(_)));
        let no_git_component = FakeFs::default()
            .file("/w/app/.git", "gitdir: /tmp/evil")
            .repo("/tmp/evil");
        assert!(matches!(context(&no_git_component), GitContext::Unsafe(_)));
        let worktree = FakeFs::default()
            .file("/w/app/.git", "gitdir: /w/main/.git/worktrees/app")
            .file("/w/main/.git/worktrees/app/HEAD", "ref: refs/heads/x");
        assert_eq!(context(&worktree), GitContext::Safe);
        let nul = FakeFs::default().file("/w/app/.git", "gitdir: /w/main/.git\0");
        assert!(matches!(context(&nul), GitContext::Unsafe(_)));
        let big = FakeFs::default().file("/w/app/.git", &"x".repeat(40 * 1024));
        assert!(matches!(context(&big), GitContext::Unsafe(_)));
        let link_inside = FakeFs::default()
            .link("/w/app/.git", "sub/evil")
            .repo("/w/app/sub/evil");
        assert!(matches!(context(&link_inside), GitContext::Unsafe(_)));
    }

    #[test]
    fn git_3_bare_repository_above_is_unsafe() {
        let fs = FakeFs::default()
            .file("/w/app/HEAD", "ref: refs/heads/main")
            .dir("/w/app/objects");
        assert!(matches!(context(&fs), GitContext::Unsafe(why) if why.contains("bare")));
    }

    #[test]
    fn git_5_config_that_runs_programs_is_unsafe() {
        for config in [
            "[core]\n\tfsmonitor = ./x.sh\n",
            "[core]\nhooksPath = .hooks\n",
            "[diff]\n\texternal = sh\n",
            "[diff \"bin\"]\n\ttextconv = ./conv\n",
            "[filter \"lfs\"]\n\tsmudge = x\n",
            "[core]\n\tsshCommand = x\n",
            "[gpg]\n\tprogram = x\n",
            "[core]\n\tpager = less\n",
            "[pager]\n\tlog = x\n",
            "[alias]\n\tst = !sh -c x\n",
            "[credential]\n\thelper = store\n",
        ] {
            let fs = FakeFs::default()
                .repo("/w/app/.git")
                .file("/w/app/.git/config", config);
            assert!(matches!(context(&fs), GitContext::Unsafe(_)), "{config}");
        }
        let alias_ok = FakeFs::default()
            .repo("/w/app/.git")
            .file("/w/app/.git/config", "[alias]\n\tst = status\n");
        assert_eq!(context(&alias_ok), GitContext::Safe);
        let included = FakeFs::default()
            .repo("/w/app/.git")
            .file("/w/app/.git/config", "[include]\n\tpath = extra.cfg\n")
            .file("/w/app/.git/extra.cfg", "[core]\n\tfsmonitor = x\n");
        assert!(matches!(context(&included), GitContext::Unsafe(_)));
    }

    #[test]
    fn git_5_environment() {
        let fs = FakeFs::default();
        for name in UNSAFE_GIT_ENV {
            let env = vec![((*name).to_owned(), "x".to_owned())];
            assert!(
                matches!(
                    git_context(Path::new("/w"), &env, &fs),
                    GitContext::Unsafe(_)
                ),
                "{name}"
            );
        }
    }
}
