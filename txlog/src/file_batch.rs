//! The live files of a table state in batches, each with its partition values interned
//! and its statistics as typed columns: what a predicate is judged over when it is judged
//! over all the files at once (data skipping, in `alluvium-expr`) rather than file by file.
//!
//! A state's files are its set's base (the columns built by a load or a refresh, shared by
//! the snapshots derived from it) and a small overlay (files added since). The base's
//! batch reads its statistics through the base's typed-column cache
//! ([`StatsColumns`]), which is built on the first query that needs a column and then
//! serves every later query and every snapshot sharing the base: a refresh that appends
//! a few commits does not reparse a million files' statistics. The overlay's batch parses
//! its few files per call.
//!
//! Contract: the batches, in order, with each batch's rows in order and the rows for which
//! [`FileBatch::file`] answers `None` left out, are exactly
//! [`TableState::files`](crate::replay::TableState::files).

use std::borrow::Cow;

use crate::FileRef;
use crate::actions::{Add, OptStringMap};
use crate::file_columns::FileColumns;
use crate::file_set::FileSet;
use crate::stats::{ColumnKey, StatsColumns};

/// A run of a state's live files (see the module docs).
#[derive(Debug)]
pub struct FileBatch<'a> {
    files: Files<'a>,
    partition_codes: Cow<'a, [u32]>,
    partition_maps: Cow<'a, [OptStringMap]>,
    stats: StatsColumns,
}

#[derive(Debug)]
enum Files<'a> {
    /// Rows of the set's base; masked rows are gone.
    Base(&'a FileSet<FileColumns>),
    /// The set's overlay.
    Overlay(Vec<&'a Add>),
}

impl<'a> FileBatch<'a> {
    /// Number of rows, gone ones included.
    pub fn len(&self) -> usize {
        self.partition_codes.len()
    }

    /// Whether the batch has no rows.
    pub fn is_empty(&self) -> bool {
        self.partition_codes.is_empty()
    }

    /// The live file of row `i`; `None` when it is gone from the state (removed or
    /// replaced since the base was built) or `i` is out of range.
    pub fn file(&self, i: usize) -> Option<FileRef<'a>> {
        match &self.files {
            Files::Base(set) => set.live_base_entry(i),
            Files::Overlay(adds) => adds.get(i).map(|a| FileRef::from(*a)),
        }
    }

    /// Row `i`'s partition values, as an index into [`partition_maps`](Self::partition_maps).
    pub fn partition_code(&self, i: usize) -> Option<u32> {
        self.partition_codes.get(i).copied()
    }

    /// Every row's partition-value code.
    pub fn partition_codes(&self) -> &[u32] {
        &self.partition_codes
    }

    /// The distinct partition-value maps the rows' codes index (physical column names).
    pub fn partition_maps(&self) -> &[OptStringMap] {
        &self.partition_maps
    }

    /// The rows' statistics, holding at least the columns the batch was made for.
    pub fn stats(&self) -> &StatsColumns {
        &self.stats
    }
}

/// The batches of `files` with statistics for `columns` (see the module docs).
pub(crate) fn batches<'a>(
    files: &'a FileSet<FileColumns>,
    columns: &[ColumnKey<'_>],
) -> Vec<FileBatch<'a>> {
    let base = files.base();
    let mut out = vec![FileBatch {
        files: Files::Base(files),
        partition_codes: Cow::Borrowed(base.partition_codes()),
        partition_maps: Cow::Borrowed(base.partition_maps()),
        stats: base.stats_columns(columns),
    }];
    let overlay: Vec<&Add> = files.overlay().collect();
    if !overlay.is_empty() {
        let stats = StatsColumns::build(overlay.iter().map(|a| a.stats.as_deref()), columns);
        // Each overlay file its own map: the overlay holds a few files.
        let maps: Vec<OptStringMap> = overlay.iter().map(|a| a.partition_values.clone()).collect();
        let codes: Vec<u32> = (0..overlay.len())
            .map(|i| u32::try_from(i).unwrap_or(u32::MAX))
            .collect();
        out.push(FileBatch {
            files: Files::Overlay(overlay),
            partition_codes: Cow::Owned(codes),
            partition_maps: Cow::Owned(maps),
            stats,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::actions::Action;
    use crate::replay::{TableState, replay_with_schema};
    use crate::schema::PrimitiveType;

    fn state(files: usize) -> TableState {
        let mut replay = replay_with_schema("memory:///t", r#"{"type":"struct","fields":[]}"#);
        for i in 0..files {
            let mut add = crate::actions::Add::builder(format!("f{i}.parquet"), 1, 1).build();
            add.stats = Some(format!(
                r#"{{"numRecords":{i},"minValues":{{"a":{i},"b":{},"c":"s{i}"}}}}"#,
                i + 1
            ));
            replay.apply(Action::Add(add));
        }
        replay.finish(1).unwrap()
    }

    /// Queries of one state from many tasks of a small pool at once (each typed parse
    /// itself running on that pool) all see their columns whole, and the state keeps
    /// every column asked for: no query holds the others up while it parses, and none of
    /// them hangs.
    #[test]
    fn concurrent_queries_see_whole_columns_and_every_column_is_kept() {
        let s = state(70_000);
        let names = [
            vec!["a".to_string()],
            vec!["b".to_string()],
            vec!["c".to_string()],
        ];
        let types = [
            PrimitiveType::Long,
            PrimitiveType::Long,
            PrimitiveType::String,
        ];
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        use rayon::prelude::*;
        let seen: Vec<bool> = pool.install(|| {
            (0..12usize)
                .into_par_iter()
                .map(|q| {
                    let k = q % 3;
                    let batches = s.file_batches(&[(&names[k][..], Some(types[k]))]);
                    let stats = batches[0].stats();
                    let col = stats.column(&names[k], Some(types[k])).unwrap();
                    stats.len() == 70_000
                        && (0..70_000)
                            .step_by(997)
                            .all(|i| col.min.is_valid(i) && stats.num_records(i) == Some(i as i64))
                })
                .collect()
        });
        assert!(seen.iter().all(|ok| *ok), "{seen:?}");
        // Each query's columns were merged into the kept ones, whatever the order in
        // which they finished: a batch that asks for none still holds all three.
        let kept = s.file_batches(&[]);
        for (n, t) in names.iter().zip(types) {
            assert!(
                kept[0].stats().column(n, Some(t)).is_some(),
                "{n:?} not kept"
            );
        }
    }
}
