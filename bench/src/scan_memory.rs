//! `alluvium-bench scan-memory`: the peak memory of `alluvium scan` printing a large table in
//! the aligned table format, every row, into a pipe: the case that once collected the whole
//! result to compute column widths (1M rows: 1.98 GB). The table is generated once
//! (`--rows` rows in files of 100,000); the `alluvium` binary beside this one (or
//! `--alluvium`) runs as a child whose stdout is read and thrown away here, and its peak
//! resident set size is the kernel's (`getrusage(RUSAGE_CHILDREN)`).

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

use alluvium::{Error, Result, ScanBuilder, WriteOptions};
use alluvium_cli::{open_with_fsync, outln};
use arrow::array::{
    ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray,
};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use clap::Args;
use serde_json::json;

use super::round3;

/// Rows per generated data file.
const FILE_ROWS: u64 = 100_000;

/// Arguments of `scan-memory`.
#[derive(Debug, Args)]
pub struct ScanMemoryArgs {
    /// Directory of the table (generated when it holds none).
    dir: String,
    /// Rows of the generated table.
    #[arg(long, default_value_t = 1_000_000)]
    rows: u64,
    /// The `alluvium` binary (default: the one beside this binary).
    #[arg(long)]
    alluvium: Option<String>,
    /// Output format of the measured scan.
    #[arg(long, default_value = "table")]
    format: String,
}

fn io(context: &str) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| Error::Io {
        context: context.to_string(),
        source: e,
    }
}

/// Rows `start..end` of the generated table: an id, a name, an amount and a timestamp.
fn rows(start: u64, end: u64) -> Result<RecordBatch> {
    let ids: Vec<i64> = (start as i64..end as i64).collect();
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("name", DataType::Utf8, true),
        Field::new("amount", DataType::Float64, true),
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            true,
        ),
    ]));
    Ok(RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from(ids.clone())) as ArrayRef,
            Arc::new(StringArray::from_iter_values(
                ids.iter().map(|i| format!("customer-{}", i % 9973)),
            )),
            Arc::new(Float64Array::from_iter_values(
                ids.iter().map(|i| (i * 7919 % 100_000) as f64 / 100.0),
            )),
            Arc::new(
                TimestampMicrosecondArray::from_iter_values(
                    ids.iter().map(|i| 1_700_000_000_000_000 + i * 1_000_000),
                )
                .with_timezone("UTC"),
            ),
        ],
    )?)
}

/// The `alluvium` binary beside this one.
fn sibling_binary() -> Result<String> {
    let me = std::env::current_exe().map_err(io("current executable"))?;
    let path = me.with_file_name("alluvium");
    Ok(path.to_string_lossy().into_owned())
}

/// Peak resident set size of the waited-for children, in MiB (Linux reports KiB).
fn children_peak_rss_mib() -> Option<f64> {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a whole `rusage` into the pointer it is given, which points
    // to one; the zeroed value is a valid `rusage` if it wrote nothing.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, usage.as_mut_ptr()) };
    if rc != 0 {
        return None;
    }
    // SAFETY: initialised: zeroed, then written by getrusage.
    let usage = unsafe { usage.assume_init() };
    Some(round3(usage.ru_maxrss as f64 / 1024.0))
}

pub fn run(a: ScanMemoryArgs) -> Result<()> {
    let table = open_with_fsync(&a.dir, false)?;
    let generated = match table.snapshot() {
        Ok(_) => false,
        Err(e) if e.is_not_found() => {
            let first = rows(0, 0)?;
            table.create(&first.schema(), &[], alluvium::NO_PROPERTIES)?;
            let mut start = 0;
            while start < a.rows {
                let end = (start + FILE_ROWS).min(a.rows);
                table.append([rows(start, end)?], &WriteOptions::default())?;
                start = end;
            }
            true
        }
        Err(e) => return Err(e),
    };
    let snapshot = table.snapshot()?;
    let files = snapshot.num_files();
    let table_rows = ScanBuilder::new(snapshot.clone())
        .build()?
        .count_from_statistics();
    let bytes: i64 = snapshot.files().map(|f| f.size()).sum();
    let bin = a.alluvium.clone().map_or_else(sibling_binary, Ok)?;
    let started = Instant::now();
    let mut child = Command::new(&bin)
        .args(["scan", &a.dir, "--format", &a.format])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(io(&bin))?;
    let mut printed: u64 = 0;
    let mut out = child
        .stdout
        .take()
        .ok_or_else(|| Error::InvalidArgument("the child has no stdout".into()))?;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = out.read(&mut buf).map_err(io("the scan's output"))?;
        if n == 0 {
            break;
        }
        printed += n as u64;
    }
    let status = child.wait().map_err(io(&bin))?;
    if !status.success() {
        return Err(Error::InvalidArgument(format!(
            "{bin} scan exited with {status}"
        )));
    }
    outln!(
        "{}",
        json!({"bench": "scan-memory", "format": a.format, "rows": table_rows, "files": files,
               "table_bytes": bytes, "generated": generated,
               "printed_mib": round3(printed as f64 / 1024.0 / 1024.0),
               "seconds": round3(started.elapsed().as_secs_f64()),
               "peak_rss_mib": children_peak_rss_mib()})
    );
    Ok(())
}
