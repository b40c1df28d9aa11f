//! Schema JSON (`metaData.schemaString`) on arbitrary text.
//!
//! Properties: `StructType::from_json` never panics; a parsed schema serializes with
//! `to_json` to text that parses back to an equal schema (numbers in field metadata compared
//! by value, floats exactly: `common/approx_json.rs`); `arrow_schema`, `from_arrow_schema` and the
//! column-mapping physical schema never panic, and every top-level field can be found by its
//! own name.
#![no_main]

#[path = "../common/approx_json.rs"]
mod approx_json;

use alluvium_txlog::column_mapping::ColumnMappingMode;
use alluvium_txlog::schema::{DataType, StructType, arrow_schema, from_arrow_schema};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fn same_struct(a: &StructType, b: &StructType) -> bool {
    a.fields.len() == b.fields.len()
        && a.fields.iter().zip(&b.fields).all(|(x, y)| {
            x.name == y.name
                && x.nullable == y.nullable
                && same_type(&x.data_type, &y.data_type)
                && approx_json::close(
                    &Value::Object(x.metadata.clone()),
                    &Value::Object(y.metadata.clone()),
                )
        })
}

fn same_type(a: &DataType, b: &DataType) -> bool {
    match (a, b) {
        (DataType::Struct(x), DataType::Struct(y)) => same_struct(x, y),
        (DataType::Array(x), DataType::Array(y)) => {
            x.contains_null == y.contains_null && same_type(&x.element_type, &y.element_type)
        }
        (DataType::Map(x), DataType::Map(y)) => {
            x.value_contains_null == y.value_contains_null
                && same_type(&x.key_type, &y.key_type)
                && same_type(&x.value_type, &y.value_type)
        }
        _ => a == b,
    }
}

fuzz_target!(|text: &str| {
    let Ok(schema) = StructType::from_json(text) else {
        return;
    };
    let json = schema.to_json();
    match StructType::from_json(&json) {
        Ok(again) => assert!(
            same_struct(&again, &schema),
            "schema changed through to_json: {json}"
        ),
        Err(e) => panic!("to_json output does not parse: {e}\n{json}"),
    }
    for (i, f) in schema.fields.iter().enumerate() {
        assert_eq!(
            schema.index_of(&f.name),
            Some(i),
            "field `{}` is not found by its name",
            f.name
        );
        let _ = (f.physical_name(), f.column_id());
    }
    if let Ok(arrow) = arrow_schema(&schema) {
        let _ = from_arrow_schema(&arrow);
    }
    for mode in [ColumnMappingMode::Name, ColumnMappingMode::Id] {
        let physical = mode.physical_schema(&schema);
        let _ = arrow_schema(&physical);
    }
});
