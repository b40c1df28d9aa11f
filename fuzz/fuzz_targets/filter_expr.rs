//! The `--filter` predicate language on arbitrary text.
//!
//! Properties: `parse_expr` never panics (whatever the nesting depth); a parsed expression
//! binds (or fails to bind) against a schema covering every primitive type without
//! panicking, and data skipping over a file summary never panics.
#![no_main]

use std::sync::OnceLock;

use alluvium_txlog::actions::OptStringMap;
use alluvium_txlog::column_mapping::ColumnMappingMode;
use alluvium_txlog::expr::{FileSummary, bind, may_match, parse_expr};
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

struct Fixture {
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
            schema: StructType::from_json(SCHEMA).expect("fixture schema"),
            partition_columns: vec!["p".to_string(), "pd".to_string()],
            partition_values,
            stats: FileStats::parse(STATS).expect("fixture stats"),
        }
    })
}

fuzz_target!(|text: &str| {
    let Ok(expr) = parse_expr(text) else { return };
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
});
