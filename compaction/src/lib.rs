//! Table maintenance for alluvium: the checkpoint policy, log retention, OPTIMIZE
//! (bin-packing and Z-order) and VACUUM.
//!
//! Maintenance decides here and commits through `alluvium-mvcc` transactions; checkpoints
//! are written by `alluvium-txlog`'s checkpoint writer, and OPTIMIZE rewrites data files
//! through `alluvium-datafile`. Nothing here ever fails a user's
//! commit: post-commit work reports its errors instead.
//!
//! Stability: this crate is internal to alluvium. It is versioned with the workspace but
//! makes no semver promise of its own: its items change whenever the engine needs them to.
//! Embed alluvium through the `alluvium` facade crate, whose curated top-level API is the
//! one that is kept stable (its `internal-api` feature re-exports this crate for experts
//! who accept that).
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]
#![deny(missing_docs)]
#![warn(unreachable_pub)]

pub mod checkpoint;
mod commit_fields;
mod error;
pub mod log_cleanup;
pub mod optimize;
pub mod vacuum;

pub use checkpoint::{CheckpointConfig, checkpoint, checkpoint_due, should_checkpoint};
pub use commit_fields::CommitFields;
pub use error::{MaintenanceError, Result};
pub use log_cleanup::{CleanupReport, cleanup_log};
pub use optimize::{OptimizeOptions, OptimizeReport, optimize};
pub use vacuum::{VacuumMode, VacuumOptions, VacuumReport, vacuum};
