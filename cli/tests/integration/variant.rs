//! `alluvium scan` renders variant values as JSON in every format; `alluvium append` refuses
//! text input (CSV, JSON lines) for a variant column with one error line; `alluvium inspect`
//! names a geometry column's type with its CRS.

use std::collections::HashMap;
use std::sync::Arc;

use alluvium::Table;
use alluvium::{EXTENSION_METADATA_KEY, EXTENSION_NAME_KEY};
use arrow::datatypes::{DataType, Field, Schema};

use super::common::{conformance, ok, run as cli};

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

#[test]
fn inspect_names_a_geometry_column_with_its_crs() {
    let dir = tempfile::tempdir().unwrap();
    let geo = Field::new("g", DataType::Binary, true).with_metadata(HashMap::from([
        (EXTENSION_NAME_KEY.to_string(), "geoarrow.wkb".to_string()),
        (
            EXTENSION_METADATA_KEY.to_string(),
            r#"{"crs":"EPSG:4326"}"#.to_string(),
        ),
    ]));
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        geo,
    ]));
    let t = dir.path().join("geo");
    Table::open(t.to_str().unwrap())
        .unwrap()
        .create(&schema, &[], alluvium::NO_PROPERTIES)
        .unwrap();
    let described = ok(&["inspect", t.to_str().unwrap()]);
    assert!(described.contains("g geometry(EPSG:4326)"), "{described}");
}
