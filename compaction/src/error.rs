//! The maintenance error type.

use alluvium_datafile::DataFileError;
use alluvium_expr::ExprError;
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
    /// A filter (OPTIMIZE's partition filter) is invalid.
    #[error(transparent)]
    Expr(#[from] ExprError),
    /// A snapshot or commit failed.
    #[error(transparent)]
    Mvcc(#[from] MvccError),
    /// The request is refused (unsafe retention, protected checkpoints, ...).
    #[error("{0}")]
    Refused(String),
    /// Rewriting data files failed (OPTIMIZE); nothing of the failed commit group landed.
    #[error("rewriting data files failed: {0}")]
    Rewrite(#[from] DataFileError),
    /// The run was interrupted ([`OptimizeOptions::interrupt`](crate::OptimizeOptions)):
    /// it stopped between bins, deleted what the unfinished commit group wrote, and kept
    /// the groups already committed.
    #[error("interrupted; versions committed before the interrupt: {committed:?}")]
    Interrupted {
        /// The versions committed before the interrupt (each a complete group of bins).
        committed: Vec<alluvium_txlog::Version>,
    },
    /// VACUUM would use a retention shorter than the table's
    /// `delta.deletedFileRetentionDuration`; files that versions inside the table's window
    /// still reference could be deleted. Set `VacuumOptions::force` to do it anyway.
    #[error(
        "VACUUM retention of {requested_hours} hours is shorter than the table's deletedFileRetentionDuration ({minimum_hours} hours); VacuumOptions::force overrides it"
    )]
    RetentionTooShort {
        /// The retention asked for.
        requested_hours: f64,
        /// The table's retention.
        minimum_hours: f64,
    },
}

impl From<StorageError> for MaintenanceError {
    fn from(e: StorageError) -> Self {
        MaintenanceError::Log(LogError::Storage(e))
    }
}
