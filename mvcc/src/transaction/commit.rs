//! The commit loop.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use alluvium_storage::{ObjectStore, StorePath};
use alluvium_txlog::actions::{Action, CommitInfo, Metadata};
use alluvium_txlog::commit::{decode_commit, encode_commit};
use alluvium_txlog::features::check_write_supported;
use alluvium_txlog::log_path::{LogFileKind, Version, commit_path, version_to_i64};
use alluvium_txlog::path::{TableRoot, resolve};
use alluvium_txlog::properties::{
    ICT_ENABLEMENT_TIMESTAMP, ICT_ENABLEMENT_VERSION, TableProperties,
};
use alluvium_txlog::schema::StructType;
use alluvium_txlog::segment::list_log_from;
use serde_json::Value;

use super::conflict::{ReadWriteSet, check_winner, file_key};
use super::row_ids::RowIds;
use super::{CommitReport, Transaction};
use crate::snapshot::Snapshot;
use crate::{MvccError, Result};
use alluvium_txlog::actions::{Add, DomainMetadata};
use alluvium_txlog::row_tracking as rt;

/// Who holds a version that our put could not take.
enum Holder {
    Ours,
    Theirs(Vec<Action>),
    Nobody,
}

fn commit_txn_id(actions: &[Action]) -> Option<&str> {
    actions.iter().find_map(|a| match a {
        Action::CommitInfo(ci) => ci.txn_id(),
        _ => None,
    })
}

fn commit_ict(actions: &[Action]) -> Option<i64> {
    actions.iter().find_map(|a| match a {
        Action::CommitInfo(ci) => ci.in_commit_timestamp(),
        _ => None,
    })
}

/// Refuses to commit through a store without put-if-absent unless the user declared a
/// single writer (SPEC.md §2, §7): the commit protocol's mutual exclusion is that primitive.
///
/// # Errors
/// [`MvccError::StorageCapabilityMissing`]; a storage error if the store could not be
/// asked.
pub fn check_can_commit(store: &dyn ObjectStore) -> Result<()> {
    if store.single_writer() || store.check_put_if_absent()? {
        return Ok(());
    }
    Err(MvccError::StorageCapabilityMissing {
        capability: "put-if-absent",
        location: store.root_uri(),
    })
}

/// Column names a change-data-feed reader adds to every row (PROTOCOL.md "Change Data
/// Files", "Reader Requirements for AddCDCFile"): a table with
/// `delta.enableChangeDataFeed=true` must not have them.
pub const CHANGE_DATA_COLUMNS: [&str; 3] = alluvium_txlog::cdf::CHANGE_FEED_COLUMNS;

/// Refuses a schema with a top-level column named like one of [`CHANGE_DATA_COLUMNS`]
/// (compared case-insensitively, as Delta Spark resolves names), which a change-data-feed
/// table cannot have: its change rows would carry two columns of that name.
///
/// # Errors
/// [`MvccError::ReservedColumn`] naming the column.
pub fn check_change_data_columns(schema: &StructType) -> Result<()> {
    for f in &schema.fields {
        if let Some(r) = CHANGE_DATA_COLUMNS
            .iter()
            .find(|r| r.eq_ignore_ascii_case(&f.name))
        {
            return Err(MvccError::ReservedColumn {
                column: f.name.clone(),
                reserved: r,
            });
        }
    }
    Ok(())
}

impl Transaction {
    fn read_write_set(&self, root: &TableRoot) -> ReadWriteSet {
        let mut s = ReadWriteSet {
            predicates: self.predicates.clone(),
            whole_table: self.whole_table,
            read_app_ids: self.read_app_ids.clone(),
            blind_append: self.is_blind_append(),
            changes_data: self.adds.iter().any(|a| a.data_change)
                || self.removes.iter().any(|r| r.data_change),
            changes_metadata: self.metadata.is_some(),
            ..Default::default()
        };
        s.read_app_ids
            .extend(self.txns.iter().map(|t| t.app_id.clone()));
        s.read_files = self
            .read_files
            .iter()
            .map(|(p, dv)| file_key(root, p, dv.as_ref()))
            .collect();
        s.removed_files = self
            .removes
            .iter()
            .map(|r| file_key(root, &r.path, r.deletion_vector.as_deref()))
            .collect();
        s.domains = self
            .staged_domains()
            .map(|d| d.domain.clone())
            .collect::<HashSet<_>>();
        s
    }

    /// Whether the commit must assign row ids (PROTOCOL.md "Row Tracking": the protocol in
    /// force supports `rowTracking` and it is not suspended).
    fn assigns_row_ids(&self) -> bool {
        match (self.effective_protocol(), self.effective_metadata()) {
            (Some(p), Some(m)) => rt::must_assign(p, &m.configuration),
            _ => false,
        }
    }

    /// The domains the caller staged; on a row-tracking table the `delta.rowTracking`
    /// domain is the commit loop's own (rebased, never a conflict) and a staged one is
    /// dropped.
    fn staged_domains(&self) -> impl Iterator<Item = &DomainMetadata> {
        let own = self.assigns_row_ids();
        self.domains
            .iter()
            .filter(move |d| !(own && d.domain == rt::DOMAIN))
    }

    /// Enabling row tracking (PROTOCOL.md "Writer Requirements for Row Tracking"): the
    /// materialised column names are set and clash with no column, and every file live
    /// after the commit has row ids: those of the read snapshot that lack them are removed
    /// or re-added (backfilled) by this transaction.
    fn validate_row_tracking_enablement(
        &self,
        metadata: &Metadata,
        schema: &StructType,
    ) -> Result<()> {
        let Some(protocol) = self.effective_protocol() else {
            return Ok(());
        };
        if !rt::is_enabled(protocol, &metadata.configuration) {
            return Ok(());
        }
        let was_enabled = self
            .base
            .as_ref()
            .is_some_and(|b| rt::is_enabled(b.protocol(), &b.metadata().configuration));
        if was_enabled {
            return Ok(());
        }
        rt::check_enablement(metadata, schema)?;
        if let Some(base) = &self.base {
            let replaced: HashSet<&str> = self
                .adds
                .iter()
                .map(|a| a.path.as_str())
                .chain(self.removes.iter().map(|r| r.path.as_str()))
                .collect();
            if let Some(a) = base
                .files()
                .find(|a| a.base_row_id().is_none() && !replaced.contains(a.path()))
            {
                return Err(MvccError::InvalidOperation(format!(
                    "enabling row tracking at version {}: live file {} has no baseRowId and is not backfilled",
                    base.version() + 1,
                    a.path()
                )));
            }
        }
        Ok(())
    }

    /// Refuses what the commit can never write (see [`Transaction::commit`]'s last error
    /// kinds); checked before any write.
    pub(crate) fn validate(&self) -> Result<()> {
        let metadata = self.effective_metadata().ok_or_else(|| {
            MvccError::InvalidOperation("a new table needs a metaData action".into())
        })?;
        let protocol = self.effective_protocol().ok_or_else(|| {
            MvccError::InvalidOperation("a new table needs a protocol action".into())
        })?;
        let schema = StructType::from_json(&metadata.schema_string)?;
        check_write_supported(protocol, metadata, &schema)?;
        let props = TableProperties(&metadata.configuration);
        let base_append_only = self
            .base
            .as_ref()
            .is_some_and(|b| b.properties().append_only());
        if (props.append_only() || base_append_only) && self.removes.iter().any(|r| r.data_change) {
            return Err(MvccError::InvalidOperation(
                "the table is append-only (delta.appendOnly=true): rows cannot be deleted or overwritten".into(),
            ));
        }
        if self.metadata.is_some() && props.change_data_feed() {
            check_change_data_columns(&schema)?;
        }
        self.validate_row_tracking_enablement(metadata, &schema)?;
        // What the transaction read must be live at its read version: the conflict check
        // only looks at later commits, so a stale read would go unnoticed and its rewrite
        // would bring removed rows back.
        if let Some(base) = &self.base {
            for (path, dv) in &self.read_files {
                if base.state().file(path, dv.as_ref()).is_none() {
                    return Err(MvccError::InvalidOperation(format!(
                        "file {path} was read as live but is not live at version {}",
                        base.version()
                    )));
                }
            }
        }
        let parts = &metadata.partition_columns;
        for c in &self.cdcs {
            if c.partition_values.len() != parts.len() || c.data_change {
                return Err(MvccError::InvalidOperation(format!(
                    "change-data file {} must have dataChange=false and {} partition values",
                    c.path,
                    parts.len()
                )));
            }
        }
        for a in &self.adds {
            if a.partition_values.len() != parts.len() {
                return Err(MvccError::InvalidOperation(format!(
                    "file {} has {} partition values, the table has {} partition columns",
                    a.path,
                    a.partition_values.len(),
                    parts.len()
                )));
            }
        }
        Ok(())
    }

    fn ict_enabled(&self) -> bool {
        self.effective_metadata()
            .is_some_and(|m| TableProperties(&m.configuration).in_commit_timestamps())
    }

    /// The commit file for `version`: commitInfo first (required with in-commit
    /// timestamps), then protocol, metadata, transactions, domains, removes, adds, cdc
    /// files.
    fn encode(
        &self,
        version: Version,
        now: i64,
        ict: Option<i64>,
        blind: bool,
        row_ids: Option<(&RowIds, &HashSet<&str>)>,
    ) -> Result<(Vec<Action>, Vec<u8>)> {
        let mut ci = CommitInfo::default();
        ci.set("timestamp", now);
        if let Some(t) = ict {
            ci.set(CommitInfo::IN_COMMIT_TIMESTAMP, t);
        }
        ci.set("operation", self.operation.clone());
        ci.set(
            "operationParameters",
            Value::Object(self.parameters.clone()),
        );
        if let Some(b) = &self.base {
            ci.set("readVersion", version_to_i64(b.version()));
        }
        ci.set("isolationLevel", "Serializable");
        ci.set("isBlindAppend", blind);
        if !self.metrics.is_empty() {
            ci.set("operationMetrics", Value::Object(self.metrics.clone()));
        }
        if let Some(u) = &self.user_metadata {
            ci.set("userMetadata", u.clone());
        }
        for (k, v) in &self.custom_commit_info {
            ci.set(k, v.clone());
        }
        ci.set("engineInfo", alluvium_txlog::ENGINE);
        ci.set("txnId", self.txn_id.clone());
        let mut actions = Vec::with_capacity(4 + self.adds.len() + self.removes.len());
        actions.push(Action::CommitInfo(ci));
        if let Some(p) = &self.protocol {
            actions.push(Action::Protocol(p.clone()));
        }
        if let Some(m) = &self.metadata {
            actions.push(Action::Metadata(self.metadata_for(m, version, ict)));
        }
        actions.extend(self.txns.iter().cloned().map(Action::Txn));
        actions.extend(self.staged_domains().cloned().map(Action::DomainMetadata));
        let adds: Vec<Add> = match row_ids {
            Some((ids, readded)) => {
                let (adds, domain) = ids.assign(&self.adds, readded, version_to_i64(version))?;
                actions.extend(domain.map(Action::DomainMetadata));
                adds
            }
            None => self.adds.clone(),
        };
        actions.extend(self.removes.iter().cloned().map(Action::Remove));
        actions.extend(adds.into_iter().map(Action::Add));
        actions.extend(self.cdcs.iter().cloned().map(Action::Cdc));
        let bytes = encode_commit(&actions)?;
        Ok((actions, bytes))
    }

    /// Enabling in-commit timestamps on an existing table records where they start.
    fn metadata_for(&self, m: &Metadata, version: Version, ict: Option<i64>) -> Metadata {
        let base_has_ict = self
            .base
            .as_ref()
            .is_some_and(|b| b.properties().in_commit_timestamps());
        match (ict, &self.base) {
            (Some(t), Some(_)) if !base_has_ict => {
                let mut m = m.clone();
                m.configuration
                    .insert(ICT_ENABLEMENT_VERSION.into(), version.to_string());
                m.configuration
                    .insert(ICT_ENABLEMENT_TIMESTAMP.into(), t.to_string());
                m
            }
            _ => m.clone(),
        }
    }

    fn read_version(
        &self,
        store: &dyn ObjectStore,
        version: Version,
    ) -> Result<Option<Vec<Action>>> {
        let path = commit_path(version);
        match store.get(&path) {
            Ok(bytes) => Ok(Some(decode_commit(path.as_str(), &bytes)?)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    fn holder(&self, store: &dyn ObjectStore, version: Version) -> Result<Holder> {
        Ok(match self.read_version(store, version)? {
            None => Holder::Nobody,
            Some(actions) if commit_txn_id(&actions) == Some(self.txn_id.as_str()) => Holder::Ours,
            Some(actions) => Holder::Theirs(actions),
        })
    }

    /// Makes the names of the new files durable when they were written deferred
    /// ([`Transaction::set_names_deferred`]): before the commit file names them, so that a
    /// crash never leaves a commit whose files are gone.
    ///
    /// # Errors
    /// [`MvccError::CommitWriteFailed`]: nothing was committed.
    fn sync_deferred_names(&self, root: &TableRoot) -> Result<()> {
        if !self.names_deferred {
            return Ok(());
        }
        #[cfg(feature = "planted-bugs")]
        if crate::planted::planted(crate::planted::Bug::SkipDeferredSync) {
            // Planted bug (a): the commit goes ahead while the new files' names may not
            // survive a machine crash.
            return Ok(());
        }
        let rewritten: HashSet<&str> = self.removes.iter().map(|r| r.path.as_str()).collect();
        let paths: Vec<StorePath> = self
            .adds
            .iter()
            .filter(|a| !rewritten.contains(a.path.as_str()))
            .map(|a| a.path.as_str())
            .chain(self.cdcs.iter().map(|c| c.path.as_str()))
            .filter_map(|p| match resolve(p, root) {
                Ok(alluvium_storage::FileLocation::Table(p)) => Some(p),
                _ => None,
            })
            .collect();
        self.store
            .sync_deferred(&paths)
            .map_err(|source| MvccError::CommitWriteFailed {
                version: self.base.as_ref().map_or(0, |b| b.version() + 1),
                source,
            })
    }

    /// Deletes the data files this transaction wrote. Only called once it is certain that
    /// no version holds this transaction.
    pub(crate) fn discard_data_files(&self, root: &TableRoot) {
        if !self.discard_on_failure {
            return;
        }
        for a in &self.adds {
            // A re-add of a file this transaction also removes (a new deletion vector on
            // an existing file) names a file other versions reference: never delete it.
            if self.removes.iter().any(|r| r.path == a.path) {
                continue;
            }
            if let Ok(alluvium_storage::FileLocation::Table(p)) = resolve(&a.path, root) {
                let _ = self.store.delete(&p);
            }
        }
        // Change-data files are always new files of this transaction.
        for c in &self.cdcs {
            if let Ok(alluvium_storage::FileLocation::Table(p)) = resolve(&c.path, root) {
                let _ = self.store.delete(&p);
            }
        }
    }

    /// Commits the transaction (see the module docs).
    ///
    /// # Errors
    /// * [`MvccError::Conflict`] (nothing committed; the transaction's new data files are
    ///   deleted) when a concurrent commit conflicts;
    /// * [`MvccError::TableAlreadyExists`] when creating a table that exists;
    /// * [`MvccError::CommitWriteFailed`] (nothing committed; data files deleted) at once
    ///   when the put fails with an error that proves nothing was written
    ///   ([`alluvium_storage::StorageError::is_definite`]), or when the names of files
    ///   written deferred could not be made durable before it;
    /// * [`MvccError::CommitOutcomeUnknown`] when a put failed and reading the version back
    ///   failed too, or when the budget ran out while an earlier put of this transaction
    ///   failed without proof that it had no effect and may still land (data files are
    ///   kept: the commit may have landed or may land);
    /// * [`MvccError::RetryBudgetExhausted`] after the time budget (nothing committed);
    /// * [`MvccError::StorageCapabilityMissing`] when the store does not give put-if-absent
    ///   and is not in single-writer mode (nothing committed);
    /// * unsupported writer features, append-only violations and invalid actions before any
    ///   write.
    pub fn commit(self) -> Result<CommitReport> {
        self.commit_returning_actions().map(|(r, _)| r)
    }

    /// [`commit`](Self::commit), also returning the snapshot of the version it wrote when
    /// that can be built without reading the log: the transaction read a snapshot and its
    /// commit landed right after it (no concurrent commit came between). The snapshot is
    /// the read one advanced by the committed actions (SPEC.md §35), equal to what a load
    /// of that version gives; its commit time comes from the in-commit timestamp, or else
    /// from one `head` of the commit file. `None` otherwise (a blind append, a commit
    /// rebased over others, or a failed `head`): the caller then loads the table.
    ///
    /// # Errors
    /// As [`commit`](Self::commit); the snapshot's failures only make it `None`.
    pub fn commit_with_snapshot(self) -> Result<(CommitReport, Option<Snapshot>)> {
        let base = self.base.clone();
        let (report, actions) = self.commit_returning_actions()?;
        let snapshot = base.and_then(|b| snapshot_after(&b, &report, actions));
        Ok((report, snapshot))
    }

    /// [`commit`](Self::commit), also returning the actions of the version it wrote (with
    /// the row ids and in-commit timestamp of the attempt that landed), so that the caller
    /// can advance its snapshot without reading the commit back.
    pub(crate) fn commit_returning_actions(self) -> Result<(CommitReport, Vec<Action>)> {
        let root = TableRoot::new(self.store.root_uri());
        if let Err(e) = check_can_commit(self.store.as_ref())
            .and_then(|()| self.validate())
            .and_then(|()| self.sync_deferred_names(&root))
        {
            self.discard_data_files(&root);
            return Err(e);
        }
        match self.commit_loop(&root) {
            Ok((mut r, actions)) => {
                r.requests = self.store.request_counts().since(&self.requests_at_start);
                Ok((r, actions))
            }
            Err(e) => {
                let definite = matches!(
                    e,
                    MvccError::Conflict { .. }
                        | MvccError::TableAlreadyExists { .. }
                        | MvccError::RetryBudgetExhausted { .. }
                        | MvccError::CommitWriteFailed { .. }
                );
                if definite {
                    self.discard_data_files(&root);
                }
                Err(e)
            }
        }
    }

    /// The loop itself; on success also the actions of the attempt that landed.
    fn commit_loop(&self, root: &TableRoot) -> Result<(CommitReport, Vec<Action>)> {
        let started = Instant::now();
        let store = self.store.as_ref();
        let rw = self.read_write_set(root);
        let blind = self.is_blind_append();
        let ict_on = self.ict_enabled();
        let mut version = self.base.as_ref().map_or(0, |b| b.version() + 1);
        let mut last_ict = self
            .base
            .as_ref()
            .filter(|b| b.properties().in_commit_timestamps())
            .map(|b| b.timestamp_ms());
        // A path both removed and re-added in this commit is a deletion-vector update of a
        // file that stays: it is neither a new data file nor a removed one, and its bytes
        // were not written now.
        let rewritten: HashSet<&str> = self.removes.iter().map(|r| r.path.as_str()).collect();
        let readded: HashSet<&str> = self
            .adds
            .iter()
            .map(|a| a.path.as_str())
            .filter(|p| rewritten.contains(p))
            .collect();
        let new_adds = self
            .adds
            .iter()
            .filter(|a| !readded.contains(a.path.as_str()));
        let gone = self
            .removes
            .iter()
            .filter(|r| !readded.contains(r.path.as_str()));
        let mut report = CommitReport {
            txn_id: self.txn_id.clone(),
            group_members: 1,
            files_added: new_adds.clone().count(),
            files_removed: gone.clone().count(),
            bytes_added: new_adds.map(|a| u64::try_from(a.size).unwrap_or(0)).sum(),
            bytes_removed: gone
                .map(|r| u64::try_from(r.size.unwrap_or(0)).unwrap_or(0))
                .sum(),
            write_data: self.write_data,
            operation_metrics: self
                .metrics
                .iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        v.as_str().map_or_else(|| v.to_string(), str::to_string),
                    )
                })
                .collect(),
            ..Default::default()
        };
        let mut row_ids = if self.assigns_row_ids() {
            let domains: Vec<&DomainMetadata> = self
                .base
                .as_ref()
                .map(|b| b.domains().collect())
                .unwrap_or_default();
            Some(RowIds::new(domains)?)
        } else {
            None
        };
        let mut conflict_time = Duration::ZERO;
        // The error of a put at the current version that failed without proof of having no
        // effect, and that no read-back has settled yet: that put may still land (a remote
        // request in flight), so giving up must not be reported as "nothing committed".
        let mut unsettled_put: Option<String> = None;
        loop {
            report.attempts += 1;
            let now = self.store.now_ms();
            let ict = ict_on.then(|| last_ict.map_or(now, |l| now.max(l + 1)));
            let (actions, bytes) = self.encode(
                version,
                now,
                ict,
                blind,
                row_ids.as_ref().map(|r| (r, &readded)),
            )?;
            let path: StorePath = commit_path(version);
            #[cfg(feature = "planted-bugs")]
            let planted_copy = bytes.clone();
            let taken = match store.put_if_absent(&path, bytes.into()) {
                Ok(()) => None,
                #[cfg(feature = "planted-bugs")]
                Err(e)
                    if e.is_already_exists()
                        && version > 0
                        && crate::planted::planted(crate::planted::Bug::OverwriteLostVersion) =>
                {
                    // Planted bug (c): the lost version is taken as a stale leftover and
                    // overwritten, erasing the winner's commit.
                    match store.put(&path, planted_copy.into()) {
                        Ok(()) => None,
                        Err(source) => {
                            return Err(MvccError::CommitWriteFailed { version, source });
                        }
                    }
                }
                #[cfg(feature = "planted-bugs")]
                Err(e)
                    if !e.is_already_exists()
                        && !e.is_definite()
                        && crate::planted::planted(crate::planted::Bug::AmbiguousPutAsFailed) =>
                {
                    // Planted bug (b): an ambiguous put is taken as failed, without reading
                    // the version back, and the loop retries at the next version.
                    version += 1;
                    Some(Ok(Holder::Nobody))
                }
                Err(e) if e.is_already_exists() => Some(self.holder(store, version)),
                // Nothing was written: retrying cannot help and no read-back is needed.
                // Unless an earlier put of this version may still land.
                Err(source) if source.is_definite() => {
                    return Err(match unsettled_put {
                        Some(earlier) => MvccError::CommitOutcomeUnknown {
                            version,
                            txn_id: self.txn_id.clone(),
                            reason: format!(
                                "an earlier put failed ({earlier}) and may still land; the last one was refused ({source})"
                            ),
                        },
                        None => MvccError::CommitWriteFailed { version, source },
                    });
                }
                // The put failed, possibly after its effect: settle it by reading back.
                Err(put_err) => {
                    let holder = self.holder(store, version).map_err(|read_err| MvccError::CommitOutcomeUnknown {
                        version,
                        txn_id: self.txn_id.clone(),
                        reason: format!("put failed ({put_err}) and reading the version back failed ({read_err})"),
                    });
                    if matches!(holder, Ok(Holder::Nobody)) {
                        unsettled_put = Some(put_err.to_string());
                    }
                    Some(holder)
                }
            };
            let winner = match taken {
                None => {
                    report.version = version;
                    report.conflict_check = conflict_time;
                    report.commit = started.elapsed();
                    return Ok((report, actions));
                }
                Some(Err(e)) => {
                    return Err(match e {
                        MvccError::CommitOutcomeUnknown { .. } => e,
                        other => MvccError::CommitOutcomeUnknown {
                            version,
                            txn_id: self.txn_id.clone(),
                            reason: format!("the version exists but cannot be read back: {other}"),
                        },
                    });
                }
                Some(Ok(Holder::Ours)) => {
                    report.version = version;
                    report.resolved_by_read_back = true;
                    report.conflict_check = conflict_time;
                    report.commit = started.elapsed();
                    return Ok((report, actions));
                }
                Some(Ok(Holder::Nobody)) => None,
                Some(Ok(Holder::Theirs(actions))) => Some(actions),
            };
            if let Some(actions) = winner {
                // Another commit holds this version: none of our puts to it can land now.
                unsettled_put = None;
                if version == 0 {
                    return Err(MvccError::TableAlreadyExists {
                        location: store.root_uri(),
                    });
                }
                let check_started = Instant::now();
                // Read every winner once, oldest first: this one, then any committed since.
                let mut winners = vec![(version, actions)];
                let later = list_log_from(store, version + 1)?;
                for f in later.iter().filter(|f| f.kind == LogFileKind::Commit) {
                    if f.version != winners.last().map_or(version, |w| w.0) + 1 {
                        break;
                    }
                    match self.read_version(store, f.version)? {
                        Some(a) => winners.push((f.version, a)),
                        None => break,
                    }
                }
                for (v, actions) in &winners {
                    check_winner(&rw, root, *v, actions)?;
                    if let Some(r) = &mut row_ids {
                        r.rebase(actions)?;
                    }
                    if let Some(t) = commit_ict(actions) {
                        last_ict = Some(last_ict.map_or(t, |l| l.max(t)));
                    }
                    report.winning_commits.push(*v);
                }
                conflict_time += check_started.elapsed();
                version = winners.last().map_or(version, |w| w.0) + 1;
            }
            // Lost (or failed before its effect): back off, within the budget.
            let elapsed = started.elapsed();
            let out_of_attempts = self
                .policy
                .max_attempts
                .is_some_and(|max| report.attempts >= max);
            if elapsed >= self.policy.budget || out_of_attempts {
                if let Some(put_err) = unsettled_put {
                    return Err(MvccError::CommitOutcomeUnknown {
                        version,
                        txn_id: self.txn_id.clone(),
                        reason: format!(
                            "the retry budget ran out after a put failed ({put_err}) that may still land"
                        ),
                    });
                }
                return Err(MvccError::RetryBudgetExhausted {
                    attempts: report.attempts,
                    elapsed_ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
                });
            }
            backoff(self.policy.backoff(report.attempts));
        }
    }
}

#[cfg(not(alluvium_loom))]
fn backoff(d: Duration) {
    if !d.is_zero() {
        std::thread::sleep(d);
    }
}

#[cfg(alluvium_loom)]
fn backoff(_: Duration) {
    // Under the model checker time does not pass: yield so other writers make progress.
    alluvium_storage::sync::yield_now();
}

/// The snapshot of the version `report` names, built from `base` and the `actions` that
/// version holds, when it is the version right after `base` (no commit file is read; only
/// its time, where in-commit timestamps do not give it). `None` when the commit landed
/// after other commits, or when the commit file's time cannot be read.
pub(crate) fn snapshot_after(
    base: &Snapshot,
    report: &CommitReport,
    actions: Vec<Action>,
) -> Option<Snapshot> {
    if report.version != base.version() + 1 {
        return None;
    }
    let ict = actions.iter().find_map(|a| match a {
        Action::CommitInfo(ci) => ci.in_commit_timestamp(),
        _ => None,
    });
    let file_time = match ict {
        Some(t) => t,
        None => {
            base.store()
                .head(&commit_path(report.version))
                .ok()?
                .last_modified_ms
        }
    };
    base.advance(actions, file_time).ok()
}
