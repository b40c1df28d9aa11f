//! `INTERVAL` values: a span of calendar months, days and microseconds (Spark's
//! `CalendarInterval`), written `INTERVAL '1' DAY`, `INTERVAL 2 HOURS`, `INTERVAL 1 YEAR 6
//! MONTHS` or `INTERVAL '1 day 12 hours'`, and added to or subtracted from dates and
//! timestamps: months first (a day past the end of the month becomes its last day, as
//! Spark's `add_months`), then days, then microseconds, all in UTC.

use std::fmt;

use chrono::{Datelike, Days, Months, NaiveDate, NaiveDateTime};

/// A span of time. The three parts are kept apart because a month and a day have no fixed
/// length: `2024-01-31 + 1 MONTH` is `2024-02-29`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Interval {
    /// Calendar months (a year is 12).
    pub months: i32,
    /// Calendar days.
    pub days: i32,
    /// Microseconds (hours, minutes, seconds and their fractions).
    pub micros: i64,
}

/// A unit an interval is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IntervalUnit {
    Year,
    Month,
    Week,
    Day,
    Hour,
    Minute,
    Second,
    Millisecond,
    Microsecond,
}

/// The unit names the parser accepts, singular and plural, for suggestions.
pub(crate) const UNIT_NAMES: [&str; 9] = [
    "YEAR",
    "MONTH",
    "WEEK",
    "DAY",
    "HOUR",
    "MINUTE",
    "SECOND",
    "MILLISECOND",
    "MICROSECOND",
];

impl IntervalUnit {
    /// The unit a word names (`DAY`, `days`, ...), if any.
    pub(crate) fn from_word(word: &str) -> Option<IntervalUnit> {
        let w = word.to_ascii_uppercase();
        let w = w.strip_suffix('S').unwrap_or(&w);
        Some(match w {
            "YEAR" => IntervalUnit::Year,
            "MONTH" => IntervalUnit::Month,
            "WEEK" => IntervalUnit::Week,
            "DAY" => IntervalUnit::Day,
            "HOUR" => IntervalUnit::Hour,
            "MINUTE" => IntervalUnit::Minute,
            "SECOND" => IntervalUnit::Second,
            "MILLISECOND" => IntervalUnit::Millisecond,
            "MICROSECOND" => IntervalUnit::Microsecond,
            _ => return None,
        })
    }

    /// The unit's SQL name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            IntervalUnit::Year => "YEAR",
            IntervalUnit::Month => "MONTH",
            IntervalUnit::Week => "WEEK",
            IntervalUnit::Day => "DAY",
            IntervalUnit::Hour => "HOUR",
            IntervalUnit::Minute => "MINUTE",
            IntervalUnit::Second => "SECOND",
            IntervalUnit::Millisecond => "MILLISECOND",
            IntervalUnit::Microsecond => "MICROSECOND",
        }
    }

    /// Microseconds in one unit of a fixed length (hours and below).
    fn micros(self) -> Option<i64> {
        Some(match self {
            IntervalUnit::Hour => 3_600_000_000,
            IntervalUnit::Minute => 60_000_000,
            IntervalUnit::Second => 1_000_000,
            IntervalUnit::Millisecond => 1_000,
            IntervalUnit::Microsecond => 1,
            _ => return None,
        })
    }
}

impl Interval {
    /// `n` calendar months.
    pub fn months(n: i32) -> Interval {
        Interval {
            months: n,
            ..Interval::default()
        }
    }

    /// `n` calendar days.
    pub fn days(n: i32) -> Interval {
        Interval {
            days: n,
            ..Interval::default()
        }
    }

    /// `n` microseconds (`Interval::micros(3_600_000_000)` is an hour).
    pub fn micros(n: i64) -> Interval {
        Interval {
            micros: n,
            ..Interval::default()
        }
    }

    /// `count` units as an interval. `count` is a number as written: an integer, or for
    /// seconds a decimal with up to six fractional digits.
    ///
    /// # Errors
    /// A message when the number is not allowed for the unit or does not fit.
    pub(crate) fn of(count: &str, unit: IntervalUnit) -> Result<Interval, String> {
        let count = count.trim();
        let too_big = || format!("interval {count} {} is out of range", unit.name());
        if unit == IntervalUnit::Second && count.contains('.') {
            let negative = count.starts_with('-');
            let digits = count.trim_start_matches(['-', '+']);
            let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
            if frac.len() > 6 || !frac.chars().all(|c| c.is_ascii_digit()) {
                return Err(format!(
                    "{count} seconds: at most six fractional digits (microseconds)"
                ));
            }
            let int: i64 = if int.is_empty() {
                0
            } else {
                int.parse().map_err(|_| too_big())?
            };
            let frac: i64 = format!("{frac:0<6}").parse().map_err(|_| too_big())?;
            let micros = int
                .checked_mul(1_000_000)
                .and_then(|m| m.checked_add(frac))
                .ok_or_else(too_big)?;
            return Ok(Interval {
                micros: if negative { -micros } else { micros },
                ..Interval::default()
            });
        }
        let n: i64 = count.parse().map_err(|_| {
            format!(
                "interval {count} {}: a whole number is needed (fractions only for SECOND)",
                unit.name()
            )
        })?;
        let int32 = |v: i64| i32::try_from(v).map_err(|_| too_big());
        Ok(match unit {
            IntervalUnit::Year => Interval {
                months: int32(n.checked_mul(12).ok_or_else(too_big)?)?,
                ..Interval::default()
            },
            IntervalUnit::Month => Interval {
                months: int32(n)?,
                ..Interval::default()
            },
            IntervalUnit::Week => Interval {
                days: int32(n.checked_mul(7).ok_or_else(too_big)?)?,
                ..Interval::default()
            },
            IntervalUnit::Day => Interval {
                days: int32(n)?,
                ..Interval::default()
            },
            fixed => Interval {
                micros: n
                    .checked_mul(fixed.micros().unwrap_or(1))
                    .ok_or_else(too_big)?,
                ..Interval::default()
            },
        })
    }

    /// The sum of two intervals, `None` on overflow.
    pub(crate) fn checked_add(self, other: Interval) -> Option<Interval> {
        Some(Interval {
            months: self.months.checked_add(other.months)?,
            days: self.days.checked_add(other.days)?,
            micros: self.micros.checked_add(other.micros)?,
        })
    }

    /// The opposite interval, `None` on overflow.
    pub fn checked_neg(self) -> Option<Interval> {
        Some(Interval {
            months: self.months.checked_neg()?,
            days: self.days.checked_neg()?,
            micros: self.micros.checked_neg()?,
        })
    }

    /// True if the interval has no part below a day, so that a date plus it is a date.
    pub fn is_whole_days(&self) -> bool {
        self.micros == 0
    }

    /// `date` (days since the epoch) plus the months and days of the interval, `None` if
    /// the result is outside the representable dates.
    pub(crate) fn add_to_date(&self, date: i32) -> Option<i32> {
        let d = NaiveDate::from_num_days_from_ce_opt(date.checked_add(EPOCH_DAYS_FROM_CE)?)?;
        let d = add_months(d, self.months)?;
        let d = add_days(d, i64::from(self.days))?;
        d.num_days_from_ce().checked_sub(EPOCH_DAYS_FROM_CE)
    }

    /// `micros` (since the epoch, UTC) plus the interval, `None` if the result is outside
    /// the representable timestamps.
    pub(crate) fn add_to_timestamp(&self, micros: i64) -> Option<i64> {
        let t = chrono::DateTime::from_timestamp_micros(micros)?.naive_utc();
        let date = add_days(add_months(t.date(), self.months)?, i64::from(self.days))?;
        let t = NaiveDateTime::new(date, t.time());
        t.and_utc()
            .timestamp_micros()
            .checked_add(self.micros)
            .filter(|v| chrono::DateTime::from_timestamp_micros(*v).is_some())
    }
}

/// Days from 0001-01-01 (day 1 in chrono's count) to 1970-01-01.
const EPOCH_DAYS_FROM_CE: i32 = 719_163;

fn add_months(d: NaiveDate, months: i32) -> Option<NaiveDate> {
    // chrono clamps a day past the end of the target month to its last day, as Spark does.
    if months >= 0 {
        d.checked_add_months(Months::new(months.unsigned_abs()))
    } else {
        d.checked_sub_months(Months::new(months.unsigned_abs()))
    }
}

fn add_days(d: NaiveDate, days: i64) -> Option<NaiveDate> {
    if days >= 0 {
        d.checked_add_days(Days::new(days.unsigned_abs()))
    } else {
        d.checked_sub_days(Days::new(days.unsigned_abs()))
    }
}

impl fmt::Display for Interval {
    /// SQL that the parser reads back to the same interval: `INTERVAL 1 YEAR 2 MONTH 3 DAY
    /// 4 HOUR 5 MINUTE 6.5 SECOND`, each part signed on its own, zero parts left out.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("INTERVAL")?;
        let mut wrote = false;
        let mut part = |f: &mut fmt::Formatter<'_>, v: i64, unit: &str| -> fmt::Result {
            if v != 0 {
                wrote = true;
                write!(f, " {v} {unit}")?;
            }
            Ok(())
        };
        let (years, months) = (self.months / 12, self.months % 12);
        part(f, i64::from(years), "YEAR")?;
        part(f, i64::from(months), "MONTH")?;
        part(f, i64::from(self.days), "DAY")?;
        let (hours, rest) = (self.micros / 3_600_000_000, self.micros % 3_600_000_000);
        let (minutes, rest) = (rest / 60_000_000, rest % 60_000_000);
        part(f, hours, "HOUR")?;
        part(f, minutes, "MINUTE")?;
        if rest != 0 {
            wrote = true;
            let (secs, frac) = (rest / 1_000_000, (rest % 1_000_000).abs());
            let sign = if rest < 0 && secs == 0 { "-" } else { "" };
            if frac == 0 {
                write!(f, " {secs} SECOND")?;
            } else {
                let frac = format!("{frac:06}");
                write!(f, " {sign}{secs}.{} SECOND", frac.trim_end_matches('0'))?;
            }
        }
        if !wrote {
            f.write_str(" 0 DAY")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_display() {
        use IntervalUnit::*;
        assert_eq!(Interval::of("2", Year).unwrap().months, 24);
        assert_eq!(Interval::of("-3", Week).unwrap().days, -21);
        assert_eq!(Interval::of("2", Hour).unwrap().micros, 7_200_000_000);
        assert_eq!(Interval::of("1.5", Second).unwrap().micros, 1_500_000);
        assert_eq!(Interval::of("-0.000001", Second).unwrap().micros, -1);
        assert!(Interval::of("1.5", Day).is_err());
        assert!(Interval::of("1.1234567", Second).is_err());
        assert!(Interval::of("99999999999", Month).is_err());
        assert_eq!(IntervalUnit::from_word("days"), Some(Day));
        assert_eq!(IntervalUnit::from_word("Hours"), Some(Hour));
        assert_eq!(IntervalUnit::from_word("fortnight"), None);
        let i = Interval {
            months: 14,
            days: -3,
            micros: 3_723_500_000,
        };
        assert_eq!(
            i.to_string(),
            "INTERVAL 1 YEAR 2 MONTH -3 DAY 1 HOUR 2 MINUTE 3.5 SECOND"
        );
        assert_eq!(
            Interval {
                micros: -500_000,
                ..Interval::default()
            }
            .to_string(),
            "INTERVAL -0.5 SECOND"
        );
        assert_eq!(Interval::default().to_string(), "INTERVAL 0 DAY");
    }

    #[test]
    fn arithmetic_clamps_to_the_end_of_the_month() {
        let day = |s: &str| alluvium_txlog::scalar::text::parse_date(s).unwrap();
        let month = Interval {
            months: 1,
            ..Interval::default()
        };
        assert_eq!(
            month.add_to_date(day("2024-01-31")),
            Some(day("2024-02-29"))
        );
        assert_eq!(
            month.checked_neg().unwrap().add_to_date(day("2024-03-31")),
            Some(day("2024-02-29"))
        );
        let ts = |s: &str| alluvium_txlog::scalar::text::parse_timestamp(s).unwrap();
        let i = Interval {
            months: 1,
            days: 1,
            micros: 3_600_000_000,
        };
        assert_eq!(
            i.add_to_timestamp(ts("2023-01-31T23:30:00Z")),
            Some(ts("2023-03-02T00:30:00Z"))
        );
        assert_eq!(
            Interval {
                months: i32::MAX,
                ..Interval::default()
            }
            .add_to_date(0),
            None
        );
        assert_eq!(
            Interval {
                micros: i64::MAX,
                ..Interval::default()
            }
            .add_to_timestamp(1),
            None
        );
    }
}
