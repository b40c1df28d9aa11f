//! CREATE TABLE, empty or with its first rows (CREATE TABLE AS SELECT), and the table
//! properties as the public API takes them (shared by every operation that sets them).
//!
//! It owns the checks of a new table's schema, partitioning and properties and the choice of
//! its minimal protocol; it must not know the operations that write to an existing table.

use std::collections::HashMap;

use alluvium_datafile::sink::{FileSink, FileSinkOptions, SinkTable};
use alluvium_mvcc::Transaction;
use alluvium_txlog::actions::{Format, Metadata};
use alluvium_txlog::column_mapping::{ColumnMappingMode, assign_column_mapping};
use alluvium_txlog::features::minimal_protocol;
use alluvium_txlog::properties::{COLUMN_MAPPING_MAX_ID, COLUMN_MAPPING_MODE, is_protocol_request};
use alluvium_txlog::schema::{StructType, from_arrow_schema};
use arrow_schema::Schema;

use crate::commit::{
    AppTransaction, WriteOptions, WriteOutcome, check_options, finish, set_options,
    with_write_codec,
};
use crate::report::{CommitSummary, PostCommit};
use crate::rows::source::{self, IntoBatch};
use crate::rows::{Conform, feed, input, rules};
use crate::{Error, Result, Table};

/// Table properties as the public API takes them (any `IntoIterator` of key-value pairs
/// whose parts convert into `String`: a `HashMap` or `BTreeMap` by value or by reference,
/// an array or `Vec` of pairs) collected into the map the log stores. A key given twice
/// keeps its last value, as inserting into a map would.
pub(crate) fn collect_properties<K, V>(
    properties: impl IntoIterator<Item = (K, V)>,
) -> HashMap<String, String>
where
    K: Into<String>,
    V: Into<String>,
{
    properties
        .into_iter()
        .map(|(k, v)| (k.into(), v.into()))
        .collect()
}

/// No table properties, for the methods that take them
/// ([`Table::create`], [`Table::set_properties`], [`Transaction::set_properties`](crate::Transaction::set_properties)):
/// an empty array of pairs, typed, since a bare `[]` leaves the pair type to infer.
pub const NO_PROPERTIES: [(&str, &str); 0] = [];

/// The Delta schema of an Arrow schema given to create or replace a table, without the
/// Arrow fields' metadata: a table's column rules (generated and identity columns,
/// defaults) and column-mapping ids come from its own log, never from the data's schema.
pub(crate) fn schema_of_arrow(schema: &Schema) -> Result<StructType> {
    let mut delta_schema = from_arrow_schema(schema)?;
    for f in &mut delta_schema.fields {
        f.metadata.clear();
    }
    Ok(delta_schema)
}

/// Refuses property values the engine would ignore (see
/// [`alluvium_txlog::properties::validate_property`]).
pub(crate) fn check_properties(props: &HashMap<String, String>) -> Result<()> {
    // Sorted, so that with several bad values the error names the same one every time.
    let mut entries: Vec<(&String, &String)> = props.iter().collect();
    entries.sort();
    for (k, v) in entries {
        alluvium_txlog::properties::validate_property(k, v)
            .map_err(|why| Error::InvalidArgument(format!("table property {k}={v}: {why}")))?;
    }
    Ok(())
}

impl Table {
    /// Creates the table (version 0) with `schema`, `partition_by` and table `properties`,
    /// with the minimal protocol for what they use.
    ///
    /// Properties come in the one shape every method that takes them accepts: key-value
    /// pairs, from a map or a list ([`NO_PROPERTIES`] for none).
    ///
    /// ```no_run
    /// # fn main() -> alluvium::Result<()> {
    /// use alluvium::arrow::datatypes::{DataType, Field, Schema};
    /// let table = alluvium::Table::open("path/to/table")?;
    /// let schema = Schema::new(vec![Field::new("id", DataType::Int64, false)]);
    /// table.create(&schema, &[], [("delta.appendOnly", "true")])?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::AlreadyExists`](crate::ErrorKind::AlreadyExists) if a table exists (even
    /// one created concurrently); invalid schemas, partition columns or property values.
    pub fn create<K, V>(
        &self,
        schema: &Schema,
        partition_by: &[String],
        properties: impl IntoIterator<Item = (K, V)>,
    ) -> Result<CommitSummary>
    where
        K: Into<String>,
        V: Into<String>,
    {
        let delta_schema = schema_of_arrow(schema)?;
        self.create_with_schema(delta_schema, partition_by, properties)
    }

    /// [`create`](Self::create) from a Delta schema.
    ///
    /// # Errors
    /// As [`create`](Self::create).
    pub fn create_with_schema<K, V>(
        &self,
        schema: StructType,
        partition_by: &[String],
        properties: impl IntoIterator<Item = (K, V)>,
    ) -> Result<CommitSummary>
    where
        K: Into<String>,
        V: Into<String>,
    {
        let properties = collect_properties(properties);
        let (protocol, metadata) = self.new_table(schema, partition_by, &properties, 0)?;
        let mut txn = Transaction::create(self.store().clone(), "CREATE TABLE");
        set_create_parameters(&mut txn, &metadata.partition_columns, &properties);
        txn.set_protocol(protocol);
        txn.set_metadata(metadata);
        // Creating runs no post-commit work: version 0 is never due a checkpoint.
        Ok(CommitSummary::new(txn.commit()?, PostCommit::default()))
    }

    /// [`create`](Self::create) with the commit fields of `options`: `user_metadata`,
    /// `commit_info` (deltalake's `CommitProperties.custom_metadata`), an `app_transaction`
    /// recorded in version 0, the retry policy. The settings for rows (codec, file size)
    /// have nothing to apply to.
    ///
    /// ```no_run
    /// # fn main() -> alluvium::Result<()> {
    /// use alluvium::arrow::datatypes::{DataType, Field, Schema};
    /// use alluvium::{NO_PROPERTIES, Table, WriteOptions};
    /// let table = Table::open("path/to/table")?;
    /// let schema = Schema::new(vec![Field::new("id", DataType::Int64, false)]);
    /// let options = WriteOptions::default().with_user_metadata("nightly load");
    /// table.create_with_options(&schema, &[], NO_PROPERTIES, &options)?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// As [`create`](Self::create); a reserved `commit_info` name.
    pub fn create_with_options<K, V>(
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
        let properties = collect_properties(properties);
        self.create_empty(
            delta_schema,
            partition_by,
            &properties,
            options,
            "CREATE TABLE",
        )
    }

    /// Commits version 0 of an empty table under `operation`, with `options`' commit
    /// fields.
    pub(crate) fn create_empty(
        &self,
        schema: StructType,
        partition_by: &[String],
        properties: &HashMap<String, String>,
        options: &WriteOptions,
        operation: &str,
    ) -> Result<WriteOutcome> {
        check_options(options)?;
        alluvium_mvcc::transaction::check_can_commit(self.store().as_ref())?;
        let (protocol, metadata) = self.new_table(schema, partition_by, properties, 0)?;
        let mut txn =
            self.begin_create(operation, &metadata.partition_columns, properties, options);
        txn.set_protocol(protocol);
        txn.set_metadata(metadata);
        finish(self, txn, options)
    }

    /// Creates the table with `batches` as its first rows, in one commit (version 0,
    /// operation `CREATE TABLE AS SELECT`): the schema, partitioning and properties of
    /// [`create`](Self::create), the input streamed as by [`append`](Self::append). Nothing
    /// is left behind when it fails, including when another writer created the table first.
    ///
    /// # Errors
    /// As [`create`](Self::create) (`TableAlreadyExists` when a table exists, even one
    /// created concurrently) and [`append`](Self::append).
    pub fn create_with_data<I, K, V>(
        &self,
        schema: &Schema,
        partition_by: &[String],
        properties: impl IntoIterator<Item = (K, V)>,
        batches: I,
        options: &WriteOptions,
    ) -> Result<WriteOutcome>
    where
        I: IntoIterator,
        I::Item: IntoBatch,
        K: Into<String>,
        V: Into<String>,
    {
        let properties = &collect_properties(properties);
        check_options(options)?;
        alluvium_mvcc::transaction::check_can_commit(self.store().as_ref())?;
        let delta_schema = schema_of_arrow(schema)?;
        let (protocol, metadata) = self.new_table(delta_schema, partition_by, properties, 0)?;
        // With column mapping on, the schema now carries ids and physical names.
        let schema = StructType::from_json(&metadata.schema_string)?;
        let partitions = metadata.partition_columns.clone();
        let mapping = ColumnMappingMode::of(&protocol, &metadata);
        let mut txn = self.begin_create("CREATE TABLE AS SELECT", &partitions, properties, options);
        let rules = rules::ColumnRules::of_table(
            &protocol,
            &partitions,
            mapping,
            &schema,
            &metadata.configuration,
        )?;
        let target = input::logical_schema(&schema)?;
        // The data files take the write's codec, when it names one; the table's properties
        // are committed as given.
        let file_configuration = with_write_codec(metadata.configuration.clone(), options);
        let mut sink = FileSink::new(
            SinkTable {
                store: self.store().as_ref(),
                schema: &schema,
                partition_columns: &partitions,
                configuration: &file_configuration,
                column_mapping: mapping,
            },
            FileSinkOptions {
                target_size: options.target_file_size,
                data_change: true,
            },
        )?
        .materialize_partition_columns(
            alluvium_txlog::features::materializes_partition_columns(&protocol, &metadata),
        )?;
        let to = Conform {
            schema: &schema,
            partitions: &partitions,
            target: &target,
            rules: &rules,
        };
        let rows = match feed(&mut sink, source::batches(batches), &to, |_| Ok(())) {
            Ok(rows) => rows,
            Err(e) => {
                sink.abort();
                return Err(e);
            }
        };
        let (adds, elapsed) = sink.finish()?;
        txn.add_write_time(elapsed);
        txn.set_protocol(protocol);
        txn.set_metadata(metadata);
        txn.set_metric("numFiles", adds.len());
        txn.set_metric("numOutputRows", rows);
        txn.set_metric("numOutputBytes", adds.iter().map(|a| a.size).sum::<i64>());
        for a in adds {
            txn.add_file(a);
        }
        // A failed commit (another writer created the table first) deletes the files.
        finish(self, txn, options)
    }

    /// The transaction of version 0 under `operation`: the new table's `commitInfo`
    /// parameters and `options`' commit fields, its application transaction recorded.
    fn begin_create(
        &self,
        operation: &str,
        partitions: &[String],
        properties: &HashMap<String, String>,
        options: &WriteOptions,
    ) -> Transaction {
        let mut txn = Transaction::create(self.store().clone(), operation);
        set_create_parameters(&mut txn, partitions, properties);
        set_options(&mut txn, options);
        if let Some(AppTransaction { app_id, version }) = &options.app_transaction {
            txn.set_app_transaction(app_id, *version, self.store().now_ms());
        }
        txn
    }

    /// The protocol and metadata of a new table, once `schema`, `partition_by` and
    /// `properties` are checked: the minimal protocol for what they use, column-mapping ids
    /// and physical names assigned when the properties ask for a mapping mode, row
    /// tracking's hidden column names. Column ids start above `column_id_floor` (0 for a
    /// new table; a replaced table's `maxColumnId`, so that no id is handed out twice).
    pub(crate) fn new_table(
        &self,
        mut schema: StructType,
        partition_by: &[String],
        properties: &HashMap<String, String>,
        column_id_floor: i64,
    ) -> Result<(alluvium_txlog::actions::Protocol, Metadata)> {
        check_properties(properties)?;
        let partitions = check_table_schema(&schema, partition_by)?;
        let mut configuration: HashMap<String, String> = properties
            .iter()
            .filter(|(k, _)| !is_protocol_request(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let protocol = minimal_protocol(&schema, properties);
        // Enabling row tracking names its hidden materialised columns (PROTOCOL.md "Row
        // Tracking").
        alluvium_txlog::row_tracking::assign_materialized_columns(&mut configuration);
        if configuration
            .get(COLUMN_MAPPING_MODE)
            .and_then(|m| ColumnMappingMode::parse(m))
            .is_some_and(ColumnMappingMode::is_mapped)
        {
            let max = assign_column_mapping(&mut schema, column_id_floor);
            configuration.insert(COLUMN_MAPPING_MAX_ID.into(), max.to_string());
        }
        let metadata = Metadata {
            id: alluvium_storage::ids::new_uuid().to_string(),
            name: None,
            description: None,
            format: Format::default(),
            schema_string: schema.to_json(),
            partition_columns: partitions,
            created_time: Some(self.store().now_ms()),
            configuration,
        };
        Ok((protocol, metadata))
    }
}

/// The `commitInfo` parameters of a new table.
pub(crate) fn set_create_parameters(
    txn: &mut Transaction,
    partitions: &[String],
    properties: &HashMap<String, String>,
) {
    txn.set_parameter(
        "partitionBy",
        serde_json::to_string(partitions).unwrap_or_default(),
    );
    txn.set_parameter(
        "properties",
        serde_json::to_string(properties).unwrap_or_default(),
    );
}

/// Checks `schema` and `partition_by` as a table's (a new one's, or the one an overwrite
/// of the schema gives): at least one column, no field named twice at any depth (a schema
/// every reader refuses), and partition columns that are top-level columns of a primitive
/// type, none listed twice (case-insensitively), with at least one data column left.
/// Returns the partition columns as `schema` spells them.
///
/// # Errors
/// [`Error::InvalidArgument`] naming the column and the rule; the duplicate-field error.
pub(crate) fn check_table_schema(
    schema: &StructType,
    partition_by: &[String],
) -> Result<Vec<String>> {
    if schema.fields.is_empty() {
        return Err(Error::InvalidArgument(
            "a table needs at least one column".into(),
        ));
    }
    crate::rows::input::check_distinct_fields(schema)?;
    let mut partitions: Vec<String> = Vec::new();
    for p in partition_by {
        let f = schema.field(p).ok_or_else(|| {
            Error::InvalidArgument(format!("partition column `{p}` is not in the schema"))
        })?;
        // Column names are case-insensitive: `a,A` names one column twice.
        if partitions.iter().any(|q| q.eq_ignore_ascii_case(&f.name)) {
            return Err(Error::InvalidArgument(format!(
                "partition column `{p}` is listed twice"
            )));
        }
        if f.data_type.as_primitive().is_none() {
            return Err(Error::InvalidArgument(format!(
                "partition column `{p}` must be of a primitive type"
            )));
        }
        partitions.push(f.name.clone());
    }
    if partitions.len() == schema.fields.len() {
        return Err(Error::InvalidArgument(
            "every column is a partition column: a table needs at least one data column".into(),
        ));
    }
    Ok(partitions)
}
