//! Which commands are provably read-only — and when not, exactly why (RO), the git
//! runtime guard (GIT) and the path policy for reads (RO-9).
//!
//! [`check`] takes a command line and returns a [`Verdict`]: read-only only if the
//! command parses with no unsupported syntax and no dynamic word, every simple command
//! is explicitly read-only with the options it uses, no path it reads is a secret, git
//! runs in a trusted repository, and a second parser agrees (RO-10). The command lists
//! are data in [`commands`], one module per family.
//!
//! Pure except for [`git_guard::RealFs`], which the host passes in.

mod classify;
pub mod commands;
mod decide;
pub mod env;
pub mod flags;
pub mod git;
pub mod git_guard;
pub mod paths;
pub mod prefix;
pub mod registry;
pub mod rules;
pub mod settings;

pub use classify::{ClassifyContext, GitContext, Verdict, classify, command_is_read_only};
pub use decide::{Decision, Outcome, PermissionMode, decide};
pub use wavesh_parse::Dialect;

/// The capability a `Bash` call is declared with (RO-6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capability {
    /// It only reads.
    pub read_only: bool,
    /// It needs the user's approval.
    pub needs_approval: bool,
    /// `low` or `high`.
    pub risk_level: &'static str,
    /// `none` or `system`.
    pub side_effect_scope: &'static str,
}

impl Verdict {
    /// RO-6: a read-only command's capability; otherwise the static declaration.
    pub fn capability(&self) -> Capability {
        if self.read_only {
            Capability {
                read_only: true,
                needs_approval: false,
                risk_level: "low",
                side_effect_scope: "none",
            }
        } else {
            Capability {
                read_only: false,
                needs_approval: true,
                risk_level: "high",
                side_effect_scope: "system",
            }
        }
    }
}

/// Analyses and classifies `command` in one call.
pub fn check(command: &str, dialect: Dialect, ctx: &ClassifyContext) -> Verdict {
    let analysis = wavesh_parse::analyze(command, dialect);
    classify(command, &analysis, ctx)
}

/// RO-8: whether a command may rewrite the workspace (anything not provably read-only).
pub fn may_rewrite_workspace(command: &str, dialect: Dialect, ctx: &ClassifyContext) -> bool {
    !check(command, dialect, ctx).read_only
}
