//! The plan of an UPDATE: everything decided before any data file is read. From the table's
//! schema and rules, the assignments and the predicate it holds the bound predicate, the
//! projection computing each matched row's new version, whether change data is recorded,
//! and (once a snapshot is given) the candidate files. Building it reads nothing, so it is
//! unit-tested from a schema alone.

use std::fmt;
use std::sync::Arc;

use alluvium_expr::{Expr, Predicate, bind, bind_assignment};
use alluvium_txlog::actions::Add;
use alluvium_txlog::column_mapping::ColumnMappingMode;
use alluvium_txlog::schema::StructType;

use crate::rows::assign::{Assignment, assigned, check_distinct};
use crate::rows::project::{ColumnValue, Projection};
use crate::rows::rules::{ColumnRules, RowKind};
use crate::{Error, Result, Snapshot};

/// How an UPDATE records change data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChangeCapture {
    /// The table records no change data.
    Off,
    /// Each updated row as an `update_preimage` (the matched row as read, every column)
    /// and an `update_postimage` (its new version).
    PreAndPostImages,
}

/// What the table contributes to an UPDATE plan.
pub(crate) struct UpdateTable<'a> {
    pub schema: &'a StructType,
    pub partition_columns: &'a [String],
    pub column_mapping: ColumnMappingMode,
    pub rules: Arc<ColumnRules>,
    /// The table records change data (`delta.enableChangeDataFeed`).
    pub change_data_feed: bool,
}

/// An UPDATE, planned: see the module docs.
#[derive(Debug)]
pub(crate) struct UpdatePlan {
    /// The predicate as written (recorded in the commit); `None`: every row.
    pub predicate_text: Option<String>,
    /// The bound predicate (TRUE without one).
    pub predicate: Predicate,
    pub assignments: Vec<Assignment>,
    /// Each matched row's new version, every column (unassigned ones kept, generated ones
    /// computed again).
    pub projection: Projection,
    pub capture: ChangeCapture,
    /// The files the predicate may match; `None` until [`select_files`](Self::select_files).
    pub candidates: Option<Vec<Add>>,
}

impl UpdatePlan {
    /// Plans an UPDATE of the table `table` describes. Reads no data.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] without assignments, for a column assigned twice or one
    /// the table lacks (with the nearest name); binding errors of the predicate and the
    /// values (unknown names, types the column cannot hold); identity columns assigned.
    pub(crate) fn new(
        table: UpdateTable<'_>,
        assignments: &[Assignment],
        predicate: Option<&Expr>,
        predicate_text: Option<&str>,
    ) -> Result<UpdatePlan> {
        if assignments.is_empty() {
            return Err(Error::InvalidArgument(
                "UPDATE needs at least one assignment".into(),
            ));
        }
        check_distinct(assignments)?;
        let UpdateTable {
            schema,
            partition_columns: partitions,
            column_mapping: mode,
            rules,
            change_data_feed,
        } = table;
        for a in assignments {
            if schema.field(&a.column).is_none() {
                let names = schema.fields.iter().map(|f| f.name.as_str());
                return Err(Error::InvalidArgument(format!(
                    "UPDATE: the table has no column `{}`{}",
                    a.column,
                    alluvium_expr::nearest_name(&a.column, names)
                        .map(|n| format!("; did you mean `{n}`?"))
                        .unwrap_or_default()
                )));
            }
        }
        for a in assignments {
            rules.check_assignable(&a.column)?;
        }
        let mut values = Vec::with_capacity(schema.fields.len());
        for f in &schema.fields {
            let expr = match assigned(assignments, &f.name) {
                Some(a) => a.value.clone(),
                // A generated column the UPDATE does not set is computed again from the new
                // values of its sources (as Delta Spark does).
                None if rules.is_generated(&f.name) => {
                    values.push(ColumnValue::Null);
                    continue;
                }
                None => Expr::Column(vec![f.name.clone()]),
            };
            values.push(ColumnValue::Expr(bind_assignment(
                &expr,
                schema,
                partitions,
                mode,
                &f.data_type,
            )?));
        }
        let projection = Projection::new(schema, values, rules, RowKind::Update)?;
        let predicate_bound = match predicate {
            Some(e) => bind(e, schema, partitions, mode)?,
            None => Predicate::Const(Some(true)),
        };
        Ok(UpdatePlan {
            predicate_text: predicate_text.map(str::to_string),
            predicate: predicate_bound,
            assignments: assignments.to_vec(),
            projection,
            capture: match change_data_feed {
                true => ChangeCapture::PreAndPostImages,
                false => ChangeCapture::Off,
            },
            candidates: None,
        })
    }

    /// The files of `snapshot` the predicate may match (skipping also through generated
    /// partition columns of its columns).
    pub(crate) fn select_files(&mut self, snapshot: &Snapshot) {
        let prune = crate::read::scan::generated::pruning_predicate(&self.predicate, snapshot);
        self.candidates = Some(
            snapshot
                .inner()
                .files_matching(&prune)
                .map(|m| m.file.to_add())
                .collect(),
        );
    }

    /// The commit's `operationParameters`: `predicate`, a JSON list holding the predicate as
    /// written (as DELETE records it), when there is one.
    pub(crate) fn parameters(&self) -> Vec<(&'static str, String)> {
        match &self.predicate_text {
            Some(p) => vec![(
                "predicate",
                serde_json::to_string(&vec![p]).unwrap_or_default(),
            )],
            None => Vec::new(),
        }
    }
}

impl fmt::Display for UpdatePlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let set: Vec<String> = self
            .assignments
            .iter()
            .map(|a| format!("{} = {}", a.column, a.value))
            .collect();
        writeln!(f, "UPDATE SET {}", set.join(", "))?;
        match &self.predicate_text {
            Some(p) => writeln!(f, "  where: {p}")?,
            None => writeln!(f, "  where: every row")?,
        }
        let mut read: Vec<String> = self
            .predicate
            .columns()
            .iter()
            .map(|c| c.path.join("."))
            .collect();
        read.sort();
        read.dedup();
        writeln!(
            f,
            "  predicate columns (decoded first): {}",
            if read.is_empty() {
                "none".to_string()
            } else {
                read.join(", ")
            }
        )?;
        let capture = match self.capture {
            ChangeCapture::Off => "off",
            ChangeCapture::PreAndPostImages => "update_preimage and update_postimage",
        };
        writeln!(f, "  change data: {capture}")?;
        match &self.candidates {
            Some(c) => write!(f, "  candidate files: {}", c.len()),
            None => write!(f, "  candidate files: not selected"),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use alluvium_expr::parse_expr;
    use alluvium_txlog::actions::Protocol;
    use alluvium_txlog::schema::{DataType, PrimitiveType, StructField};

    use super::*;
    use crate::rows::assign::parse_assignments;

    fn schema() -> StructType {
        StructType::new(vec![
            StructField::new("id", DataType::Primitive(PrimitiveType::Long), true),
            StructField::new("k", DataType::Primitive(PrimitiveType::String), true),
            StructField::new("v", DataType::Primitive(PrimitiveType::Long), true),
        ])
    }

    fn plan(set: &str, predicate: Option<&str>, cdf: bool) -> Result<UpdatePlan> {
        let schema = schema();
        let protocol = Protocol {
            min_reader_version: 1,
            min_writer_version: 2,
            reader_features: None,
            writer_features: None,
        };
        let rules = ColumnRules::of_table(
            &protocol,
            &[],
            ColumnMappingMode::None,
            &schema,
            &HashMap::new(),
        )?;
        let pred = predicate.map(parse_expr).transpose()?;
        UpdatePlan::new(
            UpdateTable {
                schema: &schema,
                partition_columns: &[],
                column_mapping: ColumnMappingMode::None,
                rules: Arc::new(rules),
                change_data_feed: cdf,
            },
            &parse_assignments(set)?,
            pred.as_ref(),
            predicate,
        )
    }

    #[test]
    fn a_plan_binds_the_predicate_and_every_new_value() {
        let p = plan("v = v + 1", Some("id > 3 AND k = 'a'"), false).unwrap();
        let mut cols: Vec<String> = p
            .predicate
            .columns()
            .iter()
            .map(|c| c.path.join("."))
            .collect();
        cols.sort();
        cols.dedup();
        assert_eq!(cols, vec!["id", "k"]);
        // Every column gets a value: the assigned one and the two kept.
        let mut kept: Vec<String> = p
            .projection
            .columns()
            .iter()
            .map(|c| c.path.join("."))
            .collect();
        kept.sort();
        kept.dedup();
        assert_eq!(kept, vec!["id", "k", "v"]);
        assert_eq!(p.capture, ChangeCapture::Off);
        assert_eq!(
            p.parameters(),
            vec![("predicate", r#"["id > 3 AND k = 'a'"]"#.to_string())]
        );
        let text = p.to_string();
        assert!(text.contains("UPDATE SET v = v + 1"), "{text}");
        assert!(
            text.contains("predicate columns (decoded first): id, k"),
            "{text}"
        );
        assert!(text.contains("candidate files: not selected"), "{text}");
    }

    #[test]
    fn without_a_predicate_every_row_is_a_candidate_and_none_is_recorded() {
        let p = plan("k = 'x'", None, true).unwrap();
        assert_eq!(p.predicate, Predicate::Const(Some(true)));
        assert!(p.parameters().is_empty());
        assert_eq!(p.capture, ChangeCapture::PreAndPostImages);
        assert!(p.to_string().contains("where: every row"));
    }

    #[test]
    fn names_types_and_assignments_are_checked_when_planning() {
        for (set, predicate) in [
            ("nope = 1", None),
            ("v = 'text'", None),
            ("v = nope + 1", None),
            ("v = 1, V = 2", None),
            ("v = 1", Some("nope = 1")),
        ] {
            assert!(plan(set, predicate, false).is_err(), "{set} {predicate:?}");
        }
        let e = plan("vv = 1", None, false).unwrap_err();
        assert!(e.to_string().contains("did you mean `v`"), "{e}");
    }
}
