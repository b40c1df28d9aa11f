//! The typed builder on [`Expr`] for library users, and rewriting of column paths.
//!
//! ```
//! use alluvium_expr::{Expr, Interval, parse_expr};
//! use alluvium_txlog::schema::{DataType, PrimitiveType};
//!
//! // price * 2 + 1
//! let e = Expr::column("price").mul(Expr::lit(2)).add(Expr::lit(1));
//! assert_eq!(e.to_string(), "price * 2 + 1");
//! // CASE WHEN qty > 10 THEN 'bulk' ELSE 'retail' END
//! let e = Expr::case_when(
//!     vec![(Expr::column("qty").gt(Expr::lit(10)), Expr::lit("bulk"))],
//!     Some(Expr::lit("retail")),
//! );
//! assert_eq!(parse_expr(&e.to_string()).unwrap(), e);
//! let e = Expr::coalesce(vec![Expr::column("a"), Expr::lit(0)])
//!     .cast(DataType::Primitive(PrimitiveType::Long));
//! assert_eq!(e.to_string(), "CAST(COALESCE(a, 0) AS long)");
//! // lower(name) LIKE 'a%' AND ts >= current_timestamp() - INTERVAL 1 DAY
//! let e = Expr::column("name")
//!     .lower()
//!     .like("a%")
//!     .and(Expr::column("ts").ge(Expr::current_timestamp().sub(Expr::lit(Interval::days(1)))));
//! assert_eq!(
//!     e.to_string(),
//!     "lower(name) LIKE 'a%' AND ts >= current_timestamp() - INTERVAL 1 DAY"
//! );
//! assert_eq!(parse_expr(&e.to_string()).unwrap(), e);
//! ```

use crate::{ArithOp, CmpOp, DateField, Expr, Function, Interval, Literal};
use alluvium_txlog::scalar::Scalar;
use alluvium_txlog::schema::DataType;

impl Expr {
    /// A column reference by one name (`Expr::column("a")`; a name containing a dot is ONE
    /// name, use [`Expr::path`] for nested fields).
    pub fn column(name: &str) -> Expr {
        Expr::Column(vec![name.to_string()])
    }

    /// A nested column reference: `Expr::path(["t", "id"])` is `t.id` (field `id` of the
    /// struct column `t`).
    pub fn path<S: Into<String>>(segments: impl IntoIterator<Item = S>) -> Expr {
        Expr::Column(segments.into_iter().map(Into::into).collect())
    }

    /// A literal: numbers are typed by the context they are used in (as in SQL text),
    /// strings, booleans and [`Scalar`]s are what they are, `Literal::Null` is NULL.
    pub fn lit(value: impl Into<Literal>) -> Expr {
        Expr::Literal(value.into())
    }

    /// `self op value` (a comparison with a literal).
    pub fn cmp(self, op: CmpOp, value: Literal) -> Expr {
        Expr::Cmp(Box::new(self), op, Box::new(Expr::Literal(value)))
    }

    /// `self op other` (a comparison between two expressions).
    pub fn compare(self, op: CmpOp, other: Expr) -> Expr {
        Expr::Cmp(Box::new(self), op, Box::new(other))
    }

    /// `self = other`.
    #[allow(clippy::should_implement_trait)] // SQL equality builds an expression, not a bool
    pub fn eq(self, other: Expr) -> Expr {
        self.compare(CmpOp::Eq, other)
    }

    /// `self != other`.
    #[allow(clippy::should_implement_trait)] // as `eq`
    pub fn ne(self, other: Expr) -> Expr {
        self.compare(CmpOp::Ne, other)
    }

    /// `self < other`.
    pub fn lt(self, other: Expr) -> Expr {
        self.compare(CmpOp::Lt, other)
    }

    /// `self <= other`.
    pub fn le(self, other: Expr) -> Expr {
        self.compare(CmpOp::Le, other)
    }

    /// `self > other`.
    pub fn gt(self, other: Expr) -> Expr {
        self.compare(CmpOp::Gt, other)
    }

    /// `self >= other`.
    pub fn ge(self, other: Expr) -> Expr {
        self.compare(CmpOp::Ge, other)
    }

    /// `self AND other`.
    pub fn and(self, other: Expr) -> Expr {
        Expr::And(Box::new(self), Box::new(other))
    }

    /// `self OR other`.
    pub fn or(self, other: Expr) -> Expr {
        Expr::Or(Box::new(self), Box::new(other))
    }

    /// `NOT self`.
    #[allow(clippy::should_implement_trait)] // builds an expression
    pub fn not(self) -> Expr {
        Expr::Not(Box::new(self))
    }

    /// `self IS NULL`.
    pub fn is_null(self) -> Expr {
        Expr::IsNull {
            expr: Box::new(self),
            negated: false,
        }
    }

    /// `self IS NOT NULL`.
    pub fn is_not_null(self) -> Expr {
        Expr::IsNull {
            expr: Box::new(self),
            negated: true,
        }
    }

    /// `self IN (values)`.
    pub fn is_in(self, values: impl IntoIterator<Item = impl Into<Literal>>) -> Expr {
        Expr::In {
            expr: Box::new(self),
            list: values.into_iter().map(Into::into).collect(),
            negated: false,
        }
    }

    /// `self NOT IN (values)`.
    pub fn not_in(self, values: impl IntoIterator<Item = impl Into<Literal>>) -> Expr {
        Expr::In {
            expr: Box::new(self),
            list: values.into_iter().map(Into::into).collect(),
            negated: true,
        }
    }

    /// `self op other`, arithmetic.
    pub fn arith(self, op: ArithOp, other: Expr) -> Expr {
        Expr::Arith(Box::new(self), op, Box::new(other))
    }

    /// `self + other`.
    #[allow(clippy::should_implement_trait)] // builds an expression; the value may fail
    pub fn add(self, other: Expr) -> Expr {
        self.arith(ArithOp::Add, other)
    }

    /// `self - other`.
    #[allow(clippy::should_implement_trait)] // as `add`
    pub fn sub(self, other: Expr) -> Expr {
        self.arith(ArithOp::Sub, other)
    }

    /// `self * other`.
    #[allow(clippy::should_implement_trait)] // as `add`
    pub fn mul(self, other: Expr) -> Expr {
        self.arith(ArithOp::Mul, other)
    }

    /// `self / other`.
    #[allow(clippy::should_implement_trait)] // as `add`
    pub fn div(self, other: Expr) -> Expr {
        self.arith(ArithOp::Div, other)
    }

    /// `self % other`.
    #[allow(clippy::should_implement_trait)] // as `add`
    pub fn rem(self, other: Expr) -> Expr {
        self.arith(ArithOp::Mod, other)
    }

    /// `-self`.
    #[allow(clippy::should_implement_trait)] // as `add`
    pub fn neg(self) -> Expr {
        Expr::Neg(Box::new(self))
    }

    /// `self || other`.
    pub fn concat(self, other: Expr) -> Expr {
        Expr::Concat(Box::new(self), Box::new(other))
    }

    /// `CAST(self AS data_type)`.
    pub fn cast(self, data_type: DataType) -> Expr {
        Expr::Cast(Box::new(self), data_type)
    }

    /// `CASE WHEN c1 THEN v1 ... [ELSE otherwise] END`.
    pub fn case_when(branches: Vec<(Expr, Expr)>, otherwise: Option<Expr>) -> Expr {
        Expr::Case {
            branches,
            otherwise: otherwise.map(Box::new),
        }
    }

    /// `COALESCE(args...)`.
    pub fn coalesce(args: Vec<Expr>) -> Expr {
        Expr::Coalesce(args)
    }

    /// `self BETWEEN low AND high`, which is `self >= low AND self <= high`.
    pub fn between(self, low: Expr, high: Expr) -> Expr {
        self.clone().ge(low).and(self.le(high))
    }

    /// `self NOT BETWEEN low AND high`.
    pub fn not_between(self, low: Expr, high: Expr) -> Expr {
        self.between(low, high).not()
    }

    fn like_form(self, pattern: Expr, case_insensitive: bool, negated: bool) -> Expr {
        Expr::Like {
            expr: Box::new(self),
            pattern: Box::new(pattern),
            escape: None,
            case_insensitive,
            negated,
        }
    }

    /// `self LIKE pattern` (a string pattern: `_` one character, `%` any run, `\`
    /// escapes).
    pub fn like(self, pattern: impl Into<Literal>) -> Expr {
        self.like_form(Expr::lit(pattern), false, false)
    }

    /// `self NOT LIKE pattern`.
    pub fn not_like(self, pattern: impl Into<Literal>) -> Expr {
        self.like_form(Expr::lit(pattern), false, true)
    }

    /// `self ILIKE pattern` (case-insensitive).
    pub fn ilike(self, pattern: impl Into<Literal>) -> Expr {
        self.like_form(Expr::lit(pattern), true, false)
    }

    /// `self NOT ILIKE pattern`.
    pub fn not_ilike(self, pattern: impl Into<Literal>) -> Expr {
        self.like_form(Expr::lit(pattern), true, true)
    }

    /// The same LIKE with `ESCAPE 'c'`; any other expression is returned as it is.
    pub fn escape(self, c: char) -> Expr {
        match self {
            Expr::Like {
                expr,
                pattern,
                case_insensitive,
                negated,
                ..
            } => Expr::Like {
                expr,
                pattern,
                escape: Some(c),
                case_insensitive,
                negated,
            },
            other => other,
        }
    }

    /// `self IS DISTINCT FROM other` (NULL-safe `!=`).
    pub fn is_distinct_from(self, other: Expr) -> Expr {
        Expr::IsDistinctFrom {
            left: Box::new(self),
            right: Box::new(other),
            negated: false,
        }
    }

    /// `self IS NOT DISTINCT FROM other` (NULL-safe `=`).
    pub fn is_not_distinct_from(self, other: Expr) -> Expr {
        Expr::IsDistinctFrom {
            left: Box::new(self),
            right: Box::new(other),
            negated: true,
        }
    }

    /// `function(args...)`. The arity is checked when binding.
    pub fn call(function: Function, args: Vec<Expr>) -> Expr {
        Expr::Call { function, args }
    }

    fn call1(self, function: Function) -> Expr {
        Expr::call(function, vec![self])
    }

    /// `lower(self)`.
    pub fn lower(self) -> Expr {
        self.call1(Function::Lower)
    }

    /// `upper(self)`.
    pub fn upper(self) -> Expr {
        self.call1(Function::Upper)
    }

    /// `trim(self)`.
    pub fn trim(self) -> Expr {
        self.call1(Function::Trim)
    }

    /// `length(self)`.
    pub fn length(self) -> Expr {
        self.call1(Function::Length)
    }

    /// `substring(self, pos[, len])`.
    pub fn substring(self, pos: Expr, len: Option<Expr>) -> Expr {
        let mut args = vec![self, pos];
        args.extend(len);
        Expr::call(Function::Substring, args)
    }

    /// `starts_with(self, prefix)`.
    pub fn starts_with(self, prefix: Expr) -> Expr {
        Expr::call(Function::StartsWith, vec![self, prefix])
    }

    /// `ends_with(self, suffix)`.
    pub fn ends_with(self, suffix: Expr) -> Expr {
        Expr::call(Function::EndsWith, vec![self, suffix])
    }

    /// `contains(self, part)`.
    pub fn contains(self, part: Expr) -> Expr {
        Expr::call(Function::Contains, vec![self, part])
    }

    /// `replace(self, search, replacement)`.
    pub fn replace(self, search: Expr, replacement: Expr) -> Expr {
        Expr::call(Function::Replace, vec![self, search, replacement])
    }

    /// `abs(self)`.
    pub fn abs(self) -> Expr {
        self.call1(Function::Abs)
    }

    /// `round(self, places)`.
    pub fn round(self, places: i32) -> Expr {
        Expr::call(Function::Round, vec![self, Expr::lit(places)])
    }

    /// `floor(self)`.
    pub fn floor(self) -> Expr {
        self.call1(Function::Floor)
    }

    /// `ceil(self)`.
    pub fn ceil(self) -> Expr {
        self.call1(Function::Ceil)
    }

    /// `date_trunc('unit', self)` (unit: `YEAR`, `MONTH`, `DAY`, `HOUR`, ...).
    pub fn date_trunc(self, unit: &str) -> Expr {
        Expr::call(Function::DateTrunc, vec![Expr::lit(unit), self])
    }

    /// A calendar field of `self` (`YEAR(self)`, `HOUR(self)`, ...).
    pub fn date_part(self, field: DateField) -> Expr {
        Expr::DatePart(field, Box::new(self))
    }

    /// `current_date()`.
    pub fn current_date() -> Expr {
        Expr::call(Function::CurrentDate, vec![])
    }

    /// `current_timestamp()`.
    pub fn current_timestamp() -> Expr {
        Expr::call(Function::CurrentTimestamp, vec![])
    }

    /// A copy with every column path replaced by `f(path)` (MERGE uses it to qualify bare
    /// names with `t.` or `s.`).
    pub fn map_columns(&self, f: &mut dyn FnMut(&[String]) -> Vec<String>) -> Expr {
        let mut b = |e: &Expr| Box::new(e.map_columns(f));
        match self {
            Expr::Column(path) => Expr::Column(f(path)),
            Expr::Literal(l) => Expr::Literal(l.clone()),
            Expr::Cmp(l, op, r) => Expr::Cmp(b(l), *op, b(r)),
            Expr::IsNull { expr, negated } => Expr::IsNull {
                expr: b(expr),
                negated: *negated,
            },
            Expr::In {
                expr,
                list,
                negated,
            } => Expr::In {
                expr: b(expr),
                list: list.clone(),
                negated: *negated,
            },
            Expr::And(l, r) => Expr::And(b(l), b(r)),
            Expr::Or(l, r) => Expr::Or(b(l), b(r)),
            Expr::Not(e) => Expr::Not(b(e)),
            Expr::Arith(l, op, r) => Expr::Arith(b(l), *op, b(r)),
            Expr::Neg(e) => Expr::Neg(b(e)),
            Expr::Concat(l, r) => Expr::Concat(b(l), b(r)),
            Expr::Case {
                branches,
                otherwise,
            } => Expr::Case {
                branches: branches
                    .iter()
                    .map(|(c, v)| (c.map_columns(f), v.map_columns(f)))
                    .collect(),
                otherwise: otherwise.as_deref().map(|o| Box::new(o.map_columns(f))),
            },
            Expr::Coalesce(args) => Expr::Coalesce(args.iter().map(|a| a.map_columns(f)).collect()),
            Expr::Cast(e, t) => Expr::Cast(b(e), t.clone()),
            Expr::DatePart(field, e) => Expr::DatePart(*field, b(e)),
            Expr::Like {
                expr,
                pattern,
                escape,
                case_insensitive,
                negated,
            } => Expr::Like {
                expr: b(expr),
                pattern: b(pattern),
                escape: *escape,
                case_insensitive: *case_insensitive,
                negated: *negated,
            },
            Expr::IsDistinctFrom {
                left,
                right,
                negated,
            } => Expr::IsDistinctFrom {
                left: b(left),
                right: b(right),
                negated: *negated,
            },
            Expr::Call { function, args } => Expr::Call {
                function: *function,
                args: args.iter().map(|a| a.map_columns(f)).collect(),
            },
        }
    }
}

macro_rules! number_literal {
    ($($t:ty),*) => {$(
        impl From<$t> for Literal {
            /// An integer literal, typed by context like a number in SQL text.
            fn from(v: $t) -> Literal {
                Literal::Number(v.to_string())
            }
        }
    )*};
}
number_literal!(i8, i16, i32, i64, u8, u16, u32);

impl From<f64> for Literal {
    /// A finite double is a number typed by context; NaN and the infinities (which SQL text
    /// cannot spell) are typed double values.
    fn from(v: f64) -> Literal {
        if v.is_finite() {
            Literal::Number(format!("{v:?}"))
        } else {
            Literal::Typed(Scalar::Double(v))
        }
    }
}

impl From<&str> for Literal {
    fn from(v: &str) -> Literal {
        Literal::String(v.to_string())
    }
}

impl From<String> for Literal {
    fn from(v: String) -> Literal {
        Literal::String(v)
    }
}

impl From<bool> for Literal {
    fn from(v: bool) -> Literal {
        Literal::Boolean(v)
    }
}

impl From<Interval> for Literal {
    fn from(v: Interval) -> Literal {
        Literal::Interval(v)
    }
}

impl From<Scalar> for Literal {
    fn from(v: Scalar) -> Literal {
        match v {
            Scalar::Null => Literal::Null,
            other => Literal::Typed(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_expr;

    #[test]
    fn builder_matches_the_parser() {
        let cases = [
            (
                Expr::column("a").add(Expr::lit(1)).mul(Expr::column("b")),
                "(a + 1) * b",
            ),
            (Expr::column("a").neg().sub(Expr::lit(2.5)), "-a - 2.5"),
            (
                Expr::column("a").rem(Expr::lit(3)).eq(Expr::lit(0)),
                "a % 3 = 0",
            ),
            (
                Expr::path(["t", "id"]).eq(Expr::path(["s", "id"])),
                "t.id = s.id",
            ),
            (
                Expr::column("s").concat(Expr::lit("x")).ne(Expr::lit("y")),
                "s || 'x' != 'y'",
            ),
            (
                Expr::column("a").div(Expr::column("b")).le(Expr::lit(1)),
                "a / b <= 1",
            ),
            (Expr::column("a").is_null().not(), "NOT a IS NULL"),
        ];
        for (built, text) in cases {
            assert_eq!(built, parse_expr(text).unwrap(), "{text}");
        }
    }

    #[test]
    fn map_columns_rewrites_every_path() {
        let e = parse_expr(
            "CASE WHEN a > 1 THEN COALESCE(b, -c) ELSE CAST(d AS int) END || e IN ('x') AND f.g IS NULL",
        )
        .unwrap();
        let q = e.map_columns(&mut |p| {
            let mut v = vec!["t".to_string()];
            v.extend(p.iter().cloned());
            v
        });
        assert_eq!(
            q,
            parse_expr(
                "CASE WHEN t.a > 1 THEN COALESCE(t.b, -t.c) ELSE CAST(t.d AS int) END || t.e IN ('x') AND t.f.g IS NULL"
            )
            .unwrap()
        );
    }
}
