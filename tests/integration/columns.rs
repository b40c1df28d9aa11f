//! Schema changes of existing tables (SPEC.md §33): ADD COLUMN, RENAME COLUMN and DROP
//! COLUMN through column mapping, and type widening; what readers see after each, the
//! protocol and metadata each commits, and what each refuses.

use std::collections::HashMap;
use std::sync::Arc;

use alluvium::{
    DataType as DeltaType, PrimitiveType, ScanBuilder, StructField, Table, WriteOptions,
    parse_column_definition,
};
use arrow::array::{ArrayRef, Date32Array, Int32Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};

use crate::common::canon_rows;

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int32, true),
        Field::new("name", DataType::Utf8, true),
        Field::new("part", DataType::Utf8, true),
    ]))
}

fn batch(ids: &[i32], part: &str) -> RecordBatch {
    RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int32Array::from(ids.to_vec())) as ArrayRef,
            Arc::new(StringArray::from(
                ids.iter().map(|i| format!("n{i}")).collect::<Vec<_>>(),
            )),
            Arc::new(StringArray::from(vec![part; ids.len()])),
        ],
    )
    .unwrap()
}

/// A table `(id int, name string, part string)` partitioned by `part` with two files.
fn table(properties: &[(&str, &str)]) -> (tempfile::TempDir, Table) {
    let dir = tempfile::tempdir().unwrap();
    let t = Table::open(dir.path().to_str().unwrap()).unwrap();
    let props: HashMap<String, String> = properties
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    t.create(&schema(), &["part".to_string()], &props).unwrap();
    t.append([batch(&[1, 2], "a")], &WriteOptions::default())
        .unwrap();
    t.append([batch(&[3], "b")], &WriteOptions::default())
        .unwrap();
    (dir, t)
}

/// The column names and the sorted rows of a scan (optionally filtered).
fn read(t: &Table, filter: Option<&str>) -> (Vec<String>, Vec<String>) {
    let mut b = ScanBuilder::new(t.snapshot().unwrap());
    if let Some(f) = filter {
        b = b.with_filter_str(f).unwrap();
    }
    let scan = b.build().unwrap();
    let names = scan
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    (names, canon_rows(&scan.execute_to_vec().unwrap()))
}

fn last_commit(t: &Table) -> serde_json::Value {
    let entry = t.history(Some(1)).unwrap().remove(0);
    serde_json::Value::Object(entry.commit_info.unwrap().0)
}

fn field(t: &alluvium::Snapshot, name: &str) -> StructField {
    t.schema().field(name).unwrap().clone()
}

#[test]
fn add_column_reads_null_in_old_rows_and_takes_new_values() {
    let (_d, t) = table(&[]);
    let f = parse_column_definition("score bigint COMMENT 'points'").unwrap();
    t.add_column(f).unwrap();
    let ci = last_commit(&t);
    assert_eq!(ci["operation"], "ADD COLUMNS");
    let columns: serde_json::Value =
        serde_json::from_str(ci["operationParameters"]["columns"].as_str().unwrap()).unwrap();
    assert_eq!(columns[0]["column"]["name"], "score");
    assert_eq!(columns[0]["column"]["type"], "long");
    let s = t.snapshot().unwrap();
    assert_eq!(field(&s, "score").metadata["comment"], "points");
    // The protocol is untouched: a long column needs no feature.
    assert_eq!(s.protocol().min_writer_version, 2);
    let (names, rows) = read(&t, None);
    assert_eq!(names, ["id", "name", "part", "score"]);
    assert!(rows.iter().all(|r| r.ends_with("| ∅")), "{rows:?}");

    let wide = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int32, true),
        Field::new("name", DataType::Utf8, true),
        Field::new("part", DataType::Utf8, true),
        Field::new("score", DataType::Int64, true),
    ]));
    let b = RecordBatch::try_new(
        wide,
        vec![
            Arc::new(Int32Array::from(vec![4])) as ArrayRef,
            Arc::new(StringArray::from(vec!["n4"])),
            Arc::new(StringArray::from(vec!["a"])),
            Arc::new(arrow::array::Int64Array::from(vec![40])),
        ],
    )
    .unwrap();
    t.append([b], &WriteOptions::default()).unwrap();
    assert_eq!(read(&t, Some("score = 40")).1.len(), 1);
    assert_eq!(read(&t, Some("score IS NULL")).1.len(), 3);
}

#[test]
fn add_column_refuses_what_delta_refuses() {
    let (_d, t) = table(&[]);
    for (def, says) in [
        ("ID long", "already has a column `id`"),
        ("extra int NOT NULL", "the table has rows"),
    ] {
        let e = t
            .add_column(parse_column_definition(def).unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains(says), "{def}: {e}");
    }
    // On an empty table a NOT NULL column is fine, and enforced by later writes.
    let dir = tempfile::tempdir().unwrap();
    let empty = Table::open(dir.path().to_str().unwrap()).unwrap();
    empty
        .create(&schema(), &[], alluvium::NO_PROPERTIES)
        .unwrap();
    empty
        .add_column(parse_column_definition("extra int NOT NULL").unwrap())
        .unwrap();
    let e = empty
        .append([batch(&[1], "a")], &WriteOptions::default())
        .unwrap_err();
    assert!(e.to_string().contains("extra"), "{e}");
}

#[test]
fn add_columns_adds_several_in_one_commit_or_none() {
    let (_d, t) = table(&[("delta.columnMapping.mode", "name")]);
    let before = t.snapshot().unwrap();
    let max: i64 = before.metadata().configuration["delta.columnMapping.maxColumnId"]
        .parse()
        .unwrap();
    let defs = |d: &[&str]| -> Vec<StructField> {
        d.iter()
            .map(|x| parse_column_definition(x).unwrap())
            .collect()
    };
    // A name given twice (case-insensitively), or one the table has: refused whole.
    for (cols, says) in [
        (defs(&["a string", "A int"]), "already has a column `a`"),
        (
            defs(&["b string", "name string"]),
            "already has a column `name`",
        ),
    ] {
        let e = t
            .add_columns(cols, &WriteOptions::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains(says), "{e}");
    }
    assert!(t.add_columns(Vec::new(), &WriteOptions::default()).is_err());
    assert_eq!(t.snapshot().unwrap().version(), before.version());

    let options =
        WriteOptions::default().with_app_transaction(alluvium::AppTransaction::new("migrate", 2));
    let done = t
        .add_columns(defs(&["a string", "b double"]), &options)
        .unwrap();
    let s = t.snapshot().unwrap();
    assert_eq!(done.report().map(|r| r.version), Some(before.version() + 1));
    let names: Vec<&str> = s.schema().fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["id", "name", "part", "a", "b"]);
    // Each its own id and physical name; the maximum id raised past both.
    let (a, b) = (field(&s, "a"), field(&s, "b"));
    assert_eq!(
        (a.column_id(), b.column_id()),
        (Some(max + 1), Some(max + 2))
    );
    assert_ne!(a.physical_name(), b.physical_name());
    assert_eq!(
        s.metadata().configuration["delta.columnMapping.maxColumnId"],
        (max + 2).to_string()
    );
    let ci = s.commit_info().unwrap();
    let columns: serde_json::Value = serde_json::from_str(
        ci.operation_parameters().unwrap()["columns"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(columns.as_array().map(Vec::len), Some(2), "{columns}");
    // A retried job (the same columns, the same application version): skipped, not
    // refused for columns the first run added.
    let again = t
        .add_columns(defs(&["a string", "b double"]), &options)
        .unwrap();
    assert!(again.report().is_none());
    assert_eq!(t.snapshot().unwrap().version(), s.version());
    // Old rows read both as NULL.
    let rows = canon_rows(
        &ScanBuilder::new(t.snapshot().unwrap())
            .with_columns(["a", "b"])
            .build()
            .unwrap()
            .execute_to_vec()
            .unwrap(),
    );
    assert!(
        !rows.is_empty() && rows.iter().all(|r| r == "∅ | ∅"),
        "{rows:?}"
    );
}

#[test]
fn add_column_on_a_mapped_table_gets_a_fresh_id_and_physical_name() {
    let (_d, t) = table(&[("delta.columnMapping.mode", "name")]);
    let before = t.snapshot().unwrap();
    let max: i64 = before.metadata().configuration["delta.columnMapping.maxColumnId"]
        .parse()
        .unwrap();
    t.add_column(StructField::new(
        "at",
        DeltaType::Primitive(PrimitiveType::TimestampNtz),
        true,
    ))
    .unwrap();
    let s = t.snapshot().unwrap();
    let f = field(&s, "at");
    assert_eq!(f.column_id(), Some(max + 1));
    assert!(f.physical_name().unwrap().starts_with("col-"));
    assert_eq!(
        s.metadata().configuration["delta.columnMapping.maxColumnId"],
        (max + 1).to_string()
    );
    // timestamp_ntz needs its feature: the protocol moved to table features.
    assert!(
        s.protocol()
            .reader_features
            .as_ref()
            .unwrap()
            .contains(&"timestampNtz".to_string())
    );
    assert_eq!(read(&t, None).1.len(), 3);
}

#[test]
fn rename_turns_on_name_mapping_and_keeps_the_data() {
    let (_d, t) = table(&[]);
    let (_, before) = read(&t, None);
    t.rename_column("name", "full name").unwrap();
    let s = t.snapshot().unwrap();
    // PROTOCOL.md "Writer Requirements for Column Mapping": a legacy table goes to 2/5.
    assert_eq!(
        (
            s.protocol().min_reader_version,
            s.protocol().min_writer_version
        ),
        (2, 5)
    );
    assert_eq!(
        s.metadata().configuration["delta.columnMapping.mode"],
        "name"
    );
    let f = field(&s, "full name");
    // The data files still store the column under its old name.
    assert_eq!(f.physical_name(), Some("name"));
    assert!(f.column_id().is_some());
    let ci = last_commit(&t);
    assert_eq!(ci["operation"], "RENAME COLUMN");
    assert_eq!(ci["operationParameters"]["oldColumnPath"], "name");
    assert_eq!(ci["operationParameters"]["newColumnPath"], "full name");
    let (names, after) = read(&t, None);
    assert_eq!(names, ["id", "full name", "part"]);
    assert_eq!(after, before);
    assert_eq!(read(&t, Some("`full name` = 'n3'")).1.len(), 1);

    // A partition column is renamed in partitionColumns too.
    t.rename_column("PART", "region").unwrap();
    let s = t.snapshot().unwrap();
    assert_eq!(s.partition_columns(), ["region"]);
    assert_eq!(read(&t, Some("region = 'b'")).1.len(), 1);
    t.append([batch(&[9], "c")], &WriteOptions::default())
        .unwrap_err();
    // Writes use the new names.
    let renamed = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int32, true),
        Field::new("full name", DataType::Utf8, true),
        Field::new("region", DataType::Utf8, true),
    ]));
    let b = RecordBatch::try_new(
        renamed,
        vec![
            Arc::new(Int32Array::from(vec![9])) as ArrayRef,
            Arc::new(StringArray::from(vec!["n9"])),
            Arc::new(StringArray::from(vec!["c"])),
        ],
    )
    .unwrap();
    t.append([b], &WriteOptions::default()).unwrap();
    assert_eq!(read(&t, None).1.len(), 4);
}

#[test]
fn rename_on_a_table_features_protocol_lists_column_mapping_in_both() {
    let (_d, t) = table(&[("delta.enableDeletionVectors", "true")]);
    t.rename_column("id", "key").unwrap();
    let p = t.snapshot().unwrap().protocol().clone();
    assert_eq!((p.min_reader_version, p.min_writer_version), (3, 7));
    assert!(p.reader_features.unwrap().contains(&"columnMapping".into()));
    assert!(p.writer_features.unwrap().contains(&"columnMapping".into()));
}

#[test]
fn drop_hides_the_column_and_a_new_column_of_its_name_starts_empty() {
    let (_d, t) = table(&[]);
    t.drop_column("name").unwrap();
    let ci = last_commit(&t);
    assert_eq!(ci["operation"], "DROP COLUMNS");
    assert_eq!(ci["operationParameters"]["columns"], "[\"name\"]");
    let (names, rows) = read(&t, None);
    assert_eq!(names, ["id", "part"]);
    assert_eq!(rows.len(), 3);
    // PROTOCOL.md "Column Mapping": a physical name is unique across the table's history,
    // so a new column called `name` does not read the dropped column's values.
    t.add_column(parse_column_definition("name string").unwrap())
        .unwrap();
    let s = t.snapshot().unwrap();
    assert_ne!(field(&s, "name").physical_name(), Some("name"));
    let (_, rows) = read(&t, Some("name IS NOT NULL"));
    assert!(rows.is_empty(), "{rows:?}");
}

#[test]
fn drop_refuses_partition_clustering_last_and_referenced_columns() {
    let (_d, t) = table(&[]);
    t.add_constraint("positive", "id > 0").unwrap();
    for (column, says) in [
        ("part", "partition columns cannot be dropped"),
        ("id", "CHECK constraint positive (id > 0)"),
        ("nope", "no column `nope`"),
    ] {
        let e = t.drop_column(column).unwrap_err().to_string();
        assert!(e.contains(says), "{column}: {e}");
    }
    let e = t.rename_column("id", "key").unwrap_err().to_string();
    assert!(e.contains("cannot rename column `id`"), "{e}");
    t.drop_column("name").unwrap();
    t.drop_constraint("positive").unwrap();
    let e = t.drop_column("id").unwrap_err().to_string();
    assert!(e.contains("last data column"), "{e}");
    // Nothing refused was committed: create, 2 appends, constraint, drop, drop constraint.
    assert_eq!(t.snapshot().unwrap().version(), 5);
}

#[test]
fn widening_reads_old_files_as_the_new_type_and_records_the_change() {
    let (_d, t) = table(&[]);
    t.change_column_type("id", PrimitiveType::Long).unwrap();
    let s = t.snapshot().unwrap();
    let p = s.protocol();
    assert_eq!((p.min_reader_version, p.min_writer_version), (3, 7));
    for list in [&p.reader_features, &p.writer_features] {
        assert!(list.as_ref().unwrap().contains(&"typeWidening".into()));
    }
    assert_eq!(
        s.metadata().configuration["delta.enableTypeWidening"],
        "true"
    );
    assert_eq!(
        field(&s, "id").metadata["delta.typeChanges"],
        serde_json::json!([{"fromType": "integer", "toType": "long"}])
    );
    let ci = last_commit(&t);
    assert_eq!(ci["operation"], "CHANGE COLUMN");
    let scan = ScanBuilder::new(s).build().unwrap();
    assert_eq!(scan.schema().field(0).data_type(), &DataType::Int64);
    // Data skipping over the old files' (integer) statistics still finds the rows.
    assert_eq!(read(&t, Some("id = 3")).1.len(), 1);
    assert_eq!(read(&t, Some("id > 1")).1.len(), 2);
    // A second widening keeps the first in the history.
    t.change_column_type("id", PrimitiveType::Decimal(22, 2))
        .unwrap();
    let s = t.snapshot().unwrap();
    assert_eq!(
        field(&s, "id").metadata["delta.typeChanges"],
        serde_json::json!([
            {"fromType": "integer", "toType": "long"},
            {"fromType": "long", "toType": "decimal(22,2)"}
        ])
    );
    assert_eq!(read(&t, Some("id = 2")).1.len(), 1);
}

#[test]
fn widening_refuses_unsupported_changes() {
    let dir = tempfile::tempdir().unwrap();
    let t = Table::open(dir.path().to_str().unwrap()).unwrap();
    let s = Arc::new(Schema::new(vec![
        Field::new("d", DataType::Date32, true),
        Field::new("n", DataType::Int32, true),
    ]));
    t.create(&s, &["d".to_string()], alluvium::NO_PROPERTIES)
        .unwrap();
    let b = RecordBatch::try_new(
        s,
        vec![
            Arc::new(Date32Array::from(vec![19_000])) as ArrayRef,
            Arc::new(Int32Array::from(vec![1])),
        ],
    )
    .unwrap();
    t.append([b], &WriteOptions::default()).unwrap();
    for (column, to, says) in [
        ("n", PrimitiveType::Short, "type widening allows"),
        ("n", PrimitiveType::String, "type widening allows"),
        ("n", PrimitiveType::Integer, "already of type integer"),
        (
            "d",
            PrimitiveType::TimestampNtz,
            "partition values are dates",
        ),
    ] {
        let e = t.change_column_type(column, to).unwrap_err().to_string();
        assert!(e.contains(says), "{column} -> {to:?}: {e}");
    }
    t.set_properties([("delta.enableTypeWidening", "false")], &[])
        .unwrap();
    let e = t
        .change_column_type("n", PrimitiveType::Long)
        .unwrap_err()
        .to_string();
    assert!(e.contains("delta.enableTypeWidening=false"), "{e}");
}

#[test]
fn set_column_metadata_keeps_other_keys_and_refuses_reserved_ones() {
    let (_d, t) = table(&[("delta.columnMapping.mode", "name")]);
    let before = t.snapshot().unwrap();
    let id_before = field(&before, "name").column_id();
    // Found case-insensitively; refused whole for a reserved key or an unknown column.
    for (column, key, says) in [
        ("name", "delta.columnMapping.id", "reserved"),
        ("name", "current_default", "reserved"),
        ("nope", "comment", "no column `nope`"),
    ] {
        let e = t
            .set_column_metadata(column, [(key, "7")], &WriteOptions::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains(says), "{e}");
    }
    let none: [(&str, &str); 0] = [];
    assert!(
        t.set_column_metadata("name", none, &WriteOptions::default())
            .is_err()
    );
    assert_eq!(t.snapshot().unwrap().version(), before.version());

    let options =
        WriteOptions::default().with_app_transaction(alluvium::AppTransaction::new("doc", 1));
    let done = t
        .set_column_metadata("NAME", [("comment", "who"), ("owner", "sales")], &options)
        .unwrap();
    let s = t.snapshot().unwrap();
    assert_eq!(done.report().map(|r| r.version), Some(before.version() + 1));
    let f = field(&s, "name");
    assert_eq!(f.metadata["comment"], "who");
    assert_eq!(f.metadata["owner"], "sales");
    // The column mapping keys are untouched: the column still reads its data.
    assert_eq!(f.column_id(), id_before);
    let ci = s.commit_info().unwrap();
    assert_eq!(ci.operation(), Some("UPDATE FIELD METADATA"));
    // A second change replaces one key and keeps the other.
    t.set_column_metadata(
        "name",
        [("comment", "who bought")],
        &WriteOptions::default(),
    )
    .unwrap();
    let f = field(&t.snapshot().unwrap(), "name");
    assert_eq!(
        (&f.metadata["comment"], &f.metadata["owner"]),
        (&"who bought".into(), &"sales".into())
    );
    // A retried job with the same application version: skipped.
    let again = t
        .set_column_metadata("name", [("comment", "who")], &options)
        .unwrap();
    assert!(again.report().is_none());
    let rows = canon_rows(
        &ScanBuilder::new(t.snapshot().unwrap())
            .with_columns(["name"])
            .build()
            .unwrap()
            .execute_to_vec()
            .unwrap(),
    );
    assert!(rows.iter().all(|r| r.starts_with('n')), "{rows:?}");
}

#[test]
fn table_name_and_description_are_set_in_one_commit_each() {
    let (_d, t) = table(&[]);
    let before = t.snapshot().unwrap();
    let fields = std::collections::BTreeMap::from([("job".to_string(), "nightly".into())]);
    let options = WriteOptions::default()
        .with_app_transaction(alluvium::AppTransaction::new("rename", 1))
        .with_commit_info(fields);
    t.set_table_name("orders", &options).unwrap();
    t.set_table_description("one row per order", &WriteOptions::default())
        .unwrap();
    let s = t.snapshot().unwrap();
    assert_eq!(s.version(), before.version() + 2);
    assert_eq!(s.metadata().name.as_deref(), Some("orders"));
    assert_eq!(
        s.metadata().description.as_deref(),
        Some("one row per order")
    );
    // Nothing else of the metadata changed.
    assert_eq!(s.metadata().id, before.metadata().id);
    assert_eq!(s.schema(), before.schema());
    assert_eq!(s.metadata().configuration, before.metadata().configuration);
    let named = t
        .snapshot_at(alluvium::VersionSpec::Version(before.version() + 1))
        .unwrap();
    let ci = named.commit_info().unwrap();
    assert_eq!(ci.operation(), Some("UPDATE TABLE METADATA"));
    assert_eq!(
        ci.operation_parameters().unwrap()["metadataUpdate"],
        r#"{"name":"orders"}"#
    );
    // A retried job: skipped, the later description kept.
    assert!(
        t.set_table_name("orders", &options)
            .unwrap()
            .report()
            .is_none()
    );
    assert_eq!(t.snapshot().unwrap().version(), s.version());
}
