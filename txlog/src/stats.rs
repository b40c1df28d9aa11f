//! Per-file column statistics (PROTOCOL.md "Per-file Statistics"), as used for data
//! skipping.
//!
//! `add.stats` is a JSON string: `numRecords`, and `minValues` / `maxValues` / `nullCount`
//! objects that mirror the physical schema (nested structs nest). Everything is optional; a
//! missing or unparseable statistic means "unknown", never "empty".

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::scalar::Scalar;
use crate::scalar::text::{parse_date, parse_naive_timestamp, parse_timestamp};
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

#[cfg(test)]
mod tests {
    use super::*;

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
