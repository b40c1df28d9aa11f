//! Log retention (SPEC.md §9): deleting commits and checkpoints older than
//! `delta.logRetentionDuration` (default 30 days), only below a checkpoint, so that every
//! retained version stays reconstructible.
//!
//! 1. The cutoff is now minus the retention, truncated down to midnight UTC (as Spark).
//! 2. Among the commits whose file time is at or before the cutoff, take the newest; the
//!    *anchor* is the newest complete checkpoint at or below it that reads back whole
//!    (every part and sidecar decodes, with a protocol and a metaData action). A checkpoint
//!    that does not is never an anchor: the commits below it may be the only readable
//!    history, so an older checkpoint anchors instead, or nothing is deleted.
//! 3. Delete commits, checksum files and checkpoints below the anchor (oldest first, so an
//!    interrupted cleanup still leaves a contiguous suffix), compaction files starting below
//!    it, and sidecars no retained checkpoint references that are over a day old.
//! 4. The anchor's own commit file is kept (its commitInfo and in-commit timestamp).
//!
//! Nothing is deleted when the table requires checkpoint protection below a version the
//! anchor has not reached, nor on a table with writer features alluvium does not support.

use std::collections::HashSet;

use alluvium_mvcc::Snapshot;
use alluvium_storage::{ObjectStore, StorePath};
use alluvium_txlog::Version;
use alluvium_txlog::actions::Action;
use alluvium_txlog::checkpoint::{ActionSink, CheckpointFiles, visit_checkpoint};
use alluvium_txlog::log_path::{DELTA_LOG_DIR, LogFileKind, SIDECAR_DIR};
use alluvium_txlog::segment::{complete_checkpoints, earliest_readable_version, list_log_from};
use alluvium_txlog::table::TableFeature;

use crate::Result;

const DAY_MS: i64 = 24 * 3600 * 1000;

/// What a cleanup did (or would do, in a dry run).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CleanupReport {
    /// The files deleted (or to delete), oldest first.
    pub deleted: Vec<StorePath>,
    /// The checkpoint everything below was removed.
    pub anchor: Option<Version>,
    /// The earliest version readable afterwards.
    pub earliest_readable_version: Option<Version>,
    /// Why nothing was deleted, if so.
    pub skipped: Option<String>,
}

/// Removes expired log files of the table `snapshot` belongs to (see the module docs).
///
/// # Errors
/// Unsupported writer features (nothing is deleted); storage errors. Deleting is
/// idempotent: a failed cleanup can simply run again.
pub fn cleanup_log(snapshot: &Snapshot, now_ms: i64, dry_run: bool) -> Result<CleanupReport> {
    snapshot.check_writable()?;
    let store = snapshot.store_ref();
    let props = snapshot.properties();
    let cutoff = (now_ms - props.log_retention_ms()).div_euclid(DAY_MS) * DAY_MS;
    let listing = list_log_from(store, 0)?;
    let mut report = CleanupReport {
        earliest_readable_version: earliest_readable_version(&listing),
        ..Default::default()
    };
    let newest_expired = listing
        .iter()
        .filter(|f| {
            f.kind == LogFileKind::Commit
                && f.meta.last_modified_ms <= cutoff
                && f.version <= snapshot.version()
        })
        .map(|f| f.version)
        .max();
    let Some(newest_expired) = newest_expired else {
        report.skipped = Some("no commit is older than the log retention".into());
        return Ok(report);
    };
    let checkpoints = complete_checkpoints(&listing);
    if checkpoints.range(..=newest_expired).next().is_none() {
        report.skipped = Some("no checkpoint at or below the expired commits".into());
        return Ok(report);
    }
    let Some(anchor) = checkpoints
        .range(..=newest_expired)
        .rev()
        .find(|(_, cp)| reads_back_whole(store, cp))
        .map(|(&v, _)| v)
    else {
        report.skipped =
            Some("no checkpoint at or below the expired commits reads back whole".into());
        return Ok(report);
    };
    if snapshot
        .protocol()
        .supports_writer_feature(&TableFeature::CheckpointProtection)
        && let Some(required) = snapshot.properties().require_checkpoint_protection_before()
        && anchor < required
    {
        report.skipped = Some(format!(
            "checkpoint protection requires keeping the log below version {required}"
        ));
        return Ok(report);
    }
    report.anchor = Some(anchor);
    let mut doomed: Vec<(Version, StorePath)> = listing
        .iter()
        .filter(|f| match f.kind {
            LogFileKind::Commit | LogFileKind::Crc | LogFileKind::Checkpoint(_) => {
                f.version < anchor
            }
            LogFileKind::Compaction { .. } => f.version < anchor,
        })
        .map(|f| (f.version, f.meta.path.clone()))
        .collect();
    doomed.sort();
    // Sidecars: keep those of retained V2 checkpoints; delete the rest once a day old.
    let sidecar_dir = StorePath::parse(format!("{DELTA_LOG_DIR}/{SIDECAR_DIR}"))?;
    let sidecars = store.list_dir_from(Some(&sidecar_dir), "")?;
    if !sidecars.is_empty() {
        let mut referenced: HashSet<String> = HashSet::new();
        for cp in checkpoints.range(anchor..).map(|(_, c)| c) {
            // A retained checkpoint we cannot read keeps every sidecar.
            let Ok(actions) = read_checkpoint_sidecar_refs(store, cp) else {
                return finish(store, report, doomed, dry_run);
            };
            referenced.extend(actions);
        }
        for s in sidecars {
            if !referenced.contains(s.path.file_name()) && s.last_modified_ms < now_ms - DAY_MS {
                doomed.push((0, s.path));
            }
        }
    }
    finish(store, report, doomed, dry_run)
}

/// Counts what a checkpoint holds while it is read, without keeping it.
#[derive(Default)]
struct Tally {
    protocol: bool,
    metadata: bool,
}

impl ActionSink for Tally {
    fn accept(&mut self, actions: Vec<Action>) -> alluvium_txlog::Result<()> {
        for a in &actions {
            match a {
                Action::Protocol(_) => self.protocol = true,
                Action::Metadata(_) => self.metadata = true,
                _ => {}
            }
        }
        Ok(())
    }
}

/// Whether a checkpoint can stand for the commits below it: every file of it (parts and
/// sidecars) reads and decodes, and it holds a protocol and a metaData action.
fn reads_back_whole(store: &dyn ObjectStore, cp: &CheckpointFiles) -> bool {
    let mut tally = Tally::default();
    visit_checkpoint(store, cp, &mut tally).is_ok() && tally.protocol && tally.metadata
}

fn read_checkpoint_sidecar_refs(
    store: &dyn ObjectStore,
    cp: &alluvium_txlog::checkpoint::CheckpointFiles,
) -> Result<Vec<String>> {
    // The main files name the sidecars; the sidecars themselves need not be read.
    let mut out = Vec::new();
    for f in &cp.files {
        let bytes = store.get(&f.path)?;
        let actions = if f.path.as_str().ends_with(".json") {
            alluvium_txlog::commit::decode_commit(f.path.as_str(), &bytes)?
        } else {
            alluvium_txlog::checkpoint::read_parquet_actions(f.path.as_str(), bytes)?
        };
        out.extend(actions.into_iter().filter_map(|a| match a {
            Action::Sidecar(s) => Some(s.path.rsplit('/').next().unwrap_or(&s.path).to_string()),
            _ => None,
        }));
    }
    Ok(out)
}

fn finish(
    store: &dyn ObjectStore,
    mut report: CleanupReport,
    doomed: Vec<(Version, StorePath)>,
    dry_run: bool,
) -> Result<CleanupReport> {
    for (_, path) in doomed {
        if !dry_run {
            store.delete(&path)?;
        }
        report.deleted.push(path);
    }
    if !dry_run && report.anchor.is_some() {
        report.earliest_readable_version = earliest_readable_version(&list_log_from(store, 0)?);
    } else if let Some(a) = report.anchor {
        report.earliest_readable_version = Some(a);
    }
    Ok(report)
}
