//! allow / ask / deny for a command (RULE-2..5, RULE-2b) and the "always allow"
//! suggestions that come with an ask (PREFIX-1).

use wavesh_parse::{Analysis, SimpleCommand};

use crate::classify::{ClassifyContext, classify, command_is_read_only};
use crate::env::is_inert;
use crate::prefix::stable_prefix;
use crate::rules::Rule;
use crate::settings::{RuleEntry, Settings};
use crate::{Reason, ReasonKind};

/// The decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Run without asking.
    Allow,
    /// Ask the user.
    Ask,
    /// Refuse.
    Deny,
}

impl Outcome {
    /// `allow`, `ask` or `deny`.
    pub fn word(self) -> &'static str {
        match self {
            Outcome::Allow => "allow",
            Outcome::Ask => "ask",
            Outcome::Deny => "deny",
        }
    }
}

/// The host's permission mode (RULE-5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PermissionMode {
    /// Rules, then read-only auto-approval, then ask.
    #[default]
    Default,
    /// Only read-only commands run without asking; allow rules do not apply.
    Plan,
    /// The same as default for Bash.
    AcceptEdits,
    /// Everything runs, except what deny rules forbid.
    BypassPermissions,
}

impl PermissionMode {
    /// Parses Claude Code's mode names.
    pub fn parse(text: &str) -> Option<PermissionMode> {
        match text {
            "default" => Some(PermissionMode::Default),
            "plan" => Some(PermissionMode::Plan),
            "acceptEdits" | "accept-edits" => Some(PermissionMode::AcceptEdits),
            "bypassPermissions" | "bypass-permissions" => Some(PermissionMode::BypassPermissions),
            _ => None,
        }
    }
}

/// What [`decide`] answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// allow, ask or deny.
    pub outcome: Outcome,
    /// Why, typed (what a program matches) and in words.
    pub reasons: Vec<Reason>,
    /// The rules that decided, as written.
    pub matched_rules: Vec<String>,
    /// "Always allow" rules to offer when asking.
    pub suggestions: Vec<String>,
    /// The command is provably read-only.
    pub read_only: bool,
}

impl Decision {
    /// Allowed only because the command is provably read-only: no rule, no mode and no
    /// user allowed it. Such commands are the ones a host may seal.
    pub fn allowed_as_read_only(&self) -> bool {
        self.outcome == Outcome::Allow
            && self.read_only
            && self.matched_rules.is_empty()
            && self
                .reasons
                .iter()
                .any(|reason| reason.kind == ReasonKind::ReadOnly)
    }
}

/// The reason given for a command allowed because it is read-only.
const READ_ONLY_REASON: &str = "read-only";

/// Wrappers deny and ask rules see through (RULE-2b), with how many words each takes
/// before the command (options are skipped separately).
const SEE_THROUGH: &[&str] = &[
    "timeout", "nice", "time", "nohup", "stdbuf", "env", "sudo", "doas", "command", "xargs",
    "exec", "builtin",
];

/// Wrappers allow rules see through: inert ones only.
const INERT_WRAPPERS: &[&str] = &["timeout", "nice", "time", "nohup", "stdbuf"];

/// Every tail of `words` that starts after a wrapper (and its options or arguments):
/// `timeout 5 rm -rf x` gives `timeout 5 rm -rf x` and `rm -rf x`.
fn unwrapped<'a>(words: &[&'a str], wrappers: &[&str]) -> Vec<Vec<&'a str>> {
    let mut out = vec![words.to_vec()];
    let mut rest = words;
    while let Some((first, tail)) = rest.split_first() {
        if !wrappers.contains(first) {
            break;
        }
        let mut tail = tail;
        // Options of the wrapper, `env`'s assignments, and the duration of `timeout`.
        while let Some(word) = tail.first() {
            let is_option = word.starts_with('-');
            let is_assignment = *first == "env" && word.contains('=');
            let is_duration =
                *first == "timeout" && word.chars().next().is_some_and(|c| c.is_ascii_digit());
            let takes_value = matches!(
                (*first, *word),
                ("nice", "-n")
                    | ("timeout", "-s" | "-k")
                    | ("sudo", "-u" | "-g")
                    | ("xargs", "-n" | "-I" | "-P" | "-L" | "-d" | "-a" | "-s")
            );
            if is_option || is_assignment || is_duration {
                tail = &tail[1 + usize::from(takes_value && tail.len() > 1)..];
            } else {
                break;
            }
        }
        rest = tail;
        if !rest.is_empty() {
            out.push(rest.to_vec());
        }
    }
    out
}

fn words(command: &SimpleCommand) -> Vec<&str> {
    command.argv.iter().map(|w| w.value.as_str()).collect()
}

/// Every word sequence a deny or ask rule is checked against (RULE-2b).
fn deny_candidates(source: &str, analysis: &Analysis) -> Vec<Vec<String>> {
    let to_owned = |list: Vec<Vec<&str>>| -> Vec<Vec<String>> {
        list.into_iter()
            .map(|w| w.into_iter().map(str::to_owned).collect())
            .collect()
    };
    if analysis.failure.is_some() {
        // It does not parse: every word that could be a command name starts a candidate.
        let tokens: Vec<&str> = source
            .split(|c: char| c.is_whitespace() || ";|&()`$<>{}".contains(c))
            .map(|t| t.trim_matches(['"', '\'']))
            .filter(|t| !t.is_empty())
            .collect();
        return (0..tokens.len())
            .map(|i| tokens[i..].iter().map(|t| (*t).to_owned()).collect())
            .collect();
    }
    let mut out = Vec::new();
    for command in analysis.commands.iter().chain(&analysis.nested) {
        out.extend(to_owned(unwrapped(&words(command), SEE_THROUGH)));
    }
    out
}

fn matching<'r>(
    rules: &'r [RuleEntry],
    source: &str,
    candidates: &[Vec<String>],
) -> Vec<&'r RuleEntry> {
    rules
        .iter()
        .filter(|entry| {
            entry.rule.matches_text(source)
                || candidates.iter().any(|words| {
                    let words: Vec<&str> = words.iter().map(String::as_str).collect();
                    entry.rule.matches_words(&words)
                })
        })
        .collect()
}

/// Whether a command may be matched by allow rules beyond an exact match (RULE-2):
/// static words, no redirects but fd duplications, `/dev/null` and input, inert or static
/// assignments only.
fn rule_safe(command: &SimpleCommand) -> bool {
    command.argv.iter().all(|w| w.is_static())
        && command
            .assignments
            .iter()
            .all(|(_, value)| value.is_static())
        && command.redirects.iter().all(|r| {
            r.is_fd_duplication()
                || r.is_dev_null_output()
                || (r.is_input() && r.heredoc.as_ref().is_none_or(|h| !h.dynamic))
        })
}

/// Decides allow / ask / deny for `source` (RULE-5).
pub fn decide(
    source: &str,
    analysis: &Analysis,
    settings: &Settings,
    mode: PermissionMode,
    ctx: &ClassifyContext,
) -> Decision {
    let verdict = classify(source, analysis, ctx);
    let candidates = deny_candidates(source, analysis);
    let denied = matching(&settings.deny, source, &candidates);
    if !denied.is_empty() {
        return Decision {
            outcome: Outcome::Deny,
            reasons: denied
                .iter()
                .map(|r| {
                    Reason::new(
                        ReasonKind::DenyRule,
                        format!("denied by the rule {} ({})", r.text, r.source.display()),
                    )
                })
                .collect(),
            matched_rules: denied.iter().map(|r| r.text.clone()).collect(),
            suggestions: Vec::new(),
            read_only: verdict.read_only,
        };
    }
    let asked = matching(&settings.ask, source, &candidates);
    if !asked.is_empty() {
        return Decision {
            outcome: Outcome::Ask,
            reasons: asked
                .iter()
                .map(|r| {
                    Reason::new(
                        ReasonKind::AskRule,
                        format!("the rule {} asks for approval", r.text),
                    )
                })
                .collect(),
            matched_rules: asked.iter().map(|r| r.text.clone()).collect(),
            suggestions: Vec::new(),
            read_only: verdict.read_only,
        };
    }
    if mode == PermissionMode::BypassPermissions {
        return Decision {
            outcome: Outcome::Allow,
            reasons: vec![Reason::new(ReasonKind::Mode, "bypassPermissions mode")],
            matched_rules: Vec::new(),
            suggestions: Vec::new(),
            read_only: verdict.read_only,
        };
    }
    if mode != PermissionMode::Plan
        && let Some(matched) = allowed(source, analysis, &settings.allow, ctx)
    {
        return Decision {
            outcome: Outcome::Allow,
            reasons: vec![Reason::new(
                ReasonKind::AllowRule,
                format!("allowed by {}", matched.join(", ")),
            )],
            matched_rules: matched,
            suggestions: Vec::new(),
            read_only: verdict.read_only,
        };
    }
    if verdict.read_only {
        return Decision {
            outcome: Outcome::Allow,
            reasons: vec![Reason::new(ReasonKind::ReadOnly, READ_ONLY_REASON)],
            matched_rules: Vec::new(),
            suggestions: Vec::new(),
            read_only: true,
        };
    }
    let mut reasons = verdict.reasons;
    if mode == PermissionMode::Plan {
        reasons.push(Reason::new(
            ReasonKind::Mode,
            "plan mode: only read-only commands run without approval",
        ));
    }
    Decision {
        outcome: Outcome::Ask,
        reasons,
        matched_rules: Vec::new(),
        suggestions: suggestions(source, analysis, ctx),
        read_only: false,
    }
}

/// RULE-3: allow rules must cover every part that is not read-only. Returns the rules
/// that did.
fn allowed(
    source: &str,
    analysis: &Analysis,
    rules: &[RuleEntry],
    ctx: &ClassifyContext,
) -> Option<Vec<String>> {
    if let Some(exact) = rules.iter().find(|r| r.rule.matches_text(source)) {
        return Some(vec![exact.text.clone()]);
    }
    let safe = analysis.failure.is_none()
        && analysis.unsupported.is_empty()
        && analysis.odd_characters.is_empty();
    if !safe || analysis.commands.is_empty() || !analysis.commands.iter().all(rule_safe) {
        return None;
    }
    let mut matched = Vec::new();
    for command in &analysis.commands {
        if command_is_read_only(command, ctx).is_ok() {
            continue;
        }
        // Inert assignments (RO-12) do not stop a prefix match; any other does.
        if command
            .assignments
            .iter()
            .any(|(name, value)| !is_inert(name, value))
        {
            return None;
        }
        let words = words(command);
        let rule = unwrapped(&words, INERT_WRAPPERS)
            .iter()
            .find_map(|candidate| rules.iter().find(|r| r.rule.matches_words(candidate)))?;
        if !matched.contains(&rule.text) {
            matched.push(rule.text.clone());
        }
    }
    (!matched.is_empty()).then_some(matched)
}

/// PREFIX-1: a prefix rule per command that needs approval, at most 5; else (or when any
/// prefix cannot be computed) the exact command.
pub fn suggestions(source: &str, analysis: &Analysis, ctx: &ClassifyContext) -> Vec<String> {
    let exact = vec![Rule::Exact(source.trim().to_owned()).to_string()];
    if !analysis.is_permission_safe() {
        return exact;
    }
    let mut rules = Vec::new();
    for command in &analysis.commands {
        if command_is_read_only(command, ctx).is_ok() {
            continue;
        }
        // A command that reads a secret is allowed only as itself: `cat:*` would allow
        // every secret (PREFIX-2).
        if crate::classify::touches_secret(command, ctx) {
            return exact;
        }
        let Some(prefix) = stable_prefix(command) else {
            return exact;
        };
        let rule = Rule::Prefix(prefix).to_string();
        if !rules.contains(&rule) {
            rules.push(rule);
        }
    }
    if rules.is_empty() || rules.len() > 5 {
        exact
    } else {
        rules
    }
}
