//! `SET col = expr, …` assignment lists of UPDATE and MERGE.

use alluvium_expr::{Expr, parse_expr};

use crate::rows::sql_text::{find_assignment_eq, split_top_level};
use crate::{Error, Result};

/// One `column = value` of an UPDATE SET or a MERGE INSERT: a top-level target column
/// and the expression giving its new value.
#[derive(Debug, Clone, PartialEq)]
pub struct Assignment {
    /// The target column (top level; in MERGE the `t.` qualifier is dropped).
    pub column: String,
    /// The new value.
    pub value: Expr,
}

impl Assignment {
    /// `column = value`.
    pub fn new(column: impl Into<String>, value: Expr) -> Assignment {
        Assignment {
            column: column.into(),
            value,
        }
    }
}

/// The target column of an assignment written as text: `a`, `` `a b` `` or `t.a`.
///
/// # Errors
/// [`Error::InvalidArgument`] for anything else (nested fields cannot be assigned).
pub(crate) fn parse_target(text: &str) -> Result<String> {
    match parse_expr(text.trim()) {
        Ok(Expr::Column(path)) => match path.as_slice() {
            [one] => Ok(one.clone()),
            [q, one] if q.eq_ignore_ascii_case("t") => Ok(one.clone()),
            _ => Err(Error::InvalidArgument(format!(
                "cannot assign `{text}`: only top-level target columns can be set"
            ))),
        },
        _ => Err(Error::InvalidArgument(format!(
            "`{text}` is not a column to assign"
        ))),
    }
}

/// Parses `a = a + 1, b = 'x'`.
///
/// # Errors
/// [`Error::InvalidArgument`] for an empty list, a piece without `=`, a left side that is
/// not a column, or a column assigned twice; expression parse errors.
pub(crate) fn parse_assignments(text: &str) -> Result<Vec<Assignment>> {
    let mut out: Vec<Assignment> = Vec::new();
    for piece in split_top_level(text, ',')? {
        if piece.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "empty assignment in `{text}`"
            )));
        }
        let eq = find_assignment_eq(piece)?
            .ok_or_else(|| Error::InvalidArgument(format!("assignment `{piece}` has no `=`")))?;
        let column = parse_target(&piece[..eq])?;
        let value = parse_expr(piece[eq + 1..].trim())?;
        out.push(Assignment::new(column, value));
    }
    check_distinct(&out)?;
    Ok(out)
}

/// The assignment of `column` (names match case-insensitively, as Delta's do), if any.
pub(crate) fn assigned<'a>(assignments: &'a [Assignment], column: &str) -> Option<&'a Assignment> {
    assignments
        .iter()
        .find(|a| a.column.eq_ignore_ascii_case(column))
}

/// Refuses a column assigned twice (case-insensitive, as Delta's names are).
pub(crate) fn check_distinct(assignments: &[Assignment]) -> Result<()> {
    for (i, a) in assignments.iter().enumerate() {
        if assignments[..i]
            .iter()
            .any(|b| b.column.eq_ignore_ascii_case(&a.column))
        {
            return Err(Error::InvalidArgument(format!(
                "column `{}` is assigned twice",
                a.column
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_assignment_lists() {
        let a = parse_assignments("a = b, `c d` = 'x = y', t.e = f").unwrap();
        assert_eq!(
            a.iter().map(|x| x.column.as_str()).collect::<Vec<_>>(),
            ["a", "c d", "e"]
        );
        assert!(parse_assignments("a = 1, A = 2").is_err());
        assert!(parse_assignments("a").is_err());
        assert!(parse_assignments("a.b = 1").is_err());
        assert!(parse_assignments("1 = 1").is_err());
        assert!(parse_assignments("a = 1,").is_err());
    }
}
