//! Stress with operating-system processes (SPEC.md §7 I1–I2, §23): four `alluvium merge`
//! processes upserting overlapping keys and four `alluvium append` processes race on one
//! table on local disk. Each command that exits 0 names the version it committed; the final
//! table must equal the serial replay of those commits in version order, every version
//! after the setup must be exactly one acknowledged command (nothing lost, nothing doubled),
//! and a failed merge must be a retryable conflict that committed nothing.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use super::common::{ok, run};

/// What one acknowledged command did: an upsert of (id, v) pairs, or an append of ids.
#[derive(Debug, Clone)]
enum Op {
    Upsert(Vec<(i64, i64)>),
    Append(Vec<i64>),
}

const MERGERS: i64 = 4;
const APPENDERS: i64 = 4;
const ROUNDS: i64 = 5;
const KEYS: i64 = 25;

fn write_csv(path: &Path, rows: &[(i64, i64, &str)]) {
    let mut text = String::from("id,v,tag\n");
    for (id, v, tag) in rows {
        text.push_str(&format!("{id},{v},{tag}\n"));
    }
    std::fs::write(path, text).unwrap();
}

/// The version a successful write command printed (its line ends `; version N`).
fn committed_version(stdout: &str) -> u64 {
    super::common::version_of(stdout.lines().next().unwrap_or(""))
}

fn commit_versions(table: &Path) -> Vec<u64> {
    let mut v: Vec<u64> = std::fs::read_dir(table.join("_delta_log"))
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".json")
                .filter(|s| s.len() == 20)
                .and_then(|s| s.parse().ok())
        })
        .collect();
    v.sort_unstable();
    v
}

#[test]
fn four_merging_and_four_appending_processes_equal_the_serial_replay() {
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("t");
    let t = table.to_str().unwrap().to_string();
    // Setup: two files of ids 0..20, then deletion vectors on (MERGE writes DVs).
    let mut model: BTreeMap<i64, (i64, String)> = BTreeMap::new();
    for (n, ids) in [(0i64, 0..10i64), (1, 10..20)] {
        let rows: Vec<(i64, i64, &str)> = ids.clone().map(|i| (i, i, "init")).collect();
        let f = dir.path().join(format!("init{n}.csv"));
        write_csv(&f, &rows);
        let mut args = vec!["append", &t, f.to_str().unwrap()];
        if n == 0 {
            args.push("--create");
        }
        ok(&args);
        for i in ids {
            model.insert(i, (i, "init".into()));
        }
    }
    ok(&[
        "alter",
        &t,
        "--set-property",
        "delta.enableDeletionVectors=true",
    ]);
    let setup = *commit_versions(&table).last().unwrap();

    let landed: Arc<Mutex<BTreeMap<u64, Op>>> = Arc::new(Mutex::new(BTreeMap::new()));
    let conflicts: Arc<Mutex<Vec<String>>> = Arc::default();
    let mut workers = Vec::new();
    for w in 0..MERGERS {
        let (t, landed, dir) = (t.clone(), landed.clone(), dir.path().to_path_buf());
        let conflicts = conflicts.clone();
        workers.push(std::thread::spawn(move || {
            for i in 0..ROUNDS {
                let mut src: Vec<(i64, i64)> = [(i * 3 + w) % KEYS, (i * 5 + w * 7 + 1) % KEYS]
                    .iter()
                    .map(|k| (*k, w * 1000 + i))
                    .collect();
                src.dedup_by_key(|r| r.0);
                let f = dir.join(format!("m{w}-{i}.csv"));
                let rows: Vec<(i64, i64, &str)> = src.iter().map(|(k, v)| (*k, *v, "m")).collect();
                write_csv(&f, &rows);
                // A conflict is retried on a fresh snapshot, a bounded number of times.
                for _attempt in 0..20 {
                    let o = run(&[
                        "merge",
                        &t,
                        f.to_str().unwrap(),
                        "--on",
                        "t.id = s.id",
                        "--when",
                        "MATCHED THEN UPDATE SET *",
                        "--when",
                        "NOT MATCHED THEN INSERT *",
                    ]);
                    if o.status.success() {
                        let v = committed_version(&String::from_utf8_lossy(&o.stdout));
                        let old = landed.lock().unwrap().insert(v, Op::Upsert(src.clone()));
                        assert!(old.is_none(), "version {v} acknowledged twice");
                        break;
                    }
                    let err = String::from_utf8_lossy(&o.stderr);
                    conflicts.lock().unwrap().push(err.to_string());
                    assert!(
                        err.contains("safe to retry"),
                        "merge process {w} round {i}: {err}"
                    );
                }
            }
        }));
    }
    for a in 0..APPENDERS {
        let (t, landed, dir) = (t.clone(), landed.clone(), dir.path().to_path_buf());
        workers.push(std::thread::spawn(move || {
            for i in 0..ROUNDS {
                let id = 1000 + a * 100 + i;
                let f = dir.join(format!("a{a}-{i}.csv"));
                write_csv(&f, &[(id, id, "x")]);
                // Blind appends never conflict: each must land on its first run.
                let out = ok(&["append", &t, f.to_str().unwrap()]);
                let v = committed_version(&out);
                let old = landed.lock().unwrap().insert(v, Op::Append(vec![id]));
                assert!(old.is_none(), "version {v} acknowledged twice");
            }
        }));
    }
    for h in workers {
        h.join().unwrap();
    }

    let landed = landed.lock().unwrap();
    let conflicts = conflicts.lock().unwrap();
    eprintln!(
        "{} commits landed, {} merge runs refused with a conflict",
        landed.len(),
        conflicts.len()
    );
    // Every version after the setup is exactly one acknowledged command.
    let versions = commit_versions(&table);
    let after: Vec<u64> = versions.iter().copied().filter(|v| *v > setup).collect();
    assert_eq!(
        versions,
        (0..=*versions.last().unwrap()).collect::<Vec<_>>()
    );
    assert_eq!(after, landed.keys().copied().collect::<Vec<_>>());
    assert_eq!(
        landed
            .values()
            .filter(|o| matches!(o, Op::Append(_)))
            .count(),
        (APPENDERS * ROUNDS) as usize
    );
    assert!(
        landed.values().any(|o| matches!(o, Op::Upsert(_))),
        "no merge landed"
    );
    // Serial replay in version order.
    for op in landed.values() {
        match op {
            Op::Upsert(src) => {
                for (k, v) in src {
                    model.insert(*k, (*v, "m".into()));
                }
            }
            Op::Append(ids) => {
                for id in ids {
                    model.insert(*id, (*id, "x".into()));
                }
            }
        }
    }
    let expected: Vec<String> = model
        .iter()
        .map(|(id, (v, tag))| format!("{id},{v},{tag}"))
        .collect();
    let mut got: Vec<String> = ok(&["scan", &t, "--format", "csv"])
        .lines()
        .skip(1)
        .map(str::to_string)
        .collect();
    got.sort_by_key(|l| l.split(',').next().unwrap().parse::<i64>().unwrap());
    assert_eq!(got, expected);
    // The table verifies clean after the race.
    let o = run(&["verify", &t]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
}
