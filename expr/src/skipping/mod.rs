//! Data skipping: can any row of a file satisfy a predicate, judging only from the file's
//! partition values and statistics?
//!
//! Each sub-expression is summarised by which truth values it *may* take over the file's
//! rows (TRUE, FALSE, NULL); connectives combine those sets with SQL's three-valued logic
//! and a file is skipped only when TRUE is impossible. Every unknown (missing statistics,
//! an unparseable bound, a type without bounds) widens the set, so skipping can only err
//! towards reading a file.
//!
//! Bounds that writers are known to store inexactly are widened before use:
//! * timestamp statistics are truncated to milliseconds: the max gets +999 µs, and bounds
//!   written with a non-UTC offset (which Spark has truncated to whole minutes) get ±60 s;
//! * string statistics may be truncated prefixes: a value that extends the max is never
//!   considered above it;
//! * decimal statistics travel as binary floating point: both bounds get a relative margin;
//! * float columns may hold NaN, which statistics omit but which compares above everything,
//!   so the max never rules out `>`, `>=` or `!=`.
//!
//! What is judged comes from the predicate binding ([`bind`](crate::bind)): comparisons of
//! a column with a literal or a constant expression, `IS [NOT] NULL`, `IN`, `BETWEEN` (two
//! comparisons), `IS [NOT] DISTINCT FROM` a literal, and `column LIKE 'prefix…'` through
//! the range `[prefix, successor(prefix))` its matches lie in. Anything else, functions of
//! columns included, is a general expression that may take any truth value: it never
//! prunes.

use std::cmp::Ordering;
use std::sync::{Arc, OnceLock};

use crate::CmpOp;
use crate::bind::{BoundColumn, Predicate};
use alluvium_txlog::actions::OptStringMap;
use alluvium_txlog::partition::parse_partition_value;
use alluvium_txlog::replay::TableState;
use alluvium_txlog::scalar::Scalar;
use alluvium_txlog::schema::PrimitiveType;
use alluvium_txlog::stats::{Bound, FileStats, trusted_bound};
use alluvium_txlog::{FileBatch, FileRef};

mod columnar;

/// What skipping knows about one file.
#[derive(Debug, Clone, Copy)]
pub struct FileSummary<'a> {
    /// The file's partition values (physical column names).
    pub partition_values: &'a OptStringMap,
    /// The file's parsed statistics, if any.
    pub stats: Option<&'a FileStats>,
}

/// Judges files by their log entries (partition values and `stats` JSON) against one
/// predicate, or any of several: the one way a caller applies data skipping to a list of
/// files. The statistics the predicates need ([`StatsNeeded`]) are worked out once, and each
/// file's `stats` is parsed for those columns only.
///
/// Contract: [`keep`](Self::keep) keeps a file exactly when [`may_match`] answers true for
/// some predicate on a [`FileSummary`] of its partition values and its statistics parsed by
/// [`StatsNeeded::parse`]; it never skips a file one of the predicates may match.
#[derive(Debug, Clone)]
pub struct FileFilter<'p> {
    preds: &'p [Predicate],
    needed: StatsNeeded<'p>,
}

impl<'p> FileFilter<'p> {
    /// A filter keeping the files `pred` may match.
    pub fn new(pred: &'p Predicate) -> Self {
        FileFilter {
            preds: std::slice::from_ref(pred),
            needed: StatsNeeded::of(pred),
        }
    }

    /// A filter keeping the files any of `preds` may match ([`StatsNeeded::of_any`]: the
    /// row count is parsed even when each reads only partition columns). With no
    /// predicates it keeps nothing.
    pub fn any_of(preds: &'p [Predicate]) -> Self {
        FileFilter {
            preds,
            needed: StatsNeeded::of_any(preds),
        }
    }

    /// Judges one file: `None` when no predicate can match a row of it, else the file's
    /// statistics as far as the predicates need them (`Some(None)`: none needed, absent
    /// or unparseable), for callers that judge the file further (e.g. [`all_match`]).
    pub fn keep(
        &self,
        partition_values: &OptStringMap,
        stats: Option<&str>,
    ) -> Option<Option<FileStats>> {
        let stats = self.needed.parse(stats);
        let summary = FileSummary {
            partition_values,
            stats: stats.as_ref(),
        };
        self.preds
            .iter()
            .any(|p| may_match(p, &summary))
            .then_some(stats)
    }

    /// Whether some predicate may match a row of `file` ([`keep`](Self::keep)).
    pub fn may_match(&self, file: FileRef<'_>) -> bool {
        self.keep_file(file).is_some()
    }

    /// [`keep`](Self::keep) for a live file: its statistics text is only asked for
    /// (rebuilt, for a file the state keeps as columns) when a predicate reads them.
    fn keep_file(&self, file: FileRef<'_>) -> Option<Option<FileStats>> {
        let text = self
            .needed
            .columns
            .is_some()
            .then(|| file.stats())
            .flatten();
        self.keep(file.partition_values(), text.as_deref())
    }

    /// The live files of `state` a predicate may match, in [`TableState::files`] order:
    /// what [`matching`](Self::matching) keeps of `state.files()`, judged over all the
    /// files at once ([`columnar`]) from the typed statistics columns the state keeps
    /// ([`TableState::file_batches`]), so that no statistics JSON is parsed per query once
    /// the state has the predicates' columns. A kept file's statistics are parsed when a
    /// caller asks for them ([`FileMatch::stats`]).
    pub fn matching_in<'a>(&self, state: &'a TableState) -> StateMatches<'a> {
        let tops = self.needed.columns.as_deref();
        let keys = columnar::stats_keys(self.preds, tops.unwrap_or(&[]));
        let batches = state.file_batches(&keys);
        let kept = batches
            .iter()
            .map(|b| columnar::Rows::new(b, tops).may_match(self.preds))
            .collect();
        StateMatches {
            batches,
            kept,
            at: (0, 0),
            columns: tops.map(|t| t.iter().map(|c| c.to_string()).collect()),
        }
    }

    /// The files of `files` a predicate may match, in order, each with the statistics
    /// parsed to judge it.
    pub fn matching<'a, I>(&self, files: I) -> FileMatches<'a, 'p, I::IntoIter>
    where
        I: IntoIterator<Item = FileRef<'a>>,
    {
        FileMatches {
            filter: self.clone(),
            files: files.into_iter(),
        }
    }
}

/// A file kept by a [`FileFilter`]: the file and the statistics that judge it.
#[derive(Debug, Clone)]
pub struct FileMatch<'a> {
    /// The file.
    pub file: FileRef<'a>,
    /// Its statistics as far as the filter's predicates need them, parsed on first use
    /// unless judging the file parsed them already.
    stats: OnceLock<Option<FileStats>>,
    /// The top-level columns to parse them for (`None`: no statistics are needed).
    columns: Option<Arc<[String]>>,
}

impl FileMatch<'_> {
    /// The file's statistics as far as the filter's predicates need them
    /// ([`StatsNeeded::parse`]): `None` when none are needed, or they are absent or do not
    /// parse.
    pub fn stats(&self) -> Option<&FileStats> {
        self.stats
            .get_or_init(|| {
                let columns: Vec<&str> = self
                    .columns
                    .as_deref()?
                    .iter()
                    .map(String::as_str)
                    .collect();
                FileStats::parse_columns(&self.file.stats()?, &columns)
            })
            .as_ref()
    }

    /// What skipping knows about the file, to judge it further (e.g. with [`all_match`]
    /// for a predicate whose columns the filter's predicate reads too).
    pub fn summary(&self) -> FileSummary<'_> {
        FileSummary {
            partition_values: self.file.partition_values(),
            stats: self.stats(),
        }
    }
}

/// The live files of a state a [`FileFilter`] keeps: see [`FileFilter::matching_in`].
#[derive(Debug)]
pub struct StateMatches<'a> {
    batches: Vec<FileBatch<'a>>,
    /// Per batch, per row: kept.
    kept: Vec<Vec<bool>>,
    /// The next (batch, row) to look at.
    at: (usize, usize),
    columns: Option<Arc<[String]>>,
}

impl<'a> Iterator for StateMatches<'a> {
    type Item = FileMatch<'a>;

    fn next(&mut self) -> Option<FileMatch<'a>> {
        loop {
            let (b, r) = self.at;
            let (batch, kept) = (self.batches.get(b)?, self.kept.get(b)?);
            let Some(&keep) = kept.get(r) else {
                self.at = (b + 1, 0);
                continue;
            };
            self.at = (b, r + 1);
            if !keep {
                continue;
            }
            if let Some(file) = batch.file(r) {
                return Some(FileMatch {
                    file,
                    stats: OnceLock::new(),
                    columns: self.columns.clone(),
                });
            }
        }
    }
}

/// The files a [`FileFilter`] keeps: see [`FileFilter::matching`].
#[derive(Debug, Clone)]
pub struct FileMatches<'a, 'p, I: Iterator<Item = FileRef<'a>>> {
    filter: FileFilter<'p>,
    files: I,
}

impl<'a, I: Iterator<Item = FileRef<'a>>> Iterator for FileMatches<'a, '_, I> {
    type Item = FileMatch<'a>;

    fn next(&mut self) -> Option<FileMatch<'a>> {
        for file in self.files.by_ref() {
            if let Some(stats) = self.filter.keep_file(file) {
                return Some(FileMatch {
                    file,
                    stats: OnceLock::from(stats),
                    columns: None,
                });
            }
        }
        None
    }
}

/// Which truth values an expression may take over a file's rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Tri {
    t: bool,
    f: bool,
    n: bool,
}

const ANY: Tri = Tri {
    t: true,
    f: true,
    n: true,
};
const NONE: Tri = Tri {
    t: false,
    f: false,
    n: false,
};

impl Tri {
    fn exact(v: Option<bool>) -> Tri {
        match v {
            Some(true) => Tri {
                t: true,
                f: false,
                n: false,
            },
            Some(false) => Tri {
                t: false,
                f: true,
                n: false,
            },
            None => Tri {
                t: false,
                f: false,
                n: true,
            },
        }
    }

    fn and(a: Tri, b: Tri) -> Tri {
        Tri {
            t: a.t && b.t,
            f: a.f || b.f,
            n: (a.n && (b.t || b.n)) || (b.n && (a.t || a.n)),
        }
    }

    fn or(a: Tri, b: Tri) -> Tri {
        Tri {
            t: a.t || b.t,
            f: a.f && b.f,
            n: (a.n && (b.f || b.n)) || (b.n && (a.f || a.n)),
        }
    }

    fn not(a: Tri) -> Tri {
        Tri {
            t: a.f,
            f: a.t,
            n: a.n,
        }
    }
}

/// Which statistics judging a predicate needs, worked out once per predicate and applied
/// to every file: only the columns it reads ([`Predicate::stats_columns`]), none when it
/// reads only partition columns (the partition values decide then).
#[derive(Debug, Clone)]
pub struct StatsNeeded<'p> {
    /// Top-level physical names to keep; `None`: no statistics are parsed.
    columns: Option<Vec<&'p str>>,
}

impl<'p> StatsNeeded<'p> {
    /// What judging `pred` needs.
    pub fn of(pred: &'p Predicate) -> Self {
        StatsNeeded {
            columns: (!pred.only_partition_columns()).then(|| pred.stats_columns()),
        }
    }

    /// What judging any of `preds` needs: the columns of all of them (the row count too,
    /// even when each reads only partition columns).
    pub fn of_any(preds: &'p [Predicate]) -> Self {
        let mut columns: Vec<&str> = Vec::new();
        for c in preds.iter().flat_map(Predicate::stats_columns) {
            if !columns.contains(&c) {
                columns.push(c);
            }
        }
        StatsNeeded {
            columns: Some(columns),
        }
    }

    /// A file's statistics (its `stats` JSON) as far as they are needed; unparseable or
    /// absent statistics are unknown (`None`).
    pub fn parse(&self, stats: Option<&str>) -> Option<FileStats> {
        FileStats::parse_columns(stats?, self.columns.as_deref()?)
    }
}

/// Returns false only if no row of the file can satisfy `pred`.
pub fn may_match(pred: &Predicate, file: &FileSummary<'_>) -> bool {
    if file.stats.and_then(|s| s.num_records) == Some(0) {
        // A file without rows matches nothing.
        return false;
    }
    eval(pred, file).t
}

/// Returns true only if every row of the file satisfies `pred` (TRUE: neither FALSE nor
/// NULL is possible), judging from partition values and statistics; any unknown answers
/// false. Bounds that are not tight (`tightBounds:false`, a file with a deletion vector)
/// still enclose every live row, so the answer stays sound for them.
pub fn all_match(pred: &Predicate, file: &FileSummary<'_>) -> bool {
    if file.stats.and_then(|s| s.num_records) == Some(0) {
        return true;
    }
    let tri = eval(pred, file);
    !tri.f && !tri.n
}

fn eval(p: &Predicate, file: &FileSummary<'_>) -> Tri {
    match p {
        Predicate::Const(v) => Tri::exact(*v),
        Predicate::And(a, b) => Tri::and(eval(a, file), eval(b, file)),
        Predicate::Or(a, b) => Tri::or(eval(a, file), eval(b, file)),
        Predicate::Not(a) => Tri::not(eval(a, file)),
        Predicate::Column(c) => match partition_value(c, file) {
            Some(v) => Tri::exact(match v {
                Scalar::Boolean(b) => Some(b),
                _ => None,
            }),
            None => column_tri(c, file),
        },
        Predicate::IsNull { column: c, negated } => {
            let tri = match partition_value(c, file) {
                Some(v) => Tri::exact(Some(v.is_null())),
                None => {
                    let (nulls, non_nulls) = null_possibilities(c, file);
                    Tri {
                        t: nulls,
                        f: non_nulls,
                        n: false,
                    }
                }
            };
            if *negated { Tri::not(tri) } else { tri }
        }
        Predicate::Cmp(c, op, lit) => match partition_value(c, file) {
            Some(v) => Tri::exact(exact_cmp(&v, *op, lit)),
            None => stats_cmp(c, *op, lit, file),
        },
        // A general expression is not judged from bounds: it may take any truth value.
        Predicate::Expr(_) => ANY,
        Predicate::ColCmp(a, op, b) => match (partition_value(a, file), partition_value(b, file)) {
            (Some(x), Some(y)) => Tri::exact(exact_cmp(&x, *op, &y)),
            _ => ANY,
        },
    }
}

/// The exact value of a partition column in this file (`None` for data columns or values
/// that do not parse, which then count as unknown).
fn partition_value(c: &BoundColumn, file: &FileSummary<'_>) -> Option<Scalar> {
    partition_value_in(c, file.partition_values)
}

/// [`partition_value`] from a file's partition values.
fn partition_value_in(c: &BoundColumn, partition_values: &OptStringMap) -> Option<Scalar> {
    if !c.partition {
        return None;
    }
    let key = c.physical_path.first()?;
    let raw = partition_values.get(key).or_else(|| {
        partition_values
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v)
    })?;
    parse_partition_value(key, raw, c.primitive()?).ok()
}

fn exact_cmp(v: &Scalar, op: CmpOp, lit: &Scalar) -> Option<bool> {
    let ord = if let (Some(a), Some(b)) = (float_value(v), float_value(lit)) {
        // Spark's total order for floating point: NaN == NaN and NaN above everything.
        Some(spark_float_cmp(a, b))
    } else {
        v.compare(lit)
    };
    let ord = ord?;
    Some(match op {
        CmpOp::Eq => ord == Ordering::Equal,
        CmpOp::Ne => ord != Ordering::Equal,
        CmpOp::Lt => ord == Ordering::Less,
        CmpOp::Le => ord != Ordering::Greater,
        CmpOp::Gt => ord == Ordering::Greater,
        CmpOp::Ge => ord != Ordering::Less,
    })
}

fn float_value(v: &Scalar) -> Option<f64> {
    match v {
        Scalar::Float(f) => Some(f64::from(*f)),
        Scalar::Double(d) => Some(*d),
        _ => None,
    }
}

fn spark_float_cmp(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

/// (may have null rows, may have non-null rows) for a data column.
///
/// A variant column's statistics are never trusted, its null counts included: writers
/// disagree on whether a variant holding JSON `null` counts as null.
fn null_possibilities(c: &BoundColumn, file: &FileSummary<'_>) -> (bool, bool) {
    let Some(stats) = file
        .stats
        .filter(|_| c.primitive() != Some(PrimitiveType::Variant))
    else {
        return (true, true);
    };
    null_facts(stats.null_count(&c.physical_path), stats.num_records)
}

/// (may have null rows, may have non-null rows) from a column's null count and the file's
/// row count, each `None` when unknown.
fn null_facts(nulls: Option<i64>, records: Option<i64>) -> (bool, bool) {
    let may_null = nulls != Some(0);
    let all_null = matches!((nulls, records), (Some(n), Some(r)) if n == r);
    (may_null, !all_null)
}

fn column_tri(c: &BoundColumn, file: &FileSummary<'_>) -> Tri {
    let (may_null, non_null) = null_possibilities(c, file);
    boolean_tri(may_null, non_null)
}

/// What a boolean data column may be, from its null possibilities: any non-null value
/// may be either.
fn boolean_tri(may_null: bool, non_null: bool) -> Tri {
    Tri {
        t: non_null,
        f: non_null,
        n: may_null,
    }
}

/// Bounds of a data column: (min, max), each widened as described in the module docs
/// ([`trusted_bound`]).
fn bounds(
    c: &BoundColumn,
    ty: PrimitiveType,
    stats: &FileStats,
) -> (Option<Scalar>, Option<Scalar>) {
    let min = stats
        .min(&c.physical_path)
        .and_then(|v| trusted_bound(v, ty, Bound::Min));
    let max = stats
        .max(&c.physical_path)
        .and_then(|v| trusted_bound(v, ty, Bound::Max));
    (min, max)
}

/// `lit > max` for certain, taking truncated string maxima into account.
fn above_max(lit: &Scalar, max: &Scalar) -> bool {
    if let (Scalar::String(l), Scalar::String(m)) = (lit, max) {
        return l.as_bytes() > m.as_bytes() && !l.starts_with(m.as_str());
    }
    lit.compare(max) == Some(Ordering::Greater)
}

fn stats_cmp(c: &BoundColumn, op: CmpOp, lit: &Scalar, file: &FileSummary<'_>) -> Tri {
    let (may_null, non_null) = null_possibilities(c, file);
    let Some(ty) = c.primitive() else { return ANY };
    if !non_null {
        return Tri {
            n: may_null,
            ..NONE
        };
    }
    let Some(stats) = file.stats else { return ANY };
    let (min, mut max) = bounds(c, ty, stats);
    if no_upper_bound(ty) {
        max = None;
    }
    let cmp_min = min.as_ref().and_then(|m| m.compare(lit));
    let cmp_max = max.as_ref().and_then(|m| m.compare(lit));
    let all_lt = max.as_ref().is_some_and(|m| above_max(lit, m));
    cmp_tri(op, may_null, cmp_min, cmp_max, all_lt, lit)
}

/// NaN rows are absent from statistics yet compare above every number: for a float
/// column the true upper bound is unknown.
fn no_upper_bound(ty: PrimitiveType) -> bool {
    matches!(ty, PrimitiveType::Float | PrimitiveType::Double)
}

/// What `column op lit` may be over a file's non-null values, from how its bounds compare
/// with `lit` (`None`: unknown) and whether `lit` is above the maximum for certain
/// ([`above_max`]); NULL is possible when the file may hold nulls.
fn cmp_tri(
    op: CmpOp,
    may_null: bool,
    cmp_min: Option<Ordering>,
    cmp_max: Option<Ordering>,
    all_lt: bool,
    lit: &Scalar,
) -> Tri {
    let is_string = matches!(lit, Scalar::String(_));
    // Facts about every non-null value v of the file.
    let all_gt = cmp_min == Some(Ordering::Greater);
    let all_ge = matches!(cmp_min, Some(Ordering::Greater | Ordering::Equal));
    let all_le = all_lt || (cmp_max == Some(Ordering::Equal) && !is_string);
    let (t, f) = match op {
        CmpOp::Eq => (!(all_gt || all_lt), !(all_ge && all_le)),
        CmpOp::Ne => (!(all_ge && all_le), !(all_gt || all_lt)),
        CmpOp::Lt => (!all_ge, !all_lt),
        CmpOp::Le => (!all_gt, !all_le),
        CmpOp::Gt => (!all_le, !all_gt),
        CmpOp::Ge => (!all_lt, !all_ge),
    };
    Tri { t, f, n: may_null }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{bind, parse_expr};
    use alluvium_txlog::actions::Add;
    use alluvium_txlog::column_mapping::ColumnMappingMode;
    use alluvium_txlog::schema::StructType;

    fn schema() -> StructType {
        StructType::from_json(
            r#"{"type":"struct","fields":[
            {"name":"x","type":"long","nullable":true,"metadata":{}},
            {"name":"s","type":"string","nullable":true,"metadata":{}},
            {"name":"ts","type":"timestamp","nullable":true,"metadata":{}},
            {"name":"f","type":"double","nullable":true,"metadata":{}},
            {"name":"d","type":"decimal(38,18)","nullable":true,"metadata":{}},
            {"name":"p","type":"string","nullable":true,"metadata":{}},
            {"name":"v","type":"variant","nullable":true,"metadata":{}}
        ]}"#,
        )
        .unwrap()
    }

    /// `filter` bound to `schema()` with `p` the partition column.
    fn bound(filter: &str) -> Predicate {
        bind(
            &parse_expr(filter).unwrap(),
            &schema(),
            &["p".into()],
            ColumnMappingMode::None,
        )
        .unwrap()
    }

    fn check(filter: &str, pv: &[(&str, Option<&str>)], stats: Option<&str>) -> bool {
        let pred = bound(filter);
        let pv: OptStringMap = pv
            .iter()
            .map(|(k, v)| (k.to_string(), v.map(str::to_string)))
            .collect();
        // Only the predicate's columns are parsed, as every pruning caller does: a column
        // missing from `stats_columns` would lose its bounds and change answers below.
        if let Some(s) = stats {
            FileStats::parse(s).unwrap();
        }
        let stats = StatsNeeded::of(&pred).parse(stats);
        may_match(
            &pred,
            &FileSummary {
                partition_values: &pv,
                stats: stats.as_ref(),
            },
        )
    }

    /// Files of every kind the filter must tell apart: bounds on either side of the
    /// predicates below, an empty file, null counts, absent and unparseable statistics,
    /// statistics of columns no predicate reads, NULL and present partition values.
    fn files() -> Vec<Add> {
        let stats: [Option<&str>; 9] = [
            Some(
                r#"{"numRecords":3,"minValues":{"x":1,"s":"a"},"maxValues":{"x":5,"s":"c"},"nullCount":{"x":0,"s":1}}"#,
            ),
            Some(
                r#"{"numRecords":3,"minValues":{"x":10,"s":"m"},"maxValues":{"x":20,"s":"z"},"nullCount":{"x":0,"s":0}}"#,
            ),
            Some(r#"{"numRecords":0}"#),
            Some(
                r#"{"numRecords":2,"minValues":{"f":1.5},"maxValues":{"f":2.5},"nullCount":{"x":2}}"#,
            ),
            Some(r#"{"numRecords":4,"minValues":{"x":7},"maxValues":{"x":7},"nullCount":{"x":4}}"#),
            Some(r#"{"numRecords":1,"minValues":{"x":-3,"d":1.0},"maxValues":{"x":-3,"d":2.0}}"#),
            Some("{not json"),
            None,
            Some(
                r#"{"numRecords":5,"minValues":{"x":3,"ts":"2024-01-01T00:00:00.000Z"},"maxValues":{"x":8,"ts":"2024-01-02T00:00:00.000Z"},"nullCount":{"x":0}}"#,
            ),
        ];
        let partitions: [Option<&str>; 3] = [Some("a"), Some("b"), None];
        let mut out = Vec::new();
        for (i, s) in stats.iter().enumerate() {
            for p in partitions {
                out.push(Add {
                    path: format!("f{i}-{p:?}.parquet"),
                    partition_values: [("p".to_string(), p.map(str::to_string))]
                        .into_iter()
                        .collect(),
                    stats: s.map(str::to_string),
                    ..Add::default()
                });
            }
        }
        out
    }

    const FILTERS: [&str; 10] = [
        "x = 3",
        "x > 6 AND p = 'a'",
        "x < 0 OR s >= 'n'",
        "x IS NULL",
        "x IS NOT NULL AND p IS NULL",
        "s LIKE 'b%'",
        "f > 2.0 OR x IN (7, 20)",
        "p = 'b'",
        "p = 'a' OR p IS NULL",
        "NOT (x BETWEEN 2 AND 9)",
    ];

    /// The selective parse of [`FileFilter`] keeps exactly the files that `may_match`
    /// keeps on the full parse ([`FileStats::parse`]), and what it hands back judges
    /// `all_match` as the full parse does. Predicates of partition columns only consult no
    /// statistics (the values decide), so their reference is a summary without them.
    #[test]
    fn file_filter_keeps_what_the_full_parse_may_match() {
        let files = files();
        for filter in FILTERS {
            let pred = bound(filter);
            let partition_only = pred.only_partition_columns();
            let expected: Vec<&str> = files
                .iter()
                .filter(|a| {
                    let full = a.stats.as_deref().and_then(FileStats::parse);
                    let summary = FileSummary {
                        partition_values: &a.partition_values,
                        stats: full.as_ref().filter(|_| !partition_only),
                    };
                    may_match(&pred, &summary)
                })
                .map(|a| a.path.as_str())
                .collect();
            let filter_ = FileFilter::new(&pred);
            let kept: Vec<FileMatch<'_>> =
                filter_.matching(files.iter().map(FileRef::from)).collect();
            let paths: Vec<&str> = kept.iter().map(|m| m.file.path()).collect();
            assert_eq!(paths, expected, "{filter}");
            assert!(
                !expected.is_empty() && expected.len() < files.len(),
                "{filter}"
            );
            for m in &kept {
                assert!(filter_.may_match(m.file), "{filter}");
                let full = m.file.stats().as_deref().and_then(FileStats::parse);
                let full = FileSummary {
                    partition_values: m.file.partition_values(),
                    stats: full.as_ref().filter(|_| !partition_only),
                };
                assert_eq!(
                    all_match(&pred, &m.summary()),
                    all_match(&pred, &full),
                    "{filter} on {}",
                    m.file.path()
                );
            }
        }
    }

    /// `any_of` keeps a file when any predicate may match it, on the union of their
    /// columns; with no predicates it keeps nothing.
    #[test]
    fn file_filter_of_several_predicates_keeps_the_union() {
        let files = files();
        let preds: Vec<Predicate> = ["x = 3", "p = 'b'", "s >= 'n'"]
            .into_iter()
            .map(bound)
            .collect();
        let any = FileFilter::any_of(&preds);
        for a in &files {
            let one_by_one = preds.iter().any(|p| FileFilter::new(p).may_match(a.into()));
            // The row count is parsed for `p = 'b'` too: an empty file matches nothing.
            let empty = a.stats.as_deref() == Some(r#"{"numRecords":0}"#);
            assert_eq!(any.may_match(a.into()), one_by_one && !empty, "{}", a.path);
        }
        assert_eq!(
            FileFilter::any_of(&[])
                .matching(files.iter().map(FileRef::from))
                .count(),
            0
        );
    }

    #[test]
    fn stats_columns_are_the_data_roots_a_predicate_reads() {
        let cols = |filter: &str| {
            let pred = bound(filter);
            let mut c: Vec<String> = pred
                .stats_columns()
                .into_iter()
                .map(str::to_string)
                .collect();
            c.sort();
            (c, StatsNeeded::of(&pred).parse(Some(S)).is_some())
        };
        assert_eq!(cols("x = 1 AND p = 'a'"), (vec!["x".to_string()], true));
        assert_eq!(
            cols("x > f OR s IS NULL OR x + 1 = 3"),
            (vec!["f".into(), "s".into(), "x".into()], true)
        );
        // Partition columns alone: their values decide, no statistics are parsed.
        assert_eq!(cols("p = 'a'"), (vec![], false));
    }

    const S: &str = r#"{"numRecords":10,"minValues":{"x":5,"s":"apple","ts":"2021-01-01T00:00:00.000Z","f":1.0,"d":1.5},"maxValues":{"x":10,"s":"melon","ts":"2021-01-01T00:00:01.123Z","f":2.0,"d":2.5},"nullCount":{"x":0,"s":2,"ts":0,"f":0,"d":0}}"#;

    #[test]
    fn ranges_prune_and_keep() {
        let p = &[("p", Some("a"))];
        assert!(check("x = 7", p, Some(S)));
        assert!(!check("x = 11", p, Some(S)));
        assert!(!check("x < 5", p, Some(S)));
        assert!(check("x <= 5", p, Some(S)));
        assert!(!check("x > 10", p, Some(S)));
        assert!(check("x >= 10", p, Some(S)));
        assert!(check("x != 5", p, Some(S)));
        assert!(!check("NOT (x >= 5)", p, Some(S)));
        assert!(check("x IS NOT NULL", p, Some(S)));
        assert!(!check("x IS NULL", p, Some(S)));
        assert!(check("s IS NULL", p, Some(S)));
        assert!(!check("x IN (1, 2, 30)", p, Some(S)));
        assert!(check("x IN (1, 7)", p, Some(S)));
        assert!(!check("x = 11 AND s = 'banana'", p, Some(S)));
        assert!(check("x = 11 OR s = 'banana'", p, Some(S)));
    }

    /// `LIKE 'prefix%'` prunes as the range of strings starting with the prefix, also
    /// against a truncated maximum; BETWEEN as its two comparisons; a function of a column
    /// never prunes.
    #[test]
    fn like_prefixes_and_between_prune_functions_never_do() {
        let p = &[("p", Some("apple"))];
        // S: s from "apple" to "melon", 2 nulls; x from 5 to 10.
        assert!(check("s LIKE 'b%'", p, Some(S)));
        assert!(check("s LIKE 'apple%'", p, Some(S)));
        assert!(check("s LIKE 'melon%'", p, Some(S)));
        assert!(!check("s LIKE 'z%'", p, Some(S)));
        assert!(!check("s LIKE 'aa%'", p, Some(S)));
        assert!(!check("s LIKE 'n_%'", p, Some(S)));
        assert!(check("s LIKE '%z'", p, Some(S)));
        assert!(check("s ILIKE 'Z%'", p, Some(S)));
        assert!(check("s NOT LIKE 'z%'", p, Some(S)));
        // A truncated maximum: "melonz" may stand for "melonzzz..." values.
        let cut = r#"{"numRecords":1,"minValues":{"s":"melon"},"maxValues":{"s":"melonz"},"nullCount":{"s":0}}"#;
        assert!(check("s LIKE 'melonzz%'", &[], Some(cut)));
        assert!(!check("s LIKE 'melop%'", &[], Some(cut)));
        // Partition values are judged exactly.
        assert!(check("p LIKE 'app%'", p, None));
        assert!(!check("p LIKE 'b%'", p, None));
        // Only the range is judged: the LIKE itself may not match ('apple' is not 'app_'),
        // and the file is kept, which is safe.
        assert!(check("p LIKE 'app_'", p, None));
        // BETWEEN is two comparisons.
        assert!(check("x BETWEEN 1 AND 5", p, Some(S)));
        assert!(!check("x BETWEEN 11 AND 20", p, Some(S)));
        assert!(!check("x BETWEEN 1 AND 4", p, Some(S)));
        assert!(check("x NOT BETWEEN 6 AND 9", p, Some(S)));
        assert!(!check("x NOT BETWEEN 0 AND 20", p, Some(S)));
        // IS DISTINCT FROM a literal is judged like the comparison it implies.
        assert!(!check("x IS NOT DISTINCT FROM 11", p, Some(S)));
        assert!(check("x IS DISTINCT FROM 11", p, Some(S)));
        assert!(!check("x IS NOT DISTINCT FROM NULL", p, Some(S)));
        // Functions of a column: no bounds are assumed, the file is kept.
        for kept in [
            "lower(s) = 'zzz'",
            "upper(s) LIKE 'Z%'",
            "length(s) > 100",
            "abs(x) > 100",
            "x + 0 > 100",
            "substring(s, 1, 1) = 'z'",
            "starts_with(s, 'z')",
            "greatest(x, 0) > 100",
            "date_trunc('DAY', ts) > TIMESTAMP '2030-01-01'",
            "YEAR(ts) = 1999",
        ] {
            assert!(check(kept, p, Some(S)), "{kept}");
        }
        // Constants are computed: the comparison then prunes like a literal.
        assert!(!check("x > 5 * 2", p, Some(S)));
        assert!(!check(
            "ts > TIMESTAMP '2021-01-02T00:00:00Z' - INTERVAL 1 HOUR",
            p,
            Some(S)
        ));
        assert!(check(
            "ts > TIMESTAMP '2021-01-02T00:00:00Z' - INTERVAL 1 DAY",
            p,
            Some(S)
        ));
    }

    #[test]
    fn partitions_are_exact() {
        assert!(!check("p = 'b'", &[("p", Some("a"))], Some(S)));
        assert!(check("p = 'a'", &[("p", Some("a"))], None));
        assert!(!check("p = 'a'", &[("p", None)], None));
        assert!(check("p IS NULL", &[("p", Some(""))], None));
        assert!(!check("NOT (p = 'a')", &[("p", Some("a"))], None));
        assert!(
            !check("NOT (p = 'a')", &[("p", None)], None),
            "NOT NULL is NULL, not TRUE"
        );
    }

    #[test]
    fn unknowns_never_prune() {
        assert!(check("x = 100", &[], None));
        assert!(check("x = 100", &[], Some(r#"{"numRecords":3}"#)));
        assert!(check(
            "x = 100",
            &[],
            Some(r#"{"numRecords":3,"minValues":{"x":"garbage"}}"#)
        ));
        assert!(!check("x = 100", &[], Some(r#"{"numRecords":0}"#)));
        // All-null column: comparisons cannot be true, IS NULL can.
        let all_null = r#"{"numRecords":3,"nullCount":{"x":3}}"#;
        assert!(!check("x = 1", &[], Some(all_null)));
        assert!(check("x IS NULL", &[], Some(all_null)));
        assert!(!check("NOT (x = 1)", &[], Some(all_null)));
    }

    #[test]
    fn variant_statistics_are_never_trusted() {
        let no_nulls = r#"{"numRecords":3,"nullCount":{"v":0}}"#;
        let all_null = r#"{"numRecords":3,"nullCount":{"v":3}}"#;
        assert!(check("v IS NULL", &[], Some(no_nulls)));
        assert!(check("v IS NOT NULL", &[], Some(all_null)));
    }

    #[test]
    fn truncated_bounds_are_widened() {
        // Timestamp max truncated to ms: a row at .123999 must survive.
        assert!(check("ts = '2021-01-01T00:00:01.123999Z'", &[], Some(S)));
        assert!(!check("ts = '2021-01-01T00:00:01.124001Z'", &[], Some(S)));
        // String max is a truncated prefix: values extending it may exist.
        assert!(check("s = 'melonball'", &[], Some(S)));
        assert!(check("s > 'melon'", &[], Some(S)));
        assert!(!check(
            "s > 'meloo'",
            &[],
            Some(r#"{"numRecords":1,"maxValues":{"s":"melonz"}}"#)
        ));
        assert!(check(
            "s > 'melonzz'",
            &[],
            Some(r#"{"numRecords":1,"maxValues":{"s":"melonz"}}"#)
        ));
        assert!(!check("s > 'n'", &[], Some(S)));
        // NaN may hide above any float max.
        assert!(check("f > 5", &[], Some(S)));
        assert!(!check("f < 0.5", &[], Some(S)));
        assert!(check(
            "NOT (f = 1.0)",
            &[],
            Some(
                r#"{"numRecords":2,"minValues":{"f":1.0},"maxValues":{"f":1.0},"nullCount":{"f":0}}"#
            )
        ));
        assert!(!check(
            "NOT (x = 1)",
            &[],
            Some(r#"{"numRecords":2,"minValues":{"x":1},"maxValues":{"x":1},"nullCount":{"x":0}}"#)
        ));
        // Decimal bounds are approximate.
        assert!(check("d = 2.5", &[], Some(S)));
        assert!(!check("d = 2.6", &[], Some(S)));
        // Offsets Spark truncated to minutes widen both bounds by a minute.
        let offset = r#"{"numRecords":1,"minValues":{"ts":"1900-01-01T00:00:00.000-07:52"},"maxValues":{"ts":"1900-01-01T00:00:00.000-07:52"},"nullCount":{"ts":0}}"#;
        assert!(check("ts = '1900-01-01T07:52:58Z'", &[], Some(offset)));
    }
}
