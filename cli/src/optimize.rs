//! `alluvium optimize` and `alluvium vacuum`: thin wrappers that show progress on a
//! terminal (indicatif draws nothing when stderr is not one) and print one line saying
//! what they did, or with `--json` one JSON object (`summary.rs`).

use std::time::Instant;

use alluvium::{Error, Result};
use alluvium::{
    MaintenanceError, OptimizeOptions, Progress, VacuumMode, VacuumOptions, column_list,
};
use clap::Args;

use super::open;
use super::progress::{bytes_bar, spinner};
use super::summary::{JsonFlag, Outcome, bytes, count};
use super::text::escape_control;

/// Arguments of `optimize`.
#[derive(Debug, Args)]
pub struct OptimizeArgs {
    /// Table location.
    table: String,
    #[command(flatten)]
    out: JsonFlag,
    /// Only partitions matching this predicate (partition columns only).
    #[arg(long)]
    filter: Option<String>,
    /// Target file size in bytes (default: delta.targetFileSize, else 128 MiB).
    #[arg(long)]
    target_size: Option<u64>,
    /// Cluster rows by these columns (Z-order), e.g. `--zorder a,b`.
    #[arg(long)]
    zorder: Option<String>,
    /// Input bytes per commit; larger runs commit in several steps.
    #[arg(long)]
    max_commit_bytes: Option<u64>,
}

/// Arguments of `vacuum`.
#[derive(Debug, Args)]
pub struct VacuumArgs {
    /// Table location.
    table: String,
    #[command(flatten)]
    out: JsonFlag,
    /// Keep files needed by versions of the last H hours (default: the table's
    /// delta.deletedFileRetentionDuration, 7 days).
    #[arg(long)]
    retention_hours: Option<f64>,
    /// Only list what would be deleted.
    #[arg(long)]
    dry_run: bool,
    /// Candidates from the log's tombstones only (no listing of the table directory).
    #[arg(long, conflicts_with = "full")]
    lite: bool,
    /// Candidates from a listing of the table directory (the default).
    #[arg(long)]
    full: bool,
    /// Allow a retention shorter than the table's.
    #[arg(long)]
    force: bool,
}

fn table_size(s: &alluvium::Snapshot) -> (usize, u64) {
    (
        s.num_files(),
        s.files()
            .map(|f| u64::try_from(f.size()).unwrap_or(0))
            .sum::<u64>(),
    )
}

/// The library says to change a clustered table's columns with `cluster_by`; the CLI names
/// its flag.
fn cluster_by_hint(e: Error) -> Error {
    match e {
        Error::Maintenance(MaintenanceError::Refused(m)) if m.contains("with cluster_by") => {
            Error::Maintenance(MaintenanceError::Refused(format!(
                "{m} (alluvium alter --cluster-by COLUMNS)"
            )))
        }
        e => e,
    }
}

pub fn optimize(a: OptimizeArgs) -> Result<()> {
    let started = Instant::now();
    let table = open(&a.table)?;
    let (files_before, bytes_before) = table_size(&table.snapshot()?);
    let mut options = OptimizeOptions::default()
        .with_partition_filter(a.filter.as_deref().map(alluvium::parse_expr).transpose()?)
        .with_target_size(a.target_size)
        .with_zorder_by(a.zorder.as_deref().map(column_list).unwrap_or_default());
    if let Some(b) = a.max_commit_bytes {
        options.max_commit_bytes = b.max(1);
    }
    let pb = bytes_bar(0, "optimize");
    let progress = |p: Progress| match p {
        Progress::Planned { bytes, .. } => pb.set_length(bytes),
        Progress::BinDone { bytes } => pb.inc(bytes),
        // Commits, and events a later version adds, move no bar.
        _ => {}
    };
    let result = table.optimize_with_progress(&options, &progress);
    pb.finish_and_clear();
    let report = result.map_err(cluster_by_hint)?;
    let (files_after, bytes_after) = table_size(&table.snapshot()?);
    let line = if report.versions.is_empty() {
        format!(
            "nothing to optimize: {} ({})",
            count(files_before as u64, "file"),
            bytes(bytes_before)
        )
    } else {
        format!(
            "optimized {}: rewrote {} into {}; the table went from {} ({}) to {} ({})",
            count(report.partitions_optimized as u64, "partition"),
            count(report.files_removed as u64, "file"),
            report.files_added,
            count(files_before as u64, "file"),
            bytes(bytes_before),
            count(files_after as u64, "file"),
            bytes(bytes_after)
        )
    };
    // Large runs commit in several steps: the line ends with the last version.
    let commits = match report.versions.len() {
        0 | 1 => String::new(),
        n => format!(" in {n} commits"),
    };
    Outcome::new("OPTIMIZE", started)
        .line(format!("{line}{commits}"))
        .version(report.versions.last().copied())
        .files(
            report.files_added as u64,
            report.files_removed as u64,
            report.bytes_added,
            report.bytes_removed,
        )
        .field("versions", report.versions.clone())
        .field("files_before", files_before)
        .field("bytes_before", bytes_before)
        .field("files_after", files_after)
        .field("bytes_after", bytes_after)
        .metric("numRemovedFiles", report.files_removed)
        .metric("numAddedFiles", report.files_added)
        .metric("numRemovedBytes", report.bytes_removed)
        .metric("numAddedBytes", report.bytes_added)
        .metric("partitionsOptimized", report.partitions_optimized)
        .metric("binsDropped", report.bins_dropped)
        .emit(a.out.json);
    Ok(())
}

pub fn vacuum(a: VacuumArgs) -> Result<()> {
    let started = Instant::now();
    let table = open(&a.table)?;
    let options = VacuumOptions::default()
        .with_retention_hours(a.retention_hours)
        .with_force(a.force)
        .with_dry_run(a.dry_run)
        .with_mode(if a.lite {
            VacuumMode::Lite
        } else {
            VacuumMode::Full
        });
    let pb = spinner("vacuum: finding unreferenced files");
    let result = table.vacuum(&options);
    pb.finish_and_clear();
    let report = result.map_err(|e| match e {
        // The library names its option; the CLI names its flag.
        alluvium::Error::Maintenance(MaintenanceError::RetentionTooShort {
            requested_hours,
            minimum_hours,
        }) => alluvium::Error::InvalidArgument(format!(
            "VACUUM retention of {requested_hours} hours is shorter than the table's deletedFileRetentionDuration ({minimum_hours} hours); use --force to override"
        )),
        e => e,
    })?;
    let verb = if a.dry_run { "would delete" } else { "deleted" };
    let gone = report.deleted.len() - report.failed.len();
    // What the directory holds after the run (a dry run changes nothing).
    let (after_deleted, bytes_deleted) = if a.dry_run {
        (0, 0)
    } else {
        (gone, report.bytes)
    };
    let line = format!(
        "{verb} {} ({}) no version of the last {} needs; {} {} ({}) -> {} ({}); {} protected, {} younger than the retention kept{}",
        count(gone as u64, "file"),
        bytes(report.bytes),
        match a.retention_hours {
            Some(h) => format!("{h} hours"),
            None => "retention period".into(),
        },
        if a.lite {
            "tombstones:"
        } else {
            "table directory:"
        },
        count(report.candidates as u64, "file"),
        bytes(report.candidate_bytes),
        count((report.candidates - after_deleted) as u64, "file"),
        bytes(report.candidate_bytes.saturating_sub(bytes_deleted)),
        report.protected,
        report.kept_young,
        if report.failed.is_empty() {
            String::new()
        } else {
            format!(
                "; {} failed, run again",
                count(report.failed.len() as u64, "delete")
            )
        }
    );
    let deleted: Vec<String> = report.deleted.iter().map(ToString::to_string).collect();
    let outcome = Outcome::new("VACUUM", started)
        .line(line)
        .version(report.versions.last().copied())
        .files(0, gone as u64, 0, bytes_deleted)
        .field("dry_run", a.dry_run)
        .field("versions", report.versions.clone())
        .field("candidates", report.candidates)
        .field("candidate_bytes", report.candidate_bytes)
        .field("protected", report.protected)
        .field("kept_young", report.kept_young)
        .field("failed", report.failed.clone())
        .field("cutoff", alluvium::iso_timestamp(report.cutoff_ms))
        .metric("numDeletedFiles", gone)
        .metric("sizeOfDataToDelete", report.bytes);
    // A dry run changed nothing: its listing is its result, and a lost one is a failure.
    if a.dry_run {
        if a.out.json {
            outln!("{}", outcome.field("deleted", deleted).to_json());
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
