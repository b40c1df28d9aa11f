//! `alluvium bench`: measurements inside one process, printed as one JSON line.

use std::time::Instant;

use alluvium::txlog::path::resolve;
use alluvium::{Error, Result, Table, VersionSpec};
use clap::{Args, Subcommand};
use serde_json::json;

/// What to measure.
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Cold-load a snapshot and list its live files, `--repeat` times, each with a fresh
    /// table handle (no cache).
    Load(LoadArgs),
}

/// Arguments of `bench load`.
#[derive(Debug, Args)]
pub struct LoadArgs {
    /// Table location.
    table: String,
    /// Load this version (default: latest).
    #[arg(long)]
    version: Option<u64>,
    /// Number of timed loads.
    #[arg(long, default_value_t = 10)]
    repeat: usize,
}

/// Median, min and max of durations in milliseconds.
pub fn summary(mut ms: Vec<f64>) -> (f64, f64, f64) {
    ms.sort_by(f64::total_cmp);
    let n = ms.len();
    if n == 0 {
        return (0.0, 0.0, 0.0);
    }
    let median = if n % 2 == 1 {
        ms[n / 2]
    } else {
        (ms[n / 2 - 1] + ms[n / 2]) / 2.0
    };
    (median, ms[0], ms[n - 1])
}

fn load_once(table: &str, spec: VersionSpec) -> Result<(u64, usize)> {
    let snapshot = Table::open(table)?.snapshot_at(spec)?;
    let files: Vec<String> = snapshot
        .files()
        .map(|f| resolve(&f.path, snapshot.root()).map(|l| l.to_string()))
        .collect::<std::result::Result<_, _>>()?;
    Ok((snapshot.version(), files.len()))
}

pub fn run(cmd: BenchCommand) -> Result<()> {
    match cmd {
        BenchCommand::Load(a) => {
            if a.repeat == 0 {
                return Err(Error::InvalidArgument("--repeat must be at least 1".into()));
            }
            let spec = a.version.map_or(VersionSpec::Latest, VersionSpec::Version);
            // One untimed warm-up load: page cache and allocator, as every peer gets.
            let (version, files) = load_once(&a.table, spec)?;
            let mut times = Vec::with_capacity(a.repeat);
            for _ in 0..a.repeat {
                let started = Instant::now();
                load_once(&a.table, spec)?;
                times.push(started.elapsed().as_secs_f64() * 1000.0);
            }
            let (median, min, max) = summary(times);
            println!(
                "{}",
                json!({"bench": "load", "version": version, "files": files, "repeat": a.repeat,
                       "median_ms": round3(median), "min_ms": round3(min), "max_ms": round3(max)})
            );
            Ok(())
        }
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
