//! Per-file column statistics (PROTOCOL.md "Per-file Statistics"), as used for data
//! skipping.
//!
//! `add.stats` is a JSON string: `numRecords`, and `minValues` / `maxValues` / `nullCount`
//! objects that mirror the physical schema (nested structs nest). Everything is optional; a
//! missing or unparseable statistic means "unknown", never "empty".
//!
//! This module decodes that string; [`encode_stats`] (in `stats/encode.rs`) writes it from
//! typed bounds, so both directions of the codec live here.

use serde::Deserialize;
use serde_json::{Map, Value};

mod columns;
mod encode;

pub use columns::{BoundValues, Bounds, ColumnKey, Counts, StatsColumn, StatsColumns};
pub use encode::{ColumnStats, STRING_PREFIX_LENGTH, encode_stats};

use crate::scalar::Scalar;
use crate::scalar::text::{has_non_utc_offset, parse_date, parse_naive_timestamp, parse_timestamp};
use crate::schema::PrimitiveType;

/// Parsed statistics of one file.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileStats {
    /// Physical rows in the file (before deletion vectors).
    #[serde(default)]
    pub num_records: Option<i64>,
    /// Lower bounds.
    #[serde(default)]
    pub min_values: Option<Map<String, Value>>,
    /// Upper bounds.
    #[serde(default)]
    pub max_values: Option<Map<String, Value>>,
    /// Null counts.
    #[serde(default)]
    pub null_count: Option<Map<String, Value>>,
    /// False when bounds may be wider than the live rows (after DV deletes). Absent = true.
    #[serde(default)]
    pub tight_bounds: Option<bool>,
}

fn lookup<'a>(map: Option<&'a Map<String, Value>>, path: &[String]) -> Option<&'a Value> {
    let (first, rest) = path.split_first()?;
    let v = map?.get(first)?;
    if rest.is_empty() {
        Some(v)
    } else {
        lookup(v.as_object(), rest)
    }
}

impl FileStats {
    /// Parses a stats string; `None` if it is not valid stats JSON (treated as unknown).
    pub fn parse(json: &str) -> Option<FileStats> {
        serde_json::from_str(json).ok()
    }

    /// Parses a stats string keeping the bounds and null counts of the top-level columns
    /// `columns` (physical names) only: what [`parse`](Self::parse) gives with every other
    /// column removed from `minValues`, `maxValues` and `nullCount`, and `None` exactly when
    /// it gives `None`. The other columns' values are checked but not built, so judging a
    /// predicate on a few columns of a wide table does not allocate a JSON map per column
    /// of every file.
    pub fn parse_columns(json: &str, columns: &[&str]) -> Option<FileStats> {
        use serde::de::DeserializeSeed;
        let mut de = serde_json::Deserializer::from_str(json);
        let stats = select::Stats(columns).deserialize(&mut de).ok()?;
        de.end().ok()?;
        Some(stats)
    }

    /// The lower bound of the leaf at `path` (physical names).
    pub fn min(&self, path: &[String]) -> Option<&Value> {
        lookup(self.min_values.as_ref(), path).filter(|v| !v.is_null())
    }

    /// The upper bound of the leaf at `path` (physical names).
    pub fn max(&self, path: &[String]) -> Option<&Value> {
        lookup(self.max_values.as_ref(), path).filter(|v| !v.is_null())
    }

    /// The null count of the leaf at `path` (physical names).
    pub fn null_count(&self, path: &[String]) -> Option<i64> {
        lookup(self.null_count.as_ref(), path).and_then(Value::as_i64)
    }

    /// Whether the bounds are tight (default true).
    pub fn tight_bounds(&self) -> bool {
        self.tight_bounds.unwrap_or(true)
    }
}

/// Converts a statistics bound to a scalar of the column's type. `None` when the type has
/// no usable bounds (boolean, binary) or the value does not parse: callers then treat the
/// bound as unknown.
///
/// Decimal bounds come back as [`Scalar::Double`] because JSON carries them as binary
/// floating point; callers must widen comparisons against them.
pub fn stat_scalar(v: &Value, ty: PrimitiveType) -> Option<Scalar> {
    match ty {
        PrimitiveType::Byte
        | PrimitiveType::Short
        | PrimitiveType::Integer
        | PrimitiveType::Long => v.as_i64().map(Scalar::Long).or_else(|| {
            let f = v.as_f64()?;
            (f.fract() == 0.0 && f.abs() < 9.0e15).then_some(Scalar::Long(f as i64))
        }),
        PrimitiveType::Float | PrimitiveType::Double | PrimitiveType::Decimal(..) => match v {
            Value::Number(n) => n.as_f64().map(Scalar::Double),
            Value::String(s) => s
                .parse::<f64>()
                .ok()
                .filter(|f| f.is_finite())
                .map(Scalar::Double),
            _ => None,
        },
        PrimitiveType::String => v.as_str().map(|s| Scalar::String(s.to_string())),
        PrimitiveType::Date => v.as_str().and_then(parse_date).map(Scalar::Date),
        PrimitiveType::Timestamp => v.as_str().and_then(parse_timestamp).map(Scalar::Timestamp),
        PrimitiveType::TimestampNtz => v
            .as_str()
            .and_then(parse_naive_timestamp)
            .map(Scalar::TimestampNtz),
        PrimitiveType::Boolean
        | PrimitiveType::Binary
        | PrimitiveType::Void
        | PrimitiveType::Variant => None,
    }
}

/// Which end of a column's values a statistic bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// `minValues`: no value is below it.
    Min,
    /// `maxValues`: no value is above it.
    Max,
}

/// A statistics bound as data skipping may trust it: [`stat_scalar`], widened where
/// writers are known to store bounds inexactly, so the result still encloses every value.
///
/// * Timestamps are truncated to milliseconds: a maximum gets +999 µs. A bound written
///   with an offset other than UTC (Spark has truncated such offsets to whole minutes)
///   moves a further minute outwards.
/// * Decimals travel as binary floating point: both ends move outwards by a relative
///   margin of 1e-9 (and 1e-9 absolute).
///
/// Other types come back as [`stat_scalar`] gives them. String maxima may be truncated
/// prefixes; that is the comparison's concern (a value that extends the maximum is not
/// above it), as is NaN in float columns (statistics omit it).
pub fn trusted_bound(v: &Value, ty: PrimitiveType, end: Bound) -> Option<Scalar> {
    let s = stat_scalar(v, ty)?;
    Some(match s {
        Scalar::Timestamp(t) | Scalar::TimestampNtz(t) => {
            let offset_margin = if v.as_str().is_some_and(has_non_utc_offset) {
                60_000_000
            } else {
                0
            };
            let t = match end {
                Bound::Max => t.saturating_add(999 + offset_margin),
                Bound::Min => t.saturating_sub(offset_margin),
            };
            if ty == PrimitiveType::Timestamp {
                Scalar::Timestamp(t)
            } else {
                Scalar::TimestampNtz(t)
            }
        }
        Scalar::Double(d) if matches!(ty, PrimitiveType::Decimal(..)) => {
            let margin = d.abs() * 1e-9 + 1e-9;
            Scalar::Double(match end {
                Bound::Max => d + margin,
                Bound::Min => d - margin,
            })
        }
        s => s,
    })
}

/// The selective stats decoder of [`FileStats::parse_columns`].
mod select {
    use std::borrow::Cow;
    use std::fmt;

    use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
    use serde::{Deserialize, Deserializer};
    use serde_json::{Map, Value};

    use super::FileStats;

    /// A map key, borrowed from the input when it has no escapes.
    struct Key<'de>(Cow<'de, str>);

    impl<'de> Deserialize<'de> for Key<'de> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct KeyVisitor;
            impl<'de> Visitor<'de> for KeyVisitor {
                type Value = Key<'de>;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("a string key")
                }
                fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                    Ok(Key(Cow::Borrowed(v)))
                }
                fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                    Ok(Key(Cow::Owned(v.to_owned())))
                }
                fn visit_string<E: de::Error>(self, v: String) -> Result<Key<'de>, E> {
                    Ok(Key(Cow::Owned(v)))
                }
            }
            d.deserialize_str(KeyVisitor)
        }
    }

    /// The whole stats object, as `FileStats`'s derived decoder reads it (unknown fields
    /// ignored, a repeated known field an error).
    pub(super) struct Stats<'c>(pub(super) &'c [&'c str]);

    impl<'de> DeserializeSeed<'de> for Stats<'_> {
        type Value = FileStats;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<FileStats, D::Error> {
            d.deserialize_struct("FileStats", &FIELDS, self)
        }
    }

    /// The fields in declaration order (a JSON array gives them by position, as for the
    /// derived decoder).
    const FIELDS: [&str; 5] = [
        "numRecords",
        "minValues",
        "maxValues",
        "nullCount",
        "tightBounds",
    ];

    impl<'de> Visitor<'de> for Stats<'_> {
        type Value = FileStats;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a stats object")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut q: A) -> Result<FileStats, A::Error> {
            let mut out = FileStats::default();
            if let Some(v) = q.next_element()? {
                out.num_records = v;
            }
            let mut maps = [None, None, None];
            let mut complete = true;
            for slot in &mut maps {
                match q.next_element_seed(Columns(self.0))? {
                    Some(v) => *slot = v,
                    None => {
                        complete = false;
                        break;
                    }
                }
            }
            [out.min_values, out.max_values, out.null_count] = maps;
            if !complete {
                return Ok(out);
            }
            if let Some(v) = q.next_element()? {
                out.tight_bounds = v;
            }
            // Elements past the fields are an error, as for the derived decoder.
            if q.next_element::<IgnoredAny>()?.is_some() {
                return Err(de::Error::invalid_length(6, &"at most 5 elements"));
            }
            Ok(out)
        }

        fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<FileStats, A::Error> {
            let mut out = FileStats::default();
            let mut seen = [false; 5];
            while let Some(Key(key)) = m.next_key()? {
                let field = match key.as_ref() {
                    "numRecords" => 0,
                    "minValues" => 1,
                    "maxValues" => 2,
                    "nullCount" => 3,
                    "tightBounds" => 4,
                    _ => {
                        m.next_value::<IgnoredAny>()?;
                        continue;
                    }
                };
                if std::mem::replace(&mut seen[field], true) {
                    return Err(de::Error::custom(format_args!("duplicate field `{key}`")));
                }
                match field {
                    0 => out.num_records = m.next_value()?,
                    1 => out.min_values = m.next_value_seed(Columns(self.0))?,
                    2 => out.max_values = m.next_value_seed(Columns(self.0))?,
                    3 => out.null_count = m.next_value_seed(Columns(self.0))?,
                    _ => out.tight_bounds = m.next_value()?,
                }
            }
            Ok(out)
        }
    }

    /// A JSON value read as `serde_json::Value` reads it (`deserialize_any`: numbers parsed,
    /// so one out of `f64`'s range fails as it does there) but not built. `IgnoredAny`
    /// only skips a number's digits, so a column not asked for could hold a value that
    /// makes the full parse fail while the selective one succeeded.
    struct Checked;

    impl<'de> Deserialize<'de> for Checked {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(Checked)
        }
    }

    impl<'de> Visitor<'de> for Checked {
        type Value = Checked;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a JSON value")
        }
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Checked, E> {
            Ok(Checked)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Checked, E> {
            Ok(Checked)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Checked, E> {
            Ok(Checked)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Checked, E> {
            Ok(Checked)
        }
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Checked, E> {
            Ok(Checked)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Checked, E> {
            Ok(Checked)
        }
        fn visit_none<E: de::Error>(self) -> Result<Checked, E> {
            Ok(Checked)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Checked, D::Error> {
            Checked::deserialize(d)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut q: A) -> Result<Checked, A::Error> {
            while q.next_element::<Checked>()?.is_some() {}
            Ok(Checked)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Checked, A::Error> {
            while m.next_key::<Checked>()?.is_some() {
                m.next_value::<Checked>()?;
            }
            Ok(Checked)
        }
    }

    /// An optional per-column object, keeping the columns named; the others are checked
    /// as the full parse's `Value` would read them ([`Checked`]), not built.
    struct Columns<'c>(&'c [&'c str]);

    impl<'de> DeserializeSeed<'de> for Columns<'_> {
        type Value = Option<Map<String, Value>>;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_option(self)
        }
    }

    impl<'de> Visitor<'de> for Columns<'_> {
        type Value = Option<Map<String, Value>>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an object of column statistics or null")
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_map(self)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
            let mut out = Map::new();
            while let Some(Key(key)) = m.next_key()? {
                if self.0.contains(&key.as_ref()) {
                    let v: Value = m.next_value()?;
                    out.insert(key.into_owned(), v);
                } else {
                    m.next_value::<Checked>()?;
                }
            }
            Ok(Some(out))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `parse` with only `columns` kept in the per-column objects.
    fn parse_then_keep(json: &str, columns: &[&str]) -> Option<FileStats> {
        let mut s = FileStats::parse(json)?;
        for m in [&mut s.min_values, &mut s.max_values, &mut s.null_count]
            .into_iter()
            .flatten()
        {
            m.retain(|k, _| columns.contains(&k.as_str()));
        }
        Some(s)
    }

    #[test]
    fn selective_parse_equals_full_parse_restricted_to_the_columns() {
        let cases = [
            r#"{"numRecords":3,"minValues":{"a":1,"b":"x","s":{"t":"2021-01-01T00:00:00.000Z"}},"maxValues":{"a":9,"b":"y"},"nullCount":{"a":0,"b":1,"s":{"t":1}}}"#,
            r#"{"numRecords":5,"tightBounds":false,"minValues":{"a":null},"maxValues":null,"extra":[1,{"x":2}]}"#,
            r#"{"minValues":{"a\u0062":1,"b":2},"maxValues":{"a":1,"a":7}}"#,
            r#"{"numRecords":1,"numRecords":2}"#,
            r#"{"numRecords":"three"}"#,
            r#"{"minValues":5}"#,
            r#"{"minValues":{"a":1}} trailing"#,
            r#"{"minValues":{"a":1}"#,
            r#"[]"#,
            r#"[7,{"a":1,"b":2}]"#,
            r#"[7,null,{"a":1},{"a":0},false]"#,
            r#"[7,null,{"a":1},{"a":0},false,1]"#,
            r#"[null]"#,
            r#"{}"#,
            r#"  {"nullCount":{"s":{"t":0}}}  "#,
            // A number beyond f64 in a column not asked for fails the full parse, so it
            // fails the selective one (found by the `partition_and_stats` fuzz target).
            r#"{"minValues":{"a":1,"s":{"t":1e999}},"maxValues":{"a":2}}"#,
            r#"{"nullCount":{"a":0,"z":[-1e400]}}"#,
            r#"{"numRecords":1,"extra":1e999}"#,
        ];
        for json in cases {
            for columns in [&["a"][..], &["b", "s"], &["ab"], &[], &["a", "b", "s", "z"]] {
                assert_eq!(
                    FileStats::parse_columns(json, columns),
                    parse_then_keep(json, columns),
                    "{json} {columns:?}"
                );
            }
        }
    }

    #[test]
    fn nested_lookup_and_conversion() {
        let s = FileStats::parse(
            r#"{"numRecords":3,"minValues":{"a":1,"s":{"t":"2021-01-01T00:00:00.000Z"}},"maxValues":{"a":9,"d":"x"},"nullCount":{"a":0,"s":{"t":1}}}"#,
        )
        .unwrap();
        let p = |x: &[&str]| x.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(s.num_records, Some(3));
        assert_eq!(
            stat_scalar(s.min(&p(&["a"])).unwrap(), PrimitiveType::Integer),
            Some(Scalar::Long(1))
        );
        assert_eq!(s.null_count(&p(&["s", "t"])), Some(1));
        assert_eq!(
            stat_scalar(s.min(&p(&["s", "t"])).unwrap(), PrimitiveType::Timestamp),
            Some(Scalar::Timestamp(1_609_459_200_000_000))
        );
        assert!(s.max(&p(&["missing"])).is_none());
        assert!(stat_scalar(s.max(&p(&["d"])).unwrap(), PrimitiveType::Integer).is_none());
        assert!(s.tight_bounds());
        assert!(FileStats::parse("{not json").is_none());
    }
}
