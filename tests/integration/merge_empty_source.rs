//! MERGE of an empty source (Delta's semantics): with only MATCHED / NOT MATCHED clauses
//! nothing matches and nothing is inserted, so the MERGE commits no file actions and says
//! so in its metrics; NOT MATCHED BY SOURCE clauses still apply to every target row (none
//! has a match). The source's columns may be typed or, as a header-only CSV infers them,
//! all-NULL (`void`: typed as the target's columns of the same names), or absent (no
//! batch, or batches without columns: nothing refers to the source's names then); rows
//! without columns are refused with a message that says why.

use std::sync::Arc;

use alluvium::{Error, WriteOptions};
use arrow::array::{ArrayRef, NullArray, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};

use crate::dml_common::*;

/// An empty source of `(id, k, v, op)` with the usual types.
fn typed_empty() -> RecordBatch {
    source(&[])
}

/// An empty source whose every column is NULL-typed (what a CSV header alone infers).
fn void_empty() -> RecordBatch {
    let names = ["id", "k", "v"];
    let schema = Arc::new(Schema::new(
        names
            .iter()
            .map(|n| Field::new(*n, DataType::Null, true))
            .collect::<Vec<_>>(),
    ));
    let cols: Vec<ArrayRef> = names
        .iter()
        .map(|_| Arc::new(NullArray::new(0)) as ArrayRef)
        .collect();
    RecordBatch::try_new(schema, cols).unwrap()
}

#[test]
fn an_empty_source_merges_nothing_with_matched_and_not_matched_clauses() {
    for f in FLAVOURS {
        for (form, src) in [("typed", typed_empty()), ("void", void_empty())] {
            let (t, model) = table(f);
            let before = t.snapshot().unwrap().version();
            let done = t
                .merge([src], "t.id = s.id")
                .when("MATCHED AND s.v < 0 THEN DELETE")
                .when("MATCHED THEN UPDATE SET *")
                .when("NOT MATCHED THEN INSERT *")
                .execute(&WriteOptions::default())
                .unwrap_or_else(|e| panic!("{form} {f:?}: {e}"));
            assert_eq!(rows(&t), model, "{form} {f:?}");
            assert_eq!(done.metric("numSourceRows"), Some(0), "{form} {f:?}");
            assert_eq!(
                done.metric("numTargetFilesScanned"),
                Some(0),
                "{form} {f:?}"
            );
            let r = done.outcome.report().unwrap();
            assert_eq!((r.files_added, r.files_removed), (0, 0), "{form} {f:?}");
            assert_eq!(t.snapshot().unwrap().version(), before + 1, "{form} {f:?}");
        }
    }
}

#[test]
fn an_empty_source_still_applies_not_matched_by_source_clauses() {
    for f in FLAVOURS {
        for (form, src) in [("typed", typed_empty()), ("void", void_empty())] {
            for on in ["t.id = s.id", "t.id < s.id"] {
                let (t, model) = table(f);
                let done = t
                    .merge([src.clone()], on)
                    .when("MATCHED THEN DELETE")
                    .when("NOT MATCHED BY SOURCE AND t.id >= 20 THEN DELETE")
                    .when("NOT MATCHED BY SOURCE AND t.id < 5 THEN UPDATE SET v = -1")
                    .execute(&WriteOptions::default())
                    .unwrap_or_else(|e| panic!("{form} {on} {f:?}: {e}"));
                let want: Vec<Row> = model
                    .iter()
                    .filter(|r| r.0 < 20)
                    .map(|r| match r.0 < 5 {
                        true => (r.0, r.1.clone(), Some(-1)),
                        false => r.clone(),
                    })
                    .collect();
                assert_eq!(rows(&t), want, "{form} {on} {f:?}");
                assert_eq!(done.metric("numTargetRowsDeleted"), Some(10));
                assert_eq!(done.metric("numTargetRowsUpdated"), Some(5));
            }
        }
    }
}

/// A source without a schema: no batches at all, or batches without columns.
fn schemaless_sources() -> Vec<(&'static str, Vec<RecordBatch>)> {
    let no_columns = RecordBatch::try_new_with_options(Arc::new(Schema::empty()), vec![], &{
        arrow::array::RecordBatchOptions::new().with_row_count(Some(0))
    })
    .unwrap();
    vec![
        ("no batches", Vec::new()),
        ("no columns", vec![no_columns.clone()]),
        (
            "two batches without columns",
            vec![no_columns.clone(), no_columns],
        ),
    ]
}

#[test]
fn a_source_without_columns_or_batches_merges_nothing() {
    for f in FLAVOURS {
        for (form, src) in schemaless_sources() {
            let (t, model) = table(f);
            let before = t.snapshot().unwrap().version();
            // Names of the source cannot be checked without its schema: they are not
            // bound, as no source row can ever reach them.
            let done = t
                .merge(src, "t.id = s.id")
                .when("MATCHED AND s.v < 0 THEN DELETE")
                .when("MATCHED THEN UPDATE SET *")
                .when("NOT MATCHED THEN INSERT *")
                .execute(&WriteOptions::default())
                .unwrap_or_else(|e| panic!("{form} {f:?}: {e}"));
            assert_eq!(rows(&t), model, "{form} {f:?}");
            assert_eq!(done.metric("numSourceRows"), Some(0), "{form} {f:?}");
            assert_eq!(done.metric("numTargetFilesScanned"), Some(0));
            let r = done.outcome.report().unwrap();
            assert_eq!((r.files_added, r.files_removed), (0, 0), "{form} {f:?}");
            assert_eq!(t.snapshot().unwrap().version(), before + 1, "{form} {f:?}");
        }
    }
}

#[test]
fn a_source_without_a_schema_still_applies_not_matched_by_source_clauses() {
    for f in FLAVOURS {
        for (form, src) in schemaless_sources() {
            let (t, model) = table(f);
            let done = t
                .merge(src, "t.id = s.id")
                .when("MATCHED THEN DELETE")
                .when("NOT MATCHED BY SOURCE AND t.id >= 20 THEN DELETE")
                .when("NOT MATCHED BY SOURCE AND t.id < 5 THEN UPDATE SET v = -1")
                .execute(&WriteOptions::default())
                .unwrap_or_else(|e| panic!("{form} {f:?}: {e}"));
            let want: Vec<Row> = model
                .iter()
                .filter(|r| r.0 < 20)
                .map(|r| match r.0 < 5 {
                    true => (r.0, r.1.clone(), Some(-1)),
                    false => r.clone(),
                })
                .collect();
            assert_eq!(rows(&t), want, "{form} {f:?}");
            assert_eq!(done.metric("numTargetRowsDeleted"), Some(10));
            assert_eq!(done.metric("numTargetRowsUpdated"), Some(5));
        }
    }
}

#[test]
fn rows_without_columns_are_refused_with_a_reason() {
    let (t, model) = table(FLAVOURS[0]);
    let rows_only = RecordBatch::try_new_with_options(Arc::new(Schema::empty()), vec![], &{
        arrow::array::RecordBatchOptions::new().with_row_count(Some(3))
    })
    .unwrap();
    let e = t
        .merge([rows_only], "TRUE")
        .when("MATCHED THEN DELETE")
        .execute(&WriteOptions::default())
        .unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e:?}");
    assert!(e.to_string().contains("3 rows but no columns"), "{e}");
    assert_eq!(rows(&t), model);
}
