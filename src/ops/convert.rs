//! `CONVERT TO DELTA parquet.`dir` [PARTITIONED BY (col TYPE, ...)]`, as Delta Spark's
//! `ConvertToDeltaCommand` does it for a directory of Parquet files: one commit creates
//! version 0 with every Parquet file of the directory as an `add` (nothing is rewritten or
//! moved).
//!
//! * Files: every file below the directory except hidden ones (a path segment starting with
//!   `.`, or with `_` and holding no `=`; `_delta_log` among them), as Spark's file index
//!   lists a Parquet table. Each must be a Parquet file.
//! * Partitions: with partition columns, every file sits in Hive-style directories
//!   `col=value/...`, one level per column in the declared order; values are unescaped
//!   (`%XX`), `__HIVE_DEFAULT_PARTITION__` is NULL, and each must parse as the column's
//!   type (PROTOCOL.md "Partition Value Serialization"; the log holds the canonical text).
//!   Without partition columns every file sits at the top level.
//! * Schema: the Parquet schema of the files (all must agree, every column nullable as
//!   Spark reads Parquet), then the partition columns; the minimal protocol for it.
//! * Statistics (PROTOCOL.md "Per-file Statistics"): from the Parquet footer when every
//!   row group states exact bounds and null counts for every statistics column (and no
//!   NaN for floating point), else by reading the file; either way with the safe-bound
//!   rules of the statistics writer (rounding, string prefixes).
//! * `add.path` is the file's relative path, URI-encoded; `size` and `modificationTime`
//!   are the store's; `dataChange=true`.
//! * The commit: operation `CONVERT`, parameters `numFiles`, `partitionedBy` (JSON),
//!   `collectStats` (true); metric `numConvertedFiles`.

use std::collections::HashMap;

use alluvium_datafile::StatsCollector;
use alluvium_mvcc::Transaction;
use alluvium_storage::{ObjectMeta, StorePath};
use alluvium_txlog::actions::{Add, Format, Metadata};
use alluvium_txlog::column_mapping::ColumnMappingMode;
use alluvium_txlog::features::minimal_protocol;
use alluvium_txlog::partition::{
    HIVE_DEFAULT_PARTITION, parse_partition_value, serialize_partition_value,
};
use alluvium_txlog::path::{encode_path, percent_decode};
use alluvium_txlog::properties::TableProperties;
use alluvium_txlog::schema::{DataType, StructField, StructType, from_arrow_schema};
use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType as ArrowType;
use bytes::Bytes;
use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};

use crate::report::{CommitSummary, PostCommit};
use crate::{Error, Result, Table};

/// A Parquet file found in the directory, with what its footer says.
struct Found {
    meta: ObjectMeta,
    partition_values: Vec<(String, Option<String>)>,
    schema: StructType,
    bytes: Bytes,
    footer: ArrowReaderMetadata,
}

/// Whether Spark's file index skips a path segment (`name`, with `last` for the file's
/// own name): names starting with `.`, and with `_` unless a directory holds `=` (a
/// partition directory such as `_p=1`).
fn hidden(name: &str, last: bool) -> bool {
    name.starts_with('.')
        || (name.starts_with('_') && (last || !name.contains('=')))
        || name.ends_with("._COPYING_")
}

/// The partition values of the file at `path` (its directories `col=value`, one per
/// partition column in order), canonical and typed-checked.
fn partition_values(
    path: &str,
    partitions: &[StructField],
) -> Result<Vec<(String, Option<String>)>> {
    let segments: Vec<&str> = path.split('/').collect();
    let dirs = &segments[..segments.len().saturating_sub(1)];
    let expected = || {
        if partitions.is_empty() {
            "no partition directories (declare the partition columns)".to_string()
        } else {
            format!(
                "directories {}",
                partitions
                    .iter()
                    .map(|p| format!("{}=<value>", p.name))
                    .collect::<Vec<_>>()
                    .join("/")
            )
        }
    };
    if dirs.len() != partitions.len() {
        return Err(Error::InvalidArgument(format!(
            "{path}: the file is not where the partitioning puts files: expected {}",
            expected()
        )));
    }
    let mut out = Vec::with_capacity(partitions.len());
    for (dir, column) in dirs.iter().zip(partitions) {
        let unescape = |s: &str| percent_decode(s).unwrap_or_else(|_| s.to_string());
        let Some((name, raw)) = dir.split_once('=') else {
            return Err(Error::InvalidArgument(format!(
                "{path}: directory {dir:?} is not a partition directory: expected {}",
                expected()
            )));
        };
        if !unescape(name).eq_ignore_ascii_case(&column.name) {
            return Err(Error::InvalidArgument(format!(
                "{path}: directory {dir:?} names partition column {:?}, expected `{}` ({})",
                unescape(name),
                column.name,
                expected()
            )));
        }
        let value = unescape(raw);
        let Some(ty) = column.data_type.as_primitive() else {
            return Err(Error::InvalidArgument(format!(
                "partition column `{}` must be of a primitive type",
                column.name
            )));
        };
        let text = (value != HIVE_DEFAULT_PARTITION).then_some(value.as_str());
        let scalar = parse_partition_value(&column.name, text, ty).map_err(|e| {
            Error::InvalidArgument(format!("{path}: partition directory {dir:?}: {e}"))
        })?;
        out.push((column.name.clone(), serialize_partition_value(&scalar)));
    }
    Ok(out)
}

/// The schema with every field, element and value nullable (Spark's `asNullable`: Parquet's
/// `required` does not make a table column NOT NULL) and no field metadata.
fn as_nullable(t: &DataType) -> DataType {
    match t {
        DataType::Struct(s) => DataType::Struct(Box::new(StructType::new(
            s.fields.iter().map(nullable_field).collect(),
        ))),
        DataType::Array(a) => {
            let mut a = (**a).clone();
            a.element_type = as_nullable(&a.element_type);
            a.contains_null = true;
            DataType::Array(Box::new(a))
        }
        DataType::Map(m) => {
            let mut m = (**m).clone();
            m.key_type = as_nullable(&m.key_type);
            m.value_type = as_nullable(&m.value_type);
            m.value_contains_null = true;
            DataType::Map(Box::new(m))
        }
        other => other.clone(),
    }
}

fn nullable_field(f: &StructField) -> StructField {
    StructField::new(f.name.clone(), as_nullable(&f.data_type), true)
}

/// How two file schemas differ, in a few words.
fn difference(a: &StructType, b: &StructType) -> String {
    for f in &a.fields {
        match b.fields.iter().find(|g| g.name == f.name) {
            None => return format!("it lacks column `{}`", f.name),
            Some(g) if g.data_type != f.data_type => {
                return format!(
                    "column `{}` is {} there but {} here",
                    f.name, f.data_type, g.data_type
                );
            }
            Some(_) => {}
        }
    }
    match b.fields.iter().find(|g| a.field(&g.name).is_none()) {
        Some(g) => format!("it has an extra column `{}`", g.name),
        None => "its columns are in another order".into(),
    }
}

/// Reads what convert needs of the file at `meta`: its bytes and footer.
fn load(table: &Table, meta: ObjectMeta, partitions: &[StructField]) -> Result<Found> {
    let path = meta.path.as_str().to_string();
    let partition_values = partition_values(&path, partitions)?;
    let bytes = table.store().get(&meta.path)?;
    let not_parquet = |e: &dyn std::fmt::Display| {
        Error::InvalidArgument(format!("{path}: not a readable Parquet file: {e}"))
    };
    let footer = ArrowReaderMetadata::load(&bytes, ArrowReaderOptions::new())
        .map_err(|e| not_parquet(&e))?;
    let schema = from_arrow_schema(footer.schema()).map_err(|e| not_parquet(&e))?;
    let schema = StructType::new(schema.fields.iter().map(nullable_field).collect());
    Ok(Found {
        meta,
        partition_values,
        schema,
        bytes,
        footer,
    })
}

/// The statistics of one file, as `add.stats`: from its footer when that states everything
/// exactly (see the module documentation), else by reading its rows.
fn file_stats(found: &Found, data: &StructType) -> Result<String> {
    let empty = HashMap::new();
    let props = TableProperties(&empty);
    let mut collector = StatsCollector::new(data, ColumnMappingMode::None, &props);
    if let Some(summary) = footer_summary(found, &collector) {
        let rows = found.footer.metadata().file_metadata().num_rows();
        collector.update_summary(rows, &summary)?;
        return Ok(collector.to_json());
    }
    let path = found.meta.path.as_str();
    let reader = ParquetRecordBatchReaderBuilder::try_new(found.bytes.clone())
        .and_then(|b| b.build())
        .map_err(|e| Error::InvalidArgument(format!("{path}: {e}")))?;
    for batch in reader {
        let batch = batch.map_err(|e| Error::InvalidArgument(format!("{path}: {e}")))?;
        collector.update(&batch)?;
    }
    Ok(collector.to_json())
}

/// The footer's bounds and null counts for every statistics column of `collector`, or
/// `None` when the footer does not state them all exactly.
fn footer_summary(found: &Found, collector: &StatsCollector) -> Option<Vec<(ArrayRef, i64)>> {
    let meta = found.footer.metadata();
    let arrow_schema = found.footer.schema();
    let parquet_schema = meta.file_metadata().schema_descr();
    let orders = meta.file_metadata().column_orders();
    let groups = meta.row_groups();
    let mut out = Vec::new();
    for column in collector.columns() {
        // Nested leaves have no top-level Parquet column to convert: read the file.
        let [name] = column else { return None };
        let converter = StatisticsConverter::try_new(name, arrow_schema, parquet_schema)
            .ok()?
            .with_missing_null_counts_as_zero(false)
            .with_column_orders(orders.map(Vec::as_slice));
        converter.parquet_column_index()?;
        let nulls = converter.row_group_null_counts(groups.iter()).ok()?;
        let mins = converter.row_group_mins(groups.iter()).ok()?;
        let maxes = converter.row_group_maxes(groups.iter()).ok()?;
        let min_exact = converter.row_group_is_min_value_exact(groups.iter()).ok()?;
        let max_exact = converter.row_group_is_max_value_exact(groups.iter()).ok()?;
        let mut total_nulls = 0i64;
        for (i, group) in groups.iter().enumerate() {
            if nulls.is_null(i) {
                return None;
            }
            let n = i64::try_from(nulls.value(i)).ok()?;
            total_nulls += n;
            // A row group with a value must bound it exactly.
            let has_values = n < group.num_rows();
            let exact = |a: &arrow_array::BooleanArray| !a.is_null(i) && a.value(i);
            if has_values
                && (mins.is_null(i) || maxes.is_null(i) || !exact(&min_exact) || !exact(&max_exact))
            {
                return None;
            }
        }
        // NaN sorts above every number in Spark and footers leave it out of their bounds:
        // floating-point bounds are used only when the footer says there is no NaN.
        if matches!(mins.data_type(), ArrowType::Float32 | ArrowType::Float64) {
            let nans = converter.row_group_nan_counts(groups.iter()).ok()?;
            if nans.null_count() > 0 || nans.values().iter().any(|n| *n > 0) {
                return None;
            }
        }
        let both = arrow_select::concat::concat(&[mins.as_ref(), maxes.as_ref()]).ok()?;
        out.push((both, total_nulls));
    }
    Some(out)
}

impl Table {
    /// Converts the directory of Parquet files at this table's location into a Delta table
    /// (CONVERT TO DELTA), in place and in one commit (version 0, operation `CONVERT`):
    /// every Parquet file becomes an `add` with statistics, nothing is rewritten. Partition
    /// columns are declared with their types, in directory order (`partition_by`: name and
    /// primitive type, e.g. `StructField::new("day", DataType::Primitive(PrimitiveType::Date),
    /// true)`). The rules: which files, partition directories, schema, statistics (from
    /// the footers, or by reading), are SPEC.md's "CONVERT TO DELTA" section.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the location already holds a Delta log, holds no
    /// Parquet file, or holds a file that is not Parquet, sits outside the declared
    /// partition directories, has a partition value of the wrong type, or has another
    /// schema than the first file (each message names the file); storage errors; a commit
    /// conflict when another writer creates the table meanwhile.
    pub fn convert_to_delta(&self, partition_by: &[StructField]) -> Result<CommitSummary> {
        alluvium_mvcc::transaction::check_can_commit(self.store().as_ref())?;
        let log = StorePath::parse("_delta_log")?;
        if !self.store().list_dir_from(Some(&log), "")?.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "{} is already a Delta table (it has a _delta_log): nothing to convert",
                self.uri()
            )));
        }
        let mut seen = std::collections::HashSet::new();
        for p in partition_by {
            if p.data_type.as_primitive().is_none() {
                return Err(Error::InvalidArgument(format!(
                    "partition column `{}` must be of a primitive type",
                    p.name
                )));
            }
            if !seen.insert(p.name.to_lowercase()) {
                return Err(Error::InvalidArgument(format!(
                    "partition column `{}` is listed twice",
                    p.name
                )));
            }
        }
        let partitions: Vec<StructField> = partition_by.iter().map(nullable_field).collect();
        let mut listed: Vec<ObjectMeta> = self
            .store()
            .list_tree(None)?
            .into_iter()
            .filter(|m| {
                let segments: Vec<&str> = m.path.as_str().split('/').collect();
                let last = segments.len() - 1;
                !segments
                    .iter()
                    .enumerate()
                    .any(|(i, s)| hidden(s, i == last))
            })
            .collect();
        listed.sort_by(|a, b| a.path.as_str().cmp(b.path.as_str()));
        if listed.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "{} holds no Parquet file to convert",
                self.uri()
            )));
        }
        // Footers (and, where they fall short, the rows) are read in parallel, one file
        // at a time per thread.
        let found: Vec<Result<Found>> = self.run(|| {
            use rayon::prelude::*;
            listed
                .into_par_iter()
                .map(|m| load(self, m, &partitions))
                .collect()
        });
        let found: Vec<Found> = found.into_iter().collect::<Result<_>>()?;
        let first = &found[0];
        for f in &found[1..] {
            if f.schema != first.schema {
                return Err(Error::InvalidArgument(format!(
                    "{}: its schema differs from that of {}: {}; CONVERT needs one schema",
                    f.meta.path.as_str(),
                    first.meta.path.as_str(),
                    difference(&first.schema, &f.schema)
                )));
            }
        }
        let data = first.schema.clone();
        for p in &partitions {
            if data.field(&p.name).is_some() {
                return Err(Error::InvalidArgument(format!(
                    "partition column `{}` is also a column of the data files ({})",
                    p.name,
                    first.meta.path.as_str()
                )));
            }
        }
        if data.fields.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "{}: the Parquet files have no columns",
                first.meta.path.as_str()
            )));
        }
        let stats: Vec<Result<String>> = self.run(|| {
            use rayon::prelude::*;
            found.par_iter().map(|f| file_stats(f, &data)).collect()
        });
        let mut schema = data.clone();
        schema.fields.extend(partitions.iter().cloned());
        let configuration = HashMap::new();
        let protocol = minimal_protocol(&schema, &configuration);
        let metadata = Metadata {
            id: alluvium_storage::ids::new_uuid().to_string(),
            name: None,
            description: None,
            format: Format::default(),
            schema_string: schema.to_json(),
            partition_columns: partitions.iter().map(|p| p.name.clone()).collect(),
            created_time: Some(self.store().now_ms()),
            configuration,
        };
        alluvium_txlog::features::check_write_supported(&protocol, &metadata, &schema)?;
        let mut txn = Transaction::create(self.store().clone(), "CONVERT");
        // The files are the user's data, not files this commit wrote: a failed commit
        // must never delete them.
        txn.set_discard_on_failure(false);
        txn.set_parameter("numFiles", found.len());
        txn.set_parameter(
            "partitionedBy",
            serde_json::to_string(&metadata.partition_columns).unwrap_or_default(),
        );
        txn.set_parameter("collectStats", true);
        txn.set_metric("numConvertedFiles", found.len());
        for (f, s) in found.iter().zip(stats) {
            let mut add = Add::builder(
                encode_path(f.meta.path.as_str()),
                i64::try_from(f.meta.size).unwrap_or(i64::MAX),
                f.meta.last_modified_ms,
            )
            .stats(s?);
            for (column, value) in &f.partition_values {
                add = add.partition_value(column.clone(), value.clone());
            }
            txn.add_file(add.build());
        }
        txn.set_protocol(protocol);
        txn.set_metadata(metadata);
        // Version 0 is never due a checkpoint.
        Ok(CommitSummary::new(txn.commit()?, PostCommit::default()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alluvium_txlog::schema::PrimitiveType;

    #[test]
    fn hidden_names_follow_sparks_file_index() {
        assert!(hidden("_delta_log", false));
        assert!(hidden("_SUCCESS", true));
        assert!(hidden(".part-0.parquet.crc", true));
        assert!(hidden("x.parquet._COPYING_", true));
        assert!(!hidden("_p=1", false));
        assert!(!hidden("part-0.parquet", true));
    }

    #[test]
    fn partition_directories_are_parsed_typed_and_checked() {
        let parts = vec![
            StructField::new("day", DataType::Primitive(PrimitiveType::Date), true),
            StructField::new("n", DataType::Primitive(PrimitiveType::Integer), true),
            StructField::new("s", DataType::Primitive(PrimitiveType::String), true),
        ];
        let values =
            partition_values("day=2024-01-02/n=007/s=a%3Ab/part-0.parquet", &parts).unwrap();
        assert_eq!(
            values,
            vec![
                ("day".into(), Some("2024-01-02".into())),
                ("n".into(), Some("7".into())),
                ("s".into(), Some("a:b".into())),
            ]
        );
        let nulls = partition_values(
            "day=__HIVE_DEFAULT_PARTITION__/n=1/s=__HIVE_DEFAULT_PARTITION__/x.parquet",
            &parts,
        )
        .unwrap();
        assert_eq!(nulls[0].1, None);
        assert_eq!(nulls[2].1, None);
        for (path, says) in [
            (
                "day=2024-01-02/n=1/x.parquet",
                "expected directories day=<value>/n=<value>/s=<value>",
            ),
            ("day=2024-01-02/m=1/s=a/x.parquet", "expected `n`"),
            ("day=yesterday/n=1/s=a/x.parquet", "not a date"),
            (
                "day=2024-01-02/1/s=a/x.parquet",
                "is not a partition directory",
            ),
        ] {
            let e = partition_values(path, &parts).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains(path), "{path}: {e}");
        }
        let e = partition_values("a=1/x.parquet", &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("declare the partition columns"), "{e}");
    }
}
