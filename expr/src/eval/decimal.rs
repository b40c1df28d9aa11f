//! Exact decimal arithmetic over `Decimal128` arrays, at the result precision and scale the
//! binder chose (Spark's rules): operands are aligned, the exact result is rounded half up
//! to the result scale, and a result that does not fit the result precision is an overflow
//! error, never a wrapped or NULL value.

use arrow_array::cast::AsArray;
use arrow_array::types::Decimal128Type;
use arrow_array::{Array, ArrayRef, Decimal128Array};
use arrow_schema::DataType as ArrowType;
use std::sync::Arc;

use crate::ArithOp;

use super::failed;
use crate::Result;

fn pow10(k: u32) -> Option<i128> {
    10i128.checked_pow(k)
}

/// `n / d` rounded half away from zero (`d != 0`).
fn div_round(n: i128, d: i128) -> Option<i128> {
    let q = n.checked_div(d)?;
    let r = n.checked_rem(d)?;
    let (ra, da) = (r.unsigned_abs(), d.unsigned_abs());
    if ra >= da - ra {
        let away = if (n < 0) == (d < 0) { 1 } else { -1 };
        q.checked_add(away)
    } else {
        Some(q)
    }
}

/// `v` at scale `from` re-expressed at scale `to` (rounded half up when `to < from`).
fn rescale(v: i128, from: u32, to: u32) -> Option<i128> {
    if to >= from {
        v.checked_mul(pow10(to - from)?)
    } else {
        div_round(v, pow10(from - to)?)
    }
}

enum Failure {
    Overflow,
    DivideByZero,
}

fn one(op: ArithOp, a: i128, sa: u32, b: i128, sb: u32, s: u32) -> Result<i128, Failure> {
    use Failure::*;
    let common = sa.max(sb);
    let v = match op {
        ArithOp::Add | ArithOp::Sub => {
            let (x, y) = (rescale(a, sa, common), rescale(b, sb, common));
            let (x, y) = (x.ok_or(Overflow)?, y.ok_or(Overflow)?);
            let v = if op == ArithOp::Add {
                x.checked_add(y)
            } else {
                x.checked_sub(y)
            };
            rescale(v.ok_or(Overflow)?, common, s)
        }
        ArithOp::Mul => rescale(a.checked_mul(b).ok_or(Overflow)?, sa + sb, s),
        ArithOp::Div => {
            if b == 0 {
                return Err(DivideByZero);
            }
            // a/10^sa / (b/10^sb) at scale s = a * 10^(s - sa + sb) / b.
            let exp = i64::from(s) - i64::from(sa) + i64::from(sb);
            if exp >= 0 {
                let shift = pow10(u32::try_from(exp).map_err(|_| Overflow)?).ok_or(Overflow)?;
                div_round(a.checked_mul(shift).ok_or(Overflow)?, b)
            } else {
                let shift = pow10(u32::try_from(-exp).map_err(|_| Overflow)?).ok_or(Overflow)?;
                div_round(a, b.checked_mul(shift).ok_or(Overflow)?)
            }
        }
        ArithOp::Mod => {
            let (x, y) = (rescale(a, sa, common), rescale(b, sb, common));
            let (x, y) = (x.ok_or(Overflow)?, y.ok_or(Overflow)?);
            if y == 0 {
                return Err(DivideByZero);
            }
            rescale(x.checked_rem(y).ok_or(Overflow)?, common, s)
        }
    };
    v.ok_or(Overflow)
}

fn scale_of(a: &dyn Array) -> u32 {
    match a.data_type() {
        ArrowType::Decimal128(_, s) => u32::try_from(*s).unwrap_or(0),
        _ => 0,
    }
}

/// `left op right` for two `Decimal128` arrays, as `decimal(precision, scale)`.
///
/// # Errors
/// `ExprError::Invalid` naming `text` on overflow (a result beyond `precision` digits) and
/// on division or modulo by zero.
pub(super) fn arith(
    op: ArithOp,
    left: &ArrayRef,
    right: &ArrayRef,
    precision: u8,
    scale: u8,
    text: &str,
) -> Result<ArrayRef> {
    let (sa, sb) = (scale_of(left.as_ref()), scale_of(right.as_ref()));
    let (Some(l), Some(r)) = (
        left.as_primitive_opt::<Decimal128Type>(),
        right.as_primitive_opt::<Decimal128Type>(),
    ) else {
        return Err(failed(text, "operands are not decimals"));
    };
    let limit = pow10(u32::from(precision)).unwrap_or(i128::MAX);
    let s = u32::from(scale);
    let mut out = Vec::with_capacity(l.len());
    for i in 0..l.len() {
        if l.is_null(i) || r.is_null(i) {
            out.push(None);
            continue;
        }
        let v = match one(op, l.value(i), sa, r.value(i), sb, s) {
            Ok(v) if v.unsigned_abs() < limit.unsigned_abs() => v,
            Ok(_) | Err(Failure::Overflow) => {
                return Err(failed(
                    text,
                    format!(
                        "decimal overflow (the result does not fit decimal({precision},{scale}))"
                    ),
                ));
            }
            Err(Failure::DivideByZero) => return Err(failed(text, "division by zero")),
        };
        out.push(Some(v));
    }
    Ok(Arc::new(
        Decimal128Array::from(out)
            .with_precision_and_scale(precision, i8::try_from(scale).unwrap_or(0))?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_and_rescaling() {
        assert_eq!(div_round(15, 10), Some(2));
        assert_eq!(div_round(-15, 10), Some(-2));
        assert_eq!(div_round(14, 10), Some(1));
        assert_eq!(div_round(-14, -10), Some(1));
        assert_eq!(rescale(125, 2, 1), Some(13));
        assert_eq!(rescale(125, 2, 4), Some(12500));
        // 1.00 / 3 at scale 6 = 0.333333
        assert!(matches!(one(ArithOp::Div, 100, 2, 3, 0, 6), Ok(333_333)));
        // 2.00 / 3 rounds up.
        assert!(matches!(one(ArithOp::Div, 200, 2, 3, 0, 6), Ok(666_667)));
        // -7.5 % 2 = -1.5 (sign of the dividend).
        assert!(matches!(one(ArithOp::Mod, -75, 1, 2, 0, 1), Ok(-15)));
        assert!(matches!(
            one(ArithOp::Mod, 1, 0, 0, 0, 0),
            Err(Failure::DivideByZero)
        ));
        assert!(matches!(
            one(ArithOp::Mul, i128::MAX, 0, 2, 0, 0),
            Err(Failure::Overflow)
        ));
    }
}
