//! The post-commit policy every commit runs: a checkpoint when the table's interval says
//! so, log cleanup below it when enabled, and auto-compaction of the partitions the commit
//! wrote. Their failures are reported in the [`CommitSummary`], never as the commit's.
//!
//! It decides with `alluvium_compaction`'s rules and must not know the operation that
//! committed.

use std::collections::BTreeSet;
use std::sync::Arc;

use alluvium_compaction::optimize::{Progress, partition_key};
use alluvium_compaction::{
    CheckpointConfig, OptimizeOptions, checkpoint, cleanup_log, optimize, should_checkpoint,
};
use alluvium_mvcc::{Transaction, VersionSpec};
use alluvium_txlog::Version;
use alluvium_txlog::actions::Add;
use alluvium_txlog::properties::TableProperties;

use crate::report::{CommitSummary, OptimizeSummary, PostCommit, StepOutcome};
use crate::{Error, Result, Table};

/// Files below the target size a partition must hold before auto-compaction rewrites it,
/// unless the table sets `alluvium.autoCompact.minNumFiles`.
pub const AUTO_COMPACT_MIN_FILES: usize = 50;

impl Table {
    /// Commits `txn`, then runs the post-commit policy every operation shares: a
    /// checkpoint when due, log cleanup, auto-compaction of the partitions it wrote. Their
    /// failures are reported in the summary and never fail the commit.
    pub(crate) fn commit_with_policy(&self, txn: Transaction) -> Result<CommitSummary> {
        let adds: Vec<Add> = if txn
            .read_snapshot()
            .is_some_and(|s| s.properties().auto_compact())
        {
            txn.added_files().to_vec()
        } else {
            Vec::new()
        };
        // The committed version has the properties the transaction committed under (its
        // own metadata, or that of the snapshot it read: a concurrent metadata change is a
        // conflict). When they put no checkpoint there, the post-commit policy has nothing
        // to do, and the new snapshot is not loaded just to find that out.
        let interval = txn
            .effective_metadata()
            .map(|m| TableProperties(&m.configuration).checkpoint_interval());
        // The snapshot the transaction read: the sync builds the versions it needs from it
        // by applying their commits, instead of loading them from the checkpoint.
        // (A blind append reads no snapshot: then the handle's cached one, taken before the
        // commit publishes a newer one.)
        let iceberg = txn
            .effective_metadata()
            .is_some_and(|m| alluvium_iceberg::sync_after_commit(&m.configuration))
            .then(|| {
                txn.read_snapshot()
                    .cloned()
                    .or_else(|| self.cached_snapshot().map(|s| (*s).clone()))
            });
        let (commit, snapshot) = self.commit_publishing(txn)?;
        let mut post = match interval {
            Some(i) if !alluvium_compaction::checkpoint_due(i, commit.version) => {
                PostCommit::default()
            }
            _ => self.post_commit(commit.version),
        };
        if let Some(held) = iceberg {
            post.iceberg_sync = Some(self.iceberg_after_commit(commit.version, held.as_ref()));
        }
        let mut summary = CommitSummary::new(commit, post);
        summary.snapshot = snapshot;
        summary.auto_compaction = self.auto_compact(&adds);
        Ok(summary)
    }

    /// Commits `txn` and, when the commit could build the snapshot of its version without
    /// reading the log ([`Transaction::commit_with_snapshot`]), publishes it to the handle's
    /// cache and returns it: the post-commit policy and the next
    /// [`Table::snapshot`](crate::Table::snapshot) then refresh from it (a listing) instead
    /// of reading the commit back.
    ///
    /// # Errors
    /// As [`Transaction::commit`].
    pub(crate) fn commit_publishing(
        &self,
        txn: Transaction,
    ) -> Result<(alluvium_mvcc::CommitReport, Option<crate::Snapshot>)> {
        let (commit, snapshot) = txn.commit_with_snapshot()?;
        let snapshot = snapshot.map(|s| {
            let s = Arc::new(s);
            self.publish_snapshot(s.clone());
            crate::Snapshot::from(s)
        });
        Ok((commit, snapshot))
    }

    /// OPTIMIZE, then the post-commit policy at each version it committed (checkpoints and
    /// log cleanup; their failures never fail the OPTIMIZE, as for any commit, but are
    /// reported). Auto-compaction runs it too, which is why it lives with the policy.
    ///
    /// # Errors
    /// As [`Table::optimize`].
    pub(crate) fn optimize_with_policy(
        &self,
        options: &OptimizeOptions,
        progress: &(dyn Fn(Progress) + Sync),
    ) -> Result<OptimizeSummary> {
        super::check_commit_info(&options.commit_fields.commit_info)?;
        super::check_codec(options.compression.as_deref())?;
        let snapshot = self.snapshot()?;
        let report = self.run(|| optimize(snapshot.inner(), options, progress))?;
        let mut post_commits: Vec<(Version, PostCommit)> = report
            .versions
            .iter()
            .map(|v| (*v, self.post_commit(*v)))
            .collect();
        // One sync after the last commit covers every version OPTIMIZE committed.
        if alluvium_iceberg::sync_after_commit(&snapshot.metadata().configuration)
            && let Some((v, post)) = post_commits.last_mut()
        {
            post.iceberg_sync = Some(self.iceberg_after_commit(*v, Some(snapshot.inner())));
        }
        Ok(OptimizeSummary {
            report,
            post_commits,
        })
    }

    /// Auto-compaction after a commit that added `adds` (`delta.autoOptimize.autoCompact`):
    /// OPTIMIZE the partitions it wrote that now hold at least
    /// `alluvium.autoCompact.minNumFiles` (default 50) files below the target size. `None`
    /// when it is off or nothing qualifies; never fails the commit.
    pub(crate) fn auto_compact(&self, adds: &[Add]) -> StepOutcome<OptimizeSummary> {
        if adds.is_empty() {
            return None;
        }
        let snapshot = match self.snapshot() {
            Ok(s) => s,
            Err(e) => return Some(Err(Arc::new(e))),
        };
        if !snapshot.properties().auto_compact() {
            return None;
        }
        let min_files = snapshot
            .properties()
            .auto_compact_min_num_files()
            .unwrap_or(AUTO_COMPACT_MIN_FILES);
        let target = snapshot
            .properties()
            .target_file_size()
            .unwrap_or(alluvium_compaction::optimize::DEFAULT_OPTIMIZE_TARGET);
        let written: BTreeSet<_> = adds.iter().map(|a| partition_key(a.into())).collect();
        let mut small: std::collections::BTreeMap<_, usize> = Default::default();
        for f in snapshot.files() {
            if u64::try_from(f.size()).unwrap_or(0) < target {
                let key = partition_key(f);
                if written.contains(&key) {
                    *small.entry(key).or_default() += 1;
                }
            }
        }
        let due: BTreeSet<_> = small
            .into_iter()
            .filter(|(_, n)| *n >= min_files.max(2))
            .map(|(k, _)| k)
            .collect();
        if due.is_empty() {
            return None;
        }
        let options = OptimizeOptions::default().with_only_partitions(due);
        Some(
            self.optimize_with_policy(&options, &|_| {})
                .map_err(Arc::new),
        )
    }

    /// The Iceberg sync after a commit of `version` (the `alluvium.iceberg.sync` property):
    /// up to that version, so a later commit is left to its own post-commit step.
    /// `held`: a snapshot of an earlier version the caller had before its commit (what it
    /// read, or the handle's cached one), from which the sync advances; `None` loads.
    pub(crate) fn iceberg_after_commit(
        &self,
        version: Version,
        held: Option<&alluvium_mvcc::Snapshot>,
    ) -> std::result::Result<alluvium_iceberg::SyncReport, Arc<Error>> {
        self.run(|| {
            alluvium_iceberg::sync_from(self.store().clone(), VersionSpec::Version(version), held)
        })
        .map_err(|e| Arc::new(Error::from(e)))
    }

    /// Post-commit work after committing `version`: a checkpoint when the interval says so,
    /// then log cleanup when enabled. Never fails: the outcome of each step is reported.
    pub(crate) fn post_commit(&self, version: Version) -> PostCommit {
        let failed = |e: Error| PostCommit {
            checkpoint: Some(Err(Arc::new(e))),
            log_cleanup: None,
            iceberg_sync: None,
        };
        let snapshot = match self.snapshot() {
            Ok(s) if s.version() == version => s,
            Ok(s) if !should_checkpoint(s.inner(), version) => return PostCommit::default(),
            Ok(_) => match self.snapshot_at(VersionSpec::Version(version)) {
                Ok(s) => s,
                Err(e) => return failed(e),
            },
            Err(e) => return failed(e),
        };
        if !should_checkpoint(snapshot.inner(), version) {
            return PostCommit::default();
        }
        let now = self.store().now_ms();
        let checkpoint = self
            .run(|| checkpoint(snapshot.inner(), &CheckpointConfig::default(), now))
            .map(|o| o.version)
            .map_err(|e| Arc::new(Error::from(e)));
        // Cleanup only below a checkpoint that was written; its problems are not the
        // commit's either, and the next checkpoint retries them.
        let log_cleanup = (checkpoint.is_ok()
            && snapshot.properties().enable_expired_log_cleanup())
        .then(|| cleanup_log(snapshot.inner(), now, false).map_err(|e| Arc::new(Error::from(e))));
        PostCommit {
            checkpoint: Some(checkpoint),
            log_cleanup,
            iceberg_sync: None,
        }
    }
}
