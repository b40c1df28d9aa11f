//! Void columns on write (SPEC.md §29, PROTOCOL.md "Void Type"): omitted from data files,
//! read back as nulls; schemas whose void columns could not be rebuilt refuse new files.

use std::sync::Arc;

use alluvium::{ScanBuilder, Table, WriteOptions};
use alluvium_txlog::LogError;
use alluvium_txlog::schema::StructType;
use arrow::array::{Array, ArrayRef, Int64Array, NullArray, RecordBatch, StructArray};
use arrow::datatypes::{DataType, Field, Fields, Schema};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

fn table(schema_json: &str) -> (tempfile::TempDir, Table) {
    let dir = tempfile::tempdir().unwrap();
    let t = Table::open(dir.path().join("t").to_str().unwrap()).unwrap();
    t.create_with_schema(
        StructType::from_json(schema_json).unwrap(),
        &[],
        alluvium::NO_PROPERTIES,
    )
    .unwrap();
    (dir, t)
}

/// The Arrow schema of the one data file of `t`.
fn file_schema(dir: &tempfile::TempDir, t: &Table) -> Arc<Schema> {
    let s = t.snapshot().unwrap();
    let add = s.files().next().unwrap();
    let bytes = std::fs::read(dir.path().join("t").join(add.path())).unwrap();
    ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(bytes))
        .unwrap()
        .schema()
        .clone()
}

#[test]
fn void_columns_are_left_out_of_data_files_and_read_as_null() {
    let (dir, t) = table(
        r#"{"type":"struct","fields":[
        {"name":"id","type":"long","nullable":true,"metadata":{}},
        {"name":"nothing","type":"void","nullable":true,"metadata":{}},
        {"name":"s","type":{"type":"struct","fields":[
            {"name":"a","type":"long","nullable":true,"metadata":{}},
            {"name":"n","type":"void","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}}]}"#,
    );
    let s_fields = Fields::from(vec![
        Field::new("a", DataType::Int64, true),
        Field::new("n", DataType::Null, true),
    ]);
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("nothing", DataType::Null, true),
        Field::new("s", DataType::Struct(s_fields.clone()), true),
    ]));
    let s = StructArray::try_new(
        s_fields,
        vec![
            Arc::new(Int64Array::from(vec![10, 20])) as ArrayRef,
            Arc::new(NullArray::new(2)),
        ],
        None,
    )
    .unwrap();
    let b = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef,
            Arc::new(NullArray::new(2)),
            Arc::new(s),
        ],
    )
    .unwrap();
    t.append(vec![b], &WriteOptions::default()).unwrap();
    let fs = file_schema(&dir, &t);
    let names: Vec<&str> = fs.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(names, ["id", "s"]);
    let DataType::Struct(inner) = fs.field(1).data_type() else {
        panic!("{fs:?}")
    };
    assert_eq!(inner.len(), 1, "the void struct field is not stored");
    let out = ScanBuilder::new(t.snapshot().unwrap())
        .build()
        .unwrap()
        .execute_to_vec()
        .unwrap();
    let n: usize = out.iter().map(RecordBatch::num_rows).sum();
    assert_eq!(n, 2);
    for b in &out {
        let c = b.column_by_name("nothing").unwrap();
        assert_eq!(c.logical_null_count(), c.len());
    }
}

#[test]
fn void_shapes_without_a_stored_form_refuse_new_files() {
    for (json, column) in [
        (
            r#"{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"a","type":{"type":"array","elementType":"void","containsNull":true},"nullable":true,"metadata":{}}]}"#,
            "a.element",
        ),
        (
            r#"{"type":"struct","fields":[{"name":"v","type":"void","nullable":true,"metadata":{}}]}"#,
            "v",
        ),
    ] {
        let (dir, t) = table(json);
        let schema = Arc::new(alluvium::arrow_schema(t.snapshot().unwrap().schema()).unwrap());
        let columns: Vec<ArrayRef> = schema
            .fields()
            .iter()
            .map(|f| arrow::array::new_null_array(f.data_type(), 1))
            .collect();
        let b = RecordBatch::try_new(schema, columns).unwrap();
        let e = t.append(vec![b], &WriteOptions::default()).unwrap_err();
        assert!(
            matches!(e.as_log_error(), Some(LogError::UnwritableSchema { column: c, .. }) if c == column),
            "{e}"
        );
        let data: Vec<_> = std::fs::read_dir(dir.path().join("t"))
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name() != "_delta_log")
            .collect();
        assert!(data.is_empty(), "nothing written: {data:?}");
    }
}
