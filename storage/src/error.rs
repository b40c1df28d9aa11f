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
    /// The path names something other than a regular file (a FIFO, a device, a socket, a
    /// directory). It is never opened for reading: a FIFO would block the reader forever
    /// and a device such as `/dev/zero` never ends.
    #[error("not a regular file: {path} is a {kind}")]
    NotAFile {
        /// The path, as given.
        path: String,
        /// What it is instead (`fifo`, `directory`, `character device`, ...).
        kind: &'static str,
    },
    /// The object is larger than the caller's limit for it; it was not read.
    #[error("{path} is {size} bytes, more than the {limit} bytes allowed for it")]
    TooLarge {
        /// The object.
        path: String,
        /// Its size.
        size: u64,
        /// The limit it exceeds.
        limit: u64,
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

    /// Whether this error proves that the operation had no effect, so that a write that
    /// failed with it certainly did not create its object: the request was refused before
    /// anything was stored (no space, quota exceeded, permission denied, read-only
    /// filesystem), or never left the process (invalid path, unsupported operation, bad
    /// configuration). [`StorageError::AlreadyExists`] is not counted here: it proves
    /// someone's object is there, which callers settle by reading it.
    ///
    /// Everything else (timeouts, connection resets, `EIO`, unknown failures) leaves the
    /// outcome unknown: the object may exist, or may still appear. Backends make sure a
    /// definite-looking error raised after an object became visible is not reported with one
    /// of these kinds (the local store's directory fsync after the link, for one).
    pub fn is_definite(&self) -> bool {
        match self {
            StorageError::Io { source, .. } => is_definite_kind(source.kind()),
            StorageError::InvalidPath { .. }
            | StorageError::InvalidConfig(_)
            | StorageError::Unsupported { .. } => true,
            _ => false,
        }
    }

    /// The same error, reclassified as leaving the outcome unknown ([`Self::is_definite`]
    /// false): for failures that happened after the operation may already have taken effect.
    #[must_use]
    pub fn into_ambiguous(self) -> Self {
        match self {
            StorageError::Io { op, path, source } if is_definite_kind(source.kind()) => {
                StorageError::Io {
                    op,
                    path,
                    source: io::Error::other(format!("{source} (after the write took effect)")),
                }
            }
            other => other,
        }
    }
}

/// The I/O error kinds by which a store refuses a request without storing anything.
fn is_definite_kind(kind: io::ErrorKind) -> bool {
    matches!(
        kind,
        io::ErrorKind::StorageFull
            | io::ErrorKind::QuotaExceeded
            | io::ErrorKind::PermissionDenied
            | io::ErrorKind::ReadOnlyFilesystem
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io_err(kind: io::ErrorKind) -> StorageError {
        StorageError::io("write", "x", io::Error::from(kind))
    }

    #[test]
    fn only_refusals_that_prove_no_effect_are_definite() {
        for kind in [
            io::ErrorKind::StorageFull,
            io::ErrorKind::QuotaExceeded,
            io::ErrorKind::PermissionDenied,
            io::ErrorKind::ReadOnlyFilesystem,
        ] {
            let e = io_err(kind);
            assert!(e.is_definite(), "{kind:?}");
            assert!(
                !e.into_ambiguous().is_definite(),
                "{kind:?} after the effect"
            );
        }
        for kind in [
            io::ErrorKind::Other,
            io::ErrorKind::TimedOut,
            io::ErrorKind::ConnectionReset,
            io::ErrorKind::Interrupted,
            io::ErrorKind::NotFound,
        ] {
            assert!(!io_err(kind).is_definite(), "{kind:?}");
        }
        assert!(
            !StorageError::AlreadyExists { path: "x".into() }.is_definite(),
            "settled by reading back, not by giving up"
        );
        // From the OS error numbers a Linux filesystem reports: ENOSPC, EDQUOT, EACCES,
        // EPERM, EROFS; and EIO.
        if !cfg!(target_os = "linux") {
            return;
        }
        for errno in [28, 122, 13, 1, 30] {
            let e = StorageError::io("write", "x", io::Error::from_raw_os_error(errno));
            assert!(e.is_definite(), "errno {errno}");
        }
        let e = StorageError::io("write", "x", io::Error::from_raw_os_error(5));
        assert!(!e.is_definite(), "EIO leaves the outcome unknown");
    }
}
