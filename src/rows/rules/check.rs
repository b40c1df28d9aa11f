//! CHECK constraints (`delta.constraints.<name>` in the configuration, PROTOCOL.md "CHECK
//! Constraints") and legacy column invariants (`delta.invariants` field metadata,
//! `{"expression": {"expression": "<SQL>"}}`, PROTOCOL.md "Column Invariants"): every
//! written row must make each expression TRUE; FALSE or NULL fails the write, naming the
//! constraint and the row. An expression alluvium cannot parse or type keeps the table
//! refused for writes.

use std::collections::HashMap;

use alluvium_expr::evaluate;
use alluvium_expr::{ExprError, Predicate, bind, parse_expr};
use alluvium_txlog::column_mapping::ColumnMappingMode;
use alluvium_txlog::schema::{ColumnMetadataKey, DataType, StructField, StructType};
use alluvium_txlog::table::TableFeature;
use arrow_array::{Array, RecordBatch};

use super::{refusal, row};
use crate::{Error, Result};

/// The configuration prefix of CHECK constraints.
pub(crate) const CONSTRAINT_PREFIX: &str = alluvium_txlog::properties::CONSTRAINT_PREFIX;
/// The field-metadata key of a legacy column invariant.
pub(crate) const INVARIANTS: &str = ColumnMetadataKey::Invariants.as_str();

/// One boolean rule every row must satisfy.
#[derive(Debug)]
pub(crate) struct Check {
    /// How errors name it: the constraint's name, or `invariant on <column>`.
    name: String,
    text: String,
    predicate: Predicate,
}

/// Parses and binds a constraint expression against the table.
///
/// # Errors
/// The expression's parse or binding error (unknown columns, a non-boolean value), and
/// an expression that is not deterministic (`current_date`, `current_timestamp`): a
/// constraint must give every row the same verdict whenever it is checked.
pub(crate) fn bind_check(
    text: &str,
    schema: &StructType,
    partitions: &[String],
    mode: ColumnMappingMode,
) -> Result<Predicate> {
    let expr = parse_expr(text)?;
    if !expr.is_deterministic() {
        return Err(ExprError::Invalid(format!(
            "`{text}` is not deterministic (it reads the current date or time), which a CHECK constraint must be"
        ))
        .into());
    }
    Ok(bind(&expr, schema, partitions, mode)?)
}

/// The table's CHECK constraints (sorted by name, so errors are deterministic) and column
/// invariants.
///
/// # Errors
/// The refusal naming the constraint or invariant alluvium cannot evaluate.
pub(crate) fn collect(
    schema: &StructType,
    partitions: &[String],
    configuration: &HashMap<String, String>,
    mode: ColumnMappingMode,
) -> Result<Vec<Check>> {
    let mut out = Vec::new();
    let mut keys: Vec<(&String, &String)> = configuration
        .iter()
        .filter(|(k, _)| k.starts_with(CONSTRAINT_PREFIX))
        .collect();
    keys.sort();
    for (k, text) in keys {
        let name = &k[CONSTRAINT_PREFIX.len()..];
        let predicate = bind_check(text, schema, partitions, mode).map_err(|e| {
            refusal(
                TableFeature::CheckConstraints.as_str(),
                format!("constraint `{name}` (`{text}`) cannot be evaluated by alluvium: {e}"),
            )
        })?;
        out.push(Check {
            name: name.to_string(),
            text: text.clone(),
            predicate,
        });
    }
    invariants(&schema.fields, "", schema, partitions, mode, &mut out)?;
    Ok(out)
}

fn invariants(
    fields: &[StructField],
    prefix: &str,
    schema: &StructType,
    partitions: &[String],
    mode: ColumnMappingMode,
    out: &mut Vec<Check>,
) -> Result<()> {
    for f in fields {
        let path = format!("{prefix}{}", f.name);
        if let Some(v) = f.metadata.get(INVARIANTS) {
            let why = |e: String| {
                refusal(
                    TableFeature::Invariants.as_str(),
                    format!("column `{path}`: invariant {v} cannot be evaluated by alluvium: {e}"),
                )
            };
            let json: serde_json::Value = match v {
                serde_json::Value::String(s) => {
                    serde_json::from_str(s).map_err(|e| why(e.to_string()))?
                }
                other => other.clone(),
            };
            let text = json
                .get("expression")
                .and_then(|e| e.get("expression"))
                .and_then(|e| e.as_str())
                .ok_or_else(|| why("no expression.expression string".into()))?;
            let predicate =
                bind_check(text, schema, partitions, mode).map_err(|e| why(e.to_string()))?;
            out.push(Check {
                name: format!("invariant on `{path}`"),
                text: text.to_string(),
                predicate,
            });
        }
        if let DataType::Struct(s) = &f.data_type {
            invariants(
                &s.fields,
                &format!("{path}."),
                schema,
                partitions,
                mode,
                out,
            )?;
        }
    }
    Ok(())
}

/// The first row of `batch` that does not make `predicate` TRUE.
///
/// # Errors
/// Evaluation errors.
pub(crate) fn first_violation(predicate: &Predicate, batch: &RecordBatch) -> Result<Option<usize>> {
    let m = evaluate(predicate, batch)?;
    Ok((0..m.len()).find(|&i| !(m.is_valid(i) && m.value(i))))
}

impl Check {
    /// Checks every row of `batch`.
    ///
    /// # Errors
    /// [`Error::ConstraintViolation`] naming the constraint and the first violating row.
    pub(crate) fn check(&self, batch: &RecordBatch) -> Result<()> {
        if let Some(r) = first_violation(&self.predicate, batch)? {
            return Err(Error::ConstraintViolation {
                constraint: self.name.clone(),
                expression: self.text.clone(),
                row: row::render(batch, r),
            });
        }
        Ok(())
    }
}
