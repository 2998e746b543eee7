//! Defence in depth for RO-17: the values held in the workspace's own secret files
//! (`.env` assignments, private-key blocks) are masked in what the model reads, as the
//! scrubbed environment values are. The sandbox hides the files themselves; this catches
//! a copy of their contents that comes from elsewhere, such as git's objects (`git show
//! HEAD:.env`) on a run the user approved.

use super::Plan;

/// Files larger than this are not read for values.
const MAX_FILE: u64 = 64 * 1024;
/// At most this many files are read.
const MAX_FILES: usize = 64;
/// Values shorter than this are not masked: they would mask ordinary words.
const MIN_VALUE: usize = 8;

/// (label, value) for every value of the secret files the search found inside the
/// plan's scanned trees (the workspace and the added directories).
pub fn secret_file_values(plan: &Plan) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let files = plan
        .found_secrets
        .iter()
        .filter(|path| plan.scan_trees.iter().any(|root| path.starts_with(root)))
        .filter(|path| {
            std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file() && m.len() <= MAX_FILE)
        })
        .take(MAX_FILES);
    for path in files {
        let Ok(bytes) = std::fs::read(path) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        let file = path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        values_of(&text, &file, &mut out);
    }
    out.sort();
    out.dedup();
    out
}

/// The values of one file's text: `KEY=value` and `KEY: value` lines (quotes removed,
/// `export` allowed), and each line of a PEM block.
fn values_of(text: &str, file: &str, out: &mut Vec<(String, String)>) {
    let mut in_block = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("-----BEGIN ") {
            in_block = true;
            continue;
        }
        if line.starts_with("-----END ") {
            in_block = false;
            continue;
        }
        if in_block {
            if line.len() >= MIN_VALUE && !line.contains(':') {
                out.push((format!("key block in {file}"), line.to_owned()));
            }
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((key, value)) = line.split_once('=').or_else(|| line.split_once(": ")) else {
            continue;
        };
        let key = key.trim();
        if key.is_empty()
            || !key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
        {
            continue;
        }
        let value = value.trim();
        let value = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
            .unwrap_or(value);
        if value.len() >= MIN_VALUE {
            out.push((format!("{key} from {file}"), value.to_owned()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::values_of;

    #[test]
    fn ro_17_values_of_secret_files() {
        let mut out = Vec::new();
        values_of(
            "# comment\nAPI_TOKEN=tok-1234567890\nexport DB_PASSWORD=\"p@ss w0rd!!\"\nSHORT=abc\nname: 'yaml-secret-value'\nnot a line\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1234567890abcdef\n-----END RSA PRIVATE KEY-----\n",
            ".env",
            &mut out,
        );
        let values: Vec<&str> = out.iter().map(|(_, v)| v.as_str()).collect();
        assert_eq!(
            values,
            [
                "tok-1234567890",
                "p@ss w0rd!!",
                "yaml-secret-value",
                "MIIEowIBAAKCAQEA1234567890abcdef"
            ]
        );
        assert_eq!(out[0].0, "API_TOKEN from .env");
    }
}
