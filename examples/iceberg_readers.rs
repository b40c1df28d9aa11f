//! Iceberg readers on a Delta table: `sync_iceberg` writes Iceberg v2 metadata beside the
//! log (`metadata/`), one Iceberg snapshot per Delta version since the last sync, with
//! deletion vectors as position deletes, so pyiceberg, DuckDB's iceberg extension and
//! other Iceberg engines read the same data files. A table with the property
//! `alluvium.iceberg.sync=true` syncs after every commit instead.
//!
//! Run: `cargo run --example iceberg_readers`

use std::collections::HashMap;
use std::sync::Arc;

use alluvium::arrow::array::{Int64Array, RecordBatch, StringArray};
use alluvium::arrow::datatypes::{DataType, Field, Schema};
use alluvium::{ICEBERG_SYNC_PROPERTY, Table, WriteOptions};

/// A scratch directory for the example's tables, removed when dropped (as `tempfile`'s
/// `TempDir`, without the dependency: an embedder's project needs only `alluvium`).
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new() -> std::io::Result<Scratch> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let path =
            std::env::temp_dir().join(format!("alluvium-example-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&path)?;
        Ok(Scratch(path))
    }

    fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = Scratch::new()?;
    let location = dir.path().to_str().ok_or("temp dir is not UTF-8")?;
    let table = Table::open(location)?;
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("region", DataType::Utf8, true),
    ]));
    let properties = HashMap::from([(
        "delta.enableDeletionVectors".to_string(),
        "true".to_string(),
    )]);
    table.create(&schema, &["region".to_string()], &properties)?;
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from_iter_values(0..100)),
            Arc::new(StringArray::from_iter_values(
                (0..100).map(|i| if i % 2 == 0 { "EU" } else { "US" }),
            )),
        ],
    )?;
    table.append([batch], &WriteOptions::default())?;
    table.delete_str("id < 10", &WriteOptions::default())?; // deletion vectors

    // One sync: versions 0..=2 become one Iceberg snapshot (the first sync mirrors the
    // latest version); the DVs become position-delete files.
    let report = table.sync_iceberg()?;
    println!(
        "synced {:?}: Iceberg snapshot {:?}, {} data files, {} delete files",
        report.synced_versions, report.snapshot_id, report.data_files, report.delete_files
    );
    assert_eq!(report.synced_versions, vec![2]);
    assert_eq!((report.data_files, report.delete_files), (2, 2));
    let hint = std::fs::read_to_string(dir.path().join("metadata/version-hint.text"))?;
    println!("Iceberg readers open {location}/metadata/v{hint}.metadata.json");

    // Syncing again changes nothing; after the property is set, each commit syncs itself.
    assert!(table.sync_iceberg()?.synced_versions.is_empty());
    let altered = table.set_properties([(ICEBERG_SYNC_PROPERTY, "true")], &[])?;
    let first = altered
        .iceberg_sync
        .clone()
        .ok_or("the property asks for a sync")??;
    assert_eq!(first.synced_versions, vec![3]); // the ALTER itself
    let summary = table.delete_str("id = 11", &WriteOptions::default())?;
    let synced = summary
        .report()
        .and_then(|s| s.iceberg_sync.clone())
        .ok_or("the property asks for a sync")??;
    println!(
        "the DELETE's post-commit sync mirrored versions {:?}",
        synced.synced_versions
    );
    assert_eq!(synced.synced_versions, vec![4]);
    Ok(())
}
