//! CONVERT TO DELTA (SPEC.md §34): a directory of Parquet files, Hive-style partition
//! directories, statistics from the footers or from the rows, nothing rewritten; refusals
//! that name the file.

use std::path::Path;
use std::sync::Arc;

use alluvium::{DataType as DeltaType, PrimitiveType, ScanBuilder, StructField, Table};
use arrow::array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::{EnabledStatistics, WriterProperties};

use crate::common::canon_rows;

fn batch(ids: &[i64], names: &[Option<&str>]) -> RecordBatch {
    RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
            Field::new("score", DataType::Float64, true),
        ])),
        vec![
            Arc::new(Int64Array::from(ids.to_vec())) as ArrayRef,
            Arc::new(StringArray::from(names.to_vec())),
            Arc::new(Float64Array::from(
                ids.iter().map(|i| *i as f64 / 2.0).collect::<Vec<_>>(),
            )),
        ],
    )
    .unwrap()
}

fn write(path: &Path, b: &RecordBatch, stats: bool) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let props = WriterProperties::builder()
        .set_statistics_enabled(if stats {
            EnabledStatistics::Chunk
        } else {
            EnabledStatistics::None
        })
        .build();
    let mut w = ArrowWriter::try_new(
        std::fs::File::create(path).unwrap(),
        b.schema(),
        Some(props),
    )
    .unwrap();
    w.write(b).unwrap();
    w.close().unwrap();
}

fn day() -> Vec<StructField> {
    vec![StructField::new(
        "day",
        DeltaType::Primitive(PrimitiveType::Date),
        true,
    )]
}

fn adds(dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join("_delta_log/00000000000000000000.json"))
        .unwrap()
        .lines()
        .filter_map(|l| {
            serde_json::from_str::<serde_json::Value>(l)
                .unwrap()
                .get("add")
                .cloned()
        })
        .collect()
}

#[test]
fn a_partitioned_parquet_directory_becomes_a_table_without_rewriting() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        &d.join("day=2024-01-01/part-0.parquet"),
        &batch(&[1, 2], &[Some("a"), None]),
        true,
    );
    write(
        &d.join("day=2024-01-02/part-0.parquet"),
        &batch(&[3], &[Some("c")]),
        true,
    );
    write(
        &d.join("day=__HIVE_DEFAULT_PARTITION__/part-0.parquet"),
        &batch(&[4], &[Some("d")]),
        true,
    );
    // What Spark leaves beside data files is not data.
    std::fs::write(d.join("_SUCCESS"), b"").unwrap();
    std::fs::write(d.join("day=2024-01-01/.part-0.parquet.crc"), b"x").unwrap();
    let before = std::fs::read(d.join("day=2024-01-01/part-0.parquet")).unwrap();

    let t = Table::open(d.to_str().unwrap()).unwrap();
    let summary = t.convert_to_delta(&day()).unwrap();
    assert_eq!(summary.version, 0);
    assert_eq!(summary.operation_metrics["numConvertedFiles"], "3");
    let s = t.snapshot().unwrap();
    assert_eq!(s.partition_columns(), ["day"]);
    let names: Vec<&str> = s.schema().fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["id", "name", "score", "day"]);
    // Parquet's `required` does not make a NOT NULL column.
    assert!(s.schema().fields.iter().all(|f| f.nullable));
    let ci = s.commit_info().unwrap();
    assert_eq!(ci.operation(), Some("CONVERT"));
    assert_eq!(
        ci.operation_parameters().unwrap()["partitionedBy"],
        "[\"day\"]"
    );

    let rows = canon_rows(
        &ScanBuilder::new(s)
            .build()
            .unwrap()
            .execute_to_vec()
            .unwrap(),
    );
    assert_eq!(rows.len(), 4);
    assert!(
        rows.iter()
            .any(|r| r.starts_with("4 |") && r.ends_with("| ∅")),
        "{rows:?}"
    );
    let filtered = ScanBuilder::new(t.snapshot().unwrap())
        .with_filter_str("day = '2024-01-02'")
        .unwrap()
        .build()
        .unwrap()
        .execute_to_vec()
        .unwrap();
    assert_eq!(canon_rows(&filtered).len(), 1);

    // The files are where they were, byte for byte, and carry statistics.
    assert_eq!(
        std::fs::read(d.join("day=2024-01-01/part-0.parquet")).unwrap(),
        before
    );
    let adds = adds(d);
    assert_eq!(adds.len(), 3);
    let first = adds
        .iter()
        .find(|a| a["partitionValues"]["day"] == "2024-01-01")
        .unwrap();
    assert_eq!(first["path"], "day=2024-01-01/part-0.parquet");
    assert_eq!(first["dataChange"], true);
    let stats: serde_json::Value = serde_json::from_str(first["stats"].as_str().unwrap()).unwrap();
    assert_eq!(stats["numRecords"], 2);
    assert_eq!(stats["minValues"]["id"], 1);
    assert_eq!(stats["maxValues"]["name"], "a");
    assert_eq!(stats["nullCount"]["name"], 1);
    let null_day = adds
        .iter()
        .find(|a| a["partitionValues"]["day"].is_null())
        .unwrap();
    assert!(
        null_day["path"]
            .as_str()
            .unwrap()
            .starts_with("day=__HIVE_DEFAULT_PARTITION__/")
    );

    // Converting again is refused: it is a table now.
    let e = t.convert_to_delta(&day()).unwrap_err().to_string();
    assert!(e.contains("already a Delta table"), "{e}");
}

#[test]
fn statistics_from_rows_equal_those_from_footers() {
    let rows = batch(&[5, -2, 9], &[Some("m"), None, Some("b")]);
    let mut stats = Vec::new();
    for footer in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        write(&dir.path().join("f.parquet"), &rows, footer);
        Table::open(dir.path().to_str().unwrap())
            .unwrap()
            .convert_to_delta(&[])
            .unwrap();
        stats.push(adds(dir.path())[0]["stats"].as_str().unwrap().to_string());
    }
    assert_eq!(stats[0], stats[1]);
    let s: serde_json::Value = serde_json::from_str(&stats[0]).unwrap();
    assert_eq!(s["minValues"]["id"], -2);
    assert_eq!(s["maxValues"]["score"], 4.5);
}

#[test]
fn convert_refuses_and_names_the_file() {
    // Files of two schemas.
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("a.parquet"),
        &batch(&[1], &[Some("x")]),
        true,
    );
    let other = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("id", DataType::Utf8, true)])),
        vec![Arc::new(StringArray::from(vec!["1"])) as ArrayRef],
    )
    .unwrap();
    write(&dir.path().join("b.parquet"), &other, true);
    let t = Table::open(dir.path().to_str().unwrap()).unwrap();
    let e = t.convert_to_delta(&[]).unwrap_err().to_string();
    assert!(
        e.starts_with("b.parquet: its schema differs from that of a.parquet"),
        "{e}"
    );
    assert!(!dir.path().join("_delta_log").exists());

    // A file that is not Parquet, a file outside the partition directories, a value of the
    // wrong type, an empty directory.
    for (files, partitions, says) in [
        (
            vec!["notes.txt"],
            vec![],
            "notes.txt: not a readable Parquet file",
        ),
        (
            vec!["day=2024-01-01/a.parquet", "b.parquet"],
            day(),
            "b.parquet: the file is not where",
        ),
        (vec!["day=someday/a.parquet"], day(), "not a date"),
        (
            vec!["x=1/a.parquet"],
            vec![],
            "declare the partition columns",
        ),
        (vec![], vec![], "holds no Parquet file"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        for f in &files {
            let p = dir.path().join(f);
            if f.ends_with(".parquet") {
                write(&p, &batch(&[1], &[None]), true);
            } else {
                std::fs::write(p, b"hello").unwrap();
            }
        }
        let t = Table::open(dir.path().to_str().unwrap()).unwrap();
        let e = t.convert_to_delta(&partitions).unwrap_err().to_string();
        assert!(e.contains(says), "{files:?}: {e}");
        assert!(!dir.path().join("_delta_log").exists());
    }
}
