//! The Arrow schema of checkpoint files, as Spark and the Delta kernels write and read it.
//!
//! Every top-level column is a nullable struct named after an action; exactly one is non-null
//! per row; every nested field is nullable. Maps are `key_value` entries of `key`/`value`,
//! lists hold `element`s. `add.stats_parsed` and `add.partitionValues_parsed` (typed, with
//! physical column names) appear only when the table asks for them.

use std::sync::Arc;

use arrow_schema::{DataType, Field, Fields, Schema};

use crate::actions::{
    ADD, CHECKPOINT_METADATA, DOMAIN_METADATA, METADATA, PROTOCOL, REMOVE, SIDECAR, TXN,
};

pub(crate) fn string_map() -> DataType {
    let entries = Fields::from(vec![
        Field::new("key", DataType::Utf8, false),
        Field::new("value", DataType::Utf8, true),
    ]);
    DataType::Map(
        Arc::new(Field::new("key_value", DataType::Struct(entries), false)),
        false,
    )
}

pub(crate) fn string_list() -> DataType {
    DataType::List(Arc::new(Field::new("element", DataType::Utf8, true)))
}

fn f(name: &str, t: DataType) -> Field {
    Field::new(name, t, true)
}

pub(crate) fn dv_fields() -> Fields {
    Fields::from(vec![
        f("storageType", DataType::Utf8),
        f("pathOrInlineDv", DataType::Utf8),
        f("offset", DataType::Int32),
        f("sizeInBytes", DataType::Int32),
        f("cardinality", DataType::Int64),
    ])
}

pub(crate) fn txn_fields() -> Fields {
    Fields::from(vec![
        f("appId", DataType::Utf8),
        f("version", DataType::Int64),
        f("lastUpdated", DataType::Int64),
    ])
}

/// `add` fields; `parsed` are the optional `partitionValues_parsed` and `stats_parsed` types.
pub(crate) fn add_fields(
    stats_json: bool,
    partition_parsed: Option<&DataType>,
    stats_parsed: Option<&DataType>,
) -> Fields {
    let mut v = vec![
        f("path", DataType::Utf8),
        f("partitionValues", string_map()),
        f("size", DataType::Int64),
        f("modificationTime", DataType::Int64),
        f("dataChange", DataType::Boolean),
        f("tags", string_map()),
        f("deletionVector", DataType::Struct(dv_fields())),
        f("baseRowId", DataType::Int64),
        f("defaultRowCommitVersion", DataType::Int64),
        f("clusteringProvider", DataType::Utf8),
    ];
    if stats_json {
        v.push(f("stats", DataType::Utf8));
    }
    if let Some(t) = partition_parsed {
        v.push(f("partitionValues_parsed", t.clone()));
    }
    if let Some(t) = stats_parsed {
        v.push(f("stats_parsed", t.clone()));
    }
    Fields::from(v)
}

pub(crate) fn remove_fields() -> Fields {
    Fields::from(vec![
        f("path", DataType::Utf8),
        f("deletionTimestamp", DataType::Int64),
        f("dataChange", DataType::Boolean),
        f("extendedFileMetadata", DataType::Boolean),
        f("partitionValues", string_map()),
        f("size", DataType::Int64),
        f("deletionVector", DataType::Struct(dv_fields())),
        f("baseRowId", DataType::Int64),
        f("defaultRowCommitVersion", DataType::Int64),
    ])
}

pub(crate) fn metadata_fields() -> Fields {
    Fields::from(vec![
        f("id", DataType::Utf8),
        f("name", DataType::Utf8),
        f("description", DataType::Utf8),
        f(
            "format",
            DataType::Struct(Fields::from(vec![
                f("provider", DataType::Utf8),
                f("options", string_map()),
            ])),
        ),
        f("schemaString", DataType::Utf8),
        f("partitionColumns", string_list()),
        f("createdTime", DataType::Int64),
        f("configuration", string_map()),
    ])
}

pub(crate) fn protocol_fields() -> Fields {
    Fields::from(vec![
        f("minReaderVersion", DataType::Int32),
        f("minWriterVersion", DataType::Int32),
        f("readerFeatures", string_list()),
        f("writerFeatures", string_list()),
    ])
}

pub(crate) fn domain_fields() -> Fields {
    Fields::from(vec![
        f("domain", DataType::Utf8),
        f("configuration", DataType::Utf8),
        f("removed", DataType::Boolean),
    ])
}

pub(crate) fn checkpoint_metadata_fields() -> Fields {
    Fields::from(vec![f("version", DataType::Int64), f("tags", string_map())])
}

pub(crate) fn sidecar_fields() -> Fields {
    Fields::from(vec![
        f("path", DataType::Utf8),
        f("sizeInBytes", DataType::Int64),
        f("modificationTime", DataType::Int64),
        f("tags", string_map()),
    ])
}

/// Which columns a checkpoint file has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileShape {
    /// A V1 checkpoint (or part).
    V1,
    /// The main file of a V2 checkpoint.
    V2,
    /// A V2 sidecar: file actions only.
    Sidecar,
}

/// The schema of a checkpoint file of `shape`.
pub(crate) fn checkpoint_schema(shape: FileShape, add: Fields) -> Schema {
    let mut v = Vec::new();
    if shape != FileShape::Sidecar {
        v.push(f(TXN, DataType::Struct(txn_fields())));
    }
    v.push(f(ADD, DataType::Struct(add)));
    v.push(f(REMOVE, DataType::Struct(remove_fields())));
    if shape != FileShape::Sidecar {
        v.push(f(METADATA, DataType::Struct(metadata_fields())));
        v.push(f(PROTOCOL, DataType::Struct(protocol_fields())));
        v.push(f(DOMAIN_METADATA, DataType::Struct(domain_fields())));
    }
    if shape == FileShape::V2 {
        v.push(f(
            CHECKPOINT_METADATA,
            DataType::Struct(checkpoint_metadata_fields()),
        ));
        v.push(f(SIDECAR, DataType::Struct(sidecar_fields())));
    }
    Schema::new(v)
}
