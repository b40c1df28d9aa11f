//! Evaluation of the date and time forms over Arrow arrays, in UTC: calendar fields,
//! interval arithmetic, `date_trunc`, `to_date` and `to_timestamp`. Values are computed
//! from the stored days and microseconds, never through Arrow's time-zone machinery (which
//! cannot read the zone name `UTC` without the `chrono-tz` feature).

use std::sync::Arc;

use arrow_arith::temporal::{DatePart, date_part};
use arrow_array::cast::AsArray;
use arrow_array::types::{Date32Type, TimestampMicrosecondType};
use arrow_array::{
    Array, ArrayRef, Date32Array, StringArray, TimestampMicrosecondArray, new_null_array,
};
use arrow_schema::{DataType as ArrowType, TimeUnit};

use alluvium_txlog::scalar::Scalar;
use alluvium_txlog::scalar::text::{parse_date, parse_timestamp};

use super::failed;
use crate::datetime::{TruncUnit, chrono_format, day_of, midnight, parse_timestamp_as};
use crate::interval::Interval;
use crate::value::{BoundExpr, BoundKind};
use crate::{DateField, Result};

/// The days or instants of a date or timestamp array (NULL rows `None`).
enum Instants {
    Days(Vec<Option<i32>>),
    Micros(Vec<Option<i64>>),
}

fn instants(a: &ArrayRef, text: &str) -> Result<Instants> {
    Ok(match a.data_type() {
        ArrowType::Date32 => Instants::Days(a.as_primitive::<Date32Type>().iter().collect()),
        ArrowType::Timestamp(TimeUnit::Microsecond, _) => Instants::Micros(
            a.as_primitive::<TimestampMicrosecondType>()
                .iter()
                .collect(),
        ),
        ArrowType::Null => Instants::Days(vec![None; a.len()]),
        other => return Err(failed(text, format!("{other} is not a date or timestamp"))),
    })
}

impl Instants {
    /// Every value as microseconds (a date at midnight).
    fn micros(self) -> Vec<Option<i64>> {
        match self {
            Instants::Days(d) => d.into_iter().map(|v| v.map(midnight)).collect(),
            Instants::Micros(m) => m,
        }
    }
}

/// A timestamp array of the Arrow type `ty` (its zone, if any, kept as metadata).
fn timestamps(values: Vec<Option<i64>>, ty: &ArrowType) -> ArrayRef {
    let tz = match ty {
        ArrowType::Timestamp(_, tz) => tz.clone(),
        _ => None,
    };
    Arc::new(TimestampMicrosecondArray::from(values).with_timezone_opt(tz))
}

/// `f` on every non-NULL value; `None` from `f` is the error `what` about `text`.
fn map_checked<T: Copy, U>(
    values: Vec<Option<T>>,
    text: &str,
    what: &str,
    f: impl Fn(T) -> Option<U>,
) -> Result<Vec<Option<U>>> {
    values
        .into_iter()
        .map(|v| match v {
            None => Ok(None),
            Some(v) => f(v).map(Some).ok_or_else(|| failed(text, what)),
        })
        .collect()
}

/// A calendar field of a date or timestamp array, as Int32.
pub(super) fn field(v: &ArrayRef, field: DateField) -> Result<ArrayRef> {
    // Delta's timestamps are instants read in UTC: the zone is dropped so that Arrow reads
    // the stored microseconds as they are.
    let v: ArrayRef = match v.data_type() {
        ArrowType::Timestamp(TimeUnit::Microsecond, Some(_)) => Arc::new(
            v.as_primitive::<TimestampMicrosecondType>()
                .clone()
                .with_timezone_opt(None::<String>),
        ),
        _ => v.clone(),
    };
    let part = match field {
        DateField::Year => DatePart::Year,
        DateField::Quarter => DatePart::Quarter,
        DateField::Month => DatePart::Month,
        DateField::Week => DatePart::Week,
        DateField::Day => DatePart::Day,
        DateField::DayOfWeek => DatePart::DayOfWeekSunday1,
        DateField::DayOfYear => DatePart::DayOfYear,
        DateField::Hour => DatePart::Hour,
        DateField::Minute => DatePart::Minute,
        DateField::Second => DatePart::Second,
    };
    date_part(&v, part).map_err(|e| failed(field.name(), e))
}

/// `operand + interval` as the Arrow type `ty` (Date32 for a date plus whole days, else a
/// timestamp).
pub(super) fn add_interval(
    operand: &ArrayRef,
    interval: Interval,
    ty: &ArrowType,
    text: &str,
) -> Result<ArrayRef> {
    let out_of_range = "the result is outside the dates and timestamps alluvium can represent";
    let values = instants(operand, text)?;
    Ok(match (values, ty) {
        (Instants::Days(days), ArrowType::Date32) => Arc::new(Date32Array::from(map_checked(
            days,
            text,
            out_of_range,
            |d| interval.add_to_date(d),
        )?)),
        (values, _) => timestamps(
            map_checked(values.micros(), text, out_of_range, |t| {
                interval.add_to_timestamp(t)
            })?,
            ty,
        ),
    })
}

/// `date_trunc(unit, operand)` as the timestamp type `ty`.
pub(super) fn date_trunc(
    unit: &BoundExpr,
    operand: &ArrayRef,
    ty: &ArrowType,
    text: &str,
) -> Result<ArrayRef> {
    let unit = match unit.kind() {
        BoundKind::Literal(Scalar::String(u)) => TruncUnit::from_name(u),
        _ => None,
    }
    .ok_or_else(|| failed(text, "the unit is not a known literal"))?;
    let values = instants(operand, text)?.micros();
    Ok(timestamps(
        map_checked(values, text, "the result is out of range", |t| {
            unit.truncate(t)
        })?,
        ty,
    ))
}

/// `to_date(x [, format])` or `to_timestamp(x [, format])`, as the Arrow type `ty`: a
/// string is read with the format (or as `CAST` reads it), a date or timestamp converted.
/// A string that does not read is an error naming it (ANSI mode).
pub(super) fn convert(
    operand: &ArrayRef,
    format: Option<&BoundExpr>,
    ty: &ArrowType,
    text: &str,
) -> Result<ArrayRef> {
    let to_date = ty == &ArrowType::Date32;
    let micros: Vec<Option<i64>> = match operand.data_type() {
        ArrowType::Utf8 => {
            let strings: &StringArray = operand.as_string::<i32>();
            let format = match format.map(BoundExpr::kind) {
                Some(BoundKind::Literal(Scalar::String(f))) => {
                    Some(chrono_format(f).map_err(|m| failed(text, m))?)
                }
                Some(_) => return Err(failed(text, "the format is not a literal")),
                None => None,
            };
            let what = if to_date { "date" } else { "timestamp" };
            strings
                .iter()
                .map(|s| {
                    let Some(s) = s else { return Ok(None) };
                    let read = match &format {
                        Some(f) => parse_timestamp_as(s, f),
                        None if to_date => {
                            parse_date(s).map(midnight).or_else(|| parse_timestamp(s))
                        }
                        None => parse_timestamp(s),
                    };
                    read.map(Some)
                        .ok_or_else(|| failed(text, format!("the string '{s}' is not a {what}")))
                })
                .collect::<Result<_>>()?
        }
        ArrowType::Null => return Ok(new_null_array(ty, operand.len())),
        _ => instants(operand, text)?.micros(),
    };
    Ok(if to_date {
        Arc::new(Date32Array::from(map_checked(
            micros,
            text,
            "the date is out of range",
            day_of,
        )?))
    } else {
        timestamps(micros, ty)
    })
}
