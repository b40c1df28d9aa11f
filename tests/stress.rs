//! Multi-writer stress: many writers appending to one table at
//! once must produce exactly contiguous new versions, every writer's rows exactly once, no
//! writer error and no duplicated commit. SPEC.md §7, invariants I1-I3.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use alluvium::storage::InMemoryStore;
use alluvium::txlog::actions::Action;
use alluvium::txlog::commit::decode_commit;
use alluvium::txlog::log_path::{LogFileKind, commit_path};
use alluvium::txlog::segment::list_log_from;
use alluvium::{ScanBuilder, Table, WriteOptions};
use arrow::array::{Array, ArrayRef, Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("writer", DataType::Int64, false),
        Field::new("seq", DataType::Int64, false),
    ]))
}

fn row(writer: i64, seq: i64) -> RecordBatch {
    RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from(vec![writer])) as ArrayRef,
            Arc::new(Int64Array::from(vec![seq])),
        ],
    )
    .unwrap()
}

/// Checks I1-I3 on the final table: versions 0..=expected contiguous and parseable, every
/// commit's txnId unique, and every (writer, seq) row present exactly once.
fn check_table(table: &Table, expected_commits: u64, expected_rows: &HashMap<i64, i64>) {
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
    let batches = ScanBuilder::new(snap).build().unwrap().execute().unwrap();
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

/// 8 threads x 250 one-row appends on the in-memory store, each thread with its own table
/// handle (its own snapshot cache), as independent processes would be.
#[test]
fn eight_threads_two_hundred_fifty_commits_each_in_memory() {
    let store: Arc<InMemoryStore> = Arc::new(InMemoryStore::new());
    let table = Table::from_store(store.clone());
    table.create(&schema(), &[], &HashMap::new()).unwrap();
    let (writers, commits) = (8i64, 250i64);
    let handles: Vec<_> = (0..writers)
        .map(|w| {
            let store = store.clone();
            std::thread::spawn(move || {
                let t = Table::from_store(store);
                for i in 0..commits {
                    t.append([row(w, i)], &WriteOptions::default())
                        .unwrap_or_else(|e| panic!("writer {w} commit {i}: {e}"));
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let expected: HashMap<i64, i64> = (0..writers).map(|w| (w, commits)).collect();
    check_table(&table, (writers * commits) as u64, &expected);
}

/// 8 processes x 100 appends on the local filesystem (`alluvium bench append`, one writer
/// each), racing from the creation of the table on.
#[test]
fn eight_processes_one_hundred_appends_each_on_local_disk() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t");
    let children: Vec<_> = (0..8)
        .map(|_| {
            std::process::Command::new(env!("CARGO_BIN_EXE_alluvium"))
                .args([
                    "bench",
                    "append",
                    path.to_str().unwrap(),
                    "--commits",
                    "100",
                    "--writers",
                    "1",
                    "--no-fsync",
                ])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut pids = Vec::new();
    for c in children {
        let pid = i64::from(c.id());
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "writer process failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let line: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(line["lost"], 0);
        pids.push(pid);
    }
    let table = Table::open(path.to_str().unwrap()).unwrap();
    let expected: HashMap<i64, i64> = pids.iter().map(|p| (p * 1000, 100)).collect();
    check_table(&table, 800, &expected);
}
