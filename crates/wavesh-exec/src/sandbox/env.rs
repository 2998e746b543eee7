//! The credential-scrubbed environment of a sandboxed command (SBX-2).

use std::ffi::{OsStr, OsString};
use std::io::{self, Read, Write};
use std::path::Path;

use super::glob_match;

/// Which variables a sandboxed command does not get. Patterns are `*` globs on the name,
/// matched without regard to ASCII case; `allow` wins over `deny`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvFilter {
    /// Removed.
    pub deny: Vec<String>,
    /// Kept even when a `deny` pattern matches.
    pub allow: Vec<String>,
}

/// The default deny list: tokens, keys, secrets and passwords by name, cloud and agent
/// credentials, and the agent sockets that hand out keys.
pub const DEFAULT_DENY: &[&str] = &[
    "*_TOKEN",
    "*_TOKEN_*",
    "*_KEY",
    "*_KEY_*",
    "*_SECRET",
    "*_SECRET_*",
    "*PASSWORD*",
    "*PASSWD*",
    "*_PASS",
    "*_API_KEY",
    "*_CREDENTIALS",
    "*_CREDENTIAL",
    "*_AUTH",
    "*_COOKIE",
    "*_SESSION",
    "AWS_*",
    "AZURE_*",
    "ARM_CLIENT_*",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GOOGLE_CLOUD_*",
    "CLOUDSDK_*",
    "DIGITALOCEAN_*",
    "HEROKU_API_*",
    "*_PAT",
    "NPM_CONFIG__AUTH*",
    "DOCKER_AUTH_CONFIG",
    "VAULT_*",
    "DATABASE_URL",
    "REDIS_URL",
    "ANTHROPIC_*",
    "OPENAI_*",
    "CLAUDE_CODE_OAUTH*",
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "KRB5CCNAME",
    "WAVESH_MCP_TOKEN",
];

impl Default for EnvFilter {
    fn default() -> Self {
        EnvFilter {
            deny: DEFAULT_DENY.iter().map(|s| s.to_string()).collect(),
            allow: Vec::new(),
        }
    }
}

impl EnvFilter {
    /// Whether the variable `name` is removed.
    pub fn removes(&self, name: &str) -> bool {
        self.deny.iter().any(|p| glob_match(p, name, true))
            && !self.allow.iter().any(|p| glob_match(p, name, true))
    }

    /// Splits `vars` into the names to remove and the values removed (for masking).
    pub fn scrub<'a>(&self, vars: impl IntoIterator<Item = (&'a OsStr, &'a OsStr)>) -> Scrubbed {
        let mut out = Scrubbed::default();
        for (name, value) in vars {
            if self.removes(&name.to_string_lossy()) {
                out.names.push(name.to_os_string());
                let value = value.to_string_lossy();
                if value.chars().count() >= MIN_MASKED_CHARS {
                    out.values
                        .push((name.to_string_lossy().into_owned(), value.into_owned()));
                }
            }
        }
        out.names.sort();
        out.names.dedup();
        out
    }
}

/// Values shorter than this are not masked: replacing every `1` or `yes` of an output
/// would garble it, and so short a value is no credential.
pub const MIN_MASKED_CHARS: usize = 8;

/// What was removed from one command's environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scrubbed {
    /// The names removed.
    pub names: Vec<OsString>,
    /// Name and value of each removed variable long enough to mask.
    pub values: Vec<(String, String)>,
}

impl Scrubbed {
    /// Whether no value is masked.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The length in bytes of the longest value masked: a text cut within this many
    /// bytes of a value may hold a part of it, so a part of a file is masked with this
    /// much more read around it.
    pub fn longest(&self) -> usize {
        self.values.iter().map(|(_, v)| v.len()).max().unwrap_or(0)
    }
}

/// Rewrites the file at `path` with every scrubbed value masked as [`mask_scrubbed`]
/// does, when one appears in it (SBX-2): a file whose path the model is told to read
/// (a persisted or a background command's output) shows no more than the model text.
/// The masked copy replaces the file by a rename, so a reader sees one or the other
/// whole. Returns whether anything was masked. Streams: memory stays flat.
pub fn mask_file(path: &Path, scrubbed: &Scrubbed) -> io::Result<bool> {
    if scrubbed.is_empty() {
        return Ok(false);
    }
    let mut values: Vec<(&[u8], Vec<u8>)> = scrubbed
        .values
        .iter()
        .map(|(name, value)| (value.as_bytes(), format!("[scrubbed ${name}]").into_bytes()))
        .collect();
    values.sort_by_key(|(value, _)| std::cmp::Reverse(value.len()));
    let mut first = [false; 256];
    for (value, _) in &values {
        if let Some(&b) = value.first() {
            first[b as usize] = true;
        }
    }
    let keep = scrubbed.longest().saturating_sub(1);
    let mut input = std::fs::File::open(path)?;
    let mut name = path.as_os_str().to_owned();
    name.push(".masking");
    let temp = std::path::PathBuf::from(name);
    let mut output = io::BufWriter::new(std::fs::File::create(&temp)?);
    let mut buf: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 1 << 20];
    let mut changed = false;
    let result = (|| -> io::Result<()> {
        loop {
            let n = input.read(&mut chunk)?;
            buf.extend_from_slice(&chunk[..n]);
            let eof = n == 0;
            // A value starting before `limit` ends inside `buf`.
            let limit = if eof {
                buf.len()
            } else {
                buf.len().saturating_sub(keep)
            };
            let mut out = Vec::with_capacity(limit);
            let mut i = 0;
            while i < limit {
                let hit = first[buf[i] as usize]
                    .then(|| values.iter().find(|(v, _)| buf[i..].starts_with(v)))
                    .flatten();
                match hit {
                    Some((value, mask)) => {
                        out.extend_from_slice(mask);
                        i += value.len();
                        changed = true;
                    }
                    None => {
                        out.push(buf[i]);
                        i += 1;
                    }
                }
            }
            output.write_all(&out)?;
            buf.drain(..i.min(buf.len()));
            if eof {
                return output.flush();
            }
        }
    })();
    if result.is_ok() && changed {
        std::fs::rename(&temp, path)?;
    } else {
        let _ = std::fs::remove_file(&temp);
    }
    result.map(|()| changed)
}

/// `text` with every scrubbed value replaced by `[scrubbed $NAME]` (SBX-2): a command
/// that found the value elsewhere (a config file, a login script) still does not show it
/// to the model. Longer values first, so a value containing another is masked whole.
pub fn mask_scrubbed(text: &str, scrubbed: &Scrubbed) -> String {
    let mut values: Vec<&(String, String)> = scrubbed.values.iter().collect();
    values.sort_by_key(|(_, value)| std::cmp::Reverse(value.len()));
    let mut out = text.to_owned();
    for (name, value) in values {
        if out.contains(value.as_str()) {
            out = out.replace(value.as_str(), &format!("[scrubbed ${name}]"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sbx_2_default_list_drops_credentials_and_keeps_the_rest() {
        let filter = EnvFilter::default();
        for name in [
            "GITHUB_TOKEN",
            "NPM_TOKEN",
            "OPENAI_API_KEY",
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "AZURE_CLIENT_SECRET",
            "DB_PASSWORD",
            "pgpassword",
            "SSH_AUTH_SOCK",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "ANTHROPIC_API_KEY",
            "STRIPE_SECRET_KEY",
        ] {
            assert!(filter.removes(name), "{name} should be removed");
        }
        for name in [
            "PATH",
            "HOME",
            "LANG",
            "TERM",
            "CARGO_HOME",
            "KEYBOARD",
            "USER",
        ] {
            assert!(!filter.removes(name), "{name} should be kept");
        }
    }

    #[test]
    fn sbx_2_files_are_masked_across_chunks() {
        let scrubbed = Scrubbed {
            names: Vec::new(),
            values: vec![
                ("GH_TOKEN".into(), "ghp_abcdefghijkl".into()),
                ("LONG_TOKEN".into(), "ghp_abcdefghijkl-and-more".into()),
            ],
        };
        let path = std::env::temp_dir().join(format!(
            "wavesh-mask-{}-{}",
            std::process::id(),
            crate::private_dir::random_name(6)
        ));
        // A value across the first chunk's end, and bytes that are not UTF-8.
        let mut text = vec![b'x'; (1 << 20) - 5];
        text.extend_from_slice(b"ghp_abcdefghijkl and ghp_abcdefghijkl-and-more \xff\n");
        std::fs::write(&path, &text).unwrap();
        assert!(mask_file(&path, &scrubbed).unwrap());
        let masked = std::fs::read(&path).unwrap();
        let mut expected = vec![b'x'; (1 << 20) - 5];
        expected.extend_from_slice(b"[scrubbed $GH_TOKEN] and [scrubbed $LONG_TOKEN] \xff\n");
        assert!(
            masked == expected,
            "{}",
            String::from_utf8_lossy(&masked[(1 << 20) - 10..])
        );
        assert!(
            !mask_file(&path, &scrubbed).unwrap(),
            "nothing left to mask"
        );
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn sbx_2_allow_wins_and_values_are_masked() {
        let filter = EnvFilter {
            deny: vec!["*_TOKEN".into()],
            allow: vec!["HARMLESS_TOKEN".into()],
        };
        let vars = [
            (OsStr::new("GH_TOKEN"), OsStr::new("ghp_abcdefghijkl")),
            (OsStr::new("HARMLESS_TOKEN"), OsStr::new("visible-value")),
            (OsStr::new("SHORT_TOKEN"), OsStr::new("1")),
        ];
        let scrubbed = filter.scrub(vars);
        assert_eq!(
            scrubbed.names,
            [OsString::from("GH_TOKEN"), "SHORT_TOKEN".into()]
        );
        assert_eq!(
            mask_scrubbed("token=ghp_abcdefghijkl visible-value 1", &scrubbed),
            "token=[scrubbed $GH_TOKEN] visible-value 1"
        );
    }
}
