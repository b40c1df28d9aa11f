//! Follow mode (SPEC.md §26, "Follow mode"): [`StateStore::follow`] keeps `state/` within
//! one poll interval of `log/` until a stop flag is set.
//!
//! The loop owns one snapshot of the log and refreshes it each poll with
//! [`Snapshot::refresh`](alluvium::Snapshot::refresh): one listing from the next version
//! on and the new commits only, never a full listing or a checkpoint read. When the log moved
//! (or a previous sync did not finish), it runs [`StateStore::sync`], which is exactly-once on
//! its own (the applied log version is a `txn` of the state commit), so two followers, a
//! follower and a manual sync, or a follower restarted after a crash never apply an event
//! twice. The flag is read between commits only: a sync that has started commits or fails
//! as a whole, so stopping never leaves half a chunk behind (there is nothing half-done to
//! leave: an uncommitted chunk is invisible).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::{StateStore, SyncReport};
use crate::Result;
use alluvium::ErrorKind;

/// The longest the loop sleeps before reading the stop flag again, whatever the interval.
const STOP_CHECK: Duration = Duration::from_millis(20);

/// What a [`StateStore::follow`] run did, returned when it stops.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct FollowReport {
    /// Log refreshes after the first load.
    pub polls: u64,
    /// Syncs run (each after the log moved, plus the first one).
    pub syncs: u64,
    /// Syncs that ended in a retryable failure (a conflict, contention, an unknown commit
    /// outcome) and were run again at the next poll.
    pub retried_syncs: u64,
    /// The log version the loop had seen last.
    pub log_version: u64,
    /// Log commits the polls read (each new commit once: the refresh is incremental).
    pub commits_read: u64,
    /// Checkpoint files the polls read (0: a poll never reloads the log from a checkpoint).
    pub checkpoint_files_read: u64,
    /// Listings of the log made by the polls that found new commits (each lists from the
    /// next version on).
    pub list_calls: u64,
}

impl StateStore {
    /// Folds the log into the state continuously: one [`sync`](StateStore::sync) at once,
    /// then every `interval` a refresh of the log's snapshot and a sync if the log moved,
    /// until `stop` is set. `on_sync` is called with the report of every sync (including
    /// those with nothing to apply, after the log moved: another follower may have applied
    /// it first).
    ///
    /// Stopping: `stop` is read before each sync and while waiting (at least every 20 ms),
    /// never inside a sync, so the run ends between commits; a caller wires it to SIGINT /
    /// SIGTERM. A sync that fails with a retryable error ([`ErrorKind::Conflict`],
    /// [`ErrorKind::Contention`], [`ErrorKind::CommitOutcomeUnknown`]: re-running a sync is
    /// safe by its `txn`) is run again at the next poll; any other error ends the run.
    ///
    /// # Errors
    /// The first non-retryable error of a log refresh or a sync.
    pub fn follow(
        &self,
        interval: Duration,
        stop: &AtomicBool,
        mut on_sync: impl FnMut(&SyncReport),
    ) -> Result<FollowReport> {
        let mut log = self.log_table().snapshot()?;
        let mut report = FollowReport {
            log_version: log.version(),
            ..FollowReport::default()
        };
        // The first sync catches up with whatever was committed before the run.
        let mut pending = true;
        loop {
            if stop.load(Ordering::SeqCst) {
                return Ok(report);
            }
            if pending {
                let started = Instant::now();
                match self.sync() {
                    Ok(r) => {
                        report.syncs += 1;
                        pending = false;
                        on_sync(&r);
                    }
                    Err(e) if retryable(e.kind()) => report.retried_syncs += 1,
                    Err(e) => return Err(e),
                }
                wait(interval.saturating_sub(started.elapsed()), stop);
            } else {
                wait(interval, stop);
            }
            if stop.load(Ordering::SeqCst) {
                return Ok(report);
            }
            let next = log.refresh()?;
            report.polls += 1;
            if next.version() != log.version() {
                pending = true;
                // A refresh that found nothing returns the old snapshot and its report.
                let cost = next.report();
                report.commits_read += u64::from(cost.commits_read);
                report.checkpoint_files_read += u64::from(cost.checkpoint_files_read);
                report.list_calls += u64::from(cost.list_calls);
            }
            report.log_version = next.version();
            log = next;
        }
    }
}

/// Whether a failed sync may simply run again.
fn retryable(kind: ErrorKind) -> bool {
    matches!(
        kind,
        ErrorKind::Conflict | ErrorKind::Contention | ErrorKind::CommitOutcomeUnknown
    )
}

/// Sleeps `total`, or less if `stop` is set meanwhile.
fn wait(total: Duration, stop: &AtomicBool) {
    let until = Instant::now() + total;
    while !stop.load(Ordering::SeqCst) {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        std::thread::sleep(left.min(STOP_CHECK));
    }
}
