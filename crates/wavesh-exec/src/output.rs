//! A finished foreground command's output file.
//!
//! The file holds every byte the command wrote, exactly (OUT-6). The caller reads as much
//! as it needs — the whole file when it is small, a head and a tail when it is not, so
//! memory stays flat whatever the size — and then either keeps the file (its path is
//! shown to the model) or lets it go: an `OutputFile` that is dropped without
//! [`OutputFile::keep`] removes the file (BG-2), whatever happened in between.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The output file of a finished foreground command; removed on drop unless kept.
#[derive(Debug)]
pub struct OutputFile {
    path: PathBuf,
    keep: bool,
}

impl OutputFile {
    pub(crate) fn new(path: PathBuf) -> OutputFile {
        OutputFile { path, keep: false }
    }

    /// Where the output is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The number of bytes written.
    pub fn len(&self) -> io::Result<u64> {
        Ok(std::fs::metadata(&self.path)?.len())
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> io::Result<bool> {
        Ok(self.len()? == 0)
    }

    /// Up to `max` bytes from the start.
    pub fn read_head(&self, max: u64) -> io::Result<Vec<u8>> {
        Self::read_head_of(&self.path, max)
    }

    /// Up to `max` bytes from the end.
    pub fn read_tail(&self, max: u64) -> io::Result<Vec<u8>> {
        Self::read_tail_of(&self.path, max)
    }

    /// Up to `max` bytes from the start of any file (a live task's output, say).
    pub fn read_head_of(path: &Path, max: u64) -> io::Result<Vec<u8>> {
        let mut bytes = Vec::new();
        File::open(path)?.take(max).read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    /// Up to `max` bytes from the end of any file.
    pub fn read_tail_of(path: &Path, max: u64) -> io::Result<Vec<u8>> {
        let mut file = File::open(path)?;
        let len = file.metadata()?.len();
        file.seek(SeekFrom::Start(len.saturating_sub(max)))?;
        let mut bytes = Vec::new();
        file.take(max).read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    /// Keeps the file on disk (it is referenced from the model text) and returns its path.
    pub fn keep(mut self) -> PathBuf {
        self.keep = true;
        std::mem::take(&mut self.path)
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if !self.keep {
            remove_quietly(&self.path);
        }
    }
}

pub(crate) fn remove_quietly(path: &Path) {
    if let Err(error) = std::fs::remove_file(path)
        && error.kind() != io::ErrorKind::NotFound
    {
        tracing::warn!(path = %path.display(), %error, "could not remove a private file");
    }
}

/// Removes a private directory and everything in it, logging a failure.
pub(crate) fn remove_dir_quietly(path: &Path) {
    if let Err(error) = std::fs::remove_dir_all(path)
        && error.kind() != io::ErrorKind::NotFound
    {
        tracing::warn!(path = %path.display(), %error, "could not remove a private directory");
    }
}
