//! The unbound expression tree: [`Expr`] and its operators and literals, as parsed or built,
//! before any name is resolved against a schema.

use alluvium_txlog::scalar::Scalar;
use alluvium_txlog::schema::DataType;

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
    /// `YEAR(x)`, `MONTH(x)`, `DAY(x)`: a calendar field of a date or timestamp, as an
    /// `int` (timestamps with a time zone are read in UTC).
    DatePart(DateField, Box<Expr>),
}

/// A calendar field [`Expr::DatePart`] extracts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DateField {
    /// `YEAR(x)`.
    Year,
    /// `MONTH(x)` (1 to 12).
    Month,
    /// `DAY(x)` / `DAYOFMONTH(x)` (1 to 31).
    Day,
}

impl DateField {
    /// The SQL function name.
    pub fn name(self) -> &'static str {
        match self {
            DateField::Year => "YEAR",
            DateField::Month => "MONTH",
            DateField::Day => "DAY",
        }
    }
}
