//! Paths between Windows and Git Bash (SHELL-5), as pure functions so every case is
//! tested on any platform.
//!
//! Paths wavesh gives Git Bash use forward slashes (`C:/Users/a b`): MSYS accepts them
//! and they need no escaping. Paths Git Bash gives back (`pwd -P`) are MSYS paths
//! (`/c/Users/...`, `/cygdrive/c/...`, `//server/share/...`) and are converted to native
//! form before they are checked or reported.

/// A native Windows path as Git Bash should receive it: backslashes become forward
/// slashes; drive letters, UNC prefixes and everything else stay.
pub fn to_git_bash(native: &str) -> String {
    native.replace('\\', "/")
}

/// An MSYS path from Git Bash in native Windows form. Paths that are not MSYS-style
/// (already native, or relative) are only given backslashes.
pub fn to_native(msys: &str) -> String {
    let msys = msys.trim_end_matches(['\n', '\r']);
    if let Some(rest) = msys.strip_prefix("/cygdrive/") {
        return drive_path(rest).unwrap_or_else(|| msys.replace('/', "\\"));
    }
    if let Some(unc) = msys.strip_prefix("//") {
        return format!("\\\\{}", unc.replace('/', "\\"));
    }
    if let Some(rest) = msys.strip_prefix('/')
        && let Some(native) = drive_path(rest)
    {
        return native;
    }
    // `C:/Users/x` (what `pwd -W` prints) or a relative path.
    msys.replace('/', "\\")
}

/// `c/Users/x` → `C:\Users\x`; `c` → `C:\`. `None` unless it starts with a single drive
/// letter followed by `/` or the end.
fn drive_path(rest: &str) -> Option<String> {
    let mut chars = rest.chars();
    let letter = chars.next().filter(char::is_ascii_alphabetic)?;
    let after = chars.as_str();
    if !(after.is_empty() || after.starts_with('/')) {
        return None;
    }
    let tail = after.trim_start_matches('/').replace('/', "\\");
    Some(format!("{}:\\{tail}", letter.to_ascii_uppercase()))
}

/// Whether a native path is on a network share (UNC).
pub fn is_unc(native: &str) -> bool {
    native.starts_with("\\\\") || native.starts_with("//")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_5_native_to_git_bash() {
        for (native, bash) in [
            (r"C:\Users\a b\project", "C:/Users/a b/project"),
            (r"D:\", "D:/"),
            (r"C:\Users\José\文档", "C:/Users/José/文档"),
            (r"\\server\share\dir", "//server/share/dir"),
            (r"relative\dir", "relative/dir"),
            (r"C:relative", "C:relative"),
            ("C:/already/forward", "C:/already/forward"),
        ] {
            assert_eq!(to_git_bash(native), bash, "{native}");
        }
    }

    #[test]
    fn shell_5_git_bash_to_native() {
        for (msys, native) in [
            ("/c/Users/a b/project", r"C:\Users\a b\project"),
            ("/c", r"C:\"),
            ("/d/", r"D:\"),
            ("/cygdrive/c/Users/x", r"C:\Users\x"),
            ("/cygdrive/e", r"E:\"),
            ("//server/share/dir", r"\\server\share\dir"),
            ("C:/Users/x", r"C:\Users\x"),
            ("/c/Users/José/文档\n", r"C:\Users\José\文档"),
            ("/usr/bin", r"\usr\bin"),
            ("/cd/x", r"\cd\x"),
        ] {
            assert_eq!(to_native(msys), native, "{msys}");
        }
        assert!(is_unc(r"\\server\share"));
        assert!(!is_unc(r"C:\x"));
    }
}
