//! Writers take streams: fallible sources (`Result` items, Arrow readers) are consumed one
//! batch at a time, a failing source commits nothing and leaves no file, and a table can
//! be created with its first rows in one commit.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use alluvium::{
    AppTransaction, Error, ErrorKind, ScanBuilder, Table, VersionSpec, WriteOptions, WriteOutcome,
};
use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};

use crate::common;

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("part", DataType::Utf8, true),
    ]))
}

fn batch(ids: std::ops::Range<i64>) -> RecordBatch {
    let part: Vec<Option<String>> = ids.clone().map(|i| Some(format!("p{}", i % 3))).collect();
    RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from_iter_values(ids)) as ArrayRef,
            Arc::new(StringArray::from(part)),
        ],
    )
    .unwrap()
}

fn ids(t: &Table) -> Vec<i64> {
    common::sorted_ids(t)
}

/// Every file under `dir` (data files and the log), relative.
fn files(dir: &std::path::Path) -> Vec<String> {
    fn walk(d: &std::path::Path, root: &std::path::Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(d) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, root, out);
            } else {
                out.push(p.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

fn table() -> (tempfile::TempDir, Table) {
    let dir = tempfile::tempdir().unwrap();
    let t = Table::open(dir.path().to_str().unwrap()).unwrap();
    (dir, t)
}

#[test]
fn append_takes_a_fallible_stream() {
    let (_d, t) = table();
    t.create(&schema(), &["part".into()], alluvium::NO_PROPERTIES)
        .unwrap();
    let pulled = Arc::new(AtomicUsize::new(0));
    let p = pulled.clone();
    let source = (0..5).map(move |i| {
        p.fetch_add(1, Ordering::SeqCst);
        Ok::<_, std::io::Error>(batch(i * 10..i * 10 + 10))
    });
    let o = t.append(source, &WriteOptions::default()).unwrap();
    assert_eq!(o.report().unwrap().version, 1);
    assert_eq!(pulled.load(Ordering::SeqCst), 5);
    assert_eq!(ids(&t), (0..50).collect::<Vec<_>>());
}

#[test]
fn a_failing_source_commits_nothing_and_leaves_no_file() {
    let (dir, t) = table();
    t.create(&schema(), &["part".into()], alluvium::NO_PROPERTIES)
        .unwrap();
    let before = files(dir.path());
    let source = (0..4).map(|i| {
        if i == 3 {
            Err(std::io::Error::new(
                std::io::ErrorKind::ConnectionReset,
                "the producer went away",
            ))
        } else {
            Ok(batch(i * 10..i * 10 + 10))
        }
    });
    // Tiny files: each batch is uploaded before the next is pulled, so the failure finds
    // files to delete.
    let small = WriteOptions::default().with_target_file_size(1);
    let e = t.append(source, &small).unwrap_err();
    assert!(matches!(e, Error::Input(_)), "{e:?}");
    assert_eq!(e.kind(), ErrorKind::InvalidInput);
    assert!(e.to_string().contains("the producer went away"), "{e}");
    assert_eq!(t.snapshot().unwrap().version(), 0);
    assert_eq!(
        files(dir.path()),
        before,
        "the batches before the failure were deleted"
    );
    // The same through Transaction::write_files and overwrite.
    let mut txn = t.transaction("INGEST").unwrap();
    let failing = [Ok(batch(0..3)), Err(Error::InvalidArgument("stop".into()))];
    let e = txn.write_files(failing).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e:?}");
    let failing = [Ok(batch(0..3)), Err(Error::InvalidArgument("stop".into()))];
    t.overwrite(failing, None, &small).unwrap_err();
    assert_eq!(files(dir.path()), before);
}

#[test]
fn an_arrow_reader_feeds_a_writer_and_keeps_the_error_type() {
    let (_d, t) = table();
    t.create(&schema(), &[], alluvium::NO_PROPERTIES).unwrap();
    let reader = arrow::record_batch::RecordBatchIterator::new(
        vec![Ok(batch(0..4)), Ok(batch(4..8))],
        schema(),
    );
    t.append(reader, &WriteOptions::default()).unwrap();
    assert_eq!(ids(&t), (0..8).collect::<Vec<_>>());
    // An alluvium error carried inside an Arrow error (as alluvium's own readers carry
    // theirs) comes back typed.
    let carried =
        arrow::error::ArrowError::ExternalError(Box::new(Error::SchemaMismatch("upstream".into())));
    let reader = arrow::record_batch::RecordBatchIterator::new(
        vec![Ok(batch(8..9)), Err(carried)],
        schema(),
    );
    let e = t.append(reader, &WriteOptions::default()).unwrap_err();
    assert!(matches!(e, Error::SchemaMismatch(_)), "{e:?}");
}

#[test]
fn create_with_data_writes_version_zero_with_the_rows() {
    let (_d, t) = table();
    let props = HashMap::from([("delta.columnMapping.mode".to_string(), "name".to_string())]);
    let options = WriteOptions::default().with_app_transaction(AppTransaction::new("loader", 7));
    let o = t
        .create_with_data(
            &schema(),
            &["part".into()],
            &props,
            [batch(0..10), batch(10..20)],
            &options,
        )
        .unwrap();
    let WriteOutcome::Committed(r) = o else {
        panic!("{o:?}")
    };
    assert_eq!(r.version, 0);
    let s = t.snapshot().unwrap();
    assert_eq!(s.version(), 0);
    assert_eq!(s.partition_columns(), ["part"]);
    assert_eq!(
        s.column_mapping(),
        alluvium_txlog::column_mapping::ColumnMappingMode::Name
    );
    assert_eq!(s.app_transaction_version("loader", i64::MAX), Some(7));
    assert_eq!(ids(&t), (0..20).collect::<Vec<_>>());
    // Partition values are read back from the log, by their logical name.
    let parts = ScanBuilder::new(s)
        .with_columns(["part"])
        .with_filter_str("part = 'p1'")
        .unwrap()
        .build()
        .unwrap()
        .execute_to_vec()
        .unwrap();
    assert_eq!(parts.iter().map(|b| b.num_rows()).sum::<usize>(), 7);
    let h = t.history(None).unwrap();
    assert_eq!(h.len(), 1);
    let info = h[0].commit_info.as_ref().unwrap();
    assert_eq!(info.operation(), Some("CREATE TABLE AS SELECT"));
    assert_eq!(
        info.0["operationMetrics"]["numOutputRows"],
        serde_json::json!("20")
    );
}

#[test]
fn create_with_data_on_an_existing_table_fails_and_leaves_no_file() {
    let (dir, t) = table();
    t.create_with_data(
        &schema(),
        &[],
        alluvium::NO_PROPERTIES,
        [batch(0..3)],
        &WriteOptions::default(),
    )
    .unwrap();
    let before = files(dir.path());
    let e = t
        .create_with_data(
            &schema(),
            &[],
            alluvium::NO_PROPERTIES,
            [batch(3..6)],
            &WriteOptions::default(),
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AlreadyExists, "{e}");
    assert_eq!(files(dir.path()), before);
    assert_eq!(ids(&t), vec![0, 1, 2]);
    // A failing source leaves nothing at a new location: not even a log (tiny files, so
    // that the rows before the failure were uploaded and had to be deleted).
    let (dir, t) = table();
    let failing = [Ok(batch(0..3)), Err(Error::InvalidArgument("stop".into()))];
    t.create_with_data(
        &schema(),
        &[],
        alluvium::NO_PROPERTIES,
        failing,
        &WriteOptions::default().with_target_file_size(1),
    )
    .unwrap_err();
    assert_eq!(files(dir.path()), Vec::<String>::new());
    assert!(t.snapshot_at(VersionSpec::Latest).is_err());
}
