//! The policy of one command as data: what it may write, what stays read-only, what it
//! may not read. Both the Linux enforcement and the Seatbelt profile are made from it.

use std::path::{Component, Path, PathBuf};

use super::{Level, SandboxConfig};

/// The private files of one command.
#[derive(Debug, Clone)]
pub struct CommandFiles {
    /// Its output file (stdout and stderr; also reached as `/dev/stdout`).
    pub output: PathBuf,
    /// Its cwd read-back file.
    pub cwd_file: Option<PathBuf>,
    /// Its TMPDIR: private to the command at `read-only`, the session's at
    /// `workspace-write`.
    pub tmp_dir: PathBuf,
    /// The directory it starts in.
    pub cwd: PathBuf,
}

/// What one command may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The level.
    pub level: Level,
    /// Directories the command may change anything in.
    pub writable_dirs: Vec<PathBuf>,
    /// Single files it may write (`/dev/null`, its output and cwd files).
    pub writable_files: Vec<PathBuf>,
    /// Existing paths inside writable directories that stay read-only (SBX-1).
    pub read_only: Vec<PathBuf>,
    /// Secret paths: absolute, not necessarily existing.
    pub secret_paths: Vec<PathBuf>,
    /// Secret file-name patterns (see [`super::SecretList::names`]).
    pub secret_names: Vec<String>,
    /// Directories whose entries are matched against `secret_names` (beside the
    /// directories on the way to a secret path).
    pub scan_dirs: Vec<PathBuf>,
    /// TCP connect stays open: the command reads over the network (`gh pr view`), an
    /// exception the host asks for explicitly.
    pub network: bool,
}

impl Plan {
    /// The plan of a command at `level` under `config` with `files`.
    pub fn new(level: Level, config: &SandboxConfig, files: &CommandFiles, network: bool) -> Plan {
        let mut writable_dirs = vec![lexical(&files.tmp_dir)];
        let mut read_only = Vec::new();
        if level == Level::WorkspaceWrite {
            for root in config.roots.iter().chain(&config.extra_writable) {
                let root = lexical(root);
                let protected = protected_paths(&root);
                writable_dirs.extend(protected.git_dirs);
                read_only.extend(protected.read_only);
                writable_dirs.push(root);
            }
            for path in config.state_dirs.iter().chain(&config.extra_read_only) {
                let path = lexical(path);
                if writable_dirs.iter().any(|dir| path.starts_with(dir)) && path.exists() {
                    read_only.push(path);
                }
            }
        }
        dedup(&mut writable_dirs);
        dedup(&mut read_only);
        let mut writable_files = vec![PathBuf::from("/dev/null"), files.output.clone()];
        writable_files.extend(files.cwd_file.iter().cloned());
        let mut scan_dirs: Vec<PathBuf> = config.roots.iter().map(|r| lexical(r)).collect();
        scan_dirs.push(lexical(&files.cwd));
        dedup(&mut scan_dirs);
        Plan {
            level,
            writable_dirs,
            writable_files,
            read_only,
            secret_paths: config.secrets.paths.iter().map(|p| lexical(p)).collect(),
            secret_names: config.secrets.names.clone(),
            scan_dirs,
            network,
        }
    }

    /// Whether `path` (absolute) may be written under this plan, ignoring the read-only
    /// carve-outs.
    pub fn may_write(&self, path: &Path) -> bool {
        self.writable_files.iter().any(|f| f == path)
            || self.writable_dirs.iter().any(|d| path.starts_with(d))
    }

    /// Whether `path` (absolute) is kept read-only inside a writable directory.
    pub fn is_read_only(&self, path: &Path) -> bool {
        self.read_only.iter().any(|p| path.starts_with(p))
    }

    /// Whether `path` (absolute) is a secret by location or by name.
    pub fn is_secret(&self, path: &Path) -> bool {
        self.secret_paths.iter().any(|s| path.starts_with(s))
            || path.components().any(|c| match c {
                Component::Normal(name) => {
                    super::secret_name(&self.secret_names, &name.to_string_lossy())
                }
                _ => false,
            })
    }
}

/// The paths of a writable root that must stay read-only, and the git directories that
/// must be writable for `git add`/`git commit` to work when they live elsewhere (a
/// worktree's git dir and its common dir).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Protected {
    /// Existing paths to keep read-only.
    pub read_only: Vec<PathBuf>,
    /// Git directories outside the root that git writes objects, refs and the index to.
    pub git_dirs: Vec<PathBuf>,
}

/// What stays read-only in the writable root `root` (SBX-1): its `.git/hooks`,
/// `.git/config`, `config.worktree` and `commondir` (in the git dir and the common dir it
/// names), a `.git` file (a worktree's pointer), and `.claude/`. Only existing paths are
/// listed: a mount can only cover what exists (docs/sandbox.md).
pub fn protected_paths(root: &Path) -> Protected {
    let mut out = Protected::default();
    let dot_git = root.join(".git");
    let git_dir = match std::fs::symlink_metadata(&dot_git) {
        Ok(meta) if meta.is_dir() => Some(dot_git.clone()),
        Ok(meta) if meta.is_file() => {
            out.read_only.push(dot_git.clone());
            std::fs::read_to_string(&dot_git)
                .ok()
                .and_then(|text| {
                    text.lines()
                        .find_map(|line| line.strip_prefix("gitdir:"))
                        .map(|dir| root.join(dir.trim()))
                })
                .map(|dir| lexical(&dir))
        }
        _ => None,
    };
    if let Some(git_dir) = git_dir {
        let common = std::fs::read_to_string(git_dir.join("commondir"))
            .ok()
            .map(|text| lexical(&git_dir.join(text.trim())));
        for dir in std::iter::once(&git_dir).chain(common.iter()) {
            for name in ["hooks", "config", "config.worktree", "commondir"] {
                let path = dir.join(name);
                if std::fs::symlink_metadata(&path).is_ok() {
                    out.read_only.push(path);
                }
            }
            if !dir.starts_with(root) {
                out.git_dirs.push(dir.clone());
            }
        }
    }
    let claude = root.join(".claude");
    if std::fs::symlink_metadata(&claude).is_ok() {
        out.read_only.push(claude);
    }
    out
}

/// `path` made absolute against the current directory, with `.` and `..` removed.
fn lexical(path: &Path) -> PathBuf {
    crate::lexical_join(&std::env::current_dir().unwrap_or_default(), path)
}

fn dedup(paths: &mut Vec<PathBuf>) {
    let mut seen = std::collections::HashSet::new();
    paths.retain(|p| seen.insert(p.clone()));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::SecretList;

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "wavesh-plan-{name}-{}-{}",
            std::process::id(),
            crate::private_dir::random_name(6)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn sbx_1_worktree_git_dirs_are_writable_and_their_config_is_protected() {
        let base = temp("worktree");
        let main_git = base.join("main/.git");
        let wt_git = main_git.join("worktrees/wt");
        std::fs::create_dir_all(main_git.join("hooks")).unwrap();
        std::fs::create_dir_all(&wt_git).unwrap();
        std::fs::write(main_git.join("config"), "").unwrap();
        std::fs::write(wt_git.join("commondir"), "../..\n").unwrap();
        let wt = base.join("wt");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(wt.join(".git"), format!("gitdir: {}\n", wt_git.display())).unwrap();
        let protected = protected_paths(&wt);
        assert_eq!(
            protected.read_only,
            [
                wt.join(".git"),
                wt_git.join("commondir"),
                main_git.join("hooks"),
                main_git.join("config"),
            ]
        );
        assert_eq!(protected.git_dirs, [wt_git, main_git]);
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn sbx_1_levels_differ_only_in_the_writable_roots() {
        let ws = temp("levels");
        std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
        std::fs::write(ws.join(".git/config"), "").unwrap();
        std::fs::create_dir_all(ws.join(".claude")).unwrap();
        let config = SandboxConfig {
            roots: vec![ws.clone()],
            secrets: SecretList {
                paths: vec!["/home/u/.ssh".into()],
                names: vec![".env".into()],
            },
            ..SandboxConfig::default()
        };
        let files = CommandFiles {
            output: "/p/out".into(),
            cwd_file: Some("/p/cwd".into()),
            tmp_dir: "/p/tmp".into(),
            cwd: ws.clone(),
        };
        let read_only = Plan::new(Level::ReadOnly, &config, &files, false);
        assert_eq!(read_only.writable_dirs, [PathBuf::from("/p/tmp")]);
        assert!(read_only.read_only.is_empty());
        assert!(!read_only.may_write(&ws.join("x")));
        assert!(read_only.may_write(Path::new("/dev/null")));
        let write = Plan::new(Level::WorkspaceWrite, &config, &files, false);
        assert!(write.may_write(&ws.join("x")));
        assert!(write.is_read_only(&ws.join(".git/hooks/pre-commit")));
        assert!(write.is_read_only(&ws.join(".claude/settings.local.json")));
        assert!(!write.is_read_only(&ws.join(".git/index")));
        assert!(write.is_secret(Path::new("/home/u/.ssh/id_rsa")));
        assert!(write.is_secret(&ws.join("sub/.env")));
        std::fs::remove_dir_all(&ws).unwrap();
    }
}
