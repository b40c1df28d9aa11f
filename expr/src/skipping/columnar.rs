//! Data skipping over a state's files all at once: each node of a predicate is judged for
//! every file of a [`FileBatch`] in one loop over its typed statistics columns, partition
//! predicates once per distinct partition-value map, and the connectives combine the
//! per-file answers. No statistics JSON is parsed per query: the batch's columns are parsed
//! once per state (and kept by the state for the next query).
//!
//! Contract: a row is kept exactly when the file-by-file judgement of the parent module
//! ([`FileFilter::keep`](super::FileFilter::keep)) keeps its file. Each step below mirrors
//! one of that judgement's, through the same helpers where the step is the same
//! ([`cmp_tri`], [`null_facts`], [`boolean_tri`], [`exact_cmp`]); the comparison of a typed
//! bound with a literal ([`compare_bound`]) is [`Scalar::compare`] specialised to the
//! bound's representation.

use std::cmp::Ordering;

use alluvium_txlog::FileBatch;
use alluvium_txlog::scalar::Scalar;
use alluvium_txlog::schema::PrimitiveType;
use alluvium_txlog::stats::{BoundValues, Bounds, ColumnKey, StatsColumn, StatsColumns};

use super::{
    ANY, NONE, Tri, boolean_tri, cmp_tri, exact_cmp, no_upper_bound, null_facts, partition_value_in,
};
use crate::CmpOp;
use crate::bind::{BoundColumn, Predicate};

/// The statistics columns judging `preds` reads: every data column in a position that
/// consults statistics, among the top-level columns `tops` whose statistics are parsed.
pub(super) fn stats_keys<'p>(preds: &'p [Predicate], tops: &[&str]) -> Vec<ColumnKey<'p>> {
    fn walk<'p>(p: &'p Predicate, tops: &[&str], out: &mut Vec<ColumnKey<'p>>) {
        match p {
            Predicate::Column(c)
            | Predicate::Cmp(c, _, _)
            | Predicate::IsNull { column: c, .. } => {
                let key = (&c.physical_path[..], c.primitive());
                if reads_stats(c, tops) && !out.contains(&key) {
                    out.push(key);
                }
            }
            Predicate::And(a, b) | Predicate::Or(a, b) => {
                walk(a, tops, out);
                walk(b, tops, out);
            }
            Predicate::Not(a) => walk(a, tops, out),
            Predicate::Const(_) | Predicate::Expr(_) | Predicate::ColCmp(..) => {}
        }
    }
    let mut out = Vec::new();
    for p in preds {
        walk(p, tops, &mut out);
    }
    out
}

/// Whether the file-by-file judgement sees `c`'s statistics: only the top-level columns
/// it parses are there.
fn reads_stats(c: &BoundColumn, tops: &[&str]) -> bool {
    c.physical_path
        .first()
        .is_some_and(|top| tops.contains(&top.as_str()))
}

/// The rows of a batch as the judgement reads them.
pub(super) struct Rows<'b> {
    batch: &'b FileBatch<'b>,
    /// `None`: no statistics are consulted (a predicate of partition columns only).
    tops: Option<&'b [&'b str]>,
}

impl<'b> Rows<'b> {
    /// The rows of `batch`, with the statistics of the top-level columns `tops` (`None`:
    /// none) as the judgement's parse would keep them.
    pub(super) fn new(batch: &'b FileBatch<'b>, tops: Option<&'b [&'b str]>) -> Self {
        Rows { batch, tops }
    }

    fn stats(&self) -> &StatsColumns {
        self.batch.stats()
    }

    /// Whether row `i` has statistics the judgement reads.
    fn present(&self, i: usize) -> bool {
        self.tops.is_some() && self.stats().present(i)
    }

    /// The statistics of `c` the judgement reads, if any.
    fn column(&self, c: &BoundColumn) -> Option<&StatsColumn> {
        let tops = self.tops?;
        if !reads_stats(c, tops) {
            return None;
        }
        self.stats().column(&c.physical_path, c.primitive())
    }

    /// Which rows some predicate of `preds` may match (a row of a file without rows
    /// matches nothing), as [`may_match`](super::may_match) judges each file.
    pub(super) fn may_match(&self, preds: &[Predicate]) -> Vec<bool> {
        let n = self.batch.len();
        let mut keep = vec![false; n];
        for p in preds {
            let tris = self.eval(p);
            for (k, t) in keep.iter_mut().zip(&tris) {
                *k |= t.t;
            }
        }
        for (i, k) in keep.iter_mut().enumerate() {
            if *k && self.present(i) && self.stats().num_records(i) == Some(0) {
                *k = false;
            }
        }
        keep
    }

    fn eval(&self, p: &Predicate) -> Vec<Tri> {
        let n = self.batch.len();
        match p {
            Predicate::Const(v) => vec![Tri::exact(*v); n],
            Predicate::And(a, b) => zip(self.eval(a), &self.eval(b), Tri::and),
            Predicate::Or(a, b) => zip(self.eval(a), &self.eval(b), Tri::or),
            Predicate::Not(a) => {
                let mut v = self.eval(a);
                for t in &mut v {
                    *t = Tri::not(*t);
                }
                v
            }
            Predicate::Column(c) => {
                let column = self.column(c);
                self.by_partition(
                    c,
                    |v| {
                        Tri::exact(match v {
                            Scalar::Boolean(b) => Some(b),
                            _ => None,
                        })
                    },
                    |i| {
                        let (may_null, non_null) = self.null_possibilities(c, column, i);
                        boolean_tri(may_null, non_null)
                    },
                )
            }
            Predicate::IsNull { column: c, negated } => {
                let column = self.column(c);
                let mut v = self.by_partition(
                    c,
                    |v| Tri::exact(Some(v.is_null())),
                    |i| {
                        let (nulls, non_nulls) = self.null_possibilities(c, column, i);
                        Tri {
                            t: nulls,
                            f: non_nulls,
                            n: false,
                        }
                    },
                );
                if *negated {
                    for t in &mut v {
                        *t = Tri::not(*t);
                    }
                }
                v
            }
            Predicate::Cmp(c, op, lit) => {
                let column = self.column(c);
                self.by_partition(
                    c,
                    |v| Tri::exact(exact_cmp(&v, *op, lit)),
                    |i| self.stats_cmp(c, column, *op, lit, i),
                )
            }
            // A general expression is not judged from bounds: it may take any truth value.
            Predicate::Expr(_) => vec![ANY; n],
            Predicate::ColCmp(a, op, b) => {
                let maps: Vec<Tri> = self
                    .batch
                    .partition_maps()
                    .iter()
                    .map(
                        |m| match (partition_value_in(a, m), partition_value_in(b, m)) {
                            (Some(x), Some(y)) => Tri::exact(exact_cmp(&x, *op, &y)),
                            _ => ANY,
                        },
                    )
                    .collect();
                self.batch
                    .partition_codes()
                    .iter()
                    .map(|&code| maps.get(code as usize).copied().unwrap_or(ANY))
                    .collect()
            }
        }
    }

    /// A node over column `c`: judged by `exact` from the partition value where the file
    /// has one (once per distinct map), else by `from_stats` for the row.
    fn by_partition(
        &self,
        c: &BoundColumn,
        exact: impl Fn(Scalar) -> Tri,
        from_stats: impl Fn(usize) -> Tri,
    ) -> Vec<Tri> {
        if !c.partition {
            return (0..self.batch.len()).map(from_stats).collect();
        }
        let maps: Vec<Option<Tri>> = self
            .batch
            .partition_maps()
            .iter()
            .map(|m| partition_value_in(c, m).map(&exact))
            .collect();
        self.batch
            .partition_codes()
            .iter()
            .enumerate()
            .map(|(i, &code)| match maps.get(code as usize) {
                Some(Some(t)) => *t,
                _ => from_stats(i),
            })
            .collect()
    }

    /// [`null_possibilities`](super::null_possibilities) of row `i`, with `column` the
    /// statistics of `c` ([`Self::column`]).
    fn null_possibilities(
        &self,
        c: &BoundColumn,
        column: Option<&StatsColumn>,
        i: usize,
    ) -> (bool, bool) {
        if !self.present(i) || c.primitive() == Some(PrimitiveType::Variant) {
            return (true, true);
        }
        let nulls = column.and_then(|col| col.null_count.get(i));
        null_facts(nulls, self.stats().num_records(i))
    }

    /// [`stats_cmp`](super::stats_cmp) of row `i`, with `column` the statistics of `c`.
    fn stats_cmp(
        &self,
        c: &BoundColumn,
        column: Option<&StatsColumn>,
        op: CmpOp,
        lit: &Scalar,
        i: usize,
    ) -> Tri {
        let (may_null, non_null) = self.null_possibilities(c, column, i);
        let Some(ty) = c.primitive() else { return ANY };
        if !non_null {
            return Tri {
                n: may_null,
                ..NONE
            };
        }
        if !self.present(i) {
            return ANY;
        }
        let cmp_min = column.and_then(|col| compare_bound(&col.min, i, lit));
        let (cmp_max, all_lt) = match column.filter(|_| !no_upper_bound(ty)) {
            Some(col) => {
                let cmp_max = compare_bound(&col.max, i, lit);
                (cmp_max, above_max(&col.max, i, lit, cmp_max))
            }
            None => (None, false),
        };
        cmp_tri(op, may_null, cmp_min, cmp_max, all_lt, lit)
    }
}

/// Combines two per-row answers.
fn zip(mut a: Vec<Tri>, b: &[Tri], f: fn(Tri, Tri) -> Tri) -> Vec<Tri> {
    for (x, y) in a.iter_mut().zip(b) {
        *x = f(*x, *y);
    }
    a
}

/// [`above_max`](super::above_max) of row `i`'s maximum, given how it compares with `lit`:
/// for strings a literal that extends a (possibly truncated) maximum is not above it; for
/// the other representations the comparison is symmetric ([`Scalar::compare`] of two
/// numbers, dates or timestamps), so `lit > max` is `max < lit`.
fn above_max(max: &Bounds, i: usize, lit: &Scalar, cmp_max: Option<Ordering>) -> bool {
    match (max.values(), lit) {
        (BoundValues::String { .. }, Scalar::String(l)) => max
            .str(i)
            .is_some_and(|m| l.as_bytes() > m.as_bytes() && !l.starts_with(m)),
        _ => cmp_max == Some(Ordering::Less),
    }
}

/// How row `i`'s bound compares with `lit`: [`Scalar::compare`] of the bound as a scalar
/// (see [`Bounds::get`]) with `lit`, without building the scalar. `None` when the bound is
/// absent or the two do not compare.
fn compare_bound(b: &Bounds, i: usize, lit: &Scalar) -> Option<Ordering> {
    if !b.is_valid(i) {
        return None;
    }
    match b.values() {
        // `Scalar::compare` of a long with a literal: exactly as integers when the literal
        // is one, else as floating point.
        BoundValues::Long(v) => {
            let a = *v.get(i)?;
            match lit.as_i128() {
                Some(x) => Some(i128::from(a).cmp(&x)),
                None => (a as f64).partial_cmp(&lit.as_f64()?),
            }
        }
        BoundValues::Double(v) => v.get(i)?.partial_cmp(&lit.as_f64()?),
        BoundValues::Date(v) => match lit {
            Scalar::Date(x) => Some(v.get(i)?.cmp(x)),
            _ => None,
        },
        BoundValues::Timestamp(v) => match lit {
            Scalar::Timestamp(x) => Some(v.get(i)?.cmp(x)),
            _ => None,
        },
        BoundValues::TimestampNtz(v) => match lit {
            Scalar::TimestampNtz(x) => Some(v.get(i)?.cmp(x)),
            _ => None,
        },
        BoundValues::String { .. } => match lit {
            Scalar::String(x) => Some(b.str(i)?.as_bytes().cmp(x.as_bytes())),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The specialised comparison is `Scalar::compare` of the bound as a scalar, for
    /// literals of every kind against bounds of every representation.
    #[test]
    fn a_typed_bound_compares_as_its_scalar() {
        let lits = [
            Scalar::Byte(3),
            Scalar::Short(-4),
            Scalar::Integer(7),
            Scalar::Long(i64::MAX),
            Scalar::Float(2.5),
            Scalar::Double(f64::NAN),
            Scalar::Double(7.0),
            Scalar::Decimal {
                value: 700,
                precision: 5,
                scale: 2,
            },
            Scalar::Boolean(true),
            Scalar::String("m".into()),
            Scalar::String("".into()),
            Scalar::Date(19_000),
            Scalar::Timestamp(5),
            Scalar::TimestampNtz(5),
            Scalar::Binary(vec![1]),
        ];
        let stats = [
            Some(
                r#"{"minValues":{"l":7,"d":7.0,"s":"m","dt":"2022-01-08","t":"1970-01-01T00:00:00.000Z","n":"1970-01-01 00:00:00"}}"#,
            ),
            Some(
                r#"{"minValues":{"l":-9223372036854775808,"d":-1e300,"s":"mm","dt":"1900-01-01"}}"#,
            ),
            Some(r#"{"minValues":{}}"#),
        ];
        let cols: Vec<(Vec<String>, PrimitiveType)> = [
            ("l", PrimitiveType::Long),
            ("d", PrimitiveType::Double),
            ("s", PrimitiveType::String),
            ("dt", PrimitiveType::Date),
            ("t", PrimitiveType::Timestamp),
            ("n", PrimitiveType::TimestampNtz),
            ("l", PrimitiveType::Boolean),
        ]
        .into_iter()
        .map(|(n, t)| (vec![n.to_string()], t))
        .collect();
        let keys: Vec<ColumnKey<'_>> = cols.iter().map(|(p, t)| (&p[..], Some(*t))).collect();
        let built = StatsColumns::build(stats, &keys);
        let mut compared = 0;
        for (path, ty) in &cols {
            let col = built.column(path, Some(*ty)).unwrap();
            for i in 0..stats.len() {
                for lit in &lits {
                    let bound = col.min.get(i);
                    let expected = bound.as_ref().and_then(|b| b.compare(lit));
                    assert_eq!(
                        compare_bound(&col.min, i, lit),
                        expected,
                        "{path:?} {i} {lit:?}"
                    );
                    // `above_max` relies on the comparison being symmetric but for strings.
                    if let Some(b) = bound.filter(|_| !matches!(lit, Scalar::String(_))) {
                        assert_eq!(lit.compare(&b), expected.map(Ordering::reverse), "{lit:?}");
                    }
                    compared += usize::from(expected.is_some());
                }
            }
        }
        assert!(compared > 20, "{compared}");
    }
}
