//! `alluvium changes`: the change data feed of a range of versions.

use alluvium::{Error, Result, VersionSpec};
use clap::{ArgGroup, Args};

use super::output::{
    Format, Protected, Shape, default_limit, destination, refuse_binary_on_terminal, write_stream,
};
use super::{open, parse_timestamp_arg};

/// Arguments of `changes`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("start").required(true).args(["from", "from_timestamp"])))]
pub struct ChangesArgs {
    /// Table location.
    table: String,
    /// First version of the range.
    #[arg(long)]
    from: Option<u64>,
    /// Last version of the range (default: the latest).
    #[arg(long, conflicts_with = "to_timestamp")]
    to: Option<u64>,
    /// Start at the first version committed at or after this time (RFC 3339,
    /// `YYYY-MM-DD[ HH:MM:SS]` in UTC, or milliseconds since the epoch).
    #[arg(long)]
    from_timestamp: Option<String>,
    /// End at the last version committed at or before this time (same forms).
    #[arg(long)]
    to_timestamp: Option<String>,
    /// Comma-separated columns to output, in this order: table columns and any of
    /// `_change_type`, `_commit_version`, `_commit_timestamp` (default: all).
    #[arg(long, value_delimiter = ',')]
    columns: Option<Vec<String>>,
    /// Only change rows matching this predicate; it may name the feed's columns, e.g.
    /// "_change_type = 'delete' AND region = 'EU'".
    #[arg(long)]
    filter: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Print at most N change rows (default: 20 in the table format on a terminal, else
    /// all).
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
    /// Write to this file instead of stdout.
    #[arg(long)]
    output: Option<String>,
}

fn bound(version: Option<u64>, timestamp: Option<&str>) -> Result<Option<VersionSpec>> {
    Ok(match (version, timestamp) {
        (Some(v), _) => Some(VersionSpec::Version(v)),
        (None, Some(t)) => Some(VersionSpec::Timestamp(parse_timestamp_arg(t)?)),
        (None, None) => None,
    })
}

/// Reads the changes and writes them in the chosen format.
pub fn run(a: ChangesArgs) -> Result<()> {
    refuse_binary_on_terminal(a.format, a.output.as_deref())?;
    let start = bound(a.from, a.from_timestamp.as_deref())?
        .ok_or_else(|| Error::InvalidArgument("give --from or --from-timestamp".into()))?;
    let end = bound(a.to, a.to_timestamp.as_deref())?;
    let mut builder = open(&a.table)?.changes(start, end);
    if let Some(cols) = a.columns {
        builder = builder.columns(cols.into_iter().map(|c| c.trim().to_string()));
    }
    if let Some(f) = &a.filter {
        builder = builder.filter_str(f)?;
    }
    let changes = builder.build()?;
    let limit = a
        .limit
        .or_else(|| default_limit(a.format, a.output.as_deref()));
    // Streamed: memory holds the reader's window of files and the writer's current batch.
    write_stream(
        a.format,
        changes.schema(),
        changes.execute(),
        destination(
            a.output.as_deref(),
            Protected {
                location: &a.table,
                what: "table",
            },
        )?,
        Shape { limit, total: None },
    )
}
