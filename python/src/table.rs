//! The table handle under `alluvium.DeltaTable`: a [`Table`] and the snapshot the handle
//! has loaded (a version, as deltalake's `DeltaTable` holds one).
//!
//! Reads (`scan`, `files`, `schema`, ...) use the loaded snapshot. Operations that write
//! (DELETE, UPDATE, MERGE, OPTIMIZE, ...) run on the latest version, as optimistic
//! transactions with conflict checks, and then load the version they committed. A handle
//! is shared freely between threads: the snapshot is swapped under a lock, and every write
//! is its own transaction.

use std::collections::{BTreeMap, HashMap};
use std::sync::RwLock;

use alluvium::{
    AppTransaction, CheckpointConfig, CommitFields, DmlOutcome, Expr, OptimizeOptions, RetryPolicy,
    ScanBuilder, Snapshot, Table, VacuumMode, VacuumOptions, VersionSpec, WriteOptions,
    WriteOutcome, parse_expr,
};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::arrow_io::{ArrowSchema, ArrowStream};
use crate::blocking;
use crate::errors::{IntoPy, invalid_input, to_py};
use crate::values::{from_json, from_serialize, literal_of, to_json};

/// Opens the table at `uri` with deltalake-style `storage_options` (object-store keys such
/// as `AWS_ENDPOINT_URL`, and alluvium's own).
pub(crate) fn open(uri: &str, storage_options: Option<HashMap<String, String>>) -> PyResult<Table> {
    let options: Vec<(String, String)> = storage_options.unwrap_or_default().into_iter().collect();
    let pairs: Vec<(&str, &str)> = options
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    Table::open_with_options(uri, &pairs).py_err()
}

/// Which version a handle loads.
pub(crate) fn version_spec(
    version: Option<u64>,
    timestamp_ms: Option<i64>,
) -> PyResult<VersionSpec> {
    match (version, timestamp_ms) {
        (Some(_), Some(_)) => Err(invalid_input("give a version or a timestamp, not both")),
        (Some(v), None) => Ok(VersionSpec::Version(v)),
        (None, Some(t)) => Ok(VersionSpec::Timestamp(t)),
        (None, None) => Ok(VersionSpec::Latest),
    }
}

/// Opens a table handle at a version (the latest by default).
#[pyfunction]
#[pyo3(signature = (uri, version=None, timestamp_ms=None, storage_options=None))]
pub(crate) fn open_table(
    py: Python<'_>,
    uri: &str,
    version: Option<u64>,
    timestamp_ms: Option<i64>,
    storage_options: Option<HashMap<String, String>>,
) -> PyResult<RawTable> {
    let table = open(uri, storage_options)?;
    let spec = version_spec(version, timestamp_ms)?;
    let t = table.clone();
    let snapshot = blocking::run(py, move |_| {
        match spec {
            // The table's cached snapshot: the operations that follow (which run on the
            // latest version) refresh it instead of loading the log again.
            VersionSpec::Latest => t.snapshot(),
            spec => t.snapshot_at(spec),
        }
        .py_err()
    })?;
    Ok(RawTable::new(table, snapshot))
}

/// Whether a Delta table is at `uri`.
#[pyfunction]
#[pyo3(signature = (uri, storage_options=None))]
pub(crate) fn is_table(
    py: Python<'_>,
    uri: &str,
    storage_options: Option<HashMap<String, String>>,
) -> PyResult<bool> {
    let table = match open(uri, storage_options) {
        Ok(t) => t,
        Err(_) => return Ok(false),
    };
    blocking::run(py, move |_| match table.snapshot() {
        Ok(_) => Ok(true),
        Err(e) if e.is_not_found() => Ok(false),
        Err(e) => Err(to_py(e)),
    })
}

/// One partition: `(column, value)` pairs in partition-column order, a null as `None`.
type Partition = Vec<(String, Option<String>)>;

/// A table handle with its loaded snapshot.
#[pyclass(module = "alluvium._native", frozen)]
pub(crate) struct RawTable {
    pub(crate) table: Table,
    snapshot: RwLock<Snapshot>,
}

/// What a commit carries besides its data: deltalake's `CommitProperties` as the Python
/// layer passes it (`app_transactions`, `custom_metadata`, `max_commit_retries`).
pub(crate) fn commit_options(commit: Option<&Bound<'_, PyDict>>) -> PyResult<WriteOptions> {
    let mut options = WriteOptions::default();
    let Some(commit) = commit else {
        return Ok(options);
    };
    if let Some(apps) = commit.get_item("app_transactions")?
        && !apps.is_none()
    {
        let apps: Vec<(String, i64)> = apps.extract()?;
        match apps.as_slice() {
            [] => {}
            [(id, version)] => options.app_transaction = Some(AppTransaction::new(id, *version)),
            _ => {
                return Err(invalid_input(
                    "one application transaction per commit: a write is skipped or committed as a whole, so it can carry only one (app_id, version)",
                ));
            }
        }
    }
    if let Some(custom) = commit.get_item("custom_metadata")?
        && !custom.is_none()
    {
        let serde_json::Value::Object(map) = to_json(&custom)? else {
            return Err(invalid_input("custom_metadata must be a dict"));
        };
        options.commit_info = map.into_iter().collect::<BTreeMap<_, _>>();
    }
    if let Some(retries) = commit.get_item("max_commit_retries")?
        && !retries.is_none()
    {
        let retries: u32 = retries.extract()?;
        options.retry = Some(RetryPolicy::default().with_max_attempts(retries.saturating_add(1)));
    }
    if let Some(codec) = commit.get_item("compression")?
        && !codec.is_none()
    {
        options.compression = Some(codec.extract()?);
    }
    Ok(options)
}

/// `operation` (a maintenance run) records no application transaction: one given is refused
/// rather than dropped, since a rerun relying on it would not be skipped.
fn refuse_app_transaction(options: &WriteOptions, operation: &str) -> PyResult<()> {
    match options.app_transaction {
        Some(_) => Err(invalid_input(format!(
            "{operation} does not record application transactions, so a repeat would not be skipped; pass commit_properties without app_transactions"
        ))),
        None => Ok(()),
    }
}

/// DELETE's, UPDATE's and MERGE's metrics as deltalake names them: Delta's metric names in
/// snake case (`numDeletedRows` is `num_deleted_rows`), plus MERGE's `num_output_rows`.
pub(crate) fn metrics_dict<'py>(
    py: Python<'py>,
    outcome: &DmlOutcome,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in &outcome.metrics {
        d.set_item(snake_case(k), v)?;
    }
    if outcome.metrics.contains_key("numTargetRowsInserted") {
        // Rows MERGE wrote: inserted, updated, and copied with them (Delta's definition).
        let written = [
            "numTargetRowsInserted",
            "numTargetRowsUpdated",
            "numTargetRowsCopied",
        ]
        .iter()
        .map(|k| outcome.metric(k).unwrap_or(0))
        .sum::<u64>();
        d.set_item("num_output_rows", written)?;
    }
    Ok(d)
}

fn snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// What [`visit_live_files`] shows of one live file.
struct LiveFile<'a> {
    path: &'a str,
    size: i64,
    partition_values: &'a alluvium::OptStringMap,
    has_deletion_vector: bool,
}

/// Calls `visit` with each live file of `s`, or with each file a scan with `filter` reads
/// (pruned by partition values and statistics).
fn visit_live_files(
    s: &Snapshot,
    filter: Option<Expr>,
    mut visit: impl FnMut(LiveFile<'_>) -> PyResult<()>,
) -> PyResult<()> {
    match filter {
        None => s.files().try_for_each(|a| {
            visit(LiveFile {
                path: a.path(),
                size: a.size(),
                partition_values: a.partition_values(),
                has_deletion_vector: a.deletion_vector().is_some(),
            })
        }),
        Some(f) => {
            let scan = ScanBuilder::new(s.clone())
                .with_columns(Vec::<String>::new())
                .with_filter(f)
                .build()
                .py_err()?;
            scan.files().iter().try_for_each(|a| {
                visit(LiveFile {
                    path: &a.path,
                    size: a.size,
                    partition_values: &a.partition_values,
                    has_deletion_vector: a.deletion_vector.is_some(),
                })
            })
        }
    }
}

/// The partition columns of `s`: `(logical name, the key the log's partition values use)`
/// (the physical name under column mapping).
fn partition_keys(s: &Snapshot) -> Vec<(String, String)> {
    let mode = s.column_mapping();
    s.partition_columns()
        .iter()
        .map(|c| {
            let physical = s
                .schema()
                .field(c)
                .map_or(c.as_str(), |f| mode.physical_name(f));
            (c.clone(), physical.to_string())
        })
        .collect()
}

/// One file's partition: its values looked up by the log's keys, named by the table's.
fn partition_of(keys: &[(String, String)], values: &alluvium::OptStringMap) -> Partition {
    keys.iter()
        .map(|(logical, physical)| {
            let value = values.get(physical).flatten().map(str::to_string);
            (logical.clone(), value)
        })
        .collect()
}

fn parse(text: Option<&str>) -> PyResult<Option<Expr>> {
    text.map(parse_expr).transpose().py_err()
}

/// Reads file tasks one at a time, in order (each on the thread that pulls the stream).
struct FileTasksReader {
    schema: arrow_schema::SchemaRef,
    tasks: std::collections::VecDeque<alluvium::FileTask>,
    ready: std::collections::VecDeque<arrow_array::RecordBatch>,
}

impl Iterator for FileTasksReader {
    type Item = Result<arrow_array::RecordBatch, arrow_schema::ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(b) = self.ready.pop_front() {
                return Some(Ok(b));
            }
            let task = self.tasks.pop_front()?;
            match alluvium::read_file(&task) {
                Ok(batches) => self.ready.extend(batches),
                Err(e) => {
                    self.tasks.clear();
                    return Some(Err(e.into()));
                }
            }
        }
    }
}

impl arrow_array::RecordBatchReader for FileTasksReader {
    fn schema(&self) -> arrow_schema::SchemaRef {
        self.schema.clone()
    }
}

impl RawTable {
    /// The scan of the loaded version with `columns` and `filter`, planned.
    fn planned(
        &self,
        py: Python<'_>,
        columns: Option<Vec<String>>,
        filter: Option<String>,
        view_types: bool,
    ) -> PyResult<alluvium::Scan> {
        let s = self.loaded()?;
        let filter = parse(filter.as_deref())?;
        blocking::run(py, move |_| {
            let mut b = ScanBuilder::new(s).with_view_types(view_types);
            if let Some(c) = columns {
                b = b.with_columns(c);
            }
            if let Some(f) = filter {
                b = b.with_filter(f);
            }
            b.build().py_err()
        })
    }

    pub(crate) fn new(table: Table, snapshot: Snapshot) -> RawTable {
        RawTable {
            table,
            snapshot: RwLock::new(snapshot),
        }
    }

    pub(crate) fn loaded(&self) -> PyResult<Snapshot> {
        self.snapshot
            .read()
            .map(|s| s.clone())
            .map_err(|_| invalid_input("the table handle's lock is poisoned"))
    }

    pub(crate) fn set_loaded(&self, snapshot: Snapshot) {
        if let Ok(mut s) = self.snapshot.write() {
            // A later version never goes back to an earlier one (threads committing
            // through one handle finish in any order).
            if snapshot.version() >= s.version() {
                *s = snapshot;
            }
        }
    }

    /// Loads the latest version into the handle (after a write).
    pub(crate) fn reload_latest(&self) -> alluvium::Result<()> {
        let latest = self.table.snapshot()?;
        self.set_loaded(latest);
        Ok(())
    }

    /// Moves the handle to what `outcome` committed, as deltalake's handle does after its
    /// own write: the snapshot the commit carried (no I/O: on an object store this saves a
    /// listing and a read of the commit per call), or else the latest version loaded (a
    /// commit that landed after others', or a skipped write).
    /// [`after_commit`](Self::after_commit), then the version committed: `None` when an
    /// application transaction already recorded made the call a no-op.
    fn committed_version(&self, outcome: &WriteOutcome) -> alluvium::Result<Option<u64>> {
        self.after_commit(outcome)?;
        Ok(outcome.report().map(|s| s.version))
    }

    pub(crate) fn after_commit(&self, outcome: &WriteOutcome) -> alluvium::Result<()> {
        match outcome.report().and_then(|s| s.snapshot.clone()) {
            Some(committed) => {
                self.set_loaded(committed);
                Ok(())
            }
            None => self.reload_latest(),
        }
    }
}

#[pymethods]
impl RawTable {
    /// The table's location as a URI.
    #[getter]
    fn uri(&self) -> String {
        self.table.uri()
    }

    /// The loaded version.
    fn version(&self) -> PyResult<u64> {
        Ok(self.loaded()?.version())
    }

    /// Loads `version`, or the version as of `timestamp_ms`, or the latest.
    #[pyo3(signature = (version=None, timestamp_ms=None))]
    fn load(
        &self,
        py: Python<'_>,
        version: Option<u64>,
        timestamp_ms: Option<i64>,
    ) -> PyResult<()> {
        let spec = version_spec(version, timestamp_ms)?;
        let table = self.table.clone();
        let snapshot = blocking::run(py, move |_| table.snapshot_at(spec).py_err())?;
        // Time travel may go back: replace whatever was loaded.
        if let Ok(mut s) = self.snapshot.write() {
            *s = snapshot;
        }
        Ok(())
    }

    /// Loads the latest version (only the new commits are read).
    fn update_incremental(&self, py: Python<'_>) -> PyResult<()> {
        blocking::run(py, |_| self.reload_latest().py_err())
    }

    /// The Delta schema of the loaded version as its JSON text.
    fn schema_json(&self) -> PyResult<String> {
        Ok(self.loaded()?.metadata().schema_string.clone())
    }

    /// The Arrow schema a scan of the loaded version returns.
    fn arrow_schema(&self) -> PyResult<ArrowSchema> {
        let s = self.loaded()?;
        let schema = alluvium::arrow_schema(s.schema()).py_err()?;
        Ok(ArrowSchema(std::sync::Arc::new(schema)))
    }

    /// The table's metadata: id, name, description, partition columns, creation time,
    /// configuration.
    fn metadata<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.loaded()?;
        let m = s.metadata();
        let d = PyDict::new(py);
        d.set_item("id", &m.id)?;
        d.set_item("name", &m.name)?;
        d.set_item("description", &m.description)?;
        d.set_item("partition_columns", &m.partition_columns)?;
        d.set_item("created_time", m.created_time)?;
        let configuration: BTreeMap<&String, &String> = m.configuration.iter().collect();
        d.set_item("configuration", configuration)?;
        Ok(d)
    }

    /// The protocol: reader and writer versions and features.
    fn protocol<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let s = self.loaded()?;
        from_serialize(py, &alluvium::ProtocolDescription::from(s.protocol()))
    }

    /// The live files' paths relative to the table (percent-decoded; absolute URIs for
    /// files outside it), sorted; with `filter`, only the files a scan with it reads
    /// (pruned by partition values and statistics).
    #[pyo3(signature = (filter=None))]
    fn files(&self, py: Python<'_>, filter: Option<String>) -> PyResult<Vec<String>> {
        let s = self.loaded()?;
        let filter = parse(filter.as_deref())?;
        blocking::run(py, move |_| {
            // Each path resolved where it lies (borrowed): one string per file, the one
            // handed to Python.
            let mut out = Vec::with_capacity(s.num_files());
            visit_live_files(&s, filter, |f| {
                out.push(s.file_location_ref(f.path).py_err()?.as_str().to_string());
                Ok(())
            })?;
            out.sort();
            Ok(out)
        })
    }

    /// The distinct partition values of the live files (of those a scan with `filter`
    /// reads, when given): one list of `(column, value)` pairs per partition, in the
    /// table's partition-column order, logical names (the log keys them by physical name
    /// under column mapping), a null value as `None`; sorted; none for an unpartitioned
    /// table.
    #[pyo3(signature = (filter=None))]
    fn partitions(&self, py: Python<'_>, filter: Option<String>) -> PyResult<Vec<Partition>> {
        let s = self.loaded()?;
        let filter = parse(filter.as_deref())?;
        blocking::run(py, move |_| {
            let keys = partition_keys(&s);
            if keys.is_empty() {
                return Ok(Vec::new());
            }
            let mut seen = std::collections::BTreeSet::new();
            visit_live_files(&s, filter, |file| {
                seen.insert(partition_of(&keys, file.partition_values));
                Ok(())
            })?;
            Ok(seen.into_iter().collect())
        })
    }

    /// The live files (those a scan with `filter` reads, when given) as a Parquet dataset
    /// sees them: `(location, size, partition, has a deletion vector)`, the location as
    /// `files` gives it, the partition as `partitions` does; sorted by location.
    #[pyo3(signature = (filter=None))]
    fn dataset_files(
        &self,
        py: Python<'_>,
        filter: Option<String>,
    ) -> PyResult<Vec<(String, i64, Partition, bool)>> {
        let s = self.loaded()?;
        let filter = parse(filter.as_deref())?;
        blocking::run(py, move |_| {
            let keys = partition_keys(&s);
            let mut out = Vec::new();
            visit_live_files(&s, filter, |file| {
                let location = s
                    .file_location_ref(file.path)
                    .py_err()?
                    .as_str()
                    .to_string();
                out.push((
                    location,
                    file.size,
                    partition_of(&keys, file.partition_values),
                    file.has_deletion_vector,
                ));
                Ok(())
            })?;
            out.sort_by(|a, b| a.0.cmp(&b.0));
            Ok(out)
        })
    }

    /// Each live file's add action as a dict (path, size, partition values, modification
    /// time, statistics, deletion vector).
    fn add_actions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let s = self.loaded()?;
        let mut adds: Vec<alluvium::FileRef<'_>> = s.files().collect();
        adds.sort_by(|a, b| a.path().cmp(b.path()));
        let list = PyList::empty(py);
        for a in adds {
            list.append(from_serialize(py, &a.to_add())?)?;
        }
        Ok(list)
    }

    /// The `limit` newest commits, newest first: each commit's `commitInfo` with its
    /// `version` and `timestamp` (the commit's time, in milliseconds).
    #[pyo3(signature = (limit=None))]
    fn history<'py>(&self, py: Python<'py>, limit: Option<usize>) -> PyResult<Bound<'py, PyList>> {
        let table = self.table.clone();
        let entries = blocking::run(py, move |_| table.history(limit).py_err())?;
        let list = PyList::empty(py);
        for e in entries {
            let mut info = e.commit_info.map(|c| c.0).unwrap_or_default();
            info.insert("timestamp".into(), e.timestamp_ms.into());
            info.insert("version".into(), e.version.into());
            list.append(from_json(py, &serde_json::Value::Object(info))?)?;
        }
        Ok(list)
    }

    /// Scans the loaded version: `columns` (all by default), rows matching `filter`
    /// (SQL-style text), as a stream.
    #[pyo3(signature = (columns=None, filter=None, view_types=false))]
    fn scan(
        &self,
        py: Python<'_>,
        columns: Option<Vec<String>>,
        filter: Option<String>,
        view_types: bool,
    ) -> PyResult<ArrowStream> {
        let scan = self.planned(py, columns, filter, view_types)?;
        Ok(ArrowStream::new(Box::new(scan.execute())))
    }

    /// The files a scan of the loaded version with `columns` and `filter` reads (after
    /// pruning), in the scan's order: `(path as in the log, size in bytes, live rows or
    /// None)`. An engine distributing the scan splits this list into tasks and reads each
    /// part with [`read_files`](Self::read_files) where it runs.
    #[pyo3(signature = (columns=None, filter=None))]
    fn plan_files(
        &self,
        py: Python<'_>,
        columns: Option<Vec<String>>,
        filter: Option<String>,
    ) -> PyResult<Vec<(String, i64, Option<i64>)>> {
        let scan = self.planned(py, columns, filter, false)?;
        Ok(scan
            .files()
            .iter()
            .map(|a| (a.path.clone(), a.size, a.live_rows()))
            .collect())
    }

    /// Reads the files `paths` (as [`plan_files`](Self::plan_files) names them) of the scan
    /// of the loaded version with `columns` and `filter`, one after the other, as a stream:
    /// together the parts of a plan give exactly the rows of the whole scan.
    #[pyo3(signature = (paths, columns=None, filter=None, view_types=false))]
    fn read_files(
        &self,
        py: Python<'_>,
        paths: Vec<String>,
        columns: Option<Vec<String>>,
        filter: Option<String>,
        view_types: bool,
    ) -> PyResult<ArrowStream> {
        let scan = self.planned(py, columns, filter, view_types)?;
        let mut tasks: HashMap<String, alluvium::FileTask> = scan
            .file_tasks()
            .into_iter()
            .map(|t| (t.add().path.clone(), t))
            .collect();
        let mut ordered = std::collections::VecDeque::with_capacity(paths.len());
        for p in &paths {
            let task = tasks.remove(p).ok_or_else(|| {
                invalid_input(format!(
                    "{p} is not a file this scan reads (at version {}), or is listed twice",
                    scan.snapshot().version()
                ))
            })?;
            ordered.push_back(task);
        }
        Ok(ArrowStream::new(Box::new(FileTasksReader {
            schema: scan.schema(),
            tasks: ordered,
            ready: std::collections::VecDeque::new(),
        })))
    }

    /// Rows of the loaded version matching `filter` (all rows without one); from
    /// statistics where they answer, else by reading.
    #[pyo3(signature = (filter=None))]
    fn count(&self, py: Python<'_>, filter: Option<String>) -> PyResult<u64> {
        let s = self.loaded()?;
        let filter = parse(filter.as_deref())?;
        blocking::run(py, move |interrupt| {
            let first = s.schema().fields.first().map(|f| f.name.clone());
            let mut b = ScanBuilder::new(s);
            if let Some(c) = first {
                b = b.with_columns([c]);
            }
            if let Some(f) = filter {
                b = b.with_filter(f);
            }
            let scan = b.build().py_err()?;
            let mut n = 0u64;
            for batch in scan.execute() {
                if interrupt.is_set() {
                    return Err(invalid_input("interrupted"));
                }
                n += batch.map_err(|e| to_py(e.into()))?.num_rows() as u64;
            }
            Ok(n)
        })
    }

    /// DELETE of the rows matching `predicate` (every row without one).
    #[pyo3(signature = (predicate=None, commit=None))]
    fn delete<'py>(
        &self,
        py: Python<'py>,
        predicate: Option<String>,
        commit: Option<Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let options = commit_options(commit.as_ref())?;
        let done = blocking::run(py, |_| {
            let done = match &predicate {
                Some(text) => self.table.delete_str(text, &options),
                None => self
                    .table
                    .delete(&Expr::lit(alluvium::Literal::Boolean(true)), &options),
            }
            .py_err()?;
            self.after_commit(&done.outcome).py_err()?;
            Ok(done)
        })?;
        metrics_dict(py, &done)
    }

    /// UPDATE: `set` is a list of `(column, sql_expression, value)` (one of the two given)
    /// for the rows matching `predicate` (every row without one).
    #[pyo3(signature = (set, predicate=None, commit=None))]
    fn update<'py>(
        &self,
        py: Python<'py>,
        set: Vec<(String, Option<String>, Bound<'py, PyAny>)>,
        predicate: Option<String>,
        commit: Option<Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let options = commit_options(commit.as_ref())?;
        let mut assignments: Vec<(String, Expr)> = Vec::with_capacity(set.len());
        for (column, sql, value) in &set {
            let expr = match sql {
                Some(text) => parse_expr(text).py_err()?,
                None => Expr::lit(literal_of(value)?),
            };
            assignments.push((column.clone(), expr));
        }
        if assignments.is_empty() {
            return Err(invalid_input("UPDATE needs at least one column to set"));
        }
        let pred = parse(predicate.as_deref())?;
        let done = blocking::run(py, |_| {
            let done = self
                .table
                .update(assignments, pred.as_ref(), &options)
                .py_err()?;
            self.after_commit(&done.outcome).py_err()?;
            Ok(done)
        })?;
        metrics_dict(py, &done)
    }

    /// OPTIMIZE: bin-packing compaction, or Z-order clustering by `zorder_by`; `commit`
    /// (as for writes) adds `commitInfo` fields to each commit, and its `compression`
    /// names the rewritten files' codec. An application transaction
    /// is refused: OPTIMIZE records none, so a repeat would not be skipped.
    #[pyo3(signature = (target_size=None, zorder_by=None, partition_filter=None, max_commit_bytes=None, commit=None))]
    fn optimize<'py>(
        &self,
        py: Python<'py>,
        target_size: Option<u64>,
        zorder_by: Option<Vec<String>>,
        partition_filter: Option<String>,
        max_commit_bytes: Option<u64>,
        commit: Option<Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let filter = parse(partition_filter.as_deref())?;
        let commit = commit_options(commit.as_ref())?;
        refuse_app_transaction(&commit, "OPTIMIZE")?;
        let summary = blocking::run(py, |interrupt| {
            let mut options = OptimizeOptions::default()
                .with_partition_filter(filter)
                .with_target_size(target_size)
                .with_zorder_by(zorder_by.unwrap_or_default())
                .with_interrupt(interrupt.flag())
                .with_commit_fields(CommitFields::new(
                    commit.user_metadata.clone(),
                    commit.commit_info.clone(),
                ))
                .with_compression(commit.compression.clone());
            if let Some(m) = max_commit_bytes {
                options.max_commit_bytes = m;
            }
            let summary = self.table.optimize(&options).py_err()?;
            self.reload_latest().py_err()?;
            Ok(summary)
        })?;
        let r = &summary.report;
        let d = PyDict::new(py);
        d.set_item("numFilesAdded", r.files_added)?;
        d.set_item("numFilesRemoved", r.files_removed)?;
        d.set_item("filesAdded", file_stats(r.files_added, r.bytes_added))?;
        d.set_item("filesRemoved", file_stats(r.files_removed, r.bytes_removed))?;
        d.set_item("partitionsOptimized", r.partitions_optimized)?;
        d.set_item("numBatches", r.versions.len())?;
        d.set_item("totalConsideredFiles", r.considered_files)?;
        d.set_item(
            "totalFilesSkipped",
            r.considered_files.saturating_sub(r.files_removed),
        )?;
        d.set_item("preserveInsertionOrder", true)?;
        d.set_item("versions", r.versions.clone())?;
        d.set_item("elapsedMs", r.elapsed_ms)?;
        Ok(d)
    }

    /// VACUUM: the files deleted (or, with `dry_run`, that would be), relative to the table;
    /// `commit` (as for writes) adds `commitInfo` fields to its `VACUUM START` and `VACUUM
    /// END` commits.
    #[pyo3(signature = (retention_hours=None, dry_run=true, enforce_retention_duration=true, full=false, commit=None))]
    fn vacuum(
        &self,
        py: Python<'_>,
        retention_hours: Option<f64>,
        dry_run: bool,
        enforce_retention_duration: bool,
        full: bool,
        commit: Option<Bound<'_, PyDict>>,
    ) -> PyResult<Vec<String>> {
        let commit = commit_options(commit.as_ref())?;
        refuse_app_transaction(&commit, "VACUUM")?;
        let options = VacuumOptions::default()
            .with_commit_fields(CommitFields::new(commit.user_metadata, commit.commit_info))
            .with_retention_hours(retention_hours)
            .with_force(!enforce_retention_duration)
            .with_dry_run(dry_run)
            .with_mode(if full {
                VacuumMode::Full
            } else {
                VacuumMode::Lite
            });
        blocking::run(py, |_| {
            let report = self.table.vacuum(&options).py_err()?;
            if !dry_run {
                self.reload_latest().py_err()?;
            }
            Ok(report
                .deleted
                .iter()
                .map(|p| p.as_str().to_string())
                .collect())
        })
    }

    /// The change data feed between two versions or timestamps (inclusive). With
    /// `allow_out_of_range`, an end version after the latest reads to the latest, and a
    /// start version after it gives an empty feed, instead of failing.
    #[pyo3(signature = (start_version=None, end_version=None, start_timestamp_ms=None, end_timestamp_ms=None, columns=None, predicate=None, view_types=false, allow_out_of_range=false))]
    #[allow(clippy::too_many_arguments)]
    fn load_cdf(
        &self,
        py: Python<'_>,
        start_version: Option<u64>,
        end_version: Option<u64>,
        start_timestamp_ms: Option<i64>,
        end_timestamp_ms: Option<i64>,
        columns: Option<Vec<String>>,
        predicate: Option<String>,
        view_types: bool,
        allow_out_of_range: bool,
    ) -> PyResult<ArrowStream> {
        let mut filter = parse(predicate.as_deref())?;
        let table = self.table.clone();
        let batches = blocking::run(py, move |_| {
            let (mut start_version, mut end_version) = (start_version, end_version);
            if allow_out_of_range && start_timestamp_ms.is_none() {
                let latest = table.snapshot().py_err()?.version();
                end_version = end_version.map(|e| e.min(latest));
                if start_version.is_some_and(|s| s > latest) {
                    // Nothing changed after the latest version: an empty feed of its
                    // columns.
                    start_version = Some(latest);
                    end_version = Some(latest);
                    filter = Some(Expr::lit(alluvium::Literal::Boolean(false)));
                }
            }
            let start = match (start_version, start_timestamp_ms) {
                (_, Some(t)) => VersionSpec::Timestamp(t),
                (Some(v), None) => VersionSpec::Version(v),
                (None, None) => VersionSpec::Version(0),
            };
            let end = match (end_version, end_timestamp_ms) {
                (_, Some(t)) => Some(VersionSpec::Timestamp(t)),
                (Some(v), None) => Some(VersionSpec::Version(v)),
                (None, None) => None,
            };
            let mut b = table.changes(start, end).view_types(view_types);
            if let Some(c) = columns {
                b = b.columns(c);
            }
            if let Some(f) = filter {
                b = b.filter(f);
            }
            b.execute().py_err()
        })?;
        Ok(ArrowStream::new(Box::new(batches)))
    }

    /// RESTORE to `version`, or to the version as of `timestamp_ms`: returns Delta's
    /// operation metrics (`numRestoredFiles`, `numRemovedFiles`, `restoredFilesSize`, ...)
    /// as numbers, with deltalake's `numRestoredFile` and `numRemovedFile` beside them
    /// (zeros when an application transaction already recorded made it a no-op).
    #[pyo3(signature = (version=None, timestamp_ms=None, commit=None))]
    fn restore<'py>(
        &self,
        py: Python<'py>,
        version: Option<u64>,
        timestamp_ms: Option<i64>,
        commit: Option<Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let spec = match version_spec(version, timestamp_ms)? {
            VersionSpec::Latest => {
                return Err(invalid_input("RESTORE needs a version or a timestamp"));
            }
            spec => spec,
        };
        let options = commit_options(commit.as_ref())?;
        let metrics = blocking::run(py, |_| {
            let done = self.table.restore_with(spec, &options).py_err()?;
            self.after_commit(&done).py_err()?;
            Ok(done
                .report()
                .map(|s| s.operation_metrics.clone())
                .unwrap_or_default())
        })?;
        let d = PyDict::new(py);
        let number = |k: &str| {
            metrics
                .get(k)
                .and_then(|v| v.parse::<i64>().ok())
                .unwrap_or(0)
        };
        d.set_item("numRemovedFile", number("numRemovedFiles"))?;
        d.set_item("numRestoredFile", number("numRestoredFiles"))?;
        for k in metrics.keys() {
            d.set_item(k, number(k))?;
        }
        Ok(d)
    }

    /// Writes a checkpoint of the latest version.
    fn create_checkpoint(&self, py: Python<'_>) -> PyResult<u64> {
        blocking::run(py, |_| {
            let out = self
                .table
                .checkpoint(&CheckpointConfig::default())
                .py_err()?;
            Ok(out.version)
        })
    }

    /// Deletes log files older than the log retention, below a checkpoint; returns how many.
    #[pyo3(signature = (dry_run=false))]
    fn cleanup_metadata(&self, py: Python<'_>, dry_run: bool) -> PyResult<usize> {
        blocking::run(py, |_| {
            let r = self.table.cleanup_log(dry_run).py_err()?;
            Ok(r.deleted.len())
        })
    }

    /// The latest version an application recorded for its idempotent writes.
    fn transaction_version(&self, app_id: &str) -> PyResult<Option<i64>> {
        let s = self.loaded()?;
        Ok(s.app_transaction_version(app_id, self.table.store().now_ms()))
    }

    /// Sets table properties (and unsets `unset`) in one commit; the version committed,
    /// `None` when an application transaction already recorded made it a no-op.
    #[pyo3(signature = (set, unset=Vec::new(), commit=None))]
    fn set_properties(
        &self,
        py: Python<'_>,
        set: BTreeMap<String, String>,
        unset: Vec<String>,
        commit: Option<Bound<'_, PyDict>>,
    ) -> PyResult<Option<u64>> {
        let options = commit_options(commit.as_ref())?;
        blocking::run(py, |_| {
            let names: Vec<&str> = unset.iter().map(String::as_str).collect();
            let done = self
                .table
                .set_properties_with(&set, &names, &options)
                .py_err()?;
            self.committed_version(&done).py_err()
        })
    }

    /// ADD COLUMNS: the fields of `struct_json` (a Delta struct type as JSON) appended to
    /// the schema in one commit; the version committed, `None` when an application
    /// transaction already recorded made it a no-op.
    #[pyo3(signature = (struct_json, commit=None))]
    fn add_columns(
        &self,
        py: Python<'_>,
        struct_json: String,
        commit: Option<Bound<'_, PyDict>>,
    ) -> PyResult<Option<u64>> {
        let options = commit_options(commit.as_ref())?;
        let fields = alluvium::StructType::from_json(&struct_json)
            .map_err(|e| invalid_input(format!("cannot add the columns: {e}")))?
            .fields;
        blocking::run(py, |_| {
            let done = self.table.add_columns(fields, &options).py_err()?;
            self.committed_version(&done).py_err()
        })
    }

    /// Sets the table's `name` or `description` (`what`) to `value`, in one commit; the
    /// version committed, `None` when an application transaction already recorded made it
    /// a no-op.
    #[pyo3(signature = (what, value, commit=None))]
    fn set_table_info(
        &self,
        py: Python<'_>,
        what: &str,
        value: String,
        commit: Option<Bound<'_, PyDict>>,
    ) -> PyResult<Option<u64>> {
        let options = commit_options(commit.as_ref())?;
        let name = match what {
            "name" => true,
            "description" => false,
            other => {
                return Err(invalid_input(format!(
                    "the table has a name and a description, not {other:?}"
                )));
            }
        };
        blocking::run(py, |_| {
            let done = if name {
                self.table.set_table_name(&value, &options)
            } else {
                self.table.set_table_description(&value, &options)
            }
            .py_err()?;
            self.committed_version(&done).py_err()
        })
    }

    /// Sets metadata entries of the top-level column `column`, in one commit; the version
    /// committed, `None` when an application transaction already recorded made it a no-op.
    #[pyo3(signature = (column, metadata, commit=None))]
    fn set_column_metadata(
        &self,
        py: Python<'_>,
        column: String,
        metadata: Vec<(String, String)>,
        commit: Option<Bound<'_, PyDict>>,
    ) -> PyResult<Option<u64>> {
        let options = commit_options(commit.as_ref())?;
        blocking::run(py, |_| {
            let done = self
                .table
                .set_column_metadata(&column, metadata, &options)
                .py_err()?;
            self.committed_version(&done).py_err()
        })
    }

    /// FSCK: the live files the store lost, removed in one commit unless `dry_run`;
    /// deltalake's result (`dry_run`, `files_removed`) plus the `version` committed (`None`
    /// when nothing was, or an application transaction already recorded skipped it).
    #[pyo3(signature = (dry_run=false, commit=None))]
    fn repair<'py>(
        &self,
        py: Python<'py>,
        dry_run: bool,
        commit: Option<Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let options = commit_options(commit.as_ref())?;
        let report = blocking::run(py, |_| {
            let report = self.table.repair(dry_run, &options).py_err()?;
            if let Some(done) = &report.outcome {
                self.after_commit(done).py_err()?;
            }
            Ok(report)
        })?;
        let d = PyDict::new(py);
        d.set_item("dry_run", report.dry_run)?;
        d.set_item("files_removed", &report.files_removed)?;
        let entries = PyList::empty(py);
        for e in &report.entries {
            let entry = PyDict::new(py);
            entry.set_item("data_file_path", &e.data_file_path)?;
            entry.set_item("data_file_missing", e.data_file_missing)?;
            entry.set_item("deletion_vector_path", &e.deletion_vector_path)?;
            entry.set_item("deletion_vector_file_missing", e.deletion_vector_missing)?;
            entries.append(entry)?;
        }
        d.set_item("entries", entries)?;
        d.set_item(
            "version",
            report
                .outcome
                .as_ref()
                .and_then(|o| o.report())
                .map(|s| s.version),
        )?;
        Ok(d)
    }

    /// Adds table features (Delta names) to the protocol as supported; the version
    /// committed, `None` when an application transaction already recorded made it a no-op.
    #[pyo3(signature = (names, allow_protocol_versions_increase, commit=None))]
    fn add_features(
        &self,
        py: Python<'_>,
        names: Vec<String>,
        allow_protocol_versions_increase: bool,
        commit: Option<Bound<'_, PyDict>>,
    ) -> PyResult<Option<u64>> {
        let options = commit_options(commit.as_ref())?;
        blocking::run(py, |_| {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let done = self
                .table
                .add_features_with(&names, allow_protocol_versions_increase, &options)
                .py_err()?;
            self.committed_version(&done).py_err()
        })
    }

    /// Adds the CHECK constraint `name`; the version committed, `None` when an application
    /// transaction already recorded made it a no-op.
    #[pyo3(signature = (name, expression, commit=None))]
    fn add_constraint(
        &self,
        py: Python<'_>,
        name: String,
        expression: String,
        commit: Option<Bound<'_, PyDict>>,
    ) -> PyResult<Option<u64>> {
        let options = commit_options(commit.as_ref())?;
        blocking::run(py, |_| {
            let done = self
                .table
                .add_constraint_with(&name, &expression, &options)
                .py_err()?;
            self.committed_version(&done).py_err()
        })
    }

    /// Drops the CHECK constraint `name`; `None` when it does not exist and
    /// `raise_if_not_exists` is false, or when an application transaction already recorded
    /// made it a no-op.
    #[pyo3(signature = (name, raise_if_not_exists=true, commit=None))]
    fn drop_constraint(
        &self,
        py: Python<'_>,
        name: String,
        raise_if_not_exists: bool,
        commit: Option<Bound<'_, PyDict>>,
    ) -> PyResult<Option<u64>> {
        let options = commit_options(commit.as_ref())?;
        blocking::run(py, |_| {
            let mut options = options;
            if !raise_if_not_exists {
                let latest = self.table.snapshot().py_err()?;
                // vocabulary: the facade does not export txlog to this package (no internal-api)
                let key = format!("delta.constraints.{name}");
                let exists = latest
                    .metadata()
                    .configuration
                    .keys()
                    .any(|k| k.eq_ignore_ascii_case(&key));
                if !exists {
                    return Ok(None);
                }
                // The drop is based on the version just checked: no second listing.
                options = options.with_read_snapshot(latest);
            }
            let done = self.table.drop_constraint_with(&name, &options).py_err()?;
            self.committed_version(&done).py_err()
        })
    }

    /// Checks the table (read-only): the report as a dict.
    #[pyo3(signature = (deep=false, version=None))]
    fn verify<'py>(
        &self,
        py: Python<'py>,
        deep: bool,
        version: Option<u64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let options = alluvium::VerifyOptions::default()
            .with_version(version)
            .with_deep(deep);
        let report = blocking::run(py, |_| self.table.verify(&options).py_err())?;
        let out = from_serialize(py, &report)?;
        out.set_item("clean", report.is_clean())?;
        Ok(out)
    }
}

/// OPTIMIZE's `filesAdded` / `filesRemoved` as deltalake reports them (JSON text): the
/// count, the total and the average size (per-file bounds are not tracked).
fn file_stats(files: usize, bytes: u64) -> String {
    let avg = if files == 0 {
        0.0
    } else {
        bytes as f64 / files as f64
    };
    serde_json::json!({
        "avg": avg,
        "totalFiles": files,
        "totalSize": bytes,
    })
    .to_string()
}
