//! The facade as an embedder sees it (SPEC.md §30 EM9): a snapshot's fallible methods
//! return `alluvium::Error`, everything a snapshot returns is named by an `alluvium::`
//! path, and table properties go in as one shape wherever they are taken.
//!
//! Most of what these tests check is checked by the compiler: the typed bindings below
//! (`let x: alluvium::Result<_> = snapshot.refresh()`, `.kind()` on an error) do not compile
//! against a snapshot whose methods return a lower crate's error, and the `alluvium::`
//! paths do not resolve for a type the facade does not export.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use alluvium::{ErrorKind, NO_PROPERTIES, Snapshot, StoreRef, Table, VersionSpec, WriteOptions};
use alluvium_storage::InMemoryStore;
use arrow::array::{Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};

use crate::batches::id_schema as schema;

fn rows(ids: &[i64]) -> RecordBatch {
    RecordBatch::try_new(schema(), vec![Arc::new(Int64Array::from(ids.to_vec()))]).unwrap()
}

/// What an embedder's code looks like: every step is `?` into `alluvium::Result`, and the
/// snapshot's own results are returned as they are, without a conversion.
fn refreshed_version(table: &Table) -> alluvium::Result<u64> {
    let snapshot = table.snapshot()?;
    snapshot.check_writable()?;
    let fresh = table.snapshot()?.refresh()?;
    let again: alluvium::Result<Snapshot> = fresh.refresh();
    Ok(again?.version())
}

#[test]
fn snapshot_methods_return_the_facade_error() {
    let store: StoreRef = Arc::new(InMemoryStore::new());
    let table = Table::from_store(store.clone());
    table.create(&schema(), &[], NO_PROPERTIES).unwrap();
    let old = table.snapshot().unwrap();
    table
        .append([rows(&[1, 2])], &WriteOptions::default())
        .unwrap();
    assert_eq!(refreshed_version(&table).unwrap(), 1);
    let refreshed: alluvium::Result<Snapshot> = old.refresh();
    assert_eq!(refreshed.unwrap().version(), 1);

    // Each failure carries the facade's classification.
    let missing = Snapshot::load(store.clone(), VersionSpec::Version(7)).unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::NotFound, "{missing}");
    let at = table.snapshot_at(VersionSpec::Version(7)).unwrap_err();
    assert_eq!(at.kind(), ErrorKind::NotFound, "{at}");
    let escape = old.file_location("../outside.parquet").unwrap_err();
    assert_eq!(escape.kind(), ErrorKind::Corrupt, "{escape}");
    let inside: alluvium::FileLocation = old.file_location("part-0.parquet").unwrap();
    assert!(format!("{inside:?}").contains("part-0.parquet"));

    // A writer feature alluvium does not know: readable, refused for writing.
    store
        .put(
            &alluvium_txlog::log_path::commit_path(2),
            r#"{"protocol":{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["someFutureWriterFeature"]}}"#
                .into(),
        )
        .unwrap();
    let future = table.snapshot().unwrap();
    assert_eq!(future.version(), 2);
    let refused: alluvium::Result<()> = future.check_writable();
    let refused = refused.unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::Unsupported, "{refused}");
    assert!(
        refused.to_string().contains("someFutureWriterFeature"),
        "{refused}"
    );
    let append = table
        .append([rows(&[3])], &WriteOptions::default())
        .unwrap_err();
    assert_eq!(append.kind(), ErrorKind::Unsupported, "{append}");
}

#[test]
fn every_snapshot_accessor_returns_a_type_the_facade_exports() {
    let table = Table::in_memory();
    table
        .create(&schema(), &[], [("delta.checkpointInterval", "2")])
        .unwrap();
    let options =
        WriteOptions::default().with_app_transaction(alluvium::AppTransaction::new("app", 4));
    table.append([rows(&[1])], &options).unwrap();
    table
        .append([rows(&[2])], &WriteOptions::default())
        .unwrap();
    // Loaded, not refreshed: a load starts from the checkpoint version 2 wrote.
    let s: Snapshot = table.snapshot_at(VersionSpec::Latest).unwrap();

    let version: alluvium::Version = s.version();
    assert_eq!(version, 2);
    let _: i64 = s.timestamp_ms();
    let schema: &alluvium::StructType = s.schema();
    assert_eq!(schema.fields.len(), 1);
    let _: &[String] = s.partition_columns();
    let properties: alluvium::TableProperties<'_> = s.properties();
    assert_eq!(properties.checkpoint_interval(), 2);
    let _: alluvium::ColumnMappingMode = s.column_mapping();
    let _: &alluvium::Protocol = s.protocol();
    let metadata: &alluvium::Metadata = s.metadata();
    let _: &alluvium::Format = &metadata.format;
    let files: Vec<alluvium::FileRef<'_>> = s.files().collect();
    assert_eq!(files.len(), s.num_files());
    let _: Option<&alluvium::DeletionVectorDescriptor> = files[0].deletion_vector();
    let _: &alluvium::OptStringMap = files[0].partition_values();
    let _: alluvium::Add = files[0].to_add();
    let _: Vec<&alluvium::Remove> = s.unexpired_tombstones(0).collect();
    let state: &alluvium::TableState = s.state();
    let apps: &HashMap<String, alluvium::SetTransaction> = state.app_transactions();
    assert_eq!(apps["app"].version, 4);
    assert_eq!(s.app_transaction_version("app", 0), Some(4));
    let _: &alluvium::TableRoot = s.root();
    let _: &StoreRef = s.store();
    let _: &dyn alluvium::ObjectStore = s.store_ref();
    let info: Option<&alluvium::CommitInfo> = s.commit_info();
    assert_eq!(info.and_then(|c| c.operation()), Some("WRITE"));
    let _: Option<&alluvium::serde_json::Value> = info.and_then(|c| c.operation_parameters());
    let checkpoint: Option<alluvium::Version> = s.checkpoint_version();
    assert_eq!(checkpoint, Some(2));
    let _: Vec<&alluvium::DomainMetadata> = s.domains().collect();
    let report: &alluvium::SnapshotReport = s.report();
    let _: &alluvium::RequestCounts = &report.requests;
    // `Add::builder`, for files the embedder writes itself.
    let _: alluvium::AddBuilder = alluvium::Add::builder("f.parquet", 1, 0);
    // A snapshot is shared between threads as its documentation says.
    fn send_sync<T: Send + Sync + Clone>(_: &T) {}
    send_sync(&s);
}

/// The properties every test below sets, in the shapes an embedder holds them in.
const PAIRS: [(&str, &str); 2] = [("delta.appendOnly", "false"), ("team.owner", "data")];

fn configuration(table: &Table) -> BTreeMap<String, String> {
    table.describe(VersionSpec::Latest).unwrap().configuration
}

#[test]
fn properties_take_one_shape_everywhere() {
    let expected: BTreeMap<String, String> = PAIRS
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let hash: HashMap<String, String> = expected.clone().into_iter().collect();
    let list: Vec<(String, String)> = expected.clone().into_iter().collect();

    // Creating: an array of pairs, a HashMap (by reference), a BTreeMap, a Vec.
    let a = Table::in_memory();
    a.create(&schema(), &[], PAIRS).unwrap();
    let b = Table::in_memory();
    b.create(&schema(), &[], &hash).unwrap();
    let c = Table::in_memory();
    c.create_with_schema(
        alluvium::StructType::from_json(
            r#"{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}"#,
        )
        .unwrap(),
        &[],
        expected.clone(),
    )
    .unwrap();
    let d = Table::in_memory();
    d.create_with_data(
        &schema(),
        &[],
        list.clone(),
        [rows(&[1])],
        &WriteOptions::default(),
    )
    .unwrap();
    for t in [&a, &b, &c, &d] {
        assert_eq!(configuration(t), expected);
    }
    // What describe gives back is itself that shape.
    let e = Table::in_memory();
    e.create(&schema(), &[], configuration(&a)).unwrap();
    assert_eq!(configuration(&e), expected);

    // Changing them: the same values through the table and through a transaction.
    let changed = [("team.owner", "ops")];
    let f = Table::in_memory();
    f.create(&schema(), &[], NO_PROPERTIES).unwrap();
    f.set_properties(&hash, &[]).unwrap();
    assert_eq!(configuration(&f), expected);
    f.set_properties(changed, &[]).unwrap();
    assert_eq!(configuration(&f)["team.owner"], "ops");
    f.set_properties(NO_PROPERTIES, &["team.owner"]).unwrap();
    assert!(!configuration(&f).contains_key("team.owner"));

    let g = Table::in_memory();
    g.create(&schema(), &[], NO_PROPERTIES).unwrap();
    let mut txn = g.transaction("SET TBLPROPERTIES").unwrap();
    txn.set_properties(PAIRS).unwrap();
    txn.set_properties(&hash).unwrap();
    txn.set_properties(list).unwrap();
    txn.commit().unwrap();
    assert_eq!(configuration(&g), expected);
    let mut txn = g.transaction("SET TBLPROPERTIES").unwrap();
    txn.set_properties(changed).unwrap();
    txn.commit().unwrap();
    assert_eq!(configuration(&g)["team.owner"], "ops");

    // The same check of values wherever they are given.
    let bad = [("delta.checkpointInterval", "zero")];
    let h = Table::in_memory();
    assert_eq!(
        h.create(&schema(), &[], bad).unwrap_err().kind(),
        ErrorKind::InvalidInput
    );
    h.create(&schema(), &[], NO_PROPERTIES).unwrap();
    assert_eq!(
        h.set_properties(bad, &[]).unwrap_err().kind(),
        ErrorKind::InvalidInput
    );
    let mut txn = h.transaction("SET TBLPROPERTIES").unwrap();
    assert_eq!(
        txn.set_properties(bad).unwrap_err().kind(),
        ErrorKind::InvalidInput
    );
}

/// What the state store (`alluvium-state`, its own crate on this public API) needs of the
/// facade, an embedder can use alike: the files a filter may match (data skipping), every
/// row of one data file, the duplicate-column check of input, and a table under a
/// directory of a store.
#[test]
fn per_file_reads_skipping_and_prefix_stores_are_public_api() {
    let table = Table::in_memory();
    table.create(&schema(), &[], NO_PROPERTIES).unwrap();
    for ids in [[1, 2, 3], [10, 11, 12], [20, 21, 22]] {
        table
            .append([rows(&ids)], &WriteOptions::default())
            .unwrap();
    }
    let snapshot = table.snapshot().unwrap();

    // Data skipping: only the file whose statistics may hold 10..=12.
    let filter = alluvium::parse_expr("id >= 10 AND id <= 12").unwrap();
    let matching: Vec<alluvium::FileRef<'_>> = snapshot.files_matching(&filter).unwrap();
    assert_eq!(matching.len(), 1);
    let everything = alluvium::parse_expr("id > 0").unwrap();
    assert_eq!(snapshot.files_matching(&everything).unwrap().len(), 3);
    let unknown = alluvium::parse_expr("nope = 1").unwrap();
    let e = snapshot.files_matching(&unknown).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");

    // Every row of that one file, and nothing of the others.
    let batches = snapshot.read_whole_file(matching[0]).unwrap();
    let ids: Vec<i64> = batches
        .iter()
        .flat_map(|b| {
            let col = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
            col.values().to_vec()
        })
        .collect();
    assert_eq!(ids, [10, 11, 12]);

    // Input naming a column twice (names are case-insensitive) is refused, naming it.
    let twice = Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("ID", DataType::Int64, true),
    ]);
    let e = alluvium::check_distinct_columns(&twice).unwrap_err();
    assert!(
        matches!(&e, alluvium::Error::DuplicateColumn { column, .. } if column == "ID"),
        "{e}"
    );
    alluvium::check_distinct_columns(&schema()).unwrap();

    // Two tables in two directories of one store.
    let root: StoreRef = Arc::new(InMemoryStore::new());
    let under =
        |dir: &str| Table::from_store(Arc::new(alluvium::PrefixStore::new(root.clone(), dir)));
    under("a").create(&schema(), &[], NO_PROPERTIES).unwrap();
    assert_eq!(under("a").snapshot().unwrap().version(), 0);
    let e = under("b").snapshot().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
}
