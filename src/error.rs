//! The facade error type: every lower layer's error, wrapped.

use alluvium_mvcc::MvccError;
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
    Maintenance(#[from] alluvium_compaction::MaintenanceError),
    /// Storage failure.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// Arrow failure.
    #[error("arrow: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),
    /// Parquet failure while writing output.
    #[error("parquet: {0}")]
    Parquet(#[from] parquet::errors::ParquetError),
    /// An invalid argument.
    #[error("{0}")]
    InvalidArgument(String),
    /// Data does not match the table schema.
    #[error("schema mismatch: {0}")]
    SchemaMismatch(String),
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

impl Error {
    /// The underlying log error, if any (looking through the mvcc wrapper).
    pub fn as_log_error(&self) -> Option<&LogError> {
        use alluvium_compaction::MaintenanceError;
        match self {
            Error::Log(e)
            | Error::Mvcc(MvccError::Log(e))
            | Error::Maintenance(MaintenanceError::Log(e))
            | Error::Maintenance(MaintenanceError::Mvcc(MvccError::Log(e))) => Some(e),
            _ => None,
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
            D::Storage(e) => Error::Storage(e),
            D::Arrow(e) => Error::Arrow(e),
            D::Parquet(e) => Error::Parquet(e),
            D::InvalidArgument(m) => Error::InvalidArgument(m),
            // The enum is non-exhaustive: a future variant keeps its message.
            other => Error::InvalidArgument(other.to_string()),
        }
    }
}
