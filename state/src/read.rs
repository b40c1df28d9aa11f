//! Reads of a store: point lookups (`get`), the whole state (`scan`) at the latest state or
//! a past one, and a key's events (`history`).
//!
//! A lookup prunes `state/`'s files with `key IN (...)` against their key statistics and
//! partition values and filters row groups the same way (the scan's predicate); the sync
//! keeps files' key ranges narrow (sorted MERGE sources, Z-order compaction), so a lookup
//! reads few files. The latest snapshot is the table handle's cached one, refreshed
//! incrementally (new commits only) on each call.

use std::collections::HashMap;

use alluvium::Snapshot;
use alluvium::{Expr, Literal, VersionSpec};
use alluvium_txlog::scalar::scalar_at;
use arrow_array::{ArrayRef, RecordBatch, RecordBatchReader};

use super::events::key_columns;
use super::fold::{KeyRow, key_converter};
use super::layout::{EVENT_TIME, SEQ};
use super::lookup::Lookup;
use super::{StateAt, StateError, StateStore};
use crate::Result;
use alluvium::{Error, ScanBuilder, Table};

/// Above this many keys a lookup does not list the values of a key column in its filter
/// (file pruning then uses nothing; rows are still matched exactly).
const MAX_IN_LIST: usize = 65_536;

/// The snapshot of `table` at `at`.
pub(crate) fn snapshot_at(table: &Table, at: StateAt) -> Result<Snapshot> {
    let snapshot = match at {
        StateAt::Latest => table.snapshot()?,
        StateAt::Version(v) => {
            let v = u64::try_from(v)
                .map_err(|_| Error::InvalidArgument(format!("state version {v} is negative")))?;
            table.snapshot_at(VersionSpec::Version(v))?
        }
        StateAt::Timestamp(ms) => table.snapshot_at(VersionSpec::Timestamp(ms))?,
    };
    Ok(snapshot)
}

/// The literal of row `row` of a key column. Integers are given as numbers, typed by the
/// column they are compared with (a typed `Integer` in an `IN` list is refused by the
/// evaluation of some integer widths).
pub(crate) fn key_literal(
    array: &dyn arrow_array::Array,
    row: usize,
    prim: alluvium_txlog::schema::PrimitiveType,
) -> Result<Literal> {
    use alluvium_txlog::scalar::Scalar;
    Ok(match scalar_at(array, row, prim)? {
        Scalar::Byte(v) => Literal::Number(v.to_string()),
        Scalar::Short(v) => Literal::Number(v.to_string()),
        Scalar::Integer(v) => Literal::Number(v.to_string()),
        Scalar::Long(v) => Literal::Number(v.to_string()),
        other => Literal::Typed(other),
    })
}

/// `column IN (values)`, AND-ed over `columns` (lists of at most [`MAX_IN_LIST`]).
fn in_lists(snapshot: &Snapshot, names: &[String], columns: &[ArrayRef]) -> Result<Option<Expr>> {
    let mut out: Option<Expr> = None;
    for (name, col) in names.iter().zip(columns) {
        if col.len() > MAX_IN_LIST {
            continue;
        }
        let Some(prim) = snapshot
            .schema()
            .field(name)
            .and_then(|f| f.data_type.as_primitive())
        else {
            continue;
        };
        let mut list = Vec::with_capacity(col.len());
        for i in 0..col.len() {
            list.push(key_literal(col.as_ref(), i, prim)?);
        }
        let e = Expr::column(name).is_in(list);
        out = Some(match out {
            Some(o) => o.and(e),
            None => e,
        });
    }
    Ok(out)
}

impl StateStore {
    /// The state rows of `keys` (a batch with the key columns; other columns are ignored)
    /// at `at`: one row per key that is live there, in the order of `keys` (a key given
    /// twice is returned once), with the columns of `state/` (keys, values,
    /// `event_time`, `seq`). Missing keys are simply absent.
    ///
    /// # Errors
    /// [`StateError::MissingColumn`] / [`StateError::ColumnType`] /
    /// [`StateError::NullValue`] for key columns that are absent, of an unconvertible type
    /// or NULL; a version or timestamp with no state; storage errors.
    pub fn get(&self, keys: &RecordBatch, at: StateAt) -> Result<RecordBatch> {
        let snapshot = snapshot_at(&self.state, at)?;
        let layout = &self.layout;
        if keys.num_rows() == 0 {
            return Ok(RecordBatch::new_empty(layout.state.clone()));
        }
        let wanted_cols = key_columns("get", layout, keys)?;
        let converter = key_converter(layout)?;
        let wanted_rows = converter.convert_columns(&wanted_cols)?;
        let mut wanted: HashMap<KeyRow, usize> = HashMap::new();
        for i in 0..keys.num_rows() {
            wanted.entry(wanted_rows.row(i).owned()).or_insert(i);
        }
        let filter = in_lists(&snapshot, &layout.keys, &wanted_cols)?;
        let lookup = Lookup {
            snapshot: &snapshot,
            layout,
            cache: &self.lookup_cache,
        };
        let fast = match &filter {
            Some(f) if lookup.applies() && wanted_cols[0].len() <= MAX_IN_LIST => {
                lookup.candidates(f, &wanted_cols[0])?
            }
            _ => None,
        };
        let candidates: Box<dyn Iterator<Item = Result<RecordBatch>>> = match fast {
            Some(batches) => Box::new(batches.into_iter().map(Ok)),
            None => {
                let mut scan = ScanBuilder::new(snapshot.clone());
                if let Some(f) = filter {
                    scan = scan.with_filter(f);
                }
                Box::new(scan.build()?.execute().map(|r| r.map_err(StateError::from)))
            }
        };
        let mut batches: Vec<RecordBatch> = Vec::new();
        // (position in `keys`, batch, row)
        let mut found: Vec<(usize, usize, usize)> = Vec::new();
        for batch in candidates {
            let batch = batch?;
            let cols: Vec<ArrayRef> = layout
                .keys
                .iter()
                .map(|k| batch.column_by_name(k).cloned())
                .collect::<Option<_>>()
                .ok_or_else(|| Error::SchemaMismatch("state rows lack a key column".into()))?;
            let rows = converter.convert_columns(&cols)?;
            let b = batches.len();
            let mut any = false;
            for r in 0..batch.num_rows() {
                if let Some(pos) = wanted.remove(&rows.row(r).owned()) {
                    found.push((pos, b, r));
                    any = true;
                }
            }
            if any {
                batches.push(batch);
            }
        }
        if found.is_empty() {
            return Ok(RecordBatch::new_empty(layout.state.clone()));
        }
        found.sort_unstable();
        let picks: Vec<(usize, usize)> = found.iter().map(|(_, b, r)| (*b, *r)).collect();
        let refs: Vec<&RecordBatch> = batches.iter().collect();
        let out = arrow_select::interleave::interleave_record_batch(&refs, &picks)?;
        Ok(RecordBatch::try_new(
            layout.state.clone(),
            out.columns().to_vec(),
        )?)
    }

    /// The whole state at `at`, streamed (memory bounded by the read window, not the
    /// state's size). Columns: those of `state/`.
    ///
    /// # Errors
    /// A version or timestamp with no state; storage errors (also from the stream).
    pub fn scan(&self, at: StateAt) -> Result<Box<dyn RecordBatchReader + Send>> {
        let snapshot = snapshot_at(&self.state, at)?;
        let scan = ScanBuilder::new(snapshot).build()?;
        Ok(Box::new(scan.execute()))
    }

    /// Every event of one key in the log (still retained), ordered by (`event_time`,
    /// `seq`), with the log's columns. `seq` is what the producer gave (NULL when the fold
    /// assigns it).
    ///
    /// # Errors
    /// [`StateError::NotOneKey`] unless `key` has exactly one row; key column errors as
    /// [`get`](Self::get); storage errors.
    pub fn history(&self, key: &RecordBatch) -> Result<RecordBatch> {
        if key.num_rows() != 1 {
            return Err(StateError::NotOneKey {
                rows: key.num_rows(),
            });
        }
        let layout = &self.layout;
        let cols = key_columns("history", layout, key)?;
        let snapshot = self.log.snapshot()?;
        let mut scan = ScanBuilder::new(snapshot.clone());
        if let Some(filter) = in_lists(&snapshot, &layout.keys, &cols)? {
            scan = scan.with_filter(filter);
        }
        let batches = scan.build()?.execute_to_vec()?;
        let all = arrow_select::concat::concat_batches(&layout.log, &batches)?;
        let sort = [EVENT_TIME, SEQ]
            .iter()
            .map(|c| -> Result<arrow::compute::SortColumn> {
                Ok(arrow::compute::SortColumn {
                    values: all
                        .column_by_name(c)
                        .cloned()
                        .ok_or_else(|| Error::SchemaMismatch(format!("log has no `{c}`")))?,
                    options: None,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let order = arrow::compute::lexsort_to_indices(&sort, None)?;
        let sorted = arrow_select::take::take_record_batch(&all, &order)?;
        Ok(RecordBatch::try_new(
            layout.log.clone(),
            sorted.columns().to_vec(),
        )?)
    }
}
