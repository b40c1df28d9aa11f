//! Column defaults (PROTOCOL.md "Default Columns"): a column with `CURRENT_DEFAULT` that
//! the written rows do not provide takes the value of that expression. An explicit value,
//! NULL included, is kept. alluvium evaluates constant expressions of its expression
//! language (literals, arithmetic, casts, functions, `current_timestamp()` at the write's
//! instant); a default it cannot parse or type, or that reads columns, keeps the table
//! refused for writes.

use alluvium_expr::evaluate_value;
use alluvium_expr::{BoundExpr, bind_assignment, parse_expr};
use alluvium_txlog::column_mapping::ColumnMappingMode;
use alluvium_txlog::schema::{ColumnMetadataKey, DataType, StructField, StructType};
use alluvium_txlog::table::TableFeature;
use arrow_array::RecordBatch;

use super::{refusal, row};
use crate::Result;

/// The field-metadata key holding a column's default expression.
pub(crate) const CURRENT_DEFAULT: &str = ColumnMetadataKey::CurrentDefault.as_str();

/// One column with a default.
#[derive(Debug)]
pub(crate) struct DefaultColumn {
    /// The column (top level).
    pub(crate) name: String,
    value: BoundExpr,
}

/// The table's default columns.
///
/// # Errors
/// The refusal naming the column whose default alluvium cannot evaluate, or a default on a
/// nested field (not supported).
pub(crate) fn collect(
    schema: &StructType,
    partitions: &[String],
    mode: ColumnMappingMode,
) -> Result<Vec<DefaultColumn>> {
    let mut out = Vec::new();
    for f in &schema.fields {
        if let Some(text) = f.metadata.get(CURRENT_DEFAULT) {
            let text = text.as_str().unwrap_or_default().to_string();
            let why = |e: String| {
                refusal(
                    TableFeature::AllowColumnDefaults.as_str(),
                    format!(
                        "column `{}`: default `{text}` cannot be evaluated by alluvium: {e}",
                        f.name
                    ),
                )
            };
            let expr = parse_expr(&text).map_err(|e| why(e.to_string()))?;
            let value = bind_assignment(&expr, schema, partitions, mode, &f.data_type)
                .map_err(|e| why(e.to_string()))?;
            if !value.columns().is_empty() {
                return Err(why("a default must not read columns".into()));
            }
            out.push(DefaultColumn {
                name: f.name.clone(),
                value,
            });
        }
        if let DataType::Struct(s) = &f.data_type
            && let Some(n) = nested_default(&s.fields)
        {
            return Err(refusal(
                TableFeature::AllowColumnDefaults.as_str(),
                format!(
                    "field `{}.{n}` has a default; defaults of nested fields are not supported",
                    f.name
                ),
            ));
        }
    }
    Ok(out)
}

fn nested_default(fields: &[StructField]) -> Option<String> {
    for f in fields {
        if f.metadata.contains_key(CURRENT_DEFAULT) {
            return Some(f.name.clone());
        }
        if let DataType::Struct(s) = &f.data_type
            && let Some(n) = nested_default(&s.fields)
        {
            return Some(format!("{}.{n}", f.name));
        }
    }
    None
}

impl DefaultColumn {
    /// `batch` with the column set to its default on every row.
    ///
    /// # Errors
    /// Evaluation errors (a default that overflows its column).
    pub(crate) fn fill(&self, batch: &RecordBatch) -> Result<RecordBatch> {
        let values = evaluate_value(&self.value, batch)?;
        row::replace(batch, &self.name, values)
    }
}
