//! Writing data files: Arrow batches to Parquet files under Hive-style partition
//! directories, each with its statistics, uploaded with put-if-absent under a unique name.
//!
//! Memory is bounded by the files open at once (one per partition being written, each at
//! most the target size) plus, on object stores, the closed files waiting to be uploaded
//! (at most [`MAX_PENDING_UPLOAD_BYTES`], or one file), never by the size of the input.
//!
//! On stores whose requests are slow but can run many at a time
//! ([`ObjectStore::fetches_concurrently`]: object stores), closed files are uploaded in
//! parallel batches of at most [`MAX_PENDING_UPLOAD_BYTES`] in flight, on up to
//! [`UPLOAD_THREADS`] threads; elsewhere each file is uploaded when it is closed.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use alluvium_storage::{ObjectStore, StorePath};
use alluvium_txlog::actions::{Add, OptStringMap};
use alluvium_txlog::column_mapping::ColumnMappingMode;
use alluvium_txlog::partition::{partition_dir_segment, serialize_partition_value};
use alluvium_txlog::path::encode_path;
use alluvium_txlog::properties::TableProperties;
use alluvium_txlog::scalar::scalar_at;
use alluvium_txlog::schema::{DataType, StructField, StructType};
use alluvium_txlog::stats_writer::StatsCollector;
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, ListArray, MapArray, RecordBatch, StructArray, UInt32Array};
use arrow_schema::{DataType as ArrowType, Field, Fields, Schema, SchemaRef};
use arrow_select::take::take_record_batch;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

use crate::scan::scan_fields;
use crate::{Error, Result};

/// Most bytes of closed data files held for one parallel upload batch (a single larger
/// file is uploaded on its own).
pub const MAX_PENDING_UPLOAD_BYTES: u64 = 64 * 1024 * 1024;

/// Most uploads of one batch in flight at once.
pub const UPLOAD_THREADS: usize = 8;

/// Default target size of a data file.
pub const DEFAULT_TARGET_FILE_SIZE: u64 = 128 * 1024 * 1024;

struct OpenFile {
    writer: ArrowWriter<Vec<u8>>,
    stats: StatsCollector,
    key: String,
    partition_values: OptStringMap,
}

/// Writes the rows of one operation into data files and returns their `add` actions.
pub(crate) struct FileSink<'a> {
    store: &'a dyn ObjectStore,
    table: StructType,
    data_schema: StructType,
    logical_data_schema: SchemaRef,
    physical_schema: SchemaRef,
    partition_idx: Vec<usize>,
    data_idx: Vec<usize>,
    mode: ColumnMappingMode,
    props: WriterProperties,
    stats_props: HashMap<String, String>,
    target: u64,
    data_change: bool,
    codec: &'static str,
    open: HashMap<Vec<u8>, OpenFile>,
    done: Vec<Add>,
    /// Closed files not yet uploaded (object stores only), with their `add` actions.
    pending: Vec<(StorePath, bytes::Bytes, Add)>,
    pending_bytes: u64,
    elapsed: std::time::Duration,
}

fn compression(configuration: &HashMap<String, String>) -> (Compression, &'static str) {
    match configuration
        .get("delta.parquet.compression.codec")
        .map(|s| s.to_ascii_lowercase())
        .as_deref()
    {
        Some("zstd") => (Compression::ZSTD(ZstdLevel::default()), "zstd"),
        Some("uncompressed" | "none") => (Compression::UNCOMPRESSED, "uncompressed"),
        Some("lz4" | "lz4_raw") => (Compression::LZ4_RAW, "lz4raw"),
        Some("gzip") => (Compression::GZIP(Default::default()), "gz"),
        _ => (Compression::SNAPPY, "snappy"),
    }
}

/// The Parquet field of a logical field: physical name and, under column mapping, the
/// field id, recursively.
fn physical_field(f: &StructField, mode: ColumnMappingMode) -> Result<Field> {
    let mut field = Field::new(
        mode.physical_name(f),
        physical_type(&f.data_type, mode)?,
        true,
    );
    if mode != ColumnMappingMode::None
        && let Some(id) = f.column_id()
    {
        field = field.with_metadata(HashMap::from([(
            "PARQUET:field_id".to_string(),
            id.to_string(),
        )]));
    }
    Ok(field)
}

fn physical_type(t: &DataType, mode: ColumnMappingMode) -> Result<ArrowType> {
    Ok(match t {
        DataType::Primitive(_) | DataType::Geospatial(_) => crate::scan::scan_type(t)?,
        DataType::Struct(s) => ArrowType::Struct(
            s.fields
                .iter()
                .map(|f| physical_field(f, mode))
                .collect::<Result<Vec<_>>>()?
                .into(),
        ),
        DataType::Array(a) => ArrowType::List(Arc::new(Field::new(
            "element",
            physical_type(&a.element_type, mode)?,
            true,
        ))),
        DataType::Map(m) => {
            let entries = Fields::from(vec![
                Field::new("key", physical_type(&m.key_type, mode)?, false),
                Field::new("value", physical_type(&m.value_type, mode)?, true),
            ]);
            ArrowType::Map(
                Arc::new(Field::new("key_value", ArrowType::Struct(entries), false)),
                false,
            )
        }
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

impl<'a> FileSink<'a> {
    /// A sink for a table with `table` schema, partitioned by `partition_columns`.
    pub(crate) fn new(
        store: &'a dyn ObjectStore,
        table: &StructType,
        partition_columns: &[String],
        configuration: &HashMap<String, String>,
        mode: ColumnMappingMode,
        target_size: Option<u64>,
        data_change: bool,
    ) -> Result<Self> {
        let is_part = |f: &StructField| {
            partition_columns
                .iter()
                .any(|p| p.eq_ignore_ascii_case(&f.name))
        };
        let partition_idx: Vec<usize> = partition_columns
            .iter()
            .map(|p| {
                table.index_of(p).ok_or_else(|| {
                    Error::InvalidArgument(format!("partition column `{p}` is not in the schema"))
                })
            })
            .collect::<Result<_>>()?;
        let data_idx: Vec<usize> = (0..table.fields.len())
            .filter(|i| !is_part(&table.fields[*i]))
            .collect();
        let data_fields: Vec<StructField> =
            data_idx.iter().map(|i| table.fields[*i].clone()).collect();
        let physical: Vec<Field> = data_fields
            .iter()
            .map(|f| physical_field(f, mode))
            .collect::<Result<_>>()?;
        let (codec, codec_name) = compression(configuration);
        let props = WriterProperties::builder()
            .set_compression(codec)
            .set_created_by(crate::ENGINE.into())
            .build();
        let target = target_size
            .or_else(|| TableProperties(configuration).target_file_size())
            .unwrap_or(DEFAULT_TARGET_FILE_SIZE)
            .max(1);
        Ok(FileSink {
            store,
            table: table.clone(),
            logical_data_schema: Arc::new(Schema::new(scan_fields(&data_fields)?)),
            data_schema: StructType::new(data_fields),
            physical_schema: Arc::new(Schema::new(physical)),
            partition_idx,
            data_idx,
            mode,
            props,
            stats_props: configuration.clone(),
            target,
            data_change,
            codec: codec_name,
            open: HashMap::new(),
            done: Vec::new(),
            pending: Vec::new(),
            pending_bytes: 0,
            elapsed: std::time::Duration::ZERO,
        })
    }

    /// Writes a batch conformed to the table's logical schema (all columns).
    pub(crate) fn write(&mut self, batch: &RecordBatch) -> Result<()> {
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
            let converter = arrow::row::RowConverter::new(
                columns
                    .iter()
                    .map(|c| arrow::row::SortField::new(c.data_type().clone()))
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
                        .map_err(|_| Error::InvalidArgument("batch too large".into()))?,
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
                Error::InvalidArgument(format!(
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
        let data = batch.project(&self.data_idx)?;
        let logical =
            RecordBatch::try_new(self.logical_data_schema.clone(), data.columns().to_vec())?;
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
                "part-{:05}-{}.c000.{}.parquet",
                self.done.len() + self.pending.len() + self.open.len(),
                uuid::Uuid::new_v4(),
                self.codec
            );
            let key_path = if dir.is_empty() {
                name
            } else {
                format!("{dir}/{name}")
            };
            let writer = ArrowWriter::try_new(
                Vec::new(),
                self.physical_schema.clone(),
                Some(self.props.clone()),
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
                .ok_or_else(|| Error::InvalidArgument("open file vanished".into()))?;
            file.writer.write(&physical)?;
            file.stats.update(&logical)?;
            (file.writer.bytes_written() + file.writer.in_progress_size()) as u64 >= self.target
        };
        if full && let Some(file) = self.open.remove(&key) {
            self.close(file)?;
        }
        Ok(())
    }

    fn close(&mut self, file: OpenFile) -> Result<()> {
        let bytes = bytes::Bytes::from(file.writer.into_inner()?);
        let size = i64::try_from(bytes.len()).unwrap_or(i64::MAX);
        let path = StorePath::parse(file.key.clone())?;
        let add = Add {
            path: encode_path(&file.key),
            partition_values: file.partition_values,
            size,
            modification_time: self.store.now_ms(),
            data_change: self.data_change,
            stats: Some(file.stats.to_json()),
            tags: None,
            deletion_vector: None,
            base_row_id: None,
            default_row_commit_version: None,
            clustering_provider: None,
        };
        if !self.store.fetches_concurrently() {
            self.store.put_if_absent(&path, bytes)?;
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
        let next = std::sync::atomic::AtomicUsize::new(0);
        let results: Vec<std::sync::Mutex<Option<Result<()>>>> = pending
            .iter()
            .map(|_| std::sync::Mutex::new(None))
            .collect();
        let store = self.store;
        std::thread::scope(|scope| {
            for _ in 0..UPLOAD_THREADS.min(pending.len()) {
                scope.spawn(|| {
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some((path, bytes, _)) = pending.get(i) else {
                            break;
                        };
                        let r = store
                            .put_if_absent(path, bytes.clone())
                            .map_err(Error::from);
                        if let Some(slot) = results.get(i)
                            && let Ok(mut slot) = slot.lock()
                        {
                            *slot = Some(r);
                        }
                    }
                });
            }
        });
        let mut first_error = None;
        for ((_, _, add), result) in pending.into_iter().zip(results) {
            match result.into_inner().ok().flatten() {
                Some(Ok(())) => self.done.push(add),
                Some(Err(e)) => {
                    first_error.get_or_insert(e);
                }
                None => {
                    first_error.get_or_insert(Error::InvalidArgument(
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
    pub(crate) fn finish(mut self) -> Result<(Vec<Add>, std::time::Duration)> {
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

    /// Gives up: deletes the files already uploaded (open and pending ones never were).
    pub(crate) fn abort(self) {
        discard(self.store, &self.done);
    }
}

/// Deletes files written by a sink whose transaction will not commit.
pub(crate) fn discard(store: &dyn ObjectStore, adds: &[Add]) {
    for a in adds {
        if let Ok(p) = alluvium_txlog::path::percent_decode(&a.path)
            .map_err(|_| ())
            .and_then(|k| StorePath::parse(k).map_err(|_| ()))
        {
            let _ = store.delete(&p);
        }
    }
}
