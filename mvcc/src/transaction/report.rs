//! What a commit did and cost. Work after the commit (checkpoints, log cleanup,
//! compaction) belongs to the layers above, which report it alongside.

use std::time::Duration;

use alluvium_storage::RequestCounts;
use alluvium_txlog::Version;

/// Returned to the caller of every successful commit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CommitReport {
    /// The committed version.
    pub version: Version,
    /// Put attempts made (1 = no contention).
    pub attempts: u32,
    /// Versions of the concurrent commits read and checked for conflicts, in order.
    pub winning_commits: Vec<Version>,
    /// True when the outcome of a put was settled by reading the version back and finding
    /// our `txnId` (a lost response, or an `AlreadyExists` after a retried request).
    pub resolved_by_read_back: bool,
    /// New data files added. A file re-added under the same path with a new deletion
    /// vector (removed and added in this commit) is counted in neither this nor
    /// `files_removed`: it stays, and no data file was written for it.
    pub files_added: usize,
    /// Data files removed for good (not re-added by this commit).
    pub files_removed: usize,
    /// Bytes of the new data files.
    pub bytes_added: u64,
    /// Bytes of the files removed for good (as the log recorded them).
    pub bytes_removed: u64,
    /// Time spent writing data files before the commit.
    pub write_data: Duration,
    /// Time spent reading winning commits and checking conflicts.
    pub conflict_check: Duration,
    /// Time spent in the commit loop (puts, read-backs, backoff).
    pub commit: Duration,
    /// The commit's unique id (`commitInfo.txnId`): the transaction's own, or, for a write
    /// that shared a group commit, the group's (one `commitInfo` per version).
    pub txn_id: String,
    /// The writes this version holds: 1 for a commit of its own, the member count for a
    /// group commit (SPEC.md §35).
    pub group_members: usize,
    /// Storage requests made from the transaction's creation to the end of its commit (data
    /// files, the commit loop, read-backs), by kind, as the store counts them (HTTP requests
    /// on object stores; zeros on stores that do not count). The difference of two readings
    /// of the store's counters, so it includes other operations on the same store meanwhile.
    pub requests: RequestCounts,
    /// The commit's `commitInfo.operationMetrics` (Delta's names, values as strings).
    pub operation_metrics: std::collections::BTreeMap<String, String>,
}
