//! The state store's errors: its own failures (schemas a store cannot be made of, events
//! that break its rules, locations that hold no store), each naming the column, row, key or
//! location at fault, and the failures of the tables underneath (storage, commits, MERGE),
//! wrapped whole as [`StateError::Table`] with their [`ErrorKind`].

use alluvium::{ConflictKind, ErrorKind};

/// Result alias of the state store.
pub type Result<T, E = StateError> = std::result::Result<T, E>;

/// A state-store failure. [`kind`](Self::kind) classifies it as alluvium's errors are
/// classified.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StateError {
    /// `create` was given no key column.
    #[error("a state store needs at least one key column")]
    NoKeyColumns,
    /// A key column is not in the value schema.
    #[error("key column `{column}` is not in the schema")]
    MissingKeyColumn {
        /// The key column named.
        column: String,
    },
    /// A key column is listed twice (names are case-insensitive).
    #[error("key column `{column}` is listed twice")]
    DuplicateKeyColumn {
        /// The key column named.
        column: String,
    },
    /// A key column has a type keys cannot have (nested, binary, floating point).
    #[error(
        "key column `{column}` has type {data_type}; keys must be of a primitive, non-floating-point type"
    )]
    KeyColumnType {
        /// The key column.
        column: String,
        /// Its type.
        data_type: String,
    },
    /// A column of the schema uses a name the store reserves.
    #[error("column `{column}` is reserved by the state store: {reason}")]
    ReservedColumn {
        /// The column.
        column: String,
        /// What the name is used for.
        reason: String,
    },
    /// The schema has no value column besides the keys.
    #[error("a state store needs at least one value column besides the key columns")]
    NoValueColumns,
    /// A batch given to `put`, `get` or `history` lacks a column it must have.
    #[error("{operation}: the batch has no column `{column}`")]
    MissingColumn {
        /// `put`, `get` or `history`.
        operation: &'static str,
        /// The missing column.
        column: String,
    },
    /// A batch column has a type that cannot be converted to the store's.
    #[error("{operation}: column `{column}` has type {found}, the store's is {expected}")]
    ColumnType {
        /// `put`, `get` or `history`.
        operation: &'static str,
        /// The column.
        column: String,
        /// The store's type.
        expected: String,
        /// The batch's type.
        found: String,
    },
    /// A NULL where the store needs a value (a key column, `event_time`).
    #[error("{operation}: column `{column}` is NULL at row {row}; it must not be")]
    NullValue {
        /// `put`, `get` or `history`.
        operation: &'static str,
        /// The column.
        column: String,
        /// The row of the batch (0-based).
        row: usize,
    },
    /// An `op` that is neither `UPSERT` nor `DELETE`.
    #[error("put: `op` is `{value}` at row {row}; it must be UPSERT or DELETE")]
    InvalidOp {
        /// The value given.
        value: String,
        /// The row of the batch (0-based).
        row: usize,
    },
    /// A batch column the store does not have.
    #[error("{operation}: the store has no column `{column}`")]
    UnknownColumn {
        /// `put`, `get` or `history`.
        operation: &'static str,
        /// The column.
        column: String,
    },
    /// `history` was given other than one key.
    #[error("history: expected one key row, got {rows}")]
    NotOneKey {
        /// Rows given.
        rows: usize,
    },
    /// The location holds no state store (or not a whole one).
    #[error("{location} is not a state store: {reason}")]
    NotAStore {
        /// The store location (or table) looked at.
        location: String,
        /// What is missing or inconsistent.
        reason: String,
    },
    /// A log commit the fold needs cannot be read any more (log cleanup removed it before
    /// it was synced).
    #[error("log version {version} cannot be read to sync it: {reason}")]
    LogVersionUnavailable {
        /// The log version.
        version: u64,
        /// Why.
        reason: String,
    },
    /// Two syncs kept racing: the chunk was retried the configured number of times.
    #[error("sync gave up after {attempts} conflicting attempts at log version {version}")]
    TooManyConflicts {
        /// Attempts made.
        attempts: u32,
        /// The first log version of the chunk.
        version: u64,
    },
    /// A failure of the tables underneath (storage, the log, a commit, a MERGE, Arrow or
    /// Parquet), as alluvium reported it.
    #[error(transparent)]
    Table(#[from] alluvium::Error),
}

impl StateError {
    /// What kind of failure this is: a wrapped table failure's own kind; for the store's
    /// own failures, [`ErrorKind::NotFound`] (no store, a cleaned-up log version),
    /// [`ErrorKind::Contention`] (syncs kept conflicting) or [`ErrorKind::InvalidInput`].
    pub fn kind(&self) -> ErrorKind {
        match self {
            StateError::Table(e) => e.kind(),
            StateError::NotAStore { .. } | StateError::LogVersionUnavailable { .. } => {
                ErrorKind::NotFound
            }
            StateError::TooManyConflicts { .. } => ErrorKind::Contention,
            _ => ErrorKind::InvalidInput,
        }
    }

    /// Whether running the operation again may succeed: a wrapped table failure that
    /// [`alluvium::Error::is_retryable`] says so of.
    pub fn is_retryable(&self) -> bool {
        self.as_table_error()
            .is_some_and(alluvium::Error::is_retryable)
    }

    /// The kind of write conflict, if this is a wrapped one.
    pub fn conflict_kind(&self) -> Option<ConflictKind> {
        self.as_table_error()
            .and_then(alluvium::Error::conflict_kind)
    }

    /// The wrapped table failure, if this is one.
    pub fn as_table_error(&self) -> Option<&alluvium::Error> {
        match self {
            StateError::Table(e) => Some(e),
            _ => None,
        }
    }
}

/// The lower failures the store's own code meets (reading Parquet footers, converting
/// rows, decoding commits) are wrapped as alluvium wraps them, so that each has one form
/// and one [`ErrorKind`].
macro_rules! through_alluvium {
    ($($t:ty),* $(,)?) => {$(
        impl From<$t> for StateError {
            fn from(e: $t) -> Self {
                StateError::Table(alluvium::Error::from(e))
            }
        }
    )*};
}

through_alluvium!(
    arrow_schema::ArrowError,
    parquet::errors::ParquetError,
    alluvium::LogError,
    alluvium::MvccError,
    alluvium::ExprError,
    alluvium::StorageError,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wrapped_table_error_keeps_its_kind_and_the_stores_own_have_theirs() {
        let conflict = StateError::from(alluvium::MvccError::Conflict {
            kind: ConflictKind::ConcurrentAppend,
            winning_version: 3,
            detail: "another sync".into(),
        });
        assert!(matches!(conflict, StateError::Table(_)));
        assert_eq!(conflict.kind(), ErrorKind::Conflict);
        assert!(conflict.is_retryable());
        assert_eq!(
            conflict.conflict_kind(),
            Some(ConflictKind::ConcurrentAppend)
        );
        // The message is the table's own, not wrapped in more words.
        assert_eq!(
            conflict.to_string(),
            conflict
                .as_table_error()
                .map(ToString::to_string)
                .unwrap_or_default()
        );

        let missing = StateError::NotAStore {
            location: "/x".into(),
            reason: "no state table".into(),
        };
        assert_eq!(missing.kind(), ErrorKind::NotFound);
        assert!(!missing.is_retryable());
        assert!(missing.as_table_error().is_none());
        let racing = StateError::TooManyConflicts {
            attempts: 64,
            version: 7,
        };
        assert_eq!(racing.kind(), ErrorKind::Contention);
        assert_eq!(StateError::NoKeyColumns.kind(), ErrorKind::InvalidInput);
    }
}
