//! Private files for command output and cwd read-back.
//!
//! Everything lives under `<tmp>/wavesh-<uid>/<session>/`: both directories are 0700 and
//! every file is created 0600 with `O_EXCL` under an unpredictable name, so another user on
//! the machine can neither read a command's output nor plant a file or symlink where
//! wavesh will write.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// Errors creating the private directory or a file in it; each names the path.
#[derive(Debug, thiserror::Error)]
pub enum PrivateDirError {
    /// A directory could not be created or inspected.
    #[error("cannot create private directory {path}: {source}")]
    Create {
        /// The directory.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// The per-user directory exists but is not safe to use.
    #[error("refusing to use {path}: {why}")]
    Unsafe {
        /// The directory.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// A file could not be created.
    #[error("cannot create file in {dir}: {source}")]
    File {
        /// The directory.
        dir: PathBuf,
        /// The cause.
        source: io::Error,
    },
}

/// A per-session private directory.
#[derive(Debug)]
pub struct PrivateDir {
    path: PathBuf,
    /// A fresh per-user directory made because the usual one could not be used: removed
    /// with the session directory when empty.
    fallback_parent: Option<PathBuf>,
}

impl PrivateDir {
    /// Creates a fresh session directory under `base`; when `None`, under
    /// `$XDG_RUNTIME_DIR/wavesh` if the runtime directory is this user's and private, else
    /// under the system temporary directory's `wavesh-<uid>`.
    ///
    /// PROC-4: start-up never fails because of what someone else put in the way. When the
    /// per-user directory is unsafe (another owner, a symlink or file in its place), a
    /// fresh directory with a random name is made beside it and used instead, with one
    /// warning in the log.
    pub fn create(base: Option<&Path>) -> Result<PrivateDir, PrivateDirError> {
        let user_dir = match base {
            Some(base) => base.join(format!("wavesh-{}", user_tag())),
            None => runtime_dir().map_or_else(
                || std::env::temp_dir().join(format!("wavesh-{}", user_tag())),
                |runtime| runtime.join("wavesh"),
            ),
        };
        let (user_dir, fallback_parent) = match ensure_user_dir(&user_dir) {
            Ok(()) => (user_dir, None),
            Err(PrivateDirError::Unsafe { path, why }) => {
                let fresh = fresh_beside(&path)?;
                tracing::warn!(
                    refused = %path.display(),
                    why,
                    using = %fresh.display(),
                    "the private directory was unsafe; using a fresh one"
                );
                (fresh.clone(), Some(fresh))
            }
            Err(error) => return Err(error),
        };
        for _ in 0..16 {
            let path = user_dir.join(random_name(12));
            match create_dir_0700(&path) {
                Ok(()) => {
                    return Ok(PrivateDir {
                        path,
                        fallback_parent,
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(source) => return Err(PrivateDirError::Create { path, source }),
            }
        }
        Err(PrivateDirError::Create {
            path: user_dir,
            source: io::Error::new(io::ErrorKind::AlreadyExists, "no free name after 16 tries"),
        })
    }

    /// The directory's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Removes every file and then the directory itself (and a fallback per-user
    /// directory made for it, when empty): the end of a session, as [`Self::remove_files`]
    /// says. Not left to `Drop`: a process that exits with the session still referenced
    /// (the MCP server leaves without waiting for a pending read of its input) would
    /// leave the empty directory behind. Commands of the session after this fail to
    /// make their files.
    pub fn remove(&self) {
        self.remove_files();
        self.remove_unless_given_out();
    }

    /// Removes every file in the directory (the directory itself goes with
    /// [`Self::remove`], or when this is dropped): the end of a session whose commands
    /// have all ended, and whose output paths nobody can use any more (an MCP session
    /// that was deleted or timed out, a server that exits).
    pub fn remove_files(&self) {
        let Ok(entries) = std::fs::read_dir(&self.path) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let removed = match entry.file_type() {
                Ok(kind) if kind.is_dir() => std::fs::remove_dir_all(&path),
                _ => std::fs::remove_file(&path),
            };
            if let Err(error) = removed
                && error.kind() != io::ErrorKind::NotFound
            {
                tracing::warn!(path = %path.display(), %error, "a session file could not be removed");
            }
        }
    }

    /// Fails, naming the directory, when its file system has no free block left: a
    /// command started there could not write a byte of its output, and its own error
    /// message would be lost with the rest.
    pub fn ensure_room(&self) -> Result<(), PrivateDirError> {
        #[cfg(unix)]
        if let Ok(stats) = rustix::fs::statvfs(&self.path)
            && stats.f_bavail == 0
        {
            return Err(PrivateDirError::File {
                dir: self.path.clone(),
                source: io::Error::from_raw_os_error(libc::ENOSPC),
            });
        }
        Ok(())
    }

    /// Creates a new empty file `<prefix>-<random><suffix>`, 0600, opened read-write.
    pub fn create_file(
        &self,
        prefix: &str,
        suffix: &str,
    ) -> Result<(File, PathBuf), PrivateDirError> {
        loop {
            let path = self
                .path
                .join(format!("{prefix}-{}{suffix}", random_name(10)));
            let mut options = OpenOptions::new();
            options.read(true).write(true).create_new(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                options.mode(0o600);
            }
            match options.open(&path) {
                Ok(file) => return Ok((file, path)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(source) => {
                    return Err(PrivateDirError::File {
                        dir: self.path.clone(),
                        source,
                    });
                }
            }
        }
    }
}

impl Drop for PrivateDir {
    /// Removes the session directory, scratch directories and all, if no file is left at
    /// its top. Persisted outputs and the output files of tasks that outlive the session
    /// keep it (their paths were given out).
    fn drop(&mut self) {
        self.remove_unless_given_out();
    }
}

impl PrivateDir {
    /// The directory, scratch directories and all, unless a file at its top was given
    /// out; and the fallback per-user directory, when empty.
    fn remove_unless_given_out(&self) {
        // With no file left at its top (no persisted output, no output file of a task
        // that outlives the session), nothing in it was given out: its scratch
        // directories (the session's TMPDIR and `/tmp` view) go with it. A task left
        // running keeps its output file there, and so keeps them all.
        let gave_out = std::fs::read_dir(&self.path).map_or(true, |entries| {
            entries
                .flatten()
                .any(|entry| entry.file_type().map_or(true, |t| !t.is_dir()))
        });
        if !gave_out
            && let Err(error) = std::fs::remove_dir_all(&self.path)
            && error.kind() != io::ErrorKind::NotFound
        {
            tracing::debug!(path = %self.path.display(), %error, "private directory kept");
        }
        if let Err(error) = std::fs::remove_dir(&self.path)
            && error.kind() != io::ErrorKind::NotFound
            && error.kind() != io::ErrorKind::DirectoryNotEmpty
        {
            tracing::debug!(path = %self.path.display(), %error, "private directory kept");
        }
        if let Some(parent) = &self.fallback_parent {
            let _ = std::fs::remove_dir(parent);
        }
    }
}

/// `$XDG_RUNTIME_DIR` when it is an absolute directory of this user's that nobody else
/// can enter.
fn runtime_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os("XDG_RUNTIME_DIR")?);
    if !dir.is_absolute() {
        return None;
    }
    let meta = std::fs::symlink_metadata(&dir).ok()?;
    if !meta.is_dir() {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.uid() != rustix::process::geteuid().as_raw() || meta.mode() & 0o077 != 0 {
            return None;
        }
    }
    Some(dir)
}

/// A new 0700 directory `<path>-<random>` beside `path`; its random name cannot have been
/// planted in advance, and creating it fails rather than follow anything in the way.
fn fresh_beside(path: &Path) -> Result<PathBuf, PrivateDirError> {
    let mut last = None;
    for _ in 0..16 {
        let mut name = path.as_os_str().to_owned();
        name.push(format!("-{}", random_name(12)));
        let fresh = PathBuf::from(name);
        match create_dir_0700(&fresh) {
            Ok(()) => return Ok(fresh),
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => last = Some(error),
            Err(source) => {
                return Err(PrivateDirError::Create {
                    path: fresh,
                    source,
                });
            }
        }
    }
    Err(PrivateDirError::Create {
        path: path.into(),
        source: last.unwrap_or_else(|| io::Error::other("no free name after 16 tries")),
    })
}

#[cfg(unix)]
fn user_tag() -> String {
    rustix::process::geteuid().as_raw().to_string()
}

#[cfg(not(unix))]
fn user_tag() -> String {
    std::env::var("USERNAME").unwrap_or_else(|_| "user".into())
}

/// The per-user directory must be a real directory (not a symlink), owned by us and not
/// open to others. A directory we own with loose permissions is tightened.
fn ensure_user_dir(path: &Path) -> Result<(), PrivateDirError> {
    match create_dir_0700(path) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(source) => {
            return Err(PrivateDirError::Create {
                path: path.into(),
                source,
            });
        }
    }
    let meta = std::fs::symlink_metadata(path).map_err(|source| PrivateDirError::Create {
        path: path.into(),
        source,
    })?;
    if !meta.is_dir() {
        return Err(PrivateDirError::Unsafe {
            path: path.into(),
            why: "it is not a directory (a symlink or file is in the way)".into(),
        });
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        if meta.uid() != rustix::process::geteuid().as_raw() {
            return Err(PrivateDirError::Unsafe {
                path: path.into(),
                why: format!("it is owned by uid {}, not by this user", meta.uid()),
            });
        }
        if meta.mode() & 0o077 != 0 {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700)).map_err(
                |source| PrivateDirError::Create {
                    path: path.into(),
                    source,
                },
            )?;
        }
    }
    Ok(())
}

#[cfg(unix)]
pub(crate) fn create_dir_0700(path: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().mode(0o700).create(path)
}

/// Windows: the directory inherits the user profile's ACL (private to the user).
#[cfg(not(unix))]
pub(crate) fn create_dir_0700(path: &Path) -> io::Result<()> {
    std::fs::create_dir(path)
}

/// `len` characters from `[a-z0-9]`, from the operating system's random source.
pub(crate) fn random_name(len: usize) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut bytes = vec![0u8; len];
    if getrandom::fill(&mut bytes).is_err() {
        // The OS source failing is near impossible; mixing the clock and the pid still
        // gives distinct names, and O_EXCL keeps creation safe either way.
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
            ^ u128::from(std::process::id());
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (seed >> ((i * 5) % 120)) as u8;
        }
    }
    bytes
        .iter()
        .map(|b| char::from(ALPHABET[usize::from(*b) % ALPHABET.len()]))
        .collect()
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn private_directories_are_0700_and_files_0600() {
        let base = std::env::temp_dir().join(format!("wavesh-pd-test-{}", random_name(6)));
        std::fs::create_dir(&base).unwrap();
        let dir = PrivateDir::create(Some(&base)).unwrap();
        assert_eq!(mode(dir.path()), 0o700);
        assert_eq!(mode(dir.path().parent().unwrap()), 0o700);
        let (_file, path) = dir.create_file("out", ".log").unwrap();
        assert_eq!(mode(&path), 0o600);
        let (_, other) = dir.create_file("out", ".log").unwrap();
        assert_ne!(path, other);
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn an_empty_session_directory_is_removed_on_drop_a_used_one_kept() {
        let base = std::env::temp_dir().join(format!("wavesh-pd-test-{}", random_name(6)));
        std::fs::create_dir(&base).unwrap();
        let empty = PrivateDir::create(Some(&base)).unwrap();
        let empty_path = empty.path().to_path_buf();
        drop(empty);
        assert!(!empty_path.exists());
        let used = PrivateDir::create(Some(&base)).unwrap();
        let (_, kept) = used.create_file("out", ".log").unwrap();
        drop(used);
        assert!(kept.exists());
        std::fs::remove_dir_all(&base).unwrap();
    }

    /// PROC-4: whatever is planted where the per-user directory goes (a symlink, a file,
    /// a directory of another owner), a fresh private directory is used instead, the
    /// planted thing is not followed or touched, and the fresh one goes with the session.
    #[test]
    fn proc_4_a_planted_user_directory_never_blocks_start_up() {
        let base = std::env::temp_dir().join(format!("wavesh-pd-test-{}", random_name(6)));
        std::fs::create_dir(&base).unwrap();
        let planted = base.join(format!("wavesh-{}", user_tag()));
        let elsewhere = base.join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        let plant_symlink = |_: &Path| std::os::unix::fs::symlink(&elsewhere, &planted).unwrap();
        let plant_file = |_: &Path| std::fs::write(&planted, "x").unwrap();
        let plant_foreign = |_: &Path| {
            create_dir_0700(&planted).unwrap();
            // Another owner (nobody), where this test may chown; checked below.
            let _ = std::process::Command::new("chown")
                .args(["65534", &planted.display().to_string()])
                .status();
        };
        for (name, plant) in [
            ("symlink", &plant_symlink as &dyn Fn(&Path)),
            ("file", &plant_file),
            ("foreign", &plant_foreign),
        ] {
            plant(&planted);
            if name == "foreign" {
                use std::os::unix::fs::MetadataExt;
                if std::fs::metadata(&planted).unwrap().uid() == rustix::process::geteuid().as_raw()
                {
                    wavesh_testkit::missing_prerequisite(
                        "root, to plant a directory of another owner (chown)",
                        "run the tests as root",
                    );
                    break;
                }
            }
            let dir = PrivateDir::create(Some(&base)).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(
                !dir.path().starts_with(&planted),
                "{name}: {:?}",
                dir.path()
            );
            assert!(dir.path().starts_with(&base), "{name}: {:?}", dir.path());
            assert_eq!(mode(dir.path()), 0o700, "{name}");
            assert_eq!(mode(dir.path().parent().unwrap()), 0o700, "{name}");
            assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0, "{name}");
            let parent = dir.path().parent().unwrap().to_path_buf();
            drop(dir);
            assert!(
                !parent.exists(),
                "{name}: the fresh directory went with the session"
            );
            if planted.is_dir() && !planted.is_symlink() {
                std::fs::remove_dir(&planted).unwrap();
            } else {
                std::fs::remove_file(&planted).unwrap();
            }
        }
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_loose_user_directory_is_tightened() {
        let base = std::env::temp_dir().join(format!("wavesh-pd-test-{}", random_name(6)));
        let user = base.join(format!("wavesh-{}", user_tag()));
        std::fs::create_dir_all(&user).unwrap();
        std::fs::set_permissions(&user, std::fs::Permissions::from_mode(0o777)).unwrap();
        PrivateDir::create(Some(&base)).unwrap();
        assert_eq!(mode(&user), 0o700);
        std::fs::remove_dir_all(&base).unwrap();
    }
}
