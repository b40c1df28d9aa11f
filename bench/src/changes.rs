//! `alluvium-bench changes`: reading a table's change data feed to Arrow record batches
//! inside the process (no output formatting), streamed as `Table::changes` yields it, with
//! the peak memory of the process, to compare with delta-rs `load_cdf`.

use std::time::Instant;

use alluvium::{Error, Result, VersionSpec};
use alluvium_cli::{open, outln};
use clap::Args;
use serde_json::json;

use super::{peak_rss_mib, round3, summary};

/// Arguments of `changes`.
#[derive(Debug, Args)]
pub struct ChangesBenchArgs {
    /// Table location.
    table: String,
    /// First version of the range.
    #[arg(long)]
    from: u64,
    /// Last version of the range (default: the latest).
    #[arg(long)]
    to: Option<u64>,
    /// Comma-separated columns to read (default: all, with the feed's columns).
    #[arg(long, value_delimiter = ',')]
    columns: Option<Vec<String>>,
    /// Only change rows matching this predicate.
    #[arg(long)]
    filter: Option<String>,
    /// Number of timed reads.
    #[arg(long, default_value_t = 5)]
    repeat: usize,
    /// Strings and binaries as `Utf8View` / `BinaryView` (`ChangesBuilder::view_types`),
    /// the types delta-rs' `load_cdf` returns.
    #[arg(long)]
    view_types: bool,
    /// Untimed reads before the timed ones (0: the first timed read is the process's
    /// first, cold: heap, thread pool and code not yet touched).
    #[arg(long, default_value_t = 1)]
    warm_up: usize,
}

/// What one read produced.
struct ChangesRun {
    start: u64,
    end: u64,
    files: usize,
    rows: usize,
    bytes: usize,
    /// Opening the table and planning the range (before the first file is read).
    plan_ms: f64,
}

/// One read as an engine would run it: open the table, plan the range, stream every change
/// batch (dropping each once counted).
fn read_once(a: &ChangesBenchArgs) -> Result<ChangesRun> {
    let started = Instant::now();
    let mut builder = open(&a.table)?
        .changes(VersionSpec::Version(a.from), a.to.map(VersionSpec::Version))
        .view_types(a.view_types);
    if let Some(cols) = &a.columns {
        builder = builder.columns(cols.iter().map(|c| c.trim().to_string()));
    }
    if let Some(f) = &a.filter {
        builder = builder.filter_str(f)?;
    }
    let changes = builder.build()?;
    let plan_ms = started.elapsed().as_secs_f64() * 1000.0;
    let mut rows = 0;
    let mut bytes = 0;
    for batch in changes.execute() {
        let batch = batch?;
        rows += batch.num_rows();
        bytes += batch.get_array_memory_size();
    }
    Ok(ChangesRun {
        start: changes.start_version(),
        end: changes.end_version(),
        files: changes.num_files(),
        rows,
        bytes,
        plan_ms,
    })
}

/// Runs `changes`: `--warm-up` untimed reads, then `--repeat` timed ones.
pub fn run(a: ChangesBenchArgs) -> Result<()> {
    if a.repeat == 0 {
        return Err(Error::InvalidArgument("--repeat must be at least 1".into()));
    }
    for _ in 0..a.warm_up {
        read_once(&a)?;
    }
    let mut first = None;
    let mut times = Vec::with_capacity(a.repeat);
    let mut plan_times = Vec::with_capacity(a.repeat);
    for _ in 0..a.repeat {
        let started = Instant::now();
        let run = read_once(&a)?;
        times.push(round3(started.elapsed().as_secs_f64() * 1000.0));
        plan_times.push(run.plan_ms);
        first.get_or_insert(run);
    }
    let Some(first) = first else {
        return Err(Error::InvalidArgument("--repeat must be at least 1".into()));
    };
    let (median, min, max) = summary(times.clone());
    let (plan_median, _, _) = summary(plan_times);
    outln!(
        "{}",
        json!({"bench": "changes", "start_version": first.start, "end_version": first.end,
               "files": first.files, "rows": first.rows, "bytes": first.bytes,
               "repeat": a.repeat, "median_ms": round3(median), "min_ms": round3(min),
               "max_ms": round3(max), "times_ms": times,
               "plan_median_ms": round3(plan_median), "view_types": a.view_types, "peak_rss_mib": peak_rss_mib()})
    );
    Ok(())
}
