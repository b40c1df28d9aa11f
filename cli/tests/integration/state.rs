//! `alluvium state ...` (SPEC.md §26): the store's commands end to end on local disk, their
//! JSON reports, key syntax, one-line errors, and follow mode stopping on SIGTERM.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::common::{BIN, fails, ok, run};

/// One event as the tests write it: `seq` is unique per test, so it names the event.
#[derive(Debug, Clone)]
pub struct Event {
    pub id: i64,
    pub amount: i64,
    /// Microseconds after 2024-03-01T00:00:00Z.
    pub t_us: i64,
    pub seq: i64,
    pub delete: bool,
}

/// 2024-03-01T00:00:00Z in microseconds.
const T0_US: i64 = 1_709_251_200_000_000;

/// Writes `events` as a CSV file of the store's event shape.
pub fn write_events(path: &Path, events: &[Event]) {
    let mut text = String::from("id,amount,note,event_time,seq,op\n");
    for e in events {
        let t = chrono::DateTime::from_timestamp_micros(T0_US + e.t_us).unwrap();
        text.push_str(&format!(
            "{},{},n{},{},{},{}\n",
            e.id,
            e.amount,
            e.seq,
            t.format("%Y-%m-%dT%H:%M:%S%.6fZ"),
            e.seq,
            if e.delete { "DELETE" } else { "UPSERT" }
        ));
    }
    std::fs::write(path, text).unwrap();
}

/// The fold of `events` by the ordering rule: per key the event with the greatest
/// (event time, seq), kept if it is an upsert; key -> (amount, seq).
pub fn fold(events: &[Event]) -> BTreeMap<i64, (i64, i64)> {
    let mut latest: BTreeMap<i64, &Event> = BTreeMap::new();
    for e in events {
        let newer = latest
            .get(&e.id)
            .is_none_or(|l| (e.t_us, e.seq) > (l.t_us, l.seq));
        if newer {
            latest.insert(e.id, e);
        }
    }
    latest
        .into_iter()
        .filter(|(_, e)| !e.delete)
        .map(|(k, e)| (k, (e.amount, e.seq)))
        .collect()
}

/// The rows of JSON-lines output as key -> (amount, seq).
pub fn rows_of(jsonl: &str) -> BTreeMap<i64, (i64, i64)> {
    jsonl
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (
                v["id"].as_i64().unwrap(),
                (v["amount"].as_i64().unwrap(), v["seq"].as_i64().unwrap()),
            )
        })
        .collect()
}

/// The store's state as printed by `state scan --format jsonl`.
pub fn state_rows(store: &str) -> BTreeMap<i64, (i64, i64)> {
    rows_of(&ok(&["state", "scan", store, "--format", "jsonl"]))
}

/// `state status` as JSON.
pub fn status(store: &str) -> Value {
    serde_json::from_str(&ok(&["state", "status", store])).unwrap()
}

/// Waits (up to two minutes, a guard against hanging, not a timing assertion) until
/// `state/` has applied every log version.
pub fn wait_synced(store: &str) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let s = status(store);
        if s["lag"]["versions"] == 0 {
            return;
        }
        assert!(Instant::now() < deadline, "state never caught up: {s}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Starts `state sync STORE --follow` with its stdout piped.
pub fn follower(store: &str, interval_ms: u64) -> Child {
    Command::new(BIN)
        .args([
            "state",
            "sync",
            store,
            "--follow",
            "--interval-ms",
            &interval_ms.to_string(),
            "--json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Sends SIGTERM to `child`, waits for it, requires exit 0; its stdout lines as JSON (one
/// per sync that applied something, then the follow report).
pub fn terminate(mut child: Child) -> Vec<Value> {
    let pid = child.id().to_string();
    let killed = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(killed.success());
    let stdout = child.stdout.take().unwrap();
    let lines: Vec<Value> = BufReader::new(stdout)
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "follow exited with {:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    lines
}

fn ev(id: i64, amount: i64, t_us: i64, seq: i64, delete: bool) -> Event {
    Event {
        id,
        amount,
        t_us,
        seq,
        delete,
    }
}

#[test]
fn init_put_sync_then_get_scan_history_status_and_time_travel() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s").to_string_lossy().into_owned();
    let first = vec![
        ev(1, 10, 100, 1, false),
        ev(2, 20, 100, 2, false),
        // Key 2 twice in one batch: the later (event_time, seq) wins whatever the order.
        ev(2, 21, 50, 3, false),
        ev(3, 30, 100, 4, false),
    ];
    let f1 = dir.path().join("e1.csv");
    write_events(&f1, &first);
    let created = ok(&[
        "state",
        "init",
        &store,
        "--key",
        "id",
        "--schema-from",
        f1.to_str().unwrap(),
    ]);
    assert!(created.starts_with("created state store"), "{created}");
    let put: Value = serde_json::from_str(&ok(&[
        "state",
        "put",
        &store,
        f1.to_str().unwrap(),
        "--json",
    ]))
    .unwrap();
    assert_eq!(put["events"], 4);
    assert_eq!(put["skipped"], false);
    let s = status(&store);
    assert_eq!(s["lag"]["events"], 4, "{s}");
    assert_eq!(s["key_columns"], serde_json::json!(["id"]));
    let sync: Value = serde_json::from_str(&ok(&["state", "sync", &store, "--json"])).unwrap();
    assert_eq!(sync["events"], 4, "{sync}");
    let v1 = sync["state_version"].as_i64().unwrap();
    assert_eq!(
        state_rows(&store),
        BTreeMap::from([(1, (10, 1)), (2, (20, 2)), (3, (30, 4))])
    );

    // An older upsert of key 1 arrives late, key 3 is deleted, key 4 appears.
    let second = vec![
        ev(1, 11, 99, 9, false),
        ev(3, 0, 101, 5, true),
        ev(4, 40, 100, 6, false),
    ];
    let f2 = dir.path().join("e2.csv");
    write_events(&f2, &second);
    // Without --json, one line each for a person.
    let put = ok(&["state", "put", &store, f2.to_str().unwrap()]);
    assert!(
        put.starts_with("put 3 events in 1 file into the log; version "),
        "{put}"
    );
    let sync = ok(&["state", "sync", &store]);
    // The late older upsert of key 1 loses to the newer event already in the state.
    assert!(
        sync.starts_with(
            "synced log version 2 (3 events): 1 inserted, 0 updated, 1 deleted; state version "
        ),
        "{sync}"
    );
    let all: Vec<Event> = first.iter().chain(&second).cloned().collect();
    assert_eq!(state_rows(&store), fold(&all));
    assert_eq!(status(&store)["keys"], 3);

    // get: keys as values or col=value, a missing key prints nothing for it.
    let got = rows_of(&ok(&[
        "state", "get", &store, "1", "id=4", "3", "--format", "jsonl",
    ]));
    assert_eq!(got, BTreeMap::from([(1, (10, 1)), (4, (40, 6))]));
    let table = ok(&["state", "get", &store, "4"]);
    assert!(table.contains("| 40"), "{table}");
    // Time travel: the state version of the first sync still has key 3.
    let old = rows_of(&ok(&[
        "state",
        "get",
        &store,
        "3",
        "--version",
        &v1.to_string(),
        "--format",
        "jsonl",
    ]));
    assert_eq!(old, BTreeMap::from([(3, (30, 4))]));
    let old_scan = rows_of(&ok(&[
        "state",
        "scan",
        &store,
        "--version",
        &v1.to_string(),
        "--format",
        "jsonl",
    ]));
    assert_eq!(old_scan.len(), 3);
    // history: every event of key 2, both of its batch.
    let history = ok(&["state", "history", &store, "2", "--format", "jsonl"]);
    assert_eq!(history.lines().count(), 2, "{history}");
    // scan to a Parquet file.
    let out = dir.path().join("state.parquet");
    ok(&[
        "state",
        "scan",
        &store,
        "--format",
        "parquet",
        "--output",
        out.to_str().unwrap(),
    ]);
    assert!(std::fs::metadata(&out).unwrap().len() > 0);
    // The tables are ordinary Delta tables.
    let log_rows = ok(&["scan", &format!("{store}/log"), "--format", "jsonl"]);
    assert_eq!(log_rows.lines().count(), 7);
}

#[test]
fn composite_keys_are_col_equals_value_pairs() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s").to_string_lossy().into_owned();
    let f = dir.path().join("e.jsonl");
    std::fs::write(
        &f,
        concat!(
            r#"{"a": 1, "b": "x", "v": 1.5, "event_time": "2024-01-01T00:00:00Z"}"#,
            "\n",
            r#"{"a": 1, "b": "y", "v": 2.5, "event_time": "2024-01-01T00:00:00Z"}"#,
            "\n",
            r#"{"a": 2, "b": "x", "v": 3.5, "event_time": "2024-01-01T00:00:00Z", "op": "UPSERT"}"#,
            "\n",
        ),
    )
    .unwrap();
    ok(&[
        "state",
        "init",
        &store,
        "--key",
        "a,b",
        "--schema-from",
        f.to_str().unwrap(),
    ]);
    ok(&["state", "put", &store, f.to_str().unwrap()]);
    ok(&["state", "sync", &store]);
    let got = ok(&[
        "state", "get", &store, "a=1,b=y", "b=x,a=2", "--format", "jsonl",
    ]);
    let rows: Vec<Value> = got
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut vs: Vec<f64> = rows.iter().map(|r| r["v"].as_f64().unwrap()).collect();
    vs.sort_by(f64::total_cmp);
    assert_eq!(vs, vec![2.5, 3.5]);
    for (bad, says) in [
        ("a=1", "`b` is missing"),
        ("1,x", "col=value"),
        ("a=1,b=x,c=2", "`c` is not a key column"),
        ("a=one,b=x", "key column `a`"),
    ] {
        let e = fails(&["state", "get", &store, bad]);
        assert!(e.contains(says), "{bad}: {e}");
    }
}

#[test]
fn idempotent_puts_are_skipped_once_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s").to_string_lossy().into_owned();
    let f = dir.path().join("e.csv");
    write_events(&f, &[ev(1, 1, 0, 1, false)]);
    let f = f.to_str().unwrap();
    ok(&["state", "init", &store, "--key", "id", "--schema-from", f]);
    let put = |v: &str| -> Value {
        serde_json::from_str(&ok(&[
            "state",
            "put",
            &store,
            f,
            "--app-id",
            "producer-1",
            "--app-version",
            v,
            "--json",
        ]))
        .unwrap()
    };
    assert_eq!(put("1")["skipped"], false);
    assert_eq!(put("1")["skipped"], true);
    assert_eq!(put("2")["skipped"], false);
    assert_eq!(status(&store)["lag"]["events"], 2);
}

#[test]
fn state_errors_are_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s").to_string_lossy().into_owned();
    // Not a store.
    fails(&["state", "status", &store]);
    let reserved = dir.path().join("r.csv");
    std::fs::write(&reserved, "id,event_date\n1,2024-01-01\n").unwrap();
    let e = fails(&[
        "state",
        "init",
        &store,
        "--key",
        "id",
        "--schema-from",
        reserved.to_str().unwrap(),
    ]);
    assert!(e.contains("event_date"), "{e}");
    let f = dir.path().join("e.csv");
    write_events(&f, &[ev(1, 1, 0, 1, false)]);
    let e = fails(&[
        "state",
        "init",
        &store,
        "--key",
        "nope",
        "--schema-from",
        f.to_str().unwrap(),
    ]);
    assert!(e.contains("nope"), "{e}");
    ok(&[
        "state",
        "init",
        &store,
        "--key",
        "id",
        "--schema-from",
        f.to_str().unwrap(),
    ]);
    let bad_op = dir.path().join("bad.csv");
    std::fs::write(
        &bad_op,
        "id,amount,note,event_time,seq,op\n1,1,x,2024-01-01T00:00:00Z,1,MERGE\n",
    )
    .unwrap();
    let e = fails(&["state", "put", &store, bad_op.to_str().unwrap()]);
    assert!(e.contains("MERGE"), "{e}");
    let e = fails(&["state", "get", &store, "x"]);
    assert!(e.contains("key column `id`"), "{e}");
    // Usage errors are clap's (exit 2).
    let o = run(&[
        "state",
        "get",
        &store,
        "1",
        "--version",
        "1",
        "--timestamp",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn retain_dry_run_reports_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s").to_string_lossy().into_owned();
    let f = dir.path().join("e.csv");
    write_events(&f, &[ev(1, 1, 0, 1, false), ev(2, 2, 0, 2, false)]);
    let f = f.to_str().unwrap();
    ok(&["state", "init", &store, "--key", "id", "--schema-from", f]);
    ok(&["state", "put", &store, f]);
    // Unsynced: nothing may go, whatever the age.
    let r: Value = serde_json::from_str(&ok(&[
        "state",
        "retain",
        &store,
        "--keep-days",
        "1",
        "--json",
    ]))
    .unwrap();
    assert_eq!(r["files_removed"], 0, "{r}");
    assert_eq!(status(&store)["log_files"], 1);
    ok(&["state", "sync", &store]);
    let before = status(&store)["log_version"].clone();
    let r: Value = serde_json::from_str(&ok(&[
        "state",
        "retain",
        &store,
        "--keep-days",
        "1",
        "--dry-run",
        "--json",
    ]))
    .unwrap();
    assert_eq!(r["dry_run"], true);
    assert_eq!(r["partitions_dropped"], serde_json::json!(["2024-03-01"]));
    assert_eq!(status(&store)["log_version"], before);
    let r: Value = serde_json::from_str(&ok(&[
        "state",
        "retain",
        &store,
        "--keep-days",
        "1",
        "--json",
    ]))
    .unwrap();
    assert_eq!(r["files_removed"], 1, "{r}");
    // The state is untouched by dropping the synced log days.
    assert_eq!(
        state_rows(&store),
        BTreeMap::from([(1, (1, 1)), (2, (2, 2))])
    );
}

#[test]
fn follow_keeps_up_with_puts_and_stops_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s").to_string_lossy().into_owned();
    let f0 = dir.path().join("e0.csv");
    write_events(&f0, &[ev(1, 1, 0, 1, false)]);
    ok(&[
        "state",
        "init",
        &store,
        "--key",
        "id",
        "--schema-from",
        f0.to_str().unwrap(),
    ]);
    let child = follower(&store, 20);
    let mut all = Vec::new();
    for round in 0..3 {
        let events: Vec<Event> = (0..5)
            .map(|i| ev(i, round * 10 + i, round, round * 10 + i, false))
            .collect();
        let f = dir.path().join(format!("e{round}.csv"));
        write_events(&f, &events);
        ok(&["state", "put", &store, f.to_str().unwrap()]);
        all.extend(events);
        // No manual sync: the follower alone brings the state up to date.
        wait_synced(&store);
        assert_eq!(state_rows(&store), fold(&all));
    }
    let lines = terminate(child);
    let report = lines.last().unwrap();
    assert!(report["polls"].as_u64().unwrap() >= 1, "{report}");
    let applied: u64 = lines[..lines.len() - 1]
        .iter()
        .map(|l| l["events"].as_u64().unwrap())
        .sum();
    assert_eq!(applied, 15);
}
