//! Change-data checks of `verify`: every change-data file a retained commit names through a
//! `cdc` action, and that VACUUM would keep, exists with the size the action records; with
//! `deep` it is read whole as Parquet. A missing or damaged one fails every read of that
//! version's change feed.
//!
//! VACUUM deletes the change-data files of commits older than the retention window
//! (`delta.deletedFileRetentionDuration` before the store's clock) while the log may keep
//! those commits longer: their files being gone is what a vacuumed table looks like, not
//! damage, so only commits inside the window are checked (a commit's time is its in-commit
//! timestamp, else its file's modification time).

use crate::Snapshot;
use alluvium_txlog::path::resolve;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use super::files::file_size;
use super::log::ChangeDataRef;
use super::{Finding, FindingKind, VerifyReport};

/// Checks the change-data files of `refs` whose commits are inside the retention window.
pub(super) fn check_change_data(
    snapshot: &Snapshot,
    refs: &[ChangeDataRef],
    deep: bool,
    report: &mut VerifyReport,
) {
    let store = snapshot.store().as_ref();
    let cutoff = store
        .now_ms()
        .saturating_sub(snapshot.properties().deleted_file_retention_ms());
    for r in refs.iter().filter(|r| r.commit_ms > cutoff) {
        report.change_data_files_checked += 1;
        let (v, cdc) = (r.version, &r.cdc);
        let location = match resolve(&cdc.path, snapshot.root()) {
            Ok(l) => l,
            Err(e) => {
                report.findings.push(Finding::new(
                    FindingKind::MissingChangeDataFile,
                    cdc.path.as_str(),
                    format!(
                        "the cdc action of version {v} names a path that cannot be resolved: {e}"
                    ),
                ));
                continue;
            }
        };
        let shown = location.as_str().to_string();
        match file_size(store, &location) {
            // Writers always record the size; a foreign one that left it out (0) is not
            // contradicted.
            Ok(size) if cdc.size == 0 || i64::try_from(size).ok() == Some(cdc.size) => {}
            Ok(size) => {
                report.findings.push(Finding::new(
                    FindingKind::CorruptChangeDataFile,
                    shown,
                    format!(
                        "is {size} bytes; the cdc action of version {v} records {}",
                        cdc.size
                    ),
                ));
                continue;
            }
            Err(f) => {
                report.findings.push(Finding::new(
                    FindingKind::MissingChangeDataFile,
                    shown,
                    format!("named by the cdc action of version {v}: {}", f.detail),
                ));
                continue;
            }
        }
        if !deep {
            continue;
        }
        let read = store
            .get_location(&location)
            .map_err(|e| e.to_string())
            .and_then(|bytes| {
                let reader = ParquetRecordBatchReaderBuilder::try_new(bytes)
                    .and_then(|b| b.build())
                    .map_err(|e| e.to_string())?;
                for batch in reader {
                    batch.map_err(|e| e.to_string())?;
                }
                Ok(())
            });
        if let Err(e) = read {
            report.findings.push(Finding::new(
                FindingKind::CorruptChangeDataFile,
                shown,
                format!("the change data of version {v} cannot be read: {e}"),
            ));
        }
    }
}
