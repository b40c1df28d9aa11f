//! Rewriting bins of data files for OPTIMIZE: the data-file half of
//! `alluvium_compaction::optimize`, which plans and commits but owns no Parquet I/O.
//!
//! A bin's files are read in order (a few in parallel), deletion vectors applied, and
//! written through the same [`FileSink`] appends use (same naming, partition directories,
//! statistics and target size), with `dataChange=false`. With Z-order the bin's rows are
//! gathered and sorted by their Z-order key first, so memory holds one partition's rows;
//! plain bin-packing streams, holding a few input files at a time.

use alluvium_compaction::optimize::{Bin, BinRewriter};
use alluvium_compaction::zorder::zorder_permutation;
use alluvium_mvcc::Snapshot;
use alluvium_txlog::actions::Add;
use arrow_array::{ArrayRef, RecordBatch};
use arrow_select::concat::concat_batches;
use arrow_select::take::take_record_batch;

use crate::scan::ScanBuilder;
use crate::write::data::{FileSink, discard};
use crate::{Error, Result};

/// Input files read in parallel at a time.
const READ_WINDOW: usize = 16;

/// Rows handed to the sink at a time after a Z-order sort.
const WRITE_SLICE: usize = 64 * 1024;

/// The facade's [`BinRewriter`].
pub(crate) struct Rewriter;

impl Rewriter {
    fn rewrite_bin(
        snapshot: &Snapshot,
        bin: &Bin,
        zorder_by: &[String],
        target_size: u64,
    ) -> Result<Vec<Add>> {
        let metadata = snapshot.metadata();
        let mut sink = FileSink::new(
            snapshot.store_ref(),
            snapshot.schema(),
            &metadata.partition_columns,
            &metadata.configuration,
            snapshot.column_mapping(),
            Some(target_size),
            false,
        )?;
        let scan = ScanBuilder::new(snapshot.clone()).build_for_files(bin.files.clone())?;
        let fed: Result<()> = if zorder_by.is_empty() {
            scan.for_each_file(READ_WINDOW, |batches| {
                for b in &batches {
                    sink.write(b)?;
                }
                Ok(())
            })
        } else {
            let mut all: Vec<RecordBatch> = Vec::new();
            scan.for_each_file(READ_WINDOW, |batches| {
                all.extend(batches);
                Ok(())
            })
            .and_then(|()| sorted(&all, zorder_by))
            .and_then(|sorted| {
                if let Some(batch) = sorted {
                    // The sink decides to start a new file after each batch it is given:
                    // slices of about a quarter of a target file keep output files near
                    // the target (rows are sized by the input's bytes per row).
                    let per_row = (bin.bytes() / batch.num_rows().max(1) as u64).max(1);
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
                .ok_or_else(|| Error::InvalidArgument(format!("unknown Z-order column `{c}`")))?;
            Ok(batch.column(i).clone())
        })
        .collect::<Result<_>>()?;
    let permutation = zorder_permutation(&keys)?;
    Ok(Some(take_record_batch(&batch, &permutation)?))
}

impl BinRewriter for Rewriter {
    fn rewrite(
        &self,
        snapshot: &Snapshot,
        bin: &Bin,
        zorder_by: &[String],
        target_size: u64,
    ) -> std::result::Result<Vec<Add>, Box<dyn std::error::Error + Send + Sync>> {
        Self::rewrite_bin(snapshot, bin, zorder_by, target_size).map_err(|e| Box::new(e) as _)
    }

    fn discard(&self, snapshot: &Snapshot, files: &[Add]) {
        discard(snapshot.store_ref(), files);
    }
}
