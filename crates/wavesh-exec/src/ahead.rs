//! The next read-only command's shell, started ahead of it (SBX-3's cost).
//!
//! Most of a sandboxed command's time before it runs is its start: the plan, the
//! Landlock ruleset, the supervisor's fork into the command's namespaces, the seccomp
//! filter and the shell's own start. None of it depends on the command's text. So while
//! a command runs, the executor starts the next read-only command's shell in the
//! background, with everything but the text: its private files, its plan and sandbox,
//! the process isolation and the shell itself, whose prelude then waits for a line on
//! descriptor 3 ([`crate::spawn::started_ahead`]). When the command ends, a shell started
//! for other inputs (the command moved the session's directory) or whose read rules are
//! no longer the current ones is started again.
//!
//! A call uses it only when it would have made the very same start now:
//! - the same request but for the text: read-only, in the foreground, no terminal, the
//!   same directory, environment (the host's included), roots and network;
//! - the same plan, made again from the same inputs (a secret that became readable or
//!   a glob that matches more changes it), built from the same read rules (nothing the
//!   secret search listed or watches changed: [`crate::sandbox::ReadsId`]);
//! - the shell still waiting (its end of the socket open).
//!
//! It then writes the command into the shell's stdin file (a memfd at offset 0, where
//! the shell has not read yet), one line into the socket, and reads the workspace's
//! secret values for masking as a cold start does. Anything else and the call starts
//! cold; the shell started ahead gets end-of-file on its socket and exits without
//! running anything, and its files are removed.
//!
//! What it costs: one waiting shell, its subreaper and its private files per session,
//! and the start's work done between calls instead of during them. Where a watched
//! directory changes between most calls every start would be thrown away, so after a
//! stale one the next chances to start ahead are let pass (1, 2, 4, 8, at most 16, until
//! one is used again).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::File;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use crate::executor::{ExecError, Files, Inner, Mode, Request, Sandboxed, full_env};
use crate::job::Job;
use crate::sandbox::{Level, Plan};
use crate::spawn::{SpawnSpec, SpawnedChild, prelude, started_ahead};
use crate::tasks::TaskManager;

/// What a start ahead was made for: every input of the spawn but the command's text.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Key {
    cwd: PathBuf,
    /// The environment the shell gets, before the sandbox's changes.
    env: BTreeMap<OsString, OsString>,
    network: bool,
    roots: Vec<PathBuf>,
}

impl Key {
    fn of(request: &Request, env: BTreeMap<OsString, OsString>) -> Key {
        Key {
            cwd: request.cwd.clone(),
            env,
            network: request.network,
            roots: request.roots.clone(),
        }
    }
}

/// Why a shell started ahead was not used.
enum Unused {
    /// Its plan or its read rules are no longer the ones a start would make now: a
    /// watched directory changed in between.
    Stale,
    /// Anything else: another directory or environment, a gone shell.
    Other,
}

/// A shell started ahead, waiting for its command.
pub(crate) struct Started {
    key: Key,
    /// Its private files, until a job takes them.
    files: Option<Files>,
    /// The shell's stdin, empty: the command is written here at offset 0.
    command: File,
    /// Our end of the socket pair the shell waits on. Closed, the shell exits.
    go: Option<OwnedFd>,
    child: Option<Box<dyn SpawnedChild>>,
    sandboxed: Sandboxed,
}

impl Started {
    /// Whether its plan would still be built from the read rules it was built from.
    fn reads_current(&self) -> bool {
        self.sandboxed
            .prepared
            .reads
            .still_current(&self.sandboxed.made)
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        // End of file on its socket: the shell exits without running anything. Its files
        // go with `files`.
        drop(self.go.take());
        if let Some(child) = self.child.take() {
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => {
                    runtime.spawn(async move {
                        let _ = child.wait().await;
                    });
                }
                // The supervisor reaps it all the same.
                Err(_) => drop(child),
            }
        }
    }
}

/// The slot of the shell started ahead, and what the next one is made for.
#[derive(Default)]
pub(crate) struct Ahead {
    /// Held by a start in progress, so a call waits for it rather than start cold beside
    /// it.
    slot: Arc<tokio::sync::Mutex<Option<Started>>>,
    /// The request a next start ahead copies: the last read-only one, in the directory
    /// the last command left.
    template: Mutex<Option<Request>>,
    disabled: AtomicBool,
    /// Moved by every discard: a start scheduled before it keeps nothing.
    epoch: AtomicU64,
    /// Starts scheduled and not yet settled.
    pending: AtomicU64,
    /// Starts found stale in a row, and how many chances to start ahead to let pass
    /// before the next one: where a watched directory changes between most calls, every
    /// start would be thrown away, and its work would only slow the commands beside it.
    stale_streak: AtomicU32,
    skip: AtomicU32,
    /// Shells started ahead that ran a command, and those ended without one.
    used: AtomicU64,
    unused: AtomicU64,
}

impl Ahead {
    pub(crate) fn set_enabled(&self, on: bool) {
        self.disabled.store(!on, Ordering::SeqCst);
    }

    /// Whether `request` could run in a shell started ahead.
    fn fits(request: &Request) -> bool {
        request.sandbox == Level::ReadOnly
            && request.tty.is_none()
            && matches!(request.mode, Mode::Foreground { .. })
    }

    /// The job of `request` in the shell started ahead, when there is one it can use
    /// (see the module's documentation). A start in progress is waited for.
    pub(crate) async fn take(
        &self,
        inner: &Inner,
        request: &Request,
        tasks: &TaskManager,
    ) -> Option<Arc<Job>> {
        if !Self::fits(request) || self.disabled.load(Ordering::SeqCst) {
            return None;
        }
        let started = self.slot.lock().await.take()?;
        let job = inner.go(started, request, tasks);
        tracing::debug!(used = job.is_ok(), "the shell started ahead");
        match job {
            Ok(job) => {
                self.used.fetch_add(1, Ordering::Relaxed);
                self.stale_streak.store(0, Ordering::SeqCst);
                self.skip.store(0, Ordering::SeqCst);
                Some(job)
            }
            Err(why) => {
                self.unused.fetch_add(1, Ordering::Relaxed);
                if matches!(why, Unused::Stale) {
                    self.found_stale();
                }
                None
            }
        }
    }

    /// A start was found stale: the next chances to start ahead are let pass, one after
    /// the first stale start in a row, then 2, 4, 8 and at most 16.
    fn found_stale(&self) {
        let streak = self.stale_streak.fetch_add(1, Ordering::SeqCst);
        self.skip.store(1 << streak.min(4), Ordering::SeqCst);
    }

    /// Whether this chance to start ahead is to be let pass.
    fn skips(&self) -> bool {
        self.skip
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
    }

    /// How many shells started ahead ran a command, and how many ended without one.
    pub(crate) fn counts(&self) -> crate::executor::StartAheadCounts {
        crate::executor::StartAheadCounts {
            used: self.used.load(Ordering::Relaxed),
            unused: self.unused.load(Ordering::Relaxed),
        }
    }

    /// Ends `started` unused.
    fn end(&self, started: Option<Started>) {
        if started.is_some() {
            self.unused.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// When a call to `request` has started its command, and again when it has ended:
    /// makes sure the next read-only command's shell is being started ahead, for the
    /// inputs it would have now. `next_cwd`: the directory the command left the session
    /// in, if it moved. A shell already started for the same inputs, whose read rules
    /// are still the current ones, is kept; any other is ended and started again.
    pub(crate) fn schedule(
        self: &Arc<Self>,
        inner: &Arc<Inner>,
        request: &Request,
        next_cwd: Option<&Path>,
    ) {
        if self.disabled.load(Ordering::SeqCst) || !inner.spawner.starts_ahead() {
            return;
        }
        let template = {
            let mut template = self.template.lock().unwrap_or_else(PoisonError::into_inner);
            if Self::fits(request) {
                *template = Some(Request {
                    command: String::new(),
                    ..request.clone()
                });
            }
            if let (Some(template), Some(cwd)) = (template.as_mut(), next_cwd) {
                template.cwd = cwd.to_path_buf();
            }
            template.clone()
        };
        let Some(template) = template else {
            return;
        };
        let epoch = self.epoch.load(Ordering::SeqCst);
        let (ahead, inner) = (Arc::clone(self), Arc::clone(inner));
        self.pending.fetch_add(1, Ordering::SeqCst);
        match Arc::clone(&self.slot).try_lock_owned() {
            Ok(slot) => ahead.refill(slot, inner, template, epoch),
            // A call or a start holds the slot: this one comes after it.
            Err(_) => {
                tokio::spawn(async move {
                    let slot = Arc::clone(&ahead.slot).lock_owned().await;
                    ahead.refill(slot, inner, template, epoch);
                });
            }
        }
    }

    /// Keeps the shell in `slot` if it was started for `template` and its read rules are
    /// still the current ones; else ends it and starts another, holding the slot until
    /// that one waits.
    fn refill(
        self: Arc<Self>,
        mut slot: tokio::sync::OwnedMutexGuard<Option<Started>>,
        inner: Arc<Inner>,
        template: Request,
        epoch: u64,
    ) {
        let settle = |ahead: &Ahead| ahead.pending.fetch_sub(1, Ordering::SeqCst);
        if self.epoch.load(Ordering::SeqCst) != epoch || self.disabled.load(Ordering::SeqCst) {
            settle(&self);
            return;
        }
        let key = Key::of(&template, full_env(&inner.env_changes(&template)));
        let same = slot.as_ref().filter(|started| started.key == key);
        if same.is_some_and(Started::reads_current) {
            settle(&self);
            return;
        }
        if same.is_some() {
            self.found_stale();
        }
        self.end(slot.take());
        if self.skips() {
            settle(&self);
            return;
        }
        tokio::spawn(async move {
            match inner.start_ahead(template, key).await {
                Ok(started)
                    if self.epoch.load(Ordering::SeqCst) == epoch
                        && !self.disabled.load(Ordering::SeqCst) =>
                {
                    *slot = Some(started);
                }
                Ok(started) => self.end(Some(started)),
                Err(error) => tracing::debug!(%error, "no shell started ahead"),
            }
            drop(slot);
            settle(&self);
        });
    }

    /// Waits until every start scheduled so far is done.
    pub(crate) async fn settled(&self) {
        loop {
            drop(self.slot.lock().await);
            if self.pending.load(Ordering::SeqCst) == 0 {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
    }

    /// Ends the shell started ahead, waiting for a start in progress; starts scheduled
    /// before keep nothing.
    pub(crate) async fn discard(&self) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
        let started = self.slot.lock().await.take();
        self.end(started);
    }

    /// Starts nothing again, and ends the shell started ahead if the slot is free (a
    /// start in progress ends its own shell when done).
    pub(crate) fn close_now(&self) {
        self.set_enabled(false);
        self.discard_now();
    }

    /// Ends the shell started ahead, if the slot is free; starts scheduled before keep
    /// nothing.
    pub(crate) fn discard_now(&self) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
        if let Ok(mut slot) = self.slot.try_lock() {
            let started = slot.take();
            self.end(started);
        }
    }
}

impl Inner {
    /// Makes all of the start but the spawn (the files, the plan, the sandbox): plain
    /// system calls, for a blocking thread, off the runtime that answers the call.
    fn prepare_ahead(
        &self,
        template: &Request,
        key: Key,
    ) -> Result<(Started, SpawnSpec), ExecError> {
        if !template.cwd.is_dir() {
            return Err(ExecError::NoWorkingDirectory(template.cwd.clone()));
        }
        let (files, output) = self.files(template)?;
        let command = self.command_file("")?;
        let ours = command
            .try_clone()
            .map_err(|source| ExecError::CommandFile {
                path: PathBuf::from("memfd:wavesh-command"),
                source,
            })?;
        let mut env = self.env_changes(template);
        let mut sandboxed = self.sandbox(template, &files, &key.env, &mut env)?;
        let (go, theirs) =
            std::os::unix::net::UnixStream::pair().map_err(|source| self.spawn_error(source))?;
        let spec = SpawnSpec {
            shell: self.shell.clone(),
            script: started_ahead(prelude(
                self.shell.kind(),
                files.cwd_file.as_deref(),
                self.search.as_deref(),
            )),
            command,
            output,
            cwd: template.cwd.clone(),
            env,
            seatbelt: None,
            sandbox: sandboxed.prepared.child.take(),
            go: Some(OwnedFd::from(theirs)),
        };
        let started = Started {
            key,
            files: Some(files),
            command: ours,
            go: Some(OwnedFd::from(go)),
            child: None,
            sandboxed,
        };
        Ok((started, spec))
    }

    /// Starts the shell of a read-only command like `template`, waiting for its text.
    async fn start_ahead(
        self: Arc<Self>,
        template: Request,
        key: Key,
    ) -> Result<Started, ExecError> {
        let inner = Arc::clone(&self);
        let (mut started, spec) =
            tokio::task::spawn_blocking(move || inner.prepare_ahead(&template, key))
                .await
                .map_err(|error| self.spawn_error(std::io::Error::other(error.to_string())))??;
        let child = self
            .spawner
            .spawn_async(spec)
            .await
            .map_err(|source| self.spawn_error(source))?;
        started.child = Some(child);
        Ok(started)
    }

    fn spawn_error(&self, source: std::io::Error) -> ExecError {
        ExecError::Spawn {
            shell: self.shell.path().display().to_string(),
            source,
        }
    }

    /// Runs `request` in `started` if it may (see the module's documentation).
    fn go(
        &self,
        mut started: Started,
        request: &Request,
        tasks: &TaskManager,
    ) -> Result<Arc<Job>, Unused> {
        let env = full_env(&self.env_changes(request));
        if started.key != Key::of(request, env) {
            tracing::debug!(
                "the shell started ahead was made for another directory or environment"
            );
            return Err(Unused::Other);
        }
        // A directory removed meanwhile: the cold start says so.
        if self.dir.ensure_room().is_err() || !request.cwd.is_dir() {
            return Err(Unused::Other);
        }
        let files = started.files.as_ref().ok_or(Unused::Other)?;
        let (plan, scope): (Plan, _) = self.plan(request, files, &started.key.env, &mut Vec::new());
        if plan != started.sandboxed.made || scope != started.sandboxed.scope {
            tracing::debug!("the plan changed since the shell was started ahead");
            return Err(Unused::Stale);
        }
        if !started.sandboxed.prepared.reads.still_current(&plan) {
            tracing::debug!("the read rules changed since the shell was started ahead");
            return Err(Unused::Stale);
        }
        use std::os::unix::fs::FileExt;
        started
            .command
            .write_all_at(request.command.as_bytes(), 0)
            .map_err(|_| Unused::Other)?;
        let go = started.go.as_ref().ok_or(Unused::Other)?;
        // A shell that is gone takes nothing: no SIGPIPE, an error.
        match rustix::net::send(go, b"\n", rustix::net::SendFlags::NOSIGNAL) {
            Ok(1) => {}
            _ => return Err(Unused::Other),
        }
        tracing::debug!(target: "wavesh_stage", stage = "planned");
        tracing::debug!(target: "wavesh_stage", stage = "spawned");
        let outcome = started.sandboxed.outcome(
            started.sandboxed.prepared.plan.clone(),
            request.cwd.clone(),
            self.network.as_ref(),
        );
        let child = started.child.take().ok_or(Unused::Other)?;
        // The shell owns the socket's other end now; ours closes with `started`.
        let files = started.files.take().ok_or(Unused::Other)?;
        Ok(self.job(request, files, child, Some(Arc::new(outcome)), None, tasks))
    }
}
