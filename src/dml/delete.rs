//! DELETE by predicate: files whose partition values or statistics prove that every row
//! matches are removed whole; in the other candidate files the matching rows are found
//! (with their physical positions) and deleted through [`apply_deletes`]: a deletion
//! vector when the table allows it, a copy-on-write rewrite otherwise.

use std::time::Instant;

use crate::Snapshot;
use alluvium_datafile::ReadPlan;
use alluvium_expr::{Expr, FileSummary, StatsNeeded, all_match, bind, may_match};
use alluvium_mvcc::Transaction;
use alluvium_txlog::actions::{Add, Remove};
use alluvium_txlog::stats::FileStats;
use rayon::prelude::*;
use roaring::RoaringTreemap;

use super::change_data;
use super::deletes::{FileDeletes, apply_deletes, writes_deletion_vectors};
use crate::commit::MetricSet;
use crate::scan::table_layout;
use crate::{Result, Table};

/// Stages in `txn` the deletion of the rows of `snapshot` matching `expr`, and returns
/// Delta's `operationMetrics` for it (numDeletedRows, numRemovedFiles, numAddedFiles,
/// numDeletionVectorsAdded, numCopiedRows, numAddedChangeFiles, executionTimeMs,
/// scanTimeMs, rewriteTimeMs). Records the predicate and every candidate file as read.
/// DVs of at most `inline_dv_max_bytes` go inline (`apply_deletes`).
///
/// # Errors
/// Predicates over unknown columns, unreadable files, upload failures.
pub(crate) fn stage_delete(
    table: &Table,
    snapshot: &Snapshot,
    txn: &mut Transaction,
    expr: &Expr,
    inline_dv_max_bytes: usize,
) -> Result<MetricSet> {
    let started = Instant::now();
    let pred = bind(
        expr,
        snapshot.schema(),
        snapshot.partition_columns(),
        snapshot.column_mapping(),
    )?;
    txn.read_predicate(pred.clone());
    // Files are skipped also through generated partition columns of the predicate's columns.
    let prune = crate::scan::generated::pruning_predicate(&pred, snapshot);
    let now = table.store().now_ms();
    let mut whole: Vec<&Add> = Vec::new();
    let mut partial: Vec<&Add> = Vec::new();
    let needed = StatsNeeded::of(&prune);
    for a in snapshot.files() {
        let stats = needed.parse(a.stats.as_deref());
        let summary = FileSummary {
            partition_values: &a.partition_values,
            stats: stats.as_ref(),
        };
        if !may_match(&prune, &summary) {
            continue;
        }
        if all_match(&pred, &summary) {
            whole.push(a);
        } else {
            partial.push(a);
        }
    }
    // Change data feed, copy-on-write: rewriting part of a file needs cdc files, and a
    // commit with any must record all its changes, so files proven wholly deleted are
    // read for their rows too (Delta Spark rewrites every file with a matching row; only
    // its metadata-only DELETE removes files without cdc, as here when nothing is partial).
    let changes = match writes_deletion_vectors(snapshot) {
        true => None,
        false => change_data::writer_for(
            table,
            snapshot,
            snapshot.schema(),
            &snapshot.metadata().configuration,
            None,
        )?,
    };
    if changes.is_some() && !partial.is_empty() {
        partial.append(&mut whole);
    }
    let mut deleted_rows: u64 = 0;
    let mut removed_whole: u64 = 0;
    let no_columns: &[String] = &[];
    let plan = ReadPlan::new(table_layout(snapshot), Some(no_columns), Some(pred.clone()))?;
    for a in &whole {
        txn.read_file(a);
        deleted_rows += live_rows(&plan, a)?;
        let mut r = Remove::from_add(a, now, true);
        r.stats = a.stats.clone();
        txn.remove_file(r);
        removed_whole += 1;
    }
    // Finding the matching rows reads only the predicate's columns, files in parallel.
    let find = |a: &&Add| -> Result<Option<FileDeletes>> {
        let mut positions = RoaringTreemap::new();
        for (_, rows) in plan.read_file_with_positions(a)? {
            positions.extend(rows.values().iter().copied());
        }
        Ok((!positions.is_empty()).then(|| FileDeletes::new((*a).clone(), positions)))
    };
    // One file (a point delete) is read on this thread: the pool is not started for it.
    let found: Vec<Result<Option<FileDeletes>>> = if partial.len() < 2 {
        partial.iter().map(find).collect()
    } else {
        partial.par_iter().map(find).collect()
    };
    let mut deletes = Vec::new();
    for (a, f) in partial.iter().zip(found) {
        // A file read and found without matches is still part of what DELETE read.
        txn.read_file(a);
        if let Some(d) = f? {
            deletes.push(d);
        }
    }
    let scan_time = started.elapsed();
    let stats = match apply_deletes(
        table,
        snapshot,
        txn,
        deletes,
        changes.as_ref(),
        inline_dv_max_bytes,
    ) {
        Ok(s) => s,
        Err(e) => {
            if let Some(c) = changes {
                c.abort();
            }
            return Err(e);
        }
    };
    let change_files = change_data::stage(txn, change_data::close(changes, Ok(()))?);
    deleted_rows += stats.rows_deleted;
    let mut metrics = MetricSet::default();
    metrics.set("numDeletedRows", deleted_rows);
    metrics.set("numRemovedFiles", removed_whole + stats.files_removed);
    metrics.set("numAddedFiles", stats.files_added);
    metrics.set("numDeletionVectorsAdded", stats.dvs_added);
    metrics.set("numCopiedRows", stats.rows_copied);
    metrics.set("numAddedChangeFiles", change_files);
    metrics.set("numAddedBytes", stats.bytes_added);
    metrics.set("executionTimeMs", millis(started.elapsed()));
    metrics.set("scanTimeMs", millis(scan_time));
    metrics.set("rewriteTimeMs", millis(stats.rewrite_time));
    Ok(metrics)
}

fn millis(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
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
