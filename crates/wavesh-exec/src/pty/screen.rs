//! The emulated screen of a tty task (PTY-3): what a terminal of the task's size would
//! show, with the lines that scrolled off above it.

use super::TtySize;

/// Lines kept above the screen.
pub const SCROLLBACK_LINES: usize = 2000;

/// A terminal emulator fed with what the command prints.
pub(super) struct Screen {
    parser: vt100::Parser,
}

impl Screen {
    pub(super) fn new(size: TtySize) -> Screen {
        let rows = std::num::NonZeroU16::new(size.rows.max(1)).unwrap_or(std::num::NonZeroU16::MIN);
        let columns =
            std::num::NonZeroU16::new(size.columns.max(1)).unwrap_or(std::num::NonZeroU16::MIN);
        Screen {
            parser: vt100::Parser::new(rows, columns, SCROLLBACK_LINES),
        }
    }

    /// Feeds `bytes`; returns what a terminal answers to the queries among them.
    pub(super) fn process(&mut self, bytes: &[u8]) -> Vec<u8> {
        let mut answers = Vec::new();
        // The cursor position report (`ESC [ 6 n`): line editors (prompt_toolkit,
        // some REPLs) ask for it and wait for the answer. It is answered where it
        // stands, after the bytes before it moved the cursor.
        let mut rest = bytes;
        while let Some(at) = find(rest, b"\x1b[6n") {
            self.parser.process(&rest[..at + 4]);
            let (row, column) = self.parser.screen().cursor_position();
            answers.extend_from_slice(format!("\x1b[{};{}R", row + 1, column + 1).as_bytes());
            rest = &rest[at + 4..];
        }
        self.parser.process(rest);
        answers
    }

    /// The scrollback, then the screen, as plain text: trailing blank lines and
    /// trailing spaces removed.
    pub(super) fn render(&mut self) -> String {
        let screen = self.parser.screen_mut();
        let (rows, columns) = screen.size();
        let rows = usize::from(rows.get());
        let mut lines: Vec<String> = Vec::new();
        let total = screen.scrollback_len();
        // The view at offset `o` starts `o` lines above the screen; its first
        // `min(o, rows)` rows are scrollback.
        let mut offset = total;
        while offset > 0 {
            screen.set_scrollback(offset);
            let take = offset.min(rows);
            lines.extend(screen.rows(0, columns.get()).take(take));
            offset -= take;
        }
        screen.set_scrollback(0);
        lines.extend(screen.rows(0, columns.get()));
        while lines.last().is_some_and(|line| line.trim().is_empty()) {
            lines.pop();
        }
        let mut text = String::new();
        for line in &lines {
            text.push_str(line.trim_end());
            text.push('\n');
        }
        text
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen() -> Screen {
        Screen::new(TtySize {
            columns: 20,
            rows: 4,
        })
    }

    #[test]
    fn pty_3_escape_sequences_never_reach_the_text() {
        let mut screen = screen();
        screen.process(b"\x1b[31mred\x1b[0m plain\r\n\x1b[2J\x1b[Hcleared\x1b[1;1H");
        let text = screen.render();
        assert_eq!(text, "cleared\n");
        assert!(!text.contains('\x1b'));
    }

    #[test]
    fn pty_3_scrollback_comes_before_the_screen() {
        let mut screen = screen();
        for n in 0..10 {
            screen.process(format!("line {n}\r\n").as_bytes());
        }
        let text = screen.render();
        let expected: String = (0..10).map(|n| format!("line {n}\n")).collect();
        assert_eq!(text, expected);
    }

    #[test]
    fn pty_3_cursor_position_queries_are_answered() {
        let mut screen = screen();
        let answers = screen.process(b"ab\x1b[6n");
        assert_eq!(answers, b"\x1b[1;3R");
        assert!(screen.process(b"plain").is_empty());
    }
}
