//! The first-day commands and outputs of issue 27, read as a user reads them: `restore`,
//! `convert`, `alter` column changes, `count`, `scan --limit`, `files --long/--json`, ISO
//! timestamps, binary output refused on a terminal, and errors that name the flag that
//! fixes them.

use std::path::Path;
use std::process::Command;

use super::common::{BIN, fails, ok, ok_json, version_of};

/// A table of 30 rows in three appends (ids 0..30, `p` = `a`/`b`/`c` by append), at `t`.
fn table(dir: &Path) -> String {
    let t = dir.join("t").to_string_lossy().into_owned();
    for (i, p) in ["a", "b", "c"].iter().enumerate() {
        let f = dir.join(format!("{p}.csv"));
        let mut text = String::from("id,name,p\n");
        for id in i * 10..i * 10 + 10 {
            text.push_str(&format!("{id},n{id},{p}\n"));
        }
        std::fs::write(&f, text).unwrap();
        let mut args = vec!["append", &t, f.to_str().unwrap()];
        if i == 0 {
            args.extend(["--create", "--partition-by", "p"]);
        }
        ok(&args);
    }
    t
}

fn csv_rows(t: &str, extra: &[&str]) -> Vec<String> {
    let mut args = vec!["scan", t, "--format", "csv"];
    args.extend(extra);
    let mut rows: Vec<String> = ok(&args).lines().skip(1).map(str::to_string).collect();
    rows.sort();
    rows
}

#[test]
fn restore_brings_back_a_version_and_says_what_it_did() {
    let dir = tempfile::tempdir().unwrap();
    let t = table(dir.path());
    let at_two = csv_rows(&t, &["--version", "2"]);
    ok(&["delete", &t, "--filter", "id < 15"]);
    let out = ok(&["restore", &t, "--version", "2"]);
    assert!(
        out.starts_with("restored version 2: re-added 2 files ("),
        "{out}"
    );
    assert_eq!(version_of(&out), 5);
    assert_eq!(csv_rows(&t, &[]), at_two);
    // --timestamp names a version by time; --json gives Delta's metrics as numbers.
    let history: serde_json::Value = serde_json::from_str(&ok(&["history", &t, "--json"])).unwrap();
    let v1_time = history
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["version"] == 1)
        .unwrap()["timestamp"]
        .as_str()
        .unwrap()
        .to_string();
    let report = ok_json(&["restore", &t, "--timestamp", &v1_time]);
    assert_eq!(report["operation"], "RESTORE");
    assert_eq!(report["restored_version"], 1);
    assert_eq!(report["metrics"]["numOfFilesAfterRestore"], 1);
    assert!(report["metrics"]["numRemovedFiles"].is_number(), "{report}");
    assert_eq!(csv_rows(&t, &[]).len(), 10);
    let e = fails(&["restore", &t, "--version", "99"]);
    assert!(e.contains("99"), "{e}");
    // Neither --version nor --timestamp: a usage error.
    assert_eq!(super::common::run(&["restore", &t]).status.code(), Some(2));
}

#[test]
fn repair_removes_the_files_the_store_lost() {
    let dir = tempfile::tempdir().unwrap();
    let t = table(dir.path());
    assert_eq!(ok(&["repair", &t]).trim(), "no data file is missing");
    // A data file of partition p=a, by its path in the log.
    let mut data: Vec<String> = std::fs::read_dir(Path::new(&t).join("p=a"))
        .unwrap()
        .map(|e| format!("p=a/{}", e.unwrap().file_name().into_string().unwrap()))
        .filter(|n| n.ends_with(".parquet"))
        .collect();
    data.sort();
    std::fs::remove_file(Path::new(&t).join(&data[0])).unwrap();
    let dry = ok_json(&["repair", &t, "--dry-run"]);
    assert_eq!(dry["operation"], "FSCK");
    assert_eq!(dry["version"], serde_json::Value::Null);
    assert_eq!(dry["files_removed"], serde_json::json!([data[0]]));
    assert_eq!(
        dry["entries"],
        serde_json::json!([{
            "data_file_path": data[0],
            "data_file_missing": true,
            "deletion_vector_path": null,
            "deletion_vector_file_missing": false,
        }])
    );
    let out = ok(&["repair", &t]);
    assert!(
        out.starts_with("removed 1 missing file from the table ("),
        "{out}"
    );
    assert_eq!(version_of(&out), 4);
    // The rest reads again.
    assert!(!csv_rows(&t, &[]).is_empty());
    let e = fails(&["repair", &dir.path().join("nothing").to_string_lossy()]);
    assert_eq!(e.lines().count(), 1, "{e}");
}

#[test]
fn alter_adds_renames_widens_and_drops_columns() {
    let dir = tempfile::tempdir().unwrap();
    let t = table(dir.path());
    let out = ok(&["alter", &t, "--add-column", "score int COMMENT 'points'"]);
    assert_eq!(out.trim_end(), "added column score integer; version 4");
    let out = ok(&["alter", &t, "--rename-column", "name", "label"]);
    assert_eq!(out.trim_end(), "renamed column name to label; version 5");
    let out = ok(&["alter", &t, "--change-type", "score", "bigint"]);
    assert_eq!(
        out.trim_end(),
        "changed the type of column score to long; version 6"
    );
    let out = ok(&["alter", &t, "--drop-column", "score"]);
    assert_eq!(out.trim_end(), "dropped column score; version 7");
    let header = ok(&["scan", &t, "--format", "csv", "--limit", "1"]);
    assert_eq!(header.lines().next().unwrap(), "id,label,p");
    assert_eq!(csv_rows(&t, &[]).len(), 30);
    let inspect: serde_json::Value = serde_json::from_str(&ok(&["inspect", &t, "--json"])).unwrap();
    assert_eq!(inspect["column_mapping_mode"], "name");
    // Refusals name what is wrong, one line each, nothing committed.
    for (args, says) in [
        (
            vec!["--drop-column", "p"],
            "partition columns cannot be dropped",
        ),
        (
            vec!["--change-type", "id", "int"],
            "cannot change column `id`",
        ),
        (vec!["--change-type", "id", "number"], "unknown type"),
        (vec!["--add-column", "x"], "no type"),
        (vec!["--rename-column", "nope", "x"], "no column `nope`"),
    ] {
        let mut a = vec!["alter", t.as_str()];
        a.extend(args.iter().copied());
        let e = fails(&a);
        assert!(e.contains(says), "{args:?}: {e}");
    }
    // One column change at a time, not mixed with property changes.
    let o = super::common::run(&[
        "alter",
        &t,
        "--drop-column",
        "label",
        "--set-property",
        "owner=me",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_str(&ok(&["inspect", &t, "--json"])).unwrap();
    assert_eq!(v["version"], 7);
}

#[test]
fn convert_turns_a_parquet_directory_into_a_table() {
    let dir = tempfile::tempdir().unwrap();
    let t = table(dir.path());
    // A Parquet directory made from the table's own files, Hive-partitioned.
    let plain = dir.path().join("plain");
    for (i, p) in ["a", "b"].iter().enumerate() {
        let part = plain.join(format!("p={p}"));
        std::fs::create_dir_all(&part).unwrap();
        let out = part.join("data.parquet");
        ok(&[
            "scan",
            &t,
            "--filter",
            &format!("p = '{p}'"),
            "--columns",
            "id,name",
            "--format",
            "parquet",
            "--output",
            out.to_str().unwrap(),
        ]);
        assert!(out.exists(), "{i}");
    }
    std::fs::write(plain.join("_SUCCESS"), "").unwrap();
    let plain = plain.to_str().unwrap();
    let out = ok(&["convert", plain, "--partition-by", "p", "string"]);
    assert_eq!(
        out.lines().next().unwrap().rsplit_once(';').unwrap().1,
        " version 0"
    );
    assert!(
        out.starts_with("converted 2 Parquet files (")
            && out.contains(", 20 rows) into a Delta table, partitioned by p"),
        "{out}"
    );
    assert_eq!(ok(&["count", plain]).trim(), "20");
    assert_eq!(csv_rows(plain, &["--filter", "p = 'b'"]).len(), 10);
    let e = fails(&["convert", plain]);
    assert!(e.contains("already a Delta table"), "{e}");
    let e = fails(&["convert", dir.path().join("nothing").to_str().unwrap()]);
    assert!(e.contains("no Parquet file"), "{e}");
}

#[test]
fn count_answers_from_statistics_and_scan_limits_rows() {
    let dir = tempfile::tempdir().unwrap();
    let t = table(dir.path());
    assert_eq!(ok(&["count", &t]).trim(), "30");
    let c: serde_json::Value =
        serde_json::from_str(&ok(&["count", &t, "--filter", "p = 'b'", "--json"])).unwrap();
    assert_eq!(
        c,
        serde_json::json!({"rows": 10, "files_from_statistics": 1, "files_read": 0})
    );
    let c: serde_json::Value =
        serde_json::from_str(&ok(&["count", &t, "--filter", "id % 2 = 0", "--json"])).unwrap();
    assert_eq!(c["rows"], 15);
    assert_eq!(c["files_read"], 3);
    assert_eq!(ok(&["count", &t, "--version", "1"]).trim(), "10");

    // --limit in every format; the table says how many rows it left out.
    let text = ok(&["scan", &t, "--limit", "4"]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4 + 4 + 1, "{text}");
    assert_eq!(
        *lines.last().unwrap(),
        "… 26 more rows (--limit N shows more)"
    );
    assert_eq!(
        ok(&["scan", &t, "--format", "csv", "--limit", "5"])
            .lines()
            .count(),
        6
    );
    assert_eq!(
        ok(&["scan", &t, "--format", "jsonl", "--limit", "7"])
            .lines()
            .count(),
        7
    );
    // With a filter the total is not known from statistics.
    let text = ok(&["scan", &t, "--filter", "id % 2 = 0", "--limit", "2"]);
    assert!(
        text.ends_with("… more rows (--limit N shows more)\n"),
        "{text}"
    );
    // Piped, the table format prints every row, and no footer.
    let all = ok(&["scan", &t]);
    assert_eq!(all.lines().count(), 30 + 4, "{all}");
    // A limit at or above the result prints no footer.
    assert!(!ok(&["scan", &t, "--limit", "30"]).contains("more rows"));
}

/// Runs the binary with a terminal as stdout (util-linux `script`); `None` when `script`
/// is not there.
fn on_terminal(args: &[&str]) -> Option<(bool, String)> {
    let quoted: Vec<String> = std::iter::once(BIN)
        .chain(args.iter().copied())
        .map(|a| format!("'{}'", a.replace('\'', "'\\''")))
        .collect();
    let o = Command::new("script")
        .args(["-qec", &quoted.join(" "), "/dev/null"])
        .output()
        .ok()?;
    Some((
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    ))
}

#[test]
fn a_terminal_gets_twenty_rows_and_no_binary() {
    let dir = tempfile::tempdir().unwrap();
    let t = table(dir.path());
    let Some((ok_table, text)) = on_terminal(&["scan", &t]) else {
        eprintln!("SKIPPED: no `script` to give the command a terminal");
        return;
    };
    assert!(ok_table, "{text}");
    let rows = text.lines().filter(|l| l.starts_with("| ")).count();
    assert_eq!(rows, 1 + 20, "{text}");
    assert!(text.contains("… 10 more rows"), "{text}");
    let (ok_parquet, text) = on_terminal(&["scan", &t, "--format", "parquet"]).unwrap();
    assert!(!ok_parquet);
    assert!(
        text.contains("refusing to write Parquet to a terminal"),
        "{text}"
    );
}

#[test]
fn files_long_and_json_describe_each_file() {
    let dir = tempfile::tempdir().unwrap();
    let t = table(dir.path());
    ok(&[
        "alter",
        &t,
        "--set-property",
        "delta.enableDeletionVectors=true",
    ]);
    ok(&["delete", &t, "--filter", "id = 3"]);
    let files: serde_json::Value = serde_json::from_str(&ok(&["files", &t, "--json"])).unwrap();
    let files = files.as_array().unwrap();
    assert_eq!(files.len(), 3);
    let a = files
        .iter()
        .find(|f| f["partition_values"]["p"] == "a")
        .unwrap();
    assert_eq!(a["rows"], 10);
    assert_eq!(a["deleted_rows"], 1);
    assert!(a["size"].as_i64().unwrap() > 0);
    assert!(a["modified"].as_str().unwrap().ends_with('Z'), "{a}");
    let long = ok(&["files", &t, "--long"]);
    let lines: Vec<&str> = long.lines().collect();
    assert!(
        lines[0].contains("size") && lines[0].contains("deleted"),
        "{long}"
    );
    let a_line = lines.iter().find(|l| l.contains("p=a/")).unwrap();
    assert!(
        a_line.contains(" 10 ") && a_line.contains(" 1 ") && a_line.contains("p=a "),
        "{a_line}"
    );
    // Timestamps are ISO 8601 everywhere, never epoch milliseconds.
    let h: serde_json::Value = serde_json::from_str(&ok(&["history", &t, "--json"])).unwrap();
    assert!(h[0]["timestamp"].as_str().unwrap().ends_with('Z'), "{h}");
    let i: serde_json::Value = serde_json::from_str(&ok(&["inspect", &t, "--json"])).unwrap();
    assert!(i["timestamp"].as_str().unwrap().ends_with('Z'), "{i}");
    assert!(i.get("timestamp_ms").is_none());
}

#[test]
fn errors_name_the_flag_that_fixes_them() {
    let dir = tempfile::tempdir().unwrap();
    let t = table(dir.path());
    let wide = dir.path().join("wide.csv");
    std::fs::write(&wide, "id,name,p,extra\n99,x,a,1\n").unwrap();
    let e = fails(&["append", &t, wide.to_str().unwrap()]);
    assert!(e.contains("--merge-schema"), "{e}");
    ok(&["append", &t, wide.to_str().unwrap(), "--merge-schema"]);
    // The feed is on from version 5 only.
    ok(&[
        "alter",
        &t,
        "--set-property",
        "delta.enableChangeDataFeed=true",
    ]);
    ok(&["delete", &t, "--filter", "id = 1"]);
    let e = fails(&["changes", &t, "--from", "2"]);
    assert!(
        e.contains("recorded from version 5 on (use --from 5)"),
        "{e}"
    );
    let e = fails(&["alter", &t, "--set-property", "delta.appendOnlyy=true"]);
    assert!(e.contains("did you mean delta.appendOnly?"), "{e}");
    let e = fails(&["demo", &t]);
    assert!(e.contains("pick another directory"), "{e}");
}

#[test]
fn overwrite_schema_replaces_columns_and_partitioning() {
    let dir = tempfile::tempdir().unwrap();
    let t = table(dir.path());
    let new = dir.path().join("new.csv");
    std::fs::write(&new, "name,score\nx,1.5\ny,2.5\n").unwrap();
    // Without the flag the table's schema is enforced; --partition-by needs the flag, and
    // --filter excludes it.
    fails(&["overwrite", &t, new.to_str().unwrap()]);
    for usage in [
        vec![
            "overwrite",
            &t,
            new.to_str().unwrap(),
            "--partition-by",
            "name",
        ],
        vec![
            "overwrite",
            &t,
            new.to_str().unwrap(),
            "--overwrite-schema",
            "--filter",
            "p = 'a'",
        ],
    ] {
        assert_eq!(
            super::common::run(&usage).status.code(),
            Some(2),
            "{usage:?}"
        );
    }
    // The table's partitioning `p` is not a column of the file: named again or refused.
    let e = fails(&["overwrite", &t, new.to_str().unwrap(), "--overwrite-schema"]);
    assert!(e.contains("`p`"), "{e}");
    let out = ok(&[
        "overwrite",
        &t,
        new.to_str().unwrap(),
        "--overwrite-schema",
        "--partition-by",
        "name",
    ]);
    assert!(
        out.starts_with("overwrote the table and its schema: wrote 2 rows in 2 files"),
        "{out}"
    );
    let inspect: serde_json::Value = serde_json::from_str(&ok(&["inspect", &t, "--json"])).unwrap();
    assert_eq!(
        inspect["partition_columns"],
        serde_json::json!(["name"]),
        "{inspect}"
    );
    assert_eq!(csv_rows(&t, &[]), ["x,1.5", "y,2.5"]);
}

#[test]
fn create_replace_gives_a_new_empty_table_on_the_same_log() {
    let dir = tempfile::tempdir().unwrap();
    let t = table(dir.path());
    let schema = dir.path().join("new.csv");
    std::fs::write(&schema, "name,score\nx,1.5\n").unwrap();
    let s = schema.to_str().unwrap();
    // Without the flag an existing table is refused.
    fails(&["create", &t, "--schema-from", s]);
    let out = ok(&[
        "create",
        &t,
        "--schema-from",
        s,
        "--replace",
        "--property",
        "delta.logRetentionDuration=interval 2 days",
    ]);
    assert!(out.starts_with("replaced table "), "{out}");
    assert!(out.contains("(2 columns)"), "{out}");
    let replaced_at = version_of(&out);
    let j = ok_json(&["create", &t, "--schema-from", s, "--replace"]);
    assert_eq!(j["operation"], "CREATE OR REPLACE TABLE", "{j}");
    assert_eq!(j["version"], replaced_at + 1, "{j}");
    assert_eq!(csv_rows(&t, &[]), Vec::<String>::new());
    // The version before the replace still reads its rows.
    let before = (replaced_at - 1).to_string();
    assert_eq!(csv_rows(&t, &["--version", &before]).len(), 30);
    // Where there is no table, it is created.
    let fresh = dir.path().join("fresh").to_string_lossy().into_owned();
    let line = ok(&["create", &fresh, "--schema-from", s, "--replace"]);
    assert_eq!(version_of(&line), 0);
}
