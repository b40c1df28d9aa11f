//! The mvcc error type.

use alluvium_storage::StorageError;
use alluvium_txlog::LogError;

/// Result alias for mvcc operations.
pub type Result<T, E = MvccError> = std::result::Result<T, E>;

/// A failure to load a snapshot or to commit a transaction.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MvccError {
    /// Reading or interpreting the log failed.
    #[error(transparent)]
    Log(#[from] LogError),
}

impl From<StorageError> for MvccError {
    fn from(e: StorageError) -> Self {
        MvccError::Log(LogError::Storage(e))
    }
}
