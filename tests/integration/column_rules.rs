//! Column rules on every write path (SPEC.md §28): CHECK constraints, NOT NULL (nested
//! too), legacy invariants, generated columns, identity columns, column defaults, and
//! `add_constraint` / `drop_constraint`. Each test fails without the rule it names.

use std::collections::HashMap;
use std::sync::Arc;

use alluvium::{ErrorKind, ScanBuilder, StructType, Table, WriteOptions};
use arrow::array::{
    Array, ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray, StructArray,
};
use arrow::datatypes::{DataType, Field, Fields, Schema};

use crate::common::{canon_rows, copy_table};

fn table(fields: &str, props: &[(&str, &str)]) -> Table {
    let t = Table::in_memory();
    let schema =
        StructType::from_json(&format!(r#"{{"type":"struct","fields":[{fields}]}}"#)).unwrap();
    let props: HashMap<String, String> = props
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    t.create_with_schema(schema, &[], &props).unwrap();
    t
}

fn field(name: &str, ty: &str, nullable: bool, meta: &str) -> String {
    format!(r#"{{"name":"{name}","type":"{ty}","nullable":{nullable},"metadata":{{{meta}}}}}"#)
}

fn longs(cols: &[(&str, Vec<Option<i64>>)]) -> RecordBatch {
    let fields: Vec<Field> = cols
        .iter()
        .map(|(n, _)| Field::new(*n, DataType::Int64, true))
        .collect();
    let arrays: Vec<ArrayRef> = cols
        .iter()
        .map(|(_, v)| Arc::new(Int64Array::from(v.clone())) as ArrayRef)
        .collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).unwrap()
}

fn rows(t: &Table) -> Vec<String> {
    let b = ScanBuilder::new(t.snapshot().unwrap())
        .build()
        .unwrap()
        .execute_to_vec()
        .unwrap();
    canon_rows(&b)
}

fn version(t: &Table) -> u64 {
    t.snapshot().unwrap().version()
}

fn data_files(t: &Table) -> usize {
    t.store()
        .list_tree(None)
        .unwrap()
        .iter()
        .filter(|m| m.path.as_str().ends_with(".parquet"))
        .count()
}

/// The files a scan with `filter` keeps, and the rows it returns.
fn files_and_rows(t: &Table, filter: &str) -> (usize, usize) {
    let s = ScanBuilder::new(t.snapshot().unwrap())
        .with_filter(alluvium::parse_expr(filter).unwrap())
        .build()
        .unwrap();
    let n = s.files().len();
    let rows: usize = s
        .execute_to_vec()
        .unwrap()
        .iter()
        .map(|b| b.num_rows())
        .sum();
    (n, rows)
}

fn append(t: &Table, b: RecordBatch) -> alluvium::Result<()> {
    t.append([b], &WriteOptions::default()).map(|_| ())
}

fn field_meta(t: &Table, column: &str, key: &str) -> Option<serde_json::Value> {
    let s = t.snapshot().unwrap();
    s.schema().field(column).unwrap().metadata.get(key).cloned()
}

// ---------------------------------------------------------------- CHECK constraints

#[test]
fn check_constraint_refuses_a_violating_append_and_commits_nothing() {
    let t = table(
        &field("x", "long", true, ""),
        &[("delta.constraints.positive", "x > 0")],
    );
    append(&t, longs(&[("x", vec![Some(1), Some(2)])])).unwrap();
    let v = version(&t);
    let files = data_files(&t);
    let e = append(&t, longs(&[("x", vec![Some(3), Some(-7)])])).unwrap_err();
    assert!(
        matches!(&e, alluvium::Error::ConstraintViolation { constraint, row, .. }
            if constraint == "positive" && row.contains("-7")),
        "{e}"
    );
    assert_eq!(e.kind(), ErrorKind::InvalidInput);
    assert_eq!(version(&t), v, "nothing committed");
    assert_eq!(
        data_files(&t),
        files,
        "the refused batch's files are not left behind"
    );
    // NULL is not TRUE: a violation too (PROTOCOL.md "CHECK Constraints").
    let e = append(&t, longs(&[("x", vec![None])])).unwrap_err();
    assert!(
        matches!(e, alluvium::Error::ConstraintViolation { .. }),
        "{e}"
    );
    assert_eq!(rows(&t), ["1", "2"]);
}

#[test]
fn check_constraints_hold_on_overwrite_update_and_merge() {
    let t = table(
        &[field("id", "long", true, ""), field("v", "long", true, "")].join(","),
        &[("delta.constraints.small", "v < 100")],
    );
    append(
        &t,
        longs(&[
            ("id", vec![Some(1), Some(2)]),
            ("v", vec![Some(10), Some(20)]),
        ]),
    )
    .unwrap();
    let v = version(&t);
    let bad = longs(&[("id", vec![Some(3)]), ("v", vec![Some(500)])]);
    let e = t
        .overwrite([bad.clone()], None, &WriteOptions::default())
        .unwrap_err();
    assert!(
        matches!(e, alluvium::Error::ConstraintViolation { .. }),
        "overwrite: {e}"
    );
    let e = t
        .update_str("v = v * 10", Some("id = 2"), &WriteOptions::default())
        .unwrap_err();
    assert!(
        matches!(&e, alluvium::Error::ConstraintViolation { row, .. } if row.contains("200")),
        "update: {e}"
    );
    let e = t
        .merge([bad.clone()], "t.id = s.id")
        .when("NOT MATCHED THEN INSERT *")
        .execute(&WriteOptions::default())
        .unwrap_err();
    assert!(
        matches!(e, alluvium::Error::ConstraintViolation { .. }),
        "merge insert: {e}"
    );
    let e = t
        .merge(
            [longs(&[("id", vec![Some(1)]), ("v", vec![Some(999)])])],
            "t.id = s.id",
        )
        .when("MATCHED THEN UPDATE SET *")
        .execute(&WriteOptions::default())
        .unwrap_err();
    assert!(
        matches!(e, alluvium::Error::ConstraintViolation { .. }),
        "merge update: {e}"
    );
    assert_eq!(version(&t), v);
    // Rows that satisfy it go through every path.
    t.update_str("v = v + 1", Some("id = 2"), &WriteOptions::default())
        .unwrap();
    assert_eq!(rows(&t), ["1 | 10", "2 | 21"]);
}

#[test]
fn add_constraint_checks_existing_rows_upgrades_the_protocol_and_drop_removes_it() {
    let t = table(&field("x", "long", true, ""), &[]);
    append(&t, longs(&[("x", vec![Some(1), Some(-1)])])).unwrap();
    assert_eq!(t.snapshot().unwrap().protocol().min_writer_version, 2);
    let v = version(&t);
    let e = t.add_constraint("pos", "x > 0").unwrap_err();
    assert!(
        matches!(&e, alluvium::Error::ConstraintViolation { constraint, row, .. }
            if constraint == "pos" && row.contains("-1")),
        "{e}"
    );
    assert_eq!(version(&t), v, "a violated constraint is not added");
    t.add_constraint("NonZero", "x != 0").unwrap();
    let s = t.snapshot().unwrap();
    assert_eq!(
        s.metadata().configuration["delta.constraints.nonzero"],
        "x != 0"
    );
    assert!(
        s.protocol().min_writer_version >= 3,
        "checkConstraints supported"
    );
    assert!(
        t.add_constraint("nonzero", "x > -5").is_err(),
        "names are case-insensitive"
    );
    assert!(t.add_constraint("bad", "no_such_column > 0").is_err());
    let e = append(&t, longs(&[("x", vec![Some(0)])])).unwrap_err();
    assert!(
        matches!(e, alluvium::Error::ConstraintViolation { .. }),
        "{e}"
    );
    t.drop_constraint("nonzero").unwrap();
    append(&t, longs(&[("x", vec![Some(0)])])).unwrap();
    assert!(t.drop_constraint("nonzero").is_err(), "already dropped");
}

// ---------------------------------------------------------------- NOT NULL, invariants

#[test]
fn not_null_is_enforced_on_top_level_and_nested_fields() {
    let inner =
        r#"{"type":"struct","fields":[{"name":"a","type":"long","nullable":false,"metadata":{}}]}"#;
    let t = table(
        &[
            field("id", "long", false, ""),
            format!(r#"{{"name":"s","type":{inner},"nullable":true,"metadata":{{}}}}"#),
        ]
        .join(","),
        &[],
    );
    let s_fields = Fields::from(vec![Field::new("a", DataType::Int64, true)]);
    let mk = |ids: Vec<Option<i64>>, a: Vec<Option<i64>>, s_valid: Vec<bool>| {
        let s = StructArray::new(
            s_fields.clone(),
            vec![Arc::new(Int64Array::from(a)) as ArrayRef],
            Some(s_valid.into()),
        );
        RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("id", DataType::Int64, true),
                Field::new("s", DataType::Struct(s_fields.clone()), true),
            ])),
            vec![Arc::new(Int64Array::from(ids)), Arc::new(s)],
        )
        .unwrap()
    };
    // A NULL struct may hide a NULL field; a present struct may not.
    append(
        &t,
        mk(
            vec![Some(1), Some(2)],
            vec![Some(5), None],
            vec![true, false],
        ),
    )
    .unwrap();
    let e = append(&t, mk(vec![Some(3)], vec![None], vec![true])).unwrap_err();
    assert!(
        matches!(&e, alluvium::Error::NotNullViolation { column, .. } if column == "s.a"),
        "{e}"
    );
    let e = append(&t, mk(vec![None], vec![Some(1)], vec![true])).unwrap_err();
    assert!(e.to_string().contains("id"), "{e}");
    assert_eq!(rows(&t).len(), 2);
}

#[test]
fn legacy_invariants_are_enforced() {
    let meta = r#""delta.invariants":"{\"expression\":{\"expression\":\"x > 3\"}}""#;
    let t = table(&field("x", "long", true, meta), &[]);
    append(&t, longs(&[("x", vec![Some(4)])])).unwrap();
    let e = append(&t, longs(&[("x", vec![Some(3)])])).unwrap_err();
    assert!(
        matches!(&e, alluvium::Error::ConstraintViolation { constraint, .. } if constraint.contains("x")),
        "{e}"
    );
    assert!(
        append(&t, longs(&[("x", vec![None])])).is_err(),
        "NULL violates an invariant"
    );
}

// ---------------------------------------------------------------- generated columns

fn generated_table() -> Table {
    table(
        &[
            field("a", "long", true, ""),
            field(
                "b",
                "long",
                true,
                r#""delta.generationExpression":"a * 2 + 1""#,
            ),
        ]
        .join(","),
        &[],
    )
}

#[test]
fn generated_columns_are_computed_when_absent_and_checked_when_given() {
    let t = generated_table();
    assert!(t.snapshot().unwrap().protocol().min_writer_version >= 4);
    append(&t, longs(&[("a", vec![Some(1), None])])).unwrap();
    append(&t, longs(&[("a", vec![Some(5)]), ("b", vec![Some(11)])])).unwrap();
    let v = version(&t);
    let e = append(
        &t,
        longs(&[
            ("a", vec![Some(5), Some(6)]),
            ("b", vec![Some(11), Some(0)]),
        ]),
    )
    .unwrap_err();
    assert!(
        matches!(&e, alluvium::Error::GeneratedColumnMismatch { column, row, .. }
            if column == "b" && row.contains("6")),
        "{e}"
    );
    assert_eq!(version(&t), v);
    assert_eq!(rows(&t), ["1 | 3", "5 | 11", "∅ | ∅"]);
}

#[test]
fn generated_columns_follow_updates_and_merges() {
    let t = generated_table();
    append(&t, longs(&[("a", vec![Some(1), Some(2)])])).unwrap();
    t.update_str("a = a + 10", Some("a = 1"), &WriteOptions::default())
        .unwrap();
    assert_eq!(rows(&t), ["11 | 23", "2 | 5"]);
    let e = t
        .update_str("b = 0", None, &WriteOptions::default())
        .unwrap_err();
    assert!(
        matches!(e, alluvium::Error::GeneratedColumnMismatch { .. }),
        "{e}"
    );
    t.merge([longs(&[("a", vec![Some(2), Some(7)])])], "t.a = s.a")
        .when("MATCHED THEN UPDATE SET a = s.a + 100")
        .when("NOT MATCHED THEN INSERT (a) VALUES (s.a)")
        .execute(&WriteOptions::default())
        .unwrap();
    assert_eq!(rows(&t), ["102 | 205", "11 | 23", "7 | 15"]);
    // `UPDATE SET *` / `INSERT *` from a source without the generated column compute it.
    let src = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("k", DataType::Int64, true),
            Field::new("a", DataType::Int64, true),
        ])),
        vec![
            Arc::new(Int64Array::from(vec![7, 50])) as ArrayRef,
            Arc::new(Int64Array::from(vec![8, 50])),
        ],
    )
    .unwrap();
    t.merge([src], "t.a = s.k")
        .when("MATCHED THEN UPDATE SET *")
        .when("NOT MATCHED THEN INSERT *")
        .merge_schema(true)
        .execute(&WriteOptions::default())
        .unwrap();
    let got = ScanBuilder::new(t.snapshot().unwrap())
        .with_columns(["a", "b"])
        .build()
        .unwrap()
        .execute_to_vec()
        .unwrap();
    assert_eq!(
        canon_rows(&got),
        ["102 | 205", "11 | 23", "50 | 101", "8 | 17"]
    );
}

#[test]
fn a_generation_expression_alluvium_cannot_evaluate_refuses_writes() {
    let t = table(
        &[
            field("ts", "long", true, ""),
            field(
                "d",
                "long",
                true,
                r#""delta.generationExpression":"some_udf(ts)""#,
            ),
        ]
        .join(","),
        &[],
    );
    let e = append(&t, longs(&[("ts", vec![Some(1)])])).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
    assert!(e.to_string().contains("`d`"), "{e}");
    assert_eq!(data_files(&t), 0);
}

#[test]
fn reference_table_with_generated_columns_accepts_appends() {
    let (_dir, path) = copy_table("dbr_8_1_generated_columns");
    let t = Table::open(path.to_str().unwrap()).unwrap();
    let c1 = Arc::new(Int32Array::from(vec![Some(1), Some(41)])) as ArrayRef;
    let b = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("c1", DataType::Int32, true)])),
        vec![c1],
    )
    .unwrap();
    append(&t, b).unwrap();
    assert_eq!(rows(&t), ["1 | 2", "41 | 42"]);
}

// ---------------------------------------------------------------- identity columns

fn identity_meta(start: i64, step: i64, explicit: bool) -> String {
    format!(
        r#""delta.identity.start":{start},"delta.identity.step":{step},"delta.identity.allowExplicitInsert":{explicit}"#
    )
}

fn names(n: usize) -> RecordBatch {
    let v: Vec<String> = (0..n).map(|i| format!("n{i}")).collect();
    RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("name", DataType::Utf8, true)])),
        vec![Arc::new(StringArray::from(v)) as ArrayRef],
    )
    .unwrap()
}

fn identity_table(start: i64, step: i64, explicit: bool) -> Table {
    table(
        &[
            field("id", "long", false, &identity_meta(start, step, explicit)),
            field("name", "string", true, ""),
        ]
        .join(","),
        &[],
    )
}

fn ids(t: &Table) -> Vec<i64> {
    crate::common::sorted_ids(t)
}

#[test]
fn identity_values_follow_start_step_and_the_high_water_mark() {
    let t = identity_table(10, 5, false);
    assert!(t.snapshot().unwrap().protocol().min_writer_version >= 6);
    append(&t, names(3)).unwrap();
    assert_eq!(ids(&t), [10, 15, 20]);
    assert_eq!(
        field_meta(&t, "id", "delta.identity.highWaterMark"),
        Some(20.into())
    );
    append(&t, names(2)).unwrap();
    assert_eq!(ids(&t), [10, 15, 20, 25, 30]);
    assert_eq!(
        field_meta(&t, "id", "delta.identity.highWaterMark"),
        Some(30.into())
    );
    // A negative step counts down from the mark.
    let d = identity_table(-1, -3, false);
    append(&d, names(2)).unwrap();
    append(&d, names(1)).unwrap();
    assert_eq!(ids(&d), [-7, -4, -1]);
    assert_eq!(
        field_meta(&d, "id", "delta.identity.highWaterMark"),
        Some((-7).into())
    );
}

#[test]
fn generated_always_refuses_values_by_default_accepts_them() {
    let always = identity_table(1, 1, false);
    let given = |id: i64| {
        RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("id", DataType::Int64, false),
                Field::new("name", DataType::Utf8, true),
            ])),
            vec![
                Arc::new(Int64Array::from(vec![id])) as ArrayRef,
                Arc::new(StringArray::from(vec!["x"])),
            ],
        )
        .unwrap()
    };
    let e = append(&always, given(100)).unwrap_err();
    assert!(
        matches!(&e, alluvium::Error::IdentityColumnViolation { column, .. } if column == "id"),
        "{e}"
    );
    let by_default = identity_table(1, 1, true);
    append(&by_default, given(100)).unwrap();
    append(&by_default, names(1)).unwrap();
    // Explicit values do not move the mark (as in Delta Spark).
    assert_eq!(ids(&by_default), [1, 100]);
    // Identity columns are never updated.
    let e = by_default
        .update_str("id = 5", None, &WriteOptions::default())
        .unwrap_err();
    assert!(
        matches!(e, alluvium::Error::IdentityColumnViolation { .. }),
        "{e}"
    );
}

#[test]
fn merge_inserts_generate_identity_values() {
    let t = identity_table(1, 1, false);
    append(&t, names(2)).unwrap();
    let src = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("name", DataType::Utf8, true)])),
        vec![Arc::new(StringArray::from(vec!["n1", "new1", "new2"])) as ArrayRef],
    )
    .unwrap();
    t.merge([src], "t.name = s.name")
        .when("NOT MATCHED THEN INSERT *")
        .execute(&WriteOptions::default())
        .unwrap();
    assert_eq!(ids(&t), [1, 2, 3, 4]);
    assert_eq!(
        field_meta(&t, "id", "delta.identity.highWaterMark"),
        Some(4.into())
    );
}

#[test]
fn eight_concurrent_identity_writers_never_duplicate_values() {
    let dir = tempfile::tempdir().unwrap();
    let loc = dir.path().join("t");
    let loc = loc.to_str().unwrap().to_string();
    let t = Table::open(&loc).unwrap();
    let schema = StructType::from_json(&format!(
        r#"{{"type":"struct","fields":[{},{}]}}"#,
        field("id", "long", false, &identity_meta(1, 1, false)),
        field("name", "string", true, "")
    ))
    .unwrap();
    t.create_with_schema(schema, &[], alluvium::NO_PROPERTIES)
        .unwrap();
    let writers: Vec<_> = (0..8)
        .map(|_| {
            let loc = loc.clone();
            std::thread::spawn(move || {
                let t = Table::open(&loc).unwrap();
                for _ in 0..3 {
                    // A writer that lost to another identity writer re-runs its append,
                    // which reads the new high-water mark.
                    loop {
                        match t.append([names(4)], &WriteOptions::default()) {
                            Ok(_) => break,
                            Err(e) if e.kind() == ErrorKind::Conflict => continue,
                            Err(e) => panic!("{e}"),
                        }
                    }
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    let got = ids(&t);
    assert_eq!(got.len(), 8 * 3 * 4);
    let mut dedup = got.clone();
    dedup.dedup();
    assert_eq!(dedup.len(), got.len(), "duplicate identity values: {got:?}");
    assert_eq!(got, (1..=96).collect::<Vec<i64>>());
}

#[test]
fn reference_identity_table_generates_and_refuses_explicit_values() {
    // Created by Databricks Runtime 14.1: GENERATED ALWAYS AS IDENTITY, protocol 1/6.
    let (_dir, path) = copy_table("issue-2152");
    let t = Table::open(path.to_str().unwrap()).unwrap();
    let keys = |v: Vec<&str>| {
        RecordBatch::try_new(
            Arc::new(Schema::new(vec![Field::new(
                "TXT_DateKey",
                DataType::Utf8,
                true,
            )])),
            vec![Arc::new(StringArray::from(v)) as ArrayRef],
        )
        .unwrap()
    };
    append(&t, keys(vec!["a", "b"])).unwrap();
    append(&t, keys(vec!["c"])).unwrap();
    let got = ScanBuilder::new(t.snapshot().unwrap())
        .build()
        .unwrap()
        .execute_to_vec()
        .unwrap();
    assert_eq!(canon_rows(&got), ["1 | a", "2 | b", "3 | c"]);
    assert_eq!(
        field_meta(&t, "ID_D_DATE", "delta.identity.highWaterMark"),
        Some(3.into())
    );
    let given = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("ID_D_DATE", DataType::Int64, true),
            Field::new("TXT_DateKey", DataType::Utf8, true),
        ])),
        vec![
            Arc::new(Int64Array::from(vec![9])) as ArrayRef,
            Arc::new(StringArray::from(vec!["x"])),
        ],
    )
    .unwrap();
    let e = append(&t, given).unwrap_err();
    assert!(
        matches!(e, alluvium::Error::IdentityColumnViolation { .. }),
        "{e}"
    );
}

#[test]
fn rule_metadata_the_protocol_does_not_support_is_ignored() {
    // DBR 8.0 wrote `delta.generationExpression` at writer 2: not a generated column
    // (PROTOCOL.md "Generated Columns" applies "when supported"; Delta Spark agrees).
    let (_dir, path) = copy_table("dbr_8_0_non_generated_columns");
    let t = Table::open(path.to_str().unwrap()).unwrap();
    let before = rows(&t).len();
    let b = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("c1", DataType::Int32, true),
            Field::new("c2", DataType::Int32, true),
        ])),
        vec![
            Arc::new(Int32Array::from(vec![100])) as ArrayRef,
            Arc::new(Int32Array::from(vec![7])),
        ],
    )
    .unwrap();
    append(&t, b).unwrap();
    assert_eq!(rows(&t).len(), before + 1);
    assert!(rows(&t).contains(&"100 | 7".to_string()));
}

// ---------------------------------------------------------------- defaults

#[test]
fn missing_columns_take_their_default_and_explicit_nulls_stay() {
    let t = table(
        &[
            field("id", "long", true, ""),
            field("qty", "long", false, r#""CURRENT_DEFAULT":"40 + 2""#),
        ]
        .join(","),
        &[],
    );
    let p = t.snapshot().unwrap().protocol().clone();
    assert!(
        p.writer_features
            .iter()
            .flatten()
            .any(|f| f == "allowColumnDefaults")
    );
    append(&t, longs(&[("id", vec![Some(1)])])).unwrap();
    assert_eq!(rows(&t), ["1 | 42"]);
    // An explicit NULL is a value: the default does not replace it (and NOT NULL refuses it).
    let e = append(&t, longs(&[("id", vec![Some(2)]), ("qty", vec![None])])).unwrap_err();
    assert!(matches!(e, alluvium::Error::NotNullViolation { .. }), "{e}");
    t.merge([longs(&[("id", vec![Some(3)])])], "t.id = s.id")
        .when("NOT MATCHED THEN INSERT (id) VALUES (s.id)")
        .execute(&WriteOptions::default())
        .unwrap();
    assert_eq!(rows(&t), ["1 | 42", "3 | 42"]);
}

#[test]
fn embedder_transactions_apply_the_rules() {
    let t = identity_table(1, 1, false);
    let mut txn = t.transaction("WRITE").unwrap();
    let a = txn.write_files([names(2)]).unwrap();
    let b = txn.write_files([names(1)]).unwrap();
    txn.add_files(a);
    txn.add_files(b);
    txn.commit().unwrap();
    assert_eq!(ids(&t), [1, 2, 3]);
    assert_eq!(
        field_meta(&t, "id", "delta.identity.highWaterMark"),
        Some(3.into())
    );
}

#[allow(dead_code)]
fn unused(_: &dyn Array) {}

// ---------------------------------------------------------------- pruning

/// A table partitioned by `d = CAST(ts AS DATE)` and `k = g` (an identity-like copy),
/// without column statistics (so only partition values can skip files), one file per day.
fn partitioned_by_generated() -> Table {
    partitioned_by_generated_in(Table::in_memory())
}

fn partitioned_by_generated_in(t: Table) -> Table {
    let schema = StructType::from_json(&format!(
        r#"{{"type":"struct","fields":[{},{},{},{}]}}"#,
        field("ts", "timestamp", true, ""),
        field("g", "long", true, ""),
        field(
            "d",
            "date",
            true,
            r#""delta.generationExpression":"CAST(ts AS DATE)""#
        ),
        field("k", "long", true, r#""delta.generationExpression":"g""#),
    ))
    .unwrap();
    let props: HashMap<String, String> = [(
        "delta.dataSkippingNumIndexedCols".to_string(),
        "0".to_string(),
    )]
    .into();
    t.create_with_schema(schema, &["d".into(), "k".into()], &props)
        .unwrap();
    for day in 0..6i64 {
        let us = (19_000 + day) * 86_400_000_000 + 12 * 3_600_000_000;
        let ts =
            arrow::array::TimestampMicrosecondArray::from(vec![us, us + 1]).with_timezone("UTC");
        let b = RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("ts", ts.data_type().clone(), true),
                Field::new("g", DataType::Int64, true),
            ])),
            vec![
                Arc::new(ts) as ArrayRef,
                Arc::new(Int64Array::from(vec![day, day])),
            ],
        )
        .unwrap();
        append(&t, b).unwrap();
    }
    t
}

#[test]
fn filters_on_source_columns_prune_generated_partition_columns() {
    let t = partitioned_by_generated();
    let scan = |filter: &str| files_and_rows(&t, filter);
    assert_eq!(scan("g >= 0"), (6, 12));
    // Identity-like copy: exact.
    assert_eq!(scan("g = 2"), (1, 2));
    assert_eq!(scan("g > 3"), (2, 4));
    // CAST(ts AS DATE): a day of slack either side for the writer's time zone.
    // 2022-01-08 is day 19000 (2022-01-08 12:00 UTC is the first day's rows).
    assert_eq!(scan("ts >= '2022-01-12 00:00:00'"), (3, 4));
    assert_eq!(scan("ts < '2022-01-09 00:00:00'"), (3, 2));
    assert_eq!(scan("ts = '2022-01-10 12:00:00'"), (3, 1));
}

#[test]
fn year_month_day_generation_expressions_are_computed_checked_and_prune() {
    let t = Table::in_memory();
    let schema = StructType::from_json(&format!(
        r#"{{"type":"struct","fields":[{},{},{},{}]}}"#,
        field("ts", "timestamp", true, ""),
        field(
            "y",
            "integer",
            true,
            r#""delta.generationExpression":"YEAR(ts)""#
        ),
        field(
            "m",
            "integer",
            true,
            r#""delta.generationExpression":"month(ts)""#
        ),
        field(
            "dd",
            "integer",
            true,
            r#""delta.generationExpression":"DAY(ts)""#
        ),
    ))
    .unwrap();
    let props: HashMap<String, String> = [(
        "delta.dataSkippingNumIndexedCols".to_string(),
        "0".to_string(),
    )]
    .into();
    t.create_with_schema(schema, &["y".into()], &props).unwrap();
    let ts_batch = |micros: Vec<i64>, y: Option<Vec<i32>>| {
        let ts = arrow::array::TimestampMicrosecondArray::from(micros).with_timezone("UTC");
        let mut fields = vec![Field::new("ts", ts.data_type().clone(), true)];
        let mut cols: Vec<ArrayRef> = vec![Arc::new(ts)];
        if let Some(y) = y {
            fields.push(Field::new("y", DataType::Int32, true));
            cols.push(Arc::new(Int32Array::from(y)));
        }
        RecordBatch::try_new(Arc::new(Schema::new(fields)), cols).unwrap()
    };
    // 2020-06-01, 2021-06-01, 2022-06-01, 2023-06-01 at noon UTC.
    let day_us = |days: i64| days * 86_400_000_000 + 12 * 3_600_000_000;
    let days = [18_414i64, 18_779, 19_144, 19_509];
    append(
        &t,
        ts_batch(days.iter().map(|d| day_us(*d)).collect(), None),
    )
    .unwrap();
    let got = ScanBuilder::new(t.snapshot().unwrap())
        .with_columns(["y", "m", "dd"])
        .build()
        .unwrap()
        .execute_to_vec()
        .unwrap();
    assert_eq!(
        canon_rows(&got),
        [
            "2020 | 6 | 1",
            "2021 | 6 | 1",
            "2022 | 6 | 1",
            "2023 | 6 | 1"
        ]
    );
    let e = append(&t, ts_batch(vec![day_us(19_509)], Some(vec![2022]))).unwrap_err();
    assert!(
        matches!(e, alluvium::Error::GeneratedColumnMismatch { .. }),
        "{e}"
    );
    let scan = |filter: &str| files_and_rows(&t, filter);
    assert_eq!(scan("ts >= '2022-01-15 00:00:00'"), (2, 2));
    assert_eq!(scan("ts < '2021-03-01 00:00:00'"), (2, 1));
}

#[test]
fn a_default_alluvium_cannot_evaluate_refuses_writes() {
    for default in ["current_timestamp()", "id + 1"] {
        let t = table(
            &[
                field("id", "long", true, ""),
                field(
                    "at",
                    "long",
                    true,
                    &format!(r#""CURRENT_DEFAULT":"{default}""#),
                ),
            ]
            .join(","),
            &[],
        );
        let e = append(&t, longs(&[("id", vec![Some(1)])])).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unsupported, "{default}: {e}");
        assert!(e.to_string().contains("`at`"), "{e}");
    }
}

#[test]
fn delete_and_update_skip_files_through_generated_partition_columns() {
    let dir = tempfile::tempdir().unwrap();
    let loc = dir.path().join("t");
    let t = partitioned_by_generated_in(Table::open(loc.to_str().unwrap()).unwrap());
    // Damage the first day's file: an operation that reads it fails, so success proves
    // the derived partition terms kept it out of the candidates.
    let first = t
        .snapshot()
        .unwrap()
        .files()
        .find(|a| a.partition_values().get("d") == Some(Some("2022-01-08")))
        .unwrap()
        .path()
        .to_string();
    let decoded = first.replace("%3A", ":").replace("%20", " ");
    std::fs::write(loc.join(&decoded), b"not parquet").unwrap();
    t.update_str(
        "g = g + 100",
        Some("ts >= '2022-01-12 00:00:00'"),
        &WriteOptions::default(),
    )
    .unwrap();
    t.delete_str("ts > '2022-01-12 06:00:00'", &WriteOptions::default())
        .unwrap();
    // Without the derived terms the damaged file is read.
    assert!(
        t.delete_str("ts IS NULL", &WriteOptions::default())
            .is_err(),
        "the damaged file is read when nothing excludes it"
    );
}
