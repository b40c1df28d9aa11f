//! The expression language (`--filter`, `UPDATE ... SET`, MERGE) on arbitrary text.
//!
//! Properties: `parse_expr` never panics (whatever the nesting depth); a parsed expression
//! prints (`Display`) as SQL that parses back to the same tree; it binds (or fails to bind)
//! as a predicate and as a value against a schema covering every primitive type without
//! panicking; data skipping over a file summary never panics; and evaluating a bound
//! predicate or value on a small batch (NULLs, zeros, extreme integers) returns a value of
//! the bound type or a typed error, never a panic.
#![no_main]

use std::sync::OnceLock;

use alluvium_txlog::actions::OptStringMap;
use alluvium_txlog::column_mapping::ColumnMappingMode;
use std::sync::Arc;

use alluvium_expr::{
    FileSummary, bind, bind_value, evaluate, evaluate_value, may_match, parse_expr,
};
use alluvium_txlog::schema::arrow_type;
use arrow_array::{
    ArrayRef, BooleanArray, Date32Array, Decimal128Array, Float64Array, Int32Array, Int64Array,
    RecordBatch, StringArray,
};
use arrow_schema::{Field, Schema};
use alluvium_txlog::schema::StructType;
use alluvium_txlog::stats::FileStats;
use libfuzzer_sys::fuzz_target;

const SCHEMA: &str = r#"{"type":"struct","fields":[
    {"name":"s","type":"string","nullable":true,"metadata":{}},
    {"name":"l","type":"long","nullable":true,"metadata":{}},
    {"name":"i","type":"integer","nullable":true,"metadata":{}},
    {"name":"sh","type":"short","nullable":true,"metadata":{}},
    {"name":"by","type":"byte","nullable":true,"metadata":{}},
    {"name":"f","type":"float","nullable":true,"metadata":{}},
    {"name":"d","type":"double","nullable":true,"metadata":{}},
    {"name":"b","type":"boolean","nullable":true,"metadata":{}},
    {"name":"bin","type":"binary","nullable":true,"metadata":{}},
    {"name":"dt","type":"date","nullable":true,"metadata":{}},
    {"name":"ts","type":"timestamp","nullable":true,"metadata":{}},
    {"name":"ntz","type":"timestamp_ntz","nullable":true,"metadata":{}},
    {"name":"dec","type":"decimal(10,3)","nullable":true,"metadata":{}},
    {"name":"p","type":"integer","nullable":true,"metadata":{"delta.columnMapping.physicalName":"col-p"}},
    {"name":"pd","type":"date","nullable":true,"metadata":{}},
    {"name":"st","type":{"type":"struct","fields":[
        {"name":"x","type":"decimal(38,18)","nullable":true,"metadata":{}},
        {"name":"y","type":"timestamp","nullable":true,"metadata":{}}
    ]},"nullable":true,"metadata":{}},
    {"name":"arr","type":{"type":"array","elementType":"long","containsNull":true},"nullable":true,"metadata":{}}
]}"#;

const STATS: &str = r#"{"numRecords":10,
    "minValues":{"s":"a","l":-5,"i":1,"sh":2,"by":3,"f":-1.5,"d":0.25,"dt":"2020-01-01",
        "ts":"2020-01-01T00:00:00.000-07:52","ntz":"2020-01-01T00:00:00.000","dec":1.5,
        "st":{"x":0.1,"y":"1970-01-01T00:00:00.000Z"}},
    "maxValues":{"s":"zz","l":500,"i":100,"sh":200,"by":30,"f":1.5,"d":1e300,"dt":"2021-01-01",
        "ts":"2021-01-01T00:00:00.000Z","ntz":"2021-01-01T00:00:00.000","dec":99.5,
        "st":{"x":1.1,"y":"2000-01-01T00:00:00.000Z"}},
    "nullCount":{"s":0,"l":1,"b":10,"st":{"x":0,"y":3}}}"#;

/// The evaluable part of the schema: the columns of [`batch`].
const EVAL_SCHEMA: &str = r#"{"type":"struct","fields":[
    {"name":"s","type":"string","nullable":true,"metadata":{}},
    {"name":"l","type":"long","nullable":true,"metadata":{}},
    {"name":"i","type":"integer","nullable":true,"metadata":{}},
    {"name":"d","type":"double","nullable":true,"metadata":{}},
    {"name":"b","type":"boolean","nullable":true,"metadata":{}},
    {"name":"dt","type":"date","nullable":true,"metadata":{}},
    {"name":"dec","type":"decimal(10,3)","nullable":true,"metadata":{}}
]}"#;

fn batch() -> RecordBatch {
    let dec = Decimal128Array::from(vec![Some(0), Some(9_999_999_999), None, Some(-1_500)])
        .with_precision_and_scale(10, 3)
        .expect("decimal fixture");
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(vec![Some("a"), Some("12"), None, Some("")])),
        Arc::new(Int64Array::from(vec![Some(0), Some(i64::MAX), None, Some(i64::MIN)])),
        Arc::new(Int32Array::from(vec![Some(1), Some(0), None, Some(i32::MIN)])),
        Arc::new(Float64Array::from(vec![Some(0.0), Some(f64::NAN), None, Some(-1e308)])),
        Arc::new(BooleanArray::from(vec![Some(true), Some(false), None, Some(true)])),
        Arc::new(Date32Array::from(vec![Some(0), Some(-1), None, Some(20_000)])),
        Arc::new(dec),
    ];
    let fields: Vec<Field> = ["s", "l", "i", "d", "b", "dt", "dec"]
        .iter()
        .zip(&columns)
        .map(|(n, c)| Field::new(*n, c.data_type().clone(), true))
        .collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).expect("batch fixture")
}

struct Fixture {
    eval_schema: StructType,
    batch: RecordBatch,
    schema: StructType,
    partition_columns: Vec<String>,
    partition_values: OptStringMap,
    stats: FileStats,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let mut partition_values = OptStringMap::default();
        partition_values.insert("p", Some("7".to_string()));
        partition_values.insert("col-p", Some("8".to_string()));
        partition_values.insert("pd", None);
        Fixture {
            eval_schema: StructType::from_json(EVAL_SCHEMA).expect("fixture schema"),
            batch: batch(),
            schema: StructType::from_json(SCHEMA).expect("fixture schema"),
            partition_columns: vec!["p".to_string(), "pd".to_string()],
            partition_values,
            stats: FileStats::parse(STATS).expect("fixture stats"),
        }
    })
}

fuzz_target!(|text: &str| {
    let Ok(expr) = parse_expr(text) else { return };
    let printed = expr.to_string();
    match parse_expr(&printed) {
        Ok(again) => assert_eq!(again, expr, "{text:?} printed as {printed:?}"),
        Err(e) => panic!("{text:?} printed as {printed:?}, which does not parse: {e}"),
    }
    let f = fixture();
    let empty = OptStringMap::default();
    let summaries = [
        FileSummary {
            partition_values: &f.partition_values,
            stats: Some(&f.stats),
        },
        FileSummary {
            partition_values: &empty,
            stats: None,
        },
    ];
    for mode in [ColumnMappingMode::None, ColumnMappingMode::Name] {
        let Ok(pred) = bind(&expr, &f.schema, &f.partition_columns, mode) else {
            continue;
        };
        let _ = pred.only_partition_columns();
        for summary in &summaries {
            let _ = may_match(&pred, summary);
        }
    }
    let _ = bind_value(&expr, &f.schema, &f.partition_columns, ColumnMappingMode::Name);
    if let Ok(value) = bind_value(&expr, &f.eval_schema, &[], ColumnMappingMode::None) {
        if let Ok(array) = evaluate_value(&value, &f.batch) {
            let expected = arrow_type(value.data_type()).expect("primitive types map to Arrow");
            assert_eq!(array.data_type(), &expected, "{text:?}");
            assert_eq!(array.len(), f.batch.num_rows());
        }
    }
    if let Ok(pred) = bind(&expr, &f.eval_schema, &[], ColumnMappingMode::None) {
        if let Ok(mask) = evaluate(&pred, &f.batch) {
            assert_eq!(mask.len(), f.batch.num_rows());
        }
    }
});
