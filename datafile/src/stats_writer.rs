//! Collecting per-file statistics while writing (PROTOCOL.md "Per-file Statistics"): the
//! minimum, maximum and null count of each statistics column, from the Arrow arrays written
//! (or a Parquet footer's summary of them). Their JSON text, and the rules that keep a
//! written bound safe (millisecond timestamps rounded outwards, string prefixes, exact
//! decimals), belong to txlog's stats codec ([`encode_stats`]).
//!
//! What is collected is correct by construction, so that no reader's data skipping can drop
//! a row of a file alluvium wrote:
//! * float columns that hold NaN get no bounds (NaN sorts above every number in Spark);
//! * booleans, binary, arrays and maps get null counts only.
//!
//! Which columns: `delta.dataSkippingStatsColumns` when set, else the first
//! `delta.dataSkippingNumIndexedCols` (default 32, -1 = all) leaf columns in schema order,
//! nested struct fields flattened. Keys are physical names (column mapping).

use std::cmp::Ordering;

use arrow_arith::aggregate;
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type,
    Int64Type, TimestampMicrosecondType,
};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::DataType as ArrowType;

use alluvium_txlog::column_mapping::ColumnMappingMode;
use alluvium_txlog::properties::TableProperties;
use alluvium_txlog::scalar::Scalar;
use alluvium_txlog::schema::{DataType, PrimitiveType, StructField, StructType};
use alluvium_txlog::stats::{ColumnStats, encode_stats};

use crate::Result;
use crate::min_max::{Fold, min_max};
use alluvium_expr::leaf_array;

/// Characters kept of string bounds (the rule lives with the stats codec in txlog).
pub use alluvium_txlog::stats::STRING_PREFIX_LENGTH;

#[derive(Debug, Clone)]
struct Leaf {
    logical: Vec<String>,
    physical: Vec<String>,
    ty: Option<PrimitiveType>,
    min: Option<Scalar>,
    max: Option<Scalar>,
    null_count: i64,
    /// False once a value makes bounds unusable (NaN).
    bounds_ok: bool,
}

impl Leaf {
    /// Widens the bounds to cover the non-null values of `arr`.
    fn fold_bounds(&mut self, arr: &ArrayRef) {
        if !self.bounds_ok {
            return;
        }
        let Some(ty) = self.ty else { return };
        match bounds(arr, ty) {
            Bounds::None => {}
            Bounds::Unusable => {
                self.bounds_ok = false;
                self.min = None;
                self.max = None;
            }
            Bounds::Some(lo, hi) => {
                if self
                    .min
                    .as_ref()
                    .is_none_or(|m| lo.compare(m) == Some(Ordering::Less))
                {
                    self.min = Some(lo);
                }
                if self
                    .max
                    .as_ref()
                    .is_none_or(|m| hi.compare(m) == Some(Ordering::Greater))
                {
                    self.max = Some(hi);
                }
            }
        }
    }
}

/// Accumulates the statistics of one data file across the batches written to it.
#[derive(Debug, Clone)]
pub struct StatsCollector {
    leaves: Vec<Leaf>,
    num_records: i64,
}

fn flatten(
    fields: &[StructField],
    mode: ColumnMappingMode,
    logical: &[String],
    physical: &[String],
    out: &mut Vec<Leaf>,
) {
    for f in fields {
        let mut l = logical.to_vec();
        l.push(f.name.clone());
        let mut p = physical.to_vec();
        p.push(mode.physical_name(f).to_string());
        match &f.data_type {
            DataType::Struct(s) => flatten(&s.fields, mode, &l, &p, out),
            other => out.push(Leaf {
                logical: l,
                physical: p,
                ty: other.as_primitive(),
                min: None,
                max: None,
                null_count: 0,
                bounds_ok: true,
            }),
        }
    }
}

impl StatsCollector {
    /// A collector for files holding the data columns `schema` (partition columns
    /// excluded), configured by the table's properties.
    pub fn new(schema: &StructType, mode: ColumnMappingMode, props: &TableProperties<'_>) -> Self {
        let mut leaves = Vec::new();
        flatten(&schema.fields, mode, &[], &[], &mut leaves);
        props.retain_stats_leaves(&mut leaves, |l| &l.logical);
        StatsCollector {
            leaves,
            num_records: 0,
        }
    }

    /// Folds a batch (columns with the table's logical names and Arrow types) into the
    /// statistics.
    ///
    /// # Errors
    /// [`alluvium_expr::ExprError::Invalid`] (as [`crate::DataFileError::Expr`]) if a stats column is missing from the batch.
    pub fn update(&mut self, batch: &RecordBatch) -> Result<()> {
        self.num_records += i64::try_from(batch.num_rows()).unwrap_or(i64::MAX);
        for leaf in &mut self.leaves {
            let arr = leaf_array(batch, &leaf.logical)?;
            leaf.null_count += i64::try_from(arr.logical_null_count()).unwrap_or(i64::MAX);
            leaf.fold_bounds(&arr);
        }
        Ok(())
    }

    /// The logical paths of the columns statistics are kept for, in the order
    /// [`update_summary`](Self::update_summary) takes them.
    pub fn columns(&self) -> impl Iterator<Item = &[String]> {
        self.leaves.iter().map(|l| l.logical.as_slice())
    }

    /// Folds a summary of `rows` rows instead of the rows themselves (the footer statistics
    /// of a Parquet file): for each column of [`columns`](Self::columns), in that order, an
    /// array whose non-null values bound the column's values from below and above (the row
    /// groups' minima and maxima) and the column's null count. Each array must be of the
    /// Arrow type [`update`](Self::update) would read for the column; the rules that make
    /// bounds safe (rounding, string prefixes) apply to it as to rows.
    ///
    /// # Errors
    /// [`crate::DataFileError::InvalidArgument`] when `columns` does not have one entry per
    /// statistics column.
    pub fn update_summary(&mut self, rows: i64, columns: &[(ArrayRef, i64)]) -> Result<()> {
        if columns.len() != self.leaves.len() {
            return Err(crate::DataFileError::InvalidArgument(format!(
                "a statistics summary needs {} columns, not {}",
                self.leaves.len(),
                columns.len()
            )));
        }
        self.num_records += rows;
        for (leaf, (arr, nulls)) in self.leaves.iter_mut().zip(columns) {
            leaf.null_count += nulls;
            leaf.fold_bounds(arr);
        }
        Ok(())
    }

    /// Rows seen so far.
    pub fn num_records(&self) -> i64 {
        self.num_records
    }

    /// The statistics as the JSON string of `add.stats` (written by txlog's stats codec,
    /// [`encode_stats`]).
    pub fn to_json(&self) -> String {
        let columns: Vec<ColumnStats<'_>> = self
            .leaves
            .iter()
            .map(|leaf| ColumnStats {
                path: &leaf.physical,
                null_count: leaf.null_count,
                bounds: leaf.min.as_ref().zip(leaf.max.as_ref()),
            })
            .collect();
        encode_stats(self.num_records, &columns)
    }
}

enum Bounds {
    None,
    Unusable,
    Some(Scalar, Scalar),
}

fn bounds(arr: &ArrayRef, ty: PrimitiveType) -> Bounds {
    // Without nulls, one pass finds the bounds and any NaN (`min_max`); with nulls, a NaN
    // scan that skips null slots, then `arrow_arith`'s two passes.
    macro_rules! prim {
        ($t:ty, $wrap:expr) => {
            prim!($t, $wrap, |_| false, |_| false)
        };
        ($t:ty, $wrap:expr, $is_nan:expr) => {
            prim!($t, $wrap, $is_nan, |a| any_valid_nan(a, $is_nan))
        };
        ($t:ty, $wrap:expr, $is_nan:expr, $valid_nan:expr) => {{
            let a = arr.as_primitive::<$t>();
            if a.null_count() == 0 {
                match min_max(a.values(), $is_nan) {
                    Fold::Bounds(lo, hi) => Bounds::Some($wrap(lo), $wrap(hi)),
                    Fold::Nan => Bounds::Unusable,
                    Fold::Empty => Bounds::None,
                }
            } else if $valid_nan(a) {
                Bounds::Unusable
            } else {
                match (aggregate::min(a), aggregate::max(a)) {
                    (Some(lo), Some(hi)) => Bounds::Some($wrap(lo), $wrap(hi)),
                    _ => Bounds::None,
                }
            }
        }};
    }
    match (ty, arr.data_type()) {
        (_, ArrowType::Int8) => prim!(Int8Type, |v: i8| Scalar::Long(i64::from(v))),
        (_, ArrowType::Int16) => prim!(Int16Type, |v: i16| Scalar::Long(i64::from(v))),
        (_, ArrowType::Int32) => prim!(Int32Type, |v: i32| Scalar::Long(i64::from(v))),
        (_, ArrowType::Int64) => prim!(Int64Type, Scalar::Long),
        (_, ArrowType::Float32) => prim!(Float32Type, Scalar::Float, f32::is_nan),
        (_, ArrowType::Float64) => prim!(Float64Type, Scalar::Double, f64::is_nan),
        (PrimitiveType::Decimal(p, s), ArrowType::Decimal128(_, _)) => {
            prim!(Decimal128Type, |v: i128| Scalar::Decimal {
                value: v,
                precision: p,
                scale: s
            })
        }
        (_, ArrowType::Date32) => prim!(Date32Type, Scalar::Date),
        (
            PrimitiveType::Timestamp,
            ArrowType::Timestamp(arrow_schema::TimeUnit::Microsecond, _),
        ) => {
            prim!(TimestampMicrosecondType, Scalar::Timestamp)
        }
        (
            PrimitiveType::TimestampNtz,
            ArrowType::Timestamp(arrow_schema::TimeUnit::Microsecond, _),
        ) => {
            prim!(TimestampMicrosecondType, Scalar::TimestampNtz)
        }
        (_, ArrowType::Utf8) => match string_bounds(arr.as_string::<i32>()) {
            Some((lo, hi)) => Bounds::Some(
                Scalar::String(lo.to_string()),
                Scalar::String(hi.to_string()),
            ),
            None => Bounds::None,
        },
        _ => Bounds::None,
    }
}

/// Whether a non-null value of `a` is NaN, slot by slot: a null slot may hold any bits, NaN
/// included. For arrays with nulls; a column without them is folded by `min_max`, which
/// finds NaN in the same pass as the bounds.
fn any_valid_nan<T: arrow_array::ArrowPrimitiveType>(
    a: &arrow_array::PrimitiveArray<T>,
    is_nan: fn(T::Native) -> bool,
) -> bool {
    match a.nulls() {
        Some(nulls) => a
            .values()
            .iter()
            .zip(nulls.iter())
            .any(|(v, valid)| valid && is_nan(*v)),
        None => a.values().iter().any(|v| is_nan(*v)),
    }
}

/// The smallest and the largest non-null string of `a` in byte order (which is the order of
/// `str` and of Unicode code points), in one pass, or `None` when all are null. The same
/// answer as `arrow_arith`'s `min_string` and `max_string`, faster: most values are
/// judged by integer comparisons of their first [`KEY_BYTES`] bytes with the bounds' (a
/// value strictly between them is settled by two), and only a value that ties with a bound
/// there is compared whole.
fn string_bounds(a: &arrow_array::StringArray) -> Option<(&str, &str)> {
    let data = a.value_data();
    let offsets = a.value_offsets();
    let nulls = a.nulls().filter(|n| n.null_count() > 0);
    let valid = |i: usize| nulls.is_none_or(|n| n.is_valid(i));
    let first = (0..a.len()).find(|&i| valid(i))?;
    let at = |k: usize| {
        offsets
            .get(k)
            .map_or(0, |&o| usize::try_from(o).unwrap_or(0))
    };
    let (start, end) = (at(first), at(first + 1));
    // The smallest and the largest string so far, with their keys.
    let mut lo: Candidate = (start, end, prefix_key(data, start, end));
    let mut hi = lo;
    for (i, w) in offsets.windows(2).enumerate().skip(first + 1) {
        if !valid(i) {
            continue;
        }
        let (start, end) = (
            usize::try_from(w[0]).unwrap_or(0),
            usize::try_from(w[1]).unwrap_or(0),
        );
        let key = prefix_key(data, start, end);
        // Most strings fall strictly between the bounds' keys: two comparisons.
        if key > lo.2 && key < hi.2 {
            continue;
        }
        let v = data.get(start..end);
        if key < lo.2 || (key == lo.2 && v < data.get(lo.0..lo.1)) {
            lo = (start, end, key);
        } else if key > hi.2 || (key == hi.2 && v > data.get(hi.0..hi.1)) {
            hi = (start, end, key);
        }
    }
    let text = |(s, e, _): Candidate| std::str::from_utf8(data.get(s..e)?).ok();
    text(lo).zip(text(hi))
}

/// A string of a `StringArray`'s value buffer, `(start, end, prefix_key)`.
type Candidate = (usize, usize, u128);

/// Bytes of a string in its [`prefix_key`]: sixteen, so the short strings most columns hold
/// (codes, names, categories that share an eight-byte stem) are ordered by their keys alone.
const KEY_BYTES: usize = 16;

/// The first [`KEY_BYTES`] bytes of the string at `data[start..end]` as a big-endian
/// integer, zero-padded. When two strings' keys differ, the strings compare as their keys
/// do: at the first byte where the keys differ the larger is a real byte of its string, so
/// the other string either differs there by a smaller byte or ended before it (and is a
/// prefix). Equal keys settle nothing (`"a"` and `"a\0"` share a key).
fn prefix_key(data: &[u8], start: usize, end: usize) -> u128 {
    let len = end.saturating_sub(start);
    // One unaligned load when the key's bytes are there to read, the bytes past the string
    // masked off; a copy near the end of the buffer.
    if let Some(chunk) = data.get(start..start + KEY_BYTES)
        && let Ok(chunk) = <[u8; KEY_BYTES]>::try_from(chunk)
    {
        let raw = u128::from_be_bytes(chunk);
        return if len >= KEY_BYTES {
            raw
        } else {
            raw & !(u128::MAX >> (len * 8))
        };
    }
    let mut b = [0u8; KEY_BYTES];
    let n = len.min(KEY_BYTES);
    if let Some(bytes) = data.get(start..start + n) {
        b[..n].copy_from_slice(bytes);
    }
    u128::from_be_bytes(b)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::Arc;

    use arrow_array::{
        Float64Array, Int32Array, StringArray, StructArray, TimestampMicrosecondArray,
    };
    use arrow_schema::{Field, Schema};

    use super::*;
    use alluvium_txlog::stats::{FileStats, stat_scalar};

    fn schema() -> StructType {
        StructType::from_json(r#"{"type":"struct","fields":[
            {"name":"i","type":"integer","nullable":true,"metadata":{"delta.columnMapping.physicalName":"col-i"}},
            {"name":"s","type":"string","nullable":true,"metadata":{}},
            {"name":"f","type":"double","nullable":true,"metadata":{}},
            {"name":"t","type":"timestamp","nullable":true,"metadata":{}},
            {"name":"n","type":{"type":"struct","fields":[{"name":"x","type":"integer","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}}
        ]}"#).unwrap()
    }

    fn batch(i: Vec<Option<i32>>, s: Vec<Option<&str>>, f: Vec<f64>, t: Vec<i64>) -> RecordBatch {
        let n = StructArray::from(vec![(
            Arc::new(Field::new("x", ArrowType::Int32, true)),
            Arc::new(Int32Array::from(vec![Some(1); i.len()])) as ArrayRef,
        )]);
        RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("i", ArrowType::Int32, true),
                Field::new("s", ArrowType::Utf8, true),
                Field::new("f", ArrowType::Float64, true),
                Field::new(
                    "t",
                    ArrowType::Timestamp(arrow_schema::TimeUnit::Microsecond, Some("UTC".into())),
                    true,
                ),
                Field::new("n", n.data_type().clone(), true),
            ])),
            vec![
                Arc::new(Int32Array::from(i)),
                Arc::new(StringArray::from(s)),
                Arc::new(Float64Array::from(f)),
                Arc::new(TimestampMicrosecondArray::from(t).with_timezone("UTC")),
                Arc::new(n),
            ],
        )
        .unwrap()
    }

    #[test]
    fn a_summary_gives_the_statistics_its_rows_would() {
        let conf = HashMap::new();
        let props = TableProperties(&conf);
        let rows = batch(
            vec![Some(5), None, Some(-2)],
            vec![Some("b"), Some("q"), None],
            vec![1.5, 2.5, 0.25],
            vec![1_999, 5_000_001, 3],
        );
        let mut from_rows = StatsCollector::new(&schema(), ColumnMappingMode::None, &props);
        from_rows.update(&rows).unwrap();
        // The same values as two "row groups" of minima and maxima, with their null counts.
        let mut from_summary = StatsCollector::new(&schema(), ColumnMappingMode::None, &props);
        let columns: Vec<Vec<String>> = from_summary.columns().map(<[String]>::to_vec).collect();
        assert_eq!(columns.len(), 5);
        let summary: Vec<(ArrayRef, i64)> = vec![
            (Arc::new(Int32Array::from(vec![Some(5), Some(-2)])), 1),
            (Arc::new(StringArray::from(vec![Some("b"), Some("q")])), 1),
            (Arc::new(Float64Array::from(vec![0.25, 2.5])), 0),
            (
                Arc::new(TimestampMicrosecondArray::from(vec![3, 5_000_001]).with_timezone("UTC")),
                0,
            ),
            (Arc::new(Int32Array::from(vec![1, 1])), 0),
        ];
        from_summary.update_summary(3, &summary).unwrap();
        assert_eq!(from_summary.to_json(), from_rows.to_json());
        assert!(from_summary.update_summary(3, &summary[..2]).is_err());
    }

    #[test]
    fn collects_bounds_across_batches() {
        let conf = HashMap::new();
        let mut c =
            StatsCollector::new(&schema(), ColumnMappingMode::Name, &TableProperties(&conf));
        let long = "a".repeat(40);
        c.update(&batch(
            vec![Some(5), None],
            vec![Some("m"), Some(&long)],
            vec![1.5, 2.5],
            vec![1_999, 5_000_001],
        ))
        .unwrap();
        c.update(&batch(vec![Some(-3)], vec![Some("z")], vec![0.5], vec![7]))
            .unwrap();
        let json = c.to_json();
        let s = FileStats::parse(&json).unwrap();
        let p = |x: &str| vec![x.to_string()];
        assert_eq!(s.num_records, Some(3));
        assert_eq!(
            stat_scalar(s.min(&p("col-i")).unwrap(), PrimitiveType::Integer),
            Some(Scalar::Long(-3))
        );
        assert_eq!(s.null_count(&p("col-i")), Some(1));
        assert_eq!(s.min(&p("s")).unwrap().as_str().unwrap(), "a".repeat(32));
        assert_eq!(s.max(&p("s")).unwrap().as_str().unwrap(), "z");
        // Timestamps: min rounded down, max rounded up to the millisecond.
        assert_eq!(
            s.min(&p("t")).unwrap().as_str().unwrap(),
            "1970-01-01T00:00:00.000Z"
        );
        assert_eq!(
            s.max(&p("t")).unwrap().as_str().unwrap(),
            "1970-01-01T00:00:05.001Z"
        );
        assert_eq!(s.null_count(&["n".into(), "x".into()]), Some(0));
    }

    #[test]
    fn nan_drops_float_bounds_and_long_max_strings_stay_above() {
        let conf = HashMap::new();
        let mut c =
            StatsCollector::new(&schema(), ColumnMappingMode::None, &TableProperties(&conf));
        let long = format!("{}b", "a".repeat(32));
        c.update(&batch(
            vec![Some(1)],
            vec![Some(&long)],
            vec![f64::NAN],
            vec![0],
        ))
        .unwrap();
        let s = FileStats::parse(&c.to_json()).unwrap();
        assert!(s.min(&["f".into()]).is_none() && s.max(&["f".into()]).is_none());
        let max = s.max(&["s".into()]).unwrap().as_str().unwrap().to_string();
        assert!(max.as_str() > long.as_str());
    }

    /// Times writing the statistics JSON of 100k files (five columns, one nested): run with
    /// `--ignored --nocapture` to compare encoders.
    #[test]
    #[ignore = "a timing, not a check"]
    fn time_stats_json_of_100k_files() {
        let conf = HashMap::new();
        let mut c =
            StatsCollector::new(&schema(), ColumnMappingMode::Name, &TableProperties(&conf));
        c.update(&batch(
            vec![Some(5), None, Some(-3)],
            vec![Some("m"), Some("zebra"), None],
            vec![1.5, -2.25e-7, 3.0e300],
            vec![1_999, 5_000_001, 1_609_459_200_000_123],
        ))
        .unwrap();
        let start = std::time::Instant::now();
        let mut bytes = 0;
        for _ in 0..100_000 {
            bytes += c.to_json().len();
        }
        println!(
            "stats JSON of 100k files: {:?} ({bytes} bytes; {})",
            start.elapsed(),
            c.to_json()
        );
    }

    #[test]
    fn column_selection() {
        let mut conf = HashMap::new();
        conf.insert(
            "delta.dataSkippingNumIndexedCols".to_string(),
            "2".to_string(),
        );
        let c = StatsCollector::new(&schema(), ColumnMappingMode::None, &TableProperties(&conf));
        assert_eq!(c.leaves.len(), 2);
        conf.clear();
        conf.insert(
            "delta.dataSkippingStatsColumns".to_string(),
            "f, n".to_string(),
        );
        let c = StatsCollector::new(&schema(), ColumnMappingMode::None, &TableProperties(&conf));
        let names: Vec<_> = c.leaves.iter().map(|l| l.logical.join(".")).collect();
        assert_eq!(names, vec!["f", "n.x"]);
    }

    #[test]
    fn string_bounds_agree_with_arrow_min_and_max() {
        // Values that tie on their first eight or sixteen bytes (the key's), prefixes of
        // each other, zero bytes (which tie with the key's padding), multi-byte characters.
        let words = [
            "",
            "\0",
            "\0\0",
            "a",
            "a\0",
            "a\0b",
            "ab",
            "abcdefgh",
            "abcdefgh\0",
            "abcdefghi",
            "abcdefgz",
            "abcdefg",
            "category-0000",
            "category-0999",
            "abcdefghijklmnop",
            "abcdefghijklmnop\0",
            "abcdefghijklmnopq",
            "abcdefghijklmnoq",
            "abcdefghijklmno",
            "abcdefghijklmno\u{e9}",
            "é",
            "éa",
            "z",
            "zzzzzzzzzz",
            "\u{10FFFF}",
            "\u{7f}",
        ];
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for len in 0..200 {
            let values: Vec<Option<&str>> = (0..len)
                .map(|_| {
                    let r = next();
                    (r % 5 != 0).then(|| words[(r >> 8) as usize % words.len()])
                })
                .collect();
            let a = arrow_array::StringArray::from(values.clone());
            let want = aggregate::min_string(&a).zip(aggregate::max_string(&a));
            assert_eq!(string_bounds(&a), want, "{values:?}");
            // A slice (offsets and nulls that start inside the buffers).
            if len > 2 {
                let s = a.slice(1, len - 2);
                let want = aggregate::min_string(&s).zip(aggregate::max_string(&s));
                assert_eq!(string_bounds(&s), want, "{:?}", &values[1..len - 1]);
            }
        }
    }

    #[test]
    fn nan_in_a_null_slot_keeps_the_bounds() {
        use arrow_buffer::{NullBuffer, ScalarBuffer};
        let values = ScalarBuffer::from(vec![1.0, f64::NAN, 3.0]);
        let nulls = NullBuffer::from(vec![true, false, true]);
        let a: ArrayRef = Arc::new(Float64Array::new(values.clone(), Some(nulls)));
        assert!(matches!(
            bounds(&a, PrimitiveType::Double),
            Bounds::Some(Scalar::Double(lo), Scalar::Double(hi)) if lo == 1.0 && hi == 3.0
        ));
        let a: ArrayRef = Arc::new(Float64Array::new(values.clone(), None));
        assert!(matches!(
            bounds(&a, PrimitiveType::Double),
            Bounds::Unusable
        ));
        // A NaN in a valid slot of an array with nulls drops the bounds too.
        let nulls = NullBuffer::from(vec![false, true, true]);
        let a: ArrayRef = Arc::new(Float64Array::new(values, Some(nulls)));
        assert!(matches!(
            bounds(&a, PrimitiveType::Double),
            Bounds::Unusable
        ));
    }
}
