//! Command-line parsing and dispatch. Commands are thin: each calls the library and formats
//! what it returns; no protocol logic lives here.

/// `println!` that fails the command instead of panicking when stdout is closed (see
/// [`report`]); for commands whose output is their result.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::cli::report::print_line(format_args!($($arg)*))?
    };
}

mod bench;
mod bench_maintenance;
mod demo;
mod files;
mod history;
mod input;
mod inspect;
mod maintenance;
mod optimize;
mod output;
pub mod report;
mod scan;
mod text;
mod verify;
mod write;

use std::process::ExitCode;

use alluvium::{Error, Result, Table, VersionSpec};
use clap::{Args, Parser, Subcommand};

/// alluvium: read and write Delta Lake tables.
#[derive(Debug, Parser)]
#[command(name = "alluvium", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the rows of a table (optionally a past version, some columns, matching rows).
    Scan(scan::ScanArgs),
    /// Describe a table: version, protocol, schema, partitioning, properties, size.
    Inspect(inspect::InspectArgs),
    /// List the live data files of a table, one table-relative path per line.
    Files(files::FilesArgs),
    /// Show the commit history of a table, newest first.
    History(history::HistoryArgs),
    /// Create a table with the schema of a data file (or a Delta schema JSON file).
    Create(write::CreateArgs),
    /// Append a data file (.parquet, .csv, .jsonl) to a table.
    Append(write::AppendArgs),
    /// Overwrite a table, or the rows matching --filter, with a data file.
    Overwrite(write::OverwriteArgs),
    /// Delete the rows matching --filter.
    Delete(write::DeleteArgs),
    /// Write a checkpoint of the latest version now.
    Checkpoint(maintenance::CheckpointArgs),
    /// Delete log files older than delta.logRetentionDuration (only below a checkpoint).
    #[command(name = "cleanup-log")]
    CleanupLog(maintenance::CleanupArgs),
    /// Compact small files (bin-packing, or Z-order with --zorder); appends may go on.
    Optimize(optimize::OptimizeArgs),
    /// Delete data files no version inside the retention window references.
    Vacuum(optimize::VacuumArgs),
    /// Build a partitioned table with concurrent writers, a delete, an overwrite and time
    /// travel, printing each step.
    Demo(demo::DemoArgs),
    /// Check a table without changing it: the log, checkpoints, `_last_checkpoint`, data
    /// files and deletion vectors (--deep: also statistics against the data). Exits 0 for a
    /// clean table, 3 when something is wrong (one line per finding), 1 if it cannot check.
    Verify(verify::VerifyArgs),
    /// Measure alluvium.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
}

/// Selects a version of a table.
#[derive(Debug, Args, Clone)]
pub struct VersionArgs {
    /// Read this version.
    #[arg(long, conflicts_with = "timestamp")]
    version: Option<u64>,
    /// Read the latest version committed at or before this time (RFC 3339, `YYYY-MM-DD[ HH:MM:SS]` in UTC, or milliseconds since the epoch).
    #[arg(long)]
    timestamp: Option<String>,
}

impl VersionArgs {
    fn spec(&self) -> Result<VersionSpec> {
        if let Some(v) = self.version {
            return Ok(VersionSpec::Version(v));
        }
        match &self.timestamp {
            Some(t) => Ok(VersionSpec::Timestamp(parse_timestamp_arg(t)?)),
            None => Ok(VersionSpec::Latest),
        }
    }
}

/// Parses a `--timestamp` value into milliseconds since the epoch.
fn parse_timestamp_arg(t: &str) -> Result<i64> {
    if let Ok(ms) = t.trim().parse::<i64>() {
        return Ok(ms);
    }
    alluvium_txlog::value_text::parse_timestamp(t).map(|us| us.div_euclid(1000)).ok_or_else(|| {
        Error::InvalidArgument(format!(
            "invalid --timestamp {t:?}: use RFC 3339 (2024-01-31T12:00:00Z), `YYYY-MM-DD[ HH:MM:SS]` (UTC) or epoch milliseconds"
        ))
    })
}

fn open(table: &str) -> Result<Table> {
    Table::open(table)
}

/// Parses the command line and runs the command; the exit status for success or findings.
pub fn run() -> Result<ExitCode> {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            // Help and version go to stdout with success; usage errors exit 2 via clap.
            e.exit();
        }
    };
    let done = match cli.command {
        Command::Verify(a) => return verify::run(a),
        Command::Scan(a) => scan::run(a),
        Command::Inspect(a) => inspect::run(a),
        Command::Files(a) => files::run(a),
        Command::History(a) => history::run(a),
        Command::Create(a) => write::create(a),
        Command::Append(a) => write::append(a),
        Command::Overwrite(a) => write::overwrite(a),
        Command::Delete(a) => write::delete(a),
        Command::Checkpoint(a) => maintenance::checkpoint(a),
        Command::CleanupLog(a) => maintenance::cleanup_log(a),
        Command::Optimize(a) => optimize::optimize(a),
        Command::Vacuum(a) => optimize::vacuum(a),
        Command::Demo(a) => demo::run(a),
        Command::Bench(b) => bench::run(b),
    };
    done.map(|()| ExitCode::SUCCESS)
}

/// An error as one line of text.
pub fn one_line(e: &Error) -> String {
    e.to_string().replace(['\n', '\r'], " ")
}
