//! The plan of a MERGE: everything decided before any target data file is read. From the
//! target's schema, the source's schema and the request (ON, clauses, schema merging) it
//! holds the evolved table schema, the ON condition split into equality keys and a residual,
//! the bound clauses, the target columns the scan decodes, how change data is captured, and
//! (once the source's keys are known) the pruning predicate and the candidate files.
//!
//! Building a plan reads no data file and writes nothing, so it is unit-tested from schemas
//! alone; `execute` then runs it. Its [`Display`](std::fmt::Display) form explains it, and
//! [`MergePlan::parameters`] gives the commit's `operationParameters`.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

use alluvium_expr::{BoundColumn, Expr, Predicate, bind};
use alluvium_mvcc::Transaction;
use alluvium_txlog::actions::Add;
use alluvium_txlog::column_mapping::ColumnMappingMode;
use alluvium_txlog::schema::{StructField, StructType};
use arrow_array::RecordBatch;

use super::bind::{BoundAction, BoundClause, bind_clause, has_star};
use super::clause::{ClauseKind, MergeClause};
use super::join::{KeyPair, SourceIndex, analyse_on};
use super::prune::{Pruning, pruning};
use super::scope::{Scope, Sides, TARGET};
use super::source::Source;
use crate::rows::rules::ColumnRules;
use crate::{Error, Result};

/// The longest pruning predicate recorded in the commit (a long `IN` list would bloat it).
const MAX_RECORDED_PRUNING: usize = 1000;

/// How a MERGE records change data (the change data feed), which decides what the scan
/// decodes of each target file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChangeCapture {
    /// No change data: the table does not record it, or the MERGE only inserts (an append,
    /// which records none).
    Off,
    /// Copy-on-write: the rewrite decodes every touched file whole anyway and records the
    /// old rows there, so the scan stays on the columns the clauses read.
    Rewrite,
    /// Deletion vectors, no NOT MATCHED BY SOURCE clause: only matched rows change, so files
    /// are probed on the clauses' columns and the matched rows alone are then decoded whole.
    MatchedRowsOnly,
    /// Deletion vectors with NOT MATCHED BY SOURCE: any target row may change and be
    /// recorded, so the scan decodes every column.
    AllColumns,
}

impl ChangeCapture {
    /// The capture mode of a MERGE with `clauses` on a table that records change data
    /// (`change_data_feed`) and deletes rows with deletion vectors (`deletion_vectors`).
    pub(crate) fn choose(
        clauses: &[MergeClause],
        change_data_feed: bool,
        deletion_vectors: bool,
    ) -> ChangeCapture {
        let changes_rows = clauses.iter().any(|c| c.kind != ClauseKind::NotMatched);
        let by_source = clauses
            .iter()
            .any(|c| c.kind == ClauseKind::NotMatchedBySource);
        match (
            change_data_feed && changes_rows,
            deletion_vectors,
            by_source,
        ) {
            (false, _, _) => ChangeCapture::Off,
            (true, false, _) => ChangeCapture::Rewrite,
            (true, true, false) => ChangeCapture::MatchedRowsOnly,
            (true, true, true) => ChangeCapture::AllColumns,
        }
    }

    /// Whether change data is written at all.
    pub(crate) fn records(self) -> bool {
        self != ChangeCapture::Off
    }

    fn describe(self) -> &'static str {
        match self {
            ChangeCapture::Off => "off",
            ChangeCapture::Rewrite => "rewrite (old rows recorded by the copy-on-write rewrite)",
            ChangeCapture::MatchedRowsOnly => "matched rows only (decoded whole after the probe)",
            ChangeCapture::AllColumns => "all columns (every target column decoded)",
        }
    }
}

/// What the table contributes to a plan.
pub(crate) struct TableFacts<'a> {
    /// The target's schema at the snapshot read.
    pub schema: &'a StructType,
    pub partition_columns: &'a [String],
    /// The table records change data (`delta.enableChangeDataFeed`).
    pub change_data_feed: bool,
    /// Rows are deleted with deletion vectors (else by copy-on-write).
    pub deletion_vectors: bool,
}

/// What the caller asked for.
pub(crate) struct MergeRequest<'a> {
    /// The ON condition (aliases already resolved to `t` / `s`).
    pub on: &'a Expr,
    /// The ON condition as the caller wrote it (recorded in the commit).
    pub on_text: &'a str,
    pub clauses: &'a [MergeClause],
    pub merge_schema: bool,
}

/// The table-dependent steps of planning, which a unit test can give without a table.
pub(crate) trait PlanTable {
    /// The table schema with `new_fields` added (schema evolution), recording the change
    /// for the commit.
    fn evolve(&mut self, schema: &StructType, new_fields: Vec<StructField>) -> StructType;
    /// The column rules of the (evolved) table schema.
    ///
    /// # Errors
    /// A rule alluvium cannot apply exactly.
    fn column_rules(&self, schema: &StructType) -> Result<ColumnRules>;
}

/// A MERGE, planned: see the module docs.
#[derive(Debug)]
pub(crate) struct MergePlan {
    pub on_text: String,
    /// The clauses as given (recorded in the commit).
    pub clauses: Vec<MergeClause>,
    /// The target and source schemas and the synthetic `{t, s}` one expressions bind to.
    pub scope: Scope,
    /// The table's schema after the MERGE: the target's plus `new_columns`.
    pub table_schema: StructType,
    /// Source columns added to the table (schema merging with `UPDATE SET *` / `INSERT *`).
    pub new_columns: Vec<String>,
    /// Source columns of type `void` typed as the target's columns of the same names.
    pub void_columns: Vec<String>,
    /// The source has no rows and no schema: nothing refers to its columns, and only NOT
    /// MATCHED BY SOURCE clauses were bound (the others can never apply).
    pub schemaless_source: bool,
    /// The ON condition's equality keys (hash-joined); none means a nested-loop join.
    pub keys: Vec<KeyPair>,
    /// The other ON conjuncts (qualified), AND-ed, and bound.
    pub residual: Option<(Expr, Predicate)>,
    /// Every bound clause, in order.
    pub bound: Vec<BoundClause>,
    /// Several source rows may match one target row (Delta's rule: only when the one
    /// MATCHED clause is an unconditional DELETE).
    pub multiple_matches_ok: bool,
    pub capture: ChangeCapture,
    /// The target columns (indexes in the target schema) the scan decodes.
    pub needed: BTreeSet<usize>,
    pub column_rules: Arc<ColumnRules>,
    /// What the source's keys say about the target rows that can match; `None` until
    /// [`prune`](Self::prune).
    pub pruning: Option<Pruning>,
    /// The target files read; `None` until [`select_files`](Self::select_files).
    pub candidates: Option<Vec<Add>>,
}

impl MergePlan {
    /// Plans a MERGE of `source` into the table `facts` describes. Reads no data.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] without clauses, for names that do not bind or keys of
    /// types that cannot be equal; [`Error::SchemaMismatch`] for values a column cannot
    /// take or a new column that would be a partition column; column rule refusals.
    pub(crate) fn new(
        facts: &TableFacts<'_>,
        source: &Source,
        request: &MergeRequest<'_>,
        table: &mut dyn PlanTable,
    ) -> Result<MergePlan> {
        if request.clauses.is_empty() {
            return Err(Error::InvalidArgument(
                "a MERGE needs at least one WHEN clause".into(),
            ));
        }
        let target = facts.schema;
        let mut table_schema = target.clone();
        let mut new_columns = Vec::new();
        if request.merge_schema && has_star(request.clauses) {
            let new_fields: Vec<StructField> = source
                .schema
                .fields
                .iter()
                .filter(|f| target.field(&f.name).is_none())
                .map(|f| {
                    let mut f = f.clone();
                    f.nullable = true;
                    f.metadata.clear();
                    f
                })
                .collect();
            if let Some(p) = new_fields.iter().find(|f| {
                facts
                    .partition_columns
                    .iter()
                    .any(|p| p.eq_ignore_ascii_case(&f.name))
            }) {
                return Err(Error::SchemaMismatch(format!(
                    "new column `{}` cannot be a partition column",
                    p.name
                )));
            }
            if !new_fields.is_empty() {
                new_columns = new_fields.iter().map(|f| f.name.clone()).collect();
                table_schema = table.evolve(target, new_fields);
            }
        }
        let scope = Scope::new(target, &source.schema)?;
        // A source without a schema has no column ON could name and no row to pair: the
        // ON condition is not bound, and neither are the clauses only a source row reaches.
        let (keys, residual) = if source.schemaless {
            (Vec::new(), None)
        } else {
            let on_q = scope.qualify(request.on, Sides::BOTH, "ON")?;
            let on = analyse_on(&on_q, &scope)?;
            let residual = match on.residual {
                Some(r) => {
                    let p = bind(&r, &scope.synthetic, &[], ColumnMappingMode::None)?;
                    Some((r, p))
                }
                None => None,
            };
            (on.keys, residual)
        };
        let column_rules = Arc::new(table.column_rules(&table_schema)?);
        let bound: Vec<BoundClause> = request
            .clauses
            .iter()
            .filter(|c| !source.schemaless || c.kind == ClauseKind::NotMatchedBySource)
            .map(|c| {
                bind_clause(
                    c,
                    &scope,
                    &table_schema,
                    request.merge_schema,
                    &column_rules,
                )
            })
            .collect::<Result<_>>()?;
        let matched: Vec<&BoundClause> = bound
            .iter()
            .filter(|c| c.kind == ClauseKind::Matched)
            .collect();
        let multiple_matches_ok = matched.len() == 1
            && matched[0].condition.is_none()
            && matches!(matched[0].action, BoundAction::Delete);
        let capture = ChangeCapture::choose(
            request.clauses,
            facts.change_data_feed,
            facts.deletion_vectors,
        );
        let mut plan = MergePlan {
            on_text: request.on_text.to_string(),
            clauses: request.clauses.to_vec(),
            scope,
            table_schema,
            new_columns,
            void_columns: source.void_columns.clone(),
            schemaless_source: source.schemaless,
            keys,
            residual,
            bound,
            multiple_matches_ok,
            capture,
            needed: BTreeSet::new(),
            column_rules,
            pruning: None,
            candidates: None,
        };
        plan.needed = plan.needed_columns();
        Ok(plan)
    }

    /// The target columns the scan decodes: the keys, every target column the residual,
    /// the conditions and the new values name, and every column when change data is
    /// captured from all of them. The others stay NULL in `t`, which nothing bound reads.
    fn needed_columns(&self) -> BTreeSet<usize> {
        let target = &self.scope.target;
        let mut needed: BTreeSet<usize> = self.keys.iter().map(|k| k.target).collect();
        if self.capture == ChangeCapture::AllColumns {
            needed.extend(0..target.fields.len());
        }
        let mut note = |c: &BoundColumn| {
            if c.path.first().map(String::as_str) == Some(TARGET)
                && let Some(i) = c.path.get(1).and_then(|n| target.index_of(n))
            {
                needed.insert(i);
            }
        };
        if let Some((_, r)) = &self.residual {
            r.columns().into_iter().for_each(&mut note);
        }
        for c in &self.bound {
            if let Some(p) = &c.condition {
                p.columns().into_iter().for_each(&mut note);
            }
            if let BoundAction::Update(p) | BoundAction::Insert(p) = &c.action {
                p.columns().into_iter().for_each(&mut note);
            }
        }
        needed
    }

    /// The bound clauses of one kind, in order.
    pub(crate) fn of_kind(&self, kind: ClauseKind) -> Vec<&BoundClause> {
        self.bound.iter().filter(|c| c.kind == kind).collect()
    }

    /// Decides the pruning from the source's keys (`index` built on `source`): with a NOT
    /// MATCHED BY SOURCE clause every file is read.
    pub(crate) fn prune(&mut self, source: &RecordBatch, index: &SourceIndex) {
        let by_source = self
            .bound
            .iter()
            .any(|c| c.kind == ClauseKind::NotMatchedBySource);
        self.pruning = Some(match by_source {
            true => Pruning::All,
            false => pruning(&self.scope, &self.keys, source, index),
        });
    }

    /// The candidate files of `snapshot` under the pruning (every file if it was not
    /// decided), recorded with the read predicate in `txn`.
    ///
    /// # Errors
    /// The pruning predicate does not bind to the table (a bug: it names target columns).
    pub(crate) fn select_files(
        &mut self,
        snapshot: &crate::Snapshot,
        txn: &mut Transaction,
    ) -> Result<()> {
        let files = match self.pruning.as_ref().unwrap_or(&Pruning::All) {
            Pruning::Nothing => Vec::new(),
            Pruning::All => {
                txn.read_predicate(Predicate::Const(Some(true)));
                snapshot.files().map(|f| f.to_add()).collect()
            }
            Pruning::Where(e) => {
                let p = bind(
                    e,
                    &self.scope.target,
                    snapshot.partition_columns(),
                    snapshot.column_mapping(),
                )?;
                let files = snapshot
                    .inner()
                    .files_matching(&p)
                    .map(|m| m.file.to_add())
                    .collect();
                txn.read_predicate(p);
                files
            }
        };
        self.candidates = Some(files);
        Ok(())
    }

    /// The commit's `operationParameters`, as Delta engines write them for MERGE:
    /// `predicate` (ON as written), `matchedPredicates`, `notMatchedPredicates`,
    /// `notMatchedBySourcePredicates` (JSON lists of `{predicate?, actionType}`), and,
    /// once decided and when short, `pruningPredicate`.
    pub(crate) fn parameters(&self) -> Vec<(&'static str, String)> {
        let mut out = vec![
            ("predicate", self.on_text.clone()),
            (
                "matchedPredicates",
                clause_json(&self.clauses, ClauseKind::Matched),
            ),
            (
                "notMatchedPredicates",
                clause_json(&self.clauses, ClauseKind::NotMatched),
            ),
            (
                "notMatchedBySourcePredicates",
                clause_json(&self.clauses, ClauseKind::NotMatchedBySource),
            ),
        ];
        if let Some(p) = &self.pruning {
            let text = pruning_text(p);
            if text.len() <= MAX_RECORDED_PRUNING {
                out.push(("pruningPredicate", text));
            }
        }
        out
    }
}

/// The clauses of one kind as Delta records them: `[{"predicate": …, "actionType": …}]`.
pub(crate) fn clause_json(clauses: &[MergeClause], kind: ClauseKind) -> String {
    let items: Vec<serde_json::Value> = clauses
        .iter()
        .filter(|c| c.kind == kind)
        .map(|c| {
            let mut m = serde_json::Map::new();
            if let Some(p) = &c.condition {
                m.insert("predicate".into(), p.to_string().into());
            }
            m.insert("actionType".into(), c.action.action_type().into());
            serde_json::Value::Object(m)
        })
        .collect();
    serde_json::Value::Array(items).to_string()
}

fn pruning_text(p: &Pruning) -> String {
    match p {
        Pruning::Nothing => "false".to_string(),
        Pruning::All => "true".to_string(),
        Pruning::Where(e) => e.to_string(),
    }
}

impl fmt::Display for MergePlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (target, source) = (&self.scope.target, &self.scope.source);
        writeln!(f, "MERGE ON {}", self.on_text)?;
        if self.schemaless_source {
            writeln!(
                f,
                "  source: no rows and no schema (ON and the clauses a source row needs are not bound)"
            )?;
        } else {
            let names: Vec<&str> = source.fields.iter().map(|c| c.name.as_str()).collect();
            writeln!(f, "  source columns: {}", names.join(", "))?;
        }
        if self.keys.is_empty() {
            writeln!(
                f,
                "  join: nested loop (no t.col = s.col key), every source row a candidate"
            )?;
        } else {
            let keys: Vec<String> = self
                .keys
                .iter()
                .map(|k| {
                    format!(
                        "t.{} = s.{}",
                        target.fields[k.target].name, source.fields[k.source].name
                    )
                })
                .collect();
            writeln!(f, "  join: hash on {}", keys.join(", "))?;
        }
        match &self.residual {
            Some((r, _)) => writeln!(f, "  residual: {r}")?,
            None => writeln!(f, "  residual: none")?,
        }
        for c in &self.clauses {
            let skipped = self.schemaless_source && c.kind != ClauseKind::NotMatchedBySource;
            write!(f, "  WHEN {}", c.kind.sql())?;
            if let Some(p) = &c.condition {
                write!(f, " AND {p}")?;
            }
            write!(f, " THEN {}", c.action.action_type())?;
            writeln!(f, "{}", if skipped { " (cannot apply)" } else { "" })?;
        }
        if self.multiple_matches_ok {
            writeln!(
                f,
                "  cardinality: several source rows may match a target row (unconditional DELETE)"
            )?;
        }
        let needed: Vec<&str> = self
            .needed
            .iter()
            .map(|i| target.fields[*i].name.as_str())
            .collect();
        match needed.is_empty() {
            true => writeln!(f, "  target columns read: none (row positions only)")?,
            false => writeln!(f, "  target columns read: {}", needed.join(", "))?,
        }
        writeln!(f, "  change data: {}", self.capture.describe())?;
        if !self.new_columns.is_empty() {
            writeln!(f, "  new columns: {}", self.new_columns.join(", "))?;
        }
        if !self.void_columns.is_empty() {
            writeln!(
                f,
                "  void source columns typed from the target: {}",
                self.void_columns.join(", ")
            )?;
        }
        match &self.pruning {
            Some(p) => writeln!(f, "  pruning: {}", pruning_text(p))?,
            None => writeln!(f, "  pruning: not decided (source keys not read)")?,
        }
        match &self.candidates {
            Some(c) => write!(f, "  candidate files: {}", c.len()),
            None => write!(f, "  candidate files: not selected"),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::Arc;

    use alluvium_expr::parse_expr;
    use alluvium_txlog::actions::Protocol;
    use alluvium_txlog::schema::{DataType, PrimitiveType};
    use arrow_array::{Int64Array, StringArray};
    use arrow_schema::{Field, Schema};

    use super::*;

    /// Planning without a table: evolution extends the schema, rules are the plain ones.
    struct NoTable;

    impl PlanTable for NoTable {
        fn evolve(&mut self, schema: &StructType, new_fields: Vec<StructField>) -> StructType {
            let mut s = schema.clone();
            s.fields.extend(new_fields);
            s
        }

        fn column_rules(&self, schema: &StructType) -> Result<ColumnRules> {
            let protocol = Protocol {
                min_reader_version: 1,
                min_writer_version: 2,
                reader_features: None,
                writer_features: None,
            };
            ColumnRules::of_table(
                &protocol,
                &[],
                ColumnMappingMode::None,
                schema,
                &HashMap::new(),
            )
        }
    }

    fn field(name: &str, t: PrimitiveType) -> StructField {
        StructField::new(name, DataType::Primitive(t), true)
    }

    /// The target: id long, k string, v long, w long.
    fn target() -> StructType {
        StructType::new(vec![
            field("id", PrimitiveType::Long),
            field("k", PrimitiveType::String),
            field("v", PrimitiveType::Long),
            field("w", PrimitiveType::Long),
        ])
    }

    /// A source of (id, k, v, w, extra) with `ids`.
    fn source(ids: &[i64]) -> Source {
        let schema = StructType::new(vec![
            field("id", PrimitiveType::Long),
            field("k", PrimitiveType::String),
            field("v", PrimitiveType::Long),
            field("w", PrimitiveType::Long),
            field("extra", PrimitiveType::Long),
        ]);
        let arrow = Arc::new(Schema::new(vec![
            Field::new("id", arrow_schema::DataType::Int64, true),
            Field::new("k", arrow_schema::DataType::Utf8, true),
            Field::new("v", arrow_schema::DataType::Int64, true),
            Field::new("w", arrow_schema::DataType::Int64, true),
            Field::new("extra", arrow_schema::DataType::Int64, true),
        ]));
        let n = ids.len();
        let batch = RecordBatch::try_new(
            arrow,
            vec![
                Arc::new(Int64Array::from(ids.to_vec())),
                Arc::new(StringArray::from(vec!["a"; n])),
                Arc::new(Int64Array::from(vec![1; n])),
                Arc::new(Int64Array::from(vec![4; n])),
                Arc::new(Int64Array::from(vec![2; n])),
            ],
        )
        .unwrap();
        Source {
            schema,
            batch,
            void_columns: Vec::new(),
            schemaless: false,
        }
    }

    fn facts(target: &StructType, cdf: bool, dv: bool) -> TableFacts<'_> {
        TableFacts {
            schema: target,
            partition_columns: &[],
            change_data_feed: cdf,
            deletion_vectors: dv,
        }
    }

    fn plan_of(
        on: &str,
        clauses: &[&str],
        source: &Source,
        cdf: bool,
        dv: bool,
        merge_schema: bool,
    ) -> Result<MergePlan> {
        let target = target();
        let on_expr = parse_expr(on).unwrap();
        let clauses: Vec<MergeClause> = clauses
            .iter()
            .map(|c| MergeClause::parse(c).unwrap())
            .collect();
        MergePlan::new(
            &facts(&target, cdf, dv),
            source,
            &MergeRequest {
                on: &on_expr,
                on_text: on,
                clauses: &clauses,
                merge_schema,
            },
            &mut NoTable,
        )
    }

    fn needed_names(p: &MergePlan) -> Vec<&str> {
        p.needed
            .iter()
            .map(|i| p.scope.target.fields[*i].name.as_str())
            .collect()
    }

    #[test]
    fn an_upsert_hashes_on_its_key_and_reads_only_the_key() {
        let p = plan_of(
            "t.id = s.id",
            &["MATCHED THEN UPDATE SET *", "NOT MATCHED THEN INSERT *"],
            &source(&[1, 2]),
            false,
            false,
            false,
        );
        // Without schema merging the source's extra column is not written.
        let p = p.unwrap();
        let keys: Vec<(usize, usize)> = p.keys.iter().map(|k| (k.target, k.source)).collect();
        assert_eq!(keys, vec![(0, 0)]);
        assert!(p.residual.is_none());
        assert_eq!(needed_names(&p), vec!["id"]);
        assert_eq!(p.capture, ChangeCapture::Off);
        assert!(!p.multiple_matches_ok);
        assert!(p.new_columns.is_empty());
        assert_eq!(p.table_schema, target());
    }

    #[test]
    fn keys_are_split_from_the_residual_whose_columns_are_read() {
        let p = plan_of(
            "t.id = s.id AND t.k = s.k AND t.v < s.v",
            &["MATCHED AND t.w > 0 THEN DELETE"],
            &source(&[1]),
            false,
            false,
            false,
        )
        .unwrap();
        assert_eq!(p.keys.len(), 2);
        let (r, _) = p.residual.as_ref().unwrap();
        assert_eq!(r.to_string(), parse_expr("t.v < s.v").unwrap().to_string());
        assert_eq!(needed_names(&p), vec!["id", "k", "v", "w"]);
    }

    #[test]
    fn an_on_condition_without_an_equality_key_is_a_nested_loop() {
        for on in [
            "t.id < s.id",
            "TRUE",
            "s.id = 1",
            "t.id = s.id + 0",
            "t.id = s.id OR t.k = s.k",
        ] {
            let p = plan_of(
                on,
                &["MATCHED THEN DELETE"],
                &source(&[1]),
                false,
                false,
                false,
            )
            .unwrap();
            assert!(p.keys.is_empty(), "{on}");
            assert!(p.residual.is_some(), "{on}");
            assert!(p.multiple_matches_ok, "{on}: an unconditional DELETE");
            assert!(p.to_string().contains("nested loop"), "{on}: {p}");
            // A DELETE on a condition without target columns decodes none of them.
            if !on.contains("t.") {
                assert!(needed_names(&p).is_empty(), "{on}");
                assert!(p.to_string().contains("read: none"), "{on}: {p}");
            }
        }
    }

    #[test]
    fn the_capture_mode_follows_the_table_and_the_clauses() {
        let upsert = [
            "MATCHED THEN UPDATE SET v = s.v",
            "NOT MATCHED THEN INSERT *",
        ];
        let by_source = [
            "MATCHED THEN UPDATE SET v = s.v",
            "NOT MATCHED BY SOURCE THEN DELETE",
        ];
        let insert_only = ["NOT MATCHED THEN INSERT *"];
        let s = source(&[1]);
        let capture = |clauses: &[&str], cdf, dv| {
            plan_of("t.id = s.id", clauses, &s, cdf, dv, false)
                .unwrap()
                .capture
        };
        assert_eq!(capture(&upsert, false, true), ChangeCapture::Off);
        assert_eq!(capture(&insert_only, true, true), ChangeCapture::Off);
        assert_eq!(capture(&upsert, true, false), ChangeCapture::Rewrite);
        assert_eq!(capture(&upsert, true, true), ChangeCapture::MatchedRowsOnly);
        assert_eq!(capture(&by_source, true, true), ChangeCapture::AllColumns);
        // Every target column is read only when all of them may be recorded.
        let p = plan_of("t.id = s.id", &by_source, &s, true, true, false).unwrap();
        assert_eq!(needed_names(&p), vec!["id", "k", "v", "w"]);
        // A partial update keeps the other columns: it reads them, not the one it sets.
        let p = plan_of("t.id = s.id", &upsert, &s, true, true, false).unwrap();
        assert_eq!(needed_names(&p), vec!["id", "k", "w"]);
    }

    #[test]
    fn schema_merging_adds_the_source_columns_a_star_clause_writes() {
        let s = source(&[1]);
        let p = plan_of(
            "t.id = s.id",
            &["NOT MATCHED THEN INSERT *"],
            &s,
            false,
            false,
            true,
        )
        .unwrap();
        assert_eq!(p.new_columns, vec!["extra"]);
        assert!(p.table_schema.field("extra").is_some());
        assert!(p.to_string().contains("new columns: extra"), "{p}");
        // Without a star clause nothing evolves.
        let p = plan_of(
            "t.id = s.id",
            &["MATCHED THEN UPDATE SET v = s.extra"],
            &s,
            false,
            false,
            true,
        )
        .unwrap();
        assert!(p.new_columns.is_empty());
    }

    #[test]
    fn pruning_and_parameters_come_from_the_plan() {
        let s = source(&[3, 7]);
        let mut p = plan_of(
            "t.id = s.id",
            &["MATCHED AND s.v > 0 THEN UPDATE SET *"],
            &s,
            false,
            false,
            false,
        )
        .unwrap();
        assert!(!p.parameters().iter().any(|(k, _)| *k == "pruningPredicate"));
        let index = SourceIndex::build(&s.batch, &p.keys).unwrap();
        p.prune(&s.batch, &index);
        let params: HashMap<&str, String> = p.parameters().into_iter().collect();
        assert_eq!(params["predicate"], "t.id = s.id");
        assert_eq!(
            params["matchedPredicates"],
            r#"[{"actionType":"update","predicate":"s.v > 0"}]"#
        );
        assert_eq!(params["notMatchedPredicates"], "[]");
        assert_eq!(params["notMatchedBySourcePredicates"], "[]");
        assert!(params["pruningPredicate"].contains("id IN"), "{params:?}");
        let text = p.to_string();
        assert!(text.contains("join: hash on t.id = s.id"), "{text}");
        assert!(text.contains("target columns read: id"), "{text}");
        assert!(text.contains("pruning: id IN"), "{text}");
    }

    #[test]
    fn a_source_without_a_schema_binds_only_not_matched_by_source_clauses() {
        let empty = Source {
            schema: StructType::new(Vec::new()),
            batch: RecordBatch::new_empty(Arc::new(Schema::empty())),
            void_columns: Vec::new(),
            schemaless: true,
        };
        // `s.nope` would not bind against any source; with no schema it is not bound.
        let p = plan_of(
            "t.id = s.nope",
            &[
                "MATCHED THEN UPDATE SET v = s.nope",
                "NOT MATCHED BY SOURCE AND t.id > 3 THEN DELETE",
            ],
            &empty,
            false,
            false,
            false,
        )
        .unwrap();
        assert!(p.keys.is_empty() && p.residual.is_none());
        assert_eq!(p.bound.len(), 1);
        assert_eq!(p.bound[0].kind, ClauseKind::NotMatchedBySource);
        assert_eq!(needed_names(&p), vec!["id"]);
        assert!(p.to_string().contains("no schema"), "{p}");
        // The target side is still checked.
        let e = plan_of(
            "t.id = s.id",
            &["NOT MATCHED BY SOURCE AND t.nope > 3 THEN DELETE"],
            &empty,
            false,
            false,
            false,
        )
        .unwrap_err();
        assert!(e.to_string().contains("nope"), "{e}");
    }

    #[test]
    fn names_and_clauses_are_checked_when_planning() {
        let s = source(&[1]);
        for (on, clause) in [
            ("t.id = s.nope", "MATCHED THEN DELETE"),
            ("t.id = s.k", "MATCHED THEN DELETE"),
            ("t.id = s.id", "NOT MATCHED THEN INSERT (nope) VALUES (1)"),
        ] {
            assert!(
                plan_of(on, &[clause], &s, false, false, false).is_err(),
                "{on} {clause}"
            );
        }
        let e = plan_of("t.id = s.id", &[], &s, false, false, false).unwrap_err();
        assert!(e.to_string().contains("at least one WHEN"), "{e}");
    }
}
