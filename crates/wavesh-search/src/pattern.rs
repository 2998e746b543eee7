//! Patterns in GNU grep's dialects: basic (`-G`, the default), extended (`-E`), fixed
//! strings (`-F`) and Perl (`-P`). Basic regular expressions are translated to extended
//! ones; back-references (`\1`) need a backtracking engine (fancy-regex).

/// Which dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dialect {
    /// `-G`: POSIX basic regular expressions.
    #[default]
    Basic,
    /// `-E`: extended regular expressions.
    Extended,
    /// `-F`: fixed strings.
    Fixed,
    /// `-P`: Perl-compatible.
    Perl,
}

/// Translates a GNU basic regular expression to the extended syntax of the `regex`
/// crate: `\|`, `\+`, `\?`, `\(`, `\)`, `\{`, `\}` are operators; their bare forms are
/// literals; `*` at the start of an expression or a group is literal; `^`/`$` are
/// anchors only at the ends.
pub fn bre_to_ere(bre: &str) -> String {
    let chars: Vec<char> = bre.chars().collect();
    let mut out = String::with_capacity(bre.len() + 8);
    let mut i = 0;
    // Whether the next character starts an expression (for a literal `*`).
    let mut at_start = true;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' if i + 1 < chars.len() => {
                let next = chars[i + 1];
                i += 2;
                match next {
                    '|' => {
                        out.push('|');
                        at_start = true;
                        continue;
                    }
                    '(' => {
                        out.push('(');
                        at_start = true;
                        continue;
                    }
                    ')' | '+' | '?' | '{' | '}' => out.push(next),
                    '<' => out.push_str(r"\b(?=\w)"),
                    '>' => out.push_str(r"\b(?<=\w)"),
                    other => {
                        out.push('\\');
                        out.push(other);
                    }
                }
                at_start = false;
                continue;
            }
            '[' => {
                // A bracket expression is copied as is up to its closing `]`.
                let start = i;
                i += 1;
                if i < chars.len() && chars[i] == '^' {
                    i += 1;
                }
                if i < chars.len() && chars[i] == ']' {
                    i += 1;
                }
                while i < chars.len() && chars[i] != ']' {
                    if chars[i] == '['
                        && i + 1 < chars.len()
                        && matches!(chars[i + 1], ':' | '.' | '=')
                    {
                        let close = chars[i + 1];
                        i += 2;
                        while i + 1 < chars.len() && !(chars[i] == close && chars[i + 1] == ']') {
                            i += 1;
                        }
                        i += 2;
                        continue;
                    }
                    i += 1;
                }
                let end = (i + 1).min(chars.len());
                let class: String = chars[start..end].iter().collect();
                out.push_str(&escape_class(&class));
                i = end;
                at_start = false;
                continue;
            }
            '*' if at_start => {
                out.push_str(r"\*");
                at_start = false;
            }
            '+' | '?' | '|' | '(' | ')' | '{' | '}' => {
                out.push('\\');
                out.push(c);
                at_start = false;
            }
            // `^` anchors at the start of an expression; after it, `*` is still literal.
            '^' if at_start => out.push('^'),
            '^' => out.push_str(r"\^"),
            '$' => {
                let anchors = i + 1 == chars.len()
                    || (chars[i + 1] == '\\' && matches!(chars.get(i + 2), Some(')' | '|')));
                out.push_str(if anchors { "$" } else { r"\$" });
                at_start = false;
            }
            other => {
                out.push(other);
                at_start = false;
            }
        }
        i += 1;
    }
    out
}

/// The `regex` crate reads `[[` and `&&`, `--`, `~~` inside classes as set operations;
/// POSIX does not. Escape those so a POSIX bracket expression means what it says.
fn escape_class(class: &str) -> String {
    let mut out = String::with_capacity(class.len());
    let chars: Vec<char> = class.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let posix_class = c == '[' && matches!(chars.get(i + 1), Some(':' | '.' | '='));
        if posix_class {
            let close = chars[i + 1];
            let mut j = i + 2;
            while j + 1 < chars.len() && !(chars[j] == close && chars[j + 1] == ']') {
                j += 1;
            }
            out.extend(&chars[i..(j + 2).min(chars.len())]);
            i = j + 2;
            continue;
        }
        if i > 0
            && i + 1 < chars.len()
            && matches!(c, '[' | '&' | '~' | '-')
            && chars.get(i + 1) == Some(&c)
            && c != '-'
        {
            out.push('\\');
        }
        if c == '\\' && i > 0 && i + 1 < chars.len() {
            // A backslash is literal inside a POSIX bracket expression.
            out.push_str(r"\\");
            i += 1;
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}

/// Whether an expression uses back-references (`\1`..`\9`).
pub fn has_backreference(pattern: &str) -> bool {
    let bytes = pattern.as_bytes();
    bytes.windows(2).enumerate().any(|(i, w)| {
        w[0] == b'\\' && (b'1'..=b'9').contains(&w[1]) && (i == 0 || bytes[i - 1] != b'\\')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_1_bre_translation() {
        for (bre, ere) in [
            ("a\\|b", "a|b"),
            ("a\\{2,3\\}", "a{2,3}"),
            ("\\(ab\\)\\1", "(ab)\\1"),
            ("a+b?", "a\\+b\\?"),
            ("a|b", "a\\|b"),
            ("(x)", "\\(x\\)"),
            ("*star", "\\*star"),
            ("^a*", "^a*"),
            ("a^b", "a\\^b"),
            ("a$b", "a\\$b"),
            ("end$", "end$"),
            ("[[:alpha:]]+", "[[:alpha:]]\\+"),
            ("x\\{2\\}", "x{2}"),
            ("\\.", "\\."),
        ] {
            assert_eq!(bre_to_ere(bre), ere, "{bre}");
        }
        assert!(has_backreference("\\(a\\)\\1"));
        assert!(!has_backreference("a\\\\1"));
    }
}
