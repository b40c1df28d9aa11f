//! Reading the planned change files into batches of the feed's schema, and streaming them a
//! bounded window of files at a time.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, sync_channel};

use alluvium_datafile::ReadPlan;
use alluvium_txlog::dv::read_deletion_vector;
use alluvium_txlog::expr::Predicate;
use arrow_array::{
    ArrayRef, Int64Array, RecordBatch, RecordBatchOptions, StringArray, TimestampMicrosecondArray,
};
use arrow_schema::SchemaRef;
use arrow_select::filter::filter_record_batch;
use rayon::prelude::*;
use roaring::RoaringTreemap;

use super::plan::{ChangeTask, TaskKind};
use crate::Result;

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
                for (rows, change_type) in [(&new - &old, "delete"), (&old - &new, "insert")] {
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
            columns.push(Arc::new(StringArray::new_repeated(ct, n)));
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
            Some(p) => filter_record_batch(&full, &alluvium_datafile::evaluate(p, &full)?)?,
            None => full,
        };
        Ok(full.project(&self.output)?)
    }
}

/// The results of one window of files, in task order.
type WindowResults = Vec<Result<Vec<RecordBatch>>>;

/// The batches of a change-data-feed read, streamed in version order (see
/// [`Changes::execute`](super::Changes::execute)).
///
/// Reading is pipelined: once a window's batches are handed over, the next window is read
/// in the background (on the rayon pool) while the consumer takes them, so reading and
/// what the consumer does with the rows (encoding output) overlap. Memory then holds at
/// most two windows of files. When the consumer itself runs on a rayon worker, windows are
/// read in the foreground instead (a worker blocked waiting for a job queued behind it
/// could deadlock a small pool).
#[derive(Debug)]
pub struct ChangeBatches {
    reader: Arc<Reader>,
    tasks: std::vec::IntoIter<ChangeTask>,
    in_flight: usize,
    ready: VecDeque<RecordBatch>,
    /// The window read in the background, if one was started.
    next: Option<Receiver<WindowResults>>,
    failed: Option<crate::Error>,
    done: bool,
}

impl ChangeBatches {
    pub(crate) fn new(reader: Arc<Reader>, tasks: Vec<ChangeTask>, in_flight: usize) -> Self {
        ChangeBatches {
            reader,
            tasks: tasks.into_iter(),
            in_flight: in_flight.max(1),
            ready: VecDeque::new(),
            next: None,
            failed: None,
            done: false,
        }
    }

    /// The Arrow schema of every batch: the chosen table columns (logical names) and
    /// `_change_type` (Utf8), `_commit_version` (Int64), `_commit_timestamp`
    /// (Timestamp(Microsecond, "UTC")) where asked for.
    pub fn schema(&self) -> SchemaRef {
        self.reader.output_schema.clone()
    }

    /// The next window of tasks, empty when none is left.
    fn take_window(&mut self) -> Vec<ChangeTask> {
        self.tasks.by_ref().take(self.in_flight).collect()
    }

    /// Starts reading the next window in the background; false when none is left.
    fn start_window(&mut self) -> bool {
        let window = self.take_window();
        if window.is_empty() {
            return false;
        }
        let reader = self.reader.clone();
        let (tx, rx) = sync_channel(1);
        rayon::spawn(move || {
            let read: WindowResults = window.par_iter().map(|t| reader.read(t)).collect();
            // The stream may have been dropped meanwhile: nobody wants the rows then.
            let _ = tx.send(read);
        });
        self.next = Some(rx);
        true
    }

    /// Reads the next window (waiting for the one in the background, if any); false when
    /// none is left.
    fn fill(&mut self) -> bool {
        let read: WindowResults = if rayon::current_thread_index().is_some() {
            let window = self.take_window();
            if window.is_empty() {
                return false;
            }
            let reader = &self.reader;
            window.par_iter().map(|t| reader.read(t)).collect()
        } else {
            if self.next.is_none() && !self.start_window() {
                return false;
            }
            let Some(rx) = self.next.take() else {
                return false;
            };
            match rx.recv() {
                Ok(r) => r,
                Err(_) => vec![Err(crate::Error::InvalidArgument(
                    "a change-feed reading thread panicked".into(),
                ))],
            }
        };
        for batches in read {
            match batches {
                Ok(b) => self.ready.extend(b),
                Err(e) => {
                    self.failed = Some(e);
                    break;
                }
            }
        }
        if self.failed.is_none() && rayon::current_thread_index().is_none() {
            self.start_window();
        }
        true
    }
}

impl Iterator for ChangeBatches {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(batch) = self.ready.pop_front() {
                return Some(Ok(batch));
            }
            if let Some(e) = self.failed.take() {
                self.done = true;
                return Some(Err(e));
            }
            if self.done || !self.fill() {
                self.done = true;
                return None;
            }
        }
    }
}
