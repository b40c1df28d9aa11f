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
