//! `alluvium-bench scan`: a full read of a table to Arrow record batches inside the process,
//! without formatting any output, so that the read path is timed alone (the CLI's `scan`
//! also renders text).

use std::time::Instant;

use alluvium::{Error, Result, ScanBuilder, VersionSpec};
use alluvium_cli::{open, outln};
use clap::Args;
use serde_json::json;

use super::{round3, summary};

/// Arguments of `scan`.
#[derive(Debug, Args)]
pub struct ScanBenchArgs {
    /// Table location.
    table: String,
    /// Scan this version (default: latest).
    #[arg(long)]
    version: Option<u64>,
    /// Comma-separated columns to read (default: all).
    #[arg(long, value_delimiter = ',')]
    columns: Option<Vec<String>>,
    /// Only rows matching this predicate, e.g. "region = 'EU' AND amount > 10".
    #[arg(long)]
    filter: Option<String>,
    /// Number of timed scans.
    #[arg(long, default_value_t = 5)]
    repeat: usize,
}

/// What one scan produced.
struct ScanRun {
    version: u64,
    files: usize,
    rows: usize,
    bytes: usize,
}

/// One scan as an engine would run it: open the table, load the snapshot, plan (prune by
/// statistics and partitions) and read every remaining file to Arrow. Dropping the batches
/// is part of the run.
fn scan_once(a: &ScanBenchArgs, spec: VersionSpec) -> Result<ScanRun> {
    let snapshot = open(&a.table)?.snapshot_at(spec)?;
    let version = snapshot.version();
    let mut builder = ScanBuilder::new(snapshot);
    if let Some(cols) = &a.columns {
        builder = builder.with_columns(cols.iter().map(|c| c.trim().to_string()));
    }
    if let Some(f) = &a.filter {
        builder = builder.with_filter_str(f)?;
    }
    let scan = builder.build()?;
    let mut rows = 0;
    let mut bytes = 0;
    for batch in scan.execute() {
        let batch = batch?;
        rows += batch.num_rows();
        bytes += batch.get_array_memory_size();
    }
    Ok(ScanRun {
        version,
        files: scan.files().len(),
        rows,
        bytes,
    })
}

/// Runs `scan`: one untimed warm-up scan (page cache, allocator), then `--repeat` timed ones.
pub fn run(a: ScanBenchArgs) -> Result<()> {
    if a.repeat == 0 {
        return Err(Error::InvalidArgument("--repeat must be at least 1".into()));
    }
    let spec = a.version.map_or(VersionSpec::Latest, VersionSpec::Version);
    let first = scan_once(&a, spec)?;
    let mut times = Vec::with_capacity(a.repeat);
    for _ in 0..a.repeat {
        let started = Instant::now();
        scan_once(&a, spec)?;
        times.push(round3(started.elapsed().as_secs_f64() * 1000.0));
    }
    let (median, min, max) = summary(times.clone());
    outln!(
        "{}",
        json!({"bench": "scan", "version": first.version, "files": first.files,
               "rows": first.rows, "bytes": first.bytes, "repeat": a.repeat,
               "median_ms": round3(median), "min_ms": round3(min), "max_ms": round3(max),
               "times_ms": times})
    );
    Ok(())
}
