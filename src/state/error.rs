//! The state store's own failures: schemas a store cannot be made of, events that break its
//! rules, and locations that hold no store. Every variant names the column, row, key or
//! location at fault. Lower-layer failures (storage, commits, MERGE) stay in
//! [`crate::Error`]'s other variants.

/// A state-store failure (wrapped as [`crate::Error::State`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
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
}
