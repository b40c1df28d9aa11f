//! Reading the planned change files into batches of the feed's schema, and streaming them
//! with a bounded read-ahead.

use std::collections::VecDeque;
use std::sync::Arc;

use alluvium_datafile::ReadPlan;
use alluvium_expr::Predicate;
use alluvium_txlog::cdf::ChangeType;
use alluvium_txlog::dv::read_deletion_vector;
use alluvium_txlog::scalar::repeated_view;
use alluvium_txlog::schema::ArrowStrings;
use arrow_array::types::StringViewType;
use arrow_array::{
    ArrayRef, Int64Array, RecordBatch, RecordBatchOptions, StringArray, TimestampMicrosecondArray,
};
use arrow_schema::SchemaRef;
use arrow_select::filter::filter_record_batch;
use roaring::RoaringTreemap;

use super::plan::{ChangeTask, TaskKind};
use crate::Result;
use crate::read::read_ahead::{Depth, ReadAhead};

/// Everything reading one change file needs; shared by the reading threads.
#[derive(Debug)]
pub(crate) struct Reader {
    /// Reads data files: the needed table columns, the pushed-down filter.
    pub(crate) data: ReadPlan,
    /// Reads change-data files: the needed table columns then `_change_type`.
    pub(crate) cdc: ReadPlan,
    /// The needed table columns, then `_change_type`, `_commit_version`, `_commit_timestamp`.
    pub(crate) full_schema: SchemaRef,
    /// A filter that also names the feed's own columns, applied to full batches.
    pub(crate) post_filter: Option<Predicate>,
    /// Indexes in `full_schema` of the output columns, in output order.
    pub(crate) output: Vec<usize>,
    pub(crate) output_schema: SchemaRef,
}

impl Reader {
    /// The non-empty output batches of one change file.
    pub(crate) fn read(&self, task: &ChangeTask) -> Result<Vec<RecordBatch>> {
        let mut out = Vec::new();
        match &task.kind {
            TaskKind::Cdc => {
                for b in self.cdc.read_file(&task.file)? {
                    out.push(self.finish(task, b, None)?);
                }
            }
            TaskKind::Whole(change_type) => {
                for b in self.data.read_file(&task.file)? {
                    out.push(self.finish(task, b, Some(change_type))?);
                }
            }
            TaskKind::DvDiff { old, new } => {
                let store = self.data.layout().store.as_ref();
                let read = |dv: &Option<Box<_>>| -> Result<RoaringTreemap> {
                    Ok(match dv {
                        Some(d) => read_deletion_vector(store, d)?,
                        None => RoaringTreemap::new(),
                    })
                };
                let (old, new) = (read(old)?, read(new)?);
                for (rows, change_type) in [
                    (&new - &old, ChangeType::Delete.as_str()),
                    (&old - &new, ChangeType::Insert.as_str()),
                ] {
                    for b in self.data.read_file_rows(&task.file, &rows)? {
                        out.push(self.finish(task, b, Some(change_type))?);
                    }
                }
            }
        }
        out.retain(|b| b.num_rows() > 0);
        Ok(out)
    }

    /// Appends the feed's columns to a batch of table columns (and `_change_type` when the
    /// file stores it), filters and projects.
    fn finish(
        &self,
        task: &ChangeTask,
        batch: RecordBatch,
        change_type: Option<&str>,
    ) -> Result<RecordBatch> {
        let n = batch.num_rows();
        let mut columns: Vec<ArrayRef> = batch.columns().to_vec();
        // Constant columns are filled in place (no per-row vector of values to copy from).
        if let Some(ct) = change_type {
            columns.push(match self.data.form().strings {
                ArrowStrings::Offsets => Arc::new(StringArray::new_repeated(ct, n)),
                ArrowStrings::Views => Arc::new(repeated_view::<StringViewType>(ct, n)),
            });
        }
        let version = i64::try_from(task.version).unwrap_or(i64::MAX);
        columns.push(Arc::new(Int64Array::from_value(version, n)));
        columns.push(Arc::new(
            TimestampMicrosecondArray::from_value(task.timestamp_us, n).with_timezone("UTC"),
        ));
        let full = RecordBatch::try_new_with_options(
            self.full_schema.clone(),
            columns,
            &RecordBatchOptions::new().with_row_count(Some(n)),
        )?;
        let full = match &self.post_filter {
            Some(p) => filter_record_batch(&full, &alluvium_expr::evaluate(p, &full)?)?,
            None => full,
        };
        Ok(full.project(&self.output)?)
    }
}

/// The batches of a change-data-feed read, streamed in version order (see
/// [`Changes::execute`](super::Changes::execute)).
///
/// Reading is pipelined through the crate's `ReadAhead` (`read_ahead.rs`): files are
/// decoded on the rayon pool, a bounded number ahead of the consumer, while the consumer
/// takes earlier ones, so reading
/// and what the consumer does with the rows (encoding output) overlap. Memory holds at most
/// `files_in_flight` decoded files ahead of the one being consumed.
#[derive(Debug)]
pub struct ChangeBatches {
    reader: Arc<Reader>,
    files: ReadAhead<ChangeTask, Vec<RecordBatch>>,
    ready: VecDeque<RecordBatch>,
    done: bool,
}

impl ChangeBatches {
    pub(crate) fn new(reader: Arc<Reader>, tasks: Vec<ChangeTask>, in_flight: usize) -> Self {
        let shared = reader.clone();
        ChangeBatches {
            reader,
            files: ReadAhead::new(tasks, Depth::Fixed(in_flight), move |task: ChangeTask| {
                shared.read(&task)
            }),
            ready: VecDeque::new(),
            done: false,
        }
    }
}

impl arrow_array::RecordBatchReader for ChangeBatches {
    /// The Arrow schema of every batch: the chosen table columns (logical names) and
    /// `_change_type` (Utf8), `_commit_version` (Int64), `_commit_timestamp`
    /// (Timestamp(Microsecond, "UTC")) where asked for.
    fn schema(&self) -> SchemaRef {
        self.reader.output_schema.clone()
    }
}

/// An Arrow reader: items are `Result<RecordBatch, ArrowError>`, and a failure carries the
/// typed [`Error`](crate::Error) (`alluvium::Error::from(arrow_error)` gives it back).
impl Iterator for ChangeBatches {
    type Item = std::result::Result<RecordBatch, arrow_schema::ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(batch) = self.ready.pop_front() {
                return Some(Ok(batch));
            }
            if self.done {
                return None;
            }
            match self.files.next() {
                Some(Ok(batches)) => self.ready.extend(batches),
                Some(Err(e)) => {
                    self.done = true;
                    return Some(Err(e.into()));
                }
                None => {
                    self.done = true;
                    return None;
                }
            }
        }
    }
}
