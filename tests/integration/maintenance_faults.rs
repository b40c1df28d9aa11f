//! Fault injection at every storage operation of OPTIMIZE and VACUUM (SPEC.md §10, §16,
//! §17). A table is built without faults; then a maintenance workload (multi-commit
//! OPTIMIZE, VACUUM after the retention passed, Z-order OPTIMIZE, VACUUM lite) runs against
//! a store that fails its k-th operation in one of four ways (error before, error after,
//! crash before, crash after). Afterwards, from storage alone:
//! * the table loads and its rows are exactly the rows it had before maintenance;
//! * every version inside the retention window reads, with those same rows (VACUUM never
//!   deleted a file one of them needs);
//! * it stays writable.

use crate::fault_workload;

use std::sync::Arc;

use alluvium::{ScanBuilder, Table, VersionSpec, WriteOptions};
use alluvium_compaction::optimize::OptimizeOptions;
use alluvium_compaction::vacuum::{VacuumMode, VacuumOptions};
use alluvium_storage::{Fault, FaultyStore};
use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use fault_workload::Setup;

const DAY_MS: i64 = 86_400_000;

#[derive(Clone, Copy, Debug)]
enum Op {
    /// Bin-packing, one commit per bin.
    Optimize,
    /// Z-order by `x, y`.
    ZOrder,
    AdvanceDays(i64),
    /// VACUUM with the table's retention (or, on disk where the clock cannot move, a
    /// forced retention of 0 hours).
    Vacuum(VacuumMode),
}

const WORKLOAD: &[Op] = &[
    Op::Optimize,
    Op::AdvanceDays(8),
    Op::Vacuum(VacuumMode::Full),
    Op::ZOrder,
    Op::Vacuum(VacuumMode::Lite),
];

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("x", DataType::Int64, true),
        Field::new("y", DataType::Int64, true),
        Field::new("p", DataType::Utf8, true),
    ]))
}

fn batch(i: i64) -> RecordBatch {
    let p = if i % 2 == 0 { "a" } else { "b" };
    RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from(vec![i, i + 100])) as ArrayRef,
            Arc::new(Int64Array::from(vec![50 - i, i * 7])),
            Arc::new(StringArray::from(vec![p, p])),
        ],
    )
    .unwrap()
}

fn rows_at(t: &Table, spec: VersionSpec) -> Result<Vec<(i64, i64)>, String> {
    let snapshot = t.snapshot_at(spec).map_err(|e| e.to_string())?;
    let batches = ScanBuilder::new(snapshot)
        .with_columns(["x", "y"])
        .build()
        .and_then(|s| s.execute_to_vec())
        .map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for b in &batches {
        let x = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        let y = b.column(1).as_any().downcast_ref::<Int64Array>().unwrap();
        for i in 0..b.num_rows() {
            out.push((x.value(i), y.value(i)));
        }
    }
    out.sort();
    Ok(out)
}

fn build(setup: &Setup) -> Vec<(i64, i64)> {
    let t = Table::from_store(setup.store.clone());
    t.create(&schema(), &["p".into()], alluvium::NO_PROPERTIES)
        .unwrap();
    for i in 0..12 {
        t.append([batch(i)], &WriteOptions::default()).unwrap();
    }
    t.delete_str("x = 3", &WriteOptions::default()).unwrap();
    rows_at(&t, VersionSpec::Latest).unwrap()
}

fn run(t: &Table, op: Op, setup: &Setup) -> alluvium::Result<()> {
    match op {
        Op::Optimize => {
            let largest = t.snapshot()?.files().map(|f| f.size()).max().unwrap_or(1);
            t.optimize(
                &OptimizeOptions::default()
                    .with_target_size(u64::try_from(largest * 4).unwrap_or(1))
                    .with_max_commit_bytes(1),
            )?;
        }
        Op::ZOrder => {
            t.optimize(&OptimizeOptions::default().with_zorder_by(vec!["x".into(), "y".into()]))?;
        }
        Op::AdvanceDays(d) => (setup.advance)(d * DAY_MS),
        Op::Vacuum(mode) => {
            let mut o = VacuumOptions::default().with_mode(mode);
            if !setup.clock_moves {
                o.retention_hours = Some(0.0);
                o.force = true;
            }
            t.vacuum(&o)?;
        }
    }
    Ok(())
}

/// Runs the workload with one fault; returns the number of store operations it made.
fn run_with_fault(make: &dyn Fn() -> Setup, at: u64, fault: Fault) -> u64 {
    let setup = make();
    let expected = build(&setup);
    let faulty = Arc::new(FaultyStore::new(setup.store.clone(), at, fault));
    let t = Table::from_store(faulty.clone());
    for op in WORKLOAD {
        match run(&t, *op, &setup) {
            Ok(()) => {}
            Err(_) if faulty.crashed() => break,
            Err(_) => {}
        }
    }
    let ops = faulty.operations();
    let ctx = format!("fault {fault:?} at operation {at}");

    let t = Table::from_store(setup.store.clone());
    let latest = t
        .snapshot()
        .unwrap_or_else(|e| panic!("{ctx}: table does not load: {e}"));
    assert_eq!(
        rows_at(&t, VersionSpec::Latest).unwrap_or_else(|e| panic!("{ctx}: {e}")),
        expected,
        "{ctx}: rows changed"
    );
    // Every version inside the retention window still reads whole.
    let window_start = if !setup.clock_moves {
        latest.version()
    } else {
        let cutoff = setup.store.now_ms() - 7 * DAY_MS;
        t.snapshot_at(VersionSpec::Timestamp(cutoff))
            .map_or(0, |s| s.version())
    };
    for v in window_start..=latest.version() {
        let rows = rows_at(&t, VersionSpec::Version(v))
            .unwrap_or_else(|e| panic!("{ctx}: retained version {v} unreadable: {e}"));
        if v >= 13 {
            assert_eq!(rows, expected, "{ctx}: version {v}");
        }
    }
    t.append([batch(1000)], &WriteOptions::default())
        .unwrap_or_else(|e| panic!("{ctx}: not writable: {e}"));
    ops
}

fn sweep(make: &dyn Fn() -> Setup) {
    let total = run_with_fault(make, 0, Fault::ErrorBefore);
    assert!(
        total > 30,
        "the workload should touch storage many times, did {total}"
    );
    eprintln!(
        "maintenance fault sweep over {total} operations x {} kinds",
        Fault::ALL.len()
    );
    for fault in Fault::ALL {
        for at in 1..=total {
            run_with_fault(make, at, fault);
        }
    }
}

#[test]
fn every_fault_in_optimize_and_vacuum_in_memory() {
    sweep(&Setup::in_memory);
}

#[test]
fn every_fault_in_optimize_and_vacuum_on_local_disk() {
    sweep(&Setup::on_disk);
}
