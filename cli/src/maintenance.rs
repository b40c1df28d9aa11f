//! `alluvium checkpoint`, `alluvium cleanup-log`: one line saying what was written or
//! deleted, or with `--json` one JSON object (`summary.rs`). A dry run prints what it would
//! delete, one path per line, before its line.

use std::time::Instant;

use alluvium::CheckpointConfig;
use alluvium::Result;
use clap::Args;
use serde_json::Value;

use super::open;
use super::progress::with_spinner;
use super::summary::{JsonFlag, Outcome, bytes, count};
use super::text::escape_control;

/// Arguments of `checkpoint`.
#[derive(Debug, Args)]
pub struct CheckpointArgs {
    /// Table location.
    table: String,
    #[command(flatten)]
    out: JsonFlag,
    /// Split into parts (or V2 sidecars) of at most this many actions.
    #[arg(long)]
    part_size: Option<usize>,
}

/// Arguments of `cleanup-log`.
#[derive(Debug, Args)]
pub struct CleanupArgs {
    /// Table location.
    table: String,
    #[command(flatten)]
    out: JsonFlag,
    /// Only list what would be deleted.
    #[arg(long)]
    dry_run: bool,
}

pub fn checkpoint(a: CheckpointArgs) -> Result<()> {
    let started = Instant::now();
    let table = open(&a.table)?;
    let out = with_spinner("checkpoint: writing", || {
        table.checkpoint(&CheckpointConfig::default().with_part_size(a.part_size))
    })?;
    let files: Vec<String> = out.files.iter().map(ToString::to_string).collect();
    let sidecars: Vec<String> = out.sidecars.iter().map(ToString::to_string).collect();
    let sidecar_text = match sidecars.is_empty() {
        true => String::new(),
        false => format!(" and {}", count(sidecars.len() as u64, "sidecar")),
    };
    Outcome::new("CHECKPOINT", started)
        .line(format!(
            "wrote a checkpoint of version {}: {}{sidecar_text}, {} ({} data files, {})",
            out.version,
            count(files.len() as u64, "file"),
            count(out.hint.size.unwrap_or(0).max(0) as u64, "action"),
            out.hint.num_of_add_files.unwrap_or(0),
            bytes(out.hint.size_in_bytes.unwrap_or(0).max(0) as u64)
        ))
        .field("checkpoint_version", out.version)
        .field("files", files)
        .field("sidecars", sidecars)
        .metric("actions", out.hint.size.unwrap_or(0))
        .metric("add_files", out.hint.num_of_add_files.unwrap_or(0))
        .metric("size_bytes", out.hint.size_in_bytes.unwrap_or(0))
        .emit(a.out.json);
    Ok(())
}

pub fn cleanup_log(a: CleanupArgs) -> Result<()> {
    let started = Instant::now();
    let report = open(&a.table)?.cleanup_log(a.dry_run)?;
    let deleted: Vec<String> = report.deleted.iter().map(ToString::to_string).collect();
    let verb = if a.dry_run { "would delete" } else { "deleted" };
    let line = match (&report.skipped, report.anchor) {
        (Some(why), _) => format!("nothing to clean up: {why}"),
        (None, Some(anchor)) => format!(
            "{verb} {} below the checkpoint at version {anchor}; earliest readable version: {}",
            count(deleted.len() as u64, "log file"),
            report
                .earliest_readable_version
                .map_or_else(|| "unknown".into(), |v| v.to_string())
        ),
        (None, None) => "nothing to clean up".into(),
    };
    let outcome = Outcome::new("CLEANUP LOG", started)
        .line(line)
        .field("dry_run", a.dry_run)
        .field("deleted", deleted.clone())
        .field("anchor", report.anchor.map_or(Value::Null, Value::from))
        .field(
            "earliest_readable_version",
            report
                .earliest_readable_version
                .map_or(Value::Null, Value::from),
        )
        .metric("numDeletedFiles", deleted.len());
    // A dry run changed nothing: its listing is its result, and a lost one is a failure.
    if a.dry_run {
        if a.out.json {
            outln!("{}", outcome.to_json());
        } else {
            for p in &deleted {
                outln!("would delete {}", escape_control(p));
            }
            outln!("{}", outcome.to_line());
        }
        return Ok(());
    }
    outcome.emit(a.out.json);
    Ok(())
}
