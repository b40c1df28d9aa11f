//! DELETE by predicate ([`Table::delete`]): files whose partition values or statistics prove
//! that every row matches are removed whole; in the other candidate files the matching rows
//! are found (with their physical positions) and deleted through [`apply_deletes`]: a
//! deletion vector when the table allows it, a copy-on-write rewrite otherwise. It returns
//! the [`DmlOutcome`] UPDATE and MERGE return, with DELETE's numeric metrics.
//!
//! It owns choosing the rows to delete; how they are deleted is `rows`', and the commit is
//! `commit`'s. No other operation imports it.

use std::time::Instant;

use crate::Snapshot;
use alluvium_datafile::ReadPlan;
use alluvium_expr::{Expr, all_match, parse_expr};
use alluvium_mvcc::Transaction;
use alluvium_txlog::actions::{Add, Remove};
use rayon::prelude::*;
use roaring::RoaringTreemap;

use crate::commit::{
    DmlOutcome, MetricSet, WriteOptions, finish_dml, outcome_if_done, with_write_codec,
};
use crate::read::scan::table_layout;
use crate::rows::{
    FileDeletes, RewriteSettings, apply_deletes, change_data, live_rows, writes_deletion_vectors,
};
use crate::{Result, Table};

impl Table {
    /// Deletes the rows matching `predicate`: files whose every row matches are removed
    /// whole; in the others the matching rows are deleted with deletion vectors when the
    /// table enables them (`delta.enableDeletionVectors`), else by rewriting the file
    /// without them. The predicate is recorded in the commit in its text form (`Expr`'s
    /// `Display`). The outcome carries Delta's metrics (`numDeletedRows`,
    /// `numDeletionVectorsAdded`, `numRemovedFiles`, `numCopiedRows`, ...), as UPDATE's and
    /// MERGE's do.
    ///
    /// # Errors
    /// Predicates over unknown columns, append-only tables, unsupported features and commit
    /// errors.
    pub fn delete(&self, predicate: &Expr, options: &WriteOptions) -> Result<DmlOutcome> {
        self.delete_expr(predicate, &predicate.to_string(), options)
    }

    /// [`delete`](Self::delete) with the predicate in the `--filter` language (recorded in
    /// the commit as written).
    ///
    /// # Errors
    /// As [`delete`](Self::delete); predicates that do not parse.
    pub fn delete_str(&self, predicate: &str, options: &WriteOptions) -> Result<DmlOutcome> {
        self.delete_expr(&parse_expr(predicate)?, predicate, options)
    }

    /// Deletes the rows matching `expr`, recording `predicate` as its text.
    fn delete_expr(
        &self,
        expr: &Expr,
        predicate: &str,
        options: &WriteOptions,
    ) -> Result<DmlOutcome> {
        let snapshot = self.read_snapshot(options)?;
        let mut txn = Transaction::new(snapshot.inner(), "DELETE");
        txn.set_parameter(
            "predicate",
            serde_json::to_string(&vec![predicate]).unwrap_or_default(),
        );
        if let Some(o) = outcome_if_done(&mut txn, &snapshot, options) {
            return Ok(DmlOutcome::skipped(o));
        }
        let configuration = with_write_codec(snapshot.metadata().configuration.clone(), options);
        let settings = RewriteSettings {
            inline_dv_max_bytes: options.inline_dv_max_bytes(),
            configuration: &configuration,
        };
        let metrics = stage_delete(self, &snapshot, &mut txn, expr, &settings)?;
        finish_dml(self, txn, options, metrics)
    }
}

/// Stages in `txn` the deletion of the rows of `snapshot` matching `expr`, and returns
/// Delta's `operationMetrics` for it (numDeletedRows, numRemovedFiles, numAddedFiles,
/// numDeletionVectorsAdded, numCopiedRows, numAddedChangeFiles, executionTimeMs,
/// scanTimeMs, rewriteTimeMs). Records the predicate and every candidate file as read.
/// DVs go inline and files are rewritten as `settings` say (`apply_deletes`).
///
/// # Errors
/// Predicates over unknown columns, unreadable files, upload failures.
fn stage_delete(
    table: &Table,
    snapshot: &Snapshot,
    txn: &mut Transaction,
    expr: &Expr,
    settings: &RewriteSettings<'_>,
) -> Result<MetricSet> {
    let started = Instant::now();
    let pred = snapshot.inner().bind(expr)?;
    txn.read_predicate(pred.clone());
    // Files are skipped also through generated partition columns of the predicate's columns.
    let prune = crate::read::scan::generated::pruning_predicate(&pred, snapshot);
    let now = table.store().now_ms();
    let mut whole: Vec<Add> = Vec::new();
    let mut partial: Vec<Add> = Vec::new();
    // The statistics parsed for `prune` cover `pred`'s columns too (`prune` is `pred` and
    // what it implies), so they judge `all_match` as a parse for `pred` would.
    for m in snapshot.inner().files_matching(&prune) {
        if all_match(&pred, &m.summary()) {
            whole.push(m.file.to_add());
        } else {
            partial.push(m.file.to_add());
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
            settings.configuration,
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
    let find = |a: &Add| -> Result<Option<FileDeletes>> {
        let mut positions = RoaringTreemap::new();
        for (_, rows) in plan.read_file_with_positions(a)? {
            positions.extend(rows.values().iter().copied());
        }
        Ok((!positions.is_empty()).then(|| FileDeletes::new(a.clone(), positions)))
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
    let stats = match apply_deletes(table, snapshot, txn, deletes, changes.as_ref(), settings) {
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
