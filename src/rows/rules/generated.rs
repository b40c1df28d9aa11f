//! Generated columns (PROTOCOL.md "Generated Columns"): a column with
//! `delta.generationExpression` is computed from the row when the written rows do not
//! provide it, and checked when they do: every written row must satisfy
//! `(value <=> expression) IS TRUE` (NULL-safe equality), else the write fails naming the
//! column and the row. An expression alluvium cannot parse or type keeps the table
//! refused for writes.

use alluvium_expr::evaluate_value;
use alluvium_expr::{BoundExpr, bind_assignment, parse_expr};
use alluvium_txlog::column_mapping::ColumnMappingMode;
use alluvium_txlog::schema::{ColumnMetadataKey, DataType, StructField, StructType};
use alluvium_txlog::table::TableFeature;
use arrow::compute::kernels::cmp::not_distinct;
use arrow_array::{Array, ArrayRef, RecordBatch};

use super::{refusal, row};
use crate::{Error, Result};

/// The field-metadata key holding a generated column's expression.
pub(crate) const GENERATION_EXPRESSION: &str = ColumnMetadataKey::GenerationExpression.as_str();

/// One generated column.
#[derive(Debug)]
pub(crate) struct GeneratedColumn {
    /// The column (top level).
    pub(crate) name: String,
    /// The expression as the table stores it.
    pub(crate) text: String,
    value: BoundExpr,
}

/// The table's generated columns.
///
/// # Errors
/// The refusal naming the column whose expression alluvium cannot evaluate, that reads
/// another generated column, or that sits in a nested field.
pub(crate) fn collect(
    schema: &StructType,
    partitions: &[String],
    mode: ColumnMappingMode,
) -> Result<Vec<GeneratedColumn>> {
    let mut out = Vec::new();
    for f in &schema.fields {
        if let DataType::Struct(s) = &f.data_type
            && let Some(n) = nested(&s.fields)
        {
            return Err(refusal(
                TableFeature::GeneratedColumns.as_str(),
                format!(
                    "field `{}.{n}` is generated; nested generated fields are not supported",
                    f.name
                ),
            ));
        }
        let Some(text) = f.metadata.get(GENERATION_EXPRESSION) else {
            continue;
        };
        let text = text.as_str().unwrap_or_default().to_string();
        let why = |e: String| {
            refusal(
                TableFeature::GeneratedColumns.as_str(),
                format!(
                    "column `{}`: generation expression `{text}` cannot be evaluated by alluvium: {e}",
                    f.name
                ),
            )
        };
        let expr = parse_expr(&text).map_err(|e| why(e.to_string()))?;
        if !expr.is_deterministic() {
            // Delta requires generation expressions to be deterministic: a value computed
            // now could never be checked again.
            return Err(why(
                "it reads the current date or time, and a generation expression must be deterministic".into(),
            ));
        }
        let value = bind_assignment(&expr, schema, partitions, mode, &f.data_type)
            .map_err(|e| why(e.to_string()))?;
        for c in value.columns() {
            let read = c.path.first().map(String::as_str).unwrap_or_default();
            if let Some(g) = schema.field(read)
                && g.metadata.contains_key(GENERATION_EXPRESSION)
            {
                return Err(why(format!("it reads generated column `{}`", g.name)));
            }
        }
        out.push(GeneratedColumn {
            name: f.name.clone(),
            text,
            value,
        });
    }
    Ok(out)
}

fn nested(fields: &[StructField]) -> Option<String> {
    for f in fields {
        if f.metadata.contains_key(GENERATION_EXPRESSION) {
            return Some(f.name.clone());
        }
        if let DataType::Struct(s) = &f.data_type
            && let Some(n) = nested(&s.fields)
        {
            return Some(format!("{}.{n}", f.name));
        }
    }
    None
}

/// The first row where `a` and `b` differ, NULL-safely (two NULLs are equal).
fn first_difference(a: &ArrayRef, b: &ArrayRef) -> Option<usize> {
    match not_distinct(a, b) {
        Ok(eq) => (0..eq.len()).find(|&i| !(eq.is_valid(i) && eq.value(i))),
        // Types the comparison kernel does not take (nested values): compare row by row.
        Err(_) => (0..a.len()).find(|&i| a.slice(i, 1).to_data() != b.slice(i, 1).to_data()),
    }
}

impl GeneratedColumn {
    /// Computes the column (not `provided`) or checks the provided values against it.
    ///
    /// # Errors
    /// [`Error::GeneratedColumnMismatch`] naming the column and the first differing row;
    /// evaluation errors of the expression.
    pub(crate) fn apply(&self, batch: &RecordBatch, provided: bool) -> Result<RecordBatch> {
        let computed = evaluate_value(&self.value, batch)?;
        // Conformed to the column's stored type first, so the comparison is like for like.
        let with_computed = row::replace(batch, &self.name, computed)?;
        if !provided {
            return Ok(with_computed);
        }
        let i = row::position(batch, &self.name).ok_or_else(|| {
            Error::SchemaMismatch(format!(
                "column `{}` is missing from the rows to write",
                self.name
            ))
        })?;
        if let Some(r) = first_difference(batch.column(i), with_computed.column(i)) {
            return Err(Error::GeneratedColumnMismatch {
                column: self.name.clone(),
                expression: self.text.clone(),
                row: row::render(batch, r),
            });
        }
        Ok(batch.clone())
    }
}
