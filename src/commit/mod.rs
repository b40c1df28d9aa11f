//! The tail every write shares, from the snapshot it reads to the commit and what follows
//! it: the options of writes ([`WriteOptions`]), idempotent writes ([`AppTransaction`],
//! [`outcome_if_done`]), what an operation returns ([`WriteOutcome`], [`DmlOutcome`] with
//! its numeric metrics), schema evolution's metaData ([`evolve_schema`]), and committing
//! ([`finish`], [`finish_dml`]): in a group with other appends ([`group`]) or alone, then
//! the post-commit policy ([`policy`]: checkpoint, log cleanup, auto-compaction).
//!
//! It owns no operation and must not know any: nothing here imports `rows` or `ops`, which
//! build on it (checked by `.ci/check_cycles.py`).

mod group;
mod policy;

use std::collections::BTreeMap;

use alluvium_mvcc::{RetryPolicy, Transaction};
use alluvium_txlog::column_mapping::{ColumnMappingMode, assign_column_mapping};
use alluvium_txlog::properties::{COLUMN_MAPPING_MAX_ID, TableProperties};
use alluvium_txlog::schema::{StructField, StructType};

use crate::report::CommitSummary;
use crate::{Error, Result, Snapshot, Table};

/// Options of write operations. Built from `WriteOptions::default()` with the `with_`
/// setters (its fields stay public to read and assign); `#[non_exhaustive]`, so an option
/// a later version adds is no breaking change.
///
/// ```
/// use alluvium::{AppTransaction, WriteOptions};
/// let options = WriteOptions::default()
///     .with_app_transaction(AppTransaction::new("ingest", 7))
///     .with_merge_schema(true);
/// assert_eq!(options.app_transaction.map(|a| a.version), Some(7));
/// ```
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct WriteOptions {
    /// Add columns present in the data but not in the table (as nullable columns).
    pub merge_schema: bool,
    /// Idempotent write: skip if this application already committed this version or a later
    /// one; record it otherwise.
    pub app_transaction: Option<AppTransaction>,
    /// Target size of data files (default: `delta.targetFileSize`, else 128 MiB).
    pub target_file_size: Option<u64>,
    /// The commit loop's retry policy.
    pub retry: Option<RetryPolicy>,
    /// `commitInfo.userMetadata`.
    pub user_metadata: Option<String>,
    /// Fields of the embedder's own in `commitInfo` (deltalake's
    /// `CommitProperties.custom_metadata`); names the engine writes itself (`operation`,
    /// `timestamp`, `txnId`, ...) are refused before anything is written.
    pub commit_info: std::collections::BTreeMap<String, serde_json::Value>,
    /// Run the operation against this snapshot instead of the latest one: the commit is then
    /// checked against every version committed since (pinning a read version).
    pub read_snapshot: Option<Snapshot>,
    /// Write every deletion vector to a DV file, as Delta Spark does. By default a DV whose
    /// bitmap takes at most [`INLINE_DV_MAX_BYTES`](alluvium_txlog::dv::INLINE_DV_MAX_BYTES)
    /// goes inline in the log instead (SPEC §21).
    pub dv_files_only: bool,
    /// The Parquet codec of the data files the operation writes (the new rows of an append,
    /// overwrite, replaceWhere or create with data; DELETE's, UPDATE's and MERGE's new and
    /// rewritten files; change-data files), named as `delta.parquet.compression.codec`
    /// names it (`zstd`, `zstd(9)`, `gzip(6)`, `brotli`, `lz4_raw`, `snappy`,
    /// `uncompressed`), in place of that table property for this operation only:
    /// deltalake's `WriterProperties(compression=...)`. Refused before anything is written
    /// when it names no codec alluvium writes. OPTIMIZE takes its own
    /// (`OptimizeOptions::compression`).
    pub compression: Option<String>,
}

impl WriteOptions {
    /// Sets [`merge_schema`](Self::merge_schema).
    #[must_use]
    pub fn with_merge_schema(mut self, merge_schema: bool) -> Self {
        self.merge_schema = merge_schema;
        self
    }

    /// Sets [`app_transaction`](Self::app_transaction) (an `AppTransaction`, or an
    /// `Option` of one).
    #[must_use]
    pub fn with_app_transaction(mut self, app: impl Into<Option<AppTransaction>>) -> Self {
        self.app_transaction = app.into();
        self
    }

    /// Sets [`target_file_size`](Self::target_file_size) (bytes, or an `Option`).
    #[must_use]
    pub fn with_target_file_size(mut self, bytes: impl Into<Option<u64>>) -> Self {
        self.target_file_size = bytes.into();
        self
    }

    /// Sets [`retry`](Self::retry) (a policy, or an `Option` of one).
    #[must_use]
    pub fn with_retry(mut self, retry: impl Into<Option<RetryPolicy>>) -> Self {
        self.retry = retry.into();
        self
    }

    /// Sets [`user_metadata`](Self::user_metadata).
    #[must_use]
    pub fn with_user_metadata(mut self, text: impl Into<String>) -> Self {
        self.user_metadata = Some(text.into());
        self
    }

    /// Sets [`commit_info`](Self::commit_info), replacing the fields set before.
    #[must_use]
    pub fn with_commit_info(
        mut self,
        fields: std::collections::BTreeMap<String, serde_json::Value>,
    ) -> Self {
        self.commit_info = fields;
        self
    }

    /// Sets [`read_snapshot`](Self::read_snapshot) (a snapshot, or an `Option` of one).
    #[must_use]
    pub fn with_read_snapshot(mut self, snapshot: impl Into<Option<Snapshot>>) -> Self {
        self.read_snapshot = snapshot.into();
        self
    }

    /// Sets [`compression`](Self::compression).
    #[must_use]
    pub fn with_compression(mut self, codec: impl Into<String>) -> Self {
        self.compression = Some(codec.into());
        self
    }

    /// Sets [`dv_files_only`](Self::dv_files_only).
    #[must_use]
    pub fn with_dv_files_only(mut self, dv_files_only: bool) -> Self {
        self.dv_files_only = dv_files_only;
        self
    }

    /// The largest serialized DV written inline under these options (0: none).
    pub(crate) fn inline_dv_max_bytes(&self) -> usize {
        if self.dv_files_only {
            0
        } else {
            alluvium_txlog::dv::INLINE_DV_MAX_BYTES
        }
    }
}

/// An application's idempotent-write marker (Delta's `txn` action): the application id
/// and the version of its data that a write carries. A write whose application already
/// recorded this version or a later one is skipped.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AppTransaction {
    /// The application id (`txn.appId`).
    pub app_id: String,
    /// The application's version of the data written (`txn.version`).
    pub version: i64,
}

impl AppTransaction {
    /// The marker of `app_id` at `version`.
    pub fn new(app_id: impl Into<String>, version: i64) -> AppTransaction {
        AppTransaction {
            app_id: app_id.into(),
            version,
        }
    }
}

/// What a write did.
#[derive(Debug, Clone)]
pub enum WriteOutcome {
    /// Committed as a new version (boxed: the report is large next to `Skipped`).
    Committed(Box<CommitSummary>),
    /// Nothing written: the application had already committed this version (or a later one).
    Skipped {
        /// The application id.
        app_id: String,
        /// The version recorded for it in the table.
        recorded_version: i64,
        /// The table version read.
        table_version: u64,
    },
}

impl WriteOutcome {
    /// The commit report, if committed.
    pub fn report(&self) -> Option<&CommitSummary> {
        match self {
            WriteOutcome::Committed(r) => Some(r),
            WriteOutcome::Skipped { .. } => None,
        }
    }

    /// The commit report of a write made with no application transaction, which is never
    /// skipped: for the calls that take no options and return a [`CommitSummary`].
    /// A skip (impossible without an application transaction) is reported as an error
    /// naming `operation`, never a panic.
    pub(crate) fn into_committed(self, operation: &str) -> Result<CommitSummary> {
        match self {
            WriteOutcome::Committed(summary) => Ok(*summary),
            WriteOutcome::Skipped { app_id, .. } => Err(Error::InvalidArgument(format!(
                "{operation} was skipped for application {app_id} without being asked to be idempotent"
            ))),
        }
    }
}

/// What a DELETE, UPDATE or MERGE did: the commit (or the skip of an idempotent write) and
/// the metrics its commit records as `operationMetrics`, by Delta's names (DELETE:
/// `numDeletedRows`, `numCopiedRows`; UPDATE: `numUpdatedRows`; MERGE:
/// `numTargetRowsInserted`, `numTargetRowsUpdated`, `numTargetRowsDeleted`,
/// `numSourceRows`; all: `numAddedFiles`/`numTargetFilesAdded`,
/// `numRemovedFiles`/`numTargetFilesRemoved`, `numDeletionVectorsAdded`,
/// `executionTimeMs`, ...).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DmlOutcome {
    /// The commit, or why nothing was committed.
    pub outcome: WriteOutcome,
    /// The operation's metrics by name (empty when skipped).
    pub metrics: BTreeMap<String, u64>,
}

impl DmlOutcome {
    pub(crate) fn skipped(outcome: WriteOutcome) -> DmlOutcome {
        DmlOutcome {
            outcome,
            metrics: BTreeMap::new(),
        }
    }

    /// The metric `name`, if the operation recorded it.
    pub fn metric(&self, name: &str) -> Option<u64> {
        self.metrics.get(name).copied()
    }

    /// The commit report, if the operation committed.
    pub fn report(&self) -> Option<&crate::CommitSummary> {
        self.outcome.report()
    }

    /// The version committed, if the operation committed.
    pub fn version(&self) -> Option<u64> {
        self.report().map(|r| r.version)
    }
}

impl From<DmlOutcome> for WriteOutcome {
    fn from(d: DmlOutcome) -> WriteOutcome {
        d.outcome
    }
}

/// Metrics being collected, in the order they are set.
#[derive(Debug, Default)]
pub(crate) struct MetricSet(pub(crate) Vec<(&'static str, u64)>);

impl MetricSet {
    pub(crate) fn set(&mut self, name: &'static str, value: u64) {
        self.0.push((name, value));
    }
}

impl Table {
    /// The snapshot a write reads, once the store is known to let this writer commit
    /// (put-if-absent or single-writer mode) and the table's writer features are supported;
    /// both are checked before any data file is uploaded, so a refused write leaves nothing
    /// behind.
    pub(crate) fn read_snapshot(&self, options: &WriteOptions) -> Result<Snapshot> {
        check_options(options)?;
        alluvium_mvcc::transaction::check_can_commit(self.store().as_ref())?;
        let snapshot = match &options.read_snapshot {
            Some(s) => s.clone(),
            None => self.snapshot()?,
        };
        // Before any data file is uploaded: a table with writer features alluvium does not
        // support is refused whole, not after the upload (which would leave orphans).
        snapshot.check_writable()?;
        Ok(snapshot)
    }
}

/// Schema evolution: adds `new_fields` to `schema` and stages the table's new metaData in
/// `txn`, with column-mapping ids and physical names assigned (and the max id advanced) when
/// the table maps columns. Nothing happens when there are no new fields.
pub(crate) fn evolve_schema(
    snapshot: &Snapshot,
    txn: &mut Transaction,
    schema: &mut StructType,
    new_fields: Vec<StructField>,
) {
    if new_fields.is_empty() {
        return;
    }
    schema.fields.extend(new_fields);
    let mut md = snapshot.metadata().clone();
    if snapshot.column_mapping() != ColumnMappingMode::None {
        let max = TableProperties(&md.configuration).column_mapping_max_id();
        let max = assign_column_mapping(schema, max);
        md.configuration
            .insert(COLUMN_MAPPING_MAX_ID.into(), max.to_string());
    }
    md.schema_string = schema.to_json();
    txn.set_metadata(md);
}

/// The options every write applies to its transaction: `userMetadata`, the embedder's
/// `commitInfo` fields (checked by [`check_options`]), the retry policy.
pub(crate) fn set_options(txn: &mut Transaction, options: &WriteOptions) {
    if let Some(u) = &options.user_metadata {
        txn.set_user_metadata(u.clone());
    }
    for (k, v) in &options.commit_info {
        // Reserved names were refused by `check_options` before the write began.
        let _ = txn.set_commit_info_field(k, v.clone());
    }
    if let Some(p) = options.retry {
        txn.set_retry_policy(p);
    }
}

/// Refuses options that could only fail later: `commitInfo` fields the engine writes.
pub(crate) fn check_options(options: &WriteOptions) -> Result<()> {
    check_codec(options.compression.as_deref())?;
    check_commit_info(&options.commit_info)
}

/// Refuses a codec name alluvium does not write (an operation's `compression`), before
/// anything is written.
pub(crate) fn check_codec(codec: Option<&str>) -> Result<()> {
    match codec {
        Some(codec) if alluvium_datafile::sink::parse_codec(codec).is_none() => {
            Err(Error::InvalidArgument(format!(
                "compression {codec:?} is not a codec alluvium writes: snappy, zstd, gzip, brotli, lz4_raw or uncompressed (zstd, gzip and brotli take a level: zstd(9))"
            )))
        }
        _ => Ok(()),
    }
}

/// `configuration` with the write's codec ([`WriteOptions::compression`]) in place of the
/// table's: what the data files of a write of rows are written under (never committed).
pub(crate) fn with_write_codec(
    mut configuration: std::collections::HashMap<String, String>,
    options: &WriteOptions,
) -> std::collections::HashMap<String, String> {
    if let Some(codec) = &options.compression {
        configuration.insert(
            alluvium_txlog::properties::PARQUET_COMPRESSION_CODEC.into(),
            codec.clone(),
        );
    }
    configuration
}

/// Refuses embedder `commitInfo` fields the engine writes itself (`operation`, ...), before
/// an operation writes anything.
pub(crate) fn check_commit_info(
    fields: &std::collections::BTreeMap<String, serde_json::Value>,
) -> Result<()> {
    match alluvium_mvcc::transaction::reserved_commit_info_key(fields.keys().map(String::as_str)) {
        Some(k) => Err(Error::InvalidArgument(format!(
            "commitInfo.{k} is written by the engine; choose another name for your field"
        ))),
        None => Ok(()),
    }
}

/// Idempotent writes: `Some(Skipped)` when the application already committed this version;
/// otherwise records the application's new version in the transaction.
pub(crate) fn outcome_if_done(
    txn: &mut Transaction,
    snapshot: &Snapshot,
    options: &WriteOptions,
) -> Option<WriteOutcome> {
    set_options(txn, options);
    let AppTransaction { app_id, version } = options.app_transaction.as_ref()?;
    let now = snapshot.store().now_ms();
    if let Some(recorded) = txn.app_version(app_id, now)
        && recorded >= *version
    {
        return Some(WriteOutcome::Skipped {
            app_id: app_id.clone(),
            recorded_version: recorded,
            table_version: snapshot.version(),
        });
    }
    txn.set_app_transaction(app_id, *version, now);
    None
}

/// Commits a write: in a group with the handle's other appends when it may join one
/// (SPEC.md §35), else alone; either way followed by the post-commit policy.
pub(crate) fn finish(
    table: &Table,
    txn: Transaction,
    options: &WriteOptions,
) -> Result<WriteOutcome> {
    if table.joins_group(&txn, options) {
        return table.commit_in_group(txn);
    }
    Ok(WriteOutcome::Committed(Box::new(
        table.commit_with_policy(txn)?,
    )))
}

/// [`finish`] for DELETE, UPDATE and MERGE: records `metrics` in the commit's
/// `operationMetrics` and returns them, numeric, in the [`DmlOutcome`].
pub(crate) fn finish_dml(
    table: &Table,
    mut txn: Transaction,
    options: &WriteOptions,
    metrics: MetricSet,
) -> Result<DmlOutcome> {
    let mut map = BTreeMap::new();
    for (k, v) in metrics.0 {
        txn.set_metric(k, v);
        map.insert(k.to_string(), v);
    }
    Ok(DmlOutcome {
        outcome: finish(table, txn, options)?,
        metrics: map,
    })
}
