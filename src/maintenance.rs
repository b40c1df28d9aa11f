//! Maintenance of a table: checkpoints and log retention.

use alluvium_compaction::{
    CheckpointConfig, CleanupReport, checkpoint, cleanup_log, should_checkpoint,
};
use alluvium_mvcc::VersionSpec;
use alluvium_txlog::Version;
use alluvium_txlog::checkpoint::CheckpointOutput;

use crate::{Result, Table};

impl Table {
    /// Writes a checkpoint of the latest version now (whatever the interval) and publishes
    /// it in `_last_checkpoint`.
    ///
    /// # Errors
    /// Storage errors; a failed checkpoint never damages the table.
    pub fn checkpoint(&self, config: &CheckpointConfig) -> Result<CheckpointOutput> {
        let snapshot = self.snapshot()?;
        Ok(checkpoint(&snapshot, config, self.store().now_ms())?)
    }

    /// Deletes log files older than `delta.logRetentionDuration`, only below a checkpoint
    /// (see `alluvium_compaction::log_cleanup`). With `dry_run`, only reports.
    ///
    /// # Errors
    /// Storage errors; cleanup is idempotent and can simply run again.
    pub fn cleanup_log(&self, dry_run: bool) -> Result<CleanupReport> {
        let snapshot = self.snapshot()?;
        Ok(cleanup_log(&snapshot, self.store().now_ms(), dry_run)?)
    }

    /// Post-commit work after committing `version`: a checkpoint when the interval says so,
    /// then log cleanup when enabled. Never fails: the outcome is reported.
    pub(crate) fn post_commit(
        &self,
        version: Version,
    ) -> Option<std::result::Result<Version, String>> {
        let snapshot = match self.snapshot() {
            Ok(s) if s.version() == version => s,
            Ok(s) if !should_checkpoint(&s, version) => return None,
            Ok(_) => match self.snapshot_at(VersionSpec::Version(version)) {
                Ok(s) => s,
                Err(e) => return Some(Err(e.to_string())),
            },
            Err(e) => return Some(Err(e.to_string())),
        };
        if !should_checkpoint(&snapshot, version) {
            return None;
        }
        let result = checkpoint(
            &snapshot,
            &CheckpointConfig::default(),
            self.store().now_ms(),
        )
        .map(|o| o.version)
        .map_err(|e| e.to_string());
        if result.is_ok() && snapshot.properties().enable_expired_log_cleanup() {
            // Cleanup problems are not the commit's problem either; the next checkpoint
            // retries them.
            let _ = cleanup_log(&snapshot, self.store().now_ms(), false);
        }
        Some(result)
    }
}
