//! `alluvium verify`: exit status 0 for a clean table, 3 with one line per finding for a
//! damaged one (each kind of damage of the library's `verify` tests), 1 when it cannot
//! check; `--json`.

use std::process::Command;

use alluvium::{Table, VerifyOptions};

use super::common::BIN;

use super::verify_fixture::{built, damages, data_file};

#[test]
fn each_kind_of_damage_is_one_line_per_finding_with_exit_3() {
    for (what, damage, kind, _deep_only) in damages() {
        let (_dir, root) = built();
        damage(&root);
        let report = Table::open(root.to_str().unwrap())
            .unwrap()
            .verify(&VerifyOptions::default().with_version(None).with_deep(true))
            .unwrap();
        let o = Command::new(BIN)
            .args(["verify", root.to_str().unwrap(), "--deep"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(3), "{what}");
        let out = String::from_utf8(o.stdout).unwrap();
        assert_eq!(
            out.lines().count(),
            report.findings.len() + 1,
            "{what}: {out}"
        );
        assert!(out.contains(&format!("{kind}: ")), "{what}: {out}");
    }
}

#[test]
fn cli_exit_status_and_json() {
    let (_dir, root) = built();
    let t = root.to_str().unwrap();
    let o = Command::new(BIN).args(["verify", t]).output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(out.starts_with("clean: version 4"), "{out}");
    std::fs::remove_file(data_file(&root)).unwrap();
    let o = Command::new(BIN)
        .args(["verify", t, "--json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["clean"], false);
    assert_eq!(v["version"], 4);
    assert_eq!(v["findings"][0]["kind"], "missing-file");
    assert!(
        v["findings"][0]["location"]
            .as_str()
            .unwrap()
            .ends_with(".parquet")
    );
    // No table: an error (exit 1), not a finding.
    let o = Command::new(BIN)
        .args(["verify", "/nonexistent/table"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
}
