//! The expression error type: every failure parsing, binding or evaluating an expression.

use alluvium_txlog::LogError;

/// Result alias for expression work.
pub type Result<T, E = ExprError> = std::result::Result<T, E>;

/// A failure parsing, binding or evaluating an expression. Every variant is a problem
/// with the expression or the values it meets, except [`ExprError::Arrow`] (a kernel
/// failure) and [`ExprError::Log`] (a type the log format cannot map).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExprError {
    /// The expression is invalid: it does not parse, names an unknown column, has operands
    /// of the wrong types, or fails on a value (overflow, division by zero, a failed cast).
    #[error("invalid expression: {0}")]
    Invalid(String),
    /// A log-format failure (a type without an Arrow mapping, a bad partition value).
    #[error(transparent)]
    Log(#[from] LogError),
    /// An Arrow kernel failed.
    #[error("arrow: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),
}
