//! End-to-end tests of the `wavesh` binary, one test binary made of modules.
#![cfg(unix)]
#![expect(clippy::unwrap_used, reason = "tests unwrap freely (STYLE)")]

mod check;
mod find;
mod grep;
mod mcp;
mod run;
mod search_gnu;
mod util;
