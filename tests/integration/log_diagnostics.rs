//! What the diagnostic views say about a damaged log: `history` shows a gap in the versions
//! instead of hiding it (a cleaned-up prefix a checkpoint stands in for is no gap); a table
//! whose only checkpoint is a zero-byte file and whose older commits are gone fails with a
//! message naming that file and saying to restore it; `Table::describe` (`inspect`) names a file whose `numRecords` is
//! negative or below its deletion vector's count instead of counting it as 0.

use std::path::Path;
use std::sync::Arc;

use alluvium::{Table, TableDescription, WriteOptions};
use arrow::array::{ArrayRef, Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};

fn ids(range: std::ops::Range<i64>) -> RecordBatch {
    RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true)])),
        vec![Arc::new(Int64Array::from_iter_values(range)) as ArrayRef],
    )
    .unwrap()
}

/// A local table of `commits` versions (0: create, then appends).
fn local_table(dir: &Path, commits: u64) -> Table {
    let t = Table::open(dir.to_str().unwrap()).unwrap();
    t.create(&ids(0..0).schema(), &[], alluvium::NO_PROPERTIES)
        .unwrap();
    for i in 1..commits {
        let i = i as i64;
        t.append([ids(i * 10..i * 10 + 3)], &WriteOptions::default())
            .unwrap();
    }
    t
}

fn commit(dir: &Path, v: u64) -> std::path::PathBuf {
    dir.join(format!("_delta_log/{v:020}.json"))
}

fn missing(t: &Table) -> Vec<(u64, Option<(u64, u64)>)> {
    t.history(None)
        .unwrap()
        .into_iter()
        .map(|e| (e.version, e.missing_below.map(|r| (*r.start(), *r.end()))))
        .collect()
}

#[test]
fn history_shows_gaps_in_the_versions() {
    let dir = tempfile::tempdir().unwrap();
    let t = local_table(dir.path(), 5);
    assert_eq!(
        missing(&t),
        vec![(4, None), (3, None), (2, None), (1, None), (0, None)]
    );
    std::fs::remove_file(commit(dir.path(), 2)).unwrap();
    assert_eq!(
        missing(&t),
        vec![(4, None), (3, Some((2, 2))), (1, None), (0, None)]
    );
    // A gap at the start with no checkpoint standing in for it.
    std::fs::remove_file(commit(dir.path(), 0)).unwrap();
    std::fs::remove_file(commit(dir.path(), 1)).unwrap();
    assert_eq!(missing(&t), vec![(4, None), (3, Some((0, 2)))]);
    // The limit does not hide the marker of the oldest entry shown.
    let shown = t.history(Some(1)).unwrap();
    assert_eq!(shown[0].missing_below, None);
    let shown = t.history(Some(2)).unwrap();
    assert_eq!(shown[1].missing_below, Some(0..=2));
}

#[test]
fn a_prefix_removed_below_a_checkpoint_is_no_gap() {
    let dir = tempfile::tempdir().unwrap();
    let t = local_table(dir.path(), 4);
    t.checkpoint(&alluvium::CheckpointConfig::default())
        .unwrap();
    t.append([ids(100..101)], &WriteOptions::default()).unwrap();
    for v in 0..=3 {
        std::fs::remove_file(commit(dir.path(), v)).unwrap();
    }
    assert_eq!(missing(&t), vec![(4, None)]);
}

#[test]
fn a_zero_byte_checkpoint_without_older_commits_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let t = local_table(dir.path(), 3);
    t.checkpoint(&alluvium::CheckpointConfig::default())
        .unwrap();
    t.append([ids(100..101)], &WriteOptions::default()).unwrap();
    for v in 0..=2 {
        std::fs::remove_file(commit(dir.path(), v)).unwrap();
    }
    let cp = dir
        .path()
        .join("_delta_log/00000000000000000002.checkpoint.parquet");
    std::fs::write(&cp, b"").unwrap();
    for with_hint in [true, false] {
        if !with_hint {
            std::fs::remove_file(dir.path().join("_delta_log/_last_checkpoint")).unwrap();
        }
        let e = Table::open(dir.path().to_str().unwrap())
            .unwrap()
            .snapshot()
            .unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("00000000000000000002.checkpoint.parquet")
                && text.contains("empty")
                && text.contains("restore"),
            "hint {with_hint}: {text}"
        );
        assert_eq!(e.kind(), alluvium::ErrorKind::Corrupt, "{text}");
    }
    assert_eq!(missing(&t), vec![(3, Some((0, 2)))]);
}

/// Rewrites the `numRecords` of every add in commit `v`.
fn set_num_records(dir: &Path, v: u64, n: i64) {
    let path = commit(dir, v);
    let text = std::fs::read_to_string(&path).unwrap();
    let out: Vec<String> = text
        .lines()
        .map(|l| {
            let mut j: serde_json::Value = serde_json::from_str(l).unwrap();
            if let Some(add) = j.get_mut("add") {
                let mut stats: serde_json::Value =
                    serde_json::from_str(add["stats"].as_str().unwrap()).unwrap();
                stats["numRecords"] = n.into();
                add["stats"] = stats.to_string().into();
            }
            j.to_string()
        })
        .collect();
    std::fs::write(&path, out.join("\n") + "\n").unwrap();
}

#[test]
fn describe_names_a_file_with_a_negative_row_count() {
    let dir = tempfile::tempdir().unwrap();
    let t = local_table(dir.path(), 3);
    let d = TableDescription::of(&t.snapshot().unwrap()).unwrap();
    assert_eq!(
        (d.num_records, d.num_records_problem.clone()),
        (Some(6), None)
    );
    set_num_records(dir.path(), 2, -5);
    // A fresh handle: the edited commit is read again.
    let t = Table::open(dir.path().to_str().unwrap()).unwrap();
    let d = TableDescription::of(&t.snapshot().unwrap()).unwrap();
    assert_eq!(d.num_records, None);
    let problem = d.num_records_problem.unwrap();
    assert!(
        problem.contains("-5") && problem.contains(".parquet"),
        "{problem}"
    );
    let file = t
        .snapshot()
        .unwrap()
        .files()
        .map(|a| a.path().to_string())
        .find(|p| problem.contains(p.as_str()));
    assert!(file.is_some(), "{problem}");
}
