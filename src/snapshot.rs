//! The facade's snapshot: one version of a table, read-only.
//!
//! This module owns [`Snapshot`], a thin handle over the mvcc layer's snapshot. It exists
//! so that an embedder only ever sees the facade's own [`Error`](crate::Error): the mvcc
//! snapshot's fallible methods (`load`, `refresh`, `file_location`, `check_writable`)
//! return the mvcc layer's error, and re-exporting it would hand an embedder writing
//! `table.snapshot()?.refresh()?` in a function returning [`crate::Result`] a lower crate's
//! error type. Everything a snapshot returns is a type the facade exports.
//!
//! The handle deliberately does not `Deref` to the inner snapshot: that would make the
//! mvcc methods, and their error type, callable again. Code inside the crate reaches the
//! inner snapshot through [`Snapshot::inner`] where a lower layer needs it (starting an
//! mvcc transaction, a checkpoint, a rewrite); with the `internal-api` feature experts can
//! too ([`Snapshot::as_mvcc`]).

use std::sync::Arc;

use alluvium_expr::Expr;
use alluvium_storage::{FileLocation, FileLocationRef, ObjectStore, StoreRef};
use alluvium_txlog::actions::{CommitInfo, DomainMetadata, Metadata, Protocol, Remove};
use alluvium_txlog::column_mapping::ColumnMappingMode;
use alluvium_txlog::memory::MemoryUsage;
use alluvium_txlog::path::TableRoot;
use alluvium_txlog::properties::TableProperties;
use alluvium_txlog::replay::TableState;
use alluvium_txlog::schema::StructType;
use alluvium_txlog::{FileRef, Version};

use crate::{Result, SnapshotReport, VersionSpec};

/// The table at one version. Immutable; cheap to clone (clones share one loaded state),
/// and `Send + Sync`, so one snapshot can be read from several threads.
///
/// Get one from [`Table::snapshot`](crate::Table::snapshot) (the latest version, refreshed
/// incrementally) or [`Table::snapshot_at`](crate::Table::snapshot_at); scan it with
/// [`ScanBuilder`](crate::ScanBuilder).
///
/// Its fallible methods return alluvium's [`Error`](crate::Error), with its
/// [`kind`](crate::Error::kind), so they compose with the rest of the facade:
///
/// ```
/// # fn main() -> alluvium::Result<()> {
/// use alluvium::arrow::datatypes::{DataType, Field, Schema};
/// use alluvium::{ErrorKind, Snapshot, Table, VersionSpec};
///
/// let table = Table::in_memory();
/// let schema = Schema::new(vec![Field::new("id", DataType::Int64, true)]);
/// table.create(&schema, &[], [("delta.appendOnly", "true")])?;
/// let snapshot = table.snapshot()?;
/// snapshot.check_writable()?;
/// let latest: alluvium::Result<Snapshot> = snapshot.refresh();
/// assert_eq!(latest?.version(), 0);
/// let missing = Snapshot::load(table.store().clone(), VersionSpec::Version(9));
/// assert_eq!(missing.unwrap_err().kind(), ErrorKind::NotFound);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// Shared: the table handle's cache publishes snapshots as `Arc`s, and handing out
    /// that same `Arc` makes a snapshot of the cached version cost one reference count.
    inner: Arc<alluvium_mvcc::Snapshot>,
}

impl Snapshot {
    /// Loads a version of the table stored in `store` (no cache: each call reads the log;
    /// [`Table::snapshot`](crate::Table::snapshot) keeps the latest one and refreshes it).
    ///
    /// # Errors
    /// [`ErrorKind::NotFound`](crate::ErrorKind::NotFound) if there is no log, or the
    /// version or timestamp is outside the table's readable history;
    /// [`ErrorKind::Unsupported`](crate::ErrorKind::Unsupported) if alluvium cannot read the
    /// table (protocol version or reader feature); the log's corruption errors naming the
    /// file; storage errors.
    pub fn load(store: StoreRef, spec: VersionSpec) -> Result<Snapshot> {
        Ok(alluvium_mvcc::Snapshot::load(store, spec)?.into())
    }

    /// The latest version of the table, built from this snapshot by applying only the
    /// commits after it (one listing, then those commits; no checkpoint is read). Returns a
    /// clone of `self` when nothing was committed since.
    ///
    /// # Errors
    /// As [`load`](Self::load); a corrupt-log error if a commit after this version is
    /// missing.
    pub fn refresh(&self) -> Result<Snapshot> {
        Ok(self.inner.refresh()?.into())
    }

    /// Refuses to write to or delete from this table when it needs a writer protocol
    /// version or writer feature alluvium does not support (or a clustered table's
    /// requirements are not met). Every operation that writes or deletes calls this before
    /// touching anything; an embedder writing data files itself should too.
    ///
    /// # Errors
    /// [`ErrorKind::Unsupported`](crate::ErrorKind::Unsupported) naming the version or
    /// feature.
    pub fn check_writable(&self) -> Result<()> {
        Ok(self.inner.check_writable()?)
    }

    /// Where the data file an `add` or `remove` names by `path` lives: a path inside the
    /// table, or an absolute URI outside it (the protocol allows both).
    ///
    /// # Errors
    /// [`ErrorKind::Corrupt`](crate::ErrorKind::Corrupt) for a path that does not decode or
    /// escapes the table root.
    pub fn file_location(&self, path: &str) -> Result<FileLocation> {
        Ok(self.inner.file_location(path)?)
    }

    /// [`file_location`](Self::file_location) borrowing `path` where it can: a plain
    /// relative path (nearly every one) is validated, not copied. For planning over many
    /// files, where an owned location per file costs an allocation each.
    ///
    /// ```no_run
    /// # fn main() -> alluvium::Result<()> {
    /// let snapshot = alluvium::Table::open("/data/events")?.snapshot()?;
    /// let locations = snapshot
    ///     .files()
    ///     .map(|f| snapshot.file_location_ref(f.path()))
    ///     .collect::<alluvium::Result<Vec<_>>>()?;
    /// println!("{} files, the first at {:?}", locations.len(), locations.first());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// As [`file_location`](Self::file_location).
    pub fn file_location_ref<'a>(&self, path: &'a str) -> Result<FileLocationRef<'a>> {
        Ok(self.inner.file_location_ref(path)?)
    }

    /// The version.
    pub fn version(&self) -> Version {
        self.inner.version()
    }

    /// The commit timestamp of this version (ms since the epoch): its in-commit timestamp
    /// when the table has them, else the modification time of its commit file.
    pub fn timestamp_ms(&self) -> i64 {
        self.inner.timestamp_ms()
    }

    /// The logical schema.
    pub fn schema(&self) -> &StructType {
        self.inner.schema()
    }

    /// The partition columns (logical names).
    pub fn partition_columns(&self) -> &[String] {
        self.inner.partition_columns()
    }

    /// The table properties, read through typed accessors (retention, checkpoint interval,
    /// enabled features, ...). The raw map is `metadata().configuration`.
    pub fn properties(&self) -> TableProperties<'_> {
        self.inner.properties()
    }

    /// The column-mapping mode in force.
    pub fn column_mapping(&self) -> ColumnMappingMode {
        self.inner.column_mapping()
    }

    /// The protocol.
    pub fn protocol(&self) -> &Protocol {
        self.inner.protocol()
    }

    /// The metadata (`metaData` action in force).
    pub fn metadata(&self) -> &Metadata {
        self.inner.metadata()
    }

    /// The live files, in no particular order. Each is read through a [`FileRef`]: its
    /// path, size, statistics, partition values and deletion vector where the snapshot
    /// keeps them (as columns, not one struct per file), and [`FileRef::to_add`] for the
    /// `add` action itself, built on demand.
    ///
    /// ```
    /// # fn main() -> alluvium::Result<()> {
    /// use std::sync::Arc;
    /// use alluvium::arrow::array::{Int64Array, RecordBatch};
    /// use alluvium::arrow::datatypes::{DataType, Field, Schema};
    /// use alluvium::{Table, WriteOptions};
    ///
    /// let table = Table::in_memory();
    /// let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true)]));
    /// table.create(&schema, &[], [("delta.appendOnly", "true")])?;
    /// let ids = Int64Array::from(vec![1, 2, 3]);
    /// let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(ids)]).unwrap();
    /// table.append([batch], &WriteOptions::default())?;
    /// let snapshot = table.snapshot()?;
    /// let rows: i64 = snapshot.files().filter_map(|f| f.num_records()).sum();
    /// assert_eq!(rows, 3);
    /// let add: alluvium::Add = snapshot.files().next().unwrap().to_add();
    /// assert!(add.path.ends_with(".parquet"));
    /// # Ok(()) }
    /// ```
    pub fn files(&self) -> impl Iterator<Item = FileRef<'_>> {
        self.inner.files()
    }

    /// The live files whose partition values and statistics say they may hold a row
    /// matching `filter`, in [`files`](Self::files) order: the data skipping of a scan,
    /// for an embedder that reads files itself (a point lookup that picks row groups). A
    /// file is left out only when no row of it can match; only the statistics of the
    /// columns `filter` reads are parsed.
    ///
    /// # Errors
    /// [`Error::Expr`](crate::Error::Expr) when `filter` names a column the table does not
    /// have or does not type against the schema.
    pub fn files_matching(&self, filter: &Expr) -> Result<Vec<FileRef<'_>>> {
        let predicate = self.inner.bind(filter)?;
        Ok(self
            .inner
            .files_matching(&predicate)
            .map(|m| m.file)
            .collect())
    }

    /// Number of live files.
    pub fn num_files(&self) -> usize {
        self.inner.num_files()
    }

    /// An estimate of the memory this snapshot holds, by part: the live files (entries,
    /// their paths, statistics and other strings, the hash index), the tombstones, and the
    /// rest. Snapshots derived by refresh share their file set's base, and each reports it
    /// whole. The estimate walks every file once (SPEC.md §8 states the bound per file).
    ///
    /// ```
    /// # fn main() -> alluvium::Result<()> {
    /// let table = alluvium::Table::in_memory();
    /// # let schema = std::sync::Arc::new(arrow::datatypes::Schema::new(vec![
    /// #     arrow::datatypes::Field::new("id", arrow::datatypes::DataType::Int64, false)]));
    /// table.create(&schema, &[], alluvium::NO_PROPERTIES)?;
    /// let usage = table.snapshot()?.memory_usage();
    /// assert_eq!(usage.files, usage.total() - usage.tombstones - usage.other);
    /// # Ok(())
    /// # }
    /// ```
    pub fn memory_usage(&self) -> MemoryUsage {
        self.inner.memory_usage()
    }

    /// Tombstones still within `delta.deletedFileRetentionDuration` of `now_ms`.
    pub fn unexpired_tombstones(&self, now_ms: i64) -> impl Iterator<Item = &Remove> {
        self.inner.unexpired_tombstones(now_ms)
    }

    /// The reconciled state the snapshot was replayed into (files, tombstones, application
    /// transactions, domains).
    pub fn state(&self) -> &TableState {
        self.inner.state()
    }

    /// The table root URI.
    pub fn root(&self) -> &TableRoot {
        self.inner.root()
    }

    /// The store holding the table.
    pub fn store(&self) -> &StoreRef {
        self.inner.store()
    }

    /// The store, as a trait object reference.
    pub fn store_ref(&self) -> &dyn ObjectStore {
        self.inner.store_ref()
    }

    /// The `commitInfo` of this version, when its commit file was read.
    pub fn commit_info(&self) -> Option<&CommitInfo> {
        self.inner.commit_info()
    }

    /// The version of the checkpoint the snapshot was loaded from, if any.
    pub fn checkpoint_version(&self) -> Option<Version> {
        self.inner.checkpoint_version()
    }

    /// The latest version recorded for an application's idempotent writes, honouring
    /// `delta.setTransactionRetentionDuration` relative to `now_ms` (an expired entry says
    /// nothing).
    pub fn app_transaction_version(&self, app_id: &str, now_ms: i64) -> Option<i64> {
        self.inner.app_transaction_version(app_id, now_ms)
    }

    /// The live metadata domains.
    pub fn domains(&self) -> impl Iterator<Item = &DomainMetadata> {
        self.inner.domains()
    }

    /// What loading this snapshot cost (requests, files read, time).
    pub fn report(&self) -> &SnapshotReport {
        self.inner.report()
    }

    /// The mvcc layer's snapshot, for code of this crate that hands it to a lower layer.
    pub(crate) fn inner(&self) -> &alluvium_mvcc::Snapshot {
        &self.inner
    }

    /// The mvcc layer's snapshot (feature `internal-api`), whose interface and errors are
    /// the lower crate's and change without notice.
    #[cfg(feature = "internal-api")]
    pub fn as_mvcc(&self) -> &alluvium_mvcc::Snapshot {
        &self.inner
    }
}

impl From<alluvium_mvcc::Snapshot> for Snapshot {
    fn from(inner: alluvium_mvcc::Snapshot) -> Snapshot {
        Snapshot {
            inner: Arc::new(inner),
        }
    }
}

impl From<Arc<alluvium_mvcc::Snapshot>> for Snapshot {
    fn from(inner: Arc<alluvium_mvcc::Snapshot>) -> Snapshot {
        Snapshot { inner }
    }
}

/// The mvcc layer's snapshot behind a facade snapshot (a clone of shared state), for code
/// that depends on `alluvium-mvcc` itself (tests and benches committing through the lower
/// layer). An embedder of the facade alone cannot name the target type.
impl From<&Snapshot> for alluvium_mvcc::Snapshot {
    fn from(snapshot: &Snapshot) -> alluvium_mvcc::Snapshot {
        (*snapshot.inner).clone()
    }
}
