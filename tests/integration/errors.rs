//! The facade error classification (`Error::kind`, `is_retryable`, `conflict_kind`,
//! `is_not_found`) on errors raised by real operations, whichever layer raised them and
//! however deeply they are wrapped (SPEC.md §11).

use std::sync::Arc;
use std::time::Duration;

use alluvium::{
    ConflictKind, ErrorKind, InMemoryStore, OptimizeOptions, RetryPolicy, StoreRef, Table,
    VersionSpec, WriteOptions,
};
use alluvium_storage::{Fault, FaultyStore};
use alluvium_txlog::log_path::commit_path;

use crate::batches::{id_p_batch as batch, id_p_schema as schema};

fn table_on(store: StoreRef) -> Table {
    let t = Table::from_store(store);
    t.create(&schema(), &["p".into()], alluvium::NO_PROPERTIES)
        .unwrap();
    t.append([batch(&[1, 2], "x")], &WriteOptions::default())
        .unwrap();
    t
}

#[test]
fn a_missing_table_is_not_found() {
    let e = Table::in_memory().snapshot().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
    assert!(e.is_not_found());
    assert!(!e.is_retryable());
    assert_eq!(e.conflict_kind(), None);
}

#[test]
fn a_version_past_the_latest_is_not_found() {
    let t = table_on(Arc::new(InMemoryStore::new()));
    let e = t.snapshot_at(VersionSpec::Version(99)).unwrap_err();
    assert!(e.is_not_found(), "{e}");
}

/// A storage `NotFound` arrives wrapped three levels deep (`Mvcc(Log(Storage(..)))`): a
/// commit file deleted between the listing and the read.
#[test]
fn a_storage_not_found_through_the_layers_is_not_found() {
    let e = alluvium::Error::from(alluvium::MvccError::Log(alluvium::LogError::Storage(
        alluvium::StorageError::NotFound {
            path: "_delta_log/00000000000000000001.json".into(),
        },
    )));
    assert!(e.is_not_found(), "{e}");
    let e = alluvium::Error::from(alluvium::MaintenanceError::Mvcc(alluvium::MvccError::Log(
        alluvium::LogError::Storage(alluvium::StorageError::NotFound { path: "x".into() }),
    )));
    assert!(e.is_not_found(), "{e}");
}

#[test]
fn a_corrupt_commit_is_corrupt() {
    let store: StoreRef = Arc::new(InMemoryStore::new());
    let t = table_on(store.clone());
    store
        .put_if_absent(&commit_path(2), "{\"add\":{not json\n".into())
        .unwrap();
    let e = t.snapshot().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corrupt, "{e}");
    assert!(!e.is_not_found());
}

#[test]
fn an_unsupported_reader_feature_is_unsupported() {
    let store: StoreRef = Arc::new(InMemoryStore::new());
    let t = table_on(store.clone());
    store
        .put_if_absent(
            &commit_path(2),
            "{\"protocol\":{\"minReaderVersion\":3,\"minWriterVersion\":7,\"readerFeatures\":[\"futureThing\"],\"writerFeatures\":[\"futureThing\"]}}\n".into(),
        )
        .unwrap();
    let e = t.snapshot().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
}

#[test]
fn a_bad_predicate_is_invalid_input() {
    let t = table_on(Arc::new(InMemoryStore::new()));
    let e = t
        .delete_str("id = = 1", &WriteOptions::default())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
    let e = t
        .delete_str("nope = 1", &WriteOptions::default())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
}

#[test]
fn creating_twice_is_already_exists() {
    let t = table_on(Arc::new(InMemoryStore::new()));
    let e = t
        .create(&schema(), &[], alluvium::NO_PROPERTIES)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AlreadyExists, "{e}");
}

#[test]
fn a_real_conflict_is_a_retryable_conflict() {
    let t = table_on(Arc::new(InMemoryStore::new()));
    let s = t.snapshot().unwrap();
    t.delete_str("p = 'x'", &WriteOptions::default()).unwrap();
    let pinned = WriteOptions::default().with_read_snapshot(s);
    let e = t.delete_str("p = 'x'", &pinned).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Conflict, "{e}");
    assert_eq!(e.conflict_kind(), Some(ConflictKind::ConcurrentDeleteRead));
    assert!(e.is_retryable());
}

/// A conflict raised inside OPTIMIZE arrives as `Maintenance(Mvcc(Conflict))` (or through
/// the rewriter's boxed error): the classification sees it all the same.
#[test]
fn a_conflict_inside_optimize_is_classified() {
    let e = alluvium::Error::from(alluvium::MaintenanceError::Mvcc(
        alluvium::MvccError::Conflict {
            kind: ConflictKind::MetadataChanged,
            winning_version: 3,
            detail: "schema changed".into(),
        },
    ));
    assert_eq!(e.kind(), ErrorKind::Conflict);
    assert_eq!(e.conflict_kind(), Some(ConflictKind::MetadataChanged));
    assert!(!e.is_retryable(), "a metadata change needs a re-plan");
}

/// OPTIMIZE's own refusals come through the maintenance layer.
#[test]
fn an_optimize_filter_over_data_columns_is_refused() {
    let t = table_on(Arc::new(InMemoryStore::new()));
    let e = t
        .optimize(
            &OptimizeOptions::default()
                .with_partition_filter(alluvium::parse_expr("id = 1").unwrap()),
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Refused, "{e}");
}

/// A put that fails without proof of having had no effect, with no retry budget left,
/// leaves the outcome unknown: classified so, and not retryable blindly.
#[test]
fn an_unsettled_commit_is_commit_outcome_unknown() {
    let mut unknown = 0;
    for at in 1.. {
        let inner: StoreRef = Arc::new(InMemoryStore::new());
        table_on(inner.clone());
        let faulty = Arc::new(FaultyStore::new(inner, at, Fault::ErrorBefore));
        let t = Table::from_store(faulty.clone());
        let options = WriteOptions::default().with_retry(
            RetryPolicy::default()
                .with_initial_backoff(Duration::ZERO)
                .with_max_backoff(Duration::ZERO)
                .with_budget(Duration::ZERO)
                .with_max_attempts(None),
        );
        let result = t.append([batch(&[3], "y")], &options);
        if faulty.operations() < at {
            break;
        }
        if let Err(e) = result
            && e.kind() == ErrorKind::CommitOutcomeUnknown
        {
            unknown += 1;
            assert!(!e.is_retryable(), "{e}");
            assert_eq!(e.conflict_kind(), None);
        }
    }
    assert_eq!(unknown, 1, "the commit put was the one faulted");
}

/// A data file OPTIMIZE cannot read arrives through compaction's boxed rewriter error:
/// still classified by what went wrong.
#[test]
fn a_corrupt_data_file_inside_optimize_is_corrupt() {
    let store: StoreRef = Arc::new(InMemoryStore::new());
    let t = table_on(store.clone());
    t.append([batch(&[3], "x")], &WriteOptions::default())
        .unwrap();
    let victim = t
        .snapshot()
        .unwrap()
        .files()
        .next()
        .map(|f| f.to_add())
        .unwrap();
    store
        .put(
            &alluvium::StorePath::parse(victim.path.as_str()).unwrap(),
            "not parquet".into(),
        )
        .unwrap();
    let e = t.optimize(&OptimizeOptions::default()).unwrap_err();
    assert!(
        matches!(
            e,
            alluvium::Error::Maintenance(alluvium::MaintenanceError::Rewrite(_))
        ),
        "{e:?}"
    );
    assert_eq!(e.kind(), ErrorKind::Corrupt, "{e}");
}
