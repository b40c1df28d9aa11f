//! Writing new rows to an existing table: append, overwrite of the whole table, and
//! overwrite of the rows matching a predicate (`replaceWhere`, whose old rows are removed by
//! copy-on-write here or with deletion vectors in [`replace_dv`]). Each is one transaction
//! (SPEC.md §7).
//!
//! An operation reads the latest snapshot and plans the write once the first batch's schema
//! is known ([`plan`]: mode, partitioning, schema decision, `replaceWhere` predicate and
//! removal), then writes its data files, stages the actions and records what it read, and
//! commits through the shared tail (`commit`). Conflicts are
//! returned to the caller, typed and saying whether re-running the operation is safe. It
//! must not know the other operations.

pub(crate) mod overwrite_schema;
mod plan;
mod replace_dv;

use alluvium_datafile::sink::{FileSink, FileSinkOptions, SinkTable, discard};
use alluvium_expr::evaluate;
use alluvium_expr::{Expr, Predicate, parse_expr};
use alluvium_mvcc::Transaction;
use alluvium_txlog::actions::{Add, Remove};
use alluvium_txlog::stats::FileStats;
use arrow_array::{BooleanArray, RecordBatch};

use crate::commit::{
    WriteOptions, WriteOutcome, evolve_schema, finish, outcome_if_done, with_write_codec,
};
use crate::rows::change_data::{self, ChangeDataWriter, ChangeType};
use crate::rows::source::{self, IntoBatch};
use crate::rows::{Conform, feed, input, rules};
use crate::{Error, Result, Snapshot, Table};
use plan::{Removal, WriteMode, WritePlan, WriteTable};

impl Table {
    /// Appends `batches` (a blind append unless the schema is merged). The input is
    /// streamed: plain batches, or the `Result` items of a fallible source such as an Arrow
    /// `RecordBatchReader` (see [`IntoBatch`]); a source that fails ends the write with its
    /// error and nothing committed.
    ///
    /// # Errors
    /// Schema mismatches, unsupported writer features, the source's failure, and commit
    /// errors.
    pub fn append<I>(&self, batches: I, options: &WriteOptions) -> Result<WriteOutcome>
    where
        I: IntoIterator,
        I::Item: IntoBatch,
    {
        let snapshot = self.read_snapshot(options)?;
        self.write_batches(&snapshot, batches, options, WriteMode::Append)
    }

    /// Replaces the whole table with `batches`, or, with `predicate`, only the rows matching
    /// it (`replaceWhere`: every new row must match the predicate). The predicate is
    /// recorded in the commit in its text form (`Expr`'s `Display`). On a table that writes
    /// deletion vectors the old matching rows of partially matching files are deleted with
    /// DVs, as DELETE deletes them; otherwise those files are rewritten.
    ///
    /// # Errors
    /// As [`append`](Self::append); predicates over unknown columns; new rows outside the
    /// predicate.
    pub fn overwrite<I>(
        &self,
        batches: I,
        predicate: Option<&Expr>,
        options: &WriteOptions,
    ) -> Result<WriteOutcome>
    where
        I: IntoIterator,
        I::Item: IntoBatch,
    {
        let snapshot = self.read_snapshot(options)?;
        let filter = predicate.map(|e| (e.clone(), e.to_string()));
        self.write_batches(&snapshot, batches, options, WriteMode::Overwrite(filter))
    }

    /// [`overwrite`](Self::overwrite) with the predicate in the `--filter` language
    /// (recorded in the commit as written).
    ///
    /// # Errors
    /// As [`overwrite`](Self::overwrite); predicates that do not parse.
    pub fn overwrite_str<I>(
        &self,
        batches: I,
        predicate: Option<&str>,
        options: &WriteOptions,
    ) -> Result<WriteOutcome>
    where
        I: IntoIterator,
        I::Item: IntoBatch,
    {
        let snapshot = self.read_snapshot(options)?;
        let filter = match predicate {
            Some(p) => Some((parse_expr(p)?, p.to_string())),
            None => None,
        };
        self.write_batches(&snapshot, batches, options, WriteMode::Overwrite(filter))
    }

    fn write_batches<I>(
        &self,
        snapshot: &Snapshot,
        batches: I,
        options: &WriteOptions,
        mode: WriteMode,
    ) -> Result<WriteOutcome>
    where
        I: IntoIterator,
        I::Item: IntoBatch,
    {
        let mut txn = Transaction::new(snapshot.inner(), "WRITE");
        if let Some(o) = outcome_if_done(&mut txn, snapshot, options) {
            return Ok(o);
        }
        let mut rest = source::batches(batches);
        // Schema enforcement (and evolution) is decided on the first batch; every batch must
        // then agree with the resulting schema. Nothing is written before it is read.
        let first = rest.next().transpose()?;
        let plan = WritePlan::new(
            &WriteTable {
                schema: snapshot.schema(),
                partition_columns: snapshot.partition_columns(),
                column_mapping: snapshot.column_mapping(),
                deletion_vectors: crate::rows::writes_deletion_vectors(snapshot),
            },
            first.as_ref().map(|b| b.schema()).as_deref(),
            mode,
            options.merge_schema,
            &mut |schema, new_fields| {
                let mut evolved = schema.clone();
                evolve_schema(snapshot, &mut txn, &mut evolved, new_fields);
                evolved
            },
        )?;
        for (key, value) in plan.parameters() {
            txn.set_parameter(key, value);
        }
        let batches = first.map(Ok).into_iter().chain(rest);
        self.write_planned(snapshot, txn, batches, plan, options)
    }

    /// Runs a planned write: removes the rows it replaces, streams the batches into new
    /// files (checked against the plan's schema and the column rules), stages and commits.
    fn write_planned(
        &self,
        snapshot: &Snapshot,
        mut txn: Transaction,
        batches: impl Iterator<Item = Result<RecordBatch>>,
        plan: WritePlan,
        options: &WriteOptions,
    ) -> Result<WriteOutcome> {
        let schema = &plan.schema;
        let partitions = &plan.partition_columns;
        let replace_where = plan.replace_where.as_ref().map(|(p, _)| p);
        let replace_text = plan.replace_where.as_ref().map(|(_, t)| t.as_str());
        let target = input::logical_schema(schema)?;
        let configuration = txn
            .effective_metadata()
            .map(|m| m.configuration.clone())
            .unwrap_or_default();
        // Built before any file is written: a rule alluvium cannot apply exactly refuses
        // the write here.
        // Of the protocol, partitioning and schema the commit will have (an overwrite of the
        // schema changes all three).
        let column_rules = rules::ColumnRules::of_table(
            txn.effective_protocol().unwrap_or(snapshot.protocol()),
            partitions,
            snapshot.column_mapping(),
            schema,
            &configuration,
        )?;
        // replaceWhere removes the matching rows first, so that it knows whether the commit
        // needs change-data files before the new rows are written: Delta Spark's
        // WriteIntoDelta runs its DELETE first and, when that DELETE wrote cdc files, writes
        // the new rows as `insert` change rows too (a commit with cdc files must hold all
        // its changes, PROTOCOL.md "Change Data Files").
        // The new rows' files (and change-data files) take the write's codec, when it names
        // one.
        let file_configuration = with_write_codec(configuration.clone(), options);
        let changes = match plan.removal {
            Removal::CopyOnWrite => {
                change_data::writer_for(self, snapshot, schema, &file_configuration, None)?
            }
            _ => None,
        };
        let mut record_inserts = false;
        if let Some(p) = replace_where {
            txn.read_predicate(p.clone());
            // With deletion vectors the matching rows are deleted as DELETE deletes
            // them (as Delta's replaceWhere runs its DELETE), else files are rewritten.
            let removed = if plan.removal == Removal::DeletionVectors {
                replace_dv::delete_matching_with_dvs(
                    self,
                    snapshot,
                    &mut txn,
                    p,
                    options.inline_dv_max_bytes(),
                )
                .map(|_| false)
            } else {
                remove_matching(self, snapshot, &mut txn, p, options, changes.as_ref())
                    .map(|m| m.wrote_changes)
            };
            match removed {
                Ok(w) => record_inserts = w,
                Err(e) => {
                    discard(self.store().as_ref(), txn.added_files());
                    if let Some(c) = changes {
                        c.abort();
                    }
                    return Err(e);
                }
            }
        }
        // The new files' names are made durable by the commit, once for all of them (and
        // once for a whole group commit), not once per file.
        let mut sink = FileSink::new(
            SinkTable {
                store: self.store().as_ref(),
                schema,
                partition_columns: partitions,
                configuration: &file_configuration,
                column_mapping: snapshot.column_mapping(),
            },
            FileSinkOptions {
                target_size: options.target_file_size,
                data_change: true,
            },
        )?
        .materialize_partition_columns(crate::rows::materializes(snapshot))?
        .defer_name_sync(true);
        txn.set_names_deferred();
        let result = feed(
            &mut sink,
            batches,
            &Conform {
                schema,
                partitions,
                target: &target,
                rules: &column_rules,
            },
            |b| {
                if let Some(p) = replace_where {
                    let m = evaluate(p, b)?;
                    if m.true_count() != b.num_rows() {
                        // The first row the predicate does not hold for (FALSE or NULL).
                        let first = (0..m.len())
                            .find(|&i| !(arrow_array::Array::is_valid(&m, i) && m.value(i)))
                            .unwrap_or(0);
                        return Err(Error::InvalidArgument(format!(
                            "replaceWhere: the new row {} does not match the overwrite predicate {}; every new row must",
                            rules::row::render(b, first),
                            replace_text.unwrap_or("")
                        )));
                    }
                }
                if record_inserts && let Some(c) = &changes {
                    c.write(b, ChangeType::Insert)?;
                }
                Ok(())
            },
        );
        let rows = *result.as_ref().unwrap_or(&0);
        let finished = match result {
            Err(e) => {
                sink.abort();
                if let Some(c) = changes {
                    c.abort();
                }
                Err(e)
            }
            Ok(_) => match change_data::close(changes, Ok(())) {
                Err(e) => {
                    sink.abort();
                    Err(e)
                }
                Ok(cdcs) => match sink.finish() {
                    Ok(r) => Ok((r, cdcs)),
                    Err(e) => {
                        change_data::discard_files(self.store().as_ref(), &cdcs);
                        Err(Error::from(e))
                    }
                },
            },
        };
        let ((adds, elapsed), cdcs) = match finished {
            Ok(r) => r,
            Err(e) => {
                discard(self.store().as_ref(), txn.added_files());
                return Err(e);
            }
        };
        let change_files = change_data::stage(&mut txn, cdcs);
        txn.add_write_time(elapsed);
        if let Err(e) = column_rules.stage_identity(snapshot, &mut txn) {
            discard(self.store().as_ref(), txn.added_files());
            discard(self.store().as_ref(), &adds);
            return Err(e);
        }
        match plan.removal {
            Removal::Nothing => {}
            Removal::WholeTable => remove_every_file(snapshot, &mut txn, self.store().now_ms()),
            // The rows matching the predicate were removed before the new rows were written.
            Removal::DeletionVectors | Removal::CopyOnWrite => {}
        }
        txn.set_metric("numFiles", adds.len());
        txn.set_metric("numOutputRows", rows);
        txn.set_metric("numOutputBytes", adds.iter().map(|a| a.size).sum::<i64>());
        if change_files > 0 {
            txn.set_metric("numAddedChangeFiles", change_files);
        }
        for a in adds {
            txn.add_file(a);
        }
        finish(self, txn, options)
    }
}

/// Stages the removal of every live file of `snapshot` (`dataChange: true`, deleted at
/// `now`), and records the whole table as read: a whole-table overwrite's removals.
pub(crate) fn remove_every_file(snapshot: &Snapshot, txn: &mut Transaction, now: i64) {
    txn.read_whole_table();
    let removes: Vec<Remove> = snapshot
        .files()
        .map(|a| Remove::from_add(a, now, true))
        .collect();
    for r in removes {
        txn.remove_file(r);
    }
}

#[derive(Debug, Default)]
struct RemoveMetrics {
    deleted_rows: u64,
    copied_rows: u64,
    /// Whether the removed rows went to change-data files (the commit's cdc files must then
    /// hold the new rows too).
    wrote_changes: bool,
}

/// Stages the removal of the rows matching `pred`: whole files when every row matches,
/// copy-on-write rewrites otherwise. Records every candidate file as read.
///
/// With `changes` (a change-data-feed table), once any file is rewritten in part every
/// removed row is recorded as `delete`, those of files removed whole included (Delta
/// Spark's replaceWhere runs a DELETE, which rewrites every file with a matching row): the
/// files removed whole before the first partial rewrite are read again then, later ones
/// are recorded as they are read. A removal of whole files only records nothing (readers
/// derive the deletes from the `remove` actions).
fn remove_matching(
    table: &Table,
    snapshot: &Snapshot,
    txn: &mut Transaction,
    pred: &Predicate,
    options: &WriteOptions,
    changes: Option<&ChangeDataWriter<'_>>,
) -> Result<RemoveMetrics> {
    let now = table.store().now_ms();
    let mut metrics = RemoveMetrics::default();
    let partition_only = pred.only_partition_columns();
    let candidates: Vec<Add> = snapshot
        .inner()
        .files_matching(pred)
        .map(|m| m.file.to_add())
        .collect();
    // Copied rows keep their row ids and commit versions (row tracking).
    let layout = crate::read::scan::rewrite_layout(snapshot);
    let plan = alluvium_datafile::ReadPlan::all(layout.clone())?;
    // Rewritten files take the write's codec, as its new files do.
    let configuration = with_write_codec(snapshot.metadata().configuration.clone(), options);
    let mut sink = FileSink::new(
        SinkTable {
            store: table.store().as_ref(),
            schema: &layout.schema,
            partition_columns: snapshot.partition_columns(),
            configuration: &configuration,
            column_mapping: snapshot.column_mapping(),
        },
        FileSinkOptions {
            target_size: options.target_file_size,
            data_change: true,
        },
    )?
    .materialize_partition_columns(layout.materialize_partition_columns)?;
    let mut rewrote = false;
    // Files removed whole before the first partial rewrite: their rows become `delete`
    // change rows only if a partial rewrite follows.
    let mut whole_pending: Vec<&Add> = Vec::new();
    for add in &candidates {
        txn.read_file(add);
        if partition_only {
            // The predicate is exact on partition values: every row of the file matches.
            txn.remove_file(Remove::from_add(add, now, true));
            metrics.deleted_rows += rows_of(add).unwrap_or(0);
            continue;
        }
        let batches = plan.read_file(add)?;
        let (mut matched, mut total) = (0usize, 0usize);
        let mut keeps: Vec<(RecordBatch, BooleanArray, BooleanArray)> = Vec::new();
        for b in batches {
            let m = evaluate(pred, &b)?;
            let keep: BooleanArray = m.iter().map(|v| Some(v != Some(true))).collect();
            matched += m.true_count();
            total += b.num_rows();
            keeps.push((b, m, keep));
        }
        if matched == 0 {
            continue;
        }
        txn.remove_file(Remove::from_add(add, now, true));
        metrics.deleted_rows += matched as u64;
        let partial = matched < total;
        if let Some(c) = changes {
            if partial && !metrics.wrote_changes {
                metrics.wrote_changes = true;
                for w in whole_pending.drain(..) {
                    for b in crate::read::scan::read_whole_file(snapshot, w)? {
                        record_deleted(c, &b)?;
                    }
                }
            }
            if metrics.wrote_changes {
                for (b, m, _) in &keeps {
                    record_deleted(c, &arrow_select::filter::filter_record_batch(b, m)?)?;
                }
            } else {
                whole_pending.push(add);
            }
        }
        if partial {
            for (b, _, keep) in keeps {
                let kept = arrow_select::filter::filter_record_batch(&b, &keep)?;
                metrics.copied_rows += kept.num_rows() as u64;
                sink.write(&kept)?;
            }
            rewrote = true;
        }
    }
    let (adds, elapsed) = sink.finish()?;
    txn.add_write_time(elapsed);
    if rewrote || !adds.is_empty() {
        for a in adds {
            txn.add_file(a);
        }
    }
    Ok(metrics)
}

/// Records the rows of `rows` (a file's rows as the snapshot's schema reads them) as
/// `delete` change rows; columns the commit's schema adds are NULL.
fn record_deleted(changes: &ChangeDataWriter<'_>, rows: &RecordBatch) -> Result<()> {
    let rows: arrow_array::ArrayRef =
        std::sync::Arc::new(arrow_array::StructArray::from(rows.clone()));
    changes.write_struct(&rows, ChangeType::Delete)
}

fn rows_of(add: &Add) -> Option<u64> {
    let n = add
        .stats
        .as_deref()
        .and_then(FileStats::parse)?
        .num_records?;
    let deleted = add.deletion_vector.as_ref().map_or(0, |d| d.cardinality);
    u64::try_from(n - deleted).ok()
}
