//! Writing checkpoints (PROTOCOL.md "Checkpoints"): classic single-file, multi-part, and V2
//! (UUID-named main file with `checkpointMetadata` and optional sidecars), in the schema
//! Spark and the Delta kernels read.
//!
//! 1. Gather the state: protocol, metadata, unexpired app transactions, live domains, live
//!    files (sorted by path, so output is deterministic) and tombstones still within
//!    `delta.deletedFileRetentionDuration`; all file actions with `dataChange=false`.
//! 2. Encode rows in batches of [`BATCH_ROWS`] into Parquet, file by file: a batch is a row
//!    group, built and encoded on a task of its own, several in parallel, and appended in
//!    order (the bytes do not depend on the number of threads). A file of at most one batch
//!    is one row group; a larger one is cut by action kind too.
//! 3. Put each file atomically (a rename or a put-if-absent: never a torn file under a final
//!    name), then read it back and check its row counts before reporting success. Only then
//!    may the caller publish `_last_checkpoint`.
//!
//! Multi-part parts hold the rows whose path hashes (CRC-32, stable across processes) to
//! them, so two writers racing on the same version write identical parts.

use std::ops::Range;
use std::sync::Arc;

use alluvium_storage::{ObjectStore, Publish, StorePath};
use arrow_array::builder::{
    BooleanBuilder, Int32Builder, Int64Builder, ListBuilder, MapBuilder, MapFieldNames,
    StringBuilder,
};
use arrow_array::{ArrayRef, StructArray, new_null_array};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Field, Fields, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_writer::compute_leaves;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;
use rayon::prelude::*;

use super::last_checkpoint::LastCheckpointHint;
use super::layout::{Described, Kind, Spec};
use super::reader::{ActionCounts, count_parquet_actions_ranged};
use super::schema::{
    FileShape, PARTITION_VALUES_PARSED, STATS_PARSED, add_fields, checkpoint_schema,
};
use crate::FileRef;
use crate::actions::*;
use crate::column_mapping::ColumnMappingMode;
use crate::log_path::{
    CheckpointFormat, CheckpointKind, DELTA_LOG_DIR, LogFileKind, SIDECAR_DIR, Version,
    log_file_name, log_path,
};
use crate::partition::parse_partition_value;
use crate::path::canonical_path;
use crate::properties::TableProperties;
use crate::replay::TableState;
use crate::scalar::{Scalar, scalars_to_array};
use crate::schema::{DataType as DeltaType, PrimitiveType, StructField, StructType, arrow_type};
use crate::{LogError, Result};

/// Rows per encoded batch.
pub const BATCH_ROWS: usize = 32 * 1024;

/// How to write a checkpoint.
#[derive(Debug, Clone, Copy)]
pub struct CheckpointOptions {
    /// Split checkpoints holding more actions than this: into parts (V1 tables) or sidecar
    /// files (V2 tables). `None`: never split.
    pub part_size: Option<usize>,
    /// The current time, against which tombstone and transaction retention is judged.
    pub now_ms: i64,
}

/// What was written.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckpointOutput {
    /// The checkpoint's version.
    pub version: Version,
    /// The checkpoint files (the parts, or the single / main file).
    pub files: Vec<StorePath>,
    /// V2 sidecar files.
    pub sidecars: Vec<StorePath>,
    /// The `_last_checkpoint` content describing it.
    pub hint: LastCheckpointHint,
}

/// One row of a checkpoint.
///
/// A row is a tag and a reference (the actions it writes live elsewhere, the two rare owned
/// ones boxed), so the rows of a million-file checkpoint take 24 MB, not the size of a
/// million removes.
enum Row<'a> {
    Txn(&'a SetTransaction),
    Add(FileRef<'a>),
    Remove(&'a Remove),
    Metadata(&'a Metadata),
    Protocol(&'a Protocol),
    Domain(&'a DomainMetadata),
    CheckpointMetadata(Box<CheckpointMetadata>),
    Sidecar(Box<Sidecar>),
}

/// The actions written into a file of `rows` (in order, [`encode`]), by kind: what reading
/// it back must count.
fn counts_of(rows: &[&[Row<'_>]]) -> ActionCounts {
    let mut c = ActionCounts::default();
    for r in rows.iter().flat_map(|part| part.iter()) {
        match r {
            Row::Add(_) => c.adds += 1,
            Row::Remove(_) => c.removes += 1,
            _ => c.other += 1,
        }
    }
    c
}

/// Types of the optional parsed columns.
struct Parsed {
    partition: Option<(DataType, Vec<(String, PrimitiveType)>)>,
    stats: Option<DataType>,
}

fn stats_leaf(t: &DeltaType, counts: bool) -> Option<DataType> {
    match t {
        DeltaType::Struct(s) => {
            let fields: Vec<Field> = s
                .fields
                .iter()
                .filter_map(|f| {
                    stats_leaf(&f.data_type, counts).map(|t| Field::new(&f.name, t, true))
                })
                .collect();
            (!fields.is_empty()).then(|| DataType::Struct(Fields::from(fields)))
        }
        _ if counts => Some(DataType::Int64),
        DeltaType::Primitive(p) => match p {
            PrimitiveType::Boolean
            | PrimitiveType::Binary
            | PrimitiveType::Void
            | PrimitiveType::Variant => None,
            _ => arrow_type(t).ok(),
        },
        _ => None,
    }
}

fn parsed_types(state: &TableState) -> Result<Parsed> {
    let props = TableProperties(&state.metadata().configuration);
    if !props.write_stats_as_struct() {
        return Ok(Parsed {
            partition: None,
            stats: None,
        });
    }
    let schema = StructType::from_json(&state.metadata().schema_string)?;
    let mode = ColumnMappingMode::of(state.protocol(), state.metadata());
    let physical = mode.physical_schema(&schema);
    let parts = &state.metadata().partition_columns;
    let is_part = |f: &StructField| {
        parts.iter().any(|p| {
            schema
                .field(p)
                .is_some_and(|l| mode.physical_name(l) == f.name)
        })
    };
    let data: Vec<StructField> = physical
        .fields
        .iter()
        .filter(|f| !is_part(f))
        .cloned()
        .collect();
    let data = DeltaType::Struct(Box::new(StructType::new(data)));
    let mut stats = vec![Field::new("numRecords", DataType::Int64, true)];
    if let Some(t) = stats_leaf(&data, false) {
        stats.push(Field::new("minValues", t.clone(), true));
        stats.push(Field::new("maxValues", t, true));
    }
    if let Some(t) = stats_leaf(&data, true) {
        stats.push(Field::new("nullCount", t, true));
    }
    stats.push(Field::new("tightBounds", DataType::Boolean, true));
    let mut part_cols = Vec::new();
    let mut part_fields = Vec::new();
    for p in parts {
        if let Some(f) = schema.field(p)
            && let DeltaType::Primitive(ty) = f.data_type
        {
            let name = mode.physical_name(f).to_string();
            part_fields.push(Field::new(&name, arrow_type(&f.data_type)?, true));
            part_cols.push((name, ty));
        }
    }
    Ok(Parsed {
        partition: (!part_fields.is_empty())
            .then(|| (DataType::Struct(Fields::from(part_fields)), part_cols)),
        stats: Some(DataType::Struct(Fields::from(stats))),
    })
}

fn map_builder() -> MapBuilder<StringBuilder, StringBuilder> {
    let names = MapFieldNames {
        entry: "key_value".into(),
        key: "key".into(),
        value: "value".into(),
    };
    MapBuilder::new(Some(names), StringBuilder::new(), StringBuilder::new())
}

fn map_array<'a>(
    items: impl Iterator<Item = Option<Vec<(&'a str, Option<&'a str>)>>>,
) -> Result<ArrayRef> {
    let mut b = map_builder();
    for item in items {
        match item {
            None => b.append(false)?,
            Some(pairs) => {
                for (k, v) in pairs {
                    b.keys().append_value(k);
                    b.values().append_option(v);
                }
                b.append(true)?;
            }
        }
    }
    Ok(Arc::new(b.finish()))
}

fn list_array<'a>(items: impl Iterator<Item = Option<&'a [String]>>) -> ArrayRef {
    let mut b = ListBuilder::new(StringBuilder::new()).with_field(Arc::new(Field::new(
        "element",
        DataType::Utf8,
        true,
    )));
    for item in items {
        match item {
            None => b.append(false),
            Some(values) => {
                for v in values {
                    b.values().append_value(v);
                }
                b.append(true);
            }
        }
    }
    Arc::new(b.finish())
}

fn strings<'a>(items: impl Iterator<Item = Option<&'a str>>) -> ArrayRef {
    let mut b = StringBuilder::new();
    for i in items {
        b.append_option(i);
    }
    Arc::new(b.finish())
}

/// The statistics column: each text written straight into the builder's buffer through one
/// scratch string, not rebuilt into a string of its own.
fn stats_strings<'a>(files: impl Iterator<Item = Option<&'a FileRef<'a>>>) -> ArrayRef {
    let mut b = StringBuilder::new();
    let mut text = String::new();
    for f in files {
        text.clear();
        if f.is_some_and(|f| f.write_stats(&mut text)) {
            b.append_value(&text);
        } else {
            b.append_null();
        }
    }
    Arc::new(b.finish())
}

fn longs(items: impl Iterator<Item = Option<i64>>) -> ArrayRef {
    let mut b = Int64Builder::new();
    for i in items {
        b.append_option(i);
    }
    Arc::new(b.finish())
}

fn ints(items: impl Iterator<Item = Option<i32>>) -> ArrayRef {
    let mut b = Int32Builder::new();
    for i in items {
        b.append_option(i);
    }
    Arc::new(b.finish())
}

fn bools(items: impl Iterator<Item = Option<bool>>) -> ArrayRef {
    let mut b = BooleanBuilder::new();
    for i in items {
        b.append_option(i);
    }
    Arc::new(b.finish())
}

fn structure(fields: &Fields, children: Vec<ArrayRef>, valid: Vec<bool>) -> Result<ArrayRef> {
    Ok(Arc::new(StructArray::try_new(
        fields.clone(),
        children,
        Some(NullBuffer::from(valid)),
    )?))
}

fn dv_array(fields: &Fields, dvs: &[Option<&DeletionVectorDescriptor>]) -> Result<ArrayRef> {
    let children = vec![
        strings(dvs.iter().map(|d| d.map(|d| d.storage_type.as_str()))),
        strings(dvs.iter().map(|d| d.map(|d| d.path_or_inline_dv.as_str()))),
        ints(dvs.iter().map(|d| d.and_then(|d| d.offset))),
        ints(dvs.iter().map(|d| d.map(|d| d.size_in_bytes))),
        longs(dvs.iter().map(|d| d.map(|d| d.cardinality))),
    ];
    structure(fields, children, dvs.iter().map(Option::is_some).collect())
}

fn sub_fields(t: &DataType) -> Fields {
    match t {
        DataType::Struct(f) => f.clone(),
        _ => Fields::empty(),
    }
}

/// The typed `partitionValues_parsed` of the adds (one per row, `None` on rows of other
/// actions, which are null).
fn partition_parsed(
    adds: &[Option<FileRef<'_>>],
    t: &DataType,
    cols: &[(String, PrimitiveType)],
) -> Result<ArrayRef> {
    let fields = sub_fields(t);
    let mut children = Vec::with_capacity(cols.len());
    for ((name, ty), field) in cols.iter().zip(fields.iter()) {
        let values: Vec<Scalar> = adds
            .iter()
            .map(|a| match a {
                Some(a) => {
                    parse_partition_value(name, a.partition_values().get(name).flatten(), *ty)
                }
                None => Ok(Scalar::Null),
            })
            .collect::<Result<_>>()?;
        children.push(scalars_to_array(&values, field.data_type())?);
    }
    structure(
        &fields,
        children,
        adds.iter().map(Option::is_some).collect(),
    )
}

/// The typed `stats_parsed` of the adds (one per row, `None` on rows of other actions,
/// which are null), decoded from their JSON statistics. `None` when some statistics do
/// not fit the table's types (e.g. written before a type change): the JSON statistics
/// remain authoritative then.
fn stats_parsed(adds: &[Option<FileRef<'_>>], t: &DataType) -> Option<ArrayRef> {
    let fields = sub_fields(t);
    let schema = Arc::new(arrow_schema::Schema::new(fields.clone()));
    let mut decoder = arrow_json::ReaderBuilder::new(schema)
        .with_batch_size(adds.len().max(1))
        .build_decoder()
        .ok()?;
    let mut text = String::with_capacity(adds.len() * 64);
    for a in adds {
        if !a.is_some_and(|a| a.write_stats(&mut text)) {
            text.push_str("{}");
        }
        text.push('\n');
    }
    decoder.decode(text.as_bytes()).ok()?;
    let batch = decoder.flush().ok()??;
    if batch.num_rows() != adds.len() {
        return None;
    }
    let valid: Vec<bool> = adds
        .iter()
        .map(|a| a.is_some_and(|a| a.stats().is_some()))
        .collect();
    StructArray::try_new(
        fields,
        batch.columns().to_vec(),
        Some(NullBuffer::from(valid)),
    )
    .ok()
    .map(|s| Arc::new(s) as ArrayRef)
}

/// The column of `data_type` holding `field` of the actions `items` (one per row, `None` on
/// rows of other actions), as the action's description says.
fn encode_field<A>(specs: &[Spec<A>], field: &Field, items: &[Option<&A>]) -> Result<ArrayRef> {
    let Some(spec) = specs.iter().find(|s| s.name == field.name()) else {
        return Err(LogError::Invalid(format!(
            "unexpected checkpoint field {}",
            field.name()
        )));
    };
    Ok(match &spec.kind {
        Kind::Str(get, _) => strings(items.iter().map(|a| a.and_then(get))),
        Kind::Long(get, _) => longs(items.iter().map(|a| a.and_then(get))),
        Kind::Int(get, _) => ints(items.iter().map(|a| a.and_then(get))),
        Kind::Bool(get, _) => bools(items.iter().map(|a| a.and_then(get))),
        Kind::Map(get, _) => map_array(items.iter().map(|a| a.and_then(get)))?,
        Kind::List(get, _) => list_array(items.iter().map(|a| a.and_then(get))),
        Kind::Dv(get, _) => {
            let dvs: Vec<Option<&DeletionVectorDescriptor>> =
                items.iter().map(|a| a.and_then(get)).collect();
            dv_array(&sub_fields(field.data_type()), &dvs)?
        }
        Kind::Struct(nested) => described(nested, field.data_type(), items)?,
    })
}

/// The struct column of `data_type` holding the actions `items`, every field encoded as
/// `specs` describe it.
fn described<A>(specs: &[Spec<A>], data_type: &DataType, items: &[Option<&A>]) -> Result<ArrayRef> {
    let fields = sub_fields(data_type);
    let children = fields
        .iter()
        .map(|f| encode_field(specs, f, items))
        .collect::<Result<_>>()?;
    structure(
        &fields,
        children,
        items.iter().map(Option::is_some).collect(),
    )
}

/// The rows of a row group: slices of the file's rows, one after the other.
type Group<'g, 'r> = [&'g [Row<'r>]];

/// The rows of `group` in order.
fn rows_of_group<'g, 'r>(group: &'g Group<'g, 'r>) -> impl Iterator<Item = &'g Row<'r>> {
    group.iter().flat_map(|part| part.iter())
}

/// The actions of one kind among the rows of `group`, row by row.
fn pick<'g, 'r: 'g, A: ?Sized + 'g>(
    group: &'g Group<'g, 'r>,
    of: impl Fn(&'g Row<'r>) -> Option<&'g A>,
) -> Vec<Option<&'g A>> {
    rows_of_group(group).map(of).collect()
}

/// The top-level column of action `A` for `items`: all null when no row holds one.
fn action_column<A: Described>(data_type: &DataType, items: &[Option<&A>]) -> Result<ArrayRef> {
    if items.iter().all(Option::is_none) {
        return Ok(new_null_array(data_type, items.len()));
    }
    described(A::FIELDS, data_type, items)
}

/// The `add` column: the described fields plus the typed parsed columns the table asks for.
fn add_column(
    data_type: &DataType,
    a: &[Option<FileRef<'_>>],
    parsed: &Parsed,
) -> Result<ArrayRef> {
    let n = a.len();
    if a.iter().all(Option::is_none) {
        return Ok(new_null_array(data_type, n));
    }
    let fields = sub_fields(data_type);
    let mut children = Vec::with_capacity(fields.len());
    for f in fields.iter() {
        children.push(match f.name().as_str() {
            PARTITION_VALUES_PARSED => match &parsed.partition {
                Some((t, cols)) => partition_parsed(a, t, cols)?,
                _ => new_null_array(f.data_type(), n),
            },
            STATS_PARSED => match &parsed.stats {
                Some(t) => stats_parsed(a, t).unwrap_or_else(|| new_null_array(f.data_type(), n)),
                _ => new_null_array(f.data_type(), n),
            },
            _ => add_field(f, a)?,
        });
    }
    structure(&fields, children, a.iter().map(Option::is_some).collect())
}

/// The column of `add` field `field` for the files `files` (one per row, `None` on rows
/// of other actions), read through their accessors: the state keeps its files as columns,
/// and a million-file checkpoint then builds no `Add` per file. Each field is written as
/// `add`'s description writes it (a test compares the column with the one the
/// description's getters make of the same adds).
fn add_field(field: &Field, files: &[Option<FileRef<'_>>]) -> Result<ArrayRef> {
    use super::layout::add_field::*;
    let name = field.name().as_str();
    let each = || files.iter().map(Option::as_ref);
    Ok(match name {
        PATH => strings(each().map(|f| f.map(|f| f.path()))),
        PARTITION_VALUES => {
            map_array(each().map(|f| f.map(|f| f.partition_values().iter().collect())))?
        }
        SIZE => longs(each().map(|f| f.map(|f| f.size()))),
        MODIFICATION_TIME => longs(each().map(|f| f.map(|f| f.modification_time()))),
        // Checkpoints hold the state, not changes: every file action says so.
        DATA_CHANGE => bools(each().map(|f| f.map(|_| false))),
        TAGS => map_array(each().map(|f| f.and_then(|f| f.tags()).map(|t| t.iter().collect())))?,
        DELETION_VECTOR => {
            let dvs: Vec<Option<&DeletionVectorDescriptor>> = each()
                .map(|f| f.and_then(|f| f.deletion_vector()))
                .collect();
            dv_array(&sub_fields(field.data_type()), &dvs)?
        }
        BASE_ROW_ID => longs(each().map(|f| f.and_then(|f| f.base_row_id()))),
        DEFAULT_ROW_COMMIT_VERSION => {
            longs(each().map(|f| f.and_then(|f| f.default_row_commit_version())))
        }
        CLUSTERING_PROVIDER => strings(each().map(|f| f.and_then(|f| f.clustering_provider()))),
        STATS => stats_strings(each()),
        _ => {
            return Err(LogError::Invalid(format!(
                "unexpected checkpoint field {name}"
            )));
        }
    })
}

fn column(
    name: &str,
    data_type: &DataType,
    rows: &Group<'_, '_>,
    parsed: &Parsed,
) -> Result<ArrayRef> {
    let t = data_type;
    match name {
        TXN => action_column(
            t,
            &pick(rows, |r| if let Row::Txn(x) = r { Some(*x) } else { None }),
        ),
        ADD => {
            let adds: Vec<Option<FileRef<'_>>> = rows_of_group(rows)
                .map(|r| match r {
                    Row::Add(f) => Some(*f),
                    _ => None,
                })
                .collect();
            add_column(t, &adds, parsed)
        }
        REMOVE => action_column(
            t,
            &pick(rows, |r| {
                if let Row::Remove(x) = r {
                    Some(*x)
                } else {
                    None
                }
            }),
        ),
        METADATA => action_column(
            t,
            &pick(rows, |r| {
                if let Row::Metadata(x) = r {
                    Some(*x)
                } else {
                    None
                }
            }),
        ),
        PROTOCOL => action_column(
            t,
            &pick(rows, |r| {
                if let Row::Protocol(x) = r {
                    Some(*x)
                } else {
                    None
                }
            }),
        ),
        DOMAIN_METADATA => action_column(
            t,
            &pick(rows, |r| {
                if let Row::Domain(x) = r {
                    Some(*x)
                } else {
                    None
                }
            }),
        ),
        CHECKPOINT_METADATA => action_column(
            t,
            &pick(rows, |r| {
                if let Row::CheckpointMetadata(x) = r {
                    Some(&**x)
                } else {
                    None
                }
            }),
        ),
        SIDECAR => action_column(
            t,
            &pick(rows, |r| {
                if let Row::Sidecar(x) = r {
                    Some(&**x)
                } else {
                    None
                }
            }),
        ),
        other => Err(LogError::Invalid(format!(
            "unexpected checkpoint column {other}"
        ))),
    }
}

/// Leaf columns whose values differ from row to row (a path, a file's statistics, a
/// deletion vector's location): a dictionary cannot shrink them, so they are written plain
/// instead of the encoder building a dictionary for every row group only to give it up
/// (on the 1M-file table that made the file 3% larger, the encoding slower and its memory
/// higher).
const DISTINCT_COLUMNS: &[&[&str]] = &[
    &[ADD, "path"],
    &[ADD, "stats"],
    &[ADD, "deletionVector", "pathOrInlineDv"],
    &[REMOVE, "path"],
    &[REMOVE, "deletionVector", "pathOrInlineDv"],
];

/// Encodes rows into one Parquet file written to `sink` as it is made, batch by batch, and
/// gives `sink` back. The file's rows are the slices of `rows` one after the other (so the
/// caller need not copy its vectors of rows into one).
///
/// A file of at most [`BATCH_ROWS`] rows is one row group. A larger one is cut into
/// homogeneous batches (file actions of one kind, or non-file actions, within one slice),
/// so a reader decodes only the columns of the actions a row group holds, and decodes row
/// groups in parallel.
fn encode<W: std::io::Write + Send>(
    schema: &SchemaRef,
    rows: &[&[Row<'_>]],
    parsed: &Parsed,
    sink: W,
) -> Result<W> {
    let mut props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_created_by(crate::ENGINE.into())
        // Row groups of one batch: the encoder buffers no more than a batch, and readers
        // can decode row groups in parallel.
        .set_max_row_group_row_count(Some(BATCH_ROWS));
    for column in DISTINCT_COLUMNS {
        let path = ColumnPath::new(column.iter().map(|s| (*s).to_string()).collect());
        props = props.set_column_dictionary_enabled(path, false);
    }
    let props = props.build();
    let io = |e: parquet::errors::ParquetError| {
        LogError::Invalid(format!("cannot encode checkpoint: {e}"))
    };
    // The row groups: runs of one action kind, at most a batch each; or, for a small file,
    // all its rows. Splitting a small file by kind gains a reader nothing (a table of 100
    // files gave two row groups, metadata and adds) and costs it a second set of column
    // chunks in the footer it parses on every load, and a second task to decode.
    let kind = |r: &Row<'_>| match r {
        Row::Add(_) => 1,
        Row::Remove(_) => 2,
        _ => 0,
    };
    let total: usize = rows.iter().map(|part| part.len()).sum();
    let mut groups: Vec<Vec<&[Row<'_>]>> = Vec::new();
    if (1..=BATCH_ROWS).contains(&total) {
        groups.push(
            rows.iter()
                .copied()
                .filter(|part| !part.is_empty())
                .collect(),
        );
    } else {
        for rows in rows {
            let mut start = 0;
            while start < rows.len() {
                let k = kind(&rows[start]);
                let mut end = start;
                while end < rows.len() && end - start < BATCH_ROWS && kind(&rows[end]) == k {
                    end += 1;
                }
                groups.push(vec![&rows[start..end]]);
                start = end;
            }
        }
    }
    // The file writer the high-level writer sets up (schema, key-value metadata), driven a
    // row group at a time: each group's columns are built and encoded on its own task, a
    // window of them in parallel, and appended in order, so a checkpoint of a million
    // files encodes on every core while its bytes stay the same for any pool size.
    let (mut writer, factory) = ArrowWriter::try_new(sink, schema.clone(), Some(props))
        .and_then(ArrowWriter::into_serialized_writer)
        .map_err(io)?;
    let encode_group = |(index, group): (usize, &Vec<&[Row<'_>]>)| -> Result<_> {
        let group_rows: usize = group.iter().map(|part| part.len()).sum();
        let mut writers = factory
            .create_column_writers(index)
            .map_err(io)?
            .into_iter();
        let mut closed = Vec::with_capacity(writers.len());
        // A column at a time, each leaf's writer closed as soon as it has its values: a
        // group holds one column's values and one leaf's encoder at a time, not all of them
        // (its encoded chunks are all it keeps).
        for field in schema.fields() {
            let array = column(field.name(), field.data_type(), group, parsed)?;
            if array.len() != group_rows || array.data_type() != field.data_type() {
                return Err(LogError::Invalid(format!(
                    "cannot encode checkpoint: column {} was built as {} values of type {}",
                    field.name(),
                    array.len(),
                    array.data_type()
                )));
            }
            for leaf in compute_leaves(field, &array).map_err(io)? {
                let Some(mut w) = writers.next() else {
                    return Err(LogError::Invalid(
                        "cannot encode checkpoint: more leaf columns than writers".into(),
                    ));
                };
                w.write(&leaf).map_err(io)?;
                closed.push(w.close().map_err(io)?);
            }
        }
        if writers.next().is_some() {
            return Err(LogError::Invalid(
                "cannot encode checkpoint: fewer leaf columns than writers".into(),
            ));
        }
        Ok(closed)
    };
    let window = if groups.len() > 1 {
        rayon::current_num_threads().max(1)
    } else {
        1
    };
    let indexed: Vec<(usize, &Vec<&[Row<'_>]>)> = groups.iter().enumerate().collect();
    for chunk in indexed.chunks(window) {
        let encoded: Vec<Result<Vec<_>>> = if window == 1 {
            chunk.iter().copied().map(encode_group).collect()
        } else {
            chunk.par_iter().copied().map(encode_group).collect()
        };
        for columns in encoded {
            let mut group = writer.next_row_group().map_err(io)?;
            for c in columns? {
                c.append_to_row_group(&mut group).map_err(io)?;
            }
            group.close().map_err(io)?;
        }
    }
    writer.into_inner().map_err(io)
}

/// Encodes `rows` into the file at `path` and publishes it as `publish` says, streaming the
/// bytes to the store as they are encoded where it can take them so (the file is never
/// held whole), else buffering them for one put; then checks it ([`validate`]). Returns
/// the file's size.
fn write_file(
    store: &dyn ObjectStore,
    path: &StorePath,
    publish: Publish,
    schema: &SchemaRef,
    rows: &[&[Row<'_>]],
    parsed: &Parsed,
) -> Result<u64> {
    let len = match store.put_staged(path, publish)? {
        // A failed encode drops the writer, which removes what it staged.
        Some(writer) => encode(schema, rows, parsed, writer)?.finish()?,
        None => {
            let bytes = encode(schema, rows, parsed, Vec::new())?;
            let len = bytes.len() as u64;
            match publish {
                Publish::IfAbsent => store.put_if_absent(path, bytes.into())?,
                _ => store.put(path, bytes.into())?,
            }
            len
        }
    };
    validate(store, path, len, counts_of(rows))?;
    Ok(len)
}

/// Reads a written file back and checks it is `len` bytes long and holds exactly the
/// expected actions, counted by kind without building them. Every row group is decoded,
/// read on its own by range (one at a time per thread), so the check holds a few row
/// groups in memory, not the file. A file that fails the check is removed.
fn validate(
    store: &dyn ObjectStore,
    path: &StorePath,
    len: u64,
    expected: ActionCounts,
) -> Result<()> {
    let stored = store.head(path)?.size;
    let checked = if stored == len {
        let fetch = |range: Range<u64>| store.get_range(path, range).map_err(LogError::from);
        count_parquet_actions_ranged(path.as_str(), len, &fetch).and_then(|got| {
            if got == expected {
                Ok(())
            } else {
                Err(LogError::corrupt_checkpoint(
                    path.as_str(),
                    format!("read back {got:?}, wrote {expected:?}"),
                ))
            }
        })
    } else {
        Err(LogError::corrupt_checkpoint(
            path.as_str(),
            format!("{stored} bytes are stored, {len} were written"),
        ))
    };
    match checked {
        Err(LogError::CorruptCheckpoint { path: p, reason }) => {
            let _ = store.delete(path);
            Err(LogError::CorruptCheckpoint {
                path: p,
                reason: format!("{reason}; the file was removed"),
            })
        }
        other => other,
    }
}

/// Runs `write` for every item on rayon's current pool, a window of as many items as the
/// pool has threads at a time (so no more files than that are encoded and held at once),
/// and gives back the results in the items' order: the parts of a multi-part checkpoint
/// and the sidecars of a V2 one are encoded, stored and read back side by side, each
/// file's own row groups encoding in parallel within it. The first error is returned;
/// files written by then are harmless (no hint or main file names them).
fn in_windows<T: Sync, R: Send>(
    items: &[T],
    write: impl Fn(&T) -> Result<R> + Sync,
) -> Result<Vec<R>> {
    let window = rayon::current_num_threads().max(1);
    let mut out = Vec::with_capacity(items.len());
    for chunk in items.chunks(window) {
        let written: Vec<Result<R>> = if chunk.len() == 1 {
            chunk.iter().map(&write).collect()
        } else {
            chunk.par_iter().map(&write).collect()
        };
        for w in written {
            out.push(w?);
        }
    }
    Ok(out)
}

/// The path a file action row names (`""` for other rows).
fn row_path<'r>(row: &'r Row<'_>) -> &'r str {
    match row {
        Row::Add(a) => a.path(),
        Row::Remove(r) => r.path.as_str(),
        _ => "",
    }
}

/// Live files from which the sort for the checkpoint runs in parallel.
const PARALLEL_SORT_MIN: usize = 1 << 16;

/// Writes a checkpoint of `state` (see the module docs).
///
/// # Errors
/// Storage errors, and [`LogError::CorruptCheckpoint`] when a written file does not read
/// back as written. On error nothing may be published; partial files are harmless
/// (incomplete multi-part sets are ignored by readers).
pub fn write_checkpoint(
    store: &dyn ObjectStore,
    state: &TableState,
    options: &CheckpointOptions,
) -> Result<CheckpointOutput> {
    let version = state.version();
    let props = TableProperties(&state.metadata().configuration);
    let parsed = parsed_types(state)?;
    let add = add_fields(
        props.write_stats_as_json(),
        parsed.partition.as_ref().map(|p| &p.0),
        parsed.stats.as_ref(),
    );

    // Non-file actions.
    let txn_cutoff = props
        .set_transaction_retention_ms()
        .map(|r| options.now_ms.saturating_sub(r));
    let mut txns: Vec<&SetTransaction> = state
        .app_transactions()
        .values()
        .filter(|t| txn_cutoff.is_none_or(|c| t.last_updated.is_none_or(|u| u > c)))
        .collect();
    txns.sort_by(|a, b| a.app_id.cmp(&b.app_id));
    let mut domains: Vec<&DomainMetadata> = state.domains().values().collect();
    domains.sort_by(|a, b| a.domain.cmp(&b.domain));
    let mut meta_rows: Vec<Row<'_>> = vec![
        Row::Protocol(state.protocol()),
        Row::Metadata(state.metadata()),
    ];
    meta_rows.extend(txns.into_iter().map(Row::Txn));
    meta_rows.extend(domains.into_iter().map(Row::Domain));

    // File actions, sorted so that output is deterministic: the adds, then the removes,
    // as rows of one vector (it is what every file's rows are taken from, not copied).
    let cutoff = options
        .now_ms
        .saturating_sub(props.deleted_file_retention_ms());
    let mut removes: Vec<Remove> = state
        .unexpired_tombstones(cutoff)
        .map(|r| Remove {
            data_change: false,
            stats: None,
            tags: None,
            ..r.clone()
        })
        .collect();
    removes.sort_by(|a, b| a.path.cmp(&b.path));
    let num_adds = state.num_files();
    let mut file_rows: Vec<Row<'_>> = Vec::with_capacity(num_adds + removes.len());
    file_rows.extend(state.files().map(Row::Add));
    let by_path = |a: &Row<'_>, b: &Row<'_>| row_path(a).cmp(row_path(b));
    // A large set sorts on every core; a small one without starting a thread pool.
    if file_rows.len() >= PARALLEL_SORT_MIN {
        file_rows.par_sort_by(by_path);
    } else {
        file_rows.sort_by(by_path);
    }
    file_rows.extend(removes.iter().map(Row::Remove));
    let total = meta_rows.len() + file_rows.len();
    let v2 = state
        .protocol()
        .supports_reader_feature(&crate::table::TableFeature::V2Checkpoint);
    let split = options.part_size.filter(|p| *p > 0 && total > *p);

    let mut files = Vec::new();
    let mut sidecars = Vec::new();
    let mut size_in_bytes: i64 = 0;
    let mut v2_info = None;
    let mut parts_written = None;
    if v2 {
        // V2: one main file with checkpointMetadata; file actions inline or in sidecars.
        let mut rows: Vec<Row<'_>> = vec![Row::CheckpointMetadata(Box::new(CheckpointMetadata {
            version: crate::log_path::version_to_i64(version),
            tags: None,
        }))];
        rows.extend(meta_rows);
        let mut inline: &[Row<'_>] = &file_rows;
        if let Some(per) = split {
            let sidecar_schema: SchemaRef =
                Arc::new(checkpoint_schema(FileShape::Sidecar, add.clone()));
            let chunks: Vec<&[Row<'_>]> = file_rows.chunks(per).collect();
            let written = in_windows(&chunks, |chunk| {
                let name = format!("{}.parquet", alluvium_storage::ids::new_uuid());
                let path = StorePath::parse(format!("{DELTA_LOG_DIR}/{SIDECAR_DIR}/{name}"))?;
                let len = write_file(
                    store,
                    &path,
                    Publish::IfAbsent,
                    &sidecar_schema,
                    &[chunk],
                    &parsed,
                )?;
                Ok((name, i64::try_from(len).unwrap_or(i64::MAX), path))
            })?;
            for (name, len, path) in written {
                size_in_bytes += len;
                rows.push(Row::Sidecar(Box::new(Sidecar {
                    path: name,
                    size_in_bytes: len,
                    modification_time: options.now_ms,
                    tags: None,
                })));
                sidecars.push(path);
            }
            inline = &[];
        }
        let uuid = alluvium_storage::ids::new_uuid().to_string();
        let kind = LogFileKind::Checkpoint(CheckpointKind::Uuid {
            uuid,
            format: CheckpointFormat::Parquet,
        });
        let name = log_file_name(version, &kind);
        let path = log_path(&name);
        let schema: SchemaRef = Arc::new(checkpoint_schema(FileShape::V2, add));
        let len = write_file(
            store,
            &path,
            Publish::IfAbsent,
            &schema,
            &[&rows, inline],
            &parsed,
        )?;
        let len = i64::try_from(len).unwrap_or(i64::MAX);
        size_in_bytes += len;
        v2_info = Some(
            serde_json::json!({"path": name, "sizeInBytes": len, "modificationTime": options.now_ms}),
        );
        files.push(path);
    } else {
        let schema: SchemaRef = Arc::new(checkpoint_schema(FileShape::V1, add));
        let parts = split.map_or(1, |per| total.div_ceil(per).max(1));
        // One part holds every row: its file is the two vectors in turn. Several hold the
        // rows whose canonical path hashes to them (moved out of the one vector).
        let buckets: Vec<Vec<Row<'_>>> = if parts == 1 {
            vec![meta_rows, file_rows]
        } else {
            let mut buckets: Vec<Vec<Row<'_>>> = (0..parts).map(|_| Vec::new()).collect();
            buckets[0].extend(meta_rows);
            let root = state.root();
            for row in file_rows {
                let h = crc32fast::hash(canonical_path(row_path(&row), root).as_bytes()) as usize;
                buckets[h % parts].push(row);
            }
            buckets
        };
        let part_rows: Vec<Vec<&[Row<'_>]>> = if parts == 1 {
            vec![buckets.iter().map(Vec::as_slice).collect()]
        } else {
            buckets.iter().map(|b| vec![b.as_slice()]).collect()
        };
        let numbered: Vec<(usize, &Vec<&[Row<'_>]>)> = part_rows.iter().enumerate().collect();
        let written = in_windows(&numbered, |&(i, rows)| {
            let kind = if parts == 1 {
                LogFileKind::Checkpoint(CheckpointKind::Classic)
            } else {
                let part = u32::try_from(i + 1).unwrap_or(u32::MAX);
                LogFileKind::Checkpoint(CheckpointKind::MultiPart {
                    part,
                    parts: u32::try_from(parts).unwrap_or(u32::MAX),
                })
            };
            let path = log_path(&log_file_name(version, &kind));
            // Atomic replace: a concurrent writer of the same version writes the same rows.
            let len = write_file(store, &path, Publish::Replace, &schema, rows, &parsed)?;
            Ok((i64::try_from(len).unwrap_or(i64::MAX), path))
        })?;
        for (len, path) in written {
            size_in_bytes += len;
            files.push(path);
        }
        if parts > 1 {
            parts_written = Some(u32::try_from(parts).unwrap_or(u32::MAX));
        }
    }
    let mut hint = LastCheckpointHint {
        version,
        size: Some(i64::try_from(total).unwrap_or(i64::MAX)),
        parts: parts_written,
        size_in_bytes: Some(size_in_bytes),
        num_of_add_files: Some(i64::try_from(num_adds).unwrap_or(i64::MAX)),
        checkpoint_schema: None,
        checksum: None,
        v2_checkpoint: v2_info,
    };
    hint.checksum = Some(hint.checksum_of());
    Ok(CheckpointOutput {
        version,
        files,
        sidecars,
        hint,
    })
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;
    use crate::checkpoint::read_parquet_actions;
    use crate::checkpoint::reader::{count_parquet_actions, read_parquet_actions_as};

    /// Every field the description of each action names survives encoding and decoding, so
    /// a field whose getter, setter, type or name is wrong (or missing on one side) fails
    /// here; `remove.tags` is read but never written.
    #[test]
    fn every_described_field_round_trips() {
        let dv = DeletionVectorDescriptor {
            storage_type: "u".into(),
            path_or_inline_dv: "ab^-aqEH.-t@S}K{vb[*k^".into(),
            offset: Some(4),
            size_in_bytes: 40,
            cardinality: 6,
        };
        let mut pv = OptStringMap::default();
        pv.insert("p", Some("1".into()));
        pv.insert("q", None);
        let mut tags = OptStringMap::default();
        tags.insert("t", Some("v".into()));
        let add = Add::builder("a.parquet", 10, 20)
            .partition_values(pv.clone())
            .data_change(false)
            .stats(r#"{"numRecords":1}"#)
            .tags(tags.clone())
            .deletion_vector(dv.clone())
            .base_row_id(5)
            .default_row_commit_version(6)
            .clustering_provider("liquid")
            .build();
        let remove = Remove {
            path: "r.parquet".into(),
            deletion_timestamp: Some(7),
            data_change: false,
            extended_file_metadata: Some(true),
            partition_values: Some(pv),
            size: Some(8),
            stats: None,
            tags: Some(tags.clone()),
            deletion_vector: Some(Box::new(dv)),
            base_row_id: Some(9),
            default_row_commit_version: Some(10),
        };
        let metadata = Metadata {
            id: "id".into(),
            name: Some("n".into()),
            description: Some("d".into()),
            format: Format {
                provider: "parquet".into(),
                options: [("o".to_string(), "1".to_string())].into(),
            },
            schema_string: "{}".into(),
            partition_columns: vec!["p".into(), "q".into()],
            created_time: Some(11),
            configuration: [("k".to_string(), "v".to_string())].into(),
        };
        let protocol = Protocol {
            min_reader_version: 3,
            min_writer_version: 7,
            reader_features: Some(vec!["deletionVectors".into()]),
            writer_features: Some(vec!["deletionVectors".into(), "v2Checkpoint".into()]),
        };
        let txn = SetTransaction {
            app_id: "app".into(),
            version: 12,
            last_updated: Some(13),
        };
        let domain = DomainMetadata {
            domain: "dom".into(),
            configuration: "{}".into(),
            removed: true,
        };
        let checkpoint_metadata = CheckpointMetadata {
            version: 14,
            tags: Some(tags.clone()),
        };
        let sidecar = Sidecar {
            path: "s.parquet".into(),
            size_in_bytes: 15,
            modification_time: 16,
            tags: Some(tags),
        };
        let rows = vec![
            Row::CheckpointMetadata(Box::new(checkpoint_metadata.clone())),
            Row::Protocol(&protocol),
            Row::Metadata(&metadata),
            Row::Txn(&txn),
            Row::Domain(&domain),
            Row::Sidecar(Box::new(sidecar.clone())),
            Row::Add((&add).into()),
            Row::Remove(&remove),
        ];
        let (schema, parsed) = plain(FileShape::V2);
        let bytes = Bytes::from(encode(&schema, &[&rows], &parsed, Vec::new()).unwrap());
        let expected = vec![
            Action::CheckpointMetadata(checkpoint_metadata),
            Action::Protocol(protocol),
            Action::Metadata(metadata),
            Action::Txn(txn),
            Action::DomainMetadata(domain),
            Action::Sidecar(sidecar),
            Action::Add(add),
            Action::Remove(Remove {
                tags: None,
                ..remove
            }),
        ];
        // Strings as views (large files) and copied (small ones) read the same.
        for views in [true, false] {
            let read = read_parquet_actions_as("x.parquet", bytes.clone(), views).unwrap();
            assert_eq!(read, expected, "views: {views}");
        }
        // The read-back check counts every kind as the decoder makes it.
        assert_eq!(
            count_parquet_actions("x.parquet", bytes).unwrap(),
            ActionCounts {
                adds: 1,
                removes: 1,
                other: 6
            }
        );
    }

    /// The read-back check (counting without building actions) agrees with decoding on a
    /// file of five row groups, on a pool of one thread and of three, and fails where
    /// reading fails: a truncated file, and a data page whose bytes were overwritten.
    #[test]
    fn counting_agrees_with_decoding_and_fails_where_reading_fails() {
        let (protocol, adds, removes) = many_rows();
        let bytes = Bytes::from(encode_in_pool(1, &protocol, &adds, &removes));
        let read = read_parquet_actions("x.parquet", bytes.clone()).unwrap();
        let decoded = ActionCounts {
            adds: read.iter().filter(|a| matches!(a, Action::Add(_))).count(),
            removes: read
                .iter()
                .filter(|a| matches!(a, Action::Remove(_)))
                .count(),
            other: read
                .iter()
                .filter(|a| !matches!(a, Action::Add(_) | Action::Remove(_)))
                .count(),
        };
        assert_eq!(
            decoded,
            ActionCounts {
                adds: adds.len(),
                removes: removes.len(),
                other: 1
            }
        );
        for threads in [1, 3] {
            let counted = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| count_parquet_actions("x.parquet", bytes.clone()).unwrap());
            assert_eq!(counted, decoded, "threads: {threads}");
        }
        let truncated = bytes.slice(..bytes.len() - 100);
        assert!(read_parquet_actions("x.parquet", truncated.clone()).is_err());
        assert!(count_parquet_actions("x.parquet", truncated).is_err());
        // Overwrite bytes in the middle of the file (inside the adds' data pages).
        let mut damaged = bytes.to_vec();
        let mid = damaged.len() / 2;
        for b in &mut damaged[mid..mid + 64] {
            *b = 0xA5;
        }
        let damaged = Bytes::from(damaged);
        let reading = read_parquet_actions("x.parquet", damaged.clone());
        let counting = count_parquet_actions("x.parquet", damaged);
        assert!(reading.is_err(), "the damage went unnoticed by reading");
        assert!(counting.is_err(), "the damage went unnoticed by counting");
    }

    /// The schema of a checkpoint file of `shape` with JSON statistics and no typed
    /// columns, and the typed columns it asks for (none).
    fn plain(shape: FileShape) -> (SchemaRef, Parsed) {
        let schema = Arc::new(checkpoint_schema(shape, add_fields(true, None, None)));
        let parsed = Parsed {
            partition: None,
            stats: None,
        };
        (schema, parsed)
    }

    /// The parts and sidecars of a checkpoint are written side by side (each item waits,
    /// for a bounded time, until another is in flight, as two stores' puts overlap), come
    /// back in the items' order, and the first error is the answer.
    #[test]
    fn files_are_written_side_by_side_and_kept_in_order() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::time::{Duration, Instant};
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        let (in_flight, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let items: Vec<usize> = (0..8).collect();
        let out = pool
            .install(|| {
                in_windows(&items, |&i| {
                    let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    let started = Instant::now();
                    while in_flight.load(Ordering::SeqCst) < 2
                        && most.load(Ordering::SeqCst) < 2
                        && started.elapsed() < Duration::from_secs(5)
                    {
                        std::thread::yield_now();
                    }
                    in_flight.fetch_sub(1, Ordering::SeqCst);
                    Ok(i * 10)
                })
            })
            .unwrap();
        assert_eq!(out, (0..8).map(|i| i * 10).collect::<Vec<_>>());
        assert!(most.load(Ordering::SeqCst) >= 2, "one file at a time");
        let failed = pool.install(|| {
            in_windows(&items, |&i| {
                if i == 5 {
                    Err(LogError::Invalid("part 5".into()))
                } else {
                    Ok(i)
                }
            })
        });
        assert!(matches!(failed, Err(LogError::Invalid(m)) if m == "part 5"));
    }

    /// A protocol, 2 × [`BATCH_ROWS`] + 77 adds with statistics and 10 removes: five row
    /// groups (the protocol's, three of adds, the removes').
    fn many_rows() -> (Protocol, Vec<Add>, Vec<Remove>) {
        let adds: Vec<Add> = (0..(BATCH_ROWS * 2 + 77))
            .map(|i| {
                Add::builder(format!("part-{i:07}.parquet"), 100 + i as i64, 7)
                    .stats(format!(r#"{{"numRecords":{i}}}"#))
                    .build()
            })
            .collect();
        let removes: Vec<Remove> = adds
            .iter()
            .take(10)
            .map(|a| Remove::from_add(a, 5, false))
            .collect();
        let protocol = Protocol {
            min_reader_version: 1,
            min_writer_version: 2,
            reader_features: None,
            writer_features: None,
        };
        (protocol, adds, removes)
    }

    /// The protocol, then the adds, then the removes, as checkpoint rows.
    fn rows_of<'a>(protocol: &'a Protocol, adds: &'a [Add], removes: &'a [Remove]) -> Vec<Row<'a>> {
        let mut rows = vec![Row::Protocol(protocol)];
        rows.extend(adds.iter().map(|a| Row::Add(a.into())));
        rows.extend(removes.iter().map(Row::Remove));
        rows
    }

    /// [`many_rows`] encoded as a V1 checkpoint file in a pool of `threads`.
    fn encode_in_pool(
        threads: usize,
        protocol: &Protocol,
        adds: &[Add],
        removes: &[Remove],
    ) -> Vec<u8> {
        let rows = rows_of(protocol, adds, removes);
        let (schema, parsed) = plain(FileShape::V1);
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| encode(&schema, &[&rows], &parsed, Vec::new()).unwrap())
    }

    /// Row groups are encoded in parallel and appended in order: the file is the same
    /// whatever the size of the pool, and reads back as the rows in order.
    #[test]
    fn the_bytes_do_not_depend_on_the_pool() {
        let (protocol, adds, removes) = many_rows();
        let one = encode_in_pool(1, &protocol, &adds, &removes);
        assert_eq!(
            one,
            encode_in_pool(3, &protocol, &adds, &removes),
            "the pool's size changed the bytes"
        );
        let read = read_parquet_actions("x.parquet", Bytes::from(one)).unwrap();
        assert_eq!(read.len(), 1 + adds.len() + removes.len());
        assert_eq!(read.first(), Some(&Action::Protocol(protocol.clone())));
        let read_adds: Vec<&Add> = read
            .iter()
            .filter_map(|a| {
                if let Action::Add(a) = a {
                    Some(a)
                } else {
                    None
                }
            })
            .collect();
        assert!(
            read_adds
                .iter()
                .map(|a| (&a.path, a.size, &a.stats))
                .eq(adds.iter().map(|a| (&a.path, a.size, &a.stats))),
            "adds out of order"
        );
        assert_eq!(
            read.iter()
                .filter(|a| matches!(a, Action::Remove(_)))
                .count(),
            removes.len()
        );
    }

    /// A file of several row groups decoded on a pool hands a hashing sink every chunk
    /// with its hashes, each the sink's own hash of its action (SPEC.md §8: the decoding
    /// threads hash, the replay thread only looks up).
    #[test]
    fn decoding_threads_hand_a_hashing_sink_its_hashes() {
        use crate::checkpoint::reader::tests::CheckHashes;
        use crate::checkpoint::visit_parquet_actions;
        let (protocol, adds, removes) = many_rows();
        let bytes = Bytes::from(encode_in_pool(1, &protocol, &adds, &removes));
        let mut sink = CheckHashes::new();
        rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap()
            .install(|| visit_parquet_actions("x.parquet", bytes, &mut sink))
            .unwrap();
        assert_eq!(
            (sink.seen.len(), sink.removes, sink.others),
            (adds.len(), removes.len(), 1)
        );
    }

    /// Random adds (every field present or absent), removes and a protocol in several row
    /// groups: a sink that takes adds packed gets, through the parallel pipeline and from a
    /// file decoded whole (one part of several), the adds with their hashes and the other
    /// actions that plain decoding reads, each in order.
    #[test]
    fn packed_decoding_reads_what_action_decoding_reads() {
        use crate::checkpoint::reader::tests::Packs;
        use crate::checkpoint::visit_parquet_actions;
        use crate::file_columns::testing::{Rng, random_add};
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let adds: Vec<Add> = (0..BATCH_ROWS + 700)
            .map(|i| random_add(&mut rng, format!("p/part-{i}.parquet")))
            .collect();
        let removes: Vec<Remove> = adds
            .iter()
            .step_by(97)
            .map(|a| Remove::from_add(a, 5, false))
            .collect();
        let (protocol, _, _) = many_rows();
        let bytes = Bytes::from(encode_in_pool(1, &protocol, &adds, &removes));
        let mut piped = Packs::new();
        let plain = piped.split(read_parquet_actions("x.parquet", bytes.clone()).unwrap());
        assert_eq!(plain.adds.len(), adds.len());
        rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap()
            .install(|| visit_parquet_actions("x.parquet", bytes.clone(), &mut piped))
            .unwrap();
        let mut whole = piped.split(Vec::new());
        whole.take_file(bytes);
        for (how, got) in [("pipeline", &piped), ("whole file", &whole)] {
            // Two groups of adds packed; the removes' group comes as actions.
            assert_eq!(got.packed, 2, "{how}");
            if let Some((g, p)) = got.adds.iter().zip(&plain.adds).find(|(g, p)| g != p) {
                panic!("{how}: the adds differ: {g:?} against {p:?}");
            }
            assert_eq!(got.adds.len(), plain.adds.len(), "{how}");
            assert_eq!(got.others, plain.others, "{how}");
        }
    }

    /// A row group packs its adds until a batch holds a remove; from there the group comes
    /// as actions, the adds packed so far first (they hold no remove, so they may go before
    /// the others), and reads as plain decoding reads it.
    #[test]
    fn a_group_packs_until_a_batch_holds_a_remove() {
        use crate::checkpoint::reader::tests::Packs;
        use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
        let (protocol, adds, removes) = many_rows();
        let (schema, parsed) = plain(FileShape::V1);
        let file = |rows: Vec<Row<'_>>| {
            Bytes::from(encode(&schema, &[&rows], &parsed, Vec::new()).unwrap())
        };
        let first = file(
            std::iter::once(Row::Protocol(&protocol))
                .chain(adds.iter().take(100).map(|a| Row::Add(a.into())))
                .collect(),
        );
        let second = file(
            removes
                .iter()
                .map(Row::Remove)
                .chain(adds.iter().skip(100).take(50).map(|a| Row::Add(a.into())))
                .collect(),
        );
        let batches = |data: &Bytes| -> Vec<arrow_array::RecordBatch> {
            ParquetRecordBatchReaderBuilder::try_new(data.clone())
                .unwrap()
                .build()
                .unwrap()
                .map(|b| b.unwrap())
                .collect()
        };
        let mut packed = Packs::new();
        packed.take_group(&batches(&first));
        assert_eq!(packed.packed, 1);
        let plain = packed.split(read_parquet_actions("x.parquet", first.clone()).unwrap());
        assert!(packed.adds == plain.adds && packed.others == plain.others);

        let mut switched = packed.split(Vec::new());
        let both: Vec<arrow_array::RecordBatch> = batches(&first)
            .into_iter()
            .chain(batches(&second))
            .collect();
        switched.take_group(&both);
        assert_eq!(switched.packed, 0, "a group with a remove comes as actions");
        let mut actions = read_parquet_actions("x.parquet", first).unwrap();
        actions.extend(read_parquet_actions("x.parquet", second).unwrap());
        let plain = switched.split(actions);
        assert_eq!(switched.adds.len(), 150);
        assert!(switched.adds == plain.adds, "the adds differ");
        assert_eq!(switched.others, plain.others);
    }

    /// The checkpoint half of issue 29's property test: a set built by random adds (every
    /// field present or absent, partition values with NULLs, statistics absent, empty or
    /// with nulls), re-adds with and without deletion vectors, removes and freezes, held as
    /// columns and as one struct per file (the old layout, kept here as the oracle), encodes
    /// to the same checkpoint bytes, typed statistics and partition values included.
    #[test]
    fn a_checkpoint_of_the_columnar_set_is_that_of_the_struct_set() {
        use crate::file_columns::FileColumns;
        use crate::file_columns::testing::{Rng, dv, random_add};
        use crate::file_set::{FileSet, Slab, key_hash};
        use crate::path::TableRoot;
        let root = TableRoot::new("file:///t");
        let hashing = hashbrown::DefaultHashBuilder::default();
        let mut rng = Rng(0xD1B5_4A32_D192_ED03);
        let mut columns: FileSet<FileColumns> = FileSet::default();
        let mut oracle: FileSet<Slab<Add>> = FileSet::default();
        for _ in 0..4000 {
            let path = format!("d/f{}.parquet", rng.below(500));
            let with_dv = rng.chance(3).then(|| dv(&mut rng));
            let hash = key_hash(&hashing, &root, &path, with_dv.as_ref());
            if rng.chance(4) {
                let key = (path.as_str(), with_dv.as_ref());
                columns.remove(&root, hash, key);
                oracle.remove(&root, hash, key);
            } else {
                let mut a = random_add(&mut rng, path);
                a.deletion_vector = with_dv.map(Box::new);
                columns.insert(&root, hash, a.clone());
                oracle.insert(&root, hash, a);
            }
            if rng.chance(150) {
                columns.freeze();
                oracle.freeze();
            }
        }
        let key = |f: &FileRef<'_>| {
            (
                f.path().to_string(),
                f.deletion_vector().map(|d| d.unique_id()),
            )
        };
        let mut from_columns: Vec<FileRef<'_>> = columns.iter().collect();
        let mut from_structs: Vec<FileRef<'_>> = oracle.iter().map(FileRef::from).collect();
        from_columns.sort_by_key(key);
        from_structs.sort_by_key(key);
        assert!(from_columns.len() > 300, "{} files", from_columns.len());
        let string = || DataType::Struct(Fields::from(vec![Field::new("s", DataType::Utf8, true)]));
        let stats = DataType::Struct(Fields::from(vec![
            Field::new("numRecords", DataType::Int64, true),
            Field::new("minValues", string(), true),
            Field::new("maxValues", string(), true),
            Field::new(
                "nullCount",
                DataType::Struct(Fields::from(vec![Field::new("x", DataType::Int64, true)])),
                true,
            ),
        ]));
        let partitions = DataType::Struct(Fields::from(vec![
            Field::new("p", DataType::Utf8, true),
            Field::new("q", DataType::Utf8, true),
        ]));
        let parsed = Parsed {
            partition: Some((
                partitions.clone(),
                vec![
                    ("p".into(), PrimitiveType::String),
                    ("q".into(), PrimitiveType::String),
                ],
            )),
            stats: Some(stats.clone()),
        };
        let schema: SchemaRef = Arc::new(checkpoint_schema(
            FileShape::V1,
            add_fields(true, Some(&partitions), Some(&stats)),
        ));
        let encoded = |files: &[FileRef<'_>]| {
            let rows: Vec<Row<'_>> = files.iter().map(|f| Row::Add(*f)).collect();
            encode(&schema, &[&rows], &parsed, Vec::new()).unwrap()
        };
        let bytes = encoded(&from_columns);
        assert!(bytes == encoded(&from_structs), "the checkpoints differ");
        // And the file reads back as the oracle's adds.
        let read = read_parquet_actions("x.parquet", Bytes::from(bytes)).unwrap();
        let want: Vec<Action> = from_structs
            .iter()
            .map(|f| {
                Action::Add(Add {
                    data_change: false,
                    ..f.to_add()
                })
            })
            .collect();
        assert!(read == want, "the checkpoint reads back otherwise");
    }

    /// The encoder of a state's files writes, field for field, what `add`'s description
    /// writes through its getters (the description stays the one statement of how an `add`
    /// is stored): random adds with every field present or absent, mixed with rows of
    /// another action.
    #[test]
    fn the_add_encoder_writes_what_the_description_writes() {
        use crate::file_columns::testing::{Rng, random_add};
        let mut rng = Rng(0x5851_F42D_4C95_7F2D);
        let adds: Vec<Add> = (0..2000)
            .map(|i| random_add(&mut rng, format!("part-{i}.parquet")))
            .collect();
        let items: Vec<Option<&Add>> = adds
            .iter()
            .enumerate()
            .map(|(i, a)| (i % 7 != 3).then_some(a))
            .collect();
        let files: Vec<Option<FileRef<'_>>> = items.iter().map(|a| a.map(FileRef::from)).collect();
        let add_type = DataType::Struct(add_fields(true, None, None));
        let parsed = Parsed {
            partition: None,
            stats: None,
        };
        let from_files = add_column(&add_type, &files, &parsed).unwrap();
        let described = described(Add::FIELDS, &add_type, &items).unwrap();
        assert_eq!(from_files.as_ref(), described.as_ref());
    }

    /// A row stays a tag and a reference (a file of the state is a pointer to its columns
    /// and a row number): the rows of a million-file checkpoint are held whole while it
    /// is written, so a row the size of an action costs 150 MB there.
    #[test]
    fn a_row_is_a_tag_and_a_reference() {
        assert!(std::mem::size_of::<Row<'_>>() <= 24);
        assert!(std::mem::size_of::<FileRef<'_>>() <= 16);
    }

    /// A local store that records how each file is read and written: whole reads, the
    /// longest ranged read, and staged writes (offered only when `stages`); with `damage`,
    /// ranged reads come back with that file offset's byte flipped.
    #[derive(Debug)]
    struct Watched {
        inner: alluvium_storage::LocalFsStore,
        stages: bool,
        damage: Option<u64>,
        whole_reads: std::sync::atomic::AtomicU64,
        ranged_reads: std::sync::atomic::AtomicU64,
        longest_range: std::sync::atomic::AtomicU64,
        staged: std::sync::atomic::AtomicU64,
    }

    impl Watched {
        fn new(dir: &std::path::Path, stages: bool, damage: Option<u64>) -> Watched {
            Watched {
                inner: alluvium_storage::LocalFsStore::new(dir),
                stages,
                damage,
                whole_reads: Default::default(),
                ranged_reads: Default::default(),
                longest_range: Default::default(),
                staged: Default::default(),
            }
        }
    }

    impl ObjectStore for Watched {
        fn root_uri(&self) -> String {
            self.inner.root_uri()
        }
        fn get(&self, path: &StorePath) -> alluvium_storage::Result<Bytes> {
            self.whole_reads
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            self.inner.get(path)
        }
        fn get_range(
            &self,
            path: &StorePath,
            range: Range<u64>,
        ) -> alluvium_storage::Result<Bytes> {
            self.ranged_reads
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            self.longest_range.fetch_max(
                range.end - range.start,
                std::sync::atomic::Ordering::Relaxed,
            );
            let bytes = self.inner.get_range(path, range.clone())?;
            match self.damage.filter(|d| range.contains(d)) {
                Some(d) => {
                    let mut v = bytes.to_vec();
                    v[(d - range.start) as usize] ^= 0xFF;
                    Ok(v.into())
                }
                None => Ok(bytes),
            }
        }
        fn head(&self, path: &StorePath) -> alluvium_storage::Result<alluvium_storage::ObjectMeta> {
            self.inner.head(path)
        }
        fn put_if_absent(&self, path: &StorePath, data: Bytes) -> alluvium_storage::Result<()> {
            self.inner.put_if_absent(path, data)
        }
        fn put(&self, path: &StorePath, data: Bytes) -> alluvium_storage::Result<()> {
            self.inner.put(path, data)
        }
        fn put_staged(
            &self,
            path: &StorePath,
            publish: Publish,
        ) -> alluvium_storage::Result<Option<Box<dyn alluvium_storage::NewObjectWriter>>> {
            if !self.stages {
                return Ok(None);
            }
            self.staged
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            self.inner.put_staged(path, publish)
        }
        fn list_dir_from(
            &self,
            dir: Option<&StorePath>,
            start: &str,
        ) -> alluvium_storage::Result<Vec<alluvium_storage::ObjectMeta>> {
            self.inner.list_dir_from(dir, start)
        }
        fn list_tree(
            &self,
            dir: Option<&StorePath>,
        ) -> alluvium_storage::Result<Vec<alluvium_storage::ObjectMeta>> {
            self.inner.list_tree(dir)
        }
        fn delete(&self, path: &StorePath) -> alluvium_storage::Result<()> {
            self.inner.delete(path)
        }
    }

    /// A checkpoint file goes to a store that stages writes as it is encoded, and is checked
    /// by reading its footer and then one row group at a time, never the whole file; a store
    /// that cannot stage gets the same bytes in one put. Both publish atomically: no
    /// temporary name is left behind.
    #[test]
    fn a_file_is_streamed_to_the_store_and_checked_a_row_group_at_a_time() {
        let (protocol, adds, removes) = many_rows();
        let rows = rows_of(&protocol, &adds, &removes);
        let (schema, parsed) = plain(FileShape::V1);
        let expected = encode(&schema, &[&rows], &parsed, Vec::new()).unwrap();
        let path = StorePath::parse("_delta_log/00000000000000000010.checkpoint.parquet").unwrap();
        for stages in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let store = Watched::new(dir.path(), stages, None);
            for publish in [Publish::Replace, Publish::IfAbsent] {
                let _ = store.delete(&path);
                let len = write_file(&store, &path, publish, &schema, &[&rows], &parsed).unwrap();
                assert_eq!(len, expected.len() as u64);
                assert!(
                    store.inner.get(&path).unwrap() == expected,
                    "stages: {stages}, {publish:?}: other bytes were stored"
                );
            }
            let load = std::sync::atomic::Ordering::Relaxed;
            assert_eq!(store.staged.load(load), if stages { 2 } else { 0 });
            assert_eq!(
                store.whole_reads.load(load),
                0,
                "the check read the whole file"
            );
            let longest = store.longest_range.load(load);
            assert!(
                longest > 0 && longest < expected.len() as u64 / 2,
                "the longest read was {longest} of {} bytes",
                expected.len()
            );
            let names: Vec<String> = std::fs::read_dir(dir.path().join("_delta_log"))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            assert_eq!(names, vec![path.file_name().to_string()]);
        }
        // A small file is read back in one read.
        let dir = tempfile::tempdir().unwrap();
        let store = Watched::new(dir.path(), true, None);
        let small = &rows[..20];
        write_file(&store, &path, Publish::Replace, &schema, &[small], &parsed).unwrap();
        let load = std::sync::atomic::Ordering::Relaxed;
        assert_eq!(store.ranged_reads.load(load), 1);
        assert_eq!(store.whole_reads.load(load), 0);
    }

    /// A footer longer than the first read is read again whole, and the count is the same
    /// as from one read; a footer length that cannot fit in the file is corrupt.
    #[test]
    fn a_footer_longer_than_the_first_read_is_read_again() {
        use crate::checkpoint::reader::tests_support::count_with_guess;
        let (protocol, adds, removes) = many_rows();
        let bytes = Bytes::from(encode_in_pool(1, &protocol, &adds, &removes));
        let reads = std::sync::Mutex::new(Vec::new());
        let fetch = |r: Range<u64>| -> Result<Bytes> {
            reads.lock().unwrap().push(r.clone());
            Ok(bytes.slice(r.start as usize..r.end as usize))
        };
        let len = bytes.len() as u64;
        let expected = ActionCounts {
            adds: adds.len(),
            removes: removes.len(),
            other: 1,
        };
        assert_eq!(count_with_guess(len, &fetch, 64).unwrap(), expected);
        let reads = std::mem::take(&mut *reads.lock().unwrap());
        assert_eq!(reads[0], len - 64..len, "{reads:?}");
        let footer_len = u64::from(u32::from_le_bytes(
            bytes[bytes.len() - 8..bytes.len() - 4].try_into().unwrap(),
        )) + 8;
        assert!(footer_len > 64);
        assert_eq!(reads[1], len - footer_len..len, "{reads:?}");
        assert_eq!(
            reads.len(),
            2 + 5,
            "the footer twice, then the five row groups"
        );

        // A footer length past the file's start.
        let mut lying = bytes.to_vec();
        let n = lying.len();
        lying[n - 8..n - 4].copy_from_slice(&u32::MAX.to_le_bytes());
        let lying = Bytes::from(lying);
        let fetch =
            |r: Range<u64>| -> Result<Bytes> { Ok(lying.slice(r.start as usize..r.end as usize)) };
        let err = count_with_guess(len, &fetch, 64).unwrap_err();
        assert!(err.to_string().contains("does not fit"), "{err}");
    }

    /// A file that does not read back as written (a byte of a data page, or of the footer,
    /// changed on the way back) fails the checkpoint as corrupt and is removed, staged or
    /// not.
    #[test]
    fn a_file_that_reads_back_damaged_is_removed() {
        let (protocol, adds, removes) = many_rows();
        let rows = rows_of(&protocol, &adds, &removes);
        let (schema, parsed) = plain(FileShape::V1);
        let len = encode(&schema, &[&rows], &parsed, Vec::new())
            .unwrap()
            .len() as u64;
        let path = StorePath::parse("_delta_log/00000000000000000010.checkpoint.parquet").unwrap();
        for stages in [true, false] {
            for at in [len / 2, len - 20] {
                let dir = tempfile::tempdir().unwrap();
                let store = Watched::new(dir.path(), stages, Some(at));
                let err = write_file(&store, &path, Publish::Replace, &schema, &[&rows], &parsed)
                    .unwrap_err();
                assert!(
                    matches!(&err, LogError::CorruptCheckpoint { reason, .. } if reason.ends_with("the file was removed")),
                    "stages: {stages}, at {at}: {err}"
                );
                assert!(store.head(&path).is_err(), "the damaged file was left");
            }
        }
    }

    /// Paths and statistics are written plain; other columns (`add.size` here, whose values
    /// fit a dictionary) keep theirs.
    #[test]
    fn distinct_columns_are_written_without_a_dictionary() {
        use parquet::file::reader::{FileReader, SerializedFileReader};
        let (protocol, adds, removes) = many_rows();
        let rows = rows_of(&protocol, &adds, &removes);
        let (schema, parsed) = plain(FileShape::V1);
        let bytes = Bytes::from(encode(&schema, &[&rows], &parsed, Vec::new()).unwrap());
        let reader = SerializedFileReader::new(bytes).unwrap();
        let mut seen = 0;
        for group in reader.metadata().row_groups() {
            for column in group.columns() {
                let path = column.column_path().parts().join(".");
                let distinct = DISTINCT_COLUMNS.iter().any(|c| c.join(".") == path);
                let dictionary = column.dictionary_page_offset().is_some();
                if distinct {
                    assert!(!dictionary, "{path} has a dictionary");
                    seen += 1;
                } else if path == "add.size" && column.num_values() > 1000 {
                    assert!(dictionary, "{path} lost its dictionary");
                }
            }
        }
        assert!(seen >= 5 * 3, "{seen}");
    }

    /// A file of at most a batch is one row group, whatever kinds of action it holds, and
    /// its typed columns (`partitionValues_parsed`, `stats_parsed`) hold the adds' values on
    /// the adds' rows and null on the others. It reads back as the rows it was made of.
    #[test]
    fn a_small_file_is_one_row_group_of_every_kind() {
        use arrow_array::cast::AsArray;
        use arrow_array::types::Int64Type;
        use arrow_array::{Array, RecordBatch};
        use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
        let protocol = Protocol {
            min_reader_version: 1,
            min_writer_version: 2,
            reader_features: None,
            writer_features: None,
        };
        let txn = SetTransaction {
            app_id: "app".into(),
            version: 3,
            last_updated: None,
        };
        let adds: Vec<Add> = (0..5)
            .map(|i| {
                let mut pv = OptStringMap::default();
                pv.insert("p", Some(format!("{}", 10 + i)));
                Add::builder(format!("p={}/f{i}.parquet", 10 + i), 100 + i, 7)
                    .partition_values(pv)
                    .stats(format!(
                        r#"{{"numRecords":{i},"minValues":{{"x":{}}},"maxValues":{{"x":{}}},"nullCount":{{"x":0}}}}"#,
                        i * 10,
                        i * 10 + 9
                    ))
                    .build()
            })
            .collect();
        let removes: Vec<Remove> = adds[..2]
            .iter()
            .map(|a| Remove::from_add(a, 5, false))
            .collect();
        let long = || DataType::Struct(Fields::from(vec![Field::new("x", DataType::Int64, true)]));
        let stats = DataType::Struct(Fields::from(vec![
            Field::new("numRecords", DataType::Int64, true),
            Field::new("minValues", long(), true),
            Field::new("maxValues", long(), true),
            Field::new("nullCount", long(), true),
        ]));
        let partitions =
            DataType::Struct(Fields::from(vec![Field::new("p", DataType::Int64, true)]));
        let parsed = Parsed {
            partition: Some((partitions.clone(), vec![("p".into(), PrimitiveType::Long)])),
            stats: Some(stats.clone()),
        };
        let schema: SchemaRef = Arc::new(checkpoint_schema(
            FileShape::V1,
            add_fields(true, Some(&partitions), Some(&stats)),
        ));
        // Two slices, as a checkpoint's non-file and file rows come.
        let head = vec![Row::Protocol(&protocol), Row::Txn(&txn)];
        let mut files: Vec<Row<'_>> = adds.iter().map(|a| Row::Add(a.into())).collect();
        files.extend(removes.iter().map(Row::Remove));
        let bytes = Bytes::from(encode(&schema, &[&head, &files], &parsed, Vec::new()).unwrap());

        let reader = ParquetRecordBatchReaderBuilder::try_new(bytes.clone()).unwrap();
        assert_eq!(reader.metadata().num_row_groups(), 1);
        let batches: Vec<RecordBatch> = reader.build().unwrap().map(Result::unwrap).collect();
        assert_eq!(batches.len(), 1);
        let add = batches[0].column_by_name(ADD).unwrap().as_struct();
        let rows = head.len() + files.len();
        assert_eq!(add.len(), rows);
        let stats = add.column_by_name(STATS_PARSED).unwrap().as_struct();
        let records = stats
            .column_by_name("numRecords")
            .unwrap()
            .as_primitive::<Int64Type>();
        let min_x = stats
            .column_by_name("minValues")
            .unwrap()
            .as_struct()
            .column(0)
            .clone();
        let min_x = min_x.as_primitive::<Int64Type>();
        let parts = add
            .column_by_name(PARTITION_VALUES_PARSED)
            .unwrap()
            .as_struct();
        let p = parts.column(0).as_primitive::<Int64Type>();
        for row in 0..rows {
            let nth_add = row
                .checked_sub(head.len())
                .filter(|i| *i < adds.len())
                .and_then(|i| i64::try_from(i).ok());
            match nth_add {
                Some(i) => {
                    assert!(stats.is_valid(row) && parts.is_valid(row), "row {row}");
                    assert_eq!(records.value(row), i);
                    assert_eq!(min_x.value(row), i * 10);
                    assert_eq!(p.value(row), 10 + i);
                }
                None => {
                    assert!(stats.is_null(row) && parts.is_null(row), "row {row}");
                }
            }
        }
        let read = read_parquet_actions("x.parquet", bytes).unwrap();
        let mut want = vec![Action::Protocol(protocol.clone()), Action::Txn(txn.clone())];
        want.extend(adds.iter().map(|a| {
            Action::Add(Add {
                data_change: false,
                ..a.clone()
            })
        }));
        want.extend(removes.iter().cloned().map(Action::Remove));
        assert!(read == want, "the file reads back otherwise: {read:?}");
    }
}
