//! Typing of function calls ([`Expr::Call`]): each argument is checked against what the
//! function takes and the result type follows Spark SQL (see [`Function`] for what each
//! computes). `current_date()` and `current_timestamp()` become constants here, at the
//! statement's instant (`clock.rs`).

use alluvium_txlog::scalar::Scalar;
use alluvium_txlog::schema::{DataType, PrimitiveType};

use crate::bind::Binder;
use crate::datetime::{TRUNC_UNITS, TruncUnit, chrono_format, day_of};
use crate::function::arity_words;
use crate::suggest::nearest;
use crate::typing::{is_integral, is_numeric};
use crate::value::{BoundExpr, BoundKind, about, prim, primitive_of, type_name};
use crate::{Expr, Function, Literal, Result};

/// Largest decimal precision.
const MAX_PRECISION: i64 = 38;

/// What an argument position takes, for checks and messages.
#[derive(Clone, Copy)]
enum Takes {
    String,
    StringOrBinary,
    Integral,
    Numeric,
    Temporal,
    /// A string, a date or a timestamp (`to_date`, `to_timestamp` without a format).
    Convertible,
}

impl Takes {
    fn accepts(self, t: PrimitiveType) -> bool {
        use PrimitiveType as P;
        t == P::Void
            || match self {
                Takes::String => t == P::String,
                Takes::StringOrBinary => matches!(t, P::String | P::Binary),
                Takes::Integral => is_integral(t),
                Takes::Numeric => is_numeric(t),
                Takes::Temporal => matches!(t, P::Date | P::Timestamp | P::TimestampNtz),
                Takes::Convertible => {
                    matches!(t, P::String | P::Date | P::Timestamp | P::TimestampNtz)
                }
            }
    }

    fn words(self) -> &'static str {
        match self {
            Takes::String => "a string",
            Takes::StringOrBinary => "a string or a binary",
            Takes::Integral => "an integer",
            Takes::Numeric => "a number",
            Takes::Temporal => "a date or a timestamp",
            Takes::Convertible => "a string, a date or a timestamp",
        }
    }

    /// The type an untyped literal in this position takes.
    fn hint(self) -> Option<DataType> {
        match self {
            Takes::String | Takes::StringOrBinary | Takes::Convertible => {
                Some(prim(PrimitiveType::String))
            }
            Takes::Integral => Some(prim(PrimitiveType::Integer)),
            Takes::Numeric | Takes::Temporal => None,
        }
    }
}

/// The string a literal argument holds, if it is one.
fn literal_text(e: &Expr) -> Option<&str> {
    match e {
        Expr::Literal(Literal::String(s)) => Some(s),
        Expr::Literal(Literal::Typed(Scalar::String(s))) => Some(s),
        _ => None,
    }
}

/// The integer a literal argument holds, if it is one.
fn literal_int(e: &Expr) -> Option<i64> {
    match e {
        Expr::Literal(Literal::Number(n)) => n.parse().ok(),
        Expr::Literal(Literal::Typed(s)) => match s {
            Scalar::Byte(v) => Some(i64::from(*v)),
            Scalar::Short(v) => Some(i64::from(*v)),
            Scalar::Integer(v) => Some(i64::from(*v)),
            Scalar::Long(v) => Some(*v),
            _ => None,
        },
        _ => None,
    }
}

/// Spark's result type of `round(x, scale)` for `decimal(p, s)`: one more integral digit
/// (rounding may carry), the scale cut to `scale` (0 for a negative one).
fn round_decimal(p: u8, s: u8, scale: i64) -> PrimitiveType {
    let (p, s) = (i64::from(p), i64::from(s));
    let integral = p - s + 1;
    let (precision, scale) = if scale < 0 {
        (integral.max(1 - scale), 0)
    } else {
        let new_scale = s.min(scale);
        (integral + new_scale, new_scale)
    };
    let precision = precision.clamp(1, MAX_PRECISION);
    PrimitiveType::Decimal(
        u8::try_from(precision).unwrap_or(38),
        u8::try_from(scale.min(precision)).unwrap_or(0),
    )
}

impl Binder<'_> {
    /// An argument bound and checked against what its position takes.
    fn argument(&self, call: &Expr, f: Function, arg: &Expr, takes: Takes) -> Result<BoundExpr> {
        let b = self.value(arg, takes.hint().as_ref())?;
        match primitive_of(&b.data_type) {
            Some(t) if takes.accepts(t) => Ok(b),
            _ => Err(about(
                call,
                format!(
                    "{} takes {}, not {} (`{arg}`)",
                    f.name(),
                    takes.words(),
                    type_name(&b.data_type)
                ),
            )),
        }
    }

    /// Binds `e`, a call of `function` with `args`.
    pub(crate) fn call(
        &self,
        e: &Expr,
        function: Function,
        args: &[Expr],
        hint: Option<&DataType>,
    ) -> Result<BoundExpr> {
        use Function as F;
        use PrimitiveType as P;
        let (min, max) = function.arity();
        if args.len() < min || max.is_some_and(|m| args.len() > m) {
            return Err(about(
                e,
                format!(
                    "{} takes {}, found {}",
                    function.name(),
                    arity_words(min, max),
                    args.len()
                ),
            ));
        }
        let arg = |i: usize, takes: Takes| self.argument(e, function, &args[i], takes);
        let all = |takes: Takes| -> Result<Vec<BoundExpr>> {
            (0..args.len()).map(|i| arg(i, takes)).collect()
        };
        let (bound, result): (Vec<BoundExpr>, DataType) = match function {
            F::CurrentDate | F::CurrentTimestamp => {
                let now = self.now_micros();
                let (value, t) = if function == F::CurrentDate {
                    let day = day_of(now).ok_or_else(|| about(e, "the date is out of range"))?;
                    (Scalar::Date(day), P::Date)
                } else {
                    (Scalar::Timestamp(now), P::Timestamp)
                };
                return Ok(BoundExpr {
                    kind: BoundKind::Literal(value),
                    data_type: prim(t),
                });
            }
            F::Lower | F::Upper | F::Trim | F::Ltrim | F::Rtrim => {
                (all(Takes::String)?, prim(P::String))
            }
            F::Length => (all(Takes::StringOrBinary)?, prim(P::Integer)),
            F::Substring => {
                let mut b = vec![arg(0, Takes::String)?];
                for i in 1..args.len() {
                    b.push(arg(i, Takes::Integral)?);
                }
                (b, prim(P::String))
            }
            F::Concat | F::Replace => (all(Takes::String)?, prim(P::String)),
            F::StartsWith | F::EndsWith | F::Contains => (all(Takes::String)?, prim(P::Boolean)),
            F::DateTrunc => {
                let unit = literal_text(&args[0]).ok_or_else(|| {
                    about(
                        e,
                        format!(
                            "date_trunc takes the unit as a quoted literal ('{}')",
                            TRUNC_UNITS.join("', '")
                        ),
                    )
                })?;
                if TruncUnit::from_name(unit).is_none() {
                    let hint = nearest(unit, TRUNC_UNITS)
                        .map(|u| format!("; did you mean '{u}'?"))
                        .unwrap_or_default();
                    return Err(about(e, format!("unknown date_trunc unit '{unit}'{hint}")));
                }
                let operand = arg(1, Takes::Temporal)?;
                let t = match primitive_of(&operand.data_type) {
                    Some(P::TimestampNtz) => P::TimestampNtz,
                    _ => P::Timestamp,
                };
                (vec![arg(0, Takes::String)?, operand], prim(t))
            }
            F::ToDate | F::ToTimestamp => {
                let t = if function == F::ToDate {
                    P::Date
                } else {
                    P::Timestamp
                };
                let b = if args.len() == 2 {
                    let format = literal_text(&args[1]).ok_or_else(|| {
                        about(
                            e,
                            format!(
                                "{} takes the format as a quoted literal ('yyyy-MM-dd')",
                                function.name()
                            ),
                        )
                    })?;
                    chrono_format(format).map_err(|m| about(e, m))?;
                    vec![arg(0, Takes::String)?, arg(1, Takes::String)?]
                } else {
                    vec![arg(0, Takes::Convertible)?]
                };
                (b, prim(t))
            }
            F::Abs => {
                let a = arg(0, Takes::Numeric)?;
                let t = a.data_type.clone();
                (vec![a], t)
            }
            F::Round => {
                let a = arg(0, Takes::Numeric)?;
                let mut b = vec![];
                let scale = if let Some(s) = args.get(1) {
                    let scale = literal_int(s)
                        .filter(|v| (-38..=38).contains(v))
                        .ok_or_else(|| {
                            about(
                                e,
                                "round takes the number of decimal places as an integer literal from -38 to 38",
                            )
                        })?;
                    b.push(arg(1, Takes::Integral)?);
                    scale
                } else {
                    0
                };
                let t = match primitive_of(&a.data_type) {
                    Some(P::Decimal(p, s)) => round_decimal(p, s, scale),
                    Some(t) => t,
                    None => P::Void,
                };
                b.insert(0, a);
                (b, prim(t))
            }
            F::Floor | F::Ceil => {
                let a = arg(0, Takes::Numeric)?;
                let t = match primitive_of(&a.data_type) {
                    Some(P::Decimal(p, 0)) => P::Decimal(p, 0),
                    Some(P::Decimal(p, s)) => {
                        let p = (i64::from(p) - i64::from(s) + 1).clamp(1, MAX_PRECISION);
                        P::Decimal(u8::try_from(p).unwrap_or(38), 0)
                    }
                    _ => P::Long,
                };
                (vec![a], prim(t))
            }
            F::Greatest | F::Least => {
                let refs: Vec<&Expr> = args.iter().collect();
                let (b, t) = self.group(e, &refs, hint)?;
                if !matches!(&t, DataType::Primitive(p) if *p != P::Variant) {
                    return Err(about(
                        e,
                        format!(
                            "{} cannot compare {} values",
                            function.name(),
                            type_name(&t)
                        ),
                    ));
                }
                (b, t)
            }
            F::NullIf => {
                let (l, r) = self.comparison_operands(e, &args[0], &args[1])?;
                let t = l.data_type.clone();
                (vec![l, r], t)
            }
        };
        Ok(BoundExpr {
            kind: BoundKind::Call {
                function,
                args: bound,
                text: e.to_string(),
            },
            data_type: result,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_types_follow_spark() {
        assert_eq!(round_decimal(10, 2, 1), PrimitiveType::Decimal(10, 1));
        assert_eq!(round_decimal(10, 2, 0), PrimitiveType::Decimal(9, 0));
        assert_eq!(round_decimal(10, 2, 5), PrimitiveType::Decimal(11, 2));
        assert_eq!(round_decimal(5, 0, -2), PrimitiveType::Decimal(6, 0));
        assert_eq!(round_decimal(38, 10, 2), PrimitiveType::Decimal(31, 2));
        assert_eq!(round_decimal(38, 0, 0), PrimitiveType::Decimal(38, 0));
    }
}
