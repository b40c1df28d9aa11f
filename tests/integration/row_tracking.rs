//! Row tracking (SPEC.md §27, PROTOCOL.md "Row Tracking"): fresh row ids and commit
//! versions assigned at commit time, the high-water mark, preservation through OPTIMIZE,
//! DELETE, UPDATE and MERGE, enabling with a backfill, and concurrent writers.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use alluvium::{InMemoryStore, OptimizeOptions, ScanBuilder, Table, WriteOptions, parse_expr};
use alluvium_mvcc::Transaction;
use alluvium_txlog::actions::Add;
use alluvium_txlog::row_tracking as rt;
use arrow::array::{Array, Int64Array, RecordBatch};

use crate::dml_common::{Row, batch, row, schema, source};

fn enabled_props(dv: bool) -> HashMap<String, String> {
    let mut p = HashMap::new();
    p.insert(rt::ENABLE.to_string(), "true".to_string());
    if dv {
        p.insert(
            "delta.enableDeletionVectors".to_string(),
            "true".to_string(),
        );
    }
    p
}

/// A row-tracking table of `files` appends of `per_file` rows (ids 0.., in order).
fn tracked_table(dv: bool, files: i64, per_file: i64) -> Table {
    let t = Table::from_store(Arc::new(InMemoryStore::new()));
    t.create(&schema(), &[], &enabled_props(dv)).unwrap();
    for i in 0..files {
        let rows: Vec<Row> = (i * per_file..(i + 1) * per_file).map(row).collect();
        t.append([batch(&rows)], &WriteOptions::default()).unwrap();
    }
    t
}

/// id -> (row_id, row_commit_version) of every live row, read with the scan option.
fn tracked_rows(t: &Table) -> BTreeMap<i64, (i64, i64)> {
    let scan = ScanBuilder::new(t.snapshot().unwrap())
        .with_columns(["id"])
        .with_row_tracking(true)
        .build()
        .unwrap();
    let names: Vec<String> = scan
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(names, ["id", "row_id", "row_commit_version"]);
    let mut out = BTreeMap::new();
    for b in scan.execute_to_vec().unwrap() {
        let col = |i: usize| b.column(i).as_any().downcast_ref::<Int64Array>().unwrap();
        let (id, rid, cv) = (col(0), col(1), col(2));
        for i in 0..b.num_rows() {
            assert!(
                rid.is_valid(i) && cv.is_valid(i),
                "row {} lacks ids",
                id.value(i)
            );
            out.insert(id.value(i), (rid.value(i), cv.value(i)));
        }
    }
    out
}

fn live_adds(t: &Table) -> Vec<Add> {
    let mut v: Vec<Add> = t.snapshot().unwrap().files().map(|f| f.to_add()).collect();
    v.sort_by_key(|a| a.base_row_id);
    v
}

fn mark(t: &Table) -> Option<i64> {
    rt::high_water_mark(t.snapshot().unwrap().domains()).unwrap()
}

fn version(t: &Table) -> i64 {
    t.snapshot().unwrap().version() as i64
}

fn assert_unique(rows: &BTreeMap<i64, (i64, i64)>) {
    let ids: HashSet<i64> = rows.values().map(|v| v.0).collect();
    assert_eq!(ids.len(), rows.len(), "row ids are not unique: {rows:?}");
}

#[test]
fn enabling_on_create_lists_the_features_and_names_the_hidden_columns() {
    let t = tracked_table(false, 0, 0);
    let snap = t.snapshot().unwrap();
    let p = snap.protocol();
    assert_eq!(p.min_writer_version, 7);
    assert!(p.has_writer_feature("rowTracking"));
    assert!(p.has_writer_feature("domainMetadata"));
    let cols = rt::materialized_columns(&snap.metadata().configuration).unwrap();
    assert!(cols.row_id.starts_with(rt::ROW_ID_COLUMN_PREFIX));
    assert!(
        cols.row_commit_version
            .starts_with(rt::ROW_COMMIT_VERSION_COLUMN_PREFIX)
    );
}

#[test]
fn appends_get_fresh_contiguous_ids_and_the_commit_version_and_advance_the_mark() {
    let t = tracked_table(false, 3, 10);
    let adds = live_adds(&t);
    let got: Vec<(Option<i64>, Option<i64>)> = adds
        .iter()
        .map(|a| (a.base_row_id, a.default_row_commit_version))
        .collect();
    assert_eq!(
        got,
        vec![(Some(0), Some(1)), (Some(10), Some(2)), (Some(20), Some(3))]
    );
    assert_eq!(mark(&t), Some(29));
    let rows = tracked_rows(&t);
    // Appended in id order, one file per append: the default row id is the id itself.
    for (id, (rid, cv)) in &rows {
        assert_eq!(rid, id);
        assert_eq!(*cv, id / 10 + 1);
    }
}

#[test]
fn supported_but_not_enabled_still_assigns_ids_but_scans_refuse_them() {
    let t = Table::from_store(Arc::new(InMemoryStore::new()));
    let mut props = HashMap::new();
    props.insert(
        "delta.feature.rowTracking".to_string(),
        "supported".to_string(),
    );
    t.create(&schema(), &[], &props).unwrap();
    t.append([batch(&[row(1), row(2)])], &WriteOptions::default())
        .unwrap();
    let snap = t.snapshot().unwrap();
    assert!(snap.protocol().has_writer_feature("domainMetadata"));
    let adds = live_adds(&t);
    assert_eq!(adds[0].base_row_id, Some(0));
    assert_eq!(adds[0].default_row_commit_version, Some(1));
    assert_eq!(mark(&t), Some(1));
    let err = ScanBuilder::new(snap)
        .with_row_tracking(true)
        .build()
        .unwrap_err();
    assert!(
        matches!(
            err,
            alluvium::Error::RowTrackingNotEnabled { version: 1, .. }
        ),
        "{err}"
    );
}

#[test]
fn suspended_row_tracking_assigns_nothing() {
    let t = Table::from_store(Arc::new(InMemoryStore::new()));
    let mut props = HashMap::new();
    props.insert(
        "delta.feature.rowTracking".to_string(),
        "supported".to_string(),
    );
    props.insert(rt::SUSPENDED.to_string(), "true".to_string());
    t.create(&schema(), &[], &props).unwrap();
    t.append([batch(&[row(1)])], &WriteOptions::default())
        .unwrap();
    assert_eq!(live_adds(&t)[0].base_row_id, None);
    assert_eq!(mark(&t), None);
    // Enabling while suspended is refused (PROTOCOL.md: not both).
    let err = t.set_properties([(rt::ENABLE, "true")], &[]).unwrap_err();
    assert!(err.to_string().contains(rt::SUSPENDED), "{err}");
}

/// A transaction built on a stale snapshot loses to a commit that handed out ids: on the
/// retry its file gets ids above the winner's mark and the version it lands at.
#[test]
fn a_retried_commit_rebases_ids_over_the_winner_and_takes_the_landed_version() {
    let t = tracked_table(false, 1, 10);
    let stale = t.snapshot().unwrap();
    t.append(
        [batch(&[row(100), row(101), row(102)])],
        &WriteOptions::default(),
    )
    .unwrap();
    assert_eq!(mark(&t), Some(12));
    let mut txn = Transaction::new(&crate::mvcc(&stale), "WRITE");
    txn.set_discard_on_failure(false);
    txn.add_file(Add {
        path: "not-read-by-this-test.parquet".into(),
        size: 1,
        stats: Some(r#"{"numRecords":5}"#.into()),
        ..Add::default()
    });
    let report = txn.commit().unwrap();
    assert_eq!(report.version, 3);
    assert_eq!(report.attempts, 2);
    let snap = t.snapshot().unwrap();
    let ours = snap
        .files()
        .find(|a| a.path() == "not-read-by-this-test.parquet")
        .unwrap();
    assert_eq!(ours.base_row_id(), Some(13));
    assert_eq!(ours.default_row_commit_version(), Some(3));
    assert_eq!(mark(&t), Some(17));
}

#[test]
fn a_staged_row_tracking_domain_is_replaced_by_the_commit_loops_own() {
    let t = tracked_table(false, 1, 4);
    let mut txn = Transaction::new(&crate::mvcc(&t.snapshot().unwrap()), "WRITE");
    txn.set_domain(rt::domain(1_000_000));
    txn.add_file(Add {
        path: "x.parquet".into(),
        size: 1,
        stats: Some(r#"{"numRecords":2}"#.into()),
        ..Add::default()
    });
    txn.set_discard_on_failure(false);
    txn.commit().unwrap();
    assert_eq!(mark(&t), Some(5));
}

#[test]
fn optimize_keeps_every_rows_id_and_commit_version() {
    let t = tracked_table(false, 3, 10);
    let before = tracked_rows(&t);
    let done = t.optimize(&OptimizeOptions::default()).unwrap();
    assert_eq!(done.report.files_added, 1, "{:?}", done.report);
    let v = version(&t);
    let adds = live_adds(&t);
    assert_eq!(adds.len(), 1);
    // The rewritten file has fresh default ids (above the old mark) and the new version;
    // the stable values come from its materialised columns.
    assert_eq!(adds[0].base_row_id, Some(30));
    assert_eq!(adds[0].default_row_commit_version, Some(v));
    assert_eq!(mark(&t), Some(59));
    assert_eq!(tracked_rows(&t), before);
    assert_clean(&t);
}

/// A deep `verify` finds nothing wrong (the hidden columns and their statistics included).
fn assert_clean(t: &Table) {
    let report = t
        .verify(
            &alluvium::VerifyOptions::default()
                .with_version(None)
                .with_deep(true),
        )
        .unwrap();
    assert!(report.is_clean(), "{:?}", report.findings);
}

#[test]
fn delete_keeps_the_ids_of_the_rows_it_copies() {
    for dv in [false, true] {
        let t = tracked_table(dv, 3, 10);
        let mut expected = tracked_rows(&t);
        t.delete(&parse_expr("id % 4 = 0").unwrap(), &WriteOptions::default())
            .unwrap();
        expected.retain(|id, _| id % 4 != 0);
        assert_eq!(tracked_rows(&t), expected, "dv={dv}");
    }
}

#[test]
fn update_keeps_row_ids_and_gives_updated_rows_the_new_commit_version() {
    for dv in [false, true] {
        let t = tracked_table(dv, 3, 10);
        let before = tracked_rows(&t);
        t.update_str("v = v + 1", Some("id % 3 = 1"), &WriteOptions::default())
            .unwrap();
        let v = version(&t);
        let after = tracked_rows(&t);
        assert_eq!(after.len(), before.len());
        for (id, (rid, cv)) in &after {
            let (old_rid, old_cv) = before[id];
            assert_eq!(*rid, old_rid, "dv={dv} id={id}: row id changed");
            if id % 3 == 1 {
                assert_eq!(*cv, v, "dv={dv} id={id}: updated row");
            } else {
                assert_eq!(*cv, old_cv, "dv={dv} id={id}: copied row");
            }
        }
        assert_unique(&after);
    }
}

#[test]
fn merge_keeps_updated_rows_ids_and_gives_inserts_fresh_ones() {
    for dv in [false, true] {
        let t = tracked_table(dv, 3, 10);
        let before = tracked_rows(&t);
        let old_mark = mark(&t).unwrap();
        let src = source(&[
            (1, "b", 111, "u"),
            (12, "a", 222, "u"),
            (5, "c", 0, "d"),
            (40, "b", 400, "u"),
            (41, "c", 410, "u"),
        ]);
        t.merge([src], "t.id = s.id")
            .when("MATCHED AND s.op = 'd' THEN DELETE")
            .when("MATCHED THEN UPDATE SET v = s.v")
            .when("NOT MATCHED THEN INSERT *")
            .execute(&WriteOptions::default())
            .unwrap();
        let v = version(&t);
        let after = tracked_rows(&t);
        assert!(!after.contains_key(&5));
        for (id, (rid, cv)) in &after {
            match id {
                1 | 12 => {
                    assert_eq!(*rid, before[id].0, "dv={dv} id={id}");
                    assert_eq!(*cv, v, "dv={dv} id={id}");
                }
                40 | 41 => {
                    assert!(*rid > old_mark, "dv={dv} id={id}: insert got {rid}");
                    assert_eq!(*cv, v, "dv={dv} id={id}");
                }
                _ => assert_eq!((*rid, *cv), before[id], "dv={dv} id={id}"),
            }
        }
        assert_unique(&after);
        assert_clean(&t);
    }
}

#[test]
fn enabling_on_a_table_with_files_backfills_their_ids() {
    let t = Table::from_store(Arc::new(InMemoryStore::new()));
    t.create(&schema(), &[], alluvium::NO_PROPERTIES).unwrap();
    for i in 0..2 {
        let rows: Vec<Row> = (i * 5..(i + 1) * 5).map(row).collect();
        t.append([batch(&rows)], &WriteOptions::default()).unwrap();
    }
    t.set_properties([(rt::ENABLE, "true")], &[]).unwrap();
    let v = version(&t);
    let snap = t.snapshot().unwrap();
    assert!(snap.protocol().has_writer_feature("rowTracking"));
    assert!(snap.protocol().has_writer_feature("domainMetadata"));
    assert_eq!(snap.num_files(), 2);
    for a in snap.files() {
        assert!(a.base_row_id().is_some(), "{} not backfilled", a.path());
        assert_eq!(a.default_row_commit_version(), Some(v));
    }
    assert_eq!(mark(&t), Some(9));
    let rows = tracked_rows(&t);
    assert_eq!(rows.len(), 10);
    assert_unique(&rows);
    // The data is unchanged.
    assert_eq!(crate::dml_common::rows(&t).len(), 10);
}

#[test]
fn enabling_by_hand_without_backfill_is_refused() {
    let t = Table::from_store(Arc::new(InMemoryStore::new()));
    t.create(&schema(), &[], alluvium::NO_PROPERTIES).unwrap();
    t.append([batch(&[row(1)])], &WriteOptions::default())
        .unwrap();
    let snap = t.snapshot().unwrap();
    let mut md = snap.metadata().clone();
    md.configuration
        .insert(rt::ENABLE.to_string(), "true".to_string());
    rt::assign_materialized_columns(&mut md.configuration);
    let mut txn = Transaction::new(&crate::mvcc(&snap), "SET TBLPROPERTIES");
    txn.set_protocol(alluvium_txlog::features::upgrade_protocol(
        snap.protocol(),
        &[
            alluvium_txlog::table::TableFeature::DomainMetadata,
            alluvium_txlog::table::TableFeature::RowTracking,
        ],
    ));
    txn.set_metadata(md);
    let err = txn.commit().unwrap_err();
    assert!(err.to_string().contains("no baseRowId"), "{err}");
}

/// Eight writers appending at once on the local store: every row id is handed out once.
#[test]
fn eight_concurrent_writers_never_share_a_row_id() {
    let dir = tempfile::tempdir().unwrap();
    let location = dir.path().join("t");
    let location = location.to_str().unwrap().to_string();
    let t = Table::open(&location).unwrap();
    t.create(&schema(), &[], &enabled_props(false)).unwrap();
    let (writers, commits, rows_per) = (8i64, 10i64, 3i64);
    std::thread::scope(|s| {
        for w in 0..writers {
            let location = location.clone();
            s.spawn(move || {
                let t = Table::open(&location).unwrap();
                for c in 0..commits {
                    let base = (w * commits + c) * rows_per;
                    let rows: Vec<Row> = (base..base + rows_per).map(row).collect();
                    t.append([batch(&rows)], &WriteOptions::default())
                        .unwrap_or_else(|e| panic!("writer {w} commit {c}: {e}"));
                }
            });
        }
    });
    let t = Table::open(&location).unwrap();
    let total = writers * commits * rows_per;
    let rows = tracked_rows(&t);
    assert_eq!(rows.len() as i64, total);
    assert_unique(&rows);
    let ids: Vec<i64> = rows.values().map(|v| v.0).collect();
    assert_eq!(ids.iter().min(), Some(&0));
    assert_eq!(ids.iter().max(), Some(&(total - 1)));
    assert_eq!(mark(&t), Some(total - 1));
    // Each file's commit version is the version holding its add.
    for a in live_adds(&t) {
        let v = a.default_row_commit_version.unwrap();
        let at = t.snapshot_at(alluvium::VersionSpec::Version(v as u64));
        let prev = t.snapshot_at(alluvium::VersionSpec::Version(v as u64 - 1));
        assert!(at.unwrap().files().any(|x| x.path() == a.path));
        assert!(!prev.unwrap().files().any(|x| x.path() == a.path));
    }
}

/// A table Databricks wrote with row tracking: row ids and commit versions read from its
/// `baseRowId` / `defaultRowCommitVersion`.
#[test]
fn row_ids_of_a_databricks_table_are_read() {
    let (_dir, path) = crate::common::copy_table("table_with_liquid_clustering");
    let t = Table::open(path.to_str().unwrap()).unwrap();
    let scan = ScanBuilder::new(t.snapshot().unwrap())
        .with_row_tracking(true)
        .build()
        .unwrap();
    let mut got: Vec<(i64, i64, i64)> = Vec::new();
    for b in scan.execute_to_vec().unwrap() {
        let b: RecordBatch = b;
        let col = |i: usize| b.column(i).as_any().downcast_ref::<Int64Array>().unwrap();
        for i in 0..b.num_rows() {
            got.push((col(0).value(i), col(1).value(i), col(2).value(i)));
        }
    }
    got.sort();
    let want: Vec<(i64, i64, i64)> = (0..10).map(|i| (i, i, 0)).collect();
    assert_eq!(got, want);
}

/// Column mapping (name mode) and partitioning: the hidden columns are found and written by
/// their own names next to physical column names and partition directories.
#[test]
fn ids_survive_rewrites_on_a_partitioned_column_mapped_table() {
    let t = Table::from_store(Arc::new(InMemoryStore::new()));
    let mut props = enabled_props(false);
    props.insert("delta.columnMapping.mode".to_string(), "name".to_string());
    t.create(&schema(), &["k".to_string()], &props).unwrap();
    for i in 0..3 {
        let rows: Vec<Row> = (i * 9..(i + 1) * 9).map(row).collect();
        t.append([batch(&rows)], &WriteOptions::default()).unwrap();
    }
    let before = tracked_rows(&t);
    assert_eq!(before.len(), 27);
    assert_unique(&before);
    t.update_str("v = 0", Some("id = 4"), &WriteOptions::default())
        .unwrap();
    let updated_at = version(&t);
    t.optimize(&OptimizeOptions::default()).unwrap();
    let after = tracked_rows(&t);
    for (id, got) in &after {
        let want = if *id == 4 {
            (before[id].0, updated_at)
        } else {
            before[id]
        };
        assert_eq!(*got, want, "id={id}");
    }
    assert_clean(&t);
}
