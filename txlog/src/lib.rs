//! The Delta transaction-log format for alluvium: actions, schema, commit files,
//! checkpoints, log listing and replay.
//!
//! This crate is pure and deterministic: it decodes and encodes the log, decides which
//! files reconstruct a version and reconciles their actions into a [`replay::TableState`].
//! It reads and writes through [`alluvium_storage::ObjectStore`] but never retries, never
//! sleeps and spawns no threads: parallel checkpoint decoding runs as tasks on rayon's
//! current pool (the embedder's own, when it calls in from `ThreadPool::install`).
//!
//! Map of the modules (PROTOCOL.md section in brackets):
//! * [`actions`], [`commit`]: actions and commit files ("Actions", "Delta Log Entries");
//!   [`commit_range`]: the commits of a version range (change data feed); [`cdf`]: the
//!   change-data-feed columns and change types;
//! * [`schema`], [`column_mapping`]: schema JSON and Arrow conversion ("Schema
//!   Serialization Format", "Column Mapping");
//! * [`partition`], [`stats`], [`scalar`]: partition values and statistics (the text forms
//!   of dates, timestamps and decimals in [`scalar::text`]);
//! * [`dv`]: deletion vectors ("Deletion Vectors");
//! * [`log_path`], [`segment`], [`checkpoint`]: log files, listing and checkpoints;
//!   [`log_compaction`]: a log compaction file checked against its commits;
//! * [`replay`]: action reconciliation, with [`FileRef`] the view of a live file and
//!   [`file_batch`] the live files in batches with typed statistics;
//!   [`memory`]: what a replayed state holds;
//! * [`table`]: table configuration: the protocol gate ([`features`]), table properties
//!   ([`properties`]), and the rules of column mapping, row tracking, Iceberg compatibility,
//!   clustering and type widening (the old paths, such as [`features`], are re-exports);
//! * [`path`]: file paths in actions.
//!
//! Stability: this crate is internal to alluvium. It is versioned with the workspace but
//! makes no semver promise of its own: its items change whenever the engine needs them to.
//! Embed alluvium through the `alluvium` facade crate, whose curated top-level API is the
//! one that is kept stable (its `internal-api` feature re-exports this crate for experts
//! who accept that).
#![deny(missing_docs)]
#![warn(unreachable_pub)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod actions;
pub mod cdf;
pub mod checkpoint;
pub mod commit;
pub mod commit_range;
pub mod dv;
mod error;
pub mod file_batch;
mod file_columns;
mod file_ref;
mod file_set;
pub mod log_compaction;
pub mod log_path;
pub mod memory;
pub mod partition;
pub mod path;
pub mod replay;
pub mod scalar;
pub mod schema;
pub mod segment;
pub mod stats;
mod stats_text;
#[doc(hidden)]
pub use stats_text::shaped_round_trip;
pub mod table;
mod texts;
pub mod void;

pub use error::{FeatureSide, LogError, Result};
pub use file_batch::FileBatch;
pub use file_columns::AddChunk;
pub use file_ref::FileRef;
// The table-configuration modules live under `table/`; their old paths stay valid.
pub use table::{
    clustering, column_mapping, features, iceberg_compat, properties, row_tracking, type_widening,
};

/// What alluvium calls itself: the `engineInfo` of the commits it writes and the
/// `created_by` of the Parquet files (checkpoints and data files) it writes.
pub const ENGINE: &str = concat!("alluvium/", env!("CARGO_PKG_VERSION"));
pub use log_path::Version;
