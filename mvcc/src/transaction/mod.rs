//! Transactions (SPEC.md §7): what a writer read, what it changes, and the commit loop that
//! lands it as the next version.
//!
//! 1. Build a transaction on the snapshot it read ([`Transaction::new`]) or for a new table
//!    ([`Transaction::create`]).
//! 2. Record reads: predicates ([`read_predicate`](Transaction::read_predicate)), files
//!    ([`read_file`](Transaction::read_file)), the whole table, application versions
//!    ([`app_version`](Transaction::app_version)).
//! 3. Stage changes: files added and removed, metadata, protocol, app transactions, domains.
//! 4. [`commit`](Transaction::commit): put-if-absent of `<read version + 1>.json`; on losing,
//!    read the winners once, check conflicts, rebase and retry under the time budget; settle
//!    unknown outcomes by reading the version back and comparing `txnId`. On a table with
//!    row tracking every attempt assigns the new files' row ids and commit versions
//!    (`row_ids`, SPEC.md §27).

pub(crate) mod commit;
pub(crate) mod conflict;
mod report;
mod row_ids;

use std::collections::HashSet;
use std::time::Duration;

use alluvium_expr::Predicate;
use alluvium_storage::{RequestCounts, StoreRef};
use alluvium_txlog::FileRef;
use alluvium_txlog::actions::{
    Add, Cdc, DomainMetadata, Metadata, Protocol, Remove, SetTransaction,
};
use serde_json::{Map, Value};

pub use commit::{CHANGE_DATA_COLUMNS, check_can_commit, check_change_data_columns};
pub use report::CommitReport;

use crate::retry::RetryPolicy;
use crate::snapshot::Snapshot;

/// The `commitInfo` fields the engine writes itself: an embedder's own fields
/// ([`Transaction::set_commit_info_field`]) may not use these names.
pub const RESERVED_COMMIT_INFO_KEYS: &[&str] = &[
    "timestamp",
    alluvium_txlog::actions::CommitInfo::IN_COMMIT_TIMESTAMP,
    "operation",
    "operationParameters",
    "readVersion",
    "isolationLevel",
    "isBlindAppend",
    "operationMetrics",
    "userMetadata",
    "engineInfo",
    "txnId",
];

/// The first of `names` the engine writes itself ([`RESERVED_COMMIT_INFO_KEYS`]), if any:
/// what an operation checks before it writes anything, so that an embedder's field cannot
/// fail a commit late.
pub fn reserved_commit_info_key<'a>(names: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    names
        .into_iter()
        .find(|name| RESERVED_COMMIT_INFO_KEYS.contains(name))
}

/// A transaction being built. Dropping it without committing has no effect on the table.
#[derive(Debug)]
pub struct Transaction {
    store: StoreRef,
    base: Option<Snapshot>,
    operation: String,
    parameters: Map<String, Value>,
    metrics: Map<String, Value>,
    metadata: Option<Metadata>,
    protocol: Option<Protocol>,
    adds: Vec<Add>,
    removes: Vec<Remove>,
    cdcs: Vec<Cdc>,
    txns: Vec<SetTransaction>,
    domains: Vec<DomainMetadata>,
    predicates: Vec<Predicate>,
    whole_table: bool,
    read_files: Vec<(
        String,
        Option<alluvium_txlog::actions::DeletionVectorDescriptor>,
    )>,
    read_app_ids: HashSet<String>,
    txn_id: String,
    policy: RetryPolicy,
    write_data: Duration,
    user_metadata: Option<String>,
    /// The embedder's own `commitInfo` fields ([`Transaction::set_commit_info_field`]).
    custom_commit_info: Map<String, Value>,
    /// The store's request counters when the transaction was created (see
    /// [`CommitReport::requests`]).
    requests_at_start: RequestCounts,
    discard_on_failure: bool,
    /// The new files' names are not durable yet ([`Transaction::set_names_deferred`]).
    names_deferred: bool,
}

impl Transaction {
    /// A transaction on `snapshot`, which is what it read; it commits at a later version.
    pub fn new(snapshot: &Snapshot, operation: impl Into<String>) -> Self {
        Self::build(
            snapshot.store().clone(),
            Some(snapshot.clone()),
            operation.into(),
        )
    }

    /// A transaction that creates the table (version 0) in `store`. It must set metadata
    /// and protocol.
    pub fn create(store: StoreRef, operation: impl Into<String>) -> Self {
        Self::build(store, None, operation.into())
    }

    fn build(store: StoreRef, base: Option<Snapshot>, operation: String) -> Self {
        let requests_at_start = store.request_counts();
        Transaction {
            requests_at_start,
            store,
            base,
            operation,
            parameters: Map::new(),
            metrics: Map::new(),
            metadata: None,
            protocol: None,
            adds: Vec::new(),
            removes: Vec::new(),
            cdcs: Vec::new(),
            txns: Vec::new(),
            domains: Vec::new(),
            predicates: Vec::new(),
            whole_table: false,
            read_files: Vec::new(),
            read_app_ids: HashSet::new(),
            txn_id: alluvium_storage::ids::new_uuid().to_string(),
            policy: RetryPolicy::default(),
            write_data: Duration::ZERO,
            user_metadata: None,
            custom_commit_info: Map::new(),
            discard_on_failure: true,
            names_deferred: false,
        }
    }

    /// The snapshot the transaction read (none when creating the table).
    pub fn read_snapshot(&self) -> Option<&Snapshot> {
        self.base.as_ref()
    }

    /// The transaction's unique id, written as `commitInfo.txnId`.
    pub fn txn_id(&self) -> &str {
        &self.txn_id
    }

    /// Sets an operation parameter shown in `commitInfo.operationParameters`.
    pub fn set_parameter(&mut self, key: &str, value: impl Into<Value>) {
        self.parameters.insert(key.to_string(), value.into());
    }

    /// Sets an operation metric shown in `commitInfo.operationMetrics`.
    pub fn set_metric(&mut self, key: &str, value: impl ToString) {
        self.metrics
            .insert(key.to_string(), Value::String(value.to_string()));
    }

    /// Sets `commitInfo.userMetadata`.
    pub fn set_user_metadata(&mut self, text: impl Into<String>) {
        self.user_metadata = Some(text.into());
    }

    /// Adds a field of the embedder's own to the commit's `commitInfo` (deltalake's
    /// `CommitProperties.custom_metadata`, Delta Spark's `commitInfo` extensions). The
    /// fields the engine writes itself ([`RESERVED_COMMIT_INFO_KEYS`]) are refused.
    ///
    /// # Errors
    /// [`MvccError::InvalidOperation`](crate::MvccError::InvalidOperation) for a reserved
    /// key.
    pub fn set_commit_info_field(&mut self, key: &str, value: Value) -> crate::Result<()> {
        if RESERVED_COMMIT_INFO_KEYS.contains(&key) {
            return Err(crate::MvccError::InvalidOperation(format!(
                "commitInfo.{key} is written by the engine and cannot be set"
            )));
        }
        self.custom_commit_info.insert(key.to_string(), value);
        Ok(())
    }

    /// Whether a definite failure deletes the data files this transaction added (the
    /// default). Callers that can reuse some of the files after a conflict (OPTIMIZE retries
    /// the bins a conflict did not touch) turn it off and delete what they drop themselves.
    pub fn set_discard_on_failure(&mut self, discard: bool) {
        self.discard_on_failure = discard;
    }

    /// Says that the new data and change-data files were written with
    /// [`ObjectStore::put_new_deferred`](alluvium_storage::ObjectStore::put_new_deferred):
    /// their names are not durable yet, and the commit makes them so
    /// ([`ObjectStore::sync_deferred`](alluvium_storage::ObjectStore::sync_deferred)) before
    /// it writes the commit file.
    pub fn set_names_deferred(&mut self) {
        self.names_deferred = true;
    }

    /// Whether the new files' names are still to be made durable.
    pub(crate) fn names_deferred(&self) -> bool {
        self.names_deferred
    }

    /// Overrides the retry policy.
    pub fn set_retry_policy(&mut self, policy: RetryPolicy) {
        self.policy = policy;
    }

    /// Adds time spent writing data files (reported in the commit report).
    pub fn add_write_time(&mut self, d: Duration) {
        self.write_data += d;
    }

    /// Records that the transaction's result depends on the rows matching `predicate`.
    pub fn read_predicate(&mut self, predicate: Predicate) {
        self.predicates.push(predicate);
    }

    /// Records that the transaction's result depends on the whole table.
    pub fn read_whole_table(&mut self) {
        self.whole_table = true;
    }

    /// Records that the transaction read this file (it must still exist at commit).
    pub fn read_file<'a>(&mut self, file: impl Into<FileRef<'a>>) {
        let file = file.into();
        self.read_files
            .push((file.path().to_string(), file.deletion_vector().cloned()));
    }

    /// The version last committed by `app_id` (idempotent writes), recorded as read so that
    /// a concurrent commit by the same application conflicts.
    pub fn app_version(&mut self, app_id: &str, now_ms: i64) -> Option<i64> {
        self.read_app_ids.insert(app_id.to_string());
        self.base
            .as_ref()
            .and_then(|s| s.app_transaction_version(app_id, now_ms))
    }

    /// Adds a file.
    pub fn add_file(&mut self, add: Add) {
        self.adds.push(add);
    }

    /// Removes a file.
    pub fn remove_file(&mut self, remove: Remove) {
        self.removes.push(remove);
    }

    /// Adds a change-data file (`cdc`, PROTOCOL.md "Add CDC File"): written before the
    /// commit, read only by change-data-feed readers, deleted with the data files when the
    /// commit fails. When a commit has any, they must hold all of its row changes.
    pub fn add_change_file(&mut self, cdc: Cdc) {
        self.cdcs.push(cdc);
    }

    /// The change-data files staged.
    pub fn change_files(&self) -> &[Cdc] {
        &self.cdcs
    }

    /// Replaces the metadata.
    pub fn set_metadata(&mut self, metadata: Metadata) {
        self.metadata = Some(metadata);
    }

    /// Replaces the protocol.
    pub fn set_protocol(&mut self, protocol: Protocol) {
        self.protocol = Some(protocol);
    }

    /// Records an application transaction (`txn`).
    pub fn set_app_transaction(&mut self, app_id: &str, version: i64, now_ms: i64) {
        self.txns.push(SetTransaction {
            app_id: app_id.to_string(),
            version,
            last_updated: Some(now_ms),
        });
    }

    /// Writes a metadata domain.
    pub fn set_domain(&mut self, domain: DomainMetadata) {
        self.domains.push(domain);
    }

    /// The files staged for adding.
    pub fn added_files(&self) -> &[Add] {
        &self.adds
    }

    /// The files staged for removal.
    pub fn removed_files(&self) -> &[Remove] {
        &self.removes
    }

    /// The metadata the commit will have in force (staged, or the read snapshot's).
    pub fn effective_metadata(&self) -> Option<&Metadata> {
        self.metadata
            .as_ref()
            .or_else(|| self.base.as_ref().map(Snapshot::metadata))
    }

    /// The protocol the commit will have in force.
    pub fn effective_protocol(&self) -> Option<&Protocol> {
        self.protocol
            .as_ref()
            .or_else(|| self.base.as_ref().map(Snapshot::protocol))
    }

    /// Whether the transaction may share a commit with others through a
    /// [`GroupCommit`](crate::group::GroupCommit) (SPEC.md §35): a blind append
    /// ([`is_blind_append`](Self::is_blind_append)) of operation `WRITE` on an existing
    /// table, with nothing of its own in `commitInfo` (no user metadata or embedder fields,
    /// since a group writes one), no metadata domains, the default retry policy, and its data
    /// files deleted on failure (files written elsewhere, which a failed commit must leave,
    /// commit alone).
    pub fn can_join_group(&self) -> bool {
        self.base.is_some()
            && self.is_blind_append()
            && self.operation == "WRITE"
            && self.domains.is_empty()
            && self.user_metadata.is_none()
            && self.custom_commit_info.is_empty()
            && self.policy == RetryPolicy::default()
            && self.discard_on_failure
    }

    /// The URI of the store the transaction commits to.
    pub(crate) fn store_uri(&self) -> String {
        self.store.root_uri()
    }

    /// The operation name (`commitInfo.operation`).
    pub(crate) fn operation(&self) -> &str {
        &self.operation
    }

    /// The operation parameters staged.
    pub(crate) fn parameters(&self) -> &Map<String, Value> {
        &self.parameters
    }

    /// The operation metrics staged.
    pub(crate) fn metrics(&self) -> &Map<String, Value> {
        &self.metrics
    }

    /// The application transactions staged.
    pub(crate) fn app_transactions(&self) -> &[SetTransaction] {
        &self.txns
    }

    /// Stages an application transaction as given (a group commit carries its members').
    pub(crate) fn push_app_transaction(&mut self, txn: SetTransaction) {
        self.txns.push(txn);
    }

    /// Time spent writing data files.
    pub(crate) fn write_time(&self) -> Duration {
        self.write_data
    }

    /// True when the transaction only adds files and read nothing.
    pub fn is_blind_append(&self) -> bool {
        self.removes.is_empty()
            && self.predicates.is_empty()
            && !self.whole_table
            && self.read_files.is_empty()
            && self.metadata.is_none()
            && self.protocol.is_none()
            && self.cdcs.is_empty()
            && !self.adds.is_empty()
    }
}
