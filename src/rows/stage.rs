//! Staging the changes of UPDATE and MERGE: the target files read with each live row's
//! physical position ([`for_each_file_read`], decoded ahead on the rayon pool), and, once
//! the scan is done, the new files, the deletions of the changed rows (`apply_deletes`) and
//! the change-data files staged in the transaction ([`stage_changes`]). Also the live-row
//! count of a file removed whole ([`live_rows`]).
//!
//! It must not know which operation it stages for, nor commit.

use std::sync::Arc;

use crate::Snapshot;
use alluvium_datafile::ReadPlan;
use alluvium_datafile::sink::{FileSink, discard};
use alluvium_mvcc::Transaction;
use alluvium_txlog::actions::Add;
use alluvium_txlog::stats::FileStats;
use arrow_array::{ArrayRef, RecordBatch, UInt64Array};
use arrow_schema::{Field, Schema};

use super::change_data;
use super::deletes::{DeleteStats, FileDeletes, RewriteSettings, apply_deletes};
use crate::read::read_ahead::{Depth, ReadAhead};
use crate::{Result, Table};

/// What UPDATE or MERGE staged in its transaction: new data files and deletions.
pub(crate) struct Staged {
    /// New data files holding the new row versions (and MERGE's inserts).
    pub new_files: u64,
    /// Their bytes.
    pub new_bytes: u64,
    /// What deleting the changed rows from their old files did.
    pub deletes: DeleteStats,
    /// Change-data files staged (`numAddedChangeFiles`).
    pub change_files: u64,
}

/// The end of UPDATE and MERGE: once the scan is done, closes `sink` (the new row
/// versions) and `changes` (their change rows, on a change-data-feed table), stages the
/// deletions of the changed rows (`apply_deletes`), the new files and the cdc files in
/// `txn`. With `old_by_rewrite`, the copy-on-write rewrite records the old values of the
/// rows it drops into `changes` (MERGE, whose scan reads only the columns it decides on).
/// Nothing stays behind on failure: a failed scan aborts the sink and the change writer,
/// and a later failure removes the files they and the rewrite wrote.
#[expect(
    clippy::too_many_arguments,
    reason = "the pieces of one DML's outcome, each owned by a different step"
)]
pub(crate) fn stage_changes(
    table: &Table,
    snapshot: &Snapshot,
    txn: &mut Transaction,
    sink: FileSink<'_>,
    scanned: Result<()>,
    deletes: Vec<FileDeletes>,
    changes: Option<change_data::ChangeDataWriter<'_>>,
    old_by_rewrite: bool,
    settings: &RewriteSettings<'_>,
) -> Result<Staged> {
    let store = table.store().as_ref();
    // The change writer stays open through the rewrite only when the rewrite records.
    let (early, late) = match old_by_rewrite {
        true => (None, changes),
        false => (changes, None),
    };
    let abort_late = |late: Option<change_data::ChangeDataWriter<'_>>| {
        if let Some(w) = late {
            w.abort();
        }
    };
    let cdcs = match change_data::close(early, scanned) {
        Ok(c) => c,
        Err(e) => {
            sink.abort();
            abort_late(late);
            return Err(e);
        }
    };
    let (adds, elapsed) = match sink.finish() {
        Ok(done) => done,
        Err(e) => {
            change_data::discard_files(store, &cdcs);
            abort_late(late);
            return Err(e.into());
        }
    };
    txn.add_write_time(elapsed);
    let staged_before = txn.added_files().len();
    let stats = match apply_deletes(table, snapshot, txn, deletes, late.as_ref(), settings) {
        Ok(s) => s,
        Err(e) => {
            discard(store, &adds);
            change_data::discard_files(store, &cdcs);
            abort_late(late);
            return Err(e);
        }
    };
    let cdcs = match change_data::close(late, Ok(())) {
        Ok(more) => cdcs.into_iter().chain(more).collect(),
        Err(e) => {
            // Only a copy-on-write rewrite (new paths, never a re-added file) staged files.
            discard(store, &adds);
            discard(store, &txn.added_files()[staged_before..]);
            change_data::discard_files(store, &cdcs);
            return Err(e);
        }
    };
    let staged = Staged {
        new_files: adds.len() as u64,
        new_bytes: adds.iter().map(|a| a.size.max(0) as u64).sum(),
        deletes: stats,
        change_files: change_data::stage(txn, cdcs),
    };
    for a in adds {
        txn.add_file(a);
    }
    Ok(staged)
}

/// The live rows of one file, batch by batch, each with its rows' physical positions.
pub(crate) type PositionedRows = Vec<(RecordBatch, UInt64Array)>;

/// `rows` with `extra` columns appended after its own (the hidden row-tracking columns,
/// `_change_type`).
pub(crate) fn with_appended(
    rows: &RecordBatch,
    extra: impl IntoIterator<Item = (Field, ArrayRef)>,
) -> Result<RecordBatch> {
    let mut fields: Vec<Field> = rows
        .schema()
        .fields()
        .iter()
        .map(|f| f.as_ref().clone())
        .collect();
    let mut columns = rows.columns().to_vec();
    for (field, column) in extra {
        fields.push(field);
        columns.push(column);
    }
    Ok(RecordBatch::try_new(
        Arc::new(Schema::new(fields)),
        columns,
    )?)
}

/// Reads `files` through `plan` with each live row's physical position and hands them to
/// `f` in order. Files are decoded on the rayon pool ahead of `f`, which runs on the calling
/// thread (it owns the transaction and the sink), through [`ReadAhead`]: at most
/// `2 x threads` files decoded ahead, never the whole target.
pub(crate) fn for_each_file_read<F>(plan: &ReadPlan, files: &[Add], mut f: F) -> Result<()>
where
    F: FnMut(&Add, PositionedRows) -> Result<()>,
{
    let shared = Arc::new(plan.clone());
    let reads = ReadAhead::new(files.to_vec(), Depth::PerThread(2), move |add: Add| {
        Ok(shared.read_file_with_positions(&add)?)
    });
    for (add, read) in files.iter().zip(reads) {
        f(add, read?)?;
    }
    Ok(())
}

/// Rows of a file that a whole-file removal deletes: `numRecords` minus the DV's
/// cardinality, or the footer's count when the file has no statistics.
pub(crate) fn live_rows(plan: &ReadPlan, add: &Add) -> Result<u64> {
    let physical = match add
        .stats
        .as_deref()
        .and_then(FileStats::parse)
        .and_then(|s| s.num_records)
    {
        Some(n) => u64::try_from(n).unwrap_or(0),
        None => plan.physical_rows(add)?,
    };
    let deleted = add
        .deletion_vector
        .as_ref()
        .map_or(0, |d| u64::try_from(d.cardinality).unwrap_or(0));
    Ok(physical.saturating_sub(deleted))
}
