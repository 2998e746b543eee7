//! `grep` with GNU's flags and output, gitignore-aware when it walks directories
//! (SEARCH-1, SEARCH-5, SEARCH-6, SEARCH-8, SEARCH-9).

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use crate::pattern::{Dialect, Flavor, PatternError, Target, has_backreference, translate};

mod matcher;
mod options;
mod scan;

use matcher::*;
pub use options::*;

/// Output that remembers its first write error instead of failing each write: the
/// search stops, and the run ends with GNU's `write error` (exit 2).
struct Sink<W: Write> {
    inner: W,
    error: Option<io::Error>,
}

impl<W: Write> Sink<W> {
    fn new(inner: W) -> Sink<W> {
        Sink { inner, error: None }
    }

    fn put(&mut self, bytes: &[u8]) {
        if self.error.is_none()
            && let Err(error) = self.inner.write_all(bytes)
        {
            self.error = Some(error);
        }
    }

    fn number(&mut self, n: u64) {
        self.put(n.to_string().as_bytes());
    }

    fn flush(&mut self) {
        if self.error.is_none()
            && let Err(error) = self.inner.flush()
        {
            self.error = Some(error);
        }
    }

    fn failed(&self) -> bool {
        self.error.is_some()
    }
}

/// An OS error in the C library's words, without Rust's `(os error N)`.
pub(crate) fn os_message(error: &io::Error) -> String {
    let text = error.to_string();
    match text.rfind(" (os error ") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}

/// The state of one run, writing to `W` (stdout, or one file's buffer in a worker).
struct Run<'a, W: Write> {
    o: &'a Options,
    matcher: &'a Matcher,
    out: Sink<W>,
    matched_any: bool,
    error: bool,
    show_names: bool,
    /// A context group was printed (for the `--` between groups, across files too).
    printed_group: bool,
    /// Binary-file notes of walked files, printed in walk order by the main thread.
    notes: Vec<String>,
    /// Standard output's file when it is a regular file (device, inode): an input that
    /// is the same file is refused, as GNU refuses it, instead of reading its own output.
    output_file: Option<(u64, u64)>,
}

/// One input's search state while it streams through.
#[derive(Default)]
struct Scan {
    /// Lines and bytes before the data not yet scanned.
    line_no: u64,
    offset: u64,
    count: u64,
    after_left: usize,
    /// The last lines not printed, for `-B`: (line number, offset, text).
    before: std::collections::VecDeque<(u64, u64, Vec<u8>)>,
    last_printed: Option<u64>,
    /// `-m` was reached: only trailing context is left to print.
    stopped: bool,
    done: bool,
    /// The selected-line count when a NUL byte made the input binary: from there on NUL
    /// bytes end lines, and the next match ends the input with a note (GNU).
    binary_from: Option<u64>,
    /// A line (or match) to print was not valid in the locale and was left out.
    encoding_error: bool,
    /// `-I` found a NUL byte: the input counts as having no match, and no note is due.
    binary_skipped: bool,
    /// `-T`: numbers are padded to this width (GNU: the digits of the input's size).
    width: usize,
    /// Where the input should be left once `-m` stops it: after the last selected line.
    resume_at: Option<u64>,
}

/// Input is read and searched this many bytes at a time.
const CHUNK: usize = 128 * 1024;

/// A file walked by a recursive search is skipped as binary for a NUL byte this early.
const BINARY_PROBE: usize = 32 * 1024;

fn line_end(chunk: &[u8], from: usize, eol: u8) -> usize {
    memchr::memchr(eol, &chunk[from..]).map_or(chunk.len(), |i| from + i)
}

fn count_lines(bytes: &[u8], eol: u8) -> u64 {
    let ends = memchr::memchr_iter(eol, bytes).count() as u64;
    ends + u64::from(bytes.last().is_some_and(|&b| b != eol))
}

fn digits(mut n: u64) -> usize {
    let mut width = 1;
    while n >= 10 {
        n /= 10;
        width += 1;
    }
    width
}

/// `--include`, `--exclude` and `--exclude-dir` as GNU reads them: the last matching
/// glob decides; with none matching a file is searched unless the first is `--include`.
fn file_selected(globs: &[(bool, String)], names: &[&str]) -> bool {
    for (include, glob) in globs.iter().rev() {
        if names.iter().any(|n| wavesh_glob::fnmatch(glob, n)) {
            return *include;
        }
    }
    !globs.first().is_some_and(|(include, _)| *include)
}

/// A command-line name's suffixes that GNU matches `--exclude` against: the whole name
/// and each part after a `/`.
fn name_suffixes(name: &str) -> Vec<&str> {
    let mut out = vec![name];
    for (i, c) in name.char_indices() {
        if c == '/' && i + 1 < name.len() && !name[i + 1..].starts_with('/') {
            out.push(&name[i + 1..]);
        }
    }
    out
}

/// Runs grep with parsed options; returns the exit code (0 match, 1 none, 2 error).
pub fn run(o: &Options) -> i32 {
    if let Some(info) = o.info {
        return print_info(info);
    }
    if let Some(message) = &o.fatal {
        eprintln_grep(message);
        return 2;
    }
    if let Some(value) = o.colors.as_ref().and_then(|c| c.legacy.as_ref()) {
        eprintln_grep(&format!(
            "warning: GREP_COLOR='{value}' is deprecated; use GREP_COLORS='mt={value}'"
        ));
    }
    let matcher = match Matcher::new(o) {
        Ok(m) => m,
        Err(errors) => {
            for error in errors.lines() {
                eprintln_grep(error);
            }
            return 2;
        }
    };
    // GNU reads no input when no line can be selected (and -L is not listing files).
    let all_empty = !o.patterns.is_empty() && o.patterns.iter().all(String::is_empty);
    let nothing = o.max_count == Some(0)
        || (o.patterns.is_empty() && !o.invert)
        || (all_empty && o.invert && !o.line && !o.word);
    if nothing && !o.files_without_match && !o.list_files {
        return 1;
    }
    let stdout = io::stdout();
    let mut files = o.files.clone();
    // A directory is searched recursively even without -r (SEARCH-8, a documented
    // difference from GNU grep); `grep -r PATTERN` searches ".".
    let any_dir = files.iter().any(|f| Path::new(f).is_dir());
    let walk = o.recursive || any_dir;
    let walks_cwd = files.is_empty() && o.recursive;
    if walks_cwd {
        files.push(".".into());
    }
    let show_names = o.with_filename.unwrap_or(if o.rg_names {
        walks_cwd || files.len() > 1 || any_dir
    } else {
        files.len() > 1 || walk
    });
    let mut run = Run {
        o,
        matcher: &matcher,
        out: Sink::new(io::BufWriter::with_capacity(64 * 1024, stdout.lock())),
        matched_any: false,
        error: false,
        show_names,
        printed_group: false,
        notes: Vec::new(),
        output_file: output_file(),
    };
    let label = o.label.clone().unwrap_or_else(|| "(standard input)".into());
    if files.is_empty() {
        run.search_stdin(&label);
    }
    for file in &files {
        if (run.o.quiet && run.matched_any) || run.out.failed() {
            break;
        }
        if file == "-" {
            run.search_stdin(&label);
        } else if Path::new(file).is_dir() && !o.recursive && o.directories.is_some() {
            // -d skip: nothing; -d read: GNU's error for reading a directory.
            if o.directories == Some(Directories::Read) {
                run.error = true;
                if !o.no_messages {
                    eprintln_grep(&format!("{file}: Is a directory"));
                }
            }
        } else if o.skip_devices && is_device(file) {
            // -D skip: devices, FIFOs and sockets are not read.
        } else if Path::new(file).is_dir() {
            let base = file.trim_end_matches('/');
            let excluded = !matches!(base, "." | ".." | "")
                && o.exclude_dir.iter().any(|g| {
                    name_suffixes(base)
                        .iter()
                        .any(|n| wavesh_glob::fnmatch(g, n))
                });
            if !excluded {
                run.walk(file);
            }
        } else {
            if !file_selected(&o.file_globs, &name_suffixes(file)) {
                continue;
            }
            match std::fs::File::open(file) {
                Ok(f) => {
                    let metadata = f.metadata().ok();
                    if run.is_output(metadata.as_ref()) {
                        run.input_is_output(file);
                        continue;
                    }
                    let size = metadata.as_ref().filter(|m| m.is_file()).map(|m| m.len());
                    run.search_reader(file, f, false, size.is_none(), size);
                }
                Err(error) => run.report(file, &error),
            }
            run.print_notes();
        }
    }
    run.out.flush();
    if let Some(error) = &run.out.error {
        let message = format!("write error: {}", os_message(error));
        eprintln_grep(&message);
        return 2;
    }
    if run.error && !(o.quiet && run.matched_any) {
        2
    } else if run.matched_any {
        0
    } else {
        1
    }
}

/// What `--version` prints: wavesh's grep, and the GNU grep release it follows (the
/// last word, as scripts that check a grep's version read it).
const VERSION_TEXT: &str = concat!(
    "grep (wavesh ",
    env!("CARGO_PKG_VERSION"),
    "), compatible with GNU grep 3.8\n",
    "This grep is wavesh's own implementation, not GNU grep: it follows GNU grep 3.8's\n",
    "options, output and exit status, and reads .gitignore files when it walks\n",
    "directories. Arguments it does not support run the system grep.\n",
);

/// What `--help` prints.
const HELP_TEXT: &str = "\
Usage: grep [OPTION]... PATTERNS [FILE]...
Search each FILE (standard input for none or -, the working directory with -r and
no FILE) for lines matching PATTERNS, one pattern a line.

Patterns:
  -E, --extended-regexp     PATTERNS are extended regular expressions
  -F, --fixed-strings       PATTERNS are strings
  -G, --basic-regexp        PATTERNS are basic regular expressions (the default)
  -P, --perl-regexp         PATTERNS are Perl-compatible (PCRE2) expressions
  -e, --regexp=PATTERNS     use PATTERNS (may be given more than once)
  -f, --file=FILE           take patterns from FILE, one a line
  -i, --ignore-case         ignore case; --no-ignore-case does not (the default)
  -w, --word-regexp         match whole words only
  -x, --line-regexp         match whole lines only
  -z, --null-data           lines end with a NUL byte, not a newline

Output:
  -s, --no-messages         leave out messages about unreadable files
  -v, --invert-match        select the lines that do not match
  -V, --version             print the version and exit
      --help                print this help and exit
  -m, --max-count=NUM       stop after NUM selected lines
  -b, --byte-offset         print each line's byte offset
  -n, --line-number         print each line's number
      --line-buffered       flush the output after each line
  -H, --with-filename       print the file name of each match
  -h, --no-filename         print no file names
      --label=LABEL         the name shown for standard input
  -o, --only-matching       print only the matched parts of lines
  -q, --quiet, --silent     print nothing; the exit status tells
      --binary-files=TYPE   binary, text or without-match
  -a, --text                read binary files as text (--binary-files=text)
  -I                        skip binary files (--binary-files=without-match)
  -d, --directories=ACTION  read, skip or recurse
  -D, --devices=ACTION      read or skip devices, FIFOs and sockets
  -r, --recursive           search directories, not following symbolic links in them
  -R, --dereference-recursive  search directories, following symbolic links
      --include=GLOB        search only files whose name matches GLOB
      --exclude=GLOB        skip files whose name matches GLOB
      --exclude-from=FILE   skip files matching a glob in FILE
      --exclude-dir=GLOB    skip directories whose name matches GLOB
  -L, --files-without-match print only the names of files with no match
  -l, --files-with-matches  print only the names of files with a match
  -c, --count               print only each file's count of selected lines
  -T, --initial-tab         align the text after the prefixes with a tab
  -Z, --null                print a NUL byte after each file name

Context:
  -B, --before-context=NUM  print NUM lines before each match
  -A, --after-context=NUM   print NUM lines after each match
  -C, --context=NUM, -NUM   print NUM lines around each match
      --group-separator=SEP print SEP between context groups (-- by default)
      --no-group-separator  print nothing between context groups
      --color[=WHEN], --colour[=WHEN]
                            color matches and prefixes: never, always or auto;
                            GREP_COLORS says which colors (GNU grep's format)
  -U, --binary              accepted and ignored

The exit status is 0 when a line is selected, 1 when none is, 2 on an error (unless
-q selected a line).

This is wavesh's grep, not GNU grep: report its bugs to wavesh's maintainers, not to
GNU grep's address (bug-grep@gnu.org), since a difference from GNU grep 3.8 is a bug
in wavesh.
";

/// Prints `--help` or `--version` on standard output: exit 0, or GNU's write error
/// and 2 when it cannot be written.
fn print_info(info: Info) -> i32 {
    let text = match info {
        Info::Help => HELP_TEXT,
        Info::Version => VERSION_TEXT,
    };
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => 0,
        Err(error) => {
            eprintln_grep(&format!("write error: {}", os_message(&error)));
            2
        }
    }
}

/// A walk error in GNU grep's words: `PATH: No such file or directory`, `PATH: warning:
/// recursive directory loop`.
fn walk_error(error: &ignore::Error) -> String {
    let shown = |path: &Path| {
        let text = path.to_string_lossy();
        text.strip_prefix("./").unwrap_or(&text).to_owned()
    };
    match error {
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            walk_error(err)
        }
        ignore::Error::WithPath { path, err } => format!("{}: {}", shown(path), walk_error(err)),
        ignore::Error::Loop { child, .. } => {
            format!("{}: warning: recursive directory loop", shown(child))
        }
        ignore::Error::Io(io) => {
            // The walk's own wording ("IO error for operation on P: ...") trimmed to the
            // system's message.
            let message = os_message(io);
            message.rsplit(": ").next().unwrap_or(&message).to_owned()
        }
        other => other.to_string(),
    }
}

/// Whether a walked entry is the file standard output writes to.
fn is_same_file(entry: &ignore::DirEntry, output: Option<(u64, u64)>) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        output.is_some_and(|(dev, ino)| {
            entry.ino() == Some(ino) && entry.metadata().is_ok_and(|m| m.dev() == dev)
        })
    }
    #[cfg(not(unix))]
    {
        let _ = (entry, output);
        false
    }
}

/// The metadata of an open descriptor (through a duplicate of it).
#[cfg(unix)]
fn fd_metadata(fd: std::os::fd::BorrowedFd<'_>) -> Option<std::fs::Metadata> {
    let file = std::fs::File::from(fd.try_clone_to_owned().ok()?);
    file.metadata().ok()
}

/// Standard output's (device, inode) when it is a regular file.
fn output_file() -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        use std::os::unix::fs::MetadataExt;
        let metadata = fd_metadata(io::stdout().as_fd())?;
        metadata.is_file().then(|| (metadata.dev(), metadata.ino()))
    }
    #[cfg(not(unix))]
    None
}

impl<W: Write> Run<'_, W> {
    /// GNU checks for input that is the output only when lines are printed and more
    /// than one may be (with -q, -l, -L, -c or -m1 the loop cannot feed itself).
    fn checks_output(&self) -> bool {
        self.output_file.is_some() && self.printing() && self.o.max_count.is_none_or(|m| m > 1)
    }

    fn is_output(&self, metadata: Option<&std::fs::Metadata>) -> bool {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            self.checks_output()
                && metadata
                    .is_some_and(|m| m.is_file() && self.output_file == Some((m.dev(), m.ino())))
        }
        #[cfg(not(unix))]
        {
            let _ = metadata;
            false
        }
    }

    fn input_is_output(&mut self, name: &str) {
        self.error = true;
        if !self.o.no_messages {
            eprintln_grep(&format!("{name}: input file is also the output"));
        }
    }

    /// Standard input, streamed. A regular file left by `-m` is positioned just after the
    /// last selected line, as GNU leaves it for the next reader (`{ grep -m1 x; cat; } <f`).
    fn search_stdin(&mut self, label: &str) {
        let stdin = io::stdin();
        #[cfg(unix)]
        let (metadata, start) = {
            use std::os::fd::AsFd;
            let metadata = fd_metadata(stdin.as_fd()).filter(std::fs::Metadata::is_file);
            let start = metadata.as_ref().and_then(|_| {
                rustix::fs::seek(stdin.as_fd(), rustix::fs::SeekFrom::Current(0)).ok()
            });
            (metadata, start)
        };
        #[cfg(not(unix))]
        let metadata: Option<std::fs::Metadata> = None;
        if self.is_output(metadata.as_ref()) {
            self.input_is_output(label);
            return;
        }
        let size = metadata.as_ref().map(std::fs::Metadata::len);
        let regular = metadata.is_some();
        let resume = self.search_reader(label, stdin.lock(), false, !regular, size);
        #[cfg(unix)]
        if let (Some(start), Some(resume)) = (start, resume) {
            use std::os::fd::AsFd;
            let _ = rustix::fs::seek(stdin.as_fd(), rustix::fs::SeekFrom::Start(start + resume));
        }
        #[cfg(not(unix))]
        let _ = resume;
        self.print_notes();
    }
}

/// Whether `path` is a device, a FIFO or a socket.
fn is_device(path: &str) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        std::fs::metadata(path).is_ok_and(|m| {
            let t = m.file_type();
            t.is_block_device() || t.is_char_device() || t.is_fifo() || t.is_socket()
        })
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// Reads and searches one walked file into a buffer (in a worker thread).
fn search_file(
    o: &Options,
    matcher: &Matcher,
    show_names: bool,
    path: &Path,
    shown: &str,
) -> FileResult {
    if o.list_files {
        return FileResult {
            out: format!("{shown}\n").into_bytes(),
            matched: true,
            grouped: false,
            error: None,
            notes: Vec::new(),
        };
    }
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(error) => return FileResult::error(error_message(shown, &error)),
    };
    let mut run = Run {
        o,
        matcher,
        out: Sink::new(Vec::new()),
        matched_any: false,
        error: false,
        show_names,
        printed_group: false,
        notes: Vec::new(),
        output_file: None,
    };
    let size = file.metadata().ok().map(|m| m.len());
    run.search_reader(shown, file, true, false, size);
    let context = o.context_given;
    FileResult {
        grouped: context && run.printed_group,
        matched: run.matched_any,
        out: run.out.inner,
        error: None,
        notes: run.notes,
    }
}

/// The name error messages start with: `grep` unless rg mode set it.
pub(crate) static PROGRAM: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();

/// Directory names never descended into (SEARCH-9).
const VCS_DIRS: &[&str] = &[".git", ".hg", ".svn", ".bzr", "CVS", "_darcs", ".jj", ".sl"];

/// A walked file to search (path, name shown), or a walk error's message.
type Work = Result<(PathBuf, String), String>;

/// One walked file's results, made by a worker and printed in walk order.
struct FileResult {
    out: Vec<u8>,
    matched: bool,
    /// The output starts a context group (needs a `--` after an earlier one).
    grouped: bool,
    /// An error message for stderr, after `grep: `.
    error: Option<String>,
    /// Notes for stderr (binary file matches), after the output.
    notes: Vec<String>,
}

impl FileResult {
    fn error(message: String) -> FileResult {
        FileResult {
            out: Vec::new(),
            matched: false,
            grouped: false,
            error: Some(message),
            notes: Vec::new(),
        }
    }
}

/// GNU grep's wording of a file error.
fn error_message(file: &str, error: &io::Error) -> String {
    let message = match error.kind() {
        io::ErrorKind::NotFound => "No such file or directory".to_owned(),
        io::ErrorKind::PermissionDenied => "Permission denied".to_owned(),
        _ => error.to_string(),
    };
    format!("{file}: {message}")
}

impl<W: Write> Run<'_, W> {
    fn walk(&mut self, root: &str) {
        let mut builder = ignore::WalkBuilder::new(root);
        builder
            .hidden(self.o.skip_hidden)
            .git_ignore(!self.o.no_ignore)
            .git_global(false)
            .git_exclude(false)
            // rg also reads .ignore and .rgignore; grep only .gitignore.
            .ignore(self.o.skip_hidden && !self.o.no_ignore)
            .parents(!self.o.no_ignore)
            .require_git(false)
            .follow_links(self.o.dereference)
            .sort_by_file_name(Ord::cmp);
        if let Some(overrides) = &self.o.overrides {
            builder.overrides(overrides.clone());
        }
        if let Some(types) = &self.o.types {
            builder.types(types.clone());
        }
        let exclude_dir = self.o.exclude_dir.clone();
        let skip_vcs = !self.o.keep_vcs_dirs;
        builder.filter_entry(move |entry| {
            let name = entry.file_name().to_string_lossy();
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            !(is_dir
                && entry.depth() > 0
                && ((skip_vcs && VCS_DIRS.contains(&name.as_ref()))
                    || exclude_dir.iter().any(|g| wavesh_glob::fnmatch(g, &name))))
        });
        let o = self.o;
        let matcher = self.matcher;
        let show_names = self.show_names;
        let stop = std::sync::atomic::AtomicBool::new(false);
        // Files travel in batches: one hand-over per file costs more than a small search.
        const BATCH: usize = 32;
        let (work_tx, work_rx) = std::sync::mpsc::sync_channel::<Vec<(usize, Work)>>(16);
        let work_rx = std::sync::Mutex::new(work_rx);
        let (done_tx, done_rx) = std::sync::mpsc::channel::<Vec<(usize, FileResult)>>();
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
        std::thread::scope(|scope| {
            // Workers read and search; the walk stays in order on this thread's helper
            // and results are printed in walk order, so output is deterministic.
            for _ in 0..workers {
                let done_tx = done_tx.clone();
                let (work_rx, stop) = (&work_rx, &stop);
                scope.spawn(move || {
                    loop {
                        let next = work_rx.lock().map(|rx| rx.recv());
                        let Ok(Ok(batch)) = next else { return };
                        if stop.load(std::sync::atomic::Ordering::Relaxed) {
                            continue;
                        }
                        let results = batch
                            .into_iter()
                            .map(|(index, work)| {
                                let result = match work {
                                    Ok((path, shown)) => {
                                        search_file(o, matcher, show_names, &path, &shown)
                                    }
                                    Err(message) => FileResult::error(message),
                                };
                                (index, result)
                            })
                            .collect();
                        if done_tx.send(results).is_err() {
                            return;
                        }
                    }
                });
            }
            drop(done_tx);
            let globs = &o.file_globs;
            let output = if self.checks_output() {
                self.output_file
            } else {
                None
            };
            let stop = &stop;
            scope.spawn(move || {
                let mut index = 0;
                let mut batch = Vec::with_capacity(BATCH);
                let mut push = |item: (usize, Work)| {
                    batch.push(item);
                    batch.len() < BATCH
                        || work_tx
                            .send(std::mem::replace(&mut batch, Vec::with_capacity(BATCH)))
                            .is_ok()
                };
                for entry in builder.build() {
                    if stop.load(std::sync::atomic::Ordering::Relaxed) {
                        break;
                    }
                    let entry = match entry {
                        Ok(entry) => entry,
                        Err(error) => {
                            // Reported in walk order, like a file's output.
                            if !push((index, Err(walk_error(&error)))) {
                                break;
                            }
                            index += 1;
                            continue;
                        }
                    };
                    if !entry.file_type().is_some_and(|t| t.is_file()) {
                        continue;
                    }
                    let name = entry.file_name().to_string_lossy();
                    if !file_selected(globs, &[&name]) {
                        continue;
                    }
                    let path = entry.path().to_string_lossy();
                    // Paths without "./" (SEARCH-1): shorter for the model, the same as
                    // `grep -r x`.
                    let shown = path.strip_prefix("./").unwrap_or(&path).to_owned();
                    if is_same_file(&entry, output) {
                        let message = format!("{shown}: input file is also the output");
                        if !push((index, Err(message))) {
                            break;
                        }
                        index += 1;
                        continue;
                    }
                    if !push((index, Ok((entry.into_path(), shown)))) {
                        break;
                    }
                    index += 1;
                }
                if !batch.is_empty() {
                    let _ = work_tx.send(batch);
                }
            });
            let mut pending = std::collections::BTreeMap::new();
            let mut next = 0;
            for (index, result) in done_rx.into_iter().flatten() {
                pending.insert(index, result);
                while let Some(result) = pending.remove(&next) {
                    next += 1;
                    if (self.o.quiet && self.matched_any) || self.out.failed() {
                        continue;
                    }
                    self.take(result);
                    if (self.o.quiet && self.matched_any) || self.out.failed() {
                        stop.store(true, std::sync::atomic::Ordering::Relaxed);
                    }
                }
            }
        });
    }

    /// Prints a worker's result for one file.
    fn take(&mut self, result: FileResult) {
        if let Some(message) = result.error {
            self.error = true;
            if !self.o.no_messages {
                eprintln_grep(&message);
            }
            return;
        }
        if result.grouped && self.printed_group {
            self.group_separator();
        }
        self.out.put(&result.out);
        self.matched_any |= result.matched;
        self.printed_group |= result.grouped;
        self.notes.extend(result.notes);
        self.print_notes();
    }
}

/// GNU's error prefix on every platform (SEARCH-9).
#[expect(clippy::print_stderr, reason = "grep's own error output")]
fn eprintln_grep(message: &str) {
    let program = PROGRAM.get().copied().unwrap_or("grep");
    eprintln!("{program}: {message}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_1_an_absent_locale_is_the_c_locale_as_in_glibc() {
        let dir = std::env::temp_dir().join(format!("wavesh-locales-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("de_DE.utf8")).unwrap();
        std::fs::write(dir.join("de_DE.utf8/LC_CTYPE"), "").unwrap();
        // A locale-archive as glibc lays it out: magic, serial, name hash, then the string
        // table's offset and length.
        let strings = b"en_US.utf8\0ja_JP.eucjp\0";
        let mut archive = Vec::new();
        for word in [
            0xde02_0109u32,
            1,
            0,
            0,
            0,
            64,
            strings.len() as u32,
            64,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
        ] {
            archive.extend_from_slice(&word.to_ne_bytes());
        }
        archive.extend_from_slice(strings);
        std::fs::write(dir.join("locale-archive"), archive).unwrap();
        for (name, expected) in [
            ("en_US.UTF-8", Locale::Utf8),
            ("de_DE.UTF-8", Locale::Utf8),
            ("C.UTF-8", Locale::Utf8),
            ("ja_JP.eucJP", Locale::Other("ja_JP.eucJP".to_owned())),
            ("fr_FR.UTF-8", Locale::C),
            ("zh_CN", Locale::C),
            ("POSIX", Locale::C),
        ] {
            assert_eq!(classify_locale(name, &dir), expected, "{name}");
        }
        // Where glibc's directory is not there, the name alone decides.
        let nowhere = dir.join("absent");
        assert_eq!(classify_locale("fr_FR.UTF-8", &nowhere), Locale::Utf8);
        assert_eq!(
            classify_locale("zh_CN", &nowhere),
            Locale::Other("zh_CN".to_owned())
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
