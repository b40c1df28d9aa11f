//! Type rules of value expressions, after Spark SQL: the common type two values are compared
//! or unified at (`CASE`, `COALESCE`, `IN`), the result type of arithmetic, and which
//! `CAST`s exist.
//!
//! * Integral operands widen to the wider integral type (`int + long` is `long`); `/` on
//!   integral or floating operands is `double`; `%` keeps the integral type.
//! * `float` with an integral type is `float`, with a decimal or `double` it is `double`.
//! * An integral type meets a decimal as `decimal(3,0)` (byte), `(5,0)` (short), `(10,0)`
//!   (int) or `(20,0)` (long). Decimal results follow Spark with precision loss allowed:
//!   `+`/`-`: scale `max(s1,s2)`, precision `max(p1-s1,p2-s2) + scale + 1`; `*`: `(p1+p2+1,
//!   s1+s2)`; `/`: scale `max(6, s1+p2+1)`, precision `p1-s1+s2+scale`; `%`: scale
//!   `max(s1,s2)`, precision `min(p1-s1,p2-s2) + scale`. A precision above 38 becomes 38 and
//!   the scale shrinks to keep the integral digits, but never below `min(scale, 6)`.
//! * `void` (an untyped NULL) takes the other side's type.

use crate::ArithOp;
use alluvium_txlog::schema::{DataType, PrimitiveType};

/// Largest decimal precision.
const MAX_PRECISION: u32 = 38;

/// True for byte, short, integer, long, float, double and decimal.
pub(crate) fn is_numeric(t: PrimitiveType) -> bool {
    is_integral(t)
        || matches!(
            t,
            PrimitiveType::Float | PrimitiveType::Double | PrimitiveType::Decimal(..)
        )
}

/// True for byte, short, integer and long.
pub(crate) fn is_integral(t: PrimitiveType) -> bool {
    matches!(
        t,
        PrimitiveType::Byte | PrimitiveType::Short | PrimitiveType::Integer | PrimitiveType::Long
    )
}

fn integral_rank(t: PrimitiveType) -> u8 {
    match t {
        PrimitiveType::Byte => 1,
        PrimitiveType::Short => 2,
        PrimitiveType::Integer => 3,
        _ => 4,
    }
}

/// The decimal type holding every value of an integral or decimal type.
pub(crate) fn as_decimal(t: PrimitiveType) -> Option<(u32, u32)> {
    Some(match t {
        PrimitiveType::Byte => (3, 0),
        PrimitiveType::Short => (5, 0),
        PrimitiveType::Integer => (10, 0),
        PrimitiveType::Long => (20, 0),
        PrimitiveType::Decimal(p, s) => (u32::from(p), u32::from(s)),
        _ => return None,
    })
}

fn decimal(p: u32, s: u32) -> PrimitiveType {
    let p = p.clamp(1, MAX_PRECISION);
    PrimitiveType::Decimal(p as u8, s.min(p) as u8)
}

/// Spark's `adjustPrecisionScale` (precision loss allowed).
fn adjusted(p: u32, s: u32) -> PrimitiveType {
    if p <= MAX_PRECISION {
        return decimal(p, s);
    }
    let int_digits = p - s;
    let min_scale = s.min(6);
    let scale = MAX_PRECISION.saturating_sub(int_digits).max(min_scale);
    decimal(MAX_PRECISION, scale)
}

/// The numeric type two numeric types meet at.
fn numeric_common(a: PrimitiveType, b: PrimitiveType) -> PrimitiveType {
    use PrimitiveType::*;
    match (a, b) {
        (Double, _) | (_, Double) => Double,
        (Float, Decimal(..)) | (Decimal(..), Float) => Double,
        (Float, _) | (_, Float) => Float,
        (x, y) if is_integral(x) && is_integral(y) => {
            if integral_rank(x) >= integral_rank(y) {
                x
            } else {
                y
            }
        }
        (x, y) => match (as_decimal(x), as_decimal(y)) {
            (Some((p1, s1)), Some((p2, s2))) => {
                let s = s1.max(s2);
                decimal((p1 - s1).max(p2 - s2) + s, s)
            }
            _ => Double,
        },
    }
}

/// The type two values are compared or unified at, `None` if they cannot be.
pub fn common_type(a: &DataType, b: &DataType) -> Option<DataType> {
    use PrimitiveType::*;
    if a == b {
        return Some(a.clone());
    }
    let (DataType::Primitive(x), DataType::Primitive(y)) = (a, b) else {
        return None;
    };
    Some(DataType::Primitive(match (*x, *y) {
        (Void, t) | (t, Void) => t,
        (x, y) if is_numeric(x) && is_numeric(y) => numeric_common(x, y),
        (Date, Timestamp) | (Timestamp, Date) => Timestamp,
        (Date, TimestampNtz) | (TimestampNtz, Date) => TimestampNtz,
        _ => return None,
    }))
}

/// The result type of `a op b` for numeric `a` and `b` (`None` if either is not numeric).
pub fn arith_result_type(op: ArithOp, a: PrimitiveType, b: PrimitiveType) -> Option<PrimitiveType> {
    use PrimitiveType::*;
    if !is_numeric(a) || !is_numeric(b) {
        return None;
    }
    let any_decimal = matches!(a, Decimal(..)) || matches!(b, Decimal(..));
    let any_float = matches!(a, Float | Double) || matches!(b, Float | Double);
    if op == ArithOp::Div && !any_decimal {
        return Some(Double);
    }
    if any_float || !any_decimal {
        return Some(numeric_common(a, b));
    }
    let ((p1, s1), (p2, s2)) = (as_decimal(a)?, as_decimal(b)?);
    Some(match op {
        ArithOp::Add | ArithOp::Sub => {
            let s = s1.max(s2);
            adjusted((p1 - s1).max(p2 - s2) + s + 1, s)
        }
        ArithOp::Mul => adjusted(p1 + p2 + 1, s1 + s2),
        ArithOp::Div => {
            let s = 6.max(s1 + p2 + 1);
            adjusted(p1 - s1 + s2 + s, s)
        }
        ArithOp::Mod => {
            let s = s1.max(s2);
            decimal((p1 - s1).min(p2 - s2) + s, s)
        }
    })
}

/// Whether `CAST(from AS to)` exists (Spark's rules, over Delta's primitive types).
pub(crate) fn can_cast(from: PrimitiveType, to: PrimitiveType) -> bool {
    use PrimitiveType::*;
    if from == to || from == Void {
        return true;
    }
    match (from, to) {
        (Variant, _) | (_, Variant) | (_, Void) => false,
        (_, String) => true,
        (String, _) => true,
        (x, y) if is_numeric(x) && is_numeric(y) => true,
        (Boolean, y) | (y, Boolean) => is_numeric(y),
        (Date, Timestamp | TimestampNtz) | (Timestamp | TimestampNtz, Date) => true,
        (Timestamp, TimestampNtz) | (TimestampNtz, Timestamp) => true,
        _ => false,
    }
}

/// Whether a value of type `from` may be stored in a column of type `to` (an UPDATE or
/// MERGE assignment): the same type, NULL, any numeric into any numeric (checked at run
/// time: a value that does not fit is an overflow error), a date into a timestamp.
pub(crate) fn can_assign(from: &DataType, to: &DataType) -> bool {
    use PrimitiveType::*;
    if from == to {
        return true;
    }
    match (from, to) {
        (DataType::Primitive(Void), _) => true,
        (DataType::Primitive(x), DataType::Primitive(y)) => {
            (is_numeric(*x) && is_numeric(*y)) || matches!((x, y), (Date, Timestamp | TimestampNtz))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use PrimitiveType::*;

    #[test]
    fn spark_result_types() {
        assert_eq!(arith_result_type(ArithOp::Add, Integer, Long), Some(Long));
        assert_eq!(arith_result_type(ArithOp::Mul, Byte, Short), Some(Short));
        assert_eq!(
            arith_result_type(ArithOp::Div, Integer, Integer),
            Some(Double)
        );
        assert_eq!(arith_result_type(ArithOp::Mod, Integer, Long), Some(Long));
        assert_eq!(arith_result_type(ArithOp::Add, Float, Integer), Some(Float));
        assert_eq!(
            arith_result_type(ArithOp::Add, Float, Decimal(5, 2)),
            Some(Double)
        );
        assert_eq!(
            arith_result_type(ArithOp::Add, Decimal(10, 2), Decimal(5, 3)),
            Some(Decimal(12, 3))
        );
        assert_eq!(
            arith_result_type(ArithOp::Mul, Decimal(10, 2), Decimal(5, 3)),
            Some(Decimal(16, 5))
        );
        assert_eq!(
            arith_result_type(ArithOp::Div, Decimal(10, 2), Decimal(5, 3)),
            Some(Decimal(19, 8))
        );
        assert_eq!(
            arith_result_type(ArithOp::Mod, Decimal(10, 2), Decimal(5, 3)),
            Some(Decimal(5, 3))
        );
        assert_eq!(
            arith_result_type(ArithOp::Add, Decimal(10, 2), Integer),
            Some(Decimal(13, 2))
        );
        // Precision loss: 38 digits, integral digits kept, scale at least 6.
        assert_eq!(
            arith_result_type(ArithOp::Mul, Decimal(38, 10), Decimal(38, 10)),
            Some(Decimal(38, 6))
        );
        assert_eq!(
            arith_result_type(ArithOp::Div, Decimal(38, 18), Decimal(38, 18)),
            Some(Decimal(38, 6))
        );
        assert_eq!(arith_result_type(ArithOp::Add, String, Integer), None);
        let p = |t| DataType::Primitive(t);
        assert_eq!(
            common_type(&p(Integer), &p(Decimal(5, 2))),
            Some(p(Decimal(12, 2)))
        );
        assert_eq!(common_type(&p(Void), &p(String)), Some(p(String)));
        assert_eq!(common_type(&p(Date), &p(Timestamp)), Some(p(Timestamp)));
        assert_eq!(common_type(&p(String), &p(Integer)), None);
        assert!(can_cast(String, Decimal(5, 2)) && can_cast(Boolean, Integer));
        assert!(!can_cast(Date, Integer) && !can_cast(Binary, Integer));
    }
}
