//! Interactive commands in a pseudo-terminal (PTY-1..4).
//!
//! A tty task is a task whose output is a terminal. The host opens the pair, the shell
//! gets the slave as stdin, stdout, stderr and controlling terminal (the spawners make it
//! so when stdout is a terminal), and the host keeps the master. A reader thread copies
//! what the command prints into the task's output file (the raw bytes, bounded by the
//! output cap like any output) and into a terminal emulator ([`vt100`]), so the model
//! reads the screen as a terminal shows it, never escape sequences.
//!
//! Whether the command waits for input is read from the kernel ([`Terminal::waiting`]),
//! never from the text: the terminal's foreground process group, blocked in a read of
//! this terminal. Where the kernel cannot be asked (no `/proc`), the answer is
//! [`Waiting::Unknown`].
//!
//! The pair is the host's: the shell holds the slave by descriptor only, so the
//! command's private devpts (SBX-7) stays its own, and no path of the host's terminals
//! is opened inside the sandbox.

mod screen;
#[cfg(target_os = "linux")]
mod waiting_linux;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

pub use screen::SCROLLBACK_LINES;

/// The terminal's columns unless the caller says otherwise (PTY-1).
pub const DEFAULT_COLUMNS: u16 = 120;
/// The terminal's rows unless the caller says otherwise (PTY-1).
pub const DEFAULT_ROWS: u16 = 40;
/// The `TERM` a tty command sees: the emulator understands xterm's sequences.
pub const TERM: &str = "xterm-256color";
/// The most bytes one input may carry (PTY-3): a terminal's input queue is 4 KiB, and a
/// paste of more than this belongs in a file.
pub const MAX_INPUT_BYTES: usize = 64 * 1024;
/// How long the foreground group must stay blocked in a read of the terminal, with no
/// output, before the command counts as waiting for input (PTY-2).
pub const SETTLE: Duration = Duration::from_millis(300);
/// How often the kernel's state is sampled while a call waits.
const SAMPLE_EVERY: Duration = Duration::from_millis(50);
/// How long an input may wait for room in the terminal's input queue.
const INPUT_TIMEOUT: Duration = Duration::from_secs(5);

/// A terminal's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TtySize {
    /// Columns.
    pub columns: u16,
    /// Rows.
    pub rows: u16,
}

impl Default for TtySize {
    fn default() -> Self {
        TtySize {
            columns: DEFAULT_COLUMNS,
            rows: DEFAULT_ROWS,
        }
    }
}

/// Whether a tty command waits for terminal input, as the kernel tells it (PTY-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waiting {
    /// Its foreground process group is blocked in a read of the terminal.
    Yes,
    /// It runs, sleeps, computes or waits for something else.
    No,
    /// The kernel's state cannot be read here; the reason, for the model.
    Unknown(&'static str),
}

impl Waiting {
    /// `Some(true/false)`, or `None` when unknown.
    pub fn known(self) -> Option<bool> {
        match self {
            Waiting::Yes => Some(true),
            Waiting::No => Some(false),
            Waiting::Unknown(_) => None,
        }
    }
}

/// Why writing to a terminal failed (PTY-3).
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The input is larger than [`MAX_INPUT_BYTES`].
    #[error(
        "parameter `input` is {len} bytes; at most {MAX_INPUT_BYTES} bytes can be typed at once"
    )]
    TooLarge {
        /// Its length.
        len: usize,
    },
    /// Every process holding the terminal has closed it.
    #[error("the task's terminal is closed: nothing reads it any more")]
    Closed,
    /// The program does not read, and the input queue stayed full.
    #[error("the task's terminal did not take the input within {0:?}: the program is not reading")]
    Full(Duration),
    /// Writing failed.
    #[error("writing to the task's terminal failed: {0}")]
    Io(#[from] std::io::Error),
}

/// How a wait on a tty command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TtyStop {
    /// The shell exited.
    Exited,
    /// It waits for input (PTY-2).
    Waiting,
    /// The call's timeout came first; the task runs on.
    Timeout,
    /// The caller aborted the wait.
    Aborted,
}

/// The host's side of a tty task: the master, the emulated screen and the reader.
pub struct Terminal {
    master: std::fs::File,
    /// The slave's `(st_dev, st_rdev)`: what a read must be against to count (PTY-2).
    #[cfg_attr(
        not(target_os = "linux"),
        expect(dead_code, reason = "read on Linux only")
    )]
    slave: (u64, u64),
    screen: Mutex<screen::Screen>,
    last_output: Mutex<Instant>,
    /// Set once nothing holds the slave any more and everything was read.
    closed: watch::Sender<bool>,
    size: TtySize,
    /// The user allowed input to this task for the rest of the session (PTY-4).
    input_allowed: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for Terminal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Terminal")
            .field("size", &self.size)
            .finish_non_exhaustive()
    }
}

impl Terminal {
    /// Opens a pair of `size`; returns the terminal and the slave, for the shell.
    pub fn open(size: TtySize) -> std::io::Result<(Arc<Terminal>, std::fs::File)> {
        let (master, slave) = imp::open_pair(size)?;
        let slave_id = imp::device_of(&slave)?;
        let (closed, _) = watch::channel(false);
        let terminal = Arc::new(Terminal {
            master,
            slave: slave_id,
            screen: Mutex::new(screen::Screen::new(size)),
            last_output: Mutex::new(Instant::now()),
            closed,
            size,
            input_allowed: std::sync::atomic::AtomicBool::new(false),
        });
        Ok((terminal, slave))
    }

    /// Records that the user allowed any input to this task from now on (PTY-4).
    pub fn allow_input(&self) {
        self.input_allowed
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Whether the user allowed any input to this task.
    pub fn input_allowed(&self) -> bool {
        self.input_allowed.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// The terminal's size.
    pub fn size(&self) -> TtySize {
        self.size
    }

    /// Starts copying what the command prints to `output` (up to `cap` bytes) and to the
    /// screen, until every holder of the slave has closed it.
    pub fn start_reader(self: &Arc<Self>, output: std::fs::File, cap: Option<u64>) {
        let terminal = Arc::clone(self);
        let spawned = std::thread::Builder::new()
            .name("wavesh-pty".into())
            .spawn(move || imp::pump(&terminal, output, cap));
        if let Err(error) = spawned {
            tracing::error!(%error, "cannot start the terminal reader");
            self.closed.send_replace(true);
        }
    }

    /// Feeds printed bytes to the screen; returns the answers a terminal gives to
    /// queries in them (the cursor position report).
    #[cfg_attr(not(unix), expect(dead_code, reason = "no terminals on this system"))]
    fn printed(&self, bytes: &[u8]) -> Vec<u8> {
        *lock(&self.last_output) = Instant::now();
        lock(&self.screen).process(bytes)
    }

    /// The screen as a terminal shows it, after the scrollback (PTY-3).
    pub fn render(&self) -> String {
        lock(&self.screen).render()
    }

    /// Whether the reader has seen the last byte: nothing holds the slave any more.
    pub fn is_closed(&self) -> bool {
        *self.closed.borrow()
    }

    /// Waits until the reader has seen the last byte, at most `limit`.
    pub async fn closed(&self, limit: Duration) {
        let mut closed = self.closed.subscribe();
        let _ = tokio::time::timeout(limit, closed.wait_for(|closed| *closed)).await;
    }

    /// Writes `input` to the terminal, as if typed (PTY-3). Control characters reach the
    /// program through the line discipline (`\u{3}` interrupts, `\u{4}` ends input).
    pub async fn write_input(self: &Arc<Self>, input: &[u8]) -> Result<(), InputError> {
        if input.len() > MAX_INPUT_BYTES {
            return Err(InputError::TooLarge { len: input.len() });
        }
        if self.is_closed() {
            return Err(InputError::Closed);
        }
        let terminal = Arc::clone(self);
        let input = input.to_vec();
        tokio::task::spawn_blocking(move || imp::write_all(&terminal.master, &input, INPUT_TIMEOUT))
            .await
            .map_err(|error| InputError::Io(std::io::Error::other(error)))?
    }

    /// Whether the command waits for terminal input now, from the kernel's state alone
    /// (PTY-2); see [`Terminal::wait`] for the settle time.
    pub fn waiting(&self) -> Waiting {
        imp::waiting(self)
    }

    /// [`Terminal::waiting`] with the settle time: `Yes` only if the group is blocked
    /// reading the terminal now and still after [`SETTLE`], with no output meanwhile.
    pub async fn waiting_settled(&self) -> Waiting {
        let first = self.waiting();
        if first != Waiting::Yes {
            return first;
        }
        tokio::time::sleep(SETTLE).await;
        match self.waiting() {
            Waiting::Yes if self.quiet_for() >= SETTLE => Waiting::Yes,
            Waiting::Yes => Waiting::No,
            other => other,
        }
    }

    /// Time since the command last printed.
    fn quiet_for(&self) -> Duration {
        lock(&self.last_output).elapsed()
    }

    /// Waits until the job's shell exits, the command waits for input (the kernel says
    /// so for [`SETTLE`] with no output meanwhile), `timeout` passes or `abort` is
    /// cancelled. Returns how it ended and the last reading of the kernel's state.
    pub async fn wait(
        &self,
        job: &crate::Job,
        timeout: Duration,
        abort: &CancellationToken,
    ) -> (TtyStop, Waiting) {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut waiting_since: Option<Instant> = None;
        let mut last = Waiting::No;
        loop {
            tokio::select! {
                biased;
                _ = job.wait() => {
                    // The last bytes the command printed are on the screen before the
                    // result is rendered, unless a leftover keeps the terminal open.
                    self.closed(Duration::from_millis(500)).await;
                    return (TtyStop::Exited, Waiting::No);
                }
                () = abort.cancelled() => return (TtyStop::Aborted, last),
                () = tokio::time::sleep_until(deadline) => return (TtyStop::Timeout, last),
                () = tokio::time::sleep(SAMPLE_EVERY) => {
                    last = self.waiting();
                    match last {
                        Waiting::Yes => {
                            let since = *waiting_since.get_or_insert_with(Instant::now);
                            if since.elapsed() >= SETTLE && self.quiet_for() >= SETTLE {
                                return (TtyStop::Waiting, Waiting::Yes);
                            }
                        }
                        _ => waiting_since = None,
                    }
                }
            }
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A poisoned lock only means a panic elsewhere; the screen and the instant are
    // always whole values.
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(unix)]
mod imp {
    use super::{InputError, Terminal, TtySize, Waiting};
    use std::io::{Read, Write};
    use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
    use std::time::{Duration, Instant};

    /// Opens a master (non-blocking, close-on-exec) and its slave, sized.
    #[expect(
        unsafe_code,
        reason = "posix_openpt and friends have no safe wrapper here"
    )]
    pub(super) fn open_pair(size: TtySize) -> std::io::Result<(std::fs::File, std::fs::File)> {
        // SAFETY: posix_openpt returns a new descriptor or -1.
        let master = unsafe { libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY) };
        if master < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `master` is a descriptor we own from here on.
        let master = unsafe { OwnedFd::from_raw_fd(master) };
        let fd = master.as_raw_fd();
        // SAFETY: plain calls on the master we own; `name` outlives ptsname_r's write.
        let name = unsafe {
            if libc::grantpt(fd) != 0 || libc::unlockpt(fd) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let flags = libc::fcntl(fd, libc::F_GETFD);
            libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            let flags = libc::fcntl(fd, libc::F_GETFL);
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
            slave_name(fd)?
        };
        use std::os::unix::fs::OpenOptionsExt;
        // The host must never take the command's terminal as its own.
        let slave = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOCTTY)
            .open(&name)?;
        let winsize = libc::winsize {
            ws_row: size.rows,
            ws_col: size.columns,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: TIOCSWINSZ reads a live winsize.
        if unsafe { libc::ioctl(slave.as_raw_fd(), libc::TIOCSWINSZ, &winsize) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok((std::fs::File::from(master), slave))
    }

    #[cfg(target_os = "linux")]
    #[expect(unsafe_code, reason = "ptsname_r")]
    unsafe fn slave_name(fd: i32) -> std::io::Result<std::path::PathBuf> {
        let mut buf = [0 as libc::c_char; 128];
        // SAFETY: `buf` holds 128 bytes, as told.
        if unsafe { libc::ptsname_r(fd, buf.as_mut_ptr(), buf.len()) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: ptsname_r wrote a NUL-terminated name into `buf`.
        let name = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) };
        use std::os::unix::ffi::OsStrExt;
        Ok(std::ffi::OsStr::from_bytes(name.to_bytes()).into())
    }

    #[cfg(not(target_os = "linux"))]
    #[expect(unsafe_code, reason = "ptsname")]
    unsafe fn slave_name(fd: i32) -> std::io::Result<std::path::PathBuf> {
        // SAFETY: ptsname returns a static buffer or NULL; copied at once. wavesh opens
        // terminals from one task at a time per call, and the copy is immediate.
        let name = unsafe { libc::ptsname(fd) };
        if name.is_null() {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: a NUL-terminated string from ptsname.
        let name = unsafe { std::ffi::CStr::from_ptr(name) };
        use std::os::unix::ffi::OsStrExt;
        Ok(std::ffi::OsStr::from_bytes(name.to_bytes()).into())
    }

    pub(super) fn device_of(file: &std::fs::File) -> std::io::Result<(u64, u64)> {
        let stat = rustix::fs::fstat(file.as_fd())?;
        #[allow(clippy::useless_conversion, reason = "the field types differ by OS")]
        Ok((
            u64::from(stat.st_dev as u64),
            u64::from(stat.st_rdev as u64),
        ))
    }

    /// Polls `fd` for `events` up to `timeout` (`None`: forever).
    fn poll(fd: &std::fs::File, events: i16, timeout: Option<Duration>) -> std::io::Result<i16> {
        let mut poll = libc::pollfd {
            fd: fd.as_raw_fd(),
            events,
            revents: 0,
        };
        let ms = timeout.map_or(-1, |t| i32::try_from(t.as_millis()).unwrap_or(i32::MAX));
        #[expect(unsafe_code, reason = "poll on one live pollfd")]
        // SAFETY: one live pollfd.
        let n = unsafe { libc::poll(&mut poll, 1, ms) };
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(poll.revents)
    }

    /// The reader: master to output file and screen, until the slave is closed by all.
    pub(super) fn pump(terminal: &Terminal, mut output: std::fs::File, cap: Option<u64>) {
        let mut buf = vec![0u8; 16 * 1024];
        let mut written = 0u64;
        loop {
            match poll(&terminal.master, libc::POLLIN, None) {
                Ok(_) => {}
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
            let n = match (&terminal.master).read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(error)
                    if matches!(
                        error.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
                    ) =>
                {
                    continue;
                }
                // EIO: every holder of the slave has closed it.
                Err(_) => break,
            };
            let bytes = &buf[..n];
            // The raw bytes stay in the output file, up to one byte past the cap
            // (BG-8): the job's cap watcher sees the file pass it, stops the tree and
            // trims the file to the cap, as for any command.
            let limit = cap.map(|cap| cap.saturating_add(1));
            let room = limit.map_or(n as u64, |limit| {
                limit.saturating_sub(written).min(n as u64)
            });
            if room > 0 && output.write_all(&bytes[..room as usize]).is_ok() {
                written += room;
            }
            let answers = terminal.printed(bytes);
            if !answers.is_empty() {
                let _ = write_all(&terminal.master, &answers, Duration::from_secs(1));
            }
        }
        terminal.closed.send_replace(true);
    }

    /// Writes all of `input` to the non-blocking master, waiting for room up to
    /// `timeout` in all.
    pub(super) fn write_all(
        master: &std::fs::File,
        mut input: &[u8],
        timeout: Duration,
    ) -> Result<(), InputError> {
        let deadline = Instant::now() + timeout;
        while !input.is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(InputError::Full(timeout));
            }
            let revents = poll(master, libc::POLLOUT, Some(left))?;
            if revents & (libc::POLLERR | libc::POLLNVAL) != 0 {
                return Err(InputError::Closed);
            }
            if revents & libc::POLLOUT == 0 {
                continue;
            }
            match { master }.write(input) {
                Ok(n) => input = &input[n..],
                Err(error)
                    if matches!(
                        error.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
                    ) => {}
                Err(error) if error.raw_os_error() == Some(libc::EIO) => {
                    return Err(InputError::Closed);
                }
                Err(error) => return Err(InputError::Io(error)),
            }
        }
        Ok(())
    }

    #[cfg(target_os = "linux")]
    pub(super) fn waiting(terminal: &Terminal) -> Waiting {
        super::waiting_linux::waiting(terminal.master.as_fd(), terminal.slave)
    }

    #[cfg(not(target_os = "linux"))]
    pub(super) fn waiting(_terminal: &Terminal) -> Waiting {
        // No /proc: which system call a process sleeps in cannot be read without
        // privileges, and guessing from the text is what PTY-2 forbids.
        Waiting::Unknown("this system has no /proc to read whether the program reads its terminal")
    }
}

#[cfg(not(unix))]
mod imp {
    use super::{InputError, Terminal, TtySize, Waiting};
    use std::time::Duration;

    fn unsupported() -> std::io::Error {
        std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "a pseudo-terminal (tty) is not available on this system",
        )
    }

    pub(super) fn open_pair(_size: TtySize) -> std::io::Result<(std::fs::File, std::fs::File)> {
        Err(unsupported())
    }

    pub(super) fn device_of(_file: &std::fs::File) -> std::io::Result<(u64, u64)> {
        Err(unsupported())
    }

    pub(super) fn pump(terminal: &Terminal, _output: std::fs::File, _cap: Option<u64>) {
        terminal.closed.send_replace(true);
    }

    pub(super) fn write_all(
        _master: &std::fs::File,
        _input: &[u8],
        _timeout: Duration,
    ) -> Result<(), InputError> {
        Err(InputError::Io(unsupported()))
    }

    pub(super) fn waiting(_terminal: &Terminal) -> Waiting {
        Waiting::Unknown("this system has no pseudo-terminals")
    }
}
