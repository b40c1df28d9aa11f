//! Reading the change data feed: the row-level changes of a range of versions
//! ([`Table::changes`](crate::Table::changes)), PROTOCOL.md "Change Data Files" and "Add CDC
//! File", with Delta's reader rules (SPEC.md §24).
//!
//! Per version of the range (each needs its own commit file and `delta.enableChangeDataFeed`
//! true in the metadata in force there):
//! * when the commit has `cdc` actions, the rows of its change-data files, each with the
//!   `_change_type` the file stores (`insert`, `delete`, `update_preimage`,
//!   `update_postimage`);
//! * otherwise the `add`s with `dataChange=true` as `insert` (the rows live under the add's
//!   deletion vector), the `remove`s with `dataChange=true` as `delete` (the rows that were
//!   live under the remove's vector), and a path removed and re-added with another deletion
//!   vector as only the rows between the two vectors (newly deleted: `delete`, newly
//!   undeleted: `insert`); `dataChange=false` actions contribute nothing.
//!
//! Rows have the table's logical columns as of the END version of the range (column
//! mapping, type widening, deletion vectors and partition values applied as in scans; a
//! column added inside the range reads as null in older files), then `_change_type` (Utf8;
//! with [`ChangesBuilder::view_types`], strings and binaries are views),
//! `_commit_version` (Int64) and `_commit_timestamp` (Timestamp(µs, "UTC"): the in-commit
//! timestamp where the table has them, else the commit file's modification time made
//! monotonic, as Delta Spark). A schema change inside the range that is not additive (a
//! column dropped or renamed, other partition columns, a type changed other than by
//! widening) is refused with [`Error::ChangeDataIncompatibleSchema`].
//!
//! Reading streams: files are read a window at a time in parallel (as
//! [`Scan::execute`](crate::Scan::execute)), so memory holds the rows of at most that many
//! files.

mod plan;
mod read;

use std::sync::Arc;

use alluvium_datafile::{ReadPlan, TableLayout};
use alluvium_expr::{Expr, FileFilter, Predicate, bind, parse_expr};
use alluvium_mvcc::VersionSpec;
use alluvium_storage::StoreRef;
use alluvium_txlog::Version;
use alluvium_txlog::path::TableRoot;
use alluvium_txlog::schema::{
    ArrowForm, ArrowNullability, DataType, PrimitiveType, StructField, arrow_fields_as,
};
use alluvium_txlog::table::TableConfiguration;
use arrow_array::RecordBatch;
use arrow_schema::{Field, Schema, SchemaRef};

pub use read::ChangeBatches;

use crate::read::scan::default_files_in_flight;
use crate::{Error, Result, Table};

// The feed's column names are the log's change-data vocabulary (`alluvium_txlog::cdf`),
// re-exported at their old paths.
pub use alluvium_txlog::cdf::{
    CHANGE_FEED_COLUMNS, CHANGE_TYPE_COLUMN, COMMIT_TIMESTAMP_COLUMN, COMMIT_VERSION_COLUMN,
};

impl Table {
    /// The change data feed of versions `start` to `end` (inclusive; `None` = the latest
    /// version), each bound a version or a timestamp ([`VersionSpec::Timestamp`]: the start
    /// is the first commit at or after it, the end the last commit at or before it): a
    /// builder to choose columns and a filter, then stream the change rows. See
    /// [`crate::changes`] for the rules and the columns.
    ///
    /// ```no_run
    /// # fn main() -> alluvium::Result<()> {
    /// use alluvium::{Table, VersionSpec};
    /// let table = Table::open("path/to/table")?;
    /// for batch in table.changes(VersionSpec::Version(5), None).execute()? {
    ///     let batch = batch?;
    ///     println!("{} change rows", batch.num_rows());
    /// }
    /// # Ok(()) }
    /// ```
    pub fn changes(&self, start: VersionSpec, end: Option<VersionSpec>) -> ChangesBuilder {
        ChangesBuilder::new(self.clone(), start, end)
    }
}

/// Builds a change-data-feed read: see [`Table::changes`](crate::Table::changes).
#[derive(Debug, Clone)]
pub struct ChangesBuilder {
    table: Table,
    start: VersionSpec,
    end: Option<VersionSpec>,
    columns: Option<Vec<String>>,
    filter: Option<Expr>,
    files_in_flight: Option<usize>,
    form: ArrowForm,
}

impl ChangesBuilder {
    pub(crate) fn new(table: Table, start: VersionSpec, end: Option<VersionSpec>) -> Self {
        ChangesBuilder {
            table,
            start,
            end,
            columns: None,
            filter: None,
            files_in_flight: None,
            form: ArrowForm::SCAN,
        }
    }

    /// Output only these columns, in this order: table columns (logical names) and any of
    /// `_change_type`, `_commit_version`, `_commit_timestamp`.
    #[must_use]
    pub fn columns(mut self, columns: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.columns = Some(columns.into_iter().map(Into::into).collect());
        self
    }

    /// Output only change rows matching `filter`, which may name table columns and the
    /// feed's own columns. A filter on table columns only is pushed down: change files
    /// whose partition values or statistics rule it out are not read, and rows are
    /// filtered as files are decoded.
    #[must_use]
    pub fn filter(mut self, filter: Expr) -> Self {
        self.filter = Some(filter);
        self
    }

    /// [`filter`](Self::filter) from predicate text (see `alluvium_expr`).
    ///
    /// # Errors
    /// A parse error.
    pub fn filter_str(self, filter: &str) -> Result<Self> {
        Ok(self.filter(parse_expr(filter)?))
    }

    /// With `true`, `string` and `binary` columns (`_change_type` included) come out as
    /// `Utf8View` and `BinaryView` instead of `Utf8` and `Binary`: the same values, decoded
    /// from Parquet without copying the bytes of dictionary-encoded strings. For consumers
    /// that take views (DataFusion, Polars, and delta-rs' `load_cdf`, which returns them);
    /// off by default.
    #[must_use]
    pub fn view_types(mut self, on: bool) -> Self {
        self.form = ArrowForm::scan(on);
        self
    }

    /// Read at most `files` change files at a time (at least 1; the default is
    /// [`default_files_in_flight`]).
    #[must_use]
    pub fn files_in_flight(mut self, files: usize) -> Self {
        self.files_in_flight = Some(files.max(1));
        self
    }

    /// Plans the read: resolves the range, checks that every version of it recorded its
    /// changes, lists the change files, resolves columns and binds the filter.
    ///
    /// # Errors
    /// [`Error::ChangeDataStartAfterLatest`], [`Error::ChangeDataInvalidRange`],
    /// [`Error::ChangeDataTimestampOutOfRange`], [`Error::ChangeDataVersionUnavailable`],
    /// [`Error::ChangeDataNotRecorded`], [`Error::ChangeDataIncompatibleSchema`]; an
    /// unknown column or invalid filter; storage and log errors.
    pub fn build(self) -> Result<Changes> {
        // Planning reads the range's commits in parallel: on the table's pool, if it has one.
        self.table.clone().run(|| self.plan())
    }

    fn plan(self) -> Result<Changes> {
        let store: &StoreRef = self.table.store();
        let planned = plan::plan(store, self.start, self.end)?;
        let layout = TableLayout::new(
            store.clone(),
            TableRoot::new(store.root_uri()),
            planned.schema.clone(),
            &TableConfiguration::new(&planned.protocol, &planned.metadata),
        );
        let schema = &planned.schema;
        let is_meta = |c: &str| CHANGE_FEED_COLUMNS.contains(&c);

        // Output columns, each a table column (as the schema spells it) or a feed column.
        let output_names: Vec<String> = match &self.columns {
            None => schema
                .fields
                .iter()
                .map(|f| f.name.clone())
                .chain(CHANGE_FEED_COLUMNS.iter().map(|c| c.to_string()))
                .collect(),
            Some(cols) => {
                cols.iter()
                    .map(|c| {
                        if is_meta(c) {
                            Ok(c.clone())
                        } else {
                            schema.field(c).map(|f| f.name.clone()).ok_or_else(|| {
                                Error::InvalidArgument(format!("unknown column `{c}`"))
                            })
                        }
                    })
                    .collect::<Result<_>>()?
            }
        };

        // The filter, bound to the table's columns plus the feed's.
        let mut extended = schema.clone();
        extended.fields.extend(meta_fields());
        let predicate: Option<Predicate> = match &self.filter {
            Some(f) => Some(bind(
                f,
                &extended,
                &planned.metadata.partition_columns,
                planned.column_mapping,
            )?),
            None => None,
        };
        let table_only = predicate
            .as_ref()
            .is_some_and(|p| p.columns().iter().all(|c| !is_meta(&c.path[0])));
        let (pushed, post_filter) = match predicate {
            Some(p) if table_only => (Some(p), None),
            other => (None, other),
        };

        // Table columns read: the output's, and the post-filter's, in schema order.
        let needed: Vec<String> = schema
            .fields
            .iter()
            .filter(|f| {
                output_names.contains(&f.name)
                    || post_filter
                        .as_ref()
                        .is_some_and(|p| p.columns().iter().any(|c| c.path[0] == f.name))
            })
            .map(|f| f.name.clone())
            .collect();
        let data = ReadPlan::new_as(layout.clone(), Some(&needed), pushed.clone(), self.form)?;
        let mut cdc_layout = layout;
        cdc_layout.schema.fields.push(StructField::new(
            CHANGE_TYPE_COLUMN,
            DataType::Primitive(PrimitiveType::String),
            true,
        ));
        let mut cdc_columns = needed.clone();
        cdc_columns.push(CHANGE_TYPE_COLUMN.into());
        let cdc = ReadPlan::new_as(cdc_layout, Some(&cdc_columns), pushed.clone(), self.form)?;

        let mut fields: Vec<Field> = data
            .schema()
            .fields()
            .iter()
            .map(|f| f.as_ref().clone())
            .collect();
        fields.extend(meta_arrow_fields(self.form)?);
        let full_schema = Arc::new(Schema::new(fields));
        let output: Vec<usize> = output_names
            .iter()
            .map(|n| {
                full_schema
                    .index_of(n)
                    .map_err(|_| Error::InvalidArgument(format!("unknown column `{n}`")))
            })
            .collect::<Result<_>>()?;
        let output_schema = Arc::new(full_schema.project(&output)?);

        let tasks: Vec<plan::ChangeTask> = match &pushed {
            Some(p) => {
                let files = FileFilter::new(p);
                planned
                    .tasks
                    .into_iter()
                    .filter(|t| files.may_match((&t.file).into()))
                    .collect()
            }
            None => planned.tasks,
        };
        Ok(Changes {
            start: planned.start,
            end: planned.end,
            reader: Arc::new(read::Reader {
                data,
                cdc,
                full_schema,
                post_filter,
                output,
                output_schema,
            }),
            tasks,
            files_in_flight: self.files_in_flight.unwrap_or_else(default_files_in_flight),
        })
    }

    /// Plans and starts the read: [`build`](Self::build) then [`Changes::execute`].
    ///
    /// # Errors
    /// As [`build`](Self::build).
    pub fn execute(self) -> Result<ChangeBatches> {
        Ok(self.build()?.execute())
    }

    /// Plans and reads everything into memory: [`build`](Self::build) then
    /// [`Changes::execute_to_vec`].
    ///
    /// # Errors
    /// As [`build`](Self::build) and [`Changes::execute`].
    pub fn execute_to_vec(self) -> Result<Vec<RecordBatch>> {
        self.build()?.execute_to_vec()
    }
}

/// The feed's own columns as schema fields (for binding filters).
fn meta_fields() -> Vec<StructField> {
    vec![
        StructField::new(
            CHANGE_TYPE_COLUMN,
            DataType::Primitive(PrimitiveType::String),
            false,
        ),
        StructField::new(
            COMMIT_VERSION_COLUMN,
            DataType::Primitive(PrimitiveType::Long),
            false,
        ),
        StructField::new(
            COMMIT_TIMESTAMP_COLUMN,
            DataType::Primitive(PrimitiveType::Timestamp),
            false,
        ),
    ]
}

/// The feed's own columns as Arrow fields of `form`'s string layout: the Arrow form of
/// [`meta_fields`], non-nullable as declared there.
fn meta_arrow_fields(form: ArrowForm) -> Result<Vec<Field>> {
    let declared = ArrowForm {
        nullability: ArrowNullability::Declared,
        ..form
    };
    Ok(arrow_fields_as(&meta_fields(), declared)?
        .iter()
        .map(|f| f.as_ref().clone())
        .collect())
}

/// A planned change-data-feed read.
#[derive(Debug, Clone)]
pub struct Changes {
    start: Version,
    end: Version,
    reader: Arc<read::Reader>,
    tasks: Vec<plan::ChangeTask>,
    files_in_flight: usize,
}

impl Changes {
    /// The first version of the range.
    pub fn start_version(&self) -> Version {
        self.start
    }

    /// The last version of the range.
    pub fn end_version(&self) -> Version {
        self.end
    }

    /// The Arrow schema of the output.
    pub fn schema(&self) -> SchemaRef {
        self.reader.output_schema.clone()
    }

    /// The number of files (data, change-data) the read will open.
    pub fn num_files(&self) -> usize {
        self.tasks.len()
    }

    /// Streams the change rows, version by version: files are read a window at a time in
    /// parallel on the current rayon pool, the next window only once the previous one's
    /// batches were taken, so memory holds the rows of at most that many files. Each item
    /// is a non-empty batch or the first failure (a missing or unreadable file, a corrupt
    /// deletion vector, a column that cannot be read as its type; each names the file),
    /// after which the stream ends.
    pub fn execute(&self) -> ChangeBatches {
        ChangeBatches::new(
            self.reader.clone(),
            self.tasks.clone(),
            self.files_in_flight,
        )
    }

    /// Reads every change row into memory.
    ///
    /// # Errors
    /// As the items of [`execute`](Self::execute).
    pub fn execute_to_vec(&self) -> Result<Vec<RecordBatch>> {
        Ok(self.execute().collect::<std::result::Result<_, _>>()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_schema::{DataType as ArrowType, TimeUnit};

    #[test]
    fn the_feed_columns_are_typed_as_the_protocol_says() {
        let f = meta_arrow_fields(ArrowForm::SCAN).unwrap();
        assert_eq!(f[0].data_type(), &ArrowType::Utf8);
        let views = meta_arrow_fields(ArrowForm::SCAN_VIEWS).unwrap();
        assert_eq!(views[0].data_type(), &ArrowType::Utf8View);
        assert_eq!(views[1..], f[1..]);
        assert!(
            f.iter()
                .chain(&views)
                .all(|f| !f.is_nullable() && f.metadata().is_empty())
        );
        assert_eq!(f[1].data_type(), &ArrowType::Int64);
        assert_eq!(
            f[2].data_type(),
            &ArrowType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
        );
        assert_eq!(
            meta_fields()
                .iter()
                .map(|f| f.name.as_str())
                .collect::<Vec<_>>(),
            CHANGE_FEED_COLUMNS
        );
    }
}
