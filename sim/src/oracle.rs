//! The oracle: after a run (all actors stopped), the table reopened from the store alone is
//! judged against the model of what the actors were told and against the protocol's own
//! invariants. The log is read here with plain JSON parsing, not the engine's decoder; the
//! rows are read through the engine's public scan (the simulator does not decode Parquet or
//! deletion vectors itself), and each check compares them with the model, not with another
//! engine computation.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::Arc;

use alluvium::{StoreRef, Table, VersionSpec};
use serde_json::Value;

use crate::actors::rows_of;
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
    adds: Vec<(String, i64, Option<String>)>,
    removes: Vec<String>,
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
            let dv = add.get("deletionVector").map(Value::to_string);
            c.adds.push((path.to_string(), size, dv));
        }
        if let Some(rm) = a.get("remove") {
            let path = rm.get("path").and_then(Value::as_str).unwrap_or_default();
            c.removes.push(path.to_string());
        }
    }
    Ok(c)
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

/// Checks the table in `store` against `model`. `Err` describes the first violation.
pub(crate) fn check(store: &Arc<SimStore>, model: &Model, now_ms: i64) -> Result<u64, String> {
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
            Ok(0)
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
    let mut live: BTreeMap<String, i64> = BTreeMap::new();
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
        if first == 0 {
            for r in &c.removes {
                live.remove(r);
            }
            for (p, size, _) in &c.adds {
                live.insert(p.clone(), *size);
            }
            if *v >= window_start {
                for (p, size) in &live {
                    check_file(store, *v, p, *size)?;
                }
            }
        }
    }
    // 3. The latest snapshot: loads, its files are whole, its rows match the model.
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
    for a in latest.files() {
        check_file(store, last, &a.path, a.size)?;
    }
    let rows =
        rows_of(latest.clone()).map_err(|e| format!("the latest version does not scan: {e}"))?;
    check_rows(model, &rows)?;
    for (app, a) in &model.apps {
        let got = latest.app_transaction_version(app, now_ms);
        let ok = match (a.acked, got) {
            (_, Some(g)) if a.unknown.contains(&g) => a.acked.is_none_or(|k| g >= k),
            (Some(k), Some(g)) => g == k,
            (None, None) => true,
            _ => false,
        };
        if !ok {
            return Err(format!(
                "appId {app}: the table records version {got:?}; acknowledged {:?}, unknown {:?}",
                a.acked, a.unknown
            ));
        }
    }
    // Commits removed by log cleanup: the versions of the window that still load (from a
    // checkpoint) are checked through the engine's replay instead of the oracle's own.
    if first > 0 {
        for v in window_start..last {
            if let Ok(s) = t.snapshot_at(VersionSpec::Version(v)) {
                for a in s.files() {
                    check_file(store, v, &a.path, a.size)?;
                }
            }
        }
    }
    // 4. Each checkpoint equals the replay of the commits it replaces.
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
                            a.path.clone(),
                            a.deletion_vector.as_ref().map(|d| format!("{d:?}")),
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
    // 5. What readers saw is what the version holds (while retained).
    for (v, seen) in &model.reads {
        if *v < window_start.max(first) || *v > last {
            continue;
        }
        let again = t
            .snapshot_at(VersionSpec::Version(*v))
            .and_then(rows_of)
            .map_err(|e| format!("version {v}, which a reader saw, no longer reads: {e}"))?;
        if &again != seen {
            let first_difference = seen
                .iter()
                .zip(&again)
                .find(|(a, b)| a != b)
                .map(|(a, b)| format!(" (first difference: {a:?} then, {b:?} now)"))
                .unwrap_or_default();
            return Err(format!(
                "a reader saw {} rows at version {v}; it now holds {}{first_difference}",
                seen.len(),
                again.len()
            ));
        }
    }
    Ok(last)
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
