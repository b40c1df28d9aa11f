//! `RESTORE TABLE ... TO VERSION AS OF n | TIMESTAMP AS OF t`, as Delta Spark's
//! `RestoreTableCommand` does it: one commit (operation `RESTORE`) that makes the latest
//! version hold exactly the logical files (path and deletion vector) of the target
//! version, with its metadata.
//!
//! * The files of the target version missing now are added back (`dataChange=true`, with
//!   the statistics, deletion vector, tags and row-tracking fields they had); the files live
//!   now but not in the target are removed (`dataChange=true`). Files are compared as log
//!   replay compares them (PROTOCOL.md "Action Reconciliation": path and deletion-vector
//!   unique id).
//! * Every data file and deletion-vector file to add back must still exist (VACUUM may have
//!   deleted it): otherwise nothing is committed and the error names them.
//! * The metadata becomes the target's, with identity columns' high-water marks kept from
//!   the latest version (values already handed out are never generated again), and the
//!   column-mapping id and in-commit-timestamp settings of the latest version kept.
//! * The protocol is never downgraded (PROTOCOL.md "Protocol Evolution": time travel to the
//!   versions in between must stay readable): it becomes the latest protocol with every
//!   feature of the target's added.
//! * The clustering domain follows the target (its clustering columns, or none): Delta's
//!   `handleDomainMetadataForRestoreTable`; other domains (row tracking's high-water mark)
//!   stay as they are.
//! * `operationMetrics`: `tableSizeAfterRestore`, `numOfFilesAfterRestore`,
//!   `numRemovedFiles`, `numRestoredFiles`, `removedFilesSize`, `restoredFilesSize`.

use std::collections::{HashMap, HashSet};

use crate::Snapshot;
use alluvium_mvcc::{Transaction, VersionSpec};
use alluvium_txlog::FileRef;
use alluvium_txlog::actions::{Metadata, Protocol, Remove};
use alluvium_txlog::clustering::{self, clustering_columns};
use alluvium_txlog::dv::read_deletion_vector_bitmap;
use alluvium_txlog::features::upgrade_protocol;
use alluvium_txlog::path::{canonical_path, resolve};
use alluvium_txlog::properties::{
    COLUMN_MAPPING_MAX_ID, ENABLE_ICT, ICT_ENABLEMENT_TIMESTAMP, ICT_ENABLEMENT_VERSION,
    TableProperties,
};
use alluvium_txlog::schema::StructType;
use alluvium_txlog::table::TableFeature;

use crate::commit::{WriteOptions, WriteOutcome, finish, outcome_if_done};
use crate::report::CommitSummary;
use crate::rows::rules::identity::{HIGH_WATER_MARK, STEP};
use crate::{Error, Result, Table};

/// Files named at most in a [`Error::RestoreFilesMissing`].
const MISSING_SHOWN: usize = 100;

/// A logical file's key in log replay: canonical path and deletion-vector id.
fn key(snapshot: &Snapshot, add: FileRef<'_>) -> (String, Option<String>) {
    (
        canonical_path(add.path(), snapshot.root()).into_owned(),
        add.deletion_vector().map(|d| d.unique_id()),
    )
}

/// Every feature a protocol supports, explicitly listed or implied by its legacy versions.
fn features_of(p: &Protocol) -> Vec<TableFeature> {
    let mut out = p.writer_features_in_force();
    if p.min_reader_version >= 3 {
        out.extend(p.reader_table_features());
    } else if p.min_reader_version == 2 {
        out.push(TableFeature::ColumnMapping);
    }
    out
}

/// The protocol after restoring `target` on a table at `latest`: `latest` with every
/// feature of `target` (Delta: `sourceProtocol.merge(targetProtocol)`), never lower.
fn merged_protocol(latest: &Protocol, target: &Protocol) -> Protocol {
    let mut p = upgrade_protocol(latest, &features_of(target));
    p.min_reader_version = p.min_reader_version.max(target.min_reader_version);
    p.min_writer_version = p.min_writer_version.max(target.min_writer_version);
    p
}

/// The target's schema with each identity column's high-water mark the furthest (in the
/// column's step direction) of its own and the latest schema's for the same column.
fn merge_high_water_marks(target: &mut StructType, latest: &StructType) {
    for f in &mut target.fields {
        let Some(mine) = f.metadata.get(HIGH_WATER_MARK).and_then(|v| v.as_i64()) else {
            continue;
        };
        let same = latest
            .fields
            .iter()
            .find(|l| match (f.column_id(), l.column_id()) {
                (Some(a), Some(b)) => a == b,
                _ => l.name.eq_ignore_ascii_case(&f.name),
            });
        let Some(theirs) = same
            .and_then(|l| l.metadata.get(HIGH_WATER_MARK))
            .and_then(|v| v.as_i64())
        else {
            continue;
        };
        let descending = f
            .metadata
            .get(STEP)
            .and_then(|v| v.as_i64())
            .is_some_and(|s| s < 0);
        let mark = if descending {
            mine.min(theirs)
        } else {
            mine.max(theirs)
        };
        f.metadata.insert(HIGH_WATER_MARK.into(), mark.into());
    }
}

/// The metadata the restore commits: the target's, with the latest version's identity
/// high-water marks, column-mapping maximum id and in-commit-timestamp settings.
fn restored_metadata(latest: &Snapshot, target: &Snapshot) -> Metadata {
    let mut md = target.metadata().clone();
    let mut schema = target.schema().clone();
    merge_high_water_marks(&mut schema, latest.schema());
    md.schema_string = schema.to_json();
    // Ids handed out after the target stay used: a later column never reuses one.
    let max_id = TableProperties(&md.configuration)
        .column_mapping_max_id()
        .max(latest.properties().column_mapping_max_id());
    if max_id > 0 {
        md.configuration
            .insert(COLUMN_MAPPING_MAX_ID.into(), max_id.to_string());
    }
    // In-commit timestamps, once on, stay on from the version that enabled them (the
    // protocol's timestamps must keep increasing across the restore commit).
    for k in [ENABLE_ICT, ICT_ENABLEMENT_VERSION, ICT_ENABLEMENT_TIMESTAMP] {
        match latest.metadata().configuration.get(k) {
            Some(v) => {
                md.configuration.insert(k.into(), v.clone());
            }
            None => {
                md.configuration.remove(k);
            }
        }
    }
    md
}

/// Whether the file and deletion vector of `add` (a file of `target`) can still be read;
/// `Some(description)` of what is missing when not.
fn missing(target: &Snapshot, add: FileRef<'_>) -> Option<String> {
    let store = target.store().as_ref();
    let exists = match resolve(add.path(), target.root()) {
        Ok(location) => crate::verify::file_size(store, &location).is_ok(),
        Err(_) => false,
    };
    if !exists {
        return Some(add.path().to_string());
    }
    if let Some(dv) = add.deletion_vector()
        && let Err(e) = read_deletion_vector_bitmap(store, dv)
        && e.is_not_found()
    {
        return Some(format!("the deletion vector of {}", add.path()));
    }
    None
}

impl Table {
    /// Restores the table to the version `to` names (a version, or the latest version
    /// committed at or before a timestamp), in one commit (operation `RESTORE`, parameters
    /// `version` / `timestamp`) that adds back the target's files missing now and removes
    /// the files live now but not in the target, both with `dataChange=true`, and commits
    /// the target's metadata; see the module documentation for the rules. Nothing is
    /// rewritten. The summary's operation metrics are Delta's (`numRestoredFiles`,
    /// `numRemovedFiles`, `restoredFilesSize`, `removedFilesSize`,
    /// `numOfFilesAfterRestore`, `tableSizeAfterRestore`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the target is not older than the latest version;
    /// [`Error::RestoreFilesMissing`] naming the files (data or deletion vectors) VACUUM
    /// or someone else deleted (nothing committed); not-found errors for a version or time
    /// outside the table's history; unsupported writer features; a conflict when another
    /// commit lands first (the restore read the whole table).
    pub fn restore(&self, to: VersionSpec) -> Result<CommitSummary> {
        self.restore_with(to, &WriteOptions::default())?
            .into_committed("RESTORE")
    }

    /// [`restore`](Self::restore) with the options every write takes: `commitInfo`
    /// fields, an application transaction (a restore the application already committed
    /// is [`WriteOutcome::Skipped`], nothing written) and the snapshot to read.
    ///
    /// ```no_run
    /// # fn main() -> alluvium::Result<()> {
    /// use alluvium::{AppTransaction, Table, VersionSpec, WriteOptions};
    /// let table = Table::open("path/to/table")?;
    /// let options = WriteOptions::default().with_app_transaction(AppTransaction {
    ///     app_id: "rollback-job".into(),
    ///     version: 7,
    /// });
    /// // Run twice (a retried job): the second run is skipped, not a second RESTORE.
    /// let first = table.restore_with(VersionSpec::Version(3), &options)?;
    /// let again = table.restore_with(VersionSpec::Version(3), &options)?;
    /// assert!(first.report().is_some() && again.report().is_none());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// As [`restore`](Self::restore); options that are not valid for a write.
    pub fn restore_with(&self, to: VersionSpec, options: &WriteOptions) -> Result<WriteOutcome> {
        let latest = self.read_snapshot(options)?;
        // Before anything about the target is checked: a retried job's restore has already
        // moved the table, and the files it re-added may have been vacuumed since.
        let mut txn = Transaction::new(latest.inner(), "RESTORE");
        if let Some(done) = outcome_if_done(&mut txn, &latest, options) {
            return Ok(done);
        }
        let target = self.snapshot_at(to)?;
        if target.version() >= latest.version() {
            return Err(Error::InvalidArgument(format!(
                "cannot restore to version {}: it is not older than the latest version {}",
                target.version(),
                latest.version()
            )));
        }
        let live: HashSet<(String, Option<String>)> =
            latest.files().map(|a| key(&latest, a)).collect();
        let wanted: HashSet<(String, Option<String>)> =
            target.files().map(|a| key(&target, a)).collect();
        let to_add: Vec<FileRef<'_>> = target
            .files()
            .filter(|a| !live.contains(&key(&target, *a)))
            .collect();
        let to_remove: Vec<FileRef<'_>> = latest
            .files()
            .filter(|a| !wanted.contains(&key(&latest, *a)))
            .collect();
        let gone: Vec<String> = self.run(|| {
            use rayon::prelude::*;
            to_add
                .par_iter()
                .filter_map(|a| missing(&target, *a))
                .collect()
        });
        if !gone.is_empty() {
            let mut files = gone;
            files.sort();
            files.truncate(MISSING_SHOWN);
            return Err(Error::RestoreFilesMissing {
                version: target.version(),
                files,
            });
        }

        let size = |adds: &[FileRef<'_>]| adds.iter().map(|a| a.size().max(0)).sum::<i64>();
        match to {
            VersionSpec::Timestamp(ms) => {
                txn.set_parameter("version", serde_json::Value::Null);
                txn.set_parameter("timestamp", crate::text_input::iso_timestamp(ms));
            }
            _ => {
                txn.set_parameter("version", target.version());
                txn.set_parameter("timestamp", serde_json::Value::Null);
            }
        }
        // A restore replaces the table's state: any concurrent change conflicts.
        txn.read_whole_table();
        // The files it adds are the table's own data, referenced by older versions: a
        // failed commit must never delete them.
        txn.set_discard_on_failure(false);
        let now = self.store().now_ms();
        for a in &to_remove {
            txn.read_file(a);
            txn.remove_file(Remove::from_add(a, now, true));
        }
        for a in &to_add {
            let mut a = a.to_add();
            a.data_change = true;
            txn.add_file(a);
        }
        txn.set_metric("numRestoredFiles", to_add.len());
        txn.set_metric("restoredFilesSize", size(&to_add));
        txn.set_metric("numRemovedFiles", to_remove.len());
        txn.set_metric("removedFilesSize", size(&to_remove));
        txn.set_metric("numOfFilesAfterRestore", target.num_files());
        txn.set_metric(
            "tableSizeAfterRestore",
            target.files().map(|a| a.size().max(0)).sum::<i64>(),
        );

        let protocol = merged_protocol(latest.protocol(), target.protocol());
        if &protocol != latest.protocol() {
            txn.set_protocol(protocol.clone());
        }
        txn.set_metadata(restored_metadata(&latest, &target));
        // The clustering domain follows the target: its columns, or none when the target
        // is not clustered but the latest version is.
        let domains = |s: &Snapshot| -> HashMap<String, _> {
            s.domains()
                .filter(|d| !d.removed)
                .map(|d| (d.domain.clone(), d.clone()))
                .collect()
        };
        let (now_domains, then_domains) = (domains(&latest), domains(&target));
        let then_columns =
            clustering_columns(target.protocol(), |d| then_domains.get(d))?.unwrap_or_default();
        let now_columns =
            clustering_columns(latest.protocol(), |d| now_domains.get(d))?.unwrap_or_default();
        if then_columns != now_columns && clustering::is_clustered(&protocol) {
            txn.set_domain(clustering::domain_action(&then_columns));
        }
        finish(self, txn, options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use alluvium_txlog::actions::test_protocol as protocol;

    #[test]
    fn the_protocol_is_never_downgraded() {
        use alluvium_txlog::features::{supports_reader_feature, supports_writer_feature};
        // Restoring a 1/2 version onto a table now at 3/7 with deletion vectors keeps 3/7
        // and the feature; the target's implied features are listed too (Delta's
        // `Protocol.merge` unions both sides' features).
        let bare = protocol(3, 7, Some(&["deletionVectors"]), Some(&["deletionVectors"]));
        let merged = merged_protocol(&bare, &protocol(1, 2, None, None));
        assert_eq!(
            (merged.min_reader_version, merged.min_writer_version),
            (3, 7)
        );
        assert!(supports_reader_feature(&merged, "deletionVectors"));
        assert!(supports_writer_feature(&merged, "appendOnly"));
        // A table upgraded from 1/2 already lists them: nothing changes.
        let upgraded = upgrade_protocol(
            &protocol(1, 2, None, None),
            &[TableFeature::DeletionVectors],
        );
        assert_eq!(
            merged_protocol(&upgraded, &protocol(1, 2, None, None)),
            upgraded
        );
        // Restoring a 2/5 (column mapping) version onto a 1/4 (CDF) table supports both.
        let merged = merged_protocol(&protocol(1, 4, None, None), &protocol(2, 5, None, None));
        assert!(alluvium_txlog::features::supports_writer_feature(
            &merged,
            "changeDataFeed"
        ));
        assert!(alluvium_txlog::features::supports_reader_feature(
            &merged,
            "columnMapping"
        ));
    }

    #[test]
    fn identity_marks_keep_the_furthest_value() {
        let schema = |mark: i64, step: i64| {
            StructType::from_json(&format!(
                r#"{{"type":"struct","fields":[{{"name":"id","type":"long","nullable":true,"metadata":{{"delta.identity.start":1,"delta.identity.step":{step},"delta.identity.highWaterMark":{mark}}}}}]}}"#
            ))
            .unwrap()
        };
        let mut target = schema(5, 1);
        merge_high_water_marks(&mut target, &schema(9, 1));
        assert_eq!(target.fields[0].metadata[HIGH_WATER_MARK], 9);
        let mut target = schema(-5, -1);
        merge_high_water_marks(&mut target, &schema(-9, -1));
        assert_eq!(target.fields[0].metadata[HIGH_WATER_MARK], -9);
    }
}
