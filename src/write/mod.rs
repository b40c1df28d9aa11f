//! Table operations that write: create, append, overwrite (whole table or `replaceWhere`),
//! delete by predicate (copy-on-write). Each is one transaction (SPEC.md §7).
//!
//! An operation reads the latest snapshot, writes its data files, stages the actions and
//! records what it read, then commits through [`alluvium_mvcc::Transaction`]. Conflicts are
//! returned to the caller, typed and saying whether re-running the operation is safe.

pub(crate) mod files;
pub(crate) mod input;
mod replace_dv;
pub(crate) mod rules;
pub(crate) mod source;

use std::collections::HashMap;

use crate::Snapshot;
use alluvium_datafile::sink::{FileSink, FileSinkOptions, SinkTable, discard};
use alluvium_expr::evaluate;
use alluvium_expr::{Expr, FileSummary, Predicate, StatsNeeded, bind, may_match, parse_expr};
use alluvium_mvcc::Transaction;
use alluvium_txlog::actions::{Add, Format, Metadata, Remove};
use alluvium_txlog::column_mapping::{ColumnMappingMode, assign_column_mapping};
use alluvium_txlog::features::minimal_protocol;
use alluvium_txlog::properties::{COLUMN_MAPPING_MAX_ID, COLUMN_MAPPING_MODE, is_protocol_request};
use alluvium_txlog::schema::{StructType, from_arrow_schema};
use alluvium_txlog::stats::FileStats;
use arrow_array::{BooleanArray, RecordBatch};
use arrow_schema::Schema;

pub use alluvium_datafile::DEFAULT_TARGET_FILE_SIZE;
pub use files::{CommitFilesOptions, CommitMode, FileRefusal};
pub use source::IntoBatch;

use crate::commit::{
    AppTransaction, DmlOutcome, WriteOptions, WriteOutcome, check_options, evolve_schema, finish,
    outcome_if_done, set_options,
};
use crate::dml::change_data::{self, ChangeDataWriter, ChangeType};
use crate::report::{CommitSummary, PostCommit};
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
        let mut delta_schema = from_arrow_schema(schema)?;
        for f in &mut delta_schema.fields {
            f.metadata.clear();
        }
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
        let (protocol, metadata) = self.new_table(schema, partition_by, &properties)?;
        let mut txn = Transaction::create(self.store().clone(), "CREATE TABLE");
        set_create_parameters(&mut txn, &metadata.partition_columns, &properties);
        txn.set_protocol(protocol);
        txn.set_metadata(metadata);
        // Creating runs no post-commit work: version 0 is never due a checkpoint.
        Ok(CommitSummary::new(txn.commit()?, PostCommit::default()))
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
        let mut delta_schema = from_arrow_schema(schema)?;
        for f in &mut delta_schema.fields {
            f.metadata.clear();
        }
        let (protocol, metadata) = self.new_table(delta_schema, partition_by, properties)?;
        // With column mapping on, the schema now carries ids and physical names.
        let schema = StructType::from_json(&metadata.schema_string)?;
        let partitions = metadata.partition_columns.clone();
        let mapping = ColumnMappingMode::of(&protocol, &metadata);
        let mut txn = Transaction::create(self.store().clone(), "CREATE TABLE AS SELECT");
        set_create_parameters(&mut txn, &partitions, properties);
        set_options(&mut txn, options);
        if let Some(AppTransaction { app_id, version }) = &options.app_transaction {
            txn.set_app_transaction(app_id, *version, self.store().now_ms());
        }
        let rules = rules::ColumnRules::of_table(
            &protocol,
            &partitions,
            mapping,
            &schema,
            &metadata.configuration,
        )?;
        let target = input::logical_schema(&schema)?;
        let mut sink = FileSink::new(
            SinkTable {
                store: self.store().as_ref(),
                schema: &schema,
                partition_columns: &partitions,
                configuration: &metadata.configuration,
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

    /// The protocol and metadata of a new table, once `schema`, `partition_by` and
    /// `properties` are checked: the minimal protocol for what they use, column-mapping ids
    /// and physical names assigned when the properties ask for a mapping mode, row
    /// tracking's hidden column names.
    fn new_table(
        &self,
        mut schema: StructType,
        partition_by: &[String],
        properties: &HashMap<String, String>,
    ) -> Result<(alluvium_txlog::actions::Protocol, Metadata)> {
        check_properties(properties)?;
        if schema.fields.is_empty() {
            return Err(Error::InvalidArgument(
                "a table needs at least one column".into(),
            ));
        }
        let mut seen = std::collections::HashSet::new();
        for f in &schema.fields {
            if !seen.insert(f.name.to_lowercase()) {
                return Err(Error::InvalidArgument(format!(
                    "duplicate column `{}`",
                    f.name
                )));
            }
        }
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
        let mut configuration: HashMap<String, String> = properties
            .iter()
            .filter(|(k, _)| !is_protocol_request(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let protocol = minimal_protocol(&schema, properties);
        // Enabling row tracking names its hidden materialised columns (PROTOCOL.md "Row
        // Tracking").
        alluvium_txlog::row_tracking::assign_materialized_columns(&mut configuration);
        if matches!(
            configuration
                .get(COLUMN_MAPPING_MODE)
                .map(|m| m.to_ascii_lowercase())
                .as_deref(),
            Some("name" | "id")
        ) {
            let max = assign_column_mapping(&mut schema, 0);
            configuration.insert(COLUMN_MAPPING_MAX_ID.into(), max.to_string());
        }
        let metadata = Metadata {
            id: uuid::Uuid::new_v4().to_string(),
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

    /// Appends `batches` (a blind append unless the schema is merged). The input is
    /// streamed: plain batches, or the `Result` items of a fallible source such as an Arrow
    /// `RecordBatchReader` (see [`IntoBatch`]); a source that fails ends the write with its
    /// error and nothing committed.
    ///
    /// # Errors
    /// Schema mismatches, unsupported writer features, the source's failure, and commit
    /// errors.
    pub fn append<I>(&self, batches: I, options: &WriteOptions) -> Result<WriteOutcome>
    where
        I: IntoIterator,
        I::Item: IntoBatch,
    {
        let snapshot = self.read_snapshot(options)?;
        self.write_batches(&snapshot, batches, options, WriteMode::Append)
    }

    /// Replaces the whole table with `batches`, or, with `predicate`, only the rows matching
    /// it (`replaceWhere`: every new row must match the predicate). The predicate is
    /// recorded in the commit in its text form (`Expr`'s `Display`). On a table that writes
    /// deletion vectors the old matching rows of partially matching files are deleted with
    /// DVs, as DELETE deletes them; otherwise those files are rewritten.
    ///
    /// # Errors
    /// As [`append`](Self::append); predicates over unknown columns; new rows outside the
    /// predicate.
    pub fn overwrite<I>(
        &self,
        batches: I,
        predicate: Option<&Expr>,
        options: &WriteOptions,
    ) -> Result<WriteOutcome>
    where
        I: IntoIterator,
        I::Item: IntoBatch,
    {
        let snapshot = self.read_snapshot(options)?;
        let filter = predicate.map(|e| (e.clone(), e.to_string()));
        self.write_batches(&snapshot, batches, options, WriteMode::Overwrite(filter))
    }

    /// [`overwrite`](Self::overwrite) with the predicate in the `--filter` language
    /// (recorded in the commit as written).
    ///
    /// # Errors
    /// As [`overwrite`](Self::overwrite); predicates that do not parse.
    pub fn overwrite_str<I>(
        &self,
        batches: I,
        predicate: Option<&str>,
        options: &WriteOptions,
    ) -> Result<WriteOutcome>
    where
        I: IntoIterator,
        I::Item: IntoBatch,
    {
        let snapshot = self.read_snapshot(options)?;
        let filter = match predicate {
            Some(p) => Some((parse_expr(p)?, p.to_string())),
            None => None,
        };
        self.write_batches(&snapshot, batches, options, WriteMode::Overwrite(filter))
    }

    /// Deletes the rows matching `predicate`: files whose every row matches are removed
    /// whole; in the others the matching rows are deleted with deletion vectors when the
    /// table enables them (`delta.enableDeletionVectors`), else by rewriting the file
    /// without them. The predicate is recorded in the commit in its text form (`Expr`'s
    /// `Display`). The outcome carries Delta's metrics (`numDeletedRows`,
    /// `numDeletionVectorsAdded`, `numRemovedFiles`, `numCopiedRows`, ...), as UPDATE's and
    /// MERGE's do.
    ///
    /// # Errors
    /// Predicates over unknown columns, append-only tables, unsupported features and commit
    /// errors.
    pub fn delete(&self, predicate: &Expr, options: &WriteOptions) -> Result<DmlOutcome> {
        self.delete_expr(predicate, &predicate.to_string(), options)
    }

    /// [`delete`](Self::delete) with the predicate in the `--filter` language (recorded in
    /// the commit as written).
    ///
    /// # Errors
    /// As [`delete`](Self::delete); predicates that do not parse.
    pub fn delete_str(&self, predicate: &str, options: &WriteOptions) -> Result<DmlOutcome> {
        self.delete_expr(&parse_expr(predicate)?, predicate, options)
    }

    /// Deletes the rows matching `expr`, recording `predicate` as its text.
    fn delete_expr(
        &self,
        expr: &Expr,
        predicate: &str,
        options: &WriteOptions,
    ) -> Result<DmlOutcome> {
        let snapshot = self.read_snapshot(options)?;
        let mut txn = Transaction::new(snapshot.inner(), "DELETE");
        txn.set_parameter(
            "predicate",
            serde_json::to_string(&vec![predicate]).unwrap_or_default(),
        );
        if let Some(o) = outcome_if_done(&mut txn, &snapshot, options) {
            return Ok(DmlOutcome::skipped(o));
        }
        let metrics = crate::dml::delete::stage_delete(
            self,
            &snapshot,
            &mut txn,
            expr,
            options.inline_dv_max_bytes(),
        )?;
        crate::commit::finish_dml(self, txn, options, metrics)
    }

    fn write_batches<I>(
        &self,
        snapshot: &Snapshot,
        batches: I,
        options: &WriteOptions,
        mode: WriteMode,
    ) -> Result<WriteOutcome>
    where
        I: IntoIterator,
        I::Item: IntoBatch,
    {
        let op = "WRITE";
        let mut txn = Transaction::new(snapshot.inner(), op);
        txn.set_parameter(
            "mode",
            if matches!(mode, WriteMode::Append) {
                "Append"
            } else {
                "Overwrite"
            },
        );
        txn.set_parameter(
            "partitionBy",
            serde_json::to_string(snapshot.partition_columns()).unwrap_or_default(),
        );
        if let Some(o) = outcome_if_done(&mut txn, snapshot, options) {
            return Ok(o);
        }
        let mut schema = snapshot.schema().clone();
        let partitions = snapshot.partition_columns().to_vec();
        let mut rest = source::batches(batches);
        // Schema enforcement (and evolution) is decided on the first batch; every batch must
        // then agree with the resulting schema. Nothing is written before it is read.
        let first = rest.next().transpose()?;
        if let Some(first) = &first {
            let new_fields =
                input::check_schema(&schema, &first.schema(), &partitions, options.merge_schema)?;
            evolve_schema(snapshot, &mut txn, &mut schema, new_fields);
        }
        let batches = first.map(Ok).into_iter().chain(rest);
        let replace_text = match &mode {
            WriteMode::Overwrite(Some((_, text))) => Some(text.clone()),
            _ => None,
        };
        let replace_where = match &mode {
            WriteMode::Overwrite(Some((e, text))) => {
                let p = bind(e, &schema, &partitions, snapshot.column_mapping())?;
                txn.set_parameter(
                    "predicate",
                    serde_json::to_string(&vec![text]).unwrap_or_default(),
                );
                Some(p)
            }
            _ => None,
        };
        let target = input::logical_schema(&schema)?;
        let configuration = txn
            .effective_metadata()
            .map(|m| m.configuration.clone())
            .unwrap_or_default();
        // Built before any file is written: a rule alluvium cannot apply exactly refuses
        // the write here.
        let column_rules = rules::ColumnRules::new(snapshot, &schema, &configuration)?;
        // replaceWhere removes the matching rows first, so that it knows whether the commit
        // needs change-data files before the new rows are written: Delta Spark's
        // WriteIntoDelta runs its DELETE first and, when that DELETE wrote cdc files, writes
        // the new rows as `insert` change rows too (a commit with cdc files must hold all
        // its changes, PROTOCOL.md "Change Data Files").
        let changes = match &replace_where {
            Some(_) if !crate::dml::writes_deletion_vectors(snapshot) => {
                change_data::writer_for(self, snapshot, &schema, &configuration, None)?
            }
            _ => None,
        };
        let mut record_inserts = false;
        if let Some(p) = &replace_where {
            txn.read_predicate(p.clone());
            // With deletion vectors the matching rows are deleted as DELETE deletes
            // them (as Delta's replaceWhere runs its DELETE), else files are rewritten.
            let removed = if crate::dml::writes_deletion_vectors(snapshot) {
                replace_dv::delete_matching_with_dvs(
                    self,
                    snapshot,
                    &mut txn,
                    p,
                    options.inline_dv_max_bytes(),
                )
                .map(|_| false)
            } else {
                remove_matching(self, snapshot, &mut txn, p, options, changes.as_ref())
                    .map(|m| m.wrote_changes)
            };
            match removed {
                Ok(w) => record_inserts = w,
                Err(e) => {
                    discard(self.store().as_ref(), txn.added_files());
                    if let Some(c) = changes {
                        c.abort();
                    }
                    return Err(e);
                }
            }
        }
        // The new files' names are made durable by the commit, once for all of them (and
        // once for a whole group commit), not once per file.
        let mut sink = FileSink::new(
            SinkTable {
                store: self.store().as_ref(),
                schema: &schema,
                partition_columns: &partitions,
                configuration: &configuration,
                column_mapping: snapshot.column_mapping(),
            },
            FileSinkOptions {
                target_size: options.target_file_size,
                data_change: true,
            },
        )?
        .materialize_partition_columns(crate::write::materializes(snapshot))?
        .defer_name_sync(true);
        txn.set_names_deferred();
        let result = feed(
            &mut sink,
            batches,
            &Conform {
                schema: &schema,
                partitions: &partitions,
                target: &target,
                rules: &column_rules,
            },
            |b| {
                if let Some(p) = &replace_where {
                    let m = evaluate(p, b)?;
                    if m.true_count() != b.num_rows() {
                        // The first row the predicate does not hold for (FALSE or NULL).
                        let first = (0..m.len())
                            .find(|&i| !(arrow_array::Array::is_valid(&m, i) && m.value(i)))
                            .unwrap_or(0);
                        return Err(Error::InvalidArgument(format!(
                            "replaceWhere: the new row {} does not match the overwrite predicate {}; every new row must",
                            rules::row::render(b, first),
                            replace_text.as_deref().unwrap_or("")
                        )));
                    }
                }
                if record_inserts && let Some(c) = &changes {
                    c.write(b, ChangeType::Insert)?;
                }
                Ok(())
            },
        );
        let rows = *result.as_ref().unwrap_or(&0);
        let finished = match result {
            Err(e) => {
                sink.abort();
                if let Some(c) = changes {
                    c.abort();
                }
                Err(e)
            }
            Ok(_) => match change_data::close(changes, Ok(())) {
                Err(e) => {
                    sink.abort();
                    Err(e)
                }
                Ok(cdcs) => match sink.finish() {
                    Ok(r) => Ok((r, cdcs)),
                    Err(e) => {
                        change_data::discard_files(self.store().as_ref(), &cdcs);
                        Err(Error::from(e))
                    }
                },
            },
        };
        let ((adds, elapsed), cdcs) = match finished {
            Ok(r) => r,
            Err(e) => {
                discard(self.store().as_ref(), txn.added_files());
                return Err(e);
            }
        };
        let change_files = change_data::stage(&mut txn, cdcs);
        txn.add_write_time(elapsed);
        if let Err(e) = column_rules.stage_identity(snapshot, &mut txn) {
            discard(self.store().as_ref(), txn.added_files());
            discard(self.store().as_ref(), &adds);
            return Err(e);
        }
        match mode {
            WriteMode::Append => {}
            WriteMode::Overwrite(None) => {
                txn.read_whole_table();
                let now = self.store().now_ms();
                let removes: Vec<Remove> = snapshot
                    .files()
                    .map(|a| Remove::from_add(a, now, true))
                    .collect();
                for r in removes {
                    txn.remove_file(r);
                }
            }
            // The rows matching the predicate were removed before the new rows were written.
            WriteMode::Overwrite(Some(_)) => {}
        }
        txn.set_metric("numFiles", adds.len());
        txn.set_metric("numOutputRows", rows);
        txn.set_metric("numOutputBytes", adds.iter().map(|a| a.size).sum::<i64>());
        if change_files > 0 {
            txn.set_metric("numAddedChangeFiles", change_files);
        }
        for a in adds {
            txn.add_file(a);
        }
        finish(self, txn, options)
    }
}

/// How [`feed`] makes input batches into the table's rows.
pub(crate) struct Conform<'a> {
    /// The table's schema (after any evolution decided on the first batch).
    pub(crate) schema: &'a StructType,
    /// Its partition columns.
    pub(crate) partitions: &'a [String],
    /// Its logical Arrow schema (`input::logical_schema`).
    pub(crate) target: &'a arrow_schema::SchemaRef,
    /// The column rules applied to every inserted row.
    pub(crate) rules: &'a rules::ColumnRules,
}

/// Writes `batches` to `sink` as new rows: each batch checked against the table's schema
/// (without evolution: it was decided on the first batch), conformed to its logical
/// columns, and passed through the column rules; `each` sees every batch as it will be
/// written, before it is (replaceWhere's check, change rows). Returns the rows written.
/// The caller aborts the sink on failure.
///
/// # Errors
/// The input's failure, [`Error::SchemaMismatch`] (for a batch after the first: "a later
/// batch differs from the first"), the column rules' violations, `each`'s errors, and the
/// sink's upload failures.
pub(crate) fn feed(
    sink: &mut FileSink<'_>,
    batches: impl Iterator<Item = Result<RecordBatch>>,
    to: &Conform<'_>,
    mut each: impl FnMut(&RecordBatch) -> Result<()>,
) -> Result<u64> {
    let mut rows: u64 = 0;
    for (i, b) in batches.enumerate() {
        let b = b?;
        input::check_schema(to.schema, &b.schema(), to.partitions, false).map_err(|e| {
            if i == 0 {
                e
            } else {
                Error::SchemaMismatch(format!("a later batch differs from the first: {e}"))
            }
        })?;
        let input_schema = b.schema();
        let b = to.rules.apply(
            input::conform(&b, to.schema, to.target)?,
            &|c| {
                input_schema
                    .fields()
                    .iter()
                    .any(|f| f.name().eq_ignore_ascii_case(c))
            },
            rules::RowKind::Insert,
        )?;
        each(&b)?;
        rows += b.num_rows() as u64;
        sink.write(&b)?;
    }
    Ok(rows)
}

enum WriteMode {
    Append,
    /// Overwrite everything, or the rows matching a predicate (parsed, and as written).
    Overwrite(Option<(Expr, String)>),
}

/// The `commitInfo` parameters of a new table.
fn set_create_parameters(
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

/// Whether new data files of `snapshot`'s table also store its partition columns
/// (`materializePartitionColumns`, IcebergCompat V1/V2; SPEC.md §29).
pub(crate) fn materializes(snapshot: &Snapshot) -> bool {
    alluvium_txlog::features::materializes_partition_columns(
        snapshot.protocol(),
        snapshot.metadata(),
    )
}

#[derive(Debug, Default)]
struct RemoveMetrics {
    deleted_rows: u64,
    copied_rows: u64,
    /// Whether the removed rows went to change-data files (the commit's cdc files must then
    /// hold the new rows too).
    wrote_changes: bool,
}

/// Stages the removal of the rows matching `pred`: whole files when every row matches,
/// copy-on-write rewrites otherwise. Records every candidate file as read.
///
/// With `changes` (a change-data-feed table), once any file is rewritten in part every
/// removed row is recorded as `delete`, those of files removed whole included (Delta
/// Spark's replaceWhere runs a DELETE, which rewrites every file with a matching row): the
/// files removed whole before the first partial rewrite are read again then, later ones
/// are recorded as they are read. A removal of whole files only records nothing (readers
/// derive the deletes from the `remove` actions).
fn remove_matching(
    table: &Table,
    snapshot: &Snapshot,
    txn: &mut Transaction,
    pred: &Predicate,
    options: &WriteOptions,
    changes: Option<&ChangeDataWriter<'_>>,
) -> Result<RemoveMetrics> {
    let now = table.store().now_ms();
    let mut metrics = RemoveMetrics::default();
    let partition_only = pred.only_partition_columns();
    let needed = StatsNeeded::of(pred);
    let candidates: Vec<Add> = snapshot
        .files()
        .filter(|a| {
            let stats = needed.parse(a.stats.as_deref());
            may_match(
                pred,
                &FileSummary {
                    partition_values: &a.partition_values,
                    stats: stats.as_ref(),
                },
            )
        })
        .cloned()
        .collect();
    // Copied rows keep their row ids and commit versions (row tracking).
    let layout = crate::scan::rewrite_layout(snapshot);
    let plan = alluvium_datafile::ReadPlan::all(layout.clone())?;
    let mut sink = FileSink::new(
        SinkTable {
            store: table.store().as_ref(),
            schema: &layout.schema,
            partition_columns: snapshot.partition_columns(),
            configuration: &snapshot.metadata().configuration,
            column_mapping: snapshot.column_mapping(),
        },
        FileSinkOptions {
            target_size: options.target_file_size,
            data_change: true,
        },
    )?
    .materialize_partition_columns(crate::write::materializes(snapshot))?;
    let mut rewrote = false;
    // Files removed whole before the first partial rewrite: their rows become `delete`
    // change rows only if a partial rewrite follows.
    let mut whole_pending: Vec<&Add> = Vec::new();
    for add in &candidates {
        txn.read_file(add);
        if partition_only {
            // The predicate is exact on partition values: every row of the file matches.
            txn.remove_file(Remove::from_add(add, now, true));
            metrics.deleted_rows += rows_of(add).unwrap_or(0);
            continue;
        }
        let batches = plan.read_file(add)?;
        let (mut matched, mut total) = (0usize, 0usize);
        let mut keeps: Vec<(RecordBatch, BooleanArray, BooleanArray)> = Vec::new();
        for b in batches {
            let m = evaluate(pred, &b)?;
            let keep: BooleanArray = m.iter().map(|v| Some(v != Some(true))).collect();
            matched += m.true_count();
            total += b.num_rows();
            keeps.push((b, m, keep));
        }
        if matched == 0 {
            continue;
        }
        txn.remove_file(Remove::from_add(add, now, true));
        metrics.deleted_rows += matched as u64;
        let partial = matched < total;
        if let Some(c) = changes {
            if partial && !metrics.wrote_changes {
                metrics.wrote_changes = true;
                for w in whole_pending.drain(..) {
                    for b in crate::scan::read_whole_file(snapshot, w)? {
                        record_deleted(c, &b)?;
                    }
                }
            }
            if metrics.wrote_changes {
                for (b, m, _) in &keeps {
                    record_deleted(c, &arrow_select::filter::filter_record_batch(b, m)?)?;
                }
            } else {
                whole_pending.push(add);
            }
        }
        if partial {
            for (b, _, keep) in keeps {
                let kept = arrow_select::filter::filter_record_batch(&b, &keep)?;
                metrics.copied_rows += kept.num_rows() as u64;
                sink.write(&kept)?;
            }
            rewrote = true;
        }
    }
    let (adds, elapsed) = sink.finish()?;
    txn.add_write_time(elapsed);
    if rewrote || !adds.is_empty() {
        for a in adds {
            txn.add_file(a);
        }
    }
    Ok(metrics)
}

/// Records the rows of `rows` (a file's rows as the snapshot's schema reads them) as
/// `delete` change rows; columns the commit's schema adds are NULL.
fn record_deleted(changes: &ChangeDataWriter<'_>, rows: &RecordBatch) -> Result<()> {
    let rows: arrow_array::ArrayRef =
        std::sync::Arc::new(arrow_array::StructArray::from(rows.clone()));
    changes.write_struct(&rows, ChangeType::Delete)
}

fn rows_of(add: &Add) -> Option<u64> {
    let n = add
        .stats
        .as_deref()
        .and_then(FileStats::parse)?
        .num_records?;
    let deleted = add.deletion_vector.as_ref().map_or(0, |d| d.cardinality);
    u64::try_from(n - deleted).ok()
}
