//! RESTORE (SPEC.md §32): the latest version becomes the target's files and metadata in one
//! commit, with Delta's metrics; files VACUUM deleted make it refuse; the protocol is never
//! downgraded.

use std::collections::HashMap;

use alluvium::{
    AppTransaction, Error, ScanBuilder, Table, VacuumOptions, VersionSpec, WriteOptions,
    WriteOutcome, parse_column_definition,
};

use crate::batches::id_batch as batch;

use crate::common::canon_rows;

fn rows(t: &Table, spec: VersionSpec) -> Vec<String> {
    canon_rows(
        &ScanBuilder::new(t.snapshot_at(spec).unwrap())
            .build()
            .unwrap()
            .execute_to_vec()
            .unwrap(),
    )
}

/// v0 create, v1 append 0..10, v2 append 10..20, v3 delete id < 5 (deletion vectors when
/// `dv`), v4 overwrite with 100..103.
fn history(dv: bool) -> (tempfile::TempDir, Table) {
    let dir = tempfile::tempdir().unwrap();
    let t = Table::open(dir.path().to_str().unwrap()).unwrap();
    let mut props = HashMap::new();
    if dv {
        props.insert(
            "delta.enableDeletionVectors".to_string(),
            "true".to_string(),
        );
    }
    t.create(&batch(0..0).schema(), &[], &props).unwrap();
    let w = WriteOptions::default();
    t.append([batch(0..10)], &w).unwrap();
    t.append([batch(10..20)], &w).unwrap();
    t.delete_str("id < 5", &w).unwrap();
    t.overwrite([batch(100..103)], None, &w).unwrap();
    (dir, t)
}

fn commit_json(t: &Table, version: u64) -> Vec<serde_json::Value> {
    let path = t.uri().trim_start_matches("file://").to_string()
        + &format!("/_delta_log/{version:020}.json");
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn restore_brings_back_the_target_versions_rows_with_deltas_metrics() {
    for dv in [false, true] {
        let (_d, t) = history(dv);
        let summary = t.restore(VersionSpec::Version(3)).unwrap();
        assert_eq!(summary.version, 5);
        assert_eq!(
            rows(&t, VersionSpec::Latest),
            rows(&t, VersionSpec::Version(3))
        );
        let m = &summary.operation_metrics;
        // v3 holds two logical files (the first with its DV, or rewritten), v4 one.
        assert_eq!(m["numRestoredFiles"], "2", "dv={dv}: {m:?}");
        assert_eq!(m["numRemovedFiles"], "1");
        assert_eq!(m["numOfFilesAfterRestore"], "2");
        for key in [
            "tableSizeAfterRestore",
            "removedFilesSize",
            "restoredFilesSize",
        ] {
            assert!(m[key].parse::<i64>().unwrap() > 0, "{key}: {m:?}");
        }
        let actions = commit_json(&t, 5);
        let ci = actions.iter().find_map(|a| a.get("commitInfo")).unwrap();
        assert_eq!(ci["operation"], "RESTORE");
        assert_eq!(ci["operationParameters"]["version"], 3);
        for a in &actions {
            if let Some(x) = a.get("add").or_else(|| a.get("remove")) {
                assert_eq!(x["dataChange"], true, "{a}");
            }
        }
        if dv {
            // The file is back with the deletion vector it had at version 3.
            let restored_dv = actions
                .iter()
                .filter_map(|a| a.get("add"))
                .any(|a| a.get("deletionVector").is_some());
            assert!(restored_dv, "{actions:?}");
        }
        // Restoring again to an older version works from the restored state.
        t.restore(VersionSpec::Version(1)).unwrap();
        assert_eq!(
            rows(&t, VersionSpec::Latest),
            rows(&t, VersionSpec::Version(1))
        );
    }
}

#[test]
fn restore_with_an_application_transaction_runs_once_and_records_commit_fields() {
    let (_d, t) = history(true);
    let options = WriteOptions::default()
        .with_app_transaction(AppTransaction::new("rollback-job", 7))
        .with_commit_info([("ticket".to_string(), serde_json::json!("OPS-12"))].into());
    let first = t.restore_with(VersionSpec::Version(2), &options).unwrap();
    assert_eq!(first.report().map(|s| s.version), Some(5));
    let actions = commit_json(&t, 5);
    let txn = actions.iter().find_map(|a| a.get("txn")).unwrap();
    assert_eq!(
        (&txn["appId"], &txn["version"]),
        (&serde_json::json!("rollback-job"), &serde_json::json!(7))
    );
    let ci = actions.iter().find_map(|a| a.get("commitInfo")).unwrap();
    assert_eq!(
        (&ci["operation"], &ci["ticket"]),
        (&serde_json::json!("RESTORE"), &serde_json::json!("OPS-12"))
    );
    // A retried job: skipped, nothing committed, the rows still those of version 2.
    let again = t.restore_with(VersionSpec::Version(2), &options).unwrap();
    assert!(
        matches!(
            again,
            WriteOutcome::Skipped {
                recorded_version: 7,
                table_version: 5,
                ..
            }
        ),
        "{again:?}"
    );
    assert_eq!(t.snapshot().unwrap().version(), 5);
    assert_eq!(
        rows(&t, VersionSpec::Latest),
        rows(&t, VersionSpec::Version(2))
    );
    // A later application version restores again.
    let later = options.with_app_transaction(AppTransaction::new("rollback-job", 8));
    let third = t.restore_with(VersionSpec::Version(1), &later).unwrap();
    assert_eq!(third.report().map(|s| s.version), Some(6));
    assert_eq!(
        rows(&t, VersionSpec::Latest),
        rows(&t, VersionSpec::Version(1))
    );
}

#[test]
fn restore_by_timestamp_and_refusals() {
    let (_d, t) = history(false);
    let at_two = t
        .snapshot_at(VersionSpec::Version(2))
        .unwrap()
        .timestamp_ms();
    t.restore(VersionSpec::Timestamp(at_two)).unwrap();
    let restored = t.snapshot().unwrap();
    assert_eq!(restored.version(), 5);
    assert_eq!(
        rows(&t, VersionSpec::Latest),
        rows(&t, VersionSpec::Version(2))
    );
    let ci = restored.commit_info().unwrap();
    assert!(
        ci.operation_parameters().unwrap()["timestamp"]
            .as_str()
            .unwrap()
            .ends_with('Z')
    );
    for v in [5, 6] {
        let e = t.restore(VersionSpec::Version(v)).unwrap_err();
        assert!(
            e.to_string().contains("not older than the latest version") || e.is_not_found(),
            "{e}"
        );
    }
    assert_eq!(t.snapshot().unwrap().version(), 5);
}

#[test]
fn restore_refuses_when_vacuum_deleted_a_file_it_needs() {
    let (dir, t) = history(false);
    t.vacuum(
        &VacuumOptions::default()
            .with_retention_hours(0.0)
            .with_force(true),
    )
    .unwrap();
    let vacuumed = t.snapshot().unwrap().version();
    let e = t.restore(VersionSpec::Version(2)).unwrap_err();
    match &e {
        Error::RestoreFilesMissing { version, files } => {
            assert_eq!(*version, 2);
            assert_eq!(files.len(), 2, "{files:?}");
            assert!(files.iter().all(|f| f.ends_with(".parquet")), "{files:?}");
        }
        other => panic!("expected RestoreFilesMissing, got {other}"),
    }
    assert!(e.to_string().contains("vacuumed"), "{e}");
    // Nothing committed.
    assert_eq!(t.snapshot().unwrap().version(), vacuumed);
    let next = format!("_delta_log/{:020}.json", vacuumed + 1);
    assert!(!dir.path().join(next).exists());
}

#[test]
fn restore_brings_back_the_schema_and_never_downgrades_the_protocol() {
    let (_d, t) = history(false);
    let before = t.snapshot().unwrap();
    // v5: rename (column mapping on, protocol 2/5), v6: a new column.
    t.rename_column("id", "key").unwrap();
    t.add_column(parse_column_definition("extra string").unwrap())
        .unwrap();
    let mapped = t.snapshot().unwrap();
    t.restore(VersionSpec::Version(4)).unwrap();
    let s = t.snapshot().unwrap();
    assert_eq!(s.schema(), before.schema());
    assert_eq!(s.protocol(), mapped.protocol());
    assert_eq!(
        s.metadata().configuration["delta.columnMapping.maxColumnId"],
        mapped.metadata().configuration["delta.columnMapping.maxColumnId"]
    );
    assert_eq!(
        rows(&t, VersionSpec::Latest),
        rows(&t, VersionSpec::Version(4))
    );
}
