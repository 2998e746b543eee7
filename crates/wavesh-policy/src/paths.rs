//! The path policy (RO-9): a read-only command that reads a secret is not auto-approved,
//! and a stricter setting confines auto-approval to the workspace.

use std::path::{Component, Path, PathBuf};

/// Where auto-approved commands may read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathPolicy {
    /// Refuse paths outside `roots` too (the stricter host setting).
    pub confine_to_roots: bool,
    /// The workspace and the additional directories.
    pub roots: Vec<PathBuf>,
}

/// Directories (under the home directory) whose contents are secrets.
const SECRET_DIRS: &[&str] = &[
    ".ssh",
    ".aws",
    ".gnupg",
    ".config/gh",
    ".kube",
    ".docker",
    ".azure",
    ".config/gcloud",
];

/// File names that are secrets wherever they are.
fn is_secret_name(name: &str) -> bool {
    name == ".env"
        || name.starts_with(".env.")
            && !name.ends_with(".example")
            && !name.ends_with(".sample")
            && !name.ends_with(".template")
        || name == ".netrc"
        || name == "_netrc"
        || name == ".git-credentials"
        || name == ".pgpass"
        || name == "shadow"
        || name.ends_with(".pem")
        || name.ends_with(".key")
        || name.ends_with(".p12")
        || name.ends_with(".pfx")
        || name.starts_with("id_rsa")
        || name.starts_with("id_ed25519")
        || name.starts_with("id_ecdsa")
        || name.starts_with("id_dsa")
}

/// Resolves `path` lexically against `cwd` (no file system access).
pub fn absolute(path: &str, cwd: &Path) -> PathBuf {
    let joined = if Path::new(path).is_absolute() {
        PathBuf::from(path)
    } else {
        cwd.join(path)
    };
    let mut out = PathBuf::new();
    for component in joined.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Why reading `path` (already `~`-expanded) is not auto-approved, if it is not.
pub fn check_read(path: &str, cwd: &Path, home: &Path, policy: &PathPolicy) -> Result<(), String> {
    let resolved = absolute(path, cwd);
    let name = resolved.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if is_secret_name(name)
        || resolved == Path::new("/etc/shadow")
        || resolved == Path::new("/etc/gshadow")
    {
        return Err(format!("`{path}` looks like a secret"));
    }
    if let Ok(inside_home) = resolved.strip_prefix(home) {
        for dir in SECRET_DIRS {
            if inside_home.starts_with(dir) {
                return Err(format!("`{path}` is inside ~/{dir}, which holds secrets"));
            }
        }
    }
    if policy.confine_to_roots && !policy.roots.iter().any(|root| resolved.starts_with(root)) {
        return Err(format!(
            "`{path}` is outside the workspace and the added directories"
        ));
    }
    Ok(())
}

/// Whether a word is plausibly a path operand: it has a slash, starts with `.` or `~`,
/// or is itself a secret file name.
pub fn looks_like_path(value: &str) -> bool {
    value.contains('/') || value.starts_with('.') || value.starts_with('~') || is_secret_name(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(path: &str) -> Result<(), String> {
        check_read(
            path,
            Path::new("/work/app"),
            Path::new("/home/u"),
            &PathPolicy::default(),
        )
    }

    #[test]
    fn ro_9_secrets_are_not_auto_approved() {
        for secret in [
            "/home/u/.ssh/id_rsa",
            "/home/u/.aws/credentials",
            "/home/u/.gnupg/x",
            "/home/u/.netrc",
            "/home/u/.docker/config.json",
            "/home/u/.kube/config",
            "/home/u/.config/gh/hosts.yml",
            "/home/u/.git-credentials",
            ".env",
            ".env.local",
            "config/.env.production",
            "server.pem",
            "tls.key",
            "/etc/shadow",
            "../../home/u/.ssh/config",
            "keys/id_ed25519.pub",
        ] {
            assert!(check(secret).is_err(), "{secret}");
        }
        for fine in [
            "src/main.rs",
            ".env.example",
            "/etc/hosts",
            "README.md",
            "/home/u/project/x",
            ".gitignore",
        ] {
            assert!(check(fine).is_ok(), "{fine}");
        }
    }

    #[test]
    fn ro_9_confinement() {
        let policy = PathPolicy {
            confine_to_roots: true,
            roots: vec![PathBuf::from("/work/app"), PathBuf::from("/opt/extra")],
        };
        let check =
            |p: &str| check_read(p, Path::new("/work/app/src"), Path::new("/home/u"), &policy);
        assert!(check("main.rs").is_ok());
        assert!(check("/opt/extra/a").is_ok());
        assert!(check("../../other").is_err());
        assert!(check("/etc/hosts").is_err());
    }
}
