//! New row versions: the values UPDATE SET and MERGE's UPDATE / INSERT give each target
//! column, typed against the table schema when the operation is planned (before any file
//! is written) and evaluated batch by batch.

use std::sync::Arc;

use alluvium_expr::BoundExpr;
use alluvium_expr::evaluate_value;
use alluvium_txlog::schema::{DataType, PrimitiveType, StructType};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{Field, Schema, SchemaRef};

use crate::rows::input;
use crate::rows::rules::{ColumnRules, RowKind};
use crate::{Error, Result};

/// Whether a value of type `from` may be stored in a column of type `to`: the same type,
/// or numbers into a numeric column (cast when stored; a value that does not fit is an
/// error then, never wrapped or truncated silently).
pub(crate) fn assignable(from: &DataType, to: &DataType) -> bool {
    input::same_type(from, to) || (is_numeric(from) && is_numeric(to))
}

fn is_numeric(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Primitive(
            PrimitiveType::Byte
                | PrimitiveType::Short
                | PrimitiveType::Integer
                | PrimitiveType::Long
                | PrimitiveType::Float
                | PrimitiveType::Double
                | PrimitiveType::Decimal { .. }
        )
    )
}

/// The value of one output column.
#[derive(Debug, Clone)]
pub(crate) enum ColumnValue {
    /// An expression bound to the schema of the batches [`Projection::apply`] gets.
    Expr(BoundExpr),
    /// A column the operation does not give a value (one an INSERT does not list, a
    /// generated column an UPDATE does not assign): NULL unless a column rule fills it
    /// (identity, default, generated).
    Null,
}

/// Every column of the table's (possibly evolved) schema, each with its value, and the
/// table's column rules the new rows must satisfy.
#[derive(Debug, Clone)]
pub(crate) struct Projection {
    table: StructType,
    target: SchemaRef,
    values: Vec<ColumnValue>,
    rules: Arc<ColumnRules>,
    kind: RowKind,
}

impl Projection {
    /// A projection onto `table`, checking each value's type against its column; the new
    /// rows (new rows or updated versions, `kind`) go through `rules`.
    ///
    /// # Errors
    /// [`Error::SchemaMismatch`] naming the column whose value has a type it cannot hold.
    pub(crate) fn new(
        table: &StructType,
        values: Vec<ColumnValue>,
        rules: Arc<ColumnRules>,
        kind: RowKind,
    ) -> Result<Projection> {
        for (f, v) in table.fields.iter().zip(&values) {
            if let ColumnValue::Expr(e) = v
                && !assignable(e.data_type(), &f.data_type)
            {
                return Err(Error::SchemaMismatch(format!(
                    "column `{}` is {} but is given a value of type {}",
                    f.name,
                    f.data_type,
                    e.data_type()
                )));
            }
        }
        Ok(Projection {
            table: table.clone(),
            target: input::logical_schema(table)?,
            values,
            rules,
            kind,
        })
    }

    /// Every column the values read.
    pub(crate) fn columns(&self) -> Vec<&alluvium_expr::BoundColumn> {
        self.values
            .iter()
            .flat_map(|v| match v {
                ColumnValue::Expr(e) => e.columns(),
                ColumnValue::Null => Vec::new(),
            })
            .collect()
    }

    /// The new rows for the rows of `batch`, conformed to the table's logical schema
    /// (what the file sink takes).
    ///
    /// # Errors
    /// Evaluation errors (overflow, division by zero), a NULL for a NOT NULL column, a
    /// number that does not fit its column.
    pub(crate) fn apply(&self, batch: &RecordBatch) -> Result<RecordBatch> {
        let n = batch.num_rows();
        let mut fields = Vec::with_capacity(self.values.len());
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(self.values.len());
        for (tf, v) in self.target.fields().iter().zip(&self.values) {
            // Columns without a value are left out: conforming makes them NULL, and the
            // column rules fill those they give values to.
            if let ColumnValue::Expr(e) = v {
                let col = evaluate_value(e, batch)?;
                fields.push(Field::new(tf.name(), col.data_type().clone(), true));
                columns.push(col);
            }
        }
        let raw = RecordBatch::try_new_with_options(
            Arc::new(Schema::new(fields)),
            columns,
            &arrow_array::RecordBatchOptions::new().with_row_count(Some(n)),
        )?;
        let conformed = input::conform(&raw, &self.table, &self.target)?;
        let provided =
            |c: &str| {
                self.table.fields.iter().zip(&self.values).any(|(f, v)| {
                    f.name.eq_ignore_ascii_case(c) && matches!(v, ColumnValue::Expr(_))
                })
            };
        self.rules.apply(conformed, &provided, self.kind)
    }
}
