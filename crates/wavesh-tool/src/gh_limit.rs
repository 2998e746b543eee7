//! OUT-5: a `gh` command that hit GitHub's rate limit gets a reminder not to retry, at
//! most once a minute per process.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use wavesh_parse::{Analysis, SimpleCommand};

/// The reminder, verbatim.
pub const GH_RATE_LIMIT_REMINDER: &str = "<system-reminder>GitHub API rate limit hit. The 5000 requests/hour quota is shared by every tool and agent using this token. Check the reset time with gh api rate_limit and wait until then instead of retrying.</system-reminder>";

/// The reminder is given at most this often per process.
pub const GH_REMINDER_INTERVAL: Duration = Duration::from_secs(60);

static LAST: Mutex<Option<Instant>> = Mutex::new(None);

/// `gh` subcommands that never hit the API limit in a way the reminder helps with.
const EXCLUDED: &[&str] = &["auth", "help", "version", "alias", "completion", "config"];

fn calls_gh(command: &SimpleCommand) -> bool {
    let args = command.args();
    args.first()
        .is_some_and(|name| name.rsplit('/').next() == Some("gh"))
        && !args
            .get(1)
            .is_some_and(|sub| EXCLUDED.contains(sub) || *sub == "--version")
}

/// Whether the command calls `gh` (outside the excluded subcommands), anywhere in it.
pub fn command_calls_gh(analysis: &Analysis) -> bool {
    analysis
        .commands
        .iter()
        .chain(&analysis.nested)
        .any(calls_gh)
}

/// Whether the output says the rate limit was hit.
pub fn mentions_rate_limit(output: &str) -> bool {
    let lower = output.to_ascii_lowercase();
    [
        "api rate limit exceeded",
        "secondary rate limit",
        "rate limit exceeded",
    ]
    .iter()
    .any(|needle| lower.contains(needle))
}

/// The reminder if it applies and was not given in the last minute (process-wide).
pub fn reminder(analysis: &Analysis, output: &str) -> Option<&'static str> {
    reminder_at(analysis, output, Instant::now(), &LAST)
}

fn reminder_at(
    analysis: &Analysis,
    output: &str,
    now: Instant,
    last: &Mutex<Option<Instant>>,
) -> Option<&'static str> {
    if !command_calls_gh(analysis) || !mentions_rate_limit(output) {
        return None;
    }
    let mut last = last
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if last.is_some_and(|at| now.duration_since(at) < GH_REMINDER_INTERVAL) {
        return None;
    }
    *last = Some(now);
    Some(GH_RATE_LIMIT_REMINDER)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wavesh_parse::{Dialect, analyze};

    #[test]
    fn out_5_once_per_minute_and_not_for_excluded_subcommands() {
        let last = Mutex::new(None);
        let start = Instant::now();
        let pr = analyze("gh pr list", Dialect::Bash);
        let text = "HTTP 403: API rate limit exceeded for user";
        assert_eq!(
            reminder_at(&pr, text, start, &last),
            Some(GH_RATE_LIMIT_REMINDER)
        );
        assert_eq!(
            reminder_at(&pr, text, start + Duration::from_secs(30), &last),
            None
        );
        assert!(reminder_at(&pr, text, start + Duration::from_secs(61), &last).is_some());
        let auth = analyze("gh auth status", Dialect::Bash);
        assert_eq!(
            reminder_at(&auth, text, start + Duration::from_secs(200), &last),
            None
        );
        let other = analyze("curl api.github.com", Dialect::Bash);
        assert_eq!(
            reminder_at(&other, text, start + Duration::from_secs(300), &last),
            None
        );
        assert!(mentions_rate_limit(
            "You have exceeded a SECONDARY RATE LIMIT"
        ));
        assert!(!mentions_rate_limit("all good"));
        let nested = analyze("echo $(gh api user)", Dialect::Bash);
        assert!(command_calls_gh(&nested));
    }
}
