//! The Iceberg sync's error type.

use alluvium_mvcc::MvccError;
use alluvium_storage::StorageError;
use alluvium_txlog::LogError;

/// Result alias for the Iceberg sync.
pub type Result<T, E = IcebergError> = std::result::Result<T, E>;

/// Why an Iceberg sync or check failed. The Delta table is never changed by a sync, so every
/// failure leaves it as it was; Iceberg metadata written before the failure is unreferenced
/// until a later sync succeeds (readers follow only `vN.metadata.json` files that landed).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IcebergError {
    /// Reading or writing an object failed.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// Reading the Delta log failed.
    #[error(transparent)]
    Log(#[from] LogError),
    /// Loading a Delta snapshot failed.
    #[error(transparent)]
    Snapshot(#[from] MvccError),
    /// A column's type has no Iceberg v2 equivalent; the table cannot be synced.
    #[error(
        "column `{column}` has type {delta_type}, which Iceberg v2 cannot hold; the table is not synced"
    )]
    UnsupportedType {
        /// The column (top-level name).
        column: String,
        /// The Delta type.
        delta_type: String,
    },
    /// A column's type changed in a way Iceberg v2 cannot promote (only int to long, float
    /// to double and wider decimals): Iceberg readers would misread the files written
    /// before; versions from the change on are not synced.
    #[error(
        "column `{column}` changed from {from} to {to}, which Iceberg v2 cannot promote (only int to long, float to double and wider decimals); the table is not synced past this change"
    )]
    UnsupportedTypeChange {
        /// The column (top-level name).
        column: String,
        /// The Iceberg type before.
        from: String,
        /// The Iceberg type after.
        to: String,
    },
    /// Existing Iceberg metadata cannot be read or does not belong to this table.
    #[error("Iceberg metadata {file}: {reason}")]
    CorruptMetadata {
        /// The file, relative to the table root.
        file: String,
        /// What is wrong.
        reason: String,
    },
    /// A deletion vector or partition value could not be converted.
    #[error("Delta version {version}, file {path}: {reason}")]
    Convert {
        /// The Delta version being synced.
        version: u64,
        /// The data file.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// Writing a position-delete file failed.
    #[error("writing a position-delete file failed: {0}")]
    Parquet(String),
    /// Other syncs kept winning the race for the next metadata file.
    #[error(
        "gave up after {attempts} attempts: other syncs kept committing Iceberg metadata first"
    )]
    Contended {
        /// Attempts made.
        attempts: u32,
    },
}
