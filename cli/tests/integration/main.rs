//! Integration tests of the `alluvium` binary, linked into one test binary: the command
//! line's contract (commands, flags, output formats, exit statuses, one-line errors).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod changes;
mod cli;
mod cluster;
mod column_rules;
mod common;
mod dml;
mod everyday;
mod expressions;
mod iceberg;
mod s3;
mod state;
mod state_stress;
mod stress;
mod variant;
mod verify;

// Fixtures shared with the library's integration tests (the repository's `tests/`).
#[path = "../../../tests/common/mod.rs"]
mod root_common;
#[path = "../../../tests/common/s3_server.rs"]
mod s3_server;
#[path = "../../../tests/verify_fixture/mod.rs"]
mod verify_fixture;
