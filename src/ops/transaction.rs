//! Embedder transactions: several operations' actions in ONE commit. An embedder writes
//! data files through the engine's own writer (partition directories, physical column
//! names, statistics, the table's target file size) and gets their [`Add`]s back, stages
//! them with removes, property changes and application transactions, and commits once.
//! The commit runs the same post-commit policy (checkpoint, log cleanup,
//! auto-compaction) as the built-in operations.
//!
//! Conflict detection is the mvcc layer's: what the transaction read (files removed,
//! files and application ids it looked at) is checked against every commit that landed
//! since its snapshot.

use crate::Snapshot;
use alluvium_mvcc::RetryPolicy;
use alluvium_txlog::actions::{Add, DomainMetadata, Metadata, Remove};

use crate::commit::AppTransaction;
use crate::ops::create::check_properties;
use crate::report::CommitSummary;
use crate::{FileRef, Result, Table};

/// A transaction on one table, started by [`Table::transaction`]. Nothing is visible to
/// readers until [`commit`](Self::commit). Data files written by
/// [`write_files`](Self::write_files) and never committed (the transaction dropped, or
/// its commit failed in a way that may have landed) stay in the table directory
/// unreferenced, for VACUUM to delete.
#[derive(Debug)]
pub struct Transaction {
    table: Table,
    snapshot: Snapshot,
    txn: alluvium_mvcc::Transaction,
    /// The table's column rules, applied to every batch [`Transaction::write_files`]
    /// writes; kept for the whole transaction so identity values never repeat.
    rules: std::sync::Arc<crate::rows::rules::ColumnRules>,
}

impl Table {
    /// Starts a transaction on the latest version, recorded in the log as `operation`
    /// (`commitInfo.operation`, e.g. `WRITE` or the embedder's own name).
    ///
    /// # Errors
    /// A store that cannot commit safely (no put-if-absent and not single-writer), a
    /// missing table, writer features alluvium does not support: all refused before any
    /// data file is written.
    pub fn transaction(&self, operation: &str) -> Result<Transaction> {
        alluvium_mvcc::transaction::check_can_commit(self.store().as_ref())?;
        let snapshot = self.snapshot()?;
        snapshot.check_writable()?;
        let rules = crate::rows::rules::ColumnRules::for_snapshot(&snapshot)?;
        Ok(Transaction {
            rules,
            table: self.clone(),
            txn: alluvium_mvcc::Transaction::new(snapshot.inner(), operation),
            snapshot,
        })
    }
}

impl Transaction {
    /// The snapshot the transaction read; it commits at a later version.
    pub fn snapshot(&self) -> &Snapshot {
        &self.snapshot
    }

    /// Writes `batches` as data files of the table (schema and partitioning of the
    /// snapshot read, the table's target file size) and returns their [`Add`]s, NOT yet
    /// staged: pass them to [`add_files`](Self::add_files) to commit them. Batches must
    /// have the table's columns (by name, in any order; nullable columns may be missing).
    /// They are streamed, and may come from a fallible source (see
    /// [`IntoBatch`](crate::IntoBatch)).
    ///
    /// # Errors
    /// [`Error::SchemaMismatch`](crate::Error::SchemaMismatch) for batches that do not fit the table; storage errors.
    /// Files already uploaded by a failed call are deleted.
    pub fn write_files<I>(&mut self, batches: I) -> Result<Vec<Add>>
    where
        I: IntoIterator,
        I::Item: crate::IntoBatch,
    {
        let configuration = self
            .txn
            .effective_metadata()
            .map(|m| m.configuration.clone())
            .unwrap_or_default();
        let (adds, elapsed) = crate::ops::files::write_table_files(
            &self.table,
            &self.snapshot,
            &configuration,
            &self.rules,
            batches,
        )?;
        self.txn.add_write_time(elapsed);
        Ok(adds)
    }

    /// Stages data files for adding: those [`write_files`](Self::write_files) returned, or
    /// files the embedder wrote itself (paths relative to the table root).
    pub fn add_files(&mut self, adds: impl IntoIterator<Item = Add>) {
        for a in adds {
            self.txn.add_file(a);
        }
    }

    /// Stages data files written elsewhere (by [`Table::write_data_files`] on workers, or
    /// by the embedder), each checked as [`Table::commit_files`] checks it (see
    /// [`FileRefusal`](crate::FileRefusal); also against the files this transaction
    /// already adds), with absolute locations outside the table root allowed under
    /// `allowed_locations`. From then on a failed commit deletes none of the
    /// transaction's files: they are not all its own, and a retry may still commit them.
    ///
    /// # Errors
    /// [`Error::FileRefused`](crate::Error::FileRefused) for the first add refused; nothing
    /// is staged then.
    pub fn add_written_files(
        &mut self,
        adds: Vec<Add>,
        allowed_locations: &[String],
    ) -> Result<()> {
        let staged = self
            .txn
            .added_files()
            .iter()
            .map(|a| {
                alluvium_txlog::path::canonical_path(&a.path, self.snapshot.root()).into_owned()
            })
            .collect();
        crate::ops::files::check_adds(&self.snapshot, None, &adds, allowed_locations, &staged)?;
        self.txn.set_discard_on_failure(false);
        self.add_files(adds);
        Ok(())
    }

    /// Stages the removal of a live file of the snapshot (`dataChange=true`), and records it
    /// as read: a concurrent commit that removes it too makes this one conflict.
    pub fn remove_file<'a>(&mut self, add: impl Into<FileRef<'a>>) {
        let add = add.into();
        self.txn.read_file(add);
        let now = self.table.store().now_ms();
        self.txn.remove_file(Remove::from_add(add, now, true));
    }

    /// Records that the transaction's outcome depends on the whole table (as an overwrite
    /// does): any concurrent commit that adds or removes data files conflicts.
    pub fn read_whole_table(&mut self) {
        self.txn.read_whole_table();
    }

    /// Sets table properties (merged into the current configuration), validated as at
    /// table creation. They are key-value pairs in the shape [`Table::create`] and
    /// [`Table::set_properties`] take: a map or a list of pairs.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a value the engine would ignore or misread.
    pub fn set_properties<K, V>(
        &mut self,
        properties: impl IntoIterator<Item = (K, V)>,
    ) -> Result<()>
    where
        K: Into<String>,
        V: Into<String>,
    {
        let properties = crate::ops::create::collect_properties(properties);
        check_properties(&properties)?;
        let mut metadata = self
            .txn
            .effective_metadata()
            .cloned()
            .unwrap_or_else(|| self.snapshot.metadata().clone());
        metadata.configuration.extend(properties);
        self.txn.set_metadata(metadata);
        Ok(())
    }

    /// Replaces the table's metadata (schema, partitioning, properties) as given. The
    /// caller is responsible for its consistency with the table's data.
    pub fn set_metadata(&mut self, metadata: Metadata) {
        self.txn.set_metadata(metadata);
    }

    /// The version an application last recorded in the table (`txn` action), if any,
    /// recording the look-up so that a concurrent commit by the same application conflicts.
    pub fn app_version(&mut self, app_id: &str) -> Option<i64> {
        let now = self.table.store().now_ms();
        self.txn.app_version(app_id, now)
    }

    /// Records an application transaction (idempotent writes: check
    /// [`app_version`](Self::app_version) first).
    pub fn set_app_transaction(&mut self, app: &AppTransaction) {
        let now = self.table.store().now_ms();
        self.txn.set_app_transaction(&app.app_id, app.version, now);
    }

    /// Writes a metadata domain (`domainMetadata`).
    pub fn set_domain(&mut self, domain: DomainMetadata) {
        self.txn.set_domain(domain);
    }

    /// Sets `commitInfo.userMetadata`.
    pub fn set_user_metadata(&mut self, text: impl Into<String>) {
        self.txn.set_user_metadata(text);
    }

    /// Sets the commit loop's retry policy.
    pub fn set_retry_policy(&mut self, policy: RetryPolicy) {
        self.txn.set_retry_policy(policy);
    }

    /// Commits everything staged as one version, then runs the post-commit policy of the
    /// built-in operations (a checkpoint when `delta.checkpointInterval` says so, log
    /// cleanup, auto-compaction), whose failures are reported in the summary and never
    /// fail the commit.
    ///
    /// # Errors
    /// Conflicts ([`Error::conflict_kind`](crate::Error::conflict_kind)), an exhausted retry budget, an unknown outcome
    /// ([`crate::ErrorKind::CommitOutcomeUnknown`]), storage failures.
    pub fn commit(mut self) -> Result<CommitSummary> {
        // Identity values generated by write_files advance the columns' high-water marks
        // in this commit.
        self.rules.stage_identity(&self.snapshot, &mut self.txn)?;
        self.table.commit_with_policy(self.txn)
    }
}
