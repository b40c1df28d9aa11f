//! The `alluvium` command-line tool: argument parsing, dispatch, and the formatting of what
//! the library returns (tables, CSV, JSON lines, reports, progress bars).
//!
//! This package owns everything only a command line needs: `clap`, `indicatif`, arrow's
//! CSV/JSON/pretty-print writers, the environment variable [`STORAGE_OPTIONS_ENV`], exit
//! codes, and every message naming a flag or an environment variable (hints added to the
//! library's typed errors when they are printed, see [`error_line`]). Commands are thin: each
//! calls the `alluvium` library's public API and formats the result; no protocol logic lives
//! here, and nothing here is reachable from the library.
//!
//! The library part of this package is the plumbing other command-line tools of the project
//! share (the `alluvium-bench` binary): opening a table as the CLI does ([`open`]), printing
//! without panicking ([`report`], [`outln!`]) and running a command with the one-line error
//! contract ([`main_with`]).
#![deny(missing_docs)]

/// `println!` that fails the command instead of panicking when stdout is closed (see
/// [`report`]); for commands whose output is their result. Expands to an expression using
/// `?`, so the enclosing function returns `alluvium::Result`.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::report::print_line(format_args!($($arg)*))?
    };
}

mod allocator;
mod changes;
mod convert;
mod count;
mod demo;
mod dml;
mod exit;
mod files;
mod history;
mod iceberg;
mod input;
mod inspect;
mod json_keys;
mod maintenance;
mod optimize;
mod output;
mod progress;
mod repair;
pub mod report;
mod restore;
mod scan;
mod state;
mod storage_options;
mod summary;
mod table_text;
mod text;
mod verify;
mod write;

use std::process::ExitCode;

use alluvium::{Error, Result, VersionSpec};
use clap::{Args, Parser, Subcommand};

pub use exit::{error_line, main_with};
pub use storage_options::{STORAGE_OPTIONS_ENV, open, open_with_fsync};

/// alluvium: read and write Delta Lake tables.
#[derive(Debug, Parser)]
// The help's first line is the library's description, as when the CLI was part of it.
#[command(
    name = "alluvium",
    version,
    about = "An embeddable storage engine for the Delta Lake transaction-log protocol"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the rows of a table (optionally a past version, some columns, matching rows),
    /// at most --limit rows (20 in the table format on a terminal).
    Scan(scan::ScanArgs),
    /// Count the rows of a table (optionally matching --filter, at a past version), from
    /// statistics where they answer exactly.
    Count(count::CountArgs),
    /// Print the change data feed of a range of versions: the changed rows with
    /// _change_type, _commit_version and _commit_timestamp.
    Changes(changes::ChangesArgs),
    /// Describe a table: version, protocol, schema, partitioning, properties, size.
    Inspect(inspect::InspectArgs),
    /// List the live data files of a table, one table-relative path per line (--long:
    /// with size, rows, deleted rows, time and partition values).
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
    /// Set columns of the rows matching --filter: --set "a = a + 1, b = 'x'".
    Update(dml::UpdateArgs),
    /// Merge a source file into a table: --on "t.id = s.id" and ordered --when clauses.
    Merge(dml::MergeArgs),
    /// Change a table: set or unset properties, add, rename or drop a column, widen a
    /// column's type, add or drop a CHECK constraint, change the clustering columns.
    Alter(write::AlterArgs),
    /// Restore the table to an earlier version (Delta's RESTORE): one commit that brings
    /// back that version's files and schema; nothing is rewritten.
    Restore(restore::RestoreArgs),
    /// Remove from the table the data files its store lost (FSCK): one commit of removes
    /// for the files the store says do not exist; --dry-run only lists them.
    Repair(repair::RepairArgs),
    /// Turn a directory of Parquet files into a Delta table in place (CONVERT TO DELTA),
    /// with Hive-style partition directories declared by --partition-by.
    Convert(convert::ConvertArgs),
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
    /// Iceberg metadata beside the Delta log, so Iceberg readers see the table (`sync`).
    Iceberg(iceberg::IcebergArgs),
    /// A keyed state store: events appended to a log table, the latest event per key
    /// folded into a state table (`init`, `put`, `sync [--follow]`, `get`, `scan`,
    /// `history`, `status`, `retain`).
    State(state::StateArgs),
}

/// Selects a version of a table.
#[derive(Debug, Args, Clone)]
struct VersionArgs {
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

/// Parses a `--timestamp` value into milliseconds since the epoch: a time as
/// [`VersionSpec`] reads one, or (the flag's own reading of a bare integer, which a
/// `VersionSpec` takes for a version) epoch milliseconds.
fn parse_timestamp_arg(t: &str) -> Result<i64> {
    if let Ok(ms) = t.trim().parse::<i64>() {
        return Ok(ms);
    }
    match t.parse::<VersionSpec>() {
        Ok(VersionSpec::Timestamp(ms)) => Ok(ms),
        _ => Err(Error::InvalidArgument(format!(
            "invalid --timestamp {t:?}: use RFC 3339 (2024-01-31T12:00:00Z), `YYYY-MM-DD[ HH:MM:SS]` (UTC) or epoch milliseconds"
        ))),
    }
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
        Command::State(a) => return state::run(a),
        Command::Scan(a) => scan::run(a),
        Command::Count(a) => count::run(a),
        Command::Changes(a) => changes::run(a),
        Command::Inspect(a) => inspect::run(a),
        Command::Files(a) => files::run(a),
        Command::History(a) => history::run(a),
        Command::Create(a) => write::create(a),
        Command::Append(a) => write::append(a),
        Command::Overwrite(a) => write::overwrite(a),
        Command::Delete(a) => write::delete(a),
        Command::Update(a) => dml::update(a),
        Command::Merge(a) => dml::merge(a),
        Command::Alter(a) => write::alter(a),
        Command::Restore(a) => restore::run(a),
        Command::Repair(a) => repair::run(a),
        Command::Convert(a) => convert::run(a),
        Command::Checkpoint(a) => maintenance::checkpoint(a),
        Command::CleanupLog(a) => maintenance::cleanup_log(a),
        Command::Optimize(a) => optimize::optimize(a),
        Command::Vacuum(a) => optimize::vacuum(a),
        Command::Demo(a) => demo::run(a),
        Command::Iceberg(a) => iceberg::run(a),
    };
    done.map(|()| ExitCode::SUCCESS)
}
