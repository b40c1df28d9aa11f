//! The `alluvium` command line: every command's output contract (formats and JSON keys other
//! tools rely on), and errors as one stderr line with a non-zero exit.

use std::path::Path;
use std::process::{Command, Output};

use super::common::{BIN, conformance, fails, ok, ok_json, run, version_of};

#[test]
fn inspect_json_has_the_contract_keys() {
    let out = ok(&[
        "inspect",
        &conformance("basic-dv-with-checkpoint"),
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    for key in [
        "version",
        "protocol",
        "schema",
        "partition_columns",
        "configuration",
        "num_files",
        "num_records",
        "size_bytes",
        "last_checkpoint",
        "earliest_readable_version",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    for key in [
        "minReaderVersion",
        "minWriterVersion",
        "readerFeatures",
        "writerFeatures",
    ] {
        assert!(v["protocol"].get(key).is_some(), "missing protocol.{key}");
    }
    assert_eq!(
        v["protocol"]["readerFeatures"],
        serde_json::json!(["deletionVectors"])
    );
    // num_records is live rows: stats minus deletion vectors.
    assert_eq!(v["num_records"], 454);
    // The loaded snapshot's memory estimate: at least the files' entries.
    let memory = v["memory_bytes"].as_u64().unwrap();
    let files = v["num_files"].as_u64().unwrap();
    assert!(
        files > 0 && memory > files * 192,
        "{memory} bytes for {files} files"
    );
    let text = ok(&["inspect", &conformance("basic-dv-with-checkpoint")]);
    assert!(text.contains("deletionVectors"));
}

#[test]
fn scan_formats() {
    let t = conformance("basic_partitioned");
    let table = ok(&[
        "scan",
        &t,
        "--columns",
        "number,letter",
        "--filter",
        "number > 3",
    ]);
    assert!(table.lines().nth(1).unwrap().contains("number") && table.contains("| 4"));
    let csv = ok(&["scan", &t, "--format", "csv", "--columns", "letter,number"]);
    assert_eq!(csv.lines().next().unwrap(), "letter,number");
    assert_eq!(csv.lines().count(), 7);
    let jsonl = ok(&["scan", &t, "--format", "jsonl"]);
    assert_eq!(jsonl.lines().count(), 6);
    for line in jsonl.lines() {
        serde_json::from_str::<serde_json::Value>(line).unwrap();
    }
    // Parquet output carries the logical schema, partition columns included, in schema order.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.parquet");
    ok(&[
        "scan",
        &t,
        "--format",
        "parquet",
        "--output",
        out.to_str().unwrap(),
    ]);
    let f = std::fs::File::open(&out).unwrap();
    let r = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f).unwrap();
    let names: Vec<String> = r
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(names, ["letter", "number", "a_float"]);
    let rows: usize = r.build().unwrap().map(|b| b.unwrap().num_rows()).sum();
    assert_eq!(rows, 6);
    // Nested types survive every format.
    let nested = conformance("data-reader-array-complex-objects");
    assert!(ok(&["scan", &nested, "--format", "csv"]).lines().count() > 1);
    assert!(ok(&["scan", &nested, "--format", "jsonl"]).lines().count() > 1);
}

#[test]
fn files_and_history() {
    let t = conformance("basic_partitioned");
    let files = ok(&["files", &t]);
    let lines: Vec<&str> = files.lines().collect();
    assert_eq!(lines.len(), 6);
    assert!(
        lines
            .iter()
            .all(|l| l.starts_with("letter=") && l.ends_with(".parquet"))
    );
    assert_eq!(ok(&["files", &t, "--version", "0"]).lines().count(), 3);
    let h: serde_json::Value = serde_json::from_str(&ok(&["history", &t, "--json"])).unwrap();
    let h = h.as_array().unwrap();
    assert_eq!(h.len(), 2);
    assert_eq!(h[0]["version"], 1);
    for key in ["version", "timestamp", "operation", "parameters"] {
        assert!(h[0].get(key).is_some(), "missing {key}");
    }
    assert_eq!(ok(&["history", &t, "--limit", "1"]).lines().count(), 2);
}

#[test]
fn errors_are_one_line_with_non_zero_exit() {
    let t = conformance("basic_partitioned");
    fails(&["scan", "/nonexistent/table"]);
    fails(&["scan", &t, "--version", "99"]);
    fails(&["scan", &t, "--filter", "number >"]);
    fails(&["scan", &t, "--columns", "nope"]);
    fails(&["scan", &t, "--timestamp", "not a time"]);
    fails(&["inspect", &conformance("deltalog-invalid-protocol-version")]);
    let e = fails(&["scan", &conformance("catalog-owned-preview")]);
    assert!(e.contains("catalog"), "{e}");
    fails(&["delete", &t, "--filter", "number = 1 AND"]);
    fails(&["append", &t, "/nonexistent.csv"]);
    // Usage errors come from the argument parser (exit 2), never a panic.
    let o = run(&["scan"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn write_commands_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    let t = t.to_str().unwrap();
    let csv = dir.path().join("a.csv");
    std::fs::write(&csv, "id,name,day\n1,alice,2024-01-01\n2,bob,2024-01-02\n").unwrap();
    let csv = csv.to_str().unwrap();
    let out = ok(&[
        "create",
        t,
        "--schema-from",
        csv,
        "--partition-by",
        "day",
        "--property",
        "delta.appendOnly=false",
    ]);
    assert_eq!(
        out.trim_end(),
        format!(
            "created table {} (3 columns, partitioned by day); version 0",
            uri(t)
        )
    );
    let out = ok(&["append", t, csv]);
    assert!(out.starts_with("appended 2 rows in 2 files ("), "{out}");
    assert_eq!(version_of(&out), 1);
    // --json: exactly one object with the contract fields, metrics as numbers, and no
    // request counters.
    let report = ok_json(&["append", t, csv]);
    for key in [
        "operation",
        "version",
        "metrics",
        "files_added",
        "files_removed",
        "bytes_added",
        "bytes_removed",
        "elapsed_ms",
        "attempts",
    ] {
        assert!(report.get(key).is_some(), "missing {key}: {report}");
    }
    assert_eq!(report["operation"], "WRITE");
    assert_eq!(report["version"], 2);
    assert_eq!(report["metrics"]["numOutputRows"], 2);
    assert_eq!(report["files_added"], 2);
    assert!(report.get("requests").is_none(), "{report}");
    let out = ok(&["append", t, csv, "--app-id", "x", "--app-version", "3"]);
    assert_eq!(version_of(&out), 3);
    let out = ok(&["append", t, csv, "--app-id", "x", "--app-version", "3"]);
    assert!(
        out.starts_with("skipped: application x already committed its version 3 (table version 3)"),
        "{out}"
    );
    let out = ok(&["delete", t, "--filter", "name = 'bob'"]);
    assert!(out.starts_with("deleted 3 rows from 3 files ("), "{out}");
    assert_eq!(version_of(&out), 4);
    assert_eq!(ok(&["scan", t, "--format", "csv"]).lines().count(), 4);
    let one = dir.path().join("one.jsonl");
    std::fs::write(&one, "{\"id\":9,\"name\":\"zed\",\"day\":\"2024-01-01\"}\n").unwrap();
    let out = ok(&[
        "overwrite",
        t,
        one.to_str().unwrap(),
        "--filter",
        "day = '2024-01-01'",
    ]);
    assert!(
        out.starts_with("replaced the rows matching day = '2024-01-01': wrote 1 row in 1 file ("),
        "{out}"
    );
    assert_eq!(version_of(&out), 5);
    let rows = ok(&["scan", t, "--format", "csv", "--columns", "id"]);
    assert_eq!(rows.lines().skip(1).collect::<Vec<_>>(), vec!["9"]);
    fails(&["create", t, "--schema-from", csv]);
    // A missing table: the error names the flag that creates it.
    let e = fails(&["append", dir.path().join("missing").to_str().unwrap(), csv]);
    assert!(e.contains("use --create"), "{e}");
    let out = ok(&[
        "append",
        dir.path().join("new").to_str().unwrap(),
        csv,
        "--create",
    ]);
    assert_eq!(version_of(&out), 1);
}

/// The table's URI as the CLI prints it.
fn uri(path: &str) -> String {
    format!(
        "file://{}",
        std::fs::canonicalize(path).unwrap().to_str().unwrap()
    )
}

#[test]
fn demo_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = ok(&["demo", dir.path().join("demo").to_str().unwrap()]);
    assert!(out.contains("history") && out.contains("DELETE") && out.contains("time travel"));
}

/// Runs `args` with stdout a pipe whose reader is already gone, so every write to it
/// fails (EPIPE).
fn run_with_closed_stdout(args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    Command::new(BIN)
        .args(args)
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap()
}

fn table_version(t: &str) -> u64 {
    alluvium::Table::open(t)
        .unwrap()
        .snapshot()
        .unwrap()
        .version()
}

/// A write whose commit landed exits 0 even when its report cannot be printed (it used to
/// panic with exit 101, and a script retrying on failure appended twice); it says so on
/// stderr, in one line.
#[test]
fn writes_that_landed_exit_zero_with_stdout_closed() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    let t = t.to_str().unwrap();
    let csv = dir.path().join("a.csv");
    std::fs::write(&csv, "id,name\n1,alice\n2,bob\n").unwrap();
    let csv = csv.to_str().unwrap();
    let one = dir.path().join("one.csv");
    std::fs::write(&one, "id,name\n1,carol\n").unwrap();
    let one = one.to_str().unwrap();
    let steps: Vec<(Vec<&str>, Option<u64>)> = vec![
        (vec!["create", t, "--schema-from", csv], Some(0)),
        (vec!["append", t, csv], Some(1)),
        (vec!["append", t, csv], Some(2)),
        (vec!["overwrite", t, one, "--filter", "id = 1"], Some(3)),
        (vec!["delete", t, "--filter", "id = 2"], Some(4)),
        (
            vec!["update", t, "--set", "name = 'x'", "--filter", "id = 1"],
            Some(5),
        ),
        (
            vec![
                "merge",
                t,
                one,
                "--on",
                "t.id = s.id",
                "--when",
                "MATCHED THEN UPDATE SET *",
                "--when",
                "NOT MATCHED THEN INSERT *",
            ],
            Some(6),
        ),
        (
            vec!["alter", t, "--set-property", "delta.appendOnly=false"],
            Some(7),
        ),
        (vec!["checkpoint", t], None),
        (vec!["cleanup-log", t], None),
        (vec!["optimize", t], None),
        (vec!["vacuum", t, "--retention-hours", "0", "--force"], None),
    ];
    for (args, version) in steps {
        let o = run_with_closed_stdout(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
        assert!(!err.contains("internal error"), "{args:?}: {err}");
        assert!(err.lines().count() <= 1, "{args:?}: {err}");
        if let Some(v) = version {
            // Exactly one commit per command: nothing retried, nothing lost.
            assert_eq!(table_version(t), v, "{args:?}");
            assert!(err.starts_with("warning: "), "{args:?}: {err}");
        }
    }
}

/// Commands whose output is their result fail when it cannot be written, never with a
/// panic, and quietly for a closed pipe.
#[test]
fn reads_with_stdout_closed_fail_quietly_without_panicking() {
    let t = conformance("basic_partitioned");
    let dir = tempfile::tempdir().unwrap();
    let demo = dir.path().join("demo");
    for args in [
        vec!["scan", &t],
        vec!["scan", &t, "--format", "csv"],
        vec!["scan", &t, "--format", "jsonl"],
        vec!["scan", &t, "--format", "parquet"],
        vec!["files", &t],
        vec!["history", &t],
        vec!["history", &t, "--json"],
        vec!["inspect", &t],
        vec!["inspect", &t, "--json"],
        vec!["verify", &t],
        vec!["cleanup-log", &t, "--dry-run"],
        vec!["vacuum", &t, "--dry-run"],
        vec!["demo", demo.to_str().unwrap()],
    ] {
        let o = run_with_closed_stdout(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_ne!(o.status.code(), Some(101), "{args:?} panicked: {err}");
        assert_ne!(
            o.status.code(),
            Some(0),
            "{args:?} must report the lost output"
        );
        assert!(err.is_empty(), "{args:?}: {err}");
    }
}

#[test]
fn history_limit_zero_prints_nothing() {
    let t = conformance("basic_partitioned");
    assert_eq!(ok(&["history", &t, "--limit", "0"]), "");
    assert_eq!(ok(&["history", &t, "--limit", "0", "--json"]).trim(), "[]");
    fails(&["history", "/nonexistent/table", "--limit", "0"]);
}

#[test]
fn create_refuses_bad_partition_columns_and_properties() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    let t = t.to_str().unwrap();
    let csv = dir.path().join("a.csv");
    std::fs::write(&csv, "id,name\n1,alice\n").unwrap();
    let csv = csv.to_str().unwrap();
    let e = fails(&[
        "create",
        t,
        "--schema-from",
        csv,
        "--partition-by",
        "name,name",
    ]);
    assert!(e.contains("listed twice"), "{e}");
    let e = fails(&["create", t, "--schema-from", csv, "--partition-by", "nope"]);
    assert!(e.contains("not in the schema"), "{e}");
    for p in [
        "delta.checkpointInterval=0",
        "delta.targetFileSize=-1",
        "delta.logRetentionDuration=interval -1 days",
    ] {
        let e = fails(&["create", t, "--schema-from", csv, "--property", p]);
        assert!(e.contains(p.split('=').next().unwrap()), "{e}");
    }
    assert!(!Path::new(t).join("_delta_log").exists());
}

/// A path or value holding a newline or terminal escape cannot forge output lines or
/// colour the terminal: `files` and `scan --format table` print such characters escaped.
#[test]
fn files_and_table_output_escape_control_characters() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    let t = t.to_str().unwrap();
    let rows = dir.path().join("a.jsonl");
    std::fs::write(
        &rows,
        "{\"id\":1,\"name\":\"line\\nforged | 2 | row\\u001b[31m\"}\n{\"id\":2,\"name\":\"plain\"}\n",
    )
    .unwrap();
    ok(&["append", t, rows.to_str().unwrap(), "--create"]);
    let out = ok(&["scan", t]);
    assert!(!out.contains('\u{1b}'), "{out:?}");
    assert!(out.contains("line\\nforged | 2 | row\\u{1b}[31m"), "{out}");
    // Header, borders and two rows: no forged line.
    assert_eq!(out.lines().count(), 6, "{out}");
    // CSV keeps values exact (quoted), as before.
    assert!(ok(&["scan", t, "--format", "csv"]).contains("\"line\nforged"));

    // A hostile file name in the log (the file need not exist to be listed).
    let evil = r#"{"add":{"path":"evil\nfake.parquet\u001b[2J","partitionValues":{},"size":1,"modificationTime":0,"dataChange":true}}"#;
    std::fs::write(
        Path::new(t).join("_delta_log/00000000000000000002.json"),
        format!("{evil}\n"),
    )
    .unwrap();
    let files = ok(&["files", t]);
    assert_eq!(files.lines().count(), 2, "{files:?}");
    assert!(files.contains("evil\\nfake.parquet\\u{1b}[2J"), "{files:?}");
}

#[test]
fn inspect_escapes_control_characters_in_table_values() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    let t = t.to_str().unwrap();
    let csv = dir.path().join("a.csv");
    std::fs::write(&csv, "id,name\n1,alice\n").unwrap();
    ok(&[
        "create",
        t,
        "--schema-from",
        csv.to_str().unwrap(),
        "--property",
        "user.note=x\u{1b}[2Jy\nversion: 99",
    ]);
    let out = ok(&["inspect", t]);
    assert!(!out.contains('\u{1b}'), "{out:?}");
    assert!(
        out.contains("user.note = x\\u{1b}[2Jy\\nversion: 99"),
        "{out}"
    );
    assert_eq!(out.lines().filter(|l| l.starts_with("version:")).count(), 1);
}

/// The measurements are the separate `alluvium-bench` binary: `bench` is a usage error here.
#[test]
fn bench_is_not_a_command_of_the_product() {
    let o = run(&["bench", "load", &conformance("basic_partitioned")]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
}

/// `ALLUVIUM_STORAGE_OPTIONS` is read by the CLI (the library reads no environment
/// variable) and applies to object-store tables: a malformed value is one error line naming
/// it, found before any request; local tables do not read it.
#[test]
fn storage_options_come_from_the_environment_for_object_stores_only() {
    let with_bad_options = |table: &str| {
        Command::new(BIN)
            .args(["inspect", table])
            .env("ALLUVIUM_STORAGE_OPTIONS", "single_writer")
            .output()
            .unwrap()
    };
    let o = with_bad_options("s3://bucket/table");
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: ALLUVIUM_STORAGE_OPTIONS: expected key=value"),
        "{err}"
    );
    let o = with_bad_options(&conformance("basic_partitioned"));
    assert!(o.status.success(), "{o:?}");
}

/// A local table takes the `fsync` item of `ALLUVIUM_STORAGE_OPTIONS` (and only it): a
/// value that is not a boolean is one error line naming the variable, while `fsync=false`
/// next to object-store items writes normally.
#[test]
fn local_tables_take_only_the_fsync_option_from_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    let t = t.to_str().unwrap();
    let input = dir.path().join("rows.csv");
    std::fs::write(&input, "id,name\n1,a\n2,b\n").unwrap();
    let with_options = |options: &str, args: &[&str]| {
        Command::new(BIN)
            .args(args)
            .env("ALLUVIUM_STORAGE_OPTIONS", options)
            .output()
            .unwrap()
    };
    let input = input.to_str().unwrap();
    let o = with_options("fsync=maybe", &["append", t, input, "--create"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: ALLUVIUM_STORAGE_OPTIONS: fsync=maybe"),
        "{err}"
    );
    assert!(!dir.path().join("t").join("_delta_log").exists());
    let o = with_options(
        "single_writer=true,fsync=false,junk",
        &["append", t, input, "--create"],
    );
    assert!(o.status.success(), "{o:?}");
    let o = with_options("fsync=off", &["scan", t, "--format", "csv"]);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(String::from_utf8(o.stdout).unwrap().lines().count(), 3);
}

/// `--help` still opens with the line it had when the CLI was part of the library package
/// (clap's `about` would otherwise take the CLI package's own description).
#[test]
fn help_keeps_its_first_line() {
    let help = ok(&["--help"]);
    assert!(
        help.starts_with(
            "An embeddable storage engine for the Delta Lake transaction-log protocol\n"
        ),
        "{help}"
    );
    assert!(ok(&["--version"]).starts_with("alluvium "));
}

/// The library's refusal of a short VACUUM retention names its option; the CLI's names the
/// flag, with the message it always printed.
#[test]
fn vacuum_with_a_short_retention_names_the_force_flag() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    let t = t.to_str().unwrap();
    let csv = dir.path().join("a.csv");
    std::fs::write(&csv, "id,name\n1,alice\n").unwrap();
    let csv = csv.to_str().unwrap();
    ok(&["create", t, "--schema-from", csv]);
    let err = fails(&["vacuum", t, "--retention-hours", "0"]);
    assert!(
        err.contains("is shorter than the table's deletedFileRetentionDuration (168 hours); use --force to override"),
        "{err}"
    );
}

#[test]
fn alter_enables_deletion_vectors_and_delete_prints_its_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    let t = t.to_str().unwrap();
    let csv = dir.path().join("a.csv");
    std::fs::write(&csv, "id,name\n1,alice\n2,bob\n3,carol\n").unwrap();
    let csv = csv.to_str().unwrap();
    ok(&["create", t, "--schema-from", csv]);
    ok(&["append", t, csv]);
    // Unknown delta.* keys and bad values are refused in one line, nothing committed.
    fails(&[
        "alter",
        t,
        "--set-property",
        "delta.enableDeletionVector=true",
    ]);
    fails(&[
        "alter",
        t,
        "--set-property",
        "delta.enableDeletionVectors=yes",
    ]);
    fails(&["alter", t, "--unset-property", "delta.notSet"]);
    let out = ok(&[
        "alter",
        t,
        "--set-property",
        "delta.enableDeletionVectors=true",
        "--set-property",
        "owner=me",
    ]);
    assert_eq!(
        out.trim_end(),
        "set delta.enableDeletionVectors=true, owner=me; version 2"
    );
    let v: serde_json::Value = serde_json::from_str(&ok(&["inspect", t, "--json"])).unwrap();
    assert_eq!(v["protocol"]["minReaderVersion"], 3);
    assert_eq!(
        v["protocol"]["readerFeatures"],
        serde_json::json!(["deletionVectors"])
    );
    let report = ok_json(&["delete", t, "--filter", "id = 2"]);
    assert_eq!(report["version"], 3);
    assert_eq!(report["operation"], "DELETE");
    let m = &report["metrics"];
    assert_eq!(m["numDeletedRows"], 1);
    assert_eq!(m["numDeletionVectorsAdded"], 1);
    assert_eq!(m["numCopiedRows"], 0);
    for key in [
        "numRemovedFiles",
        "numAddedFiles",
        "executionTimeMs",
        "scanTimeMs",
        "rewriteTimeMs",
    ] {
        assert!(m[key].is_number(), "missing {key}: {m}");
    }
    let out = ok(&["delete", t, "--filter", "id = 3"]);
    assert_eq!(
        out.trim_end(),
        "deleted 1 row from 1 file (deletion vectors); version 4"
    );
    assert_eq!(ok(&["scan", t, "--format", "csv"]).lines().count(), 2);
    let out = ok(&["alter", t, "--unset-property", "owner"]);
    assert_eq!(out.trim_end(), "unset owner; version 5");
}

/// A CSV naming a column twice (`id,id` or `id,ID`) is refused by `append` to an existing
/// table, `merge` and `state put`, in one line naming the column; nothing is written
/// (before, the second column's values were dropped).
#[test]
fn csv_input_naming_a_column_twice_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    let t = t.to_str().unwrap();
    let data = dir.path().join("data.csv");
    std::fs::write(&data, "id,v\n1,a\n").unwrap();
    ok(&["append", t, data.to_str().unwrap(), "--create"]);
    for header in ["id,v,id", "id,v,ID"] {
        let second = &header[5..];
        let dup = dir.path().join("dup.csv");
        std::fs::write(&dup, format!("{header}\n2,b,3\n")).unwrap();
        let dup = dup.to_str().unwrap();
        let e = fails(&["append", t, dup]);
        assert!(e.contains(&format!("`{second}`")), "{e}");
        let e = fails(&[
            "merge",
            t,
            dup,
            "--on",
            "t.id = s.id",
            "--when",
            "NOT MATCHED THEN INSERT *",
        ]);
        assert!(e.contains(&format!("`{second}`")), "{e}");
    }
    assert_eq!(table_version(t), 1);

    let events = dir.path().join("events.csv");
    std::fs::write(&events, "id,v,event_time\n1,a,2024-01-01T00:00:00Z\n").unwrap();
    let store = dir.path().join("s");
    let store = store.to_str().unwrap();
    ok(&[
        "state",
        "init",
        store,
        "--key",
        "id",
        "--schema-from",
        events.to_str().unwrap(),
    ]);
    let dup = dir.path().join("dup_events.csv");
    std::fs::write(
        &dup,
        "id,v,event_time,V\n1,kept,2024-01-01T00:00:00Z,dropped\n",
    )
    .unwrap();
    let e = fails(&["state", "put", store, dup.to_str().unwrap()]);
    assert!(e.contains("`V`"), "{e}");
}

/// A JSON-lines object naming one key twice (`{"id":5,"id":6}`, at the top or inside a
/// nested object) is refused by append, MERGE and `state put` with one line naming the key
/// and the line: the JSON reader keeps only one of the values, so the other would be
/// silently lost.
#[test]
fn jsonl_objects_naming_a_key_twice_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    let t = t.to_str().unwrap();
    let data = dir.path().join("data.jsonl");
    std::fs::write(&data, "{\"id\":1,\"v\":\"a\",\"s\":{\"a\":1}}\n").unwrap();
    ok(&["append", t, data.to_str().unwrap(), "--create"]);
    let version = table_version(t);
    for (line, key) in [
        ("{\"id\":5,\"v\":\"b\",\"id\":6}", "id"),
        ("{\"id\":5,\"s\":{\"a\":1,\"a\":2}}", "s.a"),
        (
            "{\"id\":5,\"v\":\"b\\\"\",\"s\":{\"a\":1},\"v\":\"c\"}",
            "v",
        ),
    ] {
        let dup = dir.path().join("dup.jsonl");
        std::fs::write(&dup, format!("{{\"id\":2,\"v\":\"ok\"}}\n{line}\n")).unwrap();
        let dup = dup.to_str().unwrap();
        let e = fails(&["append", t, dup]);
        assert!(
            e.contains(&format!("`{key}`")) && e.contains("line 2"),
            "{line}: {e}"
        );
        let e = fails(&[
            "merge",
            t,
            dup,
            "--on",
            "t.id = s.id",
            "--when",
            "NOT MATCHED THEN INSERT *",
        ]);
        assert!(e.contains(&format!("`{key}`")), "{line}: {e}");
    }
    assert_eq!(table_version(t), version);
    // The same key in two objects, and keys differing in case only inside a string, are
    // fine.
    let fine = dir.path().join("fine.jsonl");
    std::fs::write(
        &fine,
        "{\"id\":3,\"v\":\"{\\\"id\\\":1,\\\"id\\\":2}\",\"s\":{\"a\":3}}\n{\"id\":4,\"s\":{\"a\":4}}\n",
    )
    .unwrap();
    ok(&["append", t, fine.to_str().unwrap()]);
    assert_eq!(table_version(t), version + 1);

    let events = dir.path().join("events.jsonl");
    std::fs::write(
        &events,
        "{\"id\":1,\"v\":\"a\",\"event_time\":\"2024-01-01T00:00:00Z\"}\n",
    )
    .unwrap();
    let store = dir.path().join("st");
    let store = store.to_str().unwrap();
    ok(&[
        "state",
        "init",
        store,
        "--key",
        "id",
        "--schema-from",
        events.to_str().unwrap(),
    ]);
    let dup = dir.path().join("dup_events.jsonl");
    std::fs::write(
        &dup,
        "{\"id\":1,\"v\":\"kept\",\"event_time\":\"2024-01-01T00:00:00Z\",\"v\":\"lost\"}\n",
    )
    .unwrap();
    let e = fails(&["state", "put", store, dup.to_str().unwrap()]);
    assert!(e.contains("`v`"), "{e}");
}

/// `scan --output`, `changes --output` and `state scan --output` refuse any path inside
/// the table (or store), however it is spelled: directly, through `..`, through a symlink
/// to the table's directory, or as a dangling symlink whose target is inside; the table's
/// files are left as they were. A path outside is written.
#[cfg(unix)]
#[test]
fn outputs_inside_the_table_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    let ts = t.to_str().unwrap();
    let data = dir.path().join("data.csv");
    std::fs::write(&data, "id,v\n1,a\n").unwrap();
    ok(&["append", ts, data.to_str().unwrap(), "--create"]);
    ok(&[
        "alter",
        ts,
        "--set-property",
        "delta.enableChangeDataFeed=true",
    ]);
    let commit = t.join("_delta_log/00000000000000000000.json");
    let before = std::fs::read(&commit).unwrap();
    std::os::unix::fs::symlink(&t, dir.path().join("alias")).unwrap();
    std::os::unix::fs::symlink(
        t.join("_delta_log/00000000000000000009.json"),
        dir.path().join("dangling"),
    )
    .unwrap();
    let inside = [
        commit.to_str().unwrap().to_string(),
        format!("{ts}/../t/_delta_log/00000000000000000000.json"),
        dir.path()
            .join("alias/_delta_log/00000000000000000000.json")
            .to_str()
            .unwrap()
            .to_string(),
        dir.path()
            .join("alias/new.csv")
            .to_str()
            .unwrap()
            .to_string(),
        dir.path().join("dangling").to_str().unwrap().to_string(),
        format!("file://{ts}/x.csv"),
    ];
    for out in &inside {
        let e = fails(&["scan", ts, "--format", "csv", "--output", out]);
        assert!(e.contains("inside the table"), "{out}: {e}");
        let e = fails(&[
            "changes", ts, "--from", "2", "--format", "csv", "--output", out,
        ]);
        assert!(e.contains("inside the table"), "{out}: {e}");
    }
    let e = fails(&["scan", &format!("file://{ts}"), "--output", &inside[0]]);
    assert!(e.contains("inside the table"), "{e}");
    assert_eq!(std::fs::read(&commit).unwrap(), before);
    assert!(!t.join("_delta_log/00000000000000000009.json").exists());
    assert!(!t.join("new.csv").exists() && !t.join("x.csv").exists());
    let outside = dir.path().join("out.csv");
    ok(&[
        "scan",
        ts,
        "--format",
        "csv",
        "--output",
        outside.to_str().unwrap(),
    ]);
    assert!(std::fs::read_to_string(&outside).unwrap().contains("1,a"));

    let events = dir.path().join("events.csv");
    std::fs::write(&events, "id,v,event_time\n1,a,2024-01-01T00:00:00Z\n").unwrap();
    let store = dir.path().join("s");
    let ss = store.to_str().unwrap();
    ok(&[
        "state",
        "init",
        ss,
        "--key",
        "id",
        "--schema-from",
        events.to_str().unwrap(),
    ]);
    let state_commit = store.join("state/_delta_log/00000000000000000000.json");
    let before = std::fs::read(&state_commit).unwrap();
    let e = fails(&[
        "state",
        "scan",
        ss,
        "--output",
        state_commit.to_str().unwrap(),
    ]);
    assert!(e.contains("inside the state store"), "{e}");
    assert_eq!(std::fs::read(&state_commit).unwrap(), before);
}

/// An output path outside the table that is a hard link to one of the table's files (a
/// commit, a data file) is refused too: writing it would truncate the table's file
/// through the shared inode, which no path comparison can see. An ordinary file outside is
/// still overwritten.
#[cfg(unix)]
#[test]
fn an_output_hard_linked_to_a_table_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    let ts = t.to_str().unwrap();
    let data = dir.path().join("data.csv");
    std::fs::write(&data, "id,v\n1,a\n").unwrap();
    ok(&["append", ts, data.to_str().unwrap(), "--create"]);
    let commit = t.join("_delta_log/00000000000000000000.json");
    let part = std::fs::read_dir(&t)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "parquet"))
        .unwrap();
    for (i, target) in [&commit, &part].into_iter().enumerate() {
        let before = std::fs::read(target).unwrap();
        let link = dir.path().join(format!("link{i}"));
        std::fs::hard_link(target, &link).unwrap();
        let e = fails(&[
            "scan",
            ts,
            "--format",
            "csv",
            "--output",
            link.to_str().unwrap(),
        ]);
        assert!(e.contains("hard link") && e.contains(ts), "{e}");
        assert_eq!(std::fs::read(target).unwrap(), before);
    }
    let plain = dir.path().join("plain.csv");
    std::fs::write(&plain, "old").unwrap();
    ok(&[
        "scan",
        ts,
        "--format",
        "csv",
        "--output",
        plain.to_str().unwrap(),
    ]);
    assert!(std::fs::read_to_string(&plain).unwrap().contains("1,a"));
}

/// A gap in the versions is also a warning on stderr, in text and JSON (stdout stays the
/// listing, and the exit status 0: history shows what is left); a whole log warns nothing.
#[test]
fn history_warns_of_a_gap_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    let ts = t.to_str().unwrap();
    let data = dir.path().join("data.csv");
    std::fs::write(&data, "id,v\n1,a\n").unwrap();
    ok(&["append", ts, data.to_str().unwrap(), "--create"]);
    ok(&["append", ts, data.to_str().unwrap()]);
    ok(&["append", ts, data.to_str().unwrap()]);
    assert!(run(&["history", ts]).stderr.is_empty());
    std::fs::remove_file(t.join("_delta_log/00000000000000000002.json")).unwrap();
    for json in [false, true] {
        let args: &[&str] = if json {
            &["history", ts, "--json"]
        } else {
            &["history", ts]
        };
        let o = run(args);
        assert!(o.status.success(), "{json}");
        let err = String::from_utf8(o.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("warning: version 2 is missing from the log"),
            "{err}"
        );
    }
}

/// `history` marks versions missing from the log in text and JSON; `inspect` names a file
/// whose `numRecords` is negative instead of counting it as 0.
#[test]
fn history_marks_gaps_and_inspect_names_impossible_row_counts() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    let ts = t.to_str().unwrap();
    let data = dir.path().join("data.csv");
    std::fs::write(&data, "id,v\n1,a\n").unwrap();
    ok(&["append", ts, data.to_str().unwrap(), "--create"]);
    ok(&["append", ts, data.to_str().unwrap()]);
    ok(&["append", ts, data.to_str().unwrap()]);
    std::fs::remove_file(t.join("_delta_log/00000000000000000001.json")).unwrap();
    let text = ok(&["history", ts]);
    let lines: Vec<&str> = text.lines().collect();
    // `append --create` commits versions 0 and 1; the appends 2 and 3.
    assert_eq!(lines.len(), 5, "{text}");
    assert!(lines[2].trim_start().starts_with("2 "), "{text}");
    assert!(
        lines[3].contains("version 1 is missing from the log"),
        "{text}"
    );
    let json: serde_json::Value = serde_json::from_str(&ok(&["history", ts, "--json"])).unwrap();
    assert_eq!(
        json[1]["missing_below"],
        serde_json::json!({"from": 1, "to": 1})
    );
    assert_eq!(json[0]["missing_below"], serde_json::Value::Null);

    let u = dir.path().join("u");
    let us = u.to_str().unwrap();
    ok(&["append", us, data.to_str().unwrap(), "--create"]);
    let commit = u.join("_delta_log/00000000000000000001.json");
    let text = std::fs::read_to_string(&commit).unwrap();
    let text = text.replace("\\\"numRecords\\\":1", "\\\"numRecords\\\":-4");
    assert!(text.contains("-4"), "{text}");
    std::fs::write(&commit, text).unwrap();
    let out = ok(&["inspect", us]);
    let rows = out.lines().find(|l| l.starts_with("rows:")).unwrap();
    assert!(
        rows.contains("numRecords is -4") && rows.contains(".parquet"),
        "{rows}"
    );
    let json: serde_json::Value = serde_json::from_str(&ok(&["inspect", us, "--json"])).unwrap();
    assert_eq!(json["num_records"], serde_json::Value::Null);
    assert!(
        json["num_records_problem"].as_str().unwrap().contains("-4"),
        "{json}"
    );
}
