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
    /// Directories it may read although a hidden path holds them: the session's own
    /// private directory inside the hidden directory of every session's.
    pub readable_dirs: Vec<PathBuf>,
    /// The directory of every session's private directory, when a mount in the
    /// command's own mount namespace hides it rather than Landlock (SBX-7; see
    /// [`Plan::hide_sessions_by_mount`]): an empty file system over it, with this
    /// session's own directory (in `readable_dirs`) mounted back. Otherwise it is among
    /// `secret_paths`.
    pub sessions_by_mount: Option<PathBuf>,
    /// Single files it may write (`/dev/null`, its output and cwd files).
    pub writable_files: Vec<PathBuf>,
    /// Existing paths inside writable directories that stay read-only (SBX-1).
    pub read_only: Vec<PathBuf>,
    /// Secret paths: absolute, not necessarily existing, globs expanded against what
    /// exists when the plan is made, nothing under `/proc` (`secret_paths`).
    pub secret_paths: Vec<PathBuf>,
    /// Secret file-name patterns (see [`super::SecretList::names`]).
    pub secret_names: Vec<String>,
    /// Directories whose entries are matched against `secret_names` (beside the
    /// directories on the way to a secret path): the working directory, unless it is the
    /// root of a scanned tree.
    pub scan_dirs: Vec<PathBuf>,
    /// Trees whose every directory is matched against `secret_names`, except `.git` and
    /// the dependency and build directories the search never enters, up to
    /// `MAX_SCANNED_DIRS` directories: the workspace root and the additional
    /// directories.
    pub scan_trees: Vec<PathBuf>,
    /// TCP connect stays open: the command reads over the network (`gh pr view`), an
    /// exception the host asks for explicitly.
    pub network: bool,
    /// The secrets the search found and the sandbox hides (filled when the sandbox is
    /// prepared): hard links and names beside the paths above, for the denial note.
    pub found_secrets: Vec<PathBuf>,
    /// The command runs in the session's network namespace (NET-1) and reaches the
    /// outside only through the proxy's listener for this scope (NET-2, NET-3); `network`
    /// is then true, and means the namespace's loopback.
    pub session_net: Option<crate::net::Scope>,
    /// The views of SBX-8 (`/tmp`, the caches, configured output directories), added
    /// by [`Plan::add_views`].
    pub views: super::Views,
}

impl Plan {
    /// The plan of a command at `level` under `config` with `files`.
    pub fn new(level: Level, config: &SandboxConfig, files: &CommandFiles, network: bool) -> Plan {
        let mut writable_dirs = vec![lexical(&files.tmp_dir)];
        let mut read_only = Vec::new();
        if level == Level::WorkspaceWrite {
            for root in config.roots.iter().chain(&config.extra_writable) {
                let root = lexical(root);
                quarantine_planted(&root);
                let protected = protected_paths(&root);
                writable_dirs.extend(protected.git_dirs);
                read_only.extend(protected.read_only);
                writable_dirs.push(root);
            }
            if let Some(home) = &config.home {
                read_only.extend(home_start_up_files(home, &writable_dirs));
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
        // Other sessions' private directories (their commands' outputs) are hidden: the
        // directory that holds every session's is a secret, and this session's own is
        // read back (SBX-7). Where that directory lies inside a writable one, a mount
        // would hide this session's too; then it stays as it is. Linux only: the
        // Seatbelt profile has no read-back rule yet.
        let mut secrets = secret_paths(&config.secrets.paths);
        let mut readable_dirs = Vec::new();
        if let Some(own) = config
            .private_dir
            .as_ref()
            .filter(|_| cfg!(target_os = "linux"))
        {
            let own = lexical(own);
            if let Some(base) = own.parent()
                && !writable_dirs.iter().any(|dir| base.starts_with(dir))
            {
                secrets.push(base.to_path_buf());
                readable_dirs.push(own.clone());
            }
        }
        Plan {
            level,
            writable_dirs,
            readable_dirs,
            sessions_by_mount: None,
            writable_files,
            read_only,
            secret_paths: secrets,
            secret_names: config.secrets.names.clone(),
            scan_dirs,
            scan_trees,
            network,
            found_secrets: Vec::new(),
            session_net: None,
            views: super::Views::default(),
        }
    }

    /// Hides the directory of every session's private directory by a mount in the
    /// command's own mount namespace instead of by Landlock, for a command the spawner
    /// isolates (SBX-7, [`crate::sandbox::Support::process_isolation`]).
    ///
    /// Landlock can only hide a directory by allowing everything around it, one rule
    /// per entry of every directory on the way, and the read rules are built again
    /// whenever an entry is made or removed there: with the private directories under
    /// `/tmp` (no `XDG_RUNTIME_DIR`), every file any program makes in `/tmp` did that.
    /// A mount hides the same directory whatever happens beside it.
    pub fn hide_sessions_by_mount(&mut self) {
        let Some((own, base)) = self
            .readable_dirs
            .iter()
            .find_map(|own| Some((own.clone(), own.parent()?.to_path_buf())))
        else {
            return;
        };
        // A mount would hide anything else the command needs that lies there too (a
        // host that named a directory holding more than sessions): Landlock then, as
        // before, which hides only what it must.
        if self
            .writable_dirs
            .iter()
            .chain(&self.writable_files)
            .chain(&self.scan_trees)
            .chain(&self.scan_dirs)
            .any(|path| path.starts_with(&base) && !path.starts_with(&own))
        {
            return;
        }
        if let Some(at) = self.secret_paths.iter().position(|s| *s == base) {
            self.secret_paths.remove(at);
            self.sessions_by_mount = Some(base);
        }
    }

    /// Undoes [`Plan::hide_sessions_by_mount`]: for a command that is not isolated after
    /// all, Landlock hides the directory again.
    pub fn hide_sessions_by_landlock(&mut self) {
        if let Some(base) = self.sessions_by_mount.take() {
            self.secret_paths.push(base);
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
            || self.found_secrets.iter().any(|s| path.starts_with(s))
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

/// What stays read-only in the writable root `root` (SBX-1, SBX-6), and the git
/// directories outside it that git must write to.
///
/// Read-only: every place git reads a program from, in the git dir and, for a linked
/// worktree, its common dir: `config`, `config.worktree`, `hooks/`, `commondir`, `info/`,
/// the same in every submodule's git dir (`modules/…`) and every worktree's
/// (`worktrees/…`, with its `gitdir` back-link), the directory `core.hooksPath` names
/// when it lies in the root (husky's `.husky/`), a `.git` file (a worktree's pointer),
/// and `.claude/`. Only existing paths are listed: a mount can only cover what exists
/// (docs/sandbox.md says what covers the rest).
///
/// Writable git directories come only from a linked worktree whose structure git itself
/// made and no sandboxed command can forge (`linked_worktree`): a `.git` file or a
/// `commondir` a command wrote never widens a later plan (SBX-6).
pub fn protected_paths(root: &Path) -> Protected {
    let mut out = Protected::default();
    let dot_git = root.join(".git");
    let git_dirs: Vec<PathBuf> = match std::fs::symlink_metadata(&dot_git) {
        Ok(meta) if meta.is_dir() => vec![dot_git.clone()],
        Ok(meta) if meta.is_file() => {
            out.read_only.push(dot_git.clone());
            match linked_worktree(root) {
                Some((git_dir, common)) => {
                    for dir in [&git_dir, &common] {
                        if !dir.starts_with(root) {
                            out.git_dirs.push(dir.clone());
                        }
                    }
                    vec![git_dir, common]
                }
                None => Vec::new(),
            }
        }
        _ => Vec::new(),
    };
    for git_dir in &git_dirs {
        protect_git_dir(git_dir, 0, &mut out.read_only);
        if let Some(hooks) = hooks_path(git_dir, root)
            && std::fs::symlink_metadata(&hooks).is_ok()
        {
            out.read_only.push(hooks);
        }
    }
    let claude = root.join(".claude");
    if std::fs::symlink_metadata(&claude).is_ok() {
        out.read_only.push(claude);
    }
    dedup(&mut out.read_only);
    out
}

/// The files and directories of a git dir that name programs git runs, or other git
/// dirs: in `git_dir` itself, and in each submodule's and worktree's git dir below it
/// (submodules nest: `modules/a/modules/b`).
fn protect_git_dir(git_dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    for name in [
        "config",
        "config.worktree",
        "hooks",
        "commondir",
        "info",
        "gitdir",
    ] {
        let path = git_dir.join(name);
        if std::fs::symlink_metadata(&path).is_ok() {
            out.push(path);
        }
    }
    if depth >= 8 {
        return;
    }
    for group in ["modules", "worktrees"] {
        let Ok(entries) = std::fs::read_dir(git_dir.join(group)) else {
            continue;
        };
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                protect_git_dir(&entry.path(), depth + 1, out);
            }
        }
    }
}

/// The directory `core.hooksPath` names in `git_dir`'s `config` or `config.worktree`
/// (both read-only to commands), made absolute against `root` as git does, if it lies
/// inside `root`. Outside it the root's writability does not reach it.
fn hooks_path(git_dir: &Path, root: &Path) -> Option<PathBuf> {
    let mut found = None;
    for name in ["config", "config.worktree"] {
        for value in config_values(&git_dir.join(name), "core", "hookspath") {
            if !value.starts_with("~/") {
                found = Some(lexical(&root.join(value)));
            }
        }
    }
    found.filter(|path| path.starts_with(root) && path != root)
}

/// The values of `section.key` (both lower case) in the git config file `file`, in
/// order, unquoted: a plain reading of the file itself (no includes), enough for the
/// two keys a plan needs from files commands cannot write.
fn config_values(file: &Path, section: &str, key: &str) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(file) else {
        return Vec::new();
    };
    let mut in_section = false;
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            let name = line.trim_start_matches('[').trim_end_matches(']').trim();
            in_section = name.eq_ignore_ascii_case(section);
            continue;
        }
        if let Some((k, value)) = line.split_once('=')
            && in_section
            && k.trim().eq_ignore_ascii_case(key)
        {
            out.push(value.trim().trim_matches('"').to_owned());
        }
    }
    out
}

/// A linked worktree at `root`, as `git worktree add` makes it: `root/.git` is a file
/// `gitdir: <C>/worktrees/<name>`, that directory's `commondir` is `../..` (so `<C>` is
/// the common dir), its `gitdir` file names `root/.git` back, and `<C>` is a git dir
/// (`HEAD`, `objects/`, `refs/`). Returns the worktree's git dir and the common dir.
///
/// The back-link lies outside `root`, where no command sandboxed at `root` can write, so
/// a `.git` file a command plants cannot name a directory the command could not already
/// write (SBX-6). Anything else (a `gitdir:` elsewhere, a `commondir` naming another
/// directory) is not a worktree wavesh makes writable: git may still work there, with
/// the writes refused.
pub fn linked_worktree(root: &Path) -> Option<(PathBuf, PathBuf)> {
    let dot_git = root.join(".git");
    let text = read_small(&dot_git)?;
    let target = text.lines().find_map(|line| line.strip_prefix("gitdir:"))?;
    let git_dir = lexical(&root.join(target.trim()));
    let worktrees = git_dir.parent()?;
    if worktrees.file_name()? != "worktrees" {
        return None;
    }
    let common = worktrees.parent()?.to_path_buf();
    // The root directory is never a common dir.
    common.parent()?;
    let named_common = lexical(&git_dir.join(read_small(&git_dir.join("commondir"))?.trim()));
    if named_common != common {
        return None;
    }
    let back = lexical(&git_dir.join(read_small(&git_dir.join("gitdir"))?.trim()));
    let same = |a: &Path, b: &Path| {
        a == b
            || matches!(
                (std::fs::canonicalize(a), std::fs::canonicalize(b)),
                (Ok(x), Ok(y)) if x == y
            )
    };
    if !same(&back, &dot_git) {
        return None;
    }
    let is_dir = |p: PathBuf| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir());
    if std::fs::symlink_metadata(common.join("HEAD")).is_err()
        || !is_dir(common.join("objects"))
        || !is_dir(common.join("refs"))
    {
        return None;
    }
    Some((git_dir, common))
}

/// A small text file (a git pointer), or `None`.
fn read_small(path: &Path) -> Option<String> {
    use std::io::Read as _;
    let file = std::fs::File::open(path).ok()?;
    let mut text = String::new();
    file.take(4096).read_to_string(&mut text).ok()?;
    Some(text)
}

/// Moves aside the git files in `root/.git` that git itself never makes there and that
/// only a command can have planted (SBX-6): a `commondir` in a main repository's `.git`
/// directory (git writes one only in a linked worktree's git dir) and a
/// `config.worktree` where `extensions.worktreeConfig` is off. git would follow either
/// outside the sandbox: the first names another directory as the repository, the second
/// adds configuration. Each is renamed to `NAME.wavesh-planted-N` beside it, kept for the
/// user to look at, and logged. Returns what was moved, as (from, to).
///
/// A mount cannot protect a path that does not exist, so this runs where a command's
/// writes end: before every workspace-write plan and when a foreground command at
/// workspace-write finishes.
pub fn quarantine_planted(root: &Path) -> Vec<(PathBuf, PathBuf)> {
    let git = root.join(".git");
    if !std::fs::symlink_metadata(&git).is_ok_and(|m| m.is_dir()) {
        return Vec::new();
    }
    let mut planted = Vec::new();
    if std::fs::symlink_metadata(git.join("commondir")).is_ok() {
        planted.push(git.join("commondir"));
    }
    if std::fs::symlink_metadata(git.join("config.worktree")).is_ok() && !worktree_config_on(&git) {
        planted.push(git.join("config.worktree"));
    }
    let mut moved = Vec::new();
    for path in planted {
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let target = (1..1000)
            .map(|n| git.join(format!("{name}.wavesh-planted-{n}")))
            .find(|t| std::fs::symlink_metadata(t).is_err());
        let Some(target) = target else { continue };
        match std::fs::rename(&path, &target) {
            Ok(()) => {
                tracing::warn!(
                    from = %path.display(),
                    to = %target.display(),
                    "moved aside a git file a sandboxed command planted (git would have followed it outside the sandbox)"
                );
                moved.push((path, target));
            }
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "cannot move aside a planted git file")
            }
        }
    }
    moved
}

/// Whether `git_dir/config` turns `extensions.worktreeConfig` on (its first setting).
fn worktree_config_on(git_dir: &Path) -> bool {
    config_values(&git_dir.join("config"), "extensions", "worktreeconfig")
        .first()
        .is_some_and(|value| {
            matches!(
                value.to_ascii_lowercase().as_str(),
                "true" | "yes" | "on" | "1"
            )
        })
}

/// The files in a home that something outside the sandbox runs or obeys later: the
/// shells' start-up files (the login probe runs them, and so does every terminal the
/// user opens), git's and ssh's configuration, and the agents' own settings and hooks.
pub const HOME_START_UP: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshenv",
    ".zprofile",
    ".zshrc",
    ".zlogin",
    ".zlogout",
    ".config/fish",
    ".inputrc",
    ".gitconfig",
    ".config/git",
    ".ssh/config",
    ".claude",
    ".codex",
    ".config/wavesh",
];

/// The existing [`HOME_START_UP`] files of `home`, when `home` lies inside one of
/// `writable` (a workspace started in `~`, `--add-dir ~`): they stay read-only (SBX-6).
pub fn home_start_up_files(home: &Path, writable: &[PathBuf]) -> Vec<PathBuf> {
    let home = lexical(home);
    if !writable.iter().any(|dir| home.starts_with(dir)) {
        return Vec::new();
    }
    HOME_START_UP
        .iter()
        .map(|name| home.join(name))
        .filter(|path| std::fs::symlink_metadata(path).is_ok())
        .collect()
}

/// Whether `home` lies inside one of `writable`: then a sandboxed command could write
/// the start-up files a login shell runs.
pub fn home_is_writable(home: &Path, writable: &[PathBuf]) -> bool {
    let home = lexical(home);
    writable.iter().any(|dir| home.starts_with(lexical(dir)))
}

/// The directories to pin (SBX-6): every ancestor of each of `paths` that lies strictly
/// inside one of `writable` (the writable root itself cannot be renamed by a command: its
/// parent is not writable), and that exists, shortest first so that a parent is pinned
/// before its children. Pinning a path's ancestors means no rename moves the path, or
/// the mount over it, to another name. Mounts are Linux's: elsewhere only tests use it.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub fn pinned_ancestors<'a>(
    paths: impl IntoIterator<Item = &'a PathBuf>,
    writable: &[PathBuf],
) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for path in paths {
        let Some(root) = writable
            .iter()
            .filter(|dir| path.starts_with(dir) && path != *dir)
            .max_by_key(|dir| dir.as_os_str().len())
        else {
            continue;
        };
        let mut ancestor = path.parent();
        while let Some(dir) = ancestor {
            if dir == root.as_path() || !dir.starts_with(root) {
                break;
            }
            if !out.iter().any(|seen| seen == dir)
                && std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir())
            {
                out.push(dir.to_path_buf());
            }
            ancestor = dir.parent();
        }
    }
    out.sort_by_key(|dir| dir.components().count());
    out
}

/// At most this many directories of each scanned tree are matched against the secret
/// names. Each is watched with inotify (checked again by a stat before every command
/// where it cannot be), so a tree costs nothing per command until it changes, but its
/// first search lists every directory. A tree larger than that, after the directories
/// the search never enters are left out, fails closed: the directories past the limit
/// are hidden from sandboxed commands, and a warning is logged.
#[cfg_attr(
    not(target_os = "linux"),
    allow(dead_code, reason = "the scan is Linux's")
)]
pub const MAX_SCANNED_DIRS: usize = 10_000;

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
    // Every secret path's directories are checked once, not once per path: the list's
    // paths share a few (the home, `~/.config`, `/etc`).
    let mut listable: std::collections::HashMap<PathBuf, bool> = std::collections::HashMap::new();
    // A path once kept stays kept for this list: hiding a path this user can no longer
    // read costs at most an unreadable directory on its way, while a path left out must
    // be checked again before each command (a `chmod` makes it readable, and no watch
    // sees a mode change). So only the paths left out so far, and the new ones a glob
    // expands to, cost system calls: about 170 per command before.
    let mut kept = KEPT_SECRET_PATHS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if kept.len() > 8 && !kept.contains_key(list) {
        kept.clear();
    }
    let kept = kept.entry(list.to_vec()).or_default();
    out.retain(|path| {
        kept.contains(path) || {
            let could = this_user_could_read(path, &mut listable);
            if could {
                kept.insert(path.clone());
            }
            could
        }
    });
    dedup(&mut out);
    out
}

/// The paths [`secret_paths`] kept for each secret list this process used.
static KEPT_SECRET_PATHS: std::sync::Mutex<
    std::collections::BTreeMap<Vec<PathBuf>, std::collections::HashSet<PathBuf>>,
> = std::sync::Mutex::new(std::collections::BTreeMap::new());

/// Whether this process's user could read `path`, or make it, and so whether hiding it
/// means anything: an existing path it may read, or a missing one, where every existing
/// directory on the way to it may be listed. A secret this user cannot read needs no
/// hiding, and hiding it would cost more than nothing: the reads allowed around a secret
/// list every directory on the way to it, and one this user cannot list (another user's
/// home named by a variable such as `CARGO_HOME` or `TF_CLI_CONFIG_FILE`) would then be
/// unreadable as a whole, the toolchains in it too.
/// `listable` keeps the answer for each directory already checked: whether it is
/// missing, or this user may list and enter it.
fn this_user_could_read(
    path: &Path,
    listable: &mut std::collections::HashMap<PathBuf, bool>,
) -> bool {
    #[cfg(unix)]
    {
        use rustix::fs::{Access, access};
        if access(path, Access::EXISTS).is_ok() && access(path, Access::READ_OK).is_err() {
            return false;
        }
        path.ancestors().skip(1).all(|dir| {
            *listable.entry(dir.to_path_buf()).or_insert_with(|| {
                access(dir, Access::EXISTS).is_err()
                    || access(dir, Access::READ_OK | Access::EXEC_OK).is_ok()
            })
        })
    }
    #[cfg(not(unix))]
    {
        let _ = (path, listable);
        true
    }
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

/// `path` made absolute against the current directory, with `.` and `..` removed. The
/// current directory is asked for only when `path` is relative (a plan has a few hundred
/// absolute paths).
fn lexical(path: &Path) -> PathBuf {
    if path.is_absolute() {
        return crate::lexical_join(Path::new("/"), path);
    }
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

    /// A worktree as `git worktree add` makes it.
    fn worktree(base: &Path) -> (PathBuf, PathBuf, PathBuf) {
        let main_git = base.join("main/.git");
        let wt_git = main_git.join("worktrees/wt");
        std::fs::create_dir_all(main_git.join("hooks")).unwrap();
        std::fs::create_dir_all(main_git.join("objects")).unwrap();
        std::fs::create_dir_all(main_git.join("refs")).unwrap();
        std::fs::write(main_git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::create_dir_all(&wt_git).unwrap();
        std::fs::write(main_git.join("config"), "").unwrap();
        std::fs::write(wt_git.join("commondir"), "../..\n").unwrap();
        let wt = base.join("wt");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(
            wt_git.join("gitdir"),
            format!("{}\n", wt.join(".git").display()),
        )
        .unwrap();
        std::fs::write(wt.join(".git"), format!("gitdir: {}\n", wt_git.display())).unwrap();
        (wt, wt_git, main_git)
    }

    #[test]
    fn sbx_1_worktree_git_dirs_are_writable_and_their_config_is_protected() {
        let base = temp("worktree");
        let (wt, wt_git, main_git) = worktree(&base);
        let protected = protected_paths(&wt);
        assert_eq!(
            protected.read_only,
            [
                wt.join(".git"),
                wt_git.join("commondir"),
                wt_git.join("gitdir"),
                main_git.join("config"),
                main_git.join("hooks"),
            ]
        );
        assert_eq!(protected.git_dirs, [wt_git, main_git]);
        std::fs::remove_dir_all(&base).unwrap();
    }

    /// SBX-6: a pointer a command could have written never names a writable directory:
    /// a `.git` file aimed anywhere but at a worktree git made for this root, a
    /// `commondir` aimed elsewhere, a back-link that names another worktree.
    #[test]
    fn sbx_6_planted_git_pointers_widen_nothing() {
        let base = temp("pointers");
        let (wt, wt_git, main_git) = worktree(&base);
        let outside = base.join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        let plain = base.join("plain");
        std::fs::create_dir_all(plain.join(".git/hooks")).unwrap();
        type Case<'a> = (&'a str, Box<dyn Fn() + 'a>, &'a Path);
        let cases: Vec<Case<'_>> = vec![
            (
                "commondir in a .git directory",
                Box::new(|| {
                    std::fs::write(plain.join(".git/commondir"), outside.display().to_string())
                        .unwrap()
                }),
                &plain,
            ),
            (
                "commondir relative",
                Box::new(|| std::fs::write(plain.join(".git/commondir"), "../../outside").unwrap()),
                &plain,
            ),
            (
                ".git file aimed at /",
                Box::new(|| std::fs::write(wt.join(".git"), "gitdir: /\n").unwrap()),
                &wt,
            ),
            (
                ".git file aimed at a directory outside",
                Box::new(|| {
                    std::fs::write(wt.join(".git"), format!("gitdir: {}\n", outside.display()))
                        .unwrap()
                }),
                &wt,
            ),
            (
                "a fake worktrees/ layout outside, with no back-link",
                Box::new(|| {
                    let fake = outside.join("worktrees/x");
                    std::fs::create_dir_all(&fake).unwrap();
                    std::fs::write(fake.join("commondir"), "../..").unwrap();
                    std::fs::write(wt.join(".git"), format!("gitdir: {}\n", fake.display()))
                        .unwrap();
                }),
                &wt,
            ),
            (
                "the worktree's commondir aimed elsewhere",
                Box::new(|| {
                    std::fs::write(wt.join(".git"), format!("gitdir: {}\n", wt_git.display()))
                        .unwrap();
                    std::fs::write(wt_git.join("commondir"), outside.display().to_string())
                        .unwrap();
                }),
                &wt,
            ),
            (
                "a back-link naming another worktree",
                Box::new(|| {
                    std::fs::write(wt_git.join("commondir"), "../..").unwrap();
                    std::fs::write(wt_git.join("gitdir"), "/elsewhere/.git").unwrap();
                }),
                &wt,
            ),
        ];
        for (name, plant, root) in cases {
            plant();
            let protected = protected_paths(root);
            assert!(
                protected.git_dirs.is_empty(),
                "{name}: {:?}",
                protected.git_dirs
            );
        }
        // The planted commondir is itself protected once it exists.
        assert!(
            protected_paths(&plain)
                .read_only
                .contains(&plain.join(".git/commondir"))
        );
        let _ = main_git;
        std::fs::remove_dir_all(&base).unwrap();
    }

    /// Every git code location below the git dir: submodules' and worktrees' config and
    /// hooks, nested, and the `core.hooksPath` directory in the root.
    #[test]
    fn sbx_6_every_git_code_location_is_protected() {
        let ws = temp("codeloc");
        let git = ws.join(".git");
        for dir in [
            "hooks",
            "info",
            "modules/lib/hooks",
            "modules/lib/modules/inner/hooks",
            "worktrees/other",
        ] {
            std::fs::create_dir_all(git.join(dir)).unwrap();
        }
        std::fs::write(
            git.join("config"),
            "[core]\n\tbare = false\n\thooksPath = .husky/_\n",
        )
        .unwrap();
        std::fs::write(git.join("modules/lib/config"), "").unwrap();
        std::fs::write(git.join("modules/lib/modules/inner/config"), "").unwrap();
        std::fs::write(git.join("worktrees/other/config.worktree"), "").unwrap();
        std::fs::write(git.join("worktrees/other/commondir"), "../..").unwrap();
        std::fs::write(git.join("worktrees/other/gitdir"), "/x/.git").unwrap();
        std::fs::create_dir_all(ws.join(".husky/_")).unwrap();
        let read_only = protected_paths(&ws).read_only;
        for path in [
            ".git/config",
            ".git/hooks",
            ".git/info",
            ".git/modules/lib/config",
            ".git/modules/lib/hooks",
            ".git/modules/lib/modules/inner/config",
            ".git/modules/lib/modules/inner/hooks",
            ".git/worktrees/other/config.worktree",
            ".git/worktrees/other/commondir",
            ".git/worktrees/other/gitdir",
            ".husky/_",
        ] {
            assert!(read_only.contains(&ws.join(path)), "{path}: {read_only:?}");
        }
        std::fs::remove_dir_all(&ws).unwrap();
    }

    /// SBX-6: what git never makes in a main `.git` directory is moved aside, kept; what
    /// git does make stays.
    #[test]
    fn sbx_6_planted_git_files_are_moved_aside() {
        let ws = temp("quarantine");
        let git = ws.join(".git");
        std::fs::create_dir_all(&git).unwrap();
        std::fs::write(git.join("config"), "[core]\n\tbare = false\n").unwrap();
        std::fs::write(git.join("commondir"), "/elsewhere").unwrap();
        std::fs::write(git.join("config.worktree"), "[core]\n\tfsmonitor = x\n").unwrap();
        let moved = quarantine_planted(&ws);
        assert_eq!(
            moved,
            [
                (
                    git.join("commondir"),
                    git.join("commondir.wavesh-planted-1")
                ),
                (
                    git.join("config.worktree"),
                    git.join("config.worktree.wavesh-planted-1")
                ),
            ]
        );
        assert_eq!(
            std::fs::read_to_string(git.join("commondir.wavesh-planted-1")).unwrap(),
            "/elsewhere"
        );
        // With worktreeConfig on, config.worktree is git's own.
        std::fs::write(
            git.join("config"),
            "[extensions]\n\tworktreeConfig = true\n",
        )
        .unwrap();
        std::fs::write(git.join("config.worktree"), "").unwrap();
        assert!(quarantine_planted(&ws).is_empty());
        assert!(git.join("config.worktree").exists());
        std::fs::remove_dir_all(&ws).unwrap();
    }

    #[test]
    fn sbx_6_pinned_ancestors_lie_strictly_inside_the_root() {
        let ws = temp("pins");
        std::fs::create_dir_all(ws.join("home/.config/gh")).unwrap();
        std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
        let paths = [
            ws.join("home/.config/gh/hosts.yml"),
            ws.join(".git/hooks"),
            ws.join(".claude"),
            PathBuf::from("/elsewhere/x/y"),
        ];
        let pins = pinned_ancestors(&paths, std::slice::from_ref(&ws));
        assert_eq!(
            pins,
            [
                ws.join("home"),
                ws.join(".git"),
                ws.join("home/.config"),
                ws.join("home/.config/gh"),
            ]
        );
        std::fs::remove_dir_all(&ws).unwrap();
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

    /// SBX-7: the directory of every session's is hidden by Landlock (a secret path)
    /// unless the command is isolated, where a mount hides it; either way this session's
    /// own directory is read back, and a command that turns out not to be isolated gets
    /// the Landlock rule again.
    #[test]
    fn sbx_7_the_sessions_directory_is_hidden_by_landlock_or_by_a_mount() {
        let config = SandboxConfig {
            secrets: SecretList {
                paths: vec!["/home/u/.ssh".into()],
                names: Vec::new(),
            },
            private_dir: Some("/wavesh-plan-absent/p/wavesh-0/own".into()),
            ..SandboxConfig::default()
        };
        let files = CommandFiles {
            output: "/wavesh-plan-absent/p/wavesh-0/own/out".into(),
            cwd_file: None,
            tmp_dir: "/wavesh-plan-absent/p/wavesh-0/own/tmp".into(),
            cwd: "/ws".into(),
        };
        let base = PathBuf::from("/wavesh-plan-absent/p/wavesh-0");
        for level in [Level::ReadOnly, Level::WorkspaceWrite] {
            let mut plan = Plan::new(level, &config, &files, false);
            assert!(plan.secret_paths.contains(&base), "{level}");
            assert_eq!(plan.readable_dirs, [base.join("own")]);
            assert_eq!(plan.sessions_by_mount, None);
            plan.hide_sessions_by_mount();
            assert!(!plan.secret_paths.contains(&base), "{level}");
            assert_eq!(plan.sessions_by_mount.as_ref(), Some(&base));
            assert_eq!(plan.readable_dirs, [base.join("own")]);
            plan.hide_sessions_by_landlock();
            assert!(plan.secret_paths.contains(&base), "{level}");
            assert_eq!(plan.sessions_by_mount, None);
        }
        // A directory that holds more than sessions (here the workspace) stays Landlock's.
        let wider = SandboxConfig {
            private_dir: Some("/wavesh-plan-absent/p".into()),
            roots: vec!["/wavesh-plan-absent/ws".into()],
            ..config.clone()
        };
        let mut plan = Plan::new(Level::ReadOnly, &wider, &files, false);
        plan.hide_sessions_by_mount();
        assert!(
            plan.secret_paths
                .contains(&PathBuf::from("/wavesh-plan-absent"))
        );
        assert_eq!(plan.sessions_by_mount, None);
        // Inside a writable root nothing hides it: a mount would hide this session's too.
        let inside = SandboxConfig {
            roots: vec!["/wavesh-plan-absent".into()],
            ..config
        };
        let mut plan = Plan::new(Level::WorkspaceWrite, &inside, &files, false);
        plan.hide_sessions_by_mount();
        assert!(!plan.secret_paths.contains(&base));
        assert_eq!(plan.sessions_by_mount, None);
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
