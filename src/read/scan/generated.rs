//! Partition pruning through generated partition columns (PROTOCOL.md "Generated
//! Columns"; Delta Spark derives such partition filters too): a scan filter on a source
//! column also bounds a partition column generated from it, so files can be skipped by
//! their partition values even though the filter never names the partition column.
//!
//! Only top-level conjuncts `source op literal` are used, and only for generation
//! expressions whose value is a non-decreasing function of the source, where `x op c`
//! implies `f(x) op' f(c)` (`<`/`<=` → `<=`, `>`/`>=` → `>=`, `=` → `=`):
//! * `source` itself (an identity-like copy of the column);
//! * `CAST(source AS DATE)` and `YEAR(source)` from a date, `timestamp_ntz` or
//!   `timestamp`. A timestamp's date depends on the writer's session time zone, which the
//!   table does not record, so the bound is widened by a day on each side (every zone is
//!   within a day of UTC).
//!
//! The derived terms are only used to skip files (scans, and DELETE's and UPDATE's
//! candidate files); rows are still filtered by the operation's own predicate, so a
//! derived term can never change a result, only the files read.

use alluvium_expr::{CmpOp, DateField, Expr, Literal, Predicate, bind, parse_expr};
use alluvium_txlog::column_mapping::ColumnMappingMode;
use alluvium_txlog::scalar::Scalar;
use alluvium_txlog::schema::{ColumnMetadataKey, DataType, PrimitiveType, StructType};

const GENERATION_EXPRESSION: &str = ColumnMetadataKey::GenerationExpression.as_str();
const MICROS_PER_DAY: i64 = 86_400_000_000;

/// How a generated partition column follows its source.
enum Derivation {
    Copy,
    /// `CAST(source AS DATE)`; `widen` when the source is a timestamp with a time zone.
    Date {
        widen: bool,
    },
    /// `YEAR(source)`; `widen` as for `Date`.
    Year {
        widen: bool,
    },
}

/// The proleptic Gregorian year of a day number (days since 1970-01-01).
fn year_of(days: i64) -> i64 {
    // Days since 0000-03-01, split into 400-year eras (Howard Hinnant's civil_from_days).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    yoe + era * 400 + i64::from(month <= 2)
}

/// [`with_generated_partition_terms`] for the table `snapshot` read: the predicate that
/// skips files for `predicate` (scans, DELETE and UPDATE candidates).
pub(crate) fn pruning_predicate(predicate: &Predicate, snapshot: &crate::Snapshot) -> Predicate {
    with_generated_partition_terms(
        predicate,
        snapshot.schema(),
        snapshot.partition_columns(),
        snapshot.column_mapping(),
    )
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
            Expr::DatePart(DateField::Year, inner)
                if f.data_type == DataType::Primitive(PrimitiveType::Integer) =>
            {
                match inner.as_ref() {
                    Expr::Column(path) if path.len() == 1 => {
                        let widen = schema.field(&path[0]).is_some_and(|s| {
                            s.data_type == DataType::Primitive(PrimitiveType::Timestamp)
                        });
                        (path[0].clone(), Derivation::Year { widen })
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
        Derivation::Date { .. } | Derivation::Year { .. } => match value {
            Scalar::Date(d) => i64::from(*d),
            Scalar::Timestamp(us) | Scalar::TimestampNtz(us) => us.div_euclid(MICROS_PER_DAY),
            _ => return Vec::new(),
        },
    };
    let slack = match how {
        Derivation::Date { widen: true } | Derivation::Year { widen: true } => 1,
        _ => 0,
    };
    let value_of = |d: i64| match how {
        Derivation::Year { .. } => i32::try_from(year_of(d)).ok().map(Scalar::Integer),
        _ => i32::try_from(d).ok().map(Scalar::Date),
    };
    let (Some(lo), Some(hi)) = (value_of(v - slack), value_of(v + slack)) else {
        return Vec::new();
    };
    match op {
        CmpOp::Lt | CmpOp::Le => vec![(CmpOp::Le, hi)],
        CmpOp::Gt | CmpOp::Ge => vec![(CmpOp::Ge, lo)],
        CmpOp::Eq => vec![(CmpOp::Ge, lo), (CmpOp::Le, hi)],
        CmpOp::Ne => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::year_of;

    #[test]
    fn year_of_day_numbers() {
        assert_eq!(year_of(0), 1970);
        assert_eq!(year_of(-1), 1969);
        assert_eq!(year_of(18_992), 2021); // 2021-12-31
        assert_eq!(year_of(18_993), 2022); // 2022-01-01
        assert_eq!(year_of(-719_162), 1); // 0001-01-01
        assert_eq!(year_of(-719_163), 0);
    }
}
