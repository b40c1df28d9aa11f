//! UPDATE: `SET col = expr, …` on the rows matching an optional predicate, planned
//! ([`plan`]: predicate, new values, change capture, candidate files; nothing read) and
//! then executed here. The matched rows' new versions go to new data files; the old
//! versions are deleted from their files by `stage_changes` (a deletion vector, or a
//! copy-on-write rewrite).

mod plan;

use std::time::Instant;

use alluvium_datafile::ReadPlan;
use alluvium_datafile::sink::{FileSink, FileSinkOptions, SinkTable};
use alluvium_expr::{Expr, parse_expr};
use alluvium_mvcc::Transaction;
use roaring::RoaringTreemap;

use crate::commit::{DmlOutcome, MetricSet, finish_dml, outcome_if_done, with_write_codec};
use crate::read::scan::rewrite_layout;
use crate::rows::assign::{Assignment, parse_assignments};
use crate::rows::change_data::{self, ChangeType};
use crate::rows::deletes::{FileDeletes, RewriteSettings};
use crate::rows::row_ids::TrackedRows;
use crate::rows::rules::ColumnRules;
use crate::rows::{Staged, for_each_file_read, stage_changes};
use crate::{Result, Snapshot, Table, WriteOptions};
use plan::{ChangeCapture, UpdatePlan, UpdateTable};

impl Table {
    /// Sets columns of the rows matching `predicate` (every row when `None`) to new values,
    /// as one commit (operation `UPDATE`). Each value is an expression over the row's
    /// current columns; names and types are checked before any file is written (a number
    /// may be stored in any numeric column, and is an error at run time if it does not
    /// fit). Matched rows are deleted from their files with a deletion vector when the
    /// table has `delta.enableDeletionVectors=true`, by rewriting the file otherwise; their
    /// new versions go to new files.
    ///
    /// ```no_run
    /// # fn main() -> alluvium::Result<()> {
    /// use alluvium::{Table, WriteOptions, parse_expr};
    /// let table = Table::open("path/to/table")?;
    /// let done = table.update(
    ///     [("value", parse_expr("value + 1")?), ("key", parse_expr("'x'")?)],
    ///     Some(&parse_expr("id % 100 = 0")?),
    ///     &WriteOptions::default(),
    /// )?;
    /// println!("{:?}", done.metric("numUpdatedRows"));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// Unknown columns, a column assigned twice, values of a type the column cannot hold;
    /// evaluation errors (overflow, division by zero, NULL into a NOT NULL column); commit
    /// conflicts and storage errors. On a table with change data feed on, every updated
    /// row is also recorded as an `update_preimage` and `update_postimage` change.
    pub fn update<S: Into<String>>(
        &self,
        assignments: impl IntoIterator<Item = (S, Expr)>,
        predicate: Option<&Expr>,
        options: &WriteOptions,
    ) -> Result<DmlOutcome> {
        let assignments: Vec<Assignment> = assignments
            .into_iter()
            .map(|(c, e)| Assignment::new(c, e))
            .collect();
        let text = predicate.map(Expr::to_string);
        // One instant for `current_timestamp` in the predicate and every assignment.
        alluvium_expr::at_statement_time(chrono::Utc::now().timestamp_micros(), || {
            update(self, &assignments, predicate, text.as_deref(), options)
        })
    }

    /// [`update`](Self::update) with the assignments and the predicate as text:
    /// `update_str("a = a + 1, b = 'x'", Some("id > 10"), …)` (the predicate is recorded in
    /// the commit as written).
    ///
    /// # Errors
    /// As [`update`](Self::update); texts that do not parse.
    pub fn update_str(
        &self,
        set: &str,
        predicate: Option<&str>,
        options: &WriteOptions,
    ) -> Result<DmlOutcome> {
        let assignments = parse_assignments(set)?;
        let pred = predicate.map(parse_expr).transpose()?;
        alluvium_expr::at_statement_time(chrono::Utc::now().timestamp_micros(), || {
            update(self, &assignments, pred.as_ref(), predicate, options)
        })
    }
}

fn update(
    table: &Table,
    assignments: &[Assignment],
    predicate: Option<&Expr>,
    predicate_text: Option<&str>,
    options: &WriteOptions,
) -> Result<DmlOutcome> {
    let started = Instant::now();
    let snapshot = table.read_snapshot(options)?;
    let mut txn = Transaction::new(snapshot.inner(), "UPDATE");
    if let Some(o) = outcome_if_done(&mut txn, &snapshot, options) {
        return Ok(DmlOutcome::skipped(o));
    }
    let mut plan = UpdatePlan::new(
        UpdateTable {
            schema: snapshot.schema(),
            partition_columns: snapshot.partition_columns(),
            column_mapping: snapshot.column_mapping(),
            rules: ColumnRules::for_snapshot(&snapshot)?,
            change_data_feed: change_data::records_changes(&snapshot.metadata().configuration),
        },
        assignments,
        predicate,
        predicate_text,
    )?;
    plan.select_files(&snapshot);
    for (key, value) in plan.parameters() {
        txn.set_parameter(key, value);
    }
    txn.read_predicate(plan.predicate.clone());
    execute(table, &snapshot, txn, plan, options, started)
}

/// Runs a planned UPDATE: each candidate file is read (the predicate's columns first, the
/// matched rows' other columns after), the matched rows' new versions written, their old
/// positions deleted, and the whole committed.
fn execute(
    table: &Table,
    snapshot: &Snapshot,
    mut txn: Transaction,
    plan: UpdatePlan,
    options: &WriteOptions,
    started: Instant,
) -> Result<DmlOutcome> {
    let schema = snapshot.schema();
    let partitions = snapshot.partition_columns();
    let mode = snapshot.column_mapping();
    let candidates = plan.candidates.as_deref().unwrap_or_default();
    // Row tracking: target rows are read with their stable row ids, and updated rows keep
    // them (see `row_ids`).
    let layout = rewrite_layout(snapshot);
    let tracked = TrackedRows::new(schema.fields.len(), layout.schema.fields.len());
    // New and rewritten files take the operation's codec, when it names one.
    let configuration = with_write_codec(snapshot.metadata().configuration.clone(), options);
    let mut sink = FileSink::new(
        SinkTable {
            store: table.store().as_ref(),
            schema: &layout.schema,
            partition_columns: partitions,
            configuration: &configuration,
            column_mapping: mode,
        },
        FileSinkOptions {
            target_size: options.target_file_size,
            data_change: true,
        },
    )?
    .materialize_partition_columns(layout.materialize_partition_columns)?;
    let changes = match plan.capture {
        ChangeCapture::PreAndPostImages => change_data::writer_for(
            table,
            snapshot,
            schema,
            &configuration,
            options.target_file_size,
        )?,
        ChangeCapture::Off => None,
    };
    let mut updated = 0u64;
    let mut deletes = Vec::new();
    let scan_started = Instant::now();
    let scanned = (|| -> Result<()> {
        // A plan with the predicate reads its columns first and decodes the other columns
        // of the matched rows only (their full old values, from which the new versions
        // are computed); a file without a match costs one narrow read.
        let read = ReadPlan::new(layout.clone(), None, Some(plan.predicate.clone()))?;
        for_each_file_read(&read, candidates, |add, matched| {
            txn.read_file(add);
            let mut touched = RoaringTreemap::new();
            for (batch, positions) in matched {
                touched.extend(positions.values().iter().copied());
                updated += batch.num_rows() as u64;
                let new_rows = plan.projection.apply(&batch)?;
                sink.write(&tracked.updated(new_rows.clone(), &batch)?)?;
                if let Some(c) = &changes {
                    c.write(&batch, ChangeType::UpdatePreimage)?;
                    c.write(&new_rows, ChangeType::UpdatePostimage)?;
                }
            }
            if !touched.is_empty() {
                deletes.push(FileDeletes::new(add.clone(), touched));
            }
            Ok(())
        })
    })();
    let scan_ms = scan_started.elapsed().as_millis() as u64;
    let rewrite_started = Instant::now();
    let Staged {
        new_files,
        new_bytes,
        deletes: stats,
        change_files,
    } = stage_changes(
        table,
        snapshot,
        &mut txn,
        sink,
        scanned,
        deletes,
        changes,
        false,
        &RewriteSettings {
            inline_dv_max_bytes: options.inline_dv_max_bytes(),
            configuration: &configuration,
        },
    )?;
    let mut m = MetricSet::default();
    m.set("numUpdatedRows", updated);
    m.set("numCopiedRows", stats.rows_copied);
    m.set("numAddedFiles", new_files + stats.files_added);
    m.set("numRemovedFiles", stats.files_removed);
    m.set("numDeletionVectorsAdded", stats.dvs_added);
    m.set("numAddedChangeFiles", change_files);
    m.set("numAddedBytes", new_bytes + stats.bytes_added);
    m.set("scanTimeMs", scan_ms);
    m.set(
        "rewriteTimeMs",
        rewrite_started.elapsed().as_millis() as u64,
    );
    m.set("executionTimeMs", started.elapsed().as_millis() as u64);
    finish_dml(table, txn, options, m)
}
