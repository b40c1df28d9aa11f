//! Reading one data file with a [`ReadPlan`].

use alluvium_txlog::actions::Add;
use alluvium_txlog::dv::read_deletion_vector;
use alluvium_txlog::partition::parse_partition_value;
use alluvium_txlog::path::resolve;
use alluvium_txlog::schema::{ArrowStrings, DataType, PrimitiveType, StructField};
use alluvium_txlog::{FileRef, LogError};
use arrow_array::builder::BooleanBufferBuilder;
use arrow_array::cast::AsArray;
use arrow_array::types::UInt64Type;
use arrow_array::{ArrayRef, BooleanArray, RecordBatch, RecordBatchOptions, UInt64Array};
use arrow_select::concat::concat_batches;
use arrow_select::filter::{filter, filter_record_batch};
use bytes::Bytes;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder, RowSelection,
    RowSelector,
};
use roaring::RoaringTreemap;

use super::ReadPlan;
use super::conform::{conform_as, find_source, scan_type};
use crate::{DataFileError, Result};
use alluvium_expr::evaluate;

const BATCH_ROWS: usize = 64 * 1024;

fn file_error(path: &str, reason: impl ToString) -> DataFileError {
    DataFileError::Log(LogError::data_file(path, reason))
}

/// Reads one file: data columns, deletion vector, partition values, filter, projection.
pub(super) fn read_file(scan: &ReadPlan, add: &Add) -> Result<Vec<RecordBatch>> {
    Ok(read(scan, add, false, None)?
        .into_iter()
        .map(|(b, _)| b)
        .collect())
}

/// [`read_file`] with the 0-based physical row index (in the Parquet file) of every
/// returned row.
pub(super) fn read_file_with_positions(
    scan: &ReadPlan,
    add: &Add,
) -> Result<Vec<(RecordBatch, UInt64Array)>> {
    Ok(read(scan, add, true, None)?
        .into_iter()
        .map(|(b, p)| (b, p.unwrap_or_else(|| UInt64Array::from(Vec::<u64>::new()))))
        .collect())
}

/// [`read_file_with_positions`] restricted to the physical rows `rows`: only those rows
/// are decoded (a Parquet row selection), in file order.
pub(super) fn read_rows_at(
    scan: &ReadPlan,
    add: &Add,
    rows: &RoaringTreemap,
) -> Result<Vec<(RecordBatch, UInt64Array)>> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    Ok(read(scan, add, true, Some(rows))?
        .into_iter()
        .map(|(b, p)| (b, p.unwrap_or_else(|| UInt64Array::from(Vec::<u64>::new()))))
        .collect())
}

/// [`read_file`] of exactly the rows whose physical index is in `rows`, whatever the
/// file's deletion vector says (the change feed reads the rows between two deletion
/// vectors of one file). Only those rows are decoded.
pub(super) fn read_file_rows(
    scan: &ReadPlan,
    add: &Add,
    rows: &RoaringTreemap,
) -> Result<Vec<RecordBatch>> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let mut whole = add.clone();
    whole.deletion_vector = None;
    Ok(read(scan, &whole, false, Some(rows))?
        .into_iter()
        .map(|(b, _)| b)
        .collect())
}

/// The Parquet row selection of the physical rows `rows` (all below the file's row count):
/// alternating skips and selects of runs; the rows after the last run are not selected.
fn row_selection(rows: &RoaringTreemap) -> RowSelection {
    let mut selectors = Vec::new();
    let mut next: u64 = 0;
    let mut run: Option<(u64, u64)> = None;
    for r in rows.iter() {
        match &mut run {
            Some((_, end)) if *end == r => *end += 1,
            _ => {
                if let Some((start, end)) = run.take() {
                    if start > next {
                        selectors.push(RowSelector::skip((start - next) as usize));
                    }
                    selectors.push(RowSelector::select((end - start) as usize));
                    next = end;
                }
                run = Some((r, r + 1));
            }
        }
    }
    if let Some((start, end)) = run {
        if start > next {
            selectors.push(RowSelector::skip((start - next) as usize));
        }
        selectors.push(RowSelector::select((end - start) as usize));
    }
    RowSelection::from(selectors)
}

/// The row count of the file's Parquet footer (read alone where the log's size allows).
pub(super) fn physical_rows(scan: &ReadPlan, add: &Add) -> Result<u64> {
    let location = resolve(&add.path, &scan.layout.root)?;
    super::footer::footer_row_count(
        scan.layout.store.as_ref(),
        &location,
        u64::try_from(add.size).ok(),
    )
}

/// A data file's bytes, footer and deletion vector, loaded once for one or two reads.
struct Loaded {
    bytes: Bytes,
    meta: ArrowReaderMetadata,
    deleted: Option<RoaringTreemap>,
    shown: String,
}

fn load(scan: &ReadPlan, add: &Add) -> Result<Loaded> {
    let layout = &scan.layout;
    let location = resolve(&add.path, &layout.root)?;
    let shown = location.to_string();
    let bytes: Bytes = layout.store.get_location(&location).map_err(|e| {
        if e.is_not_found() {
            file_error(&shown, "the data file referenced by the log is missing")
        } else {
            DataFileError::Storage(e)
        }
    })?;
    let deleted = match &add.deletion_vector {
        Some(dv) => Some(read_deletion_vector(layout.store.as_ref(), dv)?),
        None => None,
    };
    let meta = ArrowReaderMetadata::load(&bytes, ArrowReaderOptions::new())
        .map_err(|e| file_error(&shown, e))?;
    Ok(Loaded {
        bytes,
        meta,
        deleted,
        shown,
    })
}

/// The reader behind all three. With a filter whose columns are not all the output
/// (`scan.split`), the filter's columns are read first and the other columns are decoded
/// for the matching rows only; otherwise one pass.
fn read(
    scan: &ReadPlan,
    add: &Add,
    positions: bool,
    only: Option<&RoaringTreemap>,
) -> Result<Vec<(RecordBatch, Option<UInt64Array>)>> {
    let loaded = load(scan, add)?;
    // Stable row ids need every row's physical position.
    let positions = positions || scan.tracked.is_some();
    let out = match (&scan.split, only) {
        (Some(split), None) => read_split(scan, &split.0, &split.1, add, &loaded, positions),
        _ => read_loaded(scan, add, &loaded, positions, only),
    }?;
    let Some(tracked) = scan.tracked else {
        return Ok(out);
    };
    out.into_iter()
        .map(|(b, p)| {
            let p = p.ok_or_else(|| file_error(&loaded.shown, "row positions were not read"))?;
            Ok((
                super::row_tracking::fill(scan, tracked, add, b, &p)?,
                Some(p),
            ))
        })
        .collect()
}

/// Positions first: `find` (the filter's columns, with the filter) gives the matching rows
/// and their filter-column values; `rest` (the other output columns, no filter) is decoded
/// for those rows only; the two are put side by side in the output's column order.
fn read_split(
    scan: &ReadPlan,
    find: &ReadPlan,
    rest: &ReadPlan,
    add: &Add,
    loaded: &Loaded,
    positions: bool,
) -> Result<Vec<(RecordBatch, Option<UInt64Array>)>> {
    let found = read_loaded(find, add, loaded, true, None)?;
    if found.is_empty() {
        return Ok(Vec::new());
    }
    let mut at = RoaringTreemap::new();
    let mut batches = Vec::with_capacity(found.len());
    let mut listed = Vec::with_capacity(found.len());
    for (b, p) in found {
        if let Some(p) = p {
            at.extend(p.values().iter().copied());
            listed.push(p);
        }
        batches.push(b);
    }
    let found = concat_batches(&find.output_schema, &batches)?;
    let rest_batches: Vec<RecordBatch> = read_loaded(rest, add, loaded, false, Some(&at))?
        .into_iter()
        .map(|(b, _)| b)
        .collect();
    let others = concat_batches(&rest.output_schema, &rest_batches)?;
    if others.num_rows() != found.num_rows() {
        return Err(file_error(
            &loaded.shown,
            format!(
                "{} rows matched but {} were read back",
                found.num_rows(),
                others.num_rows()
            ),
        ));
    }
    let mut columns = Vec::with_capacity(scan.output.len());
    for o in &scan.output {
        let col = match find.output.iter().position(|f| f == o) {
            Some(k) => found.column(k).clone(),
            None => match rest.output.iter().position(|r| r == o) {
                Some(k) => others.column(k).clone(),
                None => {
                    return Err(file_error(
                        &loaded.shown,
                        "an output column is in neither half of a split read",
                    ));
                }
            },
        };
        columns.push(col);
    }
    let n = found.num_rows();
    let whole = RecordBatch::try_new_with_options(
        scan.output_schema.clone(),
        columns,
        &RecordBatchOptions::new().with_row_count(Some(n)),
    )?;
    let rows_at = UInt64Array::from_iter_values(at.iter());
    let mut out = Vec::with_capacity(n.div_ceil(BATCH_ROWS));
    let mut start = 0;
    while start < n {
        let len = BATCH_ROWS.min(n - start);
        out.push((
            whole.slice(start, len),
            positions.then(|| rows_at.slice(start, len)),
        ));
        start += len;
    }
    Ok(out)
}

/// One pass over a loaded file: with `positions`, each batch comes with the physical row
/// index of each of its rows. Without `only`, every row of the file is decoded in file
/// order, so the running offset is the physical index; with `only`, just those physical
/// rows are decoded (in file order) and their indexes are taken from `only` itself.
fn read_loaded(
    scan: &ReadPlan,
    add: &Add,
    loaded: &Loaded,
    positions: bool,
    only: Option<&RoaringTreemap>,
) -> Result<Vec<(RecordBatch, Option<UInt64Array>)>> {
    let layout = &scan.layout;
    let schema = &layout.schema;
    let mode = layout.column_mapping;
    let shown = loaded.shown.clone();
    let deleted = loaded.deleted.as_ref();

    // Partition values as constant columns, parsed once per file.
    let partition_cols = &layout.partition_columns;
    let mut constants: Vec<Option<(alluvium_txlog::scalar::Scalar, arrow_schema::DataType)>> =
        Vec::new();
    for &i in &scan.read {
        let f = &schema.fields[i];
        if partition_cols
            .iter()
            .any(|p| p.eq_ignore_ascii_case(&f.name))
        {
            constants.push(Some((
                partition_value(add, f, mode)?,
                scan_type(&f.data_type, scan.form)?,
            )));
        } else {
            constants.push(None);
        }
    }

    let builder = ParquetRecordBatchReaderBuilder::new_with_metadata(
        loaded.bytes.clone(),
        loaded.meta.clone(),
    );
    let total_rows = u64::try_from(builder.metadata().file_metadata().num_rows()).unwrap_or(0);
    if let Some(d) = deleted
        && d.max().is_some_and(|m| m >= total_rows)
    {
        return Err(DataFileError::Log(LogError::CorruptDeletionVector {
            location: shown,
            reason: format!(
                "deletes row {} of a file with {total_rows} rows",
                d.max().unwrap_or(0)
            ),
        }));
    }
    if let Some(o) = only
        && o.max().is_some_and(|m| m >= total_rows)
    {
        return Err(DataFileError::InvalidArgument(format!(
            "{shown}: asked for row {} of a file with {total_rows} rows",
            o.max().unwrap_or(0)
        )));
    }
    let file_fields = builder.schema().fields().clone();
    // For each read column that is stored in the file: its root index in the file.
    let mut sources: Vec<Option<usize>> = Vec::with_capacity(scan.read.len());
    for (k, &i) in scan.read.iter().enumerate() {
        let f = &schema.fields[i];
        sources.push(if constants[k].is_some() {
            None
        } else {
            find_source(&file_fields, f, mode)
        });
    }
    let mut roots: Vec<usize> = sources.iter().flatten().copied().collect();
    roots.sort_unstable();
    roots.dedup();

    let mut out = Vec::new();
    let mut row_offset: u64 = 0;
    // With a row selection: the selected rows in file order, consumed batch by batch.
    let mut selected = only.map(|o| o.iter());
    let mut emit = |data: Vec<Option<ArrayRef>>, rows: usize, row_offset: u64| -> Result<()> {
        // The physical index of each of the batch's rows, when not simply consecutive.
        let listed: Option<UInt64Array> = selected
            .as_mut()
            .map(|it| UInt64Array::from_iter_values(it.by_ref().take(rows)));
        if listed.as_ref().is_some_and(|l| l.len() != rows) {
            return Err(file_error(
                &shown,
                "the row selection returned more rows than asked",
            ));
        }
        let keep = deleted.map(|d| match &listed {
            Some(l) => l.values().iter().map(|r| Some(!d.contains(*r))).collect(),
            None => keep_mask(d, row_offset, rows),
        });
        let kept_rows = keep.as_ref().map_or(rows, |k| k.true_count());
        let mut columns = Vec::with_capacity(scan.read.len());
        for (k, &i) in scan.read.iter().enumerate() {
            let f = &schema.fields[i];
            let col = match (&constants[k], &data[k]) {
                (Some((value, ty)), _) => value.to_array(ty, kept_rows)?,
                (None, Some(arr)) => {
                    let arr = conform_as(arr, f, mode, &f.name, scan.form)
                        .map_err(|e| file_error(&shown, e))?;
                    match &keep {
                        Some(mask) => filter(arr.as_ref(), mask)?,
                        None => arr,
                    }
                }
                (None, None) => {
                    arrow_array::new_null_array(&scan_type(&f.data_type, scan.form)?, kept_rows)
                }
            };
            columns.push(col);
        }
        let batch = RecordBatch::try_new_with_options(
            scan.read_schema.clone(),
            columns,
            &RecordBatchOptions::new().with_row_count(Some(kept_rows)),
        )?;
        let mut rows_at = positions.then(|| {
            let all = match &listed {
                Some(l) => l.clone(),
                None => UInt64Array::from_iter_values(row_offset..row_offset + rows as u64),
            };
            match &keep {
                Some(mask) => filter(&all, mask).map(|a| a.as_primitive::<UInt64Type>().clone()),
                None => Ok(all),
            }
        });
        let batch = match &scan.predicate {
            Some(p) => {
                let m = evaluate(p, &batch)?;
                if let Some(r) = rows_at.take() {
                    rows_at = Some(r.and_then(|r| {
                        filter(&r, &m).map(|a| a.as_primitive::<UInt64Type>().clone())
                    }));
                }
                filter_record_batch(&batch, &m)?
            }
            None => batch,
        };
        let rows_at = rows_at.transpose()?;
        let projected = batch.project(
            &scan
                .output
                .iter()
                .map(|o| scan.read.iter().position(|r| r == o).unwrap_or(0))
                .collect::<Vec<_>>(),
        )?;
        if projected.num_rows() > 0 {
            out.push((projected, rows_at));
        }
        Ok(())
    };

    if roots.is_empty() {
        // No stored column is needed: only the row count matters.
        let mut remaining = match only {
            Some(o) => o.len(),
            None => total_rows,
        };
        while remaining > 0 {
            let rows = usize::try_from(remaining.min(BATCH_ROWS as u64)).unwrap_or(BATCH_ROWS);
            emit(vec![None; scan.read.len()], rows, row_offset)?;
            row_offset += rows as u64;
            remaining -= rows as u64;
        }
        return Ok(out);
    }

    let builder = match view_hint(scan, &file_fields, &sources) {
        Some(hint) => {
            let meta = ArrowReaderMetadata::try_new(
                loaded.meta.metadata().clone(),
                ArrowReaderOptions::new().with_schema(hint),
            )
            .map_err(|e| file_error(&shown, e))?;
            ParquetRecordBatchReaderBuilder::new_with_metadata(loaded.bytes.clone(), meta)
        }
        None => builder,
    };
    let mask = ProjectionMask::roots(builder.parquet_schema(), roots.clone());
    let wanted = only.map_or(total_rows, |o| o.len());
    let batch_rows = usize::try_from(wanted.clamp(1, BATCH_ROWS as u64)).unwrap_or(BATCH_ROWS);
    let builder = match only {
        Some(o) => builder.with_row_selection(row_selection(o)),
        None => builder,
    };
    let reader = builder
        .with_projection(mask)
        // No bigger than the rows to decode: the decoders size their buffers by it.
        .with_batch_size(batch_rows)
        .build()
        .map_err(|e| file_error(&shown, e))?;
    for batch in reader {
        let batch = batch.map_err(|e| file_error(&shown, e))?;
        let rows = batch.num_rows();
        // The projected batch holds the selected roots in file order.
        let data: Vec<Option<ArrayRef>> = sources
            .iter()
            .map(|s| {
                s.and_then(|root| roots.iter().position(|r| *r == root))
                    .map(|pos| batch.column(pos).clone())
            })
            .collect();
        emit(data, rows, row_offset)?;
        row_offset += rows as u64;
    }
    Ok(out)
}

/// For a read of the view form: the file's Arrow schema with the top-level `string` and
/// `binary` columns the plan reads typed as views, so Parquet decodes them straight to
/// views (`None` when there are none, or for the offsets form). Nested ones are decoded as
/// stored and laid out as views by `conform`.
pub(super) fn view_hint(
    scan: &ReadPlan,
    file_fields: &arrow_schema::Fields,
    sources: &[Option<usize>],
) -> Option<arrow_schema::SchemaRef> {
    use arrow_schema::DataType as A;
    if scan.form.strings != ArrowStrings::Views {
        return None;
    }
    let mut fields: Vec<arrow_schema::Field> =
        file_fields.iter().map(|f| f.as_ref().clone()).collect();
    let mut hinted = false;
    for (&i, source) in scan.read.iter().zip(sources) {
        let Some(root) = *source else { continue };
        let view = match (
            &scan.layout.schema.fields[i].data_type,
            fields[root].data_type(),
        ) {
            (DataType::Primitive(PrimitiveType::String), A::Utf8 | A::LargeUtf8) => A::Utf8View,
            (DataType::Primitive(PrimitiveType::Binary), A::Binary | A::LargeBinary) => {
                A::BinaryView
            }
            _ => continue,
        };
        let field = fields[root].clone().with_data_type(view);
        fields[root] = field;
        hinted = true;
    }
    hinted.then(|| std::sync::Arc::new(arrow_schema::Schema::new(fields)))
}

/// The keep-mask of rows `offset..offset + len` of a file given its deleted rows.
///
/// The deleted rows are entered at `offset` rather than walked from the first: a file read
/// in k batches would otherwise walk its deletion vector k times (a state table's files
/// carry hundreds of thousands of deleted rows and are read a batch of 8,192 at a time).
fn keep_mask(deleted: &RoaringTreemap, offset: u64, len: usize) -> BooleanArray {
    let end = offset.saturating_add(len as u64);
    let mut keep = BooleanBufferBuilder::new(len);
    keep.append_n(len, true);
    let mut rows = deleted.iter();
    rows.advance_to(offset);
    for row in rows.take_while(|r| *r < end) {
        // `offset <= row < end = offset + len`: the index is below `len`.
        keep.set_bit((row - offset) as usize, false);
    }
    BooleanArray::new(keep.finish(), None)
}

/// The value of partition column `f` in `add` (looked up by its physical name under
/// `mode`, exactly, else ignoring case), parsed as the column's type: what every read of
/// the column does with it.
///
/// # Errors
/// A data-file error naming `add`'s path when the value is absent or the column is not
/// primitive; [`LogError::InvalidPartitionValue`] when the text is not a value of the type.
pub fn partition_value<'a>(
    add: impl Into<FileRef<'a>>,
    f: &StructField,
    mode: alluvium_txlog::column_mapping::ColumnMappingMode,
) -> Result<alluvium_txlog::scalar::Scalar> {
    let add = add.into();
    let key = mode.physical_name(f);
    let raw = add.partition_values().get(key).or_else(|| {
        add.partition_values()
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v)
    });
    let Some(raw) = raw else {
        return Err(file_error(
            add.path(),
            format!("no partition value for partition column `{}`", f.name),
        ));
    };
    let DataType::Primitive(ty) = f.data_type else {
        return Err(file_error(
            add.path(),
            format!("partition column `{}` is not of a primitive type", f.name),
        ));
    };
    Ok(parse_partition_value(&f.name, raw, ty)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keep_mask_marks_deleted_rows_of_the_window() {
        let d: RoaringTreemap = [1u64, 5, 6, 20].into_iter().collect();
        let m = keep_mask(&d, 4, 4);
        assert_eq!(
            m.iter().map(Option::unwrap).collect::<Vec<_>>(),
            vec![true, false, false, true]
        );
    }

    /// Every window of a file, read batch after batch, gets exactly its own deleted rows,
    /// also past the 2^32 boundary where a treemap changes bitmaps.
    #[test]
    fn keep_masks_of_consecutive_windows_match_the_deleted_rows() {
        let base = (1u64 << 32) - 40;
        let d: RoaringTreemap = [0u64, 3, 9, 10, 17, 31, 32, 63]
            .into_iter()
            .chain([base + 1, base + 39, base + 40, base + 41, base + 79])
            .collect();
        for (start, len) in [(0u64, 8usize), (8, 8), (16, 16), (32, 32), (64, 5)]
            .into_iter()
            .chain([(base, 40), (base + 40, 40), (base + 80, 3)])
        {
            let m = keep_mask(&d, start, len);
            let expected: Vec<bool> = (start..start + len as u64)
                .map(|r| !d.contains(r))
                .collect();
            assert_eq!(m.len(), len);
            assert_eq!(
                m.iter().map(Option::unwrap).collect::<Vec<_>>(),
                expected,
                "window {start}+{len}"
            );
        }
    }
}
