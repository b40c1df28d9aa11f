//! `alluvium changes`: the change data feed of a version or timestamp range, in every output
//! format, with columns and a filter; bad ranges fail with one line and a non-zero exit.

use super::common::{conformance, fails, ok, run};

#[test]
fn changes_print_the_feed_of_a_version_range() {
    let table = conformance("cdf-table");
    let csv = ok(&[
        "changes",
        &table,
        "--from",
        "0",
        "--columns",
        "id,_change_type,_commit_version",
        "--format",
        "csv",
    ]);
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("id,_change_type,_commit_version"));
    assert_eq!(lines.count(), 23, "the 23 change rows of cdf-table");

    let one_version = ok(&[
        "changes", &table, "--from", "1", "--to", "1", "--format", "jsonl",
    ]);
    assert!(!one_version.is_empty());
    for line in one_version.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["_commit_version"], 1, "{line}");
        assert!(v.get("_commit_timestamp").is_some(), "{line}");
    }

    let deletes = ok(&[
        "changes",
        &table,
        "--from",
        "0",
        "--filter",
        "_change_type = 'delete'",
        "--columns",
        "_change_type",
        "--format",
        "csv",
    ]);
    assert!(deletes.lines().skip(1).all(|l| l == "delete"), "{deletes}");

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("feed.parquet");
    ok(&[
        "changes",
        &table,
        "--from",
        "0",
        "--format",
        "parquet",
        "--output",
        out.to_str().unwrap(),
    ]);
    assert!(std::fs::metadata(&out).unwrap().len() > 0);
    let text = ok(&["changes", &table, "--from-timestamp", "0", "--to", "0"]);
    assert!(text.contains("_commit_timestamp"), "{text}");
}

#[test]
fn bad_change_ranges_fail_with_one_line() {
    let table = conformance("cdf-table-simple");
    assert!(fails(&["changes", &table, "--from", "3"]).contains("after the latest version 2"));
    assert!(
        fails(&["changes", &table, "--from", "1", "--to", "0"]).contains("invalid change range")
    );
    assert!(
        fails(&["changes", &table, "--from-timestamp", "2999-01-01"])
            .contains("after the latest commit")
    );
    let not_cdf = conformance("basic-dv-no-checkpoint");
    assert!(fails(&["changes", &not_cdf, "--from", "0"]).contains("change data was not recorded"));
    // No start: a usage error.
    assert_eq!(run(&["changes", &table]).status.code(), Some(2));
}
