//! Checkpoints, log retention and time travel (SPEC.md §5, §8, §9).
//!
//! * For random commit sequences (appends, deletes, overwrites, schema and protocol changes,
//!   application transactions, domain metadata) under random checkpoint settings (interval,
//!   multi-part or V2 with sidecars, struct statistics), the state of every version loaded
//!   through the newest checkpoint plus tail equals the state from JSON replay alone.
//! * `_last_checkpoint` is only a hint for tables alluvium wrote too.
//! * Writers crossing an interval together leave only readable checkpoints.
//! * Log cleanup keeps every retained version reconstructible and reports the earliest.
//! * In-commit timestamps are written and drive time travel.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use alluvium::{Snapshot, Table, VersionSpec, WriteOptions};
use alluvium_compaction::CheckpointConfig;
use alluvium_mvcc::Transaction;
use alluvium_storage::{InMemoryStore, ObjectStore, StorePath, StoreRef};
use alluvium_txlog::LogError;
use alluvium_txlog::actions::{DomainMetadata, Protocol};
use alluvium_txlog::commit::decode_commit;
use alluvium_txlog::log_path::commit_path;
use alluvium_txlog::path::TableRoot;
use alluvium_txlog::replay::{Replay, TableState};
use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn schema(extra: bool) -> Arc<Schema> {
    let mut f = vec![
        Field::new("id", DataType::Int64, true),
        Field::new("p", DataType::Utf8, true),
    ];
    if extra {
        f.push(Field::new("x", DataType::Int64, true));
    }
    Arc::new(Schema::new(f))
}

fn batch(ids: &[i64], p: Option<&str>, extra: bool) -> RecordBatch {
    let mut cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(ids.to_vec())),
        Arc::new(StringArray::from(vec![p; ids.len()])),
    ];
    if extra {
        cols.push(Arc::new(Int64Array::from(
            ids.iter().map(|i| i * 2).collect::<Vec<_>>(),
        )));
    }
    RecordBatch::try_new(schema(extra), cols).unwrap()
}

type FileDigest = (
    i64,
    Option<String>,
    Vec<(String, Option<String>)>,
    Option<String>,
);

/// The observable state of a version, for comparison.
#[derive(Debug, PartialEq)]
struct Digest {
    protocol: Protocol,
    schema: String,
    configuration: BTreeMap<String, String>,
    /// Path to (size, stats, partition values, deletion-vector id).
    files: BTreeMap<String, FileDigest>,
    tombstones: BTreeSet<String>,
    txns: BTreeMap<String, i64>,
    domains: BTreeMap<String, String>,
}

fn digest(s: &TableState) -> Digest {
    Digest {
        protocol: s.protocol().clone(),
        schema: s.metadata().schema_string.clone(),
        configuration: s
            .metadata()
            .configuration
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        files: s
            .files()
            .map(|a| {
                (
                    a.path().to_string(),
                    (
                        a.size(),
                        a.stats().map(std::borrow::Cow::into_owned),
                        a.partition_values().0.clone(),
                        a.deletion_vector().map(|d| d.unique_id()),
                    ),
                )
            })
            .collect(),
        tombstones: s.tombstones().map(|r| r.path.clone()).collect(),
        txns: s
            .app_transactions()
            .iter()
            .map(|(k, t)| (k.clone(), t.version))
            .collect(),
        domains: s
            .domains()
            .iter()
            .map(|(k, d)| (k.clone(), d.configuration.clone()))
            .collect(),
    }
}

/// The state at `version` by replaying every commit from 0, no checkpoint involved.
fn json_replay(store: &dyn ObjectStore, version: u64) -> TableState {
    let mut r = Replay::new(TableRoot::new(store.root_uri()));
    for v in 0..=version {
        let p = commit_path(v);
        r.apply_all(decode_commit(p.as_str(), &store.get(&p).unwrap()).unwrap());
    }
    r.finish(version).unwrap()
}

fn random_history(seed: u64) -> (Table, String) {
    let mut rng = StdRng::seed_from_u64(seed);
    let store: StoreRef = Arc::new(InMemoryStore::new());
    let t = Table::from_store(store);
    let interval = [1, 2, 3, 5][rng.random_range(0..4)];
    let v2 = rng.random_bool(0.4);
    let structs = rng.random_bool(0.4);
    let mut props = HashMap::from([("delta.checkpointInterval".to_string(), interval.to_string())]);
    if v2 {
        props.insert("delta.checkpointPolicy".into(), "v2".into());
    }
    if structs {
        props.insert("delta.checkpoint.writeStatsAsStruct".into(), "true".into());
    }
    t.create(&schema(false), &["p".into()], &props).unwrap();
    let config = format!("seed {seed}: interval {interval}, v2 {v2}, struct stats {structs}");
    let parts = [None, Some("a"), Some("b"), Some("c d/e")];
    let mut extra = false;
    let mut next_id = 0i64;
    let mut app_version = 0i64;
    let mut domains = false;
    for _ in 0..rng.random_range(8..20) {
        let p = parts[rng.random_range(0..parts.len())];
        let n = rng.random_range(1..4);
        let ids: Vec<i64> = (next_id..next_id + n).collect();
        next_id += n;
        match rng.random_range(0..10) {
            0..=3 => {
                t.append([batch(&ids, p, extra)], &WriteOptions::default())
                    .unwrap();
            }
            4 => {
                t.delete_str(
                    &format!("id % 3 = 0 AND id < {next_id}").replace("id % 3 = 0 AND ", ""),
                    &WriteOptions::default(),
                )
                .map(|_| ())
                .unwrap_or(());
            }
            5 => {
                let target = p.unwrap_or("a");
                t.overwrite_str(
                    [batch(&ids, Some(target), extra)],
                    Some(&format!("p = '{target}'")),
                    &WriteOptions::default(),
                )
                .unwrap();
            }
            6 if !extra => {
                extra = true;
                t.append(
                    [batch(&ids, p, true)],
                    &WriteOptions::default().with_merge_schema(true),
                )
                .unwrap();
            }
            7 => {
                app_version += 1;
                let o = WriteOptions::default().with_app_transaction(
                    alluvium::AppTransaction::new(format!("app{}", app_version % 2), app_version),
                );
                t.append([batch(&ids, p, extra)], &o).unwrap();
            }
            8 if !domains => {
                // A protocol upgrade that enables domain metadata.
                let s = t.snapshot().unwrap();
                let mut p = s.protocol().clone();
                let mut wf: Vec<String> =
                    alluvium_txlog::features::legacy_writer_features(p.min_writer_version)
                        .iter()
                        .map(|s| s.to_string())
                        .collect();
                wf.extend(p.writer_features.clone().unwrap_or_default());
                wf.push("domainMetadata".into());
                wf.sort();
                wf.dedup();
                p.min_writer_version = 7;
                p.writer_features = Some(wf);
                let mut txn = Transaction::new(&crate::mvcc(&s), "UPGRADE PROTOCOL");
                txn.set_protocol(p);
                txn.commit().unwrap();
                domains = true;
            }
            9 if domains => {
                let s = t.snapshot().unwrap();
                let mut txn = Transaction::new(&crate::mvcc(&s), "SET DOMAIN");
                txn.set_domain(DomainMetadata {
                    domain: format!("app.d{}", rng.random_range(0..2)),
                    configuration: next_id.to_string(),
                    removed: rng.random_bool(0.3),
                });
                txn.commit().unwrap();
            }
            _ => {
                t.delete_str(
                    &format!("id = {}", rng.random_range(0..next_id.max(1))),
                    &WriteOptions::default(),
                )
                .unwrap();
            }
        }
        if rng.random_bool(0.15) {
            let part_size = [None, Some(2), Some(4)][rng.random_range(0..3)];
            t.checkpoint(&CheckpointConfig::default().with_part_size(part_size))
                .unwrap();
        }
    }
    (t, config)
}

#[test]
fn checkpoint_plus_tail_equals_json_replay_for_random_histories() {
    for seed in 0..24 {
        let (t, config) = random_history(seed);
        let store = t.store().clone();
        let latest = t.snapshot().unwrap().version();
        let mut with_checkpoint = 0;
        for v in 0..=latest {
            let snap = Snapshot::load(store.clone(), VersionSpec::Version(v))
                .unwrap_or_else(|e| panic!("{config}: version {v}: {e}"));
            if snap.checkpoint_version().is_some() {
                with_checkpoint += 1;
            }
            assert!(
                snap.report().skipped_checkpoints.is_empty(),
                "{config}: {:?}",
                snap.report()
            );
            assert_eq!(
                digest(snap.state()),
                digest(&json_replay(store.as_ref(), v)),
                "{config}: version {v} (checkpoint {:?})",
                snap.checkpoint_version()
            );
        }
        assert!(
            with_checkpoint > 0,
            "{config}: no version was loaded through a checkpoint"
        );
    }
}

fn table_with_checkpoint() -> (tempfile::TempDir, Table) {
    let dir = tempfile::tempdir().unwrap();
    let t = Table::open(dir.path().to_str().unwrap()).unwrap();
    t.create(
        &schema(false),
        &["p".into()],
        &HashMap::from([("delta.checkpointInterval".to_string(), "5".to_string())]),
    )
    .unwrap();
    for i in 0..12 {
        t.append([batch(&[i], Some("a"), false)], &WriteOptions::default())
            .unwrap();
    }
    (dir, t)
}

fn rows(path: &std::path::Path) -> usize {
    let s = Table::open(path.to_str().unwrap())
        .unwrap()
        .snapshot()
        .unwrap();
    alluvium::ScanBuilder::new(s)
        .build()
        .unwrap()
        .execute_to_vec()
        .unwrap()
        .iter()
        .map(|b| b.num_rows())
        .sum()
}

#[test]
fn our_last_checkpoint_hint_is_only_a_hint() {
    let (dir, t) = table_with_checkpoint();
    let log = dir.path().join("_delta_log");
    let hint: serde_json::Value =
        serde_json::from_slice(&std::fs::read(log.join("_last_checkpoint")).unwrap()).unwrap();
    assert_eq!(hint["version"], 10);
    assert!(
        hint.get("parts").is_none(),
        "a single-file checkpoint must not claim parts"
    );
    assert_eq!(
        hint["checksum"].as_str().unwrap(),
        alluvium_txlog::checkpoint::json_checksum(&hint)
    );
    assert_eq!(rows(dir.path()), 12);
    let cases: [&[u8]; 6] = [
        b"",
        b"{\"version\":10,\"size\":14,\"parts\":1}",
        b"{\"version\":5,\"size\":9}",
        b"{\"version\":99,\"size\":9}",
        b"{\"version\":10,\"size\":14,\"checksum\":\"00000000000000000000000000000000\"}",
        b"not json",
    ];
    for case in cases {
        std::fs::write(log.join("_last_checkpoint"), case).unwrap();
        let s = Table::open(dir.path().to_str().unwrap())
            .unwrap()
            .snapshot()
            .unwrap();
        assert_eq!(
            (s.version(), s.checkpoint_version()),
            (12, Some(10)),
            "{}",
            String::from_utf8_lossy(case)
        );
        assert_eq!(rows(dir.path()), 12);
    }
    // The checkpoint the hint names is gone: the older one (5) is used.
    std::fs::write(
        log.join("_last_checkpoint"),
        serde_json::to_vec(&hint).unwrap(),
    )
    .unwrap();
    std::fs::remove_file(log.join("00000000000000000010.checkpoint.parquet")).unwrap();
    let s = Table::open(dir.path().to_str().unwrap())
        .unwrap()
        .snapshot()
        .unwrap();
    assert_eq!((s.version(), s.checkpoint_version()), (12, Some(5)));
    assert_eq!(rows(dir.path()), 12);
    drop(t);
}

#[test]
fn writers_crossing_intervals_together_leave_readable_checkpoints() {
    let store: StoreRef = Arc::new(InMemoryStore::new());
    let t = Table::from_store(store.clone());
    t.create(
        &schema(false),
        &[],
        &HashMap::from([("delta.checkpointInterval".to_string(), "2".to_string())]),
    )
    .unwrap();
    let handles: Vec<_> = (0..4)
        .map(|w| {
            let store = store.clone();
            std::thread::spawn(move || {
                let t = Table::from_store(store);
                for i in 0..15 {
                    t.append(
                        [batch(&[w * 100 + i], None, false)],
                        &WriteOptions::default(),
                    )
                    .unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let latest = t.snapshot().unwrap().version();
    assert_eq!(latest, 60);
    for v in (2..=latest).step_by(2) {
        let s = Snapshot::load(store.clone(), VersionSpec::Version(v)).unwrap();
        assert_eq!(
            s.checkpoint_version(),
            Some(v),
            "checkpoint {v} missing or unreadable: {:?}",
            s.report()
        );
        assert_eq!(s.num_files() as u64, v);
    }
    let hint = alluvium_txlog::checkpoint::read_last_checkpoint(store.as_ref()).unwrap();
    assert!(
        hint.version >= 58,
        "the hint moved backwards to {}",
        hint.version
    );
}

#[test]
fn v2_checkpoints_with_sidecars_read_back() {
    let store: StoreRef = Arc::new(InMemoryStore::new());
    let t = Table::from_store(store.clone());
    let props = HashMap::from([
        ("delta.checkpointPolicy".to_string(), "v2".to_string()),
        ("delta.checkpointInterval".to_string(), "1000".to_string()),
    ]);
    t.create(&schema(false), &["p".into()], &props).unwrap();
    assert!(
        t.snapshot()
            .unwrap()
            .protocol()
            .has_reader_feature("v2Checkpoint")
    );
    for i in 0..9 {
        t.append(
            [batch(&[i], Some(["a", "b", "c"][i as usize % 3]), false)],
            &WriteOptions::default(),
        )
        .unwrap();
    }
    t.delete_str("id = 4", &WriteOptions::default()).unwrap();
    let out = t
        .checkpoint(&CheckpointConfig::default().with_part_size(3))
        .unwrap();
    assert_eq!(out.files.len(), 1);
    assert!(
        out.files[0].as_str().contains(".checkpoint.")
            && !out.files[0].as_str().ends_with(".checkpoint.parquet")
    );
    assert!(out.sidecars.len() >= 3, "{out:?}");
    let s = Snapshot::load(store.clone(), VersionSpec::Latest).unwrap();
    assert_eq!(s.checkpoint_version(), Some(10));
    assert_eq!(digest(s.state()), digest(&json_replay(store.as_ref(), 10)));
}

#[test]
fn log_cleanup_keeps_retained_versions_and_reports_the_earliest() {
    let store = Arc::new(InMemoryStore::new().with_manual_clock(1_700_000_000_000));
    let t = Table::from_store(store.clone());
    t.create(
        &schema(false),
        &[],
        &HashMap::from([("delta.checkpointInterval".to_string(), "4".to_string())]),
    )
    .unwrap();
    for i in 0..10 {
        store.advance_clock(1000);
        t.append([batch(&[i], None, false)], &WriteOptions::default())
            .unwrap();
    }
    // Nothing is old enough yet.
    let r = t.cleanup_log(false).unwrap();
    assert!(r.deleted.is_empty(), "{r:?}");
    // 40 days later versions 0..=10 are past the 30-day retention; commit 11 is new.
    store.advance_clock(40 * 24 * 3600 * 1000);
    t.append([batch(&[10], None, false)], &WriteOptions::default())
        .unwrap();
    let dry = t.cleanup_log(true).unwrap();
    assert_eq!(dry.anchor, Some(8));
    assert!(
        store.head(&commit_path(0)).is_ok(),
        "a dry run deletes nothing"
    );
    let r = t.cleanup_log(false).unwrap();
    assert_eq!(r.deleted, dry.deleted);
    assert_eq!(r.earliest_readable_version, Some(8));
    assert!(
        store.head(&commit_path(8)).is_ok(),
        "the anchor's commit file stays"
    );
    for v in 8..=11 {
        let s = Snapshot::load(store.clone(), VersionSpec::Version(v)).unwrap();
        assert_eq!(s.num_files() as u64, v);
    }
    let e = Snapshot::load(store.clone(), VersionSpec::Version(7)).unwrap_err();
    let msg = e.to_string();
    assert!(
        matches!(
            e,
            alluvium::Error::Mvcc(alluvium_mvcc::MvccError::Log(LogError::VersionNotFound {
                version: 7,
                ..
            }))
        ),
        "{msg}"
    );
    assert!(msg.contains("earliest readable version is 8"), "{msg}");
    let d = t.describe(alluvium::VersionSpec::Latest).unwrap();
    assert_eq!(d.earliest_readable_version, Some(8));
}

#[test]
fn in_commit_timestamps_are_written_and_drive_time_travel() {
    let store = Arc::new(InMemoryStore::new().with_manual_clock(1_000));
    let t = Table::from_store(store.clone());
    t.create(
        &schema(false),
        &[],
        &HashMap::from([(
            "delta.enableInCommitTimestamps".to_string(),
            "true".to_string(),
        )]),
    )
    .unwrap();
    assert!(
        t.snapshot()
            .unwrap()
            .protocol()
            .has_writer_feature("inCommitTimestamp")
    );
    let mut icts = Vec::new();
    for i in 0..4 {
        t.append([batch(&[i], None, false)], &WriteOptions::default())
            .unwrap();
        let s = t.snapshot().unwrap();
        icts.push(s.timestamp_ms());
        // commitInfo is the first action and carries the in-commit timestamp.
        let p = commit_path(s.version());
        let first = String::from_utf8(store.get(&p).unwrap().to_vec()).unwrap();
        assert!(first.starts_with("{\"commitInfo\""), "{first}");
        assert_eq!(
            s.commit_info().unwrap().in_commit_timestamp(),
            Some(s.timestamp_ms())
        );
    }
    assert!(icts.windows(2).all(|w| w[0] < w[1]), "{icts:?}");
    // File times lie (all equal here); in-commit timestamps decide.
    let at = |ts| {
        Snapshot::load(store.clone(), VersionSpec::Timestamp(ts))
            .unwrap()
            .version()
    };
    assert_eq!(at(icts[2]), 3);
    assert_eq!(at(icts[2] - 1), 2);
    assert_eq!(at(icts[3] + 10_000), 4);
}

#[test]
fn file_time_travel_monotonizes_commit_times() {
    let store = Arc::new(InMemoryStore::new().with_manual_clock(10_000));
    let t = Table::from_store(store.clone());
    t.create(&schema(false), &[], alluvium::NO_PROPERTIES)
        .unwrap();
    for i in 0..4 {
        store.advance_clock(100);
        t.append([batch(&[i], None, false)], &WriteOptions::default())
            .unwrap();
    }
    // Version 3's file time goes backwards (a copied table, a skewed clock).
    store.set_last_modified(&commit_path(3), 10_050).unwrap();
    let at = |ts| Snapshot::load(store.clone(), VersionSpec::Timestamp(ts)).map(|s| s.version());
    assert_eq!(at(10_200).unwrap(), 2);
    // Monotonized, version 3 sits at 10_201 (one after version 2), not at 10_050.
    assert_eq!(at(10_201).unwrap(), 3);
    assert_eq!(at(10_399).unwrap(), 3);
    assert!(matches!(
        at(9_000),
        Err(alluvium::Error::Mvcc(alluvium_mvcc::MvccError::Log(
            LogError::TimestampOutOfRange { .. }
        )))
    ));
    let _ = StorePath::parse("x");
}

/// Refreshing after k commits reads those k commits and nothing else: no checkpoint, no
/// listing of the whole log where a listing costs in proportion to it (SPEC.md §8).
#[test]
fn refresh_reads_only_the_new_commits() {
    let check = |t: &Table, expect_lists: u32, expect_heads: u32| {
        let base = t.snapshot_at(VersionSpec::Latest).unwrap();
        assert_eq!(base.report().checkpoint_files_read, 1);
        for i in 0..3 {
            t.append(
                [batch(&[100 + i], Some("b"), false)],
                &WriteOptions::default(),
            )
            .unwrap();
        }
        let next = base.refresh().unwrap();
        let r = next.report();
        assert_eq!((r.commits_read, r.checkpoint_files_read), (3, 0), "{r:?}");
        assert_eq!(
            (r.list_calls, r.head_calls),
            (expect_lists, expect_heads),
            "{r:?}"
        );
        assert_eq!(next.version(), base.version() + 3);
        assert_eq!(next.num_files(), base.num_files() + 3);
        // Nothing new: one probe (or list), no reads.
        let same = next.refresh().unwrap();
        assert_eq!(same.version(), next.version());
    };
    // Local filesystem: a directory read visits the whole log, so the refresh probes
    // versions v+1.. with one HEAD each (3 found, the 4th absent).
    let (_dir, local) = table_with_checkpoint();
    check(&local, 0, 4);
    // In memory (an ordered map, like an object store's LIST from a key): one listing.
    let mem = Table::in_memory();
    mem.create(
        &schema(false),
        &["p".into()],
        &HashMap::from([("delta.checkpointInterval".to_string(), "5".to_string())]),
    )
    .unwrap();
    for i in 0..12 {
        mem.append([batch(&[i], Some("a"), false)], &WriteOptions::default())
            .unwrap();
    }
    check(&mem, 1, 0);
}

/// The latest snapshot of the table at `dir`.
fn open_latest(dir: &std::path::Path) -> alluvium::Result<Snapshot> {
    Table::open(dir.to_str().unwrap())?.snapshot_at(VersionSpec::Latest)
}

/// What `f` returns while `file` holds only the first half of its bytes; the file is
/// whole again afterwards.
fn cut_short<T>(file: &std::path::Path, f: impl FnOnce() -> T) -> T {
    let whole = std::fs::read(file).unwrap();
    std::fs::write(file, &whole[..whole.len() / 2]).unwrap();
    let out = f();
    std::fs::write(file, &whole).unwrap();
    out
}

/// The latest snapshot of the table at `dir`, checked equal to a replay of every commit.
fn load_checked(dir: &std::path::Path) -> Snapshot {
    let s = open_latest(dir).unwrap();
    let m = crate::mvcc(&s);
    assert_eq!(
        digest(m.state()),
        digest(&json_replay(m.store_ref(), s.version())),
        "the load equals a replay of every commit"
    );
    s
}

/// A load from the hinted checkpoint reads the short tail after it (or, with none, the
/// checkpoint version's own commit, for its `commitInfo`) on the listing's task while the
/// checkpoint is read; a longer tail, or a listing that picks another checkpoint, is left
/// to the replay. The snapshot is the same either way (SPEC.md §8).
#[test]
fn a_short_tail_is_read_while_the_hinted_checkpoint_is_read() {
    let (dir, t) = table_with_checkpoint();
    let log = dir.path().join("_delta_log");
    let load = || load_checked(dir.path());
    let counts = |s: &Snapshot| {
        let r = s.report();
        (
            r.checkpoint_files_read,
            r.commits_read,
            r.commits_read_ahead,
        )
    };
    // Checkpoint 10, then commits 11 and 12: both read ahead, each once.
    let s = load();
    assert_eq!((s.version(), s.checkpoint_version()), (12, Some(10)));
    assert_eq!(counts(&s), (1, 2, 2), "{:?}", s.report());
    // A read ahead that fails fails the load as reading the file then would, naming it.
    let err = cut_short(&log.join("00000000000000000012.json"), || {
        open_latest(dir.path()).unwrap_err().to_string()
    });
    assert!(err.contains("00000000000000000012.json"), "{err}");

    // Version 15 is a checkpoint: its own commit is read ahead, for its commitInfo.
    for i in 0..3 {
        t.append(
            [batch(&[50 + i], Some("a"), false)],
            &WriteOptions::default(),
        )
        .unwrap();
    }
    let s = load();
    assert_eq!((s.version(), s.checkpoint_version()), (15, Some(15)));
    assert_eq!(counts(&s), (1, 1, 1), "{:?}", s.report());
    assert!(s.commit_info().is_some_and(|c| c.operation().is_some()));
    // That commit unreadable: the checkpoint holds the state, the version has no
    // commitInfo, and nothing counts as read.
    let s = cut_short(&log.join("00000000000000000015.json"), || {
        open_latest(dir.path()).unwrap()
    });
    assert_eq!(s.version(), 15);
    assert!(s.commit_info().is_none());
    assert_eq!(counts(&s), (1, 0, 0), "{:?}", s.report());

    // A stale hint (5): the listing picks checkpoint 15, nothing was read ahead for it.
    std::fs::write(log.join("_last_checkpoint"), b"{\"version\":5,\"size\":9}").unwrap();
    let s = load();
    assert_eq!(s.checkpoint_version(), Some(15));
    assert_eq!(counts(&s), (1, 1, 0), "{:?}", s.report());

    // Checkpoint 5 is the only one left: a tail of ten commits is the replay's to read.
    for v in [10, 15] {
        std::fs::remove_file(log.join(format!("{v:020}.checkpoint.parquet"))).unwrap();
    }
    let s = load();
    assert_eq!((s.version(), s.checkpoint_version()), (15, Some(5)));
    assert_eq!(counts(&s), (1, 10, 0), "{:?}", s.report());
}

/// A load reads the checkpoint `_last_checkpoint` names while it lists the log, and keeps
/// that read only when the listing picks the same checkpoint (SPEC.md §8).
#[test]
fn the_hinted_checkpoint_is_read_while_the_log_is_listed() {
    let (dir, _t) = table_with_checkpoint();
    let log = dir.path().join("_delta_log");
    let load = || load_checked(dir.path());
    // The hint names checkpoint 10, the listing picks it: one HEAD, one read, one listing.
    let s = load();
    let r = s.report();
    assert_eq!(
        (
            r.list_calls,
            r.head_calls,
            r.checkpoint_files_read,
            r.commits_read
        ),
        (1, 1, 1, 2),
        "{r:?}"
    );
    assert_eq!((s.version(), s.checkpoint_version()), (12, Some(10)));

    // A stale hint: checkpoint 5 is read meanwhile, but the listing finds 10, which is used.
    let hint = std::fs::read(log.join("_last_checkpoint")).unwrap();
    std::fs::write(log.join("_last_checkpoint"), b"{\"version\":5,\"size\":9}").unwrap();
    let s = load();
    let r = s.report();
    assert_eq!((r.head_calls, r.checkpoint_files_read), (1, 1), "{r:?}");
    assert_eq!((s.version(), s.checkpoint_version()), (12, Some(10)));

    // The hint claims parts the checkpoint does not have: nothing is read early.
    std::fs::write(
        log.join("_last_checkpoint"),
        b"{\"version\":10,\"size\":14,\"parts\":2}",
    )
    .unwrap();
    let s = load();
    let r = s.report();
    assert_eq!((r.head_calls, r.checkpoint_files_read), (1, 1), "{r:?}");
    assert_eq!(s.checkpoint_version(), Some(10));
    // A part count no checkpoint has is not enumerated.
    std::fs::write(
        log.join("_last_checkpoint"),
        b"{\"version\":10,\"size\":14,\"parts\":4000000000}",
    )
    .unwrap();
    let s = load();
    let r = s.report();
    assert_eq!((r.head_calls, r.checkpoint_files_read), (0, 1), "{r:?}");
    assert_eq!(s.checkpoint_version(), Some(10));

    // The named checkpoint is damaged: the early read fails quietly, and the load reports
    // and routes around it as before (checkpoint 5 and the commits after it).
    std::fs::write(log.join("_last_checkpoint"), &hint).unwrap();
    let cp = log.join("00000000000000000010.checkpoint.parquet");
    let bytes = std::fs::read(&cp).unwrap();
    std::fs::write(&cp, &bytes[..bytes.len() / 2]).unwrap();
    let s = load();
    let r = s.report();
    assert_eq!(s.checkpoint_version(), Some(5), "{r:?}");
    assert_eq!(r.skipped_checkpoints.len(), 1, "{r:?}");
}

/// `advance_to(v)` builds version v from an earlier snapshot by applying only the commits
/// between (no checkpoint read) and equals a load of v; it never goes backwards or past the
/// latest version.
#[test]
fn advance_to_builds_a_later_version_from_the_commits_between() {
    let (_dir, t) = table_with_checkpoint();
    let base = crate::mvcc(&t.snapshot().unwrap());
    for i in 0..3 {
        t.append(
            [batch(&[200 + i], Some("c"), false)],
            &WriteOptions::default(),
        )
        .unwrap();
    }
    t.delete_str("id = 200", &WriteOptions::default()).unwrap();
    let target = base.version() + 4;
    let advanced = base.advance_to(target).unwrap();
    let loaded =
        alluvium_mvcc::Snapshot::load(base.store().clone(), VersionSpec::Version(target)).unwrap();
    let paths = |s: &alluvium_mvcc::Snapshot| {
        s.files()
            .map(|a| a.path().to_string())
            .collect::<BTreeSet<String>>()
    };
    assert_eq!(advanced.version(), target);
    assert_eq!(paths(&advanced), paths(&loaded));
    assert_eq!(advanced.timestamp_ms(), loaded.timestamp_ms());
    let r = advanced.report();
    assert_eq!((r.commits_read, r.checkpoint_files_read), (4, 0), "{r:?}");
    let mid = base.advance_to(base.version() + 1).unwrap();
    assert_eq!(mid.num_files(), base.num_files() + 1);
    assert_eq!(advanced.advance_to(target).unwrap().version(), target);
    assert!(
        advanced.advance_to(base.version()).is_err(),
        "never backwards"
    );
    assert!(
        base.advance_to(target + 5).is_err(),
        "never past the latest"
    );
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// Log compaction files (`x.y.compacted.json`) replace the commits they cover, give the same
/// state as the commits at every version, and are skipped (commits read instead) when they
/// cannot be read. The golden table's compactions list the newest action of a key first.
#[test]
fn log_compactions_stand_in_for_their_commits() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/conformance/tables/compacted-log-files-table/delta");
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&src, dir.path());
    let compare = |expect_skipped: bool| {
        let t = Table::open(dir.path().to_str().unwrap()).unwrap();
        let store = t.store().clone();
        let mut used = 0;
        for v in 0..=25 {
            let snap = t.snapshot_at(VersionSpec::Version(v)).unwrap();
            let r = snap.report();
            used += r.compactions_read;
            if v >= 15 {
                assert_eq!(
                    !r.skipped_compactions.is_empty(),
                    expect_skipped,
                    "version {v}: {r:?}"
                );
            }
            assert_eq!(
                digest(snap.state()),
                digest(&json_replay(store.as_ref(), v)),
                "version {v}: {r:?}"
            );
            if v == 25 && !expect_skipped {
                // 0..=5 and 6..=15 come from two compactions, 16..=25 from commits.
                assert_eq!((r.compactions_read, r.commits_read), (2, 10), "{r:?}");
            }
        }
        assert!(used > 0 || expect_skipped);
    };
    compare(false);
    std::fs::write(
        dir.path()
            .join("_delta_log/00000000000000000006.00000000000000000015.compacted.json"),
        b"{\"add\": garbage",
    )
    .unwrap();
    compare(true);
}

/// The engine name has one spelling: what commits carry in `commitInfo.engineInfo` is what
/// data files and checkpoints carry in Parquet's `created_by`.
#[test]
fn commits_data_files_and_checkpoints_name_the_same_engine() {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let created_by = |path: &std::path::Path| {
        let file = std::fs::File::open(path).unwrap();
        let reader = SerializedFileReader::new(file).unwrap();
        reader
            .metadata()
            .file_metadata()
            .created_by()
            .map(str::to_string)
    };
    let (dir, _t) = table_with_checkpoint();
    let log = dir.path().join("_delta_log");
    let commit = std::fs::read_to_string(log.join("00000000000000000001.json")).unwrap();
    let info = commit
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find_map(|v| v.get("commitInfo").cloned())
        .unwrap();
    assert_eq!(info["engineInfo"], alluvium::ENGINE);
    let checkpoint = log.join("00000000000000000010.checkpoint.parquet");
    assert_eq!(created_by(&checkpoint).as_deref(), Some(alluvium::ENGINE));
    let data = std::fs::read_dir(dir.path().join("p=a"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "parquet"))
        .unwrap();
    assert_eq!(created_by(&data).as_deref(), Some(alluvium::ENGINE));
}

/// After a commit off the checkpoint interval nothing is read back: the post-commit policy
/// knows from the committed properties that no checkpoint is due and loads no snapshot. On
/// the interval the checkpoint is written, as before. (The transaction's own requests are
/// `commit.requests`; everything beyond them on a table loaded up front is post-commit.)
#[test]
fn a_commit_off_the_checkpoint_interval_reads_nothing_back() {
    let store = Arc::new(alluvium_storage::CountingStore::new(Arc::new(
        InMemoryStore::new(),
    )));
    Table::from_store(store.clone() as StoreRef)
        .create(
            &schema(false),
            &[],
            &HashMap::from([("delta.checkpointInterval".to_string(), "3".to_string())]),
        )
        .unwrap();
    for v in 1..=6i64 {
        let t = Table::from_store(store.clone() as StoreRef);
        t.snapshot().unwrap();
        let before = store.request_counts();
        let outcome = t
            .append([batch(&[v], Some("a"), false)], &WriteOptions::default())
            .unwrap();
        let after = store.request_counts();
        let alluvium::WriteOutcome::Committed(summary) = outcome else {
            panic!("v{v}: not committed");
        };
        assert_eq!(summary.commit.version, v as u64);
        let post_gets = after.get - before.get - summary.commit.requests.get;
        if v % 3 == 0 {
            assert!(
                matches!(summary.checkpoint, Some(Ok(c)) if c == v as u64),
                "v{v}: {:?}",
                summary.checkpoint
            );
        } else {
            assert!(summary.checkpoint.is_none(), "v{v}");
            assert_eq!(post_gets, 0, "v{v}: the new version was read back");
        }
    }
    assert_eq!(
        Table::from_store(store as StoreRef)
            .snapshot()
            .unwrap()
            .files()
            .count(),
        6
    );
}

/// Records the upper bound of every range listing of `_delta_log`, forwarding to memory.
#[derive(Debug, Default)]
struct ListBounds {
    inner: InMemoryStore,
    ends: std::sync::Mutex<Vec<Option<String>>>,
}

impl ObjectStore for ListBounds {
    fn root_uri(&self) -> String {
        self.inner.root_uri()
    }
    fn get(&self, p: &StorePath) -> alluvium_storage::Result<bytes::Bytes> {
        self.inner.get(p)
    }
    fn get_range(
        &self,
        p: &StorePath,
        r: std::ops::Range<u64>,
    ) -> alluvium_storage::Result<bytes::Bytes> {
        self.inner.get_range(p, r)
    }
    fn head(&self, p: &StorePath) -> alluvium_storage::Result<alluvium_storage::ObjectMeta> {
        self.inner.head(p)
    }
    fn put_if_absent(&self, p: &StorePath, d: bytes::Bytes) -> alluvium_storage::Result<()> {
        self.inner.put_if_absent(p, d)
    }
    fn put(&self, p: &StorePath, d: bytes::Bytes) -> alluvium_storage::Result<()> {
        self.inner.put(p, d)
    }
    fn list_dir_from(
        &self,
        dir: Option<&StorePath>,
        start: &str,
    ) -> alluvium_storage::Result<Vec<alluvium_storage::ObjectMeta>> {
        self.list_dir_range(dir, start, None)
    }
    fn list_dir_range(
        &self,
        dir: Option<&StorePath>,
        start: &str,
        end: Option<&str>,
    ) -> alluvium_storage::Result<Vec<alluvium_storage::ObjectMeta>> {
        if dir.is_some_and(|d| d.as_str() == "_delta_log") {
            self.ends.lock().unwrap().push(end.map(str::to_string));
        }
        self.inner.list_dir_range(dir, start, end)
    }
    fn list_tree(
        &self,
        dir: Option<&StorePath>,
    ) -> alluvium_storage::Result<Vec<alluvium_storage::ObjectMeta>> {
        self.inner.list_tree(dir)
    }
    fn delete(&self, p: &StorePath) -> alluvium_storage::Result<()> {
        self.inner.delete(p)
    }
}

/// SPEC §8: a load of version V lists the log only below V + 1 (on a local filesystem the
/// later entries are then never `stat`ed); the latest version lists to the end; a version
/// whose commits were cleaned up still gets the whole log before its error is decided.
#[test]
fn time_travel_lists_the_log_only_up_to_its_version() {
    let store = Arc::new(ListBounds::default());
    let t = Table::from_store(store.clone() as StoreRef);
    t.create(
        &schema(false),
        &["p".into()],
        &HashMap::<String, String>::new(),
    )
    .unwrap();
    for i in 0..6 {
        t.append([batch(&[i], Some("a"), false)], &WriteOptions::default())
            .unwrap();
    }
    let ends = |f: &dyn Fn()| {
        store.ends.lock().unwrap().clear();
        f();
        std::mem::take(&mut *store.ends.lock().unwrap())
    };
    let fresh = || Table::from_store(store.clone() as StoreRef);
    let at_2 = ends(&|| {
        assert_eq!(
            fresh()
                .snapshot_at(VersionSpec::Version(2))
                .unwrap()
                .version(),
            2
        );
    });
    assert_eq!(at_2, [Some(format!("{:020}", 3))]);
    let latest = ends(&|| {
        assert_eq!(fresh().snapshot().unwrap().version(), 6);
    });
    assert_eq!(latest, [None]);
    // Beyond the latest version: the bounded listing cannot tell, so the whole log is
    // listed before the error.
    let beyond = ends(&|| {
        assert!(fresh().snapshot_at(VersionSpec::Version(9)).is_err());
    });
    assert_eq!(beyond.last(), Some(&None), "{beyond:?}");
}
