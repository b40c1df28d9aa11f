//! The text form of a [`VersionSpec`], as a user types it: `latest`, a version number, or a
//! point in time.

use std::str::FromStr;

use alluvium_txlog::scalar::text::parse_timestamp;

use super::VersionSpec;
use crate::MvccError;

impl FromStr for VersionSpec {
    type Err = MvccError;

    /// Reads `latest` (any case) as [`VersionSpec::Latest`], a non-negative integer as a
    /// [`VersionSpec::Version`], and a point in time (RFC 3339 / ISO 8601 with `Z` or an
    /// offset, or `YYYY-MM-DD[ HH:MM:SS]` read as UTC) as a [`VersionSpec::Timestamp`] at
    /// millisecond precision (a finer time is cut to its millisecond). Surrounding spaces
    /// are ignored.
    ///
    /// A bare integer is always a version: a time given as epoch milliseconds is
    /// `VersionSpec::Timestamp(ms)`, built directly.
    ///
    /// # Errors
    /// [`MvccError::InvalidVersionSpec`] naming the text when it is none of these.
    fn from_str(text: &str) -> Result<VersionSpec, MvccError> {
        let t = text.trim();
        let bad = |reason: &'static str| MvccError::InvalidVersionSpec {
            text: text.to_string(),
            reason,
        };
        if t.eq_ignore_ascii_case("latest") {
            return Ok(VersionSpec::Latest);
        }
        if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
            return t
                .parse()
                .map(VersionSpec::Version)
                .map_err(|_| bad("the version number is out of range"));
        }
        parse_timestamp(t)
            .map(|us| VersionSpec::Timestamp(us.div_euclid(1000)))
            .ok_or_else(|| {
                bad("expected `latest`, a version number, or a time (RFC 3339 such as 2024-01-31T12:00:00Z, or `YYYY-MM-DD[ HH:MM:SS]` in UTC)")
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_times_and_latest_parse() {
        let spec = |t: &str| t.parse::<VersionSpec>().unwrap();
        assert_eq!(spec("latest"), VersionSpec::Latest);
        assert_eq!(spec(" LATEST "), VersionSpec::Latest);
        assert_eq!(spec("0"), VersionSpec::Version(0));
        assert_eq!(spec("42"), VersionSpec::Version(42));
        assert_eq!(spec("18446744073709551615"), VersionSpec::Version(u64::MAX));
        assert_eq!(spec("1970-01-01T00:00:01Z"), VersionSpec::Timestamp(1000));
        assert_eq!(spec("1970-01-01 00:00:01"), VersionSpec::Timestamp(1000));
        assert_eq!(spec("1970-01-01"), VersionSpec::Timestamp(0));
        assert_eq!(
            spec("1970-01-01T01:00:01+01:00"),
            VersionSpec::Timestamp(1000)
        );
        assert_eq!(
            spec("2023-11-14T22:13:20.123Z"),
            VersionSpec::Timestamp(1_700_000_000_123)
        );
        assert_eq!(
            spec("1969-12-31T23:59:59.9995Z"),
            VersionSpec::Timestamp(-1)
        );
    }

    #[test]
    fn other_text_is_refused_naming_it() {
        for bad in [
            "",
            "  ",
            "yesterday",
            "-1",
            "1.5",
            "v3",
            "18446744073709551616",
        ] {
            let e = bad.parse::<VersionSpec>().unwrap_err();
            assert!(
                matches!(&e, MvccError::InvalidVersionSpec { text, .. } if text == bad),
                "{bad:?}: {e}"
            );
            assert!(e.to_string().contains(&format!("{bad:?}")), "{e}");
        }
        let e = "18446744073709551616".parse::<VersionSpec>().unwrap_err();
        assert!(e.to_string().contains("out of range"), "{e}");
    }
}
