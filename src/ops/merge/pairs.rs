//! The matching pairs of one target batch: the (target row, source row) pairs for which the
//! whole ON condition is TRUE.
//!
//! With equality keys the candidates are the hash index's (equal keys); without keys
//! (`t.id < s.id`, `TRUE`, `s.id = 1`, `t.id = s.id + 0`, an OR of equalities) every
//! pair of the batch and the source is a candidate: a nested-loop join. Either way the
//! residual is evaluated on the candidates [`PAIR_CHUNK`] pairs at a time, and the cross
//! product is never materialised, so the memory a batch costs is one chunk's joined rows
//! plus the pairs that match (the join's output, which the clauses need).

use alluvium_expr::Predicate;
use alluvium_expr::evaluate;
use arrow_array::{Array, RecordBatch, UInt32Array};

use super::join::SourceIndex;
use super::scope::Scope;
use crate::Result;

/// Candidate pairs evaluated at once: bounds the joined batch a residual is evaluated on
/// (each pair is a row of every target and source column).
pub(crate) const PAIR_CHUNK: usize = 16 * 1024;

/// The pairs `(target rows, source rows)` of `target` (a batch in the `t` layout) whose ON
/// condition holds: the index's candidates (all pairs when it has no keys) kept where
/// `residual` is TRUE (NULL and FALSE drop a pair, as in SQL).
///
/// # Errors
/// Evaluation errors of the residual (overflow, a failed cast), naming the expression.
pub(crate) fn matching_pairs(
    index: &SourceIndex,
    residual: Option<&Predicate>,
    scope: &Scope,
    target: &RecordBatch,
    source: &RecordBatch,
) -> Result<(Vec<u32>, Vec<u32>)> {
    let (mut t_out, mut s_out) = (Vec::new(), Vec::new());
    if index.has_keys() {
        let (t_rows, s_rows) = index.probe(target)?;
        let Some(residual) = residual else {
            return Ok((t_rows, s_rows));
        };
        for (t, s) in t_rows.chunks(PAIR_CHUNK).zip(s_rows.chunks(PAIR_CHUNK)) {
            keep_true(
                residual, scope, target, source, t, s, &mut t_out, &mut s_out,
            )?;
        }
        return Ok((t_out, s_out));
    }
    // Nested loop: pair `p` of the cross product is target row `p / n` with the `p % n`-th
    // source row; chunks are consecutive ranges of `p`.
    let sources = index.keyed_rows();
    let n = sources.len();
    let total = target.num_rows() * n;
    let (mut t_chunk, mut s_chunk) = (Vec::new(), Vec::new());
    let mut start = 0;
    while start < total {
        let end = (start + PAIR_CHUNK).min(total);
        t_chunk.clear();
        s_chunk.clear();
        for p in start..end {
            // `p / n` is a row of `target`, whose row count fits the u32 positions every
            // batch here uses.
            t_chunk.push((p / n) as u32);
            s_chunk.push(sources[p % n]);
        }
        match residual {
            Some(r) => keep_true(
                r, scope, target, source, &t_chunk, &s_chunk, &mut t_out, &mut s_out,
            )?,
            None => {
                t_out.extend_from_slice(&t_chunk);
                s_out.extend_from_slice(&s_chunk);
            }
        }
        start = end;
    }
    Ok((t_out, s_out))
}

/// Appends to the outputs the pairs of one chunk for which `residual` is TRUE.
#[allow(clippy::too_many_arguments)]
fn keep_true(
    residual: &Predicate,
    scope: &Scope,
    target: &RecordBatch,
    source: &RecordBatch,
    t_rows: &[u32],
    s_rows: &[u32],
    t_out: &mut Vec<u32>,
    s_out: &mut Vec<u32>,
) -> Result<()> {
    let ti = UInt32Array::from(t_rows.to_vec());
    let si = UInt32Array::from(s_rows.to_vec());
    let joined = scope.joined(Some((target, &ti)), Some((source, &si)), ti.len())?;
    let mask = evaluate(residual, &joined)?;
    for i in 0..mask.len() {
        if mask.is_valid(i) && mask.value(i) {
            t_out.push(t_rows[i]);
            s_out.push(s_rows[i]);
        }
    }
    Ok(())
}
