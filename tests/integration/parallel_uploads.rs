//! Parallel data-file uploads (SPEC.md §18 R3) on a store that says it serves requests
//! concurrently: every file of a write lands once and is committed; when one upload fails
//! the write fails and every file it did upload is deleted.

use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use alluvium::{ScanBuilder, Table, WriteOptions};
use alluvium_storage::{
    InMemoryStore, ObjectMeta, ObjectStore, Result as StorageResult, StorageError, StorePath,
};
use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use bytes::Bytes;

/// An in-memory store that claims concurrent fetching (as object stores do), counts data
/// file uploads and fails the `fail_at`-th one (1-based; 0 never).
#[derive(Debug)]
struct ConcurrentStore {
    inner: InMemoryStore,
    uploads: AtomicUsize,
    fail_at: usize,
    /// The name of the thread of every data-file upload, and the most uploads seen in
    /// flight at once.
    upload_threads: std::sync::Mutex<Vec<Option<String>>>,
    in_flight: AtomicUsize,
    most_in_flight: AtomicUsize,
}

impl ConcurrentStore {
    fn new(fail_at: usize) -> Self {
        ConcurrentStore {
            inner: InMemoryStore::new(),
            uploads: AtomicUsize::new(0),
            fail_at,
            upload_threads: std::sync::Mutex::new(Vec::new()),
            in_flight: AtomicUsize::new(0),
            most_in_flight: AtomicUsize::new(0),
        }
    }
}

impl ObjectStore for ConcurrentStore {
    fn root_uri(&self) -> String {
        self.inner.root_uri()
    }
    fn get(&self, path: &StorePath) -> StorageResult<Bytes> {
        self.inner.get(path)
    }
    fn get_range(&self, path: &StorePath, range: Range<u64>) -> StorageResult<Bytes> {
        self.inner.get_range(path, range)
    }
    fn head(&self, path: &StorePath) -> StorageResult<ObjectMeta> {
        self.inner.head(path)
    }
    fn put_if_absent(&self, path: &StorePath, data: Bytes) -> StorageResult<()> {
        if path.as_str().ends_with(".parquet") && !path.as_str().starts_with("_delta_log") {
            let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            self.most_in_flight.fetch_max(now, Ordering::SeqCst);
            self.upload_threads
                .lock()
                .unwrap()
                .push(std::thread::current().name().map(str::to_string));
            std::thread::sleep(std::time::Duration::from_millis(2));
            self.in_flight.fetch_sub(1, Ordering::SeqCst);
            let n = self.uploads.fetch_add(1, Ordering::SeqCst) + 1;
            if n == self.fail_at {
                return Err(StorageError::Io {
                    op: "put_if_absent",
                    path: path.as_str().to_string(),
                    source: std::io::Error::other("injected upload failure"),
                });
            }
        }
        self.inner.put_if_absent(path, data)
    }
    fn put(&self, path: &StorePath, data: Bytes) -> StorageResult<()> {
        self.inner.put(path, data)
    }
    fn list_dir_from(
        &self,
        dir: Option<&StorePath>,
        start: &str,
    ) -> StorageResult<Vec<ObjectMeta>> {
        self.inner.list_dir_from(dir, start)
    }
    fn list_tree(&self, dir: Option<&StorePath>) -> StorageResult<Vec<ObjectMeta>> {
        self.inner.list_tree(dir)
    }
    fn delete(&self, path: &StorePath) -> StorageResult<()> {
        self.inner.delete(path)
    }
    fn fetches_concurrently(&self) -> bool {
        true
    }
}

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("p", DataType::Utf8, true),
    ]))
}

/// `n` rows over `parts` partitions: one data file per partition.
fn batch(n: i64, parts: i64) -> RecordBatch {
    RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from((0..n).collect::<Vec<_>>())) as ArrayRef,
            Arc::new(StringArray::from(
                (0..n)
                    .map(|i| format!("p{}", i % parts))
                    .collect::<Vec<_>>(),
            )),
        ],
    )
    .unwrap()
}

fn data_files(store: &dyn ObjectStore) -> usize {
    store
        .list_tree(None)
        .unwrap()
        .iter()
        .filter(|m| m.path.as_str().ends_with(".parquet") && !m.path.as_str().starts_with("_"))
        .count()
}

#[test]
fn every_file_of_a_write_is_uploaded_once_and_committed() {
    let store = Arc::new(ConcurrentStore::new(0));
    let table = Table::from_store(store.clone());
    table
        .create(&schema(), &["p".into()], alluvium::NO_PROPERTIES)
        .unwrap();
    let o = table
        .append([batch(200, 20)], &WriteOptions::default())
        .unwrap();
    assert_eq!(o.report().unwrap().files_added, 20);
    assert_eq!(store.uploads.load(Ordering::SeqCst), 20);
    assert_eq!(data_files(store.as_ref()), 20);
    let snapshot = table.snapshot().unwrap();
    assert_eq!(snapshot.num_files(), 20);
    let rows: usize = ScanBuilder::new(snapshot)
        .build()
        .unwrap()
        .execute_to_vec()
        .unwrap()
        .iter()
        .map(RecordBatch::num_rows)
        .sum();
    assert_eq!(rows, 200);
}

#[test]
fn a_failed_upload_fails_the_write_and_removes_the_uploaded_files() {
    let store = Arc::new(ConcurrentStore::new(7));
    let table = Table::from_store(store.clone());
    table
        .create(&schema(), &["p".into()], alluvium::NO_PROPERTIES)
        .unwrap();
    let e = table
        .append([batch(200, 20)], &WriteOptions::default())
        .unwrap_err();
    assert!(e.to_string().contains("injected upload failure"), "{e}");
    assert_eq!(data_files(store.as_ref()), 0);
    assert_eq!(table.snapshot().unwrap().version(), 0);
}

/// Uploads run as tasks on the caller's rayon pool (an embedder's pool here), never on
/// threads of their own, at most eight at a time.
#[test]
fn uploads_run_on_the_current_rayon_pool_at_most_eight_at_once() {
    let store = Arc::new(ConcurrentStore::new(0));
    let table = Table::from_store(store.clone());
    table
        .create(&schema(), &["p".into()], alluvium::NO_PROPERTIES)
        .unwrap();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(12)
        .thread_name(|i| format!("embedder-{i}"))
        .build()
        .unwrap();
    pool.install(|| {
        table
            .append([batch(400, 40)], &WriteOptions::default())
            .unwrap()
    });
    let threads = store.upload_threads.lock().unwrap().clone();
    assert_eq!(threads.len(), 40);
    for t in &threads {
        assert!(
            t.as_deref().is_some_and(|n| n.starts_with("embedder-")),
            "an upload ran on {t:?}, not on the pool"
        );
    }
    let most = store.most_in_flight.load(Ordering::SeqCst);
    assert!((1..=8).contains(&most), "{most} uploads in flight");
}
