//! CREATE OR REPLACE TABLE (`Table::replace`, SPEC.md §7): a new empty table committed on
//! top of the old one's log; what it keeps of the old table (protocol, column-mapping ids,
//! row tracking, in-commit timestamps, domains but clustering), what it refuses, its
//! conflicts, and creating when there is no table.

use std::collections::HashMap;
use std::sync::Arc;

use alluvium::{ErrorKind, Table, WriteOptions};
use alluvium_txlog::features::upgrade_protocol;
use alluvium_txlog::row_tracking as rt;
use alluvium_txlog::schema::{COLUMN_MAPPING_ID, COLUMN_MAPPING_PHYSICAL_NAME};
use alluvium_txlog::table::TableFeature;
use arrow::array::{ArrayRef, Float64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};

use crate::batches::{id_p_batch, id_p_schema};
use crate::overwrite_schema::{rows_at, table};

/// `name STRING, score DOUBLE`.
fn new_schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("name", DataType::Utf8, true),
        Field::new("score", DataType::Float64, true),
    ]))
}

fn new_batch(rows: &[(&str, f64)]) -> RecordBatch {
    RecordBatch::try_new(
        new_schema(),
        vec![
            Arc::new(StringArray::from(
                rows.iter().map(|r| r.0).collect::<Vec<_>>(),
            )) as ArrayRef,
            Arc::new(Float64Array::from(
                rows.iter().map(|r| r.1).collect::<Vec<_>>(),
            )),
        ],
    )
    .unwrap()
}

fn config(t: &Table) -> HashMap<String, String> {
    t.snapshot().unwrap().metadata().configuration.clone()
}

fn replace(t: &Table, schema: &Schema, partition_by: &[&str], properties: &[(&str, &str)]) {
    let parts: Vec<String> = partition_by.iter().map(|p| p.to_string()).collect();
    t.replace(
        schema,
        &parts,
        properties.iter().copied(),
        &WriteOptions::default(),
    )
    .unwrap();
}

#[test]
fn a_replace_commits_a_new_empty_table_and_keeps_the_history() {
    let (_dir, t) = table(&[("delta.enableChangeDataFeed", "true")]);
    let before = t.snapshot().unwrap();
    let old_rows = rows_at(&t, None);
    let o = t
        .replace(
            &new_schema(),
            &[],
            [("delta.enableDeletionVectors", "true")],
            &WriteOptions::default().with_user_metadata("swap"),
        )
        .unwrap();
    assert_eq!(o.report().unwrap().files_removed, 2);
    let after = t.snapshot().unwrap();
    assert_eq!(after.version(), before.version() + 1);
    assert_eq!(after.num_files(), 0);
    assert!(after.partition_columns().is_empty());
    assert_ne!(after.metadata().id, before.metadata().id, "a new table");
    // The given properties only: change data feed is off.
    assert_eq!(
        config(&t),
        HashMap::from([(
            "delta.enableDeletionVectors".to_string(),
            "true".to_string()
        )])
    );
    // The protocol keeps what the old versions need and adds what the new table needs.
    let p = after.protocol();
    assert!(p.has_reader_feature("deletionVectors"), "{p:?}");
    assert!(p.has_writer_feature("changeDataFeed"), "{p:?}");
    let ci = after.commit_info().unwrap();
    assert_eq!(ci.operation(), Some("CREATE OR REPLACE TABLE"));
    assert_eq!(
        ci.0.get("userMetadata").and_then(|v| v.as_str()),
        Some("swap")
    );
    // The old version still reads with its own schema; the new table takes rows.
    assert_eq!(rows_at(&t, Some(before.version())), old_rows);
    assert!(rows_at(&t, None).is_empty());
    t.append([new_batch(&[("x", 1.5)])], &WriteOptions::default())
        .unwrap();
    assert_eq!(rows_at(&t, None).len(), 1);
}

#[test]
fn a_replace_creates_a_missing_table() {
    let dir = tempfile::tempdir().unwrap();
    let t = Table::open(dir.path().to_str().unwrap()).unwrap();
    replace(&t, &id_p_schema(), &["p"], &[("delta.appendOnly", "true")]);
    let s = t.snapshot().unwrap();
    assert_eq!(s.version(), 0);
    assert_eq!(s.partition_columns(), ["p"]);
    assert_eq!(
        s.commit_info().unwrap().operation(),
        Some("CREATE OR REPLACE TABLE")
    );
}

#[test]
fn column_mapping_ids_continue_above_the_old_maximum() {
    let (_dir, t) = table(&[("delta.columnMapping.mode", "name")]);
    let before = t.snapshot().unwrap();
    let old_max = before.properties().column_mapping_max_id();
    assert!(old_max >= 2);
    let old_physical: Vec<String> = before
        .schema()
        .fields
        .iter()
        .map(|f| f.metadata[COLUMN_MAPPING_PHYSICAL_NAME].to_string())
        .collect();
    replace(
        &t,
        &id_p_schema(),
        &[],
        &[("delta.columnMapping.mode", "name")],
    );
    let after = t.snapshot().unwrap();
    for f in &after.schema().fields {
        let id = f.metadata[COLUMN_MAPPING_ID].as_i64().unwrap();
        assert!(id > old_max, "{} has id {id}, not above {old_max}", f.name);
        let physical = f.metadata[COLUMN_MAPPING_PHYSICAL_NAME].to_string();
        assert!(!old_physical.contains(&physical), "{physical} reused");
    }
    assert_eq!(after.properties().column_mapping_max_id(), old_max + 2);
    // Without mapping the columns are read by name; the protocol keeps the feature.
    replace(&t, &id_p_schema(), &[], &[]);
    let plain = t.snapshot().unwrap();
    assert!(plain.schema().fields[0].metadata.is_empty());
    assert_eq!(plain.protocol().min_reader_version, 2);
    t.append([id_p_batch(&[4], "c")], &WriteOptions::default())
        .unwrap();
    assert_eq!(crate::common::sorted_ids(&t), [4]);
}

#[test]
fn row_ids_continue_above_the_old_high_water_mark() {
    let (_dir, t) = table(&[(rt::ENABLE, "true")]);
    let before = t.snapshot().unwrap();
    let mark = rt::high_water_mark(before.domains()).unwrap().unwrap();
    replace(&t, &id_p_schema(), &[], &[(rt::ENABLE, "true")]);
    let names = |c: &HashMap<String, String>| {
        (
            c.get(rt::MATERIALIZED_ROW_ID).cloned(),
            c.get(rt::MATERIALIZED_ROW_COMMIT_VERSION).cloned(),
        )
    };
    assert_eq!(names(&config(&t)), names(&before.metadata().configuration));
    t.append([id_p_batch(&[9], "z")], &WriteOptions::default())
        .unwrap();
    let adds: Vec<_> = t.snapshot().unwrap().files().map(|f| f.to_add()).collect();
    assert_eq!(adds.len(), 1);
    assert_eq!(adds[0].base_row_id, Some(mark + 1));
}

#[test]
fn in_commit_timestamps_keep_the_version_that_enabled_them() {
    let (_dir, t) = table(&[]);
    // Enabled after creation, as another engine would (alluvium's ALTER does not): the
    // commit loop records the enablement version and time.
    let s = t.snapshot().unwrap();
    let mut txn = alluvium_mvcc::Transaction::new(&crate::mvcc(&s), "SET TBLPROPERTIES");
    let mut md = s.metadata().clone();
    md.configuration
        .insert("delta.enableInCommitTimestamps".into(), "true".into());
    txn.set_protocol(upgrade_protocol(
        s.protocol(),
        &[TableFeature::InCommitTimestamp],
    ));
    txn.set_metadata(md);
    txn.commit().unwrap();
    let enabled = config(&t);
    let at = enabled["delta.inCommitTimestampEnablementVersion"].clone();
    replace(
        &t,
        &new_schema(),
        &[],
        &[("delta.enableInCommitTimestamps", "true")],
    );
    let c = config(&t);
    assert_eq!(c["delta.inCommitTimestampEnablementVersion"], at);
    assert_eq!(
        c["delta.inCommitTimestampEnablementTimestamp"],
        enabled["delta.inCommitTimestampEnablementTimestamp"]
    );
    // Turned off by the new properties, they are gone.
    replace(&t, &new_schema(), &[], &[]);
    assert!(!config(&t).keys().any(|k| k.contains("inCommitTimestamp")));
}

#[test]
fn the_clustering_columns_of_the_old_table_are_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let t = Table::open(dir.path().to_str().unwrap()).unwrap();
    t.create(&id_p_schema(), &[], alluvium::NO_PROPERTIES)
        .unwrap();
    t.cluster_by(&["id"]).unwrap();
    assert_eq!(t.clustering_columns().unwrap(), Some(vec!["id".into()]));
    replace(&t, &new_schema(), &[], &[]);
    assert_eq!(
        t.clustering_columns().unwrap().unwrap_or_default(),
        Vec::<String>::new()
    );
}

#[test]
fn what_it_cannot_honour_is_refused_and_nothing_committed() {
    // An append-only table's files may not be removed.
    let (_dir, t) = table(&[("delta.appendOnly", "true")]);
    let version = t.snapshot().unwrap().version();
    let e = t
        .replace(
            &new_schema(),
            &[],
            alluvium::NO_PROPERTIES,
            &WriteOptions::default(),
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Refused, "{e}");
    // A constraint over a column the new schema lacks.
    let (_d2, u) = table(&[]);
    let e = u
        .replace(
            &new_schema(),
            &[],
            [("delta.constraints.positive", "id > 0")],
            &WriteOptions::default(),
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
    // A partition column the new schema lacks.
    let e = u
        .replace(
            &new_schema(),
            &["p".to_string()],
            alluvium::NO_PROPERTIES,
            &WriteOptions::default(),
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
    assert_eq!(t.snapshot().unwrap().version(), version);
    assert_eq!(u.snapshot().unwrap().schema().fields.len(), 2);
}

#[test]
fn a_concurrent_append_makes_it_conflict() {
    let (_dir, t) = table(&[]);
    let pinned = t.snapshot().unwrap();
    t.append([id_p_batch(&[4], "a")], &WriteOptions::default())
        .unwrap();
    let e = t
        .replace(
            &new_schema(),
            &[],
            alluvium::NO_PROPERTIES,
            &WriteOptions::default().with_read_snapshot(pinned),
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Conflict, "{e}");
    assert_eq!(crate::common::sorted_ids(&t), [1, 2, 3, 4]);
}
