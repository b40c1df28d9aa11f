//! The MERGE clause model (`WHEN [NOT] MATCHED [BY SOURCE] [AND cond] THEN action`) and its
//! SQL text form, as the CLI's `--when` takes it.

use alluvium_expr::{Expr, parse_expr};

use crate::rows::assign::{Assignment, parse_assignments};
use crate::rows::sql_text::{find_keyword, split_top_level, strip_keyword};
use crate::{Error, Result};

/// Which rows a clause applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ClauseKind {
    /// `WHEN MATCHED`: target rows with a source row satisfying the ON condition.
    Matched,
    /// `WHEN NOT MATCHED [BY TARGET]`: source rows with no target row.
    NotMatched,
    /// `WHEN NOT MATCHED BY SOURCE`: target rows with no source row.
    NotMatchedBySource,
}

impl ClauseKind {
    /// The SQL spelling (after `WHEN`).
    pub fn sql(self) -> &'static str {
        match self {
            ClauseKind::Matched => "MATCHED",
            ClauseKind::NotMatched => "NOT MATCHED",
            ClauseKind::NotMatchedBySource => "NOT MATCHED BY SOURCE",
        }
    }
}

/// What a clause does to the rows it applies to.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum MergeAction {
    /// `UPDATE SET col = expr, …` (MATCHED, NOT MATCHED BY SOURCE).
    Update(Vec<Assignment>),
    /// `UPDATE SET *`: every target column from the source column of that name (MATCHED).
    UpdateAll,
    /// `DELETE` (MATCHED, NOT MATCHED BY SOURCE).
    Delete,
    /// `INSERT (cols) VALUES (exprs)` (NOT MATCHED); columns not listed are NULL.
    Insert(Vec<Assignment>),
    /// `INSERT *`: every target column from the source column of that name (NOT MATCHED).
    InsertAll,
}

impl MergeAction {
    /// Delta's `actionType` name of the action.
    pub fn action_type(&self) -> &'static str {
        match self {
            MergeAction::Update(_) | MergeAction::UpdateAll => "update",
            MergeAction::Delete => "delete",
            MergeAction::Insert(_) | MergeAction::InsertAll => "insert",
        }
    }
}

/// One `WHEN` clause of a MERGE. Clauses of one kind are tried in order; the first whose
/// condition holds for a row decides what happens to it (Delta Spark's rule).
#[derive(Debug, Clone, PartialEq)]
pub struct MergeClause {
    /// Which rows it applies to.
    pub kind: ClauseKind,
    /// The optional `AND` condition.
    pub condition: Option<Expr>,
    /// What it does.
    pub action: MergeAction,
}

impl MergeClause {
    /// The clause with every column path of its condition and values replaced by
    /// `f(path)` (assignment targets are column names, not paths, and stay).
    pub(crate) fn map_columns(self, f: &mut dyn FnMut(&[String]) -> Vec<String>) -> Self {
        let map = |a: Vec<Assignment>, f: &mut dyn FnMut(&[String]) -> Vec<String>| {
            a.into_iter()
                .map(|a| Assignment::new(a.column, a.value.map_columns(f)))
                .collect()
        };
        let condition = self.condition.map(|c| c.map_columns(f));
        let action = match self.action {
            MergeAction::Update(a) => MergeAction::Update(map(a, f)),
            MergeAction::Insert(a) => MergeAction::Insert(map(a, f)),
            other => other,
        };
        MergeClause {
            kind: self.kind,
            condition,
            action,
        }
    }

    /// A clause, checked: MATCHED takes UPDATE / UPDATE SET * / DELETE, NOT MATCHED takes
    /// INSERT / INSERT *, NOT MATCHED BY SOURCE takes UPDATE / DELETE.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an action the kind does not allow.
    pub fn new(kind: ClauseKind, condition: Option<Expr>, action: MergeAction) -> Result<Self> {
        let allowed = match kind {
            ClauseKind::Matched => matches!(
                action,
                MergeAction::Update(_) | MergeAction::UpdateAll | MergeAction::Delete
            ),
            ClauseKind::NotMatched => {
                matches!(action, MergeAction::Insert(_) | MergeAction::InsertAll)
            }
            ClauseKind::NotMatchedBySource => {
                matches!(action, MergeAction::Update(_) | MergeAction::Delete)
            }
        };
        if !allowed {
            return Err(Error::InvalidArgument(format!(
                "WHEN {} cannot {}{}",
                kind.sql(),
                action.action_type().to_ascii_uppercase(),
                if matches!(action, MergeAction::UpdateAll) {
                    " SET *"
                } else {
                    ""
                }
            )));
        }
        Ok(MergeClause {
            kind,
            condition,
            action,
        })
    }

    /// Parses one clause in SQL, with or without the leading `WHEN`:
    /// `MATCHED [AND cond] THEN UPDATE SET a = s.a + 1, b = 'x' | UPDATE SET * | DELETE`,
    /// `NOT MATCHED [BY TARGET] [AND cond] THEN INSERT (a, b) VALUES (s.a, 1) | INSERT *`,
    /// `NOT MATCHED BY SOURCE [AND cond] THEN UPDATE SET … | DELETE`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming what does not parse.
    pub fn parse(text: &str) -> Result<Self> {
        let bad = |why: &str| Error::InvalidArgument(format!("MERGE clause `{text}`: {why}"));
        let t = strip_keyword(text, "WHEN").unwrap_or(text.trim());
        let (kind, rest) = if let Some(r) = strip_keyword(t, "MATCHED") {
            (ClauseKind::Matched, r)
        } else if let Some(r) = strip_keyword(t, "NOT").and_then(|r| strip_keyword(r, "MATCHED")) {
            if let Some(r2) = strip_keyword(r, "BY") {
                if let Some(r3) = strip_keyword(r2, "SOURCE") {
                    (ClauseKind::NotMatchedBySource, r3)
                } else if let Some(r3) = strip_keyword(r2, "TARGET") {
                    (ClauseKind::NotMatched, r3)
                } else {
                    return Err(bad("expected BY SOURCE or BY TARGET"));
                }
            } else {
                (ClauseKind::NotMatched, r)
            }
        } else {
            return Err(bad(
                "expected MATCHED, NOT MATCHED or NOT MATCHED BY SOURCE",
            ));
        };
        let (then_start, then_end) = find_keyword(rest, "THEN")?.ok_or_else(|| bad("no THEN"))?;
        let head = rest[..then_start].trim();
        let action_text = rest[then_end..].trim();
        let condition = if head.is_empty() {
            None
        } else {
            let cond = strip_keyword(head, "AND")
                .ok_or_else(|| bad("expected AND <condition> before THEN"))?;
            Some(parse_expr(cond)?)
        };
        let action = parse_action(action_text).map_err(|e| bad(&e.to_string()))?;
        MergeClause::new(kind, condition, action)
    }
}

fn parse_action(text: &str) -> Result<MergeAction> {
    if let Some(r) = strip_keyword(text, "DELETE") {
        if !r.trim().is_empty() {
            return Err(Error::InvalidArgument(format!(
                "unexpected `{r}` after DELETE"
            )));
        }
        return Ok(MergeAction::Delete);
    }
    if let Some(r) = strip_keyword(text, "UPDATE") {
        let set = strip_keyword(r, "SET")
            .ok_or_else(|| Error::InvalidArgument("expected SET after UPDATE".into()))?;
        if set.trim() == "*" {
            return Ok(MergeAction::UpdateAll);
        }
        return Ok(MergeAction::Update(parse_assignments(set)?));
    }
    if let Some(r) = strip_keyword(text, "INSERT") {
        let r = r.trim();
        if r == "*" {
            return Ok(MergeAction::InsertAll);
        }
        let (cols_text, rest) = parenthesized(r)
            .ok_or_else(|| Error::InvalidArgument("expected INSERT (columns) VALUES (…)".into()))?;
        let values_text = strip_keyword(rest, "VALUES")
            .and_then(|v| {
                let (inner, tail) = parenthesized(v.trim())?;
                tail.trim().is_empty().then_some(inner)
            })
            .ok_or_else(|| {
                Error::InvalidArgument("expected VALUES (…) after the columns".into())
            })?;
        let cols = split_top_level(cols_text, ',')?;
        let values = split_top_level(values_text, ',')?;
        if cols.len() != values.len() {
            return Err(Error::InvalidArgument(format!(
                "INSERT lists {} columns but {} values",
                cols.len(),
                values.len()
            )));
        }
        let mut out = Vec::with_capacity(cols.len());
        for (c, v) in cols.into_iter().zip(values) {
            out.push(Assignment::new(
                crate::rows::assign::parse_target(c)?,
                parse_expr(v)?,
            ));
        }
        return Ok(MergeAction::Insert(out));
    }
    Err(Error::InvalidArgument(format!(
        "expected UPDATE SET, DELETE or INSERT, got `{text}`"
    )))
}

/// `(inner) rest` -> (inner, rest), for a text starting with a parenthesis.
fn parenthesized(text: &str) -> Option<(&str, &str)> {
    let body = text.strip_prefix('(')?;
    let mut depth = 1usize;
    let mut quote: Option<char> = None;
    for (i, c) in body.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"' | '`') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => {
                depth -= 1;
                if depth == 0 {
                    return Some((&body[..i], &body[i + 1..]));
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_clause_form() {
        let c = MergeClause::parse("MATCHED AND s.op = 'D' THEN DELETE").unwrap();
        assert_eq!(c.kind, ClauseKind::Matched);
        assert_eq!(c.action, MergeAction::Delete);
        assert!(c.condition.is_some());
        let c = MergeClause::parse("WHEN matched then update set *").unwrap();
        assert_eq!(c.action, MergeAction::UpdateAll);
        let c = MergeClause::parse("MATCHED THEN UPDATE SET a = s.a, b = 'x,y'").unwrap();
        let MergeAction::Update(a) = c.action else {
            panic!("not an update")
        };
        assert_eq!(a.len(), 2);
        assert_eq!(a[1].column, "b");
        let c = MergeClause::parse("NOT MATCHED AND s.a > 1 THEN INSERT *").unwrap();
        assert_eq!(c.kind, ClauseKind::NotMatched);
        let c =
            MergeClause::parse("NOT MATCHED BY TARGET THEN INSERT (a, b) VALUES (s.a, 1)").unwrap();
        let MergeAction::Insert(a) = c.action else {
            panic!("not an insert")
        };
        assert_eq!(a[0].column, "a");
        let c = MergeClause::parse("NOT MATCHED BY SOURCE AND t.a < 0 THEN DELETE").unwrap();
        assert_eq!(c.kind, ClauseKind::NotMatchedBySource);
        let c = MergeClause::parse("NOT MATCHED BY SOURCE THEN UPDATE SET t.a = 0").unwrap();
        assert!(matches!(c.action, MergeAction::Update(_)));
    }

    #[test]
    fn refuses_malformed_clauses() {
        for bad in [
            "MATCHED THEN INSERT *",
            "NOT MATCHED THEN DELETE",
            "NOT MATCHED BY SOURCE THEN UPDATE SET *",
            "MATCHED s.a = 1 THEN DELETE",
            "MATCHED DELETE",
            "NOT MATCHED THEN INSERT (a, b) VALUES (1)",
            "MATCHED THEN DELETE now",
            "SOMETIMES THEN DELETE",
        ] {
            assert!(MergeClause::parse(bad).is_err(), "{bad}");
        }
    }
}
