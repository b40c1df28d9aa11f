//! The snapshot a commit hands back (`CommitSummary::snapshot`, SPEC.md §35): the table at
//! the committed version built from the version the operation read and the actions it
//! wrote, without reading the log. It must equal a load of that version in everything a
//! reader sees (files with their statistics and deletion vectors, tombstones, protocol,
//! metadata, application transactions, the commit time); it is `None` when another commit
//! landed between the read and the commit; and the handle's next refresh reads no commit
//! file back.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use alluvium::{
    AppTransaction, CommitSummary, DmlOutcome, Snapshot, StoreRef, Table, VersionSpec,
    WriteOptions, WriteOutcome,
};
use alluvium_storage::{CountingStore, ObjectStore};

use crate::dml_common::{Row, batch, row, schema};

/// Everything a reader of one version sees, in a comparable form.
#[derive(Debug, PartialEq)]
struct Seen {
    version: u64,
    timestamp_ms: i64,
    protocol: alluvium_txlog::actions::Protocol,
    metadata: alluvium_txlog::actions::Metadata,
    files: BTreeMap<String, alluvium_txlog::actions::Add>,
    tombstones: BTreeSet<String>,
    txns: BTreeMap<String, i64>,
}

fn seen(s: &Snapshot) -> Seen {
    Seen {
        version: s.version(),
        timestamp_ms: s.timestamp_ms(),
        protocol: s.protocol().clone(),
        metadata: s.metadata().clone(),
        // `dataChange` describes a commit, not the table: a checkpoint writes it false.
        files: s
            .files()
            .map(|a| {
                let mut a = a.to_add();
                a.data_change = false;
                (a.path.clone(), a)
            })
            .collect(),
        tombstones: s.state().tombstones().map(|r| r.path.clone()).collect(),
        txns: s
            .state()
            .app_transactions()
            .iter()
            .map(|(k, t)| (k.clone(), t.version))
            .collect(),
    }
}

fn summary(outcome: &WriteOutcome) -> &CommitSummary {
    outcome.report().expect("committed")
}

/// The commit's snapshot equals a fresh load of its version.
fn check(t: &Table, what: &str, summary: &CommitSummary) {
    let carried = summary
        .snapshot
        .as_ref()
        .unwrap_or_else(|| panic!("{what}: no snapshot carried"));
    assert_eq!(carried.version(), summary.commit.version, "{what}");
    let loaded = t
        .snapshot_at(VersionSpec::Version(summary.commit.version))
        .unwrap();
    assert_eq!(seen(carried), seen(&loaded), "{what}");
}

fn dml(outcome: &DmlOutcome) -> &CommitSummary {
    summary(&outcome.outcome)
}

#[test]
fn every_operation_carries_the_snapshot_a_load_of_its_version_gives() {
    let dir = tempfile::tempdir().unwrap();
    let t = Table::open(dir.path().to_str().unwrap()).unwrap();
    let props = HashMap::from([
        (
            "delta.enableDeletionVectors".to_string(),
            "true".to_string(),
        ),
        ("delta.checkpointInterval".to_string(), "4".to_string()),
    ]);
    t.create(&schema(), &["k".to_string()], &props).unwrap();
    for i in 0..3 {
        let rows: Vec<Row> = (i * 10..(i + 1) * 10).map(row).collect();
        let out = t.append([batch(&rows)], &WriteOptions::default()).unwrap();
        check(&t, &format!("append {i}"), summary(&out));
    }
    let out = t.delete_str("id = 3", &WriteOptions::default()).unwrap();
    assert!(
        dml(&out)
            .snapshot
            .as_ref()
            .unwrap()
            .files()
            .any(|a| a.deletion_vector().is_some()),
        "the DELETE wrote a deletion vector"
    );
    check(&t, "delete with a deletion vector", dml(&out));
    let out = t
        .update(
            [("v", alluvium::parse_expr("-1").unwrap())],
            Some(&alluvium::parse_expr("id < 5").unwrap()),
            &WriteOptions::default(),
        )
        .unwrap();
    check(&t, "update (past the checkpoint at 4)", dml(&out));
    let out = t
        .append(
            [batch(&[row(100)])],
            &WriteOptions::default().with_app_transaction(AppTransaction::new("app", 7)),
        )
        .unwrap();
    check(&t, "append with an application transaction", summary(&out));
    let out = t.delete_str("k = 'b'", &WriteOptions::default()).unwrap();
    check(&t, "delete of whole files (tombstones)", dml(&out));
    let out = t
        .set_properties([("delta.appendOnly", "false")], &[])
        .unwrap();
    check(&t, "a metadata change", &out);
}

#[test]
fn a_commit_after_another_writers_carries_no_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let location = dir.path().to_str().unwrap();
    let t = Table::open(location).unwrap();
    t.create(&schema(), &[], alluvium::NO_PROPERTIES).unwrap();
    t.append([batch(&[row(1)])], &WriteOptions::default())
        .unwrap();
    let read = t.snapshot().unwrap();
    // Another handle commits after `read` was taken.
    Table::open(location)
        .unwrap()
        .append([batch(&[row(2)])], &WriteOptions::default())
        .unwrap();
    let out = t
        .append(
            [batch(&[row(3)])],
            &WriteOptions::default().with_read_snapshot(read),
        )
        .unwrap();
    let s = summary(&out);
    assert_eq!(s.commit.version, 3);
    assert!(
        s.snapshot.is_none(),
        "rebased over version 2: nothing to carry"
    );
    assert_eq!(t.snapshot().unwrap().files().count(), 3);
}

/// After a commit that carried its snapshot, the handle's next refresh lists the log and
/// reads no commit file: the committed version is already in its cache.
#[test]
fn the_refresh_after_a_commit_reads_no_commit_back() {
    let store = Arc::new(CountingStore::new(Arc::new(alluvium::InMemoryStore::new())));
    let t = Table::from_store(store.clone() as StoreRef);
    t.create(&schema(), &[], alluvium::NO_PROPERTIES).unwrap();
    t.append([batch(&[row(1), row(2)])], &WriteOptions::default())
        .unwrap();
    let out = t.delete_str("id = 1", &WriteOptions::default()).unwrap();
    assert!(dml(&out).snapshot.is_some());
    let before = store.request_counts();
    let latest = t.snapshot().unwrap();
    let after = store.request_counts();
    assert_eq!(latest.version(), 2);
    assert_eq!(after.get - before.get, 0, "a commit was read back");
    assert_eq!(after.list - before.list, 1);
}
