//! Which commands are provably read-only — and when not, exactly why (RO), the git
//! runtime guard (GIT) and the path policy for reads (RO-9).
//!
//! [`check`] takes a command line and returns a [`Verdict`]: read-only only if the
//! command parses with no unsupported syntax and no dynamic word, every simple command
//! is explicitly read-only with the options it uses, no path it reads is a secret, git
//! runs in a trusted repository, and a second parser agrees (RO-10). The command lists
//! are data in [`commands`], one module per family.
//!
//! Pure except for the file system behind [`git_guard::Fs`]: the real one by default
//! ([`git_guard::RealFs`]), which also runs `git config` to read config as git does
//! (GIT-5); [`git_guard::EmptyFs`] classifies the text alone.

mod classify;
pub mod commands;
mod decide;
pub mod env;
pub mod flags;
pub mod git;
pub mod git_guard;
pub mod git_history;
pub mod paths;
pub mod prefix;
mod reason;
pub mod registry;
pub mod rules;
pub mod secrets;
pub mod settings;

pub use classify::{
    ClassifyContext, GitContext, SharedFs, Verdict, classify, command_is_read_only,
};
pub use decide::{Decision, Outcome, PermissionMode, decide};
pub use reason::{Reason, ReasonKind, join as join_reasons};
pub use wavesh_parse::Dialect;

/// Programs whose read-only commands read over the network (`gh pr view` asks GitHub's
/// API): a sealed run of them keeps TCP connect, while files stay sealed.
pub const NETWORK_READERS: &[&str] = &["gh"];

/// Whether a command runs a program that reads over the network ([`NETWORK_READERS`]),
/// anywhere in it.
pub fn reads_over_network(analysis: &wavesh_parse::Analysis) -> bool {
    analysis
        .commands
        .iter()
        .chain(&analysis.nested)
        .filter_map(|command| command.argv.first())
        .any(|program| NETWORK_READERS.contains(&program.value.as_str()))
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn network_readers_are_found_anywhere_in_a_command() {
        let reads = |text: &str| reads_over_network(&wavesh_parse::analyze(text, Dialect::Bash));
        assert!(reads("gh pr view 1 | head -5"));
        assert!(reads("echo \"$(gh api repos/o/r)\""));
        assert!(!reads("ls -la; git log -1"));
        assert!(!reads("echo gh"));
    }
}
