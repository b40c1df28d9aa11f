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

/// Declares [`TableFeature`] from one list of variants, each with its protocol name: the
/// enum, its [`KNOWN`](TableFeature::KNOWN) list and [`as_str`](TableFeature::as_str) all
/// come from it, so a new feature is one line and cannot be missing from any of them.
macro_rules! table_features {
    ($($(#[$meta:meta])* $variant:ident => $name:literal,)*) => {
        /// A reader or writer table feature, by the name a protocol lists it under.
        ///
        /// Names are compared exactly (case-sensitively), as the protocol spells them.
        /// [`TableFeature::from_name`] never fails: a name alluvium does not know becomes
        /// [`TableFeature::Unknown`] holding it unchanged, and [`TableFeature::as_str`] gives it
        /// back, so `TableFeature::from_name(s).as_str() == s` for every `s`.
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum TableFeature {
            $($(#[$meta])* $variant,)*
            /// Any other name, kept exactly as written.
            Unknown(String),
        }

        impl TableFeature {
            /// Every feature alluvium knows by name (all variants but
            /// [`TableFeature::Unknown`]).
            pub const KNOWN: &'static [TableFeature] = &[$(TableFeature::$variant,)*];

            /// The feature's name as a protocol lists it.
            pub const fn as_str(&self) -> &str {
                match self {
                    $(TableFeature::$variant => $name,)*
                    TableFeature::Unknown(name) => name.as_str(),
                }
            }
        }
    };
}

table_features! {
    /// `appendOnly` (writer; legacy writer 2).
    AppendOnly => "appendOnly",
    /// `invariants` (writer; legacy writer 2).
    Invariants => "invariants",
    /// `checkConstraints` (writer; legacy writer 3).
    CheckConstraints => "checkConstraints",
    /// `changeDataFeed` (writer; legacy writer 4).
    ChangeDataFeed => "changeDataFeed",
    /// `generatedColumns` (writer; legacy writer 4).
    GeneratedColumns => "generatedColumns",
    /// `columnMapping` (reader and writer; legacy reader 2 / writer 5).
    ColumnMapping => "columnMapping",
    /// `identityColumns` (writer; legacy writer 6).
    IdentityColumns => "identityColumns",
    /// `deletionVectors` (reader and writer).
    DeletionVectors => "deletionVectors",
    /// `rowTracking` (writer).
    RowTracking => "rowTracking",
    /// `timestampNtz` (reader and writer).
    TimestampNtz => "timestampNtz",
    /// `domainMetadata` (writer).
    DomainMetadata => "domainMetadata",
    /// `v2Checkpoint` (reader and writer).
    V2Checkpoint => "v2Checkpoint",
    /// `icebergCompatV1` (writer).
    IcebergCompatV1 => "icebergCompatV1",
    /// `icebergCompatV2` (writer).
    IcebergCompatV2 => "icebergCompatV2",
    /// `icebergCompatV3` (writer; not supported).
    IcebergCompatV3 => "icebergCompatV3",
    /// `clustering` (writer).
    Clustering => "clustering",
    /// `liquid`: the preview name of clustering, kept by older Databricks tables (writer).
    Liquid => "liquid",
    /// `vacuumProtocolCheck` (reader and writer).
    VacuumProtocolCheck => "vacuumProtocolCheck",
    /// `typeWidening` (reader and writer).
    TypeWidening => "typeWidening",
    /// `typeWidening-preview` (reader and writer).
    TypeWideningPreview => "typeWidening-preview",
    /// `inCommitTimestamp` (writer).
    InCommitTimestamp => "inCommitTimestamp",
    /// `variantType` (reader and writer).
    VariantType => "variantType",
    /// `variantType-preview` (reader and writer).
    VariantTypePreview => "variantType-preview",
    /// `variantShredding` (reader and writer).
    VariantShredding => "variantShredding",
    /// `variantShredding-preview` (reader and writer).
    VariantShreddingPreview => "variantShredding-preview",
    /// `geospatial` (reader and writer).
    Geospatial => "geospatial",
    /// `checkpointProtection` (writer).
    CheckpointProtection => "checkpointProtection",
    /// `allowColumnDefaults` (writer).
    AllowColumnDefaults => "allowColumnDefaults",
    /// `materializePartitionColumns` (writer).
    MaterializePartitionColumns => "materializePartitionColumns",
    /// `catalogManaged` (reader and writer; not supported).
    CatalogManaged => "catalogManaged",
    /// `catalogOwned-preview` (reader and writer; not supported).
    CatalogOwnedPreview => "catalogOwned-preview",
    /// `collations` (reader and writer; not supported).
    Collations => "collations",
    /// `collations-preview` (reader and writer; not supported).
    CollationsPreview => "collations-preview",
}

impl TableFeature {
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
