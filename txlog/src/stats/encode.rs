//! Writing `add.stats`: the JSON text of a data file's statistics from typed bounds, through
//! serde (the decoder is [`FileStats`](super::FileStats), the other direction of this codec).
//!
//! The text form of each bound is chosen here, and so are the rules that keep a written bound
//! safe for every reader's data skipping:
//! * timestamp bounds are written at millisecond precision, the minimum rounded down and
//!   the maximum rounded **up**;
//! * strings are cut to a prefix ([`STRING_PREFIX_LENGTH`] characters); a cut maximum gets
//!   U+10FFFF appended, so it still sorts above every value with that prefix (and is omitted
//!   if the value itself continues with U+10FFFF);
//! * infinite floats are omitted (JSON has no text for them);
//! * decimals are written as exact JSON number text, never through binary floating point;
//! * other types (booleans, binary) have no bounds: only their null counts are written.

use std::borrow::Cow;

use serde::ser::{Serialize, SerializeMap, SerializeStruct, Serializer};
use serde_json::value::RawValue;

use crate::scalar::Scalar;
use crate::scalar::text::{format_date, format_decimal};

/// Characters kept of string bounds.
pub const STRING_PREFIX_LENGTH: usize = 32;

/// The statistics of one leaf column of a data file, as collected from its values.
#[derive(Debug, Clone, Copy)]
pub struct ColumnStats<'a> {
    /// The leaf's physical path: a top-level column, or the fields leading to a nested one.
    pub path: &'a [String],
    /// The number of null values.
    pub null_count: i64,
    /// The smallest and the largest non-null value, when both are known.
    pub bounds: Option<(&'a Scalar, &'a Scalar)>,
}

/// The JSON text of `add.stats` for a file of `num_records` rows and the statistics of
/// `columns`: `numRecords`, then `minValues`, `maxValues` and `nullCount`, whose objects
/// nest as the paths do and list columns in the order given.
///
/// Contract: the leaves of one struct are adjacent in `columns` (schema order gives that);
/// a struct whose leaves are split by another column is written as two objects of one key.
/// A bound with no safe JSON form (see the module doc) is left out, as is a struct holding
/// no bound.
pub fn encode_stats(num_records: i64, columns: &[ColumnStats<'_>]) -> String {
    let leaves: Vec<Leaf<'_>> = columns
        .iter()
        .map(|c| Leaf {
            path: c.path,
            null_count: c.null_count,
            min: c.bounds.and_then(|(lo, _)| Bound::of(lo, false)),
            max: c.bounds.and_then(|(_, hi)| Bound::of(hi, true)),
        })
        .collect();
    let stats = Stats {
        num_records,
        leaves: &leaves,
    };
    // Serialising plain numbers, strings and already valid raw JSON to a `Vec` cannot fail;
    // an empty object stands for "unknown" were it ever to.
    serde_json::to_string(&stats).unwrap_or_else(|_| String::from("{}"))
}

/// One leaf with its bounds in their JSON form.
struct Leaf<'a> {
    path: &'a [String],
    null_count: i64,
    min: Option<Bound<'a>>,
    max: Option<Bound<'a>>,
}

/// The JSON value of a bound.
enum Bound<'a> {
    Long(i64),
    Float(f32),
    Double(f64),
    /// Exact decimal number text.
    Number(Box<RawValue>),
    Text(Cow<'a, str>),
}

impl<'a> Bound<'a> {
    /// The JSON form of `v` as a lower (`is_max` false) or upper bound; `None` when it has
    /// none that is exact and safe.
    fn of(v: &'a Scalar, is_max: bool) -> Option<Bound<'a>> {
        Some(match v {
            Scalar::Byte(x) => Bound::Long(i64::from(*x)),
            Scalar::Short(x) => Bound::Long(i64::from(*x)),
            Scalar::Integer(x) => Bound::Long(i64::from(*x)),
            Scalar::Long(x) => Bound::Long(*x),
            Scalar::Float(f) if f.is_finite() => Bound::Float(*f),
            Scalar::Double(f) if f.is_finite() => Bound::Double(*f),
            Scalar::Decimal { value, scale, .. } => {
                Bound::Number(RawValue::from_string(format_decimal(*value, *scale)).ok()?)
            }
            Scalar::String(s) => Bound::Text(truncate(s, is_max)?),
            Scalar::Date(d) => Bound::Text(Cow::Owned(format_date(*d))),
            Scalar::Timestamp(t) => Bound::Text(Cow::Owned(millis_text(*t, is_max, true))),
            Scalar::TimestampNtz(t) => Bound::Text(Cow::Owned(millis_text(*t, is_max, false))),
            _ => return None,
        })
    }
}

impl Serialize for Bound<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Bound::Long(x) => s.serialize_i64(*x),
            Bound::Float(f) => s.serialize_f32(*f),
            Bound::Double(f) => s.serialize_f64(*f),
            Bound::Number(raw) => raw.serialize(s),
            Bound::Text(t) => s.serialize_str(t),
        }
    }
}

/// The timestamp `micros` at millisecond precision (rounded up for an upper bound), with a
/// `Z` when it is UTC; the microseconds as a number's text if out of chrono's range.
fn millis_text(micros: i64, round_up: bool, utc: bool) -> String {
    let ms = if round_up {
        micros.div_euclid(1000) + i64::from(micros.rem_euclid(1000) != 0)
    } else {
        micros.div_euclid(1000)
    };
    match chrono::DateTime::from_timestamp_millis(ms) {
        Some(dt) if utc => dt.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
        Some(dt) => dt.naive_utc().format("%Y-%m-%dT%H:%M:%S%.3f").to_string(),
        None => micros.to_string(),
    }
}

/// A string bound cut to [`STRING_PREFIX_LENGTH`] characters; `None` for an upper bound
/// that cannot be made to sort above the value.
fn truncate(s: &str, is_max: bool) -> Option<Cow<'_, str>> {
    let mut chars = s.char_indices();
    let Some((cut, next)) = chars.nth(STRING_PREFIX_LENGTH) else {
        return Some(Cow::Borrowed(s));
    };
    let prefix = &s[..cut];
    if !is_max {
        return Some(Cow::Borrowed(prefix));
    }
    if next == char::MAX {
        return None;
    }
    Some(Cow::Owned(format!("{prefix}{}", char::MAX)))
}

/// The whole stats object.
struct Stats<'a> {
    num_records: i64,
    leaves: &'a [Leaf<'a>],
}

impl Serialize for Stats<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let all = |which| Level {
            leaves: self.leaves,
            depth: 0,
            which,
        };
        let mut st = s.serialize_struct("Stats", 4)?;
        st.serialize_field("numRecords", &self.num_records)?;
        st.serialize_field("minValues", &all(Which::Min))?;
        st.serialize_field("maxValues", &all(Which::Max))?;
        st.serialize_field("nullCount", &all(Which::NullCount))?;
        st.end()
    }
}

/// Which per-column object is being written.
#[derive(Clone, Copy)]
enum Which {
    Min,
    Max,
    NullCount,
}

impl Which {
    /// Whether `leaf` has a value in this object.
    fn has(self, leaf: &Leaf<'_>) -> bool {
        match self {
            Which::Min => leaf.min.is_some(),
            Which::Max => leaf.max.is_some(),
            Which::NullCount => true,
        }
    }
}

/// The object of one struct level: `leaves` share their first `depth` path names.
struct Level<'a> {
    leaves: &'a [Leaf<'a>],
    depth: usize,
    which: Which,
}

impl Serialize for Level<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        let mut rest = self.leaves;
        while let Some(first) = rest.first() {
            // The run of leaves under the same name at this depth.
            let name = first.path.get(self.depth);
            let run = rest
                .iter()
                .position(|l| l.path.get(self.depth) != name)
                .unwrap_or(rest.len());
            let (group, after) = rest.split_at(run);
            rest = after;
            let Some(name) = name else { continue };
            match group {
                [leaf] if leaf.path.len() == self.depth + 1 => match self.which {
                    Which::Min => {
                        if let Some(b) = &leaf.min {
                            map.serialize_entry(name, b)?;
                        }
                    }
                    Which::Max => {
                        if let Some(b) = &leaf.max {
                            map.serialize_entry(name, b)?;
                        }
                    }
                    Which::NullCount => map.serialize_entry(name, &leaf.null_count)?,
                },
                _ if group.iter().any(|l| self.which.has(l)) => {
                    let inner = Level {
                        leaves: group,
                        depth: self.depth + 1,
                        which: self.which,
                    };
                    map.serialize_entry(name, &inner)?;
                }
                _ => {}
            }
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::PrimitiveType;
    use crate::stats::{FileStats, stat_scalar};

    fn path(p: &[&str]) -> Vec<String> {
        p.iter().map(|s| s.to_string()).collect()
    }

    /// Encodes one column `c` with bounds `lo`..`hi`, decodes it, and gives back the bounds
    /// as the reader converts them to `ty`.
    fn round_trip(lo: &Scalar, hi: &Scalar, ty: PrimitiveType) -> (Option<Scalar>, Option<Scalar>) {
        let p = path(&["c"]);
        let json = encode_stats(
            1,
            &[ColumnStats {
                path: &p,
                null_count: 0,
                bounds: Some((lo, hi)),
            }],
        );
        let s = FileStats::parse(&json).unwrap_or_else(|| panic!("not stats JSON: {json}"));
        assert_eq!(s.null_count(&p), Some(0), "{json}");
        (
            s.min(&p).and_then(|v| stat_scalar(v, ty)),
            s.max(&p).and_then(|v| stat_scalar(v, ty)),
        )
    }

    /// A deterministic stream of 64-bit values (splitmix64).
    fn bits(n: usize) -> impl Iterator<Item = u64> {
        let mut x = 0x9E37_79B9_7F4A_7C15_u64;
        (0..n).map(move |_| {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        })
    }

    #[test]
    fn doubles_and_floats_round_trip_exactly() {
        let special = [
            0.0,
            -0.0,
            f64::MIN_POSITIVE,
            5e-324,
            f64::MAX,
            f64::MIN,
            1e-7,
            1e16,
            0.1,
            -123_456.789,
        ];
        let random = bits(5000).map(f64::from_bits).filter(|f| f.is_finite());
        for f in special.into_iter().chain(random) {
            let (lo, hi) = round_trip(
                &Scalar::Double(f),
                &Scalar::Double(f),
                PrimitiveType::Double,
            );
            for got in [lo, hi] {
                let Some(Scalar::Double(g)) = got else {
                    panic!("{f:?} came back as {got:?}")
                };
                assert_eq!(g.to_bits(), f.to_bits(), "{f:?} came back as {g:?}");
            }
        }
        let random = bits(5000)
            .map(|b| f32::from_bits(b as u32))
            .filter(|f| f.is_finite());
        for f in [0.0_f32, -0.0, f32::MAX, f32::MIN_POSITIVE, 1e-45, 0.1]
            .into_iter()
            .chain(random)
        {
            let (lo, _) = round_trip(&Scalar::Float(f), &Scalar::Float(f), PrimitiveType::Float);
            let Some(Scalar::Double(g)) = lo else {
                panic!("{f:?} came back as {lo:?}")
            };
            assert_eq!(
                (g as f32).to_bits(),
                f.to_bits(),
                "{f:?} came back as {g:?}"
            );
        }
    }

    #[test]
    fn infinite_bounds_are_left_out() {
        let (lo, hi) = round_trip(
            &Scalar::Double(f64::NEG_INFINITY),
            &Scalar::Double(2.5),
            PrimitiveType::Double,
        );
        assert_eq!((lo, hi), (None, Some(Scalar::Double(2.5))));
    }

    #[test]
    fn integers_dates_and_timestamps_round_trip() {
        for v in bits(500)
            .map(|b| b as i64)
            .chain([i64::MIN, i64::MAX, 0, -1])
        {
            let (lo, hi) = round_trip(&Scalar::Long(v), &Scalar::Long(v), PrimitiveType::Long);
            assert_eq!((lo, hi), (Some(Scalar::Long(v)), Some(Scalar::Long(v))));
        }
        for d in [0, -1, 19_000, -719_162, 2_932_896] {
            let (lo, _) = round_trip(&Scalar::Date(d), &Scalar::Date(d), PrimitiveType::Date);
            assert_eq!(lo, Some(Scalar::Date(d)));
        }
        // Whole milliseconds come back as they were; others widen to the enclosing ones.
        for (micros, down, up) in [
            (
                1_609_459_200_000_000,
                1_609_459_200_000_000,
                1_609_459_200_000_000,
            ),
            (1_999, 1_000, 2_000),
            (-1_999, -2_000, -1_000),
        ] {
            let (lo, hi) = round_trip(
                &Scalar::Timestamp(micros),
                &Scalar::Timestamp(micros),
                PrimitiveType::Timestamp,
            );
            assert_eq!(lo, Some(Scalar::Timestamp(down)), "{micros}");
            assert_eq!(hi, Some(Scalar::Timestamp(up)), "{micros}");
            let (lo, hi) = round_trip(
                &Scalar::TimestampNtz(micros),
                &Scalar::TimestampNtz(micros),
                PrimitiveType::TimestampNtz,
            );
            assert_eq!(lo, Some(Scalar::TimestampNtz(down)), "{micros}");
            assert_eq!(hi, Some(Scalar::TimestampNtz(up)), "{micros}");
        }
    }

    #[test]
    fn strings_round_trip_or_are_cut_safely() {
        for s in [
            "",
            "a",
            "with \"quotes\" and \\ and \n",
            "ünïcödé ✓",
            "\u{10FFFF}",
        ] {
            let v = Scalar::String(s.to_string());
            let (lo, hi) = round_trip(&v, &v, PrimitiveType::String);
            assert_eq!((lo, hi), (Some(v.clone()), Some(v)));
        }
        let long = format!("{}b", "é".repeat(32));
        let v = Scalar::String(long.clone());
        let (lo, hi) = round_trip(&v, &v, PrimitiveType::String);
        assert_eq!(lo, Some(Scalar::String("é".repeat(32))));
        let Some(Scalar::String(hi)) = hi else {
            panic!("{hi:?}")
        };
        assert!(hi > long, "{hi:?}");
        // A maximum that continues with U+10FFFF has no prefix above it.
        let v = Scalar::String(format!("{}\u{10FFFF}", "a".repeat(32)));
        assert_eq!(round_trip(&v, &v, PrimitiveType::String).1, None);
    }

    #[test]
    fn decimals_are_exact_number_text() {
        let v = Scalar::Decimal {
            value: 12_345_678_901_234_567_890_123_456_789_i128,
            precision: 38,
            scale: 18,
        };
        let p = path(&["d"]);
        let json = encode_stats(
            1,
            &[ColumnStats {
                path: &p,
                null_count: 0,
                bounds: Some((&v, &v)),
            }],
        );
        assert!(
            json.contains(r#""minValues":{"d":12345678901.234567890123456789}"#),
            "{json}"
        );
        let (lo, _) = round_trip(&v, &v, PrimitiveType::Decimal(38, 18));
        let exact: f64 = "12345678901.234567890123456789".parse().unwrap();
        assert_eq!(lo, Some(Scalar::Double(exact)));
    }

    #[test]
    fn nested_columns_nest_and_structs_without_bounds_are_left_out() {
        let (i, s_x, s_y, t_z) = (
            path(&["i"]),
            path(&["s", "x"]),
            path(&["s", "y"]),
            path(&["t", "z"]),
        );
        let (one, two) = (Scalar::Long(1), Scalar::Long(2));
        let col = |path, null_count, bounds| ColumnStats {
            path,
            null_count,
            bounds,
        };
        let json = encode_stats(
            7,
            &[
                col(&i, 0, Some((&one, &two))),
                col(&s_x, 3, None),
                col(&s_y, 0, Some((&two, &two))),
                col(&t_z, 7, None),
            ],
        );
        assert_eq!(
            json,
            r#"{"numRecords":7,"minValues":{"i":1,"s":{"y":2}},"maxValues":{"i":2,"s":{"y":2}},"nullCount":{"i":0,"s":{"x":3,"y":0},"t":{"z":7}}}"#
        );
        let back = FileStats::parse(&json).unwrap();
        assert_eq!(back.null_count(&t_z), Some(7));
        assert_eq!(back.min(&s_x), None);
        assert_eq!(
            encode_stats(0, &[]),
            r#"{"numRecords":0,"minValues":{},"maxValues":{},"nullCount":{}}"#
        );
    }
}
