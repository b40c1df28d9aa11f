//! UPDATE: results against an independently computed model on every table flavour (DVs
//! on and off, partitioned or not), the commit's operation, parameters and metrics, type
//! checks before any file is written, and the conflict with a concurrent DELETE.

use alluvium::{ConflictKind, ErrorKind, Expr, Table, WriteOptions, parse_expr};

use crate::dml_common::*;

fn data_files(t: &Table) -> usize {
    t.store()
        .list_tree(None)
        .unwrap()
        .iter()
        .filter(|m| m.path.as_str().ends_with(".parquet"))
        .count()
}

#[test]
fn update_matches_the_model_on_every_flavour() {
    for f in FLAVOURS {
        let (t, mut model) = table(f);
        let done = t
            .update_str(
                "v = v * 10 + 1, k = 'x'",
                Some("id % 2 = 0"),
                &WriteOptions::default(),
            )
            .unwrap();
        for r in model.iter_mut().filter(|r| r.0 % 2 == 0) {
            r.2 = r.2.map(|v| v * 10 + 1);
            r.1 = Some("x".into());
        }
        model.sort();
        assert_eq!(rows(&t), model, "{f:?}");
        assert_eq!(done.metric("numUpdatedRows"), Some(15), "{f:?}");
        assert_eq!(
            has_dv(&t),
            f.dv,
            "{f:?}: DVs exactly when the table enables them"
        );
        if f.dv {
            assert_eq!(done.metric("numCopiedRows"), Some(0), "{f:?}");
            assert!(done.metric("numDeletionVectorsAdded").unwrap() > 0, "{f:?}");
        } else {
            assert_eq!(done.metric("numDeletionVectorsAdded"), Some(0), "{f:?}");
        }
        let ci = last_commit_info(&t);
        assert_eq!(ci.operation(), Some("UPDATE"));
        let params = ci.operation_parameters().unwrap();
        assert_eq!(params["predicate"], "[\"id % 2 = 0\"]");
        let metrics = &ci.0["operationMetrics"];
        assert_eq!(metrics["numUpdatedRows"], "15");
        for k in [
            "numCopiedRows",
            "numAddedFiles",
            "numRemovedFiles",
            "numDeletionVectorsAdded",
            "executionTimeMs",
            "scanTimeMs",
            "rewriteTimeMs",
        ] {
            assert!(metrics.get(k).is_some(), "{f:?}: missing {k}");
        }
        // A second update on top of the first (and of its DVs).
        t.update(
            [("v", parse_expr("coalesce(v, 0) - id").unwrap())],
            Some(&parse_expr("k = 'x' OR id < 2").unwrap()),
            &WriteOptions::default(),
        )
        .unwrap();
        for r in model
            .iter_mut()
            .filter(|r| r.1.as_deref() == Some("x") || r.0 < 2)
        {
            r.2 = Some(r.2.unwrap_or(0) - r.0);
        }
        assert_eq!(rows(&t), model, "{f:?}: second update");
    }
}

#[test]
fn update_without_a_predicate_changes_every_row() {
    let (t, mut model) = table(FLAVOURS[1]);
    let done = t
        .update_str("v = NULL", None, &WriteOptions::default())
        .unwrap();
    assert_eq!(done.metric("numUpdatedRows"), Some(30));
    for r in &mut model {
        r.2 = None;
    }
    assert_eq!(rows(&t), model);
}

#[test]
fn an_update_matching_nothing_commits_no_file_actions() {
    let (t, model) = table(FLAVOURS[0]);
    let before = t.snapshot().unwrap().version();
    let done = t
        .update_str("v = 0", Some("id > 1000"), &WriteOptions::default())
        .unwrap();
    let r = done.outcome.report().unwrap();
    assert_eq!(r.version, before + 1);
    assert_eq!((r.files_added, r.files_removed), (0, 0));
    assert_eq!(rows(&t), model);
}

#[test]
fn types_and_names_are_checked_before_any_file_is_written() {
    let (t, model) = table(FLAVOURS[1]);
    let version = t.snapshot().unwrap().version();
    let files = data_files(&t);
    for (set, filter) in [
        ("v = 'text'", None),
        ("nope = 1", None),
        ("v = nope + 1", None),
        ("v = 1, V = 2", None),
        ("v = 1", Some("nope = 1")),
        ("v = ", None),
    ] {
        let e = t
            .update_str(set, filter, &WriteOptions::default())
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidInput, "{set}: {e}");
    }
    assert_eq!(t.snapshot().unwrap().version(), version);
    assert_eq!(data_files(&t), files, "no file written");
    assert_eq!(rows(&t), model);
}

#[test]
fn overflow_fails_the_update_and_commits_nothing() {
    let (t, model) = table(FLAVOURS[0]);
    let version = t.snapshot().unwrap().version();
    let e = t
        .update_str(
            "v = v * 9223372036854775807",
            Some("id > 3"),
            &WriteOptions::default(),
        )
        .unwrap_err();
    assert!(e.to_string().to_lowercase().contains("overflow"), "{e}");
    assert_eq!(t.snapshot().unwrap().version(), version);
    assert_eq!(rows(&t), model);
}

#[test]
fn updating_the_partition_column_moves_rows_between_partitions() {
    let (t, mut model) = table(FLAVOURS[3]);
    t.update_str(
        "k = 'z'",
        Some("k = 'a' AND id < 10"),
        &WriteOptions::default(),
    )
    .unwrap();
    for r in model
        .iter_mut()
        .filter(|r| r.1.as_deref() == Some("a") && r.0 < 10)
    {
        r.1 = Some("z".into());
    }
    model.sort();
    assert_eq!(rows(&t), model);
    let z = t
        .snapshot()
        .unwrap()
        .files()
        .filter(|a| a.partition_values().get("k").flatten() == Some("z"))
        .count();
    assert!(z >= 1);
}

#[test]
fn update_conflicts_with_a_concurrent_delete_of_the_same_file() {
    for f in [FLAVOURS[0], FLAVOURS[1]] {
        let (t, model) = table(f);
        let read = t.snapshot().unwrap();
        t.delete_str("id = 1", &WriteOptions::default()).unwrap();
        let pinned = WriteOptions::default().with_read_snapshot(read);
        let e = t.update_str("v = 0", Some("id = 2"), &pinned).unwrap_err();
        // The DELETE also re-adds the file (with a DV, or its other rows rewritten) inside the
        // read set, which the checker reports first, as Delta's does (SPEC.md §7).
        assert_eq!(
            e.conflict_kind(),
            Some(ConflictKind::ConcurrentAppend),
            "{f:?}: {e}"
        );
        // An update of another file than the one the delete touched goes through.
        let read = t.snapshot().unwrap();
        t.delete_str("id = 25", &WriteOptions::default()).unwrap();
        t.update_str(
            "v = 0",
            Some("id = 2"),
            &WriteOptions::default().with_read_snapshot(read),
        )
        .unwrap();
        let expected: Vec<Row> = model
            .iter()
            .filter(|r| r.0 != 1 && r.0 != 25)
            .map(|r| {
                if r.0 == 2 {
                    (r.0, r.1.clone(), Some(0))
                } else {
                    r.clone()
                }
            })
            .collect();
        assert_eq!(rows(&t), expected, "{f:?}");
    }
}

#[test]
fn the_typed_api_takes_expressions() {
    let (t, mut model) = table(FLAVOURS[0]);
    let e: Expr = parse_expr("CASE WHEN id < 5 THEN 1 ELSE 2 END").unwrap();
    t.update([("v", e)], None, &WriteOptions::default())
        .unwrap();
    for r in &mut model {
        r.2 = Some(if r.0 < 5 { 1 } else { 2 });
    }
    assert_eq!(rows(&t), model);
}
