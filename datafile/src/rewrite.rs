//! Rewriting a set of data files for OPTIMIZE: the data-file half of
//! `alluvium_compaction::optimize`, which plans the bins and commits the result.
//!
//! The files are read in order (a few in parallel), deletion vectors applied, and written
//! through the same [`FileSink`] appends use (same naming, partition directories,
//! statistics and target size), with `dataChange=false`. With Z-order the rows are gathered
//! and sorted by their Z-order key first, so memory holds one partition's rows; plain
//! bin-packing streams, holding a few input files at a time.

use std::sync::Arc;

use alluvium_txlog::actions::Add;
use arrow_array::{ArrayRef, RecordBatch};
use arrow_select::concat::concat_batches;
use arrow_select::take::take_record_batch;

use crate::read::{FileBatches, ReadPlan, TableLayout};
use crate::sink::{FileSink, FileSinkOptions, SinkTable};
use crate::zorder::zorder_permutation;
use crate::{DataFileError, Result};

/// Input files read in parallel at a time.
const READ_WINDOW: usize = 16;

/// Rows handed to the sink at a time after a Z-order sort.
const WRITE_SLICE: usize = 64 * 1024;

/// Reads every row of `files` (deletion vectors applied), sorted by the Z-order of
/// `zorder_by` when it is not empty, and writes them as new files of about `target_size`
/// bytes in their partition, returning their `add` actions with `dataChange=false`. The
/// files should share one partition (as OPTIMIZE's bins do). On error, the files already
/// written are deleted.
///
/// # Errors
/// Any failure reading or writing; a Z-order column not in the table.
pub fn rewrite_files(
    layout: &TableLayout,
    files: &[Add],
    zorder_by: &[String],
    target_size: u64,
) -> Result<Vec<Add>> {
    let mut sink = FileSink::new(
        SinkTable {
            store: layout.store.as_ref(),
            schema: &layout.schema,
            partition_columns: &layout.partition_columns,
            configuration: &layout.configuration,
            column_mapping: layout.column_mapping,
        },
        FileSinkOptions {
            target_size: Some(target_size),
            data_change: false,
        },
    )?
    .materialize_partition_columns(layout.materialize_partition_columns)?;
    let plan = Arc::new(ReadPlan::all(layout.clone())?);
    let mut batches = FileBatches::new(plan, files.to_vec(), READ_WINDOW);
    let fed: Result<()> = if zorder_by.is_empty() {
        batches.try_for_each(|b| sink.write(&b?))
    } else {
        let input_bytes: u64 = files
            .iter()
            .map(|f| u64::try_from(f.size).unwrap_or(0))
            .sum();
        batches
            .collect::<Result<Vec<RecordBatch>>>()
            .and_then(|all| sorted(&all, zorder_by))
            .and_then(|sorted| {
                if let Some(batch) = sorted {
                    // The sink decides to start a new file after each batch it is given:
                    // slices of about a quarter of a target file keep output files near
                    // the target (rows are sized by the input's bytes per row).
                    let per_row = (input_bytes / batch.num_rows().max(1) as u64).max(1);
                    let slice = usize::try_from(target_size / per_row / 4)
                        .unwrap_or(WRITE_SLICE)
                        .clamp(1, WRITE_SLICE);
                    let mut offset = 0;
                    while offset < batch.num_rows() {
                        let len = slice.min(batch.num_rows() - offset);
                        sink.write(&batch.slice(offset, len))?;
                        offset += len;
                    }
                }
                Ok(())
            })
    };
    match fed {
        Ok(()) => Ok(sink.finish()?.0),
        Err(e) => {
            sink.abort();
            Err(e)
        }
    }
}

/// The rows of `batches` as one batch sorted by the Z-order of `columns` (`None` if empty).
fn sorted(batches: &[RecordBatch], columns: &[String]) -> Result<Option<RecordBatch>> {
    let Some(first) = batches.first() else {
        return Ok(None);
    };
    let batch = concat_batches(&first.schema(), batches)?;
    let keys: Vec<ArrayRef> = columns
        .iter()
        .map(|c| {
            let i = batch
                .schema()
                .fields()
                .iter()
                .position(|f| f.name().eq_ignore_ascii_case(c))
                .ok_or_else(|| {
                    DataFileError::InvalidArgument(format!("unknown Z-order column `{c}`"))
                })?;
            Ok(batch.column(i).clone())
        })
        .collect::<Result<_>>()?;
    let permutation = zorder_permutation(&keys)?;
    Ok(Some(take_record_batch(&batch, &permutation)?))
}
