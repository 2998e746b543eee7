//! The git runtime guard (GIT-1..5): whether running git in a directory could make it
//! run programs named by a repository an attacker controls. Reads through [`Fs`] only.

use std::path::{Component, Path, PathBuf};

use crate::classify::GitContext;

/// The file-system questions the guard and the path policy ask. The defaults answer
/// as a file system that cannot tell, which makes the callers fail closed where it
/// matters (a glob that cannot be listed is judged by its pattern; git config that
/// cannot be read makes git unsafe).
pub trait Fs: Send + Sync {
    /// `Some(kind)` if something exists at `path` (without following a final symlink).
    fn kind(&self, path: &Path) -> Option<FileKind>;
    /// The target of a symlink.
    fn read_link(&self, path: &Path) -> Option<PathBuf>;
    /// Up to `max` bytes of a file; `None` if it cannot be read.
    fn read(&self, path: &Path, max: u64) -> Option<Vec<u8>>;
    /// The names in a directory; `None` if it cannot be listed.
    fn list(&self, _dir: &Path) -> Option<Vec<String>> {
        None
    }
    /// The path with every symlink resolved, if it exists.
    fn canonical(&self, _path: &Path) -> Option<PathBuf> {
        None
    }
    /// How many hard links a regular file has (1 if it is not a regular file or does
    /// not exist).
    fn hard_links(&self, _path: &Path) -> u64 {
        1
    }
    /// git's own reading of the config that applies in `dir`, or to the repository
    /// `git_dir` (see [`git_config_list`]):
    /// the NUL-separated output of `git config --list --show-origin --show-scope
    /// --includes -z`.
    fn git_config(&self, _dir: &Path, _git_dir: Option<&Path>) -> Result<Vec<u8>, String> {
        Err("this file system view cannot run git".into())
    }
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

    fn list(&self, dir: &Path) -> Option<Vec<String>> {
        let mut names = Vec::new();
        for entry in std::fs::read_dir(dir).ok()? {
            names.push(entry.ok()?.file_name().to_string_lossy().into_owned());
            if names.len() > MAX_LISTING {
                return None;
            }
        }
        Some(names)
    }

    fn canonical(&self, path: &Path) -> Option<PathBuf> {
        std::fs::canonicalize(path).ok()
    }

    fn hard_links(&self, path: &Path) -> u64 {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            std::fs::metadata(path)
                .ok()
                .filter(|m| m.is_file())
                .map_or(1, |m| m.nlink())
        }
        #[cfg(not(unix))]
        {
            // Windows reports no link count through std; a hard link there is judged by
            // its own path only.
            let _ = path;
            1
        }
    }

    fn git_config(&self, dir: &Path, git_dir: Option<&Path>) -> Result<Vec<u8>, String> {
        git_config_list(dir, git_dir)
    }

    /// Regular files only (RO-16): judging a command never opens a pipe, a terminal or a
    /// device. `/dev/stdin`, `/dev/fd/0` and `/proc/self/fd/0` name this process's own
    /// stdin, which over MCP stdio is the JSON-RPC stream; reading it would eat the
    /// client's next messages, and a FIFO would block the open itself. The path is
    /// checked before the open, and the descriptor after it (without blocking, without
    /// becoming a controlling terminal), so a swap in between changes nothing.
    fn read(&self, path: &Path, max: u64) -> Option<Vec<u8>> {
        use std::io::Read;
        if !std::fs::metadata(path).ok()?.is_file() {
            return None;
        }
        let mut options = std::fs::OpenOptions::new();
        options.read(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
        }
        let file = options.open(path).ok()?;
        if !file.metadata().ok()?.is_file() {
            return None;
        }
        let mut bytes = Vec::new();
        file.take(max).read_to_end(&mut bytes).ok()?;
        Some(bytes)
    }
}

/// A directory with more entries than this is not listed (a glob over it is judged by
/// its pattern alone).
const MAX_LISTING: usize = 10_000;

/// A file system where nothing exists and every directory is empty: for tests and
/// hosts that classify text alone.
#[derive(Debug, Default, Clone, Copy)]
pub struct EmptyFs;

impl Fs for EmptyFs {
    fn kind(&self, _: &Path) -> Option<FileKind> {
        None
    }
    fn read_link(&self, _: &Path) -> Option<PathBuf> {
        None
    }
    fn read(&self, _: &Path, _: u64) -> Option<Vec<u8>> {
        None
    }
    fn list(&self, _: &Path) -> Option<Vec<String>> {
        Some(Vec::new())
    }
    fn git_config(&self, _: &Path, _: Option<&Path>) -> Result<Vec<u8>, String> {
        Ok(Vec::new())
    }
}

/// An in-memory tree of files, directories and symlinks, for tests and for judging a
/// command against a described workspace. Parents of every entry exist as directories.
#[derive(Debug, Default, Clone)]
pub struct MemoryFs {
    entries: std::collections::BTreeMap<PathBuf, (FileKind, Vec<u8>)>,
    links: std::collections::BTreeMap<PathBuf, PathBuf>,
    hard: std::collections::BTreeMap<PathBuf, u64>,
}

impl MemoryFs {
    /// A tree holding `paths`: one ending in `/` is a directory, any other a file.
    pub fn with(paths: &[&str]) -> MemoryFs {
        let mut fs = MemoryFs::default();
        for path in paths {
            match path.strip_suffix('/') {
                Some(dir) => fs.add(Path::new(dir), FileKind::Dir, Vec::new()),
                None => fs.add(Path::new(path), FileKind::File(0), Vec::new()),
            }
        }
        fs
    }

    fn add(&mut self, path: &Path, kind: FileKind, bytes: Vec<u8>) {
        for parent in path.ancestors().skip(1) {
            if parent.as_os_str().is_empty() {
                break;
            }
            self.entries
                .entry(parent.to_path_buf())
                .or_insert((FileKind::Dir, Vec::new()));
        }
        self.entries.insert(path.to_path_buf(), (kind, bytes));
    }

    /// Adds a file with contents.
    pub fn file(mut self, path: &str, text: &str) -> MemoryFs {
        let bytes = text.as_bytes().to_vec();
        self.add(Path::new(path), FileKind::File(bytes.len() as u64), bytes);
        self
    }

    /// Adds a symlink.
    pub fn link(mut self, path: &str, target: &str) -> MemoryFs {
        self.add(Path::new(path), FileKind::Symlink, Vec::new());
        self.links.insert(path.into(), target.into());
        self
    }

    /// Gives a file a hard-link count.
    pub fn hard_linked(mut self, path: &str, count: u64) -> MemoryFs {
        self.hard.insert(path.into(), count);
        self
    }
}

impl Fs for MemoryFs {
    fn kind(&self, path: &Path) -> Option<FileKind> {
        self.entries.get(path).map(|(kind, _)| *kind)
    }
    fn read_link(&self, path: &Path) -> Option<PathBuf> {
        self.links.get(path).cloned()
    }
    fn read(&self, path: &Path, max: u64) -> Option<Vec<u8>> {
        self.entries
            .get(path)
            .filter(|(kind, _)| matches!(kind, FileKind::File(_)))
            .map(|(_, bytes)| {
                bytes
                    .iter()
                    .take(usize::try_from(max).unwrap_or(usize::MAX))
                    .copied()
                    .collect()
            })
    }
    fn list(&self, dir: &Path) -> Option<Vec<String>> {
        if !matches!(self.kind(dir), Some(FileKind::Dir)) {
            return self
                .canonical(dir)
                .filter(|real| real != dir)
                .and_then(|real| self.list(&real));
        }
        Some(
            self.entries
                .keys()
                .filter(|p| p.parent() == Some(dir))
                .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .collect(),
        )
    }
    fn canonical(&self, path: &Path) -> Option<PathBuf> {
        // Resolve links component by component (bounded, so a loop ends).
        let mut out = PathBuf::from("/");
        let mut hops = 0;
        for component in path.components().skip(1) {
            out.push(component);
            while let Some(target) = self.links.get(&out) {
                hops += 1;
                if hops > 40 {
                    return None;
                }
                let base = out.parent().map(Path::to_path_buf).unwrap_or_default();
                out = crate::paths::absolute(&target.to_string_lossy(), &base);
            }
        }
        self.entries.contains_key(&out).then_some(out)
    }
    fn hard_links(&self, path: &Path) -> u64 {
        self.hard.get(path).copied().unwrap_or(1)
    }
    fn git_config(&self, _: &Path, _: Option<&Path>) -> Result<Vec<u8>, String> {
        Ok(Vec::new())
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
        Ok(Some(git_dir)) => check_config(cwd, &git_dir, fs),
        Ok(None) => GitContext::Safe,
        Err(why) => GitContext::Unsafe(why),
    }
}

fn has_git_component(path: &Path) -> bool {
    path.components()
        .any(|c| matches!(c, Component::Normal(n) if n == ".git"))
}

/// Walks up from `cwd`; `Ok(Some(dir))` is the trusted git directory.
pub(crate) fn find_repository(cwd: &Path, fs: &dyn Fs) -> Result<Option<PathBuf>, String> {
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

/// GIT-5: config keys that make read-only git run a program or reach out. `section`
/// and `key` are lower case (as git prints them), `subsection` as written.
pub fn dangerous_key(section: &str, subsection: Option<&str>, key: &str, value: &str) -> bool {
    match (section, subsection.is_some(), key) {
        (
            "core",
            false,
            "fsmonitor"
            | "hookspath"
            | "sshcommand"
            | "askpass"
            | "pager"
            | "editor"
            | "gitproxy"
            | "alternaterefscommand"
            | "worktree",
        ) => !(key == "fsmonitor" && value.eq_ignore_ascii_case("false")),
        ("diff", false, "external") => true,
        ("diff", true, "textconv" | "command") => true,
        ("filter", true, "clean" | "smudge" | "process") => true,
        ("gpg", _, "program") => true,
        ("gpg", _, "defaultkeycommand") => true,
        ("log", false, "showsignature") => !value.eq_ignore_ascii_case("false"),
        ("pager", _, _) => true,
        ("alias", _, _) => value.trim_start().starts_with('!'),
        ("credential", _, "helper") => true,
        ("remote", true, "uploadpack" | "receivepack" | "proxy") => true,
        ("protocol", _, "allow") => true,
        ("uploadpack", false, "packobjectshook") => true,
        ("sequence", false, "editor") => true,
        ("ssh", false, "variant") => true,
        ("url", true, "insteadof" | "pushinsteadof") => true,
        _ => false,
    }
}

/// One entry of git's config listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigEntry {
    /// `local`, `worktree`, `global`, `system` or `command`.
    pub scope: String,
    /// Where git read it (`file:.git/config`).
    pub origin: String,
    /// The full key as git prints it: `section.subsection.name`.
    pub key: String,
    /// The value (`None` for a key without `=`, a boolean true).
    pub value: Option<String>,
}

/// Parses the output of `git config --list --show-origin --show-scope -z`.
pub fn parse_config_list(bytes: &[u8]) -> Result<Vec<ConfigEntry>, String> {
    let mut fields = bytes.split(|b| *b == 0);
    let mut out = Vec::new();
    while let Some(scope) = fields.next() {
        if scope.is_empty() {
            // The final NUL leaves an empty field.
            if fields.next().is_none() {
                break;
            }
            return Err("git's config listing has an empty scope".into());
        }
        let (Some(origin), Some(entry)) = (fields.next(), fields.next()) else {
            return Err("git's config listing ends inside an entry".into());
        };
        let entry = String::from_utf8_lossy(entry);
        let (key, value) = match entry.split_once('\n') {
            Some((key, value)) => (key.to_owned(), Some(value.to_owned())),
            None => (entry.into_owned(), None),
        };
        out.push(ConfigEntry {
            scope: String::from_utf8_lossy(scope).into_owned(),
            origin: String::from_utf8_lossy(origin).into_owned(),
            key,
            value,
        });
    }
    Ok(out)
}

/// The first entry that makes read-only git run a program, with why.
pub fn first_dangerous(entries: &[ConfigEntry]) -> Option<String> {
    entries.iter().find_map(|entry| {
        let (section, rest) = entry.key.split_once('.')?;
        let (subsection, key) = match rest.rsplit_once('.') {
            Some((sub, key)) => (Some(sub), key),
            None => (None, rest),
        };
        let section = section.to_ascii_lowercase();
        let key = key.to_ascii_lowercase();
        let value = entry.value.as_deref().unwrap_or("true");
        dangerous_key(&section, subsection, &key, value)
            .then(|| format!("{} sets {}", entry.origin, entry.key))
    })
}

/// git's own reading of the config that applies in `dir` (or, with `git_dir`, to that
/// repository): `git config --list --show-origin --show-scope --includes -z`, run so
/// that it can execute nothing — no pager, no system or global config (the user's own,
/// not a repository's), a cleared environment with only `PATH`, no terminal prompt.
/// Listing config runs no hook, filter, fsmonitor or helper.
pub fn git_config_list(dir: &Path, git_dir: Option<&Path>) -> Result<Vec<u8>, String> {
    GIT_CONFIG_RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let null = if cfg!(windows) { "NUL" } else { "/dev/null" };
    let mut command = std::process::Command::new("git");
    command
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", null)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(std::process::Stdio::null());
    if let Some(git_dir) = git_dir {
        command.arg("--git-dir").arg(git_dir);
    }
    command.args([
        "--no-pager",
        "config",
        "--list",
        "--show-origin",
        "--show-scope",
        "--includes",
        "-z",
    ]);
    let output = command
        .output()
        .map_err(|error| format!("git could not be run to read the config: {error}"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(format!(
            "git could not read the config ({}): {}",
            output.status,
            wavesh_parse::shorten(stderr.trim())
        ));
    }
    Ok(output.stdout)
}

/// How many times this process ran `git config` for the guard ([`git_config_list`]):
/// for tests and benchmarks that check an unchanged repository costs no process.
pub fn git_config_runs() -> u64 {
    GIT_CONFIG_RUNS.load(std::sync::atomic::Ordering::Relaxed)
}

static GIT_CONFIG_RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// What an answer took from a path: whether and what it is (a directory's entries may
/// change without changing that: `git status` writes `.git/index`), whether it is a
/// symlink and to where (the directories on the way to a path made canonical: their
/// entries do not matter, and `/tmp`'s change all the time), or its content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Probe {
    Kind,
    Link,
    Content,
}

/// At most this much of a file, or this many names of a directory, is fingerprinted.
const FINGERPRINT_BYTES: u64 = 1 << 20;
const FINGERPRINT_NAMES: usize = 10_000;

/// A path's stamp for a probe: for [`Probe::Kind`] its type and, for a file, its size
/// (a `.git` file is read whole); for [`Probe::Link`] its type and a symlink's target;
/// for [`Probe::Content`] also its device, inode, modification time in ns, and a
/// fingerprint of what is there (a file's bytes, a directory's names, a symlink's
/// target), so that a change within the file system's timestamp granularity is seen as
/// well. `None` as the fingerprint: too big to fingerprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    kind: u8,
    size: u64,
    dev: u64,
    ino: u64,
    mtime: i128,
    fingerprint: Option<u64>,
}

fn fingerprint(path: &Path, kind: u8, size: u64) -> Option<u64> {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    match kind {
        2 => std::fs::read_link(path).ok()?.hash(&mut hasher),
        1 => {
            let mut names: Vec<std::ffi::OsString> = std::fs::read_dir(path)
                .ok()?
                .take(FINGERPRINT_NAMES + 1)
                .filter_map(|entry| entry.ok().map(|entry| entry.file_name()))
                .collect();
            if names.len() > FINGERPRINT_NAMES {
                return None;
            }
            names.sort();
            names.hash(&mut hasher);
        }
        _ if size > FINGERPRINT_BYTES => return None,
        _ => std::fs::read(path).ok()?.hash(&mut hasher),
    }
    Some(hasher.finish())
}

fn stamp(path: &Path, probe: Probe) -> Option<Stamp> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    let kind = if meta.file_type().is_symlink() {
        2
    } else if meta.is_dir() {
        1
    } else {
        0
    };
    let size = if kind == 0 { meta.len() } else { 0 };
    let plain = Stamp {
        kind,
        size,
        dev: 0,
        ino: 0,
        mtime: 0,
        fingerprint: Some(0),
    };
    match probe {
        Probe::Kind => return Some(plain),
        Probe::Link if kind != 2 => return Some(plain),
        Probe::Link => {
            return Some(Stamp {
                fingerprint: fingerprint(path, kind, size),
                ..plain
            });
        }
        Probe::Content => {}
    }
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i128);
    #[cfg(unix)]
    let (dev, ino) = {
        use std::os::unix::fs::MetadataExt;
        (meta.dev(), meta.ino())
    };
    #[cfg(not(unix))]
    let (dev, ino) = (0, 0);
    Some(Stamp {
        kind,
        size: meta.len(),
        dev,
        ino,
        mtime,
        fingerprint: fingerprint(path, kind, size),
    })
}

/// A file system view that remembers every path it was asked about, and every file git
/// read its config from, so that an answer built from it can be reused while none of
/// them changed.
struct Recording<'a> {
    inner: &'a dyn Fs,
    paths: std::sync::Mutex<Vec<(PathBuf, Probe)>>,
}

impl Recording<'_> {
    fn record(&self, path: &Path, probe: Probe) {
        self.paths
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push((path.to_path_buf(), probe));
    }
}

impl Fs for Recording<'_> {
    fn kind(&self, path: &Path) -> Option<FileKind> {
        self.record(path, Probe::Kind);
        self.inner.kind(path)
    }
    fn read_link(&self, path: &Path) -> Option<PathBuf> {
        self.record(path, Probe::Content);
        self.inner.read_link(path)
    }
    fn read(&self, path: &Path, max: u64) -> Option<Vec<u8>> {
        self.record(path, Probe::Content);
        self.inner.read(path, max)
    }
    fn list(&self, dir: &Path) -> Option<Vec<String>> {
        self.record(dir, Probe::Content);
        self.inner.list(dir)
    }
    fn canonical(&self, path: &Path) -> Option<PathBuf> {
        for ancestor in path.ancestors() {
            self.record(ancestor, Probe::Link);
        }
        self.inner.canonical(path)
    }
    fn hard_links(&self, path: &Path) -> u64 {
        self.record(path, Probe::Content);
        self.inner.hard_links(path)
    }
    fn git_config(&self, dir: &Path, git_dir: Option<&Path>) -> Result<Vec<u8>, String> {
        let listing = self.inner.git_config(dir, git_dir)?;
        // Every file the listing came from (included ones too), relative to where git
        // ran.
        if let Ok(entries) = parse_config_list(&listing) {
            for entry in entries {
                let Some(file) = entry.origin.strip_prefix("file:") else {
                    continue;
                };
                let file = dir.join(file);
                // An include whose file is missing is skipped by git: made later, it
                // would add config, so it is stamped too (missing).
                let key = entry.key.to_ascii_lowercase();
                if (key == "include.path"
                    || key.starts_with("includeif.") && key.ends_with(".path"))
                    && let Some(value) = &entry.value
                    && !value.starts_with('~')
                {
                    let base = file.parent().unwrap_or(dir);
                    self.record(&base.join(value), Probe::Content);
                }
                self.record(&file, Probe::Content);
            }
        }
        Ok(listing)
    }
}

/// One guard answer kept by [`cached_git_context`].
struct CachedContext {
    cwd: PathBuf,
    env: Vec<(String, String)>,
    stamps: Vec<(PathBuf, Probe, Option<Stamp>)>,
    context: GitContext,
}

/// [`git_context`] on the real file system, kept while nothing it was built from
/// changed: every path the guard looked at (whether there is a `.git` in each directory
/// up to `/`, the git directory's hooks and submodules), every file git read the config
/// from (includes too), and the files git may read a config or a conditional include's
/// branch from even when they do not exist yet (`config`, `config.worktree`, `HEAD`,
/// `commondir` of the git directory and of its common directory). An unchanged
/// repository costs a few stats instead of a `git config` process per call; `git status`
/// or a commit change none of these. Each file's and directory's content is fingerprinted
/// as well, so a change within a timestamp's granularity is seen and a repository made a
/// moment ago is cached at once; only an answer built from something too big to
/// fingerprint waits until that is two seconds old.
pub fn cached_git_context(cwd: &Path, env: &[(String, String)]) -> GitContext {
    const ENTRIES: usize = 8;
    static CACHE: std::sync::Mutex<Vec<CachedContext>> = std::sync::Mutex::new(Vec::new());
    let env: Vec<(String, String)> = env
        .iter()
        .filter(|(name, _)| name == "PATH" || name.starts_with("GIT_"))
        .cloned()
        .collect();
    {
        let mut cache = CACHE
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(at) = cache.iter().position(|c| c.cwd == cwd && c.env == env) {
            if cache[at]
                .stamps
                .iter()
                .all(|(path, probe, old)| stamp(path, *probe) == *old)
            {
                return cache[at].context.clone();
            }
            cache.remove(at);
        }
    }
    let recording = Recording {
        inner: &RealFs,
        paths: std::sync::Mutex::new(Vec::new()),
    };
    let context = git_context(cwd, &env, &recording);
    let mut paths = recording
        .paths
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Ok(Some(git_dir)) = find_repository(cwd, &RealFs) {
        let common = common_dir(&git_dir, &RealFs);
        for dir in [&git_dir, &common] {
            for name in ["config", "config.worktree", "HEAD", "commondir"] {
                paths.push((dir.join(name), Probe::Content));
            }
        }
    }
    paths.sort();
    paths.dedup();
    let stamps: Vec<(PathBuf, Probe, Option<Stamp>)> = paths
        .into_iter()
        .map(|(path, probe)| {
            let now = stamp(&path, probe);
            (path, probe, now)
        })
        .collect();
    // What could not be fingerprinted is known by its stamp alone, which may not show a
    // change made in the same tick as the one before: such an answer is kept only once
    // that is two seconds old.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(i128::MAX, |d| d.as_nanos() as i128);
    let settled = stamps.iter().all(|(_, _, s)| {
        s.is_none_or(|s| s.fingerprint.is_some() || now - s.mtime > 2_000_000_000)
    });
    if settled {
        let mut cache = CACHE
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if cache.len() == ENTRIES {
            cache.remove(0);
        }
        cache.push(CachedContext {
            cwd: cwd.to_path_buf(),
            env,
            stamps,
            context: context.clone(),
        });
    }
    context
}

/// Hooks that read-only-looking commands fire: `git status` refreshes and writes the
/// index (`post-index-change`); ref updates run `reference-transaction`.
const READ_HOOKS: &[&str] = &["post-index-change", "reference-transaction"];

/// The repository's common directory (a linked worktree's `commondir`).
pub(crate) fn common_dir(git_dir: &Path, fs: &dyn Fs) -> PathBuf {
    let Some(bytes) = fs.read(&git_dir.join("commondir"), 4096) else {
        return git_dir.to_path_buf();
    };
    let text = String::from_utf8_lossy(&bytes);
    let target = PathBuf::from(text.trim());
    crate::paths::absolute(
        &if target.is_absolute() {
            target
        } else {
            git_dir.join(target)
        }
        .to_string_lossy(),
        Path::new("/"),
    )
}

/// Every submodule git directory under `modules/`, nested ones included (bounded).
fn submodule_dirs(common: &Path, fs: &dyn Fs) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut queue = vec![common.join("modules")];
    while let Some(dir) = queue.pop() {
        if out.len() >= 64 {
            break;
        }
        let Some(names) = fs.list(&dir) else { continue };
        for name in names {
            let path = dir.join(&name);
            if matches!(fs.kind(&path.join("HEAD")), Some(FileKind::File(_))) {
                queue.push(path.join("modules"));
                out.push(path);
            } else if matches!(fs.kind(&path), Some(FileKind::Dir)) {
                // Submodule names may hold slashes: `modules/a/b`.
                queue.push(path);
            }
        }
    }
    out
}

fn check_config(cwd: &Path, git_dir: &Path, fs: &dyn Fs) -> GitContext {
    let listing = match fs.git_config(cwd, None) {
        Ok(bytes) => bytes,
        Err(why) => return GitContext::Unsafe(why),
    };
    let entries = match parse_config_list(&listing) {
        Ok(entries) => entries,
        Err(why) => return GitContext::Unsafe(why),
    };
    if let Some(why) = first_dangerous(&entries) {
        return GitContext::Unsafe(why);
    }
    let common = common_dir(git_dir, fs);
    for hooks in [common.join("hooks"), git_dir.join("hooks")] {
        for hook in READ_HOOKS {
            let path = hooks.join(hook);
            if fs.kind(&path).is_some() {
                return GitContext::Unsafe(format!(
                    "the hook {} runs on read-only-looking commands",
                    path.display()
                ));
            }
        }
    }
    // `git status` and `git diff` recurse into submodules, which read their own config.
    for module in submodule_dirs(&common, fs) {
        let listing = match fs.git_config(cwd, Some(&module)) {
            Ok(bytes) => bytes,
            Err(why) => return GitContext::Unsafe(why),
        };
        match parse_config_list(&listing) {
            Ok(entries) => {
                if let Some(why) = first_dangerous(&entries) {
                    return GitContext::Unsafe(format!("submodule {}: {why}", module.display()));
                }
            }
            Err(why) => return GitContext::Unsafe(why),
        }
        for hook in READ_HOOKS {
            if fs.kind(&module.join("hooks").join(hook)).is_some() {
                return GitContext::Unsafe(format!(
                    "the submodule hook {} runs on read-only-looking commands",
                    module.join("hooks").join(hook).display()
                ));
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
        /// What git would print for the config (`scope\0origin\0key\nvalue\0`...).
        listing: Vec<u8>,
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
        fn config(mut self, entries: &[(&str, &str)]) -> Self {
            for (key, value) in entries {
                self.listing.extend_from_slice(
                    format!("local\0file:.git/config\0{key}\n{value}\0").as_bytes(),
                );
            }
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
        fn git_config(&self, _: &Path, _: Option<&Path>) -> Result<Vec<u8>, String> {
            Ok(self.listing.clone())
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
        for (key, value) in [
            ("core.fsmonitor", "./x.sh"),
            ("core.hookspath", ".hooks"),
            ("diff.external", "sh"),
            ("diff.bin.textconv", "./conv"),
            ("diff.a.b.command", "x"),
            ("filter.lfs.smudge", "x"),
            ("core.sshcommand", "x"),
            ("gpg.program", "x"),
            ("gpg.ssh.program", "x"),
            ("core.pager", "less"),
            ("pager.log", "x"),
            ("alias.st", "  !sh -c x"),
            ("credential.helper", "store"),
            ("credential.https://x.helper", "store"),
            ("remote.origin.uploadpack", "x"),
            ("remote.origin.receivepack", "x"),
            ("core.gitproxy", "x"),
            ("protocol.ext.allow", "always"),
            ("uploadpack.packobjectshook", "x"),
            ("log.showsignature", "true"),
        ] {
            let fs = FakeFs::default()
                .repo("/w/app/.git")
                .config(&[(key, value)]);
            assert!(
                matches!(context(&fs), GitContext::Unsafe(why) if why.contains(key)),
                "{key}"
            );
        }
        for (key, value) in [
            ("alias.st", "status"),
            ("core.fsmonitor", "false"),
            ("log.showsignature", "false"),
            ("user.name", "x"),
        ] {
            let fs = FakeFs::default()
                .repo("/w/app/.git")
                .config(&[(key, value)]);
            assert_eq!(context(&fs), GitContext::Safe, "{key}");
        }
    }

    #[test]
    fn git_5_hooks_that_read_only_commands_fire() {
        let fs = FakeFs::default()
            .repo("/w/app/.git")
            .file("/w/app/.git/hooks/post-index-change", "#!/bin/sh\n");
        assert!(
            matches!(context(&fs), GitContext::Unsafe(why) if why.contains("post-index-change"))
        );
        let sample = FakeFs::default()
            .repo("/w/app/.git")
            .file("/w/app/.git/hooks/post-index-change.sample", "#!/bin/sh\n");
        assert_eq!(context(&sample), GitContext::Safe);
    }

    #[test]
    fn git_5_the_listing_is_parsed_as_git_prints_it() {
        let entries = parse_config_list(
            b"local\0file:.git/config\0core.bare\nfalse\0local\0file:x\0flag.noval\0",
        )
        .unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].key, "core.bare");
        assert_eq!(entries[0].value.as_deref(), Some("false"));
        assert_eq!(entries[1].value, None);
        assert!(parse_config_list(b"local\0file:x").is_err());
        assert_eq!(parse_config_list(b"").unwrap(), vec![]);
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
