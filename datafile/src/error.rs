//! The data-file error type: every failure reading, writing or rewriting data files.

use alluvium_expr::ExprError;
use alluvium_storage::StorageError;
use alluvium_txlog::LogError;

/// Result alias for data-file work.
pub type Result<T, E = DataFileError> = std::result::Result<T, E>;

/// A failure reading, writing or rewriting data files. Errors about one file name it
/// (through [`LogError::DataFile`] or [`LogError::CorruptDeletionVector`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DataFileError {
    /// The log's view of a file is wrong (a missing or unreadable data file, a corrupt
    /// deletion vector, a bad partition value).
    #[error(transparent)]
    Log(#[from] LogError),
    /// A filter is invalid or failed on a value.
    #[error(transparent)]
    Expr(#[from] ExprError),
    /// The store failed.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// An Arrow operation failed.
    #[error("arrow: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),
    /// Encoding Parquet failed.
    #[error("parquet: {0}")]
    Parquet(#[from] parquet::errors::ParquetError),
    /// An invalid argument or value (an unknown column, a value that cannot be read as its
    /// column's type, a malformed variant).
    #[error("{0}")]
    InvalidArgument(String),
}
