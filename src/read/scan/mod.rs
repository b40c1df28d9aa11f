//! Scans: Arrow record batches of a snapshot.
//!
//! 1. Plan: bind the filter to the schema and keep only files whose partition values and
//!    statistics say they may hold a matching row (see `alluvium_expr`).
//! 2. Read each kept file (a bounded window of files at a time, in parallel; see
//!    `alluvium_datafile::read`): the needed columns by their physical name or field id,
//!    conformed to the logical types; deleted rows (deletion vectors) dropped; partition
//!    columns materialized from the log; the filter applied row by row.
//! 3. Output columns in schema order (or the order asked for), logical names.
//!
//! [`Scan::execute`] streams the batches; [`Scan::file_tasks`] and [`read_file`] let an
//! engine distribute the files of a scan itself; [`Scan::count`] counts its rows, from
//! statistics where they answer exactly.

mod count;
pub(crate) mod generated;

pub use count::RowCount;

use std::sync::Arc;

use crate::Snapshot;
use alluvium_datafile::{FileBatches, FileTask, ReadPlan, TableLayout};
use alluvium_expr::{Expr, Predicate, parse_expr};
use alluvium_txlog::actions::Add;
use alluvium_txlog::schema::ArrowForm;
use alluvium_txlog::table::TableConfiguration;
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::SchemaRef;

use crate::{Error, FileRef, Result};

/// Reads one file task of a scan ([`Scan::file_tasks`]): its non-empty batches in file
/// order, of the scan's schema. Memory holds that one file's rows.
///
/// # Errors
/// A missing or unreadable data file, a corrupt deletion vector, or a column that cannot
/// be read as its logical type; each names the file.
pub fn read_file(task: &FileTask) -> Result<Vec<RecordBatch>> {
    Ok(alluvium_datafile::read_file(task)?)
}

/// A stored variant column folded into Arrow's canonical unshredded variant, every value
/// validated: see `alluvium_datafile::conform_variant`.
///
/// # Errors
/// [`Error::InvalidArgument`](crate::Error::InvalidArgument) naming `column` if the column
/// is not a variant struct or a value is malformed.
pub fn conform_variant(arr: &ArrayRef, column: &str) -> Result<ArrayRef> {
    Ok(alluvium_datafile::conform_variant(arr, column)?)
}

/// `batch` with every variant value replaced by its JSON text, for text output formats:
/// see `alluvium_datafile::variants_as_json`.
///
/// # Errors
/// [`Error::InvalidArgument`](crate::Error::InvalidArgument) naming the column if a variant
/// value is malformed.
pub fn variants_as_json(batch: &RecordBatch) -> Result<RecordBatch> {
    Ok(alluvium_datafile::variants_as_json(batch)?)
}

/// The schema [`variants_as_json`] gives batches of `schema`.
///
/// # Errors
/// None in practice.
pub fn variants_as_json_schema(schema: &SchemaRef) -> Result<SchemaRef> {
    Ok(alluvium_datafile::variants_as_json_schema(schema)?)
}

/// What the data-file layer needs to know about `snapshot`'s table.
pub(crate) fn table_layout(snapshot: &Snapshot) -> TableLayout {
    TableLayout::new(
        snapshot.store().clone(),
        snapshot.root().clone(),
        snapshot.schema().clone(),
        &TableConfiguration::new(snapshot.protocol(), snapshot.metadata()),
    )
}

/// The layout rewrites of `snapshot`'s rows read and write with: on a table with row
/// tracking enabled, [`table_layout`] with the hidden materialised row-id and
/// row-commit-version columns after the table's columns (filled with every row's stable
/// values when read, written to the new files), so copied rows keep their ids and commit
/// versions (PROTOCOL.md "Row Tracking", SPEC.md §27).
pub(crate) fn rewrite_layout(snapshot: &Snapshot) -> TableLayout {
    let layout = table_layout(snapshot);
    if !alluvium_txlog::row_tracking::is_enabled(
        snapshot.protocol(),
        &snapshot.metadata().configuration,
    ) {
        return layout;
    }
    match layout.with_row_tracking() {
        Some(tracked) => tracked,
        None => layout,
    }
}

/// Every row of one file of `snapshot` (all columns, deletion vector applied), for
/// copy-on-write rewrites and verification.
pub(crate) fn read_whole_file(snapshot: &Snapshot, add: &Add) -> Result<Vec<RecordBatch>> {
    Ok(ReadPlan::all(table_layout(snapshot))?.read_file(add)?)
}

impl Snapshot {
    /// Every row of the data file `add` names, all columns, read as this snapshot's schema
    /// says (column mapping, partition values, logical types), its deletion vector applied.
    /// `add` is a file of this table: a live one ([`files`](Self::files),
    /// [`files_matching`](Self::files_matching)), or one an embedder found in a commit of
    /// the table's log whose file still exists (a change processor reading commit by
    /// commit). Memory holds that one file's rows.
    ///
    /// # Errors
    /// A missing or unreadable data file, a corrupt deletion vector, or a column that
    /// cannot be read as its type; each names the file.
    pub fn read_whole_file<'a>(&self, file: impl Into<FileRef<'a>>) -> Result<Vec<RecordBatch>> {
        read_whole_file(self, &file.into().to_add())
    }
}

/// Builds a [`Scan`].
#[derive(Debug, Clone)]
pub struct ScanBuilder {
    snapshot: Snapshot,
    columns: Option<Vec<String>>,
    filter: Option<Expr>,
    files_in_flight: Option<usize>,
    row_tracking: bool,
    form: ArrowForm,
}

/// The output column of [`ScanBuilder::with_row_tracking`] holding each row's stable row id.
pub const ROW_ID_COLUMN: &str = "row_id";
/// The output column of [`ScanBuilder::with_row_tracking`] holding each row's stable row
/// commit version.
pub const ROW_COMMIT_VERSION_COLUMN: &str = "row_commit_version";

impl ScanBuilder {
    /// A scan of every column and row of `snapshot`.
    pub fn new(snapshot: Snapshot) -> Self {
        ScanBuilder {
            snapshot,
            columns: None,
            filter: None,
            files_in_flight: None,
            row_tracking: false,
            form: ArrowForm::SCAN,
        }
    }

    /// With `true`, `string` and `binary` columns come out as `Utf8View` and `BinaryView`
    /// instead of `Utf8` and `Binary`: the same values, decoded from Parquet without
    /// copying the bytes of dictionary-encoded strings. For consumers that take views
    /// (DataFusion, Polars); off by default.
    #[must_use]
    pub fn with_view_types(mut self, on: bool) -> Self {
        self.form = ArrowForm::scan(on);
        self
    }

    /// Also output, after the other columns, each row's stable row id ([`ROW_ID_COLUMN`],
    /// Int64) and stable row commit version ([`ROW_COMMIT_VERSION_COLUMN`], Int64), as
    /// PROTOCOL.md "Reader Requirements for Row Tracking" defines them: the materialised
    /// value when the data file stores one, else `baseRowId` + the row's physical index
    /// and `defaultRowCommitVersion` (SPEC.md §27).
    #[must_use]
    pub fn with_row_tracking(mut self, on: bool) -> Self {
        self.row_tracking = on;
        self
    }

    /// Output only these top-level columns, in this order.
    #[must_use]
    pub fn with_columns(mut self, columns: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.columns = Some(columns.into_iter().map(Into::into).collect());
        self
    }

    /// Output only rows matching `filter`.
    #[must_use]
    pub fn with_filter(mut self, filter: Expr) -> Self {
        self.filter = Some(filter);
        self
    }

    /// Output only rows matching the predicate text (see `alluvium_expr`).
    ///
    /// # Errors
    /// A parse error.
    pub fn with_filter_str(self, filter: &str) -> Result<Self> {
        Ok(self.with_filter(parse_expr(filter)?))
    }

    /// Read at most `files` files at a time in [`Scan::execute`] (at least 1); the default
    /// is [`default_files_in_flight`]. Fewer files in flight hold less memory and read less
    /// ahead; more keep more threads busy on small files.
    #[must_use]
    pub fn with_files_in_flight(mut self, files: usize) -> Self {
        self.files_in_flight = Some(files.max(1));
        self
    }

    /// Plans the scan: resolves columns, binds the filter and skips files.
    ///
    /// # Errors
    /// Unknown columns, an invalid filter, or an unreadable schema.
    pub fn build(self) -> Result<Scan> {
        self.plan()
    }

    fn plan(self) -> Result<Scan> {
        let snapshot = self.snapshot;
        // Loading accepts it (the log is well formed); reading cannot return rows of no
        // columns, and Arrow's own refusal would name neither the table nor the cause.
        if snapshot.schema().fields.is_empty() {
            return Err(alluvium_txlog::LogError::InvalidSchema(format!(
                "the schema of version {} has no columns: there is nothing to read",
                snapshot.version()
            ))
            .into());
        }
        let predicate = match &self.filter {
            Some(f) => Some(snapshot.inner().bind(f)?),
            None => None,
        };
        let plan = Arc::new(if self.row_tracking {
            row_tracking_plan(&snapshot, self.columns.as_deref(), predicate, self.form)?
        } else {
            ReadPlan::new_as(
                table_layout(&snapshot),
                self.columns.as_deref(),
                predicate,
                self.form,
            )?
        });
        let total = snapshot.num_files();
        // Files are skipped with the filter plus what it implies for generated partition
        // columns; rows are filtered by the filter alone.
        let prune = plan
            .predicate()
            .map(|p| generated::pruning_predicate(p, &snapshot));
        let mut files: Vec<Add> = match &prune {
            Some(p) => snapshot
                .inner()
                .files_matching(p)
                .map(|m| m.file.to_add())
                .collect(),
            None => snapshot.files().map(|f| f.to_add()).collect(),
        };
        files.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(Scan {
            snapshot,
            plan,
            files,
            files_total: total,
            files_in_flight: self.files_in_flight.unwrap_or_else(default_files_in_flight),
        })
    }
}

/// The read plan of a scan that also outputs row ids and row commit versions.
fn row_tracking_plan(
    snapshot: &Snapshot,
    columns: Option<&[String]>,
    predicate: Option<Predicate>,
    form: ArrowForm,
) -> Result<ReadPlan> {
    let not_enabled = |reason: &str| Error::RowTrackingNotEnabled {
        version: snapshot.version(),
        reason: reason.to_string(),
    };
    if !alluvium_txlog::row_tracking::is_enabled(
        snapshot.protocol(),
        &snapshot.metadata().configuration,
    ) {
        return Err(not_enabled("a scan asked for row ids"));
    }
    let layout = table_layout(snapshot)
        .with_row_tracking()
        .ok_or_else(|| not_enabled("the materialised column names are not set"))?;
    let (row_id, commit_version) = layout
        .row_tracking_columns()
        .ok_or_else(|| not_enabled("the materialised column names are not set"))?;
    let schema = snapshot.schema();
    for name in [ROW_ID_COLUMN, ROW_COMMIT_VERSION_COLUMN] {
        if schema.index_of(name).is_some() {
            return Err(Error::InvalidArgument(format!(
                "the table has a column `{name}`, which a scan with row tracking outputs"
            )));
        }
    }
    let mut cols: Vec<String> = match columns {
        Some(c) => c.to_vec(),
        None => schema.fields.iter().map(|f| f.name.clone()).collect(),
    };
    cols.push(row_id);
    cols.push(commit_version);
    Ok(ReadPlan::new_as(layout, Some(&cols), predicate, form)?
        .rename_row_tracking(ROW_ID_COLUMN, ROW_COMMIT_VERSION_COLUMN))
}

/// Files a scan reads at a time by default: twice the threads of the current rayon pool,
/// and at least 16, so that small files keep every thread busy.
pub fn default_files_in_flight() -> usize {
    (2 * rayon::current_num_threads()).max(16)
}

/// A planned scan.
#[derive(Debug, Clone)]
pub struct Scan {
    snapshot: Snapshot,
    plan: Arc<ReadPlan>,
    files: Vec<Add>,
    files_total: usize,
    files_in_flight: usize,
}

impl Scan {
    /// The Arrow schema of the output.
    pub fn schema(&self) -> SchemaRef {
        self.plan.schema()
    }

    /// The snapshot scanned.
    pub fn snapshot(&self) -> &Snapshot {
        &self.snapshot
    }

    /// The files the scan will read (after skipping), sorted by path.
    pub fn files(&self) -> &[Add] {
        &self.files
    }

    /// Number of live files in the snapshot before skipping.
    pub fn files_total(&self) -> usize {
        self.files_total
    }

    /// The scan as one owned task per file (in [`files`](Self::files) order), to read with
    /// [`read_file`] on any thread (tasks are `Send + Clone`): the batches of all tasks,
    /// in order, are what [`execute`](Self::execute) yields.
    pub fn file_tasks(&self) -> Vec<FileTask> {
        self.files
            .iter()
            .map(|add| FileTask::new(self.plan.clone(), add.clone()))
            .collect()
    }

    /// Reads the planned files as a stream of non-empty batches, in file order.
    ///
    /// Files are read a window at a time (see [`ScanBuilder::with_files_in_flight`]), in
    /// parallel on the current rayon pool; the next window is read only once the batches
    /// of the previous one were taken. Memory holds the decoded rows of at most that many
    /// files, not the whole scan; dropping the iterator stops reading.
    ///
    /// Each item is a batch or the first failure (after which the stream ends): a missing
    /// or unreadable data file, a corrupt deletion vector, or a column that cannot be read
    /// as its logical type; each names the file.
    pub fn execute(&self) -> ScanBatches {
        ScanBatches {
            schema: self.plan.schema(),
            files: FileBatches::new(self.plan.clone(), self.files.clone(), self.files_in_flight),
        }
    }

    /// Reads every planned file and collects the batches, in file order: the whole result
    /// in memory. [`execute`](Self::execute) streams instead.
    ///
    /// # Errors
    /// As [`execute`](Self::execute).
    pub fn execute_to_vec(&self) -> Result<Vec<RecordBatch>> {
        Ok(self.execute().collect::<std::result::Result<_, _>>()?)
    }
}

/// The batches of a [`Scan`], streamed: see [`Scan::execute`]. An Arrow
/// [`RecordBatchReader`](arrow_array::RecordBatchReader): items are
/// `Result<RecordBatch, ArrowError>`, and a failure carries the typed
/// [`Error`](crate::Error), which `alluvium::Error::from(arrow_error)` (or `?` in a function
/// returning [`alluvium::Result`](crate::Result)) gives back.
#[derive(Debug)]
pub struct ScanBatches {
    schema: SchemaRef,
    files: FileBatches,
}

impl Iterator for ScanBatches {
    type Item = std::result::Result<RecordBatch, arrow_schema::ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.files
            .next()
            .map(|r| r.map_err(|e| Error::from(e).into()))
    }
}

impl arrow_array::RecordBatchReader for ScanBatches {
    /// The scan's output schema ([`Scan::schema`]), also when no batch follows.
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}
