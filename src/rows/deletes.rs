//! Applying row deletions to live files (PROTOCOL.md "Deletion Vectors", "Deletion Vector
//! Descriptor Schema" and "Deletion Vector Format"; SPEC.md §21).
//!
//! With deletion vectors (merge-on-read), every touched file is re-added under the same
//! path with a new DV holding its old deleted rows and the new ones; all new DVs of one
//! commit go into one fresh `deletion_vector_<uuid>.bin`, uploaded (put-if-absent) before
//! the commit. Without them (copy-on-write), each touched file is removed and its kept rows
//! are rewritten, coalesced across files into a few new files (one rolling sink per
//! worker). Either way a file whose every row is deleted is simply removed.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::Snapshot;
use alluvium_datafile::ReadPlan;
use alluvium_datafile::sink::{FileSink, FileSinkOptions, SinkTable, discard};
use alluvium_mvcc::Transaction;
use alluvium_storage::StorePath;
use alluvium_txlog::actions::{Add, Remove};
use alluvium_txlog::dv::{
    DeletionVectorDescriptor, DvFileWriter, encoded_bitmap_len, inline_descriptor,
    read_deletion_vector,
};
use alluvium_txlog::table::TableConfiguration;
use arrow_array::cast::AsArray;
use arrow_array::types::UInt64Type;
use arrow_array::{BooleanArray, RecordBatch, UInt64Array};
use rayon::prelude::*;
use roaring::RoaringTreemap;
use serde_json::Value;

use super::change_data::{ChangeDataWriter, ChangeType};
use crate::read::scan::{rewrite_layout, table_layout};
use crate::{Error, Result, Table};

/// New deletions in one live file: physical row positions (may include rows its current
/// DV already deletes; the union is taken).
#[derive(Debug, Clone)]
pub(crate) struct FileDeletes {
    /// The live `add` of the file, as the snapshot holds it.
    pub add: Add,
    /// 0-based physical row positions to delete.
    pub positions: RoaringTreemap,
    /// Of `positions`, the rows whose removal is an update (their new versions are written
    /// elsewhere): a copy-on-write rewrite that records changes writes their old values as
    /// `update_preimage`, the other removed rows as `delete`.
    pub updated: RoaringTreemap,
}

impl FileDeletes {
    /// Deletions of `positions` of `add`'s file, none of them an update.
    pub(crate) fn new(add: Add, positions: RoaringTreemap) -> FileDeletes {
        FileDeletes {
            add,
            positions,
            updated: RoaringTreemap::new(),
        }
    }
}

/// What applying deletions did (for `operationMetrics`).
#[derive(Debug, Default, Clone)]
pub(crate) struct DeleteStats {
    /// Rows newly deleted (not counting rows an old DV already deleted).
    pub rows_deleted: u64,
    /// Rows copied into rewritten files (copy-on-write only).
    pub rows_copied: u64,
    /// Files removed for good (every row deleted, or rewritten by copy-on-write).
    pub files_removed: u64,
    /// New data files (copy-on-write rewrites).
    pub files_added: u64,
    /// Files re-added with a new deletion vector.
    pub dvs_added: u64,
    /// Bytes of new files (data files and the DV file).
    pub bytes_added: u64,
    /// Time spent writing (DV file or rewritten data files).
    pub rewrite_time: Duration,
}

/// How deletions write their files: deletion vectors inline in the log up to a size, and
/// copy-on-write rewrites under a configuration (the table's, with the operation's codec in
/// place of its own: `WriteOptions::compression`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct RewriteSettings<'a> {
    /// The largest serialized DV written inline (0: every DV goes to a file).
    pub(crate) inline_dv_max_bytes: usize,
    /// The table properties rewritten files are written under (codec, statistics columns).
    pub(crate) configuration: &'a std::collections::HashMap<String, String>,
}

/// Whether new deletions are written as deletion vectors: `delta.enableDeletionVectors`
/// is true (PROTOCOL.md l. 1030), the protocol supports the `deletionVectors` reader and
/// writer feature (l. 1025-1027), the table is not append-only (l. 2381-2390) and no
/// Iceberg compatibility is on (l. 1500, 1526).
pub(crate) fn writes_deletion_vectors(snapshot: &Snapshot) -> bool {
    TableConfiguration::new(snapshot.protocol(), snapshot.metadata()).writes_deletion_vectors()
}

/// Adds to `txn` the actions that delete those rows: with DVs (merge-on-read) when
/// `writes_deletion_vectors(snapshot)`, else by rewriting each file without them
/// (copy-on-write). Files whose every row is deleted are simply removed. Every touched file
/// is recorded as read. Files whose positions add nothing to their current DV are left
/// alone. A DV whose serialized bitmap takes at most `settings.inline_dv_max_bytes` goes
/// inline in the log; the others share one DV file. Rewritten files are written under
/// `settings.configuration`.
///
/// With `changes`, a copy-on-write rewrite records the old values of every row it drops:
/// as `update_preimage` for the rows in [`FileDeletes::updated`], as `delete` for the
/// others (DELETE, and MERGE, on a change-data-feed table: the rewrite decodes the whole
/// file anyway, so the operation's own scan needs only the columns it decides on; UPDATE
/// records its own pre-images and passes `None`). Deletion vectors record none: readers
/// derive the deleted rows from the DVs.
///
/// # Errors
/// Unreadable data or DV files, an upload failure (nothing staged then).
pub(crate) fn apply_deletes(
    table: &Table,
    snapshot: &Snapshot,
    txn: &mut Transaction,
    deletes: Vec<FileDeletes>,
    changes: Option<&ChangeDataWriter<'_>>,
    settings: &RewriteSettings<'_>,
) -> Result<DeleteStats> {
    if writes_deletion_vectors(snapshot) {
        apply_with_dvs(table, snapshot, txn, deletes, settings.inline_dv_max_bytes)
    } else {
        apply_copy_on_write(
            table,
            snapshot,
            txn,
            deletes,
            changes,
            settings.configuration,
        )
    }
}

/// One file's outcome under merge-on-read.
struct Planned {
    add: Add,
    /// The full new DV (old ∪ new).
    bitmap: RoaringTreemap,
    /// The file's physical row count.
    physical: u64,
}

fn apply_with_dvs(
    table: &Table,
    snapshot: &Snapshot,
    txn: &mut Transaction,
    deletes: Vec<FileDeletes>,
    inline_dv_max_bytes: usize,
) -> Result<DeleteStats> {
    let started = Instant::now();
    let store = table.store();
    let now = store.now_ms();
    let plan = ReadPlan::all(table_layout(snapshot))?;
    let mut stats = DeleteStats::default();
    let mut planned: Vec<Planned> = Vec::new();
    for FileDeletes { add, positions, .. } in deletes {
        txn.read_file(&add);
        let old = match &add.deletion_vector {
            Some(dv) => read_deletion_vector(store.as_ref(), dv)?,
            None => RoaringTreemap::new(),
        };
        let bitmap = &old | &positions;
        if bitmap.len() == old.len() {
            continue;
        }
        let physical = match num_records(&add) {
            Some(n) => n,
            None => plan.physical_rows(&add)?,
        };
        if bitmap.max().is_some_and(|m| m >= physical) {
            return Err(Error::InvalidArgument(format!(
                "deleting row {} of {}, which has {physical} rows",
                bitmap.max().unwrap_or(0),
                add.path
            )));
        }
        stats.rows_deleted += bitmap.len() - old.len();
        if bitmap.len() >= physical {
            // Every row deleted: a plain remove, no re-add (Spark `isFullyReplaced`).
            txn.remove_file(remove_of(&add, now));
            stats.files_removed += 1;
            continue;
        }
        planned.push(Planned {
            add,
            bitmap,
            physical,
        });
    }
    if planned.is_empty() {
        stats.rewrite_time = started.elapsed();
        return Ok(stats);
    }
    // A DV whose bitmap is as small as a file reference goes inline in the log: no file to
    // upload and sync before the commit, none to fetch when reading.
    let (inline, planned): (Vec<Planned>, Vec<Planned>) = planned
        .into_iter()
        .partition(|p| encoded_bitmap_len(&p.bitmap) <= inline_dv_max_bytes);
    for p in inline {
        let dv = inline_descriptor(&p.bitmap);
        txn.remove_file(remove_of(&p.add, now));
        txn.add_file(readd(p.add, dv, p.physical));
        stats.dvs_added += 1;
    }
    if planned.is_empty() {
        stats.rewrite_time = started.elapsed();
        txn.add_write_time(stats.rewrite_time);
        return Ok(stats);
    }
    let bitmaps: Vec<RoaringTreemap> = planned.iter().map(|p| p.bitmap.clone()).collect();
    let file = DvFileWriter::new(snapshot.properties().random_prefix_length()).finish(&bitmaps)?;
    let key = StorePath::parse(file.path.as_str())
        .map_err(|e| Error::InvalidArgument(format!("deletion vector path {}: {e}", file.path)))?;
    stats.bytes_added += file.bytes.len() as u64;
    // Before the commit: a commit that fails leaves this file unreferenced (VACUUM's).
    store.put_if_absent(&key, file.bytes.into())?;
    for (p, dv) in planned.into_iter().zip(file.descriptors) {
        txn.remove_file(remove_of(&p.add, now));
        txn.add_file(readd(p.add, dv, p.physical));
        stats.dvs_added += 1;
    }
    stats.rewrite_time = started.elapsed();
    txn.add_write_time(stats.rewrite_time);
    Ok(stats)
}

/// The remove of a live file as Spark writes it for DML: its old DV, extended metadata,
/// partition values, size, stats, tags and row-tracking fields.
fn remove_of(add: &Add, now: i64) -> Remove {
    let mut r = Remove::from_add(add, now, true);
    r.stats = add.stats.clone();
    r
}

/// The re-add of `add` with the new DV `dv`: same path, size, modification time,
/// partition values, tags and row-tracking fields; stats with `tightBounds:false` and the
/// physical `numRecords` (PROTOCOL.md l. 1095-1096, 2620-2652).
fn readd(mut add: Add, dv: DeletionVectorDescriptor, physical: u64) -> Add {
    let mut stats = add
        .stats
        .as_deref()
        .and_then(|s| serde_json::from_str::<Value>(s).ok())
        .and_then(|v| match v {
            Value::Object(m) => Some(m),
            _ => None,
        })
        .unwrap_or_default();
    stats.insert("numRecords".into(), Value::from(physical));
    stats.insert("tightBounds".into(), Value::Bool(false));
    add.stats = Some(Value::Object(stats).to_string());
    add.deletion_vector = Some(Box::new(dv));
    add.data_change = true;
    add
}

/// `stats.numRecords` of a live add (the physical row count), if recorded.
fn num_records(add: &Add) -> Option<u64> {
    let stats: Value = serde_json::from_str(add.stats.as_deref()?).ok()?;
    stats.get("numRecords")?.as_u64()
}

/// What one copy-on-write worker did: the files it removed, the coalesced files it wrote.
#[derive(Default)]
struct Rewritten {
    removes: Vec<Remove>,
    adds: Vec<Add>,
    deleted: u64,
    copied: u64,
    write_time: Duration,
}

fn apply_copy_on_write(
    table: &Table,
    snapshot: &Snapshot,
    txn: &mut Transaction,
    deletes: Vec<FileDeletes>,
    changes: Option<&ChangeDataWriter<'_>>,
    configuration: &std::collections::HashMap<String, String>,
) -> Result<DeleteStats> {
    let now = table.store().now_ms();
    // Kept rows keep their row ids and commit versions (row tracking).
    let plan = ReadPlan::all(rewrite_layout(snapshot))?;
    let mut stats = DeleteStats::default();
    for d in &deletes {
        txn.read_file(&d.add);
    }
    // The kept rows of all touched files are coalesced (as delta-rs does): each worker
    // pulls the next touched file, filters it, and appends its kept rows to the worker's
    // own rolling sink, so N touched files give about one output file per worker (more
    // when they pass the target size) instead of N small ones, each costing an upload
    // and its syncs. Memory stays bounded by one decoded input file plus one open output
    // file per worker.
    // (One touched file needs one worker, and asking rayon would start its pool.)
    let workers = if deletes.len() < 2 {
        1
    } else {
        rayon::current_num_threads().clamp(1, deletes.len())
    };
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let ctx = Worker {
        table,
        snapshot,
        plan: &plan,
        deletes: &deletes,
        next: &next,
        stop: &stop,
        now,
        changes,
        configuration,
    };
    let results: Vec<Result<Rewritten>> = if workers == 1 {
        vec![ctx.run()]
    } else {
        (0..workers).into_par_iter().map(|_| ctx.run()).collect()
    };
    let mut done: Vec<Rewritten> = Vec::new();
    let mut failure = None;
    for r in results {
        match r {
            Ok(w) => done.push(w),
            Err(e) => {
                failure.get_or_insert(e);
            }
        }
    }
    if let Some(e) = failure {
        // Nothing of a failed operation stays behind: every file written is deleted (a
        // failed worker already deleted its own).
        for w in &done {
            discard(table.store().as_ref(), &w.adds);
        }
        return Err(e);
    }
    for w in done {
        stats.rows_deleted += w.deleted;
        stats.rows_copied += w.copied;
        stats.files_removed += w.removes.len() as u64;
        stats.files_added += w.adds.len() as u64;
        stats.bytes_added += w.adds.iter().map(|a| a.size.max(0) as u64).sum::<u64>();
        stats.rewrite_time += w.write_time;
        txn.add_write_time(w.write_time);
        for r in w.removes {
            txn.remove_file(r);
        }
        for a in w.adds {
            txn.add_file(a);
        }
    }
    Ok(stats)
}

/// One copy-on-write worker's view of the shared work: the touched files and the index of
/// the next one nobody has taken yet.
struct Worker<'a, 'w> {
    table: &'a Table,
    snapshot: &'a Snapshot,
    plan: &'a ReadPlan,
    deletes: &'a [FileDeletes],
    next: &'a AtomicUsize,
    /// Set by a worker that failed, so the others stop taking files.
    stop: &'a AtomicBool,
    now: i64,
    changes: Option<&'a ChangeDataWriter<'w>>,
    /// What the rewritten files are written under.
    configuration: &'a std::collections::HashMap<String, String>,
}

impl Worker<'_, '_> {
    /// Takes touched files until none is left, writing their kept rows into one rolling
    /// sink. On failure the sink's files are deleted and the others are told to stop.
    fn run(&self) -> Result<Rewritten> {
        let mut sink = FileSink::new(
            SinkTable {
                store: self.table.store().as_ref(),
                schema: &self.plan.layout().schema,
                partition_columns: self.snapshot.partition_columns(),
                configuration: self.configuration,
                column_mapping: self.snapshot.column_mapping(),
            },
            FileSinkOptions {
                target_size: None,
                data_change: true,
            },
        )?
        .materialize_partition_columns(self.plan.layout().materialize_partition_columns)?;
        let mut out = Rewritten::default();
        let taken = (|| -> Result<()> {
            while !self.stop.load(Ordering::Relaxed) {
                let i = self.next.fetch_add(1, Ordering::Relaxed);
                let Some(d) = self.deletes.get(i) else {
                    break;
                };
                self.rewrite_one(d, &mut sink, &mut out)?;
            }
            Ok(())
        })();
        if let Err(e) = taken {
            self.stop.store(true, Ordering::Relaxed);
            sink.abort();
            return Err(e);
        }
        let (adds, write_time) = sink.finish().inspect_err(|_| {
            self.stop.store(true, Ordering::Relaxed);
        })?;
        out.adds = adds;
        out.write_time = write_time;
        Ok(out)
    }

    /// Appends the rows of `d`'s file that `d` does not delete to `sink` and records the
    /// file's removal; leaves the file alone when `d` deletes none of its live rows.
    fn rewrite_one(
        &self,
        d: &FileDeletes,
        sink: &mut FileSink<'_>,
        out: &mut Rewritten,
    ) -> Result<()> {
        let batches = self.plan.read_file_with_positions(&d.add)?;
        let mut kept_batches = Vec::new();
        let (mut deleted, mut kept) = (0u64, 0u64);
        // Both the rows' positions and the deleted positions ascend: one merge walk.
        let mut doomed = d.positions.iter().peekable();
        for (b, rows) in batches {
            let keep: BooleanArray = rows
                .values()
                .iter()
                .map(|r| {
                    while doomed.next_if(|p| p < r).is_some() {}
                    Some(doomed.peek() != Some(r))
                })
                .collect();
            let n = keep.true_count() as u64;
            deleted += b.num_rows() as u64 - n;
            kept += n;
            kept_batches.push((b, rows, keep));
        }
        if deleted == 0 {
            return Ok(());
        }
        for (b, rows, keep) in kept_batches {
            if let Some(c) = self.changes {
                record_dropped(c, &b, &rows, &keep, &d.updated)?;
            }
            if keep.true_count() > 0 {
                sink.write(&arrow_select::filter::filter_record_batch(&b, &keep)?)?;
            }
        }
        out.removes.push(remove_of(&d.add, self.now));
        out.deleted += deleted;
        out.copied += kept;
        Ok(())
    }
}

/// Records the rows of `batch` (at physical `positions`) that `keep` drops: those in
/// `updated` as `update_preimage`, the others as `delete`.
fn record_dropped(
    changes: &ChangeDataWriter<'_>,
    batch: &RecordBatch,
    positions: &UInt64Array,
    keep: &BooleanArray,
    updated: &RoaringTreemap,
) -> Result<()> {
    let gone = arrow::compute::not(keep)?;
    let rows = arrow_select::filter::filter_record_batch(batch, &gone)?;
    if updated.is_empty() {
        return changes.write_by_name(&rows, ChangeType::Delete);
    }
    let at = arrow_select::filter::filter(positions, &gone)?;
    let is_update: BooleanArray = at
        .as_primitive::<UInt64Type>()
        .values()
        .iter()
        .map(|p| Some(updated.contains(*p)))
        .collect();
    changes.write_by_name(
        &arrow_select::filter::filter_record_batch(&rows, &is_update)?,
        ChangeType::UpdatePreimage,
    )?;
    changes.write_by_name(
        &arrow_select::filter::filter_record_batch(&rows, &arrow::compute::not(&is_update)?)?,
        ChangeType::Delete,
    )
}
