//! Running a MERGE: [`prepare`] loads the source, builds the [`MergePlan`] (see `plan`),
//! hashes the source on the ON keys and selects the candidate files; `execute` then reads
//! each candidate file alone (live rows with their physical positions, a window of files
//! in parallel), probes it against the index, and decides its pairs by the clauses in
//! order. New row versions and inserts stream into a file sink; the touched rows' positions
//! go to `stage_changes` (a DV per file, or a copy-on-write rewrite), after every file was
//! read and the unmatched source rows were inserted.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Instant;

use alluvium_datafile::ReadPlan;
use alluvium_datafile::sink::{FileSink, FileSinkOptions, SinkTable};
use alluvium_expr::{Expr, evaluate};
use alluvium_mvcc::Transaction;
use alluvium_txlog::actions::Add;
use alluvium_txlog::schema::{StructField, StructType};
use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch, UInt32Array, new_null_array};
use rayon::prelude::*;
use roaring::RoaringTreemap;

use super::bind::{BoundAction, BoundClause};
use super::clause::{ClauseKind, MergeClause};
use super::join::{KeyPair, SourceIndex};
use super::pairs::{PAIR_CHUNK, matching_pairs};
use super::plan::{ChangeCapture, MergePlan, MergeRequest, PlanTable, TableFacts};
use super::scope::Scope;
use super::source::Source;
use crate::commit::{
    DmlOutcome, MetricSet, evolve_schema, finish_dml, outcome_if_done, with_write_codec,
};
use crate::rows::change_data::{self, ChangeDataWriter, ChangeType};
use crate::rows::deletes::{FileDeletes, RewriteSettings, writes_deletion_vectors};
use crate::rows::row_ids::TrackedRows;
use crate::rows::rules::ColumnRules;
use crate::rows::{Staged, stage_changes};
use crate::{Error, Result, Snapshot, Table, WriteOptions};

/// What [`MergeBuilder::execute`](super::MergeBuilder::execute) hands over: the request,
/// aliases resolved.
pub(super) struct MergeSpec<'a> {
    pub table: &'a Table,
    pub source: Vec<RecordBatch>,
    pub on: Expr,
    pub on_text: String,
    pub clauses: Vec<MergeClause>,
    pub merge_schema: bool,
    pub options: &'a WriteOptions,
}

/// Row counts by what happened to them.
#[derive(Debug, Default)]
struct Counts {
    matched_updated: u64,
    matched_deleted: u64,
    nmbs_updated: u64,
    nmbs_deleted: u64,
    inserted: u64,
    files_read: u64,
}

/// For each row of `joined`, the index (into `clauses`) of the first clause whose
/// condition holds.
fn decide(clauses: &[&BoundClause], joined: &RecordBatch) -> Result<Vec<Option<usize>>> {
    let n = joined.num_rows();
    let mut out = vec![None; n];
    let mut open = n;
    for (ci, c) in clauses.iter().enumerate() {
        if open == 0 {
            break;
        }
        let mask = match &c.condition {
            Some(p) => Some(evaluate(p, joined)?),
            None => None,
        };
        for (i, slot) in out.iter_mut().enumerate() {
            if slot.is_none() && mask.as_ref().is_none_or(|m| m.is_valid(i) && m.value(i)) {
                *slot = Some(ci);
                open -= 1;
            }
        }
    }
    Ok(out)
}

/// What a decided set of rows does: writes new versions to the sink, collects deleted
/// target positions, and counts. `target_pos` maps a joined row to its target position
/// (`None` for inserts). With `changes` (change data feed), also records each change:
/// updated rows' old (`t`) and new values, deleted rows' old values, inserted rows; with
/// `updated_at` too, the old values are left to the copy-on-write rewrite (which decodes the
/// whole file anyway) and updated rows' positions are collected there instead.
#[allow(clippy::too_many_arguments)]
fn act(
    clauses: &[&BoundClause],
    decided: &[Option<usize>],
    joined: &RecordBatch,
    target_pos: &dyn Fn(usize) -> Option<u64>,
    row_id: &dyn Fn(usize) -> Option<i64>,
    tracked: TrackedRows,
    sink: &mut FileSink<'_>,
    touched: &mut RoaringTreemap,
    changes: Option<&ChangeDataWriter<'_>>,
    mut updated_at: Option<&mut RoaringTreemap>,
) -> Result<(u64, u64, u64)> {
    let (mut updated, mut deleted, mut inserted) = (0u64, 0u64, 0u64);
    for (ci, c) in clauses.iter().enumerate() {
        let rows: Vec<u32> = decided
            .iter()
            .enumerate()
            .filter(|(_, d)| **d == Some(ci))
            .map(|(i, _)| i as u32)
            .collect();
        if rows.is_empty() {
            continue;
        }
        // Target rows newly touched: several pairs of one row (allowed only for an
        // unconditional DELETE) count once.
        let mut fresh: Vec<u32> = Vec::new();
        for &r in &rows {
            if let Some(p) = target_pos(r as usize)
                && touched.insert(p)
            {
                fresh.push(r);
            }
        }
        let n = rows.len() as u64;
        match &c.action {
            BoundAction::Delete => {
                deleted += fresh.len() as u64;
                if let Some(ch) = changes
                    && updated_at.is_none()
                {
                    let gone =
                        arrow_select::take::take_record_batch(joined, &UInt32Array::from(fresh))?;
                    ch.write_struct(gone.column(0), ChangeType::Delete)?;
                }
            }
            BoundAction::Update(p) | BoundAction::Insert(p) => {
                let is_update = matches!(c.action, BoundAction::Update(_));
                // Row tracking: an updated row keeps its stable row id, an inserted row
                // gets a fresh one (see `row_ids`).
                let ids: Option<ArrayRef> = (is_update && tracked.is_on()).then(|| {
                    Arc::new(Int64Array::from_iter(
                        rows.iter().map(|r| row_id(*r as usize)),
                    )) as ArrayRef
                });
                let taken = arrow_select::take::take_record_batch(
                    joined,
                    &UInt32Array::from_iter_values(rows.iter().copied()),
                )?;
                let new_rows = p.apply(&taken)?;
                sink.write(&match ids {
                    Some(ids) => tracked.updated_with_ids(new_rows.clone(), ids)?,
                    None => tracked.inserted(new_rows.clone())?,
                })?;
                if let Some(ch) = changes {
                    if is_update {
                        match updated_at.as_deref_mut() {
                            Some(at) => {
                                at.extend(rows.iter().filter_map(|r| target_pos(*r as usize)))
                            }
                            None => ch.write_struct(taken.column(0), ChangeType::UpdatePreimage)?,
                        }
                        ch.write(&new_rows, ChangeType::UpdatePostimage)?;
                    } else {
                        ch.write(&new_rows, ChangeType::Insert)?;
                    }
                }
                if is_update {
                    updated += n;
                } else {
                    inserted += n;
                }
            }
        }
    }
    Ok((updated, deleted, inserted))
}

/// The table side of planning: schema evolution is recorded in the transaction's
/// metadata, column rules come from the snapshot's protocol and configuration.
struct SnapshotTable<'a> {
    snapshot: &'a Snapshot,
    txn: &'a mut Transaction,
}

impl PlanTable for SnapshotTable<'_> {
    fn evolve(&mut self, schema: &StructType, new_fields: Vec<StructField>) -> StructType {
        let mut evolved = schema.clone();
        evolve_schema(self.snapshot, self.txn, &mut evolved, new_fields);
        evolved
    }

    fn column_rules(&self, schema: &StructType) -> Result<ColumnRules> {
        ColumnRules::new(
            self.snapshot,
            schema,
            &self.snapshot.metadata().configuration,
        )
    }
}

/// A MERGE planned against one snapshot: the plan (files selected), the source and its
/// index on the ON keys.
pub(super) struct Prepared {
    pub plan: MergePlan,
    source: Source,
    index: SourceIndex,
}

/// Plans the MERGE of `spec` against `snapshot`: the source is loaded and hashed, the plan
/// built, the candidate files selected (recorded as read in `txn`) and the plan's
/// parameters set on `txn`. No target data file is read.
///
/// # Errors
/// As [`MergePlan::new`]; a source that does not load.
pub(super) fn prepare(
    spec: MergeSpec<'_>,
    snapshot: &Snapshot,
    txn: &mut Transaction,
) -> Result<Prepared> {
    let source = Source::load(spec.source, snapshot.schema())?;
    let facts = TableFacts {
        schema: snapshot.schema(),
        partition_columns: snapshot.partition_columns(),
        change_data_feed: change_data::records_changes(&snapshot.metadata().configuration),
        deletion_vectors: writes_deletion_vectors(snapshot),
    };
    let request = MergeRequest {
        on: &spec.on,
        on_text: &spec.on_text,
        clauses: &spec.clauses,
        merge_schema: spec.merge_schema,
    };
    let mut plan = MergePlan::new(
        &facts,
        &source,
        &request,
        &mut SnapshotTable { snapshot, txn },
    )?;
    let index = SourceIndex::build(&source.batch, &plan.keys)?;
    plan.prune(&source.batch, &index);
    plan.select_files(snapshot, txn)?;
    for (key, value) in plan.parameters() {
        txn.set_parameter(key, value);
    }
    Ok(Prepared {
        plan,
        source,
        index,
    })
}

/// Plans and runs a MERGE as one commit.
pub(super) fn run(spec: MergeSpec<'_>) -> Result<DmlOutcome> {
    let started = Instant::now();
    let (table, options) = (spec.table, spec.options);
    let snapshot = table.read_snapshot(options)?;
    let mut txn = Transaction::new(snapshot.inner(), "MERGE");
    if let Some(o) = outcome_if_done(&mut txn, &snapshot, options) {
        return Ok(DmlOutcome::skipped(o));
    }
    let prepared = prepare(spec, &snapshot, &mut txn)?;
    execute(table, &snapshot, txn, prepared, options, started)
}

/// Runs a prepared MERGE: each candidate file is read (a window of them in parallel),
/// probed and its pairs decided by the clauses; unmatched source rows are inserted; the
/// changes are staged and committed.
fn execute(
    table: &Table,
    snapshot: &Snapshot,
    mut txn: Transaction,
    prepared: Prepared,
    options: &WriteOptions,
    started: Instant,
) -> Result<DmlOutcome> {
    let Prepared {
        plan,
        source,
        index,
    } = prepared;
    let source = source.batch;
    let num_source_rows = source.num_rows() as u64;
    let scope = &plan.scope;
    let target = &scope.target;
    let table_schema = &plan.table_schema;
    let residual = plan.residual.as_ref().map(|(_, p)| p);
    let matched = plan.of_kind(ClauseKind::Matched);
    let not_matched = plan.of_kind(ClauseKind::NotMatched);
    let by_source = plan.of_kind(ClauseKind::NotMatchedBySource);
    let multiple_matches_ok = plan.multiple_matches_ok;
    let old_by_rewrite = plan.capture == ChangeCapture::Rewrite;
    let candidates = plan.candidates.as_deref().unwrap_or_default();
    let Reads {
        tracked,
        sink_schema,
        whole,
        scan: scan_plan,
    } = reads(&plan, snapshot)?;

    // Run.
    // New and rewritten files take the operation's codec, when it names one.
    let configuration = with_write_codec(
        txn.effective_metadata()
            .map(|m| m.configuration.clone())
            .unwrap_or_default(),
        options,
    );
    let mut sink = FileSink::new(
        SinkTable {
            store: table.store().as_ref(),
            schema: &sink_schema,
            partition_columns: snapshot.partition_columns(),
            configuration: &configuration,
            column_mapping: snapshot.column_mapping(),
        },
        FileSinkOptions {
            target_size: options.target_file_size,
            data_change: true,
        },
    )?
    .materialize_partition_columns(crate::rows::materializes(snapshot))?;
    let changes = match plan.capture.records() {
        true => change_data::writer_for(
            table,
            snapshot,
            table_schema,
            &configuration,
            options.target_file_size,
        )?,
        false => None,
    };
    let mut counts = Counts::default();
    let mut deletes: Vec<FileDeletes> = Vec::new();
    let mut source_matched = vec![false; source.num_rows()];
    let scan_started = Instant::now();
    let scanned = (|| -> Result<()> {
        // Decoding and probing are the costly parts and files are independent: a window of
        // files is read and probed in parallel; the decisions run on this thread (it owns
        // the transaction and the sink). Memory: the window's files at once.
        let window = rayon::current_num_threads().max(1) * 2;
        let mut per_file = |add: &Add, probed: Vec<Probed>| -> Result<()> {
            txn.read_file(add);
            counts.files_read += 1;
            let mut touched = RoaringTreemap::new();
            let mut updated = RoaringTreemap::new();
            for Probed {
                batch,
                positions,
                row_ids,
                t_rows,
                s_rows,
            } in probed
            {
                for &j in &s_rows {
                    source_matched[j as usize] = true;
                }
                // NOT MATCHED BY SOURCE takes the rows without a pair (disjoint from the
                // matched rows below, so the order of the two does not matter).
                if !by_source.is_empty() {
                    let mut had = vec![false; batch.num_rows()];
                    for &i in &t_rows {
                        had[i as usize] = true;
                    }
                    by_source_rows(
                        &by_source,
                        scope,
                        &batch,
                        &positions,
                        row_ids.as_ref(),
                        tracked,
                        &had,
                        &mut sink,
                        &mut touched,
                        &mut counts,
                        changes.as_ref(),
                        old_by_rewrite.then_some(&mut updated),
                    )?;
                }
                if matched.is_empty() {
                    continue;
                }
                // The pairs are decided a chunk at a time (a nested-loop join can pair a
                // row with many source rows); the cardinality rule spans the chunks.
                let mut acting = RoaringTreemap::new();
                for (t_chunk, s_chunk) in t_rows.chunks(PAIR_CHUNK).zip(s_rows.chunks(PAIR_CHUNK)) {
                    let ti = UInt32Array::from(t_chunk.to_vec());
                    let si = UInt32Array::from(s_chunk.to_vec());
                    let joined =
                        scope.joined(Some((&batch, &ti)), Some((&source, &si)), ti.len())?;
                    let decided = decide(&matched, &joined)?;
                    if !multiple_matches_ok {
                        for (i, d) in decided.iter().enumerate() {
                            if d.is_some() && !acting.insert(u64::from(ti.value(i))) {
                                return Err(Error::MergeCardinalityViolation {
                                    file: add.path.clone(),
                                    row: key_values(
                                        &batch,
                                        &plan.keys,
                                        target,
                                        ti.value(i) as usize,
                                    ),
                                });
                            }
                        }
                    }
                    let pos = |r: usize| Some(positions.value(ti.value(r) as usize));
                    let rid = |r: usize| {
                        row_ids.as_ref().and_then(|a| {
                            a.is_valid(ti.value(r) as usize)
                                .then(|| a.value(ti.value(r) as usize))
                        })
                    };
                    let (u, d, _) = act(
                        &matched,
                        &decided,
                        &joined,
                        &pos,
                        &rid,
                        tracked,
                        &mut sink,
                        &mut touched,
                        changes.as_ref(),
                        old_by_rewrite.then_some(&mut updated),
                    )?;
                    counts.matched_updated += u;
                    counts.matched_deleted += d;
                }
            }
            if !touched.is_empty() {
                deletes.push(FileDeletes {
                    add: add.clone(),
                    positions: touched,
                    updated,
                });
            }
            Ok(())
        };
        for chunk in candidates.chunks(window) {
            let reads: Vec<Result<Vec<Probed>>> = chunk
                .par_iter()
                .map(|a| {
                    let probed: Vec<Probed> = scan_plan
                        .read_file_with_positions(a)?
                        .into_iter()
                        .map(|(read, positions)| {
                            let batch = widen(&read, &plan.needed, scope)?;
                            let (t_rows, s_rows) =
                                matching_pairs(&index, residual, scope, &batch, &source)?;
                            let row_ids = tracked.is_on().then(|| {
                                read.column(read.num_columns() - 1)
                                    .as_primitive::<Int64Type>()
                                    .clone()
                            });
                            Ok(Probed {
                                batch,
                                positions,
                                row_ids,
                                t_rows,
                                s_rows,
                            })
                        })
                        .collect::<Result<_>>()?;
                    match &whole {
                        Some((whole_plan, all)) => {
                            whole_rows(whole_plan, all, scope, tracked, a, probed)
                        }
                        None => Ok(probed),
                    }
                })
                .collect();
            for (add, read) in chunk.iter().zip(reads) {
                per_file(add, read?)?;
            }
        }
        // Inserts: source rows no target row matched.
        counts.inserted += insert_unmatched(
            &not_matched,
            scope,
            &source,
            &source_matched,
            tracked,
            &mut sink,
            changes.as_ref(),
        )?;
        Ok(())
    })();
    let scan_ms = scan_started.elapsed().as_millis() as u64;
    let rewrite_started = Instant::now();
    let staged = stage_changes(
        table,
        snapshot,
        &mut txn,
        sink,
        scanned,
        deletes,
        changes,
        old_by_rewrite,
        &RewriteSettings {
            inline_dv_max_bytes: options.inline_dv_max_bytes(),
            configuration: &configuration,
        },
    )?;
    let times = Times {
        scan_ms,
        rewrite_ms: rewrite_started.elapsed().as_millis() as u64,
        execution_ms: started.elapsed().as_millis() as u64,
    };
    let m = metrics(num_source_rows, &counts, &staged, &times);
    plan.column_rules.stage_identity(snapshot, &mut txn)?;
    finish_dml(table, txn, options, m)
}

/// How a MERGE reads its target files and writes new ones, given the snapshot's layout.
struct Reads {
    /// Row tracking: target rows are read with their stable row id (last column).
    tracked: TrackedRows,
    /// The new files' schema: the table's and the hidden row-tracking columns.
    sink_schema: StructType,
    /// With [`ChangeCapture::MatchedRowsOnly`], the plan decoding matched rows whole, and
    /// every target column index.
    whole: Option<(ReadPlan, BTreeSet<usize>)>,
    /// The scan of the plan's needed columns.
    scan: ReadPlan,
}

fn reads(plan: &MergePlan, snapshot: &Snapshot) -> Result<Reads> {
    let target = &plan.scope.target;
    let table_schema = &plan.table_schema;
    let mut read_names: Vec<String> = plan
        .needed
        .iter()
        .map(|i| target.fields[*i].name.clone())
        .collect();
    // Row tracking: target rows are read with their stable row ids (last column), which
    // updated rows keep; new files carry the hidden columns after the table's.
    let layout = crate::read::scan::rewrite_layout(snapshot);
    let hidden: Vec<StructField> = layout.schema.fields[target.fields.len()..].to_vec();
    let tracked = TrackedRows::new(
        table_schema.fields.len(),
        table_schema.fields.len() + hidden.len(),
    );
    if tracked.is_on() {
        read_names.push(hidden[0].name.clone());
    }
    let mut sink_schema = table_schema.clone();
    sink_schema.fields.extend(hidden.iter().cloned());
    let whole = match plan.capture {
        ChangeCapture::MatchedRowsOnly => {
            let mut names: Vec<String> = target.fields.iter().map(|f| f.name.clone()).collect();
            if tracked.is_on() {
                names.push(hidden[0].name.clone());
            }
            let all: BTreeSet<usize> = (0..target.fields.len()).collect();
            Some((ReadPlan::new(layout.clone(), Some(&names), None)?, all))
        }
        _ => None,
    };
    Ok(Reads {
        tracked,
        sink_schema,
        whole,
        scan: ReadPlan::new(layout, Some(&read_names), None)?,
    })
}

/// Source rows no target row matched (`matched[j]` false), decided by the NOT MATCHED
/// clauses and written to `sink`, a bounded chunk at a time. Returns the rows inserted.
fn insert_unmatched(
    clauses: &[&BoundClause],
    scope: &Scope,
    source: &RecordBatch,
    matched: &[bool],
    tracked: TrackedRows,
    sink: &mut FileSink<'_>,
    changes: Option<&ChangeDataWriter<'_>>,
) -> Result<u64> {
    if clauses.is_empty() {
        return Ok(0);
    }
    let rows: Vec<u32> = (0..source.num_rows() as u32)
        .filter(|j| !matched[*j as usize])
        .collect();
    let mut inserted = 0;
    for chunk in rows.chunks(64 * 1024) {
        let si = UInt32Array::from(chunk.to_vec());
        let joined = scope.joined(None, Some((source, &si)), si.len())?;
        let decided = decide(clauses, &joined)?;
        let mut none = RoaringTreemap::new();
        let (_, _, ins) = act(
            clauses,
            &decided,
            &joined,
            &|_| None,
            &|_| None,
            tracked,
            sink,
            &mut none,
            changes,
            None,
        )?;
        inserted += ins;
    }
    Ok(inserted)
}

/// How long the phases of a MERGE took.
struct Times {
    scan_ms: u64,
    rewrite_ms: u64,
    execution_ms: u64,
}

/// The MERGE's `operationMetrics`, under Delta's names.
fn metrics(num_source_rows: u64, counts: &Counts, staged: &Staged, times: &Times) -> MetricSet {
    let stats = &staged.deletes;
    let updated = counts.matched_updated + counts.nmbs_updated;
    let deleted = counts.matched_deleted + counts.nmbs_deleted;
    let mut m = MetricSet::default();
    m.set("numSourceRows", num_source_rows);
    m.set("numTargetRowsInserted", counts.inserted);
    m.set("numTargetRowsUpdated", updated);
    m.set("numTargetRowsMatchedUpdated", counts.matched_updated);
    m.set(
        "numTargetRowsNotMatchedBySourceUpdated",
        counts.nmbs_updated,
    );
    m.set("numTargetRowsDeleted", deleted);
    m.set("numTargetRowsMatchedDeleted", counts.matched_deleted);
    m.set(
        "numTargetRowsNotMatchedBySourceDeleted",
        counts.nmbs_deleted,
    );
    m.set("numTargetRowsCopied", stats.rows_copied);
    m.set(
        "numOutputRows",
        counts.inserted + updated + stats.rows_copied,
    );
    m.set("numTargetFilesAdded", staged.new_files + stats.files_added);
    m.set("numTargetFilesRemoved", stats.files_removed);
    m.set("numTargetDeletionVectorsAdded", stats.dvs_added);
    m.set("numDeletionVectorsAdded", stats.dvs_added);
    m.set("numTargetChangeFilesAdded", staged.change_files);
    m.set("numTargetBytesAdded", staged.new_bytes + stats.bytes_added);
    m.set("numTargetFilesScanned", counts.files_read);
    m.set("scanTimeMs", times.scan_ms);
    m.set("rewriteTimeMs", times.rewrite_ms);
    m.set("executionTimeMs", times.execution_ms);
    m
}

/// Target row `i` of `batch` as `{key: value, ...}` for the cardinality error: its ON key
/// columns (every column read when ON has no equality key), so the message names the
/// duplicated key rather than a position in a file.
fn key_values(batch: &RecordBatch, keys: &[KeyPair], target: &StructType, i: usize) -> String {
    let columns: Vec<usize> = keys
        .iter()
        .filter_map(|k| target.fields.get(k.target))
        .filter_map(|f| crate::rows::rules::row::position(batch, &f.name))
        .collect();
    let shown = match columns.is_empty() {
        true => batch.clone(),
        false => batch.project(&columns).unwrap_or_else(|_| batch.clone()),
    };
    crate::rows::rules::row::render(&shown, i)
}

/// One batch of a target file, read and probed: the `t` layout, each row's physical
/// position, and the candidate pairs (target row, source row) with equal keys.
struct Probed {
    batch: RecordBatch,
    positions: arrow_array::UInt64Array,
    /// Each row's stable row id (row tracking enabled).
    row_ids: Option<Int64Array>,
    t_rows: Vec<u32>,
    s_rows: Vec<u32>,
}

/// The matched rows of one file's probed batches decoded whole (every target column, and
/// the row id when row tracking is on), read once for the file: one `Probed` whose batch
/// holds each matched row once, in file order, with every batch's `t_rows` (repeated when
/// several source rows match one target row) re-pointed at it and its `s_rows` kept in the
/// same order. Batches without a match contribute nothing (no NOT MATCHED BY SOURCE clause
/// reads them). Change data records these rows as they were.
fn whole_rows(
    plan: &ReadPlan,
    all: &BTreeSet<usize>,
    scope: &Scope,
    tracked: TrackedRows,
    add: &Add,
    probed: Vec<Probed>,
) -> Result<Vec<Probed>> {
    let mut at = RoaringTreemap::new();
    for p in &probed {
        at.extend(p.t_rows.iter().map(|&t| p.positions.value(t as usize)));
    }
    if at.is_empty() {
        return Ok(Vec::new());
    }
    let (batches, at_rows): (Vec<RecordBatch>, Vec<arrow_array::UInt64Array>) =
        plan.read_rows_at(add, &at)?.into_iter().unzip();
    let Some(first) = batches.first() else {
        return Err(Error::InvalidArgument(format!(
            "MERGE: the matched rows of {} could not be read back",
            add.path
        )));
    };
    let read = arrow_select::concat::concat_batches(&first.schema(), &batches)?;
    let found: Vec<u64> = at_rows
        .iter()
        .flat_map(|p| p.values().iter().copied())
        .collect();
    let mut t_rows = Vec::new();
    let mut s_rows = Vec::new();
    for p in probed {
        for &t in &p.t_rows {
            let pos = p.positions.value(t as usize);
            match found.binary_search(&pos) {
                Ok(i) => t_rows.push(i as u32),
                Err(_) => {
                    return Err(Error::InvalidArgument(format!(
                        "MERGE: row {pos} of {} matched but was not read back",
                        add.path
                    )));
                }
            }
        }
        s_rows.extend(p.s_rows);
    }
    let row_ids = tracked.is_on().then(|| {
        read.column(read.num_columns() - 1)
            .as_primitive::<Int64Type>()
            .clone()
    });
    Ok(vec![Probed {
        batch: widen(&read, all, scope)?,
        positions: arrow_array::UInt64Array::from(found),
        row_ids,
        t_rows,
        s_rows,
    }])
}

/// A batch of the `read` target columns (indexes `needed`, ascending) with every other
/// target column as NULLs: the layout of the `t` struct.
fn widen(read: &RecordBatch, needed: &BTreeSet<usize>, scope: &Scope) -> Result<RecordBatch> {
    let n = read.num_rows();
    let mut columns = Vec::with_capacity(scope.target_fields.len());
    let mut next = 0;
    for (i, f) in scope.target_fields.iter().enumerate() {
        if needed.contains(&i) {
            columns.push(read.column(next).clone());
            next += 1;
        } else {
            columns.push(new_null_array(f.data_type(), n));
        }
    }
    Ok(RecordBatch::try_new_with_options(
        std::sync::Arc::new(arrow_schema::Schema::new(scope.target_fields.clone())),
        columns,
        &arrow_array::RecordBatchOptions::new().with_row_count(Some(n)),
    )?)
}

/// NOT MATCHED BY SOURCE: the rows of `batch` no source row matched (`had[i]` false).
#[allow(clippy::too_many_arguments)]
fn by_source_rows(
    clauses: &[&BoundClause],
    scope: &Scope,
    batch: &RecordBatch,
    positions: &arrow_array::UInt64Array,
    row_ids: Option<&Int64Array>,
    tracked: TrackedRows,
    had: &[bool],
    sink: &mut FileSink<'_>,
    touched: &mut RoaringTreemap,
    counts: &mut Counts,
    changes: Option<&ChangeDataWriter<'_>>,
    updated_at: Option<&mut RoaringTreemap>,
) -> Result<()> {
    let rows: Vec<u32> = (0..batch.num_rows() as u32)
        .filter(|i| !had[*i as usize])
        .collect();
    if rows.is_empty() {
        return Ok(());
    }
    let ti = UInt32Array::from(rows);
    let joined = scope.joined(Some((batch, &ti)), None, ti.len())?;
    let decided = decide(clauses, &joined)?;
    let pos = |r: usize| Some(positions.value(ti.value(r) as usize));
    let rid = |r: usize| {
        let i = ti.value(r) as usize;
        row_ids.and_then(|a| a.is_valid(i).then(|| a.value(i)))
    };
    let (u, d, _) = act(
        clauses, &decided, &joined, &pos, &rid, tracked, sink, touched, changes, updated_at,
    )?;
    counts.nmbs_updated += u;
    counts.nmbs_deleted += d;
    Ok(())
}
