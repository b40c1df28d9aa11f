//! Delta statistics as Iceberg bounds: Iceberg's binary single-value serialization (table
//! spec, Appendix D "Binary single-value serialization") of `minValues` / `maxValues`.
//!
//! Iceberg readers skip a file when a predicate cannot hold between its bounds, so a bound
//! that is too tight loses rows silently. Two Delta habits need care:
//! - Timestamps are written to millisecond precision, truncated: the true maximum can be up
//!   to 999 µs above the stated one, so an upper bound is rounded up to the millisecond's
//!   last microsecond.
//! - String bounds are cut to a prefix. A cut minimum is still a lower bound. A cut maximum
//!   is an upper bound only when the writer marked it (alluvium appends U+10FFFF, which is
//!   above every continuation in UTF-8 byte order, Iceberg's string order); a maximum of 32
//!   characters or more without that mark may have been cut and is left out.

use alluvium_txlog::scalar::text::{
    parse_date, parse_decimal, parse_naive_timestamp, parse_timestamp,
};
use alluvium_txlog::stats::STRING_PREFIX_LENGTH;
use serde_json::Value;

use crate::schema::IceType;

/// The mark alluvium appends to a cut string maximum.
const CUT_MAX_MARK: char = '\u{10FFFF}';

/// The binary form of a Delta statistics bound of type `ty`, or `None` when the value does
/// not parse or cannot serve as a bound on that side (see the module doc).
pub fn bound(value: &Value, ty: IceType, upper: bool) -> Option<Vec<u8>> {
    match ty {
        IceType::Boolean => value.as_bool().map(|b| vec![u8::from(b)]),
        IceType::Int => {
            let v = i32::try_from(value.as_i64()?).ok()?;
            Some(v.to_le_bytes().to_vec())
        }
        IceType::Long => Some(value.as_i64()?.to_le_bytes().to_vec()),
        IceType::Float => {
            let v = number(value)? as f32;
            v.is_finite().then(|| v.to_le_bytes().to_vec())
        }
        IceType::Double => {
            let v = number(value)?;
            v.is_finite().then(|| v.to_le_bytes().to_vec())
        }
        IceType::Decimal(p, s) => {
            let text = match value {
                Value::Number(n) => n.to_string(),
                Value::String(s) => s.clone(),
                _ => return None,
            };
            decimal_bytes(parse_decimal(&text, p, s)?)
        }
        IceType::Date => Some(parse_date(value.as_str()?)?.to_le_bytes().to_vec()),
        IceType::TimestampTz | IceType::Timestamp => {
            let text = value.as_str()?;
            let micros = if ty == IceType::TimestampTz {
                parse_timestamp(text)?
            } else {
                parse_naive_timestamp(text)?
            };
            let micros = if upper && micros.rem_euclid(1000) == 0 {
                micros.checked_add(999)?
            } else {
                micros
            };
            Some(micros.to_le_bytes().to_vec())
        }
        IceType::String => {
            let s = value.as_str()?;
            if upper && s.chars().count() >= STRING_PREFIX_LENGTH && !s.ends_with(CUT_MAX_MARK) {
                return None;
            }
            Some(s.as_bytes().to_vec())
        }
        IceType::Binary => None,
    }
}

fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// Two's-complement big-endian with the fewest bytes that keep the sign.
pub fn decimal_bytes(v: i128) -> Option<Vec<u8>> {
    let full = v.to_be_bytes();
    let mut start = 0;
    while start < 15 {
        let (b, next) = (full[start], full[start + 1]);
        let redundant = (b == 0x00 && next & 0x80 == 0) || (b == 0xff && next & 0x80 != 0);
        if !redundant {
            break;
        }
        start += 1;
    }
    Some(full[start..].to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_are_little_endian() {
        assert_eq!(
            bound(&json!(1), IceType::Int, false),
            Some(vec![1, 0, 0, 0])
        );
        assert_eq!(
            bound(&json!(-2), IceType::Long, false),
            Some((-2i64).to_le_bytes().to_vec())
        );
        assert_eq!(
            bound(&json!(1.5), IceType::Double, true),
            Some(1.5f64.to_le_bytes().to_vec())
        );
        assert_eq!(
            bound(&json!("2021-01-02"), IceType::Date, false),
            Some(18629i32.to_le_bytes().to_vec())
        );
    }

    #[test]
    fn decimals_use_the_fewest_bytes() {
        assert_eq!(decimal_bytes(0), Some(vec![0]));
        assert_eq!(decimal_bytes(127), Some(vec![0x7f]));
        assert_eq!(decimal_bytes(128), Some(vec![0x00, 0x80]));
        assert_eq!(decimal_bytes(-1), Some(vec![0xff]));
        assert_eq!(decimal_bytes(-129), Some(vec![0xff, 0x7f]));
        assert_eq!(
            bound(&json!(12.34), IceType::Decimal(5, 2), false),
            Some(vec![0x04, 0xd2])
        );
    }

    #[test]
    fn a_millisecond_maximum_is_rounded_up_to_its_last_microsecond() {
        let v = json!("2021-01-01T00:00:00.123Z");
        let lo = i64::from_le_bytes(
            bound(&v, IceType::TimestampTz, false)
                .unwrap()
                .try_into()
                .unwrap(),
        );
        let hi = i64::from_le_bytes(
            bound(&v, IceType::TimestampTz, true)
                .unwrap()
                .try_into()
                .unwrap(),
        );
        assert_eq!(hi - lo, 999);
        assert_eq!(lo % 1_000_000, 123_000);
    }

    #[test]
    fn a_cut_string_maximum_is_a_bound_only_with_its_mark() {
        let long = "a".repeat(STRING_PREFIX_LENGTH);
        assert_eq!(
            bound(&json!(long), IceType::String, false),
            Some(long.clone().into_bytes())
        );
        assert_eq!(bound(&json!(long), IceType::String, true), None);
        let marked = format!("{long}{CUT_MAX_MARK}");
        assert_eq!(
            bound(&json!(marked), IceType::String, true),
            Some(marked.into_bytes())
        );
        assert_eq!(
            bound(&json!("short"), IceType::String, true),
            Some(b"short".to_vec())
        );
    }
}
