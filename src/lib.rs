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
//!     .execute_to_vec()?;
//! # Ok(()) }
//! ```
//!
//! Layers (each a crate; dependencies point down only):
//! * `alluvium-storage`: object stores;
//! * `alluvium-txlog`: the log format;
//! * `alluvium-datafile`: reading and writing data files, the OPTIMIZE rewrite;
//! * `alluvium-mvcc`: snapshots and transactions;
//! * `alluvium-compaction`: maintenance;
//! * this crate: the facade and table operations.
//!
//! The `alluvium` command-line tool is the separate package `alluvium-cli`, and the
//! measurements (binary `alluvium-bench`, with the synthetic-log generator) are the package
//! `alluvium-bench`: neither is part of this library. Feature `s3` (off by default) adds
//! object-store tables.
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

mod describe;
mod error;
mod history;
mod maintenance;
pub mod scan;
mod table;
mod verify;
mod write;

pub use alluvium_compaction as compaction;
pub use alluvium_datafile as datafile;
pub use alluvium_datafile::FileTask;
pub use alluvium_mvcc as mvcc;
pub use alluvium_mvcc::{Snapshot, VersionSpec};
pub use alluvium_storage as storage;
pub use alluvium_txlog as txlog;
pub use describe::{ProtocolDescription, TableDescription, describe};
pub use error::{Error, Result};
pub use history::{CommitEntry, history};
pub use scan::{
    Scan, ScanBatches, ScanBuilder, conform_variant, read_file, variants_as_json,
    variants_as_json_schema,
};
pub use table::Table;
pub use verify::{Finding, FindingKind, VerifyOptions, VerifyReport};
pub use write::{DEFAULT_TARGET_FILE_SIZE, WriteOptions, WriteOutcome};

/// What alluvium calls itself in `commitInfo.engineInfo` and Parquet `created_by`.
pub const ENGINE: &str = concat!("alluvium ", env!("CARGO_PKG_VERSION"));
