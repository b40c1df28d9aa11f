//! The maintenance error type.

use alluvium_mvcc::MvccError;
use alluvium_storage::StorageError;
use alluvium_txlog::LogError;

/// Result alias for maintenance operations.
pub type Result<T, E = MaintenanceError> = std::result::Result<T, E>;

/// A maintenance failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MaintenanceError {
    /// Reading or writing the log failed.
    #[error(transparent)]
    Log(#[from] LogError),
    /// A snapshot or commit failed.
    #[error(transparent)]
    Mvcc(#[from] MvccError),
    /// The request is refused (unsafe retention, protected checkpoints, ...).
    #[error("{0}")]
    Refused(String),
}

impl From<StorageError> for MaintenanceError {
    fn from(e: StorageError) -> Self {
        MaintenanceError::Log(LogError::Storage(e))
    }
}
