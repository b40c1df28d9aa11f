//! Adding table features as supported (`Table::add_features`, SPEC.md §22): the
//! protocol lists them, raised only when the caller allows it, and what they govern stays
//! off until its property is set.

use std::sync::Arc;

use alluvium::Table;
use alluvium_storage::ObjectStore;
use arrow::array::{Int64Array, RecordBatch};

use crate::batches::id_schema as schema;

fn rows(ids: &[i64]) -> RecordBatch {
    RecordBatch::try_new(schema(), vec![Arc::new(Int64Array::from(ids.to_vec()))]).unwrap()
}

#[test]
fn add_features_lists_features_and_raises_the_protocol_only_when_allowed() {
    let t = Table::in_memory();
    t.create(&rows(&[1]).schema(), &[], alluvium::NO_PROPERTIES)
        .unwrap();
    let before = t.snapshot().unwrap();
    let legacy = before.protocol().clone();
    assert!(legacy.min_writer_version < 7, "{legacy:?}");
    // Deletion vectors need reader 3 / writer 7: refused without the allowance.
    let e = t
        .add_features(&["deletionVectors"], false)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("raises the protocol") && e.contains("writer 7"),
        "{e}"
    );
    assert!(t.add_features(&[], true).is_err());
    assert_eq!(t.snapshot().unwrap().version(), before.version());
    t.add_features(&["deletionVectors", "changeDataFeed"], true)
        .unwrap();
    let p = t.snapshot().unwrap().protocol().clone();
    assert_eq!((p.min_reader_version, p.min_writer_version), (3, 7));
    let writer = p.writer_features.unwrap_or_default();
    assert!(
        writer.iter().any(|f| f == "deletionVectors")
            && writer.iter().any(|f| f == "changeDataFeed"),
        "{writer:?}"
    );
    assert!(
        p.reader_features
            .unwrap_or_default()
            .iter()
            .any(|f| f == "deletionVectors")
    );
    // Supported, not enabled: the property stays unset.
    let md = t.snapshot().unwrap().metadata().clone();
    assert!(!md.configuration.contains_key("delta.enableDeletionVectors"));
    // A writer feature on a table-features protocol raises nothing: allowed either way.
    t.add_features(&["appendOnly"], false).unwrap();
    // A feature alluvium cannot write is refused.
    assert!(t.add_features(&["noSuchFeature"], true).is_err());
}

#[test]
fn add_features_reads_the_table_once() {
    // The protocol check and the commit share one snapshot: one listing of the log, the
    // same a SET TBLPROPERTIES of the feature costs.
    let store = Arc::new(alluvium_storage::CountingStore::new(Arc::new(
        alluvium::InMemoryStore::new(),
    )));
    let t = Table::from_store(store.clone() as alluvium::StoreRef);
    t.create(&rows(&[1]).schema(), &[], alluvium::NO_PROPERTIES)
        .unwrap();
    let lists = |f: &dyn Fn()| {
        let before = store.request_counts().list;
        f();
        store.request_counts().list - before
    };
    let by_property = lists(&|| {
        t.set_properties([("delta.feature.appendOnly", "supported")], &[])
            .unwrap();
    });
    let by_feature = lists(&|| {
        t.add_features(&["changeDataFeed"], true).unwrap();
    });
    assert_eq!(by_feature, by_property);
}

#[test]
fn alter_commits_record_commit_fields_and_run_once_per_application_version() {
    // SET TBLPROPERTIES, ADD FEATURE, ADD CONSTRAINT and DROP CONSTRAINT take write options
    // as the data writes do: the embedder's commitInfo fields are recorded, and a retried
    // job (the same application version) commits nothing.
    use alluvium::{AppTransaction, WriteOptions, WriteOutcome};
    let dir = tempfile::tempdir().unwrap();
    let t = Table::open(dir.path().to_str().unwrap()).unwrap();
    t.create(&rows(&[1]).schema(), &[], alluvium::NO_PROPERTIES)
        .unwrap();
    t.append([rows(&[1, 2])], &WriteOptions::default()).unwrap();
    let options = |app: &str| {
        WriteOptions::default()
            .with_app_transaction(AppTransaction::new(app, 3))
            .with_commit_info([("ticket".to_string(), serde_json::json!("OPS-9"))].into())
    };
    type Alter<'a> = Box<dyn Fn(&WriteOptions) -> alluvium::Result<WriteOutcome> + 'a>;
    let steps: Vec<(&str, &str, Alter<'_>)> = vec![
        (
            "props",
            "SET TBLPROPERTIES",
            Box::new(|o| t.set_properties_with([("delta.appendOnly", "false")], &[], o)),
        ),
        (
            "feature",
            "SET TBLPROPERTIES",
            Box::new(|o| t.add_features_with(&["changeDataFeed"], true, o)),
        ),
        (
            "check",
            "ADD CONSTRAINT",
            Box::new(|o| t.add_constraint_with("positive", "id > 0", o)),
        ),
        (
            "uncheck",
            "DROP CONSTRAINT",
            Box::new(|o| t.drop_constraint_with("positive", o)),
        ),
    ];
    for (app, operation, alter) in &steps {
        let before = t.snapshot().unwrap().version();
        let done = alter(&options(app)).unwrap();
        assert_eq!(done.report().map(|s| s.version), Some(before + 1), "{app}");
        let entry = t.history(Some(1)).unwrap().remove(0);
        let ci = entry.commit_info.unwrap();
        assert_eq!(ci.0["operation"], *operation, "{app}");
        assert_eq!(ci.0["ticket"], "OPS-9", "{app}");
        assert_eq!(
            t.snapshot().unwrap().app_transaction_version(app, i64::MAX),
            Some(3),
            "{app}"
        );
        // The retry: skipped, nothing committed.
        let again = alter(&options(app)).unwrap();
        assert!(
            matches!(
                again,
                WriteOutcome::Skipped {
                    recorded_version: 3,
                    ..
                }
            ),
            "{app}: {again:?}"
        );
        assert_eq!(t.snapshot().unwrap().version(), before + 1, "{app}");
    }
}
