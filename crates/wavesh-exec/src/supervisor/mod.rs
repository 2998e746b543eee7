//! The per-session supervisor (Linux): escapee tracking without making the host a
//! subreaper.
//!
//! A process group kill misses descendants that left the group (`setsid`, double-forked
//! daemons such as `redis-server --daemonize yes`). The host must not become a subreaper
//! itself (it would adopt unknown children that its runtime never reaps), so a session
//! starts one small single-threaded helper — the `wavesh` binary re-executed as
//! `wavesh __supervise` — and every command is started through it:
//!
//! ```text
//! host ──socket── helper ──socket── subreaper (per command) ── shell (group leader) ── …
//! ```
//!
//! The subreaper (`PR_SET_CHILD_SUBREAPER`) adopts every orphan of its tree, so the
//! whole tree stays its descendants and is ended on request ([`SupervisedSignaller`]:
//! abort, timeout, TaskStop, owner release) or when the helper's socket closes. The helper
//! ends every tree when the host's socket closes: a host that crashes or is SIGKILLed
//! leaves nothing running. Trees that `wavesh run` leaves running on purpose are detached
//! ([`Signaller::detach_group`]) first.
//!
//! Host side: [`Supervisor`] (the connection and a reader thread), [`SupervisedSpawner`]
//! and [`SupervisedSignaller`]. Helper side: [`run_helper`].

#![allow(unsafe_code)]

mod helper;
mod wire;

use std::collections::HashMap;
use std::ffi::OsString;
use std::future::Future;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, mpsc};
use std::time::Duration;

use tokio::sync::oneshot;

use crate::kill::{KillSignal, SignalError, Signaller};
use crate::spawn::{ExitStatus, SpawnFuture, SpawnSpec, SpawnedChild, Spawner, shell_args};
use wire::{Reader, Writer, recv_frame, send_frame};

/// The hidden subcommand that runs the helper.
pub const HELPER_ARG: &str = "__supervise";

/// Message tags (host ⇄ helper frames and helper ⇄ subreaper records).
mod tag {
    /// host → helper: start a command.
    pub const SPAWN: u8 = b'S';
    /// host → helper → subreaper: send a signal to the whole tree.
    pub const SIGNAL: u8 = b'K';
    /// host → helper → subreaper: let the tree run on without supervision.
    pub const DETACH: u8 = b'D';
    /// → host: the shell started, with its pid.
    pub const STARTED: u8 = b'P';
    /// → host: the shell could not be started, with the errno.
    pub const FAILED: u8 = b'E';
    /// → host: the shell exited with a code.
    pub const EXIT_CODE: u8 = b'X';
    /// → host: the shell was ended by a signal.
    pub const EXIT_SIGNAL: u8 = b'Y';
    /// → host: nothing of the tree is left.
    pub const GONE: u8 = b'G';
    /// helper → host, first: the protocol it speaks.
    pub const HELLO: u8 = b'H';
}

/// The protocol version host and helper must share: a helper of another wavesh version
/// is refused at start, not misread later.
const PROTOCOL: i32 = 2;

/// How long the host waits for a new helper's first words.
const HELLO_WAIT: Duration = Duration::from_secs(10);

const KIND_CODE: u8 = tag::EXIT_CODE;
const KIND_SIGNAL: u8 = tag::EXIT_SIGNAL;

/// How long a spawn waits for the helper's answer.
const SPAWN_ANSWER: Duration = Duration::from_secs(30);

/// Runs the helper on fd 0 (the socket to the host). Returns the process exit code.
/// Call it before anything else starts threads.
pub fn run_helper() -> i32 {
    helper::run()
}

/// Where a supervised command stands.
struct Entry {
    /// The helper connection the command was started through.
    generation: u64,
    pgid: i32,
    started: Option<Started>,
    exited: Option<oneshot::Sender<ExitStatus>>,
    /// The shell exited and nothing of its tree was left.
    gone: bool,
}

/// Where the helper's answer to a spawn goes: a blocked thread or an awaiting task.
enum Started {
    Blocking(mpsc::Sender<Result<i32, i32>>),
    Async(oneshot::Sender<Result<i32, i32>>),
}

impl Started {
    fn send(self, answer: Result<i32, i32>) {
        // The spawner may have given up waiting; then nobody needs the answer.
        let _ = match self {
            Started::Blocking(tx) => tx.send(answer).map_err(drop),
            Started::Async(tx) => tx.send(answer).map_err(drop),
        };
    }
}

struct Shared {
    /// The connection to the helper; `None` once it broke.
    socket: Mutex<Option<Connection>>,
    entries: Mutex<HashMap<u64, Entry>>,
    next_id: AtomicU64,
    /// Counts helpers started, so a dying one's reader ends only its own commands.
    generations: AtomicU64,
    program: PathBuf,
}

struct Connection {
    socket: OwnedFd,
    generation: u64,
}

/// A session's supervisor: the helper process and the channel to it.
#[derive(Clone)]
pub struct Supervisor {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Supervisor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Supervisor")
            .field("program", &self.shared.program)
            .finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Supervisor {
    /// Starts the helper: `program __supervise` (the `wavesh` binary).
    pub fn start(program: impl Into<PathBuf>) -> io::Result<Supervisor> {
        let shared = Arc::new(Shared {
            socket: Mutex::new(None),
            entries: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            generations: AtomicU64::new(0),
            program: program.into(),
        });
        let supervisor = Supervisor { shared };
        let connection = supervisor.connect()?;
        *lock(&supervisor.shared.socket) = Some(connection);
        Ok(supervisor)
    }

    /// Starts a helper and its reader thread.
    fn connect(&self) -> io::Result<Connection> {
        let (ours, theirs) = std::os::unix::net::UnixStream::pair()?;
        let reader = ours.try_clone()?;
        let mut command = Command::new(&self.shared.program);
        command
            .arg(HELPER_ARG)
            .stdin(Stdio::from(OwnedFd::from(theirs)))
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        // Its own group: a terminal's Ctrl+C reaches the host, which decides.
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let child = command.spawn().map_err(|error| {
            io::Error::new(
                error.kind(),
                format!(
                    "cannot start the supervisor {} {HELPER_ARG}: {error}",
                    self.shared.program.display()
                ),
            )
        })?;
        // The command still holds our copy of the helper's end: close it, or the helper's
        // exit would never read as end of file.
        drop(command);
        if let Err(error) = expect_hello(&reader) {
            let mut child = child;
            let _ = child.kill();
            let _ = child.wait();
            return Err(io::Error::new(
                error.kind(),
                format!(
                    "the supervisor {} {HELPER_ARG} did not start: {error} (it must be the \
                     wavesh binary of this version)",
                    self.shared.program.display()
                ),
            ));
        }
        let generation = self.shared.generations.fetch_add(1, Ordering::SeqCst) + 1;
        let shared = Arc::clone(&self.shared);
        std::thread::Builder::new()
            .name("wavesh-supervisor".into())
            .spawn(move || read_helper(&shared, OwnedFd::from(reader), child, generation))?;
        Ok(Connection {
            socket: OwnedFd::from(ours),
            generation,
        })
    }

    /// Sends one frame on the live connection, starting a new helper first if the last
    /// one is gone. `before` runs with the connection's generation just before sending
    /// (a spawn registers its command there, so no answer can come before it).
    fn send_with(&self, payload: &[u8], fds: &[RawFd], before: impl FnOnce(u64)) -> io::Result<()> {
        let mut socket = lock(&self.shared.socket);
        if socket.is_none() {
            // The helper died (it is not expected to): start a new one for new commands.
            tracing::warn!("the supervisor is gone; starting a new one");
            *socket = Some(self.connect()?);
        }
        let connection = socket
            .as_ref()
            .ok_or_else(|| io::Error::other("no supervisor"))?;
        before(connection.generation);
        let sent = send_frame(connection.socket.as_raw_fd(), payload, fds);
        if sent.is_err() {
            // Gone before its reader noticed: the next call starts a new one.
            *socket = None;
        }
        sent
    }

    fn send(&self, payload: &[u8], fds: &[RawFd]) -> io::Result<()> {
        self.send_with(payload, fds, |_| {})
    }

    /// The id of the live tree whose shell leads group `pgid`, if the supervisor holds one.
    fn tree_of(&self, pgid: i32) -> Option<u64> {
        lock(&self.shared.entries)
            .iter()
            .filter(|(_, entry)| entry.pgid == pgid && !entry.gone)
            .map(|(id, _)| *id)
            .max()
    }

    fn signal_tree(&self, id: u64, signal: i32) -> io::Result<()> {
        let mut out = Writer::default();
        out.u8(tag::SIGNAL).u64(id).i32(signal);
        self.send(&out.0, &[])
    }

    /// Starts a command, waiting in this thread for the helper's answer; if the helper
    /// turns out to be gone, once more through a new one.
    fn spawn(&self, spec: &SpawnSpec) -> io::Result<SupervisedChild> {
        let once = || {
            let (tx, rx) = mpsc::channel();
            let (id, exited) = self.register_spawn(spec, Started::Blocking(tx))?;
            let answer = rx.recv_timeout(SPAWN_ANSWER).ok();
            self.finish_spawn(id, answer, exited)
        };
        match once() {
            Err(error) if helper_gone(&error) => {
                tracing::warn!(%error, "the supervisor was gone; starting the command again");
                once()
            }
            result => result,
        }
    }

    /// As [`Supervisor::spawn`], awaiting the helper's answer instead of blocking.
    async fn spawn_async(&self, spec: &SpawnSpec) -> io::Result<SupervisedChild> {
        let once = || async {
            let (tx, rx) = oneshot::channel();
            let (id, exited) = self.register_spawn(spec, Started::Async(tx))?;
            let answer = tokio::time::timeout(SPAWN_ANSWER, rx)
                .await
                .ok()
                .and_then(Result::ok);
            self.finish_spawn(id, answer, exited)
        };
        match once().await {
            Err(error) if helper_gone(&error) => {
                tracing::warn!(%error, "the supervisor was gone; starting the command again");
                once().await
            }
            result => result,
        }
    }

    /// Registers a command and asks the helper to start it; its answer goes to `started`.
    fn register_spawn(
        &self,
        spec: &SpawnSpec,
        started: Started,
    ) -> io::Result<(u64, oneshot::Receiver<ExitStatus>)> {
        let id = self.shared.next_id.fetch_add(1, Ordering::SeqCst);
        let (exited_tx, exited_rx) = oneshot::channel();
        let entry = Entry {
            generation: 0,
            pgid: 0,
            started: Some(started),
            exited: Some(exited_tx),
            gone: false,
        };
        let sent = self.request_spawn(id, spec, |generation| {
            lock(&self.shared.entries).insert(
                id,
                Entry {
                    generation,
                    ..entry
                },
            );
        });
        match sent {
            Ok(()) => Ok((id, exited_rx)),
            Err(error) => {
                lock(&self.shared.entries).remove(&id);
                Err(error)
            }
        }
    }

    /// Turns the helper's answer (`None`: none came in time) into the started command.
    fn finish_spawn(
        &self,
        id: u64,
        answer: Option<Result<i32, i32>>,
        exited: oneshot::Receiver<ExitStatus>,
    ) -> io::Result<SupervisedChild> {
        let result = match answer {
            Some(Ok(pid)) => Ok(SupervisedChild { pid, exited }),
            Some(Err(errno)) => Err(io::Error::from_raw_os_error(errno)),
            None => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the supervisor did not answer a spawn",
            )),
        };
        if result.is_err() {
            lock(&self.shared.entries).remove(&id);
        }
        result
    }

    fn request_spawn(
        &self,
        id: u64,
        spec: &SpawnSpec,
        register: impl FnOnce(u64),
    ) -> io::Result<()> {
        let mut env: HashMap<OsString, OsString> = std::env::vars_os().collect();
        for (key, value) in &spec.env {
            match value {
                Some(value) => env.insert(key.clone(), value.clone()),
                None => env.remove(key),
            };
        }
        let mut out = Writer::default();
        out.u8(tag::SPAWN)
            .u64(id)
            .bytes(spec.shell.path().as_os_str().as_bytes());
        let args: Vec<&[u8]> = shell_args(spec.shell.kind())
            .iter()
            .map(|arg| arg.as_bytes())
            .chain(std::iter::once(spec.script.as_bytes()))
            .collect();
        out.u32(args.len() as u32);
        for arg in args {
            out.bytes(arg);
        }
        out.u32(env.len() as u32);
        for (key, value) in &env {
            let mut entry = key.as_bytes().to_vec();
            entry.push(b'=');
            entry.extend_from_slice(value.as_bytes());
            out.bytes(&entry);
        }
        out.bytes(absolute(&spec.cwd).as_os_str().as_bytes());
        let (sandbox, ruleset) = crate::sandbox::encode_child(spec.sandbox.as_ref());
        out.bytes(&sandbox);
        let mut fds = vec![spec.command.as_raw_fd(), spec.output.as_raw_fd()];
        fds.extend(ruleset);
        self.send_with(&out.0, &fds, register)
    }
}

/// Reads a new helper's first frame and checks its protocol.
fn expect_hello(socket: &std::os::unix::net::UnixStream) -> io::Result<()> {
    socket.set_read_timeout(Some(HELLO_WAIT))?;
    let frame = recv_frame(socket.as_raw_fd()).map_err(|error| {
        if error.kind() == io::ErrorKind::WouldBlock {
            io::Error::new(
                io::ErrorKind::TimedOut,
                format!("no answer within {} s", HELLO_WAIT.as_secs()),
            )
        } else {
            error
        }
    });
    socket.set_read_timeout(None)?;
    let Some((payload, _)) = frame? else {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "it exited without a word",
        ));
    };
    let mut reader = Reader::new(&payload);
    let (kind, _, version) = (reader.u8("tag")?, reader.u64("id")?, reader.i32("version")?);
    if kind != tag::HELLO || version != PROTOCOL {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("it speaks protocol {version}, not {PROTOCOL}"),
        ));
    }
    Ok(())
}

/// Whether a spawn failed because the helper is gone (it died or its socket broke).
fn helper_gone(error: &io::Error) -> bool {
    matches!(
        error.raw_os_error(),
        Some(libc::EPIPE | libc::ECONNRESET | libc::ENOTCONN)
    )
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The reader thread: routes the helper's messages to the waiting commands, and when the
/// helper is gone, ends every wait (its trees were ended by their subreapers).
fn read_helper(shared: &Arc<Shared>, socket: OwnedFd, mut child: Child, generation: u64) {
    loop {
        match recv_frame(socket.as_raw_fd()) {
            Ok(Some((payload, _))) => {
                if let Err(error) = route(shared, &payload) {
                    tracing::error!(%error, "a bad message from the supervisor");
                }
            }
            Ok(None) => break,
            Err(error) => {
                tracing::error!(%error, "reading from the supervisor failed");
                break;
            }
        }
    }
    {
        let mut connection = lock(&shared.socket);
        if connection
            .as_ref()
            .is_some_and(|c| c.generation == generation)
        {
            *connection = None;
        }
    }
    let mut entries = lock(&shared.entries);
    let ids: Vec<u64> = entries
        .iter()
        .filter(|(_, entry)| entry.generation == generation)
        .map(|(id, _)| *id)
        .collect();
    if !ids.is_empty() {
        tracing::error!(
            commands = ids.len(),
            "the supervisor exited; its commands were ended"
        );
    }
    for mut entry in ids.into_iter().filter_map(|id| entries.remove(&id)) {
        if let Some(started) = entry.started.take() {
            started.send(Err(libc::EPIPE));
        }
        if let Some(exited) = entry.exited.take() {
            let _ = exited.send(ExitStatus::Signal(libc::SIGKILL));
        }
    }
    drop(entries);
    let _ = child.wait();
}

fn route(shared: &Shared, payload: &[u8]) -> io::Result<()> {
    let mut reader = Reader::new(payload);
    let kind = reader.u8("tag")?;
    let id = reader.u64("id")?;
    let a = reader.i32("value")?;
    let b = reader.i32("value")?;
    let mut entries = lock(&shared.entries);
    let Some(entry) = entries.get_mut(&id) else {
        return Ok(());
    };
    match kind {
        tag::STARTED => {
            entry.pgid = a;
            if let Some(started) = entry.started.take() {
                started.send(Ok(a));
            }
        }
        tag::FAILED => {
            if let Some(started) = entry.started.take() {
                started.send(Err(a));
            }
            entries.remove(&id);
        }
        tag::EXIT_CODE | tag::EXIT_SIGNAL => {
            let status = if kind == tag::EXIT_CODE {
                ExitStatus::Code(a)
            } else {
                ExitStatus::Signal(a)
            };
            // Marked before the exit is told, so whoever sees the exit sees whether
            // anything was left.
            if b == 1 {
                entry.gone = true;
            }
            if let Some(exited) = entry.exited.take() {
                let _ = exited.send(status);
            }
        }
        tag::GONE => {
            let Some(mut entry) = entries.remove(&id) else {
                return Ok(());
            };
            if let Some(started) = entry.started.take() {
                // Gone before it ever said whether the shell started: the spawn fails.
                started.send(Err(libc::ECHILD));
                return Ok(());
            }
            if let Some(exited) = entry.exited.take() {
                // The subreaper went away before the shell's exit (it was killed from
                // outside): end the group directly, the most that can still be reached,
                // and say the command was killed rather than leave its caller waiting.
                tracing::error!(
                    pgid = entry.pgid,
                    "the supervisor lost a command; ending its process group"
                );
                // SAFETY: sending a signal to a process group (pgid > 0: it started).
                unsafe { libc::kill(-entry.pgid, libc::SIGKILL) };
                let _ = exited.send(ExitStatus::Signal(libc::SIGKILL));
            }
        }
        other => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("unknown supervisor message {other}"),
            ));
        }
    }
    Ok(())
}

/// Starts shells through a [`Supervisor`].
#[derive(Debug, Clone)]
pub struct SupervisedSpawner {
    supervisor: Supervisor,
}

impl SupervisedSpawner {
    /// Spawns through `supervisor`.
    pub fn new(supervisor: Supervisor) -> SupervisedSpawner {
        SupervisedSpawner { supervisor }
    }
}

struct SupervisedChild {
    pid: i32,
    exited: oneshot::Receiver<ExitStatus>,
}

impl SpawnedChild for SupervisedChild {
    fn pid(&self) -> i32 {
        self.pid
    }

    fn pgid(&self) -> i32 {
        self.pid
    }

    fn wait(self: Box<Self>) -> Pin<Box<dyn Future<Output = io::Result<ExitStatus>> + Send>> {
        Box::pin(async move {
            match self.exited.await {
                Ok(status) => Ok(status),
                // Only a detached tree loses its sender (a helper that dies sends a
                // status for every command): its end is never known, by design.
                Err(_) => std::future::pending().await,
            }
        })
    }
}

impl Spawner for SupervisedSpawner {
    fn spawn(&self, spec: SpawnSpec) -> io::Result<Box<dyn SpawnedChild>> {
        Ok(Box::new(self.supervisor.spawn(&spec)?))
    }

    fn spawn_async(&self, spec: SpawnSpec) -> SpawnFuture<'_> {
        Box::pin(async move {
            let child = self.supervisor.spawn_async(&spec).await?;
            // The helper has its own copies of the descriptors by now; ours close here.
            drop(spec);
            Ok(Box::new(child) as Box<dyn SpawnedChild>)
        })
    }
}

/// Signals whole trees through the supervisor, escapees included, and the group directly
/// as well; groups the supervisor does not hold are signalled as before.
pub struct SupervisedSignaller {
    supervisor: Supervisor,
    direct: Arc<dyn Signaller>,
}

impl SupervisedSignaller {
    /// Wraps `direct` (the plain POSIX signaller).
    pub fn new(supervisor: Supervisor, direct: Arc<dyn Signaller>) -> SupervisedSignaller {
        SupervisedSignaller { supervisor, direct }
    }
}

impl Signaller for SupervisedSignaller {
    fn signal_group(&self, pgid: i32, signal: KillSignal) -> Result<(), SignalError> {
        let Some(id) = self.supervisor.tree_of(pgid) else {
            return self.direct.signal_group(pgid, signal);
        };
        let number = match signal {
            KillSignal::Terminate => libc::SIGTERM,
            KillSignal::Kill => libc::SIGKILL,
        };
        // The group directly too: it works even if the helper were gone.
        let direct = self.direct.signal_group(pgid, signal);
        match self.supervisor.signal_tree(id, number) {
            Ok(()) => Ok(()),
            Err(error) => {
                tracing::warn!(pgid, %error, "signalling through the supervisor failed");
                direct
            }
        }
    }

    fn signal_process(&self, pid: i32, signal: KillSignal) -> Result<(), SignalError> {
        self.direct.signal_process(pid, signal)
    }

    fn group_exists(&self, pgid: i32) -> bool {
        self.supervisor.tree_of(pgid).is_some() || self.direct.group_exists(pgid)
    }

    fn detach_group(&self, pgid: i32) {
        if let Some(id) = self.supervisor.tree_of(pgid) {
            // Forgotten before the helper is told: its end-of-tree notice, which may come
            // back at once, must not read as a lost command.
            lock(&self.supervisor.shared.entries).remove(&id);
            let mut out = Writer::default();
            out.u8(tag::DETACH).u64(id);
            if let Err(error) = self.supervisor.send(&out.0, &[]) {
                tracing::warn!(pgid, %error, "detaching a tree from the supervisor failed");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A program that is not a wavesh supervisor is refused at start, by name.
    #[test]
    fn a_helper_that_does_not_answer_is_refused() {
        let error = Supervisor::start("/bin/true").expect_err("/bin/true is no supervisor");
        let text = error.to_string();
        assert!(
            text.contains("/bin/true __supervise did not start"),
            "{text}"
        );
        assert!(text.contains("exited without a word"), "{text}");
    }
}
