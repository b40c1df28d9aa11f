//! What the state store's operations report: plain structs the CLI prints as JSON.

use serde::Serialize;

/// What [`put`](super::StateStore::put) did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PutReport {
    /// Events given.
    pub events: u64,
    /// The log version committed (`None` when skipped or when there was nothing to write).
    pub log_version: Option<u64>,
    /// Data files written.
    pub files: u64,
    /// True when the idempotency marker showed the batch was already written.
    pub skipped: bool,
}

/// What [`sync`](super::StateStore::sync) did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SyncReport {
    /// The latest log version seen.
    pub log_version: u64,
    /// The first log version this call applied (`None`: nothing was due).
    pub synced_from: Option<u64>,
    /// The last log version applied to `state/` (by this call or before it).
    pub synced_through: Option<u64>,
    /// `state/`'s version after the call.
    pub state_version: Option<u64>,
    /// Chunks applied (one MERGE each).
    pub chunks: u64,
    /// Log events folded.
    pub events: u64,
    /// Distinct keys per chunk, summed.
    pub keys: u64,
    /// Keys inserted into `state/`.
    pub inserted: u64,
    /// Keys whose row was replaced by a newer UPSERT.
    pub updated: u64,
    /// Keys removed by a newer DELETE.
    pub deleted: u64,
    /// Tombstones written (keys whose latest chunk event was a DELETE).
    pub tombstones_written: u64,
    /// Chunks started again because another sync committed first.
    pub conflicts_retried: u64,
    /// OPTIMIZE runs of `state/` after chunks.
    pub compactions: u64,
    /// Failed OPTIMIZE runs (not fatal: the next sync tries again).
    pub compaction_errors: Vec<String>,
}

/// How far `state/` is behind the log ([`lag`](super::StateStore::lag)).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Lag {
    /// The latest log version.
    pub log_version: u64,
    /// The last log version applied to `state/` (`None`: none yet).
    pub synced_through: Option<u64>,
    /// Log versions not yet applied.
    pub versions: u64,
    /// Events in them (from the files' statistics; files without one are read).
    pub events: u64,
}

/// A store's versions and size ([`status`](super::StateStore::status)).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct StateStatus {
    /// The store location.
    pub location: String,
    /// The key columns.
    pub key_columns: Vec<String>,
    /// The latest version of `log/`.
    pub log_version: u64,
    /// The latest version of `state/`.
    pub state_version: u64,
    /// The latest version of `tombstones/`.
    pub tombstones_version: u64,
    /// What is not yet synced.
    pub lag: Lag,
    /// Live keys (rows of `state/`).
    pub keys: u64,
    /// Tombstones (rows of `tombstones/`).
    pub tombstones: u64,
    /// Data files of `state/`.
    pub state_files: u64,
    /// Data files of `log/`.
    pub log_files: u64,
}

/// What [`retain`](super::StateStore::retain) did (or would do, dry run).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct RetainReport {
    /// Log partitions (`event_date`, `YYYY-MM-DD`) older than this are dropped.
    pub cutoff_date: String,
    /// True when nothing was committed.
    pub dry_run: bool,
    /// Partitions whose every file was (or would be) removed.
    pub partitions_dropped: Vec<String>,
    /// Partitions kept, wholly or partly, because they hold events not yet synced.
    pub partitions_kept_unsynced: Vec<String>,
    /// Log files removed (or that would be).
    pub files_removed: u64,
    /// Events in them.
    pub events_removed: u64,
    /// The log version that removed them (`None`: dry run or nothing to remove).
    pub log_version: Option<u64>,
}
