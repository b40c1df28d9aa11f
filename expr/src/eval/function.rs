//! Evaluation of function calls and LIKE over Arrow arrays, with Spark's semantics (see
//! [`Function`]): NULL in gives NULL out (except `greatest`, `least` and `nullif`, which
//! say otherwise), and a value that cannot be computed (an overflowing `abs`, a `floor`
//! beyond a bigint, a string that does not read as a date) is an error naming the
//! expression. Arrow's kernels do the string matching (`like`, `ilike`, `starts_with`,
//! `ends_with`, `contains`, `concat_elements_utf8`) and the comparisons.

use std::sync::Arc;

use arrow_arith::boolean::is_null;
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Decimal128Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type,
};
use arrow_array::{
    Array, ArrayRef, BooleanArray, Decimal128Array, Int32Array, Int64Array, PrimitiveArray,
    Scalar as ArrowScalar, StringArray, new_null_array,
};
use arrow_ord::cmp;
use arrow_schema::{ArrowError, DataType as ArrowType};
use arrow_select::nullif::nullif;
use arrow_select::zip::zip;
use arrow_string::concat_elements::concat_elements_utf8;

use alluvium_txlog::scalar::Scalar;
use alluvium_txlog::schema::arrow_type;

use super::value::{convert, evaluate_value, is_true};
use super::{failed, temporal};
use crate::like::to_arrow;
use crate::value::{BoundExpr, BoundKind};
use crate::{Function, Result, common_type};

/// `operand [NOT] [I]LIKE pattern`.
pub(super) fn like(
    operand: &ArrayRef,
    pattern_expr: &BoundExpr,
    pattern: &ArrayRef,
    escape: char,
    (case_insensitive, negated): (bool, bool),
    text: &str,
) -> Result<BooleanArray> {
    let n = operand.len();
    if operand.data_type() == &ArrowType::Null || pattern.data_type() == &ArrowType::Null {
        return Ok(BooleanArray::new_null(n));
    }
    let kernel = match (case_insensitive, negated) {
        (false, false) => arrow_string::like::like,
        (true, false) => arrow_string::like::ilike,
        (false, true) => arrow_string::like::nlike,
        (true, true) => arrow_string::like::nilike,
    };
    let run = |p: &dyn arrow_array::Datum| kernel(operand, p).map_err(|e| failed(text, e));
    if let BoundKind::Literal(Scalar::String(p)) = pattern_expr.kind() {
        let p = to_arrow(p, escape).map_err(|m| failed(text, m))?;
        return run(&ArrowScalar::new(StringArray::from(vec![p])));
    }
    let patterns: StringArray = pattern
        .as_string::<i32>()
        .iter()
        .map(|p| p.map(|p| to_arrow(p, escape)).transpose())
        .collect::<std::result::Result<_, _>>()
        .map_err(|m| failed(text, m))?;
    run(&patterns)
}

/// `function(args)` as the Arrow type `ty` (the type of the call's Delta type).
pub(super) fn call(
    function: Function,
    args: &[BoundExpr],
    batch: &arrow_array::RecordBatch,
    ty: &ArrowType,
    text: &str,
) -> Result<ArrayRef> {
    use Function as F;
    let n = batch.num_rows();
    let values: Vec<ArrayRef> = args
        .iter()
        .map(|a| evaluate_value(a, batch))
        .collect::<Result<_>>()?;
    let is_null_typed = |a: &ArrayRef| a.data_type() == &ArrowType::Null;
    // Most functions are NULL when an argument is: an untyped NULL argument makes every row
    // NULL. greatest, least and nullif treat NULL arguments themselves.
    if !matches!(function, F::Greatest | F::Least | F::NullIf) && values.iter().any(is_null_typed)
        || ty == &ArrowType::Null
    {
        return Ok(new_null_array(ty, n));
    }
    // The string arguments, checked once so that the kernels below can take them as
    // `StringArray`s (the binder typed them as strings; views arrive as Utf8 already).
    let string_args = match function {
        F::Lower | F::Upper | F::Trim | F::Ltrim | F::Rtrim | F::Concat | F::Replace => {
            values.len()
        }
        F::StartsWith | F::EndsWith | F::Contains => 2,
        F::Substring => 1,
        F::Length if values[0].data_type() != &ArrowType::Binary => 1,
        _ => 0,
    };
    if let Some(v) = values[..string_args]
        .iter()
        .find(|v| v.as_string_opt::<i32>().is_none())
    {
        return Err(failed(text, format!("{} is not a string", v.data_type())));
    }
    let empty = StringArray::from(Vec::<Option<&str>>::new());
    let string = |i: usize| -> &StringArray { values[i].as_string_opt::<i32>().unwrap_or(&empty) };
    let out: ArrayRef = match function {
        F::Lower => map_strings(string(0), |s| s.to_lowercase()),
        F::Upper => map_strings(string(0), |s| s.to_uppercase()),
        F::Trim => map_strings(string(0), |s| s.trim_matches(' ').to_string()),
        F::Ltrim => map_strings(string(0), |s| s.trim_start_matches(' ').to_string()),
        F::Rtrim => map_strings(string(0), |s| s.trim_end_matches(' ').to_string()),
        F::Length => match values[0].data_type() {
            ArrowType::Binary => {
                let b = values[0].as_binary::<i32>();
                Arc::new(
                    b.iter()
                        .map(|v| v.map(|v| i32::try_from(v.len()).unwrap_or(i32::MAX)))
                        .collect::<Int32Array>(),
                )
            }
            _ => Arc::new(
                string(0)
                    .iter()
                    .map(|v| v.map(|v| i32::try_from(v.chars().count()).unwrap_or(i32::MAX)))
                    .collect::<Int32Array>(),
            ),
        },
        F::Substring => {
            let long = |i: usize| -> Result<Option<Int64Array>> {
                values
                    .get(i)
                    .map(|a| Ok(convert(a, &ArrowType::Int64, text)?.as_primitive().clone()))
                    .transpose()
            };
            let (pos, len) = (long(1)?, long(2)?);
            let pos = pos.ok_or_else(|| failed(text, "missing position"))?;
            Arc::new(
                (0..n)
                    .map(|r| {
                        let s = string(0).is_valid(r).then(|| string(0).value(r))?;
                        let p = pos.is_valid(r).then(|| pos.value(r))?;
                        let l = match &len {
                            Some(l) => Some(l.is_valid(r).then(|| l.value(r))?),
                            None => None,
                        };
                        Some(substring_sql(s, p, l))
                    })
                    .collect::<StringArray>(),
            )
        }
        F::Concat => {
            let mut acc = string(0).clone();
            for i in 1..values.len() {
                acc = concat_elements_utf8(&acc, string(i))?;
            }
            Arc::new(acc)
        }
        F::StartsWith | F::EndsWith | F::Contains => {
            let kernel = match function {
                F::StartsWith => arrow_string::like::starts_with,
                F::EndsWith => arrow_string::like::ends_with,
                _ => arrow_string::like::contains,
            };
            Arc::new(kernel(&values[0], &values[1]).map_err(|e| failed(text, e))?)
        }
        F::Replace => Arc::new(
            (0..n)
                .map(|r| {
                    let get = |i: usize| -> Option<Option<&str>> {
                        match values.get(i) {
                            None => Some(Some("")),
                            Some(_) => {
                                let a = string(i);
                                Some(a.is_valid(r).then(|| a.value(r)))
                            }
                        }
                    };
                    let (s, search, with) = (get(0)??, get(1)??, get(2)??);
                    // An empty search would match between every character: Spark leaves
                    // the string as it is.
                    Some(if search.is_empty() {
                        s.to_string()
                    } else {
                        s.replace(search, with)
                    })
                })
                .collect::<StringArray>(),
        ),
        F::DateTrunc => temporal::date_trunc(&args[0], &values[1], ty, text)?,
        F::ToDate | F::ToTimestamp => temporal::convert(&values[0], args.get(1), ty, text)?,
        F::Abs => abs(&values[0], text)?,
        F::Round => {
            let places = match args.get(1).map(BoundExpr::kind) {
                Some(BoundKind::Literal(s)) => scalar_int(s).unwrap_or(0),
                _ => 0,
            };
            round(&values[0], places, ty, text)?
        }
        F::Floor | F::Ceil => floor_ceil(&values[0], function == F::Ceil, ty, text)?,
        F::Greatest | F::Least => {
            let mut result = new_null_array(ty, n);
            for v in values.iter().filter(|v| !is_null_typed(v)) {
                let v = convert(v, ty, text)?;
                let better = if function == F::Greatest {
                    cmp::gt(&v, &result)?
                } else {
                    cmp::lt(&v, &result)?
                };
                let take = arrow_arith::boolean::or(&is_null(&result)?, &is_true(&better))?;
                result = zip(&take, &v, &result)?;
            }
            result
        }
        F::NullIf => {
            let left = convert(&values[0], ty, text)?;
            if is_null_typed(&values[1]) {
                left
            } else {
                let common = common_type(args[0].data_type(), args[1].data_type())
                    .ok_or_else(|| failed(text, "the operands have no common type"))?;
                let common = arrow_type(&common)?;
                let equal = cmp::eq(
                    &convert(&values[0], &common, text)?,
                    &convert(&values[1], &common, text)?,
                )?;
                nullif(&left, &is_true(&equal))?
            }
        }
        F::CurrentDate | F::CurrentTimestamp => {
            return Err(failed(text, "the statement time was not bound"));
        }
    };
    convert(&out, ty, text)
}

fn map_strings(a: &StringArray, f: impl Fn(&str) -> String) -> ArrayRef {
    Arc::new(a.iter().map(|v| v.map(&f)).collect::<StringArray>())
}

/// Spark's `substring(s, pos, len)` on characters: `pos` is 1-based, 0 is read as 1, a
/// negative `pos` counts from the end; the window is cut to the string, and a window
/// before its start is empty.
fn substring_sql(s: &str, pos: i64, len: Option<i64>) -> String {
    let count = i64::try_from(s.chars().count()).unwrap_or(i64::MAX);
    let start = match pos {
        p if p > 0 => p - 1,
        p if p < 0 => count.saturating_add(p),
        _ => 0,
    };
    let end = len.map_or(i64::MAX, |l| start.saturating_add(l)).min(count);
    let start = start.max(0);
    if start >= end {
        return String::new();
    }
    let skip = usize::try_from(start).unwrap_or(usize::MAX);
    let take = usize::try_from(end - start).unwrap_or(usize::MAX);
    s.chars().skip(skip).take(take).collect()
}

fn scalar_int(s: &Scalar) -> Option<i64> {
    match s {
        Scalar::Byte(v) => Some(i64::from(*v)),
        Scalar::Short(v) => Some(i64::from(*v)),
        Scalar::Integer(v) => Some(i64::from(*v)),
        Scalar::Long(v) => Some(*v),
        _ => None,
    }
}

fn overflow() -> ArrowError {
    ArrowError::ArithmeticOverflow("overflow".into())
}

fn abs(a: &ArrayRef, text: &str) -> Result<ArrayRef> {
    let fail = |_| failed(text, "integer overflow");
    Ok(match a.data_type() {
        ArrowType::Int8 => Arc::new(
            a.as_primitive::<Int8Type>()
                .try_unary::<_, Int8Type, _>(|v| v.checked_abs().ok_or_else(overflow))
                .map_err(fail)?,
        ),
        ArrowType::Int16 => Arc::new(
            a.as_primitive::<Int16Type>()
                .try_unary::<_, Int16Type, _>(|v| v.checked_abs().ok_or_else(overflow))
                .map_err(fail)?,
        ),
        ArrowType::Int32 => Arc::new(
            a.as_primitive::<Int32Type>()
                .try_unary::<_, Int32Type, _>(|v| v.checked_abs().ok_or_else(overflow))
                .map_err(fail)?,
        ),
        ArrowType::Int64 => Arc::new(
            a.as_primitive::<Int64Type>()
                .try_unary::<_, Int64Type, _>(|v| v.checked_abs().ok_or_else(overflow))
                .map_err(fail)?,
        ),
        ArrowType::Float32 => Arc::new(
            a.as_primitive::<Float32Type>()
                .unary::<_, Float32Type>(f32::abs),
        ),
        ArrowType::Float64 => Arc::new(
            a.as_primitive::<Float64Type>()
                .unary::<_, Float64Type>(f64::abs),
        ),
        // |v| of a decimal fits its precision.
        ArrowType::Decimal128(p, s) => Arc::new(
            a.as_primitive::<Decimal128Type>()
                .unary::<_, Decimal128Type>(i128::wrapping_abs)
                .with_precision_and_scale(*p, *s)?,
        ),
        other => return Err(failed(text, format!("abs does not apply to {other}"))),
    })
}

fn pow10(k: u32) -> Option<i128> {
    10i128.checked_pow(k)
}

/// `n / d` rounded half away from zero (`d > 0`).
fn div_half_up(n: i128, d: i128) -> Option<i128> {
    let q = n.checked_div(d)?;
    let r = n.checked_rem(d)?;
    if r.unsigned_abs() * 2 >= d.unsigned_abs() {
        q.checked_add(if n < 0 { -1 } else { 1 })
    } else {
        Some(q)
    }
}

/// A double rounded half away from zero to `places`, as Spark rounds it: on the shortest
/// decimal text of the double (so `round(2.675, 2)` is 2.68, as written), not on its binary
/// value. NaN and the infinities stay as they are.
fn round_double(v: f64, places: i64) -> f64 {
    if !v.is_finite() {
        return v;
    }
    // The digits of |v| (Display never uses an exponent) and where the point is.
    let text = format!("{}", v.abs());
    let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
    let digits: Vec<u8> = int.bytes().chain(frac.bytes()).map(|b| b - b'0').collect();
    let point = i64::try_from(int.len()).unwrap_or(i64::MAX);
    let keep = point.saturating_add(places);
    let Ok(keep) = usize::try_from(keep) else {
        // Every digit is below the rounding position, and the first is a leading zero.
        return 0.0;
    };
    if keep >= digits.len() {
        return v;
    }
    let mut kept = digits[..keep].to_vec();
    if digits[keep] >= 5 {
        let mut carried = true;
        for d in kept.iter_mut().rev() {
            if *d == 9 {
                *d = 0;
            } else {
                *d += 1;
                carried = false;
                break;
            }
        }
        if carried {
            kept.insert(0, 1);
        }
    }
    let mantissa: String = if kept.is_empty() {
        "0".into()
    } else {
        kept.iter().map(|d| char::from(b'0' + d)).collect()
    };
    // The kept digits count units of 10^-places.
    let rounded: f64 = format!("{mantissa}e{}", places.saturating_neg())
        .parse()
        .unwrap_or(v.abs());
    if rounded == 0.0 {
        0.0
    } else if v < 0.0 {
        -rounded
    } else {
        rounded
    }
}

fn round(a: &ArrayRef, places: i64, ty: &ArrowType, text: &str) -> Result<ArrayRef> {
    let too_big = || failed(text, "the rounded value does not fit its type");
    let places_i32 = i32::try_from(places).unwrap_or(0);
    Ok(match (a.data_type(), ty) {
        (ArrowType::Float64, _) => Arc::new(
            a.as_primitive::<Float64Type>()
                .unary::<_, Float64Type>(|v| round_double(v, places)),
        ),
        (ArrowType::Float32, _) => Arc::new(
            a.as_primitive::<Float32Type>()
                .unary::<_, Float32Type>(|v| round_double(f64::from(v), places) as f32),
        ),
        (ArrowType::Decimal128(_, s), ArrowType::Decimal128(p, new_scale)) => {
            let s = u32::try_from(*s).unwrap_or(0);
            let limit = pow10(u32::from(*p)).ok_or_else(too_big)?;
            // Round at 10^-places, then express at the result scale.
            let (unit, back) = if places_i32 < 0 {
                let k = places_i32.unsigned_abs();
                (s + k, pow10(k).ok_or_else(too_big)?)
            } else {
                let target = u32::try_from(*new_scale).unwrap_or(0);
                (s.saturating_sub(target), 1)
            };
            let divisor = pow10(unit).ok_or_else(too_big)?;
            let values: Vec<Option<i128>> = a
                .as_primitive::<Decimal128Type>()
                .iter()
                .map(|v| match v {
                    None => Ok(None),
                    Some(v) => div_half_up(v, divisor)
                        .and_then(|q| q.checked_mul(back))
                        .filter(|r| r.unsigned_abs() < limit.unsigned_abs())
                        .map(Some)
                        .ok_or_else(too_big),
                })
                .collect::<Result<_>>()?;
            Arc::new(Decimal128Array::from(values).with_precision_and_scale(*p, *new_scale)?)
        }
        (ArrowType::Int8 | ArrowType::Int16 | ArrowType::Int32 | ArrowType::Int64, _) => {
            if places >= 0 {
                return Ok(a.clone());
            }
            let divisor = pow10(places.unsigned_abs().try_into().unwrap_or(u32::MAX));
            let longs = convert(a, &ArrowType::Int64, text)?;
            let values: Vec<Option<i64>> = longs
                .as_primitive::<Int64Type>()
                .iter()
                .map(|v| match (v, divisor) {
                    (None, _) => Ok(None),
                    // Rounding to more digits than an i64 has leaves nothing.
                    (Some(_), None) => Ok(Some(0)),
                    (Some(v), Some(d)) => div_half_up(i128::from(v), d)
                        .and_then(|q| q.checked_mul(d))
                        .and_then(|r| i64::try_from(r).ok())
                        .map(Some)
                        .ok_or_else(too_big),
                })
                .collect::<Result<_>>()?;
            convert(&(Arc::new(Int64Array::from(values)) as ArrayRef), ty, text)?
        }
        (other, _) => return Err(failed(text, format!("round does not apply to {other}"))),
    })
}

/// `floor(x)` (or `ceil(x)` when `up`) as the Arrow type `ty` (Int64, or a decimal of
/// scale 0).
fn floor_ceil(a: &ArrayRef, up: bool, ty: &ArrowType, text: &str) -> Result<ArrayRef> {
    let too_big = |v: f64| failed(text, format!("{v} does not fit a bigint"));
    Ok(match a.data_type() {
        ArrowType::Float32 | ArrowType::Float64 => {
            let d = convert(a, &ArrowType::Float64, text)?;
            let values: Vec<Option<i64>> = d
                .as_primitive::<Float64Type>()
                .iter()
                .map(|v| match v {
                    None => Ok(None),
                    Some(v) => {
                        let r = if up { v.ceil() } else { v.floor() };
                        // i64::MIN is -2^63 exactly; 2^63 is the first double above i64::MAX.
                        if r.is_finite()
                            && (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&r)
                        {
                            Ok(Some(r as i64))
                        } else {
                            Err(too_big(v))
                        }
                    }
                })
                .collect::<Result<_>>()?;
            Arc::new(Int64Array::from(values))
        }
        ArrowType::Decimal128(_, s) => {
            let divisor = pow10(u32::try_from(*s).unwrap_or(0))
                .ok_or_else(|| failed(text, "the scale is out of range"))?;
            let values: PrimitiveArray<Decimal128Type> =
                a.as_primitive::<Decimal128Type>().unary(|v| {
                    let q = v.div_euclid(divisor);
                    if up && v.rem_euclid(divisor) != 0 {
                        q + 1
                    } else {
                        q
                    }
                });
            let (p, _) = match ty {
                ArrowType::Decimal128(p, s) => (*p, *s),
                _ => (38, 0),
            };
            Arc::new(values.with_precision_and_scale(p, 0)?)
        }
        _ => convert(a, &ArrowType::Int64, text)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substring_follows_spark() {
        assert_eq!(substring_sql("hello", 2, Some(3)), "ell");
        assert_eq!(substring_sql("hello", 0, Some(2)), "he");
        assert_eq!(substring_sql("hello", -3, None), "llo");
        assert_eq!(substring_sql("hello", -3, Some(2)), "ll");
        assert_eq!(substring_sql("abc", -5, Some(3)), "a");
        assert_eq!(substring_sql("hello", 9, Some(2)), "");
        assert_eq!(substring_sql("hello", 2, Some(-1)), "");
        assert_eq!(substring_sql("héllo", 2, Some(2)), "él");
        assert_eq!(substring_sql("hello", i64::MAX, Some(i64::MAX)), "");
        // As Spark's int arithmetic: the window is computed before it is cut to the string.
        assert_eq!(substring_sql("hello", i64::MIN, Some(i64::MAX)), "hell");
    }

    #[test]
    fn doubles_round_half_up_on_their_decimal_text() {
        assert_eq!(round_double(2.5, 0), 3.0);
        assert_eq!(round_double(-2.5, 0), -3.0);
        assert_eq!(round_double(2.675, 2), 2.68);
        assert_eq!(round_double(1.005, 2), 1.01);
        assert_eq!(round_double(0.125, 2), 0.13);
        assert_eq!(round_double(1234.5, -2), 1200.0);
        assert_eq!(round_double(1250.0, -2), 1300.0);
        assert_eq!(round_double(9.99, 1), 10.0);
        assert_eq!(round_double(0.4, 0), 0.0);
        assert_eq!(round_double(5.0, -1), 10.0);
        assert_eq!(round_double(4.0, -1), 0.0);
        assert_eq!(round_double(1.5, 5), 1.5);
        assert!(round_double(f64::NAN, 1).is_nan());
        assert_eq!(round_double(f64::INFINITY, 1), f64::INFINITY);
        assert_eq!(round_double(1e300, 2), 1e300);
        assert_eq!(round_double(123.0, -5), 0.0);
    }
}
