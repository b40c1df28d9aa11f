//! Partition values (PROTOCOL.md "Partition Value Serialization") and Hive-style partition
//! directory names.
//!
//! In the log, a partition value is a string (or JSON null); `null` and `""` both mean NULL.
//! Directory names are a writer convention and never authoritative: readers take values
//! from `add.partitionValues`, never from paths.

use crate::scalar::Scalar;
use crate::scalar::text::{
    format_date, format_decimal, format_java_double, format_naive_timestamp, format_timestamp,
    parse_date, parse_decimal, parse_naive_timestamp, parse_timestamp,
};
use crate::schema::PrimitiveType;
use crate::{LogError, Result};

/// The directory value Hive uses for NULL.
pub const HIVE_DEFAULT_PARTITION: &str = "__HIVE_DEFAULT_PARTITION__";

/// Parses a serialized partition value of a column of type `ty`.
///
/// # Errors
/// [`LogError::InvalidPartitionValue`] if the text is not a value of the type.
pub fn parse_partition_value(
    column: &str,
    value: Option<&str>,
    ty: PrimitiveType,
) -> Result<Scalar> {
    let Some(text) = value else {
        return Ok(Scalar::Null);
    };
    if text.is_empty() {
        return Ok(Scalar::Null);
    }
    let bad = |reason: &str| LogError::InvalidPartitionValue {
        column: column.to_string(),
        value: text.to_string(),
        reason: reason.to_string(),
    };
    let trimmed = text.trim();
    Ok(match ty {
        PrimitiveType::String => Scalar::String(text.to_string()),
        PrimitiveType::Binary => Scalar::Binary(text.as_bytes().to_vec()),
        PrimitiveType::Boolean => match trimmed.to_ascii_lowercase().as_str() {
            "true" => Scalar::Boolean(true),
            "false" => Scalar::Boolean(false),
            _ => return Err(bad("not a boolean")),
        },
        PrimitiveType::Byte => Scalar::Byte(trimmed.parse().map_err(|_| bad("not a byte"))?),
        PrimitiveType::Short => Scalar::Short(trimmed.parse().map_err(|_| bad("not a short"))?),
        PrimitiveType::Integer => {
            Scalar::Integer(trimmed.parse().map_err(|_| bad("not an integer"))?)
        }
        PrimitiveType::Long => Scalar::Long(trimmed.parse().map_err(|_| bad("not a long"))?),
        PrimitiveType::Float => Scalar::Float(trimmed.parse().map_err(|_| bad("not a float"))?),
        PrimitiveType::Double => Scalar::Double(trimmed.parse().map_err(|_| bad("not a double"))?),
        PrimitiveType::Date => {
            Scalar::Date(parse_date(trimmed).ok_or_else(|| bad("not a date (YYYY-MM-DD)"))?)
        }
        PrimitiveType::Timestamp => {
            Scalar::Timestamp(parse_timestamp(trimmed).ok_or_else(|| bad("not a timestamp"))?)
        }
        PrimitiveType::TimestampNtz => Scalar::TimestampNtz(
            parse_naive_timestamp(trimmed).ok_or_else(|| bad("not a timestamp_ntz"))?,
        ),
        PrimitiveType::Decimal(p, s) => Scalar::Decimal {
            value: parse_decimal(trimmed, p, s)
                .ok_or_else(|| bad(&format!("not a decimal({p},{s})")))?,
            precision: p,
            scale: s,
        },
        PrimitiveType::Void => Scalar::Null,
        PrimitiveType::Variant => return Err(bad("variant columns cannot be partition columns")),
    })
}

/// Serializes a partition value for `add.partitionValues` (`None` = JSON null).
pub fn serialize_partition_value(value: &Scalar) -> Option<String> {
    Some(match value {
        Scalar::Null => return None,
        Scalar::String(s) if s.is_empty() => return None,
        Scalar::Binary(b) if b.is_empty() => return None,
        Scalar::String(s) => s.clone(),
        Scalar::Binary(b) => String::from_utf8_lossy(b).into_owned(),
        Scalar::Boolean(b) => b.to_string(),
        Scalar::Byte(v) => v.to_string(),
        Scalar::Short(v) => v.to_string(),
        Scalar::Integer(v) => v.to_string(),
        Scalar::Long(v) => v.to_string(),
        Scalar::Float(v) => format_java_double(f64::from(*v)),
        Scalar::Double(v) => format_java_double(*v),
        Scalar::Date(d) => format_date(*d),
        Scalar::Timestamp(t) => format_timestamp(*t),
        Scalar::TimestampNtz(t) => format_naive_timestamp(*t),
        Scalar::Decimal { value, scale, .. } => format_decimal(*value, *scale),
    })
}

/// Escapes a partition value for a Hive directory name as Spark does: `%XX` (uppercase) for
/// controls, DEL and `"#%'*/:=?\{[]^`.
pub fn escape_partition_dir_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        let needs = matches!(
            c,
            '\u{01}'
                ..='\u{1F}'
                    | '\u{7F}'
                    | '"'
                    | '#'
                    | '%'
                    | '\''
                    | '*'
                    | '/'
                    | ':'
                    | '='
                    | '?'
                    | '\\'
                    | '{'
                    | '['
                    | ']'
                    | '^'
        );
        if needs {
            out.push_str(&format!("%{:02X}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// The Hive directory segment `column=value` for one partition value.
pub fn partition_dir_segment(column: &str, value: Option<&str>) -> String {
    let v = match value {
        None | Some("") => HIVE_DEFAULT_PARTITION.to_string(),
        Some(v) => escape_partition_dir_value(v),
    };
    format!("{}={v}", escape_partition_dir_value(column))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_type() {
        let p = |v: &str, t| parse_partition_value("c", Some(v), t).unwrap();
        assert_eq!(
            p("US/East", PrimitiveType::String),
            Scalar::String("US/East".into())
        );
        assert_eq!(p("-3", PrimitiveType::Byte), Scalar::Byte(-3));
        assert_eq!(p("1.0E-5", PrimitiveType::Double), Scalar::Double(1e-5));
        assert_eq!(
            p("Infinity", PrimitiveType::Float),
            Scalar::Float(f32::INFINITY)
        );
        assert_eq!(p("2021-01-02", PrimitiveType::Date), Scalar::Date(18629));
        assert_eq!(
            p("1970-01-01 00:00:01", PrimitiveType::Timestamp),
            Scalar::Timestamp(1_000_000)
        );
        assert_eq!(
            p("1970-01-01T00:00:01.5Z", PrimitiveType::Timestamp),
            Scalar::Timestamp(1_500_000)
        );
        assert_eq!(
            p("1970-01-01 00:00:01.000001", PrimitiveType::TimestampNtz),
            Scalar::TimestampNtz(1_000_001)
        );
        assert_eq!(
            p("1.230000000000000000", PrimitiveType::Decimal(38, 18)),
            Scalar::Decimal {
                value: 1_230_000_000_000_000_000,
                precision: 38,
                scale: 18
            }
        );
        assert_eq!(
            parse_partition_value("c", Some(""), PrimitiveType::Integer).unwrap(),
            Scalar::Null
        );
        assert_eq!(
            parse_partition_value("c", None, PrimitiveType::String).unwrap(),
            Scalar::Null
        );
        assert!(parse_partition_value("c", Some("x"), PrimitiveType::Integer).is_err());
    }

    #[test]
    fn serialization_round_trips() {
        let cases = [
            (Scalar::Double(1.0), PrimitiveType::Double),
            (
                Scalar::Decimal {
                    value: 120,
                    precision: 5,
                    scale: 2,
                },
                PrimitiveType::Decimal(5, 2),
            ),
            (Scalar::Timestamp(123_456), PrimitiveType::Timestamp),
            (Scalar::TimestampNtz(-1), PrimitiveType::TimestampNtz),
            (Scalar::Date(-400), PrimitiveType::Date),
            (Scalar::String("a=b/c%".into()), PrimitiveType::String),
        ];
        for (v, t) in cases {
            let s = serialize_partition_value(&v);
            assert_eq!(parse_partition_value("c", s.as_deref(), t).unwrap(), v);
        }
        assert_eq!(
            serialize_partition_value(&Scalar::String(String::new())),
            None
        );
    }

    #[test]
    fn hive_escaping() {
        assert_eq!(
            partition_dir_segment("region", Some("US/East")),
            "region=US%2FEast"
        );
        assert_eq!(partition_dir_segment("p", Some("a b=%")), "p=a b%3D%25");
        assert_eq!(
            partition_dir_segment("p", None),
            "p=__HIVE_DEFAULT_PARTITION__"
        );
        assert_eq!(partition_dir_segment("p", Some("😈")), "p=😈");
    }
}
