//! `alluvium restore`: Delta's RESTORE (`Table::restore`), one line or one JSON object.

use std::time::Instant;

use alluvium::{Result, VersionSpec};
use clap::{ArgGroup, Args};

use super::summary::{JsonFlag, Outcome, bytes, count};
use super::{open, parse_timestamp_arg};

/// Arguments of `restore`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("target").required(true).args(["version", "timestamp"])))]
pub struct RestoreArgs {
    /// Table location.
    table: String,
    #[command(flatten)]
    out: JsonFlag,
    /// Restore this version.
    #[arg(long)]
    version: Option<u64>,
    /// Restore the latest version committed at or before this time (RFC 3339,
    /// `YYYY-MM-DD[ HH:MM:SS]` in UTC, or milliseconds since the epoch).
    #[arg(long)]
    timestamp: Option<String>,
}

pub fn run(a: RestoreArgs) -> Result<()> {
    let started = Instant::now();
    let spec = match (a.version, &a.timestamp) {
        (Some(v), _) => VersionSpec::Version(v),
        (None, Some(t)) => VersionSpec::Timestamp(parse_timestamp_arg(t)?),
        (None, None) => unreachable_target()?,
    };
    let table = open(&a.table)?;
    // The version the spec names, for the line; the library records the spec as given
    // (a timestamp restore records its timestamp, as Delta does).
    let target = table.snapshot_at(spec)?.version();
    let summary = table.restore(spec)?;
    let out = Outcome::new("RESTORE", started).commit(&summary);
    let line = format!(
        "restored version {target}: re-added {} ({}), removed {} ({}); the table has {} ({})",
        count(out.metric_u64("numRestoredFiles"), "file"),
        bytes(out.metric_u64("restoredFilesSize")),
        count(out.metric_u64("numRemovedFiles"), "file"),
        bytes(out.metric_u64("removedFilesSize")),
        count(out.metric_u64("numOfFilesAfterRestore"), "file"),
        bytes(out.metric_u64("tableSizeAfterRestore"))
    );
    out.line(line)
        .field("restored_version", target)
        .emit(a.out.json);
    Ok(())
}

/// clap requires one of the two; this keeps the match total without a panic.
fn unreachable_target() -> Result<VersionSpec> {
    Err(alluvium::Error::InvalidArgument(
        "give --version or --timestamp".into(),
    ))
}
