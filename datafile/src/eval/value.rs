//! Row-level evaluation of a bound value expression ([`BoundExpr`]) over an Arrow batch.
//!
//! Every result has the Arrow type of the expression's Delta type (the table's logical
//! mapping, `alluvium_txlog::schema::arrow_type`). NULL in gives NULL out. Integer and
//! decimal overflow, division or modulo by zero (integral, decimal and floating) and a value
//! a `CAST` cannot convert are `InvalidExpression` errors naming the expression: never a
//! panic, a wrapped value or a silent NULL. An operand that can fail is evaluated only on
//! the rows that need it: the right side of `AND` where the left is not FALSE, of `OR`
//! where it is not TRUE, a `CASE` branch on the rows that take it, a `COALESCE` argument
//! where the previous ones are NULL; so `CASE WHEN b = 0 THEN NULL ELSE a / b END` works.

use std::sync::Arc;

use arrow_arith::boolean::{and_kleene, is_null, not, or_kleene};
use arrow_arith::numeric;
use arrow_array::cast::AsArray;
use arrow_array::{
    Array, ArrayRef, BinaryArray, BooleanArray, RecordBatch, StringArray, new_null_array,
};
use arrow_cast::{CastOptions, cast_with_options};
use arrow_ord::cmp;
use arrow_schema::{ArrowError, DataType as ArrowType};
use arrow_select::filter::filter_record_batch;
use arrow_select::interleave::interleave;
use arrow_select::zip::zip;

use alluvium_txlog::expr::{ArithOp, BoundExpr, BoundKind, common_type};
use alluvium_txlog::schema::{DataType, PrimitiveType, arrow_type};

use super::decimal;
use super::{compare, failed};
use crate::Result;

/// Evaluates `expr` on every row of `batch`: one value per row, of the Arrow type of
/// `expr.data_type()`.
///
/// # Errors
/// `InvalidExpression` (as [`crate::DataFileError::Log`]) naming the expression on
/// overflow, division or modulo by zero and failed casts, and when a referenced column is
/// missing from the batch.
pub fn evaluate_value(expr: &BoundExpr, batch: &RecordBatch) -> Result<ArrayRef> {
    let ty = arrow_type(expr.data_type())?;
    let n = batch.num_rows();
    Ok(match expr.kind() {
        BoundKind::Literal(s) => s.to_array(&ty, n)?,
        BoundKind::Column(c) => {
            let arr = super::column(batch, c)?;
            if matches!(c.data_type, DataType::Primitive(_)) && arr.data_type() != &ty {
                convert(&arr, &ty, &c.display_name())?
            } else {
                arr
            }
        }
        BoundKind::Arith {
            op,
            left,
            right,
            text,
        } => arith(*op, left, right, expr.data_type(), &ty, text, batch)?,
        BoundKind::Neg { operand, text } => {
            let v = evaluate_value(operand, batch)?;
            if ty == ArrowType::Null {
                v
            } else {
                numeric::neg(&convert(&v, &ty, text)?).map_err(|e| arrow_failure(text, e))?
            }
        }
        BoundKind::Concat(l, r) => {
            let a = convert(&evaluate_value(l, batch)?, &ty, "||")?;
            let b = convert(&evaluate_value(r, batch)?, &ty, "||")?;
            concat(&a, &b)?
        }
        BoundKind::Cmp(l, op, r) => {
            let (a, b) = (evaluate_value(l, batch)?, evaluate_value(r, batch)?);
            let Some(common) = common_type(l.data_type(), r.data_type()) else {
                return Err(failed("comparison", "operands have no common type"));
            };
            let common = arrow_type(&common)?;
            if common == ArrowType::Null {
                return Ok(new_null_array(&ArrowType::Boolean, n));
            }
            let (a, b) = (convert(&a, &common, "=")?, convert(&b, &common, "=")?);
            Arc::new(compare(&a, *op, &b)?)
        }
        BoundKind::IsNull(e, negated) => {
            let nulls = is_null(&evaluate_value(e, batch)?)?;
            Arc::new(if *negated { not(&nulls)? } else { nulls })
        }
        BoundKind::In(e, values, negated) => {
            let operand = evaluate_value(e, batch)?;
            let mut acc = BooleanArray::from(vec![false; n]);
            for v in values {
                let Some(common) = common_type(e.data_type(), v.data_type()) else {
                    return Err(failed("IN", "operands have no common type"));
                };
                let common = arrow_type(&common)?;
                let eq = if common == ArrowType::Null {
                    BooleanArray::new_null(n)
                } else {
                    let a = convert(&operand, &common, "IN")?;
                    let b = convert(&evaluate_value(v, batch)?, &common, "IN")?;
                    cmp::eq(&a, &b)?
                };
                acc = or_kleene(&acc, &eq)?;
            }
            Arc::new(if *negated { not(&acc)? } else { acc })
        }
        BoundKind::And(l, r) => {
            let a = evaluate_bool(l, batch)?;
            let b = evaluate_bool_where(r, batch, &not_false(&a))?;
            Arc::new(and_kleene(&a, &b)?)
        }
        BoundKind::Or(l, r) => {
            let a = evaluate_bool(l, batch)?;
            let b = evaluate_bool_where(r, batch, &not_true(&a))?;
            Arc::new(or_kleene(&a, &b)?)
        }
        BoundKind::Not(e) => Arc::new(not(&evaluate_bool(e, batch)?)?),
        BoundKind::Case {
            branches,
            otherwise,
        } => {
            let mut result = new_null_array(&ty, n);
            let mut remaining = BooleanArray::from(vec![true; n]);
            for (cond, value) in branches {
                if remaining.true_count() == 0 {
                    break;
                }
                let c = evaluate_bool_where(cond, batch, &remaining)?;
                let take = and_masks(&is_true(&c), &remaining);
                let v = convert(&evaluate_where(value, batch, &take)?, &ty, "CASE")?;
                result = zip(&take, &v, &result)?;
                remaining = and_masks(&remaining, &not(&take)?);
            }
            if let Some(o) = otherwise
                && remaining.true_count() > 0
            {
                let v = convert(&evaluate_where(o, batch, &remaining)?, &ty, "CASE")?;
                result = zip(&remaining, &v, &result)?;
            }
            result
        }
        BoundKind::Coalesce(args) => {
            let mut result = new_null_array(&ty, n);
            for (i, a) in args.iter().enumerate() {
                let missing = is_null(&result)?;
                if missing.true_count() == 0 {
                    break;
                }
                let v = if i == 0 {
                    evaluate_value(a, batch)?
                } else {
                    evaluate_where(a, batch, &missing)?
                };
                let v = convert(&v, &ty, "COALESCE")?;
                result = zip(&missing, &v, &result)?;
            }
            result
        }
        BoundKind::Cast { operand, text } => convert(&evaluate_value(operand, batch)?, &ty, text)?,
    })
}

/// Evaluates a boolean expression: TRUE, FALSE or NULL per row.
///
/// # Errors
/// As [`evaluate_value`].
pub fn evaluate_bool(expr: &BoundExpr, batch: &RecordBatch) -> Result<BooleanArray> {
    let v = evaluate_value(expr, batch)?;
    as_boolean(&v)
}

fn as_boolean(v: &ArrayRef) -> Result<BooleanArray> {
    if v.data_type() == &ArrowType::Null {
        return Ok(BooleanArray::new_null(v.len()));
    }
    v.as_boolean_opt()
        .cloned()
        .ok_or_else(|| failed("predicate", "is not a boolean"))
}

/// Rows where `a` is TRUE (NULL counts as not TRUE); the result has no nulls.
fn is_true(a: &BooleanArray) -> BooleanArray {
    match a.nulls() {
        None => BooleanArray::new(a.values().clone(), None),
        Some(valid) => BooleanArray::new(a.values() & valid.inner(), None),
    }
}

/// Rows where `a` is not FALSE (TRUE or NULL).
fn not_false(a: &BooleanArray) -> BooleanArray {
    match a.nulls() {
        None => BooleanArray::new(a.values().clone(), None),
        Some(valid) => BooleanArray::new(a.values() | &!valid.inner(), None),
    }
}

/// Rows where `a` is not TRUE (FALSE or NULL).
fn not_true(a: &BooleanArray) -> BooleanArray {
    BooleanArray::new(!is_true(a).values(), None)
}

fn and_masks(a: &BooleanArray, b: &BooleanArray) -> BooleanArray {
    BooleanArray::new(is_true(a).values() & is_true(b).values(), None)
}

/// `expr` evaluated on the rows of `mask` (a mask without nulls). Values of the other rows
/// are unspecified (NULL when the expression may fail and is therefore evaluated only on
/// the selected rows).
pub(super) fn evaluate_where(
    expr: &BoundExpr,
    batch: &RecordBatch,
    mask: &BooleanArray,
) -> Result<ArrayRef> {
    if !expr.may_fail() {
        return evaluate_value(expr, batch);
    }
    let ty = arrow_type(expr.data_type())?;
    on_rows(batch, mask, &ty, |b| evaluate_value(expr, b))
}

fn evaluate_bool_where(
    expr: &BoundExpr,
    batch: &RecordBatch,
    mask: &BooleanArray,
) -> Result<BooleanArray> {
    as_boolean(&evaluate_where(expr, batch, mask)?)
}

/// `f` applied to the rows of `batch` selected by `mask` (no nulls), scattered back to
/// their positions; the other rows are NULL of type `ty`.
pub(super) fn on_rows(
    batch: &RecordBatch,
    mask: &BooleanArray,
    ty: &ArrowType,
    f: impl FnOnce(&RecordBatch) -> Result<ArrayRef>,
) -> Result<ArrayRef> {
    let n = batch.num_rows();
    let selected = mask.true_count();
    if selected == n {
        return f(batch);
    }
    if selected == 0 {
        return Ok(new_null_array(ty, n));
    }
    let values = f(&filter_record_batch(batch, mask)?)?;
    let nulls = new_null_array(values.data_type(), 1);
    let mut next = 0;
    let indices: Vec<(usize, usize)> = mask
        .values()
        .iter()
        .map(|selected| {
            if selected {
                next += 1;
                (0, next - 1)
            } else {
                (1, 0)
            }
        })
        .collect();
    Ok(interleave(&[values.as_ref(), nulls.as_ref()], &indices)?)
}

/// `arr` converted to `ty` (a no-op when it has it); a value that does not convert is an
/// error naming `text`.
fn convert(arr: &ArrayRef, ty: &ArrowType, text: &str) -> Result<ArrayRef> {
    if arr.data_type() == ty {
        return Ok(arr.clone());
    }
    let options = CastOptions {
        safe: false,
        ..Default::default()
    };
    cast_with_options(arr, ty, &options).map_err(|e| failed(text, format!("cannot convert: {e}")))
}

fn arrow_failure(text: &str, e: ArrowError) -> crate::DataFileError {
    match e {
        ArrowError::ArithmeticOverflow(_) => failed(text, "integer overflow"),
        ArrowError::DivideByZero => failed(text, "division by zero"),
        other => failed(text, other.to_string()),
    }
}

fn primitive(t: &DataType) -> Option<PrimitiveType> {
    match t {
        DataType::Primitive(p) => Some(*p),
        _ => None,
    }
}

/// The decimal type an integral or decimal operand enters decimal arithmetic as.
fn decimal_operand(t: &DataType) -> Option<ArrowType> {
    let (p, s) = match primitive(t)? {
        PrimitiveType::Byte => (3, 0),
        PrimitiveType::Short => (5, 0),
        PrimitiveType::Integer => (10, 0),
        PrimitiveType::Long => (20, 0),
        PrimitiveType::Decimal(p, s) => (p, i8::try_from(s).ok()?),
        PrimitiveType::Void => (38, 0),
        _ => return None,
    };
    Some(ArrowType::Decimal128(p, s))
}

/// Fails if some row divides a non-NULL value by zero.
fn check_divisor(l: &ArrayRef, r: &ArrayRef, text: &str) -> Result<()> {
    let zero = arrow_array::Scalar::new(new_zero(r.data_type())?);
    let is_zero = is_true(&cmp::eq(r, &zero)?);
    let hit = match l.logical_nulls() {
        None => is_zero.true_count() > 0,
        Some(valid) => (is_zero.values() & valid.inner()).count_set_bits() > 0,
    };
    if hit {
        return Err(failed(text, "division by zero"));
    }
    Ok(())
}

fn new_zero(t: &ArrowType) -> Result<ArrayRef> {
    Ok(match t {
        ArrowType::Float32 => Arc::new(arrow_array::Float32Array::from(vec![0.0f32])),
        ArrowType::Float64 => Arc::new(arrow_array::Float64Array::from(vec![0.0])),
        other => cast_with_options(
            &(Arc::new(arrow_array::Int8Array::from(vec![0i8])) as ArrayRef),
            other,
            &CastOptions::default(),
        )?,
    })
}

fn arith(
    op: ArithOp,
    left: &BoundExpr,
    right: &BoundExpr,
    result: &DataType,
    ty: &ArrowType,
    text: &str,
    batch: &RecordBatch,
) -> Result<ArrayRef> {
    let n = batch.num_rows();
    if ty == &ArrowType::Null {
        return Ok(new_null_array(ty, n));
    }
    let (l, r) = (evaluate_value(left, batch)?, evaluate_value(right, batch)?);
    if let Some(PrimitiveType::Decimal(p, s)) = primitive(result) {
        let (Some(lt), Some(rt)) = (
            decimal_operand(left.data_type()),
            decimal_operand(right.data_type()),
        ) else {
            return Err(failed(text, "operands are not decimals"));
        };
        let (l, r) = (convert(&l, &lt, text)?, convert(&r, &rt, text)?);
        return decimal::arith(op, &l, &r, p, s, text);
    }
    let (l, r) = (convert(&l, ty, text)?, convert(&r, ty, text)?);
    if matches!(op, ArithOp::Div | ArithOp::Mod) {
        check_divisor(&l, &r, text)?;
    }
    let kernel = match op {
        ArithOp::Add => numeric::add,
        ArithOp::Sub => numeric::sub,
        ArithOp::Mul => numeric::mul,
        ArithOp::Div => numeric::div,
        ArithOp::Mod => numeric::rem,
    };
    kernel(&l, &r).map_err(|e| arrow_failure(text, e))
}

/// `a || b` for two string or two binary arrays of the same type.
fn concat(a: &ArrayRef, b: &ArrayRef) -> Result<ArrayRef> {
    if let (Some(x), Some(y)) = (a.as_string_opt::<i32>(), b.as_string_opt::<i32>()) {
        let out: StringArray = x
            .iter()
            .zip(y.iter())
            .map(|(x, y)| Some(format!("{}{}", x?, y?)))
            .collect();
        return Ok(Arc::new(out));
    }
    if let (Some(x), Some(y)) = (a.as_binary_opt::<i32>(), b.as_binary_opt::<i32>()) {
        let out: BinaryArray = x
            .iter()
            .zip(y.iter())
            .map(|(x, y)| Some([x?, y?].concat()))
            .collect();
        return Ok(Arc::new(out));
    }
    Err(failed("||", "operands are not strings"))
}
