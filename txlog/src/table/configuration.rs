//! [`TableConfiguration`]: a table's protocol and metadata read together, answering the
//! questions a writer or reader asks of both at once (does this table write deletion
//! vectors, materialise partition columns, track rows, map columns, record change data).
//!
//! Each answer is a rule of PROTOCOL.md combining a feature the protocol must support with
//! a property the metadata must set; keeping them here means no caller spells a rule again.

use crate::actions::{Metadata, Protocol};
use crate::column_mapping::ColumnMappingMode;
use crate::properties::TableProperties;
use crate::table::TableFeature;

/// A table's protocol and metadata, with its properties parsed as needed.
///
/// A borrowed view: building one costs nothing beyond reading the column-mapping mode, and
/// it answers for exactly the protocol and metadata it was built from.
#[derive(Debug, Clone, Copy)]
pub struct TableConfiguration<'a> {
    protocol: &'a Protocol,
    metadata: &'a Metadata,
    column_mapping: ColumnMappingMode,
}

impl<'a> TableConfiguration<'a> {
    /// The configuration of a table governed by `protocol` with `metadata`.
    pub fn new(protocol: &'a Protocol, metadata: &'a Metadata) -> Self {
        TableConfiguration {
            protocol,
            metadata,
            column_mapping: ColumnMappingMode::of(protocol, metadata),
        }
    }

    /// The protocol.
    pub fn protocol(&self) -> &'a Protocol {
        self.protocol
    }

    /// The metadata.
    pub fn metadata(&self) -> &'a Metadata {
        self.metadata
    }

    /// The table properties (`metaData.configuration`), typed.
    pub fn properties(&self) -> TableProperties<'a> {
        TableProperties(&self.metadata.configuration)
    }

    /// The column-mapping mode in force: `delta.columnMapping.mode`, honoured only when the
    /// protocol supports `columnMapping` ([`ColumnMappingMode::of`]).
    pub fn column_mapping_mode(&self) -> ColumnMappingMode {
        self.column_mapping
    }

    /// Whether new deletions are written as deletion vectors: `delta.enableDeletionVectors`
    /// is true, the protocol supports the `deletionVectors` reader and writer feature, the
    /// table is not append-only, and no Iceberg compatibility is on (neither the
    /// `icebergCompatV1` writer feature, which forbids deletion vectors, nor any
    /// `delta.enableIcebergCompatV<n>` property). Otherwise deletions rewrite files.
    pub fn writes_deletion_vectors(&self) -> bool {
        let props = self.properties();
        props.deletion_vectors()
            && self
                .protocol
                .supports_reader_feature(&TableFeature::DeletionVectors)
            && self
                .protocol
                .supports_writer_feature(&TableFeature::DeletionVectors)
            && !self
                .protocol
                .supports_writer_feature(&TableFeature::IcebergCompatV1)
            && !props.append_only()
            && props.iceberg_compat().is_none()
    }

    /// Whether new data files must also hold the partition columns: the
    /// `materializePartitionColumns` writer feature is supported, or IcebergCompat V1 or V2
    /// is active ([`crate::features::materializes_partition_columns`]).
    pub fn materializes_partition_columns(&self) -> bool {
        crate::features::materializes_partition_columns(self.protocol, self.metadata)
    }

    /// Whether writers must assign row ids and commit versions: the protocol supports
    /// `rowTracking` and `delta.rowTrackingSuspended` is not true
    /// ([`crate::row_tracking::must_assign`]).
    pub fn assigns_row_ids(&self) -> bool {
        crate::row_tracking::must_assign(self.protocol, &self.metadata.configuration)
    }

    /// Whether row tracking is enabled: the protocol supports `rowTracking` and
    /// `delta.enableRowTracking` is true, so every live file has row ids
    /// ([`crate::row_tracking::is_enabled`]).
    pub fn tracks_rows(&self) -> bool {
        crate::row_tracking::is_enabled(self.protocol, &self.metadata.configuration)
    }

    /// Whether writes record change data: `delta.enableChangeDataFeed` (or its older
    /// spelling `delta.enableChangeDataCapture`) is true. The property alone decides, as
    /// for every writer so far: a protocol that enables it also supports the feature,
    /// because setting it upgrades the protocol.
    pub fn change_data_feed_enabled(&self) -> bool {
        self.properties().change_data_feed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn protocol(r: i32, w: i32, features: &[&str]) -> Protocol {
        let list = || Some(features.iter().map(|s| s.to_string()).collect());
        Protocol {
            min_reader_version: r,
            min_writer_version: w,
            reader_features: (r >= 3).then(list).flatten(),
            writer_features: (w >= 7).then(list).flatten(),
        }
    }

    #[test]
    fn deletion_vectors_need_the_property_both_features_and_no_iceberg_or_append_only() {
        let dv = protocol(3, 7, &["deletionVectors"]);
        let on = Metadata::with_properties(&[("delta.enableDeletionVectors", "true")]);
        assert!(TableConfiguration::new(&dv, &on).writes_deletion_vectors());
        // The property without the feature, and the feature without the property.
        assert!(!TableConfiguration::new(&protocol(1, 2, &[]), &on).writes_deletion_vectors());
        let off = Metadata::with_properties(&[]);
        assert!(!TableConfiguration::new(&dv, &off).writes_deletion_vectors());
        // Listed as a writer feature only (reader 1): readers could not apply them.
        let writer_only = Protocol {
            min_reader_version: 1,
            min_writer_version: 7,
            reader_features: None,
            writer_features: Some(vec!["deletionVectors".into()]),
        };
        assert!(!TableConfiguration::new(&writer_only, &on).writes_deletion_vectors());
        let append_only = Metadata::with_properties(&[
            ("delta.enableDeletionVectors", "true"),
            ("delta.appendOnly", "true"),
        ]);
        assert!(!TableConfiguration::new(&dv, &append_only).writes_deletion_vectors());
        let iceberg = Metadata::with_properties(&[
            ("delta.enableDeletionVectors", "true"),
            ("delta.enableIcebergCompatV2", "true"),
        ]);
        assert!(!TableConfiguration::new(&dv, &iceberg).writes_deletion_vectors());
        let v1 = protocol(3, 7, &["deletionVectors", "icebergCompatV1"]);
        assert!(!TableConfiguration::new(&v1, &on).writes_deletion_vectors());
    }

    #[test]
    fn partition_columns_are_materialised_by_the_feature_or_iceberg_compat() {
        let none = Metadata::with_properties(&[]);
        assert!(
            !TableConfiguration::new(&protocol(1, 2, &[]), &none).materializes_partition_columns()
        );
        let feature = protocol(1, 7, &["materializePartitionColumns"]);
        assert!(TableConfiguration::new(&feature, &none).materializes_partition_columns());
        for v in ["delta.enableIcebergCompatV1", "delta.enableIcebergCompatV2"] {
            let m = Metadata::with_properties(&[(v, "true")]);
            assert!(
                TableConfiguration::new(&protocol(1, 2, &[]), &m).materializes_partition_columns(),
                "{v}"
            );
        }
        // V3 is refused by the write gate, not materialised.
        let v3 = Metadata::with_properties(&[("delta.enableIcebergCompatV3", "true")]);
        assert!(
            !TableConfiguration::new(&protocol(1, 2, &[]), &v3).materializes_partition_columns()
        );
    }

    #[test]
    fn row_tracking_needs_the_feature_and_assignment_stops_when_suspended() {
        let rt = protocol(1, 7, &["rowTracking", "domainMetadata"]);
        let enabled = Metadata::with_properties(&[("delta.enableRowTracking", "true")]);
        let c = TableConfiguration::new(&rt, &enabled);
        assert!(c.tracks_rows() && c.assigns_row_ids());
        // Supported but not enabled: ids are still assigned, but cannot be relied upon.
        let unset = Metadata::with_properties(&[]);
        let c = TableConfiguration::new(&rt, &unset);
        assert!(!c.tracks_rows() && c.assigns_row_ids());
        let suspended = Metadata::with_properties(&[("delta.rowTrackingSuspended", "true")]);
        assert!(!TableConfiguration::new(&rt, &suspended).assigns_row_ids());
        // The property without the feature does nothing.
        let legacy = protocol(1, 6, &[]);
        let c = TableConfiguration::new(&legacy, &enabled);
        assert!(!c.tracks_rows() && !c.assigns_row_ids());
    }

    #[test]
    fn column_mapping_mode_is_the_property_under_the_feature() {
        let name = Metadata::with_properties(&[("delta.columnMapping.mode", "Name")]);
        let id = Metadata::with_properties(&[("delta.columnMapping.mode", "id")]);
        let legacy = protocol(2, 5, &[]);
        assert_eq!(
            TableConfiguration::new(&legacy, &name).column_mapping_mode(),
            ColumnMappingMode::Name
        );
        assert_eq!(
            TableConfiguration::new(&protocol(3, 7, &["columnMapping"]), &id).column_mapping_mode(),
            ColumnMappingMode::Id
        );
        // Without the feature the property is ignored.
        assert_eq!(
            TableConfiguration::new(&protocol(1, 4, &[]), &name).column_mapping_mode(),
            ColumnMappingMode::None
        );
        let bad = Metadata::with_properties(&[("delta.columnMapping.mode", "names")]);
        assert_eq!(
            TableConfiguration::new(&legacy, &bad).column_mapping_mode(),
            ColumnMappingMode::None
        );
    }

    #[test]
    fn change_data_feed_follows_either_spelling_of_the_property() {
        let p = protocol(1, 4, &[]);
        for key in [
            "delta.enableChangeDataFeed",
            "delta.enableChangeDataCapture",
        ] {
            let m = Metadata::with_properties(&[(key, "true")]);
            assert!(
                TableConfiguration::new(&p, &m).change_data_feed_enabled(),
                "{key}"
            );
            let m = Metadata::with_properties(&[(key, "false")]);
            assert!(
                !TableConfiguration::new(&p, &m).change_data_feed_enabled(),
                "{key}"
            );
        }
        assert!(
            !TableConfiguration::new(&p, &Metadata::with_properties(&[]))
                .change_data_feed_enabled()
        );
    }
}
