//! What a commit did and cost.

use std::time::Duration;

use alluvium_storage::RequestCounts;
use alluvium_txlog::Version;

/// Returned to the caller of every successful commit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
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
    /// Data files added.
    pub files_added: usize,
    /// Data files removed.
    pub files_removed: usize,
    /// Bytes of the added files.
    pub bytes_added: u64,
    /// Bytes of the removed files (as the log recorded them).
    pub bytes_removed: u64,
    /// Time spent writing data files before the commit.
    pub write_data: Duration,
    /// Time spent reading winning commits and checking conflicts.
    pub conflict_check: Duration,
    /// Time spent in the commit loop (puts, read-backs, backoff).
    pub commit: Duration,
    /// The transaction's unique id (`commitInfo.txnId`).
    pub txn_id: String,
    /// The checkpoint written after this commit, or why it failed (post-commit hooks
    /// never fail the commit).
    pub checkpoint: Option<Result<Version, String>>,
    /// Storage requests made from the transaction's creation to the end of its commit (data
    /// files, the commit loop, read-backs), by kind, as the store counts them (HTTP requests
    /// on object stores; zeros on stores that do not count). The difference of two readings
    /// of the store's counters, so it includes other operations on the same store meanwhile.
    pub requests: RequestCounts,
    /// The OPTIMIZE commits auto-compaction made after this commit
    /// (`delta.autoOptimize.autoCompact`), or why it failed; `None` when it did not run.
    pub auto_compaction: Option<Result<Vec<Version>, String>>,
}

impl CommitReport {
    /// The report as one JSON object (for the CLI).
    pub fn to_json(&self) -> serde_json::Value {
        let ms = |d: Duration| (d.as_secs_f64() * 1e6).round() / 1e3;
        serde_json::json!({
            "version": self.version,
            "attempts": self.attempts,
            "winning_commits_checked": self.winning_commits,
            "resolved_by_read_back": self.resolved_by_read_back,
            "files_added": self.files_added,
            "files_removed": self.files_removed,
            "bytes_added": self.bytes_added,
            "bytes_removed": self.bytes_removed,
            "write_data_ms": ms(self.write_data),
            "conflict_check_ms": ms(self.conflict_check),
            "commit_ms": ms(self.commit),
            "txn_id": self.txn_id,
            "requests": {
                "list": self.requests.list,
                "get": self.requests.get,
                "head": self.requests.head,
                "put": self.requests.put,
                "delete": self.requests.delete,
            },
            "checkpoint": match &self.checkpoint {
                None => serde_json::Value::Null,
                Some(Ok(v)) => serde_json::json!({"version": v}),
                Some(Err(e)) => serde_json::json!({"error": e}),
            },
            "auto_compaction": match &self.auto_compaction {
                None => serde_json::Value::Null,
                Some(Ok(v)) => serde_json::json!({"versions": v}),
                Some(Err(e)) => serde_json::json!({"error": e}),
            },
        })
    }
}
