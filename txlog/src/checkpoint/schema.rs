//! The Arrow schema of checkpoint files, as Spark and the Delta kernels write and read it.
//!
//! The fields of each action's column come from its description in [`super::layout`].
//! Every top-level column is a nullable struct named after an action; exactly one is non-null
//! per row; every nested field is nullable. Maps are `key_value` entries of `key`/`value`,
//! lists hold `element`s. `add.stats_parsed` and `add.partitionValues_parsed` (typed, with
//! physical column names) appear only when the table asks for them.

use std::sync::Arc;

use arrow_schema::{DataType, Field, Fields, Schema};

use super::layout::{Described, Kind, Spec, Written};
use crate::actions::{
    Add, CheckpointMetadata, DomainMetadata, Metadata, Protocol, Remove, SetTransaction, Sidecar,
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

/// The Arrow type of a described field.
fn arrow_type<A>(kind: &Kind<A>, stats_json: bool) -> DataType {
    match kind {
        Kind::Str(..) => DataType::Utf8,
        Kind::Long(..) => DataType::Int64,
        Kind::Int(..) => DataType::Int32,
        Kind::Bool(..) => DataType::Boolean,
        Kind::Map(..) => string_map(),
        Kind::List(..) => string_list(),
        Kind::Dv(..) => DataType::Struct(dv_fields()),
        Kind::Struct(specs) => DataType::Struct(Fields::from(written_fields(specs, stats_json))),
    }
}

/// The fields the writer writes of `specs`, in order.
fn written_fields<A>(specs: &[Spec<A>], stats_json: bool) -> Vec<Field> {
    specs
        .iter()
        .filter(|s| match s.written {
            Written::Always => true,
            Written::WhenJsonStats => stats_json,
            Written::Never => false,
        })
        .map(|s| f(s.name, arrow_type(&s.kind, stats_json)))
        .collect()
}

/// The fields of the column of action `A` (as written; `stats_json` only matters for `add`).
pub(crate) fn fields_of<A: Described>(stats_json: bool) -> Fields {
    Fields::from(written_fields(A::FIELDS, stats_json))
}

/// `add` fields; `parsed` are the optional `partitionValues_parsed` and `stats_parsed` types.
pub(crate) fn add_fields(
    stats_json: bool,
    partition_parsed: Option<&DataType>,
    stats_parsed: Option<&DataType>,
) -> Fields {
    let mut v = written_fields(Add::FIELDS, stats_json);
    if let Some(t) = partition_parsed {
        v.push(f(PARTITION_VALUES_PARSED, t.clone()));
    }
    if let Some(t) = stats_parsed {
        v.push(f(STATS_PARSED, t.clone()));
    }
    Fields::from(v)
}

/// The name of `add`'s typed partition values column.
pub(crate) const PARTITION_VALUES_PARSED: &str = "partitionValues_parsed";
/// The name of `add`'s typed statistics column.
pub(crate) const STATS_PARSED: &str = "stats_parsed";

/// The top-level column of action `A` (not `add`, whose fields depend on the table).
fn column<A: Described>() -> Field {
    f(A::COLUMN, DataType::Struct(fields_of::<A>(false)))
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
        v.push(column::<SetTransaction>());
    }
    v.push(f(Add::COLUMN, DataType::Struct(add)));
    v.push(column::<Remove>());
    if shape != FileShape::Sidecar {
        v.push(column::<Metadata>());
        v.push(column::<Protocol>());
        v.push(column::<DomainMetadata>());
    }
    if shape == FileShape::V2 {
        v.push(column::<CheckpointMetadata>());
        v.push(column::<Sidecar>());
    }
    Schema::new(v)
}
