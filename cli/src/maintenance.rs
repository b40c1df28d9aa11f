//! `alluvium checkpoint`, `alluvium cleanup-log`.

use alluvium::CheckpointConfig;
use alluvium::Result;
use clap::Args;
use serde_json::json;

use super::open;
use super::report::print_after_write;

/// Arguments of `checkpoint`.
#[derive(Debug, Args)]
pub struct CheckpointArgs {
    /// Table location.
    table: String,
    /// Split into parts (or V2 sidecars) of at most this many actions.
    #[arg(long)]
    part_size: Option<usize>,
}

/// Arguments of `cleanup-log`.
#[derive(Debug, Args)]
pub struct CleanupArgs {
    /// Table location.
    table: String,
    /// Only list what would be deleted.
    #[arg(long)]
    dry_run: bool,
}

pub fn checkpoint(a: CheckpointArgs) -> Result<()> {
    let out = open(&a.table)?.checkpoint(&CheckpointConfig {
        part_size: a.part_size,
    })?;
    print_after_write(&format!(
        "checkpoint of version {} written: {} file(s), {} sidecar(s)\n{}\n",
        out.version,
        out.files.len(),
        out.sidecars.len(),
        json!({"version": out.version, "files": out.files.iter().map(ToString::to_string).collect::<Vec<_>>(),
               "sidecars": out.sidecars.iter().map(ToString::to_string).collect::<Vec<_>>(),
               "actions": out.hint.size, "add_files": out.hint.num_of_add_files, "size_bytes": out.hint.size_in_bytes})
    ));
    Ok(())
}

pub fn cleanup_log(a: CleanupArgs) -> Result<()> {
    let report = open(&a.table)?.cleanup_log(a.dry_run)?;
    let verb = if a.dry_run { "would delete" } else { "deleted" };
    let mut text = String::new();
    for p in &report.deleted {
        text.push_str(&format!("{verb} {p}\n"));
    }
    match (&report.skipped, report.anchor) {
        (Some(why), _) => text.push_str(&format!("nothing to clean up: {why}\n")),
        (None, Some(anchor)) => text.push_str(&format!(
            "{verb} {} log file(s) below the checkpoint at version {anchor}; earliest readable version: {}\n",
            report.deleted.len(),
            report
                .earliest_readable_version
                .map_or_else(|| "unknown".into(), |v| v.to_string())
        )),
        (None, None) => text.push_str("nothing to clean up\n"),
    }
    // A dry run changed nothing: its listing is its result, and a lost one is a failure.
    if a.dry_run {
        outln!("{}", text.trim_end_matches('\n'));
    } else {
        print_after_write(&text);
    }
    Ok(())
}
