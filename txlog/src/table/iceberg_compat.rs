//! The Delta-side rules of Iceberg compatibility (PROTOCOL.md "Iceberg Compatibility V1",
//! "Writer Requirements for IcebergCompatV1", "Iceberg Compatibility V2", "Writer
//! Requirements for IcebergCompatV2"): what a table with `delta.enableIcebergCompatV1` or
//! `V2` set must satisfy for alluvium to write it, and the Parquet field ids V2 requires for
//! array elements and map keys and values. Generating Iceberg metadata is out of scope:
//! alluvium only keeps such tables in the shape UniForm needs, and refuses to write one that
//! is not.

use arrow_schema::{DataType as ArrowType, Field};
use std::sync::Arc;

use crate::actions::{Metadata, Protocol};
use crate::column_mapping::ColumnMappingMode;
use crate::error::FeatureSide;
use crate::properties::ENABLE_DELETION_VECTORS;
pub use crate::properties::{
    ENABLE_ICEBERG_COMPAT_V1 as ENABLE_V1, ENABLE_ICEBERG_COMPAT_V2 as ENABLE_V2,
    ENABLE_ICEBERG_COMPAT_V3 as ENABLE_V3,
};
use crate::schema::{
    ColumnMetadataKey, DataType, PARQUET_FIELD_ID_META_KEY, PrimitiveType, StructField, StructType,
};
use crate::table::TableFeature;
use crate::{LogError, Result};

/// The field metadata key holding the ids of array elements and map keys and values
/// ([`ColumnMetadataKey::ColumnMappingNestedIds`]).
pub const NESTED_IDS: &str = ColumnMetadataKey::ColumnMappingNestedIds.as_str();

/// The writer feature of IcebergCompat `version` (1, 2 or 3).
fn feature_of(version: u8) -> TableFeature {
    match version {
        1 => TableFeature::IcebergCompatV1,
        2 => TableFeature::IcebergCompatV2,
        _ => TableFeature::IcebergCompatV3,
    }
}

/// Which Iceberg compatibility version a table has active (its property set to `true`).
pub fn active_version(configuration: &std::collections::HashMap<String, String>) -> Option<u8> {
    let on = |k: &str| {
        configuration
            .get(k)
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
    };
    if on(ENABLE_V3) {
        Some(3)
    } else if on(ENABLE_V2) {
        Some(2)
    } else if on(ENABLE_V1) {
        Some(1)
    } else {
        None
    }
}

fn refuse(version: u8, detail: String) -> LogError {
    LogError::UnsupportedFeature {
        side: FeatureSide::Writer,
        feature: feature_of(version).to_string(),
        detail: Some(detail),
    }
}

/// Checks the Delta-side IcebergCompat rules of the active version (none when no version
/// is active): the feature listed (writer 7), column mapping in `name` or `id` mode, no
/// deletion vectors (V1: the feature not supported; V2: not active), V1 and V2 not both
/// active, the allowed types (V1: no array, map or void; V2: the allow-list), every array
/// element and map key and value with a nested id (V2), and only Iceberg-compatible type
/// changes recorded. V3 is refused whole.
///
/// # Errors
/// [`LogError::UnsupportedFeature`] (writer side, feature `icebergCompatV<n>`) naming the
/// rule and the column or property that breaks it.
pub fn check(protocol: &Protocol, metadata: &Metadata, schema: &StructType) -> Result<()> {
    let conf = &metadata.configuration;
    let Some(version) = active_version(conf) else {
        return Ok(());
    };
    if version == 3 {
        return Err(refuse(
            3,
            format!(
                "{ENABLE_V3} is set; alluvium implements the Delta-side rules of V1 and V2 only"
            ),
        ));
    }
    let feature = feature_of(version);
    if protocol.min_writer_version < 7 || !protocol.supports_writer_feature(&feature) {
        return Err(refuse(
            version,
            format!(
                "the property is set but the protocol does not list the `{feature}` writer feature"
            ),
        ));
    }
    let mode = ColumnMappingMode::of(protocol, metadata);
    if !matches!(mode, ColumnMappingMode::Name | ColumnMappingMode::Id) {
        return Err(refuse(
            version,
            "column mapping must be in `name` or `id` mode".into(),
        ));
    }
    match version {
        1 => {
            if protocol.supports_writer_feature(&TableFeature::DeletionVectors) {
                return Err(refuse(
                    1,
                    "the protocol supports deletion vectors, which IcebergCompatV1 forbids".into(),
                ));
            }
        }
        _ => {
            if protocol.supports_writer_feature(&TableFeature::DeletionVectors)
                && conf
                    .get(ENABLE_DELETION_VECTORS)
                    .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
            {
                return Err(refuse(
                    2,
                    format!("{ENABLE_DELETION_VECTORS} is true, which IcebergCompatV2 forbids"),
                ));
            }
            if conf
                .get(ENABLE_V1)
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
                && protocol.supports_writer_feature(&TableFeature::IcebergCompatV1)
            {
                return Err(refuse(
                    2,
                    "IcebergCompatV1 is active too; V2 requires it not to be".into(),
                ));
            }
        }
    }
    for f in &schema.fields {
        check_types(version, &f.data_type, &f.name)?;
        check_type_changes(version, f, &f.name)?;
        if version == 2 {
            check_nested_ids(f, mode)?;
        }
    }
    Ok(())
}

fn check_types(version: u8, t: &DataType, path: &str) -> Result<()> {
    let bad = match (version, t) {
        (1, DataType::Array(_) | DataType::Map(_)) => true,
        (_, DataType::Primitive(p)) => !matches!(
            p,
            PrimitiveType::Byte
                | PrimitiveType::Short
                | PrimitiveType::Integer
                | PrimitiveType::Long
                | PrimitiveType::Float
                | PrimitiveType::Double
                | PrimitiveType::Decimal(..)
                | PrimitiveType::String
                | PrimitiveType::Binary
                | PrimitiveType::Boolean
                | PrimitiveType::Timestamp
                | PrimitiveType::TimestampNtz
                | PrimitiveType::Date
        ),
        (_, DataType::Geospatial(_)) => true,
        _ => false,
    };
    if bad {
        return Err(refuse(
            version,
            format!("column `{path}` has type {t} which IcebergCompatV{version} does not allow"),
        ));
    }
    match t {
        DataType::Struct(s) => {
            for f in &s.fields {
                let p = format!("{path}.{}", f.name);
                check_types(version, &f.data_type, &p)?;
                check_type_changes(version, f, &p)?;
            }
        }
        DataType::Array(a) => check_types(version, &a.element_type, &format!("{path}.element"))?,
        DataType::Map(m) => {
            check_types(version, &m.key_type, &format!("{path}.key"))?;
            check_types(version, &m.value_type, &format!("{path}.value"))?;
        }
        _ => {}
    }
    Ok(())
}

/// Whether Iceberg V2's schema evolution allows widening `from` to `to`: integers to wider
/// integers (Iceberg stores byte and short as int), float to double, and decimals to a
/// higher precision at the same scale.
fn iceberg_widening(from: &str, to: &str) -> bool {
    let rank = |t: &str| match t {
        "byte" => Some(0),
        "short" => Some(1),
        "integer" => Some(2),
        "long" => Some(3),
        _ => None,
    };
    if let (Some(a), Some(b)) = (rank(from), rank(to)) {
        return a < b;
    }
    if from == "float" && to == "double" {
        return true;
    }
    let decimal = |t: &str| -> Option<(u32, u32)> {
        let inner = t.strip_prefix("decimal(")?.strip_suffix(')')?;
        let (p, s) = inner.split_once(',')?;
        Some((p.trim().parse().ok()?, s.trim().parse().ok()?))
    };
    matches!((decimal(from), decimal(to)), (Some((p1, s1)), Some((p2, s2))) if s1 == s2 && p2 >= p1)
}

fn check_type_changes(version: u8, f: &StructField, path: &str) -> Result<()> {
    let Some(changes) = f
        .metadata
        .get(ColumnMetadataKey::TypeChanges.as_str())
        .and_then(|v| v.as_array())
    else {
        return Ok(());
    };
    for c in changes {
        let from = c.get("fromType").and_then(|v| v.as_str()).unwrap_or("");
        let to = c.get("toType").and_then(|v| v.as_str()).unwrap_or("");
        if !iceberg_widening(from, to) {
            return Err(refuse(
                version,
                format!(
                    "column `{path}` was widened from {from} to {to}, a change Iceberg V2 does not allow"
                ),
            ));
        }
    }
    Ok(())
}

/// The nested-id keys (`<physical>.element`, `<physical>.key`, `<physical>.value`, deeper
/// ones prefixed by their parent's key) that the arrays and maps directly under a field
/// need, stopping at structs (their fields carry their own ids).
fn nested_keys(t: &DataType, prefix: &str, out: &mut Vec<String>) {
    match t {
        DataType::Array(a) => {
            let k = format!("{prefix}.element");
            nested_keys(&a.element_type, &k, out);
            out.push(k);
        }
        DataType::Map(m) => {
            let k = format!("{prefix}.key");
            let v = format!("{prefix}.value");
            nested_keys(&m.key_type, &k, out);
            nested_keys(&m.value_type, &v, out);
            out.push(k);
            out.push(v);
        }
        _ => {}
    }
}

/// The structs reachable from `t` without crossing another struct field (their fields are
/// checked on their own).
fn child_fields(t: &DataType) -> Vec<&StructField> {
    match t {
        DataType::Struct(s) => s.fields.iter().collect(),
        DataType::Array(a) => child_fields(&a.element_type),
        DataType::Map(m) => {
            let mut v = child_fields(&m.key_type);
            v.extend(child_fields(&m.value_type));
            v
        }
        _ => Vec::new(),
    }
}

fn check_nested_ids(f: &StructField, mode: ColumnMappingMode) -> Result<()> {
    let mut keys = Vec::new();
    nested_keys(&f.data_type, mode.physical_name(f), &mut keys);
    if !keys.is_empty() {
        let ids = f.metadata.get(NESTED_IDS).and_then(|v| v.as_object());
        for k in &keys {
            let has_id = ids
                .and_then(|m| m.get(k))
                .and_then(serde_json::Value::as_i64)
                .is_some();
            if !has_id {
                return Err(refuse(
                    2,
                    format!(
                        "column `{}` has no nested id for `{k}` in {NESTED_IDS}",
                        f.name
                    ),
                ));
            }
        }
    }
    for c in child_fields(&f.data_type) {
        check_nested_ids(c, mode)?;
    }
    Ok(())
}

/// The physical Arrow field `arrow` of `f` with the Parquet field ids of its array elements
/// and map keys and values set from `f`'s [`NESTED_IDS`] (PROTOCOL.md "Writer Requirements
/// for IcebergCompatV2": these ids must also be written to the data files' schema). Struct
/// fields inside keep their own ids and get theirs from their own metadata. A field without
/// nested ids comes back unchanged.
pub fn with_nested_field_ids(f: &StructField, mode: ColumnMappingMode, arrow: Field) -> Field {
    if mode == ColumnMappingMode::None {
        return arrow;
    }
    let ids = f.metadata.get(NESTED_IDS).and_then(|v| v.as_object());
    let data_type = apply(
        &f.data_type,
        arrow.data_type(),
        mode.physical_name(f),
        ids,
        mode,
    );
    arrow.with_data_type(data_type)
}

fn with_id(field: &Field, id: Option<i64>, data_type: ArrowType) -> Field {
    let mut md = field.metadata().clone();
    if let Some(id) = id {
        md.insert(PARQUET_FIELD_ID_META_KEY.to_string(), id.to_string());
    }
    field.clone().with_data_type(data_type).with_metadata(md)
}

fn apply(
    t: &DataType,
    arrow: &ArrowType,
    prefix: &str,
    ids: Option<&serde_json::Map<String, serde_json::Value>>,
    mode: ColumnMappingMode,
) -> ArrowType {
    let id = |k: &str| ids.and_then(|m| m.get(k)).and_then(|v| v.as_i64());
    match (t, arrow) {
        (DataType::Array(a), ArrowType::List(field)) => {
            let k = format!("{prefix}.element");
            let inner = apply(&a.element_type, field.data_type(), &k, ids, mode);
            ArrowType::List(Arc::new(with_id(field, id(&k), inner)))
        }
        (DataType::Map(m), ArrowType::Map(entries, sorted)) => {
            let ArrowType::Struct(kv) = entries.data_type() else {
                return arrow.clone();
            };
            if kv.len() != 2 {
                return arrow.clone();
            }
            let (k, v) = (format!("{prefix}.key"), format!("{prefix}.value"));
            let key = apply(&m.key_type, kv[0].data_type(), &k, ids, mode);
            let value = apply(&m.value_type, kv[1].data_type(), &v, ids, mode);
            let fields = arrow_schema::Fields::from(vec![
                with_id(&kv[0], id(&k), key),
                with_id(&kv[1], id(&v), value),
            ]);
            ArrowType::Map(
                Arc::new(
                    entries
                        .as_ref()
                        .clone()
                        .with_data_type(ArrowType::Struct(fields)),
                ),
                *sorted,
            )
        }
        (DataType::Struct(s), ArrowType::Struct(fields)) if s.fields.len() == fields.len() => {
            let children: Vec<Field> = s
                .fields
                .iter()
                .zip(fields.iter())
                .map(|(d, a)| with_nested_field_ids(d, mode, a.as_ref().clone()))
                .collect();
            ArrowType::Struct(children.into())
        }
        _ => arrow.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::ArrowForm;

    fn protocol(features: &[&str]) -> Protocol {
        Protocol {
            min_reader_version: 2,
            min_writer_version: 7,
            reader_features: None,
            writer_features: Some(features.iter().map(|s| s.to_string()).collect()),
        }
    }

    fn schema(fields: &str) -> StructType {
        StructType::from_json(&format!(r#"{{"type":"struct","fields":[{fields}]}}"#)).unwrap()
    }

    const ID: &str = r#"{"name":"id","type":"long","nullable":true,"metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"c1"}}"#;
    const ARR: &str = r#"{"name":"a","type":{"type":"array","elementType":"integer","containsNull":true},"nullable":true,"metadata":{"delta.columnMapping.id":2,"delta.columnMapping.physicalName":"c2","delta.columnMapping.nested.ids":{"c2.element":3}}}"#;
    const ARR_NO_IDS: &str = r#"{"name":"a","type":{"type":"array","elementType":"integer","containsNull":true},"nullable":true,"metadata":{"delta.columnMapping.id":2,"delta.columnMapping.physicalName":"c2"}}"#;

    fn refused(r: Result<()>, needle: &str) {
        match r {
            Err(LogError::UnsupportedFeature {
                feature, detail, ..
            }) => {
                assert!(feature.starts_with("icebergCompatV"), "{feature}");
                let d = detail.unwrap_or_default();
                assert!(d.contains(needle), "{d} lacks {needle}");
            }
            other => panic!("expected a refusal naming {needle}: {other:?}"),
        }
    }

    const V2: &[(&str, &str)] = &[(ENABLE_V2, "true"), ("delta.columnMapping.mode", "name")];

    #[test]
    fn a_v2_table_meeting_every_rule_is_writable() {
        let p = protocol(&["columnMapping", "icebergCompatV2"]);
        check(
            &p,
            &Metadata::with_properties(V2),
            &schema(&format!("{ID},{ARR}")),
        )
        .unwrap();
        // Not active: no rule applies.
        check(&p, &Metadata::with_properties(&[]), &schema(ARR_NO_IDS)).unwrap();
    }

    #[test]
    fn each_v2_rule_refuses_when_broken() {
        let p = protocol(&["columnMapping", "icebergCompatV2"]);
        refused(
            check(
                &protocol(&["columnMapping"]),
                &Metadata::with_properties(V2),
                &schema(ID),
            ),
            "does not list",
        );
        refused(
            check(
                &p,
                &Metadata::with_properties(&[(ENABLE_V2, "true")]),
                &schema(ID),
            ),
            "column mapping",
        );
        let dv = protocol(&["columnMapping", "icebergCompatV2", "deletionVectors"]);
        let mut conf = V2.to_vec();
        conf.push(("delta.enableDeletionVectors", "true"));
        refused(
            check(&dv, &Metadata::with_properties(&conf), &schema(ID)),
            "delta.enableDeletionVectors",
        );
        // The feature alone, not active, is allowed for V2.
        check(&dv, &Metadata::with_properties(V2), &schema(ID)).unwrap();
        let both = protocol(&["columnMapping", "icebergCompatV2", "icebergCompatV1"]);
        let mut conf = V2.to_vec();
        conf.push((ENABLE_V1, "true"));
        refused(
            check(&both, &Metadata::with_properties(&conf), &schema(ID)),
            "V1 is active",
        );
        refused(
            check(&p, &Metadata::with_properties(V2), &schema(ARR_NO_IDS)),
            "c2.element",
        );
        refused(
            check(
                &p,
                &Metadata::with_properties(V2),
                &schema(r#"{"name":"v","type":"void","nullable":true,"metadata":{}}"#),
            ),
            "void",
        );
        refused(
            check(
                &p,
                &Metadata::with_properties(V2),
                &schema(
                    r#"{"name":"l","type":"long","nullable":true,"metadata":{"delta.typeChanges":[{"fromType":"double","toType":"long"}]}}"#,
                ),
            ),
            "widened",
        );
        check(
            &p,
            &Metadata::with_properties(V2),
            &schema(r#"{"name":"l","type":"long","nullable":true,"metadata":{"delta.typeChanges":[{"fromType":"integer","toType":"long"}]}}"#),
        )
        .unwrap();
        refused(
            check(
                &p,
                &Metadata::with_properties(&[(ENABLE_V3, "true")]),
                &schema(ID),
            ),
            "V3",
        );
    }

    #[test]
    fn v1_forbids_deletion_vectors_and_collections() {
        let p = protocol(&["columnMapping", "icebergCompatV1"]);
        let v1 = [(ENABLE_V1, "true"), ("delta.columnMapping.mode", "id")];
        check(&p, &Metadata::with_properties(&v1), &schema(ID)).unwrap();
        refused(
            check(&p, &Metadata::with_properties(&v1), &schema(ARR)),
            "does not allow",
        );
        let dv = protocol(&["columnMapping", "icebergCompatV1", "deletionVectors"]);
        refused(
            check(&dv, &Metadata::with_properties(&v1), &schema(ID)),
            "deletion vectors",
        );
    }

    #[test]
    fn nested_ids_become_parquet_field_ids() {
        let s = schema(ARR);
        let f = &s.fields[0];
        let mode = ColumnMappingMode::Name;
        let arrow = crate::schema::arrow_field_as(f, ArrowForm::physical(mode)).unwrap();
        let with = with_nested_field_ids(f, mode, arrow);
        let ArrowType::List(element) = with.data_type() else {
            panic!("{with:?}")
        };
        assert_eq!(element.metadata()[PARQUET_FIELD_ID_META_KEY], "3");
        assert_eq!(with.metadata()[PARQUET_FIELD_ID_META_KEY], "2");
    }
}
