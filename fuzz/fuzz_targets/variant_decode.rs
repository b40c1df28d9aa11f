//! Variant columns as a scan reads them, on arbitrary bytes.
//!
//! Input: one mode byte, then rows of `[metadata length: u8][value length: u8]` followed by
//! that many bytes each. Mode 0 builds an unshredded column (`metadata`, `value`); mode 1
//! adds a shredded `typed_value: Int64`; mode 2 a shredded object
//! `typed_value: struct<a: struct<value: binary, typed_value: Int64>>` whose nested
//! `value` bytes are the row's value bytes again.
//!
//! Properties: `alluvium::conform_variant` never panics (malformed bytes are a typed error
//! naming the column); what it accepts is canonical (`metadata`/`value` binaries), every
//! non-null row passes the validating `parquet_variant::Variant::try_new`, it renders as
//! JSON without error, and conforming it again changes nothing.
#![no_main]

use std::sync::Arc;

use alluvium::{conform_variant, variants_as_json};
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, BinaryArray, Int64Array, RecordBatch, StructArray};
use arrow_schema::{DataType, Field, Fields, Schema};
use libfuzzer_sys::fuzz_target;

fn rows(data: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    let mut rest = data;
    while rest.len() >= 2 && out.len() < 64 {
        let (m, v) = (rest[0] as usize, rest[1] as usize);
        rest = &rest[2..];
        let m = rest[..m.min(rest.len())].to_vec();
        rest = &rest[m.len()..];
        let v = rest[..v.min(rest.len())].to_vec();
        rest = &rest[v.len()..];
        out.push((m, v));
    }
    out
}

fn binary(f: &str, nullable: bool) -> Field {
    Field::new(f, DataType::Binary, nullable)
}

fn column(mode: u8, rows: &[(Vec<u8>, Vec<u8>)]) -> ArrayRef {
    let metadata: ArrayRef = Arc::new(BinaryArray::from_iter_values(rows.iter().map(|r| &r.0)));
    // An empty value stands for "no value" so shredded rows can rely on `typed_value`.
    let value: ArrayRef = Arc::new(
        rows.iter()
            .map(|r| (!r.1.is_empty()).then_some(r.1.as_slice()))
            .collect::<BinaryArray>(),
    );
    let ints: ArrayRef = Arc::new(
        rows.iter()
            .map(|r| r.1.first().map(|b| i64::from(*b)))
            .collect::<Int64Array>(),
    );
    let mut fields = vec![binary("metadata", false), binary("value", true)];
    let mut children = vec![metadata, value.clone()];
    match mode % 3 {
        0 => {}
        1 => {
            fields.push(Field::new("typed_value", DataType::Int64, true));
            children.push(ints);
        }
        _ => {
            let a_fields = Fields::from(vec![
                binary("value", true),
                Field::new("typed_value", DataType::Int64, true),
            ]);
            let a = StructArray::new(a_fields.clone(), vec![value, ints], None);
            let tv_fields = Fields::from(vec![Field::new("a", DataType::Struct(a_fields), false)]);
            let tv = StructArray::new(tv_fields.clone(), vec![Arc::new(a)], None);
            fields.push(Field::new("typed_value", DataType::Struct(tv_fields), true));
            children.push(Arc::new(tv));
            // The top-level value of a shredded object row must be absent or an object.
            children[1] = Arc::new(BinaryArray::new_null(rows.len()));
        }
    }
    Arc::new(StructArray::new(Fields::from(fields), children, None))
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let rows = rows(rest);
    let stored = column(mode, &rows);
    let Ok(canonical) = conform_variant(&stored, "v") else {
        return;
    };
    let s = canonical.as_struct();
    let (m, v) = (
        s.column(0).as_binary::<i32>(),
        s.column(1).as_binary::<i32>(),
    );
    for i in 0..s.len() {
        if s.is_valid(i) {
            if let Err(e) = parquet_variant::Variant::try_new(m.value(i), v.value(i)) {
                panic!("accepted row {i} does not validate: {e}");
            }
        }
    }
    let field = Field::new("v", canonical.data_type().clone(), true).with_metadata(
        alluvium_txlog::schema::extension_metadata(&alluvium_txlog::schema::DataType::Primitive(
            alluvium_txlog::schema::PrimitiveType::Variant,
        )),
    );
    let batch = RecordBatch::try_new(Arc::new(Schema::new(vec![field])), vec![canonical.clone()])
        .expect("canonical column fits its own schema");
    if let Err(e) = variants_as_json(&batch) {
        panic!("accepted column does not render: {e}");
    }
    let again = conform_variant(&canonical, "v").expect("canonical column conforms again");
    assert_eq!(
        again.to_data(),
        canonical.to_data(),
        "conforming is not idempotent"
    );
});
