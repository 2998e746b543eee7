//! Why a command is, or is not, allowed: a kind a program can match, and the words the
//! model and the user read. Decisions downstream (sandboxed auto-allow, the approval
//! prompt) match the kind, never the words.

use std::fmt;

/// What kind of reason it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReasonKind {
    /// The command is provably read-only.
    ReadOnly,
    /// An allow rule of the user's settings matched.
    AllowRule,
    /// An ask rule of the user's settings matched.
    AskRule,
    /// A deny rule of the user's settings matched.
    DenyRule,
    /// The permission mode decided (`bypassPermissions`, `plan`).
    Mode,
    /// The call asks to run without the sandbox (`dangerouslyDisableSandbox`), which is
    /// never approved for being read-only and never offered as "always".
    Unsandboxed,
    /// The command reads, or may read, a path on the secret list, a variable that may
    /// hold one, or a file that may be a link to one.
    Secret,
    /// Anything else that keeps the command from being provably read-only: a write, a
    /// program run, an unknown option, syntax not analysed.
    NotReadOnly,
}

/// One reason, typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reason {
    /// What kind it is.
    pub kind: ReasonKind,
    /// In words.
    pub text: String,
}

impl Reason {
    /// A reason of `kind`.
    pub fn new(kind: ReasonKind, text: impl Into<String>) -> Reason {
        Reason {
            kind,
            text: text.into(),
        }
    }

    /// The command may read a secret.
    pub fn secret(text: impl Into<String>) -> Reason {
        Reason::new(ReasonKind::Secret, text)
    }

    /// Whether it is about a secret.
    pub fn is_secret(&self) -> bool {
        self.kind == ReasonKind::Secret
    }

    /// The same kind, with `prefix` before the words.
    pub fn prefixed(self, prefix: &str) -> Reason {
        Reason {
            kind: self.kind,
            text: format!("{prefix}{}", self.text),
        }
    }
}

impl From<String> for Reason {
    fn from(text: String) -> Reason {
        Reason::new(ReasonKind::NotReadOnly, text)
    }
}

impl From<&str> for Reason {
    fn from(text: &str) -> Reason {
        Reason::new(ReasonKind::NotReadOnly, text)
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// The reasons' words joined by `separator`.
pub fn join(reasons: &[Reason], separator: &str) -> String {
    reasons
        .iter()
        .map(|r| r.text.as_str())
        .collect::<Vec<_>>()
        .join(separator)
}

/// `Err(refuse!("..."))`: a refusal that is not about a secret, from a format string.
#[macro_export]
macro_rules! refuse {
    ($($arg:tt)*) => {
        $crate::Reason::from(format!($($arg)*))
    };
}
