//! `alluvium scan`: the rows of a table, streamed in every format; at most `--limit` rows
//! (20 in the aligned table on a terminal, all otherwise).

use alluvium::{Result, ScanBuilder};
use clap::Args;

use super::output::{
    Format, Protected, Shape, default_limit, destination, refuse_binary_on_terminal, write_stream,
};
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
    /// Output format (the aligned table cuts values wider than its first rows set; CSV,
    /// JSON lines and Parquet keep every value exact).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Print at most N rows (default: 20 in the table format on a terminal, else all).
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
    /// Write to this file instead of stdout.
    #[arg(long)]
    output: Option<String>,
}

pub fn run(a: ScanArgs) -> Result<()> {
    refuse_binary_on_terminal(a.format, a.output.as_deref())?;
    let snapshot = open(&a.table)?.snapshot_at(a.version.spec()?)?;
    let mut builder = ScanBuilder::new(snapshot).with_row_tracking(a.row_tracking);
    if let Some(cols) = a.columns {
        builder = builder.with_columns(cols.into_iter().map(|c| c.trim().to_string()));
    }
    if let Some(f) = &a.filter {
        builder = builder.with_filter_str(f)?;
    }
    let limit = a
        .limit
        .or_else(|| default_limit(a.format, a.output.as_deref()));
    if let Some(n) = limit {
        // A few rows need a few files: read them one or two at a time.
        builder = builder.with_files_in_flight(n.div_ceil(64 * 1024).clamp(1, 2));
    }
    let scan = builder.build()?;
    // The total, for the table's `… N more rows`, when statistics give it.
    let total = match (a.format, limit) {
        (Format::Table, Some(_)) => scan.count_from_statistics(),
        _ => None,
    };
    // Streamed: memory holds the scan's window of files and the writer's current batch.
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
        Shape { limit, total },
    )
}
