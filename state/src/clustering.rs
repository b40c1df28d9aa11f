//! Keeping `state/` clustered by key, so that a point lookup reads few files (SPEC.md §26
//! ST5): the **overlap** of the table is the greatest number of data files whose ranges of
//! the first key column (from their statistics) contain one value, i.e. the most files a
//! lookup of one key may have to read. Each sync chunk adds a layer (its rows sorted by
//! key, but a chunk's keys span the key space); when the overlap passes
//! [`StateOptions::compact_above_overlap`](super::StateOptions), OPTIMIZE with Z-order on
//! the key columns rewrites the table into files of disjoint ranges (overlap 1). The same
//! holds for `tombstones/`, which every sync reads by key.

use std::cmp::Ordering;

use alluvium::OptimizeOptions;
use alluvium::Snapshot;
use alluvium_txlog::scalar::Scalar;
use alluvium_txlog::stats::{FileStats, stat_scalar};

use super::StateStore;
use super::report::SyncReport;

/// The overlap of `snapshot` on column `key` (files without usable bounds overlap
/// everything).
pub(crate) fn overlap(snapshot: &Snapshot, key: &str) -> usize {
    let prim = snapshot
        .schema()
        .field(key)
        .and_then(|f| f.data_type.as_primitive());
    let path = [key.to_string()];
    let mut unbounded = 0usize;
    // (value, is_end): starts sort before ends at equal values (closed ranges).
    let mut events: Vec<(Scalar, bool)> = Vec::new();
    for add in snapshot.files() {
        let bounds = prim.and_then(|p| {
            let stats = add.stats().as_deref().and_then(FileStats::parse)?;
            let lo = stat_scalar(stats.min(&path)?, p)?;
            let hi = stat_scalar(stats.max(&path)?, p)?;
            Some((lo, hi))
        });
        match bounds {
            Some((lo, hi)) => {
                events.push((lo, false));
                events.push((hi, true));
            }
            None => unbounded += 1,
        }
    }
    events.sort_by(|a, b| {
        a.0.compare(&b.0)
            .unwrap_or(Ordering::Equal)
            .then(a.1.cmp(&b.1))
    });
    let (mut open, mut most) = (0usize, 0usize);
    for (_, is_end) in events {
        if is_end {
            open = open.saturating_sub(1);
        } else {
            open += 1;
            most = most.max(open);
        }
    }
    most + unbounded
}

impl StateStore {
    /// Runs OPTIMIZE with Z-order on the key when `state/`'s overlap passes the limit. A
    /// failure (a concurrent sync's commit, say) is reported, never fatal: the next sync
    /// tries again.
    pub(crate) fn compact_if_due(&self, report: &mut SyncReport) {
        let Some(limit) = self.options.compact_above_overlap else {
            return;
        };
        // `tombstones/` is read by key range at every sync: it is kept clustered the same way.
        for table in [&self.state, &self.tombstones] {
            let depth = match table.snapshot() {
                Ok(s) => overlap(&s, &self.layout.keys[0]),
                Err(e) => {
                    report.compaction_errors.push(e.to_string());
                    continue;
                }
            };
            if depth <= limit {
                continue;
            }
            let options = OptimizeOptions::default().with_zorder_by(self.layout.keys.clone());
            match table.optimize(&options) {
                Ok(_) => report.compactions += 1,
                Err(e) => report.compaction_errors.push(e.to_string()),
            }
        }
    }
}
