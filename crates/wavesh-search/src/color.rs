//! `--color`: GNU grep 3.8's SGR sequences and its `GREP_COLORS` and `GREP_COLOR`
//! variables, as its manual documents them.

/// When to color (`--color[=WHEN]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum When {
    Never,
    Always,
    /// Only where standard output is a terminal and `TERM` is not `dumb`.
    Auto,
}

/// `WHEN` as GNU reads it; `None` for a word it refuses.
pub(crate) fn when(word: &str) -> Option<When> {
    match word {
        "always" | "yes" | "force" => Some(When::Always),
        "never" | "no" | "none" => Some(When::Never),
        "auto" | "tty" | "if-tty" => Some(When::Auto),
        _ => None,
    }
}

/// Whether `when` colors this run's output.
pub(crate) fn enabled(when: When) -> bool {
    match when {
        When::Never => false,
        When::Always => true,
        When::Auto => {
            use std::io::IsTerminal;
            std::io::stdout().is_terminal()
                && std::env::var_os("TERM").is_some_and(|term| term != "dumb")
        }
    }
}

/// The SGR parameters of each part of the output (empty: that part is not colored).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Colors {
    pub(crate) selected_match: String,
    pub(crate) context_match: String,
    pub(crate) selected_line: String,
    pub(crate) context_line: String,
    pub(crate) file_name: String,
    pub(crate) line_number: String,
    pub(crate) byte_offset: String,
    pub(crate) separator: String,
    /// `rv`: with `-v`, `sl` and `cx` trade places.
    pub(crate) reverse: bool,
    /// `ne`: no Erase in Line (`\33[K`) after each sequence.
    pub(crate) no_erase: bool,
    /// The deprecated `GREP_COLOR` still colors matches: its value, for the warning.
    pub(crate) legacy: Option<String>,
}

impl Default for Colors {
    fn default() -> Colors {
        Colors {
            selected_match: "01;31".into(),
            context_match: "01;31".into(),
            selected_line: String::new(),
            context_line: String::new(),
            file_name: "35".into(),
            line_number: "32".into(),
            byte_offset: "32".into(),
            separator: "36".into(),
            reverse: false,
            no_erase: false,
            legacy: None,
        }
    }
}

/// Whether `value` is made only of SGR parameter characters (digits and `;`).
fn sgr_parameters(value: &str) -> bool {
    value.bytes().all(|b| b.is_ascii_digit() || b == b';')
}

impl Colors {
    /// The colors that `GREP_COLOR` (deprecated) and `GREP_COLORS` give.
    pub(crate) fn from_env() -> Colors {
        let legacy = std::env::var("GREP_COLOR").ok();
        let colors = std::env::var("GREP_COLORS").ok();
        Colors::from_values(legacy.as_deref(), colors.as_deref())
    }

    /// `GREP_COLOR` colors matches when it is a non-empty SGR parameter list; then each
    /// `name=value` or boolean `name` of `GREP_COLORS`, separated by `:`, in order. A
    /// value with other characters ends the reading there (the rest is ignored), and
    /// unknown names are ignored.
    pub(crate) fn from_values(legacy: Option<&str>, grep_colors: Option<&str>) -> Colors {
        let mut c = Colors::default();
        let (mut selected_legacy, mut context_legacy) = (false, false);
        if let Some(value) = legacy.filter(|v| !v.is_empty() && sgr_parameters(v)) {
            c.selected_match = value.to_owned();
            c.context_match = value.to_owned();
            (selected_legacy, context_legacy) = (true, true);
        }
        for item in grep_colors.unwrap_or_default().split(':') {
            let (name, value) = match item.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (item, None),
            };
            if let Some(value) = value
                && !sgr_parameters(value)
            {
                break;
            }
            match (name, value) {
                ("mt", Some(v)) => {
                    c.selected_match = v.to_owned();
                    c.context_match = v.to_owned();
                    (selected_legacy, context_legacy) = (false, false);
                }
                ("ms", Some(v)) => {
                    c.selected_match = v.to_owned();
                    selected_legacy = false;
                }
                ("mc", Some(v)) => {
                    c.context_match = v.to_owned();
                    context_legacy = false;
                }
                ("sl", Some(v)) => c.selected_line = v.to_owned(),
                ("cx", Some(v)) => c.context_line = v.to_owned(),
                ("fn", Some(v)) => c.file_name = v.to_owned(),
                ("ln", Some(v)) => c.line_number = v.to_owned(),
                ("bn", Some(v)) => c.byte_offset = v.to_owned(),
                ("se", Some(v)) => c.separator = v.to_owned(),
                ("rv", None) => c.reverse = true,
                ("ne", None) => c.no_erase = true,
                _ => {}
            }
        }
        if selected_legacy || context_legacy {
            c.legacy = legacy.map(str::to_owned);
        }
        c
    }

    /// The sequence that starts coloring with `sgr`, or nothing for an empty one.
    pub(crate) fn start(&self, sgr: &str) -> Vec<u8> {
        if sgr.is_empty() {
            return Vec::new();
        }
        let erase = if self.no_erase { "" } else { "\x1b[K" };
        format!("\x1b[{sgr}m{erase}").into_bytes()
    }

    /// The sequence that ends coloring with `sgr`, or nothing for an empty one.
    pub(crate) fn end(&self, sgr: &str) -> &'static [u8] {
        match (sgr.is_empty(), self.no_erase) {
            (true, _) => b"",
            (false, true) => b"\x1b[m",
            (false, false) => b"\x1b[m\x1b[K",
        }
    }

    /// The line color of a selected (`selected`) or context line, `rv` applied.
    pub(crate) fn line(&self, selected: bool, invert: bool) -> &str {
        if selected != (self.reverse && invert) {
            &self.selected_line
        } else {
            &self.context_line
        }
    }

    /// The match color in a selected or context line.
    pub(crate) fn matched(&self, selected: bool) -> &str {
        if selected {
            &self.selected_match
        } else {
            &self.context_match
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grep_colors_names_and_booleans() {
        let c = Colors::from_values(
            None,
            Some("ms=35:mc=36:sl=1:cx=2:fn=3:ln=4:bn=5:se=6:rv:ne"),
        );
        assert_eq!(
            (c.selected_match.as_str(), c.context_match.as_str()),
            ("35", "36")
        );
        assert_eq!(
            (c.selected_line.as_str(), c.context_line.as_str()),
            ("1", "2")
        );
        assert_eq!(
            (
                c.file_name.as_str(),
                c.line_number.as_str(),
                c.byte_offset.as_str(),
                c.separator.as_str()
            ),
            ("3", "4", "5", "6")
        );
        assert!(c.reverse && c.no_erase && c.legacy.is_none());
        assert_eq!(c.start("1"), b"\x1b[1m");
        assert_eq!(c.line(true, true), "2");
    }

    #[test]
    fn a_bad_value_ends_the_reading() {
        let c = Colors::from_values(None, Some("fn=1:ln=x:se=2"));
        assert_eq!(c.file_name, "1");
        assert_eq!(c.line_number, "32");
        assert_eq!(c.separator, "36");
    }

    #[test]
    fn grep_color_is_used_until_grep_colors_replaces_it() {
        let c = Colors::from_values(Some("36"), Some("ln=35"));
        assert_eq!(c.selected_match, "36");
        assert_eq!(c.legacy.as_deref(), Some("36"));
        let c = Colors::from_values(Some("36"), Some("mt=32"));
        assert_eq!(c.selected_match, "32");
        assert!(c.legacy.is_none());
        let c = Colors::from_values(Some("1;x"), None);
        assert_eq!(c.selected_match, "01;31");
        assert!(c.legacy.is_none());
        assert_eq!(Colors::default().start("01;31"), b"\x1b[01;31m\x1b[K");
    }
}
