//! The storage error type: every failure names the object it concerns.

use std::io;

/// Result alias for storage operations.
pub type Result<T, E = StorageError> = std::result::Result<T, E>;

/// A storage failure. Expected races (an object that already exists) are their own variant so
/// that callers never match on message text.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StorageError {
    /// The object does not exist.
    #[error("object not found: {path}")]
    NotFound {
        /// The path that was looked up.
        path: String,
    },
    /// `put_if_absent` lost: an object with this path already exists.
    #[error("object already exists: {path}")]
    AlreadyExists {
        /// The path that was written.
        path: String,
    },
    /// The path is not a valid table-relative path (it escapes the table root, is empty, or
    /// has empty/`.`/`..` segments). Such paths are never read, written or deleted.
    #[error("invalid path {path:?}: {reason}")]
    InvalidPath {
        /// The offending path, as given.
        path: String,
        /// Why it was refused.
        reason: &'static str,
    },
    /// An I/O error from the backend.
    #[error("{op} {path}: {source}")]
    Io {
        /// The operation that failed (`read`, `write`, `list`, ...).
        op: &'static str,
        /// The object or directory concerned.
        path: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// A store's configuration is invalid (an unknown option, a bad value, an unsupported
    /// URI).
    #[error("invalid storage configuration: {0}")]
    InvalidConfig(String),
    /// The backend cannot perform this operation.
    #[error("unsupported storage operation {op}: {reason}")]
    Unsupported {
        /// The operation requested.
        op: &'static str,
        /// Why it is not available.
        reason: String,
    },
}

impl StorageError {
    pub(crate) fn io(op: &'static str, path: impl Into<String>, source: io::Error) -> Self {
        StorageError::Io {
            op,
            path: path.into(),
            source,
        }
    }

    /// True for [`StorageError::NotFound`].
    pub fn is_not_found(&self) -> bool {
        matches!(self, StorageError::NotFound { .. })
    }

    /// True for [`StorageError::AlreadyExists`].
    pub fn is_already_exists(&self) -> bool {
        matches!(self, StorageError::AlreadyExists { .. })
    }
}
