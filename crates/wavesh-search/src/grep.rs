//! `grep` with GNU's flags and output, gitignore-aware when it walks directories
//! (SEARCH-1, SEARCH-5, SEARCH-6, SEARCH-8, SEARCH-9).

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use crate::pattern::{Dialect, bre_to_ere, has_backreference};

/// Why the arguments are not handled here: the system grep runs instead (SEARCH-5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported(pub String);

/// Parsed options.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub(crate) patterns: Vec<String>,
    pub(crate) dialect: Dialect,
    pub(crate) ignore_case: bool,
    pub(crate) invert: bool,
    pub(crate) word: bool,
    pub(crate) line: bool,
    pub(crate) count: bool,
    pub(crate) files_with_matches: bool,
    pub(crate) files_without_match: bool,
    pub(crate) only_matching: bool,
    pub(crate) quiet: bool,
    pub(crate) no_messages: bool,
    pub(crate) byte_offset: bool,
    pub(crate) with_filename: Option<bool>,
    pub(crate) line_number: bool,
    pub(crate) max_count: Option<u64>,
    pub(crate) after: usize,
    pub(crate) before: usize,
    pub(crate) recursive: bool,
    pub(crate) text: bool,
    pub(crate) skip_binary: bool,
    pub(crate) label: Option<String>,
    pub(crate) include: Vec<String>,
    pub(crate) exclude: Vec<String>,
    pub(crate) exclude_dir: Vec<String>,
    pub(crate) initial_tab: bool,
    pub(crate) files: Vec<String>,
    /// rg: skip hidden files and directories.
    pub(crate) skip_hidden: bool,
    /// rg: read no ignore file.
    pub(crate) no_ignore: bool,
    /// rg: `-g` globs.
    pub(crate) overrides: Option<ignore::overrides::Override>,
    /// rg: `-t`/`-T` file types.
    pub(crate) types: Option<ignore::types::Types>,
    /// rg `--files`: list the files a search would read.
    pub(crate) list_files: bool,
    /// rg `-c`: files with no match are not listed.
    pub(crate) count_nonzero_only: bool,
    /// rg: VCS directories are not skipped by name (hidden ones are, unless --hidden).
    pub(crate) keep_vcs_dirs: bool,
}

fn number(value: &str, flag: &str) -> Result<u64, Unsupported> {
    value
        .parse()
        .map_err(|_| Unsupported(format!("{flag} {value}")))
}

/// Parses GNU grep's arguments. Anything not handled here is `Unsupported`.
pub fn parse(args: &[String]) -> Result<Options, Unsupported> {
    let mut o = Options::default();
    let mut positional = Vec::new();
    let mut pattern_given = false;
    let mut i = 0;
    let mut context: Option<usize> = None;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if arg == "--" {
            positional.extend(args[i..].iter().cloned());
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_owned())),
                None => (long, None),
            };
            let mut value = || -> Result<String, Unsupported> {
                if let Some(v) = inline.clone() {
                    return Ok(v);
                }
                let v = args
                    .get(i)
                    .cloned()
                    .ok_or_else(|| Unsupported(format!("--{name} without a value")))?;
                i += 1;
                Ok(v)
            };
            match name {
                "regexp" => {
                    o.patterns.push(value()?);
                    pattern_given = true;
                }
                "file" => {
                    read_pattern_file(&value()?, &mut o.patterns)?;
                    pattern_given = true;
                }
                "extended-regexp" => o.dialect = Dialect::Extended,
                "fixed-strings" => o.dialect = Dialect::Fixed,
                "basic-regexp" => o.dialect = Dialect::Basic,
                "perl-regexp" => o.dialect = Dialect::Perl,
                "ignore-case" => o.ignore_case = true,
                "no-ignore-case" => o.ignore_case = false,
                "invert-match" => o.invert = true,
                "word-regexp" => o.word = true,
                "line-regexp" => o.line = true,
                "count" => o.count = true,
                "files-with-matches" => o.files_with_matches = true,
                "files-without-match" => o.files_without_match = true,
                "only-matching" => o.only_matching = true,
                "quiet" | "silent" => o.quiet = true,
                "no-messages" => o.no_messages = true,
                "byte-offset" => o.byte_offset = true,
                "with-filename" => o.with_filename = Some(true),
                "no-filename" => o.with_filename = Some(false),
                "line-number" => o.line_number = true,
                "max-count" => o.max_count = Some(number(&value()?, "--max-count")?),
                "after-context" => o.after = number(&value()?, "--after-context")? as usize,
                "before-context" => o.before = number(&value()?, "--before-context")? as usize,
                "context" => context = Some(number(&value()?, "--context")? as usize),
                "recursive" | "dereference-recursive" => o.recursive = true,
                "text" => o.text = true,
                "binary-files" => match value()?.as_str() {
                    "text" => o.text = true,
                    "without-match" => o.skip_binary = true,
                    "binary" => {}
                    other => return Err(Unsupported(format!("--binary-files={other}"))),
                },
                "label" => o.label = Some(value()?),
                "include" => o.include.push(value()?),
                "exclude" => o.exclude.push(value()?),
                "exclude-dir" => o.exclude_dir.push(value()?),
                "initial-tab" => o.initial_tab = true,
                "color" | "colour" => {
                    if let Some(v) = inline.clone()
                        && v != "never"
                        && v != "auto"
                    {
                        return Err(Unsupported(format!("--color={v}")));
                    }
                }
                _ => return Err(Unsupported(format!("--{name}"))),
            }
            continue;
        }
        if arg.len() > 1 && arg.starts_with('-') {
            let cluster: Vec<char> = arg[1..].chars().collect();
            if cluster.iter().all(char::is_ascii_digit) {
                context = Some(number(&arg[1..], "-NUM")? as usize);
                continue;
            }
            let mut j = 0;
            while j < cluster.len() {
                let flag = cluster[j];
                j += 1;
                let mut value = |j: &mut usize| -> Result<String, Unsupported> {
                    if *j < cluster.len() {
                        let v: String = cluster[*j..].iter().collect();
                        *j = cluster.len();
                        return Ok(v);
                    }
                    let v = args
                        .get(i)
                        .cloned()
                        .ok_or_else(|| Unsupported(format!("-{flag} without a value")))?;
                    i += 1;
                    Ok(v)
                };
                match flag {
                    'e' => {
                        o.patterns.push(value(&mut j)?);
                        pattern_given = true;
                    }
                    'f' => {
                        read_pattern_file(&value(&mut j)?, &mut o.patterns)?;
                        pattern_given = true;
                    }
                    'E' => o.dialect = Dialect::Extended,
                    'F' => o.dialect = Dialect::Fixed,
                    'G' => o.dialect = Dialect::Basic,
                    'P' => o.dialect = Dialect::Perl,
                    'i' | 'y' => o.ignore_case = true,
                    'v' => o.invert = true,
                    'w' => o.word = true,
                    'x' => o.line = true,
                    'c' => o.count = true,
                    'l' => o.files_with_matches = true,
                    'L' => o.files_without_match = true,
                    'o' => o.only_matching = true,
                    'q' => o.quiet = true,
                    's' => o.no_messages = true,
                    'b' => o.byte_offset = true,
                    'H' => o.with_filename = Some(true),
                    'h' => o.with_filename = Some(false),
                    'n' => o.line_number = true,
                    'm' => o.max_count = Some(number(&value(&mut j)?, "-m")?),
                    'A' => o.after = number(&value(&mut j)?, "-A")? as usize,
                    'B' => o.before = number(&value(&mut j)?, "-B")? as usize,
                    'C' => context = Some(number(&value(&mut j)?, "-C")? as usize),
                    'r' | 'R' => o.recursive = true,
                    'a' => o.text = true,
                    'I' => o.skip_binary = true,
                    'T' => o.initial_tab = true,
                    'U' => {}
                    other => return Err(Unsupported(format!("-{other}"))),
                }
            }
            continue;
        }
        positional.push(arg.clone());
    }
    if let Some(n) = context {
        if o.after == 0 {
            o.after = n;
        }
        if o.before == 0 {
            o.before = n;
        }
    }
    if !pattern_given {
        if positional.is_empty() {
            return Err(Unsupported("no pattern".into()));
        }
        // A pattern with newlines is several patterns.
        o.patterns
            .extend(positional.remove(0).split('\n').map(str::to_owned));
    }
    // -P on the backtracking engine (lookaround, back-references, \d): the same on
    // every platform, also where the system grep was built without PCRE. A pattern the
    // engine cannot read goes to the system grep.
    if o.dialect == Dialect::Perl
        && let Some(p) = o
            .patterns
            .iter()
            .find(|p| fancy_regex::Regex::new(p).is_err())
    {
        return Err(Unsupported(format!("-P {p}")));
    }
    o.files = positional;
    Ok(o)
}

fn read_pattern_file(path: &str, patterns: &mut Vec<String>) -> Result<(), Unsupported> {
    let text = std::fs::read_to_string(path).map_err(|_| Unsupported(format!("-f {path}")))?;
    patterns.extend(text.lines().map(str::to_owned));
    Ok(())
}

/// A compiled matcher for all patterns.
enum Matcher {
    Fast(regex::bytes::Regex, Option<regex::bytes::Regex>),
    Backtracking(fancy_regex::Regex, Option<regex::bytes::Regex>),
}

impl Matcher {
    fn new(o: &Options) -> Result<Matcher, String> {
        let translated: Vec<String> = o
            .patterns
            .iter()
            .map(|p| match o.dialect {
                Dialect::Fixed => regex::escape(p),
                Dialect::Basic => bre_to_ere(p),
                Dialect::Extended | Dialect::Perl => p.clone(),
            })
            .collect();
        let alternation = translated
            .iter()
            .map(|p| format!("(?:{p})"))
            .collect::<Vec<_>>()
            .join("|");
        let backreference = o.dialect == Dialect::Perl
            || (o.dialect != Dialect::Fixed && o.patterns.iter().any(|p| has_backreference(p)));
        let flags = if o.ignore_case { "(?i)" } else { "" };
        let (body, backtracking) = if o.line {
            (format!("^(?:{alternation})$"), backreference)
        } else if o.word {
            // Whole words: no word character just before or after (lookarounds).
            (format!(r"(?<!\w)(?:{alternation})(?!\w)"), true)
        } else {
            (alternation.clone(), backreference)
        };
        // Whole-buffer screening with the plain alternation where the regex crate can
        // take it (no back-references): most files have no match at all.
        let prefilter = if backreference {
            None
        } else {
            regex::bytes::Regex::new(&format!("(?m){flags}{alternation}")).ok()
        };
        if backtracking {
            return fancy_regex::Regex::new(&format!("{flags}{body}"))
                .map(|re| Matcher::Backtracking(re, prefilter))
                .map_err(|e| e.to_string());
        }
        regex::bytes::Regex::new(&format!("{flags}{body}"))
            .map(|re| Matcher::Fast(re, prefilter))
            .map_err(|e| e.to_string())
    }

    /// False only when no line of `buffer` can match: a line's match is a match of the
    /// same text in the whole buffer (multi-line anchors), so there are no false "no"s.
    fn may_match(&self, buffer: &[u8]) -> bool {
        match self {
            Matcher::Fast(_, Some(prefilter)) | Matcher::Backtracking(_, Some(prefilter)) => {
                prefilter.is_match(buffer)
            }
            Matcher::Fast(_, None) | Matcher::Backtracking(_, None) => true,
        }
    }

    /// Which lines can hold a match: every line a screening match touches. A line's own
    /// match starts where no earlier screening match covers it, so leftmost-first
    /// screening finds a match spanning it. `None` without a screen.
    fn candidate_lines(&self, buffer: &[u8], lines: &[(usize, &[u8])]) -> Option<Vec<bool>> {
        let (Matcher::Fast(_, Some(screen)) | Matcher::Backtracking(_, Some(screen))) = self else {
            return None;
        };
        let mut candidates = vec![false; lines.len()];
        if lines.is_empty() {
            return Some(candidates);
        }
        let line_of = |offset: usize| lines.partition_point(|(start, _)| *start <= offset) - 1;
        for m in screen.find_iter(buffer) {
            let first = line_of(m.start());
            let last = line_of(m.end().saturating_sub(1).max(m.start()));
            for candidate in &mut candidates[first..=last] {
                *candidate = true;
            }
        }
        Some(candidates)
    }

    /// Match ranges in a line (without its newline).
    fn find_all(&self, line: &[u8]) -> Vec<(usize, usize)> {
        match self {
            Matcher::Fast(re, _) => re.find_iter(line).map(|m| (m.start(), m.end())).collect(),
            Matcher::Backtracking(re, _) => {
                let text = String::from_utf8_lossy(line);
                re.find_iter(&text)
                    .filter_map(Result::ok)
                    .map(|m| (m.start(), m.end()))
                    .collect()
            }
        }
    }

    fn is_match(&self, line: &[u8]) -> bool {
        match self {
            Matcher::Fast(re, _) => re.is_match(line),
            Matcher::Backtracking(re, _) => {
                re.is_match(&String::from_utf8_lossy(line)).unwrap_or(false)
            }
        }
    }
}

/// The state of one run, writing to `W` (stdout, or one file's buffer in a worker).
struct Run<'a, W: Write> {
    o: &'a Options,
    matcher: &'a Matcher,
    out: W,
    matched_any: bool,
    error: bool,
    show_names: bool,
    /// A context group was printed (for the `--` between groups, across files too).
    printed_group: bool,
    /// Writing to the output failed: nothing more to search for.
    output_closed: bool,
}

/// Runs grep with parsed options; returns the exit code (0 match, 1 none, 2 error).
pub fn run(o: &Options) -> i32 {
    let matcher = match Matcher::new(o) {
        Ok(m) => m,
        Err(error) => {
            eprintln_grep(&error.to_string());
            return 2;
        }
    };
    let stdout = io::stdout();
    let mut files = o.files.clone();
    // A directory is searched recursively even without -r (SEARCH-8, a documented
    // difference from GNU grep); `grep -r PATTERN` searches ".".
    let walk = o.recursive || files.iter().any(|f| Path::new(f).is_dir());
    if files.is_empty() && o.recursive {
        files.push(".".into());
    }
    let show_names = o.with_filename.unwrap_or(files.len() > 1 || walk);
    let mut run = Run {
        o,
        matcher: &matcher,
        out: io::BufWriter::new(stdout.lock()),
        matched_any: false,
        error: false,
        show_names,
        printed_group: false,
        output_closed: false,
    };
    if files.is_empty() {
        let mut input = Vec::new();
        let _ = io::stdin().read_to_end(&mut input);
        let label = o.label.clone().unwrap_or_else(|| "(standard input)".into());
        run.search(&label, &input, false);
    }
    for file in &files {
        if run.o.quiet && run.matched_any {
            break;
        }
        if file == "-" {
            let mut input = Vec::new();
            let _ = io::stdin().read_to_end(&mut input);
            let label = o.label.clone().unwrap_or_else(|| "(standard input)".into());
            run.search(&label, &input, false);
        } else if Path::new(file).is_dir() {
            run.walk(file);
        } else {
            match std::fs::read(file) {
                Ok(bytes) => run.search(file, &bytes, false),
                Err(error) => run.report(file, &error),
            }
        }
    }
    let _ = run.out.flush();
    if run.error && !(o.quiet && run.matched_any) {
        2
    } else if run.matched_any {
        0
    } else {
        1
    }
}

/// The lines of `bytes` as (offset, text without the newline).
fn split_lines(bytes: &[u8]) -> Vec<(usize, &[u8])> {
    let mut lines = Vec::new();
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', bytes) {
        lines.push((start, &bytes[start..end]));
        start = end + 1;
    }
    if start < bytes.len() {
        lines.push((start, &bytes[start..]));
    }
    lines
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
        };
    }
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) => return FileResult::error(error_message(shown, &error)),
    };
    let mut run = Run {
        o,
        matcher,
        out: Vec::new(),
        matched_any: false,
        error: false,
        show_names,
        printed_group: false,
        output_closed: false,
    };
    run.search(shown, &bytes, true);
    let context = o.after > 0 || o.before > 0;
    FileResult {
        grouped: context && run.printed_group,
        matched: run.matched_any,
        out: run.out,
        error: None,
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
}

impl FileResult {
    fn error(message: String) -> FileResult {
        FileResult {
            out: Vec::new(),
            matched: false,
            grouped: false,
            error: Some(message),
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
    fn report(&mut self, file: &str, error: &io::Error) {
        self.error = true;
        if !self.o.no_messages {
            eprintln_grep(&error_message(file, error));
        }
    }

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
                    || exclude_dir.iter().any(|g| glob(g, &name))))
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
            let exclude = (&o.include, &o.exclude);
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
                            if !push((index, Err(error.to_string()))) {
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
                    let (include, exclude) = exclude;
                    if !include.is_empty() && !include.iter().any(|g| glob(g, &name)) {
                        continue;
                    }
                    if exclude.iter().any(|g| glob(g, &name)) {
                        continue;
                    }
                    let path = entry.path().to_string_lossy();
                    // Paths without "./" (SEARCH-1): shorter for the model, the same as
                    // `grep -r x`.
                    let shown = path.strip_prefix("./").unwrap_or(&path).to_owned();
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
                    if (self.o.quiet && self.matched_any) || self.output_closed {
                        continue;
                    }
                    self.take(result);
                    if (self.o.quiet && self.matched_any) || self.output_closed {
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
        let separator: &[u8] = if result.grouped && self.printed_group {
            b"--\n"
        } else {
            b""
        };
        // A reader that went away (`grep -r x | head`) ends the walk, as SIGPIPE ends
        // GNU grep.
        if self
            .out
            .write_all(separator)
            .and_then(|()| self.out.write_all(&result.out))
            .is_err()
        {
            self.output_closed = true;
            self.error = true;
        }
        self.matched_any |= result.matched;
        self.printed_group |= result.grouped;
    }

    fn search(&mut self, name: &str, bytes: &[u8], walked: bool) {
        let o = self.o;
        let binary = !o.text && bytes[..bytes.len().min(32 * 1024)].contains(&0);
        if binary && (walked || o.skip_binary) {
            return;
        }
        // With no possible match there are no selected lines to find (or print as
        // context); -v selects every line then, so it always splits.
        let split = o.invert || self.matcher.may_match(bytes);
        let lines = if split {
            split_lines(bytes)
        } else {
            Vec::new()
        };
        // Only lines the whole-buffer screen touched can match; the others are
        // not checked one by one.
        let candidates = self.matcher.candidate_lines(bytes, &lines);
        let selected: Vec<bool> = lines
            .iter()
            .enumerate()
            .map(|(i, (_, l))| {
                let matched = candidates.as_ref().is_none_or(|c| c[i]) && self.matcher.is_match(l);
                matched != o.invert
            })
            .collect();
        let mut count = 0u64;
        let mut last_printed: Option<usize> = None;
        let mut after_left = 0usize;
        let context = o.after > 0 || o.before > 0;
        let printing = !(o.count || o.files_with_matches || o.files_without_match || o.quiet);
        let mut stopped_at: Option<usize> = None;
        for (index, is_selected) in selected.iter().enumerate() {
            if let Some(stop) = stopped_at {
                // After -m is reached, trailing context only.
                if index > stop + o.after || selected[index] {
                    break;
                }
                if printing && !binary {
                    self.line(name, index, &lines, '-');
                    last_printed = Some(index);
                }
                continue;
            }
            if *is_selected {
                count += 1;
                self.matched_any = true;
                if o.quiet {
                    return;
                }
                if printing && !binary {
                    let first = index.saturating_sub(o.before);
                    let from = last_printed.map_or(first, |p| first.max(p + 1));
                    if context && last_printed.is_some_and(|p| from > p + 1) {
                        let _ = writeln!(self.out, "--");
                    }
                    if context && last_printed.is_none() && self.printed_group {
                        let _ = writeln!(self.out, "--");
                    }
                    for before in from..index {
                        self.line(name, before, &lines, '-');
                    }
                    if o.only_matching {
                        if !o.invert {
                            self.only_matches(name, index, &lines);
                        }
                    } else {
                        self.line(name, index, &lines, ':');
                    }
                    last_printed = Some(index);
                    self.printed_group = true;
                    after_left = o.after;
                }
                if o.max_count.is_some_and(|m| count >= m) {
                    stopped_at = Some(index);
                }
            } else if after_left > 0 && printing && !binary {
                self.line(name, index, &lines, '-');
                last_printed = Some(index);
                after_left -= 1;
            }
        }
        if o.count && !(o.count_nonzero_only && count == 0) {
            if self.show_names {
                let _ = writeln!(self.out, "{name}:{count}");
            } else {
                let _ = writeln!(self.out, "{count}");
            }
        }
        if o.files_with_matches && count > 0 {
            let _ = writeln!(self.out, "{name}");
        }
        if o.files_without_match && count == 0 {
            let _ = writeln!(self.out, "{name}");
        }
        if binary && count > 0 && printing {
            let _ = writeln!(self.out, "grep: {name}: binary file matches");
        }
    }

    fn prefix(&mut self, name: &str, index: usize, lines: &[(usize, &[u8])], separator: char) {
        if self.show_names {
            let _ = write!(self.out, "{name}{separator}");
        }
        if self.o.line_number {
            let _ = write!(self.out, "{}{separator}", index + 1);
        }
        if self.o.byte_offset {
            let _ = write!(self.out, "{}{separator}", lines[index].0);
        }
        if self.o.initial_tab && (self.show_names || self.o.line_number || self.o.byte_offset) {
            let _ = write!(self.out, "\t");
        }
    }

    fn line(&mut self, name: &str, index: usize, lines: &[(usize, &[u8])], separator: char) {
        self.prefix(name, index, lines, separator);
        let _ = self.out.write_all(lines[index].1);
        let _ = self.out.write_all(b"\n");
    }

    fn only_matches(&mut self, name: &str, index: usize, lines: &[(usize, &[u8])]) {
        let line = lines[index].1;
        for (start, end) in self.matcher.find_all(line) {
            if start == end {
                continue;
            }
            if self.show_names {
                let _ = write!(self.out, "{name}:");
            }
            if self.o.line_number {
                let _ = write!(self.out, "{}:", index + 1);
            }
            if self.o.byte_offset {
                let _ = write!(self.out, "{}:", lines[index].0 + start);
            }
            let _ = self.out.write_all(&line[start..end]);
            let _ = self.out.write_all(b"\n");
        }
    }
}

/// A minimal glob for `--include`/`--exclude` names: `*`, `?`, literal otherwise.
fn glob(pattern: &str, name: &str) -> bool {
    fn go(p: &[char], n: &[char]) -> bool {
        match (p.first(), n.first()) {
            (None, None) => true,
            (Some('*'), _) => go(&p[1..], n) || (!n.is_empty() && go(p, &n[1..])),
            (Some('?'), Some(_)) => go(&p[1..], &n[1..]),
            (Some(a), Some(b)) if a == b => go(&p[1..], &n[1..]),
            _ => false,
        }
    }
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    go(&p, &n)
}

/// GNU's error prefix on every platform (SEARCH-9).
#[expect(clippy::print_stderr, reason = "grep's own error output")]
fn eprintln_grep(message: &str) {
    let program = PROGRAM.get().copied().unwrap_or("grep");
    eprintln!("{program}: {message}");
}
