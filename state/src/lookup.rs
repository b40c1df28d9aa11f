//! Point lookups that read only what may hold the keys (SPEC.md §26 ST6): the `state/`
//! files whose key statistics may hold one (the scan's file pruning), in each of them the
//! row groups whose first-key statistics may, and in those the data pages whose
//! page-index bounds may; only those byte ranges are fetched from the store. Rows deleted
//! by a deletion vector are left out of the row selection; with few keys, the first key
//! column is decoded first and the other columns only for the rows that hold a key.
//! Footers with their page indexes, and deletion vectors, are cached per file (data files
//! and DV files never change under a name).
//!
//! Used only where it applies (files under the table root, no partition columns, no column
//! mapping, which is every `state/` table this code creates); otherwise the lookup falls
//! back to an ordinary filtered scan.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use alluvium::Snapshot;
use alluvium::{Expr, FileLocation, StorePath, StoreRef};
use alluvium_txlog::FileRef;
use alluvium_txlog::column_mapping::ColumnMappingMode;
use arrow::compute::kernels::boolean::or;
use arrow::compute::kernels::cmp::{eq, gt_eq, lt_eq};
use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, Scalar};
use bytes::{Buf, Bytes};
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use parquet::arrow::arrow_reader::{
    ArrowPredicateFn, ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
    RowFilter, RowSelection, RowSelector,
};
use parquet::errors::ParquetError;
use parquet::file::metadata::PageIndexPolicy;
use parquet::file::reader::{ChunkReader, Length};

use super::layout::Layout;
use crate::Result;
use alluvium::Error;

/// Entries each cache holds before it is emptied (a bound on memory, not an LRU: files of
/// a compacted-away layout then drop out).
const MAX_CACHED: usize = 4096;

/// Footers and deletion vectors of `state/` files, shared by the clones of a store.
#[derive(Debug, Default)]
pub(crate) struct LookupCache {
    footers: Mutex<HashMap<String, ArrowReaderMetadata>>,
    dvs: Mutex<HashMap<String, Arc<Vec<u64>>>>,
}

fn cached<V: Clone>(
    map: &Mutex<HashMap<String, V>>,
    key: &str,
    load: impl FnOnce() -> Result<V>,
) -> Result<V> {
    if let Some(v) = map.lock().ok().and_then(|m| m.get(key).cloned()) {
        return Ok(v);
    }
    let v = load()?;
    if let Ok(mut m) = map.lock() {
        if m.len() >= MAX_CACHED {
            m.clear();
        }
        m.insert(key.to_string(), v.clone());
    }
    Ok(v)
}

/// A data file read by ranges through the store.
struct RangeReader {
    store: StoreRef,
    path: StorePath,
    size: u64,
}

impl Length for RangeReader {
    fn len(&self) -> u64 {
        self.size
    }
}

impl ChunkReader for RangeReader {
    type T = bytes::buf::Reader<Bytes>;

    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        let len = usize::try_from(self.size.saturating_sub(start))
            .map_err(|e| ParquetError::General(e.to_string()))?;
        Ok(self.get_bytes(start, len)?.reader())
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        self.store
            .get_range(&self.path, start..start + length as u64)
            .map_err(|e| ParquetError::External(Box::new(e)))
    }
}

/// Up to this many keys a lookup filters rows on the first key column while reading.
const MAX_FILTER_KEYS: usize = 64;

/// `selectors` (over the rows of the row groups `selected`, in order) without the rows at
/// the physical positions `deleted` (sorted).
fn without_deleted(
    selectors: &[RowSelector],
    selected: &[usize],
    groups: &[parquet::file::metadata::RowGroupMetaData],
    deleted: &[u64],
) -> Vec<RowSelector> {
    let mut starts = Vec::with_capacity(groups.len());
    let mut at = 0u64;
    for g in groups {
        starts.push(at);
        at += g.num_rows().max(0) as u64;
    }
    let mut out = Vec::with_capacity(selectors.len());
    let mut sel = selectors.iter();
    for &g in selected {
        let mut row = starts[g];
        let end = row + groups[g].num_rows().max(0) as u64;
        while row < end {
            let Some(s) = sel.next() else { break };
            let n = s.row_count as u64;
            if s.skip {
                out.push(*s);
            } else {
                // The deleted positions inside [row, row + n).
                let lo = deleted.partition_point(|d| *d < row);
                let hi = deleted.partition_point(|d| *d < row + n);
                let mut cur = row;
                for &d in &deleted[lo..hi] {
                    if d > cur {
                        out.push(RowSelector::select((d - cur) as usize));
                    }
                    out.push(RowSelector::skip(1));
                    cur = d + 1;
                }
                if cur < row + n {
                    out.push(RowSelector::select((row + n - cur) as usize));
                }
            }
            row += n;
        }
    }
    out
}

/// Whether each `[min, max]` may hold one of `keys` (NULL bounds: unknown, may).
fn may_hold(mins: &ArrayRef, maxes: &ArrayRef, keys: &ArrayRef) -> Result<Vec<bool>> {
    let mut out = vec![false; mins.len()];
    for i in 0..keys.len() {
        let k = Scalar::new(keys.slice(i, 1));
        let lo: BooleanArray = lt_eq(mins, &k)?;
        let hi: BooleanArray = gt_eq(maxes, &k)?;
        for (j, o) in out.iter_mut().enumerate() {
            let lo_ok = lo.is_null(j) || lo.value(j);
            let hi_ok = hi.is_null(j) || hi.value(j);
            *o |= lo_ok && hi_ok;
        }
    }
    Ok(out)
}

/// The lookup of one snapshot.
pub(crate) struct Lookup<'a> {
    pub(crate) snapshot: &'a Snapshot,
    pub(crate) layout: &'a Layout,
    pub(crate) cache: &'a LookupCache,
}

impl Lookup<'_> {
    /// Whether the fast path applies to the snapshot's table.
    pub(crate) fn applies(&self) -> bool {
        self.snapshot.partition_columns().is_empty()
            && self.snapshot.column_mapping() == ColumnMappingMode::None
    }

    /// The rows of the files, row groups and pages that may hold a key of `filter` (whose
    /// first-key values are `first_keys`), deletion vectors applied, with the columns of
    /// `state/`. A superset of the matching rows; `None` when a file is outside the table
    /// root (the caller then scans).
    pub(crate) fn candidates(
        &self,
        filter: &Expr,
        first_keys: &ArrayRef,
    ) -> Result<Option<Vec<RecordBatch>>> {
        let snapshot = self.snapshot;
        let mut out = Vec::new();
        // Only the statistics of the key columns are parsed, not every column's.
        for add in snapshot.files_matching(filter)? {
            let location = snapshot.file_location(add.path())?;
            let FileLocation::Table(path) = location else {
                return Ok(None);
            };
            out.extend(self.read_file(add, path, first_keys)?);
        }
        Ok(Some(out))
    }

    fn read_file(
        &self,
        add: FileRef<'_>,
        path: StorePath,
        first_keys: &ArrayRef,
    ) -> Result<Vec<RecordBatch>> {
        let store = self.snapshot.store().clone();
        let size = u64::try_from(add.size()).unwrap_or(0);
        let reader = RangeReader {
            store: store.clone(),
            path: path.clone(),
            size,
        };
        let meta = cached(&self.cache.footers, path.as_str(), || {
            Ok(ArrowReaderMetadata::load(
                &reader,
                ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::Optional),
            )?)
        })?;
        let file_schema = meta.schema().clone();
        let first = &self.layout.keys[0];
        let Some((_, key_field)) = file_schema.column_with_name(first) else {
            return Err(Error::SchemaMismatch(format!(
                "{}: no key column `{first}`",
                path.as_str()
            ))
            .into());
        };
        let keys = if first_keys.data_type() == key_field.data_type() {
            first_keys.clone()
        } else {
            arrow_cast::cast(first_keys, key_field.data_type())?
        };
        let pmeta = meta.metadata().clone();
        let meta_schema = Arc::new(meta.parquet_schema().clone());
        let converter = StatisticsConverter::try_new(first, &file_schema, meta.parquet_schema())?;
        let groups = pmeta.row_groups();
        let mins = converter.row_group_mins(groups.iter())?;
        let maxes = converter.row_group_maxes(groups.iter())?;
        let selected: Vec<usize> = may_hold(&mins, &maxes, &keys)?
            .into_iter()
            .enumerate()
            .filter_map(|(i, m)| m.then_some(i))
            .collect();
        if selected.is_empty() {
            return Ok(Vec::new());
        }
        // Pages of the selected row groups, when the file has a page index.
        let mut selectors: Vec<RowSelector> = Vec::new();
        let mut pages_known = false;
        if let Some(index) = pmeta.page_index()
            && index.is_complete()
        {
            let pmins = converter.data_page_mins(index.as_ref(), selected.iter())?;
            let pmaxes = converter.data_page_maxes(index.as_ref(), selected.iter())?;
            if let Some(counts) =
                converter.data_page_row_counts(index.as_ref(), groups, selected.iter())?
                && counts.len() == pmins.len()
                && counts.null_count() == 0
            {
                let may = may_hold(&pmins, &pmaxes, &keys)?;
                for (j, m) in may.into_iter().enumerate() {
                    let n = counts.value(j) as usize;
                    selectors.push(if m {
                        RowSelector::select(n)
                    } else {
                        RowSelector::skip(n)
                    });
                }
                pages_known = true;
            }
        }
        if !pages_known {
            selectors = selected
                .iter()
                .map(|i| RowSelector::select(groups[*i].num_rows() as usize))
                .collect();
        }
        if !selectors.iter().any(|s| !s.skip) {
            return Ok(Vec::new());
        }
        // Rows a deletion vector removes are taken out of the selection itself, so the
        // reader never returns them (no position bookkeeping after the read).
        if let Some(dv) = &add.deletion_vector() {
            let deleted = cached(&self.cache.dvs, &format!("{dv:?}"), || {
                let bitmap = alluvium_txlog::dv::read_deletion_vector(store.as_ref(), dv)?;
                Ok(Arc::new(bitmap.iter().collect::<Vec<u64>>()))
            })?;
            selectors = without_deleted(&selectors, &selected, groups, &deleted);
        }
        let mut builder = ParquetRecordBatchReaderBuilder::new_with_metadata(reader, meta)
            .with_row_groups(selected)
            .with_row_selection(RowSelection::from(selectors))
            .with_batch_size(8192);
        // Few keys: the first key column is decoded first and the other columns only for
        // the rows holding one of them.
        if keys.len() <= MAX_FILTER_KEYS
            && let Some(root) = file_schema.index_of(first).ok()
        {
            let mask = ProjectionMask::roots(meta_schema.as_ref(), [root]);
            let wanted = keys.clone();
            let predicate = ArrowPredicateFn::new(mask, move |batch: RecordBatch| {
                let col = batch.column(0);
                let mut hit = eq(col, &Scalar::new(wanted.slice(0, 1)))?;
                for i in 1..wanted.len() {
                    hit = or(&hit, &eq(col, &Scalar::new(wanted.slice(i, 1)))?)?;
                }
                Ok(hit)
            });
            builder = builder.with_row_filter(RowFilter::new(vec![Box::new(predicate)]));
        }
        let mut out = Vec::new();
        for batch in builder.build()? {
            out.push(self.conform(&batch?, path.as_str())?);
        }
        Ok(out)
    }

    /// `batch` with the columns of `state/`, by name, cast where the file's type differs.
    fn conform(&self, batch: &RecordBatch, shown: &str) -> Result<RecordBatch> {
        let schema = &self.layout.state;
        let mut cols = Vec::with_capacity(schema.fields().len());
        for f in schema.fields() {
            let c = batch.column_by_name(f.name()).ok_or_else(|| {
                Error::SchemaMismatch(format!("{shown}: no column `{}`", f.name()))
            })?;
            cols.push(if c.data_type() == f.data_type() {
                c.clone()
            } else {
                arrow_cast::cast(c, f.data_type())?
            });
        }
        Ok(RecordBatch::try_new_with_options(
            schema.clone(),
            cols,
            &arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
        )?)
    }
}
