//! Embedder transactions (`Table::transaction`): data files written through the engine's
//! writer, several operations in one commit, conflicts, and the post-commit policy the
//! built-in operations run (SPEC.md §7).

use crate::common;
use std::collections::HashMap;
use std::sync::Arc;

use alluvium::{AppTransaction, ConflictKind, ErrorKind, Table, WriteOptions};
use arrow::array::{ArrayRef, Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};

use crate::batches::{id_p_batch as batch, id_p_schema as schema};

fn table(properties: &[(&str, &str)]) -> Table {
    let t = Table::in_memory();
    let props: HashMap<String, String> = properties
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    t.create(&schema(), &["p".into()], &props).unwrap();
    t
}

#[test]
fn two_writes_and_a_property_change_land_as_one_version() {
    let t = table(&[]);
    let mut txn = t.transaction("EMBEDDER WRITE").unwrap();
    let first = txn.write_files([batch(&[1, 2], "x")]).unwrap();
    let second = txn.write_files([batch(&[3], "y")]).unwrap();
    assert_eq!((first.len(), second.len()), (1, 1));
    assert!(
        first[0].path.starts_with("p=x/"),
        "a partition directory: {}",
        first[0].path
    );
    assert!(first[0].stats.is_some(), "statistics are written");
    txn.add_files(first.into_iter().chain(second));
    txn.set_properties(&HashMap::from([(
        "delta.appendOnly".to_string(),
        "true".to_string(),
    )]))
    .unwrap();
    txn.set_app_transaction(&AppTransaction::new("ingest", 7));
    let summary = txn.commit().unwrap();
    assert_eq!(summary.version, 1, "one commit");
    assert_eq!(summary.files_added, 2);
    let s = t.snapshot().unwrap();
    assert_eq!(s.version(), 1);
    assert_eq!(s.num_files(), 2);
    assert_eq!(
        s.metadata()
            .configuration
            .get("delta.appendOnly")
            .map(String::as_str),
        Some("true")
    );
    assert_eq!(s.app_transaction_version("ingest", 0), Some(7));
    assert_eq!(common::sorted_ids(&t), vec![1, 2, 3]);
}

#[test]
fn files_written_but_not_staged_are_not_committed() {
    let t = table(&[]);
    let mut txn = t.transaction("WRITE").unwrap();
    let kept = txn.write_files([batch(&[1], "x")]).unwrap();
    let _dropped = txn.write_files([batch(&[2], "x")]).unwrap();
    txn.add_files(kept);
    txn.commit().unwrap();
    assert_eq!(common::sorted_ids(&t), vec![1]);
}

#[test]
fn a_batch_that_does_not_fit_the_table_is_refused() {
    let t = table(&[]);
    let mut txn = t.transaction("WRITE").unwrap();
    let other = Arc::new(Schema::new(vec![Field::new("zzz", DataType::Int64, true)]));
    let b =
        RecordBatch::try_new(other, vec![Arc::new(Int64Array::from(vec![1])) as ArrayRef]).unwrap();
    let e = txn.write_files([b]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
}

#[test]
fn a_bad_property_is_refused() {
    let t = table(&[]);
    let mut txn = t.transaction("WRITE").unwrap();
    let e = txn
        .set_properties(&HashMap::from([(
            "delta.checkpointInterval".to_string(),
            "zero".to_string(),
        )]))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
}

#[test]
fn a_conflict_surfaces_with_its_kind() {
    let t = table(&[]);
    t.append([batch(&[1], "x")], &WriteOptions::default())
        .unwrap();
    let mut a = t.transaction("REWRITE").unwrap();
    let mut b = t.transaction("REWRITE").unwrap();
    let file = a.snapshot().files().next().map(|f| f.to_add()).unwrap();
    a.remove_file(&file);
    b.remove_file(&file);
    b.commit().unwrap();
    let e = a.commit().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Conflict, "{e}");
    assert_eq!(e.conflict_kind(), Some(ConflictKind::ConcurrentDeleteRead));
    assert!(e.is_retryable());
}

#[test]
fn a_transaction_runs_the_checkpoint_policy() {
    let t = table(&[("delta.checkpointInterval", "2")]);
    let commit = |id: i64| {
        let mut txn = t.transaction("WRITE").unwrap();
        let adds = txn.write_files([batch(&[id], "x")]).unwrap();
        txn.add_files(adds);
        txn.commit().unwrap()
    };
    let first = commit(1);
    assert_eq!(first.version, 1);
    assert!(first.checkpoint.is_none(), "not due at version 1");
    let second = commit(2);
    assert_eq!(second.version, 2);
    assert!(
        matches!(second.checkpoint, Some(Ok(2))),
        "{:?}",
        second.checkpoint
    );
    let listing = t
        .store()
        .list_dir_from(Some(&alluvium::StorePath::parse("_delta_log").unwrap()), "")
        .unwrap();
    assert!(
        listing.iter().any(|m| m
            .path
            .as_str()
            .ends_with("00000000000000000002.checkpoint.parquet")),
        "the checkpoint file exists"
    );
}
