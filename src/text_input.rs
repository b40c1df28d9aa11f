//! Text forms that users of an embedding application type, parsed as the engine reads
//! them: a list of column names; and the text form the engine prints a point in time in.
//! (A version or point in time for time travel is parsed by `VersionSpec`'s `FromStr`.)

/// A point in time (milliseconds since the epoch) as ISO 8601 in UTC with milliseconds,
/// `2024-01-31T12:00:00.000Z`: the form every report and listing prints, which
/// [`VersionSpec`](crate::VersionSpec)'s `FromStr` reads back. Outside chrono's range the
/// number itself.
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
    fn iso_timestamps_read_back() {
        assert_eq!(iso_timestamp(1_700_000_000_123), "2023-11-14T22:13:20.123Z");
        assert_eq!(iso_timestamp(0), "1970-01-01T00:00:00.000Z");
        let ms = -86_400_000 * 365;
        assert_eq!(
            iso_timestamp(ms).parse::<crate::VersionSpec>().ok(),
            Some(crate::VersionSpec::Timestamp(ms))
        );
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
