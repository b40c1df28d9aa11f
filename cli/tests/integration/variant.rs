//! `alluvium scan` renders variant values as JSON in every format; `alluvium append` refuses
//! text input (CSV, JSON lines) for a variant column with one error line.

use super::common::{conformance, run as cli};

#[test]
fn cli_renders_variants_as_json_and_refuses_them_from_text_input() {
    let table = conformance("variant-stats-with-struct-no-checkpoint");
    let t = table.as_str();
    for format in ["table", "csv", "jsonl"] {
        let o = cli(&["scan", t, "--format", format, "--filter", "s.i = 200"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let out = String::from_utf8(o.stdout).unwrap();
        let shown = if format == "table" {
            r#"{"key":200}"#
        } else {
            r#"{""key"":200}"#
        };
        let shown = if format == "jsonl" {
            r#"{\"key\":200}"#
        } else {
            shown
        };
        assert!(out.contains(shown), "{format}: {out}");
    }
    let (dir, copy) = super::root_common::copy_table("unshredded-variant");
    for (name, text) in [
        ("in.csv", "id,v\n1,{}\n"),
        ("in.jsonl", "{\"id\":1,\"v\":1}\n"),
    ] {
        let input = dir.path().join(name);
        std::fs::write(&input, text).unwrap();
        let o = cli(&["append", copy.to_str().unwrap(), input.to_str().unwrap()]);
        assert!(!o.status.success());
        assert_ne!(o.status.code(), Some(101), "panicked");
        let err = String::from_utf8(o.stderr).unwrap();
        assert!(err.contains("column `v` is a variant column"), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
}
