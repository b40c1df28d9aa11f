//! CLI: column rules on writes (SPEC.md §28): `alter --add-constraint/--drop-constraint`,
//! a CHECK violation refused in one line naming the constraint and row, identity values
//! generated for a CSV append that lacks the column.

use crate::common::{fails, ok};

#[test]
fn alter_adds_and_drops_check_constraints_and_writes_obey_them() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    let t = t.to_str().unwrap();
    let csv = dir.path().join("a.csv");
    std::fs::write(&csv, "id,name\n1,alice\n2,bob\n").unwrap();
    let csv = csv.to_str().unwrap();
    ok(&["create", t, "--schema-from", csv]);
    ok(&["append", t, csv]);
    // Existing rows are checked first: id 1 violates `id > 1`.
    let err = fails(&["alter", t, "--add-constraint", "big", "id > 1"]);
    assert!(err.contains("big") && err.contains("alice"), "{err}");
    let err = fails(&["alter", t, "--set-property", "delta.constraints.p=id > 0"]);
    assert!(err.contains("--add-constraint"), "{err}");
    let out = ok(&["alter", t, "--add-constraint", "positive", "id > 0"]);
    assert_eq!(
        out.trim_end(),
        "added constraint positive CHECK (id > 0); every existing row satisfies it; version 2"
    );
    let v: serde_json::Value = serde_json::from_str(&ok(&["inspect", t, "--json"])).unwrap();
    assert!(
        v["protocol"]["minWriterVersion"].as_i64().unwrap() >= 3,
        "{v}"
    );
    let bad = dir.path().join("bad.csv");
    std::fs::write(&bad, "id,name\n0,zero\n").unwrap();
    let bad = bad.to_str().unwrap();
    let err = fails(&["append", t, bad]);
    assert!(err.contains("positive") && err.contains("zero"), "{err}");
    let err = fails(&["update", t, "--set", "id = id - 5", "--filter", "id = 2"]);
    assert!(err.contains("positive"), "{err}");
    ok(&["alter", t, "--drop-constraint", "positive"]);
    ok(&["append", t, bad]);
    fails(&["alter", t, "--drop-constraint", "positive"]);
}

#[test]
fn append_to_an_identity_table_generates_the_values() {
    // Created by Databricks Runtime 14.1: GENERATED ALWAYS AS IDENTITY, protocol 1/6.
    let (dir, t) = crate::root_common::copy_table("issue-2152");
    let t = t.to_str().unwrap();
    let csv = dir.path().join("a.csv");
    std::fs::write(&csv, "TXT_DateKey\nx\ny\n").unwrap();
    ok(&["append", t, csv.to_str().unwrap()]);
    let out = ok(&["scan", t, "--format", "csv"]);
    assert_eq!(out.trim(), "ID_D_DATE,TXT_DateKey\n1,x\n2,y", "{out}");
    let given = dir.path().join("b.csv");
    std::fs::write(&given, "ID_D_DATE,TXT_DateKey\n9,z\n").unwrap();
    let err = fails(&["append", t, given.to_str().unwrap()]);
    assert!(
        err.contains("ID_D_DATE") && err.contains("GENERATED ALWAYS"),
        "{err}"
    );
}
