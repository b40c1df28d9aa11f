//! Group commit (SPEC.md §35): threads that append through one table handle share
//! commits. Checked on the log afterwards: versions contiguous, every acknowledged append
//! in the version it was told and in no other, every row exactly once, far fewer commits
//! than appends, one `commitInfo` per version saying how many writes it holds, each
//! application's `txn` at its last version; members of one application never share a
//! commit and an application version already recorded is `Skipped`; row ids, in-commit
//! timestamps and the checkpoint policy hold across groups; a bad member fails alone;
//! writes that are not blind appends commit alone.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use alluvium::{
    AppTransaction, Error, GroupCommitOptions, InMemoryStore, ScanBuilder, StoreRef, Table,
    WhenFull, WriteOptions, WriteOutcome,
};
use alluvium_mvcc::group::{GroupCommit, MemberOutcome};
use alluvium_mvcc::snapshot::VersionedCache;
use alluvium_mvcc::{ConflictKind, MvccError, Transaction};
use alluvium_txlog::actions::{Action, CommitInfo};
use alluvium_txlog::commit::decode_commit;
use alluvium_txlog::log_path::{LogFileKind, commit_path};
use alluvium_txlog::segment::list_log_from;
use arrow::array::{Array, ArrayRef, Int64Array, RecordBatch};

use crate::batches::writer_seq_schema as schema;

fn rows(writer: i64, seqs: &[i64]) -> RecordBatch {
    RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from(vec![writer; seqs.len()])) as ArrayRef,
            Arc::new(Int64Array::from(seqs.to_vec())),
        ],
    )
    .unwrap()
}

fn app(id: impl Into<String>, version: i64) -> WriteOptions {
    WriteOptions::default().with_app_transaction(AppTransaction::new(id, version))
}

/// A data file (checkpoints are Parquet files too, in the log directory).
fn is_data_file(path: &str) -> bool {
    path.ends_with(".parquet") && !path.starts_with("_delta_log/")
}

/// Every commit of the log, in order, checked contiguous from version 0.
fn commits(store: &StoreRef) -> Vec<(u64, Vec<Action>)> {
    let listing = list_log_from(store.as_ref(), 0).unwrap();
    let versions: Vec<u64> = listing
        .iter()
        .filter(|f| f.kind == LogFileKind::Commit)
        .map(|f| f.version)
        .collect();
    assert_eq!(
        versions,
        (0..versions.len() as u64).collect::<Vec<_>>(),
        "versions must be contiguous from 0"
    );
    versions
        .into_iter()
        .map(|v| {
            let p = commit_path(v);
            (
                v,
                decode_commit(p.as_str(), &store.get(&p).unwrap()).unwrap(),
            )
        })
        .collect()
}

fn commit_info(actions: &[Action]) -> &CommitInfo {
    actions
        .iter()
        .find_map(|a| match a {
            Action::CommitInfo(ci) => Some(ci),
            _ => None,
        })
        .unwrap()
}

/// `(appId, version)` of every `txn` of a commit.
fn txns(actions: &[Action]) -> Vec<(String, i64)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Txn(t) => Some((t.app_id.clone(), t.version)),
            _ => None,
        })
        .collect()
}

/// How many times each (writer, seq) row is live.
fn row_counts(table: &Table) -> BTreeMap<(i64, i64), usize> {
    let batches = ScanBuilder::new(table.snapshot().unwrap())
        .with_columns(["writer", "seq"])
        .build()
        .unwrap()
        .execute_to_vec()
        .unwrap();
    let mut seen = BTreeMap::new();
    for b in &batches {
        let w = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        let s = b.column(1).as_any().downcast_ref::<Int64Array>().unwrap();
        for i in 0..b.num_rows() {
            *seen.entry((w.value(i), s.value(i))).or_default() += 1;
        }
    }
    seen
}

/// Checks the log after group commits: one `commitInfo` per version (operation `WRITE`,
/// a blind append, `groupMembers` = its txn actions when every member records one), no
/// application twice in one commit, unique `txnId`s. Returns the number of versions
/// after the table's creation.
fn check_group_log(store: &StoreRef) -> u64 {
    let log = commits(store);
    let mut ids = HashSet::new();
    for (v, actions) in &log {
        let ci = commit_info(actions);
        assert!(
            ids.insert(ci.txn_id().unwrap().to_string()),
            "version {v} repeats a txnId"
        );
        let apps = txns(actions);
        let distinct: HashSet<&String> = apps.iter().map(|(a, _)| a).collect();
        assert_eq!(
            distinct.len(),
            apps.len(),
            "version {v}: one application twice"
        );
    }
    log.len() as u64 - 1
}

/// `writers` threads x `appends` one-row appends through ONE handle, each thread its own
/// application (`writer-w`, versions 1..=appends).
fn shared_handle_appends(table: &Table, store: &StoreRef, writers: i64, appends: i64) {
    table
        .create(&schema(), &[], alluvium::NO_PROPERTIES)
        .unwrap();
    let handles: Vec<_> = (0..writers)
        .map(|w| {
            let t = table.clone();
            std::thread::spawn(move || {
                let mut acks = Vec::new();
                for i in 0..appends {
                    let o = t
                        .append([rows(w, &[i])], &app(format!("writer-{w}"), i + 1))
                        .unwrap_or_else(|e| panic!("writer {w} append {i}: {e}"));
                    let WriteOutcome::Committed(r) = o else {
                        panic!("writer {w} append {i} skipped")
                    };
                    acks.push((w, i, r.version, r.group_members));
                }
                acks
            })
        })
        .collect();
    let acks: Vec<(i64, i64, u64, usize)> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    let log = commits(store);
    let versions = check_group_log(store);
    // Each acknowledged append is in the version it was told, with the group size it was
    // told: its own txn is there.
    for (w, i, v, members) in &acks {
        let actions = &log[*v as usize].1;
        assert!(
            txns(actions).contains(&(format!("writer-{w}"), i + 1)),
            "writer {w} append {i} acknowledged at version {v}, which does not hold it"
        );
        let ci = commit_info(actions);
        assert_eq!(ci.operation(), Some("WRITE"));
        assert_eq!(
            ci.0.get("isBlindAppend").and_then(|v| v.as_bool()),
            Some(true)
        );
        let told = ci.operation_parameters().unwrap()["groupMembers"]
            .as_str()
            .map(|s| s.parse::<usize>().unwrap())
            .unwrap_or(1);
        assert_eq!(told, *members);
        assert_eq!(txns(actions).len(), *members);
    }
    let appended = (writers * appends) as u64;
    let seen = row_counts(table);
    assert_eq!(seen.len() as u64, appended, "every append's row is there");
    assert!(seen.values().all(|n| *n == 1), "a row appears twice");
    assert!(
        versions * 2 <= appended,
        "{versions} commits for {appended} appends: the appends did not share commits"
    );
    let snap = table.snapshot().unwrap();
    assert_eq!(snap.version(), versions);
    for w in 0..writers {
        assert_eq!(
            snap.app_transaction_version(&format!("writer-{w}"), i64::MAX - 1),
            Some(appends),
            "writer {w}'s txn is its last version"
        );
    }
}

#[test]
fn sixty_four_threads_two_hundred_appends_share_commits_in_memory() {
    let store: StoreRef = Arc::new(InMemoryStore::new());
    let table = Table::from_store(store.clone());
    shared_handle_appends(&table, &store, 64, 200);
}

#[test]
fn sixty_four_threads_two_hundred_appends_share_commits_on_local_disk() {
    let dir = tempfile::tempdir().unwrap();
    let table = Table::open_local(dir.path().to_str().unwrap(), true).unwrap();
    let store = table.store().clone();
    shared_handle_appends(&table, &store, 64, 200);
}

/// 16 threads append versions 1..=25 of ONE application: each version commits at most
/// once, the committed versions rise in log order, no commit holds two of them, the rest
/// are `Skipped` with their files deleted, and the table records 25.
#[test]
fn a_storm_of_writes_of_one_application_commits_each_version_at_most_once() {
    let store: StoreRef = Arc::new(InMemoryStore::new());
    let table = Table::from_store(store.clone());
    table
        .create(&schema(), &[], alluvium::NO_PROPERTIES)
        .unwrap();
    let handles: Vec<_> = (0..16i64)
        .map(|w| {
            let t = table.clone();
            std::thread::spawn(move || {
                (1..=25i64)
                    .map(|v| {
                        let o = t
                            .append([rows(w, &[v])], &app("storm", v))
                            .unwrap_or_else(|e| panic!("writer {w} version {v}: {e}"));
                        (w, v, o)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let outcomes: Vec<(i64, i64, WriteOutcome)> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    let log = commits(&store);
    check_group_log(&store);
    let recorded: Vec<i64> = log
        .iter()
        .flat_map(|(_, a)| txns(a))
        .filter(|(id, _)| id == "storm")
        .map(|(_, v)| v)
        .collect();
    assert!(
        recorded.windows(2).all(|w| w[0] < w[1]),
        "the application's versions must rise: {recorded:?}"
    );
    let seen = row_counts(&table);
    let mut committed = 0;
    for (w, v, o) in &outcomes {
        match o {
            WriteOutcome::Committed(r) => {
                committed += 1;
                assert!(txns(&log[r.version as usize].1).contains(&("storm".into(), *v)));
                assert_eq!(seen.get(&(*w, *v)), Some(&1));
            }
            WriteOutcome::Skipped {
                recorded_version, ..
            } => {
                assert!(recorded_version >= v);
                assert_eq!(seen.get(&(*w, *v)), None, "a skipped write's row is there");
            }
        }
    }
    assert_eq!(committed, recorded.len());
    assert_eq!(seen.len(), committed);
    assert_eq!(
        table
            .snapshot()
            .unwrap()
            .app_transaction_version("storm", i64::MAX - 1),
        Some(25)
    );
    // Skipped writes left no data file behind.
    let files = store
        .list_tree(None)
        .unwrap()
        .into_iter()
        .filter(|m| is_data_file(m.path.as_str()))
        .count();
    assert_eq!(files, table.snapshot().unwrap().num_files());
}

/// A writer alone never waits for company: each of its appends is a version of its own.
#[test]
fn a_lone_writer_commits_each_append_alone() {
    let table = Table::in_memory();
    table
        .create(&schema(), &[], alluvium::NO_PROPERTIES)
        .unwrap();
    for i in 0..5 {
        let o = table
            .append([rows(0, &[i])], &WriteOptions::default())
            .unwrap();
        let r = o.report().unwrap();
        assert_eq!(r.version, i as u64 + 1);
        assert_eq!(r.group_members, 1);
    }
}

/// Writes a group cannot hold commit alone: a schema change, `userMetadata`, a pinned read
/// snapshot, an overwrite; and with grouping off, every write.
#[test]
fn writes_that_are_not_plain_blind_appends_commit_alone() {
    let store: StoreRef = Arc::new(InMemoryStore::new());
    let table = Table::from_store(store.clone());
    table
        .create(&schema(), &[], alluvium::NO_PROPERTIES)
        .unwrap();
    let meta = WriteOptions::default().with_user_metadata("mine");
    let pinned = WriteOptions::default().with_read_snapshot(table.snapshot().unwrap());
    let a = table.append([rows(1, &[1])], &meta).unwrap();
    let b = table.append([rows(1, &[2])], &pinned).unwrap();
    let c = table
        .overwrite([rows(1, &[3])], None, &WriteOptions::default())
        .unwrap();
    for o in [&a, &b, &c] {
        assert_eq!(o.report().unwrap().group_members, 1);
    }
    let log = commits(&store);
    assert_eq!(
        commit_info(&log[1].1)
            .0
            .get("userMetadata")
            .and_then(|v| v.as_str()),
        Some("mine")
    );
    assert!(
        log.iter().all(|(_, a)| commit_info(a)
            .operation_parameters()
            .unwrap()
            .get("groupMembers")
            .is_none()),
        "a commit of its own carries no member count"
    );
    let off = Table::from_store(store.clone()).with_group_commit(GroupCommitOptions::disabled());
    let handles: Vec<_> = (0..4)
        .map(|w| {
            let t = off.clone();
            std::thread::spawn(move || {
                for i in 0..5 {
                    let o = t
                        .append([rows(10 + w, &[i])], &WriteOptions::default())
                        .unwrap();
                    assert_eq!(o.report().unwrap().group_members, 1);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(off.snapshot().unwrap().version(), 3 + 20);
}

/// A group's files get row ids as any commit's do: unique across members, each row's
/// commit version the group's version, the high-water mark advanced past all of them.
#[test]
fn row_ids_are_unique_across_the_members_of_group_commits() {
    let table = Table::in_memory();
    let props = HashMap::from([(
        alluvium_txlog::row_tracking::ENABLE.to_string(),
        "true".to_string(),
    )]);
    table.create(&schema(), &[], &props).unwrap();
    let handles: Vec<_> = (0..16i64)
        .map(|w| {
            let t = table.clone();
            std::thread::spawn(move || {
                for i in 0..10 {
                    t.append(
                        [rows(w, &[3 * i, 3 * i + 1, 3 * i + 2])],
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
    let snap = table.snapshot().unwrap();
    let scan = ScanBuilder::new(snap.clone())
        .with_columns(["writer"])
        .with_row_tracking(true)
        .build()
        .unwrap();
    let mut ids = HashSet::new();
    let mut count = 0;
    for b in scan.execute_to_vec().unwrap() {
        let rid = b.column(1).as_any().downcast_ref::<Int64Array>().unwrap();
        let cv = b.column(2).as_any().downcast_ref::<Int64Array>().unwrap();
        for i in 0..b.num_rows() {
            assert!(rid.is_valid(i) && cv.is_valid(i));
            assert!(ids.insert(rid.value(i)), "row id {} twice", rid.value(i));
            assert!(cv.value(i) >= 1 && cv.value(i) as u64 <= snap.version());
            count += 1;
        }
    }
    assert_eq!(count, 16 * 10 * 3);
    assert_eq!(
        alluvium_txlog::row_tracking::high_water_mark(snap.domains()).unwrap(),
        Some(count - 1)
    );
    // Every file's commit version is the version that added it.
    let log = commits(table.store());
    for (v, actions) in &log[1..] {
        for a in actions {
            if let Action::Add(add) = a {
                assert_eq!(add.default_row_commit_version, Some(*v as i64));
            }
        }
    }
}

/// In-commit timestamps rise across group commits, and a due checkpoint is written once
/// per version, by the group's first member.
#[test]
fn in_commit_timestamps_and_checkpoints_follow_group_versions() {
    let table = Table::in_memory();
    let props = HashMap::from([
        (
            "delta.enableInCommitTimestamps".to_string(),
            "true".to_string(),
        ),
        ("delta.checkpointInterval".to_string(), "4".to_string()),
    ]);
    table.create(&schema(), &[], &props).unwrap();
    let handles: Vec<_> = (0..8i64)
        .map(|w| {
            let t = table.clone();
            std::thread::spawn(move || {
                let mut checkpoints = Vec::new();
                for i in 0..25 {
                    let o = t.append([rows(w, &[i])], &WriteOptions::default()).unwrap();
                    let r = o.report().unwrap();
                    if let Some(c) = &r.checkpoint {
                        checkpoints.push(*c.as_ref().unwrap());
                    }
                }
                checkpoints
            })
        })
        .collect();
    let mut written: Vec<u64> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    written.sort_unstable();
    let log = commits(table.store());
    let last = log.len() as u64 - 1;
    let due: Vec<u64> = (1..=last).filter(|v| v % 4 == 0).collect();
    assert_eq!(written, due, "one checkpoint per due version");
    let ict: Vec<i64> = log
        .iter()
        .map(|(_, a)| commit_info(a).in_commit_timestamp().unwrap())
        .collect();
    assert!(ict.windows(2).all(|w| w[0] < w[1]), "{ict:?}");
}

/// A member that is wrong on its own fails alone (its files deleted), one whose
/// application version is recorded is `Skipped`, one that read an older schema conflicts
/// with `MetadataChanged`; the others still commit together, in one version.
#[test]
fn a_bad_member_fails_alone_and_the_rest_commit_together() {
    let store: StoreRef = Arc::new(InMemoryStore::new());
    let table = Table::from_store(store.clone());
    table
        .create(&schema(), &[], alluvium::NO_PROPERTIES)
        .unwrap();
    table.append([rows(0, &[0])], &app("done", 1)).unwrap();
    let before_alter = table.snapshot().unwrap();
    table
        .set_properties([("delta.logRetentionDuration", "interval 30 days")], &[])
        .unwrap();
    let snap = table.snapshot().unwrap();
    let write = |w: i64, on: &alluvium::Snapshot| {
        let mut t = table.transaction("WRITE").unwrap();
        let adds = t.write_files([rows(w, &[w])]).unwrap();
        let mut m = Transaction::new(&crate::mvcc(on), "WRITE");
        for a in adds {
            m.add_file(a);
        }
        m
    };
    let good = write(1, &snap);
    // Its file names a partition column the table does not have.
    let mut broken = write(2, &snap).added_files()[0].clone();
    broken.partition_values.insert("nope", Some("x".into()));
    let mut bad = Transaction::new(&crate::mvcc(&snap), "WRITE");
    bad.add_file(broken);
    let mut skipped = write(3, &snap);
    skipped.set_app_transaction("done", 1, 0);
    let stale = write(4, &before_alter);
    let also_good = write(5, &snap);
    let files_of = |m: &Transaction| m.added_files().to_vec();
    let (skipped_files, stale_files) = (files_of(&skipped), files_of(&stale));
    let group = GroupCommit::new(
        Arc::new(VersionedCache::new()),
        GroupCommitOptions::default(),
    );
    let out = group.commit_together(vec![good, bad, skipped, stale, also_good]);
    let version = match &out[0] {
        Ok(MemberOutcome::Committed(m)) => m.report.version,
        other => panic!("{other:?}"),
    };
    match &out[1] {
        Err(MvccError::InvalidOperation(m)) => assert!(m.contains("partition values"), "{m}"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        &out[2],
        Ok(MemberOutcome::Skipped {
            recorded_version: 1,
            ..
        })
    ));
    match &out[3] {
        Err(e) => assert_eq!(
            e.conflict_kind(),
            Some(ConflictKind::MetadataChanged),
            "{e}"
        ),
        other => panic!("{other:?}"),
    }
    match &out[4] {
        Ok(MemberOutcome::Committed(m)) => {
            assert_eq!(m.report.version, version);
            assert_eq!(m.report.group_members, 2);
            assert_eq!(m.position, 1);
        }
        other => panic!("{other:?}"),
    }
    let seen = row_counts(&table);
    let keys: Vec<(i64, i64)> = seen.keys().copied().collect();
    assert_eq!(keys, vec![(0, 0), (1, 1), (5, 5)]);
    for f in skipped_files.iter().chain(&stale_files) {
        assert!(
            store
                .head(&alluvium::StorePath::parse(f.path.clone()).unwrap())
                .is_err(),
            "the files of a member that did not commit are deleted"
        );
    }
}

/// A full queue refuses with a retryable `Busy` when the handle asks for it.
#[test]
fn busy_is_retryable_and_classified_as_contention() {
    let e = Error::Mvcc(MvccError::Busy { capacity: 4 });
    assert_eq!(e.kind(), alluvium::ErrorKind::Contention);
    assert!(e.is_retryable());
    // The option reaches the handle: with a queue of one and refusal, concurrent writers
    // either commit or are refused, never lose or double a row.
    let store: StoreRef = Arc::new(InMemoryStore::new());
    let table = Table::from_store(store.clone()).with_group_commit(
        GroupCommitOptions::default()
            .with_queue_capacity(1)
            .with_when_full(WhenFull::Busy),
    );
    table
        .create(&schema(), &[], alluvium::NO_PROPERTIES)
        .unwrap();
    let handles: Vec<_> = (0..8i64)
        .map(|w| {
            let t = table.clone();
            std::thread::spawn(move || {
                let mut ok = Vec::new();
                for i in 0..20 {
                    match t.append([rows(w, &[i])], &WriteOptions::default()) {
                        Ok(_) => ok.push((w, i)),
                        Err(e) => assert_eq!(e.kind(), alluvium::ErrorKind::Contention, "{e}"),
                    }
                }
                ok
            })
        })
        .collect();
    let ok: Vec<(i64, i64)> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    let seen = row_counts(&table);
    assert_eq!(seen.len(), ok.len());
    for k in &ok {
        assert_eq!(seen.get(k), Some(&1));
    }
    let files = store
        .list_tree(None)
        .unwrap()
        .into_iter()
        .filter(|m| is_data_file(m.path.as_str()))
        .count();
    assert_eq!(files, ok.len(), "a refused write leaves no file");
}

/// The snapshot a group commit publishes to the handle (built from the commit it wrote,
/// not read back) is the one a fresh load of the log gives: files with their row ids,
/// application versions, domains, timestamp.
#[test]
fn the_published_snapshot_is_the_one_a_fresh_load_gives() {
    for ict in [false, true] {
        let store: StoreRef = Arc::new(InMemoryStore::new());
        let table = Table::from_store(store.clone());
        let mut props = HashMap::from([(
            alluvium_txlog::row_tracking::ENABLE.to_string(),
            "true".to_string(),
        )]);
        if ict {
            props.insert(
                "delta.enableInCommitTimestamps".to_string(),
                "true".to_string(),
            );
        }
        table.create(&schema(), &[], &props).unwrap();
        let handles: Vec<_> = (0..4i64)
            .map(|w| {
                let t = table.clone();
                std::thread::spawn(move || {
                    for i in 0..5 {
                        t.append([rows(w, &[i])], &app(format!("w{w}"), i + 1))
                            .unwrap();
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let published = table.snapshot().unwrap();
        let loaded = Table::from_store(store.clone()).snapshot().unwrap();
        assert_eq!(published.version(), loaded.version());
        let files = |s: &alluvium::Snapshot| {
            let mut f: Vec<(String, Option<i64>, Option<i64>)> = s
                .files()
                .map(|a| {
                    (
                        a.path().to_string(),
                        a.base_row_id(),
                        a.default_row_commit_version(),
                    )
                })
                .collect();
            f.sort();
            f
        };
        assert_eq!(files(&published), files(&loaded));
        assert_eq!(published.timestamp_ms(), loaded.timestamp_ms(), "ict={ict}");
        for w in 0..4 {
            let id = format!("w{w}");
            assert_eq!(
                published.app_transaction_version(&id, 0),
                loaded.app_transaction_version(&id, 0)
            );
        }
        let domains = |s: &alluvium::Snapshot| {
            let mut d: Vec<String> = s
                .domains()
                .map(|d| format!("{}={}", d.domain, d.configuration))
                .collect();
            d.sort();
            d
        };
        assert_eq!(domains(&published), domains(&loaded));
        assert_eq!(
            published
                .commit_info()
                .and_then(|c| c.txn_id().map(str::to_string)),
            loaded
                .commit_info()
                .and_then(|c| c.txn_id().map(str::to_string))
        );
    }
}
