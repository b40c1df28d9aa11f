//! Library errors that say what to do (issue 27 item 4): the first offending row of a
//! replaceWhere, the nearest known property of a mistyped `delta.*` key. (MERGE's duplicate
//! key: `dml_merge.rs`; where the change feed starts: `changes.rs`.) The messages name no
//! command-line flag: the CLI adds its own hints.

use std::sync::Arc;

use alluvium::{Table, WriteOptions};
use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};

fn batch(ids: &[i64], parts: &[&str]) -> RecordBatch {
    RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, true),
            Field::new("p", DataType::Utf8, true),
        ])),
        vec![
            Arc::new(Int64Array::from(ids.to_vec())) as ArrayRef,
            Arc::new(StringArray::from(parts.to_vec())),
        ],
    )
    .unwrap()
}

fn table() -> (tempfile::TempDir, Table) {
    let dir = tempfile::tempdir().unwrap();
    let t = Table::open(dir.path().to_str().unwrap()).unwrap();
    t.create(&batch(&[], &[]).schema(), &[], alluvium::NO_PROPERTIES)
        .unwrap();
    t.append([batch(&[1, 2], &["x", "y"])], &WriteOptions::default())
        .unwrap();
    (dir, t)
}

#[test]
fn replace_where_names_the_first_row_outside_the_predicate() {
    let (_d, t) = table();
    let e = t
        .overwrite_str(
            [batch(&[7, 8, 9], &["x", "y", "x"])],
            Some("p = 'x'"),
            &WriteOptions::default(),
        )
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("the new row {id: 8, p: y} does not match the overwrite predicate p = 'x'"),
        "{e}"
    );
    assert!(!e.contains("--"), "{e}");
}

#[test]
fn a_mistyped_property_gets_the_nearest_known_one() {
    let (_d, t) = table();
    let e = t
        .set_properties([("delta.enableDeletionVector", "true")], &[])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("unknown table property delta.enableDeletionVector (did you mean delta.enableDeletionVectors?)"),
        "{e}"
    );
    let e = t
        .set_properties([("delta.constraints.c", "id > 0")], &[])
        .unwrap_err()
        .to_string();
    assert!(!e.contains("--"), "a library message names a flag: {e}");
}
