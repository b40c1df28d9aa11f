//! A data file's row count from its Parquet footer, reading the footer alone where the
//! store can (two range reads of a file under the table root whose size the log records),
//! else the whole file.

use alluvium_storage::{FileLocation, ObjectStore};
use alluvium_txlog::LogError;
use bytes::Bytes;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::file::metadata::ParquetMetaDataReader;

use crate::{DataFileError, Result};

/// The footer bytes (without the length and magic) of a file of `size` bytes, by two
/// range reads; `None` when the bytes there are not a footer or cannot be read as ranges (a
/// size the log got wrong): the caller reads the whole file, which answers either way.
/// A missing file is an error at once.
fn footer_by_range(
    store: &dyn ObjectStore,
    path: &alluvium_storage::StorePath,
    size: u64,
) -> std::result::Result<Option<Bytes>, alluvium_storage::StorageError> {
    let range = |r: std::ops::Range<u64>| match store.get_range(path, r) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.is_not_found() => Err(e),
        Err(_) => Ok(None),
    };
    if size < 12 {
        return Ok(None);
    }
    let Some(tail) = range(size - 8..size)? else {
        return Ok(None);
    };
    if tail.get(4..8) != Some(b"PAR1".as_slice()) {
        return Ok(None);
    }
    let Some(len) = tail
        .get(..4)
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .map(u32::from_le_bytes)
    else {
        return Ok(None);
    };
    let Some(start) = (size - 8).checked_sub(u64::from(len)) else {
        return Ok(None);
    };
    range(start..size - 8)
}

/// The number of rows in the Parquet file at `location` (its footer's count). `size`: the
/// file's size as the log records it, which lets a file under the table root be read by
/// its footer alone; without it, or when the footer is not where the size says, the whole
/// file is read.
///
/// # Errors
/// A missing file (`the data file referenced by the log is missing`), or one that is not
/// Parquet, naming it.
pub fn footer_row_count(
    store: &dyn ObjectStore,
    location: &FileLocation,
    size: Option<u64>,
) -> Result<u64> {
    let shown = location.to_string();
    let file_error = |reason: String| DataFileError::Log(LogError::data_file(&shown, reason));
    let missing = |e: alluvium_storage::StorageError| {
        if e.is_not_found() {
            file_error("the data file referenced by the log is missing".into())
        } else {
            DataFileError::Storage(e)
        }
    };
    let rows = match (location, size) {
        (FileLocation::Table(path), Some(size)) => {
            match footer_by_range(store, path, size).map_err(missing)? {
                Some(footer) => ParquetMetaDataReader::decode_metadata(&footer)
                    .ok()
                    .map(|m| m.file_metadata().num_rows()),
                None => None,
            }
        }
        _ => None,
    };
    let rows = match rows {
        Some(r) => r,
        None => {
            let bytes = store.get_location(location).map_err(missing)?;
            ParquetRecordBatchReaderBuilder::try_new(bytes)
                .map_err(|e| file_error(e.to_string()))?
                .metadata()
                .file_metadata()
                .num_rows()
        }
    };
    u64::try_from(rows).map_err(|_| file_error("negative row count in the footer".into()))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use alluvium_storage::{CountingStore, InMemoryStore, StorePath};
    use arrow_array::{Int64Array, RecordBatch};
    use arrow_schema::{DataType, Field, Schema};
    use parquet::arrow::ArrowWriter;

    use super::*;

    fn parquet(rows: i64) -> Bytes {
        let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int64, false)]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(Int64Array::from_iter_values(0..rows))],
        )
        .unwrap();
        let mut out = Vec::new();
        let mut w = ArrowWriter::try_new(&mut out, schema, None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        Bytes::from(out)
    }

    #[test]
    fn the_footer_alone_or_the_whole_file_gives_the_count() {
        let store = CountingStore::new(Arc::new(InMemoryStore::new()));
        let path = StorePath::parse("part-0.parquet").unwrap();
        let bytes = parquet(1234);
        let size = bytes.len() as u64;
        store.put(&path, bytes).unwrap();
        let loc = FileLocation::Table(path.clone());
        let gets = |f: &dyn Fn() -> u64| {
            let before = store.request_counts();
            assert_eq!(f(), 1234);
            store.request_counts().since(&before).get
        };
        // The footer alone: its length, then the footer (two range reads).
        assert_eq!(
            gets(&|| footer_row_count(&store, &loc, Some(size)).unwrap()),
            2
        );
        // No size: the whole file; a wrong size: the probe, then the whole file.
        assert_eq!(gets(&|| footer_row_count(&store, &loc, None).unwrap()), 1);
        assert_eq!(
            gets(&|| footer_row_count(&store, &loc, Some(size + 7)).unwrap()),
            2
        );
        // Missing and not Parquet: errors naming the file.
        let gone = FileLocation::Table(StorePath::parse("gone.parquet").unwrap());
        let e = footer_row_count(&store, &gone, Some(100))
            .unwrap_err()
            .to_string();
        assert!(e.contains("gone.parquet") && e.contains("missing"), "{e}");
        let junk = StorePath::parse("junk.parquet").unwrap();
        store
            .put(&junk, Bytes::from_static(b"not parquet at all"))
            .unwrap();
        let e = footer_row_count(&store, &FileLocation::Table(junk), Some(18)).unwrap_err();
        assert!(e.to_string().contains("junk.parquet"), "{e}");
    }
}
