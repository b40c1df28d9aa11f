//! Arrow values of `stats_parsed` / `partitionValues_parsed` converted to the JSON form of
//! `add.stats`, so that checkpoints written with struct statistics only are read exactly like
//! JSON statistics.

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type,
    Int64Type, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType,
};
use arrow_array::{Array, ArrayRef, StructArray};
use arrow_schema::{DataType, TimeUnit};
use serde_json::{Map, Number, Value};

use crate::scalar::text::{format_date, format_decimal};

fn timestamp_micros(a: &ArrayRef, i: usize, unit: &TimeUnit) -> i64 {
    match unit {
        TimeUnit::Second => a
            .as_primitive::<TimestampSecondType>()
            .value(i)
            .saturating_mul(1_000_000),
        TimeUnit::Millisecond => a
            .as_primitive::<TimestampMillisecondType>()
            .value(i)
            .saturating_mul(1000),
        TimeUnit::Microsecond => a.as_primitive::<TimestampMicrosecondType>().value(i),
        TimeUnit::Nanosecond => a
            .as_primitive::<TimestampNanosecondType>()
            .value(i)
            .div_euclid(1000),
    }
}

fn format_micros(micros: i64, utc: bool) -> Value {
    match chrono::DateTime::from_timestamp_micros(micros) {
        Some(dt) if utc => Value::String(dt.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()),
        Some(dt) => Value::String(dt.naive_utc().format("%Y-%m-%dT%H:%M:%S%.6f").to_string()),
        None => Value::Null,
    }
}

/// The JSON form of element `i` of `a` (statistics types only; others become null).
pub(crate) fn json_value(a: &ArrayRef, i: usize) -> Value {
    if a.is_null(i) {
        return Value::Null;
    }
    match a.data_type() {
        DataType::Boolean => Value::Bool(a.as_boolean().value(i)),
        DataType::Int8 => Value::from(a.as_primitive::<Int8Type>().value(i)),
        DataType::Int16 => Value::from(a.as_primitive::<Int16Type>().value(i)),
        DataType::Int32 => Value::from(a.as_primitive::<Int32Type>().value(i)),
        DataType::Int64 => Value::from(a.as_primitive::<Int64Type>().value(i)),
        DataType::Float32 => Number::from_f64(f64::from(a.as_primitive::<Float32Type>().value(i)))
            .map_or(Value::Null, Value::Number),
        DataType::Float64 => Number::from_f64(a.as_primitive::<Float64Type>().value(i))
            .map_or(Value::Null, Value::Number),
        DataType::Decimal128(_, s) => {
            let text = format_decimal(
                a.as_primitive::<Decimal128Type>().value(i),
                u8::try_from(*s).unwrap_or(0),
            );
            text.parse::<f64>()
                .ok()
                .and_then(Number::from_f64)
                .map_or(Value::Null, Value::Number)
        }
        DataType::Utf8 => Value::String(a.as_string::<i32>().value(i).to_string()),
        DataType::LargeUtf8 => Value::String(a.as_string::<i64>().value(i).to_string()),
        DataType::Utf8View => Value::String(a.as_string_view().value(i).to_string()),
        DataType::Date32 => Value::String(format_date(a.as_primitive::<Date32Type>().value(i))),
        DataType::Timestamp(unit, tz) => format_micros(timestamp_micros(a, i, unit), tz.is_some()),
        DataType::Struct(_) => Value::Object(struct_json(a.as_struct(), i)),
        _ => Value::Null,
    }
}

/// The JSON object of row `i` of a struct array (null children omitted).
pub(crate) fn struct_json(s: &StructArray, i: usize) -> Map<String, Value> {
    let mut out = Map::new();
    for (field, col) in s.fields().iter().zip(s.columns()) {
        let v = json_value(col, i);
        if !v.is_null() {
            out.insert(field.name().clone(), v);
        }
    }
    out
}

/// The text form of a partition value from `partitionValues_parsed`.
pub(crate) fn partition_text(a: &ArrayRef, i: usize) -> Option<String> {
    match json_value(a, i) {
        Value::Null => None,
        Value::String(s) => Some(s),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        other => Some(other.to_string()),
    }
}
