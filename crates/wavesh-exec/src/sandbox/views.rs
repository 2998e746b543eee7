//! What ordinary work writes outside the workspace, given to `workspace-write` without a
//! prompt (SBX-8), each in a view that keeps the host's files as they are:
//!
//! - `/tmp`: a directory of the session's own, mounted over `/tmp` in the command's mount
//!   namespace and shared by every command of the session. Nothing a command writes
//!   there reaches a file of another user, another session or wavesh itself. The
//!   workspace, the additional directories, the home and the session's private files
//!   are mounted back at their paths when they lie under `/tmp`.
//! - The toolchain caches (cargo, npm, pip, go, yarn, pnpm, maven, gradle, uv, bun):
//!   overlays whose lower layer is the user's real cache and whose upper layer is a
//!   directory of the workspace's own in wavesh's state. The real cache never changes.
//! - An output directory the user configured for a toolchain (`CARGO_TARGET_DIR`):
//!   writable as it is, since its purpose is the build's output.
//!
//! The secret list holds inside all of them: a cache that holds a secret path is left
//! out of the views, and secrets inside writable directories are hidden by mounts as in
//! the workspace.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::Plan;

/// The views of one command at `workspace-write` (empty at the other levels).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Views {
    /// `/tmp` as a directory of the session's own.
    pub tmp: Option<TmpView>,
    /// Copy-on-write toolchain caches.
    pub caches: Vec<CacheView>,
    /// Caches that stay read-only, with the reason, for the result note (SBX-5).
    pub read_only_caches: Vec<(PathBuf, String)>,
    /// Output directories the user configured (writable as they are).
    pub outputs: Vec<PathBuf>,
    /// The workspace's git directories, whose top level the command writes through a
    /// layer of its own (SBX-9).
    pub git: Vec<super::git_config::GitView>,
    /// Variables set in the command's environment: a toolchain whose cache does not
    /// exist yet and cannot be made as a mount point is pointed at a directory in the
    /// workspace's cache state instead (SBX-8: the first `npm install` in a home without
    /// `~/.npm`).
    pub env: Vec<(OsString, PathBuf)>,
}

/// The session's directory seen as `/tmp`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TmpView {
    /// The directory mounted over `/tmp` (in the session's private directory).
    pub source: PathBuf,
    /// Paths under the real `/tmp` mounted back at their place over the view, top-most
    /// first: the workspace roots, the home, the session's private files.
    pub keep: Vec<PathBuf>,
    /// The kept paths that are not writable: Landlock's write rule of the view reaches
    /// everything below it, mounted back or not, so these are mounted read-only (and
    /// the secrets under any kept path are hidden by mounts, not by Landlock).
    pub guard: Vec<PathBuf>,
    /// Writable paths inside a guarded one, bound onto themselves before it is made
    /// read-only, so they stay writable.
    pub pins: Vec<PathBuf>,
}

impl TmpView {
    /// Whether `path` lies in a path mounted back through the view.
    pub fn keeps(&self, path: &Path) -> bool {
        self.keep.iter().any(|k| path.starts_with(k))
    }
}

/// One toolchain cache as an overlay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheView {
    /// The cache directory (the user's real one: the lower layer and the mount point).
    pub target: PathBuf,
    /// Where the command's changes go.
    pub upper: PathBuf,
    /// overlayfs's work directory, beside `upper`.
    pub work: PathBuf,
}

/// The environment variables that name an output directory of a toolchain (SBX-8).
pub const OUTPUT_VARIABLES: &[&str] = &["CARGO_TARGET_DIR"];

/// The environment variables that name a toolchain cache; where one is set, its value is
/// the cache, else the default of `default_caches`.
pub const CACHE_VARIABLES: &[&str] = &[
    "GOCACHE",
    "GOMODCACHE",
    "npm_config_cache",
    "NPM_CONFIG_CACHE",
    "PIP_CACHE_DIR",
    "UV_CACHE_DIR",
    "YARN_CACHE_FOLDER",
    "PNPM_STORE_DIR",
    "BUN_INSTALL_CACHE_DIR",
];

/// What the views are made from.
#[derive(Debug, Clone)]
pub struct ViewInputs<'a> {
    /// The command's environment (the host's with the session's changes).
    pub env: &'a BTreeMap<OsString, OsString>,
    /// The user's home.
    pub home: Option<&'a Path>,
    /// Where the per-workspace cache layers live (wavesh's state), if anywhere.
    pub cache_state: Option<PathBuf>,
    /// The session's private directory.
    pub private_dir: Option<&'a Path>,
    /// Overlays can be mounted on this machine.
    pub overlay: bool,
    /// An overlay can also remove what its lower layer holds (a whiteout), which the
    /// caches need (`rm -rf` in one); the git view only adds and renames files.
    pub overlay_removes: bool,
    /// The command gets a mount namespace of its own (mounts are possible).
    pub mounts: bool,
}

/// The inputs of the views of a command with environment `env` under `config`, whose
/// workspace root is `workspace`: the cache layers live in `$XDG_STATE_HOME/wavesh` (of
/// the command's environment) or `HOME/.local/state/wavesh`.
pub fn views_inputs<'a>(
    config: &'a super::SandboxConfig,
    env: &'a BTreeMap<OsString, OsString>,
    workspace: Option<&PathBuf>,
) -> ViewInputs<'a> {
    let home = config.home.as_deref();
    let state = env
        .get(std::ffi::OsStr::new("XDG_STATE_HOME"))
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| home.map(|h| h.join(".local/state")))
        .map(|base| base.join("wavesh"));
    let mounts = super::support().mount_namespace;
    ViewInputs {
        env,
        home,
        cache_state: state
            .zip(workspace)
            .map(|(state, ws)| cache_state_dir(&state, ws)),
        private_dir: config.private_dir.as_deref(),
        // Probed only where there is a mount namespace to mount in.
        overlay: mounts && super::overlay_available(),
        overlay_removes: mounts && super::overlay_removes(),
        mounts,
    }
}

/// The default caches under `home` (and `CARGO_HOME`, `GOPATH`, `XDG_CACHE_HOME` when
/// set), each with whether wavesh may create it empty as a mount point when missing
/// (only under a directory the toolchain itself already made), and the variable that
/// points the toolchain at another cache, where it has one.
pub fn default_caches(
    env: &BTreeMap<OsString, OsString>,
    home: &Path,
) -> Vec<(PathBuf, bool, Option<&'static str>)> {
    let var = |name: &str| {
        env.get(std::ffi::OsStr::new(name))
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    let cargo = var("CARGO_HOME").unwrap_or_else(|| home.join(".cargo"));
    let xdg_cache = var("XDG_CACHE_HOME").unwrap_or_else(|| home.join(".cache"));
    let gopath = var("GOPATH").unwrap_or_else(|| home.join("go"));
    let mut out = vec![
        (cargo.join("registry"), true, None),
        (cargo.join("git"), true, None),
        (home.join(".npm"), false, Some("npm_config_cache")),
        (xdg_cache.join("pip"), true, Some("PIP_CACHE_DIR")),
        (xdg_cache.join("uv"), true, Some("UV_CACHE_DIR")),
        (xdg_cache.join("go-build"), true, Some("GOCACHE")),
        (gopath.join("pkg/mod"), false, Some("GOMODCACHE")),
        (xdg_cache.join("yarn"), true, Some("YARN_CACHE_FOLDER")),
        (home.join(".yarn/berry/cache"), false, None),
        (xdg_cache.join("pnpm"), true, None),
        (home.join(".local/share/pnpm/store"), false, None),
        (home.join(".m2/repository"), false, None),
        (home.join(".gradle/caches"), false, None),
        (home.join(".gradle/wrapper"), false, None),
        (
            home.join(".bun/install/cache"),
            false,
            Some("BUN_INSTALL_CACHE_DIR"),
        ),
    ];
    for name in CACHE_VARIABLES {
        if let Some(path) = var(name) {
            out.push((path, true, None));
        }
    }
    out
}

impl Plan {
    /// Adds the views of SBX-8 to a `workspace-write` plan, making the directories they
    /// need (the session's `/tmp`, the mount points under it, the cache layers, a
    /// configured output directory). Does nothing at the other levels.
    pub fn add_views(&mut self, inputs: &ViewInputs<'_>) {
        if self.level != super::Level::WorkspaceWrite {
            return;
        }
        let mut views = Views::default();
        for name in OUTPUT_VARIABLES {
            if let Some(dir) = inputs.env.get(std::ffi::OsStr::new(name)) {
                match self.output_dir(Path::new(dir), inputs.home) {
                    Ok(dir) => views.outputs.push(dir),
                    Err(why) => tracing::warn!(variable = name, why, "not made writable"),
                }
            }
        }
        self.writable_dirs.extend(views.outputs.iter().cloned());
        if let (Some(home), Some(state)) = (inputs.home, inputs.cache_state.as_deref()) {
            self.add_caches(&mut views, inputs, home, state);
        }
        if inputs.mounts
            && inputs.overlay
            && let Some(private) = inputs.private_dir
        {
            self.add_git_views(&mut views, private);
        }
        if inputs.mounts
            && let Some(private) = inputs.private_dir
        {
            views.tmp = self.tmp_view(private, inputs.home);
        }
        self.views = views;
    }

    /// `dir` if it may be made writable as a toolchain's output directory: absolute, not
    /// `/`, the home or one of their ancestors, not a system directory, not holding the
    /// workspace's protected paths or a secret. Made when missing, as the toolchain would.
    fn output_dir(&self, dir: &Path, home: Option<&Path>) -> Result<PathBuf, &'static str> {
        if !dir.is_absolute() {
            return Err("a relative path");
        }
        let dir = crate::lexical_join(Path::new("/"), dir);
        let system = [
            "/", "/usr", "/etc", "/bin", "/sbin", "/lib", "/boot", "/dev",
        ];
        if system
            .iter()
            .any(|s| Path::new(s).starts_with(&dir) || dir == Path::new(s))
            || ["/proc", "/sys", "/dev", "/etc", "/usr", "/boot"]
                .iter()
                .any(|s| dir.starts_with(s))
        {
            return Err("a system directory");
        }
        if home.is_some_and(|home| home.starts_with(&dir)) {
            return Err("the home or one of its ancestors");
        }
        if self
            .read_only
            .iter()
            .chain(&self.secret_paths)
            .any(|p| p.starts_with(&dir))
        {
            return Err("it holds protected or secret paths");
        }
        std::fs::create_dir_all(&dir).map_err(|_| "it cannot be made")?;
        Ok(dir)
    }

    fn add_caches(
        &mut self,
        views: &mut Views,
        inputs: &ViewInputs<'_>,
        home: &Path,
        state: &Path,
    ) {
        let mut seen: Vec<PathBuf> = Vec::new();
        for (cache, may_create, variable) in default_caches(inputs.env, home) {
            let cache = crate::lexical_join(Path::new("/"), &cache);
            if seen
                .iter()
                .any(|s| cache.starts_with(s) || s.starts_with(&cache))
            {
                continue;
            }
            let exists = cache.is_dir();
            let parent_exists = cache.parent().is_some_and(Path::is_dir);
            let may_mount = exists || (may_create && parent_exists);
            if !may_mount {
                // Nothing to mount over, and making the cache in the home would change
                // the home: where the toolchain takes its cache from a variable the
                // user has not set, the command gets a fresh one in the state.
                if let Some(variable) = variable
                    && !inputs
                        .env
                        .keys()
                        .any(|k| k.to_str().is_some_and(|k| k.eq_ignore_ascii_case(variable)))
                    && !views.env.iter().any(|(k, _)| k == variable)
                {
                    let fresh = state.join(layer_name(&cache)).join("fresh");
                    match std::fs::create_dir_all(&fresh) {
                        Ok(()) => {
                            self.writable_dirs.push(fresh.clone());
                            views.env.push((OsString::from(variable), fresh));
                        }
                        Err(error) => tracing::warn!(
                            %error,
                            cache = %cache.display(),
                            "no fresh cache for a missing one"
                        ),
                    }
                }
                continue;
            }
            seen.push(cache.clone());
            if self.may_write(&cache) && !self.is_read_only(&cache) {
                // Inside the workspace: already writable as it is.
                continue;
            }
            let why = if !inputs.mounts {
                Some("no mount namespace on this machine".to_owned())
            } else if !inputs.overlay || !inputs.overlay_removes {
                Some("overlayfs cannot be used here".to_owned())
            } else if self.secret_paths.iter().any(|s| s.starts_with(&cache)) {
                Some("it holds a secret".to_owned())
            } else if [&cache, state]
                .iter()
                .any(|p| p.to_string_lossy().contains([',', ':', '\\']))
            {
                // overlayfs's options are split on these.
                Some("its path holds a comma, colon or backslash".to_owned())
            } else {
                None
            };
            if let Some(why) = why {
                if exists {
                    views.read_only_caches.push((cache, why));
                }
                continue;
            }
            let layer = state.join(layer_name(&cache));
            let (upper, work) = (layer.join("upper"), layer.join("work"));
            let mount_point = if exists {
                Ok(())
            } else {
                std::fs::create_dir_all(&cache)
            };
            let made = mount_point
                .and_then(|()| std::fs::create_dir_all(&upper))
                .and_then(|()| std::fs::create_dir_all(&work));
            match made {
                Ok(()) => {
                    // overlayfs writes the upper layer itself; the layer directory is
                    // the command's own view of the cache, so writing it is no more.
                    self.writable_dirs.push(layer);
                    views.caches.push(CacheView {
                        target: cache,
                        upper,
                        work,
                    });
                }
                Err(error) => views
                    .read_only_caches
                    .push((cache, format!("its layer cannot be made: {error}"))),
            }
        }
    }

    /// SBX-9: each writable root's `.git` directory gets a layer of the command's own in
    /// `private`; its `config`, `config.worktree` and `commondir` are then no longer
    /// read-only mounts (a rename onto a mount point fails), they go to the layer, and
    /// only the config comes back, judged key by key when the command ends.
    fn add_git_views(&mut self, views: &mut Views, private: &Path) {
        for root in self.scan_trees.clone() {
            let dir = private.join(format!("git-{}", crate::private_dir::random_name(10)));
            match super::git_config::git_view(&root, &dir) {
                Ok(Some(view)) => {
                    let git_dir = view.git_dir.clone();
                    self.read_only.retain(|path| {
                        !["config", "config.worktree", "commondir"]
                            .iter()
                            .any(|name| *path == git_dir.join(name))
                    });
                    self.writable_dirs.push(dir);
                    views.git.push(view);
                }
                Ok(None) => {}
                Err(error) => {
                    let _ = std::fs::remove_dir_all(&dir);
                    tracing::warn!(%error, root = %root.display(), "no layer for the git directory; its config stays read-only");
                }
            }
        }
    }

    /// The session's `/tmp` in `private`, with the paths under the real `/tmp` the
    /// command needs mounted back: `None` when a writable root holds `/tmp` already.
    fn tmp_view(&mut self, private: &Path, home: Option<&Path>) -> Option<TmpView> {
        let tmp = Path::new("/tmp");
        if self.writable_dirs.iter().any(|d| tmp.starts_with(d)) {
            return None;
        }
        let source = private.join("tmp-view");
        let mut keep: Vec<PathBuf> = self
            .writable_dirs
            .iter()
            .chain(&self.readable_dirs)
            .chain(&self.writable_files)
            .chain(&self.scan_trees)
            .chain(&self.scan_dirs)
            .chain(home.map(Path::to_path_buf).as_ref())
            .chain(std::iter::once(&private.to_path_buf()))
            .chain(self.views.caches.iter().map(|c| &c.target))
            .filter(|p| p.starts_with(tmp) && *p != tmp)
            .cloned()
            .collect();
        keep.sort();
        keep.dedup();
        let top: Vec<PathBuf> = keep
            .iter()
            .filter(|p| !keep.iter().any(|q| q != *p && p.starts_with(q)))
            .cloned()
            .collect();
        // The mount points: an empty directory or file at each kept path in the view.
        let made = (|| -> std::io::Result<()> {
            crate::private_dir::create_dir_0700(&source).or_else(|e| {
                if e.kind() == std::io::ErrorKind::AlreadyExists {
                    Ok(())
                } else {
                    Err(e)
                }
            })?;
            for path in &top {
                let Ok(relative) = path.strip_prefix(tmp) else {
                    continue;
                };
                let point = source.join(relative);
                if path.is_dir() {
                    std::fs::create_dir_all(&point)?;
                } else {
                    if let Some(parent) = point.parent() {
                        std::fs::create_dir_all(parent)?;
                    }
                    std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(&point)?;
                }
            }
            Ok(())
        })();
        if let Err(error) = made {
            tracing::warn!(%error, path = %source.display(), "the session's /tmp cannot be made");
            return None;
        }
        let writable = |p: &Path| self.writable_dirs.iter().any(|d| p.starts_with(d));
        let guard: Vec<PathBuf> = top.iter().filter(|k| !writable(k)).cloned().collect();
        let mut pins: Vec<PathBuf> = self
            .writable_dirs
            .iter()
            .chain(
                self.writable_files
                    .iter()
                    .filter(|f| !f.starts_with("/dev")),
            )
            .chain(std::iter::once(&source))
            .filter(|w| guard.iter().any(|g| w.starts_with(g) && *w != g))
            .cloned()
            .collect();
        pins.sort();
        pins.dedup();
        self.writable_dirs.push(source.clone());
        Some(TmpView {
            source,
            keep: top,
            guard,
            pins,
        })
    }
}

/// The layer directory's name for a cache: its path with `/` as `%`, which is unique
/// and readable (`%home%u%.cargo%registry`).
fn layer_name(cache: &Path) -> String {
    cache
        .to_string_lossy()
        .replace('%', "%25")
        .replace('/', "%")
}

/// The directory of the per-workspace cache layers: `STATE/caches/<workspace>` where
/// STATE is `$XDG_STATE_HOME/wavesh` or `HOME/.local/state/wavesh`, and the workspace is
/// named like a layer.
pub fn cache_state_dir(state: &Path, workspace: &Path) -> PathBuf {
    state.join("caches").join(layer_name(workspace))
}

/// The note for the model when a cache stays read-only (SBX-5).
pub fn read_only_caches_note(views: &Views) -> Option<String> {
    if views.read_only_caches.is_empty() {
        return None;
    }
    let list: Vec<String> = views
        .read_only_caches
        .iter()
        .map(|(path, why)| format!("{} ({why})", path.display()))
        .collect();
    Some(format!(
        "Toolchain caches are read-only in this sandbox: {}.",
        list.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let dir = Path::new("/tmp").join(format!(
            "wavesh-views-{name}-{}-{}",
            std::process::id(),
            crate::private_dir::random_name(6)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// A workspace-write plan of a world under `base`, with `env`, and its views.
    fn plan_with(base: &Path, env: &[(&str, PathBuf)], overlay: bool) -> Plan {
        let (ws, home, private) = (base.join("ws"), base.join("home"), base.join("p/s"));
        for dir in [&ws, &home, &private] {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::create_dir_all(home.join(".cargo/registry")).unwrap();
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        let config = super::super::SandboxConfig {
            roots: vec![ws.clone()],
            secrets: super::super::SecretList {
                paths: vec![home.join(".ssh"), home.join(".cargo/credentials.toml")],
                names: Vec::new(),
            },
            home: Some(home.clone()),
            private_dir: Some(private.clone()),
            ..Default::default()
        };
        let files = super::super::CommandFiles {
            output: private.join("out.log"),
            cwd_file: Some(private.join("cwd")),
            tmp_dir: private.join("tmp"),
            cwd: ws.clone(),
        };
        let mut plan = Plan::new(super::super::Level::WorkspaceWrite, &config, &files, false);
        let env: BTreeMap<OsString, OsString> = env
            .iter()
            .map(|(k, v)| (OsString::from(k), v.clone().into_os_string()))
            .collect();
        plan.add_views(&ViewInputs {
            env: &env,
            home: Some(&home),
            cache_state: Some(base.join("state")),
            private_dir: Some(&private),
            overlay,
            overlay_removes: overlay,
            mounts: true,
        });
        plan
    }

    /// SBX-8: under `/tmp`, the workspace, the home and the private directory are kept
    /// through the view; the home and the private directory are guarded read-only, the
    /// writable parts inside them pinned first; the view itself is writable.
    #[test]
    fn sbx_8_the_tmp_view_keeps_guards_and_pins() {
        let base = temp("keep");
        let plan = plan_with(&base, &[], true);
        let tmp = plan.views.tmp.clone().unwrap();
        let private = base.join("p/s");
        assert_eq!(tmp.source, private.join("tmp-view"));
        for kept in [base.join("home"), private.clone(), base.join("ws")] {
            assert!(tmp.keep.contains(&kept), "{kept:?} in {:?}", tmp.keep);
        }
        assert!(
            !tmp.keep.contains(&private.join("tmp")),
            "nested paths go with their parent"
        );
        assert_eq!(tmp.guard, [base.join("home"), private.clone()]);
        for pinned in [
            private.join("tmp"),
            private.join("out.log"),
            private.join("tmp-view"),
        ] {
            assert!(tmp.pins.contains(&pinned), "{pinned:?} in {:?}", tmp.pins);
        }
        assert!(plan.may_write(&private.join("tmp-view/x")));
        // The mount points exist in the view.
        assert!(
            private
                .join("tmp-view")
                .join(base.join("ws").strip_prefix("/tmp").unwrap())
                .is_dir()
        );
        // The cargo cache is an overlay whose layers are writable, the secret beside it not.
        let cache = &plan.views.caches[0];
        assert_eq!(cache.target, base.join("home/.cargo/registry"));
        assert!(plan.may_write(&cache.upper));
        assert!(!plan.may_write(&base.join("home/.cargo/credentials.toml")));
        std::fs::remove_dir_all(&base).unwrap();
    }

    /// SBX-5: without overlayfs the caches stay read-only and are named.
    #[test]
    fn sbx_8_without_overlayfs_caches_are_read_only_and_named() {
        let base = temp("nooverlay");
        let plan = plan_with(&base, &[], false);
        assert!(plan.views.caches.is_empty());
        let note = read_only_caches_note(&plan.views).unwrap();
        assert!(
            note.contains(".cargo/registry (overlayfs cannot be used here"),
            "{note}"
        );
        assert!(!plan.may_write(&base.join("home/.cargo/registry/x")));
        std::fs::remove_dir_all(&base).unwrap();
        // A path overlayfs's options cannot carry: read-only, named.
        let base = temp("comma,dir");
        let plan = plan_with(&base, &[], true);
        assert!(plan.views.caches.is_empty());
        let note = read_only_caches_note(&plan.views).unwrap();
        assert!(note.contains("comma, colon or backslash"), "{note}");
        std::fs::remove_dir_all(&base).unwrap();
    }

    /// SBX-8: a configured output directory is writable unless it is `/`, a system
    /// directory, the home or an ancestor, or holds a secret.
    #[test]
    fn sbx_8_configured_output_directories() {
        let base = temp("outputs");
        let good = base.join("target-out");
        let plan = plan_with(&base, &[("CARGO_TARGET_DIR", good.clone())], true);
        assert_eq!(plan.views.outputs, std::slice::from_ref(&good));
        assert!(good.is_dir() && plan.may_write(&good.join("debug/app")));
        for refused in [
            PathBuf::from("/"),
            PathBuf::from("/usr"),
            PathBuf::from("/etc/x"),
            base.join("home"),
            base.clone(),
            base.join("home/.ssh"),
            PathBuf::from("relative/target"),
        ] {
            let plan = plan_with(&base, &[("CARGO_TARGET_DIR", refused.clone())], true);
            assert!(
                plan.views.outputs.is_empty(),
                "{refused:?} was made writable"
            );
        }
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn sbx_8_layer_names_are_unique_and_readable() {
        assert_eq!(
            layer_name(Path::new("/home/u/.cargo/registry")),
            "%home%u%.cargo%registry"
        );
        assert_ne!(
            layer_name(Path::new("/a%b/c")),
            layer_name(Path::new("/a/b/c"))
        );
    }

    /// SBX-8: a toolchain whose cache is missing and cannot be made as a mount point
    /// (`~/.npm` in a home where npm never ran, pip's under a missing `~/.cache`) gets
    /// a fresh writable cache in the workspace's state through its variable; the home is
    /// not changed; a variable the user set is left alone.
    #[test]
    fn sbx_8_a_missing_cache_gets_a_fresh_one_in_the_state() {
        let base = temp("fresh");
        let plan = plan_with(&base, &[], true);
        let home = base.join("home");
        let by_name: BTreeMap<String, PathBuf> = plan
            .views
            .env
            .iter()
            .map(|(k, v)| (k.to_string_lossy().into_owned(), v.clone()))
            .collect();
        for variable in ["npm_config_cache", "PIP_CACHE_DIR", "GOMODCACHE"] {
            let dir = by_name
                .get(variable)
                .unwrap_or_else(|| panic!("{variable}: {by_name:?}"));
            assert!(dir.is_dir() && plan.may_write(&dir.join("x")), "{variable}");
            assert!(!dir.starts_with(&home), "{variable}: {}", dir.display());
        }
        assert!(!home.join(".npm").exists() && !home.join(".cache").exists());
        std::fs::remove_dir_all(&base).unwrap();
        let base = temp("fresh-set");
        let plan = plan_with(&base, &[("NPM_CONFIG_CACHE", base.join("mine"))], true);
        assert!(
            !plan.views.env.iter().any(|(k, _)| k == "npm_config_cache"),
            "{:?}",
            plan.views.env
        );
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn sbx_8_caches_follow_the_variables() {
        let mut env = BTreeMap::new();
        env.insert(OsString::from("CARGO_HOME"), OsString::from("/opt/cargo"));
        env.insert(OsString::from("GOMODCACHE"), OsString::from("/srv/gomod"));
        env.insert(OsString::from("PIP_CACHE_DIR"), OsString::from("relative"));
        let caches: Vec<PathBuf> = default_caches(&env, Path::new("/home/u"))
            .into_iter()
            .map(|(p, _, _)| p)
            .collect();
        assert!(caches.contains(&PathBuf::from("/opt/cargo/registry")));
        assert!(caches.contains(&PathBuf::from("/opt/cargo/git")));
        assert!(caches.contains(&PathBuf::from("/srv/gomod")));
        assert!(caches.contains(&PathBuf::from("/home/u/.npm")));
        assert!(!caches.iter().any(|p| p.ends_with("relative")));
        assert!(
            !caches
                .iter()
                .any(|p| p.ends_with(".cargo/credentials.toml"))
        );
    }
}
