//! Fault injection at every storage operation of a reference workload (reliability plan K;
//! SPEC.md §10). For each operation k and each fault kind (error before the effect, error
//! after it (lost response), crash before, crash after), the workload runs against a store
//! that injects the fault at operation k. Afterwards the table, reopened from storage alone:
//! * opens (or, if creation never landed, is reported as not found);
//! * has a contiguous, parseable log;
//! * holds exactly the acknowledged commits, plus at most the one whose outcome was
//!   reported unknown;
//! * holds exactly the rows those commits imply, every referenced data file present;
//! * stays writable.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use alluvium::mvcc::MvccError;
use alluvium::storage::{Fault, FaultyStore, InMemoryStore, LocalFsStore, ObjectStore, StoreRef};
use alluvium::txlog::LogError;
use alluvium::txlog::actions::Action;
use alluvium::txlog::commit::decode_commit;
use alluvium::txlog::log_path::{LogFileKind, commit_path};
use alluvium::txlog::segment::list_log_from;
use alluvium::{Error, ScanBuilder, Table, WriteOptions, WriteOutcome};
use arrow::array::{Array, ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("p", DataType::Utf8, true),
    ]))
}

fn batch(rows: &[(i64, &str)]) -> RecordBatch {
    RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from(
                rows.iter().map(|r| r.0).collect::<Vec<_>>(),
            )) as ArrayRef,
            Arc::new(StringArray::from(
                rows.iter().map(|r| r.1).collect::<Vec<_>>(),
            )),
        ],
    )
    .unwrap()
}

#[derive(Clone, Copy)]
enum Op {
    Create,
    Append(&'static [(i64, &'static str)]),
    AppendOnce(&'static [(i64, &'static str)], i64),
    Delete(i64),
    OverwriteP(&'static str, &'static [(i64, &'static str)]),
}

const WORKLOAD: &[Op] = &[
    Op::Create,
    Op::Append(&[(1, "a"), (2, "a"), (3, "b")]),
    Op::AppendOnce(&[(4, "b")], 1),
    Op::Delete(2),
    Op::OverwriteP("b", &[(5, "b")]),
    Op::Append(&[(6, "c")]),
];

/// The rows after applying `ops` (a pure model of the workload).
fn model(ops: &[Op]) -> Vec<(i64, String)> {
    let mut rows: Vec<(i64, String)> = Vec::new();
    for op in ops {
        match op {
            Op::Create => {}
            Op::Append(r) | Op::AppendOnce(r, _) => {
                rows.extend(r.iter().map(|(i, p)| (*i, p.to_string())))
            }
            Op::Delete(id) => rows.retain(|(i, _)| i != id),
            Op::OverwriteP(p, r) => {
                rows.retain(|(_, q)| q != p);
                rows.extend(r.iter().map(|(i, p)| (*i, p.to_string())));
            }
        }
    }
    rows.sort();
    rows
}

fn run(table: &Table, op: Op) -> alluvium::Result<Option<String>> {
    let o = WriteOptions::default();
    let outcome = match op {
        Op::Create => {
            return table
                .create(&schema(), &["p".into()], &HashMap::new())
                .map(|r| Some(r.txn_id));
        }
        Op::Append(r) => table.append([batch(r)], &o)?,
        Op::AppendOnce(r, v) => table.append(
            [batch(r)],
            &WriteOptions {
                app_transaction: Some(("app".into(), v)),
                ..o
            },
        )?,
        Op::Delete(id) => table.delete(&format!("id = {id}"), &o)?,
        Op::OverwriteP(p, r) => table.overwrite([batch(r)], Some(&format!("p = '{p}'")), &o)?,
    };
    Ok(match outcome {
        WriteOutcome::Committed(r) => Some(r.txn_id),
        WriteOutcome::Skipped { .. } => None,
    })
}

fn rows_of(table: &Table) -> Vec<(i64, String)> {
    let batches = ScanBuilder::new(table.snapshot().unwrap())
        .with_columns(["id", "p"])
        .build()
        .unwrap()
        .execute()
        .unwrap();
    let mut out = Vec::new();
    for b in &batches {
        let ids = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        let ps = b.column(1).as_any().downcast_ref::<StringArray>().unwrap();
        for i in 0..b.num_rows() {
            out.push((ids.value(i), ps.value(i).to_string()));
        }
    }
    out.sort();
    out
}

/// Runs the workload with one fault and checks the invariants. Returns the number of store
/// operations the run performed.
fn run_with_fault(inner: StoreRef, at: u64, fault: Fault) -> u64 {
    let faulty = Arc::new(FaultyStore::new(inner.clone(), at, fault));
    let table = Table::from_store(faulty.clone());
    let mut acked: Vec<(usize, String)> = Vec::new();
    let mut unknown: Option<(usize, String)> = None;
    for (i, op) in WORKLOAD.iter().enumerate() {
        match run(&table, *op) {
            Ok(Some(txn)) => acked.push((i, txn)),
            Ok(None) => {}
            Err(Error::Mvcc(MvccError::CommitOutcomeUnknown { txn_id, .. })) => {
                unknown = Some((i, txn_id));
                break;
            }
            Err(_) if faulty.crashed() => break,
            // A definite failure (e.g. a failed read while planning): nothing committed; the
            // workload goes on, as an application would after reporting it.
            Err(_) => {}
        }
    }
    let ops = faulty.operations();
    let ctx = format!("fault {fault:?} at operation {at}");

    // Reopen from storage alone.
    let table = Table::from_store(inner.clone());
    let listing = list_log_from(inner.as_ref(), 0).unwrap();
    let versions: Vec<u64> = listing
        .iter()
        .filter(|f| f.kind == LogFileKind::Commit)
        .map(|f| f.version)
        .collect();
    if versions.is_empty() {
        assert!(acked.is_empty(), "{ctx}: acknowledged commits but no log");
        let e = table.snapshot().unwrap_err();
        assert!(
            matches!(e.as_log_error(), Some(LogError::TableNotFound { .. })),
            "{ctx}: {e}"
        );
        return ops;
    }
    assert_eq!(
        versions,
        (0..versions.len() as u64).collect::<Vec<_>>(),
        "{ctx}: log not contiguous"
    );
    let mut in_log: Vec<String> = Vec::new();
    for v in &versions {
        let p = commit_path(*v);
        let actions = decode_commit(p.as_str(), &inner.get(&p).unwrap())
            .unwrap_or_else(|e| panic!("{ctx}: torn commit {v}: {e}"));
        in_log.extend(actions.iter().filter_map(|a| match a {
            Action::CommitInfo(ci) => ci.txn_id().map(str::to_string),
            _ => None,
        }));
    }
    let in_log_set: HashSet<&String> = in_log.iter().collect();
    assert_eq!(
        in_log_set.len(),
        in_log.len(),
        "{ctx}: a commit landed twice"
    );
    for (i, txn) in &acked {
        assert!(
            in_log_set.contains(txn),
            "{ctx}: acknowledged operation {i} is not in the log"
        );
    }
    let extra: Vec<&String> = in_log
        .iter()
        .filter(|t| !acked.iter().any(|(_, a)| a == *t))
        .collect();
    assert!(extra.len() <= 1, "{ctx}: unacknowledged commits {extra:?}");
    let mut landed: Vec<usize> = acked.iter().map(|(i, _)| *i).collect();
    if let Some(t) = extra.first() {
        let (i, u) = unknown.clone().unwrap_or_else(|| {
            panic!("{ctx}: commit {t} landed but its writer got a definite error")
        });
        assert_eq!(&u, *t, "{ctx}");
        landed.push(i);
    }
    landed.sort_unstable();
    // Skipped idempotent replays count as landed when their first run did.
    let ops_landed: Vec<Op> = landed.iter().map(|i| WORKLOAD[*i]).collect();
    assert_eq!(
        rows_of(&table),
        model(&ops_landed),
        "{ctx}: rows differ from the landed commits"
    );

    // Still writable.
    table
        .append([batch(&[(100, "z")])], &WriteOptions::default())
        .unwrap_or_else(|e| panic!("{ctx}: not writable: {e}"));
    let mut expected = model(&ops_landed);
    expected.push((100, "z".into()));
    expected.sort();
    assert_eq!(rows_of(&table), expected, "{ctx}");
    ops
}

fn sweep(make: impl Fn() -> (StoreRef, Option<tempfile::TempDir>)) {
    let (store, _dir) = make();
    let total = run_with_fault(store, 0, Fault::ErrorBefore);
    assert!(
        total > 20,
        "the workload should touch storage many times, did {total}"
    );
    eprintln!(
        "fault sweep over {total} operations x {} kinds",
        Fault::ALL.len()
    );
    for fault in Fault::ALL {
        for at in 1..=total {
            let (store, _dir) = make();
            run_with_fault(store, at, fault);
        }
    }
}

#[test]
fn every_fault_at_every_operation_in_memory() {
    sweep(|| (Arc::new(InMemoryStore::new()), None));
}

#[test]
fn every_fault_at_every_operation_on_local_disk() {
    sweep(|| {
        let dir = tempfile::tempdir().unwrap();
        let store: StoreRef = Arc::new(LocalFsStore::new(dir.path()).with_durability(false));
        (store, Some(dir))
    });
}
