//! The permission decision of a Bash call and the sandbox level it runs at (SBX-3).
//!
//! Both live in the library so that every host gets them: `Session::bash` decides,
//! whoever calls it. A command approved because it is read-only runs at `read-only`;
//! any other command at the session's level; `dangerouslyDisableSandbox` (and a command
//! of `excludedCommands`) at `off`. `dangerouslyDisableSandbox` is never approved
//! automatically, whoever the approver: it asks unless a user's allow rule names the
//! command or the host marks the call approved (`CallContext::approved`) after asking its
//! user. The level is still chosen here.

use std::path::PathBuf;
use std::sync::RwLock;

use wavesh_exec::sandbox::Level;
use wavesh_policy::git_guard::cached_git_context;
use wavesh_policy::settings::Settings;
use wavesh_policy::{ClassifyContext, Decision, Dialect, Outcome, PermissionMode, decide};

use crate::sandbox::SandboxSettings;

/// Who approves commands that need approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Approver {
    /// The host approves every call it makes (an MCP client that asks its user, a CLI
    /// user who typed the command); deny rules still refuse.
    #[default]
    Host,
    /// wavesh decides: allowed and read-only commands run, sandboxed auto-allow runs the
    /// rest at `workspace-write` when it is on, and anything else needs the host to ask
    /// and mark the call approved.
    Wavesh,
}

/// The permission setup of a session.
#[derive(Debug, Default)]
pub struct Permissions {
    /// Rules of every level; "always allow" answers add to it.
    pub settings: RwLock<Settings>,
    /// Who approves.
    pub approver: Approver,
    /// The policy mode (default, plan, ...).
    pub mode: PermissionMode,
}

/// What to do with a Bash call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Run it at this level.
    Run {
        /// The sandbox level.
        level: Level,
        /// Keep the network (a read-only command that reads over it, `gh pr view`).
        network: bool,
    },
    /// The user must approve it first; the decision says why and what rule would allow it.
    Ask(Decision),
    /// Refused, with the message for the model.
    Deny(String),
}

/// One Bash call's analysis and decision, made once (PARSE): the verdict, the run and the
/// rendering of the result all read this, and an MCP gate hands it on to the run, so a
/// call parses its command once and asks git about the repository at most once.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub(crate) command: String,
    pub(crate) cwd: PathBuf,
    pub(crate) unsandboxed: bool,
    pub(crate) analysis: std::sync::Arc<wavesh_parse::Analysis>,
    /// The verdict as decided, and as it stands once the host approved the call.
    unapproved: Verdict,
    approved: Verdict,
}

impl Prepared {
    /// What would happen to the call now: run at a level, ask, or refuse (SBX-3).
    pub fn verdict(&self) -> &Verdict {
        &self.unapproved
    }

    /// The verdict once the host has, or has not, approved the call.
    pub(crate) fn verdict_for(&self, approved: bool) -> &Verdict {
        if approved {
            &self.approved
        } else {
            &self.unapproved
        }
    }

    /// The command's analysis.
    pub fn analysis(&self) -> &wavesh_parse::Analysis {
        &self.analysis
    }

    /// Whether this was prepared for `command` from `cwd`, with the sandbox flag as
    /// given: otherwise it is made again.
    pub(crate) fn matches(&self, command: &str, cwd: &std::path::Path, unsandboxed: bool) -> bool {
        self.command == command && self.cwd == cwd && self.unsandboxed == unsandboxed
    }
}

/// The inputs of one decision.
#[derive(Clone)]
pub(crate) struct Call<'a> {
    pub command: &'a str,
    pub unsandboxed: bool,
    pub approved: bool,
    pub cwd: PathBuf,
    pub dialect: Dialect,
    pub home: PathBuf,
}

impl Permissions {
    /// Analyses and decides `call` under the session's `sandbox` settings, once.
    pub(crate) fn prepare(&self, call: &Call<'_>, sandbox: &SandboxSettings) -> Prepared {
        let env: Vec<(String, String)> = std::env::vars().collect();
        let git = cached_git_context(&call.cwd, &env);
        // Only a command that can run git needs what git's objects hold (RO-17): cached
        // per repository state, and never read for `ls`.
        let git_secrets = if call.command.contains("git") {
            wavesh_policy::git_history::secret_files(&call.cwd, &git)
        } else {
            Vec::new()
        };
        let ctx = ClassifyContext {
            home: call.home.clone(),
            git,
            git_secrets,
            cwd: call.cwd.clone(),
            ..ClassifyContext::default()
        };
        let analysis = wavesh_parse::analyze(call.command, call.dialect);
        let settings = self
            .settings
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let decision = decide(call.command, &analysis, &settings, self.mode, &ctx);
        drop(settings);
        let excluded = analysis
            .commands
            .iter()
            .filter_map(|c| c.argv.first())
            .any(|argv0| sandbox.is_excluded(&argv0.value));
        let reads_network = wavesh_policy::reads_over_network(&analysis);
        let verdict = |approved: bool| {
            choose(
                decision.clone(),
                reads_network,
                &Call {
                    approved,
                    ..call.clone()
                },
                excluded,
                self.approver,
                sandbox,
            )
        };
        Prepared {
            command: call.command.to_owned(),
            cwd: call.cwd.clone(),
            unsandboxed: call.unsandboxed,
            unapproved: verdict(false),
            approved: verdict(true),
            analysis: std::sync::Arc::new(analysis),
        }
    }
}

/// The pure part of the decision: the level, and whether it runs, asks or is refused.
fn choose(
    decision: Decision,
    reads_network: bool,
    call: &Call<'_>,
    excluded: bool,
    approver: Approver,
    sandbox: &SandboxSettings,
) -> Verdict {
    if decision.outcome == Outcome::Deny {
        return Verdict::Deny(format!(
            "Permission denied: {}",
            wavesh_policy::join_reasons(&decision.reasons, "; ")
        ));
    }
    let unsandboxed = call.unsandboxed && sandbox.allow_unsandboxed;
    let read_only = decision.allowed_as_read_only() && !unsandboxed;
    let level = if unsandboxed || excluded {
        Level::Off
    } else if read_only && sandbox.read_only_level {
        Level::ReadOnly
    } else {
        sandbox.level
    };
    let run = Verdict::Run {
        level,
        network: level == Level::ReadOnly && reads_network,
    };
    if call.approved {
        return run;
    }
    if unsandboxed {
        // `dangerouslyDisableSandbox` asks whoever approves, unless a rule the user wrote
        // allows the command: never approved for being read-only, nor because the host
        // approves its calls in general.
        return if decision.outcome == Outcome::Allow && !decision.matched_rules.is_empty() {
            run
        } else {
            // The reason to ask is the sandbox, not what the classifier saw ("read-only"
            // would read as the reason for asking), and no rule is offered for ever.
            Verdict::Ask(Decision {
                outcome: Outcome::Ask,
                reasons: vec![wavesh_policy::Reason::new(
                    wavesh_policy::ReasonKind::Unsandboxed,
                    "dangerouslyDisableSandbox: it would run without the sandbox, with the \
                     user's full access to files, credentials and the network",
                )],
                suggestions: Vec::new(),
                ..decision
            })
        };
    }
    if approver == Approver::Host {
        return run;
    }
    match decision.outcome {
        Outcome::Allow => run,
        _ if sandbox.auto_allow
            && level == Level::WorkspaceWrite
            && decision.matched_rules.is_empty()
            && !decision
                .reasons
                .iter()
                .any(wavesh_policy::Reason::is_secret) =>
        {
            // Sandboxed auto-allow: the sandbox makes a wrong approval harmless. Ask
            // rules and commands naming secrets still ask.
            run
        }
        _ => Verdict::Ask(decision),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decision(outcome: Outcome, read_only: bool, rules: &[&str], reasons: &[&str]) -> Decision {
        Decision {
            outcome,
            reasons: reasons
                .iter()
                .map(|s| match *s {
                    "read-only" => {
                        wavesh_policy::Reason::new(wavesh_policy::ReasonKind::ReadOnly, *s)
                    }
                    _ => wavesh_policy::Reason::from(*s),
                })
                .collect(),
            matched_rules: rules.iter().map(|s| s.to_string()).collect(),
            suggestions: Vec::new(),
            read_only,
        }
    }

    fn call(unsandboxed: bool, approved: bool) -> Call<'static> {
        Call {
            command: "x",
            unsandboxed,
            approved,
            cwd: "/ws".into(),
            dialect: Dialect::Bash,
            home: "/h".into(),
        }
    }

    fn approval_refusal_text(decision: &Decision) -> String {
        crate::results::approval_refusal("Needs approval", decision)
    }

    fn ww() -> SandboxSettings {
        SandboxSettings {
            level: Level::WorkspaceWrite,
            ..SandboxSettings::default()
        }
    }

    #[test]
    fn sbx_3_read_only_runs_read_only_and_the_rest_at_the_session_level() {
        let ro = decision(Outcome::Allow, true, &[], &["read-only"]);
        let ask = decision(Outcome::Ask, false, &[], &["`rm` is not read-only"]);
        for approver in [Approver::Host, Approver::Wavesh] {
            assert_eq!(
                choose(
                    ro.clone(),
                    false,
                    &call(false, false),
                    false,
                    approver,
                    &ww()
                ),
                Verdict::Run {
                    level: Level::ReadOnly,
                    network: false
                }
            );
            assert_eq!(
                choose(
                    ro.clone(),
                    true,
                    &call(false, false),
                    false,
                    approver,
                    &ww()
                ),
                Verdict::Run {
                    level: Level::ReadOnly,
                    network: true
                }
            );
        }
        assert_eq!(
            choose(
                ask.clone(),
                false,
                &call(false, false),
                false,
                Approver::Host,
                &ww()
            ),
            Verdict::Run {
                level: Level::WorkspaceWrite,
                network: false
            }
        );
        assert_eq!(
            choose(
                ask.clone(),
                false,
                &call(false, false),
                false,
                Approver::Wavesh,
                &ww()
            ),
            Verdict::Ask(ask.clone())
        );
        assert_eq!(
            choose(
                ask,
                false,
                &call(false, true),
                false,
                Approver::Wavesh,
                &ww()
            ),
            Verdict::Run {
                level: Level::WorkspaceWrite,
                network: false
            }
        );
    }

    #[test]
    fn schema_1_dangerously_disable_sandbox_runs_off_and_is_never_auto_approved() {
        let ro = decision(Outcome::Allow, true, &[], &["read-only"]);
        // Asked of either approver: a host approving its calls in general has not
        // approved turning the sandbox off (SBX-3).
        let mut ask_rm = decision(Outcome::Ask, false, &[], &["`rm` is not read-only"]);
        ask_rm.suggestions = vec!["Bash(rm:*)".into()];
        for approver in [Approver::Wavesh, Approver::Host] {
            for asked in [ro.clone(), ask_rm.clone()] {
                // The reason given is the sandbox, never what the classifier saw, and no
                // rule is offered for ever.
                let Verdict::Ask(question) =
                    choose(asked, false, &call(true, false), false, approver, &ww())
                else {
                    panic!("not asked");
                };
                assert_eq!(
                    question.reasons.iter().map(|r| r.kind).collect::<Vec<_>>(),
                    [wavesh_policy::ReasonKind::Unsandboxed]
                );
                assert!(question.suggestions.is_empty());
                assert!(
                    approval_refusal_text(&question).contains("without the sandbox")
                        && !approval_refusal_text(&question).contains("read-only")
                );
            }
            assert_eq!(
                choose(ro.clone(), false, &call(true, true), false, approver, &ww()),
                Verdict::Run {
                    level: Level::Off,
                    network: false
                }
            );
        }
        // A rule the user wrote allows it.
        let ruled = decision(
            Outcome::Allow,
            false,
            &["Bash(npm publish:*)"],
            &["allowed"],
        );
        assert_eq!(
            choose(
                ruled,
                false,
                &call(true, false),
                false,
                Approver::Host,
                &ww()
            ),
            Verdict::Run {
                level: Level::Off,
                network: false
            }
        );
        let auto = SandboxSettings {
            auto_allow: true,
            ..ww()
        };
        let ask = decision(Outcome::Ask, false, &[], &["not read-only"]);
        assert!(matches!(
            choose(
                ask,
                false,
                &call(true, false),
                false,
                Approver::Wavesh,
                &auto
            ),
            Verdict::Ask(_)
        ));
        assert_eq!(
            choose(
                ro.clone(),
                false,
                &call(true, true),
                false,
                Approver::Wavesh,
                &ww()
            ),
            Verdict::Run {
                level: Level::Off,
                network: false
            }
        );
        // A host that forbids unsandboxed runs keeps the sandbox.
        let forbid = SandboxSettings {
            allow_unsandboxed: false,
            ..ww()
        };
        assert_eq!(
            choose(
                ro,
                false,
                &call(true, false),
                false,
                Approver::Wavesh,
                &forbid
            ),
            Verdict::Run {
                level: Level::ReadOnly,
                network: false
            }
        );
    }

    #[test]
    fn sbx_3_sandboxed_auto_allow_keeps_deny_and_ask_rules() {
        let auto = SandboxSettings {
            auto_allow: true,
            ..ww()
        };
        let plain = decision(Outcome::Ask, false, &[], &["`make` is not read-only"]);
        assert_eq!(
            choose(
                plain,
                false,
                &call(false, false),
                false,
                Approver::Wavesh,
                &auto
            ),
            Verdict::Run {
                level: Level::WorkspaceWrite,
                network: false
            }
        );
        let ask_rule = decision(Outcome::Ask, false, &["Bash(git push:*)"], &["ask rule"]);
        assert!(matches!(
            choose(
                ask_rule,
                false,
                &call(false, false),
                false,
                Approver::Wavesh,
                &auto
            ),
            Verdict::Ask(_)
        ));
        // Auto-allow matches the reason's kind, not its words: a secret asks, and a
        // reason that merely says "secret" does not.
        let mut secret = decision(Outcome::Ask, false, &[], &[]);
        secret.reasons = vec![wavesh_policy::Reason::secret(
            "`~/.ssh/id_rsa` is ~/.ssh, on the secret list",
        )];
        assert!(matches!(
            choose(
                secret,
                false,
                &call(false, false),
                false,
                Approver::Wavesh,
                &auto
            ),
            Verdict::Ask(_)
        ));
        let words = decision(
            Outcome::Ask,
            false,
            &[],
            &["`gh secret set` is not read-only"],
        );
        assert!(matches!(
            choose(
                words,
                false,
                &call(false, false),
                false,
                Approver::Wavesh,
                &auto
            ),
            Verdict::Run { .. }
        ));
        let deny = decision(
            Outcome::Deny,
            false,
            &["Bash(rm:*)"],
            &["denied by Bash(rm:*)"],
        );
        assert_eq!(
            choose(
                deny,
                false,
                &call(false, true),
                false,
                Approver::Host,
                &auto
            ),
            Verdict::Deny("Permission denied: denied by Bash(rm:*)".into())
        );
        // An excluded command runs outside the sandbox, so auto-allow does not apply.
        let make = decision(Outcome::Ask, false, &[], &["`docker` is not read-only"]);
        assert!(matches!(
            choose(
                make,
                false,
                &call(false, false),
                true,
                Approver::Wavesh,
                &auto
            ),
            Verdict::Ask(_)
        ));
    }
}
