//! Linux: the search for the secrets the secret paths do not name (SBX-2): entries whose
//! name is a secret name, and hardlinks to a secret file, in the directories on the way
//! to a secret path, in the plan's scanned directories, and in every directory of its
//! scanned trees but `.git` and what their `.gitignore` files ignore (a `.env` is
//! usually ignored itself, but lives in a directory that is not; a build directory
//! holds no credential of the user's and can hold hundreds of thousands of files).
//!
//! Every listing is kept with the stamp its directory had before it was listed, and only
//! a directory whose stamp changed is listed again: after a command that added a file,
//! the next one lists that file's directory, not the whole workspace.

use std::collections::{HashMap, HashSet, VecDeque};
use std::ffi::OsString;
use std::os::unix::fs::{DirEntryExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use ignore::gitignore::Gitignore;

use super::plan::MAX_SCANNED_DIRS;

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

/// What the search found, and every directory and ignore file it read, with the stamp
/// each had before it was read.
pub(super) struct Found {
    pub(super) secrets: Vec<PathBuf>,
    pub(super) stamps: Vec<(PathBuf, Stamp)>,
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

/// One directory's listing, valid while its stamp holds.
struct Listing {
    stamp: Stamp,
    dev: u64,
    entries: Arc<Vec<Entry>>,
}

/// The listings and ignore files of the last search, for the names they were made for.
#[derive(Default)]
struct Cache {
    names: Vec<String>,
    listings: HashMap<PathBuf, Listing>,
    ignores: HashMap<PathBuf, (Stamp, Option<Arc<Gitignore>>)>,
}

/// A search: the cache, and what this search read (kept; the rest is dropped after).
struct Search<'a> {
    cache: &'a mut Cache,
    read: HashSet<PathBuf>,
    stamps: Vec<(PathBuf, Stamp)>,
}

impl Search<'_> {
    /// The listing of `dir` (`None` if it cannot be listed), from the cache while the
    /// directory's stamp holds. `exact`: a directory of the workspace, where a change
    /// in the clock tick of the listing must not be missed (below); the directories on
    /// the way to the secrets are as exact as the read rules built from them, which
    /// have always been rebuilt on a changed stamp only.
    fn list(&mut self, dir: &Path, exact: bool) -> Option<(u64, Arc<Vec<Entry>>)> {
        let meta = std::fs::metadata(dir).ok();
        let now: Stamp = meta.as_ref().map(|m| (m.mtime(), m.mtime_nsec(), m.ino()));
        // A directory changed within the clock's granularity of now may change again
        // with the same mtime: its listing is not kept, and its stamp never matches, so
        // the next command lists it again.
        let racy = exact && now.is_some_and(|(secs, nanos, _)| is_recent(secs, nanos));
        self.stamps
            .push((dir.to_path_buf(), if racy { RACY } else { now }));
        self.read.insert(dir.to_path_buf());
        let meta = meta?;
        if let Some(listing) = self.cache.listings.get(dir)
            && listing.stamp == now
            && !racy
        {
            return Some((listing.dev, Arc::clone(&listing.entries)));
        }
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
        let entries = Arc::new(entries);
        if racy {
            self.cache.listings.remove(dir);
            return Some((meta.dev(), entries));
        }
        self.cache.listings.insert(
            dir.to_path_buf(),
            Listing {
                stamp: now,
                dev: meta.dev(),
                entries: Arc::clone(&entries),
            },
        );
        Some((meta.dev(), entries))
    }

    /// The ignore file at `path` (`.gitignore`, `.git/info/exclude`) as a matcher,
    /// `None` when it is missing or holds no pattern.
    fn ignore_file(&mut self, path: &Path) -> Option<Arc<Gitignore>> {
        let now = stamp(path);
        // A missing one is not stamped: creating it changes its directory's stamp, or
        // (`.git/info/exclude`) can only make the search skip more, never less, when
        // it is noticed late. Checking a missing path again costs more than a stat.
        if now.is_some() {
            self.stamps.push((path.to_path_buf(), now));
        }
        self.read.insert(path.to_path_buf());
        if let Some((old, matcher)) = self.cache.ignores.get(path)
            && *old == now
        {
            return matcher.clone();
        }
        let matcher = now.and_then(|_| {
            let (matcher, _) = Gitignore::new(path);
            (!matcher.is_empty()).then(|| Arc::new(matcher))
        });
        self.cache
            .ignores
            .insert(path.to_path_buf(), (now, matcher.clone()));
        matcher
    }
}

/// Device and inode of the secret files: each secret path that is a file, and the files
/// inside each secret directory, at any depth (at most [`MAX_SECRET_INODES`]).
fn secret_inodes(search: &mut Search<'_>, secrets: &[PathBuf]) -> HashMap<u64, Vec<u64>> {
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
        let Some((dev, entries)) = search.list(&dir, false) else {
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
/// real paths) do not name, by `names` (see [`super::SecretList::names`]).
pub(super) fn find(
    secrets: &[PathBuf],
    names: &[String],
    dirs: &[PathBuf],
    trees: &[PathBuf],
) -> Found {
    static CACHE: Mutex<Option<Cache>> = Mutex::new(None);
    let mut guard = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    let cache = guard.get_or_insert_with(Cache::default);
    if cache.names != names {
        *cache = Cache {
            names: names.to_vec(),
            ..Cache::default()
        };
    }
    let mut search = Search {
        cache,
        read: HashSet::new(),
        stamps: Vec::new(),
    };
    let inodes = secret_inodes(&mut search, secrets);
    let mut found = Vec::new();
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
        let exact = dirs.contains(dir);
        scan_dir(&mut search, &inodes, dir, exact, &mut found);
    }
    for root in trees {
        scan_tree(&mut search, &inodes, root, &mut found);
    }
    let Search {
        cache,
        read,
        stamps,
    } = search;
    cache.listings.retain(|dir, _| read.contains(dir));
    cache.ignores.retain(|path, _| read.contains(path));
    found.sort();
    found.dedup();
    Found {
        secrets: found,
        stamps,
    }
}

/// Adds the secret entries of `dir` to `found`; returns its other directories (not
/// symlinks: a tree is not left through one).
fn scan_dir(
    search: &mut Search<'_>,
    inodes: &HashMap<u64, Vec<u64>>,
    dir: &Path,
    exact: bool,
    found: &mut Vec<PathBuf>,
) -> Vec<PathBuf> {
    let Some((_, entries)) = search.list(dir, exact) else {
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

/// Scans every directory of the tree at `root`, breadth first, leaving out `.git` and
/// the directories ignored by the `.gitignore` files met on the way and by
/// `.git/info/exclude`, up to [`MAX_SCANNED_DIRS`] directories (a warning says when a
/// tree is larger).
fn scan_tree(
    search: &mut Search<'_>,
    inodes: &HashMap<u64, Vec<u64>>,
    root: &Path,
    found: &mut Vec<PathBuf>,
) {
    let mut queue: VecDeque<(PathBuf, Vec<Arc<Gitignore>>)> = VecDeque::new();
    let base: Vec<Arc<Gitignore>> = search
        .ignore_file(&root.join(".git/info/exclude"))
        .into_iter()
        .collect();
    queue.push_back((root.to_path_buf(), base));
    let mut scanned = 0usize;
    while let Some((dir, mut ignores)) = queue.pop_front() {
        if scanned == MAX_SCANNED_DIRS {
            warn_large_tree_once(root);
            break;
        }
        scanned += 1;
        ignores.extend(search.ignore_file(&dir.join(".gitignore")));
        let mut subdirs = scan_dir(search, inodes, &dir, true, found);
        subdirs.retain(|sub| {
            sub.file_name().is_some_and(|n| n != ".git")
                && ignores
                    .iter()
                    .rev()
                    .find_map(|m| match m.matched(sub, true) {
                        ignore::Match::Ignore(_) => Some(true),
                        ignore::Match::Whitelist(_) => Some(false),
                        ignore::Match::None => None,
                    })
                    != Some(true)
        });
        subdirs.sort();
        for sub in subdirs {
            queue.push_back((sub, ignores.clone()));
        }
    }
}

fn warn_large_tree_once(root: &Path) {
    static WARNED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
    let mut warned = WARNED.lock().unwrap_or_else(PoisonError::into_inner);
    if warned.iter().any(|w| w == root) {
        return;
    }
    warned.push(root.to_path_buf());
    tracing::warn!(
        root = %root.display(),
        limit = MAX_SCANNED_DIRS,
        "the sandbox hides secrets by name in the first {MAX_SCANNED_DIRS} directories of this tree only; deeper ones are left to the classifier"
    );
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
            let mut found = find(secrets, &names, &[], std::slice::from_ref(&ws));
            found.secrets.retain(|p| p.starts_with(&base));
            found
        };
        let found = find(&secrets);
        assert_eq!(found.secrets, [ws.join("a/b/c/.env"), ws.join("a/b/notes")]);
        assert!(found.stamps.iter().any(|(p, _)| *p == ws.join("a/b/c")));
        assert!(
            !found
                .stamps
                .iter()
                .any(|(p, _)| p.starts_with(ws.join("target")))
        );
        // Again, from the listings kept, and after a change in one directory.
        assert_eq!(find(&secrets).secrets, found.secrets);
        std::fs::write(ws.join("a/b/c/later.pem"), "").unwrap();
        assert_eq!(
            find(&secrets).secrets,
            [
                ws.join("a/b/c/.env"),
                ws.join("a/b/c/later.pem"),
                ws.join("a/b/notes")
            ]
        );
        std::fs::remove_dir_all(&base).unwrap();
    }
}
