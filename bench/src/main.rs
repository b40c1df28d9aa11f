//! `alluvium-bench`: measurements of alluvium inside one process, each printed as one JSON
//! line (timings in milliseconds, medians over `--repeat` runs, request counts).
//!
//! A separate binary so that the product (`alluvium`) and the library carry no benchmark
//! scaffolding; it uses the library's public API, the synthetic-log generator of this
//! package ([`alluvium_bench::synthetic`]) and the CLI's plumbing (opening tables with
//! `ALLUVIUM_STORAGE_OPTIONS`, printing, the one-line error contract).

mod changes;
mod maintenance;
mod scan;
mod scan_memory;
mod skip;
mod state;
mod write_rows;

use std::time::Instant;

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::Arc;

use alluvium::mvcc::MvccError;
use alluvium::storage::{FileLocation, FileLocationRef, RequestCounts};
use alluvium::{Error, Result, VersionSpec, WriteOptions};
use alluvium_bench::synthetic;
use alluvium_cli::{open, open_with_fsync, outln};
use arrow::array::{ArrayRef, Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use clap::{Args, Parser, Subcommand};
use serde_json::json;

fn main() -> ExitCode {
    alluvium_cli::main_with(run)
}

/// alluvium-bench: measure alluvium (one JSON line per run).
#[derive(Debug, Parser)]
#[command(name = "alluvium-bench", version, about)]
struct Bench {
    #[command(subcommand)]
    command: BenchCommand,
}

/// What to measure.
#[derive(Debug, Subcommand)]
enum BenchCommand {
    /// Cold-load a snapshot and list its live files, `--repeat` times, each with a fresh
    /// table handle (no cache); also the snapshot's memory estimate (`file_set_bytes`,
    /// `state_bytes`) and the process's peak RSS.
    Load(LoadArgs),
    /// One-row appends: `--commits` in total, spread over `--writers` threads that each have
    /// their own table handle (as separate processes would), or share one
    /// (`--shared-handle`: their appends then share commits, SPEC.md §35); creates the
    /// table if needed.
    Append(AppendArgs),
    /// Generate a large log-only table: `--commits` commits of `--files-per-commit` adds each
    /// (with statistics, no data files), written through alluvium's log encoder, and a
    /// checkpoint `--tail` commits before the end.
    GenLog(GenLogArgs),
    /// Write a checkpoint of the latest version: time and peak memory (RSS) of the process,
    /// and the memory estimate of the file set it was written from.
    Checkpoint(CheckpointBenchArgs),
    /// Load the latest snapshot, commit `--commits` more (log-only), and time refreshing the
    /// snapshot incrementally.
    Refresh(RefreshArgs),
    /// OPTIMIZE a fresh copy of a local table `--repeat` times (load, plan, rewrite, commit).
    Optimize(maintenance::OptimizeBenchArgs),
    /// Generate a table with `--files` unreferenced old data files, then time a full VACUUM.
    Vacuum(maintenance::VacuumBenchArgs),
    /// Scan a table to Arrow in this process `--repeat` times (no output formatting): the
    /// engine's read path alone.
    Scan(scan::ScanBenchArgs),
    /// The peak memory of `alluvium scan` printing a (generated) table in the table format,
    /// every row, into a pipe.
    ScanMemory(scan_memory::ScanMemoryArgs),
    /// Read the change data feed of a version range to Arrow in this process `--repeat`
    /// times (no output formatting), with the process's peak memory.
    Changes(changes::ChangesBenchArgs),
    /// The keyed state store's workload: `--events` events over `--keys` keys put in
    /// batches of `--batch`, a sync after each, then `--lookups` single-key lookups.
    State(state::StateBenchArgs),
    /// Write `--rows` generated rows (4 columns) as a new table in one commit, `--repeat`
    /// times: the Rust side of the Python package's write comparison.
    Write(write_rows::WriteRowsArgs),
    /// Data skipping over a loaded snapshot: the first `files_matching` of `--filter`
    /// (building the typed statistics columns), the queries after it, and the same
    /// judgement file by file, `--repeat` times each.
    Skip(skip::SkipBenchArgs),
}

/// Arguments of `bench gen-log`.
#[derive(Debug, Args)]
pub struct GenLogArgs {
    /// Directory for the new table.
    dir: String,
    /// Commits after the table's creation.
    #[arg(long, default_value_t = 100_000)]
    commits: u64,
    /// `add` actions per commit.
    #[arg(long, default_value_t = 10)]
    files_per_commit: u64,
    /// Commits left after the checkpoint.
    #[arg(long, default_value_t = 9)]
    tail: u64,
}

/// Arguments of `bench checkpoint`.
#[derive(Debug, Args)]
pub struct CheckpointBenchArgs {
    /// Table location.
    table: String,
    /// Split into parts (or sidecars) of at most this many actions.
    #[arg(long)]
    part_size: Option<usize>,
}

/// Arguments of `bench refresh`.
#[derive(Debug, Args)]
pub struct RefreshArgs {
    /// Table location (a table made by `gen-log`).
    table: String,
    /// New commits before the refresh.
    #[arg(long, default_value_t = 10)]
    commits: u64,
    /// Number of timed refreshes (each after its own new commits).
    #[arg(long, default_value_t = 5)]
    repeat: usize,
}

/// Peak resident set size of this process in MiB (Linux), if known.
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some((kib / 1024.0 * 10.0).round() / 10.0)
}

/// The commit file of one synthetic version: commitInfo and `files` adds with statistics.
fn gen_log(a: GenLogArgs) -> Result<()> {
    use synthetic::{append_commits, create_table};
    let table = open_with_fsync(&a.dir, false)?;
    create_table(&table)?;
    let store = table.store().as_ref();
    let started = Instant::now();
    // One checkpoint `--tail` commits before the end, placed by hand.
    let checkpoint_at = a.commits.saturating_sub(a.tail);
    let mut checkpoint_ms = 0.0;
    let mut rss_before_checkpoint = None;
    if checkpoint_at > 0 {
        append_commits(store, 1, checkpoint_at, a.files_per_commit)?;
        let snapshot = table.snapshot_at(VersionSpec::Version(checkpoint_at))?;
        rss_before_checkpoint = peak_rss_mib();
        let s = Instant::now();
        alluvium::compaction::checkpoint(
            snapshot.as_mvcc(),
            &Default::default(),
            1_700_000_000_000,
        )?;
        checkpoint_ms = s.elapsed().as_secs_f64() * 1000.0;
    }
    append_commits(store, checkpoint_at + 1, a.commits, a.files_per_commit)?;
    outln!(
        "{}",
        json!({"bench": "gen-log", "commits": a.commits, "files": a.commits * a.files_per_commit, "checkpoint_version": checkpoint_at,
               "seconds": round3(started.elapsed().as_secs_f64()), "checkpoint_ms": round3(checkpoint_ms),
               "peak_rss_mib_before_checkpoint": rss_before_checkpoint, "peak_rss_mib": peak_rss_mib()})
    );
    Ok(())
}

fn checkpoint_bench(a: CheckpointBenchArgs) -> Result<()> {
    let table = open(&a.table)?;
    let load = Instant::now();
    let snapshot = table.snapshot()?;
    let load_ms = load.elapsed().as_secs_f64() * 1000.0;
    let rss_loaded = peak_rss_mib();
    let started = Instant::now();
    let out = alluvium::compaction::checkpoint(
        snapshot.as_mvcc(),
        &alluvium::compaction::CheckpointConfig::default().with_part_size(a.part_size),
        alluvium_now(),
    )?;
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    outln!(
        "{}",
        json!({"bench": "checkpoint", "version": out.version, "files": snapshot.num_files(), "load_ms": round3(load_ms),
               "checkpoint_ms": round3(ms), "checkpoint_bytes": out.hint.size_in_bytes, "parts": out.files.len(),
               "peak_rss_mib_after_load": rss_loaded, "peak_rss_mib": peak_rss_mib(),
               "file_set_bytes": snapshot.memory_usage().files})
    );
    Ok(())
}

fn alluvium_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

fn refresh_bench(a: RefreshArgs) -> Result<()> {
    use alluvium::txlog::log_path::commit_path;
    let table = open(&a.table)?;
    let mut snapshot = table.snapshot()?;
    let mut times = Vec::new();
    let mut lists = 0;
    let mut heads = 0;
    let mut reads = 0;
    for _ in 0..a.repeat {
        let base = snapshot.version();
        for v in base + 1..=base + a.commits {
            table
                .store()
                .put_if_absent(&commit_path(v), synthetic::commit(v, 10)?)?;
        }
        let started = Instant::now();
        let next = snapshot.refresh()?;
        times.push(started.elapsed().as_secs_f64() * 1000.0);
        lists += next.report().list_calls;
        heads += next.report().head_calls;
        reads += next.report().commits_read;
        snapshot = next;
    }
    let (median, min, max) = summary(times);
    outln!(
        "{}",
        json!({"bench": "refresh", "new_commits": a.commits, "files": snapshot.num_files(), "version": snapshot.version(),
               "median_ms": round3(median), "min_ms": round3(min), "max_ms": round3(max),
               "list_calls_per_refresh": lists as f64 / a.repeat as f64,
               "head_calls_per_refresh": heads as f64 / a.repeat as f64, "commits_read_per_refresh": reads as f64 / a.repeat as f64})
    );
    Ok(())
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
    /// The writer threads share one table handle, so that their appends share commits
    /// (group commit); by default each has its own.
    #[arg(long)]
    shared_handle: bool,
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
    /// Resolve each file to an owned location (`Snapshot::file_location`, one allocation
    /// per file) instead of a borrowed one (`file_location_ref`): the measure before the
    /// borrowed form existed.
    #[arg(long)]
    owned_locations: bool,
}

/// Median, min and max of durations in milliseconds.
fn summary(mut ms: Vec<f64>) -> (f64, f64, f64) {
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

/// What one timed load saw.
struct LoadRun {
    version: u64,
    files: usize,
    list_calls: u32,
    snapshot_ms: f64,
    requests: RequestCounts,
    /// The snapshot's memory estimate, when asked for (it walks every file).
    memory: Option<alluvium::MemoryUsage>,
}

/// Opens the table, loads the snapshot and resolves every live file's location (borrowed
/// from the snapshot, or owned with `owned`), all held at once: what a query engine needs
/// before planning. Dropping the snapshot is part of the run.
fn load_once(table: &str, spec: VersionSpec, measure_memory: bool, owned: bool) -> Result<LoadRun> {
    let snapshot = open(table)?.snapshot_at(spec)?;
    // Sized once: collecting through `Result` would grow the vector by doubling.
    let files = if owned {
        let mut files: Vec<FileLocation> = Vec::with_capacity(snapshot.num_files());
        for f in snapshot.files() {
            files.push(snapshot.file_location(f.path())?);
        }
        files.len()
    } else {
        let mut files: Vec<FileLocationRef<'_>> = Vec::with_capacity(snapshot.num_files());
        for f in snapshot.files() {
            files.push(snapshot.file_location_ref(f.path())?);
        }
        files.len()
    };
    let report = snapshot.report();
    Ok(LoadRun {
        version: snapshot.version(),
        files,
        list_calls: report.list_calls,
        snapshot_ms: report.load_micros as f64 / 1000.0,
        requests: report.requests,
        memory: measure_memory.then(|| snapshot.memory_usage()),
    })
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

/// One append writer's latencies (ms) and commits (version, attempts, requests).
type WriterLog = (Vec<f64>, Vec<(u64, u32, RequestCounts)>);

fn append(a: AppendArgs) -> Result<()> {
    if a.writers == 0 || a.commits == 0 {
        return Err(Error::InvalidArgument(
            "--commits and --writers must be at least 1".into(),
        ));
    }
    let durable = !a.no_fsync;
    let table = open_with_fsync(&a.dir, durable)?;
    if table.snapshot().is_err() {
        match table.create(&one_row(0, 0)?.schema(), &[], alluvium::NO_PROPERTIES) {
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
            let shared = a.shared_handle.then(|| table.clone());
            std::thread::spawn(move || -> Result<WriterLog> {
                let t = match shared {
                    Some(t) => t,
                    None => open_with_fsync(&dir, durable)?,
                };
                let mut lat = Vec::with_capacity(n);
                let mut commits = Vec::with_capacity(n);
                // Rows identify (process, writer, sequence) so that runs from several
                // processes on one table can be checked for loss and duplication.
                let writer_id = writer_base() + w;
                for i in 0..n {
                    let s = Instant::now();
                    let o = t.append([one_row(writer_id, i)?], &WriteOptions::default())?;
                    lat.push(s.elapsed().as_secs_f64() * 1000.0);
                    if let Some(r) = o.report() {
                        commits.push((r.version, r.attempts, r.requests));
                    }
                }
                Ok((lat, commits))
            })
        })
        .collect();
    let mut latencies = Vec::new();
    // A group commit's attempts and requests are reported to each of its members: count
    // them once per version.
    let mut per_version: HashMap<u64, (u32, RequestCounts)> = HashMap::new();
    for h in handles {
        let (l, c) = h
            .join()
            .map_err(|_| Error::InvalidArgument("a writer thread panicked".into()))??;
        latencies.extend(l);
        for (v, attempts, requests) in c {
            per_version.insert(v, (attempts, requests));
        }
    }
    let retries: u32 = per_version.values().map(|(a, _)| a.saturating_sub(1)).sum();
    let requests = per_version
        .values()
        .fold(RequestCounts::default(), |acc, (_, r)| acc + *r);
    let elapsed = started.elapsed().as_secs_f64();
    let end_version = table.snapshot()?.version();
    let versions = end_version - start_version;
    // Every acknowledged append's row must be in the table exactly once.
    let rows = rows_of_this_process(&table)?;
    latencies.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        latencies
            .get(((latencies.len() as f64 - 1.0) * p).round() as usize)
            .copied()
            .unwrap_or(0.0)
    };
    let appends = a.commits as u64;
    outln!(
        "{}",
        json!({"bench": "append", "commits": a.commits, "writers": a.writers, "durable": durable,
               "shared_handle": a.shared_handle,
               "commits_per_s": round3(a.commits as f64 / elapsed), "appends_per_s": round3(a.commits as f64 / elapsed),
               "versions_per_s": round3(versions as f64 / elapsed),
               "appends_per_version": round3(a.commits as f64 / (versions.max(1)) as f64),
               "p50_ms": round3(pct(0.5)), "p99_ms": round3(pct(0.99)),
               "retries": retries, "retries_per_commit": round3(f64::from(retries) / a.commits as f64),
               "versions": versions, "lost": appends.saturating_sub(rows), "duplicated": rows.saturating_sub(appends),
               "commit_requests": requests_json(&requests)})
    );
    Ok(())
}

/// The first writer id of this process: rows carry `process id * 1000 + writer`.
fn writer_base() -> usize {
    std::process::id() as usize * 1000
}

/// Rows this process's writers appended that the table holds (each counted as often as
/// it is there).
fn rows_of_this_process(table: &alluvium::Table) -> Result<u64> {
    let lo = writer_base();
    let scan = alluvium::ScanBuilder::new(table.snapshot()?)
        .with_columns(["writer"])
        .with_filter_str(&format!("writer >= {lo} AND writer < {}", lo + 1000))?
        .build()?;
    let mut rows = 0u64;
    for b in scan.execute() {
        let b = b?;
        let w = b
            .column(0)
            .as_any()
            .downcast_ref::<Int64Array>()
            .ok_or_else(|| Error::InvalidArgument("column writer is not a long".into()))?;
        rows += w
            .iter()
            .filter(|v| v.is_some_and(|v| v >= lo as i64 && v < lo as i64 + 1000))
            .count() as u64;
    }
    Ok(rows)
}

/// Parses the command line and runs the measurement.
fn run() -> Result<ExitCode> {
    let cmd = match Bench::try_parse() {
        Ok(b) => b.command,
        // Help and version go to stdout with success; usage errors exit 2 via clap.
        Err(e) => e.exit(),
    };
    let done = match cmd {
        BenchCommand::Append(a) => append(a),
        BenchCommand::GenLog(a) => gen_log(a),
        BenchCommand::Checkpoint(a) => checkpoint_bench(a),
        BenchCommand::Refresh(a) => refresh_bench(a),
        BenchCommand::Optimize(a) => maintenance::optimize(a),
        BenchCommand::Vacuum(a) => maintenance::vacuum(a),
        BenchCommand::Scan(a) => scan::run(a),
        BenchCommand::ScanMemory(a) => scan_memory::run(a),
        BenchCommand::Changes(a) => changes::run(a),
        BenchCommand::State(a) => state::run(a),
        BenchCommand::Write(a) => write_rows::run(a),
        BenchCommand::Skip(a) => skip::run(a),
        BenchCommand::Load(a) => {
            if a.repeat == 0 {
                return Err(Error::InvalidArgument("--repeat must be at least 1".into()));
            }
            let spec = a.version.map_or(VersionSpec::Latest, VersionSpec::Version);
            // One untimed warm-up load: page cache and allocator, as every peer gets.
            let first = load_once(&a.table, spec, true, a.owned_locations)?;
            let mut times = Vec::with_capacity(a.repeat);
            let mut snapshot_times = Vec::with_capacity(a.repeat);
            let mut list_calls = 0;
            let mut requests = first.requests;
            for _ in 0..a.repeat {
                let started = Instant::now();
                let run = load_once(&a.table, spec, false, a.owned_locations)?;
                times.push(started.elapsed().as_secs_f64() * 1000.0);
                snapshot_times.push(run.snapshot_ms);
                list_calls = list_calls.max(run.list_calls);
                requests = run.requests;
            }
            let (median, min, max) = summary(times);
            let (snapshot_median, _, _) = summary(snapshot_times);
            outln!(
                "{}",
                json!({"bench": "load", "version": first.version, "files": first.files,
                       "repeat": a.repeat, "median_ms": round3(median), "min_ms": round3(min),
                       "max_ms": round3(max), "snapshot_median_ms": round3(snapshot_median),
                       "list_calls": list_calls, "requests": requests_json(&requests),
                       "file_set_bytes": first.memory.map(|m| m.files),
                       "state_bytes": first.memory.map(|m| m.total()),
                       "peak_rss_mib": peak_rss_mib()})
            );
            Ok(())
        }
    };
    done.map(|()| ExitCode::SUCCESS)
}

/// Request counts of one operation as JSON (all zeros on stores that do not count).
fn requests_json(r: &RequestCounts) -> serde_json::Value {
    json!({"list": r.list, "get": r.get, "head": r.head, "put": r.put, "delete": r.delete, "other": r.other})
}

/// `x` rounded to three decimals (microseconds, for milliseconds).
fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
