//! Target file pruning from the source's keys: a target row can match only if each of its
//! key columns holds a value some source row has, so `t.k IN (the source's values)` (for a
//! few distinct keys) or `t.k BETWEEN min AND max` of the source's values is a predicate
//! every matching target row satisfies. It is checked with `may_match` against partition
//! values and file statistics, and recorded as the transaction's read predicate.

use alluvium_expr::{CmpOp, Expr, Literal};
use alluvium_txlog::scalar::{Scalar, scalar_at};
use alluvium_txlog::schema::PrimitiveType;
use arrow_array::RecordBatch;

use super::join::{KeyPair, SourceIndex};
use super::scope::Scope;

/// Up to this many distinct source keys the pruning predicate lists them (`IN`, checked
/// against each file's bounds: a sparse CDC batch skips the files between its keys); above,
/// it uses each key's range. Checking the list costs one comparison per key and file.
pub(crate) const MAX_IN_LIST: usize = 1024;

/// What the source's keys say about the target rows that can match.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Pruning {
    /// Nothing narrows the target: every file is a candidate.
    All,
    /// No target row can match (the source is empty or no row has all keys non-NULL).
    Nothing,
    /// Only rows satisfying this predicate over target columns (unqualified names) can.
    Where(Expr),
}

/// The pruning predicate of the source's keys.
pub(crate) fn pruning(
    scope: &Scope,
    keys: &[KeyPair],
    source: &RecordBatch,
    index: &SourceIndex,
) -> Pruning {
    // No source row that can match (an empty source, or NULL in a key of every row):
    // with keys or without, no target row has a pair.
    if index.keyed_rows().is_empty() {
        return Pruning::Nothing;
    }
    match pruning_expr(scope, keys, source, index) {
        Some(e) => Pruning::Where(e),
        None => Pruning::All,
    }
}

fn pruning_expr(
    scope: &Scope,
    keys: &[KeyPair],
    source: &RecordBatch,
    index: &SourceIndex,
) -> Option<Expr> {
    let mut out: Option<Expr> = None;
    for k in keys {
        let field = &scope.target.fields[k.target];
        let Some(prim) = field.data_type.as_primitive() else {
            continue;
        };
        // Floating-point keys are not narrowed: NaN has no place in a range.
        if matches!(prim, PrimitiveType::Float | PrimitiveType::Double) {
            continue;
        }
        // Only keys hashed as the target's own type give literals of that type.
        if scope.target_fields[k.target].data_type() != &k.key_type {
            continue;
        }
        let col = source.column(k.source);
        let col = if col.data_type() == &k.key_type {
            col.clone()
        } else {
            match arrow_cast::cast(col, &k.key_type) {
                Ok(c) => c,
                Err(_) => continue,
            }
        };
        let column = Expr::column(&field.name);
        let term = if keys.len() == 1 && index.distinct_keys() <= MAX_IN_LIST {
            let mut values = Vec::new();
            for row in index.representatives() {
                match scalar_at(col.as_ref(), row as usize, prim) {
                    Ok(s) if !s.is_null() => values.push(Literal::Typed(s)),
                    _ => return None,
                }
            }
            if values.is_empty() {
                return None;
            }
            column.is_in(values)
        } else {
            let (mut lo, mut hi): (Option<Scalar>, Option<Scalar>) = (None, None);
            for &row in index.keyed_rows() {
                let Ok(s) = scalar_at(col.as_ref(), row as usize, prim) else {
                    return None;
                };
                if s.is_null() {
                    continue;
                }
                let below = lo
                    .as_ref()
                    .is_none_or(|l| s.compare(l) == Some(std::cmp::Ordering::Less));
                let above = hi
                    .as_ref()
                    .is_none_or(|h| s.compare(h) == Some(std::cmp::Ordering::Greater));
                if lo.as_ref().is_some_and(|l| s.compare(l).is_none()) {
                    // Values without an order (NaN): no range.
                    return None;
                }
                if below {
                    lo = Some(s.clone());
                }
                if above {
                    hi = Some(s);
                }
            }
            match (lo, hi) {
                (Some(lo), Some(hi)) => column
                    .clone()
                    .cmp(CmpOp::Ge, Literal::Typed(lo))
                    .and(column.cmp(CmpOp::Le, Literal::Typed(hi))),
                _ => return None,
            }
        };
        out = Some(match out {
            None => term,
            Some(e) => e.and(term),
        });
    }
    out
}
