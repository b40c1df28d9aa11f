//! Maintenance of a table: checkpoints, log retention, OPTIMIZE (with auto-compaction
//! after commits) and VACUUM. The decisions live in `alluvium_compaction`; this module
//! supplies the store clock and the data-file rewriter.

use std::collections::BTreeSet;
use std::sync::Arc;

use alluvium_compaction::optimize::{Progress, partition_key};
use alluvium_compaction::{
    CheckpointConfig, CleanupReport, OptimizeOptions, VacuumOptions, VacuumReport, checkpoint,
    cleanup_log, optimize, should_checkpoint, vacuum,
};
use alluvium_mvcc::VersionSpec;
use alluvium_txlog::Version;
use alluvium_txlog::actions::Add;
use alluvium_txlog::checkpoint::CheckpointOutput;

use crate::report::{OptimizeSummary, PostCommit, StepOutcome};
use crate::{Error, Result, Table};

/// Files below the target size a partition must hold before auto-compaction rewrites it,
/// unless the table sets `alluvium.autoCompact.minNumFiles`.
pub const AUTO_COMPACT_MIN_FILES: usize = 50;

impl Table {
    /// Writes a checkpoint of the latest version now (whatever the interval) and publishes
    /// it in `_last_checkpoint`.
    ///
    /// # Errors
    /// Storage errors; a failed checkpoint never damages the table.
    pub fn checkpoint(&self, config: &CheckpointConfig) -> Result<CheckpointOutput> {
        self.run(|| {
            let snapshot = self.snapshot()?;
            Ok(checkpoint(snapshot.inner(), config, self.store().now_ms())?)
        })
    }

    /// Deletes log files older than `delta.logRetentionDuration`, only below a checkpoint
    /// (see `alluvium_compaction::log_cleanup`). With `dry_run`, only reports.
    ///
    /// # Errors
    /// Storage errors; cleanup is idempotent and can simply run again.
    pub fn cleanup_log(&self, dry_run: bool) -> Result<CleanupReport> {
        self.run(|| {
            let snapshot = self.snapshot()?;
            Ok(cleanup_log(
                snapshot.inner(),
                self.store().now_ms(),
                dry_run,
            )?)
        })
    }

    /// Compacts small files (and, with `zorder_by`, clusters rows) of the latest version:
    /// see `alluvium_compaction::optimize`. The rows of the table do not change; appends
    /// may commit meanwhile. Each version it commits is followed by the post-commit
    /// checkpoint and log-cleanup policy, whose results (never failures of the OPTIMIZE)
    /// are in the summary.
    ///
    /// # Errors
    /// Bad options (a filter over data columns, an unknown Z-order column), read and write
    /// failures, and commit failures other than conflicts on input files.
    pub fn optimize(&self, options: &OptimizeOptions) -> Result<OptimizeSummary> {
        self.optimize_with_progress(options, &|_| {})
    }

    /// [`optimize`](Self::optimize), reporting progress.
    ///
    /// # Errors
    /// As [`optimize`](Self::optimize).
    pub fn optimize_with_progress(
        &self,
        options: &OptimizeOptions,
        progress: &(dyn Fn(Progress) + Sync),
    ) -> Result<OptimizeSummary> {
        let snapshot = self.snapshot()?;
        let report = self.run(|| optimize(snapshot.inner(), options, progress))?;
        // Checkpoints (and log cleanup) due at the versions OPTIMIZE committed; their
        // failures never fail the OPTIMIZE, as for any commit, but are reported.
        let post_commits = report
            .versions
            .iter()
            .map(|v| (*v, self.post_commit(*v)))
            .collect();
        Ok(OptimizeSummary {
            report,
            post_commits,
        })
    }

    /// Deletes data and deletion-vector files no version inside the retention window
    /// references: see `alluvium_compaction::vacuum`.
    ///
    /// # Errors
    /// A retention shorter than the table's (unless forced), unsupported writer features,
    /// and failures while working out what is referenced (nothing is deleted then).
    pub fn vacuum(&self, options: &VacuumOptions) -> Result<VacuumReport> {
        let snapshot = self.snapshot()?;
        Ok(self.run(|| vacuum(snapshot.inner(), options))?)
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
        let written: BTreeSet<_> = adds.iter().map(partition_key).collect();
        let mut small: std::collections::BTreeMap<_, usize> = Default::default();
        for f in snapshot.files() {
            if u64::try_from(f.size).unwrap_or(0) < target {
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
        let options = OptimizeOptions {
            only_partitions: Some(due),
            ..Default::default()
        };
        Some(self.optimize(&options).map_err(Arc::new))
    }

    /// Post-commit work after committing `version`: a checkpoint when the interval says so,
    /// then log cleanup when enabled. Never fails: the outcome of each step is reported.
    pub(crate) fn post_commit(&self, version: Version) -> PostCommit {
        let failed = |e: Error| PostCommit {
            checkpoint: Some(Err(Arc::new(e))),
            log_cleanup: None,
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
        }
    }
}
