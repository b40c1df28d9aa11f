//! Binding a predicate: resolving column names against the table schema (an unknown name
//! gets the nearest existing one as a suggestion) and typing literals, in the forms data
//! skipping can judge where it can: `column op literal`, NULL checks, IN lists, `column op
//! constant` (computed once: `ts > current_timestamp() - INTERVAL 1 DAY`), `IS [NOT]
//! DISTINCT FROM` a literal, and the range every match of `column LIKE 'prefix…'` lies in,
//! joined to the LIKE itself. Everything else binds as a general expression.

use std::cell::Cell;

use crate::like::{DEFAULT_ESCAPE, literal_prefix, successor};
use crate::suggest::nearest;
use crate::typing::{is_integral, is_numeric};
use crate::value::{BoundExpr, check_depth};
use crate::{CmpOp, Expr, Literal};
use crate::{ExprError, Result};
use alluvium_txlog::column_mapping::ColumnMappingMode;
use alluvium_txlog::scalar::Scalar;
use alluvium_txlog::scalar::text::{
    parse_date, parse_decimal, parse_naive_timestamp, parse_timestamp,
};
use alluvium_txlog::schema::{DataType, PrimitiveType, StructType};

/// A column reference resolved against the schema.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundColumn {
    /// Logical path, with names as the schema spells them.
    pub path: Vec<String>,
    /// Physical path (names in data files, statistics and partition values).
    pub physical_path: Vec<String>,
    /// The column's type.
    pub data_type: DataType,
    /// True for a partition column.
    pub partition: bool,
}

impl BoundColumn {
    /// The primitive type, if the column is primitive.
    pub fn primitive(&self) -> Option<PrimitiveType> {
        self.data_type.as_primitive()
    }

    /// The dotted logical name (for messages).
    pub fn display_name(&self) -> String {
        self.path.join(".")
    }
}

/// A typed predicate. New forms may be added: match with a wildcard arm.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Predicate {
    /// A constant: TRUE, FALSE or NULL (`None`).
    Const(Option<bool>),
    /// A boolean column.
    Column(BoundColumn),
    /// `column op literal`; the literal is never NULL.
    Cmp(BoundColumn, CmpOp, Scalar),
    /// `column op column`.
    ColCmp(BoundColumn, CmpOp, BoundColumn),
    /// `column IS [NOT] NULL`.
    IsNull {
        /// The column.
        column: BoundColumn,
        /// `IS NOT NULL`.
        negated: bool,
    },
    /// Conjunction.
    And(Box<Predicate>, Box<Predicate>),
    /// Disjunction.
    Or(Box<Predicate>, Box<Predicate>),
    /// Negation.
    Not(Box<Predicate>),
    /// Any other boolean expression (`a + 1 > b`, `CASE ... END = 'x'`, `COALESCE(b, c)`):
    /// evaluated as a value; data skipping cannot judge it and keeps every file.
    Expr(Box<BoundExpr>),
}

impl Predicate {
    /// Every column the predicate references.
    pub fn columns(&self) -> Vec<&BoundColumn> {
        let mut out = Vec::new();
        self.collect_columns(&mut out);
        out
    }

    fn collect_columns<'a>(&'a self, out: &mut Vec<&'a BoundColumn>) {
        match self {
            Predicate::Const(_) => {}
            Predicate::Column(c)
            | Predicate::Cmp(c, _, _)
            | Predicate::IsNull { column: c, .. } => out.push(c),
            Predicate::ColCmp(a, _, b) => {
                out.push(a);
                out.push(b);
            }
            Predicate::And(a, b) | Predicate::Or(a, b) => {
                a.collect_columns(out);
                b.collect_columns(out);
            }
            Predicate::Not(a) => a.collect_columns(out),
            Predicate::Expr(e) => out.extend(e.columns()),
        }
    }

    /// The top-level physical names of the data (non-partition) columns referenced: the
    /// statistics data skipping reads for this predicate ([`FileStats::parse_columns`]).
    ///
    /// [`FileStats::parse_columns`]: alluvium_txlog::stats::FileStats::parse_columns
    pub fn stats_columns(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for c in self.columns() {
            if let Some(root) = c.physical_path.first().filter(|_| !c.partition)
                && !out.contains(&root.as_str())
            {
                out.push(root);
            }
        }
        out
    }

    /// True if only partition columns are referenced and data skipping judges the predicate
    /// exactly from partition values, so that a file it keeps has every row matching (whole
    /// files are then removed or compacted without reading them). A general expression
    /// ([`Predicate::Expr`]) is never exact, even over partition columns alone.
    pub fn only_partition_columns(&self) -> bool {
        !self.has_general_expr() && self.columns().iter().all(|c| c.partition)
    }

    /// True if some part is a general expression ([`Predicate::Expr`]).
    pub fn has_general_expr(&self) -> bool {
        match self {
            Predicate::Expr(_) => true,
            Predicate::And(a, b) | Predicate::Or(a, b) => {
                a.has_general_expr() || b.has_general_expr()
            }
            Predicate::Not(a) => a.has_general_expr(),
            _ => false,
        }
    }
}

fn err(msg: impl Into<String>) -> ExprError {
    ExprError::Invalid(msg.into())
}

/// Resolves `expr` against `schema`.
///
/// # Errors
/// [`ExprError::Invalid`] for unknown columns, type mismatches and literals that
/// are not values of their column's type.
pub fn bind(
    expr: &Expr,
    schema: &StructType,
    partition_columns: &[String],
    mode: ColumnMappingMode,
) -> Result<Predicate> {
    Binder::new(schema, partition_columns, mode).bind(expr)
}

/// Resolves names and types one expression against a schema.
pub(crate) struct Binder<'a> {
    schema: &'a StructType,
    partition_columns: &'a [String],
    mode: ColumnMappingMode,
    /// The instant `current_date`/`current_timestamp` stand for, taken on first use so
    /// that every occurrence in the expression has the same value.
    now: Cell<Option<i64>>,
}

impl<'a> Binder<'a> {
    pub(crate) fn new(
        schema: &'a StructType,
        partition_columns: &'a [String],
        mode: ColumnMappingMode,
    ) -> Self {
        Binder {
            schema,
            partition_columns,
            mode,
            now: Cell::new(None),
        }
    }
}

impl Binder<'_> {
    /// The statement's instant (see `clock.rs`), the same for the whole expression.
    pub(crate) fn now_micros(&self) -> i64 {
        *self.now.get().get_or_insert_with(crate::clock::now_micros)
    }

    pub(crate) fn column(&self, path: &[String]) -> Result<BoundColumn> {
        let mut current: &StructType = self.schema;
        let mut logical = Vec::new();
        let mut physical = Vec::new();
        let mut data_type = None;
        for (i, name) in path.iter().enumerate() {
            let Some(f) = current.field(name) else {
                let suggestion =
                    nearest(name, current.fields.iter().map(|f| f.name.as_str())).map(|n| {
                        let mut p = logical.clone();
                        p.push(n.to_string());
                        p.join(".")
                    });
                return Err(ExprError::UnknownColumn {
                    column: path.join("."),
                    suggestion,
                });
            };
            logical.push(f.name.clone());
            physical.push(self.mode.physical_name(f).to_string());
            if i + 1 < path.len() {
                match &f.data_type {
                    DataType::Struct(s) => current = s,
                    _ => return Err(err(format!("`{}` is not a struct", logical.join(".")))),
                }
            }
            data_type = Some(f.data_type.clone());
        }
        let data_type = data_type.ok_or_else(|| err("empty column name"))?;
        let partition = logical.len() == 1
            && self
                .partition_columns
                .iter()
                .any(|p| p.eq_ignore_ascii_case(&logical[0]));
        Ok(BoundColumn {
            path: logical,
            physical_path: physical,
            data_type,
            partition,
        })
    }

    /// A general boolean expression, bound as a value.
    fn general(&self, e: &Expr) -> Result<Predicate> {
        check_depth(e)?;
        let v = self.value(e, None)?;
        if !v.is_boolean() {
            return Err(err(format!(
                "`{e}` is not a boolean and cannot be a predicate"
            )));
        }
        Ok(Predicate::Expr(Box::new(v)))
    }

    fn bind(&self, e: &Expr) -> Result<Predicate> {
        Ok(match e {
            Expr::Arith(..)
            | Expr::Neg(_)
            | Expr::Concat(..)
            | Expr::Case { .. }
            | Expr::Coalesce(_)
            | Expr::Cast(..)
            | Expr::DatePart(..)
            | Expr::Call { .. } => self.general(e)?,
            Expr::Like {
                expr,
                pattern,
                escape,
                case_insensitive,
                negated,
            } => {
                let matched = Expr::Like {
                    expr: expr.clone(),
                    pattern: pattern.clone(),
                    escape: *escape,
                    case_insensitive: *case_insensitive,
                    negated: false,
                };
                let general = self.general(&matched)?;
                let p = match (&**expr, &**pattern, case_insensitive) {
                    (Expr::Column(path), Expr::Literal(Literal::String(text)), false) => {
                        let col = self.column(path)?;
                        match prefix_range(&col, text, escape.unwrap_or(DEFAULT_ESCAPE)) {
                            Some(range) => Predicate::And(Box::new(range), Box::new(general)),
                            None => general,
                        }
                    }
                    _ => general,
                };
                if *negated {
                    Predicate::Not(Box::new(p))
                } else {
                    p
                }
            }
            Expr::IsDistinctFrom {
                left,
                right,
                negated,
            } => match (&**left, &**right) {
                (Expr::Column(c), Expr::Literal(lit)) | (Expr::Literal(lit), Expr::Column(c)) => {
                    let column = self.column(c)?;
                    let same = if matches!(lit, Literal::Null | Literal::Typed(Scalar::Null)) {
                        Predicate::IsNull {
                            column,
                            negated: false,
                        }
                    } else {
                        // NULL-safe equality with a value: the column is not NULL and equal.
                        let eq = self.cmp_literal(&column, CmpOp::Eq, lit)?;
                        Predicate::And(
                            Box::new(Predicate::IsNull {
                                column,
                                negated: true,
                            }),
                            Box::new(eq),
                        )
                    };
                    if *negated {
                        same
                    } else {
                        Predicate::Not(Box::new(same))
                    }
                }
                _ => self.general(e)?,
            },
            Expr::Column(path) => {
                let c = self.column(path)?;
                if c.primitive() != Some(PrimitiveType::Boolean) {
                    return Err(err(format!(
                        "column `{}` is not boolean and cannot be a predicate",
                        c.display_name()
                    )));
                }
                Predicate::Column(c)
            }
            Expr::Literal(Literal::Boolean(b)) => Predicate::Const(Some(*b)),
            Expr::Literal(Literal::Null) => Predicate::Const(None),
            Expr::Literal(Literal::Typed(Scalar::Boolean(b))) => Predicate::Const(Some(*b)),
            Expr::Literal(l) => {
                return Err(err(format!(
                    "the literal {l} is not a condition (write a comparison such as `x = {l}`)"
                )));
            }
            Expr::And(a, b) => Predicate::And(Box::new(self.bind(a)?), Box::new(self.bind(b)?)),
            Expr::Or(a, b) => Predicate::Or(Box::new(self.bind(a)?), Box::new(self.bind(b)?)),
            Expr::Not(a) => Predicate::Not(Box::new(self.bind(a)?)),
            Expr::IsNull {
                expr: inner,
                negated,
            } => match &**inner {
                Expr::Column(path) => Predicate::IsNull {
                    column: self.column(path)?,
                    negated: *negated,
                },
                Expr::Literal(l) => Predicate::Const(Some(
                    matches!(l, Literal::Null | Literal::Typed(Scalar::Null)) != *negated,
                )),
                _ => self.general(e)?,
            },
            Expr::In {
                expr: inner,
                list,
                negated,
            } => {
                let Expr::Column(path) = &**inner else {
                    return self.general(e);
                };
                let col = self.column(path)?;
                let equalities = list
                    .iter()
                    .map(|lit| self.cmp_literal(&col, CmpOp::Eq, lit))
                    .collect::<Result<Vec<_>>>()?;
                let p = any_of(equalities);
                if *negated {
                    Predicate::Not(Box::new(p))
                } else {
                    p
                }
            }
            Expr::Cmp(l, op, r) => match (&**l, &**r) {
                (Expr::Column(a), Expr::Column(b)) => {
                    let (a, b) = (self.column(a)?, self.column(b)?);
                    let (ta, tb) = (a.primitive(), b.primitive());
                    let comparable = match (ta, tb) {
                        (Some(x), Some(y)) => x == y || (is_numeric(x) && is_numeric(y)),
                        _ => false,
                    };
                    if !comparable {
                        return Err(err(format!(
                            "cannot compare `{}` with `{}`",
                            a.display_name(),
                            b.display_name()
                        )));
                    }
                    Predicate::ColCmp(a, *op, b)
                }
                (Expr::Column(c), Expr::Literal(lit)) => {
                    self.cmp_literal(&self.column(c)?, *op, lit)?
                }
                (Expr::Literal(lit), Expr::Column(c)) => {
                    self.cmp_literal(&self.column(c)?, op.flip(), lit)?
                }
                (Expr::Literal(_), Expr::Literal(_)) => {
                    return Err(err(format!(
                        "`{e}` compares two literals; a comparison needs a column or an expression"
                    )));
                }
                (Expr::Column(c), other) => match self.folded_cmp(c, *op, other)? {
                    Some(p) => p,
                    None => self.general(e)?,
                },
                (other, Expr::Column(c)) => match self.folded_cmp(c, op.flip(), other)? {
                    Some(p) => p,
                    None => self.general(e)?,
                },
                _ => self.general(e)?,
            },
        })
    }

    /// `column op constant` for a constant expression (no columns: `current_timestamp() -
    /// INTERVAL 1 DAY`, `DATE '2024-01-01' + INTERVAL 1 MONTH`, `10 * 1000`), computed now
    /// so that data skipping can judge it like a literal. `None` (bind it as a general
    /// expression) when it reads a column, fails to compute, or its value's type is not
    /// the column's own.
    fn folded_cmp(&self, path: &[String], op: CmpOp, constant: &Expr) -> Result<Option<Predicate>> {
        let col = self.column(path)?;
        let Some(ty) = col.primitive() else {
            return Ok(None);
        };
        check_depth(constant)?;
        let Ok(value) = self.value(constant, Some(&col.data_type)) else {
            return Ok(None);
        };
        if !value.columns().is_empty() {
            return Ok(None);
        }
        let Some(scalar) = crate::eval::constant(&value) else {
            return Ok(None);
        };
        let same_type = match scalar.primitive_type() {
            Some(t) => t == ty || (is_integral(t) && is_integral(ty)),
            None => true,
        };
        if !same_type {
            return Ok(None);
        }
        Ok(self.cmp_literal(&col, op, &Literal::Typed(scalar)).ok())
    }

    pub(crate) fn cmp_literal(
        &self,
        col: &BoundColumn,
        op: CmpOp,
        lit: &Literal,
    ) -> Result<Predicate> {
        let Some(ty) = col.primitive() else {
            return Err(err(format!(
                "column `{}` is not a primitive and cannot be compared",
                col.display_name()
            )));
        };
        let value =
            coerce(lit, ty).map_err(|m| err(format!("column `{}`: {m}", col.display_name())))?;
        if value.is_null() {
            return Ok(Predicate::Const(None));
        }
        Ok(Predicate::Cmp(col.clone(), op, value))
    }
}

/// The range every string matching `column LIKE pattern` lies in, from the pattern's
/// literal prefix: `column >= prefix AND column < successor(prefix)`. Data skipping judges
/// it from min/max statistics; evaluation gets the same rows, since every match is in the
/// range. `None` for a non-string column, a pattern starting with a wildcard, or an invalid
/// pattern (binding the LIKE itself reports that).
fn prefix_range(column: &BoundColumn, pattern: &str, escape: char) -> Option<Predicate> {
    if column.primitive() != Some(PrimitiveType::String) {
        return None;
    }
    let prefix = literal_prefix(pattern, escape).ok()?;
    if prefix.is_empty() {
        return None;
    }
    let low = Predicate::Cmp(column.clone(), CmpOp::Ge, Scalar::String(prefix.clone()));
    Some(match successor(&prefix) {
        Some(high) => Predicate::And(
            Box::new(low),
            Box::new(Predicate::Cmp(
                column.clone(),
                CmpOp::Lt,
                Scalar::String(high),
            )),
        ),
        None => low,
    })
}

/// The disjunction of `preds` (FALSE when empty) as a balanced tree: an IN list can be
/// arbitrarily long, and everything downstream recurses over the predicate.
fn any_of(mut preds: Vec<Predicate>) -> Predicate {
    match preds.len() {
        0 => Predicate::Const(Some(false)),
        1 => preds.pop().unwrap_or(Predicate::Const(Some(false))),
        n => {
            let right = preds.split_off(n.div_ceil(2));
            Predicate::Or(Box::new(any_of(preds)), Box::new(any_of(right)))
        }
    }
}

/// Types a literal for a column of type `ty`.
pub(crate) fn coerce(lit: &Literal, ty: PrimitiveType) -> std::result::Result<Scalar, String> {
    match lit {
        Literal::Null => Ok(Scalar::Null),
        Literal::Interval(_) => Err(crate::value::INTERVAL_ALONE.into()),
        // An integer is typed by the column as the same number in SQL text is (the
        // evaluator compares integer columns with `Long` values): a typed `Integer` kept as
        // it is would not fit the widened comparison.
        Literal::Typed(
            s @ (Scalar::Byte(_) | Scalar::Short(_) | Scalar::Integer(_) | Scalar::Long(_)),
        ) if is_numeric(ty) => match s {
            Scalar::Byte(v) => number(&v.to_string(), ty),
            Scalar::Short(v) => number(&v.to_string(), ty),
            Scalar::Integer(v) => number(&v.to_string(), ty),
            Scalar::Long(v) => number(&v.to_string(), ty),
            other => Ok(other.clone()),
        },
        Literal::Typed(s) => {
            if s.is_null()
                || s.primitive_type() == Some(ty)
                || (s.as_f64().is_some() && is_numeric(ty))
            {
                Ok(s.clone())
            } else {
                Err(format!(
                    "the literal {} is not a {} value",
                    Literal::Typed(s.clone()),
                    ty.name()
                ))
            }
        }
        Literal::Boolean(b) => match ty {
            PrimitiveType::Boolean => Ok(Scalar::Boolean(*b)),
            _ => Err(format!("boolean literal for a {} column", ty.name())),
        },
        Literal::Number(text) => number(text, ty),
        Literal::String(text) => match ty {
            PrimitiveType::String => Ok(Scalar::String(text.clone())),
            PrimitiveType::Binary => Ok(Scalar::Binary(text.as_bytes().to_vec())),
            PrimitiveType::Date => parse_date(text)
                .map(Scalar::Date)
                .ok_or_else(|| format!("'{text}' is not a date")),
            PrimitiveType::Timestamp => parse_timestamp(text)
                .map(Scalar::Timestamp)
                .ok_or_else(|| format!("'{text}' is not a timestamp")),
            PrimitiveType::TimestampNtz => parse_naive_timestamp(text)
                .map(Scalar::TimestampNtz)
                .ok_or_else(|| format!("'{text}' is not a timestamp_ntz")),
            PrimitiveType::Boolean => match text.to_ascii_lowercase().as_str() {
                "true" => Ok(Scalar::Boolean(true)),
                "false" => Ok(Scalar::Boolean(false)),
                _ => Err(format!("'{text}' is not a boolean")),
            },
            t if is_numeric(t) => number(text.trim(), t),
            t => Err(format!(
                "cannot compare a {} column with a string",
                t.name()
            )),
        },
    }
}

fn number(text: &str, ty: PrimitiveType) -> std::result::Result<Scalar, String> {
    let f: f64 = text
        .parse()
        .map_err(|_| format!("'{text}' is not a number"))?;
    match ty {
        PrimitiveType::Byte
        | PrimitiveType::Short
        | PrimitiveType::Integer
        | PrimitiveType::Long => {
            if let Ok(i) = text.parse::<i64>() {
                Ok(Scalar::Long(i))
            } else if f.fract() == 0.0 && f.abs() < 9.0e15 {
                Ok(Scalar::Long(f as i64))
            } else {
                Ok(Scalar::Double(f))
            }
        }
        PrimitiveType::Float | PrimitiveType::Double => Ok(Scalar::Double(f)),
        PrimitiveType::Decimal(p, s) => match parse_decimal(text, 38, s) {
            Some(value) => Ok(Scalar::Decimal {
                value,
                precision: 38.max(p),
                scale: s,
            }),
            None => Ok(Scalar::Double(f)),
        },
        PrimitiveType::String => Ok(Scalar::String(text.to_string())),
        t => Err(format!(
            "cannot compare a {} column with a number",
            t.name()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ExprError, parse_expr};

    fn schema() -> StructType {
        StructType::from_json(r#"{"type":"struct","fields":[
            {"name":"Id","type":"long","nullable":true,"metadata":{}},
            {"name":"p","type":"date","nullable":true,"metadata":{"delta.columnMapping.physicalName":"col-p"}},
            {"name":"s","type":{"type":"struct","fields":[{"name":"x","type":"decimal(5,2)","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},
            {"name":"b","type":"boolean","nullable":true,"metadata":{}}
        ]}"#).unwrap()
    }

    fn b(s: &str) -> Result<Predicate> {
        bind(
            &parse_expr(s).unwrap(),
            &schema(),
            &["p".into()],
            ColumnMappingMode::Name,
        )
    }

    #[test]
    fn resolves_and_types() {
        match b("id = 5").unwrap() {
            Predicate::Cmp(c, CmpOp::Eq, Scalar::Long(5)) => {
                assert_eq!(c.path, vec!["Id"]);
                assert!(!c.partition);
            }
            other => panic!("{other:?}"),
        }
        match b("'2020-01-02' < p").unwrap() {
            Predicate::Cmp(c, CmpOp::Gt, Scalar::Date(18263)) => {
                assert!(c.partition);
                assert_eq!(c.physical_path, vec!["col-p"]);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            b("s.x = 1.25").unwrap(),
            Predicate::Cmp(_, _, Scalar::Decimal { value: 125, .. })
        ));
        assert!(matches!(
            b("s.x = 1.255").unwrap(),
            Predicate::Cmp(_, _, Scalar::Double(_))
        ));
        assert!(matches!(
            b("id IN ()").unwrap(),
            Predicate::Const(Some(false))
        ));
        assert!(matches!(b("id = NULL").unwrap(), Predicate::Const(None)));
        assert!(matches!(b("b").unwrap(), Predicate::Column(_)));
        assert!(matches!(b("id NOT IN (1, 2)").unwrap(), Predicate::Not(_)));
    }

    /// Whole-file decisions (DELETE removing a partition's files unread, OPTIMIZE filters)
    /// rely on skipping being exact; a general expression over partition columns is not.
    #[test]
    fn general_expressions_are_never_exact_partition_predicates() {
        assert!(b("p = '2020-01-01'").unwrap().only_partition_columns());
        for text in [
            "COALESCE(p, '2020-01-01') = '2020-01-01'",
            "CASE WHEN p IS NULL THEN TRUE ELSE FALSE END",
            "p = '2020-01-01' OR CAST(p AS string) = 'x'",
            "NOT (CAST(p AS string) || 'x' = 'y')",
        ] {
            let pred = b(text).unwrap();
            assert!(pred.has_general_expr(), "{text}");
            assert!(!pred.only_partition_columns(), "{text}");
            assert!(pred.columns().iter().all(|c| c.partition), "{text}");
        }
        // General expressions bind as predicates; the old forms keep their shapes.
        assert!(matches!(b("id + 1 > 2").unwrap(), Predicate::Expr(_)));
        assert!(matches!(b("s.x * 2 = id").unwrap(), Predicate::Expr(_)));
        assert!(
            matches!(b("id = 1 AND id % 2 = 1").unwrap(), Predicate::And(l, r)
            if matches!(*l, Predicate::Cmp(..)) && matches!(*r, Predicate::Expr(_)))
        );
        assert!(b("id + 1").is_err());
        assert!(b("CASE WHEN b THEN 1 END").is_err());
    }

    /// Unknown columns name the nearest existing one, at the level where the name failed.
    #[test]
    fn unknown_columns_suggest_the_nearest_name() {
        for (text, column, suggestion) in [
            ("idd = 5", "idd", Some("Id")),
            ("s.y = 1", "s.y", Some("s.x")),
            ("bb", "bb", Some("b")),
            ("price > 1", "price", None),
            ("lower(nmae) = 'x'", "nmae", None),
        ] {
            match b(text) {
                Err(ExprError::UnknownColumn {
                    column: c,
                    suggestion: s,
                }) => {
                    assert_eq!(c, column, "{text}");
                    assert_eq!(s.as_deref(), suggestion, "{text}");
                }
                other => panic!("{text}: {other:?}"),
            }
        }
        let m = b("idd = 5").unwrap_err().to_string();
        assert_eq!(
            m,
            "invalid expression: unknown column `idd`; did you mean `Id`?"
        );
    }

    /// `current_date`/`current_timestamp` are not deterministic; everything else is.
    #[test]
    fn determinism_is_visible_on_the_tree() {
        for (text, deterministic) in [
            ("a = 1", true),
            ("lower(a) LIKE 'x%'", true),
            ("d > current_date", false),
            ("CASE WHEN a THEN ts - INTERVAL 1 DAY ELSE now() END", false),
            ("COALESCE(a, b, c) IS DISTINCT FROM round(x, 2)", true),
        ] {
            assert_eq!(
                parse_expr(text).unwrap().is_deterministic(),
                deterministic,
                "{text}"
            );
        }
    }

    /// LIKE with a literal prefix adds the range its matches lie in; IS [NOT] DISTINCT FROM
    /// a literal becomes NULL checks and a comparison; a constant expression is computed.
    #[test]
    fn skippable_forms_bind_to_ranges_and_comparisons() {
        let s = StructType::from_json(
            r#"{"type":"struct","fields":[
            {"name":"n","type":"string","nullable":true,"metadata":{}},
            {"name":"x","type":"long","nullable":true,"metadata":{}},
            {"name":"ts","type":"timestamp","nullable":true,"metadata":{}}
        ]}"#,
        )
        .unwrap();
        let pb = |text: &str| bind(&parse_expr(text).unwrap(), &s, &[], ColumnMappingMode::None);
        let range = |p: &Predicate| -> Option<(String, Option<String>)> {
            let Predicate::And(range, like) = p else {
                return None;
            };
            assert!(matches!(**like, Predicate::Expr(_)));
            match &**range {
                Predicate::And(lo, hi) => match (&**lo, &**hi) {
                    (
                        Predicate::Cmp(_, CmpOp::Ge, Scalar::String(l)),
                        Predicate::Cmp(_, CmpOp::Lt, Scalar::String(h)),
                    ) => Some((l.clone(), Some(h.clone()))),
                    _ => None,
                },
                Predicate::Cmp(_, CmpOp::Ge, Scalar::String(l)) => Some((l.clone(), None)),
                _ => None,
            }
        };
        let p = pb("n LIKE 'abc%'").unwrap();
        assert_eq!(range(&p), Some(("abc".into(), Some("abd".into()))));
        let p = pb(r"n LIKE 'a\%b_%'").unwrap();
        assert_eq!(range(&p), Some(("a%b".into(), Some("a%c".into()))));
        let p = pb("n LIKE 'a!_%' ESCAPE '!'").unwrap();
        assert_eq!(range(&p), Some(("a_".into(), Some("a`".into()))));
        let p = pb("n NOT LIKE 'abc%'").unwrap();
        assert!(matches!(&p, Predicate::Not(inner) if range(inner).is_some()));
        for general in [
            "n LIKE '%abc'",
            "n ILIKE 'abc%'",
            "lower(n) LIKE 'abc%'",
            "n LIKE n",
        ] {
            assert!(
                matches!(pb(general).unwrap(), Predicate::Expr(_)),
                "{general}"
            );
        }
        assert!(matches!(
            pb("x IS NOT DISTINCT FROM 3").unwrap(),
            Predicate::And(a, b) if matches!(*a, Predicate::IsNull { negated: true, .. })
                && matches!(*b, Predicate::Cmp(_, CmpOp::Eq, Scalar::Long(3)))
        ));
        assert!(matches!(
            pb("NULL IS DISTINCT FROM x").unwrap(),
            Predicate::Not(a) if matches!(*a, Predicate::IsNull { negated: false, .. })
        ));
        // Constants are computed when binding: `x > 2 * 5`, `ts > now - 1 day`.
        assert!(matches!(
            pb("x > 2 * 5").unwrap(),
            Predicate::Cmp(_, CmpOp::Gt, Scalar::Long(10))
        ));
        let now = crate::clock::at_statement_time(1_000_000_000_000, || {
            pb("current_timestamp() - INTERVAL 1 DAY < ts").unwrap()
        });
        assert!(matches!(
            now,
            Predicate::Cmp(_, CmpOp::Gt, Scalar::Timestamp(t)) if t == 1_000_000_000_000 - 86_400_000_000
        ));
        // Not folded: a constant that fails, or one of another type than the column.
        assert!(matches!(pb("x > 1 / 0").unwrap(), Predicate::Expr(_)));
        assert!(matches!(
            pb("ts > current_date").unwrap(),
            Predicate::Expr(_)
        ));
    }

    #[test]
    fn rejects_mismatches() {
        for bad in [
            "nope = 1", "id = 'x'", "p = 5", "b = 1", "id", "s = 1", "id = p", "1 = 1", "id.x = 1",
        ] {
            assert!(b(bad).is_err(), "{bad}");
        }
    }
}
