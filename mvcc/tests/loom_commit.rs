//! loom model of the commit protocol (SPEC.md §12): writers racing to commit blind appends
//! through the in-memory store's put-if-absent and the commit/retry loop.
//!
//! Checked in every interleaving: every version from 0 to the number of writers is won
//! exactly once, none is skipped, every acknowledged commit is in the log at the version
//! it was acknowledged with, and no commit appears twice. A deliberately racy store (check,
//! then insert, under separate locks) must be caught.
//!
//! Run: `LOOM_MAX_PREEMPTIONS=2 RUSTFLAGS="--cfg alluvium_loom" cargo test -p alluvium-mvcc --release --test loom_commit`
#![cfg(alluvium_loom)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::sync::Arc;

use alluvium_mvcc::{Snapshot, Transaction, VersionSpec};
use alluvium_storage::{InMemoryStore, StoreRef};
use alluvium_txlog::actions::{Action, Add, Format, Metadata, Protocol};
use alluvium_txlog::commit::decode_commit;
use alluvium_txlog::log_path::{LogFileKind, commit_path};
use alluvium_txlog::segment::list_log_from;

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

/// One writer: read the latest snapshot, commit a blind append of one (fictitious) file.
fn append(store: StoreRef, writer: usize) -> (u64, String) {
    let snap = Snapshot::load(store, VersionSpec::Latest).unwrap();
    let mut txn = Transaction::new(&snap, "WRITE");
    txn.add_file(Add::builder(format!("w{writer}.parquet"), 1, 1).build());
    let id = txn.txn_id().to_string();
    let report = txn.commit().unwrap();
    (report.version, id)
}

fn check(store: &StoreRef, acked: &[(u64, String)], writers: usize) {
    let listing = list_log_from(store.as_ref(), 0).unwrap();
    let versions: Vec<u64> = listing
        .iter()
        .filter(|f| f.kind == LogFileKind::Commit)
        .map(|f| f.version)
        .collect();
    assert_eq!(
        versions,
        (0..=writers as u64).collect::<Vec<_>>(),
        "log invariant violated: duplicate or gapped versions"
    );
    let mut ids = Vec::new();
    for v in versions {
        let p = commit_path(v);
        let actions = decode_commit(p.as_str(), &store.get(&p).unwrap()).unwrap();
        let id = actions.iter().find_map(|a| match a {
            Action::CommitInfo(ci) => ci.txn_id().map(str::to_string),
            _ => None,
        });
        ids.push((v, id.unwrap()));
    }
    for (v, id) in acked {
        assert!(
            ids.contains(&(*v, id.clone())),
            "log invariant violated: acknowledged commit {id} is not at version {v}"
        );
    }
    let mut unique: Vec<&String> = ids.iter().map(|(_, i)| i).collect();
    unique.sort();
    unique.dedup();
    assert_eq!(
        unique.len(),
        ids.len(),
        "log invariant violated: a commit appears twice"
    );
}

/// Stack for model threads: the commit path (JSON, schema parsing) needs more than loom's
/// default coroutine stack, especially in debug builds.
const STACK: usize = 16 << 20;

fn spawn<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> loom::thread::JoinHandle<T> {
    loom::thread::Builder::new()
        .stack_size(STACK)
        .spawn(f)
        .unwrap()
}

fn model(writers: usize, make: fn() -> InMemoryStore) {
    loom::model(move || {
        // The model's main thread has a small fixed stack: do the work in a big one.
        spawn(move || {
            let store: StoreRef = Arc::new(make());
            create(&store);
            let handles: Vec<_> = (0..writers)
                .map(|w| {
                    let store = store.clone();
                    spawn(move || append(store, w))
                })
                .collect();
            let acked: Vec<(u64, String)> =
                handles.into_iter().map(|h| h.join().unwrap()).collect();
            check(&store, &acked, writers);
        })
        .join()
        .unwrap();
    });
}

#[test]
fn two_writers_win_each_version_exactly_once() {
    model(2, InMemoryStore::new);
}

#[test]
fn three_writers_win_each_version_exactly_once() {
    model(3, InMemoryStore::new);
}

/// Negative control: without mutual exclusion two writers can both "win" a version; the
/// model must notice, or it proves nothing.
#[test]
#[should_panic(expected = "log invariant violated")]
fn a_racy_store_is_caught() {
    model(2, InMemoryStore::racy_for_testing);
}
