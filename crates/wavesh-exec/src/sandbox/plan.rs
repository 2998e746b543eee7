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
    /// Secret paths: absolute, not necessarily existing, globs expanded against what
    /// exists when the plan is made, nothing under `/proc` ([`secret_paths`]).
    pub secret_paths: Vec<PathBuf>,
    /// Secret file-name patterns (see [`super::SecretList::names`]).
    pub secret_names: Vec<String>,
    /// Directories whose entries are matched against `secret_names` (beside the
    /// directories on the way to a secret path): the working directory, unless it is the
    /// root of a scanned tree.
    pub scan_dirs: Vec<PathBuf>,
    /// Trees whose every directory is matched against `secret_names`, except `.git` and
    /// the directories their `.gitignore` files ignore, up to [`MAX_SCANNED_DIRS`]
    /// directories: the workspace root and the additional directories.
    pub scan_trees: Vec<PathBuf>,
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
        let mut scan_trees: Vec<PathBuf> = config.roots.iter().map(|r| lexical(r)).collect();
        dedup(&mut scan_trees);
        let cwd = lexical(&files.cwd);
        let scan_dirs = if scan_trees.contains(&cwd) {
            Vec::new()
        } else {
            vec![cwd]
        };
        Plan {
            level,
            writable_dirs,
            writable_files,
            read_only,
            secret_paths: secret_paths(&config.secrets.paths),
            secret_names: config.secrets.names.clone(),
            scan_dirs,
            scan_trees,
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

/// At most this many directories of each scanned tree are matched against the secret
/// names: each is checked again (a stat) before every command, a few µs, so a tree at
/// the limit adds a few ms per command (see docs/sandbox.md). A tree larger than that
/// after its ignored directories are left out has its deeper names left to the
/// classifier, and a warning is logged.
#[cfg_attr(
    not(target_os = "linux"),
    allow(dead_code, reason = "the scan is Linux's")
)]
pub const MAX_SCANNED_DIRS: usize = 1000;

/// At most this many paths one glob of the secret list expands to.
const MAX_GLOB_EXPANSION: usize = 256;

/// The secret paths the sandbox enforces: made absolute, each glob component
/// (`/etc/ssh/ssh_host_*_key`) expanded against the directories as they are now, and
/// nothing under `/proc`.
///
/// `/proc` is left out because its entries are per process: denying `/proc/*/environ`
/// needs the allow-around of every `/proc/<pid>`, and a process started later (the
/// command itself) would get no rule at all, so not even its own `/proc/self/status`
/// would be readable. What the list's `/proc` entries protect is covered otherwise: the
/// command's own environment is scrubbed, `/proc/<pid>/mem` of a process outside the
/// sandbox needs the ptrace access Landlock refuses, and the command's own PID namespace
/// and `/proc` show no other process at all (docs/sandbox.md).
pub fn secret_paths(list: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for path in list {
        let path = lexical(path);
        if path.starts_with("/proc") {
            continue;
        }
        if path
            .components()
            .any(|c| matches!(c, Component::Normal(n) if super::is_glob(&n.to_string_lossy())))
        {
            out.extend(expand_glob(&path));
        } else {
            out.push(path);
        }
    }
    dedup(&mut out);
    out
}

/// The existing paths an absolute glob path names (at most [`MAX_GLOB_EXPANSION`]).
fn expand_glob(path: &Path) -> Vec<PathBuf> {
    let mut found = vec![PathBuf::from("/")];
    for component in path.components() {
        let Component::Normal(part) = component else {
            continue;
        };
        let part = part.to_string_lossy();
        if !super::is_glob(&part) {
            found = found.into_iter().map(|p| p.join(&*part)).collect();
            continue;
        }
        let mut next = Vec::new();
        for dir in &found {
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name();
                if wavesh_glob::fnmatch(&part, &name.to_string_lossy())
                    && next.len() < MAX_GLOB_EXPANSION
                {
                    next.push(dir.join(name));
                }
            }
        }
        next.sort();
        found = next;
    }
    found
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
        assert_eq!(write.scan_trees, std::slice::from_ref(&ws));
        assert!(write.scan_dirs.is_empty(), "the cwd is the tree's root");
        std::fs::remove_dir_all(&ws).unwrap();
    }

    #[test]
    fn sbx_2_secret_globs_are_expanded_and_proc_is_left_out() {
        let base = temp("globs");
        for name in [
            "ssh_host_rsa_key",
            "ssh_host_rsa_key.pub",
            "ssh_host_ed25519_key",
        ] {
            std::fs::write(base.join(name), "").unwrap();
        }
        let paths = secret_paths(&[
            base.join("ssh_host_*_key"),
            base.join("missing-*/x"),
            "/proc/*/environ".into(),
            "/proc/1/environ".into(),
            base.join("sub/../.netrc"),
        ]);
        assert_eq!(
            paths,
            [
                base.join("ssh_host_ed25519_key"),
                base.join("ssh_host_rsa_key"),
                base.join(".netrc"),
            ]
        );
        std::fs::remove_dir_all(&base).unwrap();
    }
}
