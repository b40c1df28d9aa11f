//! `alluvium-bench write`: a new table written with N generated rows in one commit, in this
//! process: the Rust side of the Python package's write comparison
//! (`benches/peers/python_vs_deltalake.py` writes the same rows from a pyarrow table).
//!
//! The rows (the Python script builds the same ones): `id` int64 = i, `category` utf8 =
//! `c{i % 100}`, `value` float64 = i / 2, `ts` timestamp(µs, UTC) = 1.7e15 + i seconds, in
//! batches of `--batch-rows`. The batches are built before the clock starts; each timed run
//! writes a fresh table (`Table::create_with_data`: data files and version 0).

use std::sync::Arc;
use std::time::Instant;

use alluvium::{Error, Result, Table, WriteOptions};
use alluvium_cli::outln;
use arrow::array::{
    ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray,
};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use clap::Args;
use serde_json::json;

use super::{round3, summary};

/// Arguments of `write`.
#[derive(Debug, Args)]
pub struct WriteRowsArgs {
    /// A directory for the tables (each run writes `DIR/run-K`, removed afterwards).
    dir: String,
    /// Rows to write.
    #[arg(long, default_value_t = 1_000_000)]
    rows: usize,
    /// Rows per input batch.
    #[arg(long, default_value_t = 65_536)]
    batch_rows: usize,
    /// Number of timed writes (after one untimed warm-up).
    #[arg(long, default_value_t = 5)]
    repeat: usize,
}

/// The generated rows, in batches.
pub fn rows(n: usize, batch_rows: usize) -> Result<Vec<RecordBatch>> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("category", DataType::Utf8, true),
        Field::new("value", DataType::Float64, true),
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            true,
        ),
    ]));
    let mut out = Vec::new();
    let mut start = 0usize;
    while start < n {
        let end = (start + batch_rows.max(1)).min(n);
        let ids: Vec<i64> = (start..end).map(|i| i as i64).collect();
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(ids.clone())),
            Arc::new(StringArray::from_iter_values(
                ids.iter().map(|i| format!("c{}", i % 100)),
            )),
            Arc::new(Float64Array::from_iter_values(
                ids.iter().map(|i| *i as f64 * 0.5),
            )),
            Arc::new(
                TimestampMicrosecondArray::from_iter_values(
                    ids.iter().map(|i| 1_700_000_000_000_000 + i * 1_000_000),
                )
                .with_timezone("UTC"),
            ),
        ];
        out.push(RecordBatch::try_new(schema.clone(), columns)?);
        start = end;
    }
    Ok(out)
}

fn write_once(dir: &std::path::Path, batches: &[RecordBatch]) -> Result<f64> {
    let location = dir
        .to_str()
        .ok_or_else(|| Error::InvalidArgument("non-UTF-8 directory".into()))?;
    let table = Table::open(location)?;
    let schema = batches
        .first()
        .map(|b| b.schema())
        .ok_or_else(|| Error::InvalidArgument("--rows must be at least 1".into()))?;
    let started = Instant::now();
    table.create_with_data(
        &schema,
        &[],
        alluvium::NO_PROPERTIES,
        batches.iter().cloned(),
        &WriteOptions::default(),
    )?;
    Ok(started.elapsed().as_secs_f64() * 1000.0)
}

/// Runs `write`: one warm-up, then `--repeat` timed writes of fresh tables.
pub fn run(a: WriteRowsArgs) -> Result<()> {
    if a.repeat == 0 {
        return Err(Error::InvalidArgument("--repeat must be at least 1".into()));
    }
    let batches = rows(a.rows, a.batch_rows)?;
    let base = std::path::PathBuf::from(&a.dir);
    let io = |e: std::io::Error| Error::Io {
        context: a.dir.clone(),
        source: e,
    };
    std::fs::create_dir_all(&base).map_err(io)?;
    let mut times = Vec::with_capacity(a.repeat);
    for k in 0..=a.repeat {
        let dir = base.join(format!("run-{k}"));
        let _ = std::fs::remove_dir_all(&dir);
        let ms = write_once(&dir, &batches)?;
        if k > 0 {
            times.push(ms);
        }
        std::fs::remove_dir_all(&dir).map_err(io)?;
    }
    let (median, min, max) = summary(times.clone());
    outln!(
        "{}",
        json!({
            "bench": "write",
            "rows": a.rows,
            "batch_rows": a.batch_rows,
            "median_ms": round3(median),
            "min_ms": round3(min),
            "max_ms": round3(max),
            "times_ms": times.iter().map(|t| round3(*t)).collect::<Vec<_>>(),
        })
    );
    Ok(())
}
