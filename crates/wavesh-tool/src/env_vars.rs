//! Environment variables that shape what the model sees, in one place.

/// Inline output limit in characters (OUT-1): default 30000, at most 150000.
pub const BASH_MAX_OUTPUT_LENGTH: &str = "BASH_MAX_OUTPUT_LENGTH";

/// Default foreground timeout in milliseconds (SCHEMA-6).
pub const BASH_DEFAULT_TIMEOUT_MS: &str = "BASH_DEFAULT_TIMEOUT_MS";

/// The maximum timeout advertised to the model, in milliseconds (SCHEMA-3, SCHEMA-6).
pub const BASH_MAX_TIMEOUT_MS: &str = "BASH_MAX_TIMEOUT_MS";

/// TaskOutput's model text limit in characters (TASK-2): default 32000, at most 160000.
pub const TASK_MAX_OUTPUT_LENGTH: &str = "TASK_MAX_OUTPUT_LENGTH";
