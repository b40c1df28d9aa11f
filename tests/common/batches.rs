//! Record batches and Arrow schemas that many integration modules write: one builder per
//! shape, so that a module states only what is particular to its rows.
#![allow(dead_code, clippy::unwrap_used)]

use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};

/// `id BIGINT, p STRING`, both nullable: a table partitioned (or not) by `p`.
pub fn id_p_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("p", DataType::Utf8, true),
    ]))
}

/// Rows of [`id_p_schema`]: the ids `ids`, all with `p` = `p`.
pub fn id_p_batch(ids: &[i64], p: &str) -> RecordBatch {
    RecordBatch::try_new(
        id_p_schema(),
        vec![
            Arc::new(Int64Array::from(ids.to_vec())) as ArrayRef,
            Arc::new(StringArray::from(vec![p; ids.len()])),
        ],
    )
    .unwrap()
}

/// `id BIGINT`, nullable: the smallest table.
pub fn id_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true)]))
}

/// Rows of [`id_schema`] with the ids `ids`.
pub fn id_batch(ids: impl IntoIterator<Item = i64>) -> RecordBatch {
    RecordBatch::try_new(
        id_schema(),
        vec![Arc::new(Int64Array::from_iter_values(ids)) as ArrayRef],
    )
    .unwrap()
}

/// `writer BIGINT NOT NULL, seq BIGINT NOT NULL`: rows tagged by the writer that wrote them,
/// for tests of concurrent writers.
pub fn writer_seq_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("writer", DataType::Int64, false),
        Field::new("seq", DataType::Int64, false),
    ]))
}
