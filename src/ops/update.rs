//! UPDATE: `SET col = expr, …` on the rows matching an optional predicate. The matched
//! rows' new versions go to new data files; the old versions are deleted from their files
//! by `apply_deletes` (a deletion vector, or a copy-on-write rewrite).

use std::time::Instant;

use alluvium_datafile::ReadPlan;
use alluvium_datafile::sink::{FileSink, FileSinkOptions, SinkTable};
use alluvium_expr::{Expr, Predicate, bind, bind_assignment, parse_expr};
use alluvium_mvcc::Transaction;
use alluvium_txlog::actions::Add;

use roaring::RoaringTreemap;

use crate::commit::{DmlOutcome, MetricSet, finish_dml, outcome_if_done};
use crate::read::scan::rewrite_layout;
use crate::rows::assign::{Assignment, assigned, check_distinct, parse_assignments};
use crate::rows::change_data::{self, ChangeType};
use crate::rows::deletes::FileDeletes;
use crate::rows::project::{ColumnValue, Projection};
use crate::rows::row_ids::TrackedRows;
use crate::rows::rules::{ColumnRules, RowKind};
use crate::rows::{Staged, for_each_file_read, stage_changes};
use crate::{Error, Result, Table, WriteOptions};

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
    if let Some(p) = predicate_text {
        txn.set_parameter(
            "predicate",
            serde_json::to_string(&vec![p]).unwrap_or_default(),
        );
    }
    if let Some(o) = outcome_if_done(&mut txn, &snapshot, options) {
        return Ok(DmlOutcome::skipped(o));
    }
    if assignments.is_empty() {
        return Err(Error::InvalidArgument(
            "UPDATE needs at least one assignment".into(),
        ));
    }
    check_distinct(assignments)?;
    let schema = snapshot.schema();
    let partitions = snapshot.partition_columns();
    let mode = snapshot.column_mapping();
    for a in assignments {
        if schema.field(&a.column).is_none() {
            let names = schema.fields.iter().map(|f| f.name.as_str());
            return Err(Error::InvalidArgument(format!(
                "UPDATE: the table has no column `{}`{}",
                a.column,
                alluvium_expr::nearest_name(&a.column, names)
                    .map(|n| format!("; did you mean `{n}`?"))
                    .unwrap_or_default()
            )));
        }
    }
    let rules = ColumnRules::for_snapshot(&snapshot)?;
    for a in assignments {
        rules.check_assignable(&a.column)?;
    }
    let mut values = Vec::with_capacity(schema.fields.len());
    for f in &schema.fields {
        let expr = match assigned(assignments, &f.name) {
            Some(a) => a.value.clone(),
            // A generated column the UPDATE does not set is computed again from the new
            // values of its sources (as Delta Spark does).
            None if rules.is_generated(&f.name) => {
                values.push(ColumnValue::Null);
                continue;
            }
            None => Expr::Column(vec![f.name.clone()]),
        };
        values.push(ColumnValue::Expr(bind_assignment(
            &expr,
            schema,
            partitions,
            mode,
            &f.data_type,
        )?));
    }
    let projection = Projection::new(schema, values, rules, RowKind::Update)?;
    let pred: Predicate = match predicate {
        Some(e) => bind(e, schema, partitions, mode)?,
        None => Predicate::Const(Some(true)),
    };
    // Files are skipped also through generated partition columns of the predicate's columns.
    let prune = crate::read::scan::generated::pruning_predicate(&pred, &snapshot);
    let candidates: Vec<Add> = snapshot
        .inner()
        .files_matching(&prune)
        .map(|m| m.add.clone())
        .collect();
    txn.read_predicate(pred.clone());

    // Row tracking: target rows are read with their stable row ids, and updated rows keep
    // them (see `row_ids`).
    let layout = rewrite_layout(&snapshot);
    let tracked = TrackedRows::new(schema.fields.len(), layout.schema.fields.len());
    let mut sink = FileSink::new(
        SinkTable {
            store: table.store().as_ref(),
            schema: &layout.schema,
            partition_columns: partitions,
            configuration: &snapshot.metadata().configuration,
            column_mapping: mode,
        },
        FileSinkOptions {
            target_size: options.target_file_size,
            data_change: true,
        },
    )?
    .materialize_partition_columns(layout.materialize_partition_columns)?;
    let changes = change_data::writer_for(
        table,
        &snapshot,
        schema,
        &snapshot.metadata().configuration,
        options.target_file_size,
    )?;
    let mut updated = 0u64;
    let mut deletes = Vec::new();
    let scan_started = Instant::now();
    let scanned = (|| -> Result<()> {
        // A plan with the predicate reads its columns first and decodes the other columns
        // of the matched rows only (their full old values, from which the new versions
        // are computed); a file without a match costs one narrow read.
        let plan = ReadPlan::new(layout.clone(), None, Some(pred.clone()))?;
        for_each_file_read(&plan, &candidates, |add, matched| {
            txn.read_file(add);
            let mut touched = RoaringTreemap::new();
            for (batch, positions) in matched {
                touched.extend(positions.values().iter().copied());
                updated += batch.num_rows() as u64;
                let new_rows = projection.apply(&batch)?;
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
        &snapshot,
        &mut txn,
        sink,
        scanned,
        deletes,
        changes,
        false,
        options.inline_dv_max_bytes(),
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
