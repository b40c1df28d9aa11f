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

use crate::commit::{WriteOptions, WriteOutcome, finish, outcome_if_done};
use crate::report::CommitSummary;
use crate::{Error, Result, Table};

/// The table features a column of `field`'s type needs (PROTOCOL.md "Timestamp without
/// timezone (TimestampNtz)", "Variant Data Type", "Geospatial").
pub(crate) fn type_features(field: &StructField) -> Vec<TableFeature> {
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
        self.add_columns(vec![field], &WriteOptions::default())?
            .into_committed("ADD COLUMNS")
    }

    /// [`add_column`](Self::add_column) for several columns at once, in ONE commit, in the
    /// order given (Delta's `ALTER TABLE ... ADD COLUMNS (a ..., b ...)`), with the
    /// options every write takes (`commitInfo` fields, an application transaction: a
    /// change the application already committed is [`WriteOutcome::Skipped`]). The rules
    /// are `add_column`'s for each column; two columns of one name (case-insensitively)
    /// are refused, and nothing is committed when any column is refused.
    ///
    /// ```no_run
    /// # fn main() -> alluvium::Result<()> {
    /// use alluvium::{Table, WriteOptions, parse_column_definition};
    /// let table = Table::open("path/to/table")?;
    /// let columns = vec![
    ///     parse_column_definition("country string")?,
    ///     parse_column_definition("score double")?,
    /// ];
    /// table.add_columns(columns, &WriteOptions::default())?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// As [`add_column`](Self::add_column); no column, or a name given twice; options not
    /// valid for a write.
    pub fn add_columns(
        &self,
        fields: Vec<StructField>,
        options: &WriteOptions,
    ) -> Result<WriteOutcome> {
        let snapshot = self.read_snapshot(options)?;
        if fields.is_empty() {
            return Err(Error::InvalidArgument(
                "ADD COLUMNS needs at least one column".into(),
            ));
        }
        // Before the fields are checked: a retried job's columns are already there.
        let mut txn = Transaction::new(snapshot.inner(), "ADD COLUMNS");
        if let Some(done) = outcome_if_done(&mut txn, &snapshot, options) {
            return Ok(done);
        }
        let mut md = snapshot.metadata().clone();
        let mut schema = snapshot.schema().clone();
        let mut added: Vec<StructField> = Vec::with_capacity(fields.len());
        for mut field in fields {
            field.name = field.name.trim().to_string();
            if field.name.is_empty() {
                return Err(Error::InvalidArgument("a column needs a name".into()));
            }
            // The schema grows as columns are added: a name given twice is found too.
            if let Some(existing) = schema.field(&field.name) {
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
            if snapshot.column_mapping() != ColumnMappingMode::None {
                let mut one = StructType::new(vec![field]);
                let max_id = TableProperties(&md.configuration).column_mapping_max_id();
                let max = assign_column_mapping(&mut one, max_id);
                md.configuration
                    .insert(COLUMN_MAPPING_MAX_ID.into(), max.to_string());
                field = one.fields.remove(0);
            }
            schema.fields.push(field.clone());
            added.push(field);
        }
        let features: Vec<TableFeature> = added.iter().flat_map(type_features).collect();
        let shown: Vec<serde_json::Value> = added
            .iter()
            .map(|field| {
                serde_json::json!({ "column": {
                    "name": field.name,
                    "type": field.data_type.to_string(),
                    "nullable": field.nullable,
                    "metadata": field.metadata,
                }})
            })
            .collect();
        md.schema_string = schema.to_json();
        let protocol = upgrade_protocol(snapshot.protocol(), &features);
        check_write_supported(&protocol, &md, &schema)
            .map_err(|e| Error::InvalidArgument(format!("cannot add the column: {e}")))?;
        txn.set_parameter("columns", serde_json::Value::Array(shown).to_string());
        if &protocol != snapshot.protocol() {
            txn.set_protocol(protocol);
        }
        txn.set_metadata(md);
        finish(self, txn, options)
    }
}
