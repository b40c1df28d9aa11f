//! Overwrite with the data's schema (Delta's `overwriteSchema`, deltalake's
//! `schema_mode="overwrite"`): the table's rows, schema and partitioning are replaced in one
//! commit, its identity (id, name, properties, history) kept. The data files are written as
//! a whole-table overwrite writes them ([`WritePlan`] with the new schema); the commit adds a
//! `metaData` action (and a `protocol` when a new column's type needs a table feature).

use alluvium_mvcc::Transaction;
use alluvium_txlog::column_mapping::{ColumnMappingMode, assign_column_mapping};
use alluvium_txlog::features::{check_write_supported, upgrade_protocol};
use alluvium_txlog::properties::{COLUMN_MAPPING_MAX_ID, TableProperties};
use alluvium_txlog::schema::StructType;
use alluvium_txlog::table::{TableFeature, clustering};
use arrow_schema::Schema;

use super::plan::{Removal, WriteMode, WritePlan};
use crate::commit::{WriteOptions, WriteOutcome, outcome_if_done};
use crate::ops::columns::type_features;
use crate::ops::create::{check_table_schema, schema_of_arrow};
use crate::rows::source::{self, IntoBatch};
use crate::{Error, Result, Snapshot, Table};

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
        let new_schema = schema_of_arrow(schema)?;
        let partitions = partition_by
            .unwrap_or(snapshot.partition_columns())
            .to_vec();
        let (new_schema, partitions) = stage_schema(&snapshot, &mut txn, new_schema, &partitions)?;
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

/// Stages in `txn` the `metaData` (and, when a type needs a table feature, the `protocol`)
/// of `snapshot`'s table with `schema` and `partition_by` in place of its own, after the
/// checks a new schema needs; returns the schema as committed (with column-mapping ids and
/// physical names on a mapped table) and the partition columns as it spells them.
///
/// # Errors
/// A clustered table; a schema without columns or naming one twice; partition columns that
/// are not primitive columns of it; a schema the table's features forbid; constraints that
/// do not bind to it ([`Error::InvalidArgument`]).
pub(crate) fn stage_schema(
    snapshot: &Snapshot,
    txn: &mut Transaction,
    mut schema: StructType,
    partition_by: &[String],
) -> Result<(StructType, Vec<String>)> {
    if let Some(paths) =
        clustering::clustering_columns(snapshot.protocol(), |d| snapshot.state().domains().get(d))?
        && !paths.is_empty()
    {
        return Err(Error::InvalidArgument(
            "the table is clustered: overwriting its schema would leave clustering columns of the old schema; recluster it by nothing first"
                .into(),
        ));
    }
    let partitions = check_table_schema(&schema, partition_by)?;
    let mut md = snapshot.metadata().clone();
    if snapshot.column_mapping() != ColumnMappingMode::None {
        let max = TableProperties(&md.configuration).column_mapping_max_id();
        let max = assign_column_mapping(&mut schema, max);
        md.configuration
            .insert(COLUMN_MAPPING_MAX_ID.into(), max.to_string());
    }
    md.schema_string = schema.to_json();
    md.partition_columns = partitions.clone();
    let features: Vec<TableFeature> = schema.fields.iter().flat_map(type_features).collect();
    let protocol = upgrade_protocol(snapshot.protocol(), &features);
    check_write_supported(&protocol, &md, &schema)
        .map_err(|e| Error::InvalidArgument(format!("cannot overwrite the schema: {e}")))?;
    // The table's constraints must hold over the new schema: one naming a dropped column is
    // the caller's to drop first (a write builds the same rules when it writes rows).
    crate::rows::rules::ColumnRules::of_table(
        &protocol,
        &partitions,
        snapshot.column_mapping(),
        &schema,
        &md.configuration,
    )
    .map_err(|e| Error::InvalidArgument(format!("cannot overwrite the schema: {e}")))?;
    if &protocol != snapshot.protocol() {
        txn.set_protocol(protocol);
    }
    txn.set_metadata(md);
    Ok((schema, partitions))
}
