//! The oracle: after a run (all actors stopped), the table is judged from the store alone
//! against the model of what the actors were told and against the protocol's own
//! invariants. Nothing here trusts the engine's reading of the table: the log is read with
//! plain JSON parsing, replayed here (live files keyed by path and deletion-vector id, as
//! the protocol says), and the rows of a version are decoded by the simulator's own code
//! (`decode`: Parquet through the `parquet` crate, deletion vectors and checkpoints by
//! hand). Each check compares that decode with the model, or with what a reader was given.
//!
//! Versions whose commits log cleanup removed: the replay starts from the oldest classic
//! checkpoint at or above the first retained commit's predecessor that decodes (its `add`
//! column), so the latest version is always decoded independently. A reader's snapshot of
//! a version older than the retention window is checked while its files are all there (a
//! missing one is no failure: VACUUM may have removed it). Versions below that
//! checkpoint cannot be rebuilt from what is left: a reader's snapshot of such a version is
//! not checked, and only their files' presence is checked, through the engine's load (the
//! one place the engine's own reading is used, for presence, never for rows). The `appId`
//! versions of the latest version come from the same replay (a checkpoint's `txn` column,
//! then the commits' `txn` actions). The engine's scan of the latest version and its
//! `appId` versions are also compared with the oracle's decode and the model, as checks of
//! the engine, not as the oracle's source of truth.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::Arc;

use alluvium::{ObjectStore, StoreRef, Table, VersionSpec};
use serde_json::Value;

use crate::actors::rows_of;
use crate::decode::{Decoder, Dv, Files, LiveFile, checkpoint, checkpoint_files};
use crate::model::{Model, Row};
use crate::store::{NoCheckpoints, SimStore};

/// The retention the simulated table declares for deleted files (1 hour).
pub(crate) const FILE_RETENTION_MS: i64 = 3_600_000;

const LOG: &str = "_delta_log/";

fn version_of(name: &str, suffix: &str) -> Option<u64> {
    let digits = name.strip_suffix(suffix)?;
    (digits.len() == 20 && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

/// One commit as the oracle reads it.
#[derive(Debug, Default)]
struct Commit {
    txn_id: Option<String>,
    apps: Vec<(String, i64)>,
    adds: Vec<(String, i64, Option<Dv>)>,
    removes: Vec<(String, Option<Dv>)>,
}

/// The deletion vector of an `add` or `remove` action, if it has one.
fn dv_of(v: u64, action: &Value) -> Result<Option<Dv>, String> {
    action
        .get("deletionVector")
        .filter(|d| !d.is_null())
        .map(|d| Dv::from_json(d).map_err(|e| format!("commit {v}: {e}")))
        .transpose()
}

fn parse_commit(v: u64, bytes: &[u8]) -> Result<Commit, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| format!("commit {v} is not UTF-8: {e}"))?;
    let mut c = Commit::default();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let a: Value = serde_json::from_str(line)
            .map_err(|e| format!("commit {v} is torn or invalid: {e}"))?;
        if let Some(ci) = a.get("commitInfo") {
            c.txn_id = ci.get("txnId").and_then(Value::as_str).map(str::to_string);
        }
        if let Some(t) = a.get("txn") {
            let app = t.get("appId").and_then(Value::as_str).unwrap_or_default();
            let ver = t.get("version").and_then(Value::as_i64).unwrap_or(-1);
            c.apps.push((app.to_string(), ver));
        }
        if let Some(add) = a.get("add") {
            let path = add.get("path").and_then(Value::as_str).unwrap_or_default();
            let size = add.get("size").and_then(Value::as_i64).unwrap_or(-1);
            c.adds.push((path.to_string(), size, dv_of(v, add)?));
        }
        if let Some(rm) = a.get("remove") {
            let path = rm.get("path").and_then(Value::as_str).unwrap_or_default();
            c.removes.push((path.to_string(), dv_of(v, rm)?));
        }
    }
    Ok(c)
}

/// The logical file's key: its path and its deletion vector's unique id.
fn key(path: &str, dv: Option<&Dv>) -> (String, String) {
    (path.to_string(), dv.map(Dv::unique_id).unwrap_or_default())
}

/// Applies commit `c` to the live files: its removes, then its adds.
fn apply(live: &mut Files, c: &Commit) {
    for (p, dv) in &c.removes {
        live.remove(&key(p, dv.as_ref()));
    }
    for (p, size, dv) in &c.adds {
        live.insert(
            key(p, dv.as_ref()),
            LiveFile {
                size: *size,
                dv: dv.clone(),
            },
        );
    }
}

/// A file a version references is there and whole.
fn check_file(store: &SimStore, v: u64, path: &str, size: i64) -> Result<(), String> {
    let key = path.replace("%3D", "=").replace("%20", " ");
    match store.peek(&key) {
        None => Err(format!(
            "version {v} references {path}, which does not exist"
        )),
        Some(b) if size >= 0 && b.len() as i64 != size => Err(format!(
            "version {v} references {path} of {size} bytes; the store holds {} (torn)",
            b.len()
        )),
        Some(_) => Ok(()),
    }
}

fn table(store: StoreRef) -> Table {
    Table::from_store(store)
}

/// The first difference of two sorted row lists, for messages.
fn first_difference(a: &[(i64, i64)], b: &[(i64, i64)]) -> String {
    a.iter()
        .zip(b)
        .find(|(x, y)| x != y)
        .map(|(x, y)| format!(" (first difference: {x:?} against {y:?})"))
        .unwrap_or_default()
}

/// The oracle's own replay of the retained log.
struct Replay {
    /// The live files of every version it can rebuild (from version 0, or from the oldest
    /// decodable checkpoint that covers the removed commits), by version.
    states: BTreeMap<u64, Files>,
    /// Each application's transaction version at the last version.
    apps: BTreeMap<String, i64>,
}

fn replay(
    store: &SimStore,
    parsed: &BTreeMap<u64, Commit>,
    checkpoints: &BTreeSet<u64>,
    first: u64,
    last: u64,
) -> Result<Replay, String> {
    let mut states = BTreeMap::new();
    let (mut live, mut apps, from) = if first == 0 {
        (Files::new(), BTreeMap::new(), 0)
    } else {
        let mut base = None;
        let mut why = Vec::new();
        for c in checkpoints.range(first - 1..=last) {
            let path = format!("{LOG}{c:020}.checkpoint.parquet");
            match store.peek(&path).map(checkpoint) {
                Some(Ok(ckpt)) => {
                    base = Some((*c, ckpt));
                    break;
                }
                Some(Err(e)) => why.push(format!("{c}: {e}")),
                None => why.push(format!("{c}: not a classic checkpoint")),
            }
        }
        let Some((c, ckpt)) = base else {
            return Err(format!(
                "commits below {first} are removed and no checkpoint that covers them decodes: {why:?}"
            ));
        };
        states.insert(c, ckpt.files.clone());
        (ckpt.files, ckpt.apps, c + 1)
    };
    for (v, c) in parsed.range(from..) {
        apply(&mut live, c);
        for (app, version) in &c.apps {
            apps.insert(app.clone(), *version);
        }
        states.insert(*v, live.clone());
    }
    Ok(Replay { states, apps })
}

/// What a passing check found.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Verdict {
    /// The table's last version.
    pub(crate) last: u64,
    /// Readers' snapshots checked against the oracle's decode.
    pub(crate) reads_checked: u64,
    /// Readers' snapshots not checked: of versions older than the retention window of
    /// which a file is gone (VACUUM may remove it), or that the replay cannot rebuild
    /// (their commits removed below its checkpoint).
    pub(crate) reads_skipped: u64,
}

/// Checks the table in `store` against `model`. `Err` describes the first violation.
pub(crate) fn check(store: &Arc<SimStore>, model: &Model, now_ms: i64) -> Result<Verdict, String> {
    let names: Vec<String> = store
        .paths()
        .into_iter()
        .filter_map(|p| p.strip_prefix(LOG).map(str::to_string))
        .filter(|n| !n.contains('/'))
        .collect();
    let commits: Vec<u64> = names
        .iter()
        .filter_map(|n| version_of(n, ".json"))
        .collect();
    let checkpoints: BTreeSet<u64> = names
        .iter()
        .filter_map(|n| n.get(..20).filter(|_| n[20..].starts_with(".checkpoint.")))
        .filter_map(|d| d.parse().ok())
        .collect();
    let Some(&first) = commits.first() else {
        return if model.rows.values().any(|r| *r == Row::Acked) {
            Err("acknowledged writes but no log".into())
        } else {
            Ok(Verdict {
                reads_skipped: model.reads.len() as u64,
                ..Verdict::default()
            })
        };
    };
    let last = *commits.last().unwrap_or(&first);
    // 1. Versions contiguous; commits gone only below a checkpoint.
    if commits != (first..=last).collect::<Vec<_>>() {
        return Err(format!("the log has gaps: {commits:?}"));
    }
    if first > 0 && !checkpoints.iter().any(|c| *c + 1 >= first) {
        return Err(format!(
            "commits below {first} removed without a checkpoint"
        ));
    }
    // 2. Each commit once; appId versions monotone; the window's files present.
    let cutoff = now_ms - FILE_RETENTION_MS;
    let mut window_start = first;
    let mut parsed = BTreeMap::new();
    for v in first..=last {
        let path = format!("{LOG}{v:020}.json");
        let bytes = store
            .peek(&path)
            .ok_or_else(|| format!("commit {v} vanished"))?;
        if store.modified(&path).is_some_and(|m| m <= cutoff) {
            window_start = v;
        }
        parsed.insert(v, parse_commit(v, &bytes)?);
    }
    let mut txn_ids = HashSet::new();
    let mut app_versions: BTreeMap<String, i64> = BTreeMap::new();
    for (v, c) in &parsed {
        if let Some(t) = &c.txn_id
            && !txn_ids.insert(t.clone())
        {
            return Err(format!(
                "transaction {t} committed twice (again at version {v})"
            ));
        }
        let mut in_commit = HashSet::new();
        for (app, ver) in &c.apps {
            // One commit records one version per application (Delta: at most one `txn`
            // per appId in a commit); a group commit must keep such writes apart.
            if !in_commit.insert(app.as_str()) {
                return Err(format!(
                    "appId {app}: two txn actions in commit {v} (version {ver} among them)"
                ));
            }
            if let Some(prev) = app_versions.insert(app.clone(), *ver)
                && prev >= *ver
            {
                return Err(format!(
                    "appId {app}: version {ver} committed at {v} after version {prev}"
                ));
            }
        }
    }
    let Replay { states, apps } = replay(store, &parsed, &checkpoints, first, last)?;
    for (v, live) in states.range(window_start..) {
        for ((p, _), f) in live {
            check_file(store, *v, p, f.size)?;
        }
    }
    let source = |p: &str| store.peek(p);
    let mut decoder = Decoder::new(&source, &store.root_uri());
    // 3. The latest version: its rows, decoded here, match the model; the engine loads it,
    //    and its scan gives the same rows.
    let latest_files = states
        .get(&last)
        .ok_or_else(|| format!("the replay did not reach version {last}"))?;
    let rows = decoder
        .rows(latest_files)
        .map_err(|e| format!("version {last} does not decode: {e}"))?;
    check_rows(model, &rows)?;
    let t = table(store.clone());
    let latest = t
        .snapshot()
        .map_err(|e| format!("the latest version does not load: {e}"))?;
    if latest.version() != last {
        return Err(format!(
            "latest snapshot is {} but the log ends at {last}",
            latest.version()
        ));
    }
    let scanned =
        rows_of(latest.clone()).map_err(|e| format!("the latest version does not scan: {e}"))?;
    if scanned != rows {
        return Err(format!(
            "the engine scans {} rows at version {last}; the log holds {}{}",
            scanned.len(),
            rows.len(),
            first_difference(&scanned, &rows)
        ));
    }
    // Each application's version, in the oracle's replay and as the engine loads it.
    for (app, a) in &model.apps {
        let logged = apps.get(app).copied();
        let loaded = latest.app_transaction_version(app, now_ms);
        for (who, got) in [("the log records", logged), ("the engine loads", loaded)] {
            let ok = match (a.acked, got) {
                (_, Some(g)) if a.unknown.contains(&g) => a.acked.is_none_or(|k| g >= k),
                (Some(k), Some(g)) => g == k,
                (None, None) => true,
                _ => false,
            };
            if !ok {
                return Err(format!(
                    "appId {app}: {who} version {got:?}; acknowledged {:?}, unknown {:?}",
                    a.acked, a.unknown
                ));
            }
        }
    }
    // Versions of the window below the replay's checkpoint (their commits removed, the
    // oracle cannot rebuild them): the files of those that still load are checked through
    // the engine's load.
    let rebuilt_from = states.keys().next().copied().unwrap_or(last);
    for v in window_start..rebuilt_from {
        if let Ok(s) = t.snapshot_at(VersionSpec::Version(v)) {
            for a in s.files() {
                check_file(store, v, a.path(), a.size())?;
            }
        }
    }
    // 4. Each checkpoint equals the replay of the commits it replaces: its own decode
    //    against the oracle's replay, and the engine's load with it against the engine's
    //    load from the commits alone (appIds too).
    for c in checkpoints.iter().filter(|c| **c <= last) {
        let Some(replayed) = states.get(c) else {
            continue;
        };
        let path = format!("{LOG}{c:020}.checkpoint.parquet");
        if let Some(Ok(files)) = store.peek(&path).map(checkpoint_files)
            && &files != replayed
        {
            let only = |a: &Files, b: &Files| a.keys().find(|k| !b.contains_key(*k)).cloned();
            return Err(format!(
                "checkpoint {c} differs from the replay of its commits (only in the checkpoint: {:?}; only in the replay: {:?})",
                only(&files, replayed),
                only(replayed, &files)
            ));
        }
    }
    if first == 0 {
        let replay = table(Arc::new(NoCheckpoints(store.clone())));
        for c in checkpoints.iter().filter(|c| **c <= last) {
            let a = t.snapshot_at(VersionSpec::Version(*c));
            let b = replay.snapshot_at(VersionSpec::Version(*c));
            let (a, b) = match (a, b) {
                (Ok(a), Ok(b)) => (a, b),
                (a, b) => {
                    return Err(format!(
                        "version {c}: with checkpoint {:?}, from commits {:?}",
                        a.err().map(|e| e.to_string()),
                        b.err().map(|e| e.to_string())
                    ));
                }
            };
            let files = |s: &alluvium::Snapshot| {
                let mut f: Vec<(String, Option<String>)> = s
                    .files()
                    .map(|a| {
                        (
                            a.path().to_string(),
                            a.deletion_vector().map(|d| format!("{d:?}")),
                        )
                    })
                    .collect();
                f.sort();
                f
            };
            if files(&a) != files(&b) {
                return Err(format!(
                    "checkpoint {c} differs from the replay of its commits"
                ));
            }
            for app in model.apps.keys() {
                if a.app_transaction_version(app, now_ms) != b.app_transaction_version(app, now_ms)
                {
                    return Err(format!(
                        "checkpoint {c}: appId {app} differs from the replay"
                    ));
                }
            }
        }
    }
    // 5. What a reader was given is what the log holds at its version, decoded here
    //    (not checked: versions the replay cannot rebuild, and versions older than the
    //    retention window of which a file is gone, as VACUUM may have removed it).
    let mut verdict = Verdict {
        last,
        ..Verdict::default()
    };
    for (v, seen) in &model.reads {
        let Some(files) = states.get(v) else {
            verdict.reads_skipped += 1;
            continue;
        };
        let held = match decoder.rows(files) {
            Ok(rows) => rows,
            // Older than the retention window: VACUUM may have removed its files.
            Err(_) if *v < window_start && decoder.missing() => {
                verdict.reads_skipped += 1;
                continue;
            }
            Err(e) => {
                return Err(format!(
                    "version {v}, which a reader saw, does not decode: {e}"
                ));
            }
        };
        verdict.reads_checked += 1;
        if &held != seen {
            return Err(format!(
                "a reader saw {} rows at version {v}; the log holds {}{}",
                seen.len(),
                held.len(),
                first_difference(seen, &held)
            ));
        }
    }
    Ok(verdict)
}

/// The rows of the latest version against the model.
fn check_rows(model: &Model, rows: &[(i64, i64)]) -> Result<(), String> {
    let mut count: BTreeMap<i64, usize> = BTreeMap::new();
    for (id, v) in rows {
        *count.entry(*id).or_default() += 1;
        if let Some(possible) = model.values.get(id)
            && !possible.contains(v)
        {
            return Err(format!(
                "row {id} holds {v}; the acknowledged UPDATEs and MERGEs leave {possible:?}"
            ));
        }
    }
    for (id, n) in &count {
        match model.rows.get(id) {
            None => return Err(format!("row {id} appeared from nowhere")),
            Some(Row::Failed) => {
                return Err(format!(
                    "row {id} of a write that definitely failed is present"
                ));
            }
            Some(Row::Deleted) => return Err(format!("row {id} came back after its DELETE")),
            Some(_) if *n > 1 => return Err(format!("row {id} is present {n} times")),
            Some(_) => {}
        }
    }
    for (id, r) in &model.rows {
        if *r == Row::Acked && !count.contains_key(id) {
            return Err(format!("acknowledged row {id} is missing"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::model::Row;
    use crate::sched::{FaultRates, Scheduler};
    use alluvium::arrow::array::{ArrayRef, Int64Array, RecordBatch};
    use alluvium::{CheckpointConfig, StorePath, WriteOptions};

    /// A table built through the engine's public API on a simulated store (no actor runs,
    /// so no fault is injected): ids 1..=6 with value 10 × id (appId `a` version 3), then a DELETE of 2 with its
    /// DV in a file, a DELETE of 4 with its DV inline, an UPDATE of 3, and a checkpoint.
    fn table_with_dvs() -> (Arc<SimStore>, Arc<Scheduler>) {
        let sched = Arc::new(Scheduler::new(7, 0, u64::MAX, false, FaultRates::default()));
        let store = Arc::new(SimStore::new(sched.clone(), false));
        let t = Table::from_store(store.clone());
        // vocabulary: a table property set as a user would
        let props = [("delta.enableDeletionVectors", "true".to_string())];
        t.create(&crate::actors::schema(), &[], props).unwrap();
        let ids: Vec<i64> = (1..=6).collect();
        let vs: Vec<i64> = ids.iter().map(|i| i * 10).collect();
        let b = RecordBatch::try_new(
            crate::actors::schema(),
            vec![
                Arc::new(Int64Array::from(ids)) as ArrayRef,
                Arc::new(Int64Array::from(vs)),
            ],
        )
        .unwrap();
        let w = WriteOptions::default();
        let app = w
            .clone()
            .with_app_transaction(alluvium::AppTransaction::new("a", 3));
        t.append([b], &app).unwrap();
        t.delete_str("id = 2", &w.clone().with_dv_files_only(true))
            .unwrap();
        t.delete_str("id = 4", &w.clone().with_dv_files_only(false))
            .unwrap();
        t.update_str("v = v + 1", Some("id = 3"), &w).unwrap();
        t.checkpoint(&CheckpointConfig::default()).unwrap();
        (store, sched)
    }

    /// The oracle's replay of every version of the log in `store`.
    fn states_of(store: &SimStore) -> BTreeMap<u64, Files> {
        let mut parsed = BTreeMap::new();
        for v in 0.. {
            let Some(b) = store.peek(&format!("{LOG}{v:020}.json")) else {
                break;
            };
            parsed.insert(v, parse_commit(v, &b).unwrap());
        }
        let last = *parsed.keys().last().unwrap();
        replay(store, &parsed, &BTreeSet::new(), 0, last)
            .unwrap()
            .states
    }

    #[test]
    fn the_decoder_applies_file_and_inline_deletion_vectors() {
        let (store, _sched) = table_with_dvs();
        let states = states_of(&store);
        let last = *states.keys().last().unwrap();
        let kinds: BTreeSet<String> = states
            .values()
            .flat_map(|f| f.values())
            .filter_map(|f| f.dv.as_ref().map(|d| d.storage_type.clone()))
            .collect();
        assert_eq!(kinds, BTreeSet::from(["i".to_string(), "u".to_string()]));
        let source = |p: &str| store.peek(p);
        let mut d = Decoder::new(&source, &store.root_uri());
        let all: Vec<(i64, i64)> = (1..=6).map(|i| (i, i * 10)).collect();
        assert_eq!(d.rows(&states[&1]).unwrap(), all);
        assert_eq!(
            d.rows(&states[&2]).unwrap(),
            [(1, 10), (3, 30), (4, 40), (5, 50), (6, 60)]
        );
        assert_eq!(
            d.rows(&states[&last]).unwrap(),
            [(1, 10), (3, 31), (5, 50), (6, 60)]
        );
        // The checkpoint the engine wrote decodes to the replay of its commits.
        let ckpt = store
            .peek(&format!("{LOG}{last:020}.checkpoint.parquet"))
            .unwrap();
        assert_eq!(checkpoint_files(ckpt.clone()).unwrap(), states[&last]);
        let apps = checkpoint(ckpt).unwrap().apps;
        assert_eq!(apps, BTreeMap::from([("a".to_string(), 3)]));
    }

    #[test]
    fn a_damaged_deletion_vector_file_is_an_error_not_a_panic() {
        let (store, _sched) = table_with_dvs();
        let states = states_of(&store);
        let dv_file = store
            .paths()
            .into_iter()
            .find(|p| p.contains("deletion_vector_"))
            .unwrap();
        let mut bytes = store.peek(&dv_file).unwrap().to_vec();
        let n = bytes.len();
        bytes[n - 6] ^= 0xff;
        store
            .put(&StorePath::parse(&dv_file).unwrap(), bytes.into())
            .unwrap();
        let source = |p: &str| store.peek(p);
        let mut d = Decoder::new(&source, &store.root_uri());
        let e = d.rows(&states[&2]).unwrap_err();
        assert!(e.contains("CRC"), "{e}");
    }

    #[test]
    fn a_reader_given_other_rows_than_the_log_holds_is_reported() {
        let (store, sched) = table_with_dvs();
        let mut model = Model::default();
        for id in 1..=6 {
            let r = if id == 2 || id == 4 {
                Row::Deleted
            } else {
                Row::Acked
            };
            model.rows.insert(id, r);
        }
        // What the reader was given at version 2 (after the first DELETE) as the log has it.
        let right = vec![(1, 10), (3, 30), (4, 40), (5, 50), (6, 60)];
        model.reads.push((2, right.clone()));
        let verdict = check(&store, &model, sched.now_ms()).unwrap();
        assert_eq!((verdict.reads_checked, verdict.reads_skipped), (1, 0));
        // A reader that was given the deleted row 2 back (an engine that ignored the DV).
        let mut wrong = right;
        wrong.insert(1, (2, 20));
        model.reads.push((2, wrong));
        let e = check(&store, &model, sched.now_ms()).unwrap_err();
        assert!(e.starts_with("a reader saw 6 rows at version 2"), "{e}");
    }
}
