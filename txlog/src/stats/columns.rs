//! Statistics as typed columns: the bounds, null counts and row counts of a run of files,
//! parsed once from their `stats` JSON, so that a predicate is judged over all the files
//! by a loop over plain vectors instead of by parsing JSON per file and per query.
//!
//! A [`StatsColumns`] holds, for rows `0..len` of a file list, whether each file's
//! statistics parsed, its `numRecords`, and for each column asked for a [`StatsColumn`]:
//! the lower and upper bounds as [`trusted_bound`] gives them (widened where writers store
//! them inexactly) and the null count. It grows in two directions without reparsing what
//! it holds: new columns for the rows it covers, new rows for the columns it has.
//!
//! Invariants:
//! 1. `present`, `num_records` and every column's `min`, `max` and `null_count` have `len`
//!    entries.
//! 2. Row `i` holds what [`FileStats::parse_columns`] of file `i`'s statistics (with the
//!    column's top-level name among those kept) says: `present[i]` exactly when it parses,
//!    and then the column's bounds through [`trusted_bound`] and its null count through
//!    [`FileStats::null_count`]; an absent or unusable bound is not valid.

use std::sync::Arc;

use crate::scalar::Scalar;
use crate::schema::PrimitiveType;

use super::{Bound, FileStats, trusted_bound};

/// The values of one end's bounds, in the representation the column's type has in
/// statistics ([`stat_scalar`](super::stat_scalar)'s variant for it). A row whose bound
/// is not valid holds a placeholder (zero, or the empty string).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum BoundValues {
    /// byte, short, integer and long columns ([`Scalar::Long`]).
    Long(Vec<i64>),
    /// date columns ([`Scalar::Date`]).
    Date(Vec<i32>),
    /// timestamp columns ([`Scalar::Timestamp`]).
    Timestamp(Vec<i64>),
    /// timestamp_ntz columns ([`Scalar::TimestampNtz`]).
    TimestampNtz(Vec<i64>),
    /// float, double and decimal columns ([`Scalar::Double`]).
    Double(Vec<f64>),
    /// string columns: row `i` is `text[ends[i - 1]..ends[i]]` (from 0 for the first row).
    String {
        /// The bounds back to back.
        text: String,
        /// Where each row's bound ends in `text`.
        ends: Vec<usize>,
    },
    /// A type whose statistics give no usable bounds (boolean, binary, variant, void,
    /// nested types): no row is valid.
    None,
}

/// One end's bounds of a column over a run of files (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct Bounds {
    values: BoundValues,
    valid: Vec<bool>,
}

impl Bounds {
    fn new(ty: Option<PrimitiveType>) -> Self {
        use PrimitiveType as P;
        let values = match ty {
            Some(P::Byte | P::Short | P::Integer | P::Long) => BoundValues::Long(Vec::new()),
            Some(P::Date) => BoundValues::Date(Vec::new()),
            Some(P::Timestamp) => BoundValues::Timestamp(Vec::new()),
            Some(P::TimestampNtz) => BoundValues::TimestampNtz(Vec::new()),
            Some(P::Float | P::Double | P::Decimal(..)) => BoundValues::Double(Vec::new()),
            Some(P::String) => BoundValues::String {
                text: String::new(),
                ends: Vec::new(),
            },
            Some(P::Boolean | P::Binary | P::Void | P::Variant) | None => BoundValues::None,
        };
        Bounds {
            values,
            valid: Vec::new(),
        }
    }

    /// Appends a row: `s` when it has this column's representation, else an invalid row.
    fn push(&mut self, s: Option<Scalar>) {
        let valid = match (&mut self.values, s) {
            (BoundValues::Long(v), Some(Scalar::Long(x)))
            | (BoundValues::Timestamp(v), Some(Scalar::Timestamp(x)))
            | (BoundValues::TimestampNtz(v), Some(Scalar::TimestampNtz(x))) => {
                v.push(x);
                true
            }
            (BoundValues::Date(v), Some(Scalar::Date(x))) => {
                v.push(x);
                true
            }
            (BoundValues::Double(v), Some(Scalar::Double(x))) => {
                v.push(x);
                true
            }
            (BoundValues::String { text, ends }, Some(Scalar::String(x))) => {
                text.push_str(&x);
                ends.push(text.len());
                true
            }
            (BoundValues::Long(v), _)
            | (BoundValues::Timestamp(v), _)
            | (BoundValues::TimestampNtz(v), _) => {
                v.push(0);
                false
            }
            (BoundValues::Date(v), _) => {
                v.push(0);
                false
            }
            (BoundValues::Double(v), _) => {
                v.push(0.0);
                false
            }
            (BoundValues::String { text, ends }, _) => {
                ends.push(text.len());
                false
            }
            (BoundValues::None, _) => false,
        };
        self.valid.push(valid);
    }

    /// The values, in the column's representation.
    pub fn values(&self) -> &BoundValues {
        &self.values
    }

    /// Whether row `i` has a bound.
    pub fn is_valid(&self, i: usize) -> bool {
        self.valid.get(i).copied().unwrap_or(false)
    }

    /// Row `i`'s string bound, if valid (string columns only).
    pub fn str(&self, i: usize) -> Option<&str> {
        let BoundValues::String { text, ends } = &self.values else {
            return None;
        };
        if !self.is_valid(i) {
            return None;
        }
        let start = match i.checked_sub(1) {
            Some(p) => *ends.get(p)?,
            None => 0,
        };
        text.get(start..*ends.get(i)?)
    }

    /// Row `i`'s bound as a scalar, if valid: what [`trusted_bound`] gave for it.
    pub fn get(&self, i: usize) -> Option<Scalar> {
        if !self.is_valid(i) {
            return None;
        }
        Some(match &self.values {
            BoundValues::Long(v) => Scalar::Long(*v.get(i)?),
            BoundValues::Date(v) => Scalar::Date(*v.get(i)?),
            BoundValues::Timestamp(v) => Scalar::Timestamp(*v.get(i)?),
            BoundValues::TimestampNtz(v) => Scalar::TimestampNtz(*v.get(i)?),
            BoundValues::Double(v) => Scalar::Double(*v.get(i)?),
            BoundValues::String { .. } => Scalar::String(self.str(i)?.to_string()),
            BoundValues::None => return None,
        })
    }

    /// Moves `other`'s rows after these (same representation; `other` is left empty).
    fn append(&mut self, other: &mut Bounds) {
        match (&mut self.values, &mut other.values) {
            (BoundValues::Long(a), BoundValues::Long(b))
            | (BoundValues::Timestamp(a), BoundValues::Timestamp(b))
            | (BoundValues::TimestampNtz(a), BoundValues::TimestampNtz(b)) => a.append(b),
            (BoundValues::Date(a), BoundValues::Date(b)) => a.append(b),
            (BoundValues::Double(a), BoundValues::Double(b)) => a.append(b),
            (
                BoundValues::String { text, ends },
                BoundValues::String {
                    text: more,
                    ends: more_ends,
                },
            ) => {
                let offset = text.len();
                text.push_str(more);
                ends.extend(more_ends.iter().map(|e| e + offset));
                more.clear();
                more_ends.clear();
            }
            // Columns are built from one template, so representations always agree.
            _ => {}
        }
        self.valid.append(&mut other.valid);
    }

    fn heap_bytes(&self) -> usize {
        use crate::memory::block;
        let values = match &self.values {
            BoundValues::Long(v) | BoundValues::Timestamp(v) | BoundValues::TimestampNtz(v) => {
                block(v.capacity() * 8)
            }
            BoundValues::Date(v) => block(v.capacity() * 4),
            BoundValues::Double(v) => block(v.capacity() * 8),
            BoundValues::String { text, ends } => {
                block(text.capacity()).saturating_add(block(ends.capacity() * 8))
            }
            BoundValues::None => 0,
        };
        values.saturating_add(block(self.valid.capacity()))
    }
}

/// Counts over a run of files (null counts, row counts), each known or not: a value and a
/// flag per row, 9 bytes instead of an `Option<i64>`'s 16.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counts {
    values: Vec<i64>,
    known: Vec<bool>,
}

impl Counts {
    /// Row `i`'s count, if known.
    pub fn get(&self, i: usize) -> Option<i64> {
        if self.known.get(i).copied().unwrap_or(false) {
            self.values.get(i).copied()
        } else {
            None
        }
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.known.len()
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.known.is_empty()
    }

    fn push(&mut self, v: Option<i64>) {
        self.values.push(v.unwrap_or(0));
        self.known.push(v.is_some());
    }

    fn with_capacity(n: usize) -> Self {
        Counts {
            values: Vec::with_capacity(n),
            known: Vec::with_capacity(n),
        }
    }

    fn append(&mut self, other: &mut Counts) {
        self.values.append(&mut other.values);
        self.known.append(&mut other.known);
    }

    fn heap_bytes(&self) -> usize {
        use crate::memory::block;
        block(self.values.capacity() * 8).saturating_add(block(self.known.capacity()))
    }
}

/// One column's statistics over a run of files.
#[derive(Debug, Clone, PartialEq)]
pub struct StatsColumn {
    path: Vec<String>,
    ty: Option<PrimitiveType>,
    /// Lower bounds ([`Bound::Min`]).
    pub min: Bounds,
    /// Upper bounds ([`Bound::Max`]).
    pub max: Bounds,
    /// Null counts.
    pub null_count: Counts,
}

impl StatsColumn {
    fn new(path: &[String], ty: Option<PrimitiveType>) -> Self {
        StatsColumn {
            path: path.to_vec(),
            ty,
            min: Bounds::new(ty),
            max: Bounds::new(ty),
            null_count: Counts::default(),
        }
    }

    /// The column's physical path.
    pub fn path(&self) -> &[String] {
        &self.path
    }

    /// The type its bounds were read as (`None`: a nested type, without bounds).
    pub fn ty(&self) -> Option<PrimitiveType> {
        self.ty
    }

    /// Moves `other`'s rows after these (a column of the same path and type).
    fn append(&mut self, other: &mut StatsColumn) {
        self.min.append(&mut other.min);
        self.max.append(&mut other.max);
        self.null_count.append(&mut other.null_count);
    }

    fn is(&self, path: &[String], ty: Option<PrimitiveType>) -> bool {
        self.ty == ty && self.path == path
    }

    fn push(&mut self, stats: Option<&FileStats>) {
        let bound = |end: Bound| {
            let s = stats?;
            let v = match end {
                Bound::Min => s.min(&self.path),
                Bound::Max => s.max(&self.path),
            }?;
            trusted_bound(v, self.ty?, end)
        };
        let (min, max) = (bound(Bound::Min), bound(Bound::Max));
        self.min.push(min);
        self.max.push(max);
        self.null_count
            .push(stats.and_then(|s| s.null_count(&self.path)));
    }

    fn heap_bytes(&self) -> usize {
        use crate::memory::HeapSize;
        self.min
            .heap_bytes()
            .saturating_add(self.max.heap_bytes())
            .saturating_add(self.null_count.heap_bytes())
            .saturating_add(self.path.heap_bytes())
    }
}

/// A column [`StatsColumns`] is asked for: its physical path and its type (`None` for a
/// nested type).
pub type ColumnKey<'a> = (&'a [String], Option<PrimitiveType>);

/// The statistics of a run of files as typed columns (see the module docs). Cheap to
/// clone: the columns are shared, and copied only when a shared one must grow.
#[derive(Debug, Clone, Default)]
pub struct StatsColumns {
    present: Arc<Vec<bool>>,
    num_records: Arc<Counts>,
    columns: Vec<Arc<StatsColumn>>,
}

impl StatsColumns {
    /// The statistics of the files whose `stats` are `stats`, for `columns`.
    pub fn build<'s>(
        stats: impl IntoIterator<Item = Option<&'s str>>,
        columns: &[ColumnKey<'_>],
    ) -> Self {
        let stats: Vec<Option<&str>> = stats.into_iter().collect();
        let mut out = StatsColumns::default();
        out.cover(stats.len(), |i| stats.get(i).copied().flatten(), columns);
        out
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.present.len()
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.present.is_empty()
    }

    /// Whether row `i`'s statistics are present and parse.
    pub fn present(&self, i: usize) -> bool {
        self.present.get(i).copied().unwrap_or(false)
    }

    /// Row `i`'s `numRecords`, if present.
    pub fn num_records(&self, i: usize) -> Option<i64> {
        self.num_records.get(i)
    }

    /// The column at `path` read as `ty`, if it was asked for.
    pub fn column(&self, path: &[String], ty: Option<PrimitiveType>) -> Option<&StatsColumn> {
        self.columns.iter().find(|c| c.is(path, ty)).map(|c| &**c)
    }

    /// Takes in what `other` (an extension of a copy of these) holds beyond these: all of
    /// it when it has more rows, else the columns these lack. Rows only grow while nothing
    /// else reads them, so two extensions made at once have the same rows and differ only
    /// in their columns: each query's columns end up kept.
    pub(crate) fn merge(&mut self, other: &StatsColumns) {
        if other.len() > self.len() {
            *self = other.clone();
        } else if other.len() == self.len() {
            for c in &other.columns {
                if self.column(&c.path, c.ty).is_none() {
                    self.columns.push(Arc::clone(c));
                }
            }
        }
    }

    /// Extends these statistics to rows `0..rows` and to every column of `columns`, where
    /// `stats(i)` is row `i`'s `stats` JSON: parses only what is not yet held (new columns
    /// for the rows already held, every column for the new rows), in parallel parts on
    /// rayon's current pool.
    pub(crate) fn cover<S: AsRef<str>>(
        &mut self,
        rows: usize,
        stats: impl Fn(usize) -> Option<S> + Sync,
        columns: &[ColumnKey<'_>],
    ) {
        let held = self.len();
        let mut new: Vec<StatsColumn> = Vec::new();
        for &(path, ty) in columns {
            if self.column(path, ty).is_none() && !new.iter().any(|c| c.is(path, ty)) {
                new.push(StatsColumn::new(path, ty));
            }
        }
        if !new.is_empty() {
            let part = parse_rows(0..held, &stats, &new);
            for (c, mut p) in new.iter_mut().zip(part.columns) {
                c.append(&mut p);
            }
            self.columns.extend(new.into_iter().map(Arc::new));
        }
        if rows > held {
            let empty: Vec<StatsColumn> = self
                .columns
                .iter()
                .map(|c| StatsColumn::new(&c.path, c.ty))
                .collect();
            let mut part = parse_rows(held..rows, &stats, &empty);
            Arc::make_mut(&mut self.present).extend(part.present);
            Arc::make_mut(&mut self.num_records).append(&mut part.num_records);
            for (c, mut p) in self.columns.iter_mut().zip(part.columns) {
                Arc::make_mut(c).append(&mut p);
            }
        }
    }

    /// The heap these columns hold: each shared part's block (its two counts and the
    /// value) and what the values own. A part shared with another view is counted whole
    /// by each.
    pub(crate) fn heap_bytes(&self) -> usize {
        use crate::memory::block;
        use std::mem::size_of;
        // An `Arc`'s block: the strong and weak counts, then the value.
        let arc = |value: usize| block(2 * size_of::<usize>() + value);
        self.columns.iter().fold(
            arc(size_of::<Vec<bool>>())
                .saturating_add(block(self.present.capacity()))
                .saturating_add(arc(size_of::<Counts>()))
                .saturating_add(self.num_records.heap_bytes())
                .saturating_add(block(
                    self.columns.capacity() * size_of::<Arc<StatsColumn>>(),
                )),
            |n, c| {
                n.saturating_add(arc(size_of::<StatsColumn>()))
                    .saturating_add(c.heap_bytes())
            },
        )
    }
}

/// Rows parsed for some columns: what [`parse_rows`] gives back.
struct Part {
    present: Vec<bool>,
    num_records: Counts,
    columns: Vec<StatsColumn>,
}

/// Rows per part parsed on one thread: large enough that a part's own work outweighs
/// handing it out and appending it.
const PART_ROWS: usize = 1 << 15;

/// The statistics of rows `range` for columns shaped as `empty` (empty columns), parsed in
/// parts of [`PART_ROWS`] on rayon's current pool and appended in row order.
fn parse_rows<S: AsRef<str>>(
    range: std::ops::Range<usize>,
    stats: &(impl Fn(usize) -> Option<S> + Sync),
    empty: &[StatsColumn],
) -> Part {
    use rayon::prelude::*;
    let names = top_names(empty.iter());
    let tops: Vec<&str> = names.iter().map(String::as_str).collect();
    let parse = |part: std::ops::Range<usize>| {
        let mut out = Part {
            present: Vec::with_capacity(part.len()),
            num_records: Counts::with_capacity(part.len()),
            columns: empty.to_vec(),
        };
        for i in part {
            let text = stats(i);
            let parsed = text
                .as_ref()
                .map(AsRef::as_ref)
                .and_then(|s| FileStats::parse_columns(s, &tops));
            out.present.push(parsed.is_some());
            out.num_records
                .push(parsed.as_ref().and_then(|p| p.num_records));
            for c in &mut out.columns {
                c.push(parsed.as_ref());
            }
        }
        out
    };
    if range.len() <= PART_ROWS {
        return parse(range);
    }
    let starts: Vec<usize> = range.clone().step_by(PART_ROWS).collect();
    let parts: Vec<Part> = starts
        .into_par_iter()
        .map(|start| parse(start..(start + PART_ROWS).min(range.end)))
        .collect();
    let mut whole = Part {
        present: Vec::with_capacity(range.len()),
        num_records: Counts::with_capacity(range.len()),
        columns: empty.to_vec(),
    };
    for mut part in parts {
        whole.present.append(&mut part.present);
        whole.num_records.append(&mut part.num_records);
        for (c, p) in whole.columns.iter_mut().zip(&mut part.columns) {
            c.append(p);
        }
    }
    whole
}

/// The top-level names of `columns`' paths, each once.
fn top_names<'c>(columns: impl Iterator<Item = &'c StatsColumn>) -> Vec<String> {
    let mut tops: Vec<String> = Vec::new();
    for c in columns {
        if let Some(top) = c.path.first()
            && !tops.contains(top)
        {
            tops.push(top.clone());
        }
    }
    tops
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Vec<String> {
        s.split('.').map(str::to_string).collect()
    }

    const STATS: [Option<&str>; 6] = [
        Some(
            r#"{"numRecords":3,"minValues":{"x":1,"s":"a","t":"2024-01-01T00:00:00.000Z","n":{"d":1.5}},"maxValues":{"x":5,"s":"c","t":"2024-01-01T00:00:00.000+01:00","n":{"d":2.5}},"nullCount":{"x":0,"s":1,"n":{"d":2}}}"#,
        ),
        Some(r#"{"numRecords":0}"#),
        None,
        Some("{broken"),
        Some(r#"{"minValues":{"x":"seven","s":7},"maxValues":{"x":9.0},"nullCount":{"x":-1}}"#),
        Some(r#"{"numRecords":2,"minValues":{"b":true},"maxValues":{"b":false}}"#),
    ];

    /// What one row should hold: the per-file parse, as data skipping reads it file by
    /// file.
    fn expected(
        stats: Option<&str>,
        path: &[String],
        ty: PrimitiveType,
        end: Bound,
    ) -> Option<Scalar> {
        let s = FileStats::parse(stats?)?;
        let v = match end {
            Bound::Min => s.min(path),
            Bound::Max => s.max(path),
        }?;
        trusted_bound(v, ty, end)
    }

    /// Every row holds what the per-file parse gives, whether the columns were asked for
    /// at once, one after the other, or as the rows arrived.
    #[test]
    fn columns_hold_what_each_file_parses_to() {
        let columns: Vec<(Vec<String>, PrimitiveType)> = vec![
            (p("x"), PrimitiveType::Long),
            (p("s"), PrimitiveType::String),
            (p("t"), PrimitiveType::Timestamp),
            (p("n.d"), PrimitiveType::Decimal(10, 2)),
            (p("b"), PrimitiveType::Boolean),
            (p("x"), PrimitiveType::Double),
        ];
        let keys: Vec<ColumnKey<'_>> = columns.iter().map(|(p, t)| (&p[..], Some(*t))).collect();
        let whole = StatsColumns::build(STATS, &keys);
        // Column by column, then rows in two steps.
        let mut grown = StatsColumns::default();
        grown.cover(2, |i| STATS[i], &keys[..1]);
        grown.cover(2, |i| STATS[i], &keys[1..3]);
        grown.cover(STATS.len(), |i| STATS[i], &keys[..3]);
        grown.cover(STATS.len(), |i| STATS[i], &keys);
        for built in [&whole, &grown] {
            assert_eq!(built.len(), STATS.len());
            for (i, s) in STATS.iter().enumerate() {
                let parsed = s.and_then(FileStats::parse);
                assert_eq!(built.present(i), parsed.is_some(), "row {i}");
                assert_eq!(
                    built.num_records(i),
                    parsed.as_ref().and_then(|p| p.num_records)
                );
                for (path, ty) in &columns {
                    let c = built.column(path, Some(*ty)).unwrap();
                    assert_eq!(
                        c.min.get(i),
                        expected(*s, path, *ty, Bound::Min),
                        "{path:?} {i}"
                    );
                    assert_eq!(
                        c.max.get(i),
                        expected(*s, path, *ty, Bound::Max),
                        "{path:?} {i}"
                    );
                    assert_eq!(
                        c.null_count.get(i),
                        parsed.as_ref().and_then(|p| p.null_count(path)),
                        "{path:?} {i}"
                    );
                }
            }
        }
        let x = whole.column(&p("x"), Some(PrimitiveType::Long)).unwrap();
        assert_eq!(x.max.get(4), Some(Scalar::Long(9)));
        assert_eq!(x.min.get(4), None);
        assert_eq!(x.null_count.get(4), Some(-1));
        let t = whole
            .column(&p("t"), Some(PrimitiveType::Timestamp))
            .unwrap();
        // Widened: +999 µs and a minute for the offset.
        assert_eq!(
            t.max.get(0),
            Some(Scalar::Timestamp(1_704_063_600_000_000 + 999 + 60_000_000))
        );
        let s = whole.column(&p("s"), Some(PrimitiveType::String)).unwrap();
        assert_eq!(
            (s.min.str(0), s.max.str(0), s.min.str(4)),
            (Some("a"), Some("c"), None)
        );
        assert!(whole.column(&p("s"), Some(PrimitiveType::Long)).is_none());
    }

    /// Rows parsed in parallel parts land in row order, strings included, whether the
    /// rows are new or a column is added for rows already held.
    #[test]
    fn parts_append_in_row_order() {
        let rows = 2 * PART_ROWS + 123;
        let json: Vec<Option<String>> = (0..rows)
            .map(|i| {
                (i % 7 != 3).then(|| {
                    format!(
                        r#"{{"numRecords":{i},"minValues":{{"x":{i},"s":"v{i}"}},"nullCount":{{"x":{}}}}}"#,
                        i % 5
                    )
                })
            })
            .collect();
        let (x, s) = (p("x"), p("s"));
        let keys = [
            (&x[..], Some(PrimitiveType::Long)),
            (&s[..], Some(PrimitiveType::String)),
        ];
        let whole = StatsColumns::build(json.iter().map(Option::as_deref), &keys);
        let mut grown = StatsColumns::default();
        grown.cover(PART_ROWS + 5, |i| json[i].as_deref(), &keys[..1]);
        grown.cover(rows, |i| json[i].as_deref(), &keys);
        for built in [&whole, &grown] {
            let (cx, cs) = (
                built.column(&x, Some(PrimitiveType::Long)).unwrap(),
                built.column(&s, Some(PrimitiveType::String)).unwrap(),
            );
            for i in 0..rows {
                let has = i % 7 != 3;
                let n = i64::try_from(i).unwrap();
                assert_eq!(built.present(i), has, "{i}");
                assert_eq!(built.num_records(i), has.then_some(n), "{i}");
                assert_eq!(cx.min.get(i), has.then_some(Scalar::Long(n)), "{i}");
                assert_eq!(cx.null_count.get(i), has.then_some(n % 5), "{i}");
                assert_eq!(
                    cs.min.str(i),
                    has.then(|| format!("v{i}")).as_deref(),
                    "{i}"
                );
                assert_eq!(cs.max.get(i), None);
            }
        }
    }

    /// Two extensions of one copy made at once keep both their columns; one with more
    /// rows is taken whole.
    #[test]
    fn merging_keeps_the_columns_of_both_extensions() {
        let (x, s) = (p("x"), p("s"));
        let (kx, ks) = (
            (&x[..], Some(PrimitiveType::Long)),
            (&s[..], Some(PrimitiveType::String)),
        );
        let mut kept = StatsColumns::default();
        kept.cover(2, |i| STATS[i], &[kx]);
        let (mut one, mut two) = (kept.clone(), kept.clone());
        one.cover(2, |i| STATS[i], &[ks]);
        two.cover(2, |i| STATS[i], &[kx]);
        kept.merge(&one);
        kept.merge(&two);
        assert!(kept.column(&x, kx.1).is_some() && kept.column(&s, ks.1).is_some());
        assert_eq!(kept.len(), 2);
        let mut longer = StatsColumns::default();
        longer.cover(STATS.len(), |i| STATS[i], &[kx]);
        kept.merge(&longer);
        assert_eq!(kept.len(), STATS.len());
        // A shorter one (a copy from before the rows grew) changes nothing.
        kept.merge(&one);
        assert_eq!(kept.len(), STATS.len());
        assert!(kept.column(&s, ks.1).is_none());
    }

    /// A view taken before the columns grow keeps what it held: growth copies a shared
    /// column instead of changing it under its reader.
    #[test]
    fn growing_leaves_a_shared_view_as_it_was() {
        let x = p("x");
        let keys = [(&x[..], Some(PrimitiveType::Long))];
        let mut cols = StatsColumns::default();
        cols.cover(1, |i| STATS[i], &keys);
        let view = cols.clone();
        cols.cover(STATS.len(), |i| STATS[i], &keys);
        assert_eq!(view.len(), 1);
        assert_eq!(
            view.column(&x, Some(PrimitiveType::Long))
                .unwrap()
                .null_count
                .len(),
            1
        );
        assert_eq!(cols.len(), STATS.len());
        assert!(cols.heap_bytes() > view.heap_bytes());
    }
}
