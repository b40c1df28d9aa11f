//! `Scan::count` (SPEC.md §13): rows counted from statistics (`numRecords` minus deletion
//! vector cardinality) for files whose every row matches, read otherwise; the answer always
//! equals the rows a scan returns.

use std::collections::HashMap;

use alluvium::{ScanBuilder, Table, WriteOptions};
use arrow::array::RecordBatch;

use crate::batches::id_p_batch;

fn batch(ids: std::ops::Range<i64>, p: &str) -> RecordBatch {
    id_p_batch(&ids.collect::<Vec<_>>(), p)
}

fn scanned(t: &Table, filter: Option<&str>) -> u64 {
    let mut b = ScanBuilder::new(t.snapshot().unwrap());
    if let Some(f) = filter {
        b = b.with_filter_str(f).unwrap();
    }
    b.build()
        .unwrap()
        .execute_to_vec()
        .unwrap()
        .iter()
        .map(|b| b.num_rows() as u64)
        .sum()
}

#[test]
fn counts_come_from_statistics_where_they_answer_and_equal_the_scan() {
    let dir = tempfile::tempdir().unwrap();
    let t = Table::open(dir.path().to_str().unwrap()).unwrap();
    let props = HashMap::from([(
        "delta.enableDeletionVectors".to_string(),
        "true".to_string(),
    )]);
    t.create(&batch(0..0, "a").schema(), &["p".to_string()], &props)
        .unwrap();
    let w = WriteOptions::default();
    t.append([batch(0..100, "a")], &w).unwrap();
    t.append([batch(100..150, "b")], &w).unwrap();
    t.append([batch(150..160, "c")], &w).unwrap();
    // A deletion vector on the first file: its live rows are numRecords - cardinality.
    t.delete_str("id < 10", &w).unwrap();
    for (filter, from_stats, read) in [
        (None, 3, 0),
        (Some("p = 'a'"), 1, 0),
        (Some("p IN ('b', 'c')"), 2, 0),
        // Statistics prove every row of the files matches.
        (Some("id >= 0"), 3, 0),
        // Only reading the file answers.
        (Some("id % 2 = 0"), 0, 3),
        (Some("p = 'a' AND id > 50"), 0, 1),
    ] {
        let mut b = ScanBuilder::new(t.snapshot().unwrap());
        if let Some(f) = filter {
            b = b.with_filter_str(f).unwrap();
        }
        let scan = b.build().unwrap();
        let c = scan.count().unwrap();
        assert_eq!(c.rows, scanned(&t, filter), "{filter:?}");
        assert_eq!(
            (c.files_from_statistics, c.files_read),
            (from_stats, read),
            "{filter:?}"
        );
        assert_eq!(
            scan.count_from_statistics(),
            (read == 0).then_some(c.rows),
            "{filter:?}"
        );
    }
    assert_eq!(scanned(&t, None), 150);
}
