//! A lexical view of a command: its simple commands as words, for presentation only.
//!
//! Two decisions need the command's shape but carry no security weight: whether the
//! first command is `sleep` (EXEC-4: killed, not backgrounded, at its timeout) and which
//! command is last in the chain (OUT-3: how its exit code reads). A quote-aware lexer is
//! enough for both; it understands quotes, escapes, `$(...)`, here-docs, comments,
//! redirects and the list/pipe operators. Permission decisions never use it: they
//! belong to the full parser of `wavesh-parse`.

/// The operator in front of a simple command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connector {
    /// First command, `;`, newline, `&` or a grouping bracket.
    Sequence,
    /// `&&`.
    And,
    /// `||`.
    Or,
    /// `|` or `|&`: the command reads the previous one's output.
    Pipe,
}

/// One simple command, lexically.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// The words after quote removal, redirects excluded.
    pub words: Vec<String>,
    /// The operator before it.
    pub connector: Connector,
    /// Whether it has an input redirect or here-doc (`<`, `<<`, `<<<`).
    pub reads_redirected_input: bool,
}

impl Segment {
    /// The words after leading `NAME=value` assignments.
    pub fn argv(&self) -> &[String] {
        let skip = self.words.iter().take_while(|w| is_assignment(w)).count();
        &self.words[skip..]
    }
}

fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

/// The name of the first simple command (after assignments), or the first raw word.
pub fn first_command_name(text: &str) -> Option<String> {
    segments(text)
        .into_iter()
        .find_map(|segment| segment.argv().first().cloned())
        .or_else(|| text.split_whitespace().next().map(str::to_owned))
}

/// The last simple command of the chain.
pub fn last_segment(text: &str) -> Option<Segment> {
    segments(text)
        .into_iter()
        .rev()
        .find(|segment| !segment.argv().is_empty())
}

/// Splits `text` into simple commands.
pub fn segments(text: &str) -> Vec<Segment> {
    Lexer::new(text).run()
}

struct Lexer<'a> {
    chars: std::iter::Peekable<std::str::CharIndices<'a>>,
    text: &'a str,
    segments: Vec<Segment>,
    current: Segment,
    word: Option<String>,
    /// The next word is a redirect target, not an argument.
    redirect_target: bool,
    /// Here-doc delimiters waiting for the end of the line: (delimiter, strip tabs).
    heredocs: Vec<(String, bool)>,
    heredoc_pending: Option<bool>,
}

impl<'a> Lexer<'a> {
    fn new(text: &'a str) -> Self {
        Lexer {
            chars: text.char_indices().peekable(),
            text,
            segments: Vec::new(),
            current: Segment {
                words: Vec::new(),
                connector: Connector::Sequence,
                reads_redirected_input: false,
            },
            word: None,
            redirect_target: false,
            heredocs: Vec::new(),
            heredoc_pending: None,
        }
    }

    fn run(mut self) -> Vec<Segment> {
        while let Some((_, c)) = self.chars.next() {
            match c {
                ' ' | '\t' | '\r' => self.end_word(),
                '\n' => {
                    self.end_segment(Connector::Sequence);
                    self.skip_heredoc_bodies();
                }
                ';' | '(' | ')' | '{' | '}' if self.word.is_none() || c == ';' || c == ')' => {
                    self.end_segment(Connector::Sequence)
                }
                '#' if self.word.is_none() => self.skip_comment(),
                '&' => match self.chars.peek().map(|(_, c)| *c) {
                    Some('&') => {
                        self.chars.next();
                        self.end_segment(Connector::And);
                    }
                    Some('>') => {
                        self.chars.next();
                        self.redirect(false);
                    }
                    _ => self.end_segment(Connector::Sequence),
                },
                '|' => match self.chars.peek().map(|(_, c)| *c) {
                    Some('|') => {
                        self.chars.next();
                        self.end_segment(Connector::Or);
                    }
                    Some('&') => {
                        self.chars.next();
                        self.end_segment(Connector::Pipe);
                    }
                    _ => self.end_segment(Connector::Pipe),
                },
                '<' | '>' => self.redirect_operator(c),
                '\'' => self.single_quoted(),
                '"' => self.double_quoted(),
                '\\' => match self.chars.next() {
                    Some((_, '\n')) | None => {}
                    Some((_, escaped)) => self.push(escaped),
                },
                '$' if self.chars.peek().map(|(_, c)| *c) == Some('(') => self.substitution('$'),
                '`' => self.backquoted(),
                other => self.push(other),
            }
        }
        self.end_segment(Connector::Sequence);
        self.segments
    }

    fn push(&mut self, c: char) {
        self.word.get_or_insert_with(String::new).push(c);
    }

    fn push_str(&mut self, s: &str) {
        self.word.get_or_insert_with(String::new).push_str(s);
    }

    fn end_word(&mut self) {
        let Some(word) = self.word.take() else { return };
        if let Some(strip_tabs) = self.heredoc_pending.take() {
            self.heredocs.push((word, strip_tabs));
            self.redirect_target = false;
        } else if self.redirect_target {
            self.redirect_target = false;
        } else {
            self.current.words.push(word);
        }
    }

    fn end_segment(&mut self, next: Connector) {
        self.end_word();
        let finished = std::mem::replace(
            &mut self.current,
            Segment {
                words: Vec::new(),
                connector: next,
                reads_redirected_input: false,
            },
        );
        if !finished.words.is_empty() {
            self.segments.push(finished);
        } else if next != Connector::Sequence {
            // `a && b` keeps its operator on `b` even across an empty slot.
            self.current.connector = next;
        }
    }

    fn redirect_operator(&mut self, first: char) {
        // `2>&1`, `3<file`: a word of digits right before the operator is an fd number.
        if self
            .word
            .as_deref()
            .is_some_and(|w| w.chars().all(|c| c.is_ascii_digit()))
        {
            self.word = None;
        } else {
            self.end_word();
        }
        if first == '<' && self.chars.peek().map(|(_, c)| *c) == Some('(') {
            // Process substitution `<(...)`: an argument, not a redirect.
            self.substitution('<');
            return;
        }
        if first == '>' && self.chars.peek().map(|(_, c)| *c) == Some('(') {
            self.substitution('>');
            return;
        }
        if first == '<' {
            self.current.reads_redirected_input = true;
            if self.chars.peek().map(|(_, c)| *c) == Some('<') {
                self.chars.next();
                match self.chars.peek().map(|(_, c)| *c) {
                    Some('<') => {
                        self.chars.next();
                    }
                    Some('-') => {
                        self.chars.next();
                        self.heredoc_pending = Some(true);
                        return;
                    }
                    _ => {
                        self.heredoc_pending = Some(false);
                        return;
                    }
                }
            }
        }
        self.redirect(true);
    }

    fn redirect(&mut self, allow_more: bool) {
        // Swallow the rest of the operator (`>>`, `>|`, `<>`, `>&`, `<&`).
        while allow_more && let Some((_, c)) = self.chars.peek().copied() {
            if matches!(c, '>' | '|' | '&') {
                self.chars.next();
            } else {
                break;
            }
        }
        self.redirect_target = true;
    }

    fn single_quoted(&mut self) {
        let mut content = String::new();
        for (_, c) in self.chars.by_ref() {
            if c == '\'' {
                break;
            }
            content.push(c);
        }
        self.push_str(&content);
    }

    fn double_quoted(&mut self) {
        let mut content = String::new();
        while let Some((_, c)) = self.chars.next() {
            match c {
                '"' => break,
                '\\' => match self.chars.next() {
                    Some((_, e @ ('"' | '\\' | '$' | '`'))) => content.push(e),
                    Some((_, '\n')) => {}
                    Some((_, other)) => {
                        content.push('\\');
                        content.push(other);
                    }
                    None => content.push('\\'),
                },
                other => content.push(other),
            }
        }
        self.push_str(&content);
    }

    /// `$(...)`, `<(...)`, `>(...)`: copied raw, up to the matching parenthesis.
    fn substitution(&mut self, sigil: char) {
        let Some((start, _)) = self.chars.next() else {
            return;
        };
        let mut depth = 1usize;
        let mut end = self.text.len();
        while let Some((i, c)) = self.chars.next() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                '\\' => {
                    self.chars.next();
                }
                '\'' => {
                    for (_, q) in self.chars.by_ref() {
                        if q == '\'' {
                            break;
                        }
                    }
                }
                _ => {}
            }
        }
        let raw = format!("{sigil}{}", &self.text[start..end]);
        self.push_str(&raw);
    }

    fn backquoted(&mut self) {
        let mut raw = String::from('`');
        while let Some((_, c)) = self.chars.next() {
            raw.push(c);
            match c {
                '`' => break,
                '\\' => {
                    if let Some((_, e)) = self.chars.next() {
                        raw.push(e);
                    }
                }
                _ => {}
            }
        }
        self.push_str(&raw);
    }

    fn skip_comment(&mut self) {
        while let Some((_, c)) = self.chars.peek().copied() {
            if c == '\n' {
                break;
            }
            self.chars.next();
        }
    }

    fn skip_heredoc_bodies(&mut self) {
        for (delimiter, strip_tabs) in std::mem::take(&mut self.heredocs) {
            loop {
                let mut line = String::new();
                let mut ended = true;
                for (_, c) in self.chars.by_ref() {
                    if c == '\n' {
                        ended = false;
                        break;
                    }
                    line.push(c);
                }
                let line = if strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    &line
                };
                if line == delimiter || ended {
                    break;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argvs(text: &str) -> Vec<Vec<String>> {
        segments(text).iter().map(|s| s.argv().to_vec()).collect()
    }

    #[test]
    fn exec_4_first_command_after_assignments() {
        assert_eq!(
            first_command_name("sleep 5 && npm test").as_deref(),
            Some("sleep")
        );
        assert_eq!(
            first_command_name("FOO=1 BAR='x y' sleep 5").as_deref(),
            Some("sleep")
        );
        assert_eq!(
            first_command_name("echo a; sleep 3").as_deref(),
            Some("echo")
        );
        assert_eq!(first_command_name("  'sleep' 1").as_deref(), Some("sleep"));
        assert_eq!(first_command_name("npm test").as_deref(), Some("npm"));
    }

    #[test]
    fn out_3_last_command_of_the_chain() {
        let last = last_segment("cd src && grep -n foo *.rs | head -5").unwrap();
        assert_eq!(last.argv(), ["head", "-5"]);
        assert_eq!(last.connector, Connector::Pipe);
        let last = last_segment("make; diff a b 2>&1").unwrap();
        assert_eq!(last.argv(), ["diff", "a", "b"]);
        let last = last_segment("git diff --quiet # done").unwrap();
        assert_eq!(last.argv(), ["git", "diff", "--quiet"]);
    }

    #[test]
    fn quotes_escapes_and_substitutions() {
        assert_eq!(
            argvs(r#"echo "a;b" 'c|d' e\ f $(date; echo) "x$(y)""#),
            vec![vec!["echo", "a;b", "c|d", "e f", "$(date; echo)", "x$(y)"]]
        );
        assert_eq!(
            argvs("comm -23 <(echo a) <(echo b)"),
            vec![vec!["comm", "-23", "<(echo a)", "<(echo b)"]]
        );
    }

    #[test]
    fn heredoc_bodies_are_not_commands() {
        let text = "cat <<'EOF' > out.txt\nrm -rf /\nEOF\ngrep x out.txt";
        assert_eq!(argvs(text), vec![vec!["cat"], vec!["grep", "x", "out.txt"]]);
        assert!(segments(text)[0].reads_redirected_input);
        let text = "cat <<-END\n\tstuff\n\tEND\necho done";
        assert_eq!(argvs(text), vec![vec!["cat"], vec!["echo", "done"]]);
    }

    #[test]
    fn redirect_targets_are_not_arguments() {
        let seg = &segments("grep foo < input.txt > out 2>&1")[0];
        assert_eq!(seg.argv(), ["grep", "foo"]);
        assert!(seg.reads_redirected_input);
        assert_eq!(argvs("echo hi &> log"), vec![vec!["echo", "hi"]]);
    }
}
