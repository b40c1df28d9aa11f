//! Clause binding: each `WHEN` clause's condition and values qualified, bound and
//! type-checked against the MERGE's scope, producing rows of the (possibly evolved) table
//! schema. Nothing here reads data.

use std::sync::Arc;

use alluvium_expr::{Expr, Predicate};
use alluvium_txlog::schema::StructType;

use super::clause::{ClauseKind, MergeAction, MergeClause};
use super::scope::{SOURCE, Scope, Sides, TARGET};
use crate::rows::assign::assigned;
use crate::rows::project::{ColumnValue, Projection};
use crate::rows::rules::{self, ColumnRules, RowKind};
use crate::{Error, Result};

/// A clause's action, bound: new rows are computed by a projection of the joined row.
#[derive(Debug)]
pub(crate) enum BoundAction {
    Update(Projection),
    Delete,
    Insert(Projection),
}

/// One clause, bound: its kind, its condition as a predicate over `{t, s}`, its action.
#[derive(Debug)]
pub(crate) struct BoundClause {
    pub kind: ClauseKind,
    pub condition: Option<Predicate>,
    pub action: BoundAction,
}

/// Whether a clause copies the source's columns by name (`UPDATE SET *`, `INSERT *`):
/// only those evolve the schema.
pub(crate) fn has_star(clauses: &[MergeClause]) -> bool {
    clauses
        .iter()
        .any(|c| matches!(c.action, MergeAction::UpdateAll | MergeAction::InsertAll))
}

fn column(q: &str, name: &str) -> Expr {
    Expr::Column(vec![q.to_string(), name.to_string()])
}

/// Binds one clause against `scope`, producing rows of `table_schema` (the evolved schema).
pub(crate) fn bind_clause(
    c: &MergeClause,
    scope: &Scope,
    table_schema: &StructType,
    merge_schema: bool,
    column_rules: &Arc<ColumnRules>,
) -> Result<BoundClause> {
    let projection = |values: Vec<ColumnValue>, kind: RowKind| {
        Projection::new(table_schema, values, column_rules.clone(), kind)
    };
    let sides = match c.kind {
        ClauseKind::Matched => Sides::BOTH,
        ClauseKind::NotMatched => Sides::SOURCE_ONLY,
        ClauseKind::NotMatchedBySource => Sides::TARGET_ONLY,
    };
    let what = format!("WHEN {} clause", c.kind.sql());
    let condition = match &c.condition {
        Some(e) => Some(scope.bind_condition(e, sides, &what)?),
        None => None,
    };
    let in_target = |name: &str| scope.target.field(name).is_some();
    let in_source = |name: &str| scope.source.field(name).is_some();
    let unknown_assigned = |a: &[crate::rows::assign::Assignment]| -> Result<()> {
        for x in a {
            if table_schema.field(&x.column).is_none() {
                let names = table_schema.fields.iter().map(|f| f.name.as_str());
                return Err(Error::InvalidArgument(format!(
                    "{what}: the target has no column `{}`{}",
                    x.column,
                    alluvium_expr::nearest_name(&x.column, names)
                        .map(|n| format!("; did you mean `{n}`?"))
                        .unwrap_or_default()
                )));
            }
        }
        Ok(())
    };
    let action = match &c.action {
        MergeAction::Delete => BoundAction::Delete,
        MergeAction::Update(assign) => {
            unknown_assigned(assign)?;
            for a in assign {
                column_rules.check_assignable(&a.column)?;
            }
            let mut values = Vec::with_capacity(table_schema.fields.len());
            for f in &table_schema.fields {
                let v = match assigned(assign, &f.name) {
                    Some(a) => ColumnValue::Expr(scope.bind_assignment(
                        &a.value,
                        &f.data_type,
                        sides,
                        &what,
                    )?),
                    // Computed again from the new values of its sources (Delta Spark's
                    // rule for generated columns an update does not set).
                    None if column_rules.is_generated(&f.name) => ColumnValue::Null,
                    None if in_target(&f.name) => ColumnValue::Expr(scope.bind_assignment(
                        &column(TARGET, &f.name),
                        &f.data_type,
                        sides,
                        &what,
                    )?),
                    None => ColumnValue::Null,
                };
                values.push(v);
            }
            BoundAction::Update(projection(values, RowKind::Update)?)
        }
        MergeAction::UpdateAll => {
            let mut values = Vec::with_capacity(table_schema.fields.len());
            for f in &table_schema.fields {
                // `UPDATE SET *` keeps identity values (they are never updated).
                let expr = if column_rules.is_identity(&f.name) && in_target(&f.name) {
                    column(TARGET, &f.name)
                } else if column_rules.is_generated(&f.name) && !in_source(&f.name) {
                    // Computed again from the new values of its sources.
                    values.push(ColumnValue::Null);
                    continue;
                } else if in_source(&f.name) {
                    column(SOURCE, &f.name)
                } else if merge_schema && in_target(&f.name) {
                    column(TARGET, &f.name)
                } else {
                    return Err(Error::SchemaMismatch(format!(
                        "{what}: UPDATE SET * needs source column `{}` (or schema merging)",
                        f.name
                    )));
                };
                values.push(ColumnValue::Expr(scope.bind_assignment(
                    &expr,
                    &f.data_type,
                    sides,
                    &what,
                )?));
            }
            BoundAction::Update(projection(values, RowKind::Update)?)
        }
        MergeAction::Insert(assign) => {
            unknown_assigned(assign)?;
            let mut values = Vec::with_capacity(table_schema.fields.len());
            for f in &table_schema.fields {
                let v = match assigned(assign, &f.name) {
                    Some(a) => ColumnValue::Expr(scope.bind_assignment(
                        &a.value,
                        &f.data_type,
                        sides,
                        &what,
                    )?),
                    None if f.nullable || rules::may_omit(f) => ColumnValue::Null,
                    None => {
                        return Err(Error::SchemaMismatch(format!(
                            "{what}: INSERT gives no value for NOT NULL column `{}`",
                            f.name
                        )));
                    }
                };
                values.push(v);
            }
            BoundAction::Insert(projection(values, RowKind::Insert)?)
        }
        MergeAction::InsertAll => {
            let mut values = Vec::with_capacity(table_schema.fields.len());
            for f in &table_schema.fields {
                let v = if in_source(&f.name) {
                    ColumnValue::Expr(scope.bind_assignment(
                        &column(SOURCE, &f.name),
                        &f.data_type,
                        sides,
                        &what,
                    )?)
                } else if (merge_schema && f.nullable) || rules::may_omit(f) {
                    // Identity, generated and default columns the source lacks get
                    // their values from the column rules.
                    ColumnValue::Null
                } else {
                    return Err(Error::SchemaMismatch(format!(
                        "{what}: INSERT * needs source column `{}` (or schema merging)",
                        f.name
                    )));
                };
                values.push(v);
            }
            BoundAction::Insert(projection(values, RowKind::Insert)?)
        }
    };
    Ok(BoundClause {
        kind: c.kind,
        condition,
        action,
    })
}
