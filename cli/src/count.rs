//! `alluvium count`: the rows of a table (optionally matching a filter, at a version),
//! answered from statistics where they answer exactly and by reading the other files
//! (`Scan::count`).

use alluvium::{Result, ScanBuilder};
use clap::Args;
use serde_json::json;

use super::{VersionArgs, open};

/// Arguments of `count`.
#[derive(Debug, Args)]
pub struct CountArgs {
    /// Table location.
    table: String,
    #[command(flatten)]
    version: VersionArgs,
    /// Count only rows matching this predicate.
    #[arg(long)]
    filter: Option<String>,
    /// Print one JSON object (`rows`, `files_from_statistics`, `files_read`) instead of the
    /// number.
    #[arg(long)]
    json: bool,
}

pub fn run(a: CountArgs) -> Result<()> {
    let snapshot = open(&a.table)?.snapshot_at(a.version.spec()?)?;
    // One column is enough to count rows; the filter's columns are read besides it.
    let first = snapshot
        .partition_columns()
        .first()
        .cloned()
        .or_else(|| snapshot.schema().fields.first().map(|f| f.name.clone()));
    let mut builder = ScanBuilder::new(snapshot);
    if let Some(c) = first {
        builder = builder.with_columns([c]);
    }
    if let Some(f) = &a.filter {
        builder = builder.with_filter_str(f)?;
    }
    let c = builder.build()?.count()?;
    if a.json {
        outln!(
            "{}",
            json!({"rows": c.rows, "files_from_statistics": c.files_from_statistics,
                   "files_read": c.files_read})
        );
    } else {
        outln!("{}", c.rows);
    }
    Ok(())
}
