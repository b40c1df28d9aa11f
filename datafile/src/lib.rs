//! Data files for alluvium: everything that reads or writes the Parquet files of a Delta
//! table, below the transaction layer.
//!
//! This crate owns:
//! * **reading** data files ([`read`]): projection by physical name or field id (column
//!   mapping), conforming what a file stores to the table's logical types (schema
//!   evolution, type widening, variant and geospatial values), deletion vectors applied,
//!   partition values materialised, a filter applied row by row; one file at a time
//!   ([`read_file`] of a [`FileTask`]), so an engine can distribute a scan;
//! * **writing** data files ([`sink`]): Parquet encoding with per-file statistics
//!   ([`stats_writer`]), the columns of big batches encoded in parallel (`encode`),
//!   Hive-style partition directories, uploads with put-if-absent, returning the `add`
//!   actions;
//! * the **OPTIMIZE rewrite** of a set of files ([`rewrite`], with [`zorder`] clustering).
//!
//! Filters are evaluated with `alluvium-expr`, which owns the expression language.
//!
//! It must not know snapshots, transactions or commits (`alluvium-mvcc` and above build a
//! [`TableLayout`] from a snapshot and commit the `add`s this crate returns), the CLI,
//! environment variables, or any facade type. It depends on `alluvium-storage`,
//! `alluvium-txlog` and `alluvium-expr` only.
//!
//! Stability: this crate is internal to alluvium. It is versioned with the workspace but
//! makes no semver promise of its own: its items change whenever the engine needs them to.
//! Embed alluvium through the `alluvium` facade crate, whose curated top-level API is the
//! one that is kept stable (its `internal-api` feature re-exports this crate for experts
//! who accept that).
#![deny(missing_docs)]
#![warn(unreachable_pub)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

mod encode;
mod error;
mod min_max;
pub mod read;
pub mod rewrite;
pub mod sink;
pub mod stats_writer;
pub mod zorder;

pub use error::{DataFileError, Result};
pub use read::{
    FileBatches, FileTask, ReadPlan, TableLayout, conform_variant, read_file, variants_as_json,
    variants_as_json_schema,
};
pub use rewrite::rewrite_files;
pub use sink::{
    DEFAULT_TARGET_FILE_SIZE, FileSink, FileSinkOptions, ROW_GROUP_ROWS, SinkTable, discard,
};
pub use stats_writer::StatsCollector;
