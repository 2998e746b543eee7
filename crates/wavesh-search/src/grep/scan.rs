//! One input's search: lines streamed through the matcher, with context, counts and
//! GNU's output.

use super::*;

impl<W: Write> Run<'_, W> {
    /// The line terminator: a newline, or NUL with `-z`.
    pub(super) fn eol(&self) -> u8 {
        if self.o.null_data { 0 } else { b'\n' }
    }

    pub(super) fn printing(&self) -> bool {
        let o = self.o;
        !(o.count || o.files_with_matches || o.files_without_match || o.quiet)
    }

    /// Streams `reader` through the search: lines are matched as they arrive, reading
    /// stops at `-m`, and memory holds one chunk (plus the longest line). `pipe`: flush
    /// what was found before each read that may wait. `size`: a regular file's size.
    /// Returns where `-m` stopped.
    pub(super) fn search_reader<R: Read>(
        &mut self,
        name: &str,
        mut reader: R,
        walked: bool,
        pipe: bool,
        size: Option<u64>,
    ) -> Option<u64> {
        let o = self.o;
        let mut st = Scan::default();
        if o.initial_tab {
            let largest = size.map_or(i64::MAX as u64, |s| s + u64::from(o.line_number));
            st.width = digits(largest);
        }
        if o.max_count == Some(0) {
            st.done = true;
        }
        let mut buf: Vec<u8> = Vec::with_capacity(CHUNK + 4096);
        let mut first = true;
        while !st.done {
            if pipe {
                self.out.flush();
            }
            let len = buf.len();
            buf.resize(len + CHUNK, 0);
            let n = match reader.read(&mut buf[len..]) {
                Ok(n) => n,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {
                    buf.truncate(len);
                    continue;
                }
                Err(error) => {
                    buf.truncate(len);
                    if error.kind() == io::ErrorKind::IsADirectory {
                        break;
                    }
                    self.report(name, &error);
                    break;
                }
            };
            buf.truncate(len + n);
            if n == 0 {
                if !buf.is_empty() {
                    self.scan_chunk(&mut st, name, &buf);
                }
                break;
            }
            if !o.text
                && !o.null_data
                && st.binary_from.is_none()
                && memchr::memchr(0, &buf[len..]).is_some()
            {
                if walked
                    && first
                    && memchr::memchr(0, &buf[..buf.len().min(BINARY_PROBE)]).is_some()
                {
                    // A recursive search skips binary files (SEARCH-1).
                    return None;
                }
                if o.skip_binary {
                    // -I: a binary file has no matching data.
                    st.count = 0;
                    st.binary_skipped = true;
                    break;
                }
                st.binary_from = Some(st.count);
            }
            if st.binary_from.is_some() {
                // GNU reads NUL bytes in a binary input as line ends.
                for b in &mut buf[len..] {
                    if *b == 0 {
                        *b = b'\n';
                    }
                }
            }
            first = false;
            if let Some(last) = memchr::memrchr(self.eol(), &buf) {
                self.scan_chunk(&mut st, name, &buf[..=last]);
                buf.drain(..=last);
            }
            if self.out.failed() {
                break;
            }
        }
        self.finish(&mut st, name);
        st.resume_at
    }

    /// Scans complete lines (the last one may lack its newline only at the end of input).
    pub(super) fn scan_chunk(&mut self, st: &mut Scan, name: &str, chunk: &[u8]) {
        let o = self.o;
        let mut pos = 0;
        while pos < chunk.len() && !st.done && !self.out.failed() {
            if !o.invert
                && !st.stopped
                && let Some(screen) = &self.matcher.screen
            {
                // An empty match after the last newline is no line's match.
                let found = screen
                    .find_at(chunk, pos)
                    .filter(|m| !(m.start() == chunk.len() && chunk.last() == Some(&self.eol())));
                let Some(m) = found else {
                    self.skip(st, name, &chunk[pos..]);
                    return;
                };
                let start = memchr::memrchr(self.eol(), &chunk[pos..m.start()])
                    .map_or(pos, |i| pos + i + 1);
                self.skip(st, name, &chunk[pos..start]);
                if st.done {
                    return;
                }
                let end = line_end(chunk, start, self.eol());
                let selected = (self.matcher.screen_exact && m.end() <= end)
                    || self.matcher.is_match(&chunk[start..end]);
                self.die_on_failure(name);
                pos = self.line(st, name, chunk, start, end, selected);
                continue;
            }
            let end = line_end(chunk, pos, self.eol());
            let selected = !st.stopped && self.matcher.is_match(&chunk[pos..end]) != o.invert;
            self.die_on_failure(name);
            pos = self.line(st, name, chunk, pos, end, selected);
        }
    }

    /// A matching error of PCRE2 ends grep at once, as it ends GNU grep (exit 2).
    pub(super) fn die_on_failure(&mut self, name: &str) {
        if let Some(message) = self.matcher.failure.get() {
            self.out.flush();
            eprintln_grep(&format!("{name}: {message}"));
            std::process::exit(2);
        }
    }

    /// Lines that are not selected, in one piece.
    pub(super) fn skip(&mut self, st: &mut Scan, name: &str, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        if (st.after_left > 0 || self.o.before > 0) && self.printing() {
            // Context to print or keep: line by line.
            let mut pos = 0;
            while pos < bytes.len() && !st.done {
                let end = line_end(bytes, pos, self.eol());
                pos = self.line(st, name, bytes, pos, end, false);
            }
            return;
        }
        st.offset += bytes.len() as u64;
        st.line_no += count_lines(bytes, self.eol());
    }

    /// One line, `chunk[start..end]`; returns where the next one starts.
    pub(super) fn line(
        &mut self,
        st: &mut Scan,
        name: &str,
        chunk: &[u8],
        start: usize,
        end: usize,
        selected: bool,
    ) -> usize {
        let o = self.o;
        let next = if end < chunk.len() { end + 1 } else { end };
        let text = &chunk[start..end];
        let (number, offset) = (st.line_no, st.offset);
        st.line_no += 1;
        st.offset += (next - start) as u64;
        let printing = self.printing();
        if st.stopped {
            // After -m, the trailing context is every following line, matching or not.
            if st.after_left > 0 {
                self.print_line(st, name, number, offset, text, b'-');
                st.last_printed = Some(number);
                st.after_left -= 1;
            }
            if st.after_left == 0 {
                st.done = true;
            }
            return next;
        }
        if selected {
            if o.count_matches && !o.invert {
                st.count += self
                    .matcher
                    .find_all(text)
                    .iter()
                    .filter(|(s, e)| s < e)
                    .count() as u64;
            } else {
                st.count += 1;
            }
            if o.quiet || o.files_with_matches || o.files_without_match {
                st.done = true;
                return next;
            }
            if printing {
                if st.binary_from.is_some() {
                    // GNU: a binary input's first match ends it; a note says it matched.
                    st.done = true;
                    return next;
                }
                self.print_before(st, name, number);
                self.print_line(st, name, number, offset, text, b':');
                st.last_printed = Some(number);
                self.printed_group = true;
                st.after_left = o.after;
            }
            if o.max_count.is_some_and(|m| st.count >= m) {
                st.stopped = true;
                st.resume_at = Some(st.offset);
                if st.after_left == 0 || !printing {
                    st.done = true;
                }
            }
        } else if printing && st.binary_from.is_none() && st.after_left > 0 {
            self.print_line(st, name, number, offset, text, b'-');
            st.last_printed = Some(number);
            st.after_left -= 1;
        } else if printing && o.before > 0 {
            st.before.push_back((number, offset, text.to_vec()));
            if st.before.len() > o.before {
                st.before.pop_front();
            }
        }
        next
    }

    /// The kept lines before a selected one, after a `--` where a group starts.
    pub(super) fn print_before(&mut self, st: &mut Scan, name: &str, number: u64) {
        let kept: Vec<(u64, u64, Vec<u8>)> = st
            .before
            .drain(..)
            .filter(|(n, _, _)| st.last_printed.is_none_or(|p| *n > p) && *n < number)
            .collect();
        let first = kept.first().map_or(number, |(n, _, _)| *n);
        if self.o.context_given {
            let gap = match st.last_printed {
                Some(p) => first > p + 1,
                None => self.printed_group,
            };
            if gap {
                self.group_separator();
            }
        }
        for (n, offset, text) in kept {
            self.print_line(st, name, n, offset, &text, b'-');
        }
    }

    pub(super) fn prefix(
        &mut self,
        st: &Scan,
        name: &str,
        number: u64,
        offset: u64,
        separator: u8,
        empty: bool,
    ) {
        let o = self.o;
        if self.show_names {
            self.colored_name(name);
            if o.null_names {
                self.out.put(&[0]);
            } else {
                self.separator(separator);
            }
        }
        if o.line_number {
            self.colored_number(st.width, number + 1, |c| &c.line_number);
            self.separator(separator);
        }
        if o.byte_offset {
            self.colored_number(st.width, offset, |c| &c.byte_offset);
            self.separator(separator);
        }
        if o.initial_tab && !empty && (self.show_names || o.line_number || o.byte_offset) {
            self.out.put(b"\t");
        }
    }

    /// `bytes` in the color `which` picks (as they are without `--color`).
    pub(super) fn colored(&mut self, bytes: &[u8], which: impl Fn(&crate::color::Colors) -> &str) {
        let o = self.o;
        match &o.colors {
            Some(colors) => self.paint(colors, bytes, which(colors)),
            None => self.out.put(bytes),
        }
    }

    /// `bytes` between the sequences that start and end `sgr` (none for an empty one).
    pub(super) fn paint(&mut self, colors: &crate::color::Colors, bytes: &[u8], sgr: &str) {
        if sgr.is_empty() || bytes.is_empty() {
            self.out.put(bytes);
            return;
        }
        self.out.put(&colors.start(sgr));
        self.out.put(bytes);
        self.out.put(colors.end(sgr));
    }

    pub(super) fn colored_name(&mut self, name: &str) {
        self.colored(name.as_bytes(), |c| &c.file_name);
    }

    pub(super) fn separator(&mut self, separator: u8) {
        self.colored(&[separator], |c| &c.separator);
    }

    pub(super) fn colored_number(
        &mut self,
        width: usize,
        n: u64,
        which: impl Fn(&crate::color::Colors) -> &str,
    ) {
        let text = if width > 0 {
            format!("{n:>width$}")
        } else {
            n.to_string()
        };
        self.colored(text.as_bytes(), which);
    }

    /// Prints a selected (`:`) or context (`-`) line as GNU does: with -o only the
    /// matches of the lines that are "matching" (selected ones, or context ones under
    /// -v). Text that is not valid in the locale is left out (GNU), noted for the end.
    pub(super) fn print_line(
        &mut self,
        st: &mut Scan,
        name: &str,
        number: u64,
        offset: u64,
        text: &[u8],
        separator: u8,
    ) {
        let o = self.o;
        let check = self.matcher.utf8 && !o.text;
        // A "matching" line: a selected one, or a context one under -v.
        let matching = (separator == b':') != o.invert;
        if !o.only_matching {
            if check && !self.matcher.valid(text) {
                st.encoding_error = true;
                return;
            }
            self.prefix(st, name, number, offset, separator, text.is_empty());
            match &o.colors {
                Some(colors) => self.colored_line(colors, text, separator == b':', matching),
                None => self.out.put(text),
            }
            self.end_line();
            return;
        }
        if !matching {
            return;
        }
        let separator = if o.invert { b'-' } else { b':' };
        for (start, end) in self.matcher.find_all(text) {
            if start == end {
                continue;
            }
            if check && !self.matcher.valid(&text[start..end]) {
                st.encoding_error = true;
                return;
            }
            self.prefix(st, name, number, offset + start as u64, separator, false);
            self.colored(&text[start..end], |c| c.matched(separator == b':'));
            self.end_line();
        }
    }

    /// A line's text with `--color`: its matches in the match color (when it is a
    /// matching line), the rest in the line color.
    pub(super) fn colored_line(
        &mut self,
        colors: &crate::color::Colors,
        text: &[u8],
        selected: bool,
        matching: bool,
    ) {
        let line = colors.line(selected, self.o.invert);
        let matched = colors.matched(selected);
        let mut at = 0;
        if matching && !matched.is_empty() {
            for (start, end) in self.matcher.find_all(text) {
                if start == end || start < at {
                    continue;
                }
                // GNU opens the line color before each match's lead, and the match
                // color's end closes both.
                if !line.is_empty() {
                    self.out.put(&colors.start(line));
                }
                self.out.put(&text[at..start]);
                self.paint(colors, &text[start..end], matched);
                at = end;
            }
        }
        self.paint(colors, &text[at..], line);
    }

    /// The line between context groups.
    pub(super) fn group_separator(&mut self) {
        let text = match &self.o.group_separator {
            None => "--".to_owned(),
            Some(Some(text)) => text.clone(),
            Some(None) => return,
        };
        self.colored(text.as_bytes(), |c| &c.separator);
        self.out.put(b"\n");
    }

    /// Ends a printed line with the line terminator (`--line-buffered`: and flushes).
    pub(super) fn end_line(&mut self) {
        self.out.put(&[self.eol()]);
        if self.o.line_buffered {
            self.out.flush();
        }
    }

    /// Ends a file name in -l, -L and -c output: a newline, or NUL with `-Z`.
    pub(super) fn name_end(&mut self, otherwise: u8) {
        self.out
            .put(&[if self.o.null_names { 0 } else { otherwise }]);
    }

    /// What is printed once an input is done: counts, names, the binary note.
    pub(super) fn finish(&mut self, st: &mut Scan, name: &str) {
        let o = self.o;
        self.matched_any |= st.count > 0;
        if o.quiet {
            return;
        }
        if o.count && !(o.count_nonzero_only && st.count == 0) {
            if self.show_names {
                self.colored_name(name);
                if o.null_names {
                    self.out.put(&[0]);
                } else {
                    self.separator(b':');
                }
            }
            self.out.number(st.count);
            self.out.put(b"\n");
        }
        if o.files_with_matches && st.count > 0 {
            self.colored_name(name);
            self.name_end(b'\n');
        }
        if o.files_without_match && st.count == 0 {
            self.colored_name(name);
            self.name_end(b'\n');
        }
        let binary_match = st.binary_from.is_some_and(|from| from < st.count);
        if self.printing() && !o.skip_binary && (st.encoding_error || binary_match) {
            self.notes.push(format!("{name}: binary file matches"));
        }
    }

    pub(super) fn report(&mut self, file: &str, error: &io::Error) {
        self.error = true;
        if !self.o.no_messages {
            eprintln_grep(&error_message(file, error));
        }
    }

    /// Prints binary-file notes on stderr after the output before them.
    pub(super) fn print_notes(&mut self) {
        if self.notes.is_empty() {
            return;
        }
        self.out.flush();
        for note in std::mem::take(&mut self.notes) {
            eprintln_grep(&note);
        }
    }
}
