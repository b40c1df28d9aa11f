//! The facade error type: every lower layer's error, wrapped, plus a flat classification
//! ([`ErrorKind`]) so that an embedder decides what to do without matching through the
//! layers that raised it.

use alluvium_compaction::MaintenanceError;
use alluvium_expr::ExprError;
use alluvium_mvcc::{ConflictKind, MvccError};
use alluvium_storage::StorageError;
use alluvium_txlog::LogError;

/// Result alias for the facade.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Any alluvium failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Snapshot or commit failure.
    #[error(transparent)]
    Mvcc(#[from] MvccError),
    /// Log format failure.
    #[error(transparent)]
    Log(#[from] LogError),
    /// Maintenance failure.
    #[error(transparent)]
    Maintenance(#[from] MaintenanceError),
    /// An expression (a filter, an assignment, a MERGE clause, a column rule) that does not
    /// parse or type, or fails on a value.
    #[error(transparent)]
    Expr(#[from] ExprError),
    /// Storage failure.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// Writing or reading the table's Iceberg metadata failed ([`Table::sync_iceberg`](crate::Table::sync_iceberg));
    /// the Delta table is unchanged.
    #[error(transparent)]
    Iceberg(#[from] alluvium_iceberg::IcebergError),
    /// Arrow failure.
    #[error("arrow: {0}")]
    Arrow(#[source] arrow_schema::ArrowError),
    /// The writer's input source failed (a fallible batch stream, see
    /// [`IntoBatch`](crate::IntoBatch)); nothing was committed and the files already
    /// written were deleted.
    #[error("reading the input failed: {0}")]
    Input(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// Parquet failure while writing output.
    #[error("parquet: {0}")]
    Parquet(#[from] parquet::errors::ParquetError),
    /// An invalid argument.
    #[error("{0}")]
    InvalidArgument(String),
    /// Data does not match the table schema.
    #[error("schema mismatch: {0}")]
    SchemaMismatch(String),
    /// A data file written elsewhere was refused by
    /// [`Table::commit_files`](crate::Table::commit_files) (or
    /// [`Transaction::add_written_files`](crate::Transaction::add_written_files)); nothing
    /// was committed and no file was deleted.
    #[error("cannot commit data file {path}: {reason}; nothing was committed")]
    FileRefused {
        /// The add's path, as given.
        path: String,
        /// Why.
        reason: FileRefusal,
    },
    /// Input rows name one column twice (`id,id`, or `id,ID`: column names are
    /// case-insensitive); only one could be written, so the input is refused whole.
    #[error(
        "the input has two columns named `{column}` (the other is `{first}`; column names are case-insensitive): rename or drop one"
    )]
    DuplicateColumn {
        /// The second column of the name, as the input spells it (`a.b` inside a struct).
        column: String,
        /// The first, as the input spells it.
        first: String,
    },
    /// A MERGE would update or delete a target row that several source rows match, which
    /// is ambiguous (Delta's rule); nothing was committed.
    #[error(
        "MERGE: several source rows match the target row {row} (in {file}) that a clause would update or delete; make the source unique on the ON keys"
    )]
    MergeCardinalityViolation {
        /// The target data file.
        file: String,
        /// The target row's ON key values, rendered `{key: value, ...}` (every column
        /// read when ON has no equality key).
        row: String,
    },
    /// Row ids or row commit versions were asked of a table version on which row tracking
    /// is not enabled (PROTOCOL.md "Row Tracking": only then are they reliable).
    #[error(
        "row tracking is not enabled at version {version} (needs the rowTracking writer feature and delta.enableRowTracking=true): {reason}"
    )]
    RowTrackingNotEnabled {
        /// The table version.
        version: u64,
        /// What asked for row ids.
        reason: String,
    },
    /// A written row violates a CHECK constraint or a column invariant (PROTOCOL.md
    /// "CHECK Constraints", "Column Invariants"); nothing was committed.
    #[error(
        "constraint {constraint} ({expression}) is violated by row {row}; nothing was committed"
    )]
    ConstraintViolation {
        /// The constraint's name (`delta.constraints.<name>`), or `invariant on <column>`.
        constraint: String,
        /// Its expression.
        expression: String,
        /// The first violating row, rendered `{col: value, ...}`.
        row: String,
    },
    /// A written row holds NULL in a NOT NULL column (nested struct fields included);
    /// nothing was committed.
    #[error("NOT NULL column `{column}` is NULL in row {row}; nothing was committed")]
    NotNullViolation {
        /// The (dotted) column.
        column: String,
        /// The first violating row.
        row: String,
    },
    /// A written row provides a generated column with a value other than its generation
    /// expression's (PROTOCOL.md "Generated Columns"); nothing was committed.
    #[error(
        "generated column `{column}` (GENERATED ALWAYS AS {expression}) does not match its expression in row {row}; nothing was committed"
    )]
    GeneratedColumnMismatch {
        /// The generated column.
        column: String,
        /// Its generation expression.
        expression: String,
        /// The first mismatching row.
        row: String,
    },
    /// An identity column rule is broken: a `GENERATED ALWAYS` column given values, an
    /// identity column assigned by UPDATE/MERGE, a generated value that overflows.
    #[error("identity column `{column}`: {reason}")]
    IdentityColumnViolation {
        /// The identity column.
        column: String,
        /// What was wrong.
        reason: String,
    },
    /// Change data feed: a version of the range did not record its changes
    /// (`delta.enableChangeDataFeed` was not true in the metadata in force there: off at the
    /// start, or turned off inside the range). Delta: `DELTA_MISSING_CHANGE_DATA`.
    #[error(
        "change data was not recorded for version {version} (delta.enableChangeDataFeed is not true there), so the changes of versions {start} to {end} cannot be read{}",
        recorded_from.map_or_else(
            || "; no version of the range has it through to the end".to_string(),
            |v| format!("; it is recorded from version {v} on")
        )
    )]
    ChangeDataNotRecorded {
        /// The first version of the range without change data.
        version: u64,
        /// The first version asked for.
        start: u64,
        /// The last version asked for.
        end: u64,
        /// The first version from which every version through `end` has change data
        /// (`None` when the last version of the range has none): where a read can start.
        recorded_from: Option<u64>,
    },
    /// Change data feed: a version of the range cannot be read any more (log cleanup removed
    /// its commit file) or its table state cannot be reconstructed.
    #[error(
        "cannot read the changes of versions {start} to {end}: version {version} is not available: {reason}"
    )]
    ChangeDataVersionUnavailable {
        /// The unavailable version.
        version: u64,
        /// The first version asked for.
        start: u64,
        /// The last version asked for.
        end: u64,
        /// Why.
        reason: String,
    },
    /// Change data feed: the start version is after the latest version of the table.
    /// Delta: `DELTA_CDC_START_VERSION_AFTER_LATEST_VERSION`.
    #[error("the start version {start} of the change range is after the latest version {latest}")]
    ChangeDataStartAfterLatest {
        /// The start version asked for.
        start: u64,
        /// The latest version of the table.
        latest: u64,
    },
    /// Change data feed: the start of the range is after its end.
    /// Delta: `DELTA_INVALID_CDC_RANGE`.
    #[error("invalid change range: start version {start} is after end version {end}")]
    ChangeDataInvalidRange {
        /// The resolved start version.
        start: u64,
        /// The resolved end version.
        end: u64,
    },
    /// Change data feed: a timestamp bound of the range names no version (a start after the
    /// latest commit, an end before the earliest). Delta:
    /// `DELTA_TIMESTAMP_GREATER_THAN_COMMIT` / `DELTA_TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION`.
    #[error("no version for the change-range timestamp {timestamp_ms} ms: {reason}")]
    ChangeDataTimestampOutOfRange {
        /// The timestamp asked for (milliseconds since the epoch).
        timestamp_ms: i64,
        /// Why no version matches.
        reason: String,
    },
    /// Change data feed: the schema changed inside the range in a way the end version's
    /// schema cannot read older change rows as (not additive). Delta:
    /// `DELTA_CHANGE_DATA_FEED_INCOMPATIBLE_SCHEMA_CHANGE`.
    #[error("cannot read changes across the schema change at version {version}: {reason}")]
    ChangeDataIncompatibleSchema {
        /// A version whose schema is incompatible with the end version's.
        version: u64,
        /// What changed.
        reason: String,
    },
    /// RESTORE needs files that no longer exist (VACUUM, or someone else, deleted them):
    /// the data files, or the deletion vectors of data files, of the target version that
    /// are not live now. Nothing was committed.
    #[error(
        "cannot restore version {version}: {} file(s) it needs no longer exist (vacuumed?): {}",
        files.len(),
        files.join(", ")
    )]
    RestoreFilesMissing {
        /// The version to restore.
        version: u64,
        /// What is missing (at most the first 100, in path order).
        files: Vec<String>,
    },
    /// Local I/O outside the table (output files).
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

/// What kind of failure an [`Error`] is, whichever layer raised it: the flat classification
/// an embedder acts on. New kinds may be added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// What was asked for does not exist: no table at the location, a version or timestamp
    /// outside the table's history, a missing object.
    NotFound,
    /// What was to be created exists already (a table, an object).
    AlreadyExists,
    /// A concurrent commit conflicts with the operation; nothing was committed. See
    /// [`Error::conflict_kind`] and [`Error::is_retryable`].
    Conflict,
    /// The commit loop ran out of its retry time budget under contention, or the handle's
    /// group-commit queue was full ([`GroupCommitOptions::when_full`](crate::GroupCommitOptions));
    /// nothing was committed and running the operation again is safe.
    Contention,
    /// Whether the commit landed could not be determined: read the table (the commit's
    /// `txnId`) before retrying.
    CommitOutcomeUnknown,
    /// The table needs a protocol version or feature alluvium does not implement, or the
    /// store lacks a capability the operation needs.
    Unsupported,
    /// The table's files are damaged or violate the protocol (malformed commits, corrupt
    /// checkpoints or deletion vectors, unreadable data files, paths escaping the table).
    Corrupt,
    /// The caller's input is invalid: an argument, a predicate, a schema, data that does not
    /// match the table, a storage option.
    InvalidInput,
    /// The table's properties or state forbid the operation (an append-only table, a VACUUM
    /// retention below the table's).
    Refused,
    /// Storage or local I/O failed (timeouts, permissions, a full disk).
    Io,
    /// The caller interrupted a long operation (an OPTIMIZE's `interrupt` flag); what it
    /// committed before stopping stays, nothing partial was committed.
    Interrupted,
    /// Anything else (Arrow or Parquet failures).
    Other,
}

/// The innermost error of a wrapped chain, typed.
enum Cause<'a> {
    Storage(&'a StorageError),
    Log(&'a LogError),
    Mvcc(&'a MvccError),
    Maintenance(&'a MaintenanceError),
    Expr(&'a ExprError),
    DataFile(&'a alluvium_datafile::DataFileError),
    Iceberg(&'a alluvium_iceberg::IcebergError),
    Facade(&'a Error),
}

fn iceberg_cause(e: &alluvium_iceberg::IcebergError) -> Cause<'_> {
    use alluvium_iceberg::IcebergError as I;
    match e {
        I::Storage(s) => Cause::Storage(s),
        I::Log(l) => log_cause(l),
        I::Snapshot(m) => mvcc_cause(m),
        other => Cause::Iceberg(other),
    }
}

fn datafile_cause(e: &alluvium_datafile::DataFileError) -> Cause<'_> {
    use alluvium_datafile::DataFileError as D;
    match e {
        D::Log(l) => log_cause(l),
        D::Storage(s) => Cause::Storage(s),
        D::Expr(x) => expr_cause(x),
        other => Cause::DataFile(other),
    }
}

fn log_cause(e: &LogError) -> Cause<'_> {
    match e {
        LogError::Storage(s) => Cause::Storage(s),
        other => Cause::Log(other),
    }
}

fn expr_cause(e: &ExprError) -> Cause<'_> {
    match e {
        ExprError::Log(l) => log_cause(l),
        other => Cause::Expr(other),
    }
}

fn mvcc_cause(e: &MvccError) -> Cause<'_> {
    match e {
        MvccError::Log(l) => log_cause(l),
        other => Cause::Mvcc(other),
    }
}

fn maintenance_cause(e: &MaintenanceError) -> Cause<'_> {
    match e {
        MaintenanceError::Log(l) => log_cause(l),
        MaintenanceError::Mvcc(m) => mvcc_cause(m),
        MaintenanceError::Expr(x) => expr_cause(x),
        // OPTIMIZE's rewrite reads and writes data files.
        MaintenanceError::Rewrite(inner) => datafile_cause(inner),
        other => Cause::Maintenance(other),
    }
}

impl Error {
    fn cause(&self) -> Cause<'_> {
        match self {
            Error::Mvcc(m) => mvcc_cause(m),
            Error::Log(l) => log_cause(l),
            Error::Maintenance(m) => maintenance_cause(m),
            Error::Expr(x) => expr_cause(x),
            Error::Storage(s) => Cause::Storage(s),
            Error::Iceberg(i) => iceberg_cause(i),
            other => Cause::Facade(other),
        }
    }

    /// What kind of failure this is, looking through the layers that wrapped it.
    pub fn kind(&self) -> ErrorKind {
        match self.cause() {
            Cause::Storage(e) => storage_kind(e),
            Cause::Log(e) => log_kind(e),
            Cause::Mvcc(e) => match e {
                MvccError::Conflict { .. } => ErrorKind::Conflict,
                MvccError::TableAlreadyExists { .. } => ErrorKind::AlreadyExists,
                MvccError::CommitOutcomeUnknown { .. } => ErrorKind::CommitOutcomeUnknown,
                MvccError::CommitWriteFailed { .. } => ErrorKind::Io,
                MvccError::RetryBudgetExhausted { .. } | MvccError::Busy { .. } => {
                    ErrorKind::Contention
                }
                MvccError::InvalidOperation(_) => ErrorKind::Refused,
                MvccError::ReservedColumn { .. } | MvccError::InvalidVersionSpec { .. } => {
                    ErrorKind::InvalidInput
                }
                MvccError::StorageCapabilityMissing { .. } => ErrorKind::Unsupported,
                _ => ErrorKind::Other,
            },
            Cause::Expr(e) => match e {
                // A kernel failure is no fault of the expression.
                ExprError::Arrow(_) => ErrorKind::Other,
                _ => ErrorKind::InvalidInput,
            },
            Cause::Maintenance(e) => match e {
                MaintenanceError::Refused(_) | MaintenanceError::RetentionTooShort { .. } => {
                    ErrorKind::Refused
                }
                MaintenanceError::Interrupted { .. } => ErrorKind::Interrupted,
                _ => ErrorKind::Other,
            },
            Cause::Iceberg(e) => match e {
                alluvium_iceberg::IcebergError::UnsupportedType { .. }
                | alluvium_iceberg::IcebergError::UnsupportedTypeChange { .. } => {
                    ErrorKind::Unsupported
                }
                alluvium_iceberg::IcebergError::CorruptMetadata { .. }
                | alluvium_iceberg::IcebergError::Convert { .. } => ErrorKind::Corrupt,
                alluvium_iceberg::IcebergError::Contended { .. } => ErrorKind::Contention,
                _ => ErrorKind::Other,
            },
            Cause::DataFile(e) => match e {
                alluvium_datafile::DataFileError::Parquet(_) => ErrorKind::Corrupt,
                alluvium_datafile::DataFileError::InvalidArgument(_) => ErrorKind::InvalidInput,
                _ => ErrorKind::Other,
            },
            Cause::Facade(e) => match e {
                Error::InvalidArgument(_)
                | Error::SchemaMismatch(_)
                | Error::FileRefused { .. }
                | Error::DuplicateColumn { .. }
                | Error::MergeCardinalityViolation { .. }
                | Error::ConstraintViolation { .. }
                | Error::NotNullViolation { .. }
                | Error::GeneratedColumnMismatch { .. }
                | Error::IdentityColumnViolation { .. }
                | Error::Input(_) => ErrorKind::InvalidInput,
                Error::ChangeDataInvalidRange { .. } => ErrorKind::InvalidInput,
                Error::ChangeDataVersionUnavailable { .. }
                | Error::RestoreFilesMissing { .. }
                | Error::ChangeDataStartAfterLatest { .. }
                | Error::ChangeDataTimestampOutOfRange { .. } => ErrorKind::NotFound,
                Error::ChangeDataNotRecorded { .. }
                | Error::ChangeDataIncompatibleSchema { .. }
                | Error::RowTrackingNotEnabled { .. } => ErrorKind::Refused,
                Error::Io { .. } => ErrorKind::Io,
                _ => ErrorKind::Other,
            },
        }
    }

    /// Whether running the whole operation again, from a fresh snapshot, is safe and may
    /// succeed: a conflict whose kind allows it ([`ConflictKind::is_retryable`]: not a
    /// metadata or protocol change), or an exhausted retry budget. False for everything
    /// else, including an unknown commit outcome (read the table first).
    pub fn is_retryable(&self) -> bool {
        match self.cause() {
            Cause::Mvcc(e) => e.is_retryable(),
            _ => false,
        }
    }

    /// The kind of write conflict, if this is one (whichever operation raised it: a write,
    /// a transaction, OPTIMIZE).
    pub fn conflict_kind(&self) -> Option<ConflictKind> {
        match self.cause() {
            Cause::Mvcc(e) => e.conflict_kind(),
            _ => None,
        }
    }

    /// True when what was asked for does not exist ([`ErrorKind::NotFound`]).
    pub fn is_not_found(&self) -> bool {
        self.kind() == ErrorKind::NotFound
    }

    /// The underlying expression error, if any (looking through the layers that wrapped
    /// it): a filter, assignment, clause or column rule that does not parse, bind or
    /// evaluate. For a syntax error, [`ExprError::pointer`] shows where.
    pub fn as_expr_error(&self) -> Option<&ExprError> {
        match self.cause() {
            Cause::Expr(e) => Some(e),
            _ => None,
        }
    }

    /// The underlying log error, if any (looking through the mvcc and maintenance
    /// wrappers).
    pub fn as_log_error(&self) -> Option<&LogError> {
        match self {
            Error::Log(e)
            | Error::Mvcc(MvccError::Log(e))
            | Error::Maintenance(MaintenanceError::Log(e))
            | Error::Maintenance(MaintenanceError::Mvcc(MvccError::Log(e))) => Some(e),
            _ => None,
        }
    }
}

/// An Arrow error is [`Error::Arrow`], unless it carries an alluvium error (an
/// `ArrowError::ExternalError` made by an Arrow reader over alluvium, such as
/// [`ScanBatches`](crate::ScanBatches)): that error comes back as itself.
impl From<arrow_schema::ArrowError> for Error {
    fn from(e: arrow_schema::ArrowError) -> Self {
        match e {
            arrow_schema::ArrowError::ExternalError(inner) => match inner.downcast::<Error>() {
                Ok(own) => *own,
                Err(other) => Error::Arrow(arrow_schema::ArrowError::ExternalError(other)),
            },
            other => Error::Arrow(other),
        }
    }
}

impl From<Error> for arrow_schema::ArrowError {
    /// For Arrow interfaces (`RecordBatchReader`): an [`Error::Arrow`] is unwrapped, any
    /// other error travels as `ExternalError` and converts back with `Error::from`.
    fn from(e: Error) -> Self {
        match e {
            Error::Arrow(a) => a,
            other => arrow_schema::ArrowError::ExternalError(Box::new(other)),
        }
    }
}

/// Data-file errors map onto the facade's own variants, so callers match them as before the
/// data-file layer had its own crate.
impl From<alluvium_datafile::DataFileError> for Error {
    fn from(e: alluvium_datafile::DataFileError) -> Self {
        use alluvium_datafile::DataFileError as D;
        match e {
            D::Log(e) => Error::Log(e),
            D::Expr(e) => Error::Expr(e),
            D::Storage(e) => Error::Storage(e),
            D::Arrow(e) => Error::Arrow(e),
            D::Parquet(e) => Error::Parquet(e),
            D::InvalidArgument(m) => Error::InvalidArgument(m),
            // The enum is non-exhaustive: a future variant keeps its message.
            other => Error::InvalidArgument(other.to_string()),
        }
    }
}

fn storage_kind(e: &StorageError) -> ErrorKind {
    match e {
        StorageError::NotFound { .. } => ErrorKind::NotFound,
        StorageError::AlreadyExists { .. } => ErrorKind::AlreadyExists,
        // Paths come from the log: one escaping the table or naming a device is a hostile
        // or damaged table, as is an object over the size allowed for it.
        StorageError::InvalidPath { .. }
        | StorageError::NotAFile { .. }
        | StorageError::TooLarge { .. } => ErrorKind::Corrupt,
        StorageError::InvalidConfig(_) => ErrorKind::InvalidInput,
        StorageError::Unsupported { .. } => ErrorKind::Unsupported,
        StorageError::Io { .. } => ErrorKind::Io,
        _ => ErrorKind::Other,
    }
}

fn log_kind(e: &LogError) -> ErrorKind {
    match e {
        LogError::Storage(s) => storage_kind(s),
        LogError::TableNotFound { .. }
        | LogError::VersionNotFound { .. }
        | LogError::TimestampOutOfRange { .. } => ErrorKind::NotFound,
        LogError::NonContiguousLog { .. }
        | LogError::MalformedCommit { .. }
        | LogError::IncompleteCompaction { .. }
        | LogError::CorruptCheckpoint { .. }
        | LogError::MissingAction { .. }
        | LogError::InvalidAction { .. }
        | LogError::InvalidPartitionValue { .. }
        | LogError::CorruptDeletionVector { .. }
        | LogError::DataFile { .. } => ErrorKind::Corrupt,
        LogError::UnsupportedProtocolVersion { .. } | LogError::UnsupportedFeature { .. } => {
            ErrorKind::Unsupported
        }
        LogError::InvalidSchema(_) | LogError::Invalid(_) => ErrorKind::InvalidInput,
        _ => ErrorKind::Other,
    }
}
/// Why an add, or a removal, was refused (see [`Error::FileRefused`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileRefusal {
    /// The path does not decode, or is not a valid path inside the table.
    InvalidPath(String),
    /// An absolute location outside the table root that no allowed location holds.
    OutsideTable,
    /// The partition values do not name the table's partition columns (physical names).
    PartitionColumns {
        /// The table's partition columns, as `partitionValues` must name them.
        expected: Vec<String>,
        /// What the add names.
        found: Vec<String>,
    },
    /// A partition value that is not a value of its column's type.
    PartitionValue {
        /// The column.
        column: String,
        /// Why the value does not parse.
        reason: String,
    },
    /// The statistics are not well formed (not a JSON object of the statistics' shape,
    /// negative or inconsistent counts, bounds that are not values of their column's type
    /// or a lower bound above the upper one).
    MalformedStats(String),
    /// The statistics name a column the table does not have.
    UnknownStatsColumn(String),
    /// The file is listed twice.
    DuplicatePath,
    /// The file is already live in the table.
    AlreadyLive,
    /// The add carries what only a commit may give a new file (a deletion vector, row ids)
    /// or what a new file cannot be (`dataChange=false`, a negative size).
    NotANewFile(String),
    /// The add's partition values do not satisfy the predicate of the partitions an
    /// overwrite replaces (the predicate's text): its rows would outlive the overwrite
    /// they were written for.
    OutsideReplacedPartitions(String),
    /// A file asked to be removed is not live in the version committed on.
    NotLive,
}

impl std::fmt::Display for FileRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FileRefusal::InvalidPath(why) => write!(f, "invalid path: {why}"),
            FileRefusal::OutsideTable => {
                f.write_str("the file is outside the table root and under no allowed location")
            }
            FileRefusal::PartitionColumns { expected, found } => write!(
                f,
                "partition values name {found:?}, the table's partition columns are {expected:?}"
            ),
            FileRefusal::PartitionValue { column, reason } => {
                write!(f, "partition value of {column}: {reason}")
            }
            FileRefusal::MalformedStats(why) => write!(f, "malformed statistics: {why}"),
            FileRefusal::UnknownStatsColumn(c) => {
                write!(
                    f,
                    "statistics name column {c}, which the table does not have"
                )
            }
            FileRefusal::DuplicatePath => f.write_str("the file is listed twice"),
            FileRefusal::AlreadyLive => f.write_str("the file is already in the table"),
            FileRefusal::NotANewFile(why) => write!(f, "not a new data file: {why}"),
            FileRefusal::OutsideReplacedPartitions(predicate) => write!(
                f,
                "its partition values do not satisfy {predicate}, the partitions the overwrite replaces"
            ),
            FileRefusal::NotLive => {
                f.write_str("the file to remove is not in the table's latest version")
            }
        }
    }
}
