//! The unbound expression tree: [`Expr`] and its operators and literals, as parsed or built,
//! before any name is resolved against a schema.

use alluvium_txlog::scalar::Scalar;
use alluvium_txlog::schema::DataType;

use crate::{Function, Interval};

/// An arithmetic operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArithOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (on integers and floats the result is a double, as Spark's `/`)
    Div,
    /// `%` (keeps the operands' integral type; the sign follows the dividend)
    Mod,
}

impl ArithOp {
    /// The SQL spelling.
    pub fn symbol(self) -> &'static str {
        match self {
            ArithOp::Add => "+",
            ArithOp::Sub => "-",
            ArithOp::Mul => "*",
            ArithOp::Div => "/",
            ArithOp::Mod => "%",
        }
    }
}

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    /// `=`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl CmpOp {
    /// The operator with its operands swapped (`a < b` == `b > a`).
    pub fn flip(self) -> CmpOp {
        match self {
            CmpOp::Lt => CmpOp::Gt,
            CmpOp::Le => CmpOp::Ge,
            CmpOp::Gt => CmpOp::Lt,
            CmpOp::Ge => CmpOp::Le,
            other => other,
        }
    }

    /// The SQL spelling.
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "=",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }
}

/// A literal as written, before it is typed against a column.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Literal {
    /// A number, kept as text so decimals stay exact.
    Number(String),
    /// A quoted string.
    String(String),
    /// `TRUE` / `FALSE`.
    Boolean(bool),
    /// `NULL`.
    Null,
    /// An already typed value (built through the API rather than parsed).
    Typed(Scalar),
    /// `INTERVAL ...`: a span to add to or subtract from a date or timestamp.
    Interval(Interval),
}

/// An unbound expression (column names not yet resolved). New forms are added as the
/// language grows: match with a wildcard arm.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Expr {
    /// A column, as a path of names (`a.b` = `["a", "b"]`).
    Column(Vec<String>),
    /// A literal.
    Literal(Literal),
    /// A comparison.
    Cmp(Box<Expr>, CmpOp, Box<Expr>),
    /// `expr IS [NOT] NULL`.
    IsNull {
        /// The operand.
        expr: Box<Expr>,
        /// `IS NOT NULL`.
        negated: bool,
    },
    /// `expr [NOT] IN (list)`.
    In {
        /// The operand.
        expr: Box<Expr>,
        /// The values (literals only).
        list: Vec<Literal>,
        /// `NOT IN`.
        negated: bool,
    },
    /// `AND`.
    And(Box<Expr>, Box<Expr>),
    /// `OR`.
    Or(Box<Expr>, Box<Expr>),
    /// `NOT`.
    Not(Box<Expr>),
    /// `left op right`, arithmetic.
    Arith(Box<Expr>, ArithOp, Box<Expr>),
    /// Unary minus.
    Neg(Box<Expr>),
    /// `left || right`, string (or binary) concatenation.
    Concat(Box<Expr>, Box<Expr>),
    /// `CASE WHEN c THEN v ... [ELSE e] END`: the value of the first branch whose condition
    /// is TRUE, else `otherwise`, else NULL.
    Case {
        /// `(condition, value)` pairs, in order.
        branches: Vec<(Expr, Expr)>,
        /// The `ELSE` value.
        otherwise: Option<Box<Expr>>,
    },
    /// `COALESCE(a, b, ...)`: the first non-NULL argument.
    Coalesce(Vec<Expr>),
    /// `CAST(x AS type)`.
    Cast(Box<Expr>, DataType),
    /// `YEAR(x)`, `MONTH(x)`, `HOUR(x)`, `EXTRACT(field FROM x)`, ...: a calendar field of
    /// a date or timestamp, as an `int` (timestamps are read in UTC).
    DatePart(DateField, Box<Expr>),
    /// `expr [NOT] LIKE pattern [ESCAPE 'c']` and `ILIKE` (case-insensitive): `_` matches
    /// one character, `%` any run of them, and the escape character (`\` unless given)
    /// makes the next `_`, `%` or escape character literal.
    Like {
        /// The string matched.
        expr: Box<Expr>,
        /// The pattern.
        pattern: Box<Expr>,
        /// The `ESCAPE` character, if given.
        escape: Option<char>,
        /// `ILIKE`.
        case_insensitive: bool,
        /// `NOT LIKE` / `NOT ILIKE`.
        negated: bool,
    },
    /// `left IS [NOT] DISTINCT FROM right`: NULL-safe inequality (equality when negated);
    /// never NULL.
    IsDistinctFrom {
        /// Left operand.
        left: Box<Expr>,
        /// Right operand.
        right: Box<Expr>,
        /// `IS NOT DISTINCT FROM`.
        negated: bool,
    },
    /// A call of a built-in function.
    Call {
        /// The function.
        function: Function,
        /// The arguments, as many as [`Function::arity`] allows.
        args: Vec<Expr>,
    },
}

impl Expr {
    /// The direct sub-expressions, left to right.
    pub fn children(&self) -> Vec<&Expr> {
        match self {
            Expr::Column(_) | Expr::Literal(_) => vec![],
            Expr::Cmp(l, _, r)
            | Expr::And(l, r)
            | Expr::Or(l, r)
            | Expr::Arith(l, _, r)
            | Expr::Concat(l, r)
            | Expr::IsDistinctFrom {
                left: l, right: r, ..
            }
            | Expr::Like {
                expr: l,
                pattern: r,
                ..
            } => vec![l.as_ref(), r.as_ref()],
            Expr::IsNull { expr: x, .. }
            | Expr::In { expr: x, .. }
            | Expr::Not(x)
            | Expr::Neg(x)
            | Expr::Cast(x, _)
            | Expr::DatePart(_, x) => vec![x.as_ref()],
            Expr::Case {
                branches,
                otherwise,
            } => branches
                .iter()
                .flat_map(|(c, v)| [c, v])
                .chain(otherwise.as_deref())
                .collect(),
            Expr::Coalesce(args) | Expr::Call { args, .. } => args.iter().collect(),
        }
    }

    /// False if the expression calls a function whose value depends on when it runs
    /// (`current_date`, `current_timestamp`): such an expression cannot be a CHECK
    /// constraint or a generation expression. Iterative, so a tree of any depth is fine.
    pub fn is_deterministic(&self) -> bool {
        let mut stack = vec![self];
        while let Some(e) = stack.pop() {
            if let Expr::Call { function, .. } = e
                && !function.is_deterministic()
            {
                return false;
            }
            stack.extend(e.children());
        }
        true
    }
}

/// A calendar field [`Expr::DatePart`] extracts (Spark's functions of the same names; a
/// date has hour, minute and second 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DateField {
    /// `YEAR(x)`.
    Year,
    /// `QUARTER(x)` (1 to 4).
    Quarter,
    /// `MONTH(x)` (1 to 12).
    Month,
    /// `WEEKOFYEAR(x)`: the ISO 8601 week (1 to 53; weeks start on Monday).
    Week,
    /// `DAY(x)` / `DAYOFMONTH(x)` (1 to 31).
    Day,
    /// `DAYOFWEEK(x)` (1 = Sunday to 7 = Saturday).
    DayOfWeek,
    /// `DAYOFYEAR(x)` (1 to 366).
    DayOfYear,
    /// `HOUR(x)` (0 to 23).
    Hour,
    /// `MINUTE(x)` (0 to 59).
    Minute,
    /// `SECOND(x)`: whole seconds (0 to 59).
    Second,
}

impl DateField {
    /// The SQL function name, as `Display` prints it.
    pub fn name(self) -> &'static str {
        match self {
            DateField::Year => "YEAR",
            DateField::Quarter => "QUARTER",
            DateField::Month => "MONTH",
            DateField::Week => "WEEKOFYEAR",
            DateField::Day => "DAY",
            DateField::DayOfWeek => "DAYOFWEEK",
            DateField::DayOfYear => "DAYOFYEAR",
            DateField::Hour => "HOUR",
            DateField::Minute => "MINUTE",
            DateField::Second => "SECOND",
        }
    }

    /// The field a function name extracts (`YEAR`, `DAYOFMONTH`, ...), case-insensitive.
    pub fn from_function(name: &str) -> Option<DateField> {
        Some(match name.to_ascii_uppercase().as_str() {
            "YEAR" => DateField::Year,
            "QUARTER" => DateField::Quarter,
            "MONTH" => DateField::Month,
            "WEEKOFYEAR" => DateField::Week,
            "DAY" | "DAYOFMONTH" => DateField::Day,
            "DAYOFWEEK" => DateField::DayOfWeek,
            "DAYOFYEAR" => DateField::DayOfYear,
            "HOUR" => DateField::Hour,
            "MINUTE" => DateField::Minute,
            "SECOND" => DateField::Second,
            _ => return None,
        })
    }

    /// The field an `EXTRACT(field FROM x)` names, with Spark's abbreviations (`YR`, `MON`,
    /// `DOW`, `DOY`, `H`, `MIN`, ...). `SECOND` is not among them: Spark's EXTRACT returns
    /// fractional seconds there, which alluvium does not provide (`SECOND(x)` gives the
    /// whole seconds).
    pub fn from_extract(name: &str) -> Option<DateField> {
        Some(match name.to_ascii_uppercase().as_str() {
            "YEAR" | "Y" | "YEARS" | "YR" | "YRS" => DateField::Year,
            "QUARTER" | "QTR" => DateField::Quarter,
            "MONTH" | "MON" | "MONS" | "MONTHS" => DateField::Month,
            "WEEK" | "W" | "WEEKS" => DateField::Week,
            "DAY" | "D" | "DAYS" => DateField::Day,
            "DAYOFWEEK" | "DOW" => DateField::DayOfWeek,
            "DOY" => DateField::DayOfYear,
            "HOUR" | "H" | "HOURS" | "HR" | "HRS" => DateField::Hour,
            "MINUTE" | "M" | "MIN" | "MINS" | "MINUTES" => DateField::Minute,
            _ => return None,
        })
    }
}
