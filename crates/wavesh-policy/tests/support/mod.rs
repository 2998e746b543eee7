//! A throwaway workspace and fake home with marker secrets, removed on drop. Attack
//! tests never touch the real home directory.
#![allow(dead_code, reason = "each test binary uses part of the support module")]
#![allow(
    clippy::unwrap_used,
    reason = "test support: a failed setup fails the test"
)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// A temporary directory holding `home/` and `work/`.
pub struct Scratch {
    pub root: PathBuf,
    pub home: PathBuf,
    pub work: PathBuf,
}

impl Scratch {
    pub fn new(tag: &str) -> Scratch {
        let root = std::env::temp_dir().join(format!(
            "wavesh-policy-{tag}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&root);
        let home = root.join("home");
        let work = root.join("work");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&work).unwrap();
        let scratch = Scratch {
            root: std::fs::canonicalize(&root).unwrap(),
            home: std::fs::canonicalize(&home).unwrap(),
            work: std::fs::canonicalize(&work).unwrap(),
        };
        for (path, text) in [
            (".ssh/id_rsa", "MARKER-SSH"),
            (".aws/credentials", "MARKER-AWS"),
            (".netrc", "MARKER-NETRC"),
            (".bash_history", "MARKER-HISTORY"),
            (".config/gh/hosts.yml", "MARKER-GH"),
        ] {
            scratch.write(&scratch.home.join(path), text);
        }
        scratch
    }

    pub fn write(&self, path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    pub fn file(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.work.join(relative);
        self.write(&path, text);
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}
