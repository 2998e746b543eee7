//! A shell glob on one path component, as `fnmatch(3)` without flags reads it: `*` any
//! run of characters, `?` one character, `[...]` a bracket expression (`[!...]` or
//! `[^...]` negated, `a-z` ranges, `[:alpha:]` and the other character classes), `\`
//! quotes the next character, and a `[` that does not close is itself.
//!
//! One matcher for every place wavesh reads such globs: the secret list (RO-9), the
//! sandbox's search for secrets by name (SBX-2) and GNU grep's `--include`,
//! `--exclude` and `--exclude-dir` (SEARCH).

/// Whether `name` matches the glob `pattern`.
pub fn fnmatch(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    // Every token but `*` takes exactly one character, so backtracking to the last `*`
    // alone is enough: linear in practice, never exponential.
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    loop {
        if pi < p.len() {
            let step = match p[pi] {
                '*' => {
                    star = Some((pi, ni));
                    pi += 1;
                    continue;
                }
                _ if ni == n.len() => None,
                '?' => Some(pi + 1),
                '[' => match class(&p[pi..], n[ni]) {
                    Some((true, len)) => Some(pi + len),
                    Some((false, _)) => None,
                    None => (n[ni] == '[').then_some(pi + 1),
                },
                '\\' if pi + 1 < p.len() => (p[pi + 1] == n[ni]).then_some(pi + 2),
                c => (c == n[ni]).then_some(pi + 1),
            };
            if let Some(next) = step {
                pi = next;
                ni += 1;
                continue;
            }
        } else if ni == n.len() {
            return true;
        }
        match star {
            Some((sp, sn)) if sn < n.len() => {
                star = Some((sp, sn + 1));
                pi = sp + 1;
                ni = sn + 1;
            }
            _ => return false,
        }
    }
}

/// [`fnmatch`] with ASCII letters matched whatever their case: how secret names are
/// matched (`SERVER.KEY`, `.ENV` and `Id_Rsa` are the secrets `*.key`, `.env` and
/// `id_rsa` name, and on a case-insensitive file system they are the same file).
pub fn fnmatch_fold(pattern: &str, name: &str) -> bool {
    fnmatch(&pattern.to_ascii_lowercase(), &name.to_ascii_lowercase())
}

/// The bracket expression at the start of `p`: whether it matches `c` and its length;
/// `None` when it does not close.
fn class(p: &[char], c: char) -> Option<(bool, usize)> {
    let mut i = 1;
    let negated = matches!(p.get(i), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    while i < p.len() {
        if p[i] == ']' && !first {
            return Some((matched != negated, i + 1));
        }
        first = false;
        if p[i] == '[' && p.get(i + 1) == Some(&':') {
            let rest: String = p[i + 2..].iter().collect();
            if let Some(end) = rest.find(":]") {
                let name = &rest[..end];
                let graph = c.is_ascii_graphic()
                    || (!c.is_ascii() && !c.is_whitespace() && !c.is_control());
                matched |= match name {
                    "alpha" => c.is_alphabetic(),
                    "digit" => c.is_ascii_digit(),
                    "alnum" => c.is_alphanumeric(),
                    "upper" => c.is_uppercase(),
                    "lower" => c.is_lowercase(),
                    "space" => c.is_whitespace(),
                    "blank" => c == ' ' || c == '\t',
                    "punct" => c.is_ascii_punctuation(),
                    "xdigit" => c.is_ascii_hexdigit(),
                    "cntrl" => c.is_control(),
                    "graph" => graph,
                    "print" => graph || c == ' ',
                    _ => false,
                };
                i += 2 + name.chars().count() + 2;
                continue;
            }
        }
        // An equivalence class `[=e=]` or a collating symbol `[.e.]` of one character:
        // that character (a UTF-8 or C locale has no wider classes for them).
        if p[i] == '['
            && let Some(&kind @ ('=' | '.')) = p.get(i + 1)
            && let Some(&symbol) = p.get(i + 2)
            && p.get(i + 3) == Some(&kind)
            && p.get(i + 4) == Some(&']')
        {
            matched |= symbol == c;
            i += 5;
            continue;
        }
        if p.get(i + 1) == Some(&'-') && p.get(i + 2).is_some_and(|&high| high != ']') {
            matched |= p[i] <= c && c <= p[i + 2];
            i += 3;
        } else {
            matched |= p[i] == c;
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::fnmatch;

    #[test]
    fn globs_read_as_fnmatch_reads_them() {
        assert!(fnmatch("*", ""));
        assert!(fnmatch("*.pem", "server.pem"));
        assert!(!fnmatch("*.pem", "server.pem.pub"));
        assert!(fnmatch("ssh_host_*_key", "ssh_host_ed25519_key"));
        assert!(fnmatch(".ss?", ".ssh"));
        assert!(!fnmatch(".ss?", ".ss"));
        assert!(fnmatch("id_[rd]sa*", "id_dsa.old"));
        assert!(!fnmatch("id_[!r]sa", "id_rsa"));
        assert!(!fnmatch("id_[^r]sa", "id_rsa"));
        assert!(fnmatch("a[0-9]", "a5"));
        assert!(fnmatch("[]x]", "]"));
        assert!(fnmatch("[[:digit:]][[:alpha:]]", "1é"));
        // Every POSIX class, and one-character equivalence classes and collating
        // symbols: each can spell a secret's name.
        for pattern in [
            ".[[:graph:]]nv",
            ".[[:print:]]nv",
            ".[[=e=]]nv",
            ".[[.e.]]nv",
            ".[[:lower:][:punct:]]nv",
        ] {
            assert!(fnmatch(pattern, ".env"), "{pattern}");
        }
        assert!(fnmatch("a[[:blank:]]b", "a\tb") && !fnmatch("a[[:graph:]]b", "a b"));
        assert!(fnmatch("[[:cntrl:]]", "\u{7}") && !fnmatch("[[:print:]]", "\u{7}"));
        assert!(!fnmatch(".[[=x=]]nv", ".env"));
        assert!(fnmatch("[x", "[x"));
        assert!(fnmatch("a\\*", "a*"));
        assert!(!fnmatch("a\\*", "ab"));
        assert!(fnmatch("a\\", "a\\"));
        assert!(fnmatch("a*b*c", "axxbyyc"));
        assert!(!fnmatch("a*b*c", "axxbyy"));
        assert!(fnmatch("*é*", "café au lait"));
    }

    /// Many stars against a long name that does not match: backtracking to the last star
    /// only, this stays quick where a recursive matcher would not.
    #[test]
    fn many_stars_do_not_blow_up() {
        let name = "a".repeat(200);
        assert!(!fnmatch("*a*a*a*a*a*a*a*a*a*b", &name));
    }
}
