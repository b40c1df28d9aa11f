//! The mvcc error type: log failures, and the outcomes of a commit that did not land.

use std::fmt;

use alluvium_storage::StorageError;
use alluvium_txlog::{LogError, Version};

/// Result alias for mvcc operations.
pub type Result<T, E = MvccError> = std::result::Result<T, E>;

/// The kinds of write conflict, named after Delta's (`ConcurrentAppendException`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConflictKind {
    /// A concurrent commit added files the transaction would have read.
    ConcurrentAppend,
    /// A concurrent commit removed a file the transaction read.
    ConcurrentDeleteRead,
    /// A concurrent commit removed a file the transaction also removes.
    ConcurrentDeleteDelete,
    /// A concurrent commit changed the table's metadata (schema, partitioning, properties).
    MetadataChanged,
    /// A concurrent commit changed the protocol.
    ProtocolChanged,
    /// A concurrent commit wrote the same application transaction or metadata domain.
    ConcurrentTransaction,
}

impl ConflictKind {
    /// Whether running the whole operation again, from a fresh snapshot, is safe. True for
    /// the data conflicts (the rerun sees the winner's data and, for idempotent writes, its
    /// application version); false when the table's metadata or protocol changed, where the
    /// operation itself may no longer be what the caller wants.
    pub fn is_retryable(&self) -> bool {
        !matches!(
            self,
            ConflictKind::MetadataChanged | ConflictKind::ProtocolChanged
        )
    }

    /// The Delta name.
    pub fn name(&self) -> &'static str {
        match self {
            ConflictKind::ConcurrentAppend => "ConcurrentAppend",
            ConflictKind::ConcurrentDeleteRead => "ConcurrentDeleteRead",
            ConflictKind::ConcurrentDeleteDelete => "ConcurrentDeleteDelete",
            ConflictKind::MetadataChanged => "MetadataChanged",
            ConflictKind::ProtocolChanged => "ProtocolChanged",
            ConflictKind::ConcurrentTransaction => "ConcurrentTransaction",
        }
    }
}

impl fmt::Display for ConflictKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A failure to load a snapshot or to commit a transaction.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MvccError {
    /// Reading or interpreting the log failed.
    #[error(transparent)]
    Log(#[from] LogError),
    /// A concurrent commit conflicts with the transaction; nothing was committed.
    #[error("{kind}: {detail} (conflicting commit: version {winning_version}; {})",
        if kind.is_retryable() { "safe to retry the operation on a fresh snapshot" } else { "re-plan before retrying" })]
    Conflict {
        /// What kind of conflict.
        kind: ConflictKind,
        /// The version of the commit it conflicts with.
        winning_version: Version,
        /// What collided.
        detail: String,
    },
    /// The table already exists (creating version 0 lost to another creator).
    #[error("a Delta table already exists at {location}")]
    TableAlreadyExists {
        /// The table location.
        location: String,
    },
    /// Whether the commit landed could not be determined: the commit file could not be
    /// written or read back. The transaction's data files are kept.
    #[error(
        "outcome of committing version {version} (txnId {txn_id}) is unknown: {reason}; read the table to find out before retrying"
    )]
    CommitOutcomeUnknown {
        /// The version attempted.
        version: Version,
        /// The transaction's commit id (`commitInfo.txnId`).
        txn_id: String,
        /// What failed.
        reason: String,
    },
    /// Writing the commit file failed with an error that proves nothing was written (no
    /// space, quota, permission denied, read-only filesystem: see
    /// [`StorageError::is_definite`]). Nothing was committed; the transaction's data files
    /// are deleted. Reported at once: retrying the same write cannot succeed.
    #[error("cannot write commit version {version}, nothing was committed: {source}")]
    CommitWriteFailed {
        /// The version attempted.
        version: Version,
        /// The store's refusal.
        #[source]
        source: StorageError,
    },
    /// The retry time budget ran out before the transaction could commit; nothing was
    /// committed.
    #[error(
        "gave up committing after {attempts} attempts in {elapsed_ms} ms of contention (retry budget exhausted); safe to retry"
    )]
    RetryBudgetExhausted {
        /// Attempts made.
        attempts: u32,
        /// Time spent.
        elapsed_ms: u64,
    },
    /// The operation is not allowed on this table (append-only, unsupported change, ...).
    #[error("{0}")]
    InvalidOperation(String),
    /// A version of a table given as text (`VersionSpec::from_str`) is neither `latest`, a
    /// version number nor a point in time.
    #[error("invalid version {text:?}: {reason}")]
    InvalidVersionSpec {
        /// The text as given.
        text: String,
        /// What was expected, or what is wrong.
        reason: &'static str,
    },
    /// A table with change data feed on (`delta.enableChangeDataFeed=true`) would have a
    /// column named like one a change-feed reader adds (`_change_type`, `_commit_version`,
    /// `_commit_timestamp`). Nothing was written.
    #[error(
        "column `{column}` is reserved on a table with change data feed (delta.enableChangeDataFeed=true): change rows carry a `{reserved}` column of their own; rename the column or leave change data feed off"
    )]
    ReservedColumn {
        /// The table's column.
        column: String,
        /// The reserved name it collides with.
        reserved: &'static str,
    },
    /// The store lacks a capability committing needs: put-if-absent, without which two
    /// writers could both take one version. Nothing was written. Either use a store that
    /// has it, or, if only one writer ever uses the table at a time, open the store in
    /// single-writer mode (`single_writer=true`).
    #[error(
        "{location} does not give {capability}, which concurrent writers need to commit safely; nothing was written (if only one writer uses this table at a time, open it in single-writer mode: option single_writer=true)"
    )]
    StorageCapabilityMissing {
        /// The missing capability (`put-if-absent`).
        capability: &'static str,
        /// The table location.
        location: String,
    },
    /// The group-commit queue of the table handle was full and the handle is set to refuse
    /// rather than wait ([`WhenFull::Busy`](crate::group::WhenFull::Busy)). Nothing was
    /// committed; the write's data files were deleted. Safe to retry.
    #[error(
        "the group-commit queue of this table handle is full ({capacity} writes waiting); nothing was committed; safe to retry"
    )]
    Busy {
        /// The queue's capacity, in writes.
        capacity: usize,
    },
}

impl MvccError {
    /// Whether running the operation again is safe.
    pub fn is_retryable(&self) -> bool {
        match self {
            MvccError::Conflict { kind, .. } => kind.is_retryable(),
            MvccError::RetryBudgetExhausted { .. } | MvccError::Busy { .. } => true,
            _ => false,
        }
    }

    /// The same error again, for each further member of a group commit that shares one
    /// outcome (SPEC.md §35). Every variant a commit returns is reproduced with the same
    /// fields, so that each member classifies it alike; the I/O errors inside a storage
    /// error keep their kind and message (`io::Error` cannot be cloned).
    pub fn duplicate(&self) -> MvccError {
        match self {
            MvccError::Log(e) => MvccError::Log(duplicate_log(e)),
            MvccError::Conflict {
                kind,
                winning_version,
                detail,
            } => MvccError::Conflict {
                kind: *kind,
                winning_version: *winning_version,
                detail: detail.clone(),
            },
            MvccError::TableAlreadyExists { location } => MvccError::TableAlreadyExists {
                location: location.clone(),
            },
            MvccError::CommitOutcomeUnknown {
                version,
                txn_id,
                reason,
            } => MvccError::CommitOutcomeUnknown {
                version: *version,
                txn_id: txn_id.clone(),
                reason: reason.clone(),
            },
            MvccError::CommitWriteFailed { version, source } => MvccError::CommitWriteFailed {
                version: *version,
                source: duplicate_storage(source),
            },
            MvccError::RetryBudgetExhausted {
                attempts,
                elapsed_ms,
            } => MvccError::RetryBudgetExhausted {
                attempts: *attempts,
                elapsed_ms: *elapsed_ms,
            },
            MvccError::InvalidOperation(m) => MvccError::InvalidOperation(m.clone()),
            MvccError::InvalidVersionSpec { text, reason } => MvccError::InvalidVersionSpec {
                text: text.clone(),
                reason,
            },
            MvccError::ReservedColumn { column, reserved } => MvccError::ReservedColumn {
                column: column.clone(),
                reserved,
            },
            MvccError::StorageCapabilityMissing {
                capability,
                location,
            } => MvccError::StorageCapabilityMissing {
                capability,
                location: location.clone(),
            },
            MvccError::Busy { capacity } => MvccError::Busy {
                capacity: *capacity,
            },
        }
    }

    /// The conflict kind, if this is a conflict.
    pub fn conflict_kind(&self) -> Option<ConflictKind> {
        match self {
            MvccError::Conflict { kind, .. } => Some(*kind),
            _ => None,
        }
    }
}

/// A storage error again (see [`MvccError::duplicate`]).
fn duplicate_storage(e: &StorageError) -> StorageError {
    match e {
        StorageError::NotFound { path } => StorageError::NotFound { path: path.clone() },
        StorageError::AlreadyExists { path } => StorageError::AlreadyExists { path: path.clone() },
        StorageError::InvalidPath { path, reason } => StorageError::InvalidPath {
            path: path.clone(),
            reason,
        },
        StorageError::Io { op, path, source } => StorageError::Io {
            op,
            path: path.clone(),
            source: std::io::Error::new(source.kind(), source.to_string()),
        },
        StorageError::InvalidConfig(m) => StorageError::InvalidConfig(m.clone()),
        StorageError::Unsupported { op, reason } => StorageError::Unsupported {
            op,
            reason: reason.clone(),
        },
        StorageError::NotAFile { path, kind } => StorageError::NotAFile {
            path: path.clone(),
            kind,
        },
        StorageError::TooLarge { path, size, limit } => StorageError::TooLarge {
            path: path.clone(),
            size: *size,
            limit: *limit,
        },
        // The storage error type may grow; a new kind keeps its message.
        other => StorageError::Io {
            op: "storage",
            path: String::new(),
            source: std::io::Error::other(other.to_string()),
        },
    }
}

/// A log error again (see [`MvccError::duplicate`]): storage failures keep their variant;
/// the log's own failures (a winner that does not decode, a row-tracking domain that does
/// not parse) keep their message as an invalid-action error of the same text.
fn duplicate_log(e: &LogError) -> LogError {
    match e {
        LogError::Storage(s) => LogError::Storage(duplicate_storage(s)),
        other => LogError::Invalid(other.to_string()),
    }
}

impl From<StorageError> for MvccError {
    fn from(e: StorageError) -> Self {
        MvccError::Log(LogError::Storage(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The layer below the CLI names the library option only: no environment variable, no
    /// CLI (the CLI adds its own hint when it prints the error).
    #[test]
    fn the_capability_message_names_no_upper_layer() {
        let text = MvccError::StorageCapabilityMissing {
            capability: "put-if-absent",
            location: "s3://b/t".into(),
        }
        .to_string();
        assert!(text.contains("single_writer=true"), "{text}");
        assert!(!text.contains("ALLUVIUM_STORAGE_OPTIONS"), "{text}");
        assert!(!text.contains("CLI"), "{text}");
    }
}
