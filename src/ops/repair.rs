//! FSCK (`repair`): removing from the table the data files its log names but its store no
//! longer has (deleted by hand, lost with a bucket's lifecycle rule), so that scans, DML and
//! OPTIMIZE stop failing on them. The rows of those files are gone already; the commit
//! records that. A data file whose deletion vector file is lost is removed too, as
//! Databricks' `FSCK REPAIR TABLE` removes it: without the vector no reader can tell its
//! deleted rows from its live ones, so the file can only be read wrongly or not at all.
//! Only a file the store says is absent counts: any other failure to look (a network
//! error, a permission) stops the repair with that error, since treating it as absence
//! would drop live data from the table.

use std::collections::BTreeMap;

use alluvium_mvcc::Transaction;
use alluvium_storage::{FileLocation, StorageError, StorePath, local_ref};
use alluvium_txlog::actions::Remove;
use alluvium_txlog::dv::DvLocation;
use alluvium_txlog::path::resolve;
use alluvium_txlog::{FileRef, LogError};
use rayon::prelude::*;

use crate::commit::{WriteOptions, WriteOutcome, finish, outcome_if_done};
use crate::{Result, Snapshot, Table};

/// The operation recorded in `commitInfo` (Delta's and delta-rs' name).
const OPERATION: &str = "FSCK";

/// What [`Table::repair`] found and did.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RepairReport {
    /// The log paths of the live data files the store does not have, or whose deletion
    /// vector file it does not have, in path order: removed by the commit, or only listed on
    /// a dry run.
    pub files_removed: Vec<String>,
    /// What is missing of each of [`files_removed`](Self::files_removed), in the same
    /// order: Databricks' FSCK `DRY RUN` rows.
    pub entries: Vec<RepairEntry>,
    /// Whether the repair only looked (nothing committed).
    pub dry_run: bool,
    /// The commit, when one was made: none on a dry run or when no file was missing;
    /// [`WriteOutcome::Skipped`] when the application transaction was already recorded.
    pub outcome: Option<WriteOutcome>,
}

/// One data file [`Table::repair`] removes, and what of it is missing.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RepairEntry {
    /// The data file's path, as the log names it.
    pub data_file_path: String,
    /// Whether the store lacks the data file.
    pub data_file_missing: bool,
    /// Where the file's deletion vector is stored (relative to the table root, or an
    /// absolute URI), when it has one in a file of its own (an inline vector has none).
    pub deletion_vector_path: Option<String>,
    /// Whether the store lacks that deletion vector file.
    pub deletion_vector_missing: bool,
}

impl Table {
    /// Looks up every live data file of the latest version in the store and, unless
    /// `dry_run`, removes the missing ones in ONE commit (operation `FSCK`, metric
    /// `numFilesRemoved`; `remove` actions with `dataChange=true`, since their rows leave
    /// the table). A file is missing only when the store answers that it does not exist;
    /// nothing is committed when no file is. Deletion vector files are looked up too: a data
    /// file whose vector is missing is removed with its live rows, as Databricks' FSCK
    /// removes it (no reader can tell which of its rows were deleted);
    /// [`RepairReport::entries`] says which was missing. Takes the options every write takes (`commitInfo` fields; an application
    /// transaction already recorded skips the repair).
    ///
    /// ```no_run
    /// # fn main() -> alluvium::Result<()> {
    /// use alluvium::{Table, WriteOptions};
    /// let table = Table::open("path/to/table")?;
    /// let found = table.repair(true, &WriteOptions::default())?;
    /// println!("{} files are missing", found.files_removed.len());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// Any failure to look a file up other than its absence (naming the file), a path that
    /// cannot be resolved; a missing table; unsupported writer features (unless
    /// `dry_run`); commit conflicts (a concurrent commit that removed one of the files).
    pub fn repair(&self, dry_run: bool, options: &WriteOptions) -> Result<RepairReport> {
        let snapshot = self.read_snapshot(options)?;
        let mut txn = Transaction::new(snapshot.inner(), OPERATION);
        if !dry_run {
            snapshot.check_writable()?;
            if let Some(done) = outcome_if_done(&mut txn, &snapshot, options) {
                return Ok(RepairReport {
                    files_removed: Vec::new(),
                    entries: Vec::new(),
                    dry_run,
                    outcome: Some(done),
                });
            }
        }
        let (missing, entries): (Vec<Remove>, Vec<RepairEntry>) =
            missing_files(&snapshot)?.into_iter().unzip();
        let files_removed: Vec<String> = missing.iter().map(|r| r.path.clone()).collect();
        if dry_run || missing.is_empty() {
            return Ok(RepairReport {
                files_removed,
                entries,
                dry_run,
                outcome: None,
            });
        }
        txn.set_metric("numFilesRemoved", missing.len());
        for remove in missing {
            txn.remove_file(remove);
        }
        let outcome = finish(self, txn, options)?;
        Ok(RepairReport {
            files_removed,
            entries,
            dry_run,
            outcome: Some(outcome),
        })
    }
}

/// The `remove` actions of the live files of `snapshot` the store does not have, or whose
/// deletion vector file it does not have, with what is missing of each, in path order. The
/// data files, then the distinct vector files (one file may hold the vectors of many data
/// files), are looked up side by side on the current rayon pool (object stores answer one
/// request per file).
fn missing_files(snapshot: &Snapshot) -> Result<Vec<(Remove, RepairEntry)>> {
    let now = snapshot.store().now_ms();
    let mut files: Vec<_> = snapshot.files().collect();
    files.sort_by(|a, b| a.path().cmp(b.path()));
    let data_gone: Vec<Result<bool>> = files
        .par_iter()
        .map(|f| is_missing(snapshot, resolve(f.path(), snapshot.root())?))
        .collect();
    let vectors: Vec<Option<(String, FileLocation)>> = files
        .iter()
        .map(|f| vector_location(*f))
        .collect::<Result<_>>()?;
    let distinct: BTreeMap<&str, &FileLocation> = vectors
        .iter()
        .flatten()
        .map(|(shown, at)| (shown.as_str(), at))
        .collect();
    let distinct: Vec<(&str, &FileLocation)> = distinct.into_iter().collect();
    let looked: Vec<Result<bool>> = distinct
        .par_iter()
        .map(|(_, at)| is_missing(snapshot, (*at).clone()))
        .collect();
    let mut vector_gone: BTreeMap<&str, bool> = BTreeMap::new();
    for ((shown, _), gone) in distinct.iter().zip(looked) {
        vector_gone.insert(shown, gone?);
    }
    let mut missing = Vec::new();
    for ((f, data_gone), vector) in files.into_iter().zip(data_gone).zip(&vectors) {
        let data_file_missing = data_gone?;
        let deletion_vector_missing = vector
            .as_ref()
            .is_some_and(|(shown, _)| vector_gone.get(shown.as_str()) == Some(&true));
        if data_file_missing || deletion_vector_missing {
            let entry = RepairEntry {
                data_file_path: f.path().to_string(),
                data_file_missing,
                deletion_vector_path: vector.as_ref().map(|(shown, _)| shown.clone()),
                deletion_vector_missing,
            };
            missing.push((Remove::from_add(f, now, true), entry));
        }
    }
    Ok(missing)
}

/// Where the deletion vector of the live file `f` is stored, as the log names it and as
/// the store finds it (where readers read it, `read_deletion_vector_bitmap`: a relative
/// path is a key of the table's store, an absolute one a URI); `None` without one or for an
/// inline vector.
fn vector_location(f: FileRef<'_>) -> Result<Option<(String, FileLocation)>> {
    Ok(
        match f.deletion_vector().map(|d| d.location()).transpose()? {
            None | Some(DvLocation::Inline(_)) => None,
            Some(DvLocation::Relative { path, .. }) => {
                let key = StorePath::parse(path.as_str()).map_err(|e| {
                    LogError::CorruptDeletionVector {
                        location: path.clone(),
                        reason: e.to_string(),
                    }
                })?;
                Some((path, FileLocation::Table(key)))
            }
            Some(DvLocation::Absolute { uri, .. }) => {
                Some((uri.clone(), FileLocation::External(uri)))
            }
        },
    )
}

/// Whether the store answers that the file at `location` does not exist; any other failure
/// to look is an error.
fn is_missing(snapshot: &Snapshot, location: FileLocation) -> Result<bool> {
    let store = snapshot.store().as_ref();
    match &location {
        FileLocation::Table(path) => match store.head(path) {
            Ok(_) => Ok(false),
            Err(e) if e.is_not_found() => Ok(true),
            Err(e) => Err(e.into()),
        },
        // Where readers look: the local filesystem only when the table itself is local (as
        // `verify` checks it); another store reads the URI itself.
        FileLocation::External(uri) => {
            let local =
                |u: &str| local_ref(u).and_then(|l| l.absolute().map(std::path::PathBuf::from));
            match local(uri).filter(|_| local(&store.root_uri()).is_some()) {
                Some(local) => match std::fs::metadata(&local) {
                    Ok(_) => Ok(false),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(true),
                    Err(e) => Err(StorageError::Io {
                        op: "stat",
                        path: uri.clone(),
                        source: e,
                    }
                    .into()),
                },
                None => match store.get_external(uri) {
                    Ok(_) => Ok(false),
                    Err(e) if e.is_not_found() => Ok(true),
                    Err(e) => Err(e.into()),
                },
            }
        }
    }
}
