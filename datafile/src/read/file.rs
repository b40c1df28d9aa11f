//! Reading one data file with a [`ReadPlan`].

use alluvium_txlog::LogError;
use alluvium_txlog::actions::Add;
use alluvium_txlog::dv::read_deletion_vector;
use alluvium_txlog::partition::parse_partition_value;
use alluvium_txlog::path::resolve;
use alluvium_txlog::schema::{DataType, StructField};
use arrow_array::cast::AsArray;
use arrow_array::types::UInt64Type;
use arrow_array::{ArrayRef, BooleanArray, RecordBatch, RecordBatchOptions, UInt64Array};
use arrow_select::filter::{filter, filter_record_batch};
use bytes::Bytes;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use roaring::RoaringTreemap;

use super::ReadPlan;
use super::conform::{conform, find_source, scan_type};
use crate::eval::evaluate;
use crate::{DataFileError, Result};

const BATCH_ROWS: usize = 64 * 1024;

fn file_error(path: &str, reason: impl ToString) -> DataFileError {
    DataFileError::Log(LogError::data_file(path, reason))
}

/// Reads one file: data columns, deletion vector, partition values, filter, projection.
pub(super) fn read_file(scan: &ReadPlan, add: &Add) -> Result<Vec<RecordBatch>> {
    Ok(read(scan, add, false, Selection::Live)?
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
    Ok(read(scan, add, true, Selection::Live)?
        .into_iter()
        .map(|(b, p)| (b, p.unwrap_or_else(|| UInt64Array::from(Vec::<u64>::new()))))
        .collect())
}

/// [`read_file`] of exactly the rows whose physical index is in `rows`, whatever the
/// file's deletion vector says.
pub(super) fn read_file_rows(
    scan: &ReadPlan,
    add: &Add,
    rows: &RoaringTreemap,
) -> Result<Vec<RecordBatch>> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    Ok(read(scan, add, false, Selection::Only(rows))?
        .into_iter()
        .map(|(b, _)| b)
        .collect())
}

/// Which physical rows of a file a read returns (before the plan's filter).
#[derive(Clone, Copy)]
enum Selection<'a> {
    /// The rows the `add`'s deletion vector leaves live (every row without one).
    Live,
    /// Exactly these rows.
    Only(&'a RoaringTreemap),
}

/// Rows a read drops or keeps, resolved from a [`Selection`].
enum Rows<'a> {
    All,
    Deleted(RoaringTreemap),
    Only(&'a RoaringTreemap),
}

/// The row count of the file's Parquet footer.
pub(super) fn physical_rows(scan: &ReadPlan, add: &Add) -> Result<u64> {
    let location = resolve(&add.path, &scan.layout.root)?;
    let shown = location.to_string();
    let bytes: Bytes = scan.layout.store.get_location(&location).map_err(|e| {
        if e.is_not_found() {
            file_error(&shown, "the data file referenced by the log is missing")
        } else {
            DataFileError::Storage(e)
        }
    })?;
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(bytes).map_err(|e| file_error(&shown, e))?;
    u64::try_from(builder.metadata().file_metadata().num_rows())
        .map_err(|_| file_error(&shown, "negative row count in the footer"))
}

/// The reader behind both: with `positions`, each batch comes with the physical row index
/// of each of its rows. Every row of the file is decoded in file order (no row group or
/// page is skipped), so the running offset is the physical index.
fn read(
    scan: &ReadPlan,
    add: &Add,
    positions: bool,
    selection: Selection<'_>,
) -> Result<Vec<(RecordBatch, Option<UInt64Array>)>> {
    let layout = &scan.layout;
    let schema = &layout.schema;
    let mode = layout.column_mapping;
    let location = resolve(&add.path, &layout.root)?;
    let shown = location.to_string();
    let bytes: Bytes = layout.store.get_location(&location).map_err(|e| {
        if e.is_not_found() {
            file_error(&shown, "the data file referenced by the log is missing")
        } else {
            DataFileError::Storage(e)
        }
    })?;
    let rows_kept = match (selection, &add.deletion_vector) {
        (Selection::Only(rows), _) => Rows::Only(rows),
        (Selection::Live, Some(dv)) => {
            Rows::Deleted(read_deletion_vector(layout.store.as_ref(), dv)?)
        }
        (Selection::Live, None) => Rows::All,
    };

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
                scan_type(&f.data_type)?,
            )));
        } else {
            constants.push(None);
        }
    }

    let builder =
        ParquetRecordBatchReaderBuilder::try_new(bytes).map_err(|e| file_error(&shown, e))?;
    let total_rows = u64::try_from(builder.metadata().file_metadata().num_rows()).unwrap_or(0);
    match &rows_kept {
        Rows::Deleted(d) if d.max().is_some_and(|m| m >= total_rows) => {
            return Err(DataFileError::Log(LogError::CorruptDeletionVector {
                location: shown,
                reason: format!(
                    "deletes row {} of a file with {total_rows} rows",
                    d.max().unwrap_or(0)
                ),
            }));
        }
        Rows::Only(r) if r.max().is_some_and(|m| m >= total_rows) => {
            return Err(file_error(
                &shown,
                format!(
                    "row {} selected by a deletion-vector difference is past the file's {total_rows} rows",
                    r.max().unwrap_or(0)
                ),
            ));
        }
        _ => {}
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
    let mut emit = |data: Vec<Option<ArrayRef>>, rows: usize, row_offset: u64| -> Result<()> {
        let keep = match &rows_kept {
            Rows::All => None,
            Rows::Deleted(d) => Some(keep_mask(d, row_offset, rows)),
            Rows::Only(only) => Some(only_mask(only, row_offset, rows)),
        };
        let kept_rows = keep.as_ref().map_or(rows, |k| k.true_count());
        let mut columns = Vec::with_capacity(scan.read.len());
        for (k, &i) in scan.read.iter().enumerate() {
            let f = &schema.fields[i];
            let col = match (&constants[k], &data[k]) {
                (Some((value, ty)), _) => value.to_array(ty, kept_rows)?,
                (None, Some(arr)) => {
                    let arr = conform(arr, f, mode, &f.name).map_err(|e| file_error(&shown, e))?;
                    match &keep {
                        Some(mask) => filter(arr.as_ref(), mask)?,
                        None => arr,
                    }
                }
                (None, None) => arrow_array::new_null_array(&scan_type(&f.data_type)?, kept_rows),
            };
            columns.push(col);
        }
        let batch = RecordBatch::try_new_with_options(
            scan.read_schema.clone(),
            columns,
            &RecordBatchOptions::new().with_row_count(Some(kept_rows)),
        )?;
        let mut rows_at = positions.then(|| {
            let all = UInt64Array::from_iter_values(row_offset..row_offset + rows as u64);
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
        let mut remaining = total_rows;
        while remaining > 0 {
            let rows = usize::try_from(remaining.min(BATCH_ROWS as u64)).unwrap_or(BATCH_ROWS);
            emit(vec![None; scan.read.len()], rows, row_offset)?;
            row_offset += rows as u64;
            remaining -= rows as u64;
        }
        return Ok(out);
    }

    let mask = ProjectionMask::roots(builder.parquet_schema(), roots.clone());
    let reader = builder
        .with_projection(mask)
        .with_batch_size(BATCH_ROWS)
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

/// The keep-mask of rows `offset..offset + len` of a file given its deleted rows.
fn keep_mask(deleted: &RoaringTreemap, offset: u64, len: usize) -> BooleanArray {
    let mut keep = vec![true; len];
    for row in deleted
        .iter()
        .skip_while(|r| *r < offset)
        .take_while(|r| *r < offset + len as u64)
    {
        keep[(row - offset) as usize] = false;
    }
    BooleanArray::from(keep)
}

/// The keep-mask of rows `offset..offset + len` of a file keeping only `only`.
fn only_mask(only: &RoaringTreemap, offset: u64, len: usize) -> BooleanArray {
    let mut keep = vec![false; len];
    for row in only
        .iter()
        .skip_while(|r| *r < offset)
        .take_while(|r| *r < offset + len as u64)
    {
        keep[(row - offset) as usize] = true;
    }
    BooleanArray::from(keep)
}

fn partition_value(
    add: &Add,
    f: &StructField,
    mode: alluvium_txlog::column_mapping::ColumnMappingMode,
) -> Result<alluvium_txlog::scalar::Scalar> {
    let key = mode.physical_name(f);
    let raw = add.partition_values.get(key).or_else(|| {
        add.partition_values
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v)
    });
    let Some(raw) = raw else {
        return Err(file_error(
            &add.path,
            format!("no partition value for partition column `{}`", f.name),
        ));
    };
    let DataType::Primitive(ty) = f.data_type else {
        return Err(file_error(
            &add.path,
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

    #[test]
    fn only_mask_marks_selected_rows_of_the_window() {
        let d: RoaringTreemap = [1u64, 5, 6, 20].into_iter().collect();
        let m = only_mask(&d, 4, 4);
        assert_eq!(
            m.iter().map(Option::unwrap).collect::<Vec<_>>(),
            vec![false, true, true, false]
        );
    }
}
