//! Manifests and manifest lists (Iceberg table spec, "Manifests" and "Manifest Lists", format
//! version 2): the entry model, the Avro schemas with Iceberg's field ids, and their encoding
//! and decoding.

use serde_json::{Value, json};

use crate::avro::{Datum, read_container, write_container};
use crate::partition::PartitionSpec;

/// A manifest entry's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Carried over from an earlier snapshot.
    Existing = 0,
    /// Added by the manifest's snapshot.
    Added = 1,
    /// Removed by the manifest's snapshot (informational; not read by scans).
    Deleted = 2,
}

/// What a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Content {
    /// Rows.
    Data = 0,
    /// Position deletes (`file_path`, `pos`).
    PositionDeletes = 1,
}

/// One data or delete file as a manifest lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct DataFile {
    /// Data or position deletes.
    pub content: Content,
    /// The file's full location, exactly as delete files name it.
    pub file_path: String,
    /// The partition tuple: one `["null", T]` union per partition field.
    pub partition: Vec<Datum>,
    /// Rows in the file (for a delete file: deleted positions).
    pub record_count: i64,
    /// Bytes.
    pub file_size_in_bytes: i64,
    /// Values per column id (nulls included).
    pub value_counts: Vec<(i32, i64)>,
    /// Nulls per column id.
    pub null_value_counts: Vec<(i32, i64)>,
    /// Lower bounds per column id, in single-value binary form.
    pub lower_bounds: Vec<(i32, Vec<u8>)>,
    /// Upper bounds per column id.
    pub upper_bounds: Vec<(i32, Vec<u8>)>,
    /// For a position-delete file: the one data file all its deletes reference.
    pub referenced_data_file: Option<String>,
}

/// One manifest entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Existing, added or deleted.
    pub status: Status,
    /// The snapshot that added (or deleted) the file.
    pub snapshot_id: i64,
    /// The data sequence number (written explicitly, never inherited).
    pub sequence_number: i64,
    /// The file sequence number.
    pub file_sequence_number: i64,
    /// The file.
    pub file: DataFile,
}

fn map_schema(name: &str, id: u32, key: u32, value: u32, value_type: &str) -> Value {
    json!({"name": name, "type": ["null", {"type": "array", "logicalType": "map", "items": {
        "type": "record", "name": format!("k{key}_v{value}"), "fields": [
            {"name": "key", "type": "int", "field-id": key},
            {"name": "value", "type": value_type, "field-id": value}]}}],
        "default": null, "field-id": id})
}

/// The Avro schema of a manifest whose partition tuple has `spec`'s fields.
pub fn manifest_schema(spec: &PartitionSpec) -> String {
    let partition_fields: Vec<Value> = spec
        .fields
        .iter()
        .map(|f| json!({"name": f.name, "type": ["null", f.ty_avro()], "default": null, "field-id": f.field_id}))
        .collect();
    json!({"type": "record", "name": "manifest_entry", "fields": [
        {"name": "status", "type": "int", "field-id": 0},
        {"name": "snapshot_id", "type": ["null", "long"], "default": null, "field-id": 1},
        {"name": "sequence_number", "type": ["null", "long"], "default": null, "field-id": 3},
        {"name": "file_sequence_number", "type": ["null", "long"], "default": null, "field-id": 4},
        {"name": "data_file", "field-id": 2, "type": {"type": "record", "name": "r2", "fields": [
            {"name": "content", "type": "int", "field-id": 134},
            {"name": "file_path", "type": "string", "field-id": 100},
            {"name": "file_format", "type": "string", "field-id": 101},
            {"name": "partition", "field-id": 102, "type": {"type": "record", "name": "r102", "fields": partition_fields}},
            {"name": "record_count", "type": "long", "field-id": 103},
            {"name": "file_size_in_bytes", "type": "long", "field-id": 104},
            map_schema("value_counts", 109, 119, 120, "long"),
            map_schema("null_value_counts", 110, 121, 122, "long"),
            map_schema("lower_bounds", 125, 126, 127, "bytes"),
            map_schema("upper_bounds", 128, 129, 130, "bytes"),
            {"name": "referenced_data_file", "type": ["null", "string"], "default": null, "field-id": 143}
        ]}}
    ]})
    .to_string()
}

fn long_map(pairs: &[(i32, i64)]) -> Datum {
    Datum::optional((!pairs.is_empty()).then(|| {
        Datum::Array(
            pairs
                .iter()
                .map(|(k, v)| Datum::Record(vec![Datum::Int(*k), Datum::Long(*v)]))
                .collect(),
        )
    }))
}

fn bytes_map(pairs: &[(i32, Vec<u8>)]) -> Datum {
    Datum::optional((!pairs.is_empty()).then(|| {
        Datum::Array(
            pairs
                .iter()
                .map(|(k, v)| Datum::Record(vec![Datum::Int(*k), Datum::Bytes(v.clone())]))
                .collect(),
        )
    }))
}

impl Entry {
    fn datum(&self) -> Datum {
        let f = &self.file;
        Datum::Record(vec![
            Datum::Int(self.status as i32),
            Datum::optional(Some(Datum::Long(self.snapshot_id))),
            Datum::optional(Some(Datum::Long(self.sequence_number))),
            Datum::optional(Some(Datum::Long(self.file_sequence_number))),
            Datum::Record(vec![
                Datum::Int(f.content as i32),
                Datum::String(f.file_path.clone()),
                Datum::String("parquet".into()),
                Datum::Record(f.partition.clone()),
                Datum::Long(f.record_count),
                Datum::Long(f.file_size_in_bytes),
                long_map(&f.value_counts),
                long_map(&f.null_value_counts),
                bytes_map(&f.lower_bounds),
                bytes_map(&f.upper_bounds),
                Datum::optional(f.referenced_data_file.clone().map(Datum::String)),
            ]),
        ])
    }

    fn from_datum(d: &Datum) -> Result<Entry, String> {
        let Datum::Record(top) = d else {
            return Err("a manifest entry is not a record".into());
        };
        let [status, snapshot, seq, file_seq, Datum::Record(file)] = top.as_slice() else {
            return Err("a manifest entry has unexpected fields".into());
        };
        let [
            content,
            path,
            _format,
            Datum::Record(partition),
            records,
            size,
            vc,
            nc,
            lb,
            ub,
            rdf,
        ] = file.as_slice()
        else {
            return Err("a data_file record has unexpected fields".into());
        };
        Ok(Entry {
            status: match int(status)? {
                0 => Status::Existing,
                1 => Status::Added,
                2 => Status::Deleted,
                s => return Err(format!("unknown entry status {s}")),
            },
            snapshot_id: opt_long(snapshot)?.ok_or("entry without snapshot_id")?,
            sequence_number: opt_long(seq)?.ok_or("entry without sequence_number")?,
            file_sequence_number: opt_long(file_seq)?
                .ok_or("entry without file_sequence_number")?,
            file: DataFile {
                content: match int(content)? {
                    0 => Content::Data,
                    1 => Content::PositionDeletes,
                    c => return Err(format!("unsupported content {c}")),
                },
                file_path: string(path)?,
                partition: partition.clone(),
                record_count: long(records)?,
                file_size_in_bytes: long(size)?,
                value_counts: pairs(vc, long)?,
                null_value_counts: pairs(nc, long)?,
                lower_bounds: pairs(lb, bytes)?,
                upper_bounds: pairs(ub, bytes)?,
                referenced_data_file: match unwrap_union(rdf) {
                    Datum::Null => None,
                    d => Some(string(d)?),
                },
            },
        })
    }
}

fn unwrap_union(d: &Datum) -> &Datum {
    match d {
        Datum::Union(_, inner) => inner,
        d => d,
    }
}

fn int(d: &Datum) -> Result<i32, String> {
    match unwrap_union(d) {
        Datum::Int(v) => Ok(*v),
        other => Err(format!("expected an int, found {other:?}")),
    }
}

fn long(d: &Datum) -> Result<i64, String> {
    match unwrap_union(d) {
        Datum::Long(v) => Ok(*v),
        other => Err(format!("expected a long, found {other:?}")),
    }
}

fn opt_long(d: &Datum) -> Result<Option<i64>, String> {
    match unwrap_union(d) {
        Datum::Null => Ok(None),
        other => long(other).map(Some),
    }
}

fn string(d: &Datum) -> Result<String, String> {
    match unwrap_union(d) {
        Datum::String(s) => Ok(s.clone()),
        other => Err(format!("expected a string, found {other:?}")),
    }
}

fn bytes(d: &Datum) -> Result<Vec<u8>, String> {
    match unwrap_union(d) {
        Datum::Bytes(b) => Ok(b.clone()),
        other => Err(format!("expected bytes, found {other:?}")),
    }
}

fn pairs<T>(d: &Datum, value: fn(&Datum) -> Result<T, String>) -> Result<Vec<(i32, T)>, String> {
    match unwrap_union(d) {
        Datum::Null => Ok(Vec::new()),
        Datum::Array(items) => items
            .iter()
            .map(|kv| match kv {
                Datum::Record(f) if f.len() == 2 => Ok((int(&f[0])?, value(&f[1])?)),
                _ => Err("a map entry is not a key-value record".to_string()),
            })
            .collect(),
        other => Err(format!("expected a map, found {other:?}")),
    }
}

/// The header metadata of a manifest.
pub struct ManifestHeader<'a> {
    /// The table schema JSON (with `schema-id`).
    pub schema_json: &'a str,
    /// The schema id.
    pub schema_id: i64,
    /// The partition spec.
    pub spec: &'a PartitionSpec,
    /// Data or deletes.
    pub content: Content,
}

/// Encodes a manifest file.
pub fn write_manifest(header: &ManifestHeader<'_>, entries: &[Entry]) -> Vec<u8> {
    let meta = [
        ("schema", header.schema_json.to_string()),
        ("schema-id", header.schema_id.to_string()),
        ("partition-spec", header.spec.fields_json().to_string()),
        ("partition-spec-id", header.spec.spec_id.to_string()),
        ("format-version", "2".to_string()),
        (
            "content",
            match header.content {
                Content::Data => "data",
                Content::PositionDeletes => "deletes",
            }
            .to_string(),
        ),
    ];
    write_container(
        &manifest_schema(header.spec),
        &meta,
        entries.iter().map(Entry::datum),
    )
}

/// Decodes a manifest file written by [`write_manifest`].
///
/// # Errors
/// A message saying what is wrong.
pub fn read_manifest(data: &[u8]) -> Result<Vec<Entry>, String> {
    read_container(data)?
        .records
        .iter()
        .map(Entry::from_datum)
        .collect()
}

/// A partition field's summary over a manifest's files.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FieldSummary {
    /// Some file has a null value.
    pub contains_null: bool,
    /// The smallest non-null value, serialized.
    pub lower_bound: Option<Vec<u8>>,
    /// The largest non-null value, serialized.
    pub upper_bound: Option<Vec<u8>>,
}

/// One manifest as a manifest list names it.
#[derive(Debug, Clone, PartialEq)]
pub struct ManifestFile {
    /// The manifest's full location.
    pub manifest_path: String,
    /// Its size in bytes.
    pub manifest_length: i64,
    /// The spec its entries were written with.
    pub partition_spec_id: i32,
    /// Data or deletes.
    pub content: Content,
    /// The sequence number of the snapshot that added the manifest.
    pub sequence_number: i64,
    /// The smallest data sequence number of its live entries.
    pub min_sequence_number: i64,
    /// The snapshot that added the manifest.
    pub added_snapshot_id: i64,
    /// Entries per status: added, existing, deleted.
    pub files: [i32; 3],
    /// Rows per status: added, existing, deleted.
    pub rows: [i64; 3],
    /// One summary per partition field.
    pub partitions: Vec<FieldSummary>,
}

/// The Avro schema of a manifest list.
pub fn manifest_list_schema() -> String {
    json!({"type": "record", "name": "manifest_file", "fields": [
        {"name": "manifest_path", "type": "string", "field-id": 500},
        {"name": "manifest_length", "type": "long", "field-id": 501},
        {"name": "partition_spec_id", "type": "int", "field-id": 502},
        {"name": "content", "type": "int", "field-id": 517},
        {"name": "sequence_number", "type": "long", "field-id": 515},
        {"name": "min_sequence_number", "type": "long", "field-id": 516},
        {"name": "added_snapshot_id", "type": "long", "field-id": 503},
        {"name": "added_files_count", "type": "int", "field-id": 504},
        {"name": "existing_files_count", "type": "int", "field-id": 505},
        {"name": "deleted_files_count", "type": "int", "field-id": 506},
        {"name": "added_rows_count", "type": "long", "field-id": 512},
        {"name": "existing_rows_count", "type": "long", "field-id": 513},
        {"name": "deleted_rows_count", "type": "long", "field-id": 514},
        {"name": "partitions", "default": null, "field-id": 507, "type": ["null", {"type": "array", "element-id": 508,
            "items": {"type": "record", "name": "r508", "fields": [
                {"name": "contains_null", "type": "boolean", "field-id": 509},
                {"name": "contains_nan", "type": ["null", "boolean"], "default": null, "field-id": 518},
                {"name": "lower_bound", "type": ["null", "bytes"], "default": null, "field-id": 510},
                {"name": "upper_bound", "type": ["null", "bytes"], "default": null, "field-id": 511}]}}]}
    ]})
    .to_string()
}

impl ManifestFile {
    fn datum(&self) -> Datum {
        let partitions = self
            .partitions
            .iter()
            .map(|s| {
                Datum::Record(vec![
                    Datum::Boolean(s.contains_null),
                    Datum::optional(None),
                    Datum::optional(s.lower_bound.clone().map(Datum::Bytes)),
                    Datum::optional(s.upper_bound.clone().map(Datum::Bytes)),
                ])
            })
            .collect();
        Datum::Record(vec![
            Datum::String(self.manifest_path.clone()),
            Datum::Long(self.manifest_length),
            Datum::Int(self.partition_spec_id),
            Datum::Int(self.content as i32),
            Datum::Long(self.sequence_number),
            Datum::Long(self.min_sequence_number),
            Datum::Long(self.added_snapshot_id),
            Datum::Int(self.files[0]),
            Datum::Int(self.files[1]),
            Datum::Int(self.files[2]),
            Datum::Long(self.rows[0]),
            Datum::Long(self.rows[1]),
            Datum::Long(self.rows[2]),
            Datum::optional(Some(Datum::Array(partitions))),
        ])
    }

    fn from_datum(d: &Datum) -> Result<ManifestFile, String> {
        let Datum::Record(f) = d else {
            return Err("a manifest list entry is not a record".into());
        };
        let [
            path,
            len,
            spec,
            content,
            seq,
            min_seq,
            added,
            fa,
            fe,
            fd,
            ra,
            re,
            rd,
            parts,
        ] = f.as_slice()
        else {
            return Err("a manifest list entry has unexpected fields".into());
        };
        let partitions = match unwrap_union(parts) {
            Datum::Array(items) => items
                .iter()
                .map(|s| match s {
                    Datum::Record(v) if v.len() == 4 => Ok(FieldSummary {
                        contains_null: matches!(v[0], Datum::Boolean(true)),
                        lower_bound: match unwrap_union(&v[2]) {
                            Datum::Null => None,
                            b => Some(bytes(b)?),
                        },
                        upper_bound: match unwrap_union(&v[3]) {
                            Datum::Null => None,
                            b => Some(bytes(b)?),
                        },
                    }),
                    _ => Err("a field summary is not a record".to_string()),
                })
                .collect::<Result<_, _>>()?,
            _ => Vec::new(),
        };
        Ok(ManifestFile {
            manifest_path: string(path)?,
            manifest_length: long(len)?,
            partition_spec_id: int(spec)?,
            content: if int(content)? == 1 {
                Content::PositionDeletes
            } else {
                Content::Data
            },
            sequence_number: long(seq)?,
            min_sequence_number: long(min_seq)?,
            added_snapshot_id: long(added)?,
            files: [int(fa)?, int(fe)?, int(fd)?],
            rows: [long(ra)?, long(re)?, long(rd)?],
            partitions,
        })
    }
}

/// Encodes a manifest list.
pub fn write_manifest_list(
    snapshot_id: i64,
    parent: Option<i64>,
    sequence_number: i64,
    manifests: &[ManifestFile],
) -> Vec<u8> {
    let records: Vec<Datum> = manifests.iter().map(ManifestFile::datum).collect();
    let meta = [
        ("snapshot-id", snapshot_id.to_string()),
        (
            "parent-snapshot-id",
            parent.map_or_else(|| "null".to_string(), |p| p.to_string()),
        ),
        ("sequence-number", sequence_number.to_string()),
        ("format-version", "2".to_string()),
    ];
    write_container(&manifest_list_schema(), &meta, &records)
}

/// Decodes a manifest list written by [`write_manifest_list`].
///
/// # Errors
/// A message saying what is wrong.
pub fn read_manifest_list(data: &[u8]) -> Result<Vec<ManifestFile>, String> {
    read_container(data)?
        .records
        .iter()
        .map(ManifestFile::from_datum)
        .collect()
}
