//! Overwrite with the data's schema (Delta's `overwriteSchema`, deltalake's
//! `schema_mode="overwrite"`): the table's rows, schema and partitioning are replaced in one
//! commit, its identity (id, name, properties, history) kept. The data files are written as
//! a whole-table overwrite writes them ([`WritePlan`] with the new schema); the commit adds a
//! `metaData` action (and a `protocol` when a new column's type needs a table feature).

use alluvium_mvcc::Transaction;
use alluvium_txlog::column_mapping::{ColumnMappingMode, assign_column_mapping};
use alluvium_txlog::features::{check_write_supported, upgrade_protocol};
use alluvium_txlog::properties::{COLUMN_MAPPING_MAX_ID, TableProperties};
use alluvium_txlog::schema::from_arrow_schema;
use alluvium_txlog::table::{TableFeature, clustering};
use arrow_schema::Schema;

use super::plan::{Removal, WriteMode, WritePlan};
use crate::commit::{WriteOptions, WriteOutcome, outcome_if_done};
use crate::ops::columns::type_features;
use crate::ops::create::check_partition_columns;
use crate::rows::source::{self, IntoBatch};
use crate::{Error, Result, Table};

impl Table {
    /// Replaces the table's rows AND its schema with `batches` of Arrow `schema` (Delta's
    /// `overwriteSchema`): columns may be added, dropped, retyped or reordered, and the
    /// partitioning changes to `partition_by` (`None` keeps the table's, which must then be
    /// columns of `schema`). Every live file is removed in the same commit, which also
    /// carries the new `metaData`: the table id, name, description and properties
    /// (constraints included, which the new rows must then satisfy) are kept.
    ///
    /// * On a table with column mapping every column gets a fresh id above
    ///   `delta.columnMapping.maxColumnId` and a fresh physical name, so no old file's
    ///   columns can be read as the new ones (PROTOCOL.md "Writer Requirements for Column
    ///   Mapping").
    /// * A type that needs a table feature (`timestamp_ntz`, `variant`, geospatial types)
    ///   upgrades the protocol in the same commit; the protocol is never downgraded.
    /// * Field metadata of the Arrow schema is not taken (as `create_with_data`): generated
    ///   and identity columns of the old schema are gone with it.
    /// * A clustered table is refused: its clustering columns would name columns of the
    ///   old schema.
    ///
    /// Concurrent commits conflict with it as with any metadata change.
    ///
    /// ```no_run
    /// # fn main() -> alluvium::Result<()> {
    /// use std::sync::Arc;
    /// use alluvium::{Table, WriteOptions};
    /// use arrow::array::{Int64Array, StringArray};
    /// use arrow::datatypes::{DataType, Field, Schema};
    /// use arrow::record_batch::RecordBatch;
    /// let schema = Arc::new(Schema::new(vec![
    ///     Field::new("id", DataType::Int64, false),
    ///     Field::new("name", DataType::Utf8, true),
    /// ]));
    /// let batch = RecordBatch::try_new(
    ///     schema.clone(),
    ///     vec![Arc::new(Int64Array::from(vec![1])), Arc::new(StringArray::from(vec!["a"]))],
    /// )?;
    /// let table = Table::open("path/to/table")?;
    /// table.overwrite_with_schema(&schema, [batch], None, &WriteOptions::default())?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// A schema no table can have (no column, a name twice, an unsupported type); partition
    /// columns that are not primitive columns of it; a clustered table; a schema the table's
    /// features forbid (IcebergCompat); constraints the new rows violate or whose columns
    /// are gone; as [`overwrite`](Self::overwrite) otherwise.
    pub fn overwrite_with_schema<I>(
        &self,
        schema: &Schema,
        batches: I,
        partition_by: Option<&[String]>,
        options: &WriteOptions,
    ) -> Result<WriteOutcome>
    where
        I: IntoIterator,
        I::Item: IntoBatch,
    {
        let snapshot = self.read_snapshot(options)?;
        let mut txn = Transaction::new(snapshot.inner(), "WRITE");
        if let Some(o) = outcome_if_done(&mut txn, &snapshot, options) {
            return Ok(o);
        }
        if let Some(paths) = clustering::clustering_columns(snapshot.protocol(), |d| {
            snapshot.state().domains().get(d)
        })? && !paths.is_empty()
        {
            return Err(Error::InvalidArgument(
                "the table is clustered: overwriting its schema would leave clustering columns of the old schema; recluster it by nothing first"
                    .into(),
            ));
        }
        let mut new_schema = from_arrow_schema(schema)?;
        for f in &mut new_schema.fields {
            f.metadata.clear();
        }
        if new_schema.fields.is_empty() {
            return Err(Error::InvalidArgument(
                "a table needs at least one column".into(),
            ));
        }
        crate::rows::input::check_distinct_fields(&new_schema)?;
        let partitions = check_partition_columns(
            &new_schema,
            partition_by.unwrap_or(snapshot.partition_columns()),
        )?;
        let mut md = snapshot.metadata().clone();
        if snapshot.column_mapping() != ColumnMappingMode::None {
            let max = TableProperties(&md.configuration).column_mapping_max_id();
            let max = assign_column_mapping(&mut new_schema, max);
            md.configuration
                .insert(COLUMN_MAPPING_MAX_ID.into(), max.to_string());
        }
        md.schema_string = new_schema.to_json();
        md.partition_columns = partitions.clone();
        let features: Vec<TableFeature> =
            new_schema.fields.iter().flat_map(type_features).collect();
        let protocol = upgrade_protocol(snapshot.protocol(), &features);
        check_write_supported(&protocol, &md, &new_schema)
            .map_err(|e| Error::InvalidArgument(format!("cannot overwrite the schema: {e}")))?;
        // The table's constraints must hold over the new schema: one naming a dropped column
        // is the caller's to drop first (the write would build the same rules later).
        crate::rows::rules::ColumnRules::of_table(
            &protocol,
            &partitions,
            snapshot.column_mapping(),
            &new_schema,
            &md.configuration,
        )
        .map_err(|e| Error::InvalidArgument(format!("cannot overwrite the schema: {e}")))?;
        if &protocol != snapshot.protocol() {
            txn.set_protocol(protocol);
        }
        txn.set_metadata(md);
        txn.set_parameter("mode", "Overwrite");
        txn.set_parameter(
            "partitionBy",
            serde_json::to_string(&partitions).unwrap_or_default(),
        );
        let plan = WritePlan {
            mode: WriteMode::Overwrite(None),
            partition_columns: partitions,
            schema: new_schema,
            new_columns: Vec::new(),
            replace_where: None,
            removal: Removal::WholeTable,
        };
        self.write_planned(&snapshot, txn, source::batches(batches), plan, options)
    }
}
