//! `alluvium scan`.

use alluvium::{Result, ScanBuilder};
use clap::Args;

use super::output::{Format, Protected, destination, write_stream};
use super::{VersionArgs, open};

/// Arguments of `scan`.
#[derive(Debug, Args)]
pub struct ScanArgs {
    /// Table location.
    table: String,
    #[command(flatten)]
    version: VersionArgs,
    /// Comma-separated columns to output, in this order (default: all, in schema order).
    #[arg(long, value_delimiter = ',')]
    columns: Option<Vec<String>>,
    /// Only rows matching this predicate, e.g. "region = 'EU' AND amount > 10".
    #[arg(long)]
    filter: Option<String>,
    /// Also output each row's stable `row_id` and `row_commit_version` (tables with
    /// delta.enableRowTracking=true).
    #[arg(long)]
    row_tracking: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Write to this file instead of stdout.
    #[arg(long)]
    output: Option<String>,
}

pub fn run(a: ScanArgs) -> Result<()> {
    let snapshot = open(&a.table)?.snapshot_at(a.version.spec()?)?;
    let mut builder = ScanBuilder::new(snapshot).with_row_tracking(a.row_tracking);
    if let Some(cols) = a.columns {
        builder = builder.with_columns(cols.into_iter().map(|c| c.trim().to_string()));
    }
    if let Some(f) = &a.filter {
        builder = builder.with_filter_str(f)?;
    }
    let scan = builder.build()?;
    // Streamed: memory holds the scan's window of files and the writer's current batch
    // (the aligned table, which needs every row for its widths, excepted).
    write_stream(
        a.format,
        scan.schema(),
        scan.execute(),
        destination(
            a.output.as_deref(),
            Protected {
                location: &a.table,
                what: "table",
            },
        )?,
    )
}
