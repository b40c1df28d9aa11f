//! Multi-version concurrency control for alluvium: immutable snapshots of a table, and (in
//! the write half) transactions, conflict checking and the commit loop.
//!
//! A [`Snapshot`] is the table at one version, loaded from the newest usable checkpoint plus
//! the commits after it, and never changes afterwards; any number of threads may share it.
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

mod error;
pub mod snapshot;

pub use error::{MvccError, Result};
pub use snapshot::{Snapshot, SnapshotReport, VersionSpec};
