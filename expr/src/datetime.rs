//! Calendar rules of the date and time functions, in UTC: the units `date_trunc` truncates
//! to, and the Spark datetime patterns `to_date` and `to_timestamp` read strings with.

use chrono::format::{Parsed, StrftimeItems, parse};
use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime, NaiveTime};

const MICROS_PER_DAY: i64 = 86_400_000_000;

/// A unit `date_trunc` truncates to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TruncUnit {
    Year,
    Quarter,
    Month,
    Week,
    Day,
    Hour,
    Minute,
    Second,
    Millisecond,
    Microsecond,
}

/// The unit names `date_trunc` accepts (Spark's), for messages.
pub(crate) const TRUNC_UNITS: [&str; 10] = [
    "YEAR",
    "QUARTER",
    "MONTH",
    "WEEK",
    "DAY",
    "HOUR",
    "MINUTE",
    "SECOND",
    "MILLISECOND",
    "MICROSECOND",
];

impl TruncUnit {
    /// The unit a name gives (Spark's spellings, case-insensitive), if any.
    pub(crate) fn from_name(name: &str) -> Option<TruncUnit> {
        Some(match name.trim().to_ascii_uppercase().as_str() {
            "YEAR" | "YYYY" | "YY" => TruncUnit::Year,
            "QUARTER" => TruncUnit::Quarter,
            "MONTH" | "MM" | "MON" => TruncUnit::Month,
            "WEEK" => TruncUnit::Week,
            "DAY" | "DD" => TruncUnit::Day,
            "HOUR" => TruncUnit::Hour,
            "MINUTE" => TruncUnit::Minute,
            "SECOND" => TruncUnit::Second,
            "MILLISECOND" => TruncUnit::Millisecond,
            "MICROSECOND" => TruncUnit::Microsecond,
            _ => return None,
        })
    }

    /// `micros` (since the epoch, UTC) truncated to the unit; weeks start on Monday.
    pub(crate) fn truncate(self, micros: i64) -> Option<i64> {
        let fixed = |unit: i64| Some(micros - micros.rem_euclid(unit));
        let t = DateTime::from_timestamp_micros(micros)?.naive_utc();
        let day = t.date();
        let first = match self {
            TruncUnit::Microsecond => return Some(micros),
            TruncUnit::Millisecond => return fixed(1_000),
            TruncUnit::Second => return fixed(1_000_000),
            TruncUnit::Minute => return fixed(60_000_000),
            TruncUnit::Hour => return fixed(3_600_000_000),
            TruncUnit::Day => return fixed(MICROS_PER_DAY),
            TruncUnit::Week => {
                day - chrono::Days::new(u64::from(day.weekday().num_days_from_monday()))
            }
            TruncUnit::Month => day.with_day(1)?,
            TruncUnit::Quarter => {
                NaiveDate::from_ymd_opt(day.year(), (day.month0() / 3) * 3 + 1, 1)?
            }
            TruncUnit::Year => NaiveDate::from_ymd_opt(day.year(), 1, 1)?,
        };
        Some(first.and_time(NaiveTime::MIN).and_utc().timestamp_micros())
    }
}

/// A Spark datetime pattern (`yyyy-MM-dd HH:mm:ss.SSS`) as a chrono format, for reading.
/// Letters: `y` year (`yy` two digits), `M` month (`MMM` short name, `MMMM` full name),
/// `d` day, `D` day of year, `H` hour, `h` hour of the half day with `a` (AM/PM), `m`
/// minute, `s` second, `SSS`/`SSSSSS`/`SSSSSSSSS` fraction, `E` day name, `XXX`/`XX`/`Z`
/// zone offset; text in single quotes is literal, other characters stand for themselves.
///
/// # Errors
/// A message naming a pattern letter alluvium does not read, or an unclosed quote.
pub(crate) fn chrono_format(pattern: &str) -> Result<String, String> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\'' {
            // '' is a quote; otherwise literal text up to the closing quote.
            if chars.get(i + 1) == Some(&'\'') {
                out.push('\'');
                i += 2;
                continue;
            }
            let close = chars[i + 1..]
                .iter()
                .position(|c| *c == '\'')
                .ok_or_else(|| format!("format '{pattern}': unclosed quote"))?;
            for l in &chars[i + 1..i + 1 + close] {
                push_literal(&mut out, *l);
            }
            i += close + 2;
            continue;
        }
        if !c.is_ascii_alphabetic() {
            push_literal(&mut out, c);
            i += 1;
            continue;
        }
        let run = chars[i..].iter().take_while(|x| **x == c).count();
        let item = match (c, run) {
            ('y', 2) => "%y",
            ('y', _) => "%Y",
            ('M', 1 | 2) => "%m",
            ('M', 3) => "%b",
            ('M', 4) => "%B",
            ('d', 1 | 2) => "%d",
            ('D', 1..=3) => "%j",
            ('H', 1 | 2) => "%H",
            ('h', 1 | 2) => "%I",
            ('a', 1) => "%p",
            ('m', 1 | 2) => "%M",
            ('s', 1 | 2) => "%S",
            ('S', 3) => "%3f",
            ('S', 6) => "%6f",
            ('S', 9) => "%9f",
            ('E', 1..=3) => "%a",
            ('E', 4) => "%A",
            ('X' | 'x', 3) => "%:z",
            ('X' | 'x', 2) | ('Z', 1..=2) => "%z",
            _ => {
                return Err(format!(
                    "format '{pattern}': the pattern letters {} are not supported",
                    c.to_string().repeat(run)
                ));
            }
        };
        out.push_str(item);
        i += run;
    }
    Ok(out)
}

fn push_literal(out: &mut String, c: char) {
    if c == '%' {
        out.push_str("%%");
    } else {
        out.push(c);
    }
}

/// Reads `text` with a chrono format from [`chrono_format`] as an instant (microseconds
/// since the epoch): fields the format lacks take Spark's defaults (year 1970, month and
/// day 1, time 00:00:00), a wall-clock time without an offset is UTC. `None` if the text
/// does not match the format or names no real date.
pub(crate) fn parse_timestamp_as(text: &str, format: &str) -> Option<i64> {
    let mut p = Parsed::new();
    parse(&mut p, text, StrftimeItems::new(format)).ok()?;
    if p.year().is_none() && p.year_mod_100().is_none() && p.isoyear().is_none() {
        p.set_year(1970).ok()?;
    }
    if p.month().is_none() && p.ordinal().is_none() {
        p.set_month(1).ok()?;
    }
    if p.day().is_none() && p.ordinal().is_none() {
        p.set_day(1).ok()?;
    }
    if p.hour_div_12().is_none() && p.hour_mod_12().is_none() {
        p.set_hour(0).ok()?;
    }
    if p.minute().is_none() {
        p.set_minute(0).ok()?;
    }
    let date = p.to_naive_date().ok()?;
    let time = p.to_naive_time().ok()?;
    let local = NaiveDateTime::new(date, time).and_utc().timestamp_micros();
    let offset = p.offset().map_or(0, |s| i64::from(s) * 1_000_000);
    local.checked_sub(offset)
}

/// The day (since the epoch) an instant falls on, in UTC.
pub(crate) fn day_of(micros: i64) -> Option<i32> {
    i32::try_from(micros.div_euclid(MICROS_PER_DAY)).ok()
}

/// Midnight UTC of a day (since the epoch).
pub(crate) fn midnight(day: i32) -> i64 {
    i64::from(day) * MICROS_PER_DAY
}

#[cfg(test)]
mod tests {
    use super::*;
    use alluvium_txlog::scalar::text::parse_timestamp;

    fn ts(s: &str) -> i64 {
        parse_timestamp(s).unwrap()
    }

    #[test]
    fn truncation_units() {
        let t = ts("2024-05-15T13:45:30.123456Z");
        let trunc = |u: &str| TruncUnit::from_name(u).unwrap().truncate(t).unwrap();
        assert_eq!(trunc("year"), ts("2024-01-01T00:00:00Z"));
        assert_eq!(trunc("QUARTER"), ts("2024-04-01T00:00:00Z"));
        assert_eq!(trunc("mm"), ts("2024-05-01T00:00:00Z"));
        assert_eq!(trunc("week"), ts("2024-05-13T00:00:00Z"));
        assert_eq!(trunc("day"), ts("2024-05-15T00:00:00Z"));
        assert_eq!(trunc("hour"), ts("2024-05-15T13:00:00Z"));
        assert_eq!(trunc("minute"), ts("2024-05-15T13:45:00Z"));
        assert_eq!(trunc("second"), ts("2024-05-15T13:45:30Z"));
        assert_eq!(trunc("millisecond"), ts("2024-05-15T13:45:30.123Z"));
        assert_eq!(trunc("microsecond"), t);
        // Before the epoch, truncation still goes down.
        let before = ts("1969-12-31T23:59:59.5Z");
        assert_eq!(
            TruncUnit::Day.truncate(before),
            Some(ts("1969-12-31T00:00:00Z"))
        );
        assert_eq!(TruncUnit::from_name("fortnight"), None);
    }

    #[test]
    fn spark_patterns_read_strings() {
        let read =
            |text: &str, pattern: &str| parse_timestamp_as(text, &chrono_format(pattern).unwrap());
        assert_eq!(
            read("2024-05-15 13:45:30", "yyyy-MM-dd HH:mm:ss"),
            Some(ts("2024-05-15T13:45:30Z"))
        );
        assert_eq!(
            read("15/05/2024", "dd/MM/yyyy"),
            Some(ts("2024-05-15T00:00:00Z"))
        );
        assert_eq!(read("2024-05", "yyyy-MM"), Some(ts("2024-05-01T00:00:00Z")));
        assert_eq!(
            read(
                "2024-05-15T13:45:30.250+02:00",
                "yyyy-MM-dd'T'HH:mm:ss.SSSXXX"
            ),
            Some(ts("2024-05-15T11:45:30.25Z"))
        );
        assert_eq!(
            read("May 5, 2024 1:02 PM", "MMM d, yyyy h:mm a"),
            Some(ts("2024-05-05T13:02:00Z"))
        );
        assert_eq!(read("2024-13-01", "yyyy-MM-dd"), None);
        assert_eq!(read("2024-05-15 junk", "yyyy-MM-dd"), None);
        assert_eq!(read("5%", "d'%'"), Some(ts("1970-01-05T00:00:00Z")));
        assert!(chrono_format("yyyy-QQ").unwrap_err().contains("QQ"));
        assert!(chrono_format("yyyy'T").unwrap_err().contains("quote"));
        assert_eq!(chrono_format("yyyy''MM").unwrap(), "%Y'%m");
    }
}
