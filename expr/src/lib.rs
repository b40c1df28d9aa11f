//! The expression language of alluvium: one SQL-style language for filters (`--filter`,
//! scan and DELETE predicates), `UPDATE ... SET` and MERGE clauses, CHECK constraints,
//! generated columns and column defaults.
//!
//! This crate owns:
//! * the unbound tree [`Expr`] with its parser ([`parse_expr`]), its SQL printer
//!   (`Display`, which the parser reads back to the same tree) and a typed builder; the
//!   built-in functions ([`Function`]), calendar fields ([`DateField`]) and `INTERVAL`
//!   values ([`Interval`]), with `current_date`/`current_timestamp` fixed per statement
//!   ([`at_statement_time`]);
//! * errors in SQL terms ([`ExprError`]): a syntax error's position with a caret under the
//!   offending text ([`SyntaxError`]), what was expected, and the nearest column or
//!   function name for a misspelt one;
//! * **binding** to a table schema: predicates ([`bind`] → [`Predicate`]) and typed values
//!   ([`bind_value`], [`bind_assignment`] → [`BoundExpr`]), with Spark SQL's type rules
//!   ([`common_type`], [`arith_result_type`]);
//! * **data skipping** ([`may_match`], [`all_match`]): whether a file can hold a matching
//!   row, judging only its partition values and statistics; [`FileFilter`] applies it to
//!   a list of files with the selective statistics parse;
//! * **evaluation** over Arrow record batches ([`eval`]).
//!
//! Value expressions follow Spark SQL's typing with ANSI-style failures: NULL in gives NULL
//! out, while integer or decimal overflow, division or modulo by zero and a failed `CAST`
//! are typed errors naming the expression, never a wrapped or invented value. Predicates
//! use SQL's three-valued logic: a row matches when the predicate is TRUE (not FALSE, not
//! NULL). Floating-point comparisons use the total order Spark uses (NaN equals NaN and
//! sorts above every other value). Data skipping is conservative by construction: a file is
//! skipped only when no row of it can make the predicate TRUE.
//!
//! It knows the log format's vocabulary it judges and types with (schemas, scalars,
//! statistics, partition values, column mapping: `alluvium-txlog`) and Arrow; it must not
//! know data files, snapshots, transactions, object stores, the CLI or any facade type.
//!
//! Semver: this is a lower crate of `alluvium` at 0.x; its interfaces change without
//! notice. Embedders use the facade (`alluvium::{Expr, parse_expr, ...}`), which keeps its
//! promises.
#![deny(missing_docs)]
#![warn(unreachable_pub)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

mod ast;
mod bind;
mod builder;
mod call;
mod clock;
mod datetime;
mod display;
mod error;
pub mod eval;
mod function;
mod interval;
mod lex;
mod like;
mod parse;
mod skipping;
#[cfg(test)]
mod skipping_props;
mod suggest;
mod typing;
mod value;

pub use ast::{ArithOp, CmpOp, DateField, Expr, Literal};
pub use bind::{BoundColumn, Predicate, bind};
pub use clock::at_statement_time;
pub use error::{ExprError, Result, SyntaxError};
pub use eval::{evaluate, evaluate_bool, evaluate_value, leaf_array};
pub use function::Function;
pub use interval::Interval;
pub use parse::{MAX_EXPR_DEPTH, parse_expr};
pub use skipping::{
    FileFilter, FileMatch, FileMatches, FileSummary, StateMatches, StatsNeeded, all_match,
    may_match,
};
pub use suggest::nearest as nearest_name;
pub use typing::{arith_result_type, common_type};
pub use value::{BoundExpr, BoundKind, bind_assignment, bind_value};
