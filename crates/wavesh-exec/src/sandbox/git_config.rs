//! Mediated writes to a repository's git directory (SBX-9).
//!
//! At `workspace-write` the top level of the workspace's `.git` directory is an overlay
//! in the command's mount namespace: lower = the real directory, upper = a directory of
//! the command's own. Its subdirectories (objects, refs, logs, hooks, info, ...) are
//! mounted back over the overlay as they are, so git writes objects and refs to the
//! real repository at once, and hooks and `info/` stay read-only. What git writes at
//! the top level (`config`, `index`, `HEAD`, `packed-refs`, `FETCH_HEAD`, ...) lands in
//! the upper directory: git's lock-and-rename works there, which a copy bound over
//! `.git/config` does not allow (a rename onto a mount point fails with EBUSY).
//!
//! When the command ends ([`after_exit`]), the top-level files come back to the real
//! directory, and `config` is judged by git's own reader: `git config --file COPY
//! --list -z --no-includes` against the original. Changed keys that run no program
//! ([`runs_no_program`], an allow-list) are applied to the real file one by one with
//! `git config --file REAL`, so a change made meanwhile to another key is kept; every
//! other changed key is dropped and named in the result (SBX-4). `config.worktree`,
//! `commondir` and `gitdir` written by the command never come back (SBX-6).

use std::path::{Path, PathBuf};

/// One repository's git directory as an overlay for one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitView {
    /// The real git directory (`ROOT/.git`): the lower layer and the mount point.
    pub git_dir: PathBuf,
    /// The command's upper layer.
    pub upper: PathBuf,
    /// overlayfs's work directory.
    pub work: PathBuf,
    /// The real `config` as it was when the command started.
    pub original: PathBuf,
    /// The subdirectories mounted back over the overlay.
    pub keep: Vec<PathBuf>,
}

/// Files of the top level that never come back from a command (SBX-6, SBX-9): the
/// config is mediated, the others would point git elsewhere.
#[cfg(unix)]
const NEVER_BACK: &[&str] = &["config", "config.worktree", "commondir", "gitdir"];

/// Makes the view of `root`'s git directory for one command in `dir` (a fresh
/// directory of the session's): `None` when `root/.git` is not a directory with a
/// `config` (a linked worktree's `.git` file, no repository).
pub fn git_view(root: &Path, dir: &Path) -> std::io::Result<Option<GitView>> {
    let git_dir = root.join(".git");
    let is_dir = |p: &Path| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir());
    let config = git_dir.join("config");
    if !is_dir(&git_dir) || !std::fs::symlink_metadata(&config).is_ok_and(|m| m.is_file()) {
        return Ok(None);
    }
    let (upper, work, original) = (dir.join("upper"), dir.join("work"), dir.join("original"));
    std::fs::create_dir_all(&upper)?;
    std::fs::create_dir_all(&work)?;
    std::fs::copy(&config, &original)?;
    let mut keep = Vec::new();
    for entry in std::fs::read_dir(&git_dir)?.flatten() {
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            keep.push(entry.path());
        }
    }
    keep.sort();
    Ok(Some(GitView {
        git_dir,
        upper,
        work,
        original,
        keep,
    }))
}

/// Whether a config key (as `git config --list` prints it: section and name in lower
/// case) can be set from the sandbox: it makes git run no program and read no other
/// file. An allow-list: a key git adds later is refused until it is judged.
pub fn runs_no_program(key: &str) -> bool {
    let Some((section, rest)) = key.split_once('.') else {
        return false;
    };
    let (subsection, name) = match rest.rsplit_once('.') {
        Some((sub, name)) => (Some(sub), name),
        None => (None, rest),
    };
    let any = |names: &[&str]| names.contains(&name);
    match (section, subsection) {
        ("user" | "author" | "committer", None) => any(&["name", "email"]),
        ("remote", Some(_)) => any(&[
            "url",
            "pushurl",
            "fetch",
            "push",
            "mirror",
            "tagopt",
            "prune",
            "prunetags",
            "skipdefaultupdate",
            "skipfetchall",
        ]),
        ("branch", Some(_)) => any(&["remote", "pushremote", "merge", "rebase", "description"]),
        ("init", None) => any(&["defaultbranch"]),
        ("core", None) => any(&[
            "autocrlf",
            "eol",
            "safecrlf",
            "filemode",
            "ignorecase",
            "symlinks",
            "logallrefupdates",
            "quotepath",
            "precomposeunicode",
            "whitespace",
            "abbrev",
        ]),
        ("pull", None) => any(&["rebase", "ff"]),
        ("push", None) => any(&["default", "autosetupremote", "followtags"]),
        ("fetch", None) => any(&["prune", "prunetags"]),
        ("merge", None) => any(&["ff", "conflictstyle"]),
        ("rebase", None) => any(&["autosquash", "autostash", "updaterefs"]),
        ("status", None) => any(&["showuntrackedfiles", "short", "branch"]),
        ("log", None) => any(&["date", "decorate", "abbrevcommit", "follow"]),
        ("diff", None) => any(&["renames", "algorithm", "mnemonicprefix", "context"]),
        ("color", _) | ("advice", None) => true,
        _ => false,
    }
}

/// The entries of a config file as git reads it (no includes), in order, or git's
/// error.
fn read_config(file: &Path) -> Result<Vec<(String, String)>, String> {
    let output = std::process::Command::new("git")
        .args(["config", "--no-includes", "--list", "-z", "--file"])
        .arg(file)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|error| format!("git could not be run: {error}"))?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).trim().to_owned());
    }
    let text = String::from_utf8_lossy(&output.stdout);
    Ok(text
        .split('\0')
        .filter(|entry| !entry.is_empty())
        .map(|entry| match entry.split_once('\n') {
            Some((key, value)) => (key.to_owned(), value.to_owned()),
            // A key with no `=` (a bare boolean).
            None => (entry.to_owned(), String::new()),
        })
        .collect())
}

/// Every key with its values, in order of first appearance.
fn by_key(entries: &[(String, String)]) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for (key, value) in entries {
        match out.iter_mut().find(|(k, _)| k == key) {
            Some((_, values)) => values.push(value.clone()),
            None => out.push((key.clone(), vec![value.clone()])),
        }
    }
    out
}

fn git_config(real: &Path, args: &[&str]) -> std::io::Result<std::process::ExitStatus> {
    std::process::Command::new("git")
        .args(["config", "--file"])
        .arg(real)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
}

/// Judges the config the command wrote (`copy`) against `original` and applies the
/// allowed changes to `real`; returns the note for the model, if any.
pub fn mediate(original: &Path, copy: &Path, real: &Path) -> Option<String> {
    let copy_meta = std::fs::symlink_metadata(copy).ok()?;
    if !copy_meta.is_file() {
        return Some(
            "The sandbox did not apply removing or replacing .git/config (SBX-9).".to_owned(),
        );
    }
    let before = match read_config(original) {
        Ok(entries) => by_key(&entries),
        Err(error) => {
            return Some(format!(
                "The sandbox applied no change to .git/config: its original could not be read ({error})."
            ));
        }
    };
    let after = match read_config(copy) {
        Ok(entries) => by_key(&entries),
        Err(error) => {
            return Some(format!(
                "The sandbox applied no change to .git/config: the command left it malformed ({error}); the real file is unchanged."
            ));
        }
    };
    let mut changed: Vec<(&str, &[String])> = Vec::new();
    for (key, values) in &after {
        if before.iter().find(|(k, _)| k == key).map(|(_, v)| v) != Some(values) {
            changed.push((key, values));
        }
    }
    for (key, _) in &before {
        if !after.iter().any(|(k, _)| k == key) {
            changed.push((key, &[]));
        }
    }
    let (mut applied, mut refused, mut failed) = (Vec::new(), Vec::new(), Vec::new());
    for (key, values) in changed {
        if !runs_no_program(key) {
            refused.push(key.to_owned());
            continue;
        }
        // Key by key: a change made meanwhile to another key of the real file stays.
        let unset = git_config(real, &["--unset-all", key]);
        let mut ok = unset.is_ok_and(|s| s.success() || s.code() == Some(5));
        for value in values {
            ok &= git_config(real, &["--add", key, value]).is_ok_and(|s| s.success());
        }
        if ok {
            applied.push(key.to_owned());
        } else {
            failed.push(key.to_owned());
        }
    }
    let mut note = Vec::new();
    if !applied.is_empty() {
        note.push(format!("Applied to .git/config: {}.", applied.join(", ")));
    }
    if !refused.is_empty() {
        note.push(format!(
            "The sandbox refused: setting {} in .git/config (git runs programs or reads files from such keys; SBX-9). If the command really needs this, call Bash again with dangerouslyDisableSandbox: true (the user is asked to approve it).",
            refused.join(", ")
        ));
    }
    if !failed.is_empty() {
        note.push(format!(
            "Could not apply to .git/config: {}.",
            failed.join(", ")
        ));
    }
    (!note.is_empty()).then(|| note.join("\n"))
}

/// Brings what the command wrote at the top level of the git directory back to the real
/// one, mediates its config, and removes the command's layers. Returns the notes for the
/// model.
pub fn after_exit(view: &GitView) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(note) = mediate(
        &view.original,
        &view.upper.join("config"),
        &view.git_dir.join("config"),
    ) {
        notes.push(note);
    }
    if let Err(error) = merge_back(&view.upper, &view.git_dir, true) {
        tracing::warn!(%error, git_dir = %view.git_dir.display(), "git state written in the sandbox could not all be brought back");
        notes.push(format!(
            "Part of the git state the command wrote could not be brought back to {}: {error}.",
            view.git_dir.display()
        ));
    }
    if let Some(dir) = view.upper.parent() {
        remove_layers(dir);
    }
    notes
}

/// Removes a command's layer directory (Linux: overlayfs's mode-000 work directory
/// too).
fn remove_layers(dir: &Path) {
    #[cfg(target_os = "linux")]
    super::view_mounts::remove_layers(dir);
    #[cfg(not(target_os = "linux"))]
    let _ = std::fs::remove_dir_all(dir);
}

/// Copies `upper` (an overlay's upper layer) over `real`: files replace, whiteouts
/// remove, directories merge. At the top level (`top`), [`NEVER_BACK`] and lock files
/// stay behind.
#[cfg(unix)]
fn merge_back(upper: &Path, real: &Path, top: bool) -> std::io::Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let mut first_error = None;
    for entry in std::fs::read_dir(upper)?.flatten() {
        let name = entry.file_name();
        let text = name.to_string_lossy();
        if top && (NEVER_BACK.contains(&&*text) || text.ends_with(".lock")) {
            continue;
        }
        let (from, to) = (entry.path(), real.join(&name));
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let result = if kind.is_char_device() {
            // A whiteout: the command removed it.
            match std::fs::symlink_metadata(&to) {
                Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(&to),
                Ok(_) => std::fs::remove_file(&to),
                Err(_) => Ok(()),
            }
        } else if kind.is_dir() {
            std::fs::create_dir_all(&to).and_then(|()| merge_back(&from, &to, false))
        } else if kind.is_symlink() {
            std::fs::read_link(&from).and_then(|target| {
                let _ = std::fs::remove_file(&to);
                std::os::unix::fs::symlink(target, &to)
            })
        } else {
            replace_file(&from, &to)
        };
        if let Err(error) = result {
            first_error.get_or_insert(std::io::Error::new(
                error.kind(),
                format!("{}: {error}", to.display()),
            ));
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// Elsewhere no overlay ever made an upper layer, so there is nothing to merge.
#[cfg(not(unix))]
fn merge_back(_upper: &Path, _real: &Path, _top: bool) -> std::io::Result<()> {
    Ok(())
}

/// Replaces `to` by a copy of `from` in one rename, so git never reads half a file.
#[cfg(unix)]
fn replace_file(from: &Path, to: &Path) -> std::io::Result<()> {
    let name = to
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = to.with_file_name(format!(
        ".{name}.wavesh-{}",
        crate::private_dir::random_name(6)
    ));
    std::fs::copy(from, &temp)?;
    std::fs::rename(&temp, to).inspect_err(|_| {
        let _ = std::fs::remove_file(&temp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sbx_9_keys_that_run_no_program_are_allowed() {
        for key in [
            "user.email",
            "user.name",
            "remote.origin.url",
            "remote.Origin.fetch",
            "remote.x.pushurl",
            "branch.main.remote",
            "branch.feature/x.merge",
            "init.defaultbranch",
            "core.autocrlf",
            "pull.rebase",
            "color.ui",
            "color.diff.meta",
        ] {
            assert!(runs_no_program(key), "{key}");
        }
        for key in [
            "core.fsmonitor",
            "core.pager",
            "core.editor",
            "core.sshcommand",
            "core.hookspath",
            "core.gitproxy",
            "core.worktree",
            "core.bare",
            "alias.st",
            "filter.lfs.clean",
            "filter.x.process",
            "diff.x.textconv",
            "diff.x.command",
            "merge.x.driver",
            "credential.helper",
            "credential.https://h.helper",
            "include.path",
            "includeif.gitdir:/x.path",
            "remote.origin.uploadpack",
            "remote.origin.receivepack",
            "remote.origin.proxy",
            "http.proxy",
            "sequence.editor",
            "gpg.program",
            "user.signingkey",
            "uploadpack.packobjectshook",
            "nonsense",
        ] {
            assert!(!runs_no_program(key), "{key}");
        }
    }
}
