//! `alluvium repair`: FSCK (`Table::repair`), removing the data files the store lost, or
//! whose deletion vector files it lost, from the table; one line or one JSON object.

use std::time::Instant;

use alluvium::{Result, WriteOptions, WriteOutcome};
use clap::Args;
use serde_json::{Value, json};

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
    // A file removed for its lost deletion vector says so: its live rows go with it.
    let shown = report
        .entries
        .iter()
        .map(
            |e| match (&e.deletion_vector_path, e.deletion_vector_missing) {
                (Some(dv), true) => format!("{} (deletion vector {dv} missing)", e.data_file_path),
                _ => e.data_file_path.clone(),
            },
        )
        .collect::<Vec<_>>()
        .join(", ");
    let entries: Vec<Value> = report
        .entries
        .iter()
        .map(|e| {
            json!({
                "data_file_path": e.data_file_path,
                "data_file_missing": e.data_file_missing,
                "deletion_vector_path": e.deletion_vector_path,
                "deletion_vector_file_missing": e.deletion_vector_missing,
            })
        })
        .collect();
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
        .field("entries", entries)
        .emit(a.out.json);
    Ok(())
}
