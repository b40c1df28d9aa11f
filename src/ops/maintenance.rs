//! Maintenance of a table on demand: checkpoints, log retention, OPTIMIZE and VACUUM. The
//! decisions live in `alluvium_compaction`; this module supplies the store clock and the
//! thread pool. What runs after every commit (checkpoint, cleanup, auto-compaction) is the
//! commit tail's policy (`commit::policy`), which OPTIMIZE's commits run too.

use alluvium_compaction::optimize::Progress;
use alluvium_compaction::{
    CheckpointConfig, CleanupReport, OptimizeOptions, VacuumOptions, VacuumReport, checkpoint,
    cleanup_log, vacuum,
};
use alluvium_txlog::checkpoint::CheckpointOutput;

use crate::report::OptimizeSummary;
use crate::{Result, Table};

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
        self.optimize_with_policy(options, progress)
    }

    /// Deletes data and deletion-vector files no version inside the retention window
    /// references: see `alluvium_compaction::vacuum`.
    ///
    /// # Errors
    /// A retention shorter than the table's (unless forced), unsupported writer features,
    /// and failures while working out what is referenced (nothing is deleted then).
    ///
    /// A full VACUUM never lists the Iceberg metadata directory (`metadata/`, see
    /// [`Table::sync_iceberg`]); after a run that deletes, the Iceberg snapshots of versions
    /// below the oldest protected one (whose files may be gone) are expired and the Iceberg
    /// files only they referenced are deleted: they are counted in the report's `deleted`
    /// and `iceberg_snapshots_expired`, and an expiry failure is one of its `failed` lines.
    pub fn vacuum(&self, options: &VacuumOptions) -> Result<VacuumReport> {
        crate::commit::check_commit_info(&options.commit_fields.commit_info)?;
        let snapshot = self.snapshot()?;
        let mut report = self.run(|| vacuum(snapshot.inner(), options))?;
        if !report.dry_run {
            let expired = self.run(|| {
                alluvium_iceberg::expire(
                    self.store().as_ref(),
                    report.oldest_protected_version,
                    report.cutoff_ms,
                )
            });
            match expired {
                Ok(e) => {
                    report.iceberg_snapshots_expired = e.expired_snapshots;
                    report.deleted.extend(e.deleted);
                    report.failed.extend(e.failed);
                }
                Err(e) => report
                    .failed
                    .push(format!("expiring Iceberg snapshots: {e}")),
            }
        }
        Ok(report)
    }
}
