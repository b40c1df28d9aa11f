//! A state store's `put` refuses events naming one column twice (`v,v`, or `v,V`: names
//! are case-insensitive) with alluvium's `Error::DuplicateColumn` naming the column, as
//! every entry point taking rows does (SPEC.md §20): the store looks columns up by name, so
//! the second column's values would be dropped unseen.

use std::sync::Arc;

use alluvium::Error;
use alluvium_state::{StateError, StateOptions, StateStore};
use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};

/// Whether `e` is the table layer's refusal of `column` as a second column of its name.
fn names(e: &StateError, column: &str) -> bool {
    matches!(
        e,
        StateError::Table(Error::DuplicateColumn { column: c, .. }) if c.eq_ignore_ascii_case(column)
    ) && e.to_string().contains(&format!("`{column}`"))
}

#[test]
fn a_state_put_refuses_a_column_named_twice() {
    let values = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("v", DataType::Utf8, true),
    ]));
    let store = StateStore::in_memory(&["id"], values, StateOptions::default()).unwrap();
    for (second, column) in [("v", "v"), ("V", "V"), ("ID", "ID")] {
        let events = RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("id", DataType::Int64, false),
                Field::new("v", DataType::Utf8, true),
                Field::new(
                    "event_time",
                    DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                    false,
                ),
                Field::new(
                    second,
                    match second {
                        "ID" => DataType::Int64,
                        _ => DataType::Utf8,
                    },
                    true,
                ),
            ])),
            vec![
                Arc::new(Int64Array::from(vec![1])) as ArrayRef,
                Arc::new(StringArray::from(vec!["kept"])),
                Arc::new(TimestampMicrosecondArray::from(vec![1_000]).with_timezone("UTC")),
                match second {
                    "ID" => Arc::new(Int64Array::from(vec![2])) as ArrayRef,
                    _ => Arc::new(StringArray::from(vec!["dropped"])),
                },
            ],
        )
        .unwrap();
        let e = store.put(&[events], None).unwrap_err();
        assert!(names(&e, column), "{second}: {e:?}");
    }
}
