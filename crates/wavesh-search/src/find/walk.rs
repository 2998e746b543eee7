//! The walk and the evaluation of the expression. Every file is reached relative to its
//! open parent directory (`openat`, `fstatat`, `readlinkat`, `unlinkat`), never by its
//! full path, so depth has no limit: a directory's descriptor is kept while its entries
//! are visited, and when more directories are open than the descriptor limit allows the
//! shallowest are closed and opened again, name by name from the nearest open one, when
//! the walk comes back to them. Paths are bytes from `readdir` to the output.

use std::io::Write;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::rc::Rc;

use rustix::fs::{AtFlags, Mode, OFlags};

use super::parse::{self, Cmp, Exec, Follow, Node, PermKind, Program, Target, TimeField};
use super::printf::{self, LsWidths, Segment};
use super::{Bytes, Meta, find_error, os, quote};

/// A directory to resolve names in: the working directory, or an open one.
#[derive(Clone)]
enum Dir {
    Cwd,
    Fd(Rc<OwnedFd>),
}

impl Dir {
    fn fd(&self) -> BorrowedFd<'_> {
        match self {
            Self::Cwd => rustix::fs::CWD,
            Self::Fd(fd) => fd.as_fd(),
        }
    }
}

#[allow(
    clippy::unnecessary_cast,
    reason = "the field types differ by platform"
)]
fn meta_of(st: &rustix::fs::Stat) -> Meta {
    Meta {
        dev: st.st_dev as u64,
        ino: st.st_ino as u64,
        mode: st.st_mode as u32,
        nlink: st.st_nlink as u64,
        uid: st.st_uid as u32,
        gid: st.st_gid as u32,
        rdev: st.st_rdev as u64,
        size: st.st_size as i64,
        blocks: st.st_blocks as i64,
        atime: (st.st_atime as i64, st.st_atime_nsec as i64),
        mtime: (st.st_mtime as i64, st.st_mtime_nsec as i64),
        ctime: (st.st_ctime as i64, st.st_ctime_nsec as i64),
    }
}

fn stat_at(dir: BorrowedFd<'_>, name: &[u8], follow: bool) -> std::io::Result<Meta> {
    let flags = if follow {
        AtFlags::empty()
    } else {
        AtFlags::SYMLINK_NOFOLLOW
    };
    rustix::fs::statat(dir, os(name), flags)
        .map(|st| meta_of(&st))
        .map_err(std::io::Error::from)
}

/// `stat` (or `lstat`) of a path from the working directory (reference files).
pub(super) fn stat_path(path: &[u8], follow: bool) -> std::io::Result<Meta> {
    if path.is_empty() {
        return Err(std::io::Error::from_raw_os_error(libc::ENOENT));
    }
    stat_at(rustix::fs::CWD, path, follow)
}

fn open_dir(dir: BorrowedFd<'_>, name: &[u8], follow: bool) -> std::io::Result<OwnedFd> {
    let mut flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NONBLOCK;
    if !follow {
        flags |= OFlags::NOFOLLOW;
    }
    rustix::fs::openat(dir, os(name), flags, Mode::empty()).map_err(std::io::Error::from)
}

/// The names in an open directory, in `readdir` order, without `.` and `..`.
fn read_names(fd: &OwnedFd) -> std::io::Result<Vec<Bytes>> {
    let mut dir = rustix::fs::Dir::read_from(fd)?;
    let mut names = Vec::new();
    while let Some(entry) = dir.read() {
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name != b"." && name != b".." {
            names.push(name.to_vec());
        }
    }
    Ok(names)
}

/// One directory on the way down from a starting point.
struct Level {
    /// Its descriptor, or `None` when closed to stay under the limit.
    fd: Option<Rc<OwnedFd>>,
    /// Its name in its parent (the starting point's path for the first level).
    name: Bytes,
    follow: bool,
    dev: u64,
    ino: u64,
    path_len: usize,
}

/// A file being evaluated.
struct Entry<'a> {
    path: &'a [u8],
    root: &'a [u8],
    /// The directory `name` is resolved in.
    dir: Dir,
    name: &'a [u8],
    /// The length of the parent directory's path in `path` (for `-execdir`).
    parent_len: usize,
    depth: usize,
    meta: Meta,
    /// Whether `meta` follows a symbolic link (`-L`, or `-H` for a starting point).
    follow: bool,
}

/// A `{} +` command's gathered paths.
#[derive(Default)]
struct Batch {
    args: Vec<Bytes>,
    size: usize,
    /// For `-execdir`: the directory they are in and its path.
    dir: Option<(Dir, Bytes)>,
}

/// An output stream and its first write error.
struct Sink {
    out: Box<dyn Write>,
    name: Option<Bytes>,
    error: Option<std::io::Error>,
}

impl Sink {
    fn write(&mut self, bytes: &[u8]) {
        if self.error.is_none()
            && let Err(e) = self.out.write_all(bytes)
        {
            self.error = Some(e);
        }
    }

    fn flush(&mut self) {
        if self.error.is_none()
            && let Err(e) = self.out.flush()
        {
            self.error = Some(e);
        }
    }
}

struct Run<'p> {
    program: &'p Program,
    sinks: Vec<Sink>,
    batches: Vec<Batch>,
    levels: Vec<Level>,
    fd_budget: usize,
    status: i32,
    quit: bool,
    prune: bool,
    ls: LsWidths,
    users: std::collections::HashMap<u32, Option<Bytes>>,
    groups: std::collections::HashMap<u32, Option<Bytes>>,
    arg_limit: usize,
}

/// Runs `find ARGS`; returns the exit code.
pub(super) fn run(args: &[Bytes]) -> i32 {
    super::sys::init_locale();
    let mut program = match parse::parse(args) {
        Ok(program) => program,
        Err(parse::ParseError(lines)) => {
            for line in lines {
                find_error(&line);
            }
            return 1;
        }
    };
    let expr = std::mem::replace(&mut program.expr, Node::True);
    let targets = std::mem::take(&mut program.targets);
    let sinks = targets
        .into_iter()
        .map(|target| match target {
            Target::Stdout => {
                use std::io::IsTerminal;
                let stdout = std::io::stdout();
                // Written through a duplicate of descriptor 1: std's stdout flushes at
                // every newline, GNU's only when a terminal reads it.
                let out: Box<dyn Write> = match stdout.as_fd().try_clone_to_owned() {
                    Ok(fd) if stdout.is_terminal() => {
                        Box::new(std::io::LineWriter::new(std::fs::File::from(fd)))
                    }
                    Ok(fd) => Box::new(std::io::BufWriter::with_capacity(
                        64 * 1024,
                        std::fs::File::from(fd),
                    )),
                    Err(_) => Box::new(stdout),
                };
                Sink {
                    out,
                    name: None,
                    error: None,
                }
            }
            Target::Stderr => Sink {
                out: Box::new(std::io::stderr()),
                name: Some(b"/dev/stderr".to_vec()),
                error: None,
            },
            Target::File { name, file } => Sink {
                out: Box::new(std::io::BufWriter::new(file)),
                name: Some(name),
                error: None,
            },
        })
        .collect();
    let env_size: usize = std::env::vars_os()
        .map(|(k, v)| k.len() + v.len() + 2 + size_of::<usize>())
        .sum();
    let soft_limit = rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .current
        .unwrap_or(1024);
    let mut run = Run {
        program: &program,
        sinks,
        batches: (0..program.execs.len()).map(|_| Batch::default()).collect(),
        levels: Vec::new(),
        fd_budget: usize::try_from(soft_limit / 4).unwrap_or(64).clamp(2, 64),
        status: 0,
        quit: false,
        prune: false,
        ls: LsWidths::default(),
        users: std::collections::HashMap::new(),
        groups: std::collections::HashMap::new(),
        arg_limit: (2 * 1024 * 1024usize)
            .saturating_sub(env_size + 2048)
            .max(16 * 1024),
    };
    for root in &program.roots {
        if run.quit {
            break;
        }
        run.root(&expr, root);
    }
    for i in 0..program.execs.len() {
        run.flush_batch(i);
    }
    let mut status = run.status;
    for sink in &mut run.sinks {
        sink.flush();
        if let Some(error) = &sink.error {
            let name = match &sink.name {
                Some(name) => quote(name),
                None => {
                    let (open, close) = super::quotes();
                    format!("{open}standard output{close}")
                }
            };
            find_error(&format!("{name}: {}", crate::grep::os_message(error)));
            if sink.name.is_none() {
                find_error("write error");
            }
            status = 1;
        }
    }
    status
}

impl Run<'_> {
    fn error(&mut self, path: &[u8], error: &std::io::Error) {
        self.flush_stdout();
        find_error(&format!(
            "{}: {}",
            quote(path),
            crate::grep::os_message(error)
        ));
        self.status = 1;
    }

    fn flush_stdout(&mut self) {
        if let Some(sink) = self.sinks.first_mut() {
            sink.flush();
        }
    }

    fn root(&mut self, expr: &Node, root: &[u8]) {
        let follow = self.program.follow != Follow::Never;
        let meta = if root.is_empty() {
            Err(std::io::Error::from_raw_os_error(libc::ENOENT))
        } else {
            match stat_at(rustix::fs::CWD, root, follow) {
                Err(e)
                    if follow && matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ELOOP)) =>
                {
                    stat_at(rustix::fs::CWD, root, false)
                }
                other => other,
            }
        };
        let meta = match meta {
            Ok(meta) => meta,
            Err(e) => {
                // GNU reports a missing directory in a starting point as a missing file.
                let e = if e.raw_os_error() == Some(libc::ENOTDIR) {
                    std::io::Error::from_raw_os_error(libc::ENOENT)
                } else {
                    e
                };
                self.error(root, &e);
                return;
            }
        };
        let followed = follow && !meta.is_link();
        let mut path = root.to_vec();
        self.levels.clear();
        self.visit(
            expr, &mut path, root, None, root, 0, meta, followed, meta.dev,
        );
    }

    /// The descriptor of level `k`, opened again if it was closed.
    fn level_dir(&mut self, k: usize) -> std::io::Result<Dir> {
        if let Some(fd) = &self.levels[k].fd {
            return Ok(Dir::Fd(fd.clone()));
        }
        let start = (0..k).rev().find(|&j| self.levels[j].fd.is_some());
        let mut dir = match start {
            Some(j) => Dir::Fd(self.levels[j].fd.clone().unwrap_or_else(|| unreachable!())),
            None => Dir::Cwd,
        };
        let from = start.map_or(0, |j| j + 1);
        for m in from..=k {
            let level = &self.levels[m];
            let fd = open_dir(dir.fd(), &level.name, level.follow)?;
            let st = rustix::fs::fstat(&fd)?;
            let meta = meta_of(&st);
            if meta.dev != level.dev || meta.ino != level.ino {
                return Err(std::io::Error::from_raw_os_error(libc::ENOENT));
            }
            dir = Dir::Fd(Rc::new(fd));
        }
        if let Dir::Fd(fd) = &dir {
            self.levels[k].fd = Some(fd.clone());
        }
        self.enforce_budget(k);
        Ok(dir)
    }

    /// Closes the shallowest open directories (never `keep`) while too many are open.
    fn enforce_budget(&mut self, keep: usize) {
        let open = self.levels.iter().filter(|l| l.fd.is_some()).count();
        let mut excess = open.saturating_sub(self.fd_budget);
        for (i, level) in self.levels.iter_mut().enumerate() {
            if excess == 0 {
                break;
            }
            if i != keep && level.fd.is_some() {
                level.fd = None;
                excess -= 1;
            }
        }
    }

    /// Visits one file: evaluates it (before or after its entries with `-depth`) and
    /// walks into it if it is a directory to descend.
    #[allow(clippy::too_many_arguments, reason = "the walk's state for one file")]
    fn visit(
        &mut self,
        expr: &Node,
        path: &mut Bytes,
        root: &[u8],
        parent: Option<usize>,
        name: &[u8],
        depth: usize,
        meta: Meta,
        follow: bool,
        root_dev: u64,
    ) {
        let program = self.program;
        if meta.is_dir() {
            // A directory that is one of its own ancestors: a loop (symbolic links
            // followed, or a bind mount).
            if let Some(ancestor) = self
                .levels
                .iter()
                .find(|l| l.dev == meta.dev && l.ino == meta.ino)
            {
                let ancestor = path[..ancestor.path_len].to_vec();
                self.flush_stdout();
                find_error(&format!(
                    "File system loop detected; {} is part of the same file system loop as {}.",
                    quote(path),
                    quote(&ancestor)
                ));
                self.status = 1;
                return;
            }
        }
        let mut descend = meta.is_dir()
            && program.max_depth.is_none_or(|m| depth < m)
            && !(program.xdev && meta.dev != root_dev);
        let evaluate = depth >= program.min_depth && program.max_depth.is_none_or(|m| depth <= m);
        if evaluate && !program.depth_first {
            self.prune = false;
            self.evaluate(expr, path, root, parent, name, depth, meta, follow);
            if self.prune {
                descend = false;
            }
        }
        if self.quit {
            return;
        }
        if descend {
            self.descend(
                expr, path, root, parent, name, depth, meta, follow, root_dev,
            );
        }
        if self.quit {
            return;
        }
        if evaluate && program.depth_first {
            self.evaluate(expr, path, root, parent, name, depth, meta, follow);
        }
    }

    #[allow(clippy::too_many_arguments, reason = "the walk's state for one file")]
    fn evaluate(
        &mut self,
        expr: &Node,
        path: &[u8],
        root: &[u8],
        parent: Option<usize>,
        name: &[u8],
        depth: usize,
        meta: Meta,
        follow: bool,
    ) {
        let dir = match parent {
            None => Dir::Cwd,
            Some(k) => match self.level_dir(k) {
                Ok(dir) => dir,
                Err(e) => {
                    let dir_path = path[..self.levels[k].path_len].to_vec();
                    self.error(&dir_path, &e);
                    return;
                }
            },
        };
        let parent_len = parent.map_or(0, |k| self.levels[k].path_len);
        let entry = Entry {
            path,
            root,
            dir,
            name,
            parent_len,
            depth,
            meta,
            follow,
        };
        self.eval(expr, &entry);
    }

    #[allow(clippy::too_many_arguments, reason = "the walk's state for one file")]
    fn descend(
        &mut self,
        expr: &Node,
        path: &mut Bytes,
        root: &[u8],
        parent: Option<usize>,
        name: &[u8],
        depth: usize,
        meta: Meta,
        follow: bool,
        root_dev: u64,
    ) {
        let parent_dir = match parent {
            None => Dir::Cwd,
            Some(k) => match self.level_dir(k) {
                Ok(dir) => dir,
                Err(e) => {
                    let dir_path = path[..self.levels[k].path_len].to_vec();
                    self.error(&dir_path, &e);
                    return;
                }
            },
        };
        let fd = match open_dir(parent_dir.fd(), name, follow) {
            Ok(fd) => fd,
            Err(e) => {
                if !(self.program.ignore_race && e.raw_os_error() == Some(libc::ENOENT)) {
                    self.error(path, &e);
                }
                return;
            }
        };
        drop(parent_dir);
        let names = match read_names(&fd) {
            Ok(names) => names,
            Err(e) => {
                self.error(path, &e);
                return;
            }
        };
        let level = self.levels.len();
        self.levels.push(Level {
            fd: Some(Rc::new(fd)),
            name: name.to_vec(),
            follow,
            dev: meta.dev,
            ino: meta.ino,
            path_len: path.len(),
        });
        self.enforce_budget(level);
        let base_len = path.len();
        let follow_all = self.program.follow == Follow::Always;
        for child in names {
            if self.quit {
                break;
            }
            path.truncate(base_len);
            if path.last() != Some(&b'/') {
                path.push(b'/');
            }
            path.extend_from_slice(&child);
            let dir = match self.level_dir(level) {
                Ok(dir) => dir,
                Err(e) => {
                    path.truncate(base_len);
                    let p = path.clone();
                    self.error(&p, &e);
                    break;
                }
            };
            let meta = match stat_at(dir.fd(), &child, follow_all) {
                Err(e) if follow_all && e.raw_os_error() == Some(libc::ENOENT) => {
                    stat_at(dir.fd(), &child, false)
                }
                Err(e) if follow_all && e.raw_os_error() == Some(libc::ELOOP) => {
                    stat_at(dir.fd(), &child, false)
                }
                other => other,
            };
            drop(dir);
            let meta = match meta {
                Ok(meta) => meta,
                Err(e) => {
                    if !(self.program.ignore_race && e.raw_os_error() == Some(libc::ENOENT)) {
                        let p = path.clone();
                        self.error(&p, &e);
                    }
                    continue;
                }
            };
            let child_follow = follow_all && !meta.is_link();
            self.visit(
                expr,
                path,
                root,
                Some(level),
                &child,
                depth + 1,
                meta,
                child_follow,
                root_dev,
            );
        }
        path.truncate(base_len);
        self.levels.pop();
        // -execdir batches of this directory run before the walk leaves it.
        for i in 0..self.program.execs.len() {
            if self.program.execs[i].in_dir
                && self.batches[i]
                    .dir
                    .as_ref()
                    .is_some_and(|(_, p)| p.as_slice() == path.as_slice())
            {
                self.flush_batch(i);
            }
        }
    }

    fn eval(&mut self, node: &Node, e: &Entry<'_>) -> bool {
        match node {
            Node::And(a, b) => self.eval(a, e) && !self.quit && self.eval(b, e),
            Node::Or(a, b) => self.eval(a, e) || (!self.quit && self.eval(b, e)),
            Node::Comma(a, b) => {
                self.eval(a, e);
                !self.quit && self.eval(b, e)
            }
            Node::Not(a) => !self.eval(a, e),
            Node::True => true,
            Node::False => false,
            Node::Name { pattern, casefold } => {
                super::sys::fnmatch(pattern, &name_for_match(e.path), *casefold)
            }
            Node::Path { pattern, casefold } => super::sys::fnmatch(pattern, e.path, *casefold),
            Node::Lname { pattern, casefold } => {
                e.meta.is_link()
                    && read_link(e).is_some_and(|t| super::sys::fnmatch(pattern, &t, *casefold))
            }
            Node::Regex(regex) => {
                let text = std::str::from_utf8(e.path)
                    .ok()
                    .filter(|_| regex.utf8_locale);
                match text {
                    Some(text) => regex.text.is_match(text),
                    // In a UTF-8 locale GNU's regex matches no path that is not UTF-8.
                    None if regex.utf8_locale => false,
                    None => {
                        regex.bytes.match_with_encoding(
                            onig::EncodedBytes::ascii(e.path),
                            0,
                            onig::SearchOptions::SEARCH_OPTION_NONE,
                            None,
                        ) == Some(e.path.len())
                    }
                }
            }
            Node::Type { types, x } => {
                let letter = if *x {
                    other_type(e)
                } else {
                    e.meta.type_letter()
                };
                types.contains(&letter)
            }
            Node::Size { cmp, n, unit } => {
                let size = u64::try_from(e.meta.size).unwrap_or(0);
                cmp.test(size.div_ceil(*unit), *n)
            }
            Node::Empty => match e.meta.type_letter() {
                b'f' => e.meta.size == 0,
                b'd' => match open_dir(e.dir.fd(), e.name, e.follow).and_then(|fd| read_names(&fd))
                {
                    Ok(names) => names.is_empty(),
                    Err(err) => {
                        let p = e.path.to_vec();
                        self.error(&p, &err);
                        false
                    }
                },
                _ => false,
            },
            Node::Newer { field, reference } => time_of(&e.meta, *field) > *reference,
            Node::Age {
                field,
                cmp,
                n,
                unit,
                origin,
            } => {
                let (s, ns) = time_of(&e.meta, *field);
                #[allow(clippy::cast_precision_loss, reason = "ages in seconds fit")]
                let age = (origin.0 - s) as f64 + (origin.1 - ns) as f64 / 1e9;
                let units = (age / unit).floor();
                match cmp {
                    Cmp::Equal => units == *n,
                    Cmp::Greater => units > *n,
                    Cmp::Less => units < *n,
                }
            }
            Node::Perm { kind, file, dir } => {
                let want = if e.meta.is_dir() { *dir } else { *file };
                let mode = e.meta.mode & 0o7777;
                match kind {
                    PermKind::Exact => mode == want,
                    PermKind::All => mode & want == want,
                    PermKind::Any => want == 0 || mode & want != 0,
                }
            }
            Node::Uid(cmp, n) => cmp.test(u64::from(e.meta.uid), *n),
            Node::Gid(cmp, n) => cmp.test(u64::from(e.meta.gid), *n),
            Node::NoUser => self.user(e.meta.uid).is_none(),
            Node::NoGroup => self.group(e.meta.gid).is_none(),
            Node::Links(cmp, n) => cmp.test(e.meta.nlink, *n),
            Node::Inum(cmp, n) => cmp.test(e.meta.ino, *n),
            Node::SameFile { dev, ino } => e.meta.dev == *dev && e.meta.ino == *ino,
            Node::Access(mode) => {
                rustix::fs::accessat(e.dir.fd(), os(e.name), *mode, AtFlags::empty()).is_ok()
            }
            Node::Print { out, nul } => {
                let sink = &mut self.sinks[*out];
                sink.write(e.path);
                sink.write(if *nul { b"\0" } else { b"\n" });
                true
            }
            Node::Printf { out, format } => {
                let mut text = Bytes::new();
                let stop = self.printf(&mut text, format, e);
                let sink = &mut self.sinks[*out];
                sink.write(&text);
                if stop {
                    sink.flush();
                }
                true
            }
            Node::Ls { out } => {
                let mut text = Bytes::new();
                let owner = self
                    .user(e.meta.uid)
                    .unwrap_or_else(|| e.meta.uid.to_string().into_bytes());
                let group = self
                    .group(e.meta.gid)
                    .unwrap_or_else(|| e.meta.gid.to_string().into_bytes());
                printf::ls_prefix(
                    &mut text,
                    &mut self.ls,
                    &e.meta,
                    &owner,
                    &group,
                    self.program.now.0,
                );
                printf::ls_name(&mut text, e.path);
                if e.meta.is_link()
                    && let Some(target) = read_link(e)
                {
                    text.extend_from_slice(b" -> ");
                    printf::ls_name(&mut text, &target);
                }
                text.push(b'\n');
                self.sinks[*out].write(&text);
                true
            }
            Node::Prune => {
                if !self.program.depth_first {
                    self.prune = true;
                }
                true
            }
            Node::Quit => {
                self.quit = true;
                true
            }
            Node::Delete => self.delete(e),
            Node::Exec(i) => self.exec(*i, e),
        }
    }

    fn user(&mut self, uid: u32) -> Option<Bytes> {
        self.users
            .entry(uid)
            .or_insert_with(|| super::sys::user_name(uid))
            .clone()
    }

    fn group(&mut self, gid: u32) -> Option<Bytes> {
        self.groups
            .entry(gid)
            .or_insert_with(|| super::sys::group_name(gid))
            .clone()
    }

    fn delete(&mut self, e: &Entry<'_>) -> bool {
        if e.path == b"." {
            return true;
        }
        let flags = if e.meta.is_dir() {
            AtFlags::REMOVEDIR
        } else {
            AtFlags::empty()
        };
        match rustix::fs::unlinkat(e.dir.fd(), os(e.name), flags) {
            Ok(()) => true,
            Err(err) => {
                let err = std::io::Error::from(err);
                self.flush_stdout();
                find_error(&format!(
                    "cannot delete {}: {}",
                    quote(e.path),
                    crate::grep::os_message(&err)
                ));
                self.status = 1;
                false
            }
        }
    }

    /// Appends `format` for `e`; returns whether a `\c` stopped it.
    fn printf(&mut self, out: &mut Bytes, format: &[Segment], e: &Entry<'_>) -> bool {
        for segment in format {
            let (spec, letter, time) = match segment {
                Segment::Literal(text) => {
                    out.extend_from_slice(text);
                    continue;
                }
                Segment::Stop => return true,
                Segment::Directive { spec, letter, time } => (spec.as_slice(), *letter, *time),
            };
            let m = &e.meta;
            match letter {
                b'a' => printf::string(out, &printf::time(m.atime, 0), spec),
                b'c' => printf::string(out, &printf::time(m.ctime, 0), spec),
                b't' => printf::string(out, &printf::time(m.mtime, 0), spec),
                b'A' => printf::string(out, &printf::time(m.atime, time), spec),
                b'C' => printf::string(out, &printf::time(m.ctime, time), spec),
                b'T' => printf::string(out, &printf::time(m.mtime, time), spec),
                b'b' => printf::string(out, m.blocks.to_string().as_bytes(), spec),
                b'k' => printf::string(
                    out,
                    ((m.blocks.max(0) * 512 + 1023) / 1024)
                        .to_string()
                        .as_bytes(),
                    spec,
                ),
                b'd' => printf::integer(out, i64::try_from(e.depth).unwrap_or(i64::MAX), spec),
                b'D' => printf::string(out, m.dev.to_string().as_bytes(), spec),
                b'f' => printf::string(out, &base_name(e.path), spec),
                b'h' => {
                    let dir: &[u8] = match memchr::memrchr(b'/', e.path) {
                        Some(at) => &e.path[..at],
                        None => b".",
                    };
                    printf::string(out, dir, spec);
                }
                b'H' => printf::string(out, e.root, spec),
                b'p' => printf::string(out, e.path, spec),
                b'P' => {
                    let rest = &e.path[e.root.len().min(e.path.len())..];
                    let rest = rest.strip_prefix(b"/").unwrap_or(rest);
                    printf::string(out, rest, spec);
                }
                b'g' => {
                    let name = self
                        .group(m.gid)
                        .unwrap_or_else(|| m.gid.to_string().into_bytes());
                    printf::string(out, &name, spec);
                }
                b'G' => printf::string(out, m.gid.to_string().as_bytes(), spec),
                b'u' => {
                    let name = self
                        .user(m.uid)
                        .unwrap_or_else(|| m.uid.to_string().into_bytes());
                    printf::string(out, &name, spec);
                }
                b'U' => printf::string(out, m.uid.to_string().as_bytes(), spec),
                b'i' => printf::string(out, m.ino.to_string().as_bytes(), spec),
                b'l' => {
                    let target = if m.is_link() { read_link(e) } else { None };
                    printf::string(out, &target.unwrap_or_default(), spec);
                }
                b'm' => printf::octal(out, m.mode & 0o7777, spec),
                b'M' => printf::string(out, &printf::mode_string(m), spec),
                b'n' => printf::string(out, m.nlink.to_string().as_bytes(), spec),
                b's' => printf::string(out, m.size.to_string().as_bytes(), spec),
                b'S' => {
                    #[allow(clippy::cast_precision_loss, reason = "a ratio")]
                    let ratio = if m.size > 0 {
                        (m.blocks as f64 * 512.0) / m.size as f64
                    } else {
                        1.0
                    };
                    printf::float(out, ratio, spec);
                }
                b'y' => printf::string(out, &[m.type_letter()], spec),
                b'Y' => {
                    let letter = if m.is_link() {
                        match stat_at(e.dir.fd(), e.name, true) {
                            Ok(target) => target.type_letter(),
                            Err(err) if err.raw_os_error() == Some(libc::ELOOP) => b'L',
                            Err(err) if err.raw_os_error() == Some(libc::ENOENT) => b'N',
                            Err(_) => b'?',
                        }
                    } else {
                        m.type_letter()
                    };
                    printf::string(out, &[letter], spec);
                }
                _ => {}
            }
        }
        false
    }

    fn exec(&mut self, i: usize, e: &Entry<'_>) -> bool {
        let program = self.program;
        let exec: &Exec = &program.execs[i];
        let (dir, arg) = if exec.in_dir {
            match self.exec_dir(e) {
                Some(found) => found,
                None => return false,
            }
        } else {
            (None, e.path.to_vec())
        };
        if exec.batch {
            let dir_path = dir.as_ref().map(|(_, p)| p.clone());
            let batch = &self.batches[i];
            let other_dir = exec.in_dir
                && batch.dir.as_ref().map(|(_, p)| p) != dir_path.as_ref()
                && !batch.args.is_empty();
            let fixed: usize = exec.argv.iter().map(|a| a.len() + 1 + 8).sum();
            let full =
                !batch.args.is_empty() && fixed + batch.size + arg.len() + 1 + 8 > self.arg_limit;
            if other_dir || full {
                self.flush_batch(i);
            }
            let batch = &mut self.batches[i];
            batch.size += arg.len() + 1 + 8;
            batch.args.push(arg);
            batch.dir = dir;
            return true;
        }
        let argv: Vec<Bytes> = exec.argv.iter().map(|a| replace_braces(a, &arg)).collect();
        if exec.ask && !self.confirm(&argv) {
            return false;
        }
        self.spawn(&argv, dir.as_ref().map(|(d, _)| d))
            .is_some_and(|ok| ok)
    }

    /// The `-ok` prompt on standard error; reads the answer from standard input.
    fn confirm(&mut self, argv: &[Bytes]) -> bool {
        self.flush_all();
        let mut prompt = b"< ".to_vec();
        for (n, a) in argv.iter().enumerate() {
            if n > 0 {
                prompt.push(b' ');
            }
            prompt.extend_from_slice(a);
        }
        prompt.extend_from_slice(b" > ? ");
        let mut stderr = std::io::stderr();
        let _ = stderr.write_all(&prompt);
        let _ = stderr.flush();
        let mut answer = Vec::new();
        let mut byte = [0u8; 1];
        // Byte by byte: the rest of standard input stays for the next prompt.
        while let Ok(1) = rustix::io::read(std::io::stdin(), &mut byte) {
            if byte[0] == b'\n' {
                break;
            }
            answer.push(byte[0]);
        }
        matches!(answer.first(), Some(b'y' | b'Y'))
    }

    /// The directory `-execdir` runs in and the `./name` it passes.
    fn exec_dir(&mut self, e: &Entry<'_>) -> Option<(Option<(Dir, Bytes)>, Bytes)> {
        if e.depth > 0 {
            let dir_path = e.path[..e.parent_len].to_vec();
            let mut arg = b"./".to_vec();
            arg.extend_from_slice(e.name);
            return Some((Some((e.dir.clone(), dir_path)), arg));
        }
        // A starting point: its directory part, opened from the working directory.
        let path = e.path;
        if path.iter().all(|&b| b == b'/') {
            let fd = open_dir(rustix::fs::CWD, b"/", true).ok()?;
            return Some((Some((Dir::Fd(Rc::new(fd)), b"/".to_vec())), b"/".to_vec()));
        }
        let trimmed_len = path.len() - path.iter().rev().take_while(|&&b| b == b'/').count();
        let (dir_part, base) = match memchr::memrchr(b'/', &path[..trimmed_len]) {
            Some(at) => (&path[..=at], &path[at + 1..]),
            None => (&b"."[..], path),
        };
        let mut arg = b"./".to_vec();
        arg.extend_from_slice(base);
        match open_dir(rustix::fs::CWD, dir_part, true) {
            Ok(fd) => Some((Some((Dir::Fd(Rc::new(fd)), dir_part.to_vec())), arg)),
            Err(err) => {
                self.error(dir_part, &err);
                None
            }
        }
    }

    fn flush_all(&mut self) {
        for sink in &mut self.sinks {
            sink.flush();
        }
    }

    /// Runs `argv` (in `dir` for `-execdir`); `None` when it could not start.
    fn spawn(&mut self, argv: &[Bytes], dir: Option<&Dir>) -> Option<bool> {
        self.flush_all();
        let mut command = std::process::Command::new(os(&argv[0]));
        command.args(argv[1..].iter().map(|a| os(a)));
        if let Some(dir) = dir {
            super::sys::chdir_before_exec(&mut command, std::os::fd::AsRawFd::as_raw_fd(&dir.fd()));
        }
        match command.status() {
            Ok(status) => Some(status.success()),
            Err(err) => {
                find_error(&format!(
                    "{}: {}",
                    quote(&argv[0]),
                    crate::grep::os_message(&err)
                ));
                None
            }
        }
    }

    /// Runs the gathered paths of `-exec ... {} +` number `i`.
    fn flush_batch(&mut self, i: usize) {
        let batch = std::mem::take(&mut self.batches[i]);
        if batch.args.is_empty() {
            return;
        }
        let mut argv = self.program.execs[i].argv.clone();
        argv.extend(batch.args);
        if self.spawn(&argv, batch.dir.as_ref().map(|(d, _)| d)) != Some(true) {
            self.status = 1;
        }
    }
}

/// GNU's `-name` subject: the base name, trailing slashes removed (`/` stays `/`).
fn name_for_match(path: &[u8]) -> Bytes {
    let mut base = base_name(path);
    while base.len() > 1 && base.last() == Some(&b'/') {
        base.pop();
    }
    base
}

/// gnulib's `base_name`: the last component with at most one trailing slash; `/` for a
/// path of slashes.
fn base_name(path: &[u8]) -> Bytes {
    let trimmed = path.len() - path.iter().rev().take_while(|&&b| b == b'/').count();
    if trimmed == 0 {
        return if path.is_empty() {
            Bytes::new()
        } else {
            b"/".to_vec()
        };
    }
    let start = memchr::memrchr(b'/', &path[..trimmed]).map_or(0, |at| at + 1);
    let end = if trimmed < path.len() {
        trimmed + 1
    } else {
        trimmed
    };
    path[start..end].to_vec()
}

fn read_link(e: &Entry<'_>) -> Option<Bytes> {
    rustix::fs::readlinkat(e.dir.fd(), os(e.name), Vec::new())
        .ok()
        .map(std::ffi::CString::into_bytes)
}

/// `-xtype`: the type seen the other way (`-P`: following the link; `-L`: the link).
fn other_type(e: &Entry<'_>) -> u8 {
    if e.follow {
        stat_at(e.dir.fd(), e.name, false).map_or(b'l', |m| m.type_letter())
    } else if e.meta.is_link() {
        stat_at(e.dir.fd(), e.name, true).map_or(b'l', |m| m.type_letter())
    } else {
        e.meta.type_letter()
    }
}

fn time_of(meta: &Meta, field: TimeField) -> (i64, i64) {
    match field {
        TimeField::Access => meta.atime,
        TimeField::Change => meta.ctime,
        TimeField::Modify => meta.mtime,
    }
}

/// Every `{}` in `arg` replaced by `path`.
fn replace_braces(arg: &[u8], path: &[u8]) -> Bytes {
    let mut out = Bytes::with_capacity(arg.len());
    let mut rest = arg;
    while let Some(at) = memchr::memmem::find(rest, b"{}") {
        out.extend_from_slice(&rest[..at]);
        out.extend_from_slice(path);
        rest = &rest[at + 2..];
    }
    out.extend_from_slice(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_names_are_gnulibs() {
        assert_eq!(base_name(b"d/"), b"d/");
        assert_eq!(base_name(b"d//e"), b"e");
        assert_eq!(base_name(b"/"), b"/");
        assert_eq!(base_name(b"///"), b"/");
        assert_eq!(base_name(b"."), b".");
        assert_eq!(base_name(b"a/b//"), b"b/");
        assert_eq!(name_for_match(b"d/"), b"d");
        assert_eq!(name_for_match(b"/"), b"/");
    }

    #[test]
    fn braces_are_replaced_everywhere() {
        assert_eq!(replace_braces(b"a{}b{}", b"L"), b"aLbL");
        assert_eq!(replace_braces(b"{", b"L"), b"{");
    }
}
