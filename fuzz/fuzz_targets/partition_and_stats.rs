//! Partition values, Hive directory names and file statistics on arbitrary text.
//!
//! Input layout: byte 0 picks the decimal precision (`1 + b % 38`), byte 1 the scale
//! (`b % (precision + 1)`), the rest is the text (lossily UTF-8).
//!
//! Properties:
//! * `parse_partition_value` never panics for any primitive type; a parsed value has the
//!   column's type, fits its Arrow type, and survives `serialize_partition_value` + parse
//!   (floats compared bit for bit, any NaN equal to any NaN);
//! * `escape_partition_dir_value` / `partition_dir_segment` never panic, their output holds
//!   no `/`, and unescaping gives the value back;
//! * `FileStats::parse`, its lookups and `stat_scalar` on every value never panic;
//! * statistics kept as shapes and values (the columnar file set's statistics column) read
//!   back exactly: the text, and its lines as rows of one column;
//! * `FileStats::parse_columns` gives exactly `FileStats::parse` restricted to the columns
//!   kept (none, fixed names, and each column the full parse found), `None` for the same
//!   inputs.
#![no_main]

use alluvium_txlog::partition::{
    HIVE_DEFAULT_PARTITION, escape_partition_dir_value, parse_partition_value,
    partition_dir_segment, serialize_partition_value,
};
use alluvium_txlog::scalar::Scalar;
use alluvium_txlog::scalar::text::has_non_utc_offset;
use alluvium_txlog::schema::{DataType, PrimitiveType, arrow_type};
use alluvium_txlog::shaped_round_trip;
use alluvium_txlog::stats::{FileStats, stat_scalar};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fn types(precision: u8, scale: u8) -> [PrimitiveType; 15] {
    [
        PrimitiveType::String,
        PrimitiveType::Long,
        PrimitiveType::Integer,
        PrimitiveType::Short,
        PrimitiveType::Byte,
        PrimitiveType::Float,
        PrimitiveType::Double,
        PrimitiveType::Boolean,
        PrimitiveType::Binary,
        PrimitiveType::Date,
        PrimitiveType::Timestamp,
        PrimitiveType::TimestampNtz,
        PrimitiveType::Decimal(precision, scale),
        PrimitiveType::Void,
        PrimitiveType::Variant,
    ]
}

/// Equality that treats every NaN as equal and tells `-0.0` from `0.0`.
fn same(a: &Scalar, b: &Scalar) -> bool {
    match (a, b) {
        (Scalar::Float(x), Scalar::Float(y)) => {
            (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits()
        }
        (Scalar::Double(x), Scalar::Double(y)) => {
            (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits()
        }
        _ => a == b,
    }
}

fn check_partition_value(text: &str, ty: PrimitiveType) {
    let Ok(value) = parse_partition_value("c", Some(text), ty) else {
        return;
    };
    match value.primitive_type() {
        None => assert!(
            text.is_empty() || ty == PrimitiveType::Void,
            "{text:?} parsed as NULL for {ty:?}"
        ),
        Some(t) => assert_eq!(t, ty, "{text:?} parsed to a value of another type"),
    }
    if !value.is_null() {
        let arrow =
            arrow_type(&DataType::Primitive(ty)).expect("parsable types have an Arrow type");
        if let Err(e) = value.to_array(&arrow, 1) {
            panic!("{value:?} parsed from {text:?} does not fit {arrow}: {e}");
        }
        if !matches!(value, Scalar::Float(_) | Scalar::Double(_)) {
            assert_eq!(value.compare(&value), Some(std::cmp::Ordering::Equal));
        }
    }
    let Some(serialized) = serialize_partition_value(&value) else {
        return;
    };
    match parse_partition_value("c", Some(&serialized), ty) {
        Ok(again) => assert!(
            same(&again, &value),
            "{text:?} -> {value:?} -> {serialized:?} -> {again:?}"
        ),
        Err(e) => panic!("{text:?} -> {value:?} -> {serialized:?} does not parse back: {e}"),
    }
}

/// Inverse of the Hive escaping: `%XX` back to the character.
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('%') {
        out.push_str(&rest[..i]);
        let hex = rest.get(i + 1..i + 3).expect("escape has two hex digits");
        let code = u32::from_str_radix(hex, 16).expect("escape is hex");
        out.push(char::from_u32(code).expect("escaped a valid char"));
        rest = &rest[i + 3..];
    }
    out.push_str(rest);
    out
}

fn check_hive(text: &str) {
    let escaped = escape_partition_dir_value(text);
    assert!(!escaped.contains('/'), "{escaped:?} keeps a '/'");
    assert_eq!(unescape(&escaped), text, "escaping is not reversible");

    let segment = partition_dir_segment(text, Some(text));
    assert!(!segment.contains('/'), "{segment:?} keeps a '/'");
    assert_eq!(
        segment.matches('=').count(),
        1,
        "{segment:?} has an ambiguous '='"
    );
    let value = if text.is_empty() {
        HIVE_DEFAULT_PARTITION
    } else {
        escaped.as_str()
    };
    assert_eq!(segment, format!("{escaped}={value}"));
    let null = partition_dir_segment(text, None);
    assert_eq!(null, format!("{escaped}={HIVE_DEFAULT_PARTITION}"));
}

fn check_stat_values(v: &Value, path: &mut Vec<String>, stats: &FileStats, all: &[PrimitiveType]) {
    for ty in all {
        let _ = stat_scalar(v, *ty);
    }
    let _ = (stats.min(path), stats.max(path), stats.null_count(path));
    if let Value::Object(map) = v {
        for (k, child) in map {
            path.push(k.clone());
            check_stat_values(child, path, stats, all);
            path.pop();
        }
    }
}

fn check_stats(text: &str, all: &[PrimitiveType]) {
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        for ty in all {
            let _ = stat_scalar(&v, *ty);
        }
    }
    let full = FileStats::parse(text);
    let mut found: Vec<String> = Vec::new();
    if let Some(f) = &full {
        for map in [&f.min_values, &f.max_values, &f.null_count]
            .into_iter()
            .flatten()
        {
            found.extend(map.keys().take(2).cloned());
        }
    }
    let found: Vec<&str> = found.iter().map(String::as_str).collect();
    for columns in [&[][..], &["a", "b"], &found] {
        let restricted = full.clone().map(|mut f| {
            for map in [&mut f.min_values, &mut f.max_values, &mut f.null_count]
                .into_iter()
                .flatten()
            {
                map.retain(|k, _| columns.contains(&k.as_str()));
            }
            f
        });
        assert_eq!(
            FileStats::parse_columns(text, columns),
            restricted,
            "{text:?} {columns:?}"
        );
    }
    let Some(stats) = full else {
        return;
    };
    let _ = stats.tight_bounds();
    for map in [&stats.min_values, &stats.max_values, &stats.null_count]
        .into_iter()
        .flatten()
    {
        let mut path = Vec::new();
        check_stat_values(&Value::Object(map.clone()), &mut path, &stats, all);
    }
}

fuzz_target!(|data: &[u8]| {
    let (precision, scale, rest) = match data {
        [p, s, rest @ ..] => {
            let precision = 1 + p % 38;
            (precision, s % (precision + 1), rest)
        }
        _ => return,
    };
    let text = String::from_utf8_lossy(rest);
    let all = types(precision, scale);
    for ty in all {
        check_partition_value(&text, ty);
    }
    let _ = parse_partition_value("c", None, PrimitiveType::Decimal(precision, scale));
    let _ = has_non_utc_offset(&text);
    check_hive(&text);
    check_stats(&text, &all);
    check_shapes(&text);
});

/// The statistics column gives back every text it was given, whole and line by line.
fn check_shapes(text: &str) {
    let whole = [text];
    assert_eq!(shaped_round_trip(&whole), whole);
    let lines: Vec<&str> = text.split('\n').collect();
    assert_eq!(shaped_round_trip(&lines), lines);
}
