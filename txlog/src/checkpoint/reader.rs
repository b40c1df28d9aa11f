//! Reading checkpoint files: classic and multi-part Parquet, UUID-named V2 checkpoints in
//! JSON or Parquet, and their sidecar files.

use std::panic::{AssertUnwindSafe, catch_unwind};

use alluvium_storage::{FileLocation, ObjectMeta, ObjectStore, StorePath};
use arrow_array::{Array, RecordBatch};
use bytes::Bytes;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use rayon::prelude::*;

use super::columns::{IntCol, StructCol};
use super::parsed_values::{partition_text, struct_json};
use super::thrift_check;
use crate::actions::*;
use crate::commit::decode_commit;
use crate::log_path::{CheckpointFormat, CheckpointKind, DELTA_LOG_DIR, SIDECAR_DIR, Version};
use crate::{LogError, Result};

/// Top-level columns of a checkpoint that carry actions.
const ACTION_COLUMNS: &[&str] = &[
    ADD,
    REMOVE,
    METADATA,
    PROTOCOL,
    TXN,
    DOMAIN_METADATA,
    CHECKPOINT_METADATA,
    SIDECAR,
];

/// Rows per decoded batch: large batches amortize per-batch work on big checkpoints.
const BATCH_SIZE: usize = 32 * 1024;

/// The files of one complete checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointFiles {
    /// The checkpoint's version.
    pub version: Version,
    /// Its naming scheme.
    pub kind: CheckpointKind,
    /// The files (one, or every part in order).
    pub files: Vec<ObjectMeta>,
}

/// Decodes the actions of one Parquet checkpoint (or sidecar) file.
///
/// A panic inside the Parquet decoder (possible on hostile input in some versions of the
/// crate) is caught and reported as corruption rather than unwinding through the caller.
///
/// # Errors
/// [`LogError::CorruptCheckpoint`] naming `path` if the file is not readable Parquet or an
/// action row lacks a required field.
pub fn read_parquet_actions(path: &str, data: Bytes) -> Result<Vec<Action>> {
    match catch_unwind(AssertUnwindSafe(|| read_parquet_actions_inner(path, data))) {
        Ok(r) => r,
        Err(_) => Err(LogError::corrupt_checkpoint(
            path,
            "the Parquet decoder failed on this file",
        )),
    }
}

fn read_parquet_actions_inner(path: &str, data: Bytes) -> Result<Vec<Action>> {
    let corrupt = |e: &dyn std::fmt::Display| LogError::corrupt_checkpoint(path, e);
    // The parquet crate can spin on hostile Thrift; check what it will decode first.
    thrift_check::check_footer(&data).map_err(|e| corrupt(&e))?;
    let builder =
        ParquetRecordBatchReaderBuilder::try_new(data.clone()).map_err(|e| corrupt(&e))?;
    thrift_check::check_page_headers(&data, builder.metadata()).map_err(|e| corrupt(&e))?;
    let roots: Vec<usize> = builder
        .schema()
        .fields()
        .iter()
        .enumerate()
        .filter(|(_, f)| ACTION_COLUMNS.contains(&f.name().as_str()))
        .map(|(i, _)| i)
        .collect();
    if roots.is_empty() {
        return Err(corrupt(
            &"no action columns (add, remove, metaData, protocol, ...) in the file",
        ));
    }
    // The footer's row count only sizes the first allocation. Real checkpoints are far larger
    // in bytes than in rows; capping by the file size keeps a corrupt count from making the
    // allocation fail, which aborts the process.
    let rows = usize::try_from(builder.metadata().file_metadata().num_rows())
        .unwrap_or(0)
        .min(data.len());
    let mask = ProjectionMask::roots(builder.parquet_schema(), roots);
    let reader = builder
        .with_projection(mask)
        .with_batch_size(BATCH_SIZE)
        .build()
        .map_err(|e| corrupt(&e))?;
    let mut out = Vec::with_capacity(rows);
    for batch in reader {
        let batch = batch.map_err(|e| corrupt(&e))?;
        batch_actions(path, &batch, &mut out)?;
    }
    Ok(out)
}

/// Converts one record batch of checkpoint rows into actions.
fn batch_actions(path: &str, batch: &RecordBatch, out: &mut Vec<Action>) -> Result<()> {
    let col = |name: &str| StructCol::of(batch.column_by_name(name));
    let missing =
        |what: &str, row: usize| LogError::corrupt_checkpoint(path, format!("{what} at row {row}"));

    let add = col(ADD);
    let add_path = add.string("path");
    let add_pv = add.map("partitionValues");
    let add_pv_parsed = add.strukt("partitionValues_parsed");
    let add_size = add.int("size");
    let add_mtime = add.int("modificationTime");
    let add_dc = add.boolean("dataChange");
    let add_stats = add.string("stats");
    let add_stats_parsed = add.strukt("stats_parsed");
    let add_tags = add.map("tags");
    let add_dv = DvCols::of(&add.strukt("deletionVector"));
    let add_base_row = add.int("baseRowId");
    let add_drcv = add.int("defaultRowCommitVersion");
    let add_cluster = add.string("clusteringProvider");

    let rm = col(REMOVE);
    let rm_path = rm.string("path");
    let rm_ts = rm.int("deletionTimestamp");
    let rm_dc = rm.boolean("dataChange");
    let rm_ext = rm.boolean("extendedFileMetadata");
    let rm_pv = rm.map("partitionValues");
    let rm_size = rm.int("size");
    let rm_tags = rm.map("tags");
    let rm_dv = DvCols::of(&rm.strukt("deletionVector"));
    let rm_base_row = rm.int("baseRowId");
    let rm_drcv = rm.int("defaultRowCommitVersion");

    let md = col(METADATA);
    let md_id = md.string("id");
    let md_name = md.string("name");
    let md_desc = md.string("description");
    let md_format = md.strukt("format");
    let md_provider = md_format.string("provider");
    let md_options = md_format.map("options");
    let md_schema = md.string("schemaString");
    let md_parts = md.strings("partitionColumns");
    let md_created = md.int("createdTime");
    let md_conf = md.map("configuration");

    let proto = col(PROTOCOL);
    let p_r = proto.int("minReaderVersion");
    let p_w = proto.int("minWriterVersion");
    let p_rf = proto.strings("readerFeatures");
    let p_wf = proto.strings("writerFeatures");

    let txn = col(TXN);
    let t_app = txn.string("appId");
    let t_ver = txn.int("version");
    let t_last = txn.int("lastUpdated");

    let dm = col(DOMAIN_METADATA);
    let d_domain = dm.string("domain");
    let d_conf = dm.string("configuration");
    let d_removed = dm.boolean("removed");

    let cm = col(CHECKPOINT_METADATA);
    let cm_version = cm.int("version");
    let cm_tags = cm.map("tags");

    let sc = col(SIDECAR);
    let sc_path = sc.string("path");
    let sc_size = sc.int("sizeInBytes");
    let sc_mtime = sc.int("modificationTime");
    let sc_tags = sc.map("tags");

    for i in 0..batch.num_rows() {
        if add.valid(i)
            && let Some(p) = add_path.get(i)
        {
            let partition_values = match add_pv.get(i) {
                Some(m) => m,
                None => parsed_partition_values(&add_pv_parsed, i),
            };
            let stats = match add_stats.get(i) {
                Some(s) => Some(s.to_string()),
                None if add_stats_parsed.valid(i) => add_stats_parsed
                    .0
                    .map(|s| serde_json::Value::Object(struct_json(s, i)).to_string()),
                None => None,
            };
            out.push(Action::Add(Add {
                path: p.to_string(),
                partition_values,
                size: add_size
                    .get(i)
                    .ok_or_else(|| missing("add without size", i))?,
                modification_time: add_mtime.get(i).unwrap_or(0),
                data_change: add_dc.get(i).unwrap_or(false),
                stats,
                tags: add_tags.get(i),
                deletion_vector: add_dv.get(i),
                base_row_id: add_base_row.get(i),
                default_row_commit_version: add_drcv.get(i),
                clustering_provider: add_cluster.get(i).map(str::to_string),
            }));
            continue;
        }
        if rm.valid(i)
            && let Some(p) = rm_path.get(i)
        {
            out.push(Action::Remove(Remove {
                path: p.to_string(),
                deletion_timestamp: rm_ts.get(i),
                data_change: rm_dc.get(i).unwrap_or(false),
                extended_file_metadata: rm_ext.get(i),
                partition_values: rm_pv.get(i),
                size: rm_size.get(i),
                stats: None,
                tags: rm_tags.get(i),
                deletion_vector: rm_dv.get(i),
                base_row_id: rm_base_row.get(i),
                default_row_commit_version: rm_drcv.get(i),
            }));
            continue;
        }
        if md.valid(i)
            && let Some(id) = md_id.get(i)
        {
            out.push(Action::Metadata(Metadata {
                id: id.to_string(),
                name: md_name.get(i).map(str::to_string),
                description: md_desc.get(i).map(str::to_string),
                format: Format {
                    provider: md_provider.get(i).unwrap_or("parquet").to_string(),
                    options: md_options.get_map(i).unwrap_or_default(),
                },
                schema_string: md_schema.get(i).unwrap_or_default().to_string(),
                partition_columns: md_parts.get(i).unwrap_or_default(),
                created_time: md_created.get(i),
                configuration: md_conf.get_map(i).unwrap_or_default(),
            }));
            continue;
        }
        if proto.valid(i)
            && let (Some(r), Some(w)) = (p_r.get(i), p_w.get(i))
        {
            out.push(Action::Protocol(Protocol {
                min_reader_version: i32::try_from(r)
                    .map_err(|_| missing("protocol version out of range", i))?,
                min_writer_version: i32::try_from(w)
                    .map_err(|_| missing("protocol version out of range", i))?,
                reader_features: p_rf.get(i),
                writer_features: p_wf.get(i),
            }));
            continue;
        }
        if txn.valid(i)
            && let Some(app) = t_app.get(i)
        {
            out.push(Action::Txn(SetTransaction {
                app_id: app.to_string(),
                version: t_ver
                    .get(i)
                    .ok_or_else(|| missing("txn without version", i))?,
                last_updated: t_last.get(i),
            }));
            continue;
        }
        if dm.valid(i)
            && let Some(domain) = d_domain.get(i)
        {
            out.push(Action::DomainMetadata(DomainMetadata {
                domain: domain.to_string(),
                configuration: d_conf.get(i).unwrap_or_default().to_string(),
                removed: d_removed.get(i).unwrap_or(false),
            }));
            continue;
        }
        if cm.valid(i)
            && let Some(v) = cm_version.get(i)
        {
            out.push(Action::CheckpointMetadata(CheckpointMetadata {
                version: v,
                tags: cm_tags.get(i),
            }));
            continue;
        }
        if sc.valid(i)
            && let Some(p) = sc_path.get(i)
        {
            out.push(Action::Sidecar(Sidecar {
                path: p.to_string(),
                size_in_bytes: sc_size.get(i).unwrap_or(0),
                modification_time: sc_mtime.get(i).unwrap_or(0),
                tags: sc_tags.get(i),
            }));
        }
    }
    Ok(())
}

fn parsed_partition_values(parsed: &StructCol<'_>, i: usize) -> OptStringMap {
    let Some(s) = parsed.0.filter(|s| s.is_valid(i)) else {
        return OptStringMap::default();
    };
    s.fields()
        .iter()
        .zip(s.columns())
        .map(|(f, c)| (f.name().clone(), partition_text(c, i)))
        .collect()
}

/// Columns of a deletion-vector descriptor struct.
struct DvCols<'a> {
    s: StructCol<'a>,
    storage: super::columns::StrCol<'a>,
    path: super::columns::StrCol<'a>,
    offset: IntCol<'a>,
    size: IntCol<'a>,
    cardinality: IntCol<'a>,
}

impl<'a> DvCols<'a> {
    fn of(s: &StructCol<'a>) -> Self {
        DvCols {
            s: StructCol(s.0),
            storage: s.string("storageType"),
            path: s.string("pathOrInlineDv"),
            offset: s.int("offset"),
            size: s.int("sizeInBytes"),
            cardinality: s.int("cardinality"),
        }
    }

    fn get(&self, i: usize) -> Option<DeletionVectorDescriptor> {
        if !self.s.valid(i) {
            return None;
        }
        Some(DeletionVectorDescriptor {
            storage_type: self.storage.get(i)?.to_string(),
            path_or_inline_dv: self.path.get(i)?.to_string(),
            offset: self.offset.get(i).and_then(|o| i32::try_from(o).ok()),
            size_in_bytes: i32::try_from(self.size.get(i)?).ok()?,
            cardinality: self.cardinality.get(i)?,
        })
    }
}

fn read_one(
    store: &dyn ObjectStore,
    meta: &ObjectMeta,
    kind: &CheckpointKind,
) -> Result<Vec<Action>> {
    let path = meta.path.as_str();
    let data = store.get(&meta.path)?;
    if data.is_empty() {
        return Err(LogError::corrupt_checkpoint(path, "empty file"));
    }
    match kind {
        CheckpointKind::Uuid {
            format: CheckpointFormat::Json,
            ..
        } => decode_commit(path, &data),
        _ => read_parquet_actions(path, data),
    }
}

/// Reads all actions of a complete checkpoint, including the file actions of its sidecars.
/// Parts and sidecars are read in parallel.
///
/// # Errors
/// [`LogError::CorruptCheckpoint`] (or a storage error) naming the first unreadable file;
/// callers fall back to an older checkpoint.
pub fn read_checkpoint(
    store: &dyn ObjectStore,
    checkpoint: &CheckpointFiles,
) -> Result<Vec<Action>> {
    let parts: Vec<Result<Vec<Action>>> = checkpoint
        .files
        .par_iter()
        .map(|m| read_one(store, m, &checkpoint.kind))
        .collect();
    let mut actions = Vec::new();
    for p in parts {
        actions.extend(p?);
    }
    let sidecars: Vec<Sidecar> = actions
        .iter()
        .filter_map(|a| match a {
            Action::Sidecar(s) => Some(s.clone()),
            _ => None,
        })
        .collect();
    if sidecars.is_empty() {
        return Ok(actions);
    }
    let main = checkpoint
        .files
        .first()
        .map(|m| m.path.to_string())
        .unwrap_or_default();
    let loaded: Vec<Result<Vec<Action>>> = sidecars
        .par_iter()
        .map(|s| read_sidecar(store, &main, s))
        .collect();
    actions.retain(|a| !matches!(a, Action::Sidecar(_)));
    for l in loaded {
        actions.extend(l?);
    }
    Ok(actions)
}

fn read_sidecar(store: &dyn ObjectStore, main: &str, sidecar: &Sidecar) -> Result<Vec<Action>> {
    let decoded = crate::path::percent_decode(&sidecar.path)
        .map_err(|e| LogError::corrupt_checkpoint(main, e))?;
    let location = if crate::path::is_absolute(&decoded) {
        FileLocation::External(decoded.clone())
    } else {
        let rel = format!("{DELTA_LOG_DIR}/{SIDECAR_DIR}/{decoded}");
        FileLocation::Table(StorePath::parse(rel).map_err(|e| {
            LogError::corrupt_checkpoint(main, format!("sidecar {}: {e}", sidecar.path))
        })?)
    };
    let data = store.get_location(&location)?;
    let shown = location.to_string();
    let actions = if decoded.ends_with(".json") {
        decode_commit(&shown, &data)?
    } else {
        read_parquet_actions(&shown, data)?
    };
    // Sidecars hold only file actions.
    Ok(actions
        .into_iter()
        .filter(|a| matches!(a, Action::Add(_) | Action::Remove(_)))
        .collect())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int64Array, StringArray, StructArray};
    use arrow_schema::{DataType, Field, Schema};
    use parquet::arrow::ArrowWriter;

    use super::*;

    // A Thrift compact-protocol writer, just enough for hand-built Parquet files.
    fn varint(out: &mut Vec<u8>, mut v: u64) {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(b);
                return;
            }
            out.push(b | 0x80);
        }
    }

    fn zigzag(v: i64) -> u64 {
        ((v << 1) ^ (v >> 63)) as u64
    }

    fn list(elem_type: u8, elems: &[Vec<u8>]) -> Vec<u8> {
        let mut out = Vec::new();
        if elems.len() < 15 {
            out.push(((elems.len() as u8) << 4) | elem_type);
        } else {
            out.push(0xf0 | elem_type);
            varint(&mut out, elems.len() as u64);
        }
        elems.iter().for_each(|e| out.extend_from_slice(e));
        out
    }

    fn binary(s: &str) -> Vec<u8> {
        let mut out = Vec::new();
        varint(&mut out, s.len() as u64);
        out.extend_from_slice(s.as_bytes());
        out
    }

    #[derive(Default)]
    struct ThriftStruct {
        out: Vec<u8>,
        last: i16,
    }

    impl ThriftStruct {
        fn field(mut self, id: i16, ty: u8, value: &[u8]) -> Self {
            self.out.push((((id - self.last) as u8) << 4) | ty);
            self.last = id;
            self.out.extend_from_slice(value);
            self
        }

        fn int(self, id: i16, ty: u8, v: i64) -> Self {
            let mut value = Vec::new();
            varint(&mut value, zigzag(v));
            self.field(id, ty, &value)
        }

        /// Bytes written verbatim (a hostile field with a long-form header).
        fn raw(mut self, bytes: &[u8]) -> Self {
            self.out.extend_from_slice(bytes);
            self
        }

        fn end(mut self) -> Vec<u8> {
            self.out.push(0);
            self.out
        }
    }

    const I32: u8 = 5;
    const I64: u8 = 6;
    const BINARY: u8 = 8;
    const LIST: u8 = 9;
    const STRUCT: u8 = 12;

    /// A Parquet file with one optional INT32 column `txn` whose single column chunk is
    /// `page` (at offset 4); `footer_extra` is appended to the `FileMetaData` fields.
    fn parquet_file(page: &[u8], num_rows: i64, footer_extra: &[u8]) -> Bytes {
        let schema = [
            ThriftStruct::default()
                .field(4, BINARY, &binary("schema"))
                .int(5, I32, 1)
                .end(),
            ThriftStruct::default()
                .int(1, I32, 1)
                .int(3, I32, 1)
                .field(4, BINARY, &binary("txn"))
                .end(),
        ];
        let len = page.len() as i64;
        let meta = ThriftStruct::default()
            .int(1, I32, 1)
            .field(2, LIST, &list(I32, &[vec![0]]))
            .field(3, LIST, &list(BINARY, &[binary("txn")]))
            .int(4, I32, 0)
            .int(5, I64, 1)
            .int(6, I64, len)
            .int(7, I64, len)
            .int(9, I64, 4)
            .end();
        let chunk = ThriftStruct::default()
            .int(2, I64, 4)
            .field(3, STRUCT, &meta)
            .end();
        let row_groups: Vec<Vec<u8>> = if page.is_empty() {
            Vec::new()
        } else {
            let columns = list(STRUCT, &[chunk]);
            vec![
                ThriftStruct::default()
                    .field(1, LIST, &columns)
                    .int(2, I64, len)
                    .int(3, I64, 1)
                    .end(),
            ]
        };
        let footer = ThriftStruct::default()
            .int(1, I32, 1)
            .field(2, LIST, &list(STRUCT, &schema))
            .int(3, I64, num_rows)
            .field(4, LIST, &list(STRUCT, &row_groups))
            .raw(footer_extra)
            .end();
        let mut file = b"PAR1".to_vec();
        file.extend_from_slice(page);
        file.extend_from_slice(&footer);
        file.extend_from_slice(&(footer.len() as u32).to_le_bytes());
        file.extend_from_slice(b"PAR1");
        Bytes::from(file)
    }

    fn corrupt_reason(r: Result<Vec<Action>>) -> String {
        match r {
            Err(LogError::CorruptCheckpoint { reason, .. }) => reason,
            other => panic!("expected a corrupt checkpoint, got {other:?}"),
        }
    }

    /// Found by the `checkpoint_parquet` fuzz target (a timeout): an unknown page-header
    /// field holding a list of 242 million UUIDs made the parquet crate skip past the end of
    /// the file element by element, for seconds to minutes.
    #[test]
    fn fuzz_regression_page_header_list_past_eof_is_refused() {
        // Field 9 (unknown), long-form header: list<uuid> of 2^31 - 1 elements.
        let hostile = [0x09, 0x12, 0xfd, 0xff, 0xff, 0xff, 0xff, 0x07];
        let page = ThriftStruct::default()
            .int(1, I32, 0)
            .int(2, I32, 0)
            .int(3, I32, 0)
            .raw(&hostile)
            .end();
        let file = parquet_file(&page, 1, &[]);
        assert!(corrupt_reason(read_parquet_actions("x.parquet", file)).contains("page header"));
    }

    #[test]
    fn footer_list_of_booleans_is_refused() {
        // Field 100 (unknown), long-form header: list<bool> of 2^31 - 1 elements, which the
        // parquet crate would skip without reading a byte.
        let hostile = [0x09, 0xc8, 0x01, 0xf2, 0xff, 0xff, 0xff, 0xff, 0x07];
        let file = parquet_file(&[], 0, &hostile);
        assert!(corrupt_reason(read_parquet_actions("x.parquet", file)).contains("footer"));
    }

    /// Found while fuzzing `checkpoint_parquet`: a footer claiming 10^12 rows made the
    /// reader reserve room for that many actions up front, and the failed allocation
    /// aborted the process.
    #[test]
    fn fuzz_regression_huge_row_count_is_not_preallocated() {
        let file = parquet_file(&[], 1_000_000_000_000, &[]);
        assert_eq!(read_parquet_actions("x.parquet", file).unwrap(), Vec::new());
    }

    #[test]
    fn files_written_by_the_parquet_crate_pass_the_thrift_check() {
        let app: ArrayRef = Arc::new(StringArray::from(vec!["a"; 3]));
        let version: ArrayRef = Arc::new(Int64Array::from(vec![1, 2, 3]));
        let txn = StructArray::from(vec![
            (Arc::new(Field::new("appId", DataType::Utf8, true)), app),
            (
                Arc::new(Field::new("version", DataType::Int64, true)),
                version,
            ),
        ]);
        let schema = Schema::new(vec![Field::new("txn", txn.data_type().clone(), true)]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(txn)]).unwrap();
        let mut buf = Vec::new();
        let mut writer = ArrowWriter::try_new(&mut buf, batch.schema(), None).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        let actions = read_parquet_actions("x.parquet", Bytes::from(buf)).unwrap();
        assert_eq!(actions.len(), 3);
        assert!(matches!(&actions[2], Action::Txn(t) if t.app_id == "a" && t.version == 3));
    }
}
