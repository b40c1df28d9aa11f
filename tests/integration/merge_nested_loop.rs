//! MERGE whose ON condition has no `t.col = s.col` equality (SPEC §23 M3: a nested-loop
//! join, the ON predicate evaluated on the cross product in bounded chunks): each ON form
//! (`<`, `TRUE`, a source-only condition, an arithmetic equality, an OR, and a key with a
//! residual for comparison) and three clause sets are run on every table flavour, with and
//! without the change data feed, and compared with the result a naive nested loop over the
//! model computes here: the final rows, the recorded changes, and the cardinality rule.

use std::collections::HashMap;

use alluvium::{Error, Table, VersionSpec, WriteOptions};
use arrow::array::{Array, Int64Array, RecordBatch, StringArray};

use crate::dml_common::*;

/// A source row: id, k, v, op.
type Src = (i64, &'static str, i64, &'static str);
/// A change: the row and its `_change_type`.
type Change = (Row, String);
/// An ON condition as the model evaluates it (SQL: a pair matches when it is TRUE).
type On = fn(&Row, &Src) -> bool;

/// A table of the flavour with ids 0..30 in three files, the change data feed on or off.
fn target(f: Flavour, cdf: bool) -> (Table, Vec<Row>) {
    let t = Table::in_memory();
    let mut props: HashMap<String, String> = HashMap::new();
    if f.dv {
        props.insert("delta.enableDeletionVectors".into(), "true".into());
    }
    if cdf {
        props.insert("delta.enableChangeDataFeed".into(), "true".into());
    }
    let parts: Vec<String> = if f.partitioned {
        vec!["k".into()]
    } else {
        vec![]
    };
    t.create(&schema(), &parts, &props).unwrap();
    let mut all = Vec::new();
    for i in 0..3 {
        let rows: Vec<Row> = (i * 10..(i + 1) * 10).map(row).collect();
        t.append([batch(&rows)], &WriteOptions::default()).unwrap();
        all.extend(rows);
    }
    all.sort();
    (t, all)
}

/// What the model says a MERGE does: the final rows and the changes, or a cardinality
/// violation (nothing changes).
#[derive(Debug, PartialEq)]
enum Expected {
    Done(Vec<Row>, Vec<Change>),
    Violation,
}

fn src_row(s: &Src) -> Row {
    (s.0, Some(s.1.to_string()), Some(s.2))
}

fn change(r: Row, kind: &str) -> Change {
    (r, kind.to_string())
}

/// The clause sets, in SQL, with their model.
struct ClauseSet {
    name: &'static str,
    clauses: &'static [&'static str],
    /// Applies the clauses given each target row's matching source rows; `None` on a
    /// cardinality violation.
    model: fn(&[Row], &[Src], On) -> Expected,
}

fn matches<'a>(t: &Row, source: &'a [Src], on: On) -> Vec<&'a Src> {
    source.iter().filter(|s| on(t, s)).collect()
}

fn unmatched<'a>(target: &[Row], source: &'a [Src], on: On) -> Vec<&'a Src> {
    source
        .iter()
        .filter(|s| !target.iter().any(|t| on(t, s)))
        .collect()
}

/// `MATCHED THEN UPDATE SET v = s.v`, `NOT MATCHED THEN INSERT *`,
/// `NOT MATCHED BY SOURCE AND t.id >= 25 THEN DELETE`.
fn model_upsert(target: &[Row], source: &[Src], on: On) -> Expected {
    let (mut rows, mut changes) = (Vec::new(), Vec::new());
    for t in target {
        match matches(t, source, on).as_slice() {
            [] if t.0 >= 25 => changes.push(change(t.clone(), "delete")),
            [] => rows.push(t.clone()),
            [s] => {
                let new = (t.0, t.1.clone(), Some(s.2));
                changes.push(change(t.clone(), "update_preimage"));
                changes.push(change(new.clone(), "update_postimage"));
                rows.push(new);
            }
            _ => return Expected::Violation,
        }
    }
    for s in unmatched(target, source, on) {
        rows.push(src_row(s));
        changes.push(change(src_row(s), "insert"));
    }
    rows.sort();
    changes.sort();
    Expected::Done(rows, changes)
}

/// `MATCHED THEN DELETE` (several matches allowed), `NOT MATCHED THEN INSERT *`.
fn model_delete(target: &[Row], source: &[Src], on: On) -> Expected {
    let (mut rows, mut changes) = (Vec::new(), Vec::new());
    for t in target {
        if matches(t, source, on).is_empty() {
            rows.push(t.clone());
        } else {
            changes.push(change(t.clone(), "delete"));
        }
    }
    for s in unmatched(target, source, on) {
        rows.push(src_row(s));
        changes.push(change(src_row(s), "insert"));
    }
    rows.sort();
    changes.sort();
    Expected::Done(rows, changes)
}

/// `MATCHED AND s.op = 'D' THEN DELETE`, `MATCHED THEN UPDATE SET v = t.v + s.v`,
/// `NOT MATCHED BY SOURCE AND t.id < 3 THEN UPDATE SET v = -1`.
fn model_conditional(target: &[Row], source: &[Src], on: On) -> Expected {
    let (mut rows, mut changes) = (Vec::new(), Vec::new());
    for t in target {
        match matches(t, source, on).as_slice() {
            [] if t.0 < 3 => {
                let new = (t.0, t.1.clone(), Some(-1));
                changes.push(change(t.clone(), "update_preimage"));
                changes.push(change(new.clone(), "update_postimage"));
                rows.push(new);
            }
            [] => rows.push(t.clone()),
            [s] if s.3 == "D" => changes.push(change(t.clone(), "delete")),
            [s] => {
                let new = (t.0, t.1.clone(), t.2.map(|v| v + s.2));
                changes.push(change(t.clone(), "update_preimage"));
                changes.push(change(new.clone(), "update_postimage"));
                rows.push(new);
            }
            _ => return Expected::Violation,
        }
    }
    rows.sort();
    changes.sort();
    Expected::Done(rows, changes)
}

const CLAUSE_SETS: [ClauseSet; 3] = [
    ClauseSet {
        name: "upsert",
        clauses: &[
            "MATCHED THEN UPDATE SET v = s.v",
            "NOT MATCHED THEN INSERT *",
            "NOT MATCHED BY SOURCE AND t.id >= 25 THEN DELETE",
        ],
        model: model_upsert,
    },
    ClauseSet {
        name: "delete",
        clauses: &["MATCHED THEN DELETE", "NOT MATCHED THEN INSERT *"],
        model: model_delete,
    },
    ClauseSet {
        name: "conditional",
        clauses: &[
            "MATCHED AND s.op = 'D' THEN DELETE",
            "MATCHED THEN UPDATE SET v = t.v + s.v",
            "NOT MATCHED BY SOURCE AND t.id < 3 THEN UPDATE SET v = -1",
        ],
        model: model_conditional,
    },
];

/// The ON forms: SQL, the model's predicate, and a source.
fn on_forms() -> Vec<(&'static str, On, Vec<Src>)> {
    vec![
        // t0 alone matches s1; s-5 matches nothing.
        (
            "t.id < s.id",
            |t, s| t.0 < s.0,
            vec![(1, "b", 111, "U"), (-5, "a", 5, "U")],
        ),
        // t0 and t1 match both source rows (a violation for the updating sets).
        (
            "t.id <= s.id",
            |t, s| t.0 <= s.0,
            vec![(1, "b", 111, "U"), (2, "c", 222, "D")],
        ),
        // Every target row matches the one source row.
        ("TRUE", |_, _| true, vec![(50, "c", 5, "U")]),
        // Every target row matches both.
        (
            "TRUE",
            |_, _| true,
            vec![(50, "c", 5, "U"), (51, "a", 6, "U")],
        ),
        // s1 matches every target row, s50 none.
        (
            "s.id = 1",
            |_, s| s.0 == 1,
            vec![(1, "a", 7, "D"), (50, "c", 8, "U")],
        ),
        (
            "t.id = s.id + 0",
            |t, s| t.0 == s.0,
            vec![(5, "b", 55, "U"), (17, "c", 77, "D"), (99, "a", 9, "U")],
        ),
        // s3 matches t3 by id, s50 matches t7 by v, s60 nothing.
        (
            "t.id = s.id OR t.v = s.v",
            |t, s| t.0 == s.0 || t.2 == Some(s.2),
            vec![(3, "a", 999, "U"), (50, "b", 70, "D"), (60, "c", 1, "U")],
        ),
        // t3 matches s3 by id and s40 by v: a violation for the updating sets.
        (
            "t.id = s.id OR t.v = s.v",
            |t, s| t.0 == s.0 || t.2 == Some(s.2),
            vec![(3, "a", 999, "U"), (40, "b", 30, "U")],
        ),
        // A hash key with a residual (the same pairs through the index).
        (
            "t.id = s.id AND t.id < s.v",
            |t, s| t.0 == s.0 && t.0 < s.2,
            vec![(4, "a", 10, "U"), (6, "a", 1, "U")],
        ),
    ]
}

/// The change feed of `version`, sorted.
fn feed(t: &Table, version: u64) -> Vec<Change> {
    let batches = t
        .changes(VersionSpec::Version(version), None)
        .execute_to_vec()
        .unwrap();
    let mut out = Vec::new();
    for b in &batches {
        out.extend(change_rows(b));
    }
    out.sort();
    out
}

fn change_rows(b: &RecordBatch) -> Vec<Change> {
    let cast = |n: &str| {
        arrow::compute::cast(
            b.column_by_name(n).unwrap(),
            &arrow::datatypes::DataType::Utf8,
        )
        .unwrap()
    };
    let id = b.column_by_name("id").unwrap();
    let id = id.as_any().downcast_ref::<Int64Array>().unwrap();
    let v = b.column_by_name("v").unwrap();
    let v = v.as_any().downcast_ref::<Int64Array>().unwrap();
    let (k, ct) = (cast("k"), cast("_change_type"));
    let k = k.as_any().downcast_ref::<StringArray>().unwrap();
    let ct = ct.as_any().downcast_ref::<StringArray>().unwrap();
    (0..b.num_rows())
        .map(|i| {
            (
                (
                    id.value(i),
                    k.is_valid(i).then(|| k.value(i).to_string()),
                    v.is_valid(i).then(|| v.value(i)),
                ),
                ct.value(i).to_string(),
            )
        })
        .collect()
}

#[test]
fn merges_without_an_equality_key_match_a_nested_loop_model_on_every_flavour() {
    for (on_sql, on, src) in on_forms() {
        for set in &CLAUSE_SETS {
            for f in FLAVOURS {
                for cdf in [false, true] {
                    let what = format!("ON {on_sql} / {} / {f:?} / cdf {cdf}", set.name);
                    let (t, model) = target(f, cdf);
                    let before = t.snapshot().unwrap().version();
                    let mut m = t.merge([source(&src)], on_sql);
                    for c in set.clauses {
                        m = m.when(c);
                    }
                    let got = m.execute(&WriteOptions::default());
                    match (set.model)(&model, &src, on) {
                        Expected::Violation => {
                            assert!(
                                matches!(got, Err(Error::MergeCardinalityViolation { .. })),
                                "{what}: {got:?}"
                            );
                            assert_eq!(t.snapshot().unwrap().version(), before, "{what}");
                            assert_eq!(rows(&t), model, "{what}");
                        }
                        Expected::Done(want_rows, want_changes) => {
                            let done = got.unwrap_or_else(|e| panic!("{what}: {e}"));
                            assert_eq!(rows(&t), want_rows, "{what}");
                            assert_eq!(done.metric("numSourceRows"), Some(src.len() as u64));
                            let inserted = want_changes.iter().filter(|c| c.1 == "insert").count();
                            assert_eq!(
                                done.metric("numTargetRowsInserted"),
                                Some(inserted as u64),
                                "{what}"
                            );
                            if cdf {
                                let v = t.snapshot().unwrap().version();
                                assert_eq!(feed(&t, v), want_changes, "{what}");
                            }
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn a_nested_loop_merge_larger_than_one_chunk_pairs_every_row() {
    // 3 000 target rows against 50 source rows: 150 000 candidate pairs, more than one
    // chunk of the cross product; `t.id >= s.id * 60 AND t.id < s.id * 60 + 60` gives each
    // target row exactly one source row.
    let t = Table::in_memory();
    t.create(&schema(), &[], alluvium::NO_PROPERTIES).unwrap();
    let model: Vec<Row> = (0..3000).map(row).collect();
    t.append([batch(&model)], &WriteOptions::default()).unwrap();
    let src: Vec<Src> = (0..50).map(|i| (i, "a", i, "U")).collect();
    let done = t
        .merge(
            [source(&src)],
            "t.id >= s.id * 60 AND t.id < s.id * 60 + 60",
        )
        .when("MATCHED THEN UPDATE SET v = s.v")
        .execute(&WriteOptions::default())
        .unwrap();
    assert_eq!(done.metric("numTargetRowsUpdated"), Some(3000));
    let want: Vec<Row> = model
        .iter()
        .map(|r| (r.0, r.1.clone(), Some(r.0 / 60)))
        .collect();
    assert_eq!(rows(&t), want);
}
