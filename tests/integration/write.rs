//! The write path: create, append, overwrite, replaceWhere, delete, schema enforcement and
//! evolution, idempotent writes, partition values that need escaping. Every write is read
//! back through a fresh snapshot and compared as a multiset of rows.

use crate::common;

use std::collections::HashMap;
use std::sync::Arc;

use alluvium::{
    Error, OptimizeOptions, ScanBuilder, Table, VersionSpec, WriteOptions, WriteOutcome,
};
use alluvium_txlog::LogError;
use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("part", DataType::Utf8, true),
        Field::new("value", DataType::Utf8, true),
    ]))
}

fn batch(rows: &[(i64, Option<&str>, &str)]) -> RecordBatch {
    RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from(
                rows.iter().map(|r| r.0).collect::<Vec<_>>(),
            )) as ArrayRef,
            Arc::new(StringArray::from(
                rows.iter().map(|r| r.1).collect::<Vec<_>>(),
            )),
            Arc::new(StringArray::from(
                rows.iter().map(|r| Some(r.2)).collect::<Vec<_>>(),
            )),
        ],
    )
    .unwrap()
}

fn new_table(partitioned: bool) -> (tempfile::TempDir, Table) {
    let dir = tempfile::tempdir().unwrap();
    let t = Table::open(dir.path().join("t").to_str().unwrap()).unwrap();
    let parts = if partitioned {
        vec!["part".to_string()]
    } else {
        vec![]
    };
    t.create(&schema(), &parts, alluvium::NO_PROPERTIES)
        .unwrap();
    (dir, t)
}

fn rows(t: &Table, version: Option<u64>) -> Vec<String> {
    let snap = match version {
        Some(v) => t.snapshot_at(VersionSpec::Version(v)).unwrap(),
        None => t.snapshot().unwrap(),
    };
    let batches = ScanBuilder::new(snap)
        .with_columns(["id", "part", "value"])
        .build()
        .unwrap()
        .execute_to_vec()
        .unwrap();
    common::canon_rows(&batches)
}

fn expect(rows: &[(i64, Option<&str>, &str)]) -> Vec<String> {
    common::canon_rows(&[batch(rows)])
}

fn committed(o: impl Into<WriteOutcome>) -> alluvium_txlog::Version {
    match o.into() {
        WriteOutcome::Committed(r) => r.version,
        other => panic!("{other:?}"),
    }
}

#[test]
fn append_and_read_back_with_special_partition_values() {
    let (_d, t) = new_table(true);
    let specials: Vec<(i64, Option<&str>, &str)> = vec![
        (1, Some("A/A"), "slash"),
        (2, Some("B B"), "space"),
        (3, Some("R&D"), "amp"),
        (4, Some("x:y"), "colon"),
        (5, Some("a?"), "question"),
        (6, Some("%2F%2520%25f"), "percent"),
        (7, Some("😈"), "emoji"),
        (8, Some("/lead"), "leading slash"),
        (9, Some("trail/"), "trailing slash"),
        (10, Some(""), "empty"),
        (11, None, "null"),
        (12, Some("k=v"), "equals"),
    ];
    let v = committed(
        t.append([batch(&specials)], &WriteOptions::default())
            .unwrap(),
    );
    assert_eq!(v, 1);
    // The empty string is NULL in a partition value (protocol).
    let mut exp = specials.clone();
    exp[9].1 = None;
    assert_eq!(rows(&t, None), expect(&exp));
    // Pruning on the partition column finds exactly the right file.
    let snap = t.snapshot().unwrap();
    let scan = ScanBuilder::new(snap)
        .with_filter_str("part = '%2F%2520%25f'")
        .unwrap()
        .build()
        .unwrap();
    assert_eq!(scan.files().len(), 1);
    assert_eq!(
        scan.execute_to_vec()
            .unwrap()
            .iter()
            .map(|b| b.num_rows())
            .sum::<usize>(),
        1
    );
}

#[test]
fn overwrite_replace_where_and_delete() {
    let (_d, t) = new_table(true);
    committed(
        t.append(
            [batch(&[
                (1, Some("a"), "x"),
                (2, Some("a"), "y"),
                (3, Some("b"), "z"),
            ])],
            &WriteOptions::default(),
        )
        .unwrap(),
    );
    committed(
        t.append([batch(&[(4, Some("c"), "w")])], &WriteOptions::default())
            .unwrap(),
    );
    // replaceWhere on a partition: only partition a is replaced.
    let v = committed(
        t.overwrite_str(
            [batch(&[(10, Some("a"), "new")])],
            Some("part = 'a'"),
            &WriteOptions::default(),
        )
        .unwrap(),
    );
    assert_eq!(
        rows(&t, None),
        expect(&[
            (10, Some("a"), "new"),
            (3, Some("b"), "z"),
            (4, Some("c"), "w")
        ])
    );
    // New rows must match the predicate.
    let e = t
        .overwrite_str(
            [batch(&[(11, Some("b"), "bad")])],
            Some("part = 'a'"),
            &WriteOptions::default(),
        )
        .unwrap_err();
    assert!(e.to_string().contains("replaceWhere"), "{e}");
    // Delete with a data predicate rewrites only the affected rows.
    committed(
        t.append(
            [batch(&[(20, Some("b"), "keep"), (21, Some("b"), "drop")])],
            &WriteOptions::default(),
        )
        .unwrap(),
    );
    committed(
        t.delete_str("value = 'drop' OR id = 3", &WriteOptions::default())
            .unwrap(),
    );
    assert_eq!(
        rows(&t, None),
        expect(&[
            (10, Some("a"), "new"),
            (4, Some("c"), "w"),
            (20, Some("b"), "keep")
        ])
    );
    // Delete of a whole partition.
    committed(
        t.delete_str("part = 'c'", &WriteOptions::default())
            .unwrap(),
    );
    assert_eq!(
        rows(&t, None),
        expect(&[(10, Some("a"), "new"), (20, Some("b"), "keep")])
    );
    // Full overwrite.
    committed(
        t.overwrite_str(
            [batch(&[(99, None, "only")])],
            None,
            &WriteOptions::default(),
        )
        .unwrap(),
    );
    assert_eq!(rows(&t, None), expect(&[(99, None, "only")]));
    // Time travel still sees every earlier version.
    assert_eq!(
        rows(&t, Some(v)),
        expect(&[
            (10, Some("a"), "new"),
            (3, Some("b"), "z"),
            (4, Some("c"), "w")
        ])
    );
    assert_eq!(
        rows(&t, Some(1)),
        expect(&[
            (1, Some("a"), "x"),
            (2, Some("a"), "y"),
            (3, Some("b"), "z")
        ])
    );
}

#[test]
fn schema_is_enforced_and_merged_on_request() {
    let (_d, t) = new_table(false);
    let wrong = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("id", DataType::Utf8, false)])),
        vec![Arc::new(StringArray::from(vec!["x"])) as ArrayRef],
    )
    .unwrap();
    let e = t.append([wrong], &WriteOptions::default()).unwrap_err();
    assert!(
        matches!(e, Error::SchemaMismatch(ref m) if m.contains("`id`")),
        "{e}"
    );
    // Nullable columns may be missing: they read as null.
    let partial = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)])),
        vec![Arc::new(Int64Array::from(vec![7])) as ArrayRef],
    )
    .unwrap();
    committed(t.append([partial], &WriteOptions::default()).unwrap());
    let extra_schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("part", DataType::Utf8, true),
        Field::new("value", DataType::Utf8, true),
        Field::new("extra", DataType::Int64, true),
    ]));
    let extra = RecordBatch::try_new(
        extra_schema,
        vec![
            Arc::new(Int64Array::from(vec![1])) as ArrayRef,
            Arc::new(StringArray::from(vec![Some("p")])),
            Arc::new(StringArray::from(vec![Some("v")])),
            Arc::new(Int64Array::from(vec![42])),
        ],
    )
    .unwrap();
    assert!(matches!(
        t.append([extra.clone()], &WriteOptions::default())
            .unwrap_err(),
        Error::SchemaMismatch(_)
    ));
    let opts = WriteOptions::default().with_merge_schema(true);
    committed(t.append([extra], &opts).unwrap());
    let snap = t.snapshot().unwrap();
    assert_eq!(snap.schema().fields.len(), 4);
    assert!(snap.schema().fields[3].nullable);
    // A NOT NULL column refuses nulls.
    let nulls = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, true),
            Field::new("part", DataType::Utf8, true),
            Field::new("value", DataType::Utf8, true),
        ])),
        vec![
            Arc::new(Int64Array::from(vec![None])) as ArrayRef,
            Arc::new(StringArray::from(vec![Some("p")])),
            Arc::new(StringArray::from(vec![Some("v")])),
        ],
    )
    .unwrap();
    let e = t.append([nulls], &WriteOptions::default()).unwrap_err();
    assert!(e.to_string().contains("NOT NULL"), "{e}");
}

#[test]
fn idempotent_writes_skip_replays() {
    let (_d, t) = new_table(false);
    let opts =
        |v| WriteOptions::default().with_app_transaction(alluvium::AppTransaction::new("sink", v));
    committed(t.append([batch(&[(1, None, "a")])], &opts(5)).unwrap());
    // Replaying the same version, or an older one, writes nothing.
    for v in [5, 4] {
        match t.append([batch(&[(1, None, "a")])], &opts(v)).unwrap() {
            WriteOutcome::Skipped {
                recorded_version: 5,
                table_version: 1,
                ..
            } => {}
            other => panic!("{other:?}"),
        }
    }
    committed(t.append([batch(&[(2, None, "b")])], &opts(6)).unwrap());
    assert_eq!(rows(&t, None), expect(&[(1, None, "a"), (2, None, "b")]));
    assert_eq!(
        t.snapshot().unwrap().app_transaction_version("sink", 0),
        Some(6)
    );
}

#[test]
fn creating_twice_is_a_typed_error() {
    let (_d, t) = new_table(false);
    let e = t
        .create(&schema(), &[], alluvium::NO_PROPERTIES)
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::Mvcc(alluvium_mvcc::MvccError::TableAlreadyExists { .. })
        ),
        "{e}"
    );
}

#[test]
fn append_only_tables_refuse_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let t = Table::open(dir.path().to_str().unwrap()).unwrap();
    let props = HashMap::from([("delta.appendOnly".to_string(), "true".to_string())]);
    t.create(&schema(), &[], &props).unwrap();
    committed(
        t.append([batch(&[(1, None, "a")])], &WriteOptions::default())
            .unwrap(),
    );
    let e = t
        .delete_str("id = 1", &WriteOptions::default())
        .unwrap_err();
    assert!(e.to_string().contains("append-only"), "{e}");
    // Nothing was left behind: only the original data file exists.
    let files: Vec<_> = walk(dir.path())
        .into_iter()
        .filter(|p| p.ends_with(".parquet"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
}

#[test]
fn unknown_writer_features_are_refused() {
    let (_d, t) = new_table(false);
    // Another engine upgrades the table with a writer feature alluvium does not implement.
    let log =
        std::path::Path::new(&t.uri().trim_start_matches("file://").to_string()).join("_delta_log");
    std::fs::write(
        log.join("00000000000000000001.json"),
        "{\"protocol\":{\"minReaderVersion\":1,\"minWriterVersion\":7,\"writerFeatures\":[\"someFutureFeature\",\"domainMetadata\"]}}\n",
    )
    .unwrap();
    let e = t
        .append([batch(&[(1, None, "a")])], &WriteOptions::default())
        .unwrap_err();
    assert!(
        matches!(e.as_log_error(), Some(LogError::UnsupportedFeature { feature, .. }) if feature == "someFutureFeature"),
        "{e}"
    );
    // Reading still works.
    assert!(rows(&t, None).is_empty());
}

fn walk(p: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(p).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            out.extend(walk(&e.path()));
        } else {
            out.push(e.path().to_string_lossy().into_owned());
        }
    }
    out
}

/// Partition columns must name distinct columns of the schema, and property values the
/// engine would silently replace by a default are refused; nothing is created either way.
#[test]
fn create_refuses_bad_partitioning_and_out_of_range_properties() {
    let dir = tempfile::tempdir().unwrap();
    let t = Table::open(dir.path().join("t").to_str().unwrap()).unwrap();
    let no_props: HashMap<String, String> = HashMap::new();
    for (partitions, why) in [
        (vec!["part", "part"], "listed twice"),
        (vec!["part", "PART"], "listed twice"),
        (vec!["nope"], "not in the schema"),
    ] {
        let partitions: Vec<String> = partitions.into_iter().map(String::from).collect();
        let e = t.create(&schema(), &partitions, &no_props).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
        assert!(e.to_string().contains(why), "{partitions:?}: {e}");
    }
    for (k, v) in [
        ("delta.checkpointInterval", "0"),
        ("delta.checkpointInterval", "-3"),
        ("delta.targetFileSize", "-1"),
        ("delta.targetFileSize", "0"),
        ("delta.dataSkippingNumIndexedCols", "-2"),
        ("delta.logRetentionDuration", "interval -1 days"),
        ("delta.deletedFileRetentionDuration", "-7 days"),
        ("delta.setTransactionRetentionDuration", "interval 2 months"),
        ("delta.enableExpiredLogCleanup", "yes"),
        ("delta.checkpointPolicy", "v3"),
    ] {
        let props = HashMap::from([(k.to_string(), v.to_string())]);
        let e = t.create(&schema(), &[], &props).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{k}={v}: {e}");
        assert!(e.to_string().contains(k), "{k}={v}: {e}");
    }
    assert!(t.snapshot().is_err(), "nothing may have been created");
    let ok = HashMap::from([
        ("delta.checkpointInterval".to_string(), "1".to_string()),
        ("delta.targetFileSize".to_string(), "1048576".to_string()),
        (
            "delta.dataSkippingNumIndexedCols".to_string(),
            "-1".to_string(),
        ),
    ]);
    t.create(&schema(), &["part".to_string()], &ok).unwrap();
}

/// DELETE, UPDATE, MERGE and OPTIMIZE write their new and rewritten files (and change-data
/// files) in the codec their options name, as deltalake's `writer_properties` asks; the
/// next operation takes the table's codec again.
#[test]
fn dml_and_optimize_write_their_files_in_the_chosen_codec() {
    let dir = tempfile::tempdir().unwrap();
    let t = Table::open(dir.path().join("t").to_str().unwrap()).unwrap();
    t.create(&schema(), &[], [("delta.enableChangeDataFeed", "true")])
        .unwrap();
    for rows in [
        [(1, None, "a"), (2, None, "b")],
        [(3, None, "c"), (4, None, "d")],
    ] {
        t.append([batch(&rows)], &WriteOptions::default()).unwrap();
    }
    // The files each step added, with their codecs.
    let mut seen = codecs(dir.path());
    let added = |seen: &mut Vec<(String, String)>| {
        let now = codecs(dir.path());
        let new: Vec<(String, String)> =
            now.iter().filter(|f| !seen.contains(f)).cloned().collect();
        *seen = now;
        new
    };
    let opts = |codec: &str| WriteOptions::default().with_compression(codec);
    t.delete_str("id = 1", &opts("zstd")).unwrap();
    let new = added(&mut seen);
    // The rewritten file and the change-data file.
    assert_eq!(new.len(), 2, "{new:?}");
    assert!(
        new.iter()
            .all(|(n, c)| n.ends_with(".zstd.parquet") && c.starts_with("ZSTD")),
        "{new:?}"
    );
    t.update_str("value = 'x'", Some("id = 3"), &opts("gzip"))
        .unwrap();
    let new = added(&mut seen);
    assert!(!new.is_empty());
    assert!(new.iter().all(|(_, c)| c.starts_with("GZIP")), "{new:?}");
    t.merge([batch(&[(4, None, "y"), (5, None, "z")])], "t.id = s.id")
        .when_matched_update_all(None)
        .when_not_matched_insert_all(None)
        .execute(&opts("lz4_raw"))
        .unwrap();
    let new = added(&mut seen);
    assert!(!new.is_empty());
    assert!(new.iter().all(|(_, c)| c == "LZ4_RAW"), "{new:?}");
    t.optimize(&OptimizeOptions::default().with_compression("brotli".to_string()))
        .unwrap();
    let new = added(&mut seen);
    assert_eq!(new.len(), 1, "{new:?}");
    assert!(new[0].1.starts_with("BROTLI"), "{new:?}");
    // replaceWhere rewrites the files it partly matches, in the write's codec too.
    t.overwrite_str([batch(&[(6, None, "w")])], Some("id >= 5"), &opts("zstd"))
        .unwrap();
    let new = added(&mut seen);
    assert!(new.len() >= 2, "{new:?}");
    assert!(new.iter().all(|(_, c)| c.starts_with("ZSTD")), "{new:?}");
    // Without a codec, the table's (Snappy).
    t.delete_str("id = 2", &WriteOptions::default()).unwrap();
    let new = added(&mut seen);
    assert!(new.iter().all(|(_, c)| c == "SNAPPY"), "{new:?}");
    // A name that is no codec is refused before anything is written.
    let version = t.snapshot().unwrap().version();
    let e = t
        .optimize(&OptimizeOptions::default().with_compression("lzo".to_string()))
        .unwrap_err();
    assert_eq!(e.kind(), alluvium::ErrorKind::InvalidInput, "{e}");
    // The facade names the codecs it writes.
    assert!(e.to_string().contains("zstd(9)"), "{e}");
    // The compaction crate refuses it too, for its direct users, before any rewrite.
    let e = alluvium_compaction::optimize::optimize(
        &crate::mvcc(&t.snapshot().unwrap()),
        &OptimizeOptions::default().with_compression("lzo".to_string()),
        &|_| {},
    )
    .unwrap_err();
    assert!(
        matches!(e, alluvium_compaction::MaintenanceError::Rewrite(_)),
        "{e}"
    );
    let e = t.delete_str("id = 3", &opts("lzo")).unwrap_err();
    assert_eq!(e.kind(), alluvium::ErrorKind::InvalidInput, "{e}");
    assert_eq!(t.snapshot().unwrap().version(), version);
    assert!(added(&mut seen).is_empty());
}

/// `create_with_options` records the commit fields (and the application transaction) in
/// version 0, and refuses a reserved field before anything is created.
#[test]
fn create_with_options_records_the_commit_fields() {
    let dir = tempfile::tempdir().unwrap();
    let t = Table::open(dir.path().join("t").to_str().unwrap()).unwrap();
    let mut options = WriteOptions::default()
        .with_user_metadata("first load")
        .with_app_transaction(alluvium::AppTransaction::new("loader", 1));
    options
        .commit_info
        .insert("job".into(), serde_json::json!("nightly"));
    let o = t
        .create_with_options(&schema(), &[], alluvium::NO_PROPERTIES, &options)
        .unwrap();
    assert!(matches!(o, WriteOutcome::Committed(_)));
    let s = t.snapshot().unwrap();
    let ci = s.commit_info().unwrap();
    assert_eq!(ci.operation(), Some("CREATE TABLE"));
    assert_eq!(ci.0["userMetadata"], "first load");
    assert_eq!(ci.0["job"], "nightly");
    assert_eq!(s.app_transaction_version("loader", 0), Some(1));
    let mut reserved = WriteOptions::default();
    reserved
        .commit_info
        .insert("operation".into(), serde_json::json!("X"));
    let other = Table::open(dir.path().join("u").to_str().unwrap()).unwrap();
    let e = other
        .create_with_options(&schema(), &[], alluvium::NO_PROPERTIES, &reserved)
        .unwrap_err();
    assert_eq!(e.kind(), alluvium::ErrorKind::InvalidInput, "{e}");
    assert!(other.snapshot().is_err(), "nothing may have been created");
}

/// The `predicate` a commit recorded in `commitInfo.operationParameters`.
fn recorded_predicate(t: &Table, version: u64) -> String {
    let entries = t.history(None).unwrap();
    let entry = entries.iter().find(|e| e.version == version).unwrap();
    let info = entry.commit_info.as_ref().unwrap();
    let text = info.0["operationParameters"]["predicate"].as_str().unwrap();
    serde_json::from_str::<Vec<String>>(text).unwrap().remove(0)
}

/// Typed predicates (`Expr`) drive delete and replaceWhere like their text forms, and are
/// recorded in the commit as SQL text; the `_str` forms record the text as written.
#[test]
fn typed_predicates_delete_and_replace_rows() {
    use alluvium::{CmpOp, Expr, Literal};
    let (_d, t) = new_table(true);
    committed(
        t.append(
            [batch(&[
                (1, Some("a"), "x"),
                (2, Some("a"), "y"),
                (3, Some("b"), "z"),
            ])],
            &WriteOptions::default(),
        )
        .unwrap(),
    );
    let in_a = Expr::column("part").cmp(CmpOp::Eq, Literal::String("a".into()));
    let v = committed(
        t.overwrite(
            [batch(&[(10, Some("a"), "new")])],
            Some(&in_a),
            &WriteOptions::default(),
        )
        .unwrap(),
    );
    assert_eq!(recorded_predicate(&t, v), "part = 'a'");
    assert_eq!(
        rows(&t, None),
        expect(&[(10, Some("a"), "new"), (3, Some("b"), "z")])
    );
    let big = Expr::column("id")
        .cmp(CmpOp::Gt, Literal::Number("5".into()))
        .or(Expr::column("value").cmp(CmpOp::Eq, Literal::String("it's".into())));
    let v = committed(t.delete(&big, &WriteOptions::default()).unwrap());
    assert_eq!(recorded_predicate(&t, v), "id > 5 OR value = 'it''s'");
    assert_eq!(rows(&t, None), expect(&[(3, Some("b"), "z")]));
    let v = committed(t.delete_str("id=3", &WriteOptions::default()).unwrap());
    assert_eq!(recorded_predicate(&t, v), "id=3", "the text as written");
    assert_eq!(rows(&t, None), expect(&[]));
}

/// DELETE with general expressions: a partition-only expression is not judged from
/// partition values (no whole partition is dropped unread), failing operands run only where
/// needed, and type errors and overflows fail before anything is committed.
#[test]
fn general_expressions_delete_exactly_the_matching_rows() {
    use alluvium::Expr;
    let (_d, t) = new_table(true);
    let rows_in = [
        (1, Some("a"), "x"),
        (2, Some("a"), "y"),
        (3, Some("b"), "z"),
        (4, None, "w"),
        (0, Some("c"), "v"),
    ];
    let v0 = committed(
        t.append([batch(&rows_in)], &WriteOptions::default())
            .unwrap(),
    );
    for bad in [
        "id + 'x' = 1",
        "part * 2 = 1",
        "nope = 1",
        "id * 9223372036854775807 > 0",
    ] {
        assert!(
            t.delete_str(bad, &WriteOptions::default()).is_err(),
            "{bad}"
        );
    }
    assert_eq!(t.snapshot().unwrap().version(), v0, "nothing committed");
    // Partition column only, but not exact from partition values: rows are evaluated.
    committed(
        t.delete_str(
            "COALESCE(part, 'a') = 'a' AND id % 2 = 0",
            &WriteOptions::default(),
        )
        .unwrap(),
    );
    assert_eq!(
        rows(&t, None),
        expect(&[
            (1, Some("a"), "x"),
            (3, Some("b"), "z"),
            (0, Some("c"), "v")
        ])
    );
    // `10 / id` is not evaluated where `id != 0` is FALSE.
    committed(
        t.delete_str("id != 0 AND 10 / id > 4", &WriteOptions::default())
            .unwrap(),
    );
    assert_eq!(
        rows(&t, None),
        expect(&[(3, Some("b"), "z"), (0, Some("c"), "v")])
    );
    let case = Expr::case_when(
        vec![(Expr::column("part").eq(Expr::lit("b")), Expr::lit(true))],
        None,
    );
    let v = committed(t.delete(&case, &WriteOptions::default()).unwrap());
    assert_eq!(
        recorded_predicate(&t, v),
        "CASE WHEN part = 'b' THEN TRUE END"
    );
    assert_eq!(rows(&t, None), expect(&[(0, Some("c"), "v")]));
}

/// A typed integer literal (`Literal::Typed`, as an embedder builds one from a key it
/// holds) compares with a column of any integer width, in `=` and in `IN` lists, exactly as
/// the same number in filter text does.
#[test]
fn typed_integer_literals_filter_every_integer_width() {
    use alluvium_expr::{CmpOp, Expr, Literal};
    use alluvium_txlog::scalar::Scalar;
    use arrow::array::{Int16Array, Int32Array};
    let t = Table::in_memory();
    let schema = Arc::new(Schema::new(vec![
        Field::new("i", DataType::Int32, true),
        Field::new("s", DataType::Int16, true),
        Field::new("l", DataType::Int64, true),
    ]));
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int32Array::from(vec![1, 2, 3, 4])),
        Arc::new(Int16Array::from(vec![1, 2, 3, 4])),
        Arc::new(Int64Array::from(vec![1, 2, 3, 4])),
    ];
    t.create(&schema, &[], alluvium::NO_PROPERTIES).unwrap();
    t.append(
        [RecordBatch::try_new(schema, cols).unwrap()],
        &WriteOptions::default(),
    )
    .unwrap();
    let count = |filter: Expr| -> usize {
        ScanBuilder::new(t.snapshot().unwrap())
            .with_filter(filter)
            .build()
            .unwrap()
            .execute_to_vec()
            .unwrap()
            .iter()
            .map(RecordBatch::num_rows)
            .sum()
    };
    for col in ["i", "s", "l"] {
        for lits in [
            vec![Scalar::Integer(2), Scalar::Integer(4)],
            vec![Scalar::Long(2), Scalar::Long(4)],
            vec![Scalar::Short(2), Scalar::Short(4)],
        ] {
            let list: Vec<Literal> = lits.iter().cloned().map(Literal::Typed).collect();
            assert_eq!(count(Expr::column(col).is_in(list)), 2, "{col} IN {lits:?}");
            assert_eq!(
                count(Expr::column(col).cmp(CmpOp::Eq, Literal::Typed(lits[0].clone()))),
                1,
                "{col} = {:?}",
                lits[0]
            );
        }
    }
}

#[test]
fn commit_info_fields_of_the_embedder_are_recorded_and_reserved_names_refused() {
    let (_d, t) = new_table(false);
    let options = WriteOptions::default().with_commit_info(
        [
            ("userName".to_string(), serde_json::json!("etl")),
            ("job".to_string(), serde_json::json!({"run": 7})),
        ]
        .into(),
    );
    t.append([batch(&[(1, None, "a")])], &options).unwrap();
    t.delete_str("id = 1", &options).unwrap();
    for e in t.history(Some(2)).unwrap() {
        let ci = e.commit_info.unwrap();
        assert_eq!(ci.0["userName"], "etl");
        assert_eq!(ci.0["job"]["run"], 7);
    }
    let reserved = WriteOptions::default()
        .with_commit_info([("operation".to_string(), serde_json::json!("FAKE"))].into());
    let v = t.snapshot().unwrap().version();
    let e = t.append([batch(&[(2, None, "b")])], &reserved).unwrap_err();
    assert_eq!(e.kind(), alluvium::ErrorKind::InvalidInput, "{e}");
    assert!(e.to_string().contains("commitInfo.operation"), "{e}");
    assert_eq!(t.snapshot().unwrap().version(), v);
}

/// The codecs of a table's data files' column chunks, by file name.
fn codecs(dir: &std::path::Path) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = walk(dir)
        .into_iter()
        .filter(|p| p.ends_with(".parquet") && !p.contains("_delta_log"))
        .map(|p| {
            let file = std::fs::File::open(&p).unwrap();
            let reader = parquet::file::serialized_reader::SerializedFileReader::new(file).unwrap();
            let meta = parquet::file::reader::FileReader::metadata(&reader);
            let codec = meta.row_group(0).column(0).compression().to_string();
            let name = std::path::Path::new(&p)
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (name, codec)
        })
        .collect();
    out.sort();
    out
}

/// A write may choose its data files' codec (deltalake's `WriterProperties(compression=)`)
/// for its own files only: the table's properties are not changed, the next write takes
/// the table's codec again, and a name that is no codec is refused before anything is
/// written.
#[test]
fn a_write_chooses_the_codec_of_its_own_files() {
    let (dir, t) = new_table(false);
    t.append(
        [batch(&[(1, None, "a")])],
        &WriteOptions::default().with_compression("ZSTD(3)"),
    )
    .unwrap();
    let first = codecs(dir.path());
    assert_eq!(first.len(), 1);
    assert!(first[0].0.ends_with(".zstd.parquet"), "{first:?}");
    // (Parquet records the codec, not its level.)
    assert!(first[0].1.starts_with("ZSTD"), "{first:?}");
    assert!(
        !t.snapshot()
            .unwrap()
            .metadata()
            .configuration
            .contains_key("delta.parquet.compression.codec")
    );
    t.append([batch(&[(2, None, "b")])], &WriteOptions::default())
        .unwrap();
    let both = codecs(dir.path());
    assert!(
        both.iter()
            .any(|(n, c)| n.ends_with(".snappy.parquet") && c == "SNAPPY"),
        "{both:?}"
    );
    let version = t.snapshot().unwrap().version();
    let e = t
        .append(
            [batch(&[(3, None, "c")])],
            &WriteOptions::default().with_compression("lzo"),
        )
        .unwrap_err();
    assert_eq!(e.kind(), alluvium::ErrorKind::InvalidInput, "{e}");
    assert!(e.to_string().contains("lzo"), "{e}");
    assert_eq!(t.snapshot().unwrap().version(), version);
    assert_eq!(codecs(dir.path()).len(), 2, "no file written");
    // A table created with its data: the files take the write's codec, the properties
    // are those given.
    let created = Table::open(dir.path().join("c").to_str().unwrap()).unwrap();
    created
        .create_with_data(
            &schema(),
            &[],
            alluvium::NO_PROPERTIES,
            [batch(&[(1, None, "a")])],
            &WriteOptions::default().with_compression("gzip"),
        )
        .unwrap();
    let files = codecs(&dir.path().join("c"));
    assert!(
        files
            .iter()
            .all(|(n, c)| n.ends_with(".gz.parquet") && c.starts_with("GZIP")),
        "{files:?}"
    );
    assert!(
        created
            .snapshot()
            .unwrap()
            .metadata()
            .configuration
            .is_empty()
    );
}
