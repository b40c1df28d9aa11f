//! `alluvium bench`: measurements inside one process, printed as one JSON line.

use std::time::Instant;

use std::collections::HashMap;
use std::sync::Arc;

use alluvium::mvcc::MvccError;
use alluvium::txlog::path::resolve;
use alluvium::{Error, Result, Table, VersionSpec, WriteOptions};
use arrow::array::{ArrayRef, Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use clap::{Args, Subcommand};
use serde_json::json;

/// What to measure.
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Cold-load a snapshot and list its live files, `--repeat` times, each with a fresh
    /// table handle (no cache).
    Load(LoadArgs),
    /// One-row appends: `--commits` in total, spread over `--writers` threads that each have
    /// their own table handle (as separate processes would); creates the table if needed.
    Append(AppendArgs),
}

/// Arguments of `bench append`.
#[derive(Debug, Args)]
pub struct AppendArgs {
    /// Table location (created if missing).
    dir: String,
    /// Total commits across all writers.
    #[arg(long, default_value_t = 100)]
    commits: usize,
    /// Concurrent writers.
    #[arg(long, default_value_t = 1)]
    writers: usize,
    /// Skip fsync (faster; a power loss may lose acknowledged commits).
    #[arg(long)]
    no_fsync: bool,
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

fn one_row(writer: usize, i: usize) -> Result<RecordBatch> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("writer", DataType::Int64, false),
        Field::new("seq", DataType::Int64, false),
    ]));
    Ok(RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from(vec![writer as i64])) as ArrayRef,
            Arc::new(Int64Array::from(vec![i as i64])),
        ],
    )?)
}

fn append(a: AppendArgs) -> Result<()> {
    if a.writers == 0 || a.commits == 0 {
        return Err(Error::InvalidArgument(
            "--commits and --writers must be at least 1".into(),
        ));
    }
    let durable = !a.no_fsync;
    let table = Table::open_local(&a.dir, durable)?;
    if table.snapshot().is_err() {
        match table.create(&one_row(0, 0)?.schema(), &[], &HashMap::new()) {
            Ok(_) | Err(Error::Mvcc(MvccError::TableAlreadyExists { .. })) => {}
            Err(e) => return Err(e),
        }
    }
    let start_version = table.snapshot()?.version();
    let started = Instant::now();
    let handles: Vec<_> = (0..a.writers)
        .map(|w| {
            let n = a.commits / a.writers + usize::from(w < a.commits % a.writers);
            let dir = a.dir.clone();
            std::thread::spawn(move || -> Result<(Vec<f64>, u32)> {
                let t = Table::open_local(&dir, durable)?;
                let mut lat = Vec::with_capacity(n);
                let mut retries = 0;
                // Rows identify (process, writer, sequence) so that runs from several
                // processes on one table can be checked for loss and duplication.
                let writer_id = std::process::id() as usize * 1000 + w;
                for i in 0..n {
                    let s = Instant::now();
                    let o = t.append([one_row(writer_id, i)?], &WriteOptions::default())?;
                    lat.push(s.elapsed().as_secs_f64() * 1000.0);
                    retries += o.report().map_or(0, |r| r.attempts.saturating_sub(1));
                }
                Ok((lat, retries))
            })
        })
        .collect();
    let mut latencies = Vec::new();
    let mut retries = 0u32;
    for h in handles {
        let (l, r) = h
            .join()
            .map_err(|_| Error::InvalidArgument("a writer thread panicked".into()))??;
        latencies.extend(l);
        retries += r;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let end_version = table.snapshot()?.version();
    latencies.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        latencies
            .get(((latencies.len() as f64 - 1.0) * p).round() as usize)
            .copied()
            .unwrap_or(0.0)
    };
    println!(
        "{}",
        json!({"bench": "append", "commits": a.commits, "writers": a.writers, "durable": durable,
               "commits_per_s": round3(a.commits as f64 / elapsed), "p50_ms": round3(pct(0.5)), "p99_ms": round3(pct(0.99)),
               "retries": retries, "retries_per_commit": round3(f64::from(retries) / a.commits as f64),
               "versions": end_version - start_version, "lost": (a.commits as u64).saturating_sub(end_version - start_version)})
    );
    Ok(())
}

pub fn run(cmd: BenchCommand) -> Result<()> {
    match cmd {
        BenchCommand::Append(a) => append(a),
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
