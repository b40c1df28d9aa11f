//! The names of table features (PROTOCOL.md "Table Features"): the one place their strings
//! are spelled.
//!
//! A protocol lists features by name. [`TableFeature`] gives every name alluvium knows a
//! variant and keeps any other name as [`TableFeature::Unknown`], so a name read from a
//! table always turns back into the same string. Whether a feature is supported is the
//! gate's business ([`crate::features`]), not this type's.

use std::convert::Infallible;
use std::fmt;
use std::str::FromStr;

/// A reader or writer table feature, by the name a protocol lists it under.
///
/// Names are compared exactly (case-sensitively), as the protocol spells them.
/// [`TableFeature::from_name`] never fails: a name alluvium does not know becomes
/// [`TableFeature::Unknown`] holding it unchanged, and [`TableFeature::as_str`] gives it
/// back, so `TableFeature::from_name(s).as_str() == s` for every `s`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TableFeature {
    /// `appendOnly` (writer; legacy writer 2).
    AppendOnly,
    /// `invariants` (writer; legacy writer 2).
    Invariants,
    /// `checkConstraints` (writer; legacy writer 3).
    CheckConstraints,
    /// `changeDataFeed` (writer; legacy writer 4).
    ChangeDataFeed,
    /// `generatedColumns` (writer; legacy writer 4).
    GeneratedColumns,
    /// `columnMapping` (reader and writer; legacy reader 2 / writer 5).
    ColumnMapping,
    /// `identityColumns` (writer; legacy writer 6).
    IdentityColumns,
    /// `deletionVectors` (reader and writer).
    DeletionVectors,
    /// `rowTracking` (writer).
    RowTracking,
    /// `timestampNtz` (reader and writer).
    TimestampNtz,
    /// `domainMetadata` (writer).
    DomainMetadata,
    /// `v2Checkpoint` (reader and writer).
    V2Checkpoint,
    /// `icebergCompatV1` (writer).
    IcebergCompatV1,
    /// `icebergCompatV2` (writer).
    IcebergCompatV2,
    /// `icebergCompatV3` (writer; not supported).
    IcebergCompatV3,
    /// `clustering` (writer).
    Clustering,
    /// `liquid`: the preview name of clustering, kept by older Databricks tables (writer).
    Liquid,
    /// `vacuumProtocolCheck` (reader and writer).
    VacuumProtocolCheck,
    /// `typeWidening` (reader and writer).
    TypeWidening,
    /// `typeWidening-preview` (reader and writer).
    TypeWideningPreview,
    /// `inCommitTimestamp` (writer).
    InCommitTimestamp,
    /// `variantType` (reader and writer).
    VariantType,
    /// `variantType-preview` (reader and writer).
    VariantTypePreview,
    /// `variantShredding` (reader and writer).
    VariantShredding,
    /// `variantShredding-preview` (reader and writer).
    VariantShreddingPreview,
    /// `geospatial` (reader and writer).
    Geospatial,
    /// `checkpointProtection` (writer).
    CheckpointProtection,
    /// `allowColumnDefaults` (writer).
    AllowColumnDefaults,
    /// `materializePartitionColumns` (writer).
    MaterializePartitionColumns,
    /// `catalogManaged` (reader and writer; not supported).
    CatalogManaged,
    /// `catalogOwned-preview` (reader and writer; not supported).
    CatalogOwnedPreview,
    /// `collations` (reader and writer; not supported).
    Collations,
    /// `collations-preview` (reader and writer; not supported).
    CollationsPreview,
    /// Any other name, kept exactly as written.
    Unknown(String),
}

impl TableFeature {
    /// Every feature alluvium knows by name (all variants but [`TableFeature::Unknown`]).
    pub const KNOWN: &'static [TableFeature] = &[
        TableFeature::AppendOnly,
        TableFeature::Invariants,
        TableFeature::CheckConstraints,
        TableFeature::ChangeDataFeed,
        TableFeature::GeneratedColumns,
        TableFeature::ColumnMapping,
        TableFeature::IdentityColumns,
        TableFeature::DeletionVectors,
        TableFeature::RowTracking,
        TableFeature::TimestampNtz,
        TableFeature::DomainMetadata,
        TableFeature::V2Checkpoint,
        TableFeature::IcebergCompatV1,
        TableFeature::IcebergCompatV2,
        TableFeature::IcebergCompatV3,
        TableFeature::Clustering,
        TableFeature::Liquid,
        TableFeature::VacuumProtocolCheck,
        TableFeature::TypeWidening,
        TableFeature::TypeWideningPreview,
        TableFeature::InCommitTimestamp,
        TableFeature::VariantType,
        TableFeature::VariantTypePreview,
        TableFeature::VariantShredding,
        TableFeature::VariantShreddingPreview,
        TableFeature::Geospatial,
        TableFeature::CheckpointProtection,
        TableFeature::AllowColumnDefaults,
        TableFeature::MaterializePartitionColumns,
        TableFeature::CatalogManaged,
        TableFeature::CatalogOwnedPreview,
        TableFeature::Collations,
        TableFeature::CollationsPreview,
    ];

    /// The feature's name as a protocol lists it.
    pub const fn as_str(&self) -> &str {
        match self {
            TableFeature::AppendOnly => "appendOnly",
            TableFeature::Invariants => "invariants",
            TableFeature::CheckConstraints => "checkConstraints",
            TableFeature::ChangeDataFeed => "changeDataFeed",
            TableFeature::GeneratedColumns => "generatedColumns",
            TableFeature::ColumnMapping => "columnMapping",
            TableFeature::IdentityColumns => "identityColumns",
            TableFeature::DeletionVectors => "deletionVectors",
            TableFeature::RowTracking => "rowTracking",
            TableFeature::TimestampNtz => "timestampNtz",
            TableFeature::DomainMetadata => "domainMetadata",
            TableFeature::V2Checkpoint => "v2Checkpoint",
            TableFeature::IcebergCompatV1 => "icebergCompatV1",
            TableFeature::IcebergCompatV2 => "icebergCompatV2",
            TableFeature::IcebergCompatV3 => "icebergCompatV3",
            TableFeature::Clustering => "clustering",
            TableFeature::Liquid => "liquid",
            TableFeature::VacuumProtocolCheck => "vacuumProtocolCheck",
            TableFeature::TypeWidening => "typeWidening",
            TableFeature::TypeWideningPreview => "typeWidening-preview",
            TableFeature::InCommitTimestamp => "inCommitTimestamp",
            TableFeature::VariantType => "variantType",
            TableFeature::VariantTypePreview => "variantType-preview",
            TableFeature::VariantShredding => "variantShredding",
            TableFeature::VariantShreddingPreview => "variantShredding-preview",
            TableFeature::Geospatial => "geospatial",
            TableFeature::CheckpointProtection => "checkpointProtection",
            TableFeature::AllowColumnDefaults => "allowColumnDefaults",
            TableFeature::MaterializePartitionColumns => "materializePartitionColumns",
            TableFeature::CatalogManaged => "catalogManaged",
            TableFeature::CatalogOwnedPreview => "catalogOwned-preview",
            TableFeature::Collations => "collations",
            TableFeature::CollationsPreview => "collations-preview",
            TableFeature::Unknown(name) => name.as_str(),
        }
    }

    /// The feature named `name`: a known variant when the name is spelled exactly as the
    /// protocol spells it, else [`TableFeature::Unknown`] holding `name` unchanged.
    pub fn from_name(name: &str) -> TableFeature {
        TableFeature::KNOWN
            .iter()
            .find(|f| f.as_str() == name)
            .cloned()
            .unwrap_or_else(|| TableFeature::Unknown(name.to_string()))
    }

    /// Whether this is a name alluvium does not know.
    pub fn is_unknown(&self) -> bool {
        matches!(self, TableFeature::Unknown(_))
    }
}

impl FromStr for TableFeature {
    type Err = Infallible;

    /// Never fails; see [`TableFeature::from_name`].
    fn from_str(name: &str) -> Result<Self, Infallible> {
        Ok(TableFeature::from_name(name))
    }
}

impl fmt::Display for TableFeature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl AsRef<str> for TableFeature {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn every_known_name_round_trips_and_names_are_distinct() {
        let mut names = HashSet::new();
        for f in TableFeature::KNOWN {
            assert!(!f.is_unknown());
            let name = f.as_str();
            assert!(names.insert(name), "{name} named twice");
            assert_eq!(&TableFeature::from_name(name), f);
            assert_eq!(name.parse::<TableFeature>(), Ok(f.clone()));
            assert_eq!(f.to_string(), name);
        }
        // The protocol's spellings, as the log carries them.
        assert_eq!(
            TableFeature::TypeWideningPreview.as_str(),
            "typeWidening-preview"
        );
        assert_eq!(TableFeature::V2Checkpoint.as_str(), "v2Checkpoint");
        assert_eq!(TableFeature::IcebergCompatV2.as_str(), "icebergCompatV2");
    }

    #[test]
    fn unknown_names_are_kept_exactly() {
        for name in [
            "someFutureFeature",
            "DeletionVectors",
            "deletionvectors",
            " appendOnly",
            "",
        ] {
            let f = TableFeature::from_name(name);
            assert_eq!(f, TableFeature::Unknown(name.to_string()));
            assert!(f.is_unknown());
            assert_eq!(f.as_str(), name);
            assert_eq!(f.to_string(), name);
        }
    }
}
