//! `alluvium repair`: FSCK (`Table::repair`), removing the data files the store lost from
//! the table; one line or one JSON object.

use std::time::Instant;

use alluvium::{Result, WriteOptions, WriteOutcome};
use clap::Args;

use super::open;
use super::summary::{JsonFlag, Outcome, count};

/// Arguments of `repair`.
#[derive(Debug, Args)]
pub struct RepairArgs {
    /// Table location.
    table: String,
    #[command(flatten)]
    out: JsonFlag,
    /// List the missing files without committing anything.
    #[arg(long)]
    dry_run: bool,
}

pub fn run(a: RepairArgs) -> Result<()> {
    let started = Instant::now();
    let table = open(&a.table)?;
    let report = table.repair(a.dry_run, &WriteOptions::default())?;
    let missing = count(report.files_removed.len() as u64, "missing file");
    let shown = report.files_removed.join(", ");
    let mut out = Outcome::new("FSCK", started);
    let line = match &report.outcome {
        _ if report.files_removed.is_empty() => "no data file is missing".to_string(),
        None => format!("dry run: {missing} ({shown}); nothing committed"),
        Some(WriteOutcome::Committed(summary)) => {
            out = out.commit(summary);
            format!("removed {missing} from the table ({shown})")
        }
        Some(_) => format!("{missing} ({shown}); the repair was already committed"),
    };
    out.line(line)
        .field("dry_run", report.dry_run)
        .field("files_removed", report.files_removed)
        .emit(a.out.json);
    Ok(())
}
