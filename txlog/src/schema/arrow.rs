//! Conversion between Delta and Arrow schemas.
//!
//! | Delta | Arrow |
//! |---|---|
//! | string, binary | Utf8, Binary |
//! | long, integer, short, byte | Int64, Int32, Int16, Int8 |
//! | float, double, boolean | Float32, Float64, Boolean |
//! | date | Date32 |
//! | timestamp | Timestamp(µs, "UTC") |
//! | timestamp_ntz | Timestamp(µs, none) |
//! | decimal(p,s) | Decimal128(p, s) |
//! | void | Null |
//! | struct / array / map | Struct / List("element") / Map("key_value", "key", "value") |

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType as ArrowType, Field, Fields, Schema, TimeUnit};
use serde_json::{Map, Value};

use super::{ArrayType, DataType, MapType, PrimitiveType, StructField, StructType};
use crate::{LogError, Result};

/// The Arrow type of a Delta type.
///
/// # Errors
/// [`LogError::UnsupportedFeature`] for `variant`, which alluvium does not read yet.
pub fn arrow_type(dt: &DataType) -> Result<ArrowType> {
    Ok(match dt {
        DataType::Primitive(p) => match p {
            PrimitiveType::String => ArrowType::Utf8,
            PrimitiveType::Long => ArrowType::Int64,
            PrimitiveType::Integer => ArrowType::Int32,
            PrimitiveType::Short => ArrowType::Int16,
            PrimitiveType::Byte => ArrowType::Int8,
            PrimitiveType::Float => ArrowType::Float32,
            PrimitiveType::Double => ArrowType::Float64,
            PrimitiveType::Boolean => ArrowType::Boolean,
            PrimitiveType::Binary => ArrowType::Binary,
            PrimitiveType::Date => ArrowType::Date32,
            PrimitiveType::Timestamp => {
                ArrowType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
            }
            PrimitiveType::TimestampNtz => ArrowType::Timestamp(TimeUnit::Microsecond, None),
            PrimitiveType::Decimal(p, s) => {
                ArrowType::Decimal128(*p, i8::try_from(*s).unwrap_or(i8::MAX))
            }
            PrimitiveType::Void => ArrowType::Null,
            PrimitiveType::Variant => {
                return Err(LogError::unsupported_reader(
                    "variantType",
                    Some("variant columns are not readable by alluvium yet".into()),
                ));
            }
        },
        DataType::Struct(s) => ArrowType::Struct(arrow_fields(s)?),
        DataType::Array(a) => ArrowType::List(Arc::new(Field::new(
            "element",
            arrow_type(&a.element_type)?,
            a.contains_null,
        ))),
        DataType::Map(m) => {
            let entries = Fields::from(vec![
                Field::new("key", arrow_type(&m.key_type)?, false),
                Field::new("value", arrow_type(&m.value_type)?, m.value_contains_null),
            ]);
            ArrowType::Map(
                Arc::new(Field::new("key_value", ArrowType::Struct(entries), false)),
                false,
            )
        }
    })
}

fn metadata_strings(m: &Map<String, Value>) -> HashMap<String, String> {
    m.iter()
        .map(|(k, v)| {
            let s = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (k.clone(), s)
        })
        .collect()
}

/// The Arrow field of a Delta field (logical name, metadata as strings).
///
/// # Errors
/// As [`arrow_type`].
pub fn arrow_field(f: &StructField) -> Result<Field> {
    Ok(Field::new(&f.name, arrow_type(&f.data_type)?, f.nullable)
        .with_metadata(metadata_strings(&f.metadata)))
}

fn arrow_fields(s: &StructType) -> Result<Fields> {
    s.fields
        .iter()
        .map(arrow_field)
        .collect::<Result<Vec<_>>>()
        .map(Fields::from)
}

/// The Arrow schema of a Delta schema.
///
/// # Errors
/// As [`arrow_type`].
pub fn arrow_schema(s: &StructType) -> Result<Schema> {
    Ok(Schema::new(arrow_fields(s)?))
}

fn delta_type(t: &ArrowType, field: &str) -> Result<DataType> {
    let p = |p| Ok(DataType::Primitive(p));
    match t {
        ArrowType::Utf8 | ArrowType::LargeUtf8 | ArrowType::Utf8View => p(PrimitiveType::String),
        ArrowType::Binary
        | ArrowType::LargeBinary
        | ArrowType::BinaryView
        | ArrowType::FixedSizeBinary(_) => p(PrimitiveType::Binary),
        ArrowType::Int64 => p(PrimitiveType::Long),
        ArrowType::Int32 => p(PrimitiveType::Integer),
        ArrowType::Int16 => p(PrimitiveType::Short),
        ArrowType::Int8 => p(PrimitiveType::Byte),
        ArrowType::Float32 => p(PrimitiveType::Float),
        ArrowType::Float64 => p(PrimitiveType::Double),
        ArrowType::Boolean => p(PrimitiveType::Boolean),
        ArrowType::Date32 | ArrowType::Date64 => p(PrimitiveType::Date),
        ArrowType::Timestamp(_, Some(_)) => p(PrimitiveType::Timestamp),
        ArrowType::Timestamp(_, None) => p(PrimitiveType::TimestampNtz),
        ArrowType::Decimal128(prec, scale)
            if *prec <= 38 && *scale >= 0 && (*scale as u8) <= *prec =>
        {
            p(PrimitiveType::Decimal(*prec, *scale as u8))
        }
        ArrowType::Struct(fields) => Ok(DataType::Struct(Box::new(StructType::new(
            fields
                .iter()
                .map(|f| delta_field(f))
                .collect::<Result<Vec<_>>>()?,
        )))),
        ArrowType::List(f)
        | ArrowType::LargeList(f)
        | ArrowType::FixedSizeList(f, _)
        | ArrowType::ListView(f) => Ok(DataType::Array(Box::new(ArrayType {
            element_type: delta_type(f.data_type(), field)?,
            contains_null: f.is_nullable(),
        }))),
        ArrowType::Map(entries, _) => match entries.data_type() {
            ArrowType::Struct(kv) if kv.len() == 2 => Ok(DataType::Map(Box::new(MapType {
                key_type: delta_type(kv[0].data_type(), field)?,
                value_type: delta_type(kv[1].data_type(), field)?,
                value_contains_null: kv[1].is_nullable(),
            }))),
            _ => Err(LogError::InvalidSchema(format!(
                "column `{field}`: malformed Arrow map type"
            ))),
        },
        other => Err(LogError::InvalidSchema(format!(
            "column `{field}`: Arrow type {other} has no Delta equivalent"
        ))),
    }
}

fn delta_field(f: &Field) -> Result<StructField> {
    let metadata = f
        .metadata()
        .iter()
        .filter(|(k, _)| !k.starts_with("PARQUET:"))
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    Ok(StructField {
        name: f.name().clone(),
        data_type: delta_type(f.data_type(), f.name())?,
        nullable: f.is_nullable(),
        metadata,
    })
}

/// The Delta schema of an Arrow schema (used when creating a table from Arrow data).
///
/// # Errors
/// [`LogError::InvalidSchema`] for Arrow types without a Delta equivalent (unsigned
/// integers, intervals, unions, ...).
pub fn from_arrow_schema(schema: &Schema) -> Result<StructType> {
    Ok(StructType::new(
        schema
            .fields()
            .iter()
            .map(|f| delta_field(f))
            .collect::<Result<Vec<_>>>()?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_through_arrow() {
        let schema = StructType::from_json(
            r#"{"type":"struct","fields":[
            {"name":"ts","type":"timestamp","nullable":true,"metadata":{}},
            {"name":"ntz","type":"timestamp_ntz","nullable":true,"metadata":{}},
            {"name":"d","type":"decimal(5,2)","nullable":false,"metadata":{}},
            {"name":"m","type":{"type":"map","keyType":"string","valueType":"date","valueContainsNull":true},"nullable":true,"metadata":{}},
            {"name":"l","type":{"type":"array","elementType":{"type":"struct","fields":[{"name":"x","type":"byte","nullable":true,"metadata":{}}]},"containsNull":true},"nullable":true,"metadata":{}}
        ]}"#,
        )
        .unwrap();
        let arrow = arrow_schema(&schema).unwrap();
        assert_eq!(
            arrow.field(0).data_type(),
            &ArrowType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
        );
        assert_eq!(from_arrow_schema(&arrow).unwrap(), schema);
    }

    #[test]
    fn variant_is_refused_and_unsigned_has_no_delta_type() {
        let v = DataType::Primitive(PrimitiveType::Variant);
        assert!(matches!(
            arrow_type(&v),
            Err(LogError::UnsupportedFeature { .. })
        ));
        let s = Schema::new(vec![Field::new("u", ArrowType::UInt32, true)]);
        assert!(from_arrow_schema(&s).is_err());
    }
}
