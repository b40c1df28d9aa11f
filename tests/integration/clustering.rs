//! Clustered tables (SPEC.md §29, PROTOCOL.md "Clustered Table"): `Table::cluster_by`
//! records the columns in the `delta.clustering` domain with the writer features and no
//! data rewrite; OPTIMIZE clusters only the files not yet clustered and marks them; writes
//! keep the feature's invariants.

use std::collections::HashMap;
use std::sync::Arc;

use alluvium::{ScanBuilder, Table, WriteOptions};
use alluvium_compaction::optimize::OptimizeOptions;
use alluvium_txlog::actions::Add;
use alluvium_txlog::clustering::{DOMAIN, PROVIDER, ZCUBE_ZORDER_BY_TAG, parse_domain};
use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("k", DataType::Utf8, true),
        Field::new("v", DataType::Int64, true),
    ]))
}

fn batch(ids: &[i64]) -> RecordBatch {
    RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from(ids.to_vec())) as ArrayRef,
            Arc::new(StringArray::from(
                ids.iter()
                    .map(|i| format!("k{}", i % 7))
                    .collect::<Vec<_>>(),
            )),
            Arc::new(Int64Array::from(
                ids.iter().map(|i| i * 10).collect::<Vec<_>>(),
            )),
        ],
    )
    .unwrap()
}

fn table(props: &[(&str, &str)], partition_by: &[&str]) -> (tempfile::TempDir, Table) {
    let dir = tempfile::tempdir().unwrap();
    let t = Table::open(dir.path().join("t").to_str().unwrap()).unwrap();
    let props: HashMap<String, String> = props
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let parts: Vec<String> = partition_by.iter().map(|s| s.to_string()).collect();
    t.create(&schema(), &parts, &props).unwrap();
    (dir, t)
}

fn append(t: &Table, ids: &[i64]) {
    t.append(vec![batch(ids)], &WriteOptions::default())
        .unwrap();
}

fn sorted_ids(t: &Table) -> Vec<i64> {
    let mut out = Vec::new();
    let s = ScanBuilder::new(t.snapshot().unwrap())
        .with_columns(["id"])
        .build()
        .unwrap();
    for b in s.execute_to_vec().unwrap() {
        let a = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        out.extend(a.iter().flatten());
    }
    out.sort();
    out
}

fn files(t: &Table) -> Vec<Add> {
    let mut f: Vec<Add> = t.snapshot().unwrap().files().map(|f| f.to_add()).collect();
    f.sort_by(|a, b| a.path.cmp(&b.path));
    f
}

#[test]
fn cluster_by_records_the_domain_and_features_without_rewriting_data() {
    let (_d, t) = table(&[], &[]);
    append(&t, &[3, 1, 2]);
    append(&t, &[9, 7]);
    let before = files(&t);
    assert_eq!(t.clustering_columns().unwrap(), None);
    t.cluster_by(&["K", "id"]).unwrap();
    let s = t.snapshot().unwrap();
    assert!(s.protocol().has_writer_feature("clustering"));
    assert!(s.protocol().has_writer_feature("domainMetadata"));
    let d = s.domains().find(|d| d.domain == DOMAIN).unwrap();
    assert_eq!(
        parse_domain(&d.configuration).unwrap(),
        vec![vec!["k".to_string()], vec!["id".to_string()]]
    );
    assert_eq!(files(&t), before, "no data file rewritten");
    assert_eq!(
        t.clustering_columns().unwrap(),
        Some(vec!["k".to_string(), "id".to_string()])
    );
    let info = s.commit_info().unwrap();
    assert_eq!(
        info.0.get("operation").and_then(|v| v.as_str()),
        Some("CLUSTER BY")
    );
    // CLUSTER BY NONE: still a clustered table, clustered by nothing.
    t.cluster_by(&[]).unwrap();
    assert_eq!(t.clustering_columns().unwrap(), Some(vec![]));
}

#[test]
fn optimize_clusters_only_the_files_not_yet_clustered() {
    let (_d, t) = table(&[], &[]);
    append(&t, &[5, 1, 4]);
    append(&t, &[2, 8, 0]);
    append(&t, &[7, 3, 6]);
    t.cluster_by(&["id"]).unwrap();
    let r = t.optimize(&OptimizeOptions::default()).unwrap();
    assert_eq!(r.files_removed, 3);
    let clustered = files(&t);
    assert_eq!(clustered.len(), 1);
    let f = &clustered[0];
    assert_eq!(f.clustering_provider.as_deref(), Some(PROVIDER));
    assert_eq!(
        f.tags.as_ref().unwrap().get(ZCUBE_ZORDER_BY_TAG),
        Some(Some("[\"id\"]"))
    );
    // Z-order by one column is that column's order: the clustered file is sorted.
    let s = ScanBuilder::new(t.snapshot().unwrap())
        .with_columns(["id"])
        .build()
        .unwrap();
    let ids: Vec<i64> = s
        .execute_to_vec()
        .unwrap()
        .iter()
        .flat_map(|b| {
            b.column(0)
                .as_any()
                .downcast_ref::<Int64Array>()
                .unwrap()
                .iter()
                .flatten()
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(ids, (0..9).collect::<Vec<_>>());
    // Nothing left to cluster: a second run does nothing.
    let r = t.optimize(&OptimizeOptions::default()).unwrap();
    assert!(r.versions.is_empty(), "{r:?}");
    // A new unclustered file: only it is rewritten, the clustered one stays.
    append(&t, &[11, 10]);
    let r = t.optimize(&OptimizeOptions::default()).unwrap();
    assert_eq!((r.files_removed, r.files_added), (1, 1));
    let now = files(&t);
    assert!(now.iter().any(|a| a.path == f.path), "clustered file kept");
    assert!(
        now.iter()
            .all(|a| a.clustering_provider.as_deref() == Some(PROVIDER))
    );
    assert_eq!(sorted_ids(&t), (0..9).chain([10, 11]).collect::<Vec<_>>());
}

#[test]
fn files_clustered_by_other_columns_are_left_to_a_full_recluster() {
    let (_d, t) = table(&[], &[]);
    append(&t, &[1, 2]);
    t.cluster_by(&["id"]).unwrap();
    t.optimize(&OptimizeOptions::default()).unwrap();
    let clustered = files(&t);
    t.cluster_by(&["v"]).unwrap();
    append(&t, &[3]);
    let r = t.optimize(&OptimizeOptions::default()).unwrap();
    assert_eq!(r.files_removed, 1, "only the new file");
    assert!(files(&t).iter().any(|a| a.path == clustered[0].path));
}

#[test]
fn cluster_by_none_makes_optimize_plain_bin_packing() {
    let (_d, t) = table(&[], &[]);
    append(&t, &[1, 2]);
    append(&t, &[3]);
    t.cluster_by(&[]).unwrap();
    let r = t.optimize(&OptimizeOptions::default()).unwrap();
    assert_eq!(r.files_removed, 2);
    assert!(files(&t).iter().all(|a| a.clustering_provider.is_none()));
}

#[test]
fn cluster_by_refuses_what_the_protocol_or_delta_spark_forbid() {
    let (_d, p) = table(&[], &["k"]);
    let e = p.cluster_by(&["id"]).unwrap_err();
    assert!(e.to_string().contains("partitioned"), "{e}");
    let (_d, t) = table(&[("delta.dataSkippingNumIndexedCols", "1")], &[]);
    let e = t.cluster_by(&["k"]).unwrap_err();
    assert!(e.to_string().contains("statistics"), "{e}");
    t.cluster_by(&["id"]).unwrap();
    let e = t.cluster_by(&["id", "id"]).unwrap_err();
    assert!(e.to_string().contains("twice"), "{e}");
    let e = t.cluster_by(&["nope"]).unwrap_err();
    assert!(e.to_string().contains("nope"), "{e}");
    let e = t.cluster_by(&["a", "b", "c", "d", "e"]).unwrap_err();
    assert!(e.to_string().contains("at most 4"), "{e}");
    let e = t
        .optimize(&OptimizeOptions::default().with_zorder_by(vec!["id".into()]))
        .unwrap_err();
    assert!(e.to_string().contains("Z-order"), "{e}");
    // The fix in API terms; the CLI names its own flag.
    assert!(e.to_string().contains("with cluster_by"), "{e}");
    assert!(!e.to_string().contains("--"), "{e}");
}

#[test]
fn a_file_without_statistics_for_a_new_clustering_column_blocks_it() {
    let (_d, t) = table(&[("delta.dataSkippingNumIndexedCols", "1")], &[]);
    append(&t, &[1]);
    t.set_properties([("delta.dataSkippingNumIndexedCols", "3")], &[])
        .unwrap();
    // The settings now cover `v`, but the first file has no statistics for it.
    let e = t.cluster_by(&["v"]).unwrap_err();
    assert!(e.to_string().contains("no statistics for `v`"), "{e}");
}

#[test]
fn settings_that_drop_a_clustering_columns_statistics_are_refused() {
    let (_d, t) = table(&[], &[]);
    t.cluster_by(&["v"]).unwrap();
    append(&t, &[1]);
    let e = t
        .set_properties([("delta.dataSkippingNumIndexedCols", "1")], &[])
        .unwrap_err();
    assert!(e.to_string().contains("`v` gets no statistics"), "{e}");
    // Settings that keep them are fine, and writes go on.
    t.set_properties([("delta.dataSkippingStatsColumns", "v")], &[])
        .unwrap();
    append(&t, &[2]);
    assert_eq!(sorted_ids(&t), vec![1, 2]);
}
