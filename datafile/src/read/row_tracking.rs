//! Row ids and row commit versions of the rows read (PROTOCOL.md "Reader Requirements for
//! Row Tracking").
//!
//! A layout [`with_row_tracking`](super::TableLayout::with_row_tracking) has two more
//! schema fields, named as the table's hidden materialised columns
//! (`delta.rowTracking.materializedRowIdColumnName`, `...RowCommitVersionColumnName`),
//! nullable longs, after the table's columns. A plan reading them gets, for every row, the
//! STABLE value: the materialised value when the file stores one, else the default
//! generated one (`baseRowId` + the row's physical index in the file, and
//! `defaultRowCommitVersion`). Rewrites written with the same layout therefore store every
//! copied row's stable id and version in the materialised columns, which is how they are
//! preserved.

use alluvium_txlog::actions::Add;
use alluvium_txlog::row_tracking::materialized_columns;
use alluvium_txlog::schema::{DataType, PrimitiveType, StructField};
use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{ArrayRef, Int64Array, RecordBatch, RecordBatchOptions, UInt64Array};
use std::sync::Arc;

use super::{ReadPlan, TableLayout};
use crate::{DataFileError, Result};

/// Which output columns of a plan are the materialised row-tracking columns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct TrackedOutputs {
    /// Output index of the row-id column.
    pub row_id: Option<usize>,
    /// Output index of the row-commit-version column.
    pub commit_version: Option<usize>,
}

impl TrackedOutputs {
    /// The tracked outputs among `output` (schema indexes) of `layout`: fields named as the
    /// configuration's materialised columns.
    pub(crate) fn find(layout: &TableLayout, output: &[usize]) -> Option<TrackedOutputs> {
        let cols = materialized_columns(&layout.configuration)?;
        let mut t = TrackedOutputs::default();
        for (k, i) in output.iter().enumerate() {
            let name = &layout.schema.fields[*i].name;
            if *name == cols.row_id {
                t.row_id = Some(k);
            } else if *name == cols.row_commit_version {
                t.commit_version = Some(k);
            }
        }
        (t != TrackedOutputs::default()).then_some(t)
    }
}

impl TableLayout {
    /// This layout with the table's two hidden materialised row-tracking columns appended
    /// to the schema (see the module docs), or `None` when the configuration does not name
    /// them (row tracking never enabled).
    pub fn with_row_tracking(&self) -> Option<TableLayout> {
        let cols = materialized_columns(&self.configuration)?;
        let mut layout = self.clone();
        for name in [cols.row_id, cols.row_commit_version] {
            if layout.schema.index_of(&name).is_none() {
                layout.schema.fields.push(StructField {
                    name,
                    data_type: DataType::Primitive(PrimitiveType::Long),
                    nullable: true,
                    metadata: Default::default(),
                });
            }
        }
        Some(layout)
    }

    /// The names of the two hidden materialised columns (row id, row commit version) when
    /// the configuration names them.
    pub fn row_tracking_columns(&self) -> Option<(String, String)> {
        materialized_columns(&self.configuration).map(|c| (c.row_id, c.row_commit_version))
    }
}

/// Replaces the tracked columns of `batch` (read from `add`, `positions` its rows'
/// physical indexes) by the stable values, and gives it the plan's output schema.
pub(crate) fn fill(
    plan: &ReadPlan,
    tracked: TrackedOutputs,
    add: &Add,
    batch: RecordBatch,
    positions: &UInt64Array,
) -> Result<RecordBatch> {
    if positions.len() != batch.num_rows() {
        return Err(DataFileError::InvalidArgument(format!(
            "{}: {} row positions for {} rows",
            add.path,
            positions.len(),
            batch.num_rows()
        )));
    }
    let mut columns: Vec<ArrayRef> = batch.columns().to_vec();
    if let Some(k) = tracked.row_id {
        let stored = columns[k].as_primitive::<Int64Type>();
        let ids: Int64Array = stored
            .iter()
            .zip(positions.values().iter())
            .map(|(v, p)| {
                v.or_else(|| {
                    add.base_row_id
                        .and_then(|b| i64::try_from(*p).ok().and_then(|p| b.checked_add(p)))
                })
            })
            .collect();
        columns[k] = Arc::new(ids);
    }
    if let Some(k) = tracked.commit_version {
        let stored = columns[k].as_primitive::<Int64Type>();
        let versions: Int64Array = stored
            .iter()
            .map(|v| v.or(add.default_row_commit_version))
            .collect();
        columns[k] = Arc::new(versions);
    }
    Ok(RecordBatch::try_new_with_options(
        plan.output_schema.clone(),
        columns,
        &RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
    )?)
}
