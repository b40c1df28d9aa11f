//! `alluvium-bench skip`: data skipping over a loaded snapshot, the way a long-lived table
//! handle serves queries: the first query of a filter (which builds the snapshot's typed
//! statistics columns for its columns), the queries after it, and the same judgement made
//! file by file (each file's statistics JSON parsed per query, the path every query took
//! before the columns existed).

use std::time::Instant;

use alluvium::expr::FileFilter;
use alluvium::{Error, Result, VersionSpec, parse_expr};
use alluvium_cli::{open, outln};
use clap::Args;
use serde_json::json;

use super::{peak_rss_mib, round3, summary};

/// Arguments of `skip`.
#[derive(Debug, Args)]
pub struct SkipBenchArgs {
    /// Table location.
    table: String,
    /// The filter, in the CLI's SQL-style syntax (e.g. `id BETWEEN 1000 AND 1999`).
    #[arg(long)]
    filter: String,
    /// Number of timed queries after the first, each way.
    #[arg(long, default_value_t = 10)]
    repeat: usize,
}

fn ms(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}

/// Runs the benchmark and prints one JSON line.
pub fn run(a: SkipBenchArgs) -> Result<()> {
    if a.repeat == 0 {
        return Err(Error::InvalidArgument("--repeat must be at least 1".into()));
    }
    let expr = parse_expr(&a.filter)?;
    let table = open(&a.table)?;
    let snapshot = table.snapshot_at(VersionSpec::Latest)?;
    let mvcc = snapshot.as_mvcc();
    let pred = mvcc.bind(&expr)?;
    let started = Instant::now();
    let kept = snapshot.files_matching(&expr)?.len();
    let first_ms = ms(started);
    let (mut after, mut by_file) = (Vec::new(), Vec::new());
    for _ in 0..a.repeat {
        let started = Instant::now();
        let columnar = mvcc.files_matching(&pred).count();
        after.push(ms(started));
        let started = Instant::now();
        let one_by_one = FileFilter::new(&pred).matching(mvcc.files()).count();
        by_file.push(ms(started));
        if (columnar, one_by_one) != (kept, kept) {
            return Err(Error::InvalidArgument(format!(
                "the judgements disagree: {kept} and {columnar} files kept over the columns, \
                 {one_by_one} file by file"
            )));
        }
    }
    let (median, _, _) = summary(after);
    let (by_file_median, _, _) = summary(by_file);
    outln!(
        "{}",
        json!({"bench": "skip", "files": snapshot.num_files(), "kept": kept,
               "first_ms": round3(first_ms), "median_ms": round3(median),
               "by_file_median_ms": round3(by_file_median), "repeat": a.repeat,
               "state_bytes": snapshot.memory_usage().total(),
               "peak_rss_mib": peak_rss_mib()})
    );
    Ok(())
}
