//! `alluvium verify`: prints what [`alluvium::Table::verify`] found, one line per finding
//! (or one JSON object), and exits 3 when it found anything.

use std::process::ExitCode;

use alluvium::{Result, VerifyOptions};
use clap::Args;
use serde_json::json;

use super::open;
use super::text::escape_control;

/// The exit status of a table with findings (1 is "could not check", 2 a usage error).
pub const FINDINGS_EXIT: u8 = 3;

/// Arguments of `verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Table location.
    table: String,
    /// Check this version (default: the latest).
    #[arg(long)]
    version: Option<u64>,
    /// Also read every data file and check its statistics against the data.
    #[arg(long)]
    deep: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(a: VerifyArgs) -> Result<ExitCode> {
    let table = open(&a.table)?;
    let options = VerifyOptions::default()
        .with_version(a.version)
        .with_deep(a.deep);
    // A deep check reads every data file: show that it is working on a terminal.
    let report = match a.deep {
        true => super::progress::with_spinner("verify: reading every data file", || {
            table.verify(&options)
        }),
        false => table.verify(&options),
    }?;
    if a.json {
        outln!(
            "{}",
            json!({"version": report.version, "clean": report.is_clean(),
                   "findings": report.findings, "commits_checked": report.commits_checked,
                   "checkpoints_checked": report.checkpoints_checked,
                   "checkpoints_compared": report.checkpoints_compared,
                   "files_checked": report.files_checked,
                   "deletion_vectors_checked": report.deletion_vectors_checked,
                   "files_read": report.files_read,
                   "compactions_checked": report.compactions_checked,
                   "change_data_files_checked": report.change_data_files_checked})
        );
    } else {
        for f in &report.findings {
            outln!("{}", escape_control(&f.to_string()));
        }
        outln!(
            "{}: version {}, {} commit(s), {} checkpoint(s) ({} compared with their commits), {} data file(s), {} deletion vector(s){}",
            if report.is_clean() {
                "clean".to_string()
            } else {
                format!("{} finding(s)", report.findings.len())
            },
            report.version,
            report.commits_checked,
            report.checkpoints_checked,
            report.checkpoints_compared,
            report.files_checked,
            report.deletion_vectors_checked,
            [
                (report.compactions_checked, "log compaction(s)"),
                (report.change_data_files_checked, "change-data file(s)"),
            ]
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!(", {n} {what}"))
            .chain(
                a.deep
                    .then(|| format!(", {} data file(s) read", report.files_read))
            )
            .collect::<String>()
        );
    }
    Ok(if report.is_clean() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(FINDINGS_EXIT)
    })
}
