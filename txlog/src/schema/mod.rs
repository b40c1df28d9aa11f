//! The Delta table schema (PROTOCOL.md "Schema Serialization Format") and its JSON form.
//!
//! A schema is a [`StructType`]. Primitive types are written as strings (`"long"`,
//! `"decimal(10,2)"`), nested types as objects (`{"type":"array",...}`). Field metadata is
//! preserved verbatim; the protocol uses it for column mapping, invariants, generated and
//! identity columns.

mod arrow;
mod column_metadata;

use std::fmt;

use serde_json::{Map, Value, json};

pub use self::arrow::{
    ArrowForm, ArrowNaming, ArrowNullability, ArrowStrings, EXTENSION_METADATA_KEY,
    EXTENSION_NAME_KEY, PARQUET_FIELD_ID_META_KEY, VARIANT_EXTENSION, WKB_EXTENSION, arrow_field,
    arrow_field_as, arrow_fields_as, arrow_schema, arrow_type, arrow_type_as, extension_metadata,
    from_arrow_schema, typed_field, variant_fields,
};
pub use self::column_metadata::ColumnMetadataKey;
use crate::{LogError, Result};

/// Field-metadata key holding a column-mapping id ([`ColumnMetadataKey::ColumnMappingId`]).
pub const COLUMN_MAPPING_ID: &str = ColumnMetadataKey::ColumnMappingId.as_str();
/// Field-metadata key holding a column-mapping physical name
/// ([`ColumnMetadataKey::ColumnMappingPhysicalName`]).
pub const COLUMN_MAPPING_PHYSICAL_NAME: &str =
    ColumnMetadataKey::ColumnMappingPhysicalName.as_str();

/// A primitive type (exhaustive, as [`DataType`] is, and for the same reason).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PrimitiveType {
    /// UTF-8 string.
    String,
    /// 64-bit integer.
    Long,
    /// 32-bit integer.
    Integer,
    /// 16-bit integer.
    Short,
    /// 8-bit integer.
    Byte,
    /// 32-bit float.
    Float,
    /// 64-bit float.
    Double,
    /// Boolean.
    Boolean,
    /// Bytes.
    Binary,
    /// Days since the epoch.
    Date,
    /// Microseconds since the epoch, an instant (UTC).
    Timestamp,
    /// Microseconds since the epoch, a wall-clock time without zone.
    TimestampNtz,
    /// Decimal with precision and scale.
    Decimal(u8, u8),
    /// A column that is always null and never stored.
    Void,
    /// Semi-structured variant (needs the `variantType` feature).
    Variant,
}

impl PrimitiveType {
    /// The Delta type name.
    pub fn name(&self) -> String {
        match self {
            PrimitiveType::String => "string".into(),
            PrimitiveType::Long => "long".into(),
            PrimitiveType::Integer => "integer".into(),
            PrimitiveType::Short => "short".into(),
            PrimitiveType::Byte => "byte".into(),
            PrimitiveType::Float => "float".into(),
            PrimitiveType::Double => "double".into(),
            PrimitiveType::Boolean => "boolean".into(),
            PrimitiveType::Binary => "binary".into(),
            PrimitiveType::Date => "date".into(),
            PrimitiveType::Timestamp => "timestamp".into(),
            PrimitiveType::TimestampNtz => "timestamp_ntz".into(),
            PrimitiveType::Decimal(p, s) => format!("decimal({p},{s})"),
            PrimitiveType::Void => "void".into(),
            PrimitiveType::Variant => "variant".into(),
        }
    }

    fn parse(name: &str) -> Result<Self> {
        Ok(match name {
            "string" => PrimitiveType::String,
            "long" => PrimitiveType::Long,
            "integer" => PrimitiveType::Integer,
            "short" => PrimitiveType::Short,
            "byte" => PrimitiveType::Byte,
            "float" => PrimitiveType::Float,
            "double" => PrimitiveType::Double,
            "boolean" => PrimitiveType::Boolean,
            "binary" => PrimitiveType::Binary,
            "date" => PrimitiveType::Date,
            "timestamp" => PrimitiveType::Timestamp,
            "timestamp_ntz" => PrimitiveType::TimestampNtz,
            "void" => PrimitiveType::Void,
            "variant" => PrimitiveType::Variant,
            "decimal" => PrimitiveType::Decimal(10, 0),
            other => {
                if let Some(args) = other
                    .strip_prefix("decimal(")
                    .and_then(|r| r.strip_suffix(')'))
                {
                    let mut it = args.split(',').map(str::trim);
                    let p = it.next().and_then(|p| p.parse::<u8>().ok());
                    let s = it.next().and_then(|s| s.parse::<u8>().ok());
                    return match (p, s, it.next()) {
                        (Some(p), Some(s), None) if (1..=38).contains(&p) && s <= p => {
                            Ok(PrimitiveType::Decimal(p, s))
                        }
                        _ => Err(LogError::InvalidSchema(format!(
                            "invalid decimal type {other:?}"
                        ))),
                    };
                }
                return Err(LogError::InvalidSchema(format!(
                    "unsupported data type {other:?}"
                )));
            }
        })
    }
}

/// A primitive type from its text: the Delta name (`long`, `timestamp_ntz`,
/// `decimal(10,2)`, as [`PrimitiveType::name`] writes it) or a SQL alias Delta Spark
/// accepts in DDL (`bigint`, `int`, `smallint`, `tinyint`, `real`, `bool`, `dec`,
/// `numeric`), in any case and with spaces inside the decimal's parentheses.
impl std::str::FromStr for PrimitiveType {
    type Err = LogError;

    fn from_str(text: &str) -> Result<Self> {
        let lower: String = text
            .trim()
            .to_ascii_lowercase()
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        let canonical = match lower.as_str() {
            "bigint" => "long",
            "int" => "integer",
            "smallint" => "short",
            "tinyint" => "byte",
            "real" => "float",
            "bool" => "boolean",
            "dec" | "numeric" => "decimal",
            other => other
                .strip_prefix("dec(")
                .or_else(|| other.strip_prefix("numeric("))
                .map_or(other, |_| ""),
        };
        if canonical.is_empty() {
            // `dec(p,s)` / `numeric(p,s)`: the decimal's own parser.
            let args = lower.split_once('(').map_or("", |(_, a)| a);
            return PrimitiveType::parse(&format!("decimal({args}"));
        }
        PrimitiveType::parse(canonical)
    }
}

/// A data type.
///
/// Deliberately not `#[non_exhaustive]` (nor [`PrimitiveType`]): the engine's crates match
/// types exhaustively wherever one needs handling (binding, casting, statistics, reading),
/// so a type the protocol adds fails to compile at each place until it is handled, rather
/// than falling into a wildcard arm. For an embedder such an addition is a breaking change
/// of the facade's version.
#[derive(Debug, Clone, PartialEq)]
pub enum DataType {
    /// A primitive.
    Primitive(PrimitiveType),
    /// A struct.
    Struct(Box<StructType>),
    /// An array.
    Array(Box<ArrayType>),
    /// A map.
    Map(Box<MapType>),
    /// A geometry or geography (needs the `geospatial` feature), stored as WKB binary.
    Geospatial(Box<GeoType>),
}

/// Which geospatial type a column has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GeoKind {
    /// Planar coordinates: `geometry(<crs>)`.
    Geometry,
    /// Coordinates on a spheroid, with an edge interpolation algorithm:
    /// `geography(<crs>, <algorithm>)`.
    Geography,
}

/// A `geometry` or `geography` type: the coordinate reference system and, for geographies,
/// the edge interpolation algorithm. Values are WKB (well-known binary).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GeoType {
    /// Geometry or geography.
    pub kind: GeoKind,
    /// The coordinate reference system, e.g. `OGC:CRS84` (the default when none is named).
    pub crs: String,
    /// For geographies, the edge algorithm (`spherical` when none is named); `None` for
    /// geometries.
    pub algorithm: Option<String>,
}

impl GeoType {
    /// The CRS assumed when a type names none.
    pub const DEFAULT_CRS: &'static str = "OGC:CRS84";
    /// The edge algorithm assumed when a geography names none.
    pub const DEFAULT_ALGORITHM: &'static str = "spherical";

    /// The Delta type name, e.g. `geometry(OGC:CRS84)` or `geography(OGC:CRS84, spherical)`.
    pub fn name(&self) -> String {
        match (&self.kind, &self.algorithm) {
            (GeoKind::Geometry, _) => format!("geometry({})", self.crs),
            (GeoKind::Geography, a) => format!(
                "geography({}, {})",
                self.crs,
                a.as_deref().unwrap_or(Self::DEFAULT_ALGORITHM)
            ),
        }
    }

    /// Parses `geometry`, `geometry(<crs>)`, `geography`, `geography(<crs>)` or
    /// `geography(<crs>, <algorithm>)`; `None` if `name` is not a geospatial type name.
    ///
    /// # Errors
    /// [`LogError::InvalidSchema`] for a malformed argument list.
    fn parse(name: &str) -> Result<Option<Self>> {
        let (kind, rest) = if let Some(r) = name.strip_prefix("geometry") {
            (GeoKind::Geometry, r)
        } else if let Some(r) = name.strip_prefix("geography") {
            (GeoKind::Geography, r)
        } else {
            return Ok(None);
        };
        let bad = || LogError::InvalidSchema(format!("invalid geospatial type {name:?}"));
        let args: Vec<&str> = if rest.is_empty() {
            Vec::new()
        } else {
            let inner = rest
                .strip_prefix('(')
                .and_then(|r| r.strip_suffix(')'))
                .ok_or_else(bad)?;
            inner.split(',').map(str::trim).collect()
        };
        if args.iter().any(|a| a.is_empty()) {
            return Err(bad());
        }
        let crs = args.first().map_or(Self::DEFAULT_CRS, |c| *c).to_string();
        let algorithm = match (kind, args.len()) {
            (GeoKind::Geometry, 0 | 1) => None,
            (GeoKind::Geography, 0 | 1) => Some(Self::DEFAULT_ALGORITHM.to_string()),
            (GeoKind::Geography, 2) => Some(args[1].to_ascii_lowercase()),
            _ => return Err(bad()),
        };
        Ok(Some(GeoType {
            kind,
            crs,
            algorithm,
        }))
    }
}

/// The one text form of a Delta type: `integer`, `decimal(10,2)`, `array<string>`,
/// `map<string,long>`, `struct<a:integer,b:string>`. The alternate form (`{:#}`) spaces the
/// separators for people: `map<string, long>`, `struct<a: integer, b: string>`.
impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (colon, comma) = if f.alternate() {
            (": ", ", ")
        } else {
            (":", ",")
        };
        match self {
            DataType::Primitive(p) => f.write_str(&p.name()),
            DataType::Geospatial(g) => f.write_str(&g.name()),
            DataType::Struct(s) => {
                f.write_str("struct<")?;
                for (i, field) in s.fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(comma)?;
                    }
                    write!(f, "{}{colon}", field.name)?;
                    field.data_type.fmt(f)?;
                }
                f.write_str(">")
            }
            DataType::Array(a) => {
                f.write_str("array<")?;
                a.element_type.fmt(f)?;
                f.write_str(">")
            }
            DataType::Map(m) => {
                f.write_str("map<")?;
                m.key_type.fmt(f)?;
                f.write_str(comma)?;
                m.value_type.fmt(f)?;
                f.write_str(">")
            }
        }
    }
}

impl DataType {
    /// Shorthand for `DataType::Primitive`.
    pub const fn primitive(p: PrimitiveType) -> Self {
        DataType::Primitive(p)
    }

    /// The primitive type, if this is one.
    pub fn as_primitive(&self) -> Option<PrimitiveType> {
        match self {
            DataType::Primitive(p) => Some(*p),
            _ => None,
        }
    }

    /// The struct type, if this is one.
    pub fn as_struct(&self) -> Option<&StructType> {
        match self {
            DataType::Struct(s) => Some(s),
            _ => None,
        }
    }

    /// Whether any primitive type in the tree matches `f`.
    pub fn any_primitive(&self, f: &mut impl FnMut(PrimitiveType) -> bool) -> bool {
        self.any_type(&mut |t| matches!(t, DataType::Primitive(p) if f(*p)))
    }

    /// Whether this type is, or nests, a type matching `pred`.
    pub fn any_type(&self, pred: &mut impl FnMut(&DataType) -> bool) -> bool {
        pred(self)
            || match self {
                DataType::Primitive(_) | DataType::Geospatial(_) => false,
                DataType::Struct(s) => s.fields.iter().any(|fld| fld.data_type.any_type(pred)),
                DataType::Array(a) => a.element_type.any_type(pred),
                DataType::Map(m) => m.key_type.any_type(pred) || m.value_type.any_type(pred),
            }
    }

    fn from_json(v: &Value) -> Result<Self> {
        match v {
            Value::String(s) => match GeoType::parse(s)? {
                Some(g) => Ok(DataType::Geospatial(Box::new(g))),
                None => Ok(DataType::Primitive(PrimitiveType::parse(s)?)),
            },
            Value::Object(o) => match o.get("type").and_then(Value::as_str) {
                Some("struct") => Ok(DataType::Struct(Box::new(StructType::from_json_value(v)?))),
                Some("array") => {
                    let element = o
                        .get("elementType")
                        .ok_or_else(|| missing("array", "elementType"))?;
                    Ok(DataType::Array(Box::new(ArrayType {
                        element_type: DataType::from_json(element)?,
                        contains_null: o
                            .get("containsNull")
                            .and_then(Value::as_bool)
                            .unwrap_or(true),
                    })))
                }
                Some("map") => {
                    let key = o.get("keyType").ok_or_else(|| missing("map", "keyType"))?;
                    let value = o
                        .get("valueType")
                        .ok_or_else(|| missing("map", "valueType"))?;
                    Ok(DataType::Map(Box::new(MapType {
                        key_type: DataType::from_json(key)?,
                        value_type: DataType::from_json(value)?,
                        value_contains_null: o
                            .get("valueContainsNull")
                            .and_then(Value::as_bool)
                            .unwrap_or(true),
                    })))
                }
                other => Err(LogError::InvalidSchema(format!(
                    "unsupported nested type {other:?}"
                ))),
            },
            other => Err(LogError::InvalidSchema(format!(
                "a type must be a string or an object, got {other}"
            ))),
        }
    }

    fn to_json(&self) -> Value {
        match self {
            DataType::Primitive(p) => Value::String(p.name()),
            DataType::Geospatial(g) => Value::String(g.name()),
            DataType::Struct(s) => s.to_json_value(),
            DataType::Array(a) => json!({
                "type": "array",
                "elementType": a.element_type.to_json(),
                "containsNull": a.contains_null,
            }),
            DataType::Map(m) => json!({
                "type": "map",
                "keyType": m.key_type.to_json(),
                "valueType": m.value_type.to_json(),
                "valueContainsNull": m.value_contains_null,
            }),
        }
    }
}

fn missing(kind: &str, key: &str) -> LogError {
    LogError::InvalidSchema(format!("{kind} type without {key}"))
}

/// An array type.
#[derive(Debug, Clone, PartialEq)]
pub struct ArrayType {
    /// The element type.
    pub element_type: DataType,
    /// Whether elements may be null.
    pub contains_null: bool,
}

/// A map type.
#[derive(Debug, Clone, PartialEq)]
pub struct MapType {
    /// The key type.
    pub key_type: DataType,
    /// The value type.
    pub value_type: DataType,
    /// Whether values may be null.
    pub value_contains_null: bool,
}

/// A named field.
#[derive(Debug, Clone, PartialEq)]
pub struct StructField {
    /// The logical (display) name.
    pub name: String,
    /// The type.
    pub data_type: DataType,
    /// Whether the field may be null.
    pub nullable: bool,
    /// Field metadata, verbatim.
    pub metadata: Map<String, Value>,
}

impl StructField {
    /// A field without metadata.
    pub fn new(name: impl Into<String>, data_type: DataType, nullable: bool) -> Self {
        StructField {
            name: name.into(),
            data_type,
            nullable,
            metadata: Map::new(),
        }
    }

    /// The column-mapping physical name, if set.
    pub fn physical_name(&self) -> Option<&str> {
        self.metadata
            .get(COLUMN_MAPPING_PHYSICAL_NAME)
            .and_then(Value::as_str)
    }

    /// The column-mapping id, if set.
    pub fn column_id(&self) -> Option<i64> {
        match self.metadata.get(COLUMN_MAPPING_ID)? {
            Value::Number(n) => n.as_i64(),
            Value::String(s) => s.parse().ok(),
            _ => None,
        }
    }
}

/// A struct type; the table schema is one.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StructType {
    /// The fields in order.
    pub fields: Vec<StructField>,
}

impl StructType {
    /// A struct of `fields`.
    pub fn new(fields: Vec<StructField>) -> Self {
        StructType { fields }
    }

    /// Parses Delta schema JSON (`metaData.schemaString`).
    ///
    /// # Errors
    /// [`LogError::InvalidSchema`] if the JSON is malformed, uses an unknown type, or has two
    /// fields whose names are equal ignoring case.
    pub fn from_json(text: &str) -> Result<Self> {
        let v: Value = serde_json::from_str(text)
            .map_err(|e| LogError::InvalidSchema(format!("schema is not valid JSON: {e}")))?;
        Self::from_json_value(&v)
    }

    fn from_json_value(v: &Value) -> Result<Self> {
        let fields = v
            .get("fields")
            .and_then(Value::as_array)
            .ok_or_else(|| LogError::InvalidSchema("struct type without a fields array".into()))?;
        let mut out = Vec::with_capacity(fields.len());
        for f in fields {
            let name = f
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| LogError::InvalidSchema("field without a name".into()))?;
            let ty = f
                .get("type")
                .ok_or_else(|| LogError::InvalidSchema(format!("field `{name}` has no type")))?;
            let data_type = DataType::from_json(ty).map_err(|e| {
                LogError::InvalidSchema(format!("field `{name}`: {}", strip_prefix(&e)))
            })?;
            let metadata = f
                .get("metadata")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            let nullable = f.get("nullable").and_then(Value::as_bool).unwrap_or(true);
            out.push(StructField {
                name: name.to_string(),
                data_type,
                nullable,
                metadata,
            });
        }
        let mut seen = std::collections::HashSet::new();
        for f in &out {
            if !seen.insert(f.name.to_lowercase()) {
                return Err(LogError::InvalidSchema(format!(
                    "duplicate column name `{}`",
                    f.name
                )));
            }
        }
        Ok(StructType { fields: out })
    }

    fn to_json_value(&self) -> Value {
        let fields: Vec<Value> = self
            .fields
            .iter()
            .map(|f| {
                json!({
                    "name": f.name,
                    "type": f.data_type.to_json(),
                    "nullable": f.nullable,
                    "metadata": Value::Object(f.metadata.clone()),
                })
            })
            .collect();
        json!({"type": "struct", "fields": fields})
    }

    /// Serializes as Delta schema JSON.
    pub fn to_json(&self) -> String {
        self.to_json_value().to_string()
    }

    /// The field called `name` (exact match first, then ASCII-case-insensitive, as Delta
    /// column names are case-insensitive).
    pub fn field(&self, name: &str) -> Option<&StructField> {
        self.fields.iter().find(|f| f.name == name).or_else(|| {
            self.fields
                .iter()
                .find(|f| f.name.eq_ignore_ascii_case(name))
        })
    }

    /// The index of the field called `name` (same matching as [`field`](Self::field)).
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name).or_else(|| {
            self.fields
                .iter()
                .position(|f| f.name.eq_ignore_ascii_case(name))
        })
    }

    /// Resolves a nested path of logical names to the field.
    pub fn field_at(&self, path: &[String]) -> Option<&StructField> {
        let (first, rest) = path.split_first()?;
        let f = self.field(first)?;
        if rest.is_empty() {
            Some(f)
        } else {
            f.data_type.as_struct()?.field_at(rest)
        }
    }
}

fn strip_prefix(e: &LogError) -> String {
    match e {
        LogError::InvalidSchema(m) => m.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one text form of a type: compact by default (schema mismatch errors), spaced in
    /// the alternate form (`alluvium inspect`), identical for primitives.
    #[test]
    fn display_is_the_text_form_of_a_type() {
        let schema = StructType::from_json(
            r#"{"type":"struct","fields":[{"name":"s","type":{"type":"struct","fields":[
            {"name":"a","type":"integer","nullable":true,"metadata":{}},
            {"name":"m","type":{"type":"map","keyType":"string","valueType":
              {"type":"array","elementType":"decimal(10,2)","containsNull":true},
              "valueContainsNull":true},"nullable":true,"metadata":{}}]},
            "nullable":true,"metadata":{}}]}"#,
        )
        .unwrap();
        let t = &schema.fields[0].data_type;
        assert_eq!(
            t.to_string(),
            "struct<a:integer,m:map<string,array<decimal(10,2)>>>"
        );
        assert_eq!(
            format!("{t:#}"),
            "struct<a: integer, m: map<string, array<decimal(10,2)>>>"
        );
        let long = DataType::Primitive(PrimitiveType::Long);
        assert_eq!(
            (long.to_string(), format!("{long:#}")),
            ("long".into(), "long".into())
        );
    }

    #[test]
    fn geospatial_types_parse_with_defaults_and_round_trip() {
        let dt = |t: &str| DataType::from_json(&Value::String(t.into()));
        let g = |kind, crs: &str, alg: Option<&str>| {
            DataType::Geospatial(Box::new(GeoType {
                kind,
                crs: crs.into(),
                algorithm: alg.map(str::to_string),
            }))
        };
        assert_eq!(
            dt("geometry(OGC:CRS84)").unwrap(),
            g(GeoKind::Geometry, "OGC:CRS84", None)
        );
        assert_eq!(
            dt("geometry").unwrap(),
            g(GeoKind::Geometry, "OGC:CRS84", None)
        );
        assert_eq!(
            dt("geography(OGC:CRS84, spherical)").unwrap(),
            g(GeoKind::Geography, "OGC:CRS84", Some("spherical"))
        );
        assert_eq!(
            dt("geography(EPSG:4326)").unwrap(),
            g(GeoKind::Geography, "EPSG:4326", Some("spherical"))
        );
        for bad in [
            "geometry(",
            "geometry()",
            "geometry(a, b)",
            "geography(a, b, c)",
            "geography(, x)",
            "geometryx",
        ] {
            assert!(dt(bad).is_err(), "{bad}");
        }
        for t in ["geometry(EPSG:3857)", "geography(OGC:CRS84, vincenty)"] {
            assert_eq!(dt(t).unwrap().to_json(), Value::String(t.into()));
        }
    }

    const SCHEMA: &str = r#"{"type":"struct","fields":[
        {"name":"a","type":"integer","nullable":true,"metadata":{}},
        {"name":"d","type":"decimal(38, 18)","nullable":false,"metadata":{"delta.columnMapping.id":5,"delta.columnMapping.physicalName":"col-x"}},
        {"name":"s","type":{"type":"struct","fields":[{"name":"t","type":"timestamp_ntz","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},
        {"name":"arr","type":{"type":"array","elementType":"string","containsNull":false},"nullable":true,"metadata":{}},
        {"name":"m","type":{"type":"map","keyType":"string","valueType":{"type":"array","elementType":"long","containsNull":true},"valueContainsNull":true},"nullable":true,"metadata":{}}
    ]}"#;

    #[test]
    fn primitive_types_parse_from_delta_and_sql_names() {
        let p = |t: &str| t.parse::<PrimitiveType>().ok();
        assert_eq!(p("long"), Some(PrimitiveType::Long));
        assert_eq!(p("BIGINT"), Some(PrimitiveType::Long));
        assert_eq!(p(" int "), Some(PrimitiveType::Integer));
        assert_eq!(p("smallint"), Some(PrimitiveType::Short));
        assert_eq!(p("tinyint"), Some(PrimitiveType::Byte));
        assert_eq!(p("Timestamp_NTZ"), Some(PrimitiveType::TimestampNtz));
        assert_eq!(p("decimal(12, 3)"), Some(PrimitiveType::Decimal(12, 3)));
        assert_eq!(p("numeric(5,2)"), Some(PrimitiveType::Decimal(5, 2)));
        assert_eq!(p("dec"), Some(PrimitiveType::Decimal(10, 0)));
        for name in ["long", "integer", "timestamp_ntz", "decimal(7,1)", "string"] {
            assert_eq!(p(name).map(|t| t.name()).as_deref(), Some(name));
        }
        assert_eq!(p("decimal(40,1)"), None);
        assert_eq!(p("int64"), None);
        assert_eq!(p(""), None);
    }

    #[test]
    fn parses_and_round_trips() {
        let s = StructType::from_json(SCHEMA).unwrap();
        assert_eq!(s.fields.len(), 5);
        assert_eq!(
            s.fields[1].data_type,
            DataType::Primitive(PrimitiveType::Decimal(38, 18))
        );
        assert_eq!(s.fields[1].physical_name(), Some("col-x"));
        assert_eq!(s.fields[1].column_id(), Some(5));
        assert!(!s.fields[1].nullable);
        let again = StructType::from_json(&s.to_json()).unwrap();
        assert_eq!(again, s);
        assert_eq!(s.field("A").unwrap().name, "a");
        assert_eq!(s.field_at(&["s".into(), "t".into()]).unwrap().name, "t");
    }

    #[test]
    fn rejects_bad_schemas() {
        for bad in [
            "not json",
            r#"{"type":"struct"}"#,
            r#"{"type":"struct","fields":[{"name":"a","type":"interval","nullable":true}]}"#,
            r#"{"type":"struct","fields":[{"name":"a","type":"decimal(40,2)","nullable":true}]}"#,
            r#"{"type":"struct","fields":[{"name":"a","type":"long"},{"name":"A","type":"long"}]}"#,
            r#"{"type":"struct","fields":[{"name":"a","type":{"type":"array"}}]}"#,
        ] {
            assert!(
                matches!(StructType::from_json(bad), Err(LogError::InvalidSchema(_))),
                "{bad}"
            );
        }
    }
}
