//! Building a [`Session`]: the workspace, the shell, the processes, and the sandbox
//! settings assembled from the host's configuration and Claude Code's settings (SBX-3).

use super::*;

/// Builds a [`Session`].
pub struct SessionBuilder {
    pub(super) root: PathBuf,
    pub(super) additional_dirs: Vec<PathBuf>,
    pub(super) config: Option<ToolConfig>,
    pub(super) shell: Option<Result<Shell, ShellError>>,
    pub(super) private_base: Option<PathBuf>,
    pub(super) spawner: Option<Arc<dyn Spawner>>,
    pub(super) supervisor: Option<PathBuf>,
    #[cfg(target_os = "linux")]
    pub(super) supervisor_options: wavesh_exec::supervisor::Options,
    pub(super) login_env: LoginEnvChoice,
    pub(super) session_id: Option<String>,
    pub(super) state_dir: Option<PathBuf>,
    pub(super) read_state: Option<Arc<dyn ReadFileState>>,
    pub(super) permissions: Arc<Permissions>,
    pub(super) home: Option<PathBuf>,
    /// Variables the host sets for every command ([`SessionBuilder::env`]).
    pub(super) env: Vec<(std::ffi::OsString, std::ffi::OsString)>,
    /// The level the host chose ([`SessionBuilder::sandbox_level`]).
    pub(super) level: Option<wavesh_exec::sandbox::Level>,
    /// Claude Code's settings files are read (on by default).
    pub(super) claude_settings: bool,
    /// The next read-only command's shell is started ahead of it (on by default).
    pub(super) start_ahead: bool,
    pub(super) answer_without_shell: bool,
    /// Settings files named by the host, read after the usual ones.
    pub(super) settings_files: Vec<PathBuf>,
    /// The host's last word on the sandbox settings, after the files.
    pub(super) sandbox_overrides: Vec<SandboxOverride>,
}

/// A change the host makes to the sandbox settings after Claude Code's files.
type SandboxOverride = Box<dyn Fn(&mut crate::sandbox::SandboxSettings) + Send + Sync>;

/// Where a session's login-shell environment comes from (ENV).
#[derive(Debug, Clone)]
pub(super) enum LoginEnvChoice {
    /// The process-wide probe, started on first use.
    Process,
    /// A probe the host started itself.
    Handle(wavesh_env::ProbeHandle, std::time::Duration),
    /// None: commands inherit the host's environment as it is.
    Off,
}

impl SessionBuilder {
    /// Adds a directory the shell may stay in besides the workspace (CWD-2).
    pub fn additional_dir(&mut self, dir: impl Into<PathBuf>) -> &mut Self {
        self.additional_dirs.push(dir.into());
        self
    }

    /// Uses this configuration instead of [`ToolConfig::from_env`].
    pub fn config(&mut self, config: ToolConfig) -> &mut Self {
        self.config = Some(config);
        self
    }

    /// Uses this shell instead of resolving one (SHELL-2).
    pub fn shell(&mut self, shell: Shell) -> &mut Self {
        self.shell = Some(Ok(shell));
        self
    }

    /// Uses this resolution result instead of resolving from the environment: for hosts
    /// with their own shell discovery (and a resumed session whose host has none).
    pub fn shell_resolution(&mut self, resolution: Result<Shell, ShellError>) -> &mut Self {
        self.shell = Some(resolution);
        self
    }

    /// Puts the private directory under `base` instead of the system temporary directory.
    pub fn private_base(&mut self, base: impl Into<PathBuf>) -> &mut Self {
        self.private_base = Some(base.into());
        self
    }

    /// Commands inherit the host's environment only: no login-shell probe.
    pub fn no_login_env(&mut self) -> &mut Self {
        self.login_env = LoginEnvChoice::Off;
        self
    }

    /// Uses a probe the host started (`budget` bounds the first command's wait).
    pub fn login_env(
        &mut self,
        handle: wavesh_env::ProbeHandle,
        budget: std::time::Duration,
    ) -> &mut Self {
        self.login_env = LoginEnvChoice::Handle(handle, budget);
        self
    }

    /// Names the session so its shell choice is recorded and restored on resume
    /// (SHELL-3); `state_dir` holds the records.
    pub fn session(
        &mut self,
        session_id: impl Into<String>,
        state_dir: impl Into<PathBuf>,
    ) -> &mut Self {
        self.session_id = Some(session_id.into());
        self.state_dir = Some(state_dir.into());
        self
    }

    /// The host's read-file state: Bash reads are recorded there and formatter runs are
    /// checked against it (READ).
    pub fn read_state(&mut self, state: Arc<dyn ReadFileState>) -> &mut Self {
        self.read_state = Some(state);
        self
    }

    /// Starts every command through a per-session supervisor (Linux): `program
    /// __supervise` must run `wavesh_exec::supervisor::run_helper` (the `wavesh` binary
    /// does). Descendants that leave the process group are then ended with the rest, and
    /// nothing survives the host. Ignored elsewhere and when a spawner is set.
    pub fn supervisor(&mut self, program: impl Into<PathBuf>) -> &mut Self {
        self.supervisor = Some(program.into());
        self
    }

    /// How the supervisor holds trees (Linux): per-command cgroups where the machine
    /// allows them (on by default) and per-command memory and pids limits (off).
    #[cfg(target_os = "linux")]
    pub fn supervisor_options(&mut self, options: wavesh_exec::supervisor::Options) -> &mut Self {
        self.supervisor_options = options;
        self
    }

    /// Decides commands under these rules and this approver (SBX-3). By default the host
    /// approves every call and no rule applies; deny rules and the sandbox level are
    /// always the library's.
    pub fn permissions(&mut self, permissions: Permissions) -> &mut Self {
        self.permissions = Arc::new(permissions);
        self
    }

    /// The sandbox level of commands that are not approved as read-only, chosen by the
    /// host (SBX-3): Claude Code's `sandbox.enabled` then does not change it. Without
    /// this call a session runs them at `workspace-write`, or at what the settings say;
    /// `off` comes from this call, or from a settings file the user wrote, never from a
    /// default.
    pub fn sandbox_level(&mut self, level: wavesh_exec::sandbox::Level) -> &mut Self {
        self.level = Some(level);
        self
    }

    /// Builds the session even when no bash or zsh can be found: each command then fails
    /// with the reason, while the other tools answer (a server must answer each call,
    /// not exit at its start). Without it, `build` fails with the shell error.
    pub fn answer_without_shell(&mut self) -> &mut Self {
        self.answer_without_shell = true;
        self
    }

    /// Whether the next read-only command's shell is started ahead of it, after each
    /// command (on by default, with the supervisor): the sandbox's start then leaves the
    /// call's path, for one waiting shell per session. Off for a session of one
    /// command, where nothing would use it.
    pub fn start_ahead(&mut self, on: bool) -> &mut Self {
        self.start_ahead = on;
        self
    }

    /// Reads no Claude Code settings file: the sandbox is the configuration's alone.
    pub fn no_claude_settings(&mut self) -> &mut Self {
        self.claude_settings = false;
        self
    }

    /// Also applies the `sandbox` object of this settings file, after the user's
    /// (`~/.claude/settings.json`), the project's (`.claude/settings.json`) and the
    /// local one (`.claude/settings.local.json`).
    pub fn settings_file(&mut self, path: impl Into<PathBuf>) -> &mut Self {
        self.settings_files.push(path.into());
        self
    }

    /// Changes the sandbox settings after Claude Code's files were applied: the host's
    /// own flags (a command-line `--auto-allow-sandboxed`) win over the files.
    pub fn sandbox_override(
        &mut self,
        change: impl Fn(&mut crate::sandbox::SandboxSettings) + Send + Sync + 'static,
    ) -> &mut Self {
        self.sandbox_overrides.push(Box::new(change));
        self
    }

    /// The sandbox settings after the host's level and Claude Code's settings files, and
    /// a note for each file whose loosening keys were ignored (SBX-3, SBX-6).
    fn sandbox_settings(
        &self,
        config: &mut ToolConfig,
        root: &Path,
    ) -> Result<Vec<String>, SessionError> {
        use wavesh_exec::sandbox::Level;
        match self.level {
            Some(level) => config.sandbox.level = level,
            None if config.sandbox.level == Level::Off => {
                return Err(SessionError::UnsandboxedByDefault);
            }
            None => {}
        }
        let mut notes = Vec::new();
        if self.claude_settings {
            notes = self.apply_settings_files(config, root)?;
        }
        for change in &self.sandbox_overrides {
            change(&mut config.sandbox);
        }
        Ok(notes)
    }

    /// Applies Claude Code's settings files to `config`; a note for each file whose
    /// loosening keys were ignored.
    fn apply_settings_files(
        &self,
        config: &mut ToolConfig,
        root: &Path,
    ) -> Result<Vec<String>, SessionError> {
        let mut notes = Vec::new();
        let home = self.home.clone().or_else(home_dir);
        // A file inside a directory sandboxed commands may write can only tighten: a
        // command could have written it (SBX-6).
        let writable: Vec<PathBuf> = std::iter::once(root.to_path_buf())
            .chain(self.additional_dirs.iter().map(|d| absolute(d)))
            .chain(config.sandbox.allow_write.iter().cloned())
            .collect();
        for path in
            crate::sandbox::claude_settings_files(root, home.as_deref(), &self.settings_files)
        {
            let text = match std::fs::read_to_string(&path) {
                Ok(text) => text,
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
                Err(error) => {
                    return Err(SessionError::Settings(
                        crate::sandbox::SandboxSettingsError {
                            path,
                            why: format!("cannot read it: {error}"),
                        },
                    ));
                }
            };
            let ignored = config.sandbox.apply_claude_settings(
                &text,
                &path,
                root,
                home.as_deref(),
                self.level.is_some(),
                crate::sandbox::inside_any(&path, &writable),
            )?;
            if !ignored.is_empty() {
                notes.push(format!(
                    "{} ignored: {} would loosen the sandbox, and sandboxed commands may write that file",
                    path.display(),
                    ignored.join(", ")
                ));
            }
        }
        Ok(notes)
    }

    /// A variable every command of the session gets, over the inherited environment
    /// (a host's own settings, such as `CARGO_TARGET_DIR`).
    pub fn env(
        &mut self,
        key: impl Into<std::ffi::OsString>,
        value: impl Into<std::ffi::OsString>,
    ) -> &mut Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// The home directory: commands get it as `HOME`, and the sandbox hides its secrets
    /// (default: `$HOME`, as it is).
    pub fn home(&mut self, home: impl Into<PathBuf>) -> &mut Self {
        self.home = Some(home.into());
        self
    }

    /// The executor's sandbox configuration from the tool configuration.
    fn sandbox_config(
        &self,
        config: &ToolConfig,
        root: &Path,
        private: &Path,
    ) -> wavesh_exec::sandbox::SandboxConfig {
        let home = self.home.clone().or_else(home_dir);
        let sandbox = &config.sandbox;
        wavesh_exec::sandbox::SandboxConfig {
            roots: std::iter::once(root.to_path_buf())
                .chain(self.additional_dirs.iter().map(|d| absolute(d)))
                .collect(),
            extra_writable: sandbox.allow_write.clone(),
            extra_read_only: sandbox.deny_write.clone(),
            state_dirs: self
                .state_dir
                .iter()
                .cloned()
                .chain(std::iter::once(private.to_path_buf()))
                .collect(),
            secrets: sandbox.secrets(home.as_deref()),
            env: sandbox.env_filter(),
            strict: sandbox.strict,
            home,
            private_dir: Some(private.to_path_buf()),
        }
    }

    /// Starts shells through `spawner` (a test double, a host's own).
    pub fn spawner(&mut self, spawner: Arc<dyn Spawner>) -> &mut Self {
        self.spawner = Some(spawner);
        self
    }

    /// The spawner and signaller: a host's own spawner, else the supervisor where there is
    /// one and it starts, else direct children.
    /// `network`: the session's sandboxed commands get a network namespace of their own
    /// and the proxy (NET-1), where the supervisor can make it.
    fn processes(
        &self,
        network: Option<&crate::sandbox::NetworkSettings>,
        strict: bool,
    ) -> Result<(Processes, NetworkStart), SessionError> {
        let direct = default_signaller();
        if let Some(spawner) = &self.spawner {
            return Ok((
                (Arc::clone(spawner), direct, ProcessPath::Host),
                (None, None),
            ));
        }
        #[cfg_attr(not(target_os = "linux"), allow(unused_mut))]
        let mut why = None;
        #[cfg(target_os = "linux")]
        if let Some(program) = &self.supervisor {
            use wavesh_exec::supervisor::{SupervisedSignaller, SupervisedSpawner, Supervisor};
            let options = wavesh_exec::supervisor::Options {
                network: network.is_some(),
                ..self.supervisor_options
            };
            match Supervisor::start_with(program, &options) {
                Ok(supervisor) => {
                    let network = match network {
                        Some(settings) => network::start(&supervisor, settings, strict)?,
                        None => (None, None),
                    };
                    return Ok((
                        (
                            Arc::new(SupervisedSpawner::new(supervisor.clone())),
                            Arc::new(SupervisedSignaller::new(supervisor, direct)),
                            ProcessPath::Supervisor,
                        ),
                        network,
                    ));
                }
                Err(error)
                    if self.supervisor_options.limits != wavesh_exec::cgroup::Limits::default() =>
                {
                    return Err(SessionError::Limits(error.to_string()));
                }
                Err(error) => {
                    tracing::warn!(
                        %error,
                        "no supervisor: process trees are tracked by process group only"
                    );
                    why = Some(error.to_string());
                }
            }
        }
        let _ = (network, strict);
        Ok((
            (Arc::new(DirectSpawner), direct, ProcessPath::Direct { why }),
            (None, None),
        ))
    }

    /// Checks the workspace, chooses the shell and creates the private directory.
    pub fn build(&self) -> Result<Session, SessionError> {
        let root = absolute(&self.root);
        if !root.is_dir() {
            return Err(SessionError::Workspace {
                path: root,
                why: "it does not exist or is not a directory".into(),
            });
        }
        let candidate = match &self.shell {
            Some(resolution) => resolution.clone(),
            None => wavesh_exec::resolve_default_shell(),
        };
        let (selection, shell) = match self.select_shell(candidate) {
            Err(SessionError::Shell(error)) if self.answer_without_shell => (
                ShellSelection::Missing {
                    why: error.to_string(),
                },
                // Never run: every command is refused first, naming `why`.
                Shell::new(Path::new("bash"), wavesh_exec::ShellKind::Bash),
            ),
            other => other?,
        };
        let mut config = self.config.clone().unwrap_or_else(ToolConfig::from_env);
        let settings_notes = self.sandbox_settings(&mut config, &root)?;
        let dir = Arc::new(PrivateDir::create(self.private_base.as_deref())?);
        let dir_path = dir.path().to_path_buf();
        let wants_network = config.sandbox.level.is_sandboxed() && config.sandbox.network.enabled;
        let ((spawner, signaller, process_path), (network, network_note)) = self.processes(
            wants_network.then_some(&config.sandbox.network),
            config.sandbox.strict,
        )?;
        let mut settings_notes = settings_notes;
        settings_notes.extend(network_note.clone());
        let shell_path = shell.path().to_path_buf();
        let mut executor = Executor::new(shell, dir, spawner, Arc::clone(&signaller));
        executor.set_output_cap(config.output_cap_bytes);
        executor.set_start_ahead(self.start_ahead);
        let sandbox_config = self.sandbox_config(&config, &root, dir_path.as_path());
        // The login probe runs the home's start-up files outside any sandbox: never where
        // a sandboxed command of this session could write them (SBX-6).
        let writable_home = config.sandbox.level.is_sandboxed()
            && sandbox_config.home.as_deref().is_some_and(|home| {
                let writable: Vec<PathBuf> = sandbox_config
                    .roots
                    .iter()
                    .chain(&sandbox_config.extra_writable)
                    .cloned()
                    .collect();
                wavesh_exec::sandbox::home_is_writable(home, &writable)
            });
        executor.set_sandbox(sandbox_config);
        executor.set_network(network);
        if let Some(home) = &self.home {
            executor.set_env("HOME", Some(home.clone().into_os_string()));
        }
        for (key, value) in &self.env {
            executor.set_env(key, Some(value.clone()));
        }
        if config.search_shadowing {
            let trusted = config.search_binary_trusted;
            match config.search_binary.as_deref().map(|binary| {
                if trusted {
                    Ok(())
                } else {
                    search_binary_works(binary)
                }
            }) {
                Some(Ok(())) => executor.set_search_binary(config.search_binary.clone()),
                Some(Err(why)) => {
                    tracing::warn!(%why, "the built-in grep does not answer; commands use the system grep");
                    config.search_shadowing = false;
                }
                None => config.search_shadowing = false,
            }
        }
        let shared = Arc::new(Shared {
            cwd: Mutex::new(root.clone()),
            root: Dir::new(root),
            additional: RwLock::new(
                self.additional_dirs
                    .iter()
                    .map(|d| Dir::new(absolute(d)))
                    .collect(),
            ),
            executor,
            config,
            expired: Mutex::default(),
            descriptions: Mutex::default(),
            settings_notes,
            pending_note: Mutex::new(
                match (&process_path, &selection) {
                    (ProcessPath::Direct { why: Some(why) }, _) => Some(format!(
                        "wavesh's session supervisor could not start ({why}): commands run as \
                         direct children, tracked by process group only, so a process that \
                         leaves its group (setsid, a daemon) can outlive the session."
                    )),
                    _ => None,
                }
                .into_iter()
                .chain(match &selection {
                    ShellSelection::Fallback { was } => {
                        Some(shell_state::fallback_note(was, shell_path.as_path()))
                    }
                    _ => None,
                })
                .chain(
                    (writable_home && !matches!(self.login_env, LoginEnvChoice::Off)).then(|| {
                        "The login shell's environment was not read: the home directory is \
                         writable by sandboxed commands, so its start-up files could have been \
                         written by one. Commands get wavesh's own environment."
                            .to_owned()
                    }),
                )
                .chain(network_note)
                .reduce(|a, b| format!("{a}\n{b}")),
            ),
            process_path,
            selection,
            read_state: self.read_state.clone(),
            permissions: RwLock::new(Arc::clone(&self.permissions)),
            home: self.home.clone().or_else(home_dir).unwrap_or_default(),
            login_env: match &self.login_env {
                LoginEnvChoice::Off => None,
                _ if writable_home => None,
                LoginEnvChoice::Handle(handle, budget) => Some((handle.clone(), *budget)),
                LoginEnvChoice::Process => Some((
                    wavesh_env::start(),
                    wavesh_env::probe_budget(&wavesh_env::ProbeConfig::from_process()),
                )),
            },
        });
        Ok(Session {
            handle: AgentHandle {
                owner: Owner::new(&shared, false),
                shared,
            },
        })
    }
}

impl SessionBuilder {
    /// SHELL-3: a named session with a record resumes it (restored, fallback, stale);
    /// otherwise the candidate is used and, for a named session, recorded.
    fn select_shell(
        &self,
        candidate: Result<Shell, ShellError>,
    ) -> Result<(ShellSelection, Shell), SessionError> {
        let (Some(id), Some(state)) = (&self.session_id, &self.state_dir) else {
            return Ok((ShellSelection::New, candidate?));
        };
        if let Some(recorded) = shell_state::recorded(state, id) {
            let executable = |path: &Path| RealFiles.is_executable(path);
            let (selection, shell) =
                shell_state::resume(&recorded, candidate.as_ref().ok(), executable);
            if let ShellSelection::Fallback { .. } = selection
                && let Some(shell) = &shell
                && let Err(error) = shell_state::record(state, id, shell)
            {
                tracing::warn!(%error, "cannot record the session's shell");
            }
            // A stale session keeps the missing shell's path, so every command names it.
            let shell =
                shell.unwrap_or_else(|| Shell::new(&recorded, wavesh_exec::ShellKind::Bash));
            return Ok((selection, shell));
        }
        let shell = candidate?;
        if let Err(error) = shell_state::record(state, id, &shell) {
            tracing::warn!(%error, "cannot record the session's shell");
        }
        Ok((ShellSelection::New, shell))
    }
}

#[cfg(unix)]
fn default_signaller() -> Arc<dyn Signaller> {
    Arc::new(wavesh_exec::PosixSignaller)
}

#[cfg(windows)]
fn default_signaller() -> Arc<dyn Signaller> {
    Arc::new(wavesh_exec::TaskkillSignaller)
}

/// Checks once per session that `binary grep` runs and searches, so a missing or broken
/// binary leaves commands on the system grep without a word to the model (SEARCH-7).
fn search_binary_works(binary: &Path) -> Result<(), String> {
    use std::io::{Read, Write};
    use std::process::{Command, Stdio};
    let mut child = Command::new(binary)
        .args(["grep", "-o", "b"])
        .env("WAVESH_GREP_STRICT", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|error| format!("cannot run {}: {error}", binary.display()))?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(b"ab\n");
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{} grep did not finish in 5 s", binary.display()));
            }
        }
    }
    let mut out = String::new();
    if let Some(mut stdout) = child.stdout.take() {
        let _ = stdout.read_to_string(&mut out);
    }
    if out == "b\n" {
        Ok(())
    } else {
        Err(format!(
            "{} grep printed {out:?} for a known search",
            binary.display()
        ))
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// A missing or non-searching binary turns shadowing off (SEARCH-7).
    #[test]
    fn search_7_search_binary_must_answer() {
        assert!(search_binary_works(Path::new("/nonexistent/wavesh")).is_err());
        assert!(search_binary_works(Path::new("/bin/true")).is_err());
    }
}
