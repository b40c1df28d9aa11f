//! Writing the change data feed (SPEC.md "Change data feed (writing)"): on a table with
//! `delta.enableChangeDataFeed=true`, each operation in copy-on-write and in
//! deletion-vector mode, partitioned or not, writes exactly the cdc rows (or none) the
//! protocol and Delta Spark's readers expect; the cdc files' layout and actions; the
//! reserved column names. The cdc Parquet files are read directly here, independently of
//! the change-feed reader.

use std::collections::HashMap;
use std::sync::Arc;

use alluvium::{ErrorKind, OptimizeOptions, Table, WriteOptions};
use alluvium_storage::{Fault, FaultyStore, InMemoryStore, StorePath, StoreRef};
use alluvium_txlog::actions::{Action, Cdc};
use alluvium_txlog::commit::decode_commit;
use alluvium_txlog::log_path::commit_path;
use arrow::array::{Array, ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::dml_common::*;

/// One change row: the table row and its `_change_type`.
type Change = (Row, String);

fn cdf_props(dv: bool) -> HashMap<String, String> {
    let mut p = HashMap::from([("delta.enableChangeDataFeed".to_string(), "true".to_string())]);
    if dv {
        p.insert(
            "delta.enableDeletionVectors".to_string(),
            "true".to_string(),
        );
    }
    p
}

/// A CDF table of the flavour: 3 files of 10 rows (ids 0..30).
fn cdf_table(f: Flavour) -> (Table, Vec<Row>) {
    let t = Table::in_memory();
    let parts: Vec<String> = if f.partitioned {
        vec!["k".into()]
    } else {
        vec![]
    };
    t.create(&schema(), &parts, &cdf_props(f.dv)).unwrap();
    let mut all = Vec::new();
    for i in 0..3 {
        let rows: Vec<Row> = (i * 10..(i + 1) * 10).map(row).collect();
        t.append([batch(&rows)], &WriteOptions::default()).unwrap();
        all.extend(rows);
    }
    all.sort();
    (t, all)
}

fn actions(t: &Table, version: u64) -> Vec<Action> {
    let p = commit_path(version);
    decode_commit(p.as_str(), &t.store().get(&p).unwrap()).unwrap()
}

fn latest(t: &Table) -> u64 {
    t.snapshot().unwrap().version()
}

fn cdc_actions(t: &Table, version: u64) -> Vec<Cdc> {
    actions(t, version)
        .into_iter()
        .filter_map(|a| match a {
            Action::Cdc(c) => Some(c),
            _ => None,
        })
        .collect()
}

fn read_parquet(t: &Table, path: &str) -> Vec<RecordBatch> {
    let key = alluvium_txlog::path::percent_decode(path).unwrap();
    let bytes = t.store().get(&StorePath::parse(key).unwrap()).unwrap();
    ParquetRecordBatchReaderBuilder::try_new(bytes)
        .unwrap()
        .build()
        .unwrap()
        .map(|b| b.unwrap())
        .collect()
}

/// The change rows of `version`'s cdc files, sorted (the partition column `k` from the
/// action's partition values when the file does not hold it).
fn cdc_rows(t: &Table, version: u64) -> Vec<Change> {
    let mut out = Vec::new();
    for c in cdc_actions(t, version) {
        for b in read_parquet(t, &c.path) {
            let col = |n: &str| b.column_by_name(n).cloned();
            let id = col("id").unwrap();
            let id = id.as_any().downcast_ref::<Int64Array>().unwrap();
            let v = col("v").unwrap();
            let v = v.as_any().downcast_ref::<Int64Array>().unwrap();
            let ct = col("_change_type").unwrap();
            let ct = ct.as_any().downcast_ref::<StringArray>().unwrap();
            let k = col("k");
            for i in 0..b.num_rows() {
                let kv = match &k {
                    Some(k) => {
                        let k = k.as_any().downcast_ref::<StringArray>().unwrap();
                        k.is_valid(i).then(|| k.value(i).to_string())
                    }
                    None => c.partition_values.get("k").flatten().map(str::to_string),
                };
                out.push((
                    (id.value(i), kv, v.is_valid(i).then(|| v.value(i))),
                    ct.value(i).to_string(),
                ));
            }
        }
    }
    out.sort();
    out
}

fn changes(rows: impl IntoIterator<Item = Row>, kind: &str) -> Vec<Change> {
    rows.into_iter().map(|r| (r, kind.to_string())).collect()
}

fn sorted(mut v: Vec<Change>) -> Vec<Change> {
    v.sort();
    v
}

/// Every cdc action is well formed (C1): under `_change_data/` (in the partition's
/// directory), `dataChange=false`, the file's size, partition values like an add's.
fn check_cdc_actions(t: &Table, version: u64, partitioned: bool) {
    for c in cdc_actions(t, version) {
        assert!(c.path.starts_with("_change_data/"), "{}", c.path);
        assert!(!c.data_change, "{}", c.path);
        let key = alluvium_txlog::path::percent_decode(&c.path).unwrap();
        let size = t
            .store()
            .get(&StorePath::parse(key).unwrap())
            .unwrap()
            .len();
        assert_eq!(size as i64, c.size, "{}", c.path);
        if partitioned {
            let k = c.partition_values.get("k").flatten().unwrap();
            assert!(
                c.path.starts_with(&format!("_change_data/k={k}/cdc-")),
                "{}",
                c.path
            );
            // The partition column lives in the path and the action only.
            for b in read_parquet(t, &c.path) {
                assert!(b.column_by_name("k").is_none(), "{}", c.path);
            }
        } else {
            assert!(c.partition_values.is_empty());
            assert!(c.path.starts_with("_change_data/cdc-"), "{}", c.path);
        }
    }
}

#[test]
fn update_records_pre_and_post_images_in_both_modes() {
    for f in FLAVOURS {
        let (t, model) = cdf_table(f);
        let done = t
            .update_str("v = v + 1", Some("id % 4 = 0"), &WriteOptions::default())
            .unwrap();
        let v = latest(&t);
        let pre: Vec<Row> = model.iter().filter(|r| r.0 % 4 == 0).cloned().collect();
        let post: Vec<Row> = pre
            .iter()
            .map(|r| (r.0, r.1.clone(), r.2.map(|x| x + 1)))
            .collect();
        let mut expected = changes(pre, "update_preimage");
        expected.extend(changes(post, "update_postimage"));
        assert_eq!(cdc_rows(&t, v), sorted(expected), "{f:?}");
        check_cdc_actions(&t, v, f.partitioned);
        assert_eq!(
            done.metric("numAddedChangeFiles"),
            Some(cdc_actions(&t, v).len() as u64),
            "{f:?}"
        );
        assert_eq!(has_dv(&t), f.dv, "{f:?}");
    }
}

#[test]
fn copy_on_write_delete_records_every_deleted_row_once_a_file_is_rewritten_in_part() {
    for partitioned in [false, true] {
        let f = Flavour {
            dv: false,
            partitioned,
        };
        // Part of the first file: only its matching rows are changes.
        let (t, model) = cdf_table(f);
        t.delete_str("id < 5", &WriteOptions::default()).unwrap();
        let v = latest(&t);
        let gone: Vec<Row> = model.iter().filter(|r| r.0 < 5).cloned().collect();
        assert_eq!(cdc_rows(&t, v), changes(gone, "delete"), "{f:?}");
        check_cdc_actions(&t, v, partitioned);
        // The first file whole (proven by its statistics) and part of the second: the
        // commit has cdc files, so they hold the whole file's rows too.
        let (t, model) = cdf_table(f);
        t.delete_str("id < 15", &WriteOptions::default()).unwrap();
        let v = latest(&t);
        let gone: Vec<Row> = model.iter().filter(|r| r.0 < 15).cloned().collect();
        assert_eq!(cdc_rows(&t, v), changes(gone, "delete"), "{f:?}");
        assert_eq!(
            rows(&t),
            model
                .iter()
                .filter(|r| r.0 >= 15)
                .cloned()
                .collect::<Vec<_>>()
        );
    }
}

#[test]
fn deletes_that_remove_whole_files_or_use_deletion_vectors_write_no_cdc() {
    // Whole files only (statistics prove every row matches): removes alone, which readers
    // turn into `delete` rows.
    let (t, _) = cdf_table(FLAVOURS[0]);
    t.delete_str("id < 10", &WriteOptions::default()).unwrap();
    let v = latest(&t);
    assert!(cdc_actions(&t, v).is_empty());
    assert!(
        actions(&t, v)
            .iter()
            .any(|a| matches!(a, Action::Remove(r) if r.data_change))
    );
    // A partition-only predicate (Delta Spark's metadata-only DELETE).
    let (t, _) = cdf_table(FLAVOURS[2]);
    t.delete_str("k = 'a'", &WriteOptions::default()).unwrap();
    assert!(cdc_actions(&t, latest(&t)).is_empty());
    // Deletion vectors: readers derive the deleted rows from the DV difference (Delta
    // Spark's DV DELETE writes no cdc either).
    for f in [FLAVOURS[1], FLAVOURS[3]] {
        let (t, model) = cdf_table(f);
        t.delete_str("id % 2 = 1 AND id < 20", &WriteOptions::default())
            .unwrap();
        assert!(cdc_actions(&t, latest(&t)).is_empty(), "{f:?}");
        assert!(has_dv(&t), "{f:?}");
        assert_eq!(
            rows(&t),
            model
                .iter()
                .filter(|r| !(r.0 % 2 == 1 && r.0 < 20))
                .cloned()
                .collect::<Vec<_>>()
        );
    }
}

#[test]
fn merge_records_updates_deletes_and_inserts_in_both_modes() {
    for f in FLAVOURS {
        let (t, model) = cdf_table(f);
        let src = source(&[
            (1, "a", 100, "U"),
            (12, "c", 120, "U"),
            (2, "b", 0, "D"),
            (25, "b", 0, "D"),
            (40, "a", 400, "U"),
            (41, "b", 410, "U"),
            (42, "c", 0, "D"),
        ]);
        let done = t
            .merge([src], "t.id = s.id")
            .when("MATCHED AND s.op = 'D' THEN DELETE")
            .when("MATCHED THEN UPDATE SET *")
            .when("NOT MATCHED AND s.op = 'U' THEN INSERT *")
            .execute(&WriteOptions::default())
            .unwrap();
        let v = latest(&t);
        let old = |id: i64| model.iter().find(|r| r.0 == id).cloned().unwrap();
        let mut expected = changes([old(1), old(12)], "update_preimage");
        expected.extend(changes(
            [
                (1, Some("a".into()), Some(100)),
                (12, Some("c".into()), Some(120)),
            ],
            "update_postimage",
        ));
        expected.extend(changes([old(2), old(25)], "delete"));
        expected.extend(changes(
            [
                (40, Some("a".into()), Some(400)),
                (41, Some("b".into()), Some(410)),
            ],
            "insert",
        ));
        assert_eq!(cdc_rows(&t, v), sorted(expected), "{f:?}");
        check_cdc_actions(&t, v, f.partitioned);
        assert_eq!(
            done.metric("numTargetChangeFilesAdded"),
            Some(cdc_actions(&t, v).len() as u64),
            "{f:?}"
        );
        // NOT MATCHED BY SOURCE rows are changes too.
        t.merge([source(&[(3, "a", 0, "")])], "t.id = s.id")
            .when("NOT MATCHED BY SOURCE AND t.id >= 28 THEN DELETE")
            .when("NOT MATCHED BY SOURCE AND t.id = 27 THEN UPDATE SET v = 0")
            .execute(&WriteOptions::default())
            .unwrap();
        let v = latest(&t);
        let mut expected = changes([old(28), old(29)], "delete");
        expected.extend(changes([old(27)], "update_preimage"));
        let r27 = old(27);
        expected.extend(changes([(27, r27.1, Some(0))], "update_postimage"));
        // The rows inserted above (ids 40, 41) are live target rows too.
        expected.extend(changes(
            [
                (40, Some("a".into()), Some(400)),
                (41, Some("b".into()), Some(410)),
            ],
            "delete",
        ));
        assert_eq!(cdc_rows(&t, v), sorted(expected), "{f:?}: by source");
    }
}

/// A MERGE probes the target on its join keys and decodes only the matched rows whole for
/// their pre-images: a row two source rows match (allowed for an unconditional DELETE) is
/// recorded once, with every column as it was, in both modes.
#[test]
fn a_row_matched_twice_by_a_delete_merge_is_recorded_once_and_whole() {
    for f in FLAVOURS {
        let (t, model) = cdf_table(f);
        t.merge(
            [source(&[
                (5, "x", 0, "D"),
                (5, "y", 0, "D"),
                (17, "z", 0, "D"),
            ])],
            "t.id = s.id",
        )
        .when("MATCHED THEN DELETE")
        .execute(&WriteOptions::default())
        .unwrap();
        let v = latest(&t);
        let old = |id: i64| model.iter().find(|r| r.0 == id).cloned().unwrap();
        assert_eq!(
            cdc_rows(&t, v),
            sorted(changes([old(5), old(17)], "delete")),
            "{f:?}"
        );
    }
}

/// In copy-on-write mode a MERGE's scan reads only its join keys and the rewrite of each
/// touched file records the old rows: with row tracking on (hidden columns in the
/// rewrite) and a column added by schema evolution, pre-images and deleted rows still hold
/// exactly the table's columns, the new one NULL, and post-images its values.
#[test]
fn merge_old_rows_recorded_by_the_rewrite_have_the_evolved_columns_only() {
    for f in FLAVOURS {
        let t = Table::in_memory();
        let mut props = cdf_props(f.dv);
        props.insert("delta.enableRowTracking".into(), "true".into());
        let parts: Vec<String> = match f.partitioned {
            true => vec!["k".into()],
            false => vec![],
        };
        t.create(&schema(), &parts, &props).unwrap();
        let rows: Vec<Row> = (0..20).map(row).collect();
        t.append([batch(&rows)], &WriteOptions::default()).unwrap();
        t.merge(
            [source(&[
                (3, "a", 33, "U"),
                (4, "b", 0, "D"),
                (50, "c", 500, "U"),
            ])],
            "t.id = s.id",
        )
        .merge_schema(true)
        .when("MATCHED AND s.op = 'D' THEN DELETE")
        .when("MATCHED THEN UPDATE SET *")
        .when("NOT MATCHED THEN INSERT *")
        .execute(&WriteOptions::default())
        .unwrap();
        let v = latest(&t);
        let mut seen = Vec::new();
        for c in cdc_actions(&t, v) {
            for b in read_parquet(&t, &c.path) {
                let names: Vec<&str> = b
                    .schema_ref()
                    .fields()
                    .iter()
                    .map(|f| f.name().as_str())
                    .collect();
                let mut expected = vec!["id", "k", "v", "op", "_change_type"];
                if f.partitioned {
                    expected.retain(|n| *n != "k");
                }
                assert_eq!(names, expected, "{f:?}");
                let col = |n: &str| b.column_by_name(n).unwrap().clone();
                let (id, op, ct) = (col("id"), col("op"), col("_change_type"));
                let id = id.as_any().downcast_ref::<Int64Array>().unwrap();
                let op = op.as_any().downcast_ref::<StringArray>().unwrap();
                let ct = ct.as_any().downcast_ref::<StringArray>().unwrap();
                for i in 0..b.num_rows() {
                    let op = op.is_valid(i).then(|| op.value(i).to_string());
                    seen.push((id.value(i), ct.value(i).to_string(), op));
                }
            }
        }
        seen.sort();
        let u = |s: &str| Some(s.to_string());
        assert_eq!(
            seen,
            vec![
                (3, "update_postimage".into(), u("U")),
                (3, "update_preimage".into(), None),
                (4, "delete".into(), None),
                (50, "insert".into(), u("U")),
            ],
            "{f:?}"
        );
    }
}

/// A copy-on-write MERGE on a CDF table leaves no file behind when a storage operation
/// fails (without effect) anywhere: in the scan, writing the new row versions, the rewrite
/// of the touched files, closing the cdc file (after the rewrite wrote its files) or the
/// commit. Every file it wrote is deleted again, so the table's objects are exactly those
/// of before.
#[test]
fn a_failed_copy_on_write_merge_leaves_no_file_behind() {
    let objects = |store: &StoreRef| -> std::collections::BTreeSet<String> {
        store
            .list_tree(None)
            .unwrap()
            .into_iter()
            .map(|m| m.path.as_str().to_string())
            .collect()
    };
    let mut failed = 0;
    for k in 1.. {
        let inner: StoreRef = Arc::new(InMemoryStore::new());
        let setup = Table::from_store(inner.clone());
        setup.create(&schema(), &[], &cdf_props(false)).unwrap();
        for i in 0..3 {
            let rows: Vec<Row> = (i * 10..(i + 1) * 10).map(row).collect();
            setup
                .append([batch(&rows)], &WriteOptions::default())
                .unwrap();
        }
        let before = objects(&inner);
        let faulty = Arc::new(FaultyStore::new(inner.clone(), k, Fault::ErrorBefore));
        let t = Table::from_store(faulty.clone() as StoreRef);
        let merged = t
            .merge(
                [source(&[
                    (1, "a", 100, "U"),
                    (12, "c", 0, "D"),
                    (40, "a", 400, "U"),
                ])],
                "t.id = s.id",
            )
            .when("MATCHED AND s.op = 'D' THEN DELETE")
            .when("MATCHED THEN UPDATE SET *")
            .when("NOT MATCHED THEN INSERT *")
            .execute(&WriteOptions::default());
        if faulty.operations() < k {
            // The fault was never reached: every operation of the MERGE has been failed once.
            merged.unwrap();
            break;
        }
        if merged.is_err() && latest(&Table::from_store(inner.clone())) == 3 {
            failed += 1;
            assert_eq!(objects(&inner), before, "fault at operation {k}");
        }
    }
    assert!(failed > 5, "only {failed} failing runs");
}

#[test]
fn an_insert_only_merge_appends_and_an_append_and_optimize_write_no_cdc() {
    for f in FLAVOURS {
        let (t, _) = cdf_table(f);
        t.merge(
            [source(&[(1, "a", 1, ""), (50, "a", 2, "")])],
            "t.id = s.id",
        )
        .when("NOT MATCHED THEN INSERT *")
        .execute(&WriteOptions::default())
        .unwrap();
        assert!(cdc_actions(&t, latest(&t)).is_empty(), "{f:?}");
        t.append([batch(&[row(60)])], &WriteOptions::default())
            .unwrap();
        assert!(cdc_actions(&t, latest(&t)).is_empty(), "{f:?}");
        let before = latest(&t);
        t.optimize(&OptimizeOptions::default()).unwrap();
        assert!(latest(&t) > before, "{f:?}: optimize committed");
        assert!(cdc_actions(&t, latest(&t)).is_empty(), "{f:?}");
    }
}

#[test]
fn cdc_files_use_physical_column_names_and_field_ids_under_column_mapping() {
    let t = Table::in_memory();
    let mut props = cdf_props(false);
    props.insert("delta.columnMapping.mode".into(), "name".into());
    t.create(&schema(), &["k".into()], &props).unwrap();
    t.append(
        [batch(&(0..10).map(row).collect::<Vec<_>>())],
        &WriteOptions::default(),
    )
    .unwrap();
    t.update_str("v = -v", Some("id < 4"), &WriteOptions::default())
        .unwrap();
    let snap = t.snapshot().unwrap();
    let v = snap.version();
    let cdcs = cdc_actions(&t, v);
    assert!(!cdcs.is_empty());
    let k_physical = snap.schema().field("k").unwrap().physical_name().unwrap();
    let mut seen = 0;
    for c in &cdcs {
        assert!(c.partition_values.get(k_physical).is_some(), "{c:?}");
        for b in read_parquet(&t, &c.path) {
            let s = b.schema();
            let names: Vec<&str> = s.fields().iter().map(|f| f.name().as_str()).collect();
            for logical in ["id", "v"] {
                let field = snap.schema().field(logical).unwrap();
                let physical = field.physical_name().unwrap();
                assert_ne!(physical, logical, "name mode gives new physical names");
                let i = names.iter().position(|n| *n == physical).unwrap();
                assert_eq!(
                    s.field(i).metadata().get("PARQUET:field_id"),
                    Some(&field.column_id().unwrap().to_string()),
                    "{logical}"
                );
            }
            assert_eq!(names.last(), Some(&"_change_type"));
            seen += b.num_rows();
        }
    }
    assert_eq!(seen, 8, "4 pre-images and 4 post-images");
}

#[test]
fn reserved_change_data_columns_are_refused_on_cdf_tables() {
    let reserved = |name: &str| {
        Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, true),
            Field::new(name, DataType::Utf8, true),
        ]))
    };
    // Create with the property.
    for name in ["_change_type", "_commit_version", "_COMMIT_TIMESTAMP"] {
        let t = Table::in_memory();
        let e = t
            .create(&reserved(name), &[], &cdf_props(false))
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidInput, "{name}: {e}");
        assert!(e.to_string().contains(name), "{e}");
        assert!(t.snapshot().is_err(), "nothing committed");
        // Without the property the name is an ordinary column ...
        t.create(&reserved(name), &[], alluvium::NO_PROPERTIES)
            .unwrap();
        // ... until change data feed is enabled.
        let e = t
            .set_properties([("delta.enableChangeDataFeed", "true")], &[])
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidInput, "{name}: {e}");
        assert!(
            !t.snapshot().unwrap().properties().change_data_feed(),
            "{name}"
        );
    }
    // Schema evolution adding one to a CDF table.
    let (t, _) = cdf_table(FLAVOURS[0]);
    let wide = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("k", DataType::Utf8, true),
        Field::new("v", DataType::Int64, true),
        Field::new("_commit_version", DataType::Int64, true),
    ]));
    let b = RecordBatch::try_new(
        wide,
        vec![
            Arc::new(Int64Array::from(vec![99])) as ArrayRef,
            Arc::new(StringArray::from(vec!["a"])),
            Arc::new(Int64Array::from(vec![1])),
            Arc::new(Int64Array::from(vec![1])),
        ],
    )
    .unwrap();
    let before = latest(&t);
    let e = t
        .append([b], &WriteOptions::default().with_merge_schema(true))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
    assert_eq!(latest(&t), before);
}

#[test]
fn enabling_change_data_feed_with_alter_upgrades_the_protocol_and_records_changes() {
    let (t, model) = table(FLAVOURS[0]);
    t.set_properties([("delta.enableChangeDataFeed", "true")], &[])
        .unwrap();
    let p = t.snapshot().unwrap().protocol().clone();
    assert_eq!((p.min_reader_version, p.min_writer_version), (1, 4));
    t.update_str("v = 7", Some("id = 3"), &WriteOptions::default())
        .unwrap();
    let old = model.iter().find(|r| r.0 == 3).cloned().unwrap();
    let new = (3, old.1.clone(), Some(7));
    assert_eq!(
        cdc_rows(&t, latest(&t)),
        sorted(vec![
            (old, "update_preimage".to_string()),
            (new, "update_postimage".to_string())
        ])
    );
}

/// The rows of the table at `version`, sorted.
/// replaceWhere on a copy-on-write CDF table (Delta Spark's WriteIntoDelta: its DELETE
/// writes cdc files once a file is rewritten in part, and then the new rows go to the cdc
/// files as `insert` too): the commit's cdc files hold every replaced row as `delete`
/// (those of files removed whole included) and every new row as `insert`; a replaceWhere
/// that only removes whole files writes none. Read back through `Table::changes`.
#[test]
fn replace_where_records_replaced_and_new_rows_once_a_file_is_rewritten_in_part() {
    for partitioned in [false, true] {
        let f = Flavour {
            dv: false,
            partitioned,
        };
        // ids 0..15: the whole first file (removed whole, before any partial rewrite) and
        // part of the second.
        let (t, model) = cdf_table(f);
        let before = latest(&t);
        let new_rows: Vec<Row> = (-3..0).map(row).collect();
        t.overwrite_str(
            [batch(&new_rows)],
            Some("id < 15"),
            &WriteOptions::default(),
        )
        .unwrap();
        let v = latest(&t);
        assert_eq!(v, before + 1);
        let gone: Vec<Row> = model.iter().filter(|r| r.0 < 15).cloned().collect();
        let mut want = changes(gone.clone(), "delete");
        want.extend(changes(new_rows.clone(), "insert"));
        let want = sorted(want);
        assert_eq!(cdc_rows(&t, v), want, "{f:?}");
        check_cdc_actions(&t, v, partitioned);
        let read = t
            .changes(alluvium::VersionSpec::Version(v), None)
            .execute_to_vec()
            .unwrap();
        let mut got: Vec<Change> = read
            .iter()
            .flat_map(batch_rows)
            .map(|(r, c)| (r, c.unwrap()))
            .collect();
        got.sort();
        assert_eq!(got, want, "{f:?}");
        let mut now: Vec<Row> = model
            .iter()
            .filter(|r| !gone.contains(r))
            .cloned()
            .collect();
        now.extend(new_rows.clone());
        now.sort();
        assert_eq!(rows(&t), now, "{f:?}");
    }
    // Whole files only (statistics prove every row of the first file matches): removes
    // and adds alone, from which readers derive the deletes and inserts.
    let (t, model) = cdf_table(FLAVOURS[0]);
    let new_rows: Vec<Row> = vec![row(-1)];
    t.overwrite_str(
        [batch(&new_rows)],
        Some("id < 10"),
        &WriteOptions::default(),
    )
    .unwrap();
    let v = latest(&t);
    assert!(cdc_actions(&t, v).is_empty());
    let read = t
        .changes(alluvium::VersionSpec::Version(v), None)
        .execute_to_vec()
        .unwrap();
    let mut got: Vec<Change> = read
        .iter()
        .flat_map(batch_rows)
        .map(|(r, c)| (r, c.unwrap()))
        .collect();
    got.sort();
    let mut want = changes(model.iter().filter(|r| r.0 < 10).cloned(), "delete");
    want.extend(changes(new_rows, "insert"));
    assert_eq!(got, sorted(want));
}

fn rows_at(t: &Table, version: u64) -> Vec<Row> {
    let snap = t
        .snapshot_at(alluvium::VersionSpec::Version(version))
        .unwrap();
    let batches = alluvium::ScanBuilder::new(snap)
        .with_columns(["id", "k", "v"])
        .build()
        .unwrap()
        .execute_to_vec()
        .unwrap();
    let mut out = Vec::new();
    for b in &batches {
        out.extend(batch_rows(b).into_iter().map(|(r, _)| r));
    }
    out.sort();
    out
}

/// `(id, k, v)` and, when the batch has it, `_change_type` of every row.
fn batch_rows(b: &RecordBatch) -> Vec<(Row, Option<String>)> {
    let id = b.column_by_name("id").unwrap();
    let id = id.as_any().downcast_ref::<Int64Array>().unwrap();
    // Strings in either layout (reads with view types give Utf8View).
    let offsets = |c: &arrow::array::ArrayRef| {
        arrow::compute::cast(c, &arrow::datatypes::DataType::Utf8).unwrap()
    };
    let k = offsets(b.column_by_name("k").unwrap());
    let k = k.as_any().downcast_ref::<StringArray>().unwrap();
    let v = b.column_by_name("v").unwrap();
    let v = v.as_any().downcast_ref::<Int64Array>().unwrap();
    let ct = b.column_by_name("_change_type").map(|c| {
        offsets(c)
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap()
            .clone()
    });
    (0..b.num_rows())
        .map(|i| {
            (
                (
                    id.value(i),
                    k.is_valid(i).then(|| k.value(i).to_string()),
                    v.is_valid(i).then(|| v.value(i)),
                ),
                ct.as_ref().map(|c| c.value(i).to_string()),
            )
        })
        .collect()
}

/// Applies the change rows `changes(from, to)` to `rows` (a multiset): pre-images and
/// deletes remove one occurrence (which must exist), post-images and inserts add one.
/// Ranges of odd length are read with view types, so both string layouts are checked.
fn apply_changes(t: &Table, from: u64, to: u64, mut rows: Vec<Row>, ctx: &str) -> Vec<Row> {
    let batches = t
        .changes(
            alluvium::VersionSpec::Version(from),
            Some(alluvium::VersionSpec::Version(to)),
        )
        .view_types((to - from).is_multiple_of(2))
        .execute_to_vec()
        .unwrap_or_else(|e| panic!("{ctx}: changes({from}, {to}): {e}"));
    for b in &batches {
        for (r, kind) in batch_rows(b) {
            match kind.as_deref() {
                Some("insert" | "update_postimage") => rows.push(r),
                Some("delete" | "update_preimage") => {
                    let i = rows.iter().position(|x| *x == r).unwrap_or_else(|| {
                        panic!("{ctx}: changes({from}, {to}) remove {r:?}, which is not there")
                    });
                    rows.swap_remove(i);
                }
                other => panic!("{ctx}: change type {other:?}"),
            }
        }
    }
    rows.sort();
    rows
}

/// A random predicate over the test table.
fn random_predicate(rng: &mut rand::rngs::StdRng, max_id: i64) -> String {
    use rand::Rng;
    match rng.random_range(0..5) {
        0 => format!(
            "id % {} = {}",
            rng.random_range(2..5),
            rng.random_range(0..2)
        ),
        1 => format!("id < {}", rng.random_range(0..max_id.max(1) + 1)),
        2 => format!("k = '{}'", ["a", "b", "c"][rng.random_range(0..3)]),
        3 => format!("v > {}", rng.random_range(0..max_id.max(1) * 10)),
        _ => format!(
            "id >= {} AND k <> '{}'",
            rng.random_range(0..max_id.max(1)),
            ["a", "b", "c"][rng.random_range(0..3)]
        ),
    }
}

/// Runs one random operation on `t`; `next_id` is the next unused id.
fn random_operation(
    t: &Table,
    rng: &mut rand::rngs::StdRng,
    next_id: &mut i64,
    live: &[Row],
) -> String {
    use rand::Rng;
    let o = WriteOptions::default();
    let k = |rng: &mut rand::rngs::StdRng| ["a", "b", "c"][rng.random_range(0..3)].to_string();
    match rng.random_range(0..11) {
        0..=1 => {
            let n = rng.random_range(1..8);
            let rows: Vec<Row> = (0..n)
                .map(|i| {
                    let id = *next_id + i;
                    (id, Some(k(rng)), Some(rng.random_range(0..100)))
                })
                .collect();
            *next_id += n;
            t.append([batch(&rows)], &o).unwrap();
            format!("append {n}")
        }
        2..=3 => {
            let p = random_predicate(rng, *next_id);
            t.delete_str(&p, &o).unwrap();
            format!("delete where {p}")
        }
        4..=5 => {
            let p = random_predicate(rng, *next_id);
            let set = if rng.random_bool(0.5) {
                "v = v + 1".to_string()
            } else {
                format!("k = '{}', v = id", k(rng))
            };
            t.update_str(&set, Some(&p), &o).unwrap();
            format!("update {set} where {p}")
        }
        6..=8 => {
            // Distinct source ids: some live, some new.
            let mut ids: Vec<i64> = live
                .iter()
                .map(|r| r.0)
                .filter(|_| rng.random_bool(0.3))
                .collect();
            let fresh = rng.random_range(0..4);
            ids.extend(*next_id..*next_id + fresh);
            *next_id += fresh;
            let src: Vec<(i64, String, i64, &str)> = ids
                .iter()
                .map(|i| {
                    let op = if rng.random_bool(0.3) { "D" } else { "U" };
                    (*i, k(rng), rng.random_range(0..100), op)
                })
                .collect();
            let src: Vec<(i64, &str, i64, &str)> = src
                .iter()
                .map(|(i, k, v, op)| (*i, k.as_str(), *v, *op))
                .collect();
            let mut m = t
                .merge([source(&src)], "t.id = s.id")
                .when("MATCHED AND s.op = 'D' THEN DELETE")
                .when("MATCHED THEN UPDATE SET *")
                .when("NOT MATCHED THEN INSERT *");
            let by_source = rng.random_bool(0.3);
            if by_source {
                m = m.when("NOT MATCHED BY SOURCE AND t.v > 90 THEN UPDATE SET v = 0");
            }
            m.execute(&o).unwrap();
            format!("merge of {} rows (by source: {by_source})", src.len())
        }
        9 => {
            // replaceWhere: the new rows match the predicate (same k), fresh ids.
            let key = k(rng);
            let p = if rng.random_bool(0.5) {
                format!("k = '{key}'")
            } else {
                format!(
                    "k = '{key}' AND id >= {}",
                    rng.random_range(0..(*next_id).max(1))
                )
            };
            let n = rng.random_range(0..5);
            let rows: Vec<Row> = (0..n)
                .map(|i| {
                    (
                        *next_id + i,
                        Some(key.clone()),
                        Some(rng.random_range(0..100)),
                    )
                })
                .collect();
            *next_id += n;
            let batches = if rows.is_empty() {
                vec![]
            } else {
                vec![batch(&rows)]
            };
            t.overwrite_str(batches, Some(&p), &o).unwrap();
            format!("overwrite {n} rows where {p}")
        }
        _ => {
            t.optimize(&OptimizeOptions::default()).unwrap();
            "optimize".into()
        }
    }
}

/// Issue 14 item 5: random sequences of append / delete / update / merge / replaceWhere
/// overwrite / optimize on a
/// change-data-feed table; for every pair of versions a < b, applying `changes(a+1, b)` to
/// the table at a gives the table at b (multisets of rows), copy-on-write and deletion
/// vectors, partitioned or not. Seeded: the same sequences every run.
#[test]
fn changes_between_any_two_versions_turn_one_into_the_other() {
    use rand::SeedableRng;
    for seed in 0..8u64 {
        let f = FLAVOURS[(seed % 4) as usize];
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let t = Table::in_memory();
        let parts: Vec<String> = if f.partitioned {
            vec!["k".into()]
        } else {
            vec![]
        };
        t.create(&schema(), &parts, &cdf_props(f.dv)).unwrap();
        let mut next_id = 0;
        let mut log = Vec::new();
        for _ in 0..12 {
            let live = rows(&t);
            log.push(random_operation(&t, &mut rng, &mut next_id, &live));
        }
        let latest = latest(&t);
        let states: Vec<Vec<Row>> = (0..=latest).map(|v| rows_at(&t, v)).collect();
        let ctx = format!("seed {seed} {f:?}: {log:?}");
        for a in 0..latest {
            for b in a + 1..=latest {
                let got = apply_changes(&t, a + 1, b, states[a as usize].clone(), &ctx);
                assert_eq!(got, states[b as usize], "{ctx}: changes({}, {b})", a + 1);
            }
        }
    }
}

/// cdc actions live in commits only: a checkpoint after them loads the same rows, and the
/// table verifies clean (deep: statistics against the data; cdc files are no orphans).
#[test]
fn checkpoints_and_verify_accept_tables_with_cdc_files() {
    for f in [FLAVOURS[0], FLAVOURS[3]] {
        let (t, _) = cdf_table(f);
        t.update_str("v = v + 1", Some("id % 4 = 0"), &WriteOptions::default())
            .unwrap();
        t.delete_str("id % 5 = 1", &WriteOptions::default())
            .unwrap();
        let before = rows(&t);
        t.checkpoint(&alluvium::CheckpointConfig::default())
            .unwrap();
        let reopened = Table::from_store(t.store().clone());
        assert_eq!(rows(&reopened), before, "{f:?}");
        let report = t
            .verify(&alluvium::VerifyOptions::default().with_deep(true))
            .unwrap();
        assert!(report.is_clean(), "{f:?}: {:?}", report.findings);
    }
}

/// `Transaction::add_change_file`: a cdc action with `dataChange=true` is refused and its
/// file deleted with the transaction's other new files; a valid one is committed after
/// the adds and its file kept.
#[test]
fn transactions_validate_commit_and_discard_change_files() {
    let (t, _) = cdf_table(FLAVOURS[0]);
    let put = |name: &str| {
        let p = StorePath::parse(format!("_change_data/{name}")).unwrap();
        t.store().put(&p, bytes::Bytes::from_static(b"x")).unwrap();
        p
    };
    let cdc = |name: &str, data_change: bool| Cdc {
        path: format!("_change_data/{name}"),
        partition_values: Default::default(),
        size: 1,
        data_change,
        tags: None,
    };
    let bad = put("bad.parquet");
    let mut txn = alluvium_mvcc::Transaction::new(&crate::mvcc(&t.snapshot().unwrap()), "TEST");
    txn.add_change_file(cdc("bad.parquet", true));
    let e = txn.commit().unwrap_err();
    assert!(
        matches!(e, alluvium_mvcc::MvccError::InvalidOperation(_)),
        "{e}"
    );
    assert!(
        t.store().get(&bad).is_err(),
        "the refused cdc file is deleted"
    );
    let good = put("good.parquet");
    let mut txn = alluvium_mvcc::Transaction::new(&crate::mvcc(&t.snapshot().unwrap()), "TEST");
    txn.add_change_file(cdc("good.parquet", false));
    txn.commit().unwrap();
    assert_eq!(
        cdc_actions(&t, latest(&t)),
        vec![cdc("good.parquet", false)]
    );
    assert!(t.store().get(&good).is_ok());
}
