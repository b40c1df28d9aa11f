//! What a facade write or maintenance operation did: the commit report of the mvcc layer
//! plus the results of the post-commit work the facade runs after it (checkpoint, log
//! cleanup, auto-compaction). Post-commit work never fails the commit it follows; its
//! failures are reported here as typed errors instead.

use std::ops::Deref;
use std::sync::Arc;

use alluvium_compaction::{CleanupReport, OptimizeReport};
use alluvium_mvcc::CommitReport;
use alluvium_txlog::Version;

use crate::Error;

/// A post-commit step's result: `None` when it was not due, `Some(Err)` when it failed
/// (the commit stands; the next commit retries the step). The error is shared so that
/// reports stay cheap to clone.
pub type StepOutcome<T> = Option<std::result::Result<T, Arc<Error>>>;

/// Post-commit work after one commit: a checkpoint when `delta.checkpointInterval` says
/// so, then log cleanup when `delta.enableExpiredLogCleanup` is on, and the Iceberg
/// metadata sync when `alluvium.iceberg.sync` is on.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct PostCommit {
    /// The checkpoint written (its version), or why writing it failed.
    pub checkpoint: StepOutcome<Version>,
    /// The log cleanup that followed the checkpoint, or why it failed.
    pub log_cleanup: StepOutcome<CleanupReport>,
    /// The Iceberg metadata sync up to the commit (`alluvium.iceberg.sync=true`), or why it
    /// failed; `None` when the table does not ask for it (or, in an OPTIMIZE of several
    /// commits, on all but the last, whose sync covers them all).
    pub iceberg_sync: StepOutcome<alluvium_iceberg::SyncReport>,
}

/// Returned by every facade operation that commits one version (create, append,
/// overwrite, delete, [`Transaction::commit`](crate::Transaction::commit)). Dereferences
/// to the commit's [`CommitReport`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CommitSummary {
    /// The commit itself.
    pub commit: CommitReport,
    /// The checkpoint written after this commit, or why it failed.
    pub checkpoint: StepOutcome<Version>,
    /// The log cleanup after that checkpoint, or why it failed.
    pub log_cleanup: StepOutcome<CleanupReport>,
    /// The OPTIMIZE auto-compaction ran after this commit (`delta.autoOptimize.autoCompact`),
    /// or why it failed; `None` when it did not run.
    pub auto_compaction: StepOutcome<OptimizeSummary>,
    /// The Iceberg metadata sync after this commit (table property
    /// `alluvium.iceberg.sync=true`), or why it failed; `None` when the table does not ask
    /// for it. A failed sync never fails the commit: the next sync catches up.
    pub iceberg_sync: StepOutcome<alluvium_iceberg::SyncReport>,
    /// The table at the committed version, when it was built without reading the log (the
    /// commit landed right after the version it read: the read snapshot advanced by the
    /// committed actions, what a load of that version gives). `None` when the commit landed
    /// after other commits, or read no snapshot: [`Table::snapshot`](crate::Table::snapshot)
    /// then loads what is new. The handle's cache holds it too, so a later
    /// `Table::snapshot` reads only the versions after it.
    pub snapshot: Option<crate::Snapshot>,
}

impl CommitSummary {
    pub(crate) fn new(commit: CommitReport, post: PostCommit) -> CommitSummary {
        CommitSummary {
            commit,
            checkpoint: post.checkpoint,
            log_cleanup: post.log_cleanup,
            auto_compaction: None,
            iceberg_sync: post.iceberg_sync,
            snapshot: None,
        }
    }
}

impl Deref for CommitSummary {
    type Target = CommitReport;

    fn deref(&self) -> &CommitReport {
        &self.commit
    }
}

/// What an OPTIMIZE run did, with the post-commit work after each version it committed.
/// Dereferences to the [`OptimizeReport`].
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct OptimizeSummary {
    /// The OPTIMIZE run.
    pub report: OptimizeReport,
    /// For each committed version (oldest first), the post-commit work that followed it.
    pub post_commits: Vec<(Version, PostCommit)>,
}

impl Deref for OptimizeSummary {
    type Target = OptimizeReport;

    fn deref(&self) -> &OptimizeReport {
        &self.report
    }
}
