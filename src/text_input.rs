//! Text forms that users of an embedding application type, parsed as the engine reads
//! them: a point in time for time travel, and a list of column names; and the text form
//! the engine prints a point in time in.

use alluvium_txlog::scalar::text::parse_timestamp;

/// Milliseconds since the epoch for a point in time written as epoch milliseconds, RFC 3339
/// / ISO 8601 with `Z` or an offset, or `YYYY-MM-DD[ HH:MM:SS]` read as UTC; `None` when
/// the text is none of these. The value for
/// [`VersionSpec::Timestamp`](crate::VersionSpec::Timestamp).
pub fn timestamp_ms(text: &str) -> Option<i64> {
    if let Ok(ms) = text.trim().parse::<i64>() {
        return Some(ms);
    }
    parse_timestamp(text).map(|us| us.div_euclid(1000))
}

/// A point in time (milliseconds since the epoch) as ISO 8601 in UTC with milliseconds,
/// `2024-01-31T12:00:00.000Z`: the form every report and listing prints, which
/// [`timestamp_ms`] reads back. Outside chrono's range the number itself.
pub fn iso_timestamp(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms).map_or_else(
        || ms.to_string(),
        |t| t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
    )
}

/// Splits a comma-separated list of column names, honouring backtick quoting
/// (`` `a,b`.c ``), as Delta reads `delta.dataSkippingStatsColumns`.
pub fn column_list(text: &str) -> Vec<String> {
    alluvium_txlog::properties::split_column_list(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_in_every_accepted_form() {
        assert_eq!(timestamp_ms("1700000000123"), Some(1_700_000_000_123));
        assert_eq!(timestamp_ms("1970-01-01T00:00:01Z"), Some(1000));
        assert_eq!(timestamp_ms("1970-01-01 00:00:01"), Some(1000));
        assert_eq!(timestamp_ms("1970-01-01T01:00:01+01:00"), Some(1000));
        assert_eq!(timestamp_ms("yesterday"), None);
    }

    #[test]
    fn iso_timestamps_read_back() {
        assert_eq!(iso_timestamp(1_700_000_000_123), "2023-11-14T22:13:20.123Z");
        assert_eq!(iso_timestamp(0), "1970-01-01T00:00:00.000Z");
        let ms = -86_400_000 * 365;
        assert_eq!(timestamp_ms(&iso_timestamp(ms)), Some(ms));
        assert_eq!(iso_timestamp(i64::MAX), i64::MAX.to_string());
    }

    #[test]
    fn column_lists_keep_quoted_commas() {
        assert_eq!(
            column_list("a, `b,c`.d"),
            vec!["a".to_string(), "`b,c`.d".to_string()]
        );
    }
}
