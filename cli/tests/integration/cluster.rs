//! `alluvium alter --cluster-by` and OPTIMIZE on a clustered table (SPEC.md §29).

use crate::common::{fails, ok, run};

#[test]
fn alter_cluster_by_then_optimize_clusters_the_unclustered_files() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    let t = t.to_str().unwrap();
    let csv = dir.path().join("a.csv");
    std::fs::write(&csv, "id,name\n3,carol\n1,alice\n2,bob\n").unwrap();
    let csv = csv.to_str().unwrap();
    ok(&["create", t, "--schema-from", csv]);
    ok(&["append", t, csv]);
    ok(&["append", t, csv]);
    let err = fails(&["alter", t, "--cluster-by", "id,nope"]);
    assert!(err.contains("nope"), "{err}");
    // Not combined with property changes (a usage error).
    assert!(
        !run(&[
            "alter",
            t,
            "--cluster-by",
            "id",
            "--set-property",
            "owner=me"
        ])
        .status
        .success()
    );
    let out = ok(&["alter", t, "--cluster-by", "id, name"]);
    assert_eq!(
        out.trim_end(),
        "the table is clustered by id, name; version 3"
    );
    let v: serde_json::Value = serde_json::from_str(&ok(&["inspect", t, "--json"])).unwrap();
    let features = v["protocol"]["writerFeatures"].to_string();
    assert!(
        features.contains("clustering") && features.contains("domainMetadata"),
        "{v}"
    );
    let out = ok(&["optimize", t]);
    assert!(out.trim_end().ends_with("; version 4"), "{out}");
    let log = std::fs::read_to_string(format!("{t}/_delta_log/00000000000000000004.json")).unwrap();
    assert!(log.contains("\"clusteringProvider\":\"liquid\""), "{log}");
    assert!(log.contains("\"clusterBy\""), "{log}");
    assert!(ok(&["optimize", t]).starts_with("nothing to optimize"));
    // Z-order is refused on a clustered table; the CLI names its flag for the fix.
    let err = fails(&["optimize", t, "--zorder", "id"]);
    assert!(
        err.contains("Z-order") && err.contains("alter --cluster-by"),
        "{err}"
    );
    let out = ok(&["alter", t, "--cluster-by", "none"]);
    assert_eq!(
        out.trim_end(),
        "the table is clustered by no column; version 5"
    );
    assert_eq!(ok(&["scan", t, "--format", "csv"]).lines().count(), 7);
}
