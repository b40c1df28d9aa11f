//! An idempotent sink: a stream processor appends each micro-batch with its application
//! id and batch number, crashes, and replays from its last checkpointed offset. Batches the
//! table already holds are skipped, so no row lands twice.
//!
//! The table records `(app id, version)` in the same commit as the rows (Delta's `txn`
//! action), so "was batch N written?" and "write batch N" can never disagree, whatever the
//! moment of the crash.
//!
//! Run: `cargo run --example idempotent_sink`

use std::sync::Arc;

use alluvium::arrow::array::{Int64Array, RecordBatch};
use alluvium::arrow::datatypes::{DataType, Field, Schema};
use alluvium::{AppTransaction, ScanBuilder, Table, WriteOptions, WriteOutcome};

const APP_ID: &str = "orders-ingest";

fn micro_batch(
    schema: &Arc<Schema>,
    n: i64,
) -> Result<RecordBatch, alluvium::arrow::error::ArrowError> {
    let ids: Vec<i64> = (0..10).map(|i| n * 10 + i).collect();
    RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from(ids))])
}

/// Appends micro-batch `n` unless the table already has it; returns whether it was written.
fn sink(table: &Table, schema: &Arc<Schema>, n: i64) -> Result<bool, Box<dyn std::error::Error>> {
    let options = WriteOptions::default().with_app_transaction(AppTransaction::new(APP_ID, n));
    match table.append([micro_batch(schema, n)?], &options)? {
        WriteOutcome::Committed(summary) => {
            println!("batch {n}: committed as version {}", summary.version);
            Ok(true)
        }
        WriteOutcome::Skipped {
            recorded_version, ..
        } => {
            println!("batch {n}: skipped (the table already has batch {recorded_version})");
            Ok(false)
        }
    }
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
    let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
    Table::open(location)?.create(&schema, &[], alluvium::NO_PROPERTIES)?;

    // First run: batches 0..5, then the process "crashes" (the table handle is dropped)
    // after writing batch 4 but before saving its source offset, which is still 2.
    {
        let table = Table::open(location)?;
        for n in 0..5 {
            sink(&table, &schema, n)?;
        }
    }

    // Restart: replay from the saved offset 2. Batches 2..=4 are skipped, 5..8 written.
    let table = Table::open(location)?;
    let written: Vec<i64> = (2..8)
        .filter_map(|n| match sink(&table, &schema, n) {
            Ok(true) => Some(Ok(n)),
            Ok(false) => None,
            Err(e) => Some(Err(e)),
        })
        .collect::<Result<_, _>>()?;
    assert_eq!(written, vec![5, 6, 7]);

    // Every batch exactly once: 8 batches of 10 rows.
    let rows: usize = ScanBuilder::new(table.snapshot()?)
        .build()?
        .execute()
        .map(|b| b.map(|b| b.num_rows()))
        .sum::<Result<usize, _>>()?;
    println!("{rows} rows, no duplicates");
    assert_eq!(rows, 80);
    Ok(())
}
