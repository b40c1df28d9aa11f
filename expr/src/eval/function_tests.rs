//! The functions, LIKE, IS DISTINCT FROM and interval arithmetic evaluated end to end
//! (parse, bind, evaluate) on a batch with NULLs, against hand-computed values.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float64Type, Int32Type, Int64Type, TimestampMicrosecondType,
};
use arrow_array::{
    ArrayRef, Date32Array, Decimal128Array, Float64Array, Int64Array, RecordBatch, StringArray,
    TimestampMicrosecondArray,
};
use arrow_schema::{DataType as ArrowType, Field, Schema};

use alluvium_txlog::column_mapping::ColumnMappingMode;
use alluvium_txlog::scalar::text::{
    format_date, format_decimal, format_timestamp, parse_date, parse_timestamp,
};
use alluvium_txlog::schema::StructType;

use crate::{ExprError, at_statement_time, bind, bind_value, evaluate, evaluate_value, parse_expr};

fn fixture() -> (RecordBatch, StructType) {
    let schema = StructType::from_json(
        r#"{"type":"struct","fields":[
        {"name":"s","type":"string","nullable":true,"metadata":{}},
        {"name":"p","type":"string","nullable":true,"metadata":{}},
        {"name":"n","type":"long","nullable":true,"metadata":{}},
        {"name":"d","type":"double","nullable":true,"metadata":{}},
        {"name":"m","type":"decimal(10,2)","nullable":true,"metadata":{}},
        {"name":"dt","type":"date","nullable":true,"metadata":{}},
        {"name":"ts","type":"timestamp","nullable":true,"metadata":{}},
        {"name":"ntz","type":"timestamp_ntz","nullable":true,"metadata":{}}
    ]}"#,
    )
    .unwrap();
    let day = |s: &str| parse_date(s).unwrap();
    let ts = |s: &str| parse_timestamp(s).unwrap();
    let m = Decimal128Array::from(vec![Some(1234), Some(-1255), None, Some(5)])
        .with_precision_and_scale(10, 2)
        .unwrap();
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(vec![
            Some("Hello"),
            Some("  pad  "),
            None,
            Some("héllo_%"),
        ])),
        Arc::new(StringArray::from(vec![
            Some("H%"),
            Some("%pad%"),
            Some("x"),
            None,
        ])),
        Arc::new(Int64Array::from(vec![
            Some(-5),
            Some(0),
            None,
            Some(i64::MIN),
        ])),
        Arc::new(Float64Array::from(vec![
            Some(2.5),
            Some(-2.5),
            None,
            Some(f64::NAN),
        ])),
        Arc::new(m),
        Arc::new(Date32Array::from(vec![
            Some(day("2024-01-31")),
            Some(day("2024-02-29")),
            None,
            Some(day("1969-12-31")),
        ])),
        Arc::new(
            TimestampMicrosecondArray::from(vec![
                Some(ts("2024-05-15T13:45:30.123456Z")),
                Some(ts("2023-01-31T23:30:00Z")),
                None,
                Some(ts("1969-12-31T23:59:59Z")),
            ])
            .with_timezone("UTC"),
        ),
        Arc::new(TimestampMicrosecondArray::from(vec![
            Some(ts("2024-05-15T13:45:30Z")),
            None,
            None,
            Some(ts("2000-02-29T00:00:00Z")),
        ])),
    ];
    let names = ["s", "p", "n", "d", "m", "dt", "ts", "ntz"];
    let fields: Vec<Field> = names
        .iter()
        .zip(&columns)
        .map(|(n, c)| Field::new(*n, c.data_type().clone(), true))
        .collect();
    let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap();
    (batch, schema)
}

/// One cell as text: `NULL`, numbers, strings, ISO dates and timestamps.
fn render(a: &ArrayRef, row: usize) -> String {
    if a.is_null(row) {
        return "NULL".into();
    }
    match a.data_type() {
        ArrowType::Boolean => a.as_boolean().value(row).to_string(),
        ArrowType::Int32 => a.as_primitive::<Int32Type>().value(row).to_string(),
        ArrowType::Int64 => a.as_primitive::<Int64Type>().value(row).to_string(),
        ArrowType::Float64 => a.as_primitive::<Float64Type>().value(row).to_string(),
        ArrowType::Decimal128(_, s) => format_decimal(
            a.as_primitive::<Decimal128Type>().value(row),
            u8::try_from(*s).unwrap(),
        ),
        ArrowType::Utf8 => a.as_string::<i32>().value(row).to_string(),
        ArrowType::Date32 => format_date(a.as_primitive::<Date32Type>().value(row)),
        ArrowType::Timestamp(_, _) => {
            format_timestamp(a.as_primitive::<TimestampMicrosecondType>().value(row))
        }
        other => panic!("no rendering for {other}"),
    }
}

/// `text` bound as a value and evaluated on `rows` of the fixture.
fn try_eval(text: &str, rows: &[usize]) -> crate::Result<(ArrayRef, ArrowType)> {
    let (b, schema) = fixture();
    let indices = arrow_array::UInt32Array::from(
        rows.iter()
            .map(|r| u32::try_from(*r).unwrap())
            .collect::<Vec<_>>(),
    );
    let b = arrow_select::take::take_record_batch(&b, &indices).unwrap();
    let v = bind_value(&parse_expr(text)?, &schema, &[], ColumnMappingMode::None)?;
    let ty = alluvium_txlog::schema::arrow_type(v.data_type())?;
    let out = evaluate_value(&v, &b)?;
    assert_eq!(out.data_type(), &ty, "{text}");
    assert_eq!(out.len(), rows.len(), "{text}");
    Ok((out, ty))
}

fn values_on(text: &str, rows: &[usize]) -> Vec<String> {
    let (out, _) = try_eval(text, rows).unwrap_or_else(|e| panic!("{text}: {e}"));
    (0..out.len()).map(|r| render(&out, r)).collect()
}

fn values(text: &str) -> Vec<String> {
    values_on(text, &[0, 1, 2, 3])
}

fn error(text: &str, rows: &[usize]) -> String {
    match try_eval(text, rows) {
        Err(e @ ExprError::Invalid(_)) => e.to_string(),
        other => panic!("{text}: {other:?}"),
    }
}

#[test]
fn like_ilike_and_escape() {
    for (text, expected) in [
        ("s LIKE 'H%'", ["true", "false", "NULL", "false"]),
        ("s ILIKE 'h%'", ["true", "false", "NULL", "true"]),
        ("s NOT LIKE 'H%'", ["false", "true", "NULL", "true"]),
        ("s NOT ILIKE 'HELLO'", ["false", "true", "NULL", "true"]),
        ("s LIKE p", ["true", "true", "NULL", "NULL"]),
        ("s LIKE 'h_llo%'", ["false", "false", "NULL", "true"]),
        (
            "s LIKE '%!_!%' ESCAPE '!'",
            ["false", "false", "NULL", "true"],
        ),
        (r"s LIKE '%\_\%'", ["false", "false", "NULL", "true"]),
        ("s LIKE '%_%'", ["true", "true", "NULL", "true"]),
        ("s LIKE ''", ["false", "false", "NULL", "false"]),
        ("s LIKE '_____'", ["true", "false", "NULL", "false"]),
        ("s LIKE NULL", ["NULL", "NULL", "NULL", "NULL"]),
        ("s LIKE 'a.c'", ["false", "false", "NULL", "false"]),
        ("lower(s) LIKE 'hello'", ["true", "false", "NULL", "false"]),
    ] {
        assert_eq!(values(text), expected, "{text}");
    }
    // A literal pattern is checked when binding; a column pattern when evaluated.
    let (_, schema) = fixture();
    for bad in [r"s LIKE 'a\b'", r"s LIKE 'ab\'", "n LIKE 'x'"] {
        let r = bind_value(
            &parse_expr(bad).unwrap(),
            &schema,
            &[],
            ColumnMappingMode::None,
        );
        assert!(matches!(r, Err(ExprError::Invalid(_))), "{bad}: {r:?}");
    }
    assert!(error(r"s LIKE s || '\'", &[0]).contains("escape character"));
}

#[test]
fn string_functions() {
    for (text, expected) in [
        ("lower(s)", ["hello", "  pad  ", "NULL", "héllo_%"]),
        ("upper(s)", ["HELLO", "  PAD  ", "NULL", "HÉLLO_%"]),
        ("trim(s)", ["Hello", "pad", "NULL", "héllo_%"]),
        ("ltrim(s)", ["Hello", "pad  ", "NULL", "héllo_%"]),
        ("rtrim(s)", ["Hello", "  pad", "NULL", "héllo_%"]),
        ("length(s)", ["5", "7", "NULL", "7"]),
        ("length(CAST(s AS binary))", ["5", "7", "NULL", "8"]),
        ("substring(s, 2, 3)", ["ell", " pa", "NULL", "éll"]),
        ("substring(s FROM -3)", ["llo", "d  ", "NULL", "o_%"]),
        ("substr(s, 0, 2)", ["He", "  ", "NULL", "hé"]),
        ("substring(s, 2, n)", ["", "", "NULL", ""]),
        (
            "concat(s, '-', p)",
            ["Hello-H%", "  pad  -%pad%", "NULL", "NULL"],
        ),
        ("concat(s)", ["Hello", "  pad  ", "NULL", "héllo_%"]),
        ("concat(s, NULL)", ["NULL", "NULL", "NULL", "NULL"]),
        ("starts_with(s, 'He')", ["true", "false", "NULL", "false"]),
        ("startswith(s, p)", ["false", "false", "NULL", "NULL"]),
        ("ends_with(s, '%')", ["false", "false", "NULL", "true"]),
        ("contains(s, 'll')", ["true", "false", "NULL", "true"]),
        (
            "replace(s, 'l', 'L')",
            ["HeLLo", "  pad  ", "NULL", "héLLo_%"],
        ),
        ("replace(s, 'l')", ["Heo", "  pad  ", "NULL", "héo_%"]),
        (
            "replace(s, '', 'x')",
            ["Hello", "  pad  ", "NULL", "héllo_%"],
        ),
        ("upper(NULL)", ["NULL", "NULL", "NULL", "NULL"]),
    ] {
        assert_eq!(values(text), expected, "{text}");
    }
}

#[test]
fn numeric_functions() {
    for (text, expected) in [
        ("abs(n)", ["5", "0", "NULL"].as_slice()),
        ("abs(d)", &["2.5", "2.5", "NULL", "NaN"]),
        ("abs(m)", &["12.34", "12.55", "NULL", "0.05"]),
        ("round(d)", &["3", "-3", "NULL", "NaN"]),
        ("round(m, 1)", &["12.3", "-12.6", "NULL", "0.1"]),
        ("round(m)", &["12", "-13", "NULL", "0"]),
        ("round(m, -1)", &["10", "-10", "NULL", "0"]),
        ("round(n, -1)", &["-10", "0", "NULL"]),
        ("round(1.005, 2)", &["1.01", "1.01", "1.01", "1.01"]),
        ("round(2.675E0, 2)", &["2.68", "2.68", "2.68", "2.68"]),
        ("floor(d)", &["2", "-3", "NULL"]),
        ("ceil(d)", &["3", "-2", "NULL"]),
        ("floor(m)", &["12", "-13", "NULL", "0"]),
        ("ceiling(m)", &["13", "-12", "NULL", "1"]),
        ("floor(n)", &["-5", "0", "NULL", "-9223372036854775808"]),
        ("greatest(n, -1)", &["-1", "0", "-1", "-1"]),
        ("least(n, -1)", &["-5", "-1", "-1", "-9223372036854775808"]),
        (
            "greatest(n, NULL)",
            &["-5", "0", "NULL", "-9223372036854775808"],
        ),
        ("greatest(d, 0)", &["2.5", "0", "0", "NaN"]),
        ("least(s, p)", &["H%", "  pad  ", "x", "héllo_%"]),
        (
            "greatest(dt, '2024-02-01')",
            &["2024-02-01", "2024-02-29", "2024-02-01", "2024-02-01"],
        ),
        (
            "nullif(n, 0)",
            &["-5", "NULL", "NULL", "-9223372036854775808"],
        ),
        (
            "nullif(s, 'Hello')",
            &["NULL", "  pad  ", "NULL", "héllo_%"],
        ),
        (
            "nullif(n, NULL)",
            &["-5", "0", "NULL", "-9223372036854775808"],
        ),
    ] {
        let rows: Vec<usize> = (0..expected.len()).collect();
        assert_eq!(values_on(text, &rows), expected, "{text}");
    }
    // Types follow Spark.
    let (_, ty) = try_eval("round(m, 1)", &[0]).unwrap();
    assert_eq!(ty, ArrowType::Decimal128(10, 1));
    let (_, ty) = try_eval("floor(m)", &[0]).unwrap();
    assert_eq!(ty, ArrowType::Decimal128(9, 0));
    let (_, ty) = try_eval("floor(d)", &[0]).unwrap();
    assert_eq!(ty, ArrowType::Int64);
    // Values that do not fit are errors naming the expression, on the rows that hold them.
    assert!(error("abs(n)", &[3]).contains("`abs(n)`: integer overflow"));
    assert!(error("floor(d)", &[3]).contains("NaN does not fit a bigint"));
    assert!(error("round(n, -1)", &[3]).contains("does not fit"));
    assert_eq!(
        values_on("CASE WHEN n > -10 THEN abs(n) END", &[0, 3]),
        ["5", "NULL"]
    );
}

#[test]
fn distinct_from_is_null_safe() {
    for (text, expected) in [
        ("n IS DISTINCT FROM 0", ["true", "false", "true", "true"]),
        (
            "n IS NOT DISTINCT FROM 0",
            ["false", "true", "false", "false"],
        ),
        (
            "n IS NOT DISTINCT FROM NULL",
            ["false", "false", "true", "false"],
        ),
        ("s IS DISTINCT FROM p", ["true", "true", "true", "true"]),
        (
            "NULL IS DISTINCT FROM NULL",
            ["false", "false", "false", "false"],
        ),
        (
            "n + 1 IS NOT DISTINCT FROM -4",
            ["true", "false", "false", "false"],
        ),
    ] {
        assert_eq!(values(text), expected, "{text}");
    }
    // As a predicate, the bound form (column vs literal) evaluates the same.
    let (b, schema) = fixture();
    for (text, expected) in [
        ("n IS DISTINCT FROM 0", [true, false, true, true]),
        ("0 IS NOT DISTINCT FROM n", [false, true, false, false]),
        ("n IS DISTINCT FROM NULL", [true, true, false, true]),
    ] {
        let p = bind(
            &parse_expr(text).unwrap(),
            &schema,
            &[],
            ColumnMappingMode::None,
        )
        .unwrap();
        let got: Vec<Option<bool>> = evaluate(&p, &b).unwrap().iter().collect();
        assert_eq!(got, expected.map(Some), "{text}");
    }
}

#[test]
fn dates_times_and_intervals() {
    for (text, expected) in [
        ("YEAR(ts)", ["2024", "2023", "NULL", "1969"]),
        ("QUARTER(dt)", ["1", "1", "NULL", "4"]),
        ("MONTH(ts)", ["5", "1", "NULL", "12"]),
        ("WEEKOFYEAR(dt)", ["5", "9", "NULL", "1"]),
        ("DAY(dt)", ["31", "29", "NULL", "31"]),
        ("DAYOFWEEK(dt)", ["4", "5", "NULL", "4"]),
        ("DAYOFYEAR(dt)", ["31", "60", "NULL", "365"]),
        ("HOUR(ts)", ["13", "23", "NULL", "23"]),
        ("MINUTE(ts)", ["45", "30", "NULL", "59"]),
        ("SECOND(ts)", ["30", "0", "NULL", "59"]),
        ("HOUR(dt)", ["0", "0", "NULL", "0"]),
        ("EXTRACT(YEAR FROM dt)", ["2024", "2024", "NULL", "1969"]),
        ("EXTRACT(DOW FROM ts)", ["4", "3", "NULL", "4"]),
        ("EXTRACT(HOUR FROM ntz)", ["13", "NULL", "NULL", "0"]),
        (
            "date_trunc('MONTH', ts)",
            [
                "2024-05-01T00:00:00.000000Z",
                "2023-01-01T00:00:00.000000Z",
                "NULL",
                "1969-12-01T00:00:00.000000Z",
            ],
        ),
        (
            "date_trunc('hour', dt)",
            [
                "2024-01-31T00:00:00.000000Z",
                "2024-02-29T00:00:00.000000Z",
                "NULL",
                "1969-12-31T00:00:00.000000Z",
            ],
        ),
        (
            "dt + INTERVAL 1 MONTH",
            ["2024-02-29", "2024-03-29", "NULL", "1970-01-31"],
        ),
        (
            "dt - INTERVAL '1' YEAR",
            ["2023-01-31", "2023-02-28", "NULL", "1968-12-31"],
        ),
        (
            "INTERVAL 2 DAYS + dt",
            ["2024-02-02", "2024-03-02", "NULL", "1970-01-02"],
        ),
        (
            "dt + INTERVAL 90 MINUTES",
            [
                "2024-01-31T01:30:00.000000Z",
                "2024-02-29T01:30:00.000000Z",
                "NULL",
                "1969-12-31T01:30:00.000000Z",
            ],
        ),
        (
            "ts + INTERVAL 1 MONTH 1 DAY 1 HOUR",
            [
                "2024-06-16T14:45:30.123456Z",
                "2023-03-02T00:30:00.000000Z",
                "NULL",
                "1970-02-02T00:59:59.000000Z",
            ],
        ),
        (
            "ts - INTERVAL '1 day 0.5 seconds'",
            [
                "2024-05-14T13:45:29.623456Z",
                "2023-01-30T23:29:59.500000Z",
                "NULL",
                "1969-12-30T23:59:58.500000Z",
            ],
        ),
        ("DATE '2024-01-31' + INTERVAL 1 MONTH", ["2024-02-29"; 4]),
        ("to_date('15/05/2024', 'dd/MM/yyyy')", ["2024-05-15"; 4]),
        (
            "to_date(ts)",
            ["2024-05-15", "2023-01-31", "NULL", "1969-12-31"],
        ),
        ("to_date('2024-05-15 10:00:00')", ["2024-05-15"; 4]),
        (
            "to_timestamp('2024-05-15 10:00', 'yyyy-MM-dd HH:mm')",
            ["2024-05-15T10:00:00.000000Z"; 4],
        ),
        (
            "to_timestamp(dt)",
            [
                "2024-01-31T00:00:00.000000Z",
                "2024-02-29T00:00:00.000000Z",
                "NULL",
                "1969-12-31T00:00:00.000000Z",
            ],
        ),
    ] {
        assert_eq!(values(text), expected, "{text}");
    }
    let (_, ty) = try_eval("dt + INTERVAL 1 DAY", &[0]).unwrap();
    assert_eq!(ty, ArrowType::Date32);
    let (_, ty) = try_eval("ntz + INTERVAL 1 DAY", &[0]).unwrap();
    assert_eq!(
        ty,
        ArrowType::Timestamp(arrow_schema::TimeUnit::Microsecond, None)
    );
    assert!(error("to_date(s)", &[0]).contains("the string 'Hello' is not a date"));
    assert!(
        error("dt + INTERVAL 9999999 YEARS", &[0]).contains("outside the dates"),
        "{}",
        error("dt + INTERVAL 9999999 YEARS", &[0])
    );
    // Intervals only meet dates and timestamps, and only by + and -.
    let (_, schema) = fixture();
    for bad in [
        "n + INTERVAL 1 DAY",
        "INTERVAL 1 DAY",
        "INTERVAL 1 DAY - dt",
        "dt * INTERVAL 1 DAY",
        "dt = INTERVAL 1 DAY",
        "date_trunc('fortnight', ts)",
        "date_trunc(s, ts)",
        "to_date(s, 'yyyy-QQ')",
        "to_date(s, p)",
        "round(d, n)",
        "lower(n)",
        "substring(s, 'x')",
    ] {
        let r = bind_value(
            &parse_expr(bad).unwrap(),
            &schema,
            &[],
            ColumnMappingMode::None,
        );
        assert!(matches!(r, Err(ExprError::Invalid(_))), "{bad}: {r:?}");
    }
    let m = bind_value(
        &parse_expr("date_trunc('mnth', ts)").unwrap(),
        &schema,
        &[],
        ColumnMappingMode::None,
    )
    .unwrap_err()
    .to_string();
    assert!(m.contains("did you mean 'MONTH'?"), "{m}");
}

#[test]
fn current_time_is_one_instant_per_statement() {
    let now = parse_timestamp("2024-05-15T13:45:30Z").unwrap();
    let got = at_statement_time(now, || {
        values("current_timestamp() = current_timestamp AND now() = current_timestamp()")
    });
    assert_eq!(got, ["true"; 4]);
    let got = at_statement_time(now, || values("current_date"));
    assert_eq!(got, ["2024-05-15"; 4]);
    let got = at_statement_time(now, || values("ts > current_timestamp - INTERVAL 1 DAY"));
    assert_eq!(got, ["true", "false", "NULL", "false"]);
    // Outside a statement the clock is read: today, not a fixed day.
    let today = values("current_date()");
    assert!(
        today[0].len() == 10 && today[0] != "2024-05-15",
        "{today:?}"
    );
}
