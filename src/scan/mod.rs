//! Scans: Arrow record batches of a snapshot.
//!
//! 1. Plan: bind the filter to the schema and keep only files whose partition values and
//!    statistics say they may hold a matching row (see `alluvium_txlog::expr`).
//! 2. Read each kept file (in parallel): the needed columns by their physical name or field
//!    id, conformed to the logical types; deleted rows (deletion vectors) dropped; partition
//!    columns materialized from the log; the filter applied row by row.
//! 3. Output columns in schema order (or the order asked for), logical names.

mod conform;
mod file;
mod variant;
mod widening;

use std::collections::BTreeSet;
use std::sync::Arc;

use alluvium_mvcc::Snapshot;
use alluvium_txlog::actions::Add;
use alluvium_txlog::expr::{Expr, FileSummary, Predicate, bind, may_match, parse_expr};
use alluvium_txlog::stats::FileStats;
use arrow_array::RecordBatch;
use arrow_schema::{Schema, SchemaRef};
use rayon::prelude::*;

use crate::{Error, Result};

pub(crate) use conform::{conform as conform_column, scan_fields, scan_type};
pub(crate) use file::read_whole_file as read_file;
pub use variant::{conform_variant, variants_as_json, variants_as_json_schema};

/// Builds a [`Scan`].
#[derive(Debug, Clone)]
pub struct ScanBuilder {
    snapshot: Snapshot,
    columns: Option<Vec<String>>,
    filter: Option<Expr>,
}

impl ScanBuilder {
    /// A scan of every column and row of `snapshot`.
    pub fn new(snapshot: Snapshot) -> Self {
        ScanBuilder {
            snapshot,
            columns: None,
            filter: None,
        }
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

    /// Output only rows matching the predicate text (see `alluvium_txlog::expr`).
    ///
    /// # Errors
    /// A parse error.
    pub fn with_filter_str(self, filter: &str) -> Result<Self> {
        Ok(self.with_filter(parse_expr(filter)?))
    }

    /// Plans the scan: resolves columns, binds the filter and skips files.
    ///
    /// # Errors
    /// Unknown columns, an invalid filter, or an unreadable schema.
    pub fn build(self) -> Result<Scan> {
        self.plan(None)
    }

    /// Plans a scan of exactly these files (no skipping).
    pub(crate) fn build_for_files(self, files: Vec<Add>) -> Result<Scan> {
        self.plan(Some(files))
    }

    fn plan(self, only: Option<Vec<Add>>) -> Result<Scan> {
        let snapshot = self.snapshot;
        let schema = snapshot.schema();
        let output: Vec<usize> = match &self.columns {
            None => (0..schema.fields.len()).collect(),
            Some(cols) => cols
                .iter()
                .map(|c| {
                    schema
                        .index_of(c)
                        .ok_or_else(|| Error::InvalidArgument(format!("unknown column `{c}`")))
                })
                .collect::<Result<_>>()?,
        };
        let predicate = match &self.filter {
            Some(f) => Some(bind(
                f,
                schema,
                snapshot.partition_columns(),
                snapshot.column_mapping(),
            )?),
            None => None,
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
        let read_schema = Arc::new(Schema::new(scan_fields(&read_fields)?));
        let output_schema = Arc::new(
            read_schema.project(
                &output
                    .iter()
                    .map(|o| read.iter().position(|r| r == o).unwrap_or(0))
                    .collect::<Vec<_>>(),
            )?,
        );
        let total = snapshot.num_files();
        let mut files: Vec<Add> = match (only, &predicate) {
            (Some(files), _) => files,
            (None, Some(p)) => snapshot
                .files()
                .filter(|a| file_may_match(p, a))
                .cloned()
                .collect(),
            (None, None) => snapshot.files().cloned().collect(),
        };
        files.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(Scan {
            snapshot,
            read,
            output,
            read_schema,
            output_schema,
            predicate,
            files,
            files_total: total,
        })
    }
}

fn file_may_match(p: &Predicate, add: &Add) -> bool {
    let stats = if p.only_partition_columns() {
        None
    } else {
        add.stats.as_deref().and_then(FileStats::parse)
    };
    may_match(
        p,
        &FileSummary {
            partition_values: &add.partition_values,
            stats: stats.as_ref(),
        },
    )
}

/// A planned scan.
#[derive(Debug, Clone)]
pub struct Scan {
    snapshot: Snapshot,
    /// Schema field indexes read from files (output plus filter columns), ascending.
    read: Vec<usize>,
    /// Schema field indexes of the output, in output order.
    output: Vec<usize>,
    read_schema: SchemaRef,
    output_schema: SchemaRef,
    predicate: Option<Predicate>,
    files: Vec<Add>,
    files_total: usize,
}

impl Scan {
    /// The Arrow schema of the output.
    pub fn schema(&self) -> SchemaRef {
        self.output_schema.clone()
    }

    /// The files the scan will read (after skipping), sorted by path.
    pub fn files(&self) -> &[Add] {
        &self.files
    }

    /// Number of live files in the snapshot before skipping.
    pub fn files_total(&self) -> usize {
        self.files_total
    }

    /// Reads every planned file, in parallel, and returns the batches in file order.
    ///
    /// # Errors
    /// The first failure: a missing or unreadable data file, a corrupt deletion vector, or
    /// a column that cannot be read as its logical type; each names the file.
    pub fn execute(&self) -> Result<Vec<RecordBatch>> {
        let per_file: Vec<Vec<RecordBatch>> = self
            .files
            .par_iter()
            .map(|add| file::read_file(self, add))
            .collect::<Result<_>>()?;
        Ok(per_file
            .into_iter()
            .flatten()
            .filter(|b| b.num_rows() > 0)
            .collect())
    }

    /// Reads the files in order, a window of `window` files in parallel at a time, handing
    /// each file's non-empty batches to `sink`: memory stays bounded by the window, not by
    /// the scan.
    ///
    /// # Errors
    /// As [`execute`](Self::execute), and whatever `sink` returns.
    pub(crate) fn for_each_file(
        &self,
        window: usize,
        mut sink: impl FnMut(Vec<RecordBatch>) -> Result<()>,
    ) -> Result<()> {
        for chunk in self.files.chunks(window.max(1)) {
            let read: Vec<Result<Vec<RecordBatch>>> = chunk
                .par_iter()
                .map(|add| file::read_file(self, add))
                .collect();
            for batches in read {
                let batches: Vec<RecordBatch> =
                    batches?.into_iter().filter(|b| b.num_rows() > 0).collect();
                sink(batches)?;
            }
        }
        Ok(())
    }
}
