//! `verify`: a read-only consistency check of a table (an fsck). It owns the finding kinds
//! and the report; the checks live in [`log`] (commits, checkpoints, log compactions,
//! `_last_checkpoint`), [`files`] (data files and deletion vectors), [`change_data`] (the
//! change-data files VACUUM keeps) and [`stats`] (statistics and deletion-vector ranges
//! against the data). Whatever a read of the checked version (or of the change feed of a
//! retained version) would fail on is a finding.
//!
//! Verification never writes or deletes anything, and damage is never an error: every
//! problem becomes a [`Finding`] and the check goes on with what is still readable. Only a
//! table that does not exist at all (or a store that cannot even be listed) is an error.
//! It reuses the readers the engine itself uses (log listing, checkpoint reader, replay,
//! deletion-vector reader, scan, statistics collector), so it finds what a reader would
//! trip over, not a second opinion.

mod change_data;
mod files;
mod log;
mod stats;

pub(crate) use files::file_size;
use serde::Serialize;

use crate::{Result, Table};

/// What [`Table::verify`] checks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct VerifyOptions {
    /// Check the table as of this version (default: the latest). Commits and checkpoints
    /// above it are not examined, nor is `_last_checkpoint` (which describes the latest).
    pub version: Option<u64>,
    /// Also read every data file and compare its statistics (`numRecords`, `minValues`,
    /// `maxValues`, `nullCount`) with the data: slow, proportional to the table's size.
    pub deep: bool,
}

/// Builder-style setters: the struct is `#[non_exhaustive]`, so outside this crate it is
/// built from its `Default` with these.
impl VerifyOptions {
    /// Sets [`version`](Self::version) (a value, or an `Option`).
    #[must_use]
    pub fn with_version(mut self, version: impl Into<Option<u64>>) -> Self {
        self.version = version.into();
        self
    }

    /// Sets [`deep`](Self::deep).
    #[must_use]
    pub fn with_deep(mut self, deep: bool) -> Self {
        self.deep = deep;
        self
    }
}

/// The kinds of damage `verify` reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum FindingKind {
    /// Versions are missing from the log and no checkpoint above them stands in for them.
    NonContiguousLog,
    /// A commit file cannot be read or parsed.
    UnreadableCommit,
    /// A checkpoint cannot be read (corrupt, truncated, or parts missing).
    UnreadableCheckpoint,
    /// A checkpoint's state differs from the replay of the commits up to its version.
    CheckpointMismatch,
    /// `_last_checkpoint` is unreadable or describes a checkpoint that is not there as it
    /// says (missing, incomplete, another size, version or number of parts or files).
    LastCheckpoint,
    /// The version cannot be loaded at all (the error says why); files were not checked.
    UnreadableSnapshot,
    /// A data file the version references does not exist.
    MissingFile,
    /// A data file's size differs from the size its `add` action records.
    FileSizeMismatch,
    /// A data file's path names something other than a regular file (a directory, FIFO,
    /// device, ...).
    NotRegularFile,
    /// A deletion vector's file is missing.
    MissingDeletionVector,
    /// A deletion vector cannot be decoded: checksum, size or format wrong.
    CorruptDeletionVector,
    /// A deletion vector holds another number of rows than its descriptor's cardinality.
    DeletionVectorCardinality,
    /// (`deep`) A data file cannot be read.
    UnreadableDataFile,
    /// (`deep`) A file's statistics disagree with its data.
    StatsMismatch,
    /// A deletion vector names a row at or past the end of its data file (by its
    /// statistics' `numRecords`, or with `deep` by the file's own row count).
    DeletionVectorOutOfRange,
    /// A change-data file a retained commit names (one VACUUM would keep) is missing.
    MissingChangeDataFile,
    /// A change-data file has another size than its `cdc` action records, or (`deep`)
    /// cannot be read.
    CorruptChangeDataFile,
    /// The table schema cannot be read from (it has no columns).
    InvalidSchema,
    /// A log compaction file cannot be read or parsed, or is not whole (readers skip it
    /// and read its commits).
    UnreadableCompaction,
    /// A log compaction file disagrees with the commits it covers (it lost actions, as a
    /// file cut at a line boundary does); readers read the commits instead while they
    /// exist.
    CompactionMismatch,
    /// A file's statistics are impossible on their face, without reading it: a negative
    /// `numRecords` or `nullCount`, or a `nullCount` above `numRecords`. Readers answering
    /// counts or skipping files from statistics would be wrong.
    ImpossibleStats,
    /// A file's partition value is missing or is not a value of its column's type: every
    /// read of that column fails.
    InvalidPartitionValue,
    /// (`deep`) The table's Iceberg metadata (`metadata/`, [`Table::sync_iceberg`])
    /// disagrees with the Delta version a snapshot mirrors, or references a file that is
    /// missing: Iceberg readers would read other rows than Delta readers.
    IcebergMismatch,
}

impl FindingKind {
    /// The kind's name as printed and in JSON (`non-contiguous-log`, ...).
    pub fn name(self) -> &'static str {
        match self {
            FindingKind::NonContiguousLog => "non-contiguous-log",
            FindingKind::UnreadableCommit => "unreadable-commit",
            FindingKind::UnreadableCheckpoint => "unreadable-checkpoint",
            FindingKind::CheckpointMismatch => "checkpoint-mismatch",
            FindingKind::LastCheckpoint => "last-checkpoint",
            FindingKind::UnreadableSnapshot => "unreadable-snapshot",
            FindingKind::MissingFile => "missing-file",
            FindingKind::FileSizeMismatch => "file-size-mismatch",
            FindingKind::NotRegularFile => "not-regular-file",
            FindingKind::MissingDeletionVector => "missing-deletion-vector",
            FindingKind::CorruptDeletionVector => "corrupt-deletion-vector",
            FindingKind::DeletionVectorCardinality => "deletion-vector-cardinality",
            FindingKind::UnreadableDataFile => "unreadable-data-file",
            FindingKind::StatsMismatch => "stats-mismatch",
            FindingKind::DeletionVectorOutOfRange => "deletion-vector-out-of-range",
            FindingKind::MissingChangeDataFile => "missing-change-data-file",
            FindingKind::CorruptChangeDataFile => "corrupt-change-data-file",
            FindingKind::InvalidSchema => "invalid-schema",
            FindingKind::UnreadableCompaction => "unreadable-compaction",
            FindingKind::CompactionMismatch => "compaction-mismatch",
            FindingKind::ImpossibleStats => "impossible-stats",
            FindingKind::InvalidPartitionValue => "invalid-partition-value",
            FindingKind::IcebergMismatch => "iceberg-mismatch",
        }
    }
}

impl std::fmt::Display for FindingKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One problem found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Finding {
    /// What is wrong.
    pub kind: FindingKind,
    /// Where: a log file or data file path (table-relative, or an absolute URI).
    pub location: String,
    /// The details, one line.
    pub detail: String,
}

impl Finding {
    fn new(kind: FindingKind, location: impl Into<String>, detail: impl Into<String>) -> Self {
        Finding {
            kind,
            location: location.into(),
            detail: detail.into().replace(['\n', '\r'], " "),
        }
    }
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}: {}", self.kind, self.location, self.detail)
    }
}

/// What [`Table::verify`] found, and how much it looked at.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct VerifyReport {
    /// The version checked.
    pub version: u64,
    /// Every problem found, log first, then files (in path order).
    pub findings: Vec<Finding>,
    /// Commit files read.
    pub commits_checked: usize,
    /// Checkpoints read.
    pub checkpoints_checked: usize,
    /// Checkpoints compared with the replay of their commits.
    pub checkpoints_compared: usize,
    /// Data files checked (existence, kind, size).
    pub files_checked: usize,
    /// Deletion vectors read.
    pub deletion_vectors_checked: usize,
    /// (`deep`) Data files read and compared with their statistics.
    pub files_read: usize,
    /// Log compaction files read (and compared with their commits where those exist).
    pub compactions_checked: usize,
    /// Change-data files checked (those of commits inside the retention window).
    pub change_data_files_checked: usize,
}

impl VerifyReport {
    /// True when nothing is wrong.
    pub fn is_clean(&self) -> bool {
        self.findings.is_empty()
    }
}

impl Table {
    /// Checks the table without changing it and reports every problem found: a log with
    /// missing or unparsable commits, checkpoints that are unreadable or differ from the
    /// replay of their commits (where those are still present) or from another complete
    /// form of their version (a classic beside a multi-part one), log compactions that are
    /// unreadable or disagree with their commits, a `_last_checkpoint` that lies, a schema
    /// without columns, data files that are missing, of the wrong size or not regular
    /// files, deletion vectors whose checksum or cardinality is wrong or that name rows the
    /// file does not have, change-data files of retained commits that are missing or of
    /// the wrong size, statistics impossible on their face (negative counts, more nulls than
    /// rows), partition values that are missing or not of their column's type, and with
    /// [`deep`](VerifyOptions::deep) data files that cannot be read, statistics that
    /// disagree with the data, change-data files that cannot be read, and Iceberg metadata
    /// that disagrees with the log at a synced version.
    ///
    /// Nothing is written or deleted. Damage is reported as findings, not errors.
    ///
    /// ```no_run
    /// # fn main() -> alluvium::Result<()> {
    /// use alluvium::{Table, VerifyOptions};
    ///
    /// let table = Table::open("path/to/table")?;
    /// let report = table.verify(&VerifyOptions::default())?;
    /// for finding in &report.findings {
    ///     eprintln!("{finding}");
    /// }
    /// assert!(report.is_clean());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`alluvium_txlog::LogError::TableNotFound`] if there is no table;
    /// [`alluvium_txlog::LogError::VersionNotFound`] if `version` is beyond the latest;
    /// storage errors if the log cannot be listed.
    pub fn verify(&self, options: &VerifyOptions) -> Result<VerifyReport> {
        let mut report = VerifyReport::default();
        let facts = log::check_log(self.store().as_ref(), options.version, &mut report)?;
        let version = facts.version;
        report.version = version;
        let snapshot = match self.snapshot_at(alluvium_mvcc::VersionSpec::Version(version)) {
            Ok(s) => s,
            Err(e) => {
                report.findings.push(Finding::new(
                    FindingKind::UnreadableSnapshot,
                    "_delta_log",
                    format!("version {version} cannot be loaded: {e}"),
                ));
                return Ok(report);
            }
        };
        // Loading accepts a schema without columns; every scan refuses it.
        if snapshot.schema().fields.is_empty() {
            report.findings.push(Finding::new(
                FindingKind::InvalidSchema,
                "_delta_log",
                format!(
                    "the schema of version {version} has no columns: no read can return its rows"
                ),
            ));
        }
        let checked = files::check_files(&snapshot, &mut report);
        change_data::check_change_data(&snapshot, &facts.change_data, options.deep, &mut report);
        if options.deep {
            stats::check_stats(
                &snapshot,
                &checked.damaged,
                &checked.dv_last_row,
                &mut report,
            );
            // The Iceberg snapshots mirror versions up to the latest, whatever version was
            // asked for.
            for d in self.run(|| alluvium_iceberg::check(self.store().clone()))? {
                report
                    .findings
                    .push(Finding::new(FindingKind::IcebergMismatch, d.file, d.detail));
            }
        }
        Ok(report)
    }
}
