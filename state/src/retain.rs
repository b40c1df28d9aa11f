//! `retain`: drops log partitions older than N days, never an event not yet synced
//! (SPEC.md §26.5).
//!
//! The cutoff is the store clock's UTC date minus `keep_days`; every log file of a
//! partition `event_date < cutoff` is removed, except files added by a log version after
//! the one `state/` has applied through (read once, before choosing): a partition holding
//! such a file is reported as kept. The removal is one commit of `remove` actions (no data
//! change is claimed away: they are ordinary removes, so readers of old versions and
//! VACUUM's retention rules apply as for any table). Files added after the snapshot the
//! choice was made on are never touched.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use alluvium_txlog::stats::FileStats;

use super::StateStore;
use super::events::event_date;
use super::layout::EVENT_DATE;
use super::report::RetainReport;
use super::sync::{all_commit_adds, synced_through};
use crate::Result;

/// `days` since the epoch as `YYYY-MM-DD`.
fn date_text(days: i32) -> String {
    chrono::DateTime::from_timestamp(i64::from(days) * 86_400, 0)
        .map(|d| d.format("%Y-%m-%d").to_string())
        .unwrap_or_else(|| days.to_string())
}

impl StateStore {
    /// Drops log partitions older than `keep_days` days (by `event_date`, UTC) whose
    /// events are all synced; with `dry_run` only reports what it would do.
    ///
    /// # Errors
    /// Storage and commit failures (a conflict with a concurrent commit: run again).
    pub fn retain(&self, keep_days: u32, dry_run: bool) -> Result<RetainReport> {
        let now_ms = self.log.store().now_ms();
        let today = event_date(now_ms.saturating_mul(1000));
        let cutoff = today.saturating_sub(i32::try_from(keep_days).unwrap_or(i32::MAX));
        let cutoff_text = date_text(cutoff);
        // The sync progress first: it only grows, so files it covers stay covered.
        let synced = synced_through(&self.state.snapshot()?);
        let log = self.log.snapshot()?;
        let mut unsynced: HashSet<String> = HashSet::new();
        let first = synced.map_or(0, |v| v + 1);
        // Every add of those commits, OPTIMIZE's rewrites (dataChange=false) included: a
        // rewrite of unsynced events holds them too.
        for v in first..=log.version() {
            for add in all_commit_adds(&log, v)? {
                unsynced.insert(add.path);
            }
        }
        let mut report = RetainReport {
            cutoff_date: cutoff_text.clone(),
            dry_run,
            ..RetainReport::default()
        };
        let mut doomed = Vec::new();
        let mut partitions: BTreeMap<String, bool> = BTreeMap::new();
        for add in log.files() {
            let Some(Some(date)) = add.partition_values().get(EVENT_DATE) else {
                continue;
            };
            // Dates are `YYYY-MM-DD`: text order is date order.
            let date: String = date.to_string();
            if date >= cutoff_text {
                continue;
            }
            let keep = unsynced.contains(add.path());
            let clean = partitions.entry(date).or_insert(true);
            if keep {
                *clean = false;
            } else {
                doomed.push(add);
            }
        }
        let kept: BTreeSet<String> = partitions
            .iter()
            .filter(|(_, clean)| !**clean)
            .map(|(d, _)| d.clone())
            .collect();
        report.partitions_dropped = partitions
            .keys()
            .filter(|d| !kept.contains(*d))
            .cloned()
            .collect();
        report.partitions_kept_unsynced = kept.into_iter().collect();
        report.files_removed = doomed.len() as u64;
        report.events_removed = doomed
            .iter()
            .filter_map(|a| a.stats().as_deref().and_then(FileStats::parse))
            .filter_map(|s| s.num_records)
            .map(|n| n.max(0) as u64)
            .sum();
        if dry_run || doomed.is_empty() {
            return Ok(report);
        }
        let mut txn = self.log.transaction("STATE RETAIN")?;
        for add in &doomed {
            txn.remove_file(add);
        }
        report.log_version = Some(txn.commit()?.version);
        Ok(report)
    }
}
