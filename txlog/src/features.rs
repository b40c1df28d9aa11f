//! The protocol gate (PROTOCOL.md "Protocol Evolution", "Table Features"): which tables
//! alluvium may read and write.
//!
//! Reading requires `minReaderVersion <= 3` and, at reader version 3, every listed reader
//! feature supported. Writing (checked by the write path) additionally requires
//! `minWriterVersion <= 7` and every writer feature supported; legacy writer versions imply
//! their feature sets. Anything unsupported fails closed with a typed error naming it.

use crate::actions::Protocol;
use crate::error::FeatureSide;
use crate::{LogError, Result};

/// Highest reader version implemented.
pub const MAX_READER_VERSION: i32 = 3;
/// Highest writer version implemented.
pub const MAX_WRITER_VERSION: i32 = 7;

/// Reader features alluvium implements.
pub const SUPPORTED_READER_FEATURES: &[&str] = &[
    "columnMapping",
    "deletionVectors",
    "timestampNtz",
    "v2Checkpoint",
    "vacuumProtocolCheck",
    "typeWidening",
    "typeWidening-preview",
];

/// Why a known reader feature is not supported (for the error message).
fn unsupported_reader_detail(feature: &str) -> Option<&'static str> {
    Some(match feature {
        "variantType" | "variantType-preview" | "variantShredding" | "variantShredding-preview" => {
            "variant columns are not readable by alluvium yet"
        }
        "catalogManaged" | "catalogOwned-preview" => {
            "the table's commits are managed by a catalog; a filesystem engine must not read or write it directly"
        }
        "geospatial" => "geometry and geography columns are not supported",
        "collations" | "collations-preview" => "collated string comparisons are not supported",
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
        for f in protocol.reader_features.iter().flatten() {
            if !SUPPORTED_READER_FEATURES.contains(&f.as_str()) {
                return Err(LogError::UnsupportedFeature {
                    side: FeatureSide::Reader,
                    feature: f.clone(),
                    detail: unsupported_reader_detail(f).map(str::to_string),
                });
            }
        }
    }
    Ok(())
}

/// The writer features implied by a legacy (pre-7) writer version.
pub fn legacy_writer_features(min_writer_version: i32) -> &'static [&'static str] {
    match min_writer_version {
        ..=1 => &[],
        2 => &["appendOnly", "invariants"],
        3 => &["appendOnly", "invariants", "checkConstraints"],
        4 => &[
            "appendOnly",
            "invariants",
            "checkConstraints",
            "changeDataFeed",
            "generatedColumns",
        ],
        5 => &[
            "appendOnly",
            "invariants",
            "checkConstraints",
            "changeDataFeed",
            "generatedColumns",
            "columnMapping",
        ],
        _ => &[
            "appendOnly",
            "invariants",
            "checkConstraints",
            "changeDataFeed",
            "generatedColumns",
            "columnMapping",
            "identityColumns",
        ],
    }
}

/// Whether the protocol supports (lists or implies) a writer feature.
pub fn supports_writer_feature(protocol: &Protocol, feature: &str) -> bool {
    if protocol.min_writer_version >= 7 {
        protocol.has_writer_feature(feature)
    } else {
        legacy_writer_features(protocol.min_writer_version).contains(&feature)
    }
}

/// Whether the protocol supports a reader feature (listed, or implied by a legacy version:
/// reader 2 implies column mapping).
pub fn supports_reader_feature(protocol: &Protocol, feature: &str) -> bool {
    if protocol.min_reader_version >= 3 {
        protocol.has_reader_feature(feature)
    } else {
        protocol.min_reader_version == 2 && feature == "columnMapping"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(r: i32, w: i32, rf: Option<&[&str]>, wf: Option<&[&str]>) -> Protocol {
        Protocol {
            min_reader_version: r,
            min_writer_version: w,
            reader_features: rf.map(|f| f.iter().map(|s| s.to_string()).collect()),
            writer_features: wf.map(|f| f.iter().map(|s| s.to_string()).collect()),
        }
    }

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
        let e = check_read_supported(&p(3, 7, Some(&["variantType-preview"]), None)).unwrap_err();
        assert!(e.to_string().contains("variantType-preview"), "{e}");
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
