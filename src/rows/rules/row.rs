//! Batch helpers the rules share: rendering an example row for error messages, and
//! replacing a column's values.

use arrow_array::{ArrayRef, RecordBatch};
use arrow_cast::display::{ArrayFormatter, FormatOptions};

use crate::{Error, Result};

/// Row `i` of `batch` as `{col: value, ...}` (NULL spelled `NULL`), for error messages.
pub(crate) fn render(batch: &RecordBatch, i: usize) -> String {
    let options = FormatOptions::default().with_null("NULL");
    let schema = batch.schema();
    let parts: Vec<String> = schema
        .fields()
        .iter()
        .zip(batch.columns())
        .map(|(f, c)| {
            let v = ArrayFormatter::try_new(c.as_ref(), &options)
                .map(|fmt| fmt.value(i).to_string())
                .unwrap_or_else(|_| "?".to_string());
            format!("{}: {v}", f.name())
        })
        .collect();
    format!("{{{}}}", parts.join(", "))
}

/// The position of top-level column `name` in `batch` (exact name first, then ignoring
/// case, as Delta column names are case-insensitive).
pub(crate) fn position(batch: &RecordBatch, name: &str) -> Option<usize> {
    let schema = batch.schema();
    let fields = schema.fields();
    fields.iter().position(|f| f.name() == name).or_else(|| {
        fields
            .iter()
            .position(|f| f.name().eq_ignore_ascii_case(name))
    })
}

/// `batch` with column `name` replaced by `values` (cast to the column's type).
///
/// # Errors
/// [`Error::SchemaMismatch`] if the batch lacks the column or a value does not fit it.
pub(crate) fn replace(batch: &RecordBatch, name: &str, values: ArrayRef) -> Result<RecordBatch> {
    let i = position(batch, name).ok_or_else(|| {
        Error::SchemaMismatch(format!("column `{name}` is missing from the rows to write"))
    })?;
    let schema = batch.schema();
    let target = schema.field(i).data_type();
    let values = if values.data_type() == target {
        values
    } else {
        let options = arrow_cast::CastOptions {
            safe: false,
            ..Default::default()
        };
        arrow_cast::cast_with_options(&values, target, &options).map_err(|e| {
            Error::SchemaMismatch(format!(
                "column `{name}` cannot hold the value computed for it: {e}"
            ))
        })?
    };
    let mut columns = batch.columns().to_vec();
    columns[i] = values;
    Ok(RecordBatch::try_new(schema, columns)?)
}
