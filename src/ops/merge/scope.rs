//! Names in a MERGE: the target is `t`, the source `s`. Every expression is bound against
//! the synthetic schema `{t: struct<target>, s: struct<source>}` and evaluated on batches
//! with those two struct columns (contract E: nested paths bind and evaluate). Unqualified
//! names are qualified here with the one side that has them; a name both sides have is
//! ambiguous, and a clause may only see the sides its rows have (NOT MATCHED: the source;
//! NOT MATCHED BY SOURCE: the target).

use std::sync::Arc;

use alluvium_expr::{BoundExpr, Expr, Predicate, bind, bind_assignment};
use alluvium_txlog::column_mapping::ColumnMappingMode;
use alluvium_txlog::schema::{DataType, StructField, StructType};
use arrow_array::{Array, ArrayRef, RecordBatch, StructArray, UInt32Array, new_null_array};
use arrow_schema::{Field, Fields, Schema, SchemaRef};

use crate::rows::input;
use crate::{Error, Result};

/// The target's qualifier.
pub(crate) const TARGET: &str = "t";
/// The source's qualifier.
pub(crate) const SOURCE: &str = "s";

/// Which sides an expression may reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sides {
    pub target: bool,
    pub source: bool,
}

impl Sides {
    pub(crate) const BOTH: Sides = Sides {
        target: true,
        source: true,
    };
    pub(crate) const TARGET_ONLY: Sides = Sides {
        target: true,
        source: false,
    };
    pub(crate) const SOURCE_ONLY: Sides = Sides {
        target: false,
        source: true,
    };
}

/// The two schemas of a MERGE and the synthetic one binding sees.
#[derive(Debug, Clone)]
pub(crate) struct Scope {
    pub target: StructType,
    pub source: StructType,
    pub synthetic: StructType,
    /// Arrow fields of the `t` and `s` struct columns.
    pub target_fields: Fields,
    pub source_fields: Fields,
    pub arrow: SchemaRef,
}

impl Scope {
    pub(crate) fn new(target: &StructType, source: &StructType) -> Result<Scope> {
        let synthetic = StructType::new(vec![
            StructField::new(TARGET, DataType::Struct(Box::new(target.clone())), true),
            StructField::new(SOURCE, DataType::Struct(Box::new(source.clone())), true),
        ]);
        let target_fields = input::logical_schema(target)?.fields().clone();
        let source_fields = input::logical_schema(source)?.fields().clone();
        let arrow = Arc::new(Schema::new(vec![
            Field::new(
                TARGET,
                arrow_schema::DataType::Struct(target_fields.clone()),
                true,
            ),
            Field::new(
                SOURCE,
                arrow_schema::DataType::Struct(source_fields.clone()),
                true,
            ),
        ]));
        Ok(Scope {
            target: target.clone(),
            source: source.clone(),
            synthetic,
            target_fields,
            source_fields,
            arrow,
        })
    }

    /// `expr` with every column path qualified (`t.` / `s.`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an unknown or ambiguous name, or one of a side the
    /// clause cannot see.
    pub(crate) fn qualify(&self, expr: &Expr, sides: Sides, what: &str) -> Result<Expr> {
        let mut problem: Option<String> = None;
        let out = expr.map_columns(
            &mut |path: &[String]| match self.qualify_path(path, sides) {
                Ok(p) => p,
                Err(why) => {
                    problem.get_or_insert(format!("{what}: {why}"));
                    path.to_vec()
                }
            },
        );
        match problem {
            Some(p) => Err(Error::InvalidArgument(p)),
            None => Ok(out),
        }
    }

    fn qualify_path(
        &self,
        path: &[String],
        sides: Sides,
    ) -> std::result::Result<Vec<String>, String> {
        let Some(first) = path.first() else {
            return Err("empty column name".into());
        };
        let shown = path.join(".");
        if path.len() >= 2 {
            let side = if first.eq_ignore_ascii_case(TARGET) {
                Some((TARGET, sides.target, "target"))
            } else if first.eq_ignore_ascii_case(SOURCE) {
                Some((SOURCE, sides.source, "source"))
            } else {
                None
            };
            if let Some((q, allowed, name)) = side {
                if !allowed {
                    return Err(format!(
                        "`{shown}` refers to the {name}, which this clause cannot see"
                    ));
                }
                let mut p = vec![q.to_string()];
                p.extend(path[1..].iter().cloned());
                return Ok(p);
            }
        }
        let in_t = sides.target && self.target.field(first).is_some();
        let in_s = sides.source && self.source.field(first).is_some();
        let q = match (in_t, in_s) {
            (true, true) => {
                return Err(format!(
                    "`{shown}` is ambiguous: both the target and the source have it (write t.{shown} or s.{shown})"
                ));
            }
            (true, false) => TARGET,
            (false, true) => SOURCE,
            (false, false) => {
                let visible = [(sides.target, &self.target), (sides.source, &self.source)];
                let names = visible
                    .iter()
                    .filter(|(seen, _)| *seen)
                    .flat_map(|(_, side)| side.fields.iter().map(|f| f.name.as_str()));
                let hint = alluvium_expr::nearest_name(first, names)
                    .map(|n| format!("; did you mean `{n}`?"))
                    .unwrap_or_default();
                return Err(format!("unknown column `{shown}`{hint}"));
            }
        };
        let mut p = vec![q.to_string()];
        p.extend(path.iter().cloned());
        Ok(p)
    }

    /// The new value of a column of type `target`, qualified and bound (store assignment:
    /// the result has the column's type).
    pub(crate) fn bind_assignment(
        &self,
        expr: &Expr,
        target: &DataType,
        sides: Sides,
        what: &str,
    ) -> Result<BoundExpr> {
        let q = self.qualify(expr, sides, what)?;
        Ok(bind_assignment(
            &q,
            &self.synthetic,
            &[],
            ColumnMappingMode::None,
            target,
        )?)
    }

    /// A condition, qualified and bound.
    pub(crate) fn bind_condition(
        &self,
        expr: &Expr,
        sides: Sides,
        what: &str,
    ) -> Result<Predicate> {
        let q = self.qualify(expr, sides, what)?;
        Ok(bind(&q, &self.synthetic, &[], ColumnMappingMode::None)?)
    }

    /// The batch expressions are evaluated on: row `i` pairs target row `t_rows[i]` of
    /// `target` (or none) with source row `s_rows[i]` of `source` (or none).
    pub(crate) fn joined(
        &self,
        target: Option<(&RecordBatch, &UInt32Array)>,
        source: Option<(&RecordBatch, &UInt32Array)>,
        rows: usize,
    ) -> Result<RecordBatch> {
        let side =
            |fields: &Fields, part: Option<(&RecordBatch, &UInt32Array)>| -> Result<ArrayRef> {
                Ok(match part {
                    None => new_null_array(&arrow_schema::DataType::Struct(fields.clone()), rows),
                    Some((batch, idx)) => {
                        let taken = arrow_select::take::take_record_batch(batch, idx)?;
                        Arc::new(StructArray::try_new(
                            fields.clone(),
                            taken.columns().to_vec(),
                            None,
                        )?)
                    }
                })
            };
        let t = side(&self.target_fields, target)?;
        let s = side(&self.source_fields, source)?;
        debug_assert_eq!(t.len(), rows);
        Ok(RecordBatch::try_new(self.arrow.clone(), vec![t, s])?)
    }
}
