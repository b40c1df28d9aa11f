//! The `protocol` action: which reader and writer versions and features a client needs.

use serde::{Deserialize, Serialize};

use crate::table::TableFeature;

/// `protocol`: the versions (and, for reader 3 / writer 7, the explicit feature lists) a
/// client must support. See [`crate::features`] for the gate built on it.
///
/// The feature lists stay strings, in the order the log wrote them, so a protocol read
/// from the log is written back byte for byte, unknown names included;
/// [`Protocol::reader_table_features`] and [`Protocol::writer_table_features`] read them as
/// [`TableFeature`]s, and [`Protocol::supports_reader_feature`] and
/// [`Protocol::supports_writer_feature`] answer with the legacy versions' implications.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Protocol {
    /// Minimum reader version.
    pub min_reader_version: i32,
    /// Minimum writer version.
    pub min_writer_version: i32,
    /// Reader features (present iff `min_reader_version == 3`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reader_features: Option<Vec<String>>,
    /// Writer features (present iff `min_writer_version == 7`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writer_features: Option<Vec<String>>,
}

impl Protocol {
    /// True if `feature` is listed as a reader feature.
    pub fn has_reader_feature(&self, feature: &str) -> bool {
        self.reader_features
            .as_ref()
            .is_some_and(|f| f.iter().any(|x| x == feature))
    }

    /// True if `feature` is listed as a writer feature.
    pub fn has_writer_feature(&self, feature: &str) -> bool {
        self.writer_features
            .as_ref()
            .is_some_and(|f| f.iter().any(|x| x == feature))
    }

    /// The listed reader features, in list order (none when there is no list).
    pub fn reader_table_features(&self) -> impl Iterator<Item = TableFeature> + '_ {
        self.reader_features
            .iter()
            .flatten()
            .map(|f| TableFeature::from_name(f))
    }

    /// The listed writer features, in list order (none when there is no list).
    pub fn writer_table_features(&self) -> impl Iterator<Item = TableFeature> + '_ {
        self.writer_features
            .iter()
            .flatten()
            .map(|f| TableFeature::from_name(f))
    }

    /// Whether the protocol supports a reader feature: listed, at reader version 3 or
    /// more; implied by a legacy version otherwise (reader 2 implies `columnMapping`, and
    /// nothing else is implied).
    pub fn supports_reader_feature(&self, feature: &TableFeature) -> bool {
        if self.min_reader_version >= 3 {
            self.has_reader_feature(feature.as_str())
        } else {
            self.min_reader_version == 2 && *feature == TableFeature::ColumnMapping
        }
    }

    /// Whether the protocol supports a writer feature: listed, at writer version 7 or
    /// more; one of [`Protocol::legacy_writer_features`] of its version otherwise.
    pub fn supports_writer_feature(&self, feature: &TableFeature) -> bool {
        if self.min_writer_version >= 7 {
            self.has_writer_feature(feature.as_str())
        } else {
            Protocol::legacy_writer_features(self.min_writer_version).contains(feature)
        }
    }

    /// The writer features in force: the listed ones at writer version 7 or more (in list
    /// order), else those the legacy version implies.
    pub fn writer_features_in_force(&self) -> Vec<TableFeature> {
        if self.min_writer_version >= 7 {
            self.writer_table_features().collect()
        } else {
            Protocol::legacy_writer_features(self.min_writer_version).to_vec()
        }
    }

    /// The writer features a legacy (pre-7) writer version implies (PROTOCOL.md "Table
    /// Features": 2 adds `appendOnly` and `invariants`, 3 `checkConstraints`, 4
    /// `changeDataFeed` and `generatedColumns`, 5 `columnMapping`, 6 `identityColumns`),
    /// in that order. Version 7 and above imply nothing further than version 6 does; their
    /// features are listed instead.
    pub fn legacy_writer_features(min_writer_version: i32) -> &'static [TableFeature] {
        const ALL: &[TableFeature] = &[
            TableFeature::AppendOnly,
            TableFeature::Invariants,
            TableFeature::CheckConstraints,
            TableFeature::ChangeDataFeed,
            TableFeature::GeneratedColumns,
            TableFeature::ColumnMapping,
            TableFeature::IdentityColumns,
        ];
        let n = match min_writer_version {
            ..=1 => 0,
            2 => 2,
            3 => 3,
            4 => 5,
            5 => 6,
            _ => 7,
        };
        &ALL[..n]
    }
}

/// A protocol of the versions `r` (reader) and `w` (writer) and the feature lists `rf` and
/// `wf` (`None`: no list, as a legacy protocol has), unvalidated: tests state protocols in a
/// line with it (here, in `table/features.rs` and in the root crate's RESTORE). Not part of
/// the API.
#[doc(hidden)]
pub fn test_protocol(r: i32, w: i32, rf: Option<&[&str]>, wf: Option<&[&str]>) -> Protocol {
    let list = |l: Option<&[&str]>| l.map(|l| l.iter().map(|s| s.to_string()).collect());
    Protocol {
        min_reader_version: r,
        min_writer_version: w,
        reader_features: list(rf),
        writer_features: list(wf),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::test_protocol as p;

    #[test]
    fn json_keeps_feature_names_and_order_byte_for_byte() {
        for json in [
            r#"{"minReaderVersion":1,"minWriterVersion":2}"#,
            r#"{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["v2Checkpoint","deletionVectors","someFutureFeature"],"writerFeatures":["someFutureFeature","typeWidening-preview","appendOnly","deletionVectors","v2Checkpoint"]}"#,
            r#"{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":[]}"#,
        ] {
            let protocol: Protocol = serde_json::from_str(json).unwrap();
            assert_eq!(serde_json::to_string(&protocol).unwrap(), json);
        }
        let protocol: Protocol = serde_json::from_str(
            r#"{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["someFutureFeature"],"writerFeatures":["someFutureFeature","deletionVectors"]}"#,
        )
        .unwrap();
        assert_eq!(
            protocol.writer_table_features().collect::<Vec<_>>(),
            vec![
                TableFeature::Unknown("someFutureFeature".into()),
                TableFeature::DeletionVectors
            ]
        );
    }

    #[test]
    fn legacy_versions_imply_exactly_their_features() {
        use TableFeature as F;
        assert!(Protocol::legacy_writer_features(1).is_empty());
        assert_eq!(
            Protocol::legacy_writer_features(2),
            &[F::AppendOnly, F::Invariants]
        );
        assert_eq!(
            Protocol::legacy_writer_features(4).last(),
            Some(&F::GeneratedColumns)
        );
        assert_eq!(Protocol::legacy_writer_features(6).len(), 7);
        assert!(p(1, 4, None, None).supports_writer_feature(&F::ChangeDataFeed));
        assert!(!p(1, 4, None, None).supports_writer_feature(&F::ColumnMapping));
        assert!(p(2, 5, None, None).supports_writer_feature(&F::ColumnMapping));
        assert!(p(1, 6, None, None).supports_writer_feature(&F::IdentityColumns));
        // Legacy versions never imply a feature that has no legacy version.
        assert!(!p(1, 6, None, None).supports_writer_feature(&F::DeletionVectors));
        // At writer 7 only the list counts, even for features with a legacy version.
        let listed = p(1, 7, None, Some(&["deletionVectors"]));
        assert!(listed.supports_writer_feature(&F::DeletionVectors));
        assert!(!listed.supports_writer_feature(&F::AppendOnly));
        assert_eq!(listed.writer_features_in_force(), vec![F::DeletionVectors]);
        assert_eq!(
            p(1, 3, None, None).writer_features_in_force(),
            vec![F::AppendOnly, F::Invariants, F::CheckConstraints]
        );
        // Reader 2 implies column mapping, and only it; reader 3 lists.
        assert!(p(2, 5, None, None).supports_reader_feature(&F::ColumnMapping));
        assert!(!p(2, 5, None, None).supports_reader_feature(&F::DeletionVectors));
        assert!(!p(1, 2, None, None).supports_reader_feature(&F::ColumnMapping));
        let r3 = p(3, 7, Some(&["deletionVectors"]), Some(&["deletionVectors"]));
        assert!(r3.supports_reader_feature(&F::DeletionVectors));
        assert!(!r3.supports_reader_feature(&F::ColumnMapping));
    }
}
