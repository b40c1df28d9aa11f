//! Partition columns materialized in data files (SPEC.md §29): under the
//! `materializePartitionColumns` writer feature and IcebergCompat V1/V2, new data files
//! (appends and OPTIMIZE rewrites) store the partition columns after the data columns,
//! without statistics for them; other tables keep them out of the files.

use std::collections::HashMap;
use std::sync::Arc;

use alluvium::{ScanBuilder, Table, WriteOptions};
use alluvium_compaction::optimize::OptimizeOptions;
use alluvium_txlog::LogError;
use alluvium_txlog::stats::FileStats;
use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use parquet::arrow::PARQUET_FIELD_ID_META_KEY;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

fn batch(ids: &[i64]) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("p", DataType::Utf8, true),
    ]));
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from(ids.to_vec())) as ArrayRef,
            Arc::new(StringArray::from(
                ids.iter()
                    .map(|i| format!("p{}", i % 2))
                    .collect::<Vec<_>>(),
            )),
        ],
    )
    .unwrap()
}

fn table(props: &[(&str, &str)]) -> (tempfile::TempDir, Table) {
    let dir = tempfile::tempdir().unwrap();
    let t = Table::open(dir.path().join("t").to_str().unwrap()).unwrap();
    let props: HashMap<String, String> = props
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    t.create(&batch(&[]).schema(), &["p".to_string()], &props)
        .unwrap();
    (dir, t)
}

/// A data file's stored columns (name, Parquet field id) and its statistics.
type StoredFile = (Vec<(String, Option<String>)>, FileStats);

/// Each live file's stored column names (with their field ids), and its statistics.
fn stored(dir: &tempfile::TempDir, t: &Table) -> Vec<StoredFile> {
    let s = t.snapshot().unwrap();
    s.files()
        .map(|a| {
            let path = alluvium_txlog::path::percent_decode(a.path()).unwrap();
            let bytes = std::fs::read(dir.path().join("t").join(path)).unwrap();
            let schema = ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(bytes))
                .unwrap()
                .schema()
                .clone();
            let cols = schema
                .fields()
                .iter()
                .map(|f| {
                    (
                        f.name().clone(),
                        f.metadata().get(PARQUET_FIELD_ID_META_KEY).cloned(),
                    )
                })
                .collect();
            (cols, FileStats::parse(&a.stats().unwrap()).unwrap())
        })
        .collect()
}

fn rows(t: &Table) -> usize {
    ScanBuilder::new(t.snapshot().unwrap())
        .build()
        .unwrap()
        .execute_to_vec()
        .unwrap()
        .iter()
        .map(RecordBatch::num_rows)
        .sum()
}

#[test]
fn the_feature_stores_partition_columns_after_the_data_columns() {
    let (dir, t) = table(&[("delta.feature.materializePartitionColumns", "supported")]);
    assert!(
        t.snapshot()
            .unwrap()
            .protocol()
            .has_writer_feature("materializePartitionColumns")
    );
    t.append(vec![batch(&[1, 2, 3])], &WriteOptions::default())
        .unwrap();
    t.append(vec![batch(&[4, 5])], &WriteOptions::default())
        .unwrap();
    let check = |what: &str| {
        let files = stored(&dir, &t);
        assert!(!files.is_empty());
        for (cols, stats) in files {
            let names: Vec<&str> = cols.iter().map(|c| c.0.as_str()).collect();
            assert_eq!(names, ["id", "p"], "{what}");
            let min = stats.min_values.unwrap();
            assert!(min.contains_key("id") && !min.contains_key("p"), "{what}");
        }
    };
    check("append");
    // Copy-on-write DML rewrites keep them materialized too.
    t.update_str("id = id + 100", Some("id = 1"), &WriteOptions::default())
        .unwrap();
    t.delete_str("id = 2", &WriteOptions::default()).unwrap();
    check("update and delete");
    // OPTIMIZE rewrites keep them materialized.
    let r = t.optimize(&OptimizeOptions::default()).unwrap();
    assert!(r.files_removed > 0);
    check("optimize");
    assert_eq!(rows(&t), 4);
}

#[test]
fn without_the_feature_partition_columns_stay_out_of_the_files() {
    let (dir, t) = table(&[]);
    t.append(vec![batch(&[1, 2])], &WriteOptions::default())
        .unwrap();
    for (cols, _) in stored(&dir, &t) {
        assert_eq!(cols.len(), 1);
        assert_eq!(cols[0].0, "id");
    }
}

#[test]
fn iceberg_compat_v2_materializes_and_writes_field_ids() {
    let (dir, t) = table(&[
        ("delta.columnMapping.mode", "name"),
        ("delta.enableIcebergCompatV2", "true"),
        ("delta.feature.icebergCompatV2", "supported"),
    ]);
    t.append(vec![batch(&[1, 2, 3])], &WriteOptions::default())
        .unwrap();
    for (cols, _) in stored(&dir, &t) {
        assert_eq!(cols.len(), 2, "data and partition column: {cols:?}");
        assert!(cols.iter().all(|c| c.1.is_some()), "field ids: {cols:?}");
    }
    assert_eq!(rows(&t), 3);
    // Deletion vectors break V2: a table with both cannot even be created (the commit
    // checks the rules), and the error names the feature.
    let dir2 = tempfile::tempdir().unwrap();
    let dv = Table::open(dir2.path().join("t").to_str().unwrap()).unwrap();
    let props: HashMap<String, String> = [
        ("delta.columnMapping.mode", "name"),
        ("delta.enableIcebergCompatV2", "true"),
        ("delta.feature.icebergCompatV2", "supported"),
        ("delta.enableDeletionVectors", "true"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let e = dv
        .create(&batch(&[]).schema(), &["p".to_string()], &props)
        .unwrap_err();
    assert!(
        matches!(e.as_log_error(), Some(LogError::UnsupportedFeature { feature, .. }) if feature == "icebergCompatV2"),
        "{e}"
    );
}
