//! MERGE from Python: the Python layer's `TableMerger` collects the clauses and calls
//! [`merge_table`] once, at `execute()`, so the source is read only then (and with the GIL
//! released).
//!
//! A clause is a tuple `(kind, action, predicate, updates, except_cols)`: `kind` is
//! `matched`, `not_matched` or `not_matched_by_source`; `action` is `update`, `update_all`,
//! `delete`, `insert` or `insert_all`; `updates` maps a target column to a SQL expression.
//! `update_all` / `insert_all` with `except_cols` become explicit assignments of every
//! other target column the source has, from the source's column of that name.

use std::collections::BTreeMap;

use alluvium::{ClauseKind, Expr, MergeAction, MergeClause, parse_expr};
use arrow_array::RecordBatchReader;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::arrow_io::{Interruptible, import_source};
use crate::blocking;
use crate::errors::{IntoPy, invalid_input};
use crate::table::{RawTable, commit_options, metrics_dict};

/// One clause as the Python layer sends it.
type ClauseSpec = (
    String,
    String,
    Option<String>,
    Option<BTreeMap<String, String>>,
    Option<Vec<String>>,
);

fn kind(text: &str) -> PyResult<ClauseKind> {
    match text {
        "matched" => Ok(ClauseKind::Matched),
        "not_matched" => Ok(ClauseKind::NotMatched),
        "not_matched_by_source" => Ok(ClauseKind::NotMatchedBySource),
        other => Err(invalid_input(format!(
            "unknown MERGE clause kind {other:?}"
        ))),
    }
}

/// `updates` as assignments. deltalake names a target column bare or qualified with the
/// target's alias (`target.x`): the qualifier is dropped.
fn assignments(
    updates: &BTreeMap<String, String>,
    target_alias: &str,
) -> PyResult<Vec<alluvium::Assignment>> {
    updates
        .iter()
        .map(|(column, sql)| {
            let column = match column.split_once('.') {
                Some((q, c)) if q.eq_ignore_ascii_case(target_alias) || q == "t" => c,
                _ => column.as_str(),
            };
            Ok(alluvium::Assignment::new(column, parse_expr(sql).py_err()?))
        })
        .collect()
}

/// Every target column the source also has, except `except`, from the source's column.
fn all_but(
    target: &[String],
    source: &arrow_schema::Schema,
    except: &[String],
) -> Vec<alluvium::Assignment> {
    target
        .iter()
        .filter(|c| !except.iter().any(|e| e.eq_ignore_ascii_case(c)))
        .filter_map(|c| {
            let f = source
                .fields()
                .iter()
                .find(|f| f.name().eq_ignore_ascii_case(c))?;
            Some(alluvium::Assignment::new(
                c.clone(),
                Expr::path(["s", f.name().as_str()]),
            ))
        })
        .collect()
}

fn clause(
    spec: &ClauseSpec,
    target: &[String],
    target_alias: &str,
    source: &arrow_schema::Schema,
) -> PyResult<MergeClause> {
    let (k, action, predicate, updates, except) = spec;
    let condition = predicate.as_deref().map(parse_expr).transpose().py_err()?;
    let no_updates = BTreeMap::new();
    let updates = updates.as_ref().unwrap_or(&no_updates);
    let except = except.clone().unwrap_or_default();
    let action = match (action.as_str(), except.is_empty()) {
        ("update", _) => MergeAction::Update(assignments(updates, target_alias)?),
        ("insert", _) => MergeAction::Insert(assignments(updates, target_alias)?),
        ("delete", _) => MergeAction::Delete,
        ("update_all", true) => MergeAction::UpdateAll,
        ("insert_all", true) => MergeAction::InsertAll,
        ("update_all", false) => MergeAction::Update(all_but(target, source, &except)),
        ("insert_all", false) => MergeAction::Insert(all_but(target, source, &except)),
        (other, _) => return Err(invalid_input(format!("unknown MERGE action {other:?}"))),
    };
    MergeClause::new(kind(k)?, condition, action).py_err()
}

/// Runs a MERGE of `source` into the table on `predicate` with `clauses`; returns the
/// metrics dict.
#[pyfunction]
#[pyo3(signature = (table, source, predicate, clauses, source_alias=None, target_alias=None, merge_schema=false, commit=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn merge_table<'py>(
    py: Python<'py>,
    table: &Bound<'py, RawTable>,
    source: &Bound<'py, PyAny>,
    predicate: String,
    clauses: Vec<ClauseSpec>,
    source_alias: Option<String>,
    target_alias: Option<String>,
    merge_schema: bool,
    commit: Option<Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    if clauses.is_empty() {
        return Err(invalid_input(
            "a MERGE needs at least one when_... clause before execute()",
        ));
    }
    let options = commit_options(commit.as_ref())?;
    let reader = import_source(source)?;
    let handle = table.get();
    let done = blocking::run(py, |interrupt| {
        let target = handle.table.snapshot().py_err()?;
        let target_columns: Vec<String> = target
            .schema()
            .fields
            .iter()
            .map(|f| f.name.clone())
            .collect();
        let source_schema = reader.schema();
        let alias = target_alias.as_deref().unwrap_or("t");
        let built: Vec<MergeClause> = clauses
            .iter()
            .map(|c| clause(c, &target_columns, alias, &source_schema))
            .collect::<PyResult<_>>()?;
        let mut builder = handle
            .table
            .merge(Interruptible::new(reader, interrupt), predicate.as_str())
            .merge_schema(merge_schema);
        if source_alias.is_some() || target_alias.is_some() {
            builder = builder.with_aliases(
                target_alias.as_deref().unwrap_or("t"),
                source_alias.as_deref().unwrap_or("s"),
            );
        }
        for c in built {
            builder = builder.clause(c);
        }
        let done = builder.execute(&options).py_err()?;
        handle.after_commit(&done.outcome).py_err()?;
        Ok(done)
    })?;
    metrics_dict(py, &done)
}
