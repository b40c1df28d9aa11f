//! Time travel and history: every version of a table stays readable until maintenance
//! removes it; `history` lists the commits with their operation and metrics.
//!
//! Run: `cargo run --example time_travel`

use std::sync::Arc;

use alluvium::arrow::array::{Int64Array, RecordBatch};
use alluvium::arrow::datatypes::{DataType, Field, Schema};
use alluvium::{ScanBuilder, Snapshot, Table, VersionSpec, WriteOptions};

fn count(snapshot: Snapshot) -> Result<usize, alluvium::Error> {
    let mut rows = 0;
    // The scan is an Arrow `RecordBatchReader`; `?` turns its `ArrowError` back into the
    // typed `alluvium::Error` it carries.
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
    let table = Table::open(dir.path().to_str().ok_or("temp dir is not UTF-8")?)?;
    let schema = Arc::new(Schema::new(vec![Field::new("n", DataType::Int64, false)]));
    table.create(&schema, &[], alluvium::NO_PROPERTIES)?;
    for round in 0..3i64 {
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(Int64Array::from_iter_values(
                (0..10).map(|i| round * 10 + i),
            ))],
        )?;
        table.append([batch], &WriteOptions::default())?;
    }
    table.delete_str("n < 5", &WriteOptions::default())?;

    // Any version, by number ...
    for v in 0..=4 {
        let rows = count(table.snapshot_at(VersionSpec::Version(v))?)?;
        println!("version {v}: {rows} rows");
    }
    // ... or as of a time: the latest version committed at or before it. Commit times are
    // the commit files' modification times here, made strictly increasing (commits within
    // one tick of the filesystem clock are dated a millisecond apart), so a time a second
    // after the last commit selects it.
    let latest = table.snapshot()?;
    let at = latest.timestamp_ms() + 1000;
    let as_of = table.snapshot_at(VersionSpec::Timestamp(at))?;
    println!(
        "as of {}: version {}",
        alluvium::iso_timestamp(at),
        as_of.version()
    );
    assert_eq!(as_of.version(), latest.version());

    // The commits, newest first.
    for entry in table.history(Some(10))? {
        let operation = entry
            .commit_info
            .as_ref()
            .and_then(|c| c.operation())
            .unwrap_or("");
        println!(
            "{:>3}  {}  {operation}",
            entry.version,
            alluvium::iso_timestamp(entry.timestamp_ms)
        );
    }
    assert_eq!(count(table.snapshot_at(VersionSpec::Version(3))?)?, 30);
    assert_eq!(count(latest)?, 25);
    Ok(())
}
