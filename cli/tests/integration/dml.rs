//! `alluvium update` and `alluvium merge`: results, the printed line (or with `--json` the
//! version and metrics as numbers), and errors as one line with a non-zero exit.

use super::common::{fails, ok, ok_json, version_of};

/// The metrics of a `--json` report.
fn metrics(report: &serde_json::Value) -> serde_json::Value {
    report["metrics"].clone()
}

fn scan(t: &str) -> Vec<String> {
    let mut rows: Vec<String> = ok(&["scan", t, "--format", "csv"])
        .lines()
        .skip(1)
        .map(str::to_string)
        .collect();
    rows.sort();
    rows
}

#[test]
fn update_and_merge_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    let t = t.to_str().unwrap();
    let data = dir.path().join("data.csv");
    std::fs::write(&data, "id,name,n\n1,ann,10\n2,bob,20\n3,cy,30\n").unwrap();
    ok(&["append", t, data.to_str().unwrap(), "--create"]);

    let out = ok_json(&[
        "update",
        t,
        "--set",
        "n = n + 1, name = 'x'",
        "--filter",
        "id >= 2",
    ]);
    assert_eq!(out["version"], 2, "{out}");
    assert_eq!(out["operation"], "UPDATE", "{out}");
    assert_eq!(metrics(&out)["numUpdatedRows"], 2);
    assert_eq!(scan(t), ["1,ann,10", "2,x,21", "3,x,31"]);

    let src = dir.path().join("src.jsonl");
    std::fs::write(
        &src,
        "{\"id\":1,\"name\":\"ann2\",\"n\":11,\"op\":\"U\"}\n{\"id\":2,\"name\":\"-\",\"n\":0,\"op\":\"D\"}\n{\"id\":9,\"name\":\"new\",\"n\":90,\"op\":\"U\"}\n",
    )
    .unwrap();
    let out = ok(&[
        "merge",
        t,
        src.to_str().unwrap(),
        "--on",
        "t.id = s.id",
        "--when",
        "MATCHED AND s.op = 'D' THEN DELETE",
        "--when",
        "MATCHED THEN UPDATE SET *",
        "--when",
        "NOT MATCHED THEN INSERT *",
    ]);
    assert_eq!(
        out.trim_end(),
        "merged 3 source rows: 1 inserted, 1 updated, 1 deleted; version 3"
    );
    assert_eq!(scan(t), ["1,ann2,11", "3,x,31", "9,new,90"]);

    let out = ok(&[
        "merge",
        t,
        src.to_str().unwrap(),
        "--on",
        "t.id = s.id",
        "--when",
        "MATCHED THEN UPDATE SET *",
        "--when",
        "NOT MATCHED THEN INSERT *",
        "--merge-schema",
    ]);
    assert_eq!(version_of(&out), 4);
    let header = ok(&["scan", t, "--format", "csv"]);
    assert!(header.lines().next().unwrap().ends_with(",op"), "{header}");

    // Errors: one line, non-zero exit, nothing committed.
    fails(&["update", t, "--set", "n = 'text'"]);
    fails(&["update", t, "--set", "nope = 1"]);
    fails(&[
        "merge",
        t,
        src.to_str().unwrap(),
        "--on",
        "t.id = s.id",
        "--when",
        "MATCHED THEN EXPLODE",
    ]);
    fails(&[
        "merge",
        t,
        src.to_str().unwrap(),
        "--on",
        "t.id = ",
        "--when",
        "MATCHED THEN DELETE",
    ]);
    let dup = dir.path().join("dup.csv");
    std::fs::write(&dup, "id,name,n,op\n1,a,1,U\n1,b,2,U\n").unwrap();
    let err = fails(&[
        "merge",
        t,
        dup.to_str().unwrap(),
        "--on",
        "t.id = s.id",
        "--when",
        "MATCHED THEN UPDATE SET *",
    ]);
    assert!(err.contains("several source rows"), "{err}");
    assert!(ok(&["history", t]).lines().count() >= 5);
    assert_eq!(
        ok(&["inspect", t, "--json"])
            .parse::<serde_json::Value>()
            .unwrap()["version"],
        4
    );
}

/// `alluvium overwrite --filter` on a table with deletion vectors deletes the old matching
/// rows of a partially matching file with a DV (the file keeps its path), as DELETE does.
#[test]
fn overwrite_with_a_filter_writes_a_deletion_vector_on_dv_tables() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    let t = t.to_str().unwrap();
    let data = dir.path().join("data.csv");
    std::fs::write(&data, "id,name,n\n1,ann,10\n2,bob,20\n3,cy,30\n").unwrap();
    ok(&["append", t, data.to_str().unwrap(), "--create"]);
    ok(&[
        "alter",
        t,
        "--set-property",
        "delta.enableDeletionVectors=true",
    ]);
    let new = dir.path().join("new.csv");
    std::fs::write(&new, "id,name,n\n2,bo,21\n").unwrap();
    let out = ok(&["overwrite", t, new.to_str().unwrap(), "--filter", "id = 2"]);
    assert_eq!(version_of(&out), 3);
    assert_eq!(scan(t), ["1,ann,10", "2,bo,21", "3,cy,30"]);
    let commit = std::fs::read_to_string(
        std::path::Path::new(t).join("_delta_log/00000000000000000003.json"),
    )
    .unwrap();
    let readded = commit
        .lines()
        .filter(|l| l.starts_with("{\"add\"") && l.contains("\"deletionVector\""))
        .count();
    assert_eq!(readded, 1, "{commit}");
}

/// `alter --set-property delta.enableRowTracking=true` backfills row ids; `scan
/// --row-tracking` shows them, an UPDATE keeps them and gives the updated row the new
/// version; on a table without row tracking the option is refused in one line.
#[test]
fn row_tracking_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    let t = t.to_str().unwrap();
    let data = dir.path().join("data.csv");
    std::fs::write(&data, "id,n\n1,10\n2,20\n3,30\n").unwrap();
    ok(&["append", t, data.to_str().unwrap(), "--create"]);
    let err = fails(&["scan", t, "--row-tracking"]);
    assert!(err.contains("row tracking is not enabled"), "{err}");
    ok(&["alter", t, "--set-property", "delta.enableRowTracking=true"]);
    let tracked = |t: &str| -> Vec<String> {
        let mut rows: Vec<String> = ok(&["scan", t, "--row-tracking", "--format", "csv"])
            .lines()
            .map(str::to_string)
            .collect();
        rows.sort();
        rows
    };
    // `append --create` creates at version 0 and appends at 1; the alter (version 2)
    // re-adds the file with fresh ids and its own version as the commit version.
    let before = tracked(t);
    assert_eq!(before.last().unwrap(), "id,n,row_id,row_commit_version");
    assert_eq!(&before[..3], ["1,10,0,2", "2,20,1,2", "3,30,2,2"]);
    ok(&["update", t, "--set", "n = n + 1", "--filter", "id = 2"]);
    let after = tracked(t);
    assert_eq!(&after[..3], ["1,10,0,2", "2,21,1,3", "3,30,2,2"]);
}

/// `merge` with an ON condition without an equality key runs (it once panicked, exit 101),
/// and a header-only source merges nothing and says so, while NOT MATCHED BY SOURCE still
/// applies; an empty file (no header) is refused in one line.
#[test]
fn merge_edges_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    let t = t.to_str().unwrap();
    let data = dir.path().join("data.csv");
    std::fs::write(&data, "id,name,n\n1,ann,10\n2,bob,20\n3,cy,30\n").unwrap();
    ok(&["append", t, data.to_str().unwrap(), "--create"]);
    let src = dir.path().join("src.csv");
    std::fs::write(&src, "id,name,n,op\n2,x,99,U\n").unwrap();
    let src = src.to_str().unwrap();
    let out = ok_json(&[
        "merge",
        t,
        src,
        "--on",
        "t.id < s.id",
        "--when",
        "MATCHED THEN UPDATE SET n = s.n",
    ]);
    assert_eq!(metrics(&out)["numTargetRowsUpdated"], 1, "{out}");
    assert_eq!(scan(t), ["1,ann,99", "2,bob,20", "3,cy,30"]);

    let header_only = dir.path().join("header.csv");
    std::fs::write(&header_only, "id,name,n,op\n").unwrap();
    let header_only = header_only.to_str().unwrap();
    let o = super::common::run(&[
        "merge",
        t,
        header_only,
        "--on",
        "t.id = s.id",
        "--when",
        "MATCHED AND s.op = 'D' THEN DELETE",
        "--when",
        "NOT MATCHED THEN INSERT *",
        "--json",
    ]);
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(o.status.success(), "{err}");
    let out: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(metrics(&out)["numSourceRows"], 0, "{out}");
    assert!(err.contains("holds no rows"), "{err}");
    assert_eq!(scan(t), ["1,ann,99", "2,bob,20", "3,cy,30"]);
    let out = ok_json(&[
        "merge",
        t,
        header_only,
        "--on",
        "t.id = s.id",
        "--when",
        "NOT MATCHED BY SOURCE AND t.id = 3 THEN DELETE",
    ]);
    assert_eq!(metrics(&out)["numTargetRowsDeleted"], 1, "{out}");
    assert_eq!(scan(t), ["1,ann,99", "2,bob,20"]);

    // A file without even a header: an empty source without a schema merges nothing, and
    // NOT MATCHED BY SOURCE still applies.
    let empty = dir.path().join("empty.csv");
    std::fs::write(&empty, "").unwrap();
    let empty = empty.to_str().unwrap();
    let o = super::common::run(&[
        "merge",
        t,
        empty,
        "--on",
        "t.id = s.id",
        "--when",
        "NOT MATCHED THEN INSERT *",
        "--json",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("holds no rows"), "{err}");
    let out: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(metrics(&out)["numSourceRows"], 0, "{out}");
    assert_eq!(scan(t), ["1,ann,99", "2,bob,20"]);
    let out = ok_json(&[
        "merge",
        t,
        empty,
        "--on",
        "t.id = s.id",
        "--when",
        "NOT MATCHED BY SOURCE AND t.id = 2 THEN UPDATE SET n = 0",
    ]);
    assert_eq!(metrics(&out)["numTargetRowsUpdated"], 1, "{out}");
    assert_eq!(scan(t), ["1,ann,99", "2,bob,0"]);
}

/// Every ON form without a `t.col = s.col` key runs as a nested loop from the command line
/// (each once exited 101, a panic in the row encoder), with the rows a plain nested loop
/// gives.
#[test]
fn merge_without_an_equality_key_runs_every_on_form() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data.csv");
    std::fs::write(&data, "id,k,n\n1,a,10\n2,b,20\n3,c,30\n").unwrap();
    let src = dir.path().join("src.csv");
    std::fs::write(&src, "id,k,n\n2,c,99\n").unwrap();
    let src = src.to_str().unwrap();
    // The target rows each ON form pairs with the one source row (id 2, k c), updated to
    // n = 99 (MATCHED); the unmatched source row is inserted when no target row matches.
    for (i, (on, want)) in [
        ("t.id < s.id", vec!["1,a,99", "2,b,20", "3,c,30"]),
        ("TRUE", vec!["1,a,99", "2,b,99", "3,c,99"]),
        ("s.id = 1", vec!["1,a,10", "2,b,20", "2,c,99", "3,c,30"]),
        ("t.id = s.id + 0", vec!["1,a,10", "2,b,99", "3,c,30"]),
        (
            "t.id = s.id OR t.k = s.k",
            vec!["1,a,10", "2,b,99", "3,c,99"],
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let t = dir.path().join(format!("t{i}"));
        let t = t.to_str().unwrap();
        ok(&["append", t, data.to_str().unwrap(), "--create"]);
        ok_json(&[
            "merge",
            t,
            src,
            "--on",
            on,
            "--when",
            "MATCHED THEN UPDATE SET n = s.n",
            "--when",
            "NOT MATCHED THEN INSERT *",
        ]);
        assert_eq!(scan(t), want, "{on}");
    }
}
