//! Planning and running a MERGE.
//!
//! Planning (no file written yet): the source is conformed to its logical Arrow types and
//! concatenated; the target schema is evolved if asked; ON is split into keys and a
//! residual; every clause is qualified, bound and type-checked; the source is hashed on
//! its keys; the candidate target files are those the source's keys may match.
//!
//! Running: each candidate file is read alone (live rows with their physical positions),
//! probed against the index, and its pairs decided by the clauses in order. New row
//! versions and inserts stream into a file sink; the touched rows' positions go to
//! `apply_deletes` (a DV per file, or a copy-on-write rewrite), after every file was
//! read and the unmatched source rows were inserted.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Instant;

use alluvium_datafile::ReadPlan;
use alluvium_datafile::sink::{FileSink, FileSinkOptions, SinkTable};
use alluvium_expr::evaluate;
use alluvium_expr::{BoundColumn, Expr, Predicate, bind};
use alluvium_mvcc::Transaction;
use alluvium_txlog::actions::Add;
use alluvium_txlog::column_mapping::ColumnMappingMode;
use alluvium_txlog::schema::{DataType, PrimitiveType, StructField, StructType, from_arrow_schema};
use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch, UInt32Array, new_null_array};
use rayon::prelude::*;
use roaring::RoaringTreemap;

use super::clause::{ClauseKind, MergeAction, MergeClause};
use super::join::{KeyPair, SourceIndex, analyse_on};
use super::pairs::{PAIR_CHUNK, matching_pairs};
use super::prune::{Pruning, pruning};
use super::scope::{SOURCE, Scope, Sides, TARGET};
use crate::commit::{DmlOutcome, MetricSet, evolve_schema, finish_dml, outcome_if_done};
use crate::rows::assign::assigned;
use crate::rows::change_data::{self, ChangeDataWriter, ChangeType};
use crate::rows::deletes::{FileDeletes, writes_deletion_vectors};
use crate::rows::input;
use crate::rows::project::{ColumnValue, Projection};
use crate::rows::row_ids::TrackedRows;
use crate::rows::rules::{self, ColumnRules, RowKind};
use crate::rows::{Staged, stage_changes};
use crate::{Error, Result, Table, WriteOptions};

pub(super) struct MergeSpec<'a> {
    pub table: &'a Table,
    pub source: Vec<RecordBatch>,
    pub on: Expr,
    pub on_text: String,
    pub clauses: Vec<MergeClause>,
    pub merge_schema: bool,
    pub options: &'a WriteOptions,
}

#[derive(Debug)]
enum BoundAction {
    Update(Projection),
    Delete,
    Insert(Projection),
}

#[derive(Debug)]
struct BoundClause {
    kind: ClauseKind,
    condition: Option<Predicate>,
    action: BoundAction,
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

fn clause_json(clauses: &[MergeClause], kind: ClauseKind) -> String {
    let items: Vec<serde_json::Value> = clauses
        .iter()
        .filter(|c| c.kind == kind)
        .map(|c| {
            let mut m = serde_json::Map::new();
            if let Some(p) = &c.condition {
                m.insert("predicate".into(), p.to_string().into());
            }
            m.insert("actionType".into(), c.action.action_type().into());
            serde_json::Value::Object(m)
        })
        .collect();
    serde_json::Value::Array(items).to_string()
}

/// The source as one batch of its logical Arrow types, and its Delta schema.
fn load_source(batches: Vec<RecordBatch>) -> Result<(StructType, RecordBatch)> {
    let Some(first) = batches.first() else {
        return Err(Error::InvalidArgument(
            "the MERGE source has no batches (so no schema); pass an empty batch for an empty source".into(),
        ));
    };
    let arrow = first.schema();
    // A source without columns (an empty CSV file, not even a header) has no row to match
    // and no name an ON condition could use; Arrow cannot even concatenate it.
    if arrow.fields().is_empty() {
        return Err(Error::InvalidArgument(
            "the MERGE source has no columns (an empty file has not even a header)".into(),
        ));
    }
    input::check_distinct_columns(&arrow)?;
    let schema = from_arrow_schema(&arrow).map_err(|e| Error::SchemaMismatch(e.to_string()))?;
    let logical = input::logical_schema(&schema)?;
    let mut conformed = Vec::with_capacity(batches.len());
    for b in &batches {
        if b.schema().fields() != arrow.fields() {
            return Err(Error::SchemaMismatch(
                "the MERGE source's batches have different schemas".into(),
            ));
        }
        conformed.push(input::conform(b, &schema, &logical)?);
    }
    drop(batches);
    Ok((
        schema,
        arrow_select::concat::concat_batches(&logical, &conformed)?,
    ))
}

/// The source with each void column (all NULL: what a header-only CSV infers) that the
/// target also has retyped as the target's column: NULLs of either type compare and assign
/// alike, and typed they can be keys, compared and assigned (a void column can be none of
/// these). Other columns are kept as they are.
fn type_void_columns(
    target: &StructType,
    schema: StructType,
    source: RecordBatch,
) -> Result<(StructType, RecordBatch)> {
    let void = DataType::Primitive(PrimitiveType::Void);
    if !schema.fields.iter().any(|f| f.data_type == void) {
        return Ok((schema, source));
    }
    let mut typed = schema.clone();
    for f in &mut typed.fields {
        if f.data_type == void
            && let Some(t) = target.field(&f.name)
        {
            f.data_type = t.data_type.clone();
            f.nullable = true;
            f.metadata.clear();
        }
    }
    let logical = input::logical_schema(&typed)?;
    let columns: Vec<ArrayRef> = source
        .columns()
        .iter()
        .zip(logical.fields())
        .map(|(c, f)| match c.data_type() == f.data_type() {
            true => c.clone(),
            false => new_null_array(f.data_type(), source.num_rows()),
        })
        .collect();
    Ok((typed, RecordBatch::try_new(logical, columns)?))
}

fn has_star(clauses: &[MergeClause]) -> bool {
    clauses
        .iter()
        .any(|c| matches!(c.action, MergeAction::UpdateAll | MergeAction::InsertAll))
}

fn column(q: &str, name: &str) -> Expr {
    Expr::Column(vec![q.to_string(), name.to_string()])
}

/// Binds one clause against `scope`, producing rows of `table_schema` (the evolved schema).
fn bind_clause(
    c: &MergeClause,
    scope: &Scope,
    table_schema: &StructType,
    merge_schema: bool,
    column_rules: &std::sync::Arc<ColumnRules>,
) -> Result<BoundClause> {
    let projection = |values: Vec<ColumnValue>, kind: RowKind| {
        Projection::new(table_schema, values, column_rules.clone(), kind)
    };
    let sides = match c.kind {
        ClauseKind::Matched => Sides::BOTH,
        ClauseKind::NotMatched => Sides::SOURCE_ONLY,
        ClauseKind::NotMatchedBySource => Sides::TARGET_ONLY,
    };
    let what = format!("WHEN {} clause", c.kind.sql());
    let condition = match &c.condition {
        Some(e) => Some(scope.bind_condition(e, sides, &what)?),
        None => None,
    };
    let in_target = |name: &str| scope.target.field(name).is_some();
    let in_source = |name: &str| scope.source.field(name).is_some();
    let unknown_assigned = |a: &[crate::rows::assign::Assignment]| -> Result<()> {
        for x in a {
            if table_schema.field(&x.column).is_none() {
                let names = table_schema.fields.iter().map(|f| f.name.as_str());
                return Err(Error::InvalidArgument(format!(
                    "{what}: the target has no column `{}`{}",
                    x.column,
                    alluvium_expr::nearest_name(&x.column, names)
                        .map(|n| format!("; did you mean `{n}`?"))
                        .unwrap_or_default()
                )));
            }
        }
        Ok(())
    };
    let action = match &c.action {
        MergeAction::Delete => BoundAction::Delete,
        MergeAction::Update(assign) => {
            unknown_assigned(assign)?;
            for a in assign {
                column_rules.check_assignable(&a.column)?;
            }
            let mut values = Vec::with_capacity(table_schema.fields.len());
            for f in &table_schema.fields {
                let v = match assigned(assign, &f.name) {
                    Some(a) => ColumnValue::Expr(scope.bind_assignment(
                        &a.value,
                        &f.data_type,
                        sides,
                        &what,
                    )?),
                    // Computed again from the new values of its sources (Delta Spark's
                    // rule for generated columns an update does not set).
                    None if column_rules.is_generated(&f.name) => ColumnValue::Null,
                    None if in_target(&f.name) => ColumnValue::Expr(scope.bind_assignment(
                        &column(TARGET, &f.name),
                        &f.data_type,
                        sides,
                        &what,
                    )?),
                    None => ColumnValue::Null,
                };
                values.push(v);
            }
            BoundAction::Update(projection(values, RowKind::Update)?)
        }
        MergeAction::UpdateAll => {
            let mut values = Vec::with_capacity(table_schema.fields.len());
            for f in &table_schema.fields {
                // `UPDATE SET *` keeps identity values (they are never updated).
                let expr = if column_rules.is_identity(&f.name) && in_target(&f.name) {
                    column(TARGET, &f.name)
                } else if column_rules.is_generated(&f.name) && !in_source(&f.name) {
                    // Computed again from the new values of its sources.
                    values.push(ColumnValue::Null);
                    continue;
                } else if in_source(&f.name) {
                    column(SOURCE, &f.name)
                } else if merge_schema && in_target(&f.name) {
                    column(TARGET, &f.name)
                } else {
                    return Err(Error::SchemaMismatch(format!(
                        "{what}: UPDATE SET * needs source column `{}` (or schema merging)",
                        f.name
                    )));
                };
                values.push(ColumnValue::Expr(scope.bind_assignment(
                    &expr,
                    &f.data_type,
                    sides,
                    &what,
                )?));
            }
            BoundAction::Update(projection(values, RowKind::Update)?)
        }
        MergeAction::Insert(assign) => {
            unknown_assigned(assign)?;
            let mut values = Vec::with_capacity(table_schema.fields.len());
            for f in &table_schema.fields {
                let v = match assigned(assign, &f.name) {
                    Some(a) => ColumnValue::Expr(scope.bind_assignment(
                        &a.value,
                        &f.data_type,
                        sides,
                        &what,
                    )?),
                    None if f.nullable || rules::may_omit(f) => ColumnValue::Null,
                    None => {
                        return Err(Error::SchemaMismatch(format!(
                            "{what}: INSERT gives no value for NOT NULL column `{}`",
                            f.name
                        )));
                    }
                };
                values.push(v);
            }
            BoundAction::Insert(projection(values, RowKind::Insert)?)
        }
        MergeAction::InsertAll => {
            let mut values = Vec::with_capacity(table_schema.fields.len());
            for f in &table_schema.fields {
                let v = if in_source(&f.name) {
                    ColumnValue::Expr(scope.bind_assignment(
                        &column(SOURCE, &f.name),
                        &f.data_type,
                        sides,
                        &what,
                    )?)
                } else if (merge_schema && f.nullable) || rules::may_omit(f) {
                    // Identity, generated and default columns the source lacks get
                    // their values from the column rules.
                    ColumnValue::Null
                } else {
                    return Err(Error::SchemaMismatch(format!(
                        "{what}: INSERT * needs source column `{}` (or schema merging)",
                        f.name
                    )));
                };
                values.push(v);
            }
            BoundAction::Insert(projection(values, RowKind::Insert)?)
        }
    };
    Ok(BoundClause {
        kind: c.kind,
        condition,
        action,
    })
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

pub(super) fn run(spec: MergeSpec<'_>) -> Result<DmlOutcome> {
    let started = Instant::now();
    let MergeSpec {
        table,
        source,
        on,
        on_text,
        clauses,
        merge_schema,
        options,
    } = spec;
    let snapshot = table.read_snapshot(options)?;
    let mut txn = Transaction::new(snapshot.inner(), "MERGE");
    txn.set_parameter("predicate", on_text.clone());
    txn.set_parameter(
        "matchedPredicates",
        clause_json(&clauses, ClauseKind::Matched),
    );
    txn.set_parameter(
        "notMatchedPredicates",
        clause_json(&clauses, ClauseKind::NotMatched),
    );
    txn.set_parameter(
        "notMatchedBySourcePredicates",
        clause_json(&clauses, ClauseKind::NotMatchedBySource),
    );
    if let Some(o) = outcome_if_done(&mut txn, &snapshot, options) {
        return Ok(DmlOutcome::skipped(o));
    }
    if clauses.is_empty() {
        return Err(Error::InvalidArgument(
            "a MERGE needs at least one WHEN clause".into(),
        ));
    }
    // On a change-data-feed table a MERGE that can change existing rows records all its
    // changes (inserts too); an insert-only MERGE is an append and records none.
    let records_changes = clauses.iter().any(|c| c.kind != ClauseKind::NotMatched)
        && change_data::records_changes(&snapshot.metadata().configuration);

    // Plan: nothing below writes a file until every clause is bound.
    let (source_schema, source) = load_source(source)?;
    let num_source_rows = source.num_rows() as u64;
    let target = snapshot.schema().clone();
    let (source_schema, source) = type_void_columns(&target, source_schema, source)?;
    let mut table_schema = target.clone();
    if merge_schema && has_star(&clauses) {
        let partitions = snapshot.partition_columns();
        let new_fields: Vec<_> = source_schema
            .fields
            .iter()
            .filter(|f| target.field(&f.name).is_none())
            .map(|f| {
                let mut f = f.clone();
                f.nullable = true;
                f.metadata.clear();
                f
            })
            .collect();
        if let Some(p) = new_fields
            .iter()
            .find(|f| partitions.iter().any(|p| p.eq_ignore_ascii_case(&f.name)))
        {
            return Err(Error::SchemaMismatch(format!(
                "new column `{}` cannot be a partition column",
                p.name
            )));
        }
        evolve_schema(&snapshot, &mut txn, &mut table_schema, new_fields);
    }
    let scope = Scope::new(&target, &source_schema)?;
    let on_q = scope.qualify(&on, Sides::BOTH, "ON")?;
    let on_cond = analyse_on(&on_q, &scope)?;
    let residual = match &on_cond.residual {
        Some(r) => Some(bind(r, &scope.synthetic, &[], ColumnMappingMode::None)?),
        None => None,
    };
    let column_rules = std::sync::Arc::new(ColumnRules::new(
        &snapshot,
        &table_schema,
        &snapshot.metadata().configuration,
    )?);
    let bound: Vec<BoundClause> = clauses
        .iter()
        .map(|c| bind_clause(c, &scope, &table_schema, merge_schema, &column_rules))
        .collect::<Result<_>>()?;
    let of_kind =
        |k: ClauseKind| -> Vec<&BoundClause> { bound.iter().filter(|c| c.kind == k).collect() };
    let matched = of_kind(ClauseKind::Matched);
    let not_matched = of_kind(ClauseKind::NotMatched);
    let by_source = of_kind(ClauseKind::NotMatchedBySource);
    // Delta's rule: several source rows for one target row are ambiguous unless the only
    // MATCHED clause is an unconditional DELETE (every pair deletes the same row).
    let multiple_matches_ok = matched.len() == 1
        && matched[0].condition.is_none()
        && matches!(matched[0].action, BoundAction::Delete);

    // Only the target columns something reads are decoded (an upsert with `UPDATE SET *`
    // reads just the keys); the others stay NULL in the `t` struct, which no bound
    // expression refers to.
    let mut needed: BTreeSet<usize> = on_cond.keys.iter().map(|k| k.target).collect();
    // Pre-images and deleted rows are recorded whole. A copy-on-write rewrite decodes every
    // touched file whole anyway, so it records them (`apply_deletes` with the change
    // writer): the scan stays on the columns the clauses read. With deletion vectors,
    // without NOT MATCHED BY SOURCE only matched rows are recorded: files are probed on the
    // columns the clauses read and the matched rows alone are then decoded whole
    // (`whole_rows`); with it every target row may be recorded, so every column is read.
    let old_by_rewrite = records_changes && !writes_deletion_vectors(&snapshot);
    let whole_matched_only = records_changes && !old_by_rewrite && by_source.is_empty();
    if records_changes && !old_by_rewrite && !whole_matched_only {
        needed.extend(0..target.fields.len());
    }
    {
        let mut note = |c: &BoundColumn| {
            if c.path.first().map(String::as_str) == Some(TARGET)
                && let Some(i) = c.path.get(1).and_then(|n| target.index_of(n))
            {
                needed.insert(i);
            }
        };
        if let Some(r) = &residual {
            r.columns().into_iter().for_each(&mut note);
        }
        for c in &bound {
            if let Some(p) = &c.condition {
                p.columns().into_iter().for_each(&mut note);
            }
            if let BoundAction::Update(p) | BoundAction::Insert(p) = &c.action {
                p.columns().into_iter().for_each(&mut note);
            }
        }
    }
    let mut read_names: Vec<String> = needed
        .iter()
        .map(|i| target.fields[*i].name.clone())
        .collect();
    // Row tracking: target rows are read with their stable row ids (last column), which
    // updated rows keep; new files carry the hidden columns after the table's.
    let layout = crate::read::scan::rewrite_layout(&snapshot);
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
    let whole: Option<(ReadPlan, BTreeSet<usize>)> = match whole_matched_only {
        true => {
            let mut names: Vec<String> = target.fields.iter().map(|f| f.name.clone()).collect();
            if tracked.is_on() {
                names.push(hidden[0].name.clone());
            }
            let all: BTreeSet<usize> = (0..target.fields.len()).collect();
            Some((ReadPlan::new(layout.clone(), Some(&names), None)?, all))
        }
        false => None,
    };
    let plan = ReadPlan::new(layout, Some(&read_names), None)?;
    let index = SourceIndex::build(&source, &on_cond.keys)?;
    let prune = if by_source.is_empty() {
        pruning(&scope, &on_cond.keys, &source, &index)
    } else {
        Pruning::All
    };
    let candidates: Vec<Add> = match &prune {
        Pruning::Nothing => Vec::new(),
        Pruning::All => {
            txn.read_predicate(Predicate::Const(Some(true)));
            snapshot.files().cloned().collect()
        }
        Pruning::Where(e) => {
            let p = bind(
                e,
                &target,
                snapshot.partition_columns(),
                snapshot.column_mapping(),
            )?;
            let files = snapshot
                .inner()
                .files_matching(&p)
                .map(|m| m.add.clone())
                .collect();
            txn.read_predicate(p);
            files
        }
    };
    // The pruning predicate is shown when short (a long IN list would bloat the commit).
    let pruning_text = match &prune {
        Pruning::Nothing => "false".to_string(),
        Pruning::All => "true".to_string(),
        Pruning::Where(e) => e.to_string(),
    };
    if pruning_text.len() <= 1000 {
        txn.set_parameter("pruningPredicate", pruning_text);
    }

    // Run.
    let configuration = txn
        .effective_metadata()
        .map(|m| m.configuration.clone())
        .unwrap_or_default();
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
    .materialize_partition_columns(crate::rows::materializes(&snapshot))?;
    let changes = match records_changes {
        true => change_data::writer_for(
            table,
            &snapshot,
            &table_schema,
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
                        &scope,
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
                                        &on_cond.keys,
                                        &target,
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
                    let probed: Vec<Probed> = plan
                        .read_file_with_positions(a)?
                        .into_iter()
                        .map(|(read, positions)| {
                            let batch = widen(&read, &needed, &scope)?;
                            let (t_rows, s_rows) =
                                matching_pairs(&index, residual.as_ref(), &scope, &batch, &source)?;
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
                            whole_rows(whole_plan, all, &scope, tracked, a, probed)
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
        if !not_matched.is_empty() {
            let rows: Vec<u32> = (0..source.num_rows() as u32)
                .filter(|j| !source_matched[*j as usize])
                .collect();
            for chunk in rows.chunks(64 * 1024) {
                let si = UInt32Array::from(chunk.to_vec());
                let joined = scope.joined(None, Some((&source, &si)), si.len())?;
                let decided = decide(&not_matched, &joined)?;
                let mut none = RoaringTreemap::new();
                let (_, _, ins) = act(
                    &not_matched,
                    &decided,
                    &joined,
                    &|_| None,
                    &|_| None,
                    tracked,
                    &mut sink,
                    &mut none,
                    changes.as_ref(),
                    None,
                )?;
                counts.inserted += ins;
            }
        }
        Ok(())
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
        old_by_rewrite,
        options.inline_dv_max_bytes(),
    )?;
    let rewrite_ms = rewrite_started.elapsed().as_millis() as u64;
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
    m.set("numTargetFilesAdded", new_files + stats.files_added);
    m.set("numTargetFilesRemoved", stats.files_removed);
    m.set("numTargetDeletionVectorsAdded", stats.dvs_added);
    m.set("numDeletionVectorsAdded", stats.dvs_added);
    m.set("numTargetChangeFilesAdded", change_files);
    m.set("numTargetBytesAdded", new_bytes + stats.bytes_added);
    m.set("numTargetFilesScanned", counts.files_read);
    m.set("scanTimeMs", scan_ms);
    m.set("rewriteTimeMs", rewrite_ms);
    m.set("executionTimeMs", started.elapsed().as_millis() as u64);
    column_rules.stage_identity(&snapshot, &mut txn)?;
    finish_dml(table, txn, options, m)
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
