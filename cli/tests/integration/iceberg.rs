//! `alluvium iceberg sync` (SPEC §38): its line and JSON object, a re-sync that says it is
//! already in sync, `--version`, and a one-line error for something that is not a table.

use super::common::{fails, ok, ok_json};

#[test]
fn iceberg_sync_says_what_it_mirrored() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t").to_string_lossy().into_owned();
    let f = dir.path().join("a.csv");
    std::fs::write(&f, "id,p\n1,a\n2,b\n3,a\n").unwrap();
    ok(&[
        "append",
        &t,
        f.to_str().unwrap(),
        "--create",
        "--partition-by",
        "p",
    ]);
    ok(&["append", &t, f.to_str().unwrap()]);
    let out = ok(&["iceberg", "sync", &t, "--version", "1"]);
    assert!(
        out.starts_with("synced Delta version 1 (metadata/v1.metadata.json): Iceberg snapshot "),
        "{out}"
    );
    assert!(
        out.trim_end().ends_with("2 data files, 0 delete files"),
        "{out}"
    );
    let report = ok_json(&["iceberg", "sync", &t]);
    assert_eq!(report["operation"], "ICEBERG SYNC");
    assert_eq!(report["synced_versions"], serde_json::json!([2]));
    assert_eq!(report["metadata_version"], 2);
    assert_eq!(report["metrics"]["data_files"], 4);
    let again = ok(&["iceberg", "sync", &t]);
    assert!(
        again.starts_with("already in sync: Iceberg snapshot "),
        "{again}"
    );
    assert!(
        std::path::Path::new(&t)
            .join("metadata/v2.metadata.json")
            .is_file()
    );
    let e = fails(&[
        "iceberg",
        "sync",
        &dir.path().join("nothing").to_string_lossy(),
    ]);
    assert!(e.contains("no Delta table"), "{e}");
}
