//! Input naming one column twice (`id,id`, or `id,ID`: names are case-insensitive) is
//! refused by every entry point that takes rows — append and overwrite of an existing
//! table, a transaction's `write_files`, a MERGE source — with `Error::DuplicateColumn` naming
//! the column, and nothing is written: before, the second column's values were silently
//! dropped. (A state store's `put` is checked in `state/tests/integration`.)

use std::sync::Arc;

use alluvium::{Error, Table, WriteOptions};
use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};

use crate::dml_common::{Row, rows, schema};

/// Rows `(id, k, v)` with the id column given twice, the second time named `second`.
fn doubled(second: &str) -> RecordBatch {
    RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, true),
            Field::new("k", DataType::Utf8, true),
            Field::new("v", DataType::Int64, true),
            Field::new(second, DataType::Int64, true),
        ])),
        vec![
            Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef,
            Arc::new(StringArray::from(vec!["a", "b"])),
            Arc::new(Int64Array::from(vec![10, 20])),
            Arc::new(Int64Array::from(vec![7, 8])),
        ],
    )
    .unwrap()
}

fn names(e: &Error, column: &str) -> bool {
    matches!(e, Error::DuplicateColumn { column: c, .. } if c.eq_ignore_ascii_case(column))
        && e.to_string().contains(&format!("`{column}`"))
}

fn table() -> (Table, Vec<Row>) {
    let t = Table::in_memory();
    t.create(&schema(), &[], alluvium::NO_PROPERTIES).unwrap();
    let ok = RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from(vec![0])) as ArrayRef,
            Arc::new(StringArray::from(vec!["z"])),
            Arc::new(Int64Array::from(vec![0])),
        ],
    )
    .unwrap();
    t.append([ok], &WriteOptions::default()).unwrap();
    let model = rows(&t);
    (t, model)
}

#[test]
fn writes_refuse_a_column_named_twice() {
    for second in ["id", "ID"] {
        let (t, model) = table();
        let version = t.snapshot().unwrap().version();
        let e = t
            .append([doubled(second)], &WriteOptions::default())
            .unwrap_err();
        assert!(names(&e, second), "append {second}: {e:?}");
        let e = t
            .overwrite([doubled(second)], None, &WriteOptions::default())
            .unwrap_err();
        assert!(names(&e, second), "overwrite {second}: {e:?}");
        let mut txn = t.transaction("WRITE").unwrap();
        let e = txn.write_files([doubled(second)]).unwrap_err();
        assert!(names(&e, second), "transaction {second}: {e:?}");
        let e = t
            .merge([doubled(second)], "t.id = s.id")
            .when("NOT MATCHED THEN INSERT *")
            .execute(&WriteOptions::default())
            .unwrap_err();
        assert!(names(&e, second), "merge {second}: {e:?}");
        assert_eq!(e.kind(), alluvium::ErrorKind::InvalidInput);
        assert_eq!(t.snapshot().unwrap().version(), version, "{second}");
        assert_eq!(rows(&t), model, "{second}");
    }
}
