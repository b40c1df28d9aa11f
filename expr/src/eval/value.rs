//! Row-level evaluation of a bound value expression ([`BoundExpr`]) over an Arrow batch.
//!
//! Every result has the Arrow type of the expression's Delta type (the table's logical
//! mapping, `alluvium_txlog::schema::arrow_type`). NULL in gives NULL out. Integer and
//! decimal overflow, division or modulo by zero (integral, decimal and floating) and a value
//! a `CAST` cannot convert are [`ExprError::Invalid`](crate::ExprError::Invalid) errors naming the expression: never a
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

use crate::{ArithOp, BoundExpr, BoundKind, common_type};
use alluvium_txlog::schema::{DataType, PrimitiveType, arrow_type};

use super::{compare, failed};
use super::{decimal, function, temporal};
use crate::Result;

/// Evaluates `expr` on every row of `batch`: one value per row, of the Arrow type of
/// `expr.data_type()`.
///
/// # Errors
/// [`ExprError::Invalid`](crate::ExprError::Invalid) naming the expression on
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
        BoundKind::IsNull {
            operand: e,
            negated,
        } => {
            let nulls = is_null(&evaluate_value(e, batch)?)?;
            Arc::new(if *negated { not(&nulls)? } else { nulls })
        }
        BoundKind::In {
            operand: e,
            list: values,
            negated,
        } => {
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
        BoundKind::DatePart { field, operand } => {
            let v = evaluate_value(operand, batch)?;
            if v.data_type() == &ArrowType::Null {
                new_null_array(&ty, n)
            } else {
                convert(&temporal::field(&v, *field)?, &ty, field.name())?
            }
        }
        BoundKind::Like {
            operand,
            pattern,
            escape,
            case_insensitive,
            negated,
        } => {
            let a = evaluate_value(operand, batch)?;
            let p = evaluate_value(pattern, batch)?;
            Arc::new(function::like(
                &a,
                pattern,
                &p,
                *escape,
                (*case_insensitive, *negated),
                "LIKE",
            )?)
        }
        BoundKind::IsDistinctFrom {
            left,
            right,
            negated,
        } => {
            let (a, b) = (evaluate_value(left, batch)?, evaluate_value(right, batch)?);
            let Some(common) = common_type(left.data_type(), right.data_type()) else {
                return Err(failed("IS DISTINCT FROM", "operands have no common type"));
            };
            let common = arrow_type(&common)?;
            if common == ArrowType::Null {
                // NULL against NULL on every row: not distinct.
                return Ok(Arc::new(BooleanArray::from(vec![*negated; n])));
            }
            let (a, b) = (
                convert(&a, &common, "IS DISTINCT FROM")?,
                convert(&b, &common, "IS DISTINCT FROM")?,
            );
            Arc::new(if *negated {
                cmp::not_distinct(&a, &b)?
            } else {
                cmp::distinct(&a, &b)?
            })
        }
        BoundKind::AddInterval {
            operand,
            interval,
            text,
        } => temporal::add_interval(&evaluate_value(operand, batch)?, *interval, &ty, text)?,
        BoundKind::Call {
            function,
            args,
            text,
        } => function::call(*function, args, batch, &ty, text)?,
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
pub(super) fn is_true(a: &BooleanArray) -> BooleanArray {
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
pub(super) fn convert(arr: &ArrayRef, ty: &ArrowType, text: &str) -> Result<ArrayRef> {
    if arr.data_type() == ty {
        return Ok(arr.clone());
    }
    let options = CastOptions {
        safe: false,
        ..Default::default()
    };
    cast_with_options(arr, ty, &options).map_err(|e| failed(text, format!("cannot convert: {e}")))
}

fn arrow_failure(text: &str, e: ArrowError) -> crate::ExprError {
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

#[cfg(test)]
mod tests {
    use arrow_array::{
        Decimal128Array, Float64Array, Int32Array, Int64Array, StringArray, StructArray,
    };
    use arrow_schema::{Field, Schema};

    use super::*;
    use crate::{bind, bind_value, parse_expr};
    use alluvium_txlog::column_mapping::ColumnMappingMode;
    use alluvium_txlog::schema::StructType;

    fn batch() -> (RecordBatch, StructType) {
        let schema = StructType::from_json(r#"{"type":"struct","fields":[
            {"name":"i","type":"integer","nullable":true,"metadata":{}},
            {"name":"l","type":"long","nullable":true,"metadata":{}},
            {"name":"d","type":"double","nullable":true,"metadata":{}},
            {"name":"m","type":"decimal(10,2)","nullable":true,"metadata":{}},
            {"name":"s","type":"string","nullable":true,"metadata":{}},
            {"name":"t","type":{"type":"struct","fields":[
                {"name":"id","type":"long","nullable":true,"metadata":{}},
                {"name":"name","type":"string","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}}
        ]}"#).unwrap();
        let t = StructArray::from(vec![
            (
                Arc::new(Field::new("id", ArrowType::Int64, true)),
                Arc::new(Int64Array::from(vec![Some(10), Some(20), None, Some(40)])) as ArrayRef,
            ),
            (
                Arc::new(Field::new("name", ArrowType::Utf8, true)),
                Arc::new(StringArray::from(vec![
                    Some("x"),
                    None,
                    Some("z"),
                    Some("w"),
                ])) as ArrayRef,
            ),
        ]);
        let m = Decimal128Array::from(vec![Some(150), Some(-275), None, Some(9_999_999_999)])
            .with_precision_and_scale(10, 2)
            .unwrap();
        let b = RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("i", ArrowType::Int32, true),
                Field::new("l", ArrowType::Int64, true),
                Field::new("d", ArrowType::Float64, true),
                Field::new("m", m.data_type().clone(), true),
                Field::new("s", ArrowType::Utf8, true),
                Field::new("t", t.data_type().clone(), true),
            ])),
            vec![
                Arc::new(Int32Array::from(vec![
                    Some(1),
                    Some(0),
                    None,
                    Some(i32::MAX),
                ])),
                Arc::new(Int64Array::from(vec![
                    Some(5),
                    Some(-3),
                    Some(7),
                    Some(i64::MAX),
                ])),
                Arc::new(Float64Array::from(vec![
                    Some(1.5),
                    Some(0.0),
                    None,
                    Some(-2.0),
                ])),
                Arc::new(m),
                Arc::new(StringArray::from(vec![
                    Some("a"),
                    Some("12"),
                    None,
                    Some("abc"),
                ])),
                Arc::new(t),
            ],
        )
        .unwrap();
        (b, schema)
    }

    fn eval_rows(text: &str, rows: &[usize]) -> Result<ArrayRef> {
        let (b, schema) = batch();
        let idx =
            arrow_array::UInt32Array::from(rows.iter().map(|r| *r as u32).collect::<Vec<_>>());
        let b = arrow_select::take::take_record_batch(&b, &idx).unwrap();
        let e = bind_value(
            &parse_expr(text).unwrap(),
            &schema,
            &[],
            ColumnMappingMode::None,
        )
        .unwrap();
        let v = evaluate_value(&e, &b)?;
        assert_eq!(v.data_type(), &arrow_type(e.data_type()).unwrap(), "{text}");
        assert_eq!(v.len(), rows.len());
        Ok(v)
    }

    fn eval(text: &str) -> Result<ArrayRef> {
        eval_rows(text, &[0, 1, 2, 3])
    }

    fn ints(text: &str, rows: &[usize]) -> Vec<Option<i64>> {
        let v = eval_rows(text, rows).unwrap();
        let v = arrow_cast::cast(&v, &ArrowType::Int64).unwrap();
        v.as_primitive::<arrow_array::types::Int64Type>()
            .iter()
            .collect()
    }

    fn strings(text: &str) -> Vec<Option<String>> {
        let v = eval(text).unwrap();
        let v = arrow_cast::cast(&v, &ArrowType::Utf8).unwrap();
        v.as_string::<i32>()
            .iter()
            .map(|s| s.map(str::to_string))
            .collect()
    }

    fn error(text: &str, rows: &[usize]) -> String {
        match eval_rows(text, rows) {
            Err(crate::ExprError::Invalid(m)) => m,
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn arithmetic_with_null_propagation() {
        let all = &[0, 1, 2, 3];
        assert_eq!(ints("i + 1", &[0, 1, 2]), vec![Some(2), Some(1), None]);
        assert_eq!(ints("l - i * 2", &[0, 1, 2]), vec![Some(3), Some(-3), None]);
        assert_eq!(ints("-l", &[0, 1, 2]), vec![Some(-5), Some(3), Some(-7)]);
        assert_eq!(
            ints("l % 4", all),
            vec![Some(1), Some(-3), Some(3), Some(3)]
        );
        assert_eq!(ints("i + NULL", all), vec![None; 4]);
        assert_eq!(
            ints("t.id * 2 + l", &[0, 1, 2]),
            vec![Some(25), Some(37), None]
        );
        // `/` on integers is a double.
        let v = eval_rows("l / 2", &[0, 1]).unwrap();
        assert_eq!(
            v.as_primitive::<arrow_array::types::Float64Type>().values(),
            &[2.5, -1.5]
        );
        let v = eval("d * 2 + i").unwrap();
        let v: Vec<_> = v
            .as_primitive::<arrow_array::types::Float64Type>()
            .iter()
            .collect();
        assert_eq!(v[..3], [Some(4.0), Some(0.0), None]);
    }

    #[test]
    fn overflow_and_division_by_zero_are_errors_naming_the_expression() {
        let m = error("i + 1", &[3]);
        assert!(m.contains("`i + 1`") && m.contains("overflow"), "{m}");
        let m = error("l * 2", &[3]);
        assert!(m.contains("`l * 2`") && m.contains("overflow"), "{m}");
        let m = error("-(i - 2147483647 - 1)", &[1]);
        assert!(m.contains("overflow"), "{m}");
        let m = error("l / i", &[1]);
        assert!(
            m.contains("`l / i`") && m.contains("division by zero"),
            "{m}"
        );
        let m = error("l % i", &[1]);
        assert!(m.contains("division by zero"), "{m}");
        let m = error("d / d", &[1]);
        assert!(m.contains("division by zero"), "{m}");
        let m = error("m / (i * 1.0)", &[1]);
        assert!(m.contains("division by zero"), "{m}");
        let m = error("m * m * m * m * m", &[3]);
        assert!(m.contains("decimal overflow"), "{m}");
        // NULL divided by zero is NULL, not an error.
        assert_eq!(ints("CAST(i / 0 AS long)", &[2]), vec![None]);
        // Rows that are not evaluated do not fail.
        assert_eq!(
            ints("CASE WHEN i = 0 THEN -1 ELSE l / i END", &[0, 1, 2]),
            vec![Some(5), Some(-1), None]
        );
        assert_eq!(ints("COALESCE(l, l / 0)", &[0, 1]), vec![Some(5), Some(-3)]);
    }

    #[test]
    fn decimals_are_exact() {
        let v = eval("m + 1").unwrap();
        assert_eq!(v.data_type(), &ArrowType::Decimal128(11, 2));
        let v: Vec<_> = v
            .as_primitive::<arrow_array::types::Decimal128Type>()
            .iter()
            .collect();
        assert_eq!(v, vec![Some(250), Some(-175), None, Some(10_000_000_099)]);
        let v = eval_rows("m * 2.5", &[0, 1]).unwrap();
        assert_eq!(v.data_type(), &ArrowType::Decimal128(13, 3));
        let v: Vec<_> = v
            .as_primitive::<arrow_array::types::Decimal128Type>()
            .iter()
            .collect();
        assert_eq!(v, vec![Some(3750), Some(-6875)]);
        // 1.50 / 3 = 0.5000000000000 at scale max(6, 2 + 10 + 1) = 13.
        let v = eval_rows("m / CAST(3 AS int)", &[0]).unwrap();
        assert_eq!(v.data_type(), &ArrowType::Decimal128(21, 13));
        assert_eq!(
            v.as_primitive::<arrow_array::types::Decimal128Type>()
                .value(0),
            5_000_000_000_000
        );
        let v = eval_rows("m % 1", &[1]).unwrap();
        assert_eq!(
            v.as_primitive::<arrow_array::types::Decimal128Type>()
                .value(0),
            -75
        );
    }

    #[test]
    fn strings_case_coalesce_cast() {
        assert_eq!(
            strings("s || '-' || t.name"),
            vec![Some("a-x".into()), None, None, Some("abc-w".into())]
        );
        assert_eq!(
            strings("CASE WHEN l > 6 THEN 'big' WHEN l > 0 THEN 'small' END"),
            vec![
                Some("small".into()),
                None,
                Some("big".into()),
                Some("big".into())
            ]
        );
        assert_eq!(
            strings("CASE l WHEN 5 THEN 'five' ELSE s END"),
            vec![
                Some("five".into()),
                Some("12".into()),
                None,
                Some("abc".into())
            ]
        );
        assert_eq!(
            strings("COALESCE(t.name, s, 'none')"),
            vec![
                Some("x".into()),
                Some("12".into()),
                Some("z".into()),
                Some("w".into())
            ]
        );
        assert_eq!(ints("CAST(s AS int) + 1", &[1, 2]), vec![Some(13), None]);
        let m = error("CAST(s AS int)", &[0]);
        assert!(m.contains("CAST(s AS integer)"), "{m}");
        assert_eq!(
            strings("CAST(i AS string)")[..3],
            [Some("1".into()), Some("0".into()), None]
        );
        // A value that does not fit its target is an error, not NULL or a wrapped value.
        assert!(error("CAST(l AS int)", &[3]).contains("CAST"));
    }

    #[test]
    fn general_predicates_evaluate_and_short_circuit() {
        let (b, schema) = batch();
        let pred = |text: &str| -> Vec<Option<bool>> {
            let p = bind(
                &parse_expr(text).unwrap(),
                &schema,
                &[],
                ColumnMappingMode::None,
            )
            .unwrap();
            crate::evaluate(&p, &b).unwrap().iter().collect()
        };
        assert_eq!(
            pred("t.id + 1 > l"),
            vec![Some(true), Some(true), None, Some(false)]
        );
        assert_eq!(
            pred("t.id / 2 = l"),
            vec![Some(true), Some(false), None, Some(false)]
        );
        // The right side runs only where the left is not FALSE, so no division by zero.
        assert_eq!(
            pred("i != 0 AND l / i > 1"),
            vec![Some(true), Some(false), None, Some(true)]
        );
        assert_eq!(
            pred("i = 0 OR l / i > 1"),
            vec![Some(true), Some(true), None, Some(true)]
        );
        assert_eq!(
            pred("COALESCE(t.name, 'z') = 'z'"),
            vec![Some(false), Some(true), Some(true), Some(false)]
        );
        assert_eq!(
            pred("s || 'x' IN ('ax', 'zz')"),
            vec![Some(true), Some(false), None, Some(false)]
        );
    }

    /// MERGE's shape: a schema `{t: struct<target>, s: struct<source>}` and a batch of two
    /// struct columns; bare names are qualified with `map_columns`, and an unmatched side
    /// (a NULL struct) reads as NULL fields.
    #[test]
    fn merge_shaped_batches_of_two_structs() {
        use crate::bind_assignment;
        let side = |ids: Vec<Option<i64>>, vs: Vec<Option<i32>>, valid: Vec<bool>| {
            let a = StructArray::from(vec![
                (
                    Arc::new(Field::new("id", ArrowType::Int64, true)),
                    Arc::new(Int64Array::from(ids)) as ArrayRef,
                ),
                (
                    Arc::new(Field::new("v", ArrowType::Int32, true)),
                    Arc::new(Int32Array::from(vs)) as ArrayRef,
                ),
            ]);
            StructArray::try_new(
                a.fields().clone(),
                a.columns().to_vec(),
                Some(arrow_buffer::NullBuffer::from(valid)),
            )
            .unwrap()
        };
        let t = side(
            vec![Some(1), Some(2), None],
            vec![Some(10), Some(20), None],
            vec![true, true, false],
        );
        let src = side(
            vec![Some(1), Some(9), Some(3)],
            vec![Some(5), None, Some(7)],
            vec![true, true, true],
        );
        let b = RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("t", t.data_type().clone(), true),
                Field::new("s", src.data_type().clone(), true),
            ])),
            vec![Arc::new(t), Arc::new(src)],
        )
        .unwrap();
        let fields = r#"{"type":"struct","fields":[
            {"name":"id","type":"long","nullable":true,"metadata":{}},
            {"name":"v","type":"integer","nullable":true,"metadata":{}}]}"#;
        let schema = StructType::from_json(&format!(
            r#"{{"type":"struct","fields":[
                {{"name":"t","type":{fields},"nullable":true,"metadata":{{}}}},
                {{"name":"s","type":{fields},"nullable":true,"metadata":{{}}}}]}}"#
        ))
        .unwrap();
        let on = bind(
            &parse_expr("t.id = s.id").unwrap(),
            &schema,
            &[],
            ColumnMappingMode::None,
        )
        .unwrap();
        let on: Vec<_> = crate::evaluate(&on, &b).unwrap().iter().collect();
        assert_eq!(on, vec![Some(true), Some(false), None]);
        // `SET v = v + s.v * 2`: the bare `v` is the target's.
        let set = parse_expr("v + s.v * 2").unwrap().map_columns(&mut |p| {
            if p.len() == 1 {
                vec!["t".to_string(), p[0].clone()]
            } else {
                p.to_vec()
            }
        });
        assert_eq!(set.to_string(), "t.v + s.v * 2");
        let target = DataType::Primitive(PrimitiveType::Long);
        let set = bind_assignment(&set, &schema, &[], ColumnMappingMode::None, &target).unwrap();
        let v = evaluate_value(&set, &b).unwrap();
        assert_eq!(v.data_type(), &ArrowType::Int64);
        let v: Vec<_> = v
            .as_primitive::<arrow_array::types::Int64Type>()
            .iter()
            .collect();
        assert_eq!(v, vec![Some(20), None, None]);
    }
}
