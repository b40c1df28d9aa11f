//! CREATE OR REPLACE TABLE (deltalake's `DeltaTable.create(mode="overwrite")`): the table
//! at a location is replaced by a new, empty one with its own schema, partitioning and
//! properties, in one commit on top of the old table's log (or as version 0 when there is
//! none), so the old versions stay readable by time travel until VACUUM and log cleanup.
//!
//! It owns what a replaced table keeps of the old one, as Delta Spark's REPLACE TABLE does:
//! the protocol is never downgraded, domains survive (but for the clustering domain, which
//! names old columns), column-mapping ids and row-tracking state continue, and in-commit
//! timestamps keep the version that enabled them. It must not know how rows are written:
//! the replaced table is empty.

use std::collections::HashMap;

use alluvium_mvcc::Transaction;
use alluvium_txlog::LogError;
use alluvium_txlog::actions::{DomainMetadata, Metadata, Protocol};
use alluvium_txlog::clustering;
use alluvium_txlog::features::{check_write_supported, merge_protocols};
use alluvium_txlog::properties::{
    ICT_ENABLEMENT_TIMESTAMP, ICT_ENABLEMENT_VERSION, MATERIALIZED_ROW_COMMIT_VERSION_COLUMN,
    MATERIALIZED_ROW_ID_COLUMN, TableProperties,
};
use alluvium_txlog::schema::StructType;
use alluvium_txlog::table::TableFeature;
use arrow_schema::Schema;

use crate::commit::{WriteOptions, WriteOutcome, finish, outcome_if_done};
use crate::ops::create::{collect_properties, schema_of_arrow, set_create_parameters};
use crate::ops::write::remove_every_file;
use crate::rows::rules::ColumnRules;
use crate::{Error, ErrorKind, Result, Snapshot, Table};

/// The operation name in `commitInfo`, Delta Spark's for REPLACE TABLE with OR CREATE.
const OPERATION: &str = "CREATE OR REPLACE TABLE";

impl Table {
    /// Replaces the table with a new, empty one of `schema`, `partition_by` and table
    /// `properties` (CREATE OR REPLACE TABLE); creates it when there is none.
    ///
    /// The new table is what [`create`](Self::create) would make, committed as the next
    /// version with every live file removed: a new table id, the given properties only (the
    /// old ones, constraints included, are gone) and no rows. What it keeps of the old
    /// table, as Delta Spark's REPLACE does:
    /// * the protocol: the new table's needs are added to it, nothing is dropped, since the
    ///   old versions' readers still need it;
    /// * domain metadata, but for the clustering columns, which name old columns;
    /// * column-mapping ids continue above the old `maxColumnId`, and row ids above the old
    ///   high-water mark (with the old materialised row-tracking column names);
    /// * in-commit timestamps, when still on, keep the version that first enabled them.
    ///
    /// Old versions stay readable by time travel. An append-only table with rows is refused
    /// (its files may not be removed); a concurrent commit conflicts with the replace. The
    /// `options`' commit fields (`user_metadata`, `commit_info`, `app_transaction`, retry
    /// policy, read snapshot) apply; the write settings have no rows to apply to.
    ///
    /// ```no_run
    /// # fn main() -> alluvium::Result<()> {
    /// use alluvium::arrow::datatypes::{DataType, Field, Schema};
    /// use alluvium::{Table, WriteOptions};
    /// let table = Table::open("path/to/table")?;
    /// let schema = Schema::new(vec![Field::new("id", DataType::Int64, false)]);
    /// table.replace(&schema, &[], [("delta.enableDeletionVectors", "true")], &WriteOptions::default())?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// As [`create`](Self::create) for the schema, partitioning and properties; `Refused`
    /// for an append-only table with rows; a conflict when another commit landed since the
    /// snapshot read; `Unsupported` for a table with writer features alluvium lacks.
    pub fn replace<K, V>(
        &self,
        schema: &Schema,
        partition_by: &[String],
        properties: impl IntoIterator<Item = (K, V)>,
        options: &WriteOptions,
    ) -> Result<WriteOutcome>
    where
        K: Into<String>,
        V: Into<String>,
    {
        let delta_schema = schema_of_arrow(schema)?;
        self.replace_with_schema(delta_schema, partition_by, properties, options)
    }

    /// [`replace`](Self::replace) from a Delta schema (its field metadata kept: generated
    /// and identity columns, defaults, invariants).
    ///
    /// # Errors
    /// As [`replace`](Self::replace).
    pub fn replace_with_schema<K, V>(
        &self,
        schema: StructType,
        partition_by: &[String],
        properties: impl IntoIterator<Item = (K, V)>,
        options: &WriteOptions,
    ) -> Result<WriteOutcome>
    where
        K: Into<String>,
        V: Into<String>,
    {
        let properties = collect_properties(properties);
        let snapshot = match self.read_snapshot(options) {
            Ok(s) => s,
            Err(e) if is_no_table(&e) => {
                match self.create_empty(
                    schema.clone(),
                    partition_by,
                    &properties,
                    options,
                    OPERATION,
                ) {
                    // Another writer created the table meanwhile: replace that one.
                    Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                        self.read_snapshot(options)?
                    }
                    created => return created,
                }
            }
            Err(e) => return Err(e),
        };
        let mut txn = Transaction::new(snapshot.inner(), OPERATION);
        if let Some(o) = outcome_if_done(&mut txn, &snapshot, options) {
            return Ok(o);
        }
        let floor = snapshot.properties().column_mapping_max_id();
        let (wanted, mut metadata) = self.new_table(schema, partition_by, &properties, floor)?;
        let protocol = merge_protocols(snapshot.protocol(), &wanted);
        keep_from_replaced(&snapshot, &protocol, &mut metadata);
        let schema = StructType::from_json(&metadata.schema_string)?;
        check_write_supported(&protocol, &metadata, &schema)
            .map_err(|e| Error::InvalidArgument(format!("cannot replace the table: {e}")))?;
        // Constraints and column rules of the new table bind to its schema (as a write's).
        ColumnRules::of_table(
            &protocol,
            &metadata.partition_columns,
            alluvium_txlog::column_mapping::ColumnMappingMode::of(&protocol, &metadata),
            &schema,
            &metadata.configuration,
        )
        .map_err(|e| Error::InvalidArgument(format!("cannot replace the table: {e}")))?;
        set_create_parameters(&mut txn, &metadata.partition_columns, &properties);
        remove_every_file(&snapshot, &mut txn, self.store().now_ms());
        for domain in clustering_tombstones(&snapshot) {
            txn.set_domain(domain);
        }
        if &protocol != snapshot.protocol() {
            txn.set_protocol(protocol);
        }
        txn.set_metadata(metadata);
        txn.set_metric("numRemovedFiles", snapshot.num_files());
        finish(self, txn, options)
    }
}

/// Whether `e` says no table is at the location (not some other failure to load one).
fn is_no_table(e: &Error) -> bool {
    matches!(e.as_log_error(), Some(LogError::TableNotFound { .. }))
}

/// What the new `metadata` keeps of the replaced table's under `protocol` (the merged
/// one): row tracking's materialised column names while the protocol supports it (row ids
/// continue from the surviving high-water mark), and the version and time in-commit
/// timestamps were enabled at while the new properties keep them on.
fn keep_from_replaced(old: &Snapshot, protocol: &Protocol, metadata: &mut Metadata) {
    let before = &old.metadata().configuration;
    let config = &mut metadata.configuration;
    if protocol.supports_writer_feature(&TableFeature::RowTracking) {
        for k in [
            MATERIALIZED_ROW_ID_COLUMN,
            MATERIALIZED_ROW_COMMIT_VERSION_COLUMN,
        ] {
            if let Some(v) = before.get(k) {
                config.insert(k.into(), v.clone());
            }
        }
    }
    let ict_on = |c: &HashMap<String, String>| TableProperties(c).in_commit_timestamps();
    if ict_on(config) && ict_on(before) {
        for k in [ICT_ENABLEMENT_VERSION, ICT_ENABLEMENT_TIMESTAMP] {
            match before.get(k) {
                Some(v) => config.insert(k.into(), v.clone()),
                None => config.remove(k),
            };
        }
    }
}

/// Tombstones for the clustering domains of `snapshot` (either name): a replaced table is
/// not clustered by the old table's columns.
fn clustering_tombstones(snapshot: &Snapshot) -> Vec<DomainMetadata> {
    let domains = snapshot.state().domains();
    [clustering::DOMAIN, clustering::LEGACY_DOMAIN]
        .into_iter()
        .filter_map(|name| domains.get(name))
        .filter(|d| !d.removed)
        .map(|d| DomainMetadata {
            domain: d.domain.clone(),
            configuration: d.configuration.clone(),
            removed: true,
        })
        .collect()
}
