//! Reading data files: a [`ReadPlan`] (columns, filter, schemas of one read of a table)
//! applied to one file at a time ([`ReadPlan::read_file`], or [`read_file`] of an owned
//! [`FileTask`]), or to a list of files as a stream of batches ([`FileBatches`]).
//!
//! Per file: the needed columns by their physical name or field id, conformed to the
//! logical types (`conform`, `widening`, `variant`); deleted rows (deletion vectors)
//! dropped; partition columns materialised from the `add` action; the filter applied row by
//! row; the output columns projected, with logical names.

mod conform;
mod file;
mod footer;
mod row_tracking;
mod stream;
#[cfg(test)]
mod tests;
mod variant;
mod widening;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use alluvium_expr::Predicate;
use alluvium_storage::StoreRef;
use alluvium_txlog::actions::Add;
use alluvium_txlog::column_mapping::ColumnMappingMode;
use alluvium_txlog::path::TableRoot;
use alluvium_txlog::schema::{ArrowForm, StructType};
use alluvium_txlog::table::TableConfiguration;
use arrow_array::{RecordBatch, UInt64Array};
use arrow_schema::{Schema, SchemaRef};
use roaring::RoaringTreemap;

pub use conform::{conform, conform_as, scan_fields, scan_fields_as};
pub use file::partition_value;
pub use footer::footer_row_count;
pub use stream::FileBatches;
pub use variant::{conform_variant, variants_as_json, variants_as_json_schema};

use crate::{DataFileError, Result};

/// What reading or writing a table's data files needs to know about the table. The layers
/// above take it from a snapshot, which this crate does not know.
#[derive(Debug, Clone)]
pub struct TableLayout {
    /// The table's store.
    pub store: StoreRef,
    /// The table root (to resolve absolute `add` paths).
    pub root: TableRoot,
    /// The logical schema.
    pub schema: StructType,
    /// The partition columns, as the metadata names them.
    pub partition_columns: Vec<String>,
    /// The column-mapping mode in force.
    pub column_mapping: ColumnMappingMode,
    /// The table properties (what writers need: codec, target size, statistics columns).
    pub configuration: HashMap<String, String>,
    /// Whether files written for the table also store its partition columns
    /// ([`TableConfiguration::materializes_partition_columns`]). Only writers act on it:
    /// a read takes partition values from the `add` action whether or not the file also
    /// stores them.
    pub materialize_partition_columns: bool,
}

impl TableLayout {
    /// The layout of the table governed by `table` (its protocol and metadata), whose
    /// logical schema is `schema` (the metadata's schema, parsed by the caller, which
    /// usually holds it already), stored in `store` under `root`: the one constructor the
    /// readers and writers of a table use, so that they agree on every field.
    ///
    /// The partition columns and properties are the metadata's, the column-mapping mode
    /// is [`TableConfiguration::column_mapping_mode`] and `materialize_partition_columns`
    /// is [`TableConfiguration::materializes_partition_columns`] (reads ignore it).
    pub fn new(
        store: StoreRef,
        root: TableRoot,
        schema: StructType,
        table: &TableConfiguration<'_>,
    ) -> Self {
        TableLayout {
            store,
            root,
            schema,
            partition_columns: table.metadata().partition_columns.clone(),
            column_mapping: table.column_mapping_mode(),
            configuration: table.metadata().configuration.clone(),
            materialize_partition_columns: table.materializes_partition_columns(),
        }
    }
}

/// One planned read of a table's data files: which columns are read and output, the filter
/// applied to rows, and the Arrow schemas. Plain data: cheap to share (`Arc`) across threads.
#[derive(Debug, Clone)]
pub struct ReadPlan {
    pub(crate) layout: TableLayout,
    /// Schema field indexes read from files (output plus filter columns), ascending.
    pub(crate) read: Vec<usize>,
    /// Schema field indexes of the output, in output order.
    pub(crate) output: Vec<usize>,
    pub(crate) read_schema: SchemaRef,
    pub(crate) output_schema: SchemaRef,
    pub(crate) predicate: Option<Predicate>,
    /// With a filter whose columns are not the whole output: the plan of the filter's
    /// columns (with the filter) and the plan of the other output columns (no filter),
    /// read one after the other so the latter are decoded for the matching rows only.
    pub(crate) split: Option<Box<(ReadPlan, ReadPlan)>>,
    /// The output columns holding row ids and row commit versions, filled with their
    /// stable values (see `row_tracking`).
    pub(crate) tracked: Option<row_tracking::TrackedOutputs>,
    /// The Arrow form of the output: [`ArrowForm::SCAN`], or [`ArrowForm::SCAN_VIEWS`]
    /// (strings and binaries decoded straight to views).
    pub(crate) form: ArrowForm,
}

impl ReadPlan {
    /// A read of `columns` (top-level, in this order; all columns in schema order when
    /// `None`) of the rows matching `predicate` (bound to `layout.schema`).
    ///
    /// # Errors
    /// [`DataFileError::InvalidArgument`] for a column not in the schema; a schema that has
    /// no Arrow form.
    pub fn new(
        layout: TableLayout,
        columns: Option<&[String]>,
        predicate: Option<Predicate>,
    ) -> Result<Self> {
        Self::new_as(layout, columns, predicate, ArrowForm::SCAN)
    }

    /// [`new`](Self::new) producing batches of the scan form `form`: with
    /// [`ArrowForm::SCAN_VIEWS`], `string` and `binary` columns (nested ones too) come out
    /// as `Utf8View` and `BinaryView`. Top-level ones are decoded from Parquet straight to
    /// views, which for dictionary-encoded columns copies no string bytes; everything else
    /// (values, filter, deletion vectors, partition values) is as with [`ArrowForm::SCAN`].
    ///
    /// # Errors
    /// As [`new`](Self::new); [`DataFileError::InvalidArgument`] for a form that is not a
    /// scan form (physical naming or declared nullability).
    pub fn new_as(
        layout: TableLayout,
        columns: Option<&[String]>,
        predicate: Option<Predicate>,
        form: ArrowForm,
    ) -> Result<Self> {
        if form != ArrowForm::SCAN && form != ArrowForm::SCAN_VIEWS {
            return Err(DataFileError::InvalidArgument(format!(
                "a read produces a scan form, not {form:?}"
            )));
        }
        let schema = &layout.schema;
        let output: Vec<usize> = match columns {
            None => (0..schema.fields.len()).collect(),
            Some(cols) => cols
                .iter()
                .map(|c| {
                    schema.index_of(c).ok_or_else(|| {
                        DataFileError::InvalidArgument(format!("unknown column `{c}`"))
                    })
                })
                .collect::<Result<_>>()?,
        };
        let mut read: BTreeSet<usize> = output.iter().copied().collect();
        if let Some(p) = &predicate {
            for c in p.columns() {
                if let Some(i) = schema.index_of(&c.path[0]) {
                    read.insert(i);
                }
            }
        }
        let read: Vec<usize> = read.into_iter().collect();
        let read_fields: Vec<_> = read.iter().map(|i| schema.fields[*i].clone()).collect();
        let read_schema = Arc::new(Schema::new(scan_fields_as(&read_fields, form)?));
        let output_schema = Arc::new(
            read_schema.project(
                &output
                    .iter()
                    .map(|o| read.iter().position(|r| r == o).unwrap_or(0))
                    .collect::<Vec<_>>(),
            )?,
        );
        let filter_columns: Vec<usize> = read
            .iter()
            .copied()
            .filter(|i| !output.contains(i) || predicate_reads(predicate.as_ref(), schema, *i))
            .collect();
        let rest: Vec<usize> = output
            .iter()
            .copied()
            .filter(|i| !filter_columns.contains(i))
            .collect();
        let split = if predicate.is_some() && !filter_columns.is_empty() && !rest.is_empty() {
            let names = |ix: &[usize]| -> Vec<String> {
                ix.iter().map(|i| schema.fields[*i].name.clone()).collect()
            };
            let find = ReadPlan::new_as(
                layout.clone(),
                Some(&names(&filter_columns)),
                predicate.clone(),
                form,
            )?;
            let rest = ReadPlan::new_as(layout.clone(), Some(&names(&rest)), None, form)?;
            Some(Box::new((find, rest)))
        } else {
            None
        };
        let tracked = row_tracking::TrackedOutputs::find(&layout, &output);
        Ok(ReadPlan {
            layout,
            read,
            output,
            read_schema,
            output_schema,
            predicate,
            split,
            tracked,
            form,
        })
    }

    /// This plan with its row-tracking output columns (the hidden materialised columns of a
    /// layout [`with_row_tracking`](TableLayout::with_row_tracking)) named `row_id` and
    /// `commit_version` in the output instead.
    #[must_use]
    pub fn rename_row_tracking(mut self, row_id: &str, commit_version: &str) -> Self {
        let Some(t) = self.tracked else {
            return self;
        };
        let fields: Vec<arrow_schema::Field> = self
            .output_schema
            .fields()
            .iter()
            .enumerate()
            .map(|(k, f)| {
                let f = f.as_ref().clone();
                if Some(k) == t.row_id {
                    f.with_name(row_id)
                } else if Some(k) == t.commit_version {
                    f.with_name(commit_version)
                } else {
                    f
                }
            })
            .collect();
        self.output_schema = Arc::new(Schema::new(fields));
        self
    }

    /// A read of every column and row (deletion vectors applied): what rewrites need.
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn all(layout: TableLayout) -> Result<Self> {
        Self::new(layout, None, None)
    }

    /// The table this plan reads.
    pub fn layout(&self) -> &TableLayout {
        &self.layout
    }

    /// The Arrow schema of the batches this plan produces.
    pub fn schema(&self) -> SchemaRef {
        self.output_schema.clone()
    }

    /// The Arrow form of the batches: [`ArrowForm::SCAN`] or [`ArrowForm::SCAN_VIEWS`].
    pub fn form(&self) -> ArrowForm {
        self.form
    }

    /// The filter applied to rows, if any.
    pub fn predicate(&self) -> Option<&Predicate> {
        self.predicate.as_ref()
    }

    /// Reads one data file of the table: its non-empty batches, in file order.
    ///
    /// # Errors
    /// A missing or unreadable data file, a corrupt deletion vector, a bad partition
    /// value, or a column that cannot be read as its logical type; each names the file.
    pub fn read_file(&self, add: &Add) -> Result<Vec<RecordBatch>> {
        file::read_file(self, add)
    }

    /// The number of rows physically stored in the data file (its Parquet footer's count,
    /// deletion vector not applied): what `stats.numRecords` must say for a file that
    /// gets a deletion vector.
    ///
    /// # Errors
    /// A missing or unreadable data file, naming it.
    pub fn physical_rows(&self, add: &Add) -> Result<u64> {
        file::physical_rows(self, add)
    }

    /// Reads exactly the rows of the data file whose 0-based PHYSICAL index is in `rows`
    /// (the `add`'s own deletion vector is ignored), filtered and projected as
    /// [`read_file`](Self::read_file): what a change-data-feed reader needs for the rows
    /// between two deletion vectors of one file.
    ///
    /// # Errors
    /// As [`read_file`](Self::read_file); a selected row past the end of the file.
    pub fn read_file_rows(&self, add: &Add, rows: &RoaringTreemap) -> Result<Vec<RecordBatch>> {
        file::read_file_rows(self, add, rows)
    }

    /// Reads one data file like [`read_file`](Self::read_file) and pairs each batch with
    /// the 0-based PHYSICAL row index, in the Parquet file, of each of its rows: rows the
    /// file's current deletion vector deletes and rows the plan's filter rejects are absent
    /// from both. What DML needs to turn matched rows into deletion-vector positions.
    ///
    /// # Errors
    /// As [`read_file`](Self::read_file).
    pub fn read_file_with_positions(&self, add: &Add) -> Result<Vec<(RecordBatch, UInt64Array)>> {
        file::read_file_with_positions(self, add)
    }

    /// Reads only the physical rows `rows` of one data file (0-based indexes in the Parquet
    /// file, as [`read_file_with_positions`](Self::read_file_with_positions) returns them),
    /// in file order, each batch paired with its rows' physical indexes: the plan's columns
    /// conformed to their logical types, partition values filled in, rows the file's
    /// deletion vector deletes and rows the plan's filter rejects left out. Only the asked
    /// rows are decoded (a Parquet row selection), so DML can find matches on a few columns
    /// first and then read the matched rows whole.
    ///
    /// # Errors
    /// As [`read_file`](Self::read_file); [`DataFileError::InvalidArgument`] for a row at
    /// or past the file's row count.
    pub fn read_rows_at(
        &self,
        add: &Add,
        rows: &RoaringTreemap,
    ) -> Result<Vec<(RecordBatch, UInt64Array)>> {
        file::read_rows_at(self, add, rows)
    }
}

/// Whether `predicate` reads the schema field `i`.
fn predicate_reads(predicate: Option<&Predicate>, schema: &StructType, i: usize) -> bool {
    predicate.is_some_and(|p| {
        p.columns()
            .iter()
            .any(|c| schema.index_of(&c.path[0]) == Some(i))
    })
}

/// One file of a planned read, owned: `Send + Clone`, so an engine can hand the files of a
/// scan to its own workers and read each with [`read_file`].
#[derive(Debug, Clone)]
pub struct FileTask {
    plan: Arc<ReadPlan>,
    add: Add,
}

impl FileTask {
    /// The task of reading `add` with `plan`.
    pub fn new(plan: Arc<ReadPlan>, add: Add) -> Self {
        FileTask { plan, add }
    }

    /// The file.
    pub fn add(&self) -> &Add {
        &self.add
    }

    /// The plan it is read with.
    pub fn plan(&self) -> &Arc<ReadPlan> {
        &self.plan
    }
}

/// Reads one file task: its non-empty batches in file order, of the plan's schema. Memory
/// holds that one file's rows.
///
/// # Errors
/// As [`ReadPlan::read_file`].
pub fn read_file(task: &FileTask) -> Result<Vec<RecordBatch>> {
    task.plan.read_file(&task.add)
}
