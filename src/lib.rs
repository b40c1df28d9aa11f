//! alluvium: an embeddable storage engine for the Delta Lake transaction-log protocol.
//!
//! ```no_run
//! # fn main() -> alluvium::Result<()> {
//! let table = alluvium::Table::open("path/to/table")?;
//! let snapshot = table.snapshot()?;
//! let batches = alluvium::ScanBuilder::new(snapshot)
//!     .with_columns(["id", "region"])
//!     .with_filter_str("region = 'EU' AND id > 10")?
//!     .build()?
//!     .execute()?;
//! # Ok(()) }
//! ```
//!
//! Layers (each a crate; dependencies point down only):
//! * `alluvium-storage`: object stores;
//! * `alluvium-txlog`: the log format;
//! * `alluvium-mvcc`: snapshots and transactions;
//! * `alluvium-compaction`: maintenance;
//! * this crate: the facade, table operations and the `alluvium` CLI.
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

mod describe;
mod error;
mod history;
mod maintenance;
mod rewrite;
pub mod scan;
#[doc(hidden)]
pub mod synthetic;
mod table;
mod verify;
mod write;

pub use alluvium_compaction as compaction;
pub use alluvium_mvcc as mvcc;
pub use alluvium_mvcc::{Snapshot, VersionSpec};
pub use alluvium_storage as storage;
pub use alluvium_txlog as txlog;
pub use describe::{ProtocolDescription, TableDescription, describe};
pub use error::{Error, Result};
pub use history::{CommitEntry, history};
pub use scan::{Scan, ScanBuilder, conform_variant, variants_as_json, variants_as_json_schema};
pub use table::{STORAGE_OPTIONS_ENV, Table};
pub use verify::{Finding, FindingKind, VerifyOptions, VerifyReport};
pub use write::{DEFAULT_TARGET_FILE_SIZE, WriteOptions, WriteOutcome};

pub use alluvium_txlog::ENGINE;
