//! NOT NULL: a non-nullable field holds no NULL in any written row; a non-nullable field
//! of a struct must be non-NULL wherever the struct itself is (as Delta Spark checks
//! nested NOT NULL fields). Element and value nullability of arrays and maps is not
//! checked here (Delta Spark does not check it either).

use alluvium_txlog::schema::{DataType, StructField, StructType};
use arrow::buffer::NullBuffer;
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch};

use super::row;
use crate::{Error, Result};

/// Checks every non-nullable field of `schema` in `batch`.
///
/// # Errors
/// [`Error::NotNullViolation`] naming the (dotted) column and the first violating row.
pub(crate) fn check(schema: &StructType, batch: &RecordBatch) -> Result<()> {
    for f in &schema.fields {
        if let Some(i) = row::position(batch, &f.name) {
            check_field(f, batch.column(i), None, &f.name, batch)?;
        }
    }
    Ok(())
}

fn check_field(
    f: &StructField,
    arr: &ArrayRef,
    parent: Option<&NullBuffer>,
    path: &str,
    batch: &RecordBatch,
) -> Result<()> {
    let present = |i: usize| parent.is_none_or(|p| p.is_valid(i));
    if !f.nullable && arr.logical_null_count() > 0 {
        let nulls = arr.logical_nulls();
        if let Some(r) =
            (0..arr.len()).find(|&i| nulls.as_ref().is_some_and(|n| n.is_null(i)) && present(i))
        {
            return Err(Error::NotNullViolation {
                column: path.to_string(),
                row: row::render(batch, r),
            });
        }
    }
    if let DataType::Struct(s) = &f.data_type
        && let Some(st) = arr.as_struct_opt()
    {
        let own = st.logical_nulls();
        let combined = NullBuffer::union(parent, own.as_ref());
        for child in &s.fields {
            let Some(c) = st
                .column_names()
                .iter()
                .position(|n| n.eq_ignore_ascii_case(&child.name))
            else {
                continue;
            };
            check_field(
                child,
                st.column(c),
                combined.as_ref(),
                &format!("{path}.{}", child.name),
                batch,
            )?;
        }
    }
    Ok(())
}
