//! Partition pruning through generated partition columns (PROTOCOL.md "Generated
//! Columns"; Delta Spark derives such partition filters too): a scan filter on a source
//! column also bounds a partition column generated from it, so files can be skipped by
//! their partition values even though the filter never names the partition column.
//!
//! Only top-level conjuncts `source op literal` are used, and only for generation
//! expressions whose value is a non-decreasing function of the source, where `x op c`
//! implies `f(x) op' f(c)` (`<`/`<=` → `<=`, `>`/`>=` → `>=`, `=` → `=`):
//! * `source` itself (an identity-like copy of the column);
//! * `CAST(source AS DATE)` from a date, `timestamp_ntz` or `timestamp`. A timestamp's date
//!   depends on the writer's session time zone, which the table does not record, so the
//!   bound is widened by a day on each side (every zone is within a day of UTC).
//!
//! The derived terms are only used to skip files; rows are still filtered by the scan's
//! own predicate, so a derived term can never change a result, only the files read.

use alluvium_txlog::column_mapping::ColumnMappingMode;
use alluvium_txlog::expr::{CmpOp, Expr, Literal, Predicate, bind, parse_expr};
use alluvium_txlog::scalar::Scalar;
use alluvium_txlog::schema::{DataType, PrimitiveType, StructType};

const GENERATION_EXPRESSION: &str = "delta.generationExpression";
const MICROS_PER_DAY: i64 = 86_400_000_000;

/// How a generated partition column follows its source.
enum Derivation {
    Copy,
    /// `CAST(source AS DATE)`; `widen` when the source is a timestamp with a time zone.
    Date {
        widen: bool,
    },
}

/// `predicate` with the partition-column terms its conjuncts imply added (AND), or
/// `predicate` unchanged when none can be derived.
pub(crate) fn with_generated_partition_terms(
    predicate: &Predicate,
    schema: &StructType,
    partitions: &[String],
    mode: ColumnMappingMode,
) -> Predicate {
    let mut conjuncts = Vec::new();
    flatten(predicate, &mut conjuncts);
    let mut derived: Vec<Predicate> = Vec::new();
    for p in partitions {
        let Some(f) = schema.field(p) else { continue };
        let Some(text) = f
            .metadata
            .get(GENERATION_EXPRESSION)
            .and_then(|v| v.as_str())
        else {
            continue;
        };
        let Ok(expr) = parse_expr(text) else { continue };
        let (source, how) = match &expr {
            Expr::Column(path) if path.len() == 1 => (path[0].clone(), Derivation::Copy),
            Expr::Cast(inner, DataType::Primitive(PrimitiveType::Date))
                if f.data_type == DataType::Primitive(PrimitiveType::Date) =>
            {
                match inner.as_ref() {
                    Expr::Column(path) if path.len() == 1 => {
                        let widen = schema.field(&path[0]).is_some_and(|s| {
                            s.data_type == DataType::Primitive(PrimitiveType::Timestamp)
                        });
                        (path[0].clone(), Derivation::Date { widen })
                    }
                    _ => continue,
                }
            }
            _ => continue,
        };
        for c in &conjuncts {
            let Predicate::Cmp(col, op, value) = c else {
                continue;
            };
            if col.path.len() != 1 || !col.path[0].eq_ignore_ascii_case(&source) {
                continue;
            }
            for (op, v) in bounds(*op, value, &how) {
                let e = Expr::Column(vec![f.name.clone()]).cmp(op, Literal::Typed(v));
                if let Ok(b) = bind(&e, schema, partitions, mode) {
                    derived.push(b);
                }
            }
        }
    }
    derived.into_iter().fold(predicate.clone(), |acc, d| {
        Predicate::And(Box::new(acc), Box::new(d))
    })
}

fn flatten<'a>(p: &'a Predicate, out: &mut Vec<&'a Predicate>) {
    match p {
        Predicate::And(a, b) => {
            flatten(a, out);
            flatten(b, out);
        }
        other => out.push(other),
    }
}

/// The partition-column bounds `source op value` implies.
fn bounds(op: CmpOp, value: &Scalar, how: &Derivation) -> Vec<(CmpOp, Scalar)> {
    let v = match how {
        Derivation::Copy => {
            return match op {
                CmpOp::Ne => Vec::new(),
                _ => vec![(op, value.clone())],
            };
        }
        Derivation::Date { .. } => match value {
            Scalar::Date(d) => i64::from(*d),
            Scalar::Timestamp(us) | Scalar::TimestampNtz(us) => us.div_euclid(MICROS_PER_DAY),
            _ => return Vec::new(),
        },
    };
    let slack = match how {
        Derivation::Date { widen: true } => 1,
        _ => 0,
    };
    let day = |d: i64| i32::try_from(d).ok().map(Scalar::Date);
    let (Some(lo), Some(hi)) = (day(v - slack), day(v + slack)) else {
        return Vec::new();
    };
    match op {
        CmpOp::Lt | CmpOp::Le => vec![(CmpOp::Le, hi)],
        CmpOp::Gt | CmpOp::Ge => vec![(CmpOp::Ge, lo)],
        CmpOp::Eq => vec![(CmpOp::Ge, lo), (CmpOp::Le, hi)],
        CmpOp::Ne => Vec::new(),
    }
}
