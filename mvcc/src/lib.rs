//! Multi-version concurrency control for alluvium: immutable snapshots of a table, and (in
//! the write half) transactions, conflict checking and the commit loop.
//!
//! A [`Snapshot`] is the table at one version, loaded from the newest usable checkpoint plus
//! the commits after it, and never changes afterwards; any number of threads may share it.
//!
//! Writers that share a table handle and append can share commits too ([`group`]: group
//! commit).
//!
//! Stability: this crate is internal to alluvium. It is versioned with the workspace but
//! makes no semver promise of its own: its items change whenever the engine needs them to.
//! Embed alluvium through the `alluvium` facade crate, whose curated top-level API is the
//! one that is kept stable (its `internal-api` feature re-exports this crate for experts
//! who accept that).
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]
#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod error;
pub mod group;
mod par;
#[cfg(feature = "planted-bugs")]
pub mod planted;
mod retry;
pub mod snapshot;
pub mod transaction;

pub use error::{ConflictKind, MvccError, Result};
pub use group::{GroupCommit, GroupCommitOptions, MemberOutcome, WhenFull};
pub use retry::RetryPolicy;
pub use snapshot::{Snapshot, SnapshotReport, VersionSpec};
pub use transaction::{CHANGE_DATA_COLUMNS, CommitReport, Transaction, check_change_data_columns};
