//! MERGE: upserts and deletes of a table's rows from a source of Arrow batches, with any
//! number of ordered `WHEN` clauses (Delta Spark's semantics: within each kind of clause
//! the first whose condition holds decides a row's fate).
//!
//! * [`clause`]: the clause model and its SQL text form;
//! * `scope`: names (`t` target, `s` source) and binding;
//! * `join`: the ON condition's equality keys and the source's hash index;
//! * `pairs`: the pairs whose ON condition holds (hash candidates or, without keys, the
//!   cross product, the residual evaluated in bounded chunks);
//! * `prune`: target file pruning from the source's keys;
//! * `source`: the source loaded, conformed and its void columns typed;
//! * `bind`: each clause bound and type-checked against the scope;
//! * `plan`: the [`MergePlan`](plan::MergePlan) decided before any target data file is
//!   read (keys, residual, bound clauses, columns read, change capture, candidate files);
//! * `execute`: running the plan, one window of target files in memory at a time.

mod bind;
pub mod clause;
mod execute;
mod join;
mod pairs;
mod plan;
mod prune;
mod scope;
mod source;

use alluvium_expr::{Expr, parse_expr};
use arrow_array::RecordBatch;

use crate::commit::DmlOutcome;
use crate::rows::assign::{Assignment, check_distinct};
use crate::{Error, Result, Table, WriteOptions};
use clause::{ClauseKind, MergeAction, MergeClause};

/// The ON condition of a MERGE: SQL text (recorded in the commit as written) or an
/// [`Expr`] (recorded in its `Display` form). Names are qualified `t.` (target) and `s.`
/// (source); an unqualified name is the one side's that has it.
#[derive(Debug, Clone)]
pub struct MergeOn {
    text: String,
    expr: Result<Expr, String>,
}

impl From<&str> for MergeOn {
    fn from(text: &str) -> MergeOn {
        MergeOn {
            text: text.to_string(),
            expr: parse_expr(text).map_err(|e| e.to_string()),
        }
    }
}

impl From<Expr> for MergeOn {
    fn from(expr: Expr) -> MergeOn {
        MergeOn {
            text: expr.to_string(),
            expr: Ok(expr),
        }
    }
}

/// A MERGE being set up: [`Table::merge`], then clauses, then [`execute`](Self::execute).
///
/// ```no_run
/// # fn main() -> alluvium::Result<()> {
/// # let table = alluvium::Table::open("path/to/table")?;
/// # let source: Vec<arrow_array::RecordBatch> = Vec::new();
/// use alluvium::{Expr, WriteOptions, parse_expr};
/// let outcome = table
///     .merge(source, "t.id = s.id")
///     .when_matched_delete(Some(parse_expr("s.op = 'D'")?))
///     .when_matched_update_all(None)
///     .when_not_matched_insert_all(None)
///     .execute(&WriteOptions::default())?;
/// println!("{:?}", outcome.metrics);
/// # Ok(()) }
/// ```
#[derive(Debug)]
#[must_use = "a MERGE does nothing until executed"]
pub struct MergeBuilder {
    table: Table,
    source: Vec<RecordBatch>,
    on: MergeOn,
    clauses: Vec<MergeClause>,
    merge_schema: bool,
    /// Names for the target and the source besides `t` and `s`.
    aliases: Option<(String, String)>,
    /// The first error a clause method met, reported by `execute`.
    error: Option<Error>,
}

impl Table {
    /// Starts a MERGE of `source` into this table on the condition `on` (`"t.id = s.id"`
    /// or an [`Expr`]). The source (plain batches or a fallible stream, see
    /// [`IntoBatch`](crate::IntoBatch)) is read here and held in memory; a failure to read
    /// it is reported by [`execute`](MergeBuilder::execute). The target is read one file at
    /// a time, and only the files the source's keys may match (unless a `WHEN NOT MATCHED
    /// BY SOURCE` clause needs them all).
    pub fn merge<I>(&self, source: I, on: impl Into<MergeOn>) -> MergeBuilder
    where
        I: IntoIterator,
        I::Item: crate::IntoBatch,
    {
        let (source, error) = match crate::rows::source::batches(source).collect() {
            Ok(batches) => (batches, None),
            Err(e) => (Vec::new(), Some(e)),
        };
        MergeBuilder {
            table: self.clone(),
            source,
            on: on.into(),
            clauses: Vec::new(),
            merge_schema: false,
            aliases: None,
            error,
        }
    }
}

fn assignments<S: Into<String>>(pairs: impl IntoIterator<Item = (S, Expr)>) -> Vec<Assignment> {
    pairs
        .into_iter()
        .map(|(c, e)| Assignment::new(c, e))
        .collect()
}

impl MergeBuilder {
    /// Adds a clause (in order).
    pub fn clause(mut self, clause: MergeClause) -> Self {
        self.clauses.push(clause);
        self
    }

    fn push(mut self, kind: ClauseKind, condition: Option<Expr>, action: MergeAction) -> Self {
        let checked = match &action {
            MergeAction::Update(a) | MergeAction::Insert(a) => check_distinct(a),
            _ => Ok(()),
        }
        .and_then(|()| MergeClause::new(kind, condition, action));
        match checked {
            Ok(c) => self.clauses.push(c),
            Err(e) => {
                self.error.get_or_insert(e);
            }
        }
        self
    }

    /// Adds a clause written in SQL (`"MATCHED AND s.op = 'D' THEN DELETE"`; see
    /// [`MergeClause::parse`]).
    pub fn when(mut self, clause: &str) -> Self {
        match MergeClause::parse(clause) {
            Ok(c) => self.clauses.push(c),
            Err(e) => {
                self.error.get_or_insert(e);
            }
        }
        self
    }

    /// `WHEN MATCHED [AND condition] THEN UPDATE SET column = value, …`.
    pub fn when_matched_update<S: Into<String>>(
        self,
        condition: Option<Expr>,
        set: impl IntoIterator<Item = (S, Expr)>,
    ) -> Self {
        self.push(
            ClauseKind::Matched,
            condition,
            MergeAction::Update(assignments(set)),
        )
    }

    /// `WHEN MATCHED [AND condition] THEN UPDATE SET *`.
    pub fn when_matched_update_all(self, condition: Option<Expr>) -> Self {
        self.push(ClauseKind::Matched, condition, MergeAction::UpdateAll)
    }

    /// `WHEN MATCHED [AND condition] THEN DELETE`.
    pub fn when_matched_delete(self, condition: Option<Expr>) -> Self {
        self.push(ClauseKind::Matched, condition, MergeAction::Delete)
    }

    /// `WHEN NOT MATCHED [AND condition] THEN INSERT (columns) VALUES (values)`; columns
    /// not listed are NULL.
    pub fn when_not_matched_insert<S: Into<String>>(
        self,
        condition: Option<Expr>,
        columns: impl IntoIterator<Item = S>,
        values: impl IntoIterator<Item = Expr>,
    ) -> Self {
        let columns: Vec<String> = columns.into_iter().map(Into::into).collect();
        let values: Vec<Expr> = values.into_iter().collect();
        if columns.len() != values.len() {
            let mut s = self;
            s.error.get_or_insert(Error::InvalidArgument(format!(
                "INSERT lists {} columns but {} values",
                columns.len(),
                values.len()
            )));
            return s;
        }
        self.push(
            ClauseKind::NotMatched,
            condition,
            MergeAction::Insert(assignments(columns.into_iter().zip(values))),
        )
    }

    /// `WHEN NOT MATCHED [AND condition] THEN INSERT *`.
    pub fn when_not_matched_insert_all(self, condition: Option<Expr>) -> Self {
        self.push(ClauseKind::NotMatched, condition, MergeAction::InsertAll)
    }

    /// `WHEN NOT MATCHED BY SOURCE [AND condition] THEN UPDATE SET column = value, …`.
    pub fn when_not_matched_by_source_update<S: Into<String>>(
        self,
        condition: Option<Expr>,
        set: impl IntoIterator<Item = (S, Expr)>,
    ) -> Self {
        self.push(
            ClauseKind::NotMatchedBySource,
            condition,
            MergeAction::Update(assignments(set)),
        )
    }

    /// `WHEN NOT MATCHED BY SOURCE [AND condition] THEN DELETE`.
    pub fn when_not_matched_by_source_delete(self, condition: Option<Expr>) -> Self {
        self.push(
            ClauseKind::NotMatchedBySource,
            condition,
            MergeAction::Delete,
        )
    }

    /// Schema evolution: source columns the target lacks are added to it (nullable) when
    /// an `UPDATE SET *` or `INSERT *` clause would write them. Off by default (they are an
    /// error then, as in Delta without `mergeSchema`).
    pub fn merge_schema(mut self, on: bool) -> Self {
        self.merge_schema = on;
        self
    }

    /// Names the target `target` and the source `source` in the ON condition and the
    /// clauses, as SQL's `MERGE INTO tbl AS target USING src AS source` does (deltalake's
    /// `target_alias` / `source_alias`); `t` and `s` keep working. The names are matched
    /// case-insensitively as the first segment of a column path.
    pub fn with_aliases(mut self, target: &str, source: &str) -> Self {
        if target.is_empty() || source.is_empty() || target.eq_ignore_ascii_case(source) {
            self.error.get_or_insert(Error::InvalidArgument(format!(
                "MERGE aliases must be two different non-empty names, got `{target}` and `{source}`"
            )));
        } else {
            self.aliases = Some((target.to_string(), source.to_string()));
        }
        self
    }

    /// The ON condition and the clauses with the aliases (if any) renamed to `t` / `s`
    /// (a failure a builder method recorded is the caller's to report first).
    fn resolved(&self) -> Result<(Expr, Vec<MergeClause>)> {
        let on = self
            .on
            .expr
            .clone()
            .map_err(|e| Error::InvalidArgument(format!("MERGE ON `{}`: {e}", self.on.text)))?;
        let clauses = self.clauses.clone();
        Ok(match &self.aliases {
            Some((target, source)) => {
                let mut rename = |path: &[String]| -> Vec<String> {
                    let mut path = path.to_vec();
                    if let Some(first) = path.first_mut() {
                        if first.eq_ignore_ascii_case(target) {
                            *first = scope::TARGET.to_string();
                        } else if first.eq_ignore_ascii_case(source) {
                            *first = scope::SOURCE.to_string();
                        }
                    }
                    path
                };
                let clauses = clauses
                    .into_iter()
                    .map(|c| c.map_columns(&mut rename))
                    .collect();
                (on.map_columns(&mut rename), clauses)
            }
            None => (on, clauses),
        })
    }

    /// Explains what [`execute`](Self::execute) would do, without reading any target data
    /// file or writing anything: the join (hash keys or nested loop), the residual, the
    /// clauses, the target columns decoded, how change data is captured, new columns, the
    /// pruning from the source's keys and the number of candidate files. A MERGE that would
    /// fail planning (names, types) fails here the same way.
    ///
    /// ```
    /// # fn main() -> alluvium::Result<()> {
    /// use std::sync::Arc;
    /// use arrow_array::{Int64Array, RecordBatch};
    /// use arrow_schema::{DataType, Field, Schema};
    /// let schema = Schema::new(vec![Field::new("id", DataType::Int64, true)]);
    /// let ids = RecordBatch::try_new(
    ///     Arc::new(schema.clone()),
    ///     vec![Arc::new(Int64Array::from(vec![1, 2, 3]))],
    /// )?;
    /// let table = alluvium::Table::in_memory();
    /// let no_properties: [(&str, &str); 0] = [];
    /// table.create_with_data(
    ///     &schema,
    ///     &[],
    ///     no_properties,
    ///     [ids.clone()],
    ///     &alluvium::WriteOptions::default(),
    /// )?;
    /// let plan = table
    ///     .merge([ids], "t.id = s.id")
    ///     .when("MATCHED THEN DELETE")
    ///     .explain(&alluvium::WriteOptions::default())?;
    /// assert!(plan.contains("join: hash on t.id = s.id"), "{plan}");
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// As [`execute`](Self::execute) before it writes anything; a failure recorded while
    /// the builder was set up (a clause that did not parse, a source that failed to read)
    /// as [`Error::InvalidArgument`] with its message.
    pub fn explain(&self, options: &WriteOptions) -> Result<String> {
        if let Some(e) = &self.error {
            // The builder keeps its error for `execute`; here its message is reported.
            return Err(Error::InvalidArgument(e.to_string()));
        }
        let (on, clauses) = self.resolved()?;
        let snapshot = self.table.read_snapshot(options)?;
        // A transaction only to record what planning would: it is never committed.
        let mut txn = alluvium_mvcc::Transaction::new(snapshot.inner(), "MERGE");
        let prepared = execute::prepare(
            execute::MergeSpec {
                table: &self.table,
                source: self.source.clone(),
                on,
                on_text: self.on.text.clone(),
                clauses,
                merge_schema: self.merge_schema || options.merge_schema,
                options,
            },
            &snapshot,
            &mut txn,
        )?;
        Ok(prepared.plan.to_string())
    }

    /// Runs the MERGE as one commit (operation `MERGE`). Every clause's names and types
    /// are checked before any file is written.
    ///
    /// # Errors
    /// Clauses that do not parse or bind (unknown or ambiguous names, types a column cannot
    /// hold); [`Error::MergeCardinalityViolation`] when a target row that a clause would
    /// update or delete matches several source rows (nothing is committed); evaluation
    /// errors; commit conflicts and storage errors.
    pub fn execute(self, options: &WriteOptions) -> Result<DmlOutcome> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let (on, clauses) = self.resolved()?;
        // One instant for `current_timestamp` in every clause.
        alluvium_expr::at_statement_time(chrono::Utc::now().timestamp_micros(), || {
            execute::run(execute::MergeSpec {
                table: &self.table,
                source: self.source,
                on,
                on_text: self.on.text,
                clauses,
                merge_schema: self.merge_schema || options.merge_schema,
                options,
            })
        })
    }
}
