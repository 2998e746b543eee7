//! Which shell runs the commands (SHELL-1, SHELL-2).
//!
//! Commands always run under bash or zsh, never `/bin/sh`: on Debian that is dash and on
//! macOS a POSIX-mode bash, and both reject syntax the model writes every day
//! (`<(...)`, `[[ ]]`, arrays). Resolution is a pure function of a few environment values
//! and a file-system probe, so every branch is unit-tested without touching the machine.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};

/// The two shell families wavesh runs commands under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShellKind {
    /// GNU bash.
    Bash,
    /// zsh.
    Zsh,
}

impl ShellKind {
    /// Classifies a resolved executable by its file name: `bash`, `zsh`, optionally with
    /// a version suffix (`bash5`, `zsh-5.9`) and, on Windows, `.exe`.
    pub fn from_file_name(name: &str) -> Option<ShellKind> {
        let name = name.strip_suffix(".exe").unwrap_or(name);
        let (kind, rest) = if let Some(rest) = name.strip_prefix("bash") {
            (ShellKind::Bash, rest)
        } else if let Some(rest) = name.strip_prefix("zsh") {
            (ShellKind::Zsh, rest)
        } else {
            return None;
        };
        let version = rest.strip_prefix(['-', '_', '.']).unwrap_or(rest);
        let is_version = rest.is_empty()
            || (version.starts_with(|c: char| c.is_ascii_digit())
                && version.chars().all(|c| c.is_ascii_digit() || c == '.'));
        is_version.then_some(kind)
    }

    /// The family's name as users write it.
    pub fn name(self) -> &'static str {
        match self {
            ShellKind::Bash => "bash",
            ShellKind::Zsh => "zsh",
        }
    }
}

impl fmt::Display for ShellKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A resolved shell: the path that is executed and its family.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shell {
    path: PathBuf,
    kind: ShellKind,
}

impl Shell {
    /// A shell at `path` of the given family. Callers that did not resolve the path
    /// themselves should use [`resolve_shell`].
    pub fn new(path: impl Into<PathBuf>, kind: ShellKind) -> Shell {
        Shell {
            path: path.into(),
            kind,
        }
    }

    /// The executable that is run.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// bash or zsh.
    pub fn kind(&self) -> ShellKind {
        self.kind
    }
}

/// Why no shell could be chosen. Each variant names what was wrong so the user can fix
/// it; there is never a silent fallback to `/bin/sh`.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum ShellError {
    /// `WAVE_SHELL` names a file that does not exist or is not executable.
    #[error("WAVE_SHELL={path} is not an executable file")]
    WaveShellNotExecutable {
        /// The value of `WAVE_SHELL`.
        path: String,
    },
    /// `WAVE_SHELL` names an executable that is neither bash nor zsh.
    #[error(
        "WAVE_SHELL={path} resolves to {resolved}, which is neither bash nor zsh; wavesh runs commands only under bash or zsh"
    )]
    WaveShellNotBashOrZsh {
        /// The value of `WAVE_SHELL`.
        path: String,
        /// The file it resolves to.
        resolved: String,
    },
    /// Neither bash nor zsh could be found.
    #[error(
        "no bash or zsh found (looked at $SHELL, PATH and {searched}); install bash or set WAVE_SHELL to a bash or zsh executable"
    )]
    NotFound {
        /// The fixed locations that were tried, for the message.
        searched: String,
    },
}

/// What shell resolution reads from the environment; a value so tests can build it.
#[derive(Debug, Clone, Default)]
pub struct ShellEnv {
    /// `WAVE_SHELL`: an explicit choice, which must be usable.
    pub wave_shell: Option<OsString>,
    /// `SHELL`: used when it is bash or zsh.
    pub shell: Option<OsString>,
    /// `PATH`: searched for `bash`, then `zsh`.
    pub path: Option<OsString>,
}

impl ShellEnv {
    /// Reads the three variables from this process's environment.
    pub fn from_process() -> ShellEnv {
        ShellEnv {
            wave_shell: std::env::var_os(crate::env_vars::WAVE_SHELL).filter(|v| !v.is_empty()),
            shell: std::env::var_os("SHELL").filter(|v| !v.is_empty()),
            path: std::env::var_os("PATH"),
        }
    }
}

/// The file-system questions resolution asks, behind a trait for tests.
pub trait FileProbe {
    /// Whether `path` is an existing regular file this process may execute.
    fn is_executable(&self, path: &Path) -> bool;
    /// `path` with every symlink resolved, if it exists.
    fn resolve(&self, path: &Path) -> Option<PathBuf>;
}

/// The real file system.
#[derive(Debug, Default, Clone, Copy)]
pub struct RealFiles;

impl FileProbe for RealFiles {
    fn is_executable(&self, path: &Path) -> bool {
        is_executable_file(path)
    }

    fn resolve(&self, path: &Path) -> Option<PathBuf> {
        std::fs::canonicalize(path).ok()
    }
}

#[cfg(unix)]
fn is_executable_file(path: &Path) -> bool {
    use rustix::fs::{Access, access};
    path.is_file() && access(path, Access::EXEC_OK).is_ok()
}

#[cfg(not(unix))]
fn is_executable_file(path: &Path) -> bool {
    path.is_file()
}

const BASH_PATHS: &[&str] = &[
    "/bin/bash",
    "/usr/bin/bash",
    "/usr/local/bin/bash",
    "/opt/homebrew/bin/bash",
];
const ZSH_PATHS: &[&str] = &[
    "/bin/zsh",
    "/usr/bin/zsh",
    "/usr/local/bin/zsh",
    "/opt/homebrew/bin/zsh",
];

/// Chooses the shell (SHELL-2): `WAVE_SHELL` → `$SHELL` when it is bash or zsh → bash on
/// PATH or at the usual paths → zsh on PATH or at the usual paths.
pub fn resolve_shell(env: &ShellEnv, files: &dyn FileProbe) -> Result<Shell, ShellError> {
    if let Some(wave) = &env.wave_shell {
        return explicit_shell(Path::new(wave), files);
    }
    if let Some(shell) = env.shell.as_deref().map(Path::new)
        && shell.is_absolute()
        && let Some(found) = usable(shell, files, None)
    {
        return Ok(found);
    }
    for (name, kind, fixed) in [
        ("bash", ShellKind::Bash, BASH_PATHS),
        ("zsh", ShellKind::Zsh, ZSH_PATHS),
    ] {
        let on_path = env
            .path
            .as_deref()
            .into_iter()
            .flat_map(std::env::split_paths)
            .filter(|dir| dir.is_absolute())
            .map(|dir| dir.join(name));
        let fixed = fixed.iter().map(PathBuf::from);
        if let Some(found) = on_path
            .chain(fixed)
            .find_map(|candidate| usable(&candidate, files, Some(kind)))
        {
            return Ok(found);
        }
    }
    Err(ShellError::NotFound {
        searched: BASH_PATHS
            .iter()
            .chain(ZSH_PATHS)
            .copied()
            .collect::<Vec<_>>()
            .join(", "),
    })
}

fn explicit_shell(path: &Path, files: &dyn FileProbe) -> Result<Shell, ShellError> {
    let shown = path.display().to_string();
    if !files.is_executable(path) {
        return Err(ShellError::WaveShellNotExecutable { path: shown });
    }
    let resolved = files.resolve(path).unwrap_or_else(|| path.to_path_buf());
    match kind_of(path, &resolved) {
        Some(kind) => Ok(Shell::new(path, kind)),
        None => Err(ShellError::WaveShellNotBashOrZsh {
            path: shown,
            resolved: resolved.display().to_string(),
        }),
    }
}

/// A candidate is usable when it is executable and is bash or zsh (of the wanted family,
/// if one is wanted).
fn usable(path: &Path, files: &dyn FileProbe, want: Option<ShellKind>) -> Option<Shell> {
    if !files.is_executable(path) {
        return None;
    }
    let resolved = files.resolve(path).unwrap_or_else(|| path.to_path_buf());
    let kind = kind_of(path, &resolved)?;
    (want.is_none() || want == Some(kind)).then(|| Shell::new(path, kind))
}

/// The family is decided by the resolved file's name; the link's own name is the
/// fallback for installs where the real binary has an unusual name (Debian's `zsh5`
/// script is handled by the version-suffix rule, Nix store paths by this fallback).
fn kind_of(link: &Path, resolved: &Path) -> Option<ShellKind> {
    let name_of = |p: &Path| p.file_name().and_then(|n| n.to_str()).map(str::to_owned);
    match name_of(resolved).and_then(|n| ShellKind::from_file_name(&n)) {
        Some(kind) => Some(kind),
        // A symlink to something that is plainly another program (sh → dash) is not
        // accepted under a bash or zsh name.
        None if resolved != link && looks_like_other_shell(resolved) => None,
        None => name_of(link).and_then(|n| ShellKind::from_file_name(&n)),
    }
}

fn looks_like_other_shell(resolved: &Path) -> bool {
    let name = resolved.file_name().and_then(|n| n.to_str()).unwrap_or("");
    matches!(
        name,
        "sh" | "dash" | "ash" | "ksh" | "mksh" | "fish" | "busybox" | "tcsh" | "csh"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[derive(Default)]
    struct FakeFiles {
        exec: HashMap<PathBuf, PathBuf>,
    }

    impl FakeFiles {
        fn with(mut self, path: &str, target: &str) -> Self {
            self.exec.insert(PathBuf::from(path), PathBuf::from(target));
            self
        }
    }

    impl FileProbe for FakeFiles {
        fn is_executable(&self, path: &Path) -> bool {
            self.exec.contains_key(path)
        }
        fn resolve(&self, path: &Path) -> Option<PathBuf> {
            self.exec.get(path).cloned()
        }
    }

    fn env(wave: Option<&str>, shell: Option<&str>, path: Option<&str>) -> ShellEnv {
        ShellEnv {
            wave_shell: wave.map(Into::into),
            shell: shell.map(Into::into),
            path: path.map(Into::into),
        }
    }

    #[test]
    fn shell_2_file_names_with_versions() {
        for (name, kind) in [
            ("bash", Some(ShellKind::Bash)),
            ("bash5", Some(ShellKind::Bash)),
            ("bash-5.2", Some(ShellKind::Bash)),
            ("bash.exe", Some(ShellKind::Bash)),
            ("zsh", Some(ShellKind::Zsh)),
            ("zsh5", Some(ShellKind::Zsh)),
            ("zsh-5.9", Some(ShellKind::Zsh)),
            ("bashful", None),
            ("dash", None),
            ("sh", None),
            ("zshx", None),
            ("bash-", None),
        ] {
            assert_eq!(ShellKind::from_file_name(name), kind, "{name}");
        }
    }

    #[test]
    fn shell_2_wave_shell_first() {
        let files = FakeFiles::default()
            .with("/opt/zsh", "/opt/zsh")
            .with("/bin/bash", "/bin/bash");
        let got = resolve_shell(&env(Some("/opt/zsh"), Some("/bin/bash"), None), &files).unwrap();
        assert_eq!(got, Shell::new("/opt/zsh", ShellKind::Zsh));
    }

    #[test]
    fn shell_2_wave_shell_not_bash_or_zsh_is_an_error_not_skipped() {
        let files = FakeFiles::default()
            .with("/bin/sh", "/usr/bin/dash")
            .with("/bin/bash", "/bin/bash");
        let err = resolve_shell(&env(Some("/bin/sh"), None, None), &files).unwrap_err();
        assert_eq!(
            err,
            ShellError::WaveShellNotBashOrZsh {
                path: "/bin/sh".into(),
                resolved: "/usr/bin/dash".into()
            }
        );
        assert!(err.to_string().contains("neither bash nor zsh"));
    }

    #[test]
    fn shell_2_wave_shell_missing_is_an_error() {
        let files = FakeFiles::default().with("/bin/bash", "/bin/bash");
        let err = resolve_shell(&env(Some("/nope/zsh"), None, None), &files).unwrap_err();
        assert!(matches!(err, ShellError::WaveShellNotExecutable { .. }));
        assert!(err.to_string().contains("/nope/zsh"));
    }

    #[test]
    fn shell_2_dollar_shell_used_only_when_bash_or_zsh() {
        let files = FakeFiles::default()
            .with("/usr/bin/fish", "/usr/bin/fish")
            .with("/usr/bin/zsh", "/usr/bin/zsh")
            .with("/bin/bash", "/bin/bash");
        let got = resolve_shell(&env(None, Some("/usr/bin/zsh"), None), &files).unwrap();
        assert_eq!(got.kind(), ShellKind::Zsh);
        let got = resolve_shell(&env(None, Some("/usr/bin/fish"), None), &files).unwrap();
        assert_eq!(got, Shell::new("/bin/bash", ShellKind::Bash));
    }

    #[test]
    fn shell_2_bash_on_path_before_zsh() {
        let files = FakeFiles::default()
            .with("/usr/bin/zsh", "/usr/bin/zsh")
            .with("/home/u/bin/bash", "/nix/store/abc-bash-5.2/bin/bash");
        let got = resolve_shell(&env(None, None, Some("/home/u/bin:/usr/bin")), &files).unwrap();
        assert_eq!(got, Shell::new("/home/u/bin/bash", ShellKind::Bash));
    }

    #[test]
    fn shell_2_zsh_when_no_bash() {
        let files = FakeFiles::default().with("/bin/zsh", "/bin/zsh");
        let got = resolve_shell(&env(None, None, Some("/usr/bin")), &files).unwrap();
        assert_eq!(got, Shell::new("/bin/zsh", ShellKind::Zsh));
    }

    #[test]
    fn shell_1_never_sh_even_when_it_is_all_there_is() {
        let files = FakeFiles::default()
            .with("/bin/sh", "/usr/bin/dash")
            .with("/usr/bin/bash", "/usr/bin/dash");
        let err = resolve_shell(&env(None, Some("/bin/sh"), Some("/usr/bin")), &files).unwrap_err();
        assert!(matches!(err, ShellError::NotFound { .. }));
        assert!(err.to_string().contains("WAVE_SHELL"));
    }
}
