//! Platforms without the Linux mechanisms: nothing is enforced in the child. macOS gets
//! its profile from [`super::seatbelt`]; the guarantees missing here are reported
//! (SBX-5).

use super::{Plan, SandboxError, Support};

/// Never made off Linux.
#[derive(Debug)]
pub enum ChildSandbox {}

pub(crate) fn build(
    _plan: &Plan,
    _support: &Support,
) -> Result<Option<ChildSandbox>, SandboxError> {
    Ok(None)
}

pub(crate) fn probe() -> Support {
    let macos = cfg!(target_os = "macos");
    Support {
        landlock_abi: 0,
        seccomp: false,
        mount_namespace: false,
        user_namespace: Some(false),
        network_namespace: Some(false),
        cgroup_delegation: false,
        process_isolation: false,
        platform: std::env::consts::OS,
        seatbelt: macos && std::path::Path::new(super::seatbelt::SANDBOX_EXEC).exists(),
    }
}

pub(crate) fn probe_namespaces(support: Support) -> Support {
    support
}

/// No read rules are built here.
#[derive(Debug)]
pub(crate) enum Reads {}

/// No read rules are built here: a prepared sandbox has none to compare.
pub(crate) fn current_reads(_plan: &Plan, _support: &Support) -> Option<std::sync::Arc<Reads>> {
    None
}

/// No secret search runs here: the plan's secret paths and names are what is hidden.
pub(crate) fn hidden_secrets(_plan: &Plan, _support: &Support) -> Vec<std::path::PathBuf> {
    Vec::new()
}
