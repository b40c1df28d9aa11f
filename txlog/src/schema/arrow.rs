//! Conversion between Delta and Arrow schemas.
//!
//! | Delta | Arrow |
//! |---|---|
//! | string, binary | Utf8, Binary (Utf8View, BinaryView in the view form) |
//! | long, integer, short, byte | Int64, Int32, Int16, Int8 |
//! | float, double, boolean | Float32, Float64, Boolean |
//! | date | Date32 |
//! | timestamp | Timestamp(µs, "UTC") |
//! | timestamp_ntz | Timestamp(µs, none) |
//! | decimal(p,s) | Decimal128(p, s) |
//! | void | Null |
//! | struct / array / map | Struct / List("element") / Map("key_value", "key", "value") |
//! | variant | Struct(metadata: Binary, value: Binary), extension `arrow.parquet.variant` |
//! | geometry(crs), geography(crs, algorithm) | Binary (WKB), extension `geoarrow.wkb` with `{"crs", "edges"}` |
//!
//! The two extension types live in the metadata of the field holding the value
//! (`ARROW:extension:name`, `ARROW:extension:metadata`), so [`typed_field`] builds every
//! field whose type may be one of them.
//!
//! [`arrow_type_as`] is the one mapping; an [`ArrowForm`] picks the naming (logical names,
//! or physical names and field ids under column mapping) and the nullability (declared, or
//! all nullable) of the Arrow form: as declared for checkpoints, all nullable with logical
//! names for scans, physical for the data files a writer produces.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType as ArrowType, Field, Fields, Schema, TimeUnit};
pub use parquet::arrow::PARQUET_FIELD_ID_META_KEY;
use serde_json::{Map, Value};

use super::{
    ArrayType, DataType, GeoKind, GeoType, MapType, PrimitiveType, StructField, StructType,
};
use crate::column_mapping::ColumnMappingMode;
use crate::{LogError, Result};

/// Field-metadata key naming an Arrow extension type.
pub const EXTENSION_NAME_KEY: &str = "ARROW:extension:name";
/// Field-metadata key holding an Arrow extension type's parameters.
pub const EXTENSION_METADATA_KEY: &str = "ARROW:extension:metadata";
/// The canonical Arrow extension name of Parquet variant values.
pub const VARIANT_EXTENSION: &str = "arrow.parquet.variant";
/// The GeoArrow extension name of WKB geometries.
pub const WKB_EXTENSION: &str = "geoarrow.wkb";

/// The Arrow struct fields of an unshredded variant: `metadata` and `value` binaries.
pub fn variant_fields() -> Fields {
    Fields::from(vec![
        Field::new("metadata", ArrowType::Binary, false),
        Field::new("value", ArrowType::Binary, false),
    ])
}

/// The extension-type metadata an Arrow field of Delta type `dt` carries (empty unless
/// `dt` is a variant or geospatial type).
pub fn extension_metadata(dt: &DataType) -> HashMap<String, String> {
    let mut m = HashMap::new();
    match dt {
        DataType::Primitive(PrimitiveType::Variant) => {
            m.insert(EXTENSION_NAME_KEY.into(), VARIANT_EXTENSION.into());
            m.insert(EXTENSION_METADATA_KEY.into(), String::new());
        }
        DataType::Geospatial(g) => {
            let mut params = Map::new();
            params.insert("crs".into(), Value::String(g.crs.clone()));
            if let Some(a) = &g.algorithm {
                params.insert("edges".into(), Value::String(a.clone()));
            }
            m.insert(EXTENSION_NAME_KEY.into(), WKB_EXTENSION.into());
            m.insert(
                EXTENSION_METADATA_KEY.into(),
                Value::Object(params).to_string(),
            );
        }
        _ => {}
    }
    m
}

/// How the fields of an Arrow form of a Delta type are named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrowNaming {
    /// Logical names, with the extension-type metadata of variant and geospatial values:
    /// the form scans return and checkpoints store.
    Logical,
    /// Physical names under this column-mapping mode, each field carrying its field id
    /// ([`PARQUET_FIELD_ID_META_KEY`]) when the mode maps columns: the form data files
    /// store. No extension-type metadata (what a data file stores is the plain layout).
    Physical(ColumnMappingMode),
}

/// Which nullability the Arrow form of a Delta type declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrowNullability {
    /// As the Delta schema declares it (`nullable`, `containsNull`, `valueContainsNull`),
    /// with each struct field's Delta metadata carried as strings (logical naming only).
    Declared,
    /// Every field nullable, map keys excepted: files may hold nulls the schema does not
    /// admit, and reading them never fails on that.
    AllNullable,
}

/// Which Arrow layout holds `string` and `binary` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrowStrings {
    /// `Utf8` and `Binary`: one offsets buffer and one values buffer.
    Offsets,
    /// `Utf8View` and `BinaryView`: a 16-byte view per value (short values inline, longer
    /// ones pointing into shared buffers). Decoding a dictionary-encoded Parquet column to
    /// views copies no string bytes, which is why readers offer it. Geospatial values
    /// (WKB) and the binaries of a variant keep `Binary`: their extension types are
    /// defined on it.
    Views,
}

/// One Arrow form of Delta types: its naming, its nullability and its string layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArrowForm {
    /// How fields are named.
    pub naming: ArrowNaming,
    /// Which nullability fields declare.
    pub nullability: ArrowNullability,
    /// Which layout `string` and `binary` values take.
    pub strings: ArrowStrings,
}

impl ArrowForm {
    /// The schema as declared: logical names, declared nullability and field metadata
    /// (checkpoints, the Arrow schema of a table).
    pub const DECLARED: ArrowForm = ArrowForm {
        naming: ArrowNaming::Logical,
        nullability: ArrowNullability::Declared,
        strings: ArrowStrings::Offsets,
    };

    /// What scans return: logical names, every field nullable.
    pub const SCAN: ArrowForm = ArrowForm {
        naming: ArrowNaming::Logical,
        nullability: ArrowNullability::AllNullable,
        strings: ArrowStrings::Offsets,
    };

    /// What scans asked for view types return: [`SCAN`](Self::SCAN) with `string` and
    /// `binary` values as `Utf8View` and `BinaryView`.
    pub const SCAN_VIEWS: ArrowForm = ArrowForm {
        naming: ArrowNaming::Logical,
        nullability: ArrowNullability::AllNullable,
        strings: ArrowStrings::Views,
    };

    /// [`SCAN_VIEWS`](Self::SCAN_VIEWS) when `views`, else [`SCAN`](Self::SCAN).
    pub const fn scan(views: bool) -> ArrowForm {
        if views { Self::SCAN_VIEWS } else { Self::SCAN }
    }

    /// What data files store under column-mapping `mode`: physical names and field ids,
    /// every field nullable.
    pub const fn physical(mode: ColumnMappingMode) -> ArrowForm {
        ArrowForm {
            naming: ArrowNaming::Physical(mode),
            nullability: ArrowNullability::AllNullable,
            strings: ArrowStrings::Offsets,
        }
    }

    fn nullable(self, declared: bool) -> bool {
        match self.nullability {
            ArrowNullability::Declared => declared,
            ArrowNullability::AllNullable => true,
        }
    }

    /// A field that is not a struct field (list element, map key or value), of the given
    /// nullability.
    fn inner_field(self, name: &str, dt: &DataType, nullable: bool) -> Result<Field> {
        let field = Field::new(name, arrow_type_as(dt, self)?, nullable);
        Ok(match self.naming {
            ArrowNaming::Logical => field.with_metadata(extension_metadata(dt)),
            ArrowNaming::Physical(_) => field,
        })
    }
}

/// An Arrow field named `name` of Delta type `dt`, with the extension-type metadata that
/// variant and geospatial types need.
///
/// # Errors
/// As [`arrow_type`].
pub fn typed_field(name: &str, dt: &DataType, nullable: bool) -> Result<Field> {
    ArrowForm::DECLARED.inner_field(name, dt, nullable)
}

/// The Arrow type of a Delta type as declared ([`ArrowForm::DECLARED`]).
///
/// # Errors
/// None today; kept fallible for types alluvium may not map.
pub fn arrow_type(dt: &DataType) -> Result<ArrowType> {
    arrow_type_as(dt, ArrowForm::DECLARED)
}

/// The Arrow type of a Delta type in the given form: the one Delta-to-Arrow type mapping
/// (see the module docs for the table).
///
/// # Errors
/// None today; kept fallible for types alluvium may not map.
pub fn arrow_type_as(dt: &DataType, form: ArrowForm) -> Result<ArrowType> {
    Ok(match dt {
        DataType::Primitive(p) => match p {
            PrimitiveType::String => match form.strings {
                ArrowStrings::Offsets => ArrowType::Utf8,
                ArrowStrings::Views => ArrowType::Utf8View,
            },
            PrimitiveType::Long => ArrowType::Int64,
            PrimitiveType::Integer => ArrowType::Int32,
            PrimitiveType::Short => ArrowType::Int16,
            PrimitiveType::Byte => ArrowType::Int8,
            PrimitiveType::Float => ArrowType::Float32,
            PrimitiveType::Double => ArrowType::Float64,
            PrimitiveType::Boolean => ArrowType::Boolean,
            PrimitiveType::Binary => match form.strings {
                ArrowStrings::Offsets => ArrowType::Binary,
                ArrowStrings::Views => ArrowType::BinaryView,
            },
            PrimitiveType::Date => ArrowType::Date32,
            PrimitiveType::Timestamp => {
                ArrowType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
            }
            PrimitiveType::TimestampNtz => ArrowType::Timestamp(TimeUnit::Microsecond, None),
            PrimitiveType::Decimal(p, s) => {
                ArrowType::Decimal128(*p, i8::try_from(*s).unwrap_or(i8::MAX))
            }
            PrimitiveType::Void => ArrowType::Null,
            PrimitiveType::Variant => ArrowType::Struct(variant_fields()),
        },
        DataType::Geospatial(_) => ArrowType::Binary,
        DataType::Struct(s) => ArrowType::Struct(arrow_fields_as(&s.fields, form)?),
        DataType::Array(a) => ArrowType::List(Arc::new(form.inner_field(
            "element",
            &a.element_type,
            form.nullable(a.contains_null),
        )?)),
        DataType::Map(m) => {
            // Map keys are never null, in every form.
            let entries = Fields::from(vec![
                form.inner_field("key", &m.key_type, false)?,
                form.inner_field("value", &m.value_type, form.nullable(m.value_contains_null))?,
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

/// The Arrow field of a Delta field as declared (logical name, metadata as strings).
///
/// # Errors
/// As [`arrow_type`].
pub fn arrow_field(f: &StructField) -> Result<Field> {
    arrow_field_as(f, ArrowForm::DECLARED)
}

/// The Arrow field of a Delta struct field in the given form.
///
/// # Errors
/// As [`arrow_type`].
pub fn arrow_field_as(f: &StructField, form: ArrowForm) -> Result<Field> {
    let (name, metadata) = match form.naming {
        ArrowNaming::Logical => {
            let mut metadata = match form.nullability {
                ArrowNullability::Declared => metadata_strings(&f.metadata),
                ArrowNullability::AllNullable => HashMap::new(),
            };
            metadata.extend(extension_metadata(&f.data_type));
            (f.name.as_str(), metadata)
        }
        ArrowNaming::Physical(mode) => {
            let mut metadata = HashMap::new();
            if mode != ColumnMappingMode::None
                && let Some(id) = f.column_id()
            {
                metadata.insert(PARQUET_FIELD_ID_META_KEY.to_string(), id.to_string());
            }
            (mode.physical_name(f), metadata)
        }
    };
    Ok(Field::new(
        name,
        arrow_type_as(&f.data_type, form)?,
        form.nullable(f.nullable),
    )
    .with_metadata(metadata))
}

/// The Arrow fields of Delta struct fields in the given form.
///
/// # Errors
/// As [`arrow_type`].
pub fn arrow_fields_as(fields: &[StructField], form: ArrowForm) -> Result<Fields> {
    fields
        .iter()
        .map(|f| arrow_field_as(f, form))
        .collect::<Result<Vec<_>>>()
        .map(Fields::from)
}

/// The Arrow schema of a Delta schema as declared.
///
/// # Errors
/// As [`arrow_type`].
pub fn arrow_schema(s: &StructType) -> Result<Schema> {
    Ok(Schema::new(arrow_fields_as(
        &s.fields,
        ArrowForm::DECLARED,
    )?))
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
        // Spark's NullType: a `void` column (never stored in data files).
        ArrowType::Null => p(PrimitiveType::Void),
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
            element_type: field_type(f, field)?,
            contains_null: f.is_nullable(),
        }))),
        ArrowType::Map(entries, _) => match entries.data_type() {
            ArrowType::Struct(kv) if kv.len() == 2 => Ok(DataType::Map(Box::new(MapType {
                key_type: field_type(&kv[0], field)?,
                value_type: field_type(&kv[1], field)?,
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

/// The Delta type of an Arrow field: its extension type (variant, WKB geometry) if it
/// names one, else the type of its Arrow type.
fn field_type(f: &Field, column: &str) -> Result<DataType> {
    let ext = f.metadata().get(EXTENSION_NAME_KEY).map(String::as_str);
    match ext {
        Some(VARIANT_EXTENSION) => Ok(DataType::Primitive(PrimitiveType::Variant)),
        Some(WKB_EXTENSION) => {
            let params: Map<String, Value> = f
                .metadata()
                .get(EXTENSION_METADATA_KEY)
                .filter(|m| !m.is_empty())
                .map(|m| serde_json::from_str(m))
                .transpose()
                .map_err(|e| {
                    LogError::InvalidSchema(format!(
                        "column `{column}`: malformed {WKB_EXTENSION} metadata: {e}"
                    ))
                })?
                .unwrap_or_default();
            let crs = match params.get("crs") {
                None | Some(Value::Null) => GeoType::DEFAULT_CRS.to_string(),
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
            };
            // GeoArrow: no `edges` means planar (a geometry); any named edges, a geography.
            let algorithm = params.get("edges").and_then(Value::as_str);
            Ok(DataType::Geospatial(Box::new(match algorithm {
                None => GeoType {
                    kind: GeoKind::Geometry,
                    crs,
                    algorithm: None,
                },
                Some(a) => GeoType {
                    kind: GeoKind::Geography,
                    crs,
                    algorithm: Some(a.to_string()),
                },
            })))
        }
        _ => delta_type(f.data_type(), column),
    }
}

fn delta_field(f: &Field) -> Result<StructField> {
    let metadata = f
        .metadata()
        .iter()
        .filter(|(k, _)| !k.starts_with("PARQUET:") && !k.starts_with("ARROW:extension:"))
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    Ok(StructField {
        name: f.name().clone(),
        data_type: field_type(f, f.name())?,
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
    fn unsigned_has_no_delta_type() {
        let s = Schema::new(vec![Field::new("u", ArrowType::UInt32, true)]);
        assert!(from_arrow_schema(&s).is_err());
    }

    #[test]
    fn variant_and_geospatial_types_round_trip_through_extension_types() {
        let schema = StructType::from_json(
            r#"{"type":"struct","fields":[
            {"name":"v","type":"variant","nullable":true,"metadata":{}},
            {"name":"l","type":{"type":"array","elementType":"variant","containsNull":true},"nullable":true,"metadata":{}},
            {"name":"g","type":"geometry(EPSG:4326)","nullable":true,"metadata":{}},
            {"name":"h","type":"geography(OGC:CRS84, karney)","nullable":true,"metadata":{}}
        ]}"#,
        )
        .unwrap();
        let arrow = arrow_schema(&schema).unwrap();
        let v = arrow.field(0);
        assert_eq!(v.data_type(), &ArrowType::Struct(variant_fields()));
        assert_eq!(
            v.metadata().get(EXTENSION_NAME_KEY).map(String::as_str),
            Some(VARIANT_EXTENSION)
        );
        let ArrowType::List(element) = arrow.field(1).data_type() else {
            panic!("not a list")
        };
        assert_eq!(
            element
                .metadata()
                .get(EXTENSION_NAME_KEY)
                .map(String::as_str),
            Some(VARIANT_EXTENSION)
        );
        let g = arrow.field(2);
        assert_eq!(g.data_type(), &ArrowType::Binary);
        assert_eq!(
            g.metadata()[EXTENSION_METADATA_KEY],
            r#"{"crs":"EPSG:4326"}"#
        );
        assert_eq!(
            arrow.field(3).metadata()[EXTENSION_METADATA_KEY],
            r#"{"crs":"OGC:CRS84","edges":"karney"}"#
        );
        assert_eq!(from_arrow_schema(&arrow).unwrap(), schema);
    }

    #[test]
    fn the_forms_differ_only_in_naming_nullability_and_metadata() {
        let schema = StructType::from_json(
            r#"{"type":"struct","fields":[
            {"name":"s","type":{"type":"struct","fields":[
                {"name":"v","type":"variant","nullable":false,"metadata":{"delta.columnMapping.id":2,"delta.columnMapping.physicalName":"col-v"}}
            ]},"nullable":false,"metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-s","comment":"c"}},
            {"name":"m","type":{"type":"map","keyType":"string","valueType":{"type":"array","elementType":"long","containsNull":false},"valueContainsNull":false},"nullable":false,"metadata":{"delta.columnMapping.id":3,"delta.columnMapping.physicalName":"col-m"}}
        ]}"#,
        )
        .unwrap();
        let form = |f: ArrowForm| arrow_fields_as(&schema.fields, f).unwrap();

        // Declared: logical names, declared nullability, Delta metadata and extension types.
        let declared = form(ArrowForm::DECLARED);
        assert_eq!(declared, arrow_schema(&schema).unwrap().fields().clone());
        assert_eq!(declared[0].name(), "s");
        assert!(!declared[0].is_nullable());
        assert_eq!(declared[0].metadata()["comment"], "c");
        let ArrowType::Struct(inner) = declared[0].data_type() else {
            panic!("not a struct")
        };
        assert!(!inner[0].is_nullable());
        assert_eq!(inner[0].metadata()[EXTENSION_NAME_KEY], VARIANT_EXTENSION);

        // Scan: logical names, every field nullable but map keys, extension types only.
        let scan = form(ArrowForm::SCAN);
        assert_eq!(scan[0].name(), "s");
        assert!(scan[0].is_nullable());
        assert!(!scan[0].metadata().contains_key("comment"));
        let ArrowType::Struct(inner) = scan[0].data_type() else {
            panic!("not a struct")
        };
        assert!(inner[0].is_nullable());
        assert_eq!(inner[0].metadata()[EXTENSION_NAME_KEY], VARIANT_EXTENSION);
        let ArrowType::Map(entries, false) = scan[1].data_type() else {
            panic!("not a map")
        };
        let ArrowType::Struct(kv) = entries.data_type() else {
            panic!("no entries")
        };
        assert!(!kv[0].is_nullable() && kv[1].is_nullable());
        let ArrowType::List(element) = kv[1].data_type() else {
            panic!("not a list")
        };
        assert!(element.is_nullable());

        // Physical: physical names with field ids, nested too; no extension types.
        let physical = form(ArrowForm::physical(ColumnMappingMode::Name));
        assert_eq!(physical[0].name(), "col-s");
        assert!(physical[0].is_nullable());
        assert_eq!(
            physical[0].metadata(),
            &HashMap::from([(PARQUET_FIELD_ID_META_KEY.to_string(), "1".to_string())])
        );
        let ArrowType::Struct(inner) = physical[0].data_type() else {
            panic!("not a struct")
        };
        assert_eq!(inner[0].name(), "col-v");
        assert_eq!(inner[0].metadata()[PARQUET_FIELD_ID_META_KEY], "2");
        assert!(!inner[0].metadata().contains_key(EXTENSION_NAME_KEY));
        assert_eq!(physical[1].name(), "col-m");

        // Without column mapping the physical form keeps logical names and has no ids.
        let plain = form(ArrowForm::physical(ColumnMappingMode::None));
        assert_eq!(plain[0].name(), "s");
        assert!(plain[0].metadata().is_empty());
    }

    #[test]
    fn the_view_form_changes_only_string_and_binary_layouts() {
        let schema = StructType::from_json(
            r#"{"type":"struct","fields":[
            {"name":"s","type":"string","nullable":true,"metadata":{}},
            {"name":"b","type":"binary","nullable":true,"metadata":{}},
            {"name":"n","type":{"type":"struct","fields":[
                {"name":"t","type":"string","nullable":true,"metadata":{}}
            ]},"nullable":true,"metadata":{}},
            {"name":"a","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{}},
            {"name":"v","type":"variant","nullable":true,"metadata":{}},
            {"name":"g","type":"geometry(OGC:CRS84)","nullable":true,"metadata":{}},
            {"name":"l","type":"long","nullable":true,"metadata":{}}
        ]}"#,
        )
        .unwrap();
        let scan = arrow_fields_as(&schema.fields, ArrowForm::SCAN).unwrap();
        let views = arrow_fields_as(&schema.fields, ArrowForm::scan(true)).unwrap();
        assert_eq!(ArrowForm::scan(false), ArrowForm::SCAN);
        assert_eq!(views[0].data_type(), &ArrowType::Utf8View);
        assert_eq!(views[1].data_type(), &ArrowType::BinaryView);
        let ArrowType::Struct(inner) = views[2].data_type() else {
            panic!("not a struct")
        };
        assert_eq!(inner[0].data_type(), &ArrowType::Utf8View);
        let ArrowType::List(element) = views[3].data_type() else {
            panic!("not a list")
        };
        assert_eq!(element.data_type(), &ArrowType::Utf8View);
        // Extension types keep the layout they are defined on; other types are untouched.
        for k in 4..7 {
            assert_eq!(views[k], scan[k], "field {}", scan[k].name());
        }
        assert_eq!(views[4].data_type(), &ArrowType::Struct(variant_fields()));
        assert_eq!(views[5].data_type(), &ArrowType::Binary);
        // Names, nullability and metadata are the scan form's.
        for (v, s) in views.iter().zip(scan.iter()) {
            assert_eq!(
                (v.name(), v.is_nullable(), v.metadata()),
                (s.name(), s.is_nullable(), s.metadata())
            );
        }
    }
}
