//! The reliability suite: nothing wavesh starts survives a stop, a session end or the
//! host's own death; read-only commands are sealed; bad input and hostile output get
//! clear answers while the host stays up.
//!
//! `cargo nextest run -p wavesh --test reliability` runs it at CI size. The long soak
//! (500 mixed runs instead of 40) runs with `WAVESH_SOAK=1`.
#![cfg(target_os = "linux")]
#![expect(clippy::unwrap_used, reason = "tests unwrap freely (STYLE)")]
#![allow(
    clippy::print_stdout,
    reason = "tests say SKIPPED and print the figures they measure"
)]

#[path = "../../crates/cli/tests/it/util.rs"]
#[allow(dead_code)]
mod util;

mod bad_input;
mod output;
mod processes;
mod sealed;

use std::path::Path;

use wavesh_tool::Session;

/// A session in `root` whose commands start through the supervisor, as `wavesh mcp` runs
/// them.
pub fn supervised_session(root: &Path, private: &Path) -> Session {
    Session::builder(root)
        .private_base(private)
        .no_login_env()
        .supervisor(util::WAVESH)
        .build()
        .expect("a session")
}

pub use util::Mcp;
