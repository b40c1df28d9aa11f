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
//! Everything an embedder needs is exported at the top level: the table handle and its
//! operations ([`Table`]), snapshots and scans, one-commit [`Transaction`]s, predicates
//! ([`Expr`]), the actions and schema types they carry, the reports and options of writes
//! and maintenance, the storage trait and stores, and one [`Error`] with a flat
//! [`ErrorKind`].
//!
//! Layers (each a crate; dependencies point down only):
//! * `alluvium-storage`: object stores;
//! * `alluvium-txlog`: the log format;
//! * `alluvium-datafile`: reading and writing data files, the OPTIMIZE rewrite;
//! * `alluvium-mvcc`: snapshots and transactions;
//! * `alluvium-compaction`: maintenance;
//! * this crate: the facade and table operations.
//!
//! Inside this crate, each concern has one home and imports point one way (checked by
//! `.ci/check_cycles.py`): `ops/` (one file or folder per table operation) builds on `rows/`
//! (the row-change core: input, column rules, deletes, change data), which builds on
//! `commit/` (the tail every write shares) and `read/` (scans, the change feed); `table.rs`
//! and `error.rs` are shared by all.
//!
//! The keyed state store is the separate crate `alluvium-state`, built on this crate's
//! public API alone. The `alluvium` command-line tool is the separate package
//! `alluvium-cli`, and the measurements (binary `alluvium-bench`, with the synthetic-log
//! generator) are the package `alluvium-bench`: none of the three is part of this library.
//! Feature `s3` (off by default) adds object-store tables.
//!
//! The lower crates themselves are reachable as `alluvium::storage`, `alluvium::txlog`,
//! `alluvium::expr`, `alluvium::datafile`, `alluvium::mvcc` and `alluvium::compaction` with the cargo feature
//! `internal-api`, for experts who accept that their interfaces change without notice.
//!
//! Growth without breakage: the enums that gain variants as features land (`Expr`,
//! `Literal`, `Function`, `MergeAction`, `ClauseKind`, `Progress`, `ErrorKind`, the error
//! enums) and the report and option structs are `#[non_exhaustive]`; options are built
//! from `Default` with their `with_` setters
//! (`WriteOptions::default().with_merge_schema(true)`).
//! Left exhaustive on purpose, because matching every case is the point and the set is
//! fixed by the protocol or by the meaning: `DataType` and `PrimitiveType` (the engine
//! matches them exhaustively where a type needs handling), `VersionSpec`, `WriteOutcome`
//! (committed or skipped), `ColumnMappingMode`, `VacuumMode`, `CommitMode`, `WhenFull`,
//! `CmpOp`, `ConflictKind` (Delta's named conflicts) and `PutIfAbsentSupport`.
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]
#![deny(missing_docs)]

mod commit;
mod describe;
mod error;
mod history;
mod ops;
mod read;
mod report;
mod rows;
mod snapshot;
mod table;
mod text_input;
mod verify;

pub use read::{changes, scan};

#[cfg(feature = "internal-api")]
pub use alluvium_compaction as compaction;
#[cfg(feature = "internal-api")]
pub use alluvium_datafile as datafile;
#[cfg(feature = "internal-api")]
pub use alluvium_expr as expr;
#[cfg(feature = "internal-api")]
pub use alluvium_mvcc as mvcc;
/// The group-commit queue's waits, made visible to the simulator's scheduler (cargo feature
/// `planted-bugs`, never for embedders).
#[cfg(feature = "planted-bugs")]
pub use alluvium_mvcc::group::waits as group_waits;
/// Planted bugs for the deterministic simulator (cargo feature `planted-bugs`, never for
/// embedders): `planted::plant(Some(Bug::...))` switches one on for the whole process.
#[cfg(feature = "planted-bugs")]
pub use alluvium_mvcc::planted;
#[cfg(feature = "internal-api")]
pub use alluvium_storage as storage;
/// The engine's source of fresh ids, which the deterministic simulator seeds per thread
/// (cargo feature `planted-bugs`, never for embedders).
#[cfg(feature = "planted-bugs")]
pub use alluvium_storage::ids as storage_ids;
#[cfg(feature = "internal-api")]
pub use alluvium_txlog as txlog;

/// The Arrow crate alluvium's batches and schemas come from, for embedders to name the
/// same types (`alluvium::arrow::array::RecordBatch`) without pinning a version of their own.
pub use arrow;
/// The JSON crate of the values alluvium takes and gives as JSON (`commitInfo` fields:
/// [`CommitInfo`], [`WriteOptions::commit_info`]; [`TableDescription::schema`]), for
/// embedders to name them (`alluvium::serde_json::Value`) without pinning a version of
/// their own.
pub use serde_json;

// The curated surface. Tables, snapshots, scans, writes and transactions:
pub use alluvium_datafile::FileTask;
pub use alluvium_mvcc::{
    CommitReport, ConflictKind, GroupCommitOptions, RetryPolicy, SnapshotReport, VersionSpec,
    WhenFull,
};
pub use snapshot::Snapshot;
// What `Snapshot`'s methods return, so an embedder can name it: the table root
// (`Snapshot::root`), the replayed state (`state`, whose application transactions are
// `SetTransaction`s), the property accessors (`properties`), the column-mapping mode
// (`column_mapping`).
pub use alluvium_datafile::DEFAULT_TARGET_FILE_SIZE;
/// The Iceberg metadata sync ([`Table::sync_iceberg`]): its report, its error, and the table
/// property that runs it after every commit.
pub use alluvium_iceberg::{IcebergError, SYNC_PROPERTY as ICEBERG_SYNC_PROPERTY, SyncReport};
pub use alluvium_txlog::column_mapping::ColumnMappingMode;
pub use alluvium_txlog::memory::MemoryUsage;
pub use alluvium_txlog::path::TableRoot;
pub use alluvium_txlog::properties::TableProperties;
pub use alluvium_txlog::replay::TableState;
pub use changes::{
    CHANGE_FEED_COLUMNS, CHANGE_TYPE_COLUMN, COMMIT_TIMESTAMP_COLUMN, COMMIT_VERSION_COLUMN,
    ChangeBatches, Changes, ChangesBuilder,
};
pub use commit::{AppTransaction, DmlOutcome, WriteOptions, WriteOutcome};
pub use describe::{ProtocolDescription, TableDescription};
pub use error::FileRefusal;
pub use history::CommitEntry;
pub use ops::columns::parse_column_definition;
pub use ops::create::NO_PROPERTIES;
pub use ops::files::{CommitFilesOptions, CommitMode};
pub use ops::merge::clause::{ClauseKind, MergeAction, MergeClause};
pub use ops::merge::{MergeBuilder, MergeOn};
pub use ops::repair::{RepairEntry, RepairReport};
pub use ops::transaction::Transaction;
pub use report::{CommitSummary, OptimizeSummary, PostCommit, StepOutcome};
pub use rows::assign::Assignment;
pub use rows::input::check_distinct_columns;
pub use rows::source::IntoBatch;
pub use scan::{
    RowCount, Scan, ScanBatches, ScanBuilder, conform_variant, read_file, variants_as_json,
    variants_as_json_schema,
};
pub use table::Table;
pub use text_input::{column_list, iso_timestamp};
pub use verify::{Finding, FindingKind, VerifyOptions, VerifyReport};
// Predicates, actions and schemas:
pub use alluvium_expr::{ArithOp, CmpOp, DateField, Expr, Function, Interval, Literal, parse_expr};
pub use alluvium_txlog::actions::{
    Add, AddBuilder, CommitInfo, DomainMetadata, Format, Metadata, OptStringMap, Protocol, Remove,
    SetTransaction,
};
pub use alluvium_txlog::scalar::Scalar;
pub use alluvium_txlog::schema::{
    DataType, EXTENSION_METADATA_KEY, EXTENSION_NAME_KEY, PrimitiveType, StructField, StructType,
    VARIANT_EXTENSION, arrow_schema, from_arrow_schema,
};
pub use alluvium_txlog::{FileRef, Version};
// Maintenance:
pub use alluvium_compaction::optimize::Progress;
pub use alluvium_compaction::{
    CheckpointConfig, CleanupReport, CommitFields, OptimizeOptions, OptimizeReport, VacuumMode,
    VacuumOptions, VacuumReport,
};
pub use alluvium_txlog::checkpoint::CheckpointOutput;
pub use alluvium_txlog::dv::DeletionVectorDescriptor;
// Storage:
pub use alluvium_storage::{
    FileLocation, FileLocationRef, InMemoryStore, LocalFsStore, ObjectMeta, ObjectStore,
    PrefixStore, PutIfAbsentSupport, REMOTE_SCHEMES, RequestCounts, StorageOptions, StorePath,
    StorePathRef, StoreRef, local_path, remote_scheme,
};
// Errors (the lower layers' types are those the variants of `Error` wrap):
pub use alluvium_compaction::MaintenanceError;
pub use alluvium_expr::{ExprError, SyntaxError};
pub use alluvium_mvcc::MvccError;
pub use alluvium_storage::StorageError;
pub use alluvium_txlog::{FeatureSide, LogError};
pub use error::{Error, ErrorKind, Result};

pub use alluvium_txlog::ENGINE;
