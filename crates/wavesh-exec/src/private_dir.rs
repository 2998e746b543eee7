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
}

impl PrivateDir {
    /// Creates a fresh session directory under `base` (the system temporary directory
    /// when `None`).
    pub fn create(base: Option<&Path>) -> Result<PrivateDir, PrivateDirError> {
        let base = base.map_or_else(std::env::temp_dir, Path::to_path_buf);
        let user_dir = base.join(format!("wavesh-{}", user_tag()));
        ensure_user_dir(&user_dir)?;
        for _ in 0..16 {
            let path = user_dir.join(random_name(12));
            match create_dir_0700(&path) {
                Ok(()) => return Ok(PrivateDir { path }),
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
    /// Removes the session directory if nothing is left in it. Persisted outputs and the
    /// output files of tasks that outlive the session keep it (their paths were given out).
    fn drop(&mut self) {
        if let Err(error) = std::fs::remove_dir(&self.path)
            && error.kind() != io::ErrorKind::NotFound
            && error.kind() != io::ErrorKind::DirectoryNotEmpty
        {
            tracing::debug!(path = %self.path.display(), %error, "private directory kept");
        }
    }
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

    #[test]
    fn a_symlink_in_place_of_the_user_directory_is_refused() {
        let base = std::env::temp_dir().join(format!("wavesh-pd-test-{}", random_name(6)));
        std::fs::create_dir(&base).unwrap();
        let elsewhere = base.join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, base.join(format!("wavesh-{}", user_tag())))
            .unwrap();
        let err = PrivateDir::create(Some(&base)).unwrap_err();
        assert!(err.to_string().contains("not a directory"), "{err}");
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
