//! Variant and geospatial columns, and tables that list the variant features without using
//! them (as delta-rs 1.6 does on every table with deletion vectors): reads, shredded folding,
//! skipping, appends, deletes, OPTIMIZE, and malformed variant bytes in a data file.

use crate::common;

use std::collections::HashMap;
use std::sync::Arc;

use alluvium::{ScanBuilder, Table, WriteOptions, variants_as_json};
use alluvium_compaction::OptimizeOptions;
use alluvium_txlog::schema::{EXTENSION_METADATA_KEY, EXTENSION_NAME_KEY, VARIANT_EXTENSION};
use arrow::array::{Array, ArrayRef, BinaryArray, Int64Array, RecordBatch, StructArray};
use arrow::datatypes::{DataType, Field, Fields, Schema};
use parquet::arrow::ArrowWriter;

fn open(path: &std::path::Path) -> Table {
    Table::open(path.to_str().unwrap()).unwrap()
}

/// Every row of the latest snapshot with variants as JSON text, canonical and sorted.
fn json_rows(t: &Table) -> Vec<String> {
    let batches = ScanBuilder::new(t.snapshot().unwrap())
        .build()
        .unwrap()
        .execute_to_vec()
        .unwrap();
    let shown: Vec<RecordBatch> = batches
        .iter()
        .map(|b| variants_as_json(b).unwrap())
        .collect();
    let mut rows = common::canon_rows(&shown);
    rows.sort();
    rows
}

fn conformance_table(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/conformance/tables")
        .join(name)
        .join("delta")
}

/// Every row as JSON (variants as their JSON text, parsed back).
fn json_objects(t: &Table) -> Vec<serde_json::Value> {
    let batches = ScanBuilder::new(t.snapshot().unwrap())
        .build()
        .unwrap()
        .execute_to_vec()
        .unwrap();
    let mut out = Vec::new();
    let mut w = arrow::json::LineDelimitedWriter::new(&mut out);
    for b in &batches {
        w.write(&variants_as_json(b).unwrap()).unwrap();
    }
    w.finish().unwrap();
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn variant(row: &serde_json::Value, path: &[&str]) -> serde_json::Value {
    let mut v = row;
    for p in path {
        v = &v[p];
    }
    serde_json::from_str(v.as_str().unwrap()).unwrap()
}

#[test]
fn shredded_variants_fold_back_to_the_values_spark_wrote() {
    use serde_json::json;
    // These files are shredded (a `typed_value` tree next to `value`); each value is a
    // function of the row's other columns, as the generating Spark job wrote it.
    let table = |name| open(&conformance_table(name));
    let rows = json_objects(&table("variant-stats-no-checkpoint"));
    assert_eq!(rows.len(), 10);
    for r in &rows {
        let k = r["i"].as_i64().unwrap() - 100;
        assert_eq!(
            variant(r, &["v"]),
            json!({"id": k, "name": (10 - k).to_string()})
        );
        assert_eq!(
            variant(r, &["nv", "v"]),
            json!({"id": k + 10, "name": (20 - k).to_string()})
        );
    }
    let rows = json_objects(&table("variant-stats-nested-no-checkpoint"));
    assert_eq!(rows.len(), 10);
    for r in &rows {
        let i = r["i"].as_i64().unwrap();
        assert_eq!(
            variant(r, &["s", "v"]),
            json!({"name": format!("item_{i}"), "value": i})
        );
    }
    let rows = json_objects(&table("variant-stats-with-struct-no-checkpoint"));
    assert_eq!(rows.len(), 10);
    for r in &rows {
        assert_eq!(variant(r, &["v"]), json!({"key": r["s"]["i"]}));
    }
    // Unshredded and (preview-)shredding tables with the same rows read the same.
    let a = json_rows(&table("unshredded-variant"));
    let b = json_rows(&table("spark-shredded-variant-preview-delta"));
    assert_eq!(a.len(), 102);
    assert_eq!(a, b);
}

#[test]
fn variant_columns_scan_as_the_canonical_extension_type() {
    let t = open(&conformance_table("unshredded-variant"));
    let scan = ScanBuilder::new(t.snapshot().unwrap()).build().unwrap();
    let schema = scan.schema();
    let v = schema.field_with_name("v").unwrap();
    assert_eq!(
        v.metadata().get(EXTENSION_NAME_KEY).map(String::as_str),
        Some(VARIANT_EXTENSION)
    );
    let DataType::Struct(children) = v.data_type() else {
        panic!("{v:?}")
    };
    let names: Vec<&str> = children.iter().map(|c| c.name().as_str()).collect();
    assert_eq!(names, ["metadata", "value"]);
    for c in children {
        assert_eq!(c.data_type(), &DataType::Binary);
    }
    // Batches agree with the schema, nested variants included.
    let batches = scan.execute_to_vec().unwrap();
    assert_eq!(batches[0].schema(), schema);
}

#[test]
fn variant_stats_are_ignored_and_other_columns_still_skip() {
    let t = open(&conformance_table("variant-stats-no-checkpoint"));
    let count = |filter: &str| -> (usize, usize) {
        let scan = ScanBuilder::new(t.snapshot().unwrap())
            .with_filter_str(filter)
            .unwrap()
            .build()
            .unwrap();
        let rows = scan
            .execute_to_vec()
            .unwrap()
            .iter()
            .map(|b| b.num_rows())
            .sum();
        (scan.files().len(), rows)
    };
    assert_eq!(count("i = 103"), (1, 1));
    // The integer column's stats (100..=109) still skip the file.
    assert_eq!(count("i = 3"), (0, 0));
    assert_eq!(count("v IS NOT NULL").1, 10);
}

#[test]
fn geospatial_columns_keep_type_and_crs_in_field_metadata() {
    let t = open(&conformance_table("table-with-geo"));
    let scan = ScanBuilder::new(t.snapshot().unwrap()).build().unwrap();
    let schema = scan.schema();
    let geom = schema.field_with_name("geom").unwrap();
    assert_eq!(geom.data_type(), &DataType::Binary);
    assert_eq!(geom.metadata()[EXTENSION_NAME_KEY], "geoarrow.wkb");
    assert_eq!(
        geom.metadata()[EXTENSION_METADATA_KEY],
        r#"{"crs":"OGC:CRS84"}"#
    );
    let geog = schema.field_with_name("geog").unwrap();
    assert_eq!(
        geog.metadata()[EXTENSION_METADATA_KEY],
        r#"{"crs":"OGC:CRS84","edges":"spherical"}"#
    );
    assert!(scan.execute_to_vec().unwrap().is_empty());
}

#[test]
fn append_delete_and_optimize_on_a_variant_table() {
    for dvs in [false, true] {
        append_delete_and_optimize_on_a_variant_table_with(dvs);
    }
}

/// The body of [`append_delete_and_optimize_on_a_variant_table`]: the DELETE rewrites the
/// files, or (`dvs`) writes deletion vectors that OPTIMIZE then purges.
fn append_delete_and_optimize_on_a_variant_table_with(dvs: bool) {
    let (_dir, path) = common::copy_table("unshredded-variant");
    let t = open(&path);
    if dvs {
        t.set_properties([("delta.enableDeletionVectors", "true")], &[])
            .unwrap();
    }
    let before = json_rows(&t);
    // Append the table's own rows back: the incoming batches carry the variant types.
    let batches = ScanBuilder::new(t.snapshot().unwrap())
        .build()
        .unwrap()
        .execute_to_vec()
        .unwrap();
    t.append(batches, &WriteOptions::default()).unwrap();
    let mut doubled: Vec<String> = before.iter().chain(&before).cloned().collect();
    doubled.sort();
    assert_eq!(json_rows(&t), doubled);

    t.delete_str("id >= 50", &WriteOptions::default()).unwrap();
    assert_eq!(
        t.snapshot()
            .unwrap()
            .files()
            .any(|a| a.deletion_vector().is_some()),
        dvs
    );
    let mut kept: Vec<String> = doubled
        .iter()
        .filter(|r| {
            let id: i64 = r
                .split(|c: char| !c.is_ascii_digit())
                .find(|s| !s.is_empty())
                .unwrap()
                .parse()
                .unwrap();
            id < 50
        })
        .cloned()
        .collect();
    kept.sort();
    assert_eq!(json_rows(&t), kept);

    let files_before = t.snapshot().unwrap().num_files();
    t.optimize(&OptimizeOptions::default()).unwrap();
    assert!(t.snapshot().unwrap().num_files() < files_before);
    assert!(
        t.snapshot()
            .unwrap()
            .files()
            .all(|a| a.deletion_vector().is_none())
    );
    assert_eq!(json_rows(&t), kept);
    let protocol = t.snapshot().unwrap().protocol().clone();
    assert!(
        protocol.has_reader_feature("variantType-preview"),
        "{protocol:?}"
    );
}

fn id_batch(ids: std::ops::Range<i64>) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true)]));
    RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from_iter_values(ids))]).unwrap()
}

#[test]
fn delta_rs_style_dv_table_listing_variant_type_reads_appends_and_deletes() {
    // delta-rs 1.6 creates every table with deletion vectors at protocol 3/7 listing
    // `variantType` in both feature lists, without any variant column.
    let dir = tempfile::tempdir().unwrap();
    let t = open(&dir.path().join("t"));
    let props = HashMap::from([
        (
            "delta.enableDeletionVectors".to_string(),
            "true".to_string(),
        ),
        (
            "delta.feature.variantType".to_string(),
            "supported".to_string(),
        ),
    ]);
    t.create(&id_batch(0..0).schema(), &[], &props).unwrap();
    let p = t.snapshot().unwrap().protocol().clone();
    assert_eq!((p.min_reader_version, p.min_writer_version), (3, 7));
    for f in ["variantType", "deletionVectors"] {
        assert!(p.has_reader_feature(f) && p.has_writer_feature(f), "{p:?}");
    }
    t.append([id_batch(0..10)], &WriteOptions::default())
        .unwrap();
    t.append([id_batch(10..20)], &WriteOptions::default())
        .unwrap();
    t.delete_str("id < 5", &WriteOptions::default()).unwrap();
    let snap = t.snapshot().unwrap();
    assert_eq!(snap.protocol(), &p, "writes keep the feature lists");
    let rows = common::count_rows(&dir.path().join("t")).unwrap();
    assert_eq!(rows, 15);
}

/// A variant table whose only data file holds `value` bytes that are not a variant.
fn table_with_bad_variant() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("t");
    std::fs::create_dir_all(root.join("_delta_log")).unwrap();
    let fields = Fields::from(vec![
        Field::new("metadata", DataType::Binary, false),
        Field::new("value", DataType::Binary, false),
    ]);
    let v = StructArray::try_new(
        fields.clone(),
        vec![
            Arc::new(BinaryArray::from(vec![[0x01u8, 0, 0].as_ref()])) as ArrayRef,
            // A short-string header claiming 20 bytes that are not there.
            Arc::new(BinaryArray::from(vec![[0x51u8, b'a'].as_ref()])),
        ],
        None,
    )
    .unwrap();
    let schema = Arc::new(Schema::new(vec![Field::new(
        "v",
        DataType::Struct(fields),
        true,
    )]));
    let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(v)]).unwrap();
    let mut w = ArrowWriter::try_new(
        std::fs::File::create(root.join("bad.parquet")).unwrap(),
        schema,
        None,
    )
    .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let size = std::fs::metadata(root.join("bad.parquet")).unwrap().len();
    let log = format!(
        "{}\n{}\n{}\n",
        r#"{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["variantType"],"writerFeatures":["variantType"]}}"#,
        r#"{"metaData":{"id":"bad","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"v\",\"type\":\"variant\",\"nullable\":true,\"metadata\":{}}]}","partitionColumns":[],"configuration":{},"createdTime":0}}"#,
        format_args!(
            r#"{{"add":{{"path":"bad.parquet","partitionValues":{{}},"size":{size},"modificationTime":0,"dataChange":true}}}}"#
        ),
    );
    std::fs::write(root.join("_delta_log/00000000000000000000.json"), log).unwrap();
    (dir, root)
}

#[test]
fn malformed_variant_bytes_are_a_typed_error_naming_file_and_column() {
    let (_dir, root) = table_with_bad_variant();
    let t = open(&root);
    let err = ScanBuilder::new(t.snapshot().unwrap())
        .build()
        .unwrap()
        .execute_to_vec()
        .unwrap_err()
        .to_string();
    assert!(err.contains("bad.parquet"), "{err}");
    assert!(err.contains("column `v`"), "{err}");
    assert!(err.contains("malformed variant"), "{err}");
}

#[test]
fn appending_malformed_variant_values_is_refused() {
    let (_dir, path) = common::copy_table("unshredded-variant");
    let t = open(&path);
    let batches = ScanBuilder::new(t.snapshot().unwrap())
        .with_columns(["id", "v"])
        .build()
        .unwrap()
        .execute_to_vec()
        .unwrap();
    let b = &batches[0];
    let v = b.column(1).as_any().downcast_ref::<StructArray>().unwrap();
    let broken = StructArray::try_new(
        v.fields().clone(),
        vec![
            v.column(0).clone(),
            Arc::new(BinaryArray::from(vec![[0x0du8].as_ref(); v.len()])),
        ],
        None,
    )
    .unwrap();
    let batch =
        RecordBatch::try_new(b.schema(), vec![b.column(0).clone(), Arc::new(broken)]).unwrap();
    let version = t.snapshot().unwrap().version();
    let err = t
        .append([batch], &WriteOptions::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("malformed variant"), "{err}");
    assert_eq!(t.snapshot().unwrap().version(), version);
}

#[test]
fn tables_created_with_variant_or_geospatial_columns_get_the_features_and_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    // A geometry column from GeoArrow WKB, appended as plain binary too.
    let geo = Field::new("g", DataType::Binary, true).with_metadata(HashMap::from([
        (EXTENSION_NAME_KEY.to_string(), "geoarrow.wkb".to_string()),
        (
            EXTENSION_METADATA_KEY.to_string(),
            r#"{"crs":"EPSG:4326"}"#.to_string(),
        ),
    ]));
    // WKB of POINT(1 2), little endian.
    let mut point = vec![1u8, 1, 0, 0, 0];
    point.extend(1f64.to_le_bytes());
    point.extend(2f64.to_le_bytes());
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        geo,
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from(vec![1, 2])),
            Arc::new(BinaryArray::from(vec![Some(point.as_slice()), None])),
        ],
    )
    .unwrap();
    let t = open(&dir.path().join("geo"));
    t.create(&schema, &[], alluvium::NO_PROPERTIES).unwrap();
    let p = t.snapshot().unwrap().protocol().clone();
    assert!(p.has_reader_feature("geospatial"), "{p:?}");
    t.append([batch.clone()], &WriteOptions::default()).unwrap();
    let plain = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, true),
            Field::new("g", DataType::Binary, true),
        ])),
        batch.columns().to_vec(),
    )
    .unwrap();
    t.append([plain], &WriteOptions::default()).unwrap();
    let out = ScanBuilder::new(t.snapshot().unwrap())
        .build()
        .unwrap()
        .execute_to_vec()
        .unwrap();
    assert_eq!(out.iter().map(RecordBatch::num_rows).sum::<usize>(), 4);
    for b in &out {
        let g = b.schema().field_with_name("g").unwrap().clone();
        assert_eq!(
            g.metadata()[EXTENSION_METADATA_KEY],
            r#"{"crs":"EPSG:4326"}"#
        );
        let col = b.column(1).as_any().downcast_ref::<BinaryArray>().unwrap();
        assert_eq!(col.value(0), point.as_slice());
        assert!(col.is_null(1));
    }
    // (`alluvium inspect` naming the column `g geometry(EPSG:4326)` is checked in the CLI
    // package's tests.)

    // A variant column from the table's own batches: a new table of variants.
    let src = open(&conformance_table("unshredded-variant"));
    let batches = ScanBuilder::new(src.snapshot().unwrap())
        .with_columns(["id", "v"])
        .build()
        .unwrap()
        .execute_to_vec()
        .unwrap();
    let t = open(&dir.path().join("var"));
    t.create(&batches[0].schema(), &[], alluvium::NO_PROPERTIES)
        .unwrap();
    assert!(
        t.snapshot()
            .unwrap()
            .protocol()
            .has_reader_feature("variantType")
    );
    t.append(batches, &WriteOptions::default()).unwrap();
    let a = json_rows(&t);
    let b: Vec<String> = {
        let batches = ScanBuilder::new(src.snapshot().unwrap())
            .with_columns(["id", "v"])
            .build()
            .unwrap()
            .execute_to_vec()
            .unwrap();
        let shown: Vec<RecordBatch> = batches
            .iter()
            .map(|b| variants_as_json(b).unwrap())
            .collect();
        let mut rows = common::canon_rows(&shown);
        rows.sort();
        rows
    };
    assert_eq!(a, b);
}

/// Issue 12 item 4 for geospatial columns: deletes (with deletion vectors and by rewriting)
/// and OPTIMIZE on a table with a geometry column keep every remaining WKB value byte for
/// byte and the column's type and CRS.
#[test]
fn deletes_and_optimize_on_a_geospatial_table() {
    for dvs in [true, false] {
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
        // WKB of POINT(id, -id), little endian.
        let wkb = |id: i64| {
            let mut p = vec![1u8, 1, 0, 0, 0];
            p.extend((id as f64).to_le_bytes());
            p.extend((-id as f64).to_le_bytes());
            p
        };
        let batch = |ids: std::ops::Range<i64>| {
            let points: Vec<Vec<u8>> = ids.clone().map(wkb).collect();
            RecordBatch::try_new(
                schema.clone(),
                vec![
                    Arc::new(Int64Array::from(ids.collect::<Vec<_>>())) as ArrayRef,
                    Arc::new(BinaryArray::from_iter_values(points.iter())),
                ],
            )
            .unwrap()
        };
        let t = open(&dir.path().join("geo"));
        let props = if dvs {
            HashMap::from([(
                "delta.enableDeletionVectors".to_string(),
                "true".to_string(),
            )])
        } else {
            HashMap::new()
        };
        t.create(&schema, &[], &props).unwrap();
        t.append([batch(0..10)], &WriteOptions::default()).unwrap();
        t.append([batch(10..20)], &WriteOptions::default()).unwrap();
        t.delete_str("id = 3 OR id = 14", &WriteOptions::default())
            .unwrap();
        let has_dv = t
            .snapshot()
            .unwrap()
            .files()
            .any(|a| a.deletion_vector().is_some());
        assert_eq!(has_dv, dvs);
        let check = |t: &Table, what: &str| {
            let out = ScanBuilder::new(t.snapshot().unwrap())
                .build()
                .unwrap()
                .execute_to_vec()
                .unwrap();
            let mut seen: Vec<(i64, Vec<u8>)> = Vec::new();
            for b in &out {
                let g = b.schema().field_with_name("g").unwrap().clone();
                assert_eq!(
                    g.metadata()[EXTENSION_METADATA_KEY],
                    r#"{"crs":"EPSG:4326"}"#,
                    "{what}"
                );
                let ids = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
                let gs = b.column(1).as_any().downcast_ref::<BinaryArray>().unwrap();
                for i in 0..b.num_rows() {
                    seen.push((ids.value(i), gs.value(i).to_vec()));
                }
            }
            seen.sort();
            let want: Vec<(i64, Vec<u8>)> = (0..20)
                .filter(|i| *i != 3 && *i != 14)
                .map(|i| (i, wkb(i)))
                .collect();
            assert_eq!(seen, want, "{what} (dvs={dvs})");
        };
        check(&t, "after the delete");
        t.optimize(&OptimizeOptions::default()).unwrap();
        let snap = t.snapshot().unwrap();
        assert_eq!(snap.num_files(), 1, "dvs={dvs}");
        assert!(snap.files().all(|a| a.deletion_vector().is_none()));
        assert!(snap.protocol().has_reader_feature("geospatial"));
        check(&t, "after OPTIMIZE");
    }
}
