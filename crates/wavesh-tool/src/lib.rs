//! The tools the model sees, and the [`Session`] hosts embed.
//!
//! `Bash` takes a strict JSON input ([`parse_bash_input`]: unknown keys, wrong types and
//! bad timeouts are errors naming the field), runs the command through `wavesh-exec`, and
//! turns the outcome into the text the model reads: the output once, whole or as a
//! `<persisted-output>` envelope, exit codes with their meaning, and the fixed texts of
//! timeouts, background moves and directory changes. The description and schema are built
//! from one configuration so the advertised limits can never disagree.
//!
//! The permission decision and the sandbox level are taken here too, in
//! [`Session::bash`](crate::AgentHandle::bash), the same for every host (SBX-3).

mod agent;
pub mod config;
pub mod description;
pub mod env_vars;
pub mod gh_limit;
pub mod image_output;
pub mod input;
mod permissions;
pub mod read_state;
pub mod render;
mod results;
pub mod sandbox;
pub mod sandbox_text;
mod session;
pub mod shell_state;
mod state;
pub mod task_tools;
pub mod tty;

pub use config::{DEFAULT_CLIENT_BUDGET_MS, HostMode, ToolConfig};
pub use description::{
    BASH_TOOL_NAME, ToolDefinition, bash_description, bash_description_with, bash_input_schema,
    tool_definitions, tool_definitions_with,
};
pub use input::{BashInput, InputError, parse_bash_input};
pub use permissions::{Approver, Permissions, Prepared, Verdict};
pub use sandbox::{NetworkSettings, SandboxSettings};
pub use session::{
    AgentHandle, BashResult, CallContext, ProcessPath, Session, SessionBuilder, SessionError,
    Subagent, TaskInfo, TaskNotification, TaskOutputResult, TaskSnapshot, TaskStopResult,
    ToolError, ToolOutput, approval_refusal, normalize_private, on_timeout,
};
pub use task_tools::{TaskOutputInput, TaskStopInput};
pub use tty::{TaskInputInput, TaskInputResult};
