//! The protocol gate (PROTOCOL.md "Protocol Evolution", "Table Features"): which tables
//! alluvium may read and write, and the protocol a new or upgraded table needs.
//!
//! Reading requires `minReaderVersion <= 3` and, at reader version 3, every listed reader
//! feature supported. Writing (checked by the write path) additionally requires
//! `minWriterVersion <= 7` and every writer feature supported; legacy writer versions imply
//! their feature sets ([`Protocol::legacy_writer_features`]). Anything unsupported fails
//! closed with a typed error naming it. Feature names are [`TableFeature`]s; whether a
//! protocol supports one is [`Protocol::supports_reader_feature`] and
//! [`Protocol::supports_writer_feature`] (the free functions of the same names here are
//! kept for callers that pass names).

use crate::actions::{Metadata, Protocol};
use crate::error::FeatureSide;
use crate::properties;
use crate::schema::{ColumnMetadataKey, DataType, PrimitiveType, StructType};
use crate::table::TableFeature;
use crate::{LogError, Result};

/// Highest reader version implemented.
pub const MAX_READER_VERSION: i32 = 3;
/// Highest writer version implemented.
pub const MAX_WRITER_VERSION: i32 = 7;

/// Reader features alluvium implements.
pub const SUPPORTED_READER_FEATURES: &[TableFeature] = &[
    TableFeature::ColumnMapping,
    TableFeature::DeletionVectors,
    TableFeature::TimestampNtz,
    TableFeature::V2Checkpoint,
    TableFeature::VacuumProtocolCheck,
    TableFeature::TypeWidening,
    TableFeature::TypeWideningPreview,
    // Variant columns are read in their unshredded form; shredded files are folded back.
    TableFeature::VariantType,
    TableFeature::VariantTypePreview,
    TableFeature::VariantShredding,
    TableFeature::VariantShreddingPreview,
    // Geometry and geography columns are read as WKB binary.
    TableFeature::Geospatial,
];

/// Why a known reader feature is not supported (for the error message).
fn unsupported_reader_detail(feature: &TableFeature) -> Option<&'static str> {
    Some(match feature {
        TableFeature::CatalogManaged | TableFeature::CatalogOwnedPreview => {
            "the table's commits are managed by a catalog; a filesystem engine must not read or write it directly"
        }
        TableFeature::Collations | TableFeature::CollationsPreview => {
            "collated string comparisons are not supported"
        }
        _ => return None,
    })
}

/// Checks that a snapshot governed by `protocol` can be read.
///
/// # Errors
/// [`LogError::UnsupportedProtocolVersion`] or [`LogError::UnsupportedFeature`] naming the
/// first reader feature that is not supported.
pub fn check_read_supported(protocol: &Protocol) -> Result<()> {
    if protocol.min_reader_version > MAX_READER_VERSION {
        return Err(LogError::UnsupportedProtocolVersion {
            side: FeatureSide::Reader,
            version: protocol.min_reader_version,
            supported: MAX_READER_VERSION,
        });
    }
    if protocol.min_reader_version == 3 {
        for f in protocol.reader_table_features() {
            if !SUPPORTED_READER_FEATURES.contains(&f) {
                return Err(LogError::UnsupportedFeature {
                    side: FeatureSide::Reader,
                    detail: unsupported_reader_detail(&f).map(str::to_string),
                    feature: f.to_string(),
                });
            }
        }
    }
    Ok(())
}

/// Writer features alluvium can write under, provided the table does not actively use a
/// part of them alluvium cannot enforce (see [`check_write_supported`]).
pub const SUPPORTED_WRITER_FEATURES: &[TableFeature] = &[
    TableFeature::AppendOnly,
    TableFeature::Invariants,
    TableFeature::CheckConstraints,
    TableFeature::ChangeDataFeed,
    TableFeature::GeneratedColumns,
    TableFeature::ColumnMapping,
    TableFeature::IdentityColumns,
    TableFeature::DeletionVectors,
    TableFeature::TimestampNtz,
    TableFeature::DomainMetadata,
    TableFeature::V2Checkpoint,
    TableFeature::InCommitTimestamp,
    TableFeature::VacuumProtocolCheck,
    TableFeature::TypeWidening,
    TableFeature::TypeWideningPreview,
    TableFeature::CheckpointProtection,
    TableFeature::AllowColumnDefaults,
    // Row ids and commit versions are assigned at commit time and preserved by rewrites
    // (SPEC.md §27); the feature requires `domainMetadata` (checked by the write gate).
    TableFeature::RowTracking,
    // Rows with variant or geospatial values are written as they arrive (unshredded
    // variants, WKB geometries); shredding is optional for writers and no statistics are
    // written for these columns.
    TableFeature::VariantType,
    TableFeature::VariantTypePreview,
    TableFeature::VariantShredding,
    TableFeature::VariantShreddingPreview,
    TableFeature::Geospatial,
    // Clustered tables: writes keep statistics for the clustering columns and the domain
    // (`clustering::check_writable`); OPTIMIZE clusters by them.
    TableFeature::Clustering,
    TableFeature::Liquid,
    // Partition values are also written into the data files (`materializes_partition_columns`).
    TableFeature::MaterializePartitionColumns,
    // The Delta-side rules are checked by `iceberg_compat::check`.
    TableFeature::IcebergCompatV1,
    TableFeature::IcebergCompatV2,
];

fn writer_refusal(feature: &TableFeature, detail: String) -> LogError {
    LogError::UnsupportedFeature {
        side: FeatureSide::Writer,
        feature: feature.to_string(),
        detail: Some(detail),
    }
}

/// Checks that alluvium may write a table with this protocol, metadata and schema: every
/// reader feature readable, writer version at most 7, every writer feature (listed, or
/// implied by a legacy version) supported, and no feature in active use that alluvium
/// cannot enforce: with Iceberg compatibility active, its Delta-side rules must be met
/// ([`crate::iceberg_compat::check`]). Column rules (invariants, CHECK constraints,
/// generated, identity and default columns) are enforced, and refused when an expression
/// cannot be evaluated exactly, by the facade's write path, not here.
///
/// # Errors
/// [`LogError::UnsupportedProtocolVersion`] or [`LogError::UnsupportedFeature`] (writer
/// side) naming the feature, and the column or property that uses it.
pub fn check_write_supported(
    protocol: &Protocol,
    metadata: &Metadata,
    schema: &StructType,
) -> Result<()> {
    check_read_supported(protocol)?;
    if protocol.min_writer_version > MAX_WRITER_VERSION {
        return Err(LogError::UnsupportedProtocolVersion {
            side: FeatureSide::Writer,
            version: protocol.min_writer_version,
            supported: MAX_WRITER_VERSION,
        });
    }
    let features = protocol.writer_features_in_force();
    for f in &features {
        if !SUPPORTED_WRITER_FEATURES.contains(f) {
            return Err(LogError::UnsupportedFeature {
                side: FeatureSide::Writer,
                feature: f.to_string(),
                detail: Some("alluvium cannot write tables with this feature yet".into()),
            });
        }
    }
    // Invariants, CHECK constraints, generated, identity and default columns are enforced
    // by the write path's column rules (the facade's `write::rules`), which refuse a
    // table whose rule they cannot apply exactly.
    if features.contains(&TableFeature::RowTracking)
        && !features.contains(&TableFeature::DomainMetadata)
    {
        return Err(writer_refusal(
            &TableFeature::RowTracking,
            "the protocol lists rowTracking without the domainMetadata feature it requires".into(),
        ));
    }
    crate::iceberg_compat::check(protocol, metadata, schema)?;
    Ok(())
}

/// Whether new data files of a table must also hold its partition columns (after the data
/// columns): the `materializePartitionColumns` writer feature is supported
/// (protocol_rfcs/materialize-partition-columns.md), or IcebergCompat V1 or V2 is active
/// (PROTOCOL.md "Writer Requirements for IcebergCompatV1/V2").
/// [`crate::table::TableConfiguration::materializes_partition_columns`] asks the same.
pub fn materializes_partition_columns(protocol: &Protocol, metadata: &Metadata) -> bool {
    protocol.supports_writer_feature(&TableFeature::MaterializePartitionColumns)
        || matches!(
            crate::iceberg_compat::active_version(&metadata.configuration),
            Some(1 | 2)
        )
}

/// The names of the writer features implied by a legacy (pre-7) writer version: the names
/// of [`Protocol::legacy_writer_features`].
pub fn legacy_writer_features(min_writer_version: i32) -> Vec<&'static str> {
    Protocol::legacy_writer_features(min_writer_version)
        .iter()
        .map(TableFeature::as_str)
        .collect()
}

/// Whether the protocol supports (lists or implies) the writer feature named `feature`:
/// [`Protocol::supports_writer_feature`] for callers holding a name.
pub fn supports_writer_feature(protocol: &Protocol, feature: &str) -> bool {
    protocol.supports_writer_feature(&TableFeature::from_name(feature))
}

/// Whether the protocol supports (lists or implies) the reader feature named `feature`:
/// [`Protocol::supports_reader_feature`] for callers holding a name.
pub fn supports_reader_feature(protocol: &Protocol, feature: &str) -> bool {
    protocol.supports_reader_feature(&TableFeature::from_name(feature))
}

/// Appends `f` to `list` unless it is there already.
fn push(list: &mut Vec<TableFeature>, f: &TableFeature) {
    if !list.contains(f) {
        list.push(f.clone());
    }
}

/// The names of `features`, in order, as a protocol lists them.
fn names(features: Vec<TableFeature>) -> Vec<String> {
    features.iter().map(TableFeature::to_string).collect()
}

/// The minimal protocol for a new table with `schema` and `configuration`: reader 1 /
/// writer 2 unless a type or property needs more; table features (reader 3 / writer 7) when
/// a feature has no legacy version or is requested with `delta.feature.<name>=supported`.
pub fn minimal_protocol(
    schema: &StructType,
    configuration: &std::collections::HashMap<String, String>,
) -> Protocol {
    let on = |k: &str| {
        configuration
            .get(k)
            .is_some_and(|v| v.eq_ignore_ascii_case("true"))
    };
    let mut reader: Vec<TableFeature> = Vec::new();
    let mut writer: Vec<TableFeature> = Vec::new();
    let mut legacy_writer = 2;
    let mut legacy_reader = 1;
    if schema.fields.iter().any(|f| {
        f.data_type
            .any_primitive(&mut |p| p == PrimitiveType::TimestampNtz)
    }) {
        push(&mut reader, &TableFeature::TimestampNtz);
    }
    if schema.fields.iter().any(|f| {
        f.data_type
            .any_primitive(&mut |p| p == PrimitiveType::Variant)
    }) {
        push(&mut reader, &TableFeature::VariantType);
    }
    if schema.fields.iter().any(|f| {
        f.data_type
            .any_type(&mut |t| matches!(t, DataType::Geospatial(_)))
    }) {
        push(&mut reader, &TableFeature::Geospatial);
    }
    if on(properties::ENABLE_DELETION_VECTORS) {
        push(&mut reader, &TableFeature::DeletionVectors);
    }
    if configuration
        .get(properties::CHECKPOINT_POLICY)
        .is_some_and(|v| v.eq_ignore_ascii_case("v2"))
    {
        push(&mut reader, &TableFeature::V2Checkpoint);
    }
    if on(properties::ENABLE_ICT) {
        push(&mut writer, &TableFeature::InCommitTimestamp);
    }
    if configuration
        .get(properties::COLUMN_MAPPING_MODE)
        .and_then(|m| crate::column_mapping::ColumnMappingMode::parse(m))
        .is_some_and(|m| m.is_mapped())
    {
        legacy_reader = 2;
        legacy_writer = legacy_writer.max(5);
    }
    if on(properties::ENABLE_CDF) {
        legacy_writer = legacy_writer.max(4);
    }
    if on(properties::ENABLE_ROW_TRACKING) {
        push(&mut writer, &TableFeature::RowTracking);
    }
    // Column rules: CHECK constraints need writer 3, generated columns writer 4, identity
    // columns writer 6, column defaults the `allowColumnDefaults` feature (PROTOCOL.md).
    if configuration
        .keys()
        .any(|k| k.starts_with(properties::CONSTRAINT_PREFIX))
    {
        legacy_writer = legacy_writer.max(3);
    }
    let field_has = |pred: &dyn Fn(&str) -> bool| {
        schema
            .fields
            .iter()
            .any(|f| f.metadata.keys().any(|k| pred(k)))
    };
    if field_has(&|k| k == ColumnMetadataKey::GenerationExpression.as_str()) {
        legacy_writer = legacy_writer.max(4);
    }
    if field_has(&|k| k.starts_with(ColumnMetadataKey::IDENTITY_PREFIX)) {
        legacy_writer = legacy_writer.max(6);
    }
    if field_has(&|k| k == ColumnMetadataKey::CurrentDefault.as_str()) {
        push(&mut writer, &TableFeature::AllowColumnDefaults);
    }
    for (k, v) in configuration {
        if let Some(name) = k.strip_prefix(properties::FEATURE_PREFIX)
            && (v.eq_ignore_ascii_case("supported") || v.eq_ignore_ascii_case("enabled"))
        {
            let feature = TableFeature::from_name(name);
            if SUPPORTED_READER_FEATURES.contains(&feature) {
                push(&mut reader, &feature);
            } else {
                push(&mut writer, &feature);
            }
        }
    }
    // Row tracking keeps its high-water mark in a domain (PROTOCOL.md "Row Tracking").
    if writer.contains(&TableFeature::RowTracking) {
        push(&mut writer, &TableFeature::DomainMetadata);
    }
    if reader.is_empty() && writer.is_empty() {
        return Protocol {
            min_reader_version: legacy_reader,
            min_writer_version: legacy_writer,
            reader_features: None,
            writer_features: None,
        };
    }
    // Table features: also list every feature the legacy versions would have implied.
    let mut writer_all: Vec<TableFeature> = Vec::new();
    for f in Protocol::legacy_writer_features(legacy_writer) {
        push(&mut writer_all, f);
    }
    let mut reader_all: Vec<TableFeature> = Vec::new();
    if legacy_reader == 2 {
        push(&mut reader_all, &TableFeature::ColumnMapping);
    }
    for r in &reader {
        push(&mut reader_all, r);
    }
    for w in writer.iter().chain(reader_all.iter()) {
        push(&mut writer_all, w);
    }
    if reader_all.is_empty() {
        Protocol {
            min_reader_version: 1,
            min_writer_version: 7,
            reader_features: None,
            writer_features: Some(names(writer_all)),
        }
    } else {
        Protocol {
            min_reader_version: 3,
            min_writer_version: 7,
            reader_features: Some(names(reader_all)),
            writer_features: Some(names(writer_all)),
        }
    }
}

/// The legacy (reader, writer) versions that imply a feature, for features that have one.
fn legacy_versions(feature: &TableFeature) -> Option<(i32, i32)> {
    Some(match feature {
        TableFeature::AppendOnly | TableFeature::Invariants => (1, 2),
        TableFeature::CheckConstraints => (1, 3),
        TableFeature::ChangeDataFeed | TableFeature::GeneratedColumns => (1, 4),
        TableFeature::ColumnMapping => (2, 5),
        TableFeature::IdentityColumns => (1, 6),
        _ => return None,
    })
}

/// The protocol of a table after `features` must be supported: `protocol` itself when it
/// already supports them all; otherwise higher legacy versions when the table is legacy and
/// every missing feature has a legacy version (writer 4 for `changeDataFeed`, reader 2 /
/// writer 5 for `columnMapping`, ...); otherwise table features (writer 7, and reader 3
/// when a reader feature is listed), listing every feature the old versions implied
/// (PROTOCOL.md "Table Features": a legacy table's implied features stay supported) and
/// every reader feature also as a writer feature. Reader-writer features are those in
/// [`SUPPORTED_READER_FEATURES`] plus `columnMapping`.
pub fn upgrade_protocol(protocol: &Protocol, features: &[TableFeature]) -> Protocol {
    let is_reader = |f: &TableFeature| {
        SUPPORTED_READER_FEATURES.contains(f) || *f == TableFeature::ColumnMapping
    };
    let supported = |p: &Protocol, f: &TableFeature| {
        p.supports_writer_feature(f) && (!is_reader(f) || p.supports_reader_feature(f))
    };
    let missing: Vec<&TableFeature> = features
        .iter()
        .filter(|f| !supported(protocol, f))
        .collect();
    if missing.is_empty() {
        return protocol.clone();
    }
    let legacy = protocol.min_writer_version < 7;
    if legacy && missing.iter().all(|f| legacy_versions(f).is_some()) {
        let mut p = protocol.clone();
        for f in &missing {
            if let Some((r, w)) = legacy_versions(f) {
                p.min_reader_version = p.min_reader_version.max(r);
                p.min_writer_version = p.min_writer_version.max(w);
            }
        }
        return p;
    }
    let mut reader: Vec<TableFeature> = if protocol.min_reader_version >= 3 {
        protocol.reader_table_features().collect()
    } else if protocol.min_reader_version == 2 {
        vec![TableFeature::ColumnMapping]
    } else {
        Vec::new()
    };
    // Legacy: the implied features; table features: the listed ones.
    let mut writer: Vec<TableFeature> = protocol.writer_features_in_force();
    for f in &missing {
        if is_reader(f) {
            push(&mut reader, f);
        }
        push(&mut writer, f);
    }
    for r in &reader {
        push(&mut writer, r);
    }
    if reader.is_empty() {
        Protocol {
            min_reader_version: protocol.min_reader_version.min(2),
            min_writer_version: 7,
            reader_features: None,
            writer_features: Some(names(writer)),
        }
    } else {
        Protocol {
            min_reader_version: 3,
            min_writer_version: 7,
            reader_features: Some(names(reader)),
            writer_features: Some(names(writer)),
        }
    }
}

/// The protocol that supports every feature `current` or `wanted` supports: `current`
/// upgraded by `wanted`'s features ([`upgrade_protocol`]), never lower than `current`.
/// REPLACE TABLE takes it: the new table's minimal protocol may ask for less than the old
/// one, and a protocol is never downgraded by a replace (Delta Spark's default), since
/// readers of the table's earlier versions still need what those versions used.
pub fn merge_protocols(current: &Protocol, wanted: &Protocol) -> Protocol {
    let mut features = wanted.writer_features_in_force();
    for f in wanted.reader_table_features() {
        push(&mut features, &f);
    }
    if wanted.min_reader_version == 2 {
        push(&mut features, &TableFeature::ColumnMapping);
    }
    upgrade_protocol(current, &features)
}

#[cfg(test)]
mod upgrade_tests {
    use super::*;
    use crate::table::TableFeature as F;

    use crate::actions::test_protocol as p;

    #[test]
    fn a_merged_protocol_keeps_the_current_features_and_adds_the_wanted_ones() {
        // Asking for less keeps what the table has.
        let cdf = p(1, 4, None, None);
        assert_eq!(merge_protocols(&cdf, &p(1, 2, None, None)), cdf);
        // Legacy on legacy stays legacy.
        assert_eq!(
            merge_protocols(&p(1, 3, None, None), &p(2, 5, None, None)),
            p(2, 5, None, None)
        );
        // A table feature on a legacy table lists the implied ones too.
        let dv = p(
            3,
            7,
            Some(&["deletionVectors"]),
            Some(&["appendOnly", "invariants", "deletionVectors"]),
        );
        let merged = merge_protocols(&cdf, &dv);
        assert_eq!(merged.min_reader_version, 3);
        assert_eq!(merged.reader_features.unwrap(), vec!["deletionVectors"]);
        assert!(
            merged
                .writer_features
                .unwrap()
                .iter()
                .any(|f| f == "changeDataFeed")
        );
        // Table features kept when the wanted protocol is legacy.
        assert_eq!(merge_protocols(&dv, &p(1, 2, None, None)), dv);
    }

    #[test]
    fn deletion_vectors_on_a_legacy_table_list_its_implied_features() {
        let up = upgrade_protocol(&p(1, 2, None, None), &[F::DeletionVectors]);
        assert_eq!(
            up,
            p(
                3,
                7,
                Some(&["deletionVectors"]),
                Some(&["appendOnly", "invariants", "deletionVectors"])
            )
        );
        let up = upgrade_protocol(&p(2, 5, None, None), &[F::DeletionVectors]);
        assert_eq!(up.min_reader_version, 3);
        assert_eq!(
            up.reader_features.unwrap(),
            vec!["columnMapping", "deletionVectors"]
        );
        let wf = up.writer_features.unwrap();
        for f in legacy_writer_features(5) {
            assert!(wf.iter().any(|x| x == f), "{f}");
        }
        assert!(wf.iter().any(|x| x == "deletionVectors"));
    }

    #[test]
    fn legacy_features_bump_legacy_versions() {
        assert_eq!(
            upgrade_protocol(&p(1, 2, None, None), &[F::ChangeDataFeed]),
            p(1, 4, None, None)
        );
        assert_eq!(
            upgrade_protocol(&p(1, 2, None, None), &[F::ColumnMapping]),
            p(2, 5, None, None)
        );
        assert_eq!(
            upgrade_protocol(&p(1, 1, None, None), &[F::AppendOnly]),
            p(1, 2, None, None)
        );
        let same = p(1, 4, None, None);
        assert_eq!(
            upgrade_protocol(&same, &[F::ChangeDataFeed, F::AppendOnly]),
            same
        );
    }

    #[test]
    fn table_features_gain_the_missing_ones() {
        let base = p(3, 7, Some(&["deletionVectors"]), Some(&["deletionVectors"]));
        let up = upgrade_protocol(&base, &[F::ChangeDataFeed, F::ColumnMapping]);
        assert_eq!(
            up.reader_features.unwrap(),
            vec!["deletionVectors", "columnMapping"]
        );
        assert_eq!(
            up.writer_features.unwrap(),
            vec!["deletionVectors", "changeDataFeed", "columnMapping"]
        );
        let writer_only = p(1, 7, None, Some(&["appendOnly"]));
        let up = upgrade_protocol(&writer_only, &[F::DeletionVectors]);
        assert_eq!(up.min_reader_version, 3);
        assert_eq!(
            up.writer_features.unwrap(),
            vec!["appendOnly", "deletionVectors"]
        );
    }
}

#[cfg(test)]
mod write_tests {
    use std::collections::HashMap;

    use super::*;
    use crate::schema::StructField;

    fn schema(extra_meta: Option<(&str, &str)>) -> StructType {
        let mut f = StructField::new("a", DataType::Primitive(PrimitiveType::Long), true);
        if let Some((k, v)) = extra_meta {
            f.metadata
                .insert(k.into(), serde_json::Value::String(v.into()));
        }
        StructType::new(vec![f])
    }

    #[test]
    fn minimal_protocols() {
        let conf = |pairs: &[(&str, &str)]| -> HashMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let p = minimal_protocol(&schema(None), &conf(&[]));
        assert_eq!((p.min_reader_version, p.min_writer_version), (1, 2));
        let p = minimal_protocol(
            &schema(None),
            &conf(&[("delta.enableInCommitTimestamps", "true")]),
        );
        assert_eq!((p.min_reader_version, p.min_writer_version), (1, 7));
        assert!(p.has_writer_feature("inCommitTimestamp") && p.has_writer_feature("invariants"));
        let p = minimal_protocol(
            &schema(None),
            &conf(&[("delta.enableDeletionVectors", "true")]),
        );
        assert_eq!((p.min_reader_version, p.min_writer_version), (3, 7));
        assert!(p.has_reader_feature("deletionVectors") && p.has_writer_feature("deletionVectors"));
        let ntz = StructType::new(vec![StructField::new(
            "t",
            DataType::Primitive(PrimitiveType::TimestampNtz),
            true,
        )]);
        assert!(minimal_protocol(&ntz, &conf(&[])).has_reader_feature("timestampNtz"));
        // Variant and geospatial columns, even nested, need their (reader-writer) features.
        let nested = StructType::from_json(
            r#"{"type":"struct","fields":[
            {"name":"s","type":{"type":"struct","fields":[{"name":"v","type":"variant","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},
            {"name":"g","type":{"type":"array","elementType":"geometry(OGC:CRS84)","containsNull":true},"nullable":true,"metadata":{}}
        ]}"#,
        )
        .unwrap();
        let p = minimal_protocol(&nested, &conf(&[]));
        for f in ["variantType", "geospatial"] {
            assert!(p.has_reader_feature(f) && p.has_writer_feature(f), "{p:?}");
        }
        let p = minimal_protocol(
            &schema(None),
            &conf(&[("delta.columnMapping.mode", "name")]),
        );
        assert_eq!((p.min_reader_version, p.min_writer_version), (2, 5));
        check_write_supported(&p, &Metadata::with_properties(&[]), &schema(None)).unwrap();
    }

    #[test]
    fn listed_but_unused_variant_features_never_block_reads_or_writes() {
        // delta-rs 1.6 lists `variantType` on every table with deletion vectors.
        let delta_rs = Protocol {
            min_reader_version: 3,
            min_writer_version: 7,
            reader_features: Some(vec!["deletionVectors".into(), "variantType".into()]),
            writer_features: Some(vec!["deletionVectors".into(), "variantType".into()]),
        };
        check_write_supported(&delta_rs, &Metadata::with_properties(&[]), &schema(None)).unwrap();
        for f in [
            "variantType-preview",
            "variantShredding-preview",
            "variantShredding",
            "geospatial",
        ] {
            let p = Protocol {
                min_reader_version: 3,
                min_writer_version: 7,
                reader_features: Some(vec![f.into()]),
                writer_features: Some(vec![f.into()]),
            };
            check_write_supported(&p, &Metadata::with_properties(&[]), &schema(None)).unwrap();
        }
    }

    #[test]
    fn write_gate() {
        let legacy = Protocol {
            min_reader_version: 1,
            min_writer_version: 2,
            reader_features: None,
            writer_features: None,
        };
        check_write_supported(&legacy, &Metadata::with_properties(&[]), &schema(None)).unwrap();
        // Column rules (invariants, CHECK constraints, ...) are enforced by the write
        // path, not refused by the gate.
        check_write_supported(
            &legacy,
            &Metadata::with_properties(&[]),
            &schema(Some(("delta.invariants", "x"))),
        )
        .unwrap();
        let v3 = Protocol {
            min_reader_version: 1,
            min_writer_version: 3,
            reader_features: None,
            writer_features: None,
        };
        check_write_supported(
            &v3,
            &Metadata::with_properties(&[("delta.constraints.c", "a > 0")]),
            &schema(None),
        )
        .unwrap();
        let f = Protocol {
            min_reader_version: 1,
            min_writer_version: 7,
            reader_features: None,
            writer_features: Some(vec!["rowTracking".into()]),
        };
        assert!(matches!(
            check_write_supported(&f, &Metadata::with_properties(&[]), &schema(None)),
            Err(LogError::UnsupportedFeature { .. })
        ));
        let w8 = Protocol {
            min_reader_version: 1,
            min_writer_version: 8,
            reader_features: None,
            writer_features: None,
        };
        assert!(matches!(
            check_write_supported(&w8, &Metadata::with_properties(&[]), &schema(None)),
            Err(LogError::UnsupportedProtocolVersion { .. })
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::actions::test_protocol as p;

    #[test]
    fn reader_gate() {
        check_read_supported(&p(1, 2, None, None)).unwrap();
        check_read_supported(&p(2, 5, None, None)).unwrap();
        check_read_supported(&p(
            3,
            7,
            Some(&["deletionVectors", "columnMapping"]),
            Some(&[]),
        ))
        .unwrap();
        let e = check_read_supported(&p(3, 7, Some(&["deletionVectors", "blahabl"]), Some(&[])))
            .unwrap_err();
        assert!(
            matches!(e, LogError::UnsupportedFeature { ref feature, side: FeatureSide::Reader, .. } if feature == "blahabl")
        );
        let e = check_read_supported(&p(99, 7, None, None)).unwrap_err();
        assert!(matches!(
            e,
            LogError::UnsupportedProtocolVersion { version: 99, .. }
        ));
        let e = check_read_supported(&p(3, 7, Some(&["catalogManaged"]), None)).unwrap_err();
        assert!(e.to_string().contains("catalogManaged"), "{e}");
    }

    #[test]
    fn legacy_versions_imply_features() {
        assert!(supports_writer_feature(
            &p(1, 4, None, None),
            "changeDataFeed"
        ));
        assert!(!supports_writer_feature(
            &p(1, 4, None, None),
            "columnMapping"
        ));
        assert!(supports_writer_feature(
            &p(3, 7, None, Some(&["domainMetadata"])),
            "domainMetadata"
        ));
        assert!(supports_reader_feature(
            &p(2, 5, None, None),
            "columnMapping"
        ));
        assert!(!supports_reader_feature(
            &p(1, 2, None, None),
            "columnMapping"
        ));
    }
}
