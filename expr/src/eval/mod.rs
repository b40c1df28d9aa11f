//! Row-level evaluation of bound predicates ([`Predicate`]) and value expressions
//! ([`crate::BoundExpr`]) over an Arrow batch whose columns carry the table's logical names and types (as a scan
//! produces them; MERGE evaluates on a batch of two struct columns `t` and `s`).

mod column;
mod decimal;
mod function;
#[cfg(test)]
mod function_tests;
mod temporal;
mod value;

pub use column::leaf_array;
pub use value::{evaluate_bool, evaluate_value};

use arrow_arith::boolean::{and_kleene, is_not_null, is_null, not, or_kleene};
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, Scalar as ArrowScalar};
use arrow_cast::cast;
use arrow_ord::cmp;
use arrow_schema::{DataType as ArrowType, TimeUnit};
use std::sync::Arc;

use alluvium_txlog::scalar::Scalar;

use crate::{BoundColumn, CmpOp, ExprError, Predicate, Result};

/// Evaluates `pred` on every row of `batch`: TRUE, FALSE or NULL per row.
///
/// # Errors
/// [`ExprError::Invalid`] if a referenced
/// column is missing from the batch or has an incompatible type.
pub fn evaluate(pred: &Predicate, batch: &RecordBatch) -> Result<BooleanArray> {
    let n = batch.num_rows();
    Ok(match pred {
        Predicate::Const(Some(v)) => BooleanArray::from(vec![*v; n]),
        Predicate::Const(None) => BooleanArray::new_null(n),
        Predicate::And(a, b) => {
            let a = evaluate(a, batch)?;
            // Rows the left side makes FALSE do not need the right side, which may fail on
            // them (`b != 0 AND a / b > 1`).
            let b = evaluate_on(b, batch, |v| !matches!(v, Some(false)), &a)?;
            and_kleene(&a, &b)?
        }
        Predicate::Or(a, b) => {
            let a = evaluate(a, batch)?;
            let b = evaluate_on(b, batch, |v| !matches!(v, Some(true)), &a)?;
            or_kleene(&a, &b)?
        }
        Predicate::Expr(e) => evaluate_bool(e, batch)?,
        Predicate::Not(a) => not(&evaluate(a, batch)?)?,
        Predicate::Column(c) => {
            let arr = column(batch, c)?;
            arr.as_boolean_opt().cloned().ok_or_else(|| {
                ExprError::Invalid(format!("column `{}` is not boolean", c.display_name()))
            })?
        }
        Predicate::IsNull { column: c, negated } => {
            let arr = column(batch, c)?;
            if *negated {
                is_not_null(&arr)?
            } else {
                is_null(&arr)?
            }
        }
        Predicate::Cmp(c, op, lit) => {
            let arr = column(batch, c)?;
            let target = scalar_type(lit, arr.data_type());
            let arr = if arr.data_type() == &target {
                arr
            } else {
                cast(&arr, &target)?
            };
            let lit = ArrowScalar::new(lit.to_array(&target, 1)?);
            compare(&arr, *op, &lit)?
        }
        Predicate::ColCmp(a, op, b) => {
            let (x, y) = (column(batch, a)?, column(batch, b)?);
            let (x, y) = if x.data_type() == y.data_type() {
                (x, y)
            } else {
                let common = common_numeric(x.data_type(), y.data_type());
                (cast(&x, &common)?, cast(&y, &common)?)
            };
            compare(&x, *op, &y)?
        }
    })
}

/// The value of an expression that reads no column (`current_timestamp() - INTERVAL 1
/// DAY`), computed once; `None` if it fails (division by zero, an out-of-range date) or
/// has no scalar form, so that the caller keeps it as an expression and every row meets
/// the failure as before.
pub(crate) fn constant(expr: &crate::BoundExpr) -> Option<Scalar> {
    let batch = RecordBatch::try_new_with_options(
        Arc::new(arrow_schema::Schema::empty()),
        vec![],
        &arrow_array::RecordBatchOptions::new().with_row_count(Some(1)),
    )
    .ok()?;
    let value = evaluate_value(expr, &batch).ok()?;
    let ty = expr.data_type().as_primitive()?;
    alluvium_txlog::scalar::scalar_at(value.as_ref(), 0, ty).ok()
}

/// True if evaluating `p` can fail on some value (it holds arithmetic or a cast).
fn may_fail(p: &Predicate) -> bool {
    match p {
        Predicate::Expr(e) => e.may_fail(),
        Predicate::And(a, b) | Predicate::Or(a, b) => may_fail(a) || may_fail(b),
        Predicate::Not(a) => may_fail(a),
        _ => false,
    }
}

/// `p` on the rows where `needed(left value)`; the other rows are NULL. Predicates that
/// cannot fail are simply evaluated on every row.
fn evaluate_on(
    p: &Predicate,
    batch: &RecordBatch,
    needed: impl Fn(Option<bool>) -> bool,
    left: &BooleanArray,
) -> Result<BooleanArray> {
    if !may_fail(p) {
        return evaluate(p, batch);
    }
    let mask: BooleanArray = left.iter().map(|v| Some(needed(v))).collect();
    let arr = value::on_rows(batch, &mask, &ArrowType::Boolean, |b| {
        Ok(Arc::new(evaluate(p, b)?) as ArrayRef)
    })?;
    arr.as_boolean_opt()
        .cloned()
        .ok_or_else(|| failed("predicate", "is not a boolean"))
}

/// An evaluation failure of the expression `text`.
fn failed(text: &str, reason: impl std::fmt::Display) -> ExprError {
    ExprError::Invalid(format!("`{text}`: {reason}"))
}

fn compare(
    a: &dyn arrow_array::Datum,
    op: CmpOp,
    b: &dyn arrow_array::Datum,
) -> Result<BooleanArray> {
    Ok(match op {
        CmpOp::Eq => cmp::eq(a, b)?,
        CmpOp::Ne => cmp::neq(a, b)?,
        CmpOp::Lt => cmp::lt(a, b)?,
        CmpOp::Le => cmp::lt_eq(a, b)?,
        CmpOp::Gt => cmp::gt(a, b)?,
        CmpOp::Ge => cmp::gt_eq(a, b)?,
    })
}

fn common_numeric(a: &ArrowType, b: &ArrowType) -> ArrowType {
    let int = |t: &ArrowType| {
        matches!(
            t,
            ArrowType::Int8 | ArrowType::Int16 | ArrowType::Int32 | ArrowType::Int64
        )
    };
    if int(a) && int(b) {
        ArrowType::Int64
    } else {
        ArrowType::Float64
    }
}

/// The Arrow type a literal compares at against a column of type `column`.
fn scalar_type(lit: &Scalar, column: &ArrowType) -> ArrowType {
    match lit {
        Scalar::Boolean(_) => ArrowType::Boolean,
        Scalar::Byte(_) | Scalar::Short(_) | Scalar::Integer(_) | Scalar::Long(_) => {
            ArrowType::Int64
        }
        Scalar::Float(_) | Scalar::Double(_) => ArrowType::Float64,
        Scalar::String(_) => ArrowType::Utf8,
        Scalar::Binary(_) => ArrowType::Binary,
        Scalar::Date(_) => ArrowType::Date32,
        Scalar::Timestamp(_) => match column {
            ArrowType::Timestamp(_, Some(tz)) => {
                ArrowType::Timestamp(TimeUnit::Microsecond, Some(tz.clone()))
            }
            _ => ArrowType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        },
        Scalar::TimestampNtz(_) => ArrowType::Timestamp(TimeUnit::Microsecond, None),
        Scalar::Decimal { scale, .. } => match column {
            ArrowType::Decimal128(p, s) if i32::from(*s) == i32::from(*scale) => {
                ArrowType::Decimal128(*p, *s)
            }
            _ => ArrowType::Decimal128(38, i8::try_from(*scale).unwrap_or(0)),
        },
        Scalar::Null => column.clone(),
    }
}

/// The array of a (possibly nested) column.
///
/// String and binary views (reads of the view form) come back as `Utf8` and `Binary`: the
/// evaluator's kernels and literals are defined on those, and the values are the same.
fn column(batch: &RecordBatch, c: &BoundColumn) -> Result<ArrayRef> {
    let arr = leaf_array(batch, &c.path).map_err(|_| {
        ExprError::Invalid(format!(
            "column `{}` is not in the scanned data",
            c.display_name()
        ))
    })?;
    Ok(match arr.data_type() {
        ArrowType::Utf8View => cast(&arr, &ArrowType::Utf8)?,
        ArrowType::BinaryView => cast(&arr, &ArrowType::Binary)?,
        _ => arr,
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Float64Array, Int32Array, StringArray, StructArray};
    use arrow_buffer::NullBuffer;
    use arrow_schema::{Field, Schema};

    use super::*;
    use crate::{MAX_EXPR_DEPTH, bind, parse_expr};
    use alluvium_txlog::column_mapping::ColumnMappingMode;
    use alluvium_txlog::schema::StructType;

    fn batch() -> (RecordBatch, StructType) {
        let schema = StructType::from_json(r#"{"type":"struct","fields":[
            {"name":"i","type":"integer","nullable":true,"metadata":{}},
            {"name":"s","type":"string","nullable":true,"metadata":{}},
            {"name":"f","type":"double","nullable":true,"metadata":{}},
            {"name":"n","type":{"type":"struct","fields":[{"name":"x","type":"integer","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}}
        ]}"#).unwrap();
        let inner = StructArray::from(vec![(
            Arc::new(Field::new("x", ArrowType::Int32, true)),
            Arc::new(Int32Array::from(vec![Some(1), Some(2), Some(3), None])) as ArrayRef,
        )]);
        let inner = StructArray::try_new(
            inner.fields().clone(),
            inner.columns().to_vec(),
            Some(NullBuffer::from(vec![true, false, true, true])),
        )
        .unwrap();
        let b = RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("i", ArrowType::Int32, true),
                Field::new("s", ArrowType::Utf8, true),
                Field::new("f", ArrowType::Float64, true),
                Field::new("n", inner.data_type().clone(), true),
            ])),
            vec![
                Arc::new(Int32Array::from(vec![Some(1), Some(5), None, Some(7)])),
                Arc::new(StringArray::from(vec![
                    Some("a"),
                    Some("b"),
                    Some("c"),
                    None,
                ])),
                Arc::new(Float64Array::from(vec![1.0, f64::NAN, 3.0, 0.5])),
                Arc::new(inner),
            ],
        )
        .unwrap();
        (b, schema)
    }

    fn eval(filter: &str) -> Vec<Option<bool>> {
        let (b, schema) = batch();
        let p = bind(
            &parse_expr(filter).unwrap(),
            &schema,
            &[],
            ColumnMappingMode::None,
        )
        .unwrap();
        evaluate(&p, &b).unwrap().iter().collect()
    }

    #[test]
    fn three_valued_logic() {
        assert_eq!(
            eval("i > 2"),
            vec![Some(false), Some(true), None, Some(true)]
        );
        assert_eq!(
            eval("i > 2 OR s = 'a'"),
            vec![Some(true), Some(true), None, Some(true)]
        );
        assert_eq!(
            eval("NOT (i > 2)"),
            vec![Some(true), Some(false), None, Some(false)]
        );
        assert_eq!(
            eval("i IS NULL"),
            vec![Some(false), Some(false), Some(true), Some(false)]
        );
        assert_eq!(
            eval("i IN (1, 7)"),
            vec![Some(true), Some(false), None, Some(true)]
        );
        assert_eq!(
            eval("i NOT IN (1, NULL)"),
            vec![Some(false), None, None, None]
        );
        assert_eq!(
            eval("i = 2.5"),
            vec![Some(false), Some(false), None, Some(false)]
        );
    }

    #[test]
    fn nan_sorts_above_everything_and_nested_nulls_propagate() {
        assert_eq!(
            eval("f > 100"),
            vec![Some(false), Some(true), Some(false), Some(false)]
        );
        assert_eq!(eval("n.x = 2"), vec![Some(false), None, Some(false), None]);
        assert_eq!(
            eval("n.x IS NULL"),
            vec![Some(false), Some(true), Some(false), Some(true)]
        );
        assert_eq!(
            eval("i < f"),
            vec![Some(false), Some(true), None, Some(false)]
        );
    }

    #[test]
    fn expressions_at_the_depth_limit_work_on_a_small_stack() {
        use crate::{FileSummary, may_match};
        use alluvium_txlog::actions::OptStringMap;

        let deepest = [
            format!("{}i = 1", "NOT ".repeat(MAX_EXPR_DEPTH - 2)),
            format!(
                "{}i = 1{}",
                "(".repeat(MAX_EXPR_DEPTH - 2),
                ")".repeat(MAX_EXPR_DEPTH - 2)
            ),
            format!("{}i = 1", "NOT (i = 7 OR ".repeat((MAX_EXPR_DEPTH - 2) / 2))
                + &")".repeat((MAX_EXPR_DEPTH - 2) / 2),
            vec!["i = 1"; 100_000].join(" OR "),
            format!("i IN ({})", vec!["7"; 100_000].join(", ")),
            // Value forms at the limit: a 63-term sum compared (64 levels), nested CASE,
            // COALESCE and CAST.
            format!("{} = 1", vec!["i"; MAX_EXPR_DEPTH - 1].join(" + ")),
            format!(
                "{}i{} = 1",
                "COALESCE(CAST(-".repeat((MAX_EXPR_DEPTH - 2) / 3),
                " AS long), 0)".repeat((MAX_EXPR_DEPTH - 2) / 3)
            ),
            format!(
                "{}i{} = 1",
                "CASE WHEN i > 0 THEN ".repeat(MAX_EXPR_DEPTH - 3),
                " END".repeat(MAX_EXPR_DEPTH - 3)
            ),
        ];
        // Rayon's workers, which evaluate per file, have 2 MiB stacks.
        let results = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                let (b, schema) = batch();
                let empty = OptStringMap::default();
                let summary = FileSummary {
                    partition_values: &empty,
                    stats: None,
                };
                deepest
                    .iter()
                    .map(|text| {
                        let e = parse_expr(text).unwrap();
                        let p = bind(&e, &schema, &[], ColumnMappingMode::None).unwrap();
                        assert!(may_match(&p, &summary));
                        evaluate(&p, &b).unwrap().iter().collect::<Vec<_>>()
                    })
                    .collect::<Vec<_>>()
            })
            .unwrap()
            .join()
            .unwrap();
        let is_1 = [Some(true), Some(false), None, Some(false)];
        assert_eq!(results[0], is_1);
        assert_eq!(results[1], is_1);
        assert_eq!(results[3], is_1);
        assert_eq!(results[4], [Some(false), Some(false), None, Some(true)]);
        assert_eq!(results[5], [Some(false), Some(false), None, Some(false)]);
        assert_eq!(results[7], [Some(true), Some(false), None, Some(false)]);
    }
}
