//! A short tour of alluvium: create a partitioned table, append from two concurrent
//! writers, delete, checkpoint, compact, read an old version, and clean up.
//!
//! Run: `cargo run --example tour`

use std::sync::Arc;

use alluvium::arrow::array::{Int64Array, RecordBatch, StringArray};
use alluvium::arrow::datatypes::{DataType, Field, Schema};
use alluvium::{
    CheckpointConfig, OptimizeOptions, ScanBuilder, Snapshot, Table, VacuumOptions, VersionSpec,
    WriteOptions,
};

fn rows(snapshot: Snapshot) -> Result<usize, alluvium::Error> {
    let mut rows = 0;
    for batch in ScanBuilder::new(snapshot).build()?.execute() {
        rows += batch?.num_rows();
    }
    Ok(rows)
}
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
    table.create(&schema, &["region".to_string()], alluvium::NO_PROPERTIES)?;
    println!("created {}", table.uri());

    // Two writers append at once; optimistic concurrency serialises their commits.
    std::thread::scope(|s| -> Result<(), alluvium::Error> {
        let writers: Vec<_> = ["EU", "US"]
            .into_iter()
            .map(|region| {
                let schema = schema.clone();
                s.spawn(
                    move || -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
                        let table = Table::open(location)?;
                        for round in 0..5i64 {
                            let batch = RecordBatch::try_new(
                                schema.clone(),
                                vec![
                                    Arc::new(Int64Array::from_iter_values(
                                        (0..10).map(|i| round * 10 + i),
                                    )),
                                    Arc::new(StringArray::from(vec![region; 10])),
                                ],
                            )?;
                            table.append([batch], &WriteOptions::default())?;
                        }
                        Ok(())
                    },
                )
            })
            .collect();
        for w in writers {
            if let Ok(Err(e)) = w.join() {
                eprintln!("writer failed: {e}");
            }
        }
        Ok(())
    })?;
    let snapshot = table.snapshot()?;
    println!(
        "version {}: {} files, {} rows",
        snapshot.version(),
        snapshot.files().count(),
        rows(snapshot)?
    );

    table.delete_str("region = 'US' AND id >= 40", &WriteOptions::default())?;
    let checkpoint = table.checkpoint(&CheckpointConfig::default())?;
    println!("checkpoint at version {}", checkpoint.version);

    let optimized = table.optimize(&OptimizeOptions::default())?;
    println!(
        "OPTIMIZE: {} files rewritten into {}",
        optimized.files_removed, optimized.files_added
    );

    let old = table.snapshot_at(VersionSpec::Version(3))?;
    println!("version 3 still reads: {} rows", rows(old)?);

    // Files no retained version needs are kept for the retention period (7 days by
    // default); a dry run lists what would go.
    let vacuum = table.vacuum(&VacuumOptions::default().with_dry_run(true))?;
    println!("VACUUM (dry run): {} files to delete", vacuum.deleted.len());

    let latest = table.snapshot()?;
    println!(
        "latest version {}: {} rows",
        latest.version(),
        rows(latest)?
    );
    Ok(())
}
