//! A custom transaction: write data files through the engine's writer, then commit them
//! together with a table-property change as ONE version.
//!
//! `Table::transaction` gives an embedder the same machinery the built-in operations use:
//! the Parquet writer (statistics, partition directories, column mapping), conflict
//! checking and retries, and the post-commit policy (here a checkpoint every 2 commits).
//!
//! Run: `cargo run --example custom_transaction`

use std::sync::Arc;

use alluvium::Table;
use alluvium::arrow::array::{Int64Array, RecordBatch, StringArray};
use alluvium::arrow::datatypes::{DataType, Field, Schema};
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
    let table = Table::open(dir.path().to_str().ok_or("temp dir is not UTF-8")?)?;
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("kind", DataType::Utf8, true),
    ]));
    table.create(&schema, &["kind".to_string()], alluvium::NO_PROPERTIES)?;

    let mut txn = table.transaction("INGEST")?;
    // Two writes; their files are not part of the commit until they are staged.
    let clicks = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from(vec![1, 2, 3])),
            Arc::new(StringArray::from(vec!["click"; 3])),
        ],
    )?;
    let views = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from(vec![4, 5])),
            Arc::new(StringArray::from(vec!["view"; 2])),
        ],
    )?;
    let mut adds = txn.write_files([clicks])?;
    adds.extend(txn.write_files([views])?);
    for add in &adds {
        println!("wrote {} ({} bytes)", add.path, add.size);
    }
    txn.add_files(adds);
    // ... and a property change, in the same commit.
    txn.set_properties([("delta.checkpointInterval", "2")])?;
    txn.set_user_metadata("ingest run 42");
    let summary = txn.commit()?;
    println!("committed version {}", summary.version);

    let snapshot = table.snapshot()?;
    assert_eq!(snapshot.version(), 1);
    assert_eq!(snapshot.files().count(), 2);
    assert_eq!(
        snapshot
            .metadata()
            .configuration
            .get("delta.checkpointInterval")
            .map(String::as_str),
        Some("2")
    );
    // Version 1 is not a multiple of the new interval; the next commit (2) is, and its
    // transaction checkpoints as the built-in writes do.
    let mut txn = table.transaction("INGEST")?;
    txn.set_user_metadata("empty run");
    let summary = txn.commit()?;
    match &summary.checkpoint {
        Some(Ok(version)) => println!(
            "committed version {}, checkpointed at {version}",
            summary.version
        ),
        Some(Err(e)) => println!(
            "committed version {}; the checkpoint failed: {e}",
            summary.version
        ),
        None => println!("committed version {}, no checkpoint due", summary.version),
    }
    assert!(matches!(summary.checkpoint, Some(Ok(2))));
    Ok(())
}
