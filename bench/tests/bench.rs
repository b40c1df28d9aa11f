//! The `alluvium-bench` binary: each subcommand prints its JSON keys, and writer processes
//! racing on one table (`append`) keep the multi-writer invariants.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../../tests/common/table_check.rs"]
mod table_check;

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use alluvium::Table;
use table_check::check_table;

/// The `alluvium-bench` binary cargo built for these tests.
const BIN: &str = env!("CARGO_BIN_EXE_alluvium-bench");

/// Runs the binary with `args`, which must succeed; its stdout.
fn ok(args: &[&str]) -> String {
    let o = Command::new(BIN).args(args).output().unwrap();
    assert!(
        o.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// The `delta` directory of a conformance table of the repository's test data.
fn conformance(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/data/conformance/tables")
        .join(name)
        .join("delta")
        .to_string_lossy()
        .into_owned()
}

#[test]
fn bench_commands_print_their_json_keys() {
    let load: serde_json::Value = serde_json::from_str(&ok(&[
        "load",
        &conformance("basic-with-checkpoint"),
        "--repeat",
        "3",
    ]))
    .unwrap();
    for key in ["median_ms", "min_ms", "max_ms"] {
        assert!(load[key].as_f64().is_some(), "missing {key}");
    }
    let dir = tempfile::tempdir().unwrap();
    let append: serde_json::Value = serde_json::from_str(&ok(&[
        "append",
        dir.path().to_str().unwrap(),
        "--commits",
        "6",
        "--writers",
        "2",
        "--no-fsync",
    ]))
    .unwrap();
    for key in ["commits_per_s", "p50_ms", "p99_ms", "retries"] {
        assert!(append.get(key).is_some(), "missing {key}");
    }
    assert_eq!(append["lost"], 0);
}

/// 8 processes x 100 appends on the local filesystem (`alluvium-bench append`, one writer
/// each), racing from the creation of the table on.
#[test]
fn eight_processes_one_hundred_appends_each_on_local_disk() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t");
    let children: Vec<_> = (0..8)
        .map(|_| {
            std::process::Command::new(BIN)
                .args([
                    "append",
                    path.to_str().unwrap(),
                    "--commits",
                    "100",
                    "--writers",
                    "1",
                    "--no-fsync",
                ])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut pids = Vec::new();
    for c in children {
        let pid = i64::from(c.id());
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "writer process failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let line: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(line["lost"], 0);
        pids.push(pid);
    }
    let table = Table::open(path.to_str().unwrap()).unwrap();
    let expected: HashMap<i64, i64> = pids.iter().map(|p| (p * 1000, 100)).collect();
    check_table(&table, 800, &expected);
}

/// `scan` reads the whole table to Arrow: rows and Arrow bytes of the result, a median and
/// one timing per run; columns and filters apply as in the CLI's `scan`.
#[test]
fn scan_prints_rows_bytes_and_each_timing() {
    let t = conformance("basic_partitioned");
    let full: serde_json::Value =
        serde_json::from_str(&ok(&["scan", &t, "--repeat", "3"])).unwrap();
    assert_eq!(full["bench"], "scan");
    assert!(full["median_ms"].as_f64().is_some());
    assert_eq!(full["times_ms"].as_array().unwrap().len(), 3);
    let rows = full["rows"].as_u64().unwrap();
    assert!(rows > 0, "{full}");
    assert!(full["bytes"].as_u64().unwrap() > 0, "{full}");
    let expected = Table::open(&t).unwrap().snapshot().unwrap();
    assert_eq!(full["version"], expected.version());
    let narrow: serde_json::Value = serde_json::from_str(&ok(&[
        "scan",
        &t,
        "--columns",
        "letter",
        "--filter",
        "letter = 'a'",
        "--repeat",
        "1",
    ]))
    .unwrap();
    let narrow_rows = narrow["rows"].as_u64().unwrap();
    assert!(narrow_rows > 0 && narrow_rows < rows, "{narrow} vs {full}");
    assert!(narrow["bytes"].as_u64().unwrap() < full["bytes"].as_u64().unwrap());
    let o = Command::new(BIN)
        .args(["scan", &t, "--repeat", "0"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).starts_with("error: --repeat must be at least 1"));
}

/// `changes` reads a change feed to Arrow: the range, the files and rows read, each timing
/// and the peak memory.
#[test]
fn changes_prints_the_range_rows_and_each_timing() {
    let t = conformance("cdf-table");
    let v: serde_json::Value =
        serde_json::from_str(&ok(&["changes", &t, "--from", "0", "--repeat", "2"])).unwrap();
    assert_eq!(v["bench"], "changes");
    assert_eq!(v["start_version"], 0);
    assert_eq!(v["end_version"], 3);
    assert_eq!(v["rows"], 23, "{v}");
    assert!(v["files"].as_u64().unwrap() > 0, "{v}");
    assert_eq!(v["times_ms"].as_array().unwrap().len(), 2);
    let one: serde_json::Value = serde_json::from_str(&ok(&[
        "changes", &t, "--from", "1", "--to", "1", "--repeat", "1",
    ]))
    .unwrap();
    assert!(one["rows"].as_u64().unwrap() < 23, "{one}");
}

/// Errors are one `error: ` line with exit 1 (the CLI's contract); a measurement whose
/// output cannot be written (closed stdout) fails quietly, without a panic (moved from the
/// CLI's tests with `bench`).
#[test]
fn errors_are_one_line_and_lost_output_fails_quietly() {
    let o = Command::new(BIN)
        .args(["load", "/nonexistent/table", "--repeat", "1"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.starts_with("error: "), "{err}");
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let o = Command::new(BIN)
        .args(["load", &conformance("basic_partitioned"), "--repeat", "1"])
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(101), "panicked: {err}");
    assert_ne!(o.status.code(), Some(0), "must report the lost output");
    assert!(err.is_empty(), "{err}");
}

/// `state` at a small size (the workload shape, so the command cannot rot): every
/// key of its report is there and every lookup found the key's latest event.
#[test]
fn state_bench_prints_its_keys_and_every_lookup_matches() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let out: serde_json::Value = serde_json::from_str(&ok(&[
        "state",
        store.to_str().unwrap(),
        "--events",
        "3000",
        "--keys",
        "700",
        "--batch",
        "1000",
        "--lookups",
        "40",
    ]))
    .unwrap();
    for key in [
        "put_events_per_s",
        "sync_ms_p50",
        "sync_ms_p99",
        "get_ms_p50",
        "get_ms_p99",
        "peak_rss_mib",
    ] {
        assert!(out[key].as_f64().is_some(), "missing {key}: {out}");
    }
    assert_eq!(out["syncs"], 3);
    assert_eq!(out["lookup_mismatches"], 0, "{out}");
    assert_eq!(out["status"]["lag"]["versions"], 0, "{out}");
    // A second run into the same directory is refused (the bench needs a fresh store).
    let again = std::process::Command::new(BIN)
        .args(["state", store.to_str().unwrap(), "--events", "10"])
        .output()
        .unwrap();
    assert!(!again.status.success());
}
