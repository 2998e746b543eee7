//! One cgroup v2 per command, where the machine lets wavesh make them (PROC-1).
//!
//! A cgroup holds a command's whole tree whatever the command does to its parents: a
//! process cannot leave its cgroup on its own (moving needs write access to the common
//! ancestor's `cgroup.procs`, which a command under a session's own cgroup does not
//! get from wavesh), so `cgroup.kill` ends exactly the tree, escapees and daemons
//! included, with no pid read or signalled by number. Memory and pids limits, when asked
//! for and when the controllers are delegated, fire per command, and
//! [`CommandCgroup::limit_fired`] says which one did.
//!
//! Layout: `<our own cgroup>/wavesh-<pid>-<random>/cmd-<id>`. A session creates only
//! cgroups of its own under a directory of its own, and removes them when they are empty.
//! Where no cgroup v2 hierarchy is writable (no root, no systemd delegation), [`support`]
//! says why and the supervisor's subreapers keep the trees instead.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Per-command resource limits (off by default).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Limits {
    /// `memory.max` in bytes.
    pub memory_max: Option<u64>,
    /// `pids.max`: processes and threads at once.
    pub pids_max: Option<u64>,
}

impl Limits {
    fn is_empty(&self) -> bool {
        self.memory_max.is_none() && self.pids_max.is_none()
    }
}

/// A limit that ended a command, for the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitFired {
    /// The kernel's OOM killer ended a process at `memory.max`.
    Memory(u64),
    /// A fork failed at `pids.max`.
    Pids(u64),
}

impl LimitFired {
    /// "the command was killed: it exceeded the 4 GiB memory limit".
    pub fn sentence(self) -> String {
        match self {
            LimitFired::Memory(bytes) => format!(
                "the command was killed: it exceeded the {} memory limit",
                human_bytes(bytes)
            ),
            LimitFired::Pids(max) => {
                format!("the command hit its limit of {max} processes: further forks failed")
            }
        }
    }
}

fn human_bytes(bytes: u64) -> String {
    const UNITS: [(&str, u64); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (unit, size) in UNITS {
        if bytes >= size && bytes.is_multiple_of(size) {
            return format!("{} {unit}", bytes / size);
        }
    }
    for (unit, size) in UNITS {
        if bytes >= size {
            return format!("{:.1} {unit}", bytes as f64 / size as f64);
        }
    }
    format!("{bytes} bytes")
}

/// Whether this process can make per-command cgroups, and where, or why not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Support {
    /// Cgroups can be made under this directory (our own cgroup).
    Available {
        /// Our own cgroup's directory in the cgroup v2 hierarchy.
        parent: PathBuf,
        /// Controllers this cgroup offers its children (`cgroup.controllers`).
        controllers: Vec<String>,
    },
    /// Why not.
    Unavailable(String),
}

/// Finds our own cgroup v2 directory and checks that a child can be made there.
pub fn support() -> Support {
    let mountinfo = match fs::read_to_string("/proc/self/mountinfo") {
        Ok(text) => text,
        Err(error) => return Support::Unavailable(format!("cannot read mountinfo: {error}")),
    };
    let Some(mount) = cgroup2_mount(&mountinfo) else {
        return Support::Unavailable("no cgroup v2 hierarchy is mounted".into());
    };
    let own = match fs::read_to_string("/proc/self/cgroup") {
        Ok(text) => text,
        Err(error) => {
            return Support::Unavailable(format!("cannot read /proc/self/cgroup: {error}"));
        }
    };
    let Some(path) = own_v2_path(&own) else {
        return Support::Unavailable("this process has no cgroup v2 path".into());
    };
    let parent = mount.join(path.trim_start_matches('/'));
    let probe = parent.join(format!("wavesh-probe-{}", std::process::id()));
    match fs::create_dir(&probe) {
        Ok(()) => {
            let kill = probe.join("cgroup.kill").exists();
            let _ = fs::remove_dir(&probe);
            if !kill {
                return Support::Unavailable(format!(
                    "{} has no cgroup.kill (Linux 5.14 or later is needed)",
                    parent.display()
                ));
            }
        }
        Err(error) => {
            return Support::Unavailable(format!(
                "cannot create a cgroup under {} ({error}): no delegation to this user",
                parent.display()
            ));
        }
    }
    Support::Available {
        controllers: read_words(&parent.join("cgroup.controllers")),
        parent,
    }
}

/// The mount point of the cgroup2 file system in `mountinfo`.
fn cgroup2_mount(mountinfo: &str) -> Option<PathBuf> {
    mountinfo.lines().find_map(|line| {
        let (before, after) = line.split_once(" - ")?;
        let fstype = after.split_whitespace().next()?;
        if fstype != "cgroup2" {
            return None;
        }
        before.split_whitespace().nth(4).map(PathBuf::from)
    })
}

/// Our path in the v2 hierarchy: the `0::PATH` line of `/proc/self/cgroup`.
fn own_v2_path(cgroup: &str) -> Option<String> {
    cgroup
        .lines()
        .find_map(|line| line.strip_prefix("0::"))
        .map(str::to_owned)
}

fn read_words(path: &Path) -> Vec<String> {
    fs::read_to_string(path)
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

/// A session's directory of command cgroups.
#[derive(Debug)]
pub struct CgroupSession {
    dir: PathBuf,
    limits: Limits,
}

impl CgroupSession {
    /// Makes the session's directory under our own cgroup, when [`support`] allows.
    pub fn create(limits: Limits) -> Result<CgroupSession, String> {
        match support() {
            Support::Available { parent, .. } => {
                CgroupSession::create_in(&parent, limits).map_err(|error| error.to_string())
            }
            Support::Unavailable(why) => Err(why),
        }
    }

    /// Makes the session's directory under `parent` (a cgroup directory; a plain one in
    /// tests), enabling the controllers the limits need in its `cgroup.subtree_control`.
    /// Limits whose controller `parent` does not offer are an error that names it.
    pub fn create_in(parent: &Path, limits: Limits) -> io::Result<CgroupSession> {
        sweep(parent);
        let dir = parent.join(format!(
            "wavesh-{}-{}",
            std::process::id(),
            crate::private_dir::random_name(8)
        ));
        fs::create_dir(&dir)?;
        let session = CgroupSession { dir, limits };
        session.check_controllers(parent)?;
        session.enable_controllers()?;
        Ok(session)
    }

    /// The controllers the limits need, in the order they are enabled.
    fn controllers(&self) -> Vec<&'static str> {
        let mut wanted = Vec::new();
        if self.limits.memory_max.is_some() {
            wanted.push("memory");
        }
        if self.limits.pids_max.is_some() {
            wanted.push("pids");
        }
        wanted
    }

    /// Enables the limits' controllers for the session's commands.
    fn enable_controllers(&self) -> io::Result<()> {
        for controller in self.controllers() {
            fs::write(
                self.dir.join("cgroup.subtree_control"),
                format!("+{controller}"),
            )?;
        }
        Ok(())
    }

    /// Refuses, by name, a limit whose controller `parent` does not hand down.
    fn check_controllers(&self, parent: &Path) -> io::Result<()> {
        if !self.limits.is_empty() {
            // What the parent hands its children (the new directory's cgroup.controllers).
            let offered = read_words(&parent.join("cgroup.subtree_control"));
            for controller in self.controllers() {
                if !offered.iter().any(|c| c == controller) {
                    return Err(io::Error::new(
                        io::ErrorKind::Unsupported,
                        format!(
                            "the {controller} controller is not delegated to {} (its cgroup.subtree_control: {:?}); \
                             the {controller} limit cannot be enforced",
                            parent.display(),
                            offered.join(" ")
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The session's directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Makes the cgroup of command `id`, with the session's limits written.
    pub fn command(&self, id: u64) -> io::Result<CommandCgroup> {
        let dir = self.dir.join(format!("cmd-{id}"));
        if let Err(error) = fs::create_dir(&dir) {
            if error.kind() != io::ErrorKind::NotFound {
                return Err(error);
            }
            // The session's directory went while it was empty (the last subreaper of a
            // dead helper removes it): make it again.
            fs::create_dir(&self.dir)?;
            self.enable_controllers()?;
            fs::create_dir(&dir)?;
        }
        let cgroup = CommandCgroup { dir };
        if let Some(max) = self.limits.memory_max {
            fs::write(cgroup.dir.join("memory.max"), max.to_string())?;
            // Without swap the limit is the limit (otherwise a command swaps instead).
            let _ = fs::write(cgroup.dir.join("memory.swap.max"), "0");
        }
        if let Some(max) = self.limits.pids_max {
            fs::write(cgroup.dir.join("pids.max"), max.to_string())?;
        }
        Ok(cgroup)
    }
}

impl Drop for CgroupSession {
    /// Removes the command cgroups that are empty, then the session's directory if it is
    /// (a detached tree keeps its cgroup, and so the directory, until a later sweep).
    fn drop(&mut self) {
        remove_empty_tree(&self.dir);
    }
}

/// Removes the directories of sessions whose process is gone, as far as they are empty:
/// `rmdir` of a populated cgroup fails, so nothing running is touched.
fn sweep(parent: &Path) {
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|name| name.strip_prefix("wavesh-"))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            remove_empty_tree(&entry.path());
        }
    }
}

fn remove_empty_tree(dir: &Path) {
    if let Ok(entries) = fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                let _ = fs::remove_dir(entry.path());
            }
        }
    }
    let _ = fs::remove_dir(dir);
}

/// One command's cgroup.
#[derive(Debug)]
pub struct CommandCgroup {
    dir: PathBuf,
}

impl CommandCgroup {
    /// The directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The cgroup's directory, opened: the command's first process is born in it
    /// (clone3's CLONE_INTO_CGROUP), or moves in through its `cgroup.procs`.
    pub fn directory(&self) -> io::Result<fs::File> {
        use std::os::unix::fs::OpenOptionsExt;
        fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY)
            .open(&self.dir)
    }

    /// Ends every process in the cgroup at once (`cgroup.kill`).
    pub fn kill(&self) -> io::Result<()> {
        fs::write(self.dir.join("cgroup.kill"), "1")
    }

    /// Whether any process is in the cgroup (`cgroup.events`: `populated 1`).
    pub fn populated(&self) -> bool {
        fs::read_to_string(self.dir.join("cgroup.events"))
            .map(|events| event(&events, "populated") != Some(0))
            .unwrap_or(false)
    }

    /// The limit that fired, if one did: an OOM kill at `memory.max`, or a fork refused at
    /// `pids.max`.
    pub fn limit_fired(&self) -> Option<LimitFired> {
        let read = |name: &str| fs::read_to_string(self.dir.join(name)).ok();
        if let Some(events) = read("memory.events")
            && event(&events, "oom_kill").is_some_and(|n| n > 0)
            && let Some(max) = read("memory.max").and_then(|max| max.trim().parse().ok())
        {
            return Some(LimitFired::Memory(max));
        }
        if let Some(events) = read("pids.events")
            && event(&events, "max").is_some_and(|n| n > 0)
            && let Some(max) = read("pids.max").and_then(|max| max.trim().parse().ok())
        {
            return Some(LimitFired::Pids(max));
        }
        None
    }

    /// Removes the cgroup if it is empty (the kernel refuses otherwise).
    pub fn remove(&self) {
        let _ = fs::remove_dir(&self.dir);
    }
}

impl Drop for CommandCgroup {
    /// An empty cgroup goes with its handle; a populated one (a detached tree) stays until
    /// the session's directory is swept.
    fn drop(&mut self) {
        self.remove();
    }
}

/// The value of `key` in a flat-keyed cgroup file (`key value` per line).
fn event(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let (k, v) = line.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok())?
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch() -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "wavesh-fake-cgroupfs-{}",
            crate::private_dir::random_name(8)
        ));
        fs::create_dir(&dir).unwrap();
        dir
    }

    #[test]
    fn proc_1_finds_the_v2_mount_and_our_path() {
        let mountinfo = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw\n\
                         35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n\
                         41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        assert_eq!(
            cgroup2_mount(mountinfo),
            Some(PathBuf::from("/sys/fs/cgroup/unified"))
        );
        assert_eq!(cgroup2_mount("1 2 0:1 / / rw - ext4 /dev/vda rw\n"), None);
        assert_eq!(
            own_v2_path("4:memory:/x\n0::/user.slice/app.scope\n").as_deref(),
            Some("/user.slice/app.scope")
        );
        assert_eq!(own_v2_path("4:memory:/x\n"), None);
    }

    /// The limits' logic against a fake cgroupfs (a plain directory: this machine's
    /// cgroup2 mount has no controllers, so real limits cannot be tested here).
    #[test]
    fn proc_1_limits_are_written_and_reported_when_they_fire() {
        let parent = scratch();
        // A limit whose controller the parent does not hand down is refused by name.
        fs::write(parent.join("cgroup.subtree_control"), "cpu").unwrap();
        let limits = Limits {
            memory_max: Some(4 << 30),
            pids_max: Some(512),
        };
        let err = CgroupSession::create_in(&parent, limits).unwrap_err();
        assert!(
            err.to_string()
                .contains("memory controller is not delegated"),
            "{err}"
        );
        // Handed down: the session enables both for its commands.
        fs::write(parent.join("cgroup.subtree_control"), "cpu memory pids").unwrap();
        let session = CgroupSession::create_in(&parent, limits).unwrap();
        assert_eq!(
            fs::read_to_string(session.path().join("cgroup.subtree_control")).unwrap(),
            "+pids",
            "the last controller enabled (a real cgroupfs keeps both)"
        );
        let command = session.command(7).unwrap();
        assert_eq!(
            fs::read_to_string(command.path().join("memory.max")).unwrap(),
            "4294967296"
        );
        assert_eq!(
            fs::read_to_string(command.path().join("pids.max")).unwrap(),
            "512"
        );
        assert_eq!(command.limit_fired(), None);
        fs::write(
            command.path().join("memory.events"),
            "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\noom_group_kill 0\n",
        )
        .unwrap();
        assert_eq!(command.limit_fired(), Some(LimitFired::Memory(4 << 30)));
        assert_eq!(
            LimitFired::Memory(4 << 30).sentence(),
            "the command was killed: it exceeded the 4 GiB memory limit"
        );
        fs::write(command.path().join("memory.events"), "oom_kill 0\n").unwrap();
        fs::write(command.path().join("pids.events"), "max 12\n").unwrap();
        assert_eq!(command.limit_fired(), Some(LimitFired::Pids(512)));
        assert!(
            LimitFired::Pids(512)
                .sentence()
                .contains("limit of 512 processes")
        );
        drop(command);
        drop(session);
        fs::remove_dir_all(&parent).unwrap();
    }

    #[test]
    fn proc_1_sizes_read_as_people_write_them() {
        assert_eq!(human_bytes(4 << 30), "4 GiB");
        assert_eq!(human_bytes(512 << 20), "512 MiB");
        assert_eq!(human_bytes(1536 << 20), "1536 MiB");
        assert_eq!(human_bytes((1536 << 20) + 1), "1.5 GiB");
        assert_eq!(human_bytes(100), "100 bytes");
    }

    #[test]
    fn proc_1_events_are_read_by_key() {
        let text = "populated 1\nfrozen 0\n";
        assert_eq!(event(text, "populated"), Some(1));
        assert_eq!(event(text, "frozen"), Some(0));
        assert_eq!(event(text, "missing"), None);
    }
}
