//! `ALTER TABLE ... RENAME COLUMN` and `DROP COLUMN` through column mapping (PROTOCOL.md
//! "Column Mapping"): in name (or id) mode data files store columns under physical names
//! that never change, so renaming or dropping a column changes only the schema. A table
//! without column mapping gets it in the same commit, in name mode, every existing column
//! keeping its current name as physical name (what its data files store), with the protocol
//! upgraded as "Writer Requirements for Column Mapping" says: reader 2 / writer 5 on a
//! legacy table, or `columnMapping` in both feature lists on a table-features one.

use crate::Snapshot;
use alluvium_mvcc::Transaction;
use alluvium_txlog::clustering::{clustering_columns, logical_names};
use alluvium_txlog::column_mapping::ColumnMappingMode;
use alluvium_txlog::features::upgrade_protocol;
use alluvium_txlog::properties::STATS_COLUMNS;
use alluvium_txlog::schema::StructType;
use alluvium_txlog::table::TableFeature;

use super::{find_field, refuse_dependents, stats_columns_after};
use crate::commit::WriteOptions;
use crate::ops::alter::enable_name_mapping;
use crate::report::CommitSummary;
use crate::{Error, Result, Table};

/// A transaction on `snapshot` whose metadata will have column mapping: the schema and
/// metadata to change, and the upgraded protocol when mapping is turned on now.
struct Mapped {
    schema: StructType,
    metadata: alluvium_txlog::actions::Metadata,
    protocol: Option<alluvium_txlog::actions::Protocol>,
}

/// The schema and metadata of `snapshot` with column mapping on: as they are when the table
/// has a mode, else with name mode enabled (and the protocol upgraded).
fn with_mapping(snapshot: &Snapshot) -> Mapped {
    let mut schema = snapshot.schema().clone();
    let mut metadata = snapshot.metadata().clone();
    let mut protocol = None;
    if snapshot.column_mapping() == ColumnMappingMode::None {
        enable_name_mapping(&mut metadata, &mut schema);
        let upgraded = upgrade_protocol(snapshot.protocol(), &[TableFeature::ColumnMapping]);
        if &upgraded != snapshot.protocol() {
            protocol = Some(upgraded);
        }
    }
    Mapped {
        schema,
        metadata,
        protocol,
    }
}

/// The table's clustering columns (logical, dotted), if it is clustered.
fn clustering_names(snapshot: &Snapshot) -> Result<Vec<String>> {
    let paths = clustering_columns(snapshot.protocol(), |d| snapshot.state().domains().get(d))?
        .unwrap_or_default();
    Ok(logical_names(
        snapshot.schema(),
        snapshot.column_mapping(),
        &paths,
    )?)
}

fn commit(
    table: &Table,
    snapshot: &Snapshot,
    mapped: Mapped,
    txn: Transaction,
) -> Result<CommitSummary> {
    let mut txn = txn;
    let Mapped {
        schema,
        mut metadata,
        protocol,
    } = mapped;
    metadata.schema_string = schema.to_json();
    if let Some(p) = protocol {
        txn.set_protocol(p);
    }
    // The metadata in force must keep the protocol's rules (IcebergCompat, ...).
    alluvium_txlog::features::check_write_supported(
        txn.effective_protocol().unwrap_or(snapshot.protocol()),
        &metadata,
        &schema,
    )?;
    txn.set_metadata(metadata);
    table.commit_with_policy(txn)
}

impl Table {
    /// Renames the top-level column `old` to `new` in one commit (operation `RENAME
    /// COLUMN`, parameters `oldColumnPath` and `newColumnPath`), without rewriting data:
    /// the column keeps its physical name. A table without column mapping gets it (name
    /// mode, see the module documentation) in the same commit. A partition column is
    /// renamed in `partitionColumns` too, and a `delta.dataSkippingStatsColumns` entry
    /// naming the column follows it (as Delta does). A change of case only is a rename.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the table has no column `old`, already has a column
    /// `new` (names are case-insensitive), `new` is empty, or a CHECK constraint or a
    /// generation expression reads `old` (it would no longer mean what it meant; Delta
    /// refuses too); unsupported writer features; commit conflicts.
    pub fn rename_column(&self, old: &str, new: &str) -> Result<CommitSummary> {
        let snapshot = self.read_snapshot(&WriteOptions::default())?;
        let old_name = find_field(&snapshot, old)?.name.clone();
        let new = new.trim();
        if new.is_empty() {
            return Err(Error::InvalidArgument(
                "the new column name is empty".into(),
            ));
        }
        if new == old_name {
            return Err(Error::InvalidArgument(format!(
                "column `{old_name}` already has that name"
            )));
        }
        if let Some(other) = snapshot.schema().field(new)
            && !other.name.eq_ignore_ascii_case(&old_name)
        {
            return Err(Error::InvalidArgument(format!(
                "cannot rename `{old_name}` to `{new}`: the table has a column `{}`",
                other.name
            )));
        }
        refuse_dependents(&snapshot, &old_name, "rename")?;
        let mut mapped = with_mapping(&snapshot);
        for f in &mut mapped.schema.fields {
            if f.name == old_name {
                f.name = new.to_string();
            }
        }
        for p in &mut mapped.metadata.partition_columns {
            if *p == old_name {
                *p = new.to_string();
            }
        }
        if let Some(list) =
            stats_columns_after(&mapped.metadata.configuration, &old_name, Some(new))
        {
            mapped
                .metadata
                .configuration
                .insert(STATS_COLUMNS.into(), list);
        }
        let mut txn = Transaction::new(snapshot.inner(), "RENAME COLUMN");
        txn.set_parameter("oldColumnPath", old_name.as_str());
        txn.set_parameter("newColumnPath", new);
        commit(self, &snapshot, mapped, txn)
    }

    /// Drops the top-level column `name` in one commit (operation `DROP COLUMNS`, parameter
    /// `columns`), without rewriting data: the data files keep the column under its
    /// physical name, which no later column reuses, and readers no longer see it. A table
    /// without column mapping gets it (name mode, see the module documentation) in the
    /// same commit. A `delta.dataSkippingStatsColumns` entry naming the column is removed.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the table has no such column, or the column is a
    /// partition column, a clustering column, the last data column, or read by a CHECK
    /// constraint or a generation expression (Delta refuses all of these); unsupported
    /// writer features; commit conflicts.
    pub fn drop_column(&self, name: &str) -> Result<CommitSummary> {
        let snapshot = self.read_snapshot(&WriteOptions::default())?;
        let column = find_field(&snapshot, name)?.name.clone();
        if snapshot
            .partition_columns()
            .iter()
            .any(|p| p.eq_ignore_ascii_case(&column))
        {
            return Err(Error::InvalidArgument(format!(
                "cannot drop partition column `{column}`: partition columns cannot be dropped"
            )));
        }
        if clustering_names(&snapshot)?
            .iter()
            .any(|c| c.split('.').next() == Some(column.as_str()))
        {
            return Err(Error::InvalidArgument(format!(
                "cannot drop clustering column `{column}`: change the clustering columns first"
            )));
        }
        let data_columns = snapshot.schema().fields.len() - snapshot.partition_columns().len();
        if data_columns <= 1 {
            return Err(Error::InvalidArgument(format!(
                "cannot drop `{column}`: it is the table's last data column"
            )));
        }
        refuse_dependents(&snapshot, &column, "drop")?;
        let mut mapped = with_mapping(&snapshot);
        mapped.schema.fields.retain(|f| f.name != column);
        match stats_columns_after(&mapped.metadata.configuration, &column, None) {
            // The list named only this column: without the property every column (up to
            // the indexed count) gets statistics again, as before the list was set.
            Some(list) if list.is_empty() => {
                mapped.metadata.configuration.remove(STATS_COLUMNS);
            }
            Some(list) => {
                mapped
                    .metadata
                    .configuration
                    .insert(STATS_COLUMNS.into(), list);
            }
            None => {}
        }
        let mut txn = Transaction::new(snapshot.inner(), "DROP COLUMNS");
        txn.set_parameter(
            "columns",
            serde_json::Value::Array(vec![column.clone().into()]).to_string(),
        );
        commit(self, &snapshot, mapped, txn)
    }
}
