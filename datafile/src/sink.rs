//! Writing data files: Arrow batches to Parquet files under Hive-style partition
//! directories, each with its statistics, stored as new files under unique names
//! ([`ObjectStore::put_new`]: no reader opens them before a commit names them).
//!
//! Where the store takes a new file as its bytes come ([`ObjectStore::put_new_streaming`]:
//! the local filesystem), each row group goes to the file once it is encoded (while the
//! next batch is, see the crate's `encode` module), and an open file holds only its row
//! group in progress and the one closed last. Elsewhere a file is encoded into memory
//! and uploaded whole when it is closed. Memory is bounded by the files open at once (one
//! per partition being written: a row group each when streamed, at most the target size
//! otherwise) plus, on object stores, the closed files waiting to be uploaded (at most
//! [`MAX_PENDING_UPLOAD_BYTES`], or one file), never by the size of the input.
//!
//! The columns of a big batch are encoded side by side on the current rayon pool, and the
//! file's statistics folded alongside (the crate's `encode` module); the files are byte for byte
//! those of encoding on the calling thread.
//!
//! On stores whose requests are slow but can run many at a time
//! ([`ObjectStore::fetches_concurrently`]: object stores), closed files are uploaded in
//! parallel batches of at most [`MAX_PENDING_UPLOAD_BYTES`] in flight, at most
//! [`UPLOAD_THREADS`] at a time on the current rayon pool (no thread is spawned); elsewhere
//! each file is uploaded when it is closed.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use alluvium_storage::{ObjectStore, StorePath};
use alluvium_txlog::actions::{Add, OptStringMap};
use alluvium_txlog::column_mapping::ColumnMappingMode;
use alluvium_txlog::iceberg_compat::with_nested_field_ids;
use alluvium_txlog::partition::{partition_dir_segment, serialize_partition_value};
use alluvium_txlog::path::encode_path;
use alluvium_txlog::properties::TableProperties;
use alluvium_txlog::scalar::scalar_at;
use alluvium_txlog::schema::{ArrowForm, DataType, StructField, StructType, arrow_field_as};
use alluvium_txlog::void;
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, ListArray, MapArray, RecordBatch, StructArray, UInt32Array};
use arrow_schema::{DataType as ArrowType, Field, Schema, SchemaRef};
use arrow_select::take::take_record_batch;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;

use crate::encode::{FileOut, ParquetEncoder};
use crate::read::scan_fields;
use crate::stats_writer::StatsCollector;
use crate::{DataFileError, Result};

/// Most bytes of closed data files held for one parallel upload batch (a single larger
/// file is uploaded on its own).
pub const MAX_PENDING_UPLOAD_BYTES: u64 = 64 * 1024 * 1024;

/// Most uploads of one batch in flight at once (tasks on the current rayon pool).
pub const UPLOAD_THREADS: usize = 8;

/// The table a [`FileSink`] writes into.
#[derive(Debug, Clone, Copy)]
pub struct SinkTable<'a> {
    /// The table's store.
    pub store: &'a dyn ObjectStore,
    /// The logical schema of the rows written (all columns, partition columns included).
    pub schema: &'a StructType,
    /// The partition columns.
    pub partition_columns: &'a [String],
    /// The table properties (compression codec, target file size, statistics columns).
    pub configuration: &'a HashMap<String, String>,
    /// The column-mapping mode (physical names and field ids in the files).
    pub column_mapping: ColumnMappingMode,
}

/// How a [`FileSink`] writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSinkOptions {
    /// Target size of a file; `delta.targetFileSize`, then [`DEFAULT_TARGET_FILE_SIZE`],
    /// when `None`.
    pub target_size: Option<u64>,
    /// The `dataChange` flag of the returned `add` actions: `false` for rewrites that keep
    /// the table's rows (OPTIMIZE).
    pub data_change: bool,
}

impl Default for FileSinkOptions {
    fn default() -> Self {
        FileSinkOptions {
            target_size: None,
            data_change: true,
        }
    }
}

/// The column of a change-data file naming each row's change (`insert`, `delete`,
/// `update_preimage`, `update_postimage`; PROTOCOL.md "Change Data Files").
pub const CHANGE_TYPE_COLUMN: &str = alluvium_txlog::cdf::CHANGE_TYPE_COLUMN;

/// The directory (under the table root) holding change-data files.
pub const CHANGE_DATA_DIR: &str = "_change_data";

/// Default target size of a data file.
pub const DEFAULT_TARGET_FILE_SIZE: u64 = 128 * 1024 * 1024;

/// Most rows in one row group of a data file (Parquet's writer default is 1Mi).
///
/// A row group's column chunks are held in memory until it closes and only then go to the
/// file, so a smaller group bounds what an open file holds and lets a local file be made
/// durable in the background while later groups are encoded (the storage crate's early
/// syncs), instead of all at its close: measured on the test VM, a 1M-row write with fsync
/// took 68 ms in one group, 59–64 ms in groups of 256 Ki rows, and 56–58 ms in groups of
/// this size. It is also the unit readers split a file into for parallel scans (DuckDB
/// writes groups of 122,880 rows).
pub const ROW_GROUP_ROWS: usize = 128 * 1024;

struct OpenFile {
    writer: ParquetEncoder,
    stats: StatsCollector,
    key: String,
    partition_values: OptStringMap,
}

/// Leading rows looked at per column to decide whether a new file dictionary-encodes it.
const DICTIONARY_SAMPLE: usize = 512;

/// `props` with dictionary encoding turned off for the flat columns whose leading values
/// in `first` (the first rows of a new file: at least 64 and at most
/// [`DICTIONARY_SAMPLE`] rows, at least 64 of them non-null) are all distinct, as in ids,
/// timestamps or hashes: for such a column a dictionary costs a hash lookup per value when
/// writing and makes the file bigger (the dictionary holds every value and the indexes come
/// on top). Any repeat among those rows keeps Parquet's default (dictionary, falling back
/// to plain when it grows too big), so low- and mid-cardinality columns keep theirs.
///
/// Such columns are written PLAIN, not with the denser encodings Parquet has for them
/// (`DELTA_BINARY_PACKED` for integers and timestamps, `BYTE_STREAM_SPLIT` for floats),
/// although those are much cheaper to compress: a sequential 1M-row `long` column took
/// 17 ms and 4 MB PLAIN with snappy, 5 ms and 6.5 KB delta-packed. Readers still in use
/// cannot decode them: Spark's vectorized reader before 3.3 (SPARK-36879) and Iceberg's
/// Java one until mid-2025 fail on `DELTA_BINARY_PACKED`, and vectorized
/// `BYTE_STREAM_SPLIT` readers were only proposed for Spark and added to Iceberg in 2026.
/// Spark's own writer (Parquet v1 pages) writes PLAIN and dictionary pages only, and so
/// does this one.
fn dictionary_choice(props: WriterProperties, first: &RecordBatch) -> Result<WriterProperties> {
    let n = first.num_rows().min(DICTIONARY_SAMPLE);
    if n < 64 {
        return Ok(props);
    }
    let lead = first.slice(0, n);
    let mut off = Vec::new();
    for (field, column) in lead.schema().fields().iter().zip(lead.columns()) {
        let flat = field.data_type().is_primitive()
            || matches!(
                field.data_type(),
                arrow_schema::DataType::Utf8
                    | arrow_schema::DataType::LargeUtf8
                    | arrow_schema::DataType::Binary
                    | arrow_schema::DataType::LargeBinary
                    | arrow_schema::DataType::FixedSizeBinary(_)
            );
        if !flat || column.len() - column.null_count() < 64 {
            continue;
        }
        let converter = arrow_row::RowConverter::new(vec![arrow_row::SortField::new(
            column.data_type().clone(),
        )])?;
        let rows = converter.convert_columns(std::slice::from_ref(column))?;
        let mut seen = std::collections::HashSet::with_capacity(rows.num_rows());
        let all_distinct = (0..rows.num_rows())
            .filter(|i| column.is_valid(*i))
            .all(|i| seen.insert(rows.row(i).data()));
        if all_distinct {
            off.push(field.name().clone());
        }
    }
    if off.is_empty() {
        return Ok(props);
    }
    let mut builder = props.into_builder();
    for name in off {
        builder = builder.set_column_dictionary_enabled(ColumnPath::from(name), false);
    }
    Ok(builder.build())
}

/// Writes the rows of one operation into data files and returns their `add` actions, for
/// the caller to commit (or to [`discard`]).
///
/// Rows are grouped by partition value into one open file per partition; a file is closed
/// when it reaches the target size. Each file's name is unique, and it is stored with
/// [`ObjectStore::put_new_streaming`] where the store can take it so, with
/// [`ObjectStore::put_new`] otherwise.
pub struct FileSink<'a> {
    store: &'a dyn ObjectStore,
    table: StructType,
    data_schema: StructType,
    logical_data_schema: SchemaRef,
    physical_schema: SchemaRef,
    partition_idx: Vec<usize>,
    /// The table columns stored in files, in file order: data columns without `void`
    /// ones, then (when materialized) the partition columns.
    data_idx: Vec<usize>,
    /// How many leading stored columns get statistics (the data columns).
    stats_columns: usize,
    mode: ColumnMappingMode,
    props: WriterProperties,
    stats_props: HashMap<String, String>,
    target: u64,
    data_change: bool,
    /// Writing change-data files (see [`FileSink::for_change_data`]).
    change_data: bool,
    /// Files are written with [`ObjectStore::put_new_deferred`]: the committer makes their
    /// names durable (see [`FileSink::defer_name_sync`]).
    defer_names: bool,
    codec: &'static str,
    open: HashMap<Vec<u8>, OpenFile>,
    done: Vec<Add>,
    /// Closed files not yet uploaded (object stores only), with their `add` actions.
    pending: Vec<(StorePath, bytes::Bytes, Add)>,
    pending_bytes: u64,
    elapsed: std::time::Duration,
    /// Whether big batches are encoded one task per column on the current rayon pool
    /// (see [`crate::encode`]); the files are the same either way.
    parallel: bool,
}

/// The table's `alluvium.parquet.dataPageRowLimit`, when it is a positive integer (any other
/// value leaves the writer's default: pages cut by size only).
fn data_page_row_limit(configuration: &HashMap<String, String>) -> Option<usize> {
    configuration
        .get(alluvium_txlog::properties::DATA_PAGE_ROW_LIMIT)
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
}

/// The codec of the table's `delta.parquet.compression.codec` ([`parse_codec`]); Snappy,
/// the default of Delta writers, when it is unset or not one alluvium writes.
fn compression(configuration: &HashMap<String, String>) -> (Compression, &'static str) {
    configuration
        .get(alluvium_txlog::properties::PARQUET_COMPRESSION_CODEC)
        .and_then(|text| parse_codec(text))
        .unwrap_or((Compression::SNAPPY, "snappy"))
}

/// A Parquet codec named as the table property `delta.parquet.compression.codec` (and
/// Spark's `compression` option) name it, case-insensitively: `snappy`, `zstd`, `gzip`,
/// `brotli`, `lz4` (written as `LZ4_RAW`: Parquet's framing-free LZ4, which every current
/// reader takes, not the deprecated Hadoop framing), `lz4_raw`, `uncompressed` or `none`;
/// `zstd`, `gzip` and `brotli` optionally with a level, `zstd(9)`. With the name data files
/// carry (`part-...<name>.parquet`, as Spark names them). `None` for anything else,
/// including a level out of the codec's range.
pub fn parse_codec(text: &str) -> Option<(Compression, &'static str)> {
    let text = text.trim().to_ascii_lowercase();
    let (name, level) = match text.split_once('(') {
        Some((name, rest)) => (
            name.trim(),
            Some(rest.strip_suffix(')')?.trim().parse::<i32>().ok()?),
        ),
        None => (text.as_str(), None),
    };
    let level_u32 = || level.map(u32::try_from).transpose().ok();
    Some(match (name, level) {
        ("snappy", None) => (Compression::SNAPPY, "snappy"),
        ("uncompressed" | "none", None) => (Compression::UNCOMPRESSED, "uncompressed"),
        ("lz4" | "lz4_raw", None) => (Compression::LZ4_RAW, "lz4raw"),
        ("zstd", _) => (
            Compression::ZSTD(match level {
                Some(l) => ZstdLevel::try_new(l).ok()?,
                None => ZstdLevel::default(),
            }),
            "zstd",
        ),
        ("gzip", _) => (
            Compression::GZIP(match level_u32()? {
                Some(l) => parquet::basic::GzipLevel::try_new(l).ok()?,
                None => Default::default(),
            }),
            "gz",
        ),
        ("brotli", _) => (
            Compression::BROTLI(match level_u32()? {
                Some(l) => parquet::basic::BrotliLevel::try_new(l).ok()?,
                None => Default::default(),
            }),
            "br",
        ),
        _ => return None,
    })
}

/// Re-labels a logical array with the physical nested field names.
fn to_physical(arr: &ArrayRef, target: &ArrowType) -> Result<ArrayRef> {
    if arr.data_type() == target {
        return Ok(arr.clone());
    }
    Ok(match target {
        ArrowType::Struct(fields) => {
            let s = arr.as_struct();
            let children = s
                .columns()
                .iter()
                .zip(fields.iter())
                .map(|(c, f)| to_physical(c, f.data_type()))
                .collect::<Result<Vec<_>>>()?;
            Arc::new(StructArray::try_new(
                fields.clone(),
                children,
                s.nulls().cloned(),
            )?)
        }
        ArrowType::List(field) => {
            let l = arr.as_list::<i32>();
            let values = to_physical(l.values(), field.data_type())?;
            Arc::new(ListArray::try_new(
                field.clone(),
                l.offsets().clone(),
                values,
                l.nulls().cloned(),
            )?)
        }
        ArrowType::Map(field, sorted) => {
            let m = arr.as_map();
            let ArrowType::Struct(kv) = field.data_type() else {
                return Ok(arr.clone());
            };
            let keys = to_physical(m.keys(), kv[0].data_type())?;
            let values = to_physical(m.values(), kv[1].data_type())?;
            let entries = StructArray::try_new(kv.clone(), vec![keys, values], None)?;
            Arc::new(MapArray::try_new(
                field.clone(),
                m.offsets().clone(),
                entries,
                m.nulls().cloned(),
                *sorted,
            )?)
        }
        _ => arr.clone(),
    })
}

/// Which table columns a data file stores and in what form.
struct FileLayout {
    data_idx: Vec<usize>,
    stats_columns: usize,
    stats_schema: StructType,
    logical: SchemaRef,
    physical: SchemaRef,
}

impl FileLayout {
    /// The stored columns of `table`: its data columns without `void` ones (nested `void`
    /// struct fields dropped too; PROTOCOL.md "Void Type": writers omit them), then, when
    /// `materialize`, the partition columns (after the data columns, as
    /// "Writer Requirements for IcebergCompatV1" places them).
    fn of(
        table: &StructType,
        partition_idx: &[usize],
        mode: ColumnMappingMode,
        materialize: bool,
    ) -> Result<FileLayout> {
        let mut data_idx: Vec<usize> = (0..table.fields.len())
            .filter(|i| !partition_idx.contains(i) && !void::is_void(&table.fields[*i].data_type))
            .collect();
        let stats_columns = data_idx.len();
        if materialize {
            data_idx.extend(partition_idx.iter().copied());
        }
        let stored: Vec<StructField> = data_idx
            .iter()
            .map(|i| void::without_void(&StructType::new(vec![table.fields[*i].clone()])))
            .flat_map(|s| s.fields)
            .collect();
        let physical: Vec<Field> = stored
            .iter()
            .map(|f| {
                arrow_field_as(f, ArrowForm::physical(mode))
                    .map(|a| with_nested_field_ids(f, mode, a))
            })
            .collect::<alluvium_txlog::Result<_>>()?;
        Ok(FileLayout {
            data_idx,
            stats_columns,
            stats_schema: StructType::new(stored[..stats_columns].to_vec()),
            logical: Arc::new(Schema::new(scan_fields(&stored)?)),
            physical: Arc::new(Schema::new(physical)),
        })
    }
}

/// `arr` (a column of Delta type `t`) without the struct fields of type `void`, at any
/// depth under structs: the layout [`void::without_void`] gives data files.
fn strip_void(arr: &ArrayRef, t: &DataType) -> Result<ArrayRef> {
    let DataType::Struct(s) = t else {
        return Ok(arr.clone());
    };
    if !void::has_nested_void(t) {
        return Ok(arr.clone());
    }
    let sa = arr.as_struct();
    let mut fields = Vec::new();
    let mut children = Vec::new();
    for (i, f) in s.fields.iter().enumerate() {
        if void::is_void(&f.data_type) {
            continue;
        }
        let child = strip_void(sa.column(i), &f.data_type)?;
        let field = sa.fields()[i]
            .as_ref()
            .clone()
            .with_data_type(child.data_type().clone());
        fields.push(field);
        children.push(child);
    }
    Ok(Arc::new(StructArray::try_new(
        fields.into(),
        children,
        sa.nulls().cloned(),
    )?))
}

impl<'a> FileSink<'a> {
    /// Also stores the partition columns in every data file, after the data columns
    /// (`materializePartitionColumns`, IcebergCompat V1/V2: see
    /// `alluvium_txlog::features::materializes_partition_columns`). Call before writing;
    /// not for change-data sinks.
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn materialize_partition_columns(mut self, on: bool) -> Result<Self> {
        if on && !self.change_data {
            let layout = FileLayout::of(&self.table, &self.partition_idx, self.mode, true)?;
            self.data_idx = layout.data_idx;
            self.stats_columns = layout.stats_columns;
            self.data_schema = layout.stats_schema;
            self.logical_data_schema = layout.logical;
            self.physical_schema = layout.physical;
        }
        Ok(self)
    }

    /// With `on`, each file's content is made durable as it is written but its name is not
    /// ([`ObjectStore::put_new_deferred`]): whoever commits the files must make their names
    /// durable first ([`ObjectStore::sync_deferred`], which the commit loop runs for a
    /// transaction marked so). On a local filesystem that is one directory fsync per
    /// commit instead of one per file.
    #[must_use]
    pub fn defer_name_sync(mut self, on: bool) -> Self {
        self.defer_names = on;
        self
    }

    /// A sink writing rows of `table`'s schema into its data files.
    ///
    /// # Errors
    /// [`DataFileError::InvalidArgument`] for a
    /// partition column not in the schema.
    pub fn new(table: SinkTable<'a>, options: FileSinkOptions) -> Result<Self> {
        let SinkTable {
            store,
            schema: table,
            partition_columns,
            configuration,
            column_mapping: mode,
        } = table;
        let FileSinkOptions {
            target_size,
            data_change,
        } = options;
        let partition_idx: Vec<usize> = partition_columns
            .iter()
            .map(|p| {
                table.index_of(p).ok_or_else(|| {
                    DataFileError::InvalidArgument(format!(
                        "partition column `{p}` is not in the schema"
                    ))
                })
            })
            .collect::<Result<_>>()?;
        // Before any encoding: a fork of this process must not encode on the pool.
        crate::encode::watch_forks();
        // PROTOCOL.md "Void Type": no new data file under a schema whose void columns could
        // not be rebuilt from their absence.
        void::check_writable(table)?;
        let layout = FileLayout::of(table, &partition_idx, mode, false)?;
        let (codec, codec_name) = compression(configuration);
        let mut props = WriterProperties::builder()
            .set_compression(codec)
            .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
            .set_created_by(alluvium_txlog::ENGINE.into());
        if let Some(rows) = data_page_row_limit(configuration) {
            // The writer checks the limit between write batches: batches no larger than it.
            props = props
                .set_data_page_row_count_limit(rows)
                .set_write_batch_size(rows.min(1024));
        }
        let props = props.build();
        let target = target_size
            .or_else(|| TableProperties(configuration).target_file_size())
            .unwrap_or(DEFAULT_TARGET_FILE_SIZE)
            .max(1);
        Ok(FileSink {
            store,
            table: table.clone(),
            logical_data_schema: layout.logical,
            data_schema: layout.stats_schema,
            physical_schema: layout.physical,
            partition_idx,
            data_idx: layout.data_idx,
            stats_columns: layout.stats_columns,
            mode,
            props,
            stats_props: configuration.clone(),
            target,
            data_change,
            change_data: false,
            defer_names: false,
            codec: codec_name,
            open: HashMap::new(),
            done: Vec::new(),
            pending: Vec::new(),
            pending_bytes: 0,
            elapsed: std::time::Duration::ZERO,
            parallel: true,
        })
    }

    /// A sink writing change-data files (PROTOCOL.md "Change Data Files"): the rows it
    /// gets are `table`'s logical rows (all columns) followed by one more column,
    /// [`CHANGE_TYPE_COLUMN`] (Utf8, not null). Files hold the table's physical data columns
    /// (names and field ids as in data files) plus `_change_type`, go to
    /// `_change_data/<partition dirs>/cdc-<n>-<uuid>.c000.<codec>.parquet`, and come back as
    /// `add`-shaped records (path, partition values, size; no statistics,
    /// `dataChange=false`) for the caller to turn into `cdc` actions.
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn for_change_data(table: SinkTable<'a>, target_size: Option<u64>) -> Result<Self> {
        let mut sink = FileSink::new(
            table,
            FileSinkOptions {
                target_size,
                data_change: false,
            },
        )?;
        let change_type = Field::new(CHANGE_TYPE_COLUMN, ArrowType::Utf8, false);
        let with_type = |schema: &SchemaRef| -> SchemaRef {
            let mut fields: Vec<Field> =
                schema.fields().iter().map(|f| f.as_ref().clone()).collect();
            fields.push(change_type.clone());
            Arc::new(Schema::new(fields))
        };
        sink.logical_data_schema = with_type(&sink.logical_data_schema);
        sink.physical_schema = with_type(&sink.physical_schema);
        sink.data_idx.push(sink.table.fields.len());
        sink.stats_columns = sink.data_idx.len();
        sink.change_data = true;
        Ok(sink)
    }

    /// Writes a batch conformed to the table's logical schema (all columns).
    ///
    /// # Errors
    /// A batch that does not match the schema, a failure encoding or uploading a file.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let started = Instant::now();
        if batch.num_rows() == 0 {
            return Ok(());
        }
        if self.partition_idx.is_empty() {
            self.write_group(Vec::new(), batch)?;
        } else {
            let columns: Vec<ArrayRef> = self
                .partition_idx
                .iter()
                .map(|i| batch.column(*i).clone())
                .collect();
            let converter = arrow_row::RowConverter::new(
                columns
                    .iter()
                    .map(|c| arrow_row::SortField::new(c.data_type().clone()))
                    .collect(),
            )?;
            let rows = converter.convert_columns(&columns)?;
            let mut groups: HashMap<&[u8], Vec<u32>> = HashMap::new();
            let mut order: Vec<&[u8]> = Vec::new();
            for i in 0..rows.num_rows() {
                let key = rows.row(i).data();
                let entry = groups.entry(key).or_insert_with(|| {
                    order.push(key);
                    Vec::new()
                });
                entry.push(
                    u32::try_from(i)
                        .map_err(|_| DataFileError::InvalidArgument("batch too large".into()))?,
                );
            }
            for key in order {
                let indices = UInt32Array::from(groups.remove(key).unwrap_or_default());
                let part = take_record_batch(batch, &indices)?;
                self.write_group(key.to_vec(), &part)?;
            }
        }
        self.elapsed += started.elapsed();
        Ok(())
    }

    fn partition_values(&self, batch: &RecordBatch) -> Result<(OptStringMap, String)> {
        let mut values = OptStringMap::default();
        let mut dirs = Vec::new();
        for &i in &self.partition_idx {
            let f = &self.table.fields[i];
            let ty = f.data_type.as_primitive().ok_or_else(|| {
                DataFileError::InvalidArgument(format!(
                    "partition column `{}` must be of a primitive type",
                    f.name
                ))
            })?;
            let v = serialize_partition_value(&scalar_at(batch.column(i).as_ref(), 0, ty)?);
            let name = self.mode.physical_name(f).to_string();
            dirs.push(partition_dir_segment(&name, v.as_deref()));
            values.insert(name, v);
        }
        Ok((values, dirs.join("/")))
    }

    fn write_group(&mut self, key: Vec<u8>, batch: &RecordBatch) -> Result<()> {
        let columns = self
            .data_idx
            .iter()
            .map(|i| match self.table.fields.get(*i) {
                Some(f) => strip_void(batch.column(*i), &f.data_type),
                // The change-type column of change-data files.
                None => Ok(batch.column(*i).clone()),
            })
            .collect::<Result<Vec<_>>>()?;
        let logical = RecordBatch::try_new(self.logical_data_schema.clone(), columns)?;
        let physical_columns = logical
            .columns()
            .iter()
            .zip(self.physical_schema.fields())
            .map(|(c, f)| to_physical(c, f.data_type()))
            .collect::<Result<Vec<_>>>()?;
        let physical = RecordBatch::try_new(self.physical_schema.clone(), physical_columns)?;
        if !self.open.contains_key(&key) {
            let (partition_values, dir) = self.partition_values(batch)?;
            let name = format!(
                "{}-{:05}-{}.c000.{}.parquet",
                if self.change_data { "cdc" } else { "part" },
                self.done.len() + self.pending.len() + self.open.len(),
                alluvium_storage::ids::new_uuid(),
                self.codec
            );
            let dir = match (self.change_data, dir.is_empty()) {
                (true, true) => CHANGE_DATA_DIR.to_string(),
                (true, false) => format!("{CHANGE_DATA_DIR}/{dir}"),
                (false, _) => dir,
            };
            let key_path = if dir.is_empty() {
                name
            } else {
                format!("{dir}/{name}")
            };
            // Straight into the store where it takes a file as it comes (the local
            // filesystem); otherwise into memory, uploaded whole when closed.
            let out = match self.store.fetches_concurrently() {
                false => self
                    .store
                    .put_new_streaming(&StorePath::parse(key_path.clone())?, self.defer_names)?
                    .map_or_else(|| FileOut::Memory(Vec::new()), FileOut::Stream),
                true => FileOut::Memory(Vec::new()),
            };
            let writer = ParquetEncoder::try_new(
                self.physical_schema.clone(),
                dictionary_choice(self.props.clone(), &physical)?,
                self.parallel,
                usize::try_from(self.target).ok(),
                out,
            )?;
            let stats = StatsCollector::new(
                &self.data_schema,
                self.mode,
                &TableProperties(&self.stats_props),
            );
            self.open.insert(
                key.clone(),
                OpenFile {
                    writer,
                    stats,
                    key: key_path,
                    partition_values,
                },
            );
        }
        let full = {
            let file = self
                .open
                .get_mut(&key)
                .ok_or_else(|| DataFileError::InvalidArgument("open file vanished".into()))?;
            let (change_data, stats_columns) = (self.change_data, self.stats_columns);
            let stats = &mut file.stats;
            // The statistics are folded while the columns are encoded (on the pool with
            // them for a big batch).
            let update_stats = || -> Result<()> {
                if change_data {
                    Ok(())
                } else if stats_columns == logical.num_columns() {
                    stats.update(&logical)
                } else {
                    let data: Vec<usize> = (0..stats_columns).collect();
                    stats.update(&logical.project(&data)?)
                }
            };
            file.writer.write(&physical, update_stats)?;
            file.writer.size() as u64 >= self.target
        };
        if full && let Some(file) = self.open.remove(&key) {
            self.close(file)?;
        }
        Ok(())
    }

    fn close(&mut self, file: OpenFile) -> Result<()> {
        let path = StorePath::parse(file.key.clone())?;
        let (bytes, size) = match file.writer.finish()? {
            // `Bytes::from(Vec)` takes the buffer over: the file is not copied.
            FileOut::Memory(v) => {
                let bytes = bytes::Bytes::from(v);
                let size = bytes.len() as u64;
                (Some(bytes), size)
            }
            FileOut::Stream(w) => (None, w.finish()?),
        };
        let add = Add {
            path: encode_path(&file.key),
            partition_values: file.partition_values,
            size: i64::try_from(size).unwrap_or(i64::MAX),
            modification_time: self.store.now_ms(),
            data_change: self.data_change,
            stats: (!self.change_data).then(|| file.stats.to_json()),
            tags: None,
            deletion_vector: None,
            base_row_id: None,
            default_row_commit_version: None,
            clustering_provider: None,
        };
        let Some(bytes) = bytes else {
            // Already in the store.
            self.done.push(add);
            return Ok(());
        };
        if !self.store.fetches_concurrently() {
            if self.defer_names {
                self.store.put_new_deferred(&path, bytes)?;
            } else {
                self.store.put_new(&path, bytes)?;
            }
            self.done.push(add);
            return Ok(());
        }
        self.pending_bytes += bytes.len() as u64;
        self.pending.push((path, bytes, add));
        if self.pending_bytes >= MAX_PENDING_UPLOAD_BYTES {
            self.upload_pending()?;
        }
        Ok(())
    }

    /// Uploads the pending files in parallel (at most [`UPLOAD_THREADS`] at a time). The
    /// files that were uploaded join `done` (so [`abort`](Self::abort) deletes them) even
    /// when another failed.
    ///
    /// # Errors
    /// The first failed upload.
    fn upload_pending(&mut self) -> Result<()> {
        let pending = std::mem::take(&mut self.pending);
        self.pending_bytes = 0;
        if pending.is_empty() {
            return Ok(());
        }
        let store = self.store;
        let defer = self.defer_names;
        // At most UPLOAD_THREADS uploads in flight on the current pool: bounded without
        // spawning threads.
        let results =
            alluvium_storage::par::map_bounded(&pending, UPLOAD_THREADS, |(path, bytes, _)| {
                if defer {
                    store.put_new_deferred(path, bytes.clone())
                } else {
                    store.put_new(path, bytes.clone())
                }
                .map_err(DataFileError::from)
            });
        let mut first_error = None;
        for ((_, _, add), result) in pending.into_iter().zip(results) {
            match result {
                Some(Ok(())) => self.done.push(add),
                Some(Err(e)) => {
                    first_error.get_or_insert(e);
                }
                None => {
                    first_error.get_or_insert(DataFileError::InvalidArgument(
                        "a data-file upload did not run".into(),
                    ));
                }
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Closes every open file and returns the `add` actions (in creation order) and the time
    /// spent writing.
    ///
    /// # Errors
    /// A failure closing or uploading a file; every file this sink wrote is deleted then.
    pub fn finish(mut self) -> Result<(Vec<Add>, std::time::Duration)> {
        let started = Instant::now();
        let open: Vec<OpenFile> = self.open.drain().map(|(_, f)| f).collect();
        for f in open {
            if let Err(e) = self.close(f) {
                self.abort();
                return Err(e);
            }
        }
        if let Err(e) = self.upload_pending() {
            self.abort();
            return Err(e);
        }
        self.elapsed += started.elapsed();
        Ok((self.done, self.elapsed))
    }

    /// The same sink cutting row groups at `rows` rows (instead of Parquet's 1Mi), so tests
    /// reach several row groups per file with few rows.
    #[cfg(test)]
    fn row_groups_of(mut self, rows: usize) -> Self {
        self.props = self
            .props
            .clone()
            .into_builder()
            .set_max_row_group_row_count(Some(rows))
            .build();
        self
    }

    /// The same sink encoding every batch on the calling thread (the tests compare its
    /// files with the parallel path's).
    #[cfg(test)]
    fn sequential(mut self) -> Self {
        self.parallel = false;
        self
    }

    /// Gives up: deletes the files already stored (pending ones never were; an open file
    /// streamed into the store removes itself when it is dropped, here or with the sink).
    pub fn abort(self) {
        discard(self.store, &self.done);
    }
}

/// Deletes files written by a sink whose transaction will not commit (best effort: a file
/// that cannot be deleted is left for VACUUM).
pub fn discard(store: &dyn ObjectStore, adds: &[Add]) {
    for a in adds {
        if let Ok(p) = alluvium_txlog::path::percent_decode(&a.path)
            .map_err(|_| ())
            .and_then(|k| StorePath::parse(k).map_err(|_| ()))
        {
            let _ = store.delete(&p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alluvium_storage::{InMemoryStore, ObjectStore};
    use alluvium_txlog::schema::{DataType, PrimitiveType};
    use arrow_array::{Int64Array, StringArray};
    use bytes::Bytes;
    use parquet::arrow::ArrowWriter;
    use parquet::basic::Encoding;
    use parquet::file::reader::{FileReader, SerializedFileReader};

    #[test]
    fn codecs_parse_as_the_table_property_names_them() {
        let name = |t: &str| parse_codec(t).map(|(c, n)| (c.to_string(), n));
        assert_eq!(name("SNAPPY"), Some(("SNAPPY".into(), "snappy")));
        assert_eq!(name(" zstd "), Some(("ZSTD(ZstdLevel(1))".into(), "zstd")));
        assert_eq!(name("ZSTD(9)"), Some(("ZSTD(ZstdLevel(9))".into(), "zstd")));
        assert_eq!(name("gzip(6)"), Some(("GZIP(GzipLevel(6))".into(), "gz")));
        assert_eq!(
            name("brotli"),
            Some(("BROTLI(BrotliLevel(1))".into(), "br"))
        );
        assert_eq!(name("lz4"), Some(("LZ4_RAW".into(), "lz4raw")));
        assert_eq!(name("none"), Some(("UNCOMPRESSED".into(), "uncompressed")));
        // Unknown names, levels out of range or on codecs without levels, bad syntax.
        for bad in [
            "lzo",
            "zstd(99)",
            "gzip(-1)",
            "snappy(1)",
            "zstd(",
            "zstd(x)",
            "",
        ] {
            assert_eq!(name(bad), None, "{bad}");
        }
    }

    /// Whether each column chunk of the one file written from `batch` has a dictionary.
    fn dictionaries_of(batch: &RecordBatch) -> Vec<(String, bool)> {
        let reader = SerializedFileReader::new(write_one(batch, &HashMap::new())).unwrap();
        let rg = reader.metadata().row_group(0);
        rg.columns()
            .iter()
            .map(|c| {
                (
                    c.column_path().string(),
                    c.dictionary_page_offset().is_some(),
                )
            })
            .collect()
    }

    /// The pages of each column chunk of the one file written from `batch` under `config`.
    fn pages_of(batch: &RecordBatch, config: &HashMap<String, String>) -> Vec<usize> {
        let options = parquet::file::serialized_reader::ReadOptionsBuilder::new()
            .with_page_index()
            .build();
        let reader =
            SerializedFileReader::new_with_options(write_one(batch, config), options).unwrap();
        let meta = reader.metadata();
        let index = meta.page_index_for_row_group(0);
        (0..meta.row_group(0).num_columns())
            .map(|c| index.page_locations(c).unwrap().len())
            .collect()
    }

    /// The bytes of the one file written from `batch` under the table configuration `config`.
    fn write_one(batch: &RecordBatch, config: &HashMap<String, String>) -> Bytes {
        let store = InMemoryStore::new();
        let schema = StructType::new(vec![
            StructField::new("id", DataType::Primitive(PrimitiveType::Long), true),
            StructField::new("kind", DataType::Primitive(PrimitiveType::String), true),
        ]);
        let mut sink = FileSink::new(
            SinkTable {
                store: &store,
                schema: &schema,
                partition_columns: &[],
                configuration: config,
                column_mapping: ColumnMappingMode::None,
            },
            FileSinkOptions::default(),
        )
        .unwrap();
        sink.write(batch).unwrap();
        let (adds, _) = sink.finish().unwrap();
        store
            .get(&StorePath::parse(&adds[0].path).unwrap())
            .unwrap()
    }

    fn batch(rows: i64) -> RecordBatch {
        let ids: Vec<i64> = (0..rows).collect();
        let kinds: Vec<String> = (0..rows).map(|i| format!("kind{}", i % 5)).collect();
        RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("id", ArrowType::Int64, true),
                Field::new("kind", ArrowType::Utf8, true),
            ])),
            vec![
                Arc::new(Int64Array::from(ids)),
                Arc::new(StringArray::from(kinds)),
            ],
        )
        .unwrap()
    }

    #[test]
    fn unique_columns_are_written_without_a_dictionary_repeated_ones_with_one() {
        assert_eq!(
            dictionaries_of(&batch(5000)),
            vec![("id".to_string(), false), ("kind".to_string(), true)]
        );
    }

    #[test]
    fn a_few_rows_keep_the_default_dictionary_encoding() {
        assert_eq!(
            dictionaries_of(&batch(10)),
            vec![("id".to_string(), true), ("kind".to_string(), true)]
        );
    }

    #[test]
    fn the_data_page_row_limit_cuts_pages_by_rows() {
        let limited = HashMap::from([(
            alluvium_txlog::properties::DATA_PAGE_ROW_LIMIT.to_string(),
            "1000".to_string(),
        )]);
        assert_eq!(pages_of(&batch(5000), &limited), vec![5, 5]);
        // Unset or not a positive integer: pages are cut by size only (one page here).
        assert_eq!(pages_of(&batch(5000), &HashMap::new()), vec![1, 1]);
        let bad = HashMap::from([(
            alluvium_txlog::properties::DATA_PAGE_ROW_LIMIT.to_string(),
            "0".to_string(),
        )]);
        assert_eq!(pages_of(&batch(5000), &bad), vec![1, 1]);
    }

    /// The table of the parallel-encoding tests: flat columns of each kind the benchmark
    /// writes, plus a struct (two leaf columns under one top-level column).
    fn wide_schema() -> StructType {
        let p = |t| DataType::Primitive(t);
        StructType::new(vec![
            StructField::new("id", p(PrimitiveType::Long), true),
            StructField::new("category", p(PrimitiveType::String), true),
            StructField::new("value", p(PrimitiveType::Double), true),
            StructField::new("ts", p(PrimitiveType::Timestamp), true),
            StructField::new(
                "pair",
                DataType::Struct(Box::new(StructType::new(vec![
                    StructField::new("a", p(PrimitiveType::Long), true),
                    StructField::new("b", p(PrimitiveType::String), true),
                ]))),
                true,
            ),
        ])
    }

    /// `rows` rows of [`wide_schema`] from `start`, in the sink's logical schema.
    fn wide_batch(logical: &SchemaRef, start: i64, rows: i64) -> RecordBatch {
        use arrow_array::{Float64Array, TimestampMicrosecondArray};
        let ids: Vec<i64> = (start..start + rows).collect();
        let ArrowType::Struct(pair_fields) = logical.field(4).data_type().clone() else {
            panic!("pair is a struct");
        };
        let pair = StructArray::try_new(
            pair_fields,
            vec![
                Arc::new(Int64Array::from_iter_values(ids.iter().map(|i| i % 7))),
                Arc::new(StringArray::from_iter(
                    ids.iter().map(|i| (i % 3 != 0).then(|| format!("b{i}"))),
                )),
            ],
            None,
        )
        .unwrap();
        RecordBatch::try_new(
            logical.clone(),
            vec![
                Arc::new(Int64Array::from(ids.clone())),
                Arc::new(StringArray::from_iter_values(
                    ids.iter().map(|i| format!("c{}", i % 100)),
                )),
                Arc::new(Float64Array::from_iter(
                    ids.iter().map(|i| (i % 11 != 0).then_some(*i as f64 * 0.5)),
                )),
                Arc::new(
                    TimestampMicrosecondArray::from_iter_values(
                        ids.iter().map(|i| 1_700_000_000_000_000 + i * 1_000_000),
                    )
                    .with_timezone("UTC"),
                ),
                Arc::new(pair),
            ],
        )
        .unwrap()
    }

    /// A sink of the [`wide_schema`] table (no partitions) into `store`.
    fn wide_sink<'a>(
        store: &'a dyn ObjectStore,
        schema: &'a StructType,
        config: &'a HashMap<String, String>,
        target_size: Option<u64>,
    ) -> FileSink<'a> {
        FileSink::new(
            SinkTable {
                store,
                schema,
                partition_columns: &[],
                configuration: config,
                column_mapping: ColumnMappingMode::None,
            },
            FileSinkOptions {
                target_size,
                data_change: true,
            },
        )
        .unwrap()
    }

    /// The files (add action and bytes, in order) a sink writes from `batches` of
    /// `batch_rows` rows (`total` in all), in parallel or not, with the target size given.
    fn write_wide(
        total: i64,
        batch_rows: i64,
        target_size: Option<u64>,
        parallel: bool,
    ) -> (Vec<(Add, Bytes)>, Vec<RecordBatch>) {
        write_wide_to(
            &InMemoryStore::new(),
            total,
            batch_rows,
            target_size,
            parallel,
            None,
        )
    }

    /// [`write_wide`] into `store`, with row groups cut at `group_rows` rows if given.
    fn write_wide_to(
        store: &dyn ObjectStore,
        total: i64,
        batch_rows: i64,
        target_size: Option<u64>,
        parallel: bool,
        group_rows: Option<usize>,
    ) -> (Vec<(Add, Bytes)>, Vec<RecordBatch>) {
        let (schema, config) = (wide_schema(), HashMap::new());
        let sink = wide_sink(store, &schema, &config, target_size);
        let sink = if parallel { sink } else { sink.sequential() };
        let mut sink = match group_rows {
            Some(rows) => sink.row_groups_of(rows),
            None => sink,
        };
        let logical = sink.logical_data_schema.clone();
        let batches: Vec<RecordBatch> = (0..total)
            .step_by(batch_rows as usize)
            .map(|start| wide_batch(&logical, start, batch_rows.min(total - start)))
            .collect();
        for b in &batches {
            sink.write(b).unwrap();
        }
        let (adds, _) = sink.finish().unwrap();
        let files = adds
            .into_iter()
            .map(|a| {
                let bytes = store.get(&StorePath::parse(&a.path).unwrap()).unwrap();
                (a, bytes)
            })
            .collect();
        (files, batches)
    }

    /// The rows of a Parquet file, as one batch.
    fn read_rows(bytes: &Bytes) -> RecordBatch {
        let reader =
            parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes.clone())
                .unwrap()
                .build()
                .unwrap();
        let batches: Vec<RecordBatch> = reader.map(|b| b.unwrap()).collect();
        arrow_select::concat::concat_batches(&batches[0].schema(), &batches).unwrap()
    }

    /// On a pool of two threads (so the parallel path runs on any machine).
    fn on_two_threads<T: Send>(f: impl FnOnce() -> T + Send) -> T {
        rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap()
            .install(f)
    }

    #[test]
    fn a_file_streamed_to_the_local_store_is_the_file_encoded_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let local = alluvium_storage::LocalFsStore::new(dir.path());
        assert!(
            local
                .put_new_streaming(&StorePath::parse("probe").unwrap(), false)
                .unwrap()
                .is_some(),
            "the local store streams new files"
        );
        // Several files closed at a small target size, each of several row groups, the
        // first ones written to the store before their file is finished.
        let (streamed, memory) = on_two_threads(|| {
            let memory = InMemoryStore::new();
            (
                write_wide_to(&local, 100_000, 10_000, Some(512 << 10), true, Some(12_000)).0,
                write_wide_to(
                    &memory,
                    100_000,
                    10_000,
                    Some(512 << 10),
                    true,
                    Some(12_000),
                )
                .0,
            )
        });
        assert!(streamed.len() > 2, "{} files", streamed.len());
        let first = SerializedFileReader::new(streamed[0].1.clone()).unwrap();
        assert!(first.metadata().num_row_groups() > 2);
        assert_eq!(streamed.len(), memory.len());
        for ((s_add, s_bytes), (m_add, m_bytes)) in streamed.iter().zip(&memory) {
            assert!(s_bytes == m_bytes, "{} and {}", s_add.path, m_add.path);
            assert_eq!(s_add.size, m_add.size);
            assert_eq!(s_add.size, s_bytes.len() as i64);
            assert_eq!(s_add.stats, m_add.stats);
        }
        // Only the finished files are in the directory.
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        let mut want: Vec<String> = streamed.iter().map(|(a, _)| a.path.clone()).collect();
        want.sort();
        assert_eq!(names, want);
    }

    #[test]
    fn row_groups_hold_at_most_the_row_group_rows() {
        let store = InMemoryStore::new();
        let total = 2 * ROW_GROUP_ROWS as i64 + 1_000;
        let (files, _) = write_wide_to(&store, total, 65_536, None, true, None);
        assert_eq!(files.len(), 1);
        let reader = SerializedFileReader::new(files[0].1.clone()).unwrap();
        let groups: Vec<i64> = reader
            .metadata()
            .row_groups()
            .iter()
            .map(|g| g.num_rows())
            .collect();
        let full = ROW_GROUP_ROWS as i64;
        assert_eq!(groups, vec![full, full, 1_000]);
    }

    #[test]
    fn an_abandoned_streamed_file_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let local = alluvium_storage::LocalFsStore::new(dir.path());
        let (schema, config) = (wide_schema(), HashMap::new());
        let mut sink = wide_sink(&local, &schema, &config, None).row_groups_of(1_000);
        let logical = sink.logical_data_schema.clone();
        // More than one row group, so bytes reached the file before it was abandoned.
        for start in (0..3_000).step_by(1_000) {
            sink.write(&wide_batch(&logical, start, 1_000)).unwrap();
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        sink.abort();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn parallel_encoding_writes_the_files_of_sequential_encoding() {
        let ((parallel, batches), (sequential, _)) = on_two_threads(|| {
            (
                write_wide(100_000, 30_000, None, true),
                write_wide(100_000, 30_000, None, false),
            )
        });
        assert_eq!(parallel.len(), 1);
        assert_eq!(sequential.len(), 1);
        let ((p_add, p_bytes), (s_add, s_bytes)) = (&parallel[0], &sequential[0]);
        // Same bytes: same rows, encodings, dictionaries, page cuts and footer.
        assert_eq!(p_bytes, s_bytes);
        assert_eq!(p_add.stats, s_add.stats);
        assert_eq!(p_add.size, s_add.size);
        let stats: serde_json::Value =
            serde_json::from_str(p_add.stats.as_deref().unwrap()).unwrap();
        assert_eq!(stats["numRecords"], 100_000);
        assert_eq!(stats["minValues"]["id"], 0);
        assert_eq!(stats["maxValues"]["id"], 99_999);
        assert_eq!(stats["nullCount"]["value"], 9_091);
        assert_eq!(stats["nullCount"]["pair"]["b"], 33_334);
        // The rows read back are the rows written.
        let all = arrow_select::concat::concat_batches(&batches[0].schema(), &batches).unwrap();
        let read = read_rows(p_bytes);
        assert_eq!(read.num_rows(), 100_000);
        for (r, w) in read.columns().iter().zip(all.columns()) {
            assert_eq!(r.as_ref(), w.as_ref());
        }
        // The dictionary choices of the sampled first rows hold: none for the unique
        // columns (id, ts, the all-distinct doubles), one for the repeated ones.
        let reader = SerializedFileReader::new(p_bytes.clone()).unwrap();
        let dictionaries: Vec<(String, bool)> = reader
            .metadata()
            .row_group(0)
            .columns()
            .iter()
            .map(|c| {
                (
                    c.column_path().string(),
                    c.dictionary_page_offset().is_some(),
                )
            })
            .collect();
        assert_eq!(
            dictionaries,
            vec![
                ("id".to_string(), false),
                ("category".to_string(), true),
                ("value".to_string(), false),
                ("ts".to_string(), false),
                ("pair.a".to_string(), true),
                // Under a struct: not sampled, the default dictionary.
                ("pair.b".to_string(), true),
            ]
        );
        // Only the encodings every Parquet reader decodes (see `dictionary_choice`): the
        // unique columns PLAIN, not delta-packed or byte-stream-split.
        for chunk in reader.metadata().row_group(0).columns() {
            for encoding in chunk.encodings() {
                assert!(
                    matches!(
                        encoding,
                        Encoding::PLAIN | Encoding::RLE | Encoding::RLE_DICTIONARY
                    ),
                    "{} has {encoding:?}",
                    chunk.column_path()
                );
            }
        }
    }

    #[test]
    fn encoding_writes_the_file_arrow_writer_writes() {
        // The file is byte for byte the one `ArrowWriter` writes with the sink's properties
        // (dictionary choice included), so replacing it changed nothing in the files.
        let (files, batches) = on_two_threads(|| write_wide(50_000, 10_000, None, true));
        let store = InMemoryStore::new();
        let (schema, config) = (wide_schema(), HashMap::new());
        let sink = wide_sink(&store, &schema, &config, None);
        let props = dictionary_choice(sink.props.clone(), &batches[0]).unwrap();
        let mut writer =
            ArrowWriter::try_new(Vec::new(), sink.physical_schema.clone(), Some(props)).unwrap();
        for b in &batches {
            let physical =
                RecordBatch::try_new(sink.physical_schema.clone(), b.columns().to_vec()).unwrap();
            writer.write(&physical).unwrap();
        }
        let expected = writer.into_inner().unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].1.as_ref(), expected.as_slice());
    }

    #[test]
    fn row_groups_spliced_while_the_next_batch_is_encoded_keep_their_order() {
        // Several row groups per file and several files: each closed row group goes into
        // its file while the next batch is encoded (or when the file ends), and the files
        // are still those `ArrowWriter` writes batch by batch into one file after another.
        let group_rows = 12_000;
        let target = 600 << 10;
        let (files, batches) = on_two_threads(|| {
            write_wide_to(
                &InMemoryStore::new(),
                100_000,
                10_000,
                Some(target),
                true,
                Some(group_rows),
            )
        });
        assert!(files.len() > 1, "{} files", files.len());
        let store = InMemoryStore::new();
        let (schema, config) = (wide_schema(), HashMap::new());
        let sink = wide_sink(&store, &schema, &config, None).row_groups_of(group_rows);
        let props = dictionary_choice(sink.props.clone(), &batches[0]).unwrap();
        let mut batches = batches.iter();
        for (i, (add, bytes)) in files.iter().enumerate() {
            let mut writer = ArrowWriter::try_new(
                Vec::new(),
                sink.physical_schema.clone(),
                Some(props.clone()),
            )
            .unwrap();
            while writer.bytes_written() + writer.in_progress_size() < target as usize {
                let Some(b) = batches.next() else { break };
                let physical =
                    RecordBatch::try_new(sink.physical_schema.clone(), b.columns().to_vec())
                        .unwrap();
                writer.write(&physical).unwrap();
            }
            let expected = writer.into_inner().unwrap();
            let groups = SerializedFileReader::new(bytes.clone())
                .unwrap()
                .metadata()
                .num_row_groups();
            if i + 1 < files.len() {
                assert!(groups > 1, "{} row groups in {}", groups, add.path);
            }
            assert_eq!(bytes.as_ref(), expected.as_slice(), "{}", add.path);
        }
        assert!(batches.next().is_none(), "every batch is in a file");
    }

    #[test]
    fn parallel_encoding_still_closes_files_at_the_target_size() {
        let ((parallel, _), (sequential, _)) = on_two_threads(|| {
            (
                write_wide(200_000, 16_384, Some(256 * 1024), true),
                write_wide(200_000, 16_384, Some(256 * 1024), false),
            )
        });
        assert!(parallel.len() > 2, "{} files", parallel.len());
        assert_eq!(parallel.len(), sequential.len());
        let mut rows = 0;
        for ((p_add, p_bytes), (s_add, s_bytes)) in parallel.iter().zip(&sequential) {
            assert_eq!(p_bytes, s_bytes);
            assert_eq!(p_add.stats, s_add.stats);
            let n = read_rows(p_bytes).num_rows();
            let stats: serde_json::Value =
                serde_json::from_str(p_add.stats.as_deref().unwrap()).unwrap();
            assert_eq!(stats["numRecords"], n);
            rows += n;
        }
        assert_eq!(rows, 200_000);
    }

    #[test]
    fn a_few_rows_are_encoded_on_the_calling_thread() {
        // Below the threshold the parallel sink takes the sequential path (no pool
        // involved), and writes the same file as ever.
        let ((parallel, _), (sequential, _)) = on_two_threads(|| {
            (
                write_wide(100, 100, None, true),
                write_wide(100, 100, None, false),
            )
        });
        assert_eq!(parallel[0].1, sequential[0].1);
    }
}
