//! The array of a column path in a record batch, shared by evaluation and the statistics
//! collector of `alluvium-datafile`.

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch, make_array};
use arrow_buffer::NullBuffer;

use crate::{ExprError, Result};

/// The array of a (possibly nested) column, with the nulls of its parent structs applied.
///
/// # Errors
/// [`ExprError::Invalid`] if the column is not in the batch.
pub fn leaf_array(batch: &RecordBatch, path: &[String]) -> Result<ArrayRef> {
    let missing = || ExprError::Invalid(format!("column `{}` is not in the batch", path.join(".")));
    let (first, rest) = path.split_first().ok_or_else(missing)?;
    let mut arr = batch.column_by_name(first).cloned().ok_or_else(missing)?;
    for name in rest {
        let s = arr.as_struct_opt().ok_or_else(missing)?;
        let child = s.column_by_name(name).cloned().ok_or_else(missing)?;
        let nulls = NullBuffer::union(s.nulls(), child.nulls());
        let data = child.to_data().into_builder().nulls(nulls).build()?;
        arr = make_array(data);
    }
    Ok(arr)
}
