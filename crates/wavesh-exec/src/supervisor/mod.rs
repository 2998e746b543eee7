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

mod helper;
mod network;
mod reaper;
mod wire;

pub use network::Network;
use network::{NETWORK_ENV, NetworkHook};

/// Set for a helper whose commands outside the sandbox keep the host's PID namespace.
const NO_OFF_PID_NS_ENV: &str = "WAVESH_NO_OFF_PID_NAMESPACE";
pub use reaper::{REAPER_ARG, run_reaper};

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
    /// helper → host, right after the fork: the subreaper's pidfd.
    pub const SUBREAPER: u8 = b'R';
    /// helper → host, after its hello when asked: the session network's listeners, or
    /// why there is none (NET-1).
    pub const NETWORK: u8 = b'N';
}

/// The protocol version host and helper must share: a helper of another wavesh version
/// is refused at start, not misread later.
const PROTOCOL: i32 = 4;

/// How long the host waits for a new helper's first words.
const HELLO_WAIT: Duration = Duration::from_secs(10);

const KIND_CODE: u8 = tag::EXIT_CODE;
const KIND_SIGNAL: u8 = tag::EXIT_SIGNAL;

/// How long a spawn waits for the helper's answer.
const SPAWN_ANSWER: Duration = Duration::from_secs(30);

/// Whether this kernel has pidfds (Linux 5.3), which the watchdog needs to resume a
/// stopped helper or subreaper without signalling a bare pid (PROC-1, PROC-2).
pub fn pidfds_supported() -> bool {
    rustix::process::pidfd_open(
        rustix::process::getpid(),
        rustix::process::PidfdFlags::empty(),
    )
    .is_ok()
}

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
    /// The command's subreaper, as a pidfd, resumed by the watchdog if stopped.
    subreaper: Option<OwnedFd>,
    /// The command's own cgroup, where the machine allows them (PROC-1).
    cgroup: Option<crate::cgroup::CommandCgroup>,
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
    /// One cgroup per command under this, where the machine allows it.
    cgroups: Option<crate::cgroup::CgroupSession>,
    /// Limits that ended commands, by the group of their shell, until asked for.
    fired: Mutex<HashMap<i32, crate::cgroup::LimitFired>>,
    /// Whether each helper makes the session's network namespace.
    network_wanted: bool,
    /// Whether commands outside the sandbox get a PID namespace where the machine allows
    /// it ([`Options::off_pid_namespace`]).
    off_pid_namespace: bool,
    /// The latest helper's network namespace.
    network: Mutex<Network>,
    /// Called with the listeners of every helper started after the first (its namespace
    /// is new): the proxy accepts on them.
    on_network: Mutex<Option<NetworkHook>>,
}

struct Connection {
    socket: OwnedFd,
    generation: u64,
    /// The helper, as a pidfd taken while it was our unreaped child.
    pidfd: Option<OwnedFd>,
}

/// How often the watchdog resumes the helper and the subreapers (PROC-2): a command that
/// stops them (`kill -STOP $PPID`) holds them for at most this long.
const WATCHDOG: Duration = Duration::from_millis(100);

/// How a [`Supervisor`] holds its trees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// One cgroup v2 per command where the machine allows it (the default); off, the
    /// subreapers alone hold the trees.
    pub cgroups: bool,
    /// Per-command limits (off by default); they need cgroups.
    pub limits: crate::cgroup::Limits,
    /// The session's own network namespace for its sandboxed commands (NET-1).
    pub network: bool,
    /// A PID namespace per command outside the sandbox, where the helper runs as root
    /// (SBX-7: no tree outlives its session; see `wavesh_exec::sandbox::off_pid_namespace`).
    /// On by default; off, such a tree is held by its cgroup and subreaper alone, as for a
    /// user other than root.
    pub off_pid_namespace: bool,
}

impl Default for Options {
    /// Cgroups on unless `WAVESH_CGROUPS=0` (or `off`) says otherwise; no limits.
    fn default() -> Options {
        let off = std::env::var(crate::env_vars::WAVESH_CGROUPS)
            .is_ok_and(|value| matches!(value.as_str(), "0" | "off" | "false" | "no"));
        Options {
            cgroups: !off,
            limits: crate::cgroup::Limits::default(),
            network: false,
            off_pid_namespace: true,
        }
    }
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
    /// Starts the helper: `program __supervise` (the `wavesh` binary), with one cgroup per
    /// command where the machine allows it and no limits.
    pub fn start(program: impl Into<PathBuf>) -> io::Result<Supervisor> {
        Supervisor::start_with(program, &Options::default())
    }

    /// As [`Supervisor::start`], with `options`. Limits need cgroups with those
    /// controllers delegated: where they cannot be had, this fails, naming what is
    /// missing, rather than run commands without the limits asked for.
    pub fn start_with(program: impl Into<PathBuf>, options: &Options) -> io::Result<Supervisor> {
        let limits = options.limits;
        let made = if options.cgroups {
            crate::cgroup::CgroupSession::create(limits)
        } else {
            Err("per-command cgroups are turned off".to_owned())
        };
        let cgroups = match made {
            Ok(cgroups) => {
                tracing::debug!(dir = %cgroups.path().display(), "one cgroup per command");
                Some(cgroups)
            }
            Err(why) if limits == crate::cgroup::Limits::default() => {
                tracing::debug!(%why, "no per-command cgroups; subreapers hold the trees");
                None
            }
            Err(why) => {
                return Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    format!("per-command limits were asked for, but {why}"),
                ));
            }
        };
        let shared = Arc::new(Shared {
            socket: Mutex::new(None),
            entries: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            generations: AtomicU64::new(0),
            program: program.into(),
            cgroups,
            fired: Mutex::new(HashMap::new()),
            network_wanted: options.network,
            off_pid_namespace: options.off_pid_namespace,
            network: Mutex::new(Network::Off),
            on_network: Mutex::new(None),
        });
        let supervisor = Supervisor { shared };
        let connection = supervisor.connect()?;
        *lock(&supervisor.shared.socket) = Some(connection);
        let weak = Arc::downgrade(&supervisor.shared);
        std::thread::Builder::new()
            .name("wavesh-supervisor-watchdog".into())
            .spawn(move || watchdog(&weak))?;
        Ok(supervisor)
    }

    /// Starts a helper and its reader thread.
    fn connect(&self) -> io::Result<Connection> {
        let (ours, theirs) = std::os::unix::net::UnixStream::pair()?;
        let reader = ours.try_clone()?;
        let mut command = Command::new(&self.shared.program);
        command
            .arg(HELPER_ARG)
            // SBX-2: every command's shell gets its environment in its request. The
            // helper's own would be readable in `/proc/1/environ` of a sandboxed
            // command's PID namespace, whose init is a fork of the helper.
            .env_clear()
            .envs(self.shared.network_wanted.then_some((NETWORK_ENV, "1")))
            .envs((!self.shared.off_pid_namespace).then_some((NO_OFF_PID_NS_ENV, "1")))
            .stdin(Stdio::from(OwnedFd::from(theirs)))
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        // The helper makes itself a session leader first thing (PROC-3): a terminal's
        // Ctrl+C reaches the host, which decides, and no command can reach the terminal
        // through it.
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
        if self.shared.network_wanted
            && let Err(error) = network::adopt(&self.shared, &reader)
        {
            let mut child = child;
            let _ = child.kill();
            let _ = child.wait();
            return Err(error);
        }
        // Taken while the helper is our unreaped child: the pidfd is that process for good.
        let pidfd = rustix::process::Pid::from_raw(child.id() as i32).and_then(|pid| {
            rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
        });
        let generation = self.shared.generations.fetch_add(1, Ordering::SeqCst) + 1;
        let shared = Arc::clone(&self.shared);
        std::thread::Builder::new()
            .name("wavesh-supervisor".into())
            .spawn(move || read_helper(&shared, OwnedFd::from(reader), child, generation))?;
        Ok(Connection {
            socket: OwnedFd::from(ours),
            generation,
            pidfd,
        })
    }

    /// Whether each command of this supervisor gets a cgroup of its own.
    pub fn uses_cgroups(&self) -> bool {
        self.shared.cgroups.is_some()
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
            subreaper: None,
            cgroup: None,
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
        // PROC-3: nothing that changes how the shell behaves, from wherever it came.
        env.retain(|key, _| !crate::env_vars::stripped_from_commands(key.as_encoded_bytes()));
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
        let cgroup = self.shared.cgroups.as_ref().and_then(|cgroups| {
            let made = cgroups.command(id).and_then(|cgroup| {
                let directory = cgroup.directory()?;
                Ok((cgroup, directory))
            });
            made.map_err(|error| tracing::warn!(%error, "no cgroup for this command"))
                .ok()
        });
        out.u8(u8::from(cgroup.is_some()));
        if let Some((cgroup, _)) = &cgroup {
            // The helper and subreaper remove it, and the session's directory, once they
            // are empty: the host may exit without dropping anything.
            out.bytes(cgroup.path().as_os_str().as_bytes());
        }
        // A shell started ahead waits on this socket (descriptor 3 in the shell).
        out.u8(u8::from(spec.go.is_some()));
        let mut fds = vec![spec.command.as_raw_fd(), spec.output.as_raw_fd()];
        fds.extend(ruleset);
        if let Some((_, directory)) = &cgroup {
            fds.push(directory.as_raw_fd());
        }
        fds.extend(spec.go.as_ref().map(AsRawFd::as_raw_fd));
        let (cgroup, _directory) = cgroup.unzip();
        self.send_with(&out.0, &fds, |generation| {
            register(generation);
            if let Some(entry) = lock(&self.shared.entries).get_mut(&id) {
                entry.cgroup = cgroup;
            }
        })
    }
}

/// Resumes the helper and every subreaper every [`WATCHDOG`], through pidfds (PROC-1,
/// PROC-2): a command that stops its supervisor (`kill -STOP $PPID`) cannot hang its own
/// call, TaskStop or the session's end. SIGCONT to a running process does nothing. Ends
/// with the supervisor.
fn watchdog(shared: &std::sync::Weak<Shared>) {
    use rustix::process::{Signal, pidfd_send_signal};
    loop {
        std::thread::sleep(WATCHDOG);
        let Some(shared) = shared.upgrade() else {
            return;
        };
        if let Some(pidfd) = lock(&shared.socket).as_ref().and_then(|c| c.pidfd.as_ref()) {
            let _ = pidfd_send_signal(pidfd, Signal::CONT);
        }
        for entry in lock(&shared.entries).values() {
            if let Some(pidfd) = &entry.subreaper {
                let _ = pidfd_send_signal(pidfd, Signal::CONT);
            }
        }
    }
}

/// The pid a pidfd holds, from `/proc/self/fdinfo` (for counting only).
fn pidfd_pid(pidfd: &OwnedFd) -> Option<i32> {
    let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", pidfd.as_raw_fd())).ok()?;
    info.lines()
        .find_map(|line| line.strip_prefix("Pid:"))
        .and_then(|pid| pid.trim().parse().ok())
        .filter(|pid| *pid > 0)
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
            Ok(Some((payload, fds))) => {
                if let Err(error) = route(shared, &payload, fds) {
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
        // The helper is gone: its subreapers end their trees, unless the command stopped
        // them too; a cgroup ends the tree whatever state they are in (PROC-2).
        if let Some(cgroup) = &entry.cgroup {
            let _ = cgroup.kill();
        }
        // A subreaper the command stopped would never see the helper's end: resume it
        // once more, so it ends its tree (where no cgroup did) and exits.
        if let Some(pidfd) = &entry.subreaper {
            let _ = rustix::process::pidfd_send_signal(pidfd, rustix::process::Signal::CONT);
        }
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

fn route(shared: &Shared, payload: &[u8], fds: Vec<OwnedFd>) -> io::Result<()> {
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
        tag::SUBREAPER => {
            entry.subreaper = fds.into_iter().next();
        }
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
            // A limit that fired is noted before the exit is told, for the same reason.
            if let Some(fired) = entry.cgroup.as_ref().and_then(|c| c.limit_fired()) {
                lock(&shared.fired).insert(entry.pgid, fired);
            }
            // Marked before the exit is told, so whoever sees the exit sees whether
            // anything was left.
            if b == 1 {
                entry.gone = true;
                // Its subreaper is exiting: nothing left to resume.
                entry.subreaper = None;
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
                // outside). Its tree was left to the helper, a subreaper too, which ends
                // it (PROC-2), and its cgroup is killed where it has one; no number is
                // signalled from here (PROC-1). Say the command was killed rather than
                // leave its caller waiting.
                if let Some(cgroup) = &entry.cgroup {
                    let _ = cgroup.kill();
                }
                tracing::error!(
                    pgid = entry.pgid,
                    "the supervisor lost a command; the helper ends its tree"
                );
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

    fn isolates_processes(&self) -> bool {
        true
    }

    fn starts_ahead(&self) -> bool {
        true
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

/// Signals whole trees through the supervisor, escapees included, and nothing else
/// (PROC-1): every command of a supervised session is started through the supervisor, so
/// a group it does not hold (any more) is gone, and its number may be a stranger's now.
/// The helper's subreapers signal only processes they hold.
pub struct SupervisedSignaller {
    supervisor: Supervisor,
}

impl SupervisedSignaller {
    /// Signals through `supervisor`. `_direct`, the plain POSIX signaller, is no longer
    /// used: a bare group number is never signalled from the host.
    pub fn new(supervisor: Supervisor, _direct: Arc<dyn Signaller>) -> SupervisedSignaller {
        SupervisedSignaller { supervisor }
    }
}

impl Signaller for SupervisedSignaller {
    fn signal_group(&self, pgid: i32, signal: KillSignal) -> Result<(), SignalError> {
        let Some(id) = self.supervisor.tree_of(pgid) else {
            return Err(SignalError::Gone);
        };
        let number = match signal {
            KillSignal::Terminate => libc::SIGTERM,
            KillSignal::Kill => libc::SIGKILL,
        };
        if signal == KillSignal::Kill
            && let Some(cgroup) = lock(&self.supervisor.shared.entries)
                .get(&id)
                .and_then(|entry| entry.cgroup.as_ref())
            && let Err(error) = cgroup.kill()
        {
            tracing::warn!(pgid, %error, "cgroup.kill failed; the subreaper ends the tree");
        }
        match self.supervisor.signal_tree(id, number) {
            Ok(()) => Ok(()),
            // The helper is gone, and its subreapers end their trees on their own.
            Err(error) if helper_gone(&error) => Err(SignalError::Gone),
            Err(error) => Err(SignalError::Failed(error)),
        }
    }

    fn signal_process(&self, pid: i32, signal: KillSignal) -> Result<(), SignalError> {
        // The shell leads its tree's group: the whole tree is the most precise target the
        // supervisor holds for it.
        self.signal_group(pid, signal)
    }

    fn group_exists(&self, pgid: i32) -> bool {
        self.supervisor.tree_of(pgid).is_some()
    }

    fn limit_fired(&self, pgid: i32) -> Option<String> {
        lock(&self.supervisor.shared.fired)
            .remove(&pgid)
            .map(crate::cgroup::LimitFired::sentence)
    }

    fn tree_size(&self, pgid: i32) -> Option<usize> {
        let id = self.supervisor.tree_of(pgid)?;
        let entries = lock(&self.supervisor.shared.entries);
        let subreaper = pidfd_pid(entries.get(&id)?.subreaper.as_ref()?)?;
        drop(entries);
        let processes: Vec<(i32, crate::proc_stat::Stat)> = crate::proc_stat::all()?.collect();
        let mut tree = vec![subreaper];
        let mut i = 0;
        while i < tree.len() {
            let parent = tree[i];
            tree.extend(
                processes
                    .iter()
                    .filter(|(_, stat)| stat.ppid == parent && !stat.is_zombie())
                    .map(|(pid, _)| *pid),
            );
            i += 1;
        }
        Some(tree.len() - 1)
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
