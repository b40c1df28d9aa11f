//! File checks of `verify`: every data file a version references exists, is a regular file
//! of the recorded size, and every deletion vector decodes (checksum, size) to the number
//! of rows its descriptor states and names only rows the file has (by its statistics'
//! `numRecords` here; `--deep` counts the file's rows), every file's statistics are
//! possible on their face (no negative count, no more nulls than rows) and its partition
//! values parse as their columns' types.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use crate::Snapshot;
use alluvium_datafile::read::partition_value;
use alluvium_storage::{FileLocation, ObjectStore, local_ref};
use alluvium_txlog::dv::{DvLocation, read_deletion_vector_bitmap};
use alluvium_txlog::path::resolve;
use alluvium_txlog::schema::StructField;
use alluvium_txlog::stats::FileStats;
use alluvium_txlog::{FileRef, LogError};

use super::{Finding, FindingKind, VerifyReport};

/// The local filesystem path of a `file:` URI (or absolute path), by the store's one rule
/// (`alluvium_storage::local_ref`), if it names one.
fn local_path(uri: &str) -> Option<PathBuf> {
    local_ref(uri)?.absolute().map(PathBuf::from)
}

/// What the file checks leave for the deep checks.
#[derive(Debug, Default)]
pub(super) struct FileChecks {
    /// Paths (as in the log) of the files found missing or damaged.
    pub damaged: HashSet<String>,
    /// The last row each readable deletion vector deletes, by data file path.
    pub dv_last_row: HashMap<String, u64>,
}

/// Checks the data files and deletion vectors of `snapshot`, in path order.
pub(super) fn check_files(snapshot: &Snapshot, report: &mut VerifyReport) -> FileChecks {
    let mut out = FileChecks::default();
    let store = snapshot.store().as_ref();
    let mut adds: Vec<FileRef<'_>> = snapshot.files().collect();
    adds.sort_by(|a, b| a.path().cmp(b.path()));
    let partitions = snapshot.partition_columns();
    let schema = snapshot.schema();
    let partition_fields: Vec<&StructField> = schema
        .fields
        .iter()
        .filter(|f| partitions.iter().any(|p| p.eq_ignore_ascii_case(&f.name)))
        .collect();
    let mode = snapshot.column_mapping();
    for add in adds {
        report.files_checked += 1;
        let before = report.findings.len();
        // Every read of a partition column parses its value; the log alone shows whether
        // it can. The first bad column of a file is enough to name it.
        if let Some(e) = partition_fields
            .iter()
            .find_map(|f| partition_value(add, f, mode).err())
        {
            report.findings.push(Finding::new(
                FindingKind::InvalidPartitionValue,
                add.path(),
                e.to_string(),
            ));
        }
        match resolve(add.path(), snapshot.root()) {
            Ok(location) => check_file(store, add, &location, report),
            Err(e) => report.findings.push(Finding::new(
                FindingKind::MissingFile,
                add.path(),
                format!("the path cannot be resolved: {e}"),
            )),
        }
        if add.deletion_vector().is_some()
            && let Some(last) = check_deletion_vector(store, add, report)
        {
            out.dv_last_row.insert(add.path().to_string(), last);
        }
        if report.findings.len() > before {
            out.damaged.insert(add.path().to_string());
        }
        // Not damage to the data: the deep check still reads the file and compares.
        if let Some(why) = add.stats().as_deref().and_then(impossible_stats) {
            report
                .findings
                .push(Finding::new(FindingKind::ImpossibleStats, add.path(), why));
        }
    }
    out
}

/// What makes statistics impossible on their face, if anything: a negative `numRecords`,
/// or a `nullCount` below zero or above `numRecords`. Readers answer counts and skip files
/// (`IS NULL`, `IS NOT NULL`) from these numbers, so such a file is counted or skipped
/// wrongly.
fn impossible_stats(json: &str) -> Option<String> {
    let stats = FileStats::parse(json)?;
    if let Some(n) = stats.num_records.filter(|n| *n < 0) {
        return Some(format!(
            "its statistics say numRecords is {n}: a row count cannot be negative"
        ));
    }
    let mut leaves = Vec::new();
    null_counts(stats.null_count.as_ref()?, &mut Vec::new(), &mut leaves);
    let rows = stats.num_records;
    let (column, count) = leaves
        .into_iter()
        .find(|(_, c)| *c < 0 || rows.is_some_and(|n| *c > n))?;
    Some(match rows {
        Some(n) if count > n => {
            format!("its statistics say nullCount of {column} is {count}, above numRecords {n}")
        }
        _ => format!(
            "its statistics say nullCount of {column} is {count}: a count cannot be negative"
        ),
    })
}

/// Every integer leaf of a `nullCount` object, with its dotted column path.
fn null_counts(
    map: &serde_json::Map<String, serde_json::Value>,
    path: &mut Vec<String>,
    out: &mut Vec<(String, i64)>,
) {
    for (name, value) in map {
        path.push(name.clone());
        match value {
            serde_json::Value::Object(children) => null_counts(children, path, out),
            other => {
                if let Some(c) = other.as_i64() {
                    out.push((path.join("."), c));
                }
            }
        }
        path.pop();
    }
}

/// What the filesystem holds at a local path: its size if it is a regular file (following
/// symlinks, as readers do), or a finding.
fn local_file(path: &std::path::Path, shown: &str) -> Result<u64, Finding> {
    match std::fs::metadata(path) {
        Ok(md) if md.is_file() => Ok(md.len()),
        Ok(md) => Err(Finding::new(
            FindingKind::NotRegularFile,
            shown,
            format!("is a {}, not a regular file", kind_name(&md.file_type())),
        )),
        Err(e) => Err(Finding::new(FindingKind::MissingFile, shown, e.to_string())),
    }
}

fn kind_name(t: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "FIFO";
        }
        if t.is_socket() {
            return "socket";
        }
        if t.is_block_device() || t.is_char_device() {
            return "device";
        }
    }
    if t.is_dir() {
        "directory"
    } else {
        "special file"
    }
}

/// The size of the file at `location`, or the finding that says why there is none.
pub(crate) fn file_size(store: &dyn ObjectStore, location: &FileLocation) -> Result<u64, Finding> {
    let shown = location.as_str();
    match location {
        FileLocation::Table(path) => match store.head(path) {
            Ok(meta) => Ok(meta.size),
            // Stores report anything but a regular file as absent (or refuse to read it);
            // on a local table, ask the filesystem which it is.
            Err(e) => match local_path(&store.root_uri()) {
                Some(root) => {
                    let mut full = root;
                    full.extend(path.as_str().split('/'));
                    local_file(&full, shown)
                }
                None => Err(Finding::new(FindingKind::MissingFile, shown, e.to_string())),
            },
        },
        // The local filesystem is where readers look only when the table itself is local;
        // another store reads (or refuses) the URI itself.
        FileLocation::External(uri) => {
            match local_path(uri).filter(|_| local_path(&store.root_uri()).is_some()) {
                Some(p) => local_file(&p, shown),
                None => store
                    .get_external(uri)
                    .map(|b| b.len() as u64)
                    .map_err(|e| Finding::new(FindingKind::MissingFile, shown, e.to_string())),
            }
        }
    }
}

fn check_file(
    store: &dyn ObjectStore,
    add: FileRef<'_>,
    location: &FileLocation,
    report: &mut VerifyReport,
) {
    match file_size(store, location) {
        Ok(size) if i64::try_from(size).ok() == Some(add.size()) => {}
        Ok(size) => report.findings.push(Finding::new(
            FindingKind::FileSizeMismatch,
            location.as_str(),
            format!("is {size} bytes; the log records {}", add.size()),
        )),
        Err(finding) => report.findings.push(finding),
    }
}

/// Reads the deletion vector of `add`, reporting what is wrong with it; returns the last
/// row it deletes when it could be read.
fn check_deletion_vector(
    store: &dyn ObjectStore,
    add: FileRef<'_>,
    report: &mut VerifyReport,
) -> Option<u64> {
    let dv = add.deletion_vector()?;
    report.deletion_vectors_checked += 1;
    let location = match dv.location() {
        Ok(DvLocation::Relative { path, .. }) => path,
        Ok(DvLocation::Absolute { uri, .. }) => uri,
        Ok(DvLocation::Inline(_)) | Err(_) => format!("{} (inline deletion vector)", add.path()),
    };
    let bitmap = match read_deletion_vector_bitmap(store, dv) {
        Ok(b) => b,
        Err(e) if e.is_not_found() => {
            report.findings.push(Finding::new(
                FindingKind::MissingDeletionVector,
                location,
                format!("the deletion vector of {} is missing: {e}", add.path()),
            ));
            return None;
        }
        Err(e) => {
            report.findings.push(Finding::new(
                FindingKind::CorruptDeletionVector,
                location,
                format!("the deletion vector of {}: {}", add.path(), describe(&e)),
            ));
            return None;
        }
    };
    if i64::try_from(bitmap.len()).ok() != Some(dv.cardinality) {
        report.findings.push(Finding::new(
            FindingKind::DeletionVectorCardinality,
            location.clone(),
            format!(
                "the deletion vector of {} holds {} row(s); its descriptor says {}",
                add.path(),
                bitmap.len(),
                dv.cardinality
            ),
        ));
    }
    let last = bitmap.max()?;
    // Every read of the file rejects a deletion vector naming a row it does not have.
    let rows = add
        .stats()
        .as_deref()
        .and_then(FileStats::parse)
        .and_then(|s| s.num_records)
        .and_then(|n| u64::try_from(n).ok());
    if let Some(rows) = rows
        && last >= rows
    {
        report.findings.push(out_of_range(
            add.path(),
            last,
            rows,
            "its statistics record",
        ));
    }
    Some(last)
}

/// The finding of a deletion vector of `path` deleting row `last` of a file of `rows` rows.
pub(super) fn out_of_range(path: &str, last: u64, rows: u64, by: &str) -> Finding {
    Finding::new(
        FindingKind::DeletionVectorOutOfRange,
        path,
        format!(
            "its deletion vector deletes row {last}, but the file has {rows} row(s) ({by}); every read of it fails"
        ),
    )
}

fn describe(e: &LogError) -> String {
    match e {
        LogError::CorruptDeletionVector { reason, .. } => reason.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_files_are_recognised_in_every_spelling_the_store_accepts() {
        for uri in ["file:///t/a", "file://localhost/t/a", "file:/t/a", "/t/a"] {
            assert_eq!(local_path(uri), Some(PathBuf::from("/t/a")), "{uri}");
        }
        for uri in ["file://otherhost/t/a", "s3://b/t/a", "t/a"] {
            assert_eq!(local_path(uri), None, "{uri}");
        }
    }
}
