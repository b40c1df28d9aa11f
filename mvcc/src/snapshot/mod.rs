//! Immutable snapshots (SPEC.md §8).

mod cache;
mod load;
mod timestamps;
mod version_text;

use std::sync::Arc;

use alluvium_expr::{Expr, FileFilter, Predicate, StateMatches};
use alluvium_storage::{ObjectStore, RequestCounts, StoreRef};
use alluvium_txlog::actions::{CommitInfo, DomainMetadata, Metadata, Protocol, Remove};
use alluvium_txlog::column_mapping::ColumnMappingMode;
use alluvium_txlog::path::TableRoot;
use alluvium_txlog::properties::TableProperties;
use alluvium_txlog::replay::TableState;
use alluvium_txlog::schema::StructType;
use alluvium_txlog::{FileRef, Version};

pub use cache::{Versioned, VersionedCache};
pub use timestamps::{CommitTimestamp, commit_timestamps};

/// Which version of the table to load. Also parsed from text (`FromStr`: `latest`, a
/// version number, or a time; see `version_text.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VersionSpec {
    /// The latest version.
    Latest,
    /// A specific version.
    Version(Version),
    /// The latest version committed at or before this time (milliseconds since the epoch).
    Timestamp(i64),
}

/// What loading a snapshot cost.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SnapshotReport {
    /// LIST requests against the log.
    pub list_calls: u32,
    /// HEAD requests for expected log files (a refresh on a store where listing is
    /// expensive probes for the next versions instead).
    pub head_calls: u32,
    /// Commit files read.
    pub commits_read: u32,
    /// Of the commit files read, those read on the listing's task while this thread read
    /// the hinted checkpoint (a short tail, or the checkpoint version's own commit).
    pub commits_read_ahead: u32,
    /// Log compaction files read in place of the commits they cover.
    pub compactions_read: u32,
    /// Log compaction files that could not be read (the commits were read instead).
    pub skipped_compactions: Vec<String>,
    /// Checkpoint (and sidecar) files read.
    pub checkpoint_files_read: u32,
    /// Checkpoints that could not be read and were skipped, with the reason.
    pub skipped_checkpoints: Vec<String>,
    /// Wall time of the whole load in microseconds.
    pub load_micros: u64,
    /// Storage requests made during the load, by kind, as the store counts them
    /// ([`ObjectStore::request_counts`]: HTTP requests on object stores, zeros on stores
    /// that do not count). The difference of two readings of the store's counters, so it
    /// includes the requests of other operations running on the same store meanwhile.
    pub requests: RequestCounts,
}

/// The table at one version. Immutable; cheap to clone (shared state).
#[derive(Debug, Clone)]
pub struct Snapshot {
    store: StoreRef,
    root: TableRoot,
    state: Arc<TableState>,
    schema: Arc<StructType>,
    column_mapping: ColumnMappingMode,
    checkpoint_version: Option<Version>,
    timestamp_ms: i64,
    commit_info: Option<Arc<CommitInfo>>,
    report: SnapshotReport,
}

impl Snapshot {
    /// Loads a version of the table stored in `store`.
    ///
    /// # Errors
    /// [`alluvium_txlog::LogError::TableNotFound`] if there is no log,
    /// `VersionNotFound` / `TimestampOutOfRange` if the version does not exist or cannot be
    /// reconstructed, `UnsupportedFeature` / `UnsupportedProtocolVersion` if alluvium cannot
    /// read the table, and the log's corruption errors naming the file.
    pub fn load(store: StoreRef, spec: VersionSpec) -> crate::Result<Snapshot> {
        load::load(store, spec)
    }

    /// The latest version of the table, built from this snapshot by applying only the
    /// commits after it (one listing, then those commits; no checkpoint is read). Returns a
    /// clone of `self` when nothing was committed since.
    ///
    /// # Errors
    /// As [`Snapshot::load`]; `NonContiguousLog` if a commit after this version is missing.
    pub fn refresh(&self) -> crate::Result<Snapshot> {
        load::refresh(self)
    }

    /// The snapshot of `version`, a later version than this one, built from it by applying
    /// only the commits after it up to `version` (no checkpoint is read): what
    /// [`Snapshot::load`] gives for that version, for the cost of those commits.
    ///
    /// # Errors
    /// `VersionNotFound` if `version` is below this one or beyond the latest;
    /// `NonContiguousLog` if a commit between is missing.
    pub fn advance_to(&self, version: Version) -> crate::Result<Snapshot> {
        load::refresh_to(self, Some(version))
    }

    /// The next version, whose commit this process has just written as `actions`, without
    /// reading it back (a group commit publishes it for the next writers; SPEC.md §35).
    /// `file_time` stands for the commit file's modification time (ignored where
    /// in-commit timestamps apply).
    ///
    /// # Errors
    /// As [`Snapshot::refresh`].
    pub(crate) fn advance(
        &self,
        actions: Vec<alluvium_txlog::actions::Action>,
        file_time: i64,
    ) -> crate::Result<Snapshot> {
        load::advance(self, actions, file_time)
    }

    /// The store holding the table.
    pub fn store(&self) -> &StoreRef {
        &self.store
    }

    /// The store, as a trait object reference.
    pub fn store_ref(&self) -> &dyn ObjectStore {
        self.store.as_ref()
    }

    /// The table root URI.
    pub fn root(&self) -> &TableRoot {
        &self.root
    }

    /// Where the data file an `add` or `remove` names by `path` lives: a path inside the
    /// table, or an absolute URI outside it (the protocol allows both).
    ///
    /// # Errors
    /// [`alluvium_txlog::LogError::InvalidAction`] for a path that does not decode or escapes
    /// the table root.
    pub fn file_location(&self, path: &str) -> crate::Result<alluvium_storage::FileLocation> {
        Ok(alluvium_txlog::path::resolve(path, &self.root)?)
    }

    /// [`file_location`](Self::file_location) borrowing `path` where it can.
    ///
    /// # Errors
    /// As [`file_location`](Self::file_location).
    pub fn file_location_ref<'a>(
        &self,
        path: &'a str,
    ) -> crate::Result<alluvium_storage::FileLocationRef<'a>> {
        Ok(alluvium_txlog::path::resolve_ref(path, &self.root)?)
    }

    /// The version.
    pub fn version(&self) -> Version {
        self.state.version()
    }

    /// The reconciled state.
    pub fn state(&self) -> &TableState {
        &self.state
    }

    /// The protocol.
    pub fn protocol(&self) -> &Protocol {
        self.state.protocol()
    }

    /// The metadata.
    pub fn metadata(&self) -> &Metadata {
        self.state.metadata()
    }

    /// The logical schema.
    pub fn schema(&self) -> &StructType {
        &self.schema
    }

    /// Refuses to write to or delete from this table when it needs a writer protocol
    /// version or writer feature alluvium does not support. Every operation that writes or
    /// deletes (commits, data writes, checkpoints, log cleanup, OPTIMIZE, VACUUM) calls this
    /// before touching anything.
    ///
    /// # Errors
    /// [`crate::MvccError::Log`] with the unsupported version or feature.
    pub fn check_writable(&self) -> crate::Result<()> {
        alluvium_txlog::features::check_write_supported(
            self.protocol(),
            self.metadata(),
            self.schema(),
        )?;
        // A clustered table: its domain readable, not partitioned, clustering columns
        // with statistics (PROTOCOL.md "Writer Requirements for Clustered Table").
        alluvium_txlog::clustering::check_writable(
            self.protocol(),
            self.metadata(),
            self.schema(),
            |d| self.state.domains().get(d),
        )?;
        Ok(())
    }

    /// The partition columns (logical names).
    pub fn partition_columns(&self) -> &[String] {
        &self.state.metadata().partition_columns
    }

    /// The table properties.
    pub fn properties(&self) -> TableProperties<'_> {
        TableProperties(&self.state.metadata().configuration)
    }

    /// The column-mapping mode in force.
    pub fn column_mapping(&self) -> ColumnMappingMode {
        self.column_mapping
    }

    /// The live files.
    pub fn files(&self) -> impl Iterator<Item = FileRef<'_>> {
        self.state.files()
    }

    /// `expr` bound as a predicate to this snapshot's schema, partition columns and
    /// column-mapping mode: what [`files_matching`](Self::files_matching) and the readers
    /// of this snapshot's files take.
    ///
    /// # Errors
    /// The expression's errors: unknown columns, type mismatches, a non-boolean filter.
    pub fn bind(&self, expr: &Expr) -> alluvium_expr::Result<Predicate> {
        alluvium_expr::bind(
            expr,
            self.schema(),
            self.partition_columns(),
            self.column_mapping(),
        )
    }

    /// The live files `pred` may match, in [`files`](Self::files) order, each with the
    /// statistics that judge it: data skipping on partition values and statistics, over
    /// all the files at once ([`FileFilter::matching_in`]). The statistics of the columns
    /// `pred` reads are parsed into typed columns once per loaded file set and kept, so
    /// later queries of this snapshot, and of snapshots refreshed from it, parse only the
    /// files added since. A file is dropped only when no row of it can satisfy `pred`.
    pub fn files_matching(&self, pred: &Predicate) -> StateMatches<'_> {
        FileFilter::new(pred).matching_in(&self.state)
    }

    /// Number of live files.
    pub fn num_files(&self) -> usize {
        self.state.num_files()
    }

    /// An estimate of the memory this snapshot's state holds, by part (files, tombstones,
    /// the rest). Snapshots derived by refresh share their file set's base, and each
    /// reports it whole. Walks every file once.
    pub fn memory_usage(&self) -> alluvium_txlog::memory::MemoryUsage {
        self.state.memory_usage()
    }

    /// Tombstones still within `delta.deletedFileRetentionDuration` of `now_ms`.
    pub fn unexpired_tombstones(&self, now_ms: i64) -> impl Iterator<Item = &Remove> {
        let cutoff = now_ms.saturating_sub(self.properties().deleted_file_retention_ms());
        self.state.unexpired_tombstones(cutoff)
    }

    /// The latest version recorded for an application's idempotent writes, honouring
    /// `delta.setTransactionRetentionDuration` relative to `now_ms`.
    pub fn app_transaction_version(&self, app_id: &str, now_ms: i64) -> Option<i64> {
        let txn = self.state.app_transactions().get(app_id)?;
        if let Some(retention) = self.properties().set_transaction_retention_ms() {
            // An expired entry no longer says anything (Spark drops it; an entry without
            // lastUpdated never expires here, as in the kernels).
            if txn
                .last_updated
                .is_some_and(|t| t <= now_ms.saturating_sub(retention))
            {
                return None;
            }
        }
        Some(txn.version)
    }

    /// The live domains.
    pub fn domains(&self) -> impl Iterator<Item = &DomainMetadata> {
        self.state.domains().values()
    }

    /// The version of the checkpoint the snapshot was loaded from.
    pub fn checkpoint_version(&self) -> Option<Version> {
        self.checkpoint_version
    }

    /// The commit timestamp of this version: its in-commit timestamp when the table has
    /// them, else the modification time of its commit file.
    pub fn timestamp_ms(&self) -> i64 {
        self.timestamp_ms
    }

    /// The `commitInfo` of this version, when its commit file was read.
    pub fn commit_info(&self) -> Option<&CommitInfo> {
        self.commit_info.as_deref()
    }

    /// What loading cost.
    pub fn report(&self) -> &SnapshotReport {
        &self.report
    }
}
