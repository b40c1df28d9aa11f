//! `ALTER TABLE ... ADD COLUMNS`: a new top-level column at the end of the schema, null in
//! every existing row (readers fill columns missing from data files with nulls: PROTOCOL.md
//! "Consistency Between Table Metadata and Data Files").

use alluvium_mvcc::Transaction;
use alluvium_txlog::column_mapping::{ColumnMappingMode, assign_column_mapping};
use alluvium_txlog::features::{check_write_supported, upgrade_protocol};
use alluvium_txlog::properties::{COLUMN_MAPPING_MAX_ID, TableProperties};
use alluvium_txlog::schema::{
    COLUMN_MAPPING_ID, COLUMN_MAPPING_PHYSICAL_NAME, DataType, PrimitiveType, StructField,
    StructType,
};
use alluvium_txlog::table::TableFeature;

use crate::commit::WriteOptions;
use crate::report::CommitSummary;
use crate::{Error, Result, Table};

/// The table features a column of `field`'s type needs (PROTOCOL.md "Timestamp without
/// timezone (TimestampNtz)", "Variant Data Type", "Geospatial").
fn type_features(field: &StructField) -> Vec<TableFeature> {
    let mut out = Vec::new();
    let has = |p: PrimitiveType| field.data_type.any_primitive(&mut |t| t == p);
    if has(PrimitiveType::TimestampNtz) {
        out.push(TableFeature::TimestampNtz);
    }
    if has(PrimitiveType::Variant) {
        out.push(TableFeature::VariantType);
    }
    if field
        .data_type
        .any_type(&mut |t| matches!(t, DataType::Geospatial(_)))
    {
        out.push(TableFeature::Geospatial);
    }
    out
}

impl Table {
    /// Adds `field` as the last top-level column, in one commit (operation `ADD COLUMNS`,
    /// parameter `columns` as Delta records it). Existing rows read it as NULL. Build the
    /// field with [`StructField::new`] or parse SQL's column text with
    /// [`parse_column_definition`](crate::parse_column_definition); a `comment` in its
    /// metadata is kept.
    ///
    /// * A non-nullable column (`NOT NULL`) is accepted only while the table has no data
    ///   file: existing rows would violate it (Delta's rule).
    /// * On a table with column mapping the column gets an id above
    ///   `delta.columnMapping.maxColumnId` (raised) and a fresh physical name, so its
    ///   physical path is unique across the table's history (PROTOCOL.md "Writer
    ///   Requirements for Column Mapping"); any mapping keys in `field` are replaced.
    /// * A type that needs a table feature (`timestamp_ntz`, `variant`, geospatial types)
    ///   upgrades the protocol in the same commit.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an empty name, a name the table has (names are
    /// case-insensitive), a non-nullable column on a table with data, a type the table
    /// cannot hold (IcebergCompat rules); unsupported writer features; commit conflicts.
    pub fn add_column(&self, field: StructField) -> Result<CommitSummary> {
        let snapshot = self.read_snapshot(&WriteOptions::default())?;
        let mut field = field;
        field.name = field.name.trim().to_string();
        if field.name.is_empty() {
            return Err(Error::InvalidArgument("a column needs a name".into()));
        }
        if let Some(existing) = snapshot.schema().field(&field.name) {
            return Err(Error::InvalidArgument(format!(
                "the table already has a column `{}`",
                existing.name
            )));
        }
        if !field.nullable && snapshot.num_files() > 0 {
            return Err(Error::InvalidArgument(format!(
                "cannot add NOT NULL column `{}`: the table has rows, which would hold NULL in it; add it as nullable",
                field.name
            )));
        }
        field.metadata.remove(COLUMN_MAPPING_ID);
        field.metadata.remove(COLUMN_MAPPING_PHYSICAL_NAME);
        let mut md = snapshot.metadata().clone();
        let mut schema = snapshot.schema().clone();
        if snapshot.column_mapping() != ColumnMappingMode::None {
            let mut one = StructType::new(vec![field]);
            let max_id = TableProperties(&md.configuration).column_mapping_max_id();
            let max = assign_column_mapping(&mut one, max_id);
            md.configuration
                .insert(COLUMN_MAPPING_MAX_ID.into(), max.to_string());
            field = one.fields.remove(0);
        }
        let features = type_features(&field);
        let shown = serde_json::json!([{ "column": {
            "name": field.name,
            "type": field.data_type.to_string(),
            "nullable": field.nullable,
            "metadata": field.metadata,
        }}]);
        schema.fields.push(field);
        md.schema_string = schema.to_json();
        let protocol = upgrade_protocol(snapshot.protocol(), &features);
        check_write_supported(&protocol, &md, &schema)
            .map_err(|e| Error::InvalidArgument(format!("cannot add the column: {e}")))?;
        let mut txn = Transaction::new(snapshot.inner(), "ADD COLUMNS");
        txn.set_parameter("columns", shown.to_string());
        if &protocol != snapshot.protocol() {
            txn.set_protocol(protocol);
        }
        txn.set_metadata(md);
        self.commit_with_policy(txn)
    }
}
