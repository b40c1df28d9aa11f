//! A list of files read as one stream of batches, a bounded window of files at a time.

use std::collections::VecDeque;
use std::sync::Arc;

use alluvium_txlog::actions::Add;
use arrow_array::RecordBatch;
use rayon::prelude::*;

use super::ReadPlan;
use crate::{DataFileError, Result};

/// The batches of a list of files, in file order. Files are read `in_flight` at a time, in
/// parallel on the current rayon pool; the next window is read only when the batches of the
/// previous one have all been taken. Memory therefore holds the decoded rows of at most
/// `in_flight` files, whatever the number of files; dropping the iterator stops reading.
///
/// After an error (yielded once, after the batches of the files before the failing one),
/// the iterator ends.
#[derive(Debug)]
pub struct FileBatches {
    plan: Arc<ReadPlan>,
    files: std::vec::IntoIter<Add>,
    in_flight: usize,
    ready: VecDeque<RecordBatch>,
    failed: Option<DataFileError>,
    done: bool,
}

impl FileBatches {
    /// The batches of `files` read with `plan`, `in_flight` (at least 1) files at a time.
    pub fn new(plan: Arc<ReadPlan>, files: Vec<Add>, in_flight: usize) -> Self {
        // This starts the rayon pool: its forks must know they are forks before they write.
        crate::encode::watch_forks();
        FileBatches {
            plan,
            files: files.into_iter(),
            in_flight: in_flight.max(1),
            ready: VecDeque::new(),
            failed: None,
            done: false,
        }
    }

    /// Reads the next window of files into `ready` (and `failed`); false when none is left.
    fn fill(&mut self) -> bool {
        let window: Vec<Add> = self.files.by_ref().take(self.in_flight).collect();
        if window.is_empty() {
            return false;
        }
        let plan = &self.plan;
        let read: Vec<Result<Vec<RecordBatch>>> =
            window.par_iter().map(|add| plan.read_file(add)).collect();
        for batches in read {
            match batches {
                Ok(batches) => self.ready.extend(batches),
                Err(e) => {
                    self.failed = Some(e);
                    break;
                }
            }
        }
        true
    }
}

impl Iterator for FileBatches {
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
