//! Tables on a real S3 API server (SPEC.md §18).
//!
//! Gated on `ALLUVIUM_S3_ENDPOINT` (e.g. `http://127.0.0.1:9753`, the loopback server that
//! `.ci/run` starts and qualifies) and `ALLUVIUM_S3_BUCKET` (default `alluvium`, which must
//! exist); credentials from `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` or
//! `testkey`/`testsecret`. Without the endpoint every test prints that it is skipped and
//! passes. Every test works under its own random prefix.
//!
//! * `conformance_tables_read_back_from_the_bucket`: reference tables uploaded to the
//!   bucket read back exactly as from local disk;
//! * `create_append_delete_checkpoint_optimize_vacuum`: the write and maintenance paths
//!   on `s3://`, with request counts in the reports;
//! * (`racing_writer_processes_commit_every_row_once`, 4 `alluvium append` processes x 25
//!   appends on one table, is in the CLI package's tests);
//! * `fault_sweep_over_s3` / `fault_sweep_while_checkpointing_over_s3`: the fault-injection
//!   workload of `tests/integration/faults.rs` over the S3 backend, lost responses included;
//! * `writes_without_put_if_absent_are_refused_unless_single_writer`: the capability check.
#![cfg(feature = "s3")]

use crate::common;
use crate::fault_workload;
use crate::s3_server;

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;

use alluvium::{Error, ScanBuilder, Table, WriteOptions};
use alluvium_compaction::optimize::OptimizeOptions;
use alluvium_compaction::vacuum::VacuumOptions;
use alluvium_mvcc::MvccError;
use alluvium_storage::{ObjectStore, RemoteStore, StorageOptions, StorePath};
use alluvium_txlog::log_path::LogFileKind;
use alluvium_txlog::segment::list_log_from;
use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use s3_server::{fresh_uri, open, pairs};

fn scan_rows(table: &Table) -> Vec<String> {
    let batches = ScanBuilder::new(table.snapshot().unwrap())
        .build()
        .unwrap()
        .execute_to_vec()
        .unwrap();
    common::canon_rows(&batches)
}

/// Every file below `dir`, as (table-relative path, absolute path).
fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, std::path::PathBuf)>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            walk(root, &e.path(), out);
        } else {
            let rel = e
                .path()
                .strip_prefix(root)
                .unwrap()
                .to_str()
                .unwrap()
                .to_string();
            out.push((rel, e.path()));
        }
    }
}

/// Reference tables of different shapes: checkpoints (classic and v2), deletion vectors,
/// partitions, column mapping, log compactions, app transactions.
const CONFORMANCE_SUBSET: &[&str] = &[
    "124-decimal-decode-bug",
    "app-txn-checkpoint",
    "basic-dv-with-checkpoint",
    "basic-with-checkpoint",
    "basic_partitioned",
    "checkpoint-v2-table",
    "column-mapping-id",
    "compacted-log-files-table",
];

#[test]
fn conformance_tables_read_back_from_the_bucket() {
    let Some(base) = fresh_uri("conformance") else {
        return;
    };
    for name in CONFORMANCE_SUBSET {
        let local_root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/conformance/tables")
            .join(name)
            .join("delta");
        let local = Table::open(local_root.to_str().unwrap()).unwrap();
        let uri = format!("{base}/{name}");
        let remote = open(&uri, &[]);
        let mut files = Vec::new();
        walk(&local_root, &local_root, &mut files);
        for (rel, abs) in &files {
            remote
                .store()
                .put(
                    &StorePath::parse(rel.clone()).unwrap(),
                    std::fs::read(abs).unwrap().into(),
                )
                .unwrap();
        }
        let (l, r) = (local.snapshot().unwrap(), remote.snapshot().unwrap());
        assert_eq!(l.version(), r.version(), "{name}");
        assert_eq!(l.num_files(), r.num_files(), "{name}");
        assert_eq!(l.schema(), r.schema(), "{name}");
        assert!(r.report().requests.list >= 1, "{name}: {:?}", r.report());
        assert_eq!(r.report().requests.put, 0, "{name}: {:?}", r.report());
        let rows = scan_rows(&local);
        assert_eq!(rows, scan_rows(&remote), "{name}");
        eprintln!("{name}: version {}, {} rows equal", r.version(), rows.len());
    }
}

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("p", DataType::Utf8, true),
    ]))
}

fn batch(ids: std::ops::Range<i64>) -> RecordBatch {
    let ps: Vec<String> = ids.clone().map(|i| format!("p{}", i % 2)).collect();
    RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from(ids.collect::<Vec<_>>())) as ArrayRef,
            Arc::new(StringArray::from(ps)),
        ],
    )
    .unwrap()
}

fn data_files(store: &dyn ObjectStore) -> BTreeSet<String> {
    store
        .list_tree(None)
        .unwrap()
        .into_iter()
        .map(|m| m.path.as_str().to_string())
        .filter(|p| p.ends_with(".parquet") && !p.starts_with("_delta_log/"))
        .collect()
}

#[test]
fn create_append_delete_checkpoint_optimize_vacuum() {
    let Some(uri) = fresh_uri("lifecycle") else {
        return;
    };
    // The default: put-if-absent is probed when the first write needs to know.
    let table = open(&uri, &[]);
    let props = HashMap::from([("delta.checkpointInterval".to_string(), "10".to_string())]);
    let created = table.create(&schema(), &["p".into()], &props).unwrap();
    assert_eq!(created.version, 0);
    assert!(created.requests.put >= 1, "{created:?}");
    let mut expected: Vec<i64> = Vec::new();
    for i in 0..11 {
        let o = table
            .append([batch(i * 10..i * 10 + 3)], &WriteOptions::default())
            .unwrap();
        expected.extend(i * 10..i * 10 + 3);
        let r = o.report().unwrap();
        assert_eq!(r.version, i as u64 + 1);
        assert!(r.requests.put >= 1, "{r:?}");
    }
    // Version 10 crossed the checkpoint interval.
    let listing = list_log_from(table.store().as_ref(), 0).unwrap();
    assert!(
        listing
            .iter()
            .any(|f| f.version == 10 && matches!(f.kind, LogFileKind::Checkpoint(_))),
        "{listing:?}"
    );
    let fresh = open(&uri, &[]).snapshot().unwrap();
    assert_eq!(fresh.version(), 11);
    assert_eq!(fresh.report().requests.list, 1, "{:?}", fresh.report());
    assert_eq!(common::sorted_ids(&table), expected);

    table
        .delete_str("id = 41", &WriteOptions::default())
        .unwrap();
    expected.retain(|i| *i != 41);
    let cp = table
        .checkpoint(&alluvium_compaction::CheckpointConfig::default())
        .unwrap();
    assert_eq!(cp.version, 12);
    assert_eq!(common::sorted_ids(&open(&uri, &[])), expected);

    let before = data_files(table.store().as_ref());
    let opt = table.optimize(&OptimizeOptions::default()).unwrap();
    assert!(opt.files_removed > 2, "{opt:?}");
    assert_eq!(opt.files_added, 2, "one file per partition: {opt:?}");
    assert_eq!(common::sorted_ids(&table), expected);
    assert_eq!(table.snapshot().unwrap().num_files(), 2);

    let vac = table
        .vacuum(
            &VacuumOptions::default()
                .with_retention_hours(0.0)
                .with_force(true),
        )
        .unwrap();
    assert!(vac.failed.is_empty(), "{:?}", vac.failed);
    assert!(vac.deleted.len() >= opt.files_removed, "{vac:?}");
    let live: BTreeSet<String> = table
        .snapshot()
        .unwrap()
        .files()
        .map(|a| a.path().to_string())
        .collect();
    assert_eq!(data_files(table.store().as_ref()), live);
    assert!(live.is_disjoint(&before) || before.is_empty());
    assert_eq!(common::sorted_ids(&open(&uri, &[])), expected);
}

#[test]
fn writes_without_put_if_absent_are_refused_unless_single_writer() {
    let Some(uri) = fresh_uri("capability") else {
        return;
    };
    let refused = open(&uri, &[("put_if_absent", "false")]);
    let e = refused
        .create(&schema(), &[], alluvium::NO_PROPERTIES)
        .unwrap_err();
    assert!(
        matches!(e, Error::Mvcc(MvccError::StorageCapabilityMissing { .. })),
        "{e}"
    );
    assert!(e.to_string().contains("single_writer=true"), "{e}");
    assert!(refused.store().list_tree(None).unwrap().is_empty());

    let single = open(
        &uri,
        &[("put_if_absent", "false"), ("single_writer", "true")],
    );
    single
        .create(&schema(), &[], alluvium::NO_PROPERTIES)
        .unwrap();
    single
        .append([batch(0..5)], &WriteOptions::default())
        .unwrap();
    assert_eq!(common::sorted_ids(&single), (0..5).collect::<Vec<_>>());
    // Appends check before uploading anything.
    let e = refused
        .append([batch(5..6)], &WriteOptions::default())
        .unwrap_err();
    assert!(matches!(
        e,
        Error::Mvcc(MvccError::StorageCapabilityMissing { .. })
    ));
    assert_eq!(data_files(single.store().as_ref()).len(), 1);
}

/// A fault-sweep setup: a fresh prefix on one shared client (one runtime for all runs).
fn remote_setup(root: &RemoteStore) -> fault_workload::Setup {
    let store = root.at(&uuid::Uuid::new_v4().simple().to_string()).unwrap();
    fault_workload::Setup {
        store: Arc::new(store),
        advance: Box::new(|_| {}),
        clock_moves: false,
        _dir: None,
    }
}

fn sweep_root(name: &str) -> Option<RemoteStore> {
    let uri = fresh_uri(name)?;
    let options = StorageOptions::from_pairs(pairs(&[("put_if_absent", "true")])).unwrap();
    Some(RemoteStore::open(&uri, &options).unwrap())
}

/// Every fault kind (errors and crashes, before and after the effect: a lost response is
/// an error after a landed request) at every storage operation of the workload.
#[test]
fn fault_sweep_over_s3() {
    let Some(root) = sweep_root("faults") else {
        return;
    };
    fault_workload::sweep(fault_workload::WORKLOAD, || remote_setup(&root));
}

/// The checkpointing workload (automatic and explicit checkpoints, log cleanup), faults at
/// every seventh operation.
#[test]
fn fault_sweep_while_checkpointing_over_s3() {
    let Some(root) = sweep_root("faults-checkpoint") else {
        return;
    };
    fault_workload::sweep_every(
        fault_workload::CHECKPOINT_WORKLOAD,
        || remote_setup(&root),
        7,
    );
}

/// Iceberg metadata of a table in the bucket (SPEC §38): the sync writes through the
/// object store, names files by their `s3://` URIs, racing syncs of two handles agree, and
/// each snapshot lists exactly its version's files.
#[test]
fn iceberg_sync_on_s3() {
    let Some(uri) = fresh_uri("iceberg") else {
        return;
    };
    let table = open(&uri, &[]);
    let props = HashMap::from([(
        "delta.enableDeletionVectors".to_string(),
        "true".to_string(),
    )]);
    table.create(&schema(), &["p".into()], &props).unwrap();
    for i in 0..3 {
        table
            .append([batch(i * 10..i * 10 + 5)], &WriteOptions::default())
            .unwrap();
    }
    table.sync_iceberg().unwrap();
    table
        .delete_str("id = 1", &WriteOptions::default())
        .unwrap();
    table
        .append([batch(100..103)], &WriteOptions::default())
        .unwrap();
    let other = open(&uri, &[]);
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| table.sync_iceberg().unwrap());
        let b = s.spawn(|| other.sync_iceberg().unwrap());
        (a.join().unwrap(), b.join().unwrap())
    });
    let mut synced: Vec<u64> = a
        .synced_versions
        .iter()
        .chain(&b.synced_versions)
        .copied()
        .collect();
    synced.sort_unstable();
    synced.dedup();
    assert_eq!(synced, vec![4, 5], "{a:?} {b:?}");
    let store = table.store().clone();
    let (_, m) = alluvium_iceberg::metadata::latest(store.as_ref())
        .unwrap()
        .unwrap();
    let location = m["location"].as_str().unwrap().to_string();
    assert!(location.starts_with("s3://"), "{location}");
    for s in m["snapshots"].as_array().unwrap() {
        let v: u64 = s["summary"]["delta-version"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        let files = alluvium_iceberg::tree::snapshot_files(store.as_ref(), &location, s).unwrap();
        let live: BTreeSet<String> = files
            .manifests
            .iter()
            .filter(|(mf, _)| mf.content == alluvium_iceberg::manifest::Content::Data)
            .flat_map(|(_, e)| e.iter())
            .filter(|e| e.status != alluvium_iceberg::manifest::Status::Deleted)
            .map(|e| e.file.file_path.clone())
            .collect();
        let want: BTreeSet<String> = table
            .snapshot_at(alluvium::VersionSpec::Version(v))
            .unwrap()
            .files()
            .map(|a| format!("{location}/{}", a.path()))
            .collect();
        assert_eq!(live, want, "version {v}");
    }
    let deep = table
        .verify(&alluvium::VerifyOptions::default().with_deep(true))
        .unwrap();
    assert!(deep.is_clean(), "{:?}", deep.findings);
}
