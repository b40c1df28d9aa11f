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
    let builder = ParquetRecordBatchReaderBuilder::try_new(data).map_err(|e| corrupt(&e))?;
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
    let rows = usize::try_from(builder.metadata().file_metadata().num_rows()).unwrap_or(0);
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
