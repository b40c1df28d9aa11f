//! Fault injection at every storage operation of a group commit (SPEC.md §10, §35).
//!
//! A group of four members (two that commit, one whose application version the table
//! already records, one whose application a concurrent commit records meanwhile) is
//! committed after a concurrent append has taken the version it reads from, so the group
//! loses the put-if-absent race, reads the winner, re-reads the table for the application
//! it recorded, and commits the rest on top. For each storage operation of that commit
//! and each fault kind (error before or after the effect, crash before or after), the
//! outcome every member was told must be true of the log, read afterwards from storage
//! alone:
//! * a member told `Committed` at version v is in v (its file, the group's `txnId`), and
//!   its row is in the table exactly once;
//! * a member told `Skipped`, or a definite failure, is in no version;
//! * a member told the outcome is unknown is in the version holding the group's `txnId`
//!   if there is one, and in no version otherwise;
//! * no file is in two versions, versions are contiguous, and the table stays writable.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use alluvium::{
    Add, AppTransaction, ScanBuilder, Snapshot, StoreRef, Table, VersionSpec, WriteOptions,
};
use alluvium_mvcc::group::{GroupCommit, MemberOutcome};
use alluvium_mvcc::snapshot::VersionedCache;
use alluvium_mvcc::{GroupCommitOptions, MvccError, Result as MvccResult, Transaction};
use alluvium_storage::{Fault, FaultyStore};
use alluvium_txlog::actions::Action;
use alluvium_txlog::commit::decode_commit;
use alluvium_txlog::log_path::{LogFileKind, commit_path};
use alluvium_txlog::segment::list_log_from;
use arrow::array::{Int64Array, RecordBatch};

use crate::fault_workload::{Setup, batch, schema};

fn app(id: &str, v: i64) -> WriteOptions {
    WriteOptions::default().with_app_transaction(AppTransaction::new(id, v))
}

/// The members: (row id, application).
const MEMBERS: [(i64, Option<&str>); 4] =
    [(1, Some("a")), (2, None), (3, Some("done")), (4, Some("d"))];

/// Runs the group commit with `fault` at operation `at` (0: none) of the faulty store;
/// returns the operations the store saw before the group commit and in all, and checks
/// the invariants.
fn run(setup: &Setup, at: u64, fault: Fault) -> (u64, u64) {
    let inner = setup.store.clone();
    let plain = Table::from_store(inner.clone());
    plain
        .create(&schema(), &[], alluvium::NO_PROPERTIES)
        .unwrap();
    plain.append([batch(&[(0, "a")])], &app("done", 1)).unwrap();
    let files: Vec<Vec<Add>> = MEMBERS
        .iter()
        .map(|(id, _)| {
            plain
                .write_data_files([batch(&[(*id, "a")])], None)
                .unwrap()
        })
        .collect();
    let faulty = Arc::new(FaultyStore::new(inner.clone(), at, fault));
    let faulty_ref: StoreRef = faulty.clone();
    let snapshot = match Snapshot::load(faulty_ref, VersionSpec::Latest) {
        Ok(s) => s,
        // The fault hit the load, before any group commit: nothing to check.
        Err(_) => return (faulty.operations(), faulty.operations()),
    };
    let before = faulty.operations();
    // A concurrent writer takes the next version and records application `d`.
    plain.append([batch(&[(9, "b")])], &app("d", 1)).unwrap();
    let members: Vec<Transaction> = MEMBERS
        .iter()
        .zip(&files)
        .map(|((_, app), adds)| {
            let mut m = Transaction::new(&crate::mvcc(&snapshot), "WRITE");
            m.set_parameter("mode", "Append");
            for a in adds {
                m.add_file(a.clone());
            }
            if let Some(app) = app {
                m.set_app_transaction(app, 1, 0);
            }
            m
        })
        .collect();
    let group = GroupCommit::new(
        Arc::new(VersionedCache::new()),
        GroupCommitOptions::default(),
    );
    let outcomes = group.commit_together(members);
    let total = faulty.operations();
    check(
        &inner,
        &files,
        &outcomes,
        &format!("{fault:?} at operation {at}"),
    );
    (before, total)
}

fn check(inner: &StoreRef, files: &[Vec<Add>], outcomes: &[MvccResult<MemberOutcome>], ctx: &str) {
    let listing = list_log_from(inner.as_ref(), 0).unwrap();
    let versions: Vec<u64> = listing
        .iter()
        .filter(|f| f.kind == LogFileKind::Commit)
        .map(|f| f.version)
        .collect();
    assert_eq!(
        versions,
        (0..versions.len() as u64).collect::<Vec<_>>(),
        "{ctx}: log not contiguous"
    );
    // path -> (version, txnId) of every add in the log.
    let mut added: HashMap<String, (u64, String)> = HashMap::new();
    let mut txn_ids: HashMap<String, u64> = HashMap::new();
    for v in &versions {
        let p = commit_path(*v);
        let actions = decode_commit(p.as_str(), &inner.get(&p).unwrap())
            .unwrap_or_else(|e| panic!("{ctx}: torn commit {v}: {e}"));
        let id = actions
            .iter()
            .find_map(|a| match a {
                Action::CommitInfo(ci) => ci.txn_id().map(str::to_string),
                _ => None,
            })
            .unwrap();
        assert!(
            txn_ids.insert(id.clone(), *v).is_none(),
            "{ctx}: a commit landed twice"
        );
        for a in &actions {
            if let Action::Add(add) = a {
                let dup = added.insert(add.path.clone(), (*v, id.clone()));
                assert!(dup.is_none(), "{ctx}: file {} added twice", add.path);
            }
        }
    }
    let table = Table::from_store(inner.clone());
    let rows = live_ids(&table);
    for (((id, _), adds), outcome) in MEMBERS.iter().zip(files).zip(outcomes) {
        let path = &adds[0].path;
        let in_log = added.get(path);
        match outcome {
            Ok(MemberOutcome::Committed(m)) => {
                assert_eq!(
                    in_log,
                    Some(&(m.report.version, m.report.txn_id.clone())),
                    "{ctx}: member {id} told committed at {}",
                    m.report.version
                );
                assert_eq!(
                    rows.iter().filter(|r| *r == id).count(),
                    1,
                    "{ctx}: member {id}"
                );
            }
            Ok(MemberOutcome::Skipped { .. }) => {
                assert!(
                    in_log.is_none(),
                    "{ctx}: member {id} told skipped is in the log"
                );
            }
            Err(MvccError::CommitOutcomeUnknown { txn_id, .. }) => match txn_ids.get(txn_id) {
                Some(v) => assert_eq!(in_log, Some(&(*v, txn_id.clone())), "{ctx}: member {id}"),
                None => assert!(in_log.is_none(), "{ctx}: member {id} unknown yet elsewhere"),
            },
            Err(e) => assert!(
                in_log.is_none(),
                "{ctx}: member {id} failed ({e}) yet committed"
            ),
        }
    }
    let distinct: HashSet<&i64> = rows.iter().collect();
    assert_eq!(distinct.len(), rows.len(), "{ctx}: a row twice: {rows:?}");
    // Still writable.
    table
        .append([batch(&[(100, "z")])], &WriteOptions::default())
        .unwrap_or_else(|e| panic!("{ctx}: not writable afterwards: {e}"));
}

fn live_ids(table: &Table) -> Vec<i64> {
    let batches: Vec<RecordBatch> = ScanBuilder::new(table.snapshot().unwrap())
        .with_columns(["id"])
        .build()
        .unwrap()
        .execute_to_vec()
        .unwrap();
    batches
        .iter()
        .flat_map(|b| {
            b.column(0)
                .as_any()
                .downcast_ref::<Int64Array>()
                .unwrap()
                .values()
                .to_vec()
        })
        .collect()
}

fn sweep(make: fn() -> Setup) {
    // Without a fault: two members commit together, two are skipped (one recorded before,
    // one by the concurrent writer).
    let (before, total) = run(&make(), 0, Fault::ErrorBefore);
    assert!(
        total > before + 3,
        "the group commit made too few requests to sweep"
    );
    eprintln!("sweeping operations {} to {}", before + 1, total + 1);
    for fault in Fault::ALL {
        for at in before + 1..=total + 1 {
            run(&make(), at, fault);
        }
    }
}

#[test]
fn every_fault_at_every_operation_of_a_group_commit_in_memory() {
    let setup = Setup::in_memory();
    let (_, _) = run(&setup, 0, Fault::ErrorBefore);
    let table = Table::from_store(setup.store.clone());
    let log: Vec<usize> = (3..=3)
        .map(|v| {
            let p = commit_path(v);
            decode_commit(p.as_str(), &setup.store.get(&p).unwrap())
                .unwrap()
                .iter()
                .filter(|a| matches!(a, Action::Add(_)))
                .count()
        })
        .collect();
    assert_eq!(
        log,
        vec![2],
        "version 3 is the group of the two members that commit"
    );
    let mut ids = live_ids(&table);
    ids.sort_unstable();
    assert_eq!(ids, vec![0, 1, 2, 9, 100]);
    sweep(Setup::in_memory);
}

#[test]
fn every_fault_at_every_operation_of_a_group_commit_on_local_disk() {
    sweep(Setup::on_disk);
}
