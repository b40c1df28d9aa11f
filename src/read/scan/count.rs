//! Counting the rows of a scan from statistics where they answer exactly, reading only the
//! files where they do not.
//!
//! A file's live rows are `numRecords` minus its deletion vector's cardinality (PROTOCOL.md
//! "Per-file Statistics", "Deletion Vectors"). A file's rows all match the scan's filter
//! when there is none, or when its partition values and statistics prove it (the
//! `all_match` DELETE uses to remove whole files): such a file is counted from its
//! statistics. Any other file the filter may match is read (the filter applied row by
//! row) and its rows counted.

use alluvium_datafile::FileTask;
use alluvium_expr::{FileSummary, StatsNeeded, all_match};
use alluvium_txlog::actions::Add;

use super::Scan;
use crate::Result;

/// The answer of [`Scan::count`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct RowCount {
    /// Rows the scan returns.
    pub rows: u64,
    /// Files counted from their statistics.
    pub files_from_statistics: usize,
    /// Files read to count their matching rows.
    pub files_read: usize,
}

/// The live rows of `add` by its statistics, when known and possible: a file whose deletion
/// vector deletes more rows than it has is read instead (`Add::live_rows` would count 0).
fn live_rows(add: &Add) -> Option<u64> {
    let deleted = add.deletion_vector.as_ref().map_or(0, |d| d.cardinality);
    u64::try_from(add.num_records()?.checked_sub(deleted)?).ok()
}

impl Scan {
    /// Whether every row of `add` matches the scan's filter, by partition values and
    /// statistics (true without a filter).
    fn all_rows_match(&self, add: &Add) -> bool {
        let Some(p) = self.plan.predicate() else {
            return true;
        };
        let needed = StatsNeeded::of(p);
        let stats = needed.parse(add.stats.as_deref());
        all_match(
            p,
            &FileSummary {
                partition_values: &add.partition_values,
                stats: stats.as_ref(),
            },
        )
    }

    /// The number of rows the scan returns, answered from statistics where they answer
    /// exactly (see the module documentation) and by reading the other files, in parallel
    /// on the current rayon pool, one file per thread at a time.
    ///
    /// # Errors
    /// As [`execute`](Self::execute), for the files it reads.
    pub fn count(&self) -> Result<RowCount> {
        use rayon::prelude::*;
        let mut out = RowCount::default();
        let mut to_read = Vec::new();
        for add in &self.files {
            match live_rows(add).filter(|_| self.all_rows_match(add)) {
                Some(n) => {
                    out.rows += n;
                    out.files_from_statistics += 1;
                }
                None => to_read.push(FileTask::new(self.plan.clone(), add.clone())),
            }
        }
        out.files_read = to_read.len();
        let counts: Vec<Result<u64>> = to_read
            .par_iter()
            .map(|task| {
                Ok(super::read_file(task)?
                    .iter()
                    .map(|b| b.num_rows() as u64)
                    .sum())
            })
            .collect();
        for c in counts {
            out.rows += c?;
        }
        Ok(out)
    }

    /// The number of rows the scan returns when statistics alone answer it (every planned
    /// file's rows all match and its row count is known), without reading anything;
    /// `None` otherwise.
    pub fn count_from_statistics(&self) -> Option<u64> {
        self.files
            .iter()
            .map(|add| live_rows(add).filter(|_| self.all_rows_match(add)))
            .sum()
    }
}
