//! The Landlock rules for the terminals of an isolated command's own devpts (SBX-7).
//!
//! The ruleset is built in the host, where `/dev/pts` and `/dev/ptmx` are the host's:
//! rules on them name the host's inodes, and an isolated command mounts a devpts of its
//! own over them. Without rules on its own `/dev/pts` and `/dev/ptmx` (the bind of
//! `/dev/pts/ptmx`), opening a new terminal (`openpty`, `script`, `expect`, a test
//! suite's pty tests) is refused. Only the command's own instance is reachable there, so
//! the rights grant nothing of another terminal; TIOCSTI stays refused by seccomp.

use std::io;
use std::os::fd::{AsRawFd, RawFd};

const WRITE_FILE: u64 = 1 << 1;
const READ_FILE: u64 = 1 << 2;
const IOCTL_DEV: u64 = 1 << 15;

/// Adds read, write and (ABI 5 on) device-ioctl rules for the devpts mounted at
/// `/dev/pts` and for `/dev/ptmx` to the ruleset `ruleset`. Call after mounting them.
pub(super) fn allow(ruleset: RawFd, abi: i32) -> io::Result<()> {
    let access = READ_FILE | WRITE_FILE | if abi >= 5 { IOCTL_DEV } else { 0 };
    for (path, directory) in [("/dev/pts", true), ("/dev/ptmx", false)] {
        use rustix::fs::{Mode, OFlags};
        let mut flags = OFlags::PATH | OFlags::CLOEXEC | OFlags::NOFOLLOW;
        if directory {
            flags |= OFlags::DIRECTORY;
        }
        let file = match rustix::fs::open(path, flags, Mode::empty()) {
            Ok(file) => file,
            // No /dev/ptmx in this /dev: nothing to allow.
            Err(rustix::io::Errno::NOENT) => continue,
            Err(error) => return Err(error.into()),
        };
        #[expect(unsafe_code, reason = "landlock_add_rule on a raw ruleset")]
        // SAFETY: the ruleset and a descriptor opened here.
        let rc = unsafe { super::imp::add_path_rule(ruleset, file.as_raw_fd(), access) };
        if rc != 0 {
            let error = io::Error::last_os_error();
            return Err(io::Error::new(
                error.kind(),
                format!("isolating the command: a rule for its own {path}: {error}"),
            ));
        }
    }
    Ok(())
}
