//! The read side of a plan: the secrets the search finds, split into the ones Landlock
//! hides and the ones mounts hide, cached against the watch generation and stamps, and
//! the read rules around them.

use super::*;

/// The secrets of a plan as the sandbox found them: the ones Landlock hides, the ones
/// mounts hide, and the directories the search read (stamped before they
/// were read, so that the reads are built again when one of them changes).
pub(super) struct Found {
    landlock: Vec<PathBuf>,
    hidden: Vec<(PathBuf, bool)>,
    stamps: Vec<(PathBuf, Stamp)>,
    /// The watch generation the search started from (see [`crate::sandbox::scan::generation`]).
    generation: u64,
}

/// Secrets Landlock hides (everything, unless it lies inside a writable directory and
/// a mount can hide it instead), and the existing ones to hide with mounts (with
/// whether each is a directory): the secret paths, and what [`crate::sandbox::scan::find`] finds
/// by name and by inode beside them.
/// `watched`: directories whose changes must invalidate the result, watched by the
/// search (or stamped where they cannot be watched).
pub(super) fn split_secrets(plan: &Plan, mounts: bool, watched: &[PathBuf]) -> Found {
    let mut all: Vec<PathBuf> = Vec::new();
    for path in &plan.secret_paths {
        all.push(path.clone());
        if let Ok(real) = std::fs::canonicalize(path)
            && real != *path
        {
            all.push(real);
        }
    }
    // The directory of every session's files is hidden, but holds no credential to link
    // to, and changes with every command: its files are not taken for hardlink checks.
    let private_bases: Vec<PathBuf> = plan
        .readable_dirs
        .iter()
        .filter_map(|own| own.parent().map(Path::to_path_buf))
        .collect();
    let scanned = crate::sandbox::scan::find(
        &all,
        &private_bases,
        &plan.secret_names,
        &plan.scan_dirs,
        &plan.scan_trees,
        watched,
    );
    all.extend(scanned.secrets);
    // What the search did not reach is hidden as a secret is: it fails closed.
    all.extend(scanned.unsearched);
    all.sort();
    all.dedup();
    let mut landlock = Vec::new();
    let mut hidden = Vec::new();
    for path in all {
        // Under a path mounted back through the `/tmp` view, the view's write rule
        // reaches too (SBX-8): only a mount hides there.
        let writable = plan.writable_dirs.iter().any(|d| path.starts_with(d))
            || plan.views.tmp.as_ref().is_some_and(|tmp| tmp.keeps(&path));
        if plan.level == Level::WorkspaceWrite && writable {
            // Landlock would make every new file beside it unreadable, so a mount hides
            // it, or nothing can (reported as a missing guarantee).
            if mounts
                && let Ok(meta) = std::fs::symlink_metadata(&path)
                && !meta.file_type().is_symlink()
            {
                hidden.push((path, meta.is_dir()));
            }
        } else {
            landlock.push(path);
        }
    }
    Found {
        landlock,
        hidden,
        stamps: scanned.stamps,
        generation: scanned.generation,
    }
}

pub(super) type BuildError = (String, io::Error);

/// The read side of a plan: the secrets Landlock hides, the ones mounts hide, and the
/// read-allowed entries around them, opened.
pub(crate) struct Reads {
    /// The secrets Landlock hides.
    pub(super) landlock: Vec<PathBuf>,
    pub(super) hidden: Vec<(PathBuf, bool)>,
    pub(super) allowed: Vec<(OwnedFd, bool)>,
    /// A Landlock ruleset with the read rules of `allowed` already added, one without and
    /// one with network, made ahead for the next command ([`landlock_ruleset`]): adding a
    /// few hundred rules is most of a sandboxed command's cost, and a ruleset can be
    /// entered by one command only once its own rules are in.
    pub(super) spares: std::sync::Mutex<[Option<landlock::RulesetCreated>; 3]>,
}

/// What the reads of a plan depend on.
pub(super) type ReadsKey = (
    Vec<PathBuf>,
    Vec<String>,
    Vec<PathBuf>,
    Vec<PathBuf>,
    Vec<PathBuf>,
    Level,
    bool,
);

/// The last reads built, with what they depend on: the stamps of the directories they
/// were listed from, and the watch generation of the tree directories.
pub(super) type CachedReads = (
    ReadsKey,
    (Vec<(PathBuf, Stamp)>, u64),
    std::sync::Arc<Reads>,
);

/// The reads of `plan`, built again only when a directory they were listed from
/// changed: building them lists `/`, the directories on the way to each secret and the
/// scanned directories, and opens a few hundred paths, which would cost more than a
/// command's whole budget if done every time. A directory's mtime changes with every
/// entry added, removed or renamed in it, so a new secret or a planted hardlink is
/// seen by the next command.
pub(super) fn cached_reads(plan: &Plan, mounts: bool) -> std::sync::Arc<Reads> {
    use std::sync::{Arc, Mutex, PoisonError};
    // One entry per kind of plan a session uses: a session mixes read-only commands with
    // commands at its own level, and a single entry would be rebuilt at every switch.
    const ENTRIES: usize = 4;
    static CACHE: Mutex<Vec<CachedReads>> = Mutex::new(Vec::new());
    // Only the writable directories that can hold something `split_secrets` looks at:
    // a command's own fresh TMPDIR holds none, and keying on it would miss every time.
    let relevant_writable: Vec<PathBuf> = plan
        .writable_dirs
        .iter()
        .filter(|dir| {
            plan.secret_paths.iter().any(|p| p.starts_with(dir))
                || plan
                    .scan_dirs
                    .iter()
                    .any(|s| s.starts_with(dir) || dir.parent() == Some(s.as_path()))
                || plan
                    .scan_trees
                    .iter()
                    .any(|t| t.starts_with(dir) || dir.starts_with(t))
        })
        .cloned()
        // Under the paths the `/tmp` view mounts back, secrets are hidden by mounts.
        .chain(
            plan.views
                .tmp
                .iter()
                .flat_map(|tmp| tmp.keep.iter().cloned()),
        )
        .collect();
    let key: ReadsKey = (
        plan.secret_paths.clone(),
        plan.secret_names.clone(),
        plan.scan_dirs.clone(),
        plan.scan_trees.clone(),
        relevant_writable,
        plan.level,
        mounts,
    );
    let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(at) = cache
        .iter()
        .position(|(cached_key, _, _)| *cached_key == key)
    {
        let (_, (stamps, generation), reads) = &cache[at];
        if *generation == crate::sandbox::scan::generation()
            && stamps.iter().all(|(dir, old)| stamp(dir) == *old)
        {
            return Arc::clone(reads);
        }
        cache.remove(at);
    }
    // Every directory listed below, and every one on the way to them (a secret that is
    // a symlink may be pointed elsewhere), watched (or, where it cannot be, stamped)
    // before listing: a change during the listing is seen next time.
    let mut dirs: Vec<PathBuf> = plan
        .secret_paths
        .iter()
        .cloned()
        .chain(
            plan.secret_paths
                .iter()
                .filter_map(|p| std::fs::canonicalize(p).ok()),
        )
        .chain(plan.scan_dirs.iter().cloned())
        .flat_map(|p| p.ancestors().map(Path::to_path_buf).collect::<Vec<_>>())
        .collect();
    dirs.sort();
    dirs.dedup();
    let Found {
        landlock,
        hidden,
        stamps,
        generation,
    } = split_secrets(plan, mounts, &dirs);
    let allowed: Vec<(OwnedFd, bool)> = read_allowed(&landlock)
        .iter()
        .filter_map(|path| open_path(path))
        .collect();
    let reads = Arc::new(Reads {
        landlock,
        hidden,
        allowed,
        spares: Mutex::new([None, None, None]),
    });
    if cache.len() == ENTRIES {
        cache.remove(0);
    }
    cache.push((key, (stamps, generation), Arc::clone(&reads)));
    reads
}

/// The paths that get a read rule: every entry of `/`, descending into the directories
/// on the way to a secret and leaving the secrets out.
pub(crate) fn read_allowed(secrets: &[PathBuf]) -> Vec<PathBuf> {
    let secrets: HashSet<&Path> = secrets.iter().map(PathBuf::as_path).collect();
    let ancestors: HashSet<&Path> = secrets.iter().flat_map(|s| s.ancestors().skip(1)).collect();
    let mut allowed = Vec::new();
    if !ancestors.contains(Path::new("/")) {
        allowed.push(PathBuf::from("/"));
        return allowed;
    }
    let mut stack = vec![PathBuf::from("/")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = dir.join(entry.file_name());
            if secrets.contains(path.as_path()) {
                continue;
            }
            let is_real_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            if ancestors.contains(path.as_path()) && is_real_dir {
                stack.push(path);
            } else {
                allowed.push(path);
            }
        }
    }
    allowed
}
