//! DELETE with deletion vectors (merge-on-read) and copy-on-write, and `alter`: the DV
//! bytes and the commit's shape against the writer rules of
//! SPEC.md §21 (PROTOCOL.md "Deletion Vectors"), reading back, the
//! conflict cells with OPTIMIZE and other DELETEs, VACUUM and OPTIMIZE on DV tables,
//! Spark-written DV tables, and protocol upgrades by `set_properties`.

use crate::common;

use std::collections::HashMap;
use std::sync::Arc;

use alluvium::{
    ConflictKind, ErrorKind, OptimizeOptions, Snapshot, Table, VacuumOptions, WriteOptions,
    WriteOutcome,
};
use alluvium_storage::{ObjectStore, StorePath};
use alluvium_txlog::actions::{Action, Add, Remove};
use alluvium_txlog::commit::decode_commit;
use alluvium_txlog::dv::read_deletion_vector;
use alluvium_txlog::log_path::commit_path;
use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use serde_json::Value;

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("v", DataType::Utf8, true),
    ]))
}

fn batch(ids: std::ops::Range<i64>) -> RecordBatch {
    let ids: Vec<i64> = ids.collect();
    let vs: Vec<String> = ids.iter().map(|i| format!("v{i}")).collect();
    RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from(ids)) as ArrayRef,
            Arc::new(StringArray::from(vs)),
        ],
    )
    .unwrap()
}

fn dv_props() -> HashMap<String, String> {
    HashMap::from([(
        "delta.enableDeletionVectors".to_string(),
        "true".to_string(),
    )])
}

/// A table with two files: ids 0..10 and 10..20.
fn table_with(props: &HashMap<String, String>) -> Table {
    let t = Table::in_memory();
    t.create(&schema(), &[], props).unwrap();
    t.append([batch(0..10)], &WriteOptions::default()).unwrap();
    t.append([batch(10..20)], &WriteOptions::default()).unwrap();
    t
}

fn dv_table() -> Table {
    table_with(&dv_props())
}

/// A DELETE that writes its DVs to DV files whatever their size (`dv_files_only`): the
/// tests using it are about DV files, which deletes this small would otherwise not write
/// (their DVs go inline; `small_dvs_go_inline_and_larger_ones_to_a_file`).
fn delete(t: &Table, pred: &str) -> alluvium::CommitSummary {
    let files_only = WriteOptions::default().with_dv_files_only(true);
    match t.delete_str(pred, &files_only).unwrap().outcome {
        WriteOutcome::Committed(r) => *r,
        WriteOutcome::Skipped { .. } => panic!("skipped"),
    }
}

fn actions(t: &Table, version: u64) -> Vec<Action> {
    let p = commit_path(version);
    decode_commit(p.as_str(), &t.store().get(&p).unwrap()).unwrap()
}

fn adds_removes(t: &Table, version: u64) -> (Vec<Add>, Vec<Remove>) {
    let mut adds = Vec::new();
    let mut removes = Vec::new();
    for a in actions(t, version) {
        match a {
            Action::Add(a) => adds.push(a),
            Action::Remove(r) => removes.push(r),
            _ => {}
        }
    }
    (adds, removes)
}

fn stats(a: &Add) -> Value {
    serde_json::from_str(a.stats.as_deref().unwrap()).unwrap()
}

fn dv_files(t: &Table) -> Vec<String> {
    let mut out: Vec<String> = t
        .store()
        .list_tree(None)
        .unwrap()
        .into_iter()
        .map(|m| m.path.as_str().to_string())
        .filter(|p| p.contains("deletion_vector_"))
        .collect();
    out.sort();
    out
}

fn ids_without(range: std::ops::Range<i64>, gone: &[i64]) -> Vec<i64> {
    range.filter(|i| !gone.contains(i)).collect()
}

fn metric(r: &alluvium::CommitSummary, k: &str) -> u64 {
    r.commit.operation_metrics[k].parse().unwrap()
}

#[test]
fn dv_delete_writes_the_remove_add_pair_and_one_dv_file() {
    let t = dv_table();
    let before: Vec<Add> = t.snapshot().unwrap().files().map(|f| f.to_add()).collect();
    let r = delete(&t, "id = 3 OR id = 7 OR id = 15");
    assert_eq!(metric(&r, "numDeletedRows"), 3);
    assert_eq!(metric(&r, "numDeletionVectorsAdded"), 2);
    assert_eq!(metric(&r, "numRemovedFiles"), 0);
    assert_eq!(metric(&r, "numAddedFiles"), 0);
    assert_eq!(metric(&r, "numCopiedRows"), 0);
    assert_eq!(metric(&r, "numAddedChangeFiles"), 0);
    // The commit report counts data files written and dropped: a re-add with a new DV is
    // neither (it once said 2 files and the files' whole sizes added).
    assert_eq!((r.commit.files_added, r.commit.files_removed), (0, 0));
    assert_eq!((r.commit.bytes_added, r.commit.bytes_removed), (0, 0));
    for k in ["executionTimeMs", "scanTimeMs", "rewriteTimeMs"] {
        assert!(r.commit.operation_metrics.contains_key(k), "{k}");
    }
    let (adds, removes) = adds_removes(&t, r.commit.version);
    assert_eq!((adds.len(), removes.len()), (2, 2));
    // One DV file for the commit; the two DVs at different offsets of it.
    let files = dv_files(&t);
    assert_eq!(files.len(), 1, "{files:?}");
    let dvs: Vec<_> = adds
        .iter()
        .map(|a| a.deletion_vector.as_deref().unwrap().clone())
        .collect();
    assert_eq!(dvs[0].path_or_inline_dv, dvs[1].path_or_inline_dv);
    assert_ne!(dvs[0].offset, dvs[1].offset);
    assert!(dvs.iter().any(|d| d.offset == Some(1)));
    for add in &adds {
        let old = before.iter().find(|b| b.path == add.path).unwrap();
        let rm = removes.iter().find(|r| r.path == add.path).unwrap();
        // remove: the old (absent) DV, extended metadata, partition values, size, stats.
        assert!(rm.deletion_vector.is_none());
        assert!(rm.data_change);
        assert_eq!(rm.extended_file_metadata, Some(true));
        assert_eq!(rm.size, Some(old.size));
        assert_eq!(rm.partition_values.as_ref(), Some(&old.partition_values));
        assert_eq!(rm.stats, old.stats);
        assert!(rm.deletion_timestamp.is_some());
        // add: same path, size, modificationTime, partition values; wide bounds.
        assert_eq!(add.size, old.size);
        assert_eq!(add.modification_time, old.modification_time);
        assert_eq!(add.partition_values, old.partition_values);
        assert!(add.data_change);
        let s = stats(add);
        assert_eq!(s["tightBounds"], Value::Bool(false));
        assert_eq!(s["numRecords"], Value::from(10), "physical count");
        assert_eq!(s["minValues"], stats(old)["minValues"]);
        let dv = add.deletion_vector.as_deref().unwrap();
        assert_eq!(dv.storage_type, "u");
        let bitmap = read_deletion_vector(t.store().as_ref(), dv).unwrap();
        let want: Vec<u64> = if stats(old)["minValues"]["id"] == 0 {
            vec![3, 7]
        } else {
            vec![5]
        };
        assert_eq!(bitmap.iter().collect::<Vec<_>>(), want);
        assert_eq!(dv.cardinality, want.len() as i64);
    }
    // The DV file's bytes: version 1, then big-endian sizes matching the descriptors.
    let bytes = t
        .store()
        .get(&StorePath::parse(files[0].as_str()).unwrap())
        .unwrap();
    assert_eq!(bytes[0], 1);
    for d in &dvs {
        let o = d.offset.unwrap() as usize;
        let size = u32::from_be_bytes(bytes[o..o + 4].try_into().unwrap());
        assert_eq!(size as i32, d.size_in_bytes);
    }
    assert_eq!(common::sorted_ids(&t), ids_without(0..20, &[3, 7, 15]));
}

#[test]
fn a_second_delete_unions_the_dv_into_a_new_file() {
    let t = dv_table();
    delete(&t, "id = 3");
    let first = dv_files(&t);
    let r = delete(&t, "id = 4 OR id = 3");
    assert_eq!(metric(&r, "numDeletedRows"), 1, "row 3 was already deleted");
    let (adds, removes) = adds_removes(&t, r.commit.version);
    assert_eq!((adds.len(), removes.len()), (1, 1));
    let old_dv = removes[0].deletion_vector.as_deref().unwrap();
    let new_dv = adds[0].deletion_vector.as_deref().unwrap();
    assert_eq!(old_dv.cardinality, 1);
    assert_eq!(new_dv.cardinality, 2);
    assert_ne!(old_dv.unique_id(), new_dv.unique_id());
    assert_eq!(
        read_deletion_vector(t.store().as_ref(), new_dv)
            .unwrap()
            .iter()
            .collect::<Vec<_>>(),
        vec![3, 4]
    );
    let files = dv_files(&t);
    assert_eq!(files.len(), 2, "a fresh DV file, never an overwrite");
    assert!(first.iter().all(|f| files.contains(f)));
    assert_eq!(common::sorted_ids(&t), ids_without(0..20, &[3, 4]));
    // Deleting rows that are already deleted changes nothing in the file.
    let r = delete(&t, "id = 4");
    assert_eq!(metric(&r, "numDeletedRows"), 0);
    assert_eq!(adds_removes(&t, r.commit.version).0.len(), 0);
}

#[test]
fn a_file_whose_every_row_is_deleted_is_simply_removed() {
    let t = dv_table();
    delete(&t, "id = 1");
    // `id <> 1` cannot be proven from statistics: the rows are found, and with the old DV
    // they cover the whole file.
    let r = delete(&t, "id <> 1 AND id < 10");
    let (adds, removes) = adds_removes(&t, r.commit.version);
    assert!(adds.is_empty(), "{adds:?}");
    assert_eq!(removes.len(), 1);
    assert!(
        removes[0].deletion_vector.is_some(),
        "removes the DV'd file"
    );
    assert_eq!(metric(&r, "numDeletedRows"), 9);
    assert_eq!(metric(&r, "numRemovedFiles"), 1);
    assert_eq!(common::sorted_ids(&t), (10..20).collect::<Vec<_>>());
    // A predicate the statistics prove for the whole file removes it without reading it.
    let r = delete(&t, "id >= 10");
    let (adds, removes) = adds_removes(&t, r.commit.version);
    assert!(adds.is_empty());
    assert_eq!(removes.len(), 1);
    assert_eq!(metric(&r, "numDeletedRows"), 10);
    assert!(common::sorted_ids(&t).is_empty());
}

#[test]
fn without_the_property_delete_rewrites_the_file() {
    let t = table_with(&HashMap::new());
    let r = delete(&t, "id = 3");
    let (adds, removes) = adds_removes(&t, r.commit.version);
    assert_eq!((adds.len(), removes.len()), (1, 1));
    assert!(adds[0].deletion_vector.is_none());
    assert_ne!(adds[0].path, removes[0].path);
    assert_eq!(metric(&r, "numCopiedRows"), 9);
    assert_eq!(metric(&r, "numDeletionVectorsAdded"), 0);
    assert_eq!(metric(&r, "numAddedFiles"), 1);
    assert!(dv_files(&t).is_empty());
    assert_eq!(common::sorted_ids(&t), ids_without(0..20, &[3]));
    // The property alone is not enough: the protocol must support the feature.
    let t = Table::in_memory();
    t.create(&schema(), &[], alluvium::NO_PROPERTIES).unwrap();
    t.append([batch(0..10)], &WriteOptions::default()).unwrap();
    let snap = t.snapshot().unwrap();
    let mut md = snap.metadata().clone();
    md.configuration
        .insert("delta.enableDeletionVectors".into(), "true".into());
    let mut txn = alluvium_mvcc::Transaction::new(&crate::mvcc(&snap), "SET TBLPROPERTIES");
    txn.set_metadata(md);
    txn.commit().unwrap();
    delete(&t, "id = 3");
    assert!(dv_files(&t).is_empty());
    assert_eq!(common::sorted_ids(&t), ids_without(0..10, &[3]));
}

/// Copy-on-write coalesces: the kept rows of many touched files go into about one new file
/// per rewrite worker (rolling at the target size), not one per touched file; every kept
/// row survives exactly once, the untouched file stays, and the metrics count the files.
#[test]
fn copy_on_write_coalesces_the_kept_rows_of_many_files() {
    let t = Table::in_memory();
    t.create(&schema(), &[], alluvium::NO_PROPERTIES).unwrap();
    for f in 0..12 {
        t.append([batch(f * 10..f * 10 + 10)], &WriteOptions::default())
            .unwrap();
    }
    // Touches files 0..11 (one row each); file 11 (ids 110..120) has no match.
    let r = delete(&t, "id % 10 = 5 AND id < 110");
    let (adds, removes) = adds_removes(&t, r.commit.version);
    assert_eq!(removes.len(), 11);
    let workers = rayon::current_num_threads().min(11);
    assert!(
        !adds.is_empty() && adds.len() <= workers,
        "{} new files for 11 rewritten with {workers} workers",
        adds.len()
    );
    assert_eq!(metric(&r, "numRemovedFiles"), 11);
    assert_eq!(metric(&r, "numAddedFiles"), adds.len() as u64);
    assert_eq!(metric(&r, "numDeletedRows"), 11);
    assert_eq!(metric(&r, "numCopiedRows"), 99);
    let in_new: i64 = adds
        .iter()
        .map(|a| stats(a)["numRecords"].as_i64().unwrap())
        .sum();
    assert_eq!(in_new, 99);
    let gone: Vec<i64> = (0..11).map(|f| f * 10 + 5).collect();
    assert_eq!(common::sorted_ids(&t), ids_without(0..120, &gone));
}

#[test]
fn append_only_tables_refuse_dv_deletes() {
    let mut props = dv_props();
    props.insert("delta.appendOnly".into(), "true".into());
    let t = table_with(&props);
    let e = t
        .delete_str("id = 3", &WriteOptions::default())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Refused, "{e}");
    assert!(dv_files(&t).is_empty(), "nothing uploaded");
}

fn pinned(s: &Snapshot) -> WriteOptions {
    WriteOptions::default().with_read_snapshot(s.clone())
}

#[test]
fn two_dv_deletes_of_one_file_conflict() {
    let t = dv_table();
    let s = t.snapshot().unwrap();
    delete(&t, "id = 3");
    let e = t.delete_str("id = 4", &pinned(&s)).unwrap_err();
    // The winner re-added the file with its new DV (dataChange=true) where the loser read:
    // Delta's checker looks at a winner's added files first and reports
    // ConcurrentAppendException for this (SPEC.md §7), and so does alluvium.
    assert_eq!(
        e.conflict_kind(),
        Some(ConflictKind::ConcurrentAppend),
        "{e}"
    );
    assert_eq!(common::sorted_ids(&t), ids_without(0..20, &[3]));
    // The loser's re-add named the live data file: it must still be there.
    assert_eq!(common::sorted_ids(&t).len(), 19);
    // DELETEs of different files both land.
    let s = t.snapshot().unwrap();
    delete(&t, "id = 12");
    t.delete_str("id = 5", &pinned(&s)).unwrap();
    assert_eq!(common::sorted_ids(&t), ids_without(0..20, &[3, 5, 12]));
}

/// The other conflict names of two row-deleting transactions on one file, as Delta's checker
/// gives them (SPEC.md §7): a winner that removed the file outright (every row deleted,
/// nothing re-added) against a loser that read it, whether the loser removes it too or not,
/// is `ConcurrentDeleteRead` (Delta checks removed read files before files removed twice).
/// With copy-on-write, a winner whose rewritten file no longer holds what the loser's
/// predicate matches falls through the append check (alluvium checks data predicates
/// against stats, Delta only partition predicates) to `ConcurrentDeleteRead`.
#[test]
fn concurrent_deletes_of_one_file_are_named_as_delta_names_them() {
    // Whole-file removal by the winner, DV delete by the loser.
    let t = dv_table();
    let s = t.snapshot().unwrap();
    delete(&t, "id < 10");
    let e = t.delete_str("id = 4", &pinned(&s)).unwrap_err();
    assert_eq!(
        e.conflict_kind(),
        Some(ConflictKind::ConcurrentDeleteRead),
        "{e}"
    );
    assert_eq!(common::sorted_ids(&t), (10..20).collect::<Vec<_>>());

    // Whole-file removal by the winner; the loser read the file and removes nothing of it
    // (its predicate matched no row there), but deletes in the other file.
    let t = dv_table();
    let s = t.snapshot().unwrap();
    delete(&t, "id < 10");
    let e = t
        .delete_str("id = 15 OR id % 100 = 55", &pinned(&s))
        .unwrap_err();
    assert_eq!(
        e.conflict_kind(),
        Some(ConflictKind::ConcurrentDeleteRead),
        "{e}"
    );
    assert_eq!(common::sorted_ids(&t), (10..20).collect::<Vec<_>>());

    // Copy-on-write: both delete id 3. The winner's rewrite holds 0..10 without 3, and
    // its statistics still admit `id = 3` (min 0, max 9): ConcurrentAppend, as Delta.
    let t = table_with(&HashMap::new());
    let s = t.snapshot().unwrap();
    delete(&t, "id = 3");
    let e = t.delete_str("id = 3", &pinned(&s)).unwrap_err();
    assert_eq!(
        e.conflict_kind(),
        Some(ConflictKind::ConcurrentAppend),
        "{e}"
    );
    // Both delete id 9, the file's maximum: the rewrite's statistics (max 8) exclude it, so
    // only the removal of the file the loser read is left: ConcurrentDeleteRead (Delta,
    // checking partition predicates only, says ConcurrentAppend here).
    let t = table_with(&HashMap::new());
    let s = t.snapshot().unwrap();
    delete(&t, "id = 9");
    let e = t.delete_str("id = 9", &pinned(&s)).unwrap_err();
    assert_eq!(
        e.conflict_kind(),
        Some(ConflictKind::ConcurrentDeleteRead),
        "{e}"
    );
    assert_eq!(common::sorted_ids(&t), ids_without(0..20, &[9]));
}

#[test]
fn dv_delete_and_optimize_of_the_same_file_never_resurrect_rows() {
    // OPTIMIZE first, then the DELETE that read the old file: the DELETE conflicts.
    let t = dv_table();
    let s = t.snapshot().unwrap();
    t.optimize(&OptimizeOptions::default()).unwrap();
    let e = t.delete_str("id = 3", &pinned(&s)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Conflict, "{e}");
    assert_eq!(common::sorted_ids(&t), (0..20).collect::<Vec<_>>());
    // DELETE first, then an OPTIMIZE planned on the old snapshot: its rewrite of the file
    // without the DV must not land.
    let t = dv_table();
    let s = t.snapshot().unwrap();
    delete(&t, "id = 3");
    let _ = alluvium_compaction::optimize::optimize(
        &crate::mvcc(&s),
        &OptimizeOptions::default(),
        &|_| {},
    );
    assert_eq!(common::sorted_ids(&t), ids_without(0..20, &[3]));
    assert!(
        t.snapshot()
            .unwrap()
            .files()
            .any(|a| a.deletion_vector().is_some()),
        "the stale rewrite did not replace the DV'd file"
    );
}

#[test]
fn optimize_purges_deletion_vectors() {
    let t = dv_table();
    delete(&t, "id = 3 OR id = 15");
    t.optimize(&OptimizeOptions::default()).unwrap();
    let snap = t.snapshot().unwrap();
    assert!(snap.files().all(|a| a.deletion_vector().is_none()));
    assert_eq!(common::sorted_ids(&t), ids_without(0..20, &[3, 15]));
}

#[test]
fn vacuum_keeps_referenced_dv_files_and_removes_the_rest() {
    let store =
        Arc::new(alluvium_storage::InMemoryStore::new().with_manual_clock(1_700_000_000_000));
    let t = Table::from_store(store.clone());
    let mut props = dv_props();
    props.insert("delta.randomizeFilePrefixes".into(), "true".into());
    t.create(&schema(), &[], &props).unwrap();
    t.append([batch(0..10)], &WriteOptions::default()).unwrap();
    delete(&t, "id = 1");
    let first = dv_files(&t);
    assert_eq!(first.len(), 1);
    assert!(first[0].contains('/'), "prefixed DV file: {first:?}");
    delete(&t, "id = 2");
    let both = dv_files(&t);
    assert_eq!(both.len(), 2);
    // An orphan DV file, as a failed commit leaves it.
    store
        .put(
            &StorePath::parse("zz/deletion_vector_00000000-0000-0000-0000-000000000000.bin")
                .unwrap(),
            vec![1u8].into(),
        )
        .unwrap();
    store.advance_clock(8 * 86_400_000);
    t.vacuum(&VacuumOptions::default()).unwrap();
    let left = dv_files(&t);
    let live_dv = t
        .snapshot()
        .unwrap()
        .files()
        .find_map(|a| a.deletion_vector().cloned())
        .unwrap();
    let live_path = match live_dv.location().unwrap() {
        alluvium_txlog::dv::DvLocation::Relative { path, .. } => path,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        left,
        vec![live_path],
        "the expired DV and the orphan are gone"
    );
    assert_eq!(common::sorted_ids(&t), ids_without(0..10, &[1, 2]));
}

#[test]
fn spark_written_dv_tables_accept_delete_and_read_back() {
    for (name, pred) in [
        ("table-with-dv-small", "value = 5"),
        ("with-short-dv", "id = 3"),
    ] {
        let (_dir, path) = common::copy_table(name);
        let t = Table::open(path.to_str().unwrap()).unwrap();
        let snap = t.snapshot().unwrap();
        let col = snap.schema().fields[0].name.clone();
        let pred = if snap
            .schema()
            .field(pred.split(' ').next().unwrap())
            .is_some()
        {
            pred.to_string()
        } else {
            format!("{col} = 3")
        };
        let before = common::count_rows(&path).unwrap();
        let r = match t
            .delete_str(&pred, &WriteOptions::default())
            .unwrap()
            .outcome
        {
            WriteOutcome::Committed(r) => *r,
            WriteOutcome::Skipped { .. } => panic!(),
        };
        let deleted = metric(&r, "numDeletedRows") as usize;
        assert_eq!(
            common::count_rows(&path).unwrap(),
            before - deleted,
            "{name}"
        );
        assert!(deleted <= 1, "{name}");
        // Every DV of the new version reads back.
        let snap = t.snapshot().unwrap();
        for a in snap.files() {
            if let Some(dv) = &a.deletion_vector() {
                read_deletion_vector(t.store().as_ref(), dv).unwrap();
            }
        }
    }
}

#[test]
fn set_properties_upgrades_a_legacy_table_to_deletion_vectors() {
    let t = table_with(&HashMap::new());
    let before = t.snapshot().unwrap();
    assert!(before.protocol().min_writer_version < 7);
    let r = t
        .set_properties([("delta.enableDeletionVectors", "true")], &[])
        .unwrap();
    let acts = actions(&t, r.commit.version);
    let p = acts
        .iter()
        .find_map(|a| match a {
            Action::Protocol(p) => Some(p.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!((p.min_reader_version, p.min_writer_version), (3, 7));
    assert!(p.has_reader_feature("deletionVectors"));
    assert!(p.has_writer_feature("deletionVectors"));
    for f in alluvium_txlog::features::legacy_writer_features(before.protocol().min_writer_version)
    {
        assert!(p.has_writer_feature(f), "implied feature {f} listed");
    }
    assert!(acts.iter().any(|a| matches!(a, Action::Metadata(_))));
    let op = acts
        .iter()
        .find_map(|a| match a {
            Action::CommitInfo(ci) => Some(serde_json::to_value(ci).unwrap()),
            _ => None,
        })
        .unwrap();
    assert_eq!(op["operation"], "SET TBLPROPERTIES");
    delete(&t, "id = 3");
    assert_eq!(dv_files(&t).len(), 1);
    assert_eq!(common::sorted_ids(&t), ids_without(0..20, &[3]));
    // Unsetting keeps the protocol and stops new DVs.
    let r = t
        .set_properties(alluvium::NO_PROPERTIES, &["delta.enableDeletionVectors"])
        .unwrap();
    assert!(
        !actions(&t, r.commit.version)
            .iter()
            .any(|a| matches!(a, Action::Protocol(_)))
    );
    delete(&t, "id = 4");
    assert_eq!(dv_files(&t).len(), 1);
    assert_eq!(common::sorted_ids(&t), ids_without(0..20, &[3, 4]));
}

#[test]
fn set_properties_refuses_unknown_keys_and_bad_values() {
    let t = table_with(&HashMap::new());
    let v = t.snapshot().unwrap().version();
    for (k, val) in [
        ("delta.enableDeletionVector", "true"),
        ("delta.enableDeletionVectors", "yes"),
        ("delta.checkpointInterval", "0"),
        ("delta.appendOnly", "1"),
    ] {
        let e = t.set_properties([(k, val)], &[]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidInput, "{k}={val}: {e}");
    }
    assert!(
        t.set_properties(alluvium::NO_PROPERTIES, &["delta.notSet"])
            .is_err()
    );
    assert_eq!(t.snapshot().unwrap().version(), v, "nothing committed");
    // Keys outside delta. are the user's.
    t.set_properties([("team.owner", "data")], &[]).unwrap();
    assert_eq!(
        t.snapshot().unwrap().metadata().configuration["team.owner"],
        "data"
    );
}

#[test]
fn set_properties_enables_cdf_append_only_and_column_mapping() {
    let t = table_with(&HashMap::new());
    t.set_properties([("delta.enableChangeDataFeed", "true")], &[])
        .unwrap();
    let p = t.snapshot().unwrap().protocol().clone();
    assert_eq!((p.min_reader_version, p.min_writer_version), (1, 4));
    t.set_properties([("delta.columnMapping.mode", "name")], &[])
        .unwrap();
    let snap = t.snapshot().unwrap();
    let p = snap.protocol().clone();
    assert_eq!((p.min_reader_version, p.min_writer_version), (2, 5));
    for f in &snap.schema().fields {
        assert!(f.column_id().is_some(), "{} has an id", f.name);
        assert_eq!(f.physical_name(), Some(f.name.as_str()));
    }
    assert_eq!(
        snap.metadata().configuration["delta.columnMapping.maxColumnId"],
        "2"
    );
    assert_eq!(common::sorted_ids(&t), (0..20).collect::<Vec<_>>());
    // Switching to id mode is refused.
    assert!(
        t.set_properties([("delta.columnMapping.mode", "id")], &[])
            .is_err()
    );
    // DVs on a (2, 5) table: table features listing columnMapping and the implied ones.
    t.set_properties([("delta.enableDeletionVectors", "true")], &[])
        .unwrap();
    let p = t.snapshot().unwrap().protocol().clone();
    assert_eq!((p.min_reader_version, p.min_writer_version), (3, 7));
    assert!(p.has_reader_feature("columnMapping") && p.has_writer_feature("changeDataFeed"));
    delete(&t, "id = 3");
    assert_eq!(dv_files(&t).len(), 1, "DV delete on a column-mapped table");
    assert_eq!(common::sorted_ids(&t), ids_without(0..20, &[3]));
    t.set_properties([("delta.appendOnly", "true")], &[])
        .unwrap();
    assert!(
        t.snapshot()
            .unwrap()
            .protocol()
            .has_writer_feature("appendOnly")
    );
    assert!(t.delete_str("id = 4", &WriteOptions::default()).is_err());
}

#[test]
fn positions_stay_physical_across_batches_and_an_existing_dv() {
    // 150,000 rows in one file: the reader's batches (64 Ki rows) and the file's row
    // groups split it; deleted positions must be the rows' physical indexes throughout.
    let t = Table::in_memory();
    t.create(&schema(), &[], &dv_props()).unwrap();
    t.append([batch(0..150_000)], &WriteOptions::default())
        .unwrap();
    assert_eq!(t.snapshot().unwrap().num_files(), 1);
    delete(&t, "id = 70000 OR id = 140001 OR id = 5");
    // The second DELETE reads past the first DV: its positions are still physical.
    let r = delete(&t, "id = 70001 OR id = 149999 OR id = 70000");
    assert_eq!(metric(&r, "numDeletedRows"), 2);
    let add = t.snapshot().unwrap().files().next().unwrap().to_add();
    let bitmap =
        read_deletion_vector(t.store().as_ref(), add.deletion_vector.as_deref().unwrap()).unwrap();
    assert_eq!(
        bitmap.iter().collect::<Vec<_>>(),
        vec![5, 70000, 70001, 140001, 149999]
    );
    assert_eq!(
        common::sorted_ids(&t),
        ids_without(0..150_000, &[5, 70000, 70001, 140001, 149999])
    );
}

#[test]
fn dv_delete_next_to_appends() {
    // A blind append outside what the DELETE read lands next to it, and the DELETE too.
    let t = dv_table();
    let s = t.snapshot().unwrap();
    t.append([batch(100..105)], &WriteOptions::default())
        .unwrap();
    t.delete_str("id = 3", &pinned(&s)).unwrap();
    let mut want = ids_without(0..20, &[3]);
    want.extend(100..105);
    assert_eq!(common::sorted_ids(&t), want);
    // An append of rows the DELETE's predicate matches conflicts (ConcurrentAppend): the
    // DELETE would otherwise miss them.
    let s = t.snapshot().unwrap();
    t.append([batch(4..5)], &WriteOptions::default()).unwrap();
    let e = t.delete_str("id = 4", &pinned(&s)).unwrap_err();
    assert_eq!(
        e.conflict_kind(),
        Some(ConflictKind::ConcurrentAppend),
        "{e}"
    );
    assert_eq!(
        common::sorted_ids(&t).iter().filter(|i| **i == 4).count(),
        2
    );
}

#[test]
fn a_file_without_statistics_gets_num_records_from_its_footer() {
    let t = Table::in_memory();
    t.create(&schema(), &[], &dv_props()).unwrap();
    t.append([batch(0..10)], &WriteOptions::default()).unwrap();
    // Re-register the file under a new name without statistics (as some writers leave it).
    let snap = t.snapshot().unwrap();
    let old = snap.files().next().unwrap().to_add();
    let bytes = t
        .store()
        .get(&StorePath::parse(&old.path).unwrap())
        .unwrap();
    t.store()
        .put(&StorePath::parse("nostats.parquet").unwrap(), bytes)
        .unwrap();
    let mut txn = alluvium_mvcc::Transaction::new(&crate::mvcc(&snap), "OPTIMIZE");
    txn.remove_file(Remove::from_add(&old, 1, false));
    let mut new = old.clone();
    new.path = "nostats.parquet".into();
    new.stats = None;
    new.data_change = false;
    txn.add_file(new);
    txn.commit().unwrap();
    let r = delete(&t, "id = 4");
    let (adds, _) = adds_removes(&t, r.commit.version);
    assert_eq!(adds.len(), 1);
    let s = stats(&adds[0]);
    assert_eq!(s["numRecords"], 10);
    assert_eq!(s["tightBounds"], false);
    assert_eq!(common::sorted_ids(&t), ids_without(0..10, &[4]));
}

/// `replaceWhere` (overwrite with a predicate) on a table that writes deletion vectors
/// deletes the matching rows as DELETE does (as Delta's replaceWhere runs its DELETE): the
/// file whose statistics prove every row matches is removed whole, the partially matching
/// one keeps its path and gets a DV. Without the property the partial file is rewritten.
#[test]
fn overwrite_with_a_filter_deletes_through_dvs_on_dv_tables() {
    for dvs in [true, false] {
        let t = if dvs {
            dv_table()
        } else {
            table_with(&HashMap::new())
        };
        let before: Vec<Add> = t.snapshot().unwrap().files().map(|f| f.to_add()).collect();
        let partial = before
            .iter()
            .find(|a| {
                a.stats
                    .as_deref()
                    .unwrap_or("")
                    .contains(r#""maxValues":{"id":19"#)
            })
            .unwrap()
            .path
            .clone();
        t.overwrite_str([batch(-2..0)], Some("id < 12"), &WriteOptions::default())
            .unwrap();
        let mut want: Vec<i64> = (-2..0).collect();
        want.extend(12..20);
        assert_eq!(common::sorted_ids(&t), want, "dvs={dvs}");
        let v = t.snapshot().unwrap().version();
        let (adds, removes) = adds_removes(&t, v);
        assert_eq!(removes.len(), 2, "dvs={dvs}: both old files leave");
        let readded: Vec<&Add> = adds.iter().filter(|a| a.path == partial).collect();
        if dvs {
            assert_eq!(
                readded.len(),
                1,
                "the partial file is re-added under its path"
            );
            let dv = readded[0].deletion_vector.as_ref().unwrap();
            assert_eq!(dv.cardinality, 2, "rows 10 and 11");
            assert_eq!(adds.len(), 2, "the re-add and the new rows' file");
            assert_eq!(dv.storage_type, "i", "a 2-row DV goes inline");
            assert!(dv_files(&t).is_empty());
        } else {
            assert!(
                readded.is_empty(),
                "copy-on-write rewrites the partial file"
            );
            assert_eq!(adds.len(), 2, "the rewrite and the new rows' file");
            assert!(dv_files(&t).is_empty());
        }
        // Every removed file of the overwrite was read: a concurrent DELETE of it conflicts.
        let s = t.snapshot().unwrap();
        delete(&t, "id = 13");
        let e = t
            .overwrite_str([batch(12..14)], Some("id >= 12 AND id < 14"), &pinned(&s))
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Conflict, "dvs={dvs}: {e}");
    }
}

/// A DV as small as a file reference goes inline in the log (storage type `i`, no DV file);
/// one past `INLINE_DV_MAX_BYTES` goes to a DV file; a later delete unions the inline DV
/// into the new one, inline or not by the new DV's size.
#[test]
fn small_dvs_go_inline_and_larger_ones_to_a_file() {
    let t = Table::in_memory();
    t.create(&schema(), &[], &dv_props()).unwrap();
    t.append([batch(0..100)], &WriteOptions::default()).unwrap();
    t.append([batch(100..110)], &WriteOptions::default())
        .unwrap();
    let dv_of = |t: &Table, min_id: &str| {
        t.snapshot()
            .unwrap()
            .files()
            .find(|a| {
                a.stats()
                    .unwrap_or_default()
                    .contains(&format!(r#""minValues":{{"id":{min_id}"#))
            })
            .and_then(|a| a.deletion_vector().cloned())
    };
    let defaults = WriteOptions::default();
    t.delete_str("id = 3 OR id = 105", &defaults).unwrap();
    for min in ["0", "100"] {
        let dv = dv_of(&t, min).unwrap();
        assert_eq!((dv.storage_type.as_str(), dv.cardinality), ("i", 1));
    }
    assert!(dv_files(&t).is_empty(), "no DV file for inline DVs");
    // 3 more rows of the first file: the union (4 rows) still fits inline.
    t.delete_str("id = 5 OR id = 7 OR id = 9", &defaults)
        .unwrap();
    let dv = dv_of(&t, "0").unwrap();
    assert_eq!((dv.storage_type.as_str(), dv.cardinality), ("i", 4));
    assert!(dv_files(&t).is_empty());
    // Every even row of the first file as well: 54 rows (34 bytes + 2 per row past the
    // first) do not fit.
    t.delete_str("id < 100 AND id % 2 = 0", &defaults).unwrap();
    let dv = dv_of(&t, "0").unwrap();
    assert_eq!((dv.storage_type.as_str(), dv.cardinality), ("u", 54));
    assert_eq!(dv_files(&t).len(), 1);
    let mut gone: Vec<i64> = (0..100).filter(|i| i % 2 == 0).collect();
    gone.extend([3, 5, 7, 9, 105]);
    assert_eq!(common::sorted_ids(&t), ids_without(0..110, &gone));
    // The same 1-row delete with `dv_files_only` writes a DV file.
    t.delete_str(
        "id = 107",
        &WriteOptions::default().with_dv_files_only(true),
    )
    .unwrap();
    let dv = dv_of(&t, "100").unwrap();
    assert_eq!((dv.storage_type.as_str(), dv.cardinality), ("u", 2));
    assert_eq!(dv_files(&t).len(), 2);
}
