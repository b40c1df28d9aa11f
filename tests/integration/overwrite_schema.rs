//! Overwrite with the data's schema (`Table::overwrite_with_schema`, Delta's
//! `overwriteSchema`, SPEC.md §7): rows, schema and partitioning replaced in one commit,
//! the table's identity and properties kept; fresh column-mapping ids; feature upgrades;
//! what it refuses; its conflicts.

use std::sync::Arc;

use alluvium::{ErrorKind, ScanBuilder, Table, VersionSpec, WriteOptions};
use alluvium_txlog::schema::{COLUMN_MAPPING_ID, COLUMN_MAPPING_PHYSICAL_NAME};
use arrow::array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};

use crate::batches::{id_p_batch, id_p_schema};

/// A table of `id BIGINT, p STRING` partitioned by `p`, with `properties`, holding ids 1..=3
/// in two files (also the fixture of `replace`).
pub(crate) fn table(properties: &[(&str, &str)]) -> (tempfile::TempDir, Table) {
    let dir = tempfile::tempdir().unwrap();
    let t = Table::open(dir.path().to_str().unwrap()).unwrap();
    t.create(
        &id_p_schema(),
        &["p".to_string()],
        properties.iter().copied(),
    )
    .unwrap();
    t.append(
        [id_p_batch(&[1, 2], "a"), id_p_batch(&[3], "b")],
        &WriteOptions::default(),
    )
    .unwrap();
    (dir, t)
}

/// `name STRING, score DOUBLE, bucket STRING`: a column dropped, two added, one reordered.
fn new_schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("name", DataType::Utf8, true),
        Field::new("score", DataType::Float64, true),
        Field::new("bucket", DataType::Utf8, true),
    ]))
}

fn new_batch(rows: &[(&str, f64, &str)]) -> RecordBatch {
    RecordBatch::try_new(
        new_schema(),
        vec![
            Arc::new(StringArray::from(
                rows.iter().map(|r| r.0).collect::<Vec<_>>(),
            )) as ArrayRef,
            Arc::new(Float64Array::from(
                rows.iter().map(|r| r.1).collect::<Vec<_>>(),
            )),
            Arc::new(StringArray::from(
                rows.iter().map(|r| r.2).collect::<Vec<_>>(),
            )),
        ],
    )
    .unwrap()
}

/// The rows of `t` (at `version`, else the latest), in canonical text, sorted.
pub(crate) fn rows_at(t: &Table, version: Option<u64>) -> Vec<String> {
    let s = match version {
        Some(v) => t.snapshot_at(VersionSpec::Version(v)).unwrap(),
        None => t.snapshot().unwrap(),
    };
    let mut out = crate::common::canon_rows(
        &ScanBuilder::new(s)
            .build()
            .unwrap()
            .execute_to_vec()
            .unwrap(),
    );
    out.sort();
    out
}

#[test]
fn rows_schema_and_partitioning_are_replaced_and_the_table_kept() {
    let (_dir, t) = table(&[("delta.logRetentionDuration", "interval 3 days")]);
    let before = t.snapshot().unwrap();
    let old_rows = rows_at(&t, None);
    let o = t
        .overwrite_with_schema(
            &new_schema(),
            [new_batch(&[("x", 1.5, "hot"), ("y", 2.5, "cold")])],
            Some(&["bucket".to_string()]),
            &WriteOptions::default(),
        )
        .unwrap();
    let report = o.report().unwrap();
    assert_eq!(report.files_removed, 2);
    let after = t.snapshot().unwrap();
    let names: Vec<&str> = after
        .schema()
        .fields
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    assert_eq!(names, ["name", "score", "bucket"]);
    assert_eq!(after.partition_columns(), ["bucket"]);
    assert_eq!(after.metadata().id, before.metadata().id, "the same table");
    assert_eq!(
        after
            .metadata()
            .configuration
            .get("delta.logRetentionDuration")
            .map(String::as_str),
        Some("interval 3 days")
    );
    assert_eq!(rows_at(&t, None).len(), 2);
    assert!(after.files().all(|f| f.path().starts_with("bucket=")));
    let ci = after.commit_info().unwrap();
    assert_eq!(ci.operation(), Some("WRITE"));
    let params = ci.operation_parameters().unwrap();
    assert_eq!(params["mode"], "Overwrite");
    assert_eq!(params["partitionBy"], r#"["bucket"]"#);
    // The old version still reads with its own schema.
    assert_eq!(rows_at(&t, Some(before.version())), old_rows);
    // Without partition_by the table's partitioning is kept, and must be in the schema.
    let e = t
        .overwrite_with_schema(
            &id_p_schema(),
            [id_p_batch(&[9], "z")],
            None,
            &WriteOptions::default(),
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
    assert!(e.to_string().contains("bucket"), "{e}");
    t.overwrite_with_schema(
        &id_p_schema(),
        [id_p_batch(&[9], "z")],
        Some(&["p".to_string()]),
        &WriteOptions::default(),
    )
    .unwrap();
    assert_eq!(t.snapshot().unwrap().partition_columns(), ["p"]);
    assert_eq!(rows_at(&t, None).len(), 1);
}

#[test]
fn column_mapped_tables_get_fresh_ids_and_physical_names() {
    let (_dir, t) = table(&[("delta.columnMapping.mode", "name")]);
    let before = t.snapshot().unwrap();
    let old_max: i64 = before.metadata().configuration["delta.columnMapping.maxColumnId"]
        .parse()
        .unwrap();
    let old_physical: Vec<String> = before
        .schema()
        .fields
        .iter()
        .map(|f| {
            f.metadata[COLUMN_MAPPING_PHYSICAL_NAME]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    // The same column names as before: their old files must not be read as the new ones.
    let same_names = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("p", DataType::Utf8, true),
    ]));
    t.overwrite_with_schema(
        &same_names,
        [id_p_batch(&[7, 8], "c")],
        None,
        &WriteOptions::default(),
    )
    .unwrap();
    let after = t.snapshot().unwrap();
    for f in &after.schema().fields {
        let id = f.metadata[COLUMN_MAPPING_ID].as_i64().unwrap();
        assert!(id > old_max, "{} has id {id}, not above {old_max}", f.name);
        let physical = f.metadata[COLUMN_MAPPING_PHYSICAL_NAME].as_str().unwrap();
        assert!(
            !old_physical.iter().any(|o| o == physical),
            "{physical} reused"
        );
    }
    let new_max: i64 = after.metadata().configuration["delta.columnMapping.maxColumnId"]
        .parse()
        .unwrap();
    assert_eq!(new_max, old_max + 2);
    assert_eq!(rows_at(&t, None).len(), 2);
    assert_eq!(crate::common::sorted_ids(&t), [7, 8]);
}

#[test]
fn a_type_that_needs_a_feature_upgrades_the_protocol() {
    let (_dir, t) = table(&[]);
    assert!(
        !t.snapshot()
            .unwrap()
            .protocol()
            .has_reader_feature("timestampNtz")
    );
    let ntz = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("at", DataType::Timestamp(TimeUnit::Microsecond, None), true),
    ]));
    let batch = RecordBatch::try_new(
        ntz.clone(),
        vec![
            Arc::new(Int64Array::from(vec![1])) as ArrayRef,
            Arc::new(arrow::array::TimestampMicrosecondArray::from(vec![
                1_700_000_000_000_000,
            ])),
        ],
    )
    .unwrap();
    t.overwrite_with_schema(&ntz, [batch], Some(&[]), &WriteOptions::default())
        .unwrap();
    let s = t.snapshot().unwrap();
    assert!(s.protocol().has_reader_feature("timestampNtz"));
    assert!(s.partition_columns().is_empty());
    assert_eq!(rows_at(&t, None).len(), 1);
}

#[test]
fn what_it_cannot_keep_consistent_is_refused_before_anything_is_written() {
    let (_dir, t) = table(&[]);
    t.add_constraint("positive", "id > 0").unwrap();
    let version = t.snapshot().unwrap().version();
    // The constraint names a column the new schema drops.
    let e = t
        .overwrite_with_schema(
            &new_schema(),
            [new_batch(&[("x", 1.0, "hot")])],
            Some(&[]),
            &WriteOptions::default(),
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
    assert!(e.to_string().contains("unknown column `id`"), "{e}");
    // The new rows violate it.
    let e = t
        .overwrite_with_schema(
            &id_p_schema(),
            [id_p_batch(&[-1], "a")],
            None,
            &WriteOptions::default(),
        )
        .unwrap_err();
    assert!(e.to_string().contains("positive"), "{e}");
    // A constraint over a column the new partitioning makes a partition column holds too.
    let by_id = Some(&["id".to_string()][..]);
    let e = t
        .overwrite_with_schema(
            &id_p_schema(),
            [id_p_batch(&[-1], "a")],
            by_id,
            &WriteOptions::default(),
        )
        .unwrap_err();
    assert!(e.to_string().contains("positive"), "{e}");
    assert_eq!(t.snapshot().unwrap().version(), version);
    // A partition column that is not a primitive column of the new schema.
    let e = t
        .overwrite_with_schema(
            &new_schema(),
            [new_batch(&[("x", 1.0, "hot")])],
            Some(&["nope".to_string()]),
            &WriteOptions::default(),
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
    assert_eq!(t.snapshot().unwrap().version(), version);
    t.overwrite_with_schema(
        &id_p_schema(),
        [id_p_batch(&[5], "a")],
        by_id,
        &WriteOptions::default(),
    )
    .unwrap();
    assert_eq!(t.snapshot().unwrap().partition_columns(), ["id"]);
    assert_eq!(rows_at(&t, None).len(), 1);
    // A clustered table.
    let (_d2, c) = table(&[]);
    let flat = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("p", DataType::Utf8, true),
    ]));
    c.overwrite_with_schema(
        &flat,
        [id_p_batch(&[1], "a")],
        Some(&[]),
        &WriteOptions::default(),
    )
    .unwrap();
    c.cluster_by(&["id"]).unwrap();
    let e = c
        .overwrite_with_schema(
            &flat,
            [id_p_batch(&[2], "a")],
            None,
            &WriteOptions::default(),
        )
        .unwrap_err();
    assert!(e.to_string().contains("clustered"), "{e}");
}

#[test]
fn a_concurrent_append_makes_it_conflict() {
    let (_dir, t) = table(&[]);
    let pinned = t.snapshot().unwrap();
    t.append([id_p_batch(&[4], "a")], &WriteOptions::default())
        .unwrap();
    let e = t
        .overwrite_with_schema(
            &new_schema(),
            [new_batch(&[("x", 1.0, "hot")])],
            Some(&[]),
            &WriteOptions::default().with_read_snapshot(pinned),
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Conflict, "{e}");
    assert_eq!(t.snapshot().unwrap().schema().fields.len(), 2);
}
