//! The expression language through the library (SPEC.md §13, §28): LIKE prefixes, BETWEEN
//! and constants (`current_timestamp() - INTERVAL 1 DAY`) skip files by their statistics
//! and never drop a matching row, functions of columns read every file and match exactly,
//! the typed builder gives what the text gives, clock-reading expressions are refused where
//! determinism is required and serve as column defaults, and expression errors are typed
//! and classified as invalid input.

use std::sync::Arc;

use alluvium::{
    ErrorKind, Expr, ExprError, Interval, ScanBuilder, StructType, Table, WriteOptions,
};
use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};

use crate::common::canon_rows;

const SCHEMA: &str = r#"{"type":"struct","fields":[
    {"name":"id","type":"long","nullable":true,"metadata":{}},
    {"name":"name","type":"string","nullable":true,"metadata":{}},
    {"name":"ts","type":"timestamp","nullable":true,"metadata":{}}
]}"#;

/// 2000-01-01T00:00:00Z and 2999-01-01T00:00:00Z, in microseconds.
const PAST: i64 = 946_684_800_000_000;
const FUTURE: i64 = 32_472_144_000_000_000;

fn batch(rows: &[(i64, Option<&str>, i64)]) -> RecordBatch {
    let schema = Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("name", DataType::Utf8, true),
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            true,
        ),
    ]);
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(
            rows.iter().map(|r| r.0).collect::<Vec<_>>(),
        )),
        Arc::new(StringArray::from(
            rows.iter().map(|r| r.1).collect::<Vec<_>>(),
        )),
        Arc::new(
            TimestampMicrosecondArray::from(rows.iter().map(|r| r.2).collect::<Vec<_>>())
                .with_timezone("UTC"),
        ),
    ];
    RecordBatch::try_new(Arc::new(schema), columns).unwrap()
}

/// Four files: a-fruit, b-fruit, c-fruit with a NULL name, and long `melon…` names whose
/// statistics are cut to 32 characters; only the last file has timestamps in the future.
fn fruit_table() -> Table {
    let t = Table::in_memory();
    t.create_with_schema(
        StructType::from_json(SCHEMA).unwrap(),
        &[],
        alluvium::NO_PROPERTIES,
    )
    .unwrap();
    let long = "melon".repeat(10);
    let longer = format!("{long}zzz");
    for rows in [
        vec![(1, Some("apple"), PAST), (2, Some("apricot"), PAST)],
        vec![(3, Some("banana"), PAST), (4, Some("blueberry"), PAST)],
        vec![(5, Some("cherry"), PAST), (6, None, PAST)],
        vec![
            (7, Some(long.as_str()), FUTURE),
            (8, Some(longer.as_str()), FUTURE),
        ],
    ] {
        t.append([batch(&rows)], &WriteOptions::default()).unwrap();
    }
    t
}

/// The files a scan with `filter` plans, and the ids of the rows it returns.
fn scan(t: &Table, filter: Expr) -> (usize, Vec<i64>) {
    let scan = ScanBuilder::new(t.snapshot().unwrap())
        .with_filter(filter)
        .build()
        .unwrap();
    let files = scan.file_tasks().len();
    let batches = scan.execute_to_vec().unwrap();
    let mut ids: Vec<i64> = canon_rows(&batches)
        .iter()
        .map(|r| r.split(" | ").next().unwrap().parse().unwrap())
        .collect();
    ids.sort_unstable();
    (files, ids)
}

fn scan_str(t: &Table, filter: &str) -> (usize, Vec<i64>) {
    scan(t, alluvium::parse_expr(filter).unwrap())
}

#[test]
fn like_prefixes_between_and_constants_skip_files_and_match_exactly() {
    let t = fruit_table();
    for (filter, files, ids) in [
        ("name LIKE 'b%'", 1, vec![3, 4]),
        ("name LIKE 'ap_%'", 1, vec![1, 2]),
        ("name LIKE 'apple'", 1, vec![1]),
        // The cut maximum of the last file still admits the longer names.
        (
            "name LIKE 'melonmelonmelonmelonmelonmelonmelonmelonmelonmelonz%'",
            1,
            vec![8],
        ),
        ("name LIKE 'z%'", 0, vec![]),
        ("name NOT LIKE 'b%'", 4, vec![1, 2, 5, 7, 8]),
        ("id BETWEEN 3 AND 5", 2, vec![3, 4, 5]),
        ("id NOT BETWEEN 2 AND 7", 2, vec![1, 8]),
        ("ts > current_timestamp() - INTERVAL 1 DAY", 1, vec![7, 8]),
        (
            "ts < TIMESTAMP '2000-01-01' + INTERVAL 1 HOUR",
            3,
            vec![1, 2, 3, 4, 5, 6],
        ),
        ("name IS NOT DISTINCT FROM 'cherry'", 1, vec![5]),
        (
            "name IS DISTINCT FROM 'cherry' AND id > 4",
            2,
            vec![6, 7, 8],
        ),
        // Functions of a column never prune; they still match exactly.
        ("lower(name) LIKE 'b%'", 4, vec![3, 4]),
        ("upper(substring(name, 1, 1)) = 'C'", 4, vec![5]),
        ("length(name) > 40", 4, vec![7, 8]),
        ("name ILIKE 'B%'", 4, vec![3, 4]),
    ] {
        assert_eq!(scan_str(&t, filter), (files, ids), "{filter}");
    }
    // The typed builder gives what the text gives.
    let built = Expr::column("name")
        .like("b%")
        .or(Expr::column("id").between(Expr::lit(7), Expr::lit(9)))
        .and(Expr::column("ts").gt(Expr::current_timestamp().sub(Expr::lit(Interval::days(3650)))));
    assert_eq!(
        built.to_string(),
        "(name LIKE 'b%' OR id >= 7 AND id <= 9) AND ts > current_timestamp() - INTERVAL 3650 DAY"
    );
    assert_eq!(scan(&t, built), (1, vec![7, 8]));
}

#[test]
fn dml_takes_the_same_language() {
    let t = fruit_table();
    t.update_str(
        "name = upper(name) || '!'",
        Some("name LIKE 'a%' AND id BETWEEN 1 AND 1"),
        &WriteOptions::default(),
    )
    .unwrap();
    assert_eq!(scan_str(&t, "name = 'APPLE!'"), (1, vec![1]));
    t.delete_str(
        "starts_with(name, 'bl') OR name IS NOT DISTINCT FROM NULL",
        &WriteOptions::default(),
    )
    .unwrap();
    assert_eq!(scan_str(&t, "TRUE").1, vec![1, 2, 3, 5, 7, 8]);
}

#[test]
fn expression_errors_are_typed_invalid_input() {
    let t = fruit_table();
    for (filter, want) in [
        ("name LIKE", "syntax error at column 10"),
        ("lowr(name) = 'a'", "did you mean `lower`?"),
        ("nmae = 'a'", "unknown column `nmae`; did you mean `name`?"),
        (
            "name LIKE 'a\\'",
            "not allowed to end with the escape character",
        ),
        (
            "id + INTERVAL 1 DAY > 0",
            "INTERVAL arithmetic applies to dates and timestamps",
        ),
    ] {
        let e = match t.delete_str(filter, &WriteOptions::default()) {
            Err(e) => e,
            Ok(_) => panic!("{filter} deleted"),
        };
        assert_eq!(e.kind(), ErrorKind::InvalidInput, "{filter}: {e}");
        assert!(e.to_string().contains(want), "{filter}: {e}");
        assert!(e.as_expr_error().is_some(), "{filter}: {e:?}");
    }
    let e = t
        .delete_str("id = 1 AND", &WriteOptions::default())
        .unwrap_err();
    match e.as_expr_error() {
        Some(ExprError::Syntax(s)) => {
            assert_eq!(s.column(), 11);
            assert_eq!(s.pointer(), "  id = 1 AND\n            ^");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(t.snapshot().unwrap().version(), 4, "nothing committed");
}

#[test]
fn clock_reading_expressions_are_refused_where_determinism_is_required() {
    let t = Table::in_memory();
    let schema = StructType::from_json(
        r#"{"type":"struct","fields":[
        {"name":"id","type":"long","nullable":true,"metadata":{}},
        {"name":"at","type":"timestamp","nullable":true,"metadata":{"CURRENT_DEFAULT":"current_timestamp()"}}
    ]}"#,
    )
    .unwrap();
    t.create_with_schema(schema, &[], alluvium::NO_PROPERTIES)
        .unwrap();
    // A default may read the clock: the write's instant.
    let before = chrono::Utc::now().timestamp_micros();
    let ids = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true)])),
        vec![Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef],
    )
    .unwrap();
    t.append([ids], &WriteOptions::default()).unwrap();
    let after = chrono::Utc::now().timestamp_micros();
    let (_, rows) = scan_str(&t, &format!("at >= TIMESTAMP '{}'", micros_text(before)));
    assert_eq!(rows, vec![1, 2]);
    let (_, rows) = scan_str(&t, &format!("at > TIMESTAMP '{}'", micros_text(after)));
    assert!(rows.is_empty());
    // A CHECK constraint may not.
    let e = t
        .add_constraint("recent", "at > current_timestamp() - INTERVAL 1 DAY")
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
    assert!(e.to_string().contains("not deterministic"), "{e}");
    t.add_constraint("positive", "abs(id) = id").unwrap();
    // Nor a generation expression: writes to such a table are refused, naming the column.
    let g = Table::in_memory();
    let schema = StructType::from_json(
        r#"{"type":"struct","fields":[
        {"name":"id","type":"long","nullable":true,"metadata":{}},
        {"name":"today","type":"date","nullable":true,"metadata":{"delta.generationExpression":"current_date()"}}
    ]}"#,
    )
    .unwrap();
    g.create_with_schema(schema, &[], alluvium::NO_PROPERTIES)
        .unwrap();
    let ids = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true)])),
        vec![Arc::new(Int64Array::from(vec![1])) as ArrayRef],
    )
    .unwrap();
    let e = g.append([ids], &WriteOptions::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
    assert!(
        e.to_string().contains("`today`") && e.to_string().contains("deterministic"),
        "{e}"
    );
}

fn micros_text(micros: i64) -> String {
    chrono::DateTime::from_timestamp_micros(micros)
        .unwrap()
        .format("%Y-%m-%dT%H:%M:%S%.6fZ")
        .to_string()
}
