//! Linux: the search for the secrets the secret paths do not name (SBX-2): entries whose
//! name is a secret name, and hardlinks to a secret file, in the directories on the way
//! to a secret path, in the plan's scanned directories, and in every directory of its
//! scanned trees but `.git` and the dependency and build directories named in
//! [`UNSEARCHED_NAMES`] (`node_modules`, `target`, ...: they hold no credential of the
//! user's and can hold hundreds of thousands of files).
//!
//! The search takes nothing from a file a command can write (SBX-6): no `.gitignore`,
//! no `.git/info/exclude`, no marker file decides what is left out, only names fixed
//! here; a directory holding a secret the search found cannot be renamed into one of
//! them (its ancestors are pinned by the mounts). Past [`MAX_SCANNED_DIRS`] directories
//! of a tree the search fails closed: the directories it did not reach are hidden as a
//! secret is ([`Found::unsearched`]).
//!
//! Every listing is kept, and only a directory that changed is listed again: after a
//! command that added a file, the next one lists that file's directory, not the whole
//! workspace. A tree's directories are watched with inotify, so a command costs no
//! check of them at all until one changes; where a watch cannot be added (the user's
//! watch limit), the directory's stamp is checked again before every command instead.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirEntryExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use rustix::fs::inotify::{self, ReadFlags, WatchFlags};

use super::plan::MAX_SCANNED_DIRS;

/// Directory names a tree's search does not enter: version control, and the
/// dependency, build and cache directories of package managers and tools, which are
/// filled by those tools, not by the user. Fixed here, never read from the workspace.
pub(super) const UNSEARCHED_NAMES: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    "node_modules",
    "bower_components",
    "target",
    ".venv",
    "__pycache__",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".gradle",
    ".next",
    ".nuxt",
    ".svelte-kit",
    ".turbo",
    ".parcel-cache",
    "vendor",
];

/// A path's identity and modification time: a listing stays valid while it holds
/// (a directory's mtime changes with every entry added, removed or renamed in it).
pub(super) type Stamp = Option<(i64, i64, u64)>;

/// The stamp of `path` now.
pub(super) fn stamp(path: &Path) -> Stamp {
    std::fs::metadata(path)
        .ok()
        .map(|m| (m.mtime(), m.mtime_nsec(), m.ino()))
}

/// The stamp of a listing that must not be reused: no file has this mtime.
const RACY: Stamp = Some((i64::MIN, 0, 0));

/// Whether an mtime is so close to now that a change after the listing could keep it:
/// file times come from a clock that ticks every few milliseconds (at most 10 at the
/// slowest kernel tick, 100 Hz). One in the future (a file unpacked from elsewhere) is
/// not: a change would set it to now.
fn is_recent(secs: i64, nanos: i64) -> bool {
    const WINDOW: i128 = 10_000_000;
    let Ok(now) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) else {
        return true;
    };
    let distance = i128::from(secs) * 1_000_000_000 + i128::from(nanos) - now.as_nanos() as i128;
    (-WINDOW..=WINDOW).contains(&distance)
}

/// At most this many files of the secret directories are taken for hardlink checks.
const MAX_SECRET_INODES: usize = 4096;

/// What the search found, every directory it read with the stamp each had before it was
/// read (the watched ones left out: their changes arrive as events), and the watch
/// generation the search started from ([`generation`]).
pub(super) struct Found {
    pub(super) secrets: Vec<PathBuf>,
    /// Directories of a scanned tree past [`MAX_SCANNED_DIRS`]: not searched, so hidden
    /// (the search fails closed).
    pub(super) unsearched: Vec<PathBuf>,
    pub(super) stamps: Vec<(PathBuf, Stamp)>,
    pub(super) generation: u64,
}

/// One directory entry as listed.
#[derive(Clone)]
struct Entry {
    name: OsString,
    ino: u64,
    is_dir: bool,
    is_file: bool,
    /// The name is a secret name (of the names the cache was made for).
    by_name: bool,
}

/// One directory's listing: valid while its stamp holds or, when it was taken under a
/// watch, until the watch reports a change.
struct Listing {
    stamp: Stamp,
    dev: u64,
    watched: bool,
    entries: Arc<Vec<Entry>>,
}

/// The listings of the last search, for the names they were made for, and the watches
/// on the tree directories among them.
#[derive(Default)]
struct Cache {
    names: Vec<String>,
    listings: HashMap<PathBuf, Listing>,
    watch: Option<Watch>,
    /// Watching could not start (no inotify): stamps only.
    no_watch: bool,
    /// Watched directories with a change reported since their last listing.
    dirty: HashSet<PathBuf>,
}

/// Counts the batches of changes the watches reported, over the life of the process:
/// reads built from a search stay valid while it has not moved ([`generation`]).
static GENERATION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

static CACHE: Mutex<Option<Cache>> = Mutex::new(None);

/// The changes the watches reported so far: collects the pending events (marking their
/// directories for listing again) and returns the generation, which moves with every
/// batch of changes.
pub(super) fn generation() -> u64 {
    let mut guard = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(cache) = guard.as_mut() {
        cache.collect_events();
    }
    GENERATION.load(std::sync::atomic::Ordering::SeqCst)
}

/// inotify watches on directories, by path and by watch descriptor.
struct Watch {
    fd: OwnedFd,
    /// Ordered, so that a directory's watched descendants follow it.
    paths: BTreeMap<PathBuf, i32>,
    wds: HashMap<i32, Vec<PathBuf>>,
}

/// What a directory's watch reports: entries added, removed or renamed in it, and the
/// directory itself removed or renamed (its path then names something else).
fn watch_flags() -> WatchFlags {
    WatchFlags::CREATE
        | WatchFlags::DELETE
        | WatchFlags::MOVED_FROM
        | WatchFlags::MOVED_TO
        | WatchFlags::MOVE_SELF
        | WatchFlags::DELETE_SELF
        | WatchFlags::ONLYDIR
        | WatchFlags::DONT_FOLLOW
}

impl Watch {
    fn new() -> Option<Watch> {
        match inotify::init(inotify::CreateFlags::NONBLOCK | inotify::CreateFlags::CLOEXEC) {
            Ok(fd) => Some(Watch {
                fd,
                paths: BTreeMap::new(),
                wds: HashMap::new(),
            }),
            Err(error) => {
                tracing::warn!(
                    %error,
                    "inotify is not available: the secret search checks every searched directory before each command"
                );
                None
            }
        }
    }

    /// Watches `dir`: `Some(true)` when it already was (so every change since its
    /// listing was reported), `Some(false)` when the watch is new, `None` when it
    /// cannot be watched.
    fn ensure(&mut self, dir: &Path) -> Option<bool> {
        if self.paths.contains_key(dir) {
            return Some(true);
        }
        let wd = match inotify::add_watch(&self.fd, dir, watch_flags()) {
            Ok(wd) => wd,
            Err(error) => {
                if error == rustix::io::Errno::NOSPC {
                    warn_once(
                        dir,
                        "the user's inotify watch limit is reached: the secret search checks this directory's stamp before each command instead",
                    );
                }
                return None;
            }
        };
        self.paths.insert(dir.to_path_buf(), wd);
        let paths = self.wds.entry(wd).or_default();
        if !paths.iter().any(|p| p == dir) {
            paths.push(dir.to_path_buf());
        }
        Some(false)
    }

    /// Stops watching `dir` under this path.
    fn unwatch(&mut self, dir: &Path) {
        let Some(wd) = self.paths.remove(dir) else {
            return;
        };
        if let Some(paths) = self.wds.get_mut(&wd) {
            paths.retain(|p| p != dir);
            if paths.is_empty() {
                self.wds.remove(&wd);
                // A watch the kernel already dropped (its directory is gone) is an
                // error to ignore.
                let _ = inotify::remove_watch(&self.fd, wd);
            }
        }
    }

    /// Forgets the watches of `dir` and of everything under it: their paths no longer
    /// name what was watched (a rename or a removal).
    fn forget_tree(&mut self, dir: &Path) {
        let under: Vec<PathBuf> = self
            .paths
            .range(dir.to_path_buf()..)
            .map(|(path, _)| path)
            .take_while(|p| p.starts_with(dir))
            .cloned()
            .collect();
        for path in under {
            self.unwatch(&path);
        }
    }

    /// Reads the pending events, adding the directories whose listing changed to
    /// `dirty`; whether anything was reported. `Err`: the queue overflowed, events were
    /// lost.
    fn read_events(&mut self, dirty: &mut HashSet<PathBuf>) -> Result<bool, ()> {
        let mut events: Vec<(i32, ReadFlags, Option<PathBuf>)> = Vec::new();
        let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); 16384];
        let mut reader = inotify::Reader::new(&self.fd, &mut buf);
        loop {
            match reader.next() {
                Ok(event) => events.push((
                    event.wd(),
                    event.events(),
                    event
                        .file_name()
                        .map(|n| PathBuf::from(std::ffi::OsStr::from_bytes(n.to_bytes()))),
                )),
                Err(rustix::io::Errno::AGAIN) => break,
                // Any other failure: what was missed is unknown.
                Err(_) => return Err(()),
            }
        }
        let any = !events.is_empty();
        for (wd, flags, name) in events {
            if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
                return Err(());
            }
            let paths = self.wds.get(&wd).cloned().unwrap_or_default();
            if flags.contains(ReadFlags::IGNORED) {
                for path in &paths {
                    self.paths.remove(path);
                    dirty.insert(path.clone());
                }
                self.wds.remove(&wd);
                continue;
            }
            for path in paths {
                if flags.intersects(ReadFlags::MOVE_SELF | ReadFlags::DELETE_SELF) {
                    self.forget_tree(&path);
                } else if flags.contains(ReadFlags::ISDIR)
                    && flags
                        .intersects(ReadFlags::DELETE | ReadFlags::MOVED_FROM | ReadFlags::MOVED_TO)
                    && let Some(name) = &name
                {
                    self.forget_tree(&path.join(name));
                }
                dirty.insert(path);
            }
        }
        Ok(any)
    }
}

impl Cache {
    /// Collects the watches' pending events; any moves the generation.
    fn collect_events(&mut self) {
        let Some(watch) = self.watch.as_mut() else {
            return;
        };
        match watch.read_events(&mut self.dirty) {
            Ok(false) => {}
            Ok(true) => {
                GENERATION.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            Err(()) => {
                // Events were lost: no watched listing can be trusted. A new
                // descriptor starts with no watch at all.
                self.watch = None;
                self.listings.retain(|_, listing| !listing.watched);
                self.dirty.clear();
                GENERATION.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        }
    }

    /// Watches `dir` (starting inotify on first use): as [`Watch::ensure`].
    fn watch(&mut self, dir: &Path) -> Option<bool> {
        if self.watch.is_none() && !self.no_watch {
            self.watch = Watch::new();
            self.no_watch = self.watch.is_none();
        }
        self.watch.as_mut()?.ensure(dir)
    }
}

/// A search: the cache, and what this search read (kept; the rest is dropped after).
struct Search<'a> {
    cache: &'a mut Cache,
    read: HashSet<PathBuf>,
    stamps: Vec<(PathBuf, Stamp)>,
}

impl Search<'_> {
    /// The listing of `dir` (`None` if it cannot be listed). `watched`: a directory of
    /// a scanned tree, watched with inotify when possible; its listing is kept until the
    /// watch reports a change, and no stamp of it is checked. Otherwise the listing is
    /// kept while the directory's stamp holds. `exact`: a directory of the workspace,
    /// where a change in the clock tick of the listing must not be missed (below); the
    /// directories on the way to the secrets are as exact as the read rules built from
    /// them, which have always been rebuilt on a changed stamp only.
    fn list(&mut self, dir: &Path, exact: bool, watched: bool) -> Option<(u64, Arc<Vec<Entry>>)> {
        self.read.insert(dir.to_path_buf());
        let watching = if watched { self.cache.watch(dir) } else { None };
        if watching == Some(true)
            && !self.cache.dirty.contains(dir)
            && let Some(listing) = self.cache.listings.get(dir)
            && listing.watched
        {
            return Some((listing.dev, Arc::clone(&listing.entries)));
        }
        let meta = std::fs::metadata(dir).ok();
        let now: Stamp = meta.as_ref().map(|m| (m.mtime(), m.mtime_nsec(), m.ino()));
        if watching.is_some() {
            // The watch is in place before the listing: a change from here on is an
            // event, and the listing is kept until one arrives.
            self.cache.dirty.remove(dir);
            let meta = meta?;
            let entries = self.read_entries(dir)?;
            self.cache.listings.insert(
                dir.to_path_buf(),
                Listing {
                    stamp: now,
                    dev: meta.dev(),
                    watched: true,
                    entries: Arc::clone(&entries),
                },
            );
            return Some((meta.dev(), entries));
        }
        // A directory changed within the clock's granularity of now may change again
        // with the same mtime: its listing is not kept, and its stamp never matches, so
        // the next command lists it again.
        let racy = exact && now.is_some_and(|(secs, nanos, _)| is_recent(secs, nanos));
        self.stamps
            .push((dir.to_path_buf(), if racy { RACY } else { now }));
        let meta = meta?;
        if let Some(listing) = self.cache.listings.get(dir)
            && listing.stamp == now
            && !listing.watched
            && !racy
        {
            return Some((listing.dev, Arc::clone(&listing.entries)));
        }
        let entries = self.read_entries(dir)?;
        if racy {
            self.cache.listings.remove(dir);
            return Some((meta.dev(), entries));
        }
        self.cache.listings.insert(
            dir.to_path_buf(),
            Listing {
                stamp: now,
                dev: meta.dev(),
                watched: false,
                entries: Arc::clone(&entries),
            },
        );
        Some((meta.dev(), entries))
    }

    /// The entries of `dir`, read now.
    fn read_entries(&self, dir: &Path) -> Option<Arc<Vec<Entry>>> {
        let names = &self.cache.names;
        let entries: Vec<Entry> = std::fs::read_dir(dir)
            .ok()?
            .flatten()
            .map(|entry| {
                let kind = entry.file_type().ok();
                let name = entry.file_name();
                Entry {
                    by_name: super::secret_name(names, &name.to_string_lossy()),
                    ino: entry.ino(),
                    is_dir: kind.is_some_and(|t| t.is_dir()),
                    is_file: kind.is_some_and(|t| t.is_file()),
                    name,
                }
            })
            .collect();
        Some(Arc::new(entries))
    }
}

/// Device and inode of the secret files: each secret path that is a file, and the files
/// inside each secret directory, at any depth (at most [`MAX_SECRET_INODES`]).
/// `watched`: directories under a watch, whose listing is kept until an event.
fn secret_inodes(
    search: &mut Search<'_>,
    secrets: &[PathBuf],
    watched: &HashSet<PathBuf>,
) -> HashMap<u64, Vec<u64>> {
    let mut out: HashMap<u64, Vec<u64>> = HashMap::new();
    let mut count = 0usize;
    let mut dirs: VecDeque<PathBuf> = VecDeque::new();
    for path in secrets {
        match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.is_dir() => dirs.push_back(path.clone()),
            Ok(meta) if meta.is_file() => {
                out.entry(meta.ino()).or_default().push(meta.dev());
                count += 1;
            }
            _ => {}
        }
    }
    while let Some(dir) = dirs.pop_front() {
        let Some((dev, entries)) = search.list(&dir, false, watched.contains(&dir)) else {
            continue;
        };
        for entry in entries.iter() {
            if count >= MAX_SECRET_INODES {
                return out;
            }
            if entry.is_file {
                out.entry(entry.ino).or_default().push(dev);
                count += 1;
            } else if entry.is_dir {
                dirs.push_back(dir.join(&entry.name));
            }
        }
    }
    out
}

/// The secrets of the directories and trees that `secrets` (the secret paths, with their
/// real paths) do not name, by `names` (see [`super::SecretList::names`]). Hardlinks are
/// looked for to the files of every secret path but those in `no_links` (the directory
/// of every session's files: command outputs, not credentials, and changing with every
/// command).
pub(super) fn find(
    secrets: &[PathBuf],
    no_links: &[PathBuf],
    names: &[String],
    dirs: &[PathBuf],
    trees: &[PathBuf],
    watched: &[PathBuf],
) -> Found {
    let mut guard = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    let cache = guard.get_or_insert_with(Cache::default);
    if cache.names != names {
        *cache = Cache {
            names: names.to_vec(),
            ..Cache::default()
        };
        GENERATION.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
    cache.collect_events();
    let generation = GENERATION.load(std::sync::atomic::Ordering::SeqCst);
    let mut search = Search {
        cache,
        read: HashSet::new(),
        stamps: Vec::new(),
    };
    // The caller's paths: a directory's watch reports what its stamp would show (an
    // entry added, removed or renamed; itself removed or renamed), so a watched one
    // costs no check before each command. A file or a missing path whose parent is
    // watched is covered by that watch (it can only be replaced, made or removed, which
    // are its parent's events; its content does not matter here), and so is a missing
    // path below a covered missing one (it cannot appear before its parent does). A symlink (its stamp
    // follows it), anything else, or a directory past the watch limit is stamped.
    let mut covered: HashSet<&Path> = HashSet::new();
    // Of those, the directories watched, and the missing paths a watch covers: the
    // first are listed as a tree's directories are (kept until an event), the second
    // need no listing at all (nothing is there until an event says so).
    let mut watched_dirs: HashSet<PathBuf> = HashSet::new();
    let mut missing_covered: HashSet<PathBuf> = HashSet::new();
    let mut sorted: Vec<&PathBuf> = watched.iter().collect();
    // Parents before their children.
    sorted.sort_by_key(|path| path.components().count());
    for path in sorted {
        let kind = std::fs::symlink_metadata(path).ok().map(|m| m.file_type());
        let is_dir = kind.is_some_and(|k| k.is_dir());
        if is_dir && search.cache.watch(path).is_some() {
            search.read.insert(path.clone());
            covered.insert(path);
            watched_dirs.insert(path.clone());
            continue;
        }
        let parent_watched = path.parent().is_some_and(|p| covered.contains(p));
        if kind.is_none() && parent_watched {
            // Made later, it is an event of the covered parent, which starts a new
            // search that watches it; so is anything made below it.
            covered.insert(path);
            missing_covered.insert(path.clone());
            continue;
        }
        if !is_dir && kind.is_some_and(|k| k.is_file()) && parent_watched {
            continue;
        }
        search.stamps.push((path.clone(), stamp(path)));
    }
    let linked: Vec<PathBuf> = secrets
        .iter()
        .filter(|p| !no_links.contains(p))
        .cloned()
        .collect();
    let inodes = secret_inodes(&mut search, &linked, &watched_dirs);
    let mut found = Vec::new();
    let mut unsearched = Vec::new();
    // The directories on the way to a secret path (not `/`), and the scanned ones.
    let mut on_the_way: Vec<PathBuf> = secrets
        .iter()
        .flat_map(|p| {
            p.ancestors()
                .skip(1)
                .map(Path::to_path_buf)
                .collect::<Vec<_>>()
        })
        .filter(|d| d.parent().is_some())
        .chain(dirs.iter().cloned())
        .collect();
    on_the_way.sort();
    on_the_way.dedup();
    for dir in &on_the_way {
        if missing_covered.contains(dir) {
            continue;
        }
        let exact = dirs.contains(dir);
        let watched = watched_dirs.contains(dir);
        scan_dir(&mut search, &inodes, dir, exact, watched, &mut found);
    }
    for root in trees {
        scan_tree(&mut search, &inodes, root, &mut found, &mut unsearched);
    }
    let Search {
        cache,
        read,
        stamps,
    } = search;
    cache.listings.retain(|dir, _| read.contains(dir));
    if let Some(watch) = cache.watch.as_mut() {
        let stale: Vec<PathBuf> = watch
            .paths
            .keys()
            .filter(|p| !read.contains(*p))
            .cloned()
            .collect();
        for path in stale {
            watch.unwatch(&path);
        }
    }
    found.sort();
    found.dedup();
    unsearched.sort();
    unsearched.dedup();
    Found {
        secrets: found,
        unsearched,
        stamps,
        generation,
    }
}

/// Adds the secret entries of `dir` to `found`; returns its other directories (not
/// symlinks: a tree is not left through one).
fn scan_dir(
    search: &mut Search<'_>,
    inodes: &HashMap<u64, Vec<u64>>,
    dir: &Path,
    exact: bool,
    watched: bool,
    found: &mut Vec<PathBuf>,
) -> Vec<PathBuf> {
    let Some((_, entries)) = search.list(dir, exact, watched) else {
        return Vec::new();
    };
    let mut subdirs = Vec::new();
    for entry in entries.iter() {
        let path = dir.join(&entry.name);
        // A hardlink to a secret file read through another name: the inode number is
        // the listing's; the device is checked on a match only.
        let by_inode = entry.is_file
            && inodes.get(&entry.ino).is_some_and(|devs| {
                std::fs::symlink_metadata(&path).is_ok_and(|m| devs.contains(&m.dev()))
            });
        if entry.by_name || by_inode {
            found.push(path);
        } else if entry.is_dir {
            subdirs.push(path);
        }
    }
    subdirs
}

/// Whether a tree's search enters the directory named `name`.
fn searched(name: &std::ffi::OsStr) -> bool {
    !UNSEARCHED_NAMES
        .iter()
        .any(|n| std::ffi::OsStr::new(n) == name)
}

/// Scans every directory of the tree at `root`, breadth first, leaving out the
/// directories named in [`UNSEARCHED_NAMES`], up to [`MAX_SCANNED_DIRS`] directories;
/// the ones past the limit go to `unsearched` (and a warning is logged).
fn scan_tree(
    search: &mut Search<'_>,
    inodes: &HashMap<u64, Vec<u64>>,
    root: &Path,
    found: &mut Vec<PathBuf>,
    unsearched: &mut Vec<PathBuf>,
) {
    let mut queue: VecDeque<PathBuf> = VecDeque::new();
    queue.push_back(root.to_path_buf());
    let mut scanned = 0usize;
    while let Some(dir) = queue.pop_front() {
        if scanned == MAX_SCANNED_DIRS {
            warn_once(
                root,
                "this tree has more directories than the secret search's limit: the ones past it are hidden from sandboxed commands",
            );
            let mut rest: Vec<PathBuf> = std::iter::once(dir).chain(queue.drain(..)).collect();
            collapse(&mut rest, root);
            unsearched.extend(rest);
            break;
        }
        scanned += 1;
        let mut subdirs = scan_dir(search, inodes, &dir, true, true, found);
        subdirs.retain(|sub| sub.file_name().is_some_and(searched));
        subdirs.sort();
        queue.extend(subdirs);
    }
}

/// At most this many directories are hidden for a tree past the limit: each is a mount
/// for every command.
const MAX_UNSEARCHED: usize = 256;

/// Makes `dirs` (directories of the tree at `root` the search did not reach) at most
/// [`MAX_UNSEARCHED`] paths that cover them all, by replacing the deepest ones with
/// their parents: hiding more than was left unsearched, never less.
fn collapse(dirs: &mut Vec<PathBuf>, root: &Path) {
    dirs.sort();
    dirs.dedup();
    while dirs.len() > MAX_UNSEARCHED {
        let deepest = dirs
            .iter()
            .map(|d| d.components().count())
            .max()
            .unwrap_or(0);
        let mut next: Vec<PathBuf> = dirs
            .iter()
            .map(|d| match d.parent() {
                Some(parent) if d.components().count() == deepest && parent.starts_with(root) => {
                    parent.to_path_buf()
                }
                _ => d.clone(),
            })
            .collect();
        next.sort();
        next.dedup();
        // A parent covers its children.
        let mut covering: Vec<PathBuf> = Vec::new();
        for dir in next {
            if !covering.iter().any(|c| dir.starts_with(c)) {
                covering.push(dir);
            }
        }
        if covering.len() == dirs.len() {
            break;
        }
        *dirs = covering;
    }
}

/// Logs `message` about `path`, once per process.
fn warn_once(path: &Path, message: &'static str) {
    static WARNED: Mutex<Vec<(PathBuf, &'static str)>> = Mutex::new(Vec::new());
    let mut warned = WARNED.lock().unwrap_or_else(PoisonError::into_inner);
    if warned.iter().any(|(p, m)| p == path && *m == message) {
        return;
    }
    warned.push((path.to_path_buf(), message));
    tracing::warn!(path = %path.display(), limit = MAX_SCANNED_DIRS, "{message}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sbx_2_only_an_mtime_close_to_now_is_racy() {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap();
        let secs = now.as_secs() as i64;
        assert!(is_recent(secs, i64::from(now.subsec_nanos())));
        assert!(!is_recent(secs - 5, 0), "an old directory");
        assert!(
            !is_recent(secs + 3600, 0),
            "a directory with a future mtime"
        );
    }

    #[test]
    fn sbx_6_unsearched_directories_collapse_to_covering_parents() {
        let root = Path::new("/ws");
        let mut dirs: Vec<PathBuf> = (0..300)
            .map(|i| root.join(format!("a/{i}")))
            .chain([root.join("b/c"), root.join("a/7/deeper")])
            .collect();
        collapse(&mut dirs, root);
        // Whole levels collapse: `b/c` goes up with its level.
        assert_eq!(dirs, [root.join("a"), root.join("b")]);
        let mut few = vec![root.join("a/1"), root.join("a/2")];
        collapse(&mut few, root);
        assert_eq!(few, [root.join("a/1"), root.join("a/2")]);
    }

    #[test]
    fn sbx_2_names_and_hardlinks_are_found_deep_in_a_tree_but_not_in_ignored_dirs() {
        let base = std::env::temp_dir().join(format!(
            "wavesh-scan-{}-{}",
            std::process::id(),
            crate::private_dir::random_name(6)
        ));
        let (ws, home) = (base.join("ws"), base.join("home"));
        for dir in [
            ws.join("a/b/c"),
            ws.join("target/debug"),
            ws.join(".git"),
            home.join(".ssh/keys"),
        ] {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(ws.join(".gitignore"), "/target/\n").unwrap();
        for file in [
            "a/b/c/.env",
            "a/b/c/.env.example",
            "a/b/c/main.rs",
            "target/debug/k.pem",
            ".git/x.key",
        ] {
            std::fs::write(ws.join(file), "").unwrap();
        }
        std::fs::write(home.join(".ssh/keys/deep"), "").unwrap();
        std::fs::hard_link(home.join(".ssh/keys/deep"), ws.join("a/b/notes")).unwrap();
        let names: Vec<String> = [".env", "*.pem", "*.key", "!.env.example"]
            .map(str::to_owned)
            .to_vec();
        let secrets = [home.join(".ssh")];
        // The temporary directory is on the way to the secret too: only what is found
        // in this test's own directory is looked at.
        let find = |secrets: &[PathBuf]| {
            let mut found = find(secrets, &[], &names, &[], std::slice::from_ref(&ws), &[]);
            found.secrets.retain(|p| p.starts_with(&base));
            found
        };
        let found = find(&secrets);
        assert_eq!(found.secrets, [ws.join("a/b/c/.env"), ws.join("a/b/notes")]);
        // The tree's directories are watched, not stamped.
        assert!(!found.stamps.iter().any(|(p, _)| p.starts_with(&ws)));
        // Again, from the listings kept: nothing changed, the generation holds.
        let before = generation();
        assert_eq!(find(&secrets).secrets, found.secrets);
        assert_eq!(generation(), before);
        // A change in one directory moves it, and is seen.
        std::fs::write(ws.join("a/b/c/later.pem"), "").unwrap();
        assert_ne!(generation(), before);
        assert_eq!(
            find(&secrets).secrets,
            [
                ws.join("a/b/c/.env"),
                ws.join("a/b/c/later.pem"),
                ws.join("a/b/notes")
            ]
        );
        // A renamed directory is listed under its new name, deep inside too; a
        // directory made in its old place is a new one.
        std::fs::rename(ws.join("a"), ws.join("x")).unwrap();
        std::fs::create_dir_all(ws.join("a/b/c")).unwrap();
        std::fs::write(ws.join("a/b/c/fresh.key"), "").unwrap();
        assert_eq!(
            find(&secrets).secrets,
            [
                ws.join("a/b/c/fresh.key"),
                ws.join("x/b/c/.env"),
                ws.join("x/b/c/later.pem"),
                ws.join("x/b/notes")
            ]
        );
        // A file a command can write decides nothing: an ignore file leaves nothing
        // out, the fixed names do.
        std::fs::write(ws.join(".gitignore"), "x/\na/\n").unwrap();
        std::fs::create_dir_all(ws.join("node_modules/p")).unwrap();
        std::fs::write(ws.join("node_modules/p/dep.pem"), "").unwrap();
        let found = find(&secrets);
        assert!(found.secrets.contains(&ws.join("x/b/c/.env")));
        assert!(
            !found
                .secrets
                .iter()
                .any(|p| p.starts_with(ws.join("node_modules")))
        );
        std::fs::remove_dir_all(&base).unwrap();
    }
}
