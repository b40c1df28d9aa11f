//! Committing data files written elsewhere (SPEC.md §36): workers write files with
//! `Table::write_data_files`, a driver commits their adds with `Table::commit_files` (or a
//! transaction's `add_written_files`). Each refusal of an add, idempotency through the
//! application transaction, append and overwrite, and that nothing is deleted when a
//! commit is refused.

use std::collections::HashMap;
use std::sync::Arc;

use alluvium::{
    Add, AppTransaction, CommitFilesOptions, CommitMode, ConflictKind, Error, ErrorKind,
    FileRefusal, InMemoryStore, ScanBuilder, StorePath, StoreRef, Table, WriteOptions,
    WriteOutcome,
};
use arrow::array::Int64Array;

use crate::batches::{id_p_batch as batch, id_p_schema as schema};

fn table(partition_by: &[&str], props: &[(&str, &str)]) -> (Table, StoreRef) {
    let store: StoreRef = Arc::new(InMemoryStore::new());
    let t = Table::from_store(store.clone());
    let parts: Vec<String> = partition_by.iter().map(|s| s.to_string()).collect();
    let props: HashMap<String, String> = props
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    t.create(&schema(), &parts, &props).unwrap();
    (t, store)
}

fn ids(t: &Table) -> Vec<i64> {
    let mut out: Vec<i64> = ScanBuilder::new(t.snapshot().unwrap())
        .with_columns(["id"])
        .build()
        .unwrap()
        .execute_to_vec()
        .unwrap()
        .iter()
        .flat_map(|b| {
            b.column(0)
                .as_any()
                .downcast_ref::<Int64Array>()
                .unwrap()
                .values()
                .to_vec()
        })
        .collect();
    out.sort_unstable();
    out
}

fn append() -> CommitFilesOptions {
    CommitFilesOptions::default()
}

/// The refusal of committing `adds`, which must be refused with nothing committed.
fn refusal(t: &Table, adds: Vec<Add>) -> FileRefusal {
    let before = t.snapshot().unwrap().version();
    let e = t.commit_files(adds, &append()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
    assert_eq!(t.snapshot().unwrap().version(), before, "nothing committed");
    match e {
        Error::FileRefused { reason, .. } => reason,
        other => panic!("{other}"),
    }
}

/// Workers write (in parallel, each through its own handle), the adds travel as JSON, the
/// driver commits them all in one version.
#[test]
fn files_written_by_workers_commit_in_one_version_after_a_json_round_trip() {
    let (t, store) = table(&["p"], &[]);
    let workers: Vec<_> = (0..4i64)
        .map(|w| {
            let store = store.clone();
            std::thread::spawn(move || {
                let worker = Table::from_store(store);
                let adds = worker
                    .write_data_files(
                        [batch(&[w * 10, w * 10 + 1], "a"), batch(&[w * 10 + 2], "b")],
                        Some(&["p".to_string()]),
                    )
                    .unwrap();
                serde_json::to_string(&adds).unwrap()
            })
        })
        .collect();
    let adds: Vec<Add> = workers
        .into_iter()
        .flat_map(|h| serde_json::from_str::<Vec<Add>>(&h.join().unwrap()).unwrap())
        .collect();
    assert_eq!(adds.len(), 8, "one file per partition per worker");
    assert!(
        adds.iter()
            .all(|a| a.stats.is_some() && a.path.starts_with("p="))
    );
    assert_eq!(t.snapshot().unwrap().version(), 0, "written, not committed");
    let o = t.commit_files(adds, &append()).unwrap();
    let r = o.report().unwrap();
    assert_eq!(r.version, 1);
    assert_eq!(r.files_added, 8);
    assert_eq!(r.operation_metrics["numOutputRows"], "12");
    assert_eq!(ids(&t), vec![0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32]);
}

#[test]
fn overwrite_removes_every_live_file_in_the_same_commit() {
    let (t, _) = table(&[], &[]);
    t.append([batch(&[1, 2], "a")], &WriteOptions::default())
        .unwrap();
    let adds = t.write_data_files([batch(&[7], "z")], None).unwrap();
    let o = t
        .commit_files(
            adds,
            &CommitFilesOptions::default().with_mode(CommitMode::Overwrite),
        )
        .unwrap();
    assert_eq!(o.report().unwrap().files_removed, 1);
    assert_eq!(ids(&t), vec![7]);
}

/// A driver that runs again with the same application version after its commit landed is
/// skipped: the files are committed once.
#[test]
fn a_retried_driver_with_its_application_version_is_skipped() {
    let (t, _) = table(&[], &[]);
    let adds = t.write_data_files([batch(&[1, 2], "a")], None).unwrap();
    let opts = CommitFilesOptions::default().with_write(
        WriteOptions::default().with_app_transaction(AppTransaction::new("ray-job-7", 1)),
    );
    let first = t.commit_files(adds.clone(), &opts).unwrap();
    assert!(matches!(first, WriteOutcome::Committed(_)));
    match t.commit_files(adds, &opts).unwrap() {
        WriteOutcome::Skipped {
            app_id,
            recorded_version,
            ..
        } => {
            assert_eq!(app_id, "ray-job-7");
            assert_eq!(recorded_version, 1);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(ids(&t), vec![1, 2]);
    assert_eq!(t.snapshot().unwrap().version(), 1);
}

#[test]
fn a_path_escaping_the_table_is_refused() {
    let (t, _) = table(&[], &[]);
    let mut a = t.write_data_files([batch(&[1], "a")], None).unwrap()[0].clone();
    a.path = "../elsewhere/x.parquet".into();
    assert!(matches!(refusal(&t, vec![a]), FileRefusal::InvalidPath(_)));
}

/// An absolute location outside the table root needs the caller's leave; one inside the
/// root is a table path.
#[test]
fn absolute_paths_outside_the_root_need_an_allowed_location() {
    let (t, _) = table(&[], &[]);
    let written = t.write_data_files([batch(&[1], "a")], None).unwrap()[0].clone();
    let mut outside = written.clone();
    outside.path = "s3://other-bucket/shared/x.parquet".into();
    assert_eq!(
        refusal(&t, vec![outside.clone()]),
        FileRefusal::OutsideTable
    );
    // A prefix that is not a whole path segment does not count.
    let near =
        CommitFilesOptions::default().with_allowed_locations(vec!["s3://other-bucket/sha".into()]);
    assert!(t.commit_files(vec![outside.clone()], &near).is_err());
    let allowed = CommitFilesOptions::default()
        .with_allowed_locations(vec!["s3://other-bucket/shared/".into()]);
    t.commit_files(vec![outside], &allowed).unwrap();
    let mut inside = written;
    inside.path = format!("{}/{}", t.uri().trim_end_matches('/'), inside.path);
    t.commit_files(vec![inside], &append()).unwrap();
    assert_eq!(t.snapshot().unwrap().num_files(), 2);
}

#[test]
fn partition_values_must_be_the_tables_columns_and_parse_as_their_types() {
    let (t, _) = table(&["p"], &[]);
    let a = t.write_data_files([batch(&[1], "a")], None).unwrap()[0].clone();
    let mut missing = a.clone();
    missing.partition_values = Default::default();
    assert_eq!(
        refusal(&t, vec![missing]),
        FileRefusal::PartitionColumns {
            expected: vec!["p".into()],
            found: vec![]
        }
    );
    let mut extra = a.clone();
    extra.partition_values.insert("q", Some("x".into()));
    assert!(matches!(
        refusal(&t, vec![extra]),
        FileRefusal::PartitionColumns { .. }
    ));
    // An integer partition column with a value that is not an integer.
    let (ti, _) = {
        let store: StoreRef = Arc::new(InMemoryStore::new());
        let ti = Table::from_store(store.clone());
        ti.create(&schema(), &["id".into()], alluvium::NO_PROPERTIES)
            .unwrap();
        (ti, store)
    };
    let mut b = ti.write_data_files([batch(&[5], "a")], None).unwrap()[0].clone();
    b.partition_values.insert("id", Some("five".into()));
    assert!(matches!(
        refusal(&ti, vec![b]),
        FileRefusal::PartitionValue { column, .. } if column == "id"
    ));
    // partition_by must be the table's.
    let e = t
        .write_data_files([batch(&[1], "a")], Some(&["id".to_string()]))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
}

#[test]
fn statistics_must_be_well_formed() {
    let (t, _) = table(&[], &[]);
    let a = t.write_data_files([batch(&[1, 2], "a")], None).unwrap()[0].clone();
    let with = |stats: &str| {
        let mut b = a.clone();
        b.stats = Some(stats.to_string());
        b
    };
    for bad in [
        "not json",
        "[1]",
        r#"{"numRecords":-1}"#,
        r#"{"numRecords":"two"}"#,
        r#"{"numRecords":2,"nullCount":{"id":3}}"#,
        r#"{"numRecords":2,"nullCount":{"id":-1}}"#,
        r#"{"numRecords":2,"minValues":{"id":5},"maxValues":{"id":1}}"#,
        r#"{"numRecords":2,"minValues":{"id":"one"}}"#,
        r#"{"numRecords":2,"minValues":[]}"#,
        r#"{"numRecords":2,"tightBounds":"yes"}"#,
    ] {
        assert!(
            matches!(refusal(&t, vec![with(bad)]), FileRefusal::MalformedStats(_)),
            "{bad}"
        );
    }
    assert_eq!(
        refusal(&t, vec![with(r#"{"numRecords":2,"maxValues":{"nope":1}}"#)]),
        FileRefusal::UnknownStatsColumn("nope".into())
    );
    // No statistics at all is allowed (readers then skip nothing), as are the writer's own.
    let mut none = with("{}");
    none.stats = None;
    t.commit_files(vec![none], &append()).unwrap();
}

#[test]
fn a_file_listed_twice_or_already_live_is_refused() {
    let (t, _) = table(&[], &[]);
    let a = t.write_data_files([batch(&[1], "a")], None).unwrap()[0].clone();
    assert_eq!(
        refusal(&t, vec![a.clone(), a.clone()]),
        FileRefusal::DuplicatePath
    );
    t.commit_files(vec![a.clone()], &append()).unwrap();
    assert_eq!(refusal(&t, vec![a]), FileRefusal::AlreadyLive);
}

#[test]
fn what_only_a_commit_gives_a_file_is_refused() {
    let (t, _) = table(&[], &[]);
    let a = t.write_data_files([batch(&[1], "a")], None).unwrap()[0].clone();
    let mut ids = a.clone();
    ids.base_row_id = Some(0);
    let mut rearranged = a.clone();
    rearranged.data_change = false;
    let mut negative = a;
    negative.size = -1;
    for b in [ids, rearranged, negative] {
        assert!(matches!(refusal(&t, vec![b]), FileRefusal::NotANewFile(_)));
    }
}

/// On a table that assigns row ids, every file must say how many rows it has; the commit
/// then gives them ids.
#[test]
fn row_tracking_needs_row_counts_and_assigns_ids() {
    let (t, _) = table(&[], &[("delta.enableRowTracking", "true")]);
    let a = t.write_data_files([batch(&[1, 2], "a")], None).unwrap()[0].clone();
    let mut no_count = a.clone();
    no_count.stats = Some(r#"{"minValues":{"id":1}}"#.into());
    assert!(matches!(
        refusal(&t, vec![no_count]),
        FileRefusal::MalformedStats(_)
    ));
    t.commit_files(vec![a], &append()).unwrap();
    let snap = t.snapshot().unwrap();
    let f = snap.files().next().unwrap();
    assert_eq!(f.base_row_id(), Some(0));
    assert_eq!(f.default_row_commit_version(), Some(1));
}

/// Statistics and partition values name physical columns under column mapping.
#[test]
fn column_mapped_tables_take_the_files_their_workers_write() {
    let (t, _) = table(&["p"], &[("delta.columnMapping.mode", "name")]);
    let adds = t.write_data_files([batch(&[3, 4], "x")], None).unwrap();
    t.commit_files(adds, &append()).unwrap();
    assert_eq!(ids(&t), vec![3, 4]);
}

#[test]
fn identity_columns_refuse_files_written_apart() {
    let t = Table::in_memory();
    let delta = alluvium::StructType::from_json(
        r#"{"type":"struct","fields":[
            {"name":"id","type":"long","nullable":false,"metadata":{"delta.identity.start":1,"delta.identity.step":1,"delta.identity.allowExplicitInsert":true}},
            {"name":"p","type":"string","nullable":true,"metadata":{}}]}"#,
    )
    .unwrap();
    t.create_with_schema(delta, &[], alluvium::NO_PROPERTIES)
        .unwrap();
    let e = t.write_data_files([batch(&[1], "a")], None).unwrap_err();
    assert!(e.to_string().contains("identity"), "{e}");
}

/// A refused or failed commit deletes nothing: the workers' files stay for a retry.
#[test]
fn a_refused_commit_deletes_no_file_and_a_corrected_retry_commits_them() {
    let (t, store) = table(&[], &[]);
    let adds = t
        .write_data_files([batch(&[1], "a"), batch(&[2], "a")], None)
        .unwrap();
    let mut bad = adds.clone();
    bad.push(adds[0].clone());
    assert_eq!(refusal(&t, bad), FileRefusal::DuplicatePath);
    for a in &adds {
        assert!(
            store
                .head(&StorePath::parse(a.path.clone()).unwrap())
                .is_ok()
        );
    }
    t.commit_files(adds, &append()).unwrap();
    assert_eq!(ids(&t), vec![1, 2]);
}

/// The transaction form checks the adds too, also against the files it already stages.
#[test]
fn a_transaction_stages_written_files_after_the_same_checks() {
    let (t, _) = table(&[], &[]);
    let a = t.write_data_files([batch(&[1], "a")], None).unwrap();
    let mut txn = t.transaction("WRITE").unwrap();
    txn.add_written_files(a.clone(), &[]).unwrap();
    let e = txn.add_written_files(a, &[]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::FileRefused {
                reason: FileRefusal::DuplicatePath,
                ..
            }
        ),
        "{e}"
    );
    let own = txn.write_files([batch(&[2], "a")]).unwrap();
    txn.add_files(own);
    txn.commit().unwrap();
    assert_eq!(ids(&t), vec![1, 2]);
}

/// The paths of the latest version's live files, sorted.
fn live_paths(t: &Table) -> Vec<String> {
    let mut out: Vec<String> = t
        .snapshot()
        .unwrap()
        .files()
        .map(|f| f.path().to_string())
        .collect();
    out.sort();
    out
}

/// An overwrite with `replace_where` (deltalake's `partition_filters`) removes the live
/// files of the partitions it names only, records the predicate, refuses an add outside
/// those partitions, and a predicate that would need the files read.
#[test]
fn an_overwrite_of_some_partitions_replaces_only_those() {
    let (t, _) = table(&["p"], &[]);
    t.append(
        [batch(&[1, 2], "a"), batch(&[3], "b"), batch(&[4], "c")],
        &WriteOptions::default(),
    )
    .unwrap();
    let overwrite = |p: &str| {
        CommitFilesOptions::default()
            .with_mode(CommitMode::Overwrite)
            .with_replace_where(p)
    };
    let before = t.snapshot().unwrap().version();
    // An add outside the replaced partitions is refused, nothing committed.
    let adds = t
        .write_data_files([batch(&[10], "a"), batch(&[30], "b")], None)
        .unwrap();
    let e = t.commit_files(adds, &overwrite("p = 'a'")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
    assert!(
        matches!(&e, Error::FileRefused { reason: FileRefusal::OutsideReplacedPartitions(p), .. } if p == "p = 'a'"),
        "{e}"
    );
    assert_eq!(t.snapshot().unwrap().version(), before);
    // A predicate over a data column, or with an append, is refused.
    let adds = t.write_data_files([batch(&[10], "a")], None).unwrap();
    for (options, what) in [
        (overwrite("id > 1"), "must compare partition columns"),
        (
            CommitFilesOptions::default().with_replace_where("p = 'a'"),
            "needs mode overwrite",
        ),
    ] {
        let e = t.commit_files(adds.clone(), &options).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
        assert!(e.to_string().contains(what), "{e}");
    }
    assert_eq!(t.snapshot().unwrap().version(), before);
    // Partitions a and b replaced: c stays, its file untouched.
    let c_file: Vec<String> = live_paths(&t)
        .into_iter()
        .filter(|p| p.starts_with("p=c/"))
        .collect();
    let adds = t
        .write_data_files([batch(&[10, 11], "a"), batch(&[30], "b")], None)
        .unwrap();
    let r = t.commit_files(adds, &overwrite("p IN ('a', 'b')")).unwrap();
    assert_eq!(r.report().unwrap().files_removed, 2);
    assert_eq!(ids(&t), vec![4, 10, 11, 30]);
    assert!(live_paths(&t).contains(&c_file[0]));
    let ci = t.history(Some(1)).unwrap()[0].commit_info.clone().unwrap();
    let params = ci.operation_parameters().unwrap();
    assert_eq!(params["mode"], "Overwrite");
    assert_eq!(params["predicate"], r#"["p IN ('a', 'b')"]"#);
}

/// A file with a NULL partition value is not in `p = 'a'` or `p != 'a'` (SQL's three
/// values): an overwrite of either keeps it, and refuses a new file with a NULL value.
#[test]
fn a_null_partition_is_replaced_only_by_a_predicate_that_holds_for_null() {
    let (t, _) = table(&["p"], &[]);
    let nulls = arrow::record_batch::RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from(vec![5])),
            Arc::new(arrow::array::StringArray::from(vec![None::<&str>])),
        ],
    )
    .unwrap();
    t.append([batch(&[1], "a"), nulls.clone()], &WriteOptions::default())
        .unwrap();
    let overwrite = |p: &str| {
        CommitFilesOptions::default()
            .with_mode(CommitMode::Overwrite)
            .with_replace_where(p)
    };
    let adds = t.write_data_files([batch(&[2], "b")], None).unwrap();
    t.commit_files(adds, &overwrite("p != 'a'")).unwrap();
    assert_eq!(ids(&t), vec![1, 2, 5]);
    let adds = t.write_data_files([nulls], None).unwrap();
    let e = t
        .commit_files(adds.clone(), &overwrite("p = 'b'"))
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::FileRefused {
                reason: FileRefusal::OutsideReplacedPartitions(_),
                ..
            }
        ),
        "{e}"
    );
    t.commit_files(adds, &overwrite("p IS NULL")).unwrap();
    assert_eq!(ids(&t), vec![1, 2, 5]);
    assert_eq!(live_paths(&t).len(), 3);
}

/// An append may remove live files in the same commit (deltalake's `RemoveAction`s): the
/// files named go, a path that is not live or is named twice refuses the commit, removals
/// with an overwrite are refused, and a removal of a file a concurrent commit removed
/// conflicts.
#[test]
fn an_append_removes_the_live_files_it_names() {
    let (t, _) = table(&[], &[]);
    t.append([batch(&[1, 2], "a")], &WriteOptions::default())
        .unwrap();
    let first = live_paths(&t);
    t.append([batch(&[3], "a")], &WriteOptions::default())
        .unwrap();
    let old: Vec<String> = live_paths(&t)
        .into_iter()
        .filter(|p| !first.contains(p))
        .collect();
    let before = t.snapshot().unwrap().version();
    let adds = t.write_data_files([batch(&[7], "z")], None).unwrap();
    let removing = |paths: &[&str]| {
        CommitFilesOptions::default().with_removes(paths.iter().map(|p| p.to_string()).collect())
    };
    for (paths, reason) in [
        (vec!["part-missing.parquet"], FileRefusal::NotLive),
        (
            vec![old[0].as_str(), old[0].as_str()],
            FileRefusal::DuplicatePath,
        ),
    ] {
        let e = t.commit_files(adds.clone(), &removing(&paths)).unwrap_err();
        match e {
            Error::FileRefused { reason: r, .. } => assert_eq!(r, reason),
            other => panic!("{other}"),
        }
    }
    let e = t
        .commit_files(
            adds.clone(),
            &removing(&[old[0].as_str()]).with_mode(CommitMode::Overwrite),
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
    assert_eq!(t.snapshot().unwrap().version(), before);
    // Pinned before a concurrent DELETE removes the same file: the removal conflicts.
    let pinned = t.snapshot().unwrap();
    let r = t.commit_files(adds, &removing(&[old[0].as_str()])).unwrap();
    assert_eq!(r.report().unwrap().files_removed, 1);
    assert_eq!(ids(&t), vec![1, 2, 7]);
    let adds = t.write_data_files([batch(&[8], "z")], None).unwrap();
    let e = t
        .commit_files(
            adds,
            &removing(&[old[0].as_str()])
                .with_write(WriteOptions::default().with_read_snapshot(pinned)),
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Conflict, "{e}");
    assert_eq!(
        e.conflict_kind(),
        Some(ConflictKind::ConcurrentDeleteRead),
        "{e}"
    );
    assert_eq!(ids(&t), vec![1, 2, 7]);
}

/// An overwrite of the whole table may carry the schema its files were written with
/// (deltalake's `create_write_transaction` with another schema): committed with them, the
/// adds checked against it; refused with an append and on a column-mapped table.
#[test]
fn an_overwrite_may_replace_the_schema_with_the_files_one() {
    use arrow::array::{ArrayRef, Float64Array, RecordBatch, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};

    let (t, store) = table(&["p"], &[]);
    t.append([batch(&[1, 2], "a")], &WriteOptions::default())
        .unwrap();
    let before = t.snapshot().unwrap().version();
    // Files of `id, p, score` written by another engine (here: another table) into the root.
    let wider = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("p", DataType::Utf8, true),
        Field::new("score", DataType::Float64, true),
    ]));
    let elsewhere: StoreRef = Arc::new(InMemoryStore::new());
    let other = Table::from_store(elsewhere.clone());
    other
        .create(&wider, &["p".to_string()], alluvium::NO_PROPERTIES)
        .unwrap();
    let rows = RecordBatch::try_new(
        wider,
        vec![
            Arc::new(Int64Array::from(vec![7, 8])) as ArrayRef,
            Arc::new(StringArray::from(vec!["b", "b"])),
            Arc::new(Float64Array::from(vec![0.5, 1.5])),
        ],
    )
    .unwrap();
    let adds = other.write_data_files([rows], None).unwrap();
    for a in &adds {
        let key = alluvium::StorePath::parse(a.path.as_str()).unwrap();
        store.put(&key, elsewhere.get(&key).unwrap()).unwrap();
    }
    let new_schema = other.snapshot().unwrap().schema().clone();
    // The table's schema does not know `score`: its statistics refuse the files.
    let e = t
        .commit_files(
            adds.clone(),
            &CommitFilesOptions::default().with_mode(CommitMode::Overwrite),
        )
        .unwrap_err();
    assert!(
        matches!(&e, Error::FileRefused { reason: FileRefusal::UnknownStatsColumn(c), .. } if c == "score"),
        "{e}"
    );
    // A new schema goes with a whole-table overwrite only.
    for options in [
        CommitFilesOptions::default().with_schema(new_schema.clone()),
        CommitFilesOptions::default()
            .with_mode(CommitMode::Overwrite)
            .with_replace_where("p = 'b'")
            .with_schema(new_schema.clone()),
    ] {
        let e = t.commit_files(adds.clone(), &options).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
    }
    assert_eq!(t.snapshot().unwrap().version(), before);
    t.commit_files(
        adds.clone(),
        &CommitFilesOptions::default()
            .with_mode(CommitMode::Overwrite)
            .with_schema(new_schema.clone()),
    )
    .unwrap();
    let s = t.snapshot().unwrap();
    assert_eq!(s.schema(), &new_schema);
    assert_eq!(s.partition_columns(), ["p"]);
    assert_eq!(ids(&t), vec![7, 8]);
    // A column-mapped table refuses it: the files name their columns logically.
    let (m, _) = table(&[], &[("delta.columnMapping.mode", "name")]);
    let e = m
        .commit_files(
            Vec::new(),
            &CommitFilesOptions::default()
                .with_mode(CommitMode::Overwrite)
                .with_schema(new_schema),
        )
        .unwrap_err();
    assert!(e.to_string().contains("maps its columns"), "{e}");
}
