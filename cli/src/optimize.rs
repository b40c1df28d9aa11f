//! `alluvium optimize` and `alluvium vacuum`: thin wrappers that show progress on a
//! terminal (indicatif draws nothing when stderr is not one) and print a summary line and
//! a JSON report.

use std::time::{Duration, Instant};

use alluvium::Result;
use alluvium::{
    MaintenanceError, OptimizeOptions, Progress, VacuumMode, VacuumOptions, column_list,
};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use super::open;
use super::report::print_after_write;

/// Arguments of `optimize`.
#[derive(Debug, Args)]
pub struct OptimizeArgs {
    /// Table location.
    table: String,
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

fn bar(len: u64, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    if let Ok(style) = ProgressStyle::with_template(&format!(
        "{what} {{bar:40}} {{bytes}}/{{total_bytes}} {{elapsed}}"
    )) {
        pb.set_style(style);
    }
    pb.enable_steady_tick(Duration::from_millis(200));
    pb
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

pub fn optimize(a: OptimizeArgs) -> Result<()> {
    let table = open(&a.table)?;
    let before = table.snapshot()?;
    let (files_before, bytes_before) = (
        before.num_files(),
        before
            .files()
            .map(|f| u64::try_from(f.size).unwrap_or(0))
            .sum::<u64>(),
    );
    let mut options = OptimizeOptions {
        partition_filter: a.filter.as_deref().map(alluvium::parse_expr).transpose()?,
        target_size: a.target_size,
        zorder_by: a.zorder.as_deref().map(column_list).unwrap_or_default(),
        ..Default::default()
    };
    if let Some(b) = a.max_commit_bytes {
        options.max_commit_bytes = b.max(1);
    }
    let pb = bar(0, "optimize");
    let started = Instant::now();
    let progress = |p: Progress| match p {
        Progress::Planned { bytes, .. } => pb.set_length(bytes),
        Progress::BinDone { bytes } => pb.inc(bytes),
        Progress::Committed { .. } => {}
    };
    let result = table.optimize_with_progress(&options, &progress);
    pb.finish_and_clear();
    let report = result?;
    let after = table.snapshot()?;
    let (files_after, bytes_after) = (
        after.num_files(),
        after
            .files()
            .map(|f| u64::try_from(f.size).unwrap_or(0))
            .sum::<u64>(),
    );
    let secs = started.elapsed().as_secs_f64();
    let summary = if report.versions.is_empty() {
        format!(
            "nothing to optimize: {files_before} files, {}",
            mib(bytes_before)
        )
    } else {
        format!(
            "optimized in {secs:.2} s: {files_before} files ({}) -> {files_after} files ({}); rewrote {} files into {} in {} partition(s), version(s) {:?}",
            mib(bytes_before),
            mib(bytes_after),
            report.files_removed,
            report.files_added,
            report.partitions_optimized,
            report.versions
        )
    };
    print_after_write(&format!(
        "{summary}\n{}\n",
        json!({"versions": report.versions, "files_before": files_before, "bytes_before": bytes_before,
               "files_after": files_after, "bytes_after": bytes_after,
               "files_removed": report.files_removed, "files_added": report.files_added,
               "bytes_removed": report.bytes_removed, "bytes_added": report.bytes_added,
               "partitions_optimized": report.partitions_optimized,
               "bins_dropped": report.bins_dropped, "seconds": (secs * 1000.0).round() / 1000.0})
    ));
    Ok(())
}

pub fn vacuum(a: VacuumArgs) -> Result<()> {
    let table = open(&a.table)?;
    let options = VacuumOptions {
        retention_hours: a.retention_hours,
        force: a.force,
        dry_run: a.dry_run,
        mode: if a.lite {
            VacuumMode::Lite
        } else {
            VacuumMode::Full
        },
        ..Default::default()
    };
    let spinner = ProgressBar::new_spinner();
    spinner.set_message("vacuum: finding unreferenced files");
    spinner.enable_steady_tick(Duration::from_millis(200));
    let started = Instant::now();
    let result = table.vacuum(&options);
    spinner.finish_and_clear();
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
    let secs = started.elapsed().as_secs_f64();
    let verb = if a.dry_run { "would delete" } else { "deleted" };
    let mut text = String::new();
    if a.dry_run {
        for p in &report.deleted {
            text.push_str(&format!("{verb} {p}\n"));
        }
    }
    let gone = report.deleted.len() - report.failed.len();
    // What the directory holds after the run (a dry run changes nothing).
    let (after_deleted, bytes_deleted) = if a.dry_run {
        (0, 0)
    } else {
        (gone, report.bytes)
    };
    text.push_str(&format!(
        "{verb} {gone} file(s) ({}) in {secs:.2} s; {} {} file(s) ({}) -> {} file(s) ({}); {} protected, {} younger than the retention kept{}",
        mib(report.bytes),
        if a.lite {
            "tombstones:"
        } else {
            "table directory:"
        },
        report.candidates,
        mib(report.candidate_bytes),
        report.candidates - after_deleted,
        mib(report.candidate_bytes.saturating_sub(bytes_deleted)),
        report.protected,
        report.kept_young,
        if report.failed.is_empty() {
            String::new()
        } else {
            format!("; {} delete(s) failed, run again", report.failed.len())
        }
    ));
    text.push('\n');
    text.push_str(&format!(
        "{}\n",
        json!({"dry_run": a.dry_run, "deleted": gone, "bytes": report.bytes,
               "candidates": report.candidates, "candidate_bytes": report.candidate_bytes, "protected": report.protected,
               "kept_young": report.kept_young, "failed": report.failed,
               "cutoff_ms": report.cutoff_ms, "versions": report.versions,
               "seconds": (secs * 1000.0).round() / 1000.0})
    ));
    // A dry run changed nothing: its listing is its result, and a lost one is a failure.
    if a.dry_run {
        outln!("{}", text.trim_end_matches('\n'));
    } else {
        print_after_write(&text);
    }
    Ok(())
}
