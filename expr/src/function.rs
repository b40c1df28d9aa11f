//! The built-in functions callable as `name(args)`: their names (with Spark's aliases), how
//! many arguments each takes and which are deterministic. Typing is in `value.rs` with the
//! other forms, evaluation in `eval/function.rs`.
//!
//! `CAST`, `COALESCE`, `EXTRACT` and the calendar fields (`YEAR(x)`, ...) have forms of
//! their own in [`Expr`](crate::Expr); they are listed here only as names a misspelling
//! may have meant.

/// A built-in function. New functions are added over time: match with a wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Function {
    /// `lower(s)`: lower case (alias `lcase`).
    Lower,
    /// `upper(s)`: upper case (alias `ucase`).
    Upper,
    /// `trim(s)`: without leading and trailing spaces (U+0020 only, as Spark).
    Trim,
    /// `ltrim(s)`: without leading spaces.
    Ltrim,
    /// `rtrim(s)`: without trailing spaces.
    Rtrim,
    /// `length(s)`: characters of a string, bytes of a binary (aliases `char_length`,
    /// `character_length`).
    Length,
    /// `substring(s, pos [, len])` / `substring(s FROM pos [FOR len])`: `len` characters
    /// from the 1-based position `pos` (negative counts from the end), as Spark (alias
    /// `substr`).
    Substring,
    /// `concat(a, b, ...)`: the strings joined; NULL if any is NULL.
    Concat,
    /// `starts_with(s, prefix)` (alias `startswith`).
    StartsWith,
    /// `ends_with(s, suffix)` (alias `endswith`).
    EndsWith,
    /// `contains(s, part)`.
    Contains,
    /// `replace(s, search [, replacement])`: every occurrence replaced (removed without a
    /// replacement); an empty `search` leaves `s` as it is.
    Replace,
    /// `date_trunc(unit, x)`: a timestamp truncated to `'YEAR'`, `'QUARTER'`, `'MONTH'`,
    /// `'WEEK'`, `'DAY'`, `'HOUR'`, `'MINUTE'`, `'SECOND'`, `'MILLISECOND'` or
    /// `'MICROSECOND'`.
    DateTrunc,
    /// `to_date(s [, format])`: a date from a string (Spark datetime pattern) or a
    /// timestamp.
    ToDate,
    /// `to_timestamp(s [, format])`: a timestamp from a string (Spark datetime pattern, UTC)
    /// or a date.
    ToTimestamp,
    /// `current_date()` / `current_date`: today in UTC, fixed when the command binds its
    /// expressions.
    CurrentDate,
    /// `current_timestamp()` / `current_timestamp` / `now()`: the current instant, fixed
    /// when the command binds its expressions.
    CurrentTimestamp,
    /// `abs(x)`.
    Abs,
    /// `round(x [, d])`: half away from zero, to `d` decimal places (0 by default;
    /// negative rounds to tens, hundreds, ...).
    Round,
    /// `floor(x)`: the largest integral value not above `x`.
    Floor,
    /// `ceil(x)`: the smallest integral value not below `x` (alias `ceiling`).
    Ceil,
    /// `greatest(a, b, ...)`: the largest non-NULL argument (NULL if all are NULL).
    Greatest,
    /// `least(a, b, ...)`: the smallest non-NULL argument (NULL if all are NULL).
    Least,
    /// `nullif(a, b)`: NULL if `a = b`, else `a`.
    NullIf,
}

/// Every function with its canonical name, in the order suggestions prefer.
const ALL: [(Function, &str); 24] = [
    (Function::Lower, "lower"),
    (Function::Upper, "upper"),
    (Function::Trim, "trim"),
    (Function::Ltrim, "ltrim"),
    (Function::Rtrim, "rtrim"),
    (Function::Length, "length"),
    (Function::Substring, "substring"),
    (Function::Concat, "concat"),
    (Function::StartsWith, "starts_with"),
    (Function::EndsWith, "ends_with"),
    (Function::Contains, "contains"),
    (Function::Replace, "replace"),
    (Function::DateTrunc, "date_trunc"),
    (Function::ToDate, "to_date"),
    (Function::ToTimestamp, "to_timestamp"),
    (Function::CurrentDate, "current_date"),
    (Function::CurrentTimestamp, "current_timestamp"),
    (Function::Abs, "abs"),
    (Function::Round, "round"),
    (Function::Floor, "floor"),
    (Function::Ceil, "ceil"),
    (Function::Greatest, "greatest"),
    (Function::Least, "least"),
    (Function::NullIf, "nullif"),
];

/// Other spellings Spark accepts.
const ALIASES: [(&str, Function); 9] = [
    ("lcase", Function::Lower),
    ("ucase", Function::Upper),
    ("char_length", Function::Length),
    ("character_length", Function::Length),
    ("substr", Function::Substring),
    ("startswith", Function::StartsWith),
    ("endswith", Function::EndsWith),
    ("ceiling", Function::Ceil),
    ("now", Function::CurrentTimestamp),
];

/// Names with forms of their own in the grammar, for suggestions only.
const SPECIAL_FORMS: [&str; 14] = [
    "cast",
    "coalesce",
    "extract",
    "year",
    "quarter",
    "month",
    "weekofyear",
    "day",
    "dayofmonth",
    "dayofweek",
    "dayofyear",
    "hour",
    "minute",
    "second",
];

impl Function {
    /// The canonical SQL name, as `Display` prints it.
    pub fn name(self) -> &'static str {
        ALL.iter().find(|(f, _)| *f == self).map_or("?", |(_, n)| n)
    }

    /// The function a name calls (case-insensitive, aliases included), if any.
    pub fn lookup(name: &str) -> Option<Function> {
        ALL.iter()
            .find(|(_, n)| n.eq_ignore_ascii_case(name))
            .map(|(f, _)| *f)
            .or_else(|| {
                ALIASES
                    .iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case(name))
                    .map(|(_, f)| *f)
            })
    }

    /// Every name a call may use, canonical names first (for "did you mean").
    pub(crate) fn all_names() -> impl Iterator<Item = &'static str> {
        ALL.iter()
            .map(|(_, n)| *n)
            .chain(SPECIAL_FORMS)
            .chain(ALIASES.iter().map(|(n, _)| *n))
    }

    /// The fewest and the most arguments (`None`: any number).
    pub fn arity(self) -> (usize, Option<usize>) {
        use Function::*;
        match self {
            CurrentDate | CurrentTimestamp => (0, Some(0)),
            Lower | Upper | Trim | Ltrim | Rtrim | Length | Abs | Floor | Ceil => (1, Some(1)),
            StartsWith | EndsWith | Contains | DateTrunc | NullIf => (2, Some(2)),
            Round | ToDate | ToTimestamp => (1, Some(2)),
            Substring | Replace => (2, Some(3)),
            Concat => (1, None),
            Greatest | Least => (2, None),
        }
    }

    /// False for functions whose value depends on when they are evaluated
    /// (`current_date`, `current_timestamp`): refused where a value must not change
    /// (CHECK constraints, generated columns).
    pub fn is_deterministic(self) -> bool {
        !matches!(self, Function::CurrentDate | Function::CurrentTimestamp)
    }

    /// True if evaluating the function can fail on a value (overflow, a string that does
    /// not parse), so that connectives evaluate it only on the rows that need it.
    pub(crate) fn may_fail(self) -> bool {
        use Function::*;
        matches!(
            self,
            Abs | Round | Floor | Ceil | ToDate | ToTimestamp | DateTrunc
        )
    }
}

/// `n` of a thing, in words (`1 argument`, `2 arguments`).
pub(crate) fn plural(n: usize, one: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {one}s")
    }
}

/// How many arguments a function takes, in words.
pub(crate) fn arity_words(min: usize, max: Option<usize>) -> String {
    match max {
        Some(0) => "no arguments".into(),
        Some(m) if m == min => format!("exactly {}", plural(m, "argument")),
        Some(m) if m == min + 1 => format!("{min} or {m} arguments"),
        Some(m) => format!("{min} to {m} arguments"),
        None => format!("at least {}", plural(min, "argument")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_aliases_and_arity() {
        for (f, n) in ALL {
            assert_eq!(f.name(), n);
            assert_eq!(Function::lookup(n), Some(f));
            assert_eq!(Function::lookup(&n.to_ascii_uppercase()), Some(f));
        }
        assert_eq!(Function::lookup("SUBSTR"), Some(Function::Substring));
        assert_eq!(Function::lookup("now"), Some(Function::CurrentTimestamp));
        assert_eq!(Function::lookup("cast"), None);
        assert_eq!(Function::lookup("nope"), None);
        assert_eq!(Function::Concat.arity(), (1, None));
        assert!(!Function::CurrentDate.is_deterministic());
        assert!(Function::Lower.is_deterministic());
        assert!(Function::all_names().any(|n| n == "extract"));
    }
}
