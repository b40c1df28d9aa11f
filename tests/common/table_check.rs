//! The multi-writer invariants I1-I3 (SPEC.md §7) checked on a finished table; shared by the
//! stress tests of the library and of the bench package (writer processes).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, HashMap, HashSet};

use alluvium::{ScanBuilder, Table};
use alluvium_txlog::actions::Action;
use alluvium_txlog::commit::decode_commit;
use alluvium_txlog::log_path::{LogFileKind, commit_path};
use alluvium_txlog::segment::list_log_from;
use arrow::array::{Array, Int64Array};

/// Checks I1-I3 on the final table: versions 0..=expected contiguous and parseable, every
/// commit's txnId unique, and every (writer, seq) row present exactly once.
pub fn check_table(table: &Table, expected_commits: u64, expected_rows: &HashMap<i64, i64>) {
    let store = table.store();
    let listing = list_log_from(store.as_ref(), 0).unwrap();
    let versions: Vec<u64> = listing
        .iter()
        .filter(|f| f.kind == LogFileKind::Commit)
        .map(|f| f.version)
        .collect();
    assert_eq!(
        versions,
        (0..=expected_commits).collect::<Vec<_>>(),
        "versions must be exactly contiguous"
    );
    let mut txn_ids = HashSet::new();
    for v in &versions {
        let p = commit_path(*v);
        let actions = decode_commit(p.as_str(), &store.get(&p).unwrap()).unwrap();
        let id = actions
            .iter()
            .find_map(|a| match a {
                Action::CommitInfo(ci) => ci.txn_id().map(str::to_string),
                _ => None,
            })
            .unwrap();
        assert!(txn_ids.insert(id), "duplicated commit at version {v}");
    }
    let snap = table.snapshot().unwrap();
    assert_eq!(snap.version(), expected_commits);
    let batches = ScanBuilder::new(snap)
        .build()
        .unwrap()
        .execute_to_vec()
        .unwrap();
    let mut seen: BTreeMap<(i64, i64), usize> = BTreeMap::new();
    for b in &batches {
        let w = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        let s = b.column(1).as_any().downcast_ref::<Int64Array>().unwrap();
        for i in 0..b.num_rows() {
            *seen.entry((w.value(i), s.value(i))).or_default() += 1;
        }
    }
    assert!(seen.values().all(|n| *n == 1), "a row appears twice");
    let mut per_writer: HashMap<i64, i64> = HashMap::new();
    for (w, _) in seen.keys() {
        *per_writer.entry(*w).or_default() += 1;
    }
    assert_eq!(&per_writer, expected_rows, "rows per writer");
}
