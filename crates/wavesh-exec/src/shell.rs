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
    /// Windows: no Git Bash (SHELL-4).
    #[error(
        "Git Bash was not found (looked at WAVE_SHELL, WAVE_GIT_BASH_PATH, {searched} and next to git on PATH); install Git for Windows from git-scm.com, or set WAVE_GIT_BASH_PATH to its bin\\bash.exe"
    )]
    GitBashNotFound {
        /// The fixed locations that were tried.
        searched: String,
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

/// The shell for this platform: bash or zsh on Unix (SHELL-2), Git Bash on Windows
/// (SHELL-4), from this process's environment.
pub fn resolve_default_shell() -> Result<Shell, ShellError> {
    #[cfg(windows)]
    {
        resolve_git_bash(&WindowsShellEnv::from_process(), &RealFiles)
    }
    #[cfg(not(windows))]
    {
        resolve_shell(&ShellEnv::from_process(), &RealFiles)
    }
}

impl WindowsShellEnv {
    /// Reads the variables from this process's environment.
    pub fn from_process() -> WindowsShellEnv {
        let var = |key: &str| std::env::var_os(key).filter(|v| !v.is_empty());
        WindowsShellEnv {
            wave_shell: var(crate::env_vars::WAVE_SHELL),
            git_bash_path: var(crate::env_vars::WAVE_GIT_BASH_PATH),
            path: var("PATH")
                .map(|p| std::env::split_paths(&p).collect())
                .unwrap_or_default(),
            program_files: var("ProgramFiles").map(PathBuf::from),
            program_files_x86: var("ProgramFiles(x86)").map(PathBuf::from),
            local_app_data: var("LOCALAPPDATA").map(PathBuf::from),
            user_profile: var("USERPROFILE").map(PathBuf::from),
        }
    }
}

/// What Git Bash discovery reads on Windows (SHELL-4).
#[derive(Debug, Clone, Default)]
pub struct WindowsShellEnv {
    /// `WAVE_SHELL`.
    pub wave_shell: Option<OsString>,
    /// `WAVE_GIT_BASH_PATH`.
    pub git_bash_path: Option<OsString>,
    /// `PATH` entries (already split).
    pub path: Vec<PathBuf>,
    /// `ProgramFiles`, `ProgramFiles(x86)`, `LOCALAPPDATA`, `USERPROFILE`.
    pub program_files: Option<PathBuf>,
    /// `ProgramFiles(x86)`.
    pub program_files_x86: Option<PathBuf>,
    /// `LOCALAPPDATA`.
    pub local_app_data: Option<PathBuf>,
    /// `USERPROFILE`.
    pub user_profile: Option<PathBuf>,
}

/// SHELL-4: `WAVE_SHELL` or `WAVE_GIT_BASH_PATH`, then the usual install paths, then
/// from `git.exe` on PATH (`Git\cmd\git.exe` and `Git\mingw64\bin\git.exe` both lead to
/// `Git\bin\bash.exe`). Never cmd.exe.
pub fn resolve_git_bash(env: &WindowsShellEnv, files: &dyn FileProbe) -> Result<Shell, ShellError> {
    if let Some(explicit) = env.wave_shell.as_ref().or(env.git_bash_path.as_ref()) {
        let path = PathBuf::from(explicit);
        if !files.is_executable(&path) {
            return Err(ShellError::WaveShellNotExecutable {
                path: path.display().to_string(),
            });
        }
        // The last component by either separator, so the logic is the same on every host.
        let text = path.to_string_lossy();
        let name = text.rsplit(['\\', '/']).next().unwrap_or("");
        return match ShellKind::from_file_name(&name.to_ascii_lowercase()) {
            Some(kind) => Ok(Shell::new(path, kind)),
            None => Err(ShellError::WaveShellNotBashOrZsh {
                path: path.display().to_string(),
                resolved: path.display().to_string(),
            }),
        };
    }
    let bash_in = |git_root: &Path| git_root.join("bin").join("bash.exe");
    let mut candidates: Vec<PathBuf> = Vec::new();
    for base in [&env.program_files, &env.program_files_x86]
        .into_iter()
        .flatten()
    {
        candidates.push(bash_in(&base.join("Git")));
    }
    if let Some(local) = &env.local_app_data {
        candidates.push(bash_in(&local.join("Programs").join("Git")));
    }
    if let Some(profile) = &env.user_profile {
        candidates.push(bash_in(
            &profile
                .join("scoop")
                .join("apps")
                .join("git")
                .join("current"),
        ));
    }
    let searched = candidates
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    for dir in &env.path {
        let git = dir.join("git.exe");
        if !files.is_executable(&git) {
            continue;
        }
        // Git\cmd\git.exe → Git; Git\mingw64\bin\git.exe → Git.
        let mut root = dir.as_path();
        if root
            .file_name()
            .is_some_and(|n| n.eq_ignore_ascii_case("bin"))
            && root
                .parent()
                .and_then(Path::file_name)
                .is_some_and(|n| n.eq_ignore_ascii_case("mingw64"))
        {
            root = root.parent().and_then(Path::parent).unwrap_or(root);
        } else if root
            .file_name()
            .is_some_and(|n| n.eq_ignore_ascii_case("cmd"))
        {
            root = root.parent().unwrap_or(root);
        }
        candidates.push(bash_in(root));
    }
    candidates
        .into_iter()
        .find(|candidate| files.is_executable(candidate))
        .map(|path| Shell::new(path, ShellKind::Bash))
        .ok_or(ShellError::GitBashNotFound { searched })
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

    fn windows_env() -> WindowsShellEnv {
        WindowsShellEnv {
            program_files: Some(PathBuf::from(r"C:\Program Files")),
            program_files_x86: Some(PathBuf::from(r"C:\Program Files (x86)")),
            local_app_data: Some(PathBuf::from(r"C:\Users\José\AppData\Local")),
            user_profile: Some(PathBuf::from(r"C:\Users\José")),
            ..WindowsShellEnv::default()
        }
    }

    #[test]
    fn shell_4_git_bash_discovery_order() {
        let program_files = PathBuf::from(r"C:\Program Files")
            .join("Git")
            .join("bin")
            .join("bash.exe");
        let files = FakeFiles::default().with(
            &program_files.to_string_lossy(),
            &program_files.to_string_lossy(),
        );
        assert_eq!(
            resolve_git_bash(&windows_env(), &files).unwrap().path(),
            program_files
        );

        let user = PathBuf::from(r"C:\Users\José\AppData\Local")
            .join("Programs")
            .join("Git")
            .join("bin")
            .join("bash.exe");
        let files = FakeFiles::default().with(&user.to_string_lossy(), &user.to_string_lossy());
        assert_eq!(
            resolve_git_bash(&windows_env(), &files).unwrap().path(),
            user
        );

        // Derived from git on PATH: Git\cmd\git.exe and Git\mingw64\bin\git.exe.
        for git_dir in [
            PathBuf::from(r"D:\Tools\Git").join("cmd"),
            PathBuf::from(r"D:\Tools\Git").join("mingw64").join("bin"),
        ] {
            let git = git_dir.join("git.exe");
            let bash = PathBuf::from(r"D:\Tools\Git").join("bin").join("bash.exe");
            let files = FakeFiles::default()
                .with(&git.to_string_lossy(), &git.to_string_lossy())
                .with(&bash.to_string_lossy(), &bash.to_string_lossy());
            let env = WindowsShellEnv {
                path: vec![git_dir.clone()],
                ..windows_env()
            };
            assert_eq!(
                resolve_git_bash(&env, &files).unwrap().path(),
                bash,
                "{}",
                git_dir.display()
            );
        }
    }

    #[test]
    fn shell_4_explicit_paths_and_the_install_hint() {
        let custom = r"E:\Portable Git\bin\bash.exe";
        let files = FakeFiles::default().with(custom, custom);
        let env = WindowsShellEnv {
            git_bash_path: Some(custom.into()),
            ..windows_env()
        };
        assert_eq!(
            resolve_git_bash(&env, &files).unwrap().path(),
            Path::new(custom)
        );
        let env = WindowsShellEnv {
            wave_shell: Some(r"C:\Windows\System32\cmd.exe".into()),
            ..windows_env()
        };
        let files = FakeFiles::default().with(
            r"C:\Windows\System32\cmd.exe",
            r"C:\Windows\System32\cmd.exe",
        );
        assert!(
            matches!(
                resolve_git_bash(&env, &files),
                Err(ShellError::WaveShellNotBashOrZsh { .. })
            ),
            "never cmd.exe"
        );
        let error = resolve_git_bash(&windows_env(), &FakeFiles::default()).unwrap_err();
        assert!(
            error.to_string().contains("install Git for Windows"),
            "{error}"
        );
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
