//! `replaceWhere` on a table that writes deletion vectors: the rows the overwrite predicate
//! matches are deleted as DELETE deletes them (SPEC.md §7, "Overwrite with a predicate").
//!
//! Delta Spark does the same: `WriteIntoDelta.removeFiles` runs its `DeleteCommand`
//! (`performDelete`) inside the overwrite's transaction, which writes deletion vectors when
//! the table has them enabled. Files whose partition values or statistics prove that every
//! live row matches are removed whole; in the others the matching rows get a deletion
//! vector through [`apply_deletes`] instead of the file being rewritten.

use crate::Snapshot;
use alluvium_datafile::ReadPlan;
use alluvium_expr::{Predicate, all_match};
use alluvium_mvcc::Transaction;
use alluvium_txlog::actions::Remove;
use roaring::RoaringTreemap;

use crate::read::scan::table_layout;
use crate::rows::live_rows;
use crate::rows::{FileDeletes, RewriteSettings, apply_deletes};
use crate::{Result, Table};

/// Stages in `txn` the deletion of the live rows matching `pred` with deletion vectors
/// (the caller checked `writes_deletion_vectors(snapshot)`). Every candidate file is
/// recorded as read. Returns the number of rows deleted. DVs of at most
/// `inline_dv_max_bytes` go inline (`apply_deletes`).
///
/// # Errors
/// Unreadable data or DV files; a DV upload failure (nothing staged then).
pub(super) fn delete_matching_with_dvs(
    table: &Table,
    snapshot: &Snapshot,
    txn: &mut Transaction,
    pred: &Predicate,
    inline_dv_max_bytes: usize,
) -> Result<u64> {
    let now = table.store().now_ms();
    let no_columns: &[String] = &[];
    let plan = ReadPlan::new(table_layout(snapshot), Some(no_columns), Some(pred.clone()))?;
    let mut deleted: u64 = 0;
    let mut deletes = Vec::new();
    for m in snapshot.inner().files_matching(pred) {
        let add = m.file.to_add();
        txn.read_file(&add);
        if all_match(pred, &m.summary()) {
            deleted += live_rows(&plan, &add)?;
            let mut r = Remove::from_add(&add, now, true);
            r.stats = add.stats.clone();
            txn.remove_file(r);
            continue;
        }
        let mut positions = RoaringTreemap::new();
        for (_, rows) in plan.read_file_with_positions(&add)? {
            positions.extend(rows.values().iter().copied());
        }
        if !positions.is_empty() {
            deletes.push(FileDeletes::new(add, positions));
        }
    }
    // Deletion vectors need no change-data files: readers derive the deleted rows from
    // the two DVs of each re-added file, and the overwrite's new files read as inserts.
    // Only deletion vectors are written: nothing is rewritten under the configuration.
    let settings = RewriteSettings {
        inline_dv_max_bytes,
        configuration: &snapshot.metadata().configuration,
    };
    let stats = apply_deletes(table, snapshot, txn, deletes, None, &settings)?;
    Ok(deleted + stats.rows_deleted)
}
