//! `alluvium iceberg`: Iceberg metadata beside the Delta log (`Table::sync_iceberg`).

use std::time::Instant;

use alluvium::{Result, VersionSpec};
use clap::{Args, Subcommand};

use super::open;
use super::summary::{JsonFlag, Outcome, count};

/// Arguments of `iceberg`.
#[derive(Debug, Args)]
pub struct IcebergArgs {
    #[command(subcommand)]
    command: IcebergCommand,
}

#[derive(Debug, Subcommand)]
enum IcebergCommand {
    /// Write Iceberg v2 metadata under TABLE/metadata/: one Iceberg snapshot per Delta
    /// version since the last sync (deletion vectors as position deletes); idempotent.
    Sync(SyncArgs),
}

/// Arguments of `iceberg sync`.
#[derive(Debug, Args)]
pub struct SyncArgs {
    /// Table location.
    table: String,
    /// Sync up to this version (default: the latest).
    #[arg(long)]
    version: Option<u64>,
    #[command(flatten)]
    out: JsonFlag,
}

pub fn run(a: IcebergArgs) -> Result<()> {
    match a.command {
        IcebergCommand::Sync(s) => sync(s),
    }
}

fn sync(a: SyncArgs) -> Result<()> {
    let started = Instant::now();
    let table = open(&a.table)?;
    let spec = a.version.map_or(VersionSpec::Latest, VersionSpec::Version);
    let r = table.sync_iceberg_at(spec)?;
    let what = match (r.synced_versions.first(), r.synced_versions.last()) {
        (Some(a), Some(b)) if a == b => format!("synced Delta version {a}"),
        (Some(a), Some(b)) => format!("synced Delta versions {a}..{b}"),
        _ => "already in sync".to_string(),
    };
    let metadata = r
        .metadata_version
        .map(|n| format!(" (metadata/v{n}.metadata.json)"))
        .unwrap_or_default();
    Outcome::new("ICEBERG SYNC", started)
        .line(format!(
            "{what}{metadata}: Iceberg snapshot {}, {}, {}",
            r.snapshot_id
                .map_or_else(|| "none".to_string(), |s| s.to_string()),
            count(r.data_files as u64, "data file"),
            count(r.delete_files as u64, "delete file"),
        ))
        .field("synced_versions", r.synced_versions.clone())
        .field("metadata_version", r.metadata_version)
        .field("snapshot_id", r.snapshot_id)
        .metric("data_files", r.data_files as u64)
        .metric("delete_files", r.delete_files as u64)
        .emit(a.out.json);
    Ok(())
}
