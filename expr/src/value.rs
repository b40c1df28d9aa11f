//! Value expressions: binding an [`Expr`] against a schema into a typed [`BoundExpr`]
//! (what `UPDATE ... SET col = expr` and MERGE evaluate), with every type checked before any
//! row is read.
//!
//! Literals are typed by their context: in `a + 1` the `1` takes `a`'s integral type when
//! it fits, in `d * 2` (d a decimal) it is `decimal(1,0)`, beside a double it is a double, a
//! string beside a date or timestamp is parsed as one; alone, an integer is `int` (or
//! `long` when it does not fit), a number with a fraction is the exact `decimal(p,s)` it
//! spells, one with an exponent is a `double`, and NULL is `void` (it takes the type of
//! whatever it meets). A comparison between a column and a literal types the literal as
//! the predicate language always has (see [`bind`](crate::bind)).

use crate::bind::{Binder, BoundColumn, coerce};
use crate::interval::Interval;
use crate::like::{DEFAULT_ESCAPE, to_arrow};
use crate::parse::MAX_EXPR_DEPTH;
use crate::typing::{
    arith_result_type, can_assign, can_cast, common_type, is_integral, is_numeric,
};
use crate::{ArithOp, CmpOp, DateField, Expr, Function, Literal};
use crate::{ExprError, Result};
use alluvium_txlog::column_mapping::ColumnMappingMode;
use alluvium_txlog::scalar::Scalar;
use alluvium_txlog::scalar::text::{
    parse_date, parse_decimal, parse_naive_timestamp, parse_timestamp,
};
use alluvium_txlog::schema::{DataType, PrimitiveType, StructType};

/// A typed expression: what it computes ([`BoundKind`]) and the type of its value.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundExpr {
    pub(crate) kind: BoundKind,
    pub(crate) data_type: DataType,
}

/// What a [`BoundExpr`] computes. Operands keep their own types; evaluation converts them
/// to the common or result type the binder checked exists. New forms are added as the
/// language grows: match with a wildcard arm.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum BoundKind {
    /// A constant (NULL as [`Scalar::Null`]) of the expression's type.
    Literal(Scalar),
    /// A (possibly nested) column.
    Column(BoundColumn),
    /// Arithmetic at the expression's type; `text` is the SQL of the expression, for errors.
    Arith {
        /// The operator.
        op: ArithOp,
        /// Left operand.
        left: Box<BoundExpr>,
        /// Right operand.
        right: Box<BoundExpr>,
        /// The expression as SQL, named by overflow and division-by-zero errors.
        text: String,
    },
    /// Unary minus.
    Neg {
        /// The operand.
        operand: Box<BoundExpr>,
        /// The expression as SQL, named by overflow errors.
        text: String,
    },
    /// String or binary concatenation.
    Concat(Box<BoundExpr>, Box<BoundExpr>),
    /// A comparison, at the common type of its operands.
    Cmp(Box<BoundExpr>, CmpOp, Box<BoundExpr>),
    /// `IS [NOT] NULL`.
    IsNull {
        /// The operand.
        operand: Box<BoundExpr>,
        /// `IS NOT NULL`.
        negated: bool,
    },
    /// `[NOT] IN (values)`: equality with each value, OR-ed in three-valued logic.
    In {
        /// The operand.
        operand: Box<BoundExpr>,
        /// The values, typed.
        list: Vec<BoundExpr>,
        /// `NOT IN`.
        negated: bool,
    },
    /// Conjunction (the right side is evaluated only on rows the left does not make FALSE).
    And(Box<BoundExpr>, Box<BoundExpr>),
    /// Disjunction (the right side is evaluated only on rows the left does not make TRUE).
    Or(Box<BoundExpr>, Box<BoundExpr>),
    /// Negation.
    Not(Box<BoundExpr>),
    /// The first branch whose condition is TRUE; a branch's value is computed only for the
    /// rows that take it.
    Case {
        /// `(condition, value)` pairs, in order.
        branches: Vec<(BoundExpr, BoundExpr)>,
        /// The `ELSE` value (NULL when absent).
        otherwise: Option<Box<BoundExpr>>,
    },
    /// The first non-NULL argument; later arguments are computed only where needed.
    Coalesce(Vec<BoundExpr>),
    /// A calendar field of a date or timestamp operand (an `int`).
    DatePart {
        /// Which field.
        field: DateField,
        /// The date or timestamp.
        operand: Box<BoundExpr>,
    },
    /// Conversion to the expression's type (explicit `CAST`, or an assignment's conversion
    /// to the column type).
    Cast {
        /// The operand.
        operand: Box<BoundExpr>,
        /// The expression as SQL, named when a value does not convert.
        text: String,
    },
    /// `[NOT] LIKE` / `[NOT] ILIKE` of two strings.
    Like {
        /// The string matched.
        operand: Box<BoundExpr>,
        /// The pattern (a literal pattern was checked when binding).
        pattern: Box<BoundExpr>,
        /// The escape character (`\` unless `ESCAPE` named another).
        escape: char,
        /// `ILIKE`.
        case_insensitive: bool,
        /// `NOT LIKE` / `NOT ILIKE`.
        negated: bool,
    },
    /// `IS [NOT] DISTINCT FROM`, at the common type of its operands; never NULL.
    IsDistinctFrom {
        /// Left operand.
        left: Box<BoundExpr>,
        /// Right operand.
        right: Box<BoundExpr>,
        /// `IS NOT DISTINCT FROM`.
        negated: bool,
    },
    /// A date or timestamp plus an interval (`x - i` binds as `x + (-i)`); the value has
    /// the expression's type (a date plus whole days stays a date).
    AddInterval {
        /// The date or timestamp.
        operand: Box<BoundExpr>,
        /// The interval added.
        interval: Interval,
        /// The expression as SQL, named when the result is out of range.
        text: String,
    },
    /// A built-in function applied to typed arguments.
    Call {
        /// The function.
        function: Function,
        /// The arguments, typed as the function needs them.
        args: Vec<BoundExpr>,
        /// The expression as SQL, named by errors on values.
        text: String,
    },
}

impl BoundExpr {
    /// What the expression computes.
    pub fn kind(&self) -> &BoundKind {
        &self.kind
    }

    /// The type of the expression's value (`void` for an untyped NULL).
    pub fn data_type(&self) -> &DataType {
        &self.data_type
    }

    /// True if the value is a boolean (or an untyped NULL).
    pub fn is_boolean(&self) -> bool {
        matches!(
            self.data_type,
            DataType::Primitive(PrimitiveType::Boolean | PrimitiveType::Void)
        )
    }

    /// Every column the expression references.
    pub fn columns(&self) -> Vec<&BoundColumn> {
        let mut out = Vec::new();
        self.visit(&mut |e| {
            if let BoundKind::Column(c) = &e.kind {
                out.push(c);
            }
        });
        out
    }

    /// True if evaluating the expression can fail on some value (arithmetic, a cast, a
    /// conversion, interval arithmetic, a LIKE whose pattern is not a literal). Connectives
    /// evaluate such operands only on the rows that need them.
    pub fn may_fail(&self) -> bool {
        let mut found = false;
        self.visit(&mut |e| {
            found |= match &e.kind {
                BoundKind::Arith { .. }
                | BoundKind::Neg { .. }
                | BoundKind::Cast { .. }
                | BoundKind::AddInterval { .. } => true,
                BoundKind::Like { pattern, .. } => !matches!(pattern.kind, BoundKind::Literal(_)),
                BoundKind::Call { function, .. } => function.may_fail(),
                _ => false,
            };
        });
        found
    }

    fn visit<'a>(&'a self, f: &mut dyn FnMut(&'a BoundExpr)) {
        f(self);
        match &self.kind {
            BoundKind::Literal(_) | BoundKind::Column(_) => {}
            BoundKind::Arith { left, right, .. } => {
                left.visit(f);
                right.visit(f);
            }
            BoundKind::Concat(l, r)
            | BoundKind::Cmp(l, _, r)
            | BoundKind::And(l, r)
            | BoundKind::Or(l, r)
            | BoundKind::IsDistinctFrom {
                left: l, right: r, ..
            }
            | BoundKind::Like {
                operand: l,
                pattern: r,
                ..
            } => {
                l.visit(f);
                r.visit(f);
            }
            BoundKind::Neg { operand, .. }
            | BoundKind::Cast { operand, .. }
            | BoundKind::DatePart { operand, .. }
            | BoundKind::AddInterval { operand, .. } => operand.visit(f),
            BoundKind::IsNull { operand: e, .. } | BoundKind::Not(e) => e.visit(f),
            BoundKind::In {
                operand: e, list, ..
            } => {
                e.visit(f);
                list.iter().for_each(|v| v.visit(f));
            }
            BoundKind::Case {
                branches,
                otherwise,
            } => {
                for (c, v) in branches {
                    c.visit(f);
                    v.visit(f);
                }
                if let Some(o) = otherwise {
                    o.visit(f);
                }
            }
            BoundKind::Coalesce(args) | BoundKind::Call { args, .. } => {
                args.iter().for_each(|a| a.visit(f))
            }
        }
    }
}

pub(crate) fn err(msg: impl Into<String>) -> ExprError {
    ExprError::Invalid(msg.into())
}

/// An error about expression `e`.
pub(crate) fn about(e: &Expr, msg: impl std::fmt::Display) -> ExprError {
    err(format!("`{e}`: {msg}"))
}

pub(crate) fn prim(t: PrimitiveType) -> DataType {
    DataType::Primitive(t)
}

pub(crate) fn type_name(t: &DataType) -> String {
    match t {
        DataType::Primitive(p) => p.name(),
        DataType::Struct(_) => "struct".into(),
        DataType::Array(_) => "array".into(),
        DataType::Map(_) => "map".into(),
        DataType::Geospatial(g) => g.name(),
    }
}

/// True if `e` is no deeper than `budget` levels (recursion bounded by the budget, so an
/// arbitrarily deep tree built through the API is refused without overflowing the stack).
fn within_depth(e: &Expr, budget: usize) -> bool {
    budget > 0
        && e.children()
            .into_iter()
            .all(|c| within_depth(c, budget - 1))
}

/// Refuses expressions deeper than [`MAX_EXPR_DEPTH`].
pub(crate) fn check_depth(e: &Expr) -> Result<()> {
    if within_depth(e, MAX_EXPR_DEPTH) {
        Ok(())
    } else {
        Err(err(format!(
            "expression nests deeper than {MAX_EXPR_DEPTH} levels"
        )))
    }
}

/// Binds `expr` as a value: resolves its columns against `schema` and checks and computes
/// the type of every sub-expression (rules in `typing` and the module docs).
///
/// # Errors
/// [`ExprError::Invalid`] naming the offending sub-expression: unknown columns,
/// operators applied to types they do not take (`'a' + 1`), incomparable operands, CASE
/// branches or COALESCE arguments without a common type, casts that do not exist, literals
/// that are not values of their context's type, and trees deeper than [`MAX_EXPR_DEPTH`].
pub fn bind_value(
    expr: &Expr,
    schema: &StructType,
    partition_columns: &[String],
    mode: ColumnMappingMode,
) -> Result<BoundExpr> {
    check_depth(expr)?;
    Binder::new(schema, partition_columns, mode).value(expr, None)
}

/// Binds `expr` as the new value of a column of type `target` (UPDATE `SET`, MERGE
/// `UPDATE`/`INSERT`): literals are typed as `target` where they can be, and a value of
/// another type is converted when Delta Spark's store assignment allows it (any numeric
/// into any numeric, checked when evaluated: a value that does not fit is an overflow
/// error; NULL into anything; a date into a timestamp). The result's type is `target`.
///
/// # Errors
/// As [`bind_value`], and [`ExprError::Invalid`] when the value's type cannot be
/// stored in `target` (e.g. a string into an integer column: write a `CAST`).
pub fn bind_assignment(
    expr: &Expr,
    schema: &StructType,
    partition_columns: &[String],
    mode: ColumnMappingMode,
    target: &DataType,
) -> Result<BoundExpr> {
    check_depth(expr)?;
    let v = Binder::new(schema, partition_columns, mode).value(expr, Some(target))?;
    if &v.data_type == target {
        return Ok(v);
    }
    if !can_assign(&v.data_type, target) {
        return Err(about(
            expr,
            format!(
                "a {} value cannot be assigned to a {} column",
                type_name(&v.data_type),
                type_name(target)
            ),
        ));
    }
    Ok(BoundExpr {
        kind: BoundKind::Cast {
            operand: Box::new(v),
            text: expr.to_string(),
        },
        data_type: target.clone(),
    })
}

/// The natural type of a number as written: `int`, `long`, an exact decimal, or `double`.
fn natural_number(text: &str) -> std::result::Result<Scalar, String> {
    if let Ok(i) = text.parse::<i64>() {
        return Ok(match i32::try_from(i) {
            Ok(v) => Scalar::Integer(v),
            Err(_) => Scalar::Long(i),
        });
    }
    if !text.contains(['e', 'E'])
        && let Some((precision, scale)) = decimal_shape(text)
        && let Some(value) = parse_decimal(text, precision, scale)
    {
        return Ok(Scalar::Decimal {
            value,
            precision,
            scale,
        });
    }
    text.parse::<f64>()
        .map(Scalar::Double)
        .map_err(|_| format!("'{text}' is not a number"))
}

/// `(precision, scale)` of a plain decimal numeral, if it fits 38 digits.
fn decimal_shape(text: &str) -> Option<(u8, u8)> {
    let digits = text.trim_start_matches(['-', '+']);
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    let int = int.trim_start_matches('0');
    let scale = frac.len();
    let precision = (int.len() + scale).max(1).max(scale);
    if precision > 38 {
        return None;
    }
    Some((u8::try_from(precision).ok()?, u8::try_from(scale).ok()?))
}

/// An integral scalar of type `t`, if `v` fits it.
fn integral_as(v: i64, t: PrimitiveType) -> Option<Scalar> {
    Some(match t {
        PrimitiveType::Byte => Scalar::Byte(i8::try_from(v).ok()?),
        PrimitiveType::Short => Scalar::Short(i16::try_from(v).ok()?),
        PrimitiveType::Integer => Scalar::Integer(i32::try_from(v).ok()?),
        PrimitiveType::Long => Scalar::Long(v),
        _ => return None,
    })
}

/// Types a literal, in the context of `hint` (the type it meets), as the module docs say.
pub(crate) fn literal(
    lit: &Literal,
    hint: Option<&DataType>,
) -> std::result::Result<BoundExpr, String> {
    let hint_prim = match hint {
        Some(DataType::Primitive(p)) => Some(*p),
        _ => None,
    };
    let scalar = match lit {
        Literal::Null => {
            return Ok(BoundExpr {
                kind: BoundKind::Literal(Scalar::Null),
                data_type: hint.cloned().unwrap_or(prim(PrimitiveType::Void)),
            });
        }
        Literal::Typed(s) => s.clone(),
        Literal::Interval(_) => return Err(INTERVAL_ALONE.into()),
        Literal::Boolean(b) => Scalar::Boolean(*b),
        Literal::String(text) => match hint_prim {
            Some(PrimitiveType::Date) => {
                Scalar::Date(parse_date(text).ok_or_else(|| format!("'{text}' is not a date"))?)
            }
            Some(PrimitiveType::Timestamp) => Scalar::Timestamp(
                parse_timestamp(text).ok_or_else(|| format!("'{text}' is not a timestamp"))?,
            ),
            Some(PrimitiveType::TimestampNtz) => Scalar::TimestampNtz(
                parse_naive_timestamp(text)
                    .ok_or_else(|| format!("'{text}' is not a timestamp_ntz"))?,
            ),
            _ => Scalar::String(text.clone()),
        },
        Literal::Number(text) => {
            let natural = natural_number(text)?;
            match hint_prim {
                Some(t) if is_integral(t) => match natural {
                    Scalar::Integer(v) => integral_as(i64::from(v), t).unwrap_or(natural),
                    Scalar::Long(v) => integral_as(v, t).unwrap_or(natural),
                    other => other,
                },
                Some(PrimitiveType::Double) => Scalar::Double(
                    text.parse::<f64>()
                        .map_err(|_| format!("'{text}' is not a number"))?,
                ),
                Some(PrimitiveType::Float) => Scalar::Float(
                    text.parse::<f32>()
                        .map_err(|_| format!("'{text}' is not a number"))?,
                ),
                Some(PrimitiveType::Decimal(..)) => match natural {
                    Scalar::Integer(_) | Scalar::Long(_) => match decimal_shape(text)
                        .and_then(|(p, s)| Some((p, s, parse_decimal(text, p, s)?)))
                    {
                        Some((precision, scale, value)) => Scalar::Decimal {
                            value,
                            precision,
                            scale,
                        },
                        None => natural,
                    },
                    other => other,
                },
                _ => natural,
            }
        }
    };
    let data_type = prim(scalar.primitive_type().unwrap_or(PrimitiveType::Void));
    Ok(BoundExpr {
        kind: BoundKind::Literal(scalar),
        data_type,
    })
}

/// Where an interval may appear, for the error when it appears elsewhere.
pub(crate) const INTERVAL_ALONE: &str =
    "an INTERVAL can only be added to or subtracted from a date or timestamp";

/// The interval `e` stands for: an `INTERVAL` literal, or one negated.
fn interval_of(e: &Expr) -> Option<Interval> {
    match e {
        Expr::Literal(Literal::Interval(i)) => Some(*i),
        Expr::Neg(x) => interval_of(x)?.checked_neg(),
        _ => None,
    }
}

fn is_untyped_literal(e: &Expr) -> bool {
    matches!(e, Expr::Literal(l) if !matches!(l, Literal::Typed(_)))
}

pub(crate) fn primitive_of(t: &DataType) -> Option<PrimitiveType> {
    match t {
        DataType::Primitive(p) => Some(*p),
        _ => None,
    }
}

fn void(t: &DataType) -> bool {
    matches!(t, DataType::Primitive(PrimitiveType::Void))
}

impl Binder<'_> {
    /// Binds a group of expressions that meet at one type (operands of an operator, CASE
    /// values, COALESCE arguments): the others first, then untyped literals in their
    /// context. Returns the bound expressions and their common type.
    pub(crate) fn group(
        &self,
        whole: &Expr,
        exprs: &[&Expr],
        hint: Option<&DataType>,
    ) -> Result<(Vec<BoundExpr>, DataType)> {
        let mut bound: Vec<Option<BoundExpr>> = vec![None; exprs.len()];
        let mut context: Option<DataType> = None;
        for (slot, e) in bound.iter_mut().zip(exprs) {
            if !is_untyped_literal(e) {
                let b = self.value(e, None)?;
                context = match context {
                    None => Some(b.data_type.clone()),
                    Some(c) => Some(common_type(&c, &b.data_type).unwrap_or(c)),
                };
                *slot = Some(b);
            }
        }
        let context = match context {
            Some(c) if !void(&c) => Some(c),
            _ => hint.cloned(),
        };
        let mut out = Vec::with_capacity(exprs.len());
        for (slot, e) in bound.into_iter().zip(exprs) {
            out.push(match slot {
                Some(b) => b,
                None => self.value(e, context.as_ref())?,
            });
        }
        let mut common = prim(PrimitiveType::Void);
        for b in &out {
            common = common_type(&common, &b.data_type).ok_or_else(|| {
                about(
                    whole,
                    format!(
                        "{} and {} have no common type",
                        type_name(&common),
                        type_name(&b.data_type)
                    ),
                )
            })?;
        }
        Ok((out, common))
    }

    pub(crate) fn two(&self, l: &Expr, r: &Expr) -> Result<(BoundExpr, BoundExpr)> {
        let mut v = self.group_loose(&[l, r])?;
        let r = v.pop().ok_or_else(|| err("missing operand"))?;
        let l = v.pop().ok_or_else(|| err("missing operand"))?;
        Ok((l, r))
    }

    /// As [`Self::group`] without requiring a common type (arithmetic and concatenation
    /// check their operand types themselves).
    fn group_loose(&self, exprs: &[&Expr]) -> Result<Vec<BoundExpr>> {
        let mut bound: Vec<Option<BoundExpr>> = vec![None; exprs.len()];
        let mut context: Option<DataType> = None;
        for (slot, e) in bound.iter_mut().zip(exprs) {
            if !is_untyped_literal(e) {
                let b = self.value(e, None)?;
                if !void(&b.data_type) {
                    context.get_or_insert_with(|| b.data_type.clone());
                }
                *slot = Some(b);
            }
        }
        let mut out = Vec::with_capacity(exprs.len());
        for (slot, e) in bound.into_iter().zip(exprs) {
            out.push(match slot {
                Some(b) => b,
                None => self.value(e, context.as_ref())?,
            });
        }
        Ok(out)
    }

    fn boolean(&self, e: &Expr) -> Result<BoundExpr> {
        let b = self.value(e, Some(&prim(PrimitiveType::Boolean)))?;
        if !b.is_boolean() {
            return Err(about(
                e,
                format!("is {}, not boolean", type_name(&b.data_type)),
            ));
        }
        Ok(b)
    }

    /// Binds `e` as a value; `hint` types an untyped literal `e`.
    pub(crate) fn value(&self, e: &Expr, hint: Option<&DataType>) -> Result<BoundExpr> {
        let boolean = prim(PrimitiveType::Boolean);
        let make = |kind, data_type| Ok(BoundExpr { kind, data_type });
        match e {
            Expr::Column(path) => {
                let c = self.column(path)?;
                let t = c.data_type.clone();
                make(BoundKind::Column(c), t)
            }
            Expr::Literal(l) => literal(l, hint).map_err(|m| about(e, m)),
            Expr::Cmp(l, op, r) => {
                let (l, r) = self.comparison_operands(e, l, r)?;
                make(BoundKind::Cmp(Box::new(l), *op, Box::new(r)), boolean)
            }
            Expr::IsNull { expr: x, negated } => make(
                BoundKind::IsNull {
                    operand: Box::new(self.value(x, None)?),
                    negated: *negated,
                },
                boolean,
            ),
            Expr::In {
                expr: x,
                list,
                negated,
            } => {
                let operand = self.value(x, None)?;
                let mut values = Vec::with_capacity(list.len());
                for lit in list {
                    let v = literal(lit, Some(&operand.data_type)).map_err(|m| about(e, m))?;
                    if common_type(&operand.data_type, &v.data_type).is_none() {
                        return Err(about(
                            e,
                            format!(
                                "cannot compare {} with {}",
                                type_name(&operand.data_type),
                                type_name(&v.data_type)
                            ),
                        ));
                    }
                    values.push(v);
                }
                make(
                    BoundKind::In {
                        operand: Box::new(operand),
                        list: values,
                        negated: *negated,
                    },
                    boolean,
                )
            }
            Expr::And(l, r) => make(
                BoundKind::And(Box::new(self.boolean(l)?), Box::new(self.boolean(r)?)),
                boolean,
            ),
            Expr::Or(l, r) => make(
                BoundKind::Or(Box::new(self.boolean(l)?), Box::new(self.boolean(r)?)),
                boolean,
            ),
            Expr::Not(x) => make(BoundKind::Not(Box::new(self.boolean(x)?)), boolean),
            Expr::Arith(l, op @ (ArithOp::Add | ArithOp::Sub), r) if interval_of(r).is_some() => {
                let i = interval_of(r).unwrap_or_default();
                let i = if *op == ArithOp::Sub {
                    i.checked_neg()
                        .ok_or_else(|| about(e, "interval out of range"))?
                } else {
                    i
                };
                self.add_interval(e, l, i)
            }
            Expr::Arith(l, ArithOp::Add, r) if interval_of(l).is_some() => {
                self.add_interval(e, r, interval_of(l).unwrap_or_default())
            }
            Expr::Arith(l, op, r) => {
                if interval_of(l).is_some() || interval_of(r).is_some() {
                    return Err(about(e, INTERVAL_ALONE));
                }
                let (left, right) = self.two(l, r)?;
                let (lt, rt) = (
                    primitive_of(&left.data_type),
                    primitive_of(&right.data_type),
                );
                let result = match (lt, rt) {
                    (Some(PrimitiveType::Void), Some(PrimitiveType::Void)) => {
                        Some(PrimitiveType::Void)
                    }
                    (Some(PrimitiveType::Void), Some(t)) | (Some(t), Some(PrimitiveType::Void)) => {
                        arith_result_type(*op, t, t)
                    }
                    (Some(a), Some(b)) => arith_result_type(*op, a, b),
                    _ => None,
                };
                let Some(result) = result else {
                    return Err(about(
                        e,
                        format!(
                            "{} does not apply to {} and {}",
                            op.symbol(),
                            type_name(&left.data_type),
                            type_name(&right.data_type)
                        ),
                    ));
                };
                make(
                    BoundKind::Arith {
                        op: *op,
                        left: Box::new(left),
                        right: Box::new(right),
                        text: e.to_string(),
                    },
                    prim(result),
                )
            }
            Expr::Neg(x) => {
                if interval_of(x).is_some() {
                    return Err(about(e, INTERVAL_ALONE));
                }
                let operand = self.value(x, hint)?;
                match primitive_of(&operand.data_type) {
                    Some(t) if is_numeric(t) || t == PrimitiveType::Void => {}
                    _ => {
                        return Err(about(
                            e,
                            format!("- does not apply to {}", type_name(&operand.data_type)),
                        ));
                    }
                }
                let t = operand.data_type.clone();
                make(
                    BoundKind::Neg {
                        operand: Box::new(operand),
                        text: e.to_string(),
                    },
                    t,
                )
            }
            Expr::Concat(l, r) => {
                let (left, right) = self.two(l, r)?;
                use PrimitiveType::{Binary, String as Str, Void};
                let t = match (
                    primitive_of(&left.data_type),
                    primitive_of(&right.data_type),
                ) {
                    (Some(Str), Some(Str | Void)) | (Some(Void), Some(Str)) => Str,
                    (Some(Void), Some(Void)) => Str,
                    (Some(Binary), Some(Binary | Void)) | (Some(Void), Some(Binary)) => Binary,
                    _ => {
                        return Err(about(
                            e,
                            format!(
                                "|| applies to strings (or binaries), not {} and {}; write a CAST",
                                type_name(&left.data_type),
                                type_name(&right.data_type)
                            ),
                        ));
                    }
                };
                make(BoundKind::Concat(Box::new(left), Box::new(right)), prim(t))
            }
            Expr::Case {
                branches,
                otherwise,
            } => {
                if branches.is_empty() {
                    return Err(about(e, "CASE needs at least one WHEN"));
                }
                let mut conds = Vec::with_capacity(branches.len());
                for (c, _) in branches {
                    conds.push(self.boolean(c)?);
                }
                let mut values: Vec<&Expr> = branches.iter().map(|(_, v)| v).collect();
                if let Some(o) = otherwise {
                    values.push(o);
                }
                let (mut vals, t) = self.group(e, &values, hint)?;
                let otherwise = if otherwise.is_some() {
                    vals.pop().map(Box::new)
                } else {
                    None
                };
                make(
                    BoundKind::Case {
                        branches: conds.into_iter().zip(vals).collect(),
                        otherwise,
                    },
                    t,
                )
            }
            Expr::Coalesce(args) => {
                if args.is_empty() {
                    return Err(about(e, "COALESCE needs at least one argument"));
                }
                let refs: Vec<&Expr> = args.iter().collect();
                let (vals, t) = self.group(e, &refs, hint)?;
                make(BoundKind::Coalesce(vals), t)
            }
            Expr::DatePart(field, x) => {
                let operand = self.value(x, None)?;
                if !matches!(
                    primitive_of(&operand.data_type),
                    Some(
                        PrimitiveType::Date
                            | PrimitiveType::Timestamp
                            | PrimitiveType::TimestampNtz
                            | PrimitiveType::Void
                    )
                ) {
                    return Err(about(
                        e,
                        format!(
                            "{} takes a date or timestamp, not {}",
                            field.name(),
                            type_name(&operand.data_type)
                        ),
                    ));
                }
                make(
                    BoundKind::DatePart {
                        field: *field,
                        operand: Box::new(operand),
                    },
                    DataType::Primitive(PrimitiveType::Integer),
                )
            }
            Expr::Cast(x, to) => {
                let operand = self.value(x, None)?;
                let ok = match (primitive_of(&operand.data_type), primitive_of(to)) {
                    (Some(from), Some(to)) => can_cast(from, to),
                    _ => &operand.data_type == to,
                };
                if !ok {
                    return Err(about(
                        e,
                        format!(
                            "cannot cast {} to {}",
                            type_name(&operand.data_type),
                            type_name(to)
                        ),
                    ));
                }
                make(
                    BoundKind::Cast {
                        operand: Box::new(operand),
                        text: e.to_string(),
                    },
                    to.clone(),
                )
            }
            Expr::Like {
                expr,
                pattern,
                escape,
                case_insensitive,
                negated,
            } => {
                let string = prim(PrimitiveType::String);
                let operand = self.value(expr, Some(&string))?;
                let pattern = self.value(pattern, Some(&string))?;
                for side in [&operand, &pattern] {
                    if !matches!(
                        primitive_of(&side.data_type),
                        Some(PrimitiveType::String | PrimitiveType::Void)
                    ) {
                        return Err(about(
                            e,
                            format!(
                                "LIKE applies to strings, not {}; write a CAST",
                                type_name(&side.data_type)
                            ),
                        ));
                    }
                }
                let escape = escape.unwrap_or(DEFAULT_ESCAPE);
                if let BoundKind::Literal(Scalar::String(p)) = &pattern.kind {
                    to_arrow(p, escape).map_err(|m| about(e, m))?;
                }
                make(
                    BoundKind::Like {
                        operand: Box::new(operand),
                        pattern: Box::new(pattern),
                        escape,
                        case_insensitive: *case_insensitive,
                        negated: *negated,
                    },
                    boolean,
                )
            }
            Expr::IsDistinctFrom {
                left,
                right,
                negated,
            } => {
                let (l, r) = self.comparison_operands(e, left, right)?;
                make(
                    BoundKind::IsDistinctFrom {
                        left: Box::new(l),
                        right: Box::new(r),
                        negated: *negated,
                    },
                    boolean,
                )
            }
            Expr::Call { function, args } => self.call(e, *function, args, hint),
        }
    }

    /// `x + interval`: a date plus whole days stays a date; a date plus time is a
    /// timestamp; a timestamp keeps its type. An untyped string `x` (`DATE '2024-01-01'`)
    /// is read as a date, else as a timestamp.
    fn add_interval(&self, e: &Expr, x: &Expr, interval: Interval) -> Result<BoundExpr> {
        let operand = match x {
            Expr::Literal(l @ Literal::String(_)) => literal(l, Some(&prim(PrimitiveType::Date)))
                .or_else(|_| literal(l, Some(&prim(PrimitiveType::Timestamp))))
                .map_err(|m| about(e, m))?,
            _ => self.value(x, None)?,
        };
        let t = match primitive_of(&operand.data_type) {
            Some(PrimitiveType::Date) if interval.is_whole_days() => PrimitiveType::Date,
            Some(PrimitiveType::Date | PrimitiveType::Timestamp | PrimitiveType::Void) => {
                PrimitiveType::Timestamp
            }
            Some(PrimitiveType::TimestampNtz) => PrimitiveType::TimestampNtz,
            _ => {
                return Err(about(
                    e,
                    format!(
                        "INTERVAL arithmetic applies to dates and timestamps, not {}",
                        type_name(&operand.data_type)
                    ),
                ));
            }
        };
        Ok(BoundExpr {
            kind: BoundKind::AddInterval {
                operand: Box::new(operand),
                interval,
                text: e.to_string(),
            },
            data_type: prim(t),
        })
    }

    /// The operands of a comparison, typed so that they have a common primitive type. A
    /// column compared with a literal types the literal as the predicate language does.
    pub(crate) fn comparison_operands(
        &self,
        e: &Expr,
        l: &Expr,
        r: &Expr,
    ) -> Result<(BoundExpr, BoundExpr)> {
        let column_literal = |c: &[String], lit: &Literal| -> Result<(BoundExpr, BoundExpr)> {
            let col = self.column(c)?;
            let Some(ty) = col.primitive() else {
                return Err(about(
                    e,
                    format!("`{}` is not a primitive", col.display_name()),
                ));
            };
            let value = coerce(lit, ty).map_err(|m| about(e, m))?;
            let t = value.primitive_type().map_or(col.data_type.clone(), prim);
            let column = BoundExpr {
                data_type: col.data_type.clone(),
                kind: BoundKind::Column(col),
            };
            Ok((
                column,
                BoundExpr {
                    kind: BoundKind::Literal(value),
                    data_type: t,
                },
            ))
        };
        let (left, right) = match (l, r) {
            (Expr::Column(c), Expr::Literal(lit)) => column_literal(c, lit)?,
            (Expr::Literal(lit), Expr::Column(c)) => {
                let (c, v) = column_literal(c, lit)?;
                (v, c)
            }
            _ => self.two(l, r)?,
        };
        let comparable = matches!(
            (primitive_of(&left.data_type), primitive_of(&right.data_type)),
            (Some(a), Some(b)) if a != PrimitiveType::Variant && b != PrimitiveType::Variant
        ) && common_type(&left.data_type, &right.data_type).is_some();
        if !comparable {
            return Err(about(
                e,
                format!(
                    "cannot compare {} with {}",
                    type_name(&left.data_type),
                    type_name(&right.data_type)
                ),
            ));
        }
        Ok((left, right))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_expr;

    fn schema() -> StructType {
        StructType::from_json(r#"{"type":"struct","fields":[
            {"name":"i","type":"integer","nullable":true,"metadata":{}},
            {"name":"l","type":"long","nullable":true,"metadata":{}},
            {"name":"d","type":"double","nullable":true,"metadata":{}},
            {"name":"m","type":"decimal(10,2)","nullable":true,"metadata":{}},
            {"name":"s","type":"string","nullable":true,"metadata":{}},
            {"name":"b","type":"boolean","nullable":true,"metadata":{}},
            {"name":"dt","type":"date","nullable":true,"metadata":{}},
            {"name":"t","type":{"type":"struct","fields":[
                {"name":"id","type":"long","nullable":true,"metadata":{}},
                {"name":"name","type":"string","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}}
        ]}"#).unwrap()
    }

    fn ty(text: &str) -> Result<DataType> {
        bind_value(&parse_expr(text)?, &schema(), &[], ColumnMappingMode::None)
            .map(|b| b.data_type().clone())
    }

    fn p(t: PrimitiveType) -> DataType {
        DataType::Primitive(t)
    }

    #[test]
    fn types_follow_spark() {
        use PrimitiveType::*;
        for (text, expected) in [
            ("i + 1", Integer),
            ("i + l", Long),
            ("i + 10000000000", Long),
            ("i / 2", Double),
            ("i % 2", Integer),
            ("l % i", Long),
            ("-i", Integer),
            ("d * 2", Double),
            ("m + 1", Decimal(11, 2)),
            ("m * m", Decimal(21, 4)),
            ("m + 1.5", Decimal(11, 2)),
            ("1.25", Decimal(3, 2)),
            ("1e3", Double),
            ("s || 'x'", String),
            ("i + 1 > l * 2", Boolean),
            ("CASE WHEN i > 1 THEN 1 WHEN b THEN l ELSE NULL END", Long),
            ("CASE WHEN i > 1 THEN 'a' END", String),
            ("COALESCE(i, 0)", Integer),
            ("COALESCE(i, 2.5)", Decimal(11, 1)),
            ("CAST(s AS decimal(5,2))", Decimal(5, 2)),
            ("CAST(i AS bigint)", Long),
            ("t.id + 1", Long),
            ("t.name = s", Boolean),
            ("NULL", Void),
            ("i + NULL", Integer),
            ("dt = '2020-01-01'", Boolean),
            ("COALESCE(dt, '2021-02-03')", Date),
            ("lower(s)", String),
            ("length(s)", Integer),
            ("substring(s, 1)", String),
            ("concat(s, 'x', s)", String),
            ("starts_with(s, 'a')", Boolean),
            ("s LIKE 'a%'", Boolean),
            ("i IS DISTINCT FROM l", Boolean),
            ("abs(i)", Integer),
            ("abs(m)", Decimal(10, 2)),
            ("round(m, 1)", Decimal(10, 1)),
            ("round(d)", Double),
            ("round(l, -2)", Long),
            ("floor(d)", Long),
            ("ceil(i)", Long),
            ("ceil(m)", Decimal(9, 0)),
            ("greatest(i, l)", Long),
            ("least(i, 2.5)", Decimal(11, 1)),
            ("greatest(s, 'x', NULL)", String),
            ("nullif(i, l)", Integer),
            ("date_trunc('DAY', dt)", Timestamp),
            ("to_date(s)", Date),
            ("to_timestamp(s, 'yyyy')", Timestamp),
            ("current_date", Date),
            ("current_timestamp()", Timestamp),
            ("dt + INTERVAL 1 DAY", Date),
            ("dt + INTERVAL 1 HOUR", Timestamp),
            ("'2024-01-01' + INTERVAL 1 MONTH", Date),
            ("HOUR(dt)", Integer),
        ] {
            assert_eq!(ty(text).unwrap(), p(expected), "{text}");
        }
        assert!(matches!(ty("t").unwrap(), DataType::Struct(_)));
    }

    #[test]
    fn type_errors_name_the_expression() {
        for (text, needle) in [
            ("'a' + 1", "'a' + 1"),
            ("s + 1", "s + 1"),
            ("b * 2", "b * 2"),
            ("nope + 1", "nope"),
            ("t.nope", "t.nope"),
            ("CASE WHEN b THEN 1 ELSE 'x' END", "CASE"),
            ("CASE WHEN i THEN 1 END", "`i`"),
            ("COALESCE(s, 1)", "COALESCE"),
            ("CAST(dt AS int)", "CAST"),
            ("s || 1", "||"),
            ("i + 1 = s", "i + 1 = s"),
            ("-s", "-s"),
            ("t + 1", "t + 1"),
            ("i IN ('x')", "IN"),
            ("b AND i", "`i`"),
        ] {
            match ty(text) {
                Err(e @ (ExprError::Invalid(_) | ExprError::UnknownColumn { .. })) => {
                    let m = e.to_string();
                    assert!(m.contains(needle), "{text}: {m}");
                }
                other => panic!("{text}: {other:?}"),
            }
        }
    }

    #[test]
    fn assignments_convert_to_the_column_type() {
        let s = schema();
        let assign = |text: &str, t: PrimitiveType| {
            bind_assignment(
                &parse_expr(text).unwrap(),
                &s,
                &[],
                ColumnMappingMode::None,
                &p(t),
            )
        };
        // A literal takes the column's type; other values are converted.
        let b = assign("1", PrimitiveType::Long).unwrap();
        assert_eq!(b.kind(), &BoundKind::Literal(Scalar::Long(1)));
        let b = assign("i + 1", PrimitiveType::Double).unwrap();
        assert!(matches!(b.kind(), BoundKind::Cast { .. }));
        assert_eq!(b.data_type(), &p(PrimitiveType::Double));
        assert!(assign("NULL", PrimitiveType::String).is_ok());
        assert!(assign("'2020-01-01'", PrimitiveType::Date).is_ok());
        assert!(assign("s", PrimitiveType::Integer).is_err());
        assert!(assign("CAST(s AS int)", PrimitiveType::Integer).is_ok());
    }

    #[test]
    fn deep_api_trees_are_refused() {
        let mut e = Expr::column("i");
        for _ in 0..10_000 {
            e = e.add(Expr::lit(1));
        }
        let r = bind_value(&e, &schema(), &[], ColumnMappingMode::None);
        assert!(matches!(r, Err(ExprError::Invalid(m)) if m.contains("deeper")));
        // Dropping the tree is the caller's; keep it shallow enough for the test thread.
        while let Expr::Arith(l, _, _) = e {
            e = *l;
        }
    }
}
