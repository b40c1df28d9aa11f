//! Deletion vectors as Iceberg v2 position-delete files.
//!
//! A Delta deletion vector names deleted row positions of one data file; an Iceberg
//! position-delete file lists (`file_path`, `pos`) rows. One delete file per deletion
//! vector, sorted by position as the spec requires, with the reserved field ids
//! 2147483546 and 2147483545 in the Parquet schema. `file_path` must equal the data file's
//! manifest `file_path` byte for byte, or readers silently ignore the delete.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use roaring::RoaringTreemap;

use crate::error::{IcebergError, Result};

/// Iceberg's reserved id of a position delete's `file_path` column.
pub const FILE_PATH_ID: i32 = 2_147_483_546;
/// Iceberg's reserved id of a position delete's `pos` column.
pub const POS_ID: i32 = 2_147_483_545;

fn field(name: &str, ty: DataType, id: i32) -> Field {
    Field::new(name, ty, false).with_metadata(HashMap::from([(
        "PARQUET:field_id".to_string(),
        id.to_string(),
    )]))
}

/// The bytes of a position-delete file deleting `positions` of `data_file`.
///
/// # Errors
/// [`IcebergError::Parquet`] if encoding fails.
pub fn position_delete_file(data_file: &str, positions: &RoaringTreemap) -> Result<Vec<u8>> {
    let schema = Arc::new(Schema::new(vec![
        field("file_path", DataType::Utf8, FILE_PATH_ID),
        field("pos", DataType::Int64, POS_ID),
    ]));
    let parquet_err = |e: parquet::errors::ParquetError| IcebergError::Parquet(e.to_string());
    let mut out = Vec::new();
    let props = WriterProperties::builder()
        .set_compression(parquet::basic::Compression::SNAPPY)
        .build();
    let mut writer =
        ArrowWriter::try_new(&mut out, schema.clone(), Some(props)).map_err(parquet_err)?;
    // Positions arrive sorted (a roaring bitmap iterates in order); write in bounded batches.
    let mut iter = positions.iter().peekable();
    while iter.peek().is_some() {
        let chunk: Vec<i64> = iter
            .by_ref()
            .take(64 * 1024)
            .map(|p| i64::try_from(p).unwrap_or(i64::MAX))
            .collect();
        let paths: ArrayRef = Arc::new(StringArray::from(vec![data_file; chunk.len()]));
        let pos: ArrayRef = Arc::new(Int64Array::from(chunk));
        let batch = RecordBatch::try_new(schema.clone(), vec![paths, pos])
            .map_err(|e| IcebergError::Parquet(e.to_string()))?;
        writer.write(&batch).map_err(parquet_err)?;
    }
    writer.close().map_err(parquet_err)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    #[test]
    fn positions_are_written_in_order_with_the_reserved_ids() {
        let mut dv = RoaringTreemap::new();
        dv.extend([9u64, 2, 5]);
        let file = position_delete_file("/t/part-0.parquet", &dv).unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(Bytes::from(file)).unwrap();
        let ids: Vec<i32> = reader
            .parquet_schema()
            .root_schema()
            .get_fields()
            .iter()
            .map(|f| f.get_basic_info().id())
            .collect();
        assert_eq!(ids, vec![FILE_PATH_ID, POS_ID]);
        let batches: Vec<RecordBatch> = reader.build().unwrap().map(|b| b.unwrap()).collect();
        let pos = batches[0]
            .column(1)
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap();
        assert_eq!(pos.values().to_vec(), vec![2, 5, 9]);
    }
}
