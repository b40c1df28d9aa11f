//! Multi-writer stress: many writers appending to one table at
//! once must produce exactly contiguous new versions, every writer's rows exactly once, no
//! writer error and no duplicated commit. SPEC.md §7, invariants I1-I3. (The same with
//! 8 `alluvium-bench append` processes is in the bench package's tests.)

use crate::table_check;

use std::collections::HashMap;
use std::sync::Arc;

use alluvium::{Table, WriteOptions};
use alluvium_storage::InMemoryStore;
use arrow::array::{ArrayRef, Int64Array, RecordBatch};

use crate::batches::writer_seq_schema as schema;
use table_check::check_table;

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

/// 8 threads x 250 one-row appends on the in-memory store, each thread with its own table
/// handle (its own snapshot cache), as independent processes would be.
#[test]
fn eight_threads_two_hundred_fifty_commits_each_in_memory() {
    let store: Arc<InMemoryStore> = Arc::new(InMemoryStore::new());
    let table = Table::from_store(store.clone());
    table
        .create(&schema(), &[], alluvium::NO_PROPERTIES)
        .unwrap();
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
