//! FSCK (`Table::repair`, SPEC.md §39): the live files the store lost are found, removed in
//! one commit, and the table reads again; a file is removed only when the store says it is
//! absent, never because looking failed.

use std::sync::Arc;

use alluvium::{InMemoryStore, StoreRef, Table, WriteOptions};
use alluvium_storage::{Fault, FaultyStore, ObjectStore, StorePath};

use crate::batches::{id_p_batch as batch, id_p_schema as schema};

/// A table partitioned by `p` with three files, on `store`; their log paths, in order.
fn table_on(store: StoreRef) -> (Table, Vec<String>) {
    let t = Table::from_store(store);
    t.create(&schema(), &["p".into()], alluvium::NO_PROPERTIES)
        .unwrap();
    for (ids, p) in [(&[1, 2][..], "x"), (&[3][..], "y"), (&[4, 5][..], "z")] {
        t.append([batch(ids, p)], &WriteOptions::default()).unwrap();
    }
    let mut paths: Vec<String> = t
        .snapshot()
        .unwrap()
        .files()
        .map(|f| f.path().to_string())
        .collect();
    paths.sort();
    (t, paths)
}

fn ids(t: &Table) -> Vec<i64> {
    let mut out: Vec<i64> = crate::common::canon_rows(
        &alluvium::ScanBuilder::new(t.snapshot().unwrap())
            .with_columns(["id"])
            .build()
            .unwrap()
            .execute_to_vec()
            .unwrap(),
    )
    .iter()
    .map(|r| r.parse().unwrap())
    .collect();
    out.sort();
    out
}

#[test]
fn repair_removes_the_files_the_store_lost_and_the_table_reads_again() {
    let store: StoreRef = Arc::new(InMemoryStore::new());
    let (t, paths) = table_on(store.clone());
    let before = t.snapshot().unwrap().version();
    // Nothing lost: nothing committed.
    let clean = t.repair(false, &WriteOptions::default()).unwrap();
    assert!(clean.files_removed.is_empty() && clean.outcome.is_none());
    let lost = paths[1].clone();
    store
        .delete(&StorePath::parse(lost.as_str()).unwrap())
        .unwrap();
    assert!(
        alluvium::ScanBuilder::new(t.snapshot().unwrap())
            .build()
            .unwrap()
            .execute_to_vec()
            .is_err(),
        "a scan fails on the lost file"
    );
    // A dry run lists it and commits nothing.
    let dry = t.repair(true, &WriteOptions::default()).unwrap();
    assert_eq!(dry.files_removed, std::slice::from_ref(&lost));
    assert!(dry.dry_run && dry.outcome.is_none());
    assert_eq!(t.snapshot().unwrap().version(), before);
    // The repair removes it, in one commit, and the other files' rows read again.
    let options =
        WriteOptions::default().with_app_transaction(alluvium::AppTransaction::new("fsck", 1));
    let done = t.repair(false, &options).unwrap();
    assert_eq!(done.files_removed, std::slice::from_ref(&lost));
    let s = t.snapshot().unwrap();
    assert_eq!(s.version(), before + 1);
    let ci = s.commit_info().unwrap();
    assert_eq!(ci.operation(), Some("FSCK"));
    assert_eq!(ci.0["operationMetrics"]["numFilesRemoved"], "1");
    assert!(s.files().all(|f| f.path() != lost));
    assert_eq!(ids(&t), [1, 2, 4, 5]);
    // A retried job is skipped.
    let again = t.repair(false, &options).unwrap();
    assert!(again.outcome.is_some_and(|o| o.report().is_none()));
    assert_eq!(t.snapshot().unwrap().version(), s.version());
}

#[test]
fn only_absence_removes_a_file_never_a_failed_look() {
    // Every operation of a repair fails once in turn, as a request that never reached the
    // store: the repair either fails, or removes exactly the lost file. A failed lookup is
    // never taken for absence.
    let mut failed = 0;
    for at in 1.. {
        let inner: StoreRef = Arc::new(InMemoryStore::new());
        let (_, paths) = table_on(inner.clone());
        let lost = paths[0].clone();
        inner
            .delete(&StorePath::parse(lost.as_str()).unwrap())
            .unwrap();
        let faulty = Arc::new(FaultyStore::new(inner.clone(), at, Fault::ErrorBefore));
        let result = Table::from_store(faulty.clone()).repair(false, &WriteOptions::default());
        if faulty.operations() < at {
            assert_eq!(result.unwrap().files_removed, [lost]);
            break;
        }
        let after = Table::from_store(inner);
        let live: Vec<String> = after
            .snapshot()
            .unwrap()
            .files()
            .map(|f| f.path().to_string())
            .collect();
        match result {
            Ok(report) => {
                assert_eq!(
                    report.files_removed,
                    std::slice::from_ref(&lost),
                    "fault at {at}"
                );
                assert_eq!(live.len(), 2, "fault at {at}");
            }
            Err(_) => {
                failed += 1;
                // Nothing removed, or (a commit whose response was lost) only the lost file.
                assert!(live.len() >= 2, "fault at {at}: {live:?}");
                assert!(paths[1..].iter().all(|p| live.contains(p)), "fault at {at}");
            }
        }
    }
    assert!(failed > 0, "some fault made the repair fail");
}

#[test]
fn a_lost_file_outside_the_table_root_is_found_where_readers_look() {
    // A local table with one file of its own and one written under another directory
    // (allowed by the commit): losing the outside one is found by a lookup on the local
    // filesystem, as readers would fail on it; the file the table holds stays.
    let root = tempfile::tempdir().unwrap();
    let shared = tempfile::tempdir().unwrap();
    let t = Table::open(root.path().to_str().unwrap()).unwrap();
    t.create(&schema(), &["p".into()], alluvium::NO_PROPERTIES)
        .unwrap();
    t.append([batch(&[1], "x")], &WriteOptions::default())
        .unwrap();
    let written = t.write_data_files([batch(&[2], "y")], None).unwrap()[0].clone();
    let moved = shared.path().join("moved.parquet");
    std::fs::rename(root.path().join(&written.path), &moved).unwrap();
    let mut outside = written;
    outside.path = format!("file://{}", moved.display());
    let shared_uri = format!("file://{}/", shared.path().display());
    t.commit_files(
        vec![outside.clone()],
        &alluvium::CommitFilesOptions::default().with_allowed_locations(vec![shared_uri]),
    )
    .unwrap();
    assert_eq!(ids(&t), [1, 2]);
    assert!(
        t.repair(true, &WriteOptions::default())
            .unwrap()
            .files_removed
            .is_empty()
    );
    std::fs::remove_file(&moved).unwrap();
    let done = t.repair(false, &WriteOptions::default()).unwrap();
    assert_eq!(done.files_removed, std::slice::from_ref(&outside.path));
    assert_eq!(ids(&t), [1]);
}

/// A data file whose deletion vector file the store lost cannot be read right (its deleted
/// rows are indistinguishable from its live ones): the repair removes it, as Databricks'
/// FSCK does, and its entry says the vector was missing. An inline vector is never looked
/// up; a lost data file's entry names no vector when it has none.
#[test]
fn a_file_whose_deletion_vector_file_is_lost_is_removed() {
    let store: StoreRef = Arc::new(InMemoryStore::new());
    let t = Table::from_store(store.clone());
    let props: std::collections::HashMap<String, String> = [(
        "delta.enableDeletionVectors".to_string(),
        "true".to_string(),
    )]
    .into();
    t.create(&schema(), &["p".into()], &props).unwrap();
    for (ids, p) in [(&[1, 2, 3][..], "x"), (&[4, 5][..], "y"), (&[6][..], "z")] {
        t.append([batch(ids, p)], &WriteOptions::default()).unwrap();
    }
    t.delete_str("id = 1", &WriteOptions::default().with_dv_files_only(true))
        .unwrap();
    t.delete_str("id = 4", &WriteOptions::default()).unwrap();
    let s = t.snapshot().unwrap();
    let path_of = |p: &str| {
        s.files()
            .find(|f| f.path().starts_with(&format!("p={p}/")))
            .unwrap()
    };
    let (x, y, z) = (path_of("x"), path_of("y"), path_of("z"));
    assert_eq!(y.deletion_vector().unwrap().storage_type, "i");
    let dv_path = match x.deletion_vector().unwrap().location().unwrap() {
        alluvium_txlog::dv::DvLocation::Relative { path, .. } => path,
        other => panic!("{other:?}"),
    };
    // Nothing lost: a vector file found is not an entry.
    assert!(
        t.repair(true, &WriteOptions::default())
            .unwrap()
            .entries
            .is_empty()
    );
    store
        .delete(&StorePath::parse(dv_path.as_str()).unwrap())
        .unwrap();
    store.delete(&StorePath::parse(z.path()).unwrap()).unwrap();
    let dry = t.repair(true, &WriteOptions::default()).unwrap();
    let mut want = vec![x.path().to_string(), z.path().to_string()];
    want.sort();
    assert_eq!(dry.files_removed, want);
    let entry = |path: &str| {
        dry.entries
            .iter()
            .find(|e| e.data_file_path == path)
            .unwrap()
    };
    let ex = entry(x.path());
    assert!(!ex.data_file_missing && ex.deletion_vector_missing);
    assert_eq!(ex.deletion_vector_path.as_deref(), Some(dv_path.as_str()));
    let ez = entry(z.path());
    assert!(ez.data_file_missing && !ez.deletion_vector_missing);
    assert_eq!(ez.deletion_vector_path, None);
    let y_path = y.path().to_string();
    let done = t.repair(false, &WriteOptions::default()).unwrap();
    assert_eq!(done.files_removed, want);
    let after = t.snapshot().unwrap();
    assert_eq!(
        after
            .files()
            .map(|f| f.path().to_string())
            .collect::<Vec<_>>(),
        vec![y_path]
    );
    assert_eq!(ids(&t), [5]);
}

/// With every operation failing once in turn, a deletion vector file the store has is
/// never taken for lost: the repair fails or finds nothing, and removes nothing.
#[test]
fn a_failed_look_at_a_deletion_vector_removes_nothing() {
    let inner: StoreRef = Arc::new(InMemoryStore::new());
    let t = Table::from_store(inner.clone());
    let props: std::collections::HashMap<String, String> = [(
        "delta.enableDeletionVectors".to_string(),
        "true".to_string(),
    )]
    .into();
    t.create(&schema(), &["p".into()], &props).unwrap();
    for p in ["x", "y"] {
        t.append([batch(&[1, 2], p)], &WriteOptions::default())
            .unwrap();
    }
    t.delete_str("id = 1", &WriteOptions::default().with_dv_files_only(true))
        .unwrap();
    let version = t.snapshot().unwrap().version();
    let mut failed = 0;
    for at in 1.. {
        let faulty = Arc::new(FaultyStore::new(inner.clone(), at, Fault::ErrorBefore));
        let result = Table::from_store(faulty.clone()).repair(false, &WriteOptions::default());
        match result {
            Ok(report) => assert!(report.files_removed.is_empty(), "fault at {at}"),
            Err(_) => failed += 1,
        }
        assert_eq!(t.snapshot().unwrap().version(), version, "fault at {at}");
        if faulty.operations() < at {
            break;
        }
    }
    assert!(failed > 0, "some fault made the repair fail");
    assert_eq!(ids(&t), [2, 2]);
}

/// A deletion vector file that holds the vectors of several data files (one per DELETE
/// that touches them) is looked up once, not once per data file.
#[test]
fn a_shared_deletion_vector_file_is_looked_up_once() {
    let counting = Arc::new(alluvium_storage::CountingStore::new(Arc::new(
        InMemoryStore::new(),
    )));
    let t = Table::from_store(counting.clone() as StoreRef);
    let props: std::collections::HashMap<String, String> = [(
        "delta.enableDeletionVectors".to_string(),
        "true".to_string(),
    )]
    .into();
    t.create(&schema(), &["p".into()], &props).unwrap();
    for p in ["x", "y", "z"] {
        t.append([batch(&[1, 2], p)], &WriteOptions::default())
            .unwrap();
    }
    t.delete_str("id = 1", &WriteOptions::default().with_dv_files_only(true))
        .unwrap();
    let s = t.snapshot().unwrap();
    let dv_files: std::collections::HashSet<String> = s
        .files()
        .filter_map(|f| match f.deletion_vector()?.location().ok()? {
            alluvium_txlog::dv::DvLocation::Relative { path, .. } => Some(path),
            _ => None,
        })
        .collect();
    assert_eq!(
        dv_files.len(),
        1,
        "one DELETE, one vector file for its three data files"
    );
    let before = counting.request_counts().head;
    let report = t.repair(true, &WriteOptions::default()).unwrap();
    assert!(report.entries.is_empty());
    assert_eq!(counting.request_counts().head - before, 3 + 1);
}
