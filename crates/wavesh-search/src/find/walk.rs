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

/// The devices and file system types of the mount table (`/proc/self/mountinfo`: the
/// device's `major:minor` is its third field, the type the first after the `-`), in its
/// order, without the mounts of type `ignore`.
fn mount_table() -> Vec<(u64, Bytes)> {
    let Ok(text) = std::fs::read("/proc/self/mountinfo") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for line in text.split(|&b| b == b'\n') {
        let fields: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
        let Some(dash) = fields.iter().position(|f| *f == b"-") else {
            continue;
        };
        let (Some(dev), Some(kind)) = (fields.get(2), fields.get(dash + 1)) else {
            continue;
        };
        let Some((major, minor)) = std::str::from_utf8(dev)
            .ok()
            .and_then(|d| d.split_once(':'))
            .and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)))
        else {
            continue;
        };
        if *kind == b"ignore" {
            continue;
        }
        #[allow(clippy::unnecessary_cast, reason = "dev_t's type differs by platform")]
        out.push((rustix::fs::makedev(major, minor) as u64, kind.to_vec()));
    }
    out
}

/// A file's birth time (`statx`), `None` where the file system or the kernel keeps none.
#[allow(
    clippy::unnecessary_cast,
    reason = "the field types differ by platform"
)]
fn birth_time_at(
    dir: BorrowedFd<'_>,
    name: &[u8],
    follow: bool,
) -> std::io::Result<Option<(i64, i64)>> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use rustix::fs::StatxFlags;
        let flags = if follow {
            AtFlags::empty()
        } else {
            AtFlags::SYMLINK_NOFOLLOW
        };
        let st = rustix::fs::statx(dir, os(name), flags, StatxFlags::BTIME)
            .map_err(std::io::Error::from)?;
        Ok((st.stx_mask & StatxFlags::BTIME.bits() != 0)
            .then(|| (st.stx_btime.tv_sec as i64, i64::from(st.stx_btime.tv_nsec))))
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = (dir, name, follow);
        Ok(None)
    }
}

/// The birth time of a reference file (`-newerXB`), found as `stat_path` finds it.
pub(super) fn birth_time_path(path: &[u8], follow: bool) -> std::io::Result<Option<(i64, i64)>> {
    if path.is_empty() {
        return Err(std::io::Error::from_raw_os_error(libc::ENOENT));
    }
    match birth_time_at(rustix::fs::CWD, path, follow) {
        Err(e) if follow && dangling(&e) => {
            birth_time_at(rustix::fs::CWD, path, false).map_err(|_| e)
        }
        other => other,
    }
}

/// `stat` (or `lstat`) of a path from the working directory (reference files).
pub(super) fn stat_path(path: &[u8], follow: bool) -> std::io::Result<Meta> {
    if path.is_empty() {
        return Err(std::io::Error::from_raw_os_error(libc::ENOENT));
    }
    match stat_at(rustix::fs::CWD, path, follow) {
        // A broken link is its own reference, as in GNU.
        Err(e) if follow && dangling(&e) => stat_at(rustix::fs::CWD, path, false).map_err(|_| e),
        other => other,
    }
}

/// Whether a `stat` that follows a link failed because the link points nowhere (GNU
/// then uses the link itself); a loop (`ELOOP`) stays an error.
fn dangling(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR))
}

fn open_dir(dir: BorrowedFd<'_>, name: &[u8], follow: bool) -> std::io::Result<OwnedFd> {
    let mut flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NONBLOCK;
    if !follow {
        flags |= OFlags::NOFOLLOW;
    }
    rustix::fs::openat(dir, os(name), flags, Mode::empty()).map_err(std::io::Error::from)
}

/// The names in an open directory, in `readdir` order, without `.` and `..`.
/// The names in an open directory, in `readdir` order, without `.` and `..`, with the
/// type letter `readdir` gives (`None` where the file system gives none). Read from a
/// duplicate of `fd` itself: a directory that may be read but not searched is listed.
///
/// GNU's fts reads a directory in batches of 100,000 entries and sorts a batch of more
/// than 10,000 by inode number (where that may speed up the `stat`s: not on NFS, CIFS
/// or tmpfs); the order of its output follows, and so does this walk's.
fn read_names(fd: &OwnedFd) -> std::io::Result<Vec<(Bytes, Option<u8>)>> {
    const BATCH: usize = 100_000;
    const SORT_ABOVE: usize = 10_000;
    let mut names = read_entries(fd)?;
    if names.len() > SORT_ABOVE && inode_sort_may_help(fd) {
        for batch in names.chunks_mut(BATCH) {
            if batch.len() > SORT_ABOVE {
                batch.sort_by_key(|(_, _, ino)| *ino);
            }
        }
    }
    Ok(names
        .into_iter()
        .map(|(name, kind, _)| (name, kind))
        .collect())
}

/// Whether gnulib's fts sorts a large directory of this file system by inode.
fn inode_sort_may_help(fd: &OwnedFd) -> bool {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        const CIFS: i64 = 0xFF53_4D42;
        const NFS: i64 = 0x6969;
        const TMPFS: i64 = 0x0102_1994;
        #[allow(clippy::unnecessary_cast, reason = "f_type's type differs by platform")]
        rustix::fs::fstatfs(fd).is_ok_and(|st| !matches!(st.f_type as i64, CIFS | NFS | TMPFS))
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = fd;
        true
    }
}

fn read_entries(fd: &OwnedFd) -> std::io::Result<Vec<(Bytes, Option<u8>, u64)>> {
    use rustix::fs::FileType;
    let dup = rustix::io::fcntl_dupfd_cloexec(fd, 0)?;
    let mut dir = rustix::fs::Dir::new(dup)?;
    let mut names = Vec::new();
    while let Some(entry) = dir.read() {
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name != b"." && name != b".." {
            let kind = match entry.file_type() {
                FileType::RegularFile => Some(b'f'),
                FileType::Directory => Some(b'd'),
                FileType::Symlink => Some(b'l'),
                FileType::Fifo => Some(b'p'),
                FileType::Socket => Some(b's'),
                FileType::CharacterDevice => Some(b'c'),
                FileType::BlockDevice => Some(b'b'),
                _ => None,
            };
            #[allow(clippy::unnecessary_cast, reason = "d_ino's type differs by platform")]
            names.push((name.to_vec(), kind, entry.ino() as u64));
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

/// A file being evaluated. As in GNU find, a file is `stat`ed only when something needs
/// it: `-name`, `-print` or `-type` (from `readdir`) of a file that cannot be `stat`ed
/// still work, and a test that needs the `stat` reports the error and is false.
struct Entry<'a> {
    path: &'a [u8],
    root: &'a [u8],
    /// The directory `name` is resolved in.
    dir: Dir,
    name: &'a [u8],
    /// The length of the parent directory's path in `path` (for `-execdir`).
    parent_len: usize,
    depth: usize,
    meta: std::cell::Cell<Option<Meta>>,
    kind: std::cell::Cell<Option<u8>>,
    /// Its `stat` failed and the error was reported: tests that need it are false.
    failed: std::cell::Cell<bool>,
    /// Whether links are followed for this file (`-L`, or `-H` for a starting point).
    follow: bool,
}

/// What the walk knows of a file before it is evaluated.
#[derive(Clone, Copy)]
struct Found {
    meta: Option<Meta>,
    kind: Option<u8>,
    /// Its `stat` failed (reported already).
    failed: bool,
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
    /// A terminal: names are printed with `?` for what cannot be shown, as GNU does.
    tty: bool,
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

/// A file written in whole blocks of its `st_blksize`, as C's stdio writes a file or a
/// pipe: where find's output and its error messages share a file, they interleave as
/// GNU find's do.
struct Blocks {
    file: std::fs::File,
    buf: Bytes,
    block: usize,
}

impl Blocks {
    fn new(file: std::fs::File) -> Self {
        let block = rustix::fs::fstat(&file)
            .ok()
            .and_then(|st| usize::try_from(st.st_blksize).ok())
            .filter(|&b| b > 0)
            .unwrap_or(8192);
        Self {
            file,
            buf: Bytes::with_capacity(block),
            block,
        }
    }
}

impl Write for Blocks {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(bytes);
        if self.buf.len() >= self.block {
            let whole = self.buf.len() / self.block * self.block;
            let result = self.file.write_all(&self.buf[..whole]);
            self.buf.drain(..whole);
            result?;
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let result = self.file.write_all(&self.buf);
        self.buf.clear();
        result
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
    /// The mount table's devices and file system types, read when first needed.
    mounts: Option<Vec<(u64, Bytes)>>,
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
                let tty = stdout.is_terminal();
                // Written through a duplicate of descriptor 1: std's stdout flushes at
                // every newline, GNU's only when a terminal reads it.
                let out: Box<dyn Write> = match stdout.as_fd().try_clone_to_owned() {
                    Ok(fd) if stdout.is_terminal() => {
                        Box::new(std::io::LineWriter::new(std::fs::File::from(fd)))
                    }
                    Ok(fd) => Box::new(Blocks::new(std::fs::File::from(fd))),
                    Err(_) => Box::new(stdout),
                };
                Sink {
                    out,
                    tty,
                    name: None,
                    error: None,
                }
            }
            Target::Stderr => Sink {
                tty: std::io::IsTerminal::is_terminal(&std::io::stderr()),
                out: Box::new(std::io::stderr()),
                name: Some(b"/dev/stderr".to_vec()),
                error: None,
            },
            Target::File { name, file } => Sink {
                tty: std::io::IsTerminal::is_terminal(&file),
                out: Box::new(Blocks::new(file)),
                name: Some(name),
                error: None,
            },
        })
        .collect();
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
        mounts: None,
        // GNU's buildcmd: at most 128 KiB of arguments, NULs included, per command.
        arg_limit: 128 * 1024,
    };
    for (i, root) in program.roots.iter().enumerate() {
        if run.quit {
            break;
        }
        if let (true, Some(list)) = (root.is_empty(), &program.files0) {
            run.flush_stdout();
            find_error(&format!(
                "{}:{}: invalid zero-length file name",
                quote(list),
                i + 1
            ));
            run.status = 1;
            continue;
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
    /// Standard output is flushed before a message, as gnulib's `error` flushes it.
    fn flush_stdout(&mut self) {
        if let Some(sink) = self.sinks.first_mut() {
            sink.flush();
        }
    }

    fn error(&mut self, path: &[u8], error: &std::io::Error) {
        self.flush_stdout();
        find_error(&format!(
            "{}: {}",
            quote(path),
            crate::grep::os_message(error)
        ));
        self.status = 1;
    }

    fn root(&mut self, expr: &Node, root: &[u8]) {
        let follow = self.program.follow != Follow::Never;
        let meta = if root.is_empty() {
            Err(std::io::Error::from_raw_os_error(libc::ENOENT))
        } else {
            match stat_at(rustix::fs::CWD, root, follow) {
                Err(e) if follow && e.raw_os_error() == Some(libc::ENOENT) => {
                    stat_at(rustix::fs::CWD, root, false)
                }
                other => other,
            }
        };
        let meta = match meta {
            Ok(meta) => meta,
            Err(e) => {
                self.error(root, &e);
                return;
            }
        };
        let mut path = root.to_vec();
        self.levels.clear();
        let found = Found {
            meta: Some(meta),
            kind: Some(meta.type_letter()),
            failed: false,
        };
        self.visit(
            expr, &mut path, root, None, root, 0, found, follow, meta.dev,
        );
    }

    /// The descriptor of level `k`, opened again if it was closed.
    /// The open directory a file at `path` is reached from: the working directory for a
    /// starting point, else the directory of level `parent`, opened again if it had to be
    /// closed. A directory that cannot be opened again is reported, and `None` returned.
    fn parent_dir(&mut self, path: &[u8], parent: Option<usize>) -> Option<Dir> {
        let Some(k) = parent else {
            return Some(Dir::Cwd);
        };
        match self.level_dir(k) {
            Ok(dir) => Some(dir),
            Err(e) => {
                let dir_path = path[..self.levels[k].path_len].to_vec();
                self.error(&dir_path, &e);
                None
            }
        }
    }

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
        found: Found,
        follow: bool,
        root_dev: u64,
    ) {
        let program = self.program;
        let dir_meta = found.meta.filter(Meta::is_dir);
        if let Some(meta) = dir_meta {
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
        let mut descend = dir_meta.is_some_and(|meta| {
            program.max_depth.is_none_or(|m| depth < m) && !(program.xdev && meta.dev != root_dev)
        });
        let evaluate = depth >= program.min_depth && program.max_depth.is_none_or(|m| depth <= m);
        if evaluate && !program.depth_first {
            self.prune = false;
            self.evaluate(expr, path, root, parent, name, depth, found, follow);
            if self.prune {
                descend = false;
            }
        }
        if self.quit {
            return;
        }
        if let Some(meta) = dir_meta.filter(|_| descend) {
            self.descend(
                expr, path, root, parent, name, depth, meta, follow, root_dev,
            );
        }
        if self.quit {
            return;
        }
        if evaluate && program.depth_first {
            self.evaluate(expr, path, root, parent, name, depth, found, follow);
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
        found: Found,
        follow: bool,
    ) {
        let Some(dir) = self.parent_dir(path, parent) else {
            return;
        };
        let parent_len = parent.map_or(0, |k| self.levels[k].path_len);
        let entry = Entry {
            path,
            root,
            dir,
            name,
            parent_len,
            depth,
            meta: std::cell::Cell::new(found.meta),
            kind: std::cell::Cell::new(found.kind),
            failed: std::cell::Cell::new(found.failed),
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
        let Some(parent_dir) = self.parent_dir(path, parent) else {
            return;
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
        for (child, kind) in names {
            if self.quit {
                break;
            }
            path.truncate(base_len);
            if path.last() != Some(&b'/') {
                path.push(b'/');
            }
            path.extend_from_slice(&child);
            // A file that `readdir` says is neither a directory nor a link to follow is
            // not `stat`ed until something needs it.
            let found = match kind {
                Some(k) if k != b'd' && !(follow_all && k == b'l') => Found {
                    meta: None,
                    kind: Some(k),
                    failed: false,
                },
                _ => {
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
                        other => other,
                    };
                    match meta {
                        Ok(meta) => Found {
                            meta: Some(meta),
                            kind: Some(meta.type_letter()),
                            failed: false,
                        },
                        Err(e)
                            if self.program.ignore_race
                                && e.raw_os_error() == Some(libc::ENOENT) =>
                        {
                            continue;
                        }
                        Err(e) => {
                            let p = path.clone();
                            self.error(&p, &e);
                            // A loop is not visited; any other file is, without its
                            // `stat` (GNU: a name is better than nothing).
                            if e.raw_os_error() == Some(libc::ELOOP) {
                                continue;
                            }
                            Found {
                                meta: None,
                                kind: None,
                                failed: true,
                            }
                        }
                    }
                }
            };
            self.visit(
                expr,
                path,
                root,
                Some(level),
                &child,
                depth + 1,
                found,
                follow_all,
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

    /// The file's `stat`, made now if not yet; an error is reported (and `None`).
    fn need_stat(&mut self, e: &Entry<'_>) -> Option<Meta> {
        if let Some(meta) = e.meta.get() {
            return Some(meta);
        }
        if e.failed.get() {
            return None;
        }
        let result = match stat_at(e.dir.fd(), e.name, e.follow) {
            Err(err) if e.follow && dangling(&err) => stat_at(e.dir.fd(), e.name, false),
            other => other,
        };
        match result {
            Ok(meta) => {
                e.meta.set(Some(meta));
                e.kind.set(Some(meta.type_letter()));
                Some(meta)
            }
            Err(err) => {
                e.failed.set(true);
                // -ignore_readdir_race: a file gone since readdir is no error.
                if !(self.program.ignore_race && err.raw_os_error() == Some(libc::ENOENT)) {
                    self.error(e.path, &err);
                }
                None
            }
        }
    }

    /// The file's type letter, from `readdir` or a `stat`.
    fn need_type(&mut self, e: &Entry<'_>) -> Option<u8> {
        match e.kind.get() {
            Some(kind) => Some(kind),
            None => self.need_stat(e).map(|m| m.type_letter()),
        }
    }

    /// `-xtype`: the type seen the other way (`-P`: following the link; `-L`: the link).
    fn other_type(&mut self, e: &Entry<'_>) -> Option<u8> {
        match stat_at(e.dir.fd(), e.name, !e.follow) {
            Ok(meta) => Some(meta.type_letter()),
            Err(err) if !e.follow && dangling(&err) => Some(b'l'),
            Err(err) => {
                self.error(e.path, &err);
                None
            }
        }
    }

    fn eval(&mut self, node: &Node, e: &Entry<'_>) -> bool {
        // What GNU's predicate needs: a `stat`, the type, or nothing.
        let m = match need(node, self.program.depth_first) {
            Need::Stat => match self.need_stat(e) {
                Some(meta) => meta,
                None => return false,
            },
            Need::Type => {
                if self.need_type(e).is_none() {
                    return false;
                }
                e.meta.get().unwrap_or_default()
            }
            Need::Nothing => e.meta.get().unwrap_or_default(),
        };
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
                m.is_link()
                    && read_link(e).is_some_and(|t| super::sys::fnmatch(pattern, &t, *casefold))
            }
            Node::Regex(regex) => match &regex.engine {
                // In a UTF-8 locale GNU's regex matches no path that is not UTF-8.
                _ if regex.utf8_locale && std::str::from_utf8(e.path).is_err() => false,
                parse::RegexEngine::Fast(re) => re.is_match(e.path),
                parse::RegexEngine::Backtracking(re) => {
                    let text: String = if regex.utf8_locale {
                        String::from_utf8_lossy(e.path).into_owned()
                    } else {
                        e.path.iter().map(|&b| char::from(b)).collect()
                    };
                    re.is_match(&text).unwrap_or(false)
                }
            },
            Node::Type { types, x } => {
                let letter = if *x { self.other_type(e) } else { e.kind.get() };
                letter.is_some_and(|l| types.contains(&l))
            }
            Node::Size { cmp, n, unit } => {
                let size = u64::try_from(m.size).unwrap_or(0);
                cmp.test(size.div_ceil(*unit), *n)
            }
            Node::Empty => match m.type_letter() {
                b'f' => m.size == 0,
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
            Node::Newer {
                field: TimeField::Birth,
                reference,
            } => {
                let follow = e.follow && !m.is_link();
                match birth_time_at(e.dir.fd(), e.name, follow) {
                    Ok(Some(time)) => time > *reference,
                    Ok(None) => false,
                    Err(err) => {
                        self.error(e.path, &err);
                        false
                    }
                }
            }
            Node::Newer { field, reference } => time_of(&m, *field) > *reference,
            Node::FsType(kind) => self.fs_type(m.dev) == kind.as_slice(),
            Node::Used { cmp, days } => {
                let nanos = |(s, ns): (i64, i64)| i128::from(s) * 1_000_000_000 + i128::from(ns);
                let used = nanos(m.atime) - nanos(m.ctime);
                const DAY: i128 = 86_400 * 1_000_000_000;
                // GNU: never when the file was read before its last change; `N` is
                // `[N-1, N)` days, so a file untouched since it was made is `-used 1`.
                used >= 0
                    && match cmp {
                        Cmp::Greater => used > *days,
                        Cmp::Less => used < *days,
                        Cmp::Equal => used >= *days - DAY && used < *days,
                    }
            }
            Node::Age {
                field,
                cmp,
                reference,
                window,
            } => {
                let (s, ns) = time_of(&m, *field);
                let t = i128::from(s) * 1_000_000_000 + i128::from(ns);
                match cmp {
                    Cmp::Greater => t < *reference,
                    Cmp::Less => t > *reference,
                    Cmp::Equal => t > *reference && t - *reference <= *window,
                }
            }
            Node::Perm { kind, file, dir } => {
                let want = if m.is_dir() { *dir } else { *file };
                let mode = m.mode & 0o7777;
                match kind {
                    PermKind::Exact => mode == want,
                    PermKind::All => mode & want == want,
                    PermKind::Any => want == 0 || mode & want != 0,
                }
            }
            Node::Uid(cmp, n) => cmp.test(u64::from(m.uid), *n),
            Node::Gid(cmp, n) => cmp.test(u64::from(m.gid), *n),
            Node::NoUser => self.user(m.uid).is_none(),
            Node::NoGroup => self.group(m.gid).is_none(),
            Node::Links(cmp, n) => cmp.test(m.nlink, *n),
            Node::Inum(cmp, n) => cmp.test(m.ino, *n),
            Node::SameFile { dev, ino } => m.dev == *dev && m.ino == *ino,
            Node::Access(mode) => {
                rustix::fs::accessat(e.dir.fd(), os(e.name), *mode, AtFlags::empty()).is_ok()
            }
            Node::Print { out, nul } => {
                let sink = &mut self.sinks[*out];
                if sink.tty && !*nul {
                    sink.write(&printable(e.path));
                } else {
                    sink.write(e.path);
                }
                sink.write(if *nul { b"\0" } else { b"\n" });
                true
            }
            Node::Printf { out, format } => {
                let mut text = Bytes::new();
                let stop = self.printf(&mut text, *out, format, e, &m);
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
                    .user(m.uid)
                    .unwrap_or_else(|| m.uid.to_string().into_bytes());
                let group = self
                    .group(m.gid)
                    .unwrap_or_else(|| m.gid.to_string().into_bytes());
                printf::ls_prefix(
                    &mut text,
                    &mut self.ls,
                    &m,
                    &owner,
                    &group,
                    self.program.now.0,
                );
                printf::ls_name(&mut text, e.path);
                if m.is_link()
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
                if !self.program.depth_first && m.is_dir() {
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

    /// The type of the file system holding device `dev`, as the mount table names it
    /// (`-fstype`, `%F`): the first mount of the device, or `unknown`.
    fn fs_type(&mut self, dev: u64) -> &[u8] {
        let mounts = self.mounts.get_or_insert_with(mount_table);
        mounts
            .iter()
            .find(|(d, _)| *d == dev)
            .map_or(b"unknown".as_slice(), |(_, t)| t.as_slice())
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
        let is_dir = e.meta.get().is_some_and(|m| m.is_dir());
        let flags = if is_dir {
            AtFlags::REMOVEDIR
        } else {
            AtFlags::empty()
        };
        let mut result = rustix::fs::unlinkat(e.dir.fd(), os(e.name), flags);
        if result == Err(rustix::io::Errno::ISDIR) && !is_dir {
            result = rustix::fs::unlinkat(e.dir.fd(), os(e.name), AtFlags::REMOVEDIR);
        }
        match result {
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
    fn printf(
        &mut self,
        out: &mut Bytes,
        target: usize,
        format: &[Segment],
        e: &Entry<'_>,
        m: &Meta,
    ) -> bool {
        for segment in format {
            let (spec, letter, time) = match segment {
                Segment::Literal(text) => {
                    out.extend_from_slice(text);
                    continue;
                }
                Segment::Stop => return true,
                Segment::Directive { spec, letter, time } => (spec.as_slice(), *letter, *time),
            };
            let tty = self.sinks[target].tty;
            let name = |bytes: &[u8]| -> Bytes {
                if tty {
                    printable(bytes)
                } else {
                    bytes.to_vec()
                }
            };
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
                b'f' => printf::string(out, &name(&base_name(e.path)), spec),
                b'h' => printf::string(out, &name(&leading_dirs(e.path)), spec),
                b'H' => printf::string(out, e.root, spec),
                b'p' => printf::string(out, &name(e.path), spec),
                b'P' => {
                    let rest = &e.path[e.root.len().min(e.path.len())..];
                    let rest = rest.strip_prefix(b"/").unwrap_or(rest);
                    printf::string(out, &name(rest), spec);
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
                    printf::string(out, &name(&target.unwrap_or_default()), spec);
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
                b'y' => printf::string(out, &[e.kind.get().unwrap_or(b'U')], spec),
                b'F' => {
                    let kind = self.fs_type(m.dev).to_vec();
                    printf::string(out, &kind, spec);
                }
                b'Y' => {
                    let mut failure = None;
                    let letter = if m.is_link() {
                        match stat_at(e.dir.fd(), e.name, true) {
                            Ok(target) => target.type_letter(),
                            Err(err) if err.raw_os_error() == Some(libc::ELOOP) => b'L',
                            Err(err) if dangling(&err) => b'N',
                            Err(err) => {
                                failure = Some(err);
                                b'?'
                            }
                        }
                    } else {
                        m.type_letter()
                    };
                    printf::string(out, &[letter], spec);
                    // GNU reports the error after the `?`, in the middle of the line,
                    // without changing the exit status.
                    if let Some(err) = failure {
                        self.sinks[target].write(out);
                        out.clear();
                        self.flush_stdout();
                        find_error(&format!(
                            "{}: {}",
                            quote(e.path),
                            crate::grep::os_message(&err)
                        ));
                    }
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
            let fixed: usize = exec.argv.iter().map(|a| a.len() + 1).sum();
            let full =
                !batch.args.is_empty() && fixed + batch.size + arg.len() + 1 > self.arg_limit;
            if other_dir || full {
                self.flush_batch(i);
            }
            let batch = &mut self.batches[i];
            batch.size += arg.len() + 1;
            batch.args.push(arg);
            batch.dir = dir;
            return true;
        }
        let argv: Vec<Bytes> = exec.argv.iter().map(|a| replace_braces(a, &arg)).collect();
        if exec.ask && !self.confirm(&argv, e.path) {
            return false;
        }
        self.spawn(&argv, dir.as_ref().map(|(d, _)| d), exec.ask)
            .is_some_and(|ok| ok)
    }

    /// The `-ok` prompt on standard error; reads the answer from standard input.
    fn confirm(&mut self, argv: &[Bytes], path: &[u8]) -> bool {
        self.flush_all();
        // GNU's prompt names the command and the file only.
        let mut prompt = b"< ".to_vec();
        prompt.extend_from_slice(&argv[0]);
        prompt.extend_from_slice(b" ... ");
        prompt.extend_from_slice(path);
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
        // A starting point: its directory part, opened from the working directory. GNU
        // runs its `{} +` apart from the files below it (the key says so).
        let path = e.path;
        if path.iter().all(|&b| b == b'/') {
            let fd = open_dir(rustix::fs::CWD, b"/", true).ok()?;
            return Some((Some((Dir::Fd(Rc::new(fd)), root_key(b"/"))), b"/".to_vec()));
        }
        let trimmed_len = path.len() - path.iter().rev().take_while(|&&b| b == b'/').count();
        let (dir_part, base) = match memchr::memrchr(b'/', &path[..trimmed_len]) {
            Some(at) => (&path[..=at], &path[at + 1..]),
            None => (&b"."[..], path),
        };
        let mut arg = b"./".to_vec();
        arg.extend_from_slice(base);
        match open_dir(rustix::fs::CWD, dir_part, true) {
            Ok(fd) => Some((Some((Dir::Fd(Rc::new(fd)), root_key(dir_part))), arg)),
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
    /// `-ok` and `-okdir` run the command with standard input closed, as GNU does.
    fn spawn(&mut self, argv: &[Bytes], dir: Option<&Dir>, close_stdin: bool) -> Option<bool> {
        self.flush_all();
        let mut command = std::process::Command::new(os(&argv[0]));
        command.args(argv[1..].iter().map(|a| os(a)));
        if close_stdin {
            super::sys::close_stdin_before_exec(&mut command);
        }
        if let Some(dir) = dir {
            super::sys::chdir_before_exec(&mut command, std::os::fd::AsRawFd::as_raw_fd(&dir.fd()));
        }
        match command.status() {
            Ok(status) => {
                use std::os::unix::process::ExitStatusExt;
                if let Some(signal) = status.signal() {
                    self.flush_stdout();
                    find_error(&format!(
                        "{} terminated by signal {signal}",
                        quote(&argv[0])
                    ));
                }
                Some(status.success())
            }
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
        if self.spawn(&argv, batch.dir.as_ref().map(|(d, _)| d), false) != Some(true) {
            self.status = 1;
        }
    }
}

/// The `-execdir ... {} +` batch key of a starting point's directory: never a walked
/// directory's path (a NUL cannot be in one).
fn root_key(dir: &[u8]) -> Bytes {
    let mut key = b"\0".to_vec();
    key.extend_from_slice(dir);
    key
}

/// A name for a terminal, as GNU prints one there: `?` for each byte that is not part of
/// a printable character of the locale (control characters, invalid UTF-8).
fn printable(bytes: &[u8]) -> Bytes {
    let mut out = Bytes::with_capacity(bytes.len());
    if !crate::grep::utf8_locale() {
        out.extend(
            bytes
                .iter()
                .map(|&b| if (0x20..0x7f).contains(&b) { b } else { b'?' }),
        );
        return out;
    }
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c.is_control() {
                out.push(b'?');
            } else {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
        out.extend(std::iter::repeat_n(b'?', chunk.invalid().len()));
    }
    out
}

/// `%h`, as GNU find 4.9 prints it: what is before the last slash once trailing slashes
/// are removed (`d/` is `.`, `a/b//` is `a`, `/` is empty), or `.`; but a one-character
/// name with trailing slashes and nothing before it keeps them less one (`x/` is `x`,
/// `x//` is `x/`).
fn leading_dirs(path: &[u8]) -> Bytes {
    let mut end = path.len();
    while end > 1 && path[end - 1] == b'/' {
        end -= 1;
    }
    let cut = match memchr::memrchr(b'/', &path[..end]) {
        None if end == 1 && end < path.len() => memchr::memrchr(b'/', path),
        other => other,
    };
    match cut {
        Some(at) => path[..at].to_vec(),
        None => b".".to_vec(),
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

/// A timestamp of a `stat` (the birth time is not in one: see [`birth_time_at`]).
pub(super) fn time_of(meta: &Meta, field: TimeField) -> (i64, i64) {
    match field {
        TimeField::Birth => (i64::MIN, 0),
        TimeField::Access => meta.atime,
        TimeField::Change => meta.ctime,
        TimeField::Modify => meta.mtime,
    }
}

/// What a predicate needs of a file before it can answer (GNU's `need_stat` and
/// `need_type`).
enum Need {
    Nothing,
    Type,
    Stat,
}

fn need(node: &Node, depth_first: bool) -> Need {
    match node {
        Node::And(..)
        | Node::Or(..)
        | Node::Comma(..)
        | Node::Not(_)
        | Node::True
        | Node::False
        | Node::Name { .. }
        | Node::Path { .. }
        | Node::Regex(_)
        | Node::Print { .. }
        | Node::Quit
        | Node::Exec(_)
        | Node::Access(_)
        | Node::Delete => Need::Nothing,
        Node::Prune if depth_first => Need::Nothing,
        Node::Type { .. } => Need::Type,
        Node::Printf { format, .. } => {
            let mut need = Need::Nothing;
            for segment in format {
                if let Segment::Directive { letter, .. } = segment {
                    match letter {
                        b'p' | b'P' | b'f' | b'h' | b'H' | b'd' => {}
                        b'y' => need = Need::Type,
                        _ => return Need::Stat,
                    }
                }
            }
            need
        }
        _ => Need::Stat,
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
    fn leading_dirs_are_gnu_4_9s() {
        for (path, dirs) in [
            (&b"x/"[..], &b"x"[..]),
            (b"x//", b"x/"),
            (b"xy/", b"."),
            (b"xy//", b"."),
            (b"a/x/", b"a"),
            (b"./xy/", b"."),
            (b"a//x/", b"a/"),
            (b"a/x//", b"a"),
            (b".", b"."),
            (b"./", b"."),
            (b".//", b"./"),
            (b"a/.", b"a"),
            (b"/", b""),
            (b"/tmp/x/", b"/tmp"),
            (b"d/f", b"d"),
        ] {
            assert_eq!(
                leading_dirs(path),
                dirs,
                "{}",
                String::from_utf8_lossy(path)
            );
        }
    }

    #[test]
    fn braces_are_replaced_everywhere() {
        assert_eq!(replace_braces(b"a{}b{}", b"L"), b"aLbL");
        assert_eq!(replace_braces(b"{", b"L"), b"{");
    }
}
