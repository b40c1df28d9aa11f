//! The log error type. Every variant names the file, version or feature it concerns.

use alluvium_storage::StorageError;

/// Result alias for log operations.
pub type Result<T, E = LogError> = std::result::Result<T, E>;

/// Which side of the protocol a feature or version gate applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeatureSide {
    /// Needed to read the table.
    Reader,
    /// Needed to write the table.
    Writer,
}

impl std::fmt::Display for FeatureSide {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FeatureSide::Reader => "reader",
            FeatureSide::Writer => "writer",
        })
    }
}

/// A failure to read, interpret or write the transaction log.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LogError {
    /// A storage operation failed.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// There is no Delta table at the location (no `_delta_log` commits or checkpoints).
    #[error("no Delta table at {location}: _delta_log is missing or holds no commits")]
    TableNotFound {
        /// The table location.
        location: String,
    },
    /// The requested version does not exist or can no longer be reconstructed.
    #[error("version {version} of the table cannot be read: {reason}")]
    VersionNotFound {
        /// The version asked for.
        version: u64,
        /// Why (e.g. `the latest version is 12` or `the earliest readable version is 30`).
        reason: String,
    },
    /// No version of the table was committed at or before the requested timestamp.
    #[error("no version of the table at timestamp {timestamp_ms} ms: {reason}")]
    TimestampOutOfRange {
        /// The timestamp asked for (milliseconds since the epoch).
        timestamp_ms: i64,
        /// What the valid range is.
        reason: String,
    },
    /// The commits needed for a version are not contiguous.
    #[error(
        "the log is not contiguous: expected version {expected} after {}, found {}",
        after.map_or_else(|| "the start of the log".to_string(), |v| format!("version {v}")),
        found.map_or_else(|| "the end of the log".to_string(), |v| format!("version {v}"))
    )]
    NonContiguousLog {
        /// The version before the gap (`None`: the start of the log).
        after: Option<u64>,
        /// The version that should have followed.
        expected: u64,
        /// The version found instead (`None`: the log ends before it).
        found: Option<u64>,
    },
    /// A commit (or JSON checkpoint) could not be parsed.
    #[error("malformed log file {path} at line {line}: {reason}")]
    MalformedCommit {
        /// The file.
        path: String,
        /// The 1-based line of the error.
        line: usize,
        /// What was wrong.
        reason: String,
    },
    /// A log compaction file cannot stand for the commits it covers: it is empty or misses
    /// actions any whole compaction of its range holds. Readers fall back to the commits.
    #[error("log compaction {path} is not whole: {reason}")]
    IncompleteCompaction {
        /// The `x.y.compacted.json` file.
        path: String,
        /// What is missing.
        reason: String,
    },
    /// A checkpoint or sidecar file is unreadable or inconsistent.
    #[error("corrupt checkpoint {path}: {reason}")]
    CorruptCheckpoint {
        /// The file.
        path: String,
        /// What was wrong.
        reason: String,
    },
    /// The log lacks a protocol or metaData action for this version.
    #[error("no {action} action found in the log up to version {version}")]
    MissingAction {
        /// `protocol` or `metaData`.
        action: &'static str,
        /// The version being reconstructed.
        version: u64,
    },
    /// An action violates the protocol.
    #[error("invalid {action} action in {path}: {reason}")]
    InvalidAction {
        /// The action kind.
        action: &'static str,
        /// The log file.
        path: String,
        /// What was wrong.
        reason: String,
    },
    /// The table requires a protocol version alluvium does not implement.
    #[error("unsupported {side} protocol version {version} (alluvium supports up to {supported})")]
    UnsupportedProtocolVersion {
        /// Reader or writer.
        side: FeatureSide,
        /// The required version.
        version: i32,
        /// The highest supported version.
        supported: i32,
    },
    /// The table uses a feature alluvium does not implement on this side.
    #[error("unsupported {side} feature `{feature}`{}", detail.as_ref().map(|d| format!(": {d}")).unwrap_or_default())]
    UnsupportedFeature {
        /// Reader or writer.
        side: FeatureSide,
        /// The Delta feature name.
        feature: String,
        /// More context, if any.
        detail: Option<String>,
    },
    /// The table schema is invalid or uses an unsupported type.
    #[error("invalid schema: {0}")]
    InvalidSchema(String),
    /// New data files cannot be written under this schema (PROTOCOL.md "Void Type": a
    /// `void` inside an array or map, a struct of only `void` fields, only `void` columns).
    #[error("cannot write data files: column `{column}`: {reason}")]
    UnwritableSchema {
        /// The offending column (dotted path).
        column: String,
        /// Why.
        reason: String,
    },
    /// A partition value cannot be parsed as its column's type.
    #[error("invalid partition value {value:?} for column `{column}`: {reason}")]
    InvalidPartitionValue {
        /// The partition column.
        column: String,
        /// The value as written.
        value: String,
        /// What was wrong.
        reason: String,
    },
    /// A deletion vector is unreadable, corrupt or inconsistent with its descriptor.
    #[error("corrupt deletion vector {location}: {reason}")]
    CorruptDeletionVector {
        /// The DV file or `inline`.
        location: String,
        /// What was wrong.
        reason: String,
    },
    /// A data file is unreadable or does not match the table schema.
    #[error("data file {path}: {reason}")]
    DataFile {
        /// The file.
        path: String,
        /// What was wrong.
        reason: String,
    },
    /// An Arrow operation failed.
    #[error("arrow: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),
    /// A value or argument is invalid.
    #[error("{0}")]
    Invalid(String),
}

impl LogError {
    pub(crate) fn corrupt_checkpoint(path: impl Into<String>, reason: impl ToString) -> Self {
        LogError::CorruptCheckpoint {
            path: path.into(),
            reason: reason.to_string(),
        }
    }

    /// A [`LogError::DataFile`] error.
    pub fn data_file(path: impl Into<String>, reason: impl ToString) -> Self {
        LogError::DataFile {
            path: path.into(),
            reason: reason.to_string(),
        }
    }

    /// True if the error is a missing object in storage.
    pub fn is_not_found(&self) -> bool {
        matches!(self, LogError::Storage(e) if e.is_not_found())
    }
}
