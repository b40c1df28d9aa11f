//! `alluvium-bench optimize` and `alluvium-bench vacuum`: OPTIMIZE and VACUUM timed inside
//! one process, on scratch copies so that the input table is never changed.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use alluvium::OptimizeOptions;
use alluvium::{Error, Result, Table, WriteOptions};
use alluvium::{VacuumMode, VacuumOptions};
use arrow::array::{ArrayRef, Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use clap::Args;
use serde_json::json;

use alluvium_cli::outln;

use super::{round3, summary};

/// Arguments of `bench optimize`.
#[derive(Debug, Args)]
pub struct OptimizeBenchArgs {
    /// A local table; each run compacts a fresh copy of it.
    table: String,
    /// Timed runs.
    #[arg(long, default_value_t = 5)]
    repeat: usize,
}

/// Arguments of `bench vacuum`.
#[derive(Debug, Args)]
pub struct VacuumBenchArgs {
    /// Directory for the generated table (must not exist).
    dir: String,
    /// Unreferenced data files to generate (older than the retention).
    #[arg(long, default_value_t = 100_000)]
    files: usize,
    /// Partition directories they are spread over.
    #[arg(long, default_value_t = 100)]
    partitions: usize,
}

fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> Error {
    let context = context.into();
    move |source| Error::Io { context, source }
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).map_err(io(to.display().to_string()))?;
    for entry in std::fs::read_dir(from).map_err(io(from.display().to_string()))? {
        let entry = entry.map_err(io(from.display().to_string()))?;
        let target = to.join(entry.file_name());
        if entry.file_type().map_err(io("file type"))?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target).map_err(io(target.display().to_string()))?;
        }
    }
    Ok(())
}

fn scratch(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("alluvium-bench-{name}-{}", std::process::id()))
}

/// Copies the table, then times `Table::optimize` on the copy (snapshot load, planning,
/// rewriting and committing: what `alluvium optimize` does), `--repeat` times.
pub fn optimize(a: OptimizeBenchArgs) -> Result<()> {
    if a.repeat == 0 {
        return Err(Error::InvalidArgument("--repeat must be at least 1".into()));
    }
    let work = scratch("optimize");
    let mut times = Vec::with_capacity(a.repeat);
    let mut last = None;
    for _ in 0..a.repeat {
        let _ = std::fs::remove_dir_all(&work);
        copy_dir(Path::new(&a.table), &work)?;
        let started = Instant::now();
        let table = Table::open(&work.display().to_string())?;
        let report = table.optimize(&OptimizeOptions::default())?;
        times.push(started.elapsed().as_secs_f64() * 1000.0);
        last = Some(report);
    }
    let _ = std::fs::remove_dir_all(&work);
    let (median, min, max) = summary(times);
    let r = last.unwrap_or_default();
    outln!(
        "{}",
        json!({"bench": "optimize", "repeat": a.repeat, "files_removed": r.files_removed,
               "files_added": r.files_added, "bytes_removed": r.bytes_removed,
               "median_ms": round3(median), "min_ms": round3(min), "max_ms": round3(max)})
    );
    Ok(())
}

/// Generates a table with one live file per partition and `--files` unreferenced files
/// (as aborted writers leave) dated 30 days back, then times a full VACUUM at the default
/// retention and checks that it deleted exactly the unreferenced files.
pub fn vacuum(a: VacuumBenchArgs) -> Result<()> {
    if Path::new(&a.dir).exists() {
        return Err(Error::InvalidArgument(format!("{} already exists", a.dir)));
    }
    let partitions = a.partitions.max(1);
    let table = Table::open_local(&a.dir, false)?;
    let schema = Arc::new(Schema::new(vec![
        Field::new("p", DataType::Int64, false),
        Field::new("v", DataType::Int64, false),
    ]));
    table.create(&schema, &["p".to_string()], alluvium::NO_PROPERTIES)?;
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from_iter_values(0..partitions as i64)) as ArrayRef,
            Arc::new(Int64Array::from_iter_values(0..partitions as i64)),
        ],
    )?;
    table.append([batch], &WriteOptions::default())?;
    let old = SystemTime::now() - Duration::from_secs(30 * 24 * 3600);
    let generate = Instant::now();
    let root = std::fs::canonicalize(&a.dir).map_err(io(a.dir.clone()))?;
    for p in 0..partitions {
        let dir = root.join(format!("p={p}"));
        std::fs::create_dir_all(&dir).map_err(io(dir.display().to_string()))?;
    }
    let made: Vec<Result<()>> = rayon_for(0..a.files, |i| {
        let dir = root.join(format!("p={}", i % partitions));
        let path = dir.join(format!("part-orphan-{i:08}.snappy.parquet"));
        let f = std::fs::File::create(&path).map_err(io(path.display().to_string()))?;
        f.set_modified(old)
            .map_err(io(path.display().to_string()))?;
        Ok(())
    });
    made.into_iter().collect::<Result<Vec<_>>>()?;
    let generate_s = generate.elapsed().as_secs_f64();
    let live_before = table.snapshot()?.num_files();
    let started = Instant::now();
    let report = table.vacuum(&VacuumOptions::default().with_mode(VacuumMode::Full))?;
    let seconds = started.elapsed().as_secs_f64();
    let live_after = table.snapshot()?.num_files();
    let remaining: usize = (0..partitions)
        .map(|p| std::fs::read_dir(root.join(format!("p={p}"))).map_or(0, |d| d.count()))
        .sum();
    if report.deleted.len() != a.files || live_after != live_before || remaining != live_after {
        return Err(Error::InvalidArgument(format!(
            "vacuum deleted {} of {} unreferenced files; {remaining} files remain for {live_after} live",
            report.deleted.len(),
            a.files
        )));
    }
    outln!(
        "{}",
        json!({"bench": "vacuum", "mode": "full", "unreferenced": a.files, "partitions": partitions,
               "deleted": report.deleted.len(), "live_files": live_after,
               "generate_s": round3(generate_s), "seconds": round3(seconds)})
    );
    Ok(())
}

fn rayon_for<R: Send>(
    range: std::ops::Range<usize>,
    f: impl Fn(usize) -> R + Sync + Send,
) -> Vec<R> {
    use rayon::prelude::*;
    range.into_par_iter().map(f).collect()
}
