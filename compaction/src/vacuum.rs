//! VACUUM (SPEC.md §17): deleting data and deletion-vector files that no version inside the
//! retention window references.
//!
//! **What is protected.** The retention window starts at the cutoff, the store's clock
//! minus the retention (`delta.deletedFileRetentionDuration`, 7 days by default). The
//! version current at the cutoff (the newest committed at or before it) and every later
//! version may still be read, so the protected set is exactly: the live files of that
//! version, plus every file added by a later commit, plus the deletion-vector and
//! change-data files those reference. It is computed from the log itself, not from
//! tombstones (which checkpoints drop once they expire under the table's own retention).
//!
//! References are resolved by the store the way its reader resolves them
//! ([`alluvium_storage::ObjectStore::reachable_objects`]): an absolute URI spelled
//! differently from the root (`//`, `/./`, `/x/../`, a linked directory) protects the file
//! it reaches; a reference that cannot be resolved with certainty fails the run before
//! anything is deleted.
//!
//! **What is deleted.** Candidates come from the log's tombstones (**lite**: no listing) or
//! from a listing of the table directory (**full**: skips `_delta_log` and every path
//! segment starting with `_` or `.` unless it is a partition directory `name=value` or the
//! top-level `_change_data`; but lists the hidden temporary files killed writers left in
//! the directories alluvium writes to, log included). Tombstones naming a path the listing
//! skips (the log, hidden files) are not candidates either. A
//! candidate is deleted only if it is not protected, lies inside the table root, and (full
//! mode) its modification time is at or before the cutoff: a younger unreferenced file (or
//! temporary file) may belong to a writer that has not committed yet. Deletes go through
//! the store, which never follows a link below the root (a tombstone through
//! `evil -> ../outside` is a failed delete, not a deleted outside file).
//!
//! **Safety rails.** A retention shorter than the table's is refused unless forced. Writer
//! features alluvium does not support are refused (`vacuumProtocolCheck` asks exactly that of
//! every engine; alluvium checks always). A run that deletes writes `VACUUM START` and
//! `VACUUM END` commits (commitInfo only) around the deletes, as Spark does, so the history
//! shows it. Deletes run in parallel, at most `parallelism` at a time on the caller's rayon
//! pool (no thread is spawned).

use std::collections::HashSet;
use std::time::Instant;

use alluvium_mvcc::{MvccError, Snapshot, Transaction, VersionSpec};
use alluvium_storage::{FileLocation, StorePath, is_temp_name};
use alluvium_txlog::actions::Action;
use alluvium_txlog::commit::decode_commit;
use alluvium_txlog::dv::DvLocation;
use alluvium_txlog::log_path::{DELTA_LOG_DIR, SIDECAR_DIR, commit_path};
use alluvium_txlog::path::{TableRoot, resolve};
use alluvium_txlog::segment::{earliest_readable_version, list_log_from};
use alluvium_txlog::{FileRef, LogError, Version};
use rayon::prelude::*;
use serde_json::json;

use crate::{CommitFields, MaintenanceError, Result};

const HOUR_MS: i64 = 3_600_000;

/// Where candidates come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VacuumMode {
    /// Files the log removed (tombstones): no listing of the table directory.
    Lite,
    /// Every file under the table directory.
    #[default]
    Full,
}

/// How to vacuum.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct VacuumOptions {
    /// Retention in hours; the table's `delta.deletedFileRetentionDuration` when `None`.
    pub retention_hours: Option<f64>,
    /// Allow a retention shorter than the table's.
    pub force: bool,
    /// Only report what would be deleted.
    pub dry_run: bool,
    /// Candidates from tombstones or from a listing.
    pub mode: VacuumMode,
    /// Most deletes in flight at once (on the current rayon pool; 0 counts as 1).
    pub parallelism: usize,
    /// The current time in milliseconds since the epoch: `None` (the default) reads the
    /// table store's clock ([`alluvium_storage::ObjectStore::now_ms`]) when the run starts;
    /// `Some` is an explicit clock for tests and tools that replay a point in time.
    pub now_ms: Option<i64>,
    /// The embedder's `commitInfo` fields, on the `VACUUM START` and `VACUUM END`
    /// commits; a name the engine writes itself fails the run before anything is deleted.
    pub commit_fields: CommitFields,
}

impl Default for VacuumOptions {
    fn default() -> Self {
        VacuumOptions {
            retention_hours: None,
            force: false,
            dry_run: false,
            mode: VacuumMode::Full,
            parallelism: 16,
            now_ms: None,
            commit_fields: CommitFields::default(),
        }
    }
}

/// Builder-style setters: the struct is `#[non_exhaustive]`, so outside this crate it is
/// built from its `Default` with these.
impl VacuumOptions {
    /// Sets [`retention_hours`](Self::retention_hours) (a value, or an `Option`).
    #[must_use]
    pub fn with_retention_hours(mut self, retention_hours: impl Into<Option<f64>>) -> Self {
        self.retention_hours = retention_hours.into();
        self
    }

    /// Sets [`force`](Self::force).
    #[must_use]
    pub fn with_force(mut self, force: bool) -> Self {
        self.force = force;
        self
    }

    /// Sets [`dry_run`](Self::dry_run).
    #[must_use]
    pub fn with_dry_run(mut self, dry_run: bool) -> Self {
        self.dry_run = dry_run;
        self
    }

    /// Sets [`mode`](Self::mode).
    #[must_use]
    pub fn with_mode(mut self, mode: VacuumMode) -> Self {
        self.mode = mode;
        self
    }

    /// Sets [`parallelism`](Self::parallelism).
    #[must_use]
    pub fn with_parallelism(mut self, parallelism: usize) -> Self {
        self.parallelism = parallelism;
        self
    }

    /// Sets [`now_ms`](Self::now_ms) (a value, or an `Option`).
    #[must_use]
    pub fn with_now_ms(mut self, now_ms: impl Into<Option<i64>>) -> Self {
        self.now_ms = now_ms.into();
        self
    }

    /// Sets [`commit_fields`](Self::commit_fields).
    #[must_use]
    pub fn with_commit_fields(mut self, fields: CommitFields) -> Self {
        self.commit_fields = fields;
        self
    }
}

/// What a run did (or would do).
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct VacuumReport {
    /// Files deleted (or to delete), sorted.
    pub deleted: Vec<StorePath>,
    /// Their total size in bytes, where known.
    pub bytes: u64,
    /// Files looked at (listed, or tombstones).
    pub candidates: usize,
    /// Their total size in bytes, where known (full mode: the table's data footprint
    /// before the run).
    pub candidate_bytes: u64,
    /// Protected files (referenced by a version inside the window).
    pub protected: usize,
    /// Unreferenced files kept because they are younger than the cutoff.
    pub kept_young: usize,
    /// The cutoff (ms since the epoch).
    pub cutoff_ms: i64,
    /// The oldest version whose files were protected.
    pub oldest_protected_version: Version,
    /// Deletes that failed (the file stays; a later run retries), with the reason.
    pub failed: Vec<String>,
    /// `VACUUM START` / `VACUUM END` versions (none in a dry run or when nothing went).
    pub versions: Vec<Version>,
    /// True for a dry run.
    pub dry_run: bool,
    /// Wall time in milliseconds.
    pub elapsed_ms: u64,
    /// Iceberg snapshots expired after the run because it made them unreadable. Set by the
    /// facade, which owns the table's Iceberg metadata; always 0 from this crate.
    pub iceberg_snapshots_expired: usize,
}

/// The table-relative path of a referenced file, if it lies inside the table root.
fn relative(path: &str, root: &TableRoot) -> Option<String> {
    match resolve(path, root) {
        Ok(FileLocation::Table(p)) => Some(p.as_str().to_string()),
        _ => None,
    }
}

/// Collects where a referenced file lives. A path the reader refuses too (not UTF-8, or
/// escaping the root) locates nothing.
fn locate(path: &str, root: &TableRoot, out: &mut Vec<FileLocation>) {
    if let Ok(loc) = resolve(path, root) {
        out.push(loc);
    }
}

fn locate_add(add: FileRef<'_>, root: &TableRoot, out: &mut Vec<FileLocation>) {
    locate(add.path(), root, out);
    if let Some(dv) = &add.deletion_vector() {
        match dv.location() {
            Ok(DvLocation::Relative { path, .. }) => {
                if let Ok(p) = StorePath::parse(path) {
                    out.push(FileLocation::Table(p));
                }
            }
            Ok(DvLocation::Absolute { uri, .. }) => locate(&uri, root, out),
            _ => {}
        }
    }
}

/// The version current at `cutoff_ms`: the newest committed at or before it, or the
/// earliest readable version when the cutoff is older than the log.
fn version_at_cutoff(latest: &Snapshot, cutoff_ms: i64) -> Result<Snapshot> {
    if latest.timestamp_ms() <= cutoff_ms {
        return Ok(latest.clone());
    }
    match Snapshot::load(latest.store().clone(), VersionSpec::Timestamp(cutoff_ms)) {
        Ok(s) if s.version() <= latest.version() => Ok(s),
        Ok(_) => Ok(latest.clone()),
        Err(MvccError::Log(LogError::TimestampOutOfRange { .. })) => {
            let listing = list_log_from(latest.store_ref(), 0)?;
            let earliest = earliest_readable_version(&listing).unwrap_or(latest.version());
            Ok(Snapshot::load(
                latest.store().clone(),
                VersionSpec::Version(earliest.min(latest.version())),
            )?)
        }
        Err(e) => Err(e.into()),
    }
}

/// Every object a version in `from.version() ..= latest` may read (see the module docs):
/// the references are resolved by the store the way its reader resolves them, so that a
/// file named by another spelling of its path, or through a link, is still protected.
fn protected_files(from: &Snapshot, latest: &Snapshot) -> Result<HashSet<String>> {
    let root = latest.root();
    let mut locations = Vec::new();
    for add in from.files() {
        locate_add(add, root, &mut locations);
    }
    let store = latest.store_ref();
    let versions: Vec<Version> = (from.version() + 1..=latest.version()).collect();
    let commits: Vec<Result<Vec<Action>>> = versions
        .par_iter()
        .map(|v| {
            let p = commit_path(*v);
            let bytes = store.get(&p)?;
            Ok(decode_commit(p.as_str(), &bytes)?)
        })
        .collect();
    for actions in commits {
        for a in actions? {
            match a {
                Action::Add(add) => locate_add((&add).into(), root, &mut locations),
                Action::Cdc(cdc) => locate(&cdc.path, root, &mut locations),
                _ => {}
            }
        }
    }
    // A reference the store cannot resolve with certainty fails the run here, before
    // anything is deleted.
    Ok(store
        .reachable_objects(&locations)?
        .into_iter()
        .map(|p| p.as_str().to_string())
        .collect())
}

/// The directory of change-data files: hidden by its name, but VACUUM cleans it like data
/// (its files are referenced by `cdc` actions, protected like adds while retained).
const CHANGE_DATA_DIR: &str = "_change_data";

/// True for paths VACUUM never lists: the log, and hidden files or directories (a segment
/// starting with `_` or `.`), except partition directories (`name=value`) and the top-level
/// `_change_data` directory (as Delta-Spark's VACUUM).
fn hidden(path: &str) -> bool {
    if path == DELTA_LOG_DIR || path.starts_with(&format!("{DELTA_LOG_DIR}/")) {
        return true;
    }
    let segments: Vec<&str> = path.split('/').collect();
    let last = segments.len().saturating_sub(1);
    segments.iter().enumerate().any(|(i, s)| {
        let exempt_dir = i != last && (s.contains('=') || (i == 0 && *s == CHANGE_DATA_DIR));
        (s.starts_with('_') || s.starts_with('.')) && !exempt_dir
    })
}

/// One candidate: path, size if known, modification time if known.
type Candidate = (StorePath, Option<u64>, Option<i64>);

/// True for a temporary file a killed writer of this store left behind (see
/// [`is_temp_name`]) in a directory alluvium writes to: data and partition directories,
/// `_change_data`, the log and its sidecars.
fn abandoned_temp(path: &str) -> bool {
    let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
    is_temp_name(name)
        && (dir.is_empty()
            || dir == DELTA_LOG_DIR
            || dir == format!("{DELTA_LOG_DIR}/{SIDECAR_DIR}")
            || !hidden(&format!("{dir}/x")))
}

fn candidates(latest: &Snapshot, mode: VacuumMode, cutoff_ms: i64) -> Result<Vec<Candidate>> {
    let root = latest.root();
    match mode {
        VacuumMode::Full => {
            let listed = latest.store_ref().list_tree(None)?;
            // Iceberg metadata beside the log (`metadata/`, alluvium's and UniForm's) is
            // referenced by Iceberg snapshots, not by the Delta log: never listed while it
            // holds a table's metadata; expiring Iceberg snapshots cleans it instead.
            let iceberg = listed
                .iter()
                .any(|m| alluvium_iceberg::metadata::is_table_metadata_file(m.path.as_str()));
            let iceberg_prefix = format!("{}/", alluvium_iceberg::metadata::METADATA_DIR);
            Ok(listed
                .into_iter()
                .filter(|m| !hidden(m.path.as_str()) || abandoned_temp(m.path.as_str()))
                .filter(|m| !(iceberg && m.path.as_str().starts_with(&iceberg_prefix)))
                .map(|m| (m.path, Some(m.size), Some(m.last_modified_ms)))
                .collect())
        }
        VacuumMode::Lite => {
            let mut seen = HashSet::new();
            let mut out = Vec::new();
            for rm in latest.state().tombstones() {
                if rm.deletion_timestamp.unwrap_or(0) > cutoff_ms {
                    continue;
                }
                let mut paths = vec![relative(&rm.path, root)];
                if let Some(dv) = &rm.deletion_vector
                    && let Ok(DvLocation::Relative { path, .. }) = dv.location()
                {
                    paths.push(Some(path));
                }
                // A tombstone is only a claim of the log: the paths a listing never offers
                // (the log itself, hidden files) are not candidates here either.
                for p in paths.into_iter().flatten().filter(|p| !hidden(p)) {
                    if seen.insert(p.clone())
                        && let Ok(sp) = StorePath::parse(p)
                    {
                        let size = rm.size.and_then(|s| u64::try_from(s).ok());
                        out.push((sp, size, None));
                    }
                }
            }
            Ok(out)
        }
    }
}

/// Commits a commitInfo-only transaction recording a VACUUM phase.
fn record(
    snapshot: &Snapshot,
    operation: &str,
    parameters: &[(&str, serde_json::Value)],
    metrics: &[(&str, String)],
    fields: &CommitFields,
) -> Result<Version> {
    let mut txn = Transaction::new(snapshot, operation);
    fields.apply(&mut txn);
    for (k, v) in parameters {
        txn.set_parameter(k, v.clone());
    }
    for (k, v) in metrics {
        txn.set_metric(k, v);
    }
    Ok(txn.commit()?.version)
}

/// Whether the planted bug that deletes young unreferenced files is on (never without the
/// cargo feature `planted-bugs`). Those files may belong to a writer that commits during
/// this run; keeping them is what makes VACUUM safe against such a commit.
fn ignores_young_files() -> bool {
    #[cfg(feature = "planted-bugs")]
    if alluvium_mvcc::planted::planted(alluvium_mvcc::planted::Bug::VacuumIgnoresYoungFiles) {
        // Planted bug (d).
        return true;
    }
    false
}

/// Runs VACUUM on the latest version `latest` of a table (see the module docs).
///
/// # Errors
/// [`MaintenanceError::RetentionTooShort`] (unless forced), unsupported writer features,
/// log and storage errors while computing what is protected (nothing is deleted then).
/// Failed deletes do not fail the run: they are listed in the report.
pub fn vacuum(latest: &Snapshot, options: &VacuumOptions) -> Result<VacuumReport> {
    let started = Instant::now();
    latest.check_writable()?;
    options.commit_fields.check()?;
    let table_ms = latest.properties().deleted_file_retention_ms();
    let retention_ms = match options.retention_hours {
        Some(h) if !(h.is_finite() && h >= 0.0) => {
            return Err(MaintenanceError::Refused(format!(
                "VACUUM retention must be a non-negative number of hours, not {h}"
            )));
        }
        Some(h) => (h * HOUR_MS as f64) as i64,
        None => table_ms,
    };
    if retention_ms < table_ms && !options.force {
        return Err(MaintenanceError::RetentionTooShort {
            requested_hours: retention_ms as f64 / HOUR_MS as f64,
            minimum_hours: table_ms as f64 / HOUR_MS as f64,
        });
    }
    let now_ms = options.now_ms.unwrap_or_else(|| latest.store().now_ms());
    let cutoff_ms = now_ms.saturating_sub(retention_ms);
    let from = version_at_cutoff(latest, cutoff_ms)?;
    let protected = protected_files(&from, latest)?;
    let listed = candidates(latest, options.mode, cutoff_ms)?;
    let mut report = VacuumReport {
        candidates: listed.len(),
        candidate_bytes: listed.iter().filter_map(|(_, size, _)| *size).sum(),
        protected: protected.len(),
        cutoff_ms,
        oldest_protected_version: from.version(),
        dry_run: options.dry_run,
        ..Default::default()
    };
    let mut doomed: Vec<(StorePath, Option<u64>)> = Vec::new();
    for (path, size, modified) in listed {
        if protected.contains(path.as_str()) {
            continue;
        }
        if modified.is_some_and(|m| m > cutoff_ms) && !ignores_young_files() {
            report.kept_young += 1;
            continue;
        }
        doomed.push((path, size));
    }
    doomed.sort_by(|a, b| a.0.cmp(&b.0));
    report.bytes = doomed.iter().filter_map(|(_, s)| *s).sum();
    report.deleted = doomed.iter().map(|(p, _)| p.clone()).collect();
    if options.dry_run || doomed.is_empty() {
        report.elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        return Ok(report);
    }

    let start_version = record(
        latest,
        "VACUUM START",
        &[
            ("retentionCheckEnabled", json!(!options.force)),
            ("specifiedRetentionMillis", json!(retention_ms)),
            ("defaultRetentionMillis", json!(table_ms)),
        ],
        &[
            ("numFilesToDelete", doomed.len().to_string()),
            ("sizeOfDataToDelete", report.bytes.to_string()),
        ],
        &options.commit_fields,
    )?;
    report.versions.push(start_version);

    let store = latest.store_ref();
    let delete = |p: &StorePath| store.delete(p).map_err(|e| format!("{p}: {e}"));
    // Object stores delete in bounded concurrent (or bulk) requests themselves.
    let results: Vec<std::result::Result<(), String>> = if store.fetches_concurrently() {
        let paths: Vec<StorePath> = doomed.iter().map(|(p, _)| p.clone()).collect();
        let results = store.delete_many(&paths);
        paths
            .iter()
            .zip(results)
            .map(|(p, r)| r.map_err(|e| format!("{p}: {e}")))
            .collect()
    } else {
        // At most `parallelism` deletes in flight on the current pool; no thread is spawned.
        alluvium_storage::par::map_bounded(&doomed, options.parallelism, |(p, _)| delete(p))
            .into_iter()
            .zip(&doomed)
            .map(|(r, (p, _))| r.unwrap_or_else(|| Err(format!("{p}: the delete did not run"))))
            .collect()
    };
    report.failed = results.into_iter().filter_map(|r| r.err()).collect();
    let deleted = doomed.len() - report.failed.len();

    let after = latest.refresh()?;
    let end_version = record(
        &after,
        "VACUUM END",
        &[(
            "status",
            json!(if report.failed.is_empty() {
                "COMPLETED"
            } else {
                "FAILED"
            }),
        )],
        &[
            ("numDeletedFiles", deleted.to_string()),
            ("numVacuumedDirectories", "0".to_string()),
        ],
        &options.commit_fields,
    )?;
    report.versions.push(end_version);
    report.elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store that records, at each delete, how many threads of the test pool exist.
    #[derive(Debug)]
    struct ThreadWatch {
        inner: alluvium_storage::StoreRef,
        seen: std::sync::Mutex<Vec<usize>>,
    }

    impl alluvium_storage::ObjectStore for ThreadWatch {
        fn root_uri(&self) -> String {
            self.inner.root_uri()
        }
        fn get(&self, path: &StorePath) -> alluvium_storage::Result<bytes::Bytes> {
            self.inner.get(path)
        }
        fn get_range(
            &self,
            path: &StorePath,
            range: std::ops::Range<u64>,
        ) -> alluvium_storage::Result<bytes::Bytes> {
            self.inner.get_range(path, range)
        }
        fn head(&self, path: &StorePath) -> alluvium_storage::Result<alluvium_storage::ObjectMeta> {
            self.inner.head(path)
        }
        fn put_if_absent(
            &self,
            path: &StorePath,
            data: bytes::Bytes,
        ) -> alluvium_storage::Result<()> {
            self.inner.put_if_absent(path, data)
        }
        fn put(&self, path: &StorePath, data: bytes::Bytes) -> alluvium_storage::Result<()> {
            self.inner.put(path, data)
        }
        fn list_dir_from(
            &self,
            dir: Option<&StorePath>,
            start: &str,
        ) -> alluvium_storage::Result<Vec<alluvium_storage::ObjectMeta>> {
            self.inner.list_dir_from(dir, start)
        }
        fn list_tree(
            &self,
            dir: Option<&StorePath>,
        ) -> alluvium_storage::Result<Vec<alluvium_storage::ObjectMeta>> {
            self.inner.list_tree(dir)
        }
        fn delete(&self, path: &StorePath) -> alluvium_storage::Result<()> {
            let n = alluvium_storage::par::threads_named("vacuum-pool");
            self.seen.lock().unwrap().push(n);
            self.inner.delete(path)
        }
        fn now_ms(&self) -> i64 {
            self.inner.now_ms()
        }
        fn reachable_objects(
            &self,
            locations: &[FileLocation],
        ) -> alluvium_storage::Result<Vec<StorePath>> {
            self.inner.reachable_objects(locations)
        }
    }

    /// An empty table on `store` plus `n` files no version references.
    fn table_with_orphans(store: alluvium_storage::StoreRef, n: usize) -> Snapshot {
        use alluvium_txlog::actions::{Format, Metadata, Protocol};
        let mut txn = Transaction::create(store.clone(), "CREATE TABLE");
        txn.set_protocol(Protocol {
            min_reader_version: 1,
            min_writer_version: 2,
            reader_features: None,
            writer_features: None,
        });
        txn.set_metadata(Metadata {
            id: "t".into(),
            name: None,
            description: None,
            format: Format::default(),
            schema_string: r#"{"type":"struct","fields":[{"name":"a","type":"long","nullable":true,"metadata":{}}]}"#.into(),
            partition_columns: vec![],
            created_time: None,
            configuration: std::collections::HashMap::new(),
        });
        txn.commit().unwrap();
        for i in 0..n {
            let p = StorePath::parse(format!("orphan-{i}.parquet")).unwrap();
            store.put(&p, bytes::Bytes::from_static(b"x")).unwrap();
        }
        Snapshot::load(store, VersionSpec::Latest).unwrap()
    }

    /// Without an explicit clock VACUUM reads the store's: with no retention, files written
    /// before the run are old enough; an explicit clock before them keeps them all.
    #[test]
    fn the_clock_is_the_stores_unless_given() {
        let clock = std::sync::Arc::new(
            alluvium_storage::InMemoryStore::new().with_manual_clock(1_000 * HOUR_MS),
        );
        let latest = table_with_orphans(clock.clone(), 3);
        clock.advance_clock(HOUR_MS);
        let mut options = VacuumOptions {
            retention_hours: Some(0.0),
            force: true,
            dry_run: true,
            ..Default::default()
        };
        assert_eq!(options.now_ms, None);
        let r = vacuum(&latest, &options).unwrap();
        assert_eq!(r.deleted.len(), 3, "{r:?}");
        assert_eq!(r.cutoff_ms, 1_001 * HOUR_MS);

        options.now_ms = Some(1_000 * HOUR_MS - 1);
        let r = vacuum(&latest, &options).unwrap();
        assert_eq!(r.cutoff_ms, 1_000 * HOUR_MS - 1);
        assert!(r.deleted.is_empty(), "{r:?}");
    }

    /// VACUUM's deletes run on the caller's rayon pool, at most `parallelism` at a time, and
    /// spawn no OS thread (an embedder bounds the engine's threads by the pool it installs).
    #[cfg(target_os = "linux")]
    #[test]
    fn deletes_run_on_the_current_pool_and_spawn_no_thread() {
        let n = 64;
        let watch = std::sync::Arc::new(ThreadWatch {
            inner: std::sync::Arc::new(alluvium_storage::InMemoryStore::new()),
            seen: std::sync::Mutex::new(Vec::new()),
        });
        let latest = table_with_orphans(watch.clone(), n);
        let options = VacuumOptions {
            retention_hours: Some(0.0),
            force: true,
            now_ms: Some(latest.store().now_ms() + HOUR_MS),
            ..Default::default()
        };
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .thread_name(|i| format!("vacuum-pool-{i}"))
            .build()
            .unwrap();
        assert!(alluvium_storage::par::await_threads_named("vacuum-pool", 2));
        let report = pool.install(|| vacuum(&latest, &options)).unwrap();
        assert_eq!(report.deleted.len(), n);
        assert!(report.failed.is_empty(), "{:?}", report.failed);
        let seen = watch.seen.lock().unwrap().clone();
        assert_eq!(seen, vec![2; n], "threads of the pool seen at each delete");
    }

    #[test]
    fn abandoned_temps_are_listed_where_alluvium_writes() {
        let t = ".part-0.parquet.0123456789abcdef0123456789abcdef.tmp";
        for dir in [
            "",
            "p=1/",
            "_p=1/q=2/",
            "_delta_log/",
            "_delta_log/_sidecars/",
        ] {
            assert!(abandoned_temp(&format!("{dir}{t}")), "{dir}");
        }
        for dir in [".hidden/", "_other/", "p=1/_x/"] {
            assert!(!abandoned_temp(&format!("{dir}{t}")), "{dir}");
        }
        assert!(!abandoned_temp("p=1/.part-0.parquet.crc"));
        assert!(!abandoned_temp("_delta_log/00000000000000000000.json"));
    }

    #[test]
    fn hidden_paths_spare_partition_directories() {
        assert!(hidden("_delta_log/00000000000000000000.json"));
        assert!(!hidden("_change_data/cdc-1.parquet"));
        assert!(hidden("_change_data/_tmp/cdc-1.parquet"));
        assert!(hidden("p=1/_change_data/cdc-1.parquet"));
        assert!(hidden("_change_data"));
        assert!(hidden(".hidden/x.parquet"));
        assert!(hidden("p=1/_temp.parquet"));
        assert!(hidden("p=1/.part.crc"));
        assert!(!hidden("part-0.parquet"));
        assert!(!hidden("p=1/part-0.parquet"));
        assert!(
            !hidden("_p=1/part-0.parquet"),
            "a partition column named _p"
        );
        assert!(!hidden("ab/deletion_vector_x.bin"));
    }
}
