//! The conflict matrix, one test per cell, with forced interleavings: transaction A reads
//! version R, transaction B commits R+1, then A commits (pinned to R). The expected outcome
//! follows Delta's documented semantics (SPEC.md §7), including the cases other engines got
//! wrong: concurrent predicate overwrites of one partition (delta-rs#3622), two deletes of
//! the same file (delta#7163), compaction next to appends (delta-rs#2700).

use crate::common;
use std::sync::Arc;

use alluvium::{Error, ErrorKind, Snapshot, Table, WriteOptions, WriteOutcome};
use alluvium_mvcc::{ConflictKind, MvccError, Transaction};
use alluvium_txlog::actions::{DomainMetadata, Remove};
use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};

use crate::batches::{id_p_batch as batch, id_p_schema as schema};

/// A table partitioned by `p` with one file in partition x (ids 1, 2) and one in y (3).
fn table() -> Table {
    let t = Table::in_memory();
    t.create(&schema(), &["p".into()], alluvium::NO_PROPERTIES)
        .unwrap();
    t.append([batch(&[1, 2], "x")], &WriteOptions::default())
        .unwrap();
    t.append([batch(&[3], "y")], &WriteOptions::default())
        .unwrap();
    t
}

fn pinned(s: &Snapshot) -> WriteOptions {
    WriteOptions::default().with_read_snapshot(s.clone())
}

fn kind(r: alluvium::Result<impl Into<WriteOutcome>>) -> Option<ConflictKind> {
    match r {
        Ok(_) => None,
        Err(e) => {
            assert_eq!(e.kind(), ErrorKind::Conflict, "not a conflict: {e}");
            Some(
                e.conflict_kind()
                    .unwrap_or_else(|| panic!("not a conflict: {e}")),
            )
        }
    }
}

/// A compaction of `p`'s files: the same rows rewritten, `dataChange=false`.
fn compact(t: &Table, base: &Snapshot, p: &str) -> alluvium::Result<()> {
    let mut txn = Transaction::new(&crate::mvcc(base), "OPTIMIZE");
    let now = 1;
    for add in base
        .files()
        .filter(|a| a.partition_values().get("p") == Some(Some(p)))
        .map(|a| a.to_add())
        .collect::<Vec<_>>()
    {
        txn.read_file(&add);
        txn.remove_file(Remove::from_add(&add, now, false));
        let key = alluvium_txlog::path::percent_decode(&add.path).unwrap();
        let new_key = key.replace(".parquet", ".compacted.parquet");
        let store = t.store();
        let bytes = store
            .get(&alluvium_storage::StorePath::parse(key).unwrap())
            .unwrap();
        store
            .put(
                &alluvium_storage::StorePath::parse(new_key.clone()).unwrap(),
                bytes,
            )
            .unwrap();
        let mut new = add.clone();
        new.path = alluvium_txlog::path::encode_path(&new_key);
        new.data_change = false;
        txn.add_file(new);
    }
    txn.commit()?;
    Ok(())
}

#[test]
fn blind_append_vs_blind_append_both_commit() {
    let t = table();
    let s = t.snapshot().unwrap();
    t.append([batch(&[10], "x")], &WriteOptions::default())
        .unwrap();
    assert_eq!(kind(t.append([batch(&[11], "x")], &pinned(&s))), None);
    assert_eq!(common::sorted_ids(&t), vec![1, 2, 3, 10, 11]);
}

#[test]
fn blind_append_vs_delete_commits() {
    let t = table();
    let s = t.snapshot().unwrap();
    t.delete_str("p = 'x'", &WriteOptions::default()).unwrap();
    assert_eq!(kind(t.append([batch(&[10], "x")], &pinned(&s))), None);
    assert_eq!(common::sorted_ids(&t), vec![3, 10]);
}

#[test]
fn blind_append_vs_compaction_commits_both_ways() {
    let t = table();
    let s = t.snapshot().unwrap();
    compact(&t, &s, "x").unwrap();
    assert_eq!(kind(t.append([batch(&[10], "x")], &pinned(&s))), None);
    // And the compaction, pinned before an append, also commits.
    let s = t.snapshot().unwrap();
    t.append([batch(&[11], "x")], &WriteOptions::default())
        .unwrap();
    compact(&t, &s, "x").unwrap();
    assert_eq!(common::sorted_ids(&t), vec![1, 2, 3, 10, 11]);
}

#[test]
fn blind_append_vs_metadata_change_conflicts() {
    let t = table();
    let s = t.snapshot().unwrap();
    let wider = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("p", DataType::Utf8, true),
        Field::new("z", DataType::Int64, true),
    ]));
    let b = RecordBatch::try_new(
        wider,
        vec![
            Arc::new(Int64Array::from(vec![9])) as ArrayRef,
            Arc::new(StringArray::from(vec!["x"])),
            Arc::new(Int64Array::from(vec![1])),
        ],
    )
    .unwrap();
    t.append([b], &WriteOptions::default().with_merge_schema(true))
        .unwrap();
    let e = t.append([batch(&[10], "x")], &pinned(&s)).unwrap_err();
    assert!(e.to_string().contains("MetadataChanged"), "{e}");
    assert_eq!(e.conflict_kind(), Some(ConflictKind::MetadataChanged));
    assert!(!e.is_retryable());
}

#[test]
fn any_commit_vs_protocol_change_conflicts() {
    let t = table();
    let s = t.snapshot().unwrap();
    let mut up = Transaction::new(&crate::mvcc(&s), "UPGRADE PROTOCOL");
    let mut p = s.protocol().clone();
    p.min_writer_version = 3;
    up.set_protocol(p);
    up.commit().unwrap();
    assert_eq!(
        kind(t.append([batch(&[10], "x")], &pinned(&s))),
        Some(ConflictKind::ProtocolChanged)
    );
}

#[test]
fn delete_vs_append_into_the_deleted_partition_conflicts() {
    let t = table();
    let s = t.snapshot().unwrap();
    t.append([batch(&[10], "x")], &WriteOptions::default())
        .unwrap();
    assert_eq!(
        kind(t.delete_str("p = 'x'", &pinned(&s))),
        Some(ConflictKind::ConcurrentAppend)
    );
    assert_eq!(
        common::sorted_ids(&t),
        vec![1, 2, 3, 10],
        "nothing of the failed delete landed"
    );
}

#[test]
fn delete_vs_append_into_another_partition_commits() {
    let t = table();
    let s = t.snapshot().unwrap();
    t.append([batch(&[10], "y")], &WriteOptions::default())
        .unwrap();
    assert_eq!(kind(t.delete_str("p = 'x'", &pinned(&s))), None);
    assert_eq!(common::sorted_ids(&t), vec![3, 10]);
}

#[test]
fn two_deletes_of_the_same_file_conflict() {
    let t = table();
    let s = t.snapshot().unwrap();
    t.delete_str("p = 'x'", &WriteOptions::default()).unwrap();
    // A read the file it removes, and Delta reports a removed read file before a file
    // removed twice.
    assert_eq!(
        kind(t.delete_str("p = 'x'", &pinned(&s))),
        Some(ConflictKind::ConcurrentDeleteRead)
    );
    // Rewrites of the same file too: each would resurrect the rows the other deleted.
    let t = table();
    let s = t.snapshot().unwrap();
    t.delete_str("id = 1", &WriteOptions::default()).unwrap();
    // B's rewrite also added a file where A reads, which Delta checks first.
    assert_eq!(
        kind(t.delete_str("id = 2", &pinned(&s))),
        Some(ConflictKind::ConcurrentAppend)
    );
    assert_eq!(common::sorted_ids(&t), vec![2, 3]);
}

/// `ConcurrentDeleteDelete` is left for a transaction that removes a file it did not record
/// as read (a blind remove through the mvcc layer), as in Delta, whose checker reports a
/// removed read file first.
#[test]
fn a_blind_remove_of_a_removed_file_is_delete_delete() {
    let t = table();
    let s = t.snapshot().unwrap();
    t.delete_str("p = 'x'", &WriteOptions::default()).unwrap();
    let x = s
        .files()
        .find(|a| a.partition_values().get("p") == Some(Some("x")))
        .map(|f| f.to_add())
        .unwrap();
    let mut txn = Transaction::new(&crate::mvcc(&s), "DELETE");
    txn.remove_file(Remove::from_add(&x, 1, true));
    let e = txn.commit().unwrap_err();
    assert!(
        matches!(
            e,
            MvccError::Conflict {
                kind: ConflictKind::ConcurrentDeleteDelete,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn delete_that_read_a_file_another_removed_conflicts() {
    let t = table();
    let s = t.snapshot().unwrap();
    // B removes the x file; A reads it (its statistics cannot rule the predicate out) but
    // finds no row to delete.
    t.delete_str("p = 'x'", &WriteOptions::default()).unwrap();
    assert_eq!(
        kind(t.delete_str("id > 1 AND id < 2", &pinned(&s))),
        Some(ConflictKind::ConcurrentDeleteRead)
    );
    // A predicate the statistics rule out reads no file and commits.
    let t = table();
    let s = t.snapshot().unwrap();
    t.delete_str("p = 'x'", &WriteOptions::default()).unwrap();
    assert_eq!(kind(t.delete_str("id = 100", &pinned(&s))), None);
}

#[test]
fn concurrent_predicate_overwrites_of_one_partition_conflict() {
    let t = table();
    let s = t.snapshot().unwrap();
    t.overwrite_str(
        [batch(&[20], "x")],
        Some("p = 'x'"),
        &WriteOptions::default(),
    )
    .unwrap();
    let k = kind(t.overwrite_str([batch(&[30], "x")], Some("p = 'x'"), &pinned(&s)));
    assert_eq!(k, Some(ConflictKind::ConcurrentAppend));
    assert_eq!(
        common::sorted_ids(&t),
        vec![3, 20],
        "exactly one overwrite's rows"
    );
}

#[test]
fn overwrites_of_different_partitions_commit() {
    let t = table();
    let s = t.snapshot().unwrap();
    t.overwrite_str(
        [batch(&[20], "x")],
        Some("p = 'x'"),
        &WriteOptions::default(),
    )
    .unwrap();
    assert_eq!(
        kind(t.overwrite_str([batch(&[30], "y")], Some("p = 'y'"), &pinned(&s))),
        None
    );
    assert_eq!(common::sorted_ids(&t), vec![20, 30]);
}

#[test]
fn full_overwrite_vs_append_conflicts() {
    let t = table();
    let s = t.snapshot().unwrap();
    t.append([batch(&[10], "y")], &WriteOptions::default())
        .unwrap();
    assert_eq!(
        kind(t.overwrite_str([batch(&[0], "x")], None, &pinned(&s))),
        Some(ConflictKind::ConcurrentAppend)
    );
}

#[test]
fn compaction_vs_delete_of_its_input_conflicts() {
    let t = table();
    let s = t.snapshot().unwrap();
    t.delete_str("p = 'x'", &WriteOptions::default()).unwrap();
    let e = compact(&t, &s, "x").unwrap_err();
    assert_eq!(
        e.conflict_kind(),
        Some(ConflictKind::ConcurrentDeleteRead),
        "{e}"
    );
    assert_eq!(common::sorted_ids(&t), vec![3]);
}

/// A rewrite whose read files are not live at its read version is refused before it
/// writes: the conflict check only looks at later commits, so it could not catch the stale
/// read (the OPTIMIZE bug of `tests/integration/maintenance.rs::a_delete_between_optimize_commits_is_not_undone`).
#[test]
fn a_rewrite_of_files_not_live_at_its_read_version_is_refused() {
    let t = table();
    let old = t.snapshot().unwrap();
    t.delete_str("p = 'x'", &WriteOptions::default()).unwrap();
    let fresh = t.snapshot().unwrap();
    let stale = old
        .files()
        .find(|a| a.partition_values().get("p") == Some(Some("x")))
        .map(|f| f.to_add())
        .unwrap();
    let mut txn = Transaction::new(&crate::mvcc(&fresh), "OPTIMIZE");
    txn.read_file(&stale);
    txn.remove_file(Remove::from_add(&stale, 1, false));
    let e = txn.commit().unwrap_err();
    assert!(
        matches!(&e, MvccError::InvalidOperation(m) if m.contains("not live")),
        "{e}"
    );
    assert_eq!(
        t.snapshot().unwrap().version(),
        fresh.version(),
        "nothing committed"
    );
    assert_eq!(common::sorted_ids(&t), vec![3]);
}

#[test]
fn same_application_concurrently_conflicts() {
    let t = table();
    let s = t.snapshot().unwrap();
    let app = |v| {
        WriteOptions::default()
            .with_app_transaction(alluvium::AppTransaction::new("etl", v))
            .with_read_snapshot(s.clone())
    };
    assert_eq!(kind(t.append([batch(&[10], "x")], &app(1))), None);
    assert_eq!(
        kind(t.append([batch(&[10], "x")], &app(1))),
        Some(ConflictKind::ConcurrentTransaction)
    );
    assert_eq!(
        common::sorted_ids(&t),
        vec![1, 2, 3, 10],
        "the replay did not duplicate rows"
    );
}

#[test]
fn same_domain_concurrently_conflicts() {
    let t = table();
    let s = t.snapshot().unwrap();
    let domain = |c: &str| DomainMetadata {
        domain: "app.settings".into(),
        configuration: c.into(),
        removed: false,
    };
    // Domain metadata needs the domainMetadata writer feature.
    let mut up = Transaction::new(&crate::mvcc(&s), "UPGRADE");
    up.set_protocol(alluvium_txlog::actions::Protocol {
        min_reader_version: 1,
        min_writer_version: 7,
        reader_features: None,
        writer_features: Some(vec![
            "domainMetadata".into(),
            "appendOnly".into(),
            "invariants".into(),
        ]),
    });
    up.commit().unwrap();
    let s = t.snapshot().unwrap();
    let mut a = Transaction::new(&crate::mvcc(&s), "SET DOMAIN");
    a.set_domain(domain("1"));
    let mut b = Transaction::new(&crate::mvcc(&s), "SET DOMAIN");
    b.set_domain(domain("2"));
    b.commit().unwrap();
    let e = a.commit().unwrap_err();
    assert_eq!(
        e.conflict_kind(),
        Some(ConflictKind::ConcurrentTransaction),
        "{e}"
    );
}

#[test]
fn a_handle_fifty_versions_behind_checks_each_winner_once() {
    let t = table();
    let s = t.snapshot().unwrap();
    for i in 0..50 {
        t.append([batch(&[100 + i], "y")], &WriteOptions::default())
            .unwrap();
    }
    let o = t.append([batch(&[999], "x")], &pinned(&s)).unwrap();
    let r = o.report().unwrap();
    assert_eq!(r.version, s.version() + 51);
    assert_eq!(r.winning_commits.len(), 50);
    assert_eq!(r.attempts, 2);
}

#[test]
fn two_creators_one_wins_the_other_gets_a_typed_error() {
    let t = Table::in_memory();
    let other = Table::from_store(t.store().clone());
    t.create(&schema(), &[], alluvium::NO_PROPERTIES).unwrap();
    let e = other
        .create(&schema(), &[], alluvium::NO_PROPERTIES)
        .unwrap_err();
    assert!(
        matches!(e, Error::Mvcc(MvccError::TableAlreadyExists { .. })),
        "{e}"
    );
    assert_eq!(e.kind(), ErrorKind::AlreadyExists);
}

/// `RetryPolicy::max_attempts` bounds the attempts whatever time is left: a writer that
/// lost the race gives up after its last attempt, committing nothing.
#[test]
fn max_attempts_bounds_the_commit_loop() {
    let t = table();
    let s = t.snapshot().unwrap();
    t.append([batch(&[4], "y")], &WriteOptions::default())
        .unwrap();
    let limited = |max| {
        WriteOptions::default()
            .with_read_snapshot(s.clone())
            .with_retry(alluvium::RetryPolicy::default().with_max_attempts(max))
    };
    // The first attempt takes the version the other append took: one attempt is not enough.
    let e = t.append([batch(&[5], "y")], &limited(1)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Contention, "{e}");
    assert!(e.is_retryable());
    assert_eq!(t.snapshot().unwrap().version(), s.version() + 1);
    // Two attempts rebase and land.
    let o = t.append([batch(&[5], "y")], &limited(2)).unwrap();
    assert_eq!(o.report().unwrap().commit.attempts, 2);
}
