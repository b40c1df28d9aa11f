//! Text forms of typed values shared by partition values, statistics and expression
//! literals: dates, timestamps and decimals.

use chrono::{DateTime, NaiveDate, NaiveDateTime, Timelike};

const UNIX_EPOCH_DAYS_FROM_CE: i32 = 719_163;

/// Parses `YYYY-MM-DD` into days since the epoch.
pub fn parse_date(s: &str) -> Option<i32> {
    let d = NaiveDate::parse_from_str(s.trim(), "%Y-%m-%d").ok()?;
    Some(chrono::Datelike::num_days_from_ce(&d) - UNIX_EPOCH_DAYS_FROM_CE)
}

/// Formats days since the epoch as `YYYY-MM-DD`.
pub fn format_date(days: i32) -> String {
    NaiveDate::from_num_days_from_ce_opt(days + UNIX_EPOCH_DAYS_FROM_CE)
        .map_or_else(|| days.to_string(), |d| d.format("%Y-%m-%d").to_string())
}

fn naive_micros(dt: &NaiveDateTime) -> i64 {
    dt.and_utc().timestamp_micros()
}

/// Parses a timestamp written without a zone (`YYYY-MM-DD[ T]HH:MM[:SS[.f]]` or a bare date)
/// into microseconds since the epoch of that wall-clock time read as UTC.
pub fn parse_naive_timestamp(s: &str) -> Option<i64> {
    let s = s.trim();
    for fmt in [
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M",
        "%Y-%m-%dT%H:%M",
    ] {
        if let Ok(dt) = NaiveDateTime::parse_from_str(s, fmt) {
            return Some(naive_micros(&dt));
        }
    }
    parse_date(s).map(|d| i64::from(d) * 86_400_000_000)
}

/// Parses a timestamp that may carry a zone: RFC 3339 / ISO 8601 with `Z` or an offset
/// (`+01:00`, `+0100`, `+01`), or a zone-less form read as UTC.
pub fn parse_timestamp(s: &str) -> Option<i64> {
    let t = s.trim();
    if let Ok(dt) = DateTime::parse_from_rfc3339(t) {
        return Some(dt.timestamp_micros());
    }
    for fmt in [
        "%Y-%m-%dT%H:%M:%S%.f%#z",
        "%Y-%m-%d %H:%M:%S%.f%#z",
        "%Y-%m-%dT%H:%M:%S%.f%:z",
        "%Y-%m-%d %H:%M:%S%.f%:z",
    ] {
        if let Ok(dt) = DateTime::parse_from_str(t, fmt) {
            return Some(dt.timestamp_micros());
        }
    }
    let zless = t
        .strip_suffix('Z')
        .or_else(|| t.strip_suffix(" UTC"))
        .unwrap_or(t);
    parse_naive_timestamp(zless)
}

/// True when a timestamp text carries an explicit offset other than UTC (`Z`, `+00:00`).
/// Spark has written such statistics with the offset truncated to whole minutes, so bounds
/// parsed from them may be off by up to a minute.
pub fn has_non_utc_offset(s: &str) -> bool {
    let t = s.trim();
    // Skip the date (`YYYY-MM-DD`, whose dashes are not offsets), then look for a sign.
    let Some(time) = t.get(10..) else {
        return false;
    };
    match time.rfind(['+', '-']) {
        Some(i) => {
            let offset: String = time[i + 1..].chars().filter(char::is_ascii_digit).collect();
            offset.chars().any(|c| c != '0')
        }
        None => false,
    }
}

/// Formats microseconds since the epoch as ISO 8601 UTC with microseconds
/// (`1970-01-01T00:00:00.000000Z`), the form the protocol recommends for partition values.
pub fn format_timestamp(micros: i64) -> String {
    DateTime::from_timestamp_micros(micros).map_or_else(
        || micros.to_string(),
        |dt| dt.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string(),
    )
}

/// Formats microseconds as a zone-less `YYYY-MM-DD HH:MM:SS[.ffffff]` (timestamp_ntz
/// partition values).
pub fn format_naive_timestamp(micros: i64) -> String {
    match DateTime::from_timestamp_micros(micros) {
        Some(dt) => {
            let n = dt.naive_utc();
            if n.nanosecond() == 0 {
                n.format("%Y-%m-%d %H:%M:%S").to_string()
            } else {
                n.format("%Y-%m-%d %H:%M:%S%.6f").to_string()
            }
        }
        None => micros.to_string(),
    }
}

/// Formats microseconds as milliseconds-precision ISO UTC (`2021-01-01T00:00:00.123Z`), the
/// form of timestamp statistics.
pub fn format_timestamp_millis(micros: i64) -> String {
    DateTime::from_timestamp_micros(micros.div_euclid(1000) * 1000).map_or_else(
        || micros.to_string(),
        |dt| dt.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
    )
}

/// Formats microseconds as milliseconds-precision zone-less ISO (`2021-01-01T00:00:00.123`),
/// the form of timestamp_ntz statistics.
pub fn format_naive_timestamp_millis(micros: i64) -> String {
    DateTime::from_timestamp_micros(micros.div_euclid(1000) * 1000).map_or_else(
        || micros.to_string(),
        |dt| dt.naive_utc().format("%Y-%m-%dT%H:%M:%S%.3f").to_string(),
    )
}

/// Parses decimal text (`-12.340`, `1.2E+3`) into an unscaled value at `scale`.
/// Digits beyond the scale must be zeros (the value must be exact).
///
/// Not `arrow_cast::parse::parse_decimal`: arrow rounds digits beyond the scale (`1.005` at
/// scale 2 becomes 101), while a statistic or partition value must be exact, so an inexact
/// value is refused here (`None`) rather than silently widened or narrowed. This also
/// accepts the exponent forms Delta's writers produce (`1.2E+3`) and refuses a huge
/// exponent without materialising its zeros.
pub fn parse_decimal(s: &str, precision: u8, scale: u8) -> Option<i128> {
    let s = s.trim();
    let (mantissa, exp) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], s[i + 1..].parse::<i32>().ok()?),
        None => (s, 0),
    };
    let (neg, digits) = match mantissa.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, mantissa.strip_prefix('+').unwrap_or(mantissa)),
    };
    let (int_part, frac_part) = match digits.split_once('.') {
        Some((i, f)) => (i, f),
        None => (digits, ""),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    if !int_part
        .bytes()
        .chain(frac_part.bytes())
        .all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let all = format!("{int_part}{frac_part}");
    // value = all * 10^(exp - frac_len); we want value * 10^scale. In i64 this cannot
    // overflow, whatever the exponent.
    let shift = i64::from(exp) - i64::try_from(frac_part.len()).ok()? + i64::from(scale);
    let kept = if shift >= 0 {
        all.as_str()
    } else {
        let cut = usize::try_from(shift.unsigned_abs()).unwrap_or(usize::MAX);
        let (keep, dropped) = all.split_at(all.len().saturating_sub(cut));
        if dropped.bytes().any(|b| b != b'0') {
            return None;
        }
        keep
    };
    let significant = kept.trim_start_matches('0');
    if significant.is_empty() {
        return Some(0);
    }
    // Check the precision before appending the zeros, so that a huge exponent is refused
    // instead of materialized.
    let zeros = usize::try_from(shift).unwrap_or(0);
    if significant.len().saturating_add(zeros) > usize::from(precision) {
        return None;
    }
    let v: i128 = format!("{significant}{}", "0".repeat(zeros)).parse().ok()?;
    Some(if neg { -v } else { v })
}

/// Formats an unscaled decimal with all its scale digits (`1.230`, `-0.005`, `7` at scale
/// 0), through arrow's decimal formatting (the same text; `format_decimal_matches_ours`
/// compares it with the printer this replaced).
pub fn format_decimal(value: i128, scale: u8) -> String {
    use arrow_array::types::{Decimal128Type, DecimalType};
    // Arrow takes the scale as an i8. Delta's scales stop at 38; beyond the 39 digits an
    // i128 can have, every further scale digit is one more leading zero after the point.
    const ALL_DIGITS: i8 = 39;
    let shown = i8::try_from(scale).map_or(ALL_DIGITS, |s| s.min(ALL_DIGITS));
    let text = Decimal128Type::format_decimal(value, 38, shown);
    let extra = usize::from(scale).saturating_sub(39);
    if extra == 0 {
        return text;
    }
    text.replacen("0.", &format!("0.{}", "0".repeat(extra)), 1)
}

/// Formats a double the way Java's `Double.toString` does for the common cases Delta
/// partition values use (`1.0`, `NaN`, `Infinity`, `1.0E-5`).
pub fn format_java_double(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    let abs = v.abs();
    if abs == 0.0 || (1e-3..1e7).contains(&abs) {
        let s = format!("{v}");
        if s.contains('.') { s } else { format!("{s}.0") }
    } else {
        let s = format!("{v:E}");
        match s.split_once('E') {
            Some((m, e)) if !m.contains('.') => format!("{m}.0E{e}"),
            _ => s,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The printer [`format_decimal`] had before it used arrow's, kept as the reference.
    fn reference_format_decimal(value: i128, scale: u8) -> String {
        let neg = value < 0;
        let digits = value.unsigned_abs().to_string();
        let scale = usize::from(scale);
        let body = if scale == 0 {
            digits
        } else if digits.len() > scale {
            format!(
                "{}.{}",
                &digits[..digits.len() - scale],
                &digits[digits.len() - scale..]
            )
        } else {
            format!("0.{}{}", "0".repeat(scale - digits.len()), digits)
        };
        if neg { format!("-{body}") } else { body }
    }

    /// Arrow's decimal text is ours on the edge cases: zero, negative, scale 0, scale equal
    /// to the digits and to the precision, the i128 extremes, and scales beyond Delta's 38.
    #[test]
    fn format_decimal_matches_ours() {
        let values = [
            0,
            1,
            -1,
            5,
            -5,
            123,
            -123,
            10i128.pow(37),
            -(10i128.pow(37)),
            10i128.pow(38) - 1,
            -(10i128.pow(38) - 1),
            i128::MAX,
            i128::MIN,
            i128::MIN + 1,
        ];
        for v in values {
            for scale in [0, 1, 2, 3, 18, 37, 38, 39, 40, 127, 128, 200, 255] {
                assert_eq!(
                    format_decimal(v, scale),
                    reference_format_decimal(v, scale),
                    "{v} at scale {scale}"
                );
            }
        }
        assert_eq!(format_decimal(-5, 3), "-0.005");
        assert_eq!(format_decimal(0, 2), "0.00");
        assert_eq!(format_decimal(12345, 5), "0.12345");
        assert_eq!(
            format_decimal(-(10i128.pow(38) - 1), 38),
            format!("-0.{}", "9".repeat(38))
        );
    }

    #[test]
    fn dates_and_timestamps() {
        assert_eq!(parse_date("1970-01-02"), Some(1));
        assert_eq!(format_date(-1), "1969-12-31");
        assert_eq!(
            parse_timestamp("1970-01-01T00:00:00.123456Z"),
            Some(123_456)
        );
        assert_eq!(parse_timestamp("1970-01-01 01:00:00+01:00"), Some(0));
        assert_eq!(parse_timestamp("1970-01-01 00:00:01"), Some(1_000_000));
        assert_eq!(
            parse_timestamp("2021-09-08T11:11:11.000-07:00"),
            parse_timestamp("2021-09-08T18:11:11Z")
        );
        assert_eq!(
            parse_naive_timestamp("2021-11-18 02:30:00.123456"),
            parse_timestamp("2021-11-18T02:30:00.123456Z")
        );
        assert_eq!(format_timestamp(123_456), "1970-01-01T00:00:00.123456Z");
        assert_eq!(format_timestamp_millis(1_999), "1970-01-01T00:00:00.001Z");
        assert_eq!(format_naive_timestamp(1_000_000), "1970-01-01 00:00:01");
        assert!(has_non_utc_offset("1900-01-01T00:00:00.000-07:52"));
        assert!(!has_non_utc_offset("1900-01-01T00:00:00.000Z"));
        assert!(!has_non_utc_offset("2021-01-01T00:00:00.000"));
    }

    #[test]
    fn decimals() {
        assert_eq!(
            parse_decimal("1.230000000000000000", 38, 18),
            Some(1_230_000_000_000_000_000)
        );
        assert_eq!(parse_decimal("1.23", 5, 2), Some(123));
        assert_eq!(parse_decimal("-1.2", 5, 2), Some(-120));
        assert_eq!(parse_decimal("1.2E+1", 5, 2), Some(1200));
        assert_eq!(parse_decimal("1.234", 5, 2), None);
        assert_eq!(parse_decimal("1.230", 5, 2), Some(123));
        assert_eq!(parse_decimal("123456", 5, 2), None);
        assert_eq!(parse_decimal("abc", 5, 2), None);
        assert_eq!(format_decimal(123, 2), "1.23");
        assert_eq!(format_decimal(-5, 3), "-0.005");
        assert_eq!(format_decimal(7, 0), "7");
    }

    /// Found by the `filter_expr` fuzz target (`st.x>00E2000000000` against a
    /// `decimal(38,18)` column): the exponent's zeros were materialized (2 GB) before the
    /// precision check, and extreme exponents overflowed the scale arithmetic.
    #[test]
    fn fuzz_regression_huge_decimal_exponents() {
        assert_eq!(parse_decimal("00E2000000000", 38, 18), Some(0));
        assert_eq!(parse_decimal("1E2000000000", 38, 18), None);
        assert_eq!(parse_decimal("1E2147483647", 38, 18), None);
        assert_eq!(parse_decimal("1E-2147483648", 38, 255), None);
        assert_eq!(parse_decimal("0E2147483647", 5, 2), Some(0));
        assert_eq!(parse_decimal("-0.0E-2147483648", 5, 2), Some(0));
        assert_eq!(parse_decimal("1E35", 38, 2), Some(10i128.pow(37)));
        assert_eq!(parse_decimal("1E36", 38, 2), None);
        assert_eq!(parse_decimal("12.5E-1", 5, 2), Some(125));
    }

    #[test]
    fn java_doubles() {
        assert_eq!(format_java_double(1.0), "1.0");
        assert_eq!(format_java_double(0.00001), "1.0E-5");
        assert_eq!(format_java_double(f64::NAN), "NaN");
        assert_eq!(format_java_double(f64::NEG_INFINITY), "-Infinity");
        assert_eq!(format_java_double(2.5), "2.5");
    }
}
