//! Commits through stores whose answers to put-if-absent are ambiguous, and through stores
//! without put-if-absent (SPEC.md §2, §7).
//!
//! Object-store clients retry some failed requests; a retried create whose first attempt
//! landed is refused with `AlreadyExists` (S3: 412), and concurrent conditional writes can
//! be refused with 409 although no object exists yet. Neither is proof of losing: the
//! commit loop must read the version back and compare `commitInfo.txnId`.
#![cfg(not(alluvium_loom))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use alluvium_mvcc::{MvccError, Snapshot, Transaction, VersionSpec};
use alluvium_storage::{
    CountingStore, InMemoryStore, ObjectMeta, ObjectStore, Result, StorageError, StorePath,
    StoreRef,
};
use alluvium_txlog::actions::{Action, Add, Format, Metadata, Protocol};
use alluvium_txlog::commit::decode_commit;
use alluvium_txlog::log_path::{LogFileKind, commit_path};
use alluvium_txlog::segment::list_log_from;
use bytes::Bytes;

/// How the wrapper misanswers the next `misanswer` puts of commit files.
#[derive(Debug, Clone, Copy)]
enum Lie {
    /// The put lands, then the store says `AlreadyExists` (a retried request).
    LandedButAlreadyExists,
    /// The put does not land, and the store says `AlreadyExists` (409 on a conditional
    /// write racing another that then failed).
    NotLandedButAlreadyExists,
}

#[derive(Debug)]
struct LyingStore {
    inner: StoreRef,
    lie: Lie,
    misanswer: AtomicU32,
    put_if_absent: bool,
    single_writer: bool,
}

impl LyingStore {
    fn new(lie: Lie, misanswer: u32) -> Self {
        LyingStore {
            inner: Arc::new(InMemoryStore::new()),
            lie,
            misanswer: AtomicU32::new(misanswer),
            put_if_absent: true,
            single_writer: false,
        }
    }
}

impl ObjectStore for LyingStore {
    fn root_uri(&self) -> String {
        self.inner.root_uri()
    }
    fn get(&self, path: &StorePath) -> Result<Bytes> {
        self.inner.get(path)
    }
    fn get_range(&self, path: &StorePath, range: Range<u64>) -> Result<Bytes> {
        self.inner.get_range(path, range)
    }
    fn head(&self, path: &StorePath) -> Result<ObjectMeta> {
        self.inner.head(path)
    }
    fn put_if_absent(&self, path: &StorePath, data: Bytes) -> Result<()> {
        let is_commit = path.as_str().ends_with(".json");
        let lie = is_commit
            && self
                .misanswer
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok();
        if !lie {
            return self.inner.put_if_absent(path, data);
        }
        if let Lie::LandedButAlreadyExists = self.lie {
            self.inner.put_if_absent(path, data)?;
        }
        Err(StorageError::AlreadyExists {
            path: path.to_string(),
        })
    }
    fn put(&self, path: &StorePath, data: Bytes) -> Result<()> {
        self.inner.put(path, data)
    }
    fn list_dir_from(&self, dir: Option<&StorePath>, start: &str) -> Result<Vec<ObjectMeta>> {
        self.inner.list_dir_from(dir, start)
    }
    fn list_tree(&self, dir: Option<&StorePath>) -> Result<Vec<ObjectMeta>> {
        self.inner.list_tree(dir)
    }
    fn delete(&self, path: &StorePath) -> Result<()> {
        self.inner.delete(path)
    }
    fn supports_put_if_absent(&self) -> bool {
        self.put_if_absent
    }
    fn single_writer(&self) -> bool {
        self.single_writer
    }
}

fn create_txn(store: StoreRef) -> Transaction {
    let mut txn = Transaction::create(store, "CREATE TABLE");
    txn.set_protocol(Protocol {
        min_reader_version: 1,
        min_writer_version: 2,
        reader_features: None,
        writer_features: None,
    });
    txn.set_metadata(Metadata {
        id: "t".into(),
        name: None,
        description: None,
        format: Format::default(),
        schema_string: r#"{"type":"struct","fields":[{"name":"a","type":"long","nullable":true,"metadata":{}}]}"#.into(),
        partition_columns: vec![],
        created_time: None,
        configuration: HashMap::new(),
    });
    txn
}

fn append_txn(store: StoreRef, name: &str) -> Transaction {
    let snap = Snapshot::load(store, VersionSpec::Latest).unwrap();
    let mut txn = Transaction::new(&snap, "WRITE");
    txn.add_file(Add::builder(format!("{name}.parquet"), 1, 1).build());
    txn
}

/// The txnIds of the log, by version, checking that versions are contiguous from 0.
fn log(store: &dyn ObjectStore) -> Vec<String> {
    let listing = list_log_from(store, 0).unwrap();
    let versions: Vec<u64> = listing
        .iter()
        .filter(|f| f.kind == LogFileKind::Commit)
        .map(|f| f.version)
        .collect();
    assert_eq!(versions, (0..versions.len() as u64).collect::<Vec<_>>());
    versions
        .iter()
        .map(|v| {
            let p = commit_path(*v);
            decode_commit(p.as_str(), &store.get(&p).unwrap())
                .unwrap()
                .iter()
                .find_map(|a| match a {
                    Action::CommitInfo(ci) => ci.txn_id().map(str::to_string),
                    _ => None,
                })
                .unwrap()
        })
        .collect()
}

#[test]
fn already_exists_after_a_landed_put_is_settled_as_committed() {
    let store: StoreRef = Arc::new(LyingStore::new(Lie::LandedButAlreadyExists, 2));
    // Creating version 0: the put landed, the store says it exists. Not TableAlreadyExists.
    let txn = create_txn(store.clone());
    let id0 = txn.txn_id().to_string();
    let r = txn.commit().unwrap();
    assert_eq!((r.version, r.attempts), (0, 1));
    assert!(r.resolved_by_read_back);
    // An append: committed once, at version 1, not retried at version 2.
    let txn = append_txn(store.clone(), "a");
    let id1 = txn.txn_id().to_string();
    let r = txn.commit().unwrap();
    assert_eq!((r.version, r.attempts), (1, 1));
    assert!(r.resolved_by_read_back && r.winning_commits.is_empty());
    // The next append is answered truthfully.
    let r = append_txn(store.clone(), "b").commit().unwrap();
    assert_eq!(r.version, 2);
    assert!(!r.resolved_by_read_back);
    let ids = log(store.as_ref());
    assert_eq!(ids.len(), 3);
    assert_eq!(ids[..2], [id0, id1]);
}

#[test]
fn already_exists_for_a_version_nobody_holds_is_retried_at_that_version() {
    let store: StoreRef = Arc::new(LyingStore::new(Lie::NotLandedButAlreadyExists, 3));
    // Three refusals of version 0 although nothing holds it: each time the read-back
    // finds no commit there, so the creator retries version 0 (not 1) and wins it.
    let txn = create_txn(store.clone());
    let id = txn.txn_id().to_string();
    let r = txn.commit().unwrap();
    assert_eq!((r.version, r.attempts), (0, 4));
    assert!(r.winning_commits.is_empty());
    assert_eq!(log(store.as_ref()), [id], "exactly one commit, version 0");
}

#[test]
fn stores_without_put_if_absent_refuse_commits_unless_single_writer() {
    let mut lying = LyingStore::new(Lie::LandedButAlreadyExists, 0);
    lying.put_if_absent = false;
    let store: StoreRef = Arc::new(lying);
    let err = create_txn(store.clone()).commit().unwrap_err();
    assert!(
        matches!(
            err,
            MvccError::StorageCapabilityMissing {
                capability: "put-if-absent",
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("single_writer=true"), "{err}");
    assert!(store.list_tree(None).unwrap().is_empty(), "nothing written");

    let mut lying = LyingStore::new(Lie::LandedButAlreadyExists, 0);
    lying.put_if_absent = false;
    lying.single_writer = true;
    let store: StoreRef = Arc::new(lying);
    create_txn(store.clone()).commit().unwrap();
    append_txn(store.clone(), "a").commit().unwrap();
    assert_eq!(log(store.as_ref()).len(), 2);
}

#[test]
fn reports_count_requests_on_counting_stores() {
    let store: StoreRef = Arc::new(CountingStore::new(Arc::new(InMemoryStore::new())));
    create_txn(store.clone()).commit().unwrap();
    let r = append_txn(store.clone(), "a").commit().unwrap();
    assert_eq!(r.requests.put, 1, "{:?}", r.requests);
    assert_eq!(r.requests.total(), 1, "{:?}", r.requests);
    let s = Snapshot::load(store.clone(), VersionSpec::Latest).unwrap();
    let q = s.report().requests;
    assert_eq!(q.list, u64::from(s.report().list_calls));
    // `_last_checkpoint` (absent) and the two commits.
    assert_eq!(q.get, 3, "{q:?}");
}
