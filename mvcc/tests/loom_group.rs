//! loom models of group commit (SPEC.md §12, §35): the queue's leader hand-off, and
//! writers sharing one group committer over the in-memory store.
//!
//! Checked in every interleaving of the queue (`GroupQueue`, the code that ships): at most
//! one batch is committed at a time; every member is in exactly one batch and its writer
//! gets exactly its own outcome; nobody is stranded (every writer returns); two members
//! sharing a key are never in one batch; a full queue that refuses hands the item back
//! without queueing it. And of the committer: every write acknowledged at version v is in
//! version v, versions are contiguous, no write is in two versions.
//!
//! Run: `LOOM_MAX_PREEMPTIONS=3 RUSTFLAGS="--cfg alluvium_loom" cargo test -p alluvium-mvcc --release --test loom_group`
#![cfg(alluvium_loom)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;

use alluvium_mvcc::group::{
    BatchLimits, GroupCommit, GroupCommitOptions, GroupQueue, MemberOutcome, QueueFull, Weight,
    WhenFull,
};
use alluvium_mvcc::snapshot::VersionedCache;
use alluvium_mvcc::{Snapshot, Transaction, VersionSpec};
use alluvium_storage::sync::{Arc, AtomicBool, Mutex, Ordering};
use alluvium_storage::{InMemoryStore, StoreRef};
use alluvium_txlog::actions::{Action, Add, Format, Metadata, Protocol};
use alluvium_txlog::commit::decode_commit;
use alluvium_txlog::log_path::{LogFileKind, commit_path};
use alluvium_txlog::segment::list_log_from;

type Queue = GroupQueue<u64, u64>;

fn one() -> Weight {
    Weight {
        actions: 1,
        bytes: 1,
    }
}

/// A writer: submits `item` (with `keys`) and commits whatever batch it leads, checking
/// that no other batch is in flight and recording the batch.
fn writer(
    q: &Queue,
    busy: &AtomicBool,
    batches: &Mutex<Vec<Vec<u64>>>,
    item: u64,
    keys: Vec<String>,
) -> Result<u64, (QueueFull, u64)> {
    q.submit(
        item,
        one(),
        keys,
        |batch: Vec<u64>| {
            assert!(!busy.swap(true, Ordering::SeqCst), "two batches in flight");
            batches.lock().push(batch.clone());
            let out = batch.iter().map(|i| i * 10).collect();
            busy.store(false, Ordering::SeqCst);
            out
        },
        || u64::MAX,
    )
}

/// Runs `items` (with their keys) through one queue from as many threads.
fn queue_model(
    capacity: usize,
    when_full: WhenFull,
    max_actions: usize,
    items: &'static [(u64, Option<&'static str>)],
) {
    loom::model(move || {
        let q = Arc::new(Queue::new(
            capacity,
            when_full,
            BatchLimits {
                max_actions,
                max_bytes: usize::MAX,
            },
        ));
        let busy = Arc::new(AtomicBool::new(false));
        let batches = Arc::new(Mutex::new(Vec::new()));
        let handles: Vec<_> = items
            .iter()
            .map(|(item, key)| {
                let (q, busy, batches) = (q.clone(), busy.clone(), batches.clone());
                let keys: Vec<String> = key.iter().map(|k| k.to_string()).collect();
                loom::thread::spawn(move || (*item, writer(&q, &busy, &batches, *item, keys)))
            })
            .collect();
        let results: Vec<(u64, Result<u64, (QueueFull, u64)>)> =
            handles.into_iter().map(|h| h.join().unwrap()).collect();
        let batches = batches.lock().clone();
        let mut committed: Vec<u64> = batches.iter().flatten().copied().collect();
        committed.sort_unstable();
        let mut accepted = Vec::new();
        for (item, r) in &results {
            match r {
                Ok(out) => {
                    assert_eq!(
                        *out,
                        item * 10,
                        "writer {item} got another member's outcome"
                    );
                    accepted.push(*item);
                }
                Err((full, back)) => {
                    assert_eq!(when_full, WhenFull::Busy, "a blocking queue refused");
                    assert_eq!(full.capacity, capacity);
                    assert_eq!(back, item, "the refused item comes back");
                }
            }
        }
        accepted.sort_unstable();
        assert_eq!(
            committed, accepted,
            "every accepted member in exactly one batch"
        );
        for b in &batches {
            assert!(!b.is_empty() && b.len() <= max_actions);
            for key in ["k"] {
                let sharing = b
                    .iter()
                    .filter(|i| items.iter().any(|(j, k)| j == *i && *k == Some(key)))
                    .count();
                assert!(sharing <= 1, "two members of key {key} in one batch: {b:?}");
            }
        }
        assert_eq!(q.queued(), 0, "a member was left queued");
    });
}

#[test]
fn three_writers_each_get_their_own_outcome() {
    queue_model(4, WhenFull::Block, 8, &[(1, None), (2, None), (3, None)]);
}

#[test]
fn batch_limits_split_the_queue() {
    queue_model(4, WhenFull::Block, 1, &[(1, None), (2, None), (3, None)]);
}

#[test]
fn members_sharing_a_key_never_share_a_batch() {
    queue_model(
        4,
        WhenFull::Block,
        8,
        &[(1, Some("k")), (2, Some("k")), (3, None)],
    );
}

#[test]
fn a_full_queue_blocks_then_admits() {
    queue_model(1, WhenFull::Block, 8, &[(1, None), (2, None), (3, None)]);
}

#[test]
fn a_full_queue_refuses_and_hands_the_item_back() {
    queue_model(1, WhenFull::Busy, 8, &[(1, None), (2, None), (3, None)]);
}

fn create(store: &StoreRef) {
    let mut txn = Transaction::create(store.clone(), "CREATE TABLE");
    txn.set_protocol(Protocol {
        min_reader_version: 1,
        min_writer_version: 2,
        reader_features: None,
        writer_features: None,
    });
    txn.set_metadata(Metadata {
        id: "loom".into(),
        name: None,
        description: None,
        format: Format::default(),
        schema_string: r#"{"type":"struct","fields":[{"name":"a","type":"long","nullable":true,"metadata":{}}]}"#.into(),
        partition_columns: vec![],
        created_time: None,
        configuration: HashMap::new(),
    });
    txn.commit().unwrap();
}

/// Stack for model threads (see `loom_commit.rs`).
const STACK: usize = 16 << 20;

fn spawn<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> loom::thread::JoinHandle<T> {
    loom::thread::Builder::new()
        .stack_size(STACK)
        .spawn(f)
        .unwrap()
}

/// Two writers share one committer (and its snapshot cache): each appends one file.
#[test]
fn writers_sharing_a_committer_land_once_each_at_the_version_they_are_told() {
    loom::model(|| {
        spawn(|| {
            let store: StoreRef = std::sync::Arc::new(InMemoryStore::new());
            create(&store);
            let cache = Arc::new(VersionedCache::<Snapshot>::new());
            let group = Arc::new(GroupCommit::new(
                cache.clone(),
                GroupCommitOptions::default(),
            ));
            let handles: Vec<_> = (0..2)
                .map(|w| {
                    let (store, group, cache) = (store.clone(), group.clone(), cache.clone());
                    spawn(move || {
                        let snap = match cache.get() {
                            Some(s) => (*s).clone(),
                            None => Snapshot::load(store, VersionSpec::Latest).unwrap(),
                        };
                        let mut txn = Transaction::new(&snap, "WRITE");
                        let path = format!("w{w}.parquet");
                        txn.add_file(Add::builder(path.clone(), 1, 1).build());
                        match group.commit(txn).unwrap() {
                            MemberOutcome::Committed(m) => (m.report.version, path),
                            MemberOutcome::Skipped { .. } => panic!("nothing to skip"),
                        }
                    })
                })
                .collect();
            let acked: Vec<(u64, String)> =
                handles.into_iter().map(|h| h.join().unwrap()).collect();
            let listing = list_log_from(store.as_ref(), 0).unwrap();
            let versions: Vec<u64> = listing
                .iter()
                .filter(|f| f.kind == LogFileKind::Commit)
                .map(|f| f.version)
                .collect();
            let last = *versions.last().unwrap();
            assert_eq!(
                versions,
                (0..=last).collect::<Vec<_>>(),
                "versions not contiguous"
            );
            assert!(
                (1..=2).contains(&last),
                "two writes make one or two versions"
            );
            let mut seen = Vec::new();
            for v in versions {
                let p = commit_path(v);
                for a in decode_commit(p.as_str(), &store.get(&p).unwrap()).unwrap() {
                    if let Action::Add(add) = a {
                        seen.push((v, add.path));
                    }
                }
            }
            seen.sort();
            let mut acked = acked;
            acked.sort();
            assert_eq!(seen, acked, "each write exactly once, where it was told");
        })
        .join()
        .unwrap();
    });
}
