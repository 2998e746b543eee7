//! The compiled patterns: which engine decides a line, and where its matches are.

use super::*;

/// The engine that decides whether a line matches.
pub(super) enum Engine {
    Fast(regex::bytes::Regex),
    /// `-P`: PCRE2, as GNU grep's.
    Pcre(pcre2::bytes::Regex),
    Backtracking(fancy_regex::Regex),
    /// No pattern at all (`-f /dev/null`): no line matches.
    Nothing,
}

/// A compiled matcher for all patterns.
pub(super) struct Matcher {
    pub(super) engine: Engine,
    /// The expression run over many lines at once to find the lines that can match (a
    /// line's match is a match in the chunk too, so it never misses one).
    pub(super) screen: Option<regex::bytes::Regex>,
    /// The screen is the line expression itself: a screen match inside one line is that
    /// line's match, with no second look.
    pub(super) screen_exact: bool,
    /// A UTF-8 locale: a line to print that is not valid UTF-8 makes the input binary.
    pub(super) utf8: bool,
    /// Unicode word assertions, which the regex crate does not evaluate beside invalid
    /// UTF-8: such a line is matched again with its invalid bytes read as U+FFFD.
    pub(super) word_assertions: bool,
    /// `-i` on the backtracking engine, whose back-references compare exactly: lines
    /// are matched lower-cased, so `\1` compares without case as GNU's does.
    pub(super) fold_case: bool,
    /// A PCRE2 matching error (its backtracking limit...): GNU's message; the run ends.
    pub(super) failure: std::sync::OnceLock<String>,
    /// The same expression reporting every match end: where a match found at a start
    /// ends when it is the longest there, as POSIX (and GNU, for -o and --color) reads
    /// `ab|abc` and several patterns (`-e bb -e bbb`).
    pub(super) longest: Option<regex_automata::hybrid::dfa::DFA>,
    /// The locale's character set, when lines are decoded before they are matched.
    pub(super) charset: Option<&'static crate::charset::Charset>,
}

impl Matcher {
    pub(super) fn new(o: &Options) -> Result<Matcher, String> {
        let mut matcher = Matcher::compile(o)?;
        if let Some(charset) = charset() {
            // Lines are decoded one by one: a screen over raw chunks would read their
            // bytes as UTF-8.
            matcher.charset = Some(charset);
            matcher.screen = None;
            matcher.screen_exact = false;
        }
        Ok(matcher)
    }

    pub(super) fn compile(o: &Options) -> Result<Matcher, String> {
        let utf8 = text_locale();
        if o.patterns.is_empty() {
            return Ok(Matcher {
                engine: Engine::Nothing,
                screen: None,
                screen_exact: false,
                utf8,
                word_assertions: false,
                fold_case: false,
                failure: std::sync::OnceLock::new(),
                longest: None,
                charset: None,
            });
        }
        if o.dialect == Dialect::Perl {
            if charset().is_some_and(crate::charset::Charset::multibyte) {
                // GNU's PCRE2 reads UTF-8 or single bytes only.
                return Err("-P supports only unibyte and UTF-8 locales".to_owned());
            }
            return Matcher::perl(o, utf8);
        }
        let extended = o.dialect == Dialect::Extended;
        let regex_dialect = matches!(o.dialect, Dialect::Basic | Dialect::Extended);
        let backtracking =
            regex_dialect && o.patterns.iter().any(|p| has_backreference(p, extended));
        let target = if backtracking {
            Target::Backtracking
        } else {
            Target::Fast
        };
        // fancy-regex matches text, so the byte reading of the C locale is not available
        // there: it reads UTF-8 (what a C-locale pattern with a back-reference rarely
        // notices).
        let byte_mode = !utf8 && !backtracking;
        let turkish_case = o.ignore_case && turkish_locale();
        let alternation_of = |loose: bool| -> Result<String, String> {
            let mut translated = Vec::with_capacity(o.patterns.len());
            let mut groups = 0;
            // GNU reports every pattern in error (once per distinct pattern), with the
            // file and line of a -f pattern.
            let mut errors = Vec::new();
            let mut seen = std::collections::HashSet::new();
            for (index, p) in o.patterns.iter().enumerate() {
                translated.push(match o.dialect {
                    Dialect::Fixed if byte_mode => p
                        .chars()
                        .map(|c| {
                            if c.is_ascii() {
                                regex::escape(&c.to_string())
                            } else {
                                let mut b = [0u8; 4];
                                c.encode_utf8(&mut b)
                                    .bytes()
                                    .map(|b| format!(r"\x{b:02X}"))
                                    .collect()
                            }
                        })
                        .collect(),
                    Dialect::Fixed if turkish_case => p
                        .chars()
                        .map(|c| match crate::pattern::turkish_case_class(c) {
                            Some(class) => class.to_owned(),
                            None => regex::escape(&c.to_string()),
                        })
                        .collect(),
                    Dialect::Fixed => regex::escape(p),
                    Dialect::Perl => p.clone(),
                    Dialect::Basic | Dialect::Extended => {
                        let t = translate(
                            p,
                            Flavor {
                                extended,
                                utf8: !byte_mode,
                                target,
                                group_offset: groups,
                                syntax: None,
                                loose,
                                null_data: o.null_data,
                                turkish_case,
                            },
                        );
                        match t {
                            Ok(t) => {
                                groups += t.groups;
                                t.regex
                            }
                            Err(PatternError(message)) if message == "stack overflow" => {
                                // GNU dies of it at once, naming no pattern.
                                return Err(message);
                            }
                            Err(PatternError(message)) => {
                                if seen.insert(p.as_str()) {
                                    errors.push(match o.pattern_origins.get(index) {
                                        Some(Some((file, line))) => {
                                            format!("{file}:{line}: {message}")
                                        }
                                        _ => message,
                                    });
                                }
                                String::new()
                            }
                        }
                    }
                });
            }
            if !errors.is_empty() {
                return Err(errors.join("\n"));
            }
            Ok(translated
                .iter()
                .map(|p| format!("(?:{p})"))
                .collect::<Vec<_>>()
                .join("|"))
        };
        let alternation = alternation_of(false)?;
        // Unicode word assertions never match beside invalid UTF-8 in the regex crate:
        // such lines are matched again as text, and the screen leaves the assertions out.
        let loose_alternation = alternation_of(true)?;
        let word_assertions = utf8 && (o.word || loose_alternation != alternation);
        let mut flags = String::new();
        if o.ignore_case {
            flags.push_str("(?i)");
        }
        if byte_mode {
            flags.push_str("(?-u)");
        }
        let body = if o.line {
            format!("^(?:{alternation})$")
        } else if o.word && backtracking {
            format!(r"(?<!\w)(?:{alternation})(?!\w)")
        } else if o.word {
            format!(r"\b{{start-half}}(?:{alternation})\b{{end-half}}")
        } else {
            alternation.clone()
        };
        // `\A`/`\z` (GNU's \` and \') mean the line's ends, not a chunk's.
        let absolute = body.contains(r"\A") || body.contains(r"\z");
        let eol = if o.null_data { 0 } else { b'\n' };
        let large = |text: &str| {
            regex::bytes::RegexBuilder::new(text)
                .line_terminator(eol)
                .nest_limit(1000)
                .size_limit(64 << 20)
                .dfa_size_limit(64 << 20)
                .build()
        };
        if backtracking {
            // With -z a line may hold newlines, which `.` matches there (GNU).
            let dot_all = if o.null_data { "(?s)" } else { "" };
            let engine = fancy_regex::Regex::new(&format!("{flags}{dot_all}{body}"))
                .map_err(|e| e.to_string())?;
            return Ok(Matcher {
                engine: Engine::Backtracking(engine),
                screen: None,
                screen_exact: false,
                utf8,
                word_assertions: false,
                fold_case: o.ignore_case,
                failure: std::sync::OnceLock::new(),
                longest: None,
                charset: None,
            });
        }
        let engine = large(&format!("{flags}{body}")).map_err(|e| regex_error(&e))?;
        let screen = if absolute {
            None
        } else if word_assertions {
            let loose = if o.line {
                format!("^(?:{loose_alternation})$")
            } else {
                loose_alternation
            };
            large(&format!("(?m){flags}{loose}")).ok()
        } else {
            large(&format!("(?m){flags}{body}")).ok()
        };
        Ok(Matcher {
            engine: Engine::Fast(engine),
            // With -z, lines hold newlines where the screen's anchors may match: every
            // candidate is checked on its own.
            screen_exact: screen.is_some() && !word_assertions && !o.null_data,
            screen,
            utf8,
            word_assertions,
            fold_case: false,
            failure: std::sync::OnceLock::new(),
            // Only output that shows matches needs their ends; rg's matches are
            // leftmost-first, as ripgrep's are.
            longest: ((o.only_matching || o.colors.is_some()) && !o.rg_names)
                .then(|| longest_dfa(&format!("{flags}{body}"), eol))
                .flatten(),
            charset: None,
        })
    }

    /// `-P` as GNU grep 3.8 builds it: one pattern, UTF-8 (invalid bytes never match)
    /// in a UTF-8 locale, bytes in C; `-x` and `-w` wrap it as GNU does.
    pub(super) fn perl(o: &Options, utf8: bool) -> Result<Matcher, String> {
        if o.patterns.len() > 1 {
            return Err("the -P option only supports a single pattern".to_owned());
        }
        let pattern = &o.patterns[0];
        let body = if o.line {
            format!("^(?:{pattern})$")
        } else if o.word {
            format!(r"(?<!\w)(?:{pattern})(?!\w)")
        } else {
            pattern.clone()
        };
        // In UTF-8, invalid bytes must be barriers, not errors (GNU's
        // PCRE2_MATCH_INVALID_UTF): the crate sets that with UCP, and `(?a)` keeps
        // `\d`, `\s`, `\w` and the POSIX classes ASCII, as GNU 3.8's PCRE2 has them.
        let compiled = if utf8 {
            format!("(?a){body}")
        } else {
            body.clone()
        };
        let engine = pcre2::bytes::RegexBuilder::new()
            .caseless(o.ignore_case)
            .utf(utf8)
            .ucp(utf8)
            .jit_if_available(true)
            .max_jit_stack_size(Some(64 << 20))
            .build(&compiled)
            .map_err(|e| {
                // "PCRE2: error compiling pattern at offset N: MESSAGE" -> MESSAGE.
                let text = e.to_string();
                text.splitn(3, ": ").nth(2).unwrap_or(&text).to_owned()
            })?;
        // In the C locale, an ASCII pattern the regex crate reads, byte for byte as
        // PCRE2 reads it there, screens many lines at once.
        let screen = if !utf8 && body.is_ascii() && !o.ignore_case {
            regex::bytes::RegexBuilder::new(&format!("(?m)(?-u){body}"))
                .line_terminator(if o.null_data { 0 } else { b'\n' })
                .build()
                .ok()
        } else {
            None
        };
        Ok(Matcher {
            engine: Engine::Pcre(engine),
            screen,
            screen_exact: false,
            utf8,
            word_assertions: false,
            fold_case: false,
            failure: std::sync::OnceLock::new(),
            longest: None,
            charset: None,
        })
    }

    /// GNU's message for a PCRE2 matching error.
    pub(super) fn pcre_failed(&self, error: &pcre2::Error) {
        // PCRE2's error codes (pcre2.h), stable across its releases.
        const PCRE2_ERROR_JIT_STACKLIMIT: i32 = -46;
        const PCRE2_ERROR_MATCHLIMIT: i32 = -47;
        const PCRE2_ERROR_NOMEMORY: i32 = -48;
        const PCRE2_ERROR_RECURSELOOP: i32 = -52;
        const PCRE2_ERROR_DEPTHLIMIT: i32 = -53;
        const PCRE2_ERROR_HEAPLIMIT: i32 = -63;
        let message = match error.code() {
            PCRE2_ERROR_MATCHLIMIT => "exceeded PCRE's backtracking limit".to_owned(),
            PCRE2_ERROR_JIT_STACKLIMIT => "exhausted PCRE JIT stack".to_owned(),
            PCRE2_ERROR_DEPTHLIMIT => "exhausted PCRE's depth limit".to_owned(),
            PCRE2_ERROR_HEAPLIMIT => "exceeded PCRE's heap limit".to_owned(),
            PCRE2_ERROR_RECURSELOOP => "PCRE detected recurse loop".to_owned(),
            PCRE2_ERROR_NOMEMORY => "memory exhausted".to_owned(),
            code => format!("internal PCRE error: {code}"),
        };
        let _ = self.failure.set(message);
    }

    /// Match ranges in a line (without its newline), in bytes of the line.
    pub(super) fn find_all(&self, line: &[u8]) -> Vec<(usize, usize)> {
        match self.charset {
            Some(charset) if !line.is_ascii() => {
                let decoded = charset.decode(line);
                self.find_all_text(&decoded.text)
                    .into_iter()
                    .map(|(start, end)| (decoded.origin(start), decoded.origin(end)))
                    .collect()
            }
            _ => self.find_all_text(line),
        }
    }

    pub(super) fn find_all_text(&self, line: &[u8]) -> Vec<(usize, usize)> {
        match &self.engine {
            Engine::Fast(re) => {
                let found = self.longest_matches(re, line);
                if !found.is_empty() || !self.word_assertions || std::str::from_utf8(line).is_ok() {
                    return found;
                }
                let (text, origin) = lossy_with_origins(line);
                let back = |i: usize| origin.get(i).copied().unwrap_or(line.len());
                re.find_iter(text.as_bytes())
                    .map(|m| (back(m.start()), back(m.end())))
                    .collect()
            }
            Engine::Backtracking(re) => {
                let (text, origin) = match std::str::from_utf8(line) {
                    Ok(text) => (std::borrow::Cow::Borrowed(text), None),
                    Err(_) => {
                        let (text, origin) = lossy_with_origins(line);
                        (std::borrow::Cow::Owned(text), Some(origin))
                    }
                };
                let text = self.fold(text);
                let back = |i: usize| match &origin {
                    Some(origin) => origin.get(i).copied().unwrap_or(line.len()),
                    None => i,
                };
                re.find_iter(&text)
                    .filter_map(Result::ok)
                    .map(|m| (back(m.start()), back(m.end())))
                    .collect()
            }
            Engine::Pcre(re) => {
                let mut found = Vec::new();
                for m in re.find_iter(line) {
                    match m {
                        Ok(m) => found.push((m.start(), m.end())),
                        Err(error) => {
                            self.pcre_failed(&error);
                            break;
                        }
                    }
                }
                found
            }
            Engine::Nothing => Vec::new(),
        }
    }

    /// The matches of `re` in `line`, left to right, each as long as it can be at its
    /// start; an empty match moves the search on by one byte.
    pub(super) fn longest_matches(
        &self,
        re: &regex::bytes::Regex,
        line: &[u8],
    ) -> Vec<(usize, usize)> {
        let Some(dfa) = &self.longest else {
            return re.find_iter(line).map(|m| (m.start(), m.end())).collect();
        };
        let mut cache = dfa.create_cache();
        let mut found = Vec::new();
        let mut at = 0;
        while at <= line.len() {
            let Some(m) = re.find_at(line, at) else { break };
            let input = regex_automata::Input::new(line)
                .range(m.start()..)
                .anchored(regex_automata::Anchored::Yes);
            let end = match dfa.try_search_fwd(&mut cache, &input) {
                Ok(Some(half)) => half.offset().max(m.end()),
                // The lazy DFA gives up (a Unicode word boundary beside non-ASCII text,
                // a full cache): the end found first stands.
                _ => m.end(),
            };
            found.push((m.start(), end));
            at = if end > m.start() { end } else { end + 1 };
        }
        found
    }

    /// The text lower-cased for `-i` on the backtracking engine, where that keeps every
    /// offset (else as it is, matched with `(?i)` alone).
    pub(super) fn fold<'t>(&self, text: std::borrow::Cow<'t, str>) -> std::borrow::Cow<'t, str> {
        if !self.fold_case || !text.chars().any(char::is_uppercase) {
            return text;
        }
        let lower: String = text
            .chars()
            .map(|c| {
                let mut l = c.to_lowercase();
                match (l.next(), l.next()) {
                    (Some(one), None) if one.len_utf8() == c.len_utf8() => one,
                    _ => c,
                }
            })
            .collect();
        std::borrow::Cow::Owned(lower)
    }

    /// Whether `text` is valid in the locale's character set (always, in C).
    pub(super) fn valid(&self, text: &[u8]) -> bool {
        match self.charset {
            Some(charset) => charset.valid(text),
            None => !self.utf8 || std::str::from_utf8(text).is_ok(),
        }
    }

    pub(super) fn is_match(&self, line: &[u8]) -> bool {
        match self.charset {
            Some(charset) if !line.is_ascii() => self.is_match_text(&charset.decode(line).text),
            _ => self.is_match_text(line),
        }
    }

    pub(super) fn is_match_text(&self, line: &[u8]) -> bool {
        match &self.engine {
            Engine::Fast(re) => {
                re.is_match(line)
                    || (self.word_assertions
                        && std::str::from_utf8(line).is_err()
                        && re.is_match(String::from_utf8_lossy(line).as_bytes()))
            }
            Engine::Backtracking(re) => {
                let text = String::from_utf8_lossy(line);
                re.is_match(&self.fold(text)).unwrap_or(false)
            }
            Engine::Pcre(re) => re.is_match(line).unwrap_or_else(|error| {
                self.pcre_failed(&error);
                false
            }),
            Engine::Nothing => false,
        }
    }
}

/// A lazy DFA of `pattern` (as the regex crate reads it) that reports the longest
/// match; `None` where it cannot be built (the leftmost-first ends are used then).
pub(super) fn longest_dfa(pattern: &str, eol: u8) -> Option<regex_automata::hybrid::dfa::DFA> {
    use regex_automata::{MatchKind, hybrid::dfa::DFA, nfa::thompson, util::syntax};
    DFA::builder()
        .configure(
            DFA::config()
                .match_kind(MatchKind::All)
                .unicode_word_boundary(true)
                .cache_capacity(8 << 20),
        )
        .syntax(
            syntax::Config::new()
                .utf8(false)
                .line_terminator(eol)
                .nest_limit(1000),
        )
        .thompson(thompson::Config::new().utf8(false))
        .build(pattern)
        .ok()
}

/// The regex crate's error, shortened to its last line (its own pointer art is noise).
pub(super) fn regex_error(error: &regex::Error) -> String {
    match error {
        regex::Error::CompiledTooBig(_) => "Regular expression too big".to_owned(),
        other => {
            let text = other.to_string();
            text.lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("invalid regular expression")
                .trim_start_matches("error: ")
                .to_owned()
        }
    }
}

/// `line` as text (invalid bytes as U+FFFD), with each text byte's offset in `line`.
pub(super) fn lossy_with_origins(line: &[u8]) -> (String, Vec<usize>) {
    let mut text = String::with_capacity(line.len() + 8);
    let mut origin = Vec::with_capacity(line.len() + 8);
    let mut at = 0;
    for chunk in line.utf8_chunks() {
        let valid = chunk.valid();
        text.push_str(valid);
        origin.extend(at..at + valid.len());
        at += valid.len();
        for _ in chunk.invalid() {
            text.push('\u{FFFD}');
            origin.extend([at; 3]);
            at += 1;
        }
    }
    (text, origin)
}
