//! MERGE: results against an independently computed model on every table flavour,
//! clause order, NOT MATCHED BY SOURCE, the cardinality rule, schema evolution, file
//! pruning by the source's keys, the commit's parameters and metrics, and the conflict
//! cells (concurrent appends inside and outside the read set, OPTIMIZE of a touched file).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use alluvium::{
    ConflictKind, Error, ErrorKind, InMemoryStore, ObjectMeta, ObjectStore, OptimizeOptions,
    StorePath, StoreRef, Table, WriteOptions, parse_expr,
};
use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use bytes::Bytes;

use crate::dml_common::*;

const CDC: &[(i64, &str, i64, &str)] = &[
    (1, "a", 100, "U"),
    (2, "b", 200, "D"),
    (15, "c", 1500, "U"),
    (16, "a", 1600, "D"),
    (40, "b", 4000, "U"),
    (41, "c", 4100, "D"),
];

/// The CDC upsert of `CDC` applied to `model` by hand: matched D deletes, matched U
/// updates every column, unmatched U inserts (unmatched D is ignored).
fn apply_cdc(model: &mut Vec<Row>) {
    for &(id, k, v, op) in CDC {
        let pos = model.iter().position(|r| r.0 == id);
        match (pos, op) {
            (Some(p), "D") => {
                model.remove(p);
            }
            (Some(p), _) => model[p] = (id, Some(k.into()), Some(v)),
            (None, "U") => model.push((id, Some(k.into()), Some(v))),
            (None, _) => {}
        }
    }
    model.sort();
}

#[test]
fn aliases_name_the_target_and_the_source() {
    let f = FLAVOURS[0];
    let (t, mut model) = table(f);
    let done = t
        .merge([source(CDC)], "target.id = Source.id")
        .with_aliases("target", "source")
        .when("MATCHED AND source.op = 'D' THEN DELETE")
        .when("MATCHED THEN UPDATE SET k = source.k, v = SOURCE.v")
        .when("NOT MATCHED AND source.op = 'U' THEN INSERT *")
        .execute(&WriteOptions::default())
        .unwrap();
    apply_cdc(&mut model);
    assert_eq!(rows(&t), model);
    assert_eq!(done.metric("numTargetRowsUpdated"), Some(2));
    // The predicate is recorded as written.
    let ci = last_commit_info(&t);
    assert_eq!(
        ci.operation_parameters().unwrap()["predicate"],
        "target.id = Source.id"
    );
    // Without the aliases the names are unknown; two equal aliases are refused.
    let e = t
        .merge([source(CDC)], "target.id = source.id")
        .when("MATCHED THEN DELETE")
        .execute(&WriteOptions::default())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
    let e = t
        .merge([source(CDC)], "a.id = b.id")
        .with_aliases("a", "A")
        .when("MATCHED THEN DELETE")
        .execute(&WriteOptions::default())
        .unwrap_err();
    assert!(e.to_string().contains("two different"), "{e}");
}

#[test]
fn a_cdc_upsert_matches_the_model_on_every_flavour() {
    for f in FLAVOURS {
        let (t, mut model) = table(f);
        let done = t
            .merge([source(CDC)], "t.id = s.id")
            .when("MATCHED AND s.op = 'D' THEN DELETE")
            .when("MATCHED THEN UPDATE SET *")
            .when("NOT MATCHED AND op = 'U' THEN INSERT *")
            .execute(&WriteOptions::default())
            .unwrap();
        apply_cdc(&mut model);
        assert_eq!(rows(&t), model, "{f:?}");
        assert_eq!(done.metric("numSourceRows"), Some(6));
        assert_eq!(done.metric("numTargetRowsUpdated"), Some(2), "{f:?}");
        assert_eq!(done.metric("numTargetRowsDeleted"), Some(2), "{f:?}");
        assert_eq!(done.metric("numTargetRowsInserted"), Some(1), "{f:?}");
        assert_eq!(has_dv(&t), f.dv, "{f:?}");
        if f.dv {
            assert_eq!(done.metric("numTargetRowsCopied"), Some(0), "{f:?}");
            assert!(done.metric("numTargetDeletionVectorsAdded").unwrap() > 0);
        }
        let ci = last_commit_info(&t);
        assert_eq!(ci.operation(), Some("MERGE"));
        let p = ci.operation_parameters().unwrap();
        assert_eq!(p["predicate"], "t.id = s.id");
        let matched: serde_json::Value =
            serde_json::from_str(p["matchedPredicates"].as_str().unwrap()).unwrap();
        assert_eq!(
            matched,
            serde_json::json!([
                {"predicate": "s.op = 'D'", "actionType": "delete"},
                {"actionType": "update"}
            ])
        );
        let not_matched: serde_json::Value =
            serde_json::from_str(p["notMatchedPredicates"].as_str().unwrap()).unwrap();
        assert_eq!(not_matched[0]["actionType"], "insert");
        assert_eq!(p["notMatchedBySourcePredicates"], "[]");
        let m = &ci.0["operationMetrics"];
        for k in [
            "numTargetRowsInserted",
            "numTargetRowsUpdated",
            "numTargetRowsDeleted",
            "numTargetRowsCopied",
            "numTargetFilesAdded",
            "numTargetFilesRemoved",
            "numTargetDeletionVectorsAdded",
            "numSourceRows",
            "scanTimeMs",
            "rewriteTimeMs",
            "executionTimeMs",
        ] {
            assert!(m.get(k).is_some(), "missing {k}");
        }
    }
}

#[test]
fn the_builder_api_gives_the_same_result() {
    let (t, mut model) = table(FLAVOURS[1]);
    t.merge([source(CDC)], parse_expr("t.id = s.id").unwrap())
        .when_matched_delete(Some(parse_expr("s.op = 'D'").unwrap()))
        .when_matched_update_all(None)
        .when_not_matched_insert_all(Some(parse_expr("s.op = 'U'").unwrap()))
        .execute(&WriteOptions::default())
        .unwrap();
    apply_cdc(&mut model);
    assert_eq!(rows(&t), model);
}

#[test]
fn the_first_matching_clause_wins() {
    let (t, mut model) = table(FLAVOURS[0]);
    let src = source(&[
        (1, "a", 1, "x"),
        (2, "a", 2, "x"),
        (3, "a", 3, "x"),
        (99, "z", 9, "x"),
    ]);
    t.merge([src], "t.id = s.id")
        .when_matched_update(
            Some(parse_expr("s.v >= 2").unwrap()),
            [("v", parse_expr("s.v + 1000").unwrap())],
        )
        .when_matched_update(
            Some(parse_expr("s.v >= 1").unwrap()),
            [("v", parse_expr("0 - s.v").unwrap())],
        )
        .when_matched_delete(Some(parse_expr("s.v >= 2").unwrap()))
        .when_not_matched_insert(
            None,
            ["id", "k"],
            [parse_expr("s.id").unwrap(), parse_expr("'new'").unwrap()],
        )
        .execute(&WriteOptions::default())
        .unwrap();
    for r in &mut model {
        match r.0 {
            1 => r.2 = Some(-1),
            2 => r.2 = Some(1002),
            3 => r.2 = Some(1003),
            _ => {}
        }
    }
    model.push((99, Some("new".into()), None));
    model.sort();
    assert_eq!(rows(&t), model);
}

#[test]
fn not_matched_by_source_updates_and_deletes_target_rows_without_a_match() {
    for f in [FLAVOURS[0], FLAVOURS[3]] {
        let (t, mut model) = table(f);
        let src = source(&[(1, "a", 1, "x"), (2, "b", 2, "x")]);
        let done = t
            .merge([src], "t.id = s.id")
            .when("MATCHED THEN UPDATE SET v = s.v")
            .when("NOT MATCHED BY SOURCE AND t.id >= 20 THEN DELETE")
            .when("NOT MATCHED BY SOURCE AND id < 5 THEN UPDATE SET v = -1")
            .execute(&WriteOptions::default())
            .unwrap();
        model.retain(|r| r.0 < 20 || r.0 == 1 || r.0 == 2);
        for r in &mut model {
            match r.0 {
                1 => r.2 = Some(1),
                2 => r.2 = Some(2),
                0 | 3 | 4 => r.2 = Some(-1),
                _ => {}
            }
        }
        assert_eq!(rows(&t), model, "{f:?}");
        assert_eq!(
            done.metric("numTargetRowsNotMatchedBySourceDeleted"),
            Some(10)
        );
        assert_eq!(
            done.metric("numTargetRowsNotMatchedBySourceUpdated"),
            Some(3)
        );
        assert_eq!(done.metric("numTargetRowsMatchedUpdated"), Some(2));
    }
}

#[test]
fn a_target_row_matched_twice_for_an_update_fails_and_commits_nothing() {
    for f in [FLAVOURS[0], FLAVOURS[1]] {
        let (t, model) = table(f);
        let version = t.snapshot().unwrap().version();
        let dup = source(&[(5, "a", 1, "U"), (5, "a", 2, "U")]);
        let e = t
            .merge([dup.clone()], "t.id = s.id")
            .when("MATCHED THEN UPDATE SET *")
            .execute(&WriteOptions::default())
            .unwrap_err();
        assert!(matches!(e, Error::MergeCardinalityViolation { .. }), "{e}");
        // The message names the duplicated key, not a position in a file.
        assert!(e.to_string().contains("target row {id: 5}"), "{e}");
        assert_eq!(e.kind(), ErrorKind::InvalidInput);
        assert_eq!(t.snapshot().unwrap().version(), version);
        assert_eq!(rows(&t), model);
        // Delta's exception: a single unconditional DELETE is unambiguous.
        let done = t
            .merge([dup.clone()], "t.id = s.id")
            .when("MATCHED THEN DELETE")
            .execute(&WriteOptions::default())
            .unwrap();
        assert_eq!(
            done.metric("numTargetRowsDeleted"),
            Some(1),
            "one row, two pairs"
        );
        let expected: Vec<Row> = model.iter().filter(|r| r.0 != 5).cloned().collect();
        assert_eq!(rows(&t), expected);
        // Duplicates a clause does not act on are no violation either.
        t.merge(
            [source(&[(6, "a", 1, "U"), (6, "a", 2, "skip")])],
            "t.id = s.id",
        )
        .when("MATCHED AND s.op = 'U' THEN UPDATE SET v = s.v")
        .execute(&WriteOptions::default())
        .unwrap();
        // Duplicate source rows that match nothing are both inserted.
        t.merge(
            [source(&[(77, "a", 1, "U"), (77, "a", 2, "U")])],
            "t.id = s.id",
        )
        .when("MATCHED THEN UPDATE SET *")
        .when("NOT MATCHED THEN INSERT *")
        .execute(&WriteOptions::default())
        .unwrap();
        assert_eq!(rows(&t).iter().filter(|r| r.0 == 77).count(), 2);
    }
}

#[test]
fn merge_schema_adds_the_new_source_columns() {
    let (t, model) = table(FLAVOURS[1]);
    let src = source(&[(1, "a", 100, "U"), (50, "b", 500, "I")]);
    let e = t
        .merge([src.clone()], "t.id = s.id")
        .when("MATCHED THEN UPDATE SET *")
        .when("NOT MATCHED THEN INSERT *")
        .merge_schema(true)
        .execute(&WriteOptions::default());
    e.unwrap();
    let snap = t.snapshot().unwrap();
    assert!(snap.schema().field("op").is_some());
    let batches = alluvium::ScanBuilder::new(snap)
        .with_columns(["id", "op"])
        .build()
        .unwrap()
        .execute_to_vec()
        .unwrap();
    let mut ops: HashMap<i64, Option<String>> = HashMap::new();
    for b in &batches {
        let id = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        let op = b.column(1).as_any().downcast_ref::<StringArray>().unwrap();
        for i in 0..b.num_rows() {
            ops.insert(
                id.value(i),
                arrow::array::Array::is_valid(op, i).then(|| op.value(i).to_string()),
            );
        }
    }
    assert_eq!(ops.len(), model.len() + 1);
    assert_eq!(ops[&1].as_deref(), Some("U"));
    assert_eq!(ops[&50].as_deref(), Some("I"));
    assert_eq!(ops[&2], None);
}

#[test]
fn names_and_types_are_checked_before_any_file_is_written() {
    let (t, model) = table(FLAVOURS[1]);
    let version = t.snapshot().unwrap().version();
    for (on, clause) in [
        ("t.id = s.id", "MATCHED THEN UPDATE SET v = s.k"),
        ("t.id = s.id", "MATCHED THEN UPDATE SET nope = 1"),
        ("t.id = s.id", "MATCHED THEN UPDATE SET v = id"),
        ("t.id = s.id", "NOT MATCHED THEN INSERT (id) VALUES (t.id)"),
        (
            "t.id = s.id",
            "NOT MATCHED BY SOURCE THEN UPDATE SET v = s.v",
        ),
        ("t.id = s.nope", "MATCHED THEN DELETE"),
        ("t.id = s.k", "MATCHED THEN DELETE"),
        ("t.id = s.id", "MATCHED THEN EXPLODE"),
    ] {
        let e = t
            .merge([source(CDC)], on)
            .when(clause)
            .execute(&WriteOptions::default())
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidInput, "{on} / {clause}: {e}");
    }
    // Without schema merging a `*` clause needs every target column in the source.
    let narrow = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true)])),
        vec![Arc::new(Int64Array::from(vec![1])) as ArrayRef],
    )
    .unwrap();
    let e = t
        .merge([narrow], "t.id = s.id")
        .when("MATCHED THEN UPDATE SET *")
        .execute(&WriteOptions::default())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
    assert_eq!(t.snapshot().unwrap().version(), version);
    assert_eq!(rows(&t), model);
}

/// A store that records the path of every data file read through it.
#[derive(Debug)]
struct ReadRecorder {
    inner: InMemoryStore,
    reads: Mutex<Vec<String>>,
}

impl ReadRecorder {
    fn note(&self, p: &StorePath) {
        if p.as_str().ends_with(".parquet") {
            self.reads.lock().unwrap().push(p.as_str().to_string());
        }
    }
    fn take(&self) -> Vec<String> {
        let mut v = std::mem::take(&mut *self.reads.lock().unwrap());
        v.sort();
        v.dedup();
        v
    }
}

impl ObjectStore for ReadRecorder {
    fn root_uri(&self) -> String {
        self.inner.root_uri()
    }
    fn get(&self, path: &StorePath) -> alluvium_storage::Result<Bytes> {
        self.note(path);
        self.inner.get(path)
    }
    fn get_range(
        &self,
        path: &StorePath,
        range: std::ops::Range<u64>,
    ) -> alluvium_storage::Result<Bytes> {
        self.note(path);
        self.inner.get_range(path, range)
    }
    fn head(&self, path: &StorePath) -> alluvium_storage::Result<ObjectMeta> {
        self.inner.head(path)
    }
    fn put_if_absent(&self, path: &StorePath, data: Bytes) -> alluvium_storage::Result<()> {
        self.inner.put_if_absent(path, data)
    }
    fn put(&self, path: &StorePath, data: Bytes) -> alluvium_storage::Result<()> {
        self.inner.put(path, data)
    }
    fn list_dir_from(
        &self,
        dir: Option<&StorePath>,
        start: &str,
    ) -> alluvium_storage::Result<Vec<ObjectMeta>> {
        self.inner.list_dir_from(dir, start)
    }
    fn list_tree(&self, dir: Option<&StorePath>) -> alluvium_storage::Result<Vec<ObjectMeta>> {
        self.inner.list_tree(dir)
    }
    fn delete(&self, path: &StorePath) -> alluvium_storage::Result<()> {
        self.inner.delete(path)
    }
}

#[test]
fn a_one_row_upsert_reads_one_target_file_and_a_pure_insert_reads_none() {
    for f in [FLAVOURS[0], FLAVOURS[1]] {
        let store = Arc::new(ReadRecorder {
            inner: InMemoryStore::new(),
            reads: Mutex::new(Vec::new()),
        });
        let (t, mut model) = table_with(store.clone() as StoreRef, f, 10, 100);
        let live: Vec<String> = t
            .snapshot()
            .unwrap()
            .files()
            .map(|a| a.path().to_string())
            .collect();
        let owner = live
            .iter()
            .find(|p| {
                // The file of id 555: the sixth append.
                let snap = t.snapshot().unwrap();
                let a = snap.files().find(|a| a.path() == *p).unwrap();
                a.stats().unwrap().contains("\"id\":500")
            })
            .cloned()
            .unwrap();
        store.take();
        let done = t
            .merge([source(&[(555, "q", 1, "U")])], "t.id = s.id")
            .when("MATCHED THEN UPDATE SET *")
            .when("NOT MATCHED THEN INSERT *")
            .execute(&WriteOptions::default())
            .unwrap();
        let read = store.take();
        assert!(
            read.iter()
                .filter(|p| live.iter().any(|l| p.ends_with(l.as_str())))
                .count()
                == 1
                && read.iter().any(|p| p.ends_with(owner.as_str())),
            "{f:?}: read {read:?}, expected only {owner}"
        );
        assert_eq!(done.metric("numTargetFilesScanned"), Some(1));
        for r in &mut model {
            if r.0 == 555 {
                *r = (555, Some("q".into()), Some(1));
            }
        }
        assert_eq!(rows(&t), model);
        store.take();
        let done = t
            .merge([source(&[(5000, "q", 1, "U")])], "t.id = s.id")
            .when("MATCHED THEN UPDATE SET *")
            .when("NOT MATCHED THEN INSERT *")
            .execute(&WriteOptions::default())
            .unwrap();
        let read = store.take();
        assert!(
            !read
                .iter()
                .any(|p| live.iter().any(|l| p.ends_with(l.as_str()))),
            "{f:?}: a pure insert read {read:?}"
        );
        assert_eq!(done.metric("numTargetFilesScanned"), Some(0));
        assert_eq!(done.metric("numTargetRowsInserted"), Some(1));
    }
}

#[test]
fn a_merge_that_changes_nothing_commits_no_file_actions() {
    let (t, model) = table(FLAVOURS[1]);
    let done = t
        .merge([source(&[(1, "a", 1, "x")])], "t.id = s.id")
        .when("MATCHED AND s.op = 'never' THEN DELETE")
        .when("NOT MATCHED THEN INSERT *")
        .execute(&WriteOptions::default())
        .unwrap();
    let r = done.outcome.report().unwrap();
    assert_eq!((r.files_added, r.files_removed), (0, 0));
    assert_eq!(rows(&t), model);
}

fn pinned(t: &Table) -> (WriteOptions, alluvium::Snapshot) {
    let s = t.snapshot().unwrap();
    (WriteOptions::default().with_read_snapshot(s.clone()), s)
}

fn upsert(
    t: &Table,
    rows: &[(i64, &str, i64, &str)],
    o: &WriteOptions,
) -> alluvium::Result<alluvium::DmlOutcome> {
    t.merge([source(rows)], "t.id = s.id")
        .when("MATCHED THEN UPDATE SET *")
        .when("NOT MATCHED THEN INSERT *")
        .execute(o)
}

#[test]
fn a_concurrent_append_inside_the_read_set_conflicts_and_one_outside_does_not() {
    for f in [FLAVOURS[0], FLAVOURS[1]] {
        let (t, _) = table(f);
        // Inside: the append adds (another) id 13, one of the source's keys.
        let (o, _) = pinned(&t);
        t.append([batch(&[row(13)])], &WriteOptions::default())
            .unwrap();
        let e = upsert(&t, &[(11, "a", 1, ""), (13, "a", 1, "")], &o).unwrap_err();
        assert_eq!(
            e.conflict_kind(),
            Some(ConflictKind::ConcurrentAppend),
            "{f:?}: {e}"
        );
        // Inside even for a pure insert: the append may add the key the MERGE inserts.
        let (o, _) = pinned(&t);
        t.append([batch(&[row(1000)])], &WriteOptions::default())
            .unwrap();
        let e = upsert(&t, &[(1000, "a", 1, "")], &o).unwrap_err();
        assert_eq!(
            e.conflict_kind(),
            Some(ConflictKind::ConcurrentAppend),
            "{f:?}: {e}"
        );
        // Outside: ids 500.. are far from the source's keys.
        let (o, _) = pinned(&t);
        let before = rows(&t);
        t.append([batch(&[row(500), row(501)])], &WriteOptions::default())
            .unwrap();
        upsert(&t, &[(11, "a", 1, ""), (2000, "a", 2, "")], &o).unwrap();
        let mut expected = before;
        expected.push(row(500));
        expected.push(row(501));
        expected.retain(|r| r.0 != 11);
        expected.push((11, Some("a".into()), Some(1)));
        expected.push((2000, Some("a".into()), Some(2)));
        expected.sort();
        assert_eq!(rows(&t), expected, "{f:?}");
    }
}

#[test]
fn a_concurrent_delete_of_a_file_the_merge_read_conflicts() {
    for f in [FLAVOURS[0], FLAVOURS[1]] {
        let (t, _) = table(f);
        let (o, _) = pinned(&t);
        t.delete_str("id = 3", &WriteOptions::default()).unwrap();
        let e = upsert(&t, &[(4, "a", 1, "")], &o).unwrap_err();
        // The DELETE also re-adds the file (with a DV, or its other rows rewritten) inside the
        // read set, which the checker reports first, as Delta's does (SPEC.md §7).
        assert_eq!(
            e.conflict_kind(),
            Some(ConflictKind::ConcurrentAppend),
            "{f:?}: {e}"
        );
    }
}

#[test]
fn merge_and_optimize_of_a_touched_file_never_resurrect_or_duplicate_rows() {
    for f in [FLAVOURS[0], FLAVOURS[1]] {
        let (t, model) = table(f);
        // The MERGE reads version R; OPTIMIZE rewrites every file at R+1; the MERGE's
        // commit must conflict (its files are gone), and the table is OPTIMIZE's.
        let (o, _) = pinned(&t);
        t.optimize(&OptimizeOptions::default()).unwrap();
        let e = t
            .merge([source(&[(4, "a", 1, "D")])], "t.id = s.id")
            .when("MATCHED THEN DELETE")
            .execute(&o)
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Conflict, "{f:?}: {e}");
        assert_eq!(rows(&t), model, "{f:?}");
        // MERGE first, OPTIMIZE after: the deleted row stays deleted, nothing doubles.
        t.merge(
            [source(&[(4, "a", 1, "D"), (7, "x", 70, "U")])],
            "t.id = s.id",
        )
        .when("MATCHED AND s.op = 'D' THEN DELETE")
        .when("MATCHED THEN UPDATE SET *")
        .execute(&WriteOptions::default())
        .unwrap();
        t.optimize(&OptimizeOptions::default()).unwrap();
        let mut expected: Vec<Row> = model.iter().filter(|r| r.0 != 4).cloned().collect();
        for r in &mut expected {
            if r.0 == 7 {
                *r = (7, Some("x".into()), Some(70));
            }
        }
        expected.sort();
        assert_eq!(rows(&t), expected, "{f:?}");
    }
}

#[test]
fn every_fault_at_every_storage_operation_of_a_merge() {
    use crate::fault_workload::{MERGE_DV_WORKLOAD, MERGE_WORKLOAD, Setup, sweep};
    sweep(MERGE_WORKLOAD, Setup::in_memory);
    sweep(MERGE_DV_WORKLOAD, Setup::in_memory);
}

#[test]
fn every_fault_at_every_storage_operation_of_a_merge_on_local_disk() {
    use crate::fault_workload::{MERGE_DV_WORKLOAD, Setup, sweep};
    sweep(MERGE_DV_WORKLOAD, Setup::on_disk);
}

/// What one stress writer committed.
enum StressOp {
    Upsert(Vec<(i64, i64)>),
    Append(Vec<i64>),
}

/// 4 threads running MERGE upserts on overlapping keys and 4 appending, each with its own
/// table handle; conflicting MERGEs fail with a retryable conflict and are not retried.
/// The final table must equal the serial replay, in version order, of the commits that
/// landed.
#[test]
fn stress_four_merging_and_four_appending_threads_equal_the_serial_replay() {
    for f in [FLAVOURS[0], FLAVOURS[1]] {
        let store: StoreRef = Arc::new(InMemoryStore::new());
        let (t, initial) = table_with(store.clone(), f, 2, 10);
        let landed: Arc<Mutex<HashMap<String, StressOp>>> = Arc::new(Mutex::new(HashMap::new()));
        let mut handles = Vec::new();
        for w in 0..4i64 {
            let (store, landed) = (store.clone(), landed.clone());
            handles.push(std::thread::spawn(move || {
                let t = Table::from_store(store);
                for i in 0..12i64 {
                    let keys = [(i * 3 + w) % 25, (i * 5 + w * 7 + 1) % 25];
                    let mut src: Vec<(i64, i64)> =
                        keys.iter().map(|k| (*k, w * 1000 + i)).collect();
                    src.dedup_by_key(|r| r.0);
                    let rows: Vec<(i64, &str, i64, &str)> =
                        src.iter().map(|(k, v)| (*k, "m", *v, "")).collect();
                    match upsert(&t, &rows, &WriteOptions::default()) {
                        Ok(done) => {
                            let r = done.outcome.report().unwrap();
                            landed
                                .lock()
                                .unwrap()
                                .insert(r.txn_id.clone(), StressOp::Upsert(src));
                        }
                        Err(e) => assert!(
                            matches!(e.kind(), ErrorKind::Conflict | ErrorKind::Contention)
                                && e.is_retryable(),
                            "merge writer {w}: {e}"
                        ),
                    }
                }
            }));
        }
        for a in 0..4i64 {
            let (store, landed) = (store.clone(), landed.clone());
            handles.push(std::thread::spawn(move || {
                let t = Table::from_store(store);
                for i in 0..12i64 {
                    let ids = vec![1000 + a * 100 + i];
                    let rows: Vec<Row> = ids
                        .iter()
                        .map(|id| (*id, Some("x".into()), Some(*id)))
                        .collect();
                    let out = t.append([batch(&rows)], &WriteOptions::default()).unwrap();
                    let r = out.report().unwrap();
                    landed
                        .lock()
                        .unwrap()
                        .insert(r.txn_id.clone(), StressOp::Append(ids));
                }
            }));
        }
        for h in handles {
            h.join().unwrap();
        }
        // Serial replay in version order.
        let mut model: std::collections::BTreeMap<i64, (Option<String>, Option<i64>)> =
            initial.into_iter().map(|r| (r.0, (r.1, r.2))).collect();
        let mut history = alluvium::Table::from_store(store.clone())
            .history(None)
            .unwrap();
        history.sort_by_key(|e| e.version);
        let landed = landed.lock().unwrap();
        let mut replayed = 0;
        for e in &history {
            let Some(txn) = e.commit_info.as_ref().and_then(|c| c.txn_id()) else {
                continue;
            };
            match landed.get(txn) {
                Some(StressOp::Upsert(src)) => {
                    for (k, v) in src {
                        model.insert(*k, (Some("m".into()), Some(*v)));
                    }
                    replayed += 1;
                }
                Some(StressOp::Append(ids)) => {
                    for id in ids {
                        model.insert(*id, (Some("x".into()), Some(*id)));
                    }
                    replayed += 1;
                }
                None => {}
            }
        }
        assert_eq!(
            replayed,
            landed.len(),
            "{f:?}: every acknowledged commit is in the log once"
        );
        let expected: Vec<Row> = model.into_iter().map(|(id, (k, v))| (id, k, v)).collect();
        assert_eq!(rows(&t), expected, "{f:?}");
    }
}

#[test]
fn update_and_merge_work_on_column_mapped_tables() {
    let t = Table::in_memory();
    let props = HashMap::from([
        ("delta.columnMapping.mode".to_string(), "name".to_string()),
        (
            "delta.enableDeletionVectors".to_string(),
            "true".to_string(),
        ),
    ]);
    t.create(&schema(), &["k".to_string()], &props).unwrap();
    let mut model: Vec<Row> = (0..12).map(row).collect();
    t.append([batch(&model)], &WriteOptions::default()).unwrap();
    t.update_str("v = v + 1", Some("id < 4"), &WriteOptions::default())
        .unwrap();
    for r in model.iter_mut().filter(|r| r.0 < 4) {
        r.2 = r.2.map(|v| v + 1);
    }
    upsert(
        &t,
        &[(5, "b", 55, ""), (20, "c", 200, "")],
        &WriteOptions::default(),
    )
    .unwrap();
    for r in &mut model {
        if r.0 == 5 {
            *r = (5, Some("b".into()), Some(55));
        }
    }
    model.push((20, Some("c".into()), Some(200)));
    model.sort();
    assert_eq!(rows(&t), model);
}

#[test]
fn a_sparse_source_reads_only_the_files_holding_its_keys() {
    let (t, mut model) = table_with(Arc::new(InMemoryStore::new()), FLAVOURS[1], 10, 100);
    // 100 keys in the first and the last file: their range spans all ten files.
    let keys: Vec<i64> = (0..50).chain(950..1000).collect();
    let src: Vec<(i64, &str, i64, &str)> = keys.iter().map(|k| (*k, "s", -k, "")).collect();
    let done = upsert(&t, &src, &WriteOptions::default()).unwrap();
    assert_eq!(done.metric("numTargetFilesScanned"), Some(2));
    assert_eq!(done.metric("numTargetRowsUpdated"), Some(100));
    for r in &mut model {
        if keys.contains(&r.0) {
            *r = (r.0, Some("s".into()), Some(-r.0));
        }
    }
    assert_eq!(rows(&t), model);
}

/// The `value` column (int) of a table, sorted.
fn int_values(t: &Table) -> Vec<i32> {
    let batches = alluvium::ScanBuilder::new(t.snapshot().unwrap())
        .with_columns(["value"])
        .build()
        .unwrap()
        .execute_to_vec()
        .unwrap();
    let mut out: Vec<i32> = batches
        .iter()
        .flat_map(|b| {
            b.column(0)
                .as_any()
                .downcast_ref::<arrow::array::Int32Array>()
                .unwrap()
                .iter()
                .flatten()
                .collect::<Vec<_>>()
        })
        .collect();
    out.sort_unstable();
    out
}

#[test]
fn spark_written_dv_tables_accept_update_and_merge() {
    let (_dir, path) = crate::common::copy_table("table-with-dv-small");
    let t = Table::open(path.to_str().unwrap()).unwrap();
    let before = int_values(&t);
    assert!(
        t.snapshot()
            .unwrap()
            .files()
            .any(|a| a.deletion_vector().is_some())
    );
    t.update_str(
        "value = value * 10",
        Some("value % 2 = 0"),
        &WriteOptions::default(),
    )
    .unwrap();
    let src = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new(
            "value",
            DataType::Int32,
            true,
        )])),
        vec![Arc::new(arrow::array::Int32Array::from(vec![3, 100])) as ArrayRef],
    )
    .unwrap();
    t.merge([src], "t.value = s.value")
        .when("MATCHED THEN DELETE")
        .when("NOT MATCHED THEN INSERT *")
        .execute(&WriteOptions::default())
        .unwrap();
    let mut expected: Vec<i32> = before
        .iter()
        .map(|v| if v % 2 == 0 { v * 10 } else { *v })
        .filter(|v| *v != 3)
        .chain([100])
        .collect();
    expected.sort_unstable();
    assert_eq!(int_values(&t), expected);
    // The new DVs extend Spark's: every live file's DV reads back, and a fresh handle
    // (no cache) reads the same rows.
    let snap = t.snapshot().unwrap();
    for a in snap.files() {
        if let Some(dv) = &a.deletion_vector() {
            alluvium_txlog::dv::read_deletion_vector(t.store().as_ref(), dv).unwrap();
        }
    }
    assert_eq!(
        int_values(&Table::open(path.to_str().unwrap()).unwrap()),
        expected
    );
}

#[test]
fn conditions_and_on_residuals_see_the_target_columns_they_name() {
    for f in [FLAVOURS[0], FLAVOURS[1]] {
        let (t, mut model) = table(f);
        // Only `t.id` is a key; `t.v` (condition) and `t.k` (residual) must be read too.
        let src = source(&[
            (3, "a", 1, ""),
            (4, "b", 2, ""),
            (5, "c", 3, ""),
            (6, "zz", 4, ""),
        ]);
        t.merge([src], "t.id = s.id AND t.k = s.k")
            .when("MATCHED AND t.v >= 40 THEN UPDATE SET *")
            .when("NOT MATCHED THEN INSERT (id, v) VALUES (s.id + 100, s.v)")
            .execute(&WriteOptions::default())
            .unwrap();
        // ids 3, 4, 5 have k = a, b, c (id % 3) and v = 10 * id: 3 -> k a (3 % 3 = 0) matches
        // with v 30 (< 40: untouched), 4 -> b matches, v 40: updated; 5 -> c matches, v 50:
        // updated; 6 -> k a != zz: not matched, inserted as 106.
        for r in &mut model {
            match r.0 {
                4 => *r = (4, Some("b".into()), Some(2)),
                5 => *r = (5, Some("c".into()), Some(3)),
                _ => {}
            }
        }
        model.push((106, None, Some(4)));
        model.sort();
        assert_eq!(rows(&t), model, "{f:?}");
    }
}

#[test]
fn explain_shows_the_plan_and_changes_nothing() {
    for f in FLAVOURS {
        let (t, model) = table(f);
        let version = t.snapshot().unwrap().version();
        let src = source(&[(3, "a", 30, "U"), (7, "b", 70, "U")]);
        let text = t
            .merge([src.clone()], "t.id = s.id AND s.v > 0")
            .when("MATCHED THEN UPDATE SET *")
            .when("NOT MATCHED THEN INSERT *")
            .explain(&WriteOptions::default())
            .unwrap();
        for part in [
            "join: hash on t.id = s.id",
            "residual: s.v > 0",
            "WHEN MATCHED THEN update",
            "pruning: id IN",
            "candidate files: ",
        ] {
            assert!(text.contains(part), "{f:?}: `{part}` in\n{text}");
        }
        let nested = t
            .merge([src], "t.id < s.id")
            .when("MATCHED THEN DELETE")
            .explain(&WriteOptions::default())
            .unwrap();
        assert!(nested.contains("nested loop"), "{nested}");
        // A name that does not bind fails planning as execute would.
        let e = t
            .merge([source(&[])], "t.id = s.nope")
            .when("MATCHED THEN DELETE")
            .explain(&WriteOptions::default())
            .unwrap_err();
        assert!(e.to_string().contains("nope"), "{e}");
        assert_eq!(t.snapshot().unwrap().version(), version, "{f:?}");
        assert_eq!(rows(&t), model);
    }
}
