//! The state store's integration tests, linked into one binary: the store itself
//! (`state`, SPEC.md §26), its follow mode (`follow`) and its refusal of input naming a
//! column twice (`duplicate_columns`, §20).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod duplicate_columns;
mod follow;
mod state;
