//! The table handle: where a table lives and how to read its snapshots.

use std::path::Path;
use std::sync::Arc;

use crate::Snapshot;
use alluvium_mvcc::snapshot::VersionedCache;
use alluvium_mvcc::{GroupCommit, GroupCommitOptions, VersionSpec};
use alluvium_storage::{
    InMemoryStore, LocalFsStore, StorageOptions, StoreRef, local_path, remote_scheme,
};

use crate::{Error, Result};

/// Opens an object-store table (feature `s3`).
#[cfg(feature = "s3")]
fn open_remote(location: &str, options: &StorageOptions) -> Result<Table> {
    Ok(Table::from_store(Arc::new(
        alluvium_storage::RemoteStore::open(location, options)?,
    )))
}

/// Without the `s3` feature object-store locations are refused.
#[cfg(not(feature = "s3"))]
fn open_remote(location: &str, _options: &StorageOptions) -> Result<Table> {
    Err(Error::InvalidArgument(format!(
        "{location}: this build of alluvium has no object-store support (cargo feature `s3`)"
    )))
}

/// A Delta table at a location. Cheap to clone (clones share the snapshot cache);
/// thread-safe.
///
/// The handle caches the newest snapshot it has seen; [`snapshot`](Self::snapshot) refreshes
/// it incrementally (one listing, then only the new commits).
///
/// Parallel work (snapshot loads, checkpoints, OPTIMIZE, VACUUM) runs on rayon's global pool
/// unless the embedder gives the table its own ([`with_thread_pool`](Self::with_thread_pool)).
///
/// Threads that append through one handle (or its clones) share commits: group commit
/// (SPEC.md §35, [`with_group_commit`](Self::with_group_commit)).
#[derive(Debug, Clone)]
pub struct Table {
    store: StoreRef,
    /// The newest snapshot seen, as the mvcc layer's (its group committer publishes
    /// into the same cache).
    cache: Arc<VersionedCache<alluvium_mvcc::Snapshot>>,
    /// The embedder's rayon pool, if any (see [`run`](Self::run)).
    pool: Option<Arc<rayon::ThreadPool>>,
    /// The group committer of this handle and its clones.
    group: Arc<GroupCommit>,
}

impl Table {
    /// Opens the table at `location`: a local path, a `file://` URI, or (with the default
    /// cargo feature `s3`) an object-store URI: `s3://bucket/prefix` (also `s3a://`),
    /// `gs://bucket/prefix`, `az://container/prefix` (also `azure://`, `abfs[s]://`).
    ///
    /// Object stores take their configuration from the `object_store` crate's environment
    /// variables (`AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
    /// `AWS_REGION`, `AWS_ALLOW_HTTP`, ...; `GOOGLE_*`, `AZURE_*`) and alluvium's defaults;
    /// alluvium's own options are given with
    /// [`open_with_options`](Self::open_with_options). The library reads no environment
    /// variable of its own (the CLI reads `ALLUVIUM_STORAGE_OPTIONS` and passes the pairs).
    ///
    /// Opening does no I/O; a missing table is reported by the first read.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for URIs of unsupported schemes (or object-store URIs in a
    /// build without the `s3` feature);
    /// [`Error::Storage`] for a bad object-store configuration.
    pub fn open(location: &str) -> Result<Table> {
        if remote_scheme(location).is_some() {
            return open_remote(location, &StorageOptions::default());
        }
        Self::open_local(location, true)
    }

    /// Opens the table at `location` with explicit options, which win over the
    /// `object_store` crate's environment variables.
    ///
    /// For object-store locations the keys are alluvium's own:
    /// * `put_if_absent`: `probe` (default: find out with a scratch object when a writer
    ///   first commits), `true` (the store gives conditional creates) or `false`;
    /// * `single_writer`: `true` declares that at most one writer uses the table at a time,
    ///   which lets writes go ahead on a store without put-if-absent (default `false`);
    /// * `concurrency`: requests in flight per batch of reads or deletes (default 32);
    ///
    /// and every `object_store` configuration key, e.g. `aws_endpoint`,
    /// `aws_access_key_id`, `aws_secret_access_key`, `aws_region`, `aws_allow_http`,
    /// `google_service_account`, `azure_storage_account_name`.
    ///
    /// For local locations the one key is `fsync` (`true` by default; see
    /// [`open_local`](Self::open_local)).
    ///
    /// # Errors
    /// As [`open`](Self::open); [`Error::InvalidArgument`] for a key that does not apply
    /// to the location; [`Error::Storage`] for a bad key or value of an object store.
    pub fn open_with_options(location: &str, options: &[(&str, &str)]) -> Result<Table> {
        if remote_scheme(location).is_some() {
            return open_remote(
                location,
                &StorageOptions::from_pairs(options.iter().copied())?,
            );
        }
        let mut durable = true;
        for (k, v) in options {
            match k.trim().to_ascii_lowercase().as_str() {
                "fsync" => {
                    durable = match v.trim().to_ascii_lowercase().as_str() {
                        "true" | "1" | "yes" | "on" => true,
                        "false" | "0" | "no" | "off" => false,
                        _ => {
                            return Err(Error::InvalidArgument(format!(
                                "fsync={v}: expected true or false"
                            )));
                        }
                    }
                }
                other => {
                    return Err(Error::InvalidArgument(format!(
                        "option {other} does not apply to the local table {location}"
                    )));
                }
            }
        }
        Self::open_local(location, durable)
    }

    /// Opens the table at `location` with typed [`StorageOptions`] (the same settings as
    /// [`open_with_options`](Self::open_with_options), plus what has no text form, such as
    /// the embedder's tokio runtime for object stores). The environment is read only by the
    /// `object_store` crate's builders, as for [`open`](Self::open).
    ///
    /// A local location uses `fsync` and refuses `config` keys (object-store settings);
    /// an object-store location ignores `fsync` (a stored object is durable).
    ///
    /// # Errors
    /// As [`open_with_options`](Self::open_with_options); [`Error::Storage`] for a runtime
    /// handle of a current-thread runtime.
    pub fn open_with(location: &str, options: StorageOptions) -> Result<Table> {
        if remote_scheme(location).is_some() {
            return open_remote(location, &options);
        }
        if let Some(key) = options.config.keys().next() {
            return Err(Error::InvalidArgument(format!(
                "option {} does not apply to the local table {location}",
                key.trim().to_ascii_lowercase()
            )));
        }
        Self::open_local(location, options.fsync)
    }

    /// Opens a local table choosing whether writes are fsynced (`durable`, the default of
    /// [`open`](Self::open)). Without fsync a power loss may lose acknowledged commits;
    /// a process crash cannot. An object-store location is opened as by
    /// [`open`](Self::open) (`durable` does not apply: a stored object is durable).
    ///
    /// # Errors
    /// As [`open`](Self::open).
    pub fn open_local(location: &str, durable: bool) -> Result<Table> {
        if remote_scheme(location).is_some() {
            return Self::open(location);
        }
        let Some(path) = local_path(location) else {
            return Err(Error::InvalidArgument(format!(
                "unsupported table location {location}"
            )));
        };
        let path = Path::new(path);
        let absolute = match std::fs::canonicalize(path) {
            Ok(p) => p,
            Err(_) if path.is_absolute() => path.to_path_buf(),
            Err(_) => std::env::current_dir()
                .map_err(|e| Error::Io {
                    context: "current directory".into(),
                    source: e,
                })?
                .join(path),
        };
        Ok(Table::from_store(Arc::new(
            LocalFsStore::new(absolute).with_durability(durable),
        )))
    }

    /// A table in an existing store.
    pub fn from_store(store: StoreRef) -> Table {
        let cache = Arc::new(VersionedCache::new());
        Table {
            store,
            group: Arc::new(GroupCommit::new(
                cache.clone(),
                GroupCommitOptions::default(),
            )),
            cache,
            pool: None,
        }
    }

    /// This table handle grouping concurrent appends as `options` say (SPEC.md §35): the
    /// limits of one group commit, the queue's capacity, and whether a write finding it full
    /// waits or fails with a retryable `Busy` error; [`GroupCommitOptions::disabled`] makes
    /// every write commit alone. Clones of the returned handle share its committer; other
    /// handles (and clones made before) keep theirs.
    pub fn with_group_commit(mut self, options: GroupCommitOptions) -> Table {
        self.group = Arc::new(GroupCommit::new(self.cache.clone(), options));
        self
    }

    /// The group committer of this handle.
    pub(crate) fn group_commit(&self) -> &GroupCommit {
        &self.group
    }

    /// This table handle running its parallel work on `pool` instead of rayon's global
    /// pool: snapshot loads, checkpoints (also those after commits), OPTIMIZE and VACUUM.
    /// Clones of the returned handle share the pool; other handles are unaffected.
    pub fn with_thread_pool(mut self, pool: Arc<rayon::ThreadPool>) -> Table {
        self.pool = Some(pool);
        self
    }

    /// Runs `f` on the table's thread pool ([`with_thread_pool`](Self::with_thread_pool)),
    /// so that the parallel work inside it (a scan's `execute`, for instance) uses that
    /// pool; without one, runs `f` here. Blocks until `f` returns.
    pub fn run<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match &self.pool {
            Some(pool) => pool.install(f),
            None => f(),
        }
    }

    /// A table in a fresh in-memory store.
    pub fn in_memory() -> Table {
        Table::from_store(Arc::new(InMemoryStore::new()))
    }

    /// The store.
    pub fn store(&self) -> &StoreRef {
        &self.store
    }

    /// The location, as a URI.
    pub fn uri(&self) -> String {
        self.store.root_uri()
    }

    /// The latest snapshot: the cached one refreshed (one listing, then only the new
    /// commits), or loaded when the handle has none yet.
    ///
    /// # Errors
    /// See [`Snapshot::load`].
    pub fn snapshot(&self) -> Result<Snapshot> {
        self.run(|| {
            let fresh = match self.cache.get() {
                Some(cached) => cached.refresh()?,
                None => alluvium_mvcc::Snapshot::load(self.store.clone(), VersionSpec::Latest)?,
            };
            // The cache keeps the newer of what it holds and `fresh` (another thread may
            // have published a later version meanwhile); share its `Arc`.
            Ok(Snapshot::from(self.cache.publish(Arc::new(fresh))))
        })
    }

    /// Offers `snapshot` to the handle's cache, which keeps the newer of it and what it
    /// holds.
    pub(crate) fn publish_snapshot(&self, snapshot: Arc<alluvium_mvcc::Snapshot>) {
        self.cache.publish(snapshot);
    }

    /// The newest snapshot this handle has seen, without any I/O (`None` before the first
    /// load).
    pub(crate) fn cached_snapshot(&self) -> Option<Arc<alluvium_mvcc::Snapshot>> {
        self.cache.get()
    }

    /// The snapshot of a version, or as of a timestamp.
    ///
    /// # Errors
    /// See [`Snapshot::load`].
    pub fn snapshot_at(&self, spec: VersionSpec) -> Result<Snapshot> {
        self.run(|| Snapshot::load(self.store.clone(), spec))
    }
}

#[cfg(test)]
mod tests {
    use alluvium_storage::{ObjectMeta, Result as StoreResult, StorePath};
    use bytes::Bytes;

    use super::*;

    #[test]
    fn local_options_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let loc = dir.path().to_str().unwrap();
        assert!(Table::open_with_options(loc, &[("fsync", "false")]).is_ok());
        assert!(Table::open_with_options(loc, &[("fsync", "maybe")]).is_err());
        assert!(Table::open_with_options(loc, &[("aws_region", "x")]).is_err());
    }

    #[cfg(feature = "s3")]
    #[test]
    fn remote_locations_open_without_io() {
        let t = Table::open_with_options(
            "s3://bucket/some/table",
            &[
                ("aws_endpoint", "http://127.0.0.1:1"),
                ("aws_region", "us-east-1"),
                ("single_writer", "true"),
            ],
        )
        .unwrap();
        assert_eq!(t.uri(), "s3://bucket/some/table");
        assert!(t.store().single_writer());
        assert!(Table::open_with_options("s3://bucket/t", &[("single_writer", "maybe")]).is_err());
    }

    #[test]
    fn typed_options_open_local_and_remote_tables() {
        let dir = tempfile::tempdir().unwrap();
        let loc = dir.path().to_str().unwrap();
        assert!(Table::open_with(loc, StorageOptions::default().with_fsync(false)).is_ok());
        let err = Table::open_with(
            loc,
            StorageOptions::default().with_config("aws_region", "x"),
        )
        .unwrap_err();
        assert!(
            matches!(&err, Error::InvalidArgument(m) if m.contains("aws_region")),
            "{err}"
        );
        #[cfg(feature = "s3")]
        {
            let t = Table::open_with(
                "s3://bucket/t",
                StorageOptions::default()
                    .with_config("aws_region", "us-east-1")
                    .with_single_writer(true),
            )
            .unwrap();
            assert!(t.store().single_writer());
            assert!(
                Table::open_with(
                    "s3://bucket/t",
                    StorageOptions::default().with_config("aws_no_such_key", "1")
                )
                .is_err()
            );
        }
    }

    /// A store that records the name of every thread that reads through it.
    #[derive(Debug)]
    struct ThreadRecorder {
        inner: InMemoryStore,
        readers: Arc<std::sync::Mutex<Vec<Option<String>>>>,
    }

    impl ThreadRecorder {
        fn note(&self) {
            let name = std::thread::current().name().map(String::from);
            self.readers.lock().unwrap().push(name);
        }
    }

    impl alluvium_storage::ObjectStore for ThreadRecorder {
        fn root_uri(&self) -> String {
            self.inner.root_uri()
        }
        fn get(&self, path: &StorePath) -> StoreResult<Bytes> {
            self.note();
            self.inner.get(path)
        }
        fn get_range(&self, path: &StorePath, range: std::ops::Range<u64>) -> StoreResult<Bytes> {
            self.note();
            self.inner.get_range(path, range)
        }
        fn head(&self, path: &StorePath) -> StoreResult<ObjectMeta> {
            self.note();
            self.inner.head(path)
        }
        fn put_if_absent(&self, path: &StorePath, data: Bytes) -> StoreResult<()> {
            self.inner.put_if_absent(path, data)
        }
        fn put(&self, path: &StorePath, data: Bytes) -> StoreResult<()> {
            self.inner.put(path, data)
        }
        fn list_dir_from(
            &self,
            dir: Option<&StorePath>,
            start: &str,
        ) -> StoreResult<Vec<ObjectMeta>> {
            self.note();
            self.inner.list_dir_from(dir, start)
        }
        fn list_tree(&self, dir: Option<&StorePath>) -> StoreResult<Vec<ObjectMeta>> {
            self.note();
            self.inner.list_tree(dir)
        }
        fn delete(&self, path: &StorePath) -> StoreResult<()> {
            self.inner.delete(path)
        }
    }

    #[test]
    fn parallel_work_runs_on_the_embedders_pool() {
        use arrow::array::{Int64Array, RecordBatch};
        use arrow::datatypes::{DataType, Field, Schema};

        let readers = Arc::new(std::sync::Mutex::new(Vec::new()));
        let store: StoreRef = Arc::new(ThreadRecorder {
            inner: InMemoryStore::new(),
            readers: readers.clone(),
        });
        let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, true)]));
        let setup = Table::from_store(store.clone());
        setup.create(&schema, &[], crate::NO_PROPERTIES).unwrap();
        for i in 0..4 {
            let batch =
                RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from(vec![i]))])
                    .unwrap();
            setup
                .append([batch], &crate::WriteOptions::default())
                .unwrap();
        }
        readers.lock().unwrap().clear();

        let pool = Arc::new(
            rayon::ThreadPoolBuilder::new()
                .num_threads(2)
                .thread_name(|i| format!("embedder-{i}"))
                .build()
                .unwrap(),
        );
        let table = Table::from_store(store).with_thread_pool(pool);
        assert_eq!(table.snapshot().unwrap().version(), 4);
        table.snapshot_at(VersionSpec::Version(2)).unwrap();
        table
            .checkpoint(&alluvium_compaction::CheckpointConfig::default())
            .unwrap();
        let readers = readers.lock().unwrap();
        assert!(!readers.is_empty());
        for name in readers.iter() {
            assert!(
                name.as_deref().is_some_and(|n| n.starts_with("embedder-")),
                "a read ran on {name:?}, not on the embedder's pool"
            );
        }
        let ran_on = table.run(|| std::thread::current().name().map(String::from));
        assert!(ran_on.is_some_and(|n| n.starts_with("embedder-")));
    }
}
