//! Predicates over table columns: the `--filter` language, binding to a schema, and data
//! skipping over partition values and statistics. Row-level evaluation on Arrow batches is
//! `alluvium-datafile`'s (`alluvium_datafile::eval`).
//!
//! Semantics are SQL's three-valued logic: a row matches when the predicate is TRUE (not
//! FALSE, not NULL). Floating-point comparisons use the total order Spark uses (NaN equals
//! NaN and sorts above every other value). Data skipping is conservative by construction: a
//! file is skipped only when no row of it can make the predicate TRUE.

mod bind;
mod display;
mod parse;
mod skipping;

pub use bind::{BoundColumn, Predicate, bind};
pub use parse::{MAX_EXPR_DEPTH, parse_expr};
pub use skipping::{FileSummary, all_match, may_match};

use crate::scalar::Scalar;

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

/// An unbound expression (column names not yet resolved).
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A column, as a path of names (`a.b` = `["a", "b"]`).
    Column(Vec<String>),
    /// A literal.
    Literal(Literal),
    /// A comparison.
    Cmp(Box<Expr>, CmpOp, Box<Expr>),
    /// `IS [NOT] NULL`.
    IsNull(Box<Expr>, bool),
    /// `[NOT] IN (...)`.
    In(Box<Expr>, Vec<Literal>, bool),
    /// `AND`.
    And(Box<Expr>, Box<Expr>),
    /// `OR`.
    Or(Box<Expr>, Box<Expr>),
    /// `NOT`.
    Not(Box<Expr>),
}

impl Expr {
    /// A column reference by (possibly dotted) path segments.
    pub fn column(name: &str) -> Expr {
        Expr::Column(vec![name.to_string()])
    }

    /// `self op value`.
    pub fn cmp(self, op: CmpOp, value: Literal) -> Expr {
        Expr::Cmp(Box::new(self), op, Box::new(Expr::Literal(value)))
    }

    /// `self AND other`.
    pub fn and(self, other: Expr) -> Expr {
        Expr::And(Box::new(self), Box::new(other))
    }

    /// `self OR other`.
    pub fn or(self, other: Expr) -> Expr {
        Expr::Or(Box::new(self), Box::new(other))
    }
}
