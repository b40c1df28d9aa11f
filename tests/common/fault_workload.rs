//! The fault-injection workload of `tests/integration/faults.rs` (SPEC.md §10),
//! shared with the object-store tests (`tests/integration/s3.rs`): the operations, their pure model,
//! the invariant checks after a fault, and the sweeps over every operation.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use alluvium::{Error, ScanBuilder, Table, WriteOptions, WriteOutcome};
use alluvium_mvcc::MvccError;
use alluvium_storage::{Fault, FaultyStore, StoreRef};
use alluvium_txlog::LogError;
use alluvium_txlog::actions::Action;
use alluvium_txlog::commit::decode_commit;
use alluvium_txlog::log_path::{LogFileKind, commit_path};
use alluvium_txlog::segment::{earliest_readable_version, list_log_from};
use arrow::array::{Array, ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};

pub fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("p", DataType::Utf8, true),
    ]))
}

pub fn batch(rows: &[(i64, &str)]) -> RecordBatch {
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
pub enum Op {
    Create,
    /// Create with deletion vectors enabled (DELETE then writes DVs).
    CreateDv,
    /// Create with change data feed on (copy-on-write DELETE and MERGE write cdc files).
    CreateCdf,
    /// Create with a checkpoint every 2 commits and a log retention of 1 day.
    CreateCheckpointing,
    /// Move the store clock forward (in-memory stores; no-op on disk).
    AdvanceDays(i64),
    /// An explicit checkpoint of the latest version.
    Checkpoint,
    /// An explicit log cleanup.
    CleanupLog,
    Append(&'static [(i64, &'static str)]),
    AppendOnce(&'static [(i64, &'static str)], i64),
    Delete(i64),
    /// DELETE writing its DVs to a DV file whatever their size (`dv_files_only`), as Delta
    /// Spark does; `Delete` puts a DV this small inline in the log.
    DeleteToDvFile(i64),
    OverwriteP(&'static str, &'static [(i64, &'static str)]),
    /// MERGE upsert on `id`: matched rows take the source's `p`, new ids are inserted.
    Upsert(&'static [(i64, &'static str)]),
    /// `Upsert` writing its DVs to a DV file whatever their size (`dv_files_only`).
    UpsertToDvFile(&'static [(i64, &'static str)]),
}

pub const WORKLOAD: &[Op] = &[
    Op::Create,
    Op::Append(&[(1, "a"), (2, "a"), (3, "b")]),
    Op::AppendOnce(&[(4, "b")], 1),
    Op::Delete(2),
    Op::OverwriteP("b", &[(5, "b")]),
    Op::Append(&[(6, "c")]),
];

/// MERGE upserts (updates moving rows between partitions, and inserts), with and without
/// deletion vectors.
pub const MERGE_WORKLOAD: &[Op] = &[
    Op::Create,
    Op::Append(&[(1, "a"), (2, "a"), (3, "b")]),
    Op::Upsert(&[(2, "b"), (4, "a")]),
    Op::Upsert(&[(1, "c"), (3, "b"), (5, "c")]),
];

/// [`MERGE_WORKLOAD`] on a table with deletion vectors.
pub const MERGE_DV_WORKLOAD: &[Op] = &[
    Op::CreateDv,
    Op::Append(&[(1, "a"), (2, "a"), (3, "b")]),
    Op::UpsertToDvFile(&[(2, "b"), (4, "a")]),
    Op::Upsert(&[(1, "c"), (3, "b"), (5, "c")]),
];

/// DELETEs by deletion vector: a new DV in a DV file, that DV extended into a new inline
/// DV, a file whose last live row goes (a plain remove), around appends.
pub const DV_WORKLOAD: &[Op] = &[
    Op::CreateDv,
    Op::Append(&[(1, "a"), (2, "a"), (3, "a")]),
    Op::DeleteToDvFile(2),
    Op::Append(&[(4, "a")]),
    Op::Delete(3),
    Op::Delete(1),
];

/// Copy-on-write DELETE and MERGE on a change-data-feed table: each uploads cdc files
/// before its commit.
pub const CDF_WORKLOAD: &[Op] = &[
    Op::CreateCdf,
    Op::Append(&[(1, "a"), (2, "a"), (3, "b")]),
    Op::Delete(2),
    Op::Upsert(&[(1, "c"), (3, "b"), (5, "c")]),
    Op::Append(&[(6, "c")]),
];

pub const CHECKPOINT_WORKLOAD: &[Op] = &[
    Op::CreateCheckpointing,
    Op::Append(&[(1, "a"), (2, "a")]),
    Op::Append(&[(3, "b")]), // version 2: automatic checkpoint
    Op::Delete(1),
    Op::AdvanceDays(3),
    Op::Append(&[(4, "c")]), // version 4: checkpoint, then cleanup below it
    Op::Checkpoint,
    Op::OverwriteP("c", &[(5, "c")]),
    Op::CleanupLog,
];

/// The rows after applying `ops` (a pure model of the workload).
pub fn model(ops: &[Op]) -> Vec<(i64, String)> {
    let mut rows: Vec<(i64, String)> = Vec::new();
    for op in ops {
        match op {
            Op::Create
            | Op::CreateDv
            | Op::CreateCdf
            | Op::CreateCheckpointing
            | Op::AdvanceDays(_)
            | Op::Checkpoint
            | Op::CleanupLog => {}
            Op::Append(r) | Op::AppendOnce(r, _) => {
                rows.extend(r.iter().map(|(i, p)| (*i, p.to_string())))
            }
            Op::Delete(id) | Op::DeleteToDvFile(id) => rows.retain(|(i, _)| i != id),
            Op::OverwriteP(p, r) => {
                rows.retain(|(_, q)| q != p);
                rows.extend(r.iter().map(|(i, p)| (*i, p.to_string())));
            }
            Op::Upsert(r) | Op::UpsertToDvFile(r) => {
                for (i, p) in r.iter() {
                    match rows.iter_mut().find(|(j, _)| j == i) {
                        Some(row) => row.1 = p.to_string(),
                        None => rows.push((*i, p.to_string())),
                    }
                }
            }
        }
    }
    rows.sort();
    rows
}

/// Runs one operation; returns the transaction id and version of the commit it made.
pub fn run(
    table: &Table,
    op: Op,
    advance: &dyn Fn(i64),
) -> alluvium::Result<Option<(String, u64)>> {
    let o = WriteOptions::default();
    let outcome = match op {
        Op::Create => {
            return table
                .create(&schema(), &["p".into()], alluvium::NO_PROPERTIES)
                .map(|r| Some((r.commit.txn_id, r.commit.version)));
        }
        Op::CreateDv => {
            let props = HashMap::from([(
                "delta.enableDeletionVectors".to_string(),
                "true".to_string(),
            )]);
            return table
                .create(&schema(), &["p".into()], &props)
                .map(|r| Some((r.commit.txn_id, r.commit.version)));
        }
        Op::CreateCdf => {
            let props =
                HashMap::from([("delta.enableChangeDataFeed".to_string(), "true".to_string())]);
            return table
                .create(&schema(), &["p".into()], &props)
                .map(|r| Some((r.commit.txn_id, r.commit.version)));
        }
        Op::CreateCheckpointing => {
            let props = HashMap::from([
                ("delta.checkpointInterval".to_string(), "2".to_string()),
                (
                    "delta.logRetentionDuration".to_string(),
                    "interval 1 days".to_string(),
                ),
            ]);
            return table
                .create(&schema(), &["p".into()], &props)
                .map(|r| Some((r.commit.txn_id, r.commit.version)));
        }
        Op::AdvanceDays(d) => {
            advance(d * 86_400_000);
            return Ok(None);
        }
        Op::Checkpoint => {
            table.checkpoint(&alluvium_compaction::CheckpointConfig::default())?;
            return Ok(None);
        }
        Op::CleanupLog => {
            table.cleanup_log(false)?;
            return Ok(None);
        }
        Op::Append(r) => table.append([batch(r)], &o)?,
        Op::AppendOnce(r, v) => table.append(
            [batch(r)],
            &o.with_app_transaction(alluvium::AppTransaction::new("app", v)),
        )?,
        Op::Delete(id) => table.delete_str(&format!("id = {id}"), &o)?.outcome,
        Op::DeleteToDvFile(id) => {
            table
                .delete_str(&format!("id = {id}"), &o.with_dv_files_only(true))?
                .outcome
        }
        Op::OverwriteP(p, r) => table.overwrite_str([batch(r)], Some(&format!("p = '{p}'")), &o)?,
        Op::Upsert(r) => {
            table
                .merge([batch(r)], "t.id = s.id")
                .when("MATCHED THEN UPDATE SET *")
                .when("NOT MATCHED THEN INSERT *")
                .execute(&o)?
                .outcome
        }
        Op::UpsertToDvFile(r) => {
            table
                .merge([batch(r)], "t.id = s.id")
                .when("MATCHED THEN UPDATE SET *")
                .when("NOT MATCHED THEN INSERT *")
                .execute(&o.with_dv_files_only(true))?
                .outcome
        }
    };
    Ok(match outcome {
        WriteOutcome::Committed(r) => Some((r.commit.txn_id, r.commit.version)),
        WriteOutcome::Skipped { .. } => None,
    })
}

pub fn rows_of(table: &Table) -> Vec<(i64, String)> {
    let batches = ScanBuilder::new(table.snapshot().unwrap())
        .with_columns(["id", "p"])
        .build()
        .unwrap()
        .execute_to_vec()
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

/// A store for one run, the clock control of the workload, and what keeps it alive.
pub struct Setup {
    /// The store the workload runs on (faults are injected in front of it).
    pub store: StoreRef,
    /// Moves the store clock forward by this many milliseconds (a no-op where the clock
    /// cannot move).
    pub advance: Box<dyn Fn(i64)>,
    /// Whether `advance` moves the store's clock (false where files get the wall clock's
    /// times, so waiting out a retention is not possible).
    pub clock_moves: bool,
    /// Keeps a temporary directory alive.
    pub _dir: Option<tempfile::TempDir>,
}

impl Setup {
    /// A fresh in-memory store with a manual clock.
    pub fn in_memory() -> Setup {
        let store =
            Arc::new(alluvium_storage::InMemoryStore::new().with_manual_clock(1_700_000_000_000));
        let clock = store.clone();
        Setup {
            store,
            advance: Box::new(move |ms| clock.advance_clock(ms)),
            clock_moves: true,
            _dir: None,
        }
    }

    /// A fresh local directory (without fsync: faults here are injected, not power cuts).
    pub fn on_disk() -> Setup {
        let dir = tempfile::tempdir().unwrap();
        Setup {
            store: Arc::new(alluvium_storage::LocalFsStore::new(dir.path()).with_durability(false)),
            advance: Box::new(|_| {}),
            clock_moves: false,
            _dir: Some(dir),
        }
    }
}

/// Runs `workload` with one fault and checks the invariants. Returns the number of store
/// operations the run performed.
pub fn run_with_fault(setup: &Setup, workload: &[Op], at: u64, fault: Fault) -> u64 {
    let inner = setup.store.clone();
    let faulty = Arc::new(FaultyStore::new(inner.clone(), at, fault));
    let table = Table::from_store(faulty.clone());
    let mut acked: Vec<(usize, String, u64)> = Vec::new();
    let mut unknown: Option<(usize, String)> = None;
    for (i, op) in workload.iter().enumerate() {
        match run(&table, *op, &*setup.advance) {
            Ok(Some((txn, version))) => acked.push((i, txn, version)),
            Ok(None) => {}
            Err(Error::Mvcc(MvccError::CommitOutcomeUnknown { txn_id, .. })) => {
                unknown = Some((i, txn_id));
                break;
            }
            Err(_) if faulty.crashed() => break,
            // A definite failure (e.g. a failed read while planning, a failed checkpoint):
            // nothing committed; the workload goes on, as an application would after
            // reporting it.
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
    let Some(&first) = versions.first() else {
        assert!(acked.is_empty(), "{ctx}: acknowledged commits but no log");
        let e = table.snapshot().unwrap_err();
        assert!(
            matches!(e.as_log_error(), Some(LogError::TableNotFound { .. })),
            "{ctx}: {e}"
        );
        return ops;
    };
    assert_eq!(
        versions,
        (first..first + versions.len() as u64).collect::<Vec<_>>(),
        "{ctx}: log not contiguous"
    );
    // Commits were only removed below a checkpoint the rest replays from. A crash inside
    // cleanup may leave some commits below that checkpoint (removal goes oldest first):
    // those versions are no longer readable, and say so with a typed error.
    let earliest = earliest_readable_version(&listing);
    assert!(
        first == 0 || earliest.is_some(),
        "{ctx}: commits below {first} removed without a checkpoint to replace them"
    );
    for v in first..earliest.unwrap_or(first) {
        let e = table
            .snapshot_at(alluvium::VersionSpec::Version(v))
            .unwrap_err();
        assert!(
            matches!(e.as_log_error(), Some(LogError::VersionNotFound { .. })),
            "{ctx}: version {v}: {e}"
        );
    }
    let mut in_log: Vec<String> = Vec::new();
    for v in &versions {
        let p = commit_path(*v);
        let actions = decode_commit(p.as_str(), &inner.get(&p).unwrap())
            .unwrap_or_else(|e| panic!("{ctx}: torn commit {v}: {e}"));
        in_log.extend(actions.iter().filter_map(|a| match a {
            Action::CommitInfo(ci) => ci.txn_id().map(str::to_string),
            _ => None,
        }));
        // A change-data file a commit names was uploaded whole before it.
        for a in &actions {
            if let Action::Cdc(c) = a {
                let key = alluvium_txlog::path::percent_decode(&c.path).unwrap();
                let bytes = inner
                    .get(&alluvium_storage::StorePath::parse(key).unwrap())
                    .unwrap_or_else(|e| panic!("{ctx}: cdc file {} of version {v}: {e}", c.path));
                assert_eq!(bytes.len() as i64, c.size, "{ctx}: cdc file {}", c.path);
            }
        }
    }
    let in_log_set: HashSet<&String> = in_log.iter().collect();
    assert_eq!(
        in_log_set.len(),
        in_log.len(),
        "{ctx}: a commit landed twice"
    );
    for (i, txn, version) in &acked {
        assert!(
            *version < first || in_log_set.contains(txn),
            "{ctx}: acknowledged operation {i} is not in the log"
        );
    }
    let extra: Vec<&String> = in_log
        .iter()
        .filter(|t| !acked.iter().any(|(_, a, _)| a == *t))
        .collect();
    assert!(extra.len() <= 1, "{ctx}: unacknowledged commits {extra:?}");
    let mut landed: Vec<usize> = acked.iter().map(|(i, _, _)| *i).collect();
    if let Some(t) = extra.first() {
        let (i, u) = unknown.clone().unwrap_or_else(|| {
            panic!("{ctx}: commit {t} landed but its writer got a definite error")
        });
        assert_eq!(&u, *t, "{ctx}");
        landed.push(i);
    }
    landed.sort_unstable();
    // Skipped idempotent replays count as landed when their first run did.
    let ops_landed: Vec<Op> = landed.iter().map(|i| workload[*i]).collect();
    assert_eq!(
        rows_of(&table),
        model(&ops_landed),
        "{ctx}: rows differ from the landed commits"
    );

    // No checkpoint is torn: loads never have to skip one, at any retained version.
    let latest = table.snapshot().unwrap();
    assert!(
        latest.report().skipped_checkpoints.is_empty(),
        "{ctx}: {:?}",
        latest.report()
    );
    for v in earliest.unwrap_or(first)..=latest.version() {
        let s = table
            .snapshot_at(alluvium::VersionSpec::Version(v))
            .unwrap_or_else(|e| panic!("{ctx}: version {v} unreadable: {e}"));
        assert!(
            s.report().skipped_checkpoints.is_empty(),
            "{ctx}: version {v}: {:?}",
            s.report()
        );
    }

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

pub fn sweep(workload: &[Op], make: impl Fn() -> Setup) {
    sweep_every(workload, make, 1);
}

/// [`sweep`] injecting each fault kind at every `stride`-th operation only (starting at a
/// different offset for each kind, so that together the kinds cover more operations), for
/// stores where every run is slow (object stores).
pub fn sweep_every(workload: &[Op], make: impl Fn() -> Setup, stride: u64) {
    let stride = stride.max(1);
    let total = run_with_fault(&make(), workload, 0, Fault::ErrorBefore);
    assert!(
        total > 20,
        "the workload should touch storage many times, did {total}"
    );
    eprintln!(
        "fault sweep over {total} operations x {} kinds",
        Fault::ALL.len()
    );
    for (k, fault) in Fault::ALL.into_iter().enumerate() {
        let mut at = 1 + (k as u64 % stride);
        while at <= total {
            run_with_fault(&make(), workload, at, fault);
            at += stride;
        }
    }
}
