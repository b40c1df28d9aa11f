//! OPTIMIZE and VACUUM (SPEC.md §16, §17): rows never change, concurrent appends never
//! fail, Z-order makes point filters prune, and VACUUM deletes exactly the files no version
//! inside the retention window references.

use crate::common;

use std::collections::HashMap;
use std::sync::Arc;

use alluvium::{CommitFields, Error, ScanBuilder, Table, VersionSpec, WriteOptions};
use alluvium_compaction::MaintenanceError;
use alluvium_compaction::optimize::OptimizeOptions;
use alluvium_compaction::vacuum::{VacuumMode, VacuumOptions};
use alluvium_storage::{InMemoryStore, ObjectStore, StorePath};
use alluvium_txlog::actions::Action;
use alluvium_txlog::commit::decode_commit;
use alluvium_txlog::log_path::commit_path;
use arrow::array::{Array, ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const DAY_MS: i64 = 86_400_000;

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("x", DataType::Int64, true),
        Field::new("y", DataType::Int64, true),
        Field::new("p", DataType::Utf8, true),
    ]))
}

fn batch(rows: &[(i64, i64, &str)]) -> RecordBatch {
    RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from(
                rows.iter().map(|r| r.0).collect::<Vec<_>>(),
            )) as ArrayRef,
            Arc::new(Int64Array::from(
                rows.iter().map(|r| r.1).collect::<Vec<_>>(),
            )),
            Arc::new(StringArray::from(
                rows.iter().map(|r| r.2).collect::<Vec<_>>(),
            )),
        ],
    )
    .unwrap()
}

/// A table on an in-memory store with a manual clock, partitioned by `p`.
fn table(props: &[(&str, &str)]) -> (Table, Arc<InMemoryStore>) {
    let store = Arc::new(InMemoryStore::new().with_manual_clock(1_700_000_000_000));
    let t = Table::from_store(store.clone());
    let props: HashMap<String, String> = props
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    t.create(&schema(), &["p".into()], &props).unwrap();
    (t, store)
}

fn rows_at(t: &Table, spec: VersionSpec) -> Vec<(i64, i64, String)> {
    let batches = ScanBuilder::new(t.snapshot_at(spec).unwrap())
        .with_columns(["x", "y", "p"])
        .build()
        .unwrap()
        .execute_to_vec()
        .unwrap();
    let mut out = Vec::new();
    for b in &batches {
        let x = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        let y = b.column(1).as_any().downcast_ref::<Int64Array>().unwrap();
        let p = b.column(2).as_any().downcast_ref::<StringArray>().unwrap();
        for i in 0..b.num_rows() {
            out.push((x.value(i), y.value(i), p.value(i).to_string()));
        }
    }
    out.sort();
    out
}

fn commit_actions(t: &Table, v: u64) -> Vec<Action> {
    let p = commit_path(v);
    decode_commit(p.as_str(), &t.store().get(&p).unwrap()).unwrap()
}

fn append_small_files(t: &Table, n: i64) {
    for i in 0..n {
        let p = if i % 2 == 0 { "a" } else { "b" };
        t.append(
            [batch(&[(i, i * 10, p), (i + 1000, 0, p)])],
            &WriteOptions::default(),
        )
        .unwrap();
    }
}

#[test]
fn bin_packing_compacts_each_partition_and_keeps_every_row() {
    let (t, _) = table(&[]);
    append_small_files(&t, 20);
    let before_version = t.snapshot().unwrap().version();
    let before = rows_at(&t, VersionSpec::Latest);
    assert_eq!(t.snapshot().unwrap().num_files(), 20);

    let report = t.optimize(&OptimizeOptions::default()).unwrap();
    assert_eq!(report.versions, vec![before_version + 1]);
    assert_eq!((report.files_removed, report.files_added), (20, 2));
    assert_eq!(report.partitions_optimized, 2);
    let s = t.snapshot().unwrap();
    assert_eq!(s.num_files(), 2, "one file per partition");
    assert_eq!(rows_at(&t, VersionSpec::Latest), before);
    assert_eq!(
        rows_at(&t, VersionSpec::Version(before_version)),
        before,
        "time travel"
    );

    // The commit: OPTIMIZE, dataChange=false everywhere, metrics present.
    let actions = commit_actions(&t, before_version + 1);
    let ci = actions
        .iter()
        .find_map(|a| {
            if let Action::CommitInfo(c) = a {
                Some(c.clone())
            } else {
                None
            }
        })
        .unwrap();
    assert_eq!(ci.operation(), Some("OPTIMIZE"));
    let json = serde_json::to_value(&ci).unwrap();
    assert_eq!(json["operationMetrics"]["numRemovedFiles"], "20");
    assert_eq!(json["operationMetrics"]["numAddedFiles"], "2");
    assert_eq!(json["isBlindAppend"], false);
    for a in &actions {
        match a {
            Action::Add(a) => assert!(!a.data_change),
            Action::Remove(r) => assert!(!r.data_change),
            _ => {}
        }
    }
    // Nothing left to do.
    assert!(
        t.optimize(&OptimizeOptions::default())
            .unwrap()
            .versions
            .is_empty()
    );
}

#[test]
fn filters_select_partitions_and_budgets_split_commits() {
    let (t, _) = table(&[]);
    append_small_files(&t, 20);
    let v = t.snapshot().unwrap().version();
    let r = t
        .optimize(
            &OptimizeOptions::default()
                .with_partition_filter(alluvium::parse_expr("p = 'a'").unwrap()),
        )
        .unwrap();
    assert_eq!((r.files_removed, r.partitions_optimized), (10, 1));
    assert_eq!(t.snapshot().unwrap().num_files(), 11);
    let e = t
        .optimize(
            &OptimizeOptions::default()
                .with_partition_filter(alluvium::parse_expr("x > 3").unwrap()),
        )
        .unwrap_err();
    assert!(e.to_string().contains("only use partition columns"), "{e}");

    // Partition b in several commits: a budget below one bin's bytes commits bin by bin,
    // and a tiny target makes several bins.
    let sizes: Vec<i64> = t.snapshot().unwrap().files().map(|f| f.size()).collect();
    let target = u64::try_from(sizes.iter().max().unwrap() * 3).unwrap();
    let r = t
        .optimize(
            &OptimizeOptions::default()
                .with_target_size(target)
                .with_max_commit_bytes(1),
        )
        .unwrap();
    assert!(r.versions.len() >= 3, "{r:?}");
    assert_eq!(r.versions[0], v + 2);
    assert_eq!(
        rows_at(&t, VersionSpec::Latest),
        rows_at(&t, VersionSpec::Version(v))
    );
}

/// The commits of OPTIMIZE and VACUUM record the embedder's `commitInfo` fields and
/// `userMetadata`, as writes do; a field the engine writes itself is refused before anything
/// is rewritten or deleted.
#[test]
fn maintenance_commits_carry_the_embedders_commit_info_and_refuse_reserved_names_first() {
    let (t, store) = table(&[]);
    append_small_files(&t, 20);
    let v = t.snapshot().unwrap().version();
    let files = data_files(store.as_ref());
    let reserved = CommitFields::new(
        None,
        [("operation".to_string(), serde_json::json!("FAKE"))].into(),
    );
    let e = t
        .optimize(&OptimizeOptions::default().with_commit_fields(reserved.clone()))
        .unwrap_err();
    assert_eq!(e.kind(), alluvium::ErrorKind::InvalidInput, "{e}");
    assert!(e.to_string().contains("commitInfo.operation"), "{e}");
    assert_eq!(t.snapshot().unwrap().version(), v);
    assert_eq!(data_files(store.as_ref()), files);

    let fields = CommitFields::new(
        Some("nightly".to_string()),
        [
            ("ticket".to_string(), serde_json::json!("OPS-3")),
            ("job".to_string(), serde_json::json!({"run": 7})),
        ]
        .into(),
    );
    let r = t
        .optimize(
            &OptimizeOptions::default()
                .with_commit_fields(fields.clone())
                .with_max_commit_bytes(1),
        )
        .unwrap();
    assert!(r.versions.len() >= 2, "{r:?}");
    let commit_info = |version: u64| {
        commit_actions(&t, version)
            .into_iter()
            .find_map(|a| match a {
                Action::CommitInfo(ci) => Some(ci),
                _ => None,
            })
            .unwrap()
    };
    for version in &r.versions {
        let info = commit_info(*version);
        assert_eq!(info.0["operation"], "OPTIMIZE");
        assert_eq!(info.0["userMetadata"], "nightly");
        assert_eq!(info.0["ticket"], "OPS-3");
        assert_eq!(info.0["job"]["run"], 7);
    }

    // VACUUM: refused before deleting; then both of its commits carry the fields.
    let now = t.store().now_ms() + 1000;
    let vacuum = VacuumOptions::default()
        .with_retention_hours(0.0)
        .with_force(true)
        .with_now_ms(now);
    let files = data_files(store.as_ref());
    let v = t.snapshot().unwrap().version();
    let e = t
        .vacuum(&vacuum.clone().with_commit_fields(reserved))
        .unwrap_err();
    assert_eq!(e.kind(), alluvium::ErrorKind::InvalidInput, "{e}");
    assert_eq!(t.snapshot().unwrap().version(), v);
    assert_eq!(data_files(store.as_ref()), files);
    let report = t.vacuum(&vacuum.with_commit_fields(fields)).unwrap();
    assert!(!report.deleted.is_empty());
    assert_eq!(report.versions.len(), 2, "{report:?}");
    for (version, operation) in report.versions.iter().zip(["VACUUM START", "VACUUM END"]) {
        let info = commit_info(*version);
        assert_eq!(info.0["operation"], operation);
        assert_eq!(info.0["userMetadata"], "nightly");
        assert_eq!(info.0["ticket"], "OPS-3");
    }
}

/// An interrupted OPTIMIZE stops between bins: the commit groups before the interrupt
/// stay, nothing of the unfinished group is committed or left behind, and the rows never
/// change.
#[test]
fn an_interrupted_optimize_keeps_whole_groups_and_leaves_no_file() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let (t, store) = table(&[]);
    append_small_files(&t, 20);
    let v = t.snapshot().unwrap().version();
    let before = rows_at(&t, VersionSpec::Latest);
    let files_before = data_files(store.as_ref());
    // Interrupted before it starts: nothing at all.
    let stop = Arc::new(AtomicBool::new(true));
    let e = t
        .optimize(&OptimizeOptions::default().with_interrupt(stop.clone()))
        .unwrap_err();
    assert_eq!(e.kind(), alluvium::ErrorKind::Interrupted, "{e}");
    assert_eq!(t.snapshot().unwrap().version(), v);
    assert_eq!(data_files(store.as_ref()), files_before);
    let sizes: Vec<i64> = t.snapshot().unwrap().files().map(|f| f.size()).collect();
    let target = u64::try_from(sizes.iter().max().unwrap() * 3).unwrap();
    // Interrupted while the one commit group is being rewritten: the bins already
    // rewritten are dropped with their files.
    stop.store(false, Ordering::SeqCst);
    let flag = stop.clone();
    let e = t
        .optimize_with_progress(
            &OptimizeOptions::default()
                .with_target_size(target)
                .with_interrupt(stop.clone()),
            &move |p| {
                if matches!(p, alluvium::Progress::BinDone { .. }) {
                    flag.store(true, Ordering::SeqCst);
                }
            },
        )
        .unwrap_err();
    assert_eq!(e.kind(), alluvium::ErrorKind::Interrupted, "{e}");
    assert_eq!(t.snapshot().unwrap().version(), v);
    assert_eq!(data_files(store.as_ref()), files_before);
    // Interrupted after the first commit of a run that commits bin by bin.
    stop.store(false, Ordering::SeqCst);
    let flag = stop.clone();
    let e = t
        .optimize_with_progress(
            &OptimizeOptions::default()
                .with_target_size(target)
                .with_max_commit_bytes(1)
                .with_interrupt(stop.clone()),
            &move |p| {
                if matches!(p, alluvium::Progress::Committed { .. }) {
                    flag.store(true, Ordering::SeqCst);
                }
            },
        )
        .unwrap_err();
    let Error::Maintenance(MaintenanceError::Interrupted { committed }) = &e else {
        panic!("{e:?}")
    };
    assert_eq!(
        committed,
        &vec![v + 1],
        "one group committed, then the stop"
    );
    assert_eq!(t.snapshot().unwrap().version(), v + 1);
    assert_eq!(rows_at(&t, VersionSpec::Latest), before);
    // Every data file is one some version references: the unfinished group's outputs went.
    let live: std::collections::BTreeSet<String> = t
        .snapshot()
        .unwrap()
        .files()
        .map(|a| a.path().to_string())
        .collect();
    for f in data_files(store.as_ref()) {
        assert!(
            live.contains(&f) || files_before.contains(&f),
            "{f} is left behind"
        );
    }
}

/// A point filter on either Z-order column reads a small fraction of the files it read
/// before, on the same rows.
#[test]
fn zorder_makes_point_filters_prune_on_every_column() {
    let (t, _) = table(&[]);
    let mut rng = StdRng::seed_from_u64(7);
    for _ in 0..40 {
        let rows: Vec<(i64, i64, &str)> = (0..250)
            .map(|_| (rng.random_range(0..1000), rng.random_range(0..1000), "z"))
            .collect();
        t.append([batch(&rows)], &WriteOptions::default()).unwrap();
    }
    let scanned = |t: &Table, f: &str| {
        ScanBuilder::new(t.snapshot().unwrap())
            .with_filter_str(f)
            .unwrap()
            .build()
            .unwrap()
            .files()
            .len()
    };
    let before = rows_at(&t, VersionSpec::Latest);
    let probes = ["x = 500", "y = 500", "x = 17", "y = 901"];
    let before_counts: Vec<usize> = probes.iter().map(|f| scanned(&t, f)).collect();
    assert!(before_counts.iter().all(|c| *c >= 38), "{before_counts:?}");

    let total: i64 = t.snapshot().unwrap().files().map(|f| f.size()).sum();
    let r = t
        .optimize(
            &OptimizeOptions::default()
                .with_zorder_by(vec!["x".into(), "y".into()])
                .with_target_size(u64::try_from(total / 40).unwrap()),
        )
        .unwrap();
    let files = t.snapshot().unwrap().num_files();
    assert!(
        files >= 20,
        "Z-order output should be many files, got {files}: {r:?}"
    );
    assert_eq!(rows_at(&t, VersionSpec::Latest), before);
    for f in probes {
        let after = scanned(&t, f);
        assert!(
            after * 4 <= files,
            "{f}: scans {after} of {files} files after Z-order (before: all)"
        );
    }
    let json = serde_json::to_value(
        commit_actions(&t, r.versions[0])
            .iter()
            .find_map(|a| {
                if let Action::CommitInfo(c) = a {
                    Some(c.clone())
                } else {
                    None
                }
            })
            .unwrap(),
    )
    .unwrap();
    assert_eq!(json["operationParameters"]["zOrderBy"], "[\"x\",\"y\"]");
}

/// Appends from several threads keep committing during a multi-commit OPTIMIZE; neither
/// fails, and the rows are exactly everything appended.
#[test]
fn optimize_and_concurrent_appends_both_commit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap().to_string();
    let t = Table::open_local(&path, false).unwrap();
    t.create(&schema(), &["p".into()], alluvium::NO_PROPERTIES)
        .unwrap();
    append_small_files(&t, 40);
    let mut expected = rows_at(&t, VersionSpec::Latest);
    let writers: Vec<_> = (0..3)
        .map(|w| {
            let path = path.clone();
            std::thread::spawn(move || {
                let t = Table::open_local(&path, false).unwrap();
                let mut mine = Vec::new();
                for i in 0..15 {
                    let row = (10_000 + w * 100 + i, w, if i % 2 == 0 { "a" } else { "b" });
                    t.append([batch(&[row])], &WriteOptions::default())
                        .unwrap_or_else(|e| panic!("writer {w}: {e}"));
                    mine.push((row.0, row.1, row.2.to_string()));
                }
                mine
            })
        })
        .collect();
    let o = Table::open_local(&path, false).unwrap();
    let sizes: Vec<i64> = o.snapshot().unwrap().files().map(|f| f.size()).collect();
    let mut optimized = 0;
    for _ in 0..3 {
        let r = o
            .optimize(
                &OptimizeOptions::default()
                    .with_target_size(u64::try_from(sizes.iter().max().unwrap() * 4).unwrap())
                    .with_max_commit_bytes(1),
            )
            .unwrap_or_else(|e| panic!("optimize: {e}"));
        optimized += r.versions.len();
    }
    for w in writers {
        expected.extend(w.join().unwrap());
    }
    expected.sort();
    assert!(
        optimized >= 3,
        "OPTIMIZE should have committed several times"
    );
    assert_eq!(rows_at(&o, VersionSpec::Latest), expected);
}

fn data_files(store: &dyn ObjectStore) -> Vec<String> {
    let mut v: Vec<String> = store
        .list_tree(None)
        .unwrap()
        .into_iter()
        .map(|m| m.path.as_str().to_string())
        .filter(|p| !p.starts_with("_delta_log"))
        .collect();
    v.sort();
    v
}

#[test]
fn vacuum_deletes_only_what_no_retained_version_needs() {
    let (t, store) = table(&[]);
    append_small_files(&t, 6);
    let v_old = t.snapshot().unwrap().version();
    let old_rows = rows_at(&t, VersionSpec::Latest);
    // Day 0: OPTIMIZE makes the 6 small files unreferenced by the latest version.
    t.optimize(&OptimizeOptions::default()).unwrap();
    let live: Vec<String> = t
        .snapshot()
        .unwrap()
        .files()
        .map(|f| f.path().to_string())
        .collect();
    assert_eq!(data_files(store.as_ref()).len(), 8);
    // An orphan (a writer that died before committing) and files VACUUM must never touch.
    for p in ["p=a/orphan.parquet", "_hidden/x.parquet", "p=a/.tmp.crc"] {
        store
            .put(&StorePath::parse(p).unwrap(), vec![1u8; 10].into())
            .unwrap();
    }

    // Too short a retention is refused; forced it is allowed.
    let e = t
        .vacuum(&VacuumOptions::default().with_retention_hours(1.0))
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::Maintenance(MaintenanceError::RetentionTooShort { .. })
        ),
        "{e}"
    );
    // The library names its option, not a CLI flag.
    assert!(e.to_string().contains("VacuumOptions::force"), "{e}");
    assert!(!e.to_string().contains("--force"), "{e}");

    // Inside the window nothing goes: the version before OPTIMIZE still needs its files.
    store.advance_clock(2 * DAY_MS);
    let r = t.vacuum(&VacuumOptions::default()).unwrap();
    assert!(r.deleted.is_empty(), "{:?}", r.deleted);
    assert_eq!(rows_at(&t, VersionSpec::Version(v_old)), old_rows);

    // 8 days later: the rewritten inputs and the orphan go, in a dry run first.
    store.advance_clock(6 * DAY_MS + 1);
    let dry = t
        .vacuum(&VacuumOptions::default().with_dry_run(true))
        .unwrap();
    assert_eq!(dry.deleted.len(), 7, "{:?}", dry.deleted);
    assert!(
        dry.deleted
            .iter()
            .any(|p| p.as_str() == "p=a/orphan.parquet")
    );
    assert_eq!(
        data_files(store.as_ref()).len(),
        11,
        "a dry run deletes nothing"
    );
    let v_before = t.snapshot().unwrap().version();
    let r = t.vacuum(&VacuumOptions::default()).unwrap();
    assert_eq!(r.deleted, dry.deleted);
    assert_eq!(r.versions, vec![v_before + 1, v_before + 2]);
    let mut left = data_files(store.as_ref());
    left.retain(|p| !p.starts_with('_') && !p.contains("/."));
    let mut expected = live.clone();
    expected.sort();
    assert_eq!(left, expected);
    assert!(
        store
            .head(&StorePath::parse("_hidden/x.parquet").unwrap())
            .is_ok()
    );
    assert!(
        store
            .head(&StorePath::parse("p=a/.tmp.crc").unwrap())
            .is_ok()
    );
    assert_eq!(rows_at(&t, VersionSpec::Latest), old_rows);
    let ops: Vec<String> = [v_before + 1, v_before + 2]
        .iter()
        .map(|v| {
            commit_actions(&t, *v)
                .iter()
                .find_map(|a| match a {
                    Action::CommitInfo(c) => c.operation().map(str::to_string),
                    _ => None,
                })
                .unwrap()
        })
        .collect();
    assert_eq!(ops, ["VACUUM START", "VACUUM END"]);
    // Again: nothing left.
    assert!(
        t.vacuum(&VacuumOptions::default())
            .unwrap()
            .deleted
            .is_empty()
    );
}

#[test]
fn vacuum_lite_uses_tombstones_and_keeps_young_orphans() {
    let (t, store) = table(&[]);
    append_small_files(&t, 4);
    t.delete_str("x = 0", &WriteOptions::default()).unwrap();
    store.advance_clock(8 * DAY_MS);
    // Written after the cutoff: an in-flight writer's file, unreferenced but young.
    store
        .put(
            &StorePath::parse("p=b/young.parquet").unwrap(),
            vec![0u8; 4].into(),
        )
        .unwrap();
    store
        .put(
            &StorePath::parse("p=b/old-orphan.parquet").unwrap(),
            vec![0u8; 4].into(),
        )
        .unwrap();
    store.advance_clock(8 * DAY_MS);
    store
        .put(
            &StorePath::parse("p=b/young2.parquet").unwrap(),
            vec![0u8; 4].into(),
        )
        .unwrap();

    let lite = t
        .vacuum(
            &VacuumOptions::default()
                .with_mode(VacuumMode::Lite)
                .with_dry_run(true),
        )
        .unwrap();
    // The file the delete rewrote (its tombstone), not the orphans: lite never lists.
    assert_eq!(lite.deleted.len(), 1, "{:?}", lite.deleted);
    let full = t
        .vacuum(&VacuumOptions::default().with_dry_run(true))
        .unwrap();
    let names: Vec<&str> = full.deleted.iter().map(|p| p.as_str()).collect();
    assert!(names.contains(&"p=b/old-orphan.parquet") && names.contains(&"p=b/young.parquet"));
    assert!(
        !names.contains(&"p=b/young2.parquet"),
        "younger than the cutoff: {names:?}"
    );
    assert_eq!(full.kept_young, 1);
}

#[test]
fn auto_compaction_compacts_the_partitions_a_commit_wrote() {
    let (t, _) = table(&[
        ("delta.autoOptimize.autoCompact", "true"),
        ("alluvium.autoCompact.minNumFiles", "5"),
    ]);
    let mut compactions = 0;
    for i in 0..12 {
        let o = t
            .append([batch(&[(i, 0, "a")])], &WriteOptions::default())
            .unwrap();
        if let Some(Ok(v)) = &o.report().unwrap().auto_compaction {
            compactions += v.versions.len();
        }
    }
    assert!(compactions >= 2, "auto-compaction should have run");
    assert!(t.snapshot().unwrap().num_files() < 5);
    assert_eq!(rows_at(&t, VersionSpec::Latest).len(), 12);
}

/// Every row of `snapshot`, canonical and sorted.
fn all_rows(snapshot: alluvium::Snapshot) -> Vec<String> {
    let batches = ScanBuilder::new(snapshot)
        .build()
        .unwrap()
        .execute_to_vec()
        .unwrap();
    let mut rows = common::canon_rows(&batches);
    rows.sort();
    rows
}

#[test]
fn optimize_applies_deletion_vectors_and_keeps_every_live_row() {
    // Tables written by Spark and delta-rs with deletion vectors (one with column mapping):
    // OPTIMIZE rewrites every file that has a DV, dropping the deleted rows for good.
    for name in [
        "table-with-dv-small",
        "basic-dv-with-checkpoint",
        "dv-with-columnmapping",
    ] {
        let (_dir, path) = common::copy_table(name);
        let t = Table::open(path.to_str().unwrap()).unwrap();
        let before = t.snapshot().unwrap();
        assert!(
            before.files().any(|f| f.deletion_vector().is_some()),
            "{name}: expected files with deletion vectors"
        );
        let expected = all_rows(before.clone());
        let report = t.optimize(&OptimizeOptions::default()).unwrap();
        assert!(report.files_removed > 0, "{name}: {report:?}");
        let after = t.snapshot().unwrap();
        assert!(
            after.files().all(|f| f.deletion_vector().is_none()),
            "{name}: a deletion vector survived OPTIMIZE"
        );
        assert_eq!(all_rows(after), expected, "{name}: rows changed");
        // Time travel to the version before still reads through its deletion vectors.
        let old = t
            .snapshot_at(VersionSpec::Version(before.version()))
            .unwrap();
        assert_eq!(
            all_rows(old),
            expected,
            "{name}: the version before changed"
        );
    }
}

#[test]
fn vacuum_makes_the_writer_protocol_check_first() {
    // `vacuumProtocolCheck` asks VACUUM to refuse tables with writer features it does not
    // know; alluvium makes that check for every table, before deleting anything.
    let (t, store) = table(&[]);
    t.append([batch(&[(1, 1, "a")])], &WriteOptions::default())
        .unwrap();
    let orphan = StorePath::parse("p=a/orphan.parquet").unwrap();
    store.put(&orphan, bytes::Bytes::from_static(b"x")).unwrap();
    let protocol = r#"{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["vacuumProtocolCheck"],"writerFeatures":["vacuumProtocolCheck","aFeatureFromTheFuture"]}}"#;
    store
        .put_if_absent(&commit_path(2), bytes::Bytes::from(format!("{protocol}\n")))
        .unwrap();
    store.advance_clock(8 * DAY_MS);
    let e = t.vacuum(&VacuumOptions::default()).unwrap_err();
    assert!(e.to_string().contains("aFeatureFromTheFuture"), "{e}");
    assert!(store.head(&orphan).is_ok(), "nothing deleted");

    // With only known features, the same table vacuums.
    let known = r#"{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["vacuumProtocolCheck"],"writerFeatures":["vacuumProtocolCheck"]}}"#;
    store
        .put_if_absent(&commit_path(3), bytes::Bytes::from(format!("{known}\n")))
        .unwrap();
    let r = t.vacuum(&VacuumOptions::default()).unwrap();
    assert_eq!(r.deleted, [orphan]);
}

/// Regression: OPTIMIZE commits its plan in groups; a DELETE that commits between two
/// groups and removes input files of a later group must not be undone by that group
/// (rewriting files that are no longer live would resurrect the deleted rows).
#[test]
fn a_delete_between_optimize_commits_is_not_undone() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let (t, _) = table(&[]);
    for i in 0..4 {
        t.append(
            [batch(&[
                (i, 0, "a"),
                (i + 10, 1, "a"),
                (i + 20, 0, "b"),
                (i + 30, 1, "b"),
            ])],
            &WriteOptions::default(),
        )
        .unwrap();
    }
    let deleter = t.clone();
    let deleted = AtomicBool::new(false);
    // One commit per bin: one per partition.
    let one_per_bin = OptimizeOptions::default().with_max_commit_bytes(1);
    let r = t
        .optimize_with_progress(&one_per_bin, &|p| {
            if matches!(p, alluvium_compaction::optimize::Progress::Committed { .. })
                && !deleted.swap(true, Ordering::SeqCst)
            {
                deleter
                    .delete_str("y = 0", &WriteOptions::default())
                    .unwrap();
            }
        })
        .unwrap();
    assert!(deleted.load(Ordering::SeqCst));
    let rows = rows_at(&t, VersionSpec::Latest);
    assert!(
        rows.iter().all(|r| r.1 == 1),
        "deleted rows came back: {rows:?} (report {r:?})"
    );
    assert_eq!(rows.len(), 8);
    assert_eq!(r.bins_dropped, 1, "{r:?}");
}

/// The checkpoint due at a version OPTIMIZE committed is written, and its outcome reported
/// in the summary (it used to be discarded).
#[test]
fn optimize_reports_the_post_commit_checkpoint_of_each_version() {
    let (t, _) = table(&[("delta.checkpointInterval", "1")]);
    append_small_files(&t, 4);
    let summary = t.optimize(&OptimizeOptions::default()).unwrap();
    assert_eq!(summary.versions.len(), 1);
    let v = summary.versions[0];
    assert_eq!(summary.post_commits.len(), 1);
    let (at, post) = &summary.post_commits[0];
    assert_eq!(*at, v);
    assert!(matches!(post.checkpoint, Some(Ok(c)) if c == v), "{post:?}");
    assert!(
        post.log_cleanup.is_some(),
        "cleanup follows a checkpoint by default"
    );
}
