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

/// A nullable Int64 field.
fn int(name: &str) -> Field {
    Field::new(name, DataType::Int64, true)
}

/// Schemas naming a column twice below the top level: inside a struct, inside the struct
/// elements of a list, inside the struct values of a map; with the path the error names.
fn nested_doubles() -> Vec<(Schema, &'static str)> {
    let pair = || arrow::datatypes::Fields::from(vec![int("a"), int("A")]);
    let list = DataType::List(Arc::new(Field::new(
        "element",
        DataType::Struct(pair()),
        true,
    )));
    let map = DataType::Map(
        Arc::new(Field::new(
            "key_value",
            DataType::Struct(arrow::datatypes::Fields::from(vec![
                Field::new("key", DataType::Utf8, false),
                Field::new("value", DataType::Struct(pair()), true),
            ])),
            false,
        )),
        false,
    );
    vec![
        (Schema::new(vec![int("id"), int("ID")]), "ID"),
        (
            Schema::new(vec![
                int("id"),
                Field::new("s", DataType::Struct(pair()), true),
            ]),
            "s.A",
        ),
        (
            Schema::new(vec![int("id"), Field::new("l", list, true)]),
            "l.element.A",
        ),
        (
            Schema::new(vec![int("id"), Field::new("m", map, true)]),
            "m.value.A",
        ),
    ]
}

/// Creating a table whose schema names a column twice, at any depth, is refused with
/// `Error::DuplicateColumn` naming the column's path, and no table is left: before, a
/// nested pair was committed into a schema that every later read refused.
#[test]
fn creating_a_table_naming_a_column_twice_is_refused_at_any_depth() {
    for (schema, path) in nested_doubles() {
        let t = Table::in_memory();
        let e = t.create(&schema, &[], alluvium::NO_PROPERTIES).unwrap_err();
        assert!(names(&e, path), "{path}: {e:?}");
        assert!(t.snapshot().is_err(), "{path}: a table was created");
        let empty = RecordBatch::new_empty(Arc::new(schema.clone()));
        let e = t
            .create_with_data(
                &schema,
                &[],
                alluvium::NO_PROPERTIES,
                [empty],
                &WriteOptions::default(),
            )
            .unwrap_err();
        assert!(names(&e, path), "{path} with data: {e:?}");
        assert!(
            t.snapshot().is_err(),
            "{path}: a table was created with data"
        );
    }
}

/// Input adding a new column (schema merging) that names a field twice inside a list's or
/// a map's structs is refused as a struct's is, and the table stays readable.
#[test]
fn schema_merging_refuses_a_new_column_naming_a_field_twice() {
    for (schema, path) in nested_doubles().into_iter().skip(2) {
        let (t, model) = table();
        let version = t.snapshot().unwrap().version();
        let nested = arrow::array::new_null_array(schema.field(1).data_type(), 1);
        let input = RecordBatch::try_new(
            Arc::new(schema),
            vec![Arc::new(Int64Array::from(vec![9])) as ArrayRef, nested],
        )
        .unwrap();
        let e = t
            .append([input], &WriteOptions::default().with_merge_schema(true))
            .unwrap_err();
        assert!(names(&e, path), "{path}: {e:?}");
        assert_eq!(t.snapshot().unwrap().version(), version, "{path}");
        assert_eq!(rows(&t), model, "{path}");
    }
}
